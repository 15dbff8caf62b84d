// META: title=Without cross-origin isolation only "style" and "layout" are exposed
// META: script=../../../resources/profiling-utils.js
// META: script=../markers-utils.js
// META: script=../rendering-utils.js
"use strict";

// Conditional Marker Exposure: a document that is not cross-origin isolated sees the
// "style" and "layout" markers, and no other. jsprof's own engine makes neither (it has no
// rendering pipeline; wpt-metadata says so); Servo with jsprof does.
promise_test(async (t) => {
  assert_false(self.crossOriginIsolated, "no COOP and COEP here");
  const block = RenderingUtils.rows(t);
  const trace = await ProfilingUtils.profile(() => {
    RenderingUtils.forceLayout(block, 600);
    ProfilingUtils.spin(200);
  });
  const counts = MarkerUtils.countMarkers(trace);
  assert_greater_than(counts.style || 0, 0, "style: " + JSON.stringify(counts));
  assert_greater_than(counts.layout || 0, 0, "layout: " + JSON.stringify(counts));
  for (const s of trace.samples) {
    if ("marker" in s) assert_in_array(s.marker, ["style", "layout"], "only style and layout are exposed");
  }
  // The spin is script, which this document may not see as such: its samples have a stack
  // and no marker.
  assert_greater_than(counts.none, 0, JSON.stringify(counts));
}, "style and layout are marked without isolation, and nothing else is");
