// META: global=window,dedicatedworker
// META: title=fetch(), Headers, Request, Response and XMLHttpRequest run none of a page's replaced built-ins
// META: script=resources/helpers.sub.js
"use strict";

// Every built-in the engine's fetch code could reach by a page-replaceable path, wrapped with
// a recorder that notes each call the engine makes (its frames are `jsprof:prelude`) while
// `recording` is on; the wrappers still do their job. The page's own calls, and the
// harness's, are not the engine's and are not counted. The recorder uses only what it
// captured first (and what it calls while recording is not recorded).
const apply = Reflect.apply, construct = Reflect.construct, defineProperty = Object.defineProperty;
const ErrorCtor = Error;
const calls = Object.create(null);
let count = 0;
let recording = false;
let inRecorder = false;
function record(what) {
  if (!recording || inRecorder) return;
  inRecorder = true;
  try {
    // Frames: this recorder, the wrapper, then whoever called the built-in; if that is the
    // engine, the frame that called into the engine says on whose behalf. What the harness
    // set off (its postMessage of results, in a worker) is not the test's doing.
    const frames = new ErrorCtor().stack.split("\n");
    const caller = frames[2] || "";
    let entry = 2;
    while (entry < frames.length && frames[entry].includes("@jsprof:prelude:")) entry++;
    const onBehalfOf = frames[entry] || "";
    if (caller.includes("@jsprof:prelude:") && !onBehalfOf.includes("/resources/testharness")) {
      calls[count++] = `${what} (from ${caller})`;
    }
  } finally {
    inRecorder = false;
  }
}
const wrapped = [];
function wrap(owner, name, label) {
  const desc = Object.getOwnPropertyDescriptor(owner, name);
  if (!desc || !desc.configurable) return;
  if (typeof desc.value === "function") {
    const original = desc.value;
    const replacement = function () {
      record(label);
      return new.target ? construct(original, arguments, new.target) : apply(original, this, arguments);
    };
    Object.defineProperty(replacement, "prototype", { value: original.prototype });
    Object.defineProperty(owner, name, { ...desc, value: replacement });
  } else if (desc.get) {
    const get = desc.get;
    Object.defineProperty(owner, name, { ...desc, get() { record(`get ${label}`); return apply(get, this, []); } });
  }
  wrapped.push(label);
}
const TypedArray = Object.getPrototypeOf(Uint8Array);
const ArrayIterator = Object.getPrototypeOf([][Symbol.iterator]());
for (const [owner, ownerName] of [
  [Array.prototype, "Array.prototype"], [String.prototype, "String.prototype"], [Object, "Object"],
  [JSON, "JSON"], [Map.prototype, "Map.prototype"], [WeakMap.prototype, "WeakMap.prototype"],
  [Set.prototype, "Set.prototype"], [WeakSet.prototype, "WeakSet.prototype"],
  [Promise.prototype, "Promise.prototype"], [Promise, "Promise"], [Function.prototype, "Function.prototype"],
  [Reflect, "Reflect"], [ArrayBuffer.prototype, "ArrayBuffer.prototype"], [ArrayBuffer, "ArrayBuffer"],
  [TypedArray.prototype, "%TypedArray%.prototype"], [DataView.prototype, "DataView.prototype"],
  [ArrayIterator, "%ArrayIteratorPrototype%"], [RegExp.prototype, "RegExp.prototype"], [Math, "Math"],
  [Number.prototype, "Number.prototype"], [Symbol, "Symbol"], [String, "String"], [Array, "Array"],
]) {
  for (const key of Reflect.ownKeys(owner)) {
    if (key === "constructor" || key === "prototype" || key === "length" || key === "name") continue;
    wrap(owner, key, `${ownerName}.${String(key)}`);
  }
}
// Constructors the engine might look up on the global at run time.
for (const name of ["Uint8Array", "ArrayBuffer", "TypeError", "RangeError", "Promise", "Map", "WeakMap", "URL", "String", "Number", "Object", "Array", "JSON", "Headers", "Response", "Blob", "Error", "DOMException"]) {
  const original = globalThis[name];
  if (typeof original !== "function") continue;
  const replacement = new Proxy(original, {
    apply(t, self, args) { record(`global ${name}()`); return apply(t, self, args); },
    construct(t, args, nt) { record(`new global ${name}`); return construct(t, args, nt); },
  });
  Object.defineProperty(globalThis, name, { value: replacement, writable: true, configurable: true });
}
// Accessors on Object.prototype and Array.prototype, for the recorded sections only, named as
// the fields of the engine's own records: an internal object that inherited from them would
// run these.
const PLANTED = ["error", "body", "bytes", "type", "status", "statusText", "url", "headers", "method", "mode",
  "credentials", "redirect", "timeout", "useCorsPreflight", "redirected", "value", "used", "kind", "present",
  "guard", "list", "state", "sendFlag", "timedOut", "response", "href", "origin", "username", "password",
  "headerList", "referrer", "cache", "integrity", "keepalive", "generation", "upload", "done", "next"];
