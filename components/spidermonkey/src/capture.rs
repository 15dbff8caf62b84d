//! The fallback stack capture, through SavedFrames: `JS::CaptureCurrentStack` in the
//! interrupt callback, then each frame's reserved slots (the fast path, SpiderMonkey 153's
//! layout, class-checked) or the public accessors. The walk (`sampling.rs`) serves every
//! sample it can; this serves the rest (instrumentation off, a walk that timed out,
//! `profiler.signal_sampling` off).
//!
//! The SavedFrame helpers are public: an embedder reads the caller of a native from them too
//! (jsprof's `callerWindow`, the incumbent of `postMessage`).

use std::ffi::CStr;
use std::ptr;

use jsprof_profiler::RawFrame;
use mozjs::jsapi::{self, JSContext, JSObject, Value};
use mozjs::jsval::UndefinedValue;
use mozjs::rooted;

use crate::frames::FrameReader;
use jsprof_symbolizer::SourceId;

/// The SavedFrame reserved slots (`js/src/vm/SavedFrame.h`, the same in SpiderMonkey
/// 153.3 and 153.6).
pub mod slot {
    /// The frame's ScriptSource id (an int32).
    pub const SOURCE_ID: u32 = 1;
    /// The current line (an int32, 1-based).
    pub const LINE: u32 = 2;
    /// The current column (an int32, a `TaggedColumnNumberOneOrigin`).
    pub const COLUMN: u32 = 3;
    /// The async cause (a string on the first frame of an async stack).
    pub const ASYNC_CAUSE: u32 = 5;
    /// The caller's SavedFrame (an object), or null.
    pub const PARENT: u32 = 6;
    /// The realm's principals, with the script's muted-errors flag in bit 0 (a private).
    pub const PRINCIPALS: u32 = 7;
}

/// Captures at most `max_frames` frames of the current stack into `out` (the youngest
/// SavedFrame, or null). False, with no exception left pending, if the capture failed.
///
/// # Safety
/// `cx` must be this thread's context, at a point where it may GC.
pub unsafe fn capture_current_stack(
    cx: *mut JSContext,
    max_frames: u32,
    out: mozjs::rust::MutableHandleObject,
) -> bool {
    let mut capture = std::mem::MaybeUninit::<jsapi::JS::StackCapture>::uninit();
    // SAFETY: `capture` is writable storage for one StackCapture, which this initialises.
    unsafe { jsapi::JS_StackCapture_MaxFrames(max_frames, capture.as_mut_ptr()) };
    rooted!(in(cx) let no_start = ptr::null_mut::<JSObject>());
    // SAFETY: per the contract, `cx` is this thread's context where it may GC; the capture
    // options were initialised above; `out` and `no_start` are rooted locations.
    let captured = unsafe {
        jsapi::JS::CaptureCurrentStack(
            cx,
            out.into(),
            capture.as_mut_ptr(),
            no_start.handle().into(),
        )
    };
    if !captured {
        // SAFETY: `cx` is this thread's live context.
        unsafe { jsapi::JS_ClearPendingException(cx) };
        return false;
    }
    true
}

/// Reserved slot `index` (one of [`slot`]) of a SavedFrame.
///
/// # Safety
/// `obj` must be a live SavedFrame (class-checked by the caller: [`is_saved_frame`]).
pub unsafe fn saved_frame_slot(obj: *mut JSObject, index: u32) -> Value {
    let mut v = UndefinedValue();
    // SAFETY: per the contract; `index` is below the class's slot count (the `slot`
    // constants).
    unsafe { mozjs::glue::JS_GetReservedSlot(obj, index, &mut v) };
    v
}

/// Whether `obj` is a SavedFrame (by class name).
///
/// # Safety
/// `obj` must be null or a live object.
pub unsafe fn is_saved_frame(obj: *mut JSObject) -> bool {
    if obj.is_null() {
        return false;
    }
    // SAFETY: per the contract, `obj` is a live (non-null) object.
    let class = unsafe { mozjs::rust::get_object_class(obj) };
    if class.is_null() {
        return false;
    }
    // SAFETY: `class` is the live object's non-null, static JSClass.
    let name = unsafe { (*class).name };
    // SAFETY: a class's name is a static, NUL-terminated C string.
    let name = unsafe { CStr::from_ptr(name) };
    name == c"SavedFrame"
}

/// The principals of the realm a SavedFrame was captured in (null if it has none), and the
/// muted-errors flag of its script: the principals slot holds them with that flag in bit 0.
///
/// # Safety
/// `obj` must be a live SavedFrame. The principals live as long as the frame.
pub unsafe fn saved_frame_principals(obj: *mut JSObject) -> (*mut jsapi::JSPrincipals, bool) {
    // SAFETY: per the contract; the slot holds a private pointer (or undefined).
    let value = unsafe { saved_frame_slot(obj, slot::PRINCIPALS) };
    if value.is_undefined() {
        return (ptr::null_mut(), false);
    }
    let raw = value.to_private() as usize;
    ((raw & !1) as *mut jsapi::JSPrincipals, raw & 1 == 1)
}

