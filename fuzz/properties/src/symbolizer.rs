//! The symbolizer: oxc parses a page's script to name its functions (`functions`), and the
//! registry maps positions inside it to the enclosing function's name and definition
//! position (`Symbolizer::resolve`, `resolve_definition`, `resolve_top_level`).

use std::sync::Arc;

use jsprof_profiler::{RealmId, ResolvedSite, ScriptId, Symbolizer};
use jsprof_symbolizer::{
    functions, FunctionSpan, Registered as Known, ScriptInfo, ScriptRegistry, SourceId,
};

/// The stack the trace builder thread resolves on (`BUILDER_STACK` in the profiler crate):
/// oxc recurses over nested syntax.
const BUILDER_STACK: usize = 64 << 20;

/// Queries of each kind per script, so that an input with many functions or lines stays fast.
const MAX_QUERIES: usize = 32;

/// The input is a script's text. It is registered three times: as an external classic
/// script, as an inline module starting at a line and column derived from the input, and as
/// a muted (hidden) script.
pub fn symbolizer(data: &[u8]) {
    let source = String::from_utf8_lossy(data).into_owned();
    let seed = data.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    });
    let run = move || check(&source, seed);
    match std::thread::Builder::new()
        .stack_size(BUILDER_STACK)
        .spawn(run)
        .expect("a thread")
        .join()
    {
        Ok(()) => {}
        Err(panic) => std::panic::resume_unwind(panic),
    }
}

/// One registered script: its id, where its text starts, and whether it is a module.
struct Registered {
    id: ScriptId,
    line: u32,
    column: u32,
    module: bool,
}

fn check(source: &str, seed: u64) {
    let registry = Arc::new(ScriptRegistry::default());
    let inline_line = 1 + (seed % 40) as u32;
    let inline_column = 1 + (seed >> 8) as u32 % 30;
    let scripts = [
        (1, "https://fuzz.test/a.js", 1, 1, false, false),
        (
            2,
            "https://fuzz.test/page.html",
            inline_line,
            inline_column,
            true,
            false,
        ),
        (3, "https://other.test/muted.js", 1, 1, false, true),
    ];
    let mut visible = Vec::new();
    for (source_id, url, line, column, module, hidden) in scripts {
        let id = registry.register(&ScriptInfo {
            source_id: SourceId(source_id),
            realm: RealmId(1),
            url,
            source,
            line,
            column,
            module,
            muted: hidden,
        });
        assert_eq!(
            registry.lookup(SourceId(source_id)),
            Some(Known {
                script: id,
                hidden,
                realm: RealmId(1)
            })
        );
        assert_eq!(registry.resource(id).as_deref(), Some(url));
        if hidden {
            // A muted script's text never names anything.
            assert_eq!(registry.resolve(id, line, column), None);
            assert_eq!(registry.resolve_definition(id, line, column), None);
            assert_eq!(registry.resolve_top_level(id), None);
        } else {
            visible.push(Registered {
                id,
                line,
                column,
                module,
            });
        }
    }
    assert_eq!(
        registry.lookup(SourceId(4)),
        None,
        "unregistered sources are unknown"
    );
    for script in &visible {
        check_script(&registry, source, script);
    }
}

fn check_function_spans(source: &str, fns: &[FunctionSpan]) {
    for f in fns {
        assert!(
            f.start <= f.def && f.def <= f.end && f.end as usize <= source.len(),
            "{f:?} in a source of {} bytes",
            source.len()
        );
        assert!(source.is_char_boundary(f.def as usize), "{f:?}");
    }
    // Functions nest: two spans are disjoint or one holds the other.
    let mut sorted: Vec<&FunctionSpan> = fns.iter().collect();
    sorted.sort_by_key(|f| (f.start, std::cmp::Reverse(f.end)));
    let mut open: Vec<&FunctionSpan> = Vec::new();
    for f in sorted {
        while open.last().is_some_and(|o| o.end <= f.start) {
            open.pop();
        }
        if let Some(outer) = open.last() {
            assert!(f.end <= outer.end, "{f:?} overlaps {outer:?}");
        }
        open.push(f);
    }
}

/// Where each line after the first starts: after every ECMAScript LineTerminatorSequence
/// (LF, CR, CR LF, LS, PS), as SpiderMonkey counts lines.
fn next_lines(source: &str) -> Vec<usize> {
    let chars: Vec<(usize, char)> = source.char_indices().collect();
    let mut out = Vec::new();
    for (k, &(i, ch)) in chars.iter().enumerate() {
        let ends = match ch {
            '\r' => chars.get(k + 1).map(|&(_, c)| c) != Some('\n'),
            '\n' | '\u{2028}' | '\u{2029}' => true,
            _ => false,
        };
        if ends {
            out.push(i + ch.len_utf8());
        }
    }
    out
}

fn ends_line(ch: char) -> bool {
    matches!(ch, '\n' | '\r' | '\u{2028}' | '\u{2029}')
}