function plant(on) {
  for (const proto of [Object.prototype, Array.prototype]) {
    for (let i = 0; i < PLANTED.length; i++) {
      const name = PLANTED[i];
      if (on) {
        if (Object.getOwnPropertyDescriptor(proto, name)) continue;
        defineProperty(proto, name, { __proto__: null, get() { record(`get ${name}`); return undefined; }, set(v) { record(`set ${name}`); }, configurable: true });
      } else if (Object.getOwnPropertyDescriptor(proto, name)?.configurable) {
        delete proto[name];
      }
    }
  }
}

// Runs `f` (which may await) with the recorders on; the calls it caused.
async function recorded(f) {
  count = 0;
  plant(true);
  recording = true;
  let result;
  try { result = await f(); } finally { recording = false; plant(false); }
  const out = [];
  for (let i = 0; i < count; i++) out.push(calls[i]);
  return { result, calls: out };
}

// Inside the recorded sections the test hands the engine nothing of its own that the
// standards would have it read through a page-replaceable path: dictionaries have no
// prototype, headers are records, URLs, Blobs and URLSearchParams are made before.
const dict = (o) => Object.setPrototypeOf(o, null);

promise_test(async () => {
  assert_greater_than(wrapped.length, 150, "built-ins wrapped");
  const typed = new Blob(["b"], { type: "text/x" });
  const { result, calls } = await recorded(async () => {
    const h = new Headers(dict({ "X-B": "2" }));
    h.append("X-A", "1");
    h.set("x-c", " 3 ");
    h.delete("x-b");
    const seen = [];
    h.forEach((v, k) => { seen[seen.length] = k + "=" + v; });
    const it = h.entries();
    const first = it.next().value;
    const request = new Request(ECHO, dict({ method: "POST", body: "r", headers: dict({ "X-A": "1" }) }));
    const clone = request.clone();
    const response = new Response("text", dict({ status: 201, headers: dict({ "X-D": "4" }) }));
    const json = Response.json(dict({ a: 1 }));
    const text = await response.text();
    const parsed = await json.json();
    const bytes = await new Response(new Uint8Array([1, 2, 3])).arrayBuffer();
    const blob = await new Response(typed).blob();
    return { seen: seen.join(), first: first[0], has: h.has("X-A"), get: h.get("x-c"), clone: clone.method, text, parsed: parsed.a,
      bytes: new Uint8Array(bytes)[2], blobType: blob.type, redirect: Response.redirect("/x", 301).status, error: Response.error().type };
  });
  assert_array_equals(calls, [], "built-ins the Headers, Request and Response code ran");
  assert_equals(result.seen, "x-a=1,x-c=3");
  assert_equals(result.first, "x-a");
  assert_true(result.has);
  assert_equals(result.get, "3");
  assert_equals(result.clone, "POST");
  assert_equals(result.text, "text");
  assert_equals(result.parsed, 1);
  assert_equals(result.bytes, 3);
  assert_equals(result.blobType, "text/x");
  assert_equals(result.redirect, 301);
  assert_equals(result.error, "error");
}, "Headers, Request and Response");

