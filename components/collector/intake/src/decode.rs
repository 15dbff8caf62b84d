//! The intakes' decoders: each turns one request body into [`Ingested`] traces, or refuses
//! it with a status and a reason. None of them panics on any input (fuzz/targets has a
//! target per decoder).
//!
//! - jsprof's own `POST /v1/profiles` ([`jsprof`]);
//! - Datadog's browser SDK profiling upload ([`datadog`]);
//! - Sentry's envelope with `profile_chunk` items ([`sentry`]).
//!
//! Every trace goes through the reader and the invariant check `jsprof convert` uses
//! (`jsprof_export::input::parse_traces`, `jsprof_export::check`), but for jsprof's common
//! envelope, which fast.rs reads straight into the log's record with the same checks (and
//! leaves to that reader whatever it would not read exactly so). Each decoder's traces
//! reach the log as one `record::Batch`.

use std::collections::BTreeMap;
use std::io::Read;

use jsprof_profiler::{FrameInfo, ProfilerTrace, TraceBuilder};
use serde::Deserialize;

use crate::model::{Contents, Event, Ingested, Kind, Meta, Observed, Source};
use crate::record::{self, Batch};

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

/// Datadog's browser SDK (`@datadog/browser-rum` 7.16.2) profiling upload: a
/// `multipart/form-data` body with an `event` part (JSON, `BrowserProfileEvent`) and a
/// `wall-time.json` part (the `BrowserProfilerTrace`, deflated by the SDK's deflate worker,
/// or as JSON when the SDK has no worker).
///
/// Sources (npm pack @datadog/browser-rum@7.16.2, @datadog/browser-rum-core@7.16.2):
/// - `src/domain/profiling/transport/formDataEmitter.ts`: `{ event: profile, 'wall-time.json': trace }`;
/// - browser-rum-core `src/transport/formDataTransport.ts`: `formData.append('event', Blob(json,
///   application/json), 'event.json')`, then each attachment encoded and appended under its name;
/// - `src/domain/profiling/transport/buildProfileEvent.ts`: the event's `application.id`,
///   `session.id`, `view.{id,name}`, `start`/`end`, `tags_profiler` (`service:`, `env:`,
///   `version:` ...);
/// - `src/types/profiling.ts`: `BrowserProfilerTrace` = the spec's trace plus `startClocks`,
///   `endClocks`, `clocksOrigin` (`{relative, timeStamp}`), `sampleInterval`, `longTasks`,
///   `views` ...
pub async fn datadog(req: &Request, body: bytes::Bytes) -> Result<Vec<Ingested>, Reject> {
    let content_type = req.content_type.as_deref().unwrap_or("");
    let boundary = multer::parse_boundary(content_type)
        .map_err(|e| Reject::bad(format!("not multipart/form-data with a boundary: {e}")))?;
    if body.len() > req.max_bytes {
        return Err(Reject::too_large(format!(
            "body over {} bytes",
            req.max_bytes
        )));
    }
    let stream = futures_util::stream::once(async move { Ok::<_, std::io::Error>(body) });
    let constraints = multer::Constraints::new()
        .size_limit(multer::SizeLimit::new().whole_stream(req.max_bytes as u64));
    let mut form = multer::Multipart::with_constraints(stream, boundary, constraints);
    let mut event: Option<Vec<u8>> = None;
    let mut wall_time: Option<Vec<u8>> = None;
    loop {
        let field = form
            .next_field()
            .await
            .map_err(|e| Reject::bad(format!("malformed multipart body: {e}")))?;
        let Some(field) = field else { break };
        let name = field.name().map(str::to_owned);
        let bytes = field
            .bytes()
            .await
            .map_err(|e| Reject::bad(format!("malformed multipart body: {e}")))?;
        match name.as_deref() {
            Some("event") => event = Some(bytes.to_vec()),
            Some("wall-time.json") => wall_time = Some(bytes.to_vec()),
            _ => {}
        }
    }
    let event = event.ok_or_else(|| Reject::bad("no `event` part"))?;
    let wall_time = wall_time.ok_or_else(|| Reject::bad("no `wall-time.json` part"))?;
    let wall_time = match wall_time.iter().find(|b| !b.is_ascii_whitespace()) {
        Some(b'{') => wall_time,
        _ => inflate_deflate(&wall_time, req.max_bytes)?,
    };

    #[derive(Deserialize, Default)]
    struct Id {
        #[serde(default)]
        id: Option<String>,
    }
    #[derive(Deserialize, Default)]
    struct View {
        #[serde(default)]
        name: Vec<String>,
    }
    #[derive(Deserialize)]
    struct ProfileEvent {
        #[serde(default)]
        application: Id,
        #[serde(default)]
        session: Id,
        #[serde(default)]
        view: View,
        #[serde(default)]
        tags_profiler: String,
    }
    #[derive(Deserialize)]
    struct Clocks {
        #[serde(default)]
        relative: Option<f64>,
        #[serde(rename = "timeStamp")]
        time_stamp: f64,
    }
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct LongTask {
        #[serde(default)]
        id: Option<String>,
        duration: f64,
        #[serde(default)]
        entry_type: Option<String>,
        start_clocks: Clocks,
    }
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct ViewEntry {
        start_clocks: Clocks,
        view_id: String,
    }
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct WallTime {
        #[serde(flatten)]
        trace: ProfilerTrace,
        clocks_origin: Option<Clocks>,
        #[serde(default)]
        long_tasks: Vec<LongTask>,
        #[serde(default)]
        views: Vec<ViewEntry>,
        /// `@datadog/browser-rum`'s `buildProfilerDebugIds`: the resources' debug ids.
        #[serde(default, rename = "debugIds")]
        debug_ids: Option<Vec<ResourceDebugId>>,
    }
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct ResourceDebugId {
        resource_id: usize,
        debug_id: String,
    }
    let event: ProfileEvent = serde_json::from_slice(&event)
        .map_err(|e| Reject::bad(format!("malformed `event` JSON: {e}")))?;
    let wall: WallTime = serde_json::from_slice(&wall_time)
        .map_err(|e| Reject::bad(format!("malformed `wall-time.json`: {e}")))?;
    let mut labels = BTreeMap::new();
    let mut release = None;
    for tag in event.tags_profiler.split(',') {
        if let Some((k, v)) = tag.split_once(':') {
            match k {
                "version" => release = Some(v.to_owned()),
                "service" | "env" => {
                    labels.insert(k.to_owned(), v.to_owned());
                }
                _ => {}
            }
        }
    }
    if let Some(app) = event.application.id {
        labels.insert("application".into(), app);
    }
    if !event.view.name.is_empty() {
        labels.insert("view".into(), event.view.name.join(","));
    }
    // The view the trace began in: the first by its start.
    let first_view = wall
        .views
        .iter()
        .filter(|v| v.start_clocks.time_stamp.is_finite())
        .min_by(|a, b| {
            a.start_clocks
                .time_stamp
                .total_cmp(&b.start_clocks.time_stamp)
        });
    let debug_ids = debug_ids(
        &wall.trace.resources,
        wall.debug_ids
            .iter()
            .flatten()
            .filter_map(|d| Some((wall.trace.resources.get(d.resource_id)?, &d.debug_id))),
    );
    let meta = Meta {
        page_url: req.referer.clone(),
        release,
        user_agent: req.user_agent.clone(),
        session: event.session.id,
        time_origin: wall.clocks_origin.as_ref().map(|c| c.time_stamp),
        labels,
        view_id: first_view.map(|v| v.view_id.clone()),
        debug_ids,
    };
    // The long tasks the SDK saw while it profiled, on the samples' clock: their time from
    // navigation start (`relative`) after the trace's origin, as the samples' are (the
    // page's own times where the trace has no origin).
    let events = wall
        .long_tasks
        .iter()
        .filter_map(|t| {
            let start = match (&wall.clocks_origin, t.start_clocks.relative) {
                (Some(o), Some(r)) => o.time_stamp + r - o.relative.unwrap_or(0.0),
                (Some(_), None) => t.start_clocks.time_stamp,
                (None, Some(r)) => r,
                (None, None) => return None,
            };
            (start.is_finite() && t.duration.is_finite() && t.duration >= 0.0).then(|| Event {
                kind: datadog_long_task_kind(t.entry_type.as_deref()),
                op: t.entry_type.clone(),
                name: None,
                id: t.id.clone(),
                session: None,
                view_id: None,
                url: None,
                start_ms: start,
                duration_ms: t.duration,
            })
        })
        .collect();
    let mut trace = ingested(req, Source::Datadog, meta, checked(wall.trace)?);
    trace.events = events;
    Ok(vec![trace])
}

