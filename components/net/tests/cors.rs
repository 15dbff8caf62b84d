//! CORS, its preflight and the preflight cache, request methods and bodies, against a real
//! HTTP server on 127.0.0.1 that records every request it gets.
//!
//! The server answers by its query string, as WPT's python handlers do:
//! - `acao`, `acac`: `Access-Control-Allow-Origin` / `-Credentials: true` on every answer
//!   (`actual_acao` instead of `acao` on a non-`OPTIONS` answer);
//! - on `OPTIONS`: `methods`, `headers`, `max_age` (the `Access-Control-Allow-*`/`-Max-Age`
//!   values), `preflight_status` (200 unless given), `preflight_redirect` (a 302 to `/moved`);
//! - otherwise: `redirect_status` with `location` (a redirect), else 200 `ok`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use jsprof_net::{
    Credentials, HeaderList, LoadError, Loader, LoaderConfig, Mode, Origin, Redirect, Request,
    Tainting, Url,
};

/// A request as the server got it.
#[derive(Debug, Clone)]
struct Seen {
    method: String,
    path: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Seen {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

struct Server {
    base: String,
    log: Arc<Mutex<Vec<Seen>>>,
}

impl Server {
    fn start() -> Server {
        let server = tiny_http::Server::http("127.0.0.1:0").unwrap();
        let port = server.server_addr().to_ip().unwrap().port();
        let log = Arc::new(Mutex::new(Vec::new()));
        let seen = log.clone();
        thread::spawn(move || {
            for mut req in server.incoming_requests() {
                let mut body = Vec::new();
                req.as_reader().read_to_end(&mut body).unwrap();
                let s = Seen {
                    method: req.method().as_str().to_owned(),
                    path: req.url().to_owned(),
                    headers: req
                        .headers()
                        .iter()
                        .map(|h| {
                            (
                                h.field.as_str().as_str().to_owned(),
                                h.value.as_str().to_owned(),
                            )
                        })
                        .collect(),
                    body,
                };
                let resp = answer(&s);
                seen.lock().unwrap().push(s);
                let _ = req.respond(resp);
            }
        });
        Server {
            base: format!("http://127.0.0.1:{port}"),
            log,
        }
    }

    fn url(&self, path_and_query: &str) -> Url {
        Url::parse(&format!("{}{path_and_query}", self.base)).unwrap()
    }

    /// The requests seen so far, and forgets them.
    fn take(&self) -> Vec<Seen> {
        std::mem::take(&mut *self.log.lock().unwrap())
    }
}

fn answer(s: &Seen) -> tiny_http::Response<std::io::Cursor<Vec<u8>>> {
    let url = Url::parse(&format!("http://x{}", s.path)).unwrap();
    let q: HashMap<String, String> = url.query_pairs().into_owned().collect();
    let header =
        |n: &str, v: &str| tiny_http::Header::from_bytes(n.as_bytes(), v.as_bytes()).unwrap();
    let mut headers = Vec::new();
    let preflight = s.method == "OPTIONS";
    let acao = if preflight {
        q.get("acao")
    } else {
        q.get("actual_acao").or(q.get("acao"))
    };
    if let Some(v) = acao {
        headers.push(header("Access-Control-Allow-Origin", v));
    }
    if q.contains_key("acac") {
        headers.push(header("Access-Control-Allow-Credentials", "true"));
    }
    let mut status = 200;
    if preflight {
        for (param, name) in [
            ("methods", "Access-Control-Allow-Methods"),
            ("headers", "Access-Control-Allow-Headers"),
            ("max_age", "Access-Control-Max-Age"),
        ] {
            if let Some(v) = q.get(param) {
                headers.push(header(name, v));
            }
        }
        if let Some(v) = q.get("preflight_status") {
            status = v.parse().unwrap();
        }
        if q.contains_key("preflight_redirect") {
            status = 302;
            headers.push(header("Location", "/moved?acao=*"));
        }
    } else if let Some(v) = q.get("redirect_status") {
        status = v.parse().unwrap();
        headers.push(header("Location", &q["location"]));
    }
    let mut resp = tiny_http::Response::from_data(b"ok".to_vec()).with_status_code(status);
    for h in headers {
        resp.add_header(h);
    }
    resp
}

fn loader() -> Loader {
    Loader::new(&LoaderConfig::default()).unwrap()
}

/// The client's origin in these tests: another origin than the server's.
fn client() -> Origin {
    Origin::of(&Url::parse("http://client.test").unwrap())
}

/// A request of fetch() (the unsafe-request flag set) from `client()`.
fn api(url: Url, method: &str, headers: &[(&str, &str)], body: Option<&[u8]>) -> Request {
    let mut r = Request::new(url, client(), Mode::Cors, Credentials::SameOrigin);
    r.method = method.into();
    for (n, v) in headers {
        r.headers.append(n, v.as_bytes());
    }
    r.body = body.map(<[u8]>::to_vec);
    r.unsafe_request = true;
    r
}

fn methods(log: &[Seen]) -> Vec<&str> {
    log.iter().map(|s| s.method.as_str()).collect()
}

#[test]
fn safelisted_requests_go_without_a_preflight() {
    let s = Server::start();
    let l = loader();
    let url = s.url("/r?acao=*");
    for (method, headers, body) in [
        (
            "GET",
            vec![("Accept", "*/*"), ("Content-Language", "fr")],
            None,
        ),
        ("HEAD", vec![("Accept-Language", "en-US, fr;q=0.5")], None),
        (
            "POST",
            vec![("Content-Type", "text/plain;charset=UTF-8")],
            Some(&b"hi"[..]),
        ),
        (
            "POST",
            vec![("Content-Type", "application/x-www-form-urlencoded")],
            Some(&b"a=1"[..]),
        ),
        ("GET", vec![("Range", "bytes=0-10")], None),
    ] {
        let r = l
            .fetch_request(&api(url.clone(), method, &headers, body))
            .unwrap();
        assert_eq!((r.status, r.tainting), (200, Tainting::Cors), "{method}");
        let log = s.take();
        assert_eq!(methods(&log), [method], "{method} {headers:?}");
        assert_eq!(log[0].header("Origin"), Some("http://client.test"));
    }
}

#[test]
fn other_methods_and_headers_are_preflighted_then_sent() {
    let s = Server::start();
    let l = loader();
    let url = s.url("/r?acao=http://client.test&methods=PUT,PATCH&headers=X-Custom,content-type");
    let body: Vec<u8> = (0..=255).collect();
    let r = l
        .fetch_request(&api(
            url.clone(),
            "PUT",
            &[("X-Custom", "1"), ("Content-Type", "application/json")],
            Some(&body),
        ))
        .unwrap();
    assert_eq!(r.status, 200);
    let log = s.take();
    assert_eq!(methods(&log), ["OPTIONS", "PUT"]);
    let (pre, actual) = (&log[0], &log[1]);
    // The preflight: the method, the unsafe names (sorted, lowercase, no space), the origin,
    // `Accept: */*`; no author header and no body.
    assert_eq!(pre.header("Access-Control-Request-Method"), Some("PUT"));
    assert_eq!(
        pre.header("Access-Control-Request-Headers"),
        Some("content-type,x-custom")
    );
    assert_eq!(pre.header("Origin"), Some("http://client.test"));
    assert_eq!(pre.header("Accept"), Some("*/*"));
    assert_eq!(pre.header("X-Custom"), None);
    assert!(pre.body.is_empty());
    // The request itself, with every byte of its body.
    assert_eq!(actual.header("X-Custom"), Some("1"));
    assert_eq!(actual.body, body);
    // A method the safelist has, with an unsafe header: the preflight asks for GET.
    let r = l
        .fetch_request(&api(
            s.url("/r?acao=*&headers=x-other"),
            "GET",
            &[("x-other", "a")],
            None,
        ))
        .unwrap();
    assert_eq!(r.status, 200);
    let log = s.take();
    assert_eq!(methods(&log), ["OPTIONS", "GET"]);
    assert_eq!(log[0].header("Access-Control-Request-Method"), Some("GET"));
    // A safelisted header whose value is not: Content-Type text/html is preflighted.
    l.fetch_request(&api(
        s.url("/r?acao=*&headers=content-type"),
        "POST",
        &[("Content-Type", "text/html")],
        Some(b"<p>"),
    ))
    .unwrap();
    assert_eq!(methods(&s.take()), ["OPTIONS", "POST"]);
}

/// Every way a preflight fails: a network error naming the preflight, and the request itself
/// never sent.
#[test]
fn each_failing_preflight_is_a_network_error_and_the_request_is_never_sent() {
    let s = Server::start();
    let l = loader();
    // (what, the server's query, the request's headers, its credentials mode)
    type Case<'a> = (&'a str, &'a str, &'a [(&'a str, &'a str)], Credentials);
    let cases: &[Case] = &[
        (
            "status 300",
            "acao=*&methods=PUT&preflight_status=300",
            &[],
            Credentials::SameOrigin,
        ),
        (
            "status 404",
            "acao=*&methods=PUT&preflight_status=404",
            &[],
            Credentials::SameOrigin,
        ),
        (
            "status 500",
            "acao=*&methods=PUT&preflight_status=500",
            &[],
            Credentials::SameOrigin,
        ),
        (
            "a redirect",
            "acao=*&methods=PUT&preflight_redirect",
            &[],
            Credentials::SameOrigin,
        ),
        ("no Allow-Methods", "acao=*", &[], Credentials::SameOrigin),
        (
            "another method",
            "acao=*&methods=DELETE,put",
            &[],
            Credentials::SameOrigin,
        ),
        (
            "a refused header",
            "acao=*&methods=PUT&headers=x-a",
            &[("X-B", "1")],
            Credentials::SameOrigin,
        ),
        (
            "no Allow-Origin",
            "methods=PUT",
            &[],
            Credentials::SameOrigin,
        ),
        (
            "a wrong Allow-Origin",
            "acao=http://other.test&methods=PUT",
            &[],
            Credentials::SameOrigin,
        ),
        (
            "`*` origin with credentials",
            "acao=*&acac&methods=PUT",
            &[],
            Credentials::Include,
        ),
        (
            "no Allow-Credentials",
            "acao=http://client.test&methods=PUT",
            &[],
            Credentials::Include,
        ),
        (
            "`*` method with credentials",
            "acao=http://client.test&acac&methods=*",
            &[],
            Credentials::Include,
        ),
        (
            "`*` header with credentials",
            "acao=http://client.test&acac&methods=PUT&headers=*",
            &[("X-A", "1")],
            Credentials::Include,
        ),
        (
            "Authorization under `*`",
            "acao=*&methods=PUT&headers=*",
            &[("Authorization", "x")],
            Credentials::SameOrigin,
        ),
        (
            "a bad method token",
            "acao=*&methods=Bad%20method",
            &[],
            Credentials::SameOrigin,
        ),
        (
            "a bad header token",
            "acao=*&methods=PUT&headers=a%20b",
            &[("a", "1")],
            Credentials::SameOrigin,
        ),
    ];
    for (what, query, headers, credentials) in cases {
        let mut r = api(s.url(&format!("/r?{query}")), "PUT", headers, Some(b"body"));
        r.credentials = *credentials;
        let e = l.fetch_request(&r).unwrap_err();
        assert!(
            matches!(&e, LoadError::Blocked { reason, .. } if reason.starts_with("CORS preflight")),
            "{what}: {e}"
        );
        let log = s.take();
        assert_eq!(methods(&log), ["OPTIONS"], "{what}: {log:?}");
    }
    // The same requests the server does allow go through (the cases above fail for their
    // own reason).
    for (query, headers, credentials) in [
        (
            "acao=*&methods=PUT&preflight_status=204",
            &[][..],
            Credentials::SameOrigin,
        ),
        ("acao=*&methods=*", &[], Credentials::SameOrigin),
        (
            "acao=*&methods=PUT&headers=*",
            &[("X-B", "1")],
            Credentials::SameOrigin,
        ),
        (
            "acao=*&methods=PUT&headers=*,Authorization",
            &[("Authorization", "x")],
            Credentials::SameOrigin,
        ),
        (
            "acao=http://client.test&acac&methods=PUT",
            &[],
            Credentials::Include,
        ),
    ] {
        let mut r = api(s.url(&format!("/r?{query}")), "PUT", headers, Some(b"body"));
        r.credentials = credentials;
        assert_eq!(l.fetch_request(&r).unwrap().status, 200, "{query}");
        assert_eq!(methods(&s.take()), ["OPTIONS", "PUT"], "{query}");
    }
}

#[test]
fn the_preflight_cache_spares_repeated_preflights_until_max_age() {
    let s = Server::start();
    let l = loader();
    let put = |query: &str, headers: &[(&str, &str)]| {
        l.fetch_request(&api(s.url(query), "PUT", headers, Some(b"x")))
            .map(|r| r.status)
    };
    // max-age 60: the second request, and one with fewer headers, go without one.
    let q = "/r?acao=*&methods=PUT&headers=x-a,x-b&max_age=60";
    assert_eq!(put(q, &[("X-A", "1")]).unwrap(), 200);
    assert_eq!(methods(&s.take()), ["OPTIONS", "PUT"]);
    assert_eq!(put(q, &[("X-A", "2")]).unwrap(), 200);
    assert_eq!(put(q, &[]).unwrap(), 200);
    assert_eq!(methods(&s.take()), ["PUT", "PUT"]);
    // Every name the preflight allowed was cached, X-B too.
    assert_eq!(put(q, &[("X-B", "1")]).unwrap(), 200);
    assert_eq!(methods(&s.take()), ["PUT"]);
    // A header it did not allow is asked for (and refused: the server allows x-a and x-b);
    // the failure clears the URL's entries, so X-A is asked for again.
    assert!(put(q, &[("X-C", "1")]).is_err());
    assert_eq!(methods(&s.take()), ["OPTIONS"]);
    assert_eq!(put(q, &[("X-A", "1")]).unwrap(), 200);
    assert_eq!(methods(&s.take()), ["OPTIONS", "PUT"]);
    // Another URL has entries of its own.
    assert_eq!(put(&format!("{q}&other"), &[("X-A", "1")]).unwrap(), 200);
    assert_eq!(methods(&s.take()), ["OPTIONS", "PUT"]);
    // Entries with credentials are their own.
    let mut r = api(
        s.url("/r?acao=http://client.test&acac&methods=PUT&max_age=60"),
        "PUT",
        &[],
        None,
    );
    l.fetch_request(&r).unwrap();
    r.credentials = Credentials::Include;
    l.fetch_request(&r).unwrap();
    l.fetch_request(&r).unwrap();
    assert_eq!(
        methods(&s.take()),
        ["OPTIONS", "PUT", "OPTIONS", "PUT", "PUT"]
    );
    // max-age 0: every request is preflighted.
    let q0 = "/r?acao=*&methods=PUT&max_age=0";
    put(q0, &[]).unwrap();
    put(q0, &[]).unwrap();
    assert_eq!(methods(&s.take()), ["OPTIONS", "PUT", "OPTIONS", "PUT"]);
    // Without Access-Control-Max-Age the entry lives 5 s: the next request is spared.
    let q5 = "/r?acao=*&methods=PUT";
    put(q5, &[]).unwrap();
    put(q5, &[]).unwrap();
    assert_eq!(methods(&s.take()), ["OPTIONS", "PUT", "PUT"]);
    // max-age 1: spared until a second has passed, preflighted again after. Polled: the
    // request that preflights again must come one second or more after the first.
    let q1 = "/r?acao=*&methods=PUT&max_age=1";
    let start = Instant::now();
    put(q1, &[]).unwrap();
    assert_eq!(methods(&s.take()), ["OPTIONS", "PUT"]);
    loop {
        put(q1, &[]).unwrap();
        let log = s.take();
        if methods(&log) == ["OPTIONS", "PUT"] {
            assert!(
                start.elapsed() >= Duration::from_secs(1),
                "{:?}",
                start.elapsed()
            );
            break;
        }
        assert_eq!(methods(&log), ["PUT"]);
        assert!(start.elapsed() < Duration::from_secs(30), "never expired");
        thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_failed_request_clears_its_cache_entries() {
    let s = Server::start();
    let l = loader();
    // One URL allowed and cached; another whose preflight passes (and is cached) but whose
    // response then fails the CORS check.
    let ok = "/r?acao=*&methods=PUT&max_age=60";
    l.fetch_request(&api(s.url(ok), "PUT", &[], None)).unwrap();
    let bad = "/r?acao=*&methods=PUT&max_age=60&actual_acao=http://other.test";
    l.fetch_request(&api(s.url(bad), "PUT", &[], None))
        .unwrap_err();
    assert_eq!(methods(&s.take()), ["OPTIONS", "PUT", "OPTIONS", "PUT"]);
    assert_eq!(
        l.preflight_cache().len(),
        1,
        "the failed URL's entry is gone"
    );
    l.fetch_request(&api(s.url(bad), "PUT", &[], None))
        .unwrap_err();
    assert_eq!(methods(&s.take()), ["OPTIONS", "PUT"], "preflighted again");
    l.fetch_request(&api(s.url(ok), "PUT", &[], None)).unwrap();
    assert_eq!(methods(&s.take()), ["PUT"], "the other URL's entry stays");
}

#[test]
fn methods_and_bodies_reach_the_server_as_sent() {
    let s = Server::start();
    let l = loader();
    // Same-origin: the client is the server's own origin.
    let origin = Origin::of(&s.url("/"));
    let bytes: Vec<u8> = (0..=255).rev().collect();
    for method in ["POST", "PUT", "PATCH", "DELETE", "OPTIONS", "NEW"] {
        let mut r = Request::new(
            s.url("/same"),
            origin.clone(),
            Mode::Cors,
            Credentials::SameOrigin,
        );
        r.method = method.into();
        r.body = Some(bytes.clone());
        r.unsafe_request = true;
        r.headers
            .append("Content-Type", b"application/octet-stream");
        let resp = l.fetch_request(&r).unwrap();
        assert_eq!((resp.status, resp.tainting), (200, Tainting::Basic));
        let log = s.take();
        assert_eq!(methods(&log), [method], "same-origin: no preflight");
        assert_eq!(log[0].body, bytes, "{method}");
        assert_eq!(log[0].header("Content-Length"), Some("256"));
        assert_eq!(
            log[0].header("Content-Type"),
            Some("application/octet-stream")
        );
        // Origin goes with any method but GET and HEAD.
        assert_eq!(log[0].header("Origin"), Some(s.base.as_str()));
    }
    // A POST without a body says Content-Length: 0; a same-origin GET has no Origin.
    let mut r = Request::new(
        s.url("/same"),
        origin.clone(),
        Mode::Cors,
        Credentials::SameOrigin,
    );
    r.method = "POST".into();
    l.fetch_request(&r).unwrap();
    r.method = "GET".into();
    l.fetch_request(&r).unwrap();
    let log = s.take();
    assert_eq!(log[0].header("Content-Length"), Some("0"));
    assert_eq!(log[1].header("Origin"), None);
    // HEAD: no body in the response.
    r.method = "HEAD".into();
    assert!(l.fetch_request(&r).unwrap().body.is_empty());
    s.take();
}

#[test]
fn redirects_resend_or_drop_the_body_by_status() {
    let s = Server::start();
    let l = loader();
    let origin = Origin::of(&s.url("/"));
    let send = |method: &str, status: u16| {
        let url = s.url(&format!(
            "/from?redirect_status={status}&location=%2Fto%3Fx"
        ));
        let mut r = Request::new(url, origin.clone(), Mode::Cors, Credentials::SameOrigin);
        r.method = method.into();
        r.body = Some(b"payload".to_vec());
        r.headers.append("Content-Type", b"text/plain");
        r.headers.append("Content-Language", b"fr");
        r.headers.append("X-Kept", b"1");
        r.unsafe_request = true;
        let resp = l.fetch_request(&r).unwrap();
        assert!(resp.redirected());
        let log = s.take();
        assert_eq!(log.len(), 2);
        log[1].clone()
    };
    // 307 and 308: the same method and body again.
    for status in [307, 308] {
        for method in ["POST", "PUT"] {
            let to = send(method, status);
            assert_eq!(
                (to.method.as_str(), &to.body[..]),
                (method, &b"payload"[..])
            );
            assert_eq!(to.header("Content-Type"), Some("text/plain"));
        }
    }
    // 301 and 302 change only a POST: to a GET without the body and its headers.
    for status in [301, 302] {
        let to = send("POST", status);
        assert_eq!((to.method.as_str(), to.body.len()), ("GET", 0));
        assert_eq!(to.header("Content-Type"), None);
        assert_eq!(to.header("Content-Language"), None);
        assert_eq!(to.header("X-Kept"), Some("1"));
        let to = send("PUT", status);
        assert_eq!((to.method.as_str(), &to.body[..]), ("PUT", &b"payload"[..]));
    }
    // 303 makes anything but GET/HEAD a GET.
    for method in ["POST", "PUT", "DELETE"] {
        let to = send(method, 303);
        assert_eq!((to.method.as_str(), to.body.len()), ("GET", 0), "{method}");
    }
}

#[test]
fn cross_origin_redirects_drop_authorization_and_redirect_modes_hold() {
    let (a, b) = (Server::start(), Server::start());
    let l = loader();
    let origin = Origin::of(&a.url("/"));
    let to_b = format!(
        "/from?redirect_status=307&location={}",
        url_encode(&format!(
            "{}/to?acao=*&headers=authorization&methods=GET",
            b.base
        ))
    );
    let mut r = Request::new(
        a.url(&to_b),
        origin.clone(),
        Mode::Cors,
        Credentials::SameOrigin,
    );
    r.headers.append("Authorization", b"secret");
    r.unsafe_request = true;
    l.fetch_request(&r).unwrap();
    assert_eq!(a.take()[0].header("Authorization"), Some("secret"));
    let log = b.take();
    // Without Authorization, nothing is unsafe any more: no preflight at b.
    assert_eq!(methods(&log), ["GET"]);
    assert_eq!(log[0].header("Authorization"), None);
    // redirect: "error" fails at the redirect; "manual" returns it.
    let same = a.url("/from?redirect_status=302&location=%2Fto");
    let mut r = Request::new(same, origin, Mode::Cors, Credentials::SameOrigin);
    r.redirect = Redirect::Error;
    assert!(matches!(
        l.fetch_request(&r),
        Err(LoadError::Blocked { .. })
    ));
    r.redirect = Redirect::Manual;
    let resp = l.fetch_request(&r).unwrap();
    assert!(resp.opaque_redirect);
    assert_eq!(resp.status, 302);
    assert_eq!(methods(&a.take()), ["GET", "GET"], "/to was never fetched");
}

#[test]
fn a_no_cors_request_to_another_origin_must_follow_redirects_and_is_opaque() {
    let s = Server::start();
    let l = loader();
    let mut r = Request::new(s.url("/x"), client(), Mode::NoCors, Credentials::Include);
    r.method = "POST".into();
    r.body = Some(b"a=1".to_vec());
    r.unsafe_request = true;
    let resp = l.fetch_request(&r).unwrap();
    assert_eq!(resp.tainting, Tainting::Opaque);
    let log = s.take();
    assert_eq!(methods(&log), ["POST"], "no-cors: never a preflight");
    assert_eq!(log[0].header("Origin"), Some("http://client.test"));
    r.redirect = Redirect::Manual;
    assert!(l.fetch_request(&r).is_err());
    assert!(s.take().is_empty());
}

#[test]
fn header_lists_from_the_prelude_parse_or_are_refused() {
    let l = HeaderList::from_lines(b"Accept:*/*\nX-A: spaced : colon\n\n").unwrap();
    let got: Vec<(&str, &[u8])> = l.iter().collect();
    assert_eq!(
        got,
        [("Accept", &b"*/*"[..]), ("X-A", &b" spaced : colon"[..])]
    );
    assert!(HeaderList::from_lines(b"no colon\n").is_err());
    assert!(HeaderList::from_lines(b"bad name:1\n").is_err());
}

fn url_encode(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}
