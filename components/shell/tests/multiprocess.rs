//! Several pages at once, and content processes (`jsprof -M`): pages profiled at the same
//! time each get their whole trace, from a sampler of their own process with `-M` (of the
//! one process without); each page's lines keep their order and say their page; a content
//! process that crashes or is killed is one line while the other pages finish and are
//! written; a content process dies with its browser; `--timeout` and the memory limit are
//! each content's; WebDriver drives a content process per navigation.
//!
//! The pages (`tests/pages/multiprocess/`) are served by a server here whose `/barrier`
//! answers once every page of a test has reached it (so they surely run at once) and whose
//! `/hold` answers when the test says (so a page surely runs while the test acts). The runs
//! take turns, so that no test's pages compete with another's for the two cores.

mod common;

use common::{pages, spawn_reading_lines};
use std::collections::{HashMap, HashSet};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command};
use std::sync::{mpsc, Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// How long a test waits for a state it expects (a line, a process gone): far beyond need,
/// for a loaded machine.
const WAIT: Duration = Duration::from_secs(120);

/// `--timeout` of runs that end by themselves: never reached.
const LONG: &str = "300";

const ENV: &str = "JSPROF_MULTIPROCESS";

/// The test server: `tests/pages` (HTML with `Document-Policy: js-profiling`), plus
/// `/barrier?k=KEY&n=N`, answered (`go`) once N requests with that key have arrived, and
/// `/hold?k=KEY`, answered (`go`) once the test releases KEY. Each request has a thread.
struct Server {
    port: u16,
    state: Arc<(Mutex<Gates>, Condvar)>,
}

#[derive(Default)]
struct Gates {
    arrived: HashMap<String, usize>,
    released: HashSet<String>,
}

impl Server {
    fn start() -> Server {
        let server = tiny_http::Server::http("127.0.0.1:0").unwrap();
        let port = server.server_addr().to_ip().unwrap().port();
        let state: Arc<(Mutex<Gates>, Condvar)> = Arc::default();
        let gates = state.clone();
        std::thread::spawn(move || {
            for request in server.incoming_requests() {
                let gates = gates.clone();
                std::thread::spawn(move || answer(request, &gates));
            }
        });
        Server { port, state }
    }

    /// The URL of `multiprocess/PAGE` with the gates' key and count in its query.
    fn url(&self, page: &str, key: &str, n: usize) -> String {
        format!(
            "http://127.0.0.1:{}/multiprocess/{page}?k={key}&n={n}",
            self.port
        )
    }

    fn release(&self, key: &str) {
        let (gates, changed) = &*self.state;
        gates.lock().unwrap().released.insert(key.to_owned());
        changed.notify_all();
    }
}

fn answer(request: tiny_http::Request, gates: &(Mutex<Gates>, Condvar)) {
    let url = request.url().to_owned();
    let (path, query) = url.split_once('?').unwrap_or((&url, ""));
    let param = |name: &str| {
        query
            .split('&')
            .find_map(|kv| kv.strip_prefix(&format!("{name}=")))
            .unwrap_or("")
            .to_owned()
    };
    let (lock, changed) = gates;
    let wait = |done: &dyn Fn(&Gates) -> bool| {
        let gates = lock.lock().unwrap();
        let (gates, timeout) = changed
            .wait_timeout_while(gates, WAIT, |g| !done(g))
            .unwrap();
        drop(gates);
        if timeout.timed_out() {
            "timed out"
        } else {
            "go"
        }
    };
    let body = match path {
        "/barrier" => {
            let (key, n) = (param("k"), param("n").parse::<usize>().unwrap());
            *lock.lock().unwrap().arrived.entry(key.clone()).or_default() += 1;
            changed.notify_all();
            wait(&|g| g.arrived.get(&key).copied().unwrap_or(0) >= n)
        }
        "/hold" => {
            let key = param("k");
            wait(&|g| g.released.contains(&key))
        }
        _ => {
            let file = pages().join(path.trim_start_matches('/'));
            let Ok(bytes) = std::fs::read(&file) else {
                let _ = request.respond(tiny_http::Response::empty(404));
                return;
            };
            let mime = jsprof_net::mime_for(&file).unwrap_or("application/octet-stream");
            let response = tiny_http::Response::from_data(bytes)
                .with_header(header(&format!("Content-Type: {mime}")))
                .with_header(header("Document-Policy: js-profiling"));
            let _ = request.respond(response);
            return;
        }
    };
    let _ = request.respond(tiny_http::Response::from_string(body));
}

fn header(line: &str) -> tiny_http::Header {
    line.parse().unwrap()
}

/// A running `jsprof` whose stdout and stderr lines are read as they come.
struct Jsprof {
    child: Child,
    started: Instant,
    stdout: mpsc::Receiver<String>,
    stderr: mpsc::Receiver<String>,
    out: Vec<String>,
    err: Vec<String>,
}

/// How a run ended.
struct Ended {
    code: Option<i32>,
    signal: Option<i32>,
    out: Vec<String>,
    err: Vec<String>,
    took: Duration,
}

impl Ended {
    fn says(&self, line: &str) -> bool {
        self.out.iter().chain(&self.err).any(|l| l == line)
    }

    fn dump(&self) -> String {
        format!(
            "exit {:?} signal {:?}\nstdout:\n{}\nstderr:\n{}",
            self.code,
            self.signal,
            self.out.join("\n"),
            self.err.join("\n")
        )
    }

    /// The `--profile-stats` line of page N (`[N] {…}`).
    fn stats(&self, page: usize) -> Value {
        let prefix = format!("[{page}] {{");
        let line = self
            .err
            .iter()
            .find(|l| l.starts_with(&prefix))
            .unwrap_or_else(|| panic!("no stats of page {page}\n{}", self.dump()));
        serde_json::from_str(&line[prefix.len() - 1..]).unwrap()
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mode {
    /// `-M`.
    Processes,
    /// Without `-M`, and without the environment asking for it.
    Threads,
}

fn spawn(mode: Mode, args: &[&str]) -> Jsprof {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_jsprof"));
    if mode == Mode::Processes {
        cmd.arg("-M");
    } else {
        cmd.env_remove(ENV);
    }
    let (child, stdout, stderr) = spawn_reading_lines(cmd.args(args));
    Jsprof {
        child,
        started: Instant::now(),
        stdout,
        stderr,
        out: Vec::new(),
        err: Vec::new(),
    }
}

impl Jsprof {
    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Reads lines until one of stdout or stderr (`on_stderr`) is `line`.
    fn wait_for(&mut self, on_stderr: bool, line: &str) {
        self.wait_until(on_stderr, line, |l| l == line);
    }

    /// Reads lines until one of stdout or stderr (`on_stderr`) starts with `prefix`: that
    /// line.
    fn wait_for_prefix(&mut self, on_stderr: bool, prefix: &str) -> String {
        self.wait_until(on_stderr, prefix, |l| l.starts_with(prefix))
    }

    fn wait_until(&mut self, on_stderr: bool, line: &str, is: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + WAIT;
        loop {
            let (rx, seen) = if on_stderr {
                (&self.stderr, &mut self.err)
            } else {
                (&self.stdout, &mut self.out)
            };
            if let Some(found) = seen.iter().find(|l| is(l)) {
                return found.clone();
            }
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left.min(Duration::from_millis(100))) {
                Ok(l) => seen.push(l),
                Err(mpsc::RecvTimeoutError::Timeout) if Instant::now() < deadline => {}
                _ => panic!(
                    "no {line:?} on {}\nstdout:\n{}\nstderr:\n{}",
                    if on_stderr { "stderr" } else { "stdout" },
                    self.out.join("\n"),
                    self.err.join("\n")
                ),
            }
        }
    }

    /// Waits for the process to end (at most [`WAIT`]) and reads what it left.
    fn finish(mut self) -> Ended {
        let deadline = Instant::now() + WAIT;
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            // Its output is read meanwhile, so that a full pipe never holds it up.
            if let Ok(l) = self.stdout.recv_timeout(Duration::from_millis(20)) {
                self.out.push(l);
            }
            assert!(Instant::now() < deadline, "jsprof did not end");
        };
        let took = self.started.elapsed();
        self.out.extend(self.stdout.iter());
        self.err.extend(self.stderr.iter());
        use std::os::unix::process::ExitStatusExt;
        Ended {
            code: status.code(),
            signal: status.signal(),
            out: self.out,
            err: self.err,
            took,
        }
    }
}

/// The processes whose parent is `pid`, with their command lines (arguments joined by
/// spaces), from /proc.
fn children(pid: u32) -> Vec<(u32, String)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(child) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{child}/stat")) else {
            continue;
        };
        // pid (comm) state ppid …: comm may hold spaces and parentheses.
        let Some(after) = stat.rsplit_once(')').map(|(_, a)| a) else {
            continue;
        };
        let ppid: u32 = after.split_whitespace().nth(1).unwrap().parse().unwrap();
        if ppid == pid {
            let cmdline = std::fs::read(format!("/proc/{child}/cmdline")).unwrap_or_default();
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            found.push((child, cmdline));
        }
    }
    found
}

