
  // ---------------------------------------------------------------------------------------
  // Events (https://dom.spec.whatwg.org/#events). State lives in WeakMaps, never on the
  // objects; dictionaries the engine passes are null-prototype (NO_INIT, `eventInit`).
  // Every Event and EventTarget is a platform object (host.platformObject): a structured
  // clone refuses it (unless it is a MessagePort in the transfer list). Constructors make
  // their object directly, with new.target's prototype, and never call `super()`: a page
  // may change a class's prototype (Object.setPrototypeOf(CustomEvent, …)), and the engine
  // constructs these classes for it.
  const eventState = new WeakMapCtor();
  const eventExtra = new WeakMapCtor(); // CustomEvent's detail, ErrorEvent's fields, …
  const eventInit = (bubbles, cancelable) => ({ __proto__: null, bubbles, cancelable });
  const stateOf = (event) => {
    const s = WeakMapGet(eventState, event);
    if (s === undefined) throw new TypeErrorCtor("'this' is not an Event");
    return s;
  };
  const isEvent = (v) => v !== null && typeof v === "object" && WeakMapHas(eventState, v);
  // The event constructor's steps (https://dom.spec.whatwg.org/#concept-event-constructor)
  // for an event of `proto` (new.target's prototype): `type` and the EventInit members,
  // converted in WebIDL's order (the type, then bubbles, cancelable, composed).
  function makeEvent(proto, args, count) {
    if (count === 0) throw new TypeErrorCtor("Event constructor: 1 argument required");
    const type = StringCtor(args.type);
    const init = dictionaryArg(args.init, "The event's init dictionary");
    // 1. Let event be the result of running the inner event creation steps.
    const self = host.platformObject(proto);
    // 2. Initialize event's type attribute to type. 3. For each member of
    // eventInitDict, set the attribute it names. 4. Return event.
    WeakMapSet(eventState, self, {
      __proto__: null,
      type, bubbles: !!init.bubbles, cancelable: !!init.cancelable, composed: !!init.composed,
      target: null, currentTarget: null, canceled: false,
      stop: false, stopImmediate: false, phase: 0, trusted: false,
      timeStamp: host.now(),
    });
    return self;
  }
  const eventArgs = (type, init) => ({ __proto__: null, type, init });
  class Event {
    // https://dom.spec.whatwg.org/#dom-event-event
    constructor(type, eventInitDict = undefined) {
      return makeEvent(new.target.prototype, eventArgs(type, eventInitDict), arguments.length);
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
  // https://dom.spec.whatwg.org/#set-the-canceled-flag
  const cancel = (s) => { if (s.cancelable) s.canceled = true; };
  const EVENT_PHASES = ["NONE", 0, "CAPTURING_PHASE", 1, "AT_TARGET", 2, "BUBBLING_PHASE", 3];
  for (let i = 0; i < EVENT_PHASES.length; i += 2) {
    ObjectDefineProperty(Event, EVENT_PHASES[i], dataDescriptor(EVENT_PHASES[i + 1], false, true, false));
    ObjectDefineProperty(Event.prototype, EVENT_PHASES[i], dataDescriptor(EVENT_PHASES[i + 1], false, true, false));
  }
  tag(Event, "Event");
  const extraOf = (event) => WeakMapGet(eventExtra, event) ?? NO_INIT;
  class CustomEvent extends Event {
    constructor(type, eventInitDict = undefined) {
      const self = makeEvent(new.target.prototype, eventArgs(type, eventInitDict), arguments.length);
      const init = dictionaryArg(eventInitDict, "CustomEventInit");
      WeakMapSet(eventExtra, self, { __proto__: null, detail: init.detail ?? null });
      return self;
    }
    get detail() { return extraOf(this).detail; }
  }
  tag(CustomEvent, "CustomEvent");
  class ErrorEvent extends Event {
    constructor(type, eventInitDict = undefined) {
      const self = makeEvent(new.target.prototype, eventArgs(type, eventInitDict), arguments.length);
      const init = dictionaryArg(eventInitDict, "ErrorEventInit");
      WeakMapSet(eventExtra, self, { __proto__: null, message: StringCtor(init.message ?? ""),
        filename: StringCtor(init.filename ?? ""), lineno: init.lineno >>> 0, colno: init.colno >>> 0,
        error: init.error, isErrorEvent: true });
      return self;
    }
    get message() { return extraOf(this).message; }
    get filename() { return extraOf(this).filename; }
    get lineno() { return extraOf(this).lineno; }
    get colno() { return extraOf(this).colno; }
    get error() { return extraOf(this).error; }
  }
  tag(ErrorEvent, "ErrorEvent");
  class PromiseRejectionEvent extends Event {
    constructor(type, eventInitDict = undefined) {
      const self = makeEvent(new.target.prototype, eventArgs(type, eventInitDict), arguments.length);
      const init = dictionaryArg(eventInitDict, "PromiseRejectionEventInit");
      WeakMapSet(eventExtra, self, { __proto__: null, promise: init.promise, reason: init.reason });
      return self;
    }
    get promise() { return extraOf(this).promise; }
    get reason() { return extraOf(this).reason; }
  }
  tag(PromiseRejectionEvent, "PromiseRejectionEvent");
  // MouseEvent (https://w3c.github.io/uievents/#interface-mouseevent), for the clicks the
  // engine dispatches (WebDriver's Element Click): no layout, so positions are 0.
  class MouseEvent extends Event {
    constructor(type, eventInitDict = undefined) {
      const self = makeEvent(new.target.prototype, eventArgs(type, eventInitDict), arguments.length);
      const init = dictionaryArg(eventInitDict, "MouseEventInit");
      WeakMapSet(eventExtra, self, {
        __proto__: null, detail: NumberCtor(init.detail ?? 0) | 0, button: NumberCtor(init.button ?? 0) | 0,
        buttons: NumberCtor(init.buttons ?? 0) | 0, clientX: NumberCtor(init.clientX ?? 0), clientY: NumberCtor(init.clientY ?? 0),
      });
      return self;
    }
    get detail() { return extraOf(this).detail; }
    get button() { return extraOf(this).button; }
    get buttons() { return extraOf(this).buttons; }
    get clientX() { return extraOf(this).clientX; }
    get clientY() { return extraOf(this).clientY; }
  }
  tag(MouseEvent, "MouseEvent");
  // A trusted event made by the engine, from a null-prototype init it made.
  function trustedEvent(Kind, type, init) {
    const e = new Kind(type, init);
    stateOf(e).trusted = true;
    return e;
  }

  const listeners = new WeakMapCtor(); // target -> internal list of {type, callback, capture, once, removed}
  const parentOf = new WeakMapCtor(); // event path: node -> parent target
  // https://dom.spec.whatwg.org/#concept-flatten-options: a boolean, or a dictionary
  // whose `capture` (and `once`) members are read.
  function flattenOptions(options) {
    if (options === null || (typeof options !== "object" && typeof options !== "function")) {
      return { __proto__: null, capture: !!options, once: false };
    }
    return { __proto__: null, capture: !!options.capture, once: !!options.once };
  }
  // https://dom.spec.whatwg.org/#concept-event-listener-inner-invoke, step "call a user
  // object's operation": a function is called, any other object has its `handleEvent`
  // read and called; what it throws is reported.
  // The listeners `on<event>` handler attributes register (the page's function is the one
  // they call, which they name to the profiler service themselves).
  const handlerListeners = new WeakMapCtor();
  function callListener(target, callback, event) {
    try {
      if (typeof callback === "function") {
        if (!WeakMapGet(handlerListeners, callback)) host.scopeEntered(callback);
        ReflectApply(callback, target, [event]);
      } else {
        const handleEvent = callback.handleEvent;
        if (typeof handleEvent !== "function") throw new TypeErrorCtor("handleEvent is not a function");
        host.scopeEntered(handleEvent);
        ReflectApply(handleEvent, callback, [event]);
      }
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
  // remove an event listener (https://dom.spec.whatwg.org/#remove-an-event-listener)
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
  // A new EventTarget of prototype `proto`: a platform object (with `state` in its native
  // slot, if given) with an empty listener list.
  function makeEventTarget(proto, state = undefined) {
    const self = host.platformObject(proto, state);
    WeakMapSet(listeners, self, list());
    return self;
  }
  // A WebIDL callback interface argument (EventListener?): null, or an object.
  const listenerArg = (callback) => {
    if (callback !== null && typeof callback !== "object" && typeof callback !== "function") {
      throw new TypeErrorCtor("The listener is not an object");
    }
    return callback;
  };
  class EventTarget {
    // https://dom.spec.whatwg.org/#dom-eventtarget-eventtarget
    constructor() { return makeEventTarget(new.target.prototype); }
    // Called without a `this` (a bare `addEventListener(…)` in a page), they act on the
    // global, as WebIDL does for operations of the global object.
    // https://dom.spec.whatwg.org/#dom-eventtarget-addeventlistener
    addEventListener(type, callback, options = undefined) {
      type = StringCtor(type);
      callback = listenerArg(callback ?? null);
      // 1. Let capture, passive, once, and signal be the result of flattening options.
      const o = flattenOptions(options);
      // 2. Add an event listener with this and an event listener whose type is type,
      // callback is callback, capture is capture, and once is once.
      if (callback === null) return;
      addListener(this ?? global, type, callback, o.capture, o.once);
    }
    // https://dom.spec.whatwg.org/#dom-eventtarget-removeeventlistener
    removeEventListener(type, callback, options = undefined) {
      type = StringCtor(type);
      callback = listenerArg(callback ?? null);
      // 1. Let capture be the result of flattening options.
      const capture = flattenOptions(options).capture;
      // 2. If this's event listener list contains an event listener whose type is type,
      // callback is callback, and capture is capture, then remove it.
      removeListener(this ?? global, type, callback, capture);
    }
    // https://dom.spec.whatwg.org/#dom-eventtarget-dispatchevent
    dispatchEvent(event) {
      if (!isEvent(event)) throw new TypeErrorCtor("dispatchEvent: argument is not an Event");
      return dispatch(this ?? global, event);
    }
  }
  tag(EventTarget, "EventTarget");
  // `on<event>` handler attributes (https://html.spec.whatwg.org/#event-handler-attributes),
  // as listeners registered when first set.
  function defineHandler(proto, name) {
    const handlers = new WeakMapCtor();
    ObjectDefineProperty(proto, "on" + name, {
      __proto__: null,
      configurable: true, enumerable: true,
      get() { const h = WeakMapGet(handlers, this); return h ? h.value : null; },
      set(value) {
        let h = WeakMapGet(handlers, this);
        if (!h) {
          const self = this;
          // https://html.spec.whatwg.org/#the-event-handler-processing-algorithm
          const listener = (event) => {
            if (typeof h.value !== "function") return;
            host.scopeEntered(h.value);
            const extra = extraOf(event);
            if (name === "error" && extra.isErrorEvent && self === global) {
              const r = ReflectApply(h.value, self, [extra.message, extra.filename, extra.lineno, extra.colno, extra.error]);
              if (r === true) cancel(stateOf(event));
            } else {
              const r = ReflectApply(h.value, self, [event]);
              if (r === false) cancel(stateOf(event));
            }
          };
          h = { __proto__: null, value: null, listener };
          WeakMapSet(handlers, this, h);
          WeakMapSet(handlerListeners, listener, true);
          addListener(this, name, listener, false, false);
        }
        h.value = typeof value === "function" ? value : null;
      },
    });
  }
