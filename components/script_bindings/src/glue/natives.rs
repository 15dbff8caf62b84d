//! The engine's intrinsics on the prelude's `host` object: the calls that take or return JS
//! objects, or run script in the caller's realm (`windowFor`, `callerWindow`, `runScript`,
//! `importScript`, `promiseResult`, `whenSettled`, `isProxy`, `scopeEntered`). The rest of
//! `host` is the generated `JsprofHost` namespace (`webidl/internal/host.webidl`, which the
//! host implements); the structured-clone natives are in `clone.rs`. A throwing argument
//! conversion throws on.

use std::ptr;

use jsprof_spidermonkey::InScript;
use mozjs::jsapi::{self, CallArgs, JSContext, JSObject, Value};
use mozjs::jsval::{
    BooleanValue, DoubleValue, NullValue, ObjectValue, StringValue, UndefinedValue,
};
use mozjs::rooted;

use crate::runtime::WindowId;

use super::modules::GLOBALS;
use super::security::saved_frame_window;
use super::strings::{new_string, throw_type_error, to_rust_string};
use super::{compile_and_run_classic, current_window, guarded, host, wrap_cx};

/// A native's arguments, read with ToNumber/ToString. A read that threw is `None`: its
/// exception is pending, and the native returns `false` at once (no further conversion
/// runs with an exception pending).
pub(super) struct NativeArgs<'a> {
    pub(super) cx: *mut JSContext,
    pub(super) args: &'a CallArgs,
}

impl NativeArgs<'_> {
    /// Argument `i` with ToNumber; NaN if absent.
    pub(super) fn num(&self, i: u32) -> Option<f64> {
        if i >= self.args.argc_ {
            return Some(f64::NAN);
        }
        // SAFETY: `cx` is the running native's live context.
        let mut wrapper = unsafe { wrap_cx(self.cx) };
        // SAFETY: `i` is within argc, so this is a handle into the callback's rooted `vp`.
        let v = unsafe { mozjs::rust::Handle::from_raw(self.args.get(i)) };
        // SAFETY: `wrapper` is this thread's live context and `v` a rooted argument.
        unsafe { mozjs::rust::ToNumber(&mut wrapper, v) }.ok()
    }

    /// Argument `i` with ToString; empty if absent.
    pub(super) fn string(&self, i: u32) -> Option<String> {
        if i >= self.args.argc_ {
            return Some(String::new());
        }
        // SAFETY: `cx` is the running native's live context; `i` is within argc.
        unsafe { to_rust_string(self.cx, self.args.get(i)) }
    }
}

/// The frame of a native: runs `body` with the call's arguments inside `guarded`, after
/// throwing a `TypeError` if fewer than `min_args` were passed.
///
/// # Safety
/// Called from a JSNative with SpiderMonkey's `cx`, `argc` and `vp`.
pub(super) unsafe fn with_args(
    cx: *mut JSContext,
    argc: u32,
    vp: *mut Value,
    name: &str,
    min_args: u32,
    body: impl FnOnce(&CallArgs) -> bool,
) -> bool {
    guarded(false, || {
        // SAFETY: per the contract, `vp` holds the callee, `this` and `argc` arguments, live
        // for the call.
        let args = unsafe { CallArgs::from_vp(vp, argc) };
        if argc < min_args {
            let message = format!("host.{name}: {min_args} argument(s) expected, {argc} given");
            // SAFETY: per the contract, `cx` is the native's live context, in a realm.
            unsafe { throw_type_error(cx, &message) };
            return false;
        }
        body(&args)
    })
}

