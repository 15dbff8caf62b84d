// META: title=Without dom.profiler.proposals.enabled, pages see exactly the spec's API
// META: script=../../../resources/profiling-utils.js
"use strict";

test(() => {
  assert_false("restart" in Profiler.prototype, "no restart()");
  assert_equals(Object.getOwnPropertyNames(Profiler.prototype).sort().join(),
    ["constructor", "sampleInterval", "stop", "stopped"].sort().join());
}, "Profiler has no restart()");

promise_test(async () => {
  const read = [];
  const options = {
    sampleInterval: 10,
    maxBufferSize: 100,
    get format() { read.push("format"); return "json-gzip"; },
    get bufferPolicy() { read.push("bufferPolicy"); return "ring"; },
  };
  const profiler = new Profiler(options);
  assert_array_equals(read, [], "the options' format and bufferPolicy are not read");
  ProfilingUtils.spin(50);
  const trace = await profiler.stop();
  assert_false(trace instanceof ArrayBuffer, "a ProfilerTrace, not gzip");
  assert_true(Array.isArray(trace.samples));
}, "format and bufferPolicy are not read from ProfilerInitOptions");

promise_test(async () => {
  // Values the proposals' enums refuse are not even looked at.
  const profiler = new Profiler({ sampleInterval: 10, maxBufferSize: 2, format: "bogus", bufferPolicy: "ring" });
  const full = new Promise((resolve) => profiler.addEventListener("samplebufferfull", resolve));
  ProfilingUtils.spin(200);
  await full;
  const trace = await profiler.stop();
  assert_equals(trace.samples.length, 2, "the spec's buffer: full, not a ring");
}, "a bufferPolicy of \"ring\" is the spec's buffer without the pref");
