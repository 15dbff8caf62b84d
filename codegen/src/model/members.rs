//! Interfaces and dictionaries modelled member by member (attributes, operations, the
//! constructor, dictionary members with their partial dictionaries), with the member text
//! kept for doc comments.

use weedle::argument::Argument;
use weedle::attribute::{ExtendedAttribute, ExtendedAttributeList, IdentifierOrString};
use weedle::interface::InterfaceMember;
use weedle::namespace::NamespaceMember;
use weedle::types::{
    FloatingPointType, IntegerType, NonAnyType, ReturnType, SingleType, Type as WType,
};

use crate::Error;

use super::{Attribute, Dictionary, Interface, Member, Operation, Resolver, Source, Ty};

pub(super) fn no_attributes(
    source: &Source<'_>,
    attrs: &Option<ExtendedAttributeList<'_>>,
    part: &str,
) -> Result<(), Error> {
    match attrs.as_ref().and_then(|a| a.body.list.first()) {
        Some(a) => Err(source.error(
            attribute_name(a),
            format!("unsupported extended attribute `[{}]`", attribute_name(a)),
        )),
        None => {
            let _ = part;
            Ok(())
        }
    }
}

/// A member's `[Pref="name"]` (Servo's extended attribute: the member exists only while the
/// boolean pref is true), the only extended attribute a member may have.
pub(super) fn pref_attribute(
    source: &Source<'_>,
    attrs: &Option<ExtendedAttributeList<'_>>,
) -> Result<Option<String>, Error> {
    let mut pref = None;
    for a in attrs.iter().flat_map(|a| a.body.list.iter()) {
        match a {
            ExtendedAttribute::Ident(i) if i.lhs_identifier.0 == "Pref" => match i.rhs {
                IdentifierOrString::String(s) if pref.is_none() && !s.0.is_empty() => {
                    pref = Some(s.0.to_string())
                }
                _ => {
                    return Err(source.error(
                        i.lhs_identifier.0,
                        "`[Pref]` takes one pref name, as a string: `[Pref=\"name\"]`",
                    ))
                }
            },
            other => {
                return Err(source.error(
                    attribute_name(other),
                    format!(
                        "unsupported extended attribute `[{}]`",
                        attribute_name(other)
                    ),
                ))
            }
        }
    }
    Ok(pref)
}

fn attribute_name<'a>(a: &ExtendedAttribute<'a>) -> &'a str {
    match a {
        ExtendedAttribute::ArgList(a) => a.identifier.0,
        ExtendedAttribute::NamedArgList(a) => a.lhs_identifier.0,
        ExtendedAttribute::IdentList(a) => a.identifier.0,
        ExtendedAttribute::Ident(a) => a.lhs_identifier.0,
        ExtendedAttribute::NoArgs(a) => a.0 .0,
    }
}

/// Members of an interface as one definition gives them (the interface, or a partial one).
pub(super) type InterfacePart<'r, 'a> =
    (&'r Source<'a>, &'r weedle::interface::InterfaceMembers<'a>);

