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

use std::cell::{Cell, OnceCell, RefCell};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Write;
use std::rc::Rc;
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use std::sync::{Arc, Mutex, OnceLock};

use jsprof_net::{Credentials, LoadError, Loader, Mode, Origin, Request, Response, Url};
use jsprof_profiler::{
    AgentHandle, Clock, GroupConfig, MonotonicClock, Nanos, ProfilerGroup, ProfilerTrace,
    Resolution, Session, SessionOptions,
};

use crate::document::{self, ScriptElement, ScriptKind};
use crate::dom::bindings::runtime::GlobalKind;
use crate::dom::{Task, TaskSender};
use crate::glue::{realm_of, Arg, Host, Js, SamplingStats};
use crate::policy::{self, Init, ProfilingPolicy};
use crate::prefs::Prefs;
use crate::symbols::ScriptRegistry;
use crate::watchdog::{Stop, Watchdog};

const PRELUDE: &str = include_str!("prelude.js");

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
}

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
        on_sampler_thread: Some(crate::glue::setup_sampler_thread),
        ..GroupConfig::default()
    })
    .map_err(|e| PageError::Engine(format!("--pref profiler.base_interval_ms={base}: {e}")))?;
    Ok(GROUP.get_or_init(|| group))
}

struct Timer {
    window: usize,
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
    parent: Option<usize>,
    /// The windows of this document's iframes, by iframe number (in the order their loads
    /// started), once their documents arrived.
    frames: Vec<Option<usize>>,
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

/// The prelude's `init`: the document's URL, its tree and what the window needs to know.
fn init_json(doc: &document::Document, d: &Doc, window: usize) -> String {
    serde_json::json!({
        "url": d.url.as_str(),
        "nodes": doc.nodes,
        "crossOriginIsolated": d.cross_origin_isolated,
        "windowIndex": window,
    })
    .to_string()
}

/// The embedder state natives reach (through [`Host`]). Only interior mutability: natives run
/// while the event loop is inside a call into JS.
struct PageHost {
    clock: MonotonicClock,
    /// Each window's document, by window index.
    docs: RefCell<Vec<Doc>>,
    /// iframes whose documents are being fetched (the top document's load event waits).
    frames_loading: Cell<usize>,
    /// Script elements inserted by script whose responses have not arrived (they delay the
    /// load event too).
    scripts_loading: Cell<usize>,
    /// Where other threads send the event loop what they have (a child document).
    messages_tx: mpsc::Sender<Message>,
    timers: RefCell<BTreeMap<(Instant, u64), Timer>>,
    timer_keys: RefCell<HashMap<(usize, u32), (Instant, u64)>>,
    timer_seq: Cell<u64>,
    clamp: Duration,
    imports_pending: Cell<bool>,
    registry: Arc<ScriptRegistry>,
    /// Interrupts this page's runtime (the sampler's way in), once the runtime exists.
    interrupter: OnceCell<mozjs::rust::ThreadSafeJSContext>,
    /// The page's agent in the ProfilerGroup, once sampling support is initialised.
    agent: RefCell<Option<AgentHandle>>,
    tasks: TaskSender,
    /// Where the traces of the run's `Profiler`s go (one sink for a page and its workers).
    traces: Option<Arc<Mutex<Vec<ProfilerTrace>>>>,
    /// The sessions of this loop's `Profiler`s, by window (stopped at the loop's end, or when
    /// their window is discarded, if still running).
    sessions: RefCell<Vec<(usize, std::sync::Weak<Session>)>>,
    /// Windows whose iframe left the document: nothing runs in them any more.
    discarded: RefCell<HashSet<usize>>,
    /// (parent window, iframe number) of iframes removed from their document, so that a
    /// load still in flight for one is dropped when it arrives.
    discarded_frames: RefCell<HashSet<(usize, u32)>>,
    /// How the page was run (its loader and prefs; workers are run the same way).
    options: RunOptions,
    /// For a worker's event loop: its creator.
    parent: Option<WorkerParent>,
    /// The dedicated workers this loop's windows started, by id.
    workers: RefCell<HashMap<u32, WorkerHandle>>,
    /// Set to end this loop (a worker's `terminate()`/`close()`): checked between tasks, and
    /// by the interrupt callback to stop a running script.
    closed: Arc<std::sync::atomic::AtomicBool>,
    /// For a worker's loop: held while it has work (its script, timers, loads, tasks), so
    /// that its creator's page does not end before the worker has said what it had to say.
    busy: RefCell<Option<crate::dom::PendingTask>>,
    /// Main-thread time spent on profiling support: initialising it, registering scripts
    /// (the in-script guards are counted by the glue).
    support: Cell<Duration>,
}

/// Message ports whose two ends live on different threads (one was transferred to a worker):
/// pair id -> the loops holding each end, and messages waiting for an end to arrive.
static PORT_PAIRS: std::sync::Mutex<BTreeMap<u64, PortPair>> =
    std::sync::Mutex::new(BTreeMap::new());
static NEXT_PORT_PAIR: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

#[derive(Default)]
struct PortPair {
    ends: [Option<(TaskSender, usize)>; 2],
    waiting: [Vec<String>; 2],
}

/// Delivers `data` to end `end` of pair `pid` (a task of the loop holding it).
fn deliver_port_message(holder: &(TaskSender, usize), pid: u64, end: u8, data: String) {
    let window = holder.1;
    holder.0.queue(Box::new(move |js| {
        js.call_hook(
            window,
            c"portMessage",
            &[
                Arg::Num(pid as f64),
                Arg::Num(f64::from(end)),
                Arg::Str(&data),
            ],
        );
    }));
}

/// A worker's creator: where its messages and errors go.
#[derive(Debug, Clone)]
struct WorkerParent {
    tasks: TaskSender,
    window: usize,
    id: u32,
    /// The run's trace sink.
    traces: Option<Arc<Mutex<Vec<ProfilerTrace>>>>,
}

/// A running dedicated worker, seen from its creator.
struct WorkerHandle {
    tasks: TaskSender,
    closed: Arc<std::sync::atomic::AtomicBool>,
    interrupter: mozjs::rust::ThreadSafeJSContext,
    thread: std::thread::JoinHandle<()>,
}

impl WorkerHandle {
    /// Ends the worker's loop (and a script it is running) and waits for its thread.
    fn terminate(self) {
        self.closed
            .store(true, std::sync::atomic::Ordering::Release);
        self.tasks.queue(Box::new(|_| {}));
        self.interrupter.request_interrupt_callback();
        let _ = self.thread.join();
    }
}

impl Host for PageHost {
    fn print(&self, _window: usize, to_stderr: bool, text: &str) {
        if to_stderr {
            let _ = std::io::stdout().flush();
            let _ = writeln!(std::io::stderr(), "{text}");
        } else {
            let _ = writeln!(std::io::stdout(), "{text}");
        }
    }

