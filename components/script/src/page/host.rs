//! The state of one event loop that natives reach ([`PageHost`]): documents, timers,
//! workers (the handles of those it started, [`WorkerHandle`], or the creator of the one it
//! runs, [`WorkerParent`]), profiling support, sessions, discarded windows.

use std::cell::{Cell, OnceCell, RefCell};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::rc::Rc;
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use jsprof_profiler::{AgentHandle, MonotonicClock, ProfilerTrace, Session};
use jsprof_script_bindings::runtime::{TaskJs, WindowId};
use jsprof_script_bindings::task::TaskSender;
use jsprof_spidermonkey::ScriptRegistry;

use crate::document;
use crate::RunOptions;

use super::{profiler_group, Doc, Message, Timer};

/// The embedder state natives reach (through [`Host`]). Only interior mutability: natives run
/// while the event loop is inside a call into JS.
pub(super) struct PageHost {
    pub(super) clock: MonotonicClock,
    /// Each window's document, by window index.
    pub(super) docs: RefCell<Vec<Doc>>,
    /// iframes whose documents are being fetched (the top document's load event waits).
    pub(super) frames_loading: Cell<usize>,
    /// Script elements inserted by script whose responses have not arrived (they delay the
    /// load event too).
    pub(super) scripts_loading: Cell<usize>,
    /// Where other threads send the event loop what they have (a child document).
    pub(super) messages_tx: mpsc::Sender<Message>,
    pub(super) timers: RefCell<BTreeMap<(Instant, u64), Timer>>,
    pub(super) timer_keys: RefCell<HashMap<(WindowId, u32), (Instant, u64)>>,
    pub(super) timer_seq: Cell<u64>,
    pub(super) clamp: Duration,
    pub(super) imports_pending: Cell<bool>,
    pub(super) registry: Arc<ScriptRegistry>,
    /// Interrupts this page's runtime (the sampler's way in), once the runtime exists.
    pub(super) interrupter: OnceCell<mozjs::rust::ThreadSafeJSContext>,
    /// The page's agent in the ProfilerGroup, once sampling support is initialised.
    pub(super) agent: RefCell<Option<AgentHandle>>,
    pub(super) tasks: TaskSender,
    /// Where the traces of the run's `Profiler`s go (one sink for a page and its workers).
    pub(super) traces: Option<Arc<Mutex<Vec<ProfilerTrace>>>>,
    /// The sessions of this loop's `Profiler`s, by window (stopped at the loop's end, or when
    /// their window is discarded, if still running).
    /// Shared with the WebDriver server's thread, which forces samples in them.
    pub(super) sessions: Sessions,
    /// Windows whose iframe left the document: nothing runs in them any more.
    pub(super) discarded: RefCell<HashSet<WindowId>>,
    /// (parent window, iframe number) of iframes removed from their document, so that a
    /// load still in flight for one is dropped when it arrives.
    pub(super) discarded_frames: RefCell<HashSet<(WindowId, u32)>>,
    /// How the page was run (its loader and prefs; workers are run the same way).
    pub(super) options: RunOptions,
    /// For a worker's event loop: its creator.
    pub(super) parent: Option<WorkerParent>,
    /// The dedicated workers this loop's windows started, by id.
    pub(super) workers: RefCell<HashMap<u32, WorkerHandle>>,
    /// Set to end this loop (a worker's `terminate()`/`close()`): checked between tasks, and
    /// by the interrupt callback to stop a running script.
    pub(super) closed: Arc<std::sync::atomic::AtomicBool>,
    /// For a worker's loop: held while it has work (its script, timers, loads, tasks), so
    /// that its creator's page does not end before the worker has said what it had to say.
    pub(super) busy: RefCell<Option<jsprof_script_bindings::task::PendingTask>>,
    /// Main-thread time spent on profiling support: initialising it, registering scripts
    /// (the in-script guards are counted by the agent, `jsprof_spidermonkey::guard_time`).
    pub(super) support: Cell<Duration>,
    /// Whether the page's documents are hidden (https://html.spec.whatwg.org/#page-visibility):
    /// their `Profiler` sessions are paused meanwhile (decision 8). Set by the WebDriver
    /// server's thread too (Minimize Window), before the documents hear of it.
    pub(super) hidden: Arc<std::sync::atomic::AtomicBool>,
    /// WebDriver commands handed to the page's windows, waiting for their answer
    /// (`host.webdriverReply`).
    pub(super) webdriver: RefCell<HashMap<u32, jsprof_webdriver::Responder>>,
    pub(super) webdriver_next: Cell<u32>,
    /// This page among every page the process has run (WebDriver's element references
    /// carry it, so that one from a page navigated away from is known to be stale).
    pub(super) generation: u64,
}