pub(super) fn interface(
    source: &Source<'_>,
    def: &weedle::InterfaceDefinition<'_>,
    partials: &[InterfacePart<'_, '_>],
    resolver: &Resolver<'_, '_>,
) -> Result<Interface, Error> {
    let name = def.identifier.0;
    let exposed = exposed(source, &def.attributes, name, "interface")?;
    let mut iface = Interface {
        name: name.to_string(),
        namespace: false,
        parent: def.inheritance.map(|i| i.identifier.0.to_string()),
        exposed,
        constructor: None,
        attributes: Vec::new(),
        operations: Vec::new(),
        at: source.at(name),
    };
    let own: InterfacePart<'_, '_> = (source, &def.members.body);
    for (source, member) in [own]
        .into_iter()
        .chain(partials.iter().copied())
        .flat_map(|(source, members)| members.iter().map(move |m| (source, m)))
    {
        match member {
            InterfaceMember::Attribute(a) => {
                let at = a.identifier.0;
                no_attributes(source, &a.attributes, at)?;
                if a.modifier.is_some() {
                    return Err(source.error(
                        at,
                        format!("unsupported: static, inherit or stringifier attribute `{at}`"),
                    ));
                }
                if a.readonly.is_none() {
                    return Err(source.error(at, format!("unsupported: writable attribute `{at}`")));
                }
                iface.attributes.push(Attribute {
                    name: at.to_string(),
                    ty: only_arguments_nullable(
                        source,
                        resolver.ty(source, &a.type_.type_, at)?,
                        at,
                    )?,
                    idl: format!("readonly attribute {} {at}", type_text(&a.type_.type_)),
                });
            }
            InterfaceMember::Constructor(c) => {
                no_attributes(source, &c.attributes, name)?;
                if iface.constructor.is_some() {
                    return Err(source.error(
                        name,
                        format!("unsupported: overloaded constructor of `{name}`"),
                    ));
                }
                let args = resolver.args(source, &c.args.body, "the constructor")?;
                iface.constructor = Some(Operation {
                    name: "constructor".into(),
                    idl: format!("constructor({})", args_text(&c.args.body)),
                    args,
                    ret: Ty::Undefined,
                    pref: None,
                });
            }
            InterfaceMember::Operation(o) => {
                let Some(id) = o.identifier else {
                    return Err(source.error(
                        name,
                        format!("unsupported: special operation without a name in `{name}`"),
                    ));
                };
                if o.modifier.is_some() || o.special.is_some() {
                    return Err(source.error(
                        id.0,
                        format!(
                            "unsupported: static, stringifier or special operation `{}`",
                            id.0
                        ),
                    ));
                }
                let op = operation(
                    source,
                    resolver,
                    &iface.operations,
                    id.0,
                    &o.attributes,
                    &o.args.body,
                    &o.return_type,
                )?;
                iface.operations.push(op);
            }
            InterfaceMember::Const(c) => {
                return Err(source.error(
                    c.identifier.0,
                    format!("unsupported: constant `{}`", c.identifier.0),
                ))
            }
            InterfaceMember::Iterable(_) | InterfaceMember::AsyncIterable(_) => {
                return Err(source.error(
                    name,
                    format!("unsupported: iterable declaration in `{name}`"),
                ))
            }
            InterfaceMember::Maplike(_) | InterfaceMember::Setlike(_) => {
                return Err(source.error(
                    name,
                    format!("unsupported: maplike/setlike declaration in `{name}`"),
                ))
            }
            InterfaceMember::Stringifier(_) => {
                return Err(source.error(name, format!("unsupported: stringifier in `{name}`")))
            }
        }
    }
    Ok(iface)
}

/// `ty`, unless it is nullable: only arguments may be (a value going to JS would need `null`).
fn only_arguments_nullable(source: &Source<'_>, ty: Ty, part: &str) -> Result<Ty, Error> {
    match ty {
        Ty::Nullable(inner) => Err(source.error(
            part,
            format!(
                "unsupported type: nullable `{}?` outside an argument",
                inner.idl_name()
            ),
        )),
        ty => Ok(ty),
    }
}

/// The globals of an `[Exposed]` extended attribute, the only one a definition may have.
fn exposed(
    source: &Source<'_>,
    attrs: &Option<ExtendedAttributeList<'_>>,
    name: &str,
    what: &str,
) -> Result<Vec<String>, Error> {
    let mut exposed = Vec::new();
    for a in attrs.iter().flat_map(|a| &a.body.list) {
        match a {
            ExtendedAttribute::Ident(i) if i.lhs_identifier.0 == "Exposed" => match i.rhs {
                IdentifierOrString::Identifier(id) => exposed.push(id.0.to_string()),
                IdentifierOrString::String(_) => {
                    return Err(source.error(i.lhs_identifier.0, "unsupported `[Exposed]` value"))
                }
            },
            ExtendedAttribute::IdentList(l) if l.identifier.0 == "Exposed" => {
                exposed.extend(l.list.body.list.iter().map(|i| i.0.to_string()))
            }
            ExtendedAttribute::NoArgs(n) if n.0 .0 == "Exposed" => {
                return Err(source.error(n.0 .0, "`[Exposed]` needs a value"))
            }
            other => {
                return Err(source.error(
                    attribute_name(other),
                    format!(
                        "unsupported extended attribute `[{}]` on {what} `{name}`",
                        attribute_name(other)
                    ),
                ))
            }
        }
    }
    if exposed.is_empty() {
        return Err(source.error(name, format!("{what} `{name}` has no `[Exposed]`")));
    }
    Ok(exposed)
}

