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
      // A platform object (host.platformObject): a structured clone refuses it.
      const self = host.platformObject(new.target.prototype);
      WeakMapSet(eventState, self, {
        __proto__: null,
        type: StringCtor(type), bubbles: !!init.bubbles, cancelable: !!init.cancelable,
        composed: !!init.composed, target: null, currentTarget: null, canceled: false,
        stop: false, stopImmediate: false, phase: 0, trusted: false,
        timeStamp: host.now(),
      });
      return self;
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
  // MouseEvent (https://w3c.github.io/uievents/#interface-mouseevent), for the clicks the
  // engine dispatches (WebDriver's Element Click): no layout, so positions are 0.
  class MouseEvent extends Event {
    constructor(type, init = NO_INIT) {
      super(type, init);
      init = init ?? NO_INIT;
      WeakMapSet(eventExtra, this, {
        __proto__: null, detail: NumberCtor(init.detail ?? 0) | 0, button: NumberCtor(init.button ?? 0) | 0,
        buttons: NumberCtor(init.buttons ?? 0) | 0, clientX: NumberCtor(init.clientX ?? 0), clientY: NumberCtor(init.clientY ?? 0),
      });
    }
    get detail() { return extraOf(this).detail; }
    get button() { return extraOf(this).button; }
    get buttons() { return extraOf(this).buttons; }
    get clientX() { return extraOf(this).clientX; }
    get clientY() { return extraOf(this).clientY; }
  }
  tag(MouseEvent, "MouseEvent");
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
    // Every EventTarget (nodes, ports, workers…) is a platform object (host.platformObject):
    // a structured clone refuses it, unless it is a MessagePort in the transfer list.
    constructor() {
      const self = host.platformObject(new.target.prototype);
      WeakMapSet(listeners, self, list());
      return self;
    }
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

