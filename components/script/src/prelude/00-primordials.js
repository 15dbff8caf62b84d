// The DOM of a jsprof window realm, built over the host's natives.
//
// Evaluated once per realm as a function expression; it receives the host's natives, the
// global object and the document (a tree description from html5ever), installs the Web APIs
// on the global, and returns the hooks the Rust side calls (timers, lifecycle events, error
// reporting). Frames of this file are engine frames: they never reach a page's trace.
(function (host, global, init) {
  "use strict";
  // ---------------------------------------------------------------------------------------
  // Primordials: the built-ins the engine's own code uses, captured before any page script
  // runs. A page may replace any built-in (Array.prototype.push, Map.prototype.get,
  // JSON.parse, Promise.prototype.then, Function.prototype.call, the iterators…), plant
  // getters and setters on Object.prototype and Array.prototype, or give a prototype a
  // `constructor` or Symbol.species getter: nothing the engine does for it may run them, and
  // no engine object may reach them. The rules (checked by the prelude lint,
  // components/page-model/src/prelude_lint.rs, on every function of the prelude: code that
  // runs only while the prelude is evaluated, before any page script, is exempt):
  // - no global is read after the prelude ran: what a function needs is captured here;
  // - no method call on a value (`x.f()`): built-ins are called as the uncurried functions
  //   below (`ArrayIsArray(x)`, `MapGet(m, k)`), the prelude's own operations as functions
  //   of the prelude, never through a prototype the page can change; only `host` is
  //   called as a namespace;
  // - no iteration protocol (for-of, spread, array destructuring), no async functions,
  //   await, generators, `instanceof` or `in`, no `super`: each consults something the page
  //   can replace (Array.prototype[Symbol.iterator], `then`, `constructor`,
  //   Symbol.hasInstance, the prototype of a class);
  // - every object literal has a null prototype (`{ __proto__: null, … }`), so that reading
  //   or writing a key it lacks never reaches Object.prototype; internal lists are
  //   null-prototype arrays (`list()`), and what is handed to the page is made a page
  //   object or array at the end (`exposed`, `toPageArray`);
  // - engine state lives where no page script can name it: WeakMaps of the prelude (per
  //   realm), or the native slot of a platform object (`host.platformObject(proto, state)`
  //   / `host.platformState(obj)`, for state that crosses same-origin realms: ports,
  //   Blobs), never in `_name` properties.
  // Reading a page value's properties is fine where the spec says so (dictionary members,
  // `handleEvent`, an iterable's iterator), and so is converting a page value where WebIDL
  // converts it (`StringCtor(x)` for a DOMString).
  const ReflectApply = Reflect.apply;
  const ReflectConstruct = Reflect.construct;
  const ReflectGetPrototypeOf = Reflect.getPrototypeOf;
  const ReflectGetOwnPropertyDescriptor = Reflect.getOwnPropertyDescriptor;
  const ReflectOwnKeys = Reflect.ownKeys;
  const ReflectDeleteProperty = Reflect.deleteProperty;
  const FunctionPrototypeCall = Function.prototype.call;
  const FunctionPrototypeBind = Function.prototype.bind;
  // uncurryThis(f)(self, ...args) is f.call(self, ...args), with nothing looked up when it
  // runs: a Function.prototype.call bound (here, once) to f.
  const uncurryThis = (f) => ReflectApply(FunctionPrototypeBind, FunctionPrototypeCall, [f]);
  // The getter of accessor `name` of `obj`, uncurried (Map.prototype.size, …).
  const uncurryGetter = (obj, name) => uncurryThis(ReflectGetOwnPropertyDescriptor(obj, name).get);

  const ObjectCtor = Object;
  const ObjectPrototype = Object.prototype;
  const ObjectCreate = Object.create;
  const ObjectDefineProperty = Object.defineProperty;
  const ObjectGetOwnPropertyDescriptor = Object.getOwnPropertyDescriptor;
  const ObjectGetPrototypeOf = Object.getPrototypeOf;
  const ObjectSetPrototypeOf = Object.setPrototypeOf;
  const ObjectFreeze = Object.freeze;
  const ObjectKeys = Object.keys;
  const ObjectHasOwn = Object.hasOwn;

  const ArrayPrototype = Array.prototype;
  // %IteratorPrototype% (https://tc39.es/ecma262/#sec-%iteratorprototype%-object).
  const IteratorPrototype = ReflectGetPrototypeOf(ReflectGetPrototypeOf([][Symbol.iterator]()));
  const ArrayIsArray = Array.isArray;

  const FunctionCtor = Function;
  const StringCtor = String;
  const NumberCtor = Number;
  const NumberIsFinite = Number.isFinite;
  const NumberParseInt = Number.parseInt;
  const NumberPrototypeToString = uncurryThis(Number.prototype.toString);
  const BigIntPrototypeToString = uncurryThis(BigInt.prototype.toString);
  const SymbolCtor = Symbol;
  const SymbolPrototypeToString = uncurryThis(Symbol.prototype.toString);
  const SymbolIterator = Symbol.iterator;
  const SymbolToStringTag = Symbol.toStringTag;
  const SymbolHasInstance = Symbol.hasInstance;
  const SymbolIsConcatSpreadable = Symbol.isConcatSpreadable;
  const MathRandom = Math.random;
  const MathMin = Math.min;
  const MathTrunc = Math.trunc;

  const StringFromCharCode = String.fromCharCode;
  const StringPrototypeCharCodeAt = uncurryThis(String.prototype.charCodeAt);
  const StringPrototypeIndexOf = uncurryThis(String.prototype.indexOf);
  const StringPrototypeSlice = uncurryThis(String.prototype.slice);
  const StringPrototypeToUpperCase = uncurryThis(String.prototype.toUpperCase);
  const StringPrototypeTrim = uncurryThis(String.prototype.trim);
  const StringPrototypeToWellFormed = uncurryThis(String.prototype.toWellFormed);
  // Only `exec`: RegExp.prototype.test, and String.prototype.replace/split/match with a
  // regular expression, look up `exec` and the Symbol.* methods on it, which a page can
  // replace. `exec` itself reads the expression's own state only.
  const RegExpPrototypeExec = uncurryThis(RegExp.prototype.exec);

  const ErrorCtor = Error;
  // https://tc39.es/proposal-is-error/: an Error object by its internal slot, whatever its
  // prototype says.
  const ErrorIsError = Error.isError;
  const TypeErrorCtor = TypeError;
  const RangeErrorCtor = RangeError;

  const MapCtor = Map;
  const MapGet = uncurryThis(Map.prototype.get);
  const MapSet = uncurryThis(Map.prototype.set);
  const MapHas = uncurryThis(Map.prototype.has);
  const MapDelete = uncurryThis(Map.prototype.delete);
  const SetCtor = Set;
  const SetHas = uncurryThis(Set.prototype.has);
  const SetAdd = uncurryThis(Set.prototype.add);
  const SetDelete = uncurryThis(Set.prototype.delete);
  const WeakMapCtor = WeakMap;
  const WeakMapGet = uncurryThis(WeakMap.prototype.get);
  const WeakMapSet = uncurryThis(WeakMap.prototype.set);
  const WeakMapHas = uncurryThis(WeakMap.prototype.has);
  const WeakMapDelete = uncurryThis(WeakMap.prototype.delete);
  const WeakSetCtor = WeakSet;
  const WeakSetHas = uncurryThis(WeakSet.prototype.has);
  const WeakSetAdd = uncurryThis(WeakSet.prototype.add);

  const PromiseCtor = Promise;
  const ProxyCtor = Proxy;
  const JSONParse = JSON.parse;
  const JSONStringify = JSON.stringify;

  const ArrayBufferIsView = ArrayBuffer.isView;
  const ArrayBufferPrototypeGetByteLength = uncurryGetter(ArrayBuffer.prototype, "byteLength");
  const TypedArrayPrototype = ReflectGetPrototypeOf(Uint8Array.prototype);
  const TypedArrayPrototypeGetBuffer = uncurryGetter(TypedArrayPrototype, "buffer");
  const TypedArrayPrototypeGetByteOffset = uncurryGetter(TypedArrayPrototype, "byteOffset");
  const TypedArrayPrototypeGetByteLength = uncurryGetter(TypedArrayPrototype, "byteLength");
  const TypedArrayPrototypeGetSymbolToStringTag = uncurryGetter(TypedArrayPrototype, SymbolToStringTag);
  const DataViewPrototypeGetBuffer = uncurryGetter(DataView.prototype, "buffer");
  const DataViewPrototypeGetByteOffset = uncurryGetter(DataView.prototype, "byteOffset");
  const DataViewPrototypeGetByteLength = uncurryGetter(DataView.prototype, "byteLength");
  const Uint8ArrayCtor = Uint8Array;

  const IndirectEval = eval;

  // An internal list: a null-prototype array, so that no getter or setter planted on
  // Array.prototype runs when it is read or grows. Filled by index; never iterated with
  // for-of or spread.
  const list = () => ObjectSetPrototypeOf([], null);
  const listPush = (l, v) => { l[l.length] = v; return l; };
  const listCopy = (l) => { const out = list(); for (let i = 0; i < l.length; i++) out[i] = l[i]; return out; };
  const listRemoveAt = (l, i) => { for (let j = i; j + 1 < l.length; j++) l[j] = l[j + 1]; l.length -= 1; };
  const listInsertAt = (l, i, v) => { for (let j = l.length; j > i; j--) l[j] = l[j - 1]; l[i] = v; };
  const listIndexOf = (l, v) => { for (let i = 0; i < l.length; i++) if (l[i] === v) return i; return -1; };
  const listIncludes = (l, v) => listIndexOf(l, v) >= 0;
  const listShift = (l) => { const v = l[0]; listRemoveAt(l, 0); return v; };
  const listOf = (...items) => ObjectSetPrototypeOf(items, null);
  // The list as a page array (Array.prototype, a real array): the end of an internal list
  // the page receives.
  const toPageArray = (l) => ObjectSetPrototypeOf(l, ArrayPrototype);
  // A page array of `l`'s items (`l` stays internal).
  const pageArrayOf = (l) => toPageArray(listCopy(l));
  // A null-prototype object made an ordinary one: the end of a record the page receives.
  const exposed = (o) => ObjectSetPrototypeOf(o, ObjectPrototype);
  // A page array's own items, read by index (`length` and indices are own data
  // properties of an array the page handed over; a hole reads as undefined without
  // reaching Array.prototype).
  const listFromArray = (a) => {
    const out = list();
    for (let i = 0; i < a.length; i++) out[i] = ownValue(a, i);
    return out;
  };
  // An own data property's value, without running a getter or reaching a prototype.
  function ownValue(o, key) {
    const d = ObjectGetOwnPropertyDescriptor(o, key);
    return d !== undefined && ObjectHasOwn(d, "value") ? d.value : undefined;
  }
  // WebIDL's conversion of an iterable to a list (https://webidl.spec.whatwg.org/#create-sequence-from-iterable):
  // the iterator the page object gives, stepped through its own `next`. `method` is its
  // @@iterator, read by the caller (overload resolution reads it first).
  function iterableToList(value, method) {
    // 1. Let iteratorRecord be ? GetIteratorFromMethod(iterable, method).
    const iterator = ReflectApply(method, value, []);
    if (iterator === null || (typeof iterator !== "object" && typeof iterator !== "function")) {
      throw new TypeErrorCtor("the iterator is not an object");
    }
    const next = iterator.next; // prelude-lint: allow(protocol-read) GetIteratorFromMethod reads `next` of the page's iterator
    // 2. Initialize i to be 0. 3. Repeat: IteratorStepValue, appending each value.
    const out = list();
    for (;;) {
      const result = ReflectApply(next, iterator, []);
      if (result === null || (typeof result !== "object" && typeof result !== "function")) {
        throw new TypeErrorCtor("the iterator's result is not an object");
      }
      if (result.done) return out;
      listPush(out, result.value);
    }
  }
  // A WebIDL sequence argument: an object with an @@iterator, made a list.
  function sequenceArg(value, what) {
    if (value === null || (typeof value !== "object" && typeof value !== "function")) {
      throw new TypeErrorCtor(`${what} is not a sequence`);
    }
    const method = value[SymbolIterator]; // prelude-lint: allow(protocol-read) WebIDL sequence conversion: GetMethod(V, @@iterator)
    if (typeof method !== "function") throw new TypeErrorCtor(`${what} is not iterable`);
    return iterableToList(value, method);
  }
  // A WebIDL dictionary argument: undefined or null is the empty dictionary, any other
  // object is read member by member where it is used, and anything else is a TypeError.
  function dictionaryArg(value, what) {
    if (value === undefined || value === null) return NO_INIT;
    if (typeof value !== "object" && typeof value !== "function") throw new TypeErrorCtor(`${what} is not an object`);
    return value;
  }

  // WebIDL's DOMString (https://webidl.spec.whatwg.org/#es-DOMString): ToString, which
  // throws for a Symbol (String(symbol) does not).
  const toDOMString = (v) => {
    if (typeof v === "symbol") throw new TypeErrorCtor("Cannot convert a Symbol value to a string");
    return StringCtor(v);
  };
  // USVString (https://webidl.spec.whatwg.org/#es-USVString): lone surrogates become U+FFFD.
  const toUSVString = (v) => StringPrototypeToWellFormed(toDOMString(v));

  // Strings without String.prototype.split/replace (which consult Symbol.split and
  // Symbol.replace, and RegExp.prototype.exec, on their argument).
  // `s` cut at every `separator` (a non-empty string), as a list.
  function splitString(s, separator) {
    const out = list();
    let from = 0;
    for (;;) {
      const i = StringPrototypeIndexOf(s, separator, from);
      if (i < 0) { listPush(out, StringPrototypeSlice(s, from)); return out; }
      listPush(out, StringPrototypeSlice(s, from, i));
      from = i + separator.length;
    }
  }
  // ASCII whitespace (https://infra.spec.whatwg.org/#ascii-whitespace).
  const isASCIIWhitespace = (c) => c === 0x09 || c === 0x0a || c === 0x0c || c === 0x0d || c === 0x20;
  // The non-empty runs of `s` between ASCII whitespace, as a list.
  function splitOnASCIIWhitespace(s) {
    const out = list();
    let start = -1;
    for (let i = 0; i <= s.length; i++) {
      const space = i === s.length || isASCIIWhitespace(StringPrototypeCharCodeAt(s, i));
      if (space && start >= 0) { listPush(out, StringPrototypeSlice(s, start, i)); start = -1; }
      else if (!space && start < 0) start = i;
    }
    return out;
  }
  // https://infra.spec.whatwg.org/#strip-and-collapse-ascii-whitespace
  function collapseWhitespace(s) {
    return joinList(splitOnASCIIWhitespace(s), " ");
  }
  function joinList(l, separator) {
    let out = "";
    for (let i = 0; i < l.length; i++) out += (i ? separator : "") + l[i];
    return out;
  }
  // Every match of the global or sticky expression `re` in `s` replaced by `replace(match)`
  // (the match array RegExp.prototype.exec gives).
  function replaceMatches(s, re, replace) {
    let out = "";
    let last = 0;
    re.lastIndex = 0;
    for (;;) {
      const m = RegExpPrototypeExec(re, s);
      if (m === null) return out + StringPrototypeSlice(s, last);
      out += StringPrototypeSlice(s, last, m.index) + replace(m);
      last = m.index + m[0].length;
      if (m[0].length === 0) re.lastIndex++;
    }
  }
  // https://infra.spec.whatwg.org/#ascii-lowercase (`s` itself when it has no upper-case
  // ASCII letter, the common case).
  const lowerCaseASCII = (s) => {
    let i = 0;
    for (; i < s.length; i++) {
      const c = StringPrototypeCharCodeAt(s, i);
      if (c >= 0x41 && c <= 0x5a) break;
    }
    if (i === s.length) return s;
    let out = StringPrototypeSlice(s, 0, i);
    for (; i < s.length; i++) {
      const c = StringPrototypeCharCodeAt(s, i);
      out += c >= 0x41 && c <= 0x5a ? StringFromCharCode(c + 0x20) : s[i];
    }
    return out;
  };

  // Promises: made with the original constructor (its executor's resolve runs no `then`
  // for a primitive), and reacted to with JS::AddPromiseReactions (host.whenSettled): no
  // `then`, `constructor` or Symbol.species is looked up.
  const resolvedPromise = (v) => new PromiseCtor((resolve) => resolve(v));
  const whenSettled = (promise, onFulfilled, onRejected) => host.whenSettled(promise, onFulfilled, onRejected);

  // JSON the engine hands over (init, URL parts, responses), parsed into null-prototype
  // objects and lists: reading a key that is absent never reaches Object.prototype.
  const toInternal = (key, value) => {
    if (value !== null && typeof value === "object") ObjectSetPrototypeOf(value, null);
    return value;
  };
  const parseInternalJSON = (text) => JSONParse(text, toInternal);

  const dataDescriptor = (value, writable, enumerable, configurable) =>
    ({ __proto__: null, value, writable, enumerable, configurable });
  init = parseInternalJSON(init);
  const defineValue = (obj, name, value) =>
    ObjectDefineProperty(obj, name, dataDescriptor(value, true, false, true));
  const defineGetter = (obj, name, get, set) =>
    ObjectDefineProperty(obj, name, { __proto__: null, get, set, configurable: true, enumerable: true });
  // An own, enumerable, writable data property (what CreateDataProperty makes).
  const defineData = (o, k, value) => ObjectDefineProperty(o, k, dataDescriptor(value, true, true, true));
  // A new ordinary object for the page (Object.prototype), filled by definition.
  const newPageObject = () => ObjectCreate(ObjectPrototype);
  const ILLEGAL = SymbolCtor("illegal constructor");
  const NO_INIT = ObjectFreeze({ __proto__: null });
  // Set once the parser's tree is built: from then on, connecting an iframe loads it.
  let documentReady = false;
  const tag = (cls, name) =>
    ObjectDefineProperty(cls.prototype, SymbolToStringTag, { __proto__: null, value: name, configurable: true });
  // `Illegal constructor` (https://webidl.spec.whatwg.org/#dfn-create-an-interface-object:
  // an interface without a constructor operation throws).
  const illegal = () => new TypeErrorCtor("Illegal constructor");

  // Platform objects with engine state in their native slot: the state object of a port
  // or a Blob is made by the realm that made the object, and read by any same-origin
  // realm's prelude (a port handed to another window's postMessage); `kind` tells which.
  const PLATFORM_PORT = 1;
  const PLATFORM_BLOB = 2;
  // `obj`'s native state if it is a platform object of `kind`, else undefined.
  const platformStateOf = (obj, kind) => {
    if (obj === null || (typeof obj !== "object" && typeof obj !== "function")) return undefined;
    const state = host.platformState(obj);
    return state !== undefined && state.kind === kind ? state : undefined;
  };