/// A regular operation `name` (of an interface or a namespace, whose operations so far are
/// `existing`).
fn operation(
    source: &Source<'_>,
    resolver: &Resolver<'_, '_>,
    existing: &[Operation],
    name: &str,
    attributes: &Option<ExtendedAttributeList<'_>>,
    args: &weedle::argument::ArgumentList<'_>,
    return_type: &ReturnType<'_>,
) -> Result<Operation, Error> {
    let pref = pref_attribute(source, attributes)?;
    if existing.iter().any(|op| op.name == name) {
        return Err(source.error(name, format!("unsupported: overloaded operation `{name}`")));
    }
    Ok(Operation {
        name: name.to_string(),
        idl: format!(
            "{} {name}({})",
            match return_type {
                ReturnType::Undefined(_) => "undefined".to_string(),
                ReturnType::Type(t) => type_text(t),
            },
            args_text(args)
        ),
        args: resolver.args(source, args, name)?,
        ret: only_arguments_nullable(source, resolver.ret(source, return_type, name)?, name)?,
        pref,
    })
}

/// <https://webidl.spec.whatwg.org/#idl-namespaces>: a namespace of regular operations.
pub(super) fn namespace(
    source: &Source<'_>,
    def: &weedle::NamespaceDefinition<'_>,
    resolver: &Resolver<'_, '_>,
) -> Result<Interface, Error> {
    let name = def.identifier.0;
    let mut ns = Interface {
        name: name.to_string(),
        namespace: true,
        parent: None,
        exposed: exposed(source, &def.attributes, name, "namespace")?,
        constructor: None,
        attributes: Vec::new(),
        operations: Vec::new(),
        at: source.at(name),
    };
    for member in &def.members.body {
        match member {
            NamespaceMember::Operation(o) => {
                let Some(id) = o.identifier else {
                    return Err(source.error(
                        name,
                        format!("unsupported: operation without a name in `{name}`"),
                    ));
                };
                let op = operation(
                    source,
                    resolver,
                    &ns.operations,
                    id.0,
                    &o.attributes,
                    &o.args.body,
                    &o.return_type,
                )?;
                ns.operations.push(op);
            }
            NamespaceMember::Attribute(a) => {
                return Err(source.error(
                    a.identifier.0,
                    format!("unsupported: namespace attribute `{}`", a.identifier.0),
                ))
            }
        }
    }
    Ok(ns)
}

/// Members of a dictionary as one definition gives them (the dictionary, or a partial one).
pub(super) type Part<'r, 'a> = (
    &'r Source<'a>,
    &'r weedle::dictionary::DictionaryMembers<'a>,
);

