// META: title=Without cross-origin isolation no marker is exposed
// META: script=../../../resources/profiling-utils.js
// META: script=../markers-utils.js
"use strict";

// Conditional Marker Exposure: a document that is not cross-origin isolated may see only
// "style" and "layout", and script and collections are neither: no sample carries a marker,
// and the trace is exactly the base spec's.
promise_test(async () => {
  assert_false(self.crossOriginIsolated, "no COOP and COEP here");
  const trace = await ProfilingUtils.profile(() => {
    ProfilingUtils.spin(300);
    MarkerUtils.collectFor(200);
  });
  assert_greater_than(trace.samples.length, 0);
  for (const s of trace.samples) assert_false("marker" in s, JSON.stringify(s));
  assert_false(JSON.stringify(trace.samples).includes('"marker"'), "no marker member in the JSON");
}, "samples have no marker without cross-origin isolation");
