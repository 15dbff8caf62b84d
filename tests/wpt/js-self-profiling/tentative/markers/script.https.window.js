// META: title=Samples taken while script runs are marked "script" in a cross-origin-isolated document
// META: script=../../resources/profiling-utils.js
// META: script=markers-utils.js
"use strict";

promise_test(async () => {
  assert_true(self.crossOriginIsolated, "COOP and COEP make this document isolated");
  const trace = await ProfilingUtils.profile(() => ProfilingUtils.spin(510));
  const counts = MarkerUtils.countMarkers(trace);
  assert_greater_than(counts.script || 0, 0, JSON.stringify(counts));
  for (const s of trace.samples) {
    if (s.stackId !== undefined) {
      assert_in_array(s.marker, ["script", "gc"], "a sample with a JS stack was taken in script or a collection");
    }
  }
}, "samples taken in a hot loop are marked script");

promise_test(async () => {
  const profiler = new Profiler({ sampleInterval: 10, maxBufferSize: 10000 });
  const start = performance.now();
  await new Promise((resolve) => step_timeout(resolve, 400));
  const end = performance.now();
  const trace = await profiler.stop();
  // Nearly all of the wait is spent idle: waiting for the timer is no activity at all.
  const idle = trace.samples.filter((s) => s.timestamp > start + 20 && s.timestamp < end - 20);
  assert_greater_than(idle.length, 5);
  const unmarked = idle.filter((s) => !("marker" in s)).length;
  assert_greater_than_equal(unmarked, idle.length - 2, JSON.stringify(MarkerUtils.countMarkers(trace)));
}, "samples taken while the event loop waits have no marker");

promise_test(async () => {
  const trace = await ProfilingUtils.profile(() => ProfilingUtils.spin(200));
  const json = JSON.stringify(trace);
  const fields = new Set();
  for (const s of JSON.parse(json).samples) for (const k of Object.keys(s)) fields.add(k);
  assert_array_equals([...fields].sort(), ["marker", "stackId", "timestamp"].filter((k) => fields.has(k)));
  assert_true(fields.has("marker"));
}, "marker is a member of ProfilerSample, after nothing but the base members");