/// `windowFor(index)`: window `index`'s global, for the current realm, if their documents are
/// same-origin (a transparent wrapper of it); `null` otherwise, and the prelude makes a
/// cross-origin window object of its own realm instead.
pub(super) unsafe extern "C" fn native_window_for(
    cx: *mut JSContext,
    argc: u32,
    vp: *mut Value,
) -> bool {
    // The global is rooted before it is wrapped into the current compartment.
    let body = |args: &CallArgs| {
        {
            let Some(target) = (NativeArgs { cx, args }).num(0) else {
                return false;
            };
            args.rval().set(NullValue());
            let here = current_window(cx);
            if !(target >= 0.0 && target.fract() == 0.0) {
                return true;
            }
            let target = WindowId(target as usize);
            if !host().windows_same_origin(here, target) {
                return true;
            }
            let global = GLOBALS.with(|g| g.borrow().get(target.index()).map(|h| h.get()));
            let Some(global) = global.filter(|g| !g.is_null()) else {
                return true;
            };
            rooted!(in(cx) let mut obj = global);
            // SAFETY: `cx` is the live context, in the caller's realm; `obj` is rooted.
            if !unsafe { jsapi::JS_WrapObject(cx, obj.handle_mut().into()) } {
                return false;
            }
            args.rval().set(ObjectValue(obj.get()));
        }
        true
    };
    // SAFETY: a JSNative called by SpiderMonkey with valid `vp`/`argc`; a missing argument
    // reads as NaN (no window).
    unsafe { with_args(cx, argc, vp, "windowFor", 0, body) }
}

/// `callerWindow()`: the window index of the realm whose script called the prelude function
/// that calls this (the incumbent of `postMessage`), from the principals of the second
/// youngest frame of the stack; -1 if there is none.
pub(super) unsafe extern "C" fn native_caller_window(
    cx: *mut JSContext,
    argc: u32,
    vp: *mut Value,
) -> bool {
    guarded(false, || {
        // The captured stack is rooted while its slots are read (class-checked first).
        {
            // SAFETY: a JSNative called by SpiderMonkey: `vp` holds the callee, `this` and `argc`
            // arguments, live for the call.
            let args = unsafe { CallArgs::from_vp(vp, argc) };
            let mut window = -1.0;
            rooted!(in(cx) let mut stack = ptr::null_mut::<JSObject>());
            // SAFETY: `cx` is this thread's context, in a native (where it may GC); `stack`
            // is rooted.
            let captured =
                unsafe { jsprof_spidermonkey::capture_current_stack(cx, 2, stack.handle_mut()) };
            // SAFETY: `stack` is null or the rooted, live youngest frame just captured.
            if captured && unsafe { jsprof_spidermonkey::is_saved_frame(stack.get()) } {
                // SAFETY: `stack` is a live SavedFrame (class-checked just above).
                let parent = unsafe {
                    jsprof_spidermonkey::saved_frame_slot(
                        stack.get(),
                        jsprof_spidermonkey::slot::PARENT,
                    )
                };
                let parent_frame = parent.is_object()
                    // SAFETY: an object in the parent slot is live, reachable from `stack`.
                    && unsafe { jsprof_spidermonkey::is_saved_frame(parent.to_object()) };
                if parent_frame {
                    // SAFETY: the parent is a live SavedFrame (class-checked just above).
                    if let Some(w) = unsafe { saved_frame_window(parent.to_object()) } {
                        window = w.index() as f64;
                    }
                }
            }
            args.rval().set(DoubleValue(window));
        }
        true
    })
}

/// `importScript(url)`: fetches a classic script in no-cors mode and runs it in the current
/// realm, with its URL as its file name (a worker's `importScripts`); a script from an
/// opaque response has muted errors. Returns `undefined`, or why the script could not be
/// fetched (the prelude throws the NetworkError); the script's exceptions propagate.
pub(super) unsafe extern "C" fn native_import_script(
    cx: *mut JSContext,
    argc: u32,
    vp: *mut Value,
) -> bool {
    let body = |args: &CallArgs| {
        {
            let Some(url) = (NativeArgs { cx, args }).string(0) else {
                return false;
            };
            match host().fetch_script(current_window(cx), &url, false) {
                Ok(fetched) => {
                    // SAFETY: `cx` is this thread's context, in the caller's (a window's) realm.
                    if !unsafe {
                        compile_and_run_classic(
                            cx,
                            &fetched.source,
                            &fetched.url,
                            1,
                            1,
                            fetched.muted,
                        )
                    } {
                        return false;
                    }
                    args.rval().set(UndefinedValue());
                }
                Err(e) => {
                    rooted!(in(cx) let mut v = UndefinedValue());
                    // SAFETY: `cx` is the live context, in the caller's realm; `v` is rooted.
                    unsafe { new_string(cx, &e, v.handle_mut()) };
                    args.rval().set(v.get());
                }
            }
        }
        true
    };
    // SAFETY: a JSNative called by SpiderMonkey with valid `vp`/`argc`.
    unsafe { with_args(cx, argc, vp, "importScript", 0, body) }
}

