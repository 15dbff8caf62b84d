//! The one model every intake decodes into: a `ProfilerTrace` (the spec's dictionary, as
//! jsprof's own crates read it) with what is known of where it came from.

use std::collections::BTreeMap;

use jsprof_profiler::ProfilerTrace;
use serde::{Deserialize, Serialize};

/// Which intake a trace came through.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// `POST /v1/profiles`: jsprof's own intake.
    Jsprof,
    /// Datadog's browser SDK upload (`event` + `wall-time.json`).
    Datadog,
    /// A Sentry envelope's `profile_chunk` item.
    Sentry,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Jsprof => "jsprof",
            Source::Datadog => "datadog",
            Source::Sentry => "sentry",
        }
    }
}

/// What the page (or its SDK) said about a trace. Every field is optional: a bare trace
/// has none of them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Meta {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub release: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_agent: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// The page's `performance.timeOrigin` (ms since the Unix epoch): the samples'
    /// timestamps count from it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_origin: Option<f64>,
    /// The page's own labels (Datadog's view names, Sentry's environment, ...).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// The SDK's view the trace began in (Datadog's first view id), which a view [`Event`]
    /// of the same id gives a page URL and name. Not a member of jsprof's envelope.
    #[serde(skip)]
    pub view_id: Option<String>,
    /// The debug ids of the trace's scripts, by script URL: Sentry's `debug_meta` images,
    /// Datadog's `debugIds`. What an uploaded source map is matched by (the collector's
    /// sourcemaps.rs). Not a member of jsprof's envelope.
    #[serde(skip)]
    pub debug_ids: BTreeMap<String, String>,
}

impl Meta {
    /// What the samples' and events' times count from: `timeOrigin` when it is a finite
    /// number, else 0 (the times are then the page's own).
    pub fn origin_ms(&self) -> f64 {
        self.time_origin.filter(|o| o.is_finite()).unwrap_or(0.0)
    }
}

/// What an [`Event`] is. The kinds `--during` scopes samples to are [`Kind::LongTask`],
/// [`Kind::Loaf`] and [`Kind::Interaction`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// A page view: Datadog's RUM view (its URL and name).
    View,
    /// A Sentry transaction, or the segment span of a span tree (a page load, a navigation).
    Transaction,
    /// Any other Sentry span of a transaction or segment that carries a `profiler_id`.
    Span,
    /// A Long Tasks API entry (`longtask`): a task of 50 ms or more.
    LongTask,
    /// A Long Animation Frame (`long-animation-frame`): a frame that took 50 ms or more.
    Loaf,
    /// A slow interaction (Event Timing with an `interactionId`): the INP candidates.
    Interaction,
}

impl Kind {
    pub const ALL: [Kind; 6] = [
        Kind::View,
        Kind::Transaction,
        Kind::Span,
        Kind::LongTask,
        Kind::Loaf,
        Kind::Interaction,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Kind::View => "view",
            Kind::Transaction => "transaction",
            Kind::Span => "span",
            Kind::LongTask => "long-task",
            Kind::Loaf => "loaf",
            Kind::Interaction => "interaction",
        }
    }

    pub fn code(self) -> u8 {
        Kind::ALL.iter().position(|k| *k == self).expect("a kind") as u8
    }

    pub fn of_code(code: u8) -> Option<Kind> {
        Kind::ALL.get(usize::from(code)).copied()
    }
}

/// An interval the SDK (or the snippet) recorded beside a trace, which explains what its
/// samples were doing: a view, a transaction or span, a long task, a long animation frame,
/// a slow interaction. Times are ms since the Unix epoch where the page said when its time
/// began (else the page's own, as its samples' are).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Event {
    pub kind: Kind,
    /// The SDK's own type for it (Sentry's `op`, Datadog's `entry_type`, the entry's
    /// `entryType` or the interaction's event type).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub op: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Its own id (Datadog's view or long task id, Sentry's span id).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The session it links to traces by: Datadog's session id, Sentry's `profiler_id`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// The view (Datadog) or segment span (Sentry) it belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub view_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    pub start_ms: f64,
    pub duration_ms: f64,
}

/// Events that came without a trace (a RUM batch, a Sentry span envelope): linked to the
/// traces of the same session when read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Observed {
    pub project: String,
    pub source: Source,
    pub received: f64,
    pub events: Vec<Event>,
}

/// What one request left to keep: its traces (each with its own events) and the events
/// that came without one.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Contents {
    pub traces: Vec<Ingested>,
    pub observed: Vec<Observed>,
}

impl Contents {
    pub fn is_empty(&self) -> bool {
        self.traces.is_empty() && self.observed.iter().all(|o| o.events.is_empty())
    }
}

/// One trace as the collector keeps it: what the write-ahead log records and compaction
/// turns into rows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Ingested {
    pub project: String,
    pub source: Source,
    /// When the collector received it (ms since the Unix epoch).
    pub received: f64,
    pub meta: Meta,
    pub trace: ProfilerTrace,
    /// What the page recorded beside the trace (jsprof's `entries`, Datadog's `longTasks`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<Event>,
}

impl Ingested {
    /// The time the trace's day partition is taken from: its `timeOrigin`, else when it was
    /// received.
    pub fn day_ms(&self) -> f64 {
        self.meta
            .time_origin
            .filter(|t| t.is_finite() && *t >= 0.0)
            .unwrap_or(self.received)
    }
}

/// An entry of jsprof's envelope: a `PerformanceEntry` the page recorded beside its trace
/// (examples/field: Long Animation Frames and slow interactions), as its `toJSON()` names
/// the members. Times are the page's (`performance.now()`), as the trace's samples are.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    /// `long-animation-frame`, `longtask`, `event` or `first-input`.
    pub entry_type: String,
    /// The event's type (`click`, `keydown`) for an interaction; what ran (the script's
    /// invoker) for a frame.
    #[serde(default)]
    pub name: Option<String>,
    pub start_time: f64,
    pub duration: f64,
}
