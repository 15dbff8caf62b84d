//! Running code in a window: classic and module scripts, dynamic imports, promise
//! settlement, the prelude's hooks, exceptions and the microtask checkpoint.

use std::ffi::CStr;
use std::ptr;

use jsprof_spidermonkey::InScript;
use mozjs::jsapi::{self, HandleValueArray, JSContext, JSScript, Value};
use mozjs::jsval::{DoubleValue, NullValue, ObjectValue, UndefinedValue};
use mozjs::rooted;

use crate::runtime::{Arg, RootRef, Settlement, TaskJs, WindowId};

use super::modules::{compile_module, load_module, module_map, modules_failed, modules_loaded};
use super::strings::{new_latin1_string, new_string, throw_error};
use super::{
    bindings, compile_and_run_classic, host, window_of_realm, InRealm, Js, IMPORTS, MUTED_URLS,
    REJECTIONS,
};

impl Js {
    /// Takes the pending exception as text (for errors that cannot be reported to a page).
    pub(super) fn take_exception_text(&mut self) -> String {
        rooted!(in(self.cx()) let mut exn = UndefinedValue());
        match mozjs::rust::error_info_from_exception_stack(self.rt.cx(), exn.handle_mut()) {
            Some(info) => format!(
                "{} ({}:{}:{})",
                info.message, info.filename, info.line, info.col
            ),
            None => "unknown error".into(),
        }
    }

    /// Reports the pending exception to window `w`'s page (its `error` event, then stderr).
    pub(super) fn report_exception(&mut self, w: WindowId) {
        self.report_exception_in(w, None)
    }

    /// Reports the pending exception of running `script` (its URL, start line and column,
    /// and whether its errors are muted), whose errors may carry no position of their own:
    /// SpiderMonkey's "too much recursion" while compiling, an out-of-memory.
    pub(super) fn report_exception_in(
        &mut self,
        w: WindowId,
        script: Option<(&str, u32, u32, bool)>,
    ) {
        let cx = self.cx();
        // SAFETY: a query of this thread's context.
        if !unsafe { jsapi::JS_IsExceptionPending(cx) } {
            // An uncatchable termination (the --timeout watchdog): nothing to report.
            return;
        }
        rooted!(in(cx) let mut exn = UndefinedValue());
        let Some(mut info) =
            mozjs::rust::error_info_from_exception_stack(self.rt.cx(), exn.handle_mut())
        else {
            return;
        };
        let mut exn_value = exn.get();
        let muted_script = match script {
            Some((url, line, column, muted)) if info.filename.is_empty() => {
                info.filename = url.to_owned();
                info.line = line;
                info.col = column;
                muted
            }
            _ => false,
        };
        if muted_script || MUTED_URLS.with(|m| m.borrow().contains(&info.filename)) {
            // https://html.spec.whatwg.org/#report-an-exception: muted errors reveal nothing.
            info = mozjs::rust::ErrorInfo {
                message: "Script error.".into(),
                filename: String::new(),
                line: 0,
                col: 0,
            };
            exn_value = NullValue();
        }
        self.call_hook_with_value(
            w,
            c"reportException",
            exn_value,
            &[
                Arg::Str(&info.message),
                Arg::Str(&info.filename),
                Arg::Num(info.line as f64),
                Arg::Num(info.col as f64),
            ],
        );
    }

    /// Compiles and runs a classic script in window `w`. Errors are reported to the page;
    /// returns whether the script completed.
    pub fn run_classic(
        &mut self,
        w: WindowId,
        source: &str,
        url: &str,
        line: u32,
        column: u32,
        muted: bool,
    ) -> bool {
        let Some((cx, _realm)) = self.enter_window(w) else {
            return false;
        };
        let _in_script = InScript::enter();
        // SAFETY: in window `w`'s realm on this thread's context.
        let ok = unsafe { compile_and_run_classic(cx, source, url, line, column, muted) };
        if !ok {
            self.report_exception_in(w, Some((url, line, column, muted)));
        }
        ok
    }

