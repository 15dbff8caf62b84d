// META: title=A nested folder's own __dir__.headers applies to .any.js pages and to the worker script
"use strict";

test(() => {
  new Profiler({ sampleInterval: 10, maxBufferSize: 10 }).stop();
}, "Document-Policy: js-profiling from dir-headers/__dir__.headers allows new Profiler()");
