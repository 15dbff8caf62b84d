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
