//! The prelude lint: no path a page can reach runs a built-in the page may have replaced.
//!
//! The prelude (`components/script/src/prelude/*.js`) is the DOM in JavaScript, evaluated
//! in each realm before any page script. A page may then replace any built-in
//! (`Array.prototype.push`, `Map.prototype.get`, `Promise.prototype.then`, the iterators…),
//! plant getters and setters on `Object.prototype` and `Array.prototype`, or give a
//! prototype a `constructor` or `Symbol.species` getter. Code of the prelude that runs after
//! that (every function: methods the page calls, hooks the engine calls) must reach none
//! of it. [`lint`] parses the joined prelude with oxc and reports, with file, line and
//! rule, every construct in a function that could; code that runs only while the prelude
//! itself is evaluated (the statements of its outermost function) runs before any page
//! script and is exempt. The rules ([`Rule`]):
//!
//! | rule | what is reported (inside a function) | why |
//! |---|---|---|
//! | `global` | an identifier bound nowhere in the prelude (a global), but `undefined`, `NaN`, `Infinity` | a page replaces globals; capture them in `00-primordials.js` |
//! | `method-call` | a call of a member, `a.b()`, `a[b]()`, `a?.b()`, `` a.b`…` ``, except on `host` and `#private` methods | the method is looked up on a prototype the page can change |
//! | `super` | `super(…)`, `super.x` | they ask a class (or prototype) for its prototype, which the page can change |
//! | `this-member` | `this.x` | the prototype chain of `this` is the page's to change: state lives in WeakMaps or native slots |
//! | `protocol-read` | reading a member named like a built-in accessor (`size`, `byteLength`, `source`, `__proto__`, …) or a protocol method (`then`, `constructor`, `next`, `toString`, `call`, …), by `.`, `["…"]` or destructuring, or keyed by a well-known symbol primordial (`x[SymbolIterator]`) | a getter the page replaced, or the first step of a protocol it controls |
//! | `iteration` | for-of, for-in, spread (array, call, `new`, object), array destructuring (bindings and assignments) | Array.prototype\[Symbol.iterator\], %ArrayIteratorPrototype%.next, inherited enumerable keys |
//! | `async` | async functions, `await`, generators, `yield` | `await` and async returns look up `then` and `constructor`; generator objects step through %GeneratorPrototype%.next |
//! | `instanceof` | `a instanceof B` | Symbol.hasInstance, and a Proxy's getPrototypeOf trap |
//! | `in` | `k in o` (not `#x in o`) | a Proxy's has trap, and keys planted on prototypes |
//! | `object-literal` | an object literal without `__proto__: null` | reading or writing a key it lacks reaches Object.prototype |
//! | `collection-init` | `new MapCtor(x)` (Map, Set, WeakMap, WeakSet) with arguments | the constructor iterates its argument and calls `set`/`add` |
//! | `unsafe-capture` | capturing a built-in that itself looks up what a page can replace (`Array.from`, species methods, `Promise.prototype.then`, `String.prototype.replace`/`split`/`match`, `RegExp.prototype.test`, …), anywhere | calling it later runs the page's code however it is called |
//!
//! A finding the spec mandates (reading an iterable's `next`, a value's `toJSON`) is
//! allowed by a comment on its line, or alone on the line above, that names the rule and
//! says why: `// prelude-lint: allow(protocol-read) GetIteratorFromMethod reads next`. An
//! allowance that allows nothing, or gives no reason, is itself a finding (`allow`).
//!
//! What the lint cannot see: the types of values. A property read or write on a value whose
//! prototype is the page's (`x.missing`, `list[i] = v` on an ordinary array) is only safe
//! if the value is the engine's own null-prototype record or list; a template literal or
//! `+` of a page object runs its `toString`. Those are the code's own discipline
//! (`00-primordials.js` says how), and the replaced-built-ins pages
//! (`tests/pages/builtins/`) check them at run time.
//!
//! A development tool, in a crate of its own that nothing links: `./mach lint` and
//! `./mach test` run it (`tests/prelude_lint.rs`, on the real prelude), and the engine, or
//! a Servo that takes jsprof's crates, never compiles it.

#![forbid(unsafe_code)]

use std::fmt;

use oxc_allocator::Allocator;
use oxc_ast::ast::*;
use oxc_ast_visit::{walk, Visit};
use oxc_span::{SourceType, Span};
use oxc_syntax::operator::BinaryOperator;
use oxc_syntax::scope::ScopeFlags;
use rustc_hash::FxHashSet;

/// What a finding breaks (see the module's table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Rule {
    Global,
    MethodCall,
    Super,
    ThisMember,
    ProtocolRead,
    Iteration,
    Async,
    Instanceof,
    In,
    ObjectLiteral,
    CollectionInit,
    UnsafeCapture,
    /// An allowance comment that allows nothing, names no rule, or gives no reason.
    Allow,
    /// The prelude does not parse.
    Syntax,
}

