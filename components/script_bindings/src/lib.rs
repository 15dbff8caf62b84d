//! jsprof's DOM glue, split from the DOM it serves as Servo splits `script_bindings` from
//! `script`: everything that touches JSAPI on the DOM's behalf, and the vocabulary the DOM is
//! written in. The `jsprof-script` crate (the page, its event loop, the DOM objects) builds
//! on it with no `unsafe` of its own; nothing here knows that crate, so Cargo forbids any
//! import circle between the two.
//!
//! - [`glue`]: every `unsafe` SpiderMonkey call of the engine's DOM side (the profiler's
//!   agent, the other `unsafe` home, is `jsprof-spidermonkey`): the runtime of an event loop,
//!   window realms, scripts and modules, natives, structured clone, and the JSAPI side of
//!   the generated bindings (`glue::bindings`, `glue::interfaces`).
//! - [`generated`]: the WebIDL bindings, **generated** by `codegen/` from `webidl/` (do not
//!   edit; checked in): each interface's `{Interface}Methods` trait, its binding functions
//!   and `InterfaceDef` table, and [`generated::DomTypes`], the Rust type the embedder gives
//!   for each interface. It re-exports [`generated_types`], also generated: the dictionaries,
//!   enums and the host interface's trait (`JsprofHostMethods`), which the host is written
//!   with.
//! - [`runtime`]: the safe vocabulary the generated code is written against (`Error`,
//!   conversions, `InterfaceDef`, `DomObject`, `CallCtx`, `Promise`, ...), and what a task
//!   may do with its loop's runtime ([`runtime::TaskJs`]).
//! - [`host`]: the safe [`host::Host`] trait through which natives and DOM objects reach the
//!   embedder (the script crate's `PageHost`), and the [`host::Global`] a binding runs in.
//! - [`task`]: tasks for an event loop from any thread.
//!
//! Their layers, each using only those under it (no import circle): `runtime`; then
//! `generated_types` and `task`; then `host`; then `generated`; then `glue`.

// Page content must never make the engine panic: `unwrap`/`expect` only where an invariant
// (not input) guarantees the value, each with its reason (tests may use them freely).
#![warn(clippy::unwrap_used, clippy::expect_used)]
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]
// Architecture invariant: `unsafe` lives in `glue` only (and in `jsprof-spidermonkey`).
#![deny(unsafe_code)]

// Formatted by prettyplease when generated; rustfmt leaves it alone so that the checked-in
// copy stays byte-identical to the generator's output.
#[allow(clippy::redundant_closure, clippy::vec_init_then_push)]
#[rustfmt::skip]
pub mod generated;
#[allow(clippy::redundant_closure, clippy::vec_init_then_push)]
#[rustfmt::skip]
pub mod generated_types;
#[allow(unsafe_code)]
pub mod glue;
pub mod host;
pub mod runtime;
pub mod task;
