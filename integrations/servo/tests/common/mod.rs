//! What the tests share: a small HTTP server that sends jsprof's `.headers` sidecars, and a
//! run of jsprof-servo.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Serves `dir` on 127.0.0.1 (HTTP/1.0, GET only), with each file's `NAME.headers` sidecar
/// as jsprof's loader reads it; returns the origin.
pub fn serve(dir: PathBuf) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let origin = format!("http://{}", listener.local_addr().expect("addr"));
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let dir = dir.clone();
            std::thread::spawn(move || respond(&dir, stream));
        }
    });
    origin
}

fn respond(dir: &Path, mut stream: TcpStream) {
    let mut reader = BufReader::new(stream.try_clone().expect("clone"));
    let mut request = String::new();
    if reader.read_line(&mut request).is_err() {
        return;
    }
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).map_or(true, |n| n == 0) || line.trim().is_empty() {
            break;
        }
    }
    let path = request
        .split(' ')
        .nth(1)
        .unwrap_or("/")
        .trim_start_matches('/');
    let file = dir.join(path.split('?').next().unwrap_or(""));
    let (status, body) = match std::fs::read(&file) {
        Ok(body) if !path.contains("..") => ("200 OK", body),
        _ => ("404 Not Found", Vec::new()),
    };
    let kind = match file.extension().and_then(|e| e.to_str()) {
        Some("html") => "text/html",
        Some("js") => "text/javascript",
        _ => "application/octet-stream",
    };
    let mut head = format!(
        "HTTP/1.0 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\n",
        body.len()
    );
    let mut sidecar = file.into_os_string();
    sidecar.push(".headers");
    if let Ok(headers) = std::fs::read_to_string(sidecar) {
        for line in headers.lines().filter(|l| l.contains(':')) {
            head.push_str(line.trim());
            head.push_str("\r\n");
        }
    }
    head.push_str("\r\n");
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(&body);
}

pub fn jsprof_servo(url: &str, trace_out: Option<&Path>) -> String {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_jsprof-servo"));
    cmd.arg(url).args(["--timeout", "60"]);
    if let Some(path) = trace_out {
        cmd.arg("--trace-out").arg(path);
    }
    let out = cmd.output().expect("run jsprof-servo");
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).expect("UTF-8 console")
}