impl Rule {
    /// Every rule a comment may allow.
    pub const ALLOWABLE: [Rule; 12] = [
        Rule::Global,
        Rule::MethodCall,
        Rule::Super,
        Rule::ThisMember,
        Rule::ProtocolRead,
        Rule::Iteration,
        Rule::Async,
        Rule::Instanceof,
        Rule::In,
        Rule::ObjectLiteral,
        Rule::CollectionInit,
        Rule::UnsafeCapture,
    ];

    /// The rule's name, as findings and allowances spell it.
    pub fn name(self) -> &'static str {
        match self {
            Rule::Global => "global",
            Rule::MethodCall => "method-call",
            Rule::Super => "super",
            Rule::ThisMember => "this-member",
            Rule::ProtocolRead => "protocol-read",
            Rule::Iteration => "iteration",
            Rule::Async => "async",
            Rule::Instanceof => "instanceof",
            Rule::In => "in",
            Rule::ObjectLiteral => "object-literal",
            Rule::CollectionInit => "collection-init",
            Rule::UnsafeCapture => "unsafe-capture",
            Rule::Allow => "allow",
            Rule::Syntax => "syntax",
        }
    }

    fn from_name(name: &str) -> Option<Rule> {
        Rule::ALLOWABLE.into_iter().find(|r| r.name() == name)
    }
}

/// One reported construct: where, which rule, and what it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The prelude file (its name as given to [`lint`]).
    pub file: String,
    /// 1-based.
    pub line: usize,
    /// 1-based, in characters.
    pub column: usize,
    pub rule: Rule,
    pub message: String,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}: {}",
            self.file,
            self.line,
            self.column,
            self.rule.name(),
            self.message
        )
    }
}

/// What [`lint`] found.
#[derive(Debug, Default)]
pub struct Report {
    /// Findings no comment allows, in source order.
    pub findings: Vec<Finding>,
    /// Findings an allowance comment allows, with its reason.
    pub allowed: Vec<(Finding, String)>,
    /// Functions checked (every function, method, accessor and arrow below the prelude's
    /// own).
    pub functions: usize,
}

/// Globals every function may read: non-writable, non-configurable properties of the
/// global object.
const ALWAYS_BOUND: [&str; 3] = ["undefined", "NaN", "Infinity"];

/// The objects whose members may be called: the engine's namespace.
const NAMESPACES: [&str; 1] = ["host"];

/// Accessors of the standard built-ins' constructors and prototypes (whose getters a page
/// can replace), and the members protocols look up (`length`, an own data property of
/// arrays, strings and lists, is left out: a typed array's is read with its getter
/// primordial).
const PROTOCOL_NAMES: [&str; 38] = [
    // accessors
    "__proto__",
    "arguments",
    "buffer",
    "byteLength",
    "byteOffset",
    "caller",
    "description",
    "detached",
    "dotAll",
    "flags",
    "global",
    "growable",
    "hasIndices",
    "ignoreCase",
    "maxByteLength",
    "multiline",
    "resizable",
    "size",
    "source",
    "stack",
    "sticky",
    "unicode",
    "unicodeSets",
    // protocols
    "apply",
    "bind",
    "call",
    "catch",
    "constructor",
    "exec",
    "finally",
    "next",
    "return",
    "then",
    "throw",
    "toJSON",
    "toLocaleString",
    "toString",
    "valueOf",
];

/// Built-ins that, however they are called, look up something a page can replace: species
/// constructors, iterators, `then`, Symbol.replace & co., RegExp.prototype.exec,
/// Symbol.toStringTag.
const UNSAFE_CAPTURES: [&str; 37] = [
    "Array.from",
    "Array.prototype.concat",
    "Array.prototype.filter",
    "Array.prototype.flat",
    "Array.prototype.flatMap",
    "Array.prototype.map",
    "Array.prototype.slice",
    "Array.prototype.splice",
    "Array.prototype.toLocaleString",
    "Array.prototype.toString",
    "ArrayBuffer.prototype.slice",
    "Map.groupBy",
    "Object.fromEntries",
    "Object.groupBy",
    "Object.prototype.toLocaleString",
    "Object.prototype.toString",
    "Promise.all",
    "Promise.allSettled",
    "Promise.any",
    "Promise.race",
    "Promise.resolve",
    "Promise.prototype.catch",
    "Promise.prototype.finally",
    "Promise.prototype.then",
    "RegExp.prototype.test",
    "RegExp.prototype.toString",
    "RegExp.prototype[Symbol.match]",
    "RegExp.prototype[Symbol.matchAll]",
    "RegExp.prototype[Symbol.replace]",
    "RegExp.prototype[Symbol.search]",
    "RegExp.prototype[Symbol.split]",
    "String.prototype.match",
    "String.prototype.matchAll",
    "String.prototype.replace",
    "String.prototype.replaceAll",
    "String.prototype.search",
    "String.prototype.split",
];

/// The collection constructors whose arguments are iterated (their primordials too).
const COLLECTIONS: [&str; 8] = [
    "Map",
    "Set",
    "WeakMap",
    "WeakSet",
    "MapCtor",
    "SetCtor",
    "WeakMapCtor",
    "WeakSetCtor",
];

