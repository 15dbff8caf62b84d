//! `jsprof-collector top --source-maps` against real HTTP servers on 127.0.0.1: each rule
//! of the fetch policy (src/sourcemaps.rs) with a case it lets through and one it refuses,
//! the refusals seen both in the warnings and in the servers' logs (nothing was fetched).

mod common;

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};

use common::{http, Collector, BIN};

/// The minified script: `function a(b){…}`, its `(` at line 1, column 11.
const SCRIPT: &str = "function a(b){return b*2}\n//# sourceMappingURL=app.min.js.map\n";
/// `a` at generated column 9 is `renderList` at line 4, column 10 of src/list.js.
const MAP: &str =
    r#"{"version":3,"sources":["src/list.js"],"names":["renderList"],"mappings":"SAGSA"}"#;

/// A server on 127.0.0.1 answering from `routes` (path → raw response), recording the
/// paths asked for. A path with no route is held open without an answer.
struct Server {
    addr: SocketAddr,
    log: Arc<Mutex<Vec<String>>>,
}

impl Server {
    fn start(routes: HashMap<&'static str, String>) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let log = Arc::new(Mutex::new(Vec::new()));
        let seen = log.clone();
        std::thread::spawn(move || {
            let mut held: Vec<TcpStream> = Vec::new();
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut first = String::new();
                if reader.read_line(&mut first).is_err() {
                    continue;
                }
                loop {
                    let mut l = String::new();
                    if reader.read_line(&mut l).map_or(true, |n| n == 0) || l == "\r\n" {
                        break;
                    }
                }
                let path = first.split(' ').nth(1).unwrap_or("").to_owned();
                seen.lock().unwrap().push(path.clone());
                match routes.get(path.as_str()) {
                    Some(answer) => {
                        let _ = stream.write_all(answer.as_bytes());
                    }
                    None => held.push(stream),
                }
            }
        });
        Server { addr, log }
    }

    fn origin(&self) -> String {
        format!("http://{}", self.addr)
    }

    fn asked(&self) -> Vec<String> {
        self.log.lock().unwrap().clone()
    }
}

fn ok(body: &str, extra: &str) -> String {
    format!(
        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n{extra}\r\n{body}",
        body.len()
    )
}

/// A trace with one frame `a` (line 1, column 11) per script, each its own stack.
fn trace(scripts: &[String]) -> serde_json::Value {
    let n = scripts.len();
    let frames: Vec<_> = (0..n)
        .map(|i| serde_json::json!({"name": format!("a{i}"), "resourceId": i, "line": 1, "column": 11}))
        .collect();
    let stacks: Vec<_> = (0..n).map(|i| serde_json::json!({"frameId": i})).collect();
    let samples: Vec<_> = (0..2 * n)
        .map(|i| serde_json::json!({"stackId": i % n, "timestamp": 10.0 * i as f64}))
        .collect();
    serde_json::json!({"frames": frames, "resources": scripts, "stacks": stacks, "samples": samples})
}

/// `top --source-maps` with `prefs`: (stdout, stderr).
fn top(store: &Path, prefs: &[String]) -> (String, String) {
    let mut cmd = Command::new(BIN);
    cmd.args(["top", "--store"]).arg(store).arg("--source-maps");
    for p in prefs {
        cmd.arg("--pref").arg(p);
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// The row of `top`'s table for a function or resource containing `what`.
fn row<'a>(table: &'a str, what: &str) -> &'a str {
    table
        .lines()
        .find(|l| l.contains(what))
        .unwrap_or_else(|| panic!("no row with {what} in {table}"))
}

