//! Requests and the Fetch standard's checks (<https://fetch.spec.whatwg.org/#fetching>).
//!
//! Every load a page makes is a [`Request`] with a client origin and a mode:
//! - **navigate** (documents, iframes): any origin;
//! - **no-cors** (classic scripts without `crossorigin`, `importScripts`, `fetch()` asked for
//!   it): cross-origin responses are *opaque* — a classic script made from one has muted
//!   errors;
//! - **cors** (module scripts, `crossorigin` scripts, `fetch()`, `XMLHttpRequest`): a
//!   cross-origin response must pass the CORS check, or it is a network error; a request an
//!   API made with a method or header the server has not agreed to is preceded by a
//!   **CORS-preflight fetch** (`OPTIONS`), whose answer is cached ([`crate::cors`]);
//! - **same-origin** (worker scripts): a cross-origin URL is a network error.
//!
//! [`main_fetch`] follows redirects hop by hop and keeps the response tainting across the whole
//! chain: once a no-cors fetch went cross-origin the response stays opaque, even if a later
//! redirect comes back to the client's origin. A redirect may only lead to an `http(s):` URL;
//! a 301/302 of a `POST` and a 303 turn the request into a `GET` without its body, a 307/308
//! sends it again as it was. `file:` URLs may be loaded only by a `file:` document (or by the
//! user, from the shell): anything else is a network error that says why.

use url::Url;

use crate::cors::{self, CacheKey};
use crate::headers::HeaderList;
use crate::origin::Origin;
use crate::{is_redirect, load_data, load_file, LoadError, Loader, Response, MAX_REDIRECTS};

/// <https://fetch.spec.whatwg.org/#concept-request-mode>
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    SameOrigin,
    NoCors,
    Cors,
    Navigate,
}

/// <https://fetch.spec.whatwg.org/#concept-request-credentials-mode> (jsprof keeps no
/// cookies; the mode decides what the CORS check demands).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Credentials {
    Omit,
    SameOrigin,
    Include,
}

/// <https://fetch.spec.whatwg.org/#concept-request-redirect-mode>
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Redirect {
    /// Follow redirects (the default).
    Follow,
    /// A redirect is a network error.
    Error,
    /// A redirect is the response (an opaque-redirect filtered response for the page).
    Manual,
}

/// <https://fetch.spec.whatwg.org/#concept-request-response-tainting>
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tainting {
    /// Same-origin (or a `data:` URL, or a navigation): the client may read it.
    Basic,
    /// Cross-origin and allowed by CORS.
    Cors,
    /// Cross-origin without CORS: the client may not read it.
    Opaque,
}

/// A request (<https://fetch.spec.whatwg.org/#concept-request>).
#[derive(Debug, Clone)]
pub struct Request {
    pub url: Url,
    /// The origin of the client that makes the request; `None` for the user (the shell's
    /// own navigation), who may load anything.
    pub origin: Option<Origin>,
    pub mode: Mode,
    pub credentials: Credentials,
    /// The method, normalised (<https://fetch.spec.whatwg.org/#concept-method-normalize>).
    pub method: String,
    /// The author's headers (what `Headers` let through); the loader adds `Accept`,
    /// `Origin`, `User-Agent`, `Content-Length` and the preflight's own.
    pub headers: HeaderList,
    /// The request body's bytes (<https://fetch.spec.whatwg.org/#concept-request-body>).
    pub body: Option<Vec<u8>>,
    pub redirect: Redirect,
    /// <https://fetch.spec.whatwg.org/#unsafe-request-flag>: set by `fetch()` and
    /// `XMLHttpRequest`, whose methods and headers the page chose, so that a CORS request
    /// with anything beyond the safelists is preflighted.
    pub unsafe_request: bool,
    /// <https://fetch.spec.whatwg.org/#use-cors-preflight-flag>: preflight even a safelisted
    /// request (an `XMLHttpRequest` with upload listeners).
    pub use_cors_preflight: bool,
}

impl Request {
    /// A navigation (a document or an iframe's document) made by `origin`'s client.
    pub fn navigate(url: Url, origin: Option<Origin>) -> Request {
        Request {
            origin,
            mode: Mode::Navigate,
            credentials: Credentials::Include,
            ..Request::get(url)
        }
    }

