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

