//! Running a page: the event loop (<https://html.spec.whatwg.org/#event-loops>) and the
//! script processing model (<https://html.spec.whatwg.org/#scripting>).
//!
//! One thread, one runtime, one event loop: the top window and its iframes' windows (each a
//! realm with its own document: [`Doc`]). Network loads run on helper threads and come back
//! as messages ([`Message`]); timers sit in a deadline queue; every task is followed by a
//! microtask checkpoint. Parser-blocking scripts run in document order (the event loop keeps
//! turning while one loads), `defer` and module scripts after parsing in order, `async` ones
//! as they arrive; `DOMContentLoaded` follows the deferred scripts and `load` waits for every
//! script and iframe. A dedicated worker ([`run_worker`]) is another such loop on its own
//! thread, with its own runtime, host and realm.

use std::collections::HashMap;
use std::rc::Rc;
use std::sync::{mpsc, Arc, Mutex, OnceLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use jsprof_net::{LoadError, Loader, Origin, Response, Url};
use jsprof_profiler::{
    Clock, GroupConfig, MonotonicClock, Nanos, ProfilerGroup, ProfilerTrace, Resolution, Session,
};
use jsprof_script_bindings::glue::Js;
use jsprof_script_bindings::host::Host;
use jsprof_script_bindings::runtime::WindowId;
use jsprof_script_bindings::task::Task;
use jsprof_spidermonkey::SamplingStats;

use crate::document::{self, ScriptElement, ScriptKind};
use crate::dom::DomTypeHolder;
use crate::policy::{self, Init, ProfilingPolicy};
use crate::prefs::Prefs;
use crate::watchdog::{Stop, Watchdog};

use self::host::{take_unbuilt, PageHost, BUILD_GRACE};
use self::scripts::{join_src, script_request};

mod browser;
mod console;
mod event_loop;
mod frames;
mod host;
mod host_calls;
mod scripts;
mod webdriver;

pub use self::browser::{run_navigation, Browser, Navigated, ScopeRecording};
pub use self::console::{Console, Stream};
pub use self::host::set_next_page_generation;
mod workers;

/// The prelude (`src/prelude/`): one function expression `(host, global, init) => hooks`,
/// kept in files by Web API and joined at build time, so a realm still evaluates one script.
const PRELUDE: &str = concat!(
    include_str!("../prelude/00-primordials.js"),
    include_str!("../prelude/01-dom-exception.js"),
    include_str!("../prelude/02-events.js"),
    include_str!("../prelude/03-url.js"),
    include_str!("../prelude/04-document.js"),
    include_str!("../prelude/05-window.js"),
    include_str!("../prelude/06-structured-clone.js"),
    include_str!("../prelude/07-messaging.js"),
    include_str!("../prelude/08-windows.js"),
    include_str!("../prelude/09-blob.js"),
    include_str!("../prelude/10-threads.js"),
    include_str!("../prelude/11-workers.js"),
    include_str!("../prelude/12-fetch.js"),
    include_str!("../prelude/12-globals.js"),
    include_str!("../prelude/13-webdriver.js"),
    include_str!("../prelude/14-hooks.js")
);

/// How to run a page.
#[derive(Debug, Clone)]
pub struct RunOptions {
    pub loader: Loader,
    pub prefs: Prefs,
    /// Stop turning the event loop after this long.
    pub timeout: Option<Duration>,
    /// Profile the whole run from outside (like a devtools profiler) at this interval in ms.
    pub profile_interval: Option<f64>,
    /// Keep every trace the page's own `Profiler`s produce (in [`RunReport::traces`]).
    pub collect_traces: bool,
    /// Where the page's console lines, uncaught errors and the engine's lines about it go.
    pub console: Console,
}

/// Why a page could not run at all (a page that throws still runs: its errors are reported).
#[derive(Debug, thiserror::Error)]
pub enum PageError {
    #[error(transparent)]
    Load(#[from] LoadError),
    #[error("{url}: HTTP status {status}")]
    Status { url: Url, status: u16 },
    #[error("{url}: {error}")]
    Document {
        url: Url,
        error: document::ParseError,
    },
    #[error("{0}")]
    Engine(String),
}

/// How a run ended.
#[derive(Debug, Clone)]
pub struct RunReport {
    /// The document's final URL.
    pub url: Url,
    /// True if `--timeout` ended the run with work left.
    pub timed_out: bool,
    /// The process's resident memory and its limit (`memory.max_resident_mb`), in bytes, if
    /// the run was stopped for passing it.
    pub out_of_memory: Option<(u64, u64)>,
    /// A panic caught in the engine (a bug): the run was stopped where it happened.
    pub internal_error: Option<String>,
    /// The trace of the whole run, if `profile_interval` was given.
    pub trace: Option<ProfilerTrace>,
    /// What sampling cost the page's thread, if it was profiled.
    pub sampling: Option<SamplingStats>,
    /// Wall time from navigation start to the end of the run.
    pub elapsed: Duration,
    /// Main-thread time of stopping the profiler (the trace is built on another thread).
    pub stop_time: Option<Duration>,
    /// The traces the page's `Profiler`s produced, in the order they were built (with
    /// [`RunOptions::collect_traces`]).
    pub traces: Vec<ProfilerTrace>,
    /// How many `Profiler`s the page stopped, and the main-thread time that took (`stop()`
    /// and the task resolving its promise).
    pub page_stops: (u32, Duration),
    /// Main-thread time spent on profiling support besides sampling itself: initialising it,
    /// registering scripts, and the in-script guards (how many, and their estimated time).
    pub support: Duration,
    pub guards: u64,
    /// The sampler's counters over the run (ticks, missed blocks, lateness, requests), if
    /// anything was profiled.
    pub sampler: Option<jsprof_profiler::SamplerStats>,
    /// The traces of profilers still running at the end that could not be built by the
    /// run's deadline, named by document (they are not in `traces`).
    pub unbuilt: Vec<String>,
    /// When whatever the run produced must be written by, if the run has a deadline: its
    /// `--timeout` plus [`WRITE_GRACE`] (the run's output may overrun it by a second).
    pub write_by: Option<Instant>,
    /// The process's sampler thread (the last one started, if the group started several),
    /// as that thread saw itself.
    pub sampler_thread: Option<SamplerThread>,
}

/// Where a sampler thread ran: its process and its thread id, as read on that thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SamplerThread {
    pub pid: u32,
    pub tid: u32,
}

/// The last sampler thread the process's group started (see [`on_sampler_thread`]).
static SAMPLER_THREAD: Mutex<Option<SamplerThread>> = Mutex::new(None);

/// Run by the group on each sampler thread it starts: notes where the thread runs (Linux's
/// `/proc/thread-self` names it `PID/task/TID`), then sets the thread up for sampling.
fn on_sampler_thread() {
    let me = std::fs::read_link("/proc/thread-self")
        .ok()
        .and_then(|link| {
            let link = link.to_str()?.to_owned();
            let (pid, tid) = link.split_once("/task/")?;
            Some(SamplerThread {
                pid: pid.parse().ok()?,
                tid: tid.parse().ok()?,
            })
        });
    if me.is_some() {
        *SAMPLER_THREAD.lock().unwrap_or_else(|e| e.into_inner()) = me;
    }
    jsprof_spidermonkey::setup_sampler_thread();
}

/// How long after the run's deadline its traces may still be written (building them had
/// [`host::BUILD_GRACE`] of it); the process then ends within the second `--timeout`
/// promises.
pub const WRITE_GRACE: Duration = Duration::from_millis(600);

/// The process's ProfilerGroup (one per process), with its base interval from the prefs of
/// the first page that needs it.
static GROUP: OnceLock<ProfilerGroup> = OnceLock::new();

fn profiler_group(prefs: &Prefs) -> Result<&'static ProfilerGroup, PageError> {
    if let Some(g) = GROUP.get() {
        return Ok(g);
    }
    let base = prefs.int("profiler.base_interval_ms");
    let group = ProfilerGroup::new(GroupConfig {
        base_interval: Duration::from_millis(base.max(0) as u64),
        on_sampler_thread: Some(on_sampler_thread),
        max_buffered_samples: prefs.count("profiler.max_buffered_samples") as u64,
        ..GroupConfig::default()
    })
    .map_err(|e| PageError::Engine(format!("--pref profiler.base_interval_ms={base}: {e}")))?;
    Ok(GROUP.get_or_init(|| group))
}