    fn now(&self, window: usize) -> f64 {
        let doc = self.doc(window);
        doc.resolution()
            .relative_ms(self.clock.now(), doc.time_origin)
    }

    fn time_origin(&self, window: usize) -> f64 {
        self.doc(window).origin_unix_ms
    }

    fn set_timer(&self, window: usize, id: u32, delay: f64, repeat: bool) {
        let delay = Duration::from_secs_f64((delay.max(0.0) / 1000.0).min(1e9)).max(self.clamp);
        self.arm(
            Timer {
                window,
                id,
                delay,
                repeat,
            },
            Instant::now() + delay,
        );
    }

    fn clear_timer(&self, window: usize, id: u32) {
        if let Some(key) = self.timer_keys.borrow_mut().remove(&(window, id)) {
            self.timers.borrow_mut().remove(&key);
        }
    }

    fn fetch_script(
        &self,
        window: usize,
        url: &str,
        module: bool,
    ) -> Result<FetchedScript, String> {
        // A module (a static or dynamic import) in CORS mode; a worker's importScripts in
        // no-cors mode, whose opaque response gives a script with muted errors.
        let url = jsprof_net::parse_url(url).map_err(|e| e.to_string())?;
        let kind = if module {
            ScriptKind::Module
        } else {
            ScriptKind::Classic
        };
        let request = script_request(url, &self.doc(window).origin, kind, None);
        let response = self
            .options
            .loader
            .fetch_request(&request)
            .map_err(|e| e.to_string())?;
        if !response.ok() {
            return Err(format!("{}: HTTP status {}", response.url, response.status));
        }
        let muted = !module && response.is_opaque();
        Ok(FetchedScript {
            source: response.text(),
            url: response.url.to_string(),
            muted,
        })
    }

    fn dynamic_import_pending(&self, _window: usize) {
        self.imports_pending.set(true);
    }

    fn fetch_start(&self, window: usize, id: u32, url: &str, mode: &str, credentials: &str) {
        let pending = self.tasks.expect();
        let loader = self.options.loader.clone();
        // https://fetch.spec.whatwg.org/#dom-request: mode "cors" and credentials
        // "same-origin" unless the page asks otherwise.
        let mode = match mode {
            "no-cors" => Mode::NoCors,
            "same-origin" => Mode::SameOrigin,
            _ => Mode::Cors,
        };
        let credentials = match credentials {
            "include" => Credentials::Include,
            "omit" => Credentials::Omit,
            _ => Credentials::SameOrigin,
        };
        let origin = self.doc(window).origin.clone();
        let url = url.to_owned();
        std::thread::spawn(move || {
            let outcome = jsprof_net::parse_url(&url)
                .and_then(|u| loader.fetch_request(&Request::new(u, origin, mode, credentials)))
                .map_err(|e| e.to_string());
            pending.queue(Box::new(move |js| {
                // What the page may see of the response: its filtered response
                // (https://fetch.spec.whatwg.org/#concept-filtered-response).
                let (status, final_url, meta, body, error) = match outcome {
                    Ok(r) => {
                        let (kind, headers, status, url, body) = filtered_response(&r, credentials);
                        let meta = serde_json::json!({ "type": kind, "headers": headers });
                        (
                            f64::from(status),
                            url,
                            meta.to_string(),
                            body,
                            String::new(),
                        )
                    }
                    Err(e) => (0.0, String::new(), "{}".into(), String::new(), e),
                };
                js.call_hook(
                    window,
                    c"fetchDone",
                    &[
                        Arg::Num(f64::from(id)),
                        Arg::Num(status),
                        Arg::Str(&final_url),
                        Arg::Str(&meta),
                        Arg::Str(&body),
                        Arg::Str(&error),
                    ],
                );
            }));
        });
    }

    fn windows_same_origin(&self, a: usize, b: usize) -> bool {
        let docs = self.docs.borrow();
        match (docs.get(a), docs.get(b)) {
            (Some(a), Some(b)) => a.origin.same_origin(&b.origin),
            _ => false,
        }
    }

    fn frame_tree(&self, window: usize, what: i64) -> i64 {
        let docs = self.docs.borrow();
        let Some(doc) = docs.get(window) else {
            return -1;
        };
        let index = |w: Option<usize>| w.map_or(-1, |w| w as i64);
        match what {
            -1 => index(doc.parent),
            -2 => {
                let mut top = window;
                while let Some(p) = docs.get(top).and_then(|d| d.parent) {
                    top = p;
                }
                top as i64
            }
            -3 => doc.frames.iter().flatten().count() as i64,
            n if n >= 0 => index(doc.frames.get(n as usize).copied().flatten()),
            _ => -1,
        }
    }

    fn window_origin(&self, window: usize) -> String {
        self.docs
            .borrow()
            .get(window)
            .map_or("null".to_owned(), |d| d.origin.serialize())
    }

    fn window_post(&self, from: usize, to: usize, data: &str, target_origin: &str) {
        // window.postMessage (https://html.spec.whatwg.org/#window-post-message-steps),
        // steps 2-4: "*" allows any target; "/" the sender's own origin; any other value
        // (already parsed by the caller) only that origin.
        let allowed = {
            let docs = self.docs.borrow();
            let (Some(sender), Some(target)) = (docs.get(from), docs.get(to)) else {
                return;
            };
            match target_origin {
                "*" => true,
                "/" => sender.origin.same_origin(&target.origin),
                url => Url::parse(url).is_ok_and(|u| target.origin.same_origin_url(&u)),
            }
        };
        if !allowed {
            return;
        }
        let origin = self.window_origin(from);
        let data = data.to_owned();
        self.tasks.queue(Box::new(move |js| {
            js.call_hook(
                to,
                c"windowMessage",
                &[Arg::Str(&data), Arg::Num(from as f64), Arg::Str(&origin)],
            );
        }));
    }

    fn register_script(
        &self,
        window: usize,
        source_id: u32,
        url: &str,
        source: &str,
        line: u32,
        column: u32,
        module: bool,
        muted: bool,
    ) {
        // A document whose policy forbids profiling can never have a Profiler: unless the
        // shell profiles it from outside, its scripts need no names (and the page pays
        // nothing for a header it does not send).
        if self.doc(window).policy == ProfilingPolicy::Disallowed
            && self.options.profile_interval.is_none()
        {
            return;
        }
        let start = Instant::now();
        self.registry
            .register(source_id, window, url, source, line, column, module, muted);
        self.support.set(self.support.get() + start.elapsed());
    }

