//! Real pages in headless Chromium sending to the real collector (tests/sdk/live.mjs): the
//! field snippet (examples/field) and the real browser SDKs, @datadog/browser-rum (RUM with
//! long tasks) and @sentry/browser (tracing on), each on pages served with
//! `Document-Policy: js-profiling`, three page views each; what they sent is read back with
//! `jsprof-collector query`, and nothing they sent was refused, nor did the browser's
//! console say a word about the collector.
//!
//! Needs node, /usr/bin/chromium (or $CHROMIUM) and tests/sdk's npm packages in
//! $JSPROF_COLLECTOR_SDK (~/.cache/jsprof/collector-sdk): `./mach test` installs them.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use common::{count_of, query, Collector};

/// The one number a `SELECT count(*) AS n …` prints.
fn count(store: &Path, sql: &str) -> u64 {
    count_of(&query(store, sql))
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
    // Beside each profiled page's trace, its long animation frames (each 50 ms or more: the
    // page's load, busy(500), the click) and its slow click (busy(150)), in the trace's time.
    let events = |kind: &str, min_ms: u32| {
        count(
            store,
            &format!(
                "SELECT count(*) AS n FROM events e JOIN traces t ON t.trace_id = e.trace_id
                 WHERE t.session = '{session}' AND e.kind = '{kind}'
                   AND e.start_ms >= t.time_origin_ms AND e.duration_ms >= {min_ms}"
            ),
        )
    };
    assert_eq!(events("interaction", 0), 2);
    assert_eq!(events("interaction", 140), 2);
    assert_eq!(events("loaf", 50), events("loaf", 0));
    // busy(500) on each page.
    assert!(events("loaf", 450) >= 2, "{}", events("loaf", 0));
    let out = query(
        store,
        &format!(
            "SELECT DISTINCT e.kind, e.op FROM events e JOIN traces t ON t.trace_id = e.trace_id
             WHERE t.session = '{session}' ORDER BY e.kind"
        ),
    );
    assert!(out.contains("| interaction | event "), "{out}");
    assert!(
        out.contains("| loaf        | long-animation-frame |"),
        "{out}"
    );
    assert_eq!(done["console"], serde_json::json!([]), "{done}");
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
    let (sent, done) = live(&c, "sdks", |_| {
        // Three page views of each SDK: their profiles, and what explains them.
        wait_for_count(
            store,
            "SELECT count(*) AS n FROM traces WHERE source IN ('datadog', 'sentry')",
            6,
        );
        wait_for_count(
            store,
            "SELECT count(DISTINCT url) AS n FROM events WHERE kind IN ('view', 'transaction')",
            6,
        );
    });
    assert_eq!(done["pageErrors"], serde_json::json!([]), "{done}");
    // Every page view's upload arrived and was answered (live.mjs waited for each).
    assert_eq!(
        sent["datadog"],
        serde_json::json!([true, true, true, true]),
        "{sent}"
    );
    assert_eq!(
        sent["sentry"],
        serde_json::json!([true, true, true]),
        "{sent}"
    );
    // Nothing either SDK sent was refused or failed, preflights and the quota check
    // included, and the console said nothing of the collector (no CORS error, no failed
    // request).
    for sdk in ["datadog", "sentry"] {
        let requests = done["seen"][sdk].as_array().unwrap();
        assert!(requests.len() >= 6, "{sdk}: {done}");
        let mut answered = 0;
        for r in requests {
            // A request of a page on its way out (Datadog's beacon, Sentry's keepalive fetch)
            // is reported aborted as the page unloads, answered (200) or not yet: the
            // browser stopped watching it, the collector did not refuse it.
            match (r["status"].as_u64(), r["failed"].as_str()) {
                (Some(status), None | Some("net::ERR_ABORTED")) => {
                    assert!((200..300).contains(&status), "{sdk}: {r} in {done}");
                    answered += 1;
                }
                (None, Some("net::ERR_ABORTED")) => {}
                _ => panic!("{sdk}: {r} in {done}"),
            }
        }
        assert!(answered >= 6, "{sdk}: {done}");
    }
    assert_eq!(done["console"], serde_json::json!([]), "{done}");
    let carried = |sdk: &str, what: &str, status: u64| {
        done["seen"][sdk]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["carried"].as_str().unwrap().contains(what) && r["status"] == status)
            .count()
    };
    // Datadog's quota check (a preflight for its `DD-CLIENT-TOKEN`, then the GET) and its
    // RUM batches; Sentry's sessions and spans as Relay answers them.
    assert!(
        carried("datadog", "/api/v2/profiling/quota", 200) >= 1,
        "{done}"
    );
    assert!(carried("datadog", "/api/v2/rum", 202) >= 3, "{done}");
    // A profile a page view; the last page may send one more as it goes.
    assert!(carried("datadog", "/api/v2/profile", 202) >= 3, "{done}");
    assert!(carried("sentry", "session", 200) >= 3, "{done}");
    assert!(carried("sentry", "span", 200) >= 3, "{done}");
    assert!(carried("sentry", "profile_chunk", 200) >= 3, "{done}");
    let origin = done["origin"].as_str().unwrap();
    // The page as the SDK's view or transaction gives it, not the origin `Referer` gives.
    let out = query(
        store,
        "SELECT source, project, release, page_url, user_agent, session IS NOT NULL AS has_session FROM traces ORDER BY source, page_url",
    );
    for sdk in ["datadog", "sentry"] {
        for view in ["home", "cart", "checkout"] {
            assert!(
                out.contains(&format!("{origin}/{sdk}/{view}.html ")),
                "{sdk} {view}: {out}"
            );
        }
    }
    assert!(!out.contains(&format!("| {origin}/ ")), "{out}");
    assert_eq!(
        out.matches("| datadog | shop    | 5.0.1 ").count(),
        3,
        "{out}"
    );
    assert_eq!(
        out.matches("| sentry  | shop    | shop@5.0.1 ").count(),
        3,
        "{out}"
    );
    assert!(!out.contains("| false "), "{out}");
    assert!(out.contains("HeadlessChrome"), "{out}");
    // Sentry's session is its profiler's: the page load's transaction carries the same id.
    let out = query(
        store,
        "SELECT count(*) AS n FROM traces t WHERE t.source = 'sentry' AND t.session IN (SELECT e.session FROM events e WHERE e.kind = 'transaction' AND e.source = 'sentry')",
    );
    assert!(out.contains("| 3 |"), "{out}");
    // What explains the profiles: Datadog's views (URL, name) and long tasks (start,
    // duration), Sentry's page loads and their long animation frames, both SDKs' slow
    // clicks.
    let out = query(
        store,
        "SELECT source, kind, count(*) > 0 AS some, min(duration_ms) >= 0 AS timed, min(start_ms) > 1.7e12 AS dated FROM events GROUP BY source, kind ORDER BY source, kind",
    );
    for want in [
        "| datadog | loaf        | true | true  | true  |",
        "| datadog | view        | true | true  | true  |",
        "| datadog | interaction | true | true  | true  |",
        "| sentry  | loaf        | true | true  | true  |",
        "| sentry  | transaction | true | true  | true  |",
    ] {
        assert!(out.contains(want), "{want} not in {out}");
    }
    let out = query(
        store,
        "SELECT DISTINCT name, url FROM events WHERE source = 'datadog' AND kind = 'view' ORDER BY name",
    );
    let cells: Vec<Vec<&str>> = out
        .lines()
        .map(|l| l.split('|').map(str::trim).collect())
        .collect();
    for view in ["home", "cart", "checkout"] {
        let (name, url) = (
            format!("/datadog/{view}.html"),
            format!("{origin}/datadog/{view}.html"),
        );
        assert!(
            cells
                .iter()
                .any(|c| c.len() == 4 && c[1] == name && c[2] == url),
            "{view}: {out}"
        );
    }
    // The long tasks each SDK saw, with the page's samples inside them.
    for sdk in ["datadog", "sentry"] {
        let out = query(
            store,
            &format!("SELECT count(*) AS n FROM samples s JOIN traces t ON t.trace_id = s.trace_id JOIN events e ON e.session = t.session AND e.kind IN ('loaf', 'long-task') WHERE t.source = '{sdk}' AND s.timestamp_ms BETWEEN e.start_ms AND e.start_ms + e.duration_ms"),
        );
        assert!(count_of(&out) >= 10, "{sdk}: {out}");
    }
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
