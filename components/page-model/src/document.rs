//! The HTML document: parsed by html5ever, handed to the realm as a flat list of nodes, and
//! the list of its script elements with where their text starts in the source.
//!
//! Deviation (recorded in ARCHITECTURE.md): the whole document is parsed before the first
//! script runs, so a script sees elements that come after it; `document.write` does not exist.
//! Script execution *order* follows the HTML standard.
//!
//! Page content decides the input, so nothing here recurses over it or is unbounded:
//! - the tree reaches the realm as a flat list (each node names its parent's index), built by
//!   an iterative walk, and html5ever's tree is taken apart iteratively (an `Rc` tree drops
//!   recursively, and 100,000 nested elements overflowed the stack);
//! - elements nested deeper than [`Limits::max_depth`] are attached to their ancestor at that
//!   depth, as Blink's parser does at 512: the DOM the realm gets is never deeper;
//! - a document with more than [`Limits::max_nodes`] nodes is refused, as soon as the parser
//!   has made that many;
//! - the input is fed in small chunks and the parse stops at the run's deadline (unclosed
//!   elements make html5ever's scope checks quadratic, as every browser's are).

use std::borrow::Cow;
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::Instant;

use html5ever::interface::{Attribute, ElementFlags, NodeOrText, QualName, QuirksMode, TreeSink};
use html5ever::tendril::{StrTendril, TendrilSink};
use markup5ever_rcdom::{Handle, NodeData, RcDom};
use serde_json::{json, Value};

/// Limits on what a document may make the engine build (prefs `dom.max_nodes` and
/// `dom.max_depth`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Nodes (elements, text runs, comments) the parser may make.
    pub max_nodes: usize,
    /// Nesting depth of the DOM the realm gets (the document's children are at depth 1).
    pub max_depth: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_nodes: 1_000_000,
            max_depth: 512,
        }
    }
}

/// Why a document could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    #[error("the document has more than {0} nodes (pref dom.max_nodes)")]
    TooManyNodes(usize),
    #[error("parsing the document did not finish before the deadline (--timeout)")]
    TimedOut,
}

/// How much input the parser is given between two checks of the limits and the deadline.
const CHUNK: usize = 4096;

/// What kind of script an element is (<https://html.spec.whatwg.org/#prepare-the-script-element>, step 8-9).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScriptKind {
    Classic,
    Module,
}

/// One `<script>` element of the document, in document order.
#[derive(Debug, Clone)]
pub struct ScriptElement {
    /// Index among the document's script elements (the realm finds the element by it).
    pub index: usize,
    pub kind: ScriptKind,
    /// The `src` attribute, unresolved.
    pub src: Option<String>,
    pub is_async: bool,
    pub defer: bool,
    /// The `crossorigin` attribute, if present.
    pub crossorigin: Option<String>,
    /// The inline text.
    pub text: String,
    /// 1-based line and column where the inline text starts in the HTML source.
    pub line: u32,
    pub column: u32,
}

/// A parsed document.
#[derive(Debug)]
pub struct Document {
    /// The nodes for the realm, in document order, each after its parent: `[parent, name,
    /// attributes]` for an element (`[parent, name, attributes, script index]` for a script
    /// element) and `[parent, null, text]` for text. `parent` is the index of the parent in
    /// this list plus one; 0 is the document.
    pub nodes: Value,
    pub scripts: Vec<ScriptElement>,
}

