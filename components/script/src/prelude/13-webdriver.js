  // ---------------------------------------------------------------------------------------
  // WebDriver (https://w3c.github.io/webdriver/): what its commands need of this window's
  // document and realm. The engine calls hooks.webdriver(id, command, argsJSON) in the
  // current browsing context's window; the answer goes back through
  // host.webdriverReply(id, error, value): error "" with the value as JSON, or the spec's
  // error code with a message. Engine frames: nothing here reaches a page's trace, and the
  // code Execute Script runs is unregistered (hidden) too.
  const ELEMENT_KEY = "element-6066-11e4-a52e-4f735466cecf";
  const WINDOW_KEY = "window-fcc6-11e5-b4f8-330a88ab9d7f";
  class WebDriverError {
    constructor(code, message) { this.code = code; this.message = message; }
  }
  // The known elements (https://w3c.github.io/webdriver/#dfn-get-or-create-a-web-element-reference):
  // an id is `PAGE.WINDOW.N`, unique in the process; an element keeps its id. A reference
  // from a page the browsing context navigated away from is stale, one from another
  // window of this page "no such element".
  const realmTag = `${init.page}.${init.windowIndex}`;
  const knownElements = new Map();
  const elementIds = new WeakMap();
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
  // https://w3c.github.io/webdriver/#dfn-get-a-known-element
  function knownElement(id) {
    id = StringCtor(id);
    const el = MapGet(knownElements, id);
    if (el === undefined) {
      const page = /^(\d+)\.\d+\.\d+$/.exec(id);
      if (page && NumberCtor(page[1]) < init.page) throw new WebDriverError("stale element reference", `element ${id} belongs to a document navigated away from`);
      throw new WebDriverError("no such element", `no element with reference ${id} in this browsing context`);
    }
    if (!document.contains(el)) throw new WebDriverError("stale element reference", `element ${id} is no longer attached to the document`);
    return el;
  }
  const defineData = (o, k, value) => ObjectDefineProperty(o, k, dataDescriptor(value, true, true, true));
  // https://w3c.github.io/webdriver/#dfn-json-deserialize: element references become elements.
  function deserializeArg(v) {
    if (v === null || typeof v !== "object") return v;
    // Arrays are real arrays (the page's script gets them), filled by definition so that
    // no setter the page planted on Array.prototype runs.
    if (ArrayIsArray(v)) { const out = []; for (let i = 0; i < v.length; i++) defineData(out, i, deserializeArg(v[i])); return out; }
    if (typeof v[ELEMENT_KEY] === "string") return knownElement(v[ELEMENT_KEY]);
    const out = {};
    for (const k of ObjectKeys(v)) defineData(out, k, deserializeArg(v[k]));
    return out;
  }
  // https://w3c.github.io/webdriver/#dfn-internal-json-clone: elements as references, cycles
  // an error; `seen` holds the values being cloned above this one.
  function jsonClone(v, seen) {
    if (v === undefined || v === null) return null;
    const t = typeof v;
    if (t === "boolean" || t === "string") return v;
    if (t === "number") return NumberIsFinite(v) ? v : null;
    if (t !== "object" && t !== "function") throw new WebDriverError("javascript error", `cannot serialise a ${t}`);
    if (v instanceof Element) return elementReference(v);
    if (v === global) return { __proto__: null, [WINDOW_KEY]: `window-${init.windowIndex}` };
    if (SetHas(seen, v)) throw new WebDriverError("javascript error", "cyclic object value");
    SetAdd(seen, v);
    try {
      if (ArrayIsArray(v)) {
        const out = list();
        for (let i = 0; i < v.length; i++) out[i] = jsonClone(v[i], seen);
        return out;
      }
      if (typeof v.toJSON === "function") return jsonClone(ReflectApply(v.toJSON, v, []), seen);
      const out = { __proto__: null };
      for (const k of ObjectKeys(v)) out[k] = jsonClone(v[k], seen);
      return out;
    } finally {
      SetDelete(seen, v);
    }
  }
  const errorText = (e) => {
    if (e instanceof Error || e instanceof DOMException) return `${e.name}: ${e.message}`;
    try { return StringCtor(e); } catch { return "an exception"; }
  };
  function webdriverReply(id, result) {
    let json;
    try { json = JSONStringify(jsonClone(result, new SetCtor())); } catch (e) { webdriverFail(id, e); return; }
    host.webdriverReply(id, "", json);
  }
  function webdriverFail(id, e) {
    if (e instanceof WebDriverError) host.webdriverReply(id, e.code, e.message);
    else host.webdriverReply(id, "javascript error", errorText(e));
  }
  // https://w3c.github.io/webdriver/#execute-script and #execute-async-script: the body
  // becomes a function of this realm, called with `this` the window; a promise it returns
  // is waited for, and an async script gets a resolving callback as its last argument.
  function executeScript(id, body, args, isAsync) {
    let fn;
    try { fn = FunctionCtor(body); } catch (e) { webdriverFail(id, e); return; }
    const settled = new OriginalPromise((resolve) => {
      if (isAsync) defineData(args, args.length, resolve);
      const result = ReflectApply(fn, global, args);
      if (!isAsync) resolve(result);
    });
    PromisePrototypeThen(settled, (value) => webdriverReply(id, value), (e) => webdriverFail(id, e));
  }
  // https://w3c.github.io/webdriver/#get-element-text, without layout: the text of the
  // element's text nodes outside script, style and template, whitespace collapsed.
  const NO_TEXT = new SetCtor(["script", "style", "template", "head", "title"]);
  function elementText(el) {
    let out = "";
    const walk = (node) => {
      for (const c of node._children) {
        if (c instanceof Text) out += c.data;
        else if (!SetHas(NO_TEXT, c.localName)) {
          if (c.localName === "br") out += "\n";
          walk(c);
        }
      }
    };
    walk(el);
    return out.replace(/[ \t\r\f]+/g, " ").replace(/ *\n */g, "\n").trim();
  }
  // https://w3c.github.io/webdriver/#element-click: the mouse events of a click at the
  // element (no layout, so it is always in view and never obscured).
  function clickElement(el) {
    for (const [type, buttons] of [["mouseover", 0], ["mousemove", 0], ["mousedown", 1], ["mouseup", 0], ["click", 0]]) {
      dispatch(el, trustedEvent(MouseEvent, type, { __proto__: null, bubbles: true, cancelable: true, composed: true, detail: type === "click" ? 1 : 0, buttons }));
    }
  }
  const webdriverCommands = {
    __proto__: null,
    execute: ([body, args, isAsync], id) => executeScript(id, body, deserializeArg(args), isAsync),
    find([root, using, value]) {
      const from = root === null ? document : knownElement(root);
      let found;
      if (using === "tag name") found = from.getElementsByTagName(value);
      // https://w3c.github.io/webdriver/#link-text and #partial-link-text: `a` elements by
      // their rendered text, trimmed.
      else if (using === "link text") found = from.getElementsByTagName("a").filter((a) => elementText(a).trim() === value);
      else if (using === "partial link text") found = from.getElementsByTagName("a").filter((a) => elementText(a).includes(value));
      else {
        try { found = from.querySelectorAll(value); } catch (e) { throw new WebDriverError("invalid selector", errorText(e)); }
      }
      return found;
    },
    text: ([id]) => elementText(knownElement(id)),
    attribute: ([id, name]) => knownElement(id).getAttribute(name),
    property: ([id, name]) => knownElement(id)[name],
    tagName: ([id]) => knownElement(id).localName,
    click([id]) { clickElement(knownElement(id)); return null; },
    title: () => document.title,
    source: () => (document.documentElement ? document.documentElement.outerHTML : ""),
    // Switch To Frame by element: the window index of an iframe's document.
    frameWindow([id]) {
      const el = knownElement(id);
      const f = el instanceof HTMLIFrameElement ? frameState.get(el) : undefined;
      if (!f || f.windowIndex === undefined) throw new WebDriverError("no such frame", "the element is not an iframe with a document");
      return f.windowIndex;
    },
  };
  function webdriverCommand(id, command, argsJSON) {
    try {
      const run = webdriverCommands[command];
      if (!run) throw new WebDriverError("unsupported operation", `unknown command ${command}`);
      const result = run(JSONParse(argsJSON), id);
      if (command !== "execute") webdriverReply(id, result);
    } catch (e) {
      webdriverFail(id, e);
    }
  }
