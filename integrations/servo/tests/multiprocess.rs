//! `jsprof-servo -M`: page content in Servo's own content processes (one a site), each with
//! its own jsprof `ProfilerGroup` and sampler thread; the browser gathers their traces,
//! profiles and `--profile-stats` lines. Each test picks its mode itself (`-M`, or no
//! `JSPROF_MULTIPROCESS` for a single process), whatever the environment says.

mod common;

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::serve;
use serde_json::Value;

/// A fresh folder for a test's pages, served with `Document-Policy: js-profiling` for all.
fn pages(name: &str, files: &[(&str, &str)]) -> (PathBuf, String) {
    let dir = std::env::temp_dir().join(format!("jsprof-servo-mp-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("dir");
    std::fs::write(
        dir.join("__dir__.headers"),
        "Document-Policy: js-profiling\n",
    )
    .expect("headers");
    for (file, text) in files {
        std::fs::write(dir.join(file), text).expect("page");
    }
    let origin = serve(dir.clone());
    (dir, origin)
}

/// The port of an `http://127.0.0.1:PORT` origin.
fn port(origin: &str) -> u16 {
    origin.rsplit(':').next().unwrap().parse().expect("a port")
}

/// A page whose function `name` runs for `ms` under a Profiler, then prints "NAME done".
fn busy_page(name: &str, ms: u32, extra: &str) -> String {
    format!(
        "{extra}<script>\n\
         function {name}(ms) {{ const end = performance.now() + ms; while (performance.now() < end) {{}} }}\n\
         const profiler = new Profiler({{ sampleInterval: 10, maxBufferSize: 10000 }});\n\
         {name}({ms});\n\
         profiler.stop().then(() => console.log('{name} done'));\n</script>\n"
    )
}

/// How a run asks for content processes.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Mode {
    /// Neither `-M` nor `JSPROF_MULTIPROCESS` (whatever the test's environment says).
    Single,
    /// `-M`.
    Flag,
    /// `JSPROF_MULTIPROCESS=1`, as `./mach servo test`'s second pass sets it.
    Env,
}

/// jsprof-servo with `args` (and `--timeout 60` unless they have one), in `mode`, its
/// stdout and stderr piped.
fn start(args: &[&str], mode: Mode) -> Child {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_jsprof-servo"));
    cmd.args(args);
    if !args.contains(&"--timeout") {
        cmd.args(["--timeout", "60"]);
    }
    cmd.env_remove("JSPROF_MULTIPROCESS");
    match mode {
        Mode::Single => {}
        Mode::Flag => {
            cmd.arg("-M");
        }
        Mode::Env => {
            cmd.env("JSPROF_MULTIPROCESS", "1");
        }
    }
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run jsprof-servo")
}

/// [`start`], to the end: its output, its pid, and how long it took.
fn run(args: &[&str], mode: Mode) -> (Output, u32, Duration) {
    let started = Instant::now();
    let child = start(args, mode);
    let pid = child.id();
    let out = child.wait_with_output().expect("jsprof-servo's output");
    (out, pid, started.elapsed())
}

/// The content processes of browser `browser`: its children started as
/// `--content-process`.
fn content_processes(browser: u32) -> Vec<u32> {
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        let (Ok(stat), Ok(cmdline)) = (
            std::fs::read_to_string(format!("/proc/{pid}/stat")),
            std::fs::read(format!("/proc/{pid}/cmdline")),
        ) else {
            continue;
        };
        // "PID (COMM) STATE PPID ...": COMM may hold spaces, not ')'.
        let ppid = stat
            .rsplit(')')
            .next()
            .and_then(|rest| rest.split_whitespace().nth(1))
            .and_then(|ppid| ppid.parse::<u32>().ok());
        let content = cmdline
            .split(|b| *b == 0)
            .any(|arg| arg == b"--content-process");
        if ppid == Some(browser) && content {
            pids.push(pid);
        }
    }
    pids
}

/// The `--profile-stats` lines on stderr.
fn stats(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|line| line.get("pid").is_some())
        .collect()
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).expect("the trace file");
    let _ = std::fs::remove_file(path);
    serde_json::from_str(&text).expect("JSON")
}

/// The names of a trace's frames.
fn names(trace: &Value) -> Vec<&str> {
    trace["frames"]
        .as_array()
        .expect("frames")
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect()
}

/// Whether process `pid` is gone (or a zombie waiting to be reaped).
fn gone(pid: u64) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with(['Z', 'X'])),
    }
}

