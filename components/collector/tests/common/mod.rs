//! What the collector's integration tests share: `jsprof-collector collect` started as the
//! real binary on a free port, `jsprof-collector query`, and one HTTP request.

#![allow(dead_code)]

pub mod cluster;
pub mod maps;
pub mod s3;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use jsprof_profiler::ProfilerTrace;
use jsprof_trace_fixtures::{self as fixtures, frame, sample};

pub const BIN: &str = env!("CARGO_BIN_EXE_jsprof-collector");

pub struct Collector {
    pub child: Child,
    pub addr: SocketAddr,
}

impl Collector {
    pub fn start(store: &Path, args: &[&str]) -> Collector {
        let mut c = Command::new(BIN);
        c.args(["collect", "--listen", "127.0.0.1:0", "--store"])
            .arg(store)
            .args(args);
        Collector::spawn(c)
    }

    /// `collect` with `args` (its `--store` among them) and `env` in its environment.
    pub fn start_with(args: &[&str], env: &[(String, String)]) -> Collector {
        let mut c = Command::new(BIN);
        c.args(["collect", "--listen", "127.0.0.1:0"])
            .args(args)
            .envs(env.iter().map(|(k, v)| (k, v)));
        Collector::spawn(c)
    }

    fn spawn(mut c: Command) -> Collector {
        let mut child = c
            .stdout(Stdio::piped())
            .spawn()
            .expect("start jsprof-collector");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let addr = line
            .trim()
            .strip_prefix("jsprof: collecting on http://")
            .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
            .parse()
            .unwrap();
        Collector { child, addr }
    }

    pub fn kill9(&mut self) {
        // SIGKILL: no chance to flush or compact.
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }
}

impl Drop for Collector {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `jsprof-collector ARGS`, which must succeed: its standard output.
pub fn run(args: &[&str]) -> String {
    let out = Command::new(BIN).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The one number a query's table prints (`SELECT count(*) AS n …`).
pub fn count_of(out: &str) -> u64 {
    out.lines()
        .filter_map(|l| l.trim().strip_prefix('|')?.strip_suffix('|'))
        .find_map(|cell| cell.trim().parse().ok())
        .unwrap_or_else(|| panic!("no count in {out}"))
}

pub fn query(store: &Path, sql: &str) -> String {
    run(&["query", "--store", store.to_str().unwrap(), sql])
}

/// (function, samples) of `top`'s table, in its order.
pub fn top_samples(table: &str) -> Vec<(String, i64)> {
    table
        .lines()
        .filter_map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            (cells.len() > 9).then(|| (cells[1].to_owned(), cells[9].parse().ok()))
        })
        .filter_map(|(f, n)| Some((f, n?)))
        .collect()
}

