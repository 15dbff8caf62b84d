//! The sampling agent on a bare mozjs runtime, with none of jsprof's DOM: what a mozjs
//! embedder (a Servo-style script thread) does to make the JS Self-Profiling API real.
//!
//! `jsprof-embed [MS]` compiles `burn.js` (functions that burn CPU) and registers it,
//! profiles `burn(MS)` (default 500) with a `ProfilerGroup` session at 1 ms, and prints the
//! spec's trace as JSON on its first line, then how often each function was on the stack.
//!
//! Each step is marked with where a script thread takes it (the table in
//! `jsprof-spidermonkey`'s docs). The JSAPI calls of an embedder are its own, and `unsafe`
//! as in any mozjs embedder; every block says why it is sound.

use std::ffi::CString;
use std::process::ExitCode;
use std::ptr::{self, NonNull};
use std::sync::mpsc;
use std::time::Duration;

use jsprof_profiler::{
    Clock, GroupConfig, MarkerSet, MonotonicClock, ProfilerGroup, ProfilerTrace, SessionOptions,
};
use jsprof_spidermonkey::{AgentConfig, InScript, RealmId, ScriptInfo, ScriptRegistry};
use mozjs::jsapi::{self, JSContext, OnNewGlobalHookOption};
use mozjs::jsval::UndefinedValue;
use mozjs::rooted;
use mozjs::rust::{
    transform_str_to_source_text, CompileOptionsWrapper, JSEngine, RealmOptions, Runtime,
    SIMPLE_GLOBAL_CLASS,
};

/// The script whose functions are profiled.
const BURN: &str = include_str!("../burn.js");
/// Its URL in the trace.
const BURN_URL: &str = concat!("file://", env!("CARGO_MANIFEST_DIR"), "/burn.js");
/// The one realm of this embedder (realm ids are the embedder's to choose).
const REALM: RealmId = RealmId(1);
/// How long the trace may take to build.
const BUILD_TIMEOUT: Duration = Duration::from_secs(60);