/// As `./mach test`'s check for jsprof: with `-M` (or `JSPROF_MULTIPROCESS=1`) the one
/// `--profile-stats` line names a content process, not the browser; without, the browser.
#[test]
fn profile_stats_name_the_content_process() {
    let (dir, origin) = pages("stats", &[("index.html", &busy_page("work", 400, ""))]);
    let url = format!("{origin}/index.html");
    for mode in [Mode::Flag, Mode::Env, Mode::Single] {
        let (out, browser, _) = run(&[&url, "--profile-stats"], mode);
        assert!(out.status.success(), "{out:?}");
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "work done\n",
            "{out:?}"
        );
        let lines = stats(&out);
        assert_eq!(lines.len(), 1, "{out:?}");
        let pid = lines[0]["pid"].as_u64().expect("pid");
        if mode != Mode::Single {
            assert_ne!(pid, u64::from(browser), "{out:?}");
        } else {
            assert_eq!(pid, u64::from(browser), "{out:?}");
        }
        assert!(
            lines[0]["sampler"]["ticks"].as_u64().expect("ticks") > 0,
            "{out:?}"
        );
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// Two sites, two content processes: a page on alpha.test with an iframe on beta.test.
/// Each process samples its own page with its own sampler thread: two `--profile-stats`
/// lines of two pids, neither the browser's, each of a sampler that ticked; and each page's
/// trace holds its own function only.
#[test]
fn two_sites_are_sampled_in_two_processes() {
    let (dir, origin) = pages("sites", &[("frame.html", &busy_page("beta", 600, ""))]);
    let port = port(&origin);
    let top = busy_page(
        "alpha",
        600,
        &format!("<iframe src=\"http://beta.test:{port}/frame.html\"></iframe>\n"),
    );
    std::fs::write(dir.join("top.html"), top).expect("page");
    let trace_out = dir.join("traces.json");
    let url = format!("http://alpha.test:{port}/top.html");
    let (out, browser, _) = run(
        &[
            &url,
            "--host-override",
            "alpha.test",
            "--host-override",
            "beta.test",
            "--profile-stats",
            "--trace-out",
            trace_out.to_str().unwrap(),
        ],
        Mode::Flag,
    );
    assert!(out.status.success(), "{out:?}");
    let console = String::from_utf8_lossy(&out.stdout);
    assert!(
        console.contains("alpha done") && console.contains("beta done"),
        "{out:?}"
    );
    let lines = stats(&out);
    assert_eq!(lines.len(), 2, "{out:?}");
    let pids: Vec<u64> = lines.iter().map(|l| l["pid"].as_u64().unwrap()).collect();
    assert_ne!(pids[0], pids[1], "{out:?}");
    assert!(!pids.contains(&u64::from(browser)), "{out:?}");
    // Each sampler ticked and walked its page thread's stack (at the tick, or once the
    // thread got a core: with both pages busy, threads outnumber this machine's cores).
    for line in &lines {
        let sampler = &line["sampler"];
        assert!(sampler["ticks"].as_u64().unwrap() > 0, "{out:?}");
        let walks =
            sampler["walked_at_tick"].as_u64().unwrap() + sampler["walks_waited"].as_u64().unwrap();
        assert!(walks > 0, "{out:?}");
    }
    let traces = read_json(&trace_out);
    let traces = traces.as_array().expect("an array of traces");
    assert_eq!(traces.len(), 2, "{traces:?}");
    let alpha: Vec<_> = traces
        .iter()
        .filter(|t| names(t).contains(&"alpha"))
        .collect();
    let beta: Vec<_> = traces
        .iter()
        .filter(|t| names(t).contains(&"beta"))
        .collect();
    assert_eq!((alpha.len(), beta.len()), (1, 1), "{traces:?}");
    for trace in [alpha[0], beta[0]] {
        assert!(!trace["samples"].as_array().unwrap().is_empty(), "{trace}");
    }
    assert!(!names(alpha[0]).contains(&"beta"), "{traces:?}");
    assert!(!names(beta[0]).contains(&"alpha"), "{traces:?}");
    let _ = std::fs::remove_dir_all(dir);
}

/// `--profile-out` across a cross-site navigation: the first site's document is profiled in
/// its process, the second's in another, and both profiles reach the file.
#[test]
fn profile_out_follows_a_cross_site_navigation() {
    let (dir, origin) = pages("nav", &[]);
    let port = port(&origin);
    let first = format!(
        "<script>\nfunction first(ms) {{ const end = performance.now() + ms; while (performance.now() < end) {{}} }}\n\
         first(400);\nsetTimeout(() => {{ location.href = 'http://beta.test:{port}/second.html'; }}, 0);\n</script>\n"
    );
    let second = "<script>\nfunction second(ms) { const end = performance.now() + ms; while (performance.now() < end) {} }\n\
                  second(400);\nconsole.log('second done');\n</script>\n";
    std::fs::write(dir.join("first.html"), first).expect("page");
    std::fs::write(dir.join("second.html"), second).expect("page");
    let profile_out = dir.join("profile.json");
    let url = format!("http://alpha.test:{port}/first.html");
    let (out, _, _) = run(
        &[
            &url,
            "--host-override",
            "alpha.test",
            "--host-override",
            "beta.test",
            "--profile-out",
            profile_out.to_str().unwrap(),
        ],
        Mode::Flag,
    );
    assert!(out.status.success(), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("second done"),
        "{out:?}"
    );
    let profiles = read_json(&profile_out);
    let profiles = profiles.as_array().expect("one profile a document");
    assert_eq!(profiles.len(), 2, "{profiles:?}");
    assert!(
        profiles.iter().any(|p| names(p).contains(&"first")),
        "{profiles:?}"
    );
    assert!(
        profiles.iter().any(|p| names(p).contains(&"second")),
        "{profiles:?}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// A content process that crashes: here it gets SIGABRT from outside, as an abort would
/// send it, while its page still has timers to run (SpiderMonkey's handler takes a SIGSEGV
/// sent from outside and ignores it; Servo's panic helper, `ServoTestUtils.panic()`, is
/// compiled only with servo-script's `testbinding` feature). Servo does not tell the
/// embedder; jsprof-servo sees the link end without a goodbye, says which process crashed
/// and exits 70, promptly.
#[test]
fn a_content_process_crash_ends_the_run_with_70() {
    let (dir, origin) = pages(
        "crash",
        &[(
            "index.html",
            "<script>\nconsole.log('ready');\nsetInterval(() => {}, 50);\n</script>\n",
        )],
    );
    let url = format!("{origin}/index.html");
    let started = Instant::now();
    let mut child = start(&[&url], Mode::Flag);
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut line = String::new();
    stdout.read_line(&mut line).expect("the page's first line");
    assert_eq!(line, "ready\n");
    let contents = content_processes(child.id());
    assert_eq!(contents.len(), 1, "{contents:?}");
    let killed = Command::new("kill")
        .args(["-ABRT", &contents[0].to_string()])
        .status()
        .expect("kill");
    assert!(killed.success());
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut stderr)
        .expect("stderr");
    let status = child.wait().expect("jsprof-servo's status");
    assert_eq!(status.code(), Some(70), "{stderr}");
    let said = format!(
        "jsprof-servo: internal error: content process {} crashed",
        contents[0]
    );
    assert!(stderr.contains(&said), "{stderr}");
    assert!(started.elapsed() < Duration::from_secs(30), "{stderr}");
    let _ = std::fs::remove_dir_all(dir);
}

/// A page that never yields, stopped at `--timeout`: the browser exits 0, its content
/// process goes with it (no orphan keeps running, or keeps the caller's pipes open), and
/// its sampler's stats still came back.
#[test]
fn no_content_process_outlives_the_timeout() {
    let (dir, origin) = pages(
        "orphan",
        &[(
            "index.html",
            "<script>\nconst profiler = new Profiler({ sampleInterval: 10, maxBufferSize: 10000 });\n\
             console.log('spinning');\nwhile (true) {}\n</script>\n",
        )],
    );
    let url = format!("{origin}/index.html");
    let (out, browser, took) = run(&[&url, "--timeout", "2", "--profile-stats"], Mode::Flag);
    assert!(out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("stopped at --timeout"), "{stderr}");
    // `output()` returned: every writer of the pipes, content processes too, has ended.
    assert!(took < Duration::from_secs(30), "{took:?}");
    let lines = stats(&out);
    assert_eq!(lines.len(), 1, "{stderr}");
    let pid = lines[0]["pid"].as_u64().expect("pid");
    assert_ne!(pid, u64::from(browser), "{stderr}");
    assert!(
        lines[0]["sampler"]["ticks"].as_u64().unwrap() > 0,
        "{stderr}"
    );
    let deadline = Instant::now() + Duration::from_secs(5);
    while !gone(pid) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(gone(pid), "content process {pid} outlived its browser");
    let _ = std::fs::remove_dir_all(dir);
}
