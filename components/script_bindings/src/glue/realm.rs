//! Window realms: a global with its principals, the prelude run in it, its hooks.

use std::ffi::{c_void, CStr};
use std::ptr;

use jsprof_net::Origin;
use jsprof_spidermonkey::InScript;
use mozjs::gc::RootedTraceableBox;
use mozjs::jsapi::{self, HandleValueArray, Heap, JSObject, OnNewGlobalHookOption};
use mozjs::jsval::{ObjectValue, UndefinedValue};
use mozjs::rooted;
use mozjs::rust::{
    transform_str_to_source_text, CompileOptionsWrapper, RealmOptions, SIMPLE_GLOBAL_CLASS,
};

use crate::runtime::{GlobalKind, WindowId};

use super::clone::{
    native_clone_read, native_clone_write, native_platform_object, native_platform_state,
};
use super::modules::{GLOBALS, MODULE_MAPS};
use super::natives::{
    native_caller_window, native_import_script, native_is_proxy, native_promise_result,
    native_run_script, native_scope_entered, native_when_settled, native_window_for,
};
use super::security::{RealmInfo, PRINCIPALS_CALLBACKS};
use super::strings::new_string;
use super::{interfaces, InRealm, Js, Window};

impl Js {
    /// Creates window `index`'s realm, for a document of `origin`, and runs `prelude` in it:
    /// a function expression `(host, global, init) => hooks`, whose result is kept as the
    /// window's hooks.
    pub fn new_window(
        &mut self,
        prelude: &str,
        init_json: &str,
        origin: Origin,
    ) -> Result<WindowId, String> {
        self.new_window_of_kind(prelude, init_json, origin, GlobalKind::Window)
    }