/// Parses `html`, within `limits`, giving up at `deadline`.
pub fn parse(
    html: &str,
    limits: &Limits,
    deadline: Option<Instant>,
) -> Result<Document, ParseError> {
    let made = Rc::new(Cell::new(0usize));
    let fed = Rc::new(Cell::new((0, 0)));
    let script_tags = Rc::new(RefCell::new(Vec::new()));
    let sink = CountingSink {
        dom: RcDom::default(),
        made: made.clone(),
        fed: fed.clone(),
        script_tags: script_tags.clone(),
    };
    let mut parser = html5ever::parse_document(sink, Default::default());
    let mut start = 0;
    let mut outcome = Ok(());
    let mut splits = script_tag_ends(html).peekable();
    while start < html.len() {
        let mut end = (start + CHUNK).min(html.len());
        while !html.is_char_boundary(end) {
            end += 1;
        }
        // A piece ends right after each `>` that may end a `<script` tag: a script element
        // made while the parser reads a piece has its tag's `>` as the piece's last byte.
        while splits.next_if(|&at| at <= start).is_some() {}
        if let Some(&at) = splits.peek() {
            end = end.min(at);
        }
        fed.set((start, end));
        parser.process(StrTendril::from_slice(&html[start..end]));
        start = end;
        if made.get() > limits.max_nodes {
            outcome = Err(ParseError::TooManyNodes(limits.max_nodes));
            break;
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            outcome = Err(ParseError::TimedOut);
            break;
        }
    }
    fed.set((html.len(), html.len()));
    let dom = parser.finish();
    let result = outcome.map(|()| {
        let positions = ScriptPositions::new(html).place(&script_tags.borrow());
        flatten(&dom.document, limits.max_depth.max(1), &positions)
    });
    script_tags.borrow_mut().clear();
    take_apart(&dom.document);
    result
}

/// Where a `<script` start tag may end: just past each of the first few `>` after each
/// `<script` (in any case), in order. (Quoted attribute values may hold a `>`: the first
/// few are all offered; 16 per tag bounds what a page of `<script>>>>>…` costs.)
fn script_tag_ends(html: &str) -> impl Iterator<Item = usize> + '_ {
    let bytes = html.as_bytes();
    let mut starts = Vec::new();
    let mut from = 0;
    while let Some(i) = find_ascii_ci(&bytes[from..], b"<script") {
        starts.push(from + i);
        from += i + 1;
    }
    let mut ends: Vec<usize> = starts
        .into_iter()
        .flat_map(|s| {
            bytes[s..]
                .iter()
                .enumerate()
                .take(4096)
                .filter(|&(_, &b)| b == b'>')
                .take(16)
                .map(move |(i, _)| s + i + 1)
        })
        .collect();
    ends.sort_unstable();
    ends.dedup();
    ends.into_iter()
}

/// The first index of `needle` (lowercase ASCII) in `hay`, ignoring ASCII case.
fn find_ascii_ci(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len())
        .position(|w| w.eq_ignore_ascii_case(needle))
}

/// A script element and the byte range of the source its start tag's `>` is in.
type ScriptTag = (Handle, (usize, usize));

/// html5ever's sink: an [`RcDom`] that counts the nodes it makes, keeps no parse errors (a
/// malformed page makes one per token), and notes, for each `<script>` element it makes,
/// which bytes of the source the parser was given when it did: the tokenizer emits a start
/// tag as it reads its `>`, so that `>` lies in those bytes.
struct CountingSink {
    dom: RcDom,
    made: Rc<Cell<usize>>,
    /// The byte range of the source being parsed now.
    fed: Rc<Cell<(usize, usize)>>,
    /// Every HTML script element made (a `<template>`'s too), in the order the tokenizer
    /// met their start tags, with the byte range its start tag's `>` is in.
    script_tags: Rc<RefCell<Vec<ScriptTag>>>,
}

impl CountingSink {
    fn made_one(&self) {
        self.made.set(self.made.get() + 1);
    }

    fn count(&self, child: &NodeOrText<Handle>) {
        // A text run may merge into the previous one: counted as a node all the same.
        let _ = child;
        self.made_one();
    }
}

impl TreeSink for CountingSink {
    type Handle = Handle;
    type Output = RcDom;
    type ElemName<'a> = <RcDom as TreeSink>::ElemName<'a>;