/// Datadog's RUM batch (`@datadog/browser-rum` 7.16.2, `ddforward=/api/v2/rum?…`): one
/// RUM event per line, the whole deflated (zlib) when the URL says `dd-evp-encoding=deflate`
/// (`compressIntakeRequests`), as `text/plain` either way.
///
/// Kept, as events linked to the profiles of the same session: views (`view.url`, its
/// name: `view.name`, else the URL's path, as Datadog names a view that has none; from
/// `date` for `view.time_spent`), each view's INP candidate (`view.interaction_to_next_paint`
/// at `view.interaction_to_next_paint_time` after the view's start) as an interaction, and
/// long tasks (`long_task.entry_type` `long-animation-frame` where the browser has LoAF,
/// else `long-task`; from `date` for `long_task.duration`). Datadog's durations are in
/// nanoseconds. Every other event (actions, resources, errors, telemetry, vitals) is
/// skipped, and so is an event without the members it is kept by. Sources:
/// browser-rum-core `src/domain/longTask/longTaskCollection.ts`, `src/rumEvent.types.ts`;
/// browser-core `src/transport/httpRequest.ts` (lines of JSON, no `Content-Type`).
pub fn datadog_rum(req: &Request, body: &[u8], deflated: bool) -> Result<Vec<Observed>, Reject> {
    let body = decode_content(req.content_encoding.as_deref(), body, req.max_bytes)?;
    let text = if deflated {
        std::borrow::Cow::Owned(inflate_deflate(&body, req.max_bytes)?)
    } else {
        body
    };
    let mut events = Vec::new();
    for (i, line) in text.split(|&b| b == b'\n').enumerate() {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let v: serde_json::Value = serde_json::from_slice(line)
            .map_err(|e| Reject::bad(format!("RUM event on line {}: {e}", i + 1)))?;
        events.extend(rum_events(&v));
    }
    Ok(if events.is_empty() {
        Vec::new()
    } else {
        vec![Observed {
            project: req.project.clone(),
            source: Source::Datadog,
            received: req.received,
            events,
        }]
    })
}

