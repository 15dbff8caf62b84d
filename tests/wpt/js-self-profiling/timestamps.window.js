// META: title=Sample timestamps use performance.now()'s clock
// META: script=resources/profiling-utils.js
"use strict";

promise_test(async () => {
  const before = performance.now();
  const profiler = new Profiler({ sampleInterval: 10, maxBufferSize: 10000 });
  ProfilingUtils.spin(510);
  const trace = await profiler.stop();
  const after = performance.now();
  assert_greater_than(trace.samples.length, 0);
  let last = -Infinity;
  for (const s of trace.samples) {
    assert_between_inclusive(s.timestamp, before, after);
    assert_greater_than_equal(s.timestamp, last, "in order");
    last = s.timestamp;
  }
}, "timestamps lie between performance.now() before and after");

promise_test(async () => {
  const profiler = new Profiler({ sampleInterval: 10, maxBufferSize: 10000 });
  ProfilingUtils.spin(510);
  const trace = await profiler.stop();
  assert_true(trace.samples.some((s) => s.stackId !== undefined), "some sample has a stack");
  for (const s of trace.samples) {
    if (s.stackId !== undefined) assert_less_than(s.stackId, trace.stacks.length);
  }
  for (const st of trace.stacks) {
    assert_less_than(st.frameId, trace.frames.length);
    if (st.parentId !== undefined) assert_less_than(st.parentId, trace.stacks.length);
  }
}, "the trace's IDs point into its lists");
