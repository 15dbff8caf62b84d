//! The adversarial suite: pages from `tests/pages/security/`, served by three local origins,
//! try what an attacker would. Each attack has its control (the same-origin or CORS case that
//! must keep working). Whatever a page manages to read it sends to the attacker's server,
//! which records every request: a test fails if it heard anything.
//!
//! Origins: A = `http://127.0.0.1:A` (the page), B = `http://127.0.0.1:B` (another origin,
//! the victim), C = `http://127.0.0.1:C` (the attacker's recorder). `localhost:A` is yet
//! another origin. Routes on every server:
//! - any file of `tests/pages/security/`, with `{{A}}`, `{{B}}`, `{{C}}`, `{{LOCAL}}` (the
//!   `file:` URL of `security/local/`) and `{{q:NAME}}` (query parameter NAME) substituted,
//!   and its `.headers` sidecars;
//! - `?cors` adds `Access-Control-Allow-Origin: *`, `?cors=echo` echoes the request's
//!   `Origin`, `&cred` adds `Access-Control-Allow-Credentials: true`;
//! - `/redirect?to=URL` answers 302 to URL;
//! - `/steal?…` records the request (the attacker).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::thread;

fn security_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/pages/security")
        .canonicalize()
        .unwrap()
}

struct Servers {
    a: u16,
    b: u16,
    stolen: Arc<Mutex<Vec<String>>>,
}

impl Servers {
    fn start() -> Servers {
        let stolen = Arc::new(Mutex::new(Vec::new()));
        let servers: Vec<tiny_http::Server> = (0..3)
            .map(|_| tiny_http::Server::http("127.0.0.1:0").unwrap())
            .collect();
        let ports: Vec<u16> = servers
            .iter()
            .map(|s| s.server_addr().to_ip().unwrap().port())
            .collect();
        let (a, b, c) = (ports[0], ports[1], ports[2]);
        for server in servers {
            let stolen = stolen.clone();
            thread::spawn(move || {
                for req in server.incoming_requests() {
                    let resp = respond(&req, [a, b, c], &stolen);
                    let _ = req.respond(resp);
                }
            });
        }
        Servers { a, b, stolen }
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}/{path}", self.a)
    }

    /// What the attacker's server heard.
    fn stolen(&self) -> Vec<String> {
        self.stolen.lock().unwrap().clone()
    }
}

fn header(h: &str) -> tiny_http::Header {
    h.parse().unwrap()
}

fn query_param(query: &str, name: &str) -> Option<String> {
    url::form_urlencoded::parse(query.as_bytes())
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
}

fn local_url() -> String {
    url::Url::from_directory_path(security_dir().join("local"))
        .unwrap()
        .as_str()
        .trim_end_matches('/')
        .to_owned()
}

fn respond(
    req: &tiny_http::Request,
    [a, b, c]: [u16; 3],
    stolen: &Mutex<Vec<String>>,
) -> tiny_http::Response<std::io::Cursor<Vec<u8>>> {
    let url = req.url().to_owned();
    let (path, query) = url.split_once('?').unwrap_or((&url, ""));
    if path == "/steal" {
        stolen.lock().unwrap().push(url.clone());
        return tiny_http::Response::from_string("ok")
            .with_header(header("Access-Control-Allow-Origin: *"));
    }
    if path == "/redirect" {
        let to = query_param(query, "to").unwrap_or_default();
        return tiny_http::Response::from_string("")
            .with_status_code(302)
            .with_header(header(&format!("Location: {to}")));
    }
    let file = security_dir().join(path.trim_start_matches('/'));
    let Ok(body) = std::fs::read(&file) else {
        return tiny_http::Response::from_string("not found").with_status_code(404);
    };
    let mime = jsprof_net::mime_for(&file).unwrap_or("application/octet-stream");
    let body = if mime.starts_with("text/") {
        let mut text = String::from_utf8(body).unwrap();
        for (k, v) in [("A", a), ("B", b), ("C", c)] {
            text = text.replace(&format!("{{{{{k}}}}}"), &v.to_string());
        }
        text = text.replace("{{LOCAL}}", &local_url());
        while let Some(start) = text.find("{{q:") {
            let end = start + text[start..].find("}}").unwrap();
            let value = query_param(query, &text[start + 4..end]).unwrap_or_default();
            text.replace_range(start..end + 2, &value);
        }
        text.into_bytes()
    } else {
        body
    };
    let mut resp =
        tiny_http::Response::from_data(body).with_header(header(&format!("Content-Type: {mime}")));
    match query_param(query, "cors").as_deref() {
        Some("echo") => {
            let origin = req
                .headers()
                .iter()
                .find(|h| h.field.equiv("Origin"))
                .map(|h| h.value.to_string())
                .unwrap_or_default();
            resp.add_header(header(&format!("Access-Control-Allow-Origin: {origin}")));
        }
        Some(_) => resp.add_header(header("Access-Control-Allow-Origin: *")),
        None => {}
    }
    if query_param(query, "cred").is_some() {
        resp.add_header(header("Access-Control-Allow-Credentials: true"));
    }
    for (name, value) in jsprof_net::sidecar_headers(&file).unwrap().iter() {
        resp.add_header(header(&format!("{name}: {value}")));
    }
    resp
}

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Run {
    fn has(&self, line: &str) -> bool {
        self.stdout.lines().any(|l| l == line)
    }

    fn assert_has(&self, lines: &[&str]) {
        for line in lines {
            assert!(
                self.has(line),
                "no line {line:?} in stdout:\n{}\nstderr:\n{}",
                self.stdout,
                self.stderr
            );
        }
    }

    /// The trace a page printed as `TRACE {json}`.
    fn trace(&self) -> serde_json::Value {
        let line = self
            .stdout
            .lines()
            .find_map(|l| l.strip_prefix("TRACE "))
            .unwrap_or_else(|| panic!("no TRACE in:\n{}\n{}", self.stdout, self.stderr));
        serde_json::from_str(line).unwrap()
    }
}

