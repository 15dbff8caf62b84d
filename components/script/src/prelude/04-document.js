
  // ---------------------------------------------------------------------------------------
  // The document (https://dom.spec.whatwg.org/#nodes), built from html5ever's tree. A
  // node's state (its kind, parent, children, local name, attributes, text) is in
  // `nodeState`; every operation on the tree is a function of this file, so that a page
  // replacing Node.prototype.appendChild or Element.prototype.getAttribute changes what it
  // calls, never what the engine does.
  const NODE_ELEMENT = 1, NODE_TEXT = 3, NODE_DOCUMENT = 9;
  const nodeState = new WeakMapCtor();
  const nodeOf = (n) => {
    const s = WeakMapGet(nodeState, n);
    if (s === undefined) throw new TypeErrorCtor("'this' is not a Node");
    return s;
  };
  const maybeNodeOf = (v) => (v !== null && typeof v === "object" ? WeakMapGet(nodeState, v) : undefined);
  const isNode = (v) => maybeNodeOf(v) !== undefined;
  const isElement = (v) => { const s = maybeNodeOf(v); return s !== undefined && s.kind === NODE_ELEMENT; };
  const isText = (v) => { const s = maybeNodeOf(v); return s !== undefined && s.kind === NODE_TEXT; };
  // An element whose local name is `name` (what HTMLIFrameElement & co. are here).
  const isElementNamed = (v, name) => { const s = maybeNodeOf(v); return s !== undefined && s.kind === NODE_ELEMENT && s.localName === name; };
  const elementOf = (e) => {
    const s = WeakMapGet(nodeState, e);
    if (s === undefined || s.kind !== NODE_ELEMENT) throw new TypeErrorCtor("'this' is not an Element");
    return s;
  };
  // A new node of prototype `proto`: an EventTarget with a node record.
  function makeNode(proto, kind, localName, attrs, data) {
    const self = makeEventTarget(proto);
    WeakMapSet(nodeState, self, { __proto__: null, kind, parent: null, children: list(), localName, attrs, data });
    return self;
  }
  const makeText = (proto, data) => makeNode(proto, NODE_TEXT, "", list(), data);

  // The element descendants of `node` in tree order, as a list (no recursion).
  function descendants(node) {
    const out = list();
    const stack = list();
    const push = (children) => { for (let i = children.length - 1; i >= 0; i--) listPush(stack, children[i]); };
    push(nodeOf(node).children);
    while (stack.length) {
      const n = stack[stack.length - 1];
      stack.length -= 1;
      const s = nodeOf(n);
      if (s.kind === NODE_ELEMENT) listPush(out, n);
      push(s.children);
    }
    return out;
  }
  // https://dom.spec.whatwg.org/#concept-tree-inclusive-ancestor
  function isInclusiveAncestor(ancestor, node) {
    for (let n = node; n !== null; n = nodeOf(n).parent) if (n === ancestor) return true;
    return false;
  }
  const isConnected = (node) => isInclusiveAncestor(document, node);
  // https://dom.spec.whatwg.org/#concept-descendant-text-content, or a text node's data.
  function textContentOf(node) {
    const s = nodeOf(node);
    if (s.kind === NODE_TEXT) return s.data;
    let out = "";
    const stack = list();
    for (let i = s.children.length - 1; i >= 0; i--) listPush(stack, s.children[i]);
    while (stack.length) {
      const n = nodeOf(stack[stack.length - 1]);
      stack.length -= 1;
      if (n.kind === NODE_TEXT) out += n.data;
      for (let i = n.children.length - 1; i >= 0; i--) listPush(stack, n.children[i]);
    }
    return out;
  }
  // https://dom.spec.whatwg.org/#concept-node-pre-insert (the checks this DOM needs), then
  // insert: `node` goes before `child` (or last) in `parent`.
  function insertBefore(parent, node, child) {
    const ps = nodeOf(parent);
    const ns = maybeNodeOf(node);
    if (ns === undefined) throw new TypeErrorCtor("insertBefore: argument is not a Node");
    if (child !== null && !isNode(child)) throw new TypeErrorCtor("insertBefore: the reference is not a Node");
    // 1. Ensure pre-insertion validity: a document or an inclusive ancestor of parent
    // cannot be inserted; a text node cannot have children; child must be parent's.
    if (ns.kind === NODE_DOCUMENT || isInclusiveAncestor(node, parent) || ps.kind === NODE_TEXT) {
      throw new DOMException("The node cannot be inserted here.", "HierarchyRequestError");
    }
    if (child !== null && nodeOf(child).parent !== parent) {
      throw new DOMException("The reference node is not a child of this node.", "NotFoundError");
    }
    // 2. Let referenceChild be child. 3. If referenceChild is node, set it to node's next
    // sibling.
    if (child === node) child = nextSibling(node);
    // 4. Insert node into parent before referenceChild (removing it from its old parent).
    if (ns.parent !== null) removeChild(ns.parent, node);
    const i = child === null ? -1 : listIndexOf(ps.children, child);
    if (i < 0) listPush(ps.children, node); else listInsertAt(ps.children, i, node);
    ns.parent = parent;
    WeakMapSet(parentOf, node, parent);
    if (documentReady) connected(node);
    return node;
  }
  // https://dom.spec.whatwg.org/#concept-node-pre-remove
  function removeChild(parent, child) {
    const ps = nodeOf(parent);
    const i = isNode(child) ? listIndexOf(ps.children, child) : -1;
    if (i < 0) throw new DOMException("The node to be removed is not a child of this node.", "NotFoundError");
    const wasConnected = isConnected(parent);
    listRemoveAt(ps.children, i);
    nodeOf(child).parent = null;
    WeakMapDelete(parentOf, child);
    if (wasConnected) disconnected(child);
    return child;
  }
  function sibling(node, step) {
    const p = nodeOf(node).parent;
    if (p === null) return null;
    const c = nodeOf(p).children;
    const i = listIndexOf(c, node) + step;
    return i >= 0 && i < c.length ? c[i] : null;
  }
  const nextSibling = (node) => sibling(node, 1);
  // https://dom.spec.whatwg.org/#string-replace-all
  function replaceAllText(node, value) {
    const s = nodeOf(node);
    const wasConnected = isConnected(node);
    const old = s.children;
    s.children = list();
    for (let i = 0; i < old.length; i++) {
      nodeOf(old[i]).parent = null;
      WeakMapDelete(parentOf, old[i]);
      if (wasConnected) disconnected(old[i]);
    }
    if (value !== "") insertBefore(node, makeText(Text.prototype, value), null);
  }
  const pageListOfElements = (l) => toPageArray(l);
  function elementsByTagName(root, name) {
    name = lowerCaseASCII(name);
    const all = descendants(root);
    const out = list();
    for (let i = 0; i < all.length; i++) if (name === "*" || nodeOf(all[i]).localName === name) listPush(out, all[i]);
    return out;
  }
  class Node extends EventTarget {
    constructor() { throw illegal(); }
    get parentNode() { return nodeOf(this).parent; }
    get parentElement() { const p = nodeOf(this).parent; return isElement(p) ? p : null; }
    get childNodes() { return pageArrayOf(nodeOf(this).children); }
    get firstChild() { const c = nodeOf(this).children; return c.length ? c[0] : null; }
    get lastChild() { const c = nodeOf(this).children; return c.length ? c[c.length - 1] : null; }
    get nextSibling() { return sibling(this, 1); }
    get previousSibling() { return sibling(this, -1); }
    get ownerDocument() { nodeOf(this); return this === document ? null : document; }
    get isConnected() { return isConnected(this); }
    hasChildNodes() { return nodeOf(this).children.length > 0; }
    // https://dom.spec.whatwg.org/#dom-node-textcontent
    get textContent() { return textContentOf(this); }
    set textContent(v) { replaceAllText(this, v === null ? "" : StringCtor(v)); }
    // https://dom.spec.whatwg.org/#dom-node-appendchild
    appendChild(node) { return insertBefore(this, node, null); }
    // https://dom.spec.whatwg.org/#dom-node-insertbefore
    insertBefore(node, child) { return insertBefore(this, node, child ?? null); }
    // https://dom.spec.whatwg.org/#dom-node-removechild
    removeChild(child) { return removeChild(this, child); }
    // https://dom.spec.whatwg.org/#dom-childnode-remove
    remove() { const p = nodeOf(this).parent; if (p !== null) removeChild(p, this); }
    // https://dom.spec.whatwg.org/#dom-node-contains
    contains(other) {
      nodeOf(this);
      return other !== null && isNode(other) && isInclusiveAncestor(this, other);
    }
    // https://dom.spec.whatwg.org/#dom-element-getelementsbytagname (a static array here)
    getElementsByTagName(name) { return pageListOfElements(elementsByTagName(this, StringCtor(name))); }
    // https://dom.spec.whatwg.org/#dom-document-getelementsbyclassname
    getElementsByClassName(names) {
      const want = splitOnASCIIWhitespace(StringCtor(names));
      const all = descendants(this);
      const out = list();
      for (let i = 0; i < all.length; i++) {
        if (!want.length) break;
        const classes = attrOf(nodeOf(all[i]), "class");
        let every = true;
        for (let j = 0; j < want.length && every; j++) every = hasClass(classes, want[j]);
        if (every) listPush(out, all[i]);
      }
      return pageListOfElements(out);
    }
    // https://dom.spec.whatwg.org/#dom-parentnode-queryselectorall
    querySelectorAll(selectors) {
      const selector = compileSelector(StringCtor(selectors));
      const all = descendants(this);
      const out = list();
      for (let i = 0; i < all.length; i++) if (matchesSelector(all[i], selector)) listPush(out, all[i]);
      return pageListOfElements(out);
    }
    // https://dom.spec.whatwg.org/#dom-parentnode-queryselector
    querySelector(selectors) {
      const selector = compileSelector(StringCtor(selectors));
      const all = descendants(this);
      for (let i = 0; i < all.length; i++) if (matchesSelector(all[i], selector)) return all[i];
      return null;
    }
  }
  const NODE_TYPES = ["ELEMENT_NODE", 1, "TEXT_NODE", 3, "COMMENT_NODE", 8, "DOCUMENT_NODE", 9];
  for (let i = 0; i < NODE_TYPES.length; i += 2) {
    ObjectDefineProperty(Node, NODE_TYPES[i], dataDescriptor(NODE_TYPES[i + 1], false, true, false));
    ObjectDefineProperty(Node.prototype, NODE_TYPES[i], dataDescriptor(NODE_TYPES[i + 1], false, true, false));
  }
  tag(Node, "Node");
  class Text extends Node {
    // https://dom.spec.whatwg.org/#dom-text-text
    constructor(data = "") { return makeText(new.target.prototype, StringCtor(data)); }
    get nodeType() { return NODE_TEXT; }
    get nodeName() { return "#text"; }
    get data() { return textOf(this).data; }
    set data(v) { textOf(this).data = v === null ? "" : StringCtor(v); }
    get nodeValue() { return textOf(this).data; }
    get textContent() { return textOf(this).data; }
    set textContent(v) { textOf(this).data = v === null ? "" : StringCtor(v); }
  }
  tag(Text, "Text");
  const textOf = (t) => {
    const s = WeakMapGet(nodeState, t);
    if (s === undefined || s.kind !== NODE_TEXT) throw new TypeErrorCtor("'this' is not a Text");
    return s;
  };
  // Attributes (https://dom.spec.whatwg.org/#concept-element-attribute), by lower-cased
  // name as HTML documents have them.
  function attrIndex(s, name) {
    for (let i = 0; i < s.attrs.length; i++) if (s.attrs[i].name === name) return i;
    return -1;
  }
  // https://dom.spec.whatwg.org/#concept-element-attributes-get-by-name
  function getAttr(el, name) {
    const s = elementOf(el);
    const i = attrIndex(s, lowerCaseASCII(name));
    return i < 0 ? null : s.attrs[i].value;
  }
  // An attribute of element record `s` by a name already in lower case (the engine's own
  // lookups: id, class, src…).
  const attrOf = (s, name) => { const i = attrIndex(s, name); return i < 0 ? null : s.attrs[i].value; };
  // Whether the class attribute `value` has the class `token` (a set of space-separated
  // tokens: https://dom.spec.whatwg.org/#concept-ordered-set-parser).
  function hasClass(value, token) {
    if (value === null || token === "") return false;
    for (let from = 0; ;) {
      const i = StringPrototypeIndexOf(value, token, from);
      if (i < 0) return false;
      const end = i + token.length;
      if ((i === 0 || isASCIIWhitespace(StringPrototypeCharCodeAt(value, i - 1))) &&
          (end === value.length || isASCIIWhitespace(StringPrototypeCharCodeAt(value, end)))) return true;
      from = i + 1;
    }
  }
  const hasAttr = (el, name) => getAttr(el, name) !== null;
  // https://dom.spec.whatwg.org/#dom-element-setattribute, then the attribute change steps
  // this DOM has: an iframe whose src is set loads.
  function setAttr(el, name, value) {
    const s = elementOf(el);
    name = lowerCaseASCII(name);
    const i = attrIndex(s, name);
    if (i < 0) listPush(s.attrs, { __proto__: null, name, value });
    else s.attrs[i].value = value;
    if (name === "src" && s.localName === "iframe") loadFrame(el);
  }
  function removeAttr(el, name) {
    const s = elementOf(el);
    const i = attrIndex(s, lowerCaseASCII(name));
    if (i >= 0) listRemoveAt(s.attrs, i);
  }
  // An element's descendant text content (a brand check first).
  const elementText = (el) => { elementOf(el); return textContentOf(el); };
  const classesOf = (el) => splitOnASCIIWhitespace(getAttr(el, "class") ?? "");
  class Element extends Node {
    constructor() { throw illegal(); }
    get nodeType() { return NODE_ELEMENT; }
    get nodeName() { return StringPrototypeToUpperCase(elementOf(this).localName); }
    get localName() { return elementOf(this).localName; }
    // https://dom.spec.whatwg.org/#dom-element-tagname: upper-cased for HTML elements.
    get tagName() { return StringPrototypeToUpperCase(elementOf(this).localName); }
    get id() { return getAttr(this, "id") ?? ""; }
    set id(v) { setAttr(this, "id", StringCtor(v)); }
    get className() { return getAttr(this, "class") ?? ""; }
    set className(v) { setAttr(this, "class", StringCtor(v)); }
    // The classes as an array (this DOM has no DOMTokenList).
    get classList() { return toPageArray(classesOf(this)); }
    get children() {
      const c = elementOf(this).children;
      const out = list();
      for (let i = 0; i < c.length; i++) if (isElement(c[i])) listPush(out, c[i]);
      return toPageArray(out);
    }
    get attributes() {
      const attrs = elementOf(this).attrs;
      const out = list();
      for (let i = 0; i < attrs.length; i++) listPush(out, exposed({ __proto__: null, name: attrs[i].name, value: attrs[i].value }));
      return toPageArray(out);
    }
    // https://dom.spec.whatwg.org/#dom-element-getattribute
    getAttribute(qualifiedName) { return getAttr(this, StringCtor(qualifiedName)); }
    // https://dom.spec.whatwg.org/#dom-element-hasattribute
    hasAttribute(qualifiedName) { return hasAttr(this, StringCtor(qualifiedName)); }
    // https://dom.spec.whatwg.org/#dom-element-setattribute
    setAttribute(qualifiedName, value) { setAttr(this, StringCtor(qualifiedName), StringCtor(value)); }
    // https://dom.spec.whatwg.org/#dom-element-removeattribute
    removeAttribute(qualifiedName) { removeAttr(this, StringCtor(qualifiedName)); }
    // https://dom.spec.whatwg.org/#dom-element-matches
    matches(selectors) {
      elementOf(this);
      return matchesSelector(this, compileSelector(StringCtor(selectors)));
    }
    // https://html.spec.whatwg.org/#serialising-html-fragments (read-only here).
    get innerHTML() { elementOf(this); return serializeChildren(this); }
    get outerHTML() { elementOf(this); return serializeNode(this); }
    // https://dom.spec.whatwg.org/#dom-element-closest
    closest(selectors) {
      elementOf(this);
      const selector = compileSelector(StringCtor(selectors));
      for (let e = this; isElement(e); e = nodeOf(e).parent) if (matchesSelector(e, selector)) return e;
      return null;
    }
  }
  tag(Element, "Element");
  class HTMLElement extends Element {
    constructor() { throw illegal(); }
  }
  tag(HTMLElement, "HTMLElement");
  // The GlobalEventHandlers the engine fires at elements (script and iframe loads, clicks).
  defineHandler(HTMLElement.prototype, "load");
  defineHandler(HTMLElement.prototype, "error");
  defineHandler(HTMLElement.prototype, "click");
  // A URL attribute's value, resolved against the document's base URL (or as it is).
  const absoluteURL = (el, name) => {
    const s = getAttr(el, name);
    if (s === null) return "";
    try { return parseURL(s, init.url).href; } catch { return s; }
  };
  // Reflected attributes (https://html.spec.whatwg.org/#reflecting-content-attributes-in-idl-attributes):
  // `names` is a list of IDL attribute and content attribute names, in pairs.
  function reflect(cls, names) {
    for (let i = 0; i < names.length; i += 2) {
      const attr = names[i + 1];
      ObjectDefineProperty(cls.prototype, names[i], { __proto__: null, configurable: true, enumerable: true,
        get() { return getAttr(this, attr) ?? ""; }, set(v) { setAttr(this, attr, StringCtor(v)); } });
    }
  }
  function reflectBoolean(cls, names) {
    for (let i = 0; i < names.length; i += 2) {
      const attr = names[i + 1];
      ObjectDefineProperty(cls.prototype, names[i], { __proto__: null, configurable: true, enumerable: true,
        get() { return hasAttr(this, attr); }, set(v) { if (v) setAttr(this, attr, ""); else removeAttr(this, attr); } });
    }
  }
  function reflectURL(cls, names) {
    for (let i = 0; i < names.length; i += 2) {
      const attr = names[i + 1];
      ObjectDefineProperty(cls.prototype, names[i], { __proto__: null, configurable: true, enumerable: true,
        get() { return absoluteURL(this, attr); }, set(v) { setAttr(this, attr, StringCtor(v)); } });
    }
  }
  class HTMLScriptElement extends HTMLElement {
    constructor() { throw illegal(); }
    get type() { return getAttr(this, "type") ?? ""; }
    get async() { return hasAttr(this, "async"); }
    get defer() { return hasAttr(this, "defer"); }
    get text() { return elementText(this); }
  }
  reflectURL(HTMLScriptElement, ["src", "src"]);
  tag(HTMLScriptElement, "HTMLScriptElement");
  // <meta> (https://html.spec.whatwg.org/#the-meta-element): name, content and http-equiv
  // reflect their attributes (testharness.js reads `name` and `content` for timeouts).
  class HTMLMetaElement extends HTMLElement {
    constructor() { throw illegal(); }
  }
  reflect(HTMLMetaElement, ["name", "name", "content", "content", "httpEquiv", "http-equiv"]);
  tag(HTMLMetaElement, "HTMLMetaElement");
  // iframes (https://html.spec.whatwg.org/#the-iframe-element): an <iframe src> in the
  // document gets a child browsing context from the engine (host.loadFrame); its window
  // arrives through hooks.attachFrame and its load through hooks.frameLoaded.
  const frameState = new WeakMapCtor();
  const childFrames = list();
  class HTMLIFrameElement extends HTMLElement {
    constructor() { throw illegal(); }
    get contentWindow() { elementOf(this); const f = WeakMapGet(frameState, this); return f ? f.window : null; }
    get contentDocument() {
      elementOf(this);
      const f = WeakMapGet(frameState, this);
      const w = f ? f.window : null;
      // https://html.spec.whatwg.org/#concept-bcc-content-document: only a same-origin
      // window's document (a cross-origin window object offers none).
      return w !== null && w !== undefined && f.sameOrigin ? w.document : null;
    }
  }
  reflectURL(HTMLIFrameElement, ["src", "src"]);
  tag(HTMLIFrameElement, "HTMLIFrameElement");
  function loadFrame(el) {
    if (!isElementNamed(el, "iframe") || WeakMapHas(frameState, el) || !isConnected(el)) return;
    const src = getAttr(el, "src");
    if (src === null || src === "") return;
    let url;
    try { url = parseURL(src, init.url).href; } catch { return; }
    const index = childFrames.length;
    listPush(childFrames, el);
    WeakMapSet(frameState, el, { __proto__: null, index, window: null, windowIndex: undefined, sameOrigin: false });
    // A sandbox without allow-same-origin gives the frame's document an opaque origin.
    const sandbox = getAttr(el, "sandbox");
    const opaque = sandbox !== null && !listIncludes(splitOnASCIIWhitespace(lowerCaseASCII(sandbox)), "allow-same-origin");
    host.loadFrame(index, url, opaque);
  }
  // Removing an iframe from the document destroys its child navigable
  // (https://html.spec.whatwg.org/#the-iframe-element:html-element-removing-steps): its
  // contentWindow is null from then on, and the engine ends its document (scripts, timers,
  // profilers) and lets its realm go (host.discardFrame). Inserted again, it loads anew.
  function disconnected(node) {
    const each = (e) => {
      if (!isElementNamed(e, "iframe")) return;
      const f = WeakMapGet(frameState, e);
      if (!f) return;
      WeakMapDelete(frameState, e);
      childFrames[f.index] = null;
      if (f.windowIndex !== undefined) MapDelete(windowsByIndex, f.windowIndex);
      delete global[StringCtor(f.index)];
      host.discardFrame(f.index);
    };
    each(node);
    const all = descendants(node);
    for (let i = 0; i < all.length; i++) each(all[i]);
  }
  // Connecting a subtree starts the loads of its iframes and prepares its scripts.
  function connected(node) {
    if (!isConnected(node)) return;
    const each = (e) => {
      if (isElementNamed(e, "iframe")) loadFrame(e);
      else if (isElementNamed(e, "script")) prepareScript(e);
    };
    each(node);
    const all = descendants(node);
    for (let i = 0; i < all.length; i++) each(all[i]);
  }
  // prepare the script element (https://html.spec.whatwg.org/#prepare-the-script-element)
  // for one inserted by script: the parser's own are run by the engine. An external script
  // is fetched and runs when it arrives (it is async); an inline classic script runs now,
  // an inline module as a task.
  const startedScripts = new WeakSetCtor();
  const CLASSIC_SCRIPT_TYPE = /^(?:(?:text|application)\/(?:x-)?(?:java|ecma)script|text\/jscript)$/;
  function prepareScript(el) {
    if (WeakSetHas(startedScripts, el) || listIncludes(scriptElements, el)) return;
    const type = lowerCaseASCII(StringPrototypeTrim(getAttr(el, "type") ?? ""));
    const classic = type === "" || RegExpPrototypeExec(CLASSIC_SCRIPT_TYPE, type) !== null;
    const module = type === "module";
    if (!classic && !module) return; // a data block
    const src = getAttr(el, "src");
    const text = textContentOf(el);
    if (src === null && text === "") return;
    WeakSetAdd(startedScripts, el);
    const index = scriptElements.length;
    scriptElements[index] = el;
    if (src !== null) {
      let url;
      try { url = parseURL(src, init.url).href; } catch { queueTask(() => fire(el, "error")); return; }
      host.loadScript(index, url, module, getAttr(el, "crossorigin"));
    } else if (module) {
      host.loadScript(index, init.url, true, null, text);
    } else {
      const previous = currentScript;
      currentScript = el;
      try { host.runScript(text, init.url); } catch (e) { reportError(e); } finally { currentScript = previous; }
    }
  }
  // The HTML fragment serialisation algorithm (https://html.spec.whatwg.org/#serialising-html-fragments),
  // for the nodes this DOM has (elements and text).
  const VOID_ELEMENTS = listOf("area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr");
  const RAW_TEXT = listOf("style", "script", "xmp", "iframe", "noembed", "noframes", "plaintext", "noscript");
  // https://html.spec.whatwg.org/#escapingString: &, U+00A0, and < > in text or " in
  // attribute values.
  function escapeHTML(s, attribute) {
    let out = "";
    let last = 0;
    for (let i = 0; i < s.length; i++) {
      const c = StringPrototypeCharCodeAt(s, i);
      const r = c === 0x26 ? "&amp;" : c === 0xa0 ? "&nbsp;" : attribute ? (c === 0x22 ? "&quot;" : null)
        : c === 0x3c ? "&lt;" : c === 0x3e ? "&gt;" : null;
      if (r !== null) { out += StringPrototypeSlice(s, last, i) + r; last = i + 1; }
    }
    return out + StringPrototypeSlice(s, last);
  }
  function serializeChildren(node) {
    let out = "";
    const s = nodeOf(node);
    const raw = s.kind === NODE_ELEMENT && listIncludes(RAW_TEXT, s.localName);
    for (let i = 0; i < s.children.length; i++) {
      const c = s.children[i];
      out += isText(c) ? (raw ? nodeOf(c).data : escapeHTML(nodeOf(c).data, false)) : serializeNode(c);
    }
    return out;
  }
  function serializeNode(e) {
    const s = nodeOf(e);
    if (s.kind === NODE_TEXT) return escapeHTML(s.data, false);
    let out = "<" + s.localName;
    for (let i = 0; i < s.attrs.length; i++) out += " " + s.attrs[i].name + "=\"" + escapeHTML(s.attrs[i].value, true) + "\"";
    out += ">";
    if (listIncludes(VOID_ELEMENTS, s.localName)) return out;
    return out + serializeChildren(e) + "</" + s.localName + ">";
  }
  // Links, images and form controls, with the IDL attributes pages and WebDriver clients
  // read (https://html.spec.whatwg.org/#the-a-element, #the-img-element, #forms): content
  // attributes reflected, URLs resolved, and a control's value its own once set.
  const formOf = (el) => {
    for (let p = nodeOf(el).parent; isElement(p); p = nodeOf(p).parent) if (nodeOf(p).localName === "form") return p;
    return null;
  };
  const dirtyValue = new WeakMapCtor();
  class HTMLAnchorElement extends HTMLElement {
    constructor() { throw illegal(); }
    get text() { return elementText(this); }
  }
  reflectURL(HTMLAnchorElement, ["href", "href"]);
  reflect(HTMLAnchorElement, ["target", "target", "rel", "rel", "download", "download"]);
  tag(HTMLAnchorElement, "HTMLAnchorElement");
  class HTMLImageElement extends HTMLElement {
    constructor() { throw illegal(); }
  }
  reflectURL(HTMLImageElement, ["src", "src"]);
  reflect(HTMLImageElement, ["alt", "alt"]);
  tag(HTMLImageElement, "HTMLImageElement");
  const FORM_CONTROLS = listOf("input", "button", "select", "textarea");
  function formControls(form) {
    const all = descendants(form);
    const out = list();
    for (let i = 0; i < all.length; i++) if (listIncludes(FORM_CONTROLS, nodeOf(all[i]).localName)) listPush(out, all[i]);
    return out;
  }
  class HTMLFormElement extends HTMLElement {
    constructor() { throw illegal(); }
    get elements() { return toPageArray(formControls(this)); }
    get length() { return formControls(this).length; }
    get action() { return hasAttr(this, "action") ? absoluteURL(this, "action") : init.url; }
    get method() { return lowerCaseASCII(getAttr(this, "method") || "get") === "post" ? "post" : "get"; }
  }
  reflect(HTMLFormElement, ["name", "name", "target", "target"]);
  tag(HTMLFormElement, "HTMLFormElement");
  const inputType = (el) => lowerCaseASCII(getAttr(el, "type") || "") || "text";
  class HTMLInputElement extends HTMLElement {
    constructor() { throw illegal(); }
    get type() { return inputType(this); }
    set type(v) { setAttr(this, "type", StringCtor(v)); }
    get value() {
      if (WeakMapHas(dirtyValue, this)) return WeakMapGet(dirtyValue, this);
      const t = inputType(this);
      return getAttr(this, "value") ?? (t === "checkbox" || t === "radio" ? "on" : "");
    }
    set value(v) { elementOf(this); WeakMapSet(dirtyValue, this, StringCtor(v)); }
    get defaultValue() { return getAttr(this, "value") ?? ""; }
    get form() { return formOf(this); }
  }
  reflect(HTMLInputElement, ["name", "name", "placeholder", "placeholder"]);
  reflectBoolean(HTMLInputElement, ["checked", "checked", "disabled", "disabled", "readOnly", "readonly", "required", "required"]);
  tag(HTMLInputElement, "HTMLInputElement");
  class HTMLButtonElement extends HTMLElement {
    constructor() { throw illegal(); }
    get type() { const t = lowerCaseASCII(getAttr(this, "type") || ""); return t === "reset" || t === "button" ? t : "submit"; }
    get value() { return getAttr(this, "value") ?? ""; }
    set value(v) { setAttr(this, "value", StringCtor(v)); }
    get form() { return formOf(this); }
  }
  reflect(HTMLButtonElement, ["name", "name"]);
  reflectBoolean(HTMLButtonElement, ["disabled", "disabled"]);
  tag(HTMLButtonElement, "HTMLButtonElement");
  class HTMLTextAreaElement extends HTMLElement {
    constructor() { throw illegal(); }
    get value() { return WeakMapHas(dirtyValue, this) ? WeakMapGet(dirtyValue, this) : elementText(this); }
    set value(v) { elementOf(this); WeakMapSet(dirtyValue, this, StringCtor(v)); }
    get defaultValue() { return elementText(this); }
    get type() { return "textarea"; }
    get form() { return formOf(this); }
  }
  reflect(HTMLTextAreaElement, ["name", "name", "placeholder", "placeholder"]);
  reflectBoolean(HTMLTextAreaElement, ["disabled", "disabled", "readOnly", "readonly", "required", "required"]);
  tag(HTMLTextAreaElement, "HTMLTextAreaElement");
  // https://html.spec.whatwg.org/#dom-option-text
  const optionText = (el) => collapseWhitespace(textContentOf(el));
  const optionValue = (el) => getAttr(el, "value") ?? optionText(el);
  class HTMLOptionElement extends HTMLElement {
    constructor() { throw illegal(); }
    get value() { return optionValue(this); }
    set value(v) { setAttr(this, "value", StringCtor(v)); }
    get text() { elementOf(this); return optionText(this); }
    get selected() { return hasAttr(this, "selected"); }
    set selected(v) { if (v) setAttr(this, "selected", ""); else removeAttr(this, "selected"); }
  }
  reflectBoolean(HTMLOptionElement, ["disabled", "disabled"]);
  tag(HTMLOptionElement, "HTMLOptionElement");
  function selectedIndex(select) {
    const options = elementsByTagName(select, "option");
    for (let i = 0; i < options.length; i++) if (hasAttr(options[i], "selected")) return i;
    return options.length && !hasAttr(select, "multiple") ? 0 : -1;
  }
  class HTMLSelectElement extends HTMLElement {
    constructor() { throw illegal(); }
    get options() { return toPageArray(elementsByTagName(this, "option")); }
    get selectedIndex() { return selectedIndex(this); }
    get value() { const i = selectedIndex(this); return i >= 0 ? optionValue(elementsByTagName(this, "option")[i]) : ""; }
    get type() { return hasAttr(this, "multiple") ? "select-multiple" : "select-one"; }
    get form() { return formOf(this); }
  }
  reflect(HTMLSelectElement, ["name", "name"]);
  reflectBoolean(HTMLSelectElement, ["disabled", "disabled", "multiple", "multiple", "required", "required"]);
  tag(HTMLSelectElement, "HTMLSelectElement");
  const ELEMENTS = {
    __proto__: null,
    script: HTMLScriptElement, iframe: HTMLIFrameElement, meta: HTMLMetaElement, a: HTMLAnchorElement,
    img: HTMLImageElement, form: HTMLFormElement, input: HTMLInputElement, button: HTMLButtonElement,
    textarea: HTMLTextAreaElement, option: HTMLOptionElement, select: HTMLSelectElement,
  };

  // Selectors: compound selectors (type, #id, .class, [attr], [attr=value], *), the
  // descendant and child combinators, and selector lists
  // (https://drafts.csswg.org/selectors-4/#grammar, the part this DOM has). A selector is
  // compiled into null-prototype records: a list of alternatives, each a list of steps
  // {combinator, tests}, each test {kind, name, value}.
  const isIdentChar = (c) => (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x5f || c === 0x2d;
  const isLetter = (c) => (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
  function compileSelector(text) {
    const invalid = () => new DOMException(`'${text}' is not a valid selector`, "SyntaxError");
    const n = text.length;
    let i = 0;
    const at = () => (i < n ? StringPrototypeCharCodeAt(text, i) : -1);
    const skipSpace = () => { let skipped = false; while (i < n && isASCIIWhitespace(at())) { i++; skipped = true; } return skipped; };
    const ident = () => { const start = i; while (i < n && isIdentChar(at())) i++; if (i === start) throw invalid(); return StringPrototypeSlice(text, start, i); };
    const compound = () => {
      const tests = list();
      if (at() === 0x2a) i++; // *
      else if (isLetter(at())) listPush(tests, { __proto__: null, kind: "type", name: lowerCaseASCII(ident()), value: null });
      for (;;) {
        const c = at();
        if (c === 0x23) { i++; listPush(tests, { __proto__: null, kind: "id", name: "id", value: ident() }); } // #
        else if (c === 0x2e) { i++; listPush(tests, { __proto__: null, kind: "class", name: "class", value: ident() }); } // .
        else if (c === 0x5b) { // [
          i++;
          const name = lowerCaseASCII(ident());
          let value = null;
          if (at() === 0x3d) { // =
            i++;
            const q = at();
            if (q === 0x22 || q === 0x27) {
              const end = StringPrototypeIndexOf(text, StringFromCharCode(q), i + 1);
              if (end < 0) throw invalid();
              value = StringPrototypeSlice(text, i + 1, end);
              i = end + 1;
            } else {
              const end = StringPrototypeIndexOf(text, "]", i);
              if (end < 0) throw invalid();
              value = StringPrototypeSlice(text, i, end);
              i = end;
            }
          }
          if (at() !== 0x5d) throw invalid(); // ]
          i++;
          listPush(tests, { __proto__: null, kind: "attr", name, value });
        } else return tests;
      }
    };
    const alternatives = list();
    skipSpace();
    for (;;) {
      const steps = list();
      let combinator = " ";
      for (;;) {
        const start = i;
        const tests = compound();
        if (i === start) throw invalid();
        listPush(steps, { __proto__: null, combinator, tests });
        const spaced = skipSpace();
        if (i === n || at() === 0x2c) break; // end or ,
        if (at() === 0x3e) { i++; skipSpace(); combinator = ">"; continue; } // >
        if (!spaced) throw invalid();
        combinator = " ";
      }
      listPush(alternatives, steps);
      if (i === n) return alternatives;
      i++; // ,
      skipSpace();
      if (i === n) throw invalid();
    }
  }
  function matchesCompound(el, tests) {
    const s = nodeOf(el);
    for (let i = 0; i < tests.length; i++) {
      const t = tests[i];
      if (t.kind === "type") { if (s.localName !== t.name) return false; }
      else if (t.kind === "id") { if (attrOf(s, "id") !== t.value) return false; }
      else if (t.kind === "class") { if (!hasClass(attrOf(s, "class"), t.value)) return false; }
      else if (t.value === null ? attrOf(s, t.name) === null : attrOf(s, t.name) !== t.value) return false;
    }
    return true;
  }
  // Whether `el` matches steps[0..=i], its last step matched against `el` itself.
  function matchesSteps(el, steps, i) {
    if (!matchesCompound(el, steps[i].tests)) return false;
    if (i === 0) return true;
    const parent = nodeOf(el).parent;
    if (steps[i].combinator === ">") return isElement(parent) && matchesSteps(parent, steps, i - 1);
    for (let p = parent; isElement(p); p = nodeOf(p).parent) if (matchesSteps(p, steps, i - 1)) return true;
    return false;
  }
  function matchesSelector(el, selector) {
    for (let i = 0; i < selector.length; i++) if (matchesSteps(el, selector[i], selector[i].length - 1)) return true;
    return false;
  }

  let readyState = "loading";
  let visibilityHidden = !!init.hidden;
  let currentScript = null;
  const scriptElements = list();
  // The first descendant element named `name`, or null.
  function firstNamed(root, name) {
    const all = descendants(root);
    for (let i = 0; i < all.length; i++) if (nodeOf(all[i]).localName === name) return all[i];
    return null;
  }
  const documentElementOf = () => {
    const c = nodeOf(document).children;
    for (let i = 0; i < c.length; i++) if (isElement(c[i])) return c[i];
    return null;
  };
  class Document extends Node {
    constructor() { throw illegal(); }
    get nodeType() { return NODE_DOCUMENT; }
    get nodeName() { return "#document"; }
    get documentElement() { nodeOf(this); return documentElementOf(); }
    get children() {
      const c = nodeOf(this).children;
      const out = list();
      for (let i = 0; i < c.length; i++) if (isElement(c[i])) listPush(out, c[i]);
      return toPageArray(out);
    }
    get head() { return firstNamed(this, "head"); }
    get body() { return firstNamed(this, "body"); }
    // https://html.spec.whatwg.org/#document.title
    get title() { const t = firstNamed(this, "title"); return t ? collapseWhitespace(textContentOf(t)) : ""; }
    set title(v) {
      v = StringCtor(v);
      let t = firstNamed(this, "title");
      if (!t) {
        t = makeElement("title", list());
        insertBefore(firstNamed(this, "head") ?? documentElementOf(), t, null);
      }
      replaceAllText(t, v);
    }
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
    // https://dom.spec.whatwg.org/#dom-nonelementparentnode-getelementbyid
    getElementById(elementId) {
      elementId = StringCtor(elementId);
      const all = descendants(this);
      for (let i = 0; i < all.length; i++) if (attrOf(nodeOf(all[i]), "id") === elementId) return all[i];
      return null;
    }
    // https://dom.spec.whatwg.org/#dom-document-createelement
    createElement(localName) { return makeElement(lowerCaseASCII(StringCtor(localName)), list()); }
    // https://dom.spec.whatwg.org/#dom-document-createtextnode
    createTextNode(data) { return makeText(Text.prototype, StringCtor(data)); }
    // https://dom.spec.whatwg.org/#dom-document-createevent (every kind is an Event here)
    createEvent(kind) { StringCtor(kind); return new Event(""); }
  }
  tag(Document, "Document");
  defineHandler(Document.prototype, "readystatechange");
  defineHandler(Document.prototype, "visibilitychange");
  // An element named `name` (lower case) with `attrs` (a list of {name, value}).
  function makeElement(name, attrs) {
    const Cls = ELEMENTS[name] ?? HTMLElement;
    return makeNode(Cls.prototype, NODE_ELEMENT, name, attrs, "");
  }
  const document = makeNode(Document.prototype, NODE_DOCUMENT, "", list(), "");
  // The parsed nodes in document order, each after its parent (init.nodes: [parent, name,
  // attributes, script index] or [parent, null, text]; parent 0 is the document): built
  // in one loop, whatever the depth.
  {
    const made = listOf(document);
    for (let i = 0; i < init.nodes.length; i++) {
      const n = init.nodes[i];
      let node;
      if (n[1] === null) {
        node = makeText(Text.prototype, n[2]);
      } else {
        const attrs = list();
        for (let j = 0; j < n[2].length; j++) listPush(attrs, { __proto__: null, name: n[2][j][0], value: n[2][j][1] });
        node = makeElement(n[1], attrs);
      }
      if (n[3] !== undefined) scriptElements[n[3]] = node;
      // Appended as the parser does: html5ever's tree needs no pre-insertion checks.
      const parent = made[n[0]];
      listPush(nodeOf(parent).children, node);
      nodeOf(node).parent = parent;
      WeakMapSet(parentOf, node, parent);
      listPush(made, node);
    }
  }
  documentReady = true;
