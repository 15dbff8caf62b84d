//! Strings across the boundary: Rust strings made JS strings and C strings, JS values
//! converted with ToString, and errors thrown with a message.

use std::ffi::CString;
use std::ptr::NonNull;

use mozjs::jsapi::{self, JSContext};
use mozjs::jsval::{StringValue, UndefinedValue};
use mozjs::rooted;

/// `s` as a C string (NULs replaced, so it never fails).
pub(super) fn cstring(s: &str) -> CString {
    CString::new(s.replace('\0', "\u{FFFD}")).unwrap_or_default()
}

/// Makes a JS string from `s` into `out`.
///
/// # Safety
/// `cx` must be the live context of this thread, in a realm.
pub(super) unsafe fn new_string(cx: *mut JSContext, s: &str, out: mozjs::rust::MutableHandleValue) {
    let utf16: Vec<u16> = s.encode_utf16().collect();
    // SAFETY: the pointer and length describe `utf16`, which outlives the call (the chars are copied).
    let js = unsafe { jsapi::JS_NewUCStringCopyN(cx, utf16.as_ptr(), utf16.len()) };
    let mut out = out;
    out.set(if js.is_null() {
        UndefinedValue()
    } else {
        // SAFETY: `js` is non-null in this branch, a fresh string.
        StringValue(unsafe { &*js })
    });
}

/// Makes a JS string of `bytes`, one Latin-1 code unit each (a `ByteString`), into `out`
/// (undefined if the string could not be made).
///
/// # Safety
/// `cx` must be the live context of this thread, in a realm.
pub(super) unsafe fn new_latin1_string(
    cx: *mut JSContext,
    bytes: &[u8],
    out: mozjs::rust::MutableHandleValue,
) {
    // SAFETY: the pointer and length describe `bytes`, which outlives the call; the chars
    // are copied as Latin-1.
    let js = unsafe { jsapi::JS_NewStringCopyN(cx, bytes.as_ptr().cast(), bytes.len()) };
    let mut out = out;
    out.set(if js.is_null() {
        UndefinedValue()
    } else {
        // SAFETY: `js` is non-null in this branch, a fresh string.
        StringValue(unsafe { &*js })
    });
}

/// Converts a JS value to a Rust string with ToString.
///
/// # Safety
/// `cx` must be the live context of this thread; `v` must be rooted.
pub(super) unsafe fn to_rust_string(cx: *mut JSContext, v: jsapi::HandleValue) -> Option<String> {
    let nn = NonNull::new(cx)?;
    // SAFETY: per the contract, `nn` is this thread's live context; one wrapper for this
    // call, used only here.
    let mut wrapper = unsafe { mozjs::context::JSContext::from_ptr(nn) };
    // SAFETY: per the contract, `v` is rooted, so it is a valid handle for this call.
    let v = unsafe { mozjs::rust::Handle::from_raw(v) };
    // SAFETY: `wrapper` is this thread's live context and `v` a rooted value; the result
    // is rooted below before anything else can GC.
    let s = unsafe { mozjs::rust::ToString(&mut wrapper, v) };
    let s = NonNull::new(s)?;
    rooted!(in(cx) let _keep = s.as_ptr());
    // SAFETY: `s` is a non-null string, rooted by `_keep` while it is read.
    Some(unsafe { mozjs::conversions::jsstr_to_string(&wrapper, s) })
}

/// Throws an Error with `message` (SpiderMonkey's reported errors are plain `Error`s).
///
/// # Safety
/// `cx` must be the live context of this thread.
pub(super) unsafe fn throw_error(cx: *mut JSContext, message: &str) {
    let c = cstring(message);
    // SAFETY: `c` is a valid C string; "%s" makes the message verbatim.
    unsafe { jsapi::JS_ReportErrorUTF8(cx, c"%s".as_ptr(), c.as_ptr()) };
}

/// Throws a TypeError with `message`.
///
/// # Safety
/// `cx` must be the live context of this thread, in a realm.
pub(super) unsafe fn throw_type_error(cx: *mut JSContext, message: &str) {
    let Some(nn) = NonNull::new(cx) else { return };
    // SAFETY: per the contract.
    unsafe {
        let mut wrapper = mozjs::context::JSContext::from_ptr(nn);
        mozjs::error::throw_type_error(&mut wrapper, &cstring(message));
    }
}
