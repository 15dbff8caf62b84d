// META: title=global= lists the scopes; the runner reports the sharedworker and serviceworker ones as SKIP
// META: global=window,dedicatedworker,sharedworker,serviceworker
"use strict";

test(() => {
  if (GLOBAL.isWindow()) {
    assert_equals(String(self), "[object Window]");
  } else {
    assert_true(self instanceof DedicatedWorkerGlobalScope);
  }
}, "runs only in a window and in a dedicated worker");
