// META: title=Samples taken during a garbage collection are marked "gc"
// META: script=../../resources/profiling-utils.js
// META: script=markers-utils.js
"use strict";

promise_test(async () => {
  assert_true(self.crossOriginIsolated);
  const trace = await ProfilingUtils.profile(() => MarkerUtils.collectFor(510));
  const counts = MarkerUtils.countMarkers(trace);
  // Almost all of the time is spent collecting; a few samples land in the loop's script.
  assert_greater_than(counts.gc || 0, trace.samples.length / 2, JSON.stringify(counts));
}, "samples taken while collections run are marked gc");

promise_test(async () => {
  const profiler = new Profiler({ sampleInterval: 10, maxBufferSize: 10000 });
  // Collections from a task outside script: a timer's callback only starts them.
  for (let i = 0; i < 5; i++) {
    await new Promise((resolve) => step_timeout(resolve, 0));
    MarkerUtils.collectFor(60);
  }
  const trace = await profiler.stop();
  for (const s of trace.samples) {
    if (s.marker === "gc" && s.stackId !== undefined) {
      const names = ProfilingUtils.framesOf(trace, s).map((f) => f.name);
      assert_true(names.includes("collectFor"), `a gc sample's stack is the script that made it collect: ${names}`);
    }
  }
}, "a gc sample's stack, when it has one, is the script that the collection interrupted");
