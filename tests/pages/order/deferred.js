console.log("deferred", document.readyState);
