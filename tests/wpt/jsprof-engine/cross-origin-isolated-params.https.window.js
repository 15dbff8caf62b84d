// META: title=COOP and COEP with parameters still isolate
"use strict";

test(() => {
  assert_true(self.crossOriginIsolated);
}, "same-origin; report-to=\"x\" and require-corp; report-to=\"y\" isolate the page");
