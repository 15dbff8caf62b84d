//! The profiler agent of this thread: the GC callbacks that tell the SIGPROF walk about
//! collections, the agent's state, its installation, the interrupt callback, and the stack
//! capture through SavedFrames (slot reads, or the public accessors).

use super::*;

thread_local! {
    /// The GC slice callback that was installed before ours (called after ours).
    pub(super) static PREVIOUS_GC_SLICE: std::cell::Cell<jsapi::JS::GCSliceCallback> = const { std::cell::Cell::new(None) };
}

/// The GC slice callback of every runtime: tells the sampler's walk when a slice begins and
/// ends (it keeps the slice's JS stack for ticks inside it), then calls the callback that
/// was installed before.
pub(super) unsafe extern "C" fn on_gc_slice(
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
pub(super) unsafe extern "C" fn on_nursery_collection(
    _cx: *mut JSContext,
    progress: jsapi::JS::GCNurseryProgress,
    _reason: jsapi::JS::GCReason,
    _data: *mut c_void,
) {
    guarded((), || {
        let begin = progress == jsapi::JS::GCNurseryProgress::GC_NURSERY_COLLECTION_START;
        with_marks(if begin {
            AgentHandle::gc_began
        } else {
            AgentHandle::gc_ended
        });
        let due_in = if begin { next_sample_in() } else { None };
        // SAFETY: on the context's own thread, inside the collection.
        unsafe { sampling::gc_slice(begin, due_in) }
    })
}

/// How long until this thread's agent is next sampled (`Some(0)` when that cannot be read
/// now: a collection that starts while the agent is being used walks, to be safe).
pub(super) fn next_sample_in() -> Option<jsprof_profiler::Nanos> {
    AGENT.with(|a| match a.try_borrow() {
        Ok(a) => a.as_ref().and_then(|a| a.handle.next_sample_in()),
        Err(_) => Some(0),
    })
}

thread_local! {
    /// This thread's agent, for the states sample markers read (collections, waits): apart
    /// from [`AGENT`], which a capture holds borrowed while it may collect.
    pub(super) static MARKS: RefCell<Option<AgentHandle>> = const { RefCell::new(None) };
}

/// Runs `f` on this thread's agent, if it has one.
fn with_marks(f: impl FnOnce(&AgentHandle)) {
    MARKS.with(|m| {
        if let Some(handle) = m.try_borrow().ok().as_ref().and_then(|m| m.as_ref()) {
            f(handle);
        }
    });
}

/// Runs `wait` (a blocking wait for the next task) with this thread's agent marked as
/// waiting: samples taken meanwhile have no marker, where work outside script has `other`.
pub(crate) fn waiting<R>(wait: impl FnOnce() -> R) -> R {
    with_marks(|h| h.waiting(true));
    let out = wait();
    with_marks(|h| h.waiting(false));
    out
}

/// A full, non-incremental collection of this thread's runtime (`JsprofTestBindings.gc()`,
/// for tests of the `gc` marker).
pub(crate) fn collect_garbage() {
    if let Some(cx) = Runtime::get() {
        // SAFETY: this thread's own context, from a native or a task, where a GC may run
        // (as the SpiderMonkey shell's `gc()` does).
        unsafe { jsapi::JS_GC(cx.as_ptr(), jsapi::JS::GCReason::API) };
    }
}

thread_local! {
    /// Set by [`Js::terminate_on_interrupt`]: the next interrupt stops the running script.
    pub(super) static TERMINATE: RefCell<Option<Arc<std::sync::atomic::AtomicBool>>> = const { RefCell::new(None) };
    /// The profiler agent of this thread's event loop, once a profiler wants samples.
    pub(super) static AGENT: RefCell<Option<Agent>> = const { RefCell::new(None) };
}

/// What the interrupt callback needs to take a sample.
pub(super) struct Agent {
    pub(super) handle: AgentHandle,
    pub(super) realm: RealmId,
    pub(super) registry: Arc<ScriptRegistry>,
    pub(super) max_frames: u32,
    /// SpiderMonkey source id -> (script, hidden, realm of the window that compiled it):
    /// one registry lookup per source.
    pub(super) sources: FxHashMap<u32, (Option<jsprof_profiler::ScriptId>, bool, RealmId)>,
    /// The SavedFrame class, once seen (checked by name the first time).
    pub(super) saved_frame_class: *const jsapi::JSClass,
    /// The SIGPROF walk, if this agent samples that way.
    pub(super) signal: Option<Arc<sampling::SignalSampler>>,
    /// Read SavedFrames' reserved slots (the fast path), or only the public accessors.
    pub(super) read_slots: bool,
    pub(super) stats: SamplingStats,
}

impl Agent {
    /// The raw frame of a SavedFrame's source id, line and tagged column. The script comes
    /// from the registry by source id (cached per id): a source the host never registered
    /// (eval code, the prelude, self-hosted builtins) is a hidden frame without a script.
    /// The frame's realm is the realm of the window that compiled its script (the fast path
    /// then reads it from the frame's principals, which also covers unregistered sources).
    pub(super) fn raw_frame(&mut self, source_id: u32, line: u32, column: u32) -> RawFrame {
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
    register: impl FnOnce(Option<sampling::Walker>) -> AgentHandle,
) -> AgentHandle {
    let AgentConfig {
        realm,
        max_frames,
        signal_sampling,
        read_slots,
    } = config;
    let signal = match (signal_sampling, Runtime::get()) {
        (true, Some(cx)) => {
            // SAFETY: the context is this thread's own; `Js::drop` closes the sampler before
            // the runtime goes.
            Some(unsafe { sampling::SignalSampler::install(cx.as_ptr(), registry.clone(), realm) })
        }
        _ => None,
    };
    let handle = register(signal.clone().map(sampling::Walker));
    MARKS.with(|m| *m.borrow_mut() = Some(handle.clone()));
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
pub(super) unsafe extern "C" fn on_interrupt(cx: *mut JSContext) -> bool {
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
pub(super) unsafe fn capture_current_stack(
    cx: *mut JSContext,
    max_frames: u32,
    out: mozjs::rust::MutableHandleObject,
) -> bool {
    let mut capture = std::mem::MaybeUninit::<jsapi::JS::StackCapture>::uninit();
    // SAFETY: `capture` is writable storage for one StackCapture, which this initialises.
    unsafe { jsapi::JS_StackCapture_MaxFrames(max_frames, capture.as_mut_ptr()) };
    rooted!(in(cx) let no_start = ptr::null_mut::<JSObject>());
    // SAFETY: per the contract, `cx` is this thread's context where it may GC; the capture
    // options were initialised above; `out` and `no_start` are rooted locations.
    let captured = unsafe {
        jsapi::JS::CaptureCurrentStack(
            cx,
            out.into(),
            capture.as_mut_ptr(),
            no_start.handle().into(),
        )
    };
    if !captured {
        // SAFETY: `cx` is this thread's live context.
        unsafe { jsapi::JS_ClearPendingException(cx) };
        return false;
    }
    true
}

/// Reserved slot `index` of a SavedFrame.
///
/// # Safety
/// `obj` must be a live SavedFrame (class-checked by the caller).
pub(super) unsafe fn saved_frame_slot(obj: *mut JSObject, index: u32) -> Value {
    let mut v = UndefinedValue();
    // SAFETY: per the contract; `index` is below the class's slot count (SLOT_* constants).
    unsafe { mozjs::glue::JS_GetReservedSlot(obj, index, &mut v) };
    v
}

/// Whether `obj` is a SavedFrame (by class name; `frames_from_slots` caches the class).
///
/// # Safety
/// `obj` must be null or a live object.
pub(super) unsafe fn is_saved_frame(obj: *mut JSObject) -> bool {
    if obj.is_null() {
        return false;
    }
    // SAFETY: per the contract, `obj` is a live (non-null) object.
    let class = unsafe { mozjs::rust::get_object_class(obj) };
    if class.is_null() {
        return false;
    }
    // SAFETY: `class` is the live object's non-null, static JSClass.
    let name = unsafe { (*class).name };
    // SAFETY: a class's name is a static, NUL-terminated C string.
    let name = unsafe { CStr::from_ptr(name) };
    name == c"SavedFrame"
}

/// The window whose realm a SavedFrame was captured in, and the muted-errors flag of its
/// script: the principals slot holds the realm's principals with that flag in bit 0.
///
/// # Safety
/// `obj` must be a live SavedFrame.
pub(super) unsafe fn saved_frame_principals(obj: *mut JSObject) -> (Option<usize>, bool) {
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
pub(super) unsafe fn saved_frame_window(obj: *mut JSObject) -> Option<usize> {
    // SAFETY: per the contract.
    unsafe { saved_frame_principals(obj) }.0
}

/// Captures the current stack as raw frames, outermost first: per frame its script (by
/// SpiderMonkey source id, cached) and current line/column. Self-hosted frames are excluded.
///
/// # Safety
/// `cx` must be this thread's context, at a point where it may GC.
pub(super) unsafe fn capture_stack(cx: *mut JSContext, agent: &mut Agent) -> Vec<RawFrame> {
    use jsapi::JS::{SavedFrameResult, SavedFrameSelfHosted::Exclude};
    let mut frames = Vec::new();
    // Every frame object is rooted while accessors run on it.
    {
        rooted!(in(cx) let mut stack = ptr::null_mut::<JSObject>());
        // SAFETY: per the contract, `cx` is this thread's context where it may GC; `stack`
        // is rooted.
        if !unsafe { capture_current_stack(cx, agent.max_frames, stack.handle_mut()) } {
            return frames;
        }
        if agent.read_slots {
            // SAFETY: `stack` is the rooted result of `CaptureCurrentStack` on this thread.
            if let Some(mut fast) = unsafe { frames_from_slots(stack.get(), agent) } {
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
            // `h` is a rooted handle to a SavedFrame (from the capture or a parent accessor);
            // null principals means "the system", which sees every frame.
            // SAFETY: `cx` is this thread's context; `h` is a rooted SavedFrame; `source_id`
            // is a local out-parameter.
            let source_ok = unsafe {
                jsapi::GetSavedFrameSourceId(cx, ptr::null_mut(), h.into(), &mut source_id, Exclude)
            } == SavedFrameResult::Ok;
            // SAFETY: `cx` is this thread's context; `h` is a rooted SavedFrame; `line` is a
            // local out-parameter.
            let line_ok = source_ok
                && unsafe {
                    jsapi::GetSavedFrameLine(cx, ptr::null_mut(), h.into(), &mut line, Exclude)
                } == SavedFrameResult::Ok;
            // SAFETY: `cx` is this thread's context; `h` is a rooted SavedFrame; `column` is a
            // local out-parameter.
            let column_ok = line_ok
                && unsafe {
                    jsapi::GetSavedFrameColumn(cx, ptr::null_mut(), h.into(), &mut column, Exclude)
                } == SavedFrameResult::Ok;
            if !column_ok {
                break;
            }
            frames.push(agent.raw_frame(source_id, line, column.value_));
            // SAFETY: `cx` is this thread's context; `h` is a rooted SavedFrame and `parent`
            // a rooted location; null principals see every frame.
            let parent_result = unsafe {
                jsapi::GetSavedFrameParent(
                    cx,
                    ptr::null_mut(),
                    h.into(),
                    parent.handle_mut().into(),
                    Exclude,
                )
            };
            if parent_result != SavedFrameResult::Ok {
                break;
            }
            frame.set(parent.get());
        }
    }
    frames.reverse();
    frames
}

/// The SavedFrame reserved slots (js/src/vm/SavedFrame.h, SpiderMonkey 153).
pub(super) const SLOT_SOURCEID: u32 = 1;
pub(super) const SLOT_LINE: u32 = 2;
pub(super) const SLOT_COLUMN: u32 = 3;
pub(super) const SLOT_ASYNCCAUSE: u32 = 5;
pub(super) const SLOT_PARENT: u32 = 6;
pub(super) const SLOT_PRINCIPALS: u32 = 7;

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
pub(super) unsafe fn frames_from_slots(
    top: *mut JSObject,
    agent: &mut Agent,
) -> Option<Vec<RawFrame>> {
    let mut out = Vec::with_capacity(32);
    let mut obj = top;
    let mut first = true;
    // As the function's contract: every `obj` below is a live frame reachable from `top`,
    // and the class check comes before any slot read.
    {
        // SAFETY: only called on `obj` after its class check in this loop (a live
        // SavedFrame), with `index` one of the SLOT_* constants of its layout.
        let slot = |obj: *mut JSObject, index: u32| unsafe { saved_frame_slot(obj, index) };
        while !obj.is_null() {
            // SAFETY: `obj` is a live, non-null object reachable from `top`.
            let class = unsafe { mozjs::rust::get_object_class(obj) };
            if class != agent.saved_frame_class {
                // SAFETY: `obj` is a live, non-null object.
                if !unsafe { is_saved_frame(obj) } {
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
            // SAFETY: `obj` is a live SavedFrame (class-checked above).
            let (window, muted) = unsafe { saved_frame_principals(obj) };
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
