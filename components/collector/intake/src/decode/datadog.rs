//! Datadog's browser SDK (`@datadog/browser-rum` 7.16.2) intakes: its profiling upload
//! ([`datadog`]: a `multipart/form-data` body, an `event` part and a `wall-time.json` part,
//! the trace and the long tasks the SDK saw while it profiled) and its RUM batch
//! ([`datadog_rum`]: one RUM event per line, of which views, each view's INP candidate and
//! long tasks are kept as events). Sources (npm pack @datadog/browser-rum@7.16.2,
//! @datadog/browser-rum-core@7.16.2, and browser-core for the RUM batch's transport): each
//! decoder's doc names the files.

use std::collections::BTreeMap;

use jsprof_profiler::ProfilerTrace;
use serde::Deserialize;

use super::{
    checked, debug_ids, decode_content, inflate_deflate, ingested, str_at, Reject, Request,
};
use crate::model::{Event, Ingested, Kind, Meta, Observed, Source};

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::tests::req;

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
}
