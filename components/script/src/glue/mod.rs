//! The SpiderMonkey glue: the only module of jsprof with `unsafe`.
//!
//! It owns the runtime of one event loop and the globals of its windows, and offers the rest
//! of the crate a safe interface: create a window realm (running the prelude that builds its
//! DOM), run classic and module scripts, call the prelude's hooks, run microtasks. Natives the
//! prelude calls reach the host through the [`Host`] trait object of the current thread.
//!
//! Rooting: globals, hook objects and module maps live in `RootedTraceableBox<Heap<_>>`s for
//! the life of the [`Js`]; everything else is `rooted!` on the stack for one call.

use std::cell::RefCell;
use std::ffi::{c_void, CStr, CString};
use std::ptr::{self, NonNull};
use std::rc::Rc;
use std::sync::{Arc, Mutex};

use jsprof_profiler::{AgentHandle, FrameSite, ProfilerTrace, RawFrame, RealmId, Session};
use mozjs::gc::RootedTraceableBox;
use rustc_hash::FxHashMap;

use crate::dom::bindings::runtime::{GlobalKind, RootRef, Settlement};
use crate::dom::TaskSender;
use crate::policy::ProfilingPolicy;
use crate::symbols::ScriptRegistry;
use jsprof_net::Origin;

pub(crate) mod bindings;
mod sampling;
use mozjs::jsapi::{
    self, CallArgs, HandleValueArray, Heap, JSContext, JSObject, JSScript, OnNewGlobalHookOption,
    PromiseRejectionHandlingState, Value,
};
use mozjs::jsval::{DoubleValue, NullValue, ObjectValue, StringValue, UndefinedValue};
use mozjs::rooted;
use mozjs::rust::{
    transform_str_to_source_text, CompileOptionsWrapper, JSEngine, JSEngineHandle, RealmOptions,
    Runtime, SIMPLE_GLOBAL_CLASS,
};
pub(crate) use sampling::setup_sampler_thread;
pub use sampling::GcWalks;

/// What the natives of a realm ask of the embedder. Called re-entrantly from inside script:
/// implementations use interior mutability and never call back into JS.
pub(crate) trait Host {
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
    fn fetch_script(
        &self,
        window: usize,
        url: &str,
        module: bool,
    ) -> Result<crate::page::FetchedScript, String>;
    /// Records a script window `window` just compiled, under its SpiderMonkey ScriptSource
    /// id, for the profiler (names, positions, realm, and whether its frames are hidden).
    #[allow(clippy::too_many_arguments)]
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
    /// [`Js::finish_dynamic_imports`] soon.
    fn dynamic_import_pending(&self, window: usize);
    /// Opens a pair of message-port ends across threads; this window holds end 0.
    fn port_open(&self, window: usize) -> u64;
    /// This window holds end `end` of port pair `pid` from now on.
    fn port_attach(&self, window: usize, pid: u64, end: u8);
    /// Sends serialised `data` from end `end` of pair `pid` to the other end.
    fn port_send(&self, window: usize, pid: u64, end: u8, data: &str);
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
    /// Starts `fetch()` number `id` of the window with the request's `mode` and
    /// `credentials` (as the page gave them): the result comes back as a task calling the
    /// prelude's `fetchDone`.
    fn fetch_start(&self, window: usize, id: u32, url: &str, mode: &str, credentials: &str);
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

thread_local! {
    static HOST: RefCell<Option<Rc<dyn Host>>> = const { RefCell::new(None) };
    /// Promises rejected without a handler, waiting for the next microtask checkpoint.
    static REJECTIONS: RefCell<Vec<RootedTraceableBox<Heap<*mut JSObject>>>> = const { RefCell::new(Vec::new()) };
    /// Dynamic imports waiting for the event loop: (window, referrer URL, specifier, request, payload).
    static IMPORTS: RefCell<Vec<PendingImport>> = const { RefCell::new(Vec::new()) };
}

thread_local! {
    /// The GC slice callback that was installed before ours (called after ours).
    static PREVIOUS_GC_SLICE: std::cell::Cell<jsapi::JS::GCSliceCallback> = const { std::cell::Cell::new(None) };
}

/// The GC slice callback of every runtime: tells the sampler's walk when a slice begins and
/// ends (it keeps the slice's JS stack for ticks inside it), then calls the callback that
/// was installed before.
unsafe extern "C" fn on_gc_slice(
    cx: *mut JSContext,
    progress: jsapi::JS::GCProgress,
    desc: *const jsapi::JS::GCDescription,
) {
    guarded((), || {
        use jsapi::JS::GCProgress::{GC_CYCLE_END, GC_SLICE_BEGIN, GC_SLICE_END};
        match progress {
            // SAFETY: on the context's own thread, inside the GC slice; the walk reads the
            // JIT stack, which a slice does not change.
            GC_SLICE_BEGIN => unsafe { sampling::gc_slice(true, next_sample_in()) },
            // SAFETY: as above.
            GC_SLICE_END | GC_CYCLE_END => unsafe { sampling::gc_slice(false, None) },
            _ => {}
        }
        if let Some(previous) = PREVIOUS_GC_SLICE.with(|p| p.get()) {
            // SAFETY: the callback SpiderMonkey had before ours, called as it would be.
            unsafe { previous(cx, progress, desc) };
        }
    })
}

/// The nursery collection callback of every runtime: as [`on_gc_slice`] for minor GCs.
unsafe extern "C" fn on_nursery_collection(
    _cx: *mut JSContext,
    progress: jsapi::JS::GCNurseryProgress,
    _reason: jsapi::JS::GCReason,
    _data: *mut c_void,
) {
    guarded((), || {
        let begin = progress == jsapi::JS::GCNurseryProgress::GC_NURSERY_COLLECTION_START;
        let due_in = if begin { next_sample_in() } else { None };
        // SAFETY: on the context's own thread, inside the collection.
        unsafe { sampling::gc_slice(begin, due_in) }
    })
}

/// How long until this thread's agent is next sampled (`Some(0)` when that cannot be read
/// now: a collection that starts while the agent is being used walks, to be safe).
fn next_sample_in() -> Option<jsprof_profiler::Nanos> {
    AGENT.with(|a| match a.try_borrow() {
        Ok(a) => a.as_ref().and_then(|a| a.handle.next_sample_in()),
        Err(_) => Some(0),
    })
}

thread_local! {
    /// Set by [`Js::terminate_on_interrupt`]: the next interrupt stops the running script.
    static TERMINATE: RefCell<Option<Arc<std::sync::atomic::AtomicBool>>> = const { RefCell::new(None) };
    /// The profiler agent of this thread's event loop, once a profiler wants samples.
    static AGENT: RefCell<Option<Agent>> = const { RefCell::new(None) };
}

/// What the interrupt callback needs to take a sample.
struct Agent {
    handle: AgentHandle,
    realm: RealmId,
    registry: Arc<ScriptRegistry>,
    max_frames: u32,
    /// SpiderMonkey source id -> (script, hidden, realm of the window that compiled it):
    /// one registry lookup per source.
    sources: FxHashMap<u32, (Option<jsprof_profiler::ScriptId>, bool, RealmId)>,
    /// The SavedFrame class, once seen (checked by name the first time).
    saved_frame_class: *const jsapi::JSClass,
    /// The SIGPROF walk, if this agent samples that way.
    signal: Option<Arc<sampling::SignalSampler>>,
    /// Read SavedFrames' reserved slots (the fast path), or only the public accessors.
    read_slots: bool,
    stats: SamplingStats,
}

impl Agent {
    /// The raw frame of a SavedFrame's source id, line and tagged column. The script comes
    /// from the registry by source id (cached per id): a source the host never registered
    /// (eval code, the prelude, self-hosted builtins) is a hidden frame without a script.
    /// The frame's realm is the realm of the window that compiled its script (the fast path
    /// then reads it from the frame's principals, which also covers unregistered sources).
    fn raw_frame(&mut self, source_id: u32, line: u32, column: u32) -> RawFrame {
        let (registry, default_realm) = (&self.registry, self.realm);
        let (script, hidden, realm) = *self.sources.entry(source_id).or_insert_with(|| {
            match registry.lookup_with_window(source_id) {
                Some((script, hidden, window)) => (Some(script), hidden, realm_of(window)),
                None => (None, true, default_realm),
            }
        });
        RawFrame {
            realm,
            script,
            hidden,
            site: FrameSite::Position {
                line,
                column: column & !jsapi::JS::TaggedColumnNumberOneOrigin_WasmFunctionTag,
            },
        }
    }
}

/// What sampling cost the agent's thread: time inside the interrupt callback (request check,
/// capture, hand-over), in total and by captured stack depth; and time inside the SIGPROF
/// walks.
#[derive(Debug, Clone, Default)]
pub struct SamplingStats {
    /// Stacks taken by the walk (in the interrupt callback, or by SIGPROF when the interrupt
    /// was not served in time: `signalled`), and the agent's time walking.
    pub walks: u64,
    pub signalled: u64,
    /// What one signal costs the agent's thread beyond its handler (calibrated).
    pub signal_cost: std::time::Duration,
    pub walk_time: std::time::Duration,
    /// Stacks walked as collections began, for ticks inside them (see `GcWalks`).
    pub gc: GcWalks,
    /// Mean handler time of walks of exactly 5 and 20 frames, if any.
    pub walk_at_depth5: Option<std::time::Duration>,
    pub walk_at_depth20: Option<std::time::Duration>,
    /// Stacks captured in the interrupt callback.
    pub samples: u64,
    /// Captures that could not read SavedFrame slots directly and used the accessors.
    pub fallbacks: u64,
    pub total: std::time::Duration,
    /// `(count, total ns)` per stack depth (index = frames captured, the last one is "more").
    pub by_depth: Vec<(u64, u64)>,
}

impl SamplingStats {
    /// All the agent's thread spent on sampling: interrupt captures, walks, and the kernel's
    /// part of the signals.
    pub fn agent_time(&self) -> std::time::Duration {
        self.total + self.walk_time + self.gc.time + self.signal_cost * self.signalled as u32
    }

    /// Mean cost of a sample with exactly `depth` frames, if any was taken.
    pub fn mean_at_depth(&self, depth: usize) -> Option<std::time::Duration> {
        let (n, ns) = *self.by_depth.get(depth)?;
        (n > 0).then(|| std::time::Duration::from_nanos(ns / n))
    }
}

/// Marks the agent "in script" for the life of the guard (every entry into JS takes one).
/// Its cost is part of what profiling support costs a page: one guard in
/// [`GUARD_SAMPLE`] is timed (both halves) and counted for all of them ([`guard_time`]).
struct InScript(Option<AgentHandle>, bool);

/// One guard in this many is timed.
const GUARD_SAMPLE: u32 = 32;

thread_local! {
    /// Guards taken while an agent was installed, and the estimated time in them.
    static GUARDS: std::cell::Cell<(u64, std::time::Duration)> = const { std::cell::Cell::new((0, std::time::Duration::ZERO)) };
}

impl InScript {
    fn enter() -> Self {
        let timed = GUARDS.with(|g| g.get().0.is_multiple_of(u64::from(GUARD_SAMPLE)));
        let start = timed.then(std::time::Instant::now);
        let handle = AGENT.with(|a| a.borrow().as_ref().map(|a| a.handle.clone()));
        let Some(h) = &handle else {
            return InScript(None, false);
        };
        h.enter();
        GUARDS.with(|g| {
            let (n, mut t) = g.get();
            if let Some(start) = start {
                t += start.elapsed() * GUARD_SAMPLE;
            }
            g.set((n + 1, t));
        });
        InScript(handle, timed)
    }
}

impl Drop for InScript {
    fn drop(&mut self) {
        let start = self.1.then(std::time::Instant::now);
        if let Some(h) = self.0.take() {
            h.leave();
        }
        if let Some(start) = start {
            GUARDS.with(|g| {
                let (n, t) = g.get();
                g.set((n, t + start.elapsed() * GUARD_SAMPLE));
            });
        }
    }
}

/// How many in-script guards this thread took with an agent installed, and an estimate of
/// their time (one in [`GUARD_SAMPLE`] timed).
pub fn guard_time() -> (u64, std::time::Duration) {
    GUARDS.with(|g| g.get())
}

struct PendingImport {
    window: usize,
    referrer: String,
    specifier: String,
    request: RootedTraceableBox<Heap<*mut JSObject>>,
    payload: RootedTraceableBox<Heap<Value>>,
}

fn host() -> Rc<dyn Host> {
    #[allow(
        clippy::expect_used,
        reason = "natives only run inside a Js, which set HOST"
    )]
    HOST.with(|h| h.borrow().clone().expect("a Js is alive on this thread"))
}

