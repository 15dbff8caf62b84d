//! Structured clone (<https://html.spec.whatwg.org/#safe-passing-of-structured-data>) by
//! SpiderMonkey's own serializer, `JS_WriteStructuredClone` / `JS_ReadStructuredClone`, as
//! Servo does: one implementation for `structuredClone`, `postMessage` to windows and ports,
//! and messages to and from workers.
//!
//! The engine clones what it knows (primitives, plain objects, arrays, `Date`, `RegExp`,
//! `Map`, `Set`, `ArrayBuffer` and its views, `DataView`, `Error`s, `BigInt`), cycles
//! included. The prelude's platform objects that may be cloned (`Blob`, and `MessagePort`s
//! in the transfer list) are objects of [`PLATFORM_CLASS`], which SpiderMonkey does not
//! know: it hands them to our write callback, which asks the prelude for their serialised
//! form (a string), and the read callback asks the prelude to make the object again from
//! it. Anything else (a function, a symbol, another DOM object) fails the clone, and the
//! prelude throws a `DataCloneError`.
//!
//! Serialised data is the clone buffer's bytes, carried in a JS string of Latin-1
//! characters (one per byte), written for `DifferentProcess` so it holds no pointers and
//! may cross threads as text.

use std::ffi::{c_void, CStr};
use std::ptr;

use mozjs::jsapi::{self, CallArgs, HandleValueArray, JSContext, JSObject, Value};
use mozjs::jsval::{ObjectValue, StringValue, UndefinedValue};
use mozjs::rooted;
use mozjs::rust::JSAutoStructuredCloneBufferWrapper;

use super::guarded;
use super::natives::with_args;
use super::strings::{new_string, throw_error, throw_type_error, to_rust_string};

/// The class of the prelude's platform objects (`host.platformObject(proto, state)`): one
/// reserved slot, the engine state the prelude gave it (a port's, a Blob's), which only the
/// prelude reads (`host.platformState`).
static PLATFORM_CLASS: jsapi::JSClass = jsapi::JSClass {
    name: c"PlatformObject".as_ptr(),
    flags: 1 << jsapi::JSCLASS_RESERVED_SLOTS_SHIFT,
    cOps: ptr::null(),
    spec: ptr::null(),
    ext: ptr::null(),
    oOps: ptr::null(),
};

/// `JS_SCTAG_USER_MIN` of StructuredClone.h: the first tag an embedder may use.
const SCTAG_USER_MIN: u32 = 0xFFFF_8000;
/// A platform object, followed by its serialised form (a string).
const TAG_PLATFORM: u32 = SCTAG_USER_MIN + 1;

/// What the callbacks of one clone operation share (the `closure`).
struct CloneState {
    /// The prelude's function that serialises (write) or makes (read) a platform object.
    platform: jsapi::HandleValue,
    /// The message of a clone error SpiderMonkey reported (then no exception is pending).
    error: Option<String>,
}

static CALLBACKS: jsapi::JSStructuredCloneCallbacks = jsapi::JSStructuredCloneCallbacks {
    read: Some(read_platform),
    write: Some(write_platform),
    reportError: Some(report_error),
    readTransfer: None,
    writeTransfer: None,
    freeTransfer: None,
    canTransfer: None,
    sabCloned: None,
};

const NO_SHARED_MEMORY: jsapi::JS::CloneDataPolicy = jsapi::JS::CloneDataPolicy {
    allowIntraClusterClonableSharedObjects_: false,
    allowSharedMemoryObjects_: false,
};

/// `f(arg)` with an undefined `this`, into `out`; false with the exception pending if it
/// threw.
///
/// # Safety
/// `cx` live, in a realm; `f` rooted; `arg` a value that is rooted or needs no rooting (it
/// is rooted here before anything can GC); `out` a rooted location.
unsafe fn call1(
    cx: *mut JSContext,
    f: jsapi::HandleValue,
    arg: Value,
    out: jsapi::MutableHandleValue,
) -> bool {
    rooted!(in(cx) let argv = mozjs::gc::ValueArray::<1>::new([arg]));
    let args = HandleValueArray::from(&argv);
    rooted!(in(cx) let this = ptr::null_mut::<JSObject>());
    // SAFETY: per the contract; the function, its argument and `out` are rooted.
    unsafe { jsapi::JS_CallFunctionValue(cx, this.handle().into(), f, &args, out) }
}

