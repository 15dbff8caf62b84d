// META: title=Proposal: ProfilerInitOptions.bufferPolicy "ring" (WICG js-self-profiling#81), behind dom.profiler.proposals.enabled
// META: script=../../resources/profiling-utils.js
// META: script=resources/proposals-utils.js
"use strict";

// Stacks that keep changing: phases of a long run in different functions.
function ringA(ms) { return ProfilingUtils.spin(ms); }
function ringB(ms) { return ringA(ms); }
function ringC(ms) { return ringB(ms); }
const phases = [ringA, ringB, ringC];

promise_test(async () => {
  const max = 20;
  const ring = new Profiler({ sampleInterval: 10, maxBufferSize: max, bufferPolicy: "ring" });
  // A session of the same interval samples alongside it (the same ticks, the same stacks),
  // with room for everything.
  const all = new Profiler({ sampleInterval: 10, maxBufferSize: 10000 });
  let fired = 0;
  ring.addEventListener("samplebufferfull", () => fired++);
  for (let i = 0; i < 45; i++) phases[i % 3](40);
  const last = await ring.stop();
  const everything = await all.stop();
  assert_equals(fired, 0, "a ring buffer never fires samplebufferfull");
  Proposals.assertValidTrace(last);
  assert_greater_than(everything.samples.length, 3 * max, "a long run");
  assert_equals(last.samples.length, max, "the ring holds maxBufferSize samples");
  // They are the last ones the other session took before the ring stopped.
  const before = everything.samples.filter((s) => s.timestamp <= last.samples.at(-1).timestamp);
  const tail = before.slice(-max);
  // All the timestamps at once, so that a failure shows both runs of ticks.
  assert_array_equals(
    last.samples.map((s) => s.timestamp), tail.map((s) => s.timestamp), "the ring's ticks");
  for (let i = 0; i < max; i++) {
    assert_equals(last.samples[i].timestamp, tail[i].timestamp, `sample ${i}'s timestamp`);
    assert_equals(
      ProfilingUtils.frameText(last, last.samples[i]),
      ProfilingUtils.frameText(everything, tail[i]),
      `sample ${i}'s frames`);
  }
  // Only what the kept samples use: the first phase's function names are gone if no kept
  // sample ran them.
  const names = new Set(last.samples.flatMap((s) => ProfilingUtils.framesOf(last, s).map((f) => f.name)));
  assert_equals(last.frames.length, new Set(last.frames.map((f) => JSON.stringify(f))).size);
  for (const f of last.frames) assert_true(names.has(f.name), f.name);
}, "a ring buffer keeps the last maxBufferSize samples, and only the frames, stacks and resources they use");

promise_test(async () => {
  const profiler = new Profiler({ sampleInterval: 10, maxBufferSize: 5, bufferPolicy: "stop" });
  let fired = 0;
  const full = new Promise((resolve) => profiler.addEventListener("samplebufferfull", () => { fired++; resolve(); }));
  ProfilingUtils.spin(200);
  await full;
  const trace = await profiler.stop();
  assert_equals(trace.samples.length, 5);
  assert_equals(fired, 1);
  assert_throws_js(TypeError, () => new Profiler({ sampleInterval: 10, maxBufferSize: 5, bufferPolicy: "circular" }));
}, "bufferPolicy \"stop\" is the spec's; other values are a TypeError");

promise_test(async () => {
  const worker = new Worker("resources/worker-proposals.js?pipe=header(Document-Policy,js-profiling)");
  const r = await new Promise((resolve, reject) => {
    worker.onmessage = (e) => resolve(e.data);
    worker.onerror = (e) => reject(new Error(e.message));
    worker.postMessage("ring");
  });
  assert_equals(r.error, undefined, r.error);
  assert_equals(r.fired, 0);
  assert_equals(r.trace.samples.length, 5);
  Proposals.assertValidTrace(r.trace);
}, "a ring buffer in a dedicated worker");