/// The page number a content process's command line gives (`--content-page N`).
fn content_page(cmdline: &str) -> Option<usize> {
    let words: Vec<&str> = cmdline.split_whitespace().collect();
    let at = words.iter().position(|w| *w == "--content-page")?;
    words.get(at + 1)?.parse().ok()
}

/// The content process of page N of `browser` (1-based, as `--content-page` says), once it
/// is there.
fn content_process(browser: u32, page: usize) -> u32 {
    let deadline = Instant::now() + WAIT;
    loop {
        if let Some((pid, _)) = children(browser)
            .into_iter()
            .find(|(_, cmd)| content_page(cmd) == Some(page))
        {
            return pid;
        }
        assert!(
            Instant::now() < deadline,
            "no content process for page {page}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether process `pid` has ended (gone, or a zombie nobody has waited for yet).
fn ended(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, a)| a.split_whitespace().next())
            .is_some_and(|state| state == "Z" || state == "X"),
    }
}

/// The `--trace-out` array at `path`.
fn traces(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap();
    serde_json::from_str::<Value>(&text)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

/// The names of the frames of `trace`'s samples, one set per sample with a stack.
fn sampled_names(trace: &Value) -> Vec<HashSet<String>> {
    let frames = trace["frames"].as_array().unwrap();
    let stacks = trace["stacks"].as_array().unwrap();
    let mut out = Vec::new();
    for sample in trace["samples"].as_array().unwrap() {
        let Some(mut stack) = sample["stackId"].as_u64() else {
            continue;
        };
        let mut names = HashSet::new();
        loop {
            let s = &stacks[stack as usize];
            let frame = &frames[s["frameId"].as_u64().unwrap() as usize];
            names.insert(frame["name"].as_str().unwrap_or("").to_owned());
            match s["parentId"].as_u64() {
                Some(parent) => stack = parent,
                None => break,
            }
        }
        out.push(names);
    }
    out
}

/// The trace whose resources include `page`.
fn trace_of<'a>(traces: &'a [Value], page: &str) -> &'a Value {
    traces
        .iter()
        .find(|t| {
            t["resources"]
                .as_array()
                .unwrap()
                .iter()
                .any(|r| r.as_str().unwrap().contains(page))
        })
        .unwrap_or_else(|| panic!("no trace of {page}"))
}

