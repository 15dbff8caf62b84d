//! The JS Self-Profiling API's sampling agent for any mozjs (SpiderMonkey) embedder: what a
//! script thread needs so that `jsprof-profiler`'s `ProfilerGroup` takes its stacks.
//!
//! jsprof's own engine (`jsprof-script`) is one user; a Servo-style script thread is meant to
//! be another (`examples/embed/` is a third, on a bare runtime with no DOM). Nothing here
//! knows a DOM, a document or an origin.
//!
//! # What it holds
//!
//! - the runtime's callbacks, added beside the embedder's ([`prepare_runtime`]): the
//!   interrupt callback (SpiderMonkey keeps a list of them), the GC slice callback (chained
//!   to the one installed before) and the nursery collection callback;
//! - the agent ([`install_agent`], [`uninstall_agent`], [`enable_sampling`]): the walk at the
//!   tick, by interrupt first and SIGPROF after 50 µs (`shim.cpp`, SpiderMonkey's profiling
//!   frame iterator merged with its profiling stack, like Gecko's profiler), collections
//!   (a collection's stack is walked as it begins when a tick is due in it) and the `gc`
//!   marker, and the fallback capture through SavedFrames in the interrupt callback;
//! - the in-script guard ([`InScript`]), the event loop's waits ([`waiting`]) and the
//!   rendering guard ([`Rendering`]), which the `script`, `other`, (no), `style`, `layout`
//!   and `paint` markers are made of;
//! - the script registry and the symbolizer ([`ScriptRegistry`], from `jsprof-symbolizer`):
//!   every compiled script by ScriptSource id ([`script_source_id`], [`module_source_id`])
//!   with its URL, start position, realm and muted flag, and the resolution of positions to
//!   the spec's names;
//! - realm principals to [`RealmId`] ([`AgentConfig::realm_of_principals`]) for frames the
//!   fallback capture takes, and the SavedFrame readers ([`capture_current_stack`],
//!   [`saved_frame_principals`]);
//! - `--profile-stats`: [`sampling_stats`], [`guard_time`], and the sampler thread's
//!   scheduler setup ([`setup_sampler_thread`]).
//!
//! # Where a script thread calls it
//!
//! | when | call |
//! |---|---|
//! | process start | [`set_panic_handler`] (optional); `GroupConfig::on_sampler_thread = Some(`[`setup_sampler_thread`]`)` for the process's one `ProfilerGroup` |
//! | runtime creation (`Runtime::new`, for the script thread and each worker) | [`prepare_runtime`] (the embedder's own interrupt callbacks then also run at every sample the interrupt serves: keep them cheap) |
//! | realm creation (`JS_NewGlobalObject`) | choose the realm's [`RealmId`]; if its principals carry it, map them back in [`AgentConfig::realm_of_principals`] |
//! | script compilation (`JS::Compile*`, `JS::CompileModule`) | [`script_source_id`] / [`module_source_id`], then [`ScriptRegistry::register`] with the realm, URL, text, start position and muted flag, before the script runs |
//! | sampling support (a document that allows profiling: eagerly, or at its first `Profiler`) | [`install_agent`], which gives the `AgentHandle` sessions start with |
//! | a `Profiler` starts | [`enable_sampling`], then `ProfilerGroup::start_session` with the handle, the realm, and the registry as symbolizer |
//! | task entry and exit (every call into JS) | hold an [`InScript`] guard while JS runs |
//! | the event loop blocks for its next task | wrap the wait in [`waiting`] |
//! | style, layout and paint (a host with a rendering pipeline, on its script thread) | hold a [`Rendering`] guard of the phase while it runs |
//! | shutdown of a runtime | [`sampling_stats`] (if wanted), then [`release_runtime`] before the runtime is dropped |
//!
//! # What the embedder still does itself
//!
//! The `Profiler` interface and its bindings (WebIDL), the Document-Policy check, the
//! `ProfilerGroup` (one per process) and the sessions' lifetimes (stopping them with their
//! window), resolving `stop()`'s promise with the trace on its event loop, realm ids and the
//! principals that carry them, the muted flag of each script (from its response's
//! tainting), and cross-origin isolation for markers.
//!
//! # Dependencies, and why
//!
//! - `mozjs` `>=0.26.4, <0.27`: our 0.26.14 and Servo 0.7's `=0.26.4` (`servo-script` pins
//!   it; a binary links one `mozjs_sys`). Only API that 0.26.4 also has is used (below).
//! - `jsprof-profiler`: the agent handle, raw frames, realm and script ids, the group.
//! - `jsprof-symbolizer`: the script registry and its oxc resolution, mozjs-free so that
//!   the fuzz targets check it without building SpiderMonkey.
//! - `rustc-hash` (the source cache of the fallback capture), `thiserror` ([`AgentError`]),
//!   and `cc` to build `shim.cpp`.
//!
//! # The shim, and what it needs from the build
//!
//! `build.rs` compiles `src/shim.cpp` against the headers of the very SpiderMonkey build
//! `mozjs_sys` made (this crate depends on `mozjs_sys` directly, so cargo finishes that build
//! first; `buildsupport/mozjs_build.rs` finds its `mozjs_sys-*/out/build` beside this crate's
//! build output, and its source tree from there), with that build's `js-confdefs.h`, so internal headers have the library's layout whichever 153.x it
//! is. A prebuilt SpiderMonkey archive (mozjs_sys's default when `MOZJS_FROM_SOURCE` is
//! unset) ships no headers: build it from source (`MOZJS_FROM_SOURCE=1`).
//!
//! # Checked against mozjs 0.26.4 / mozjs_sys 153.3.0-1 (Servo 0.7)
//!
//! Read in their sources (`~/.cargo/registry/src/*/mozjs-0.26.4`, `mozjs_sys-153.3.0-1`) on
//! 2026-11-26, beside ours (0.26.14 / 153.6.0-2):
//!
//! - **mozjs Rust API** — identical in both: `rust::Runtime::get`,
//!   `rust::ThreadSafeJSContext` (`Clone`, `request_interrupt_callback`),
//!   `rust::get_object_class`, `rust::MutableHandleObject`, `rooted!`,
//!   `jsval::UndefinedValue` and `Value`'s accessors, `glue::JS_GetReservedSlot`
//!   (jsglue.cpp). Of mozjs's sources only `rust.rs`, `conversions.rs`, `lib.rs` and the
//!   generated-wrapper lists differ (`gc/` is the same), and `rust.rs` only gains off-thread
//!   compile options, `Stencil: Send` and a `DescribeScriptedCaller` signature, none used
//!   here; of mozjs_sys's, only `jsapi.cpp` and `jsglue.cpp` (proxy handler families,
//!   stencil helpers), none used here.
//! - **JSAPI bindings** — generated by `mozjs_sys`'s `build.rs` from the same allow-list in
//!   both (its `build.rs` differs only in artifact attestation), from headers that declare
//!   the same: `JS_AddInterruptCallback`, `JS::SetGCSliceCallback`,
//!   `JS::AddGCNurseryCollectionCallback`, `JS::GCProgress`, `JS::GCNurseryProgress`,
//!   `JS::GCReason::API`, `JS_GC`, `JS_SetGlobalJitCompilerOption` with
//!   `JSJITCOMPILER_BASELINE_INTERPRETER_WARMUP_TRIGGER`, `JS::CaptureCurrentStack`,
//!   `JS::StackCapture` and mozjs_sys's `JS_StackCapture_MaxFrames` (jsapi.cpp),
//!   `JS_ClearPendingException`, `GetSavedFrameSourceId/Line/Column/Parent`,
//!   `SavedFrameResult`, `SavedFrameSelfHosted`, `TaggedColumnNumberOneOrigin` and its
//!   wasm tag. `js/public/Stack.h` differs only in `FirstSubsumedFrame`'s move constructor
//!   (it now moves `cx` too), which the capture does not use (`MaxFrames`).
//! - **The shim's C++** — of the headers it includes, `jsapi.h`, `jsfriendapi.h`,
//!   `js/Interrupt.h`, `js/Modules.h`, `js/Proxy.h`, `js/ProfilingFrameIterator.h`,
//!   `js/ProfilingStack.h`, `jit/JitcodeMap.h`, `vm/Runtime.h` and `vm/JSScript.h` are
//!   byte-identical in the two source trees; `jit/JitRuntime.h` gains one member
//!   (`inPureCall_`) and two accessors, `jit/JSJitFrameIter.h` a failure state in
//!   `RInstructionResults`, `jit/JitFrames.h` a `savedCallee_` in exit frames, and
//!   `vm/JSContext.h` exception-state accessors: layouts the shim gets right by compiling
//!   against the build it links, and no name or signature it uses
//!   (`JitRuntime::getJitcodeGlobalTable`, `JitcodeGlobalTable::lookup`, the
//!   `JitcodeGlobalEntry` kinds, `JSJitProfilingFrameIterator::resumePCinCurrentFrame`,
//!   `baselineInterpreterScriptPC`, `baselineInterpreterLabel`,
//!   `ProfilingFrameIterator::jsJitIter`, `ProfilingStack` and `ProfilingStackFrame`,
//!   `SetContextProfilingStack`, `EnableContextProfilingStack`, `ScriptSource::id`,
//!   `JS::GetModuleScript`, `js::IsScriptedProxy`, `js::UncheckedUnwrap`) changed.
//!   `SavedFrame`'s reserved slots (`vm/SavedFrame.h`, [`slot`]) are the same.
//!
//! What this does not prove: a build against 0.26.4, which the Servo issue does.
//!
//! # Safety
//!
//! `unsafe` lives here and in jsprof-script-bindings' `glue/` (and in `examples/embed`, an
//! embedder's own JSAPI calls); every block says why it is sound
//! (`// SAFETY:`) and holds one unsafe operation (the workspace's lints). Every callback
//! SpiderMonkey makes into this crate runs in `guarded`: a panic never unwinds into C++
//! (it goes to [`set_panic_handler`]'s handler).

