//! The intakes' decoders: each turns one request body into [`Ingested`] traces, or refuses
//! it with a status and a reason. None of them panics on any input (fuzz/targets has a
//! target per decoder).
//!
//! - jsprof's own `POST /v1/profiles` ([`jsprof`]), here;
//! - Datadog's browser SDK profiling upload ([`datadog()`]), and its RUM batch
//!   ([`datadog_rum`]), in datadog.rs;
//! - Sentry's envelope with `profile_chunk` items ([`sentry()`]), in sentry.rs.
//!
//! Every trace goes through the reader and the invariant check `jsprof convert` uses
//! (`jsprof_export::input::parse_traces`, `jsprof_export::check`), but for jsprof's common
//! envelope, which fast.rs reads straight into the log's record with the same checks (and
//! leaves to that reader whatever it would not read exactly so). Each decoder's traces
//! reach the log as one `record::Batch`.
//!
//! What the three share is here: [`Reject`], [`Request`], [`decode_content`] and
//! [`inflate_deflate`], and the helpers `checked` (the invariant check), `debug_ids`,
//! `ingested` and `str_at`.

use std::collections::BTreeMap;
use std::io::Read;

use jsprof_profiler::ProfilerTrace;
use serde::Deserialize;

use crate::model::{Event, Ingested, Kind, Meta, Source};
use crate::record::{self, Batch};

mod datadog;
mod sentry;

pub use datadog::{datadog, datadog_rum};
pub use sentry::{dsn_public_key, sentry, Sentry, SentryHeader};

/// A refused request: the HTTP status and the reason sent back as the body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reject {
    pub status: u16,
    pub reason: String,
}

impl Reject {
    pub fn bad(reason: impl Into<String>) -> Reject {
        Reject {
            status: 400,
            reason: reason.into(),
        }
    }

    pub fn too_large(reason: impl Into<String>) -> Reject {
        Reject {
            status: 413,
            reason: reason.into(),
        }
    }
}

impl std::fmt::Display for Reject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.status, self.reason)
    }
}

/// What a request carried besides its body, for the decoders.
#[derive(Debug, Clone, Default)]
pub struct Request {
    pub project: String,
    pub received: f64,
    /// `Content-Encoding`, lowercased (`gzip`, `deflate`, `identity` or absent).
    pub content_encoding: Option<String>,
    pub content_type: Option<String>,
    pub user_agent: Option<String>,
    pub referer: Option<String>,
    /// The largest body, once decompressed (pref `collector.max_body_bytes`).
    pub max_bytes: usize,
}

/// The body without its `Content-Encoding`: gzip, deflate (zlib, or raw as
/// `CompressionStream("deflate-raw")` writes it) or identity. Inflating stops past
/// `max` bytes: a decompression bomb is a 413, never memory.
pub fn decode_content<'a>(
    encoding: Option<&str>,
    body: &'a [u8],
    max: usize,
) -> Result<std::borrow::Cow<'a, [u8]>, Reject> {
    match encoding.map(str::trim) {
        None | Some("") | Some("identity") => {
            if body.len() > max {
                return Err(Reject::too_large(format!("body over {max} bytes")));
            }
            Ok(body.into())
        }
        Some("gzip") | Some("x-gzip") => {
            inflate(flate2::read::MultiGzDecoder::new(body), max, "gzip").map(Into::into)
        }
        Some("deflate") => inflate_deflate(body, max).map(Into::into),
        Some(other) => Err(Reject {
            status: 415,
            reason: format!("unsupported Content-Encoding {other:?} (gzip, deflate or identity)"),
        }),
    }
}

/// zlib-wrapped deflate when the two first bytes are a zlib header, raw deflate otherwise.
pub fn inflate_deflate(body: &[u8], max: usize) -> Result<Vec<u8>, Reject> {
    let zlib = body.len() >= 2
        && body[0] & 0x0f == 8
        && (u16::from(body[0]) << 8 | u16::from(body[1])) % 31 == 0;
    if zlib {
        inflate(flate2::read::ZlibDecoder::new(body), max, "deflate")
    } else {
        inflate(flate2::read::DeflateDecoder::new(body), max, "deflate")
    }
}

