//! The scripts a JS thread compiled, and the resolution of a position in one of them to the
//! enclosing function's ECMAScript name and definition position: the [`Symbolizer`] of the
//! profiler's sessions.
//!
//! No JavaScript engine here (and no `unsafe`): the SpiderMonkey agent
//! (`jsprof-spidermonkey`) keys its frames by the engine's ScriptSource ids and hands them to
//! a [`ScriptRegistry`], and the fuzz targets check this crate without ever building
//! SpiderMonkey (13 minutes on 2 cores).
//!
//! "Sample cheap, symbolise late": a capture records only (script, line, column) per frame;
//! when a trace is built (off the agent's thread) each distinct position is resolved here by
//! parsing the script once with oxc. Names follow the spec's function instance name
//! (SetFunctionName / NamedEvaluation, BRIEF decision 5): declarations and named expressions
//! keep their names; anonymous functions take the binding, property or method they are
//! defined as (`const f = function () {}` gives `f`); getters and setters are `get x` and
//! `set x`; anything else (an arrow passed as an argument) is `''`, as is top-level code.
//! The position is that of the `(` opening the parameter list, 1-based, counted from the top
//! of the document for inline scripts.

#![forbid(unsafe_code)]

use std::sync::{Arc, OnceLock, RwLock};

use jsprof_profiler::{RealmId, ResolvedSite, ScriptId, Symbolizer};
use oxc_allocator::Allocator;
use oxc_ast::ast::{
    ArrowFunctionExpression, AssignmentExpression, AssignmentTarget, Class,
    ExportDefaultDeclaration, ExportDefaultDeclarationKind, Expression, Function, MethodDefinition,
    MethodDefinitionKind, ObjectProperty, PropertyKind, VariableDeclarator,
};
use oxc_ast_visit::{walk, Visit};
use oxc_span::SourceType;
use rustc_hash::FxHashMap;

/// A SpiderMonkey ScriptSource id: the identity of one compilation of one script's text,
/// which every frame the engine reports carries (a SavedFrame's source id slot, a profiling
/// frame's source). Two compilations of one URL have two ids.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SourceId(pub u32);

/// What the host says of a script it compiled ([`ScriptRegistry::register`]).
#[derive(Debug, Clone, Copy)]
pub struct ScriptInfo<'a> {
    /// The ScriptSource id the compilation got.
    pub source_id: SourceId,
    /// The realm whose global it was compiled in: its frames belong to that realm.
    pub realm: RealmId,
    /// Its URL (the resource a trace names), and its text.
    pub url: &'a str,
    pub source: &'a str,
    /// Where the text starts in its resource (1-based; an inline script's position in its
    /// document), so that frames have the resource's positions.
    pub line: u32,
    pub column: u32,
    /// A module (parsed as one).
    pub module: bool,
    /// Its errors are muted (<https://html.spec.whatwg.org/#muted-errors>: a classic script
    /// from an opaque response): its frames never reach a page, and its text names nothing.
    pub muted: bool,
}

/// What the registry knows of a source ([`ScriptRegistry::lookup`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Registered {
    /// The script, as frames and sessions name it.
    pub script: ScriptId,
    /// Whether its frames are hidden from pages (muted errors).
    pub hidden: bool,
    /// The realm that compiled it.
    pub realm: RealmId,
}

/// One compiled script: one fetch and one compilation (two fetches of one URL are two
/// scripts, whatever the URL).
#[derive(Debug)]
struct Script {
    url: String,
    /// The realm that compiled it: its frames belong to that realm.
    realm: RealmId,
    source: Arc<str>,
    /// Where the source starts in its resource (1-based; an inline script's text position).
    line: u32,
    column: u32,
    module: bool,
    /// True for frames no page may see: a classic script with muted errors (from an opaque
    /// response).
    hidden: bool,
    functions: OnceLock<Vec<FunctionSpan>>,
}

