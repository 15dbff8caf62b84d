//! What jsprof knows of a page without SpiderMonkey, so that it builds and tests in seconds
//! and can be fuzzed:
//!
//! - [`document`]: html5ever parsing, the document's node list for the realm, and its script
//!   elements with where their text starts;
//! - [`policy`]: `Document-Policy` for `js-profiling`;
//! - [`prefs`]: the `--pref` registry;
//! - [`url_api`]: the URL standard's API (parse, setters, getters) for `URL` and `Location`.
//!
//! The prelude lint, a development tool that the engine does not link, is its own crate:
//! `tools/prelude-lint`.

#![forbid(unsafe_code)]

pub mod document;
pub mod policy;
pub mod prefs;
pub mod url_api;
