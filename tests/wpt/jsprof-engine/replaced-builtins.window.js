// META: title=A page that replaced every built-in: the engine's own work never calls what it planted
"use strict";

// The WPT form of tests/pages/builtins/ (issue 23): every function and accessor of the
// standard built-ins becomes a recorder, and recording accessors are planted on
// Object.prototype and Array.prototype; a recorder notes a call only when the frame that
// made it is the engine's (`jsprof:prelude`), so this file's and testharness.js's own use
// of the built-ins is not counted. (Unlike tests/pages/builtins/, a call with no script
// frame at all is not counted either: testharness.js resolves promises with promises,
// whose `then` a job with no frame calls.) Arguments are chosen so that WebIDL's own
// conversions run nothing of the page (null-prototype dictionaries, iterables with their
// own iterators).
const watch = (() => {
  const apply = Reflect.apply, construct = Reflect.construct, ownKeys = Reflect.ownKeys;
  const getOwn = Reflect.getOwnPropertyDescriptor, define = Reflect.defineProperty;
  const ProxyCtor = Proxy, ErrorCtor = Error;
  const stackGetter = getOwn(Error.prototype, "stack").get;
  const split = String.prototype.split, indexOf = String.prototype.indexOf;
  const seen = [];
  let inside = false;
  // Noted if the frame that called the recorder (below this function and the recorder, a
  // proxy trap or a planted accessor) is the engine's.
  const record = (what, receiver) => {
    if (inside) return;
    inside = true;
    try {
      const lines = apply(split, apply(stackGetter, construct(ErrorCtor, []), []), ["\n"]);
      const caller = lines[2];
      if (caller !== undefined && apply(indexOf, caller, ["@jsprof:prelude:"]) >= 0) {
        define(seen, seen.length, { __proto__: null, value: { __proto__: null, what, receiver, caller }, enumerable: true, writable: true, configurable: true });
      }
    } finally {
      inside = false;
    }
  };
  const wrap = (fn, what) => new ProxyCtor(fn, {
    __proto__: null,
    apply(target, self, args) { record(`call ${what}`, self); return apply(target, self, args); },
    construct(target, args, newTarget) { record(`new ${what}`); return construct(target, args, newTarget); },
  });
  const roots = [];
  const names = ["Object", "Function", "Array", "String", "Number", "Boolean", "Symbol", "BigInt", "Map", "Set",
    "WeakMap", "WeakSet", "WeakRef", "Promise", "JSON", "Reflect", "RegExp", "Date", "Math", "Error", "TypeError",
    "RangeError", "ArrayBuffer", "DataView", "Uint8Array"];
  for (const name of names) {
    roots.push([name, globalThis[name]]);
    if (typeof globalThis[name] === "function") roots.push([`${name}.prototype`, globalThis[name].prototype]);
  }
  const arrayIterator = Object.getPrototypeOf([][Symbol.iterator]());
  roots.push(["%ArrayIteratorPrototype%", arrayIterator], ["%IteratorPrototype%", Object.getPrototypeOf(arrayIterator)],
    ["%TypedArray%.prototype", Object.getPrototypeOf(Uint8Array.prototype)]);
  const plantOn = [Object.prototype, Array.prototype];
  for (const [label, obj] of roots) {
    for (const key of ownKeys(obj)) {
      const d = getOwn(obj, key);
      const what = `${label}.${String(key)}`;
      if (!d.configurable) continue;
      if (key === "constructor" && "value" in d) {
        const value = d.value;
        define(obj, key, { __proto__: null, configurable: true, get: wrap(() => value, `get ${what}`), set: wrap(function (v) { define(this, key, { __proto__: null, value: v, writable: true, enumerable: true, configurable: true }); }, `set ${what}`) });
      } else if ("value" in d && typeof d.value === "function") {
        define(obj, key, { __proto__: null, value: wrap(d.value, what), writable: d.writable, enumerable: d.enumerable, configurable: true });
      } else if (!("value" in d)) {
        define(obj, key, { __proto__: null, configurable: true, enumerable: d.enumerable, get: d.get && wrap(d.get, `get ${what}`), set: d.set && wrap(d.set, `set ${what}`) });
      }
    }
  }
  const planted = ["then", "next", "done", "value", "type", "target", "data", "ports", "source", "detail", "message",
    "capture", "once", "handleEvent", "transfer", "_id", "_type", "_ports", "_list", "_children", "_parent",
    "localName", "children", "parent", "length", "name", "0", "1", "2", Symbol.iterator, Symbol.toPrimitive];
  for (const proto of plantOn) {
    for (const key of planted) {
      if (getOwn(proto, key)) continue;
      const what = `${proto === Object.prototype ? "Object" : "Array"}.prototype.${String(key)}`;
      define(proto, key, { __proto__: null, configurable: true,
        get() { record(`get ${what}`, this); return undefined; },
        set(v) { record(`set ${what}`, this); define(this, key, { __proto__: null, value: v, writable: true, enumerable: true, configurable: true }); } });
    }
  }
  // What the engine reached since `mark`, but `then` read on an object the page was handed
  // as a promise's value (as WebIDL's resolve does in every browser).
  return {
    mark: () => seen.length,
    since: (mark, handed = []) => seen.slice(mark)
      .filter((r) => !(r.what === "get Object.prototype.then" && handed.includes(r.receiver)))
      .map((r) => `${r.what} from ${r.caller}`),
  };
})();

