// A dedicated worker of the replaced-built-ins page: the harness, run in the worker.
importScripts("hostile.js");
