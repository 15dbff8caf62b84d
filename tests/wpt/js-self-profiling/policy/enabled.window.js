// META: title=Document-Policy: js-profiling
"use strict";

test(() => {
  const p = new Profiler({ sampleInterval: 10, maxBufferSize: 10 });
  assert_false(p.stopped);
  p.stop();
}, "with js-profiling, new Profiler() is allowed");
