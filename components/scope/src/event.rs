//! Event types (Scope's numbers) and what each event records.

use serde::{Deserialize, Serialize};

/// `EventType` of `Profiler.1.1`, with its numbers. CSS parsing, reflow, style
/// recalculation, selector matching, layout and paint are in the protocol and never
/// produced: this engine does not render.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EventType {
    Generic = 1,
    Process = 2,
    DocumentParsing = 3,
    CssParsing = 4,
    ScriptCompilation = 5,
    ThreadEvaluation = 6,
    Reflow = 7,
    StyleRecalculation = 8,
    CssSelectorMatching = 9,
    Layout = 10,
    Paint = 11,
}

impl EventType {
    pub const ALL: [EventType; 11] = [
        EventType::Generic,
        EventType::Process,
        EventType::DocumentParsing,
        EventType::CssParsing,
        EventType::ScriptCompilation,
        EventType::ThreadEvaluation,
        EventType::Reflow,
        EventType::StyleRecalculation,
        EventType::CssSelectorMatching,
        EventType::Layout,
        EventType::Paint,
    ];

    /// Scope's name for it.
    pub fn name(self) -> &'static str {
        match self {
            EventType::Generic => "GENERIC",
            EventType::Process => "PROCESS",
            EventType::DocumentParsing => "DOCUMENT_PARSING",
            EventType::CssParsing => "CSS_PARSING",
            EventType::ScriptCompilation => "SCRIPT_COMPILATION",
            EventType::ThreadEvaluation => "THREAD_EVALUATION",
            EventType::Reflow => "REFLOW",
            EventType::StyleRecalculation => "STYLE_RECALCULATION",
            EventType::CssSelectorMatching => "CSS_SELECTOR_MATCHING",
            EventType::Layout => "LAYOUT",
            EventType::Paint => "PAINT",
        }
    }

    /// The type of Scope number `n`.
    pub fn from_number(n: u64) -> Option<EventType> {
        EventType::ALL.into_iter().find(|t| *t as u64 == n)
    }

    /// The type named `name` (Scope's name, any case).
    pub fn from_name(name: &str) -> Option<EventType> {
        EventType::ALL
            .into_iter()
            .find(|t| t.name().eq_ignore_ascii_case(name))
    }
}

impl Serialize for EventType {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for EventType {
    /// A number or a name, as every enum of the protocol.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = NumberOrName::deserialize(d)?;
        let t = match &v {
            NumberOrName::Number(n) => EventType::from_number(*n),
            NumberOrName::Name(s) => EventType::from_name(s),
        };
        t.ok_or_else(|| serde::de::Error::custom(format!("unknown event type {v}")))
    }
}

/// A protocol enum as a client may give it: Scope's number, or its name.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub(crate) enum NumberOrName {
    Number(u64),
    Name(String),
}

impl std::fmt::Display for NumberOrName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NumberOrName::Number(n) => write!(f, "{n}"),
            NumberOrName::Name(s) => write!(f, "{s:?}"),
        }
    }
}

/// Classic script or module.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ScriptKind {
    Classic,
    Module,
}

/// A garbage collection's kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GcKind {
    /// A major collection (its slices, from the GC slice callback).
    Major,
    /// A nursery collection.
    Minor,
}

/// What a thread evaluation ran: the seed's kinds of evaluation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum EvalKind {
    /// An inline classic script of the document.
    Inline,
    /// A classic script fetched from its `src`.
    External,
    /// A module script (inline or fetched).
    Module,
    /// An event dispatched by the engine, with its type (`eventType`).
    EventHandler,
    /// A `setTimeout` callback.
    Timeout,
    /// A `setInterval` callback.
    Interval,
    /// A microtask checkpoint.
    Microtask,
    /// A message posted within the page (`postMessage`, `MessagePort`).
    Message,
    /// A `fetch()` or `XMLHttpRequest` answer.
    FetchCallback,
    /// A message from a dedicated worker.
    WorkerMessage,
}

/// What an event records, by type: the sub-message of `Event`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Details {
    /// `GENERIC`: a garbage collection and its reason (SpiderMonkey's name for it).
    #[serde(rename = "generic")]
    Gc { kind: GcKind, reason: String },
    /// `PROCESS`: a resource load (document, script, frame, fetch), as it completed.
    #[serde(rename_all = "camelCase")]
    Process {
        url: String,
        /// The HTTP status (0 for a network error).
        status: u16,
        bytes: u64,
    },
    /// `DOCUMENT_PARSING` of the document at `url`.
    #[serde(rename_all = "camelCase")]
    DocumentParsing { url: String },
    /// `SCRIPT_COMPILATION` of a script: its URL (absent: inline) and its kind.
    #[serde(rename_all = "camelCase")]
    ScriptCompilation {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        url: Option<String>,
        script_kind: ScriptKind,
    },
    /// `THREAD_EVALUATION`: what kind of evaluation, the event type for an event handler,
    /// the script (URL; inline scripts give the document's) and the function entered.
    #[serde(rename_all = "camelCase")]
    ThreadEvaluation {
        kind: EvalKind,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        event_type: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        script: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        function: Option<String>,
    },
}

impl Details {
    pub fn event_type(&self) -> EventType {
        match self {
            Details::Gc { .. } => EventType::Generic,
            Details::Process { .. } => EventType::Process,
            Details::DocumentParsing { .. } => EventType::DocumentParsing,
            Details::ScriptCompilation { .. } => EventType::ScriptCompilation,
            Details::ThreadEvaluation { .. } => EventType::ThreadEvaluation,
        }
    }

    /// The key `REDUCE_UNIQUE_EVENTS` merges by: the same script for compilation, the same
    /// kind, event type, script and function for evaluation, the same URL for loads and
    /// parsing, the same kind and reason for collections. Loads merge by URL whatever their
    /// sizes, so the size is not part of it.
    pub fn unique_key(&self) -> Details {
        match self {
            Details::Process { url, status, .. } => Details::Process {
                url: url.clone(),
                status: *status,
                bytes: 0,
            },
            other => other.clone(),
        }
    }
}

/// An event as recorded: its interval on the recorder's clock, in ns since recording began.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RawEvent {
    /// 1, 2, … in the order events began (a parent's is below its children's).
    pub id: u32,
    /// The event on the thread's stack when this one began (0: none).
    pub parent: u32,
    /// The frame it happened in (see [`crate::FrameInfo`]).
    pub frame: u32,
    pub start: u64,
    /// `None` while it runs; an event still running at stop ends there.
    pub end: Option<u64>,
    /// What recording it cost, in ns (the recorder's own time at its begin and end).
    pub overhead: u64,
    pub details: Details,
}
