// META: title=COOP and COEP tokens are case-sensitive structured fields
"use strict";

// Cross-Origin-Opener-Policy and Cross-Origin-Embedder-Policy are Structured Field Items
// whose tokens are case-sensitive: `Same-Origin` is not `same-origin`.
test(() => {
  assert_false(self.crossOriginIsolated);
  // Not isolated: coarsened to 100 µs. One reading can be a multiple of 100 µs by chance on
  // a finer clock (one in ten at 10 µs): 20 different readings all are only on a coarse one.
  const seen = new Set();
  while (seen.size < 20) seen.add(performance.now());
  for (const t of seen) {
    assert_approx_equals(t * 10, Math.round(t * 10), 1e-6, `${t} is a multiple of 100 µs`);
  }
}, "Same-Origin does not make the page cross-origin isolated");
