//! Real pages in headless Chromium sending to the real collector (tests/sdk/live.mjs): the
//! field snippet (examples/field) and the real browser SDKs, @datadog/browser-rum and
//! @sentry/browser, each on pages served with `Document-Policy: js-profiling`; what they
//! sent is read back with `jsprof-collector query`.
//!
//! Needs node, /usr/bin/chromium (or $CHROMIUM) and tests/sdk's npm packages in
//! $JSPROF_COLLECTOR_SDK (~/.cache/jsprof/collector-sdk): `./mach test` installs them.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use common::{query, Collector};

/// The one number a `SELECT count(*) AS n …` prints.
fn count(store: &Path, sql: &str) -> u64 {
    let out = query(store, sql);
    out.lines()
        .filter_map(|l| l.trim().strip_prefix('|')?.strip_suffix('|'))
        .find_map(|cell| cell.trim().parse().ok())
        .unwrap_or_else(|| panic!("no count in {out}"))
}

/// Waits until `sql` counts `want` (the store is read as it is, log included).
fn wait_for_count(store: &Path, sql: &str, want: u64) {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let n = count(store, sql);
        if n == want {
            return;
        }
        assert!(
            Instant::now() < deadline && n < want,
            "{sql}: {n} after 120 s, expected {want}"
        );
        std::thread::sleep(Duration::from_millis(250));
    }
}

fn line(out: &mut BufReader<ChildStdout>) -> serde_json::Value {
    let mut l = String::new();
    out.read_line(&mut l).unwrap();
    serde_json::from_str(&l).unwrap_or_else(|e| {
        panic!(
            "live.mjs printed {l:?}: {e} (./mach test installs chromium and tests/sdk's npm \
             packages, into $JSPROF_COLLECTOR_SDK or ~/.cache/jsprof/collector-sdk)"
        )
    })
}

/// Runs live.mjs's `scenario` against `collector`: its first line once the pages have
/// sent, then `wait` (which finds the traces in the store), then its last line.
fn live(
    collector: &Collector,
    scenario: &str,
    wait: impl FnOnce(&serde_json::Value),
) -> (serde_json::Value, serde_json::Value) {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/sdk/live.mjs");
    let mut node = Command::new("node")
        .arg(script)
        .arg(format!("http://{}", collector.addr))
        .arg(scenario)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("node (./mach test installs it)");
    let mut out = BufReader::new(node.stdout.take().unwrap());
    let sent = line(&mut out);
    assert_eq!(sent["event"], "sent", "{sent}");
    wait(&sent);
    node.stdin.take().unwrap().write_all(b"done\n").unwrap();
    let done = line(&mut out);
    assert!(node.wait().unwrap().success());
    (sent, done)
}

