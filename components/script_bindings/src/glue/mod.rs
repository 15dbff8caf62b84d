//! The SpiderMonkey glue: with `jsprof-spidermonkey` (the profiler's agent, which it uses),
//! the only code of jsprof with `unsafe`.
//!
//! It owns the runtime of one event loop and the globals of its windows, and offers the
//! engine (the `jsprof-script` crate) a safe interface: create a window realm (running the
//! prelude that builds its DOM), run classic and module scripts, call the prelude's hooks,
//! run microtasks. Natives the prelude calls reach the host through the [`Host`] trait
//! object of the current thread.
//!
//! Rooting: globals, hook objects and module maps live in `RootedTraceableBox<Heap<_>>`s for
//! the life of the [`Js`]; everything else is `rooted!` on the stack for one call.

use std::cell::RefCell;
use std::ptr::{self, NonNull};
use std::rc::Rc;
use std::sync::{Arc, Mutex};

use jsprof_spidermonkey::InScript;
use mozjs::gc::RootedTraceableBox;
use mozjs::jsapi::{self, Heap, JSContext, JSObject, Value};
use mozjs::jsval::UndefinedValue;
use mozjs::rooted;
use mozjs::rust::{
    transform_str_to_source_text, CompileOptionsWrapper, JSEngine, JSEngineHandle, Runtime,
};

use crate::generated::{DomTypes, Tables};
use crate::host::{Host, ScriptSource};
use crate::runtime::{InterfaceDef, WindowId};

use self::jobs::{track_rejection, JOB_QUEUE_TRAPS};
use self::modules::{load_imported_module, GLOBALS, MODULE_MAPS};
use self::security::{destroy_principals, read_principals, SECURITY_CALLBACKS, WRAP_CALLBACKS};
use self::strings::cstring;

pub(crate) mod bindings;
mod clone;
mod convert;
mod interfaces;
mod jobs;
mod modules;
mod natives;
mod realm;
mod roots;
mod run;
mod security;
mod strings;
pub use self::security::realm_of_principals;

thread_local! {
    static HOST: RefCell<Option<Rc<dyn Host>>> = const { RefCell::new(None) };
    /// The generated interface tables for the embedder's `DomTypes`, set with [`HOST`].
    static INTERFACES: std::cell::Cell<&'static [&'static InterfaceDef]> = const { std::cell::Cell::new(&[]) };
    /// Promises rejected without a handler, waiting for the next microtask checkpoint.
    static REJECTIONS: RefCell<Vec<RootedTraceableBox<Heap<*mut JSObject>>>> = const { RefCell::new(Vec::new()) };
    /// Dynamic imports waiting for the event loop: (window, referrer URL, specifier, request, payload).
    static IMPORTS: RefCell<Vec<PendingImport>> = const { RefCell::new(Vec::new()) };
}

struct PendingImport {
    window: WindowId,
    referrer: String,
    specifier: String,
    request: RootedTraceableBox<Heap<*mut JSObject>>,
    payload: RootedTraceableBox<Heap<Value>>,
}

fn host() -> Rc<dyn Host> {
    #[allow(
        clippy::expect_used,
        reason = "natives only run inside a Js, which set HOST"
    )]
    HOST.with(|h| h.borrow().clone().expect("a Js is alive on this thread"))
}

/// The generated interfaces of this thread's [`Js`], in the order their members' codes use.
fn generated_interfaces() -> &'static [&'static InterfaceDef] {
    INTERFACES.with(std::cell::Cell::get)
}

static ENGINE: Mutex<Option<JSEngineHandle>> = Mutex::new(None);

thread_local! {
    /// The engine itself, owned by the thread that initialised it, until [`shutdown`].
    static ENGINE_OWNER: RefCell<Option<JSEngine>> = const { RefCell::new(None) };
}

/// The process's engine, initialised on first use.
fn engine() -> JSEngineHandle {
    let mut engine = ENGINE.lock().unwrap_or_else(|e| e.into_inner());
    engine
        .get_or_insert_with(|| {
            #[allow(
                clippy::expect_used,
                reason = "no engine without SpiderMonkey; it fails only if initialised twice, which the lock prevents"
            )]
            let owner = JSEngine::init().expect("SpiderMonkey initialises once per process");
            let handle = owner.handle();
            ENGINE_OWNER.with(|o| *o.borrow_mut() = Some(owner));
            handle
        })
        .clone()
}

