//! Preferences: a small typed registry, set from the command line with `--pref name=value`,
//! read by features. Unknown names and ill-typed values are errors, not silent defaults.

use std::collections::BTreeMap;
use std::fmt;

/// A preference's value.
#[derive(Debug, Clone, PartialEq)]
pub enum PrefValue {
    Bool(bool),
    Int(i64),
    Str(String),
}

impl fmt::Display for PrefValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PrefValue::Bool(b) => write!(f, "{b}"),
            PrefValue::Int(i) => write!(f, "{i}"),
            PrefValue::Str(s) => write!(f, "{s}"),
        }
    }
}

/// Every preference jsprof knows, with its default and what it does.
pub const KNOWN: &[(&str, PrefValue, &str)] = &[
    (
        "profiler.base_interval_ms",
        PrefValue::Int(20),
        "base sampling interval of the ProfilerGroup, in ms (1 or more)",
    ),
    (
        "profiler.max_buffered_samples",
        PrefValue::Int(1 << 23),
        "samples the unstopped profiling sessions of a process may hold between them (12 bytes each); a session that would take one more is full: it stops sampling and gets samplebufferfull, as at its own maxBufferSize",
    ),
    (
        "dom.timeout_clamp_ms",
        PrefValue::Int(0),
        "minimum delay of setTimeout/setInterval, in ms",
    ),
    (
        "js.stack_capture_max_frames",
        PrefValue::Int(128),
        "deepest stack a sample captures",
    ),
    (
        "js.stack_capture_slots",
        PrefValue::Bool(true),
        "read captured SavedFrames' reserved slots directly (false: only the public accessors, the fallback path, for tests)",
    ),
    (
        "profiler.signal_sampling",
        PrefValue::Bool(true),
        "take each sample at its tick by a SIGPROF stack walk (false: interrupt and capture only)",
    ),
    (
        "dom.max_nodes",
        PrefValue::Int(1_000_000),
        "nodes a document may make its parser build; a document with more fails to load",
    ),
    (
        "dom.max_depth",
        PrefValue::Int(512),
        "deepest nesting of a parsed document's DOM; deeper elements go beside their ancestor at that depth (as in Blink)",
    ),
    (
        "network.max_response_bytes",
        PrefValue::Int(64 << 20),
        "largest response body a load accepts (page, script, fetch); a larger one is a network error for that resource",
    ),
    (
        "memory.max_resident_mb",
        PrefValue::Int(2048),
        "largest resident memory of the engine's process, in MiB (0: no limit); past it the page is stopped as out of memory, like a browser tab that runs out, and its traces are still written",
    ),
    (
        "profiler.markers.enabled",
        PrefValue::Bool(true),
        "put markers (script, gc, other) on samples of cross-origin-isolated contexts (the markers extension; other contexts would see only style and layout, which this engine does not produce)",
    ),
    (
        "dom.profiler.proposals.enabled",
        PrefValue::Bool(false),
        "the JS Self-Profiling proposals beyond the spec (README \"Beyond the spec\"): ProfilerInitOptions.format (\"json-gzip\"), .bufferPolicy (\"ring\") and profiler.restart(); off, pages see exactly the spec's API",
    ),
    (
        "dom.testing.enabled",
        PrefValue::Bool(false),
        "expose JsprofTestBindings, which tests the generated WebIDL bindings from pages (and has gc())",
    ),
    (
        "dom.document.hidden",
        PrefValue::Bool(false),
        "start the page hidden (document.visibilityState \"hidden\"): its Profilers are paused until it is shown (WebDriver: Maximize/Set Window Rect)",
    ),
];

/// A pref the registry refuses.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PrefError {
    #[error("--pref {0}: expected name=value")]
    Syntax(String),
    #[error("--pref {0}: unknown preference (known: {1})")]
    Unknown(String, String),
    #[error("--pref {name}={value}: expected {expected}")]
    Type {
        name: String,
        value: String,
        expected: &'static str,
    },
}

/// The current preferences.
#[derive(Debug, Clone)]
pub struct Prefs(BTreeMap<&'static str, PrefValue>);

impl Default for Prefs {
    fn default() -> Self {
        Prefs(KNOWN.iter().map(|(n, v, _)| (*n, v.clone())).collect())
    }
}

impl Prefs {
    /// Applies `name=value`, typed like the pref's default.
    pub fn set_from_arg(&mut self, arg: &str) -> Result<(), PrefError> {
        let (name, value) = arg
            .split_once('=')
            .ok_or_else(|| PrefError::Syntax(arg.to_owned()))?;
        let (key, current) = self
            .0
            .iter_mut()
            .find(|(k, _)| **k == name)
            .ok_or_else(|| {
                let known: Vec<&str> = KNOWN.iter().map(|k| k.0).collect();
                PrefError::Unknown(name.to_owned(), known.join(", "))
            })?;
        let type_err = |expected| PrefError::Type {
            name: key.to_string(),
            value: value.to_owned(),
            expected,
        };
        *current = match current {
            PrefValue::Bool(_) => {
                PrefValue::Bool(value.parse().map_err(|_| type_err("true or false"))?)
            }
            PrefValue::Int(_) => PrefValue::Int(value.parse().map_err(|_| type_err("an integer"))?),
            PrefValue::Str(_) => PrefValue::Str(value.to_owned()),
        };
        Ok(())
    }

    pub fn int(&self, name: &str) -> i64 {
        match self.0.get(name) {
            Some(PrefValue::Int(i)) => *i,
            other => panic!("pref {name} is not an integer pref: {other:?}"),
        }
    }

    /// A boolean pref's value; `None` if there is no such boolean pref.
    pub fn get_bool(&self, name: &str) -> Option<bool> {
        match self.0.get(name) {
            Some(PrefValue::Bool(b)) => Some(*b),
            _ => None,
        }
    }

    pub fn bool(&self, name: &str) -> bool {
        match self.0.get(name) {
            Some(PrefValue::Bool(b)) => *b,
            other => panic!("pref {name} is not a boolean pref: {other:?}"),
        }
    }

    /// A non-negative integer pref as a count (negative values count as 0).
    pub fn count(&self, name: &str) -> usize {
        usize::try_from(self.int(name)).unwrap_or(0)
    }

    /// `memory.max_resident_mb` in bytes, `None` for no limit.
    pub fn memory_limit(&self) -> Option<u64> {
        match self.count("memory.max_resident_mb") as u64 {
            0 => None,
            mb => Some(mb.saturating_mul(1 << 20)),
        }
    }

    /// What a document may make the parser build (`dom.max_nodes`, `dom.max_depth`).
    pub fn document_limits(&self) -> crate::document::Limits {
        crate::document::Limits {
            max_nodes: self.count("dom.max_nodes"),
            max_depth: self.count("dom.max_depth").max(1),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_prefs() {
        let mut p = Prefs::default();
        assert_eq!(p.int("profiler.base_interval_ms"), 20);
        p.set_from_arg("profiler.base_interval_ms=5").unwrap();
        assert_eq!(p.int("profiler.base_interval_ms"), 5);
        assert!(matches!(
            p.set_from_arg("nope=1"),
            Err(PrefError::Unknown(..))
        ));
        assert!(matches!(
            p.set_from_arg("profiler.base_interval_ms=x"),
            Err(PrefError::Type { .. })
        ));
        assert!(matches!(
            p.set_from_arg("novalue"),
            Err(PrefError::Syntax(_))
        ));
    }
}
