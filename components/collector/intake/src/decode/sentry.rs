//! Sentry's envelope (<https://develop.sentry.dev/sdk/data-model/envelopes/>), as
//! `@sentry/browser` 11.12.0 sends it ([`sentry`]): each `profile_chunk` item a trace,
//! the transactions and spans that carry a `profiler_id` events, every other item skipped;
//! and a DSN's public key ([`dsn_public_key`]). Sources (npm pack @sentry/browser@11.12.0):
//! [`sentry`]'s doc names the files.

use std::collections::BTreeMap;

use jsprof_profiler::{FrameInfo, TraceBuilder};
use serde::Deserialize;

use super::{checked, debug_ids, decode_content, ingested, str_at, Reject, Request};
use crate::model::{Contents, Event, Ingested, Kind, Meta, Observed, Source};

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
    use crate::decode::tests::req;

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
    fn dsn_key() {
        assert_eq!(
            dsn_public_key("https://abc123@o1.ingest.sentry.io/42"),
            Some("abc123")
        );
        assert_eq!(dsn_public_key("https://host/42"), None);
    }
}
