//! A page's folder over HTTP on 127.0.0.1, with jsprof's `.headers` sidecars: how
//! `jsprof-servo PATH` runs a page given as a file. Servo fetches module scripts in CORS
//! mode, which fails for `file:` URLs (the Fetch standard's answer for them), so a file
//! page's modules would not load; served over HTTP they do, as from any developer's static
//! server. The tests serve their pages with it too.
//!
//! GET and HEAD only, HTTP/1.0 (one request a connection). A file's response carries its
//! folder's `__dir__.headers` and its own `NAME.headers` (`Name: value` lines), as jsprof's
//! loader reads them for `file:` pages. Paths outside the folder are 404.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Component, Path, PathBuf};

/// Serves `dir` on 127.0.0.1 from a thread of its own, for the life of the process; returns
/// the origin (`http://127.0.0.1:PORT`).
pub fn serve(dir: PathBuf) -> std::io::Result<String> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let origin = format!("http://{}", listener.local_addr()?);
    std::thread::Builder::new()
        .name("jsprof-servo file server".into())
        .spawn(move || {
            for stream in listener.incoming().flatten() {
                let dir = dir.clone();
                let _ = std::thread::Builder::new().spawn(move || respond(&dir, stream));
            }
        })?;
    Ok(origin)
}

/// The file under `dir` a request path names (query and fragment dropped, percent-escapes
/// decoded), or `None` when it would leave `dir`.
fn file_of(dir: &Path, target: &str) -> Option<PathBuf> {
    let path = target.split(['?', '#']).next().unwrap_or("");
    let decoded = percent_decode(path)?;
    let mut file = dir.to_path_buf();
    for part in Path::new(decoded.trim_start_matches('/')).components() {
        match part {
            Component::Normal(p) => file.push(p),
            Component::CurDir => {}
            _ => return None,
        }
    }
    if file.is_dir() {
        file.push("index.html");
    }
    Some(file)
}

fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

fn content_type(file: &Path) -> &'static str {
    match file.extension().and_then(|e| e.to_str()) {
        Some("html" | "htm") => "text/html; charset=utf-8",
        Some("js" | "mjs") => "text/javascript; charset=utf-8",
        Some("json") => "application/json",
        Some("css") => "text/css",
        Some("wasm") => "application/wasm",
        Some("svg") => "image/svg+xml",
        Some("png") => "image/png",
        _ => "application/octet-stream",
    }
}

/// The sidecar headers of `file` (`script::jsprof::sidecar_fields`: its folder's
/// `__dir__.headers`, then its own `NAME.headers`, as jsprof's loader reads them), without
/// a name that is not a token or a value that would end the header line.
fn sidecar_headers(file: &Path) -> Vec<(String, String)> {
    script::jsprof::sidecar_fields(file)
        .into_iter()
        .filter(|(n, v)| {
            !n.is_empty()
                && n.bytes().all(|b| b.is_ascii_graphic() && b != b':')
                && !v.contains(['\r', '\n'])
        })
        .collect()
}

fn respond(dir: &Path, mut stream: TcpStream) {
    let Ok(clone) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(clone);
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
    let mut words = request.split_whitespace();
    let (method, target) = (words.next().unwrap_or(""), words.next().unwrap_or("/"));
    let (status, body, headers, kind) = if method != "GET" && method != "HEAD" {
        (
            "405 Method Not Allowed",
            Vec::new(),
            Vec::new(),
            "text/plain",
        )
    } else {
        match file_of(dir, target).and_then(|f| Some((std::fs::read(&f).ok()?, f))) {
            Some((body, file)) => ("200 OK", body, sidecar_headers(&file), content_type(&file)),
            None => ("404 Not Found", Vec::new(), Vec::new(), "text/plain"),
        }
    };
    let mut head = format!(
        "HTTP/1.0 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    let _ = stream.write_all(head.as_bytes());
    if method != "HEAD" {
        let _ = stream.write_all(&body);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_stay_inside_the_folder() {
        let dir = Path::new("/srv/page");
        assert_eq!(file_of(dir, "/a/b.js?x#y"), Some(dir.join("a/b.js")));
        assert_eq!(file_of(dir, "/a%20b.js"), Some(dir.join("a b.js")));
        assert_eq!(file_of(dir, "/../etc/passwd"), None);
        assert_eq!(file_of(dir, "/a/%2e%2e/%2e%2e/x"), None);
        assert_eq!(file_of(dir, "/%zz"), None);
    }
}
