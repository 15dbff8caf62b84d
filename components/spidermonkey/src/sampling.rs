//! Taking a sample at the tick: the Rust side of the SIGPROF stack walk in `shim.cpp`.
//!
//! When sampling support starts on an agent's thread, [`SignalSampler::install`] creates the
//! C++ agent of its context (a profiling stack, the process's SIGPROF handler) and turns
//! SpiderMonkey's profiling instrumentation on. The sampler thread then calls
//! [`SignalSampler::sample`] at each tick: the agent's thread is signalled, walks its own JS
//! frames in the handler (JIT frames, interpreter frames, whatever native call it is in),
//! and the sampler turns the walk's (source id, definition position) pairs into raw frames
//! with the script registry — after the agent has resumed, since the registry takes a lock.
//!
//! The C++ agent lives as long as the runtime: [`SignalSampler::close`] (on the agent's
//! thread, from `uninstall_agent` before the runtime goes) takes the same lock a sample
//! holds, so no sample can be in progress while it is freed, and none starts after.

use std::ffi::c_void;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use jsprof_profiler::{
    FrameSite, Nanos, PollStep, RawFrame, RawStack, RealmId, Sampled, StackSampler,
};
use mozjs::jsapi::JSContext;

use jsprof_symbolizer::{ScriptRegistry, SourceId};

/// A frame as the walk reports it (`jsprof_frame` in shim.cpp).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
struct WalkFrame {
    source_id: u32,
    line: u32,
    column: u32,
    flags: u32,
}

const FRAME_DEFINITION: u32 = 1;
const FRAME_TOP_LEVEL: u32 = 2;
const SAMPLE_OK: i32 = 0;
const SAMPLE_PENDING: i32 = 4;
const SAMPLE_DEFERRED: i32 = 5;
const POLL_LOOK: i32 = 0;
const POLL_NUDGE: i32 = 1;
const POLL_ABANDON: i32 = 2;

extern "C" {
    fn jsprof_agent_new(cx: *mut JSContext) -> *mut c_void;
    fn jsprof_agent_enable(agent: *mut c_void);
    fn jsprof_agent_begin(
        agent: *mut c_void,
        frames: *mut *const WalkFrame,
        count: *mut u32,
        truncated: *mut bool,
    ) -> i32;
    fn jsprof_agent_poll(
        agent: *mut c_void,
        action: i32,
        frames: *mut *const WalkFrame,
        count: *mut u32,
        truncated: *mut bool,
    ) -> i32;
    fn jsprof_agent_cost(agent: *const c_void, depth: u32, handler_ns: *mut u64, walks: *mut u64);
    fn jsprof_agent_free(agent: *mut c_void);
    fn jsprof_agent_cpu_ns(agent: *const c_void) -> u64;
    fn jsprof_agent_gc_slice(begin: bool, major: bool);
    fn jsprof_agent_gc_deferred(agent: *const c_void) -> u64;
    fn jsprof_agent_on_interrupt();
    fn jsprof_agent_signalled(agent: *const c_void, signal_ns: *mut u64) -> u64;
    fn jsprof_sampler_thread_setup(slice_ns: u64) -> i32;
}

/// The scheduler time slice the sampler thread asks for: the shortest Linux allows.
const SAMPLER_SLICE_NS: u64 = 100_000;

/// **Process start**: give it to the process's `ProfilerGroup` as
/// `GroupConfig::on_sampler_thread`. Run on the sampler thread as it starts, it asks the
/// scheduler for a short time slice, so that a timer wake-up preempts a busy page thread
/// instead of waiting behind it (see `jsprof_sampler_thread_setup`: tick lateness p99 at a
/// 1 ms base went from 105–680 µs to 42–150 µs). Best effort: a kernel that does not know
/// per-task slices keeps the default.
pub fn setup_sampler_thread() {
    // SAFETY: sched_setattr on the calling thread, with a struct the shim owns; it touches
    // no memory of ours and cannot fail in a way that matters beyond its return value.
    let _ = unsafe { jsprof_sampler_thread_setup(SAMPLER_SLICE_NS) };
}

/// The interrupt callback's part: walks a pending sample request where JS code stopped.
///
/// # Safety
/// On a context's thread, from its interrupt callback.
pub(crate) unsafe fn on_interrupt() {
    // SAFETY: per the contract; without an agent on this thread it does nothing.
    unsafe { jsprof_agent_on_interrupt() }
}