/// `runScript(text, url)`: compiles and runs an inline classic script inserted by script
/// (<https://html.spec.whatwg.org/#prepare-the-script-element>: it runs at once), with the
/// document's URL. Its exceptions are reported by the caller.
pub(super) unsafe extern "C" fn native_run_script(
    cx: *mut JSContext,
    argc: u32,
    vp: *mut Value,
) -> bool {
    let body = |args: &CallArgs| {
        {
            let a = NativeArgs { cx, args };
            // One at a time: no conversion runs with an exception pending.
            let Some(text) = a.string(0) else {
                return false;
            };
            let Some(url) = a.string(1) else {
                return false;
            };
            let _in_script = InScript::enter();
            // SAFETY: `cx` is this thread's context, in the caller's (a window's) realm.
            if !unsafe { compile_and_run_classic(cx, &text, &url, 1, 1, false) } {
                return false;
            }
            args.rval().set(UndefinedValue());
        }
        true
    };
    // SAFETY: a JSNative called by SpiderMonkey with valid `vp`/`argc`.
    unsafe { with_args(cx, argc, vp, "runScript", 0, body) }
}

/// `promiseResult(promise)`: a settled promise's value or reason, read without running any
/// page-visible code (`undefined` for anything that is not a settled promise).
pub(super) unsafe extern "C" fn native_promise_result(
    cx: *mut JSContext,
    argc: u32,
    vp: *mut Value,
) -> bool {
    // The promise is rooted by the call's arguments.
    let body = |args: &CallArgs| {
        args.rval().set(UndefinedValue());
        let v = args.get(0);
        if !v.get().is_object() {
            return true;
        }
        rooted!(in(cx) let obj = v.get().to_object());
        // SAFETY: `obj` is a rooted object, on the context's thread.
        if !unsafe { jsapi::IsPromiseObject(obj.handle().into()) } {
            return true;
        }
        // SAFETY: `obj` is a rooted promise (checked above).
        let state = unsafe { jsapi::JS::GetPromiseState(obj.handle().into()) };
        if state == jsapi::JS::PromiseState::Pending {
            return true;
        }
        rooted!(in(cx) let mut result = UndefinedValue());
        // SAFETY: `obj` is a rooted, settled promise (checked above); `result` is rooted.
        unsafe {
            mozjs::glue::JS_GetPromiseResult(obj.handle().into(), result.handle_mut().into())
        };
        args.rval().set(result.get());
        true
    };
    // SAFETY: called from this JSNative with SpiderMonkey's `cx`, `argc` and `vp`.
    unsafe { with_args(cx, argc, vp, "promiseResult", 0, body) }
}

