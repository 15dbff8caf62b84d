// META: title=Document-Policy: js-profiling=?0
"use strict";

test(() => {
  assert_throws_dom("NotAllowedError", () => new Profiler({ sampleInterval: 10, maxBufferSize: 10 }));
}, "with js-profiling=?0, new Profiler() throws NotAllowedError");
