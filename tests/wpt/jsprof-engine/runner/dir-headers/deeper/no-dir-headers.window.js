// META: title=A __dir__.headers does not reach subfolders: deeper/ has none, so no Document-Policy
"use strict";

test(() => {
  assert_throws_dom("NotAllowedError", () => new Profiler({ sampleInterval: 10, maxBufferSize: 10 }));
}, "dir-headers/__dir__.headers does not apply in dir-headers/deeper/");
