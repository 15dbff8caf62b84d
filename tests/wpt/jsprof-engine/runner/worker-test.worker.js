// META: title=A .worker.js test runs in a dedicated worker from the generated X.worker.html
importScripts("/resources/testharness.js");

test(() => {
  assert_true(self instanceof DedicatedWorkerGlobalScope);
  assert_equals(typeof document, "undefined");
}, "the test script runs in a dedicated worker");

done();
