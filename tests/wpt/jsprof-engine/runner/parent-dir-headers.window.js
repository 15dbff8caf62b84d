// META: title=The parent folder's __dir__.headers does not apply here: wptserve reads only the test's own folder's
"use strict";

test(() => {
  assert_throws_dom("NotAllowedError", () => new Profiler({ sampleInterval: 10, maxBufferSize: 10 }));
}, "no Document-Policy reaches this page, so new Profiler() throws NotAllowedError");