/// alpha.html and beta.html, profiled at once (they meet at the barrier before they spin):
/// each trace is its page's alone and whole (every sample of the spin has its function),
/// and the --profile-stats lines say where each page and its sampler thread ran.
fn two_profiled_pages(mode: Mode) -> (Ended, Vec<Value>, u32) {
    let server = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("traces.json");
    let key = format!("two-{mode:?}");
    let (a, b) = (
        server.url("alpha.html", &key, 2),
        server.url("beta.html", &key, 2),
    );
    let run = spawn(
        mode,
        &[
            &a,
            &b,
            "--trace-out",
            out.to_str().unwrap(),
            "--profile-stats",
            "--timeout",
            LONG,
        ],
    );
    let browser = run.pid();
    let end = run.finish();
    assert_eq!(end.code, Some(0), "{}", end.dump());
    assert!(end.says("[1] alpha: go"), "{}", end.dump());
    assert!(end.says("[2] beta: go"), "{}", end.dump());
    let traces = traces(&out);
    assert_eq!(traces.len(), 2, "{}", end.dump());
    for (page, own, other) in [
        ("alpha.html", "alpha", "beta"),
        ("beta.html", "beta", "alpha"),
    ] {
        let trace = trace_of(&traces, page);
        let stacks = sampled_names(trace);
        // 600 ms of spinning at 20 ms: some samples in its function surely, and none of
        // the other page's.
        let own_samples = stacks.iter().filter(|names| names.contains(own)).count();
        assert!(own_samples >= 3, "{page}: {trace}");
        assert!(
            stacks.iter().all(|names| !names.contains(other)),
            "{page}: {trace}"
        );
        let line = format!(
            "[{}] {own}: stopped with {} samples",
            if own == "alpha" { 1 } else { 2 },
            trace["samples"].as_array().unwrap().len()
        );
        assert!(end.says(&line), "{line}\n{}", end.dump());
    }
    (end, traces, browser)
}