    /// [`Js::new_window`] for a global of `kind` (a worker's global takes the interfaces
    /// exposed on DedicatedWorkerGlobalScope).
    pub fn new_window_of_kind(
        &mut self,
        prelude: &str,
        init_json: &str,
        origin: Origin,
        kind: GlobalKind,
    ) -> Result<WindowId, String> {
        let index = WindowId(self.windows.len());
        let cx = self.cx();
        let options = RealmOptions::default();
        // Every GC pointer below is rooted before the next call that can GC.
        {
            // Each window's realm has its own principals, carrying the window's index and its
            // document's origin: stack captures record them per frame (which is how a
            // sample tells realms apart), and the subsumes and wrap callbacks compare their
            // origins. `destroy_principals` frees the RealmInfo.
            let info = Box::new(RealmInfo {
                window: index,
                origin,
            });
            // SAFETY: `PRINCIPALS_CALLBACKS` is a static table of `extern "C"` functions with
            // the expected signatures; the principals take ownership of the leaked RealmInfo,
            // which `destroy_principals` frees.
            let principals = unsafe {
                mozjs::glue::CreateRustJSPrincipals(
                    &PRINCIPALS_CALLBACKS,
                    Box::into_raw(info) as *mut c_void,
                )
            };
            // SAFETY: `cx` is this thread's live context; `principals` were just made and
            // `options` outlives the call. The global is rooted on the next line, before
            // anything can GC.
            let new_global = unsafe {
                jsapi::JS_NewGlobalObject(
                    cx,
                    &SIMPLE_GLOBAL_CLASS,
                    principals,
                    OnNewGlobalHookOption::FireOnNewGlobalHook,
                    &*options,
                )
            };
            rooted!(in(cx) let global = new_global);
            if global.get().is_null() {
                return Err("cannot create a global".into());
            }
            let _realm = InRealm::new(cx, global.get());
            // SAFETY: `global` is a rooted, non-null global, so it has a realm.
            let realm = unsafe { jsapi::GetObjectRealmOrNull(global.get()) };
            // SAFETY: `realm` is the new global's live realm; its private is an index + 1,
            // never dereferenced (see `window_of_realm`).
            unsafe { jsapi::SetRealmPrivate(realm, (index.index() + 1) as *mut c_void) };
            // The prelude's `host`: the generated `JsprofHost` namespace
            // (webidl/internal/host.webidl), plus the engine's intrinsics on JS values.
            rooted!(in(cx) let mut host_obj = ptr::null_mut::<JSObject>());
            // It throws only TypeErrors (argument conversions): no DOMException needed.
            rooted!(in(cx) let no_dom_exception = UndefinedValue());
            let index = super::interfaces::generated_index("JsprofHost")
                .ok_or("the JsprofHost namespace is not generated")?;
            // SAFETY: `cx` is this thread's context, in the new realm; `no_dom_exception`
            // and `host_obj` are rooted.
            unsafe {
                super::interfaces::namespace_object(
                    cx,
                    index,
                    no_dom_exception.handle().into(),
                    host_obj.handle_mut(),
                )
            }?;
            let natives: [(&CStr, jsapi::JSNative, u32); 12] = [
                (c"windowFor", Some(native_window_for), 1),
                (c"runScript", Some(native_run_script), 2),
                (c"importScript", Some(native_import_script), 1),
                (c"callerWindow", Some(native_caller_window), 0),
                (c"promiseResult", Some(native_promise_result), 1),
                (c"whenSettled", Some(native_when_settled), 3),
                (c"isProxy", Some(native_is_proxy), 1),
                (c"scopeEntered", Some(native_scope_entered), 1),
                (c"platformObject", Some(native_platform_object), 2),
                (c"platformState", Some(native_platform_state), 1),
                (c"cloneWrite", Some(native_clone_write), 3),
                (c"cloneRead", Some(native_clone_read), 3),
            ];
            for (name, f, nargs) in natives {
                // SAFETY: `cx` is this thread's context, in the new realm; `host_obj` is
                // rooted, `name` a static C string, and `f` an `extern "C"` function of the
                // JSNative signature.
                let defined = unsafe {
                    jsapi::JS_DefineFunction(
                        cx,
                        host_obj.handle().into(),
                        name.as_ptr(),
                        f,
                        nargs,
                        0,
                    )
                };
                if defined.is_null() {
                    return Err(format!("cannot define host.{}", name.to_string_lossy()));
                }
            }
            // SAFETY: `cx` is this thread's context, in the new realm; the object is rooted
            // on the next line, before anything can GC.
            let new_modules = unsafe { jsapi::JS_NewPlainObject(cx) };
            rooted!(in(cx) let modules = new_modules);
            rooted!(in(cx) let mut prelude_fn = UndefinedValue());
            let opts =
                CompileOptionsWrapper::new(self.rt.cx_no_gc(), c"jsprof:prelude".to_owned(), 1);
            let _in_script = InScript::enter();
            let mut source = transform_str_to_source_text(prelude);
            // SAFETY: `cx` is this thread's context, in the new realm; `opts.ptr` is the live
            // CompileOptions owned by `opts`, `source` outlives the call, `prelude_fn` is
            // rooted.
            let evaluated = unsafe {
                jsapi::JS::Evaluate2(cx, opts.ptr, &mut source, prelude_fn.handle_mut().into())
            };
            if !evaluated {
                return Err(format!("prelude: {}", self.take_exception_text()));
            }
            rooted!(in(cx) let mut init = UndefinedValue());
            // SAFETY: `cx` is this thread's live context, in the new realm.
            unsafe { new_string(cx, init_json, init.handle_mut()) };
            rooted!(in(cx) let argv = mozjs::gc::ValueArray::<3>::new([
                ObjectValue(host_obj.get()),
                ObjectValue(global.get()),
                init.get(),
            ]));
            rooted!(in(cx) let mut hooks = UndefinedValue());
            let args = HandleValueArray::from(&argv);
            // SAFETY: `cx` is this thread's context, in the new realm; the global, the
            // prelude's function, the arguments (`argv`) and `hooks` are all rooted.
            let called = unsafe {
                jsapi::JS_CallFunctionValue(
                    cx,
                    global.handle().into(),
                    prelude_fn.handle().into(),
                    &args,
                    hooks.handle_mut().into(),
                )
            };
            if !called {
                return Err(format!("prelude: {}", self.take_exception_text()));
            }
            if !hooks.get().is_object() {
                return Err("prelude: did not return its hooks".into());
            }
            // The interfaces with generated bindings, over the prelude's DOM.
            rooted!(in(cx) let hooks_obj = hooks.get().to_object());
            rooted!(in(cx) let mut dom_exception = UndefinedValue());
            // SAFETY: `cx` is this thread's context, in the new realm; `hooks_obj` and
            // `dom_exception` are rooted; the name is a static C string.
            let got = unsafe {
                jsapi::JS_GetProperty(
                    cx,
                    hooks_obj.handle().into(),
                    c"DOMException".as_ptr(),
                    dom_exception.handle_mut().into(),
                )
            };
            if !got {
                return Err(format!("prelude: {}", self.take_exception_text()));
            }
            // SAFETY: `cx` is live and in `global`'s realm (`_realm`), after the prelude ran.
            unsafe {
                interfaces::define_interfaces(
                    cx,
                    global.handle().into(),
                    dom_exception.handle().into(),
                    kind,
                )
            }?;
            self.windows.push(Window {
                global: RootedTraceableBox::from_box(Heap::boxed(global.get())),
                hooks: RootedTraceableBox::from_box(Heap::boxed(hooks.get().to_object())),
            });
            MODULE_MAPS.with(|m| {
                m.borrow_mut()
                    .push(RootedTraceableBox::from_box(Heap::boxed(modules.get())))
            });
            GLOBALS.with(|g| {
                g.borrow_mut()
                    .push(RootedTraceableBox::from_box(Heap::boxed(global.get())))
            });
        }
        Ok(index)
    }
}