/// Initialises SpiderMonkey on this thread, which then owns it until [`shutdown`]: a process
/// whose pages run on threads of their own calls this first, on the thread that will shut
/// it down (the first runtime made would otherwise make its thread the owner).
pub fn init() {
    let _ = engine();
}

/// Shuts SpiderMonkey down (`JS_ShutDown`), on the thread that first used it, once every
/// runtime is gone. A process that skips this crashes in SpiderMonkey's static destructors
/// at exit while its helper threads still hold their locks.
pub fn shutdown() {
    drop(ENGINE.lock().unwrap_or_else(|e| e.into_inner()).take());
    ENGINE_OWNER.with(|o| drop(o.borrow_mut().take()));
}

struct Window {
    global: RootedTraceableBox<Heap<*mut JSObject>>,
    hooks: RootedTraceableBox<Heap<*mut JSObject>>,
}

/// A runtime and the realms of its windows. Not `Send`: it lives on its event loop's thread.
pub struct Js {
    windows: Vec<Window>,
    // Dropped last: every root above is released before the runtime goes.
    rt: Runtime,
}

impl std::fmt::Debug for Js {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Js")
            .field("windows", &self.windows.len())
            .finish()
    }
}

/// Enters a realm for the life of the guard.
struct InRealm {
    cx: *mut JSContext,
    old: *mut jsapi::JS::Realm,
}

impl InRealm {
    fn new(cx: *mut JSContext, global: *mut JSObject) -> Self {
        // SAFETY: `cx` is this thread's live context and `global` a rooted global object.
        let old = unsafe { jsapi::JS::EnterRealm(cx, global) };
        InRealm { cx, old }
    }
}

impl Drop for InRealm {
    fn drop(&mut self) {
        // SAFETY: undoes the EnterRealm of `new` on the same context.
        unsafe { jsapi::JS::LeaveRealm(self.cx, self.old) }
    }
}

/// Compile options for a script at `url` whose source starts at (line, column) of its resource.
fn compile_options(
    cx: &mozjs::context::JSContext,
    url: &str,
    line: u32,
    column: u32,
) -> CompileOptionsWrapper {
    let opts = CompileOptionsWrapper::new(cx, cstring(url), line);
    // SAFETY: `opts.ptr` is the live CompileOptions `opts` owns; `column` is a plain field.
    unsafe {
        (*opts.ptr).column = jsapi::JS::ColumnNumberOneOrigin {
            _base: column.max(1),
        };
    }
    opts
}

thread_local! {
    /// URLs of scripts compiled with muted errors, for reporting their exceptions (which
    /// reveal nothing: https://html.spec.whatwg.org/#report-an-exception).
    static MUTED_URLS: RefCell<std::collections::HashSet<String>> = RefCell::default();
}

/// Compiles `source`, a classic script of `url` whose text starts at (line, column) of its
/// resource, registers it for the profiler under its ScriptSource id, and runs it in the
/// current realm. `muted`: it came from an opaque response (its errors and its frames reveal
/// nothing). False, with the exception pending (or after a termination), if it failed.
///
/// # Safety
/// `cx` must be this thread's context, in a window's realm.
unsafe fn compile_and_run_classic(
    cx: *mut JSContext,
    source: &str,
    url: &str,
    line: u32,
    column: u32,
    muted: bool,
) -> bool {
    let Some(nn) = NonNull::new(cx) else {
        return false;
    };
    // SAFETY: per the contract, `nn` is this thread's live context; the wrapper is used only
    // within this call.
    let wrapper = unsafe { mozjs::context::JSContext::from_ptr(nn) };
    let mut opts = compile_options(&wrapper, url, line, column);
    opts.set_muted_errors(muted);
    if muted {
        MUTED_URLS.with(|m| m.borrow_mut().insert(url.to_owned()));
    }
    let mut src = transform_str_to_source_text(source);
    let compiling = scope_compilation(cx, url, line, column, jsprof_scope::ScriptKind::Classic);
    // SAFETY: per the contract, `cx` is this thread's context in a window's realm; `opts.ptr`
    // is the live CompileOptions owned by `opts` and `src` outlives the call. The result is
    // rooted on the next line, before anything can GC.
    let compiled = unsafe { jsapi::JS::Compile1(cx, opts.ptr, &mut src) };
    rooted!(in(cx) let script = compiled);
    drop(compiling);
    if script.get().is_null() {
        return false;
    }
    // SAFETY: `script` is a non-null, rooted script just compiled on this thread.
    let id = unsafe { jsprof_spidermonkey::script_source_id(script.get()) };
    let registered = ScriptSource {
        url,
        text: source,
        line,
        column,
        module: false,
        muted,
    };
    host().register_script(current_window(cx), id, registered);
    rooted!(in(cx) let mut rval = UndefinedValue());
    // SAFETY: per the contract, `cx` is this thread's context in the realm `script` was
    // compiled in; `script` and `rval` are rooted for the call.
    unsafe { jsapi::JS_ExecuteScript(cx, script.handle().into(), rval.handle_mut().into()) }
}