    fn same_origin(&self, window: usize, url: &str) -> bool {
        Url::parse(url).is_ok_and(|u| self.doc(window).origin.same_origin_url(&u))
    }

    fn load_script(
        &self,
        window: usize,
        index: u32,
        url: &str,
        module: bool,
        crossorigin: Option<String>,
        inline: Option<String>,
    ) {
        let kind = if module {
            ScriptKind::Module
        } else {
            ScriptKind::Classic
        };
        let element = ScriptElement {
            index: index as usize,
            kind,
            src: inline.is_none().then(|| url.to_owned()),
            is_async: true,
            defer: false,
            crossorigin,
            text: String::new(),
            line: 1,
            column: 1,
        };
        self.scripts_loading.set(self.scripts_loading.get() + 1);
        let pending = self.tasks.expect();
        let loader = self.options.loader.clone();
        let origin = self.doc(window).origin.clone();
        let tx = self.messages_tx.clone();
        let url = url.to_owned();
        std::thread::spawn(move || {
            let result = jsprof_net::parse_url(&url).and_then(|u| match inline {
                // An inline module: its text, at its document's URL.
                Some(text) => Ok(Response {
                    url: u.clone(),
                    url_list: vec![u],
                    status: 200,
                    headers: Default::default(),
                    body: text.into_bytes(),
                    tainting: jsprof_net::Tainting::Basic,
                }),
                None => loader.fetch_request(&script_request(
                    u,
                    &origin,
                    element.kind,
                    element.crossorigin.as_deref(),
                )),
            });
            let _ = tx.send(Message::Script {
                window,
                element,
                result,
                _pending: pending,
            });
        });
    }

    fn worker_start(&self, window: usize, id: u32, url: &str, source: Option<String>) {
        let Ok(url) = Url::parse(url) else {
            return;
        };
        let creator = self.doc(window).clone();
        let options = self.options.clone();
        let parent = WorkerParent {
            tasks: self.tasks.clone(),
            window,
            id,
            traces: self.traces.clone(),
        };
        let (ready_tx, ready_rx) = mpsc::sync_channel(1);
        let thread = std::thread::Builder::new()
            .name(format!("jsprof-worker-{id}"))
            .spawn(move || run_worker(url, source, creator, options, parent, ready_tx));
        let Ok(thread) = thread else {
            self.print(window, true, "jsprof: cannot start a worker thread");
            return;
        };
        // The worker's loop exists (messages posted now wait in its queue) once it says so.
        match ready_rx.recv() {
            Ok((tasks, closed, interrupter)) => {
                self.workers.borrow_mut().insert(
                    id,
                    WorkerHandle {
                        tasks,
                        closed,
                        interrupter,
                        thread,
                    },
                );
            }
            Err(_) => {
                let _ = thread.join();
            }
        }
    }

    fn port_open(&self, window: usize) -> u64 {
        let pid = NEXT_PORT_PAIR.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut pairs = PORT_PAIRS.lock().unwrap_or_else(|e| e.into_inner());
        pairs.entry(pid).or_default().ends[0] = Some((self.tasks.clone(), window));
        pid
    }

    fn port_attach(&self, window: usize, pid: u64, end: u8) {
        let end = usize::from(end.min(1));
        let mut pairs = PORT_PAIRS.lock().unwrap_or_else(|e| e.into_inner());
        let pair = pairs.entry(pid).or_default();
        let holder = (self.tasks.clone(), window);
        for data in std::mem::take(&mut pair.waiting[end]) {
            deliver_port_message(&holder, pid, end as u8, data);
        }
        pair.ends[end] = Some(holder);
    }

    fn port_send(&self, _window: usize, pid: u64, end: u8, data: &str) {
        let to = 1 - usize::from(end.min(1));
        let mut pairs = PORT_PAIRS.lock().unwrap_or_else(|e| e.into_inner());
        let Some(pair) = pairs.get_mut(&pid) else {
            return;
        };
        match &pair.ends[to] {
            Some(holder) => deliver_port_message(holder, pid, to as u8, data.to_owned()),
            None => pair.waiting[to].push(data.to_owned()),
        }
    }

    fn worker_post(&self, _window: usize, id: i64, data: &str) {
        let data = data.to_owned();
        if id < 0 {
            // From a worker's global to its Worker object in the creator's realm.
            self.to_worker_object(move |js, w, id| {
                js.call_hook(
                    w,
                    c"workerMessage",
                    &[Arg::Num(f64::from(id)), Arg::Str(&data)],
                );
            });
        } else if let Some(worker) = self.workers.borrow().get(&(id as u32)) {
            worker.tasks.queue(Box::new(move |js| {
                js.call_hook(0, c"workerMessage", &[Arg::Num(0.0), Arg::Str(&data)]);
            }));
        }
    }

    fn worker_terminate(&self, _window: usize, id: i64) {
        if id < 0 {
            self.closed
                .store(true, std::sync::atomic::Ordering::Release);
        } else if let Some(worker) = self.workers.borrow_mut().remove(&(id as u32)) {
            worker.terminate();
        }
    }

    fn worker_error(&self, _window: usize, message: &str, filename: &str, line: u32, column: u32) {
        let (message, filename) = (message.to_owned(), filename.to_owned());
        self.to_worker_object(move |js, w, id| {
            js.call_hook(
                w,
                c"workerError",
                &[
                    Arg::Num(f64::from(id)),
                    Arg::Str(&message),
                    Arg::Str(&filename),
                    Arg::Num(f64::from(line)),
                    Arg::Num(f64::from(column)),
                ],
            );
        });
    }

    fn pref_enabled(&self, name: &str) -> bool {
        self.options.prefs.get_bool(name).unwrap_or(false)
    }

    fn js_profiling(&self, window: usize) -> ProfilingPolicy {
        self.doc(window).policy
    }

    fn load_frame(&self, window: usize, index: u32, url: &str, sandboxed: bool) {
        self.frames_loading.set(self.frames_loading.get() + 1);
        let pending = self.tasks.expect();
        let loader = self.options.loader.clone();
        let tx = self.messages_tx.clone();
        let origin = self.doc(window).origin.clone();
        let url = url.to_owned();
        // The iframe's navigation starts now: its document's time origin.
        let started = navigation_start();
        std::thread::spawn(move || {
            // A navigation by the parent's document: any origin, but no file: URL for a
            // web page.
            let result = jsprof_net::parse_url(&url)
                .and_then(|u| loader.fetch_request(&Request::navigate(u, Some(origin))));
            let _ = tx.send(Message::Frame {
                parent: window,
                index,
                started,
                sandboxed,
                result,
                _pending: pending,
            });
        });
    }

