//! The safe runtime generated bindings are written against: WebIDL exceptions
//! ([`Error`]), conversions between JS values and Rust ([`convert`], [`FromJs`], [`ToJs`],
//! [`Out`]), the interface tables ([`InterfaceDef`]) and what DOM objects implement
//! ([`DomObject`]), and the types a binding call is made of ([`CallCtx`], [`Val`],
//! [`ObjectRoot`], [`Promise`]). Their JSAPI side is `glue::bindings` and `glue::roots`.

use std::any::Any;
use std::cell::RefCell;
use std::ffi::CStr;
use std::sync::{Arc, OnceLock};

use std::marker::PhantomData;
use std::thread::ThreadId;

use mozjs::jsapi::{self, CallArgs, JSContext};

// The vocabulary of the bindings: declared here, implemented in `glue` (its `bindings.rs`
// and `roots.rs`), which depends on this module and never the other way round. Fields are
// the glue's to read; nothing outside it constructs these.

/// A JS value during a binding call (an argument, or a member read from one).
#[derive(Clone, Copy)]
pub struct Val<'a> {
    pub(crate) cx: *mut JSContext,
    pub(crate) v: jsapi::HandleValue,
    pub(crate) _call: PhantomData<&'a ()>,
}

/// A dictionary being converted: its (rooted) object value, or none for `undefined`/`null`.
pub struct Dict<'a> {
    pub(crate) cx: *mut JSContext,
    pub(crate) v: Option<jsapi::HandleValue>,
    pub(crate) _call: PhantomData<&'a ()>,
}

/// One call of a binding member: its arguments, `this`, return value and definition.
pub struct CallCtx<'a> {
    pub(crate) cx: *mut JSContext,
    pub(crate) args: &'a CallArgs,
    /// The binding function (rooted: the call's own slot for it becomes the return value).
    pub(crate) callee: jsapi::HandleObject,
    /// The realm's original `DOMException` (rooted), for DOM errors.
    pub(crate) dom_exception: jsapi::HandleValue,
    pub(crate) iface: &'static InterfaceDef,
    /// The member's name, for error messages.
    pub(crate) member: &'static str,
}

// Debug without the JSAPI handles (which have none): what a log line can use.
impl std::fmt::Debug for Val<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Val").finish_non_exhaustive()
    }
}

impl std::fmt::Debug for Dict<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dict")
            .field("present", &self.v.is_some())
            .finish_non_exhaustive()
    }
}

impl std::fmt::Debug for CallCtx<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallCtx")
            .field("interface", &self.iface.name)
            .field("member", &self.member)
            .finish_non_exhaustive()
    }
}

/// A strong root of a JS object (a promise to settle, a reflector with pending work), held
/// until dropped on the thread that made it. It can be moved to other threads and back
/// (tasks carry it); dropped elsewhere, it stays rooted until the runtime ends.
#[derive(Debug)]
pub struct ObjectRoot {
    pub(crate) id: u64,
    pub(crate) thread: ThreadId,
}

/// A non-owning reference to an [`ObjectRoot`]'s object: finds it while the root lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RootRef(pub(crate) u64);

/// A promise the bindings returned, to be settled later with a `T`.
#[derive(Debug)]
pub struct Promise<T> {
    pub(crate) root: ObjectRoot,
    pub(crate) _t: PhantomData<fn(T)>,
}

/// A promise with its outcome, ready for the event loop to settle (it can cross threads).
#[derive(Debug)]
pub struct Settlement {
    pub(crate) promise: ObjectRoot,
    pub(crate) result: Result<Out, Error>,
}

/// <https://webidl.spec.whatwg.org/#idl-exceptions>: what a binding throws.
#[derive(Debug, Clone, PartialEq)]
pub enum Error {
    /// A `TypeError` with this message.
    Type(String),
    /// A `RangeError` with this message.
    Range(String),
    /// A `DOMException` with this name (`NotAllowedError`, `InvalidStateError`, …).
    Dom { name: &'static str, message: String },
    /// A JS exception is already pending (thrown by script a conversion ran).
    Thrown,
}

impl Error {
    pub fn missing_member(dictionary: &str, member: &str) -> Error {
        Error::Type(format!(
            "Missing required '{member}' member of {dictionary}."
        ))
    }

