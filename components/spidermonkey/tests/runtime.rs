//! The agent beside an embedder's own runtime callbacks, on a real runtime: the embedder's
//! interrupt callback (a watchdog's) and GC slice callback keep working once the agent is
//! installed, and the agent samples a script that never returns until the watchdog stops
//! it. One test: SpiderMonkey initialises once per process.

use std::ffi::CString;
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use jsprof_profiler::{
    Clock, GroupConfig, MarkerSet, MonotonicClock, ProfilerGroup, SessionOptions,
};
use jsprof_spidermonkey::{AgentConfig, InScript, RealmId, ScriptInfo, ScriptRegistry};
use mozjs::jsapi::{self, JSContext, OnNewGlobalHookOption};
use mozjs::jsval::UndefinedValue;
use mozjs::rooted;
use mozjs::rust::{
    transform_str_to_source_text, CompileOptionsWrapper, JSEngine, RealmOptions, Runtime,
    SIMPLE_GLOBAL_CLASS,
};

/// Calls of the embedder's interrupt callback, and whether it stops the script.
static INTERRUPTS: AtomicU32 = AtomicU32::new(0);
static STOP: AtomicBool = AtomicBool::new(false);
/// GC slices the embedder's own GC slice callback saw.
static SLICES: AtomicU32 = AtomicU32::new(0);

/// The embedder's interrupt callback: a watchdog's, which stops the script once told to.
unsafe extern "C" fn embedder_interrupt(_cx: *mut JSContext) -> bool {
    INTERRUPTS.fetch_add(1, Ordering::SeqCst);
    !STOP.load(Ordering::SeqCst)
}

/// The embedder's GC slice callback, installed before the agent's.
unsafe extern "C" fn embedder_gc_slice(
    _cx: *mut JSContext,
    _progress: jsapi::JS::GCProgress,
    _desc: *const jsapi::JS::GCDescription,
) {
    SLICES.fetch_add(1, Ordering::SeqCst);
}

const SPIN: &str = "function spinForever() {\n  let x = 0;\n  for (;;) {\n    x = (x * 31 + 7) % 1000003;\n  }\n}\n";
const REALM: RealmId = RealmId(3);

