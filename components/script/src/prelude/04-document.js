  // ---------------------------------------------------------------------------------------
  // The document (https://dom.spec.whatwg.org/#nodes), built from html5ever's tree.
  class Node extends EventTarget {
    constructor(key) { if (key !== ILLEGAL) throw new TypeError("Illegal constructor"); super(); this._children = []; this._parent = null; }
    get parentNode() { return this._parent; }
    get parentElement() { return this._parent instanceof Element ? this._parent : null; }
    get childNodes() { return this._children.slice(); }
    get firstChild() { return this._children[0] || null; }
    get lastChild() { return this._children[this._children.length - 1] || null; }
    get nextSibling() { const p = this._parent; return p ? p._children[p._children.indexOf(this) + 1] || null : null; }
    get previousSibling() { const p = this._parent; return p ? p._children[p._children.indexOf(this) - 1] || null : null; }
    get ownerDocument() { return this === document ? null : document; }
    hasChildNodes() { return this._children.length > 0; }
    get textContent() { return this._children.map((c) => c.textContent).join(""); }
    set textContent(v) { const wasConnected = document.contains(this); for (const c of this._children) { c._parent = null; parentOf.delete(c); if (wasConnected) disconnected(c); } this._children = []; if (v !== "" && v != null) this.appendChild(document.createTextNode(String(v))); }
    appendChild(node) { return this.insertBefore(node, null); }
    insertBefore(node, ref) {
      if (!(node instanceof Node)) throw new TypeError("insertBefore: argument is not a Node");
      if (node._parent) node._parent.removeChild(node);
      const i = ref ? this._children.indexOf(ref) : -1;
      if (ref && i < 0) throw new DOMException("The reference node is not a child of this node.", "NotFoundError");
      if (i < 0) this._children.push(node); else this._children.splice(i, 0, node);
      node._parent = this;
      parentOf.set(node, this);
      if (typeof connected === "function" && documentReady) connected(node);
      return node;
    }
    removeChild(node) {
      const i = this._children.indexOf(node);
      if (i < 0) throw new DOMException("The node to be removed is not a child of this node.", "NotFoundError");
      const wasConnected = document.contains(this);
      this._children.splice(i, 1);
      node._parent = null;
      parentOf.delete(node);
      if (wasConnected) disconnected(node);
      return node;
    }
    remove() { if (this._parent) this._parent.removeChild(this); }
    contains(other) { for (let n = other; n; n = n._parent) if (n === this) return true; return false; }
    *_descendants() { for (const c of this._children) { if (c instanceof Element) yield c; yield* c._descendants(); } }
    getElementsByTagName(name) { name = String(name).toLowerCase(); return [...this._descendants()].filter((e) => name === "*" || e.localName === name); }
    getElementsByClassName(names) { const want = String(names).split(/\s+/).filter(Boolean); return [...this._descendants()].filter((e) => want.every((c) => e.classList.includes(c))); }
    querySelectorAll(selectors) { const m = compileSelector(String(selectors)); return [...this._descendants()].filter((e) => m(e)); }
    querySelector(selectors) { const m = compileSelector(String(selectors)); for (const e of this._descendants()) if (m(e)) return e; return null; }
  }
  for (const [n, v] of [["ELEMENT_NODE", 1], ["TEXT_NODE", 3], ["COMMENT_NODE", 8], ["DOCUMENT_NODE", 9]]) {
    Object.defineProperty(Node, n, { value: v, enumerable: true });
    Object.defineProperty(Node.prototype, n, { value: v, enumerable: true });
  }
  tag(Node, "Node");
  class Text extends Node {
    constructor(data = "") { super(ILLEGAL); this.data = String(data); }
    get nodeType() { return 3; }
    get nodeName() { return "#text"; }
    get nodeValue() { return this.data; }
    get textContent() { return this.data; }
    set textContent(v) { this.data = String(v); }
  }
  tag(Text, "Text");
  class Element extends Node {
    constructor(key) { super(key); this._attrs = []; this.localName = ""; }
    get nodeType() { return 1; }
    get nodeName() { return this.tagName; }
    get tagName() { return this.localName.toUpperCase(); }
    get id() { return this.getAttribute("id") || ""; }
    set id(v) { this.setAttribute("id", v); }
    get className() { return this.getAttribute("class") || ""; }
    set className(v) { this.setAttribute("class", v); }
    get classList() { return this.className.split(/\s+/).filter(Boolean); }
    get children() { return this._children.filter((c) => c instanceof Element); }
    get attributes() { return this._attrs.map(([name, value]) => ({ name, value })); }
    getAttribute(n) { const a = this._attrs.find(([k]) => k === String(n).toLowerCase()); return a ? a[1] : null; }
    hasAttribute(n) { return this.getAttribute(n) !== null; }
    setAttribute(n, v) { n = String(n).toLowerCase(); const a = this._attrs.find(([k]) => k === n); if (a) a[1] = String(v); else this._attrs.push([n, String(v)]); }
    removeAttribute(n) { this._attrs = this._attrs.filter(([k]) => k !== String(n).toLowerCase()); }
    matches(selectors) { return compileSelector(String(selectors))(this); }
    // https://html.spec.whatwg.org/#serialising-html-fragments (read-only here).
    get innerHTML() { return serializeChildren(this); }
    get outerHTML() { return serializeNode(this); }
    closest(selectors) { const m = compileSelector(String(selectors)); for (let e = this; e instanceof Element; e = e._parent) if (m(e)) return e; return null; }
  }
  tag(Element, "Element");
  class HTMLElement extends Element {}
  tag(HTMLElement, "HTMLElement");
  // The GlobalEventHandlers the engine fires at elements (script and iframe loads, clicks).
  for (const name of ["load", "error", "click"]) defineHandler(HTMLElement.prototype, name);
  class HTMLScriptElement extends HTMLElement {
    get src() { const s = this.getAttribute("src"); if (s === null) return ""; try { return new URL(s, document.baseURI).href; } catch { return s; } }
    set src(v) { this.setAttribute("src", v); }
    get type() { return this.getAttribute("type") || ""; }
    get async() { return this.hasAttribute("async"); }
    get defer() { return this.hasAttribute("defer"); }
    get text() { return this.textContent; }
  }
  tag(HTMLScriptElement, "HTMLScriptElement");
  // <meta> (https://html.spec.whatwg.org/#the-meta-element): name, content and http-equiv
  // reflect their attributes (testharness.js reads `name` and `content` for timeouts).
  class HTMLMetaElement extends HTMLElement {
    get name() { return this.getAttribute("name") || ""; }
    set name(v) { this.setAttribute("name", v); }
    get content() { return this.getAttribute("content") || ""; }
    set content(v) { this.setAttribute("content", v); }
    get httpEquiv() { return this.getAttribute("http-equiv") || ""; }
    set httpEquiv(v) { this.setAttribute("http-equiv", v); }
  }
  tag(HTMLMetaElement, "HTMLMetaElement");
  // iframes (https://html.spec.whatwg.org/#the-iframe-element): an <iframe src> in the
  // document gets a child browsing context from the engine (host.loadFrame); its window
  // arrives through hooks.attachFrame and its load through hooks.frameLoaded.
  const frameState = new WeakMap();
  const childFrames = [];
  class HTMLIFrameElement extends HTMLElement {
    get src() { const s = this.getAttribute("src"); if (s === null) return ""; try { return new URL(s, document.baseURI).href; } catch { return s; } }
    set src(v) { this.setAttribute("src", v); }
    setAttribute(n, v) { super.setAttribute(n, v); if (String(n).toLowerCase() === "src") loadFrame(this); }
    get contentWindow() { const f = frameState.get(this); return f ? f.window : null; }
    get contentDocument() { const w = this.contentWindow; return w ? w.document : null; }
  }
  tag(HTMLIFrameElement, "HTMLIFrameElement");
  function loadFrame(el) {
    if (!(el instanceof HTMLIFrameElement) || frameState.has(el) || !document.contains(el)) return;
    const src = el.getAttribute("src");
    if (src === null || src === "") return;
    let url;
    try { url = new URL(src, document.baseURI).href; } catch { return; }
    const index = childFrames.length;
    childFrames.push(el);
    frameState.set(el, { index, window: null });
    // A sandbox without allow-same-origin gives the frame's document an opaque origin.
    const sandbox = el.getAttribute("sandbox");
    const opaque = sandbox !== null && !sandbox.toLowerCase().split(/\s+/).includes("allow-same-origin");
    host.loadFrame(index, url, opaque);
  }
  // Removing an iframe from the document destroys its child navigable
  // (https://html.spec.whatwg.org/#the-iframe-element:html-element-removing-steps): its
  // contentWindow is null from then on, and the engine ends its document (scripts, timers,
  // profilers) and lets its realm go (host.discardFrame). Inserted again, it loads anew.
  function disconnected(node) {
    const each = (e) => {
      if (!(e instanceof HTMLIFrameElement)) return;
      const f = frameState.get(e);
      if (!f) return;
      frameState.delete(e);
      childFrames[f.index] = null;
      if (f.windowIndex !== undefined) windowsByIndex.delete(f.windowIndex);
      delete global[String(f.index)];
      host.discardFrame(f.index);
    };
    each(node);
    if (node._descendants) for (const e of node._descendants()) each(e);
  }
  // Connecting a subtree starts the loads of its iframes and prepares its scripts.
  function connected(node) {
    if (!document.contains(node)) return;
    const each = (e) => {
      if (e instanceof HTMLIFrameElement) loadFrame(e);
      else if (e instanceof HTMLScriptElement) prepareScript(e);
    };
    each(node);
    if (node._descendants) for (const e of node._descendants()) each(e);
  }
  // prepare the script element (https://html.spec.whatwg.org/#prepare-the-script-element)
  // for one inserted by script: the parser's own are run by the engine. An external script
  // is fetched and runs when it arrives (it is async); an inline classic script runs now,
  // an inline module as a task.
  const startedScripts = new WeakSet();
  function prepareScript(el) {
    if (startedScripts.has(el) || scriptElements.includes(el)) return;
    const type = (el.getAttribute("type") ?? "").trim().toLowerCase();
    const classic = type === "" || /^(text|application)\/(x-)?(java|ecma)script$/.test(type) || type === "text/jscript";
    const module = type === "module";
    if (!classic && !module) return; // a data block
    const src = el.getAttribute("src");
    if (src === null && el.textContent === "") return;
    startedScripts.add(el);
    const index = scriptElements.length;
    scriptElements[index] = el;
    if (src !== null) {
      let url;
      try { url = new URL(src, document.baseURI).href; } catch { queueTask(() => fire(el, "error")); return; }
      host.loadScript(index, url, module, el.getAttribute("crossorigin"));
    } else if (module) {
      host.loadScript(index, init.url, true, null, el.textContent);
    } else {
      const previous = currentScript;
      currentScript = el;
      try { host.runScript(el.textContent, init.url); } catch (e) { reportError(e); } finally { currentScript = previous; }
    }
  }
  // The HTML fragment serialisation algorithm (https://html.spec.whatwg.org/#serialising-html-fragments),
  // for the nodes this DOM has (elements and text).
  const VOID_ELEMENTS = new Set(["area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"]);
  const RAW_TEXT = new Set(["style", "script", "xmp", "iframe", "noembed", "noframes", "plaintext", "noscript"]);
  const escapeText = (s) => s.replace(/&/g, "&amp;").replace(/\u00a0/g, "&nbsp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  const escapeAttr = (s) => s.replace(/&/g, "&amp;").replace(/\u00a0/g, "&nbsp;").replace(/"/g, "&quot;");
  function serializeChildren(node) {
    let out = "";
    const raw = node instanceof Element && RAW_TEXT.has(node.localName);
    for (const c of node._children) out += c instanceof Text ? (raw ? c.data : escapeText(c.data)) : serializeNode(c);
    return out;
  }
  function serializeNode(e) {
    if (e instanceof Text) return escapeText(e.data);
    let out = `<${e.localName}`;
    for (const [k, v] of e._attrs) out += ` ${k}="${escapeAttr(v)}"`;
    out += ">";
    if (VOID_ELEMENTS.has(e.localName)) return out;
    return out + serializeChildren(e) + `</${e.localName}>`;
  }
  // Links, images and form controls, with the IDL attributes pages and WebDriver clients
  // read (https://html.spec.whatwg.org/#the-a-element, #the-img-element, #forms): content
  // attributes reflected, URLs resolved, and a control's value its own once set.
  const absoluteURL = (el, name) => { const s = el.getAttribute(name); if (s === null) return ""; try { return new URL(s, document.baseURI).href; } catch { return s; } };
  function reflect(cls, names) {
    for (const [prop, attr = prop.toLowerCase()] of names) {
      ObjectDefineProperty(cls.prototype, prop, { __proto__: null, configurable: true, enumerable: true,
        get() { return this.getAttribute(attr) ?? ""; }, set(v) { this.setAttribute(attr, v); } });
    }
  }
  function reflectBoolean(cls, names) {
    for (const [prop, attr = prop.toLowerCase()] of names) {
      ObjectDefineProperty(cls.prototype, prop, { __proto__: null, configurable: true, enumerable: true,
        get() { return this.hasAttribute(attr); }, set(v) { if (v) this.setAttribute(attr, ""); else this.removeAttribute(attr); } });
    }
  }
  const formOf = (el) => { for (let p = el._parent; p instanceof Element; p = p._parent) if (p instanceof HTMLFormElement) return p; return null; };
  const dirtyValue = new WeakMap();
  class HTMLAnchorElement extends HTMLElement {
    get href() { return absoluteURL(this, "href"); }
    set href(v) { this.setAttribute("href", v); }
    get text() { return this.textContent; }
  }
  reflect(HTMLAnchorElement, [["target"], ["rel"], ["download"]]);
  tag(HTMLAnchorElement, "HTMLAnchorElement");
  class HTMLImageElement extends HTMLElement {
    get src() { return absoluteURL(this, "src"); }
    set src(v) { this.setAttribute("src", v); }
  }
  reflect(HTMLImageElement, [["alt"]]);
  tag(HTMLImageElement, "HTMLImageElement");
  class HTMLFormElement extends HTMLElement {
    get elements() { return this.querySelectorAll("input, button, select, textarea"); }
    get length() { return this.elements.length; }
    get action() { return this.hasAttribute("action") ? absoluteURL(this, "action") : document.URL; }
    get method() { return (this.getAttribute("method") || "get").toLowerCase() === "post" ? "post" : "get"; }
  }
  reflect(HTMLFormElement, [["name"], ["target"]]);
  tag(HTMLFormElement, "HTMLFormElement");
  class HTMLInputElement extends HTMLElement {
    get type() { const t = (this.getAttribute("type") || "").toLowerCase(); return t || "text"; }
    set type(v) { this.setAttribute("type", v); }
    get value() { return WeakMapHas(dirtyValue, this) ? WeakMapGet(dirtyValue, this) : (this.getAttribute("value") ?? (this.type === "checkbox" || this.type === "radio" ? "on" : "")); }
    set value(v) { WeakMapSet(dirtyValue, this, StringCtor(v)); }
    get defaultValue() { return this.getAttribute("value") ?? ""; }
    get form() { return formOf(this); }
  }
  reflect(HTMLInputElement, [["name"], ["placeholder"]]);
  reflectBoolean(HTMLInputElement, [["checked"], ["disabled"], ["readOnly"], ["required"]]);
  tag(HTMLInputElement, "HTMLInputElement");
  class HTMLButtonElement extends HTMLElement {
    get type() { const t = (this.getAttribute("type") || "").toLowerCase(); return t === "reset" || t === "button" ? t : "submit"; }
    get value() { return this.getAttribute("value") ?? ""; }
    set value(v) { this.setAttribute("value", v); }
    get form() { return formOf(this); }
  }
  reflect(HTMLButtonElement, [["name"]]);
  reflectBoolean(HTMLButtonElement, [["disabled"]]);
  tag(HTMLButtonElement, "HTMLButtonElement");
  class HTMLTextAreaElement extends HTMLElement {
    get value() { return WeakMapHas(dirtyValue, this) ? WeakMapGet(dirtyValue, this) : this.textContent; }
    set value(v) { WeakMapSet(dirtyValue, this, StringCtor(v)); }
    get defaultValue() { return this.textContent; }
    get type() { return "textarea"; }
    get form() { return formOf(this); }
  }
  reflect(HTMLTextAreaElement, [["name"], ["placeholder"]]);
  reflectBoolean(HTMLTextAreaElement, [["disabled"], ["readOnly"], ["required"]]);
  tag(HTMLTextAreaElement, "HTMLTextAreaElement");
  class HTMLOptionElement extends HTMLElement {
    get value() { return this.getAttribute("value") ?? this.text; }
    set value(v) { this.setAttribute("value", v); }
    get text() { return this.textContent.replace(/\s+/g, " ").trim(); }
    get selected() { return this.hasAttribute("selected"); }
    set selected(v) { if (v) this.setAttribute("selected", ""); else this.removeAttribute("selected"); }
  }
  reflectBoolean(HTMLOptionElement, [["disabled"]]);
  tag(HTMLOptionElement, "HTMLOptionElement");
  class HTMLSelectElement extends HTMLElement {
    get options() { return this.getElementsByTagName("option"); }
    get selectedIndex() { const o = this.options; const i = o.findIndex((x) => x.selected); return i >= 0 ? i : (o.length && !this.multiple ? 0 : -1); }
    get value() { const i = this.selectedIndex; return i >= 0 ? this.options[i].value : ""; }
    get type() { return this.multiple ? "select-multiple" : "select-one"; }
    get form() { return formOf(this); }
  }
  reflect(HTMLSelectElement, [["name"]]);
  reflectBoolean(HTMLSelectElement, [["disabled"], ["multiple"], ["required"]]);
  tag(HTMLSelectElement, "HTMLSelectElement");
  const ELEMENTS = {
    script: HTMLScriptElement, iframe: HTMLIFrameElement, meta: HTMLMetaElement, a: HTMLAnchorElement,
    img: HTMLImageElement, form: HTMLFormElement, input: HTMLInputElement, button: HTMLButtonElement,
    textarea: HTMLTextAreaElement, option: HTMLOptionElement, select: HTMLSelectElement,
  };

  // Selectors: compound selectors (type, #id, .class, [attr], [attr=value], *), the
  // descendant and child combinators, and selector lists.
  function compileSelector(text) {
    const alternatives = text.split(",").map((s) => s.trim());
    if (alternatives.some((s) => !s)) throw new DOMException(`'${text}' is not a valid selector`, "SyntaxError");
    const compiled = alternatives.map((alt) => {
      const tokens = alt.replace(/\s*>\s*/g, " > ").split(/\s+/);
      const steps = [];
      let combinator = " ";
      for (const t of tokens) {
        if (t === ">") { combinator = ">"; continue; }
        steps.push({ combinator, test: compileCompound(t, text) });
        combinator = " ";
      }
      return steps;
    });
    const matchSteps = (el, steps, i) => {
      if (!steps[i].test(el)) return false;
      if (i === 0) return true;
      if (steps[i].combinator === ">") return el._parent instanceof Element && matchSteps(el._parent, steps, i - 1);
      for (let p = el._parent; p instanceof Element; p = p._parent) if (matchSteps(p, steps, i - 1)) return true;
      return false;
    };
    return (el) => compiled.some((steps) => matchSteps(el, steps, steps.length - 1));
  }
  function compileCompound(t, whole) {
    const re = /^(\*|[a-zA-Z][\w-]*)?((?:#[\w-]+|\.[\w-]+|\[[\w-]+(?:=(?:"[^"]*"|'[^']*'|[^\]]*))?\])*)$/;
    const m = re.exec(t);
    if (!m) throw new DOMException(`'${whole}' is not a valid selector`, "SyntaxError");
    const tests = [];
    if (m[1] && m[1] !== "*") { const n = m[1].toLowerCase(); tests.push((e) => e.localName === n); }
    for (const part of m[2].match(/#[\w-]+|\.[\w-]+|\[[^\]]*\]/g) || []) {
      if (part[0] === "#") tests.push((e) => e.id === part.slice(1));
      else if (part[0] === ".") tests.push((e) => e.classList.includes(part.slice(1)));
      else {
        const [, name, value] = /^\[([\w-]+)(?:=(.*))?\]$/.exec(part);
        const v = value === undefined ? undefined : value.replace(/^(["'])(.*)\1$/, "$2");
        tests.push((e) => (v === undefined ? e.hasAttribute(name) : e.getAttribute(name) === v));
      }
    }
    return (e) => tests.every((f) => f(e));
  }

  let readyState = "loading";
  let visibilityHidden = !!init.hidden;
  let currentScript = null;
  const scriptElements = [];
  class Document extends Node {
    get nodeType() { return 9; }
    get nodeName() { return "#document"; }
    get documentElement() { return this.children[0] || null; }
    get children() { return this._children.filter((c) => c instanceof Element); }
    get head() { return this.querySelector("head"); }
    get body() { return this.querySelector("body"); }
    get title() { const t = this.querySelector("title"); return t ? t.textContent.replace(/\s+/g, " ").trim() : ""; }
    set title(v) { let t = this.querySelector("title"); if (!t) { t = this.createElement("title"); (this.head || this.documentElement).appendChild(t); } t.textContent = v; }
    get readyState() { return readyState; }
    get URL() { return init.url; }
    get documentURI() { return init.url; }
    get baseURI() { return init.url; }
    get location() { return location; }
    get defaultView() { return global; }
    get currentScript() { return currentScript; }
    get compatMode() { return "CSS1Compat"; }
    get characterSet() { return "UTF-8"; }
    // https://html.spec.whatwg.org/#page-visibility: the engine says (hooks.setVisibility).
    get visibilityState() { return visibilityHidden ? "hidden" : "visible"; }
    get hidden() { return visibilityHidden; }
    getElementById(id) { for (const e of this._descendants()) if (e.id === String(id)) return e; return null; }
    createElement(name) { return makeElement(String(name).toLowerCase(), []); }
    createTextNode(data) { return new Text(data); }
    createEvent(kind) { return new Event(""); }
  }
  tag(Document, "Document");
  defineHandler(Document.prototype, "readystatechange");
  defineHandler(Document.prototype, "visibilitychange");
  function makeElement(name, attrs) {
    const Cls = ELEMENTS[name] || HTMLElement;
    const e = new Cls(ILLEGAL);
    e.localName = name;
    e._attrs = attrs.map(([k, v]) => [k, v]);
    return e;
  }
  const document = new Document(ILLEGAL);
  // The parsed nodes in document order, each after its parent (init.nodes: [parent, name,
  // attributes, script index] or [parent, null, text]; parent 0 is the document): built
  // in one loop, whatever the depth.
  {
    const made = [document];
    for (const [parent, name, data, script] of init.nodes) {
      const node = name === null ? new Text(data) : makeElement(name, data);
      if (script !== undefined) scriptElements[script] = node;
      made[parent].appendChild(node);
      made.push(node);
    }
  }
  documentReady = true;

