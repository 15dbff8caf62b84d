postMessage("same-origin worker ran");
