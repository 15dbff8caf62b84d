// META: title=.any.js tests run in a window and in a dedicated worker
// META: global=window,dedicatedworker
// META: script=/js-self-profiling/resources/profiling-utils.js
"use strict";

test(() => {
  assert_equals(typeof ProfilingUtils.spin, "function", "META scripts ran first");
  if (GLOBAL.isWindow()) {
    assert_equals(String(self), "[object Window]");
    assert_true("document" in self);
  } else {
    assert_true(self instanceof DedicatedWorkerGlobalScope);
    assert_false("document" in self);
  }
}, "the global is the expected one");

test(() => {
  assert_equals(typeof Profiler, "function");
  assert_equals(Object.getPrototypeOf(Profiler.prototype), EventTarget.prototype);
}, "Profiler is exposed on Window and DedicatedWorkerGlobalScope");
