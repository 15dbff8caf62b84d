  // ---------------------------------------------------------------------------------------
  // Fetch (https://fetch.spec.whatwg.org/): Headers, Request, Response, fetch(), and
  // XMLHttpRequest (https://xhr.spec.whatwg.org/). The network part of fetching (main fetch:
  // CORS, the preflight and its cache, redirects, bodies) is the engine's (components/net);
  // here are the APIs: their WebIDL conversions, the Headers guards, extracting bodies, and
  // the responses the engine hands back as a task (hooks.fetchDone → finishFetch).
  //
  // Page-reachable paths run on primordials only: internal state is in private fields,
  // internal lists are null-prototype arrays walked by index, and promises are made with the
  // original constructor and settled directly. A page's own objects (an init dictionary, an
  // iterable of headers, a body's toString) are read exactly where the standards read them.
  // Bodies are byte strings (one code unit per byte, what a WebIDL ByteString is): the form
  // the engine takes and gives them in (JsprofHost's ByteString arguments).

  // WebIDL conversions (https://webidl.spec.whatwg.org/#js-type-mapping).
  const toDOMString = (v) => {
    if (typeof v === "symbol") throw new TypeErrorCtor("Cannot convert a Symbol value to a string");
    return StringCtor(v);
  };
  const toUSVString = (v) => StringPrototypeToWellFormed(toDOMString(v));
  function toByteString(v) {
    const s = toDOMString(v);
    for (let i = 0; i < s.length; i++) {
      if (StringPrototypeCharCodeAt(s, i) > 255) throw new TypeErrorCtor(`Cannot convert '${s}' to a ByteString: a character is above U+00FF`);
    }
    return s;
  }
  function toEnum(v, values, name) {
    const s = toDOMString(v);
    for (let i = 0; i < values.length; i++) if (values[i] === s) return s;
    throw new TypeErrorCtor(`'${s}' is not a valid value for enumeration ${name}`);
  }
  // https://webidl.spec.whatwg.org/#es-unsigned-short
  function toUnsignedShort(v) {
    if (typeof v === "bigint") throw new TypeErrorCtor("Cannot convert a BigInt value to a number");
    let x = NumberCtor(v);
    if (!NumberIsFinite(x) || x === 0) return 0;
    x = MathTrunc(x) % 65536;
    return x < 0 ? x + 65536 : x;
  }
  const isObject = (v) => v !== null && (typeof v === "object" || typeof v === "function");
  // A dictionary argument: undefined and null are empty, anything else must be an object.
  function dictionaryOf(v, name) {
    if (v === undefined || v === null) return null;
    if (!isObject(v)) throw new TypeErrorCtor(`${name}: the argument is not an object`);
    return v;
  }
  function requireArgs(given, needed, what) {
    if (given < needed) throw new TypeErrorCtor(`${what}: ${needed} argument${needed > 1 ? "s" : ""} required, but only ${given} present`);
  }
  // Create a sequence from an iterable (https://webidl.spec.whatwg.org/#create-sequence-from-iterable):
  // the page's iterator, stepped by hand.
  function iterableToList(value, method) {
    const iterator = ReflectApply(method, value, list());
    if (!isObject(iterator)) throw new TypeErrorCtor("The iterator is not an object");
    const next = iterator.next;
    const out = list();
    for (;;) {
      const step = ReflectApply(next, iterator, list());
      if (!isObject(step)) throw new TypeErrorCtor("The iterator result is not an object");
      if (step.done) return out;
      listPush(out, step.value);
    }
  }
  // The URL parser against this global's base URL: the parts, or null on failure.
  function parseRequestURL(input) {
    const parts = JSONParse(host.parseURL(input, init.url));
    return ObjectHasOwn(parts, "error") ? null : parts;
  }
  const withoutFragment = (url) => {
    const hash = StringPrototypeIndexOf(url, "#");
    return hash < 0 ? url : StringPrototypeSlice(url, 0, hash);
  };
  const resolvedPromise = (v) => new OriginalPromise((resolve) => resolve(v));
  const rejectedPromise = (e) => new OriginalPromise((resolve, reject) => reject(e));
  // A method (https://fetch.spec.whatwg.org/#concept-method): a token, byte-wise.
  function isMethodToken(m) {
    if (m.length === 0) return false;
    for (let i = 0; i < m.length; i++) {
      const c = StringPrototypeCharCodeAt(m, i);
      const alnum = (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
      if (!alnum && StringPrototypeIndexOf("!#$%&'*+-.^_`|~", StringFromCharCode(c)) < 0) return false;
    }
    return true;
  }
  const FORBIDDEN_METHODS = ["CONNECT", "TRACE", "TRACK"];
  const NORMALIZED_METHODS = ["DELETE", "GET", "HEAD", "OPTIONS", "POST", "PUT"];
  const isForbiddenMethod = (m) => {
    const upper = StringPrototypeToUpperCase(m);
    for (let i = 0; i < FORBIDDEN_METHODS.length; i++) if (FORBIDDEN_METHODS[i] === upper) return true;
    return false;
  };
  // https://fetch.spec.whatwg.org/#concept-method-normalize
  const normalizeMethod = (m) => {
    const upper = StringPrototypeToUpperCase(m);
    for (let i = 0; i < NORMALIZED_METHODS.length; i++) if (NORMALIZED_METHODS[i] === upper) return upper;
    return m;
  };
  const isCORSSafelistedMethod = (m) => m === "GET" || m === "HEAD" || m === "POST";

  // Header lists (https://fetch.spec.whatwg.org/#concept-header-list): internal lists of
  // {name, value} records; names are tokens (ASCII), values byte strings.
  const HEADER_NAME = 1, HEADER_VALUE = 2, FORBIDDEN_REQUEST = 4, FORBIDDEN_RESPONSE_NAME = 8,
    NO_CORS_SAFELISTED = 16, PRIVILEGED_NO_CORS_NAME = 32;
  const lowerName = (name) => StringPrototypeToLowerCase(name);
  const header = (name, value) => ({ __proto__: null, name, value });
  function headerListGet(l, name) {
    const n = lowerName(name);
    let out = null;
    for (let i = 0; i < l.length; i++) {
      if (lowerName(l[i].name) === n) out = out === null ? l[i].value : `${out}, ${l[i].value}`;
    }
    return out;
  }
  function headerListContains(l, name) {
    const n = lowerName(name);
    for (let i = 0; i < l.length; i++) if (lowerName(l[i].name) === n) return true;
    return false;
  }
  function headerListDelete(l, name) {
    const n = lowerName(name);
    let j = 0;
    for (let i = 0; i < l.length; i++) if (lowerName(l[i].name) !== n) l[j++] = l[i];
    l.length = j;
  }
  // https://fetch.spec.whatwg.org/#concept-header-list-append: the first name's case wins.
  function headerListAppend(l, name, value) {
    const n = lowerName(name);
    for (let i = 0; i < l.length; i++) if (lowerName(l[i].name) === n) { name = l[i].name; break; }
    listPush(l, header(name, value));
  }
  // https://fetch.spec.whatwg.org/#concept-header-list-set
  function headerListSet(l, name, value) {
    const n = lowerName(name);
    let found = false, j = 0;
    for (let i = 0; i < l.length; i++) {
      const h = l[i];
      if (lowerName(h.name) === n) {
        if (found) continue;
        found = true;
        h.value = value;
      }
      l[j++] = h;
    }
    l.length = j;
    if (!found) listPush(l, header(name, value));
  }
  // https://fetch.spec.whatwg.org/#concept-header-list-combine
  function headerListCombine(l, name, value) {
    const n = lowerName(name);
    for (let i = 0; i < l.length; i++) {
      if (lowerName(l[i].name) === n) { l[i].value = `${l[i].value}, ${value}`; return; }
    }
    listPush(l, header(name, value));
  }
  function headerListCopy(l) {
    const out = list();
    for (let i = 0; i < l.length; i++) listPush(out, header(l[i].name, l[i].value));
    return out;
  }
  // https://fetch.spec.whatwg.org/#concept-header-list-sort-and-combine: lowercase names in
  // byte order, values combined (each Set-Cookie on its own).
  function sortAndCombine(l) {
    const names = list();
    for (let i = 0; i < l.length; i++) {
      const n = lowerName(l[i].name);
      let seen = false;
      for (let j = 0; j < names.length; j++) if (names[j] === n) { seen = true; break; }
      if (!seen) {
        let k = names.length;
        listPush(names, n);
        while (k > 0 && names[k - 1] > n) { names[k] = names[k - 1]; k--; }
        names[k] = n;
      }
    }
    const out = list();
    for (let i = 0; i < names.length; i++) {
      const n = names[i];
      if (n === "set-cookie") {
        for (let j = 0; j < l.length; j++) if (lowerName(l[j].name) === n) listPush(out, header(n, l[j].value));
      } else {
        listPush(out, header(n, headerListGet(l, n)));
      }
    }
    return out;
  }
  // The header list as the engine takes it: a "name:value" line per header.
  function headerLines(l) {
    let s = "";
    for (let i = 0; i < l.length; i++) s += `${l[i].name}:${l[i].value}\n`;
    return s;
  }
  const isHTTPWhitespace = (c) => c === 9 || c === 10 || c === 13 || c === 32;
  // https://fetch.spec.whatwg.org/#concept-header-value-normalize
  function normalizeHeaderValue(v) {
    let start = 0, end = v.length;
    while (start < end && isHTTPWhitespace(StringPrototypeCharCodeAt(v, start))) start++;
    while (end > start && isHTTPWhitespace(StringPrototypeCharCodeAt(v, end - 1))) end--;
    return StringPrototypeSlice(v, start, end);
  }
  const isHeaderName = (name) => (host.headerInfo(name, "") & HEADER_NAME) !== 0;

  // HeadersInit (https://fetch.spec.whatwg.org/#typedefdef-headersinit): a sequence of
  // sequences or a record, converted as WebIDL converts the union.
  function convertHeadersInit(v) {
    if (!isObject(v)) throw new TypeErrorCtor("HeadersInit must be an object");
    const method = v[SymbolIterator];
    const pairs = list();
    if (method !== undefined && method !== null) {
      const outer = iterableToList(v, method);
      for (let i = 0; i < outer.length; i++) {
        const item = outer[i];
        if (!isObject(item)) throw new TypeErrorCtor("Each header must be a sequence of a name and a value");
        const inner = item[SymbolIterator];
        if (typeof inner !== "function") throw new TypeErrorCtor("Each header must be a sequence of a name and a value");
        const values = iterableToList(item, inner);
        const converted = list();
        for (let j = 0; j < values.length; j++) listPush(converted, toByteString(values[j]));
        listPush(pairs, converted);
      }
      return pairs;
    }
    // record<ByteString, ByteString> (https://webidl.spec.whatwg.org/#es-record).
    const keys = ReflectOwnKeys(v);
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i];
      const desc = ReflectGetOwnPropertyDescriptor(v, key);
      if (desc === undefined || !desc.enumerable) continue;
      const name = toByteString(key);
      const value = toByteString(v[key]);
      const pair = list();
      listPush(pair, name);
      listPush(pair, value);
      listPush(pairs, pair);
    }
    return pairs;
  }

  // Headers (https://fetch.spec.whatwg.org/#headers-class).
  let headersList, headersGuard, setHeadersGuard, isHeaders;
  class Headers {
    #list = list();
    #guard = "none";
    // https://fetch.spec.whatwg.org/#dom-headers
    constructor(init = undefined) {
      const pairs = init === undefined ? null : convertHeadersInit(init);
      // Step 1. Set this's guard to "none". Step 2. If init is given, fill this with init.
      if (pairs !== null) fillHeaders(this, pairs);
    }
    // https://fetch.spec.whatwg.org/#dom-headers-append
    append(name, value) {
      requireArgs(arguments.length, 2, "Headers.append");
      appendHeader(this, toByteString(name), toByteString(value));
    }
    // https://fetch.spec.whatwg.org/#dom-headers-delete
    delete(name) {
      requireArgs(arguments.length, 1, "Headers.delete");
      name = toByteString(name);
      // Step 1. If validating (name, ``) for this returns false, then return.
      if (!validateHeader(this, name, "")) return;
      // Step 2. A request-no-cors guard lets only safelisted names be deleted.
      const info = host.headerInfo(name, "");
      if (this.#guard === "request-no-cors" && !isNoCorsSafelistedName(name) && !(info & PRIVILEGED_NO_CORS_NAME)) return;
      // Step 3. If this's header list does not contain name, then return.
      if (!headerListContains(this.#list, name)) return;
      // Step 4. Delete name from this's header list.
      headerListDelete(this.#list, name);
      // Step 5. If this's guard is "request-no-cors", then remove privileged no-CORS
      // request-headers from this.
      if (this.#guard === "request-no-cors") headerListDelete(this.#list, "range");
    }
    // https://fetch.spec.whatwg.org/#dom-headers-get
    get(name) {
      requireArgs(arguments.length, 1, "Headers.get");
      name = toByteString(name);
      // Step 1. If name is not a header name, then throw a TypeError.
      if (!isHeaderName(name)) throw new TypeErrorCtor(`'${name}' is not a valid header name`);
      // Step 2. Return the result of getting name from this's header list.
      return headerListGet(this.#list, name);
    }
    // https://fetch.spec.whatwg.org/#dom-headers-getsetcookie
    getSetCookie() {
      const out = [];
      for (let i = 0; i < this.#list.length; i++) {
        if (lowerName(this.#list[i].name) === "set-cookie") ObjectDefineProperty(out, out.length, dataDescriptor(this.#list[i].value, true, true, true));
      }
      return out;
    }
    // https://fetch.spec.whatwg.org/#dom-headers-has
    has(name) {
      requireArgs(arguments.length, 1, "Headers.has");
      name = toByteString(name);
      if (!isHeaderName(name)) throw new TypeErrorCtor(`'${name}' is not a valid header name`);
      return headerListContains(this.#list, name);
    }
    // https://fetch.spec.whatwg.org/#dom-headers-set
    set(name, value) {
      requireArgs(arguments.length, 2, "Headers.set");
      name = toByteString(name);
      // Step 1. Normalize value.
      value = normalizeHeaderValue(toByteString(value));
      // Step 2. If validating (name, value) for this returns false, then return.
      if (!validateHeader(this, name, value)) return;
      // Step 3. A request-no-cors guard takes only no-CORS-safelisted request-headers.
      if (this.#guard === "request-no-cors" && !(host.headerInfo(name, value) & NO_CORS_SAFELISTED)) return;
      // Step 4. Set (name, value) in this's header list.
      headerListSet(this.#list, name, value);
      // Step 5. If this's guard is "request-no-cors", then remove privileged no-CORS
      // request-headers from this.
      if (this.#guard === "request-no-cors") headerListDelete(this.#list, "range");
    }
    // The pair iterator (https://webidl.spec.whatwg.org/#es-forEach): over the sorted and
    // combined list, recomputed at each step.
    forEach(callback, thisArg = undefined) {
      requireArgs(arguments.length, 1, "Headers.forEach");
      if (typeof callback !== "function") throw new TypeErrorCtor("Headers.forEach: the callback is not a function");
      for (let i = 0; ; i++) {
        const pairs = sortAndCombine(this.#list);
        if (i >= pairs.length) return;
        const args = list();
        listPush(args, pairs[i].value);
        listPush(args, pairs[i].name);
        listPush(args, this);
        ReflectApply(callback, thisArg, args);
      }
    }
    entries() { return makeHeadersIterator(this, "key+value"); }
    keys() { return makeHeadersIterator(this, "key"); }
    values() { return makeHeadersIterator(this, "value"); }
    static {
      headersList = (h) => h.#list;
      headersGuard = (h) => h.#guard;
      setHeadersGuard = (h, guard) => { h.#guard = guard; };
      isHeaders = (v) => isObject(v) && #list in v;
    }
  }
  ObjectDefineProperty(Headers.prototype, SymbolIterator, dataDescriptor(Headers.prototype.entries, true, false, true));
  tag(Headers, "Headers");
  const isNoCorsSafelistedName = (name) => {
    const n = lowerName(name);
    return n === "accept" || n === "accept-language" || n === "content-language" || n === "content-type";
  };
  // https://fetch.spec.whatwg.org/#headers-validate
  function validateHeader(headers, name, value) {
    const info = host.headerInfo(name, value);
    // Step 1. If name is not a header name or value is not a header value, then throw a TypeError.
    if (!(info & HEADER_NAME)) throw new TypeErrorCtor(`'${name}' is not a valid header name`);
    if (!(info & HEADER_VALUE)) throw new TypeErrorCtor(`'${value}' is not a valid value for header '${name}'`);
    const guard = headersGuard(headers);
    // Step 2. If headers's guard is "immutable", then throw a TypeError.
    if (guard === "immutable") throw new TypeErrorCtor("These headers are immutable");
    // Step 3. A forbidden request-header is ignored in a request's headers.
    if (guard === "request" && (info & FORBIDDEN_REQUEST)) return false;
    // Step 4. A forbidden response-header name is ignored in a response's headers.
    if (guard === "response" && (info & FORBIDDEN_RESPONSE_NAME)) return false;
    return true;
  }
  // https://fetch.spec.whatwg.org/#concept-headers-append
  function appendHeader(headers, name, value) {
    // Step 1. Normalize value.
    value = normalizeHeaderValue(value);
    // Step 2. If validating (name, value) for headers returns false, then return.
    if (!validateHeader(headers, name, value)) return;
    const l = headersList(headers);
    // Step 3. A request-no-cors guard takes only what keeps the combined value safelisted.
    if (headersGuard(headers) === "request-no-cors") {
      const current = headerListGet(l, name);
      const temporary = current === null ? value : `${current}, ${value}`;
      if (!(host.headerInfo(name, temporary) & NO_CORS_SAFELISTED)) return;
    }
    // Step 4. Append (name, value) to headers's header list.
    headerListAppend(l, name, value);
    // Step 5. Remove privileged no-CORS request-headers under request-no-cors.
    if (headersGuard(headers) === "request-no-cors") headerListDelete(l, "range");
  }
  // https://fetch.spec.whatwg.org/#concept-headers-fill
  function fillHeaders(headers, pairs) {
    for (let i = 0; i < pairs.length; i++) {
      // A header must be exactly a name and a value.
      if (pairs[i].length !== 2) throw new TypeErrorCtor("Each header must be a sequence of a name and a value");
      appendHeader(headers, pairs[i][0], pairs[i][1]);
    }
  }
  // A Headers object of the engine's own, with `l` as its list and `guard`.
  function makeHeaders(l, guard) {
    const h = new Headers();
    const own = headersList(h);
    for (let i = 0; i < l.length; i++) listPush(own, header(l[i].name, l[i].value));
    setHeadersGuard(h, guard);
    return h;
  }
  // The Headers iterator (https://webidl.spec.whatwg.org/#es-iterator-prototype-object).
  class HeadersIterator {
    #target; #kind; #index = 0;
    constructor(key, target, kind) {
      if (key !== ILLEGAL) throw new TypeErrorCtor("Illegal constructor");
      this.#target = target;
      this.#kind = kind;
    }
    next() {
      const pairs = sortAndCombine(headersList(this.#target));
      const i = this.#index;
      if (i >= pairs.length) return { value: undefined, done: true };
      this.#index = i + 1;
      const p = pairs[i];
      const value = this.#kind === "key" ? p.name : this.#kind === "value" ? p.value : [p.name, p.value];
      return { value, done: false };
    }
  }
  ObjectSetPrototypeOf(HeadersIterator.prototype, IteratorPrototype);
  ReflectDeleteProperty(HeadersIterator.prototype, "constructor");
  ObjectDefineProperty(HeadersIterator.prototype, SymbolToStringTag, dataDescriptor("Headers Iterator", false, false, true));
  const makeHeadersIterator = (headers, kind) => {
    headersList(headers); // a TypeError if `headers` is not a Headers object
    return new HeadersIterator(ILLEGAL, headers, kind);
  };

  // Bodies (https://fetch.spec.whatwg.org/#bodies).
  // BodyInit's union conversion (https://fetch.spec.whatwg.org/#bodyinit-unions): a tagged
  // value, BufferSources copied as they are now.
  const URLSearchParamsToString = uncurry(URLSearchParams.prototype.toString);
  const BlobPrototypeGetType = getterOf(Blob.prototype, "type");
  function convertBodyInit(v) {
    if (isBlob(v)) return { __proto__: null, kind: "blob", value: v };
    if (isURLSearchParams(v)) return { __proto__: null, kind: "params", value: v };
    const bytes = bufferSourceBytes(v);
    if (bytes !== null) return { __proto__: null, kind: "bytes", value: bytes };
    return { __proto__: null, kind: "string", value: toUSVString(v) };
  }
  // extract a body (https://fetch.spec.whatwg.org/#concept-bodyinit-extract): its bytes and
  // its Content-Type (or null).
  function extractBody(body) {
    switch (body.kind) {
      case "blob": {
        const type = BlobPrototypeGetType(body.value);
        return { __proto__: null, bytes: blobBytes(body.value), type: type === "" ? null : type };
      }
      case "bytes":
        return { __proto__: null, bytes: body.value, type: null };
      case "params":
        return { __proto__: null, bytes: host.utf8Encode(URLSearchParamsToString(body.value)),
          type: "application/x-www-form-urlencoded;charset=UTF-8" };
      default:
        return { __proto__: null, bytes: host.utf8Encode(body.value), type: "text/plain;charset=UTF-8" };
    }
  }
  // A body's state: its bytes (null for no body) and whether it was read (disturbed).
  const bodyState = (bytes) => ({ __proto__: null, bytes, used: false });
  const bodyUnusable = (b) => b.bytes !== null && b.used;
  // consume body (https://fetch.spec.whatwg.org/#concept-body-consume-body), the body
  // already in memory: read at once, the promise settled with the conversion's result.
  function consumeBody(b, convert) {
    if (bodyUnusable(b)) return rejectedPromise(new TypeErrorCtor("Body has already been consumed."));
    if (b.bytes !== null) b.used = true;
    try {
      return resolvedPromise(convert(b.bytes === null ? "" : b.bytes));
    } catch (e) {
      return rejectedPromise(e);
    }
  }
  // The Body mixin's methods, for Request and Response (given their body and headers).
  const bodyMethods = (bodyOf, headersOf) => ({
    __proto__: null,
    arrayBuffer() { return consumeBody(bodyOf(this), bytesToArrayBuffer); },
    blob() {
      const b = bodyOf(this);
      const type = host.extractMimeType(headerListGet(headersList(headersOf(this)), "content-type") ?? "");
      return consumeBody(b, (bytes) => makeBlob(Blob.prototype, bytes, type));
    },
    bytes() { return consumeBody(bodyOf(this), bytesToUint8Array); },
    json() { return consumeBody(bodyOf(this), (bytes) => JSONParse(host.utf8Decode(bytes))); },
    text() { return consumeBody(bodyOf(this), (bytes) => host.utf8Decode(bytes)); },
  });
  function installBodyMethods(cls, bodyOf, headersOf) {
    const methods = bodyMethods(bodyOf, headersOf);
    const names = ["arrayBuffer", "blob", "bytes", "json", "text"];
    for (let i = 0; i < names.length; i++) ObjectDefineProperty(cls.prototype, names[i], dataDescriptor(methods[names[i]], true, true, true));
  }

  // Request (https://fetch.spec.whatwg.org/#request-class). Its request: method, URL, mode,
  // credentials and redirect modes, and the rest RequestInit sets; its headers a Headers
  // object (guard "request" or "request-no-cors"); its body a body state.
  const REQUEST_MODES = ["navigate", "same-origin", "no-cors", "cors"];
  const REQUEST_CREDENTIALS = ["omit", "same-origin", "include"];
  const REQUEST_CACHES = ["default", "no-store", "reload", "no-cache", "force-cache", "only-if-cached"];
  const REQUEST_REDIRECTS = ["follow", "error", "manual"];
  const REQUEST_DUPLEX = ["half"];
  const REQUEST_PRIORITIES = ["high", "low", "auto"];
  const REFERRER_POLICIES = ["", "no-referrer", "no-referrer-when-downgrade", "same-origin", "origin",
    "strict-origin", "origin-when-cross-origin", "strict-origin-when-cross-origin", "unsafe-url"];
  // RequestInit (https://fetch.spec.whatwg.org/#requestinit), members read and converted in
  // lexicographic order; `present` says whether the dictionary is not empty.
  function convertRequestInit(v) {
    const d = dictionaryOf(v, "RequestInit");
    const out = { __proto__: null, present: false };
    if (d === null) return out;
    const member = (name, convert) => {
      const x = d[name];
      if (x === undefined) return;
      out[name] = convert(x);
      out.present = true;
    };
    member("body", (x) => (x === null ? null : convertBodyInit(x)));
    member("cache", (x) => toEnum(x, REQUEST_CACHES, "RequestCache"));
    member("credentials", (x) => toEnum(x, REQUEST_CREDENTIALS, "RequestCredentials"));
    member("duplex", (x) => toEnum(x, REQUEST_DUPLEX, "RequestDuplex"));
    member("headers", convertHeadersInit);
    member("integrity", toDOMString);
    member("keepalive", (x) => !!x);
    member("method", toByteString);
    member("mode", (x) => toEnum(x, REQUEST_MODES, "RequestMode"));
    member("priority", (x) => toEnum(x, REQUEST_PRIORITIES, "RequestPriority"));
    member("redirect", (x) => toEnum(x, REQUEST_REDIRECTS, "RequestRedirect"));
    member("referrer", toUSVString);
    member("referrerPolicy", (x) => toEnum(x, REFERRER_POLICIES, "ReferrerPolicy"));
    // `signal`: jsprof has no AbortSignal; `window` may only be null.
    member("window", (x) => {
      if (x !== null) throw new TypeErrorCtor("RequestInit's window member must be null");
      return null;
    });
    return out;
  }
  const has = (o, name) => ObjectHasOwn(o, name);
  // The argument the engine's own Requests and Responses are made with: its fields are set
  // right after.
  const FROM_ENGINE = list();
  let requestOf, requestHeaders, requestBody, isRequest;
  class Request {
    #request;
    #headers;
    #body;
    // https://fetch.spec.whatwg.org/#dom-request
    constructor(input, init = undefined) {
      if (input === FROM_ENGINE) return;
      requireArgs(arguments.length, 1, "Request constructor");
      // RequestInfo: a Request, or a USVString.
      const inputIsRequest = isRequest(input);
      if (!inputIsRequest) input = toUSVString(input);
      const i = convertRequestInit(init);
      // Steps 1-4.
      let request, fallbackMode = null;
      if (!inputIsRequest) {
        // Step 5. Parse input with the API base URL: a failure, or credentials in it, is a
        // TypeError.
        const parsed = parseRequestURL(input);
        if (parsed === null) throw new TypeErrorCtor(`Failed to construct 'Request': '${input}' is not a valid URL`);
        if (parsed.username !== "" || parsed.password !== "") throw new TypeErrorCtor(`Failed to construct 'Request': '${input}' includes credentials`);
        request = { __proto__: null, method: "GET", url: parsed.href, headerList: list(), mode: "cors", credentials: "same-origin",
          cache: "default", redirect: "follow", referrer: "about:client", referrerPolicy: "", integrity: "", keepalive: false };
        fallbackMode = "cors";
      } else {
        // Step 6. input's request.
        request = input.#request;
        request = { __proto__: null, method: request.method, url: request.url, headerList: headersList(input.#headers),
          mode: request.mode, credentials: request.credentials, cache: request.cache, redirect: request.redirect,
          referrer: request.referrer, referrerPolicy: request.referrerPolicy, integrity: request.integrity, keepalive: request.keepalive };
      }
      // Step 12. A new request with request's fields and a copy of its header list.
      request.headerList = headerListCopy(request.headerList);
      // Step 13. A non-empty init resets navigation, origin and referrer.
      if (i.present) {
        if (request.mode === "navigate") request.mode = "same-origin";
        request.referrer = "about:client";
        request.referrerPolicy = "";
      }
      // Step 14. init's referrer: "" for none, else a URL (about:client stays the client).
      if (has(i, "referrer")) {
        if (i.referrer === "") request.referrer = "";
        else {
          const parsed = parseRequestURL(i.referrer);
          if (parsed === null) throw new TypeErrorCtor(`Failed to construct 'Request': the referrer '${i.referrer}' is not a valid URL`);
          request.referrer = parsed.href === "about:client" || parsed.origin !== locationParts.origin ? "about:client" : parsed.href;
        }
      }
      // Step 15.
      if (has(i, "referrerPolicy")) request.referrerPolicy = i.referrerPolicy;
      // Steps 16-18. The mode; "navigate" is not a page's to ask for.
      const mode = has(i, "mode") ? i.mode : fallbackMode;
      if (mode === "navigate") throw new TypeErrorCtor("Failed to construct 'Request': mode 'navigate' is not allowed");
      if (mode !== null) request.mode = mode;
      // Step 19.
      if (has(i, "credentials")) request.credentials = i.credentials;
      // Steps 20-21.
      if (has(i, "cache")) request.cache = i.cache;
      if (request.cache === "only-if-cached" && request.mode !== "same-origin") throw new TypeErrorCtor("Failed to construct 'Request': 'only-if-cached' needs mode 'same-origin'");
      // Steps 22-24.
      if (has(i, "redirect")) request.redirect = i.redirect;
      if (has(i, "integrity")) request.integrity = i.integrity;
      if (has(i, "keepalive")) request.keepalive = i.keepalive;
      // Step 25. The method: a token, not a forbidden one, normalised.
      if (has(i, "method")) {
        const method = i.method;
        if (!isMethodToken(method)) throw new TypeErrorCtor(`Failed to construct 'Request': '${method}' is not a valid HTTP method`);
        if (isForbiddenMethod(method)) throw new TypeErrorCtor(`Failed to construct 'Request': '${method}' HTTP method is unsupported`);
        request.method = normalizeMethod(method);
      }
      // Step 29. Set this's request to request.
      this.#request = request;
      // Step 30. Set this's headers to a new Headers object with request's header list and
      // guard "request".
      this.#headers = makeHeaders(list(), "request");
      const own = headersList(this.#headers);
      for (let k = 0; k < request.headerList.length; k++) listPush(own, request.headerList[k]);
      request.headerList = own;
      // Step 31. A no-cors request: a CORS-safelisted method, and guard "request-no-cors".
      if (request.mode === "no-cors") {
        if (!isCORSSafelistedMethod(request.method)) throw new TypeErrorCtor(`Failed to construct 'Request': '${request.method}' is unsupported in no-cors mode`);
        setHeadersGuard(this.#headers, "request-no-cors");
      }
      // Step 32. With init: its headers (or a copy of the ones there were), through the guard.
      if (i.present) {
        const copy = headerListCopy(own);
        own.length = 0;
        if (has(i, "headers")) fillHeaders(this.#headers, i.headers);
        else for (let k = 0; k < copy.length; k++) appendHeader(this.#headers, copy[k].name, copy[k].value);
      }
      // Step 33. inputBody.
      const inputBody = inputIsRequest ? input.#body : null;
      // Step 34. GET and HEAD have no body.
      const initBodyGiven = has(i, "body") && i.body !== null;
      if ((initBodyGiven || (inputBody !== null && inputBody.bytes !== null)) && (request.method === "GET" || request.method === "HEAD")) {
        throw new TypeErrorCtor("Failed to construct 'Request': a request with a GET or HEAD method cannot have a body");
      }
      // Steps 35-36. init's body, extracted; its type becomes Content-Type if none was given.
      let initBody = null;
      if (initBodyGiven) {
        const extracted = extractBody(i.body);
        initBody = extracted.bytes;
        if (extracted.type !== null && !headerListContains(own, "content-type")) appendHeader(this.#headers, "Content-Type", extracted.type);
      }
      // Steps 37-40. The final body: init's, or input's (which this consumes).
      let finalBody = initBody;
      if (initBody === null && inputBody !== null && inputBody.bytes !== null) {
        if (bodyUnusable(inputBody)) throw new TypeErrorCtor("Failed to construct 'Request': the input's body has already been consumed");
        finalBody = inputBody.bytes;
        inputBody.used = true;
      }
      this.#body = bodyState(finalBody);
    }
    get method() { return this.#request.method; }
    get url() { return this.#request.url; }
    get headers() { return this.#headers; }
    get destination() { return ""; }
    get referrer() { return this.#request.referrer; }
    get referrerPolicy() { return this.#request.referrerPolicy; }
    get mode() { return this.#request.mode; }
    get credentials() { return this.#request.credentials; }
    get cache() { return this.#request.cache; }
    get redirect() { return this.#request.redirect; }
    get integrity() { return this.#request.integrity; }
    get keepalive() { return this.#request.keepalive; }
    get isReloadNavigation() { return false; }
    get isHistoryNavigation() { return false; }
    get duplex() { return "half"; }
    get bodyUsed() { return bodyUnusable(this.#body); }
    // https://fetch.spec.whatwg.org/#dom-request-clone
    clone() {
      if (bodyUnusable(this.#body)) throw new TypeErrorCtor("Failed to execute 'clone' on 'Request': the body has already been consumed");
      const c = new Request(FROM_ENGINE);
      const r = this.#request;
      c.#request = { __proto__: null, method: r.method, url: r.url, headerList: null, mode: r.mode, credentials: r.credentials,
        cache: r.cache, redirect: r.redirect, referrer: r.referrer, referrerPolicy: r.referrerPolicy, integrity: r.integrity, keepalive: r.keepalive };
      c.#headers = makeHeaders(headersList(this.#headers), headersGuard(this.#headers));
      c.#request.headerList = headersList(c.#headers);
      c.#body = bodyState(this.#body.bytes);
      return c;
    }
    static {
      requestOf = (r) => r.#request;
      requestHeaders = (r) => r.#headers;
      requestBody = (r) => r.#body;
      isRequest = (v) => isObject(v) && #request in v;
    }
  }
  installBodyMethods(Request, requestBody, requestHeaders);
  tag(Request, "Request");

  // Response (https://fetch.spec.whatwg.org/#response-class). Its response: type, status,
  // status message, URL, whether it was redirected; its headers a Headers object; its body a
  // body state.
  const NULL_BODY_STATUSES = [101, 103, 204, 205, 304];
  const isNullBodyStatus = (s) => { for (let i = 0; i < NULL_BODY_STATUSES.length; i++) if (NULL_BODY_STATUSES[i] === s) return true; return false; };
  const isRedirectStatus = (s) => s === 301 || s === 302 || s === 303 || s === 307 || s === 308;
  // A reason-phrase (https://httpwg.org/specs/rfc9112.html#status.line).
  function isReasonPhrase(s) {
    for (let i = 0; i < s.length; i++) {
      const c = StringPrototypeCharCodeAt(s, i);
      if (!(c === 9 || (c >= 32 && c <= 126) || (c >= 128 && c <= 255))) return false;
    }
    return true;
  }
  // ResponseInit (https://fetch.spec.whatwg.org/#responseinit), in lexicographic order.
  function convertResponseInit(v) {
    const d = dictionaryOf(v, "ResponseInit");
    const out = { __proto__: null, headers: undefined, status: 200, statusText: "" };
    if (d === null) return out;
    const headers = d.headers;
    if (headers !== undefined) out.headers = convertHeadersInit(headers);
    const status = d.status;
    if (status !== undefined) out.status = toUnsignedShort(status);
    const statusText = d.statusText;
    if (statusText !== undefined) out.statusText = toByteString(statusText);
    return out;
  }
  let responseState, responseHeaders, responseBody, makeResponse;
  class Response {
    #response;
    #headers;
    #body;
    // https://fetch.spec.whatwg.org/#dom-response
    constructor(body = null, init = undefined) {
      if (body === FROM_ENGINE) return;
      const bodyInit = body === null || body === undefined ? null : convertBodyInit(body);
      const i = convertResponseInit(init);
      // Step 1. Set this's response to a new response.
      this.#response = { __proto__: null, type: "default", status: 200, statusText: "", url: "", redirected: false };
      // Step 2. Set this's headers to a new Headers object with guard "response".
      this.#headers = makeHeaders(list(), "response");
      this.#body = bodyState(null);
      // Steps 3-4. bodyWithType.
      const extracted = bodyInit === null ? null : extractBody(bodyInit);
      // Step 5. Initialize the response.
      initializeResponse(this, i, extracted);
    }
    // https://fetch.spec.whatwg.org/#dom-response-error
    static error() {
      return makeResponse({ __proto__: null, type: "error", status: 0, statusText: "", url: "", redirected: false }, list(), null, "immutable");
    }
    // https://fetch.spec.whatwg.org/#dom-response-redirect
    static redirect(url, status = 302) {
      requireArgs(arguments.length, 1, "Response.redirect");
      url = toUSVString(url);
      status = toUnsignedShort(status);
      // Steps 1-2. Parse url with the API base URL.
      const parsed = parseRequestURL(url);
      if (parsed === null) throw new TypeErrorCtor(`Failed to execute 'redirect' on 'Response': '${url}' is not a valid URL`);
      // Step 3. If status is not a redirect status, then throw a RangeError.
      if (!isRedirectStatus(status)) throw new RangeErrorCtor(`Failed to execute 'redirect' on 'Response': ${status} is not a redirect status`);
      // Steps 4-7. An immutable response with the status and a Location header.
      const headers = list();
      listPush(headers, header("Location", parsed.href));
      return makeResponse({ __proto__: null, type: "default", status, statusText: "", url: "", redirected: false }, headers, null, "immutable");
    }
    // https://fetch.spec.whatwg.org/#dom-response-json
    static json(data, init = undefined) {
      requireArgs(arguments.length, 1, "Response.json");
      const i = convertResponseInit(init);
      // Step 1. Serialize data to JSON bytes (a TypeError if it serialises to nothing).
      const text = JSONStringify(data);
      if (text === undefined) throw new TypeErrorCtor("Failed to execute 'json' on 'Response': the data is not JSON-serializable");
      // Steps 2-4.
      const r = makeResponse({ __proto__: null, type: "default", status: 200, statusText: "", url: "", redirected: false }, list(), null, "response");
      initializeResponse(r, i, { __proto__: null, bytes: host.utf8Encode(text), type: "application/json" });
      return r;
    }
    get type() { return this.#response.type; }
    get url() { return withoutFragment(this.#response.url); }
    get redirected() { return this.#response.redirected; }
    get status() { return this.#response.status; }
    get ok() { const s = this.#response.status; return s >= 200 && s <= 299; }
    get statusText() { return this.#response.statusText; }
    get headers() { return this.#headers; }
    get bodyUsed() { return bodyUnusable(this.#body); }
    // https://fetch.spec.whatwg.org/#dom-response-clone
    clone() {
      if (bodyUnusable(this.#body)) throw new TypeErrorCtor("Failed to execute 'clone' on 'Response': the body has already been consumed");
      const r = this.#response;
      return makeResponse({ __proto__: null, type: r.type, status: r.status, statusText: r.statusText, url: r.url, redirected: r.redirected },
        headersList(this.#headers), this.#body.bytes, headersGuard(this.#headers));
    }
    static {
      responseState = (r) => r.#response;
      responseHeaders = (r) => r.#headers;
      responseBody = (r) => r.#body;
      makeResponse = (state, headerList, bytes, guard) => {
        const r = new Response(FROM_ENGINE);
        r.#response = state;
        r.#headers = makeHeaders(headerList, guard);
        r.#body = bodyState(bytes);
        return r;
      };
    }
  }
  // https://fetch.spec.whatwg.org/#initialize-a-response
  function initializeResponse(response, i, body) {
    // Step 1. A status outside 200-599 is a RangeError.
    if (i.status < 200 || i.status > 599) throw new RangeErrorCtor(`The status ${i.status} is outside the range [200, 599]`);
    // Step 2. A statusText that is not a reason-phrase is a TypeError.
    if (!isReasonPhrase(i.statusText)) throw new TypeErrorCtor(`'${i.statusText}' is not a valid status text`);
    // Steps 3-4.
    const state = responseState(response);
    state.status = i.status;
    state.statusText = i.statusText;
    // Step 5. init's headers.
    const headers = responseHeaders(response);
    if (i.headers !== undefined) fillHeaders(headers, i.headers);
    // Step 6. The body: none for a null body status; its type as Content-Type.
    if (body !== null) {
      if (isNullBodyStatus(state.status)) throw new TypeErrorCtor(`A response with status ${state.status} cannot have a body`);
      responseBody(response).bytes = body.bytes;
      if (body.type !== null && !headerListContains(headersList(headers), "content-type")) headerListAppend(headersList(headers), "Content-Type", body.type);
    }
  }
  installBodyMethods(Response, responseBody, responseHeaders);
  tag(Response, "Response");

  // Fetching: the engine does main fetch on another thread and answers with a task
  // (hooks.fetchDone → finishFetch); blob: URLs are this realm's, fetched here.
  const fetches = new Map();
  let nextFetch = 1;
  // A network error, or the response the engine gave: {error, timedOut} or {type, status,
  // statusText, url, redirected, headers (a header list), body (bytes, or null)}.
  const networkError = (message, timedOut = false) => ({ __proto__: null, error: message, timedOut });
  // The request as the engine takes it (JsprofFetchRequest).
  function engineRequest(method, url, headerList, body, mode, credentials, redirect, useCorsPreflight, timeout) {
    const r = { __proto__: null, method, url, headers: headerLines(headerList), mode, credentials, redirect, useCorsPreflight, timeout };
    if (body !== null) r.body = body;
    return r;
  }
  // The blob: scheme fetch (https://fetch.spec.whatwg.org/#scheme-fetch): a live blob URL of
  // this realm, GET only.
  function blobFetch(r) {
    const blob = MapGet(blobURLs, withoutFragment(r.url));
    if (r.method !== "GET" || blob === undefined) return networkError(`${r.url} is not a live blob URL (or not a GET)`);
    const bytes = blobBytes(blob);
    const headers = list();
    listPush(headers, header("Content-Length", StringCtor(bytes.length)));
    listPush(headers, header("Content-Type", BlobPrototypeGetType(blob)));
    return { __proto__: null, error: null, type: "basic", status: 200, statusText: "OK", url: r.url, redirected: false, headers, body: bytes };
  }
  const isBlobURL = (url) => StringPrototypeSlice(url, 0, 5) === "blob:";
  // Starts fetching the engine request `r`; `done(response)` runs later, as a task.
  function startFetch(r, done) {
    if (isBlobURL(r.url)) {
      const response = blobFetch(r);
      addTimer(() => done(response), 0, list(), false);
      return;
    }
    const id = nextFetch++;
    MapSet(fetches, id, done);
    host.fetchStart(id, r);
  }
  // The engine's answer: its metadata (parsed JSON) and the body as a byte string.
  function responseFromEngine(meta, body) {
    if (ObjectHasOwn(meta, "error")) return networkError(StringCtor(meta.error), meta.timedOut === true);
    const headers = list();
    const pairs = meta.headers;
    for (let i = 0; i < pairs.length; i++) listPush(headers, header(pairs[i][0], pairs[i][1]));
    return { __proto__: null, error: null, type: meta.type, status: meta.status, statusText: meta.statusText,
      url: meta.url, redirected: meta.redirected, headers, body: meta.type === "opaque" || meta.type === "opaqueredirect" ? null : body };
  }
  function finishFetch(id, metaJSON, body) {
    const done = MapGet(fetches, id);
    if (done === undefined) return;
    MapDelete(fetches, id);
    done(responseFromEngine(JSONParse(metaJSON), body));
  }
  // A synchronous fetch (XMLHttpRequest): the engine blocks until the response is in.
  function fetchSync(r) {
    if (isBlobURL(r.url)) return blobFetch(r);
    const meta = JSONParse(host.fetchSync(r));
    return responseFromEngine(meta, ObjectHasOwn(meta, "body") ? meta.body : "");
  }

  // fetch() (https://fetch.spec.whatwg.org/#fetch-method).
  function fetch(input, init = undefined) {
    // Step 1. Let p be a new promise.
    let resolve, reject;
    const p = new OriginalPromise((res, rej) => { resolve = res; reject = rej; });
    // Step 2. Let requestObject be the result of invoking the initial value of Request as
    // constructor with input and init; if that threw, reject p with it.
    let requestObject;
    try {
      requireArgs(arguments.length, 1, "fetch");
      requestObject = new Request(input, init);
    } catch (e) {
      reject(e);
      return p;
    }
    // Step 3. The request; its body is now used.
    const request = requestOf(requestObject);
    const body = requestBody(requestObject);
    if (body.bytes !== null) body.used = true;
    // Steps 12-13. Fetch it; a network error rejects p with a TypeError, a response
    // resolves it with a Response whose headers are immutable.
    startFetch(engineRequest(request.method, request.url, request.headerList, body.bytes, request.mode,
      request.credentials, request.redirect, false, 0), (response) => {
      if (response.error !== null) {
        reject(new TypeErrorCtor(`Failed to fetch: ${response.error}`));
        return;
      }
      resolve(makeResponse({ __proto__: null, type: response.type, status: response.status, statusText: response.statusText,
        url: response.url, redirected: response.redirected }, response.headers, response.body, "immutable"));
    });
    return p;
  }

  // ProgressEvent (https://xhr.spec.whatwg.org/#interface-progressevent).
  class ProgressEvent extends Event {
    #lengthComputable; #loaded; #total;
    constructor(type, eventInit = NO_INIT) {
      requireArgs(arguments.length, 1, "ProgressEvent constructor");
      super(type, eventInit);
      const d = eventInit ?? NO_INIT;
      this.#lengthComputable = !!d.lengthComputable;
      this.#loaded = NumberCtor(d.loaded ?? 0);
      this.#total = NumberCtor(d.total ?? 0);
    }
    get lengthComputable() { return this.#lengthComputable; }
    get loaded() { return this.#loaded; }
    get total() { return this.#total; }
  }
  tag(ProgressEvent, "ProgressEvent");
  // fire a progress event (https://xhr.spec.whatwg.org/#concept-event-fire-progress)
  function fireProgress(target, type, transmitted, length) {
    dispatch(target, trustedEvent(ProgressEvent, type, { __proto__: null, bubbles: false, cancelable: false,
      lengthComputable: length !== 0, loaded: transmitted, total: length }));
  }

  // XMLHttpRequest (https://xhr.spec.whatwg.org/): any method, request headers, bodies,
  // synchronous (host.fetchSync, the caller blocked) and asynchronous (a fetch underneath,
  // with its events), the same CORS rules and preflight as fetch().
  const UNSENT = 0, OPENED = 1, HEADERS_RECEIVED = 2, LOADING = 3, DONE = 4;
  const XHR_EVENTS = ["loadstart", "progress", "abort", "error", "load", "timeout", "loadend"];
  const RESPONSE_TYPES = ["", "arraybuffer", "blob", "document", "json", "text"];
  class XMLHttpRequestEventTarget extends EventTarget {
    constructor(key) {
      if (key !== ILLEGAL) throw new TypeErrorCtor("Illegal constructor");
      super();
    }
  }
  for (let i = 0; i < XHR_EVENTS.length; i++) defineHandler(XMLHttpRequestEventTarget.prototype, XHR_EVENTS[i]);
  tag(XMLHttpRequestEventTarget, "XMLHttpRequestEventTarget");
  class XMLHttpRequestUpload extends XMLHttpRequestEventTarget {
    constructor(key) { super(key); }
  }
  tag(XMLHttpRequestUpload, "XMLHttpRequestUpload");
  const hasListeners = (target) => { const l = WeakMapGet(listeners, target); return l !== undefined && l.length > 0; };
  const inWindow = !init.worker;
  const xhrNetworkError = () => ({ __proto__: null, error: "", timedOut: false, status: 0, statusText: "", url: "", headers: list(), body: null });
  class XMLHttpRequest extends XMLHttpRequestEventTarget {
    #s;
    constructor() {
      super(ILLEGAL);
      this.#s = { __proto__: null, state: UNSENT, sendFlag: false, method: "GET", url: "", sync: false, headers: list(),
        timeout: 0, withCredentials: false, upload: new XMLHttpRequestUpload(ILLEGAL), uploadListener: false,
        uploadComplete: false, timedOut: false, response: xhrNetworkError(), responseType: "", responseObject: null,
        overrideMime: null, generation: 0, timer: 0 };
    }
    get readyState() { return this.#s.state; }
    // https://xhr.spec.whatwg.org/#the-timeout-attribute
    get timeout() { return this.#s.timeout; }
    set timeout(v) {
      const s = this.#s;
      if (inWindow && s.sync) throw new DOMException("Synchronous requests in a window cannot have a timeout", "InvalidAccessError");
      s.timeout = NumberCtor(v) >>> 0;
    }
    // https://xhr.spec.whatwg.org/#the-withcredentials-attribute
    get withCredentials() { return this.#s.withCredentials; }
    set withCredentials(v) {
      const s = this.#s;
      if (s.state !== UNSENT && s.state !== OPENED) throw new DOMException("withCredentials can only be set before send()", "InvalidStateError");
      if (s.sendFlag) throw new DOMException("withCredentials can only be set before send()", "InvalidStateError");
      s.withCredentials = !!v;
    }
    get upload() { return this.#s.upload; }
    // https://xhr.spec.whatwg.org/#the-open()-method
    open(method, url, async = true, username = null, password = null) {
      requireArgs(arguments.length, 2, "XMLHttpRequest.open");
      const s = this.#s;
      method = toByteString(method);
      url = toUSVString(url);
      // Steps 2-4. A method that is not a token is a SyntaxError, a forbidden one a
      // SecurityError; normalised.
      if (!isMethodToken(method)) throw new DOMException(`'${method}' is not a valid HTTP method`, "SyntaxError");
      if (isForbiddenMethod(method)) throw new DOMException(`'${method}' HTTP method is unsupported`, "SecurityError");
      method = normalizeMethod(method);
      // Step 5. Parse url.
      const parsed = parseRequestURL(url);
      if (parsed === null) throw new DOMException(`'${url}' is not a valid URL`, "SyntaxError");
      // Step 6. async omitted: true.
      if (arguments.length < 3) async = true;
      else async = !!async;
      // Step 8. A synchronous request in a window takes no timeout and no response type.
      if (!async && inWindow && (s.timeout !== 0 || s.responseType !== "")) {
        throw new DOMException("Synchronous requests in a window cannot have a timeout or a responseType", "InvalidAccessError");
      }
      // Step 9. Terminate the ongoing fetch.
      s.generation++;
      if (s.timer) { clearTimer(s.timer); s.timer = 0; }
      // Step 10.
      s.sendFlag = false; s.uploadListener = false; s.method = method; s.url = parsed.href; s.sync = !async;
      s.headers = list(); s.response = xhrNetworkError(); s.responseObject = null;
      // Step 11. Opened, with readystatechange if it was not.
      if (s.state !== OPENED) {
        s.state = OPENED;
        fire(this, "readystatechange");
      }
    }
    // https://xhr.spec.whatwg.org/#the-setrequestheader()-method
    setRequestHeader(name, value) {
      requireArgs(arguments.length, 2, "XMLHttpRequest.setRequestHeader");
      const s = this.#s;
      name = toByteString(name);
      value = toByteString(value);
      // Steps 1-2.
      if (s.state !== OPENED || s.sendFlag) throw new DOMException("setRequestHeader: the request is not opened, or already sent", "InvalidStateError");
      // Step 3. Normalize value.
      value = normalizeHeaderValue(value);
      // Step 4. A bad name or value is a SyntaxError.
      const info = host.headerInfo(name, value);
      if (!(info & HEADER_NAME)) throw new DOMException(`'${name}' is not a valid header name`, "SyntaxError");
      if (!(info & HEADER_VALUE)) throw new DOMException(`'${value}' is not a valid value for header '${name}'`, "SyntaxError");
      // Step 5. A forbidden request-header is ignored.
      if (info & FORBIDDEN_REQUEST) return;
      // Step 6. Combine (name, value) in the author request headers.
      headerListCombine(s.headers, name, value);
    }
    // https://xhr.spec.whatwg.org/#the-send()-method
    send(body = null) {
      const s = this.#s;
      // Steps 1-2.
      if (s.state !== OPENED) throw new DOMException("send: the request is not opened", "InvalidStateError");
      if (s.sendFlag) throw new DOMException("send: the request was already sent", "InvalidStateError");
      // Step 3. GET and HEAD send no body.
      if (s.method === "GET" || s.method === "HEAD") body = null;
      // Step 4. The body, extracted, and its Content-Type.
      let bytes = null;
      if (body !== null && body !== undefined) {
        const converted = convertBodyInit(body);
        const extracted = extractBody(converted);
        bytes = extracted.bytes;
        const original = headerListGet(s.headers, "content-type");
        if (original !== null) {
          // A string body's charset is UTF-8, whatever the author's Content-Type said.
          if (converted.kind === "string") {
            const updated = host.charsetToUTF8(original);
            if (updated !== "") headerListSet(s.headers, "Content-Type", updated);
          }
        } else if (extracted.type !== null) {
          headerListSet(s.headers, "Content-Type", extracted.type);
        }
      }
      // Step 5. Upload listeners make the request preflight.
      s.uploadListener = hasListeners(s.upload);
      // Step 6. The request: cors mode, credentials by withCredentials.
      const request = engineRequest(s.method, s.url, s.headers, bytes, "cors", s.withCredentials ? "include" : "same-origin",
        "follow", s.uploadListener, s.sync ? s.timeout : 0);
      // Steps 7-10.
      s.uploadComplete = bytes === null;
      s.timedOut = false;
      s.sendFlag = true;
      const length = bytes === null ? 0 : bytes.length;
      if (s.sync) {
        // Step 12. Synchronous: blocked until the response is in.
        const response = fetchSync(request);
        if (response.error !== null && response.timedOut) s.timedOut = true;
        this.#endOfBody(response);
        return;
      }
      // Step 11. Asynchronous: loadstart, then the fetch.
      fireProgress(this, "loadstart", 0, 0);
      if (!s.uploadComplete && s.uploadListener) fireProgress(s.upload, "loadstart", 0, length);
      if (s.state !== OPENED || !s.sendFlag) return;
      const generation = ++s.generation;
      startFetch(request, (response) => {
        if (s.generation !== generation) return;
        if (s.timer) { clearTimer(s.timer); s.timer = 0; }
        // processRequestEndOfBody: the upload is complete.
        if (!s.uploadComplete) {
          s.uploadComplete = true;
          if (s.uploadListener) {
            fireProgress(s.upload, "progress", length, length);
            fireProgress(s.upload, "load", length, length);
            fireProgress(s.upload, "loadend", length, length);
          }
        }
        if (s.generation !== generation) return;
        this.#processResponse(response, generation);
      });
      // The timeout: when it passes first, the request ends as timed out.
      if (s.timeout !== 0) {
        s.timer = addTimer(() => {
          s.timer = 0;
          if (s.generation !== generation || !s.sendFlag) return;
          s.generation++;
          s.timedOut = true;
          this.#handleErrors(xhrNetworkError());
        }, s.timeout, list(), false);
      }
    }
    // processResponse and the body's chunks (https://xhr.spec.whatwg.org/#the-send()-method,
    // step 11.9): the whole body arrives at once.
    #processResponse(response, generation) {
      const s = this.#s;
      s.response = response.error === null ? response : xhrNetworkError();
      if (response.error !== null) { this.#handleErrors(response); return; }
      s.state = HEADERS_RECEIVED;
      fire(this, "readystatechange");
      if (s.generation !== generation || s.state !== HEADERS_RECEIVED) return;
      const body = response.body === null ? "" : response.body;
      if (body.length > 0) {
        s.state = LOADING;
        fire(this, "readystatechange");
        if (s.generation !== generation) return;
        fireProgress(this, "progress", body.length, body.length);
        if (s.generation !== generation) return;
      }
      this.#endOfBody(response);
    }
    // handle errors (https://xhr.spec.whatwg.org/#handle-errors)
    #handleErrors(response) {
      const s = this.#s;
      if (!s.sendFlag) return;
      if (s.timedOut) this.#requestError("timeout", "TimeoutError", "The request timed out");
      else if (response.error !== null) this.#requestError("error", "NetworkError", `Failed to load '${s.url}': ${response.error}`);
    }
    // request error steps (https://xhr.spec.whatwg.org/#request-error-steps)
    #requestError(event, name, message) {
      const s = this.#s;
      s.state = DONE;
      s.sendFlag = false;
      s.response = xhrNetworkError();
      if (s.sync) throw new DOMException(message, name);
      fire(this, "readystatechange");
      if (!s.uploadComplete) {
        s.uploadComplete = true;
        if (s.uploadListener) {
          fireProgress(s.upload, event, 0, 0);
          fireProgress(s.upload, "loadend", 0, 0);
        }
      }
      fireProgress(this, event, 0, 0);
      fireProgress(this, "loadend", 0, 0);
    }
    // handle response end-of-body (https://xhr.spec.whatwg.org/#handle-response-end-of-body)
    #endOfBody(response) {
      const s = this.#s;
      // Steps 1-2.
      if (response.error !== null) {
        s.response = xhrNetworkError();
        this.#handleErrors(response);
        return;
      }
      s.response = response;
      const length = response.body === null ? 0 : response.body.length;
      // Step 5. A last progress event (asynchronous requests).
      if (!s.sync) fireProgress(this, "progress", length, length);
      // Steps 6-10.
      s.state = DONE;
      s.sendFlag = false;
      fire(this, "readystatechange");
      fireProgress(this, "load", length, length);
      fireProgress(this, "loadend", length, length);
    }
    // https://xhr.spec.whatwg.org/#the-abort()-method
    abort() {
      const s = this.#s;
      // Step 1. Abort the fetch.
      s.generation++;
      if (s.timer) { clearTimer(s.timer); s.timer = 0; }
      // Step 2.
      if ((s.state === OPENED && s.sendFlag) || s.state === HEADERS_RECEIVED || s.state === LOADING) {
        const sync = s.sync;
        s.sync = false;
        this.#requestError("abort", "AbortError", "The request was aborted");
        s.sync = sync;
      }
      // Step 3.
      if (s.state === DONE) {
        s.state = UNSENT;
        s.response = xhrNetworkError();
      }
    }
    get responseURL() { return withoutFragment(this.#s.response.url); }
    get status() { return this.#s.response.status; }
    get statusText() { return this.#s.response.statusText; }
    // https://xhr.spec.whatwg.org/#the-getresponseheader()-method
    getResponseHeader(name) {
      requireArgs(arguments.length, 1, "XMLHttpRequest.getResponseHeader");
      return headerListGet(this.#s.response.headers, toByteString(name));
    }
    // https://xhr.spec.whatwg.org/#the-getallresponseheaders()-method
    getAllResponseHeaders() {
      const pairs = sortAndCombine(this.#s.response.headers);
      let out = "";
      for (let i = 0; i < pairs.length; i++) out += `${pairs[i].name}: ${pairs[i].value}\r\n`;
      return out;
    }
    // https://xhr.spec.whatwg.org/#dom-xmlhttprequest-overridemimetype
    overrideMimeType(mime) {
      requireArgs(arguments.length, 1, "XMLHttpRequest.overrideMimeType");
      const s = this.#s;
      if (s.state === LOADING || s.state === DONE) throw new DOMException("overrideMimeType: the response is already loading", "InvalidStateError");
      const parsed = host.extractMimeType(toByteString(mime));
      s.overrideMime = parsed === "" ? "application/octet-stream" : parsed;
    }
    // https://xhr.spec.whatwg.org/#the-responsetype-attribute
    get responseType() { return this.#s.responseType; }
    set responseType(v) {
      const s = this.#s;
      let type;
      try { type = toEnum(v, RESPONSE_TYPES, "XMLHttpRequestResponseType"); } catch { return; }
      if (!inWindow && type === "document") return;
      if (s.state === LOADING || s.state === DONE) throw new DOMException("responseType cannot be set once the response is loading", "InvalidStateError");
      if (inWindow && s.sync) throw new DOMException("Synchronous requests in a window cannot have a responseType", "InvalidAccessError");
      s.responseType = type;
    }
    // https://xhr.spec.whatwg.org/#the-response-attribute
    get response() {
      const s = this.#s;
      if (s.responseType === "" || s.responseType === "text") {
        return s.state === LOADING || s.state === DONE ? this.#text() : "";
      }
      if (s.state !== DONE) return null;
      if (s.responseObject !== null) return s.responseObject === FAILURE ? null : s.responseObject;
      const bytes = s.response.body === null ? "" : s.response.body;
      let value = null;
      if (s.responseType === "arraybuffer") value = bytesToArrayBuffer(bytes);
      else if (s.responseType === "blob") value = makeBlob(Blob.prototype, bytes, this.#finalMimeType());
      else if (s.responseType === "json") {
        try { value = s.response.body === null ? null : JSONParse(host.utf8Decode(bytes)); } catch { value = FAILURE; }
      } else value = FAILURE; // "document": jsprof parses no XML or HTML documents here
      s.responseObject = value;
      return value === FAILURE ? null : value;
    }
    // https://xhr.spec.whatwg.org/#the-responsetext-attribute
    get responseText() {
      const s = this.#s;
      if (s.responseType !== "" && s.responseType !== "text") throw new DOMException("responseText is only for responseType '' or 'text'", "InvalidStateError");
      return s.state === LOADING || s.state === DONE ? this.#text() : "";
    }
    get responseXML() {
      const s = this.#s;
      if (s.responseType !== "" && s.responseType !== "document") throw new DOMException("responseXML is only for responseType '' or 'document'", "InvalidStateError");
      return null;
    }
    // text response (https://xhr.spec.whatwg.org/#text-response): UTF-8.
    #text() {
      const body = this.#s.response.body;
      return body === null ? "" : host.utf8Decode(body);
    }
    // https://xhr.spec.whatwg.org/#final-mime-type
    #finalMimeType() {
      const s = this.#s;
      if (s.overrideMime !== null) return s.overrideMime;
      const type = host.extractMimeType(headerListGet(s.response.headers, "content-type") ?? "");
      return type === "" ? "text/xml" : type;
    }
  }
  const FAILURE = list();
  const XHR_STATES = ["UNSENT", "OPENED", "HEADERS_RECEIVED", "LOADING", "DONE"];
  for (let i = 0; i < XHR_STATES.length; i++) {
    ObjectDefineProperty(XMLHttpRequest, XHR_STATES[i], dataDescriptor(i, false, true, false));
    ObjectDefineProperty(XMLHttpRequest.prototype, XHR_STATES[i], dataDescriptor(i, false, true, false));
  }
  defineHandler(XMLHttpRequest.prototype, "readystatechange");
  tag(XMLHttpRequest, "XMLHttpRequest");

  // ---------------------------------------------------------------------------------------
  // The global's members.
  const BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  function base64Value(c) {
    if (c >= 65 && c <= 90) return c - 65;
    if (c >= 97 && c <= 122) return c - 71;
    if (c >= 48 && c <= 57) return c + 4;
    if (c === 43) return 62;
    if (c === 47) return 63;
    return -1;
  }
  const api = {
    window: global, self: global, frames: global, opener: null,
    document, location, console, performance, name: "", length: 0, closed: false,
    origin: locationParts.origin,
    isSecureContext: locationParts.protocol === "https:" || locationParts.protocol === "file:" ||
      locationParts.hostname === "localhost" || locationParts.hostname === "127.0.0.1",
    crossOriginIsolated: !!init.crossOriginIsolated,
    navigator: ObjectFreeze({ userAgent: "jsprof (SpiderMonkey)", language: "en-US", languages: ["en-US"], hardwareConcurrency: 1 }),
    EventTarget, Event, CustomEvent, ErrorEvent, PromiseRejectionEvent, MouseEvent, DOMException, Window,
    Node, Element, HTMLElement, HTMLScriptElement, HTMLIFrameElement, HTMLMetaElement, HTMLAnchorElement,
    HTMLImageElement, HTMLFormElement, HTMLInputElement, HTMLButtonElement, HTMLTextAreaElement, HTMLOptionElement,
    HTMLSelectElement, Text, Document, Location,
    URL, URLSearchParams, Performance, Headers, Request, Response, fetch, XMLHttpRequest, XMLHttpRequestEventTarget,
    XMLHttpRequestUpload, ProgressEvent,
    MessageEvent, MessageChannel, MessagePort, Blob, postMessage,
    // https://html.spec.whatwg.org/#dom-structuredclone: StructuredSerializeOptions' transfer.
    structuredClone(value, options = undefined) {
      const d = dictionaryOf(options, "StructuredSerializeOptions");
      const transfer = d === null ? undefined : d.transfer;
      return structuredCloneWithTransfer(value, transfer === undefined ? list() : transfer);
    },
    setTimeout(handler, timeout = 0, ...args) { return addTimer(handler, timeout, args, false); },
    setInterval(handler, timeout = 0, ...args) { return addTimer(handler, timeout, args, true); },
    clearTimeout: clearTimer,
    clearInterval: clearTimer,
    // https://html.spec.whatwg.org/#dom-queuemicrotask: a reaction to a settled promise, added
    // the unforgeable way (no `then`).
    queueMicrotask(callback) {
      if (typeof callback !== "function") throw new TypeErrorCtor("queueMicrotask: argument is not a function");
      host.whenSettled(resolvedPromise(undefined), () => {
        try { ReflectApply(callback, undefined, list()); } catch (e) { reportError(e); }
      }, null);
    },
    reportError,
    // https://html.spec.whatwg.org/#dom-btoa: forgiving-base64 encode of a string of bytes.
    btoa(data) {
      requireArgs(arguments.length, 1, "btoa");
      const s = toDOMString(data);
      let out = "";
      for (let i = 0; i < s.length; i += 3) {
        const a = StringPrototypeCharCodeAt(s, i);
        const b = i + 1 < s.length ? StringPrototypeCharCodeAt(s, i + 1) : 0;
        const c = i + 2 < s.length ? StringPrototypeCharCodeAt(s, i + 2) : 0;
        if (a > 255 || b > 255 || c > 255) throw new DOMException("btoa: character out of range", "InvalidCharacterError");
        const n = (a << 16) | (b << 8) | c;
        out += BASE64[n >> 18] + BASE64[(n >> 12) & 63] + (i + 1 < s.length ? BASE64[(n >> 6) & 63] : "=") + (i + 2 < s.length ? BASE64[n & 63] : "=");
      }
      return out;
    },
    // https://html.spec.whatwg.org/#dom-atob: forgiving-base64 decode
    // (https://infra.spec.whatwg.org/#forgiving-base64-decode).
    atob(data) {
      requireArgs(arguments.length, 1, "atob");
      const s = toDOMString(data);
      // Step 1. Remove ASCII whitespace.
      const codes = list();
      for (let i = 0; i < s.length; i++) {
        const c = StringPrototypeCharCodeAt(s, i);
        if (c !== 9 && c !== 10 && c !== 12 && c !== 13 && c !== 32) listPush(codes, c);
      }
      // Step 2. One or two "=" at the end of a multiple of four are removed.
      let n = codes.length;
      if (n % 4 === 0 && n > 0 && codes[n - 1] === 61) { n--; if (codes[n - 1] === 61) n--; }
      // Steps 3-4. A length of 4k+1, or a code point outside the alphabet, is a failure.
      const invalid = () => new DOMException("atob: invalid base64", "InvalidCharacterError");
      if (n % 4 === 1) throw invalid();
      let out = "", buffer = 0, bits = 0;
      for (let i = 0; i < n; i++) {
        const v = base64Value(codes[i]);
        if (v < 0) throw invalid();
        buffer = (buffer << 6) | v;
        bits += 6;
        if (bits >= 8) {
          bits -= 8;
          out += StringFromCharCode((buffer >> bits) & 255);
        }
      }
      return out;
    },
  };
  if (init.worker) {
    // A worker's global: no document, no window; postMessage and close go to the engine.
    const windowOnly = ["window", "document", "frames", "opener", "Window", "Node", "Element", "HTMLElement",
      "HTMLScriptElement", "HTMLIFrameElement", "HTMLMetaElement", "HTMLAnchorElement", "HTMLImageElement",
      "HTMLFormElement", "HTMLInputElement", "HTMLButtonElement", "HTMLTextAreaElement", "HTMLOptionElement",
      "HTMLSelectElement", "Text", "Document"];
    for (let i = 0; i < windowOnly.length; i++) delete api[windowOnly[i]];
    api.postMessage = function postMessage(message, transfer = list()) {
      if (!ArrayIsArray(transfer) && isObject(transfer)) transfer = transfer.transfer ?? list();
      host.workerPost(-1, serialize(message, transfer));
    };
    api.close = function close() { host.workerTerminate(-1); };
    // https://html.spec.whatwg.org/#dom-workerglobalscope-importscripts: every URL parsed
    // first (a SyntaxError if one fails), then fetched and run in order, synchronously.
    api.importScripts = function importScripts(...urls) {
      const resolved = list();
      for (let i = 0; i < urls.length; i++) {
        const url = toUSVString(urls[i]);
        const parsed = parseRequestURL(url);
        if (parsed === null) throw new DOMException(`Failed to execute 'importScripts': '${url}' is not a valid URL`, "SyntaxError");
        listPush(resolved, parsed.href);
      }
      for (let i = 0; i < resolved.length; i++) {
        const failed = host.importScript(resolved[i]);
        if (failed !== undefined) throw new DOMException(`Failed to execute 'importScripts': ${failed}`, "NetworkError");
      }
    };
    api.DedicatedWorkerGlobalScope = Window;
    api.WorkerGlobalScope = Window;
    defineHandler(Window.prototype, "message");
    defineHandler(Window.prototype, "messageerror");
  }
  api.Worker = Worker;
  // parent and top: from the engine's frame tree (this window at the top).
  if (!init.worker) ObjectDefineProperty(global, "parent", { __proto__: null, get: () => windowProxy(host.frameTree(init.windowIndex, -1)) ?? global, enumerable: true, configurable: true });
  if (!init.worker) ObjectDefineProperty(global, "top", { __proto__: null, get: () => windowProxy(host.frameTree(init.windowIndex, -2)), enumerable: true, configurable: false });
  if (!init.worker) ObjectDefineProperty(global, "length", { __proto__: null, get: () => host.frameTree(init.windowIndex, -3), enumerable: true, configurable: true });
  delete api.length;
  const apiNames = ObjectKeys(api);
  for (let i = 0; i < apiNames.length; i++) {
    const name = apiNames[i];
    const value = api[name];
    const readonly = name === "window" || name === "self" || name === "document" || name === "location";
    ObjectDefineProperty(global, name, readonly
      ? dataDescriptor(value, false, true, false)
      : dataDescriptor(value, true, typeof value !== "function", true));
  }