#[test]
fn two_pages_profiled_at_once_each_in_its_own_process_with_its_own_sampler() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let (end, _, browser) = two_profiled_pages(Mode::Processes);
    let (one, two) = (end.stats(1), end.stats(2));
    let pids = [one["pid"].as_u64().unwrap(), two["pid"].as_u64().unwrap()];
    assert_ne!(pids[0], pids[1], "{}", end.dump());
    for (stats, pid) in [(&one, pids[0]), (&two, pids[1])] {
        assert_ne!(pid, u64::from(browser), "{}", end.dump());
        // The sampler thread, as it saw itself, ran in the page's own process.
        assert_eq!(
            stats["sampler_thread"]["pid"].as_u64(),
            Some(pid),
            "{stats}"
        );
        assert_ne!(
            stats["sampler_thread"]["tid"].as_u64(),
            Some(pid),
            "{stats}"
        );
        assert!(stats["sampler"]["ticks"].as_u64().unwrap() > 0, "{stats}");
    }
}

#[test]
fn two_pages_profiled_at_once_on_threads_of_one_process_share_its_sampler() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let (end, _, browser) = two_profiled_pages(Mode::Threads);
    let (one, two) = (end.stats(1), end.stats(2));
    for stats in [&one, &two] {
        assert_eq!(stats["pid"].as_u64(), Some(u64::from(browser)), "{stats}");
        assert_eq!(
            stats["sampler_thread"]["pid"].as_u64(),
            Some(u64::from(browser)),
            "{stats}"
        );
    }
    assert_eq!(one["sampler_thread"], two["sampler_thread"]);
}

