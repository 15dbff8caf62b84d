//! The JSAPI side of the generated WebIDL bindings (`crate::generated`, `crate::runtime`).
//!
//! Generated code is safe Rust: it describes each interface with a static
//! [`InterfaceDef`] of plain `fn(&mut CallCtx) -> Fallible<()>` members and converts values
//! through [`Val`] and [`Out`]. This module dispatches every call through one native that
//! finds the member from the function's reserved slots, turns errors into exceptions, settles
//! promises, and owns the reflectors: objects of one class whose reserved slot holds the
//! boxed Rust DOM object, dropped by the class finalizer. `interfaces.rs` defines the
//! interface objects and prototypes from the tables; `convert.rs` converts values.
//!
//! Rooting: objects that must outlive a call (promises to settle later, reflectors with
//! pending work) are held in a thread-local table of `Heap`s, by [`ObjectRoot`]
//! (`roots.rs`).

use std::any::Any;
use std::ffi::c_void;
use std::marker::PhantomData;
use std::ptr;

use mozjs::jsapi::{self, CallArgs, HandleValueArray, JSContext, JSObject, Value};
use mozjs::jsval::{ObjectValue, PrivateValue, UndefinedValue};
use mozjs::rooted;

use crate::host::Global;
use crate::runtime::{
    CallCtx, DomObject, Error, Fallible, ObjectRoot, Out, Promise, RootRef, Settlement, Val,
};

use super::convert::{get_property, out_to_js};
use super::roots::rooted_object;
use super::strings::new_string;
use super::{current_window, generated_interfaces, host};

/// Reserved slot 0 of every binding function: which interface and member it is.
pub(super) const SLOT_MEMBER: usize = 0;
/// Reserved slot 1 of every binding function: the realm's `DOMException` constructor.
pub(super) const SLOT_DOM_EXCEPTION: usize = 1;
/// The member code of an interface object (its constructor).
pub(super) const MEMBER_CONSTRUCTOR: i32 = 0xffff;
/// Member codes of operations start here; attributes count from 0.
pub(super) const MEMBER_OPERATIONS: i32 = 0x8000;

static REFLECTOR_OPS: jsapi::JSClassOps = jsapi::JSClassOps {
    addProperty: None,
    delProperty: None,
    enumerate: None,
    newEnumerate: None,
    resolve: None,
    mayResolve: None,
    finalize: Some(finalize_reflector),
    call: None,
    construct: None,
    trace: None,
};

/// The class of every reflector: one reserved slot with the boxed DOM object.
static REFLECTOR_CLASS: jsapi::JSClass = jsapi::JSClass {
    name: c"DOMObject".as_ptr(),
    flags: (1 << jsapi::JSCLASS_RESERVED_SLOTS_SHIFT) | jsapi::JSCLASS_FOREGROUND_FINALIZE,
    cOps: &REFLECTOR_OPS,
    spec: ptr::null(),
    ext: ptr::null(),
    oOps: ptr::null(),
};

/// The boxed DOM object of a reflector.
type Native = Box<dyn Any>;

unsafe extern "C" fn finalize_reflector(_gcx: *mut jsapi::JS::GCContext, obj: *mut JSObject) {
    super::guarded((), || {
        // `obj` is a reflector being finalized on the main thread (FOREGROUND_FINALIZE).
        let mut slot = UndefinedValue();
        // SAFETY: `obj` is a live reflector, whose class has one reserved slot (0).
        unsafe { mozjs::glue::JS_GetReservedSlot(obj, 0, &mut slot) };
        if !slot.is_undefined() {
            let native = slot.to_private() as *mut Native;
            if !native.is_null() {
                // SAFETY: `obj` is a live reflector with reserved slot 0; clearing it leaves
                // no dangling pointer behind once the box is freed below.
                unsafe { jsapi::JS_SetReservedSlot(obj, 0, &UndefinedValue()) };
                // SAFETY: the slot held the pointer `return_reflector` made with
                // `Box::into_raw`, freed only here (the finalizer runs once).
                drop(unsafe { Box::from_raw(native) });
            }
        }
    })
}