#[test]
fn source_maps_are_fetched_only_as_the_policy_allows() {
    let elsewhere = Server::start(HashMap::from([
        ("/app.min.js", ok(SCRIPT, "")),
        ("/app.min.js.map", ok(MAP, "")),
    ]));
    let big_map = format!(
        r#"{{"version":3,"sources":["src/list.js"],"names":["renderList"],"mappings":"SAGSA","x":"{}"}}"#,
        "x".repeat(8000)
    );
    let main = Server::start(HashMap::from([
        ("/app.min.js", ok(SCRIPT, "")),
        ("/app.min.js.map", ok(MAP, "")),
        (
            "/moved.js",
            format!(
                "HTTP/1.1 302 Found\r\nLocation: {}/app.min.js\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                elsewhere.origin()
            ),
        ),
        (
            "/maps-elsewhere.js",
            ok(
                "function a(b){return b*2}\n",
                &format!("SourceMap: {}/app.min.js.map\r\n", elsewhere.origin()),
            ),
        ),
        (
            "/big.js",
            ok("function a(b){return b*2}\n//# sourceMappingURL=big.js.map\n", ""),
        ),
        ("/big.js.map", ok(&big_map, "")),
    ]));
    let slow = Server::start(HashMap::new());
    let dir = tempfile::tempdir().unwrap();
    let file_script = dir.path().join("app.min.js");
    std::fs::write(&file_script, SCRIPT).unwrap();
    std::fs::write(dir.path().join("app.min.js.map"), MAP).unwrap();
    let port = main.addr.port();
    let scripts = vec![
        format!("{}/app.min.js", main.origin()), // a0: allowed, loopback allowed
        format!("http://localhost:{port}/app.min.js"), // a1: a name that resolves to loopback
        format!("{}/moved.js", main.origin()),   // a2: redirected to another origin
        format!("{}/maps-elsewhere.js", main.origin()), // a3: its map on another origin
        format!("{}/big.js", main.origin()),     // a4: a map over max_bytes
        format!("{}/slow.js", slow.origin()),    // a5: never answered
        format!("file://{}", file_script.display()), // a6: file:
        format!("{}/app.min.js", elsewhere.origin()), // a7: not an allowed origin
    ];
    let store = tempfile::tempdir().unwrap();
    {
        let c = Collector::start(store.path(), &[]);
        let body = serde_json::to_vec(&trace(&scripts)).unwrap();
        let (status, _, text) = http(c.addr, "POST", "/v1/profiles", &[], &body);
        assert_eq!(status, 202, "{text}");
    }
    let allowed = format!(
        "sourcemaps.allowed_origins={},http://localhost:{port},{}",
        main.origin(),
        slow.origin()
    );
    let limits = [
        "sourcemaps.max_bytes=4096".to_owned(),
        "sourcemaps.timeout_ms=1000".to_owned(),
    ];

    // Loopback explicitly allowed: what the other rules let through is mapped.
    let mut prefs = vec![
        allowed.clone(),
        "sourcemaps.allow_private_addresses=true".to_owned(),
    ];
    prefs.extend(limits.iter().cloned());
    let (table, warnings) = top(store.path(), &prefs);
    let mapped = row(&table, &format!("{}/src/list.js", main.origin()));
    assert!(mapped.contains("| renderList "), "{mapped}");
    assert!(mapped.contains("| 4    | 10 "), "{mapped}");
    let by_name = row(&table, &format!("http://localhost:{port}/src/list.js"));
    assert!(by_name.contains("| renderList "), "{by_name}");
    for (frame, why) in [
        ("a2", "redirect refused"),
        ("a3", "is not an allowed origin"),
        ("a4", "over 4096 bytes"),
        ("a5", "timed out"),
        ("a6", "file: is not fetched (http and https only)"),
        ("a7", "is not an allowed origin"),
    ] {
        let r = row(&table, &format!("| {frame} "));
        assert!(r.contains("| 1    | 11 "), "{frame} was mapped: {r}");
        let i: usize = frame[1..].parse().unwrap();
        let w = row(&warnings, &format!("{}: source map not used", scripts[i]));
        assert!(w.contains(why), "{frame}: {w}");
    }
    // What was refused before a request was never asked for.
    assert_eq!(elsewhere.asked(), Vec::<String>::new());
    let asked = main.asked();
    for path in [
        "/app.min.js",
        "/app.min.js.map",
        "/moved.js",
        "/maps-elsewhere.js",
        "/big.js",
        "/big.js.map",
    ] {
        assert!(
            asked.iter().any(|p| p == path),
            "{path} not asked: {asked:?}"
        );
    }
    assert_eq!(slow.asked(), vec!["/slow.js".to_owned()]);

    // Without the pref: neither the loopback address nor a name resolving to it is
    // connected to, although their origins are allowed.
    let before = main.asked().len();
    let mut prefs = vec![allowed];
    prefs.extend(limits.iter().cloned());
    let (table, warnings) = top(store.path(), &prefs);
    assert!(!table.contains("renderList"), "{table}");
    let literal = row(&warnings, &format!("{}: source map not used", scripts[0]));
    assert!(
        literal.contains("127.0.0.1 is a loopback, private or link-local address"),
        "{literal}"
    );
    let resolved = row(&warnings, &format!("{}: source map not used", scripts[1]));
    assert!(resolved.contains("localhost resolves to"), "{resolved}");
    assert!(
        resolved.contains("loopback, private or link-local"),
        "{resolved}"
    );
    assert_eq!(main.asked().len(), before, "{:?}", main.asked());

    // No allowed origin at all (the default): nothing is fetched.
    let (table, warnings) = top(store.path(), &[]);
    assert!(!table.contains("renderList"), "{table}");
    assert_eq!(
        warnings.matches("is not an allowed origin").count(),
        7,
        "{warnings}"
    );
    assert_eq!(main.asked().len(), before);
}
