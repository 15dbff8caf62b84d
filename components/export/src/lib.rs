//! What people open a jsprof trace in. The spec's `ProfilerTrace` JSON (as `--trace-out`,
//! `--profile-out` or a page write it) is merged by function identity ([`model`]) and
//! written in the formats profilers are read in ([`format`]), each by the library made for
//! it where one exists.
//!
//! No SpiderMonkey here: this crate's tests run without the engine's build.

#![forbid(unsafe_code)]

pub mod cpuprofile;
pub mod files;
pub mod firefox;
pub mod flamegraph;
pub mod folded;
pub mod format;
pub mod input;
pub mod model;
pub mod pprof;
pub mod report;
pub mod sourcemap;
pub mod speedscope;
pub mod trace_event;

pub use format::Format;
pub use model::{
    check, At, Bucket, Empty, Frame, FrameId, Keep, Node, NodeId, Profile, Sample, Thread,
    BUCKET_MS,
};