    fn start_profiling(
        &self,
        window: usize,
        sample_interval: f64,
        max_buffer_size: u32,
        on_buffer_full: Option<Box<dyn FnOnce() + Send>>,
    ) -> Result<Session, String> {
        let agent = self.sampling_agent(window)?;
        crate::glue::enable_sampling();
        let group = profiler_group(&self.options.prefs).map_err(|e| e.to_string())?;
        let doc = self.doc(window);
        group
            .start_session(SessionOptions {
                agent,
                realm: realm_of(window),
                sample_interval,
                max_buffer_size,
                time_origin: doc.time_origin,
                cross_origin_isolated: doc.cross_origin_isolated,
                symbolizer: self.registry.clone(),
                on_buffer_full,
            })
            .map_err(|e| format!("sampleInterval {sample_interval}: {e}"))
    }

    fn tasks(&self, _window: usize) -> TaskSender {
        self.tasks.clone()
    }

    fn trace_sink(&self) -> Option<Arc<Mutex<Vec<ProfilerTrace>>>> {
        self.traces.clone()
    }

    fn track_session(&self, window: usize, session: std::sync::Weak<Session>) {
        let mut sessions = self.sessions.borrow_mut();
        // Forget the ones gone (a page that starts and drops many profilers stays bounded).
        if sessions.len() >= 64 && sessions.len().is_power_of_two() {
            sessions.retain(|(_, s)| s.upgrade().is_some_and(|s| !s.is_stopped()));
        }
        sessions.push((window, session));
    }

    fn discard_frame(&self, window: usize, index: u32) {
        self.discarded_frames.borrow_mut().insert((window, index));
        let child = self
            .doc(window)
            .frames
            .get(index as usize)
            .copied()
            .flatten();
        let Some(child) = child else {
            return; // Still loading: dropped when it arrives.
        };
        // The child and every window below it.
        let mut windows = vec![child];
        let mut i = 0;
        while i < windows.len() {
            let below: Vec<usize> = self
                .doc(windows[i])
                .frames
                .iter()
                .flatten()
                .copied()
                .collect();
            windows.extend(below);
            i += 1;
        }
        let gone: HashSet<usize> = windows.iter().copied().collect();
        self.discarded.borrow_mut().extend(gone.iter().copied());
        // Their profilers stop (their traces are kept, as at the end of a run), their
        // timers go, and their realms are let go by a task (not while script runs).
        self.stop_profilers(|w| gone.contains(&w));
        let timers: Vec<(usize, u32)> = self
            .timer_keys
            .borrow()
            .keys()
            .filter(|(w, _)| gone.contains(w))
            .copied()
            .collect();
        for (w, id) in timers {
            self.clear_timer(w, id);
        }
        self.tasks.queue(Box::new(move |js| {
            for w in windows {
                js.discard_window(w);
            }
        }));
    }
}

impl PageHost {
    /// The host of one event loop: a page's (and its iframes'), or a worker's (`parent`: its
    /// creator).
    fn new(
        options: &RunOptions,
        doc: Doc,
        tx: mpsc::Sender<Message>,
        parent: Option<WorkerParent>,
    ) -> Rc<PageHost> {
        let task_tx = tx.clone();
        let busy = RefCell::new(parent.as_ref().map(|p| p.tasks.expect()));
        Rc::new(PageHost {
            clock: MonotonicClock,
            docs: RefCell::new(vec![doc]),
            frames_loading: Cell::new(0),
            scripts_loading: Cell::new(0),
            messages_tx: tx,
            timers: RefCell::default(),
            timer_keys: RefCell::default(),
            timer_seq: Cell::new(0),
            clamp: Duration::from_millis(options.prefs.int("dom.timeout_clamp_ms").max(0) as u64),
            imports_pending: Cell::new(false),
            registry: ScriptRegistry::new(),
            interrupter: OnceCell::new(),
            agent: RefCell::new(None),
            tasks: TaskSender::new(move |task| {
                let _ = task_tx.send(Message::Task(task));
            }),
            traces: match &parent {
                Some(p) => p.traces.clone(),
                None => options.collect_traces.then(Arc::default),
            },
            sessions: RefCell::default(),
            discarded: RefCell::default(),
            discarded_frames: RefCell::default(),
            options: options.clone(),
            parent,
            workers: RefCell::default(),
            closed: Arc::default(),
            busy,
            support: Cell::new(Duration::ZERO),
        })
    }

    /// At the end of this event loop: stops the `Profiler` sessions still running and keeps
    /// their traces in the run's sink (in the order they were built), as if the page had
    /// called `stop()`. Waits for the traces (they are built on the builder thread).
    fn stop_running_profilers(&self) {
        self.stop_profilers(|_| true);
    }

    /// Stops the running `Profiler` sessions of the windows `of` selects, keeping their
    /// traces in the run's sink if it has one, and waits for those traces.
    fn stop_profilers(&self, of: impl Fn(usize) -> bool) {
        let sessions: Vec<std::sync::Weak<Session>> = {
            let mut all = self.sessions.borrow_mut();
            let (chosen, kept): (Vec<_>, Vec<_>) = std::mem::take(&mut *all)
                .into_iter()
                .partition(|(w, _)| of(*w));
            *all = kept;
            chosen.into_iter().map(|(_, s)| s).collect()
        };
        let Some(sink) = self.traces.clone() else {
            for session in sessions.iter().filter_map(std::sync::Weak::upgrade) {
                let _ = session.stop(|_| {});
            }
            return;
        };
        let (tx, rx) = mpsc::channel();
        let mut waiting = 0;
        for session in sessions.iter().filter_map(std::sync::Weak::upgrade) {
            let (tx, sink) = (tx.clone(), sink.clone());
            let stopped = session.stop(move |trace| {
                sink.lock().unwrap_or_else(|e| e.into_inner()).push(trace);
                let _ = tx.send(());
            });
            waiting += usize::from(stopped.is_ok());
        }
        drop(tx);
        for _ in 0..waiting {
            if rx.recv().is_err() {
                break;
            }
        }
    }

    /// A worker's loop has work (`true`) or only waits for messages (`false`).
    fn set_busy(&self, busy: bool) {
        let Some(parent) = &self.parent else { return };
        let mut token = self.busy.borrow_mut();
        match (busy, token.is_some()) {
            (true, false) => *token = Some(parent.tasks.expect()),
            (false, true) => *token = None,
            _ => {}
        }
    }

    /// For a worker's loop: runs `f` as a task of its creator's loop, with the window and id
    /// of its Worker object there.
    fn to_worker_object(&self, f: impl FnOnce(&mut Js, usize, u32) + Send + 'static) {
        if let Some(p) = &self.parent {
            let (w, id) = (p.window, p.id);
            p.tasks.queue(Box::new(move |js| f(js, w, id)));
        }
    }

