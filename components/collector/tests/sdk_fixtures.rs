//! The uploads the real SDKs made (tests/fixtures, recorded by tests/sdk/make-fixtures.mjs:
//! @datadog/browser-rum 7.16.2 and @sentry/browser 11.12.0 in headless Chromium on a page
//! with `Document-Policy: js-profiling`), sent to `jsprof-collector collect` as they were
//! sent then (method, URL, headers, body), and read back with SQL: the profiles, and the
//! rest of what the SDKs send (Sentry's sessions and spans, Datadog's RUM batches and
//! quota check), each answered as the SDK's own backend answers it.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};

use common::{query, Collector};

fn fixture(name: &str) -> (serde_json::Value, Vec<u8>) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let req = std::fs::read(dir.join(format!("{name}.request.json"))).unwrap();
    let body = std::fs::read(dir.join(format!("{name}.body"))).unwrap();
    (serde_json::from_slice(&req).unwrap(), body)
}

/// Replays a recorded request to `addr`: its status line and body.
fn replay(addr: &str, req: &serde_json::Value, body: &[u8]) -> String {
    let mut s = TcpStream::connect(addr).unwrap();
    let mut head = format!(
        "{} {} HTTP/1.1\r\n",
        req["method"].as_str().unwrap(),
        req["url"].as_str().unwrap()
    );
    for (k, v) in req["headers"].as_object().unwrap() {
        if matches!(k.as_str(), "host" | "connection" | "content-length") {
            continue;
        }
        head.push_str(&format!("{k}: {}\r\n", v.as_str().unwrap()));
    }
    head.push_str(&format!(
        "Host: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n\r\n",
        body.len()
    ));
    s.write_all(head.as_bytes()).unwrap();
    s.write_all(body).unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    out
}

fn with_collector(store: &Path, args: &[&str], f: impl FnOnce(&str)) {
    let c = Collector::start(store, args);
    f(&c.addr.to_string());
}

#[test]
fn sentry_envelope_from_the_real_sdk() {
    let dir = tempfile::tempdir().unwrap();
    let (req, body) = fixture("sentry-browser-11.12.0");
    with_collector(dir.path(), &[], |addr| {
        let out = replay(addr, &req, &body);
        // As Relay answers: 200 and the envelope's event id.
        assert!(out.starts_with("HTTP/1.1 200"), "{out}");
        assert!(
            out.ends_with("{\"id\":\"7ae9c54fb29842a8857df3a7dbb1da8a\"}"),
            "{out}"
        );
    });
    let out = query(
        dir.path(),
        "SELECT source, release, labels, user_agent, session FROM traces",
    );
    assert!(out.contains("| sentry "), "{out}");
    // The profiler's id is the trace's session.
    assert!(
        out.contains("| 060359e46d074020bc8ff9dc7b3a2581 |"),
        "{out}"
    );
    assert!(out.contains("shop@3.1.4"), "{out}");
    assert!(out.contains("\"environment\":\"fixtures\""), "{out}");
    assert!(out.contains("HeadlessChrome"), "{out}");
    // The page's own functions, where the SDK's chunk put them.
    let out = query(dir.path(), "SELECT DISTINCT f.name FROM samples s JOIN stack_frames sf ON sf.stack_id = s.stack_id JOIN frames f ON f.frame_id = sf.frame_id ORDER BY f.name");
    assert!(out.contains("| layoutPass"), "{out}");
    assert!(out.contains("| paintPass"), "{out}");
    assert!(out.contains("| busy"), "{out}");
}

#[test]
fn sentry_dsn_public_key_is_the_projects_key() {
    let dir = tempfile::tempdir().unwrap();
    let (req, body) = fixture("sentry-browser-11.12.0");
    with_collector(
        dir.path(),
        &["--key", "shop=0123456789abcdef0123456789abcdef"],
        |addr| {
            assert!(replay(addr, &req, &body).starts_with("HTTP/1.1 200"));
        },
    );
    with_collector(dir.path(), &["--key", "shop=another"], |addr| {
        let out = replay(addr, &req, &body);
        assert!(out.starts_with("HTTP/1.1 401"), "{out}");
        assert!(out.contains("unknown ingest key"), "{out}");
    });
    let out = query(
        dir.path(),
        "SELECT project, count(*) AS n FROM traces GROUP BY project",
    );
    assert!(out.contains("| shop    | 1 |"), "{out}");
}

