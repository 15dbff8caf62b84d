// META: title=One structured clone for structuredClone, window.postMessage, ports and workers
"use strict";

// The same values, checked after each way a message can go: within the realm
// (structuredClone), through a MessageChannel, to the window itself, and to a dedicated
// worker and back (another thread).
const workerFrom = (code) => new Worker(URL.createObjectURL(new Blob([code], { type: "text/javascript" })));
const echoWorker = () => workerFrom(`onmessage = (e) => postMessage(e.data);`);

function sample() {
  const buffer = new Uint8Array([1, 2, 3, 250]).buffer;
  const view = new DataView(new ArrayBuffer(8));
  view.setUint16(2, 0xbeef);
  const o = {
    buffer, view,
    shared: new Uint16Array(buffer, 2, 1), // a view of `buffer` itself
    blob: new Blob(["h\u00e9llo \u{1F600}", new Uint8Array([0, 255])], { type: "Text/Plain" }),
    error: new RangeError("out of range"),
    big: 2n ** 70n,
    when: new Date(1234), pattern: /a+b/gi, map: new Map([[1, "one"]]), set: new Set(["x"]),
    numbers: [NaN, -0, Infinity, undefined],
  };
  o.self = o;
  return o;
}

async function check(c, how) {
  assert_true(c.buffer instanceof ArrayBuffer, `${how}: ArrayBuffer`);
  assert_array_equals(Array.from(new Uint8Array(c.buffer)), [1, 2, 3, 250], `${how}: ArrayBuffer bytes`);
  assert_true(c.view instanceof DataView, `${how}: DataView`);
  assert_equals(c.view.getUint16(2), 0xbeef, `${how}: DataView contents`);
  assert_equals(c.shared.buffer, c.buffer, `${how}: a view and its buffer stay one buffer`);
  assert_true(c.blob instanceof Blob, `${how}: Blob`);
  assert_equals(c.blob.type, "text/plain", `${how}: Blob type`);
  assert_equals(c.blob.size, new Blob(["h\u00e9llo \u{1F600}", new Uint8Array([0, 255])]).size, `${how}: Blob size`);
  assert_equals(await c.blob.text(), await new Blob(["h\u00e9llo \u{1F600}", new Uint8Array([0, 255])]).text(), `${how}: Blob contents`);
  assert_true(c.error instanceof RangeError, `${how}: Error type`);
  assert_equals(c.error.message, "out of range", `${how}: Error message`);
  assert_equals(c.big, 2n ** 70n, `${how}: BigInt`);
  assert_equals(c.when.getTime(), 1234, `${how}: Date`);
  assert_equals(String(c.pattern), "/a+b/gi", `${how}: RegExp`);
  assert_equals(c.map.get(1), "one", `${how}: Map`);
  assert_true(c.set.has("x"), `${how}: Set`);
  assert_true(Number.isNaN(c.numbers[0]) && Object.is(c.numbers[1], -0) && c.numbers[2] === Infinity, `${how}: numbers`);
  assert_true(3 in c.numbers && c.numbers[3] === undefined, `${how}: undefined`);
  assert_equals(c.self, c, `${how}: cycles`);
}

promise_test(async () => {
  const o = sample();
  const c = structuredClone(o);
  assert_not_equals(c.buffer, o.buffer);
  assert_not_equals(c.blob, o.blob);
  await check(c, "structuredClone");
}, "structuredClone copies buffers, views, DataViews, Blobs, Errors and BigInts, cycles kept");

promise_test(async () => {
  const { port1, port2 } = new MessageChannel();
  const got = new Promise((resolve) => { port2.onmessage = (e) => resolve(e.data); });
  port1.postMessage(sample());
  await check(await got, "MessagePort");
}, "the same through a MessagePort");

promise_test(async () => {
  const got = new Promise((resolve) => window.addEventListener("message", (e) => resolve(e.data), { once: true }));
  window.postMessage(sample(), "*");
  await check(await got, "window.postMessage");
}, "the same through window.postMessage");

promise_test(async () => {
  const w = echoWorker();
  const got = new Promise((resolve, reject) => {
    w.onmessage = (e) => resolve(e.data);
    w.onerror = (e) => { e.preventDefault(); reject(new Error(e.message)); };
    w.onmessageerror = () => reject(new Error("messageerror"));
  });
  w.postMessage(sample());
  await check(await got, "a worker and back");
  w.terminate();
}, "the same to a dedicated worker and back: ArrayBuffer, Blob and DataView cross threads");

test(() => {
  const { port1 } = new MessageChannel();
  assert_throws_dom("DataCloneError", () => structuredClone(() => {}));
  assert_throws_dom("DataCloneError", () => structuredClone({ s: Symbol("x") }));
  assert_throws_dom("DataCloneError", () => structuredClone({ p: port1 }), "a port must be transferred");
  assert_throws_dom("DataCloneError", () => structuredClone(document), "a DOM object that is not cloneable");
  assert_throws_dom("DataCloneError", () => echoWorker().postMessage({ f() {} }));
  const thrown = new SyntaxError("mine");
  assert_throws_exactly(thrown, () => structuredClone({ get x() { throw thrown; } }), "a getter's exception propagates");
}, "what cannot be cloned is a DataCloneError, and a getter's exception propagates");

promise_test(async () => {
  const { port1, port2 } = new MessageChannel();
  // The worker answers through the port it was given (a port moves one hop: see
  // ARCHITECTURE.md, "Dedicated workers").
  const w = workerFrom(`onmessage = (e) => {
    const { port, bytes } = e.data;
    port.postMessage({ same: port === e.ports[0], bytes, blob: new Blob(["through"], { type: "text/x-test" }), view: new DataView(bytes.buffer) });
  };`);
  const answer = new Promise((resolve) => { port1.onmessage = (m) => resolve(m.data); });
  w.postMessage({ port: port2, bytes: new Uint8Array([9, 8]) }, [port2]);
  const got = await answer;
  assert_true(got.same, "the transferred port is in place in the data and in ports");
  assert_array_equals(Array.from(got.bytes), [9, 8]);
  assert_equals(got.view.getUint8(1), 8);
  assert_equals(got.blob.type, "text/x-test");
  assert_equals(await got.blob.text(), "through");
  w.terminate();
}, "a port transferred to a worker carries clones back from it");