/// Lints the prelude made of `files` (name, text), joined in this order as the engine
/// joins them.
pub fn lint(files: &[(&str, &str)]) -> Report {
    let mut joined = String::new();
    let mut starts = Vec::with_capacity(files.len());
    for (_, text) in files {
        starts.push(joined.len());
        joined.push_str(text);
    }
    let positions = Positions { files, starts };
    let mut report = Report::default();
    let allocator = Allocator::default();
    let parsed = oxc_parser::Parser::new(&allocator, &joined, SourceType::script()).parse();
    for error in parsed.diagnostics.errors() {
        let offset = error.labels.first().map_or(0, |l| l.offset() as usize);
        report
            .findings
            .push(positions.finding(offset, Rule::Syntax, error.message.to_string()));
    }
    if parsed.panicked || parsed.diagnostics.has_errors() {
        return report;
    }
    let mut linter = Linter {
        source: &joined,
        depth: 0,
        scopes: Vec::new(),
        raw: Vec::new(),
        calls: FxHashSet::default(),
        functions: 0,
    };
    linter.visit_program(&parsed.program);
    report.functions = linter.functions.saturating_sub(1);
    let mut allowances = positions.allowances();
    let mut raw = linter.raw;
    raw.sort_by_key(|(offset, rule, _)| (*offset, *rule));
    raw.dedup_by_key(|(offset, rule, _)| (*offset, *rule));
    for (offset, rule, message) in raw {
        let finding = positions.finding(offset as usize, rule, message);
        let allowance = allowances.iter_mut().find(|a| {
            a.file == finding.file && a.lines.contains(&finding.line) && a.rules.contains(&rule)
        });
        match allowance {
            Some(a) if !a.reason.is_empty() => {
                a.used = true;
                report.allowed.push((finding, a.reason.clone()));
            }
            _ => report.findings.push(finding),
        }
    }
    for a in allowances {
        let problem = if a.rules.is_empty() {
            Some("an allowance that names no rule this lint has")
        } else if a.reason.is_empty() {
            Some("an allowance without a reason")
        } else if !a.used {
            Some("an allowance that allows nothing")
        } else {
            None
        };
        if let Some(problem) = problem {
            report.findings.push(Finding {
                file: a.file.clone(),
                line: a.comment_line,
                column: 1,
                rule: Rule::Allow,
                message: problem.into(),
            });
        }
    }
    report
        .findings
        .sort_by(|a, b| (&a.file, a.line, a.column).cmp(&(&b.file, b.line, b.column)));
    report
}

/// Offsets of the joined source to file, line and column.
struct Positions<'f> {
    files: &'f [(&'f str, &'f str)],
    starts: Vec<usize>,
}

/// A `prelude-lint: allow(…)` comment.
struct Allowance {
    file: String,
    comment_line: usize,
    /// The lines it covers: its own, and the next when it stands alone.
    lines: Vec<usize>,
    rules: Vec<Rule>,
    reason: String,
    used: bool,
}

const ALLOW_MARK: &str = "prelude-lint: allow(";

impl Positions<'_> {
    fn finding(&self, offset: usize, rule: Rule, message: String) -> Finding {
        let i = self.starts.partition_point(|&s| s <= offset).max(1) - 1;
        let (file, text) = self.files[i];
        let local = (offset - self.starts[i]).min(text.len());
        let before = &text[..local];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |p| p + 1);
        let column = before[line_start..].chars().count() + 1;
        Finding {
            file: file.to_owned(),
            line,
            column,
            rule,
            message,
        }
    }

    fn allowances(&self) -> Vec<Allowance> {
        let mut out = Vec::new();
        for (file, text) in self.files {
            for (i, line) in text.lines().enumerate() {
                let Some(at) = line.find(ALLOW_MARK) else {
                    continue;
                };
                let Some(comment) = line[..at].rfind("//") else {
                    continue;
                };
                let rest = &line[at + ALLOW_MARK.len()..];
                let (names, reason) = rest.split_once(')').unwrap_or((rest, ""));
                let rules: Vec<Rule> = names
                    .split(',')
                    .filter_map(|n| Rule::from_name(n.trim()))
                    .collect();
                let alone = line[..comment].trim().is_empty();
                let lines = if alone {
                    vec![i + 1, i + 2]
                } else {
                    vec![i + 1]
                };
                out.push(Allowance {
                    file: (*file).to_owned(),
                    comment_line: i + 1,
                    lines,
                    rules,
                    reason: reason.trim().to_owned(),
                    used: false,
                });
            }
        }
        out
    }
}

struct Linter<'s> {
    source: &'s str,
    /// Function nesting: 1 inside the prelude's own function, more inside its functions.
    depth: u32,
    /// The names each enclosing scope binds, innermost last.
    scopes: Vec<FxHashSet<String>>,
    /// (offset, rule, message) of every finding.
    raw: Vec<(u32, Rule, String)>,
    /// Callees already reported as a call (their member is not reported again).
    calls: FxHashSet<u32>,
    functions: usize,
}

impl<'s> Linter<'s> {
    /// Whether code here runs after page script may have (inside a function of the
    /// prelude's).
    fn runtime(&self) -> bool {
        self.depth >= 2
    }

