//! Loading for jsprof: `file:` URLs (with WPT-style `.headers` sidecars) and `http:`/`https:`
//! URLs (rustls, redirects followed by hand so that every hop is known), any method and body,
//! CORS with its preflight and the preflight cache, plus the helpers the script host needs to
//! reason about origins, header rules and MIME types.
//!
//! A [`Response`] keeps its final URL, whether a redirect led to it, its headers and its body:
//! what CORS checks, muted errors and `Document-Policy` need later.

#![forbid(unsafe_code)]
// Page content must never make the engine panic: `unwrap`/`expect` only where an invariant
// (not input) guarantees the value, each with its reason (tests may use them freely).
#![warn(clippy::unwrap_used, clippy::expect_used)]
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

pub mod cors;
mod fetch;
mod headers;
pub mod mime;
mod origin;

use std::fs;
use std::io::Read;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub use fetch::{Credentials, Mode, Redirect, Request, Tainting};
pub use headers::{sidecar_headers, HeaderList, Headers};
pub use origin::{same_origin, OpaqueId, Origin};
pub use url::Url;

/// How many redirects a fetch follows before giving up (the Fetch standard's limit).
pub const MAX_REDIRECTS: usize = 20;

/// The largest body a load accepts unless told otherwise ([`Loader::limited`]); the
/// `network.max_response_bytes` pref has the same default.
pub const DEFAULT_MAX_RESPONSE_BYTES: u64 = 64 << 20;

/// How long one HTTP request may take, at most, without a run deadline sooner.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// Why something could not be loaded. Every variant names the URL; `Display` is one line.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("{input}: not a valid URL or file path ({cause})")]
    BadUrl { input: String, cause: String },
    #[error("{url}: unsupported URL scheme '{scheme}'")]
    UnsupportedScheme { url: Url, scheme: String },
    #[error("{url}: no such file")]
    NotFound { url: Url },
    #[error("{url}: {cause}")]
    Io { url: Url, cause: String },
    #[error("{url}: connection refused")]
    ConnectionRefused { url: Url },
    #[error("{url}: TLS failure ({cause})")]
    Tls { url: Url, cause: String },
    #[error("{url}: {cause}")]
    Http { url: Url, cause: String },
    #[error("{url}: more than {MAX_REDIRECTS} redirects")]
    TooManyRedirects { url: Url },
    #[error("{url}: redirect without a valid Location header")]
    BadRedirect { url: Url },
    /// A network error the Fetch standard's checks raise: a page loading a `file:` URL, a
    /// failed CORS check, a cross-origin load in same-origin mode, a redirect to a
    /// non-HTTP(S) URL.
    #[error("{url}: blocked: {reason}")]
    Blocked { url: Url, reason: String },
    #[error("{path}: cannot read certificate ({cause})")]
    Certificate { path: PathBuf, cause: String },
    /// The body is larger than the loader accepts (`network.max_response_bytes`).
    #[error("{url}: response larger than the limit of {limit} bytes (network.max_response_bytes)")]
    TooLarge { url: Url, limit: u64 },
    /// No whole response before the request's time ran out (the run's deadline, or
    /// [`REQUEST_TIMEOUT`]).
    #[error("{url}: no complete response in time ({cause})")]
    TimedOut { url: Url, cause: String },
}

impl LoadError {
    /// A body over `limit` bytes (`network.max_response_bytes`).
    fn too_large(url: &Url, limit: u64) -> LoadError {
        LoadError::TooLarge {
            url: url.clone(),
            limit,
        }
    }
}

