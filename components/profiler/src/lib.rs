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
//! Samples land on ticks of a grid anchored at the sampler's start: a session's first sample
//! comes at most one interval after it starts, then one per interval. A stack is taken when the
//! agent reaches an interrupt check, microseconds after the tick; a long native call delays it,
//! and the ticks it covers share the stack taken when it returns. Timestamps are the tick times,
//! floored to 100 µs (5 µs when cross-origin isolated).
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
mod time;
mod trace;

#[cfg(test)]
mod tests;

pub use agent::{AgentHandle, AgentId, SampleRequest, Sampled, StackSampler};
pub use frame::{
    FrameInfo, FrameSite, NoScripts, RawFrame, RawStack, RealmId, ResolvedSite, ScriptId,
    Symbolizer,
};
pub use group::{
    AlreadyStopped, ConfigError, GroupConfig, ProfilerGroup, Session, SessionOptions, SessionState,
};
pub use interval::IntervalError;
pub use recorder::{Added, Recorder};
pub use sampler::{SamplerStats, SessionId};
pub use time::{Clock, FakeClock, MonotonicClock, Nanos, Resolution};
pub use trace::{gzip, ProfilerFrame, ProfilerSample, ProfilerStack, ProfilerTrace, TraceBuilder};