static ENGINE: Mutex<Option<JSEngineHandle>> = Mutex::new(None);

thread_local! {
    /// The engine itself, owned by the thread that initialised it, until [`shutdown`].
    static ENGINE_OWNER: RefCell<Option<JSEngine>> = const { RefCell::new(None) };
}

/// The process's engine, initialised on first use.
fn engine() -> JSEngineHandle {
    let mut engine = ENGINE.lock().unwrap_or_else(|e| e.into_inner());
    engine
        .get_or_insert_with(|| {
            #[allow(
                clippy::expect_used,
                reason = "no engine without SpiderMonkey; it fails only if initialised twice, which the lock prevents"
            )]
            let owner = JSEngine::init().expect("SpiderMonkey initialises once per process");
            let handle = owner.handle();
            ENGINE_OWNER.with(|o| *o.borrow_mut() = Some(owner));
            handle
        })
        .clone()
}

/// Shuts SpiderMonkey down (`JS_ShutDown`), on the thread that first used it, once every
/// runtime is gone. A process that skips this crashes in SpiderMonkey's static destructors
/// at exit while its helper threads still hold their locks.
pub fn shutdown() {
    drop(ENGINE.lock().unwrap_or_else(|e| e.into_inner()).take());
    ENGINE_OWNER.with(|o| drop(o.borrow_mut().take()));
}

struct Window {
    global: RootedTraceableBox<Heap<*mut JSObject>>,
    hooks: RootedTraceableBox<Heap<*mut JSObject>>,
}

/// An argument for a prelude hook.
#[derive(Debug, Clone)]
pub(crate) enum Arg<'a> {
    Num(f64),
    Str(&'a str),
}

/// A runtime and the realms of its windows. Not `Send`: it lives on its event loop's thread.
pub(crate) struct Js {
    windows: Vec<Window>,
    // Dropped last: every root above is released before the runtime goes.
    rt: Runtime,
}

impl std::fmt::Debug for Js {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Js")
            .field("windows", &self.windows.len())
            .finish()
    }
}

/// Enters a realm for the life of the guard.
struct InRealm {
    cx: *mut JSContext,
    old: *mut jsapi::JS::Realm,
}

impl InRealm {
    fn new(cx: *mut JSContext, global: *mut JSObject) -> Self {
        // SAFETY: `cx` is this thread's live context and `global` a rooted global object.
        let old = unsafe { jsapi::JS::EnterRealm(cx, global) };
        InRealm { cx, old }
    }
}

impl Drop for InRealm {
    fn drop(&mut self) {
        // SAFETY: undoes the EnterRealm of `new` on the same context.
        unsafe { jsapi::JS::LeaveRealm(self.cx, self.old) }
    }
}

/// Compile options for a script at `url` whose source starts at (line, column) of its resource.
fn compile_options(
    cx: &mozjs::context::JSContext,
    url: &str,
    line: u32,
    column: u32,
) -> CompileOptionsWrapper {
    let opts = CompileOptionsWrapper::new(cx, cstring(url), line);
    // SAFETY: `opts.ptr` is the live CompileOptions `opts` owns; `column` is a plain field.
    unsafe {
        (*opts.ptr).column = jsapi::JS::ColumnNumberOneOrigin {
            _base: column.max(1),
        };
    }
    opts
}

extern "C" {
    // src/glue/shim.cpp
    fn jsprof_script_source_id(script: *mut JSScript) -> u32;
    fn jsprof_module_source_id(module: *mut JSObject) -> u32;
}

thread_local! {
    /// URLs of scripts compiled with muted errors, for reporting their exceptions (which
    /// reveal nothing: https://html.spec.whatwg.org/#report-an-exception).
    static MUTED_URLS: RefCell<std::collections::HashSet<String>> = RefCell::default();
}

/// Compiles `source`, a classic script of `url` whose text starts at (line, column) of its
/// resource, registers it for the profiler under its ScriptSource id, and runs it in the
/// current realm. `muted`: it came from an opaque response (its errors and its frames reveal
/// nothing). False, with the exception pending (or after a termination), if it failed.
///
/// # Safety
/// `cx` must be this thread's context, in a window's realm.
unsafe fn compile_and_run_classic(
    cx: *mut JSContext,
    source: &str,
    url: &str,
    line: u32,
    column: u32,
    muted: bool,
) -> bool {
    // SAFETY: per the contract; `opts.ptr` is a live CompileOptions owned by `opts`; the
    // script is rooted before anything can GC.
    unsafe {
        let Some(nn) = NonNull::new(cx) else {
            return false;
        };
        let wrapper = mozjs::context::JSContext::from_ptr(nn);
        let mut opts = compile_options(&wrapper, url, line, column);
        opts.set_muted_errors(muted);
        if muted {
            MUTED_URLS.with(|m| m.borrow_mut().insert(url.to_owned()));
        }
        let mut src = transform_str_to_source_text(source);
        rooted!(in(cx) let script = jsapi::JS::Compile1(cx, opts.ptr, &mut src));
        if script.get().is_null() {
            return false;
        }
        let id = jsprof_script_source_id(script.get());
        host().register_script(
            current_window(cx),
            id,
            url,
            source,
            line,
            column,
            false,
            muted,
        );
        rooted!(in(cx) let mut rval = UndefinedValue());
        jsapi::JS_ExecuteScript(cx, script.handle().into(), rval.handle_mut().into())
    }
}

fn cstring(s: &str) -> CString {
    CString::new(s.replace('\0', "\u{FFFD}")).unwrap_or_default()
}

/// The first panic caught in the engine (a bug, never page content): the run ends, as at
/// its deadline, and reports it. Process-wide, since any thread's loop may hit one.
static INTERNAL_ERROR: Mutex<Option<String>> = Mutex::new(None);
static HAS_INTERNAL_ERROR: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// Records a caught panic as the run's internal error (the first one is kept).
pub fn record_internal_error(payload: &(dyn std::any::Any + Send)) {
    let message = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".into());
    let mut slot = INTERNAL_ERROR.lock().unwrap_or_else(|e| e.into_inner());
    slot.get_or_insert(message);
    HAS_INTERNAL_ERROR.store(true, std::sync::atomic::Ordering::Release);
}

/// The internal error caught so far, if any.
pub fn internal_error() -> Option<String> {
    if !HAS_INTERNAL_ERROR.load(std::sync::atomic::Ordering::Acquire) {
        return None;
    }
    INTERNAL_ERROR
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone()
}

/// Runs the body of a callback SpiderMonkey calls. A panic must not unwind into C++ (Rust
/// would abort the process): it is caught, recorded as the run's internal error, and the
/// callback returns `failed`, which for a native (false, no exception pending) terminates
/// the running script. The event loop then ends the run (see `page.rs`).
fn guarded<T>(failed: T, body: impl FnOnce() -> T) -> T {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)) {
        Ok(value) => value,
        Err(payload) => {
            record_internal_error(&*payload);
            failed
        }
    }
}

/// The profiler's realm id of window `window` (windows are numbered from 0, realms from 1).
pub(crate) fn realm_of(window: usize) -> RealmId {
    RealmId(window as u32 + 1)
}

/// mozjs's safe-API wrapper around a raw context that SpiderMonkey passed to a callback.
///
/// # Safety
/// `cx` is the live context of this thread.
unsafe fn wrap_cx(cx: *mut JSContext) -> mozjs::context::JSContext {
    #[allow(
        clippy::expect_used,
        reason = "SpiderMonkey never calls back with a null context"
    )]
    let cx = NonNull::new(cx).expect("live context");
    // SAFETY: as the function's contract.
    unsafe { mozjs::context::JSContext::from_ptr(cx) }
}

impl Js {
    /// A runtime on this thread, whose natives call `host`.
    pub fn new(host: Rc<dyn Host>) -> Js {
        let mut rt = Runtime::new(engine());
        HOST.with(|h| *h.borrow_mut() = Some(host));
        // SAFETY: the context was just created on this thread; the callbacks are `extern "C"`
        // functions with the signatures SpiderMonkey expects.
        unsafe {
            let cx = rt.cx().raw_cx();
            // The microtask queue lives in the engine; the RustJobQueue only answers the
            // engine's questions, and `perform_microtask_checkpoint` drains the queue.
            let queue = mozjs::glue::CreateJobQueue(&JOB_QUEUE_TRAPS);
            jsapi::SetJobQueue(cx, queue as *mut jsapi::JS::JobQueue);
            // GC slices: the profiler's walk keeps each slice's stack (and later listeners
            // chain here, never registering twice).
            let previous = jsapi::JS::SetGCSliceCallback(cx, Some(on_gc_slice));
            PREVIOUS_GC_SLICE.with(|p| p.set(previous));
            jsapi::JS::AddGCNurseryCollectionCallback(
                cx,
                Some(on_nursery_collection),
                ptr::null_mut(),
            );
            jsapi::JS::SetPromiseRejectionTrackerCallback(
                cx,
                Some(track_rejection),
                ptr::null_mut(),
            );
            jsapi::JS::SetModuleLoadHook(jsapi::JS_GetRuntime(cx), Some(load_imported_module));
            assert!(jsapi::JS_AddInterruptCallback(cx, Some(on_interrupt)));
            // Windows (an iframe and its parent) are realms in separate compartments: objects
            // cross through transparent cross-compartment wrappers.
            jsapi::JS_SetWrapObjectCallbacks(cx, &WRAP_CALLBACKS);
            jsapi::JS_InitDestroyPrincipalsCallback(cx, Some(destroy_principals));
            jsapi::JS_SetSecurityCallbacks(cx, &SECURITY_CALLBACKS);
            // Every script starts in the Baseline Interpreter, whose frames the profiler's
            // walk sees even when it starts later (C++ interpreter frames entered before it
            // would stay invisible).
            jsapi::JS_SetGlobalJitCompilerOption(
                cx,
                jsapi::JSJitCompilerOption::JSJITCOMPILER_BASELINE_INTERPRETER_WARMUP_TRIGGER,
                0,
            );
        }
        Js {
            windows: Vec::new(),
            rt,
        }
    }

    /// The context, in window `w`'s realm for the life of the returned guard.
    /// Whether window `w` exists and was not discarded.
    pub fn is_live(&self, w: usize) -> bool {
        self.windows
            .get(w)
            .is_some_and(|win| !win.global.get().is_null())
    }

    /// Discards window `w` (its iframe left the document): its global, hooks and module map
    /// are no longer rooted, nor are its pending promises and reflectors, so that its realm
    /// can be collected once the page holds nothing of it. Nothing runs in it any more:
    /// hooks, scripts, settlements and imports for it are dropped.
    pub fn discard_window(&mut self, w: usize) {
        if !self.is_live(w) {
            return;
        }
        let global = self.windows[w].global.get();
        bindings::release_roots_of(global);
        IMPORTS.with(|i| i.borrow_mut().retain(|import| import.window != w));
        self.windows[w].global.set(ptr::null_mut());
        self.windows[w].hooks.set(ptr::null_mut());
        for table in [&MODULE_MAPS, &GLOBALS] {
            table.with(|t| {
                if let Some(heap) = t.borrow().get(w) {
                    heap.set(ptr::null_mut());
                }
            });
        }
        // The window's realm has its own zone, which allocates nothing from now on, so the
        // collections other windows' allocations trigger (zone GCs) never schedule it: a
        // full GC takes it now, as a browser collects after a window closes.
        let cx = self.cx();
        // SAFETY: this thread's context, outside any realm's script (a task).
        unsafe { jsapi::JS_GC(cx, jsapi::JS::GCReason::API) };
    }

    fn enter_window(&mut self, w: usize) -> (*mut JSContext, InRealm) {
        let cx = self.cx();
        let realm = InRealm::new(cx, self.windows[w].global.get());
        (cx, realm)
    }

    fn cx(&mut self) -> *mut JSContext {
        // SAFETY: the pointer is only passed straight to SpiderMonkey calls on this thread.
        unsafe { self.rt.cx().raw_cx() }
    }

