//! Compartments and principals: the wrap callbacks (transparent between same-origin
//! realms, opaque otherwise), each realm's `RealmInfo`, and `subsumes`.

use super::*;

pub(super) static WRAP_CALLBACKS: jsapi::JSWrapObjectCallbacks = jsapi::JSWrapObjectCallbacks {
    wrap: Some(wrap_object),
    preWrap: Some(pre_wrap),
};

/// Wraps an object for another compartment (every window's realm is its own compartment).
/// Between same-origin realms the wrapper is transparent. Between realms of different
/// origins it is SpiderMonkey's opaque security wrapper, which refuses every operation: no
/// object of one origin is usable from another. (Windows of other origins are never
/// handed across at all: a page reaches them through cross-origin window objects its own
/// realm makes, see `prelude/`. The opaque wrapper is the net under that.)
pub(super) unsafe extern "C" fn wrap_object(
    cx: *mut JSContext,
    _existing: jsapi::HandleObject,
    obj: jsapi::HandleObject,
) -> *mut JSObject {
    guarded(ptr::null_mut(), || {
        // Called by SpiderMonkey with a live context, in the destination realm, and a
        // rooted object.
        // SAFETY: `cx` is the live context SpiderMonkey called with, on its thread.
        let realm = unsafe { jsapi::GetCurrentRealmOrNull(cx) };
        let here = if realm.is_null() {
            None
        } else {
            // SAFETY: `realm` is the live, non-null current realm.
            let principals = unsafe { jsapi::GetRealmPrincipals(realm) };
            // SAFETY: every realm's principals are null or made by `new_window_of_kind`
            // with a RealmInfo, and live as long as the realm.
            unsafe { realm_info(principals) }
        };
        // SAFETY: `obj` is a rooted handle to a live object.
        let there = unsafe { object_realm_info(obj.get()) };
        let same_origin = match (here, there) {
            (Some(a), Some(b)) => a.origin.same_origin(&b.origin),
            _ => true,
        };
        let handler = if same_origin {
            // SAFETY: returns the address of SpiderMonkey's static wrapper handler.
            unsafe { mozjs::glue::GetCrossCompartmentWrapper() }
        } else {
            // SAFETY: returns the address of SpiderMonkey's static wrapper handler.
            unsafe { mozjs::glue::GetSecurityWrapper() }
        };
        // SAFETY: `cx` is live, in the destination realm; `obj` is rooted and `handler` a
        // static wrapper handler; a null options pointer is allowed.
        unsafe { mozjs::glue::WrapperNew(cx, obj, handler, ptr::null()) }
    })
}

pub(super) unsafe extern "C" fn pre_wrap(
    _cx: *mut JSContext,
    _scope: jsapi::HandleObject,
    _orig: jsapi::HandleObject,
    obj: jsapi::HandleObject,
    _passed: jsapi::HandleObject,
    ret: jsapi::MutableHandleObject,
) {
    guarded((), || {
        // No preparation: the object itself is what gets wrapped.
        ret.set(obj.get())
    })
}

/// What a realm's principals carry (their private pointer, a `Box<RealmInfo>` freed by
/// [`destroy_principals`]).
#[derive(Debug)]
pub(crate) struct RealmInfo {
    /// The window (global) index of the realm in its [`Js`].
    pub window: usize,
    /// The origin of its document.
    pub origin: Origin,
}

/// The RealmInfo of principals made by `new_window_of_kind` (`None` for null principals).
///
/// # Safety
/// `p` must be null or live principals made by `CreateRustJSPrincipals` with a RealmInfo.
pub(super) unsafe fn realm_info<'a>(p: *mut jsapi::JSPrincipals) -> Option<&'a RealmInfo> {
    if p.is_null() {
        return None;
    }
    // SAFETY: per the contract, `p` are live principals made by `CreateRustJSPrincipals`.
    let info = unsafe { mozjs::glue::GetRustJSPrincipalsPrivate(p) } as *const RealmInfo;
    // SAFETY: the principals' private is null or their Box<RealmInfo>, which lives as long
    // as the principals (freed by `destroy_principals`).
    unsafe { info.as_ref() }
}

/// The RealmInfo of the realm `obj` lives in.
///
/// # Safety
/// `obj` must be a live object.
pub(super) unsafe fn object_realm_info<'a>(obj: *mut JSObject) -> Option<&'a RealmInfo> {
    // SAFETY: per the contract, `obj` is a live object.
    let realm = unsafe { jsapi::GetObjectRealmOrNull(obj) };
    if realm.is_null() {
        return None;
    }
    // SAFETY: `realm` is the live, non-null realm of a live object.
    let principals = unsafe { jsapi::GetRealmPrincipals(realm) };
    // SAFETY: every realm's principals are null or made by `new_window_of_kind` with a
    // RealmInfo, and live as long as the realm.
    unsafe { realm_info(principals) }
}

pub(super) static PRINCIPALS_CALLBACKS: mozjs::glue::JSPrincipalsCallbacks =
    mozjs::glue::JSPrincipalsCallbacks {
        write: None,
        isSystemPrincipal: Some(not_system_principal),
        isAddonPrincipal: Some(not_system_principal),
    };

pub(super) unsafe extern "C" fn not_system_principal(_p: *mut jsapi::JSPrincipals) -> bool {
    guarded(false, || false)
}

pub(super) unsafe extern "C" fn destroy_principals(p: *mut jsapi::JSPrincipals) {
    guarded((), || {
        // SpiderMonkey calls this once, when the last reference to principals made by
        // `CreateRustJSPrincipals` goes.
        // SAFETY: `p` are live principals made by `CreateRustJSPrincipals`.
        let info = unsafe { mozjs::glue::GetRustJSPrincipalsPrivate(p) } as *mut RealmInfo;
        if !info.is_null() {
            // SAFETY: the principals' private is the Box<RealmInfo> made with them
            // (`new_window_of_kind`), freed only here, once.
            drop(unsafe { Box::from_raw(info) });
        }
        // SAFETY: `p` are principals made by `CreateRustJSPrincipals`, released now that
        // their last reference is gone; nothing uses them after this.
        unsafe { mozjs::glue::DestroyRustJSPrincipals(p) }
    })
}

/// The security callbacks: `subsumes` says whether code of principals `a` may see what
/// principals `b` own — same origin (<https://html.spec.whatwg.org/#same-origin>). SpiderMonkey
/// asks it to filter SavedFrame stacks (`Error.stack`, captured stacks) so that a stack
/// never shows a frame of an origin its reader may not see.
pub(super) static SECURITY_CALLBACKS: jsapi::JSSecurityCallbacks = jsapi::JSSecurityCallbacks {
    contentSecurityPolicyAllows: None,
    codeForEvalGets: None,
    subsumes: Some(subsumes),
};

pub(super) unsafe extern "C" fn subsumes(
    a: *mut jsapi::JSPrincipals,
    b: *mut jsapi::JSPrincipals,
) -> bool {
    guarded(false, || {
        // SAFETY: SpiderMonkey passes principals of live realms (or null for none).
        let a = unsafe { realm_info(a) };
        // SAFETY: as for `a`.
        let b = unsafe { realm_info(b) };
        match (a, b) {
            (Some(a), Some(b)) => a.origin.same_origin(&b.origin),
            // No principals: the engine itself, which sees everything and is seen by all.
            (None, _) | (_, None) => true,
        }
    })
}
