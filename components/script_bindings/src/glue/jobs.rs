//! The job queue: host-defined data for microtasks, and unhandled-rejection tracking.

use std::ffi::c_void;
use std::ptr;

use mozjs::gc::RootedTraceableBox;
use mozjs::jsapi::{self, Heap, JSContext, JSObject, PromiseRejectionHandlingState, Value};

use super::{guarded, REJECTIONS};

pub(super) static JOB_QUEUE_TRAPS: mozjs::glue::JobQueueTraps = mozjs::glue::JobQueueTraps {
    getHostDefinedData: Some(host_defined_data),
    getHostDefinedGlobal: Some(host_defined_global),
    runJobs: Some(run_jobs_trap),
    traceNonGCThingMicroTask: Some(trace_non_gc_microtask),
};

/// The incumbent global of a new job is the current global; jsprof keeps no other data.
pub(super) unsafe extern "C" fn host_defined_data(
    cx: *mut JSContext,
    incumbent: jsapi::JS::MutableHandle<*mut JSObject>,
    data: jsapi::JS::MutableHandle<*mut JSObject>,
) -> bool {
    guarded(false, || {
        // SAFETY: called by SpiderMonkey on this thread with valid out-handles.
        unsafe {
            incumbent.set(jsapi::CurrentGlobalOrNull(cx));
            data.set(ptr::null_mut());
        }
        true
    })
}

pub(super) unsafe extern "C" fn host_defined_global(
    cx: *mut JSContext,
    data: jsapi::JS::MutableHandle<*mut JSObject>,
) -> bool {
    guarded(false, || {
        // SAFETY: as `host_defined_data`.
        unsafe { data.set(jsapi::CurrentGlobalOrNull(cx)) };
        true
    })
}

/// The engine asks for a drain only in paths jsprof does not use; checkpoints drain the
/// queue themselves (they must report errors to the right page).
pub(super) unsafe extern "C" fn run_jobs_trap(_cx: *mut JSContext) {}

pub(super) unsafe extern "C" fn trace_non_gc_microtask(
    _trc: *mut jsapi::JSTracer,
    _value: *mut Value,
) {
}

/// The promise rejection tracker: remembers promises rejected without a handler.
pub(super) unsafe extern "C" fn track_rejection(
    _cx: *mut JSContext,
    _muted_errors: bool,
    promise: jsapi::JS::HandleObject,
    state: PromiseRejectionHandlingState,
    _data: *mut c_void,
) {
    guarded((), || {
        let p = promise.get();
        REJECTIONS.with(|r| {
            let mut r = r.borrow_mut();
            match state {
                PromiseRejectionHandlingState::Unhandled => {
                    r.push(RootedTraceableBox::from_box(Heap::boxed(p)));
                }
                PromiseRejectionHandlingState::Handled => r.retain(|x| x.get() != p),
            }
        });
    })
}
