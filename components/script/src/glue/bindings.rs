//! The JSAPI side of the generated WebIDL bindings (`crate::dom::bindings`).
//!
//! Generated code is safe Rust: it describes each interface with a static
//! [`InterfaceDef`] of plain `fn(&mut CallCtx) -> Fallible<()>` members and converts values
//! through [`Val`] and [`Out`]. This module turns those tables into interface objects,
//! prototypes, accessor properties and methods
//! (<https://webidl.spec.whatwg.org/#es-interfaces>), dispatches every call through one
//! native that finds the member from the function's reserved slots, and owns the reflectors:
//! objects of one class whose reserved slot holds the boxed Rust DOM object, dropped by the
//! class finalizer.
//!
//! Rooting: objects that must outlive a call (promises to settle later, reflectors with
//! pending work) are held in a thread-local table of `Heap`s, by [`ObjectRoot`]
//! (`roots.rs`).
//!
//! Past 600 lines for now: interface definition, the dispatching native and the value
//! conversions (`Val`, `Dict`, `Out`) share private helpers (throwing, exception values);
//! moving the conversions to a file of their own is the next cut (issue 12).

use std::any::Any;
use std::ffi::c_void;
use std::marker::PhantomData;
use std::ptr;

use mozjs::jsapi::{self, CallArgs, HandleValueArray, JSContext, JSObject, Value};
use mozjs::jsval::{
    BooleanValue, DoubleValue, Int32Value, ObjectValue, PrivateValue, UndefinedValue,
};
use mozjs::rooted;

use super::roots::rooted_object;
use super::{current_window, host, new_string, InScript};
use crate::dom::bindings::generated::INTERFACES;
use crate::dom::bindings::runtime::{
    CallCtx, Dict, DomObject, Error, Fallible, Global, GlobalKind, ObjectRoot, Out, Promise,
    RootRef, Settlement, Val,
};

/// Reserved slot 0 of every binding function: which interface and member it is.
const SLOT_MEMBER: usize = 0;
/// Reserved slot 1 of every binding function: the realm's `DOMException` constructor.
const SLOT_DOM_EXCEPTION: usize = 1;
/// The member code of an interface object (its constructor).
const MEMBER_CONSTRUCTOR: i32 = 0xffff;
/// Member codes of operations start here; attributes count from 0.
const MEMBER_OPERATIONS: i32 = 0x8000;

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

/// `obj[name]` into `out`; `Err(Thrown)` if a getter threw.
///
/// # Safety
/// `cx` live and in a realm; `obj` rooted.
unsafe fn get_property(
    cx: *mut JSContext,
    obj: jsapi::HandleObject,
    name: *const std::ffi::c_char,
    out: mozjs::rust::MutableHandleValue,
) -> Fallible<()> {
    // SAFETY: per the contract; `out` is a rooted location.
    if unsafe { jsapi::JS_GetProperty(cx, obj, name, out.into()) } {
        Ok(())
    } else {
        Err(Error::Thrown)
    }
}

/// `f.call(this)` into `out`; `Err(Thrown)` if it threw.
///
/// # Safety
/// `cx` live and in a realm; `this` and `f` rooted.
unsafe fn call0(
    cx: *mut JSContext,
    this: jsapi::HandleObject,
    f: jsapi::HandleValue,
    out: mozjs::rust::MutableHandleValue,
) -> Fallible<()> {
    let none = HandleValueArray::empty();
    // SAFETY: per the contract; `out` is a rooted location.
    if unsafe { jsapi::JS_CallFunctionValue(cx, this, f, &none, out.into()) } {
        Ok(())
    } else {
        Err(Error::Thrown)
    }
}

impl Dict<'_> {
    /// The dictionary member `name` converted with `f`, or `None` if it is `undefined`
    /// (<https://webidl.spec.whatwg.org/#js-dictionary> step 4).
    pub fn member<T>(
        &self,
        name: &str,
        f: impl FnOnce(Val<'_>) -> Fallible<T>,
    ) -> Fallible<Option<T>> {
        let Some(v) = self.v else {
            return Ok(None);
        };
        let cx = self.cx;
        let cname = super::cstring(name);
        // SAFETY: `v` is rooted for the call; the object and the member value are rooted
        // here before anything can GC.
        unsafe {
            rooted!(in(cx) let obj = v.to_object());
            rooted!(in(cx) let mut value = UndefinedValue());
            get_property(cx, obj.handle().into(), cname.as_ptr(), value.handle_mut())?;
            if value.get().is_undefined() {
                return Ok(None);
            }
            f(Val {
                cx,
                v: value.handle().into(),
                _call: PhantomData,
            })
            .map(Some)
        }
    }
}

