// META: title=Samples taken while the engine computes style, lays out or paints are marked "style", "layout" or "paint"
// META: script=../../resources/profiling-utils.js
// META: script=markers-utils.js
// META: script=rendering-utils.js
"use strict";

// An engine whose rendering pipeline runs on the page's thread marks its phases (markers.md:
// "style", "layout", "paint"). jsprof's own engine has no such pipeline (wpt-metadata says
// so); Servo with jsprof has one.

promise_test(async (t) => {
  assert_true(self.crossOriginIsolated, "COOP and COEP make this document isolated");
  const block = RenderingUtils.rows(t);
  const trace = await ProfilingUtils.profile(() => RenderingUtils.forceLayout(block, 800));
  const counts = MarkerUtils.countMarkers(trace);
  assert_greater_than(counts.style || 0, 0, "style: " + JSON.stringify(counts));
  assert_greater_than(counts.layout || 0, 0, "layout: " + JSON.stringify(counts));
  // Nothing is painted until the rendering update, after the script.
  assert_equals(counts.paint || 0, 0, "paint: " + JSON.stringify(counts));
  // Script asked for the work: the samples taken in it carry the script's stack.
  const forced = trace.samples.filter((s) => s.marker === "style" || s.marker === "layout");
  const stacked = forced.filter((s) => s.stackId !== undefined);
  assert_greater_than(stacked.length, 0, "some forced style or layout has a stack");
  for (const s of stacked) {
    const names = ProfilingUtils.framesOf(trace, s).map((f) => f.name);
    assert_in_array("forceLayout", names, "the stack of a layout script forced");
  }
}, "style and layout that script forces are marked style and layout, with the script's stack");

promise_test(async (t) => {
  const block = RenderingUtils.rows(t);
  const profiler = new Profiler({ sampleInterval: 10, maxBufferSize: 10000 });
  // Each frame changes every row; the engine then computes style, lays out and paints in
  // its rendering update, after the callback returned.
  const end = performance.now() + 1500;
  let frames = 0;
  while (performance.now() < end) {
    await new Promise((resolve) => requestAnimationFrame(resolve));
    block.classList.toggle("big");
    frames++;
  }
  const trace = await profiler.stop();
  const counts = MarkerUtils.countMarkers(trace);
  assert_greater_than(frames, 2, "animation frames ran");
  assert_greater_than(counts.paint || 0, 0, "paint: " + JSON.stringify(counts));
  for (const s of trace.samples) {
    if (s.marker === "paint") assert_equals(s.stackId, undefined, "no script runs while the engine paints");
  }
}, "a rendering update's paint is marked paint");
