// META: title=global=window,worker,!dedicatedworker runs in a window (the other worker kinds are SKIP)
// META: global=window,worker,!dedicatedworker
"use strict";

test(() => {
  assert_true(GLOBAL.isWindow());
  assert_equals(String(self), "[object Window]");
}, "not run in a dedicated worker");