/// A collection of this thread's context (a major GC slice, or a nursery collection when
/// `major` is false) begins or ends (see `jsprof_agent_gc_slice`): a tick inside it is
/// walked at its end.
///
/// # Safety
/// On the thread of a context, from its GC callbacks.
pub(crate) unsafe fn gc_slice(begin: bool, major: bool) {
    // SAFETY: per the contract; without an agent on this thread it does nothing.
    unsafe { jsprof_agent_gc_slice(begin, major) }
}

/// The C++ agent, while its runtime lives.
struct AgentPtr(*mut c_void);

// SAFETY: the pointer is only used under `SignalSampler::agent`'s lock: by the sampler
// thread to request a walk (which the C++ side makes safe across threads: an atomic state,
// a signal, a futex) and by the owning thread to read costs and to free it.
unsafe impl Send for AgentPtr {}

/// The profiler core's view of an agent's [`SignalSampler`].
pub(crate) struct Walker(pub(crate) Arc<SignalSampler>);

impl StackSampler for Walker {
    fn sample(&self) -> Sampled {
        self.0.sample()
    }
    fn poll(&self, step: PollStep) -> Sampled {
        self.0.poll(step)
    }
    fn cpu_time(&self) -> Option<Nanos> {
        self.0.cpu_time()
    }
}

/// The signal-walk sampler of one agent (a window's event loop or a worker).
pub(crate) struct SignalSampler {
    agent: Mutex<Option<AgentPtr>>,
    registry: Arc<ScriptRegistry>,
    /// The realm of frames whose script the registry does not know (they are hidden).
    default_realm: RealmId,
}

impl std::fmt::Debug for SignalSampler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SignalSampler").finish_non_exhaustive()
    }
}

impl SignalSampler {
    /// Creates the agent of `cx` (this thread's context, outside any walk). Walks find
    /// nothing until [`SignalSampler::enable`].
    ///
    /// # Safety
    /// `cx` must be this thread's live context; the sampler must be closed on this thread
    /// before the context is destroyed.
    pub(crate) unsafe fn install(
        cx: *mut JSContext,
        registry: Arc<ScriptRegistry>,
        default_realm: RealmId,
    ) -> Arc<SignalSampler> {
        // SAFETY: per the contract; the agent is created on the context's own thread.
        let agent = unsafe { jsprof_agent_new(cx) };
        Arc::new(SignalSampler {
            agent: Mutex::new(Some(AgentPtr(agent))),
            registry,
            default_realm,
        })
    }

    /// Turns SpiderMonkey's profiling instrumentation on (once), on the agent's thread: JIT
    /// code is discarded and recompiled with it, and scripts start in the Baseline
    /// Interpreter. It slows JIT code by a few percent, so it waits for the first profiling
    /// session, whatever the Document-Policy mode (see `crate::enable_sampling`).
    pub(crate) fn enable(&self) {
        let agent = self.agent.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(ptr) = agent.as_ref() {
            // SAFETY: the agent is alive under the lock; this is its own thread (the caller's
            // contract, see `crate::enable_sampling`).
            unsafe { jsprof_agent_enable(ptr.0) };
        }
    }

    /// Starts taking the agent's stack now (on the sampler thread): the stack, or
    /// `Pending` while the agent's thread has not walked (see `jsprof_agent_begin`).
    pub(crate) fn sample(&self) -> Sampled {
        self.walk(None)
    }

    /// A pending walk's outcome (see `jsprof_agent_poll`).
    pub(crate) fn poll(&self, step: PollStep) -> Sampled {
        self.walk(Some(match step {
            PollStep::Look => POLL_LOOK,
            PollStep::Nudge => POLL_NUDGE,
            PollStep::Abandon => POLL_ABANDON,
        }))
    }

    /// The CPU time the agent's thread has run so far (its thread CPU-time clock), read from
    /// the sampler thread.
    pub(crate) fn cpu_time(&self) -> Option<Nanos> {
        let agent = self.agent.lock().unwrap_or_else(|e| e.into_inner());
        let ptr = agent.as_ref()?;
        // SAFETY: the agent is alive under the lock; the call reads its thread id and the
        // kernel's clock of that thread, nothing else.
        let ns = unsafe { jsprof_agent_cpu_ns(ptr.0) };
        (ns != 0).then_some(ns)
    }

