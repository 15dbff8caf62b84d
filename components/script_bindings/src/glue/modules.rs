//! Module scripts: compiling, the module map of each window, and the module hooks
//! (static imports fetched synchronously, dynamic ones completed by the event loop).

use std::cell::RefCell;
use std::ffi::CStr;
use std::ptr;

use mozjs::gc::RootedTraceableBox;
use mozjs::jsapi::{self, Heap, JSContext, JSObject, JSScript};
use mozjs::jsval::{ObjectValue, StringValue, UndefinedValue};
use mozjs::rooted;
use mozjs::rust::transform_str_to_source_text;

use crate::host::ScriptSource;
use crate::runtime::WindowId;

use super::strings::{cstring, throw_error, throw_type_error, to_rust_string};
use super::{compile_options, current_window, guarded, host, wrap_cx, PendingImport, IMPORTS};

/// Compiles a module and registers it in `modules` under `url`.
///
/// # Safety
/// `cx` must be in the module's realm; `modules` must be that window's rooted module map.
pub(super) unsafe fn compile_module(
    cx: *mut JSContext,
    modules: *mut JSObject,
    source: &str,
    url: &str,
    line: u32,
    column: u32,
) -> *mut JSObject {
    // SAFETY: as the function's contract, `cx` is this thread's live context.
    let wrapper = unsafe { wrap_cx(cx) };
    let opts = compile_options(&wrapper, url, line, column);
    let mut src = transform_str_to_source_text(source);
    let compiling =
        super::scope_compilation(cx, url, line, column, jsprof_scope::ScriptKind::Module);
    // SAFETY: as the function's contract, `cx` is this thread's context in a window's realm;
    // `opts.ptr` is the live CompileOptions owned by `opts` and `src` outlives the call. The
    // result is rooted on the next line, before anything can GC.
    let compiled = unsafe { jsapi::JS::CompileModule1(cx, opts.ptr, &mut src) };
    rooted!(in(cx) let module = compiled);
    drop(compiling);
    if module.get().is_null() {
        return ptr::null_mut();
    }
    // SAFETY: `module` is a non-null, rooted module record just compiled on this thread.
    let id = unsafe { jsprof_spidermonkey::module_source_id(module.get()) };
    let registered = ScriptSource {
        url,
        text: source,
        line,
        column,
        module: true,
        muted: false,
    };
    host().register_script(current_window(cx), id, registered);
    rooted!(in(cx) let map = modules);
    rooted!(in(cx) let value = ObjectValue(module.get()));
    let key = cstring(url);
    // SAFETY: as the function's contract, `cx` is this thread's context in the realm of
    // `modules`; `map` and `value` are rooted and `key` is a C string outliving the call.
    if !unsafe {
        jsapi::JS_SetProperty(cx, map.handle().into(), key.as_ptr(), value.handle().into())
    } {
        return ptr::null_mut();
    }
    module.get()
}

/// The module at `url` in window `w`: from its module map, or fetched and compiled.
///
/// # Safety
/// As [`compile_module`].
pub(super) unsafe fn load_module(
    cx: *mut JSContext,
    w: WindowId,
    modules: *mut JSObject,
    url: &str,
) -> *mut JSObject {
    rooted!(in(cx) let map = modules);
    rooted!(in(cx) let mut existing = UndefinedValue());
    let key = cstring(url);
    // SAFETY: as the function's contract, `cx` is this thread's context in the realm of
    // `modules`; `map` and `existing` are rooted and `key` is a C string outliving the call.
    let found = unsafe {
        jsapi::JS_GetProperty(
            cx,
            map.handle().into(),
            key.as_ptr(),
            existing.handle_mut().into(),
        )
    };
    if !found {
        return ptr::null_mut();
    }
    if existing.get().is_object() {
        return existing.get().to_object();
    }
    match host().fetch_script(w, url, true) {
        Ok(fetched) => {
            let final_url = fetched.url;
            // SAFETY: as this function's contract, which is `compile_module`'s.
            let module = unsafe { compile_module(cx, modules, &fetched.source, &final_url, 1, 1) };
            if !module.is_null() && final_url != url {
                rooted!(in(cx) let m = ObjectValue(module));
                // SAFETY: as for the JS_GetProperty above; `m` is rooted.
                unsafe {
                    jsapi::JS_SetProperty(cx, map.handle().into(), key.as_ptr(), m.handle().into())
                };
            }
            module
        }
        Err(message) => {
            // A module that cannot be fetched is a TypeError
            // (https://html.spec.whatwg.org/#fetch-a-single-module-script).
            // SAFETY: as the function's contract, `cx` is this thread's context in a realm.
            unsafe { throw_type_error(cx, &format!("error loading module {url}: {message}")) };
            ptr::null_mut()
        }
    }
}

/// The URL a script was compiled with.
///
/// # Safety
/// `script` must be null or a live script.
pub(super) unsafe fn script_url(script: *mut JSScript) -> Option<String> {
    if script.is_null() {
        return None;
    }
    // SAFETY: as the function's contract, `script` is a live, non-null script.
    let name = unsafe { jsapi::JS_GetScriptFilename(script) };
    if name.is_null() {
        return None;
    }
    // SAFETY: a non-null filename is a NUL-terminated C string owned by the live script,
    // copied here before anything can free it.
    let name = unsafe { CStr::from_ptr(name) };
    Some(name.to_string_lossy().into_owned())
}