    fn finish(self) -> RcDom {
        self.dom
    }
    fn parse_error(&self, _msg: Cow<'static, str>) {}
    fn get_document(&self) -> Handle {
        self.dom.get_document()
    }
    fn elem_name<'a>(&'a self, target: &'a Handle) -> Self::ElemName<'a> {
        self.dom.elem_name(target)
    }
    fn create_element(&self, name: QualName, attrs: Vec<Attribute>, flags: ElementFlags) -> Handle {
        self.made_one();
        let is_script =
            name.local == html5ever::local_name!("script") && name.ns == html5ever::ns!(html);
        let node = self.dom.create_element(name, attrs, flags);
        if is_script {
            self.script_tags
                .borrow_mut()
                .push((node.clone(), self.fed.get()));
        }
        node
    }
    fn create_comment(&self, text: StrTendril) -> Handle {
        self.made_one();
        self.dom.create_comment(text)
    }
    fn create_pi(&self, target: StrTendril, data: StrTendril) -> Handle {
        self.made_one();
        self.dom.create_pi(target, data)
    }
    fn append(&self, parent: &Handle, child: NodeOrText<Handle>) {
        self.count(&child);
        self.dom.append(parent, child)
    }
    fn append_based_on_parent_node(
        &self,
        element: &Handle,
        prev_element: &Handle,
        child: NodeOrText<Handle>,
    ) {
        self.count(&child);
        self.dom
            .append_based_on_parent_node(element, prev_element, child)
    }
    fn append_doctype_to_document(
        &self,
        name: StrTendril,
        public_id: StrTendril,
        system_id: StrTendril,
    ) {
        self.dom
            .append_doctype_to_document(name, public_id, system_id)
    }
    fn get_template_contents(&self, target: &Handle) -> Handle {
        self.dom.get_template_contents(target)
    }
    fn same_node(&self, x: &Handle, y: &Handle) -> bool {
        self.dom.same_node(x, y)
    }
    fn set_quirks_mode(&self, mode: QuirksMode) {
        self.dom.set_quirks_mode(mode)
    }
    fn append_before_sibling(&self, sibling: &Handle, new_node: NodeOrText<Handle>) {
        self.count(&new_node);
        self.dom.append_before_sibling(sibling, new_node)
    }
    fn add_attrs_if_missing(&self, target: &Handle, attrs: Vec<Attribute>) {
        self.dom.add_attrs_if_missing(target, attrs)
    }
    fn remove_from_parent(&self, target: &Handle) {
        self.dom.remove_from_parent(target)
    }
    fn reparent_children(&self, node: &Handle, new_parent: &Handle) {
        self.dom.reparent_children(node, new_parent)
    }
    fn is_mathml_annotation_xml_integration_point(&self, handle: &Handle) -> bool {
        self.dom.is_mathml_annotation_xml_integration_point(handle)
    }
    fn maybe_clone_an_option_into_selectedcontent(&self, option: &Handle) {
        self.dom.maybe_clone_an_option_into_selectedcontent(option)
    }
}

/// Takes html5ever's tree apart from the root down, iteratively, so that no node is dropped
/// while it still owns a deep subtree (`Rc` drops recurse).
fn take_apart(root: &Handle) {
    let mut work = vec![root.clone()];
    while let Some(node) = work.pop() {
        work.append(&mut node.children.take());
        if let NodeData::Element {
            template_contents, ..
        } = &node.data
        {
            work.extend(template_contents.take());
        }
    }
}

fn attr(attrs: &[Attribute], name: &str) -> Option<String> {
    attrs
        .iter()
        .find(|a| a.name.ns == html5ever::ns!() && &*a.name.local == name)
        .map(|a| a.value.to_string())
}

/// The realm's node list and the script elements, by an iterative walk in document order.
/// A node deeper than `max_depth` is attached to its ancestor at depth `max_depth - 1`, after
/// the nodes before it in document order.
fn flatten(root: &Handle, max_depth: usize, positions: &Positions) -> Document {
    let mut nodes = Vec::new();
    let mut scripts = Vec::new();
    // (node, the index + 1 of its parent in `nodes` (0: the document), its depth there).
    let mut work: Vec<(Handle, usize, usize)> = root
        .children
        .borrow()
        .iter()
        .rev()
        .map(|c| (c.clone(), 0, 1))
        .collect();
    while let Some((node, parent, depth)) = work.pop() {
        match &node.data {
            NodeData::Text { contents } => {
                nodes.push(json!([parent, null, contents.borrow().to_string()]));
            }
            NodeData::Element { name, attrs, .. } => {
                let attrs = attrs.borrow();
                let local = name.local.to_string();
                let list: Vec<Value> = attrs
                    .iter()
                    .map(|a| json!([a.name.local.to_string(), a.value.to_string()]))
                    .collect();
                let mut entry = vec![json!(parent), json!(local), Value::Array(list)];
                if local == "script" && name.ns == html5ever::ns!(html) {
                    let index = scripts.len();
                    scripts.push(script_element(&node, &attrs, index, positions));
                    entry.push(json!(index));
                }
                nodes.push(Value::Array(entry));
                let me = nodes.len();
                // Children go under this element, or beside it past the depth limit.
                let (child_parent, child_depth) = if depth < max_depth {
                    (me, depth + 1)
                } else {
                    (parent, depth)
                };
                work.extend(
                    node.children
                        .borrow()
                        .iter()
                        .rev()
                        .map(|c| (c.clone(), child_parent, child_depth)),
                );
            }
            _ => {}
        }
    }
    Document {
        nodes: Value::Array(nodes),
        scripts,
    }
}

/// The script element `node`, number `index` in document order.
fn script_element(
    node: &Handle,
    attrs: &[Attribute],
    index: usize,
    positions: &Positions,
) -> ScriptElement {
    let text = text_of(node);
    let (line, column) = positions
        .get(&(Rc::as_ptr(node) as usize))
        .copied()
        .unwrap_or((1, 1));
    match script_kind(attr(attrs, "type"), attr(attrs, "language")) {
        Some(kind) => ScriptElement {
            index,
            kind,
            src: attr(attrs, "src"),
            is_async: attr(attrs, "async").is_some(),
            defer: attr(attrs, "defer").is_some(),
            crossorigin: attr(attrs, "crossorigin"),
            text,
            line,
            column,
        },
        // A data block (e.g. type="text/plain"): keeps its place, never runs.
        None => ScriptElement {
            index: usize::MAX,
            kind: ScriptKind::Classic,
            src: None,
            is_async: false,
            defer: false,
            crossorigin: None,
            text: String::new(),
            line,
            column,
        },
    }
}
/// The script's type (<https://html.spec.whatwg.org/#prepare-the-script-element>, step 8).
fn script_kind(ty: Option<String>, language: Option<String>) -> Option<ScriptKind> {
    let ty = match (ty, language) {
        (Some(t), _) if !t.is_empty() => t,
        (None, Some(l)) if !l.is_empty() => format!("text/{l}"),
        _ => return Some(ScriptKind::Classic),
    };
    let ty = ty.trim().to_ascii_lowercase();
    const JS_MIME: &[&str] = &[
        "text/javascript",
        "application/javascript",
        "application/ecmascript",
        "application/x-ecmascript",
        "application/x-javascript",
        "text/ecmascript",
        "text/javascript1.0",
        "text/javascript1.1",
        "text/javascript1.2",
        "text/javascript1.3",
        "text/javascript1.4",
        "text/javascript1.5",
        "text/jscript",
        "text/livescript",
        "text/x-ecmascript",
        "text/x-javascript",
    ];
    if JS_MIME.contains(&ty.as_str()) {
        Some(ScriptKind::Classic)
    } else if ty == "module" {
        Some(ScriptKind::Module)
    } else {
        None
    }
}

/// Script element (by its node's address) -> where its text starts.
type Positions = rustc_hash::FxHashMap<usize, (u32, u32)>;

/// The text of a script element (its text children).
fn text_of(node: &Handle) -> String {
    node.children
        .borrow()
        .iter()
        .filter_map(|c| match &c.data {
            NodeData::Text { contents } => Some(contents.borrow().to_string()),
            _ => None,
        })
        .collect()
}

/// Where each `<script>` element's text starts in the source (1-based line, and column in
/// UTF-16 units as SpiderMonkey counts; CR LF, CR and LF each end a line, as the tokenizer
/// reads them). No second tokenizer: html5ever's says, through the sink, in which bytes it
/// met each script element's start tag (every script element, a `<template>`'s included,
/// in the order of their tags); there, the tag is found by its `<script` and its end `>`
/// (quotes only opening attribute values), and the element's text must follow it. Each
/// script is looked for after the previous one, so identical scripts get their own places.
struct ScriptPositions<'a> {
    source: &'a str,
    /// Byte offset of each line's start.
    line_starts: Vec<usize>,
    /// Where the previous script's text ended.
    cursor: usize,
}

