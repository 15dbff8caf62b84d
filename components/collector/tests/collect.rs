//! `jsprof-collector collect` as the real binary, over real sockets: every intake answer,
//! durability across `kill -9`, restart from the log, queries.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Command;

use common::{envelope, get, http, query, trace, Collector, BIN};

#[test]
fn jsprof_intake_then_query_and_top() {
    let dir = tempfile::tempdir().unwrap();
    let c = Collector::start(dir.path(), &[]);
    let plain = envelope("s1", "1.0.0", 50);
    let (status, _, body) = http(
        c.addr,
        "POST",
        "/v1/profiles",
        &[("Content-Type", "application/json")],
        &plain,
    );
    assert_eq!(status, 202, "{body}");
    let gz = jsprof_profiler::gzip(&envelope("s2", "1.0.0", 50));
    let (status, _, body) = http(
        c.addr,
        "POST",
        "/v1/profiles",
        &[("Content-Encoding", "gzip")],
        &gz,
    );
    assert_eq!(status, 202, "{body}");
    // A bare trace, deflated, with its metadata from the headers.
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    z.write_all(&serde_json::to_vec(&trace(10)).unwrap())
        .unwrap();
    let (status, _, body) = http(
        c.addr,
        "POST",
        "/v1/profiles",
        &[
            ("Content-Encoding", "deflate"),
            ("User-Agent", "TestAgent/1"),
            ("Referer", "https://example.test/other"),
        ],
        &z.finish().unwrap(),
    );
    assert_eq!(status, 202, "{body}");
    let out = query(dir.path(), "SELECT session, release, user_agent, page_url, sample_count FROM traces ORDER BY sample_count, session");
    assert!(out.contains("| s1      | 1.0.0   |"), "{out}");
    assert!(out.contains("TestAgent/1"), "{out}");
    assert!(out.contains("https://example.test/other"), "{out}");
    let out = query(dir.path(), "SELECT count(*) AS n FROM samples");
    assert!(out.contains("| 110 |"), "{out}");
    let top = Command::new(BIN)
        .args(["top", "--store"])
        .arg(dir.path())
        .args(["--release", "1.0.0"])
        .output()
        .unwrap();
    let top = String::from_utf8(top.stdout).unwrap();
    // 100 samples of release 1.0.0, 10 ms each: half each in layout and paint (self), all
    // in render and main (total).
    let line = |f: &str| {
        top.lines()
            .find(|l| l.contains(&format!("| {f} ")))
            .unwrap_or_else(|| panic!("{f} not in {top}"))
            .to_owned()
    };
    assert!(line("layout").contains("| 500.0 "), "{top}");
    assert!(line("layout").contains("| 50.0 "), "{top}");
    assert!(line("render").contains("| 100 "), "{top}");
    assert!(line("render").contains("| 1000.0 "), "{top}");
}

