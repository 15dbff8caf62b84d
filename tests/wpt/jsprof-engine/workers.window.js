// META: title=Dedicated workers: messages, errors, terminate, blob: and data: URLs
"use strict";

const workerFrom = (code) => new Worker(URL.createObjectURL(new Blob([code], { type: "text/javascript" })));
const next = (w) => new Promise((resolve, reject) => {
  w.onmessage = (e) => resolve(e.data);
  w.onerror = (e) => { e.preventDefault(); reject(new Error(e.message)); };
});

promise_test(async () => {
  const w = workerFrom(`onmessage = (e) => postMessage({ echo: e.data, global: String(self), hasDocument: typeof document !== "undefined" });`);
  const got = next(w);
  w.postMessage({ m: new Map([["k", new Date(7)]]), n: undefined, list: [1, NaN] });
  const r = await got;
  assert_equals(r.echo.m.get("k").getTime(), 7);
  assert_true("n" in r.echo && r.echo.n === undefined);
  assert_true(Number.isNaN(r.echo.list[1]));
  assert_equals(r.global, "[object DedicatedWorkerGlobalScope]");
  assert_false(r.hasDocument);
  w.terminate();
}, "messages go both ways as structured clones, in a worker global without a document");

promise_test(async () => {
  const w = workerFrom(`onmessage = () => { throw new TypeError("from the worker"); };`);
  const got = new Promise((resolve) => {
    w.onerror = (e) => { e.preventDefault(); resolve(e); };
  });
  w.postMessage("go");
  const e = await got;
  assert_true(e instanceof ErrorEvent);
  assert_true(e.message.includes("from the worker"), e.message);
  w.terminate();
}, "an uncaught exception in a worker fires error at its Worker object");

promise_test(async () => {
  const w = workerFrom(`let n = 0; setInterval(() => postMessage(++n), 5);`);
  await next(w);
  w.terminate();
  let after = 0;
  w.onmessage = () => { after++; };
  await new Promise((r) => setTimeout(r, 60));
  assert_less_than_equal(after, 1, "at most a message already in flight");
}, "terminate() stops a worker");

promise_test(async () => {
  const w = new Worker("data:text/javascript," + encodeURIComponent(`postMessage(location.protocol);`));
  assert_equals(await next(w), "data:");
  w.terminate();
}, "a worker from a data: URL");

promise_test(async () => {
  const inner = `onmessage = (e) => postMessage(e.data * 2);`;
  const w = workerFrom(`
    const w = new Worker(URL.createObjectURL(new Blob([${JSON.stringify(inner)}])));
    w.onmessage = (e) => postMessage(e.data + 1);
    onmessage = (e) => w.postMessage(e.data);
  `);
  const got = next(w);
  w.postMessage(20);
  assert_equals(await got, 41);
  w.terminate();
}, "a worker can start a nested worker");

promise_test(async () => {
  const w = workerFrom(`postMessage("before"); close(); postMessage("after close");`);
  const msgs = [];
  w.onmessage = (e) => msgs.push(e.data);
  await new Promise((r) => setTimeout(r, 60));
  assert_equals(msgs[0], "before");
}, "close() ends a worker from inside");

promise_test(async () => {
  const w = workerFrom(`
    onmessage = (e) => {
      const port = e.ports[0];
      port.onmessage = (m) => port.postMessage({ doubled: m.data * 2, viaPort: true });
      port.postMessage("port ready");
    };
  `);
  const { port1, port2 } = new MessageChannel();
  const next = () => new Promise((resolve) => { port1.onmessage = (m) => resolve(m.data); });
  let got = next();
  w.postMessage({ here: port2 }, [port2]);
  assert_equals(await got, "port ready");
  got = next();
  port1.postMessage(21);
  const r = await got;
  assert_equals(r.doubled, 42);
  assert_true(r.viaPort);
  w.terminate();
}, "a MessagePort transferred to a worker carries messages both ways");
