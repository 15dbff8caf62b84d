  // Windows by the engine's index: this one, its parent, its iframes', theirs. A window of
  // the same origin is the real one (its global, through a transparent wrapper); one of
  // another origin is a cross-origin window object of this realm, which offers only the
  // HTML standard's cross-origin properties (https://html.spec.whatwg.org/#crossoriginproperties-(-o-)).
  // The engine never hands this realm another origin's objects.
  const windowsByIndex = new MapCtor();
  MapSet(windowsByIndex, init.windowIndex, global);
  const crossOriginWindows = new WeakSetCtor();
  function windowProxy(index) {
    if (index < 0) return null;
    let w = MapGet(windowsByIndex, index);
    if (w === undefined) {
      w = host.windowFor(index);
      if (w === null) {
        w = crossOriginWindow(index);
        WeakSetAdd(crossOriginWindows, w);
      }
      MapSet(windowsByIndex, index, w);
    }
    return w;
  }
  const CROSS_ORIGIN_PROPERTIES = listOf("window", "self", "location", "close", "closed", "focus", "blur",
    "frames", "length", "top", "opener", "parent", "postMessage");
  const CROSS_ORIGIN_FALLBACK = listOf("then", SymbolToStringTag, SymbolHasInstance, SymbolIsConcatSpreadable);
  const securityError = (what) => new DOMException(
    `Blocked a frame with origin "${locationParts.origin}" from accessing ${typeof what === "symbol" ? "a symbol" : `'${what}'`} of a cross-origin frame.`, "SecurityError");
  // A cross-origin object: a Proxy over an empty object whose every trap either answers from
  // `value` (an allowed property) or throws a SecurityError (CrossOriginGet/Set/
  // GetOwnProperty/OwnPropertyKeys of the HTML standard). The handler has a null prototype,
  // so no trap is looked up on Object.prototype, and its descriptors too.
  function crossOriginObject(allowedKeys, value, set) {
    const allowed = (key) => listIncludes(allowedKeys(), key);
    const fallback = (key) => listIncludes(CROSS_ORIGIN_FALLBACK, key);
    return new ProxyCtor(ObjectCreate(null), {
      __proto__: null,
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
        if (allowed(key)) return { __proto__: null, value: value(key), writable: false, enumerable: false, configurable: true };
        if (fallback(key)) return { __proto__: null, value: undefined, writable: false, enumerable: false, configurable: true };
        throw securityError(key);
      },
      ownKeys() {
        const keys = listCopy(allowedKeys());
        for (let i = 0; i < CROSS_ORIGIN_FALLBACK.length; i++) listPush(keys, CROSS_ORIGIN_FALLBACK[i]);
        return toPageArray(keys);
      },
      defineProperty(t, key) { throw securityError(key); },
      deleteProperty(t, key) { throw securityError(key); },
      getPrototypeOf() { return null; },
      setPrototypeOf(t, proto) { return proto === null; },
      isExtensible() { return true; },
      preventExtensions() { return false; },
    });
  }
  function crossOriginWindow(index) {
    const functions = new MapCtor();
    const fn = (name, f) => {
      if (!MapHas(functions, name)) MapSet(functions, name, f);
      return MapGet(functions, name);
    };
    let location = null;
    const childCount = () => host.frameTree(index, -3);
    const keys = () => {
      const out = list();
      for (let i = 0, n = childCount(); i < n; i++) listPush(out, StringCtor(i));
      for (let i = 0; i < CROSS_ORIGIN_PROPERTIES.length; i++) listPush(out, CROSS_ORIGIN_PROPERTIES[i]);
      return out;
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
        case "postMessage": return fn(key, function postMessage(message, options = undefined, transfer = undefined) {
          postTo(index, init.windowIndex, message, options, transfer);
        });
        case "close": return fn(key, function close() {});
        case "focus": return fn(key, function focus() {});
        case "blur": return fn(key, function blur() {});
      }
      return windowProxy(host.frameTree(index, NumberCtor(key))) ?? undefined;
    }, (key) => {
      if (key === "location") throw navigationUnsupported();
      throw securityError(key);
    });
    return proxy;
  }
  function crossOriginLocation() {
    const replace = function replace() { throw navigationUnsupported(); };
    // href can only be set across origins (CrossOriginGet: no getter is a SecurityError).
    return crossOriginObject(() => listOf("href", "replace"), (key) => {
      if (key === "href") throw securityError(key);
      return replace;
    }, (key) => {
      if (key === "href") throw navigationUnsupported();
      throw securityError(key);
    });
  }
  // window.postMessage (https://html.spec.whatwg.org/#window-post-message-steps) from window
  // `from` to window `index`: the message is serialised now and delivered as a task of the
  // target, whose origin the engine checks against targetOrigin. `options` is the
  // targetOrigin of the (message, targetOrigin, transfer) overload, or the
  // WindowPostMessageOptions dictionary of the (message, options) one.
  function postTo(index, from, message, options, transferList) {
    let targetOrigin;
    let transfer;
    if (options !== null && (typeof options === "object" || typeof options === "function")) {
      // WindowPostMessageOptions: targetOrigin = "/", transfer = [].
      const o = options.targetOrigin;
      targetOrigin = o === undefined ? "/" : StringCtor(o);
      const t = options.transfer;
      transfer = t === undefined ? list() : sequenceArg(t, "The transfer list");
    } else {
      targetOrigin = options === undefined ? "/" : StringCtor(options);
      transfer = transferList === undefined ? list() : sequenceArg(transferList, "The transfer list");
    }
    // 2. If targetOrigin is neither "*" nor "/": parse it, a SyntaxError if that fails.
    if (targetOrigin !== "*" && targetOrigin !== "/") {
      try { targetOrigin = parseURL(targetOrigin).href; } catch { throw new DOMException(`Invalid target origin '${targetOrigin}'.`, "SyntaxError"); }
    }
    host.windowPost(index, serialize(message, transfer), targetOrigin, from);
  }
  // postMessage of this window, called by this window's script or by a same-origin one's:
  // the sender is the window whose script called it (the incumbent).
  function postMessage(message, options = undefined, transfer = undefined) {
    const caller = host.callerWindow();
    postTo(init.windowIndex, caller >= 0 ? caller : init.windowIndex, message, options, transfer);
  }
  function deliverWindowMessage(data, sourceIndex, origin) {
    let value;
    try { value = deserialize(data); } catch { fire(global, "messageerror"); return; }
    dispatch(global, messageEvent(value.data, value.ports, origin, windowProxy(sourceIndex)));
  }