/// A loaded resource.
#[derive(Debug, Clone)]
pub struct Response {
    /// The URL the body came from, after redirects.
    pub url: Url,
    /// Every URL fetched, the first being the requested one.
    pub url_list: Vec<Url>,
    /// HTTP status (200 for a file that exists).
    pub status: u16,
    /// The status message (<https://fetch.spec.whatwg.org/#concept-response-status-message>):
    /// the status code's canonical reason phrase over HTTP, empty otherwise.
    pub status_text: String,
    pub headers: Headers,
    pub body: Vec<u8>,
    /// How the fetch tainted the response (<https://fetch.spec.whatwg.org/#concept-request-response-tainting>):
    /// an `Opaque` body must not reach the page (a classic script from it has muted errors).
    pub tainting: Tainting,
    /// A redirect returned as the response (redirect mode `manual`): the page sees an
    /// opaque-redirect filtered response.
    pub opaque_redirect: bool,
}

impl Response {
    /// A response made here rather than fetched over a network (a file, a `data:` URL,
    /// `about:blank`, an inline script's text): status 200 from `url` itself, basic
    /// tainting, no redirect.
    pub fn local(url: &Url, headers: Headers, body: Vec<u8>) -> Response {
        Response {
            url: url.clone(),
            url_list: vec![url.clone()],
            status: 200,
            status_text: String::new(),
            headers,
            body,
            tainting: Tainting::Basic,
            opaque_redirect: false,
        }
    }

    /// Whether the response came through at least one redirect.
    pub fn redirected(&self) -> bool {
        self.url_list.len() > 1
    }