    /// What sampling has cost this runtime's thread so far.
    pub fn sampling_stats(&self) -> Option<SamplingStats> {
        AGENT.with(|a| {
            a.borrow().as_ref().map(|a| {
                let cost = |depth| {
                    a.signal
                        .as_ref()
                        .map_or_else(Default::default, |s| s.cost(depth))
                };
                let (walk_time, walks) = cost(None);
                let mean = |depth| {
                    let (t, n): (std::time::Duration, u64) = cost(Some(depth));
                    (n > 0).then(|| t / n as u32)
                };
                let (signalled, signal_cost) = a
                    .signal
                    .as_ref()
                    .map_or_else(Default::default, |s| s.signalled());
                let gc = a
                    .signal
                    .as_ref()
                    .map_or_else(Default::default, |s| s.gc_walks());
                SamplingStats {
                    walks,
                    gc,
                    signalled,
                    signal_cost,
                    walk_time,
                    walk_at_depth5: mean(5),
                    walk_at_depth20: mean(20),
                    ..a.stats.clone()
                }
            })
        })
    }

    /// Makes the interrupt callback terminate the running script (uncatchably) once `flag` is
    /// set; whoever sets it then requests an interrupt (a watchdog enforcing `--timeout`).
    pub fn terminate_on_interrupt(&mut self, flag: Arc<std::sync::atomic::AtomicBool>) {
        TERMINATE.with(|t| *t.borrow_mut() = Some(flag));
    }

    /// A handle that can interrupt this runtime from another thread (the sampler).
    pub fn interrupter(&self) -> mozjs::rust::ThreadSafeJSContext {
        self.rt.thread_safe_js_context()
    }

    /// Creates window `index`'s realm, for a document of `origin`, and runs `prelude` in it:
    /// a function expression `(host, global, init) => hooks`, whose result is kept as the
    /// window's hooks.
    pub fn new_window(
        &mut self,
        prelude: &str,
        init_json: &str,
        origin: Origin,
    ) -> Result<usize, String> {
        self.new_window_of_kind(prelude, init_json, origin, GlobalKind::Window)
    }

    /// [`Js::new_window`] for a global of `kind` (a worker's global takes the interfaces
    /// exposed on DedicatedWorkerGlobalScope).
    pub fn new_window_of_kind(
        &mut self,
        prelude: &str,
        init_json: &str,
        origin: Origin,
        kind: GlobalKind,
    ) -> Result<usize, String> {
        let index = self.windows.len();
        let cx = self.cx();
        let options = RealmOptions::default();
        // SAFETY: every GC pointer below is rooted before the next call that can GC; natives
        // are `extern "C"` functions of the JSNative signature.
        unsafe {
            // Each window's realm has its own principals, carrying the window's index and its
            // document's origin: stack captures record them per frame (which is how a
            // sample tells realms apart), and the subsumes and wrap callbacks compare their
            // origins. `destroy_principals` frees the RealmInfo.
            let info = Box::new(RealmInfo {
                window: index,
                origin,
            });
            let principals = mozjs::glue::CreateRustJSPrincipals(
                &PRINCIPALS_CALLBACKS,
                Box::into_raw(info) as *mut c_void,
            );
            rooted!(in(cx) let global = jsapi::JS_NewGlobalObject(
                cx,
                &SIMPLE_GLOBAL_CLASS,
                principals,
                OnNewGlobalHookOption::FireOnNewGlobalHook,
                &*options,
            ));
            if global.get().is_null() {
                return Err("cannot create a global".into());
            }
            let _realm = InRealm::new(cx, global.get());
            jsapi::SetRealmPrivate(
                jsapi::GetObjectRealmOrNull(global.get()),
                (index + 1) as *mut c_void,
            );
            rooted!(in(cx) let host_obj = jsapi::JS_NewPlainObject(cx));
            let natives: [(&CStr, jsapi::JSNative, u32); 28] = [
                (c"print", Some(native_print), 2),
                (c"now", Some(native_now), 0),
                (c"timeOrigin", Some(native_time_origin), 0),
                (c"setTimer", Some(native_set_timer), 3),
                (c"clearTimer", Some(native_clear_timer), 1),
                (c"parseURL", Some(native_parse_url), 2),
                (c"fetchStart", Some(native_fetch_start), 4),
                (c"loadFrame", Some(native_load_frame), 3),
                (c"discardFrame", Some(native_discard_frame), 1),
                (c"sameOrigin", Some(native_same_origin), 1),
                (c"windowFor", Some(native_window_for), 1),
                (c"frameTree", Some(native_frame_tree), 2),
                (c"windowOrigin", Some(native_window_origin), 1),
                (c"windowPost", Some(native_window_post), 4),
                (c"loadScript", Some(native_load_script), 5),
                (c"runScript", Some(native_run_script), 2),
                (c"workerStart", Some(native_worker_start), 4),
                (c"importScript", Some(native_import_script), 1),
                (c"callerWindow", Some(native_caller_window), 0),
                (c"portOpen", Some(native_port_open), 0),
                (c"portAttach", Some(native_port_attach), 2),
                (c"portSend", Some(native_port_send), 3),
                (c"workerPost", Some(native_worker_post), 2),
                (c"workerTerminate", Some(native_worker_terminate), 1),
                (c"workerError", Some(native_worker_error), 4),
                (c"watchPromise", Some(native_noop), 1),
                (c"promiseResult", Some(native_promise_result), 1),
                (c"whenSettled", Some(native_when_settled), 3),
            ];
            for (name, f, nargs) in natives {
                if jsapi::JS_DefineFunction(
                    cx,
                    host_obj.handle().into(),
                    name.as_ptr(),
                    f,
                    nargs,
                    0,
                )
                .is_null()
                {
                    return Err(format!("cannot define host.{}", name.to_string_lossy()));
                }
            }
            rooted!(in(cx) let modules = jsapi::JS_NewPlainObject(cx));
            rooted!(in(cx) let mut prelude_fn = UndefinedValue());
            let opts =
                CompileOptionsWrapper::new(self.rt.cx_no_gc(), c"jsprof:prelude".to_owned(), 1);
            let _in_script = InScript::enter();
            let mut source = transform_str_to_source_text(prelude);
            if !jsapi::JS::Evaluate2(cx, opts.ptr, &mut source, prelude_fn.handle_mut().into()) {
                return Err(format!("prelude: {}", self.take_exception_text()));
            }
            rooted!(in(cx) let mut init = UndefinedValue());
            new_string(cx, init_json, init.handle_mut());
            rooted!(in(cx) let argv = mozjs::gc::ValueArray::<3>::new([
                ObjectValue(host_obj.get()),
                ObjectValue(global.get()),
                init.get(),
            ]));
            rooted!(in(cx) let mut hooks = UndefinedValue());
            let args = HandleValueArray::from(&argv);
            if !jsapi::JS_CallFunctionValue(
                cx,
                global.handle().into(),
                prelude_fn.handle().into(),
                &args,
                hooks.handle_mut().into(),
            ) {
                return Err(format!("prelude: {}", self.take_exception_text()));
            }
            if !hooks.get().is_object() {
                return Err("prelude: did not return its hooks".into());
            }
            // The interfaces with generated bindings, over the prelude's DOM.
            rooted!(in(cx) let hooks_obj = hooks.get().to_object());
            rooted!(in(cx) let mut dom_exception = UndefinedValue());
            if !jsapi::JS_GetProperty(
                cx,
                hooks_obj.handle().into(),
                c"DOMException".as_ptr(),
                dom_exception.handle_mut().into(),
            ) {
                return Err(format!("prelude: {}", self.take_exception_text()));
            }
            bindings::define_interfaces(
                cx,
                global.handle().into(),
                dom_exception.handle().into(),
                kind,
            )?;
            self.windows.push(Window {
                global: RootedTraceableBox::from_box(Heap::boxed(global.get())),
                hooks: RootedTraceableBox::from_box(Heap::boxed(hooks.get().to_object())),
            });
            MODULE_MAPS.with(|m| {
                m.borrow_mut()
                    .push(RootedTraceableBox::from_box(Heap::boxed(modules.get())))
            });
            GLOBALS.with(|g| {
                g.borrow_mut()
                    .push(RootedTraceableBox::from_box(Heap::boxed(global.get())))
            });
        }
        Ok(index)
    }

    /// Takes the pending exception as text (for errors that cannot be reported to a page).
    fn take_exception_text(&mut self) -> String {
        rooted!(in(self.cx()) let mut exn = UndefinedValue());
        match mozjs::rust::error_info_from_exception_stack(self.rt.cx(), exn.handle_mut()) {
            Some(info) => format!(
                "{} ({}:{}:{})",
                info.message, info.filename, info.line, info.col
            ),
            None => "unknown error".into(),
        }
    }

    /// Reports the pending exception to window `w`'s page (its `error` event, then stderr).
    fn report_exception(&mut self, w: usize) {
        self.report_exception_in(w, None)
    }

    /// Reports the pending exception of running `script` (its URL, start line and column,
    /// and whether its errors are muted), whose errors may carry no position of their own:
    /// SpiderMonkey's "too much recursion" while compiling, an out-of-memory.
    fn report_exception_in(&mut self, w: usize, script: Option<(&str, u32, u32, bool)>) {
        let cx = self.cx();
        // SAFETY: a query of this thread's context.
        if !unsafe { jsapi::JS_IsExceptionPending(cx) } {
            // An uncatchable termination (the --timeout watchdog): nothing to report.
            return;
        }
        rooted!(in(cx) let mut exn = UndefinedValue());
        let Some(mut info) =
            mozjs::rust::error_info_from_exception_stack(self.rt.cx(), exn.handle_mut())
        else {
            return;
        };
        let mut exn_value = exn.get();
        let muted_script = match script {
            Some((url, line, column, muted)) if info.filename.is_empty() => {
                info.filename = url.to_owned();
                info.line = line;
                info.col = column;
                muted
            }
            _ => false,
        };
        if muted_script || MUTED_URLS.with(|m| m.borrow().contains(&info.filename)) {
            // https://html.spec.whatwg.org/#report-an-exception: muted errors reveal nothing.
            info = mozjs::rust::ErrorInfo {
                message: "Script error.".into(),
                filename: String::new(),
                line: 0,
                col: 0,
            };
            exn_value = NullValue();
        }
        self.call_hook_with_value(
            w,
            c"reportException",
            exn_value,
            &[
                Arg::Str(&info.message),
                Arg::Str(&info.filename),
                Arg::Num(info.line as f64),
                Arg::Num(info.col as f64),
            ],
        );
    }

    /// Compiles and runs a classic script in window `w`. Errors are reported to the page;
    /// returns whether the script completed.
    pub fn run_classic(
        &mut self,
        w: usize,
        source: &str,
        url: &str,
        line: u32,
        column: u32,
        muted: bool,
    ) -> bool {
        if !self.is_live(w) {
            return false;
        }
        let (cx, _realm) = self.enter_window(w);
        let _in_script = InScript::enter();
        // SAFETY: in window `w`'s realm on this thread's context.
        let ok = unsafe { compile_and_run_classic(cx, source, url, line, column, muted) };
        if !ok {
            self.report_exception_in(w, Some((url, line, column, muted)));
        }
        ok
    }

    /// Compiles, links and evaluates a module script in window `w`, loading its imports
    /// through the host. Errors are reported to the page.
    pub fn run_module(
        &mut self,
        w: usize,
        source: &str,
        url: &str,
        line: u32,
        column: u32,
    ) -> bool {
        if !self.is_live(w) {
            return false;
        }
        let (cx, _realm) = self.enter_window(w);
        // SAFETY: module objects are rooted and registered in the window's module map
        // (itself rooted) before anything can GC.
        let _in_script = InScript::enter();
        let ok = unsafe {
            rooted!(in(cx) let module = compile_module(cx, module_map(w), source, url, line, column));
            if module.get().is_null() {
                false
            } else {
                rooted!(in(cx) let host_defined = ObjectValue(module.get()));
                let loaded = jsapi::JS::LoadRequestedModules(
                    cx,
                    module.handle().into(),
                    host_defined.handle().into(),
                    Some(modules_loaded),
                    Some(modules_failed),
                );
                if !loaded || jsapi::JS_IsExceptionPending(cx) {
                    false
                } else {
                    rooted!(in(cx) let mut promise = UndefinedValue());
                    let ok = jsapi::JS::ModuleEvaluate(
                        cx,
                        module.handle().into(),
                        promise.handle_mut().into(),
                    );
                    if ok && promise.get().is_object() {
                        // Evaluation errors reject this promise: the prelude reports them.
                        let p = promise.get();
                        self.call_hook_with_value(w, c"watchModule", p, &[Arg::Str(url)]);
                    }
                    ok
                }
            }
        };
        if !ok {
            self.report_exception_in(w, Some((url, line, column, false)));
        }
        ok
    }