/// Makes a platform object with prototype `proto`.
///
/// # Safety
/// `cx` live, in a realm; `proto` rooted.
pub(super) unsafe fn new_platform_object(
    cx: *mut JSContext,
    proto: jsapi::HandleObject,
) -> *mut JSObject {
    // SAFETY: per the contract; `PLATFORM_CLASS` is static.
    unsafe { jsapi::JS_NewObjectWithGivenProto(cx, &PLATFORM_CLASS, proto) }
}

/// `obj` unwrapped (a transparent wrapper of a same-origin realm's object gives that
/// object) if it is a platform object; null otherwise, also for a wrapper that may not be
/// unwrapped (another origin's).
///
/// # Safety
/// `obj` is a live object.
unsafe fn unwrapped_platform_object(obj: *mut JSObject) -> *mut JSObject {
    // SAFETY: per the contract; CheckedUnwrapStatic only reads the object and its wrappers.
    let unwrapped = unsafe { mozjs::glue::UnwrapObjectStatic(obj) };
    if unwrapped.is_null() {
        return unwrapped;
    }
    // SAFETY: `unwrapped` is the live object `obj` wraps (or `obj` itself).
    let class = unsafe { mozjs::rust::get_object_class(unwrapped) };
    if ptr::eq(class, &PLATFORM_CLASS) {
        unwrapped
    } else {
        ptr::null_mut()
    }
}

/// Whether `obj` is a platform object, or a transparent wrapper of one.
///
/// # Safety
/// `obj` is a live object.
unsafe fn is_platform_object(obj: *mut JSObject) -> bool {
    // SAFETY: per the contract.
    !unsafe { unwrapped_platform_object(obj) }.is_null()
}

/// SpiderMonkey met an object it cannot clone itself: a platform object is written as
/// `TAG_PLATFORM` and the string the prelude's function makes of it; anything else fails.
unsafe extern "C" fn write_platform(
    cx: *mut JSContext,
    w: *mut jsapi::JSStructuredCloneWriter,
    obj: jsapi::HandleObject,
    _same_process_scope_required: *mut bool,
    closure: *mut c_void,
) -> bool {
    guarded(false, || {
        // SAFETY: `closure` is the `CloneState` of the `serialize` call running now.
        let state = unsafe { &mut *closure.cast::<CloneState>() };
        // A platform object of another same-origin realm comes behind a transparent
        // wrapper: its class is the wrapped object's.
        // SAFETY: `obj` is a live, rooted object SpiderMonkey hands us.
        if !unsafe { is_platform_object(obj.get()) } {
            state.error = Some("An object could not be cloned.".into());
            return false;
        }
        rooted!(in(cx) let mut out = UndefinedValue());
        // SAFETY: `cx` is in the serializing realm; the function is rooted by the native's
        // arguments and `out` is rooted. A throw stays pending and fails the clone.
        if !unsafe {
            call1(
                cx,
                state.platform,
                ObjectValue(obj.get()),
                out.handle_mut().into(),
            )
        } {
            return false;
        }
        if !out.get().is_string() {
            state.error = Some("A platform object could not be cloned.".into());
            return false;
        }
        rooted!(in(cx) let s = out.get().to_string());
        // SAFETY: `w` is the live writer of this clone.
        let tagged = unsafe { jsapi::JS_WriteUint32PairUnchecked(w, TAG_PLATFORM, 0) };
        // SAFETY: as above; `s` is a rooted string.
        tagged && unsafe { jsapi::JS_WriteString(w, s.handle().into()) }
    })
}

/// Reads a platform object written by [`write_platform`]: the prelude's function makes it
/// from its string.
unsafe extern "C" fn read_platform(
    cx: *mut JSContext,
    r: *mut jsapi::JSStructuredCloneReader,
    _policy: *const jsapi::JS::CloneDataPolicy,
    tag: u32,
    _data: u32,
    closure: *mut c_void,
) -> *mut JSObject {
    guarded(ptr::null_mut(), || {
        // SAFETY: `closure` is the `CloneState` of the `deserialize` call running now.
        let state = unsafe { &mut *closure.cast::<CloneState>() };
        if tag != TAG_PLATFORM {
            state.error = Some(format!("Unknown clone tag {tag:#x}."));
            return ptr::null_mut();
        }
        rooted!(in(cx) let mut s = ptr::null_mut::<jsapi::JSString>());
        // SAFETY: `r` is the live reader of this clone; `s` a rooted location.
        if !unsafe { jsapi::JS_ReadString(r, s.handle_mut().into()) } {
            return ptr::null_mut();
        }
        // SAFETY: `JS_ReadString` succeeded, so `s` holds a live (rooted) string.
        let arg = StringValue(unsafe { &*s.get() });
        rooted!(in(cx) let mut out = UndefinedValue());
        // SAFETY: `cx` is in the reading realm; the function is rooted by the native's
        // arguments and `out` is rooted. A throw stays pending and fails the read.
        if !unsafe { call1(cx, state.platform, arg, out.handle_mut().into()) } {
            return ptr::null_mut();
        }
        if !out.get().is_object() {
            state.error = Some("A platform object could not be made again.".into());
            return ptr::null_mut();
        }
        out.get().to_object()
    })
}