impl CallCtx<'_> {
    /// Argument `i` (`undefined` when not passed).
    pub fn arg(&self, i: u32) -> Val<'_> {
        Val {
            cx: self.cx,
            v: self.args.get(i),
            _call: PhantomData,
        }
    }

    /// The current global (<https://html.spec.whatwg.org/#current-global-object>).
    pub fn global(&self) -> Global {
        Global {
            host: host(),
            window: current_window(self.cx),
        }
    }

    /// Runs `f` with the DOM object of `this`, or throws a `TypeError` if `this` is not a
    /// `T` (<https://webidl.spec.whatwg.org/#dfn-create-operation-function> step 2.1.2).
    pub fn with_this<T: DomObject, R>(&self, f: impl FnOnce(&T) -> R) -> Fallible<R> {
        let this = self.args.thisv();
        let illegal = || {
            Error::Type(format!(
                "'{}' called on an object that does not implement interface {}.",
                self.member, self.iface.name
            ))
        };
        if !this.is_object() {
            return Err(illegal());
        }
        // `this` is rooted by the call.
        {
            let obj = this.to_object();
            // SAFETY: `obj` is a live object, rooted by the call.
            let class = unsafe { mozjs::rust::get_object_class(obj) };
            if !ptr::eq(class, &REFLECTOR_CLASS) {
                return Err(illegal());
            }
            let mut slot = UndefinedValue();
            // SAFETY: `obj` is a live reflector (class-checked), whose class has one reserved
            // slot (0).
            unsafe { mozjs::glue::JS_GetReservedSlot(obj, 0, &mut slot) };
            if slot.is_undefined() {
                return Err(illegal());
            }
            // SAFETY: a reflector's slot holds a live `Native` (it is only freed by the
            // finalizer, which cannot run while `this` is rooted).
            let native = unsafe { &*(slot.to_private() as *const Native) };
            match native.downcast_ref::<T>() {
                Some(t) => Ok(f(t)),
                None => Err(illegal()),
            }
        }
    }

    /// Sets the return value.
    pub fn set_return(&mut self, value: Out) {
        let cx = self.cx;
        // SAFETY: rval is a rooted location of the call.
        unsafe {
            rooted!(in(cx) let mut v = UndefinedValue());
            if out_to_js(cx, &value, v.handle_mut()) {
                self.args.rval().set(v.get());
            }
        }
    }

    /// Wraps `object` in a new reflector and returns it from the constructor call
    /// (<https://webidl.spec.whatwg.org/#internally-create-a-new-object-implementing-the-interface>):
    /// its prototype is `new.target.prototype` when that is an object, else the interface's.
    pub fn return_reflector<T: DomObject>(&mut self, object: T) -> Fallible<()> {
        let cx = self.cx;
        // Every GC pointer is rooted before the next call that can GC; the boxed object's
        // pointer goes into the reflector's slot and is freed by its finalizer.
        {
            rooted!(in(cx) let mut proto = UndefinedValue());
            rooted!(in(cx) let target = self.args.new_target().get().to_object());
            // SAFETY: `cx` is the call's live context, in its realm; `target` is rooted and
            // `proto` a rooted location.
            unsafe {
                get_property(
                    cx,
                    target.handle().into(),
                    c"prototype".as_ptr(),
                    proto.handle_mut(),
                )
            }?;
            if !proto.get().is_object()
                // SAFETY: `cx` is the call's live context; the callee is rooted by the call
                // and `proto` is a rooted location.
                && !unsafe {
                    jsapi::JS_GetProperty(
                        cx,
                        self.callee,
                        c"prototype".as_ptr(),
                        proto.handle_mut().into(),
                    )
                }
            {
                return Err(Error::Thrown);
            }
            rooted!(in(cx) let proto_obj = if proto.get().is_object() { proto.get().to_object() } else { ptr::null_mut() });
            // SAFETY: `cx` is the call's live context, in its realm; `REFLECTOR_CLASS` is
            // static and `proto_obj` rooted; the object is rooted on the next line.
            let new_obj = unsafe {
                jsapi::JS_NewObjectWithGivenProto(cx, &REFLECTOR_CLASS, proto_obj.handle().into())
            };
            rooted!(in(cx) let obj = new_obj);
            if obj.get().is_null() {
                return Err(Error::Thrown);
            }
            let native: *mut Native = Box::into_raw(Box::new(Box::new(object) as Native));
            // SAFETY: `obj` is a rooted, fresh reflector with reserved slot 0; the slot takes
            // ownership of the box, which its finalizer frees.
            unsafe {
                jsapi::JS_SetReservedSlot(obj.get(), 0, &PrivateValue(native as *const c_void))
            };
            // SAFETY: `native` is the box just leaked, alive until `obj`'s finalizer, which
            // cannot run while `obj` is rooted here and then held by the object's reflector.
            let native = unsafe { &*native };
            #[allow(clippy::expect_used, reason = "the box was made from a T just above")]
            let object = native.downcast_ref::<T>().expect("just boxed");
            object.reflector().set(ObjectRoot::new(obj.get()));
            self.args.rval().set(ObjectValue(obj.get()));
        }
        Ok(())
    }

    /// Makes a new promise the call's return value and gives a root of it.
    pub fn return_new_promise<T>(&mut self) -> Fallible<Promise<T>> {
        let cx = self.cx;
        {
            rooted!(in(cx) let none = ptr::null_mut::<JSObject>());
            // SAFETY: `cx` is the call's live context, in its realm; `none` is rooted; the
            // promise is rooted on the next line, before anything can GC.
            let new_promise = unsafe { jsapi::JS::NewPromiseObject(cx, none.handle().into()) };
            rooted!(in(cx) let promise = new_promise);
            if promise.get().is_null() {
                return Err(Error::Thrown);
            }
            self.args.rval().set(ObjectValue(promise.get()));
            Ok(Promise {
                root: ObjectRoot::new(promise.get()),
                _t: PhantomData,
            })
        }
    }

    /// Rejects the promise `return_new_promise` returned with `error`
    /// (<https://webidl.spec.whatwg.org/#dfn-create-operation-function> step 2.2).
    pub fn reject_returned_promise(&mut self, error: Error) -> Fallible<()> {
        let cx = self.cx;
        // rval holds the promise (rooted by the call).
        {
            rooted!(in(cx) let promise = self.args.rval().get().to_object());
            rooted!(in(cx) let mut reason = UndefinedValue());
            // SAFETY: `cx` is the call's live context, in its realm; `dom_exception` is
            // rooted by the callee's reserved slot; `reason` is rooted.
            unsafe { exception_value(cx, self.dom_exception, &error, reason.handle_mut()) };
            // SAFETY: `cx` is the call's live context; `promise` and `reason` are rooted.
            if !unsafe {
                jsapi::JS::RejectPromise(cx, promise.handle().into(), reason.handle().into())
            } {
                return Err(Error::Thrown);
            }
        }
        Ok(())
    }
}

