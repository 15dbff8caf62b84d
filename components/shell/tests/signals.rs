//! SIGTERM and SIGINT end `jsprof` promptly whenever they arrive: sent at once after the
//! process starts, as soon as its WebDriver port accepts connections, with a session open,
//! or while a page's script runs, many times over. A signal never waits for anything: the
//! outcome is either the process killed by that signal (before jsprof has anything to end
//! gracefully, and in a page run) or, once the WebDriver browser runs, exit 0 with its
//! `--trace-out` written.

mod common;

use common::spawn_reading_lines;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::unix::process::ExitStatusExt;
use std::process::{Child, Command, ExitStatus};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

/// How long after the signal the process must be gone. Ending takes milliseconds; the
/// margin is for a loaded machine.
const PROMPTLY: Duration = Duration::from_secs(5);

/// Rounds of each case, per signal.
const ROUNDS: usize = 15;

/// A running `jsprof` whose stdout and stderr lines are read as they come.
struct Jsprof {
    child: Child,
    stdout: mpsc::Receiver<String>,
    stderr: mpsc::Receiver<String>,
}

/// `jsprof args`, with SIGINT and SIGTERM at their default disposition whatever this test's
/// own are: a shell starts a background job (`cargo test &`) with SIGINT ignored, and a
/// process inherits that, so jsprof would never see the signal these tests send.
fn spawn(args: &[&str]) -> Jsprof {
    let (child, stdout, stderr) = spawn_reading_lines(
        Command::new("env")
            .args(["--default-signal=INT,TERM", env!("CARGO_BIN_EXE_jsprof")])
            .args(args),
    );
    Jsprof {
        child,
        stdout,
        stderr,
    }
}

/// The next line of `lines`, waiting for it (a minute at most: it comes in milliseconds).
fn next_line(lines: &mpsc::Receiver<String>) -> String {
    lines
        .recv_timeout(Duration::from_secs(60))
        .expect("jsprof printed its line")
}

impl Jsprof {
    /// Sends `signal` and waits, by polling the process's state, until it has exited; fails
    /// if that takes longer than [`PROMPTLY`]. Its status and the rest of its stderr.
    fn signal_and_wait(mut self, signal: Signal, when: &str) -> (ExitStatus, String) {
        kill(Pid::from_raw(self.child.id() as i32), signal).expect("the signal is sent");
        let sent = Instant::now();
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("the child's state") {
                break status;
            }
            if sent.elapsed() > PROMPTLY {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!("{signal} {when}: still running {PROMPTLY:?} later");
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        // The pipe is closed once the process is gone: the reader thread ends.
        let stderr: Vec<String> = self.stderr.iter().collect();
        (status, stderr.join("\n"))
    }

    /// The WebDriver port `jsprof --webdriver 0` says it listens on (it accepts connections
    /// from then on).
    fn listening_port(&self) -> u16 {
        let line = next_line(&self.stderr);
        line.strip_prefix("jsprof: WebDriver listening on http://127.0.0.1:")
            .unwrap_or_else(|| panic!("{line}"))
            .parse()
            .unwrap()
    }
}

/// Exit 0, or killed by `signal`: nothing else (no internal error, no other signal).
fn ended_by(status: ExitStatus, stderr: &str, signal: Signal, when: &str) {
    let by_signal = status.signal() == Some(signal as i32);
    assert!(
        status.code() == Some(0) || by_signal,
        "{signal} {when}: {status}\n{stderr}"
    );
    assert!(
        !stderr.contains("internal error") && !stderr.contains("panicked"),
        "{signal} {when}: {stderr}"
    );
}

/// One HTTP request to the WebDriver server; the status and body.
fn request(port: u16, method: &str, path: &str, body: &str) -> (u16, String) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let status = response[9..12].parse().unwrap();
    let body = response
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_owned())
        .unwrap_or_default();
    (status, body)
}

