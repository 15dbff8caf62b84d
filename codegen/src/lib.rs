//! WebIDL to Rust bindings for jsprof's SpiderMonkey host.
//!
//! `webidl/*.webidl` (the specs' IDL, unchanged) and `webidl/internal/*.webidl` (IDL of the DOM
//! the engine has) are parsed with weedle2; `webidl/Bindings.toml` says which interfaces get
//! generated bindings and which Rust type implements each. The output is two Rust files of
//! `jsprof-script-bindings`, formatted with prettyplease and checked in
//! (`generated_bindings_are_fresh` fails when one is stale; `./mach codegen` rewrites them):
//! `src/generated_types.rs`, the enums, dictionaries and the host interface's trait, which
//! the crate's `Host` extends, and `src/generated.rs`, the bindings, which reach the host
//! through its `Global` (one file would import what imports it). They never name the
//! implementing types: the binding functions and tables are generic over a generated
//! `DomTypes` trait, which the script crate implements (so the bindings crate does not
//! depend on it).
//!
//! - [`model`]: the syntax tree to a small model; unsupported constructs are errors with their
//!   file and line.
//! - [`emit`]: the model to Rust with syn/quote.

#![forbid(unsafe_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub mod emit;
pub mod model;

pub use emit::Generated;
pub use model::Location;

/// A codegen failure: what, and where in which IDL file.
#[derive(Debug, Clone)]
pub struct Error {
    pub at: Location,
    pub message: String,
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.at, self.message)
    }
}

impl std::error::Error for Error {}

/// `webidl/Bindings.toml`.
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Conf {
    /// Where the generated bindings go, relative to the repository root.
    #[serde(default)]
    pub output: String,
    /// Where the generated types go (a module of the same crate, named by the file's stem:
    /// `generated_types` if unset).
    #[serde(default)]
    pub types_output: String,
    #[serde(default)]
    pub interfaces: BTreeMap<String, InterfaceConf>,
    #[serde(default)]
    pub dictionaries: BTreeMap<String, DictionaryConf>,
    #[serde(default)]
    pub enums: BTreeMap<String, EnumConf>,
}

#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EnumConf {
    /// An existing Rust enum standing for the IDL enum: its variants must be the IDL values
    /// in UpperCamelCase (the generated conversions match on them exhaustively, so a
    /// variant missing on either side does not compile).
    pub rust: Option<String>,
}

#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InterfaceConf {
    /// The Rust type implementing `{Interface}Methods`: the interface gets generated bindings.
    pub native: Option<String>,
    /// Implemented in the prelude's JavaScript.
    #[serde(default)]
    pub prelude: bool,
    /// A boolean pref that must be true for the interface to be exposed.
    pub pref: Option<String>,
    /// The engine hands the object to its prelude (the `host` namespace); it is on a global
    /// only while its `pref` is true (for tests).
    #[serde(default)]
    pub hidden: bool,
    /// A namespace that is the embedder's host interface: its `{Namespace}Methods` trait
    /// takes `&self` and the caller's window, is a supertrait of the bindings' `Host`, and
    /// each operation calls the realm's host (no `native` type: the host is the
    /// implementation).
    #[serde(default)]
    pub host: bool,
}

#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DictionaryConf {
    /// An existing `serde::Serialize` Rust type standing for the dictionary.
    pub rust: Option<String>,
}

impl Conf {
    /// The module of the generated types, which the bindings re-export.
    pub fn types_module(&self) -> &str {
        Path::new(&self.types_output)
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("generated_types")
    }

    pub fn parse(text: &str) -> Result<Conf, Error> {
        toml::from_str(text).map_err(|e| Error {
            at: Location {
                file: "webidl/Bindings.toml".into(),
                line: e.span().map_or(0, |s| {
                    text[..s.start.min(text.len())].matches('\n').count() + 1
                }),
            },
            message: e.message().to_string(),
        })
    }
}

/// Generates the bindings for `files` (`(display path, text)`) under `conf`.
pub fn generate(files: &[(String, String)], conf: &Conf) -> Result<Generated, Error> {
    let wanted: Vec<&str> = conf
        .interfaces
        .iter()
        .filter(|(_, c)| c.native.is_some() || c.host)
        .map(|(n, _)| n.as_str())
        .collect();
    let defs = model::model(files, &wanted)?;
    emit::emit(&defs, conf)
}

/// The IDL files under `root/webidl`, sorted by path (so output is deterministic), with their
/// paths relative to `root`.
pub fn idl_files(root: &Path) -> std::io::Result<Vec<(String, String)>> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
        for entry in std::fs::read_dir(dir)? {
            let path = entry?.path();
            if path.is_dir() {
                walk(&path, out)?;
            } else if path.extension().is_some_and(|e| e == "webidl") {
                out.push(path);
            }
        }
        Ok(())
    }
    let mut paths = Vec::new();
    walk(&root.join("webidl"), &mut paths)?;
    paths.sort();
    paths
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p)?;
            let shown = p.strip_prefix(root).unwrap_or(&p).display().to_string();
            Ok((shown, text))
        })
        .collect()
}

/// Generates the repository's bindings: `(output path, contents)` of the types, then of the
/// bindings.
pub fn generate_repo(root: &Path) -> Result<Vec<(PathBuf, String)>, Box<dyn std::error::Error>> {
    let conf = Conf::parse(&std::fs::read_to_string(root.join("webidl/Bindings.toml"))?)?;
    let files = idl_files(root)?;
    let out = generate(&files, &conf)?;
    Ok(vec![
        (root.join(&conf.types_output), out.types),
        (root.join(&conf.output), out.bindings),
    ])
}