/// The native of every binding function: finds the interface and member from the callee's
/// reserved slot, runs the generated member function, and turns an `Err` into an exception.
pub(super) unsafe extern "C" fn binding_native(
    cx: *mut JSContext,
    argc: u32,
    vp: *mut Value,
) -> bool {
    super::guarded(false, || {
        // The callee is one of the functions `define_interface` made, whose reserved slots
        // hold an Int32 member code and the realm's DOMException.
        {
            // SAFETY: a JSNative called by SpiderMonkey: `vp` holds the callee, `this` and
            // `argc` arguments, live for the call.
            let args = unsafe { CallArgs::from_vp(vp, argc) };
            rooted!(in(cx) let callee = args.callee());
            // SAFETY: `callee` is a rooted function made by `binding_function`, with
            // extended (native-reserved) slots.
            let slot =
                unsafe { jsapi::GetFunctionNativeReserved(callee.get(), SLOT_DOM_EXCEPTION) };
            // SAFETY: `slot` points at the live callee's reserved Value, read at once.
            rooted!(in(cx) let dom_exception = unsafe { *slot });
            // SAFETY: as for the other slot: a rooted function made by `binding_function`.
            let slot = unsafe { jsapi::GetFunctionNativeReserved(callee.get(), SLOT_MEMBER) };
            // SAFETY: `slot` points at the live callee's reserved Value, read at once.
            let code = unsafe { *slot }.to_int32();
            // SAFETY: `cx` is the live context, in the call's realm; `dom_exception` is
            // rooted for the whole call.
            let throw = |e: &Error| unsafe { throw(cx, dom_exception.handle().into(), e) };
            let iface = generated_interfaces()[(code >> 16) as usize];
            let member = code & 0xffff;
            let (name, call, required) = if member == MEMBER_CONSTRUCTOR {
                let Some(ctor) = &iface.constructor else {
                    return throw(&Error::Type("Illegal constructor.".into()));
                };
                if !args.is_constructing() {
                    return throw(&Error::Type(format!(
                        "{} constructor: 'new' is required",
                        iface.name
                    )));
                }
                (iface.name, ctor.call, ctor.length)
            } else if member >= MEMBER_OPERATIONS {
                let op = &iface.operations[(member - MEMBER_OPERATIONS) as usize];
                (op.name, op.call, op.length)
            } else {
                let a = &iface.attributes[member as usize];
                (a.name, a.get, 0)
            };
            // <https://webidl.spec.whatwg.org/#dfn-overload-resolution-algorithm> (one
            // overload): fewer arguments than the operation requires is a TypeError.
            if argc < required {
                return throw(&Error::Type(format!(
                    "{}.{name}: {required} argument(s) required, but only {argc} present.",
                    iface.name
                )));
            }
            let mut ctx = CallCtx {
                cx,
                args: &args,
                callee: callee.handle().into(),
                dom_exception: dom_exception.handle().into(),
                iface,
                member: name,
            };
            args.rval().set(UndefinedValue());
            match call(&mut ctx) {
                Ok(()) => true,
                Err(e) => throw(&e),
            }
        }
    })
}

