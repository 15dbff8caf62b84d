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

/// A static HTTP server for `tests/pages` on 127.0.0.1 (listening before its port is
/// returned), with `.headers` sidecars; `route` sees each request first and keeps it
/// (returns `None`) if it answers it itself.
pub fn serve_pages(
    route: impl Fn(tiny_http::Request) -> Option<tiny_http::Request> + Send + 'static,
) -> u16 {
    let server = tiny_http::Server::http("127.0.0.1:0").unwrap();
    let port = server.server_addr().to_ip().unwrap().port();
    let root = pages();
    std::thread::spawn(move || {
        for req in server.incoming_requests() {
            let Some(req) = route(req) else { continue };
            let url = req.url().to_owned();
            let path = url.split_once('?').map_or(url.as_str(), |(p, _)| p);
            let file = root.join(path.trim_start_matches('/'));
            let Ok(body) = std::fs::read(&file) else {
                let _ = req
                    .respond(tiny_http::Response::from_string("not found").with_status_code(404));
                continue;
            };
            let mime = jsprof_net::mime_for(&file).unwrap_or("application/octet-stream");
            let mut resp = tiny_http::Response::from_data(body)
                .with_header(header(&format!("Content-Type: {mime}")));
            for (name, value) in jsprof_net::sidecar_headers(&file).unwrap().iter() {
                resp.add_header(header(&format!("{name}: {value}")));
            }
            let _ = req.respond(resp);
        }
    });
    port
}

/// A header line as tiny_http takes it.
pub fn header(h: &str) -> tiny_http::Header {
    h.parse().unwrap()
}
