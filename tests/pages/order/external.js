console.log("3 external", document.currentScript.src === new URL("external.js", location.href).href);