/// `whenSettled(promise, onFulfilled, onRejected)`: adds reactions to an engine-made promise
/// the unforgeable way (`JS::AddPromiseReactions`): no `then`, no species constructor, nothing
/// the page could have replaced runs.
pub(super) unsafe extern "C" fn native_when_settled(
    cx: *mut JSContext,
    argc: u32,
    vp: *mut Value,
) -> bool {
    // Every object is rooted by the call's arguments or by `rooted!`.
    let body = |args: &CallArgs| {
        args.rval().set(UndefinedValue());
        let object = |i: u32| {
            let v = args.get(i).get();
            if v.is_object() {
                v.to_object()
            } else {
                ptr::null_mut()
            }
        };
        rooted!(in(cx) let promise = object(0));
        rooted!(in(cx) let on_fulfilled = object(1));
        rooted!(in(cx) let on_rejected = object(2));
        if promise.get().is_null()
            // SAFETY: `promise` is a rooted, non-null object (only evaluated if non-null).
            || !unsafe { jsapi::IsPromiseObject(promise.handle().into()) }
        {
            return true;
        }
        // SAFETY: `cx` is the live context, in the caller's realm; `promise` is a rooted
        // promise and the reactions are rooted (null or objects).
        unsafe {
            jsapi::JS::AddPromiseReactions(
                cx,
                promise.handle().into(),
                on_fulfilled.handle().into(),
                on_rejected.handle().into(),
            )
        }
    };
    // SAFETY: called from this JSNative with SpiderMonkey's `cx`, `argc` and `vp`.
    unsafe { with_args(cx, argc, vp, "whenSettled", 0, body) }
}

/// `scopeEntered(callback)`: the evaluation the profiler service is recording (a timer, an
/// event handler, a message) enters `callback`: its name is recorded as the function
/// entered. Nothing when no session records; a callback that is not a function (after
/// unwrapping a same-origin wrapper) names nothing.
pub(super) unsafe extern "C" fn native_scope_entered(
    cx: *mut JSContext,
    argc: u32,
    vp: *mut Value,
) -> bool {
    let body = |args: &CallArgs| {
        args.rval().set(UndefinedValue());
        let v = args.get(0).get();
        if !jsprof_scope::record::recording() || !v.is_object() {
            return true;
        }
        // SAFETY: `v` is an object rooted by the call's arguments; unwrapping only reads its
        // wrappers' targets, which the wrapper keeps alive.
        let target = unsafe { jsapi::js::UncheckedUnwrapWithoutExpose(v.to_object()) };
        // SAFETY: `target` is a live object (checked non-null first).
        if target.is_null() || !unsafe { jsapi::JS_ObjectIsFunction(target) } {
            return true;
        }
        // SAFETY: `target` is a function object.
        let fun = unsafe { jsapi::JS_GetObjectFunction(target) };
        // SAFETY: `fun` is a live function; its display name is read as it is, without
        // allocating (null when it has none).
        let id = unsafe { jsapi::JS_GetMaybePartialFunctionDisplayId(fun) };
        let name = if id.is_null() {
            "(anonymous)".to_owned()
        } else {
            // SAFETY: `id` is a non-null string the function holds, rooted on this line.
            rooted!(in(cx) let name = StringValue(unsafe { &*id }));
            // SAFETY: `cx` is the live context; `name` is a rooted string value.
            unsafe { to_rust_string(cx, name.handle().into()) }.unwrap_or_default()
        };
        jsprof_scope::record::entered(name);
        true
    };
    // SAFETY: called from this JSNative with SpiderMonkey's `cx`, `argc` and `vp`.
    unsafe { with_args(cx, argc, vp, "scopeEntered", 1, body) }
}

/// `isProxy(value)`: whether `value` is a scripted Proxy (or a wrapper of one), whose every
/// operation may run a page function: the prelude shows one without opening it.
pub(super) unsafe extern "C" fn native_is_proxy(
    cx: *mut JSContext,
    argc: u32,
    vp: *mut Value,
) -> bool {
    let body = |args: &CallArgs| {
        let v = args.get(0).get();
        // SAFETY: `v` is an object rooted by the call's arguments; the shim only reads it
        // and its wrappers' targets.
        let proxy =
            v.is_object() && unsafe { jsprof_spidermonkey::is_scripted_proxy(v.to_object()) };
        args.rval().set(BooleanValue(proxy));
        true
    };
    // SAFETY: called from this JSNative with SpiderMonkey's `cx`, `argc` and `vp`.
    unsafe { with_args(cx, argc, vp, "isProxy", 1, body) }
}
