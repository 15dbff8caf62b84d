//! Agents: the JS threads (a window event loop, a worker) the sampler takes stacks from.
//!
//! An agent is sampled in one of two ways:
//!
//! - **Synchronously**, if the host gave a [`StackSampler`]: the sampler thread calls it at
//!   the tick, and it returns the stack running *at that moment* (for SpiderMonkey: the
//!   agent's thread is suspended by a signal and its JIT and interpreter frames are
//!   walked). This is exact: a tick inside a long native call gets the frames that made
//!   the call.
//! - **By request**, otherwise (or when the synchronous sampler cannot sample): a
//!   conversation with the agent's thread, which can only capture its own stack:
//!
//! 1. the sampler sees the agent in script ([`AgentHandle::is_in_script`]) and calls
//!    [`AgentShared::request`], which stores a request token and calls the host's requester
//!    (for SpiderMonkey, `JS_RequestInterruptCallback`);
//! 2. the host's interrupt callback, on the agent's thread, calls [`AgentHandle::take_request`],
//!    captures the stack once and hands it back with [`AgentHandle::answer`].
//!
//! The host keeps an "in script" depth with [`AgentHandle::enter`] / [`AgentHandle::leave`]
//! around every entry into JS. Each entry from depth 0 starts a new *generation*; a request
//! made in one generation is stale in any other, and `take_request` discards it, so a request
//! that outlives its script never yields a stack of unrelated code.
//!
//! The host also tells the agent what else its thread is doing, for the markers extension:
//! a collection ([`AgentHandle::gc_began`] / [`AgentHandle::gc_ended`]), a phase of its
//! rendering pipeline ([`AgentHandle::set_rendering`]: style, layout, paint; a host with no
//! pipeline never calls it) and waiting for work ([`AgentHandle::waiting`]).
//! [`AgentHandle::marker`] reads these states at the tick: `gc` inside a collection, else the
//! rendering phase, else `script` in script, else `other` unless waiting.

use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;

use crossbeam_channel::Sender;

use crate::frame::RawStack;
use crate::time::{Clock, Nanos};
use crate::trace::ProfilerMarker;

/// A phase of the host's rendering pipeline on the agent's thread, as the `style`, `layout`
/// and `paint` markers name them (decision 0064).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RenderingPhase {
    /// Computing elements' styles: the stylist's update and the style traversal.
    Style,
    /// Building the boxes and laying them out.
    Layout,
    /// Putting what was laid out in painting order and recording what to draw.
    Paint,
}

impl RenderingPhase {
    /// The phase's marker.
    pub fn marker(self) -> ProfilerMarker {
        match self {
            RenderingPhase::Style => ProfilerMarker::Style,
            RenderingPhase::Layout => ProfilerMarker::Layout,
            RenderingPhase::Paint => ProfilerMarker::Paint,
        }
    }

    /// The phase as one byte (0: none), as the agent keeps it.
    fn to_byte(phase: Option<RenderingPhase>) -> u8 {
        match phase {
            None => 0,
            Some(RenderingPhase::Style) => 1,
            Some(RenderingPhase::Layout) => 2,
            Some(RenderingPhase::Paint) => 3,
        }
    }

    fn from_byte(byte: u8) -> Option<RenderingPhase> {
        match byte {
            1 => Some(RenderingPhase::Style),
            2 => Some(RenderingPhase::Layout),
            3 => Some(RenderingPhase::Paint),
            _ => None,
        }
    }
}

/// What a [`StackSampler`] found at the tick.
#[derive(Debug, Clone)]
pub enum Sampled {
    /// The stack running at the tick, outermost frame first.
    Stack(RawStack),
    /// The agent ran no script at the tick.
    Idle,
    /// The agent could not be sampled this way now: ask it by request instead (or, for a
    /// pending walk, the walk was abandoned: the tick has no stack).
    Unavailable,
    /// The walk is under way on the agent's thread, which has not run since the tick (it
    /// waits for a CPU): ask again with [`StackSampler::poll`]. Its stack cannot change
    /// before the walk, so the walk's stack is the tick's.
    Pending,
    /// The agent's thread has taken the walk inside an operation its stack cannot be
    /// walked in (SpiderMonkey's collections), and walks it when that ends: its stack
    /// cannot change meanwhile, so the walk's stack is the tick's. Polled like `Pending`,
    /// but seldom (it ends when the operation does), and never abandoned.
    Deferred,
}

/// What [`StackSampler::poll`] should do about a pending walk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PollStep {
    /// Only look.
    Look,
    /// The agent's thread has not taken the walk the gentle way in time: make it (for
    /// SpiderMonkey, a signal), then look.
    Nudge,
    /// Give up the walk (the tick gets no stack). A host whose agent's thread has taken
    /// the walk and will finish it (for SpiderMonkey, a tick inside a collection, walked
    /// when it ends) answers `Deferred`, and the walk goes on waiting.
    Abandon,
}

