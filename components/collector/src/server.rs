//! `jsprof collect`: the HTTP intake. Every request is decoded (decode/), appended to the
//! write-ahead log and answered only once the fsync covering it is done (wal/). Sealed
//! segments are compacted into Parquet by one thread (store.rs).
//!
//! Routes, each answered as its SDK's own backend answers:
//! - `POST /v1/profiles`: jsprof's own (key: `X-Jsprof-Key` header or `?key=`); 202
//!   `{"accepted": N}`;
//! - Datadog's browser SDK, at `/api/v2/TRACK` or any path with `?ddforward=/api/v2/TRACK…`
//!   (its `proxy` option; key: the client token, `dd-api-key` in the query or in
//!   `ddforward`'s, or the quota check's `DD-CLIENT-TOKEN` header): `POST profile` (a
//!   trace and its long tasks), `POST rum` (views, long tasks, INP kept), `POST replay` and
//!   `POST logs` (nothing kept), each 202 `{}`; `GET profiling/quota`, 200 and admitted;
//! - `POST /api/PROJECT/envelope/`: a Sentry envelope (key: the DSN's public key, from
//!   `?sentry_key=`, `X-Sentry-Auth` or the envelope header's `dsn`): profile chunks, and
//!   transactions and spans with a `profiler_id`, kept; 200 `{"id": EVENT_ID}` as Relay
//!   answers, whatever the envelope holds;
//! - `POST /v1/sourcemaps?release=R&name=N`: a release's source map (key: an upload key,
//!   `Authorization: Bearer KEY`; symbols.rs); 200 once it is kept;
//! - `OPTIONS` anything: the CORS preflight ([`ALLOWED_HEADERS`]);
//! - `GET /` and `/api/…`: the page over the store and its API (web.rs).
//!
//! What would be logged is refused with 507 and `Retry-After` while the store's file system
//! has less than `collector.min_free_bytes` free (space.rs). The compactor's thread also
//! applies `collector.retention_days` (retention.rs): at start, after each compaction, and
//! every [`RETENTION_EVERY`] without one.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::header::{HeaderMap, HeaderValue};
use hyper::{Method, Request as HttpRequest, Response, StatusCode};

pub use crate::config::Config;
use crate::decode::{self, Reject, Request};
use crate::params::{param, query_params};
use crate::record::Batch;
use crate::space::{Low, Space};
use crate::wal::{self, AppendError, Wal};
use crate::{retention, store};

struct State {
    config: Config,
    wal: Wal,
    space: Space,
}

/// How often the compactor applies the retention when no segment comes to compact.
pub const RETENTION_EVERY: Duration = Duration::from_secs(600);

/// How long a client refused for a full disk is told to wait (`Retry-After`, seconds):
/// space comes back when an operator or the retention frees it, not within seconds.
pub const FULL_RETRY_AFTER: &str = "60";

/// Opens the store: pending log segments are compacted (by the compactor, in order) and a
/// new segment is started. Returns the log and the compactor's thread.
///
/// A pending segment that holds no record is removed instead: the segment a crash left
/// made ahead (zero-filled, never written), which compaction would turn into empty files.
pub fn open(config: &Config) -> Result<(Wal, std::thread::JoinHandle<()>), String> {
    let wal_dir = store::wal_dir(&config.store);
    let dir_error = |e: std::io::Error| format!("{}: {e}", wal_dir.display());
    std::fs::create_dir_all(&wal_dir).map_err(dir_error)?;
    let mut pending = wal::segments(&wal_dir).map_err(dir_error)?;
    let next = pending.last().map_or(1, |n| n + 1);
    let before = pending.len();
    let location = config.location();
    // The tables' store cannot be read (an object store not reached): nothing is served.
    let committed = store::committed(&location)?;
    pending.retain(|&n| {
        let path = wal::segment_path(&wal_dir, n);
        let empty = !wal::holds_records(&path) && !committed.contains(&n);
        // Kept (and compacted as before) if it cannot be removed.
        !(empty && std::fs::remove_file(&path).is_ok())
    });
    if pending.len() != before {
        wal::sync_dir(&wal_dir).map_err(dir_error)?;
    }
    let mut known = store::load_known(&location, &pending)?;
    let (sealed_tx, sealed_rx) = mpsc::channel::<u64>();
    for n in &pending {
        let _ = sealed_tx.send(*n);
    }
    let (wal, _committer) = Wal::start(
        wal_dir,
        next,
        config.queue,
        config.queue_bytes,
        config.rotation,
        config.commit_interval,
        sealed_tx,
    )
    .map_err(|e| format!("cannot start the log: {e}"))?;
    let (days, clock) = (config.retention_days, config.clock.clone());
    let compactor = std::thread::Builder::new()
        .name("compactor".into())
        .spawn(move || {
            // The segments compaction failed on (kept, decision 0054): the only ones the
            // retention may remove, as no one writes them or waits to compact them.
            let mut kept = std::collections::BTreeSet::new();
            let expire = |kept: &mut std::collections::BTreeSet<u64>| {
                if days > 0 {
                    apply_retention(&location, days, clock.now_ms(), kept);
                }
            };
            expire(&mut kept);
            compact_in_turn(
                &sealed_rx,
                compaction_priority,
                RETENTION_EVERY,
                |segment| {
                    if let Some(n) = segment {
                        if let Err(e) = store::compact(&location, n, &mut known) {
                            // The segment stays: the next start compacts it again.
                            eprintln!("jsprof-collector: compaction of segment {n} failed: {e}");
                            kept.insert(n);
                        }
                    }
                    expire(&mut kept);
                },
            );
        })
        .map_err(|e| e.to_string())?;
    Ok((wal, compactor))
}

