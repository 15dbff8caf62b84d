// META: title=Document-Policy: no header
"use strict";

test(() => {
  assert_throws_dom("NotAllowedError", () => new Profiler({ sampleInterval: 10, maxBufferSize: 10 }));
}, "with no Document-Policy header, new Profiler() throws NotAllowedError");
