//! The properties of jsprof's parsers of page and server input, one function per fuzz target.
//!
//! Each `TARGET(data: &[u8])` runs a parser on `data` and panics when a property fails, so
//! the same function serves the libFuzzer binaries (`fuzz/targets`, `./mach fuzz`), the
//! proptests (`tests/proptest.rs`) and the replay of the seed corpora and of every crash
//! input ever fixed (`tests/regressions.rs`, `fuzz/corpus/`, `fuzz/regressions/`).
//!
//! - [`document_policy`]: `Document-Policy` and the COOP/COEP pair (Structured Fields);
//! - [`fetch_headers`]: the Fetch standard's header rules and MIME types;
//! - [`headers_sidecar`]: `.headers` sidecar files;
//! - [`html_document`]: html5ever parsing, the node list and script positions;
//! - [`scope_request`]: the profiler service's request lines, and `GetEvents` on a session;
//! - [`symbolizer`]: oxc-based function naming and position resolution;
//! - [`trace_builder`]: a stream of samples through a `Recorder` into a `ProfilerTrace`.
//!
//! Text targets read the bytes as UTF-8, replacing invalid sequences (the loader does the
//! same with responses, `String::from_utf8_lossy`).

#![forbid(unsafe_code)]

mod document_policy;
mod fetch_headers;
mod headers_sidecar;
mod html_document;
mod scope_request;
mod symbolizer;
pub mod trace_builder;

pub use document_policy::document_policy;
pub use fetch_headers::fetch_headers;
pub use headers_sidecar::headers_sidecar;
pub use html_document::{html_document, misplaced_scripts};
pub use scope_request::scope_request;
pub use symbolizer::symbolizer;
pub use trace_builder::trace_builder;

/// A fuzz target's property function.
pub type Target = fn(&[u8]);

/// Every target, by the name of its fuzz binary and of its corpus and regression folders.
pub const TARGETS: &[(&str, Target)] = &[
    ("document_policy", document_policy),
    ("fetch_headers", fetch_headers),
    ("headers_sidecar", headers_sidecar),
    ("html_document", html_document),
    ("scope_request", scope_request),
    ("symbolizer", symbolizer),
    ("trace_builder", trace_builder),
];

/// The property function of the target named `name`.
pub fn target(name: &str) -> Option<Target> {
    TARGETS.iter().find(|(n, _)| *n == name).map(|&(_, f)| f)
}