    fn report(&mut self, span: Span, rule: Rule, message: impl Into<String>) {
        self.raw.push((span.start, rule, message.into()));
    }

    fn report_runtime(&mut self, span: Span, rule: Rule, message: impl Into<String>) {
        if self.runtime() {
            self.report(span, rule, message);
        }
    }

    fn text(&self, span: Span) -> String {
        self.source[span.start as usize..span.end as usize]
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect()
    }

    fn bound(&self, name: &str) -> bool {
        ALWAYS_BOUND.contains(&name) || self.scopes.iter().rev().any(|s| s.contains(name))
    }

    fn with_scope(&mut self, names: Vec<String>, f: impl FnOnce(&mut Self)) {
        self.scopes.push(names.into_iter().collect());
        f(self);
        self.scopes.pop();
    }

    fn in_function(&mut self, names: Vec<String>, f: impl FnOnce(&mut Self)) {
        self.depth += 1;
        self.functions += 1;
        self.with_scope(names, f);
        self.depth -= 1;
    }

    /// A member call's callee: reported unless it is `host.x` or a private method.
    fn check_callee(&mut self, callee: &Expression, what: &str) {
        let (object, span) = match callee.without_parentheses() {
            Expression::StaticMemberExpression(m) => (&m.object, m.span),
            Expression::ComputedMemberExpression(m) => (&m.object, m.span),
            Expression::Super(s) => {
                self.report_runtime(
                    s.span,
                    Rule::Super,
                    "super(…) asks the class for its prototype",
                );
                return;
            }
            _ => return,
        };
        self.calls.insert(span.start);
        match object.without_parentheses() {
            Expression::Identifier(id) if NAMESPACES.contains(&id.name.as_str()) => {}
            Expression::Super(_) => self.report_runtime(
                span,
                Rule::Super,
                format!("{what} `{}` of super", self.text(span)),
            ),
            _ => self.report_runtime(
                span,
                Rule::MethodCall,
                format!(
                    "{what} `{}(…)` is looked up on its receiver",
                    self.text(span)
                ),
            ),
        }
    }

    /// A member read `object[key]`; `protocol` names the key if it is a protocol's (see
    /// [`PROTOCOL_NAMES`]).
    fn check_member(&mut self, span: Span, object: &Expression, protocol: Option<String>) {
        if !self.runtime() || self.calls.contains(&span.start) {
            return;
        }
        match object.without_parentheses() {
            Expression::ThisExpression(_) => {
                self.report(
                    span,
                    Rule::ThisMember,
                    format!("`{}` goes through this's prototype chain", self.text(span)),
                );
                return;
            }
            Expression::Super(_) => {
                self.report(
                    span,
                    Rule::Super,
                    format!("`{}` reads super", self.text(span)),
                );
                return;
            }
            Expression::Identifier(id) if NAMESPACES.contains(&id.name.as_str()) => return,
            _ => {}
        }
        if let Some(key) = protocol {
            self.report(
                span,
                Rule::ProtocolRead,
                format!(
                    "`{}` reads {key}, which a page can replace",
                    self.text(span)
                ),
            );
        }
    }
}

/// `name` as a protocol key (for [`Linter::check_member`]), if it is one.
fn protocol_name(name: &str) -> Option<String> {
    PROTOCOL_NAMES.contains(&name).then(|| format!("`{name}`"))
}

/// The names a binding pattern binds.
fn pattern_names(p: &BindingPattern, out: &mut Vec<String>) {
    match p {
        BindingPattern::BindingIdentifier(id) => out.push(id.name.to_string()),
        BindingPattern::ObjectPattern(o) => {
            for prop in &o.properties {
                pattern_names(&prop.value, out);
            }
            if let Some(rest) = &o.rest {
                pattern_names(&rest.argument, out);
            }
        }
        BindingPattern::ArrayPattern(a) => {
            for e in a.elements.iter().flatten() {
                pattern_names(e, out);
            }
            if let Some(rest) = &a.rest {
                pattern_names(&rest.argument, out);
            }
        }
        BindingPattern::AssignmentPattern(a) => pattern_names(&a.left, out),
    }
}

fn params_names(params: &FormalParameters, out: &mut Vec<String>) {
    for item in &params.items {
        pattern_names(&item.pattern, out);
    }
    if let Some(rest) = &params.rest {
        pattern_names(&rest.rest.argument, out);
    }
}

/// The names a statement list declares lexically at its own level (let, const, class and
/// function declarations: strict code, so functions in blocks are block-scoped).
fn lexical_names(statements: &[Statement], out: &mut Vec<String>) {
    for s in statements {
        match s {
            Statement::VariableDeclaration(d) => {
                for decl in &d.declarations {
                    pattern_names(&decl.id, out);
                }
            }
            Statement::FunctionDeclaration(f) => {
                out.extend(f.id.as_ref().map(|i| i.name.to_string()))
            }
            Statement::ClassDeclaration(c) => out.extend(c.id.as_ref().map(|i| i.name.to_string())),
            _ => {}
        }
    }
}

