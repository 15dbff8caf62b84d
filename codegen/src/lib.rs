//! WebIDL (weedle2) to Rust bindings (syn/quote) for jsprof's DOM objects.
//!
//! Empty until the Profiler-in-the-engine work (issue 4) lands the generator; the crate
//! exists so the workspace has its final shape.

#![forbid(unsafe_code)]
