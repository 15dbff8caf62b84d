//! What the tests share: jsprof-servo's own file server (`src/serve.rs`, with jsprof's
//! `.headers` and `__dir__.headers` sidecars), and a run of jsprof-servo.

#![allow(dead_code)]

#[path = "../../src/serve.rs"]
mod file_server;

use std::path::{Path, PathBuf};
use std::process::Command;

/// Serves `dir` on 127.0.0.1 with jsprof's sidecars, as jsprof-servo serves a file page
/// (`src/serve.rs`); returns the origin.
pub fn serve(dir: PathBuf) -> String {
    file_server::serve(dir).expect("serve")
}

pub fn jsprof_servo(url: &str, trace_out: Option<&Path>) -> String {
    jsprof_servo_with(url, trace_out, &[])
}

/// jsprof-servo on `url` with `args` (`--pref …`): its console output.
pub fn jsprof_servo_with(url: &str, trace_out: Option<&Path>, args: &[&str]) -> String {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_jsprof-servo"));
    cmd.arg(url).args(args).args(["--timeout", "60"]);
    if let Some(path) = trace_out {
        cmd.arg("--trace-out").arg(path);
    }
    let out = cmd.output().expect("run jsprof-servo");
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).expect("UTF-8 console")
}
