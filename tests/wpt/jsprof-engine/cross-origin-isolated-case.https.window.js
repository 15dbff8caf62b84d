// META: title=COOP and COEP tokens are case-sensitive structured fields
"use strict";

// Cross-Origin-Opener-Policy and Cross-Origin-Embedder-Policy are Structured Field Items
// whose tokens are case-sensitive: `Same-Origin` is not `same-origin`.
test(() => {
  assert_false(self.crossOriginIsolated);
  const t = performance.now();
  // Not isolated: coarsened to 100 µs.
  assert_approx_equals(t * 10, Math.round(t * 10), 1e-6, `${t} is a multiple of 100 µs`);
}, "Same-Origin does not make the page cross-origin isolated");
