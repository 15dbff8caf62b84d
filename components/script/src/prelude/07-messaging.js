  // MessageEvent, MessageChannel and MessagePort (https://html.spec.whatwg.org/#message-ports).
  // A FrozenArray of `ports` (a list) for the page.
  const frozenPorts = (ports) => ObjectFreeze(pageArrayOf(ports));
  class MessageEvent extends Event {
    // https://html.spec.whatwg.org/#the-messageevent-interface
    constructor(type, eventInitDict = undefined) {
      const self = makeEvent(new.target.prototype, eventArgs(type, eventInitDict), arguments.length);
      const init = dictionaryArg(eventInitDict, "MessageEventInit");
      // MessageEventInit's members, in WebIDL's (lexicographic) order.
      const data = init.data;
      const lastEventId = init.lastEventId;
      const origin = init.origin;
      const ports = init.ports;
      const source = init.source; // prelude-lint: allow(protocol-read) MessageEventInit's `source` member, not RegExp's accessor
      WeakMapSet(eventExtra, self, { __proto__: null, data: data === undefined ? null : data,
        lastEventId: lastEventId === undefined ? "" : StringCtor(lastEventId),
        origin: origin === undefined ? "" : StringCtor(origin),
        ports: frozenPorts(ports === undefined ? list() : sequenceArg(ports, "MessageEventInit's ports")),
        messageSource: source === undefined ? null : source });
      return self;
    }
    get data() { return extraOf(this).data; }
    get origin() { return extraOf(this).origin; }
    get lastEventId() { return extraOf(this).lastEventId; }
    get source() { return extraOf(this).messageSource; }
    get ports() { return extraOf(this).ports; }
  }
  tag(MessageEvent, "MessageEvent");
  // A trusted `message` event the engine fires: `ports` is a list.
  function messageEvent(data, ports, origin, source) {
    const e = trustedEvent(MessageEvent, "message", NO_INIT);
    WeakMapSet(eventExtra, e, { __proto__: null, data, lastEventId: "", origin, ports: frozenPorts(ports), messageSource: source });
    return e;
  }
  // A port's state is in its native slot (platformStateOf), shared by every same-origin
  // realm: a port can be handed to (and used from) another window's realm, and its
  // `deliver` is its own realm's.
  const portOf = (port) => {
    const s = platformStateOf(port, PLATFORM_PORT);
    if (s === undefined) throw new TypeErrorCtor("'this' is not a MessagePort");
    return s;
  };
  // Runs `f` as a task (the posted message task source).
  const queueTask = (f) => addTimer(f, 0, list(), false);
  // A new, entangled-with-nothing port of this realm.
  function makePort() {
    return makeEventTarget(MessagePort.prototype, { __proto__: null, kind: PLATFORM_PORT, other: null,
      queue: list(), started: false, closed: false, transferred: false, onmessage: null, remote: null, deliver });
  }
  // Has `port`'s realm deliver what its queue holds.
  const deliverIn = (port) => { const d = portOf(port).deliver; d(port); };
  class MessagePort extends EventTarget {
    constructor() { throw illegal(); }
    // https://html.spec.whatwg.org/#dom-messageport-postmessage
    postMessage(message, options = undefined) {
      const s = portOf(this);
      const transfer = transferArg(options);
      // https://html.spec.whatwg.org/#message-port-post-message-steps
      // 2. If transfer contains sourcePort, then throw a "DataCloneError" DOMException.
      if (listIncludes(transfer, this)) throw new DOMException("A port cannot transfer itself.", "DataCloneError");
      if (s.remote !== null) {
        if (!s.closed) host.portSend(s.remote.pid, s.remote.end, serialize(message, transfer));
        return;
      }
      // 4. Let serializeWithTransferResult be StructuredSerializeWithTransfer(message,
      // transfer). Rethrow any exceptions.
      const data = structuredCloneWithTransfer(message, transfer);
      // 3. If targetPort is null, or if doomed, then return.
      const target = s.other;
      if (target === null || s.closed) return;
      // 6. Add a task that runs the steps on targetPort's port message queue.
      listPush(portOf(target).queue, { __proto__: null, data, ports: transfer });
      deliverIn(target);
    }
    // https://html.spec.whatwg.org/#dom-messageport-start
    start() {
      const s = portOf(this);
      if (s.started) return;
      s.started = true;
      deliverIn(this);
    }
    // https://html.spec.whatwg.org/#dom-messageport-close
    close() {
      const s = portOf(this);
      s.closed = true;
      if (s.other !== null) portOf(s.other).other = null;
      s.other = null;
    }
    get onmessage() { return portOf(this).onmessage; }
    // https://html.spec.whatwg.org/#handler-messageport-onmessage: setting it starts the
    // port.
    set onmessage(f) {
      const s = portOf(this);
      if (s.onmessage !== null) removeListener(this, "message", s.onmessage, false);
      s.onmessage = typeof f === "function" ? f : null;
      if (s.onmessage !== null) addListener(this, "message", s.onmessage, false, false);
      if (s.started) return;
      s.started = true;
      deliverIn(this);
    }
  }
  tag(MessagePort, "MessagePort");
  // This realm's delivery of a port's queued messages: each a task that fires `message`.
  function deliver(port) {
    const s = portOf(port);
    if (!s.started) return;
    while (s.queue.length) {
      const m = listShift(s.queue);
      queueTask(() => { dispatch(port, messageEvent(m.data, m.ports, "", null)); });
    }
  }
  const channelPorts = new WeakMapCtor();
  const channelOf = (c) => {
    const s = WeakMapGet(channelPorts, c);
    if (s === undefined) throw new TypeErrorCtor("'this' is not a MessageChannel");
    return s;
  };
  class MessageChannel {
    // https://html.spec.whatwg.org/#dom-messagechannel
    constructor() {
      // 1. Set this's port 1 to a new MessagePort. 2. Set this's port 2 to a new
      // MessagePort. 3. Entangle this's port 1 and this's port 2.
      const port1 = makePort(), port2 = makePort();
      portOf(port1).other = port2;
      portOf(port2).other = port1;
      WeakMapSet(channelPorts, this, { __proto__: null, port1, port2 });
    }
    get port1() { return channelOf(this).port1; }
    get port2() { return channelOf(this).port2; }
  }
  tag(MessageChannel, "MessageChannel");
