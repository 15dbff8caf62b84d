//! The embedder's side of the natives: the safe [`Host`] trait a realm's natives (and the
//! generated bindings) call. It knows nothing of SpiderMonkey: `glue` calls it, the script
//! crate's `page` implements it, and [`runtime`](crate::runtime) hands it to DOM objects.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use jsprof_net::{Credentials, HeaderList, Mode, Redirect};
use jsprof_profiler::{ProfilerTrace, Session};

use jsprof_page_model::policy::ProfilingPolicy;

use crate::task::TaskSender;

/// What the natives of a realm ask of the embedder. Called re-entrantly from inside script:
/// implementations use interior mutability and never call back into JS.
pub trait Host {
    /// Writes console output (`stderr`: errors and warnings go to standard error).
    fn print(&self, window: usize, to_stderr: bool, text: &str);
    /// `performance.now()` for the window, in ms.
    fn now(&self, window: usize) -> f64;
    /// `performance.timeOrigin`, in ms since the Unix epoch.
    fn time_origin(&self, window: usize) -> f64;
    /// Arms timer `id` to fire after `delay` ms.
    fn set_timer(&self, window: usize, id: u32, delay: f64, repeat: bool);
    /// Disarms timer `id`.
    fn clear_timer(&self, window: usize, id: u32);
    /// Fetches a script synchronously (a module's import in CORS mode, or a classic script
    /// for a worker's `importScripts` in no-cors mode), or says why it could not be had.
    fn fetch_script(&self, window: usize, url: &str, module: bool)
        -> Result<FetchedScript, String>;
    /// Records a script window `window` just compiled, under its SpiderMonkey ScriptSource
    /// id, for the profiler (names, positions, realm, and whether its frames are hidden).
    #[allow(clippy::too_many_arguments)]
    fn register_script(
        &self,
        window: usize,
        source_id: jsprof_symbolizer::SourceId,
        url: &str,
        source: &str,
        line: u32,
        column: u32,
        module: bool,
        muted: bool,
    );
    /// Whether `url` is same-origin with the window's document.
    fn same_origin(&self, window: usize, url: &str) -> bool;
    /// Whether the documents of windows `a` and `b` are same-origin.
    fn windows_same_origin(&self, a: usize, b: usize) -> bool;
    /// A window's relatives in the frame tree: `what` -1 is its parent, -2 its top, -3 the
    /// number of its child frames, `n >= 0` its child frame `n`; -1 when there is none.
    fn frame_tree(&self, window: usize, what: i64) -> i64;
    /// The serialised origin of a window's document (a message's `origin`).
    fn window_origin(&self, window: usize) -> String;
    /// Posts serialised `data` from window `from` to window `to` (a task of `to`), if
    /// `target_origin` (`*`, `/`, or an origin's URL) allows `to`'s document.
    fn window_post(&self, from: usize, to: usize, data: &str, target_origin: &str);
    /// Fetches the script of element `index`, inserted by script (not by the parser): it
    /// runs, and its element gets `load` or `error`, when the response arrives. With
    /// `inline` text (an inline module of the document at `url`) nothing is fetched.
    fn load_script(
        &self,
        window: usize,
        index: u32,
        url: &str,
        module: bool,
        crossorigin: Option<String>,
        inline: Option<String>,
    );
    /// A dynamic `import()` is waiting: the event loop should call
    /// [`Js::finish_dynamic_imports`](crate::glue::Js::finish_dynamic_imports) soon.
    fn dynamic_import_pending(&self, window: usize);
    /// Opens a pair of message-port ends across threads; this window holds end 0.
    fn port_open(&self, window: usize) -> u64;
    /// This window holds end `end` of port pair `pid` from now on.
    fn port_attach(&self, window: usize, pid: u64, end: u8);
    /// A synchronous XMLHttpRequest: the filtered response as JSON (`type`, `status`,
    /// `statusText`, `url`, `redirected`, `headers`, and `body` as a byte string), or
    /// `{"error": message}`.
    fn fetch_sync(&self, window: usize, request: ApiRequest) -> String;
    /// Sends serialised `data` from end `end` of pair `pid` to the other end.
    fn port_send(&self, window: usize, pid: u64, end: u8, data: &str);
    /// The answer to WebDriver command `id`: `error` empty and `value` JSON, or the spec's
    /// error code and a message.
    fn webdriver_reply(&self, window: usize, id: u32, error: &str, value: &str);
    /// Starts dedicated worker `id` of the window: a script from `url`, or `source` (the
    /// text of a `blob:` URL).
    fn worker_start(&self, window: usize, id: u32, url: &str, source: Option<String>);
    /// Posts serialised `data` to worker `id`, or (`id` < 0, from a worker's global) to the
    /// worker's Worker object.
    fn worker_post(&self, window: usize, id: i64, data: &str);
    /// Terminates worker `id`, or (`id` < 0) closes the worker this runs in.
    fn worker_terminate(&self, window: usize, id: i64);
    /// A worker's uncaught exception, for its Worker object's `error` event.
    fn worker_error(&self, window: usize, message: &str, filename: &str, line: u32, column: u32);
    /// Loads the document of the window's iframe number `index` (a child browsing context;
    /// `sandboxed`: its document gets an opaque origin).
    fn load_frame(&self, window: usize, index: u32, url: &str, sandboxed: bool);
    /// The window's iframe number `index` left the document: its child window (loaded or
    /// still loading) is to be discarded.
    fn discard_frame(&self, window: usize, index: u32);
    /// Starts request `id` of the window's `fetch()` or asynchronous XMLHttpRequest: the
    /// result comes back as a task calling the prelude's `fetchDone`.
    fn fetch_start(&self, window: usize, id: u32, request: ApiRequest);
    /// Whether boolean pref `name` is true (false if there is no such pref).
    fn pref_enabled(&self, name: &str) -> bool;
    /// The `js-profiling` policy of the window's document (decision 2).
    fn js_profiling(&self, window: usize) -> ProfilingPolicy;
    /// Starts a profiling session for the window's realm, initialising sampling support
    /// first if the document's policy is lazy.
    fn start_profiling(
        &self,
        window: usize,
        sample_interval: f64,
        max_buffer_size: u32,
        on_buffer_full: Option<Box<dyn FnOnce() + Send>>,
    ) -> Result<Session, String>;
    /// A page's `Profiler` runs `session`: if it is still running when the event loop ends,
    /// the host stops it and keeps its trace, as if the page had stopped it.
    fn track_session(&self, window: usize, session: std::sync::Weak<Session>);
    /// Where the window's tasks go (from any thread).
    fn tasks(&self, window: usize) -> TaskSender;
    /// Where traces the page's profilers produce are also collected (`--trace-out`).
    fn trace_sink(&self) -> Option<Arc<Mutex<Vec<ProfilerTrace>>>>;
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

/// A script a module import or `importScripts` fetched.
#[derive(Debug)]
pub struct FetchedScript {
    pub source: String,
    /// Its final URL.
    pub url: String,
    /// True for a classic script from an opaque response.
    pub muted: bool,
}
