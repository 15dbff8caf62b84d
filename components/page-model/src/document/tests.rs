use super::*;

fn parse_ok(html: &str) -> Document {
    parse(html, &Limits::default(), None).expect("parses")
}

fn node(doc: &Document, i: usize) -> &Vec<Value> {
    doc.nodes[i].as_array().expect("a node is an array")
}

#[test]
fn scripts_in_order_with_positions() {
    let html = "<!doctype html>\n<title>t</title>\n<!-- <script>no</script> -->\n  <script>a()</script>\n<script src=\"x.js\" defer></script><script type=module async>b()</script>\n<script type=\"text/plain\">data</script>";
    let doc = parse_ok(html);
    let s = &doc.scripts;
    assert_eq!(s.len(), 4);
    assert_eq!((s[0].line, s[0].column, s[0].text.as_str()), (4, 11, "a()"));
    assert_eq!(s[1].src.as_deref(), Some("x.js"));
    assert!(s[1].defer);
    assert_eq!(s[2].kind, ScriptKind::Module);
    assert!(s[2].is_async);
    assert_eq!((s[2].line, s[2].column), (5, 61));
    assert_eq!(s[3].index, usize::MAX, "data blocks never run");
    // html, head, title, its text, ... each after its parent.
    assert_eq!(node(&doc, 0)[..2], [json!(0), json!("html")]);
    assert_eq!(node(&doc, 1)[..2], [json!(1), json!("head")]);
    assert_eq!(node(&doc, 2)[..2], [json!(2), json!("title")]);
    assert_eq!(node(&doc, 3)[..], [json!(3), Value::Null, json!("t")]);
}

#[test]
fn columns_count_utf16_units_and_lines_accumulate() {
    let html = "<p>é😀</p><script>x</script>\n\n<p>\n😀<script>y</script>";
    let doc = parse_ok(html);
    assert_eq!((doc.scripts[0].line, doc.scripts[0].column), (1, 19));
    assert_eq!((doc.scripts[1].line, doc.scripts[1].column), (4, 11));
}

#[test]
fn positions_come_from_html5evers_own_tokenizer() {
    // A <template>'s script and an SVG <script> are elements html5ever makes (not HTML
    // script elements of the document): the scripts after them keep their positions.
    let html = "<template><script>t()</script></template>\n<svg><script>s()</script></svg>\n<script>a()</script><script>a()</script>\n<textarea><script>no</script></textarea><!--\n<script>no</script>--><script\n  data-x=\">b()\">b()</script>";
    let doc = parse_ok(html);
    let runs: Vec<_> = doc
        .scripts
        .iter()
        .map(|s| (s.text.as_str(), s.line, s.column))
        .collect();
    assert_eq!(
        runs,
        [("a()", 3, 9), ("a()", 3, 29), ("b()", 6, 17)],
        "{runs:?}"
    );
    // CR LF and CR count as one line break each, as the tokenizer counts them.
    let doc = parse_ok("<p>\r\n\r<script>\r\nx()</script>");
    assert_eq!((doc.scripts[0].line, doc.scripts[0].column), (3, 9));
    assert_eq!(doc.scripts[0].text, "\nx()");
}

#[test]
fn deep_nesting_is_capped_not_recursed() {
    // 30,000 unclosed and closed elements (a recursive walk or drop overflows a test
    // thread's 2 MB stack well before): no stack overflow, a DOM no deeper than the
    // limit, and every element kept in document order.
    let n = 30_000;
    for html in [
        "<div>".repeat(n) + "<script>deep()</script>",
        "<span>".repeat(n) + &"</span>".repeat(n) + "<script>after()</script>",
    ] {
        let limits = Limits {
            max_depth: 64,
            ..Limits::default()
        };
        let doc = parse(&html, &limits, None).expect("parses");
        let nodes = doc.nodes.as_array().unwrap();
        let mut depth = vec![0usize];
        for n in nodes {
            let parent = n[0].as_u64().unwrap() as usize;
            assert!(parent < depth.len(), "a parent comes first");
            depth.push(depth[parent] + 1);
        }
        assert!(depth.iter().max().copied().unwrap() <= 64);
        assert!(nodes.len() > n, "every element is kept");
        assert_eq!(doc.scripts.len(), 1);
    }
}

#[test]
fn too_many_nodes_is_an_error_as_soon_as_they_are_made() {
    let html = "<p>x</p>".repeat(10_000);
    let limits = Limits {
        max_nodes: 1000,
        ..Limits::default()
    };
    assert_eq!(
        parse(&html, &limits, None).unwrap_err(),
        ParseError::TooManyNodes(1000)
    );
    assert!(parse(&html, &Limits::default(), None).is_ok());
}

#[test]
fn a_past_deadline_stops_the_parse() {
    let html = "<div>".repeat(20_000);
    let past = Instant::now();
    assert_eq!(
        parse(&html, &Limits::default(), Some(past)).unwrap_err(),
        ParseError::TimedOut
    );
}

/// `InlineScripts` places each inline script where `parse` does, from the line alone, with
/// the markup given in small pieces (as a network parser gets it).
#[test]
fn inline_scripts_are_placed_from_their_line_as_parse_places_them() {
    let fixtures = [
        "<!doctype html>\n<title>t</title>\n<!-- <script>no</script> -->\n  <script>a()</script>\n<script src=\"x.js\" defer></script><script type=module async>b()</script>\n<script type=\"text/plain\">data</script>",
        "<p>é😀</p><script>x</script>\n\n<p>\n😀<script>y</script>",
        "<template><script>t()</script></template>\n<svg><script>s()</script></svg>\n<script>a()</script><script>a()</script>\n<textarea><script>no</script></textarea><!--\n<script>no</script>--><script\n  data-x=\">b()\">b()</script>",
        "<p>\r\n\r<script>\r\nx()</script>",
        "    <script>function onTagLine() {} onTagLine();\n</script>",
    ];
    for html in fixtures {
        let doc = parse_ok(html);
        let mut scripts = InlineScripts::default();
        let mut rest = html;
        while !rest.is_empty() {
            let mut cut = rest.len().min(5);
            while !rest.is_char_boundary(cut) {
                cut += 1;
            }
            scripts.push(&rest[..cut]);
            rest = &rest[cut..];
        }
        let inline: Vec<&ScriptElement> = doc
            .scripts
            .iter()
            .filter(|s| s.src.is_none() && s.index != usize::MAX)
            .collect();
        assert!(!inline.is_empty(), "{html:?}");
        for s in inline {
            assert_eq!(
                scripts.locate(s.line, &s.text),
                Some((s.line, s.column)),
                "{html:?}: {:?}",
                s.text
            );
        }
    }
}

/// A script the markup does not have (written by `document.write`) is not placed, and the
/// next one still is.
#[test]
fn a_script_not_in_the_markup_is_not_placed() {
    let mut scripts = InlineScripts::default();
    scripts.push("<script>a()</script>\n<script>b()</script>");
    assert_eq!(scripts.locate(1, "written()"), None);
    assert_eq!(scripts.locate(2, "b()"), Some((2, 9)));
    assert_eq!(scripts.locate(1, "a()"), None, "lines only move forward");
}