    /// A 2xx status.
    pub fn ok(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// Whether the response is opaque to its client (cross-origin without CORS).
    pub fn is_opaque(&self) -> bool {
        self.tainting == Tainting::Opaque
    }

    /// The body as text (UTF-8, invalid bytes replaced).
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// How the loader is set up.
#[derive(Debug, Clone, Default)]
pub struct LoaderConfig {
    /// A PEM file with extra CA certificates to trust (a test CA).
    pub certificate_path: Option<PathBuf>,
    /// Host names that resolve to 127.0.0.1 (WPT's `web-platform.test` and friends).
    pub host_overrides: Vec<String>,
    /// Per-request timeout ([`REQUEST_TIMEOUT`] if not given).
    pub timeout: Option<Duration>,
}

/// Loads `file:`, `http:` and `https:` URLs. Cheap to share between threads.
#[derive(Debug, Clone)]
pub struct Loader {
    client: reqwest::blocking::Client,
    /// Loads end (as [`LoadError::TimedOut`]) by this instant: a run's `--timeout`.
    deadline: Option<Instant>,
    /// The largest body accepted ([`LoadError::TooLarge`] beyond it).
    max_response_bytes: u64,
    /// The CORS-preflight cache, shared by every loader made from this one (the process's
    /// one network partition).
    preflight_cache: Arc<cors::PreflightCache>,
}

impl Loader {
    pub fn new(config: &LoaderConfig) -> Result<Self, LoadError> {
        let mut builder = reqwest::blocking::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("jsprof/", env!("CARGO_PKG_VERSION")))
            .timeout(config.timeout.unwrap_or(REQUEST_TIMEOUT))
            // No idle connections kept: a server that closes a kept-alive TLS connection
            // without close_notify (wptserve does) would fail the next request on it.
            .pool_max_idle_per_host(0);
        if let Some(path) = &config.certificate_path {
            let cert_err = |cause: String| LoadError::Certificate {
                path: path.clone(),
                cause,
            };
            let pem = fs::read(path).map_err(|e| cert_err(e.to_string()))?;
            let certs =
                reqwest::Certificate::from_pem_bundle(&pem).map_err(|e| cert_err(e.to_string()))?;
            if certs.is_empty() {
                return Err(cert_err("no PEM certificate in it".into()));
            }
            for cert in certs {
                builder = builder.add_root_certificate(cert);
            }
        }
        for host in &config.host_overrides {
            // Port 0: keep the URL's port.
            builder = builder.resolve(host, SocketAddr::from(([127, 0, 0, 1], 0)));
        }
        let client = builder.build().map_err(|e| LoadError::Certificate {
            path: config.certificate_path.clone().unwrap_or_default(),
            cause: e.to_string(),
        })?;
        Ok(Loader {
            client,
            deadline: None,
            max_response_bytes: DEFAULT_MAX_RESPONSE_BYTES,
            preflight_cache: Arc::default(),
        })
    }

    /// This loader (sharing its connections), with every load ending by `deadline` and
    /// accepting bodies of at most `max_response_bytes`.
    pub fn limited(&self, deadline: Option<Instant>, max_response_bytes: u64) -> Loader {
        Loader {
            client: self.client.clone(),
            deadline,
            max_response_bytes,
            preflight_cache: self.preflight_cache.clone(),
        }
    }

    /// The run's deadline every load of this loader ends by, if any.
    pub fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

    /// This loader, with every load also ending within `timeout` from now (a synchronous
    /// `XMLHttpRequest`'s `timeout`).
    pub fn with_timeout(&self, timeout: Duration) -> Loader {
        let end = Instant::now() + timeout;
        let deadline = Some(self.deadline.map_or(end, |d| d.min(end)));
        Loader {
            deadline,
            ..self.clone()
        }
    }

    /// The CORS-preflight cache this loader shares.
    pub fn preflight_cache(&self) -> &cors::PreflightCache {
        &self.preflight_cache
    }

    /// The time left before the deadline, or the error saying there is none.
    fn time_left(&self, url: &Url) -> Result<Option<Duration>, LoadError> {
        match self.deadline {
            None => Ok(None),
            Some(d) => match d.checked_duration_since(Instant::now()) {
                Some(left) if !left.is_zero() => Ok(Some(left)),
                _ => Err(LoadError::TimedOut {
                    url: url.clone(),
                    cause: "the run's deadline passed".into(),
                }),
            },
        }
    }

    /// Fetches the absolute URL `url` (a string a page gave) as the user would (a
    /// navigation with no client origin), following redirects; a string that does not parse
    /// is a `BadUrl`.
    pub fn fetch_str(&self, url: &str) -> Result<Response, LoadError> {
        self.fetch(&parse_url(url)?)
    }

    /// Fetches `url` as the user would: a navigation started from the shell, allowed to load
    /// any scheme jsprof knows (`file:` included), following redirects.
    pub fn fetch(&self, url: &Url) -> Result<Response, LoadError> {
        self.fetch_request(&Request::navigate(url.clone(), None))
    }

    /// Fetches `request` (<https://fetch.spec.whatwg.org/#concept-main-fetch>), following
    /// redirects hop by hop with the mode's checks, and says how the response is tainted.
    pub fn fetch_request(&self, request: &Request) -> Result<Response, LoadError> {
        fetch::main_fetch(self, request)
    }

    /// One HTTP(S) request as main fetch made it (method, the whole header list, body),
    /// without following redirects.
    fn http_hop(&self, hop: &fetch::Hop<'_>) -> Result<Response, LoadError> {
        let url = hop.url;
        let refuse = |cause: String| LoadError::Http {
            url: url.clone(),
            cause,
        };
        let method = reqwest::Method::from_bytes(hop.method.as_bytes())
            .map_err(|_| refuse(format!("'{}' is not a valid method", hop.method)))?;
        let mut req = self.client.request(method, url.clone());
        for (name, value) in hop.headers.iter() {
            let name = reqwest::header::HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| refuse(format!("'{name}' is not a valid header name")))?;
            let value = reqwest::header::HeaderValue::from_bytes(value)
                .map_err(|_| refuse(format!("an invalid value for header '{name}'")))?;
            req = req.header(name, value);
        }
        if let Some(body) = hop.body {
            req = req.body(body.to_vec());
        }
        // The request's timeout covers connecting, the headers and the whole body: a server
        // that never answers, or dribbles, ends at the run's deadline.
        if let Some(left) = self.time_left(url)? {
            req = req.timeout(left.min(REQUEST_TIMEOUT));
        }
        let mut resp = req.send().map_err(|e| classify(url, &e))?;
        let status = resp.status().as_u16();
        let status_text = resp
            .status()
            .canonical_reason()
            .unwrap_or_default()
            .to_owned();
        let mut headers = Headers::default();
        for (name, value) in resp.headers() {
            headers.append(name.as_str(), &String::from_utf8_lossy(value.as_bytes()));
        }
        let body = if is_redirect(status) {
            Vec::new()
        } else {
            let limit = self.max_response_bytes;
            if resp.content_length().is_some_and(|n| n > limit) {
                return Err(LoadError::too_large(url, limit));
            }
            // A body without a length (or lying about it) is never buffered beyond the limit.
            read_at_most(&mut resp, limit, 0)
                .map_err(|e| classify_io(url, &e))?
                .ok_or_else(|| LoadError::too_large(url, limit))?
        };
        Ok(Response {
            url: url.clone(),
            url_list: vec![url.clone()],
            status,
            status_text,
            headers,
            body,
            tainting: Tainting::Basic,
            opaque_redirect: false,
        })
    }
}

