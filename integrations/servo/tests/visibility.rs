//! `--hidden` in Servo, as in jsprof (`components/shell/tests/pages.rs`,
//! `a_page_started_hidden_is_hidden_and_its_profilers_paused`, on the same page): a page
//! started hidden (its webview hidden through Servo's embedding API) has
//! `document.visibilityState` "hidden" and `document.hidden` true from its first script, and
//! its `Profiler` takes no sample (its session starts paused, BRIEF decision 8); shown, the
//! same page's profiler takes some.

mod common;

use std::path::Path;

use common::jsprof_servo_with;

/// The N of the page's `samples N stopped true` line.
fn samples(console: &str) -> u64 {
    console
        .lines()
        .find_map(|l| l.strip_prefix("samples "))
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no samples line: {console}"))
}

#[test]
fn a_page_started_hidden_is_hidden_and_its_profilers_paused() {
    let page =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/pages/visibility/index.html");
    let page = page.to_str().expect("UTF-8 path");
    let interval = ["--pref", "profiler.base_interval_ms=1"];

    let shown = jsprof_servo_with(page, None, &interval);
    assert!(
        shown.starts_with("visibilityState visible hidden false\n"),
        "{shown}"
    );
    // 300 ms of script at 1 ms: some samples.
    assert!(samples(&shown) >= 1, "{shown}");

    let modes: [&[&str]; 2] = [&["--hidden"], &["--pref", "dom.document.hidden=true"]];
    for hidden in modes {
        let args: Vec<&str> = hidden.iter().chain(&interval).copied().collect();
        let out =
            std::env::temp_dir().join(format!("jsprof-servo-hidden-{}.json", std::process::id()));
        let console = jsprof_servo_with(page, Some(&out), &args);
        assert_eq!(
            console, "visibilityState hidden hidden true\nsamples 0 stopped true\n",
            "{args:?}"
        );
        // The trace --trace-out kept (the page's stop()) has no sample either.
        let traces: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&out).expect("trace")).expect("JSON");
        let _ = std::fs::remove_file(&out);
        assert_eq!(traces.as_array().map(Vec::len), Some(1), "{traces}");
        assert_eq!(traces[0]["samples"], serde_json::json!([]), "{traces}");
    }
}
