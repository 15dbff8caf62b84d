//! The SpiderMonkey host of jsprof: it loads an HTML page, gives it a Window realm with the
//! DOM pages and testharness.js need, runs its scripts in the order the HTML standard gives,
//! and turns the event loop until nothing is left to do.
//!
//! - `document`, `policy`, `prefs`, `url_api`: re-exported from `jsprof-page-model`, the
//!   parts that need no SpiderMonkey.
//! - `dom`: DOM interfaces implemented in Rust (`Profiler`) behind the WebIDL bindings of
//!   `jsprof-script-bindings`, which also holds every `unsafe` SpiderMonkey call of the DOM
//!   side (its `glue`; the profiler's agent is `jsprof-spidermonkey`): this crate has none.
//! - `prelude/`: the DOM surface, in JavaScript, over the glue's natives.
//! - [`page`]: the event loop and the script processing model.
//! - `watchdog`: stops a run at its deadline or when the process passes its memory limit.

// Page content must never make the engine panic: `unwrap`/`expect` only where an invariant
// (not input) guarantees the value, each with its reason (tests may use them freely).
#![warn(clippy::unwrap_used, clippy::expect_used)]
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]
// Architecture invariant: `unsafe` lives in `jsprof-script-bindings`' glue and in
// `jsprof-spidermonkey`, never here.
#![forbid(unsafe_code)]

mod dom;
pub mod page;
mod watchdog;

pub use jsprof_page_model::{document, policy, prefs, url_api};

pub use jsprof_script_bindings::glue::{
    init, internal_error, panic_message, record_internal_error, shutdown,
};
pub use jsprof_spidermonkey::SamplingStats;
pub use page::{
    run_navigation, run_page, set_next_page_generation, Browser, Console, Navigated, PageError,
    RunOptions, RunReport, SamplerThread, ScopeRecording, Stream,
};
pub use prefs::{PrefError, Prefs};