#[test]
fn each_page_keeps_the_order_of_its_lines_and_says_its_number() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    for mode in [Mode::Processes, Mode::Threads] {
        let end = spawn(
            mode,
            &[
                "multiprocess/count.html",
                "multiprocess/count.html",
                "multiprocess/count.html",
                "--timeout",
                LONG,
            ],
        )
        .finish();
        assert_eq!(end.code, Some(0), "{mode:?}\n{}", end.dump());
        for page in 1..=3 {
            let prefix = format!("[{page}] ");
            let of = |lines: &[String]| -> Vec<String> {
                lines
                    .iter()
                    .filter_map(|l| l.strip_prefix(&prefix).map(str::to_owned))
                    .collect()
            };
            let want: Vec<String> = (0..300).map(|i| format!("line {i}")).collect();
            assert_eq!(of(&end.out), want, "{mode:?} page {page}");
            // `Uncaught Error: error N (file:…:L:C)`: the message of each.
            let errors: Vec<String> = of(&end.err)
                .iter()
                .filter_map(|l| l.strip_prefix("Uncaught Error: "))
                .filter_map(|l| l.split(" (").next())
                .map(str::to_owned)
                .collect();
            let want: Vec<String> = (0..300).step_by(10).map(|i| format!("error {i}")).collect();
            assert_eq!(errors, want, "{mode:?} page {page}");
        }
        assert_eq!(
            end.out.len(),
            900,
            "{mode:?}: every line has its page's prefix"
        );
    }
}

#[test]
fn one_page_prints_what_it_printed_without_a_prefix() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    for mode in [Mode::Processes, Mode::Threads] {
        let end = spawn(mode, &["multiprocess/count.html", "--timeout", LONG]).finish();
        assert_eq!(end.code, Some(0), "{}", end.dump());
        let want: Vec<String> = (0..300).map(|i| format!("line {i}")).collect();
        assert_eq!(end.out, want, "{mode:?}");
    }
}

#[test]
fn a_content_process_that_aborts_is_one_line_and_the_other_page_finishes() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let server = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("traces.json");
    let (first, second) = (
        server.url("abort.html", "aborts", 1),
        server.url("hold.html", "aborts", 1),
    );
    let mut run = spawn(
        Mode::Processes,
        &[
            &first,
            &second,
            "--pref",
            "dom.testing.enabled=true",
            "--trace-out",
            out.to_str().unwrap(),
            "--timeout",
            LONG,
        ],
    );
    let browser = run.pid();
    run.wait_for(false, "[2] holding");
    let crashed = run.wait_for_prefix(
        true,
        &format!("[1] jsprof: content process for {first} crashed: signal "),
    );
    // abortForTesting() is Rust's abort, which SpiderMonkey's allocator takes over
    // (MOZ_CRASH): the process dies of SIGSEGV, as SpiderMonkey's own crashes do, or of
    // SIGABRT where it does not.
    assert!(
        crashed.ends_with(" 11") || crashed.ends_with(" 6"),
        "{crashed}"
    );
    // It was waited for while the browser ran on: only page 2's process is left.
    let left = children(browser);
    assert_eq!(left.len(), 1, "{left:?}");
    assert_eq!(content_page(&left[0].1), Some(2), "{left:?}");
    server.release("aborts");
    let end = run.finish();
    assert_eq!(end.code, Some(70), "{}", end.dump());
    assert!(end.says("[1] aborting"), "{}", end.dump());
    assert!(!end.says("[1] never"), "{}", end.dump());
    assert!(end.says("[2] released: go"), "{}", end.dump());
    assert!(end.says("[2] done"), "{}", end.dump());
    let crashes = end.err.iter().filter(|l| l.contains("crashed")).count();
    assert_eq!(crashes, 1, "{}", end.dump());
    let traces = traces(&out);
    assert_eq!(traces.len(), 1, "{}", end.dump());
    let stacks = sampled_names(trace_of(&traces, "hold.html"));
    assert!(stacks.iter().any(|n| n.contains("held")), "{traces:?}");
}

