//! The profiler agent of this thread's runtime: the runtime's callbacks (GC slices and
//! nursery collections for the walk and the `gc` marker, the interrupt callback), the agent's
//! state, its installation and removal, the event loop's waits, and what sampling cost.
//!
//! One SpiderMonkey context per thread, so the agent's state is thread-local: every call
//! here acts on the calling thread's runtime (mozjs's `Runtime::get`).

use std::cell::{Cell, RefCell};
use std::ffi::c_void;
use std::ptr;
use std::sync::Arc;
use std::time::Duration;

use jsprof_profiler::{AgentHandle, ProfilerGroup, RealmId, RenderingPhase};
use jsprof_symbolizer::ScriptRegistry;
use mozjs::jsapi::{self, JSContext};
use mozjs::rust::{Runtime, ThreadSafeJSContext};

use crate::capture::capture_stack;
use crate::frames::{FrameReader, RealmOfPrincipals};
use crate::guarded;
use crate::sampling::{self, SignalSampler, Walker};

/// Why the agent could not be set up.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AgentError {
    /// The calling thread has no mozjs `Runtime` (`Runtime::get` is `None`).
    #[error("no SpiderMonkey runtime on this thread")]
    NoRuntime,
    /// SpiderMonkey could not add the interrupt callback (out of memory).
    #[error("SpiderMonkey could not add the agent's interrupt callback")]
    InterruptCallback,
}

thread_local! {
    /// [`InScript`](crate::InScript) guards alive on this thread, with an agent or without:
    /// an agent installed inside script (a lazy policy's first `Profiler`, from the script
    /// that constructs it) is entered once per live guard ([`install_agent`]), so the rest of
    /// that script is script to it, not idle; each guard's drop leaves it.
    pub(crate) static GUARD_DEPTH: Cell<u32> = const { Cell::new(0) };
    /// Whether [`prepare_runtime`] ran for this thread's runtime (until [`release_runtime`]).
    static PREPARED: Cell<bool> = const { Cell::new(false) };
    /// The GC slice callback that was installed before ours (called after ours).
    static PREVIOUS_GC_SLICE: Cell<jsapi::JS::GCSliceCallback> = const { Cell::new(None) };
    /// The embedder's observer of this thread's collections ([`observe_collections`]).
    static GC_OBSERVER: Cell<Option<fn(Collection)>> = const { Cell::new(None) };
    /// This thread's agent, for the states sample markers read (collections, waits): apart
    /// from [`AGENT`], which a capture holds borrowed while it may collect.
    static MARKS: RefCell<Option<AgentHandle>> = const { RefCell::new(None) };
    /// The profiler agent of this thread, once sampling support is installed.
    pub(crate) static AGENT: RefCell<Option<Agent>> = const { RefCell::new(None) };
}

/// The context of this thread's runtime.
fn this_context() -> Result<*mut JSContext, AgentError> {
    Runtime::get()
        .map(|cx| cx.as_ptr())
        .ok_or(AgentError::NoRuntime)
}

/// **Runtime creation** (a script thread's, a worker's, a worklet's): call right after the
/// runtime is made, before any script runs. Adds the agent's callbacks to this thread's
/// runtime, beside the embedder's:
///
/// - an interrupt callback (`JS_AddInterruptCallback`: SpiderMonkey calls every callback in
///   its list, and stops the script if any returns false, so the embedder's own, such as a
///   watchdog's, keeps working; the agent's always returns true unless it panicked). The
///   embedder's callbacks therefore also run at every sample the interrupt serves (up to
///   one a millisecond at a 1 ms base): they must be cheap;
/// - a GC slice callback, which calls the one installed before it, and a nursery collection
///   callback (a list too);
/// - Baseline Interpreter warm-up 0: every script starts in the Baseline Interpreter, whose
///   frames the walk sees even when sampling starts later (frames the C++ interpreter
///   entered before the profiling stack existed would stay invisible).
///
/// They do nothing until [`install_agent`]. Once per runtime; again after
/// [`release_runtime`]. [`install_agent`] calls it if the embedder did not.
pub fn prepare_runtime() -> Result<(), AgentError> {
    if PREPARED.with(Cell::get) {
        return Ok(());
    }
    let cx = this_context()?;
    // SAFETY: `cx` is this thread's live context; `on_interrupt` has the signature
    // SpiderMonkey expects of an interrupt callback.
    if !unsafe { jsapi::JS_AddInterruptCallback(cx, Some(on_interrupt)) } {
        return Err(AgentError::InterruptCallback);
    }
    // SAFETY: `cx` is this thread's live context; `on_gc_slice` is an `extern "C"` function
    // with the signature SpiderMonkey expects.
    let previous = unsafe { jsapi::JS::SetGCSliceCallback(cx, Some(on_gc_slice)) };
    PREVIOUS_GC_SLICE.with(|p| p.set(previous));
    // SAFETY: `cx` is this thread's live context; `on_nursery_collection` has the expected
    // signature and ignores its (null) data pointer.
    unsafe {
        jsapi::JS::AddGCNurseryCollectionCallback(cx, Some(on_nursery_collection), ptr::null_mut())
    };
    // SAFETY: `cx` is this thread's live context; the option and value are plain integers.
    unsafe {
        jsapi::JS_SetGlobalJitCompilerOption(
            cx,
            jsapi::JSJitCompilerOption::JSJITCOMPILER_BASELINE_INTERPRETER_WARMUP_TRIGGER,
            0,
        )
    };
    PREPARED.with(|p| p.set(true));
    Ok(())
}