/// A host's way to take an agent's stack from the sampler thread, at the tick, wherever the
/// agent's thread stands. It must not block for long, and must not touch JS objects from
/// the sampler thread beyond what its engine allows a profiler to read while the agent is
/// stopped. A walk that needs the agent's thread, when that thread is waiting for a CPU
/// (threads outnumber cores), is `Pending` until it runs: the sampler polls it meanwhile
/// and serves the other agents, instead of waiting for each in turn.
pub trait StackSampler: Send + Sync {
    /// Starts taking the stack now.
    fn sample(&self) -> Sampled;
    /// The outcome of the pending walk: `Pending` while it is not taken yet, `Deferred`
    /// while the agent's thread holds it for later.
    fn poll(&self, step: PollStep) -> Sampled;
    /// The CPU time the agent's thread has run so far, if the host can read it from the
    /// sampler thread (`None`: it cannot). A value that has not changed since the sampler
    /// last read it says that the thread has not run since: its stack then is its stack
    /// now, so a pick the sampler thread woke too late for (it was waiting for a CPU) is
    /// still served, with the stack the walk finds (the sampler's module docs, "A tick").
    fn cpu_time(&self) -> Option<Nanos> {
        None
    }
}

/// A sampler that never leaves a walk pending: a function of the moment.
impl<F: Fn() -> Sampled + Send + Sync> StackSampler for F {
    fn sample(&self) -> Sampled {
        self()
    }
    fn poll(&self, _: PollStep) -> Sampled {
        Sampled::Unavailable
    }
}

/// A host-visible identifier of an agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AgentId(pub u32);

/// A pending request to sample, taken by the interrupt callback.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SampleRequest(pub(crate) u64);

/// A stack the agent captured for a request.
#[derive(Debug)]
pub(crate) struct Answer {
    pub agent: AgentId,
    pub token: u64,
    pub stack: RawStack,
    /// When the stack was captured, on the group's clock.
    pub captured_at: Nanos,
}

/// State shared between an agent's thread and the sampler thread. Lock-free.
pub struct AgentShared {
    pub(crate) id: AgentId,
    depth: AtomicU32,
    generation: AtomicU32,
    /// `generation << 32 | request number`, 0 when none is pending.
    request: AtomicU64,
    requester: Box<dyn Fn() + Send + Sync>,
    pub(crate) sampler: Option<Box<dyn StackSampler>>,
    answers: Sender<Answer>,
    pub(crate) clock: Arc<dyn Clock>,
    /// Collections running now (nursery collections nest inside major slices).
    gc_depth: AtomicU32,
    /// The rendering phase the agent's thread is in ([`RenderingPhase::to_byte`]).
    rendering: AtomicU8,
    /// Whether the agent's thread is waiting for work (its event loop is blocked).
    waiting: AtomicBool,
}

impl fmt::Debug for AgentShared {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AgentShared")
            .field("id", &self.id)
            .field("depth", &self.depth)
            .field("generation", &self.generation)
            .finish_non_exhaustive()
    }
}

impl AgentShared {
    /// Sampler side: asks the agent for a stack. Returns the request's token.
    pub(crate) fn request(&self, number: u32) -> u64 {
        let generation = self.generation.load(Ordering::Acquire);
        let token = (u64::from(generation) << 32) | u64::from(number.max(1));
        self.request.store(token, Ordering::Release);
        (self.requester)();
        token
    }

    /// Sampler side: whether a request made with `token` can no longer be answered (the agent
    /// left the script it was made in).
    pub(crate) fn is_stale(&self, token: u64) -> bool {
        self.depth.load(Ordering::Acquire) == 0
            || (token >> 32) as u32 != self.generation.load(Ordering::Acquire)
    }

    pub(crate) fn in_script(&self) -> bool {
        self.depth.load(Ordering::Acquire) > 0
    }

    /// What the agent is doing now, as a sample's marker: `gc` during a collection (in
    /// script or not), the rendering phase (`style`, `layout`, `paint`) while the host's
    /// pipeline runs, even when script forced it, `script` while script runs, `other` while
    /// the thread does native work outside script (a task, parsing, a load), and nothing
    /// while it waits for work.
    pub(crate) fn marker(&self) -> Option<ProfilerMarker> {
        if self.gc_depth.load(Ordering::Acquire) > 0 {
            Some(ProfilerMarker::Gc)
        } else if let Some(phase) =
            RenderingPhase::from_byte(self.rendering.load(Ordering::Acquire))
        {
            Some(phase.marker())
        } else if self.in_script() {
            Some(ProfilerMarker::Script)
        } else if self.waiting.load(Ordering::Acquire) {
            None
        } else {
            Some(ProfilerMarker::Other)
        }
    }
}

