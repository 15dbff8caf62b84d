//! `jsprof-servo --webdriver`: jsprof's WebDriver server in front of Servo, spoken to over
//! plain HTTP (the Selenium and WebdriverIO clients are `./mach test-webdriver --engine
//! servo`'s). The spec's Force Sample adds exactly one sample per call to a running
//! session whose `sampleInterval` (1e9 ms, about 11.6 days) leaves no room for a timed
//! one; without a profiler it is a no-op; SIGTERM ends the browser with status 0.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{json, Value};

/// jsprof-servo with its WebDriver server on a free port, and that port.
struct Browser {
    child: Child,
    port: u16,
}

impl Browser {
    fn start() -> Browser {
        let mut child = Command::new(env!("CARGO_BIN_EXE_jsprof-servo"))
            .args(["--webdriver", "0"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start jsprof-servo");
        let stderr = child.stderr.take().expect("stderr");
        let mut lines = BufReader::new(stderr).lines();
        let port = loop {
            let line = lines
                .next()
                .expect("jsprof-servo ended before listening")
                .expect("stderr line");
            if let Some(rest) = line
                .split("WebDriver listening on http://127.0.0.1:")
                .nth(1)
            {
                break rest.trim().parse().expect("a port");
            }
        };
        // The rest of stderr is drained, so that jsprof-servo never blocks on it.
        std::thread::spawn(move || lines.for_each(drop));
        Browser { child, port }
    }

    /// `method path` with `body`: the HTTP status and the JSON answer.
    fn request(&self, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
        let body = body.map(|b| b.to_string()).unwrap_or_default();
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).expect("connect");
        stream
            .set_read_timeout(Some(Duration::from_secs(120)))
            .expect("timeout");
        write!(
            stream,
            "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            self.port,
            body.len()
        )
        .expect("send");
        let mut answer = String::new();
        stream.read_to_string(&mut answer).expect("answer");
        let (head, json) = answer.split_once("\r\n\r\n").expect("HTTP answer");
        let status = head
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .expect("status");
        (status, serde_json::from_str(json).expect("JSON answer"))
    }

    /// A command that must succeed: its value.
    fn ok(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let (status, answer) = self.request(method, path, body);
        assert_eq!(status, 200, "{method} {path}: {answer}");
        answer["value"].clone()
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn force_sample_adds_one_sample_per_call_and_sigterm_ends_the_browser() {
    let dir = std::env::temp_dir().join(format!("jsprof-servo-webdriver-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    std::fs::write(
        dir.join("index.html"),
        "<!doctype html><title>force sample</title><p id=p>here</p>",
    )
    .expect("page");
    std::fs::write(
        dir.join("index.html.headers"),
        "Document-Policy: js-profiling\n",
    )
    .expect("headers");
    let origin = common::serve(dir.clone());

    let browser = Browser::start();
    let session = browser.ok(
        "POST",
        "/session",
        Some(json!({"capabilities": {"alwaysMatch": {"browserName": "jsprof"}}})),
    );
    let id = session["sessionId"].as_str().expect("sessionId").to_owned();
    let s = |rest: &str| format!("/session/{id}/{rest}");
    let script = |body: &str| Some(json!({"script": body, "args": []}));

    // about:blank, no profiler: a no-op.
    assert_eq!(
        browser.ok("POST", &s("forcesample"), Some(json!({}))),
        Value::Null
    );

    browser.ok(
        "POST",
        &s("url"),
        Some(json!({"url": format!("{origin}/index.html")})),
    );
    assert_eq!(browser.ok("GET", &s("title"), None), "force sample");
    let found = browser.ok(
        "POST",
        &s("element"),
        Some(json!({"using": "css selector", "value": "#p"})),
    );
    let element = found[jsprof_webdriver::ELEMENT_KEY]
        .as_str()
        .expect("an element");
    assert_eq!(
        browser.ok("GET", &s(&format!("element/{element}/text")), None),
        "here"
    );

    let interval = browser.ok(
        "POST",
        &s("execute/sync"),
        script("window.p = new Profiler({sampleInterval: 1e9, maxBufferSize: 10}); return p.sampleInterval"),
    );
    assert_eq!(interval, json!(1_000_000_000));
    for _ in 0..3 {
        assert_eq!(
            browser.ok("POST", &s("forcesample"), Some(json!({}))),
            Value::Null
        );
    }
    let samples = browser.ok(
        "POST",
        &s("execute/sync"),
        script("return p.stop().then((trace) => trace.samples.length)"),
    );
    assert_eq!(samples, json!(3));
    // Stopped: no more samples, and Force Sample still answers.
    assert_eq!(
        browser.ok("POST", &s("forcesample"), Some(json!({}))),
        Value::Null
    );

    browser.ok("DELETE", &format!("/session/{id}"), None);
    let (status, answer) = browser.request("GET", "/status", None);
    assert_eq!((status, &answer["value"]["ready"]), (200, &json!(true)));

    let mut browser = browser;
    let pid = browser.child.id().to_string();
    let killed = Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .expect("kill");
    assert!(killed.success());
    let status = browser.child.wait().expect("wait");
    assert_eq!(status.code(), Some(0), "{status:?}");
    let _ = std::fs::remove_dir_all(&dir);
}