/// **Shutdown** of a runtime: call on its thread before the runtime is dropped (after its
/// last script). Uninstalls the agent if there is one ([`uninstall_agent`]) and forgets the
/// runtime, so that a later runtime of this thread is prepared anew. The callbacks stay in
/// the dying runtime, where they do nothing.
pub fn release_runtime() {
    uninstall_agent();
    if PREPARED.with(|p| p.replace(false)) {
        PREVIOUS_GC_SLICE.with(|p| p.set(None));
    }
}

/// How an agent samples.
#[derive(Debug, Clone, Copy)]
pub struct AgentConfig {
    /// The realm given to frames whose source the registry does not know (they are hidden
    /// anyway): the realm of the global that installs the agent.
    pub realm: RealmId,
    /// The deepest stack the fallback capture takes (jsprof: `js.stack_capture_max_frames`).
    pub max_frames: u32,
    /// Take each sample at its tick by the walk, interrupt first and SIGPROF after 50 µs
    /// (jsprof: `profiler.signal_sampling`); otherwise the fallback capture in the interrupt
    /// callback only, which answers when JS code next checks for interrupts.
    pub signal_sampling: bool,
    /// Let the fallback capture read SavedFrames' reserved slots (false: the public
    /// accessors only; jsprof: `js.stack_capture_slots`, for tests).
    pub read_slots: bool,
    /// The realm of a frame's principals, for the fallback capture (a SavedFrame records
    /// its realm's principals); `None`: frames take the realm their script was registered
    /// with.
    pub realm_of_principals: Option<RealmOfPrincipals>,
}

impl Default for AgentConfig {
    fn default() -> Self {
        AgentConfig {
            realm: RealmId(0),
            max_frames: 128,
            signal_sampling: true,
            read_slots: true,
            realm_of_principals: None,
        }
    }
}

/// What the agent's interrupt callback needs to take a sample.
pub(crate) struct Agent {
    pub(crate) handle: AgentHandle,
    /// What the fallback capture reads frames with.
    frames: FrameReader,
    /// The walk, if this agent samples that way.
    signal: Option<Arc<SignalSampler>>,
    pub(crate) stats: SamplingStats,
}

