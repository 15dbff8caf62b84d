// META: title=The constructor's and stop()'s exceptions
"use strict";

test(() => {
  assert_throws_js(TypeError, () => new Profiler({ sampleInterval: 10 }));
}, "a missing maxBufferSize is a TypeError");

test(() => {
  assert_throws_js(TypeError, () => new Profiler({ maxBufferSize: 10 }));
}, "a missing sampleInterval is a TypeError");

test(() => {
  assert_throws_js(RangeError, () => new Profiler({ sampleInterval: -1, maxBufferSize: 10 }));
}, "a negative sampleInterval is a RangeError");

test(() => {
  assert_throws_js(TypeError, () => new Profiler({ sampleInterval: NaN, maxBufferSize: 10 }));
  assert_throws_js(TypeError, () => new Profiler({ sampleInterval: Infinity, maxBufferSize: 10 }));
}, "a non-finite sampleInterval is a TypeError");

test(() => {
  assert_throws_js(TypeError, () => Profiler({ sampleInterval: 10, maxBufferSize: 10 }));
}, "Profiler cannot be called without new");

test(() => {
  const p = new Profiler({ sampleInterval: 10, maxBufferSize: Number.MAX_SAFE_INTEGER });
  assert_false(p.stopped);
  p.stop();
}, "maxBufferSize converts as unsigned long");

promise_test(async (t) => {
  const p = new Profiler({ sampleInterval: 10, maxBufferSize: 10 });
  const first = p.stop();
  assert_true(p.stopped);
  await promise_rejects_dom(t, "InvalidStateError", p.stop());
  await first;
}, "stop() twice rejects with InvalidStateError");
