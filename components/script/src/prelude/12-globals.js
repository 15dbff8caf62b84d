
  // ---------------------------------------------------------------------------------------
  // The global scope's own operations (https://html.spec.whatwg.org/#windoworworkerglobalscope-mixin,
  // https://html.spec.whatwg.org/#dedicated-workers-and-the-dedicatedworkerglobalscope-interface),
  // installed after 12-fetch.js's `api` object (the global's attributes and interfaces).
  const RESOLVED = resolvedPromise(undefined);
  const BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const invalidCharacter = (what) => new DOMException(`${what}: invalid character`, "InvalidCharacterError");
  const globalOperations = {
    __proto__: null,
    // https://html.spec.whatwg.org/#dom-structuredclone
    structuredClone(value, options = undefined) {
      if (arguments.length === 0) throw new TypeErrorCtor("structuredClone: 1 argument required");
      return structuredCloneWithTransfer(value, transferOption(options));
    },
    // https://html.spec.whatwg.org/#dom-settimeout: a handler that is not a function is a
    // string of script, evaluated when the timer fires.
    setTimeout(handler, timeout = 0, ...args) {
      return addTimer(typeof handler === "function" ? handler : StringCtor(handler), timeout, args, false);
    },
    setInterval(handler, timeout = 0, ...args) {
      return addTimer(typeof handler === "function" ? handler : StringCtor(handler), timeout, args, true);
    },
    // https://html.spec.whatwg.org/#dom-queuemicrotask: the callback runs as a microtask
    // (a reaction to an engine-made, already resolved promise: nothing the page could have
    // replaced runs first), its exception reported.
    queueMicrotask(callback) {
      if (typeof callback !== "function") throw new TypeErrorCtor("queueMicrotask: argument is not a function");
      whenSettled(RESOLVED, () => {
        try { ReflectApply(callback, undefined, []); } catch (e) { reportError(e); }
      }, null);
    },
    // https://html.spec.whatwg.org/#dom-btoa
    btoa(data) {
      const s = StringCtor(data);
      let out = "";
      for (let i = 0; i < s.length; i += 3) {
        const c0 = StringPrototypeCharCodeAt(s, i);
        const c1 = i + 1 < s.length ? StringPrototypeCharCodeAt(s, i + 1) : 0;
        const c2 = i + 2 < s.length ? StringPrototypeCharCodeAt(s, i + 2) : 0;
        // 1. If data contains any code point greater than U+00FF, throw.
        if (c0 > 0xff || c1 > 0xff || c2 > 0xff) throw invalidCharacter("btoa");
        const n = (c0 << 16) | (c1 << 8) | c2;
        out += BASE64[n >> 18] + BASE64[(n >> 12) & 63] + (i + 1 < s.length ? BASE64[(n >> 6) & 63] : "=") +
          (i + 2 < s.length ? BASE64[n & 63] : "=");
      }
      return out;
    },
    // https://html.spec.whatwg.org/#dom-atob: forgiving-base64 decode
    // (https://infra.spec.whatwg.org/#forgiving-base64-decode).
    atob(data) {
      const input = StringCtor(data);
      // 1. Remove all ASCII whitespace from data.
      let s = "";
      for (let i = 0; i < input.length; i++) {
        if (!isASCIIWhitespace(StringPrototypeCharCodeAt(input, i))) s += input[i];
      }
      // 2. If data's length divides by 4 leaving no remainder, remove one or two trailing "=".
      if (s.length % 4 === 0 && StringPrototypeCharCodeAt(s, s.length - 1) === 0x3d) {
        s = StringPrototypeSlice(s, 0, StringPrototypeCharCodeAt(s, s.length - 2) === 0x3d ? -2 : -1);
      }
      // 3. If data's length divides by 4 leaving a remainder of 1, return failure.
      if (s.length % 4 === 1) throw invalidCharacter("atob");
      let bits = 0, n = 0, out = "";
      for (let i = 0; i < s.length; i++) {
        // 4. If data contains a code point that is not base64 alphabet, return failure.
        const v = StringPrototypeIndexOf(BASE64, s[i]);
        if (v < 0) throw invalidCharacter("atob");
        n = (n << 6) | v;
        bits += 6;
        if (bits >= 8) { bits -= 8; out += StringFromCharCode((n >> bits) & 255); }
      }
      return out;
    },
  };
  // A dedicated worker's global (https://html.spec.whatwg.org/#dedicatedworkerglobalscope).
  const workerOperations = {
    __proto__: null,
    // https://html.spec.whatwg.org/#dom-dedicatedworkerglobalscope-postmessage
    postMessage(message, options = undefined) {
      host.workerPost(-1, serialize(message, transferArg(options)));
    },
    // https://html.spec.whatwg.org/#dom-dedicatedworkerglobalscope-close
    close() { host.workerTerminate(-1); },
    // https://html.spec.whatwg.org/#dom-workerglobalscope-importscripts: every URL parsed
    // first (a SyntaxError if one fails), then fetched and run in order, synchronously.
    importScripts(...urls) {
      const resolved = list();
      for (let i = 0; i < urls.length; i++) {
        const u = StringCtor(urls[i]);
        try { listPush(resolved, parseURL(u, init.url).href); } catch {
          throw new DOMException(`Failed to execute 'importScripts': '${u}' is not a valid URL.`, "SyntaxError");
        }
      }
      for (let i = 0; i < resolved.length; i++) {
        const failed = host.importScript(resolved[i]);
        if (failed !== undefined) throw new DOMException(`Failed to execute 'importScripts': ${failed}`, "NetworkError");
      }
    },
  };
  {
    const install = (operations) => {
      const names = ObjectKeys(operations);
      for (let i = 0; i < names.length; i++) {
        ObjectDefineProperty(global, names[i], dataDescriptor(operations[names[i]], true, false, true));
      }
    };
    install(globalOperations);
    if (init.worker) install(workerOperations);
  }
