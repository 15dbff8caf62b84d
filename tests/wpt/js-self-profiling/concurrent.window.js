// META: title=Two profilers run at once, each at its own interval
// META: script=resources/profiling-utils.js
"use strict";

promise_test(async () => {
  const fast = new Profiler({ sampleInterval: 10, maxBufferSize: 10000 });
  const slow = new Profiler({ sampleInterval: 50, maxBufferSize: 10000 });
  assert_greater_than(slow.sampleInterval, fast.sampleInterval);
  assert_greater_than_equal(fast.sampleInterval, 10);
  assert_greater_than_equal(slow.sampleInterval, 50);
  ProfilingUtils.spin(510);
  const [a, b] = await Promise.all([fast.stop(), slow.stop()]);
  assert_greater_than(a.samples.length, 0, "the fast profiler has samples");
  assert_greater_than(b.samples.length, 0, "the slow profiler has samples");
  assert_greater_than(a.samples.length, b.samples.length, "more samples at the shorter interval");
  assert_true(fast.stopped && slow.stopped);
}, "two concurrent profilers with different intervals");
