//! The generator against data (test_data/NAME.webidl + NAME.toml -> NAME.rs and
//! NAME_types.rs, rewritten with UPDATE_EXPECT=1), against the repository's own IDL (the checked-in bindings must be
//! fresh), and against every unsupported construct (an error naming it, its file and line).

use std::path::{Path, PathBuf};

use jsprof_codegen::{generate, generate_repo, Conf, Generated};

/// The repository, from the directory cargo runs the test in (not the compile-time path:
/// a target directory shared by two checkouts may run a binary another one built).
fn root() -> PathBuf {
    let manifest = std::env::var_os("CARGO_MANIFEST_DIR")
        .map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")), PathBuf::from);
    manifest.join("..")
}

fn update() -> bool {
    std::env::var_os("UPDATE_EXPECT").is_some()
}

/// Compares `actual` with the file at `path` (or rewrites it with UPDATE_EXPECT=1).
fn expect_file(path: &Path, actual: &str) {
    if update() {
        std::fs::write(path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        expected == actual,
        "{} is stale: run `./mach codegen` (or UPDATE_EXPECT=1 ./mach test for test data)",
        path.display()
    );
}

#[test]
fn generated_bindings_are_fresh() {
    for (path, contents) in generate_repo(&root()).unwrap() {
        let expected = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            expected == contents,
            "{} is stale: run `./mach codegen`",
            path.display()
        );
    }
}

#[test]
fn output_is_deterministic() {
    let a = generate_repo(&root()).unwrap();
    let b = generate_repo(&root()).unwrap();
    assert_eq!(a, b);
}

fn generate_data(name: &str) -> Result<Generated, jsprof_codegen::Error> {
    let dir = root().join("codegen/test_data");
    let conf = Conf::parse(&std::fs::read_to_string(dir.join(format!("{name}.toml"))).unwrap())?;
    let mut files = vec![];
    for f in ["events.webidl".to_string(), format!("{name}.webidl")] {
        let text = std::fs::read_to_string(dir.join(&f)).unwrap();
        files.push((format!("test_data/{f}"), text));
    }
    generate(&files, &conf)
}

#[test]
fn snapshot_shapes() {
    let generated = generate_data("shapes").unwrap();
    expect_file(
        &root().join("codegen/test_data/shapes_types.rs"),
        &generated.types,
    );
    expect_file(
        &root().join("codegen/test_data/shapes.rs"),
        &generated.bindings,
    );
    // The output is Rust that parses, with what the IDL asks for.
    syn::parse_file(&generated.types).unwrap();
    syn::parse_file(&generated.bindings).unwrap();
    // The types name nothing of the host, which is written with them; the bindings take
    // the types in.
    assert!(!generated.types.contains("Global"), "{}", generated.types);
    assert!(
        !generated.types.contains("crate::host"),
        "{}",
        generated.types
    );
    assert!(
        generated
            .bindings
            .contains("pub use crate::generated_types::*;"),
        "{}",
        generated.bindings
    );
    let out = format!("{}{}", generated.types, generated.bindings);
    for needle in [
        "pub trait WidgetMethods: DomObject + Sized",
        "options: Option<WidgetOptions>",
        "fn count(&self) -> u64;",
        "scale: Option<f64>",
        "Fallible<Vec<String>>",
        "promise: Promise<crate::WidgetReport>",
        "convert::sequence(value, |item| convert::long_long(item))",
        "convert::sequence(value, |item| convert::unsigned_long_long(item))",
        "parent: Some(\"EventTarget\")",
        "exposed: &[GlobalKind::Window, GlobalKind::DedicatedWorker]",
        "impl ToJs for crate::WidgetReport",
        "Error::missing_member(\"WidgetOptions\", \"weight\")",
        "pub shape: Option<WidgetShape>",
        "pub enum WidgetShape {",
        "SquareIsh,",
        "WidgetShape::SquareIsh => \"square-ish\"",
        "convert::enumeration(value, \"WidgetGrade\", &[\"good\", \"bad\"])",
        "impl ToJs for crate::WidgetGrade",
        "crate::WidgetGrade::Bad => \"bad\"",
        // The bindings name the embedder's types only through `DomTypes`.
        "pub trait DomTypes: 'static {",
        "type Widget: WidgetMethods;",
        "<D::Widget as WidgetMethods>::constructor(&global, name, options)?",
        "call: widget_poke::<D>",
        "pub const INTERFACES: &'static [&'static InterfaceDef] = &[",
        // The host interface: the host's methods, for the caller's window.
        "pub trait WidgetEmbedderMethods {",
        "fn close(&self, window: WindowId, id: u64) -> Fallible<()>;",
        "let value = global.host.open(global.window, url, background)?;",
        "global.host.close(global.window, id)?;",
        "fn widget_embedder_open(cx: &mut CallCtx<'_>) -> Fallible<()> {",
        "call: widget_embedder_open,",
        // `[Pref]`: the partial interface's operation carries its pref; the partial
        // dictionary's member is read only under it.
        "call: widget_spin::<D>,\n                pref: Some(\"widget.extras.enabled\"),",
        "call: widget_poke::<D>,\n                pref: None,",
        "let wobbly = if dict.pref_enabled(\"widget.extras.enabled\") {",
    ] {
        assert!(out.contains(needle), "missing `{needle}` in:\n{out}");
    }
    // The host interface has no type of its own in `DomTypes`.
    assert!(!out.contains("type WidgetEmbedder"), "{out}");
    // A mapped enum is not defined again.
    assert!(!out.contains("pub enum WidgetGrade"), "{out}");
    // ...and no `native` path of Bindings.toml reaches code (only docs).
    for line in out.lines().filter(|l| l.contains("crate::dom::widget")) {
        assert!(line.trim_start().starts_with("///"), "{line}");
    }
}

