//! Symbolizing samples: the registry of a page's scripts, and the resolution of a position in
//! a script to the enclosing function's ECMAScript name and definition position.
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

use std::sync::{Arc, OnceLock, RwLock};

use jsprof_profiler::{ResolvedSite, ScriptId, Symbolizer};
use oxc_allocator::Allocator;
use oxc_ast::ast::{
    ArrowFunctionExpression, AssignmentExpression, AssignmentTarget, Class,
    ExportDefaultDeclaration, ExportDefaultDeclarationKind, Expression, Function, MethodDefinition,
    MethodDefinitionKind, ObjectProperty, PropertyKind, VariableDeclarator,
};
use oxc_ast_visit::{walk, Visit};
use oxc_span::SourceType;
use rustc_hash::FxHashMap;

/// One compiled script.
#[derive(Debug)]
struct Script {
    source: Arc<str>,
    /// Where the source starts in its resource (1-based; an inline script's text position).
    line: u32,
    column: u32,
    module: bool,
    /// Line count, to tell inline scripts of one document apart.
    lines: u32,
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
    urls: Vec<String>,
    ids: FxHashMap<String, u32>,
    hidden: Vec<bool>,
    scripts: FxHashMap<u32, Vec<Arc<Script>>>,
}

/// The scripts of a page, by URL. A URL the registry did not compile (code from `eval` or
/// `new Function`, whose SpiderMonkey file names look like `URL line N > eval`) is hidden.
#[derive(Debug, Default)]
pub struct ScriptRegistry(RwLock<Inner>);

impl ScriptRegistry {
    pub fn new() -> Arc<Self> {
        Arc::new(ScriptRegistry::default())
    }

    /// The id of a URL, and whether its frames are hidden from pages.
    pub fn url_id(&self, url: &str) -> (ScriptId, bool) {
        {
            let inner = self.0.read().expect("registry lock");
            if let Some(&id) = inner.ids.get(url) {
                return (ScriptId(id), inner.hidden[id as usize]);
            }
        }
        let mut inner = self.0.write().expect("registry lock");
        let id = intern(&mut inner, url, true);
        (ScriptId(id), inner.hidden[id as usize])
    }

    /// Records a compiled script. `hidden`: its frames never reach a page (muted errors,
    /// engine code).
    pub fn register(
        &self,
        url: &str,
        source: &str,
        line: u32,
        column: u32,
        module: bool,
        hidden: bool,
    ) {
        let mut inner = self.0.write().expect("registry lock");
        let id = intern(&mut inner, url, hidden) as usize;
        inner.hidden[id] = hidden;
        let script = Arc::new(Script {
            source: source.into(),
            line,
            column,
            module,
            lines: source.matches('\n').count() as u32 + 1,
            functions: OnceLock::new(),
        });
        inner.scripts.entry(id as u32).or_default().push(script);
    }

    /// The script of `url` that contains the resource position (line, column).
    fn script_at(&self, id: ScriptId, line: u32, column: u32) -> Option<Arc<Script>> {
        let inner = self.0.read().expect("registry lock");
        let scripts = inner.scripts.get(&id.0)?;
        scripts
            .iter()
            .rev()
            .find(|s| {
                (line > s.line || (line == s.line && column >= s.column)) && line < s.line + s.lines
            })
            .or(scripts.last().filter(|_| scripts.len() == 1))
            .cloned()
    }
}

fn intern(inner: &mut Inner, url: &str, hidden: bool) -> u32 {
    if let Some(&id) = inner.ids.get(url) {
        return id;
    }
    let id = inner.urls.len() as u32;
    inner.urls.push(url.to_owned());
    inner.hidden.push(hidden);
    inner.ids.insert(url.to_owned(), id);
    id
}

impl Symbolizer for ScriptRegistry {
    fn resource(&self, script: ScriptId) -> Option<String> {
        self.0
            .read()
            .expect("registry lock")
            .urls
            .get(script.0 as usize)
            .cloned()
    }

    fn resolve(&self, script: ScriptId, line: u32, column: u32) -> Option<ResolvedSite> {
        let s = self.script_at(script, line, column)?;
        let offset = s.offset_of(line, column)?;
        let functions = s.functions.get_or_init(|| functions(&s.source, s.module));
        let innermost = functions
            .iter()
            .filter(|f| f.start <= offset && offset < f.end)
            .min_by_key(|f| f.end - f.start);
        Some(match innermost {
            Some(f) => {
                let (line, column) = s.position_of(f.def);
                ResolvedSite {
                    name: f.name.clone(),
                    line,
                    column,
                }
            }
            // Top-level code: a frame named '' at the start of its script.
            None => ResolvedSite {
                name: String::new(),
                line: s.line,
                column: s.column,
            },
        })
    }
}

impl Script {
    /// The byte offset of a resource position (1-based, column in UTF-16 units).
    fn offset_of(&self, line: u32, column: u32) -> Option<u32> {
        let rel = line.checked_sub(self.line)?;
        let start = if rel == 0 { self.column } else { 1 };
        let col = column.checked_sub(start)? as usize;
        let line_start = self
            .source
            .split_inclusive('\n')
            .take(rel as usize)
            .map(str::len)
            .sum::<usize>();
        let text = self.source.get(line_start..)?;
        let mut units = 0;
        for (i, ch) in text.char_indices() {
            if units >= col || ch == '\n' {
                return Some((line_start + i) as u32);
            }
            units += ch.len_utf16();
        }
        Some(self.source.len() as u32)
    }

    /// The resource position (1-based) of a byte offset.
    fn position_of(&self, offset: u32) -> (u32, u32) {
        let before = &self.source[..offset as usize];
        let rel = before.matches('\n').count() as u32;
        let line_start = before.rfind('\n').map_or(0, |p| p + 1);
        let col = before[line_start..].encode_utf16().count() as u32;
        if rel == 0 {
            (self.line, self.column + col)
        } else {
            (self.line + rel, col + 1)
        }
    }
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
        reg.register("https://a.test/", src, 3, 9, false, false);
        let (id, hidden) = reg.url_id("https://a.test/");
        assert!(!hidden);
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
        // Unknown sources (eval code) are hidden.
        assert!(reg.url_id("https://a.test/ line 3 > eval").1);
    }
}