impl<'a> ScriptPositions<'a> {
    fn new(source: &'a str) -> Self {
        let bytes = source.as_bytes();
        let line_starts = std::iter::once(0)
            .chain(bytes.iter().enumerate().filter_map(|(i, &b)| match b {
                b'\n' => Some(i + 1),
                b'\r' if bytes.get(i + 1) != Some(&b'\n') => Some(i + 1),
                _ => None,
            }))
            .collect();
        ScriptPositions {
            source,
            line_starts,
            cursor: 0,
        }
    }

    /// The positions of `scripts` (in start tag order, with the bytes their `>` is in).
    fn place(mut self, scripts: &[ScriptTag]) -> Positions {
        scripts
            .iter()
            .map(|(node, fed)| {
                let at = self.of(*fed, &text_of(node));
                (Rc::as_ptr(node) as usize, at)
            })
            .collect()
    }

    /// The position of the text `text` of a script whose start tag's `>` is in `fed`.
    fn of(&mut self, fed: (usize, usize), text: &str) -> (u32, u32) {
        // The piece ended right after the tag's `>` (see `script_tag_ends`); else the tag is
        // looked for in the piece.
        let exact = (fed.1 > 0 && self.source.as_bytes().get(fed.1 - 1) == Some(&b'>'))
            .then(|| self.followed_by(fed.1, text).map(|end| (fed.1, end)))
            .flatten();
        let offset = match exact.or_else(|| self.text_start(fed, text)) {
            Some((offset, end)) => {
                self.cursor = end;
                offset
            }
            // Not found (never seen, but the position must still be in the source).
            None => fed.0.min(self.source.len()),
        };
        let line = self.line_starts.partition_point(|&start| start <= offset);
        let line_start = self.line_starts[line - 1];
        let column = self.source[line_start..offset].encode_utf16().count() as u32 + 1;
        (line as u32, column)
    }

