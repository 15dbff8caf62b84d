//! The script processing model: running inline and fetched scripts, and the requests and
//! responses of script fetches (CORS, muted errors).

use jsprof_net::{Credentials, LoadError, Mode, Origin, Request, Response, Url};
use jsprof_script_bindings::runtime::Arg;
use jsprof_script_bindings::runtime::WindowId;

use crate::document::{ScriptElement, ScriptKind};

use super::{Page, Ready};

impl Page {
    pub(super) fn execute_inline(&mut self, i: usize) {
        let s = &self.scripts[i];
        let ready = Ready {
            source: s.text.clone(),
            url: self.url.to_string(),
            line: s.line,
            column: s.column,
            muted: false,
        };
        self.execute(i, ready);
    }

    /// Runs a fetched external script, or fires `error` at its element if it could not be had.
    pub(super) fn execute_fetched(&mut self, i: usize) {
        let Some(result) = self.arrived.remove(&i) else {
            return; // Only ever called once the script has arrived.
        };
        let ready = ready_from(&self.scripts[i], result);
        let s = self.scripts[i].clone();
        self.execute_or_fail(self.window, i, &s, ready);
    }

    pub(super) fn execute(&mut self, i: usize, ready: Ready) {
        let s = self.scripts[i].clone();
        self.execute_in(self.window, i, &s, ready);
    }

    /// Runs `ready`, or reports why it could not be had and fires `error` at its element.
    pub(super) fn execute_or_fail(
        &mut self,
        w: WindowId,
        i: usize,
        s: &ScriptElement,
        ready: Result<Ready, String>,
    ) {
        match ready {
            Ok(ready) => self.execute_in(w, i, s, ready),
            Err(message) => {
                self.host
                    .print(w, true, &format!("jsprof: failed to load script {message}"));
                self.js.call_hook(
                    w,
                    c"fireScriptEvent",
                    &[Arg::Num(i as f64), Arg::Str("error")],
                );
                self.checkpoint();
            }
        }
    }

    /// execute the script element (https://html.spec.whatwg.org/#execute-the-script-element)
    /// number `i` of window `w`'s document.
    pub(super) fn execute_in(&mut self, w: WindowId, i: usize, s: &ScriptElement, ready: Ready) {
        if self.expired() {
            return;
        }
        let kind = s.kind;
        let external = s.src.is_some();
        let _event = jsprof_scope::record::begin(w.index() as u32 + 1, || {
            jsprof_scope::Details::ThreadEvaluation {
                kind: match (kind, external) {
                    (ScriptKind::Module, _) => jsprof_scope::EvalKind::Module,
                    (ScriptKind::Classic, true) => jsprof_scope::EvalKind::External,
                    (ScriptKind::Classic, false) => jsprof_scope::EvalKind::Inline,
                },
                event_type: None,
                script: Some(ready.url.clone()),
                function: None,
            }
        });
        if kind == ScriptKind::Classic {
            self.js
                .call_hook(w, c"setCurrentScript", &[Arg::Num(i as f64)]);
        }
        match kind {
            ScriptKind::Classic => {
                self.js.run_classic(
                    w,
                    &ready.source,
                    &ready.url,
                    ready.line,
                    ready.column,
                    ready.muted,
                );
            }
            ScriptKind::Module => {
                self.js
                    .run_module(w, &ready.source, &ready.url, ready.line, ready.column);
            }
        }
        if kind == ScriptKind::Classic {
            self.js.call_hook(w, c"setCurrentScript", &[Arg::Num(-1.0)]);
        }
        self.checkpoint();
        if external {
            self.js.call_hook(
                w,
                c"fireScriptEvent",
                &[Arg::Num(i as f64), Arg::Str("load")],
            );
            self.checkpoint();
        }
    }
}

/// An external script's response as something to run, or why it cannot run (an HTTP error,
/// or a network error: a failed CORS check, a blocked `file:` URL).
pub(super) fn ready_from(
    s: &ScriptElement,
    result: Result<Response, LoadError>,
) -> Result<Ready, String> {
    match result {
        Ok(r) if r.ok() => Ok(Ready {
            source: r.text(),
            url: r.url.to_string(),
            line: 1,
            column: 1,
            // A classic script from an opaque response (cross-origin without CORS,
            // anywhere in its redirect chain) has muted errors
            // (https://html.spec.whatwg.org/#fetch-a-classic-script).
            muted: r.is_opaque() && s.kind == ScriptKind::Classic,
        }),
        Ok(r) => Err(format!("{}: HTTP status {}", r.url, r.status)),
        Err(e) => Err(e.to_string()),
    }
}