struct Timer {
    window: WindowId,
    id: u32,
    delay: Duration,
    repeat: bool,
}

/// Now, as a time origin: on the monotonic clock, and in Unix ms.
fn navigation_start() -> (Nanos, f64) {
    let unix_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64() * 1000.0);
    (MonotonicClock.now(), unix_ms)
}

/// What the host knows of one window's document.
#[derive(Debug, Clone)]
struct Doc {
    url: Url,
    /// The document's origin (<https://html.spec.whatwg.org/#concept-document-origin>): what
    /// every load it makes, every frame it reaches and every message it sends is checked
    /// against.
    origin: Origin,
    /// The time origin (<https://w3c.github.io/hr-time/#dfn-time-origin>): when this
    /// document's navigation started, on the monotonic clock and in Unix ms.
    time_origin: Nanos,
    origin_unix_ms: f64,
    /// The document's `js-profiling` policy (decision 2).
    policy: ProfilingPolicy,
    /// Whether COOP and COEP make the document cross-origin isolated (5 µs time, not 100).
    cross_origin_isolated: bool,
    /// The window whose iframe holds this document, if any.
    parent: Option<WindowId>,
    /// The windows of this document's iframes, by iframe number (in the order their loads
    /// started), once their documents arrived.
    frames: Vec<Option<WindowId>>,
}