/// One pass of the retention, said on stderr when it removed something or failed.
fn apply_retention(
    store: &store::Store,
    days: u32,
    now_ms: f64,
    kept: &mut std::collections::BTreeSet<u64>,
) {
    match retention::expire(store, days, now_ms, kept) {
        Ok(e) if e.is_empty() => {}
        Ok(e) => eprintln!(
            "jsprof-collector: retention ({days} days, first day kept {}): removed {} day \
             partition(s) [{}] and {} log segment(s) {:?}, {} bytes",
            retention::first_kept_day(days, now_ms),
            e.partitions.len(),
            e.partitions.join(", "),
            e.segments.len(),
            e.segments,
            e.bytes
        ),
        // Tried again at the next pass.
        Err(e) => eprintln!("jsprof-collector: retention failed: {e}"),
    }
}

/// How many sealed segments may wait for compaction while it runs only on idle cores.
const IDLE_BACKLOG: usize = 8;

/// Compacts each sealed segment `sealed` names, in order, until the log closes
/// (`compact(Some(n))`); before each, `idle(true)` while at most [`IDLE_BACKLOG`] segments
/// wait, `idle(false)` while more do (called when that changes). `compact(None)` each time
/// `quiet` passes without a segment.
fn compact_in_turn(
    sealed: &mpsc::Receiver<u64>,
    mut idle: impl FnMut(bool),
    quiet: Duration,
    mut compact: impl FnMut(Option<u64>),
) {
    let mut waiting = std::collections::VecDeque::new();
    let mut was = None;
    loop {
        if waiting.is_empty() {
            match sealed.recv_timeout(quiet) {
                Ok(n) => waiting.push_back(n),
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    compact(None);
                    continue;
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => return,
            }
        }
        waiting.extend(sealed.try_iter());
        let now = waiting.len() <= IDLE_BACKLOG;
        if was != Some(now) {
            was = Some(now);
            idle(now);
        }
        compact(Some(waiting.pop_front().expect("a segment waits")));
    }
}

/// Compaction is background work: a request waits for its answer, a sealed segment only
/// for the disk it holds. So the compactor runs under `SCHED_IDLE` (this thread only): it
/// gets a core only when no request's thread wants it, and a request's thread that wakes
/// takes the core from it at once. At nice 19, as before, it still took 0.69 of the two
/// cores during the ingest bench (under `SCHED_IDLE`, the ~0.35 the other threads left
/// idle). Between bursts compaction takes what is idle.
///
/// Under traffic that never lets up, though, idle time may not be enough, and the log
/// would grow on disk without end. So once more than [`IDLE_BACKLOG`] sealed segments wait,
/// the compactor takes its turn with the requests at nice 19, as it did before, until it
/// has caught up. Where a policy cannot be set (an unprivileged process
/// may not leave `SCHED_IDLE` unless its `RLIMIT_NICE` allows), compaction keeps the one
/// it has, and says so once.
fn compaction_priority(idle: bool) {
    use std::sync::atomic::{AtomicBool, Ordering};
    use thread_priority::{
        set_thread_priority_and_policy, thread_native_id, NormalThreadSchedulePolicy,
        ThreadPriority, ThreadSchedulePolicy,
    };
    static SAID: AtomicBool = AtomicBool::new(false);
    let policy = ThreadSchedulePolicy::Normal(if idle {
        NormalThreadSchedulePolicy::Idle
    } else {
        NormalThreadSchedulePolicy::Other
    });
    if let Err(e) = set_thread_priority_and_policy(thread_native_id(), ThreadPriority::Min, policy)
    {
        if !SAID.swap(true, Ordering::Relaxed) {
            eprintln!(
                "jsprof-collector: compaction keeps its scheduling policy ({policy:?}: {e:?})"
            );
        }
    }
}

