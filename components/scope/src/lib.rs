//! The profiler service of Opera's Scope protocol (`Profiler.1.1`, seed 003), without
//! SpiderMonkey: what the engine records and what a client is answered.
//!
//! - [`event`]: the event types with their Scope numbers, and what each event says
//!   ([`Details`]);
//! - [`record`]: the [`Recorder`] a page's event loop records into (one relaxed atomic
//!   load per hook while no session runs, nothing allocated) and the thread's hooks;
//! - [`timeline`]: post-processing of a stopped recording into one [`Timeline`] per frame
//!   (`childCount`, `time`, `aggregatedTime`, `overhead`, `aggregatedOverhead`, `hits`) and
//!   the four `GetEvents` modes with their selections;
//! - [`protocol`]: the JSON requests and responses (one message a line);
//! - [`sessions`]: the service's session rules (one running at a time, release only once
//!   stopped, IDs invalid after).

#![forbid(unsafe_code)]
#![warn(clippy::unwrap_used, clippy::expect_used)]
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

pub mod event;
pub mod protocol;
pub mod record;
pub mod sessions;
pub mod timeline;

#[cfg(test)]
mod tests;

pub use event::{Details, EvalKind, EventType, GcKind, RawEvent, ScriptKind};
pub use record::{EventGuard, FrameInfo, Recorder, Recording};
pub use timeline::{Event, Timeline};