/// The events one RUM event gives (none for the kinds not kept).
fn rum_events(v: &serde_json::Value) -> Vec<Event> {
    let num = |p: &str| v.pointer(p).and_then(serde_json::Value::as_f64);
    let ns = |p: &str| num(p).map(|n| n / 1e6);
    let ok =
        |start: f64, duration: f64| start.is_finite() && duration.is_finite() && duration >= 0.0;
    let session = str_at(v, "/session/id");
    let view_id = str_at(v, "/view/id");
    let url = str_at(v, "/view/url");
    let Some(date) = num("/date") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    match v.get("type").and_then(serde_json::Value::as_str) {
        Some("view") => {
            let Some(id) = view_id.clone() else {
                return out;
            };
            let duration = ns("/view/time_spent").unwrap_or(0.0);
            if ok(date, duration) {
                out.push(Event {
                    kind: Kind::View,
                    op: str_at(v, "/view/loading_type"),
                    name: str_at(v, "/view/name").or_else(|| url.as_deref().and_then(url_path)),
                    id: Some(id.clone()),
                    session: session.clone(),
                    view_id: Some(id.clone()),
                    url: url.clone(),
                    start_ms: date,
                    duration_ms: duration,
                });
            }
            if let (Some(inp), Some(at)) = (
                ns("/view/interaction_to_next_paint"),
                ns("/view/interaction_to_next_paint_time"),
            ) {
                if ok(date + at, inp) {
                    out.push(Event {
                        kind: Kind::Interaction,
                        op: Some("inp".into()),
                        name: str_at(v, "/view/interaction_to_next_paint_target_selector"),
                        id: Some(format!("{id}/inp")),
                        session,
                        view_id: Some(id),
                        url,
                        start_ms: date + at,
                        duration_ms: inp,
                    });
                }
            }
        }
        Some("long_task") => {
            let entry_type = str_at(v, "/long_task/entry_type");
            let duration = ns("/long_task/duration").unwrap_or(-1.0);
            if ok(date, duration) {
                // What ran in the frame: its longest script's invoker.
                let invoker = v
                    .pointer("/long_task/scripts")
                    .and_then(|s| s.as_array())
                    .and_then(|scripts| {
                        scripts.iter().max_by(|a, b| {
                            let d = |s: &serde_json::Value| {
                                s.get("duration").and_then(|d| d.as_f64()).unwrap_or(0.0)
                            };
                            d(a).total_cmp(&d(b))
                        })
                    })
                    .and_then(|s| str_at(s, "/invoker"));
                out.push(Event {
                    kind: datadog_long_task_kind(entry_type.as_deref()),
                    op: entry_type,
                    name: invoker,
                    id: str_at(v, "/long_task/id"),
                    session,
                    view_id,
                    url,
                    start_ms: date,
                    duration_ms: duration,
                });
            }
        }
        _ => {}
    }
    out
}

/// A URL's path (`https://shop.example/cart?x=1` → `/cart`).
fn url_path(url: &str) -> Option<String> {
    let after = url.split_once("://").map_or(url, |(_, rest)| rest);
    let path = after.find('/').map_or("/", |i| &after[i..]);
    let end = path.find(['?', '#']).unwrap_or(path.len());
    Some(path[..end].to_owned()).filter(|p| !p.is_empty())
}

/// A Datadog long task's kind by its `entry_type`: a Long Animation Frame where the
/// browser has them (the SDK then observes those instead of long tasks).
fn datadog_long_task_kind(entry_type: Option<&str>) -> Kind {
    match entry_type {
        Some("long-animation-frame") => Kind::Loaf,
        _ => Kind::LongTask,
    }
}