    /// The offset just past the `>` of a `<script` start tag after the cursor whose `>` is in
    /// `fed` and which `text` follows; and where that text ends.
    fn text_start(&self, fed: (usize, usize), text: &str) -> Option<(usize, usize)> {
        let bytes = self.source.as_bytes();
        let (from, to) = (fed.0, fed.1.min(self.source.len()));
        let mut at = self.cursor.min(to);
        while let Some(found) = find_ascii_ci(&bytes[at..to], b"<script") {
            let name_end = at + found + "<script".len();
            at = name_end;
            if !matches!(
                bytes.get(name_end),
                Some(b' ' | b'\t' | b'\n' | b'\r' | b'\x0c' | b'/' | b'>')
            ) {
                continue;
            }
            let close = tag_end(bytes, name_end);
            if close >= from && close < to {
                if let Some(end) = self.followed_by(close + 1, text) {
                    return Some((close + 1, end));
                }
            }
        }
        None
    }

    /// Where `text` ends if the source at `offset` reads it, as the tokenizer made it (CR LF
    /// and CR become LF, a NUL in script data becomes U+FFFD).
    fn followed_by(&self, offset: usize, text: &str) -> Option<usize> {
        let rest = self.source.get(offset..)?;
        let mut source = rest.char_indices().peekable();
        let mut end = 0;
        for t in text.chars() {
            let (i, c) = source.next()?;
            end = i + c.len_utf8();
            let same = match c {
                '\r' => {
                    if let Some(&(j, '\n')) = source.peek() {
                        source.next();
                        end = j + 1;
                    }
                    t == '\n'
                }
                '\0' => t == '\u{FFFD}',
                c => c == t,
            };
            if !same {
                return None;
            }
        }
        Some(offset + end)
    }
}