    /// Completes the dynamic imports waiting since the last call.
    pub fn finish_dynamic_imports(&mut self) {
        let pending = IMPORTS.with(|i| std::mem::take(&mut *i.borrow_mut()));
        for import in pending {
            let _in_script = InScript::enter();
            let w = import.window;
            if !self.is_live(w) {
                continue;
            }
            let (cx, _realm) = self.enter_window(w);
            // SAFETY: request and payload stay rooted in `import` for the whole block; the
            // module is rooted before the next GC.
            unsafe {
                rooted!(in(cx) let request = import.request.get());
                rooted!(in(cx) let payload = import.payload.get());
                let url =
                    url::Url::parse(&import.referrer).and_then(|base| base.join(&import.specifier));
                let module = match url {
                    Ok(url) => load_module(cx, w, module_map(w), url.as_str()),
                    Err(e) => {
                        throw_error(
                            cx,
                            &format!(
                                "cannot resolve module specifier '{}': {e}",
                                import.specifier
                            ),
                        );
                        ptr::null_mut()
                    }
                };
                rooted!(in(cx) let module = module);
                let mut ok = !module.get().is_null();
                if ok {
                    rooted!(in(cx) let host_defined = ObjectValue(module.get()));
                    ok = jsapi::JS::LoadRequestedModules(
                        cx,
                        module.handle().into(),
                        host_defined.handle().into(),
                        Some(modules_loaded),
                        Some(modules_failed),
                    ) && !jsapi::JS_IsExceptionPending(cx);
                }
                let finished = if ok {
                    rooted!(in(cx) let no_referrer = ptr::null_mut::<JSScript>());
                    jsapi::JS::FinishLoadingImportedModule(
                        cx,
                        no_referrer.handle().into(),
                        request.handle().into(),
                        payload.handle().into(),
                        module.handle().into(),
                        false,
                    )
                } else {
                    jsapi::JS::FinishLoadingImportedModuleFailedWithPendingException(
                        cx,
                        payload.handle().into(),
                    )
                };
                if !finished {
                    drop(_realm);
                    self.report_exception(w);
                }
            }
        }
    }

    /// Settles a promise of window `w` (a task: the caller runs a microtask checkpoint).
    pub fn settle(&mut self, w: usize, settlement: Settlement) {
        if !self.is_live(w) {
            return;
        }
        let (cx, _realm) = self.enter_window(w);
        let _in_script = InScript::enter();
        // SAFETY: in the window's realm; the hooks object is rooted by the window.
        unsafe {
            rooted!(in(cx) let hooks = self.windows[w].hooks.get());
            rooted!(in(cx) let mut dom_exception = UndefinedValue());
            if jsapi::JS_GetProperty(
                cx,
                hooks.handle().into(),
                c"DOMException".as_ptr(),
                dom_exception.handle_mut().into(),
            ) {
                bindings::settle(cx, settlement, dom_exception.handle().into());
            } else {
                jsapi::JS_ClearPendingException(cx);
            }
        }
    }

    /// Tells window `parent` that its iframe number `index` has window `child`
    /// (`frames[index]`, `contentWindow`). Only indices cross: each realm asks for the
    /// window objects it may have (`windowFor`), so a window of another origin never
    /// reaches it.
    pub fn attach_frame(&mut self, parent: usize, index: u32, child: usize) {
        self.call_hook(
            parent,
            c"attachFrame",
            &[Arg::Num(f64::from(index)), Arg::Num(child as f64)],
        );
    }

    /// Fires a trusted event named `type_` at `target` (if it is still rooted).
    pub fn fire_event(&mut self, w: usize, target: RootRef, type_: &str) {
        let obj = bindings::object_of(target);
        if obj.is_null() {
            return;
        }
        self.call_hook_with_value(w, c"fireEvent", ObjectValue(obj), &[Arg::Str(type_)]);
    }

    /// Calls hook `name` of window `w` with `args`. Errors thrown by the hook are reported.
    pub fn call_hook(&mut self, w: usize, name: &CStr, args: &[Arg]) -> bool {
        self.call_hook_with_value(w, name, UndefinedValue(), args)
    }

    /// Calls hook `name` with `first` (a JS value) followed by `args`.
    fn call_hook_with_value(&mut self, w: usize, name: &CStr, first: Value, args: &[Arg]) -> bool {
        if !self.is_live(w) {
            return false;
        }
        let (cx, _realm) = self.enter_window(w);
        // SAFETY: the hooks object is rooted by the window; `first` is rooted right away and
        // every argument value is rooted in `argv` before the call.
        let ok = unsafe {
            rooted!(in(cx) let mut first = first);
            // A value from another window's compartment (its global) crosses as a wrapper.
            let wrapped = jsapi::JS_WrapValue(cx, first.handle_mut().into());
            rooted!(in(cx) let hooks = self.windows[w].hooks.get());
            rooted!(in(cx) let mut f = UndefinedValue());
            if !wrapped
                || !jsapi::JS_GetProperty(
                    cx,
                    hooks.handle().into(),
                    name.as_ptr(),
                    f.handle_mut().into(),
                )
            {
                false
            } else {
                rooted!(in(cx) let argv = mozjs::gc::ValueArray::<6>::new([UndefinedValue(); 6]));
                let mut n = 0;
                if !first.get().is_undefined() {
                    *argv.get_mut_ptr() = first.get();
                    n = 1;
                }
                for a in args.iter().take(6 - n) {
                    match a {
                        Arg::Num(x) => *argv.get_mut_ptr().add(n) = DoubleValue(*x),
                        Arg::Str(s) => {
                            rooted!(in(cx) let mut v = UndefinedValue());
                            new_string(cx, s, v.handle_mut());
                            *argv.get_mut_ptr().add(n) = v.get();
                        }
                    }
                    n += 1;
                }
                let all = HandleValueArray::from(&argv);
                let args = HandleValueArray {
                    length_: n,
                    elements_: all.elements_,
                };
                rooted!(in(cx) let mut rval = UndefinedValue());
                let _in_script = InScript::enter();
                jsapi::JS_CallFunctionValue(
                    cx,
                    hooks.handle().into(),
                    f.handle().into(),
                    &args,
                    rval.handle_mut().into(),
                )
            }
        };
        if !ok {
            if name == c"reportException" {
                // Reporting itself failed: nothing is left to report it but stderr.
                let text = self.take_exception_text();
                host().print(w, true, &format!("Uncaught {text}"));
            } else {
                // The page's own code (a timer callback, a listener) threw through the hook.
                self.report_exception(w);
            }
        }
        ok
    }

    /// A microtask checkpoint: runs every job, then reports promises still rejected without
    /// a handler to their pages.
    pub fn perform_microtask_checkpoint(&mut self) {
        let cx = self.cx();
        loop {
            // SAFETY: the microtask queue belongs to this context; a JS microtask runs in the
            // realm of its execution global, as MicroTask.h requires, and stays rooted.
            let failed_in = unsafe {
                let task = jsapi::DequeueNextRegularMicroTask(cx);
                if task.is_null() || task.is_undefined() {
                    break;
                }
                if !jsapi::IsJSMicroTask(&task) {
                    continue;
                }
                rooted!(in(cx) let job = jsapi::ToUnwrappedJSMicroTask(&task));
                let global = jsapi::GetExecutionGlobalFromJSMicroTask(job.get());
                if global.is_null() {
                    continue;
                }
                rooted!(in(cx) let global = global);
                let _realm = InRealm::new(cx, global.get());
                let _in_script = InScript::enter();
                if jsapi::RunJSMicroTask(cx, job.handle().into()) {
                    None
                } else {
                    window_of_realm(jsapi::GetObjectRealmOrNull(global.get()))
                }
            };
            if let Some(w) = failed_in {
                self.report_exception(w);
            }
        }
        let rejected = REJECTIONS.with(|r| std::mem::take(&mut *r.borrow_mut()));
        for promise in rejected {
            let p = promise.get();
            // SAFETY: `p` is kept alive by `promise` until the end of this iteration.
            let realm = unsafe { jsapi::GetObjectRealmOrNull(p) };
            let w = window_of_realm(realm);
            if let Some(w) = w {
                self.call_hook_with_value(w, c"reportRejection", ObjectValue(p), &[]);
            }
        }
        // Reporting queued reactions (and they may reject more promises): drain again.
        // SAFETY: a query of this context's queue.
        let more =
            REJECTIONS.with(|r| !r.borrow().is_empty()) || unsafe { jsapi::HasAnyMicroTasks(cx) };
        if more {
            self.perform_microtask_checkpoint();
        }
    }
}

impl Drop for Js {
    fn drop(&mut self) {
        bindings::release_all_roots();
        REJECTIONS.with(|r| r.borrow_mut().clear());
        IMPORTS.with(|i| i.borrow_mut().clear());
        MODULE_MAPS.with(|m| m.borrow_mut().clear());
        GLOBALS.with(|g| g.borrow_mut().clear());
        // The walk's agent goes before the runtime (no sample can be running once closed).
        if let Some(agent) = AGENT.with(|a| a.borrow_mut().take()) {
            if let Some(signal) = &agent.signal {
                signal.close();
            }
        }
        TERMINATE.with(|t| t.borrow_mut().take());
        self.windows.clear();
        HOST.with(|h| *h.borrow_mut() = None);
    }
}

/// How an agent samples (from the prefs).
#[derive(Debug, Clone, Copy)]
pub(crate) struct AgentConfig {
    /// The realm of the window that installs it (frames of unregistered sources get it).
    pub realm: RealmId,
    /// `js.stack_capture_max_frames`.
    pub max_frames: u32,
    /// `profiler.signal_sampling`.
    pub signal_sampling: bool,
    /// `js.stack_capture_slots`.
    pub read_slots: bool,
}

/// Makes this thread's runtime a profiler agent: stacks are captured in the interrupt
/// callback, for `realm`, resolved later through `registry`. (Sampling support, initialised
/// when a document's policy says: eagerly, or with the first `Profiler`.)
///
/// With `signal_sampling`, the sampler takes each stack at its tick through a SIGPROF walk
/// (`sampling.rs`), and the interrupt capture serves only what the walk cannot;
/// `register` registers the agent with the group, given that sampler.
pub(crate) fn install_agent(
    config: AgentConfig,
    registry: Arc<ScriptRegistry>,
    register: impl FnOnce(Option<jsprof_profiler::StackSampler>) -> AgentHandle,
) -> AgentHandle {
    let AgentConfig {
        realm,
        max_frames,
        signal_sampling,
        read_slots,
    } = config;
    let signal = match (signal_sampling, Runtime::get()) {
        // SAFETY: the context is this thread's own; `Js::drop` closes the sampler before
        // the runtime goes.
        (true, Some(cx)) => {
            Some(unsafe { sampling::SignalSampler::install(cx.as_ptr(), registry.clone(), realm) })
        }
        _ => None,
    };
    let handle = register(
        signal
            .clone()
            .map(|s| Box::new(move || s.sample()) as jsprof_profiler::StackSampler),
    );
    AGENT.with(|a| {
        *a.borrow_mut() = Some(Agent {
            handle: handle.clone(),
            realm,
            registry,
            max_frames: max_frames.max(1),
            sources: FxHashMap::default(),
            saved_frame_class: ptr::null(),
            signal,
            read_slots,
            stats: SamplingStats {
                by_depth: vec![(0, 0); 65],
                ..Default::default()
            },
        })
    });
    handle
}

/// Starts what sampling needs the engine to do while a session runs (SpiderMonkey's profiling
/// instrumentation, once): called on the agent's thread when a session starts.
pub(crate) fn enable_sampling() {
    AGENT.with(|a| {
        if let Some(signal) = a.borrow().as_ref().and_then(|a| a.signal.clone()) {
            signal.enable();
        }
    });
}

