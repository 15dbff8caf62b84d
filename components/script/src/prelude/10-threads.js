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

