
  // ---------------------------------------------------------------------------------------
  // The Window (https://html.spec.whatwg.org/#the-window-object)
  const locationParts = parseURL(init.url);
  const navigationUnsupported = () => new DOMException("navigation is not supported by jsprof", "NotSupportedError");
  const locationOf = (l) => { if (l !== location) throw new TypeErrorCtor("'this' is not a Location"); };
  class Location {
    constructor() { throw illegal(); }
    toString() { locationOf(this); return init.url; }
    assign() { locationOf(this); throw navigationUnsupported(); }
    replace() { locationOf(this); throw navigationUnsupported(); }
    reload() { locationOf(this); throw navigationUnsupported(); }
  }
  const LOCATION_PARTS = ["href", "protocol", "host", "hostname", "port", "pathname", "search", "hash", "origin"];
  for (let i = 0; i < LOCATION_PARTS.length; i++) {
    const prop = LOCATION_PARTS[i];
    defineGetter(Location.prototype, prop, () => locationParts[prop]);
  }
  tag(Location, "Location");
  const location = ObjectCreate(Location.prototype);

  // A worker's global is a DedicatedWorkerGlobalScope (init.worker), a page's a Window.
  class Window extends EventTarget {
    constructor() { throw illegal(); }
  }
  tag(Window, init.worker ? "DedicatedWorkerGlobalScope" : "Window");
  defineHandler(Window.prototype, "load");
  defineHandler(Window.prototype, "error");
  defineHandler(Window.prototype, "unhandledrejection");
  defineHandler(Window.prototype, "rejectionhandled");
  defineHandler(Window.prototype, "message");
  ObjectSetPrototypeOf(global, Window.prototype);
  WeakMapSet(listeners, global, list());
  WeakMapSet(parentOf, document, global);

  // What the engine shows of a page value (console, uncaught exceptions), read without
  // running any page code: own data properties only (a getter is shown as such, never
  // run), prototypes walked with [[GetPrototypeOf]], and a Proxy (whose every operation is
  // a page function) shown as one, unopened.
  // The value of data property `key` of `o` or of its prototype chain, undefined for an
  // accessor or a Proxy.
  function dataProperty(o, key) {
    for (let depth = 0; o !== null && depth < 64; depth++) {
      if (host.isProxy(o)) return undefined;
      let d;
      try { d = ObjectGetOwnPropertyDescriptor(o, key); } catch { return undefined; }
      if (d !== undefined) return ObjectHasOwn(d, "value") ? d.value : undefined;
      try { o = ObjectGetPrototypeOf(o); } catch { return undefined; }
    }
    return undefined;
  }
  // An error's "Name: message", for an Error object (by SpiderMonkey's own brand check) or
  // a DOMException; null for anything else.
  function errorText(e) {
    if (isDOMException(e)) {
      const d = WeakMapGet(exceptionData, e);
      return `${d.name}: ${d.message}`;
    }
    if (!ErrorIsError(e)) return null;
    const name = dataProperty(e, "name");
    const message = dataProperty(e, "message");
    return `${typeof name === "string" ? name : "Error"}: ${typeof message === "string" ? message : ""}`;
  }
  // console (https://console.spec.whatwg.org/): strings as they are, other values inspected.
  function inspect(v, depth = 0) {
    if (typeof v === "string") return depth ? JSONStringify(v) : v;
    if (typeof v === "function") {
      const name = host.isProxy(v) ? undefined : dataProperty(v, "name");
      return `function ${typeof name === "string" && name !== "" ? name : "(anonymous)"}()`;
    }
    if (typeof v === "symbol") return SymbolPrototypeToString(v);
    if (typeof v === "bigint") return BigIntPrototypeToString(v) + "n";
    if (v === null || typeof v !== "object") return StringCtor(v);
    if (host.isProxy(v)) return "Proxy {…}";
    const error = errorText(v);
    if (error !== null) return error;
    let array;
    try { array = ArrayIsArray(v); } catch { return "{…}"; }
    if (depth > 2) return array ? "[…]" : "{…}";
    if (array) {
      const items = listFromArray(v);
      let out = "[";
      for (let i = 0; i < items.length; i++) out += (i ? ", " : "") + inspect(items[i], depth + 1);
      return out + "]";
    }
    if (isURL(v)) return `URL ${urlOf(v).parts.href}`;
    if (isNode(v)) {
      const s = nodeOf(v);
      return s.kind === NODE_TEXT ? "<#text>" : s.kind === NODE_DOCUMENT ? "<#document>" : `<${s.localName}>`;
    }
    let keys;
    try { keys = ObjectKeys(v); } catch { return "{…}"; }
    const ctor = dataProperty(v, "constructor");
    const ctorName = typeof ctor === "function" && ctor !== ObjectCtor ? dataProperty(ctor, "name") : undefined;
    let out = typeof ctorName === "string" && ctorName !== "" ? ctorName + " {" : "{";
    for (let i = 0; i < keys.length; i++) {
      let d;
      try { d = ObjectGetOwnPropertyDescriptor(v, keys[i]); } catch { d = undefined; }
      const shown = d === undefined ? "undefined" : ObjectHasOwn(d, "value") ? inspect(d.value, depth + 1) : "[Getter/Setter]";
      out += (i ? ", " : "") + keys[i] + ": " + shown;
    }
    return out + "}";
  }
  // https://console.spec.whatwg.org/#formatter: %s %d %i %f %o %O %c %% in a leading
  // string, then every argument inspected.
  function format(args) {
    let first = 0;
    let out = "";
    if (args.length && typeof args[0] === "string") {
      const f = args[0];
      let next = 1;
      let last = 0;
      let text = "";
      for (let i = 0; i + 1 < f.length; i++) {
        if (StringPrototypeCharCodeAt(f, i) !== 0x25) continue; // %
        const c = StringPrototypeSlice(f, i + 1, i + 2);
        let r;
        if (c === "%") r = "%";
        else if (StringPrototypeIndexOf("sdifoOc", c) < 0 || next >= args.length) continue;
        else {
          const a = args[next++];
          if (c === "s") r = typeof a === "string" ? a : inspect(a, 1);
          else if (c === "d" || c === "i") r = typeof a === "object" || typeof a === "function" ? "NaN" : StringCtor(NumberParseInt(a, 10));
          else if (c === "f") r = typeof a === "object" || typeof a === "function" ? "NaN" : StringCtor(NumberCtor(a));
          else if (c === "c") r = "";
          else r = inspect(a, 1);
        }
        text += StringPrototypeSlice(f, last, i) + r;
        last = i + 2;
        i++;
      }
      out = text + StringPrototypeSlice(f, last);
      first = next;
      if (first > 1 || last > 0) {
        for (let i = first; i < args.length; i++) out += " " + inspect(args[i]);
        return out;
      }
      first = 0;
      out = "";
    }
    for (let i = first; i < args.length; i++) out += (i > first ? " " : "") + inspect(args[i]);
    return out;
  }
  const print = (toStderr, args) => host.print(toStderr, format(args));
  // `args` with `first` in front, as a list.
  const withFirst = (first, args) => { const l = listOf(first); for (let i = 0; i < args.length; i++) listPush(l, args[i]); return l; };
  const counts = new MapCtor();
  const consoleTimers = new MapCtor();
  const label = (l) => (l === undefined ? "default" : StringCtor(l));
  const console = {
    __proto__: null,
    log(...a) { print(false, a); },
    info(...a) { print(false, a); },
    debug(...a) { print(false, a); },
    warn(...a) { print(false, a); },
    error(...a) { print(false, a); },
    trace(...a) { print(false, withFirst("Trace:", a)); },
    assert(condition = false, ...a) { if (!condition) print(false, withFirst("Assertion failed:", a)); },
    count(l = undefined) { l = label(l); const n = (MapGet(counts, l) ?? 0) + 1; MapSet(counts, l, n); host.print(false, `${l}: ${n}`); },
    countReset(l = undefined) { MapDelete(counts, label(l)); },
    time(l = undefined) { MapSet(consoleTimers, label(l), host.now()); },
    timeEnd(l = undefined) {
      l = label(l);
      const t = MapGet(consoleTimers, l);
      if (t !== undefined) { MapDelete(consoleTimers, l); host.print(false, `${l}: ${host.now() - t}ms`); }
    },
    timeLog(l = undefined, ...a) {
      l = label(l);
      const t = MapGet(consoleTimers, l);
      if (t !== undefined) print(false, withFirst(`${l}: ${host.now() - t}ms`, a));
    },
    group(...a) { if (a.length) print(false, a); },
    groupEnd() {},
    table(d) { host.print(false, inspect(d)); },
    dir(d) { host.print(false, inspect(d)); },
  };
  // The console namespace object's prototype is an empty object whose prototype is
  // %Object.prototype% (https://console.spec.whatwg.org/#console-namespace).
  ObjectSetPrototypeOf(console, ObjectCreate(ObjectPrototype));

  // Timers (https://html.spec.whatwg.org/#timers): the event loop in Rust fires them.
  const timerTable = new MapCtor();
  let nextTimer = 1;
  function addTimer(handler, timeout, args, repeat) {
    const id = nextTimer++;
    timeout = NumberCtor(timeout) || 0;
    MapSet(timerTable, id, { __proto__: null, handler, args, repeat });
    host.setTimer(id, timeout < 0 ? 0 : timeout, repeat);
    return id;
  }
  function clearTimer(id = 0) { id = NumberCtor(id) >>> 0; if (MapDelete(timerTable, id)) host.clearTimer(id); }

  // performance (https://w3c.github.io/hr-time/)
  const timeOrigin = host.timeOrigin();
  const performanceOf = (p) => { if (p !== performance) throw new TypeErrorCtor("'this' is not a Performance"); };
  class Performance extends EventTarget {
    constructor() { throw illegal(); }
    now() { performanceOf(this); return host.now(); }
    get timeOrigin() { performanceOf(this); return timeOrigin; }
    // https://w3c.github.io/hr-time/#dom-performance-tojson
    toJSON() { performanceOf(this); const o = newPageObject(); defineData(o, "timeOrigin", timeOrigin); return o; }
  }
  tag(Performance, "Performance");
  const performance = makeEventTarget(Performance.prototype);

  // https://html.spec.whatwg.org/#dom-reporterror and the exceptions the prelude catches
  // (a listener's, a microtask's): reported like an uncaught one, with the error's own
  // message and position (read without running page code).
  function reportError(e) {
    const text = errorText(e);
    const isError = text !== null;
    const position = (key) => { const v = isError ? dataProperty(e, key) : undefined; return v === undefined ? undefined : v; };
    const fileName = position("fileName");
    const lineNumber = position("lineNumber");
    const columnNumber = position("columnNumber");
    report(e, isError ? text : `uncaught exception: ${inspect(e, 1)}`,
      typeof fileName === "string" ? fileName : "", typeof lineNumber === "number" ? lineNumber : 0,
      typeof columnNumber === "number" ? columnNumber : 0);
  }
  // https://html.spec.whatwg.org/#report-an-exception
  function report(error, message, filename, line, column) {
    const event = trustedEvent(ErrorEvent, "error", { __proto__: null, cancelable: true, message, filename, lineno: line, colno: column, error });
    const notHandled = dispatch(global, event);
    // A worker's unhandled exceptions go to its Worker object in the creator's realm.
    if (notHandled && init.worker) host.workerError(StringCtor(message), StringCtor(filename), line, column);
    else if (notHandled) host.print(true, `Uncaught ${message}` + (filename ? ` (${filename}:${line}:${column})` : ""));
  }
