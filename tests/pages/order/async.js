console.log("async");
