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
    log(...a) { host.print(false, format(a)); },
    info(...a) { host.print(false, format(a)); },
    debug(...a) { host.print(false, format(a)); },
    warn(...a) { host.print(false, format(a)); },
    error(...a) { host.print(false, format(a)); },
    trace(...a) { host.print(false, format(["Trace:", ...a])); },
    assert(cond, ...a) { if (!cond) host.print(false, format(["Assertion failed:", ...a])); },
    count(label = "default") { const n = (counts.get(label) || 0) + 1; counts.set(label, n); host.print(false, `${label}: ${n}`); },
    countReset(label = "default") { counts.delete(label); },
    time(label = "default") { timers.set(label, host.now()); },
    timeEnd(label = "default") { const t = timers.get(label); if (t !== undefined) { timers.delete(label); host.print(false, `${label}: ${host.now() - t}ms`); } },
    timeLog(label = "default", ...a) { const t = timers.get(label); if (t !== undefined) host.print(false, format([`${label}: ${host.now() - t}ms`, ...a])); },
    group(...a) { if (a.length) host.print(false, format(a)); },
    groupEnd() {},
    table(d) { host.print(false, inspect(d)); },
    dir(d) { host.print(false, inspect(d)); },
  };

  // Timers (https://html.spec.whatwg.org/#timers): the event loop in Rust fires them.
  const timerTable = new Map();
  let nextTimer = 1;
  function addTimer(handler, timeout, args, repeat) {
    const id = nextTimer++;
    timeout = NumberCtor(timeout) || 0;
    MapSet(timerTable, id, { __proto__: null, handler, args, repeat });
    host.setTimer(id, timeout < 0 ? 0 : timeout, repeat);
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
    else if (notHandled) host.print(true, `Uncaught ${message}` + (filename ? ` (${filename}:${line}:${column})` : ""));
  }