/// The `var` names of a function body (hoisted out of its blocks, not out of nested
/// functions).
#[derive(Default)]
struct VarNames(Vec<String>);

impl<'a> Visit<'a> for VarNames {
    fn visit_variable_declaration(&mut self, it: &VariableDeclaration<'a>) {
        if it.kind == VariableDeclarationKind::Var {
            for decl in &it.declarations {
                pattern_names(&decl.id, &mut self.0);
            }
        }
    }
    fn visit_function(&mut self, _: &Function<'a>, _: ScopeFlags) {}
    fn visit_arrow_function_expression(&mut self, _: &ArrowFunctionExpression<'a>) {}
    fn visit_class(&mut self, _: &Class<'a>) {}
}

fn body_names(statements: &[Statement], out: &mut Vec<String>) {
    lexical_names(statements, out);
    let mut vars = VarNames::default();
    for s in statements {
        vars.visit_statement(s);
    }
    out.extend(vars.0);
}

/// Whether an object literal has `__proto__: null`.
fn has_null_proto(o: &ObjectExpression) -> bool {
    o.properties.iter().any(|p| match p {
        ObjectPropertyKind::ObjectProperty(p) => {
            !p.computed
                && !p.shorthand
                && !p.method
                && p.kind == PropertyKind::Init
                && p.key.static_name().is_some_and(|k| k == "__proto__")
                && matches!(p.value.without_parentheses(), Expression::NullLiteral(_))
        }
        ObjectPropertyKind::SpreadProperty(_) => false,
    })
}

impl<'a> Visit<'a> for Linter<'_> {
    fn visit_program(&mut self, it: &Program<'a>) {
        let mut names = Vec::new();
        body_names(&it.body, &mut names);
        self.with_scope(names, |v| walk::walk_program(v, it));
    }

    fn visit_function(&mut self, it: &Function<'a>, flags: ScopeFlags) {
        let mut names = vec!["arguments".to_owned()];
        if it.r#type == FunctionType::FunctionExpression {
            names.extend(it.id.as_ref().map(|i| i.name.to_string()));
        }
        params_names(&it.params, &mut names);
        if let Some(body) = &it.body {
            body_names(&body.statements, &mut names);
        }
        self.in_function(names, |v| {
            if it.r#async {
                v.report_runtime(it.span, Rule::Async, "an async function");
            }
            if it.generator {
                v.report_runtime(it.span, Rule::Async, "a generator");
            }
            walk::walk_function(v, it, flags);
        });
    }

