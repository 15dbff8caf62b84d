// META: title=MessageChannel, MessagePort, window.postMessage and structuredClone
"use strict";

const nextMessage = (target) => new Promise((resolve) => {
  target.addEventListener("message", resolve, { once: true });
});

promise_test(async () => {
  const { port1, port2 } = new MessageChannel();
  const got = new Promise((resolve) => { port2.onmessage = resolve; });
  port1.postMessage({ a: 1, list: [1, 2] });
  const e = await got;
  assert_true(e instanceof MessageEvent);
  assert_equals(e.data.a, 1);
  assert_array_equals(e.data.list, [1, 2]);
  const back = new Promise((resolve) => { port1.onmessage = (e) => resolve(e.data); });
  port2.postMessage("pong");
  assert_equals(await back, "pong");
}, "ports carry messages both ways");

promise_test(async () => {
  const { port1, port2 } = new MessageChannel();
  port1.postMessage("queued");
  let early = false;
  port2.addEventListener("message", () => { early = true; });
  await new Promise((r) => setTimeout(r, 20));
  assert_false(early, "addEventListener alone does not start the port");
  const got = nextMessage(port2);
  port2.start();
  assert_equals((await got).data, "queued");
}, "messages wait for start()");

promise_test(async () => {
  const outer = new MessageChannel();
  const inner = new MessageChannel();
  const got = new Promise((resolve) => { outer.port2.onmessage = resolve; });
  outer.port1.postMessage("here is a port", [inner.port2]);
  const e = await got;
  assert_equals(e.ports.length, 1);
  const answer = new Promise((resolve) => { inner.port1.onmessage = (m) => resolve(m.data); });
  e.ports[0].postMessage("through the transferred port");
  assert_equals(await answer, "through the transferred port");
}, "a port is transferred with a message");

promise_test(async () => {
  const got = nextMessage(window);
  window.postMessage({ hello: "self" }, "*");
  const e = await got;
  assert_equals(e.data.hello, "self");
  assert_equals(e.origin, location.origin);
  assert_equals(e.source, window);
}, "window.postMessage to itself fires a message event with origin and source");

test(() => {
  const o = { m: new Map([[1, { d: new Date(5) }]]), s: new Set(["x"]), bytes: new Uint8Array([1, 2]) };
  o.self = o;
  const c = structuredClone(o);
  assert_not_equals(c, o);
  assert_equals(c.self, c, "cycles are kept");
  assert_equals(c.m.get(1).d.getTime(), 5);
  assert_true(c.s.has("x"));
  assert_array_equals(Array.from(c.bytes), [1, 2]);
  assert_throws_dom("DataCloneError", () => structuredClone(() => {}));
  assert_throws_dom("DataCloneError", () => structuredClone({ s: Symbol("x") }));
}, "structuredClone keeps cycles and types, and refuses functions and symbols");