mod agent;
mod capture;
mod frames;
mod in_script;
mod sampling;
mod scripts;

use std::any::Any;
use std::sync::RwLock;

pub use agent::{
    collect_garbage, enable_sampling, install_agent, observe_collections, prepare_runtime,
    release_runtime, sampling_stats, uninstall_agent, waiting, AgentConfig, AgentError, Collection,
    Rendering, SamplingStats,
};
pub use capture::{
    capture_current_stack, is_saved_frame, saved_frame_principals, saved_frame_slot, slot,
};
pub use frames::RealmOfPrincipals;
pub use in_script::{guard_time, InScript};
pub use jsprof_profiler::{AgentHandle, RealmId, RenderingPhase};
pub use jsprof_symbolizer::{Registered, ScriptInfo, ScriptRegistry, SourceId};
pub use sampling::setup_sampler_thread;
pub use scripts::{is_scripted_proxy, module_source_id, script_source_id};

/// What a panic in a callback is handed to ([`set_panic_handler`]).
pub type PanicHandler = fn(&(dyn Any + Send));

static PANIC_HANDLER: RwLock<Option<PanicHandler>> = RwLock::new(None);

/// **Process start** (optional): what to do with a panic caught in one of this crate's
/// SpiderMonkey callbacks (a bug: page content never makes it panic). jsprof records it as
/// the run's internal error. Without a handler it is printed on stderr. Either way the
/// callback then returns its failure value (the interrupt callback stops the running script).
pub fn set_panic_handler(handler: PanicHandler) {
    *PANIC_HANDLER.write().unwrap_or_else(|e| e.into_inner()) = Some(handler);
}