impl Doc {
    /// The coarsening of the document's clock (<https://w3c.github.io/hr-time/#dfn-coarsen-time>).
    fn resolution(&self) -> Resolution {
        if self.cross_origin_isolated {
            Resolution::Isolated
        } else {
            Resolution::Coarse
        }
    }

    /// The document of `response`, whose navigation started at `started`; its origin is
    /// its URL's, or a fresh opaque one when `sandboxed`.
    fn of(response: &Response, started: (Nanos, f64), sandboxed: bool) -> Doc {
        Doc {
            url: response.url.clone(),
            origin: if sandboxed {
                Origin::new_opaque()
            } else {
                Origin::of(&response.url)
            },
            time_origin: started.0,
            origin_unix_ms: started.1,
            policy: policy::js_profiling(
                response.headers.get_combined("document-policy").as_deref(),
            ),
            cross_origin_isolated: cross_origin_isolated(response),
            parent: None,
            frames: Vec::new(),
        }
    }
}

/// The profiler service's `PROCESS` event for a load of frame `frame` (a window's index + 1)
/// that began at `start` and ended now, on whatever thread made it: its URL, status and
/// bytes (a network error: status 0, no bytes).
fn scope_load(
    recorder: Option<&Arc<jsprof_scope::Recorder>>,
    frame: u32,
    start: Instant,
    url: &str,
    result: Result<&Response, &LoadError>,
) {
    let Some(recorder) = recorder.filter(|r| r.is_recording()) else {
        return;
    };
    let details = match result {
        Ok(r) => jsprof_scope::Details::Process {
            url: r.url.to_string(),
            status: r.status,
            bytes: r.body.len() as u64,
        },
        Err(_) => jsprof_scope::Details::Process {
            url: url.to_owned(),
            status: 0,
            bytes: 0,
        },
    };
    recorder.record_span(frame, start, Instant::now(), details);
}

/// A script fetched on a helper thread.
struct Fetched {
    index: usize,
    result: Result<Response, LoadError>,
}