/// The profiler service's `SCRIPT_COMPILATION` event for a script of `url` whose text
/// starts at (line, column) of its resource, compiled in the current window: an inline
/// script's text never starts at 1:1 (it follows its `<script>` tag), a fetched one's
/// always does.
fn scope_compilation(
    cx: *mut JSContext,
    url: &str,
    line: u32,
    column: u32,
    script_kind: jsprof_scope::ScriptKind,
) -> jsprof_scope::EventGuard {
    if !jsprof_scope::record::recording() {
        return jsprof_scope::EventGuard::NONE;
    }
    let frame = current_window(cx).index() as u32 + 1;
    jsprof_scope::record::begin(frame, || jsprof_scope::Details::ScriptCompilation {
        url: ((line, column) == (1, 1)).then(|| url.to_owned()),
        script_kind,
    })
}

/// The first panic caught in the engine (a bug, never page content): the run ends, as at
/// its deadline, and reports it. Process-wide, since any thread's loop may hit one.
static INTERNAL_ERROR: Mutex<Option<String>> = Mutex::new(None);
static HAS_INTERNAL_ERROR: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// The message a panic was raised with (`panic!` gives a `&str` or a `String`).
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".into())
}

/// Records a caught panic as the run's internal error (the first one is kept).
pub fn record_internal_error(payload: &(dyn std::any::Any + Send)) {
    let message = panic_message(payload);
    let mut slot = INTERNAL_ERROR.lock().unwrap_or_else(|e| e.into_inner());
    slot.get_or_insert(message);
    HAS_INTERNAL_ERROR.store(true, std::sync::atomic::Ordering::Release);
}

/// The internal error caught so far, if any.
pub fn internal_error() -> Option<String> {
    if !HAS_INTERNAL_ERROR.load(std::sync::atomic::Ordering::Acquire) {
        return None;
    }
    INTERNAL_ERROR
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone()
}

/// Runs the body of a callback SpiderMonkey calls. A panic must not unwind into C++ (Rust
/// would abort the process): it is caught, recorded as the run's internal error, and the
/// callback returns `failed`, which for a native (false, no exception pending) terminates
/// the running script. The event loop then ends the run (see `page/mod.rs`). The agent's
/// callbacks (`jsprof-spidermonkey`) do the same through its panic handler.
fn guarded<T>(failed: T, body: impl FnOnce() -> T) -> T {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)) {
        Ok(value) => value,
        Err(payload) => {
            record_internal_error(&*payload);
            failed
        }
    }
}

thread_local! {
    /// Set by [`Js::terminate_on_interrupt`]: the next interrupt stops the running script.
    static TERMINATE: RefCell<Option<Arc<std::sync::atomic::AtomicBool>>> = const { RefCell::new(None) };
}

/// The runtime's interrupt callback: false (an uncatchable termination of the running
/// script) once the flag given to [`Js::terminate_on_interrupt`] is set (`--timeout`, a
/// worker's `terminate()`), else true. The profiler agent's own callback sits beside it.
unsafe extern "C" fn on_interrupt(_cx: *mut JSContext) -> bool {
    guarded(false, || {
        let terminate = TERMINATE.with(|t| {
            t.borrow()
                .as_ref()
                .is_some_and(|f| f.load(std::sync::atomic::Ordering::Acquire))
        });
        !terminate
    })
}

