//! What the collector's integration tests share: `jsprof-collector collect` started as the
//! real binary on a free port, and `jsprof-collector query`.

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
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