/// Throws `error` (an `Error::Thrown` is already pending) and returns false.
///
/// # Safety
/// `cx` live and in a realm; `dom_exception` rooted.
unsafe fn throw(cx: *mut JSContext, dom_exception: jsapi::HandleValue, error: &Error) -> bool {
    rooted!(in(cx) let mut value = UndefinedValue());
    if matches!(error, Error::Thrown) {
        return false;
    }
    // SAFETY: per the contract, `cx` is live and in a realm and `dom_exception` rooted;
    // `value` is rooted.
    unsafe { exception_value(cx, dom_exception, error, value.handle_mut()) };
    // SAFETY: per the contract, `cx` is live; `value` is rooted.
    unsafe {
        jsapi::JS_SetPendingException(
            cx,
            value.handle().into(),
            jsapi::JS::ExceptionStackBehavior::Capture,
        )
    };
    false
}

/// The JS value of `error`: a `TypeError`/`RangeError`, or a `DOMException` made with
/// `dom_exception`, the realm's original constructor. For `Error::Thrown`, the pending
/// exception, taken.
///
/// # Safety
/// `cx` live, in a realm; `dom_exception` rooted.
unsafe fn exception_value(
    cx: *mut JSContext,
    dom_exception: jsapi::HandleValue,
    error: &Error,
    mut out: mozjs::rust::MutableHandleValue,
) {
    // Values are rooted before anything can GC.
    {
        let message = |m: &str| super::strings::cstring(m);
        // SAFETY: per the contract, `cx` is the live context of this thread.
        let mut wrapper = unsafe { super::wrap_cx(cx) };
        match error {
            Error::Type(m) => mozjs::error::throw_type_error(&mut wrapper, &message(m)),
            Error::Range(m) => mozjs::error::throw_range_error(&mut wrapper, &message(m)),
            Error::Dom { name, message: m } => {
                rooted!(in(cx) let mut m_val = UndefinedValue());
                rooted!(in(cx) let mut n_val = UndefinedValue());
                // SAFETY: per the contract, `cx` is live and in a realm; `m_val` is rooted.
                unsafe { new_string(cx, m, m_val.handle_mut()) };
                // SAFETY: per the contract, `cx` is live and in a realm; `n_val` is rooted.
                unsafe { new_string(cx, name, n_val.handle_mut()) };
                rooted!(in(cx) let argv = mozjs::gc::ValueArray::<2>::new([m_val.get(), n_val.get()]));
                rooted!(in(cx) let mut obj = ptr::null_mut::<JSObject>());
                let args = HandleValueArray::from(&argv);
                // SAFETY: per the contract, `cx` is live and in a realm and `dom_exception`
                // rooted; the arguments (`argv`) and `obj` are rooted.
                if unsafe {
                    jsapi::JS::Construct1(cx, dom_exception, &args, obj.handle_mut().into())
                } {
                    out.set(ObjectValue(obj.get()));
                    return;
                }
            }
            Error::Thrown => {}
        }
        // SAFETY: per the contract, `cx` is live; `out` is a rooted location.
        if !unsafe { jsapi::JS_GetPendingException(cx, out.reborrow().into()) } {
            out.set(UndefinedValue());
        }
        // SAFETY: per the contract, `cx` is live.
        unsafe { jsapi::JS_ClearPendingException(cx) };
    }
}

