//! `flame`, `diff` and the page's API over a store whose answer is known: traces posted to
//! the real binary over HTTP, then read back through the commands and the routes.

mod common;

use std::path::Path;
use std::process::{Command, Output};

use common::{field_trace, function_samples, get, http, post_trace, Collector, BIN, DAY};
use jsprof_export::{Keep, Profile};
use jsprof_profiler::ProfilerTrace;

fn run(args: &[&str], store: &Path) -> Output {
    Command::new(BIN)
        .arg(args[0])
        .arg("--store")
        .arg(store)
        .args(&args[1..])
        .output()
        .unwrap()
}

fn stdout(out: &Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).unwrap()
}

/// The flame graph jsprof-export draws of `traces` merged, as `jsprof convert -o x.svg`.
fn export_svg(traces: &[&serde_json::Value], title: &str) -> Vec<u8> {
    let mut p = Profile::new(Keep::Counts);
    for t in traces {
        let t: ProfilerTrace = serde_json::from_value((*t).clone()).unwrap();
        p.add_trace("t", &t, &mut |f| f).unwrap();
    }
    let mut out = Vec::new();
    jsprof_export::flamegraph::write(&p, title, &mut out).unwrap();
    out
}

#[test]
fn the_stores_flame_graph_is_the_export_of_its_traces() {
    let dir = tempfile::tempdir().unwrap();
    let c = Collector::start(dir.path(), &[]);
    let a = field_trace([30, 20, 10], 5);
    let b = field_trace([5, 40, 0], 0);
    let d = field_trace([0, 0, 7], 3);
    post_trace(
        c.addr,
        None,
        &a,
        "1.0",
        "https://shop.test/",
        "Chrome/130",
        DAY,
    );
    post_trace(
        c.addr,
        None,
        &b,
        "2.0",
        "https://shop.test/cart",
        "Chrome/131",
        DAY + 60_000.0,
    );
    post_trace(
        c.addr,
        None,
        &d,
        "2.0",
        "https://blog.test/",
        "Firefox/140",
        DAY + 120_000.0,
    );
    let out = dir.path().join("all.svg");
    let o = out.to_str().unwrap();
    stdout(&run(&["flame", "-o", o, "--title", "T"], dir.path()));
    assert!(std::fs::read(&out).unwrap() == export_svg(&[&a, &b, &d], "T"));
    // With top's filters: a release, a URL, a user agent, a time range.
    for (args, traces) in [
        (vec!["--release", "2.0"], vec![&b, &d]),
        (vec!["--url", "shop.test"], vec![&a, &b]),
        (vec!["--user-agent", "Chrome/131"], vec![&b]),
        (
            vec!["--since", "1795651230000", "--until", "1795651500000"],
            vec![&b, &d],
        ),
    ] {
        let mut all = vec!["flame", "-o", o, "--title", "T"];
        all.extend(args.iter());
        stdout(&run(&all, dir.path()));
        assert!(
            std::fs::read(&out).unwrap() == export_svg(&traces, "T"),
            "{args:?}"
        );
    }
    // The report: its facts are the store's.
    let html = dir.path().join("all.html");
    stdout(&run(&["flame", "-o", html.to_str().unwrap()], dir.path()));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("data-fact=\"traces\">3<"), "traces");
    assert!(page.contains("data-fact=\"samples\">120<"), "samples");
    assert!(page.contains("data-fact=\"idle\">8<"), "idle");
    assert!(page.contains("layout (https://example.test/lib.js:9:3) (35 samples"));
    // No sample matches: nothing is written, and it says so.
    let none = run(&["flame", "-o", o, "--release", "9.9"], dir.path());
    assert_eq!(none.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&none.stderr).contains("no samples"));
    let bad = run(&["flame", "-o", "x.json"], dir.path());
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains(".html"));
}

/// `diff`'s rows: (function, changed column).
fn diff_rows(out: &str) -> Vec<(String, String)> {
    out.lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| function"))
        .map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            (cells[1].to_owned(), cells[11].to_owned())
        })
        .collect()
}