/// Parses a string a page gave as an absolute URL.
pub fn parse_url(url: &str) -> Result<Url, LoadError> {
    Url::parse(url).map_err(|e| LoadError::BadUrl {
        input: url.to_owned(),
        cause: e.to_string(),
    })
}

/// A redirect status (<https://fetch.spec.whatwg.org/#redirect-status>).
pub(crate) fn is_redirect(status: u16) -> bool {
    matches!(status, 301 | 302 | 303 | 307 | 308)
}

/// The innermost cause of an error, which is the one worth showing.
fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cur = e;
    while let Some(next) = cur.source() {
        cur = next;
    }
    cur.to_string()
}

/// A failed read of a body: reqwest's error is inside the `io::Error`.
fn classify_io(url: &Url, e: &std::io::Error) -> LoadError {
    match e
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<reqwest::Error>())
    {
        Some(e) => classify(url, e),
        None if e.kind() == std::io::ErrorKind::TimedOut => LoadError::TimedOut {
            url: url.clone(),
            cause: root_cause(e),
        },
        None => LoadError::Http {
            url: url.clone(),
            cause: root_cause(e),
        },
    }
}

fn classify(url: &Url, e: &reqwest::Error) -> LoadError {
    let cause = root_cause(e);
    if e.is_timeout() {
        return LoadError::TimedOut {
            url: url.clone(),
            cause,
        };
    }
    let lower = cause.to_lowercase();
    if lower.contains("certificate") || lower.contains("tls") || lower.contains("handshake") {
        LoadError::Tls {
            url: url.clone(),
            cause,
        }
    } else if e.is_connect() && lower.contains("refused") {
        LoadError::ConnectionRefused { url: url.clone() }
    } else {
        LoadError::Http {
            url: url.clone(),
            cause,
        }
    }
}

pub(crate) fn load_file(url: &Url, max_bytes: u64) -> Result<Response, LoadError> {
    let path = url.to_file_path().map_err(|()| LoadError::BadUrl {
        input: url.to_string(),
        cause: "not a local file path".into(),
    })?;
    let body = match read_regular_file(&path, max_bytes) {
        Ok(Some(body)) => body,
        Ok(None) => return Err(LoadError::too_large(url, max_bytes)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(LoadError::NotFound { url: url.clone() })
        }
        Err(e) => {
            return Err(LoadError::Io {
                url: url.clone(),
                cause: e.to_string(),
            })
        }
    };
    let mut headers = headers::sidecar_headers(&path).map_err(|e| LoadError::Io {
        url: url.clone(),
        cause: format!("bad headers sidecar: {e}"),
    })?;
    if headers.get("content-type").is_none() {
        if let Some(mime) = mime_for(&path) {
            headers.append("Content-Type", mime);
        }
    }
    Ok(Response::local(url, headers, body))
}

