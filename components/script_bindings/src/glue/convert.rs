//! Values across the bindings' boundary: JS values read as WebIDL types ([`Val`], [`Dict`]:
//! ToNumber, ToString, dictionary members, iteration for sequences) and Rust results made
//! JS values ([`Out`], `out_to_js`; serde-mapped dictionaries through `JSON.parse`).

use std::marker::PhantomData;

use mozjs::jsapi::{self, HandleValueArray, JSContext};
use mozjs::jsval::{BooleanValue, DoubleValue, ObjectValue, UndefinedValue};
use mozjs::rooted;

use crate::runtime::{Dict, Error, Fallible, Out, Val};

use super::strings::{new_latin1_string, new_string};

/// `obj[name]` into `out`; `Err(Thrown)` if a getter threw.
///
/// # Safety
/// `cx` live and in a realm; `obj` rooted.
pub(super) unsafe fn get_property(
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
pub(super) unsafe fn call0(
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
    /// Whether boolean pref `name` is true: a `[Pref]` member is read only then.
    pub fn pref_enabled(&self, name: &str) -> bool {
        super::host().pref_enabled(name)
    }

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
        let cname = super::strings::cstring(name);
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

    pub fn is_null_or_undefined(&self) -> bool {
        self.v.is_null_or_undefined()
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
        unsafe { super::strings::to_rust_string(self.cx, self.v) }.ok_or(Error::Thrown)
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

/// Converts `value` into `out`; false (with an exception pending) on failure.
///
/// # Safety
/// `cx` live and in a realm.
pub(super) unsafe fn out_to_js(
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
        // SAFETY: per the contract, `cx` is live and in a realm; `out` is rooted.
        Out::Latin1(bytes) => unsafe { new_latin1_string(cx, bytes, out) },
        Out::ArrayBuffer(bytes) => {
            // SAFETY: per the contract, `cx` is live and in a realm; the buffer is rooted on
            // the next line, before anything can GC.
            let new_buffer = unsafe { jsapi::JS::NewArrayBuffer(cx, bytes.len()) };
            rooted!(in(cx) let buffer = new_buffer);
            if buffer.get().is_null() {
                return false;
            }
            let (mut len, mut shared, mut data) = (0usize, false, std::ptr::null_mut::<u8>());
            // SAFETY: `buffer` is a rooted ArrayBuffer just made; the out-pointers are live
            // locals.
            unsafe {
                jsapi::JS::GetArrayBufferLengthAndData(
                    buffer.get(),
                    &mut len,
                    &mut shared,
                    &mut data,
                )
            };
            if len != bytes.len() || (len > 0 && data.is_null()) {
                return false;
            }
            if len > 0 {
                // SAFETY: `data` points at the buffer's `len` bytes, which nothing else
                // references yet, and nothing can GC (and move them) before the copy ends.
                unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), data, len) };
            }
            out.set(ObjectValue(buffer.get()));
        }
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
                let name = super::strings::cstring(name);
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