    /// Compiles, links and evaluates a module script in window `w`, loading its imports
    /// through the host. Errors are reported to the page.
    pub fn run_module(
        &mut self,
        w: WindowId,
        source: &str,
        url: &str,
        line: u32,
        column: u32,
    ) -> bool {
        let Some((cx, _realm)) = self.enter_window(w) else {
            return false;
        };
        let _in_script = InScript::enter();
        let ok = {
            // SAFETY: `cx` is this thread's context in window `w`'s realm, whose module map
            // (rooted by MODULE_MAPS) is passed; the module is registered in that map and
            // rooted on the next line, before anything can GC.
            let compiled = unsafe { compile_module(cx, module_map(w), source, url, line, column) };
            rooted!(in(cx) let module = compiled);
            if module.get().is_null() {
                false
            } else {
                // SAFETY: in window `w`'s realm on this thread; `module` is rooted.
                if !unsafe { load_requested_modules(cx, module.handle().into()) } {
                    false
                } else {
                    rooted!(in(cx) let mut promise = UndefinedValue());
                    // SAFETY: in window `w`'s realm on this thread; `module` (linked by
                    // `modules_loaded`) and `promise` are rooted.
                    let ok = unsafe {
                        jsapi::JS::ModuleEvaluate(
                            cx,
                            module.handle().into(),
                            promise.handle_mut().into(),
                        )
                    };
                    if ok && promise.get().is_object() {
                        // Evaluation errors reject this promise: the prelude reports them.
                        let p = promise.get();
                        self.call_hook_with_value(w, c"watchModule", p, &[Arg::Str(url)]);
                    }
                    ok
                }
            }
        };
        if !ok {
            self.report_exception_in(w, Some((url, line, column, false)));
        }
        ok
    }

    /// Completes the dynamic imports waiting since the last call.
    pub fn finish_dynamic_imports(&mut self) {
        let pending = IMPORTS.with(|i| std::mem::take(&mut *i.borrow_mut()));
        for import in pending {
            let _in_script = InScript::enter();
            let w = import.window;
            let Some((cx, _realm)) = self.enter_window(w) else {
                continue;
            };
            // Request and payload stay rooted in `import` for the whole loop body; the module
            // is rooted before the next GC.
            {
                rooted!(in(cx) let request = import.request.get());
                rooted!(in(cx) let payload = import.payload.get());
                let url =
                    url::Url::parse(&import.referrer).and_then(|base| base.join(&import.specifier));
                let module = match url {
                    // SAFETY: `cx` is this thread's context in window `w`'s realm, whose
                    // module map (rooted by MODULE_MAPS) is passed.
                    Ok(url) => unsafe { load_module(cx, w, module_map(w), url.as_str()) },
                    Err(e) => {
                        let message = format!(
                            "cannot resolve module specifier '{}': {e}",
                            import.specifier
                        );
                        // SAFETY: `cx` is this thread's live context.
                        unsafe { throw_error(cx, &message) };
                        ptr::null_mut()
                    }
                };
                rooted!(in(cx) let module = module);
                let mut ok = !module.get().is_null();
                if ok {
                    // SAFETY: in window `w`'s realm on this thread; `module` is rooted.
                    ok = unsafe { load_requested_modules(cx, module.handle().into()) };
                }
                let finished = if ok {
                    rooted!(in(cx) let no_referrer = ptr::null_mut::<JSScript>());
                    // SAFETY: in window `w`'s realm on this thread; `request`, `payload`,
                    // `module` and the null referrer are rooted.
                    unsafe {
                        jsapi::JS::FinishLoadingImportedModule(
                            cx,
                            no_referrer.handle().into(),
                            request.handle().into(),
                            payload.handle().into(),
                            module.handle().into(),
                            false,
                        )
                    }
                } else {
                    // SAFETY: in window `w`'s realm on this thread, with an exception pending
                    // (or after a termination); `payload` is rooted.
                    unsafe {
                        jsapi::JS::FinishLoadingImportedModuleFailedWithPendingException(
                            cx,
                            payload.handle().into(),
                        )
                    }
                };
                if !finished {
                    drop(_realm);
                    self.report_exception(w);
                }
            }
        }
    }