#[test]
fn webdriver_ends_on_a_signal_at_once_after_it_starts() {
    for signal in [Signal::SIGTERM, Signal::SIGINT] {
        for round in 0..ROUNDS {
            let when = format!("right after spawn, round {round}");
            let (status, stderr) = spawn(&["--webdriver", "0"]).signal_and_wait(signal, &when);
            ended_by(status, &stderr, signal, &when);
        }
    }
}

#[test]
fn webdriver_ends_on_a_signal_as_soon_as_its_port_accepts() {
    for signal in [Signal::SIGTERM, Signal::SIGINT] {
        for round in 0..ROUNDS {
            let jsprof = spawn(&["--webdriver", "0"]);
            let port = jsprof.listening_port();
            TcpStream::connect(("127.0.0.1", port)).expect("the port accepts");
            let when = format!("once the port accepted, round {round}");
            let (status, stderr) = jsprof.signal_and_wait(signal, &when);
            ended_by(status, &stderr, signal, &when);
        }
    }
}

/// With a session whose browser has answered a command, the browser is running: the signal
/// ends it gracefully, exit 0, with the traces written (the page's finished profiler, and
/// the one still running, stopped by the end).
#[test]
fn webdriver_with_a_session_exits_0_with_its_traces_written() {
    let dir = tempfile::tempdir().unwrap();
    for signal in [Signal::SIGTERM, Signal::SIGINT] {
        for round in 0..ROUNDS / 3 {
            let traces = dir.path().join(format!("{signal}-{round}.json"));
            let jsprof = spawn(&[
                "--webdriver",
                "0",
                "visibility/index.html",
                "--trace-out",
                traces.to_str().unwrap(),
            ]);
            let port = jsprof.listening_port();
            let (status, body) = request(port, "POST", "/session", r#"{"capabilities":{}}"#);
            assert_eq!(status, 200, "{body}");
            let session: serde_json::Value = serde_json::from_str(&body).unwrap();
            let id = session["value"]["sessionId"].as_str().unwrap();
            // Answered by the page's loop: the browser runs.
            let script = r#"{"script":"window.running = new Profiler({sampleInterval: 10, maxBufferSize: 10}); return document.title","args":[]}"#;
            let path = format!("/session/{id}/execute/sync");
            let (status, body) = request(port, "POST", &path, script);
            assert_eq!(status, 200, "{body}");
            assert!(body.contains("Page visibility"), "{body}");
            assert_eq!(
                next_line(&jsprof.stdout),
                "visibilityState visible hidden false"
            );
            let when = format!("with a session, round {round}");
            let (status, stderr) = jsprof.signal_and_wait(signal, &when);
            assert_eq!(
                status.code(),
                Some(0),
                "{signal} {when}: {status}\n{stderr}"
            );
            let written: serde_json::Value =
                serde_json::from_slice(&std::fs::read(&traces).unwrap()).unwrap();
            assert_eq!(written.as_array().map(Vec::len), Some(2), "{stderr}");
        }
    }
}

/// A page run ends at once (killed by the signal) whenever the signal comes: right after
/// the start, and while the page's script runs forever.
#[test]
fn a_page_run_ends_on_a_signal_whenever_it_comes() {
    for signal in [Signal::SIGTERM, Signal::SIGINT] {
        for round in 0..ROUNDS {
            let when = format!("page, right after spawn, round {round}");
            let jsprof = spawn(&["runaway/index.html", "--timeout", "600"]);
            let (status, stderr) = jsprof.signal_and_wait(signal, &when);
            assert_eq!(
                status.signal(),
                Some(signal as i32),
                "{when}: {status}\n{stderr}"
            );

            let jsprof = spawn(&["runaway/index.html", "--timeout", "600"]);
            assert_eq!(next_line(&jsprof.stdout), "before");
            let when = format!("while the page's script runs, round {round}");
            let (status, stderr) = jsprof.signal_and_wait(signal, &when);
            assert_eq!(
                status.signal(),
                Some(signal as i32),
                "{when}: {status}\n{stderr}"
            );
        }
    }
}