/// A clone error (an uncloneable value, a detached buffer, …): kept for the prelude to
/// throw as a `DataCloneError`.
unsafe extern "C" fn report_error(
    _cx: *mut JSContext,
    _errorid: u32,
    closure: *mut c_void,
    message: *const std::ffi::c_char,
) {
    guarded((), || {
        // SAFETY: `closure` is the `CloneState` of the clone running now.
        let state = unsafe { &mut *closure.cast::<CloneState>() };
        let text = if message.is_null() {
            "The value could not be cloned.".to_string()
        } else {
            // SAFETY: SpiderMonkey passes a NUL-terminated message, live for the call.
            unsafe { CStr::from_ptr(message) }
                .to_string_lossy()
                .into_owned()
        };
        state.error.get_or_insert(text);
    })
}

/// Why a clone failed.
pub(super) enum CloneError {
    /// An exception is pending (a getter or the prelude's function threw).
    Thrown,
    /// A clone error, with its message: the caller throws a `DataCloneError`.
    Uncloneable(String),
}

/// A new, empty clone buffer (freed when the wrapper drops).
fn new_buffer(scope: jsapi::JS::StructuredCloneScope) -> JSAutoStructuredCloneBufferWrapper {
    // SAFETY: allocates a buffer that only refers to the static `CALLBACKS`.
    unsafe { JSAutoStructuredCloneBufferWrapper::new(scope, &CALLBACKS) }
}

/// The clone buffer of a live `JSAutoStructuredCloneBuffer`.
fn clone_data(buffer: &JSAutoStructuredCloneBufferWrapper) -> *mut jsapi::JSStructuredCloneData {
    let raw = buffer.as_raw_ptr();
    // SAFETY: `raw` is the live buffer `buffer` owns; only the field's address is taken.
    unsafe { ptr::addr_of_mut!((*raw).data_) }
}

/// StructuredSerialize: `value`'s clone bytes; `platform` serialises platform objects.
///
/// # Safety
/// `cx` live, in the value's realm; `value` and `platform` rooted.
pub(super) unsafe fn serialize(
    cx: *mut JSContext,
    value: jsapi::HandleValue,
    platform: jsapi::HandleValue,
) -> Result<Vec<u8>, CloneError> {
    let scope = jsapi::JS::StructuredCloneScope::DifferentProcess;
    let buffer = new_buffer(scope);
    let data = clone_data(&buffer);
    let mut state = CloneState {
        platform,
        error: None,
    };
    rooted!(in(cx) let no_transfer = UndefinedValue());
    // SAFETY: per the contract; `data` is the buffer's, live until `buffer` drops at the
    // end; `state` outlives the call, which is the only user of the closure pointer.
    let written = unsafe {
        jsapi::JS_WriteStructuredClone(
            cx,
            value,
            data,
            scope,
            &NO_SHARED_MEMORY,
            &CALLBACKS,
            ptr::addr_of_mut!(state).cast(),
            no_transfer.handle().into(),
        )
    };
    if !written {
        return Err(state
            .error
            .map_or(CloneError::Thrown, CloneError::Uncloneable));
    }
    // SAFETY: `data` is the live, filled clone buffer.
    let len = unsafe { mozjs::glue::GetLengthOfJSStructuredCloneData(data) };
    let mut bytes = vec![0u8; len];
    // SAFETY: `bytes` has room for exactly the buffer's `len` bytes.
    unsafe { mozjs::glue::CopyJSStructuredCloneData(data, bytes.as_mut_ptr()) };
    Ok(bytes)
}