impl<'a> Val<'a> {
    pub fn is_undefined(&self) -> bool {
        self.v.is_undefined()
    }

    /// <https://webidl.spec.whatwg.org/#js-dictionary> steps 1-2.
    pub fn dictionary(&self, name: &str) -> Fallible<Dict<'a>> {
        if self.v.is_null_or_undefined() {
            return Ok(Dict {
                cx: self.cx,
                v: None,
                _call: PhantomData,
            });
        }
        if !self.v.is_object() {
            return Err(Error::Type(format!("'{name}' must be an object")));
        }
        Ok(Dict {
            cx: self.cx,
            v: Some(self.v),
            _call: PhantomData,
        })
    }

    /// ToNumber (<https://tc39.es/ecma262/#sec-tonumber>); may run script.
    pub fn to_number(self) -> Fallible<f64> {
        // SAFETY: `cx` is the live context of the running call.
        let mut wrapper = unsafe { super::wrap_cx(self.cx) };
        // SAFETY: the value is rooted for the running call.
        let v = unsafe { mozjs::rust::Handle::from_raw(self.v) };
        // SAFETY: `wrapper` is the call's live context and `v` a rooted value.
        unsafe { mozjs::rust::ToNumber(&mut wrapper, v) }.map_err(|()| Error::Thrown)
    }

    /// ToBoolean (<https://tc39.es/ecma262/#sec-toboolean>).
    pub fn to_boolean(self) -> bool {
        // SAFETY: the value is rooted for the running call.
        let v = unsafe { mozjs::rust::Handle::from_raw(self.v) };
        // SAFETY: `v` is a valid handle to a rooted value; ToBoolean runs no script.
        unsafe { mozjs::rust::ToBoolean(v) }
    }

    /// ToString (<https://tc39.es/ecma262/#sec-tostring>); may run script.
    pub fn to_string(self) -> Fallible<String> {
        // SAFETY: `cx` is the context of the running call; the value is rooted.
        unsafe { super::to_rust_string(self.cx, self.v) }.ok_or(Error::Thrown)
    }

    /// <https://webidl.spec.whatwg.org/#js-sequence>: iterates the value with its
    /// `@@iterator` and converts each item with `f`.
    pub fn sequence<T>(&self, mut f: impl FnMut(Val<'_>) -> Fallible<T>) -> Fallible<Vec<T>> {
        if !self.v.is_object() {
            return Err(Error::Type("a sequence must be an iterable object".into()));
        }
        let cx = self.cx;
        let mut out = Vec::new();
        // Every value below is rooted before the next call that can GC.
        {
            rooted!(in(cx) let obj = self.v.to_object());
            // SAFETY: `cx` is the live context of the running call; a symbol key needs
            // nothing else, and is rooted on the next line.
            let id =
                unsafe { jsapi::JS::GetWellKnownSymbolKey(cx, jsapi::JS::SymbolCode::iterator) };
            rooted!(in(cx) let id = id);
            rooted!(in(cx) let mut method = UndefinedValue());
            // SAFETY: `cx` is the live context, in the call's realm; `obj`, `id` and `method`
            // are rooted.
            let got = unsafe {
                jsapi::JS_GetPropertyById(
                    cx,
                    obj.handle().into(),
                    id.handle().into(),
                    method.handle_mut().into(),
                )
            };
            if !got {
                return Err(Error::Thrown);
            }
            if !method.get().is_object()
                // SAFETY: the method is a rooted object (only evaluated if it is one).
                || !unsafe { jsapi::JS::IsCallable(method.get().to_object()) }
            {
                return Err(Error::Type("a sequence must be an iterable object".into()));
            }
            rooted!(in(cx) let mut iterator = UndefinedValue());
            // SAFETY: `cx` is the live context, in a realm; `obj`, `method` and `iterator`
            // are rooted.
            unsafe {
                call0(
                    cx,
                    obj.handle().into(),
                    method.handle().into(),
                    iterator.handle_mut(),
                )
            }?;
            if !iterator.get().is_object() {
                return Err(Error::Type("@@iterator did not return an object".into()));
            }
            rooted!(in(cx) let iter_obj = iterator.get().to_object());
            rooted!(in(cx) let mut next = UndefinedValue());
            // SAFETY: `cx` is the live context, in a realm; `iter_obj` is rooted; `next` is a
            // rooted location.
            unsafe {
                get_property(
                    cx,
                    iter_obj.handle().into(),
                    c"next".as_ptr(),
                    next.handle_mut(),
                )
            }?;
            loop {
                rooted!(in(cx) let mut result = UndefinedValue());
                // SAFETY: `cx` is the live context, in a realm; `iter_obj`, `next` and
                // `result` are rooted.
                unsafe {
                    call0(
                        cx,
                        iter_obj.handle().into(),
                        next.handle().into(),
                        result.handle_mut(),
                    )
                }?;
                if !result.get().is_object() {
                    return Err(Error::Type("an iterator result is not an object".into()));
                }
                rooted!(in(cx) let result_obj = result.get().to_object());
                rooted!(in(cx) let mut done = UndefinedValue());
                // SAFETY: `cx` is the live context, in a realm; `result_obj` is rooted;
                // `done` is a rooted location.
                unsafe {
                    get_property(
                        cx,
                        result_obj.handle().into(),
                        c"done".as_ptr(),
                        done.handle_mut(),
                    )
                }?;
                // SAFETY: `done` is rooted, so its raw handle is valid for this use.
                let done = unsafe { mozjs::rust::Handle::from_raw(done.handle().into()) };
                // SAFETY: `done` is a valid handle to a rooted value; ToBoolean runs no script.
                if unsafe { mozjs::rust::ToBoolean(done) } {
                    return Ok(out);
                }
                rooted!(in(cx) let mut value = UndefinedValue());
                // SAFETY: `cx` is the live context, in a realm; `result_obj` is rooted;
                // `value` is a rooted location.
                unsafe {
                    get_property(
                        cx,
                        result_obj.handle().into(),
                        c"value".as_ptr(),
                        value.handle_mut(),
                    )
                }?;
                out.push(f(Val {
                    cx,
                    v: value.handle().into(),
                    _call: PhantomData,
                })?);
            }
        }
    }
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
unsafe extern "C" fn binding_native(cx: *mut JSContext, argc: u32, vp: *mut Value) -> bool {
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
            let iface = INTERFACES[(code >> 16) as usize];
            let member = code & 0xffff;
            let (name, call) = if member == MEMBER_CONSTRUCTOR {
                let Some(ctor) = &iface.constructor else {
                    return throw(&Error::Type("Illegal constructor.".into()));
                };
                if !args.is_constructing() {
                    return throw(&Error::Type(format!(
                        "{} constructor: 'new' is required",
                        iface.name
                    )));
                }
                (iface.name, ctor.call)
            } else if member >= MEMBER_OPERATIONS {
                let op = &iface.operations[(member - MEMBER_OPERATIONS) as usize];
                (op.name, op.call)
            } else {
                let a = &iface.attributes[member as usize];
                (a.name, a.get)
            };
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
        let message = |m: &str| super::cstring(m);
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

/// Converts `value` into `out`; false (with an exception pending) on failure.
///
/// # Safety
/// `cx` live and in a realm.
unsafe fn out_to_js(
    cx: *mut JSContext,
    value: &Out,
    mut out: mozjs::rust::MutableHandleValue,
) -> bool {
    // Per the contract, `cx` is live and in a realm; every value is rooted before the next
    // call that can GC.
    match value {
        Out::Undefined => out.set(UndefinedValue()),
        Out::Bool(b) => out.set(BooleanValue(*b)),
        Out::Number(n) => out.set(DoubleValue(*n)),
        // SAFETY: per the contract, `cx` is live and in a realm; `out` is rooted.
        Out::String(s) => unsafe { new_string(cx, s, out) },
        Out::Json(json) => {
            rooted!(in(cx) let mut text = UndefinedValue());
            // SAFETY: per the contract, `cx` is live and in a realm; `text` is rooted.
            unsafe { new_string(cx, json, text.handle_mut()) };
            if !text.get().is_string() {
                return false;
            }
            rooted!(in(cx) let s = text.get().to_string());
            // SAFETY: per the contract, `cx` is live and in a realm; `s` and `out` are rooted.
            return unsafe { jsapi::JS_ParseJSON1(cx, s.handle().into(), out.into()) };
        }
        Out::Object(members) => {
            // SAFETY: per the contract, `cx` is live and in a realm; the object is rooted on
            // the next line, before anything can GC.
            let new_obj = unsafe { jsapi::JS_NewPlainObject(cx) };
            rooted!(in(cx) let obj = new_obj);
            if obj.get().is_null() {
                return false;
            }
            for (name, v) in members {
                rooted!(in(cx) let mut member = UndefinedValue());
                // SAFETY: as this function's contract; `member` is rooted.
                if !unsafe { out_to_js(cx, v, member.handle_mut()) } {
                    return false;
                }
                let name = super::cstring(name);
                // SAFETY: per the contract, `cx` is live and in a realm; `obj` and `member`
                // are rooted; `name` is a C string outliving the call.
                let defined = unsafe {
                    jsapi::JS_DefineProperty(
                        cx,
                        obj.handle().into(),
                        name.as_ptr(),
                        member.handle().into(),
                        jsapi::JSPROP_ENUMERATE as u32,
                    )
                };
                if !defined {
                    return false;
                }
            }
            out.set(ObjectValue(obj.get()));
        }
        Out::Array(items) => {
            // SAFETY: per the contract, `cx` is live and in a realm; the array is rooted on
            // the next line, before anything can GC.
            let new_arr = unsafe { jsapi::JS::NewArrayObject1(cx, items.len()) };
            rooted!(in(cx) let arr = new_arr);
            if arr.get().is_null() {
                return false;
            }
            for (i, v) in items.iter().enumerate() {
                rooted!(in(cx) let mut item = UndefinedValue());
                // SAFETY: as this function's contract; `item` is rooted.
                if !unsafe { out_to_js(cx, v, item.handle_mut()) } {
                    return false;
                }
                // SAFETY: per the contract, `cx` is live and in a realm; `arr` and `item` are
                // rooted.
                let defined = unsafe {
                    jsapi::JS_DefineElement(
                        cx,
                        arr.handle().into(),
                        i as u32,
                        item.handle().into(),
                        jsapi::JSPROP_ENUMERATE as u32,
                    )
                };
                if !defined {
                    return false;
                }
            }
            out.set(ObjectValue(arr.get()));
        }
    }
    true
}

/// Makes a binding function for member `code` of interface `index`.
///
/// # Safety
/// `cx` live, in the realm being set up; `dom_exception` rooted.
unsafe fn binding_function(
    cx: *mut JSContext,
    name: &str,
    length: u32,
    flags: u32,
    code: i32,
    dom_exception: jsapi::HandleValue,
) -> *mut JSObject {
    let cname = super::cstring(name);
    // SAFETY: per the contract, `cx` is live, in the realm being set up; `binding_native`
    // is a JSNative and `cname` a C string outliving the call.
    let f = unsafe {
        jsapi::NewFunctionWithReserved(cx, Some(binding_native), length, flags, cname.as_ptr())
    };
    if f.is_null() {
        return ptr::null_mut();
    }
    // SAFETY: `f` is the live, non-null function just made (nothing GCs before the caller
    // roots the object).
    let obj = unsafe { jsapi::JS_GetFunctionObject(f) };
    // SAFETY: `obj` was made with reserved (extended) slots, of which SLOT_MEMBER is one.
    unsafe { jsapi::SetFunctionNativeReserved(obj, SLOT_MEMBER, &Int32Value(code)) };
    // SAFETY: per the contract, `dom_exception` is a rooted handle, so its pointer is valid.
    let dom_exception = unsafe { &*dom_exception.ptr };
    // SAFETY: `obj` was made with reserved (extended) slots, of which SLOT_DOM_EXCEPTION is one.
    unsafe { jsapi::SetFunctionNativeReserved(obj, SLOT_DOM_EXCEPTION, dom_exception) };
    obj
}

/// Defines every generated interface exposed on `kind` on `global`
/// (<https://webidl.spec.whatwg.org/#es-interfaces>): the interface object (a constructor
/// with `name` and `length`, inheriting its parent's interface object), its `prototype`
/// (inheriting the parent's prototype) with `constructor`, accessors, operations and
/// `Symbol.toStringTag`. Parents come from the global (the prelude defines those).
///
/// # Safety
/// `cx` live and in `global`'s realm, after the prelude ran.
pub(super) unsafe fn define_interfaces(
    cx: *mut JSContext,
    global: jsapi::HandleObject,
    dom_exception: jsapi::HandleValue,
    kind: GlobalKind,
) -> Result<(), String> {
    let fail = |what: &str| Err(format!("cannot define {what}"));
    const NONE: u32 = 0;
    let enumerable = jsapi::JSPROP_ENUMERATE as u32;
    let readonly_permanent = (jsapi::JSPROP_READONLY | jsapi::JSPROP_PERMANENT) as u32;
    let _in_script = InScript::enter();
    for (index, iface) in INTERFACES.iter().enumerate() {
        if !iface.exposed.contains(&kind) || iface.pref.is_some_and(|p| !host().pref_enabled(p)) {
            continue;
        }
        let code = |member: i32| ((index as i32) << 16) | member;
        // Per the contract, `cx` is live and in `global`'s realm; every object is rooted
        // before the next call that can GC.
        {
            // The parent's interface object and prototype.
            rooted!(in(cx) let mut parent_ctor = UndefinedValue());
            rooted!(in(cx) let mut parent_proto = UndefinedValue());
            if let Some(parent) = iface.parent {
                let p = super::cstring(parent);
                // SAFETY: per the contract, `cx` is live and in `global`'s realm; `global` and `parent_ctor` are rooted; `p` is a C string
                // outliving the call.
                let got = unsafe {
                    jsapi::JS_GetProperty(cx, global, p.as_ptr(), parent_ctor.handle_mut().into())
                };
                if !got || !parent_ctor.get().is_object() {
                    return Err(format!(
                        "{}: parent interface {parent} is not on the global",
                        iface.name
                    ));
                }
                rooted!(in(cx) let pc = parent_ctor.get().to_object());
                // SAFETY: per the contract, `cx` is live and in `global`'s realm; `pc` and `parent_proto` are rooted.
                let got = unsafe {
                    jsapi::JS_GetProperty(
                        cx,
                        pc.handle().into(),
                        c"prototype".as_ptr(),
                        parent_proto.handle_mut().into(),
                    )
                };
                if !got || !parent_proto.get().is_object() {
                    return Err(format!(
                        "{}: {parent}.prototype is not an object",
                        iface.name
                    ));
                }
            }
            rooted!(in(cx) let proto_parent = if parent_proto.get().is_object() { parent_proto.get().to_object() } else { ptr::null_mut() });
            let new_proto = if proto_parent.get().is_null() {
                // SAFETY: per the contract, `cx` is live and in `global`'s realm; the object is rooted below, before anything can GC.
                unsafe { jsapi::JS_NewPlainObject(cx) }
            } else {
                // SAFETY: per the contract, `cx` is live and in `global`'s realm; `proto_parent` is rooted (a null class is a plain
                // object's); the object is rooted below, before anything can GC.
                unsafe {
                    jsapi::JS_NewObjectWithGivenProto(cx, ptr::null(), proto_parent.handle().into())
                }
            };
            rooted!(in(cx) let proto = new_proto);
            if proto.get().is_null() {
                return fail(iface.name);
            }
            let length = iface.constructor.as_ref().map_or(0, |c| c.length);
            // SAFETY: per the contract, `cx` is live and in `global`'s realm; `dom_exception` is rooted; the function is rooted on
            // the next line, before anything can GC.
            let new_ctor = unsafe {
                binding_function(
                    cx,
                    iface.name,
                    length,
                    jsapi::JSFUN_CONSTRUCTOR,
                    code(MEMBER_CONSTRUCTOR),
                    dom_exception,
                )
            };
            rooted!(in(cx) let ctor = new_ctor);
            if ctor.get().is_null() {
                return fail(iface.name);
            }
            if parent_ctor.get().is_object() {
                rooted!(in(cx) let pc = parent_ctor.get().to_object());
                // SAFETY: per the contract, `cx` is live and in `global`'s realm; `ctor` and `pc` are rooted.
                if !unsafe { jsapi::JS_SetPrototype(cx, ctor.handle().into(), pc.handle().into()) }
                {
                    return fail(iface.name);
                }
            }
            // interface object: `prototype` (non-writable, non-enumerable, non-configurable).
            // SAFETY: per the contract, `cx` is live and in `global`'s realm; `ctor` and `proto` are rooted.
            let defined = unsafe {
                jsapi::JS_DefineProperty3(
                    cx,
                    ctor.handle().into(),
                    c"prototype".as_ptr(),
                    proto.handle().into(),
                    readonly_permanent,
                )
            };
            if !defined {
                return fail("prototype");
            }
            // prototype: `constructor` (writable, non-enumerable, configurable).
            // SAFETY: per the contract, `cx` is live and in `global`'s realm; `proto` and `ctor` are rooted.
            let defined = unsafe {
                jsapi::JS_DefineProperty3(
                    cx,
                    proto.handle().into(),
                    c"constructor".as_ptr(),
                    ctor.handle().into(),
                    NONE,
                )
            };
            if !defined {
                return fail("constructor");
            }
            // Regular attributes: accessor properties, enumerable and configurable.
            for (i, a) in iface.attributes.iter().enumerate() {
                let getter_name = format!("get {}", a.name);
                // SAFETY: per the contract, `cx` is live and in `global`'s realm; `dom_exception` is rooted; the getter is rooted on
                // the next line, before anything can GC.
                let new_getter = unsafe {
                    binding_function(cx, &getter_name, 0, 0, code(i as i32), dom_exception)
                };
                rooted!(in(cx) let getter = new_getter);
                rooted!(in(cx) let setter = ptr::null_mut::<JSObject>());
                let name = super::cstring(a.name);
                if getter.get().is_null()
                    // SAFETY: per the contract, `cx` is live and in `global`'s realm; `proto`, `getter` and `setter` are rooted; `name`
                    // is a C string outliving the call.
                    || !unsafe {
                        jsapi::JS_DefineProperty2(
                            cx,
                            proto.handle().into(),
                            name.as_ptr(),
                            getter.handle().into(),
                            setter.handle().into(),
                            enumerable,
                        )
                    }
                {
                    return fail(a.name);
                }
            }
            // Regular operations: writable, enumerable, configurable data properties.
            for (i, op) in iface.operations.iter().enumerate() {
                let op_code = code(MEMBER_OPERATIONS + i as i32);
                // SAFETY: per the contract, `cx` is live and in `global`'s realm; `dom_exception` is rooted; the function is rooted
                // on the next line, before anything can GC.
                let new_f =
                    unsafe { binding_function(cx, op.name, op.length, 0, op_code, dom_exception) };
                rooted!(in(cx) let f = new_f);
                let name = super::cstring(op.name);
                if f.get().is_null()
                    // SAFETY: per the contract, `cx` is live and in `global`'s realm; `proto` and `f` are rooted; `name` is a C string
                    // outliving the call.
                    || !unsafe {
                        jsapi::JS_DefineProperty3(
                            cx,
                            proto.handle().into(),
                            name.as_ptr(),
                            f.handle().into(),
                            enumerable,
                        )
                    }
                {
                    return fail(op.name);
                }
            }
            // @@toStringTag: the interface name, non-writable, non-enumerable, configurable.
            // SAFETY: `cx` is live; a symbol key needs nothing else, and is rooted on the
            // next line.
            let tag_id =
                unsafe { jsapi::JS::GetWellKnownSymbolKey(cx, jsapi::JS::SymbolCode::toStringTag) };
            rooted!(in(cx) let tag_id = tag_id);
            rooted!(in(cx) let mut tag = UndefinedValue());
            // SAFETY: per the contract, `cx` is live and in `global`'s realm; `tag` is rooted.
            unsafe { new_string(cx, iface.name, tag.handle_mut()) };
            // SAFETY: per the contract, `cx` is live and in `global`'s realm; `proto`, `tag_id` and `tag` are rooted.
            let defined = unsafe {
                jsapi::JS_DefinePropertyById2(
                    cx,
                    proto.handle().into(),
                    tag_id.handle().into(),
                    tag.handle().into(),
                    jsapi::JSPROP_READONLY as u32,
                )
            };
            if !defined {
                return fail("@@toStringTag");
            }
            // The global property: writable, non-enumerable, configurable.
            let name = super::cstring(iface.name);
            // SAFETY: per the contract, `cx` is live and in `global`'s realm; `global` and `ctor` are rooted; `name` is a C string
            // outliving the call.
            if !unsafe {
                jsapi::JS_DefineProperty3(cx, global, name.as_ptr(), ctor.handle().into(), NONE)
            } {
                return fail(iface.name);
            }
        }
    }
    Ok(())
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