    fn visit_arrow_function_expression(&mut self, it: &ArrowFunctionExpression<'a>) {
        let mut names = Vec::new();
        params_names(&it.params, &mut names);
        if let ArrowFunctionBody::FunctionBody(body) = &it.body {
            body_names(&body.statements, &mut names);
        }
        self.in_function(names, |v| {
            if it.r#async {
                v.report_runtime(it.span, Rule::Async, "an async arrow function");
            }
            walk::walk_arrow_function_expression(v, it);
        });
    }

    fn visit_class(&mut self, it: &Class<'a>) {
        let mut names = Vec::new();
        if it.r#type == ClassType::ClassExpression {
            names.extend(it.id.as_ref().map(|i| i.name.to_string()));
        }
        self.with_scope(names, |v| walk::walk_class(v, it));
    }

    fn visit_static_block(&mut self, it: &StaticBlock<'a>) {
        let mut names = Vec::new();
        body_names(&it.body, &mut names);
        self.in_function(names, |v| walk::walk_static_block(v, it));
    }

    fn visit_property_definition(&mut self, it: &PropertyDefinition<'a>) {
        // A class field's initializer runs at construction.
        self.in_function(Vec::new(), |v| walk::walk_property_definition(v, it));
    }

    fn visit_block_statement(&mut self, it: &BlockStatement<'a>) {
        let mut names = Vec::new();
        lexical_names(&it.body, &mut names);
        self.with_scope(names, |v| walk::walk_block_statement(v, it));
    }

    fn visit_switch_statement(&mut self, it: &SwitchStatement<'a>) {
        let mut names = Vec::new();
        for case in &it.cases {
            lexical_names(&case.consequent, &mut names);
        }
        self.with_scope(names, |v| walk::walk_switch_statement(v, it));
    }

    fn visit_for_statement(&mut self, it: &ForStatement<'a>) {
        let mut names = Vec::new();
        if let Some(ForStatementInit::VariableDeclaration(d)) = &it.init {
            for decl in &d.declarations {
                pattern_names(&decl.id, &mut names);
            }
        }
        self.with_scope(names, |v| walk::walk_for_statement(v, it));
    }

    fn visit_for_in_statement(&mut self, it: &ForInStatement<'a>) {
        self.report_runtime(
            it.span,
            Rule::Iteration,
            "for…in walks the prototype chain's enumerable keys",
        );
        let mut names = Vec::new();
        if let ForStatementLeft::VariableDeclaration(d) = &it.left {
            for decl in &d.declarations {
                pattern_names(&decl.id, &mut names);
            }
        }
        self.with_scope(names, |v| walk::walk_for_in_statement(v, it));
    }

    fn visit_for_of_statement(&mut self, it: &ForOfStatement<'a>) {
        self.report_runtime(
            it.span,
            Rule::Iteration,
            "for…of runs the iterator protocol",
        );
        let mut names = Vec::new();
        if let ForStatementLeft::VariableDeclaration(d) = &it.left {
            for decl in &d.declarations {
                pattern_names(&decl.id, &mut names);
            }
        }
        self.with_scope(names, |v| walk::walk_for_of_statement(v, it));
    }

    fn visit_catch_clause(&mut self, it: &CatchClause<'a>) {
        let mut names = Vec::new();
        if let Some(param) = &it.param {
            pattern_names(&param.pattern, &mut names);
        }
        self.with_scope(names, |v| walk::walk_catch_clause(v, it));
    }

    fn visit_identifier_reference(&mut self, it: &IdentifierReference<'a>) {
        if self.runtime() && !self.bound(&it.name) {
            let name = it.name.to_string();
            self.report(
                it.span,
                Rule::Global,
                format!("`{name}` is read from the global object, which the page controls"),
            );
        }
    }

    fn visit_call_expression(&mut self, it: &CallExpression<'a>) {
        self.check_callee(&it.callee, "the method");
        walk::walk_call_expression(self, it);
    }

    fn visit_tagged_template_expression(&mut self, it: &TaggedTemplateExpression<'a>) {
        self.check_callee(&it.tag, "the tag");
        walk::walk_tagged_template_expression(self, it);
    }

    fn visit_new_expression(&mut self, it: &NewExpression<'a>) {
        if let Expression::Identifier(id) = it.callee.without_parentheses() {
            if COLLECTIONS.contains(&id.name.as_str()) && !it.arguments.is_empty() {
                self.report_runtime(
                    it.span,
                    Rule::CollectionInit,
                    format!("new {}(…) iterates its argument and calls add/set", id.name),
                );
            }
        }
        walk::walk_new_expression(self, it);
    }

    fn visit_static_member_expression(&mut self, it: &StaticMemberExpression<'a>) {
        let path = self.text(it.span);
        if UNSAFE_CAPTURES.contains(&path.as_str()) {
            self.report(
                it.span,
                Rule::UnsafeCapture,
                format!("{path} looks up what a page can replace, however it is called"),
            );
        }
        self.check_member(it.span, &it.object, protocol_name(&it.property.name));
        walk::walk_static_member_expression(self, it);
    }

    fn visit_computed_member_expression(&mut self, it: &ComputedMemberExpression<'a>) {
        let path = self.text(it.span);
        if UNSAFE_CAPTURES.contains(&path.as_str()) {
            self.report(
                it.span,
                Rule::UnsafeCapture,
                format!("{path} looks up what a page can replace, however it is called"),
            );
        }
        let protocol = match it.expression.without_parentheses() {
            Expression::StringLiteral(s) => protocol_name(&s.value),
            // A well-known symbol's primordial (SymbolIterator, SymbolToPrimitive, …).
            Expression::Identifier(id)
                if id.name.len() > 6
                    && id.name.starts_with("Symbol")
                    && id.name[6..].starts_with(|c: char| c.is_ascii_uppercase()) =>
            {
                Some(format!("the protocol method {}", id.name))
            }
            _ => None,
        };
        self.check_member(it.span, &it.object, protocol);
        walk::walk_computed_member_expression(self, it);
    }

    fn visit_binding_property(&mut self, it: &BindingProperty<'a>) {
        // `const { then } = x` reads `then` as `x.then` does.
        if let Some(name) = it.key.static_name().filter(|_| !it.computed) {
            if let Some(key) = protocol_name(&name) {
                self.report_runtime(
                    it.span,
                    Rule::ProtocolRead,
                    format!("destructuring reads {key}"),
                );
            }
        }
        walk::walk_binding_property(self, it);
    }

    fn visit_assignment_target_property_property(
        &mut self,
        it: &AssignmentTargetPropertyProperty<'a>,
    ) {
        if let Some(name) = it.name.static_name().filter(|_| !it.computed) {
            if let Some(key) = protocol_name(&name) {
                self.report_runtime(
                    it.span,
                    Rule::ProtocolRead,
                    format!("destructuring reads {key}"),
                );
            }
        }
        walk::walk_assignment_target_property_property(self, it);
    }

    fn visit_assignment_target_property_identifier(
        &mut self,
        it: &AssignmentTargetPropertyIdentifier<'a>,
    ) {
        if let Some(key) = protocol_name(&it.binding.name) {
            self.report_runtime(
                it.span,
                Rule::ProtocolRead,
                format!("destructuring reads {key}"),
            );
        }
        walk::walk_assignment_target_property_identifier(self, it);
    }

    fn visit_spread_element(&mut self, it: &SpreadElement<'a>) {
        self.report_runtime(
            it.span,
            Rule::Iteration,
            "a spread runs the iterator protocol (or reads every key)",
        );
        walk::walk_spread_element(self, it);
    }

    fn visit_array_pattern(&mut self, it: &ArrayPattern<'a>) {
        self.report_runtime(
            it.span,
            Rule::Iteration,
            "array destructuring runs the iterator protocol",
        );
        walk::walk_array_pattern(self, it);
    }

    fn visit_array_assignment_target(&mut self, it: &ArrayAssignmentTarget<'a>) {
        self.report_runtime(
            it.span,
            Rule::Iteration,
            "array destructuring runs the iterator protocol",
        );
        walk::walk_array_assignment_target(self, it);
    }

    fn visit_await_expression(&mut self, it: &AwaitExpression<'a>) {
        self.report_runtime(
            it.span,
            Rule::Async,
            "await looks up `then` and `constructor`",
        );
        walk::walk_await_expression(self, it);
    }

    fn visit_yield_expression(&mut self, it: &YieldExpression<'a>) {
        self.report_runtime(it.span, Rule::Async, "yield (a generator)");
        walk::walk_yield_expression(self, it);
    }

    fn visit_binary_expression(&mut self, it: &BinaryExpression<'a>) {
        match it.operator {
            BinaryOperator::Instanceof => self.report_runtime(
                it.span,
                Rule::Instanceof,
                "instanceof asks Symbol.hasInstance (and a Proxy's getPrototypeOf)",
            ),
            BinaryOperator::In => self.report_runtime(
                it.span,
                Rule::In,
                "`in` asks a Proxy's has trap and finds keys planted on prototypes",
            ),
            _ => {}
        }
        walk::walk_binary_expression(self, it);
    }

    fn visit_object_expression(&mut self, it: &ObjectExpression<'a>) {
        if !has_null_proto(it) {
            self.report_runtime(
                it.span,
                Rule::ObjectLiteral,
                "an object literal without `__proto__: null` (missing keys reach Object.prototype)",
            );
        }
        walk::walk_object_expression(self, it);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The findings (rule, line within `body`) of `body` as the body of a function inside a
    /// prelude-like function expression, which binds `host`, `global` and `init` and
    /// captures `MapCtor`, `ReflectApply` and `SymbolIterator` at its top level.
    fn findings(body: &str) -> Vec<(Rule, usize)> {
        let source = format!(
            "(function (host, global, init) {{\n  const MapCtor = Map, ReflectApply = Reflect.apply, SymbolIterator = Symbol.iterator;\n  function f(a, b) {{\n{body}\n  }}\n}})\n"
        );
        lint(&[("t.js", &source)])
            .findings
            .into_iter()
            .map(|f| (f.rule, f.line - 3))
            .collect()
    }

    fn rules(body: &str) -> Vec<Rule> {
        findings(body).into_iter().map(|(r, _)| r).collect()
    }

    #[test]
    fn globals_are_read_only_before_page_script() {
        assert_eq!(
            rules("return Object.keys(a);"),
            [Rule::Global, Rule::MethodCall]
        );
        assert_eq!(rules("return new Map();"), [Rule::Global]);
        assert_eq!(findings("const x = 1;\nreturn y + x;"), [(Rule::Global, 2)]);
        assert_eq!(rules("return new MapCtor();"), []);
        assert_eq!(rules("return a === undefined || NaN !== Infinity;"), []);
        // Bound names: parameters, locals, closures, catch and loop bindings, arguments.
        assert_eq!(
            rules("const x = 1; let y; for (let i = 0; i < 2; i++) y = i; try { y(); } catch (e) { return e + x + arguments.length; }"),
            []
        );
        assert_eq!(
            rules("function g() { return h; } function h() { return g; }"),
            []
        );
        assert_eq!(rules("{ const inner = 1; } return inner;"), [Rule::Global]);
        // The outer function's own top level may read globals (it runs before any page).
        let top = lint(&[("t.js", "(function () { const M = Map; return () => M; })")]);
        assert!(top.findings.is_empty(), "{:?}", top.findings);
        let late = lint(&[("t.js", "(function () { return () => Map; })")]);
        assert_eq!(late.findings.len(), 1);
        assert_eq!(late.findings[0].rule, Rule::Global);
        assert_eq!((late.findings[0].line, late.findings[0].column), (1, 29));
    }

    #[test]
    fn member_calls_are_reported_except_on_host() {
        assert_eq!(rules("a.push(b);"), [Rule::MethodCall]);
        assert_eq!(rules("a[b](1);"), [Rule::MethodCall]);
        assert_eq!(rules("a?.f();"), [Rule::MethodCall]);
        assert_eq!(rules("(a.f)();"), [Rule::MethodCall]);
        assert_eq!(rules("a.tag`x`;"), [Rule::MethodCall]);
        assert_eq!(rules("host.print(false, a);"), []);
        assert_eq!(rules("ReflectApply(a, b, []);"), []);
        assert_eq!(rules("const g = a.push; g(b);"), []);
    }

    #[test]
    fn this_super_and_protocol_reads_are_reported() {
        assert_eq!(
            rules("return class extends MapCtor { m() { return this.x + super.y; } };"),
            [Rule::ThisMember, Rule::Super]
        );
        assert_eq!(
            rules("return class extends MapCtor { constructor() { super(); } };"),
            [Rule::Super]
        );
        assert_eq!(rules("return a.then;"), [Rule::ProtocolRead]);
        assert_eq!(rules("return a[\"constructor\"];"), [Rule::ProtocolRead]);
        assert_eq!(
            rules("return a.size + a.byteLength;"),
            [Rule::ProtocolRead, Rule::ProtocolRead]
        );
        assert_eq!(rules("return a[SymbolIterator];"), [Rule::ProtocolRead]);
        assert_eq!(rules("return a.other + a[0] + a[b];"), []);
        assert_eq!(
            rules("const { then, other } = a; return then + other;"),
            [Rule::ProtocolRead]
        );
        assert_eq!(
            rules("let c; ({ constructor: c } = a); return c;"),
            [Rule::ProtocolRead]
        );
        assert_eq!(
            rules("let next; ({ next } = a); return next;"),
            [Rule::ProtocolRead]
        );
    }

    #[test]
    fn iteration_async_and_operators_are_reported() {
        assert_eq!(rules("for (const x of a) b(x);"), [Rule::Iteration]);
        assert_eq!(rules("for (const k in a) b(k);"), [Rule::Iteration]);
        assert_eq!(rules("b(...a);"), [Rule::Iteration]);
        assert_eq!(rules("return [...a];"), [Rule::Iteration]);
        assert_eq!(rules("const [x] = a; return x;"), [Rule::Iteration]);
        assert_eq!(rules("let x; [x] = a; return x;"), [Rule::Iteration]);
        assert_eq!(rules("return ([x]) => x;"), [Rule::Iteration]);
        assert_eq!(rules("return async () => 1;"), [Rule::Async]);
        assert_eq!(
            rules("return function* () { yield 1; };"),
            [Rule::Async, Rule::Async]
        );
        assert_eq!(rules("return a instanceof b;"), [Rule::Instanceof]);
        assert_eq!(rules("return b in a;"), [Rule::In]);
        assert_eq!(rules("return class { #x; m(o) { return #x in o; } };"), []);
        // Rest parameters and object destructuring are not iteration.
        assert_eq!(
            rules("return (...r) => { const { p } = r; return p; };"),
            []
        );
    }

    #[test]
    fn object_literals_need_a_null_prototype() {
        assert_eq!(rules("return { a: 1 };"), [Rule::ObjectLiteral]);
        assert_eq!(rules("return { __proto__: null, a: 1 };"), []);
        assert_eq!(rules("return { \"__proto__\": null };"), []);
        assert_eq!(
            rules("const __proto__ = null; return { __proto__ };"),
            [Rule::ObjectLiteral]
        );
        assert_eq!(rules("return { __proto__: a };"), [Rule::ObjectLiteral]);
        assert_eq!(
            rules("return { __proto__: null, ...a };"),
            [Rule::Iteration]
        );
        assert_eq!(rules("return new MapCtor(a);"), [Rule::CollectionInit]);
    }

    #[test]
    fn unsafe_captures_are_reported_anywhere() {
        let r = lint(&[("t.js", "(function () {\n  const T = Promise.prototype.then;\n  const S = String.prototype . split;\n  const P = String.prototype.slice;\n})")]);
        let got: Vec<(Rule, usize)> = r.findings.iter().map(|f| (f.rule, f.line)).collect();
        assert_eq!(got, [(Rule::UnsafeCapture, 2), (Rule::UnsafeCapture, 3)]);
    }

    #[test]
    fn allowances_need_a_rule_a_reason_and_a_use() {
        let r = lint(&[(
            "t.js",
            "(function () {\n  return (a) => {\n    const n = a.next; // prelude-lint: allow(protocol-read) the iterator protocol\n    // prelude-lint: allow(method-call) spec\n    a.f();\n    a.g(); // prelude-lint: allow(method-call)\n    // prelude-lint: allow(in) nothing here\n    return n;\n  };\n})",
        )]);
        assert_eq!(r.allowed.len(), 2);
        assert_eq!(r.allowed[0].1, "the iterator protocol");
        let got: Vec<(Rule, usize)> = r.findings.iter().map(|f| (f.rule, f.line)).collect();
        assert_eq!(
            got,
            [(Rule::Allow, 6), (Rule::MethodCall, 6), (Rule::Allow, 7)]
        );
    }

    #[test]
    fn positions_name_the_file_and_line_of_the_joined_prelude() {
        let r = lint(&[
            ("a.js", "(function () {\n"),
            ("b.js", "  const f = () => {\n    x.y();\n  };\n"),
            ("c.js", "})\n"),
        ]);
        let f: Vec<String> = r.findings.iter().map(|f| f.to_string()).collect();
        assert_eq!(
            f,
            [
                "b.js:2:5: global: `x` is read from the global object, which the page controls",
                "b.js:2:5: method-call: the method `x.y(…)` is looked up on its receiver"
            ]
        );
        assert_eq!(r.functions, 1);
        let bad = lint(&[("a.js", "(function () {")]);
        assert_eq!(bad.findings[0].rule, Rule::Syntax);
    }
}