#[test]
fn bad_input_gets_4xx_with_a_reason() {
    let dir = tempfile::tempdir().unwrap();
    let c = Collector::start(
        dir.path(),
        &[
            "--pref",
            "collector.max_body_bytes=100000",
            "--pref",
            "collector.allowed_origins=https://site.test",
        ],
    );
    let (status, _, body) = http(c.addr, "POST", "/v1/profiles", &[], b"{\"trace\": [1,2");
    assert_eq!(status, 400);
    assert!(body.contains("malformed JSON"), "{body}");
    let bad =
        br#"{"frames":[],"resources":[],"stacks":[],"samples":[{"stackId":0,"timestamp":1}]}"#;
    let (status, _, body) = http(c.addr, "POST", "/v1/profiles", &[], bad);
    assert_eq!(status, 400);
    assert!(body.contains("stackId 0 out of range"), "{body}");
    let (status, _, body) = http(c.addr, "POST", "/v1/profiles", &[], &vec![b' '; 200_000]);
    assert_eq!(status, 413, "{body}");
    let bomb = jsprof_profiler::gzip(&vec![b' '; 5_000_000]);
    assert!(bomb.len() < 100_000);
    let (status, _, body) = http(
        c.addr,
        "POST",
        "/v1/profiles",
        &[("Content-Encoding", "gzip")],
        &bomb,
    );
    assert_eq!(status, 413, "{body}");
    assert!(body.contains("inflates past 100000 bytes"), "{body}");
    let (status, _, _) = http(
        c.addr,
        "POST",
        "/v1/profiles",
        &[("Content-Encoding", "br")],
        b"x",
    );
    assert_eq!(status, 415);
    let (status, _, _) = http(c.addr, "GET", "/v1/profiles", &[], b"");
    assert_eq!(status, 405);
    let (status, _, _) = http(c.addr, "POST", "/nowhere", &[], b"");
    assert_eq!(status, 404);
    // CORS: the preflight and the answer name the allowed origin; others are refused.
    let (status, headers, _) = http(
        c.addr,
        "OPTIONS",
        "/v1/profiles",
        &[
            ("Origin", "https://site.test"),
            ("Access-Control-Request-Method", "POST"),
        ],
        b"",
    );
    assert_eq!(status, 204);
    assert_eq!(
        get(&headers, "access-control-allow-origin"),
        Some("https://site.test")
    );
    // Every header the SDKs send: jsprof's, Sentry's (Relay's list, and its tracing's),
    // Datadog's quota check's token and its tracing's; GET for that quota check.
    let allowed = get(&headers, "access-control-allow-headers").unwrap();
    for h in [
        "content-type",
        "content-encoding",
        "x-jsprof-key",
        "x-sentry-auth",
        "dd-client-token",
        "sentry-trace",
        "baggage",
        "traceparent",
        "x-datadog-trace-id",
    ] {
        assert!(allowed.split(", ").any(|a| a == h), "{h} not in {allowed}");
    }
    assert_eq!(
        get(&headers, "access-control-allow-methods"),
        Some("GET, POST, OPTIONS")
    );
    let (status, headers, _) = http(
        c.addr,
        "POST",
        "/v1/profiles",
        &[("Origin", "https://site.test")],
        &envelope("c", "1", 3),
    );
    assert_eq!(status, 202);
    assert_eq!(
        get(&headers, "access-control-allow-origin"),
        Some("https://site.test")
    );
    // What Sentry's SDK reads of an answer, as Relay exposes it.
    assert_eq!(
        get(&headers, "access-control-expose-headers"),
        Some("x-sentry-error, x-sentry-rate-limits, retry-after, x-jsprof-dropped")
    );
    // Datadog's tracks the collector keeps nothing of are answered as its intake answers
    // them; a track its SDK does not send is not found.
    for track in ["replay", "logs"] {
        let (status, _, body) = http(
            c.addr,
            "POST",
            &format!("/dd?ddforward=%2Fapi%2Fv2%2F{track}%3Fddsource%3Dbrowser"),
            &[("Origin", "https://site.test")],
            b"--x--",
        );
        assert_eq!((status, body.as_str()), (202, "{}"), "{track}");
    }
    let (status, _, body) = http(
        c.addr,
        "POST",
        "/dd?ddforward=%2Fapi%2Fv2%2Fspans",
        &[],
        b"",
    );
    assert_eq!(status, 404, "{body}");
    // A RUM batch that is not lines of JSON is a 400 with the line.
    let (status, _, body) = http(
        c.addr,
        "POST",
        "/api/v2/rum",
        &[],
        b"{\"type\":\"view\"}\nnot json",
    );
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("RUM event on line 2"), "{body}");
    // A Sentry envelope with nothing the collector keeps: 200, as Relay answers.
    let (status, _, body) = http(
        c.addr,
        "POST",
        "/api/7/envelope/",
        &[],
        b"{\"event_id\":\"9ec79c33ec9942ab8353589fcb2e04dc\"}\n{\"type\":\"client_report\"}\n{\"discarded_events\":[]}\n",
    );
    assert_eq!(
        (status, body.as_str()),
        (200, "{\"id\":\"9ec79c33ec9942ab8353589fcb2e04dc\"}")
    );
    // An item that is not what its type says is dropped, the envelope answered as Relay
    // answers it, and the answer says why (decision 0054); an envelope whose framing cannot
    // be read is a 400.
    let (status, headers, body) = http(
        c.addr,
        "POST",
        "/api/7/envelope/",
        &[],
        b"{\"event_id\":\"9ec79c33ec9942ab8353589fcb2e04dc\"}\n{\"type\":\"span\"}\nnot json\n",
    );
    assert_eq!(
        (status, body.as_str()),
        (200, "{\"id\":\"9ec79c33ec9942ab8353589fcb2e04dc\"}")
    );
    let dropped = get(&headers, "x-jsprof-dropped").unwrap_or_default();
    assert!(
        dropped.starts_with("1 item(s); span: malformed span"),
        "{dropped}"
    );
    let (status, _, body) = http(c.addr, "POST", "/api/7/envelope/", &[], b"{}\n{\"type\n");
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("malformed envelope item header"), "{body}");
    let (status, _, body) = http(
        c.addr,
        "POST",
        "/v1/profiles",
        &[("Origin", "https://evil.test")],
        &envelope("c", "1", 3),
    );
    assert_eq!(status, 403);
    assert!(body.contains("not allowed"), "{body}");
}

