
  // ---------------------------------------------------------------------------------------
  // URL and URLSearchParams (https://url.spec.whatwg.org/), parsed by the `url` crate:
  // URLs by host.parseURL, application/x-www-form-urlencoded by host.formParse and
  // host.formEncode.
  // A URL's parts (href, protocol, …, origin) as a null-prototype record.
  function parseURL(input, base, setter, value) {
    // A flat record of strings: only its own prototype needs to go.
    const parts = ObjectSetPrototypeOf(JSONParse(host.parseURL(StringCtor(input), base === undefined ? undefined : StringCtor(base),
      setter, value === undefined ? undefined : StringCtor(value))), null);
    if (parts.error !== undefined) throw new TypeErrorCtor(parts.error);
    return parts;
  }
  const urlState = new WeakMapCtor(); // URL -> {parts, params}
  const paramsState = new WeakMapCtor(); // URLSearchParams -> {list of {name, value}, url}
  const urlOf = (u) => {
    const s = WeakMapGet(urlState, u);
    if (s === undefined) throw new TypeErrorCtor("'this' is not a URL");
    return s;
  };
  const paramsOf = (p) => {
    const s = WeakMapGet(paramsState, p);
    if (s === undefined) throw new TypeErrorCtor("'this' is not a URLSearchParams");
    return s;
  };
  const pair = (name, value) => ({ __proto__: null, name, value });
  // https://url.spec.whatwg.org/#concept-urlencoded-parser
  function formParse(input) {
    const out = list();
    if (StringPrototypeIndexOf(input, "%") < 0 && StringPrototypeIndexOf(input, "+") < 0) {
      // Nothing to decode: 1. split on "&", 3. drop empty sequences, split each at its
      // first "=" (a name without one has the value ""), as the engine's parser would.
      const sequences = splitString(input, "&");
      for (let i = 0; i < sequences.length; i++) {
        const bytes = sequences[i];
        if (bytes === "") continue;
        const eq = StringPrototypeIndexOf(bytes, "=");
        listPush(out, eq < 0 ? pair(bytes, "") : pair(StringPrototypeSlice(bytes, 0, eq), StringPrototypeSlice(bytes, eq + 1)));
      }
      return out;
    }
    // Arrays of strings, read by index and length only (own properties).
    const pairs = JSONParse(host.formParse(input));
    for (let i = 0; i < pairs.length; i++) listPush(out, pair(pairs[i][0], pairs[i][1]));
    return out;
  }
  // https://url.spec.whatwg.org/#concept-urlencoded-serializer
  function formSerialize(l) {
    let out = "";
    for (let i = 0; i < l.length; i++) {
      out += (i ? "&" : "") + host.formEncode(l[i].name) + "=" + host.formEncode(l[i].value);
    }
    return out;
  }
  // https://url.spec.whatwg.org/#concept-urlsearchparams-update
  function updateParams(s) {
    if (s.url === null) return;
    // 1. Let serializedQuery be the serialization of query's list. 2. If it is the empty
    // string, set it to null. 3. Set query's URL object's URL's query to serializedQuery.
    urlSet(s.url, "query", formSerialize(s.list));
  }
  // A URLSearchParams of `l`, linked to `url` (or null).
  function makeParams(proto, l, url) {
    const self = ObjectCreate(proto);
    WeakMapSet(paramsState, self, { __proto__: null, list: l, url });
    return self;
  }
  // The pair iterator of a URLSearchParams (https://webidl.spec.whatwg.org/#es-iterator-prototype-object):
  // a live index into its list; `kind` is "key+value", "key" or "value".
  const iteratorState = new WeakMapCtor();
  class URLSearchParamsIterator {
    constructor(key) { if (key !== ILLEGAL) throw illegal(); }
    // https://webidl.spec.whatwg.org/#es-iterator-prototype-object, %%next
    next() {
      const it = WeakMapGet(iteratorState, this);
      if (it === undefined) throw new TypeErrorCtor("'this' is not a URLSearchParams Iterator");
      const l = it.params.list;
      if (it.index >= l.length) return exposed({ __proto__: null, value: undefined, done: true });
      const p = l[it.index++];
      const value = it.kind === "key" ? p.name : it.kind === "value" ? p.value : [p.name, p.value];
      return exposed({ __proto__: null, value, done: false });
    }
  }
  // Its prototype's prototype is %IteratorPrototype% (so `for…of` over it works in page
  // code), and its @@toStringTag is "URLSearchParams Iterator".
  ObjectSetPrototypeOf(URLSearchParamsIterator.prototype, IteratorPrototype);
  tag(URLSearchParamsIterator, "URLSearchParams Iterator");
  function paramsIterator(params, kind) {
    const s = paramsOf(params);
    const it = ObjectCreate(URLSearchParamsIterator.prototype);
    WeakMapSet(iteratorState, it, { __proto__: null, params: s, kind, index: 0 });
    return it;
  }
  // A brand check, for fetch() and XMLHttpRequest bodies (12-fetch.js).
  const isURLSearchParams = (v) => v !== null && typeof v === "object" && WeakMapHas(paramsState, v);
  class URLSearchParams {
    // https://url.spec.whatwg.org/#dom-urlsearchparams-urlsearchparams
    constructor(init = "") {
      const l = list();
      if (init !== null && (typeof init === "object" || typeof init === "function")) {
        // WebIDL's union: a sequence if the object has @@iterator, else a record.
        const method = init[SymbolIterator]; // prelude-lint: allow(protocol-read) WebIDL union conversion: GetMethod(V, @@iterator)
        if (method !== undefined && method !== null) {
          // 2. If init is a sequence, then for each innerSequence of init: if its size is
          // not 2, throw a TypeError; append (innerSequence[0], innerSequence[1]).
          if (typeof method !== "function") throw new TypeErrorCtor("URLSearchParams: init is not iterable");
          const outer = iterableToList(init, method);
          for (let i = 0; i < outer.length; i++) {
            const p = sequenceArg(outer[i], "URLSearchParams: a pair");
            if (p.length !== 2) throw new TypeErrorCtor("URLSearchParams: each pair needs two values");
            listPush(l, pair(toUSVString(p[0]), toUSVString(p[1])));
          }
        } else {
          // 3. Otherwise, if init is a record, for each name → value of init, append
          // (name, value). A record's keys are its own enumerable string keys.
          const keys = ObjectKeys(init);
          for (let i = 0; i < keys.length; i++) listPush(l, pair(toUSVString(keys[i]), toUSVString(init[keys[i]])));
        }
      } else {
        // 4. Otherwise: init is a string; a leading "?" is removed (1.), and it is parsed.
        let s = toUSVString(init);
        if (StringPrototypeCharCodeAt(s, 0) === 0x3f) s = StringPrototypeSlice(s, 1);
        const parsed = formParse(s);
        for (let i = 0; i < parsed.length; i++) listPush(l, parsed[i]);
      }
      return makeParams(new.target.prototype, l, null);
    }
    get size() { return paramsOf(this).list.length; }
    // https://url.spec.whatwg.org/#dom-urlsearchparams-append
    append(name, value) {
      const s = paramsOf(this);
      listPush(s.list, pair(toUSVString(name), toUSVString(value)));
      updateParams(s);
    }
    // https://url.spec.whatwg.org/#dom-urlsearchparams-delete
    delete(name, value = undefined) {
      const s = paramsOf(this);
      name = toUSVString(name);
      if (value !== undefined) value = toUSVString(value);
      // 1. If value is given, remove all tuples whose name is name and value is value;
      // 2. otherwise, remove all tuples whose name is name. 3. Run the update steps.
      const kept = list();
      for (let i = 0; i < s.list.length; i++) {
        const p = s.list[i];
        if (p.name !== name || (value !== undefined && p.value !== value)) listPush(kept, p);
      }
      s.list = kept;
      updateParams(s);
    }
    // https://url.spec.whatwg.org/#dom-urlsearchparams-get
    get(name) {
      const l = paramsOf(this).list;
      name = toUSVString(name);
      for (let i = 0; i < l.length; i++) if (l[i].name === name) return l[i].value;
      return null;
    }
    // https://url.spec.whatwg.org/#dom-urlsearchparams-getall
    getAll(name) {
      const l = paramsOf(this).list;
      name = toUSVString(name);
      const out = list();
      for (let i = 0; i < l.length; i++) if (l[i].name === name) listPush(out, l[i].value);
      return toPageArray(out);
    }
    // https://url.spec.whatwg.org/#dom-urlsearchparams-has
    has(name, value = undefined) {
      const l = paramsOf(this).list;
      name = toUSVString(name);
      if (value !== undefined) value = toUSVString(value);
      for (let i = 0; i < l.length; i++) {
        if (l[i].name === name && (value === undefined || l[i].value === value)) return true;
      }
      return false;
    }
    // https://url.spec.whatwg.org/#dom-urlsearchparams-set
    set(name, value) {
      const s = paramsOf(this);
      name = toUSVString(name);
      value = toUSVString(value);
      // 1. If the list contains a tuple whose name is name, set the value of the first
      // such tuple to value and remove the others. 2. Otherwise, append (name, value).
      const kept = list();
      let found = false;
      for (let i = 0; i < s.list.length; i++) {
        const p = s.list[i];
        if (p.name !== name) listPush(kept, p);
        else if (!found) { found = true; p.value = value; listPush(kept, p); }
      }
      if (!found) listPush(kept, pair(name, value));
      s.list = kept;
      updateParams(s);
    }
    // https://url.spec.whatwg.org/#dom-urlsearchparams-sort: a stable sort by name, in
    // code units (an insertion sort keeps equal names in order).
    sort() {
      const s = paramsOf(this);
      const l = s.list;
      for (let i = 1; i < l.length; i++) {
        const p = l[i];
        let j = i - 1;
        while (j >= 0 && l[j].name > p.name) { l[j + 1] = l[j]; j--; }
        l[j + 1] = p;
      }
      updateParams(s);
    }
    // https://webidl.spec.whatwg.org/#es-forEach: over the live list, by index.
    forEach(callback, thisArg = undefined) {
      const s = paramsOf(this);
      if (typeof callback !== "function") throw new TypeErrorCtor("forEach: callback is not a function");
      for (let i = 0; i < s.list.length; i++) {
        const p = s.list[i];
        ReflectApply(callback, thisArg, [p.value, p.name, this]);
      }
    }
    entries() { return paramsIterator(this, "key+value"); }
    keys() { return paramsIterator(this, "key"); }
    values() { return paramsIterator(this, "value"); }
    // https://url.spec.whatwg.org/#urlsearchparams-stringification-behavior
    toString() { return formSerialize(paramsOf(this).list); }
  }
  // https://webidl.spec.whatwg.org/#es-iterable: @@iterator is the same function as entries.
  ObjectDefineProperty(URLSearchParams.prototype, SymbolIterator,
    dataDescriptor(URLSearchParams.prototype.entries, true, false, true));
  tag(URLSearchParams, "URLSearchParams");
  // Runs URL `url`'s setter `what` with `value`, and keeps its URLSearchParams in step.
  function urlSet(url, what, value) {
    const s = urlOf(url);
    s.parts = parseURL(s.parts.href, undefined, what, value);
    // https://url.spec.whatwg.org/#dom-url-search: a new query updates the list.
    if (what !== "query" && s.params !== null) {
      paramsOf(s.params).list = formParse(StringPrototypeSlice(s.parts.search, 1));
    }
  }
  class URL {
    // https://url.spec.whatwg.org/#dom-url-url
    constructor(url, base = undefined) {
      if (arguments.length === 0) throw new TypeErrorCtor("URL constructor: 1 argument required");
      // 1. Let parsedURL be the result of running the API URL parser on url with base,
      // if given. 2. If parsedURL is failure, throw a TypeError.
      const parts = parseURL(toUSVString(url), base === undefined ? undefined : toUSVString(base));
      // 3. Initialize this with parsedURL.
      WeakMapSet(urlState, this, { __proto__: null, parts, params: null });
    }
    // https://url.spec.whatwg.org/#dom-url-canparse
    static canParse(url, base = undefined) {
      try { parseURL(toUSVString(url), base === undefined ? undefined : toUSVString(base)); return true; } catch { return false; }
    }
    // https://url.spec.whatwg.org/#dom-url-parse
    static parse(url, base = undefined) {
      try { return new URL(url, base); } catch { return null; }
    }
    // https://url.spec.whatwg.org/#dom-url-searchparams: the same object every time.
    get searchParams() {
      const s = urlOf(this);
      if (s.params === null) s.params = makeParams(URLSearchParams.prototype, formParse(StringPrototypeSlice(s.parts.search, 1)), this);
      return s.params;
    }
    toString() { return urlOf(this).parts.href; }
    toJSON() { return urlOf(this).parts.href; }
  }
  const URL_ATTRIBUTES = ["href", "href", "protocol", "protocol", "username", "username",
    "password", "password", "host", "host", "hostname", "hostname", "port", "port",
    "pathname", "pathname", "search", "search", "hash", "hash", "origin", null];
  for (let i = 0; i < URL_ATTRIBUTES.length; i += 2) {
    const prop = URL_ATTRIBUTES[i], setter = URL_ATTRIBUTES[i + 1];
    defineGetter(URL.prototype, prop, function () { return urlOf(this).parts[prop]; },
      setter === null ? undefined : function (v) { urlSet(this, setter, toUSVString(v)); });
  }
  tag(URL, "URL");
  const isURL = (v) => v !== null && typeof v === "object" && WeakMapHas(urlState, v);