/// A Sentry envelope (<https://develop.sentry.dev/sdk/data-model/envelopes/>): a header
/// line, then items, each a header line and a payload (`length` bytes if the header says,
/// else up to the next newline). Each `profile_chunk` item becomes one trace; transactions
/// and spans are kept where they carry a `profiler_id` (their own, their transaction's or
/// their segment's in the same envelope); every other item is skipped, as Relay answers
/// for the items it drops (an envelope without a profile is not an error).
///
/// Sources (npm pack @sentry/browser@11.12.0): `build/npm/esm/prod/profiling/utils.js`,
/// `createProfileChunkPayload` and `convertToContinuousProfile`: the chunk's `release`,
/// `environment`, `platform`, `profile.frames` (`{function, abs_path, lineno, colno}`,
/// indexed as the trace's frames), `profile.stacks` (frame ids, leaf to root),
/// `profile.samples` (`{stack_id, thread_id, timestamp}` in seconds since the epoch:
/// `(timeOrigin + timestamp) / 1000`); `UIProfiler.js`, `_sendProfileChunk`: the envelope
/// header (`event_id`, `sent_at`, `sdk`, `dsn` when tunnelled) and the item header
/// `{type: "profile_chunk", platform: "javascript"}`; `_beginProfiling`: the scope's
/// `profile` context `{profiler_id}`, which @sentry/core puts on each span as
/// `sentry.profiler_id` (`tracing/spans/scopeContextAttributes.js`). With tracing on, the
/// SDK streams spans: `span` items of `application/vnd.sentry.items.span.v2+json`,
/// `{"version": 2, "items": [{name, span_id, start_timestamp, end_timestamp, is_segment,
/// attributes: {"sentry.op", "sentry.segment.id", "sentry.profiler_id", "url.full", ..}}]}`,
/// where the segment (the page load) carries the profiler's id and its children the
/// segment's id.
pub fn sentry(req: &Request, body: &[u8]) -> Result<Sentry, Reject> {
    let body = decode_content(req.content_encoding.as_deref(), body, req.max_bytes)?;
    let mut rest: &[u8] = &body;
    let header_line = take_line(&mut rest);
    let header: SentryHeader = serde_json::from_slice(header_line)
        .map_err(|e| Reject::bad(format!("malformed envelope header: {e}")))?;
    #[derive(Deserialize)]
    struct ItemHeader {
        #[serde(rename = "type")]
        kind: String,
        length: Option<usize>,
    }
    let mut traces = Vec::new();
    let mut spans: Vec<SentrySpan> = Vec::new();
    let mut dropped = Vec::new();
    while !rest.iter().all(u8::is_ascii_whitespace) {
        let line = take_line(&mut rest);
        let item: ItemHeader = serde_json::from_slice(line)
            .map_err(|e| Reject::bad(format!("malformed envelope item header: {e}")))?;
        let payload = match item.length {
            Some(n) => {
                if n > rest.len() {
                    return Err(Reject::bad("envelope item shorter than its length"));
                }
                let (payload, after) = rest.split_at(n);
                rest = after;
                if rest.first() == Some(&b'\n') {
                    rest = &rest[1..];
                }
                payload
            }
            None => take_line(&mut rest),
        };
        // An item whose payload cannot be read is dropped, as Relay drops it (it reads
        // payloads after it has answered): the envelope is still answered 200, and the
        // reason is in `dropped` (the answer's `X-Jsprof-Dropped`).
        let read = match item.kind.as_str() {
            "profile_chunk" => sentry_chunk(req, payload).map(|t| traces.push(t)),
            "transaction" => sentry_transaction(payload).map(|s| spans.extend(s)),
            "span" => sentry_spans(payload).map(|s| spans.extend(s)),
            _ => Ok(()),
        };
        if let Err(e) = read {
            dropped.push(format!("{}: {}", item.kind, e.reason));
        }
    }
    let events = sentry_events(spans);
    let observed = if events.is_empty() {
        Vec::new()
    } else {
        vec![Observed {
            project: req.project.clone(),
            source: Source::Sentry,
            received: req.received,
            events,
        }]
    };
    Ok(Sentry {
        header,
        contents: Contents { traces, observed },
        dropped,
    })
}

/// A Sentry envelope as read: its header, what it leaves to keep, and why each item it had
/// to drop was dropped (a payload that is not what its type says).
#[derive(Debug, Clone, Default)]
pub struct Sentry {
    pub header: SentryHeader,
    pub contents: Contents,
    pub dropped: Vec<String>,
}

/// A transaction or span as the collector reads it, from any of the SDK's forms.
#[derive(Debug, Clone, Default)]
struct SentrySpan {
    span_id: Option<String>,
    op: Option<String>,
    name: Option<String>,
    /// Seconds since the epoch.
    start: Option<f64>,
    end: Option<f64>,
    is_segment: bool,
    segment_id: Option<String>,
    profiler_id: Option<String>,
    url: Option<String>,
}

fn json_payload(payload: &[u8], what: &str) -> Result<serde_json::Value, Reject> {
    serde_json::from_slice(payload).map_err(|e| Reject::bad(format!("malformed {what}: {e}")))
}