    pub fn not_allowed(message: impl Into<String>) -> Error {
        Error::Dom {
            name: "NotAllowedError",
            message: message.into(),
        }
    }

    pub fn invalid_state(message: impl Into<String>) -> Error {
        Error::Dom {
            name: "InvalidStateError",
            message: message.into(),
        }
    }
}

/// `Fallible<T>`: a binding's result.
pub type Fallible<T> = Result<T, Error>;

/// The kinds of global an interface can be exposed on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GlobalKind {
    Window,
    DedicatedWorker,
}

/// A generated member function.
pub type BindingFn = fn(&mut CallCtx<'_>) -> Fallible<()>;

/// An interface as the glue defines it.
#[derive(Debug)]
pub struct InterfaceDef {
    pub name: &'static str,
    /// The inherited interface, found on the global when the realm is set up.
    pub parent: Option<&'static str>,
    pub exposed: &'static [GlobalKind],
    /// A boolean pref that must be true for the interface to be exposed (for a `hidden`
    /// one, the pref that exposes it).
    pub pref: Option<&'static str>,
    /// A namespace (<https://webidl.spec.whatwg.org/#idl-namespaces>): a plain object of
    /// operations called without a `this`; no constructor, prototype or attributes.
    pub namespace: bool,
    /// Made for the engine's own use (the prelude's `host`); on a global only while `pref`
    /// is true (for tests).
    pub hidden: bool,
    /// `None`: the interface object throws "Illegal constructor".
    pub constructor: Option<ConstructorDef>,
    pub attributes: &'static [AttributeDef],
    pub operations: &'static [OperationDef],
}

#[derive(Debug)]
pub struct ConstructorDef {
    /// The interface object's `length`: the constructor's required arguments.
    pub length: u32,
    pub call: BindingFn,
}

/// A read-only regular attribute: an accessor on the prototype with a `get NAME` getter.
#[derive(Debug)]
pub struct AttributeDef {
    pub name: &'static str,
    pub get: BindingFn,
}

/// A regular operation: a method on the prototype.
#[derive(Debug)]
pub struct OperationDef {
    pub name: &'static str,
    pub length: u32,
    pub call: BindingFn,
    /// `[Pref="name"]`: defined only while this boolean pref is true.
    pub pref: Option<&'static str>,
}

/// A value on its way to JS. `Send`, so it can be made off the main thread (a trace is
/// serialised to JSON where it is built).
#[derive(Debug, Clone, PartialEq)]
pub enum Out {
    Undefined,
    Bool(bool),
    Number(f64),
    String(String),
    /// A `ByteString`: a JS string of one code unit per byte (U+0000-U+00FF).
    Latin1(Vec<u8>),
    /// A new `ArrayBuffer` holding these bytes.
    ArrayBuffer(Vec<u8>),
    /// JSON text, parsed into a JS value with `JSON.parse` semantics.
    Json(String),
    /// A plain object with these enumerable data properties, in order.
    Object(Vec<(&'static str, Out)>),
    Array(Vec<Out>),
}

impl Out {
    /// `value` as JSON (for dictionaries mapped to `serde` types).
    pub fn json<T: serde::Serialize + ?Sized>(value: &T) -> Out {
        #[allow(
            clippy::expect_used,
            reason = "the dictionaries are structs of strings, numbers and sequences: always serialisable"
        )]
        Out::Json(serde_json::to_string(value).expect("dictionaries serialise"))
    }
}

/// Rust -> JS (<https://webidl.spec.whatwg.org/#es-type-mapping>).
pub trait ToJs {
    fn to_js(&self) -> Out;
}

impl ToJs for () {
    fn to_js(&self) -> Out {
        Out::Undefined
    }
}

impl ToJs for bool {
    fn to_js(&self) -> Out {
        Out::Bool(*self)
    }
}

macro_rules! number_to_js {
    ($($t:ty),*) => {$(
        impl ToJs for $t {
            fn to_js(&self) -> Out {
                Out::Number(*self as f64)
            }
        }
    )*};
}
number_to_js!(i32, u32, i64, u64, f64);

impl ToJs for String {
    fn to_js(&self) -> Out {
        Out::String(self.clone())
    }
}

/// A WebIDL `ByteString` (<https://webidl.spec.whatwg.org/#idl-ByteString>): bytes, which
/// JS holds as a string of code units up to U+00FF. How the prelude and the engine pass
/// bodies and header values without a round trip through UTF-8.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ByteString(pub Vec<u8>);

impl ToJs for ByteString {
    fn to_js(&self) -> Out {
        Out::Latin1(self.0.clone())
    }
}

impl<T: ToJs> ToJs for Vec<T> {
    fn to_js(&self) -> Out {
        Out::Array(self.iter().map(ToJs::to_js).collect())
    }
}

/// JS -> Rust for dictionaries.
pub trait FromJs: Sized {
    fn from_js(value: Val<'_>) -> Fallible<Self>;
}

/// What every DOM object with generated bindings has: its reflector (the JS object wrapping
/// it).
pub trait DomObject: Any {
    fn reflector(&self) -> &Reflector;
}

/// A DOM object's hold on its JS object. Set when the reflector is made; while set, the
/// reflector (and with it the DOM object) stays alive, so an object with pending work
/// (a running profiler, which may fire events) is not collected. [`Reflector::release`]
/// lets it go.
#[derive(Debug, Default)]
pub struct Reflector {
    root: RefCell<Option<ObjectRoot>>,
    /// The reflector's reference, for tasks made before the reflector existed.
    handle: ReflectorHandle,
}

/// A reflector's reference, set once the reflector exists (tasks carry it across threads;
/// it is only dereferenced on the main thread, and finds nothing once released).
pub type ReflectorHandle = Arc<OnceLock<RootRef>>;

impl Reflector {
    /// A reflector whose reference will also be published through `handle`.
    pub fn with_handle(handle: ReflectorHandle) -> Reflector {
        Reflector {
            root: RefCell::new(None),
            handle,
        }
    }

    pub fn set(&self, root: ObjectRoot) {
        let _ = self.handle.set(root.as_ref());
        *self.root.borrow_mut() = Some(root);
    }

    /// Stops keeping the reflector alive.
    pub fn release(&self) {
        drop(self.take());
    }

    /// Hands over the hold on the reflector (to a task that must still reach it); the
    /// reflector's handle keeps finding it while the returned root lives.
    pub fn take(&self) -> Option<ObjectRoot> {
        self.root.borrow_mut().take()
    }
}

/// A window of an event loop: a document's global (the top-level one is 0, its frames'
/// follow in the order they were made) or a worker's (0 on its own loop). Windows and the
/// host's documents share ids, and a window's realm is the profiler's
/// [`RealmId`](jsprof_profiler::RealmId) `id + 1` ([`WindowId::realm`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct WindowId(pub usize);

impl WindowId {
    /// The window's index in the loop's tables (its `Js` windows, the host's documents).
    pub fn index(self) -> usize {
        self.0
    }

    /// The profiler's realm id of the window (windows are numbered from 0, realms from 1).
    pub fn realm(self) -> jsprof_profiler::RealmId {
        // Saturating: principals of no window (from a structured clone) get a realm no
        // session has.
        jsprof_profiler::RealmId(u32::try_from(self.0).unwrap_or(u32::MAX).saturating_add(1))
    }
}

impl std::fmt::Display for WindowId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "window {}", self.0)
    }
}