/// The inline scripts of a document as another engine's HTML parser meets them, when that
/// parser tells a script element only the line its start tag's `>` is on (html5ever's
/// `TreeSink::set_current_line`, which Servo's parser keeps): the engine [`push`]es the text
/// it gives its parser, then [`locate`]s each inline script of the document's own markup, in
/// document order. Each is placed as [`parse`] places them (the `<script` start tag after the
/// previous script's text whose `>` is on that line, and which the text follows), so both
/// engines give a script the same position.
///
/// Unlike [`parse`], which knows every script element's tag from its own tokenizer, this
/// sees only the scripts it is asked for: a data block or a commented-out `<script>` with the
/// very same text, before the real one on the same line, would take its place.
///
/// [`push`]: InlineScripts::push
/// [`locate`]: InlineScripts::locate
#[derive(Debug)]
pub struct InlineScripts {
    /// The text given to the parser so far.
    source: String,
    /// Where the previous script's text ended.
    cursor: usize,
    /// The start of the line the previous script's tag ended on, and that line (1-based):
    /// where counting lines resumes.
    line_start: usize,
    line: u32,
}

impl Default for InlineScripts {
    fn default() -> Self {
        InlineScripts {
            source: String::new(),
            cursor: 0,
            line_start: 0,
            line: 1,
        }
    }
}

impl InlineScripts {
    /// Text given to the parser, in order (decoded).
    pub fn push(&mut self, text: &str) {
        self.source.push_str(text);
    }

    /// Where the text `text` of the next inline script starts, given that its start tag's `>`
    /// is on line `line` (1-based): that line, and the column in UTF-16 units as SpiderMonkey
    /// counts them. `None` if there is no such tag (its markup came from `document.write`,
    /// say); the next script is then looked for from where this one was.
    pub fn locate(&mut self, line: u32, text: &str) -> Option<(u32, u32)> {
        if line < self.line {
            return None;
        }
        let bytes = self.source.as_bytes();
        // The line's bytes, counting line breaks as the tokenizer does (CR LF, CR, LF).
        let (mut start, mut n, mut i) = (self.line_start, self.line, self.line_start);
        while n < line {
            let b = *bytes.get(i)?;
            i += 1;
            if b == b'\n' || (b == b'\r' && bytes.get(i) != Some(&b'\n')) {
                n += 1;
                start = i;
            }
        }
        let end = bytes[start..]
            .iter()
            .position(|&b| b == b'\n' || b == b'\r')
            .map_or(bytes.len(), |p| start + p + 1);
        let finder = ScriptPositions {
            source: &self.source,
            line_starts: Vec::new(),
            cursor: self.cursor,
        };
        let (offset, text_end) = finder.text_start((start, end), text)?;
        let column = self.source[start..offset].encode_utf16().count() as u32 + 1;
        self.cursor = text_end;
        (self.line_start, self.line) = (start, line);
        Some((line, column))
    }
}

/// The offset of the `>` that ends a start tag whose name ends at `i`: quotes only count
/// where an attribute value starts (after `=`), as the tokenizer reads them.
fn tag_end(bytes: &[u8], mut i: usize) -> usize {
    let mut quote: Option<u8> = None;
    let mut after_equals = false;
    while i < bytes.len() {
        let c = bytes[i];
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None => match c {
                b'>' => return i,
                b'"' | b'\'' if after_equals => quote = Some(c),
                b'=' => {
                    after_equals = true;
                    i += 1;
                    continue;
                }
                b' ' | b'\t' | b'\n' | b'\r' | b'\x0c' if after_equals => {
                    i += 1;
                    continue;
                }
                _ => {}
            },
        }
        after_equals = false;
        i += 1;
    }
    bytes.len()
}

#[cfg(test)]
mod tests;