fn str_at(v: &serde_json::Value, pointer: &str) -> Option<String> {
    v.pointer(pointer)
        .and_then(serde_json::Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

/// A transaction event (the SDK's form before span streaming): the transaction, whose
/// `contexts.profile.profiler_id` its spans share.
fn sentry_transaction(payload: &[u8]) -> Result<Vec<SentrySpan>, Reject> {
    let v = json_payload(payload, "transaction")?;
    let segment = SentrySpan {
        span_id: str_at(&v, "/contexts/trace/span_id"),
        op: str_at(&v, "/contexts/trace/op"),
        name: str_at(&v, "/transaction"),
        start: v.get("start_timestamp").and_then(serde_json::Value::as_f64),
        end: v.get("timestamp").and_then(serde_json::Value::as_f64),
        is_segment: true,
        segment_id: None,
        profiler_id: str_at(&v, "/contexts/profile/profiler_id"),
        url: str_at(&v, "/request/url"),
    };
    let mut out = Vec::new();
    for s in v
        .get("spans")
        .and_then(|s| s.as_array())
        .into_iter()
        .flatten()
    {
        out.push(SentrySpan {
            span_id: str_at(s, "/span_id"),
            op: str_at(s, "/op"),
            name: str_at(s, "/description"),
            start: s.get("start_timestamp").and_then(serde_json::Value::as_f64),
            end: s.get("timestamp").and_then(serde_json::Value::as_f64),
            is_segment: false,
            segment_id: segment.span_id.clone(),
            profiler_id: segment.profiler_id.clone(),
            url: segment.url.clone(),
        });
    }
    out.insert(0, segment);
    Ok(out)
}

/// A `span` item: streamed spans (`{"version": 2, "items": [..]}`, attributes as
/// `{"value", "type"}`) or one standalone span (`data` for its attributes).
fn sentry_spans(payload: &[u8]) -> Result<Vec<SentrySpan>, Reject> {
    let v = json_payload(payload, "span")?;
    let items: Vec<&serde_json::Value> = match v.get("items").and_then(|i| i.as_array()) {
        Some(items) => items.iter().collect(),
        None => vec![&v],
    };
    Ok(items
        .into_iter()
        .map(|s| {
            // v2's `attributes.K.value`, or v1's `data.K`.
            let attr = |k: &str| {
                s.get("attributes")
                    .and_then(|a| a.get(k))
                    .and_then(|a| a.get("value"))
                    .or_else(|| s.get("data").and_then(|d| d.get(k)))
                    .and_then(serde_json::Value::as_str)
                    .filter(|v| !v.is_empty())
                    .map(str::to_owned)
            };
            SentrySpan {
                span_id: str_at(s, "/span_id"),
                op: attr("sentry.op").or_else(|| str_at(s, "/op")),
                name: str_at(s, "/name").or_else(|| str_at(s, "/description")),
                start: s.get("start_timestamp").and_then(serde_json::Value::as_f64),
                end: s
                    .get("end_timestamp")
                    .or_else(|| s.get("timestamp"))
                    .and_then(serde_json::Value::as_f64),
                is_segment: s.get("is_segment").and_then(serde_json::Value::as_bool) == Some(true),
                segment_id: attr("sentry.segment.id").or_else(|| str_at(s, "/segment_id")),
                profiler_id: attr("sentry.profiler_id").or_else(|| str_at(s, "/profiler_id")),
                url: attr("url.full"),
            }
        })
        .collect())
}

/// A Sentry span's kind by its `op`, then by whether it is a segment: the SDK sends a slow
/// interaction (`ui.interaction.click`, its INP span) as a standalone span, which is its own
/// segment.
fn sentry_kind(op: Option<&str>, is_segment: bool) -> Kind {
    match op.unwrap_or("") {
        "ui.long-task" | "ui.long_task" => Kind::LongTask,
        "ui.long-animation-frame" | "ui.long_animation_frame" => Kind::Loaf,
        op if op.starts_with("ui.interaction") => Kind::Interaction,
        _ if is_segment => Kind::Transaction,
        _ => Kind::Span,
    }
}

/// The spans of one envelope that carry a `profiler_id`, theirs or their segment's, as
/// events: the profiler's id is their session, as it is the chunks'.
fn sentry_events(spans: Vec<SentrySpan>) -> Vec<Event> {
    let profilers: BTreeMap<String, String> = spans
        .iter()
        .filter_map(|s| Some((s.span_id.clone()?, s.profiler_id.clone()?)))
        .collect();
    let urls: BTreeMap<String, String> = spans
        .iter()
        .filter(|s| s.is_segment)
        .filter_map(|s| Some((s.span_id.clone()?, s.url.clone()?)))
        .collect();
    spans
        .into_iter()
        .filter_map(|s| {
            let segment = s.segment_id.clone();
            let profiler = s
                .profiler_id
                .clone()
                .or_else(|| profilers.get(segment.as_deref()?).cloned())?;
            let (start, end) = (s.start? * 1000.0, s.end? * 1000.0);
            // Each finite, their difference too (1e308 - -1e308 is not).
            if !start.is_finite() || !end.is_finite() || end < start || !(end - start).is_finite() {
                return None;
            }
            let url = s
                .url
                .clone()
                .or_else(|| urls.get(segment.as_deref()?).cloned());
            Some(Event {
                kind: sentry_kind(s.op.as_deref(), s.is_segment),
                op: s.op,
                name: s.name,
                view_id: if s.is_segment {
                    s.span_id.clone()
                } else {
                    segment
                },
                id: s.span_id,
                session: Some(profiler),
                url,
                start_ms: start,
                duration_ms: end - start,
            })
        })
        .collect()
}

/// The envelope header's members the collector reads.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct SentryHeader {
    /// The DSN, when the SDK posts through a tunnel.
    #[serde(default)]
    pub dsn: Option<String>,
    /// The event's id, which Relay's answer repeats (`{"id": ...}`).
    #[serde(default)]
    pub event_id: Option<String>,
}

fn take_line<'a>(rest: &mut &'a [u8]) -> &'a [u8] {
    match rest.iter().position(|&b| b == b'\n') {
        Some(i) => {
            let line = &rest[..i];
            *rest = &rest[i + 1..];
            line
        }
        None => std::mem::take(rest),
    }
}