pub(super) fn dictionary(
    source: &Source<'_>,
    def: &weedle::DictionaryDefinition<'_>,
    partials: &[Part<'_, '_>],
    resolver: &Resolver<'_, '_>,
) -> Result<Dictionary, Error> {
    let name = def.identifier.0;
    no_attributes(source, &def.attributes, name)?;
    let mut members: Vec<Member> = Vec::new();
    let own: Part<'_, '_> = (source, &def.members.body);
    for (source, m) in [own]
        .into_iter()
        .chain(partials.iter().copied())
        .flat_map(|(source, members)| members.iter().map(move |m| (source, m)))
    {
        let pref = pref_attribute(source, &m.attributes)?;
        if pref.is_some() && m.required.is_some() {
            return Err(source.error(
                m.identifier.0,
                format!(
                    "a required dictionary member cannot have `[Pref]`: `{name}.{}`",
                    m.identifier.0
                ),
            ));
        }
        if members.iter().any(|x| x.name == m.identifier.0) {
            return Err(source.error(
                m.identifier.0,
                format!(
                    "dictionary member `{name}.{}` is defined twice",
                    m.identifier.0
                ),
            ));
        }
        if m.default.is_some() {
            return Err(source.error(
                m.identifier.0,
                format!(
                    "unsupported: default value of dictionary member `{name}.{}`",
                    m.identifier.0
                ),
            ));
        }
        members.push(Member {
            name: m.identifier.0.to_string(),
            ty: only_arguments_nullable(
                source,
                resolver.ty(source, &m.type_, m.identifier.0)?,
                m.identifier.0,
            )?,
            required: m.required.is_some(),
            pref,
        });
    }
    // https://webidl.spec.whatwg.org/#dfn-dictionary-members: lexicographic order.
    members.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(Dictionary {
        name: name.to_string(),
        parent: def.inheritance.map(|i| i.identifier.0.to_string()),
        members,
        at: source.at(name),
    })
}

/// A type as written (for doc comments).
fn type_text(ty: &WType<'_>) -> String {
    let q = |nullable: bool| if nullable { "?" } else { "" };
    match ty {
        WType::Single(SingleType::Any(_)) => "any".into(),
        WType::Single(SingleType::NonAny(t)) => match t {
            NonAnyType::Boolean(m) => format!("boolean{}", q(m.q_mark.is_some())),
            NonAnyType::DOMString(m) => format!("DOMString{}", q(m.q_mark.is_some())),
            NonAnyType::ByteString(m) => format!("ByteString{}", q(m.q_mark.is_some())),
            NonAnyType::Octet(m) => format!("octet{}", q(m.q_mark.is_some())),
            NonAnyType::Integer(m) => {
                let base = match m.type_ {
                    IntegerType::Long(l) if l.unsigned.is_some() => "unsigned long",
                    IntegerType::Long(_) => "long",
                    IntegerType::LongLong(l) if l.unsigned.is_some() => "unsigned long long",
                    IntegerType::LongLong(_) => "long long",
                    IntegerType::Short(_) => "short",
                };
                format!("{base}{}", q(m.q_mark.is_some()))
            }
            NonAnyType::FloatingPoint(m) => {
                let base = match m.type_ {
                    FloatingPointType::Double(d) if d.unrestricted.is_some() => {
                        "unrestricted double"
                    }
                    FloatingPointType::Double(_) => "double",
                    FloatingPointType::Float(_) => "float",
                };
                format!("{base}{}", q(m.q_mark.is_some()))
            }
            NonAnyType::Sequence(s) => format!("sequence<{}>", type_text(&s.type_.generics.body)),
            NonAnyType::Promise(p) => match &*p.generics.body {
                ReturnType::Undefined(_) => "Promise<undefined>".into(),
                ReturnType::Type(t) => format!("Promise<{}>", type_text(t)),
            },
            NonAnyType::Identifier(i) => i.type_.0.to_string(),
            _ => "…".into(),
        },
        WType::Union(_) => "(union)".into(),
    }
}

fn args_text(args: &weedle::argument::ArgumentList<'_>) -> String {
    args.list
        .iter()
        .map(|a| match a {
            Argument::Single(s) => format!(
                "{}{} {}",
                if s.optional.is_some() {
                    "optional "
                } else {
                    ""
                },
                type_text(&s.type_.type_),
                s.identifier.0
            ),
            Argument::Variadic(v) => format!("{}... {}", type_text(&v.type_), v.identifier.0),
        })
        .collect::<Vec<_>>()
        .join(", ")
}