#[test]
fn diff_flags_a_real_change_and_not_a_no_change() {
    let dir = tempfile::tempdir().unwrap();
    let c = Collector::start(dir.path(), &[]);
    // 1.0: layout 40%, paint 40%, style 20%; 2.0: layout 60%, paint 20%, style 20%;
    // 2.1: as 2.0. 1,000 samples of each release, over 10 traces.
    for i in 0..10 {
        let t = DAY + 1000.0 * i as f64;
        let u = "https://shop.test/";
        post_trace(
            c.addr,
            None,
            &field_trace([40, 40, 20], 0),
            "1.0",
            u,
            "C",
            t,
        );
        post_trace(
            c.addr,
            None,
            &field_trace([60, 20, 20], 0),
            "2.0",
            u,
            "C",
            t,
        );
        post_trace(
            c.addr,
            None,
            &field_trace([60, 20, 20], 0),
            "2.1",
            u,
            "C",
            t,
        );
    }
    let out = stdout(&run(
        &["diff", "--base", "1.0", "--head", "2.0"],
        dir.path(),
    ));
    assert!(
        out.starts_with("base 1.0: 1000 samples with a stack; head 2.0: 1000;"),
        "{out}"
    );
    let rows = diff_rows(&out);
    let changed = |f: &str| {
        rows.iter()
            .find(|(name, _)| name == f)
            .unwrap_or_else(|| panic!("{f} not in {out}"))
            .1
            .clone()
    };
    // The two real changes come first, both self and total; style and the callers did not
    // change.
    let first: Vec<&str> = rows[..2].iter().map(|(f, _)| f.as_str()).collect();
    assert!(
        first.contains(&"layout") && first.contains(&"paint"),
        "{out}"
    );
    assert_eq!(changed("layout"), "self, total");
    assert_eq!(changed("paint"), "self, total");
    for f in ["style", "render", "main"] {
        assert_eq!(changed(f), "", "{out}");
    }
    let layout: Vec<&str> = out
        .lines()
        .find(|l| l.starts_with("| layout"))
        .unwrap()
        .split('|')
        .map(str::trim)
        .collect();
    // 40% to 60%: +20 percentage points, with Newcombe's interval around it.
    assert_eq!((layout[5], layout[6]), ("40.00", "60.00"), "{out}");
    assert!(layout[7].starts_with("+20.00 [+"), "{out}");
    // Same shares: nothing is flagged.
    let same = stdout(&run(
        &["diff", "--base", "2.0", "--head", "2.1"],
        dir.path(),
    ));
    assert!(diff_rows(&same).iter().all(|(_, c)| c.is_empty()), "{same}");
    // A release without samples is an error that says so.
    let none = run(&["diff", "--base", "1.0", "--head", "3.0"], dir.path());
    assert_eq!(none.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&none.stderr).contains("release 3.0 has no samples"));
}

fn json(body: &str) -> serde_json::Value {
    serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body}"))
}

fn functions(top: &serde_json::Value) -> Vec<(String, i64)> {
    function_samples(&top["functions"])
}