/// HostLoadImportedModule (<https://html.spec.whatwg.org/#hostloadimportedmodule>).
pub(super) unsafe extern "C" fn load_imported_module(
    cx: *mut JSContext,
    referrer: jsapi::JS::Handle<*mut JSScript>,
    request: jsapi::JS::Handle<*mut JSObject>,
    _host_defined: jsapi::JS::HandleValue,
    payload: jsapi::JS::HandleValue,
    _line: u32,
    _column: jsapi::JS::ColumnNumberOneOrigin,
) -> bool {
    guarded(false, || {
        let w = current_window(cx);
        let specifier = {
            // SAFETY: SpiderMonkey calls this hook on the context's thread, with `request` a
            // rooted module request; the result is rooted on the next line.
            let s = unsafe { jsapi::JS::GetModuleRequestSpecifier(cx, request) };
            rooted!(in(cx) let s = s);
            if s.get().is_null() {
                return false;
            }
            // SAFETY: `s` is non-null here and rooted for as long as `v` holds it.
            rooted!(in(cx) let v = StringValue(unsafe { &*s.get() }));
            // SAFETY: `cx` is this thread's live context; `v` is rooted.
            unsafe { to_rust_string(cx, v.handle().into()) }.unwrap_or_default()
        };
        // SAFETY: `referrer` is a rooted handle SpiderMonkey passed in: null or a live script.
        let referrer_url = unsafe { script_url(referrer.get()) }.unwrap_or_default();
        let is_dynamic = payload.get().is_object() && {
            rooted!(in(cx) let obj = payload.get().to_object());
            // SAFETY: `obj` is a rooted object, used on the context's thread.
            unsafe { jsapi::IsPromiseObject(obj.handle().into()) }
        };
        {
            if is_dynamic {
                // Completed later, from the event loop, as the HTML standard does.
                IMPORTS.with(|i| {
                    i.borrow_mut().push(PendingImport {
                        window: w,
                        referrer: referrer_url,
                        specifier,
                        request: RootedTraceableBox::from_box(Heap::boxed(request.get())),
                        payload: RootedTraceableBox::from_box(Heap::boxed(payload.get())),
                    })
                });
                host().dynamic_import_pending(w);
                return true;
            }
            let resolved = url::Url::parse(&referrer_url).and_then(|b| b.join(&specifier));
            let url = match resolved {
                Ok(u)
                    if specifier.starts_with("./")
                        || specifier.starts_with("../")
                        || specifier.starts_with('/')
                        || url::Url::parse(&specifier).is_ok() =>
                {
                    u
                }
                _ => {
                    let message = format!(
                        "cannot resolve module specifier '{specifier}' from {referrer_url}"
                    );
                    // SAFETY: `cx` is this thread's live context (SpiderMonkey's caller).
                    unsafe { throw_error(cx, &message) };
                    return false;
                }
            };
            let modules = module_map(w);
            let module = if modules.is_null() {
                ptr::null_mut()
            } else {
                // SAFETY: `cx` is this thread's context, in window `w`'s realm (the hook runs
                // in the importing realm); `modules` is that window's rooted module map.
                unsafe { load_module(cx, w, modules, url.as_str()) }
            };
            if module.is_null() {
                return false;
            }
            rooted!(in(cx) let module = module);
            // SAFETY: on the context's thread, with SpiderMonkey's rooted `referrer`,
            // `request` and `payload` handles and the rooted `module`.
            unsafe {
                jsapi::JS::FinishLoadingImportedModule(
                    cx,
                    referrer,
                    request,
                    payload,
                    module.handle().into(),
                    false,
                )
            }
        }
    })
}

thread_local! {
    /// Each window's global, by window index (for `windowFor`), rooted and traced.
    pub(super) static GLOBALS: RefCell<Vec<RootedTraceableBox<Heap<*mut JSObject>>>> = const { RefCell::new(Vec::new()) };
    /// Each window's module map (URL -> module record), rooted and traced, so a moving GC
    /// keeps the pointers current.
    pub(super) static MODULE_MAPS: RefCell<Vec<RootedTraceableBox<Heap<*mut JSObject>>>> = const { RefCell::new(Vec::new()) };
}

pub(super) fn module_map(w: WindowId) -> *mut JSObject {
    MODULE_MAPS.with(|m| {
        m.borrow()
            .get(w.index())
            .map_or(ptr::null_mut(), |h| h.get())
    })
}

pub(super) unsafe extern "C" fn modules_loaded(
    cx: *mut JSContext,
    host_defined: jsapi::JS::HandleValue,
) -> bool {
    guarded(false, || {
        // SAFETY: `host_defined` is the module object passed to LoadRequestedModules.
        unsafe {
            rooted!(in(cx) let module = host_defined.get().to_object());
            jsapi::JS::ModuleLink(cx, module.handle().into())
        }
    })
}

pub(super) unsafe extern "C" fn modules_failed(
    cx: *mut JSContext,
    _host_defined: jsapi::JS::HandleValue,
    error: jsapi::JS::HandleValue,
) -> bool {
    guarded(false, || {
        // SAFETY: `error` is a rooted handle from SpiderMonkey.
        unsafe {
            jsapi::JS_SetPendingException(cx, error, jsapi::JS::ExceptionStackBehavior::Capture)
        };
        true
    })
}