/// **Sampling support** (when a document's policy allows profiling: eagerly, or with its
/// first `Profiler`): makes this thread's runtime an agent of `group` and returns its handle,
/// which sessions are started with and [`InScript`](crate::InScript) marks. Call on the
/// runtime's thread, outside JS or inside it (a `Profiler` constructor): the guards alive
/// then count for the new agent. A second call returns the installed agent's handle.
///
/// Frames are named through `registry` (register every script as it is compiled:
/// [`ScriptRegistry::register`]). `interrupter` is the runtime's
/// (`Runtime::thread_safe_js_context`): the group asks for samples the walk cannot take
/// through it, and it stops working when the runtime goes.
///
/// With `config.signal_sampling` the walk (`shim.cpp`) is installed: the C++ agent of the
/// context, its profiling stack and the process's SIGPROF handler. Nothing is walked until
/// [`enable_sampling`].
pub fn install_agent(
    interrupter: ThreadSafeJSContext,
    group: &ProfilerGroup,
    registry: Arc<ScriptRegistry>,
    config: AgentConfig,
) -> Result<AgentHandle, AgentError> {
    if let Some(handle) = AGENT.with(|a| a.borrow().as_ref().map(|a| a.handle.clone())) {
        return Ok(handle);
    }
    prepare_runtime()?;
    let cx = this_context()?;
    let signal = config.signal_sampling.then(|| {
        // SAFETY: `cx` is this thread's live context, outside any walk; the sampler is
        // closed on this thread by `uninstall_agent` before the runtime goes (the
        // embedder's shutdown call, `release_runtime`).
        unsafe { SignalSampler::install(cx, registry.clone(), config.realm) }
    });
    let requester = move || interrupter.request_interrupt_callback();
    let handle = match &signal {
        Some(signal) => group.register_sampled_agent(requester, Walker(signal.clone())),
        None => group.register_agent(requester),
    };
    MARKS.with(|m| *m.borrow_mut() = Some(handle.clone()));
    // Installed inside script (a lazy policy's first `Profiler`): the script running now,
    // and every entry it nests in, is script to the new agent until its guard drops.
    for _ in 0..GUARD_DEPTH.with(Cell::get) {
        handle.enter();
    }
    AGENT.with(|a| {
        *a.borrow_mut() = Some(Agent {
            handle: handle.clone(),
            frames: FrameReader::new(
                config.realm,
                registry,
                config.max_frames,
                config.read_slots,
                config.realm_of_principals,
            ),
            signal,
            stats: SamplingStats {
                by_depth: vec![(0, 0); 65],
                ..Default::default()
            },
        })
    });
    Ok(handle)
}

/// Removes this thread's agent: the walk's C++ agent is freed (no walk can be in progress
/// once this returns, and none starts after), and the interrupt callback, the collection
/// callbacks and [`InScript`](crate::InScript) no longer see an agent. Sessions of its
/// handle take no more stacks. [`release_runtime`] calls it.
pub fn uninstall_agent() {
    if let Some(agent) = AGENT.with(|a| a.borrow_mut().take()) {
        if let Some(signal) = &agent.signal {
            signal.close();
        }
    }
    MARKS.with(|m| m.borrow_mut().take());
}

/// **A session starts** (on the agent's thread, e.g. in the `Profiler` constructor): turns
/// SpiderMonkey's profiling instrumentation on, once. JIT code is discarded and recompiled
/// with its hooks, which slows JIT code by a few percent, so it waits for the first session
/// whatever the Document-Policy mode.
pub fn enable_sampling() {
    AGENT.with(|a| {
        if let Some(signal) = a.borrow().as_ref().and_then(|a| a.signal.clone()) {
            signal.enable();
        }
    });
}

/// **Between tasks**: runs `wait` (the event loop's blocking wait for its next task) with
/// this thread's agent marked as waiting: samples taken meanwhile have no marker, where
/// native work outside script (a task's Rust part, parsing) has `other`.
pub fn waiting<R>(wait: impl FnOnce() -> R) -> R {
    with_marks(|h| h.waiting(true));
    let out = wait();
    with_marks(|h| h.waiting(false));
    out
}

/// **Rendering**: marks this thread's agent as in a phase of the host's rendering pipeline
/// (style, layout, paint) for the life of the guard; samples taken meanwhile carry the
/// phase's marker, also when script forced the phase, and a collection inside it stays
/// `gc` (decision 0064). [`Rendering::switch`] moves to the next phase; the drop restores
/// the phase the thread was in before, so phases nest (a layout that restyles). Without an
/// agent it does nothing (one thread-local read).
#[derive(Debug)]
#[must_use = "the thread is in the phase only while the guard lives"]
pub struct Rendering {
    previous: Option<RenderingPhase>,
}

impl Rendering {
    /// Enters `phase` (see [`Rendering`]).
    pub fn enter(phase: RenderingPhase) -> Self {
        let mut previous = None;
        with_marks(|h| previous = h.set_rendering(Some(phase)));
        Rendering { previous }
    }

    /// Moves from this guard's phase to `phase`.
    pub fn switch(&self, phase: RenderingPhase) {
        with_marks(|h| {
            h.set_rendering(Some(phase));
        });
    }
}