/// StructuredDeserialize of `bytes` (from [`serialize`]) into `out`, in the current realm;
/// `platform` makes platform objects again.
///
/// # Safety
/// `cx` live, in the target realm; `platform` rooted; `out` a rooted location.
pub(super) unsafe fn deserialize(
    cx: *mut JSContext,
    bytes: &[u8],
    platform: jsapi::HandleValue,
    out: jsapi::MutableHandleValue,
) -> Result<(), CloneError> {
    let scope = jsapi::JS::StructuredCloneScope::DifferentProcess;
    let buffer = new_buffer(scope);
    let data = clone_data(&buffer);
    // SAFETY: `bytes` is live for the call, which copies it into the buffer's own storage.
    if !unsafe { mozjs::glue::WriteBytesToJSStructuredCloneData(bytes.as_ptr(), bytes.len(), data) }
    {
        return Err(CloneError::Uncloneable(
            "Out of memory reading a clone.".into(),
        ));
    }
    let mut state = CloneState {
        platform,
        error: None,
    };
    // SAFETY: per the contract; `data` lives as long as `buffer`, `state` outlives the call.
    // The bytes hold no pointers: `DifferentProcess` data is read as such, whatever it says.
    let read = unsafe {
        jsapi::JS_ReadStructuredClone(
            cx,
            data,
            jsapi::JS_STRUCTURED_CLONE_VERSION,
            scope,
            out,
            &NO_SHARED_MEMORY,
            &CALLBACKS,
            ptr::addr_of_mut!(state).cast(),
        )
    };
    if read {
        Ok(())
    } else {
        Err(state
            .error
            .map_or(CloneError::Thrown, CloneError::Uncloneable))
    }
}

/// Calls the prelude's `on_error(message)` (which throws the `DataCloneError`); throws a
/// plain Error if it did not throw. Always leaves an exception pending.
///
/// # Safety
/// `cx` live, in a realm; `on_error` rooted.
unsafe fn throw_clone_error(cx: *mut JSContext, on_error: jsapi::HandleValue, message: &str) {
    rooted!(in(cx) let mut text = UndefinedValue());
    // SAFETY: per the contract; `text` is a rooted location.
    unsafe { new_string(cx, message, text.handle_mut()) };
    rooted!(in(cx) let mut out = UndefinedValue());
    // SAFETY: per the contract; `on_error` is rooted, `text` was rooted above (and is again
    // as the call's argument), `out` is rooted.
    let returned = unsafe { call1(cx, on_error, text.get(), out.handle_mut().into()) };
    if returned {
        // SAFETY: per the contract.
        unsafe { throw_error(cx, message) };
    }
}

/// The result of a clone native: `Ok` returns, a clone error goes through `on_error`.
///
/// # Safety
/// `cx` live, in a realm; `on_error` rooted.
unsafe fn finish(
    cx: *mut JSContext,
    result: Result<(), CloneError>,
    on_error: jsapi::HandleValue,
) -> bool {
    // SAFETY: per the contract.
    let pending = unsafe { jsapi::JS_IsExceptionPending(cx) };
    match result {
        Ok(()) => true,
        Err(CloneError::Thrown) if pending => false,
        Err(CloneError::Thrown) => {
            // A failure SpiderMonkey did not report: still a clone error, never an
            // uncatchable one.
            // SAFETY: per the contract.
            unsafe { throw_clone_error(cx, on_error, "The value could not be cloned.") };
            false
        }
        Err(CloneError::Uncloneable(message)) => {
            // SAFETY: per the contract.
            unsafe { throw_clone_error(cx, on_error, &message) };
            false
        }
    }
}

/// `platformObject(proto, state)`: a new platform object (an `EventTarget`, an `Event`, a
/// `Blob`…) with prototype `proto`, holding `state` (any value; `undefined` if absent) in
/// its native slot.
pub(super) unsafe extern "C" fn native_platform_object(
    cx: *mut JSContext,
    argc: u32,
    vp: *mut Value,
) -> bool {
    let body = |args: &CallArgs| {
        let proto = args.get(0);
        if !proto.get().is_object() {
            // SAFETY: `cx` is the native's live context, in a realm.
            unsafe { throw_type_error(cx, "platformObject: the prototype is not an object") };
            return false;
        }
        rooted!(in(cx) let proto = proto.get().to_object());
        // SAFETY: `cx` is in the caller's realm; `proto` is rooted.
        let obj = unsafe { new_platform_object(cx, proto.handle().into()) };
        if obj.is_null() {
            return false;
        }
        let state = args.get(1).get();
        // SAFETY: `obj` is the platform object just made (one reserved slot), not yet
        // reachable by anything else; `state` is a value of the caller's realm, rooted by
        // the call's arguments (the object's realm too).
        unsafe { jsapi::JS_SetReservedSlot(obj, 0, &state) };
        args.rval().set(ObjectValue(obj));
        true
    };
    // SAFETY: called from this JSNative with SpiderMonkey's `cx`, `argc` and `vp`.
    unsafe { with_args(cx, argc, vp, "platformObject", 1, body) }
}

