//! What the group and the sampler thread hand the core: a session to start, control
//! messages, and what a stopped session leaves to be built.

use std::sync::Arc;

use crate::agent::AgentShared;
use crate::frame::Symbolizer;
use crate::recorder::Recorder;
use crate::time::Nanos;
use crate::trace::ProfilerTrace;

use super::stats::SamplerStats;

/// Identifies a session within its group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SessionId(pub u64);

/// Called once, on the sampler thread, when a session's buffer is found full.
pub type BufferFullCallback = Box<dyn FnOnce() + Send>;
/// Called once, on a trace-building thread, with a stopped session's trace.
pub type TraceCallback = Box<dyn FnOnce(ProfilerTrace) + Send>;

/// Who wants a stopped session's trace, and by when (on the group's clock): a build that
/// cannot be finished by then is abandoned, and `done` is dropped without being called.
pub(crate) struct BuildRequest {
    pub done: TraceCallback,
    pub by: Option<Nanos>,
}

/// A session as the sampler sees it.
pub(crate) struct SessionStart {
    pub id: SessionId,
    pub agent: Arc<AgentShared>,
    pub every: u64,
    pub recorder: Recorder,
    pub symbolizer: Arc<dyn Symbolizer>,
    pub on_full: Option<BufferFullCallback>,
    /// Starts paused (its document is hidden).
    pub paused: bool,
    /// When the host created the session, on the group's clock: its first pick is the first
    /// one after this time (the sampler thread may hear of the session later).
    pub started_at: Nanos,
}

/// Held by whoever waits for forced samples: the waiter is released when every clone has
/// been dropped, that is when each forced sample is recorded (at once, or when the agent's
/// answer arrives or its request is closed).
pub(crate) type ForceDone = crossbeam_channel::Sender<()>;

/// Messages from the group to its sampler thread.
pub(crate) enum Control {
    Start(Box<SessionStart>),
    Pause(SessionId),
    Resume(SessionId),
    Stop(SessionId, Option<BuildRequest>),
    /// Hand the samples so far to be built and go on sampling into a fresh buffer; the
    /// callback, if any, is the buffer-full notification from now on.
    Restart(SessionId, BuildRequest, Option<BufferFullCallback>),
    /// Take a sample now in these sessions (WebDriver's Force Sample).
    Force(Vec<SessionId>, ForceDone),
    Stats(crossbeam_channel::Sender<SamplerStats>),
    Shutdown,
}

/// What a stopped session leaves: everything needed to build its trace elsewhere.
pub(crate) struct Stopped {
    pub recorder: Recorder,
    pub symbolizer: Arc<dyn Symbolizer>,
}
