// META: title=A page that redefines what the structured clone could consult cannot change what it clones
"use strict";

// Blobs are recognised by the engine's own records, not by `instanceof` (which a page can
// answer with Blob[Symbol.hasInstance]) or by getters the page can replace.
promise_test(async () => {
  const type = Object.getOwnPropertyDescriptor(Blob.prototype, "type").get;
  Object.defineProperty(Blob, Symbol.hasInstance, { value: () => true });
  Object.defineProperty(Blob.prototype, "type", { get() { return "evil\ninjected"; } });
  assert_throws_dom("DataCloneError", () => structuredClone(new EventTarget()),
                    "an EventTarget is still not a Blob");
  assert_throws_dom("DataCloneError", () => structuredClone({ e: new Event("x") }));
  const c = structuredClone(new Blob(["hi"], { type: "text/plain" }));
  assert_equals(type.call(c), "text/plain", "the clone keeps the Blob's own type");
  assert_array_equals(Reflect.ownKeys(c), [], "a Blob has no own properties to forge");
  assert_equals(await c.text(), "hi");
}, "a redefined Blob[Symbol.hasInstance] and type getter do not reach the clone");