/// The 1-based resource position of byte `offset` of a script whose text starts at
/// (`line`, `column`): lines end at any line terminator, columns count UTF-16 units.
fn position_of(source: &str, line: u32, column: u32, offset: usize) -> (u32, u32) {
    let starts: Vec<usize> = next_lines(source)
        .into_iter()
        .filter(|&s| s <= offset)
        .collect();
    let rel = starts.len() as u32;
    let line_start = starts.last().copied().unwrap_or(0);
    let units = source[line_start..offset].encode_utf16().count() as u32;
    if rel == 0 {
        (line, column + units)
    } else {
        (line + rel, units + 1)
    }
}

/// The byte offset a resource position designates in the script, the inverse of
/// [`position_of`]: `None` before the script's start; a column past its line's end is the
/// line's end, a line past the script's end is the script's end.
fn offset_of(source: &str, line: u32, column: u32, at: (u32, u32)) -> Option<usize> {
    let rel = at.0.checked_sub(line)?;
    let first = if rel == 0 { column } else { 1 };
    let mut col = at.1.checked_sub(first)?;
    let start = match rel {
        0 => 0,
        n => match next_lines(source).get(n as usize - 1) {
            Some(&s) => s,
            None => return Some(source.len()),
        },
    };
    for (i, ch) in source[start..].char_indices() {
        if col == 0 || ends_line(ch) {
            return Some(start + i);
        }
        col = col.saturating_sub(ch.len_utf16() as u32);
    }
    Some(source.len())
}

/// At most `n` items spread over `items`.
fn spread<T>(items: &[T], n: usize) -> impl Iterator<Item = &T> {
    let step = items.len().div_ceil(n).max(1);
    items.iter().step_by(step)
}

fn check_script(registry: &ScriptRegistry, source: &str, script: &Registered) {
    let fns = functions(source, script.module);
    assert_eq!(
        fns,
        functions(source, script.module),
        "functions() is deterministic"
    );
    check_function_spans(source, &fns);
    let (line, column) = (script.line, script.column);
    let site_of = |f: &FunctionSpan| {
        let (l, c) = position_of(source, line, column, f.def as usize);
        ResolvedSite {
            name: f.name.clone(),
            line: l,
            column: c,
        }
    };
    let top = ResolvedSite {
        name: String::new(),
        line,
        column,
    };
    assert_eq!(
        registry.resolve_top_level(script.id),
        Some(top.clone()),
        "top-level code is '' at the script's start"
    );
    let last_line = line + next_lines(source).len() as u32;
    let in_script = |r: &ResolvedSite| {
        assert!(
            (line..=last_line).contains(&r.line)
                && r.column >= 1
                && (r.line > line || r.column >= column),
            "{r:?} outside a script spanning lines {line}..={last_line} from column {column}"
        );
    };

    // Positions: each function's start, `(` and end, each line's start, middle and far end,
    // and a few outside the script.
    let mut queries = Vec::new();
    for f in spread(&fns, MAX_QUERIES) {
        for offset in [f.start, f.def, f.end.saturating_sub(1), f.end] {
            if source.is_char_boundary(offset as usize) {
                queries.push(position_of(source, line, column, offset as usize));
            }
        }
    }
    let rels: Vec<u32> = (0..=last_line - line).collect();
    for &rel in spread(&rels, MAX_QUERIES) {
        let first = if rel == 0 { column } else { 1 };
        for c in [first, first + 3, first + 1000] {
            queries.push((line + rel, c));
        }
    }
    queries.extend([
        (line.saturating_sub(1), column),
        (line, column.saturating_sub(1)),
        (last_line + 5, 1),
    ]);

    for at in queries {
        let got = registry.resolve(script.id, at.0, at.1);
        let Some(offset) = offset_of(source, line, column, at) else {
            assert_eq!(got, None, "{at:?} is before the script");
            continue;
        };
        let got = got.unwrap_or_else(|| panic!("{at:?} (offset {offset}) resolves"));
        in_script(&got);
        // The innermost function around the offset, or the top level.
        let around: Vec<&FunctionSpan> = fns
            .iter()
            .filter(|f| f.start as usize <= offset && offset < f.end as usize)
            .collect();
        match around.iter().map(|f| f.end - f.start).min() {
            None => assert_eq!(got, top, "{at:?} is top-level code"),
            Some(len) => assert!(
                around
                    .iter()
                    .any(|f| f.end - f.start == len && site_of(f) == got),
                "{at:?} (offset {offset}) resolves to {got:?}, not the innermost of {around:?}"
            ),
        }
    }

    // A function's definition position names a function defined there.
    for f in spread(&fns, MAX_QUERIES) {
        let site = site_of(f);
        let got = registry
            .resolve_definition(script.id, site.line, site.column)
            .unwrap_or_else(|| panic!("{f:?}'s definition resolves"));
        in_script(&got);
        let first = fns.iter().find(|g| g.def == f.def).expect("f itself");
        assert_eq!(got, site_of(first), "the definition of {f:?}");
        assert_eq!(
            offset_of(source, line, column, (site.line, site.column)),
            Some(f.def as usize),
            "position and offset round trip"
        );
    }
}