fn main() -> ExitCode {
    let ms = match std::env::args().nth(1).map(|a| a.parse::<u32>()) {
        None => 500,
        Some(Ok(ms)) => ms,
        Some(Err(_)) => {
            eprintln!("usage: jsprof-embed [MS]   (how long burn() runs, in ms)");
            return ExitCode::from(2);
        }
    };
    match profile(ms) {
        Ok(trace) => {
            println!("{}", trace.to_json());
            print!("{}", summary(&trace));
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("jsprof-embed: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Profiles `burn(ms)` in a fresh runtime and returns the trace.
fn profile(ms: u32) -> Result<ProfilerTrace, String> {
    // Process start: the process's one ProfilerGroup (its sampler thread starts with the
    // first session), with the agent's sampler-thread setup.
    let group = ProfilerGroup::new(GroupConfig {
        base_interval: Duration::from_millis(1),
        on_sampler_thread: Some(jsprof_spidermonkey::setup_sampler_thread),
        ..GroupConfig::default()
    })
    .map_err(|e| e.to_string())?;
    let engine = JSEngine::init().map_err(|e| format!("SpiderMonkey: {e:?}"))?;
    let mut rt = Runtime::new(engine.handle());
    // Runtime creation: the agent's callbacks beside any the embedder has.
    jsprof_spidermonkey::prepare_runtime().map_err(|e| e.to_string())?;
    let interrupter = rt.thread_safe_js_context();
    // SAFETY: the pointer is only passed to SpiderMonkey calls on this thread while `rt`
    // (which owns the context) lives.
    let cx = unsafe { rt.cx().raw_cx() };
    let trace = {
        // Realm creation: a global (no principals: this embedder has one realm, whose id is
        // REALM; frames take it from the registry).
        let options = RealmOptions::default();
        // SAFETY: `cx` is this thread's live context; `options` outlives the call. The global
        // is rooted on the next line, before anything can GC.
        let new_global = unsafe {
            jsapi::JS_NewGlobalObject(
                cx,
                &SIMPLE_GLOBAL_CLASS,
                ptr::null_mut(),
                OnNewGlobalHookOption::FireOnNewGlobalHook,
                &*options,
            )
        };
        rooted!(in(cx) let global = new_global);
        if global.get().is_null() {
            return Err("cannot create a global".into());
        }
        // SAFETY: `cx` is live and `global` a rooted global; left below, before it goes.
        let previous_realm = unsafe { jsapi::JS::EnterRealm(cx, global.get()) };
        let result = run_in_realm(cx, &mut rt, interrupter, &group, ms);
        // SAFETY: undoes the EnterRealm above on the same context.
        unsafe { jsapi::JS::LeaveRealm(cx, previous_realm) };
        result
    };
    // Shutdown: the agent goes before the runtime.
    jsprof_spidermonkey::release_runtime();
    drop(rt);
    drop(engine);
    trace
}

/// Registers and runs `burn.js`, then profiles `burn(ms)`, in the entered realm.
fn run_in_realm(
    cx: *mut JSContext,
    rt: &mut Runtime,
    interrupter: mozjs::rust::ThreadSafeJSContext,
    group: &ProfilerGroup,
    ms: u32,
) -> Result<ProfilerTrace, String> {
    // Sampling support: this thread's runtime becomes an agent of the group.
    let registry = ScriptRegistry::new();
    let agent = jsprof_spidermonkey::install_agent(
        interrupter,
        group,
        registry.clone(),
        AgentConfig {
            realm: REALM,
            ..AgentConfig::default()
        },
    )
    .map_err(|e| e.to_string())?;

    // Script compilation: compile, register under its ScriptSource id, then run.
    let opts = CompileOptionsWrapper::new(rt.cx_no_gc(), CString::from(c"burn.js"), 1);
    let mut source = transform_str_to_source_text(BURN);
    // SAFETY: `cx` is this thread's context, in the global's realm; `opts.ptr` is the live
    // CompileOptions `opts` owns and `source` outlives the call. The script is rooted on the
    // next line, before anything can GC.
    let compiled = unsafe { jsapi::JS::Compile1(cx, opts.ptr, &mut source) };
    rooted!(in(cx) let script = compiled);
    if script.get().is_null() {
        return Err(format!("burn.js: {}", take_exception(cx)));
    }
    registry.register(&ScriptInfo {
        // SAFETY: `script` is a live, rooted script just compiled on this thread.
        source_id: unsafe { jsprof_spidermonkey::script_source_id(script.get()) },
        realm: REALM,
        url: BURN_URL,
        source: BURN,
        line: 1,
        column: 1,
        module: false,
        muted: false,
    });
    {
        // Task entry: the agent is in script while JS runs.
        let _in_script = InScript::enter();
        rooted!(in(cx) let mut rval = UndefinedValue());
        // SAFETY: `cx` is this thread's context, in the realm `script` was compiled in;
        // `script` and `rval` are rooted.
        let ran = unsafe {
            jsapi::JS_ExecuteScript(cx, script.handle().into(), rval.handle_mut().into())
        };
        if !ran {
            return Err(format!("burn.js: {}", take_exception(cx)));
        }
    }

    // A profiler starts: the instrumentation, then a session of the realm.
    jsprof_spidermonkey::enable_sampling();
    let session = group
        .start_session(SessionOptions {
            agent,
            realm: REALM,
            sample_interval: 1.0,
            max_buffer_size: 100_000,
            buffer_policy: jsprof_profiler::BufferPolicy::Stop,
            time_origin: MonotonicClock.now(),
            // A cross-origin-isolated context: samples carry the markers extension's
            // `script` while the in-script guard is held.
            cross_origin_isolated: true,
            markers: MarkerSet::for_context(true, true),
            symbolizer: registry.clone(),
            on_buffer_full: None,
            paused: false,
        })
        .map_err(|e| e.to_string())?;

    // A task: the embedder's own driver code, which is never registered (its frames are
    // hidden, like any source the registry does not know).
    {
        let _in_script = InScript::enter();
        let driver = format!("burn({ms});");
        let opts = CompileOptionsWrapper::new(rt.cx_no_gc(), CString::from(c"driver"), 1);
        let mut source = transform_str_to_source_text(&driver);
        rooted!(in(cx) let mut rval = UndefinedValue());
        // SAFETY: `cx` is this thread's context, in the global's realm; `opts.ptr` is live,
        // `source` outlives the call and `rval` is rooted.
        let ran =
            unsafe { jsapi::JS::Evaluate2(cx, opts.ptr, &mut source, rval.handle_mut().into()) };
        if !ran {
            return Err(format!("burn({ms}): {}", take_exception(cx)));
        }
    }

    // The profiler stops: the trace is built on the group's builder thread.
    let (tx, rx) = mpsc::channel();
    session
        .stop(move |trace| {
            let _ = tx.send(trace);
        })
        .map_err(|e| e.to_string())?;
    rx.recv_timeout(BUILD_TIMEOUT)
        .map_err(|_| "the trace was not built".to_string())
}

/// The pending exception as a string (cleared), for an error message.
fn take_exception(cx: *mut JSContext) -> String {
    rooted!(in(cx) let mut exception = UndefinedValue());
    // SAFETY: `cx` is this thread's live context; `exception` is rooted.
    if !unsafe { jsapi::JS_GetPendingException(cx, exception.handle_mut().into()) } {
        return "an uncatchable error".into();
    }
    // SAFETY: `cx` is this thread's live context.
    unsafe { jsapi::JS_ClearPendingException(cx) };
    let Some(raw) = NonNull::new(cx) else {
        return "an exception".into();
    };
    // SAFETY: `raw` is this thread's live context; the wrapper is used within this call.
    let mut wrapper = unsafe { mozjs::context::JSContext::from_ptr(raw) };
    // SAFETY: `exception` is rooted; ToString may run the exception's `toString`.
    let string = unsafe { mozjs::rust::ToString(&mut wrapper, exception.handle()) };
    match NonNull::new(string) {
        // SAFETY: a live string just made, read before anything can GC.
        Some(string) => unsafe { mozjs::conversions::jsstr_to_string(&wrapper, string) },
        None => {
            // SAFETY: `cx` is this thread's live context (its `toString` threw).
            unsafe { jsapi::JS_ClearPendingException(cx) };
            "an exception".into()
        }
    }
}

/// How often each function was on the stack (samples whose stack holds it), most first.
fn summary(trace: &ProfilerTrace) -> String {
    let mut on_stack = vec![0u32; trace.frames.len()];
    let mut with_stack = 0;
    for sample in &trace.samples {
        let Some(mut stack) = sample.stack_id else {
            continue;
        };
        with_stack += 1;
        let mut seen = vec![false; trace.frames.len()];
        loop {
            let node = trace.stacks[stack as usize];
            let frame = node.frame_id as usize;
            if !seen[frame] {
                seen[frame] = true;
                on_stack[frame] += 1;
            }
            match node.parent_id {
                Some(parent) => stack = parent,
                None => break,
            }
        }
    }
    let mut order: Vec<usize> = (0..trace.frames.len()).collect();
    order.sort_by_key(|&f| std::cmp::Reverse(on_stack[f]));
    let mut out = format!(
        "{} samples, {} with a stack; on the stack:\n",
        trace.samples.len(),
        with_stack
    );
    for f in order {
        let frame = &trace.frames[f];
        let name = if frame.name.is_empty() {
            "(anonymous)"
        } else {
            &frame.name
        };
        let at = match (frame.line, frame.column) {
            (Some(line), Some(column)) => format!("burn.js:{line}:{column}"),
            _ => String::new(),
        };
        out += &format!("  {:>5}  {name} {at}\n", on_stack[f]);
    }
    out
}