/// A function of a script: its byte span, name and definition position (`(`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FunctionSpan {
    pub start: u32,
    pub end: u32,
    pub name: String,
    /// Byte offset of the `(` of the parameter list.
    pub def: u32,
}

#[derive(Debug, Default)]
struct Inner {
    /// SpiderMonkey ScriptSource id -> index in `scripts`.
    by_source: FxHashMap<SourceId, u32>,
    scripts: Vec<Arc<Script>>,
}

/// The scripts an event loop compiled, keyed by SpiderMonkey's ScriptSource id (which every
/// captured frame carries), never by URL: a URL fetched twice (once without CORS from
/// another origin, once in another way) is two scripts with their own flags and sources.
/// A source the registry did not compile (code from `eval` or `new Function`, the prelude,
/// self-hosted builtins) is hidden.
#[derive(Debug, Default)]
pub struct ScriptRegistry(RwLock<Inner>);

impl ScriptRegistry {
    pub fn new() -> Arc<Self> {
        Arc::new(ScriptRegistry::default())
    }

    /// The script of a SpiderMonkey source id, whether its frames are hidden from pages, and
    /// the realm that compiled it (`None`: a source the host never registered, such as `eval`
    /// code, whose frames are hidden).
    pub fn lookup(&self, source_id: SourceId) -> Option<Registered> {
        let inner = self.0.read().unwrap_or_else(|e| e.into_inner());
        let &index = inner.by_source.get(&source_id)?;
        let script = &inner.scripts[index as usize];
        Some(Registered {
            script: ScriptId(index),
            hidden: script.hidden,
            realm: script.realm,
        })
    }

    /// Records a script the host compiled (see [`ScriptInfo`]), right after compiling it and
    /// before it runs, so that every frame of it can be named.
    pub fn register(&self, info: &ScriptInfo<'_>) -> ScriptId {
        let mut inner = self.0.write().unwrap_or_else(|e| e.into_inner());
        let index = inner.scripts.len() as u32;
        inner.scripts.push(Arc::new(Script {
            url: info.url.to_owned(),
            realm: info.realm,
            source: info.source.into(),
            line: info.line,
            column: info.column,
            module: info.module,
            hidden: info.muted,
            functions: OnceLock::new(),
        }));
        inner.by_source.insert(info.source_id, index);
        ScriptId(index)
    }

    fn script(&self, id: ScriptId) -> Option<Arc<Script>> {
        let inner = self.0.read().unwrap_or_else(|e| e.into_inner());
        inner.scripts.get(id.0 as usize).cloned()
    }
}

impl Symbolizer for ScriptRegistry {
    fn resource(&self, script: ScriptId) -> Option<String> {
        self.script(script).map(|s| s.url.clone())
    }

    fn resolve(&self, script: ScriptId, line: u32, column: u32) -> Option<ResolvedSite> {
        let s = self.script(script).filter(|s| !s.hidden)?;
        let offset = s.offset_of(line, column)?;
        let functions = s.functions.get_or_init(|| functions(&s.source, s.module));
        let innermost = functions
            .iter()
            .filter(|f| f.start <= offset && offset < f.end)
            .min_by_key(|f| f.end - f.start);
        Some(match innermost {
            Some(f) => s.site_of(f),
            None => s.top_level(),
        })
    }

    fn resolve_definition(&self, script: ScriptId, line: u32, column: u32) -> Option<ResolvedSite> {
        let s = self.script(script).filter(|s| !s.hidden)?;
        let offset = s.offset_of(line, column)?;
        let functions = s.functions.get_or_init(|| functions(&s.source, s.module));
        // The function whose `(` is there (the engine's definition position); failing
        // that, the innermost one around it.
        match functions.iter().find(|f| f.def == offset) {
            Some(f) => Some(s.site_of(f)),
            None => self.resolve(script, line, column),
        }
    }