/// `platformState(obj)`: the state `obj` was made with if it is a platform object (of this
/// realm, or of a same-origin one behind a transparent wrapper: wrapped for this realm),
/// `undefined` for anything else. Nothing of the page runs: no getter, no proxy trap.
pub(super) unsafe extern "C" fn native_platform_state(
    cx: *mut JSContext,
    argc: u32,
    vp: *mut Value,
) -> bool {
    let body = |args: &CallArgs| {
        args.rval().set(UndefinedValue());
        let v = args.get(0).get();
        if !v.is_object() {
            return true;
        }
        // SAFETY: `v` is an object rooted by the call's arguments.
        let obj = unsafe { unwrapped_platform_object(v.to_object()) };
        if obj.is_null() {
            return true;
        }
        let mut slot = UndefinedValue();
        // SAFETY: `obj` is a live platform object (kept alive by the wrapper or the argument
        // that leads to it); slot 0 is its one reserved slot. Nothing here can GC.
        unsafe { mozjs::glue::JS_GetReservedSlot(obj, 0, &mut slot) };
        rooted!(in(cx) let mut state = slot);
        // SAFETY: `cx` is in the caller's realm; `state` is rooted. The object may be
        // another realm's: its state is wrapped for this one.
        if !unsafe { jsapi::JS_WrapValue(cx, state.handle_mut().into()) } {
            return false;
        }
        args.rval().set(state.get());
        true
    };
    // SAFETY: called from this JSNative with SpiderMonkey's `cx`, `argc` and `vp`.
    unsafe { with_args(cx, argc, vp, "platformState", 1, body) }
}

/// `cloneWrite(value, platformWrite, onError)`: StructuredSerialize of `value` as a string
/// of Latin-1 characters, one per byte; `platformWrite(obj)` gives a platform object's
/// serialised form; a clone error calls `onError(message)`, which throws.
pub(super) unsafe extern "C" fn native_clone_write(
    cx: *mut JSContext,
    argc: u32,
    vp: *mut Value,
) -> bool {
    let body = |args: &CallArgs| {
        // SAFETY: `cx` is in the caller's realm; the arguments are rooted by `vp`.
        let bytes = match unsafe { serialize(cx, args.get(0), args.get(1)) } {
            Ok(bytes) => bytes,
            // SAFETY: as above.
            Err(e) => return unsafe { finish(cx, Err(e), args.get(2)) },
        };
        // SAFETY: Latin-1 characters from `bytes`, which outlives the call (they are copied).
        let s = unsafe { jsapi::JS_NewStringCopyN(cx, bytes.as_ptr().cast(), bytes.len()) };
        if s.is_null() {
            return false;
        }
        // SAFETY: `s` is a fresh, non-null string, stored in the rooted return value at once.
        args.rval().set(StringValue(unsafe { &*s }));
        true
    };
    // SAFETY: called from this JSNative with SpiderMonkey's `cx`, `argc` and `vp`.
    unsafe { with_args(cx, argc, vp, "cloneWrite", 3, body) }
}

/// `cloneRead(data, platformRead, onError)`: StructuredDeserialize of `data` (from
/// `cloneWrite`, in any realm or thread) in the caller's realm; `platformRead(s)` makes a
/// platform object from its serialised form.
pub(super) unsafe extern "C" fn native_clone_read(
    cx: *mut JSContext,
    argc: u32,
    vp: *mut Value,
) -> bool {
    let body = |args: &CallArgs| {
        // SAFETY: argument 0 is rooted by `vp`.
        let Some(text) = (unsafe { to_rust_string(cx, args.get(0)) }) else {
            return false;
        };
        let bytes: Option<Vec<u8>> = text
            .chars()
            .map(|c| u8::try_from(u32::from(c)).ok())
            .collect();
        let result = match bytes {
            None => Err(CloneError::Uncloneable(
                "The message is not clone data.".into(),
            )),
            Some(bytes) => {
                rooted!(in(cx) let mut out = UndefinedValue());
                // SAFETY: `cx` is in the caller's realm; `platformRead` is rooted by `vp`
                // and `out` is a rooted location.
                let read = unsafe { deserialize(cx, &bytes, args.get(1), out.handle_mut().into()) };
                if read.is_ok() {
                    args.rval().set(out.get());
                }
                read
            }
        };
        // SAFETY: `cx` live, in the caller's realm; `onError` rooted by `vp`.
        unsafe { finish(cx, result, args.get(2)) }
    };
    // SAFETY: called from this JSNative with SpiderMonkey's `cx`, `argc` and `vp`.
    unsafe { with_args(cx, argc, vp, "cloneRead", 3, body) }
}