/// Runs the body of a callback SpiderMonkey calls. A panic must not unwind into C++ (Rust
/// would abort the process): it is caught and given to the panic handler, and the callback
/// returns `failed`.
pub(crate) fn guarded<T>(failed: T, body: impl FnOnce() -> T) -> T {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)) {
        Ok(value) => value,
        Err(payload) => {
            let handler = *PANIC_HANDLER.read().unwrap_or_else(|e| e.into_inner());
            match handler {
                Some(handler) => handler(&*payload),
                None => eprintln!(
                    "jsprof-spidermonkey: a panic in a SpiderMonkey callback: {}",
                    payload
                        .downcast_ref::<&str>()
                        .copied()
                        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
                        .unwrap_or("(no message)")
                ),
            }
            failed
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    static SEEN: Mutex<Vec<String>> = Mutex::new(Vec::new());

    fn record(payload: &(dyn Any + Send)) {
        let message = payload.downcast_ref::<&str>().copied().unwrap_or("?");
        SEEN.lock().unwrap().push(message.to_owned());
    }

    #[test]
    fn a_panic_in_a_callback_goes_to_the_handler_and_the_callback_fails() {
        set_panic_handler(record);
        assert_eq!(guarded(-1, || 7), 7);
        assert_eq!(guarded(-1, || -> i32 { panic!("a bug") }), -1);
        assert_eq!(*SEEN.lock().unwrap(), ["a bug"]);
    }

    #[test]
    fn without_a_runtime_or_an_agent_nothing_happens() {
        let (guards, _) = guard_time();
        {
            let _in_script = InScript::enter();
        }
        assert_eq!(guard_time().0, guards, "no agent: the guard counts nothing");
        assert_eq!(waiting(|| 7), 7);
        assert!(sampling_stats().is_none());
        uninstall_agent();
        release_runtime();
        assert_eq!(prepare_runtime(), Err(AgentError::NoRuntime));
        collect_garbage();
    }
}