    fn resolve_top_level(&self, script: ScriptId) -> Option<ResolvedSite> {
        self.script(script)
            .filter(|s| !s.hidden)
            .map(|s| s.top_level())
    }
}

impl Script {
    /// The frame of function `f`: its spec name at its definition position.
    fn site_of(&self, f: &FunctionSpan) -> ResolvedSite {
        let (line, column) = self.position_of(f.def);
        ResolvedSite {
            name: f.name.clone(),
            line,
            column,
        }
    }

    /// The frame of top-level code: '' at the start of the script.
    fn top_level(&self) -> ResolvedSite {
        ResolvedSite {
            name: String::new(),
            line: self.line,
            column: self.column,
        }
    }

    /// The byte offset of a resource position (1-based, column in UTF-16 units).
    fn offset_of(&self, line: u32, column: u32) -> Option<u32> {
        let rel = line.checked_sub(self.line)?;
        let start = if rel == 0 { self.column } else { 1 };
        let col = column.checked_sub(start)? as usize;
        // A line past the script's end is its end.
        let line_start = match rel {
            0 => 0,
            n => line_starts(&self.source)
                .nth(n as usize - 1)
                .unwrap_or(self.source.len()),
        };
        let text = self.source.get(line_start..)?;
        let mut units = 0;
        for (i, ch) in text.char_indices() {
            if units >= col || is_line_terminator(ch) {
                return Some((line_start + i) as u32);
            }
            units += ch.len_utf16();
        }
        Some(self.source.len() as u32)
    }

    /// The resource position (1-based) of a byte offset.
    fn position_of(&self, offset: u32) -> (u32, u32) {
        let offset = offset as usize;
        let (mut rel, mut line_start) = (0u32, 0);
        for start in line_starts(&self.source).take_while(|&s| s <= offset) {
            rel += 1;
            line_start = start;
        }
        let col = self.source[line_start..offset].encode_utf16().count() as u32;
        if rel == 0 {
            (self.line, self.column.saturating_add(col))
        } else {
            (self.line.saturating_add(rel), col + 1)
        }
    }
}

/// ECMAScript's LineTerminator (<https://tc39.es/ecma262/#sec-line-terminators>): how
/// SpiderMonkey counts the lines of a script.
fn is_line_terminator(c: char) -> bool {
    matches!(c, '\n' | '\r' | '\u{2028}' | '\u{2029}')
}

/// The byte offset where each line after the first starts (CR LF is one line break).
fn line_starts(source: &str) -> impl Iterator<Item = usize> + '_ {
    let bytes = source.as_bytes();
    source.char_indices().filter_map(move |(i, c)| match c {
        '\r' if bytes.get(i + 1) == Some(&b'\n') => None,
        c if is_line_terminator(c) => Some(i + c.len_utf8()),
        _ => None,
    })
}

/// Every function of `source`, with its spec name and `(` offset. A source that does not
/// parse yields what the parser recovered.
pub fn functions(source: &str, module: bool) -> Vec<FunctionSpan> {
    let allocator = Allocator::default();
    let source_type = if module {
        SourceType::mjs()
    } else {
        SourceType::script()
    };
    let parsed = oxc_parser::Parser::new(&allocator, source, source_type).parse();
    let mut v = Names::default();
    v.visit_program(&parsed.program);
    v.out
}

#[derive(Default)]
struct Names {
    out: Vec<FunctionSpan>,
    /// The name NamedEvaluation gives the anonymous function about to be visited.
    pending: Option<String>,
    /// Names of the classes being visited (a constructor is named after its class).
    classes: Vec<String>,
}

/// Whether `e` is an anonymous function definition (ECMA-262 IsAnonymousFunctionDefinition).
fn is_anonymous_function(e: &Expression) -> bool {
    match e.without_parentheses() {
        Expression::FunctionExpression(f) => f.id.is_none(),
        Expression::ArrowFunctionExpression(_) => true,
        Expression::ClassExpression(c) => c.id.is_none(),
        _ => false,
    }
}

