//! The HTML document: parsed by html5ever, handed to the realm as a tree description, and the
//! list of its script elements with where their text starts in the source.
//!
//! Deviation (recorded in ARCHITECTURE.md): the whole document is parsed before the first
//! script runs, so a script sees elements that come after it; `document.write` does not exist.
//! Script execution *order* follows the HTML standard.

use html5ever::tendril::TendrilSink;
use markup5ever_rcdom::{Handle, NodeData, RcDom};
use serde_json::{json, Value};

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
    /// The element tree for the realm: `{"t": "el", "n": name, "a": [[k, v]…], "c": […]}`
    /// and `{"t": "tx", "v": text}` nodes; script elements carry `"s": index`.
    pub tree: Value,
    pub scripts: Vec<ScriptElement>,
}

/// Parses `html`.
pub fn parse(html: &str) -> Document {
    let dom = html5ever::parse_document(RcDom::default(), Default::default())
        .from_utf8()
        .read_from(&mut html.as_bytes())
        .expect("reading from memory cannot fail");
    let positions = script_text_positions(html);
    let mut scripts = Vec::new();
    let tree = walk(&dom.document, &mut scripts, &positions);
    Document { tree, scripts }
}

fn attr(attrs: &[html5ever::Attribute], name: &str) -> Option<String> {
    attrs
        .iter()
        .find(|a| a.name.ns == html5ever::ns!() && &*a.name.local == name)
        .map(|a| a.value.to_string())
}

fn walk(node: &Handle, scripts: &mut Vec<ScriptElement>, positions: &[(u32, u32)]) -> Value {
    let children = |scripts: &mut Vec<ScriptElement>| -> Vec<Value> {
        node.children
            .borrow()
            .iter()
            .map(|c| walk(c, scripts, positions))
            .filter(|v| !v.is_null())
            .collect()
    };
    match &node.data {
        NodeData::Document => json!({"t": "doc", "c": children(scripts)}),
        NodeData::Text { contents } => json!({"t": "tx", "v": contents.borrow().to_string()}),
        NodeData::Element { name, attrs, .. } => {
            let attrs = attrs.borrow();
            let local = name.local.to_string();
            let list: Vec<Value> = attrs
                .iter()
                .map(|a| json!([a.name.local.to_string(), a.value.to_string()]))
                .collect();
            let mut el = json!({"t": "el", "n": local, "a": list});
            if local == "script" && name.ns == html5ever::ns!(html) {
                let index = scripts.len();
                let text: String = node
                    .children
                    .borrow()
                    .iter()
                    .filter_map(|c| match &c.data {
                        NodeData::Text { contents } => Some(contents.borrow().to_string()),
                        _ => None,
                    })
                    .collect();
                let (line, column) = positions.get(index).copied().unwrap_or((1, 1));
                if let Some(kind) = script_kind(attr(&attrs, "type"), attr(&attrs, "language")) {
                    scripts.push(ScriptElement {
                        index,
                        kind,
                        src: attr(&attrs, "src"),
                        is_async: attr(&attrs, "async").is_some(),
                        defer: attr(&attrs, "defer").is_some(),
                        crossorigin: attr(&attrs, "crossorigin"),
                        text,
                        line,
                        column,
                    });
                } else {
                    // A data block (e.g. type="text/plain"): keeps its index, never runs.
                    scripts.push(ScriptElement {
                        index,
                        kind: ScriptKind::Classic,
                        src: None,
                        is_async: false,
                        defer: false,
                        crossorigin: None,
                        text: String::new(),
                        line,
                        column,
                    });
                    scripts.last_mut().expect("just pushed").index = usize::MAX;
                }
                el["s"] = json!(index);
            }
            el["c"] = Value::Array(children(scripts));
            el
        }
        _ => Value::Null,
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

/// Where the text of each `<script>` element starts (1-based line and column), found by a
/// scan of the source that skips comments and the raw text of script, style, textarea,
/// title, xmp, noscript and iframe elements, as the HTML tokenizer does.
fn script_text_positions(html: &str) -> Vec<(u32, u32)> {
    let lower = html.to_ascii_lowercase();
    let bytes = lower.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(off) = lower[i..].find('<') {
        i += off;
        if lower[i..].starts_with("<!--") {
            i = lower[i + 4..]
                .find("-->")
                .map_or(lower.len(), |e| i + 4 + e + 3);
            continue;
        }
        let name_start = i + 1;
        let name_end = lower[name_start..]
            .find(|c: char| !c.is_ascii_alphanumeric())
            .map_or(lower.len(), |e| name_start + e);
        let name = &lower[name_start..name_end];
        const RAW: &[&str] = &[
            "script", "style", "textarea", "title", "xmp", "noscript", "iframe",
        ];
        if !RAW.contains(&name) || name.is_empty() {
            i += 1;
            continue;
        }
        // The end of the start tag, skipping quoted attribute values.
        let mut j = name_end;
        let mut quote = None;
        while j < bytes.len() {
            match (quote, bytes[j]) {
                (None, b'"' | b'\'') => quote = Some(bytes[j]),
                (Some(q), c) if c == q => quote = None,
                (None, b'>') => break,
                _ => {}
            }
            j += 1;
        }
        let text_start = (j + 1).min(lower.len());
        if name == "script" {
            out.push(line_column(html, text_start));
        }
        let close = format!("</{name}");
        i = lower[text_start..]
            .find(&close)
            .map_or(lower.len(), |e| text_start + e + close.len());
    }
    out
}

/// 1-based line and column (in UTF-16 units, as SpiderMonkey counts) of a byte offset.
fn line_column(text: &str, offset: usize) -> (u32, u32) {
    let before = &text[..offset];
    let line = before.matches('\n').count() as u32 + 1;
    let line_start = before.rfind('\n').map_or(0, |p| p + 1);
    let column = before[line_start..].encode_utf16().count() as u32 + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripts_in_order_with_positions() {
        let html = "<!doctype html>\n<title>t</title>\n<!-- <script>no</script> -->\n  <script>a()</script>\n<script src=\"x.js\" defer></script><script type=module async>b()</script>\n<script type=\"text/plain\">data</script>";
        let doc = parse(html);
        let s = &doc.scripts;
        assert_eq!(s.len(), 4);
        assert_eq!((s[0].line, s[0].column, s[0].text.as_str()), (4, 11, "a()"));
        assert_eq!(s[1].src.as_deref(), Some("x.js"));
        assert!(s[1].defer);
        assert_eq!(s[2].kind, ScriptKind::Module);
        assert!(s[2].is_async);
        assert_eq!((s[2].line, s[2].column), (5, 61));
        assert_eq!(s[3].index, usize::MAX, "data blocks never run");
        assert_eq!(doc.tree["t"], "doc");
    }
}