    /// Begins a walk (`None`) or polls the pending one.
    fn walk(&self, poll: Option<i32>) -> Sampled {
        let agent = self.agent.lock().unwrap_or_else(|e| e.into_inner());
        let Some(ptr) = agent.as_ref() else {
            return Sampled::Unavailable;
        };
        let mut frames: *const WalkFrame = std::ptr::null();
        let (mut count, mut truncated) = (0u32, false);
        let status = match poll {
            // SAFETY: the agent is alive (it is only freed under this lock); the C++ side
            // coordinates the walk on the agent's thread and returns a buffer that stays
            // valid until the next request for this agent, which this lock excludes.
            None => unsafe { jsprof_agent_begin(ptr.0, &mut frames, &mut count, &mut truncated) },
            // SAFETY: as above, for the walk `jsprof_agent_begin` left pending.
            Some(action) => unsafe {
                jsprof_agent_poll(ptr.0, action, &mut frames, &mut count, &mut truncated)
            },
        };
        if status == SAMPLE_PENDING {
            return Sampled::Pending;
        }
        if status == SAMPLE_DEFERRED {
            return Sampled::Deferred;
        }
        if status != SAMPLE_OK || count == 0 || frames.is_null() {
            // Nothing walkable (instrumentation off, sampling suppressed for a moment, a
            // thread gone or a walk abandoned): a new sample is asked by interrupt instead.
            return Sampled::Unavailable;
        }
        // SAFETY: `count` frames at `frames`, valid while the lock is held (see above).
        let walked = unsafe { std::slice::from_raw_parts(frames, count as usize) };
        let stack: Vec<RawFrame> = walked.iter().map(|f| self.raw_frame(f)).collect();

        drop(agent);
        Sampled::Stack(RawStack::from(stack))
    }

    /// A walked frame as a raw frame: its script and realm from the registry (unknown
    /// sources — eval code, the prelude, self-hosted builtins — are hidden).
    fn raw_frame(&self, f: &WalkFrame) -> RawFrame {
        let (script, hidden, realm) = match self.registry.lookup(SourceId(f.source_id)) {
            Some(r) => (Some(r.script), r.hidden, r.realm),
            None => (None, true, self.default_realm),
        };
        let site = if f.flags & FRAME_TOP_LEVEL != 0 {
            FrameSite::TopLevel
        } else if f.flags & FRAME_DEFINITION != 0 {
            FrameSite::Definition {
                line: f.line,
                column: f.column,
            }
        } else {
            FrameSite::Position {
                line: f.line,
                column: f.column,
            }
        };
        RawFrame {
            realm,
            script,
            hidden,
            site,
        }
    }

    /// Time the agent's thread spent walking in its handler, and how many walks: in all
    /// (`depth` `None`) or of walks that found `depth` frames (64: that many or more).
    pub(crate) fn cost(&self, depth: Option<u32>) -> (Duration, u64) {
        let agent = self.agent.lock().unwrap_or_else(|e| e.into_inner());
        let Some(ptr) = agent.as_ref() else {
            return (Duration::ZERO, 0);
        };
        let (mut ns, mut walks) = (0u64, 0u64);
        // SAFETY: the agent is alive under the lock; the counters are plain integers the
        // handler (on the calling thread itself, which is this one) updates.
        unsafe {
            jsprof_agent_cost(
                ptr.0,
                depth.map_or(u32::MAX, |d| d.min(64)),
                &mut ns,
                &mut walks,
            )
        };
        (Duration::from_nanos(ns), walks)
    }

    /// How many walks needed a signal (the interrupt was not served in time), and what one
    /// signal costs the agent's thread beyond its handler (measured when it was created).
    pub(crate) fn signalled(&self) -> (u64, Duration) {
        let agent = self.agent.lock().unwrap_or_else(|e| e.into_inner());
        let Some(ptr) = agent.as_ref() else {
            return (0, Duration::ZERO);
        };
        let mut ns = 0u64;
        // SAFETY: the agent is alive under the lock; plain counters of this thread's.
        let n = unsafe { jsprof_agent_signalled(ptr.0, &mut ns) };
        (n, Duration::from_nanos(ns))
    }

    /// Ticks that came inside a collection (walked at its end).
    pub(crate) fn gc_deferred(&self) -> u64 {
        let agent = self.agent.lock().unwrap_or_else(|e| e.into_inner());
        let Some(ptr) = agent.as_ref() else {
            return 0;
        };
        // SAFETY: the agent is alive under the lock; a plain counter of this thread's.
        unsafe { jsprof_agent_gc_deferred(ptr.0) }
    }

    /// Frees the agent (on its thread, outside any JS). Later samples are `Unavailable`.
    pub(crate) fn close(&self) {
        let mut agent = self.agent.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(ptr) = agent.take() {
            // SAFETY: no sample is in progress (it would hold this lock) and none can start
            // (the pointer is gone); this is the agent's own thread, outside any JS.
            unsafe { jsprof_agent_free(ptr.0) };
        }
    }
}