impl Names {
    fn name_for(&mut self, e: &Expression, name: &str) {
        if is_anonymous_function(e) {
            self.pending = Some(name.to_owned());
        }
    }

    fn push(&mut self, start: u32, end: u32, name: String, def: u32) {
        self.out.push(FunctionSpan {
            start,
            end,
            name,
            def,
        });
    }
}

impl<'a> Visit<'a> for Names {
    fn visit_variable_declarator(&mut self, it: &VariableDeclarator<'a>) {
        if let (Some(id), Some(init)) = (it.id.get_binding_identifier(), &it.init) {
            self.name_for(init, id.name.as_str());
        }
        walk::walk_variable_declarator(self, it);
    }

    fn visit_assignment_expression(&mut self, it: &AssignmentExpression<'a>) {
        // Only `x = function () {}` names the function; `o.x = function () {}` does not.
        if let AssignmentTarget::AssignmentTargetIdentifier(id) = &it.left {
            self.name_for(&it.right, id.name.as_str());
        }
        walk::walk_assignment_expression(self, it);
    }

    fn visit_object_property(&mut self, it: &ObjectProperty<'a>) {
        if let Some(key) = it.key.static_name() {
            let name = match it.kind {
                PropertyKind::Init => key.to_string(),
                PropertyKind::Get => format!("get {key}"),
                PropertyKind::Set => format!("set {key}"),
            };
            self.name_for(&it.value, &name);
        }
        walk::walk_object_property(self, it);
    }

    fn visit_method_definition(&mut self, it: &MethodDefinition<'a>) {
        let key = it
            .key
            .static_name()
            .map(|k| k.to_string())
            .unwrap_or_default();
        self.pending = Some(match it.kind {
            MethodDefinitionKind::Constructor => self.classes.last().cloned().unwrap_or_default(),
            MethodDefinitionKind::Method => key,
            MethodDefinitionKind::Get => format!("get {key}"),
            MethodDefinitionKind::Set => format!("set {key}"),
        });
        walk::walk_method_definition(self, it);
    }

    fn visit_export_default_declaration(&mut self, it: &ExportDefaultDeclaration<'a>) {
        let anonymous = match &it.declaration {
            ExportDefaultDeclarationKind::FunctionDeclaration(f) => f.id.is_none(),
            ExportDefaultDeclarationKind::ClassDeclaration(c) => c.id.is_none(),
            other => other.as_expression().is_some_and(is_anonymous_function),
        };
        if anonymous {
            self.pending = Some("default".into());
        }
        walk::walk_export_default_declaration(self, it);
    }

    fn visit_function(&mut self, it: &Function<'a>, flags: oxc_syntax::scope::ScopeFlags) {
        let pending = self.pending.take();
        let name = match &it.id {
            Some(id) => id.name.to_string(),
            None => pending.unwrap_or_default(),
        };
        self.push(it.span.start, it.span.end, name, it.params.span.start);
        walk::walk_function(self, it, flags);
    }

    fn visit_arrow_function_expression(&mut self, it: &ArrowFunctionExpression<'a>) {
        let name = self.pending.take().unwrap_or_default();
        self.push(it.span.start, it.span.end, name, it.params.span.start);
        walk::walk_arrow_function_expression(self, it);
    }

    fn visit_class(&mut self, it: &Class<'a>) {
        let pending = self.pending.take();
        let name = match &it.id {
            Some(id) => id.name.to_string(),
            None => pending.unwrap_or_default(),
        };
        self.classes.push(name);
        walk::walk_class(self, it);
        self.classes.pop();
    }

