//! Requests and the Fetch standard's checks (<https://fetch.spec.whatwg.org/#fetching>).
//!
//! Every load a page makes is a [`Request`] with a client origin and a mode:
//! - **navigate** (documents, iframes): any origin;
//! - **no-cors** (classic scripts without `crossorigin`, `importScripts`): cross-origin
//!   responses are *opaque* — a classic script made from one has muted errors;
//! - **cors** (module scripts, `crossorigin` scripts, `fetch()`): a cross-origin response must
//!   pass the CORS check, or it is a network error;
//! - **same-origin** (worker scripts): a cross-origin URL is a network error.
//!
//! [`main_fetch`] follows redirects hop by hop and keeps the response tainting across the whole
//! chain: once a no-cors fetch went cross-origin the response stays opaque, even if a later
//! redirect comes back to the client's origin. A redirect may only lead to an `http(s):` URL.
//! `file:` URLs may be loaded only by a `file:` document (or by the user, from the shell):
//! anything else is a network error that says why.

use url::Url;

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
}

impl Request {
    /// A navigation (a document or an iframe's document) made by `origin`'s client.
    pub fn navigate(url: Url, origin: Option<Origin>) -> Request {
        Request {
            url,
            origin,
            mode: Mode::Navigate,
            credentials: Credentials::Include,
        }
    }

    /// A request of `origin`'s client in `mode`.
    pub fn new(url: Url, origin: Origin, mode: Mode, credentials: Credentials) -> Request {
        Request {
            url,
            origin: Some(origin),
            mode,
            credentials,
        }
    }
}

/// main fetch (<https://fetch.spec.whatwg.org/#concept-main-fetch>) with HTTP-redirect fetch
/// folded in: one iteration per URL of the redirect chain.
pub(crate) fn main_fetch(loader: &Loader, request: &Request) -> Result<Response, LoadError> {
    let blocked = |url: &Url, reason: String| LoadError::Blocked {
        url: url.clone(),
        reason,
    };
    let origin = request.origin.as_ref();
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
        // main fetch, step 12: which fetch, and how the response is tainted.
        let same = origin.is_none_or(|o| o.same_origin_url(&current));
        let basic = (same && tainting == Tainting::Basic)
            || current.scheme() == "data"
            || request.mode == Mode::Navigate;
        if !basic {
            match request.mode {
                Mode::SameOrigin => {
                    return Err(blocked(
                        &current,
                        "a cross-origin URL in a same-origin request".into(),
                    ))
                }
                Mode::NoCors => tainting = Tainting::Opaque,
                Mode::Cors => tainting = Tainting::Cors,
                Mode::Navigate => {}
            }
        }
        // Serializing a request origin: "null" once tainted (or for the user).
        let serialized = match origin {
            Some(o) if !tainted_origin => o.serialize(),
            _ => "null".to_owned(),
        };
        let origin_header = (request.mode == Mode::Cors).then_some(serialized.as_str());
        let mut response = match current.scheme() {
            "file" => load_file(&current, loader.max_response_bytes)?,
            "data" => load_data(&current, loader.max_response_bytes)?,
            "about" if current.path() == "blank" => crate::about_blank(&current),
            "http" | "https" => loader.http_hop(&current, origin_header)?,
            scheme => {
                return Err(LoadError::UnsupportedScheme {
                    url: current.clone(),
                    scheme: scheme.to_owned(),
                })
            }
        };
        let cors_ok = |response: &Response| cors_check(response, &serialized, request.credentials);
        if matches!(current.scheme(), "http" | "https") && is_redirect(response.status) {
            // HTTP-redirect fetch: a CORS request's redirect response passes the CORS check.
            if tainting == Tainting::Cors {
                if let Err(why) = cors_ok(&response) {
                    return Err(blocked(&current, format!("CORS (redirect): {why}")));
                }
            }
            let next = response
                .headers
                .get("location")
                .and_then(|loc| current.join(loc).ok())
                .ok_or_else(|| LoadError::BadRedirect {
                    url: current.clone(),
                })?;
            if url_list.len() > MAX_REDIRECTS {
                return Err(LoadError::TooManyRedirects {
                    url: request.url.clone(),
                });
            }
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
            // Step 13: a cross-origin redirect of a request whose origin is not the current
            // URL's taints the request's origin.
            if !Origin::of(&current).same_origin_url(&next)
                && !origin.is_none_or(|o| o.same_origin_url(&current))
            {
                tainted_origin = true;
            }
            url_list.push(next.clone());
            current = next;
            continue;
        }
        if tainting == Tainting::Cors {
            if let Err(why) = cors_ok(&response) {
                return Err(blocked(&current, format!("CORS: {why}")));
            }
        }
        response.url_list = url_list;
        response.tainting = tainting;
        return Ok(response);
    }
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
