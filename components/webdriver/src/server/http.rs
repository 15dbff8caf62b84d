//! The HTTP side (<https://w3c.github.io/webdriver/#protocol>): a request becomes a
//! `WebDriverMessage` through the `webdriver` crate's routes and parsers, and goes to the
//! dispatcher; its answer becomes the response, in the spec's JSON.
//!
//! This is what the crate's `server::start` does, with two differences that make it ours:
//! a request that is not well formed is answered as the spec says (a body that is not UTF-8
//! is `invalid argument`, 400, like any other junk body, not the crate's `unknown error`; a
//! path no command has is `unknown command`, 404, and a method its path does not take
//! `unknown method`, 405), and nothing here listens for signals: the embedder stops the
//! server ([`Server::stop`](super::Server::stop)).
//!
//! Requests must come from this machine: a `Host` header naming `localhost` or an IP address
//! with the server's port, and no `Origin` header (a web page's request carries one), and a
//! POST may not have a content type a page's form or `fetch` could send without a preflight.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::mpsc;

use http::header::{HeaderMap, CACHE_CONTROL, CONTENT_TYPE, HOST, ORIGIN};
use http::{Method, StatusCode};
use tokio::sync::oneshot;
use url::{Host, Url};
use webdriver::command::WebDriverMessage;
use webdriver::error::{ErrorStatus, WebDriverError, WebDriverResult};
use webdriver::httpapi::{standard_routes, Route as Endpoint};
use webdriver::Parameters;

use super::dispatch::Dispatch;
use super::{extension_routes, Route};

/// One route: its method, its path's segments, and the command it makes.
struct Entry {
    method: Method,
    segments: Vec<Segment>,
    endpoint: Endpoint<Route>,
}

/// A segment of a route's path.
enum Segment {
    /// Matches itself.
    Literal(&'static str),
    /// `{name}`: matches any segment, which becomes the parameter `name`.
    Parameter(&'static str),
}

/// Every route, and where the commands go.
pub(super) struct Http {
    address: SocketAddr,
    routes: Vec<Entry>,
    dispatcher: mpsc::Sender<Dispatch>,
}

/// How a path matched the routes.
enum Matched<'a> {
    /// A route of this method: its endpoint and path parameters.
    Route(&'a Endpoint<Route>, Parameters),
    /// The path is a route's, with another method.
    OtherMethod,
    /// No route has this path.
    None,
}

impl Http {
    pub(super) fn new(address: SocketAddr, dispatcher: mpsc::Sender<Dispatch>) -> Http {
        let extensions = extension_routes()
            .into_iter()
            .map(|(method, path, route)| (method, path, Endpoint::Extension(route)));
        let routes = standard_routes::<Route>()
            .into_iter()
            .chain(extensions)
            .map(|(method, path, endpoint)| Entry {
                method,
                segments: path
                    .split('/')
                    .filter(|s| !s.is_empty())
                    .map(
                        |s| match s.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
                            Some(name) => Segment::Parameter(name),
                            None => Segment::Literal(s),
                        },
                    )
                    .collect(),
                endpoint,
            })
            .collect();
        Http {
            address,
            routes,
            dispatcher,
        }
    }

    /// The response to one request: its status and JSON body.
    pub(super) async fn answer(
        &self,
        method: &Method,
        path: &str,
        headers: &HeaderMap,
        body: &[u8],
    ) -> (StatusCode, String) {
        let message = match self.message(method, path, headers, body) {
            Ok(Some(message)) => message,
            // HEAD of a route: an empty 200, as the crate answers it.
            Ok(None) => return (StatusCode::OK, String::new()),
            Err(error) => return error_response(&error),
        };
        let (answer, answered) = oneshot::channel();
        let sent = self.dispatcher.send(Dispatch::Command(message, answer));
        let response = match sent {
            Ok(()) => answered.await.unwrap_or_else(|_| Err(stopped())),
            Err(_) => Err(stopped()),
        };
        match response {
            Ok(response) => match serde_json::to_string(&response) {
                Ok(json) => (StatusCode::OK, json),
                Err(e) => error_response(&WebDriverError::new(
                    ErrorStatus::UnknownError,
                    format!("the response could not be serialised: {e}"),
                )),
            },
            Err(error) => error_response(&error),
        }
    }

    /// The command a request makes (`None`: a HEAD request of a route), after the checks.
    fn message(
        &self,
        method: &Method,
        path: &str,
        headers: &HeaderMap,
        body: &[u8],
    ) -> WebDriverResult<Option<WebDriverMessage<Route>>> {
        self.check_headers(method, headers)?;
        let (endpoint, parameters) = match self.route(method, path) {
            Matched::Route(endpoint, parameters) => (endpoint, parameters),
            Matched::OtherMethod if *method == Method::HEAD => return Ok(None),
            Matched::OtherMethod => {
                return Err(WebDriverError::new(
                    ErrorStatus::UnknownMethod,
                    format!("{path} does not take {method}"),
                ))
            }
            Matched::None => {
                return Err(WebDriverError::new(
                    ErrorStatus::UnknownCommand,
                    format!("no command is {method} {path}"),
                ))
            }
        };
        // The body is JSON, which is UTF-8: anything else is a bad argument like any body
        // that does not parse.
        let body = std::str::from_utf8(body).map_err(|e| {
            WebDriverError::new(
                ErrorStatus::InvalidArgument,
                format!("the request body is not UTF-8: {e}"),
            )
        })?;
        WebDriverMessage::from_http(endpoint.clone(), &parameters, body, *method == Method::POST)
            .map(Some)
    }

    /// The route of `method` and `path`: a literal segment is preferred to a parameter.
    fn route(&self, method: &Method, path: &str) -> Matched<'_> {
        let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
        let mut best: Option<(&Entry, usize)> = None;
        let mut other_method = false;
        for entry in &self.routes {
            if entry.segments.len() != segments.len() {
                continue;
            }
            let mut literals = 0;
            let fits = entry
                .segments
                .iter()
                .zip(&segments)
                .all(|(s, given)| match s {
                    Segment::Parameter(_) => true,
                    Segment::Literal(literal) => {
                        literals += 1;
                        literal == given
                    }
                });
            if !fits {
                continue;
            }
            if entry.method != *method {
                other_method = true;
                continue;
            }
            if best.is_none_or(|(_, most)| literals > most) {
                best = Some((entry, literals));
            }
        }
        match best {
            Some((entry, _)) => {
                let parameters: HashMap<String, String> = entry
                    .segments
                    .iter()
                    .zip(&segments)
                    .filter_map(|(s, given)| match s {
                        Segment::Parameter(name) => Some(((*name).to_owned(), (*given).to_owned())),
                        Segment::Literal(_) => None,
                    })
                    .collect();
                Matched::Route(&entry.endpoint, parameters)
            }
            None if other_method => Matched::OtherMethod,
            None => Matched::None,
        }
    }

