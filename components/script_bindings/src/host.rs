//! The embedder's side of the natives: the safe [`Host`] trait a realm's natives (and the
//! generated bindings) call. It knows nothing of SpiderMonkey: `glue` calls it, the script
//! crate's `page` implements it, and the [`Global`] a binding runs in hands it to DOM
//! objects.

use std::rc::Rc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use jsprof_net::{Credentials, HeaderList, Mode, Redirect};
use jsprof_profiler::{ProfilerTrace, Session};

use jsprof_page_model::policy::ProfilingPolicy;

use crate::generated_types::{JsprofFetchRequest, JsprofHostMethods};
use crate::runtime::{Error, Fallible, WindowId};
use crate::task::TaskSender;
use jsprof_symbolizer::SourceId;

/// What the natives of a realm and the DOM objects ask of the embedder, beyond the host
/// interface the prelude calls: that one is [`JsprofHostMethods`], generated from
/// `webidl/internal/host.webidl`, which the embedder implements directly (each operation
/// given the caller's window). Called re-entrantly from inside script: implementations use
/// interior mutability and never call back into JS.
pub trait Host: JsprofHostMethods {
    /// Fetches a script synchronously (a module's import in CORS mode, or a classic script
    /// for a worker's `importScripts` in no-cors mode), or says why it could not be had.
    fn fetch_script(
        &self,
        window: WindowId,
        url: &str,
        module: bool,
    ) -> Result<FetchedScript, String>;
    /// Records `script`, which window `window` just compiled, under its SpiderMonkey
    /// ScriptSource id `id`, for the profiler (names, positions, realm, and whether its
    /// frames are hidden).
    fn register_script(&self, window: WindowId, id: SourceId, script: ScriptSource<'_>);
    /// Whether the documents of windows `a` and `b` are same-origin.
    fn windows_same_origin(&self, a: WindowId, b: WindowId) -> bool;
    /// A dynamic `import()` is waiting: the event loop should call
    /// [`Js::finish_dynamic_imports`](crate::glue::Js::finish_dynamic_imports) soon.
    fn dynamic_import_pending(&self, window: WindowId);
    /// Whether boolean pref `name` is true (false if there is no such pref).
    fn pref_enabled(&self, name: &str) -> bool;
    /// The `js-profiling` policy of the window's document (decision 2).
    fn js_profiling(&self, window: WindowId) -> ProfilingPolicy;
    /// Starts a profiling session for the window's realm, initialising sampling support
    /// first if the document's policy is lazy.
    fn start_profiling(
        &self,
        window: WindowId,
        sample_interval: f64,
        max_buffer_size: u32,
        buffer_policy: jsprof_profiler::BufferPolicy,
        on_buffer_full: Option<Box<dyn FnOnce() + Send>>,
    ) -> Result<Session, String>;
    /// A page's `Profiler` runs `session`: if it is still running when the event loop ends,
    /// the host stops it and keeps its trace, as if the page had stopped it.
    fn track_session(&self, window: WindowId, session: std::sync::Weak<Session>);
    /// Where the window's tasks go (from any thread).
    fn tasks(&self, window: WindowId) -> TaskSender;
    /// Where traces the page's profilers produce are also collected (`--trace-out`).
    fn trace_sink(&self) -> Option<Arc<Mutex<Vec<ProfilerTrace>>>>;
}

/// The global object a binding runs in, as the embedder sees it: the realm's host, and the
/// window the call is made in.
pub struct Global {
    pub host: Rc<dyn Host>,
    pub window: WindowId,
}

impl std::fmt::Debug for Global {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Global")
            .field("window", &self.window)
            .finish()
    }
}

/// A request a page's `fetch()` or `XMLHttpRequest` makes, as the prelude checked it (method,
/// URL, header list through its guard, body bytes): the client's origin is the window's.
#[derive(Debug, Clone)]
pub struct ApiRequest {
    pub method: String,
    pub url: String,
    pub headers: HeaderList,
    pub body: Option<Vec<u8>>,
    pub mode: Mode,
    pub credentials: Credentials,
    pub redirect: Redirect,
    pub use_cors_preflight: bool,
    /// A synchronous request's timeout.
    pub timeout: Option<Duration>,
}

impl ApiRequest {
    /// The request the prelude described (the IDL dictionary `JsprofFetchRequest`), its
    /// header lines parsed (a malformed one is a `TypeError`: the prelude never makes one).
    pub fn from_idl(r: JsprofFetchRequest) -> Fallible<ApiRequest> {
        let headers = HeaderList::from_lines(&r.headers.0).map_err(Error::Type)?;
        Ok(ApiRequest {
            // A method is a token (the prelude checked it): ASCII, so this is lossless.
            method: String::from_utf8_lossy(&r.method.0).into_owned(),
            url: r.url,
            headers,
            body: r.body.map(|b| b.0),
            mode: r.mode,
            credentials: r.credentials,
            redirect: r.redirect,
            use_cors_preflight: r.use_cors_preflight,
            timeout: r
                .timeout
                .filter(|&ms| ms > 0)
                .map(|ms| Duration::from_millis(u64::from(ms))),
        })
    }
}

/// A script the engine just compiled, as the profiler's registry records it (with its
/// SpiderMonkey ScriptSource id and its window's realm): where its text came from and where
/// that text starts.
#[derive(Debug, Clone, Copy)]
pub struct ScriptSource<'a> {
    /// Its URL (an inline script's is its document's).
    pub url: &'a str,
    /// Its text.
    pub text: &'a str,
    /// Where the text starts in the resource (1-based; an inline script's position in its
    /// HTML file).
    pub line: u32,
    pub column: u32,
    /// A module rather than a classic script.
    pub module: bool,
    /// A classic script with muted errors (cross-origin without CORS): its frames never
    /// show in a trace.
    pub muted: bool,
}

/// A script a module import or `importScripts` fetched.
#[derive(Debug)]
pub struct FetchedScript {
    pub source: String,
    /// Its final URL.
    pub url: String,
    /// True for a classic script from an opaque response.
    pub muted: bool,
}