/// One HTTP/1.1 request on a fresh connection: (status, headers lowercased, body).
pub fn http(
    addr: SocketAddr,
    method: &str,
    target: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> (u16, Vec<(String, String)>, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    let mut head = format!(
        "{method} {target} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    s.write_all(head.as_bytes()).unwrap();
    s.write_all(body).unwrap();
    let mut out = Vec::new();
    s.read_to_end(&mut out).unwrap();
    let text = String::from_utf8_lossy(&out).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let mut lines = head.lines();
    let status = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers = lines
        .filter_map(|l| l.split_once(": "))
        .map(|(k, v)| (k.to_ascii_lowercase(), v.to_owned()))
        .collect();
    (status, headers, body.to_owned())
}

pub fn get<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

/// A trace of a page's `main → render → {layout, paint, style}`: `leaves` samples in
/// layout, paint and style (interleaved, 10 ms apart), then `idle` samples without a stack.
pub fn field_trace(leaves: [usize; 3], idle: usize) -> serde_json::Value {
    let mut stacks = Vec::new();
    let most = leaves.iter().copied().max().unwrap_or(0);
    for i in 0..most {
        for (leaf, n) in (2u64..).zip(leaves) {
            if i < n {
                stacks.push(Some(leaf));
            }
        }
    }
    stacks.extend((0..idle).map(|_| None));
    let trace = ProfilerTrace {
        frames: vec![
            frame("main", Some(0), Some(1), Some(10)),
            frame("render", Some(0), Some(5), Some(17)),
            frame("layout", Some(1), Some(9), Some(3)),
            frame("paint", Some(1), Some(20), Some(3)),
            frame("style", Some(1), Some(30), Some(3)),
        ],
        resources: vec![
            "https://example.test/app.js".into(),
            "https://example.test/lib.js".into(),
        ],
        stacks: fixtures::stacks(&[None, Some(0), Some(1), Some(1), Some(1)]),
        samples: (0u32..)
            .zip(stacks)
            .map(|(i, stack)| sample(50.0 + 10.0 * f64::from(i), stack))
            .collect(),
    };
    serde_json::to_value(&trace).unwrap()
}

/// Posts `trace` to jsprof's intake with its metadata; `time_origin` in ms since the epoch.
pub fn post_trace(
    addr: SocketAddr,
    key: Option<&str>,
    trace: &serde_json::Value,
    release: &str,
    page_url: &str,
    user_agent: &str,
    time_origin: f64,
) {
    let body = serde_json::to_vec(&serde_json::json!({
        "trace": trace,
        "pageUrl": page_url,
        "release": release,
        "userAgent": user_agent,
        "timeOrigin": time_origin,
    }))
    .unwrap();
    let mut headers = vec![("Content-Type", "application/json")];
    if let Some(k) = key {
        headers.push(("X-Jsprof-Key", k));
    }
    let (status, _, answer) = http(addr, "POST", "/v1/profiles", &headers, &body);
    assert_eq!(status, 202, "{answer}");
}

/// (function, samples) of each of `rows`, top's rows as JSON (the API's, the page's).
pub fn function_samples(rows: &serde_json::Value) -> Vec<(String, i64)> {
    rows.as_array()
        .unwrap_or_else(|| panic!("not top's rows: {rows}"))
        .iter()
        .map(|f| {
            (
                f["function"].as_str().unwrap().to_owned(),
                f["samples"].as_i64().unwrap(),
            )
        })
        .collect()
}

/// 2026-11-26 00:00 UTC, in ms since the epoch.
pub const DAY: f64 = 1_795_651_200_000.0;

/// A trace as a page's `profiler.stop()` gives it: `n` samples 10 ms apart over a
/// three-deep stack, the leaf alternating between two functions.
pub fn trace(n: usize) -> serde_json::Value {
    field_trace([n - n / 2, n / 2, 0], 0)
}

/// jsprof's intake's envelope of [`trace`]`(n)`, with metadata.
pub fn envelope(session: &str, release: &str, n: usize) -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({
        "trace": trace(n),
        "pageUrl": "https://example.test/index.html",
        "release": release,
        "session": session,
        "timeOrigin": DAY,
        "labels": {"page": "home"}
    }))
    .unwrap()
}

/// Posts jsprof's envelope `envelope` (trace, metadata, entries) as JSON: it must be
/// accepted.
pub fn post_envelope(addr: SocketAddr, envelope: &serde_json::Value) {
    let body = serde_json::to_vec(envelope).unwrap();
    let (status, _, answer) = http(
        addr,
        "POST",
        "/v1/profiles",
        &[("Content-Type", "application/json")],
        &body,
    );
    assert_eq!(status, 202, "{answer}");
}

/// Runs `node tests/page/SCRIPT ARGS` (headless Chromium on the page at `/`, through
/// playwright-core): what it printed, as JSON. Debian's chromium (or `$CHROMIUM`) and
/// playwright-core in `$JSPROF_PAGE_TOOLS` are needed (`./mach test` installs both).
pub fn drive_page(script: &str, args: &[&str]) -> serde_json::Value {
    let (chromium, tools) = (chromium(), page_tools());
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/page")
        .join(script);
    let out = Command::new("node")
        .arg(script)
        .args(args)
        .env("JSPROF_PAGE_TOOLS", &tools)
        .env("CHROMIUM", &chromium)
        .output()
        .expect("node (./mach test installs it)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Debian's chromium for the page tests (`CHROMIUM` overrides it), which must be there.
pub fn chromium() -> String {
    let chromium = std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    assert!(
        Path::new(&chromium).exists(),
        "{chromium} is needed (./mach test installs Debian's chromium)"
    );
    chromium
}

/// Where playwright-core is installed for the page tests (`JSPROF_PAGE_TOOLS`), which
/// must be there.
pub fn page_tools() -> std::path::PathBuf {
    let tools = std::env::var_os("JSPROF_PAGE_TOOLS").map_or_else(
        || {
            std::path::PathBuf::from(std::env::var_os("HOME").expect("HOME"))
                .join(".cache/jsprof/collector-page-tools")
        },
        std::path::PathBuf::from,
    );
    assert!(
        tools
            .join("node_modules/playwright-core/package.json")
            .exists(),
        "playwright-core is needed in {} (./mach test installs it)",
        tools.display()
    );
    tools
}