    /// The checks that keep web pages from driving the browser: the `Host` header, no
    /// `Origin` header, and for a POST no content type a page could send without a
    /// preflight (<https://fetch.spec.whatwg.org/#cors-safelisted-request-header>).
    fn check_headers(&self, method: &Method, headers: &HeaderMap) -> WebDriverResult<()> {
        let refused = |why: String| {
            log::warn!("refused a request: {why}");
            WebDriverError::new(ErrorStatus::UnknownError, why)
        };
        let host = headers
            .get(HOST)
            .ok_or_else(|| refused("no Host header".into()))?;
        let host = host
            .to_str()
            .map_err(|_| refused("a Host header that is not ASCII".into()))?;
        if !self.host_allowed(host) {
            return Err(refused(format!(
                "invalid Host header {host}: localhost or an IP address, port {}",
                self.address.port()
            )));
        }
        if let Some(origin) = headers.get(ORIGIN) {
            return Err(refused(format!(
                "invalid Origin header {}: web pages may not drive the browser",
                String::from_utf8_lossy(origin.as_bytes())
            )));
        }
        if *method == Method::POST {
            let content_type = headers
                .get(CONTENT_TYPE)
                .map(|c| String::from_utf8_lossy(c.as_bytes()).to_ascii_lowercase());
            let essence = content_type
                .as_deref()
                .map(|c| c.split(';').next().unwrap_or_default().trim());
            if let Some(
                essence @ ("application/x-www-form-urlencoded"
                | "multipart/form-data"
                | "text/plain"),
            ) = essence
            {
                return Err(refused(format!("invalid Content-Type {essence}")));
            }
        }
        Ok(())
    }

    /// Whether a `Host` header names this server: `localhost` or an IP address, and the
    /// server's port (the scheme's default, 80, when none is given).
    fn host_allowed(&self, host: &str) -> bool {
        let Ok(url) = Url::parse(&format!("http://{host}")) else {
            return false;
        };
        let host_ok = match url.host() {
            Some(Host::Domain(domain)) => domain == "localhost",
            Some(Host::Ipv4(_) | Host::Ipv6(_)) => true,
            None => false,
        };
        host_ok
            && url.port_or_known_default() == Some(self.address.port())
            && url.path() == "/"
            && url.query().is_none()
            && url.username().is_empty()
    }
}

/// The server is stopping: the dispatcher no longer answers.
fn stopped() -> WebDriverError {
    WebDriverError::new(
        ErrorStatus::UnknownError,
        "the WebDriver server is stopping",
    )
}

/// An error's status and JSON body (`{"value": {"error", "message", "stacktrace"}}`).
fn error_response(error: &WebDriverError) -> (StatusCode, String) {
    let json = serde_json::to_string(error).unwrap_or_else(|_| {
        r#"{"value":{"error":"unknown error","message":"","stacktrace":""}}"#.to_owned()
    });
    (error.http_status(), json)
}

/// The headers every response has.
pub(super) const RESPONSE_HEADERS: [(http::HeaderName, &str); 2] = [
    (CONTENT_TYPE, "application/json; charset=utf-8"),
    (CACHE_CONTROL, "no-cache"),
];