/// An argument for a prelude hook.
#[derive(Debug, Clone)]
pub enum Arg<'a> {
    Num(f64),
    Str(&'a str),
    /// Bytes, as a JS string of Latin-1 code units (a `ByteString`).
    Bytes(&'a [u8]),
}

/// The event loop's runtime as a task ([`crate::task::Task`]) is handed it, on the loop's
/// thread: what a task may do in the loop's windows. The glue's `Js` is the one
/// implementation; tasks, and the host that queues them, are written against this and never
/// name the glue.
pub trait TaskJs {
    /// Calls the prelude hook `name` of window `w` with `args` (errors it throws are
    /// reported); false if it could not be called.
    fn call_hook(&mut self, w: WindowId, name: &CStr, args: &[Arg]) -> bool;
    /// Settles a promise of window `w` (the loop runs a microtask checkpoint after the
    /// task).
    fn settle(&mut self, w: WindowId, settlement: Settlement);
    /// Fires a trusted event named `type_` at `target` (if it is still rooted).
    fn fire_event(&mut self, w: WindowId, target: RootRef, type_: &str);
    /// Discards window `w` (its iframe left the document).
    fn discard_window(&mut self, w: WindowId);
}

/// WebIDL conversions from JS values (<https://webidl.spec.whatwg.org/#es-type-mapping>).
pub mod convert {
    use super::{Error, Fallible, Val};

    /// <https://webidl.spec.whatwg.org/#es-boolean>
    pub fn boolean(v: Val<'_>) -> Fallible<bool> {
        Ok(v.to_boolean())
    }

    /// <https://webidl.spec.whatwg.org/#es-DOMString>
    pub fn dom_string(v: Val<'_>) -> Fallible<String> {
        v.to_string()
    }

    /// <https://webidl.spec.whatwg.org/#es-ByteString>: ToString, then a `TypeError` if a
    /// code unit is above U+00FF; each code unit is one byte.
    pub fn byte_string(v: Val<'_>) -> Fallible<super::ByteString> {
        // Step 1. Let x be ? ToString(V).
        let x = v.to_string()?;
        // Step 2. If the value of any element of x is greater than 255, then throw a
        // TypeError. (A lone surrogate became U+FFFD in the conversion: above 255 too.)
        // Step 3. Return the IDL ByteString whose bytes are x's code units.
        x.chars()
            .map(|c| u8::try_from(u32::from(c)).ok())
            .collect::<Option<Vec<u8>>>()
            .map(super::ByteString)
            .ok_or_else(|| Error::Type("Value is not a valid ByteString.".into()))
    }

    /// <https://webidl.spec.whatwg.org/#es-enumeration>: the index in `values` of
    /// ToString(`v`); a string that is none of them is a `TypeError`.
    pub fn enumeration(v: Val<'_>, name: &str, values: &[&str]) -> Fallible<usize> {
        // Step 1. Let S be ? ToString(V).
        let s = v.to_string()?;
        // Step 2. If S is not one of E's enumeration values, then throw a TypeError.
        // Step 3. Return the enumeration value of type E that is equal to S.
        values.iter().position(|x| *x == s).ok_or_else(|| {
            Error::Type(format!(
                "The provided value '{s}' is not a valid enum value of type {name}."
            ))
        })
    }

    /// <https://webidl.spec.whatwg.org/#es-double>: NaN and ±Infinity are `TypeError`s.
    pub fn restricted_double(v: Val<'_>) -> Fallible<f64> {
        let x = v.to_number()?;
        if !x.is_finite() {
            return Err(Error::Type(
                "Value is not a finite floating-point value.".into(),
            ));
        }
        Ok(x)
    }

    /// <https://webidl.spec.whatwg.org/#es-unrestricted-double>
    pub fn unrestricted_double(v: Val<'_>) -> Fallible<f64> {
        v.to_number()
    }

    /// <https://webidl.spec.whatwg.org/#es-unsigned-long>
    pub fn unsigned_long(v: Val<'_>) -> Fallible<u32> {
        Ok(convert_to_int(v.to_number()?, 32, false) as u32)
    }

    /// <https://webidl.spec.whatwg.org/#es-long>
    pub fn long(v: Val<'_>) -> Fallible<i32> {
        Ok(convert_to_int(v.to_number()?, 32, true) as i32)
    }

    /// <https://webidl.spec.whatwg.org/#es-unsigned-long-long>
    pub fn unsigned_long_long(v: Val<'_>) -> Fallible<u64> {
        Ok(convert_to_int(v.to_number()?, 64, false) as u64)
    }

    /// <https://webidl.spec.whatwg.org/#es-octet>
    pub fn octet(v: Val<'_>) -> Fallible<u8> {
        Ok(convert_to_int(v.to_number()?, 8, false) as u8)
    }

    /// <https://webidl.spec.whatwg.org/#es-nullable-type>: `null` and `undefined` are null
    /// (step 2), anything else converts as the inner type (step 3).
    pub fn nullable<T>(v: Val<'_>, f: impl FnOnce(Val<'_>) -> Fallible<T>) -> Fallible<Option<T>> {
        if v.is_null_or_undefined() {
            return Ok(None);
        }
        f(v).map(Some)
    }

    /// <https://webidl.spec.whatwg.org/#es-long-long>
    pub fn long_long(v: Val<'_>) -> Fallible<i64> {
        Ok(convert_to_int(v.to_number()?, 64, true) as i64)
    }

    /// <https://webidl.spec.whatwg.org/#js-sequence>
    pub fn sequence<T>(v: Val<'_>, f: impl FnMut(Val<'_>) -> Fallible<T>) -> Fallible<Vec<T>> {
        v.sequence(f)
    }

    /// ConvertToInt (<https://webidl.spec.whatwg.org/#abstract-opdef-converttoint>) for a
    /// number already converted with ToNumber, without `[EnforceRange]`/`[Clamp]`: steps
    /// 8-12, in exact integer arithmetic (f64 cannot hold 2^64 − 3).
    pub fn convert_to_int(x: f64, bits: u32, signed: bool) -> i128 {
        // Step 8: NaN, +0, −0, +∞, −∞ -> +0.
        if !x.is_finite() || x == 0.0 {
            return 0;
        }
        // Step 9: IntegerPart(x). An f64 of magnitude 2^127 or more is a multiple of 2^75,
        // so it is 0 modulo 2^bitLength.
        let x = x.trunc();
        if x.abs() >= 2f64.powi(127) {
            return 0;
        }
        // Step 10: x modulo 2^bitLength.
        let modulus = 1i128 << bits;
        let x = (x as i128).rem_euclid(modulus);
        // Step 11: signed and x >= 2^(bitLength−1) -> x − 2^bitLength.
        if signed && x >= modulus / 2 {
            x - modulus
        } else {
            x
        }
    }

    #[cfg(test)]
    mod tests {
        use super::convert_to_int;

        #[test]
        fn unsigned_long_is_modulo_two_to_the_32() {
            let ul = |x: f64| convert_to_int(x, 32, false);
            assert_eq!(ul(9007199254740991.0), 4294967295); // Number.MAX_SAFE_INTEGER
            assert_eq!(ul(4294967296.0), 0);
            assert_eq!(ul(4294967297.5), 1);
            assert_eq!(ul(-1.0), 4294967295);
            assert_eq!(ul(-0.5), 0);
            assert_eq!(ul(f64::NAN), 0);
            assert_eq!(ul(f64::INFINITY), 0);
            assert_eq!(ul(10000.9), 10000);
        }

        #[test]
        fn signed_and_64_bit() {
            assert_eq!(convert_to_int(2147483648.0, 32, true), -2147483648);
            assert_eq!(convert_to_int(-1.0, 32, true), -1);
            assert_eq!(convert_to_int(-1.0, 64, false), u64::MAX as i128);
            assert_eq!(convert_to_int(-3.0, 64, false), u64::MAX as i128 - 2);
            assert_eq!(
                convert_to_int(9007199254740991.0, 64, false),
                9007199254740991
            );
            assert_eq!(convert_to_int(-3.7, 64, true), -3);
            assert_eq!(convert_to_int(2f64.powi(63), 64, true), i64::MIN as i128);
            assert_eq!(convert_to_int(2f64.powi(100), 64, false), 0);
            assert_eq!(convert_to_int(1e300, 32, false), 0);
        }
    }
}

#[cfg(test)]
mod tests {
    use jsprof_profiler::RealmId;

    use super::WindowId;

    #[test]
    fn a_window_realm_is_its_id_plus_one_saturating() {
        assert_eq!(WindowId(0).realm(), RealmId(1));
        assert_eq!(WindowId(41).realm(), RealmId(42));
        // No window's realm collides with a real one: the principals of no window (a
        // structured clone's) and ids past u32 get the last realm id.
        assert_eq!(WindowId(usize::MAX).realm(), RealmId(u32::MAX));
        assert_eq!(WindowId(u32::MAX as usize).realm(), RealmId(u32::MAX));
    }
}
