//! Module scripts: compiling, the module map of each window, and the module hooks
//! (static imports fetched synchronously, dynamic ones completed by the event loop).

use super::*;

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
    // SAFETY: as the function's contract; the module is rooted before the property set.
    unsafe {
        let wrapper = wrap_cx(cx);
        let opts = compile_options(&wrapper, url, line, column);
        let mut src = transform_str_to_source_text(source);
        rooted!(in(cx) let module = jsapi::JS::CompileModule1(cx, opts.ptr, &mut src));
        if module.get().is_null() {
            return ptr::null_mut();
        }
        let id = jsprof_module_source_id(module.get());
        host().register_script(
            current_window(cx),
            id,
            url,
            source,
            line,
            column,
            true,
            false,
        );
        rooted!(in(cx) let map = modules);
        rooted!(in(cx) let value = ObjectValue(module.get()));
        let key = cstring(url);
        if !jsapi::JS_SetProperty(cx, map.handle().into(), key.as_ptr(), value.handle().into()) {
            return ptr::null_mut();
        }
        module.get()
    }
}

/// The module at `url` in window `w`: from its module map, or fetched and compiled.
///
/// # Safety
/// As [`compile_module`].
pub(super) unsafe fn load_module(
    cx: *mut JSContext,
    w: usize,
    modules: *mut JSObject,
    url: &str,
) -> *mut JSObject {
    // SAFETY: as the function's contract.
    unsafe {
        rooted!(in(cx) let map = modules);
        rooted!(in(cx) let mut existing = UndefinedValue());
        let key = cstring(url);
        if !jsapi::JS_GetProperty(
            cx,
            map.handle().into(),
            key.as_ptr(),
            existing.handle_mut().into(),
        ) {
            return ptr::null_mut();
        }
        if existing.get().is_object() {
            return existing.get().to_object();
        }
        match host().fetch_script(w, url, true) {
            Ok(fetched) => {
                let final_url = fetched.url;
                let module = compile_module(cx, modules, &fetched.source, &final_url, 1, 1);
                if !module.is_null() && final_url != url {
                    rooted!(in(cx) let m = ObjectValue(module));
                    jsapi::JS_SetProperty(cx, map.handle().into(), key.as_ptr(), m.handle().into());
                }
                module
            }
            Err(message) => {
                // A module that cannot be fetched is a TypeError
                // (https://html.spec.whatwg.org/#fetch-a-single-module-script).
                throw_type_error(cx, &format!("error loading module {url}: {message}"));
                ptr::null_mut()
            }
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
    // SAFETY: as the function's contract; the filename is a C string owned by the script.
    unsafe {
        let name = jsapi::JS_GetScriptFilename(script);
        (!name.is_null()).then(|| CStr::from_ptr(name).to_string_lossy().into_owned())
    }
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
        // SAFETY: SpiderMonkey calls this on the context's thread with rooted handles.
        unsafe {
            let w = current_window(cx);
            let specifier = {
                rooted!(in(cx) let s = jsapi::JS::GetModuleRequestSpecifier(cx, request));
                if s.get().is_null() {
                    return false;
                }
                rooted!(in(cx) let v = StringValue(&*s.get()));
                to_rust_string(cx, v.handle().into()).unwrap_or_default()
            };
            let referrer_url = script_url(referrer.get()).unwrap_or_default();
            let is_dynamic = payload.get().is_object() && {
                rooted!(in(cx) let obj = payload.get().to_object());
                jsapi::IsPromiseObject(obj.handle().into())
            };
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
                    throw_error(
                        cx,
                        &format!(
                            "cannot resolve module specifier '{specifier}' from {referrer_url}"
                        ),
                    );
                    return false;
                }
            };
            let modules = module_map(w);
            let module = if modules.is_null() {
                ptr::null_mut()
            } else {
                load_module(cx, w, modules, url.as_str())
            };
            if module.is_null() {
                return false;
            }
            rooted!(in(cx) let module = module);
            jsapi::JS::FinishLoadingImportedModule(
                cx,
                referrer,
                request,
                payload,
                module.handle().into(),
                false,
            )
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

pub(super) fn module_map(w: usize) -> *mut JSObject {
    MODULE_MAPS.with(|m| m.borrow().get(w).map_or(ptr::null_mut(), |h| h.get()))
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