fn inflate(reader: impl Read, max: usize, what: &str) -> Result<Vec<u8>, Reject> {
    let mut out = Vec::new();
    let limit = u64::try_from(max).unwrap_or(u64::MAX).saturating_add(1);
    reader
        .take(limit)
        .read_to_end(&mut out)
        .map_err(|e| Reject::bad(format!("body is not valid {what}: {e}")))?;
    if out.len() > max {
        return Err(Reject::too_large(format!(
            "{what} body inflates past {max} bytes"
        )));
    }
    Ok(out)
}

fn checked(trace: ProfilerTrace) -> Result<ProfilerTrace, Reject> {
    jsprof_export::check(&trace)
        .map_err(|e| Reject::bad(format!("trace breaks the spec's invariants: {e}")))?;
    Ok(trace)
}

/// The longest debug id kept: a UUID is 36 characters, Sentry's with an age 44.
const MAX_DEBUG_ID: usize = 64;

/// The debug ids an SDK sent (script URL, id), kept for the scripts the trace names
/// (`resources`) only, and only well-formed ones (at most [`MAX_DEBUG_ID`] characters,
/// hexadecimal digits and dashes), so that a page cannot make a trace's row larger than its
/// resources make it.
fn debug_ids<'a>(
    resources: &[String],
    sent: impl Iterator<Item = (&'a String, &'a String)>,
) -> BTreeMap<String, String> {
    let named: std::collections::HashSet<&str> = resources.iter().map(String::as_str).collect();
    sent.filter(|(url, id)| {
        named.contains(url.as_str())
            && !id.is_empty()
            && id.len() <= MAX_DEBUG_ID
            && id.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-')
    })
    .map(|(url, id)| (url.clone(), id.to_ascii_lowercase()))
    .collect()
}

fn ingested(req: &Request, source: Source, meta: Meta, trace: ProfilerTrace) -> Ingested {
    Ingested {
        project: req.project.clone(),
        source,
        received: req.received,
        meta,
        trace,
        events: Vec::new(),
    }
}