/// The object of a live root, for the rest of the glue.
pub(super) fn object_of(r: RootRef) -> *mut JSObject {
    rooted_object(r)
}

/// Settles a promise (as a task of its realm: the caller has entered it); DOM errors are
/// made with `dom_exception`.
///
/// # Safety
/// `cx` live, in the promise's realm; `dom_exception` rooted.
pub(super) unsafe fn settle(cx: *mut JSContext, s: Settlement, dom_exception: jsapi::HandleValue) {
    let obj = rooted_object(s.promise.as_ref());
    if obj.is_null() {
        return;
    }
    // Per the contract, `cx` is live and in the promise's realm; the promise is rooted by
    // its ObjectRoot until the end (and by `promise` here).
    {
        rooted!(in(cx) let promise = obj);
        rooted!(in(cx) let mut value = UndefinedValue());
        let ok = match &s.result {
            Ok(out) => {
                // SAFETY: per the contract, `cx` is live and in a realm; `value` is rooted.
                if unsafe { out_to_js(cx, out, value.handle_mut()) } {
                    // SAFETY: per the contract, `cx` is live and in the promise's realm;
                    // `promise` and `value` are rooted.
                    unsafe {
                        jsapi::JS::ResolvePromise(
                            cx,
                            promise.handle().into(),
                            value.handle().into(),
                        )
                    }
                } else {
                    // SAFETY: per the contract, `cx` is live; `value` is rooted.
                    unsafe { exception_value_plain(cx, value.handle_mut()) };
                    // SAFETY: per the contract, `cx` is live and in the promise's realm;
                    // `promise` and `value` are rooted.
                    unsafe {
                        jsapi::JS::RejectPromise(cx, promise.handle().into(), value.handle().into())
                    }
                }
            }
            Err(e) => {
                // SAFETY: per the contract, `cx` is live and in a realm and `dom_exception`
                // rooted; `value` is rooted.
                unsafe { exception_value(cx, dom_exception, e, value.handle_mut()) };
                // SAFETY: per the contract, `cx` is live and in the promise's realm;
                // `promise` and `value` are rooted.
                unsafe {
                    jsapi::JS::RejectPromise(cx, promise.handle().into(), value.handle().into())
                }
            }
        };
        if !ok {
            // SAFETY: per the contract, `cx` is live.
            unsafe { jsapi::JS_ClearPendingException(cx) };
        }
    }
    drop(s);
}

/// Takes the pending exception into `out`.
///
/// # Safety
/// `cx` live.
unsafe fn exception_value_plain(cx: *mut JSContext, mut out: mozjs::rust::MutableHandleValue) {
    // SAFETY: per the contract, `cx` is live; `out` is a rooted location.
    if !unsafe { jsapi::JS_GetPendingException(cx, out.reborrow().into()) } {
        out.set(UndefinedValue());
    }
    // SAFETY: per the contract, `cx` is live.
    unsafe { jsapi::JS_ClearPendingException(cx) };
}
