// META: title=`// META: timeout=long` gives the window and worker pages the long harness timeout (60 s, not 10 s)
// META: timeout=long
"use strict";

promise_test(() => new Promise((resolve) => step_timeout(resolve, 10500)),
  "a test still running after 10.5 s is not cut short");
