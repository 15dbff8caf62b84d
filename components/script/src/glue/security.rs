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
        // SAFETY: called by SpiderMonkey with a live context, in the destination realm, and a
        // rooted object.
        unsafe {
            let realm = jsapi::GetCurrentRealmOrNull(cx);
            let here = if realm.is_null() {
                None
            } else {
                realm_info(jsapi::GetRealmPrincipals(realm))
            };
            let there = object_realm_info(obj.get());
            let same_origin = match (here, there) {
                (Some(a), Some(b)) => a.origin.same_origin(&b.origin),
                _ => true,
            };
            let handler = if same_origin {
                mozjs::glue::GetCrossCompartmentWrapper()
            } else {
                mozjs::glue::GetSecurityWrapper()
            };
            mozjs::glue::WrapperNew(cx, obj, handler, ptr::null())
        }
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
    // SAFETY: per the contract; the RealmInfo lives as long as the principals.
    unsafe { (mozjs::glue::GetRustJSPrincipalsPrivate(p) as *const RealmInfo).as_ref() }
}

/// The RealmInfo of the realm `obj` lives in.
///
/// # Safety
/// `obj` must be a live object.
pub(super) unsafe fn object_realm_info<'a>(obj: *mut JSObject) -> Option<&'a RealmInfo> {
    // SAFETY: per the contract; every realm's principals are made by new_window_of_kind.
    unsafe {
        let realm = jsapi::GetObjectRealmOrNull(obj);
        if realm.is_null() {
            return None;
        }
        realm_info(jsapi::GetRealmPrincipals(realm))
    }
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
        // SAFETY: SpiderMonkey calls this once, when the last reference to principals made by
        // `CreateRustJSPrincipals` goes; their private is the Box<RealmInfo> made with them.
        unsafe {
            let info = mozjs::glue::GetRustJSPrincipalsPrivate(p) as *mut RealmInfo;
            if !info.is_null() {
                drop(Box::from_raw(info));
            }
            mozjs::glue::DestroyRustJSPrincipals(p)
        }
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
        let (a, b) = unsafe { (realm_info(a), realm_info(b)) };
        match (a, b) {
            (Some(a), Some(b)) => a.origin.same_origin(&b.origin),
            // No principals: the engine itself, which sees everything and is seen by all.
            (None, _) | (_, None) => true,
        }
    })
}
