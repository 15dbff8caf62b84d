//! From weedle2's syntax tree to the small model the generator emits from: interfaces with
//! their members, dictionaries, typedefs resolved, every item with its file and line. Any
//! construct the generator does not support is an [`Error`] naming it, its file and its line.

use std::collections::BTreeMap;

use weedle::argument::Argument;
use weedle::types::{
    FloatingPointType, IntegerType, NonAnyType, ReturnType, SingleType, Type as WType,
};
use weedle::Parse;

use crate::Error;

mod members;
use members::{dictionary, interface, namespace, no_attributes, InterfacePart, Part};

/// A WebIDL type the generator supports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ty {
    Undefined,
    Boolean,
    /// `[unsigned] long`
    Long {
        unsigned: bool,
    },
    /// `[unsigned] long long`
    LongLong {
        unsigned: bool,
    },
    /// `double` (restricted) or `unrestricted double`.
    Double {
        restricted: bool,
    },
    /// `octet`
    Octet,
    DOMString,
    /// `ByteString`: a string of code units up to U+00FF, one byte each.
    ByteString,
    /// `T?` of a boolean, numeric or string type.
    Nullable(Box<Ty>),
    Sequence(Box<Ty>),
    Dictionary(String),
    /// An IDL `enum`, by name.
    Enum(String),
    Promise(Box<Ty>),
}