/// Captures the current stack as raw frames, outermost first: per frame its script (by
/// SpiderMonkey source id, cached) and current line/column. Self-hosted frames are excluded.
///
/// # Safety
/// `cx` must be this thread's context, at a point where it may GC.
pub(crate) unsafe fn capture_stack(cx: *mut JSContext, reader: &mut FrameReader) -> Vec<RawFrame> {
    use jsapi::JS::{SavedFrameResult, SavedFrameSelfHosted::Exclude};
    let mut frames = Vec::new();
    // Every frame object is rooted while accessors run on it.
    {
        rooted!(in(cx) let mut stack = ptr::null_mut::<JSObject>());
        // SAFETY: per the contract, `cx` is this thread's context where it may GC; `stack`
        // is rooted.
        if !unsafe { capture_current_stack(cx, reader.max_frames, stack.handle_mut()) } {
            return frames;
        }
        if reader.read_slots {
            // SAFETY: `stack` is the rooted result of `CaptureCurrentStack` on this thread.
            if let Some(mut fast) = unsafe { frames_from_slots(stack.get(), reader) } {
                fast.reverse();
                return fast;
            }
        }
        reader.fallbacks += 1;
        // Fallback: the public accessors. With null principals (the system's) every frame
        // is visible to them; each (with `Exclude`) skips self-hosted frames itself.
        rooted!(in(cx) let mut frame = stack.get());
        rooted!(in(cx) let mut parent = ptr::null_mut::<JSObject>());
        while !frame.get().is_null() {
            let (mut source_id, mut line) = (0u32, 0u32);
            let mut column = jsapi::JS::TaggedColumnNumberOneOrigin { value_: 0 };
            let h = frame.handle();
            // SAFETY: `cx` is this thread's context; `h` is a rooted SavedFrame; `source_id`
            // is a local out-parameter.
            let source_ok = unsafe {
                jsapi::GetSavedFrameSourceId(cx, ptr::null_mut(), h.into(), &mut source_id, Exclude)
            } == SavedFrameResult::Ok;
            // SAFETY: `cx` is this thread's context; `h` is a rooted SavedFrame; `line` is a
            // local out-parameter.
            let line_ok = source_ok
                && unsafe {
                    jsapi::GetSavedFrameLine(cx, ptr::null_mut(), h.into(), &mut line, Exclude)
                } == SavedFrameResult::Ok;
            // SAFETY: `cx` is this thread's context; `h` is a rooted SavedFrame; `column` is a
            // local out-parameter.
            let column_ok = line_ok
                && unsafe {
                    jsapi::GetSavedFrameColumn(cx, ptr::null_mut(), h.into(), &mut column, Exclude)
                } == SavedFrameResult::Ok;
            if !column_ok {
                break;
            }
            frames.push(reader.raw_frame(SourceId(source_id), line, column.value_));
            // SAFETY: `cx` is this thread's context; `h` is a rooted SavedFrame and `parent`
            // a rooted location; null principals see every frame.
            let parent_result = unsafe {
                jsapi::GetSavedFrameParent(
                    cx,
                    ptr::null_mut(),
                    h.into(),
                    parent.handle_mut().into(),
                    Exclude,
                )
            };
            if parent_result != SavedFrameResult::Ok {
                break;
            }
            frame.set(parent.get());
        }
    }
    frames.reverse();
    frames
}

/// The fast path of [`capture_stack`], innermost frame first: reads each SavedFrame's reserved
/// slots directly instead of calling four accessors (each entering the frame's realm) per
/// frame, which halves the cost of a sample taken with cold caches. Self-hosted frames come out
/// hidden (their source, "self-hosted", is no registered script), as the accessors' `Exclude`
/// would skip them; the walk stops at an async parent, as `GetSavedFrameParent` does. `None`
/// if an object is not a SavedFrame or a slot does not hold what that layout says: the caller
/// then uses the accessors.
///
/// # Safety
/// `top` must be the (rooted) result of `CaptureCurrentStack` on this thread. Slot reads
/// cannot GC, and every frame is reachable from `top`.
unsafe fn frames_from_slots(top: *mut JSObject, reader: &mut FrameReader) -> Option<Vec<RawFrame>> {
    let mut out = Vec::with_capacity(32);
    let mut obj = top;
    let mut first = true;
    // As the function's contract: every `obj` below is a live frame reachable from `top`,
    // and the class check comes before any slot read.
    {
        // SAFETY: only called on `obj` after its class check in this loop (a live
        // SavedFrame), with `index` one of the `slot` constants of its layout.
        let read = |obj: *mut JSObject, index: u32| unsafe { saved_frame_slot(obj, index) };
        while !obj.is_null() {
            // SAFETY: `obj` is a live, non-null object reachable from `top`.
            let class = unsafe { mozjs::rust::get_object_class(obj) };
            if class != reader.saved_frame_class {
                // SAFETY: `obj` is a live, non-null object.
                if !unsafe { is_saved_frame(obj) } {
                    return None;
                }
                reader.saved_frame_class = class;
            }
            if !first && read(obj, slot::ASYNC_CAUSE).is_string() {
                break;
            }
            first = false;
            let (source_id, line, column) = (
                read(obj, slot::SOURCE_ID),
                read(obj, slot::LINE),
                read(obj, slot::COLUMN),
            );
            if !(source_id.is_int32() && line.is_int32() && column.is_int32()) {
                return None;
            }
            let mut frame = reader.raw_frame(
                SourceId(source_id.to_int32() as u32),
                line.to_int32() as u32,
                column.to_int32() as u32,
            );
            // SAFETY: `obj` is a live SavedFrame (class-checked above).
            let (principals, muted) = unsafe { saved_frame_principals(obj) };
            // SAFETY: the frame's principals (or null), alive as long as the frame; the
            // embedder's function reads only principals it made (its contract).
            if let Some(realm) = unsafe { reader.realm_of_principals(principals) } {
                frame.realm = realm;
            }
            // The engine's own muted-errors flag of the frame's script, besides the
            // registry's: either hides the frame.
            frame.hidden |= muted;
            out.push(frame);
            let parent = read(obj, slot::PARENT);
            obj = if parent.is_object() {
                parent.to_object()
            } else if parent.is_null_or_undefined() {
                ptr::null_mut()
            } else {
                return None;
            };
        }
    }
    Some(out)
}