/// What reaches the event loop from other threads.
enum Message {
    Fetched(Fetched),
    Task(Task),
    /// A script element inserted by script (not by the parser): its response.
    Script {
        window: WindowId,
        element: ScriptElement,
        result: Result<Response, LoadError>,
        /// Keeps the loop turning until this is handled.
        _pending: jsprof_script_bindings::task::PendingTask,
    },
    /// The document of `parent`'s iframe number `index`.
    Frame {
        parent: WindowId,
        index: u32,
        /// The iframe's `sandbox` attribute gives its document an opaque origin.
        sandboxed: bool,
        /// When its navigation started (the child document's time origin).
        started: (Nanos, f64),
        result: Result<Response, LoadError>,
        /// Keeps the loop turning until this is handled.
        _pending: jsprof_script_bindings::task::PendingTask,
    },
    /// A command of the WebDriver server for this page (see [`webdriver`]).
    WebDriver(jsprof_webdriver::Command, jsprof_webdriver::Responder),
    /// The profiler service started a session: its sampling session starts (see
    /// [`Browser::scope_start`]).
    ScopeSampling,
}

/// A script ready to run.
struct Ready {
    source: String,
    url: String,
    line: u32,
    column: u32,
    muted: bool,
}

/// The page being run: its realm, its scripts and where loading stands.
struct Page {
    js: Js,
    host: Rc<PageHost>,
    window: WindowId,
    url: Url,
    scripts: Vec<ScriptElement>,
    messages: mpsc::Receiver<Message>,
    /// External scripts still being fetched.
    loads_outstanding: usize,
    /// Fetched external scripts, by element index, until their turn comes.
    arrived: HashMap<usize, Result<Response, LoadError>>,
    /// Async scripts not yet run (they delay the load event).
    async_left: Vec<usize>,
    deadline: Option<Instant>,
    /// Stopped with work left (at the deadline, by the watchdog, or stuck waiting).
    timed_out: bool,
    /// Set by the watchdog: nothing more runs (the interrupt callback terminates the running
    /// script).
    halt: Arc<std::sync::atomic::AtomicBool>,
    /// A worker's loop waits for messages even with nothing else to do, until closed.
    keep_alive: bool,
    /// A page the WebDriver server drives: it turns until the next navigation.
    browser: Option<browser::BrowserPage>,
    /// Whether the next turn looks at due timers before queued tasks (they alternate).
    timers_first: bool,
}

/// Loads the page at `url` and runs it to completion.
pub fn run_page(url: &Url, options: &RunOptions) -> Result<RunReport, PageError> {
    // The time origin: when navigation started (https://w3c.github.io/hr-time/#dfn-time-origin).
    let started = navigation_start();
    let deadline = options.timeout.map(|t| Instant::now() + t);
    // Every load of the run (the page's, its frames' and workers') ends by the deadline
    // and takes bodies up to `network.max_response_bytes`.
    let options = &RunOptions {
        loader: options.loader.limited(
            deadline,
            options.prefs.int("network.max_response_bytes").max(0) as u64,
        ),
        ..options.clone()
    };
    let (response, doc) = load_document(url, options, deadline)?;
    let (mut page, session) = Page::start(response, doc, started, options, deadline)?;
    let stop = page.run_to_end(options);
    Ok(page.report(started, stop, session))
}

/// Fetches the document at `url` and parses it (within the document limits and the deadline).
fn load_document(
    url: &Url,
    options: &RunOptions,
    deadline: Option<Instant>,
) -> Result<(Response, document::Document), PageError> {
    let response = options.loader.fetch(url)?;
    if !response.ok() {
        return Err(PageError::Status {
            url: response.url,
            status: response.status,
        });
    }
    let doc = document::parse(&response.text(), &options.prefs.document_limits(), deadline)
        .map_err(|error| PageError::Document {
            url: response.url.clone(),
            error,
        })?;
    Ok((response, doc))
}