/// How long after the run's deadline the traces of the profilers still running at its end
/// may take to build (writing them has the rest of the second the run may overrun by).
pub(super) const BUILD_GRACE: Duration = Duration::from_millis(300);

/// The traces that could not be built by the deadline, named (see [`take_unbuilt`]).
static UNBUILT: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Takes the descriptions of the traces abandoned at the end of runs so far.
pub(super) fn take_unbuilt() -> Vec<String> {
    std::mem::take(&mut *UNBUILT.lock().unwrap_or_else(|e| e.into_inner()))
}

/// How many pages the process has started.
static GENERATIONS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Makes the next page the process starts number `generation` at least. A browser whose
/// pages run in content processes numbers them itself (each process would start at 1), so
/// that an element reference from a page navigated away from is never taken for one of the
/// page that follows.
pub fn set_next_page_generation(generation: u64) {
    GENERATIONS.fetch_max(
        generation.saturating_sub(1),
        std::sync::atomic::Ordering::Relaxed,
    );
}

/// The sessions of a loop's `Profiler`s, by window.
pub(super) type Sessions = Arc<Mutex<Vec<(WindowId, std::sync::Weak<Session>)>>>;

impl PageHost {
    /// The host of one event loop: a page's (and its iframes'), or a worker's (`parent`: its
    /// creator).
    pub(super) fn new(
        options: &RunOptions,
        doc: Doc,
        tx: mpsc::Sender<Message>,
        parent: Option<WorkerParent>,
    ) -> Rc<PageHost> {
        let task_tx = tx.clone();
        let busy = RefCell::new(parent.as_ref().map(|p| p.tasks.expect()));
        let hidden = parent.is_none() && options.prefs.bool("dom.document.hidden");
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
            sessions: Sessions::default(),
            discarded: RefCell::default(),
            discarded_frames: RefCell::default(),
            options: options.clone(),
            parent,
            workers: RefCell::default(),
            closed: Arc::default(),
            busy,
            support: Cell::new(Duration::ZERO),
            hidden: Arc::new(hidden.into()),
            webdriver: RefCell::default(),
            webdriver_next: Cell::new(1),
            generation: GENERATIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1,
        })
    }

    /// At the end of this event loop: stops the `Profiler` sessions still running and keeps
    /// their traces in the run's sink (in the order they were built), as if the page had
    /// called `stop()`. Waits for the traces (they are built on the builder thread), until
    /// the run's deadline at most.
    pub(super) fn stop_running_profilers(&self) {
        self.stop_profilers(|_| true);
    }

    /// Stops the running `Profiler` sessions of the windows `of` selects. Without a sink
    /// nobody will read their traces: they are discarded unbuilt. With one, their traces
    /// go to it, and this waits for them until the run's deadline (plus [`BUILD_GRACE`]);
    /// what could not be built by then is abandoned and named in [`take_unbuilt`].
    pub(super) fn stop_profilers(&self, of: impl Fn(WindowId) -> bool) {
        let sessions: Vec<(WindowId, std::sync::Weak<Session>)> = {
            let mut all = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
            let (chosen, kept): (Vec<_>, Vec<_>) = std::mem::take(&mut *all)
                .into_iter()
                .partition(|(w, _)| of(*w));
            *all = kept;
            chosen
        };
        let live = sessions
            .iter()
            .filter_map(|(w, s)| Some((*w, s.upgrade()?)))
            .filter(|(_, s)| !s.is_stopped());
        let Some(sink) = self.traces.clone() else {
            for (_, session) in live {
                session.discard();
            }
            return;
        };
        let build_by = self.options.loader.deadline().map(|d| d + BUILD_GRACE);
        let (tx, rx) = mpsc::channel();
        // The traces taken into the sink, per window; once `closed` (the wait is over), a
        // trace that comes later is dropped, so that what is counted is what the sink holds.
        let taken: Arc<Mutex<(bool, HashMap<WindowId, usize>)>> = Arc::default();
        // The windows whose traces are awaited, one entry per session.
        let mut waiting: Vec<WindowId> = Vec::new();
        for (window, session) in live {
            let (tx, sink, taken) = (tx.clone(), sink.clone(), taken.clone());
            let done = move |trace| {
                let mut taken = taken.lock().unwrap_or_else(|e| e.into_inner());
                if taken.0 {
                    return;
                }
                sink.lock().unwrap_or_else(|e| e.into_inner()).push(trace);
                *taken.1.entry(window).or_default() += 1;
                let _ = tx.send(());
            };
            let stopped = match build_by {
                Some(by) => session.stop_within(by.saturating_duration_since(Instant::now()), done),
                None => session.stop(done),
            };
            if stopped.is_ok() {
                waiting.push(window);
            }
        }
        drop(tx);
        for _ in 0..waiting.len() {
            // An abandoned build drops its sender: once all are in or dropped, recv fails.
            let next = match build_by {
                Some(by) => rx
                    .recv_timeout(by.saturating_duration_since(Instant::now()))
                    .ok(),
                None => rx.recv().ok(),
            };
            if next.is_none() {
                break;
            }
        }
        let mut built = {
            let mut taken = taken.lock().unwrap_or_else(|e| e.into_inner());
            taken.0 = true;
            std::mem::take(&mut taken.1)
        };
        // What was not built in time, per document.
        let mut missing: BTreeMap<String, usize> = BTreeMap::new();
        for window in waiting {
            match built.get_mut(&window) {
                Some(n) if *n > 0 => *n -= 1,
                _ => *missing.entry(self.doc(window).url.to_string()).or_default() += 1,
            }
        }
        if !missing.is_empty() {
            let mut unbuilt = UNBUILT.lock().unwrap_or_else(|e| e.into_inner());
            unbuilt.extend(
                missing
                    .into_iter()
                    .map(|(url, n)| format!("{n} trace(s) of Profilers still running in {url}")),
            );
        }
    }

    /// A worker's loop has work (`true`) or only waits for messages (`false`).
    pub(super) fn set_busy(&self, busy: bool) {
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
    pub(super) fn to_worker_object(
        &self,
        f: impl FnOnce(&mut dyn TaskJs, WindowId, u32) + Send + 'static,
    ) {
        if let Some(p) = &self.parent {
            let (w, id) = (p.window, p.id);
            p.tasks.queue(Box::new(move |js| f(js, w, id)));
        }
    }

    /// Ends every worker this loop started (and theirs), waiting for their threads.
    pub(super) fn terminate_workers(&self) {
        let workers: Vec<WorkerHandle> =
            self.workers.borrow_mut().drain().map(|(_, w)| w).collect();
        for w in workers {
            w.terminate();
        }
    }

    /// The prelude's `init` for window `window`: its document's URL, tree and what the
    /// window needs to know.
    pub(super) fn init_json(&self, doc: &document::Document, d: &Doc, window: WindowId) -> String {
        serde_json::json!({
            "url": d.url.as_str(),
            "nodes": doc.nodes,
            "crossOriginIsolated": d.cross_origin_isolated,
            "windowIndex": window.index(),
            "hidden": self.hidden.load(std::sync::atomic::Ordering::Acquire),
            "page": self.generation,
        })
        .to_string()
    }

    /// Window `window`'s document (borrowed: `performance.now()` reads it on every call).
    pub(super) fn doc(&self, window: WindowId) -> std::cell::Ref<'_, Doc> {
        std::cell::Ref::map(self.docs.borrow(), |docs| &docs[window.index()])
    }

    /// Initialises sampling support (once): registers the page's event loop as an agent of
    /// the process's ProfilerGroup and installs the stack capture in its runtime.
    pub(super) fn sampling_agent(&self, window: WindowId) -> Result<AgentHandle, String> {
        if let Some(agent) = self.agent.borrow().as_ref() {
            return Ok(agent.clone());
        }
        let start = Instant::now();
        let agent = self.install_sampling_agent(window)?;
        self.support.set(self.support.get() + start.elapsed());
        Ok(agent)
    }

    pub(super) fn install_sampling_agent(&self, window: WindowId) -> Result<AgentHandle, String> {
        let group = profiler_group(&self.options.prefs).map_err(|e| e.to_string())?;
        let interrupter = self
            .interrupter
            .get()
            .cloned()
            .ok_or("the page has no runtime yet")?;
        let prefs = &self.options.prefs;
        let config = jsprof_spidermonkey::AgentConfig {
            realm: window.realm(),
            max_frames: prefs.int("js.stack_capture_max_frames").clamp(1, 4096) as u32,
            signal_sampling: prefs.get_bool("profiler.signal_sampling").unwrap_or(true),
            read_slots: prefs.bool("js.stack_capture_slots"),
            realm_of_principals: Some(jsprof_script_bindings::glue::realm_of_principals),
        };
        let agent =
            jsprof_spidermonkey::install_agent(interrupter, group, self.registry.clone(), config)
                .map_err(|e| e.to_string())?;
        *self.agent.borrow_mut() = Some(agent.clone());
        Ok(agent)
    }

    pub(super) fn arm(&self, timer: Timer, at: Instant) {
        let seq = self.timer_seq.get();
        self.timer_seq.set(seq + 1);
        let key = (at, seq);
        self.timer_keys
            .borrow_mut()
            .insert((timer.window, timer.id), key);
        self.timers.borrow_mut().insert(key, timer);
    }

    /// The earliest timer due at or before `now`, removed from the queue.
    pub(super) fn take_due(&self, now: Instant) -> Option<Timer> {
        let mut timers = self.timers.borrow_mut();
        let (&key, _) = timers.iter().next().filter(|((at, _), _)| *at <= now)?;
        let timer = timers.remove(&key)?;
        self.timer_keys
            .borrow_mut()
            .remove(&(timer.window, timer.id));
        Some(timer)
    }

    pub(super) fn next_deadline(&self) -> Option<Instant> {
        self.timers.borrow().keys().next().map(|(at, _)| *at)
    }
}

/// A worker's creator: where its messages and errors go.
#[derive(Debug, Clone)]
pub(super) struct WorkerParent {
    pub(super) tasks: TaskSender,
    pub(super) window: WindowId,
    pub(super) id: u32,
    /// The run's trace sink.
    pub(super) traces: Option<Arc<Mutex<Vec<ProfilerTrace>>>>,
}

/// A running dedicated worker, seen from its creator.
pub(super) struct WorkerHandle {
    pub(super) tasks: TaskSender,
    pub(super) closed: Arc<std::sync::atomic::AtomicBool>,
    pub(super) interrupter: mozjs::rust::ThreadSafeJSContext,
    pub(super) thread: std::thread::JoinHandle<()>,
}

impl WorkerHandle {
    /// Ends the worker's loop (and a script it is running) and waits for its thread.
    pub(super) fn terminate(self) {
        self.closed
            .store(true, std::sync::atomic::Ordering::Release);
        self.tasks.queue(Box::new(|_| {}));
        self.interrupter.request_interrupt_callback();
        let _ = self.thread.join();
    }
}