fn jsprof(page: &str) -> Run {
    jsprof_with(page, &[])
}

fn jsprof_with(page: &str, args: &[&str]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_jsprof"))
        .args([page, "--timeout", "20"])
        .args(args)
        .output()
        .expect("jsprof runs");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The names of a trace's frames.
fn frame_names(trace: &serde_json::Value) -> Vec<String> {
    trace["frames"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn a_web_page_reads_no_local_file() {
    let s = Servers::start();
    let run = jsprof(&s.url("local-files.html"));
    assert_eq!(s.stolen(), Vec::<String>::new(), "stdout:\n{}", run.stdout);
    run.assert_has(&[
        "fetch /etc/passwd refused TypeError",
        "fetch local refused TypeError",
        "fetch redirect refused TypeError",
        "fetch redirect to data refused TypeError",
        "import refused TypeError",
        "import redirect refused TypeError",
        "worker refused SecurityError",
        "script direct refused",
        "script redirect refused",
        "local script ran false",
    ]);
    for id in ["direct", "redirect"] {
        let refused = run
            .stdout
            .lines()
            .any(|l| l.starts_with(&format!("frame {id} refused")));
        assert!(refused, "frame {id}:\n{}", run.stdout);
    }
    assert!(!run.stdout.contains("READ") && !run.stdout.contains("TOP-SECRET"));
    // The loader says why, once per refused load.
    assert!(
        run.stderr
            .contains("only a file: document may load file: URLs"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_file_page_loads_its_own_files() {
    let page = security_dir().join("local/index.html");
    let run = jsprof(page.to_str().unwrap());
    assert_eq!(run.code, 0, "{}", run.stderr);
    run.assert_has(&[
        "classic true",
        "fetch TOP-SECRET-LOCAL-FILE",
        "import TOP-SECRET-LOCAL-MODULE",
        "worker local worker ran function",
        "frame TOP-SECRET-LOCAL-FRAME",
    ]);
}

#[test]
fn fetch_sees_other_origins_only_through_cors() {
    let s = Servers::start();
    let run = jsprof(&s.url("fetch-modes.html"));
    run.assert_has(&[
        "cors refused TypeError",
        // Safelisted headers only: X-Private is not exposed.
        "cors allowed cors 200 body text/javascript no private",
        "no-cors opaque 0 no body no type no private",
        "same-origin refused TypeError",
        "own basic 200 body text/javascript only-for-same-origin",
        "credentials * refused TypeError",
        "credentials exact cors 200 body text/javascript no private",
    ]);
}

#[test]
fn a_cross_origin_frame_offers_only_the_cross_origin_properties() {
    let s = Servers::start();
    let frame = format!("127.0.0.1:{}", s.b);
    let run = jsprof(&s.url(&format!("frames.html?frame={frame}")));
    assert_eq!(s.stolen(), Vec::<String>::new(), "stdout:\n{}", run.stdout);
    run.assert_has(&[
        "parent got ready true true",
        "same proxy true true true true true true",
        "length 1 0 false",
        "document refused SecurityError true",
        "function refused SecurityError true",
        "call refused SecurityError true",
        "Profiler refused SecurityError true",
        "location.href refused SecurityError true",
        "localStorage-like refused SecurityError true",
        "set property refused SecurityError true",
        "define refused SecurityError true",
        "keys ALLOWED ",
        "eval refused SecurityError true",
        "Function refused SecurityError true",
        "constructor refused SecurityError true",
        "then ALLOWED undefined",
        "proto ALLOWED null",
        // postMessage crosses, with the sender's origin and window; the wrong target
        // origin is dropped.
        "child got {\"hello\":\"child\"} true",
        "child reach refused SecurityError",
    ]);
    assert!(!run.stdout.contains("TOP-SECRET"), "{}", run.stdout);
    assert!(
        !run.stdout.contains("to the wrong origin"),
        "{}",
        run.stdout
    );
}

#[test]
fn a_sandboxed_frame_is_another_origin() {
    // The same URL as the control below, but `sandbox` gives its document an opaque origin.
    let s = Servers::start();
    let frame = format!("127.0.0.1:{}", s.a);
    let run = jsprof(&s.url(&format!("frames.html?frame={frame}&attrs=sandbox")));
    assert_eq!(s.stolen(), Vec::<String>::new(), "stdout:\n{}", run.stdout);
    run.assert_has(&[
        // The message comes from origin "null".
        "parent got ready false true",
        "document refused SecurityError true",
        "call refused SecurityError true",
        "child reach refused SecurityError",
    ]);
}

#[test]
fn a_same_origin_frame_is_reachable() {
    let s = Servers::start();
    let frame = format!("127.0.0.1:{}", s.a);
    let run = jsprof(&s.url(&format!("frames.html?frame={frame}")));
    run.assert_has(&[
        "parent got ready true true",
        "same proxy true true true true true true",
        "document ALLOWED TOP-SECRET-CHILD-DOCUMENT",
        "function ALLOWED function",
        "call ALLOWED TOP-SECRET-CHILD-FUNCTION",
        "child got {\"hello\":\"child\"} true",
        "child reach a page reaches into a cross-origin iframe",
    ]);
}

#[test]
fn a_profiler_made_with_a_frames_constructor_profiles_that_frame() {
    let s = Servers::start();
    // Through every capture path: the SIGPROF walk, the interrupt's slot reads, and the
    // public accessors (the fallback, which takes each frame's realm from its script).
    for prefs in [
        &[][..],
        &["--pref", "profiler.signal_sampling=false"],
        &[
            "--pref",
            "profiler.signal_sampling=false",
            "--pref",
            "js.stack_capture_slots=false",
        ],
    ] {
        let run = jsprof_with(&s.url("profiler-realm.html"), prefs);
        run.assert_has(&[
            "child frames true parent frames false",
            "resources [\"profiler-realm-child.html\"]",
        ]);
    }
}

#[test]
fn cross_origin_modules_load_only_with_cors() {
    let s = Servers::start();
    let run = jsprof(&s.url("modules.html?q="));
    run.assert_has(&[
        "module element refused",
        "dynamic import refused TypeError",
        "module runs 0",
    ]);
    assert!(!run.has("static import ran function"), "{}", run.stdout);
    let trace = run.trace();
    assert!(!frame_names(&trace).contains(&"secretModuleWork".to_owned()));
    assert!(!trace.to_string().contains("work.mjs"), "{trace}");
    // The control: the same modules with Access-Control-Allow-Origin.
    let run = jsprof(&s.url("modules.html?q=cors%26"));
    run.assert_has(&[
        "static import ran function",
        "dynamic import ran",
        "module runs 3",
    ]);
    assert!(!run.has("module element refused"), "{}", run.stdout);
    assert!(frame_names(&run.trace()).contains(&"secretModuleWork".to_owned()));
}

#[test]
fn workers_are_same_origin_and_their_cross_origin_imports_are_hidden() {
    let s = Servers::start();
    let run = jsprof(&s.url("workers.html"));
    run.assert_has(&[
        "cross-origin refused SecurityError",
        "cross-origin redirect constructed",
        "cross-origin redirect error event",
        "same-origin says same-origin worker ran",
        "data says from data",
        "blob says from blob",
        // secretWork (cross-origin, no-cors even with CORS headers) hidden; visibleWork shown.
        "worker trace false true false",
    ]);
}

/// Runs `muted.html` with `src`, `attr` and `pre` and returns what it printed.
fn muted(s: &Servers, host: &str, src: &str, attr: &str, pre: &str) -> Run {
    let q = |v: &str| url::form_urlencoded::byte_serialize(v.as_bytes()).collect::<String>();
    jsprof(&format!(
        "http://{host}:{}/muted.html?src={}&attr={}&pre={}",
        s.a,
        q(src),
        q(attr),
        q(pre)
    ))
}

fn assert_hidden(run: &Run, why: &str) {
    assert!(
        run.stdout.lines().any(|l| l.starts_with("script ran ")),
        "{why}: the classic script did not run:\n{}\n{}",
        run.stdout,
        run.stderr
    );
    let trace = run.trace();
    let scripts: Vec<&str> = trace["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap().split('?').next().unwrap())
        .collect();
    assert!(
        !frame_names(&trace).contains(&"secretWork".to_owned())
            && !scripts.iter().any(|r| r.ends_with("/work.js")),
        "{why}: {trace}"
    );
    // Not vacuous: at least one sample fell while the muted script's function ran under the
    // page's `profile()`, and shows `profile` on top (the muted frame filtered out). At least
    // one, not a share of the 10 intervals the loop covers: on a loaded machine the thread
    // may have the CPU for only part of them.
    assert!(
        samples_topped_by(&trace, "profile") >= 1,
        "{why}: no sample inside profile(): {trace}"
    );
}

/// How many of the trace's samples have a stack whose top frame is named `name`.
fn samples_topped_by(trace: &serde_json::Value, name: &str) -> usize {
    let frames = trace["frames"].as_array().unwrap();
    let stacks = trace["stacks"].as_array().unwrap();
    trace["samples"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["stackId"].as_u64())
        .filter(|&id| {
            let frame = stacks[id as usize]["frameId"].as_u64().unwrap();
            frames[frame as usize]["name"].as_str() == Some(name)
        })
        .count()
}

fn assert_visible(run: &Run, why: &str) {
    run.assert_has(&["script ran 1"]);
    let trace = run.trace();
    assert!(
        frame_names(&trace).contains(&"secretWork".to_owned()),
        "{why}: {trace}"
    );
}

#[test]
fn a_no_cors_cross_origin_script_stays_muted() {
    let s = Servers::start();
    let (a, b) = (s.a, s.b);
    let other = format!("http://127.0.0.1:{b}/work.js");
    // Fetched before as a CORS module (which the server allows) or by an iframe.
    let cors = format!("{other}?cors");
    assert_hidden(
        &muted(&s, "127.0.0.1", &cors, "", "import"),
        "after import()",
    );
    assert_hidden(
        &muted(&s, "127.0.0.1", &other, "", "iframe"),
        "after an iframe",
    );
    // Same-origin -> cross-origin -> same-origin redirects: opaque all the same.
    let back = format!("http://127.0.0.1:{a}/work.js");
    let chain = format!("/redirect?to=http://127.0.0.1:{b}/redirect?to={back}");
    assert_hidden(&muted(&s, "127.0.0.1", &chain, "", ""), "redirect chain");
    // Another spelling of the host is another origin; userinfo changes nothing.
    let localhost = format!("http://localhost:{a}/work.js");
    assert_hidden(&muted(&s, "127.0.0.1", &localhost, "", ""), "localhost");
    let userinfo = format!("http://user:pw@127.0.0.1:{b}/work.js");
    assert_hidden(&muted(&s, "127.0.0.1", &userinfo, "", ""), "userinfo");
    // Controls: same-origin (also with userinfo), and CORS.
    assert_visible(&muted(&s, "127.0.0.1", "/work.js", "", ""), "same-origin");
    let same_userinfo = format!("http://user@127.0.0.1:{a}/work.js");
    assert_visible(
        &muted(&s, "127.0.0.1", &same_userinfo, "", ""),
        "same-origin userinfo",
    );
    assert_visible(
        &muted(&s, "127.0.0.1", &cors, "anonymous", ""),
        "crossorigin + ACAO",
    );
}

#[test]
fn credentialed_cors_needs_the_exact_origin_and_allow_credentials() {
    let s = Servers::start();
    let star = format!("http://127.0.0.1:{}/work.js?cors", s.b);
    let run = muted(&s, "127.0.0.1", &star, "use-credentials", "");
    run.assert_has(&["script refused"]);
    let exact = format!("http://127.0.0.1:{}/work.js?cors=echo&cred", s.b);
    assert_visible(
        &muted(&s, "127.0.0.1", &exact, "use-credentials", ""),
        "use-credentials with the exact origin",
    );
    let no_cred = format!("http://127.0.0.1:{}/work.js?cors=echo", s.b);
    muted(&s, "127.0.0.1", &no_cred, "use-credentials", "").assert_has(&["script refused"]);
}

#[test]
fn the_engines_own_work_is_invisible_to_the_page() {
    let s = Servers::start();
    let run = jsprof(&s.url("internals.html"));
    run.assert_has(&[
        "construct nothing",
        "buffer full nothing",
        "stop nothing",
        "await nothing",
        "trace frames,resources,samples,stacks 2 1",
    ]);
}
