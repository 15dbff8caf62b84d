//! Interface objects and prototypes from the generated `InterfaceDef` tables
//! (<https://webidl.spec.whatwg.org/#es-interfaces>): one binding function per member, each
//! dispatched by `binding_native` (`bindings.rs`).

use std::ptr;

use mozjs::jsapi::{self, JSContext, JSObject};
use mozjs::jsval::{Int32Value, UndefinedValue};
use mozjs::rooted;

use crate::runtime::GlobalKind;

use super::bindings::{
    binding_native, MEMBER_CONSTRUCTOR, MEMBER_OPERATIONS, SLOT_DOM_EXCEPTION, SLOT_MEMBER,
};
use super::strings::new_string;
use super::{generated_interfaces, host, InScript};

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
    let cname = super::strings::cstring(name);
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
    for (index, iface) in generated_interfaces().iter().enumerate() {
        // A hidden namespace is on a global only under its pref (for tests).
        let pref_on = iface.pref.map(|p| host().pref_enabled(p));
        let shown = if iface.hidden {
            pref_on == Some(true)
        } else {
            pref_on != Some(false)
        };
        if !shown || !iface.exposed.contains(&kind) {
            continue;
        }
        if iface.namespace {
            rooted!(in(cx) let mut object = ptr::null_mut::<JSObject>());
            // SAFETY: per the contract, `cx` is live and in `global`'s realm;
            // `dom_exception` and `object` are rooted.
            unsafe { namespace_object(cx, index, dom_exception, object.handle_mut()) }?;
            // The global property: writable, non-enumerable, configurable.
            let name = super::strings::cstring(iface.name);
            // SAFETY: per the contract, `cx` is live and in `global`'s realm; `global` and
            // `object` are rooted; `name` is a C string outliving the call.
            if !unsafe {
                jsapi::JS_DefineProperty3(cx, global, name.as_ptr(), object.handle().into(), NONE)
            } {
                return fail(iface.name);
            }
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
                let p = super::strings::cstring(parent);
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
                let name = super::strings::cstring(a.name);
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
            // SAFETY: per the contract, `cx` is live and in `global`'s realm; `proto` and
            // `dom_exception` are rooted.
            unsafe { define_operations(cx, proto.handle().into(), index, dom_exception) }?;
            // SAFETY: as above.
            unsafe { define_to_string_tag(cx, proto.handle().into(), iface.name) }?;
            // The global property: writable, non-enumerable, configurable.
            let name = super::strings::cstring(iface.name);
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

/// Defines the regular operations of interface `index` on `target` (a prototype or a
/// namespace object): writable, enumerable, configurable data properties.
///
/// # Safety
/// `cx` live and in `target`'s realm; `target` and `dom_exception` rooted.
unsafe fn define_operations(
    cx: *mut JSContext,
    target: jsapi::HandleObject,
    index: usize,
    dom_exception: jsapi::HandleValue,
) -> Result<(), String> {
    let iface = generated_interfaces()[index];
    for (i, op) in iface.operations.iter().enumerate() {
        // `[Pref]`: an operation whose pref is off is not defined at all.
        if op.pref.is_some_and(|p| !host().pref_enabled(p)) {
            continue;
        }
        let op_code = ((index as i32) << 16) | (MEMBER_OPERATIONS + i as i32);
        // SAFETY: per the contract, `cx` is live and in the realm; `dom_exception` is
        // rooted; the function is rooted on the next line, before anything can GC.
        let new_f = unsafe { binding_function(cx, op.name, op.length, 0, op_code, dom_exception) };
        rooted!(in(cx) let f = new_f);
        let name = super::strings::cstring(op.name);
        if f.get().is_null()
            // SAFETY: per the contract, `cx` is live and in the realm; `target` and `f` are
            // rooted; `name` is a C string outliving the call.
            || !unsafe {
                jsapi::JS_DefineProperty3(
                    cx,
                    target,
                    name.as_ptr(),
                    f.handle().into(),
                    jsapi::JSPROP_ENUMERATE as u32,
                )
            }
        {
            return Err(format!("cannot define {}.{}", iface.name, op.name));
        }
    }
    Ok(())
}

/// Defines `@@toStringTag` on `target`: `name`, non-writable, non-enumerable, configurable.
///
/// # Safety
/// `cx` live and in `target`'s realm; `target` rooted.
unsafe fn define_to_string_tag(
    cx: *mut JSContext,
    target: jsapi::HandleObject,
    name: &str,
) -> Result<(), String> {
    // SAFETY: `cx` is live; a symbol key needs nothing else, and is rooted on the next line.
    let tag_id =
        unsafe { jsapi::JS::GetWellKnownSymbolKey(cx, jsapi::JS::SymbolCode::toStringTag) };
    rooted!(in(cx) let tag_id = tag_id);
    rooted!(in(cx) let mut tag = UndefinedValue());
    // SAFETY: per the contract, `cx` is live and in the realm; `tag` is rooted.
    unsafe { new_string(cx, name, tag.handle_mut()) };
    // SAFETY: per the contract, `cx` is live and in the realm; `target`, `tag_id` and `tag`
    // are rooted.
    let defined = unsafe {
        jsapi::JS_DefinePropertyById2(
            cx,
            target,
            tag_id.handle().into(),
            tag.handle().into(),
            jsapi::JSPROP_READONLY as u32,
        )
    };
    if defined {
        Ok(())
    } else {
        Err(format!("cannot define {name}'s @@toStringTag"))
    }
}

/// Makes the namespace object of generated namespace `index` into `out`
/// (<https://webidl.spec.whatwg.org/#namespace-object>): an ordinary object whose
/// prototype is `Object.prototype`, with the namespace's operations and `@@toStringTag`.
///
/// # Safety
/// `cx` live and in the realm being set up; `dom_exception` and `out` rooted.
pub(super) unsafe fn namespace_object(
    cx: *mut JSContext,
    index: usize,
    dom_exception: jsapi::HandleValue,
    mut out: mozjs::rust::MutableHandleObject,
) -> Result<(), String> {
    // SAFETY: per the contract, `cx` is live, in a realm; the object is stored in the
    // rooted `out` at once, before anything can GC.
    let object = unsafe { jsapi::JS_NewPlainObject(cx) };
    if object.is_null() {
        return Err(format!(
            "cannot create {}",
            generated_interfaces()[index].name
        ));
    }
    out.set(object);
    // SAFETY: per the contract; `out` is rooted and now holds the object.
    unsafe { define_operations(cx, out.handle().into(), index, dom_exception) }?;
    // SAFETY: as above.
    unsafe { define_to_string_tag(cx, out.handle().into(), generated_interfaces()[index].name) }
}

/// The index in the generated tables of the namespace or interface called `name`.
pub(super) fn generated_index(name: &str) -> Option<usize> {
    generated_interfaces().iter().position(|i| i.name == name)
}
