//! Loading over file:, and over real HTTP and HTTPS servers on 127.0.0.1.

use std::io::Write;
use std::thread;

use jsprof_net::{url_from_input, LoadError, Loader, LoaderConfig, Url};

/// A real HTTP server: `/plain` answers text, `/redirect` redirects to `/plain`,
/// `/loop` redirects to itself, `/headers` sets a header.
fn serve(server: tiny_http::Server) -> u16 {
    let port = server.server_addr().to_ip().unwrap().port();
    thread::spawn(move || {
        for req in server.incoming_requests() {
            let path = req.url().to_owned();
            let resp = match path.as_str() {
                "/plain" => tiny_http::Response::from_string("hello"),
                "/redirect" => tiny_http::Response::from_string("")
                    .with_status_code(302)
                    .with_header("Location: /plain".parse::<tiny_http::Header>().unwrap()),
                "/loop" => tiny_http::Response::from_string("")
                    .with_status_code(301)
                    .with_header("Location: /loop".parse::<tiny_http::Header>().unwrap()),
                "/headers" => tiny_http::Response::from_string("x").with_header(
                    "Document-Policy: js-profiling"
                        .parse::<tiny_http::Header>()
                        .unwrap(),
                ),
                _ => tiny_http::Response::from_string("not found").with_status_code(404),
            };
            let _ = req.respond(resp);
        }
    });
    port
}

fn http() -> u16 {
    serve(tiny_http::Server::http("127.0.0.1:0").unwrap())
}

fn loader() -> Loader {
    Loader::new(&LoaderConfig::default()).unwrap()
}

#[test]
fn http_bodies_headers_and_redirects() {
    let port = http();
    let l = loader();
    let base = format!("http://127.0.0.1:{port}");
    let r = l
        .fetch(&Url::parse(&format!("{base}/plain")).unwrap())
        .unwrap();
    assert_eq!(
        (r.status, r.text().as_str(), r.redirected()),
        (200, "hello", false)
    );
    let r = l
        .fetch(&Url::parse(&format!("{base}/redirect")).unwrap())
        .unwrap();
    assert_eq!(r.url.as_str(), format!("{base}/plain"));
    assert!(r.redirected());
    assert_eq!(r.url_list.len(), 2);
    let r = l
        .fetch(&Url::parse(&format!("{base}/headers")).unwrap())
        .unwrap();
    assert_eq!(r.headers.get("document-policy"), Some("js-profiling"));
    let r = l
        .fetch(&Url::parse(&format!("{base}/missing")).unwrap())
        .unwrap();
    assert_eq!(r.status, 404);
    assert!(!r.ok());
    let e = l
        .fetch(&Url::parse(&format!("{base}/loop")).unwrap())
        .unwrap_err();
    assert!(matches!(e, LoadError::TooManyRedirects { .. }), "{e}");
}

#[test]
fn a_refused_connection_is_a_one_line_error_naming_the_url() {
    // Bind then drop a listener: nothing listens on that port any more.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = Url::parse(&format!("http://127.0.0.1:{port}/x")).unwrap();
    let e = loader().fetch(&url).unwrap_err();
    let msg = e.to_string();
    assert!(matches!(e, LoadError::ConnectionRefused { .. }), "{msg}");
    assert_eq!(
        msg,
        format!("http://127.0.0.1:{port}/x: connection refused")
    );
}

struct Tls {
    ca_pem: String,
    port: u16,
}

/// An HTTPS server for `web-platform.test` with a certificate from a fresh test CA.
fn https() -> Tls {
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let ca_cert = ca_params.self_signed(&ca_key).unwrap();
    let issuer = rcgen::Issuer::new(ca_params, ca_key);
    let key = rcgen::KeyPair::generate().unwrap();
    let params = rcgen::CertificateParams::new(vec!["web-platform.test".to_string()]).unwrap();
    let cert = params.signed_by(&key, &issuer).unwrap();
    let server = tiny_http::Server::https(
        "127.0.0.1:0",
        tiny_http::SslConfig {
            certificate: cert.pem().into_bytes(),
            private_key: key.serialize_pem().into_bytes(),
        },
    )
    .unwrap();
    Tls {
        ca_pem: ca_cert.pem(),
        port: serve(server),
    }
}

