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

use crate::model::{Ingested, Meta, Source};
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

fn ingested(req: &Request, source: Source, meta: Meta, trace: ProfilerTrace) -> Ingested {
    Ingested {
        project: req.project.clone(),
        source,
        received: req.received,
        meta,
        trace,
    }
}

/// `POST /v1/profiles`. The body (after `Content-Encoding`) is either
///
/// - an envelope: `{"trace": ProfilerTrace, "pageUrl", "release", "userAgent", "session",
///   "timeOrigin", "labels": {..}}`, every member but `trace` optional; or
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
    if let Some((mut meta, trace)) = crate::fast::envelope(&json) {
        defaults(&mut meta);
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
        return Ok(Batch { count: 1, payload });
    }
    let (mut meta, traces) = parse_body(&json)?;
    defaults(&mut meta);
    if traces.is_empty() {
        return Err(Reject::bad("no trace in the body"));
    }
    let traces = traces
        .into_iter()
        .map(|t| Ok(ingested(req, Source::Jsprof, meta.clone(), checked(t)?)))
        .collect::<Result<Vec<_>, Reject>>()?;
    Ok(Batch::of(&traces))
}

/// A `POST /v1/profiles` body read by serde: an envelope, or bare traces. The fast path
/// (fast.rs) reads the common envelope and leaves everything else, errors included, here.
pub fn parse_body(json: &[u8]) -> Result<(Meta, Vec<ProfilerTrace>), Reject> {
    #[derive(Deserialize)]
    struct Envelope {
        trace: Option<ProfilerTrace>,
        #[serde(flatten)]
        meta: Meta,
    }
    let first = json.iter().find(|b| !b.is_ascii_whitespace());
    Ok(match first {
        Some(b'{') => {
            let envelope: Envelope = serde_json::from_slice(json)
                .map_err(|e| Reject::bad(format!("malformed JSON: {e}")))?;
            match envelope.trace {
                Some(trace) => (envelope.meta, vec![trace]),
                None => (
                    Meta::default(),
                    jsprof_export::input::parse_traces(json).map_err(Reject::bad)?,
                ),
            }
        }
        _ => (
            Meta::default(),
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
    struct Event {
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
        #[serde(rename = "timeStamp")]
        time_stamp: f64,
    }
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct WallTime {
        #[serde(flatten)]
        trace: ProfilerTrace,
        clocks_origin: Option<Clocks>,
    }
    let event: Event = serde_json::from_slice(&event)
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
    let meta = Meta {
        page_url: req.referer.clone(),
        release,
        user_agent: req.user_agent.clone(),
        session: event.session.id,
        time_origin: wall.clocks_origin.map(|c| c.time_stamp),
        labels,
    };
    Ok(vec![ingested(
        req,
        Source::Datadog,
        meta,
        checked(wall.trace)?,
    )])
}

/// A Sentry envelope (<https://develop.sentry.dev/sdk/data-model/envelopes/>): a header
/// line, then items, each a header line and a payload (`length` bytes if the header says,
/// else up to the next newline). Each `profile_chunk` item becomes one trace; other items
/// are skipped.
///
/// Sources (npm pack @sentry/browser@11.12.0): `build/npm/esm/prod/profiling/utils.js`,
/// `createProfileChunkPayload` and `convertToContinuousProfile`: the chunk's `release`,
/// `environment`, `platform`, `profile.frames` (`{function, abs_path, lineno, colno}`,
/// indexed as the trace's frames), `profile.stacks` (frame ids, leaf to root),
/// `profile.samples` (`{stack_id, thread_id, timestamp}` in seconds since the epoch:
/// `(timeOrigin + timestamp) / 1000`); `UIProfiler.js`, `_sendProfileChunk`: the envelope
/// header (`event_id`, `sent_at`, `sdk`, `dsn` when tunnelled) and the item header
/// `{type: "profile_chunk", platform: "javascript"}`.
pub fn sentry(req: &Request, body: &[u8]) -> Result<(SentryHeader, Vec<Ingested>), Reject> {
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
    let mut out = Vec::new();
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
        if item.kind == "profile_chunk" {
            out.push(sentry_chunk(req, payload)?);
        }
    }
    if out.is_empty() {
        return Err(Reject::bad("no profile_chunk item in the envelope"));
    }
    Ok((header, out))
}

/// The envelope header's members the collector reads.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct SentryHeader {
    /// The DSN, when the SDK posts through a tunnel.
    #[serde(default)]
    pub dsn: Option<String>,
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
    if let Some(id) = chunk.profiler_id {
        labels.insert("profiler_id".into(), id);
    }
    let meta = Meta {
        page_url: req.referer.clone(),
        release: chunk.release.filter(|r| !r.is_empty()),
        user_agent: req.user_agent.clone(),
        session: None,
        time_origin: origin_s.is_finite().then_some(origin_ms),
        labels,
    };
    Ok(ingested(
        req,
        Source::Sentry,
        meta,
        checked(builder.finish())?,
    ))
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
    fn dsn_key() {
        assert_eq!(
            dsn_public_key("https://abc123@o1.ingest.sentry.io/42"),
            Some("abc123")
        );
        assert_eq!(dsn_public_key("https://host/42"), None);
    }
}