#[test]
fn a_killed_content_process_is_one_line_and_the_other_page_finishes() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    // Page 1 is held too (it is hold.html here), and killed while it waits.
    let server = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("traces.json");
    let (first, second) = (
        server.url("hold.html", "killed-1", 1),
        server.url("hold.html", "killed-2", 1),
    );
    let mut run = spawn(
        Mode::Processes,
        &[
            &first,
            &second,
            "--trace-out",
            out.to_str().unwrap(),
            "--timeout",
            LONG,
        ],
    );
    let browser = run.pid();
    run.wait_for(false, "[1] holding");
    run.wait_for(false, "[2] holding");
    let victim = content_process(browser, 1);
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(victim as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    run.wait_for(
        true,
        &format!("[1] jsprof: content process for {first} crashed: signal 9"),
    );
    let left = children(browser);
    assert_eq!(left.len(), 1, "the killed process was waited for: {left:?}");
    assert_eq!(content_page(&left[0].1), Some(2), "{left:?}");
    server.release("killed-2");
    let end = run.finish();
    assert_eq!(end.code, Some(70), "{}", end.dump());
    assert!(end.says("[2] done"), "{}", end.dump());
    assert!(!end.says("[1] done"), "{}", end.dump());
    let traces = traces(&out);
    assert_eq!(traces.len(), 1, "{}", end.dump());
    assert!(trace_of(&traces, "hold.html")["samples"]
        .as_array()
        .is_some_and(|s| !s.is_empty()));
}

#[test]
fn a_content_process_whose_browser_dies_ends_by_itself() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let server = Server::start();
    let page = server.url("hold.html", "orphan", 1);
    let mut run = spawn(Mode::Processes, &[&page, "--timeout", LONG]);
    let browser = run.pid();
    run.wait_for(false, "holding");
    let content = content_process(browser, 1);
    // The browser dies at once, without a word to its content process.
    run.child.kill().unwrap();
    let _ = run.child.wait();
    let deadline = Instant::now() + WAIT;
    while !ended(content) {
        assert!(
            Instant::now() < deadline,
            "content process {content} outlived its browser"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    server.release("orphan");
}

#[test]
fn the_memory_limit_is_each_content_process_own() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let server = Server::start();
    let held = server.url("hold.html", "memory", 1);
    let mut run = spawn(
        Mode::Processes,
        &[
            "hostile/allocate-forever.html",
            &held,
            "--pref",
            "memory.max_resident_mb=400",
            "--timeout",
            LONG,
        ],
    );
    run.wait_for(false, "[2] holding");
    // Page 1's process passes the limit while page 2's runs on: only page 1 is stopped.
    run.wait_for_prefix(true, "[1] jsprof: out of memory: the page was stopped");
    server.release("memory");
    let end = run.finish();
    assert_eq!(end.code, Some(3), "{}", end.dump());
    assert!(end.says("[2] done"), "{}", end.dump());
    assert!(
        !end.err
            .iter()
            .any(|l| l.starts_with("[2] jsprof: out of memory")),
        "{}",
        end.dump()
    );
}

#[test]
fn each_content_process_stops_at_its_own_timeout() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let end = spawn(
        Mode::Processes,
        &[
            "multiprocess/spin.html",
            "multiprocess/count.html",
            "--timeout",
            "2",
        ],
    )
    .finish();
    assert_eq!(end.code, Some(0), "{}", end.dump());
    assert!(end.took < Duration::from_secs(3 + 5), "took {:?}", end.took);
    assert!(end.says("[1] spinning"), "{}", end.dump());
    assert!(end.says("[1] jsprof: stopped at --timeout with work left"));
    assert!(end.says("[2] line 299"), "{}", end.dump());
    assert!(!end.says("[2] jsprof: stopped at --timeout with work left"));
}

/// One WebDriver request (HTTP/1.1, its own connection); the reply's `value`.
fn webdriver(port: u16, method: &str, path: &str, body: Option<Value>) -> Value {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let body = body.map(|b| b.to_string()).unwrap_or_default();
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut reply = String::new();
    stream.read_to_string(&mut reply).unwrap();
    let (head, json) = reply.split_once("\r\n\r\n").unwrap();
    assert!(head.starts_with("HTTP/1.1 200"), "{method} {path}: {reply}");
    serde_json::from_str::<Value>(json).unwrap()["value"].clone()
}