/// The interrupt callback: if the sampler asked this agent for a stack (and the request is
/// for the script running now), capture it once and hand it over. Returns true (go on),
/// except past `--timeout`, when false terminates the runaway script.
unsafe extern "C" fn on_interrupt(cx: *mut JSContext) -> bool {
    guarded(false, || {
        let terminate = TERMINATE.with(|t| {
            t.borrow()
                .as_ref()
                .is_some_and(|f| f.load(std::sync::atomic::Ordering::Acquire))
        });
        if terminate {
            // Returning false ends the running script without an exception it could catch.
            return false;
        }
        // A sample the sampler asked for: walked here, where the JS code stopped.
        // SAFETY: this is the context's interrupt callback, on its thread.
        unsafe { sampling::on_interrupt() };
        AGENT.with(|a| {
            let mut a = a.borrow_mut();
            let Some(agent) = a.as_mut() else { return };
            let start = std::time::Instant::now();
            let Some(request) = agent.handle.take_request() else {
                return;
            };
            // SAFETY: we are on the context's thread, inside SpiderMonkey's interrupt check,
            // where capturing the stack (which may GC) is allowed.
            let stack = unsafe { capture_stack(cx, agent) };
            let depth = stack.len().min(agent.stats.by_depth.len() - 1);
            agent.handle.answer(request, stack.into());
            let spent = start.elapsed();
            agent.stats.samples += 1;
            agent.stats.total += spent;
            let bucket = &mut agent.stats.by_depth[depth];
            bucket.0 += 1;
            bucket.1 += spent.as_nanos() as u64;
        });
        true
    })
}

/// Captures at most `max_frames` frames of the current stack into `out` (the youngest
/// SavedFrame, or null). False, with no exception left pending, if the capture failed.
///
/// # Safety
/// `cx` must be this thread's context, at a point where it may GC.
unsafe fn capture_current_stack(
    cx: *mut JSContext,
    max_frames: u32,
    out: mozjs::rust::MutableHandleObject,
) -> bool {
    // SAFETY: the capture options are initialised by JS_StackCapture_MaxFrames before use;
    // `out` is a rooted location.
    unsafe {
        let mut capture = std::mem::MaybeUninit::<jsapi::JS::StackCapture>::uninit();
        jsapi::JS_StackCapture_MaxFrames(max_frames, capture.as_mut_ptr());
        rooted!(in(cx) let no_start = ptr::null_mut::<JSObject>());
        if !jsapi::JS::CaptureCurrentStack(
            cx,
            out.into(),
            capture.as_mut_ptr(),
            no_start.handle().into(),
        ) {
            jsapi::JS_ClearPendingException(cx);
            return false;
        }
    }
    true
}

/// Reserved slot `index` of a SavedFrame.
///
/// # Safety
/// `obj` must be a live SavedFrame (class-checked by the caller).
unsafe fn saved_frame_slot(obj: *mut JSObject, index: u32) -> Value {
    let mut v = UndefinedValue();
    // SAFETY: per the contract; `index` is below the class's slot count (SLOT_* constants).
    unsafe { mozjs::glue::JS_GetReservedSlot(obj, index, &mut v) };
    v
}

/// Whether `obj` is a SavedFrame (by class name; `frames_from_slots` caches the class).
///
/// # Safety
/// `obj` must be null or a live object.
unsafe fn is_saved_frame(obj: *mut JSObject) -> bool {
    // SAFETY: per the contract; a class's name is a static C string.
    unsafe {
        !obj.is_null() && {
            let class = mozjs::rust::get_object_class(obj);
            !class.is_null() && CStr::from_ptr((*class).name) == c"SavedFrame"
        }
    }
}

/// The window whose realm a SavedFrame was captured in, and the muted-errors flag of its
/// script: the principals slot holds the realm's principals with that flag in bit 0.
///
/// # Safety
/// `obj` must be a live SavedFrame.
unsafe fn saved_frame_principals(obj: *mut JSObject) -> (Option<usize>, bool) {
    // SAFETY: per the contract; the slot holds a private pointer (or undefined).
    let slot = unsafe { saved_frame_slot(obj, SLOT_PRINCIPALS) };
    if slot.is_undefined() {
        return (None, false);
    }
    let raw = slot.to_private() as usize;
    let principals = (raw & !1) as *mut jsapi::JSPrincipals;
    // SAFETY: a frame's principals are its realm's, kept alive by the frame.
    let realm = unsafe { realm_info(principals) };
    (realm.map(|r| r.window), raw & 1 == 1)
}

/// The window of a SavedFrame's realm (see [`saved_frame_principals`]).
///
/// # Safety
/// `obj` must be a live SavedFrame.
unsafe fn saved_frame_window(obj: *mut JSObject) -> Option<usize> {
    // SAFETY: per the contract.
    unsafe { saved_frame_principals(obj) }.0
}

/// Captures the current stack as raw frames, outermost first: per frame its script (by
/// SpiderMonkey source id, cached) and current line/column. Self-hosted frames are excluded.
///
/// # Safety
/// `cx` must be this thread's context, at a point where it may GC.
unsafe fn capture_stack(cx: *mut JSContext, agent: &mut Agent) -> Vec<RawFrame> {
    use jsapi::JS::{SavedFrameResult, SavedFrameSelfHosted::Exclude};
    let mut frames = Vec::new();
    // SAFETY: every frame object is rooted while accessors run on it.
    unsafe {
        rooted!(in(cx) let mut stack = ptr::null_mut::<JSObject>());
        if !capture_current_stack(cx, agent.max_frames, stack.handle_mut()) {
            return frames;
        }
        if agent.read_slots {
            if let Some(mut fast) = frames_from_slots(stack.get(), agent) {
                fast.reverse();
                return fast;
            }
        }
        agent.stats.fallbacks += 1;
        // Fallback: the public accessors. No subsumes callback is installed, so every frame
        // is visible to them; each (with `Exclude`) skips self-hosted frames itself.
        rooted!(in(cx) let mut frame = stack.get());
        rooted!(in(cx) let mut parent = ptr::null_mut::<JSObject>());
        while !frame.get().is_null() {
            let (mut source_id, mut line) = (0u32, 0u32);
            let mut column = jsapi::JS::TaggedColumnNumberOneOrigin { value_: 0 };
            let h = frame.handle();
            if jsapi::GetSavedFrameSourceId(cx, ptr::null_mut(), h.into(), &mut source_id, Exclude)
                != SavedFrameResult::Ok
                || jsapi::GetSavedFrameLine(cx, ptr::null_mut(), h.into(), &mut line, Exclude)
                    != SavedFrameResult::Ok
                || jsapi::GetSavedFrameColumn(cx, ptr::null_mut(), h.into(), &mut column, Exclude)
                    != SavedFrameResult::Ok
            {
                break;
            }
            frames.push(agent.raw_frame(source_id, line, column.value_));
            if jsapi::GetSavedFrameParent(
                cx,
                ptr::null_mut(),
                h.into(),
                parent.handle_mut().into(),
                Exclude,
            ) != SavedFrameResult::Ok
            {
                break;
            }
            frame.set(parent.get());
        }
    }
    frames.reverse();
    frames
}

/// The SavedFrame reserved slots (js/src/vm/SavedFrame.h, SpiderMonkey 153).
const SLOT_SOURCEID: u32 = 1;
const SLOT_LINE: u32 = 2;
const SLOT_COLUMN: u32 = 3;
const SLOT_ASYNCCAUSE: u32 = 5;
const SLOT_PARENT: u32 = 6;
const SLOT_PRINCIPALS: u32 = 7;

/// The fast path of [`capture_stack`], innermost frame first: reads each SavedFrame's reserved
/// slots directly instead of calling four accessors (each entering the frame's realm) per
/// frame, which halves the cost of a sample taken with cold caches. Self-hosted frames come out
/// hidden (their source, "self-hosted", is no registered script), as the accessors' `Exclude`
/// would skip them; the walk stops at an async parent, as `GetSavedFrameParent` does. `None`
/// if an object is not a SavedFrame or a slot does not hold what that layout says: the caller
/// then uses the accessors.
///
/// # Safety
/// `top` must be the (rooted) result of `CaptureCurrentStack` on this thread. Slot reads
/// cannot GC, and every frame is reachable from `top`.
unsafe fn frames_from_slots(top: *mut JSObject, agent: &mut Agent) -> Option<Vec<RawFrame>> {
    let mut out = Vec::with_capacity(32);
    let mut obj = top;
    let mut first = true;
    // SAFETY: as the function's contract; the class check comes before any slot read.
    unsafe {
        let slot = |obj: *mut JSObject, index: u32| saved_frame_slot(obj, index);
        while !obj.is_null() {
            let class = mozjs::rust::get_object_class(obj);
            if class != agent.saved_frame_class {
                if !is_saved_frame(obj) {
                    return None;
                }
                agent.saved_frame_class = class;
            }
            if !first && slot(obj, SLOT_ASYNCCAUSE).is_string() {
                break;
            }
            first = false;
            let (source_id, line, column) = (
                slot(obj, SLOT_SOURCEID),
                slot(obj, SLOT_LINE),
                slot(obj, SLOT_COLUMN),
            );
            if !(source_id.is_int32() && line.is_int32() && column.is_int32()) {
                return None;
            }
            let mut frame = agent.raw_frame(
                source_id.to_int32() as u32,
                line.to_int32() as u32,
                column.to_int32() as u32,
            );
            let (window, muted) = saved_frame_principals(obj);
            if let Some(window) = window {
                frame.realm = realm_of(window);
            }
            // The engine's own muted-errors flag of the frame's script, besides the
            // registry's: either hides the frame.
            frame.hidden |= muted;
            out.push(frame);
            let parent = slot(obj, SLOT_PARENT);
            obj = if parent.is_object() {
                parent.to_object()
            } else if parent.is_null_or_undefined() {
                ptr::null_mut()
            } else {
                return None;
            };
        }
    }
    Some(out)
}

static WRAP_CALLBACKS: jsapi::JSWrapObjectCallbacks = jsapi::JSWrapObjectCallbacks {
    wrap: Some(wrap_object),
    preWrap: Some(pre_wrap),
};

/// Wraps an object for another compartment (every window's realm is its own compartment).
/// Between same-origin realms the wrapper is transparent. Between realms of different
/// origins it is SpiderMonkey's opaque security wrapper, which refuses every operation: no
/// object of one origin is usable from another. (Windows of other origins are never
/// handed across at all: a page reaches them through cross-origin window objects its own
/// realm makes, see `prelude.js`. The opaque wrapper is the net under that.)
unsafe extern "C" fn wrap_object(
    cx: *mut JSContext,
    _existing: jsapi::HandleObject,
    obj: jsapi::HandleObject,
) -> *mut JSObject {
    guarded(ptr::null_mut(), || {
        // SAFETY: called by SpiderMonkey with a live context, in the destination realm, and a
        // rooted object.
        unsafe {
            let realm = jsapi::GetCurrentRealmOrNull(cx);
            let here = if realm.is_null() {
                None
            } else {
                realm_info(jsapi::GetRealmPrincipals(realm))
            };
            let there = object_realm_info(obj.get());
            let same_origin = match (here, there) {
                (Some(a), Some(b)) => a.origin.same_origin(&b.origin),
                _ => true,
            };
            let handler = if same_origin {
                mozjs::glue::GetCrossCompartmentWrapper()
            } else {
                mozjs::glue::GetSecurityWrapper()
            };
            mozjs::glue::WrapperNew(cx, obj, handler, ptr::null())
        }
    })
}

unsafe extern "C" fn pre_wrap(
    _cx: *mut JSContext,
    _scope: jsapi::HandleObject,
    _orig: jsapi::HandleObject,
    obj: jsapi::HandleObject,
    _passed: jsapi::HandleObject,
    ret: jsapi::MutableHandleObject,
) {
    guarded((), || {
        // No preparation: the object itself is what gets wrapped.
        ret.set(obj.get())
    })
}

/// What a realm's principals carry (their private pointer, a `Box<RealmInfo>` freed by
/// [`destroy_principals`]).
#[derive(Debug)]
pub(crate) struct RealmInfo {
    /// The window (global) index of the realm in its [`Js`].
    pub window: usize,
    /// The origin of its document.
    pub origin: Origin,
}

/// The RealmInfo of principals made by `new_window_of_kind` (`None` for null principals).
///
/// # Safety
/// `p` must be null or live principals made by `CreateRustJSPrincipals` with a RealmInfo.
unsafe fn realm_info<'a>(p: *mut jsapi::JSPrincipals) -> Option<&'a RealmInfo> {
    if p.is_null() {
        return None;
    }
    // SAFETY: per the contract; the RealmInfo lives as long as the principals.
    unsafe { (mozjs::glue::GetRustJSPrincipalsPrivate(p) as *const RealmInfo).as_ref() }
}