    /// Settles a promise of window `w` (a task: the caller runs a microtask checkpoint).
    pub fn settle(&mut self, w: WindowId, settlement: Settlement) {
        let Some((cx, _realm)) = self.enter_window(w) else {
            return;
        };
        let _in_script = InScript::enter();
        rooted!(in(cx) let hooks = self.windows[w.index()].hooks.get());
        rooted!(in(cx) let mut dom_exception = UndefinedValue());
        // SAFETY: in the window's realm on this thread; `hooks` and `dom_exception` are
        // rooted; the name is a static C string.
        let got = unsafe {
            jsapi::JS_GetProperty(
                cx,
                hooks.handle().into(),
                c"DOMException".as_ptr(),
                dom_exception.handle_mut().into(),
            )
        };
        if got {
            // SAFETY: `cx` is this thread's context in window `w`'s realm; `dom_exception`
            // is rooted.
            unsafe { bindings::settle(cx, settlement, dom_exception.handle().into()) };
        } else {
            // SAFETY: `cx` is this thread's live context.
            unsafe { jsapi::JS_ClearPendingException(cx) };
        }
    }

    /// Tells window `parent` that its iframe number `index` has window `child`
    /// (`frames[index]`, `contentWindow`). Only indices cross: each realm asks for the
    /// window objects it may have (`windowFor`), so a window of another origin never
    /// reaches it.
    pub fn attach_frame(&mut self, parent: WindowId, index: u32, child: WindowId) {
        self.call_hook(
            parent,
            c"attachFrame",
            &[Arg::Num(f64::from(index)), Arg::Num(child.index() as f64)],
        );
    }

    /// Fires a trusted event named `type_` at `target` (if it is still rooted).
    pub fn fire_event(&mut self, w: WindowId, target: RootRef, type_: &str) {
        let obj = bindings::object_of(target);
        if obj.is_null() {
            return;
        }
        self.call_hook_with_value(w, c"fireEvent", ObjectValue(obj), &[Arg::Str(type_)]);
    }

    /// Calls hook `name` of window `w` with `args`. Errors thrown by the hook are reported.
    pub fn call_hook(&mut self, w: WindowId, name: &CStr, args: &[Arg]) -> bool {
        self.call_hook_with_value(w, name, UndefinedValue(), args)
    }

    /// Calls hook `name` with `first` (a JS value) followed by `args`.
    pub(super) fn call_hook_with_value(
        &mut self,
        w: WindowId,
        name: &CStr,
        first: Value,
        args: &[Arg],
    ) -> bool {
        let _event = scope_evaluation(w, name, args);
        let Some((cx, _realm)) = self.enter_window(w) else {
            return false;
        };
        // The hooks object is rooted by the window; `first` is rooted right away and every
        // argument value is rooted in `argv` before the call.
        let ok = {
            rooted!(in(cx) let mut first = first);
            // A value from another window's compartment (its global) crosses as a wrapper.
            // SAFETY: `cx` is this thread's context in window `w`'s realm; `first` is rooted.
            let wrapped = unsafe { jsapi::JS_WrapValue(cx, first.handle_mut().into()) };
            rooted!(in(cx) let hooks = self.windows[w.index()].hooks.get());
            rooted!(in(cx) let mut f = UndefinedValue());
            if !wrapped
                // SAFETY: in window `w`'s realm on this thread; `hooks` and `f` are rooted;
                // `name` is a C string outliving the call.
                || !unsafe {
                    jsapi::JS_GetProperty(
                        cx,
                        hooks.handle().into(),
                        name.as_ptr(),
                        f.handle_mut().into(),
                    )
                }
            {
                false
            } else {
                rooted!(in(cx) let argv = mozjs::gc::ValueArray::<6>::new([UndefinedValue(); 6]));
                // SAFETY: the pointer is to `argv`'s six rooted slots, which stay in place
                // (the root is pinned on the stack) for as long as `argv` lives.
                let slots = unsafe { argv.get_mut_ptr() };
                let mut n = 0;
                if !first.get().is_undefined() {
                    // SAFETY: `slots` points at `argv`'s first slot, a rooted Value no one
                    // else accesses now.
                    unsafe { *slots = first.get() };
                    n = 1;
                }
                for a in args.iter().take(6 - n) {
                    // In bounds: `n` < 6 (at most 6 - n arguments are taken after `first`).
                    let slot = slots.wrapping_add(n);
                    match a {
                        // SAFETY: `slot` is one of `argv`'s six rooted slots.
                        Arg::Num(x) => unsafe { *slot = DoubleValue(*x) },
                        Arg::Str(s) => {
                            rooted!(in(cx) let mut v = UndefinedValue());
                            // SAFETY: `cx` is this thread's context, in window `w`'s realm.
                            unsafe { new_string(cx, s, v.handle_mut()) };
                            // SAFETY: `slot` is one of `argv`'s six rooted slots.
                            unsafe { *slot = v.get() };
                        }
                        Arg::Bytes(b) => {
                            rooted!(in(cx) let mut v = UndefinedValue());
                            // SAFETY: `cx` is this thread's context, in window `w`'s realm.
                            unsafe { new_latin1_string(cx, b, v.handle_mut()) };
                            // SAFETY: `slot` is one of `argv`'s six rooted slots.
                            unsafe { *slot = v.get() };
                        }
                    }
                    n += 1;
                }
                let all = HandleValueArray::from(&argv);
                let args = HandleValueArray {
                    length_: n,
                    elements_: all.elements_,
                };
                rooted!(in(cx) let mut rval = UndefinedValue());
                let _in_script = InScript::enter();
                // SAFETY: in window `w`'s realm on this thread; `hooks`, `f`, the arguments
                // (the first `n` slots of `argv`) and `rval` are rooted.
                unsafe {
                    jsapi::JS_CallFunctionValue(
                        cx,
                        hooks.handle().into(),
                        f.handle().into(),
                        &args,
                        rval.handle_mut().into(),
                    )
                }
            }
        };
        if !ok {
            if name == c"reportException" {
                // Reporting itself failed: nothing is left to report it but stderr.
                let text = self.take_exception_text();
                // Printing is the end of the line: if it fails, nothing is left to tell.
                let _ = host().print(w, true, format!("Uncaught {text}"));
            } else {
                // The page's own code (a timer callback, a listener) threw through the hook.
                self.report_exception(w);
            }
        }
        ok
    }