/// A WebDriver session on driven.html: Force Sample while its script runs, not while the
/// window is minimised, again once it is maximised, the page's trace through Execute Async
/// Script, the session's end. With `-M` each navigation's page has a process of its own,
/// and the one navigated away from is gone.
fn driven_session(mode: Mode) {
    let server = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("traces.json");
    let mut run = spawn(
        mode,
        &["--webdriver", "0", "--trace-out", out.to_str().unwrap()],
    );
    let browser = run.pid();
    let port: u16 = {
        let deadline = Instant::now() + WAIT;
        loop {
            if let Some(port) = run.err.iter().find_map(|l| {
                l.strip_prefix("jsprof: WebDriver listening on http://127.0.0.1:")
                    .map(|p| p.parse().unwrap())
            }) {
                break port;
            }
            if let Ok(l) = run.stderr.recv_timeout(Duration::from_millis(100)) {
                run.err.push(l);
            }
            assert!(Instant::now() < deadline, "{}", run.err.join("\n"));
        }
    };
    let session = webdriver(port, "POST", "/session", Some(json!({"capabilities": {}})));
    let id = session["sessionId"].as_str().unwrap().to_owned();
    let blank = (mode == Mode::Processes).then(|| content_process(browser, 1));
    let page = server.url("driven.html", "driven", 1);
    webdriver(
        port,
        "POST",
        &format!("/session/{id}/url"),
        Some(json!({"url": page})),
    );
    let title = webdriver(port, "GET", &format!("/session/{id}/title"), None);
    assert_eq!(title, json!("driven"));
    if let Some(blank) = blank {
        // about:blank's process is gone (waited for), the page's is another.
        let now = children(browser);
        assert_eq!(now.len(), 1, "{now:?}");
        assert_ne!(now[0].0, blank, "{now:?}");
        assert!(ended(blank));
    }
    let execute = |script: &str, is_async: bool| {
        let path = if is_async {
            "execute/async"
        } else {
            "execute/sync"
        };
        webdriver(
            port,
            "POST",
            &format!("/session/{id}/{path}"),
            Some(json!({"script": script, "args": []})),
        )
    };
    // The script runs from a timer (WebDriver answers one command at a time).
    execute("setTimeout(() => driven(2000), 0); return 1;", false);
    let force = || {
        webdriver(
            port,
            "POST",
            &format!("/session/{id}/forcesample"),
            Some(json!({})),
        )
    };
    for _ in 0..3 {
        force();
    }
    webdriver(
        port,
        "POST",
        &format!("/session/{id}/window/minimize"),
        Some(json!({})),
    );
    force();
    webdriver(
        port,
        "POST",
        &format!("/session/{id}/window/maximize"),
        Some(json!({})),
    );
    force();
    let samples = execute(
        "const done = arguments[arguments.length - 1]; \
         profiler.stop().then((t) => done(t.samples.length));",
        true,
    );
    assert_eq!(
        samples,
        json!(4),
        "three forced, one while hidden (not taken), one after"
    );
    webdriver(port, "DELETE", &format!("/session/{id}"), None);
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(browser as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let end = run.finish();
    assert_eq!(end.code, Some(0), "{}", end.dump());
    let traces = traces(&out);
    assert_eq!(traces.len(), 1, "{}", end.dump());
    let stacks = sampled_names(&traces[0]);
    assert!(stacks.iter().any(|n| n.contains("driven")), "{traces:?}");
}

#[test]
fn webdriver_drives_a_content_process_per_navigation() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    driven_session(Mode::Processes);
}

#[test]
fn webdriver_drives_a_content_thread_per_navigation() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    driven_session(Mode::Threads);
}
