  // ---------------------------------------------------------------------------------------
  // URL and URLSearchParams (https://url.spec.whatwg.org/), parsed by the `url` crate.
  function parseURL(input, base, setter, value) {
    const parts = JSONParse(host.parseURL(String(input), base === undefined ? undefined : String(base),
      setter, value === undefined ? undefined : String(value)));
    if (parts.error) throw new TypeError(parts.error);
    return parts;
  }
  const urlState = new WeakMap();
  // A brand check, for fetch() and XMLHttpRequest bodies (12-fetch.js).
  let isURLSearchParams;
  class URLSearchParams {
    #brand;
    static { isURLSearchParams = (v) => v !== null && typeof v === "object" && #brand in v; }
    constructor(init = "") {
      this._list = [];
      this._url = null;
      if (typeof init === "object" && init !== null) {
        if (typeof init[Symbol.iterator] === "function") {
          for (const pair of init) {
            const p = [...pair];
            if (p.length !== 2) throw new TypeError("URLSearchParams: each pair needs two values");
            this._list.push([String(p[0]), String(p[1])]);
          }
        } else {
          for (const k of Object.keys(init)) this._list.push([k, String(init[k])]);
        }
      } else {
        this._parse(String(init));
      }
    }
    _parse(s) {
      if (s.startsWith("?")) s = s.slice(1);
      this._list = [];
      for (const part of s.split("&")) {
        if (!part) continue;
        const i = part.indexOf("=");
        const dec = (x) => { try { return decodeURIComponent(x.replace(/\+/g, " ")); } catch { return x; } };
        this._list.push(i < 0 ? [dec(part), ""] : [dec(part.slice(0, i)), dec(part.slice(i + 1))]);
      }
    }
    _update() { if (this._url) { const q = this.toString(); this._url._set("query", q); } }
    get size() { return this._list.length; }
    append(k, v) { this._list.push([String(k), String(v)]); this._update(); }
    delete(k, v) { this._list = this._list.filter(([a, b]) => a !== String(k) || (v !== undefined && b !== String(v))); this._update(); }
    get(k) { const e = this._list.find(([a]) => a === String(k)); return e ? e[1] : null; }
    getAll(k) { return this._list.filter(([a]) => a === String(k)).map(([, b]) => b); }
    has(k, v) { return this._list.some(([a, b]) => a === String(k) && (v === undefined || b === String(v))); }
    set(k, v) {
      k = String(k); v = String(v);
      const i = this._list.findIndex(([a]) => a === k);
      if (i < 0) this._list.push([k, v]);
      else { this._list[i][1] = v; this._list = this._list.filter(([a], j) => a !== k || j === i); }
      this._update();
    }
    sort() { this._list.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)); this._update(); }
    forEach(cb, thisArg) { for (const [k, v] of this._list) cb.call(thisArg, v, k, this); }
    *entries() { for (const e of this._list) yield [e[0], e[1]]; }
    *keys() { for (const e of this._list) yield e[0]; }
    *values() { for (const e of this._list) yield e[1]; }
    [Symbol.iterator]() { return this.entries(); }
    toString() {
      const enc = (s) => encodeURIComponent(s).replace(/%20/g, "+").replace(/[!'()~]/g, (c) => "%" + c.charCodeAt(0).toString(16).toUpperCase());
      return this._list.map(([k, v]) => enc(k) + "=" + enc(v)).join("&");
    }
  }
  tag(URLSearchParams, "URLSearchParams");
  class URL {
    constructor(url, base) {
      if (arguments.length === 0) throw new TypeError("URL constructor: 1 argument required");
      urlState.set(this, { parts: parseURL(url, base), params: null });
    }
    static canParse(url, base) { try { parseURL(url, base); return true; } catch { return false; } }
    static parse(url, base) { try { return new URL(url, base); } catch { return null; } }
    _set(what, value) {
      const s = urlState.get(this);
      s.parts = parseURL(s.parts.href, undefined, what, value);
      if (what !== "query" && s.params) s.params._parse(s.parts.search);
    }
    get searchParams() {
      const s = urlState.get(this);
      if (!s.params) { s.params = new URLSearchParams(s.parts.search); s.params._url = this; }
      return s.params;
    }
    toString() { return urlState.get(this).parts.href; }
    toJSON() { return urlState.get(this).parts.href; }
  }
  for (const [prop, setter] of [["href", "href"], ["protocol", "protocol"], ["username", "username"],
    ["password", "password"], ["host", "host"], ["hostname", "hostname"], ["port", "port"],
    ["pathname", "pathname"], ["search", "search"], ["hash", "hash"], ["origin", null]]) {
    defineGetter(URL.prototype, prop, function () { return urlState.get(this).parts[prop]; },
      setter ? function (v) { this._set(setter, v); } : undefined);
  }
  tag(URL, "URL");