#[test]
fn datadog_upload_from_the_real_sdk() {
    let dir = tempfile::tempdir().unwrap();
    let (req, body) = fixture("datadog-browser-rum-7.16.2");
    // The client token in `ddforward` is the key.
    with_collector(
        dir.path(),
        &["--key", "shop=pub0123456789abcdef0123456789abcd"],
        |addr| {
            let out = replay(addr, &req, &body);
            assert!(out.starts_with("HTTP/1.1 202"), "{out}");
        },
    );
    let out = query(dir.path(), "SELECT source, project, release, session, page_url, labels, time_origin_ms, sample_count FROM traces");
    assert!(out.contains("| datadog "), "{out}");
    assert!(out.contains("| 3.1.4 "), "{out}");
    assert!(
        out.contains("c96acd22-ad5b-4265-9eda-76398646afcf"),
        "{out}"
    );
    assert!(out.contains("/datadog.html"), "{out}");
    assert!(out.contains("\"service\":\"shop\""), "{out}");
    assert!(out.contains("1795679884399"), "{out}");
    assert!(out.contains("| 5717 "), "{out}");
    let out = query(dir.path(), "SELECT DISTINCT f.name FROM samples s JOIN stack_frames sf ON sf.stack_id = s.stack_id JOIN frames f ON f.frame_id = sf.frame_id ORDER BY f.name");
    assert!(out.contains("| layoutPass"), "{out}");
    assert!(out.contains("| paintPass"), "{out}");
}

/// A truncated upload is refused with a reason, never a panic. Sentry's envelope is read as
/// Relay reads it: a header cut short is a 400; a profile chunk cut short (its item has no
/// `length`) is dropped, and the envelope answered 200 with the reason in
/// `X-Jsprof-Dropped` (decision 0054).
#[test]
fn a_truncated_sdk_upload_is_refused_never_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    with_collector(dir.path(), &[], |addr| {
        let (req, body) = fixture("datadog-browser-rum-7.16.2");
        for cut in [1, body.len() / 3, body.len() / 2, body.len() - 60] {
            let out = replay(addr, &req, &body[..cut]);
            assert!(
                out.starts_with("HTTP/1.1 400"),
                "datadog cut at {cut}: {out}"
            );
        }
        let (req, body) = fixture("sentry-browser-11.12.0");
        let out = replay(addr, &req, &body[..1]);
        assert!(out.starts_with("HTTP/1.1 400"), "sentry cut at 1: {out}");
        for cut in [body.len() / 3, body.len() / 2, body.len() - 60] {
            let out = replay(addr, &req, &body[..cut]);
            assert!(
                out.starts_with("HTTP/1.1 200"),
                "sentry cut at {cut}: {out}"
            );
            assert!(
                out.contains("x-jsprof-dropped: 1 item(s); profile_chunk: malformed profile_chunk"),
                "sentry cut at {cut}: {out}"
            );
        }
    });
}

/// A Sentry session envelope and span envelope (tracing on), and Datadog's quota check and
/// RUM batches: each answered as the SDK's backend answers (200 from Relay, 202 `{}` and an
/// admitting quota from Datadog's intake), and what explains the profiles kept.
#[test]
fn the_sdks_other_requests() {
    let dir = tempfile::tempdir().unwrap();
    with_collector(
        dir.path(),
        &[
            "--key",
            "shop=pub0123456789abcdef0123456789abcd",
            "--key",
            "shop=0123456789abcdef0123456789abcdef",
        ],
        |addr| {
            let status = |name: &str| {
                let (req, body) = fixture(name);
                replay(addr, &req, &body)
            };
            let out = status("sentry-browser-11.12.0-session");
            assert!(out.starts_with("HTTP/1.1 200"), "{out}");
            assert!(out.ends_with("\r\n\r\n{}"), "{out}");
            let out = status("sentry-browser-11.12.0-spans");
            assert!(out.starts_with("HTTP/1.1 200"), "{out}");
            let out = status("datadog-browser-rum-7.16.2-quota");
            assert!(out.starts_with("HTTP/1.1 200"), "{out}");
            assert!(out.contains("\"admitted\":true"), "{out}");
            for name in [
                "datadog-browser-rum-7.16.2-rum",
                "datadog-browser-rum-7.16.2-view",
            ] {
                let out = status(name);
                assert!(out.starts_with("HTTP/1.1 202"), "{name}: {out}");
                assert!(out.ends_with("\r\n\r\n{}"), "{name}: {out}");
            }
            // The quota check's token is the key: another is refused.
            let (mut req, body) = fixture("datadog-browser-rum-7.16.2-quota");
            req["headers"]["dd-client-token"] = "pubother".into();
            assert!(replay(addr, &req, &body).starts_with("HTTP/1.1 401"));
        },
    );
    // Sentry's page load (the segment that carries the profiler's id), its long animation
    // frames (children of the segment), all in the profiler's session; Datadog's view and
    // long tasks, in its session.
    let out = query(
        dir.path(),
        "SELECT source, kind, count(DISTINCT session) = 1 AS one_session, min(duration_ms) >= 0 AS timed, min(start_ms) > 1.7e12 AS dated FROM events GROUP BY source, kind ORDER BY source, kind",
    );
    for want in [
        "| datadog | view ",
        "| datadog | loaf ",
        "| sentry  | transaction ",
        "| sentry  | loaf ",
    ] {
        assert!(out.contains(want), "{want} not in {out}");
    }
    assert!(!out.contains("false"), "{out}");
    let out = query(
        dir.path(),
        "SELECT count(*) AS n FROM events WHERE source = 'sentry' AND kind = 'transaction' AND session = view_id",
    );
    assert!(out.contains("| 0 |"), "{out}");
    let out = query(
        dir.path(),
        "SELECT project, name, url, op FROM events WHERE kind IN ('view', 'transaction') ORDER BY name",
    );
    assert!(out.contains("| shop    | /datadog.html | http://"), "{out}");
    assert!(out.contains("/sentry-tracing.html "), "{out}");
    assert!(out.contains("| pageload "), "{out}");
}

