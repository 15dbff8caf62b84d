//! Compartments and principals: the wrap callbacks (transparent between same-origin
//! realms, opaque otherwise), each realm's `RealmInfo`, and `subsumes`.

use std::ptr;

use jsprof_net::Origin;
use jsprof_profiler::RealmId;
use mozjs::jsapi::{self, JSContext, JSObject};

use crate::runtime::WindowId;

use super::guarded;

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
    pub window: WindowId,
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

/// The window of a SavedFrame's realm, from its principals.
///
/// # Safety
/// `frame` must be a live SavedFrame.
pub(super) unsafe fn saved_frame_window(frame: *mut JSObject) -> Option<WindowId> {
    // SAFETY: per the contract.
    let (principals, _muted) = unsafe { jsprof_spidermonkey::saved_frame_principals(frame) };
    // SAFETY: a frame's principals are null or its realm's, made by `new_window_of_kind`
    // (or `read_principals`) with a RealmInfo, kept alive by the frame.
    unsafe { realm_info(principals) }.map(|r| r.window)
}

/// The profiler agent's map from principals to realm ids (`AgentConfig::realm_of_principals`):
/// the realm of the principals' window.
///
/// # Safety
/// `p` must be null or principals made by this crate (every realm's are).
pub unsafe fn realm_of_principals(p: *mut jsapi::JSPrincipals) -> Option<RealmId> {
    // SAFETY: per the contract.
    unsafe { realm_info(p) }.map(|r| r.window.realm())
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
        write: Some(write_principals),
        isSystemPrincipal: Some(not_system_principal),
        isAddonPrincipal: Some(not_system_principal),
    };

/// Marks our principals in a structured clone (inside SpiderMonkey's SavedFrame record).
const PRINCIPALS_TAG: u32 = 0xFFFF_8100;
/// Principals that belong to no window of this runtime (read from a structured clone).
pub(super) const NO_WINDOW: WindowId = WindowId(usize::MAX);

/// An origin as a clone carries it: `f` the shared origin of `file:` URLs, `o` an opaque
/// one, `t` and the ASCII serialisation of a tuple origin.
fn encode_origin(origin: &Origin) -> String {
    if origin.is_local_files() {
        "f".into()
    } else if origin.is_opaque() {
        "o".into()
    } else {
        format!("t{}", origin.serialize())
    }
}

/// The origin [`encode_origin`] wrote; a fresh opaque origin for anything else.
fn decode_origin(text: &str) -> Origin {
    match text.split_at_checked(1) {
        Some(("f", "")) => Origin::local_files(),
        Some(("t", url)) => match jsprof_net::Url::parse(url) {
            Ok(url) => Origin::of(&url),
            Err(_) => Origin::new_opaque(),
        },
        _ => Origin::new_opaque(),
    }
}

/// Writes principals into a structured clone (an `Error`'s stack is cloned with its
/// SavedFrames, each with its principals): their origin, which is what decides who may
/// see the frames when the clone is read (see [`read_principals`]).
pub(super) unsafe extern "C" fn write_principals(
    p: *mut jsapi::JSPrincipals,
    _cx: *mut JSContext,
    w: *mut jsapi::JSStructuredCloneWriter,
) -> bool {
    guarded(false, || {
        // SAFETY: SpiderMonkey passes the live principals of a SavedFrame, ours.
        let origin = unsafe { realm_info(p) }.map(|i| encode_origin(&i.origin));
        let bytes = origin.unwrap_or_else(|| "o".into()).into_bytes();
        let Ok(len) = u32::try_from(bytes.len()) else {
            return false;
        };
        // SAFETY: `w` is the live writer of the clone being written.
        let tagged = unsafe { jsapi::JS_WriteUint32PairUnchecked(w, PRINCIPALS_TAG, len) };
        // SAFETY: as above; `bytes` is live for the call, which copies it.
        tagged && unsafe { jsapi::JS_WriteBytes(w, bytes.as_ptr().cast(), bytes.len()) }
    })
}

/// Reads principals [`write_principals`] wrote: new principals of that origin, of no
/// window, returned held (SpiderMonkey takes that reference).
pub(super) unsafe extern "C" fn read_principals(
    _cx: *mut JSContext,
    r: *mut jsapi::JSStructuredCloneReader,
    out: *mut *mut jsapi::JSPrincipals,
) -> bool {
    guarded(false, || {
        let (mut tag, mut len) = (0u32, 0u32);
        // SAFETY: `r` is the live reader of the clone being read; the out-pointers are ours.
        if !unsafe { jsapi::JS_ReadUint32Pair(r, &mut tag, &mut len) } || tag != PRINCIPALS_TAG {
            return false;
        }
        let mut bytes = vec![0u8; len as usize];
        // SAFETY: as above; `bytes` has room for `len` bytes.
        if !unsafe { jsapi::JS_ReadBytes(r, bytes.as_mut_ptr().cast(), bytes.len()) } {
            return false;
        }
        let info = Box::new(RealmInfo {
            window: NO_WINDOW,
            origin: decode_origin(&String::from_utf8_lossy(&bytes)),
        });
        // SAFETY: as in `new_window_of_kind`: a static callback table, and the principals
        // take ownership of the RealmInfo, which `destroy_principals` frees.
        let principals = unsafe {
            mozjs::glue::CreateRustJSPrincipals(&PRINCIPALS_CALLBACKS, Box::into_raw(info).cast())
        };
        // SAFETY: `principals` were just made; the reference taken here is SpiderMonkey's.
        unsafe { jsapi::JS_HoldPrincipals(principals) };
        // SAFETY: `out` is SpiderMonkey's out-parameter for this call.
        unsafe { *out = principals };
        true
    })
}

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