/// The RealmInfo of the realm `obj` lives in.
///
/// # Safety
/// `obj` must be a live object.
unsafe fn object_realm_info<'a>(obj: *mut JSObject) -> Option<&'a RealmInfo> {
    // SAFETY: per the contract; every realm's principals are made by new_window_of_kind.
    unsafe {
        let realm = jsapi::GetObjectRealmOrNull(obj);
        if realm.is_null() {
            return None;
        }
        realm_info(jsapi::GetRealmPrincipals(realm))
    }
}

static PRINCIPALS_CALLBACKS: mozjs::glue::JSPrincipalsCallbacks =
    mozjs::glue::JSPrincipalsCallbacks {
        write: None,
        isSystemPrincipal: Some(not_system_principal),
        isAddonPrincipal: Some(not_system_principal),
    };

unsafe extern "C" fn not_system_principal(_p: *mut jsapi::JSPrincipals) -> bool {
    guarded(false, || false)
}

unsafe extern "C" fn destroy_principals(p: *mut jsapi::JSPrincipals) {
    guarded((), || {
        // SAFETY: SpiderMonkey calls this once, when the last reference to principals made by
        // `CreateRustJSPrincipals` goes; their private is the Box<RealmInfo> made with them.
        unsafe {
            let info = mozjs::glue::GetRustJSPrincipalsPrivate(p) as *mut RealmInfo;
            if !info.is_null() {
                drop(Box::from_raw(info));
            }
            mozjs::glue::DestroyRustJSPrincipals(p)
        }
    })
}

/// The security callbacks: `subsumes` says whether code of principals `a` may see what
/// principals `b` own — same origin (<https://html.spec.whatwg.org/#same-origin>). SpiderMonkey
/// asks it to filter SavedFrame stacks (`Error.stack`, captured stacks) so that a stack
/// never shows a frame of an origin its reader may not see.
static SECURITY_CALLBACKS: jsapi::JSSecurityCallbacks = jsapi::JSSecurityCallbacks {
    contentSecurityPolicyAllows: None,
    codeForEvalGets: None,
    subsumes: Some(subsumes),
};

unsafe extern "C" fn subsumes(a: *mut jsapi::JSPrincipals, b: *mut jsapi::JSPrincipals) -> bool {
    guarded(false, || {
        // SAFETY: SpiderMonkey passes principals of live realms (or null for none).
        let (a, b) = unsafe { (realm_info(a), realm_info(b)) };
        match (a, b) {
            (Some(a), Some(b)) => a.origin.same_origin(&b.origin),
            // No principals: the engine itself, which sees everything and is seen by all.
            (None, _) | (_, None) => true,
        }
    })
}

static JOB_QUEUE_TRAPS: mozjs::glue::JobQueueTraps = mozjs::glue::JobQueueTraps {
    getHostDefinedData: Some(host_defined_data),
    getHostDefinedGlobal: Some(host_defined_global),
    runJobs: Some(run_jobs_trap),
    traceNonGCThingMicroTask: Some(trace_non_gc_microtask),
};

/// The incumbent global of a new job is the current global; jsprof keeps no other data.
unsafe extern "C" fn host_defined_data(
    cx: *mut JSContext,
    incumbent: jsapi::JS::MutableHandle<*mut JSObject>,
    data: jsapi::JS::MutableHandle<*mut JSObject>,
) -> bool {
    guarded(false, || {
        // SAFETY: called by SpiderMonkey on this thread with valid out-handles.
        unsafe {
            incumbent.set(jsapi::CurrentGlobalOrNull(cx));
            data.set(ptr::null_mut());
        }
        true
    })
}

unsafe extern "C" fn host_defined_global(
    cx: *mut JSContext,
    data: jsapi::JS::MutableHandle<*mut JSObject>,
) -> bool {
    guarded(false, || {
        // SAFETY: as `host_defined_data`.
        unsafe { data.set(jsapi::CurrentGlobalOrNull(cx)) };
        true
    })
}

/// The engine asks for a drain only in paths jsprof does not use; checkpoints drain the
/// queue themselves (they must report errors to the right page).
unsafe extern "C" fn run_jobs_trap(_cx: *mut JSContext) {}

unsafe extern "C" fn trace_non_gc_microtask(_trc: *mut jsapi::JSTracer, _value: *mut Value) {}

/// The window whose realm is `realm`, from the realm's private slot.
fn window_of_realm(realm: *mut jsapi::JS::Realm) -> Option<usize> {
    if realm.is_null() {
        return None;
    }
    // SAFETY: reads the private pointer set in `new_window` (an index + 1, not a pointer).
    let private = unsafe { jsapi::GetRealmPrivate(realm) } as usize;
    private.checked_sub(1)
}

/// The window of the realm `cx` is in.
fn current_window(cx: *mut JSContext) -> usize {
    // SAFETY: natives run with a realm entered.
    let realm = unsafe { jsapi::GetCurrentRealmOrNull(cx) };
    window_of_realm(realm).unwrap_or(0)
}

/// Makes a JS string from `s` into `out`.
///
/// # Safety
/// `cx` must be the live context of this thread, in a realm.
unsafe fn new_string(cx: *mut JSContext, s: &str, out: mozjs::rust::MutableHandleValue) {
    let utf16: Vec<u16> = s.encode_utf16().collect();
    // SAFETY: the pointer and length describe `utf16`, which outlives the call (the chars are copied).
    let js = unsafe { jsapi::JS_NewUCStringCopyN(cx, utf16.as_ptr(), utf16.len()) };
    let mut out = out;
    // SAFETY: `js` is non-null in the else branch, a fresh string.
    out.set(if js.is_null() {
        UndefinedValue()
    } else {
        StringValue(unsafe { &*js })
    });
}

/// Converts a JS value to a Rust string with ToString.
///
/// # Safety
/// `cx` must be the live context of this thread; `v` must be rooted.
unsafe fn to_rust_string(cx: *mut JSContext, v: jsapi::HandleValue) -> Option<String> {
    // SAFETY: one context wrapper for this callback, used only here.
    unsafe {
        let mut wrapper = mozjs::context::JSContext::from_ptr(NonNull::new(cx)?);
        let s = mozjs::rust::ToString(&mut wrapper, mozjs::rust::Handle::from_raw(v));
        let s = NonNull::new(s)?;
        rooted!(in(cx) let _keep = s.as_ptr());
        Some(mozjs::conversions::jsstr_to_string(&wrapper, s))
    }
}

/// Throws an Error with `message` (SpiderMonkey's reported errors are plain `Error`s).
///
/// # Safety
/// `cx` must be the live context of this thread.
unsafe fn throw_error(cx: *mut JSContext, message: &str) {
    let c = cstring(message);
    // SAFETY: `c` is a valid C string; "%s" makes the message verbatim.
    unsafe { jsapi::JS_ReportErrorUTF8(cx, c"%s".as_ptr(), c.as_ptr()) };
}

/// Throws a TypeError with `message`.
///
/// # Safety
/// `cx` must be the live context of this thread, in a realm.
unsafe fn throw_type_error(cx: *mut JSContext, message: &str) {
    let Some(nn) = NonNull::new(cx) else { return };
    // SAFETY: per the contract.
    unsafe {
        let mut wrapper = mozjs::context::JSContext::from_ptr(nn);
        mozjs::error::throw_type_error(&mut wrapper, &cstring(message));
    }
}

/// Compiles a module and registers it in `modules` under `url`.
///
/// # Safety
/// `cx` must be in the module's realm; `modules` must be that window's rooted module map.
unsafe fn compile_module(
    cx: *mut JSContext,
    modules: *mut JSObject,
    source: &str,
    url: &str,
    line: u32,
    column: u32,
) -> *mut JSObject {
    // SAFETY: as the function's contract; the module is rooted before the property set.
    unsafe {
        let wrapper = wrap_cx(cx);
        let opts = compile_options(&wrapper, url, line, column);
        let mut src = transform_str_to_source_text(source);
        rooted!(in(cx) let module = jsapi::JS::CompileModule1(cx, opts.ptr, &mut src));
        if module.get().is_null() {
            return ptr::null_mut();
        }
        let id = jsprof_module_source_id(module.get());
        host().register_script(
            current_window(cx),
            id,
            url,
            source,
            line,
            column,
            true,
            false,
        );
        rooted!(in(cx) let map = modules);
        rooted!(in(cx) let value = ObjectValue(module.get()));
        let key = cstring(url);
        if !jsapi::JS_SetProperty(cx, map.handle().into(), key.as_ptr(), value.handle().into()) {
            return ptr::null_mut();
        }
        module.get()
    }
}

/// The module at `url` in window `w`: from its module map, or fetched and compiled.
///
/// # Safety
/// As [`compile_module`].
unsafe fn load_module(
    cx: *mut JSContext,
    w: usize,
    modules: *mut JSObject,
    url: &str,
) -> *mut JSObject {
    // SAFETY: as the function's contract.
    unsafe {
        rooted!(in(cx) let map = modules);
        rooted!(in(cx) let mut existing = UndefinedValue());
        let key = cstring(url);
        if !jsapi::JS_GetProperty(
            cx,
            map.handle().into(),
            key.as_ptr(),
            existing.handle_mut().into(),
        ) {
            return ptr::null_mut();
        }
        if existing.get().is_object() {
            return existing.get().to_object();
        }
        match host().fetch_script(w, url, true) {
            Ok(fetched) => {
                let final_url = fetched.url;
                let module = compile_module(cx, modules, &fetched.source, &final_url, 1, 1);
                if !module.is_null() && final_url != url {
                    rooted!(in(cx) let m = ObjectValue(module));
                    jsapi::JS_SetProperty(cx, map.handle().into(), key.as_ptr(), m.handle().into());
                }
                module
            }
            Err(message) => {
                // A module that cannot be fetched is a TypeError
                // (https://html.spec.whatwg.org/#fetch-a-single-module-script).
                throw_type_error(cx, &format!("error loading module {url}: {message}"));
                ptr::null_mut()
            }
        }
    }
}

/// The URL a script was compiled with.
///
/// # Safety
/// `script` must be null or a live script.
unsafe fn script_url(script: *mut JSScript) -> Option<String> {
    if script.is_null() {
        return None;
    }
    // SAFETY: as the function's contract; the filename is a C string owned by the script.
    unsafe {
        let name = jsapi::JS_GetScriptFilename(script);
        (!name.is_null()).then(|| CStr::from_ptr(name).to_string_lossy().into_owned())
    }
}

/// HostLoadImportedModule (<https://html.spec.whatwg.org/#hostloadimportedmodule>).
unsafe extern "C" fn load_imported_module(
    cx: *mut JSContext,
    referrer: jsapi::JS::Handle<*mut JSScript>,
    request: jsapi::JS::Handle<*mut JSObject>,
    _host_defined: jsapi::JS::HandleValue,
    payload: jsapi::JS::HandleValue,
    _line: u32,
    _column: jsapi::JS::ColumnNumberOneOrigin,
) -> bool {
    guarded(false, || {
        // SAFETY: SpiderMonkey calls this on the context's thread with rooted handles.
        unsafe {
            let w = current_window(cx);
            let specifier = {
                rooted!(in(cx) let s = jsapi::JS::GetModuleRequestSpecifier(cx, request));
                if s.get().is_null() {
                    return false;
                }
                rooted!(in(cx) let v = StringValue(&*s.get()));
                to_rust_string(cx, v.handle().into()).unwrap_or_default()
            };
            let referrer_url = script_url(referrer.get()).unwrap_or_default();
            let is_dynamic = payload.get().is_object() && {
                rooted!(in(cx) let obj = payload.get().to_object());
                jsapi::IsPromiseObject(obj.handle().into())
            };
            if is_dynamic {
                // Completed later, from the event loop, as the HTML standard does.
                IMPORTS.with(|i| {
                    i.borrow_mut().push(PendingImport {
                        window: w,
                        referrer: referrer_url,
                        specifier,
                        request: RootedTraceableBox::from_box(Heap::boxed(request.get())),
                        payload: RootedTraceableBox::from_box(Heap::boxed(payload.get())),
                    })
                });
                host().dynamic_import_pending(w);
                return true;
            }
            let resolved = url::Url::parse(&referrer_url).and_then(|b| b.join(&specifier));
            let url = match resolved {
                Ok(u)
                    if specifier.starts_with("./")
                        || specifier.starts_with("../")
                        || specifier.starts_with('/')
                        || url::Url::parse(&specifier).is_ok() =>
                {
                    u
                }
                _ => {
                    throw_error(
                        cx,
                        &format!(
                            "cannot resolve module specifier '{specifier}' from {referrer_url}"
                        ),
                    );
                    return false;
                }
            };
            let modules = module_map(w);
            let module = if modules.is_null() {
                ptr::null_mut()
            } else {
                load_module(cx, w, modules, url.as_str())
            };
            if module.is_null() {
                return false;
            }
            rooted!(in(cx) let module = module);
            jsapi::JS::FinishLoadingImportedModule(
                cx,
                referrer,
                request,
                payload,
                module.handle().into(),
                false,
            )
        }
    })
}