    /// Ends every worker this loop started (and theirs), waiting for their threads.
    fn terminate_workers(&self) {
        let workers: Vec<WorkerHandle> =
            self.workers.borrow_mut().drain().map(|(_, w)| w).collect();
        for w in workers {
            w.terminate();
        }
    }

    /// Window `window`'s document (borrowed: `performance.now()` reads it on every call).
    fn doc(&self, window: usize) -> std::cell::Ref<'_, Doc> {
        std::cell::Ref::map(self.docs.borrow(), |docs| &docs[window])
    }

    /// Initialises sampling support (once): registers the page's event loop as an agent of
    /// the process's ProfilerGroup and installs the stack capture in its runtime.
    fn sampling_agent(&self, window: usize) -> Result<AgentHandle, String> {
        if let Some(agent) = self.agent.borrow().as_ref() {
            return Ok(agent.clone());
        }
        let start = Instant::now();
        let agent = self.install_sampling_agent(window)?;
        self.support.set(self.support.get() + start.elapsed());
        Ok(agent)
    }

    fn install_sampling_agent(&self, window: usize) -> Result<AgentHandle, String> {
        let group = profiler_group(&self.options.prefs).map_err(|e| e.to_string())?;
        let interrupter = self
            .interrupter
            .get()
            .cloned()
            .ok_or("the page has no runtime yet")?;
        let max_frames = self
            .options
            .prefs
            .int("js.stack_capture_max_frames")
            .clamp(1, 4096) as u32;
        let signal = self
            .options
            .prefs
            .get_bool("profiler.signal_sampling")
            .unwrap_or(true);
        let config = crate::glue::AgentConfig {
            realm: realm_of(window),
            max_frames,
            signal_sampling: signal,
            read_slots: self.options.prefs.bool("js.stack_capture_slots"),
        };
        let agent = crate::glue::install_agent(config, self.registry.clone(), |sampler| {
            let requester = move || interrupter.request_interrupt_callback();
            match sampler {
                Some(sampler) => group.register_sampled_agent(requester, sampler),
                None => group.register_agent(requester),
            }
        });
        *self.agent.borrow_mut() = Some(agent.clone());
        Ok(agent)
    }

    fn arm(&self, timer: Timer, at: Instant) {
        let seq = self.timer_seq.get();
        self.timer_seq.set(seq + 1);
        let key = (at, seq);
        self.timer_keys
            .borrow_mut()
            .insert((timer.window, timer.id), key);
        self.timers.borrow_mut().insert(key, timer);
    }

    /// The earliest timer due at or before `now`, removed from the queue.
    fn take_due(&self, now: Instant) -> Option<Timer> {
        let mut timers = self.timers.borrow_mut();
        let (&key, _) = timers.iter().next().filter(|((at, _), _)| *at <= now)?;
        let timer = timers.remove(&key)?;
        self.timer_keys
            .borrow_mut()
            .remove(&(timer.window, timer.id));
        Some(timer)
    }

    fn next_deadline(&self) -> Option<Instant> {
        self.timers.borrow().keys().next().map(|(at, _)| *at)
    }
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
        window: usize,
        element: ScriptElement,
        result: Result<Response, LoadError>,
        /// Keeps the loop turning until this is handled.
        _pending: crate::dom::PendingTask,
    },
    /// The document of `parent`'s iframe number `index`.
    Frame {
        parent: usize,
        index: u32,
        /// The iframe's `sandbox` attribute gives its document an opaque origin.
        sandboxed: bool,
        /// When its navigation started (the child document's time origin).
        started: (Nanos, f64),
        result: Result<Response, LoadError>,
        /// Keeps the loop turning until this is handled.
        _pending: crate::dom::PendingTask,
    },
}

/// A script a module import or `importScripts` fetched.
#[derive(Debug)]
pub(crate) struct FetchedScript {
    pub source: String,
    /// Its final URL.
    pub url: String,
    /// True for a classic script from an opaque response.
    pub muted: bool,
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
    window: usize,
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
}

/// Loads the page at `url` and runs it to completion.
pub fn run_page(url: &Url, options: &RunOptions) -> Result<RunReport, PageError> {
    let clock = MonotonicClock;
    // The time origin: when navigation started (https://w3c.github.io/hr-time/#dfn-time-origin).
    let started = navigation_start();
    let origin = started.0;
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
    let (tx, messages) = mpsc::channel();
    let top_doc = Doc::of(&response, started, false);
    let policy = top_doc.policy;
    let host = PageHost::new(options, top_doc.clone(), tx.clone(), None);
    let mut js = Js::new(host.clone());
    let _ = host.interrupter.set(js.interrupter());
    let init = init_json(&doc, &top_doc, 0);
    let window = js
        .new_window(PRELUDE, &init, top_doc.origin.clone())
        .map_err(PageError::Engine)?;
    // The parser's iframes start loading (their documents arrive as messages).
    js.call_hook(window, c"startFrames", &[]);
    // Document-Policy `js-profiling-mode=eager`: sampling support now, not with the first
    // Profiler.
    if policy == ProfilingPolicy::Allowed(Init::Eager) {
        host.sampling_agent(window).map_err(PageError::Engine)?;
    }
    // Profiling from outside: one session for the window's realm, for the whole run.
    let session = match options.profile_interval {
        Some(interval) => Some(
            host.start_profiling(window, interval, u32::MAX, None)
                .map_err(|e| PageError::Engine(format!("--profile-interval: {e}")))?,
        ),
        None => None,
    };
    // Fetch every external script now, in parallel (as a preload scanner would).
    let mut loads_outstanding = 0;
    for s in doc.scripts.iter().filter(|s| s.index != usize::MAX) {
        if let Some(src) = &s.src {
            let tx = tx.clone();
            let loader = options.loader.clone();
            let index = s.index;
            let target = join_src(&response.url, src);
            let origin = top_doc.origin.clone();
            let (kind, crossorigin) = (s.kind, s.crossorigin.clone());
            std::thread::spawn(move || {
                let result = target.and_then(|u| {
                    loader.fetch_request(&script_request(u, &origin, kind, crossorigin.as_deref()))
                });
                let _ = tx.send(Message::Fetched(Fetched { index, result }));
            });
            loads_outstanding += 1;
        }
    }
    drop(tx);
    let mut page = Page {
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
    };
    // A script that never returns cannot be stopped between tasks: the watchdog halts it at
    // the deadline, or when the process runs out of its memory.
    page.js.terminate_on_interrupt(page.halt.clone());
    let watchdog = {
        let interrupter = page.js.interrupter();
        let wake = page.host.messages_tx.clone();
        Watchdog::start(
            page.deadline,
            options.prefs.memory_limit(),
            page.halt.clone(),
            move || interrupter.request_interrupt_callback(),
            move || {
                let _ = wake.send(Message::Task(Box::new(|_| {})));
            },
        )
    };
    // A panic in the engine's own code (a bug) ends the run like the deadline would, and is
    // reported; the profilers' traces are still written.
    if let Err(payload) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| page.run())) {
        crate::glue::record_internal_error(&*payload);
    }
    // The page is done: so are its workers (and theirs), and its profilers.
    page.host.terminate_workers();
    page.host.stop_running_profilers();
    let stop = watchdog.and_then(Watchdog::finish);
    page.timed_out |= stop.is_some();
    let internal_error = crate::glue::internal_error();
    let out_of_memory = match stop {
        Some(Stop::OutOfMemory { resident, limit }) => Some((resident, limit)),
        _ => None,
    };
    let elapsed = Duration::from_nanos(clock.now() - origin);
    let sampling = page.js.sampling_stats();
    let (trace, stop_time) = match session {
        Some(session) => {
            let (tx, rx) = mpsc::channel();
            let stop_start = Instant::now();
            let _ = session.stop(move |trace| {
                let _ = tx.send(trace);
            });
            let stop_time = stop_start.elapsed();
            (rx.recv().ok(), Some(stop_time))
        }
        None => (None, None),
    };
    Ok(RunReport {
        url: page.url,
        timed_out: page.timed_out && out_of_memory.is_none() && internal_error.is_none(),
        out_of_memory,
        internal_error,
        trace,
        sampling,
        elapsed,
        stop_time,
        traces: page
            .host
            .traces
            .as_ref()
            .map(|t| std::mem::take(&mut *t.lock().unwrap_or_else(|e| e.into_inner())))
            .unwrap_or_default(),
        page_stops: crate::dom::profiler::main_thread_stop_cost(),
        sampler: GROUP.get().map(ProfilerGroup::total_stats),
        support: page.host.support.get() + crate::glue::guard_time().1,
        guards: crate::glue::guard_time().0,
    })
}