/// The contents of the regular file at `path`, `None` if it has more than `max_bytes`.
/// Anything else (a directory, a FIFO that would block, a device that never ends) is an
/// error before a byte is read.
fn read_regular_file(path: &Path, max_bytes: u64) -> std::io::Result<Option<Vec<u8>>> {
    // Checked before opening: opening a FIFO blocks until someone writes to it.
    if !fs::metadata(path)?.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    let file = fs::File::open(path)?;
    let meta = file.metadata()?;
    if meta.len() > max_bytes {
        return Ok(None);
    }
    // The file may grow while it is read: never past the limit.
    read_at_most(file, max_bytes, usize::try_from(meta.len()).unwrap_or(0))
}

/// All of `reader`, or `None` if it holds more than `limit` bytes: at most one byte past the
/// limit is ever read. `capacity`: what to reserve first (the expected size, if known).
fn read_at_most(
    reader: impl Read,
    limit: u64,
    capacity: usize,
) -> std::io::Result<Option<Vec<u8>>> {
    let mut body = Vec::with_capacity(capacity);
    reader
        .take(limit.saturating_add(1))
        .read_to_end(&mut body)?;
    Ok((body.len() as u64 <= limit).then_some(body))
}

/// A `data:` URL (<https://fetch.spec.whatwg.org/#data-url-processor>).
pub(crate) fn load_data(url: &Url, max_bytes: u64) -> Result<Response, LoadError> {
    // The Fetch standard's processor, as the `data-url` crate implements it: forgiving
    // base64 (whitespace, missing padding), a case-insensitive `;base64`, and
    // `text/plain;charset=US-ASCII` when the MIME type is missing or invalid.
    let bad = |cause: String| LoadError::BadUrl {
        input: url.to_string(),
        cause,
    };
    let data = data_url::DataUrl::process(url.as_str()).map_err(|e| bad(format!("{e:?}")))?;
    let (body, _fragment) = data
        .decode_to_vec()
        .map_err(|_| bad("bad base64 in data: URL".into()))?;
    if body.len() as u64 > max_bytes {
        return Err(LoadError::too_large(url, max_bytes));
    }
    let mut headers = Headers::default();
    headers.append("Content-Type", &data.mime_type().to_string());
    Ok(Response::local(url, headers, body))
}

/// The Fetch standard's scheme fetch for `about:blank`: an empty HTML document.
pub(crate) fn about_blank(url: &Url) -> Response {
    let mut headers = Headers::default();
    headers.append("Content-Type", "text/html;charset=utf-8");
    Response::local(url, headers, Vec::new())
}

/// The content type of a file, by its extension.
pub fn mime_for(path: &Path) -> Option<&'static str> {
    Some(match path.extension()?.to_str()? {
        "html" | "htm" => "text/html",
        "js" | "mjs" => "text/javascript",
        "json" => "application/json",
        "css" => "text/css",
        "txt" => "text/plain",
        "xml" => "application/xml",
        "svg" => "image/svg+xml",
        _ => return None,
    })
}

/// Turns what a user typed (a URL, or a file path relative to `cwd`) into a URL.
pub fn url_from_input(input: &str, cwd: &Path) -> Result<Url, LoadError> {
    let bad = |cause: String| LoadError::BadUrl {
        input: input.to_owned(),
        cause,
    };
    if input.is_empty() {
        return Err(bad("empty".into()));
    }
    match Url::parse(input) {
        // A single-letter "scheme" is a Windows drive, not a URL.
        Ok(url) if url.scheme().len() > 1 => Ok(url),
        Err(url::ParseError::RelativeUrlWithoutBase) | Ok(_) => {
            let path = cwd.join(input);
            let path = path.canonicalize().unwrap_or(path);
            Url::from_file_path(&path).map_err(|()| bad("not an absolute path".into()))
        }
        Err(e) => Err(bad(e.to_string())),
    }
}
