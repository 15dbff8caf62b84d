// META: title=COOP and COEP make the page cross-origin isolated
"use strict";

test(() => {
  assert_true(self.crossOriginIsolated);
}, "crossOriginIsolated reflects Cross-Origin-Opener-Policy and Cross-Origin-Embedder-Policy");

test(() => {
  for (let i = 0; i < 100; i++) {
    const t = performance.now();
    assert_approx_equals(t * 200, Math.round(t * 200), 1e-6, `${t} is a multiple of 5 µs`);
  }
}, "performance.now() is coarsened to 5 µs when cross-origin isolated");

promise_test(async () => {
  const p = new Profiler({ sampleInterval: 10, maxBufferSize: 100 });
  const end = performance.now() + 200;
  while (performance.now() < end);
  const trace = await p.stop();
  assert_greater_than(trace.samples.length, 0);
  for (const s of trace.samples) {
    assert_approx_equals(s.timestamp * 200, Math.round(s.timestamp * 200), 1e-6, `${s.timestamp}`);
  }
}, "sample timestamps are coarsened the same way");