/// mozjs's safe-API wrapper around a raw context that SpiderMonkey passed to a callback.
///
/// # Safety
/// `cx` is the live context of this thread.
unsafe fn wrap_cx(cx: *mut JSContext) -> mozjs::context::JSContext {
    #[allow(
        clippy::expect_used,
        reason = "SpiderMonkey never calls back with a null context"
    )]
    let cx = NonNull::new(cx).expect("live context");
    // SAFETY: as the function's contract.
    unsafe { mozjs::context::JSContext::from_ptr(cx) }
}

impl Js {
    /// A runtime on this thread, whose natives call `host` and whose generated interfaces
    /// are implemented by the types of `D`.
    pub fn new<D: DomTypes>(host: Rc<dyn Host>) -> Js {
        let mut rt = Runtime::new(engine());
        HOST.with(|h| *h.borrow_mut() = Some(host));
        INTERFACES.with(|i| i.set(Tables::<D>::INTERFACES));
        // The profiler agent's callbacks (interrupt, GC slices, nursery collections) and
        // every script starting in the Baseline Interpreter, whose frames its walk sees.
        jsprof_spidermonkey::set_panic_handler(record_internal_error);
        #[allow(
            clippy::expect_used,
            reason = "the runtime was just made on this thread; adding a callback fails only out of memory"
        )]
        jsprof_spidermonkey::prepare_runtime().expect("the agent's runtime callbacks");
        // SAFETY: the pointer is only passed straight to SpiderMonkey calls on this thread,
        // while `rt` (which owns the context) lives.
        let cx = unsafe { rt.cx().raw_cx() };
        // The microtask queue lives in the engine; the RustJobQueue only answers the
        // engine's questions, and `perform_microtask_checkpoint` drains the queue.
        // SAFETY: `JOB_QUEUE_TRAPS` is a static table of `extern "C"` functions with the
        // signatures the RustJobQueue expects; it lives for the whole process.
        let queue = unsafe { mozjs::glue::CreateJobQueue(&JOB_QUEUE_TRAPS) };
        // SAFETY: `cx` was just created on this thread and runs no script yet; `queue` is
        // the job queue just created, which the runtime uses for its whole life.
        unsafe { jsapi::SetJobQueue(cx, queue as *mut jsapi::JS::JobQueue) };
        // SAFETY: `cx` is this thread's new context; `track_rejection` has the expected
        // signature and ignores its (null) data pointer.
        unsafe {
            jsapi::JS::SetPromiseRejectionTrackerCallback(
                cx,
                Some(track_rejection),
                ptr::null_mut(),
            )
        };
        // SAFETY: `cx` is this thread's new context, so its runtime is live.
        let runtime = unsafe { jsapi::JS_GetRuntime(cx) };
        // SAFETY: `runtime` is this thread's live runtime; `load_imported_module` has the
        // signature SpiderMonkey expects of a module load hook.
        unsafe { jsapi::JS::SetModuleLoadHook(runtime, Some(load_imported_module)) };
        // Ours stops a runaway script (`terminate_on_interrupt`); the agent's, beside it,
        // takes samples (SpiderMonkey calls every callback of its list).
        // SAFETY: `cx` is this thread's new context; `on_interrupt` has the expected
        // signature.
        let added = unsafe { jsapi::JS_AddInterruptCallback(cx, Some(on_interrupt)) };
        assert!(added);
        // Windows (an iframe and its parent) are realms in separate compartments: objects
        // cross through transparent cross-compartment wrappers.
        // SAFETY: `cx` is this thread's new context; `WRAP_CALLBACKS` is a static table of
        // `extern "C"` functions with the expected signatures, living for the process.
        unsafe { jsapi::JS_SetWrapObjectCallbacks(cx, &WRAP_CALLBACKS) };
        // SAFETY: `cx` is this thread's new context; `destroy_principals` has the expected
        // signature and frees only principals this crate made.
        unsafe { jsapi::JS_InitDestroyPrincipalsCallback(cx, Some(destroy_principals)) };
        // SAFETY: `cx` is this thread's new context; `read_principals` has the expected
        // signature (an `Error`'s cloned stack brings principals with it).
        unsafe { jsapi::JS_InitReadPrincipalsCallback(cx, Some(read_principals)) };
        // SAFETY: `cx` is this thread's new context; `SECURITY_CALLBACKS` is a static table
        // of `extern "C"` functions with the expected signatures, living for the process.
        unsafe { jsapi::JS_SetSecurityCallbacks(cx, &SECURITY_CALLBACKS) };
        Js {
            windows: Vec::new(),
            rt,
        }
    }

    /// The context, in window `w`'s realm for the life of the returned guard.
    /// Whether window `w` exists and was not discarded.
    pub fn is_live(&self, w: WindowId) -> bool {
        self.windows
            .get(w.index())
            .is_some_and(|win| !win.global.get().is_null())
    }

    /// Discards window `w` (its iframe left the document): its global, hooks and module map
    /// are no longer rooted, nor are its pending promises and reflectors, so that its realm
    /// can be collected once the page holds nothing of it. Nothing runs in it any more:
    /// hooks, scripts, settlements and imports for it are dropped.
    pub fn discard_window(&mut self, w: WindowId) {
        if !self.is_live(w) {
            return;
        }
        let global = self.windows[w.index()].global.get();
        roots::release_roots_of(global);
        IMPORTS.with(|i| i.borrow_mut().retain(|import| import.window != w));
        self.windows[w.index()].global.set(ptr::null_mut());
        self.windows[w.index()].hooks.set(ptr::null_mut());
        for table in [&MODULE_MAPS, &GLOBALS] {
            table.with(|t| {
                if let Some(heap) = t.borrow().get(w.index()) {
                    heap.set(ptr::null_mut());
                }
            });
        }
        // The window's realm has its own zone, which allocates nothing from now on, so the
        // collections other windows' allocations trigger (zone GCs) never schedule it: a
        // full GC takes it now, as a browser collects after a window closes.
        let cx = self.cx();
        // SAFETY: this thread's context, outside any realm's script (a task).
        unsafe { jsapi::JS_GC(cx, jsapi::JS::GCReason::API) };
    }

    /// Enters window `w`'s realm; `None` if there is no such window or it was discarded
    /// (nothing runs in a discarded window).
    fn enter_window(&mut self, w: WindowId) -> Option<(*mut JSContext, InRealm)> {
        if !self.is_live(w) {
            return None;
        }
        let cx = self.cx();
        let realm = InRealm::new(cx, self.windows[w.index()].global.get());
        Some((cx, realm))
    }

    fn cx(&mut self) -> *mut JSContext {
        // SAFETY: the pointer is only passed straight to SpiderMonkey calls on this thread.
        unsafe { self.rt.cx().raw_cx() }
    }

    /// Makes the interrupt callback terminate the running script (uncatchably) once `flag` is
    /// set; whoever sets it then requests an interrupt (a watchdog enforcing `--timeout`).
    pub fn terminate_on_interrupt(&mut self, flag: Arc<std::sync::atomic::AtomicBool>) {
        TERMINATE.with(|t| *t.borrow_mut() = Some(flag));
    }

    /// A handle that can interrupt this runtime from another thread (the sampler).
    pub fn interrupter(&self) -> mozjs::rust::ThreadSafeJSContext {
        self.rt.thread_safe_js_context()
    }
}

