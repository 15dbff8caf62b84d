// META: title=A .window.js test's own X.window.js.headers applies to its generated page
"use strict";

test(() => {
  new Profiler({ sampleInterval: 10, maxBufferSize: 10 }).stop();
}, "Document-Policy: js-profiling from file-headers.window.js.headers allows new Profiler()");
