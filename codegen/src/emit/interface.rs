//! Per interface or namespace: the `{Interface}Methods` trait, one binding function per
//! member (argument conversions, the `this` check, return conversion, exceptions to rejected
//! promises) and the `InterfaceDef` table.

use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote};

use super::{from_js, ident, rust_type, snake, table_ident};
use crate::model::{self, Definitions, Operation, Ty};
use crate::{Conf, Error};

fn arguments(
    op: &Operation,
    conf: &Conf,
    at: &crate::model::Location,
) -> Result<(Vec<TokenStream>, Vec<Ident>), Error> {
    let mut lets = Vec::new();
    let mut names = Vec::new();
    for (i, a) in op.args.iter().enumerate() {
        let n = ident(&a.name);
        let i = proc_macro2::Literal::u32_unsuffixed(i as u32);
        let conv = from_js(&a.ty, conf, quote!(value), at)?;
        if a.optional {
            lets.push(quote! {
                let #n = match cx.arg(#i) {
                    value if value.is_undefined() => None,
                    value => Some(#conv?),
                };
            });
        } else {
            lets.push(quote! {
                let #n = {
                    let value = cx.arg(#i);
                    #conv?
                };
            });
        }
        names.push(n);
    }
    Ok((lets, names))
}

/// An operation's parameters in its `{Interface}Methods` signature (`Option` when optional).
fn parameters(op: &Operation, conf: &Conf) -> Vec<TokenStream> {
    op.args
        .iter()
        .map(|a| {
            let n = ident(&a.name);
            let t = rust_type(&a.ty, conf);
            if a.optional {
                quote!(#n: Option<#t>)
            } else {
                quote!(#n: #t)
            }
        })
        .collect()
}

fn required_args(op: &Operation) -> u32 {
    op.args.iter().take_while(|a| !a.optional).count() as u32
}

/// What one interface or namespace adds to the generated files.
pub(super) struct Interface {
    /// Its `{Interface}Methods` trait.
    pub methods: TokenStream,
    /// Its binding functions (generic over `D: DomTypes`).
    pub fns: TokenStream,
    /// Its `InterfaceDef` table, an associated const of `Tables<D>`.
    pub table: TokenStream,
    /// Its associated type in `DomTypes`.
    pub dom_type: TokenStream,
}

pub(super) fn interface(
    iface: &model::Interface,
    defs: &Definitions,
    conf: &Conf,
) -> Result<Interface, Error> {
    let name = &iface.name;
    let settings = &conf.interfaces[name];
    if settings.host && (!iface.namespace || settings.native.is_some()) {
        return Err(Error {
            at: iface.at.clone(),
            message: format!(
                "`host = true` is for a namespace without `native` (the host implements `{name}`)"
            ),
        });
    }
    let native_path = match (&settings.native, settings.host) {
        (Some(native), _) => native.as_str(),
        (None, true) => "the embedder's `Host`",
        (None, false) => {
            return Err(Error {
                at: iface.at.clone(),
                message: format!("interface `{name}` needs `native` in Bindings.toml"),
            })
        }
    };
    // The embedder's type for this interface: `D::{Interface}`, where `D` is its
    // `DomTypes` (the bindings never name the embedder's crate).
    let type_name = Ident::new(name, Span::call_site());
    let native = quote!(D::#type_name);
    let methods = format_ident!("{}Methods", name);
    let table = table_ident(name);
    let prefix = snake(name);
    let mut trait_items = Vec::new();
    let mut fns = Vec::new();

    let constructor = match &iface.constructor {
        Some(op) => {
            let (lets, names) = arguments(op, conf, &iface.at)?;
            let params = parameters(op, conf);
            let doc = format!(" `{}`", op.idl);
            trait_items.push(quote! {
                #[doc = #doc]
                fn constructor(global: &Global, #(#params),*) -> Fallible<Self>;
            });
            let f = format_ident!("{}_constructor", prefix);
            let fdoc = format!(" <https://webidl.spec.whatwg.org/#js-constructors> for `{name}`.");
            fns.push(quote! {
                #[doc = #fdoc]
                fn #f<D: DomTypes>(cx: &mut CallCtx<'_>) -> Fallible<()> {
                    #(#lets)*
                    let global = cx.global();
                    let object = <#native as #methods>::constructor(&global, #(#names),*)?;
                    cx.return_reflector(object)
                }
            });
            let length = proc_macro2::Literal::u32_unsuffixed(required_args(op));
            quote!(Some(ConstructorDef { length: #length, call: #f::<D> }))
        }
        None => quote!(None),
    };

    let mut attributes = Vec::new();
    for a in &iface.attributes {
        let m = ident(&a.name);
        let t = rust_type(&a.ty, conf);
        let doc = format!(" `{}`", a.idl);
        trait_items.push(quote! {
            #[doc = #doc]
            fn #m(&self) -> #t;
        });
        let f = format_ident!("{}_get_{}", prefix, snake(&a.name));
        fns.push(quote! {
            fn #f<D: DomTypes>(cx: &mut CallCtx<'_>) -> Fallible<()> {
                let value = cx.with_this(|this: &#native| this.#m())?;
                cx.set_return(value.to_js());
                Ok(())
            }
        });
        let js = &a.name;
        attributes.push(quote!(AttributeDef { name: #js, get: #f::<D> }));
    }

    let mut operations = Vec::new();
    // The host interface's operations call the realm's host, no type of `D`.
    let (generics, turbofish) = if settings.host {
        (quote!(), quote!())
    } else {
        (quote!(<D: DomTypes>), quote!(::<D>))
    };
    for op in &iface.operations {
        let m = ident(&op.name);
        let (lets, names) = arguments(op, conf, &iface.at)?;
        let params = parameters(op, conf);
        let f = format_ident!("{}_{}", prefix, snake(&op.name));
        let js = &op.name;
        let length = proc_macro2::Literal::u32_unsuffixed(required_args(op));
        if iface.namespace && matches!(op.ret, Ty::Promise(_)) {
            return Err(Error {
                at: iface.at.clone(),
                message: format!(
                    "unsupported: promise-returning namespace operation `{}`",
                    op.name
                ),
            });
        }
        if let Ty::Promise(inner) = &op.ret {
            let inner = rust_type(inner, conf);
            let doc = format!(
                " `{}`: an `Err` (or an exception converting the arguments) rejects `promise`.",
                op.idl
            );
            trait_items.push(quote! {
                #[doc = #doc]
                fn #m(&self, global: &Global, #(#params,)* promise: Promise<#inner>) -> Fallible<()>;
            });
            let steps = format_ident!("{}_{}_steps", prefix, snake(&op.name));
            fns.push(quote! {
                /// <https://webidl.spec.whatwg.org/#js-operations>: an operation returning a
                /// promise turns its exceptions into a rejected promise.
                fn #f<D: DomTypes>(cx: &mut CallCtx<'_>) -> Fallible<()> {
                    let promise = cx.return_new_promise()?;
                    if let Err(error) = #steps::<D>(cx, promise) {
                        cx.reject_returned_promise(error)?;
                    }
                    Ok(())
                }

                fn #steps<D: DomTypes>(cx: &mut CallCtx<'_>, promise: Promise<#inner>) -> Fallible<()> {
                    #(#lets)*
                    let global = cx.global();
                    cx.with_this(|this: &#native| this.#m(&global, #(#names,)* promise))?
                }
            });
        } else {
            let t = rust_type(&op.ret, conf);
            let doc = format!(" `{}`", op.idl);
            // A namespace's operations are called without a `this`
            // (<https://webidl.spec.whatwg.org/#namespace-object>).
            let (receiver, call) = if settings.host {
                // The host interface: the realm's host, for the caller's window.
                if let Some(a) = op.args.iter().find(|a| a.name == "window") {
                    return Err(Error {
                        at: iface.at.clone(),
                        message: format!(
                            "argument `{}` of host operation `{}`: `window` is the caller's",
                            a.name, op.name
                        ),
                    });
                }
                (
                    quote!(&self, window: WindowId,),
                    quote!(global.host.#m(global.window, #(#names),*)),
                )
            } else if iface.namespace {
                (
                    quote!(),
                    quote!(<#native as #methods>::#m(&global, #(#names),*)),
                )
            } else {
                (
                    quote!(&self,),
                    quote!(cx.with_this(|this: &#native| this.#m(&global, #(#names),*))?),
                )
            };
            let global_param = if settings.host {
                quote!()
            } else {
                quote!(global: &Global,)
            };
            trait_items.push(quote! {
                #[doc = #doc]
                fn #m(#receiver #global_param #(#params),*) -> Fallible<#t>;
            });
            // An `undefined` operation leaves the return value as it is (undefined).
            let ret = if op.ret == Ty::Undefined {
                quote!(#call?;)
            } else {
                quote! {
                    let value = #call?;
                    cx.set_return(value.to_js());
                }
            };
            fns.push(quote! {
                fn #f #generics (cx: &mut CallCtx<'_>) -> Fallible<()> {
                    #(#lets)*
                    let global = cx.global();
                    #ret
                    Ok(())
                }
            });
        }
        let pref = match &op.pref {
            Some(p) => quote!(Some(#p)),
            None => quote!(None),
        };
        operations.push(
            quote!(OperationDef { name: #js, length: #length, call: #f #turbofish, pref: #pref }),
        );
    }

    let mut exposed = Vec::new();
    for g in &iface.exposed {
        let kinds: &[&str] = match g.as_str() {
            "Window" => &["Window"],
            "Worker" | "DedicatedWorker" => &["DedicatedWorker"],
            "*" => &["Window", "DedicatedWorker"],
            other => {
                return Err(Error {
                    at: iface.at.clone(),
                    message: format!("unsupported: `[Exposed={other}]` (this engine has Window and DedicatedWorker globals)"),
                })
            }
        };
        for k in kinds {
            let k = Ident::new(k, Span::call_site());
            let k = quote!(GlobalKind::#k);
            if !exposed
                .iter()
                .any(|e: &TokenStream| e.to_string() == k.to_string())
            {
                exposed.push(k);
            }
        }
    }
    let parent = match &iface.parent {
        Some(p) => {
            let generated = defs.interfaces.contains_key(p);
            let prelude = conf.interfaces.get(p).is_some_and(|c| c.prelude);
            if !generated && !prelude {
                return Err(Error {
                    at: iface.at.clone(),
                    message: format!("`{name}` inherits `{p}`, which has neither generated bindings nor `prelude = true` in Bindings.toml"),
                });
            }
            quote!(Some(#p))
        }
        None => quote!(None),
    };
    let trait_doc = if settings.host {
        format!(
            " `namespace {name}` ({}): the embedder's host interface, which `Host` extends; \
             each operation is a call on the realm's host for the caller's `window`.",
            iface.at
        )
    } else {
        format!(
            " `{} {name}{}` ({}): what `DomTypes::{name}` implements (`{}` in Bindings.toml).",
            if iface.namespace {
                "namespace"
            } else {
                "interface"
            },
            iface
                .parent
                .as_ref()
                .map(|p| format!(" : {p}"))
                .unwrap_or_default(),
            iface.at,
            native_path
        )
    };
    let pref = match &settings.pref {
        Some(p) => quote!(Some(#p)),
        None => quote!(None),
    };
    let table_doc = if iface.namespace {
        format!(" The namespace object and operations of `{name}`.")
    } else {
        format!(" The interface object, prototype and members of `{name}`.")
    };
    let bound = if iface.namespace {
        quote!()
    } else {
        quote!(: DomObject + Sized)
    };
    let namespace = iface.namespace;
    let hidden = settings.hidden;
    let type_doc = format!(" `{name}`: `{native_path}` in Bindings.toml.");
    Ok(Interface {
        methods: quote! {
            #[doc = #trait_doc]
            pub trait #methods #bound {
                #(#trait_items)*
            }
        },
        fns: quote! {
            #(#fns)*
        },
        table: quote! {
            #[doc = #table_doc]
            pub const #table: InterfaceDef = InterfaceDef {
                name: #name,
                parent: #parent,
                exposed: &[#(#exposed),*],
                pref: #pref,
                namespace: #namespace,
                hidden: #hidden,
                constructor: #constructor,
                attributes: &[#(#attributes),*],
                operations: &[#(#operations),*],
            };
        },
        // The host interface is implemented by the host, not by a type of `DomTypes`.
        dom_type: if settings.host {
            quote!()
        } else {
            quote! {
                #[doc = #type_doc]
                type #type_name: #methods;
            }
        },
    })
}