    /// A `GET` of `origin`'s client in `mode`.
    pub fn new(url: Url, origin: Origin, mode: Mode, credentials: Credentials) -> Request {
        Request {
            origin: Some(origin),
            mode,
            credentials,
            ..Request::get(url)
        }
    }

    /// A plain `GET` of `url` by the user.
    fn get(url: Url) -> Request {
        Request {
            url,
            origin: None,
            mode: Mode::NoCors,
            credentials: Credentials::Include,
            method: "GET".into(),
            headers: HeaderList::default(),
            body: None,
            redirect: Redirect::Follow,
            unsafe_request: false,
            use_cors_preflight: false,
        }
    }
}

/// One HTTP request as it goes on the wire, without redirects followed.
pub(crate) struct Hop<'a> {
    pub url: &'a Url,
    pub method: &'a str,
    pub headers: &'a HeaderList,
    pub body: Option<&'a [u8]>,
}

/// The names the Fetch standard calls request-body-header names
/// (<https://fetch.spec.whatwg.org/#request-body-header-name>): dropped with the body when a
/// redirect turns the request into a `GET`.
const REQUEST_BODY_HEADERS: [&str; 4] = [
    "Content-Encoding",
    "Content-Language",
    "Content-Location",
    "Content-Type",
];

/// main fetch (<https://fetch.spec.whatwg.org/#concept-main-fetch>) with HTTP fetch and
/// HTTP-redirect fetch folded in: one iteration per URL of the redirect chain.
pub(crate) fn main_fetch(loader: &Loader, request: &Request) -> Result<Response, LoadError> {
    let blocked = |url: &Url, reason: String| LoadError::Blocked {
        url: url.clone(),
        reason,
    };
    let origin = request.origin.as_ref();
    // What redirects may change: the method, the body and the header list.
    let mut method = request.method.clone();
    let mut body = request.body.clone();
    let mut headers = request.headers.clone();
    // fetch, step 12: `Accept` unless the page set one (a navigation asks for documents).
    if !headers.contains("Accept") {
        let accept: &[u8] = if request.mode == Mode::Navigate {
            b"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
        } else {
            b"*/*"
        };
        headers.append("Accept", accept);
    }
    // The tainted origin flag: a cross-origin redirect of a CORS request makes its origin
    // serialise as "null" from then on.
    let mut tainted_origin = false;
    let mut tainting = Tainting::Basic;
    let mut url_list = vec![request.url.clone()];
    let mut current = request.url.clone();
    loop {
        let redirected = url_list.len() > 1;
        // jsprof's local-file policy: only a file: client (or the user) loads file: URLs.
        let client_is_local = request.origin.as_ref().is_none_or(Origin::is_local_files);
        if current.scheme() == "file" && !client_is_local {
            return Err(blocked(
                &current,
                "only a file: document may load file: URLs".into(),
            ));
        }
        // HTTP-redirect fetch, step 6: a redirect may only lead to an HTTP(S) URL.
        if redirected && !matches!(current.scheme(), "http" | "https") {
            return Err(blocked(
                &current,
                format!("a redirect may not lead to a {}: URL", current.scheme()),
            ));
        }
        let http = matches!(current.scheme(), "http" | "https");
        // main fetch, step 12: which fetch, and how the response is tainted.
        let same = origin.is_none_or(|o| o.same_origin_url(&current));
        let basic = (same && tainting == Tainting::Basic)
            || current.scheme() == "data"
            || request.mode == Mode::Navigate;
        // makeCORSPreflight: a CORS request an API made with a method or headers beyond the
        // safelists (or one that must preflight anyway).
        let mut make_preflight = false;
        if !basic {
            match request.mode {
                Mode::SameOrigin => {
                    return Err(blocked(
                        &current,
                        "a cross-origin URL in a same-origin request".into(),
                    ))
                }
                Mode::NoCors => {
                    if request.redirect != Redirect::Follow {
                        return Err(blocked(
                            &current,
                            "a no-cors request must follow redirects".into(),
                        ));
                    }
                    tainting = Tainting::Opaque;
                }
                Mode::Cors => {
                    if !http {
                        return Err(blocked(
                            &current,
                            format!("a CORS request to a {}: URL", current.scheme()),
                        ));
                    }
                    tainting = Tainting::Cors;
                    make_preflight = request.use_cors_preflight
                        || (request.unsafe_request
                            && (!cors::is_cors_safelisted_method(&method)
                                || !cors::cors_unsafe_request_header_names(headers.iter())
                                    .is_empty()));
                }
                Mode::Navigate => {}
            }
        }
        // Byte-serializing a request origin: "null" once tainted (or for the user).
        let serialized = match origin {
            Some(o) if !tainted_origin => o.serialize(),
            _ => "null".to_owned(),
        };
        let key = CacheKey {
            origin: &serialized,
            url: &current,
            credentials: request.credentials == Credentials::Include,
        };
        let cors_ok = |response: &Response| cors_check(response, &serialized, request.credentials);
        // HTTP fetch (steps 4.1-4.3): the preflight if the cache does not cover the request,
        // the request itself, and the CORS check of its response (a redirect's included).
        let fetched = (|| {
            if make_preflight && !preflight_cached(loader, key, request, &method, &headers) {
                cors_preflight(
                    loader,
                    request,
                    &current,
                    &method,
                    &headers,
                    &serialized,
                    key,
                )?;
            }
            let mut response = match current.scheme() {
                "file" | "about" if !matches!(method.as_str(), "GET" | "HEAD") => {
                    return Err(blocked(
                        &current,
                        format!("a {method} request to a {}: URL", current.scheme()),
                    ))
                }
                "file" => load_file(&current, loader.max_response_bytes)?,
                "data" => load_data(&current, loader.max_response_bytes)?,
                "about" if current.path() == "blank" => crate::about_blank(&current),
                "http" | "https" => {
                    let mut wire = headers.clone();
                    if let Some(o) =
                        origin_header(request, tainting, &method, &current, &serialized)
                    {
                        wire.append("Origin", o.as_bytes());
                    }
                    // A POST or PUT without a body says so (Content-Length: 0).
                    let empty: &[u8] = &[];
                    let sent = body
                        .as_deref()
                        .or(matches!(method.as_str(), "POST" | "PUT").then_some(empty));
                    loader.http_hop(&Hop {
                        url: &current,
                        method: &method,
                        headers: &wire,
                        body: sent,
                    })?
                }
                scheme => {
                    return Err(LoadError::UnsupportedScheme {
                        url: current.clone(),
                        scheme: scheme.to_owned(),
                    })
                }
            };
            if tainting == Tainting::Cors {
                if let Err(why) = cors_ok(&response) {
                    let what = if is_redirect(response.status) {
                        "CORS (redirect)"
                    } else {
                        "CORS"
                    };
                    return Err(blocked(&current, format!("{what}: {why}")));
                }
            }
            if method == "HEAD" {
                response.body.clear();
            }
            Ok(response)
        })();
        // main fetch, step 12: a failed CORS request with a preflight clears its cache
        // entries.
        if make_preflight && fetched.is_err() {
            loader.preflight_cache.clear(key);
        }
        let mut response = fetched?;
        if http && is_redirect(response.status) {
            // HTTP fetch, step 8: what the redirect mode makes of a redirect.
            match request.redirect {
                Redirect::Error => {
                    return Err(blocked(
                        &current,
                        "a redirect, in redirect mode error".into(),
                    ))
                }
                Redirect::Manual => {
                    response.url_list = url_list;
                    response.tainting = tainting;
                    response.opaque_redirect = true;
                    return Ok(response);
                }
                Redirect::Follow => {}
            }
            // HTTP-redirect fetch. Steps 3-4: the location URL.
            let next = response
                .headers
                .get("location")
                .and_then(|loc| current.join(loc).ok())
                .ok_or_else(|| LoadError::BadRedirect {
                    url: current.clone(),
                })?;
            // Step 7: the redirect count.
            if url_list.len() > MAX_REDIRECTS {
                return Err(LoadError::TooManyRedirects {
                    url: request.url.clone(),
                });
            }
            // Steps 8-9: no credentials in a CORS redirect's URL.
            let has_credentials = !next.username().is_empty() || next.password().is_some();
            let next_same = origin.is_none_or(|o| o.same_origin_url(&next));
            if request.mode == Mode::Cors && has_credentials && !next_same {
                return Err(blocked(
                    &next,
                    "a CORS redirect to a URL with credentials".into(),
                ));
            }
            if tainting == Tainting::Cors && has_credentials {
                return Err(blocked(
                    &next,
                    "a CORS redirect to a URL with credentials".into(),
                ));
            }
            // Step 12: a 301/302 of a POST, or a 303 of anything but GET/HEAD, becomes a GET
            // without a body (and without the headers that described it).
            let status = response.status;
            if ((status == 301 || status == 302) && method == "POST")
                || (status == 303 && !matches!(method.as_str(), "GET" | "HEAD"))
            {
                method = "GET".into();
                body = None;
                for name in REQUEST_BODY_HEADERS {
                    headers.delete(name);
                }
            }
            // Step 13: a cross-origin redirect drops `Authorization`.
            if !Origin::of(&current).same_origin_url(&next) {
                headers.delete("Authorization");
            }
            // Step 14: a cross-origin redirect of a request whose origin is not the current
            // URL's taints the request's origin.
            if !Origin::of(&current).same_origin_url(&next)
                && !origin.is_none_or(|o| o.same_origin_url(&current))
            {
                tainted_origin = true;
            }
            // Steps 15-20: the body is sent again as it was (it is bytes, never a stream).
            url_list.push(next.clone());
            current = next;
            continue;
        }
        response.url_list = url_list;
        response.tainting = tainting;
        return Ok(response);
    }
}

