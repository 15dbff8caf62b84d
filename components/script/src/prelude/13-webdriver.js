
  // ---------------------------------------------------------------------------------------
  // WebDriver (https://w3c.github.io/webdriver/): what its commands need of this window's
  // document and realm. The engine calls hooks.webdriver(id, command, argsJSON) in the
  // current browsing context's window; the answer goes back through
  // host.webdriverReply(id, error, value): error "" with the value as JSON, or the spec's
  // error code with a message. Engine frames: nothing here reaches a page's trace, and the
  // code Execute Script runs is unregistered (hidden) too.
  const ELEMENT_KEY = "element-6066-11e4-a52e-4f735466cecf";
  const WINDOW_KEY = "window-fcc6-11e5-b4f8-330a88ab9d7f";
  // A WebDriver error: the spec's code and a message (a record, never page-visible).
  const webDriverErrors = new WeakSetCtor();
  const webDriverError = (code, message) => {
    const e = { __proto__: null, code, message };
    WeakSetAdd(webDriverErrors, e);
    return e;
  };
  // The known elements (https://w3c.github.io/webdriver/#dfn-get-or-create-a-web-element-reference):
  // an id is `PAGE.WINDOW.N`, unique in the process; an element keeps its id. A reference
  // from a page the browsing context navigated away from is stale, one from another
  // window of this page "no such element".
  const realmTag = `${init.page}.${init.windowIndex}`;
  const knownElements = new MapCtor();
  const elementIds = new WeakMapCtor();
  let nextElementId = 0;
  function elementReference(el) {
    let id = WeakMapGet(elementIds, el);
    if (id === undefined) {
      id = `${realmTag}.${++nextElementId}`;
      WeakMapSet(elementIds, el, id);
      MapSet(knownElements, id, el);
    }
    return { __proto__: null, [ELEMENT_KEY]: id };
  }
  const REFERENCE = /^(\d+)\.\d+\.\d+$/;
  // https://w3c.github.io/webdriver/#dfn-get-a-known-element
  function knownElement(id) {
    id = StringCtor(id);
    const el = MapGet(knownElements, id);
    if (el === undefined) {
      const page = RegExpPrototypeExec(REFERENCE, id);
      if (page !== null && NumberCtor(page[1]) < init.page) throw webDriverError("stale element reference", `element ${id} belongs to a document navigated away from`);
      throw webDriverError("no such element", `no element with reference ${id} in this browsing context`);
    }
    if (!isConnected(el)) throw webDriverError("stale element reference", `element ${id} is no longer attached to the document`);
    return el;
  }
  // https://w3c.github.io/webdriver/#dfn-json-deserialize: element references become elements.
  // The arguments arrive as the engine's JSON (null-prototype records and lists); the page's
  // script gets ordinary objects and arrays, filled by definition so that no setter the
  // page planted on Object.prototype or Array.prototype runs.
  function deserializeArg(v) {
    if (v === null || typeof v !== "object") return v;
    if (ArrayIsArray(v)) {
      const out = toPageArray(list());
      for (let i = 0; i < v.length; i++) defineData(out, i, deserializeArg(v[i]));
      return out;
    }
    if (typeof v[ELEMENT_KEY] === "string") return knownElement(v[ELEMENT_KEY]);
    const out = newPageObject();
    const keys = ObjectKeys(v);
    for (let i = 0; i < keys.length; i++) defineData(out, keys[i], deserializeArg(v[keys[i]]));
    return out;
  }
  // https://w3c.github.io/webdriver/#dfn-internal-json-clone: elements as references, cycles
  // an error; `seen` holds the values being cloned above this one. The result is made of
  // null-prototype records and lists (JSON.stringify then reads no `toJSON` of the page).
  function jsonClone(v, seen) {
    if (v === undefined || v === null) return null;
    const t = typeof v;
    if (t === "boolean" || t === "string") return v;
    if (t === "number") return NumberIsFinite(v) ? v : null;
    if (t !== "object" && t !== "function") throw webDriverError("javascript error", `cannot serialise a ${t}`);
    if (isElement(v)) return elementReference(v);
    if (v === global) return { __proto__: null, [WINDOW_KEY]: `window-${init.windowIndex}` };
    if (SetHas(seen, v)) throw webDriverError("javascript error", "cyclic object value");
    SetAdd(seen, v);
    try {
      if (ArrayIsArray(v)) {
        const out = list();
        for (let i = 0; i < v.length; i++) out[i] = jsonClone(v[i], seen);
        return out;
      }
      // The page's value: its toJSON, if it has one, gives what is cloned (as the spec's
      // clone does).
      const toJSON = v.toJSON; // prelude-lint: allow(protocol-read) the JSON clone calls a value's toJSON
      if (typeof toJSON === "function") return jsonClone(ReflectApply(toJSON, v, []), seen);
      const out = { __proto__: null };
      const keys = ObjectKeys(v);
      for (let i = 0; i < keys.length; i++) out[keys[i]] = jsonClone(v[keys[i]], seen);
      return out;
    } finally {
      SetDelete(seen, v);
    }
  }
  const thrownText = (e) => {
    const text = errorText(e);
    if (text !== null) return text;
    try { return StringCtor(e); } catch { return "an exception"; }
  };
  function webdriverReply(id, result) {
    let json;
    try { json = JSONStringify(jsonClone(result, new SetCtor())); } catch (e) { webdriverFail(id, e); return; }
    host.webdriverReply(id, "", json);
  }
  function webdriverFail(id, e) {
    if (e !== null && typeof e === "object" && WeakSetHas(webDriverErrors, e)) host.webdriverReply(id, e.code, e.message);
    else host.webdriverReply(id, "javascript error", thrownText(e));
  }
  // https://w3c.github.io/webdriver/#execute-script and #execute-async-script: the body
  // becomes a function of this realm, called with `this` the window; a promise it returns
  // is waited for, and an async script gets a resolving callback as its last argument.
  function executeScript(id, body, args, isAsync) {
    let fn;
    try { fn = FunctionCtor(body); } catch (e) { webdriverFail(id, e); return; }
    const settled = new PromiseCtor((resolve) => {
      if (isAsync) defineData(args, args.length, resolve);
      const result = ReflectApply(fn, global, args);
      if (!isAsync) resolve(result);
    });
    whenSettled(settled, (value) => webdriverReply(id, value), (e) => webdriverFail(id, e));
  }
  // https://w3c.github.io/webdriver/#get-element-text, without layout: the text of the
  // element's text nodes outside script, style and template, whitespace collapsed.
  const NO_TEXT = listOf("script", "style", "template", "head", "title");
  const TEXT_SPACES = /[ \t\r\f]+/g;
  const LINE_SPACES = / *\n */g;
  function elementTextForWebDriver(el) {
    let out = "";
    const walk = (node) => {
      const children = nodeOf(node).children;
      for (let i = 0; i < children.length; i++) {
        const c = nodeOf(children[i]);
        if (c.kind === NODE_TEXT) out += c.data;
        else if (!listIncludes(NO_TEXT, c.localName)) {
          if (c.localName === "br") out += "\n";
          walk(children[i]);
        }
      }
    };
    walk(el);
    out = replaceMatches(out, TEXT_SPACES, () => " ");
    out = replaceMatches(out, LINE_SPACES, () => "\n");
    return StringPrototypeTrim(out);
  }
  // https://w3c.github.io/webdriver/#element-click: the mouse events of a click at the
  // element (no layout, so it is always in view and never obscured).
  const CLICK_EVENTS = listOf("mouseover", 0, "mousemove", 0, "mousedown", 1, "mouseup", 0, "click", 0);
  function clickElement(el) {
    for (let i = 0; i < CLICK_EVENTS.length; i += 2) {
      const type = CLICK_EVENTS[i];
      dispatch(el, trustedEvent(MouseEvent, type, { __proto__: null, bubbles: true, cancelable: true, composed: true,
        detail: type === "click" ? 1 : 0, buttons: CLICK_EVENTS[i + 1] }));
    }
  }
  // The `a` elements under `root` whose text `keep` accepts
  // (https://w3c.github.io/webdriver/#link-text and #partial-link-text).
  function linksWhere(root, keep) {
    const links = elementsByTagName(root, "a");
    const out = list();
    for (let i = 0; i < links.length; i++) if (keep(StringPrototypeTrim(elementTextForWebDriver(links[i])))) listPush(out, links[i]);
    return out;
  }
  // Each command gets its arguments as a list (the engine's JSON) and the command's id.
  const webdriverCommands = {
    __proto__: null,
    execute: (args, id) => executeScript(id, args[0], deserializeArg(args[1]), args[2]),
    find(args) {
      const root = args[0], using = args[1], value = StringCtor(args[2]);
      const from = root === null ? document : knownElement(root);
      if (using === "tag name") return elementsByTagName(from, value);
      if (using === "link text") return linksWhere(from, (text) => text === value);
      if (using === "partial link text") return linksWhere(from, (text) => StringPrototypeIndexOf(text, value) >= 0);
      let selector;
      try { selector = compileSelector(value); } catch (e) { throw webDriverError("invalid selector", thrownText(e)); }
      const all = descendants(from);
      const out = list();
      for (let i = 0; i < all.length; i++) if (matchesSelector(all[i], selector)) listPush(out, all[i]);
      return out;
    },
    text: (args) => elementTextForWebDriver(knownElement(args[0])),
    attribute: (args) => getAttr(knownElement(args[0]), StringCtor(args[1])),
    // https://w3c.github.io/webdriver/#get-element-property: the page's property, read
    // as the spec says (it may be a getter of the page's).
    property: (args) => knownElement(args[0])[args[1]],
    tagName: (args) => nodeOf(knownElement(args[0])).localName,
    click(args) { clickElement(knownElement(args[0])); return null; },
    title: () => { const t = firstNamed(document, "title"); return t ? collapseWhitespace(textContentOf(t)) : ""; },
    source: () => { const root = documentElementOf(); return root === null ? "" : serializeNode(root); },
    // Switch To Frame by element: the window index of an iframe's document.
    frameWindow(args) {
      const el = knownElement(args[0]);
      const f = isElementNamed(el, "iframe") ? WeakMapGet(frameState, el) : undefined;
      if (!f || f.windowIndex === undefined) throw webDriverError("no such frame", "the element is not an iframe with a document");
      return f.windowIndex;
    },
  };
  function webdriverCommand(id, command, argsJSON) {
    try {
      const run = webdriverCommands[command];
      if (!run) throw webDriverError("unsupported operation", `unknown command ${command}`);
      const result = run(parseInternalJSON(argsJSON), id);
      if (command !== "execute") webdriverReply(id, result);
    } catch (e) {
      webdriverFail(id, e);
    }
  }