#[test]
fn the_agent_sits_beside_the_embedders_callbacks() {
    let group = ProfilerGroup::new(GroupConfig {
        base_interval: Duration::from_millis(1),
        on_sampler_thread: Some(jsprof_spidermonkey::setup_sampler_thread),
        ..GroupConfig::default()
    })
    .unwrap();
    // Without a runtime on this thread there is nothing to install on.
    assert_eq!(
        jsprof_spidermonkey::prepare_runtime(),
        Err(jsprof_spidermonkey::AgentError::NoRuntime)
    );

    let engine = JSEngine::init().unwrap();
    let mut rt = Runtime::new(engine.handle());
    let interrupter = rt.thread_safe_js_context();
    // SAFETY: passed only to SpiderMonkey calls on this thread while `rt` lives.
    let cx = unsafe { rt.cx().raw_cx() };
    // The embedder's callbacks come first, as a script thread's do.
    // SAFETY: `cx` is this thread's live context; the callback has the expected signature.
    assert!(unsafe { jsapi::JS_AddInterruptCallback(cx, Some(embedder_interrupt)) });
    // SAFETY: as above.
    let before = unsafe { jsapi::JS::SetGCSliceCallback(cx, Some(embedder_gc_slice)) };
    assert!(before.is_none());
    jsprof_spidermonkey::prepare_runtime().unwrap();
    // Twice is once.
    jsprof_spidermonkey::prepare_runtime().unwrap();

    // Every root lives in this block, and is released before the runtime goes.
    {
        let options = RealmOptions::default();
        // SAFETY: `cx` is live, `options` outlives the call; rooted on the next line.
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
        // SAFETY: `cx` is live and `global` a rooted global; left at the end.
        let previous_realm = unsafe { jsapi::JS::EnterRealm(cx, global.get()) };

        // The embedder's GC slice callback is still called, after the agent's.
        // SAFETY: `cx` is this thread's context, outside any script.
        unsafe { jsapi::JS_GC(cx, jsapi::JS::GCReason::API) };
        assert!(
            SLICES.load(Ordering::SeqCst) > 0,
            "the embedder's GC callback ran"
        );

        let registry = ScriptRegistry::new();
        let agent = jsprof_spidermonkey::install_agent(
            interrupter.clone(),
            &group,
            registry.clone(),
            AgentConfig {
                realm: REALM,
                ..AgentConfig::default()
            },
        )
        .unwrap();
        // Installing again gives the same agent.
        let again = jsprof_spidermonkey::install_agent(
            interrupter.clone(),
            &group,
            registry.clone(),
            AgentConfig::default(),
        )
        .unwrap();
        assert_eq!(again.id(), agent.id());

        // A rendering phase is the agent's marker while its guard lives; phases nest, and
        // each guard's drop restores the one before it.
        {
            use jsprof_profiler::ProfilerMarker as M;
            use jsprof_spidermonkey::{Rendering, RenderingPhase};
            let outside = agent.marker();
            let rendering = Rendering::enter(RenderingPhase::Style);
            assert_eq!(agent.marker(), Some(M::Style));
            rendering.switch(RenderingPhase::Layout);
            {
                let _restyle = Rendering::enter(RenderingPhase::Style);
                assert_eq!(agent.marker(), Some(M::Style));
            }
            assert_eq!(agent.marker(), Some(M::Layout));
            {
                let _in_script = InScript::enter();
                assert_eq!(agent.marker(), Some(M::Layout), "a forced layout is layout");
            }
            drop(rendering);
            assert_eq!(agent.marker(), outside);
        }

        let opts = CompileOptionsWrapper::new(rt.cx_no_gc(), CString::from(c"spin.js"), 1);
        let mut source = transform_str_to_source_text(SPIN);
        // SAFETY: `cx` is in the global's realm; `opts` and `source` outlive the call; rooted
        // on the next line.
        let compiled = unsafe { jsapi::JS::Compile1(cx, opts.ptr, &mut source) };
        rooted!(in(cx) let script = compiled);
        assert!(!script.get().is_null());
        registry.register(&ScriptInfo {
            // SAFETY: a live, rooted script just compiled on this thread.
            source_id: unsafe { jsprof_spidermonkey::script_source_id(script.get()) },
            realm: REALM,
            url: "https://embedder.test/spin.js",
            source: SPIN,
            line: 1,
            column: 1,
            module: false,
            muted: false,
        });
        {
            let _in_script = InScript::enter();
            rooted!(in(cx) let mut rval = UndefinedValue());
            // SAFETY: `cx` is in the script's realm; `script` and `rval` are rooted.
            let defined = unsafe {
                jsapi::JS_ExecuteScript(cx, script.handle().into(), rval.handle_mut().into())
            };
            assert!(defined);
        }

        jsprof_spidermonkey::enable_sampling();
        let session = group
            .start_session(SessionOptions {
                agent,
                realm: REALM,
                sample_interval: 1.0,
                max_buffer_size: 100_000,
                buffer_policy: jsprof_profiler::BufferPolicy::Stop,
                time_origin: MonotonicClock.now(),
                cross_origin_isolated: false,
                markers: MarkerSet::NONE,
                symbolizer: registry.clone(),
                on_buffer_full: None,
                paused: false,
            })
            .unwrap();

        // The watchdog: once the agent's sampling has interrupted the script 30 times (every
        // interrupt reaches both callbacks), it stops the script through the embedder's
        // callback. A generous deadline only bounds a broken run.
        let watchdog = {
            let interrupter = interrupter.clone();
            std::thread::spawn(move || {
                let deadline = Instant::now() + Duration::from_secs(120);
                while INTERRUPTS.load(Ordering::SeqCst) < 30 && Instant::now() < deadline {
                    std::thread::sleep(Duration::from_millis(1));
                }
                STOP.store(true, Ordering::SeqCst);
                interrupter.request_interrupt_callback();
            })
        };
        {
            let _in_script = InScript::enter();
            let opts = CompileOptionsWrapper::new(rt.cx_no_gc(), CString::from(c"driver"), 1);
            let mut source = transform_str_to_source_text("spinForever();");
            rooted!(in(cx) let mut rval = UndefinedValue());
            // SAFETY: `cx` is in the global's realm; `opts`, `source` and `rval` outlive the call.
            let ran = unsafe {
                jsapi::JS::Evaluate2(cx, opts.ptr, &mut source, rval.handle_mut().into())
            };
            // Stopped by the embedder's callback: an uncatchable termination, no exception.
            assert!(!ran);
            // SAFETY: `cx` is this thread's live context.
            assert!(!unsafe { jsapi::JS_IsExceptionPending(cx) });
        }
        watchdog.join().unwrap();
        assert!(INTERRUPTS.load(Ordering::SeqCst) >= 30);

        let (tx, rx) = mpsc::channel();
        session
            .stop(move |trace| {
                let _ = tx.send(trace);
            })
            .unwrap();
        let trace = rx.recv_timeout(Duration::from_secs(60)).unwrap();
        // The samples the interrupts took: spinForever at its `(` (line 1, column 21).
        let spin = trace
            .frames
            .iter()
            .position(|f| f.name == "spinForever")
            .unwrap_or_else(|| panic!("spinForever in {trace:?}"));
        assert_eq!(
            (trace.frames[spin].line, trace.frames[spin].column),
            (Some(1), Some(21))
        );
        assert_eq!(trace.resources, ["https://embedder.test/spin.js"]);
        assert!(trace.samples.iter().any(|s| s.stack_id.is_some()));

        let stats = jsprof_spidermonkey::sampling_stats().unwrap();
        assert!(stats.walks > 0, "{stats:?}");
        // SAFETY: undoes the EnterRealm above.
        unsafe { jsapi::JS::LeaveRealm(cx, previous_realm) };
    }
    jsprof_spidermonkey::release_runtime();
    assert!(jsprof_spidermonkey::sampling_stats().is_none());
    drop(rt);
    drop(engine);
}