/// The `Origin` header a hop carries (<https://fetch.spec.whatwg.org/#append-a-request-origin-header>):
/// on every CORS-tainted request, and on any other whose method is neither `GET` nor `HEAD`
/// (`null` when an https: client sends it to http:, under the default referrer policy
/// `strict-origin-when-cross-origin`). Navigations made by the user send none.
fn origin_header(
    request: &Request,
    tainting: Tainting,
    method: &str,
    current: &Url,
    serialized: &str,
) -> Option<String> {
    // Step 2.
    if tainting == Tainting::Cors {
        return Some(serialized.to_owned());
    }
    // Step 3.
    if matches!(method, "GET" | "HEAD") {
        return None;
    }
    let origin = request.origin.as_ref()?;
    let downgrade = matches!(origin, Origin::Tuple { scheme, .. } if scheme == "https")
        && current.scheme() != "https";
    Some(if request.mode != Mode::Cors && downgrade {
        "null".to_owned()
    } else {
        serialized.to_owned()
    })
}

/// HTTP fetch, step 4.1: whether the preflight cache already allows the request's method
/// (when it needs allowing) and every CORS-unsafe header name.
fn preflight_cached(
    loader: &Loader,
    key: CacheKey<'_>,
    request: &Request,
    method: &str,
    headers: &HeaderList,
) -> bool {
    let cache = &loader.preflight_cache;
    let method_ok = (cors::is_cors_safelisted_method(method) && !request.use_cors_preflight)
        || cache.method_match(key, method);
    method_ok
        && cors::cors_unsafe_request_header_names(headers.iter())
            .iter()
            .all(|name| cache.header_match(key, name))
}

