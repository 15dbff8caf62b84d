// META: title=Profiler in dedicated workers, under the worker's own policy
"use strict";

function outcome(worker) {
  return new Promise((resolve, reject) => {
    worker.onmessage = (e) => resolve(e.data);
    worker.onerror = (e) => reject(new Error(e.message));
    worker.postMessage("go");
  });
}

// The same script with and without a Document-Policy header (wptserve's header pipe).
const withPolicy = "resources/worker-profile.js?pipe=header(Document-Policy,js-profiling)";

async function source() {
  return (await fetch("resources/worker-profile.js")).text();
}

promise_test(async () => {
  assert_implements(window.Worker, "Worker");
  const r = await outcome(new Worker(withPolicy));
  assert_true(r.names.includes("workerSpin"), JSON.stringify(r));
}, "a worker whose script response allows js-profiling profiles itself");

promise_test(async () => {
  assert_implements(window.Worker, "Worker");
  const r = await outcome(new Worker("resources/worker-profile.js"));
  assert_equals(r.error, "NotAllowedError");
}, "a worker whose script response has no Document-Policy cannot");

promise_test(async () => {
  assert_implements(window.Worker, "Worker");
  const url = URL.createObjectURL(new Blob([await source()], { type: "text/javascript" }));
  const r = await outcome(new Worker(url));
  assert_true(r.names.includes("workerSpin"), JSON.stringify(r));
}, "a blob: worker inherits its creator's policy");

promise_test(async () => {
  assert_implements(window.Worker, "Worker");
  const url = "data:text/javascript," + encodeURIComponent(await source());
  const r = await outcome(new Worker(url));
  assert_true(r.names.includes("workerSpin"), JSON.stringify(r));
}, "a data: worker inherits its creator's policy");

promise_test(async () => {
  assert_implements(window.Worker, "Worker");
  const inner = await source();
  const outer = `
    const url = URL.createObjectURL(new Blob([${JSON.stringify(inner)}], { type: "text/javascript" }));
    const w = new Worker(url);
    w.onmessage = (e) => postMessage(e.data);
    onmessage = () => w.postMessage("go");
  `;
  const r = await outcome(new Worker(URL.createObjectURL(new Blob([outer]))));
  assert_true(r.names.includes("workerSpin"), JSON.stringify(r));
}, "a nested blob: worker inherits the policy too");