thread_local! {
    /// Each window's global, by window index (for `windowFor`), rooted and traced.
    static GLOBALS: RefCell<Vec<RootedTraceableBox<Heap<*mut JSObject>>>> = const { RefCell::new(Vec::new()) };
    /// Each window's module map (URL -> module record), rooted and traced, so a moving GC
    /// keeps the pointers current.
    static MODULE_MAPS: RefCell<Vec<RootedTraceableBox<Heap<*mut JSObject>>>> = const { RefCell::new(Vec::new()) };
}

fn module_map(w: usize) -> *mut JSObject {
    MODULE_MAPS.with(|m| m.borrow().get(w).map_or(ptr::null_mut(), |h| h.get()))
}

unsafe extern "C" fn modules_loaded(
    cx: *mut JSContext,
    host_defined: jsapi::JS::HandleValue,
) -> bool {
    guarded(false, || {
        // SAFETY: `host_defined` is the module object passed to LoadRequestedModules.
        unsafe {
            rooted!(in(cx) let module = host_defined.get().to_object());
            jsapi::JS::ModuleLink(cx, module.handle().into())
        }
    })
}

unsafe extern "C" fn modules_failed(
    cx: *mut JSContext,
    _host_defined: jsapi::JS::HandleValue,
    error: jsapi::JS::HandleValue,
) -> bool {
    guarded(false, || {
        // SAFETY: `error` is a rooted handle from SpiderMonkey.
        unsafe {
            jsapi::JS_SetPendingException(cx, error, jsapi::JS::ExceptionStackBehavior::Capture)
        };
        true
    })
}

/// The promise rejection tracker: remembers promises rejected without a handler.
unsafe extern "C" fn track_rejection(
    _cx: *mut JSContext,
    _muted_errors: bool,
    promise: jsapi::JS::HandleObject,
    state: PromiseRejectionHandlingState,
    _data: *mut c_void,
) {
    guarded((), || {
        let p = promise.get();
        REJECTIONS.with(|r| {
            let mut r = r.borrow_mut();
            match state {
                PromiseRejectionHandlingState::Unhandled => {
                    r.push(RootedTraceableBox::from_box(Heap::boxed(p)));
                }
                PromiseRejectionHandlingState::Handled => r.retain(|x| x.get() != p),
            }
        });
    })
}

/// Reads argument `i` as a number (NaN if absent or not convertible).
///
/// # Safety
/// `cx` live, `args` the callback's arguments.
unsafe fn arg_number(cx: *mut JSContext, args: &CallArgs, i: u32) -> f64 {
    if i >= args.argc_ {
        return f64::NAN;
    }
    // SAFETY: `i` is within argc.
    unsafe {
        let v = args.get(i);
        let mut wrapper = wrap_cx(cx);
        mozjs::rust::ToNumber(&mut wrapper, mozjs::rust::Handle::from_raw(v)).unwrap_or(f64::NAN)
    }
}

/// Reads argument `i` as a string.
///
/// # Safety
/// `cx` live, `args` the callback's arguments.
unsafe fn arg_string(cx: *mut JSContext, args: &CallArgs, i: u32) -> Option<String> {
    if i >= args.argc_ {
        return None;
    }
    // SAFETY: `i` is within argc.
    unsafe { to_rust_string(cx, args.get(i)) }
}

/// A native's arguments, read with ToNumber/ToString.
struct NativeArgs<'a> {
    cx: *mut JSContext,
    args: &'a CallArgs,
}

impl NativeArgs<'_> {
    fn num(&self, i: u32) -> f64 {
        // SAFETY: `cx` and `args` are the running native's.
        unsafe { arg_number(self.cx, self.args, i) }
    }

    fn string(&self, i: u32) -> String {
        // SAFETY: `cx` and `args` are the running native's.
        unsafe { arg_string(self.cx, self.args, i) }.unwrap_or_default()
    }
}

/// The body of a native that hands its arguments to the host and returns `undefined`.
///
/// # Safety
/// Called from a JSNative with SpiderMonkey's `cx`, `argc` and `vp`.
unsafe fn host_call(
    cx: *mut JSContext,
    argc: u32,
    vp: *mut Value,
    f: impl FnOnce(&dyn Host, usize, &NativeArgs),
) -> bool {
    // SAFETY: per the contract.
    unsafe {
        let args = CallArgs::from_vp(vp, argc);
        f(
            &*host(),
            current_window(cx),
            &NativeArgs { cx, args: &args },
        );
        args.rval().set(UndefinedValue());
        // An argument's ToNumber/ToString threw: the native throws it on.
        !jsapi::JS_IsExceptionPending(cx)
    }
}

unsafe extern "C" fn native_print(cx: *mut JSContext, argc: u32, vp: *mut Value) -> bool {
    guarded(false, || {
        // SAFETY: a JSNative called by SpiderMonkey with valid `vp`/`argc`.
        unsafe {
            host_call(cx, argc, vp, |host, w, a| {
                host.print(w, a.num(0) == 1.0, &a.string(1))
            })
        }
    })
}

unsafe extern "C" fn native_now(cx: *mut JSContext, argc: u32, vp: *mut Value) -> bool {
    guarded(false, || {
        // SAFETY: a JSNative called by SpiderMonkey with valid `vp`/`argc`.
        unsafe {
            let args = CallArgs::from_vp(vp, argc);
            args.rval().set(DoubleValue(host().now(current_window(cx))));
        }
        true
    })
}

unsafe extern "C" fn native_time_origin(cx: *mut JSContext, argc: u32, vp: *mut Value) -> bool {
    guarded(false, || {
        // SAFETY: a JSNative called by SpiderMonkey with valid `vp`/`argc`.
        unsafe {
            let args = CallArgs::from_vp(vp, argc);
            args.rval()
                .set(DoubleValue(host().time_origin(current_window(cx))));
        }
        true
    })
}

unsafe extern "C" fn native_set_timer(cx: *mut JSContext, argc: u32, vp: *mut Value) -> bool {
    guarded(false, || {
        // SAFETY: a JSNative called by SpiderMonkey with valid `vp`/`argc`.
        unsafe {
            host_call(cx, argc, vp, |host, w, a| {
                host.set_timer(w, a.num(0) as u32, a.num(1), a.num(2) == 1.0)
            })
        }
    })
}

unsafe extern "C" fn native_clear_timer(cx: *mut JSContext, argc: u32, vp: *mut Value) -> bool {
    guarded(false, || {
        // SAFETY: a JSNative called by SpiderMonkey with valid `vp`/`argc`.
        unsafe {
            host_call(cx, argc, vp, |host, w, a| {
                host.clear_timer(w, a.num(0) as u32)
            })
        }
    })
}

unsafe extern "C" fn native_fetch_start(cx: *mut JSContext, argc: u32, vp: *mut Value) -> bool {
    guarded(false, || {
        // SAFETY: a JSNative called by SpiderMonkey with valid `vp`/`argc`.
        unsafe {
            host_call(cx, argc, vp, |host, w, a| {
                host.fetch_start(w, a.num(0) as u32, &a.string(1), &a.string(2), &a.string(3))
            })
        }
    })
}

unsafe extern "C" fn native_load_frame(cx: *mut JSContext, argc: u32, vp: *mut Value) -> bool {
    guarded(false, || {
        // SAFETY: a JSNative called by SpiderMonkey with valid `vp`/`argc`.
        unsafe {
            host_call(cx, argc, vp, |host, w, a| {
                host.load_frame(w, a.num(0) as u32, &a.string(1), a.num(2) == 1.0)
            })
        }
    })
}

unsafe extern "C" fn native_discard_frame(cx: *mut JSContext, argc: u32, vp: *mut Value) -> bool {
    guarded(false, || {
        // SAFETY: a JSNative called by SpiderMonkey with valid `vp`/`argc`.
        unsafe {
            host_call(cx, argc, vp, |host, w, a| {
                host.discard_frame(w, a.num(0) as u32)
            })
        }
    })
}

/// `sameOrigin(url)`: whether `url` is same-origin with the current window's document.
unsafe extern "C" fn native_same_origin(cx: *mut JSContext, argc: u32, vp: *mut Value) -> bool {
    guarded(false, || {
        // SAFETY: a JSNative called by SpiderMonkey with valid `vp`/`argc`.
        unsafe {
            let args = CallArgs::from_vp(vp, argc);
            let url = NativeArgs { cx, args: &args }.string(0);
            if jsapi::JS_IsExceptionPending(cx) {
                return false;
            }
            let same = host().same_origin(current_window(cx), &url);
            args.rval().set(mozjs::jsval::BooleanValue(same));
        }
        true
    })
}

/// `windowFor(index)`: window `index`'s global, for the current realm, if their documents are
/// same-origin (a transparent wrapper of it); `null` otherwise, and the prelude makes a
/// cross-origin window object of its own realm instead.
unsafe extern "C" fn native_window_for(cx: *mut JSContext, argc: u32, vp: *mut Value) -> bool {
    guarded(false, || {
        // SAFETY: a JSNative called by SpiderMonkey with valid `vp`/`argc`; the global is rooted
        // before it is wrapped into the current compartment.
        unsafe {
            let args = CallArgs::from_vp(vp, argc);
            let target = NativeArgs { cx, args: &args }.num(0);
            if jsapi::JS_IsExceptionPending(cx) {
                return false;
            }
            args.rval().set(NullValue());
            let here = current_window(cx);
            if !(target >= 0.0 && target.fract() == 0.0) {
                return true;
            }
            let target = target as usize;
            if !host().windows_same_origin(here, target) {
                return true;
            }
            let global = GLOBALS.with(|g| g.borrow().get(target).map(|h| h.get()));
            let Some(global) = global.filter(|g| !g.is_null()) else {
                return true;
            };
            rooted!(in(cx) let mut obj = global);
            if !jsapi::JS_WrapObject(cx, obj.handle_mut().into()) {
                return false;
            }
            args.rval().set(ObjectValue(obj.get()));
        }
        true
    })
}

/// `frameTree(index, what)`: see [`Host::frame_tree`].
unsafe extern "C" fn native_frame_tree(cx: *mut JSContext, argc: u32, vp: *mut Value) -> bool {
    guarded(false, || {
        // SAFETY: a JSNative called by SpiderMonkey with valid `vp`/`argc`.
        unsafe {
            let args = CallArgs::from_vp(vp, argc);
            let a = NativeArgs { cx, args: &args };
            let (window, what) = (a.num(0), a.num(1));
            if jsapi::JS_IsExceptionPending(cx) {
                return false;
            }
            let answer = if window >= 0.0 && window.fract() == 0.0 && what.fract() == 0.0 {
                host().frame_tree(window as usize, what as i64)
            } else {
                -1
            };
            args.rval().set(DoubleValue(answer as f64));
        }
        true
    })
}

/// `windowOrigin(index)`: the serialised origin of window `index`'s document.
unsafe extern "C" fn native_window_origin(cx: *mut JSContext, argc: u32, vp: *mut Value) -> bool {
    guarded(false, || {
        // SAFETY: a JSNative called by SpiderMonkey with valid `vp`/`argc`.
        unsafe {
            let args = CallArgs::from_vp(vp, argc);
            let window = NativeArgs { cx, args: &args }.num(0);
            if jsapi::JS_IsExceptionPending(cx) {
                return false;
            }
            let origin = if window >= 0.0 && window.fract() == 0.0 {
                host().window_origin(window as usize)
            } else {
                "null".to_owned()
            };
            rooted!(in(cx) let mut v = UndefinedValue());
            new_string(cx, &origin, v.handle_mut());
            args.rval().set(v.get());
        }
        true
    })
}