/// Generates `idl` (as `bad.webidl`) with bindings for `Thing`; returns the error text.
fn error_of(idl: &str) -> String {
    let conf = Conf::parse("[interfaces.Thing]\nnative = \"crate::Thing\"\n").unwrap();
    match generate(&[("bad.webidl".into(), idl.into())], &conf) {
        Ok(out) => panic!("expected an error for:\n{idl}\ngot:\n{out:?}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn unsupported_constructs_are_errors_with_file_and_line() {
    let cases: &[(&str, &str)] = &[
        (
            "[Exposed=Window]\ninterface Thing {\n  readonly attribute any x;\n};",
            "bad.webidl:3: unsupported type: `any`",
        ),
        (
            "[Exposed=Window]\ninterface Thing {\n\n  undefined f((long or DOMString) x);\n};",
            "bad.webidl:4: unsupported type: union type",
        ),
        (
            "[Exposed=Window]\ninterface Thing {\n  attribute long x;\n};",
            "bad.webidl:3: unsupported: writable attribute `x`",
        ),
        (
            "[Exposed=Window]\ninterface Thing {\n  static undefined f();\n};",
            "bad.webidl:3: unsupported: static, stringifier or special operation `f`",
        ),
        (
            "[Exposed=Window]\nnamespace Thing {\n  readonly attribute long x;\n};",
            "bad.webidl:3: unsupported: namespace attribute `x`",
        ),
        (
            "[Exposed=Window]\nnamespace Thing {\n  Promise<long> later();\n};",
            "bad.webidl:2: unsupported: promise-returning namespace operation `later`",
        ),
        (
            "namespace Thing {\n  undefined f();\n};",
            "bad.webidl:1: namespace `Thing` has no `[Exposed]`",
        ),
        (
            "[Exposed=Window]\ninterface Thing {\n  readonly attribute long? x;\n};",
            "bad.webidl:3: unsupported type: nullable `long?` outside an argument",
        ),
        (
            "[Exposed=Window]\ninterface Thing {\n  undefined f(long... xs);\n};",
            "bad.webidl:3: unsupported: variadic argument `xs`",
        ),
        (
            "[Exposed=Window]\ninterface Thing {\n  undefined f();\n  undefined f(long x);\n};",
            "bad.webidl:4: unsupported: overloaded operation `f`",
        ),
        (
            "[Exposed=Window]\ninterface Thing {\n  const long X = 1;\n};",
            "bad.webidl:3: unsupported: constant `X`",
        ),
        (
            "[Exposed=Window]\ninterface Thing {\n  iterable<long>;\n};",
            "bad.webidl:2: unsupported: iterable declaration",
        ),
        (
            "[Exposed=Window]\ninterface Thing {\n  readonly attribute Nope x;\n};",
            "bad.webidl:3: unknown or unsupported type `Nope`",
        ),
        (
            "interface Thing {\n};",
            "bad.webidl:1: interface `Thing` has no `[Exposed]`",
        ),
        (
            "[Exposed=Window, LegacyUnenumerableNamedProperties]\ninterface Thing {};",
            "bad.webidl:1: unsupported extended attribute `[LegacyUnenumerableNamedProperties]`",
        ),
        (
            "[Exposed=Window]\ninterface Thing {\n  [NewObject] undefined f();\n};",
            "bad.webidl:3: unsupported extended attribute `[NewObject]`",
        ),
        (
            "[Exposed=Window]\ninterface Thing {\n  undefined f(optional long x = 3);\n};",
            "bad.webidl:3: unsupported: default value of argument `x`",
        ),
        (
            "[Exposed=Window]\ninterface Thing {\n  readonly attribute float x;\n};",
            "bad.webidl:3: unsupported type: `float`",
        ),
        (
            "[Exposed=Window]\ninterface Thing {\n  undefined f(D d);\n};\ndictionary D {\n  long x = 1;\n};",
            "bad.webidl:6: unsupported: default value of dictionary member `D.x`",
        ),
        (
            "[Exposed=ServiceWorker]\ninterface Thing {};",
            "bad.webidl:2: unsupported: `[Exposed=ServiceWorker]`",
        ),
        (
            "[Exposed=Window]\ninterface Thing : Missing {};",
            "bad.webidl:2: `Thing` inherits unknown interface `Missing`",
        ),
        (
            "[Exposed=Window]\ninterface Thing {\n  readonly attribute long x\n};",
            "bad.webidl:2: WebIDL syntax error",
        ),
        (
            "[Exposed=Window]\ninterface Thing {};\n\npartial dictionary Nowhere { long x; };",
            "bad.webidl:4: `partial dictionary Nowhere` of no dictionary",
        ),
        (
            "[Exposed=Window]\ninterface Thing {\n  undefined f(D d);\n};\ndictionary D { long x; };\npartial dictionary D {\n  long x;\n};",
            "bad.webidl:7: dictionary member `D.x` is defined twice",
        ),
        (
            "[Exposed=Window]\ninterface Thing {\n  undefined f(E e);\n};\nenum E { \"a\", \"a\" };",
            "bad.webidl:5: enum `E` repeats \"a\"",
        ),
        (
            "[Exposed=Window]\ninterface Thing {\n  undefined f(E e);\n};\nenum E { \"a-b\", \"a_b\" };",
            "bad.webidl:5: enum `E`: two values give the Rust variant `AB`",
        ),
        (
            "[Exposed=Window]\ninterface Thing {\n  undefined f(D d);\n};\ndictionary D {\n  [Pref=\"p\"] required long x;\n};",
            "bad.webidl:6: a required dictionary member cannot have `[Pref]`: `D.x`",
        ),
        (
            "[Exposed=Window]\ninterface Thing {\n  [Pref=p] undefined f();\n};",
            "bad.webidl:3: `[Pref]` takes one pref name, as a string",
        ),
        (
            "[Exposed=Window]\ninterface Thing {\n  [Throws] undefined f();\n};",
            "bad.webidl:3: unsupported extended attribute `[Throws]`",
        ),
        (
            "[Exposed=Window]\ninterface Thing {};\npartial interface Nothing {\n  undefined f();\n};",
            "bad.webidl:3: `partial interface Nothing` of no interface",
        ),
        (
            "[Exposed=Window]\ninterface Thing {\n  undefined f();\n};\npartial interface Thing {\n  undefined f();\n};",
            "bad.webidl:6: unsupported: overloaded operation `f`",
        ),
    ];
    for (idl, expected) in cases {
        let error = error_of(idl);
        assert!(
            error.starts_with(expected),
            "for:\n{idl}\nexpected `{expected}…`, got `{error}`"
        );
    }
}

#[test]
fn definitions_no_binding_uses_are_only_parsed() {
    // `Other` has a union type and a default value, but nothing generated uses it.
    let idl = "[Exposed=Window]\ninterface Thing {};\n[Exposed=Window] interface Other { undefined f(optional (long or DOMString) x = 1); };";
    let conf = Conf::parse("[interfaces.Thing]\nnative = \"crate::Thing\"\n").unwrap();
    generate(&[("ok.webidl".into(), idl.into())], &conf).unwrap();
}

#[test]
fn bad_settings_are_errors() {
    let e = Conf::parse("[interfaces.Thing]\nnativ = \"x\"\n")
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("webidl/Bindings.toml:2:"), "{e}");
    let conf = Conf::parse("[interfaces.Absent]\nnative = \"crate::Absent\"\n").unwrap();
    let e = generate(&[], &conf).unwrap_err().to_string();
    assert!(
        e.contains("interface `Absent` has settings but no IDL definition"),
        "{e}"
    );
    // `host` is for a namespace, without a `native` type.
    let idl = "[Exposed=Window]\ninterface Thing { undefined go(); };";
    let conf = Conf::parse("[interfaces.Thing]\nhost = true\n").unwrap();
    let e = generate(&[("bad.webidl".into(), idl.into())], &conf)
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("bad.webidl:2: `host = true` is for a namespace"),
        "{e}"
    );
    // ...whose operations leave `window` to the caller's window.
    let idl = "[Exposed=Window]\nnamespace Thing { undefined go(long window); };";
    let e = generate(&[("bad.webidl".into(), idl.into())], &conf)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("argument `window` of host operation `go`: `window` is the caller's"),
        "{e}"
    );
}