impl Drop for Rendering {
    fn drop(&mut self) {
        with_marks(|h| {
            h.set_rendering(self.previous);
        });
    }
}

/// A full, non-incremental collection of this thread's runtime (what the SpiderMonkey
/// shell's `gc()` does; for tests of the `gc` marker). Call from a native or a task.
pub fn collect_garbage() {
    if let Ok(cx) = this_context() {
        // SAFETY: this thread's own context, from a native or a task, where a GC may run.
        unsafe { jsapi::JS_GC(cx, jsapi::JS::GCReason::API) };
    }
}

/// Runs `f` on this thread's agent, if it has one.
fn with_marks(f: impl FnOnce(&AgentHandle)) {
    MARKS.with(|m| {
        if let Some(handle) = m.try_borrow().ok().as_ref().and_then(|m| m.as_ref()) {
            f(handle);
        }
    });
}

/// A collection's slice (major) or a nursery collection (minor), beginning or ending, as
/// the GC callbacks the agent installs see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Collection {
    pub begin: bool,
    pub major: bool,
    /// SpiderMonkey's name for why it collects (`ExplainGCReason`), at a begin.
    pub reason: &'static str,
}

/// Has `observer` called at each begin and end of a collection on this thread (`None`: no
/// more): a major collection's slices and nursery collections. Each begin is followed by
/// its end before the next begin of the same kind; a nursery collection may run inside a
/// major slice.
pub fn observe_collections(observer: Option<fn(Collection)>) {
    GC_OBSERVER.with(|o| o.set(observer));
}

/// SpiderMonkey's name for `reason`.
fn gc_reason(reason: jsapi::JS::GCReason) -> &'static str {
    // SAFETY: a pure lookup of a statically allocated C string by value.
    let text = unsafe { jsapi::JS::ExplainGCReason(reason) };
    if text.is_null() {
        return "";
    }
    // SAFETY: non-null, and a NUL-terminated string with static storage, as documented.
    unsafe { std::ffi::CStr::from_ptr(text) }
        .to_str()
        .unwrap_or("")
}

/// Tells the embedder's observer, if any, of a collection.
fn tell_observer(begin: bool, major: bool, reason: impl FnOnce() -> &'static str) {
    if let Some(observer) = GC_OBSERVER.with(Cell::get) {
        let reason = if begin { reason() } else { "" };
        observer(Collection {
            begin,
            major,
            reason,
        });
    }
}

/// The GC slice callback of the runtime: tells the sampler's walk when a slice begins and
/// ends (it keeps the slice's JS stack for ticks inside it) and the markers' `gc` state,
/// then calls the callback that was installed before.
unsafe extern "C" fn on_gc_slice(
    cx: *mut JSContext,
    progress: jsapi::JS::GCProgress,
    desc: *const jsapi::JS::GCDescription,
) {
    guarded((), || {
        use jsapi::JS::GCProgress::{GC_CYCLE_END, GC_SLICE_BEGIN, GC_SLICE_END};
        // The markers' "gc" state, then the walk (both nest as the shim's collections do:
        // a cycle's end after its last slice's end finds nothing left to end).
        match progress {
            GC_SLICE_BEGIN => with_marks(AgentHandle::gc_began),
            GC_SLICE_END | GC_CYCLE_END => with_marks(AgentHandle::gc_ended),
            _ => {}
        }
        match progress {
            GC_SLICE_BEGIN => tell_observer(true, true, || {
                if desc.is_null() {
                    ""
                } else {
                    // SAFETY: SpiderMonkey passes a description valid for the callback.
                    gc_reason(unsafe { (*desc).reason_ })
                }
            }),
            GC_SLICE_END => tell_observer(false, true, || ""),
            _ => {}
        }
        match progress {
            // SAFETY: on the context's own thread, inside the GC slice; the walk reads the
            // JIT stack, which a slice does not change.
            GC_SLICE_BEGIN => unsafe { sampling::gc_slice(true, true) },
            // SAFETY: as above.
            GC_SLICE_END | GC_CYCLE_END => unsafe { sampling::gc_slice(false, true) },
            _ => {}
        }
        if let Some(previous) = PREVIOUS_GC_SLICE.with(Cell::get) {
            // SAFETY: the callback SpiderMonkey had before ours, called as it would be.
            unsafe { previous(cx, progress, desc) };
        }
    })
}

