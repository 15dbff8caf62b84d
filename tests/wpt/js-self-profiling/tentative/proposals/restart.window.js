// META: title=Proposal: profiler.restart() (WICG js-self-profiling#90), behind dom.profiler.proposals.enabled
// META: script=../../resources/profiling-utils.js
// META: script=resources/proposals-utils.js
"use strict";

function restartWork(ms) {
  return ProfilingUtils.spin(ms);
}

// The gaps across restarts are like the others: one sample per interval, at a random point
// in it, so consecutive samples are less than two intervals apart, across a restart as
// anywhere else (the sampler keeps the session's schedule; a stop and a new Profiler lose
// the time between the two and, half the time, the rest of the interval). On a loaded
// machine the sampler misses blocks now and then, within traces as across restarts, so what
// is checked is what a restart could change: the mean gap across restarts is 7/6 of an
// interval (a restart falls in a long gap more often: the inspection paradox, for picks
// uniform in their intervals), well under the 1.6 intervals checked (3-4 standard
// deviations of 40 gaps, with room for a loaded machine's missed blocks), where losing an
// interval at each restart would give more than 2; and at most a third of them are two
// intervals or longer (a missed block; 10% of blocks at worst on a loaded 2-core machine,
// where a lost interval at each restart would make it half of them). Gaps within these
// short traces are no yardstick: they are biased short by the same paradox.
// The exact property (every interval sampled exactly once over many restarts) is checked
// with a fake clock in the core's tests (components/profiler/src/tests/proposals.rs).
function checkGaps(traces, interval) {
  const { within, across } = gaps(traces);
  const mean = (v) => v.reduce((a, b) => a + b, 0) / v.length;
  assert_less_than_equal(mean(across), 1.6 * interval,
    `mean gap across restarts ${mean(across)} at ${interval} ms: ${across}`);
  const long = across.filter((g) => g >= 2 * interval).length;
  assert_less_than_equal(long, across.length / 3, `gaps across restarts at ${interval} ms: ${across}`);
  return { within, across };
}

// The gaps between consecutive samples, within each trace and across each restart.
function gaps(traces) {
  const within = [];
  const across = [];
  let last;
  for (const t of traces) {
    t.samples.forEach((s, i) => {
      if (last !== undefined) (i === 0 ? across : within).push(s.timestamp - last);
      last = s.timestamp;
    });
  }
  return { within, across };
}

promise_test(async () => {
  const profiler = new Profiler({ sampleInterval: 10, maxBufferSize: 10000 });
  // (10 ms rounded up to the engine's base interval.)
  const interval = profiler.sampleInterval;
  const traces = [];
  for (let i = 0; i < 40; i++) {
    // 35-75 ms each: restarts fall anywhere in a sample interval.
    restartWork(35 + (i * 13) % 41);
    traces.push(await profiler.restart());
    assert_false(profiler.stopped);
  }
  restartWork(50);
  traces.push(await profiler.stop());
  traces.forEach(Proposals.assertValidTrace);
  // Every trace has its samples, in order, the next trace's after the last one's.
  const all = traces.flatMap((t) => t.samples.map((s) => s.timestamp));
  for (let i = 1; i < all.length; i++) assert_less_than(all[i - 1], all[i], `sample ${i}`);
  const { across } = checkGaps(traces, interval);
  assert_greater_than_equal(across.length, 35, "samples on both sides of most restarts");
}, "restart() loses no sample interval, over many restarts");

promise_test(async (t) => {
  const profiler = new Profiler({ sampleInterval: 10, maxBufferSize: 10000 });
  await profiler.stop();
  await promise_rejects_dom(t, "InvalidStateError", profiler.restart());
}, "restart() on a stopped profiler rejects with an InvalidStateError");

promise_test(async () => {
  const profiler = new Profiler({ sampleInterval: 10, maxBufferSize: 3 });
  let fired = 0;
  let full = () => {};
  profiler.addEventListener("samplebufferfull", () => {
    fired++;
    full();
  });
  const filled = () => new Promise((resolve) => { full = resolve; });
  let wait = filled();
  restartWork(200);
  await wait;
  const first = await profiler.restart();
  assert_equals(first.samples.length, 3);
  wait = filled();
  restartWork(200);
  await wait;
  const second = await profiler.stop();
  assert_equals(second.samples.length, 3, "a full buffer samples again after a restart");
  assert_equals(fired, 2, "and fires samplebufferfull again when the new buffer fills");
  assert_less_than(first.samples[2].timestamp, second.samples[0].timestamp);
}, "restart() empties a full buffer");

promise_test(async () => {
  const worker = new Worker("resources/worker-proposals.js?pipe=header(Document-Policy,js-profiling)");
  const r = await new Promise((resolve, reject) => {
    worker.onmessage = (e) => resolve(e.data);
    worker.onerror = (e) => reject(new Error(e.message));
    worker.postMessage("restart");
  });
  assert_equals(r.error, undefined, r.error);
  assert_equals(r.traces.length, 41);
  r.traces.forEach(Proposals.assertValidTrace);
  const all = r.traces.flatMap((t) => t.samples.map((s) => s.timestamp));
  assert_greater_than(all.length, 20);
  for (let i = 1; i < all.length; i++) assert_less_than(all[i - 1], all[i]);
  checkGaps(r.traces, r.interval);
}, "restart() in a dedicated worker");