/// `windowPost(to, data, targetOrigin, from)`: posts serialised `data` from window `from` to
/// window `to` (see [`Host::window_post`]).
unsafe extern "C" fn native_window_post(cx: *mut JSContext, argc: u32, vp: *mut Value) -> bool {
    guarded(false, || {
        // SAFETY: a JSNative called by SpiderMonkey with valid `vp`/`argc`.
        unsafe {
            host_call(cx, argc, vp, |host, _, a| {
                let (to, from) = (a.num(0), a.num(3));
                let index = |x: f64| (x >= 0.0 && x.fract() == 0.0).then_some(x as usize);
                if let (Some(to), Some(from)) = (index(to), index(from)) {
                    host.window_post(from, to, &a.string(1), &a.string(2));
                }
            })
        }
    })
}

/// `loadScript(index, url, module, crossorigin, text)`: the script of element `index`,
/// inserted by script, fetched from `url` — or, given `text`, an inline module of the
/// document at `url`, queued to run; `crossorigin` is the attribute's value, or null without
/// one.
unsafe extern "C" fn native_load_script(cx: *mut JSContext, argc: u32, vp: *mut Value) -> bool {
    guarded(false, || {
        // SAFETY: a JSNative called by SpiderMonkey with valid `vp`/`argc`.
        unsafe {
            let present = |i: u32| {
                argc > i
                    && !CallArgs::from_vp(vp, argc)
                        .get(i)
                        .get()
                        .is_null_or_undefined()
            };
            let (has_crossorigin, has_text) = (present(3), present(4));
            host_call(cx, argc, vp, |host, w, a| {
                let crossorigin = has_crossorigin.then(|| a.string(3));
                let text = has_text.then(|| a.string(4));
                host.load_script(
                    w,
                    a.num(0) as u32,
                    &a.string(1),
                    a.num(2) == 1.0,
                    crossorigin,
                    text,
                )
            })
        }
    })
}

/// `callerWindow()`: the window index of the realm whose script called the prelude function
/// that calls this (the incumbent of `postMessage`), from the principals of the second
/// youngest frame of the stack; -1 if there is none.
unsafe extern "C" fn native_caller_window(cx: *mut JSContext, argc: u32, vp: *mut Value) -> bool {
    guarded(false, || {
        // SAFETY: a JSNative called by SpiderMonkey with valid `vp`/`argc`; the captured stack is
        // rooted while its slots are read (class-checked first).
        unsafe {
            let args = CallArgs::from_vp(vp, argc);
            let mut window = -1.0;
            rooted!(in(cx) let mut stack = ptr::null_mut::<JSObject>());
            if capture_current_stack(cx, 2, stack.handle_mut()) && is_saved_frame(stack.get()) {
                let parent = saved_frame_slot(stack.get(), SLOT_PARENT);
                if parent.is_object() && is_saved_frame(parent.to_object()) {
                    if let Some(w) = saved_frame_window(parent.to_object()) {
                        window = w as f64;
                    }
                }
            }
            args.rval().set(DoubleValue(window));
        }
        true
    })
}

unsafe extern "C" fn native_port_open(cx: *mut JSContext, argc: u32, vp: *mut Value) -> bool {
    guarded(false, || {
        // SAFETY: a JSNative called by SpiderMonkey with valid `vp`/`argc`.
        unsafe {
            let args = CallArgs::from_vp(vp, argc);
            let pid = host().port_open(current_window(cx));
            args.rval().set(DoubleValue(pid as f64));
        }
        true
    })
}

unsafe extern "C" fn native_port_attach(cx: *mut JSContext, argc: u32, vp: *mut Value) -> bool {
    guarded(false, || {
        // SAFETY: a JSNative called by SpiderMonkey with valid `vp`/`argc`.
        unsafe {
            host_call(cx, argc, vp, |host, w, a| {
                host.port_attach(w, a.num(0) as u64, a.num(1) as u8)
            })
        }
    })
}

unsafe extern "C" fn native_port_send(cx: *mut JSContext, argc: u32, vp: *mut Value) -> bool {
    guarded(false, || {
        // SAFETY: a JSNative called by SpiderMonkey with valid `vp`/`argc`.
        unsafe {
            host_call(cx, argc, vp, |host, w, a| {
                host.port_send(w, a.num(0) as u64, a.num(1) as u8, &a.string(2))
            })
        }
    })
}

/// `importScript(url)`: fetches a classic script in no-cors mode and runs it in the current
/// realm, with its URL as its file name (a worker's `importScripts`); a script from an
/// opaque response has muted errors. Returns `undefined`, or why the script could not be
/// fetched (the prelude throws the NetworkError); the script's exceptions propagate.
unsafe extern "C" fn native_import_script(cx: *mut JSContext, argc: u32, vp: *mut Value) -> bool {
    guarded(false, || {
        // SAFETY: a JSNative called by SpiderMonkey with valid `vp`/`argc`, in the caller's realm.
        unsafe {
            let args = CallArgs::from_vp(vp, argc);
            let url = NativeArgs { cx, args: &args }.string(0);
            if jsapi::JS_IsExceptionPending(cx) {
                return false;
            }
            match host().fetch_script(current_window(cx), &url, false) {
                Ok(fetched) => {
                    if !compile_and_run_classic(
                        cx,
                        &fetched.source,
                        &fetched.url,
                        1,
                        1,
                        fetched.muted,
                    ) {
                        return false;
                    }
                    args.rval().set(UndefinedValue());
                }
                Err(e) => {
                    rooted!(in(cx) let mut v = UndefinedValue());
                    new_string(cx, &e, v.handle_mut());
                    args.rval().set(v.get());
                }
            }
        }
        true
    })
}

/// `runScript(text, url)`: compiles and runs an inline classic script inserted by script
/// (<https://html.spec.whatwg.org/#prepare-the-script-element>: it runs at once), with the
/// document's URL. Its exceptions are reported by the caller.
unsafe extern "C" fn native_run_script(cx: *mut JSContext, argc: u32, vp: *mut Value) -> bool {
    guarded(false, || {
        // SAFETY: a JSNative called by SpiderMonkey with valid `vp`/`argc`, in the caller's realm.
        unsafe {
            let args = CallArgs::from_vp(vp, argc);
            let a = NativeArgs { cx, args: &args };
            let (text, url) = (a.string(0), a.string(1));
            if jsapi::JS_IsExceptionPending(cx) {
                return false;
            }
            let _in_script = InScript::enter();
            if !compile_and_run_classic(cx, &text, &url, 1, 1, false) {
                return false;
            }
            args.rval().set(UndefinedValue());
        }
        true
    })
}

unsafe extern "C" fn native_worker_start(cx: *mut JSContext, argc: u32, vp: *mut Value) -> bool {
    guarded(false, || {
        // SAFETY: a JSNative called by SpiderMonkey with valid `vp`/`argc`.
        unsafe {
            host_call(cx, argc, vp, |host, w, a| {
                let source = (a.num(3) == 1.0).then(|| a.string(2));
                host.worker_start(w, a.num(0) as u32, &a.string(1), source)
            })
        }
    })
}

unsafe extern "C" fn native_worker_post(cx: *mut JSContext, argc: u32, vp: *mut Value) -> bool {
    guarded(false, || {
        // SAFETY: a JSNative called by SpiderMonkey with valid `vp`/`argc`.
        unsafe {
            host_call(cx, argc, vp, |host, w, a| {
                host.worker_post(w, a.num(0) as i64, &a.string(1))
            })
        }
    })
}

unsafe extern "C" fn native_worker_terminate(
    cx: *mut JSContext,
    argc: u32,
    vp: *mut Value,
) -> bool {
    guarded(false, || {
        // SAFETY: a JSNative called by SpiderMonkey with valid `vp`/`argc`.
        unsafe {
            host_call(cx, argc, vp, |host, w, a| {
                host.worker_terminate(w, a.num(0) as i64)
            })
        }
    })
}

unsafe extern "C" fn native_worker_error(cx: *mut JSContext, argc: u32, vp: *mut Value) -> bool {
    guarded(false, || {
        // SAFETY: a JSNative called by SpiderMonkey with valid `vp`/`argc`.
        unsafe {
            host_call(cx, argc, vp, |host, w, a| {
                host.worker_error(
                    w,
                    &a.string(0),
                    &a.string(1),
                    a.num(2) as u32,
                    a.num(3) as u32,
                )
            })
        }
    })
}

/// `promiseResult(promise)`: a settled promise's value or reason, read without running any
/// page-visible code (`undefined` for anything that is not a settled promise).
unsafe extern "C" fn native_promise_result(cx: *mut JSContext, argc: u32, vp: *mut Value) -> bool {
    guarded(false, || {
        // SAFETY: a JSNative called by SpiderMonkey with valid `vp`/`argc`; the promise is rooted
        // by the call's arguments.
        unsafe {
            let args = CallArgs::from_vp(vp, argc);
            args.rval().set(UndefinedValue());
            let v = args.get(0);
            if !v.get().is_object() {
                return true;
            }
            rooted!(in(cx) let obj = v.get().to_object());
            if !jsapi::IsPromiseObject(obj.handle().into())
                || jsapi::JS::GetPromiseState(obj.handle().into())
                    == jsapi::JS::PromiseState::Pending
            {
                return true;
            }
            rooted!(in(cx) let mut result = UndefinedValue());
            mozjs::glue::JS_GetPromiseResult(obj.handle().into(), result.handle_mut().into());
            args.rval().set(result.get());
        }
        true
    })
}

/// `whenSettled(promise, onFulfilled, onRejected)`: adds reactions to an engine-made promise
/// the unforgeable way (`JS::AddPromiseReactions`): no `then`, no species constructor, nothing
/// the page could have replaced runs.
unsafe extern "C" fn native_when_settled(cx: *mut JSContext, argc: u32, vp: *mut Value) -> bool {
    guarded(false, || {
        // SAFETY: a JSNative called by SpiderMonkey with valid `vp`/`argc`; every object is
        // rooted by the call's arguments or by `rooted!`.
        unsafe {
            let args = CallArgs::from_vp(vp, argc);
            args.rval().set(UndefinedValue());
            let object = |i: u32| {
                let v = args.get(i).get();
                if v.is_object() {
                    v.to_object()
                } else {
                    ptr::null_mut()
                }
            };
            rooted!(in(cx) let promise = object(0));
            rooted!(in(cx) let on_fulfilled = object(1));
            rooted!(in(cx) let on_rejected = object(2));
            if promise.get().is_null() || !jsapi::IsPromiseObject(promise.handle().into()) {
                return true;
            }
            jsapi::JS::AddPromiseReactions(
                cx,
                promise.handle().into(),
                on_fulfilled.handle().into(),
                on_rejected.handle().into(),
            )
        }
    })
}

unsafe extern "C" fn native_noop(_cx: *mut JSContext, argc: u32, vp: *mut Value) -> bool {
    guarded(false, || {
        // SAFETY: as `native_print`.
        unsafe { CallArgs::from_vp(vp, argc).rval().set(UndefinedValue()) };
        true
    })
}

/// `host.parseURL(input, base, setter, value)`: the WHATWG URL parser (the `url` crate).
/// Returns the URL's components as JSON after applying `setter` if given, or
/// `{"error": message}` (the prelude throws the TypeError, with the page's constructor).
unsafe extern "C" fn native_parse_url(cx: *mut JSContext, argc: u32, vp: *mut Value) -> bool {
    guarded(false, || {
        // SAFETY: as `native_print`.
        unsafe {
            let args = CallArgs::from_vp(vp, argc);
            let present = |i: u32| {
                argc > i && !args.get(i).get().is_undefined() && !args.get(i).get().is_null()
            };
            let input = arg_string(cx, &args, 0).unwrap_or_default();
            let base = if present(1) {
                arg_string(cx, &args, 1)
            } else {
                None
            };
            let setter = if present(2) {
                arg_string(cx, &args, 2)
            } else {
                None
            };
            let value = if present(3) {
                arg_string(cx, &args, 3)
            } else {
                None
            };
            // An argument's ToString threw: the native throws it on.
            if jsapi::JS_IsExceptionPending(cx) {
                return false;
            }
            let json = crate::url_api::url_parts(
                &input,
                base.as_deref(),
                setter.as_deref(),
                value.as_deref(),
            )
            .unwrap_or_else(|message| serde_json::json!({ "error": message }).to_string());
            rooted!(in(cx) let mut v = UndefinedValue());
            new_string(cx, &json, v.handle_mut());
            args.rval().set(v.get());
            true
        }
    })
}