    /// A microtask checkpoint: runs every job, then reports promises still rejected without
    /// a handler to their pages.
    pub fn perform_microtask_checkpoint(&mut self) {
        let cx = self.cx();
        // The profiler service's microtask evaluation: from the first job run to the end.
        let mut event = jsprof_scope::EventGuard::NONE;
        loop {
            // A JS microtask runs in the realm of its execution global, as MicroTask.h
            // requires, and stays rooted.
            let failed_in = {
                // SAFETY: the microtask queue belongs to this context, on this thread.
                let task = unsafe { jsapi::DequeueNextRegularMicroTask(cx) };
                if task.is_null() || task.is_undefined() {
                    break;
                }
                // SAFETY: `task` is the live microtask just dequeued.
                if !unsafe { jsapi::IsJSMicroTask(&task) } {
                    continue;
                }
                // SAFETY: `task` is a JS microtask (checked above); the job is rooted on the
                // next line, before anything can GC.
                let job = unsafe { jsapi::ToUnwrappedJSMicroTask(&task) };
                rooted!(in(cx) let job = job);
                // SAFETY: `job` is a rooted JS microtask.
                let global = unsafe { jsapi::GetExecutionGlobalFromJSMicroTask(job.get()) };
                if global.is_null() {
                    continue;
                }
                rooted!(in(cx) let global = global);
                let _realm = InRealm::new(cx, global.get());
                if !event.is_recording() && jsprof_scope::record::recording() {
                    let frame = super::current_window(cx).index() as u32 + 1;
                    event = jsprof_scope::record::begin(frame, || {
                        evaluation(jsprof_scope::EvalKind::Microtask, None)
                    });
                }
                let _in_script = InScript::enter();
                // SAFETY: in the job's execution global's realm on this thread; `job` is
                // rooted.
                if unsafe { jsapi::RunJSMicroTask(cx, job.handle().into()) } {
                    None
                } else {
                    // SAFETY: `global` is a rooted, non-null global, so it has a realm.
                    window_of_realm(unsafe { jsapi::GetObjectRealmOrNull(global.get()) })
                }
            };
            if let Some(w) = failed_in {
                self.report_exception(w);
            }
        }
        let rejected = REJECTIONS.with(|r| std::mem::take(&mut *r.borrow_mut()));
        for promise in rejected {
            let p = promise.get();
            // SAFETY: `p` is kept alive by `promise` until the end of this iteration.
            let realm = unsafe { jsapi::GetObjectRealmOrNull(p) };
            let w = window_of_realm(realm);
            if let Some(w) = w {
                self.call_hook_with_value(w, c"reportRejection", ObjectValue(p), &[]);
            }
        }
        // Reporting queued reactions (and they may reject more promises): drain again.
        // SAFETY: a query of this context's queue.
        let more =
            REJECTIONS.with(|r| !r.borrow().is_empty()) || unsafe { jsapi::HasAnyMicroTasks(cx) };
        if more {
            self.perform_microtask_checkpoint();
        }
    }
}