const own = (items) => ({ __proto__: null, [Symbol.iterator]() { let i = 0; return { __proto__: null, next: () => (i < items.length ? { __proto__: null, done: false, value: items[i++] } : { __proto__: null, done: true }) }; } });
const dict = (o) => Object.setPrototypeOf(o, null);

test(() => {
  const mark = watch.mark();
  const div = document.createElement("div");
  div.id = "replaced";
  div.appendChild(document.createTextNode("text"));
  document.body.appendChild(div);
  const order = [];
  div.addEventListener("ping", (e) => order.push(`div ${e.detail}`));
  document.body.addEventListener("ping", () => order.push("body"), dict({ once: true }));
  div.dispatchEvent(new CustomEvent("ping", dict({ bubbles: true, detail: 1 })));
  assert_equals(order.join(), "div 1,body");
  assert_equals(document.querySelector("body > div#replaced").textContent, "text");
  assert_equals(div.outerHTML, "<div id=\"replaced\">text</div>");
  div.remove();
  assert_array_equals(watch.since(mark), []);
}, "events and the DOM reach nothing the page replaced");

test(() => {
  const mark = watch.mark();
  const url = new URL("/p?a=1&b=x+y", "https://a.test/");
  url.searchParams.append("c", "é");
  assert_equals(url.href, "https://a.test/p?a=1&b=x+y&c=%C3%A9");
  const params = new URLSearchParams(own([own(["k", "v"])]));
  assert_equals(params.entries().next().value.join(), "k,v");
  assert_array_equals(watch.since(mark), []);
}, "URL and URLSearchParams reach nothing the page replaced");

promise_test(async () => {
  const mark = watch.mark();
  const { port1, port2 } = new MessageChannel();
  const inner = new MessageChannel();
  const got = new Promise((resolve) => { port2.onmessage = resolve; });
  port1.postMessage(dict({ blob: new Blob(own(["ab", new Uint8Array([99])])) }), own([inner.port1]));
  const e = await got;
  assert_equals(e.ports.length, 1);
  assert_equals(await e.data.blob.text(), "abc");
  const clone = structuredClone(dict({ map: new Map([[1, 2]]) }));
  assert_equals(clone.map.get(1), 2);
  // `resolve`, the listener, is the page's: resolving with the event reads its `then`.
  assert_array_equals(watch.since(mark, [e]), []);
}, "MessageChannel, structuredClone and Blob reach nothing the page replaced");

promise_test(async () => {
  const mark = watch.mark();
  const order = [];
  await new Promise((resolve) => {
    setTimeout(() => { order.push("timer"); resolve(); }, 0);
    queueMicrotask(() => order.push("microtask"));
  });
  const message = await new Promise((resolve) => {
    self.addEventListener("message", (e) => resolve(e.data), dict({ once: true }));
    postMessage("to myself", "*");
  });
  assert_equals(`${order.join()} ${message}`, "microtask,timer to myself");
  assert_array_equals(watch.since(mark), []);
}, "timers, microtasks and postMessage reach nothing the page replaced");

promise_test(async () => {
  const mark = watch.mark();
  const profiler = new Profiler(dict({ sampleInterval: 10, maxBufferSize: 100 }));
  const end = performance.now() + 50;
  while (performance.now() < end);
  const trace = await profiler.stop();
  assert_true(Array.isArray(trace.samples));
  assert_array_equals(watch.since(mark, [trace]), []);
}, "a Profiler reaches nothing the page replaced");
