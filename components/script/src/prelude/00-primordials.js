// The DOM of a jsprof window realm, built over the host's natives.
//
// Evaluated once per realm as a function expression; it receives the host's natives, the
// global object and the document (a tree description from html5ever), installs the Web APIs
// on the global, and returns the hooks the Rust side calls (timers, lifecycle events, error
// reporting). Frames of this file are engine frames: they never reach a page's trace.
(function (host, global, init) {
  "use strict";
  // ---------------------------------------------------------------------------------------
  // Primordials: the built-ins the engine's own machinery uses, captured before any page
  // script runs. A page may replace Array.prototype.push, WeakMap.prototype.get, JSON.parse,
  // Promise.prototype.then or Function.prototype.call, or plant setters on Object.prototype
  // and Array.prototype: nothing the engine does for it (events, timers, messages, promise
  // jobs) may run them. Internal lists are null-prototype arrays (`list()`), filled by
  // index, and property descriptors are null-prototype objects.
  const ReflectApply = Reflect.apply;
  const uncurry = (f) => function (self, ...args) { return ReflectApply(f, self, args); };
  const ObjectDefineProperty = Object.defineProperty;
  const ObjectSetPrototypeOf = Object.setPrototypeOf;
  const ObjectFreeze = Object.freeze;
  const WeakMapGet = uncurry(WeakMap.prototype.get);
  const WeakMapSet = uncurry(WeakMap.prototype.set);
  const WeakMapHas = uncurry(WeakMap.prototype.has);
  const WeakMapDelete = uncurry(WeakMap.prototype.delete);
  const MapGet = uncurry(Map.prototype.get);
  const MapSet = uncurry(Map.prototype.set);
  const MapHas = uncurry(Map.prototype.has);
  const MapDelete = uncurry(Map.prototype.delete);
  const SetCtor = Set;
  const SetHas = uncurry(Set.prototype.has);
  const SetAdd = uncurry(Set.prototype.add);
  const SetDelete = uncurry(Set.prototype.delete);
  const FunctionCtor = Function;
  const ArrayIsArray = Array.isArray;
  const ObjectKeys = Object.keys;
  const NumberIsFinite = Number.isFinite;
  const PromisePrototypeThen = uncurry(Promise.prototype.then);
  const PromiseResolve = (v) => new OriginalPromise((resolve) => resolve(v));
  const OriginalPromise = Promise;
  const JSONParse = JSON.parse;
  const JSONStringify = JSON.stringify;
  const StringCtor = String;
  const NumberCtor = Number;
  const IndirectEval = eval;
  // An internal list: a null-prototype array, so that no setter planted on
  // Array.prototype runs when it grows.
  const list = () => ObjectSetPrototypeOf([], null);
  const listPush = (l, v) => { l[l.length] = v; return l; };
  const listCopy = (l) => { const out = list(); for (let i = 0; i < l.length; i++) out[i] = l[i]; return out; };
  const listRemoveAt = (l, i) => { for (let j = i; j + 1 < l.length; j++) l[j] = l[j + 1]; l.length -= 1; };
  const dataDescriptor = (value, writable, enumerable, configurable) =>
    ({ __proto__: null, value, writable, enumerable, configurable });
  // For fetch, XMLHttpRequest and bytes (12-fetch.js, 09-blob.js): conversions, header
  // lists, byte strings and BufferSources, iterators.
  const TypeErrorCtor = TypeError;
  const RangeErrorCtor = RangeError;
  const ReflectOwnKeys = Reflect.ownKeys;
  const ReflectGetOwnPropertyDescriptor = Reflect.getOwnPropertyDescriptor;
  const ReflectDeleteProperty = Reflect.deleteProperty;
  const ObjectGetPrototypeOf = Object.getPrototypeOf;
  const ObjectHasOwn = Object.hasOwn;
  const MathMin = Math.min;
  const MathTrunc = Math.trunc;
  const StringFromCharCode = String.fromCharCode;
  // Bound to Function.prototype.call, not uncurried: no argument array per call (bytes are
  // read a code unit at a time, 6× faster this way on 16 MiB).
  const StringPrototypeCharCodeAt = Function.prototype.call.bind(String.prototype.charCodeAt);
  const StringPrototypeIndexOf = uncurry(String.prototype.indexOf);
  const StringPrototypeSlice = uncurry(String.prototype.slice);
  const StringPrototypeToLowerCase = uncurry(String.prototype.toLowerCase);
  const StringPrototypeToUpperCase = uncurry(String.prototype.toUpperCase);
  const StringPrototypeToWellFormed = uncurry(String.prototype.toWellFormed);
  const SymbolIterator = Symbol.iterator;
  const SymbolToStringTag = Symbol.toStringTag;
  const IteratorPrototype = ObjectGetPrototypeOf(ObjectGetPrototypeOf([][Symbol.iterator]()));
  const getterOf = (proto, name) => uncurry(ReflectGetOwnPropertyDescriptor(proto, name).get);
  const ArrayBufferIsView = ArrayBuffer.isView;
  const ArrayBufferPrototypeGetByteLength = getterOf(ArrayBuffer.prototype, "byteLength");
  const Uint8ArrayCtor = Uint8Array;
  const TypedArrayPrototype = ObjectGetPrototypeOf(Uint8Array.prototype);
  const TypedArrayPrototypeGetBuffer = getterOf(TypedArrayPrototype, "buffer");
  const TypedArrayPrototypeGetByteOffset = getterOf(TypedArrayPrototype, "byteOffset");
  const TypedArrayPrototypeGetByteLength = getterOf(TypedArrayPrototype, "byteLength");
  const DataViewPrototypeGetBuffer = getterOf(DataView.prototype, "buffer");
  const DataViewPrototypeGetByteOffset = getterOf(DataView.prototype, "byteOffset");
  const DataViewPrototypeGetByteLength = getterOf(DataView.prototype, "byteLength");
  init = JSONParse(init);
  const defineValue = (obj, name, value) =>
    ObjectDefineProperty(obj, name, dataDescriptor(value, true, false, true));
  const defineGetter = (obj, name, get, set) =>
    Object.defineProperty(obj, name, { get, set, configurable: true, enumerable: true });
  const ILLEGAL = Symbol("illegal constructor");
  // Set once the parser's tree is built: from then on, connecting an iframe loads it.
  let documentReady = false;
  const tag = (cls, name) =>
    Object.defineProperty(cls.prototype, Symbol.toStringTag, { value: name, configurable: true });

