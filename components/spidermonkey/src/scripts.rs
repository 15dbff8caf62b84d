//! What identifies a compiled script to the profiler, from the shim: its ScriptSource id.

use mozjs::jsapi::{JSObject, JSScript};

use jsprof_symbolizer::SourceId;

extern "C" {
    // shim.cpp
    fn jsprof_script_source_id(script: *mut JSScript) -> u32;
    fn jsprof_module_source_id(module: *mut JSObject) -> u32;
    fn jsprof_is_scripted_proxy(obj: *mut JSObject) -> bool;
}

/// **Script compilation**: the ScriptSource id of a classic script just compiled
/// (`JS::Compile*`), to register it with ([`ScriptRegistry::register`]) before it runs.
/// Every compilation has its own id, whatever the URL; each frame the agent reports carries
/// it.
///
/// [`ScriptRegistry::register`]: jsprof_symbolizer::ScriptRegistry::register
///
/// # Safety
/// `script` must be a live (rooted) script of this thread's runtime.
pub unsafe fn script_source_id(script: *mut JSScript) -> SourceId {
    // SAFETY: per the contract; the shim reads the script's ScriptSource.
    SourceId(unsafe { jsprof_script_source_id(script) })
}

/// **Module compilation**: the ScriptSource id of a module record just compiled
/// (`JS::CompileModule`), as [`script_source_id`] for classic scripts. `SourceId(0)` (no
/// source: never a registered one) if the record has no script.
///
/// # Safety
/// `module` must be a live (rooted) module record of this thread's runtime.
pub unsafe fn module_source_id(module: *mut JSObject) -> SourceId {
    // SAFETY: per the contract; the shim reads the module's script's ScriptSource.
    SourceId(unsafe { jsprof_module_source_id(module) })
}

/// Whether `obj` is a scripted Proxy (`new Proxy(…)`, whose every operation may run page
/// code), seen through any cross-compartment wrapper: `js::IsScriptedProxy`, which the Rust
/// bindings do not reach. Not the agent's business, but the shim is the one C++ built
/// against the engine, so the embedder's host uses it from here (jsprof's prelude shows such
/// a value without opening it).
///
/// # Safety
/// `obj` must be a live object of this thread's runtime.
pub unsafe fn is_scripted_proxy(obj: *mut JSObject) -> bool {
    // SAFETY: per the contract; the shim only reads the object and its wrappers' targets.
    unsafe { jsprof_is_scripted_proxy(obj) }
}