#[test]
fn https_with_a_trusted_test_ca_and_host_overrides() {
    let tls = https();
    let mut ca = tempfile::NamedTempFile::new().unwrap();
    ca.write_all(tls.ca_pem.as_bytes()).unwrap();
    let url = Url::parse(&format!("https://web-platform.test:{}/plain", tls.port)).unwrap();
    let trusted = Loader::new(&LoaderConfig {
        certificate_path: Some(ca.path().to_owned()),
        host_overrides: vec!["web-platform.test".into()],
        ..Default::default()
    })
    .unwrap();
    assert_eq!(trusted.fetch(&url).unwrap().text(), "hello");
    // Without the CA: a TLS failure, one line, naming the URL.
    let untrusted = Loader::new(&LoaderConfig {
        host_overrides: vec!["web-platform.test".into()],
        ..Default::default()
    })
    .unwrap();
    let e = untrusted.fetch(&url).unwrap_err();
    assert!(matches!(e, LoadError::Tls { .. }), "{e}");
    assert!(e.to_string().starts_with(url.as_str()));
    assert!(!e.to_string().contains('\n'));
}

#[test]
fn a_bad_certificate_file_is_reported() {
    let mut f = tempfile::NamedTempFile::new().unwrap();
    f.write_all(b"not a certificate").unwrap();
    let e = Loader::new(&LoaderConfig {
        certificate_path: Some(f.path().to_owned()),
        ..Default::default()
    })
    .unwrap_err();
    assert!(matches!(e, LoadError::Certificate { .. }), "{e}");
}

#[test]
fn files_with_sidecar_headers() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("page.html"), "<p>hi").unwrap();
    std::fs::write(
        dir.path().join("page.html.headers"),
        "Document-Policy: js-profiling\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("__dir__.headers"), "X-Dir: yes\n").unwrap();
    std::fs::write(dir.path().join("other.js"), "1").unwrap();
    let l = loader();
    let page = url_from_input("page.html", dir.path()).unwrap();
    let r = l.fetch(&page).unwrap();
    assert_eq!(r.headers.get("document-policy"), Some("js-profiling"));
    assert_eq!(r.headers.get("x-dir"), Some("yes"));
    assert_eq!(r.headers.get("content-type"), Some("text/html"));
    let other = l.fetch(&page.join("other.js").unwrap()).unwrap();
    assert_eq!(other.headers.get("document-policy"), None);
    assert_eq!(other.headers.get("x-dir"), Some("yes"));
    let e = l.fetch(&page.join("missing.html").unwrap()).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!("{}: no such file", page.join("missing.html").unwrap())
    );
}

#[test]
fn inputs_become_urls_or_clear_errors() {
    let cwd = std::path::Path::new("/tmp");
    assert_eq!(
        url_from_input("a/b.html", cwd).unwrap().as_str(),
        "file:///tmp/a/b.html"
    );
    assert_eq!(
        url_from_input("https://x.test/", cwd).unwrap().as_str(),
        "https://x.test/"
    );
    let e = url_from_input("http://[::1", cwd).unwrap_err();
    assert!(
        e.to_string().starts_with("http://[::1: not a valid URL"),
        "{e}"
    );
    let e = loader()
        .fetch(&Url::parse("ftp://x.test/").unwrap())
        .unwrap_err();
    assert!(matches!(e, LoadError::UnsupportedScheme { .. }));
}

#[test]
fn about_blank_is_an_empty_html_document_and_other_about_urls_are_not() {
    let l = loader();
    let r = l.fetch(&Url::parse("about:blank").unwrap()).unwrap();
    assert_eq!((r.status, r.text().as_str()), (200, ""));
    assert_eq!(
        r.headers.get("content-type"),
        Some("text/html;charset=utf-8")
    );
    let e = l.fetch(&Url::parse("about:config").unwrap()).unwrap_err();
    assert!(matches!(e, LoadError::UnsupportedScheme { .. }), "{e}");
}

#[test]
fn data_urls() {
    let l = loader();
    let r = l
        .fetch(&Url::parse("data:text/javascript,export%20default%2042").unwrap())
        .unwrap();
    assert_eq!(r.text(), "export default 42");
    assert_eq!(r.headers.get("content-type"), Some("text/javascript"));
    let r = l.fetch(&Url::parse("data:;base64,aGk=").unwrap()).unwrap();
    assert_eq!(r.text(), "hi");
    assert!(l.fetch(&Url::parse("data:nocomma").unwrap()).is_err());
    // Fetch's data: URL processor: `;base64` in any case, forgiving padding and whitespace,
    // and text/plain;charset=US-ASCII when no MIME type is given.
    for (url, body, mime) in [
        ("data:;BASE64,aGk", "hi", "text/plain;charset=US-ASCII"),
        ("data:text/html;Base64,a G k =", "hi", "text/html"),
        ("data:,a%20b", "a b", "text/plain;charset=US-ASCII"),
        (
            "data:text/plain;charset=utf-8,x",
            "x",
            "text/plain;charset=utf-8",
        ),
    ] {
        let r = l.fetch(&Url::parse(url).unwrap()).unwrap();
        assert_eq!(
            (r.text().as_str(), r.headers.get("content-type")),
            (body, Some(mime)),
            "{url}"
        );
    }
    assert!(l.fetch(&Url::parse("data:;base64,a").unwrap()).is_err());
}

