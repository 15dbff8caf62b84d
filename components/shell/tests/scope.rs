//! The profiler service (`--profiler-service`, issue 26) driven over its real socket, on a
//! real page served by a real HTTP server (`tests/pages/scope/`: timers, an event handler,
//! an external and a module script, a fetch, an iframe and a worker), in a content thread
//! and again in a content process (`-M`). Every wait is on a state (a line printed, an
//! answer read, a process gone), with deadlines far beyond need.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

const DEADLINE: Duration = Duration::from_secs(120);

/// A running `jsprof --profiler-service 0 …` and its port.
struct Service {
    child: Child,
    stdout: mpsc::Receiver<String>,
    port: u16,
}

impl Service {
    fn start(multiprocess: bool, extra: &[&str], page: &str) -> Service {
        let mut command = Command::new(env!("CARGO_BIN_EXE_jsprof"));
        command.args([
            "--profiler-service",
            "0",
            "--pref",
            "profiler.base_interval_ms=1",
        ]);
        if multiprocess {
            command.arg("-M");
        }
        command.args(extra).arg(page);
        let (child, stdout, stderr) = common::spawn_reading_lines(&mut command);
        let line = stderr
            .recv_timeout(DEADLINE)
            .expect("the service says where it listens");
        let port = line
            .rsplit_once(':')
            .and_then(|(_, p)| p.parse().ok())
            .unwrap_or_else(|| panic!("not a listening line: {line}"));
        // The rest of stderr is not read: drain it so that the process never blocks.
        std::thread::spawn(move || while stderr.recv().is_ok() {});
        Service {
            child,
            stdout,
            port,
        }
    }

    fn connect(&self) -> Conn {
        let stream = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        stream.set_read_timeout(Some(DEADLINE)).unwrap();
        Conn {
            reader: BufReader::new(stream.try_clone().unwrap()),
            writer: stream,
            tag: 100,
        }
    }

    /// Waits until the page prints `line`.
    fn wait_for_line(&self, line: &str) {
        let until = Instant::now() + DEADLINE;
        loop {
            let left = until.saturating_duration_since(Instant::now());
            match self.stdout.recv_timeout(left) {
                Ok(l) if l == line => return,
                Ok(_) => {}
                Err(e) => panic!("the page never printed {line:?}: {e}"),
            }
        }
    }

    /// Quits and checks that the browser ends, with exit status 0.
    fn quit(mut self, conn: &mut Conn) {
        conn.ok("Quit", json!({}));
        let until = Instant::now() + DEADLINE;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                assert!(status.success(), "{status:?}");
                return;
            }
            assert!(Instant::now() < until, "the browser did not end after Quit");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

struct Conn {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
    tag: u64,
}

impl Conn {
    fn line(&mut self, line: &str) -> Value {
        writeln!(self.writer, "{line}").unwrap();
        let mut answer = String::new();
        self.reader.read_line(&mut answer).unwrap();
        serde_json::from_str(&answer).unwrap_or_else(|e| panic!("{answer:?}: {e}"))
    }

    fn call(&mut self, command: Value, payload: Value) -> Value {
        self.tag += 1;
        let r = self
            .line(&json!({"command": command, "tag": self.tag, "payload": payload}).to_string());
        assert_eq!(r["tag"], self.tag, "{r}");
        r
    }

    fn ok(&mut self, command: &str, payload: Value) -> Value {
        let r = self.call(json!(command), payload.clone());
        assert_eq!(r["status"], "OK", "{command} {payload}: {r}");
        r["payload"].clone()
    }

    fn bad(&mut self, command: Value, payload: Value) {
        let r = self.call(command.clone(), payload.clone());
        assert_eq!(r["status"], "BAD_REQUEST", "{command} {payload}: {r}");
        assert!(r["payload"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty()));
    }

