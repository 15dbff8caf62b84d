//! The replaced-built-ins pages (issue 23): `tests/pages/builtins/` replaces every built-in
//! of each realm with a recorder and plants recording getters and setters on
//! `Object.prototype` and `Array.prototype` (`hostile.js`), then exercises every Web API the
//! engine offers in a window, a same-origin iframe, a cross-origin iframe, a dedicated
//! worker and a `blob:` worker. Each realm reports its checks (the APIs still give the
//! right results) and every call the engine made into what the page replaced; any such call
//! fails the test, with the prelude frame that made it.
//!
//! Served by a real HTTP server: `http://127.0.0.1:PORT/` is the page's origin and
//! `http://localhost:PORT/` another one (the cross-origin iframe); and over `file:`, where
//! every file shares one origin (no cross-origin iframe).

mod common;

use common::pages;
use std::collections::BTreeMap;
use std::process::Command;

/// Whether what the `fetch` phase (fetch, Headers, Request, Response, XMLHttpRequest:
/// prelude file `12-fetch.js`) reaches fails the test, as every other phase's does. Its
/// checks (that fetch and XMLHttpRequest work) always count.
const FETCH_CHECKED: bool = true;

/// The APIs each realm must have checked (the part of a check's name before ':').
const EVERY_REALM: &[&str] = &[
    "events",
    "DOMException",
    "URL",
    "URLSearchParams",
    "timers",
    "queueMicrotask",
    "performance",
    "console",
    "reportError and a throwing listener fire error events",
    "uncaught errors",
    "structuredClone",
    "MessageChannel",
    "Blob",
    "btoa, atob",
    "location, navigator",
    "Profiler",
    "fetch",
    "Headers",
    "Request",
    "Response",
    "XMLHttpRequest",
];
const WINDOWS: &[&str] = &[
    "DOM",
    "selectors",
    "forms",
    "DOM events",
    "scripts",
    "import()",
    "postMessage",
];
const TOP: &[&str] = &["iframes", "workers"];
const WORKERS: &[&str] = &["worker"];

/// A static server for `tests/pages` with `.headers` sidecars, and `/echo`: the request's
/// body back, its method in `X-Method`, its `Content-Type` and `X-Echo` headers as sent.
fn serve() -> u16 {
    common::serve_pages(|req| {
        let url = req.url().to_owned();
        let path = url.split_once('?').map_or(url.as_str(), |(p, _)| p);
        if path == "/echo" {
            echo(req);
            return None;
        }
        Some(req)
    })
}

/// The `/echo` answer to `req`.
fn echo(mut req: tiny_http::Request) {
    let mut body = Vec::new();
    if req.as_reader().read_to_end(&mut body).is_err() {
        let _ = req.respond(tiny_http::Response::empty(400));
        return;
    }
    let mut resp = tiny_http::Response::from_data(body)
        .with_header(common::header(&format!("X-Method: {}", req.method())));
    for name in ["Content-Type", "X-Echo"] {
        let values: Vec<&str> = req
            .headers()
            .iter()
            .filter(|h| h.field.equiv(name))
            .map(|h| h.value.as_str())
            .collect();
        if !values.is_empty() {
            resp.add_header(common::header(&format!("{name}: {}", values.join(", "))));
        }
    }
    let _ = req.respond(resp);
}

/// What one realm reported.
#[derive(Default, Debug)]
struct Realm {
    ok: Vec<String>,
    failed: Vec<String>,
    /// (phase, what was reached, from which frame).
    reached: Vec<(String, String)>,
    done: Option<String>,
}

/// Runs the page and sorts its `BUILTINS <realm> …` lines by realm.
fn run(page: &str) -> (BTreeMap<String, Realm>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_jsprof"))
        .args([page, "--timeout", "90"])
        .current_dir(pages())
        .output()
        .expect("jsprof runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let mut realms: BTreeMap<String, Realm> = BTreeMap::new();
    for line in stdout.lines() {
        let Some(rest) = line.strip_prefix("BUILTINS ") else {
            continue;
        };
        let Some((realm, what)) = rest.split_once(' ') else {
            continue;
        };
        let r = realms.entry(realm.to_owned()).or_default();
        if let Some(check) = what.strip_prefix("ok ") {
            r.ok.push(check.to_owned());
        } else if let Some(check) = what.strip_prefix("FAIL ") {
            r.failed.push(check.to_owned());
        } else if let Some(reached) = what.strip_prefix("reached ") {
            let (phase, what) = reached.split_once(' ').unwrap_or((reached, ""));
            r.reached.push((phase.to_owned(), what.to_owned()));
        } else if let Some(done) = what.strip_prefix("done ") {
            r.done = Some(done.to_owned());
        }
    }
    (realms, stderr)
}

/// Every realm of `expected` finished, every check passed, the checks cover the APIs its
/// kind has, and the engine reached nothing the page replaced (the fetch phase aside unless
/// FETCH_CHECKED).
fn assert_clean(realms: &BTreeMap<String, Realm>, expected: &[(&str, &[&[&str]])], stderr: &str) {
    let mut problems = Vec::new();
    for (name, kinds) in expected {
        let Some(r) = realms.get(*name) else {
            problems.push(format!("{name}: no report (stderr: {stderr})"));
            continue;
        };
        if r.done.is_none() {
            problems.push(format!(
                "{name}: did not finish ({} checks so far)",
                r.ok.len()
            ));
        }
        for f in &r.failed {
            problems.push(format!("{name}: FAIL {f}"));
        }
        for api in kinds.iter().flat_map(|k| k.iter()) {
            let covered =
                r.ok.iter()
                    .chain(&r.failed)
                    .any(|c| c.split(':').next() == Some(api));
            if !covered {
                problems.push(format!("{name}: no check of {api}"));
            }
        }
        for (phase, what) in &r.reached {
            if phase == "fetch" && !FETCH_CHECKED {
                eprintln!("{name}: (fetch, not checked yet) reached {what}");
            } else {
                problems.push(format!("{name}: the engine reached {phase} {what}"));
            }
        }
        eprintln!(
            "{name}: {} checks passed; {}",
            r.ok.len(),
            r.done.as_deref().unwrap_or("")
        );
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn nothing_internal_reaches_a_page_that_replaced_its_builtins() {
    let port = serve();
    let (realms, stderr) = run(&format!("http://127.0.0.1:{port}/builtins/index.html"));
    assert_clean(
        &realms,
        &[
            ("window", &[EVERY_REALM, WINDOWS, TOP]),
            ("iframe", &[EVERY_REALM, WINDOWS]),
            ("cross-origin-iframe", &[EVERY_REALM, WINDOWS]),
            ("worker", &[EVERY_REALM, WORKERS]),
            ("blob-worker", &[EVERY_REALM, WORKERS]),
        ],
        &stderr,
    );
}

#[test]
fn nothing_internal_reaches_a_file_page_that_replaced_its_builtins() {
    let (realms, stderr) = run("builtins/index.html");
    assert_clean(
        &realms,
        &[
            ("window", &[EVERY_REALM, WINDOWS, TOP]),
            ("iframe", &[EVERY_REALM, WINDOWS]),
            ("worker", &[EVERY_REALM, WORKERS]),
            ("blob-worker", &[EVERY_REALM, WORKERS]),
        ],
        &stderr,
    );
}
