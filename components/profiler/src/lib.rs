//! The engine-independent core of the JS Self-Profiling API
//! (<https://wicg.github.io/js-self-profiling/>).
//!
//! - [`ProfilerGroup`]: one per process; owns the sampler thread and hands out [`Session`]s.
//! - [`AgentHandle`]: a JS thread the sampler takes stacks from (see [`agent`]).
//! - [`Recorder`] and [`TraceBuilder`]: a session's buffer, and the spec's ID algorithms.
//! - [`ProfilerTrace`]: the result, as the spec's dictionaries, JSON and "json-gzip".
//!
//! This crate knows nothing of SpiderMonkey, the DOM or the network, and has no `unsafe`.
//!
//! # Accuracy
//!
//! A session of interval `k` base ticks takes one sample per block of `k` base intervals, at
//! a time drawn uniformly inside the block (shared by every session of that interval), so
//! periodic work cannot alias with the samples (see [`sampler`]). A host that can walk its
//! agent's stack from the sampler thread gives a [`StackSampler`]: the stack is taken where
//! the agent stands at that moment, inside a native call too. Otherwise the agent is asked
//! by interrupt, and an answer later than [`sampler::MAX_ANSWER_DELAY`] gives its tick no
//! stack: no sample ever gets a stack that was not running at its time. Timestamps are the
//! times samples were taken, floored to 100 µs (5 µs when cross-origin isolated).
//!
//! # Security
//!
//! A session keeps only frames of its own realm that the host did not mark hidden; what a
//! trace can reveal of a frame is what the host's [`Symbolizer`] says about its script.

#![forbid(unsafe_code)]

pub mod agent;
mod frame;
mod group;
pub mod interval;
mod recorder;
pub mod sampler;
mod threads;
mod time;
mod trace;

#[cfg(test)]
mod tests;

pub use agent::{
    AgentHandle, AgentId, PollStep, RenderingPhase, SampleRequest, Sampled, StackSampler,
};
pub use frame::{
    FrameInfo, FrameSite, NoScripts, RawFrame, RawStack, RealmId, ResolvedSite, ScriptId,
    Symbolizer,
};
pub use group::{
    AlreadyStopped, ConfigError, GroupConfig, ProfilerGroup, Session, SessionOptions, SessionState,
};
pub use interval::IntervalError;
pub use recorder::{Added, BufferPolicy, Recorder};
pub use sampler::BufferFullCallback;
pub use sampler::{SamplerStats, SessionId};
pub use time::{Clock, FakeClock, MonotonicClock, Nanos, Resolution};
pub use trace::{
    gzip, MarkerSet, ProfilerFrame, ProfilerMarker, ProfilerSample, ProfilerStack, ProfilerTrace,
    TraceBuilder,
};