impl Page {
    /// Runs the event loop to its end under the watchdog (`--timeout`, the memory limit),
    /// then ends the page's workers (and theirs) and its profilers. Says what the watchdog
    /// stopped, if anything.
    fn run_to_end(&mut self, options: &RunOptions) -> Option<Stop> {
        // A script that never returns cannot be stopped between tasks: the watchdog halts it
        // at the deadline, or when the process runs out of its memory.
        self.js.terminate_on_interrupt(self.halt.clone());
        let watchdog = {
            let interrupter = self.js.interrupter();
            let wake = self.host.messages_tx.clone();
            Watchdog::start(
                self.deadline,
                options.prefs.memory_limit(),
                self.halt.clone(),
                move || interrupter.request_interrupt_callback(),
                move || {
                    let _ = wake.send(Message::Task(Box::new(|_| {})));
                },
            )
        };
        // A panic in the engine's own code (a bug) ends the run like the deadline would, and
        // is reported; the profilers' traces are still written.
        if let Err(payload) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.run()))
        {
            jsprof_script_bindings::glue::record_internal_error(&*payload);
        }
        self.host.terminate_workers();
        self.host.stop_running_profilers();
        watchdog.and_then(Watchdog::finish)
    }

    /// The top document's event loop, ready to run: its runtime and window (the prelude
    /// run, the parser's iframes loading), sampling support if the policy says eager, the
    /// `--profile-out` session if asked, and every external script being fetched (as a
    /// preload scanner would).
    fn start(
        response: Response,
        doc: document::Document,
        started: (Nanos, f64),
        options: &RunOptions,
        deadline: Option<Instant>,
    ) -> Result<(Page, Option<Session>), PageError> {
        let (tx, messages) = mpsc::channel();
        let top_doc = Doc::of(&response, started, false);
        let host = PageHost::new(options, top_doc.clone(), tx.clone(), None);
        let mut js = Js::new::<DomTypeHolder>(host.clone());
        let _ = host.interrupter.set(js.interrupter());
        let init = host.init_json(&doc, &top_doc, WindowId(0));
        let window = js
            .new_window(PRELUDE, &init, top_doc.origin.clone())
            .map_err(PageError::Engine)?;
        // The parser's iframes start loading (their documents arrive as messages).
        js.call_hook(window, c"startFrames", &[]);
        // Document-Policy `js-profiling-mode=eager`: sampling support now, not with the
        // first Profiler.
        if top_doc.policy == ProfilingPolicy::Allowed(Init::Eager) {
            host.sampling_agent(window).map_err(PageError::Engine)?;
        }
        // Profiling from outside: one session for the window's realm, for the whole run.
        let session = match options.profile_interval {
            Some(interval) => Some(
                host.start_profiling(window, interval, u32::MAX, Default::default(), None)
                    .map_err(|e| PageError::Engine(format!("--profile-interval: {e}")))?,
            ),
            None => None,
        };
        let scope = jsprof_scope::record::current();
        if let Some(recorder) = &scope {
            recorder.set_frame(jsprof_scope::FrameInfo {
                frame_id: window.index() as u32 + 1,
                parent: None,
                url: response.url.to_string(),
            });
        }
        let mut loads_outstanding = 0;
        for s in doc.scripts.iter().filter(|s| s.index != usize::MAX) {
            if let Some(src) = &s.src {
                let scope = scope.clone();
                let tx = tx.clone();
                let loader = options.loader.clone();
                let index = s.index;
                let target = join_src(&response.url, src);
                let origin = top_doc.origin.clone();
                let (kind, crossorigin) = (s.kind, s.crossorigin.clone());
                let src = src.clone();
                std::thread::spawn(move || {
                    let start = Instant::now();
                    let result = target.and_then(|u| {
                        loader.fetch_request(&script_request(
                            u,
                            &origin,
                            kind,
                            crossorigin.as_deref(),
                        ))
                    });
                    scope_load(scope.as_ref(), 1, start, &src, result.as_ref());
                    let _ = tx.send(Message::Fetched(Fetched { index, result }));
                });
                loads_outstanding += 1;
            }
        }
        let page = Page {
            js,
            host,
            window,
            url: response.url.clone(),
            // `async` applies to external scripts and to modules (inline ones too).
            async_left: doc
                .scripts
                .iter()
                .filter(|s| {
                    s.index != usize::MAX
                        && s.is_async
                        && (s.src.is_some() || s.kind == ScriptKind::Module)
                })
                .map(|s| s.index)
                .collect(),
            scripts: doc.scripts,
            messages,
            loads_outstanding,
            arrived: HashMap::new(),
            deadline,
            timed_out: false,
            halt: Arc::new(std::sync::atomic::AtomicBool::new(false)),
            keep_alive: false,
            browser: None,
            timers_first: true,
        };
        Ok((page, session))
    }

    /// How the run ended: why it stopped, the `--profile-out` trace (its session stopped
    /// now), the page's traces and what sampling cost.
    fn report(
        mut self,
        started: (Nanos, f64),
        stop: Option<Stop>,
        session: Option<Session>,
    ) -> RunReport {
        self.timed_out |= stop.is_some();
        let internal_error = jsprof_script_bindings::glue::internal_error();
        let out_of_memory = match stop {
            Some(Stop::OutOfMemory { resident, limit }) => Some((resident, limit)),
            _ => None,
        };
        let elapsed = Duration::from_nanos(MonotonicClock.now() - started.0);
        let sampling = jsprof_spidermonkey::sampling_stats();
        let build_by = self.deadline.map(|d| d + BUILD_GRACE);
        let (trace, stop_time) = match session {
            Some(session) => {
                let (tx, rx) = mpsc::channel();
                let stop_start = Instant::now();
                let done = move |trace| {
                    let _ = tx.send(trace);
                };
                let _ = match build_by {
                    Some(by) => {
                        session.stop_within(by.saturating_duration_since(Instant::now()), done)
                    }
                    None => session.stop(done),
                };
                let stop_time = stop_start.elapsed();
                // An abandoned build drops the sender: recv fails then.
                (rx.recv().ok(), Some(stop_time))
            }
            None => (None, None),
        };
        let mut unbuilt = take_unbuilt();
        if stop_time.is_some() && trace.is_none() {
            unbuilt.push(format!("the --profile-out trace of {}", self.url));
        }
        RunReport {
            timed_out: self.timed_out && out_of_memory.is_none() && internal_error.is_none(),
            out_of_memory,
            internal_error,
            trace,
            sampling,
            elapsed,
            stop_time,
            traces: self
                .host
                .traces
                .as_ref()
                .map(|t| std::mem::take(&mut *t.lock().unwrap_or_else(|e| e.into_inner())))
                .unwrap_or_default(),
            page_stops: crate::dom::profiler::main_thread_stop_cost(),
            sampler: GROUP.get().map(ProfilerGroup::total_stats),
            support: self.host.support.get() + jsprof_spidermonkey::guard_time().1,
            guards: jsprof_spidermonkey::guard_time().0,
            url: self.url,
            unbuilt,
            write_by: self.deadline.map(|d| d + WRITE_GRACE),
            sampler_thread: *SAMPLER_THREAD.lock().unwrap_or_else(|e| e.into_inner()),
        }
    }
}

/// Whether a document with this response is cross-origin isolated: a secure context whose
/// `Cross-Origin-Opener-Policy` is `same-origin` and whose `Cross-Origin-Embedder-Policy` is
/// `require-corp` or `credentialless` (<https://html.spec.whatwg.org/#concept-settings-object-cross-origin-isolated-capability>).
fn cross_origin_isolated(response: &Response) -> bool {
    let secure = response.url.scheme() == "https"
        || matches!(response.url.host_str(), Some("localhost" | "127.0.0.1"));
    // Repeated fields are combined: two values do not parse as one Item, so count as none.
    secure
        && policy::cross_origin_isolated(
            response
                .headers
                .get_combined("cross-origin-opener-policy")
                .as_deref(),
            response
                .headers
                .get_combined("cross-origin-embedder-policy")
                .as_deref(),
        )
}