/// The host's handle on its agent. Cheap to clone.
#[derive(Debug, Clone)]
pub struct AgentHandle(pub(crate) Arc<AgentShared>);

impl AgentHandle {
    pub(crate) fn new(
        id: AgentId,
        requester: Box<dyn Fn() + Send + Sync>,
        sampler: Option<Box<dyn StackSampler>>,
        answers: Sender<Answer>,
        clock: Arc<dyn Clock>,
    ) -> Self {
        AgentHandle(Arc::new(AgentShared {
            id,
            depth: AtomicU32::new(0),
            generation: AtomicU32::new(0),
            request: AtomicU64::new(0),
            requester,
            sampler,
            answers,
            clock,
            gc_depth: AtomicU32::new(0),
            rendering: AtomicU8::new(0),
            waiting: AtomicBool::new(false),
        }))
    }

    pub fn id(&self) -> AgentId {
        self.0.id
    }

    /// Agent thread: the host is about to run script (any entry into JS).
    pub fn enter(&self) {
        // Only the agent's own thread writes `depth`, so load-then-store is not a race. The
        // generation moves before the depth becomes visible, so a sampler that sees depth > 0
        // also sees the new generation.
        let depth = self.0.depth.load(Ordering::Relaxed);
        if depth == 0 {
            self.0.generation.fetch_add(1, Ordering::AcqRel);
        }
        self.0.depth.store(depth + 1, Ordering::Release);
    }

    /// Agent thread: the script entered by the matching [`enter`](Self::enter) returned.
    pub fn leave(&self) {
        let depth = self.0.depth.load(Ordering::Relaxed);
        debug_assert!(depth > 0, "leave() without enter()");
        self.0
            .depth
            .store(depth.saturating_sub(1), Ordering::Release);
    }

    /// Agent thread: runs `f` as script (enter, then leave even on unwind).
    pub fn in_script<R>(&self, f: impl FnOnce() -> R) -> R {
        struct Leave<'a>(&'a AgentHandle);
        impl Drop for Leave<'_> {
            fn drop(&mut self) {
                self.0.leave();
            }
        }
        self.enter();
        let _leave = Leave(self);
        f()
    }

    /// Whether the agent is running script now.
    pub fn is_in_script(&self) -> bool {
        self.0.in_script()
    }

    /// Agent thread: a collection begins (they may nest).
    pub fn gc_began(&self) {
        self.0.gc_depth.fetch_add(1, Ordering::AcqRel);
    }

    /// Agent thread: the collection begun by the matching [`gc_began`](Self::gc_began) ended.
    /// An end without a beginning (the agent was installed inside a collection) is ignored.
    pub fn gc_ended(&self) {
        let _ = self
            .0
            .gc_depth
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |d| d.checked_sub(1));
    }

    /// Agent thread: the thread enters a phase of its rendering pipeline (`None`: it left
    /// the pipeline). Returns the phase it was in, for the caller to restore: a phase run
    /// inside another (a layout that restyles) ends back in the outer one.
    pub fn set_rendering(&self, phase: Option<RenderingPhase>) -> Option<RenderingPhase> {
        RenderingPhase::from_byte(
            self.0
                .rendering
                .swap(RenderingPhase::to_byte(phase), Ordering::AcqRel),
        )
    }

    /// Agent thread: the thread starts (`true`) or stops waiting for work.
    pub fn waiting(&self, waiting: bool) {
        self.0.waiting.store(waiting, Ordering::Release);
    }

    /// The marker a sample taken now would get: `gc`, a rendering phase's, `script`, `other`
    /// or none.
    pub fn marker(&self) -> Option<ProfilerMarker> {
        self.0.marker()
    }

    /// Agent thread, in the interrupt callback: takes the pending request, if there is one
    /// and it belongs to the script running now. A stale request is discarded.
    pub fn take_request(&self) -> Option<SampleRequest> {
        let token = self.0.request.swap(0, Ordering::AcqRel);
        if token == 0 || self.0.is_stale(token) {
            return None;
        }
        Some(SampleRequest(token))
    }

    /// Agent thread: hands the stack captured for `request` to the sampler.
    pub fn answer(&self, request: SampleRequest, stack: RawStack) {
        // The sampler may be gone (the last session stopped meanwhile): then nobody wants it.
        let _ = self.0.answers.send(Answer {
            agent: self.0.id,
            token: request.0,
            stack,
            captured_at: self.0.clock.now(),
        });
    }
}