    fn visit_expression(&mut self, it: &Expression<'a>) {
        // A pending name belongs only to the anonymous function it was computed for.
        if !is_anonymous_function(it) && !matches!(it, Expression::ParenthesizedExpression(_)) {
            self.pending = None;
        }
        walk::walk_expression(self, it);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A script of realm 1 (the window realm of the tests).
    fn info<'a>(
        source_id: u32,
        url: &'a str,
        source: &'a str,
        (line, column): (u32, u32),
        module: bool,
        muted: bool,
    ) -> ScriptInfo<'a> {
        ScriptInfo {
            source_id: SourceId(source_id),
            realm: RealmId(1),
            url,
            source,
            line,
            column,
            module,
            muted,
        }
    }

    /// The registered script of `source_id`, with its hidden flag.
    fn lookup(reg: &ScriptRegistry, source_id: u32) -> Option<(ScriptId, bool)> {
        reg.lookup(SourceId(source_id))
            .map(|r| (r.script, r.hidden))
    }

    fn names(src: &str) -> Vec<(String, u32)> {
        functions(src, false)
            .into_iter()
            .map(|f| (f.name, f.def))
            .collect()
    }

    #[test]
    fn spec_names_for_every_kind_of_function() {
        let src = r#"
function decl(a) {}
const named = function inner() {};
const anon = function () {};
let arrow = (x) => x;
assigned = function () {};
obj.prop = function () {};
const o = { m() {}, p: function () {}, get x() { return 1; }, set x(v) {}, q: () => {} };
class K { constructor() {} method() {} get g() {} set s(v) {} static st() {} }
const C = class { run() {} };
[1].map(function () {});
[1].map(() => 1);
const wrapped = (function () {});
const called = (function () { return 1; })();
"#;
        let got: Vec<String> = names(src).into_iter().map(|(n, _)| n).collect();
        assert_eq!(
            got,
            [
                "decl", "inner", "anon", "arrow", "assigned", "", "m", "p", "get x", "set x", "q",
                "K", "method", "get g", "set s", "st", "run", "", "", "wrapped", "",
            ]
        );
        let module = functions(
            "export default function () {}\nexport const z = () => {};",
            true,
        );
        assert_eq!(
            module.iter().map(|f| f.name.as_str()).collect::<Vec<_>>(),
            ["default", "z"]
        );
    }

    #[test]
    fn resolution_gives_document_positions() {
        let reg = ScriptRegistry::default();
        // An inline script whose text starts at line 3, column 9 of its document.
        let src = "function f() {\n  return g();\n}\nconst g = () =>\n  1;\nf();";
        reg.register(&info(7, "https://a.test/", src, (3, 9), false, false));
        let (id, hidden) = lookup(&reg, 7).unwrap();
        assert!(!hidden);
        // Its frames belong to the realm that compiled it.
        assert_eq!(reg.lookup(SourceId(7)).unwrap().realm, RealmId(1));
        // Inside f's body (document line 4).
        let r = reg.resolve(id, 4, 5).unwrap();
        assert_eq!((r.name.as_str(), r.line, r.column), ("f", 3, 19));
        // Inside g (document line 7).
        let r = reg.resolve(id, 7, 3).unwrap();
        assert_eq!((r.name.as_str(), r.line, r.column), ("g", 6, 11));
        // Top level: '' at the script's start.
        let r = reg.resolve(id, 8, 1).unwrap();
        assert_eq!((r.name.as_str(), r.line, r.column), ("", 3, 9));
        assert_eq!(reg.resource(id).as_deref(), Some("https://a.test/"));
        // Unknown sources (eval code) are not registered.
        assert!(reg.lookup(SourceId(8)).is_none());
        // By definition position (the `(` the engine reports): f at 3:19, g at 6:11; and
        // the top level.
        let r = reg.resolve_definition(id, 3, 19).unwrap();
        assert_eq!((r.name.as_str(), r.line, r.column), ("f", 3, 19));
        let r = reg.resolve_definition(id, 6, 11).unwrap();
        assert_eq!((r.name.as_str(), r.line, r.column), ("g", 6, 11));
        let r = reg.resolve_top_level(id).unwrap();
        assert_eq!((r.name.as_str(), r.line, r.column), ("", 3, 9));
    }

    #[test]
    fn every_js_line_terminator_counts_as_spidermonkey_counts_it() {
        // CR LF, a lone CR, U+2028 and U+2029 each end a line (an external script: line 1).
        let reg = ScriptRegistry::default();
        let src = "// a\r\n// b\r// c\u{2028}// d\u{2029}function h() {\n  x();\n}";
        reg.register(&info(9, "https://a.test/h.js", src, (1, 1), false, false));
        let (id, _) = lookup(&reg, 9).unwrap();
        let r = reg.resolve(id, 6, 3).unwrap();
        assert_eq!((r.name.as_str(), r.line, r.column), ("h", 5, 11));
        let r = reg.resolve_definition(id, 5, 11).unwrap();
        assert_eq!((r.name.as_str(), r.line, r.column), ("h", 5, 11));
    }

    #[test]
    fn deeply_nested_scripts_resolve_on_a_builder_sized_stack() {
        // 3,000 levels of parentheses around a function: deeper than SpiderMonkey compiles
        // with its 1 MB stack quota, and more than a 2 MB thread lets oxc parse. The trace
        // builder thread has 64 MB (profiler crate, `BUILDER_STACK`).
        let n = 3000;
        let src = format!(
            "var x = {}function deep(a) {{ return a; }}{};",
            "(".repeat(n),
            ")".repeat(n)
        );
        let reg = std::sync::Arc::new(ScriptRegistry::default());
        reg.register(&info(
            1,
            "https://a.test/deep.js",
            &src,
            (1, 1),
            false,
            false,
        ));
        let (id, _) = lookup(&reg, 1).unwrap();
        let column = (n + 23) as u32;
        let r2 = reg.clone();
        let name = std::thread::Builder::new()
            .stack_size(64 << 20)
            .spawn(move || r2.resolve_definition(id, 1, column).map(|r| r.name))
            .unwrap()
            .join()
            .unwrap();
        assert_eq!(name.as_deref(), Some("deep"));
    }

    #[test]
    fn a_definition_names_its_own_function_not_an_enclosing_one() {
        let reg = ScriptRegistry::default();
        // `inner`'s `(` is inside `outer`; a declaration at the very start of the script is
        // not the script's top level.
        let src = "function outer() {\n  function inner(a) { return a; }\n}\nouter();";
        reg.register(&info(1, "https://a.test/s.js", src, (1, 1), false, false));
        let (id, _) = lookup(&reg, 1).unwrap();
        assert_eq!(reg.resolve_definition(id, 2, 17).unwrap().name, "inner");
        assert_eq!(reg.resolve_definition(id, 1, 15).unwrap().name, "outer");
        assert_eq!(reg.resolve_top_level(id).unwrap().name, "");
    }

    #[test]
    fn one_url_fetched_twice_is_two_scripts() {
        // The same URL, once as a visible module and once as a muted classic script with
        // other contents: each source id keeps its own flag and its own text.
        let reg = ScriptRegistry::default();
        let url = "https://b.test/work.js";
        reg.register(&info(
            10,
            url,
            "function visible() {\n  1;\n}",
            (1, 1),
            true,
            false,
        ));
        reg.register(&info(
            11,
            url,
            "function secret() {\n  2;\n}",
            (1, 1),
            false,
            true,
        ));
        let (visible, hidden) = lookup(&reg, 10).unwrap();
        assert!(!hidden);
        assert_eq!(reg.resolve(visible, 2, 3).unwrap().name, "visible");
        let (secret, hidden) = lookup(&reg, 11).unwrap();
        assert!(hidden);
        // A hidden script's text never names anything.
        assert!(reg.resolve(secret, 2, 3).is_none());
    }
}
