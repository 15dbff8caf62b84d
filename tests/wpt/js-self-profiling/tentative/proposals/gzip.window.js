// META: title=Proposal: ProfilerInitOptions.format "json-gzip" (seed 004), behind dom.profiler.proposals.enabled
// META: script=../../resources/profiling-utils.js
// META: script=resources/gunzip.js
// META: script=resources/proposals-utils.js
"use strict";

function gzipWork(ms) {
  return ProfilingUtils.spin(ms);
}

promise_test(async () => {
  const profiler = new Profiler({ sampleInterval: 10, maxBufferSize: 10000, format: "json-gzip" });
  gzipWork(300);
  const buffer = await profiler.stop();
  assert_true(buffer instanceof ArrayBuffer, "stop() resolves with an ArrayBuffer");
  const bytes = new Uint8Array(buffer);
  assert_array_equals([bytes[0], bytes[1], bytes[2]], [0x1f, 0x8b, 8], "a gzip member (deflate)");
  // Decoded by this test's own inflate; its CRC-32 and length are checked against the
  // member's trailer.
  const trace = JSON.parse(Gunzip.utf8(Gunzip.gunzip(buffer)));
  Proposals.assertValidTrace(trace);
  assert_greater_than(trace.samples.length, 5);
  assert_true(ProfilingUtils.containsFrame(trace, { name: "gzipWork" }), JSON.stringify(trace.frames));
}, "stop() resolves with the trace's JSON, gzipped, in an ArrayBuffer");

promise_test(async () => {
  // Two sessions of one interval share every sample (the same ticks, the same stacks): the
  // gzipped trace decodes to the same samples as the JSON one, from the later start to the
  // earlier stop.
  const json = new Profiler({ sampleInterval: 10, maxBufferSize: 10000 });
  const gzip = new Profiler({ sampleInterval: 10, maxBufferSize: 10000, format: "json-gzip" });
  gzipWork(300);
  const [a, buffer] = await Promise.all([json.stop(), gzip.stop()]);
  const b = JSON.parse(Gunzip.utf8(Gunzip.gunzip(buffer)));
  Proposals.assertValidTrace(b);
  const from = Math.max(a.samples[0].timestamp, b.samples[0].timestamp);
  const to = Math.min(a.samples.at(-1).timestamp, b.samples.at(-1).timestamp);
  const both = (t) => t.samples.filter((s) => s.timestamp >= from && s.timestamp <= to);
  const [sa, sb] = [both(a), both(b)];
  assert_greater_than(sa.length, 5);
  assert_equals(sb.length, sa.length, "the same samples");
  // Frames compared by what they say, not by their ids: each trace numbers its resources in
  // the order its own samples met them, and the two first samples can differ.
  for (let i = 0; i < sa.length; i++) {
    assert_equals(sb[i].timestamp, sa[i].timestamp, `sample ${i}'s timestamp`);
    assert_equals(ProfilingUtils.frameText(b, sb[i]), ProfilingUtils.frameText(a, sa[i]), `sample ${i}'s frames`);
  }
}, "the gzipped trace is the trace a json session sampling alongside it gives");

promise_test(async () => {
  const profiler = new Profiler({ sampleInterval: 10, maxBufferSize: 10000, format: "json-gzip" });
  gzipWork(100);
  const first = await profiler.restart();
  assert_true(first instanceof ArrayBuffer, "restart() resolves with an ArrayBuffer");
  gzipWork(100);
  const second = await profiler.stop();
  const t1 = JSON.parse(Gunzip.utf8(Gunzip.gunzip(first)));
  const t2 = JSON.parse(Gunzip.utf8(Gunzip.gunzip(second)));
  Proposals.assertValidTrace(t1);
  Proposals.assertValidTrace(t2);
  assert_greater_than(t1.samples.length, 0);
  assert_greater_than(t2.samples.length, 0);
  assert_less_than(t1.samples.at(-1).timestamp, t2.samples[0].timestamp);
}, "restart() resolves with the gzipped trace too");

promise_test(async () => {
  const json = await new Profiler({ sampleInterval: 10, maxBufferSize: 10, format: "json" }).stop();
  assert_false(json instanceof ArrayBuffer);
  assert_true(Array.isArray(json.samples));
  assert_throws_js(TypeError, () => new Profiler({ sampleInterval: 10, maxBufferSize: 10, format: "gzip" }));
}, "format \"json\" is the default; other values are a TypeError");

promise_test(async () => {
  const worker = new Worker("resources/worker-proposals.js?pipe=header(Document-Policy,js-profiling)");
  const r = await new Promise((resolve, reject) => {
    worker.onmessage = (e) => resolve(e.data);
    worker.onerror = (e) => reject(new Error(e.message));
    worker.postMessage("gzip");
  });
  assert_equals(r.error, undefined, r.error);
  const trace = JSON.parse(Gunzip.utf8(Gunzip.gunzip(r.buffer)));
  Proposals.assertValidTrace(trace);
  assert_true(ProfilingUtils.containsFrame(trace, { name: "workerWork" }), JSON.stringify(trace.frames));
}, "json-gzip in a dedicated worker");
