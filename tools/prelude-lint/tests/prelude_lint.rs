//! The prelude lint (`jsprof_prelude_lint`) on the engine's real prelude: no
//! function of `components/script/src/prelude/` reaches a built-in a page can replace.
//! The files are read in the order `components/script/src/page/mod.rs` joins them.

use std::path::{Path, PathBuf};

use jsprof_prelude_lint::{lint, Rule};

/// Prelude files whose findings do not fail this test yet, each with why: a file being
/// rewritten under the prelude's rules may be listed here until its rewrite lands (empty:
/// every file is checked).
const NOT_YET_CHECKED: &[(&str, &str)] = &[];

fn script_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../components/script/src")
}

/// The prelude's files, in the order `PRELUDE` joins them.
fn prelude_files() -> Vec<(String, String)> {
    let page = std::fs::read_to_string(script_dir().join("page/mod.rs")).unwrap();
    let start = page
        .find("const PRELUDE: &str = concat!(")
        .expect("PRELUDE in page/mod.rs");
    let end = start + page[start..].find(");").unwrap();
    let files: Vec<(String, String)> = page[start..end]
        .split("include_str!(\"../prelude/")
        .skip(1)
        .map(|rest| {
            let name = &rest[..rest.find('"').unwrap()];
            let text = std::fs::read_to_string(script_dir().join("prelude").join(name)).unwrap();
            (name.to_owned(), text)
        })
        .collect();
    assert!(files.len() > 10, "{files:?}");
    files
}

#[test]
fn the_prelude_lint_finds_nothing_a_page_can_reach() {
    let files = prelude_files();
    let borrowed: Vec<(&str, &str)> = files
        .iter()
        .map(|(n, t)| (n.as_str(), t.as_str()))
        .collect();
    let report = lint(&borrowed);
    assert!(
        !report.findings.iter().any(|f| f.rule == Rule::Syntax),
        "{:#?}",
        report.findings
    );
    let (pending, failing): (Vec<_>, Vec<_>) = report
        .findings
        .iter()
        .partition(|f| NOT_YET_CHECKED.iter().any(|(file, _)| f.file == *file));
    for (file, why) in NOT_YET_CHECKED {
        let n = pending.iter().filter(|f| f.file == *file).count();
        eprintln!("prelude lint: {file} not checked yet ({why}): {n} finding(s)");
    }
    for f in &pending {
        eprintln!("  {f}");
    }
    eprintln!(
        "prelude lint: {} function(s) checked, {} finding(s) allowed by a comment",
        report.functions,
        report.allowed.len()
    );
    for (f, why) in &report.allowed {
        eprintln!("  allowed {f} ({why})");
    }
    let failing: Vec<String> = failing.iter().map(|f| f.to_string()).collect();
    assert!(
        failing.is_empty(),
        "the prelude reaches what a page can replace:\n{}",
        failing.join("\n")
    );
    // The lint looked at the whole prelude: every file has functions.
    assert!(report.functions > 300, "{} functions", report.functions);
}
