//! The uploads the real SDKs made (tests/fixtures, recorded by tests/sdk/make-fixtures.mjs:
//! @datadog/browser-rum 7.16.2 and @sentry/browser 11.12.0 in headless Chromium on a page
//! with `Document-Policy: js-profiling`), sent to `jsprof-collector collect` as they were
//! sent then (method, URL, headers, body), and read back with SQL.

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
        assert!(out.starts_with("HTTP/1.1 202"), "{out}");
    });
    let out = query(
        dir.path(),
        "SELECT source, release, labels, user_agent FROM traces",
    );
    assert!(out.contains("| sentry "), "{out}");
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
            assert!(replay(addr, &req, &body).starts_with("HTTP/1.1 202"));
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

#[test]
fn a_truncated_sdk_upload_is_400_never_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    with_collector(dir.path(), &[], |addr| {
        for name in ["sentry-browser-11.12.0", "datadog-browser-rum-7.16.2"] {
            let (req, body) = fixture(name);
            for cut in [1, body.len() / 3, body.len() / 2, body.len() - 60] {
                let out = replay(addr, &req, &body[..cut]);
                assert!(
                    out.starts_with("HTTP/1.1 400"),
                    "{name} cut at {cut}: {out}"
                );
            }
        }
    });
}