/// A script element's `src`, resolved against its document's URL.
pub(super) fn join_src(base: &Url, src: &str) -> Result<Url, LoadError> {
    base.join(src).map_err(|e| LoadError::BadUrl {
        input: src.to_owned(),
        cause: e.to_string(),
    })
}

/// The request a document of `origin` makes for a script
/// (<https://html.spec.whatwg.org/#fetch-a-classic-script>,
/// <https://html.spec.whatwg.org/#fetch-a-single-module-script>): a module, or a classic
/// script with a `crossorigin` attribute, in CORS mode with the attribute's credentials
/// mode (`use-credentials`: include; anything else: same-origin); any other classic script
/// in no-cors mode.
pub(super) fn script_request(
    url: Url,
    origin: &Origin,
    kind: ScriptKind,
    crossorigin: Option<&str>,
) -> Request {
    let (mode, credentials) = match (kind, crossorigin) {
        (_, Some(v)) if v.eq_ignore_ascii_case("use-credentials") => {
            (Mode::Cors, Credentials::Include)
        }
        (ScriptKind::Module, _) | (_, Some(_)) => (Mode::Cors, Credentials::SameOrigin),
        (ScriptKind::Classic, None) => (Mode::NoCors, Credentials::Include),
    };
    Request::new(url, origin.clone(), mode, credentials)
}

/// What a page may see of a response (<https://fetch.spec.whatwg.org/#concept-filtered-response>).
pub(super) struct Filtered {
    /// `basic`, `cors`, `opaque` or `opaqueredirect`.
    pub kind: &'static str,
    pub headers: Vec<(String, String)>,
    pub status: u16,
    pub status_text: String,
    pub url: String,
    pub redirected: bool,
    pub body: Vec<u8>,
}

/// The response a page's `fetch()` may see (<https://fetch.spec.whatwg.org/#concept-filtered-response>):
/// an opaque or opaque-redirect one shows nothing (an opaque-redirect one its URL); a basic
/// one every header but `Set-Cookie`; a CORS one only the safelisted headers and those
/// `Access-Control-Expose-Headers` names.
pub(super) fn filtered_response(r: &Response, credentials: Credentials) -> Filtered {
    let all = || {
        r.headers
            .iter()
            .filter(|(n, _)| !jsprof_net::cors::is_forbidden_response_header_name(n.as_bytes()))
            .map(|(n, v)| (n.to_ascii_lowercase(), v.to_owned()))
    };
    let nothing = |kind: &'static str, url: String| Filtered {
        kind,
        headers: Vec::new(),
        status: 0,
        status_text: String::new(),
        url,
        redirected: false,
        body: Vec::new(),
    };
    if r.opaque_redirect {
        return nothing("opaqueredirect", r.url.to_string());
    }
    let (kind, headers) = match r.tainting {
        jsprof_net::Tainting::Opaque => return nothing("opaque", String::new()),
        jsprof_net::Tainting::Basic => ("basic", all().collect()),
        jsprof_net::Tainting::Cors => {
            const SAFELISTED: [&str; 7] = [
                "cache-control",
                "content-language",
                "content-length",
                "content-type",
                "expires",
                "last-modified",
                "pragma",
            ];
            let exposed: Vec<String> = r
                .headers
                .get_combined("access-control-expose-headers")
                .unwrap_or_default()
                .split(',')
                .map(|h| h.trim().to_ascii_lowercase())
                .filter(|h| !h.is_empty())
                .collect();
            let star = credentials != Credentials::Include && exposed.iter().any(|h| h == "*");
            let headers = all()
                .filter(|(n, _)| SAFELISTED.contains(&n.as_str()) || star || exposed.contains(n))
                .collect();
            ("cors", headers)
        }
    };
    Filtered {
        kind,
        headers,
        status: r.status,
        status_text: r.status_text.clone(),
        url: r.url.to_string(),
        redirected: r.redirected(),
        body: r.body.clone(),
    }
}