#[test]
fn the_api_answers_per_project_and_refuses_bad_requests() {
    let dir = tempfile::tempdir().unwrap();
    let c = Collector::start(
        dir.path(),
        &[
            "--key",
            "shop=ingest-shop",
            "--key",
            "blog=ingest-blog",
            "--read-key",
            "shop=read-shop",
            "--read-key",
            "blog=read-blog",
        ],
    );
    let u = "https://shop.test/";
    post_trace(
        c.addr,
        Some("ingest-shop"),
        &field_trace([3, 2, 0], 1),
        "1.0",
        u,
        "C",
        DAY,
    );
    post_trace(
        c.addr,
        Some("ingest-shop"),
        &field_trace([0, 4, 0], 0),
        "2.0",
        u,
        "C",
        DAY + 5000.0,
    );
    post_trace(
        c.addr,
        Some("ingest-blog"),
        &field_trace([0, 0, 9], 0),
        "1.0",
        u,
        "C",
        DAY,
    );
    let shop = [("Authorization", "Bearer read-shop")];
    let (status, headers, body) = http(c.addr, "GET", "/api/top", &shop, b"");
    assert_eq!(status, 200, "{body}");
    assert_eq!(get(&headers, "content-type"), Some("application/json"));
    let top = functions(&json(&body));
    assert_eq!(top[0], ("paint".to_owned(), 6));
    assert!(top.contains(&("layout".to_owned(), 3)));
    assert!(top.contains(&("main".to_owned(), 9)));
    assert!(
        !top.iter().any(|(f, _)| f == "style"),
        "blog's function: {body}"
    );
    // The blog's key, in the page's cookie, shows the blog's only.
    let (_, _, body) = http(
        c.addr,
        "GET",
        "/api/top",
        &[("Cookie", "a=b; jsprof_key=read-blog")],
        b"",
    );
    let top = functions(&json(&body));
    assert_eq!(top[0], ("style".to_owned(), 9));
    assert!(!top.iter().any(|(f, _)| f == "paint"), "{body}");
    // No key, an ingest key, an unknown key: 401.
    for h in [
        vec![],
        vec![("Authorization", "Bearer ingest-shop")],
        vec![("Cookie", "jsprof_key=x")],
    ] {
        let (status, _, body) = http(c.addr, "GET", "/api/flame", &h, b"");
        assert_eq!(status, 401, "{h:?}: {body}");
    }
    // Filters and the timeline: 10 samples of 1.0 in one bucket run, 4 of 2.0 5 s later.
    let (status, _, body) = http(c.addr, "GET", "/api/top?release=2.0&limit=5", &shop, b"");
    assert_eq!(status, 200);
    assert_eq!(functions(&json(&body))[0], ("paint".to_owned(), 4));
    let (_, _, body) = http(c.addr, "GET", "/api/timeline?buckets=10", &shop, b"");
    let t = json(&body);
    let sum = |k: &str| {
        t[k].as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .sum::<u64>()
    };
    assert_eq!((sum("with_stack"), sum("empty")), (9, 1), "{body}");
    assert_eq!(t["bucket_ms"], 1000.0, "{body}");
    assert!(t["with_stack"].as_array().unwrap().len() <= 11);
    let (_, _, body) = http(
        c.addr,
        "GET",
        &format!("/api/timeline?since={}", DAY + 1000.0),
        &shop,
        b"",
    );
    let t = json(&body);
    assert_eq!(
        t["with_stack"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .sum::<u64>(),
        4
    );
    // The flame graph: inferno's SVG, with its own policy.
    let (status, headers, body) = http(c.addr, "GET", "/api/flame?release=1.0", &shop, b"");
    assert_eq!(status, 200);
    assert_eq!(get(&headers, "content-type"), Some("image/svg+xml"));
    assert!(get(&headers, "content-security-policy")
        .unwrap()
        .contains("frame-ancestors 'self'"));
    assert!(
        body.contains("layout (https://example.test/lib.js:9:3) (3 samples, 50.00%)"),
        "{body}"
    );
    assert!(!body.contains("style ("), "{body}");
    // Bad parameters: 400 with the reason; a quote in a value is a value.
    for (target, why) in [
        (
            "/api/top?since=yesterday",
            "since=yesterday: expected a time",
        ),
        ("/api/top?limit=0", "limit=0"),
        ("/api/timeline?buckets=100000", "buckets=100000"),
        ("/api/flame?limit=3", "unknown parameter \"limit\""),
        ("/api/top?release=1&release=2", "given twice"),
    ] {
        let (status, _, body) = http(c.addr, "GET", target, &shop, b"");
        assert_eq!(status, 400, "{target}: {body}");
        assert!(body.contains(why), "{target}: {body}");
    }
    let (status, _, body) = http(
        c.addr,
        "GET",
        "/api/top?release=1'%20OR%20'1'='1",
        &shop,
        b"",
    );
    assert_eq!((status, functions(&json(&body)).len()), (200, 0), "{body}");
    let (status, _, _) = http(c.addr, "POST", "/api/top", &shop, b"");
    assert_eq!(status, 405);
    // Another site's page gets no CORS answer to read with; the page has its policy.
    let (_, headers, _) = http(
        c.addr,
        "GET",
        "/api/top",
        &[("Origin", "https://evil.test"), shop[0]],
        b"",
    );
    assert_eq!(get(&headers, "access-control-allow-origin"), None);
    let (status, headers, body) = http(c.addr, "GET", "/", &[], b"");
    assert_eq!(status, 200);
    assert!(body.contains("<script src=\"/page.js\""));
    assert!(get(&headers, "content-security-policy")
        .unwrap()
        .starts_with("default-src 'none'"));
    drop(c);
    // Ingest keys without a read key: the API serves nothing.
    let c = Collector::start(dir.path(), &["--key", "shop=ingest-shop"]);
    let (status, _, body) = http(
        c.addr,
        "GET",
        "/api/top",
        &[("Authorization", "Bearer ingest-shop")],
        b"",
    );
    assert_eq!(status, 401);
    assert!(body.contains("--read-key"), "{body}");
}