/// The nursery collection callback of the runtime: as [`on_gc_slice`] for minor GCs.
unsafe extern "C" fn on_nursery_collection(
    _cx: *mut JSContext,
    progress: jsapi::JS::GCNurseryProgress,
    reason: jsapi::JS::GCReason,
    _data: *mut c_void,
) {
    guarded((), || {
        let begin = progress == jsapi::JS::GCNurseryProgress::GC_NURSERY_COLLECTION_START;
        tell_observer(begin, false, || gc_reason(reason));
        with_marks(if begin {
            AgentHandle::gc_began
        } else {
            AgentHandle::gc_ended
        });
        // SAFETY: on the context's own thread, inside the collection.
        unsafe { sampling::gc_slice(begin, false) }
    })
}

/// The agent's interrupt callback: walks a sample the sampler asked for where JS code
/// stopped, and answers a request of the fallback path with a capture. Always true (go on):
/// stopping a script is the embedder's callbacks' business. A panic (a bug) is reported to
/// the embedder's handler and stops the script.
unsafe extern "C" fn on_interrupt(cx: *mut JSContext) -> bool {
    guarded(false, || {
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
            let stack = unsafe { capture_stack(cx, &mut agent.frames) };
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

/// What sampling cost the agent's thread (`--profile-stats`): the walks (in the interrupt
/// callback, or by SIGPROF when the interrupt was not served in time), the collections'
/// walks, and the fallback captures, in total and by captured stack depth.
#[derive(Debug, Clone, Default)]
pub struct SamplingStats {
    /// Stacks taken by the walk, and those of them that needed a signal.
    pub walks: u64,
    pub signalled: u64,
    /// What one signal costs the agent's thread beyond its handler (calibrated).
    pub signal_cost: Duration,
    /// The agent's time walking.
    pub walk_time: Duration,
    /// Ticks that came inside a collection, walked when it ended (their walks are in
    /// `walks` and `walk_time`).
    pub gc_deferred: u64,
    /// Mean handler time of walks of exactly 5 and 20 frames, if any.
    pub walk_at_depth5: Option<Duration>,
    pub walk_at_depth20: Option<Duration>,
    /// Stacks captured in the interrupt callback (the fallback path).
    pub samples: u64,
    /// Captures that could not read SavedFrame slots directly and used the accessors.
    pub fallbacks: u64,
    /// Time in the interrupt callback's captures (request check, capture, hand-over).
    pub total: Duration,
    /// `(count, total ns)` per stack depth (index = frames captured, the last one is "more").
    pub by_depth: Vec<(u64, u64)>,
}

impl SamplingStats {
    /// All the agent's thread spent on sampling: interrupt captures, walks, and the kernel's
    /// part of the signals.
    pub fn agent_time(&self) -> Duration {
        self.total + self.walk_time + self.signal_cost * self.signalled as u32
    }

    /// Mean cost of a capture with exactly `depth` frames, if any was taken.
    pub fn mean_at_depth(&self, depth: usize) -> Option<Duration> {
        let (n, ns) = *self.by_depth.get(depth)?;
        (n > 0).then(|| Duration::from_nanos(ns / n))
    }
}

/// **Shutdown / reporting**: what sampling has cost this thread's agent so far (`None`
/// without one). Call before [`release_runtime`].
pub fn sampling_stats() -> Option<SamplingStats> {
    AGENT.with(|a| {
        a.borrow().as_ref().map(|a| {
            let cost = |depth| {
                a.signal
                    .as_ref()
                    .map_or_else(Default::default, |s| s.cost(depth))
            };
            let (walk_time, walks) = cost(None);
            let mean = |depth| {
                let (t, n): (Duration, u64) = cost(Some(depth));
                (n > 0).then(|| t / n as u32)
            };
            let (signalled, signal_cost) = a
                .signal
                .as_ref()
                .map_or_else(Default::default, |s| s.signalled());
            let gc_deferred = a.signal.as_ref().map_or(0, |s| s.gc_deferred());
            SamplingStats {
                walks,
                gc_deferred,
                signalled,
                signal_cost,
                walk_time,
                walk_at_depth5: mean(5),
                walk_at_depth20: mean(20),
                fallbacks: a.frames.fallbacks,
                ..a.stats.clone()
            }
        })
    })
}