#[test]
fn keys_map_to_projects_and_a_missing_or_wrong_key_is_401() {
    let dir = tempfile::tempdir().unwrap();
    let c = Collector::start(
        dir.path(),
        &["--key", "shop=k-shop", "--key", "blog=k-blog"],
    );
    let body = envelope("s", "1", 5);
    assert_eq!(http(c.addr, "POST", "/v1/profiles", &[], &body).0, 401);
    assert_eq!(
        http(
            c.addr,
            "POST",
            "/v1/profiles",
            &[("X-Jsprof-Key", "nope")],
            &body
        )
        .0,
        401
    );
    assert_eq!(
        http(
            c.addr,
            "POST",
            "/v1/profiles",
            &[("X-Jsprof-Key", "k-shop")],
            &body
        )
        .0,
        202
    );
    assert_eq!(
        http(c.addr, "POST", "/v1/profiles?key=k-blog", &[], &body).0,
        202
    );
    assert_eq!(
        http(c.addr, "POST", "/v1/profiles?key=k-blog", &[], &body).0,
        202
    );
    let out = Command::new(BIN)
        .args(["query", "--project", "blog", "--store"])
        .arg(dir.path())
        .arg("SELECT project, count(*) AS n FROM traces GROUP BY project")
        .output()
        .unwrap();
    let out = String::from_utf8(out.stdout).unwrap();
    assert!(out.contains("| blog    | 2 |"), "{out}");
    assert!(!out.contains("shop"), "{out}");
}

