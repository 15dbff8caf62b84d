//! The intake's back-pressure over real sockets: 429 with `Retry-After` when the commit
//! queue is full, 408 when a client's body stalls past `collector.body_timeout_ms`.
//! Neither depends on timing: the queue is filled while the writer is known to be idle
//! (`collector.commit_interval_ms`), and the stalled body never arrives.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::{envelope, get, http, query, Collector};

#[test]
fn a_full_queue_is_429_with_retry_after_and_the_queued_request_commits_later() {
    let dir = tempfile::tempdir().unwrap();
    // A queue of one, and a writer that rests 8 s after each commit.
    let c = Collector::start(
        dir.path(),
        &[
            "--pref",
            "collector.queue=1",
            "--pref",
            "collector.commit_interval_ms=8000",
        ],
    );
    let post = |session: &str| {
        http(
            c.addr,
            "POST",
            "/v1/profiles",
            &[("Content-Type", "application/json")],
            &envelope(session, "1.0.0", 10),
        )
    };
    // Committed at once; the writer then rests, so nothing leaves the queue for 8 s.
    let first = Instant::now();
    let (status, _, body) = post("first");
    assert_eq!(status, 202, "{body}");
    // Two more at once: one takes the queue's only place, the other finds it full. Which
    // one is up to the scheduler; that the first answer is a 429 is not.
    let (tx, rx) = mpsc::channel();
    let addr = c.addr;
    for session in ["second", "third"] {
        let tx = tx.clone();
        std::thread::spawn(move || {
            let answer = http(
                addr,
                "POST",
                "/v1/profiles",
                &[("Content-Type", "application/json")],
                &envelope(session, "1.0.0", 10),
            );
            let _ = tx.send((session, answer, Instant::now()));
        });
    }
    let (refused, (status, headers, body), refused_at) =
        rx.recv_timeout(Duration::from_secs(60)).unwrap();
    assert_eq!(status, 429, "{body}");
    assert_eq!(get(&headers, "retry-after"), Some("1"), "{headers:?}");
    assert!(body.contains("queue is full"), "{body}");
    assert!(
        refused_at.duration_since(first) < Duration::from_secs(8),
        "the 429 came after the writer's rest: it was not the queue that refused"
    );
    // The queued one is acknowledged once the writer is back, not before.
    let (kept, (status, _, body), kept_at) = rx.recv_timeout(Duration::from_secs(60)).unwrap();
    assert_ne!(kept, refused);
    assert_eq!(status, 202, "{body}");
    assert!(kept_at.duration_since(first) >= Duration::from_secs(8));
    drop(c);
    let out = query(dir.path(), "SELECT session FROM traces ORDER BY session");
    assert!(out.contains("| first "), "{out}");
    assert!(out.contains(&format!("| {kept} ")), "{out}");
    assert!(!out.contains(&format!("| {refused} ")), "{out}");
}

#[test]
fn a_body_that_stalls_past_the_timeout_is_408() {
    let dir = tempfile::tempdir().unwrap();
    let c = Collector::start(dir.path(), &["--pref", "collector.body_timeout_ms=500"]);
    let body = envelope("slow", "1.0.0", 10);
    let mut s = TcpStream::connect(c.addr).unwrap();
    // Before the head is sent: the server's clock starts after it has the head.
    let started = Instant::now();
    let head = format!(
        "POST /v1/profiles HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        c.addr,
        body.len()
    );
    s.write_all(head.as_bytes()).unwrap();
    // A third of the body, then nothing: the socket stays open, the rest never comes.
    s.write_all(&body[..body.len() / 3]).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let mut answer = [0u8; 512];
    let n = s.read(&mut answer).unwrap();
    let answer = String::from_utf8_lossy(&answer[..n]);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("the body took too long"), "{answer}");
    assert!(started.elapsed() >= Duration::from_millis(500));
    // The same body sent whole is taken; the stalled one left nothing behind.
    let (status, _, text) = http(c.addr, "POST", "/v1/profiles", &[], &body);
    assert_eq!(status, 202, "{text}");
    drop(c);
    let out = query(dir.path(), "SELECT count(*) AS n FROM traces");
    assert!(out.contains("| 1 |"), "{out}");
}
