// META: title=X.window.js.sub.headers applies to the generated page, with substitutions for that page's request
"use strict";

test(() => {
  new Profiler({ sampleInterval: 10, maxBufferSize: 10 }).stop();
}, "Document-Policy: js-profiling from sub-headers.window.js.sub.headers allows new Profiler()");

promise_test(async () => {
  const r = await fetch(location.href);
  assert_equals(r.headers.get("X-Jsprof-Pathname"), location.pathname, "location[pathname]");
  assert_equals(r.headers.get("X-Jsprof-Host"), "web-platform.test", "host");
}, "substitutions in the headers file are made for the page's request");