impl Page {
    fn run(&mut self) {
        // Parsing: scripts in document order (https://html.spec.whatwg.org/#prepare-the-script-element).
        let mut deferred = Vec::new();
        let inline_async_modules: Vec<usize> = self
            .async_left
            .iter()
            .copied()
            .filter(|&i| self.scripts[i].src.is_none())
            .collect();
        for i in 0..self.scripts.len() {
            let s = &self.scripts[i];
            if s.index == usize::MAX {
                continue;
            }
            match (s.kind, s.src.is_some(), s.is_async, s.defer) {
                (ScriptKind::Classic, false, _, _) => self.execute_inline(i),
                (ScriptKind::Classic, true, false, false) => {
                    // A parser-blocking script: the loop turns until it has arrived.
                    if !self.wait_for(i) {
                        return;
                    }
                    self.execute_fetched(i);
                }
                (ScriptKind::Classic, true, true, _) | (ScriptKind::Module, _, true, _) => {}
                (ScriptKind::Classic, true, false, true) | (ScriptKind::Module, _, false, _) => {
                    deferred.push(i)
                }
            }
            if self.expired() {
                return;
            }
        }
        // Inline async modules run as soon as parsing reaches them (they have nothing to fetch).
        for i in inline_async_modules {
            self.async_left.retain(|&x| x != i);
            self.execute_inline(i);
        }
        if self.expired() {
            return;
        }
        // The end (https://html.spec.whatwg.org/#the-end).
        self.js
            .call_hook(self.window, c"setReadyState", &[Arg::Str("interactive")]);
        self.checkpoint();
        for i in deferred {
            if self.scripts[i].src.is_some() {
                if !self.wait_for(i) {
                    return;
                }
                self.execute_fetched(i);
            } else {
                self.execute_inline(i);
            }
        }
        if self.expired() {
            return;
        }
        self.js.call_hook(self.window, c"fireDOMContentLoaded", &[]);
        self.checkpoint();
        // The load event waits for async scripts and for the iframes' documents.
        while !self.async_left.is_empty()
            || self.host.frames_loading.get() > 0
            || self.host.scripts_loading.get() > 0
        {
            if !self.turn() {
                return;
            }
        }
        self.js
            .call_hook(self.window, c"setReadyState", &[Arg::Str("complete")]);
        self.checkpoint();
        self.js.call_hook(self.window, c"fireLoad", &[]);
        self.checkpoint();
        // Then the loop turns until no task, timer or load is left (a promised task, such
        // as a `stop()` whose trace is being built, counts, and so does a task already
        // queued, such as a `samplebufferfull` event).
        loop {
            while self.host.next_deadline().is_some()
                || self.host.imports_pending.get()
                || self.host.tasks.pending() > 0
            {
                if !self.turn() {
                    return;
                }
            }
            match self.messages.try_recv() {
                Ok(message) if !self.expired() => self.handle(message),
                _ => return,
            }
        }
    }

    /// Whether `--timeout` has passed (then nothing more runs).
    fn expired(&mut self) -> bool {
        if self.deadline.is_some_and(|d| Instant::now() >= d)
            || self.halt.load(std::sync::atomic::Ordering::Acquire)
            || crate::glue::internal_error().is_some()
        {
            self.timed_out = true;
        }
        self.timed_out
    }

    fn checkpoint(&mut self) {
        self.js.perform_microtask_checkpoint();
    }

    /// Turns the event loop until script `i` has arrived. False if the run timed out.
    fn wait_for(&mut self, i: usize) -> bool {
        while !self.arrived.contains_key(&i) {
            if !self.turn() {
                return false;
            }
        }
        true
    }

    /// One turn of the event loop: a task (a load, a timer or a dynamic import), or a wait for
    /// one. False once `--timeout` has passed.
    fn turn(&mut self) -> bool {
        if self.host.closed.load(std::sync::atomic::Ordering::Acquire) {
            return false;
        }
        let now = Instant::now();
        if self.expired() {
            return false;
        }
        if self.host.imports_pending.replace(false) {
            self.js.finish_dynamic_imports();
            self.checkpoint();
            return true;
        }
        if let Some(timer) = self.host.take_due(now) {
            if timer.repeat {
                let at = Instant::now() + timer.delay;
                self.host.arm(Timer { ..timer }, at);
            }
            self.js
                .call_hook(timer.window, c"fireTimer", &[Arg::Num(timer.id as f64)]);
            self.checkpoint();
            return true;
        }
        let wake = [self.host.next_deadline(), self.deadline]
            .into_iter()
            .flatten()
            .min();
        if wake.is_none()
            && self.loads_outstanding == 0
            && self.host.tasks.pending() == 0
            && !self.keep_alive
        {
            // Try what is already queued; beyond that nothing can arrive and nothing is due:
            // the page is stuck waiting.
            return match self.messages.try_recv() {
                Ok(m) => {
                    self.handle(m);
                    true
                }
                Err(_) => {
                    self.timed_out = true;
                    false
                }
            };
        }
        let message = match wake {
            Some(at) => self
                .messages
                .recv_timeout(at.saturating_duration_since(now))
                .ok(),
            None => {
                // A worker with nothing left to do but wait for messages no longer keeps
                // its creator's page running; it does again as soon as it has work.
                let idle = self.host.tasks.pending() == 0 && self.loads_outstanding == 0;
                if idle {
                    self.host.set_busy(false);
                }
                self.messages.recv().ok()
            }
        };
        if let Some(m) = message {
            self.host.set_busy(true);
            self.handle(m);
        }
        true
    }

