// META: title=Document-Policy: js-profiling-mode=lazy
"use strict";

function lazySpin(ms) {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

// The page's first Profiler, constructed in this script: with a lazy policy it initialises
// sampling support from inside the script, whose rest is then script to it, not idle time.
let firstTrace;
test(() => {
  const p = new Profiler({ sampleInterval: 10, maxBufferSize: 10000 });
  assert_false(p.stopped);
  lazySpin(300);
  firstTrace = p.stop();
}, "with js-profiling-mode=lazy, new Profiler() is allowed");

promise_test(async () => {
  const trace = await firstTrace;
  assert_greater_than(trace.samples.length, 0);
  assert_true(trace.frames.some((f) => f.name === "lazySpin"), trace.frames.map((f) => f.name).join());
}, "the first Profiler samples the rest of the script that constructed it");