#[test]
fn the_field_snippet_in_chromium() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path();
    let c = Collector::start(store, &["--key", "shop=field-key"]);
    let (sent, done) = live(&c, "field", |sent| {
        let session = sent["sampledIn"][0]["session"].as_str().unwrap();
        // The shop page (left), the checkout page (hidden) and the trimmed trace.
        wait_for_count(
            store,
            &format!("SELECT count(*) AS n FROM traces WHERE session = '{session}'"),
            3,
        );
    });
    assert_eq!(done["pageErrors"], serde_json::json!([]), "{done}");
    // Sampled in: profiling from load, one session over both pages, sent when hidden.
    let states = sent["sampledIn"].as_array().unwrap();
    let session = states[0]["session"].as_str().unwrap();
    assert_eq!(states[0]["status"], "profiling", "{sent}");
    assert_eq!(states[1]["session"], session, "{sent}");
    assert_eq!(states[2]["status"], "sent", "{sent}");
    // Sampled out: both pages, nothing sent, not one request to the collector.
    for s in sent["sampledOut"].as_array().unwrap() {
        assert_eq!(s["status"], "sampled out", "{sent}");
        assert_eq!(s["sampled"], false, "{sent}");
    }
    assert_eq!(done["seen"]["sampledOut"], serde_json::json!([]), "{done}");
    let out_session = sent["sampledOut"][0]["session"].as_str().unwrap();
    assert_eq!(
        count(
            store,
            &format!("SELECT count(*) AS n FROM traces WHERE session = '{out_session}'")
        ),
        0
    );
    // No Document-Policy: the constructor's NotAllowedError is caught; no Profiler at all:
    // nothing is tried.
    assert_eq!(sent["noPolicy"]["status"], "refused", "{sent}");
    assert_eq!(sent["noApi"]["status"], "unsupported", "{sent}");
    assert_eq!(done["seen"]["noPolicy"], serde_json::json!([]), "{done}");
    // Every answer the browser saw was 202.
    for r in done["seen"]["sampledIn"].as_array().unwrap() {
        if let Some(status) = r["status"].as_u64() {
            assert_eq!(status, 202, "{done}");
        }
    }
    // Too large for keepalive as it was, sent once trimmed.
    let t = &sent["trimmed"];
    assert!(t["wholeBytes"].as_u64().unwrap() > 65536, "{t}");
    assert!(t["bytes"].as_u64().unwrap() <= 60000, "{t}");
    assert!(t["kept"].as_u64().unwrap() < 40000, "{t}");
    assert_eq!(t["status"], 202, "{t}");
    // The metadata, as the intake took it.
    let out = query(
        store,
        "SELECT project, source, release, page_url, labels, user_agent, time_origin_ms > 0 AS has_origin, sample_count > 0 AS sampled FROM traces ORDER BY page_url, labels",
    );
    for want in [
        "/shop.html?rate=1",
        "/checkout.html?rate=1",
        "{\"page\":\"shop\"}",
        "{\"page\":\"checkout\"}",
        "kept the last",
        "shop@4.2.0",
        "HeadlessChrome",
    ] {
        assert!(out.contains(want), "{want} not in {out}");
    }
    assert_eq!(out.matches("| shop    | jsprof ").count(), 3, "{out}");
    assert!(!out.contains("| false "), "{out}");
    // The page's own functions, sampled from load.
    let out = query(store, "SELECT DISTINCT f.name FROM samples s JOIN stack_frames sf ON sf.stack_id = s.stack_id JOIN frames f ON f.frame_id = sf.frame_id JOIN traces t ON t.trace_id = s.trace_id WHERE strpos(t.page_url, 'shop.html') > 0 ORDER BY f.name");
    assert!(out.contains("| busy "), "{out}");
    assert!(out.contains("| layoutPass "), "{out}");
}

#[test]
fn the_real_sdks_in_chromium() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path();
    let c = Collector::start(
        store,
        &[
            // Datadog's client token and Sentry's DSN public key.
            "--key",
            "shop=pub0123456789abcdef0123456789abcd",
            "--key",
            "shop=0123456789abcdef0123456789abcdef",
        ],
    );
    let (_, done) = live(&c, "sdks", |_| {
        wait_for_count(
            store,
            "SELECT count(DISTINCT source) AS n FROM traces WHERE source IN ('datadog', 'sentry')",
            2,
        );
    });
    assert_eq!(done["pageErrors"], serde_json::json!([]), "{done}");
    // The uploads the SDKs made were answered 202.
    let accepted = |name: &str, part: &str| {
        done["seen"][name]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["url"].as_str().unwrap().contains(part) && r["status"] == 202)
    };
    assert!(
        accepted("datadog", "ddforward=%2Fapi%2Fv2%2Fprofile"),
        "{done}"
    );
    assert!(accepted("sentry", "/api/42/envelope/"), "{done}");
    let out = query(
        store,
        "SELECT source, project, release, page_url, user_agent FROM traces ORDER BY source",
    );
    assert!(out.contains("| datadog | shop    | 5.0.1 "), "{out}");
    assert!(out.contains("| sentry  | shop    | shop@5.0.1 "), "{out}");
    // The page as its Referer gives it: cross-origin, Chromium sends the origin alone.
    let origin = done["origin"].as_str().unwrap();
    assert_eq!(out.matches(&format!("| {origin}/ ")).count(), 2, "{out}");
    assert!(out.contains("HeadlessChrome"), "{out}");
    let out = query(store, "SELECT DISTINCT t.source, f.name FROM samples s JOIN stack_frames sf ON sf.stack_id = s.stack_id JOIN frames f ON f.frame_id = sf.frame_id JOIN traces t ON t.trace_id = s.trace_id WHERE f.name IN ('busy', 'paintPass') ORDER BY t.source, f.name");
    for want in [
        "| datadog | busy ",
        "| datadog | paintPass ",
        "| sentry  | busy ",
        "| sentry  | paintPass ",
    ] {
        assert!(out.contains(want), "{want} not in {out}");
    }
}