    /// Runs what another thread sent: a fetched script's turn, or a task.
    fn handle(&mut self, message: Message) {
        match message {
            Message::Fetched(Fetched { index, result }) => {
                self.loads_outstanding -= 1;
                self.arrived.insert(index, result);
                if let Some(pos) = self.async_left.iter().position(|&x| x == index) {
                    self.async_left.remove(pos);
                    self.execute_fetched(index);
                }
            }
            Message::Task(task) => {
                task(&mut self.js);
                self.checkpoint();
            }
            Message::Script {
                window,
                element,
                result,
                _pending,
            } => {
                self.host
                    .scripts_loading
                    .set(self.host.scripts_loading.get() - 1);
                let ready = ready_from(&element, result);
                self.execute_or_fail(window, element.index, &element, ready);
            }
            Message::Frame {
                parent,
                index,
                started,
                sandboxed,
                result,
                _pending,
            } => {
                self.load_frame(parent, index, started, sandboxed, result);
                self.host
                    .frames_loading
                    .set(self.host.frames_loading.get() - 1);
            }
        }
    }

    fn execute_inline(&mut self, i: usize) {
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
    fn execute_fetched(&mut self, i: usize) {
        let Some(result) = self.arrived.remove(&i) else {
            return; // Only ever called once the script has arrived.
        };
        let ready = ready_from(&self.scripts[i], result);
        let s = self.scripts[i].clone();
        self.execute_or_fail(self.window, i, &s, ready);
    }

    fn execute(&mut self, i: usize, ready: Ready) {
        let s = self.scripts[i].clone();
        self.execute_in(self.window, i, &s, ready);
    }

    /// Runs `ready`, or reports why it could not be had and fires `error` at its element.
    fn execute_or_fail(
        &mut self,
        w: usize,
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
    fn execute_in(&mut self, w: usize, i: usize, s: &ScriptElement, ready: Ready) {
        if self.expired() {
            return;
        }
        let kind = s.kind;
        let external = s.src.is_some();
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

    /// Creates the child browsing context of `parent`'s iframe number `index` from its
    /// document's response, runs the document's scripts, and fires `load` at the iframe.
    /// (A child document's scripts run in document order, fetched one after the other on
    /// the event loop's thread: a simplification of the parser-driven model of the top
    /// document.)
    fn load_frame(
        &mut self,
        parent: usize,
        index: u32,
        started: (Nanos, f64),
        sandboxed: bool,
        result: Result<Response, LoadError>,
    ) {
        if self
            .host
            .discarded_frames
            .borrow()
            .contains(&(parent, index))
            || self.host.discarded.borrow().contains(&parent)
        {
            return; // Its iframe left the document while it loaded.
        }
        let response = match result {
            Ok(r) if r.ok() => r,
            Ok(r) => {
                self.host.print(
                    parent,
                    true,
                    &format!("jsprof: iframe {}: HTTP status {}", r.url, r.status),
                );
                self.js
                    .call_hook(parent, c"frameLoaded", &[Arg::Num(f64::from(index))]);
                return;
            }
            Err(e) => {
                self.host
                    .print(parent, true, &format!("jsprof: iframe: {e}"));
                self.js
                    .call_hook(parent, c"frameLoaded", &[Arg::Num(f64::from(index))]);
                return;
            }
        };
        let limits = self.host.options.prefs.document_limits();
        let doc = match document::parse(&response.text(), &limits, self.deadline) {
            Ok(doc) => doc,
            Err(e) => {
                self.host.print(
                    parent,
                    true,
                    &format!("jsprof: iframe {}: {e}", response.url),
                );
                self.js
                    .call_hook(parent, c"frameLoaded", &[Arg::Num(f64::from(index))]);
                return;
            }
        };
        let url = response.url.clone();
        // The window's document comes first: the prelude asks the host about it as it runs.
        self.host
            .docs
            .borrow_mut()
            .push(Doc::of(&response, started, sandboxed));
        let (init, origin) = {
            let docs = self.host.docs.borrow();
            let index = docs.len() - 1;
            let d = &docs[index];
            (init_json(&doc, d, index), d.origin.clone())
        };
        let child = match self.js.new_window(PRELUDE, &init, origin) {
            Ok(w) => w,
            Err(e) => {
                // Windows and documents share indices: the failed window's document goes.
                self.host.docs.borrow_mut().pop();
                self.host
                    .print(parent, true, &format!("jsprof: iframe {url}: {e}"));
                self.js
                    .call_hook(parent, c"frameLoaded", &[Arg::Num(f64::from(index))]);
                return;
            }
        };
        {
            let mut docs = self.host.docs.borrow_mut();
            docs[child].parent = Some(parent);
            let frames = &mut docs[parent].frames;
            if frames.len() <= index as usize {
                frames.resize(index as usize + 1, None);
            }
            frames[index as usize] = Some(child);
        }
        self.js.attach_frame(parent, index, child);
        self.js.call_hook(child, c"startFrames", &[]);
        for (i, s) in doc.scripts.iter().enumerate() {
            if s.index == usize::MAX || self.expired() || !self.js.is_live(child) {
                continue;
            }
            let ready = match &s.src {
                None => Ok(Ready {
                    source: s.text.clone(),
                    url: url.to_string(),
                    line: s.line,
                    column: s.column,
                    muted: false,
                }),
                Some(src) => {
                    let origin = self.host.doc(child).origin.clone();
                    let fetched = join_src(&url, src).and_then(|u| {
                        self.host.options.loader.fetch_request(&script_request(
                            u,
                            &origin,
                            s.kind,
                            s.crossorigin.as_deref(),
                        ))
                    });
                    ready_from(s, fetched)
                }
            };
            self.execute_or_fail(child, i, s, ready);
        }
        for (hook, arg) in [
            (c"setReadyState", Some("interactive")),
            (c"fireDOMContentLoaded", None),
            (c"setReadyState", Some("complete")),
            (c"fireLoad", None),
        ] {
            let args: Vec<Arg> = arg.into_iter().map(Arg::Str).collect();
            self.js.call_hook(child, hook, &args);
            self.checkpoint();
        }
        self.js
            .call_hook(parent, c"frameLoaded", &[Arg::Num(f64::from(index))]);
        self.checkpoint();
    }
}

/// An external script's response as something to run, or why it cannot run (an HTTP error,
/// or a network error: a failed CORS check, a blocked `file:` URL).
fn ready_from(s: &ScriptElement, result: Result<Response, LoadError>) -> Result<Ready, String> {
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
fn join_src(base: &Url, src: &str) -> Result<Url, LoadError> {
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
fn script_request(
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

/// The response a page's `fetch()` may see (<https://fetch.spec.whatwg.org/#concept-filtered-response>):
/// its type, headers, status, URL and body. An opaque response shows nothing; a CORS one
/// only the safelisted headers and those `Access-Control-Expose-Headers` names.
fn filtered_response(
    r: &Response,
    credentials: Credentials,
) -> (&'static str, Vec<(String, String)>, u16, String, String) {
    let all = || {
        r.headers
            .iter()
            .filter(|(n, _)| !n.eq_ignore_ascii_case("set-cookie"))
            .map(|(n, v)| (n.to_ascii_lowercase(), v.to_owned()))
    };
    match r.tainting {
        jsprof_net::Tainting::Opaque => ("opaque", Vec::new(), 0, String::new(), String::new()),
        jsprof_net::Tainting::Basic => (
            "basic",
            all().collect(),
            r.status,
            r.url.to_string(),
            r.text(),
        ),
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
            ("cors", headers, r.status, r.url.to_string(), r.text())
        }
    }
}

/// Whether a document with this response is cross-origin isolated: a secure context whose
/// `Cross-Origin-Opener-Policy` is `same-origin` and whose `Cross-Origin-Embedder-Policy` is
/// `require-corp` or `credentialless` (<https://html.spec.whatwg.org/#concept-settings-object-cross-origin-isolated-capability>).
fn cross_origin_isolated(response: &Response) -> bool {
    let token = |name: &str| {
        response.headers.get(name).map(|v| {
            v.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase()
        })
    };
    let secure = response.url.scheme() == "https"
        || matches!(response.url.host_str(), Some("localhost" | "127.0.0.1"));
    secure
        && token("cross-origin-opener-policy").as_deref() == Some("same-origin")
        && matches!(
            token("cross-origin-embedder-policy").as_deref(),
            Some("require-corp" | "credentialless")
        )
}

/// A dedicated worker's thread: its own runtime, realm (a DedicatedWorkerGlobalScope) and
/// event loop (<https://html.spec.whatwg.org/#run-a-worker>). The script comes from `source`
/// (a `blob:` URL's text) or from `url` (also `data:`); its Document-Policy is its response's
/// header, and a `blob:` or `data:` worker inherits its creator's (decision 2). The loop runs
/// until the worker is terminated, closes itself, or its creator's page ends.
fn run_worker(
    url: Url,
    source: Option<String>,
    creator: Doc,
    options: RunOptions,
    parent: WorkerParent,
    ready: mpsc::SyncSender<(
        TaskSender,
        Arc<std::sync::atomic::AtomicBool>,
        mozjs::rust::ThreadSafeJSContext,
    )>,
) {
    let started = navigation_start();
    // https://html.spec.whatwg.org/#fetch-a-classic-worker-script: a same-origin request of
    // the creator (a data: URL is allowed, and gives the worker an opaque origin).
    let script: Result<(String, Option<Response>), String> = match source {
        Some(text) => Ok((text, None)),
        None => {
            let request = Request::new(
                url.clone(),
                creator.origin.clone(),
                Mode::SameOrigin,
                Credentials::SameOrigin,
            );
            match options.loader.fetch_request(&request) {
                Ok(r) if r.ok() => Ok((r.text(), Some(r))),
                Ok(r) => Err(format!("{}: HTTP status {}", r.url, r.status)),
                Err(e) => Err(e.to_string()),
            }
        }
    };
    let doc = match &script {
        Ok((_, Some(r))) if r.url.scheme() != "data" => Doc::of(r, started, false),
        // A data: worker has an opaque origin; a blob: one its creator's. Both inherit the
        // creator's policy (decision 2).
        _ => Doc {
            url: url.clone(),
            origin: if url.scheme() == "data" {
                Origin::new_opaque()
            } else {
                creator.origin.clone()
            },
            time_origin: started.0,
            origin_unix_ms: started.1,
            parent: None,
            frames: Vec::new(),
            ..creator
        },
    };
    let (tx, messages) = mpsc::channel();
    let host = PageHost::new(&options, doc.clone(), tx, Some(parent));
    let mut js = Js::new(host.clone());
    let _ = host.interrupter.set(js.interrupter());
    js.terminate_on_interrupt(host.closed.clone());
    if ready
        .send((host.tasks.clone(), host.closed.clone(), js.interrupter()))
        .is_err()
    {
        return;
    }
    let init = serde_json::json!({
        "url": url.as_str(),
        "nodes": [],
        "crossOriginIsolated": doc.cross_origin_isolated,
        "worker": true,
        "windowIndex": 0,
    })
    .to_string();
    let window = match js.new_window_of_kind(
        PRELUDE,
        &init,
        doc.origin.clone(),
        GlobalKind::DedicatedWorker,
    ) {
        Ok(w) => w,
        Err(e) => {
            host.worker_error(
                0,
                &format!("cannot start the worker: {e}"),
                url.as_str(),
                0,
                0,
            );
            return;
        }
    };
    if doc.policy == ProfilingPolicy::Allowed(Init::Eager) {
        let _ = host.sampling_agent(window);
    }
    match script {
        Ok((text, _)) => {
            js.run_classic(window, &text, url.as_str(), 1, 1, false);
            js.perform_microtask_checkpoint();
        }
        Err(message) => {
            host.worker_error(
                window,
                &format!("failed to load the worker script {message}"),
                url.as_str(),
                0,
                0,
            );
        }
    }
    let mut page = Page {
        js,
        host,
        window,
        url,
        scripts: Vec::new(),
        messages,
        loads_outstanding: 0,
        arrived: HashMap::new(),
        async_left: Vec::new(),
        deadline: None,
        timed_out: false,
        halt: Arc::new(std::sync::atomic::AtomicBool::new(false)),
        keep_alive: true,
    };
    let turned = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| while page.turn() {}));
    if let Err(payload) = turned {
        crate::glue::record_internal_error(&*payload);
    }
    page.host.terminate_workers();
    page.host.stop_running_profilers();
}
