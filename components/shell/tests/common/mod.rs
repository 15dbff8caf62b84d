//! What the shell's integration test binaries share. Each binary compiles this module on its
//! own and uses part of it, so what one of them leaves unused is not dead code.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;

/// `tests/pages/`, the test pages' root.
pub fn pages() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/pages")
        .canonicalize()
        .unwrap()
}

/// Starts `command` in `tests/pages/` with no stdin, and reads its stdout and stderr line by
/// line as they come, each on a thread of its own (a reader ends when its pipe closes or its
/// receiver is dropped).
pub fn spawn_reading_lines(
    command: &mut Command,
) -> (Child, mpsc::Receiver<String>, mpsc::Receiver<String>) {
    let mut child = command
        .current_dir(pages())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("jsprof starts");
    let lines = |pipe: Box<dyn Read + Send>| {
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(pipe).lines() {
                let Ok(line) = line else { return };
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        rx
    };
    let stdout = lines(Box::new(child.stdout.take().unwrap()));
    let stderr = lines(Box::new(child.stderr.take().unwrap()));
    (child, stdout, stderr)
}