/// The CORS-preflight fetch (<https://fetch.spec.whatwg.org/#cors-preflight-fetch-0>): an
/// `OPTIONS` request asking whether the server allows `method` and the request's unsafe
/// headers, never followed through a redirect; its answer goes into the cache.
fn cors_preflight(
    loader: &Loader,
    request: &Request,
    url: &Url,
    method: &str,
    headers: &HeaderList,
    serialized_origin: &str,
    key: CacheKey<'_>,
) -> Result<(), LoadError> {
    let fail = |reason: String| LoadError::Blocked {
        url: url.clone(),
        reason: format!("CORS preflight: {reason}"),
    };
    // Steps 1-5: OPTIONS, `Accept: */*`, the method and the unsafe header names.
    let unsafe_names = cors::cors_unsafe_request_header_names(headers.iter());
    let mut preflight = HeaderList::default();
    preflight.append("Accept", b"*/*");
    preflight.append("Access-Control-Request-Method", method.as_bytes());
    if !unsafe_names.is_empty() {
        preflight.append(
            "Access-Control-Request-Headers",
            unsafe_names.join(",").as_bytes(),
        );
    }
    preflight.append("Origin", serialized_origin.as_bytes());
    // Step 6: HTTP-network-or-cache fetch: a redirect is not followed (and is not an ok
    // status, so it fails below).
    let response = loader.http_hop(&Hop {
        url,
        method: "OPTIONS",
        headers: &preflight,
        body: None,
    })?;
    // Step 7: the CORS check and an ok status; otherwise (step 8) a network error.
    cors_check(&response, serialized_origin, request.credentials).map_err(fail)?;
    if !response.ok() {
        return Err(fail(format!(
            "status {} is not an ok status",
            response.status
        )));
    }
    // Steps 7.1-7.3: the allowed methods and header names, each a token.
    let methods = cors::extract_token_list(
        response
            .headers
            .get_combined("access-control-allow-methods"),
    )
    .map_err(|e| fail(format!("Access-Control-Allow-Methods: {e}")))?;
    let names = cors::extract_token_list(
        response
            .headers
            .get_combined("access-control-allow-headers"),
    )
    .map_err(|e| fail(format!("Access-Control-Allow-Headers: {e}")))?
    .unwrap_or_default();
    // Step 7.4: a preflight made only for use-CORS-preflight caches the method itself.
    let methods = match methods {
        None if request.use_cors_preflight => vec![method.to_owned()],
        m => m.unwrap_or_default(),
    };
    let include = request.credentials == Credentials::Include;
    // Step 7.5: the method, exactly (`*` only without credentials), unless safelisted.
    if !methods.iter().any(|m| m == method)
        && !cors::is_cors_safelisted_method(method)
        && (include || !methods.iter().any(|m| m == "*"))
    {
        return Err(fail(format!(
            "method {method} is not in Access-Control-Allow-Methods{}",
            if include && methods.iter().any(|m| m == "*") {
                " (`*` does not cover a request with credentials)"
            } else {
                ""
            }
        )));
    }
    let allowed = |name: &str| names.iter().any(|n| n.eq_ignore_ascii_case(name));
    // Step 7.6: `Authorization` only by name, never by `*`.
    if let Some((name, _)) = headers
        .iter()
        .find(|(n, _)| cors::is_cors_non_wildcard_request_header_name(n) && !allowed(n))
    {
        return Err(fail(format!(
            "header {name} is not in Access-Control-Allow-Headers (`*` does not cover it)"
        )));
    }
    // Step 7.7: each unsafe name, by name or (without credentials) by `*`.
    let star = names.iter().any(|n| n == "*");
    if let Some(name) = unsafe_names
        .iter()
        .find(|n| !allowed(n) && (include || !star))
    {
        return Err(fail(format!(
            "header {name} is not in Access-Control-Allow-Headers{}",
            if include && star {
                " (`*` does not cover a request with credentials)"
            } else {
                ""
            }
        )));
    }
    // Steps 7.8-7.10: the max-age, 5 s by default, capped.
    let max_ages: Vec<&str> = response
        .headers
        .iter()
        .filter(|(n, _)| n.eq_ignore_ascii_case("access-control-max-age"))
        .map(|(_, v)| v)
        .collect();
    let max_age = cors::max_age(&max_ages);
    // Steps 7.12-7.15: the cache.
    loader.preflight_cache.store(key, max_age, &methods, &names);
    Ok(())
}

/// The CORS check (<https://fetch.spec.whatwg.org/#concept-cors-check>): `Err` says why it
/// failed.
/// `origin` is the request's serialized origin.
pub fn cors_check(
    response: &Response,
    origin: &str,
    credentials: Credentials,
) -> Result<(), String> {
    let Some(allowed) = response.headers.get_combined("access-control-allow-origin") else {
        return Err("no Access-Control-Allow-Origin header".into());
    };
    let with_credentials = credentials == Credentials::Include;
    if !with_credentials && allowed == "*" {
        return Ok(());
    }
    if allowed != origin {
        return Err(format!(
            "Access-Control-Allow-Origin '{allowed}' does not allow origin '{origin}'{}",
            if with_credentials && allowed == "*" {
                " (a request with credentials needs the exact origin)"
            } else {
                ""
            }
        ));
    }
    if !with_credentials {
        return Ok(());
    }
    match response.headers.get("access-control-allow-credentials") {
        Some("true") => Ok(()),
        _ => Err("a request with credentials needs Access-Control-Allow-Credentials: true".into()),
    }
}