fn sentry_chunk(req: &Request, payload: &[u8]) -> Result<Ingested, Reject> {
    #[derive(Deserialize)]
    struct Frame {
        #[serde(default)]
        function: Option<String>,
        #[serde(default)]
        abs_path: Option<String>,
        #[serde(default)]
        lineno: Option<u64>,
        #[serde(default)]
        colno: Option<u64>,
    }
    #[derive(Deserialize)]
    struct Sample {
        stack_id: u64,
        timestamp: f64,
    }
    #[derive(Deserialize)]
    struct Profile {
        frames: Vec<Option<Frame>>,
        stacks: Vec<Option<Vec<u64>>>,
        samples: Vec<Option<Sample>>,
    }
    #[derive(Deserialize)]
    struct Chunk {
        #[serde(default)]
        release: Option<String>,
        #[serde(default)]
        environment: Option<String>,
        #[serde(default)]
        profiler_id: Option<String>,
        profile: Profile,
        #[serde(default)]
        debug_meta: Option<DebugMeta>,
    }
    /// `@sentry/core`'s `getDebugImagesForResources`: `{type: "sourcemap", code_file,
    /// debug_id}` for each script of the chunk's frames the page knows a debug id of.
    #[derive(Deserialize)]
    struct DebugMeta {
        #[serde(default)]
        images: Vec<Option<Image>>,
    }
    #[derive(Deserialize)]
    struct Image {
        #[serde(default, rename = "type")]
        kind: Option<String>,
        #[serde(default)]
        code_file: Option<String>,
        #[serde(default)]
        debug_id: Option<String>,
    }
    let chunk: Chunk = serde_json::from_slice(payload)
        .map_err(|e| Reject::bad(format!("malformed profile_chunk: {e}")))?;
    let p = chunk.profile;
    let position = |v: Option<u64>, what: &str, i: usize| -> Result<Option<u32>, Reject> {
        v.map(|n| {
            u32::try_from(n).map_err(|_| Reject::bad(format!("frame {i}: {what} {n} out of range")))
        })
        .transpose()
    };
    let frames: Vec<Option<FrameInfo>> = p
        .frames
        .into_iter()
        .enumerate()
        .map(|(i, f)| {
            f.map(|f| {
                Ok(FrameInfo {
                    name: f.function.unwrap_or_default(),
                    resource: f.abs_path,
                    line: position(f.lineno, "lineno", i)?,
                    column: position(f.colno, "colno", i)?,
                })
            })
            .transpose()
        })
        .collect::<Result<_, Reject>>()?;
    // Sentry's stacks are frame ids leaf to root; the spec's are a tree, root first.
    let mut stacks: Vec<Option<Vec<FrameInfo>>> = Vec::with_capacity(p.stacks.len());
    for (i, s) in p.stacks.into_iter().enumerate() {
        let Some(ids) = s else {
            stacks.push(None);
            continue;
        };
        let mut list = Vec::with_capacity(ids.len());
        for id in ids.iter().rev() {
            let frame = usize::try_from(*id)
                .ok()
                .and_then(|id| frames.get(id))
                .and_then(Option::as_ref)
                .ok_or_else(|| Reject::bad(format!("stack {i}: frame {id} out of range")))?;
            list.push(frame.clone());
        }
        stacks.push(Some(list));
    }
    let samples: Vec<Sample> = p.samples.into_iter().flatten().collect();
    let origin_s = samples
        .iter()
        .map(|s| s.timestamp)
        .filter(|t| t.is_finite())
        .fold(f64::INFINITY, f64::min);
    let origin_ms = if origin_s.is_finite() {
        (origin_s * 1000.0).floor()
    } else {
        0.0
    };
    let mut builder = TraceBuilder::new();
    builder.reserve_samples(samples.len());
    let mut stack_ids: Vec<Option<Option<u64>>> = vec![None; stacks.len()];
    for (i, s) in samples.iter().enumerate() {
        let index = usize::try_from(s.stack_id).unwrap_or(usize::MAX);
        let Some(Some(frames)) = stacks.get(index) else {
            return Err(Reject::bad(format!(
                "sample {i}: stack_id {} out of range",
                s.stack_id
            )));
        };
        let id = *stack_ids[index].get_or_insert_with(|| builder.stack_id_of(frames));
        builder.push_sample(s.timestamp * 1000.0 - origin_ms, id, None);
    }
    let mut labels = BTreeMap::new();
    if let Some(env) = chunk.environment {
        labels.insert("environment".into(), env);
    }
    if let Some(id) = &chunk.profiler_id {
        labels.insert("profiler_id".into(), id.clone());
    }
    // The profiler's session (one a page load: `UIProfiler.js` makes its id when the page
    // starts the SDK) is the trace's session: its chunks share it, and so do the
    // transactions and spans it covers (their `sentry.profiler_id`).
    let trace = checked(builder.finish())?;
    let images = chunk.debug_meta.map(|d| d.images).unwrap_or_default();
    let debug_ids = debug_ids(
        &trace.resources,
        images
            .iter()
            .flatten()
            .filter(|i| i.kind.as_deref().is_none_or(|k| k == "sourcemap"))
            .filter_map(|i| Some((i.code_file.as_ref()?, i.debug_id.as_ref()?))),
    );
    let meta = Meta {
        page_url: req.referer.clone(),
        release: chunk.release.filter(|r| !r.is_empty()),
        user_agent: req.user_agent.clone(),
        session: chunk.profiler_id.filter(|p| !p.is_empty()),
        time_origin: origin_s.is_finite().then_some(origin_ms),
        labels,
        view_id: None,
        debug_ids,
    };
    Ok(ingested(req, Source::Sentry, meta, trace))
}