/// Serves until the process ends. `ready` gets the bound address.
pub async fn serve(
    config: Config,
    listen: SocketAddr,
    ready: impl FnOnce(SocketAddr),
) -> Result<(), String> {
    serve_until(config, listen, ready, std::future::pending()).await
}

/// How long a stop waits for the connections still open (a keep-alive client may never
/// close its own) before it closes them.
const STOP_GRACE: Duration = Duration::from_secs(10);

/// Serves until `stop` resolves. Then it takes no new connection, lets the open ones finish
/// (for at most [`STOP_GRACE`]), and returns once the log has committed and sealed what it
/// holds and the compactor has compacted every sealed segment: the store is whole.
pub async fn serve_until(
    config: Config,
    listen: SocketAddr,
    ready: impl FnOnce(SocketAddr),
    stop: impl std::future::Future<Output = ()>,
) -> Result<(), String> {
    let (wal, compactor) = open(&config)?;
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .map_err(|e| format!("cannot listen on {listen}: {e}"))?;
    ready(listener.local_addr().map_err(|e| e.to_string())?);
    let space = Space::new(config.store.clone(), config.min_free_bytes);
    let state = Arc::new(State { config, wal, space });
    let mut connections = tokio::task::JoinSet::new();
    let mut stop = std::pin::pin!(stop);
    loop {
        let (stream, _) = tokio::select! {
            () = &mut stop => break,
            Some(_) = connections.join_next(), if !connections.is_empty() => continue,
            accepted = listener.accept() => match accepted {
                Ok(s) => s,
                Err(_) => continue,
            },
        };
        let _ = stream.set_nodelay(true);
        let state = state.clone();
        connections.spawn(async move {
            let service = hyper::service::service_fn(move |req| {
                let state = state.clone();
                async move { Ok::<_, Infallible>(handle(&state, req).await) }
            });
            let mut http = hyper::server::conn::http1::Builder::new();
            http.timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(Duration::from_secs(10));
            let _ = http
                .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                .await;
        });
    }
    drop(listener);
    let _ = tokio::time::timeout(STOP_GRACE, async {
        while connections.join_next().await.is_some() {}
    })
    .await;
    connections.shutdown().await;
    // The last handle on the log: its committer seals the segment and ends, and with it the
    // compactor's queue.
    drop(state);
    tokio::task::spawn_blocking(move || compactor.join())
        .await
        .map_err(|e| e.to_string())?
        .map_err(|_| "the compactor panicked".to_owned())
}

type Answer = Response<Full<Bytes>>;

