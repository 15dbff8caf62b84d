//! Raw frames, as a host captures them, and the symbolizer that turns them into spec frames.
//!
//! A host captures a stack on the agent's thread as cheaply as it can ("sample cheap, symbolise
//! late"): each [`RawFrame`] carries what filtering needs (realm, hidden-or-not) and either the
//! final name and definition position, or a position inside a script that a [`Symbolizer`]
//! resolves when the trace is built, off the agent's thread.

use std::sync::Arc;

/// A host-chosen identifier of a realm (a Window or worker global). Sessions keep only frames
/// of their own realm (BRIEF decision 6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RealmId(pub u32);

/// A host-chosen identifier of a script (a classic script, a module, an inline script).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ScriptId(pub u32);

/// Where a frame is: already resolved, or a position to resolve later.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum FrameSite {
    /// The host knows the spec values already: the function's name and its definition position
    /// (1-based). Builtins have no position.
    Resolved {
        name: Arc<str>,
        line: Option<u32>,
        column: Option<u32>,
    },
    /// The current 1-based position inside the frame's script; [`Symbolizer::resolve`] maps it
    /// to the enclosing function's name and definition position when the trace is built.
    Position { line: u32, column: u32 },
    /// The 1-based definition position of the frame's function (the engine knows which
    /// function runs, but not its spec name); [`Symbolizer::resolve_definition`] names it.
    Definition { line: u32, column: u32 },
    /// The top-level code of the frame's script.
    TopLevel,
}

/// One frame of a captured stack.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RawFrame {
    /// The realm the frame's code belongs to.
    pub realm: RealmId,
    /// The script the frame's code belongs to, if any.
    pub script: Option<ScriptId>,
    /// True for frames no page may see: cross-origin no-CORS classic scripts ("muted errors"),
    /// `eval`/`new Function` code.
    pub hidden: bool,
    /// The name and position, or what to resolve them from.
    pub site: FrameSite,
}

impl RawFrame {
    /// A frame at a position inside `script`, resolved later.
    pub fn at(realm: RealmId, script: ScriptId, line: u32, column: u32) -> Self {
        RawFrame {
            realm,
            script: Some(script),
            hidden: false,
            site: FrameSite::Position { line, column },
        }
    }

    /// A frame whose name and definition position are already known.
    pub fn resolved(
        realm: RealmId,
        script: Option<ScriptId>,
        name: &str,
        line: Option<u32>,
        column: Option<u32>,
    ) -> Self {
        RawFrame {
            realm,
            script,
            hidden: false,
            site: FrameSite::Resolved {
                name: name.into(),
                line,
                column,
            },
        }
    }

    /// The same frame, marked hidden.
    pub fn hidden(mut self) -> Self {
        self.hidden = true;
        self
    }
}

/// A captured stack, ordered from the outermost frame to the innermost (the spec's order).
/// Shared, because one capture is handed to every due session of its agent.
pub type RawStack = Arc<[RawFrame]>;

/// The name and definition position of the function enclosing a position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedSite {
    /// The function's ECMAScript name (`''` for anonymous functions and top-level code).
    pub name: String,
    /// 1-based line of the function's definition.
    pub line: u32,
    /// 1-based column of the function's definition.
    pub column: u32,
}

/// A frame as the spec sees it, before it is given an ID.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FrameInfo {
    pub name: String,
    pub resource: Option<String>,
    pub line: Option<u32>,
    pub column: Option<u32>,
}

/// The host's knowledge of its scripts, used when a trace is built (off the agent's thread).
pub trait Symbolizer: Send + Sync {
    /// The URL of a script (the document URL for inline scripts), or `None` if it has none.
    fn resource(&self, script: ScriptId) -> Option<String>;
    /// Resolves a position to its enclosing function, or `None` to drop the frame.
    fn resolve(&self, script: ScriptId, line: u32, column: u32) -> Option<ResolvedSite>;
    /// Names the function defined at (line, column) — the `(` of its parameter list — or
    /// `None` to drop the frame. By default, the function enclosing that position.
    fn resolve_definition(&self, script: ScriptId, line: u32, column: u32) -> Option<ResolvedSite> {
        self.resolve(script, line, column)
    }
    /// The frame of a script's top-level code (`''` at the script's start), or `None` to
    /// drop it.
    fn resolve_top_level(&self, _script: ScriptId) -> Option<ResolvedSite> {
        None
    }
}

/// A symbolizer that knows no script: positions are dropped, resolved frames keep their names
/// and get no resource.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoScripts;

impl Symbolizer for NoScripts {
    fn resource(&self, _: ScriptId) -> Option<String> {
        None
    }
    fn resolve(&self, _: ScriptId, _: u32, _: u32) -> Option<ResolvedSite> {
        None
    }
}

/// Symbolizes one raw frame: `None` when the frame is dropped.
pub(crate) fn symbolize(frame: &RawFrame, symbolizer: &dyn Symbolizer) -> Option<FrameInfo> {
    match &frame.site {
        FrameSite::Resolved { name, line, column } => Some(FrameInfo {
            name: name.to_string(),
            resource: frame.script.and_then(|s| symbolizer.resource(s)),
            line: *line,
            column: *column,
        }),
        site => {
            let script = frame.script?;
            let site = match site {
                FrameSite::Position { line, column } => symbolizer.resolve(script, *line, *column),
                FrameSite::Definition { line, column } => {
                    symbolizer.resolve_definition(script, *line, *column)
                }
                _ => symbolizer.resolve_top_level(script),
            }?;
            Some(FrameInfo {
                name: site.name,
                resource: symbolizer.resource(script),
                line: Some(site.line),
                column: Some(site.column),
            })
        }
    }
}
