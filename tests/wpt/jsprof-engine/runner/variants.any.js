// META: title=Each `// META: variant=` is its own test, its query in the page's and the worker's URL
// META: variant=?first
// META: variant=?second=2
"use strict";

test(() => {
  assert_in_array(location.search, ["?first", "?second=2"]);
  if (GLOBAL.isWorker()) assert_true(location.pathname.endsWith("/variants.any.worker.js"), location.pathname);
}, "location.search is one of the variants");