/// The page of a Datadog or Sentry trace is the one its SDK's view or page load names, not
/// the origin `Referer` gives; where nothing names it, `Referer` stays.
#[test]
fn page_urls_come_from_the_sdks_views_and_transactions() {
    let dir = tempfile::tempdir().unwrap();
    with_collector(dir.path(), &[], |addr| {
        for name in ["datadog-browser-rum-7.16.2", "sentry-browser-11.12.0"] {
            let (req, body) = fixture(name);
            let out = replay(addr, &req, &body);
            assert!(out.starts_with("HTTP/1.1 20"), "{out}");
        }
        let before = query(
            dir.path(),
            "SELECT source, page_url FROM traces ORDER BY source",
        );
        assert!(
            before.contains("| datadog | http://127.0.0.1:38765/datadog.html "),
            "{before}"
        );
        assert!(
            before.contains("| sentry  | http://127.0.0.1:38765/ "),
            "{before}"
        );
        // The view the Datadog profile began in, from its RUM batch.
        let view = serde_json::json!({
            "type": "view", "date": 1_795_679_884_399u64,
            "session": {"id": "c96acd22-ad5b-4265-9eda-76398646afcf"},
            "view": {"id": "c18cc177-dda6-4a75-800a-d9ccc41a22a1", "url": "http://127.0.0.1:38765/datadog.html?cart=1", "time_spent": 60_000_000_000u64},
        });
        let rum = serde_json::json!({
            "method": "POST",
            "url": "/dd-proxy?ddforward=%2Fapi%2Fv2%2Frum%3Fddsource%3Dbrowser",
            "headers": {"content-type": "text/plain;charset=UTF-8"},
        });
        assert!(replay(addr, &rum, view.to_string().as_bytes()).starts_with("HTTP/1.1 202"));
        // The Sentry chunk's page load, in a span envelope of its profiler.
        let spans = format!(
            "{}\n{}\n{}\n",
            r#"{"sent_at":"2026-11-26T07:58:07.000Z"}"#,
            r#"{"type":"span","item_count":1,"content_type":"application/vnd.sentry.items.span.v2+json"}"#,
            serde_json::json!({"version": 2, "items": [{
                "name": "/checkout", "span_id": "a63b8b4e528c985f", "trace_id": "055911db49ec47a3a423f5964b5db681",
                "start_timestamp": 1_795_679_885.0, "end_timestamp": 1_795_679_886.5, "is_segment": true,
                "attributes": {
                    "sentry.op": {"value": "pageload", "type": "string"},
                    "sentry.profiler_id": {"value": "060359e46d074020bc8ff9dc7b3a2581", "type": "string"},
                    "url.full": {"value": "http://127.0.0.1:38765/checkout?step=2", "type": "string"}
                }
            }]})
        );
        let envelope = serde_json::json!({
            "method": "POST",
            "url": "/api/42/envelope/?sentry_key=0123456789abcdef0123456789abcdef",
            "headers": {"content-type": "text/plain;charset=UTF-8"},
        });
        let out = replay(addr, &envelope, spans.as_bytes());
        assert!(out.starts_with("HTTP/1.1 200"), "{out}");
    });
    let after = query(
        dir.path(),
        "SELECT source, page_url, page_name FROM traces ORDER BY source",
    );
    // And its name: Datadog's view's (its URL's path, as the view has no name), Sentry's
    // page load's.
    let names: Vec<Vec<&str>> = after
        .lines()
        .map(|l| l.split('|').map(str::trim).collect())
        .filter(|c: &Vec<&str>| c.len() == 5 && c[1] != "source")
        .map(|c| vec![c[1], c[3]])
        .collect();
    assert_eq!(
        names,
        [
            vec!["datadog", "/datadog.html"],
            vec!["sentry", "/checkout"]
        ],
        "{after}"
    );
    assert!(
        after.contains("| datadog | http://127.0.0.1:38765/datadog.html?cart=1 "),
        "{after}"
    );
    assert!(
        after.contains("| sentry  | http://127.0.0.1:38765/checkout?step=2 "),
        "{after}"
    );
    // `--url` filters by that page.
    let out = std::process::Command::new(common::BIN)
        .args(["top", "--store"])
        .arg(dir.path())
        .args(["--url", "checkout?step=2", "--limit", "3"])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.contains("sentry.js") || out.contains("sentry.html"),
        "{out}"
    );
    assert!(!out.contains("datadog.html"), "{out}");
}
