// META: title=Code made from a string has no frames of its own: string timers, eval, new Function, javascript: URLs
// META: script=/js-self-profiling/resources/profiling-utils.js
"use strict";

// Spins in a frame of its own (no helper below it).
function spinHere(ms) {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

// For every sample whose innermost frame is `name`: the frames above it, outermost first.
function callersOf(trace, name) {
  return trace.samples
    .map((s) => ProfilingUtils.framesOf(trace, s))
    .filter((f) => f.length > 0 && f[f.length - 1].name === name)
    .map((f) => f.slice(0, -1).map(({ name, line, column, url }) => ({ name, line, column, url })));
}

promise_test(async () => {
  const profiler = new Profiler({ sampleInterval: 10, maxBufferSize: 10000 });
  await new Promise((resolve) => {
    self.timerDone = resolve;
    setTimeout("spinHere(200); timerDone();", 0);
  });
  const trace = await profiler.stop();
  const callers = callersOf(trace, "spinHere");
  assert_greater_than(callers.length, 0, "samples in spinHere");
  assert_true(callers.every((c) => c.length === 0), JSON.stringify(callers));
}, "a string timer: its code has no frame, the function it calls has one");

promise_test(async () => {
  const trace = await ProfilingUtils.profile(() => {
    // Indirect eval: the function it declares is eval code.
    (0, eval)("function evaled() { spinHere(150); } evaled();");
    new Function("spinHere(150);")();
  });
  const names = trace.frames.map((f) => f.name);
  assert_true(names.includes("spinHere"), names.join());
  assert_false(names.includes("evaled"), names.join());
  assert_false(names.includes("anonymous"), names.join());
}, "eval and new Function code has no frames of its own");

promise_test(async (t) => {
  const profiler = new Profiler({ sampleInterval: 10, maxBufferSize: 10000 });
  const ran = new Promise((resolve) => { self.jsURLDone = () => resolve(true); });
  try {
    // Its result is not a string: the document stays.
    location.href = "javascript:spinHere(200); jsURLDone(); void 0";
  } catch (e) {
    // An engine whose Location cannot navigate runs no javascript: URL.
  }
  const done = await Promise.race([ran, new Promise((r) => t.step_timeout(() => r(false), 2000))]);
  const trace = await profiler.stop();
  if (!done) return;  // this engine runs no javascript: URL (jsprof): nothing to compare
  const callers = callersOf(trace, "spinHere");
  assert_greater_than(callers.length, 0, "samples in spinHere");
  assert_true(callers.every((c) => c.length === 0), JSON.stringify(callers));
}, "a javascript: URL: its code has no frame, where the engine runs one");
