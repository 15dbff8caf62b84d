//! What the collector's integration tests share: `jsprof-collector collect` started as the
//! real binary on a free port, `jsprof-collector query`, and one HTTP request.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};

pub const BIN: &str = env!("CARGO_BIN_EXE_jsprof-collector");

pub struct Collector {
    pub child: Child,
    pub addr: SocketAddr,
}

impl Collector {
    pub fn start(store: &Path, args: &[&str]) -> Collector {
        let mut child = Command::new(BIN)
            .args(["collect", "--listen", "127.0.0.1:0", "--store"])
            .arg(store)
            .args(args)
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

pub fn query(store: &Path, sql: &str) -> String {
    let out = Command::new(BIN)
        .args(["query", "--store"])
        .arg(store)
        .arg(sql)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
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
