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