fn answer(status: u16, body: impl Into<Bytes>) -> Answer {
    let mut r = Response::new(Full::new(body.into()));
    *r.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    r.headers_mut().insert(
        "content-type",
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r
}

fn reject(r: Reject) -> Answer {
    answer(r.status, format!("{}\n", r.reason))
}

fn header(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

/// The project a key names; with no keys configured, `default` for any request.
fn project_of(config: &Config, key: Option<&str>) -> Result<String, Reject> {
    if config.keys.is_empty() {
        return Ok("default".into());
    }
    match key {
        None => Err(Reject {
            status: 401,
            reason: "missing ingest key".into(),
        }),
        Some(k) => config.keys.get(k).cloned().ok_or(Reject {
            status: 401,
            reason: "unknown ingest key".into(),
        }),
    }
}

/// The headers a preflight allows: those jsprof's intake reads (`x-jsprof-key`), those
/// Relay's CORS allows for Sentry's SDKs (`x-sentry-auth`, `content-type`, ...), Datadog's
/// quota check's `dd-client-token`, and the trace-propagation headers either SDK adds to a
/// request whose URL its tracing targets match (Sentry's `sentry-trace` and `baggage`,
/// Datadog's `x-datadog-*`, `traceparent`, `tracestate`, `b3`, `x-b3-*`). Found in
/// @sentry/browser 11.12.0 (`transports/fetch.js`: no header but `options.headers`;
/// @sentry/core `utils/traceData`) and @datadog/browser-rum 7.16.2 (`quotaCheck.ts`,
/// browser-rum-core `tracing/tracer.ts`); beacons and the SDKs' own posts send none.
pub const ALLOWED_HEADERS: &str = "content-type, content-encoding, x-jsprof-key, \
     x-sentry-auth, x-requested-with, accept, authorization, authentication, dd-client-token, \
     sentry-trace, baggage, traceparent, tracestate, x-datadog-origin, x-datadog-parent-id, \
     x-datadog-sampling-priority, x-datadog-trace-id, b3, x-b3-traceid, x-b3-spanid, \
     x-b3-sampled";

/// The answer headers a page's script may read, as Relay exposes them (the Sentry SDK reads
/// `x-sentry-rate-limits` and `retry-after`).
const EXPOSED_HEADERS: &str = "x-sentry-error, x-sentry-rate-limits, retry-after, x-jsprof-dropped";

/// The answer header that says why items of an envelope were dropped (decision 0054): the
/// answer is still Relay's 200, so that the SDK and the browser's console see no error.
const DROPPED_HEADER: &str = "x-jsprof-dropped";

/// `x-jsprof-dropped`: how many items were dropped and the first one's reason, in printable
/// ASCII and at most 200 characters.
fn dropped_header(dropped: &[String]) -> Option<HeaderValue> {
    let first = dropped.first()?;
    let reason: String = first
        .chars()
        .map(|c| {
            if c.is_ascii_graphic() || c == ' ' {
                c
            } else {
                '?'
            }
        })
        .take(200)
        .collect();
    HeaderValue::from_str(&format!("{} item(s); {reason}", dropped.len())).ok()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Intake {
    Jsprof,
    /// Datadog's profile upload (`/api/v2/profile`).
    DatadogProfile,
    /// Datadog's RUM batch (`/api/v2/rum`), deflated or not.
    DatadogRum {
        deflated: bool,
    },
    /// Datadog's session replay and logs (`/api/v2/replay`, `/api/v2/logs`): answered as
    /// its intake answers, nothing kept.
    DatadogIgnored,
    /// Datadog's profiling quota check (`GET /api/v2/profiling/quota`).
    DatadogQuota,
    Sentry,
}

/// A Datadog intake path (`/api/v2/TRACK`, from the request's path or `ddforward`'s) and
/// its query parameters: which intake it is, or `None` for a track Datadog's browser SDK
/// does not send.
fn datadog_intake(path: &str, params: &[(String, String)]) -> Option<Intake> {
    Some(match path.trim_end_matches('/') {
        "/api/v2/profile" => Intake::DatadogProfile,
        "/api/v2/rum" => Intake::DatadogRum {
            deflated: param(params, "dd-evp-encoding") == Some("deflate"),
        },
        "/api/v2/replay" | "/api/v2/logs" => Intake::DatadogIgnored,
        "/api/v2/profiling/quota" => Intake::DatadogQuota,
        _ => return None,
    })
}

fn json_answer(status: u16, body: String) -> Answer {
    let mut r = answer(status, body);
    r.headers_mut()
        .insert("content-type", HeaderValue::from_static("application/json"));
    r
}

async fn handle(state: &State, req: HttpRequest<Incoming>) -> Answer {
    let origin = header(req.headers(), "origin");
    let cors = match &origin {
        None => None,
        Some(o) => {
            let allowed = state
                .config
                .allowed_origins
                .iter()
                .any(|a| a == "*" || a == o);
            if !allowed {
                return answer(403, format!("origin {o} is not allowed\n"));
            }
            Some(o.clone())
        }
    };
    // The page and its API answer no CORS (web.rs): other sites' pages cannot read them.
    let page = crate::web::is_page_route(req.uri().path());
    let mut response = route(state, req).await;
    if let Some(o) = cors.filter(|_| !page) {
        let h = response.headers_mut();
        if let Ok(v) = HeaderValue::from_str(&o) {
            h.insert("access-control-allow-origin", v);
        }
        h.insert(
            "access-control-expose-headers",
            HeaderValue::from_static(EXPOSED_HEADERS),
        );
        h.insert("vary", HeaderValue::from_static("Origin"));
    }
    response
}

async fn route(state: &State, req: HttpRequest<Incoming>) -> Answer {
    let path = req.uri().path().to_owned();
    let params = query_params(req.uri().query().unwrap_or(""));
    if req.method() == Method::OPTIONS {
        // The CORS preflight (https://fetch.spec.whatwg.org/#cors-preflight-fetch).
        let mut r = answer(204, Bytes::new());
        let h = r.headers_mut();
        h.insert(
            "access-control-allow-methods",
            HeaderValue::from_static("GET, POST, OPTIONS"),
        );
        h.insert(
            "access-control-allow-headers",
            HeaderValue::from_static(ALLOWED_HEADERS),
        );
        h.insert("access-control-max-age", HeaderValue::from_static("86400"));
        return r;
    }
    if let Some(page) =
        crate::web::route(&state.config, req.method(), &path, &params, req.headers()).await
    {
        return page;
    }
    if path == "/v1/sourcemaps" {
        return upload_map(state, req, &params).await;
    }
    // Datadog's `proxy` option: the intake's path and query in `ddforward`.
    let forwarded = param(&params, "ddforward").map(|f| match f.split_once('?') {
        Some((p, q)) => (p.to_owned(), query_params(q)),
        None => (f.to_owned(), Vec::new()),
    });
    let intake = if path == "/v1/profiles" {
        Intake::Jsprof
    } else if let Some((fpath, fparams)) = &forwarded {
        match datadog_intake(fpath, fparams) {
            Some(i) => i,
            None => {
                return answer(
                    404,
                    format!("no such Datadog intake {fpath:?} (/api/v2/profile, rum, replay, logs, profiling/quota)\n"),
                )
            }
        }
    } else if let Some(i) = datadog_intake(&path, &params) {
        i
    } else if path.starts_with("/api/") && path.trim_end_matches('/').ends_with("/envelope") {
        Intake::Sentry
    } else {
        return answer(404, "no such intake (POST /v1/profiles, Datadog's /api/v2/… or ?ddforward=, Sentry's /api/PROJECT/envelope/)\n");
    };
    let dd_params = forwarded.as_ref().map_or(&params, |(_, q)| q);
    let dd_key = || {
        param(&params, "dd-api-key")
            .or_else(|| param(dd_params, "dd-api-key"))
            .map(str::to_owned)
            .or_else(|| header(req.headers(), "dd-client-token"))
    };
    if intake == Intake::DatadogQuota {
        if req.method() != Method::GET && req.method() != Method::HEAD {
            let mut r = answer(405, "GET only\n");
            r.headers_mut()
                .insert("allow", HeaderValue::from_static("GET, OPTIONS"));
            return r;
        }
        if let Err(r) = project_of(&state.config, dd_key().as_deref()) {
            return reject(r);
        }
        // Always admitted: the collector keeps what it is sent (the shape Datadog's quota
        // endpoint answers, as the SDK's own tests serve it).
        return json_answer(
            200,
            r#"{"data":{"id":"jsprof","type":"profiling-quota","attributes":{"admitted":true,"reason":"quota_ok"}}}"#.into(),
        );
    }
    if req.method() != Method::POST {
        let mut r = answer(405, "POST only\n");
        r.headers_mut()
            .insert("allow", HeaderValue::from_static("POST, OPTIONS"));
        return r;
    }
    let dd_key = dd_key();
    let headers = req.headers().clone();
    let max = state.config.max_body_bytes;
    if let Some(len) = header(&headers, "content-length").and_then(|l| l.parse::<u64>().ok()) {
        if len > max as u64 {
            return reject(Reject::too_large(format!("body over {max} bytes")));
        }
    }
    let body = Limited::new(req.into_body(), max);
    let body = match tokio::time::timeout(state.config.body_timeout, body.collect()).await {
        Err(_) => return answer(408, "the body took too long\n"),
        Ok(Err(e)) => {
            if e.downcast_ref::<http_body_util::LengthLimitError>()
                .is_some()
            {
                return reject(Reject::too_large(format!("body over {max} bytes")));
            }
            return answer(400, format!("cannot read the body: {e}\n"));
        }
        Ok(Ok(c)) => c.to_bytes(),
    };
    let mut request = Request {
        project: String::new(),
        received: state.config.clock.now_ms(),
        content_encoding: header(&headers, "content-encoding").map(|e| e.to_ascii_lowercase()),
        content_type: header(&headers, "content-type"),
        user_agent: header(&headers, "user-agent"),
        referer: header(&headers, "referer"),
        max_bytes: max,
    };
    // What to log, and the answer once it is committed.
    let (batch, ok): (Batch, Answer) = match intake {
        Intake::DatadogQuota => unreachable!("answered above"),
        Intake::Jsprof => {
            let key = header(&headers, "x-jsprof-key")
                .or_else(|| param(&params, "key").map(str::to_owned));
            match project_of(&state.config, key.as_deref()) {
                Ok(p) => request.project = p,
                Err(r) => return reject(r),
            }
            match decode::jsprof(&request, &body) {
                Ok(b) => {
                    let ok = answer(202, format!("{{\"accepted\":{}}}\n", b.count));
                    (b, ok)
                }
                Err(r) => return reject(r),
            }
        }
        Intake::DatadogProfile | Intake::DatadogRum { .. } | Intake::DatadogIgnored => {
            match project_of(&state.config, dd_key.as_deref()) {
                Ok(p) => request.project = p,
                Err(r) => return reject(r),
            }
            // Datadog's intake answers 202 with an empty object.
            let ok = json_answer(202, "{}".into());
            let decoded = match intake {
                Intake::DatadogProfile => {
                    decode::datadog(&request, body).await.map(|t| Batch::of(&t))
                }
                Intake::DatadogRum { deflated } => {
                    match decode::datadog_rum(&request, &body, deflated) {
                        Ok(observed) if observed.is_empty() => return ok,
                        Ok(observed) => Ok(Batch::with(&[], &observed)),
                        Err(r) => Err(r),
                    }
                }
                _ => return ok,
            };
            match decoded {
                Ok(b) => (b, ok),
                Err(r) => return reject(r),
            }
        }
        Intake::Sentry => {
            let auth_key = header(&headers, "x-sentry-auth").and_then(|a| {
                a.split([',', ' '])
                    .find_map(|p| p.trim().strip_prefix("sentry_key=").map(str::to_owned))
            });
            let query_key = param(&params, "sentry_key").map(str::to_owned);
            let decode::Sentry {
                header: envelope,
                mut contents,
                dropped,
            } = match decode::sentry(&request, &body) {
                Ok(d) => d,
                Err(r) => return reject(r),
            };
            let dsn_key = envelope
                .dsn
                .as_deref()
                .and_then(decode::dsn_public_key)
                .map(str::to_owned);
            let project =
                match project_of(&state.config, query_key.or(auth_key).or(dsn_key).as_deref()) {
                    Ok(p) => p,
                    Err(r) => return reject(r),
                };
            // Relay's answer: 200, and the envelope's event id when it has one.
            let mut ok = json_answer(
                200,
                match &envelope.event_id {
                    Some(id) => serde_json::json!({ "id": id }).to_string(),
                    None => "{}".into(),
                },
            );
            if let Some(value) = dropped_header(&dropped) {
                ok.headers_mut().insert(DROPPED_HEADER, value);
            }
            if contents.is_empty() {
                return ok;
            }
            for t in &mut contents.traces {
                t.project = project.clone();
            }
            for o in &mut contents.observed {
                o.project = project.clone();
            }
            (Batch::with(&contents.traces, &contents.observed), ok)
        }
    };
    // Refused before it is queued: a record admitted is fsynced before it is acknowledged,
    // and one refused never was.
    if let Err(low) = state.space.admit((batch.payload.len() + 8) as u64) {
        return insufficient_storage(low);
    }
    match state.wal.append(batch).await {
        Ok(()) => ok,
        Err(AppendError::Full) => {
            let mut r = answer(429, "the intake queue is full; retry later\n");
            r.headers_mut()
                .insert("retry-after", HeaderValue::from_static("1"));
            r
        }
        Err(AppendError::Failed(e)) => answer(503, format!("the log failed: {e}\n")),
    }
}

/// `POST /v1/sourcemaps?release=R&name=N[&script=S…][&debug_id=ID]`: one source map of a
/// release (the body), kept with the store (symbols.rs). The key is an upload key
/// (`Authorization: Bearer KEY`), which names the project; without upload keys configured
/// the route is off (403). A body that is no source map is a 400 with the parser's reason,
/// one over `collector.max_map_bytes` a 413; nothing is kept of either. 200
/// `{"release", "name", "scripts", "debug_ids", "bytes"}` once the map and the index are
/// fsynced.
async fn upload_map(
    state: &State,
    req: HttpRequest<Incoming>,
    params: &[(String, String)],
) -> Answer {
    if req.method() != Method::POST {
        let mut r = answer(405, "POST only\n");
        r.headers_mut()
            .insert("allow", HeaderValue::from_static("POST, OPTIONS"));
        return r;
    }
    let config = &state.config;
    if config.upload_keys.is_empty() {
        return answer(
            403,
            "source map uploads are off: start `jsprof collect` with --upload-key PROJECT=KEY\n",
        );
    }
    let key = header(req.headers(), "authorization")
        .and_then(|a| a.strip_prefix("Bearer ").map(|k| k.trim().to_owned()));
    let project = match key {
        None => return answer(401, "missing upload key (Authorization: Bearer KEY)\n"),
        Some(k) => match config.upload_keys.get(&k) {
            Some(p) => p.clone(),
            None => return answer(401, "unknown upload key\n"),
        },
    };
    let release = match param(params, "release") {
        Some(r) if !r.is_empty() && r.len() <= 200 && !r.chars().any(char::is_control) => r,
        _ => return answer(400, "release: expected ?release=R (1 to 200 characters)\n"),
    };
    let Some(name) = param(params, "name") else {
        return answer(
            400,
            "name: expected ?name=PATH (the map's path in its directory)\n",
        );
    };
    let scripts: Vec<String> = params
        .iter()
        .filter(|(k, _)| k == "script")
        .map(|(_, v)| v.clone())
        .collect();
    let checked = std::iter::once(("name", name))
        .chain(scripts.iter().map(|s| ("script", s.as_str())))
        .try_for_each(|(what, n)| crate::symbols::check_name(what, n));
    if let Err(reason) = checked {
        return answer(400, format!("{reason}\n"));
    }
    let debug_id = match param(params, "debug_id") {
        None => None,
        Some(d) => match crate::symbols::debug_id(d) {
            Some(d) => Some(d),
            None => {
                return answer(
                    400,
                    format!("debug_id {d:?}: expected a UUID (hexadecimal digits and dashes)\n"),
                )
            }
        },
    };
    let max = config.max_map_bytes;
    let too_large = || {
        answer(
            413,
            format!("source map over {max} bytes (pref collector.max_map_bytes)\n"),
        )
    };
    if let Some(len) = header(req.headers(), "content-length").and_then(|l| l.parse::<u64>().ok()) {
        if len > max as u64 {
            return too_large();
        }
    }
    let body = Limited::new(req.into_body(), max);
    let body = match tokio::time::timeout(config.body_timeout, body.collect()).await {
        Err(_) => return answer(408, "the body took too long\n"),
        Ok(Err(e)) => {
            if e.downcast_ref::<http_body_util::LengthLimitError>()
                .is_some()
            {
                return too_large();
            }
            return answer(400, format!("cannot read the body: {e}\n"));
        }
        Ok(Ok(c)) => c.to_bytes(),
    };
    let checked = match crate::symbols::check_map(&body) {
        Ok(c) => c,
        Err(reason) => return answer(400, format!("not kept: {reason}\n")),
    };
    if let Err(low) = state.space.admit(body.len() as u64 + 4096) {
        return insufficient_storage(low);
    }
    let up = crate::symbols::Upload {
        project,
        release: release.to_owned(),
        name: name.to_owned(),
        scripts,
        debug_id,
    };
    let store = config.store.clone();
    let objects = config.objects.clone();
    let now = config.clock.now_ms();
    let kept = tokio::task::spawn_blocking(move || {
        crate::symbols::store_upload(&store, objects.as_deref(), &up, &body, checked, now)
            .map(|e| (up, e))
    })
    .await;
    match kept {
        Ok(Ok((up, e))) => json_answer(
            200,
            serde_json::json!({
                "release": up.release,
                "name": e.name,
                "scripts": e.scripts,
                "debug_ids": e.debug_ids,
                "bytes": e.bytes,
            })
            .to_string(),
        ),
        Ok(Err(e)) => answer(500, format!("the map was not kept: {e}\n")),
        Err(e) => answer(500, format!("the map was not kept: {e}\n")),
    }
}

/// 507 Insufficient Storage (RFC 4918), with `Retry-After` and the reason.
fn insufficient_storage(low: Low) -> Answer {
    let mut r = answer(507, format!("{low}; nothing was stored, retry later\n"));
    r.headers_mut()
        .insert("retry-after", HeaderValue::from_static(FULL_RETRY_AFTER));
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One jsprof trace with nothing in it, as a log record holds it.
    fn empty_trace() -> crate::model::Ingested {
        crate::model::Ingested {
            project: "default".into(),
            source: crate::model::Source::Jsprof,
            received: 1.0,
            meta: Default::default(),
            trace: jsprof_profiler::ProfilerTrace::default(),
            events: Vec::new(),
        }
    }

    /// A crash leaves the segment made ahead, zero-filled: the next start removes it, and
    /// compacts only the segments that hold records.
    #[test]
    fn a_segment_without_records_is_removed_not_compacted() {
        let dir = tempfile::tempdir().unwrap();
        let wal_dir = store::wal_dir(dir.path());
        std::fs::create_dir_all(&wal_dir).unwrap();
        let one = empty_trace();
        std::fs::write(wal::segment_path(&wal_dir, 1), wal::encode_record(&[one])).unwrap();
        std::fs::write(wal::segment_path(&wal_dir, 2), vec![0u8; 1 << 16]).unwrap();
        let (wal, compactor) = open(&Config::new(dir.path().to_owned())).unwrap();
        drop(wal);
        compactor.join().unwrap();
        assert!(store::compacted(&dir.path().into(), 1).unwrap());
        assert!(!store::compacted(&dir.path().into(), 2).unwrap());
        assert!(!wal::segment_path(&wal_dir, 2).exists());
        // Nothing of segment 2 in any table.
        let names: Vec<String> = walk(&store::tables_dir(dir.path()));
        assert!(
            names.iter().all(|n| !n.contains("seg-000000000002")),
            "{names:?}"
        );
        assert!(
            names.iter().any(|n| n.contains("seg-000000000001")),
            "{names:?}"
        );
    }

    /// A record whose CRC holds but which does not decode (a newer collector's): the
    /// segment is not compacted, nor deleted, and a query says why.
    #[test]
    fn a_segment_with_a_record_that_does_not_decode_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let wal_dir = store::wal_dir(dir.path());
        std::fs::create_dir_all(&wal_dir).unwrap();
        let one = empty_trace();
        let mut newer = wal::encode_record(std::slice::from_ref(&one));
        // The version byte, then the header's CRC of the payload as it is now.
        newer[8] = 99;
        let crc = crc32fast::hash(&newer[8..]);
        newer[4..8].copy_from_slice(&crc.to_le_bytes());
        let mut bytes = wal::encode_record(std::slice::from_ref(&one));
        bytes.extend_from_slice(&newer);
        let path = wal::segment_path(&wal_dir, 1);
        std::fs::write(&path, &bytes).unwrap();
        let (wal, compactor) = open(&Config::new(dir.path().to_owned())).unwrap();
        drop(wal);
        compactor.join().unwrap();
        assert!(!store::compacted(&dir.path().into(), 1).unwrap());
        assert_eq!(std::fs::read(&path).unwrap(), bytes);
        let e = crate::tables::for_each_log_segment(&dir.path().into(), |_, _| {}).unwrap_err();
        assert!(e.contains("unknown record version 99"), "{e}");
    }

    fn walk(dir: &std::path::Path) -> Vec<String> {
        let mut out = Vec::new();
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                out.extend(walk(&p));
            } else {
                out.push(p.display().to_string());
            }
        }
        out
    }

    /// A backlog past [`IDLE_BACKLOG`] takes compaction off idle time until it is caught
    /// up, and back on it then; every segment is compacted once, in order.
    #[test]
    fn a_backlog_gives_compaction_its_turn_until_it_has_caught_up() {
        let (tx, rx) = mpsc::channel();
        for n in 1..=(IDLE_BACKLOG as u64 + 4) {
            tx.send(n).unwrap();
        }
        drop(tx);
        let events = std::cell::RefCell::new(Vec::new());
        compact_in_turn(
            &rx,
            |idle| events.borrow_mut().push(format!("idle {idle}")),
            Duration::from_secs(3600),
            |n| events.borrow_mut().push(format!("{n:?}")),
        );
        let mut expected = vec!["idle false".to_owned()];
        expected.extend((1..=4).map(|n| format!("Some({n})")));
        expected.push("idle true".into());
        expected.extend((5..=IDLE_BACKLOG as u64 + 4).map(|n| format!("Some({n})")));
        assert_eq!(events.into_inner(), expected);
    }

    /// Without segments, the compactor is called each `quiet` (for the retention), until
    /// the log closes.
    #[test]
    fn a_quiet_log_still_calls_the_compactor() {
        let (tx, rx) = mpsc::channel::<u64>();
        let mut tx = Some(tx);
        let mut calls = Vec::new();
        compact_in_turn(
            &rx,
            |_| {},
            Duration::from_millis(1),
            |n| {
                calls.push(n);
                if calls.len() == 2 {
                    tx.take();
                }
            },
        );
        assert_eq!(calls, vec![None, None]);
    }
}
