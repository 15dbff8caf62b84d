// META: title=Document-Policy: js-profiling-mode=sometimes
"use strict";

test(() => {
  assert_throws_dom("NotAllowedError", () => new Profiler({ sampleInterval: 10, maxBufferSize: 10 }));
}, "with js-profiling-mode=sometimes, new Profiler() throws NotAllowedError");
