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

  // ---------------------------------------------------------------------------------------
  // DOMException (https://webidl.spec.whatwg.org/#idl-DOMException)
  const LEGACY_CODES = {
    IndexSizeError: 1, HierarchyRequestError: 3, WrongDocumentError: 4, InvalidCharacterError: 5,
    NoModificationAllowedError: 7, NotFoundError: 8, NotSupportedError: 9, InvalidStateError: 11,
    SyntaxError: 12, InvalidModificationError: 13, NamespaceError: 14, InvalidAccessError: 15,
    TypeMismatchError: 17, SecurityError: 18, NetworkError: 19, AbortError: 20, URLMismatchError: 21,
    QuotaExceededError: 22, TimeoutError: 23, InvalidNodeTypeError: 24, DataCloneError: 25,
  };
  const exceptionData = new WeakMap();
  class DOMException extends Error {
    constructor(message = "", name = "Error") {
      super(String(message));
      exceptionData.set(this, { name: String(name), message: String(message) });
      delete this.message;
    }
    get name() { return exceptionData.get(this).name; }
    get message() { return exceptionData.get(this).message; }
    get code() { return LEGACY_CODES[exceptionData.get(this).name] || 0; }
  }
  const CONSTANTS = ["INDEX_SIZE_ERR", 1, "DOMSTRING_SIZE_ERR", 2, "HIERARCHY_REQUEST_ERR", 3,
    "WRONG_DOCUMENT_ERR", 4, "INVALID_CHARACTER_ERR", 5, "NO_DATA_ALLOWED_ERR", 6,
    "NO_MODIFICATION_ALLOWED_ERR", 7, "NOT_FOUND_ERR", 8, "NOT_SUPPORTED_ERR", 9,
    "INUSE_ATTRIBUTE_ERR", 10, "INVALID_STATE_ERR", 11, "SYNTAX_ERR", 12,
    "INVALID_MODIFICATION_ERR", 13, "NAMESPACE_ERR", 14, "INVALID_ACCESS_ERR", 15,
    "VALIDATION_ERR", 16, "TYPE_MISMATCH_ERR", 17, "SECURITY_ERR", 18, "NETWORK_ERR", 19,
    "ABORT_ERR", 20, "URL_MISMATCH_ERR", 21, "QUOTA_EXCEEDED_ERR", 22, "TIMEOUT_ERR", 23,
    "INVALID_NODE_TYPE_ERR", 24, "DATA_CLONE_ERR", 25];
  for (let i = 0; i < CONSTANTS.length; i += 2) {
    for (const target of [DOMException, DOMException.prototype]) {
      Object.defineProperty(target, CONSTANTS[i], { value: CONSTANTS[i + 1], enumerable: true });
    }
  }
  tag(DOMException, "DOMException");

  // ---------------------------------------------------------------------------------------
  // Events (https://dom.spec.whatwg.org/#events). State lives in WeakMaps, never on the
  // objects; dictionaries the engine passes are null-prototype (NO_INIT, `eventInit`).
  const eventState = new WeakMap();
  const eventExtra = new WeakMap(); // CustomEvent's detail, ErrorEvent's fields, …
  const NO_INIT = ObjectFreeze({ __proto__: null });
  const eventInit = (bubbles, cancelable) => ({ __proto__: null, bubbles, cancelable });
  const stateOf = (event) => {
    const s = WeakMapGet(eventState, event);
    if (s === undefined) throw new TypeError("'this' is not an Event");
    return s;
  };
  class Event {
    constructor(type, init = NO_INIT) {
      if (arguments.length === 0) throw new TypeError("Event constructor: 1 argument required");
      if (init === null || init === undefined) init = NO_INIT;
      WeakMapSet(eventState, this, {
        __proto__: null,
        type: StringCtor(type), bubbles: !!init.bubbles, cancelable: !!init.cancelable,
        composed: !!init.composed, target: null, currentTarget: null, canceled: false,
        stop: false, stopImmediate: false, phase: 0, trusted: false,
        timeStamp: host.now(),
      });
    }
    get type() { return stateOf(this).type; }
    get target() { return stateOf(this).target; }
    get srcElement() { return stateOf(this).target; }
    get currentTarget() { return stateOf(this).currentTarget; }
    get eventPhase() { return stateOf(this).phase; }
    get bubbles() { return stateOf(this).bubbles; }
    get cancelable() { return stateOf(this).cancelable; }
    get composed() { return stateOf(this).composed; }
    get defaultPrevented() { return stateOf(this).canceled; }
    get isTrusted() { return stateOf(this).trusted; }
    get timeStamp() { return stateOf(this).timeStamp; }
    get returnValue() { return !stateOf(this).canceled; }
    set returnValue(v) { if (!v) cancel(stateOf(this)); }
    get cancelBubble() { return stateOf(this).stop; }
    set cancelBubble(v) { if (v) stateOf(this).stop = true; }
    preventDefault() { cancel(stateOf(this)); }
    stopPropagation() { stateOf(this).stop = true; }
    stopImmediatePropagation() { const s = stateOf(this); s.stop = s.stopImmediate = true; }
    composedPath() { const s = stateOf(this); return s.currentTarget ? [s.currentTarget] : []; }
  }
  const cancel = (s) => { if (s.cancelable) s.canceled = true; };
  for (const [n, v] of [["NONE", 0], ["CAPTURING_PHASE", 1], ["AT_TARGET", 2], ["BUBBLING_PHASE", 3]]) {
    ObjectDefineProperty(Event, n, dataDescriptor(v, false, true, false));
    ObjectDefineProperty(Event.prototype, n, dataDescriptor(v, false, true, false));
  }
  tag(Event, "Event");
  const extraOf = (event) => WeakMapGet(eventExtra, event) ?? NO_INIT;
  class CustomEvent extends Event {
    constructor(type, init = NO_INIT) {
      super(type, init);
      WeakMapSet(eventExtra, this, { __proto__: null, detail: (init ?? NO_INIT).detail ?? null });
    }
    get detail() { return extraOf(this).detail; }
  }
  tag(CustomEvent, "CustomEvent");
  class ErrorEvent extends Event {
    constructor(type, init = NO_INIT) {
      super(type, init);
      init = init ?? NO_INIT;
      WeakMapSet(eventExtra, this, { __proto__: null, message: StringCtor(init.message ?? ""),
        filename: StringCtor(init.filename ?? ""), lineno: init.lineno >>> 0, colno: init.colno >>> 0,
        error: init.error, isErrorEvent: true });
    }
    get message() { return extraOf(this).message; }
    get filename() { return extraOf(this).filename; }
    get lineno() { return extraOf(this).lineno; }
    get colno() { return extraOf(this).colno; }
    get error() { return extraOf(this).error; }
  }
  tag(ErrorEvent, "ErrorEvent");
  class PromiseRejectionEvent extends Event {
    constructor(type, init) {
      super(type, init);
      WeakMapSet(eventExtra, this, { __proto__: null, promise: init.promise, reason: init.reason });
    }
    get promise() { return extraOf(this).promise; }
    get reason() { return extraOf(this).reason; }
  }
  tag(PromiseRejectionEvent, "PromiseRejectionEvent");
  // A trusted event made by the engine, with no page-visible dictionary reads.
  function trustedEvent(Kind, type, init) {
    const e = new Kind(type, init);
    stateOf(e).trusted = true;
    return e;
  }

  const listeners = new WeakMap(); // target -> internal list of {type, callback, capture, once, removed}
  const parentOf = new WeakMap(); // event path: node -> parent target
  function flattenOptions(options) {
    if (typeof options === "boolean") return { __proto__: null, capture: options, once: false };
    options = options || NO_INIT;
    return { __proto__: null, capture: !!options.capture, once: !!options.once };
  }
  function callListener(target, callback, event) {
    try {
      if (typeof callback === "function") ReflectApply(callback, target, [event]);
      else if (callback && typeof callback.handleEvent === "function") ReflectApply(callback.handleEvent, callback, [event]);
    } catch (e) {
      reportError(e);
    }
  }
  // add an event listener (https://dom.spec.whatwg.org/#add-an-event-listener)
  function addListener(target, type, callback, capture, once) {
    let l = WeakMapGet(listeners, target);
    if (!l) WeakMapSet(listeners, target, (l = list()));
    for (let i = 0; i < l.length; i++) {
      if (l[i].type === type && l[i].callback === callback && l[i].capture === capture) return;
    }
    listPush(l, { __proto__: null, type, callback, capture, once, removed: false });
  }
  function removeListener(target, type, callback, capture) {
    const l = WeakMapGet(listeners, target);
    if (!l) return;
    for (let i = 0; i < l.length; i++) {
      if (l[i].type === type && l[i].callback === callback && l[i].capture === capture) {
        l[i].removed = true;
        listRemoveAt(l, i);
        return;
      }
    }
  }
  // dispatch (https://dom.spec.whatwg.org/#concept-event-dispatch), for the engine's events
  // and for dispatchEvent().
  function dispatch(target, event) {
    const s = stateOf(event);
    if (s.phase !== 0) throw new DOMException("The event is already being dispatched.", "InvalidStateError");
    s.target = target;
    s.stop = s.stopImmediate = false;
    const path = list();
    for (let t = WeakMapGet(parentOf, target); t; t = WeakMapGet(parentOf, t)) listPush(path, t);
    const invoke = (current, phase) => {
      if (s.stop && current !== target) return;
      s.currentTarget = current;
      s.phase = phase;
      const ls = listCopy(WeakMapGet(listeners, current) ?? list());
      for (let i = 0; i < ls.length; i++) {
        const l = ls[i];
        if (l.removed || l.type !== s.type) continue;
        if (phase === 1 && !l.capture) continue;
        if (phase === 3 && l.capture) continue;
        if (l.once) removeListener(current, l.type, l.callback, l.capture);
        callListener(current, l.callback, event);
        if (s.stopImmediate) break;
      }
    };
    for (let i = path.length - 1; i >= 0; i--) invoke(path[i], 1);
    invoke(target, 2);
    if (s.bubbles) for (let i = 0; i < path.length; i++) invoke(path[i], 3);
    s.phase = 0;
    s.currentTarget = null;
    return !s.canceled;
  }
  class EventTarget {
    constructor() { WeakMapSet(listeners, this, list()); }
    // Called without a `this` (a bare `addEventListener(…)` in a page), they act on the
    // global, as WebIDL does for operations of the global object.
    addEventListener(type, callback, options) {
      if (callback === null || callback === undefined) return;
      const o = flattenOptions(options);
      addListener(this ?? global, StringCtor(type), callback, o.capture, o.once);
    }
    removeEventListener(type, callback, options) {
      removeListener(this ?? global, StringCtor(type), callback, flattenOptions(options).capture);
    }
    dispatchEvent(event) {
      if (!WeakMapHas(eventState, event)) throw new TypeError("dispatchEvent: argument is not an Event");
      return dispatch(this ?? global, event);
    }
  }
  tag(EventTarget, "EventTarget");
  // `on<event>` handler attributes, as listeners registered when first set.
  function defineHandler(proto, name) {
    const handlers = new WeakMap();
    ObjectDefineProperty(proto, "on" + name, {
      __proto__: null,
      configurable: true, enumerable: true,
      get() { const h = WeakMapGet(handlers, this); return h ? h.value : null; },
      set(value) {
        let h = WeakMapGet(handlers, this);
        if (!h) {
          const self = this;
          h = { __proto__: null, value: null, listener(event) {
            if (typeof h.value !== "function") return;
            const extra = extraOf(event);
            if (name === "error" && extra.isErrorEvent && self === global) {
              const r = ReflectApply(h.value, self, [extra.message, extra.filename, extra.lineno, extra.colno, extra.error]);
              if (r === true) cancel(stateOf(event));
            } else {
              const r = ReflectApply(h.value, self, [event]);
              if (r === false) cancel(stateOf(event));
            }
          } };
          WeakMapSet(handlers, this, h);
          addListener(this, name, h.listener, false, false);
        }
        h.value = typeof value === "function" ? value : null;
      },
    });
  }

  // ---------------------------------------------------------------------------------------
  // URL and URLSearchParams (https://url.spec.whatwg.org/), parsed by the `url` crate.
  function parseURL(input, base, setter, value) {
    const parts = JSONParse(host.parseURL(String(input), base === undefined ? undefined : String(base),
      setter, value === undefined ? undefined : String(value)));
    if (parts.error) throw new TypeError(parts.error);
    return parts;
  }
  const urlState = new WeakMap();
  class URLSearchParams {
    constructor(init = "") {
      this._list = [];
      this._url = null;
      if (typeof init === "object" && init !== null) {
        if (typeof init[Symbol.iterator] === "function") {
          for (const pair of init) {
            const p = [...pair];
            if (p.length !== 2) throw new TypeError("URLSearchParams: each pair needs two values");
            this._list.push([String(p[0]), String(p[1])]);
          }
        } else {
          for (const k of Object.keys(init)) this._list.push([k, String(init[k])]);
        }
      } else {
        this._parse(String(init));
      }
    }
    _parse(s) {
      if (s.startsWith("?")) s = s.slice(1);
      this._list = [];
      for (const part of s.split("&")) {
        if (!part) continue;
        const i = part.indexOf("=");
        const dec = (x) => { try { return decodeURIComponent(x.replace(/\+/g, " ")); } catch { return x; } };
        this._list.push(i < 0 ? [dec(part), ""] : [dec(part.slice(0, i)), dec(part.slice(i + 1))]);
      }
    }
    _update() { if (this._url) { const q = this.toString(); this._url._set("query", q); } }
    get size() { return this._list.length; }
    append(k, v) { this._list.push([String(k), String(v)]); this._update(); }
    delete(k, v) { this._list = this._list.filter(([a, b]) => a !== String(k) || (v !== undefined && b !== String(v))); this._update(); }
    get(k) { const e = this._list.find(([a]) => a === String(k)); return e ? e[1] : null; }
    getAll(k) { return this._list.filter(([a]) => a === String(k)).map(([, b]) => b); }
    has(k, v) { return this._list.some(([a, b]) => a === String(k) && (v === undefined || b === String(v))); }
    set(k, v) {
      k = String(k); v = String(v);
      const i = this._list.findIndex(([a]) => a === k);
      if (i < 0) this._list.push([k, v]);
      else { this._list[i][1] = v; this._list = this._list.filter(([a], j) => a !== k || j === i); }
      this._update();
    }
    sort() { this._list.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)); this._update(); }
    forEach(cb, thisArg) { for (const [k, v] of this._list) cb.call(thisArg, v, k, this); }
    *entries() { for (const e of this._list) yield [e[0], e[1]]; }
    *keys() { for (const e of this._list) yield e[0]; }
    *values() { for (const e of this._list) yield e[1]; }
    [Symbol.iterator]() { return this.entries(); }
    toString() {
      const enc = (s) => encodeURIComponent(s).replace(/%20/g, "+").replace(/[!'()~]/g, (c) => "%" + c.charCodeAt(0).toString(16).toUpperCase());
      return this._list.map(([k, v]) => enc(k) + "=" + enc(v)).join("&");
    }
  }
  tag(URLSearchParams, "URLSearchParams");
  class URL {
    constructor(url, base) {
      if (arguments.length === 0) throw new TypeError("URL constructor: 1 argument required");
      urlState.set(this, { parts: parseURL(url, base), params: null });
    }
    static canParse(url, base) { try { parseURL(url, base); return true; } catch { return false; } }
    static parse(url, base) { try { return new URL(url, base); } catch { return null; } }
    _set(what, value) {
      const s = urlState.get(this);
      s.parts = parseURL(s.parts.href, undefined, what, value);
      if (what !== "query" && s.params) s.params._parse(s.parts.search);
    }
    get searchParams() {
      const s = urlState.get(this);
      if (!s.params) { s.params = new URLSearchParams(s.parts.search); s.params._url = this; }
      return s.params;
    }
    toString() { return urlState.get(this).parts.href; }
    toJSON() { return urlState.get(this).parts.href; }
  }
  for (const [prop, setter] of [["href", "href"], ["protocol", "protocol"], ["username", "username"],
    ["password", "password"], ["host", "host"], ["hostname", "hostname"], ["port", "port"],
    ["pathname", "pathname"], ["search", "search"], ["hash", "hash"], ["origin", null]]) {
    defineGetter(URL.prototype, prop, function () { return urlState.get(this).parts[prop]; },
      setter ? function (v) { this._set(setter, v); } : undefined);
  }
  tag(URL, "URL");

  // ---------------------------------------------------------------------------------------
  // The document (https://dom.spec.whatwg.org/#nodes), built from html5ever's tree.
  class Node extends EventTarget {
    constructor(key) { if (key !== ILLEGAL) throw new TypeError("Illegal constructor"); super(); this._children = []; this._parent = null; }
    get parentNode() { return this._parent; }
    get parentElement() { return this._parent instanceof Element ? this._parent : null; }
    get childNodes() { return this._children.slice(); }
    get firstChild() { return this._children[0] || null; }
    get lastChild() { return this._children[this._children.length - 1] || null; }
    get nextSibling() { const p = this._parent; return p ? p._children[p._children.indexOf(this) + 1] || null : null; }
    get previousSibling() { const p = this._parent; return p ? p._children[p._children.indexOf(this) - 1] || null : null; }
    get ownerDocument() { return this === document ? null : document; }
    hasChildNodes() { return this._children.length > 0; }
    get textContent() { return this._children.map((c) => c.textContent).join(""); }
    set textContent(v) { const wasConnected = document.contains(this); for (const c of this._children) { c._parent = null; parentOf.delete(c); if (wasConnected) disconnected(c); } this._children = []; if (v !== "" && v != null) this.appendChild(document.createTextNode(String(v))); }
    appendChild(node) { return this.insertBefore(node, null); }
    insertBefore(node, ref) {
      if (!(node instanceof Node)) throw new TypeError("insertBefore: argument is not a Node");
      if (node._parent) node._parent.removeChild(node);
      const i = ref ? this._children.indexOf(ref) : -1;
      if (ref && i < 0) throw new DOMException("The reference node is not a child of this node.", "NotFoundError");
      if (i < 0) this._children.push(node); else this._children.splice(i, 0, node);
      node._parent = this;
      parentOf.set(node, this);
      if (typeof connected === "function" && documentReady) connected(node);
      return node;
    }
    removeChild(node) {
      const i = this._children.indexOf(node);
      if (i < 0) throw new DOMException("The node to be removed is not a child of this node.", "NotFoundError");
      const wasConnected = document.contains(this);
      this._children.splice(i, 1);
      node._parent = null;
      parentOf.delete(node);
      if (wasConnected) disconnected(node);
      return node;
    }
    remove() { if (this._parent) this._parent.removeChild(this); }
    contains(other) { for (let n = other; n; n = n._parent) if (n === this) return true; return false; }
    *_descendants() { for (const c of this._children) { if (c instanceof Element) yield c; yield* c._descendants(); } }
    getElementsByTagName(name) { name = String(name).toLowerCase(); return [...this._descendants()].filter((e) => name === "*" || e.localName === name); }
    getElementsByClassName(names) { const want = String(names).split(/\s+/).filter(Boolean); return [...this._descendants()].filter((e) => want.every((c) => e.classList.includes(c))); }
    querySelectorAll(selectors) { const m = compileSelector(String(selectors)); return [...this._descendants()].filter((e) => m(e)); }
    querySelector(selectors) { const m = compileSelector(String(selectors)); for (const e of this._descendants()) if (m(e)) return e; return null; }
  }
  for (const [n, v] of [["ELEMENT_NODE", 1], ["TEXT_NODE", 3], ["COMMENT_NODE", 8], ["DOCUMENT_NODE", 9]]) {
    Object.defineProperty(Node, n, { value: v, enumerable: true });
    Object.defineProperty(Node.prototype, n, { value: v, enumerable: true });
  }
  tag(Node, "Node");
  class Text extends Node {
    constructor(data = "") { super(ILLEGAL); this.data = String(data); }
    get nodeType() { return 3; }
    get nodeName() { return "#text"; }
    get nodeValue() { return this.data; }
    get textContent() { return this.data; }
    set textContent(v) { this.data = String(v); }
  }
  tag(Text, "Text");
  class Element extends Node {
    constructor(key) { super(key); this._attrs = []; this.localName = ""; }
    get nodeType() { return 1; }
    get nodeName() { return this.tagName; }
    get tagName() { return this.localName.toUpperCase(); }
    get id() { return this.getAttribute("id") || ""; }
    set id(v) { this.setAttribute("id", v); }
    get className() { return this.getAttribute("class") || ""; }
    set className(v) { this.setAttribute("class", v); }
    get classList() { return this.className.split(/\s+/).filter(Boolean); }
    get children() { return this._children.filter((c) => c instanceof Element); }
    get attributes() { return this._attrs.map(([name, value]) => ({ name, value })); }
    getAttribute(n) { const a = this._attrs.find(([k]) => k === String(n).toLowerCase()); return a ? a[1] : null; }
    hasAttribute(n) { return this.getAttribute(n) !== null; }
    setAttribute(n, v) { n = String(n).toLowerCase(); const a = this._attrs.find(([k]) => k === n); if (a) a[1] = String(v); else this._attrs.push([n, String(v)]); }
    removeAttribute(n) { this._attrs = this._attrs.filter(([k]) => k !== String(n).toLowerCase()); }
    matches(selectors) { return compileSelector(String(selectors))(this); }
    closest(selectors) { const m = compileSelector(String(selectors)); for (let e = this; e instanceof Element; e = e._parent) if (m(e)) return e; return null; }
  }
  tag(Element, "Element");
  class HTMLElement extends Element {}
  tag(HTMLElement, "HTMLElement");
  // The GlobalEventHandlers the engine fires at elements (script and iframe loads, clicks).
  for (const name of ["load", "error", "click"]) defineHandler(HTMLElement.prototype, name);
  class HTMLScriptElement extends HTMLElement {
    get src() { const s = this.getAttribute("src"); if (s === null) return ""; try { return new URL(s, document.baseURI).href; } catch { return s; } }
    set src(v) { this.setAttribute("src", v); }
    get type() { return this.getAttribute("type") || ""; }
    get async() { return this.hasAttribute("async"); }
    get defer() { return this.hasAttribute("defer"); }
    get text() { return this.textContent; }
  }
  tag(HTMLScriptElement, "HTMLScriptElement");
  // iframes (https://html.spec.whatwg.org/#the-iframe-element): an <iframe src> in the
  // document gets a child browsing context from the engine (host.loadFrame); its window
  // arrives through hooks.attachFrame and its load through hooks.frameLoaded.
  const frameState = new WeakMap();
  const childFrames = [];
  class HTMLIFrameElement extends HTMLElement {
    get src() { const s = this.getAttribute("src"); if (s === null) return ""; try { return new URL(s, document.baseURI).href; } catch { return s; } }
    set src(v) { this.setAttribute("src", v); }
    setAttribute(n, v) { super.setAttribute(n, v); if (String(n).toLowerCase() === "src") loadFrame(this); }
    get contentWindow() { const f = frameState.get(this); return f ? f.window : null; }
    get contentDocument() { const w = this.contentWindow; return w ? w.document : null; }
  }
  tag(HTMLIFrameElement, "HTMLIFrameElement");
  function loadFrame(el) {
    if (!(el instanceof HTMLIFrameElement) || frameState.has(el) || !document.contains(el)) return;
    const src = el.getAttribute("src");
    if (src === null || src === "") return;
    let url;
    try { url = new URL(src, document.baseURI).href; } catch { return; }
    const index = childFrames.length;
    childFrames.push(el);
    frameState.set(el, { index, window: null });
    // A sandbox without allow-same-origin gives the frame's document an opaque origin.
    const sandbox = el.getAttribute("sandbox");
    const opaque = sandbox !== null && !sandbox.toLowerCase().split(/\s+/).includes("allow-same-origin");
    host.loadFrame(index, url, opaque ? 1 : 0);
  }
  // Removing an iframe from the document destroys its child navigable
  // (https://html.spec.whatwg.org/#the-iframe-element:html-element-removing-steps): its
  // contentWindow is null from then on, and the engine ends its document (scripts, timers,
  // profilers) and lets its realm go (host.discardFrame). Inserted again, it loads anew.
  function disconnected(node) {
    const each = (e) => {
      if (!(e instanceof HTMLIFrameElement)) return;
      const f = frameState.get(e);
      if (!f) return;
      frameState.delete(e);
      childFrames[f.index] = null;
      if (f.windowIndex !== undefined) windowsByIndex.delete(f.windowIndex);
      delete global[String(f.index)];
      host.discardFrame(f.index);
    };
    each(node);
    if (node._descendants) for (const e of node._descendants()) each(e);
  }
  // Connecting a subtree starts the loads of its iframes and prepares its scripts.
  function connected(node) {
    if (!document.contains(node)) return;
    const each = (e) => {
      if (e instanceof HTMLIFrameElement) loadFrame(e);
      else if (e instanceof HTMLScriptElement) prepareScript(e);
    };
    each(node);
    if (node._descendants) for (const e of node._descendants()) each(e);
  }
  // prepare the script element (https://html.spec.whatwg.org/#prepare-the-script-element)
  // for one inserted by script: the parser's own are run by the engine. An external script
  // is fetched and runs when it arrives (it is async); an inline classic script runs now,
  // an inline module as a task.
  const startedScripts = new WeakSet();
  function prepareScript(el) {
    if (startedScripts.has(el) || scriptElements.includes(el)) return;
    const type = (el.getAttribute("type") ?? "").trim().toLowerCase();
    const classic = type === "" || /^(text|application)\/(x-)?(java|ecma)script$/.test(type) || type === "text/jscript";
    const module = type === "module";
    if (!classic && !module) return; // a data block
    const src = el.getAttribute("src");
    if (src === null && el.textContent === "") return;
    startedScripts.add(el);
    const index = scriptElements.length;
    scriptElements[index] = el;
    if (src !== null) {
      let url;
      try { url = new URL(src, document.baseURI).href; } catch { queueTask(() => fire(el, "error")); return; }
      host.loadScript(index, url, module ? 1 : 0, el.getAttribute("crossorigin"));
    } else if (module) {
      host.loadScript(index, init.url, 1, null, el.textContent);
    } else {
      const previous = currentScript;
      currentScript = el;
      try { host.runScript(el.textContent, init.url); } catch (e) { reportError(e); } finally { currentScript = previous; }
    }
  }
  const ELEMENTS = { script: HTMLScriptElement, iframe: HTMLIFrameElement };

  // Selectors: compound selectors (type, #id, .class, [attr], [attr=value], *), the
  // descendant and child combinators, and selector lists.
  function compileSelector(text) {
    const alternatives = text.split(",").map((s) => s.trim());
    if (alternatives.some((s) => !s)) throw new DOMException(`'${text}' is not a valid selector`, "SyntaxError");
    const compiled = alternatives.map((alt) => {
      const tokens = alt.replace(/\s*>\s*/g, " > ").split(/\s+/);
      const steps = [];
      let combinator = " ";
      for (const t of tokens) {
        if (t === ">") { combinator = ">"; continue; }
        steps.push({ combinator, test: compileCompound(t, text) });
        combinator = " ";
      }
      return steps;
    });
    const matchSteps = (el, steps, i) => {
      if (!steps[i].test(el)) return false;
      if (i === 0) return true;
      if (steps[i].combinator === ">") return el._parent instanceof Element && matchSteps(el._parent, steps, i - 1);
      for (let p = el._parent; p instanceof Element; p = p._parent) if (matchSteps(p, steps, i - 1)) return true;
      return false;
    };
    return (el) => compiled.some((steps) => matchSteps(el, steps, steps.length - 1));
  }
  function compileCompound(t, whole) {
    const re = /^(\*|[a-zA-Z][\w-]*)?((?:#[\w-]+|\.[\w-]+|\[[\w-]+(?:=(?:"[^"]*"|'[^']*'|[^\]]*))?\])*)$/;
    const m = re.exec(t);
    if (!m) throw new DOMException(`'${whole}' is not a valid selector`, "SyntaxError");
    const tests = [];
    if (m[1] && m[1] !== "*") { const n = m[1].toLowerCase(); tests.push((e) => e.localName === n); }
    for (const part of m[2].match(/#[\w-]+|\.[\w-]+|\[[^\]]*\]/g) || []) {
      if (part[0] === "#") tests.push((e) => e.id === part.slice(1));
      else if (part[0] === ".") tests.push((e) => e.classList.includes(part.slice(1)));
      else {
        const [, name, value] = /^\[([\w-]+)(?:=(.*))?\]$/.exec(part);
        const v = value === undefined ? undefined : value.replace(/^(["'])(.*)\1$/, "$2");
        tests.push((e) => (v === undefined ? e.hasAttribute(name) : e.getAttribute(name) === v));
      }
    }
    return (e) => tests.every((f) => f(e));
  }

  let readyState = "loading";
  let currentScript = null;
  const scriptElements = [];
  class Document extends Node {
    get nodeType() { return 9; }
    get nodeName() { return "#document"; }
    get documentElement() { return this.children[0] || null; }
    get children() { return this._children.filter((c) => c instanceof Element); }
    get head() { return this.querySelector("head"); }
    get body() { return this.querySelector("body"); }
    get title() { const t = this.querySelector("title"); return t ? t.textContent.replace(/\s+/g, " ").trim() : ""; }
    set title(v) { let t = this.querySelector("title"); if (!t) { t = this.createElement("title"); (this.head || this.documentElement).appendChild(t); } t.textContent = v; }
    get readyState() { return readyState; }
    get URL() { return init.url; }
    get documentURI() { return init.url; }
    get baseURI() { return init.url; }
    get location() { return location; }
    get defaultView() { return global; }
    get currentScript() { return currentScript; }
    get compatMode() { return "CSS1Compat"; }
    get characterSet() { return "UTF-8"; }
    get visibilityState() { return "visible"; }
    get hidden() { return false; }
    getElementById(id) { for (const e of this._descendants()) if (e.id === String(id)) return e; return null; }
    createElement(name) { return makeElement(String(name).toLowerCase(), []); }
    createTextNode(data) { return new Text(data); }
    createEvent(kind) { return new Event(""); }
  }
  tag(Document, "Document");
  defineHandler(Document.prototype, "readystatechange");
  function makeElement(name, attrs) {
    const Cls = ELEMENTS[name] || HTMLElement;
    const e = new Cls(ILLEGAL);
    e.localName = name;
    e._attrs = attrs.map(([k, v]) => [k, v]);
    return e;
  }
  const document = new Document(ILLEGAL);
  // The parsed nodes in document order, each after its parent (init.nodes: [parent, name,
  // attributes, script index] or [parent, null, text]; parent 0 is the document): built
  // in one loop, whatever the depth.
  {
    const made = [document];
    for (const [parent, name, data, script] of init.nodes) {
      const node = name === null ? new Text(data) : makeElement(name, data);
      if (script !== undefined) scriptElements[script] = node;
      made[parent].appendChild(node);
      made.push(node);
    }
  }
  documentReady = true;

  // ---------------------------------------------------------------------------------------
  // The Window (https://html.spec.whatwg.org/#the-window-object)
  class Location {
    constructor(key) { if (key !== ILLEGAL) throw new TypeError("Illegal constructor"); }
    toString() { return init.url; }
    assign() { throw new DOMException("navigation is not supported by jsprof", "NotSupportedError"); }
    replace() { this.assign(); }
    reload() { this.assign(); }
  }
  const locationParts = parseURL(init.url);
  for (const prop of ["href", "protocol", "host", "hostname", "port", "pathname", "search", "hash", "origin"]) {
    defineGetter(Location.prototype, prop, () => locationParts[prop]);
  }
  tag(Location, "Location");
  const location = new Location(ILLEGAL);

  // A worker's global is a DedicatedWorkerGlobalScope (init.worker), a page's a Window.
  class Window extends EventTarget {}
  tag(Window, init.worker ? "DedicatedWorkerGlobalScope" : "Window");
  for (const name of ["load", "error", "unhandledrejection", "rejectionhandled", "message", "DOMContentLoaded"]) {
    if (name !== "DOMContentLoaded") defineHandler(Window.prototype, name);
  }
  Object.setPrototypeOf(global, Window.prototype);
  listeners.set(global, []);
  parentOf.set(document, global);

  // console (https://console.spec.whatwg.org/): strings as they are, other values inspected.
  function inspect(v, depth = 0) {
    if (typeof v === "string") return depth ? JSON.stringify(v) : v;
    if (typeof v === "function") return `function ${v.name || "(anonymous)"}()`;
    if (typeof v === "symbol" || typeof v === "bigint") return v.toString() + (typeof v === "bigint" ? "n" : "");
    if (v === null || typeof v !== "object") return String(v);
    if (v instanceof Error || v instanceof DOMException) return `${v.name}: ${v.message}`;
    if (depth > 2) return Array.isArray(v) ? "[…]" : "{…}";
    if (Array.isArray(v)) return "[" + v.map((x) => inspect(x, depth + 1)).join(", ") + "]";
    if (v instanceof URL) return `URL ${v.href}`;
    if (v instanceof Node) return `<${v.nodeName.toLowerCase()}>`;
    const keys = Object.keys(v);
    const name = v.constructor && v.constructor !== Object && v.constructor.name ? v.constructor.name + " " : "";
    return name + "{" + keys.map((k) => `${k}: ${inspect(v[k], depth + 1)}`).join(", ") + "}";
  }
  function format(args) {
    args = [...args];
    if (typeof args[0] === "string" && /%[sdifoOc%]/.test(args[0])) {
      let i = 1;
      const first = args[0].replace(/%([sdifoOc%])/g, (m, c) => {
        if (c === "%") return "%";
        if (i >= args.length) return m;
        const a = args[i++];
        switch (c) {
          case "s": return typeof a === "string" ? a : inspect(a, 1);
          case "d": case "i": return String(parseInt(a, 10));
          case "f": return String(Number(a));
          case "c": return "";
          default: return inspect(a, 1);
        }
      });
      args = [first, ...args.slice(i)];
    }
    return args.map((a) => inspect(a)).join(" ");
  }
  const counts = new Map();
  const timers = new Map();
  const console = {
    log(...a) { host.print(0, format(a)); },
    info(...a) { host.print(0, format(a)); },
    debug(...a) { host.print(0, format(a)); },
    warn(...a) { host.print(0, format(a)); },
    error(...a) { host.print(0, format(a)); },
    trace(...a) { host.print(0, format(["Trace:", ...a])); },
    assert(cond, ...a) { if (!cond) host.print(0, format(["Assertion failed:", ...a])); },
    count(label = "default") { const n = (counts.get(label) || 0) + 1; counts.set(label, n); host.print(0, `${label}: ${n}`); },
    countReset(label = "default") { counts.delete(label); },
    time(label = "default") { timers.set(label, host.now()); },
    timeEnd(label = "default") { const t = timers.get(label); if (t !== undefined) { timers.delete(label); host.print(0, `${label}: ${host.now() - t}ms`); } },
    timeLog(label = "default", ...a) { const t = timers.get(label); if (t !== undefined) host.print(0, format([`${label}: ${host.now() - t}ms`, ...a])); },
    group(...a) { if (a.length) host.print(0, format(a)); },
    groupEnd() {},
    table(d) { host.print(0, inspect(d)); },
    dir(d) { host.print(0, inspect(d)); },
  };

  // Timers (https://html.spec.whatwg.org/#timers): the event loop in Rust fires them.
  const timerTable = new Map();
  let nextTimer = 1;
  function addTimer(handler, timeout, args, repeat) {
    const id = nextTimer++;
    timeout = NumberCtor(timeout) || 0;
    MapSet(timerTable, id, { __proto__: null, handler, args, repeat });
    host.setTimer(id, timeout < 0 ? 0 : timeout, repeat ? 1 : 0);
    return id;
  }
  function clearTimer(id) { id = NumberCtor(id) >>> 0; if (MapDelete(timerTable, id)) host.clearTimer(id); }

  // performance (https://w3c.github.io/hr-time/)
  const timeOrigin = host.timeOrigin();
  class Performance extends EventTarget {
    now() { return host.now(); }
    get timeOrigin() { return timeOrigin; }
    toJSON() { return { timeOrigin }; }
  }
  tag(Performance, "Performance");
  const performance = new Performance();

  function reportError(e) {
    const isError = e instanceof Error || e instanceof DOMException;
    const message = isError ? `${e.name}: ${e.message}` : `uncaught exception: ${inspect(e, 1)}`;
    report(e, message, isError ? e.fileName || "" : "", isError ? e.lineNumber || 0 : 0, isError ? e.columnNumber || 0 : 0);
  }
  // https://html.spec.whatwg.org/#report-an-exception
  function report(error, message, filename, line, column) {
    const event = trustedEvent(ErrorEvent, "error", { __proto__: null, cancelable: true, message, filename, lineno: line, colno: column, error });
    const notHandled = dispatch(global, event);
    // A worker's unhandled exceptions go to its Worker object in the creator's realm.
    if (notHandled && init.worker) host.workerError(String(message), String(filename), line, column);
    else if (notHandled) host.print(1, `Uncaught ${message}` + (filename ? ` (${filename}:${line}:${column})` : ""));
  }

  // ---------------------------------------------------------------------------------------
  // Structured clone (https://html.spec.whatwg.org/#safe-passing-of-structured-data), in the
  // window's own realm: primitives, plain objects and arrays (cycles kept), Date, RegExp, Map,
  // Set, ArrayBuffer and its views, Error objects, Blobs; transferred MessagePorts move. Any
  // other object (a function, a symbol, a DOM object) is a DataCloneError.
  const transferredPorts = new WeakSet();
  function cloneValue(value, memory, transfer) {
    if (value === null || (typeof value !== "object" && typeof value !== "function" && typeof value !== "symbol")) return value;
    if (typeof value === "symbol" || typeof value === "function") throw uncloneable(value);
    if (memory.has(value)) return memory.get(value);
    let out;
    const tagOf = Object.prototype.toString.call(value);
    if (isPort(value)) {
      if (!transfer.includes(value)) throw new DOMException("A MessagePort must be transferred, not cloned.", "DataCloneError");
      out = value;
    } else if (value instanceof Blob) {
      out = value;
    } else if (tagOf === "[object Date]") {
      out = new Date(value.getTime());
    } else if (tagOf === "[object RegExp]") {
      out = new RegExp(value.source, value.flags);
    } else if (tagOf === "[object ArrayBuffer]") {
      out = value.slice(0);
    } else if (ArrayBuffer.isView(value)) {
      out = new value.constructor(value);
    } else if (tagOf === "[object Map]") {
      out = new Map();
      memory.set(value, out);
      for (const [k, v] of value) out.set(cloneValue(k, memory, transfer), cloneValue(v, memory, transfer));
      return out;
    } else if (tagOf === "[object Set]") {
      out = new Set();
      memory.set(value, out);
      for (const v of value) out.add(cloneValue(v, memory, transfer));
      return out;
    } else if (value instanceof Error) {
      out = new (global[value.name] && global[value.name].prototype instanceof Error ? global[value.name] : Error)(value.message);
    } else if (Array.isArray(value)) {
      out = new Array(value.length);
      memory.set(value, out);
      for (const k of Object.keys(value)) out[k] = cloneValue(value[k], memory, transfer);
      return out;
    } else if (tagOf === "[object Object]") {
      out = {};
      memory.set(value, out);
      for (const k of Object.keys(value)) out[k] = cloneValue(value[k], memory, transfer);
      return out;
    } else {
      throw new DOMException(`${tagOf.slice(8, -1)} object could not be cloned.`, "DataCloneError");
    }
    memory.set(value, out);
    return out;
  }
  const uncloneable = (value) =>
    new DOMException(`${typeof value === "symbol" ? "A symbol" : "A function"} could not be cloned.`, "DataCloneError");
  // The transfer list's checks (https://html.spec.whatwg.org/#structuredserializewithtransfer).
  function checkTransfer(transfer) {
    for (const t of transfer) {
      if (!isPort(t)) throw new DOMException("Only MessagePorts can be transferred.", "DataCloneError");
      if (transferredPorts.has(t) || portState.get(t).closed) throw new DOMException("A MessagePort was transferred twice or is closed.", "DataCloneError");
    }
  }
  function structuredCloneWithTransfer(value, transfer = []) {
    transfer = Array.from(transfer);
    checkTransfer(transfer);
    const data = cloneValue(value, new Map(), transfer);
    for (const t of transfer) transferredPorts.add(t);
    return data;
  }

  // MessageEvent, MessageChannel and MessagePort (https://html.spec.whatwg.org/#message-ports).
  class MessageEvent extends Event {
    constructor(type, init = NO_INIT) {
      super(type, init);
      init = init ?? NO_INIT;
      const ports = init.ports ?? list();
      const frozen = [];
      for (let i = 0; i < ports.length; i++) ObjectDefineProperty(frozen, i, dataDescriptor(ports[i], false, true, false));
      WeakMapSet(eventExtra, this, { __proto__: null, data: init.data ?? null, origin: StringCtor(init.origin ?? ""),
        lastEventId: StringCtor(init.lastEventId ?? ""), source: init.source ?? null, ports: ObjectFreeze(frozen) });
    }
    get data() { return extraOf(this).data; }
    get origin() { return extraOf(this).origin; }
    get lastEventId() { return extraOf(this).lastEventId; }
    get source() { return extraOf(this).source; }
    get ports() { return extraOf(this).ports; }
  }
  tag(MessageEvent, "MessageEvent");
  // A port's state sits on the port under a registered symbol, shared by every realm: a
  // port can be transferred to (and used from) another window's realm.
  const PORT = Symbol.for("jsprof.MessagePort");
  const isPort = (v) => v !== null && typeof v === "object" && PORT in v;
  const portState = { get: (port) => port[PORT], set: (port, state) => Object.defineProperty(port, PORT, { value: state }) };
  // Runs `f` as a task (the posted message task source).
  const queueTask = (f) => addTimer(f, 0, [], false);
  class MessagePort extends EventTarget {
    constructor(key) {
      if (key !== ILLEGAL) throw new TypeError("Illegal constructor");
      super();
      portState.set(this, { other: null, queue: [], started: false, closed: false, onmessage: null, deliver });
    }
    postMessage(message, transfer = []) {
      if (!Array.isArray(transfer) && transfer && typeof transfer === "object") transfer = transfer.transfer ?? [];
      const s = portState.get(this);
      if (transfer.includes(this)) throw new DOMException("A port cannot transfer itself.", "DataCloneError");
      if (s.remote) {
        if (!s.closed) host.portSend(s.remote.pid, s.remote.end, serialize(message, transfer));
        return;
      }
      const data = structuredCloneWithTransfer(message, transfer);
      const target = s.other;
      if (!target || s.closed) return;
      portState.get(target).queue.push({ data, ports: Array.from(transfer) });
      portState.get(target).deliver(target);
    }
    start() {
      const s = portState.get(this);
      if (s.started) return;
      s.started = true;
      deliver(this);
    }
    close() {
      const s = portState.get(this);
      s.closed = true;
      if (s.other) portState.get(s.other).other = null;
      s.other = null;
    }
    get onmessage() { return portState.get(this).onmessage; }
    set onmessage(f) {
      const s = portState.get(this);
      if (s.onmessage) this.removeEventListener("message", s.onmessage);
      s.onmessage = typeof f === "function" ? f : null;
      if (s.onmessage) this.addEventListener("message", s.onmessage);
      this.start();
    }
  }
  tag(MessagePort, "MessagePort");
  function deliver(port) {
    const s = portState.get(port);
    if (!s.started) return;
    while (s.queue.length) {
      const { data, ports } = s.queue.shift();
      queueTask(() => {
        dispatch(port, trustedEvent(MessageEvent, "message", { __proto__: null, data, ports }));
      });
    }
  }
  class MessageChannel {
    constructor() {
      const port1 = new MessagePort(ILLEGAL), port2 = new MessagePort(ILLEGAL);
      portState.get(port1).other = port2;
      portState.get(port2).other = port1;
      defineValue(this, "_ports", [port1, port2]);
    }
    get port1() { return this._ports[0]; }
    get port2() { return this._ports[1]; }
  }
  tag(MessageChannel, "MessageChannel");
  // Windows by the engine's index: this one, its parent, its iframes', theirs. A window of
  // the same origin is the real one (its global, through a transparent wrapper); one of
  // another origin is a cross-origin window object of this realm, which offers only the
  // HTML standard's cross-origin properties (https://html.spec.whatwg.org/#crossoriginproperties-(-o-)).
  // The engine never hands this realm another origin's objects.
  const windowsByIndex = new Map([[init.windowIndex, global]]);
  function windowProxy(index) {
    if (index < 0) return null;
    let w = windowsByIndex.get(index);
    if (w === undefined) {
      w = host.windowFor(index) ?? crossOriginWindow(index);
      windowsByIndex.set(index, w);
    }
    return w;
  }
  const CROSS_ORIGIN_PROPERTIES = ["window", "self", "location", "close", "closed", "focus", "blur",
    "frames", "length", "top", "opener", "parent", "postMessage"];
  const CROSS_ORIGIN_FALLBACK = ["then", Symbol.toStringTag, Symbol.hasInstance, Symbol.isConcatSpreadable];
  const securityError = (what) => new DOMException(
    `Blocked a frame with origin "${location.origin}" from accessing ${typeof what === "symbol" ? "a symbol" : `'${what}'`} of a cross-origin frame.`, "SecurityError");
  const isArrayIndex = (key) => typeof key === "string" && /^(0|[1-9][0-9]*)$/.test(key) && Number(key) < 2 ** 32 - 1;
  // A cross-origin object: a Proxy over an empty object whose every trap either answers from
  // `value` (an allowed property) or throws a SecurityError (CrossOriginGet/Set/
  // GetOwnProperty/OwnPropertyKeys of the HTML standard).
  function crossOriginObject(allowedKeys, value, set) {
    const allowed = (key) => allowedKeys().includes(key);
    const fallback = (key) => CROSS_ORIGIN_FALLBACK.includes(key);
    return new Proxy(Object.create(null), {
      get(t, key) {
        if (allowed(key)) return value(key);
        if (fallback(key)) return undefined;
        throw securityError(key);
      },
      set(t, key, v) { return set(key, v); },
      has(t, key) {
        if (allowed(key) || fallback(key)) return true;
        throw securityError(key);
      },
      getOwnPropertyDescriptor(t, key) {
        if (allowed(key)) return { value: value(key), writable: false, enumerable: false, configurable: true };
        if (fallback(key)) return { value: undefined, writable: false, enumerable: false, configurable: true };
        throw securityError(key);
      },
      ownKeys() { return [...allowedKeys(), ...CROSS_ORIGIN_FALLBACK]; },
      defineProperty(t, key) { throw securityError(key); },
      deleteProperty(t, key) { throw securityError(key); },
      getPrototypeOf() { return null; },
      setPrototypeOf(t, proto) { return proto === null; },
      isExtensible() { return true; },
      preventExtensions() { return false; },
    });
  }
  function crossOriginWindow(index) {
    const functions = new Map();
    const fn = (name, f) => {
      if (!functions.has(name)) functions.set(name, f);
      return functions.get(name);
    };
    let location = null;
    const childCount = () => host.frameTree(index, -3);
    const keys = () => {
      const out = [];
      for (let i = 0, n = childCount(); i < n; i++) out.push(String(i));
      return out.concat(CROSS_ORIGIN_PROPERTIES);
    };
    const proxy = crossOriginObject(keys, (key) => {
      switch (key) {
        case "window": case "self": case "frames": return proxy;
        case "parent": return windowProxy(host.frameTree(index, -1)) ?? proxy;
        case "top": return windowProxy(host.frameTree(index, -2));
        case "opener": return null;
        case "length": return childCount();
        case "closed": return false;
        case "location": return location ??= crossOriginLocation();
        case "postMessage": return fn(key, function postMessage(message, options = "/", transfer = []) {
          postTo(index, init.windowIndex, message, options, transfer);
        });
        case "close": return fn(key, function close() {});
        case "focus": return fn(key, function focus() {});
        case "blur": return fn(key, function blur() {});
      }
      return windowProxy(host.frameTree(index, Number(key))) ?? undefined;
    }, (key) => {
      if (key === "location") throw new DOMException("navigation is not supported by jsprof", "NotSupportedError");
      throw securityError(key);
    });
    return proxy;
  }
  function crossOriginLocation() {
    const navigate = () => { throw new DOMException("navigation is not supported by jsprof", "NotSupportedError"); };
    const replace = function replace() { navigate(); };
    // href can only be set across origins (CrossOriginGet: no getter is a SecurityError).
    return crossOriginObject(() => ["href", "replace"], (key) => {
      if (key === "href") throw securityError(key);
      return replace;
    }, (key) => {
      if (key === "href") navigate();
      throw securityError(key);
    });
  }
  // window.postMessage (https://html.spec.whatwg.org/#window-post-message-steps) from window
  // `from` to window `index`: the message is serialised now and delivered as a task of the
  // target, whose origin the engine checks against targetOrigin.
  function postTo(index, from, message, options, transfer) {
    let targetOrigin = options;
    if (options && typeof options === "object") { targetOrigin = options.targetOrigin ?? "/"; transfer = options.transfer ?? []; }
    targetOrigin = String(targetOrigin);
    if (targetOrigin !== "*" && targetOrigin !== "/") {
      try { targetOrigin = new URL(targetOrigin).href; } catch { throw new DOMException(`Invalid target origin '${targetOrigin}'.`, "SyntaxError"); }
    }
    host.windowPost(index, serialize(message, Array.from(transfer)), targetOrigin, from);
  }
  // postMessage of this window, called by this window's script or by a same-origin one's:
  // the sender is the window whose script called it (the incumbent).
  function postMessage(message, options = "/", transfer = []) {
    const caller = host.callerWindow();
    postTo(init.windowIndex, caller >= 0 ? caller : init.windowIndex, message, options, transfer);
  }
  function deliverWindowMessage(data, sourceIndex, origin) {
    let value;
    try { value = deserialize(data); } catch { fire(global, "messageerror"); return; }
    dispatch(global, trustedEvent(MessageEvent, "message",
      { __proto__: null, data: value.data, ports: value.ports, origin, source: windowProxy(sourceIndex) }));
  }

  // Blob and blob: URLs (https://w3c.github.io/FileAPI/), holding text: string parts as they
  // are, bytes as Latin-1.
  const blobData = new WeakMap();
  const blobURLs = new Map();
  class Blob {
    constructor(parts = [], options = {}) {
      let text = "";
      for (const p of Array.from(parts)) {
        if (p instanceof Blob) text += blobData.get(p);
        else if (p instanceof ArrayBuffer) text += String.fromCharCode(...new Uint8Array(p));
        else if (ArrayBuffer.isView(p)) text += String.fromCharCode(...new Uint8Array(p.buffer, p.byteOffset, p.byteLength));
        else text += String(p);
      }
      blobData.set(this, text);
      defineValue(this, "_type", /[^\x20-\x7e]/.test(String(options.type ?? "")) ? "" : String(options.type ?? "").toLowerCase());
    }
    get size() { return unescape(encodeURIComponent(blobData.get(this))).length; }
    get type() { return this._type; }
    text() { return Promise.resolve(blobData.get(this)); }
    slice(start = 0, end = undefined, type = "") {
      const b = new Blob([blobData.get(this).slice(start, end)], { type });
      return b;
    }
  }
  tag(Blob, "Blob");
  let nextBlobURL = 1;
  URL.createObjectURL = function createObjectURL(blob) {
    if (!(blob instanceof Blob)) throw new TypeError("createObjectURL: argument is not a Blob");
    const origin = location.origin === "null" ? "null" : location.origin;
    const url = `blob:${origin}/jsprof-${nextBlobURL++}-${Math.random().toString(16).slice(2)}`;
    blobURLs.set(url, blob);
    return url;
  };
  URL.revokeObjectURL = function revokeObjectURL(url) { blobURLs.delete(String(url)); };

  // Messages between threads (a worker and its creator) cross as text: a structured clone
  // serialised to JSON with tags for what JSON lacks (undefined, NaN/Infinity, Date, RegExp,
  // Map, Set, typed arrays, shared references and cycles).
  // Ports in the transfer list move to the other thread: each becomes one end of a pair the
  // engine routes between threads (host.portOpen/portSend/portAttach); its entangled port,
  // which stays here, then sends through the engine.
  const remotePorts = new Map();
  function serialize(value, transfer = []) {
    transfer = Array.from(transfer);
    checkTransfer(transfer);
    const seen = new Map();
    const enc = (v) => {
      if (isPort(v)) {
        if (!transfer.includes(v)) throw new DOMException("A MessagePort must be transferred, not cloned.", "DataCloneError");
        return { $: "p", v: transfer.indexOf(v) };
      }
      if (typeof v === "symbol" || typeof v === "function") throw uncloneable(v);
      if (v === undefined) return { $: "u" };
      if (typeof v === "number" && !Number.isFinite(v)) return { $: "n", v: String(v) };
      if (typeof v === "bigint") return { $: "b", v: String(v) };
      if (v === null || typeof v !== "object") return v;
      if (seen.has(v)) return { $: "r", v: seen.get(v) };
      const id = seen.size;
      seen.set(v, id);
      const t = Object.prototype.toString.call(v);
      if (t === "[object Date]") return { $: "d", i: id, v: v.getTime() };
      if (t === "[object RegExp]") return { $: "x", i: id, v: v.source, f: v.flags };
      if (t === "[object Map]") return { $: "m", i: id, v: [...v].map(([k, x]) => [enc(k), enc(x)]) };
      if (t === "[object Set]") return { $: "s", i: id, v: [...v].map(enc) };
      if (ArrayBuffer.isView(v)) return { $: "t", i: id, c: v.constructor.name, v: Array.from(v) };
      if (Array.isArray(v)) return { $: "a", i: id, v: v.map(enc) };
      if (v instanceof Error) return { $: "e", i: id, n: v.name, v: v.message };
      if (t !== "[object Object]") throw new DOMException(`${t.slice(8, -1)} object could not be cloned.`, "DataCloneError");
      return { $: "o", i: id, v: Object.keys(v).map((k) => [k, enc(v[k])]) };
    };
    // Encoded first: a value that cannot be cloned leaves the ports as they were.
    const encoded = enc(value);
    const pids = transfer.map((port) => {
      transferredPorts.add(port);
      const st = portState.get(port);
      const pid = host.portOpen();
      const kept = st.other;
      if (kept) {
        portState.get(kept).other = null;
        portState.get(kept).remote = { pid, end: 0 };
        remotePorts.set(`${pid}:0`, kept);
      }
      st.other = null;
      st.closed = true;
      return pid;
    });
    return JSON.stringify({ d: encoded, p: pids });
  }
  // A port of this realm that is the far end of pair `pid`.
  function remotePort(pid) {
    const key = `${pid}:1`;
    if (!remotePorts.has(key)) {
      const port = new MessagePort(ILLEGAL);
      portState.get(port).remote = { pid, end: 1 };
      remotePorts.set(key, port);
      host.portAttach(pid, 1);
    }
    return remotePorts.get(key);
  }
  function deserialize(text) {
    const { d, p } = JSONParse(text);
    const ports = p.map(remotePort);
    const made = [];
    const dec = (v) => {
      if (v === null || typeof v !== "object") return v;
      switch (v.$) {
        case "p": return ports[v.v];
        case "u": return undefined;
        case "n": return Number(v.v);
        case "b": return BigInt(v.v);
        case "r": return made[v.v];
        case "d": return (made[v.i] = new Date(v.v));
        case "x": return (made[v.i] = new RegExp(v.v, v.f));
        case "m": { const m = (made[v.i] = new Map()); for (const [k, x] of v.v) m.set(dec(k), dec(x)); return m; }
        case "s": { const st = (made[v.i] = new Set()); for (const x of v.v) st.add(dec(x)); return st; }
        case "t": return (made[v.i] = new global[v.c](v.v));
        case "a": { const a = (made[v.i] = []); for (const x of v.v) a.push(dec(x)); return a; }
        case "e": return (made[v.i] = new (global[v.n] && global[v.n].prototype instanceof Error ? global[v.n] : Error)(v.v));
        case "o": { const o = (made[v.i] = {}); for (const [k, x] of v.v) o[k] = dec(x); return o; }
      }
      return v;
    };
    return { data: dec(d), ports };
  }

  // Dedicated workers (https://html.spec.whatwg.org/#dedicated-workers-and-the-worker-interface):
  // each runs on its own thread, with its own runtime and realm, started by the engine
  // (host.workerStart); messages cross as serialised text (host.workerPost).
  const workers = new Map();
  let nextWorker = 1;
  class Worker extends EventTarget {
    constructor(scriptURL, options = {}) {
      super();
      const url = new URL(String(scriptURL), location.href);
      // Only same-origin, blob: and data: URLs make workers
      // (https://html.spec.whatwg.org/#dom-worker): anything else is a SecurityError.
      if (url.protocol !== "blob:" && url.protocol !== "data:" && !host.sameOrigin(url.href)) {
        throw new DOMException(`Failed to construct 'Worker': ${url.href} is not same-origin with ${location.origin}.`, "SecurityError");
      }
      let source = null;
      if (url.protocol === "blob:") {
        const blob = blobURLs.get(url.href);
        if (!blob) throw new DOMException(`${url.href} is not a live blob URL`, "SecurityError");
        source = blobData.get(blob);
      }
      const id = nextWorker++;
      defineValue(this, "_id", id);
      workers.set(id, this);
      host.workerStart(id, url.href, source === null ? "" : source, source === null ? 0 : 1);
    }
    postMessage(message, transfer = []) {
      if (!Array.isArray(transfer) && transfer && typeof transfer === "object") transfer = transfer.transfer ?? [];
      host.workerPost(this._id, serialize(message, transfer));
    }
    terminate() {
      workers.delete(this._id);
      host.workerTerminate(this._id);
    }
  }
  tag(Worker, "Worker");
  for (const name of ["message", "error", "messageerror"]) defineHandler(Worker.prototype, name);

  // fetch() (https://fetch.spec.whatwg.org/#fetch-method): GET through the engine's loader,
  // on another thread; the response comes back as a task (hooks.fetchDone).
  const fetches = new Map();
  let nextFetch = 1;
  class Headers {
    constructor(init = []) {
      this._list = Array.isArray(init) ? init.map(([k, v]) => [String(k).toLowerCase(), String(v)]) : Object.entries(init).map(([k, v]) => [k.toLowerCase(), String(v)]);
    }
    get(name) { const v = this._list.filter(([k]) => k === String(name).toLowerCase()).map(([, v]) => v); return v.length ? v.join(", ") : null; }
    has(name) { return this.get(name) !== null; }
    *entries() { yield* this._list; }
    [Symbol.iterator]() { return this.entries(); }
  }
  tag(Headers, "Headers");
  class Response {
    constructor(body, { status, url, headers, type = "basic" }) {
      this._body = body; this.status = status; this.url = url; this.headers = new Headers(headers);
      this.ok = status >= 200 && status < 300; this.bodyUsed = false; this.type = type;
      this.statusText = "";
    }
    _take() {
      if (this.bodyUsed) return Promise.reject(new TypeError("Body has already been consumed."));
      this.bodyUsed = true;
      return Promise.resolve(this._body);
    }
    text() { return this._take(); }
    json() { return this._take().then((t) => JSON.parse(t)); }
  }
  tag(Response, "Response");
  function fetch(input, init = {}) {
    return new Promise((resolve, reject) => {
      const method = String((init && init.method) || "GET").toUpperCase();
      if (method !== "GET") throw new TypeError(`fetch: only GET is supported (got ${method})`);
      const url = new URL(input instanceof URL ? input.href : String(input), location.href);
      if (url.protocol === "blob:") {
        const blob = blobURLs.get(url.href);
        if (!blob) throw new TypeError(`Failed to fetch: ${url.href} is not a live blob URL`);
        resolve(new Response(blobData.get(blob), { status: 200, url: url.href, headers: [["content-type", blob.type]] }));
        return;
      }
      const id = nextFetch++;
      fetches.set(id, { resolve, reject });
      const mode = init && init.mode !== undefined ? String(init.mode) : "cors";
      const credentials = init && init.credentials !== undefined ? String(init.credentials) : "same-origin";
      host.fetchStart(id, url.href, mode, credentials);
    });
  }

  const api = {
    window: global, self: global, frames: global, opener: null,
    document, location, console, performance, name: "", length: 0, closed: false,
    origin: locationParts.origin, isSecureContext: locationParts.protocol === "https:" || /^(localhost|127\.0\.0\.1)$/.test(locationParts.hostname) || locationParts.protocol === "file:",
    crossOriginIsolated: !!init.crossOriginIsolated,
    navigator: Object.freeze({ userAgent: "jsprof (SpiderMonkey)", language: "en-US", languages: ["en-US"], hardwareConcurrency: 1 }),
    EventTarget, Event, CustomEvent, ErrorEvent, PromiseRejectionEvent, DOMException, Window,
    Node, Element, HTMLElement, HTMLScriptElement, HTMLIFrameElement, Text, Document, Location,
    URL, URLSearchParams, Performance, Headers, Response, fetch,
    MessageEvent, MessageChannel, MessagePort, Blob, postMessage,
    structuredClone(value, options = {}) { return structuredCloneWithTransfer(value, (options && options.transfer) || []); },
    setTimeout(handler, timeout = 0, ...args) { return addTimer(handler, timeout, args, false); },
    setInterval(handler, timeout = 0, ...args) { return addTimer(handler, timeout, args, true); },
    clearTimeout: clearTimer,
    clearInterval: clearTimer,
    queueMicrotask(callback) {
      if (typeof callback !== "function") throw new TypeError("queueMicrotask: argument is not a function");
      // A microtask without `then`: an async function awaiting a non-promise.
      (async () => { await undefined; try { callback(); } catch (e) { reportError(e); } })();
    },
    reportError,
    btoa(s) { s = String(s); if (/[^\0-\xff]/.test(s)) throw new DOMException("btoa: character out of range", "InvalidCharacterError"); const k = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"; let o = ""; for (let i = 0; i < s.length; i += 3) { const n = (s.charCodeAt(i) << 16) | ((s.charCodeAt(i + 1) || 0) << 8) | (s.charCodeAt(i + 2) || 0); o += k[n >> 18] + k[(n >> 12) & 63] + (i + 1 < s.length ? k[(n >> 6) & 63] : "=") + (i + 2 < s.length ? k[n & 63] : "="); } return o; },
    atob(s) { s = String(s).replace(/[\t\n\f\r ]/g, ""); if (s.length % 4 === 0) s = s.replace(/==?$/, ""); if (s.length % 4 === 1 || /[^A-Za-z0-9+/]/.test(s)) throw new DOMException("atob: invalid base64", "InvalidCharacterError"); const k = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"; let bits = 0, n = 0, o = ""; for (const c of s) { n = (n << 6) | k.indexOf(c); bits += 6; if (bits >= 8) { bits -= 8; o += String.fromCharCode((n >> bits) & 255); } } return o; },
  };
  if (init.worker) {
    // A worker's global: no document, no window; postMessage and close go to the engine.
    for (const name of ["window", "document", "frames", "opener", "Window", "Node", "Element", "HTMLElement",
      "HTMLScriptElement", "HTMLIFrameElement", "Text", "Document"]) delete api[name];
    api.postMessage = function postMessage(message, transfer = []) {
      if (!Array.isArray(transfer) && transfer && typeof transfer === "object") transfer = transfer.transfer ?? [];
      host.workerPost(-1, serialize(message, transfer));
    };
    api.close = function close() { host.workerTerminate(-1); };
    // https://html.spec.whatwg.org/#dom-workerglobalscope-importscripts: fetched and run in
    // order, synchronously.
    api.importScripts = function importScripts(...urls) {
      const resolved = urls.map((u) => new URL(String(u), location.href).href);
      for (const u of resolved) {
        const failed = host.importScript(u);
        if (failed !== undefined) throw new DOMException(`Failed to execute 'importScripts': ${failed}`, "NetworkError");
      }
    };
    api.DedicatedWorkerGlobalScope = Window;
    api.WorkerGlobalScope = Window;
    for (const name of ["message", "messageerror"]) defineHandler(Window.prototype, name);
  }
  api.Worker = Worker;
  // parent and top: from the engine's frame tree (this window at the top).
  if (!init.worker) Object.defineProperty(global, "parent", { get: () => windowProxy(host.frameTree(init.windowIndex, -1)) ?? global, enumerable: true, configurable: true });
  if (!init.worker) Object.defineProperty(global, "top", { get: () => windowProxy(host.frameTree(init.windowIndex, -2)), enumerable: true, configurable: false });
  if (!init.worker) Object.defineProperty(global, "length", { get: () => host.frameTree(init.windowIndex, -3), enumerable: true, configurable: true });
  delete api.length;
  for (const [name, value] of Object.entries(api)) {
    const readonly = ["window", "self", "document", "location"].includes(name);
    Object.defineProperty(global, name, readonly
      ? { value, enumerable: true, configurable: false, writable: false }
      : { value, enumerable: typeof value !== "function", configurable: true, writable: true });
  }

  // fire an event (https://dom.spec.whatwg.org/#concept-event-fire): trusted, made and
  // dispatched without anything the page could have replaced.
  function fire(target, type, bubbles = false) {
    dispatch(target, trustedEvent(Event, type, eventInit(bubbles, false)));
  }

  // The hooks the event loop calls.
  return {
    // The realm's original DOMException, for exceptions thrown by generated bindings.
    DOMException,
    fireEvent(target, type) { fire(target, type); },
    // A message for this worker's global from its creator, or (id > 0) for a Worker object
    // of this realm from its worker.
    workerMessage(id, data) {
      const target = id > 0 ? workers.get(id) : global;
      if (!target) return;
      let value;
      try { value = deserialize(data); } catch { fire(target, "messageerror"); return; }
      dispatch(target, trustedEvent(MessageEvent, "message", { __proto__: null, data: value.data, ports: value.ports }));
    },
    // A message from another thread for this realm's end of port pair `pid`.
    portMessage(pid, end, data) {
      const port = remotePorts.get(`${pid}:${end}`);
      if (!port) return;
      let value;
      try { value = deserialize(data); } catch { fire(port, "messageerror"); return; }
      portState.get(port).queue.push({ data: value.data, ports: value.ports });
      portState.get(port).deliver(port);
    },
    // Worker `id` of this realm reported an uncaught exception.
    workerError(id, message, filename, lineno, colno) {
      const target = workers.get(id);
      if (!target) return;
      const e = trustedEvent(ErrorEvent, "error", { __proto__: null, cancelable: true, message, filename, lineno, colno });
      if (dispatch(target, e)) host.print(1, `Uncaught (in worker) ${message}` + (filename ? ` (${filename}:${lineno}:${colno})` : ""));
    },
    // This window's iframe number `index` has its window (frames[index]).
    attachFrame(index, windowIndex) {
      const el = childFrames[index];
      if (!el) return;
      const f = frameState.get(el);
      f.window = windowProxy(windowIndex);
      f.windowIndex = windowIndex;
      Object.defineProperty(global, String(index), { get: () => frameState.get(el).window, enumerable: true, configurable: true });
    },
    // A message another window posted to this one.
    windowMessage(data, sourceIndex, origin) { deliverWindowMessage(data, sourceIndex, origin); },
    // This window's iframe number `index` has loaded.
    frameLoaded(index) { const el = childFrames[index]; if (el) fire(el, "load"); },
    // Starts the loads of the iframes the parser put in the document.
    startFrames() { for (const e of document._descendants()) if (e instanceof HTMLIFrameElement) loadFrame(e); },
    // The response as the page may see it: `meta` is {type, headers} of the filtered
    // response (an opaque one has status 0, no headers and no body).
    fetchDone(id, status, url, metaJSON, body, error) {
      const f = fetches.get(id);
      fetches.delete(id);
      if (!f) return;
      if (error) { f.reject(new TypeError(`Failed to fetch: ${error}`)); return; }
      const meta = JSONParse(metaJSON);
      f.resolve(new Response(body, { status, url, headers: meta.headers, type: meta.type }));
    },
    fireTimer(id) {
      const t = MapGet(timerTable, id);
      if (!t) return;
      if (!t.repeat) MapDelete(timerTable, id);
      if (typeof t.handler === "function") ReflectApply(t.handler, global, t.args);
      else IndirectEval(StringCtor(t.handler));
    },
    setCurrentScript(index) { currentScript = index >= 0 ? scriptElements[index] || null : null; },
    setReadyState(state) { readyState = state; fire(document, "readystatechange"); },
    fireDOMContentLoaded() { fire(document, "DOMContentLoaded", true); },
    fireLoad() { fire(global, "load"); },
    fireScriptEvent(index, type) { const el = scriptElements[index]; if (el) fire(el, type); },
    reportException(error, message, filename, line, column) {
      if (error instanceof Error || error instanceof DOMException) message = `${error.name}: ${error.message}`;
      report(error, message, filename, line, column);
    },
    // https://html.spec.whatwg.org/#notify-about-rejected-promises: the reason is read from
    // the engine, not through `then`.
    reportRejection(promise) {
      const reason = host.promiseResult(promise);
      const event = trustedEvent(PromiseRejectionEvent, "unhandledrejection", { __proto__: null, cancelable: true, promise, reason });
      if (dispatch(global, event)) {
        const isError = reason instanceof Error || reason instanceof DOMException;
        const where = isError && reason.fileName ? ` (${reason.fileName}:${reason.lineNumber}:${reason.columnNumber})` : "";
        host.print(1, `Uncaught (in promise) ${inspect(reason)}${where}`);
      }
    },
    watchModule(promise) { host.whenSettled(promise, null, reportError); },
  };
})