/// Concurrent clients, `kill -9` in the middle, restart: every acknowledged trace is
/// queryable, before and after the restart compacts the log.
#[test]
fn kill_9_mid_ingest_loses_no_acknowledged_trace() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Collector::start(dir.path(), &["--pref", "collector.segment_ms=50"]);
    let addr = c.addr;
    let acked = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let clients: Vec<_> = (0..8)
        .map(|t| {
            let acked = acked.clone();
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut i = 0;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let session = format!("c{t}-{i}");
                    i += 1;
                    // After the kill, connections fail: those traces were never acked.
                    let Ok(mut s) = TcpStream::connect(addr) else { break };
                    let body = envelope(&session, "2.0", 100);
                    let head = format!("POST /v1/profiles HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: {}\r\n\r\n", body.len());
                    if s.write_all(head.as_bytes()).and_then(|()| s.write_all(&body)).is_err() {
                        break;
                    }
                    let mut out = String::new();
                    let _ = s.read_to_string(&mut out);
                    if out.starts_with("HTTP/1.1 202") {
                        acked.lock().unwrap().push(session);
                    }
                }
            })
        })
        .collect();
    // Kill once at least 200 traces are acknowledged (waiting on state, not time).
    while acked.lock().unwrap().len() < 200 {
        std::thread::yield_now();
    }
    c.kill9();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for t in clients {
        t.join().unwrap();
    }
    let acked = acked.lock().unwrap().clone();
    let count_acked = |out: &str| {
        acked
            .iter()
            .filter(|s| out.contains(&format!("| {s} ")))
            .count()
    };
    // Straight from the log and the Parquet files, before any restart.
    let out = query(dir.path(), "SELECT DISTINCT session FROM traces");
    assert_eq!(
        count_acked(&out),
        acked.len(),
        "acknowledged traces missing after kill -9"
    );
    // A restart compacts what the log still holds.
    let c2 = Collector::start(dir.path(), &["--pref", "collector.segment_ms=50"]);
    let wal = dir.path().join("wal");
    let mut waited = 0;
    while std::fs::read_dir(&wal)
        .unwrap()
        .filter_map(Result::ok)
        .any(|e| {
            let n = e.file_name();
            let n = n.to_string_lossy();
            // Segments older than the restart's own.
            n.ends_with(".wal") && jsprof_collector::wal::holds_records(&e.path())
        })
    {
        assert!(waited < 3000, "the restart never compacted the log");
        waited += 1;
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    drop(c2);
    let out = query(dir.path(), "SELECT DISTINCT session FROM traces");
    assert_eq!(count_acked(&out), acked.len());
    let out = query(
        dir.path(),
        "SELECT count(*) AS n, count(DISTINCT session) AS d FROM traces",
    );
    // Each acknowledged trace once (the unacknowledged in flight may be there too, once).
    let row = out.lines().nth(3).unwrap();
    let nums: Vec<u64> = row
        .split('|')
        .filter_map(|c| c.trim().parse().ok())
        .collect();
    assert_eq!(nums[0], nums[1], "a trace counted twice: {out}");
}

/// `jsprof collect` (the shell, which hands over to `jsprof-collector`) ends on SIGTERM and
/// on SIGINT: the shell blocks both for its own signal thread, and a blocked mask survives
/// `exec`, so the collector once ignored them (Ctrl-C did nothing).
#[test]
fn jsprof_collect_ends_on_sigterm_and_sigint() {
    use std::io::BufRead;
    use std::os::unix::process::ExitStatusExt;
    let jsprof = std::path::Path::new(BIN).with_file_name("jsprof");
    assert!(
        jsprof.exists(),
        "{} is needed: `./mach build` builds it beside jsprof-collector",
        jsprof.display()
    );
    for (signal, number) in [("-TERM", 15), ("-INT", 2)] {
        let dir = tempfile::tempdir().unwrap();
        // Both signals at their default disposition whatever this test's own are: a shell
        // starts a background job (`cargo test &`) with SIGINT ignored, which jsprof would
        // inherit. (`env` execs jsprof: the pid is the same.)
        let mut child = Command::new("env")
            .arg("--default-signal=INT,TERM")
            .arg(&jsprof)
            .args(["collect", "--listen", "127.0.0.1:0", "--store"])
            .arg(dir.path())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert!(line.starts_with("jsprof: collecting on"), "{line}");
        let sent = Command::new("kill")
            .args([signal, &child.id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
        let until = std::time::Instant::now() + std::time::Duration::from_secs(20);
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break s;
            }
            if std::time::Instant::now() > until {
                let _ = child.kill();
                panic!("jsprof collect did not end on SIG{}", &signal[1..]);
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        assert_eq!(status.signal(), Some(number), "{status:?}");
    }
}

/// A reader that stops reading (`jsprof query … | head -1`) ends the command quietly, with
/// success: no panic on the broken pipe. The output is larger than a pipe's buffer, so the
/// command is still writing when the reader goes.
#[test]
fn a_reader_that_goes_away_ends_the_output_quietly() {
    let dir = tempfile::tempdir().unwrap();
    drop(Collector::start(dir.path(), &[]));
    let mut child = Command::new(BIN)
        .args(["query", "--store"])
        .arg(dir.path())
        .arg("SELECT value, 'a row long enough to fill the pipe' AS pad FROM generate_series(1, 200000)")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 4096];
    let n = stdout.read(&mut first).unwrap();
    assert!(n > 0, "no output");
    drop(stdout);
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(out.status.success(), "{:?}: {stderr}", out.status);
}