promise_test(async () => {
  const bytes = new Uint8Array([0, 255, 128]);
  const blob = new Blob(["blob"], { type: "text/plain" });
  const allowed = echo(OTHER_ECHO, { acao: "*", methods: "PUT", headers: "x-a" });
  const refusing = echo(OTHER_ECHO, { acao: "*" });
  const { result, calls } = await recorded(async () => {
    const a = await fetch(ECHO, dict({ method: "POST", body: "s\u00e9" }));
    const b = await fetch(ECHO, dict({ method: "PUT", body: bytes.buffer, headers: dict({ "X-A": "1" }) }));
    const c = await fetch(ECHO, dict({ method: "POST", body: blob }));
    const e = await fetch(allowed, dict({ method: "PUT", body: "cors", headers: dict({ "X-A": "1" }) }));
    let refused = "no";
    try { await fetch(refusing, dict({ method: "PUT" })); } catch (err) { refused = err instanceof TypeError ? "TypeError" : "other"; }
    return [await a.text(), new Uint8Array(await b.arrayBuffer())[1], await c.text(), await e.text(), refused,
      a.headers.get("x-method"), e.status];
  });
  assert_array_equals(calls, [], "built-ins fetch() ran");
  assert_array_equals(result, ["s\u00e9", 255, "blob", "cors", "TypeError", "POST", 200]);
}, "fetch(), with the bodies and a preflight");

promise_test(async () => {
  const params = new URLSearchParams("a=1&b=2");
  const { result, calls } = await recorded(async () => {
    const r = await fetch(ECHO, dict({ method: "POST", body: params }));
    return [await r.text(), r.headers.get("x-content-type")];
  });
  assert_array_equals(calls, [], "built-ins serialising the URLSearchParams ran");
  assert_array_equals(result, ["a=1&b=2", "application/x-www-form-urlencoded;charset=UTF-8"]);
}, "fetch() with a URLSearchParams body");

promise_test(async () => {
  const url = echo(OTHER_ECHO, { acao: "*", methods: "PUT", headers: "x-a" });
  const { result, calls } = await recorded(() => new Promise((resolve) => {
    const x = new XMLHttpRequest();
    const events = [];
    x.onreadystatechange = () => { events[events.length] = x.readyState; };
    x.onloadend = () => {
      const sync = new XMLHttpRequest();
      sync.open("POST", ECHO, false);
      sync.setRequestHeader("X-A", "1");
      sync.send(new Uint8Array([104, 105]));
      resolve([events.join(), x.status, x.responseText, x.getResponseHeader("x-method"), x.getAllResponseHeaders().length > 0, sync.responseText]);
    };
    x.open("PUT", url);
    x.setRequestHeader("X-A", "1");
    x.send("xhr");
  }));
  assert_array_equals(calls, [], "built-ins XMLHttpRequest ran");
  assert_array_equals(result, ["1,2,3,4", 200, "xhr", "PUT", true, "hi"]);
}, "XMLHttpRequest, asynchronous with a preflight and synchronous");

promise_test(async () => {
  const { result, calls } = await recorded(async () => {
    let ran = false;
    queueMicrotask(() => { ran = true; });
    await null;
    return [btoa("\u00ff\u0000a"), atob(" /wBh "), ran];
  });
  assert_array_equals(calls, []);
  assert_array_equals(result, ["/wBh", "\u00ff\u0000a", true]);
}, "btoa, atob and queueMicrotask");

test(() => {
  for (const o of [new Headers(), new Request(ECHO), new Response(), new XMLHttpRequest()]) {
    assert_array_equals(Reflect.ownKeys(o), [], `${o}: no own properties`);
  }
}, "no internal state on the objects");
