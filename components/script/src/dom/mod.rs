//! The DOM implemented in Rust, behind the WebIDL bindings `jsprof-script-bindings` generates.
//!
//! - [`profiler`]: the `Profiler` interface of the JS Self-Profiling API.
//! - [`testing`]: `JsprofTestBindings`, which tests the bindings from pages (behind a pref).
//! - [`DomTypeHolder`]: which of these types implements each generated interface.
//!
//! The rest of the DOM (events, nodes, timers) is JavaScript in `prelude/`; generated
//! interfaces inherit from it (`Profiler : EventTarget`).

pub mod profiler;
pub mod testing;

use jsprof_script_bindings::generated::DomTypes;

/// This crate's types for the generated interfaces (Servo's `DomTypeHolder`): the bindings
/// are generic over [`DomTypes`], so that they never name this crate.
#[derive(Debug)]
pub enum DomTypeHolder {}

impl DomTypes for DomTypeHolder {
    type JsprofTestBindings = testing::JsprofTestBindings;
    type Profiler = profiler::Profiler;
}