    fn events(&mut self, session: u64, timeline: u64, extra: Value) -> Vec<Value> {
        let mut payload = json!({"sessionID": session, "timelineID": timeline, "mode": "ALL"});
        for (k, v) in extra.as_object().unwrap() {
            payload[k] = v.clone();
        }
        self.ok("GetEvents", payload)["eventList"]
            .as_array()
            .unwrap()
            .clone()
    }
}

fn page_url(server: u16) -> String {
    format!("http://127.0.0.1:{server}/scope/index.html")
}

fn ms(v: &Value) -> f64 {
    v.as_f64().unwrap()
}

fn kind(e: &Value) -> Option<&str> {
    e["threadEvaluation"]["kind"].as_str()
}

/// Every event of timeline 1 is checked against the tree's rules and the page's content.
fn check_top_timeline(events: &[Value], server: u16) {
    let base = format!("http://127.0.0.1:{server}/scope/");
    let by_id: BTreeMap<u64, &Value> = events
        .iter()
        .map(|e| (e["eventID"].as_u64().unwrap(), e))
        .collect();
    // From the first byte: the first event is the document's load, at the start.
    let first = events
        .iter()
        .min_by(|a, b| ms(&a["interval"]["start"]).total_cmp(&ms(&b["interval"]["start"])))
        .unwrap();
    assert_eq!(first["type"], "PROCESS", "{first}");
    assert_eq!(first["process"]["url"], format!("{base}index.html"));
    assert_eq!(first["process"]["status"], 200);
    assert!(first["process"]["bytes"].as_u64().unwrap() > 500);
    assert!(events
        .iter()
        .any(|e| e["documentParsing"]["url"] == format!("{base}index.html")));
    // The evaluations the page makes.
    let kinds: BTreeSet<&str> = events.iter().filter_map(kind).collect();
    for k in [
        "inline",
        "external",
        "module",
        "eventHandler",
        "timeout",
        "interval",
        "microtask",
        "fetchCallback",
        "workerMessage",
    ] {
        assert!(kinds.contains(k), "no {k} evaluation: {kinds:?}");
    }
    assert_eq!(
        events
            .iter()
            .filter(|e| kind(e) == Some("interval"))
            .count(),
        3
    );
    // The function each callback evaluation entered.
    let entered = |k: &str| -> BTreeSet<String> {
        events
            .iter()
            .filter(|e| kind(e) == Some(k))
            .filter_map(|e| {
                e["threadEvaluation"]["function"]
                    .as_str()
                    .map(str::to_owned)
            })
            .collect()
    };
    assert_eq!(entered("interval"), BTreeSet::from(["tick".to_owned()]));
    assert_eq!(entered("timeout"), BTreeSet::from(["later".to_owned()]));
    assert!(
        entered("eventHandler").contains("onLoad"),
        "{:?}",
        entered("eventHandler")
    );
    // `worker.onmessage = (e) => …`: an arrow function named by its assignment.
    assert_eq!(
        entered("workerMessage"),
        BTreeSet::from(["worker.onmessage".to_owned()])
    );
    assert!(events
        .iter()
        .filter(|e| matches!(
            kind(e),
            Some("inline" | "external" | "module" | "microtask")
        ))
        .all(|e| e["threadEvaluation"]["function"].is_null()));
    assert!(events
        .iter()
        .any(|e| kind(e) == Some("eventHandler") && e["threadEvaluation"]["eventType"] == "load"));
    for url in [
        "external.js",
        "module.js",
        "lib.js",
        "data.txt",
        "frame.html",
    ] {
        assert!(
            events
                .iter()
                .any(|e| e["process"]["url"] == format!("{base}{url}")),
            "no load of {url}"
        );
    }
    // The tree: parents and children.
    for e in events {
        let id = e["eventID"].as_u64().unwrap();
        let children: Vec<&Value> = events.iter().filter(|c| c["parentEventID"] == id).collect();
        assert_eq!(e["childCount"], children.len(), "{e}");
        let sum: f64 = children.iter().map(|c| ms(&c["aggregatedTime"])).sum();
        assert!(ms(&e["aggregatedTime"]) >= sum - 1e-9, "{e}");
        assert!((ms(&e["time"]) - (ms(&e["aggregatedTime"]) - sum)).abs() < 1e-6);
        assert!(ms(&e["aggregatedOverhead"]) >= ms(&e["overhead"]));
        assert_eq!(e["hits"], 1);
        let parent = e["parentEventID"].as_u64().unwrap();
        if parent != 0 {
            let p = by_id[&parent];
            assert!(ms(&p["interval"]["start"]) <= ms(&e["interval"]["start"]));
            assert!(ms(&p["interval"]["end"]) >= ms(&e["interval"]["end"]));
        }
        // A script's compilation is a child of its evaluation.
        if e["type"] == "SCRIPT_COMPILATION" {
            let p = by_id[&parent];
            assert_eq!(p["type"], "THREAD_EVALUATION", "{e} in {p}");
            match e["scriptCompilation"]["url"].as_str() {
                None => assert_eq!(kind(p), Some("inline")),
                Some(url) if url.ends_with("lib.js") => assert_eq!(kind(p), Some("module")),
                Some(url) => assert_eq!(p["threadEvaluation"]["script"], url),
            }
        }
    }
    let compiled: BTreeSet<&str> = events
        .iter()
        .filter_map(|e| e["scriptCompilation"]["url"].as_str())
        .collect();
    assert!(compiled.contains(format!("{base}external.js").as_str()));
    assert_eq!(
        events
            .iter()
            .filter(|e| e["scriptCompilation"]["scriptKind"] == "module")
            .count(),
        2
    );
}

/// The reduce modes against the `ALL` list they reduce.
fn check_reductions(conn: &mut Conn, session: u64, all: &[Value]) {
    let own: f64 = all.iter().map(|e| ms(&e["time"])).sum();
    let types = conn.events(session, 1, json!({"mode": "REDUCE_UNIQUE_TYPES"}));
    let mut hits = 0;
    for t in &types {
        let of: Vec<&Value> = all.iter().filter(|e| e["type"] == t["type"]).collect();
        assert_eq!(t["hits"], of.len(), "{t}");
        let time: f64 = of.iter().map(|e| ms(&e["time"])).sum();
        assert!((ms(&t["time"]) - time).abs() < 1e-6, "{t}");
        assert!(ms(&t["aggregatedTime"]) >= ms(&t["time"]) - 1e-9);
        hits += of.len();
    }
    assert_eq!(hits, all.len());
    let unique = conn.events(session, 1, json!({"mode": 3}));
    let total: u64 = unique.iter().map(|e| e["hits"].as_u64().unwrap()).sum();
    assert_eq!(total as usize, all.len());
    let interval = unique
        .iter()
        .find(|e| e["threadEvaluation"]["kind"] == "interval")
        .unwrap();
    assert_eq!(interval["hits"], 3);
    let reduced = conn.events(session, 1, json!({"mode": "REDUCE_ALL"}));
    assert_eq!(reduced.len(), 1);
    assert_eq!(reduced[0]["hits"], all.len());
    assert!((ms(&reduced[0]["time"]) - own).abs() < 1e-6);
    // Top-level events contain all the others: their sum is the whole.
    let top: f64 = all
        .iter()
        .filter(|e| e["parentEventID"] == 0)
        .map(|e| ms(&e["aggregatedTime"]))
        .sum();
    assert!((ms(&reduced[0]["aggregatedTime"]) - top).abs() < 1e-6);
}

/// `interval`, `maxDepth`, `eventID` and `eventTypeList` against the `ALL` list.
fn check_selections(conn: &mut Conn, session: u64, all: &[Value]) {
    let ids = |events: &[Value]| -> BTreeSet<u64> {
        events
            .iter()
            .map(|e| e["eventID"].as_u64().unwrap())
            .collect()
    };
    let external = all.iter().find(|e| kind(e) == Some("external")).unwrap();
    let (start, end) = (
        ms(&external["interval"]["start"]),
        ms(&external["interval"]["end"]),
    );
    let within = conn.events(
        session,
        1,
        json!({"interval": {"start": start, "end": end}}),
    );
    let expected: Vec<Value> = all
        .iter()
        .filter(|e| ms(&e["interval"]["start"]) <= end && ms(&e["interval"]["end"]) >= start)
        .cloned()
        .collect();
    assert_eq!(ids(&within), ids(&expected));
    assert!(ids(&within).len() < all.len());
    let top = conn.events(session, 1, json!({"maxDepth": 1}));
    assert!(top.iter().all(|e| e["parentEventID"] == 0));
    assert_eq!(
        top.len(),
        all.iter().filter(|e| e["parentEventID"] == 0).count()
    );
    let id = external["eventID"].clone();
    let under = conn.events(session, 1, json!({"eventID": id}));
    assert!(!under.is_empty());
    assert!(under.iter().all(|e| e["parentEventID"] == id));
    let compilations = conn.events(session, 1, json!({"eventTypeList": [5]}));
    assert!(!compilations.is_empty());
    assert!(compilations
        .iter()
        .all(|e| e["type"] == "SCRIPT_COMPILATION"));
}

/// A whole session from the first byte: `--start-paused`, a start in `mode`, `Continue`.
fn session_from_first_byte(multiprocess: bool, mode: &str) {
    let server = common::serve_pages(Some);
    let service = Service::start(multiprocess, &["--start-paused"], &page_url(server));
    let mut conn = service.connect();
    let windows = conn.ok("ListWindows", json!({}));
    assert_eq!(windows["windowList"][0]["windowID"], 1);
    assert_eq!(windows["windowList"][0]["url"], page_url(server));
    let started = conn.ok(
        "StartProfiler",
        json!({"windowID": 1, "startMode": mode, "interval": 1}),
    );
    let session = started["sessionID"].as_u64().unwrap();
    conn.ok("Continue", json!({}));
    service.wait_for_line("scope page done");
    let stopped = conn.ok("StopProfiler", json!({"sessionID": session}));
    assert_eq!(stopped["sessionID"], session);
    assert_eq!(stopped["windowID"], 1);
    assert_eq!(
        stopped["timelineList"],
        json!([{"timelineID": 1, "frameID": 1}, {"timelineID": 2, "frameID": 2}])
    );
    // Both frames, as ListWindows sees them now.
    let windows = conn.ok("ListWindows", json!({}));
    let frames = windows["windowList"][0]["frameList"].as_array().unwrap();
    assert_eq!(frames.len(), 2);
    assert_eq!(frames[1]["parentFrameID"], 1);
    let all = conn.events(session, 1, json!({}));
    check_top_timeline(&all, server);
    check_reductions(&mut conn, session, &all);
    check_selections(&mut conn, session, &all);
    // The iframe's own timeline.
    let frame = conn.events(session, 2, json!({}));
    assert!(frame
        .iter()
        .any(|e| e["documentParsing"]["url"]
            == format!("http://127.0.0.1:{server}/scope/frame.html")));
    assert!(frame.iter().any(|e| kind(e) == Some("inline")));
    // Sampled stacks inside evaluations, and the trace they come from.
    let with_stacks = conn.events(session, 1, json!({"stacks": true}));
    assert!(with_stacks
        .iter()
        .filter(|e| e["type"] == "THREAD_EVALUATION")
        .all(|e| e["samples"].is_array()));
    let trace = conn.ok("GetTrace", json!({"sessionID": session}));
    for key in ["frames", "resources", "samples", "stacks"] {
        assert!(trace[key].is_array(), "{key}");
    }
    assert!(!trace["samples"].as_array().unwrap().is_empty());
    // Release: the session's IDs are invalid afterwards.
    conn.ok("ReleaseSession", json!({"sessionID": session}));
    conn.bad(
        json!("GetEvents"),
        json!({"sessionID": session, "timelineID": 1, "mode": 1}),
    );
    conn.bad(json!("ReleaseSession"), json!({"sessionID": session}));
    conn.bad(json!("GetTrace"), json!({"sessionID": session}));
    service.quit(&mut conn);
}

#[test]
fn immediate_start_before_continue_profiles_from_the_first_byte() {
    session_from_first_byte(false, "IMMEDIATE");
}

#[test]
fn url_start_profiles_the_next_navigation_from_its_first_byte() {
    session_from_first_byte(false, "URL");
}

#[test]
fn from_the_first_byte_in_a_content_process() {
    session_from_first_byte(true, "IMMEDIATE");
    session_from_first_byte(true, "URL");
}

/// Every BAD_REQUEST, release of a stopped session, and a client that leaves mid-session.
fn bad_requests_and_disconnects(multiprocess: bool) {
    let server = common::serve_pages(Some);
    let service = Service::start(multiprocess, &[], &page_url(server));
    service.wait_for_line("scope page done");
    let mut conn = service.connect();
    // Unknown windows.
    conn.bad(json!("StartProfiler"), json!({"windowID": 2}));
    conn.bad(json!(1), json!({"windowID": 0}));
    let session = conn.ok("StartProfiler", json!({"windowID": 1}))["sessionID"]
        .as_u64()
        .unwrap();
    // One session at a time.
    conn.bad(json!("StartProfiler"), json!({"windowID": 1}));
    // A running session can be neither read nor released.
    conn.bad(
        json!("GetEvents"),
        json!({"sessionID": session, "timelineID": 1, "mode": 1}),
    );
    conn.bad(json!("ReleaseSession"), json!({"sessionID": session}));
    conn.bad(json!("StopProfiler"), json!({"sessionID": session + 7}));
    conn.ok("StopProfiler", json!({"sessionID": session}));
    conn.bad(json!(2), json!({"sessionID": session}));
    // Unknown timeline, event, mode, type.
    conn.bad(
        json!("GetEvents"),
        json!({"sessionID": session, "timelineID": 99, "mode": 1}),
    );
    conn.bad(
        json!("GetEvents"),
        json!({"sessionID": session, "timelineID": 1, "mode": 1, "eventID": 999999}),
    );
    conn.bad(
        json!("GetEvents"),
        json!({"sessionID": session, "timelineID": 1, "mode": 9}),
    );
    conn.bad(
        json!("GetEvents"),
        json!({"sessionID": session, "timelineID": 1, "mode": 1, "eventTypeList": ["LAYOUTS"]}),
    );
    // Wrong types, unknown commands and members.
    conn.bad(json!("StartProfiler"), json!({"windowID": "one"}));
    conn.bad(
        json!("StartProfiler"),
        json!({"windowID": 1, "startMode": 7}),
    );
    conn.bad(json!("Fly"), json!({}));
    conn.bad(json!(42), json!({}));
    conn.bad(json!("ListWindows"), json!({"all": true}));
    conn.bad(json!("StopProfiler"), json!([session]));
    // Lines that are no request, once the connection has begun with one: answered.
    for line in ["{not json", "[1,2]", r#"{"command":"Quit"}"#] {
        let r = conn.line(line);
        assert_eq!(r["status"], "BAD_REQUEST", "{line}: {r}");
        assert_eq!(r["tag"], Value::Null);
    }
    // The stopped session lives on while nobody releases it: another client reads it.
    let mut other = service.connect();
    other.events(session, 1, json!({}));
    // A client that leaves mid-session releases its session.
    let mut leaving = service.connect();
    let left = leaving.ok("StartProfiler", json!({"windowID": 1}))["sessionID"]
        .as_u64()
        .unwrap();
    drop(leaving);
    let until = Instant::now() + DEADLINE;
    let next = loop {
        let r = other.call(json!("StartProfiler"), json!({"windowID": 1}));
        if r["status"] == "OK" {
            break r["payload"]["sessionID"].as_u64().unwrap();
        }
        assert!(
            Instant::now() < until,
            "the session of a client gone was kept"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(next > left);
    other.bad(json!("StopProfiler"), json!({"sessionID": left}));
    other.bad(
        json!("GetEvents"),
        json!({"sessionID": left, "timelineID": 1, "mode": 1}),
    );
    other.ok("StopProfiler", json!({"sessionID": next}));
    // Release of the stopped one.
    conn.ok("ReleaseSession", json!({"sessionID": session}));
    conn.bad(
        json!("GetEvents"),
        json!({"sessionID": session, "timelineID": 1, "mode": 1}),
    );
    // An HTTP request is closed at its first line: the Quit in its body is never read.
    let mut http = TcpStream::connect(("127.0.0.1", service.port)).unwrap();
    http.set_read_timeout(Some(DEADLINE)).unwrap();
    let body = "{\"command\":\"Quit\",\"tag\":1}\n";
    let _ = write!(
        http,
        "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let mut answer = Vec::new();
    let _ = http.read_to_end(&mut answer);
    assert!(answer.is_empty(), "{}", String::from_utf8_lossy(&answer));
    conn.ok("ListWindows", json!({}));
    service.quit(&mut conn);
}

#[test]
fn bad_requests_release_and_disconnect() {
    bad_requests_and_disconnects(false);
}

#[test]
fn bad_requests_release_and_disconnect_in_a_content_process() {
    bad_requests_and_disconnects(true);
}

/// A real browser's page on another origin POSTs a Quit to the service's port: the service
/// closes that connection at its first line and goes on.
#[test]
fn a_web_page_cannot_quit_the_service() {
    let chromium = std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    assert!(
        std::path::Path::new(&chromium).exists(),
        "{chromium} is needed (./mach test installs Debian's chromium)"
    );
    let server = common::serve_pages(Some);
    let service = Service::start(false, &[], &page_url(server));
    service.wait_for_line("scope page done");
    // The attacker's page, served by a server of its own, tells it how the POST went.
    let (told, outcome) = mpsc::channel();
    let port = service.port;
    let attacker = common::serve_pages(move |req| {
        let url = req.url().to_owned();
        if url == "/attack.html" {
            let page = format!(
                "<!doctype html><script>\
                 fetch('http://127.0.0.1:{port}/', {{method: 'POST', mode: 'no-cors', \
                   body: '{{\"command\":\"Quit\",\"tag\":1}}\\n'}})\
                   .then(() => 'answered', () => 'refused')\
                   .then((how) => fetch('/outcome?' + how));\
                 </script>"
            );
            let _ = req.respond(
                tiny_http::Response::from_string(page)
                    .with_header(common::header("Content-Type: text/html")),
            );
            return None;
        }
        if let Some(how) = url.strip_prefix("/outcome?") {
            let _ = told.send(how.to_owned());
            let _ = req.respond(tiny_http::Response::empty(204));
            return None;
        }
        Some(req)
    });
    let profile =
        std::env::temp_dir().join(format!("jsprof-scope-chromium-{}", std::process::id()));
    let mut browser = Command::new(&chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            // Headless Chromium loads the page, runs it until its network is idle, and ends.
            "--dump-dom",
            "--virtual-time-budget=10000",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("http://localhost:{attacker}/attack.html"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let how = outcome.recv_timeout(DEADLINE);
    let _ = browser.kill();
    let _ = browser.wait();
    let _ = std::fs::remove_dir_all(&profile);
    // The connection was closed without an answer: the fetch failed.
    assert_eq!(how.as_deref(), Ok("refused"));
    let mut conn = service.connect();
    assert_eq!(
        conn.ok("ListWindows", json!({}))["windowList"][0]["windowID"],
        1
    );
    service.quit(&mut conn);
}

/// SIGTERM ends the browser, also while its first load is held, and jsprof exits 0.
#[test]
fn sigterm_ends_a_paused_service() {
    for multiprocess in [false, true] {
        let server = common::serve_pages(Some);
        let mut service = Service::start(multiprocess, &["--start-paused"], &page_url(server));
        // A client is connected and the window is known: the browser runs.
        let mut conn = service.connect();
        conn.ok("ListWindows", json!({}));
        let pid = nix::unistd::Pid::from_raw(service.child.id() as i32);
        nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
        let until = Instant::now() + DEADLINE;
        let status = loop {
            if let Some(status) = service.child.try_wait().unwrap() {
                break status;
            }
            assert!(Instant::now() < until, "SIGTERM did not end the service");
            std::thread::sleep(Duration::from_millis(20));
        };
        assert!(status.success(), "{status:?}");
    }
}