#[derive(Debug, Clone)]
pub struct Location {
    pub file: String,
    pub line: usize,
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

#[derive(Debug, Clone)]
pub struct Argument1 {
    pub name: String,
    pub ty: Ty,
    pub optional: bool,
}

#[derive(Debug, Clone)]
pub struct Operation {
    pub name: String,
    pub args: Vec<Argument1>,
    pub ret: Ty,
    /// The member as written, for doc comments.
    pub idl: String,
    /// `[Pref="name"]`: the operation exists only while the boolean pref is true.
    pub pref: Option<String>,
}

#[derive(Debug, Clone)]
pub struct Attribute {
    pub name: String,
    pub ty: Ty,
    pub idl: String,
}

#[derive(Debug, Clone)]
pub struct Interface {
    pub name: String,
    /// A `namespace`: operations only, called without a `this`.
    pub namespace: bool,
    pub parent: Option<String>,
    /// Global names from `[Exposed]`, as written (`Window`, `Worker`, `*`).
    pub exposed: Vec<String>,
    pub constructor: Option<Operation>,
    pub attributes: Vec<Attribute>,
    pub operations: Vec<Operation>,
    pub at: Location,
}

#[derive(Debug, Clone)]
pub struct Member {
    pub name: String,
    pub ty: Ty,
    pub required: bool,
    /// `[Pref="name"]`: the member is read from the JS object only while the boolean pref
    /// is true (otherwise it is absent, and no getter of the object runs).
    pub pref: Option<String>,
}

#[derive(Debug, Clone)]
pub struct Dictionary {
    pub name: String,
    pub parent: Option<String>,
    pub members: Vec<Member>,
    pub at: Location,
}

/// An IDL `enum`: its values, in order.
#[derive(Debug, Clone)]
pub struct Enum {
    pub name: String,
    pub values: Vec<String>,
    pub at: Location,
}

/// One parsed definition, before types are resolved: kept as source text positions so that
/// only the definitions the bindings need are checked for unsupported constructs.
enum Raw<'a> {
    Interface(weedle::InterfaceDefinition<'a>),
    Dictionary(weedle::DictionaryDefinition<'a>),
    Typedef(weedle::TypedefDefinition<'a>),
    Enum(weedle::EnumDefinition<'a>),
    Namespace(weedle::NamespaceDefinition<'a>),
    /// `partial dictionary`: members added to a dictionary defined elsewhere.
    PartialDictionary(weedle::PartialDictionaryDefinition<'a>),
    /// `partial interface`: members added to an interface defined elsewhere.
    PartialInterface(weedle::PartialInterfaceDefinition<'a>),
    /// Parsed, not used by generated bindings (callbacks, callback interfaces, …).
    Other,
}

struct Source<'a> {
    file: &'a str,
    text: &'a str,
}

impl Source<'_> {
    /// The 1-based line of `part`, a slice of this source's text.
    fn line_of(&self, part: &str) -> usize {
        let offset = (part.as_ptr() as usize).saturating_sub(self.text.as_ptr() as usize);
        let offset = offset.min(self.text.len());
        self.text[..offset].matches('\n').count() + 1
    }

    fn at(&self, part: &str) -> Location {
        Location {
            file: self.file.to_string(),
            line: self.line_of(part),
        }
    }

    fn error(&self, part: &str, message: impl Into<String>) -> Error {
        Error {
            at: self.at(part),
            message: message.into(),
        }
    }
}

/// Every definition of a set of IDL files, by name.
#[derive(Debug)]
pub struct Definitions {
    pub interfaces: BTreeMap<String, Interface>,
    pub dictionaries: BTreeMap<String, Dictionary>,
    /// The enums the modelled signatures and dictionaries use.
    pub enums: BTreeMap<String, Enum>,
    /// Interfaces known by name only (defined, not modelled because no binding needs them
    /// modelled), with their parent.
    pub known_interfaces: BTreeMap<String, (Option<String>, Location)>,
}

/// Parses `files` (`(path, text)`) and models the definitions named in `wanted_interfaces`
/// and every dictionary their signatures reach. Other definitions are only parsed.
pub fn model(files: &[(String, String)], wanted_interfaces: &[&str]) -> Result<Definitions, Error> {
    let mut raws: Vec<(Source<'_>, Raw<'_>)> = Vec::new();
    for (file, text) in files {
        let source = Source { file, text };
        let (rest, definitions) = match weedle::Definitions::parse(text) {
            Ok(parsed) => parsed,
            Err(weedle::Err::Error(e) | weedle::Err::Failure(e)) => {
                return Err(source.error(e.input, "WebIDL syntax error"));
            }
            Err(weedle::Err::Incomplete(_)) => {
                return Err(source.error(&text[text.len()..], "WebIDL ends early"));
            }
        };
        let rest = skip_comments(rest);
        if !rest.is_empty() {
            // The definition that failed, parsed alone, says where it went wrong.
            let at = match weedle::Definition::parse(rest) {
                Err(weedle::Err::Error(e) | weedle::Err::Failure(e)) => e.input,
                _ => rest,
            };
            return Err(source.error(at, "WebIDL syntax error"));
        }
        for d in definitions {
            let raw = match d {
                weedle::Definition::Interface(i) => Raw::Interface(i),
                weedle::Definition::Dictionary(d) => Raw::Dictionary(d),
                weedle::Definition::Typedef(t) => Raw::Typedef(t),
                weedle::Definition::Enum(e) => Raw::Enum(e),
                weedle::Definition::PartialDictionary(d) => Raw::PartialDictionary(d),
                weedle::Definition::PartialInterface(i) => Raw::PartialInterface(i),
                weedle::Definition::Namespace(n) => Raw::Namespace(n),
                _ => Raw::Other,
            };
            raws.push((Source { file, text }, raw));
        }
    }

    let mut typedefs: BTreeMap<&str, (&Source<'_>, &weedle::TypedefDefinition<'_>)> =
        BTreeMap::new();
    let mut dict_defs: BTreeMap<&str, (&Source<'_>, &weedle::DictionaryDefinition<'_>)> =
        BTreeMap::new();
    let mut iface_defs: BTreeMap<&str, (&Source<'_>, &weedle::InterfaceDefinition<'_>)> =
        BTreeMap::new();
    let mut enum_defs: BTreeMap<&str, (&Source<'_>, &weedle::EnumDefinition<'_>)> = BTreeMap::new();
    let mut namespace_defs: BTreeMap<&str, (&Source<'_>, &weedle::NamespaceDefinition<'_>)> =
        BTreeMap::new();
    let mut partials: BTreeMap<&str, Vec<Part<'_, '_>>> = BTreeMap::new();
    let mut partial_interfaces: BTreeMap<&str, Vec<InterfacePart<'_, '_>>> = BTreeMap::new();
    for (source, raw) in &raws {
        let (name, duplicate) = match raw {
            Raw::Typedef(t) => (
                t.identifier.0,
                typedefs.insert(t.identifier.0, (source, t)).is_some(),
            ),
            Raw::Dictionary(d) => (
                d.identifier.0,
                dict_defs.insert(d.identifier.0, (source, d)).is_some(),
            ),
            Raw::Interface(i) => (
                i.identifier.0,
                iface_defs.insert(i.identifier.0, (source, i)).is_some(),
            ),
            Raw::Enum(e) => (
                e.identifier.0,
                enum_defs.insert(e.identifier.0, (source, e)).is_some(),
            ),
            Raw::Namespace(n) => (
                n.identifier.0,
                namespace_defs.insert(n.identifier.0, (source, n)).is_some(),
            ),
            Raw::PartialDictionary(d) => {
                no_attributes(source, &d.attributes, d.identifier.0)?;
                partials
                    .entry(d.identifier.0)
                    .or_default()
                    .push((source, &d.members.body));
                continue;
            }
            Raw::PartialInterface(i) => {
                no_attributes(source, &i.attributes, i.identifier.0)?;
                partial_interfaces
                    .entry(i.identifier.0)
                    .or_default()
                    .push((source, &i.members.body));
                continue;
            }
            Raw::Other => continue,
        };
        if duplicate {
            return Err(source.error(name, format!("`{name}` is defined twice")));
        }
    }

    let resolver = Resolver {
        typedefs: &typedefs,
        dictionaries: &dict_defs,
        enums: &enum_defs,
    };
    let mut out = Definitions {
        interfaces: BTreeMap::new(),
        dictionaries: BTreeMap::new(),
        enums: BTreeMap::new(),
        known_interfaces: iface_defs
            .iter()
            .map(|(name, (source, def))| {
                (
                    name.to_string(),
                    (
                        def.inheritance.map(|i| i.identifier.0.to_string()),
                        source.at(def.identifier.0),
                    ),
                )
            })
            .collect(),
    };
    let mut wanted_dictionaries = Vec::new();
    for name in wanted_interfaces {
        if let Some((source, def)) = namespace_defs.get(name) {
            let ns = namespace(source, def, &resolver)?;
            for op in &ns.operations {
                for ty in op.args.iter().map(|a| &a.ty).chain([&op.ret]) {
                    ty.dictionaries(&mut wanted_dictionaries);
                }
            }
            out.interfaces.insert(ns.name.clone(), ns);
            continue;
        }
        let Some((source, def)) = iface_defs.get(name) else {
            return Err(Error {
                at: Location {
                    file: "webidl/Bindings.toml".into(),
                    line: 0,
                },
                message: format!("interface `{name}` has settings but no IDL definition"),
            });
        };
        let parts = partial_interfaces
            .get(name)
            .map(Vec::as_slice)
            .unwrap_or_default();
        let iface = interface(source, def, parts, &resolver)?;
        if let Some(parent) = &iface.parent {
            if !iface_defs.contains_key(parent.as_str()) {
                return Err(source.error(
                    def.identifier.0,
                    format!("`{}` inherits unknown interface `{parent}`", iface.name),
                ));
            }
        }
        let types = iface
            .constructor
            .iter()
            .chain(&iface.operations)
            .flat_map(|op| op.args.iter().map(|a| &a.ty).chain([&op.ret]))
            .chain(iface.attributes.iter().map(|a| &a.ty));
        for ty in types {
            ty.dictionaries(&mut wanted_dictionaries);
        }
        out.interfaces.insert(iface.name.clone(), iface);
    }
    while let Some(name) = wanted_dictionaries.pop() {
        if out.dictionaries.contains_key(&name) {
            continue;
        }
        let (source, def) = dict_defs[name.as_str()];
        let parts = partials.remove(name.as_str()).unwrap_or_default();
        let dict = dictionary(source, def, &parts, &resolver)?;
        for m in &dict.members {
            m.ty.dictionaries(&mut wanted_dictionaries);
        }
        if let Some(p) = &dict.parent {
            wanted_dictionaries.push(p.clone());
        }
        out.dictionaries.insert(name, dict);
    }
    if let Some((name, parts)) = partial_interfaces
        .iter()
        .find(|(n, _)| !iface_defs.contains_key(*n))
    {
        return Err(parts[0]
            .0
            .error(name, format!("`partial interface {name}` of no interface")));
    }
    if let Some((name, parts)) = partials.iter().find(|(n, _)| !dict_defs.contains_key(*n)) {
        let source = parts[0].0;
        return Err(source.error(
            name,
            format!("`partial dictionary {name}` of no dictionary"),
        ));
    }
    let mut wanted_enums = Vec::new();
    let member_types = out
        .dictionaries
        .values()
        .flat_map(|d| d.members.iter().map(|m| &m.ty));
    let signature_types = out.interfaces.values().flat_map(|i| {
        i.constructor
            .iter()
            .chain(&i.operations)
            .flat_map(|op| op.args.iter().map(|a| &a.ty).chain([&op.ret]))
            .chain(i.attributes.iter().map(|a| &a.ty))
    });
    for ty in member_types.chain(signature_types) {
        ty.enums(&mut wanted_enums);
    }
    for name in wanted_enums {
        let (source, def) = enum_defs[name.as_str()];
        let values: Vec<String> = def
            .values
            .body
            .list
            .iter()
            .map(|v| v.value.0.to_string())
            .collect();
        for (i, v) in values.iter().enumerate() {
            if values[..i].contains(v) {
                return Err(
                    source.error(def.identifier.0, format!("enum `{name}` repeats \"{v}\""))
                );
            }
        }
        let at = source.at(def.identifier.0);
        out.enums.insert(name.clone(), Enum { name, values, at });
    }
    Ok(out)
}

/// `text` after leading whitespace and comments.
fn skip_comments(mut text: &str) -> &str {
    loop {
        text = text.trim_start();
        if let Some(rest) = text.strip_prefix("//") {
            text = rest.find('\n').map_or("", |i| &rest[i..]);
        } else if let Some(rest) = text.strip_prefix("/*") {
            text = rest.find("*/").map_or("", |i| &rest[i + 2..]);
        } else {
            return text;
        }
    }
}

impl Ty {
    /// The type's name in IDL, for messages.
    pub fn idl_name(&self) -> String {
        match self {
            Ty::Undefined => "undefined".into(),
            Ty::Boolean => "boolean".into(),
            Ty::Long { unsigned } => format!("{}long", if *unsigned { "unsigned " } else { "" }),
            Ty::LongLong { unsigned } => {
                format!("{}long long", if *unsigned { "unsigned " } else { "" })
            }
            Ty::Double { restricted } => {
                format!("{}double", if *restricted { "" } else { "unrestricted " })
            }
            Ty::Octet => "octet".into(),
            Ty::DOMString => "DOMString".into(),
            Ty::ByteString => "ByteString".into(),
            Ty::Nullable(t) => format!("{}?", t.idl_name()),
            Ty::Sequence(t) => format!("sequence<{}>", t.idl_name()),
            Ty::Promise(t) => format!("Promise<{}>", t.idl_name()),
            Ty::Dictionary(n) | Ty::Enum(n) => n.clone(),
        }
    }

    fn dictionaries(&self, out: &mut Vec<String>) {
        match self {
            Ty::Dictionary(d) => out.push(d.clone()),
            Ty::Sequence(t) | Ty::Promise(t) | Ty::Nullable(t) => t.dictionaries(out),
            _ => {}
        }
    }

    fn enums(&self, out: &mut Vec<String>) {
        match self {
            Ty::Enum(e) => out.push(e.clone()),
            Ty::Sequence(t) | Ty::Promise(t) | Ty::Nullable(t) => t.enums(out),
            _ => {}
        }
    }
}

struct Resolver<'r, 'a> {
    typedefs: &'r BTreeMap<&'a str, (&'r Source<'a>, &'r weedle::TypedefDefinition<'a>)>,
    dictionaries: &'r BTreeMap<&'a str, (&'r Source<'a>, &'r weedle::DictionaryDefinition<'a>)>,
    enums: &'r BTreeMap<&'a str, (&'r Source<'a>, &'r weedle::EnumDefinition<'a>)>,
}

impl Resolver<'_, '_> {
    /// The model of `ty`, written at `part` of `source`.
    fn ty(&self, source: &Source<'_>, ty: &WType<'_>, part: &str) -> Result<Ty, Error> {
        let unsupported = |what: &str| Err(source.error(part, format!("unsupported type: {what}")));
        let single = match ty {
            WType::Single(SingleType::NonAny(t)) => t,
            WType::Single(SingleType::Any(_)) => return unsupported("`any`"),
            WType::Union(_) => return unsupported("union type"),
        };
        macro_rules! not_null {
            ($m:expr, $what:expr) => {
                if $m.q_mark.is_some() {
                    return unsupported(&format!("nullable `{}?`", $what));
                }
            };
        }
        // `T?` of a primitive or string type.
        let nullable = |q_mark: bool, ty: Ty| {
            if q_mark {
                Ty::Nullable(Box::new(ty))
            } else {
                ty
            }
        };
        Ok(match single {
            NonAnyType::Boolean(m) => nullable(m.q_mark.is_some(), Ty::Boolean),
            NonAnyType::DOMString(m) => nullable(m.q_mark.is_some(), Ty::DOMString),
            NonAnyType::ByteString(m) => nullable(m.q_mark.is_some(), Ty::ByteString),
            NonAnyType::Octet(m) => nullable(m.q_mark.is_some(), Ty::Octet),
            NonAnyType::Integer(m) => nullable(m.q_mark.is_some(), {
                match m.type_ {
                    IntegerType::Long(l) => Ty::Long {
                        unsigned: l.unsigned.is_some(),
                    },
                    IntegerType::LongLong(l) => Ty::LongLong {
                        unsigned: l.unsigned.is_some(),
                    },
                    IntegerType::Short(_) => return unsupported("`short`"),
                }
            }),
            NonAnyType::FloatingPoint(m) => nullable(m.q_mark.is_some(), {
                match m.type_ {
                    FloatingPointType::Double(d) => Ty::Double {
                        restricted: d.unrestricted.is_none(),
                    },
                    FloatingPointType::Float(_) => return unsupported("`float`"),
                }
            }),
            NonAnyType::Sequence(m) => {
                not_null!(m, "sequence");
                Ty::Sequence(Box::new(self.ty(source, &m.type_.generics.body, part)?))
            }
            NonAnyType::Promise(p) => match &*p.generics.body {
                ReturnType::Undefined(_) => Ty::Promise(Box::new(Ty::Undefined)),
                ReturnType::Type(t) => Ty::Promise(Box::new(self.ty(source, t, part)?)),
            },
            NonAnyType::Identifier(m) => {
                let name = m.type_.0;
                not_null!(m, name);
                if let Some((tsource, t)) = self.typedefs.get(name) {
                    if t.type_.attributes.is_some() {
                        return Err(tsource.error(
                            t.identifier.0,
                            "unsupported: extended attributes on a typedef",
                        ));
                    }
                    self.ty(tsource, &t.type_.type_, t.identifier.0)?
                } else if self.dictionaries.contains_key(name) {
                    Ty::Dictionary(name.to_string())
                } else if self.enums.contains_key(name) {
                    Ty::Enum(name.to_string())
                } else {
                    return Err(source.error(part, format!("unknown or unsupported type `{name}`")));
                }
            }
            other => {
                let debug = format!("{other:?}");
                return unsupported(debug.split('(').next().unwrap_or("?"));
            }
        })
    }

    fn ret(&self, source: &Source<'_>, ty: &ReturnType<'_>, part: &str) -> Result<Ty, Error> {
        match ty {
            ReturnType::Undefined(_) => Ok(Ty::Undefined),
            ReturnType::Type(t) => self.ty(source, t, part),
        }
    }

    fn args(
        &self,
        source: &Source<'_>,
        args: &weedle::argument::ArgumentList<'_>,
        part: &str,
    ) -> Result<Vec<Argument1>, Error> {
        args.list
            .iter()
            .map(|a| match a {
                Argument::Single(s) => {
                    no_attributes(source, &s.attributes, s.identifier.0)?;
                    no_attributes(source, &s.type_.attributes, s.identifier.0)?;
                    if s.default.is_some() {
                        return Err(source.error(
                            s.identifier.0,
                            format!(
                                "unsupported: default value of argument `{}`",
                                s.identifier.0
                            ),
                        ));
                    }
                    Ok(Argument1 {
                        name: s.identifier.0.to_string(),
                        ty: self.ty(source, &s.type_.type_, s.identifier.0)?,
                        optional: s.optional.is_some(),
                    })
                }
                Argument::Variadic(v) => Err(source.error(
                    v.identifier.0,
                    format!(
                        "unsupported: variadic argument `{}` in {part}",
                        v.identifier.0
                    ),
                )),
            })
            .collect()
    }
}
