  // ---------------------------------------------------------------------------------------
  // Fetch (https://fetch.spec.whatwg.org/): Headers, Request, Response, fetch(), and
  // XMLHttpRequest (https://xhr.spec.whatwg.org/). The network part of fetching (main fetch:
  // CORS, the preflight and its cache, redirects, bodies) is the engine's (components/net);
  // here are the APIs: their WebIDL conversions, the Headers guards, extracting bodies, and
  // the responses the engine hands back as a task (hooks.fetchDone → finishFetch).
  //
  // Under the prelude's rules (00-primordials.js): engine state is in WeakMaps of this
  // realm, the objects are platform objects (host.platformObject: a structured clone
  // refuses them), internal records and lists have no prototype and are walked by index,
  // and promises are made with the original constructor and settled directly. A page's own
  // objects (an init dictionary, an iterable of headers, a body's toString) are read
  // exactly where the standards read them. Bodies are byte strings (one code unit per byte,
  // what a WebIDL ByteString is): the form the engine takes and gives them in
  // (JsprofHost's ByteString arguments).

  // WebIDL conversions (https://webidl.spec.whatwg.org/#js-type-mapping).
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
  function requireArgs(given, needed, what) {
    if (given < needed) throw new TypeErrorCtor(`${what}: ${needed} argument${needed > 1 ? "s" : ""} required, but only ${given} present`);
  }
  // The URL parser against this global's base URL: the parts (a null-prototype record), or
  // null on failure.
  function parseRequestURL(input) {
    const parts = ObjectSetPrototypeOf(JSONParse(host.parseURL(input, init.url)), null);
    return parts.error !== undefined ? null : parts;
  }
  const withoutFragment = (url) => {
    const hash = StringPrototypeIndexOf(url, "#");
    return hash < 0 ? url : StringPrototypeSlice(url, 0, hash);
  };
  const rejectedPromise = (e) => new PromiseCtor((resolve, reject) => reject(e));
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
  const FORBIDDEN_METHODS = listOf("CONNECT", "TRACE", "TRACK");
  const NORMALIZED_METHODS = listOf("DELETE", "GET", "HEAD", "OPTIONS", "POST", "PUT");
  // Byte-uppercase (https://infra.spec.whatwg.org/#byte-uppercase) of a method, which is a
  // token (ASCII) by then.
  const isForbiddenMethod = (m) => listIncludes(FORBIDDEN_METHODS, StringPrototypeToUpperCase(m));
  // https://fetch.spec.whatwg.org/#concept-method-normalize
  const normalizeMethod = (m) => {
    const upper = StringPrototypeToUpperCase(m);
    return listIncludes(NORMALIZED_METHODS, upper) ? upper : m;
  };
  const isCORSSafelistedMethod = (m) => m === "GET" || m === "HEAD" || m === "POST";

  // Header lists (https://fetch.spec.whatwg.org/#concept-header-list): internal lists of
  // {name, value} records; names are tokens (ASCII, compared byte-lowercased), values byte
  // strings.
  const HEADER_NAME = 1, HEADER_VALUE = 2, FORBIDDEN_REQUEST = 4, FORBIDDEN_RESPONSE_NAME = 8,
    NO_CORS_SAFELISTED = 16, PRIVILEGED_NO_CORS_NAME = 32;
  const lowerName = lowerCaseASCII;
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
      if (listIncludes(names, n)) continue;
      let k = names.length;
      while (k > 0 && names[k - 1] > n) k--;
      listInsertAt(names, k, n);
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
  // sequences or a record, converted as WebIDL converts the union: a list of [name, value]
  // lists of ByteStrings.
  function convertHeadersInit(v) {
    if (!isObject(v)) throw new TypeErrorCtor("HeadersInit must be an object");
    const method = v[SymbolIterator]; // prelude-lint: allow(protocol-read) WebIDL union conversion: GetMethod(V, @@iterator)
    const pairs = list();
    if (method !== undefined && method !== null) {
      // sequence<sequence<ByteString>>.
      if (typeof method !== "function") throw new TypeErrorCtor("HeadersInit is not iterable");
      const outer = iterableToList(v, method);
      for (let i = 0; i < outer.length; i++) {
        const values = sequenceArg(outer[i], "Each header");
        const converted = list();
        for (let j = 0; j < values.length; j++) listPush(converted, toByteString(values[j]));
        listPush(pairs, converted);
      }
      return pairs;
    }
    // record<ByteString, ByteString> (https://webidl.spec.whatwg.org/#es-record): the own
    // enumerable keys, in [[OwnPropertyKeys]] order, each value read with [[Get]].
    const keys = ReflectOwnKeys(v);
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i];
      const desc = ReflectGetOwnPropertyDescriptor(v, key);
      // A property descriptor object has all its fields as own data properties.
      if (desc === undefined || !desc.enumerable) continue;
      const name = toByteString(key);
      const value = toByteString(v[key]);
      listPush(pairs, listOf(name, value));
    }
    return pairs;
  }

  // Headers (https://fetch.spec.whatwg.org/#headers-class): a header list and a guard
  // ("none", "request", "request-no-cors", "response", "immutable").
  const headersState = new WeakMapCtor(); // Headers -> {list, guard}
  const headersOf = (h) => {
    const s = WeakMapGet(headersState, h);
    if (s === undefined) throw new TypeErrorCtor("'this' is not a Headers object");
    return s;
  };
  const headersList = (h) => headersOf(h).list;
  const headersGuard = (h) => headersOf(h).guard;
  // A Headers object of prototype `proto` with an empty list and `guard`.
  function newHeaders(proto, guard) {
    const self = host.platformObject(proto);
    WeakMapSet(headersState, self, { __proto__: null, list: list(), guard });
    return self;
  }
  class Headers {
    // https://fetch.spec.whatwg.org/#dom-headers
    constructor(init = undefined) {
      const pairs = init === undefined ? null : convertHeadersInit(init);
      // Step 1. Set this's guard to "none".
      const self = newHeaders(new.target.prototype, "none");
      // Step 2. If init is given, then fill this with init.
      if (pairs !== null) fillHeaders(self, pairs);
      return self;
    }
    // https://fetch.spec.whatwg.org/#dom-headers-append
    append(name, value) {
      headersOf(this);
      requireArgs(arguments.length, 2, "Headers.append");
      appendHeader(this, toByteString(name), toByteString(value));
    }
    // https://fetch.spec.whatwg.org/#dom-headers-delete
    delete(name) {
      const s = headersOf(this);
      requireArgs(arguments.length, 1, "Headers.delete");
      name = toByteString(name);
      // Step 1. If validating (name, ``) for this returns false, then return.
      if (!validateHeader(this, name, "")) return;
      // Step 2. A request-no-cors guard lets only safelisted names be deleted.
      const info = host.headerInfo(name, "");
      if (s.guard === "request-no-cors" && !isNoCorsSafelistedName(name) && !(info & PRIVILEGED_NO_CORS_NAME)) return;
      // Step 3. If this's header list does not contain name, then return.
      if (!headerListContains(s.list, name)) return;
      // Step 4. Delete name from this's header list.
      headerListDelete(s.list, name);
      // Step 5. If this's guard is "request-no-cors", then remove privileged no-CORS
      // request-headers from this.
      if (s.guard === "request-no-cors") headerListDelete(s.list, "range");
    }
    // https://fetch.spec.whatwg.org/#dom-headers-get
    get(name) {
      const s = headersOf(this);
      requireArgs(arguments.length, 1, "Headers.get");
      name = toByteString(name);
      // Step 1. If name is not a header name, then throw a TypeError.
      if (!isHeaderName(name)) throw new TypeErrorCtor(`'${name}' is not a valid header name`);
      // Step 2. Return the result of getting name from this's header list.
      return headerListGet(s.list, name);
    }
    // https://fetch.spec.whatwg.org/#dom-headers-getsetcookie
    getSetCookie() {
      const l = headersList(this);
      // Step 2. Return the values of all headers in this's header list whose name is
      // `Set-Cookie`, in order.
      const out = list();
      for (let i = 0; i < l.length; i++) if (lowerName(l[i].name) === "set-cookie") listPush(out, l[i].value);
      return toPageArray(out);
    }
    // https://fetch.spec.whatwg.org/#dom-headers-has
    has(name) {
      const s = headersOf(this);
      requireArgs(arguments.length, 1, "Headers.has");
      name = toByteString(name);
      // Step 1. If name is not a header name, then throw a TypeError.
      if (!isHeaderName(name)) throw new TypeErrorCtor(`'${name}' is not a valid header name`);
      // Step 2. Return true if this's header list contains name; otherwise false.
      return headerListContains(s.list, name);
    }
    // https://fetch.spec.whatwg.org/#dom-headers-set
    set(name, value) {
      const s = headersOf(this);
      requireArgs(arguments.length, 2, "Headers.set");
      name = toByteString(name);
      // Step 1. Normalize value.
      value = normalizeHeaderValue(toByteString(value));
      // Step 2. If validating (name, value) for this returns false, then return.
      if (!validateHeader(this, name, value)) return;
      // Step 3. A request-no-cors guard takes only no-CORS-safelisted request-headers.
      if (s.guard === "request-no-cors" && !(host.headerInfo(name, value) & NO_CORS_SAFELISTED)) return;
      // Step 4. Set (name, value) in this's header list.
      headerListSet(s.list, name, value);
      // Step 5. If this's guard is "request-no-cors", then remove privileged no-CORS
      // request-headers from this.
      if (s.guard === "request-no-cors") headerListDelete(s.list, "range");
    }
    // The pair iterator's forEach (https://webidl.spec.whatwg.org/#es-forEach): over the
    // sorted and combined list, recomputed at each step.
    forEach(callback, thisArg = undefined) {
      const s = headersOf(this);
      requireArgs(arguments.length, 1, "Headers.forEach");
      if (typeof callback !== "function") throw new TypeErrorCtor("Headers.forEach: the callback is not a function");
      for (let i = 0; ; i++) {
        const pairs = sortAndCombine(s.list);
        if (i >= pairs.length) return;
        ReflectApply(callback, thisArg, [pairs[i].value, pairs[i].name, this]);
      }
    }
    entries() { return makeHeadersIterator(this, "key+value"); }
    keys() { return makeHeadersIterator(this, "key"); }
    values() { return makeHeadersIterator(this, "value"); }
  }
  // https://webidl.spec.whatwg.org/#es-iterable: @@iterator is the same function as entries.
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
      // 1.1. If header's size is not 2, then throw a TypeError.
      if (pairs[i].length !== 2) throw new TypeErrorCtor("Each header must be a sequence of a name and a value");
      // 1.2. Append (header[0], header[1]) to headers.
      appendHeader(headers, pairs[i][0], pairs[i][1]);
    }
  }
  // A Headers object of the engine's own, with a copy of `l` as its list and `guard`.
  function makeHeaders(l, guard) {
    const h = newHeaders(Headers.prototype, guard);
    const own = headersList(h);
    for (let i = 0; i < l.length; i++) listPush(own, header(l[i].name, l[i].value));
    return h;
  }
  // The Headers iterator (https://webidl.spec.whatwg.org/#es-default-iterator-object): a
  // live index into the sorted and combined list.
  const headersIteratorState = new WeakMapCtor(); // iterator -> {target, kind, index}
  class HeadersIterator {
    constructor() { throw illegal(); }
    // https://webidl.spec.whatwg.org/#es-iterator-prototype-object, %%next
    next() {
      const it = WeakMapGet(headersIteratorState, this);
      if (it === undefined) throw new TypeErrorCtor("'this' is not a Headers Iterator");
      const pairs = sortAndCombine(headersList(it.target));
      const i = it.index;
      if (i >= pairs.length) return exposed({ __proto__: null, value: undefined, done: true });
      it.index = i + 1;
      const p = pairs[i];
      const value = it.kind === "key" ? p.name : it.kind === "value" ? p.value : [p.name, p.value];
      return exposed({ __proto__: null, value, done: false });
    }
  }
  // Its prototype's prototype is %IteratorPrototype%, it has no `constructor`, and its
  // @@toStringTag is "Headers Iterator".
  ObjectSetPrototypeOf(HeadersIterator.prototype, IteratorPrototype);
  ReflectDeleteProperty(HeadersIterator.prototype, "constructor");
  ObjectDefineProperty(HeadersIterator.prototype, SymbolToStringTag, dataDescriptor("Headers Iterator", false, false, true));
  function makeHeadersIterator(headers, kind) {
    headersOf(headers); // a TypeError if `headers` is not a Headers object
    const it = ObjectCreate(HeadersIterator.prototype);
    WeakMapSet(headersIteratorState, it, { __proto__: null, target: headers, kind, index: 0 });
    return it;
  }

  // Bodies (https://fetch.spec.whatwg.org/#bodies).
  // BodyInit's union conversion (https://fetch.spec.whatwg.org/#bodyinit-unions): a tagged
  // value, BufferSources copied as they are now.
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
        // A Blob: its bytes, and its type if it is not empty.
        const blob = blobOf(body.value);
        return { __proto__: null, bytes: blob.bytes, type: blob.type === "" ? null : blob.type };
      }
      case "bytes":
        // A BufferSource: a copy of its bytes, no type.
        return { __proto__: null, bytes: body.value, type: null };
      case "params":
        // URLSearchParams: the application/x-www-form-urlencoded serialisation of its list.
        return { __proto__: null, bytes: host.utf8Encode(formSerialize(paramsOf(body.value).list)),
          type: "application/x-www-form-urlencoded;charset=UTF-8" };
      default:
        // A scalar value string: UTF-8 encoded.
        return { __proto__: null, bytes: host.utf8Encode(body.value), type: "text/plain;charset=UTF-8" };
    }
  }
  // A body's state: its bytes (null for no body) and whether it was read (disturbed).
  const bodyState = (bytes) => ({ __proto__: null, bytes, used: false });
  const bodyUnusable = (b) => b.bytes !== null && b.used;
  // consume body (https://fetch.spec.whatwg.org/#concept-body-consume-body), the body
  // already in memory: read at once, the promise settled with the conversion's result.
  function consumeBody(b, convert) {
    // 1. If object is unusable, then return a promise rejected with a TypeError.
    if (bodyUnusable(b)) return rejectedPromise(new TypeErrorCtor("Body has already been consumed."));
    // 2-5. Read all bytes (disturbing the body), and resolve with convert(bytes), or
    // reject with what it threw.
    if (b.bytes !== null) b.used = true;
    try {
      return resolvedPromise(convert(b.bytes === null ? "" : b.bytes));
    } catch (e) {
      return rejectedPromise(e);
    }
  }
  // The Body mixin's methods (https://fetch.spec.whatwg.org/#body-mixin), for Request and
  // Response; `stateOf(obj)` is the object's {headers, body} (a TypeError for another
  // object).
  function installBodyMethods(cls, stateOf) {
    const methods = {
      __proto__: null,
      // https://fetch.spec.whatwg.org/#dom-body-arraybuffer
      arrayBuffer() { return consumeBody(stateOf(this).body, bytesToArrayBuffer); },
      // https://fetch.spec.whatwg.org/#dom-body-blob: a Blob whose type is the body's MIME type.
      blob() {
        const s = stateOf(this);
        const type = host.extractMimeType(headerListGet(headersList(s.headers), "content-type") ?? "");
        return consumeBody(s.body, (bytes) => makeBlob(Blob.prototype, bytes, type));
      },
      // https://fetch.spec.whatwg.org/#dom-body-bytes
      bytes() { return consumeBody(stateOf(this).body, bytesToUint8Array); },
      // https://fetch.spec.whatwg.org/#dom-body-json: parse JSON from bytes.
      json() { return consumeBody(stateOf(this).body, (bytes) => JSONParse(host.utf8Decode(bytes))); },
      // https://fetch.spec.whatwg.org/#dom-body-text: UTF-8 decode.
      text() { return consumeBody(stateOf(this).body, (bytes) => host.utf8Decode(bytes)); },
    };
    const names = ObjectKeys(methods);
    for (let i = 0; i < names.length; i++) ObjectDefineProperty(cls.prototype, names[i], dataDescriptor(methods[names[i]], true, true, true));
    defineGetter(cls.prototype, "bodyUsed", function () { return bodyUnusable(stateOf(this).body); });
  }

  // Request (https://fetch.spec.whatwg.org/#request-class). Its request: method, URL, mode,
  // credentials and redirect modes, and the rest RequestInit sets; its headers a Headers
  // object (guard "request" or "request-no-cors") whose list is the request's header list;
  // its body a body state.
  const REQUEST_MODES = listOf("navigate", "same-origin", "no-cors", "cors");
  const REQUEST_CREDENTIALS = listOf("omit", "same-origin", "include");
  const REQUEST_CACHES = listOf("default", "no-store", "reload", "no-cache", "force-cache", "only-if-cached");
  const REQUEST_REDIRECTS = listOf("follow", "error", "manual");
  const REQUEST_DUPLEX = listOf("half");
  const REQUEST_PRIORITIES = listOf("high", "low", "auto");
  const REFERRER_POLICIES = listOf("", "no-referrer", "no-referrer-when-downgrade", "same-origin", "origin",
    "strict-origin", "origin-when-cross-origin", "strict-origin-when-cross-origin", "unsafe-url");
  // RequestInit (https://fetch.spec.whatwg.org/#requestinit), members read and converted in
  // lexicographic order into a null-prototype record that has only the members given;
  // `present` says whether the dictionary is not empty.
  function convertRequestInit(v) {
    const d = dictionaryArg(v, "RequestInit");
    const out = { __proto__: null, present: false };
    if (d === NO_INIT) return out;
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
  const given = (record, name) => ObjectHasOwn(record, name);
  const requestState = new WeakMapCtor(); // Request -> {request, headers, body}
  const requestOf = (r) => {
    const s = WeakMapGet(requestState, r);
    if (s === undefined) throw new TypeErrorCtor("'this' is not a Request");
    return s;
  };
  const isRequest = (v) => isObject(v) && WeakMapHas(requestState, v);
  // A request's fields (the header list is its Headers object's).
  const requestRecord = (r, headerList) => ({
    __proto__: null, method: r.method, url: r.url, headerList, mode: r.mode, credentials: r.credentials,
    cache: r.cache, redirect: r.redirect, referrer: r.referrer, referrerPolicy: r.referrerPolicy,
    integrity: r.integrity, keepalive: r.keepalive,
  });
  // A Request of prototype `proto` for `request`, with `headers` and body bytes `bytes`.
  function newRequest(proto, request, headers, bytes) {
    const self = host.platformObject(proto);
    request.headerList = headersList(headers);
    WeakMapSet(requestState, self, { __proto__: null, request, headers, body: bodyState(bytes) });
    return self;
  }
  class Request {
    // https://fetch.spec.whatwg.org/#dom-request
    constructor(input, init = undefined) {
      requireArgs(arguments.length, 1, "Request constructor");
      // RequestInfo: a Request, or a USVString.
      const inputState = isRequest(input) ? requestOf(input) : null;
      if (inputState === null) input = toUSVString(input);
      const i = convertRequestInit(init);
      // Steps 1-4.
      let request, fallbackMode = null;
      if (inputState === null) {
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
        request = requestRecord(inputState.request, inputState.request.headerList);
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
      if (given(i, "referrer")) {
        if (i.referrer === "") request.referrer = "";
        else {
          const parsed = parseRequestURL(i.referrer);
          if (parsed === null) throw new TypeErrorCtor(`Failed to construct 'Request': the referrer '${i.referrer}' is not a valid URL`);
          request.referrer = parsed.href === "about:client" || parsed.origin !== locationParts.origin ? "about:client" : parsed.href;
        }
      }
      // Step 15.
      if (given(i, "referrerPolicy")) request.referrerPolicy = i.referrerPolicy;
      // Steps 16-18. The mode; "navigate" is not a page's to ask for.
      const mode = given(i, "mode") ? i.mode : fallbackMode;
      if (mode === "navigate") throw new TypeErrorCtor("Failed to construct 'Request': mode 'navigate' is not allowed");
      if (mode !== null) request.mode = mode;
      // Step 19.
      if (given(i, "credentials")) request.credentials = i.credentials;
      // Steps 20-21.
      if (given(i, "cache")) request.cache = i.cache;
      if (request.cache === "only-if-cached" && request.mode !== "same-origin") throw new TypeErrorCtor("Failed to construct 'Request': 'only-if-cached' needs mode 'same-origin'");
      // Steps 22-24.
      if (given(i, "redirect")) request.redirect = i.redirect;
      if (given(i, "integrity")) request.integrity = i.integrity;
      if (given(i, "keepalive")) request.keepalive = i.keepalive;
      // Step 25. The method: a token, not a forbidden one, normalised.
      if (given(i, "method")) {
        const method = i.method;
        if (!isMethodToken(method)) throw new TypeErrorCtor(`Failed to construct 'Request': '${method}' is not a valid HTTP method`);
        if (isForbiddenMethod(method)) throw new TypeErrorCtor(`Failed to construct 'Request': '${method}' HTTP method is unsupported`);
        request.method = normalizeMethod(method);
      }
      // Steps 29-30. Set this's request to request, and this's headers to a new Headers
      // object whose header list is request's, with guard "request".
      const copy = request.headerList;
      const headers = makeHeaders(copy, "request");
      const self = newRequest(new.target.prototype, request, headers, null);
      const own = request.headerList;
      // Step 31. A no-cors request: a CORS-safelisted method, and guard "request-no-cors".
      if (request.mode === "no-cors") {
        if (!isCORSSafelistedMethod(request.method)) throw new TypeErrorCtor(`Failed to construct 'Request': '${request.method}' is unsupported in no-cors mode`);
        headersOf(headers).guard = "request-no-cors";
      }
      // Step 32. With init: its headers (or a copy of the ones there were), through the guard.
      if (i.present) {
        own.length = 0;
        if (given(i, "headers")) fillHeaders(headers, i.headers);
        else for (let k = 0; k < copy.length; k++) appendHeader(headers, copy[k].name, copy[k].value);
      }
      // Step 33. inputBody.
      const inputBody = inputState === null ? null : inputState.body;
      // Step 34. GET and HEAD have no body.
      const initBodyGiven = given(i, "body") && i.body !== null;
      if ((initBodyGiven || (inputBody !== null && inputBody.bytes !== null)) && (request.method === "GET" || request.method === "HEAD")) {
        throw new TypeErrorCtor("Failed to construct 'Request': a request with a GET or HEAD method cannot have a body");
      }
      // Steps 35-36. init's body, extracted; its type becomes Content-Type if none was given.
      let initBody = null;
      if (initBodyGiven) {
        const extracted = extractBody(i.body);
        initBody = extracted.bytes;
        if (extracted.type !== null && !headerListContains(own, "content-type")) appendHeader(headers, "Content-Type", extracted.type);
      }
      // Steps 37-40. The final body: init's, or input's (which this consumes).
      let finalBody = initBody;
      if (initBody === null && inputBody !== null && inputBody.bytes !== null) {
        if (bodyUnusable(inputBody)) throw new TypeErrorCtor("Failed to construct 'Request': the input's body has already been consumed");
        finalBody = inputBody.bytes;
        inputBody.used = true;
      }
      requestOf(self).body = bodyState(finalBody);
      return self;
    }
    get method() { return requestOf(this).request.method; }
    get url() { return requestOf(this).request.url; }
    get headers() { return requestOf(this).headers; }
    get destination() { requestOf(this); return ""; }
    get referrer() { return requestOf(this).request.referrer; }
    get referrerPolicy() { return requestOf(this).request.referrerPolicy; }
    get mode() { return requestOf(this).request.mode; }
    get credentials() { return requestOf(this).request.credentials; }
    get cache() { return requestOf(this).request.cache; }
    get redirect() { return requestOf(this).request.redirect; }
    get integrity() { return requestOf(this).request.integrity; }
    get keepalive() { return requestOf(this).request.keepalive; }
    get isReloadNavigation() { requestOf(this); return false; }
    get isHistoryNavigation() { requestOf(this); return false; }
    get duplex() { requestOf(this); return "half"; }
    // https://fetch.spec.whatwg.org/#dom-request-clone
    clone() {
      const s = requestOf(this);
      // 1. If this is unusable, then throw a TypeError.
      if (bodyUnusable(s.body)) throw new TypeErrorCtor("Failed to execute 'clone' on 'Request': the body has already been consumed");
      // 2-4. A clone of this's request (its header list and body copied), with a new
      // Headers object of the same guard.
      const headers = makeHeaders(s.request.headerList, headersGuard(s.headers));
      return newRequest(Request.prototype, requestRecord(s.request, null), headers, s.body.bytes);
    }
  }
  installBodyMethods(Request, requestOf);
  tag(Request, "Request");

  // Response (https://fetch.spec.whatwg.org/#response-class). Its response: type, status,
  // status message, URL, whether it was redirected; its headers a Headers object; its body a
  // body state.
  const NULL_BODY_STATUSES = listOf(101, 103, 204, 205, 304);
  const isNullBodyStatus = (s) => listIncludes(NULL_BODY_STATUSES, s);
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
    const d = dictionaryArg(v, "ResponseInit");
    const out = { __proto__: null, headers: undefined, status: 200, statusText: "" };
    const headers = d.headers;
    if (headers !== undefined) out.headers = convertHeadersInit(headers);
    const status = d.status;
    if (status !== undefined) out.status = toUnsignedShort(status);
    const statusText = d.statusText;
    if (statusText !== undefined) out.statusText = toByteString(statusText);
    return out;
  }
  const responseStates = new WeakMapCtor(); // Response -> {response, headers, body}
  const responseOf = (r) => {
    const s = WeakMapGet(responseStates, r);
    if (s === undefined) throw new TypeErrorCtor("'this' is not a Response");
    return s;
  };
  const responseRecord = (type, status, statusText, url, redirected) =>
    ({ __proto__: null, type, status, statusText, url, redirected });
  // A Response of prototype `proto` for `response`, with a Headers object of `headerList`
  // (copied) and `guard`, and body bytes `bytes`.
  function newResponse(proto, response, headerList, bytes, guard) {
    const self = host.platformObject(proto);
    WeakMapSet(responseStates, self, { __proto__: null, response, headers: makeHeaders(headerList, guard), body: bodyState(bytes) });
    return self;
  }
  const makeResponse = (response, headerList, bytes, guard) => newResponse(Response.prototype, response, headerList, bytes, guard);
  class Response {
    // https://fetch.spec.whatwg.org/#dom-response
    constructor(body = null, init = undefined) {
      const bodyInit = body === null || body === undefined ? null : convertBodyInit(body);
      const i = convertResponseInit(init);
      // Steps 1-2. Set this's response to a new response, and this's headers to a new
      // Headers object with guard "response".
      const self = newResponse(new.target.prototype, responseRecord("default", 200, "", "", false), list(), null, "response");
      // Steps 3-4. bodyWithType.
      const extracted = bodyInit === null ? null : extractBody(bodyInit);
      // Step 5. Initialize the response.
      initializeResponse(self, i, extracted);
      return self;
    }
    // https://fetch.spec.whatwg.org/#dom-response-error
    static error() {
      return makeResponse(responseRecord("error", 0, "", "", false), list(), null, "immutable");
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
      return makeResponse(responseRecord("default", status, "", "", false), listOf(header("Location", parsed.href)), null, "immutable");
    }
    // https://fetch.spec.whatwg.org/#dom-response-json
    static json(data, init = undefined) {
      requireArgs(arguments.length, 1, "Response.json");
      const i = convertResponseInit(init);
      // Step 1. Serialize data to JSON bytes (a TypeError if it serialises to nothing).
      const text = JSONStringify(data);
      if (text === undefined) throw new TypeErrorCtor("Failed to execute 'json' on 'Response': the data is not JSON-serializable");
      // Steps 2-4. A new Response with guard "response", initialized with init and
      // (bytes, "application/json").
      const r = makeResponse(responseRecord("default", 200, "", "", false), list(), null, "response");
      initializeResponse(r, i, { __proto__: null, bytes: host.utf8Encode(text), type: "application/json" });
      return r;
    }
    get type() { return responseOf(this).response.type; }
    get url() { return withoutFragment(responseOf(this).response.url); }
    get redirected() { return responseOf(this).response.redirected; }
    get status() { return responseOf(this).response.status; }
    get ok() { const s = responseOf(this).response.status; return s >= 200 && s <= 299; }
    get statusText() { return responseOf(this).response.statusText; }
    get headers() { return responseOf(this).headers; }
    // https://fetch.spec.whatwg.org/#dom-response-clone
    clone() {
      const s = responseOf(this);
      // 1. If this is unusable, then throw a TypeError.
      if (bodyUnusable(s.body)) throw new TypeErrorCtor("Failed to execute 'clone' on 'Response': the body has already been consumed");
      // 2-3. A clone of this's response, with a new Headers object of the same guard.
      const r = s.response;
      return makeResponse(responseRecord(r.type, r.status, r.statusText, r.url, r.redirected),
        headersList(s.headers), s.body.bytes, headersGuard(s.headers));
    }
  }
  // https://fetch.spec.whatwg.org/#initialize-a-response
  function initializeResponse(response, i, body) {
    // Step 1. A status outside 200-599 is a RangeError.
    if (i.status < 200 || i.status > 599) throw new RangeErrorCtor(`The status ${i.status} is outside the range [200, 599]`);
    // Step 2. A statusText that is not a reason-phrase is a TypeError.
    if (!isReasonPhrase(i.statusText)) throw new TypeErrorCtor(`'${i.statusText}' is not a valid status text`);
    // Steps 3-4.
    const s = responseOf(response);
    s.response.status = i.status;
    s.response.statusText = i.statusText;
    // Step 5. init's headers.
    if (i.headers !== undefined) fillHeaders(s.headers, i.headers);
    // Step 6. The body: none for a null body status; its type as Content-Type.
    if (body !== null) {
      if (isNullBodyStatus(s.response.status)) throw new TypeErrorCtor(`A response with status ${s.response.status} cannot have a body`);
      s.body.bytes = body.bytes;
      const l = headersList(s.headers);
      if (body.type !== null && !headerListContains(l, "content-type")) headerListAppend(l, "Content-Type", body.type);
    }
  }
  installBodyMethods(Response, responseOf);
  tag(Response, "Response");

  // Fetching: the engine does main fetch on another thread and answers with a task
  // (hooks.fetchDone → finishFetch); blob: URLs are this realm's, fetched here.
  const fetches = new MapCtor(); // id -> done(response)
  let nextFetch = 1;
  // A network error, or the response the engine gave: {error, timedOut} or {type, status,
  // statusText, url, redirected, headers (a header list), body (bytes, or null)}.
  const networkError = (message, timedOut = false) => ({ __proto__: null, error: message, timedOut });
  // The request as the engine takes it (JsprofFetchRequest: a null-prototype dictionary,
  // so that its conversion reads nothing but its own members).
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
    const s = blobOf(blob);
    const headers = listOf(header("Content-Length", StringCtor(s.bytes.length)), header("Content-Type", s.type));
    return { __proto__: null, error: null, type: "basic", status: 200, statusText: "OK", url: r.url, redirected: false, headers, body: s.bytes };
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
  // The engine's answer: its metadata (JSON, parsed into null-prototype records and lists)
  // and the body as a byte string.
  function responseFromEngine(meta, body) {
    if (meta.error !== undefined) return networkError(StringCtor(meta.error), meta.timedOut === true);
    const headers = list();
    const pairs = meta.headers;
    for (let i = 0; i < pairs.length; i++) listPush(headers, header(pairs[i][0], pairs[i][1]));
    return { __proto__: null, error: null, type: meta.type, status: meta.status, statusText: meta.statusText,
      url: meta.url, redirected: meta.redirected, headers, body: meta.type === "opaque" || meta.type === "opaqueredirect" ? null : body };
  }
  // hooks.fetchDone: request `id` is answered.
  function finishFetch(id, metaJSON, body) {
    const done = MapGet(fetches, id);
    if (done === undefined) return;
    MapDelete(fetches, id);
    done(responseFromEngine(parseInternalJSON(metaJSON), body));
  }
  // A synchronous fetch (XMLHttpRequest): the engine blocks until the response is in.
  function fetchSync(r) {
    if (isBlobURL(r.url)) return blobFetch(r);
    const meta = parseInternalJSON(host.fetchSync(r));
    return responseFromEngine(meta, meta.body !== undefined ? meta.body : "");
  }

  // fetch() (https://fetch.spec.whatwg.org/#fetch-method).
  function fetch(input, init = undefined) {
    // Step 1. Let p be a new promise.
    let resolve, reject;
    const p = new PromiseCtor((res, rej) => { resolve = res; reject = rej; });
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
    const s = requestOf(requestObject);
    const request = s.request;
    if (s.body.bytes !== null) s.body.used = true;
    // Steps 12-13. Fetch it; a network error rejects p with a TypeError, a response
    // resolves it with a Response whose headers are immutable.
    startFetch(engineRequest(request.method, request.url, request.headerList, s.body.bytes, request.mode,
      request.credentials, request.redirect, false, 0), (response) => {
      if (response.error !== null) {
        reject(new TypeErrorCtor(`Failed to fetch: ${response.error}`));
        return;
      }
      resolve(makeResponse(responseRecord(response.type, response.status, response.statusText, response.url, response.redirected),
        response.headers, response.body, "immutable"));
    });
    return p;
  }

  // ProgressEvent (https://xhr.spec.whatwg.org/#interface-progressevent).
  class ProgressEvent extends Event {
    constructor(type, eventInitDict = undefined) {
      const self = makeEvent(new.target.prototype, eventArgs(type, eventInitDict), arguments.length);
      // ProgressEventInit's own members, after EventInit's: lengthComputable, loaded, total.
      const d = dictionaryArg(eventInitDict, "ProgressEventInit");
      const lengthComputable = !!d.lengthComputable;
      const loaded = d.loaded;
      const total = d.total;
      WeakMapSet(eventExtra, self, { __proto__: null, lengthComputable,
        loaded: loaded === undefined ? 0 : NumberCtor(loaded), total: total === undefined ? 0 : NumberCtor(total) });
      return self;
    }
    get lengthComputable() { return !!extraOf(this).lengthComputable; }
    get loaded() { return extraOf(this).loaded ?? 0; }
    get total() { return extraOf(this).total ?? 0; }
  }
  tag(ProgressEvent, "ProgressEvent");
  // fire a progress event (https://xhr.spec.whatwg.org/#concept-event-fire-progress)
  function fireProgress(target, type, transmitted, length) {
    dispatch(target, trustedEvent(ProgressEvent, type, { __proto__: null, bubbles: false, cancelable: false,
      lengthComputable: length !== 0, loaded: transmitted, total: length }));
  }

  // XMLHttpRequest (https://xhr.spec.whatwg.org/): any method, request headers, bodies,
  // synchronous (host.fetchSync, the caller blocked) and asynchronous (a fetch underneath,
  // with its events), the same CORS rules and preflight as fetch(). Its state is a record
  // in `xhrState`; its upload object is an XMLHttpRequestUpload the engine makes.
  const UNSENT = 0, OPENED = 1, HEADERS_RECEIVED = 2, LOADING = 3, DONE = 4;
  const XHR_EVENTS = listOf("loadstart", "progress", "abort", "error", "load", "timeout", "loadend");
  const RESPONSE_TYPES = listOf("", "arraybuffer", "blob", "document", "json", "text");
  class XMLHttpRequestEventTarget extends EventTarget {
    constructor() { throw illegal(); }
  }
  for (let i = 0; i < XHR_EVENTS.length; i++) defineHandler(XMLHttpRequestEventTarget.prototype, XHR_EVENTS[i]);
  tag(XMLHttpRequestEventTarget, "XMLHttpRequestEventTarget");
  class XMLHttpRequestUpload extends XMLHttpRequestEventTarget {
    constructor() { throw illegal(); }
  }
  tag(XMLHttpRequestUpload, "XMLHttpRequestUpload");
  const hasListeners = (target) => { const l = WeakMapGet(listeners, target); return l !== undefined && l.length > 0; };
  const inWindow = !init.worker;
  const xhrNetworkError = () => ({ __proto__: null, error: "", timedOut: false, status: 0, statusText: "", url: "", headers: list(), body: null });
  // The response object of responseType "document" or a JSON parse error (null).
  const FAILURE = list();
  const xhrState = new WeakMapCtor(); // XMLHttpRequest -> its state
  const xhrOf = (x) => {
    const s = WeakMapGet(xhrState, x);
    if (s === undefined) throw new TypeErrorCtor("'this' is not an XMLHttpRequest");
    return s;
  };
  class XMLHttpRequest extends XMLHttpRequestEventTarget {
    // https://xhr.spec.whatwg.org/#dom-xmlhttprequest
    constructor() {
      const self = makeEventTarget(new.target.prototype);
      // 1. Set this's upload object to a new XMLHttpRequestUpload object.
      WeakMapSet(xhrState, self, { __proto__: null, state: UNSENT, sendFlag: false, method: "GET", url: "", sync: false, headers: list(),
        timeout: 0, withCredentials: false, upload: makeEventTarget(XMLHttpRequestUpload.prototype), uploadListener: false,
        uploadComplete: false, timedOut: false, response: xhrNetworkError(), responseType: "", responseObject: null,
        overrideMime: null, generation: 0, timer: 0 });
      return self;
    }
    get readyState() { return xhrOf(this).state; }
    // https://xhr.spec.whatwg.org/#the-timeout-attribute
    get timeout() { return xhrOf(this).timeout; }
    set timeout(v) {
      const s = xhrOf(this);
      v = NumberCtor(v) >>> 0;
      // 1. If the current global object is a Window object and this's synchronous flag is
      // set, then throw an "InvalidAccessError" DOMException. 2. Set this's timeout.
      if (inWindow && s.sync) throw new DOMException("Synchronous requests in a window cannot have a timeout", "InvalidAccessError");
      s.timeout = v;
    }
    // https://xhr.spec.whatwg.org/#the-withcredentials-attribute
    get withCredentials() { return xhrOf(this).withCredentials; }
    set withCredentials(v) {
      const s = xhrOf(this);
      // 1. If this's state is not unsent or opened, or its send() flag is set, then throw
      // an "InvalidStateError" DOMException. 2. Set withCredentials.
      if ((s.state !== UNSENT && s.state !== OPENED) || s.sendFlag) throw new DOMException("withCredentials can only be set before send()", "InvalidStateError");
      s.withCredentials = !!v;
    }
    get upload() { return xhrOf(this).upload; }
    // https://xhr.spec.whatwg.org/#the-open()-method
    open(method, url, async = true, username = null, password = null) {
      const s = xhrOf(this);
      requireArgs(arguments.length, 2, "XMLHttpRequest.open");
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
      async = arguments.length < 3 ? true : !!async;
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
      const s = xhrOf(this);
      requireArgs(arguments.length, 2, "XMLHttpRequest.setRequestHeader");
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
      const s = xhrOf(this);
      const xhr = this;
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
        xhrEndOfBody(xhr, s, response);
        return;
      }
      // Step 11. Asynchronous: loadstart, then the fetch.
      fireProgress(xhr, "loadstart", 0, 0);
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
        xhrProcessResponse(xhr, s, response, generation);
      });
      // The timeout: when it passes first, the request ends as timed out.
      if (s.timeout !== 0) {
        s.timer = addTimer(() => {
          s.timer = 0;
          if (s.generation !== generation || !s.sendFlag) return;
          s.generation++;
          s.timedOut = true;
          xhrHandleErrors(xhr, s, xhrNetworkError());
        }, s.timeout, list(), false);
      }
    }
    // https://xhr.spec.whatwg.org/#the-abort()-method
    abort() {
      const s = xhrOf(this);
      // Step 1. Abort the fetch.
      s.generation++;
      if (s.timer) { clearTimer(s.timer); s.timer = 0; }
      // Step 2.
      if ((s.state === OPENED && s.sendFlag) || s.state === HEADERS_RECEIVED || s.state === LOADING) {
        const sync = s.sync;
        s.sync = false;
        xhrRequestError(this, s, "abort", "AbortError", "The request was aborted");
        s.sync = sync;
      }
      // Step 3.
      if (s.state === DONE) {
        s.state = UNSENT;
        s.response = xhrNetworkError();
      }
    }
    get responseURL() { return withoutFragment(xhrOf(this).response.url); }
    get status() { return xhrOf(this).response.status; }
    get statusText() { return xhrOf(this).response.statusText; }
    // https://xhr.spec.whatwg.org/#the-getresponseheader()-method
    getResponseHeader(name) {
      const s = xhrOf(this);
      requireArgs(arguments.length, 1, "XMLHttpRequest.getResponseHeader");
      return headerListGet(s.response.headers, toByteString(name));
    }
    // https://xhr.spec.whatwg.org/#the-getallresponseheaders()-method
    getAllResponseHeaders() {
      const pairs = sortAndCombine(xhrOf(this).response.headers);
      let out = "";
      for (let i = 0; i < pairs.length; i++) out += `${pairs[i].name}: ${pairs[i].value}\r\n`;
      return out;
    }
    // https://xhr.spec.whatwg.org/#dom-xmlhttprequest-overridemimetype
    overrideMimeType(mime) {
      const s = xhrOf(this);
      requireArgs(arguments.length, 1, "XMLHttpRequest.overrideMimeType");
      mime = toDOMString(mime);
      // 1. If this's state is loading or done, then throw an "InvalidStateError".
      if (s.state === LOADING || s.state === DONE) throw new DOMException("overrideMimeType: the response is already loading", "InvalidStateError");
      // 2-3. The parsed MIME type, or application/octet-stream (a string with a character
      // above U+00FF parses to nothing).
      let latin1 = true;
      for (let i = 0; i < mime.length; i++) if (StringPrototypeCharCodeAt(mime, i) > 255) latin1 = false;
      const parsed = latin1 ? host.extractMimeType(mime) : "";
      s.overrideMime = parsed === "" ? "application/octet-stream" : parsed;
    }
    // https://xhr.spec.whatwg.org/#the-responsetype-attribute
    get responseType() { return xhrOf(this).responseType; }
    set responseType(v) {
      const s = xhrOf(this);
      let type;
      try { type = toEnum(v, RESPONSE_TYPES, "XMLHttpRequestResponseType"); } catch { return; }
      // 1. In a worker, "document" is ignored.
      if (!inWindow && type === "document") return;
      // 2. Loading or done: an "InvalidStateError".
      if (s.state === LOADING || s.state === DONE) throw new DOMException("responseType cannot be set once the response is loading", "InvalidStateError");
      // 3. A synchronous request in a window: an "InvalidAccessError".
      if (inWindow && s.sync) throw new DOMException("Synchronous requests in a window cannot have a responseType", "InvalidAccessError");
      s.responseType = type;
    }
    // https://xhr.spec.whatwg.org/#the-response-attribute
    get response() {
      const s = xhrOf(this);
      if (s.responseType === "" || s.responseType === "text") {
        return s.state === LOADING || s.state === DONE ? xhrText(s) : "";
      }
      if (s.state !== DONE) return null;
      if (s.responseObject !== null) return s.responseObject === FAILURE ? null : s.responseObject;
      const bytes = s.response.body === null ? "" : s.response.body;
      let value = null;
      if (s.responseType === "arraybuffer") value = bytesToArrayBuffer(bytes);
      else if (s.responseType === "blob") value = makeBlob(Blob.prototype, bytes, xhrFinalMimeType(s));
      else if (s.responseType === "json") {
        try { value = s.response.body === null ? null : JSONParse(host.utf8Decode(bytes)); } catch { value = FAILURE; }
      } else value = FAILURE; // "document": jsprof parses no XML or HTML documents here
      s.responseObject = value;
      return value === FAILURE ? null : value;
    }
    // https://xhr.spec.whatwg.org/#the-responsetext-attribute
    get responseText() {
      const s = xhrOf(this);
      if (s.responseType !== "" && s.responseType !== "text") throw new DOMException("responseText is only for responseType '' or 'text'", "InvalidStateError");
      return s.state === LOADING || s.state === DONE ? xhrText(s) : "";
    }
    get responseXML() {
      const s = xhrOf(this);
      if (s.responseType !== "" && s.responseType !== "document") throw new DOMException("responseXML is only for responseType '' or 'document'", "InvalidStateError");
      return null;
    }
  }
  // processResponse and the body's chunks (https://xhr.spec.whatwg.org/#the-send()-method,
  // step 11.9): the whole body arrives at once.
  function xhrProcessResponse(xhr, s, response, generation) {
    s.response = response.error === null ? response : xhrNetworkError();
    if (response.error !== null) { xhrHandleErrors(xhr, s, response); return; }
    s.state = HEADERS_RECEIVED;
    fire(xhr, "readystatechange");
    if (s.generation !== generation || s.state !== HEADERS_RECEIVED) return;
    const body = response.body === null ? "" : response.body;
    if (body.length > 0) {
      s.state = LOADING;
      fire(xhr, "readystatechange");
      if (s.generation !== generation) return;
      fireProgress(xhr, "progress", body.length, body.length);
      if (s.generation !== generation) return;
    }
    xhrEndOfBody(xhr, s, response);
  }
  // handle errors (https://xhr.spec.whatwg.org/#handle-errors)
  function xhrHandleErrors(xhr, s, response) {
    // 1. If xhr's send() flag is unset, then return.
    if (!s.sendFlag) return;
    // 2. If xhr's timed out flag is set: the request error steps for "timeout".
    if (s.timedOut) xhrRequestError(xhr, s, "timeout", "TimeoutError", "The request timed out");
    // 4. Otherwise, for a network error: the request error steps for "error".
    else if (response.error !== null) xhrRequestError(xhr, s, "error", "NetworkError", `Failed to load '${s.url}': ${response.error}`);
  }
  // request error steps (https://xhr.spec.whatwg.org/#request-error-steps)
  function xhrRequestError(xhr, s, event, name, message) {
    // 1-3. Done, the send() flag unset, the response a network error.
    s.state = DONE;
    s.sendFlag = false;
    s.response = xhrNetworkError();
    // 4. If xhr's synchronous flag is set, then throw exception.
    if (s.sync) throw new DOMException(message, name);
    // 5. Fire readystatechange.
    fire(xhr, "readystatechange");
    // 6. The upload's events, if the upload was not complete.
    if (!s.uploadComplete) {
      s.uploadComplete = true;
      if (s.uploadListener) {
        fireProgress(s.upload, event, 0, 0);
        fireProgress(s.upload, "loadend", 0, 0);
      }
    }
    // 7-8. event and loadend at xhr.
    fireProgress(xhr, event, 0, 0);
    fireProgress(xhr, "loadend", 0, 0);
  }
  // handle response end-of-body (https://xhr.spec.whatwg.org/#handle-response-end-of-body)
  function xhrEndOfBody(xhr, s, response) {
    // Steps 1-2.
    if (response.error !== null) {
      s.response = xhrNetworkError();
      xhrHandleErrors(xhr, s, response);
      return;
    }
    s.response = response;
    const length = response.body === null ? 0 : response.body.length;
    // Step 5. A last progress event (asynchronous requests).
    if (!s.sync) fireProgress(xhr, "progress", length, length);
    // Steps 6-10.
    s.state = DONE;
    s.sendFlag = false;
    fire(xhr, "readystatechange");
    fireProgress(xhr, "load", length, length);
    fireProgress(xhr, "loadend", length, length);
  }
  // text response (https://xhr.spec.whatwg.org/#text-response): UTF-8.
  function xhrText(s) {
    const body = s.response.body;
    return body === null ? "" : host.utf8Decode(body);
  }
  // https://xhr.spec.whatwg.org/#final-mime-type
  function xhrFinalMimeType(s) {
    if (s.overrideMime !== null) return s.overrideMime;
    const type = host.extractMimeType(headerListGet(s.response.headers, "content-type") ?? "");
    return type === "" ? "text/xml" : type;
  }
  const XHR_STATES = listOf("UNSENT", "OPENED", "HEADERS_RECEIVED", "LOADING", "DONE");
  for (let i = 0; i < XHR_STATES.length; i++) {
    ObjectDefineProperty(XMLHttpRequest, XHR_STATES[i], dataDescriptor(i, false, true, false));
    ObjectDefineProperty(XMLHttpRequest.prototype, XHR_STATES[i], dataDescriptor(i, false, true, false));
  }
  defineHandler(XMLHttpRequest.prototype, "readystatechange");
  tag(XMLHttpRequest, "XMLHttpRequest");

  // ---------------------------------------------------------------------------------------
  // The global's members: its attributes and interfaces (the operations are 12-globals.js's).
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
    clearTimeout: clearTimer,
    clearInterval: clearTimer,
    reportError,
  };
  if (init.worker) {
    // A worker's global: no document, no window (its postMessage, close and importScripts
    // are 12-globals.js's).
    const windowOnly = ["window", "document", "frames", "opener", "Window", "Node", "Element", "HTMLElement",
      "HTMLScriptElement", "HTMLIFrameElement", "HTMLMetaElement", "HTMLAnchorElement", "HTMLImageElement",
      "HTMLFormElement", "HTMLInputElement", "HTMLButtonElement", "HTMLTextAreaElement", "HTMLOptionElement",
      "HTMLSelectElement", "Text", "Document", "postMessage"];
    for (let i = 0; i < windowOnly.length; i++) delete api[windowOnly[i]];
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
