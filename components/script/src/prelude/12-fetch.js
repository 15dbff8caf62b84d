  // fetch() (https://fetch.spec.whatwg.org/#fetch-method): GET through the engine's loader,
  // on another thread; the response comes back as a task (hooks.fetchDone).
  const fetches = new Map();
  let nextFetch = 1;
  class Headers {
    constructor(init = []) {
      this._list = Array.isArray(init) ? init.map(([k, v]) => [String(k).toLowerCase(), String(v)]) : Object.entries(init).map(([k, v]) => [k.toLowerCase(), String(v)]);
    }
    get(name) { const v = this._list.filter(([k]) => k === String(name).toLowerCase()).map(([, v]) => v); return v.length ? v.join(", ") : null; }
    has(name) { return this.get(name) !== null; }
    *entries() { yield* this._list; }
    [Symbol.iterator]() { return this.entries(); }
  }
  tag(Headers, "Headers");
  class Response {
    constructor(body, { status, url, headers, type = "basic" }) {
      this._body = body; this.status = status; this.url = url; this.headers = new Headers(headers);
      this.ok = status >= 200 && status < 300; this.bodyUsed = false; this.type = type;
      this.statusText = "";
    }
    _take() {
      if (this.bodyUsed) return Promise.reject(new TypeError("Body has already been consumed."));
      this.bodyUsed = true;
      return Promise.resolve(this._body);
    }
    text() { return this._take(); }
    json() { return this._take().then((t) => JSON.parse(t)); }
  }
  tag(Response, "Response");
  function fetch(input, init = {}) {
    return new Promise((resolve, reject) => {
      const method = String((init && init.method) || "GET").toUpperCase();
      if (method !== "GET") throw new TypeError(`fetch: only GET is supported (got ${method})`);
      const url = new URL(input instanceof URL ? input.href : String(input), location.href);
      if (url.protocol === "blob:") {
        const blob = blobURLs.get(url.href);
        if (!blob) throw new TypeError(`Failed to fetch: ${url.href} is not a live blob URL`);
        resolve(new Response(blobData.get(blob), { status: 200, url: url.href, headers: [["content-type", blob.type]] }));
        return;
      }
      const id = nextFetch++;
      fetches.set(id, { resolve, reject });
      const mode = init && init.mode !== undefined ? String(init.mode) : "cors";
      const credentials = init && init.credentials !== undefined ? String(init.credentials) : "same-origin";
      host.fetchStart(id, url.href, mode, credentials);
    });
  }

  // XMLHttpRequest (https://xhr.spec.whatwg.org/): GET over the engine's loader, in cors
  // mode (credentials "include" with withCredentials). A synchronous request blocks its
  // caller until the response is in (deprecated on a window's main thread, as in browsers,
  // but supported); an asynchronous one is a fetch() underneath. Request headers and bodies
  // are not sent (GET has none the engine needs).
  const xhrState = new WeakMap();
  const xhrOf = (x) => { const s = WeakMapGet(xhrState, x); if (!s) throw new TypeError("'this' is not an XMLHttpRequest"); return s; };
  class XMLHttpRequest extends EventTarget {
    constructor() {
      super();
      WeakMapSet(xhrState, this, { __proto__: null, readyState: 0, url: null, async: true, sent: false, withCredentials: false, response: null, generation: 0 });
    }
    get readyState() { return xhrOf(this).readyState; }
    get status() { const r = xhrOf(this).response; return r ? r.status : 0; }
    get statusText() { const r = xhrOf(this).response; return r && r.status === 200 ? "OK" : ""; }
    get responseURL() { const r = xhrOf(this).response; return r ? r.url : ""; }
    get responseText() { const r = xhrOf(this).response; return r ? r.body : ""; }
    get response() { return this.responseText; }
    get responseType() { return ""; }
    get withCredentials() { return xhrOf(this).withCredentials; }
    set withCredentials(v) { xhrOf(this).withCredentials = !!v; }
    // https://xhr.spec.whatwg.org/#the-open()-method
    open(method, url, async = true) {
      const s = xhrOf(this);
      method = StringCtor(method).toUpperCase();
      if (method !== "GET") throw new DOMException(`XMLHttpRequest: only GET is supported (got ${method})`, "NotSupportedError");
      let parsed;
      try { parsed = new URL(StringCtor(url), location.href); } catch { throw new DOMException(`XMLHttpRequest: '${url}' is not a valid URL`, "SyntaxError"); }
      s.url = parsed.href; s.async = !!async; s.sent = false; s.response = null; s.generation++;
      s.readyState = 1;
      fire(this, "readystatechange");
    }
    setRequestHeader(name, value) { if (xhrOf(this).readyState !== 1) throw new DOMException("XMLHttpRequest: not opened", "InvalidStateError"); }
    getResponseHeader(name) {
      const r = xhrOf(this).response;
      if (!r) return null;
      const want = StringCtor(name).toLowerCase();
      const v = r.headers.filter(([k]) => k === want).map(([, v]) => v);
      return v.length ? v.join(", ") : null;
    }
    getAllResponseHeaders() { const r = xhrOf(this).response; return r ? r.headers.map(([k, v]) => `${k}: ${v}\r\n`).join("") : ""; }
    abort() { const s = xhrOf(this); s.generation++; if (s.sent) { s.sent = false; s.readyState = 0; fire(this, "abort"); fire(this, "loadend"); } }
    // https://xhr.spec.whatwg.org/#the-send()-method
    send(body = null) {
      const s = xhrOf(this);
      if (s.readyState !== 1 || s.sent) throw new DOMException("XMLHttpRequest: not opened, or already sent", "InvalidStateError");
      s.sent = true;
      const credentials = s.withCredentials ? "include" : "same-origin";
      const finish = (r) => {
        s.sent = false;
        if (r.error !== undefined || r.type === "opaque") {
          s.readyState = 4; s.response = null;
          fire(this, "readystatechange");
          if (!s.async) throw new DOMException(`Failed to load '${s.url}': ${r.error ?? "blocked by CORS"}`, "NetworkError");
          fire(this, "error"); fire(this, "loadend");
          return;
        }
        s.response = r;
        s.readyState = 4;
        fire(this, "readystatechange"); fire(this, "load"); fire(this, "loadend");
      };
      if (!s.async) { finish(JSONParse(host.fetchSync(s.url, credentials))); return; }
      const generation = s.generation;
      PromisePrototypeThen(fetch(s.url, { __proto__: null, mode: "cors", credentials }), (resp) =>
        PromisePrototypeThen(resp.text(), (text) => {
          if (s.generation === generation) finish({ __proto__: null, type: resp.type, status: resp.status, url: resp.url, headers: [...resp.headers.entries()], body: text });
        }), (e) => { if (s.generation === generation) finish({ __proto__: null, error: StringCtor(e && e.message) }); });
    }
  }
  for (const [n, v] of [["UNSENT", 0], ["OPENED", 1], ["HEADERS_RECEIVED", 2], ["LOADING", 3], ["DONE", 4]]) {
    ObjectDefineProperty(XMLHttpRequest, n, dataDescriptor(v, false, true, false));
    ObjectDefineProperty(XMLHttpRequest.prototype, n, dataDescriptor(v, false, true, false));
  }
  for (const name of ["readystatechange", "load", "error", "loadend", "abort"]) defineHandler(XMLHttpRequest.prototype, name);
  tag(XMLHttpRequest, "XMLHttpRequest");

  const api = {
    window: global, self: global, frames: global, opener: null,
    document, location, console, performance, name: "", length: 0, closed: false,
    origin: locationParts.origin, isSecureContext: locationParts.protocol === "https:" || /^(localhost|127\.0\.0\.1)$/.test(locationParts.hostname) || locationParts.protocol === "file:",
    crossOriginIsolated: !!init.crossOriginIsolated,
    navigator: Object.freeze({ userAgent: "jsprof (SpiderMonkey)", language: "en-US", languages: ["en-US"], hardwareConcurrency: 1 }),
    EventTarget, Event, CustomEvent, ErrorEvent, PromiseRejectionEvent, MouseEvent, DOMException, Window,
    Node, Element, HTMLElement, HTMLScriptElement, HTMLIFrameElement, HTMLMetaElement, HTMLAnchorElement,
    HTMLImageElement, HTMLFormElement, HTMLInputElement, HTMLButtonElement, HTMLTextAreaElement, HTMLOptionElement,
    HTMLSelectElement, Text, Document, Location,
    URL, URLSearchParams, Performance, Headers, Response, fetch, XMLHttpRequest,
    MessageEvent, MessageChannel, MessagePort, Blob, postMessage,
    structuredClone(value, options = {}) { return structuredCloneWithTransfer(value, (options && options.transfer) || []); },
    setTimeout(handler, timeout = 0, ...args) { return addTimer(handler, timeout, args, false); },
    setInterval(handler, timeout = 0, ...args) { return addTimer(handler, timeout, args, true); },
    clearTimeout: clearTimer,
    clearInterval: clearTimer,
    queueMicrotask(callback) {
      if (typeof callback !== "function") throw new TypeError("queueMicrotask: argument is not a function");
      // A microtask without `then`: an async function awaiting a non-promise.
      (async () => { await undefined; try { callback(); } catch (e) { reportError(e); } })();
    },
    reportError,
    btoa(s) { s = String(s); if (/[^\0-\xff]/.test(s)) throw new DOMException("btoa: character out of range", "InvalidCharacterError"); const k = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"; let o = ""; for (let i = 0; i < s.length; i += 3) { const n = (s.charCodeAt(i) << 16) | ((s.charCodeAt(i + 1) || 0) << 8) | (s.charCodeAt(i + 2) || 0); o += k[n >> 18] + k[(n >> 12) & 63] + (i + 1 < s.length ? k[(n >> 6) & 63] : "=") + (i + 2 < s.length ? k[n & 63] : "="); } return o; },
    atob(s) { s = String(s).replace(/[\t\n\f\r ]/g, ""); if (s.length % 4 === 0) s = s.replace(/==?$/, ""); if (s.length % 4 === 1 || /[^A-Za-z0-9+/]/.test(s)) throw new DOMException("atob: invalid base64", "InvalidCharacterError"); const k = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"; let bits = 0, n = 0, o = ""; for (const c of s) { n = (n << 6) | k.indexOf(c); bits += 6; if (bits >= 8) { bits -= 8; o += String.fromCharCode((n >> bits) & 255); } } return o; },
  };
  if (init.worker) {
    // A worker's global: no document, no window; postMessage and close go to the engine.
    for (const name of ["window", "document", "frames", "opener", "Window", "Node", "Element", "HTMLElement",
      "HTMLScriptElement", "HTMLIFrameElement", "HTMLMetaElement", "HTMLAnchorElement", "HTMLImageElement",
      "HTMLFormElement", "HTMLInputElement", "HTMLButtonElement", "HTMLTextAreaElement", "HTMLOptionElement",
      "HTMLSelectElement", "Text", "Document"]) delete api[name];
    api.postMessage = function postMessage(message, transfer = []) {
      if (!Array.isArray(transfer) && transfer && typeof transfer === "object") transfer = transfer.transfer ?? [];
      host.workerPost(-1, serialize(message, transfer));
    };
    api.close = function close() { host.workerTerminate(-1); };
    // https://html.spec.whatwg.org/#dom-workerglobalscope-importscripts: fetched and run in
    // order, synchronously.
    api.importScripts = function importScripts(...urls) {
      const resolved = urls.map((u) => new URL(String(u), location.href).href);
      for (const u of resolved) {
        const failed = host.importScript(u);
        if (failed !== undefined) throw new DOMException(`Failed to execute 'importScripts': ${failed}`, "NetworkError");
      }
    };
    api.DedicatedWorkerGlobalScope = Window;
    api.WorkerGlobalScope = Window;
    for (const name of ["message", "messageerror"]) defineHandler(Window.prototype, name);
  }
  api.Worker = Worker;
  // parent and top: from the engine's frame tree (this window at the top).
  if (!init.worker) Object.defineProperty(global, "parent", { get: () => windowProxy(host.frameTree(init.windowIndex, -1)) ?? global, enumerable: true, configurable: true });
  if (!init.worker) Object.defineProperty(global, "top", { get: () => windowProxy(host.frameTree(init.windowIndex, -2)), enumerable: true, configurable: false });
  if (!init.worker) Object.defineProperty(global, "length", { get: () => host.frameTree(init.windowIndex, -3), enumerable: true, configurable: true });
  delete api.length;
  for (const [name, value] of Object.entries(api)) {
    const readonly = ["window", "self", "document", "location"].includes(name);
    Object.defineProperty(global, name, readonly
      ? { value, enumerable: true, configurable: false, writable: false }
      : { value, enumerable: typeof value !== "function", configurable: true, writable: true });
  }

