//! WebIDL bindings: generated code and the runtime it uses.

// Formatted by prettyplease when generated; rustfmt leaves it alone so that the checked-in
// copy stays byte-identical to the generator's output.
#[allow(clippy::redundant_closure, clippy::vec_init_then_push)]
#[rustfmt::skip]
pub mod generated;
pub mod runtime;