/// A raw TCP server that answers each connection with `respond` (which may never return).
fn raw_server(respond: fn(std::net::TcpStream)) -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            thread::spawn(move || respond(stream));
        }
    });
    port
}

fn limited(deadline_ms: Option<u64>, max_bytes: u64) -> Loader {
    let deadline =
        deadline_ms.map(|ms| std::time::Instant::now() + std::time::Duration::from_millis(ms));
    loader().limited(deadline, max_bytes)
}

#[test]
fn bodies_over_the_limit_are_an_error_for_that_load_only() {
    // Over HTTP, with a Content-Length, and chunked (no length: read up to the limit only).
    let port = raw_server(|mut s| {
        let mut buf = [0u8; 4096];
        let n = std::io::Read::read(&mut s, &mut buf).unwrap_or(0);
        let head = String::from_utf8_lossy(&buf[..n]);
        let body = "x".repeat(1000);
        let response = if head.starts_with("GET /chunked") {
            format!("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n3e8\r\n{body}\r\n0\r\n\r\n")
        } else {
            format!("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\nConnection: close\r\n\r\n{body}")
        };
        let _ = s.write_all(response.as_bytes());
    });
    for path in ["sized", "chunked"] {
        let url = Url::parse(&format!("http://127.0.0.1:{port}/{path}")).unwrap();
        let e = limited(None, 999).fetch(&url).unwrap_err();
        assert!(matches!(e, LoadError::TooLarge { limit: 999, .. }), "{e}");
        assert!(e.to_string().contains("network.max_response_bytes"), "{e}");
        assert_eq!(limited(None, 1000).fetch(&url).unwrap().body.len(), 1000);
    }
    // A file, checked by its size before it is read.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.txt");
    std::fs::write(&path, vec![b'a'; 1000]).unwrap();
    let url = Url::from_file_path(&path).unwrap();
    let e = limited(None, 999).fetch(&url).unwrap_err();
    assert!(matches!(e, LoadError::TooLarge { .. }), "{e}");
    assert_eq!(limited(None, 1000).fetch(&url).unwrap().body.len(), 1000);
    // A data: URL, once decoded.
    let url = Url::parse(&format!("data:text/plain,{}", "a".repeat(1000))).unwrap();
    assert!(matches!(
        limited(None, 999).fetch(&url),
        Err(LoadError::TooLarge { .. })
    ));
    assert_eq!(limited(None, 1000).fetch(&url).unwrap().body.len(), 1000);
}

#[test]
fn files_that_are_not_regular_are_refused_before_a_read() {
    let dir = tempfile::tempdir().unwrap();
    // A FIFO nobody writes to would block a read forever.
    let fifo = dir.path().join("fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .is_ok_and(|s| s.success());
    let mut targets = vec![dir.path().to_path_buf()];
    if made {
        targets.push(fifo);
    }
    for path in targets {
        let e = loader()
            .fetch(&Url::from_file_path(&path).unwrap())
            .unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
    }
}

#[test]
fn a_server_that_never_answers_or_dribbles_ends_at_the_deadline() {
    // Accepts, reads the request, and never answers.
    let silent = raw_server(|s| {
        let _keep = s;
        thread::sleep(std::time::Duration::from_secs(120));
    });
    // Sends headers, then one byte a second of a body that never ends.
    let dribble = raw_server(|mut s| {
        let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n");
        for _ in 0..120 {
            if s.write_all(b"x").is_err() {
                return;
            }
            thread::sleep(std::time::Duration::from_secs(1));
        }
    });
    for port in [silent, dribble] {
        let url = Url::parse(&format!("http://127.0.0.1:{port}/")).unwrap();
        let start = std::time::Instant::now();
        let e = limited(Some(1500), 1 << 20).fetch(&url).unwrap_err();
        let took = start.elapsed();
        assert!(matches!(e, LoadError::TimedOut { .. }), "{e}");
        // Not before the deadline; after it, in time a loaded machine needs, but well before
        // the servers give up (120 s).
        assert!(
            took >= std::time::Duration::from_millis(1400)
                && took < std::time::Duration::from_secs(60),
            "{took:?}"
        );
    }
    // After the deadline, nothing more is even tried.
    let url = Url::parse(&format!("http://127.0.0.1:{silent}/")).unwrap();
    let e = limited(Some(0), 1 << 20).fetch(&url).unwrap_err();
    assert!(e.to_string().contains("deadline"), "{e}");
}