/// The public key of a Sentry DSN (`https://KEY@host/PROJECT`).
pub fn dsn_public_key(dsn: &str) -> Option<&str> {
    let after_scheme = dsn.split_once("://")?.1;
    let userinfo = after_scheme.split_once('@')?.0;
    Some(userinfo.split(':').next().unwrap_or(userinfo)).filter(|k| !k.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req() -> Request {
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

    /// Span streaming (@sentry/browser 11 with tracing on): the page load carries the
    /// profiler's id, its children the segment's id; a span of another segment, and the
    /// envelope's other items, are skipped.
    #[test]
    fn sentry_spans_with_a_profiler_are_kept() {
        let span = |id: &str, op: &str, segment: bool, attrs: serde_json::Value| {
            let mut a = serde_json::json!({
                "sentry.op": {"value": op, "type": "string"},
                "sentry.segment.id": {"value": if segment { id } else { "seg1" }, "type": "string"},
            });
            for (k, v) in attrs.as_object().unwrap() {
                a[k] = serde_json::json!({"value": v, "type": "string"});
            }
            serde_json::json!({"name": op, "span_id": id, "start_timestamp": 1000.5,
                "end_timestamp": 1001.0, "is_segment": segment, "attributes": a})
        };
        let items = serde_json::json!({"version": 2, "items": [
            span("seg1", "pageload", true, serde_json::json!({"sentry.profiler_id": "p1", "url.full": "https://a.test/x"})),
            span("s2", "ui.long_animation_frame", false, serde_json::json!({})),
            span("s3", "ui.interaction.click", false, serde_json::json!({})),
            span("other", "pageload", true, serde_json::json!({})),
        ]});
        let body = format!(
            "{{\"event_id\":\"e1\"}}\n{{\"type\":\"session\"}}\n{{\"sid\":1}}\n{{\"type\":\"span\",\"item_count\":4}}\n{items}\n"
        );
        let Sentry {
            header,
            contents: c,
            ..
        } = sentry(&req(), body.as_bytes()).unwrap();
        assert_eq!(header.event_id.as_deref(), Some("e1"));
        assert!(c.traces.is_empty());
        let events = &c.observed[0].events;
        let kinds: Vec<Kind> = events.iter().map(|e| e.kind).collect();
        assert_eq!(kinds, [Kind::Transaction, Kind::Loaf, Kind::Interaction]);
        for e in events {
            assert_eq!(e.session.as_deref(), Some("p1"));
            assert_eq!(e.view_id.as_deref(), Some("seg1"));
            assert_eq!(e.url.as_deref(), Some("https://a.test/x"));
            assert_eq!((e.start_ms, e.duration_ms), (1_000_500.0, 500.0));
        }
        // Nothing kept: still an answer, as Relay gives one.
        let c = sentry(&req(), b"{}\n{\"type\":\"client_report\"}\n{}\n")
            .unwrap()
            .contents;
        assert!(c.is_empty());
        // A transaction event (the SDK's form before span streaming).
        let tx = serde_json::json!({"type": "transaction", "transaction": "/cart",
            "start_timestamp": 10.0, "timestamp": 12.0, "request": {"url": "https://a.test/cart"},
            "contexts": {"trace": {"span_id": "t1", "op": "pageload"}, "profile": {"profiler_id": "p2"}},
            "spans": [{"span_id": "c1", "op": "ui.long-task", "description": "Main UI thread blocked",
                       "start_timestamp": 10.5, "timestamp": 10.6}]});
        let body = format!("{{}}\n{{\"type\":\"transaction\"}}\n{tx}\n");
        let c = sentry(&req(), body.as_bytes()).unwrap().contents;
        let e = &c.observed[0].events;
        assert_eq!((e[0].kind, e[1].kind), (Kind::Transaction, Kind::LongTask));
        assert_eq!(e[1].session.as_deref(), Some("p2"));
        assert_eq!(e[1].url.as_deref(), Some("https://a.test/cart"));
        assert!((e[1].duration_ms - 100.0).abs() < 1e-6);
        // An item that is not what its type says is dropped, as Relay drops it, and the
        // envelope's other items kept; the reason is said.
        let body = format!(
            "{{}}\n{{\"type\":\"span\"}}\nnope\n{{\"type\":\"profile_chunk\"}}\n{{}}\n{{\"type\":\"transaction\"}}\n{tx}\n"
        );
        let s = sentry(&req(), body.as_bytes()).unwrap();
        assert_eq!(s.contents.observed[0].events.len(), 2);
        assert_eq!(s.dropped.len(), 2, "{:?}", s.dropped);
        assert!(
            s.dropped[0].starts_with("span: malformed span"),
            "{:?}",
            s.dropped
        );
        assert!(s.dropped[1].starts_with("profile_chunk: malformed profile_chunk"));
        // An envelope that cannot be read is still a 400.
        let err = sentry(&req(), b"{}\nnope\n").unwrap_err();
        assert_eq!(err.status, 400);
    }

    #[test]
    fn a_standalone_interaction_span_is_an_interaction() {
        // The SDK's INP span: standalone (its own segment), with the profiler's id.
        let span = serde_json::json!({"span_id": "i1", "start_timestamp": 5.0, "timestamp": 5.25,
            "is_segment": true, "segment_id": "i1", "op": "ui.interaction.click",
            "description": "body > button#buy", "data": {"sentry.profiler_id": "p3"}});
        let body = format!("{{}}\n{{\"type\":\"span\"}}\n{span}\n");
        let e = &sentry(&req(), body.as_bytes()).unwrap().contents.observed[0].events;
        assert_eq!(e.len(), 1);
        assert_eq!(e[0].kind, Kind::Interaction);
        assert_eq!(e[0].session.as_deref(), Some("p3"));
        assert_eq!((e[0].start_ms, e[0].duration_ms), (5000.0, 250.0));
    }

    #[test]
    fn a_span_whose_duration_overflows_is_not_kept() {
        let span = serde_json::json!({"span_id": "x", "start_timestamp": -1e305, "timestamp": 1e305,
            "is_segment": true, "data": {"sentry.profiler_id": "p"}});
        let body = format!("{{}}\n{{\"type\":\"span\"}}\n{span}\n");
        assert!(sentry(&req(), body.as_bytes()).unwrap().contents.is_empty());
    }

    #[test]
    fn rum_views_long_tasks_and_inp() {
        let lines = [
            r##"{"type":"view","date":1000,"session":{"id":"s"},"view":{"id":"v","url":"https://a.test/cart?x=1#y","time_spent":2000000000,"interaction_to_next_paint":300000000,"interaction_to_next_paint_time":500000000,"interaction_to_next_paint_target_selector":"#buy"}}"##,
            r#"{"type":"long_task","date":1100,"session":{"id":"s"},"view":{"id":"v"},"long_task":{"id":"l","entry_type":"long-animation-frame","duration":90000000,"scripts":[{"duration":1,"invoker":"a"},{"duration":5,"invoker":"b"}]}}"#,
            r#"{"type":"action","date":1200}"#,
            r#"{"type":"long_task","session":{"id":"s"}}"#,
        ]
        .join("\n");
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        std::io::Write::write_all(&mut z, lines.as_bytes()).unwrap();
        let deflated = z.finish().unwrap();
        for (body, deflate) in [(lines.as_bytes().to_vec(), false), (deflated, true)] {
            let o = datadog_rum(&req(), &body, deflate).unwrap();
            let e = &o[0].events;
            assert_eq!(e.len(), 3, "{e:?}");
            assert_eq!(e[0].kind, Kind::View);
            assert_eq!(e[0].name.as_deref(), Some("/cart"));
            assert_eq!(e[0].duration_ms, 2000.0);
            assert_eq!(e[1].kind, Kind::Interaction);
            assert_eq!((e[1].start_ms, e[1].duration_ms), (1500.0, 300.0));
            assert_eq!(e[2].kind, Kind::Loaf);
            assert_eq!(e[2].name.as_deref(), Some("b"));
            assert_eq!((e[2].start_ms, e[2].duration_ms), (1100.0, 90.0));
            assert!(e.iter().all(|e| e.session.as_deref() == Some("s")));
        }
        assert!(
            datadog_rum(&req(), b"{\"type\":\"action\",\"date\":1}\n", false)
                .unwrap()
                .is_empty()
        );
        assert_eq!(
            datadog_rum(&req(), b"{}\n[", false).unwrap_err().status,
            400
        );
    }

    #[test]
    fn dsn_key() {
        assert_eq!(
            dsn_public_key("https://abc123@o1.ingest.sentry.io/42"),
            Some("abc123")
        );
        assert_eq!(dsn_public_key("https://host/42"), None);
    }
}
