postMessage("local worker ran " + (typeof importScripts));