/// What a task does with its loop's runtime: the same calls as on `Js` itself.
impl TaskJs for Js {
    fn call_hook(&mut self, w: WindowId, name: &CStr, args: &[Arg]) -> bool {
        Js::call_hook(self, w, name, args)
    }

    fn settle(&mut self, w: WindowId, settlement: Settlement) {
        Js::settle(self, w, settlement)
    }

    fn fire_event(&mut self, w: WindowId, target: RootRef, type_: &str) {
        Js::fire_event(self, w, target, type_)
    }

    fn discard_window(&mut self, w: WindowId) {
        Js::discard_window(self, w)
    }
}

/// Loads (through the host's module hooks) and links what `module` imports; the module
/// object is the host-defined value `modules_loaded`/`modules_failed` receive. False if that
/// failed (an exception is pending, or the run was terminated).
///
/// # Safety
/// `cx` live, in the module's realm; `module` rooted.
unsafe fn load_requested_modules(cx: *mut JSContext, module: jsapi::HandleObject) -> bool {
    rooted!(in(cx) let host_defined = ObjectValue(module.get()));
    // SAFETY: per the contract; `host_defined` is rooted; the callbacks are `extern "C"`
    // functions of the expected signatures.
    let loaded = unsafe {
        jsapi::JS::LoadRequestedModules(
            cx,
            module,
            host_defined.handle().into(),
            Some(modules_loaded),
            Some(modules_failed),
        )
    };
    // SAFETY: `cx` is this thread's live context (only evaluated if `loaded`).
    loaded && !unsafe { jsapi::JS_IsExceptionPending(cx) }
}

/// A `THREAD_EVALUATION` of `kind` (an event handler's with its event type).
fn evaluation(kind: jsprof_scope::EvalKind, event_type: Option<String>) -> jsprof_scope::Details {
    jsprof_scope::Details::ThreadEvaluation {
        kind,
        event_type,
        script: None,
        function: None,
    }
}

/// The profiler service's `THREAD_EVALUATION` for the engine's task calling hook `name` of
/// window `w`: events it dispatches (with their type), messages, worker messages, fetch
/// answers. Hooks that are not such a task (bookkeeping, timers, which the event loop
/// records with their kind) record nothing.
fn scope_evaluation(w: WindowId, name: &CStr, args: &[Arg]) -> jsprof_scope::EventGuard {
    use jsprof_scope::EvalKind;
    if !jsprof_scope::record::recording() {
        return jsprof_scope::EventGuard::NONE;
    }
    let text = |i: usize| match args.get(i) {
        Some(Arg::Str(s)) => Some((*s).to_owned()),
        _ => None,
    };
    let named = |t: &str| Some(t.to_owned());
    let (kind, event_type) = match name.to_bytes() {
        b"fireEvent" => (EvalKind::EventHandler, text(0)),
        b"fireScriptEvent" => (EvalKind::EventHandler, text(1)),
        b"setReadyState" => (EvalKind::EventHandler, named("readystatechange")),
        b"fireDOMContentLoaded" => (EvalKind::EventHandler, named("DOMContentLoaded")),
        b"fireLoad" | b"frameLoaded" => (EvalKind::EventHandler, named("load")),
        b"workerError" => (EvalKind::EventHandler, named("error")),
        b"setVisibility" => (EvalKind::EventHandler, named("visibilitychange")),
        b"windowMessage" | b"portMessage" => (EvalKind::Message, None),
        b"workerMessage" => (EvalKind::WorkerMessage, None),
        b"fetchDone" => (EvalKind::FetchCallback, None),
        _ => return jsprof_scope::EventGuard::NONE,
    };
    jsprof_scope::record::begin(w.index() as u32 + 1, || evaluation(kind, event_type))
}
