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