impl Drop for Js {
    fn drop(&mut self) {
        roots::release_all_roots();
        REJECTIONS.with(|r| r.borrow_mut().clear());
        IMPORTS.with(|i| i.borrow_mut().clear());
        MODULE_MAPS.with(|m| m.borrow_mut().clear());
        GLOBALS.with(|g| g.borrow_mut().clear());
        // The agent goes before the runtime (no walk can be running once it is released).
        jsprof_spidermonkey::release_runtime();
        TERMINATE.with(|t| t.borrow_mut().take());
        self.windows.clear();
        HOST.with(|h| *h.borrow_mut() = None);
    }
}

/// The window whose realm is `realm`, from the realm's private slot.
fn window_of_realm(realm: *mut jsapi::JS::Realm) -> Option<WindowId> {
    if realm.is_null() {
        return None;
    }
    // SAFETY: reads the private pointer set in `new_window` (an index + 1, not a pointer).
    let private = unsafe { jsapi::GetRealmPrivate(realm) } as usize;
    private.checked_sub(1).map(WindowId)
}

/// The window of the realm `cx` is in.
fn current_window(cx: *mut JSContext) -> WindowId {
    // SAFETY: natives run with a realm entered.
    let realm = unsafe { jsapi::GetCurrentRealmOrNull(cx) };
    window_of_realm(realm).unwrap_or(WindowId(0))
}