fn str_at(v: &serde_json::Value, pointer: &str) -> Option<String> {
    v.pointer(pointer)
        .and_then(serde_json::Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

/// `POST /v1/profiles`. The body (after `Content-Encoding`) is either
///
/// - an envelope: `{"trace": ProfilerTrace, "pageUrl", "release", "userAgent", "session",
///   "timeOrigin", "labels": {..}, "entries": [Entry]}`, every member but `trace` optional;
///   or
/// - a bare `ProfilerTrace` (or an array of them), as `profiler.stop()` resolves with.
///
/// A missing `userAgent` is the request's `User-Agent`, a missing `pageUrl` its `Referer`.
/// A body without `Content-Encoding` that starts with gzip's magic bytes is gzip (no JSON
/// starts so): the field snippet (examples/field) sends gzip as a CORS-safelisted request,
/// which needs no preflight when the page is unloading.
pub fn jsprof(req: &Request, body: &[u8]) -> Result<Batch, Reject> {
    let encoding = req
        .content_encoding
        .as_deref()
        .or_else(|| body.starts_with(&[0x1f, 0x8b]).then_some("gzip"));
    let json = decode_content(encoding, body, req.max_bytes)?;
    let defaults = |meta: &mut Meta| {
        if meta.user_agent.is_none() {
            meta.user_agent = req.user_agent.clone();
        }
        if meta.page_url.is_none() {
            meta.page_url = req.referer.clone();
        }
    };
    // The common case, an envelope, in one pass straight into the log's record; anything
    // else through serde (fast.rs).
    if let Some((mut meta, entries, trace)) = crate::fast::envelope(&json) {
        defaults(&mut meta);
        let events = entry_events(&entries, meta.origin_ms())?;
        let mut payload = Vec::with_capacity(trace.encoded_len() + 256);
        record::head(&mut payload, 1);
        record::ingested_head(
            &mut payload,
            &req.project,
            Source::Jsprof,
            req.received,
            &meta,
        );
        trace.write(&mut payload);
        record::events(&mut payload, &events);
        record::observed_tail(&mut payload, &[]);
        return Ok(Batch { count: 1, payload });
    }
    let (mut meta, entries, traces) = parse_body(&json)?;
    defaults(&mut meta);
    if traces.is_empty() {
        return Err(Reject::bad("no trace in the body"));
    }
    let events = entry_events(&entries, meta.origin_ms())?;
    let traces = traces
        .into_iter()
        .map(|t| {
            let mut t = ingested(req, Source::Jsprof, meta.clone(), checked(t)?);
            t.events = events.clone();
            Ok(t)
        })
        .collect::<Result<Vec<_>, Reject>>()?;
    Ok(Batch::of(&traces))
}

pub use crate::model::Entry;

/// The events of an envelope's entries, their times from `origin`: a 400 for a time that is
/// not a finite number (a duration below 0 included). An entry of another type is skipped,
/// so that a newer snippet that records more kinds is not refused by this collector (its
/// trace would be lost with the entries).
pub fn entry_events(entries: &[Entry], origin: f64) -> Result<Vec<Event>, Reject> {
    entries
        .iter()
        .enumerate()
        .filter_map(|(i, e)| {
            let kind = match e.entry_type.as_str() {
                "long-animation-frame" => Kind::Loaf,
                "longtask" => Kind::LongTask,
                "event" | "first-input" => Kind::Interaction,
                _ => return None,
            };
            Some((i, e, kind))
        })
        .map(|(i, e, kind)| {
            let start = origin + e.start_time;
            if !start.is_finite() || !e.duration.is_finite() || e.duration < 0.0 {
                return Err(Reject::bad(format!(
                    "entry {i}: startTime and duration must be finite, the duration at least 0"
                )));
            }
            Ok(Event {
                kind,
                op: Some(e.entry_type.clone()),
                name: e.name.clone().filter(|n| !n.is_empty()),
                id: None,
                session: None,
                view_id: None,
                url: None,
                start_ms: start,
                duration_ms: e.duration,
            })
        })
        .collect()
}

/// A `POST /v1/profiles` body read by serde: an envelope, or bare traces. The fast path
/// (fast.rs) reads the common envelope and leaves everything else, errors included, here.
pub fn parse_body(json: &[u8]) -> Result<(Meta, Vec<Entry>, Vec<ProfilerTrace>), Reject> {
    #[derive(Deserialize)]
    struct Envelope {
        trace: Option<ProfilerTrace>,
        #[serde(default)]
        entries: Option<Vec<Entry>>,
        #[serde(flatten)]
        meta: Meta,
    }
    let first = json.iter().find(|b| !b.is_ascii_whitespace());
    Ok(match first {
        Some(b'{') => {
            let envelope: Envelope = serde_json::from_slice(json)
                .map_err(|e| Reject::bad(format!("malformed JSON: {e}")))?;
            match envelope.trace {
                Some(trace) => (
                    envelope.meta,
                    envelope.entries.unwrap_or_default(),
                    vec![trace],
                ),
                None => (
                    Meta::default(),
                    Vec::new(),
                    jsprof_export::input::parse_traces(json).map_err(Reject::bad)?,
                ),
            }
        }
        _ => (
            Meta::default(),
            Vec::new(),
            jsprof_export::input::parse_traces(json).map_err(Reject::bad)?,
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn req() -> Request {
        Request {
            project: "default".into(),
            max_bytes: 1 << 20,
            ..Request::default()
        }
    }

    #[test]
    fn a_gzip_bomb_is_413_not_memory() {
        let zeros = vec![0u8; 4 << 20];
        let bomb = jsprof_profiler::gzip(&zeros);
        assert!(bomb.len() < 10_000);
        let err = decode_content(Some("gzip"), &bomb, 1 << 20).unwrap_err();
        assert_eq!(err.status, 413, "{err}");
    }

    #[test]
    fn gzip_without_content_encoding_is_known_by_its_magic_bytes() {
        let body = br#"{"trace":{"frames":[],"resources":[],"stacks":[],"samples":[{"timestamp":1}]},"release":"r1"}"#;
        let gz = jsprof_profiler::gzip(body);
        let got = jsprof(&req(), &gz).unwrap().traces().unwrap();
        assert_eq!(got[0].meta.release.as_deref(), Some("r1"));
        // A named encoding still rules: gzip's bytes declared identity are not JSON.
        let named = Request {
            content_encoding: Some("identity".into()),
            ..req()
        };
        assert_eq!(jsprof(&named, &gz).unwrap_err().status, 400);
    }

    #[test]
    fn a_trace_breaking_the_invariants_is_400_with_the_reason() {
        let bare = r#"{"frames":[],"resources":[],"stacks":[{"frameId":3}],"samples":[]}"#;
        // In an envelope, the fast path (fast.rs) leaves it to the serde path's reason.
        for body in [bare.to_owned(), format!(r#"{{"trace":{bare}}}"#)] {
            let err = jsprof(&req(), body.as_bytes()).unwrap_err();
            assert_eq!(err.status, 400);
            assert!(err.reason.contains("frameId 3 out of range"), "{err}");
        }
    }

    #[test]
    fn entries_are_events_on_the_traces_clock() {
        let trace = r#"{"frames":[],"resources":[],"stacks":[],"samples":[{"timestamp":1}]}"#;
        let entries = r#"[{"entryType":"long-animation-frame","name":"TimerHandler:setTimeout","startTime":12.5,"duration":80},
            {"entryType":"event","name":"click","startTime":100,"duration":48,"interactionId":7}]"#;
        // The fast path, and serde's (which a key with an escape takes).
        for body in [
            format!(r#"{{"trace":{trace},"timeOrigin":1000,"entries":{entries}}}"#),
            format!(r#"{{"tr\u0061ce":{trace},"timeOrigin":1000,"entries":{entries}}}"#),
        ] {
            assert_eq!(
                crate::fast::envelope(body.as_bytes()).is_some(),
                !body.contains('\\')
            );
            let t = &jsprof(&req(), body.as_bytes()).unwrap().traces().unwrap()[0];
            assert_eq!(t.events.len(), 2);
            assert_eq!(t.events[0].kind, Kind::Loaf);
            assert_eq!(t.events[0].name.as_deref(), Some("TimerHandler:setTimeout"));
            assert_eq!(
                (t.events[0].start_ms, t.events[0].duration_ms),
                (1012.5, 80.0)
            );
            assert_eq!(t.events[1].kind, Kind::Interaction);
            assert_eq!(t.events[1].op.as_deref(), Some("event"));
            assert_eq!(t.events[1].start_ms, 1100.0);
        }
        // An entry of a type this collector does not know is skipped, the trace kept.
        let body = format!(
            r#"{{"trace":{trace},"entries":[{{"entryType":"paint","startTime":1,"duration":1}}]}}"#
        );
        let t = &jsprof(&req(), body.as_bytes()).unwrap().traces().unwrap()[0];
        assert!(t.events.is_empty());
        for (bad, why) in [
            (
                r#"[{"entryType":"longtask","startTime":1,"duration":-1}]"#,
                "at least 0",
            ),
            (r#"[{"entryType":"longtask","duration":1}]"#, "startTime"),
        ] {
            let body = format!(r#"{{"trace":{trace},"entries":{bad}}}"#);
            let err = jsprof(&req(), body.as_bytes()).unwrap_err();
            assert_eq!(err.status, 400);
            assert!(err.reason.contains(why), "{err}");
        }
    }
}
