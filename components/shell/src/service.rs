//! The profiler service, `jsprof --profiler-service PORT PAGE…` (seed 003; Opera Scope's
//! `profiler` service): a client outside the page starts and stops the profiling of a
//! window, and reads the session's timelines of events and its sampled trace.
//!
//! The browser here runs each PAGE as a window in a content of its own (a process with
//! `-M`), kept running after it goes idle, until `Quit`, SIGINT or SIGTERM; `--start-paused`
//! holds every first load until `Continue`. The service listens on 127.0.0.1 only and
//! speaks JSON, one message a line (`jsprof_scope::protocol`). A web page can reach a
//! loopback port too (a `fetch` POST sends HTTP lines, then a body that may be a valid
//! request), so a connection whose first line is not a JSON request is closed at once and
//! nothing more of it is read.
//!
//! Threads: one accepts connections, one per connection reads its lines and answers them in
//! order; the browser's own loop (this module's [`run`], on the main thread) owns the
//! contents and carries the service's calls to them ([`ServiceEvent::Ask`]) and their
//! answers back. A window's recorder lives in its content; stopping it there hands the
//! recording over at once, and post-processing (the timelines) is done on the connection's
//! thread, so the page's loop goes on meanwhile.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use crossbeam_channel as crossbeam;
use jsprof_net::Url;
use jsprof_scope::protocol::{decode, Command, Request, Response, Status};
use jsprof_scope::record::StartMode;
use jsprof_scope::sessions::{Sessions, Stopped};
use jsprof_scope::timeline::{post_process, stack_samples};
use serde_json::{json, Value};

use crate::contents::{self, Browser, Page, Printer};
use crate::protocol::{Config, Driven, FromContent, Json, ScopeCall, ScopeReply, ToContent};
use crate::transport::{Event, Mode, ServiceEvent, ToContentTx};

/// How long a call waits for its window's content (a stop waits for the trace's build,
/// itself bounded by 30 s).
const CALL_WAIT: Duration = Duration::from_secs(60);

/// The longest line a client may send.
const MAX_LINE: u64 = 1 << 20;

/// How many connections are served at once; more are closed as they come.
const MAX_CONNECTIONS: u64 = 64;

/// What the service's threads share.
struct Shared {
    events: crossbeam::Sender<Event>,
    sessions: Mutex<Sessions>,
    /// Calls waiting for their content's answer.
    pending: Mutex<HashMap<u64, crossbeam::Sender<Result<ScopeReply, String>>>>,
    next_id: AtomicU64,
    /// The windows' URLs, by window ID (the page's place on the command line, from 1).
    urls: Vec<Url>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Shared {
    /// Carries `call` to window `window` and waits for its answer.
    fn ask(&self, window: u32, call: ScopeCall) -> Result<ScopeReply, String> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = crossbeam::bounded(1);
        lock(&self.pending).insert(id, tx);
        if self
            .events
            .send(Event::Service(ServiceEvent::Ask { window, id, call }))
            .is_err()
        {
            lock(&self.pending).remove(&id);
            return Err("the browser has ended".into());
        }
        let reply = rx
            .recv_timeout(CALL_WAIT)
            .unwrap_or_else(|_| Err(format!("window {window} did not answer")));
        lock(&self.pending).remove(&id);
        reply
    }

    /// The answer to call `id`.
    fn answer(&self, id: u64, reply: Result<ScopeReply, String>) {
        if let Some(tx) = lock(&self.pending).remove(&id) {
            let _ = tx.send(reply);
        }
    }

    fn window(&self, payload_id: u32) -> Result<u32, String> {
        if payload_id >= 1 && payload_id as usize <= self.urls.len() {
            Ok(payload_id)
        } else {
            Err(format!("no window {payload_id}"))
        }
    }

    /// Carries out `request` for connection `conn`.
    fn handle(&self, request: Request, conn: u64) -> Response {
        let tag = request.tag;
        let bad = |message: String| Response::error(Some(tag), Status::BadRequest, message);
        let internal = |message: String| Response::error(Some(tag), Status::InternalError, message);
        match request.command {
            Command::StartProfiler {
                window_id,
                start_mode,
                interval,
            } => {
                let window = match self.window(window_id) {
                    Ok(w) => w,
                    Err(e) => return bad(e),
                };
                let running = match lock(&self.sessions).start(window, conn) {
                    Ok(r) => r,
                    Err(e) => return bad(e),
                };
                let call = ScopeCall::Start {
                    at_navigation: start_mode == StartMode::Url,
                    interval,
                };
                match self.ask(window, call) {
                    Ok(ScopeReply::Started(Ok(()))) => {
                        Response::ok(tag, json!({ "sessionID": running.session_id }))
                    }
                    Ok(ScopeReply::Started(Err(e))) => {
                        lock(&self.sessions).abandon(running.session_id);
                        bad(e)
                    }
                    Ok(_) => {
                        lock(&self.sessions).abandon(running.session_id);
                        internal("a wrong answer from the window".into())
                    }
                    Err(e) => {
                        lock(&self.sessions).abandon(running.session_id);
                        internal(e)
                    }
                }
            }
            Command::StopProfiler { session_id } => {
                let running = match lock(&self.sessions).stop(session_id) {
                    Ok(r) => r,
                    Err(e) => return bad(e),
                };
                let stopped = match self.stop_at_window(running.window_id, session_id) {
                    Ok(s) => s,
                    Err(e) => {
                        lock(&self.sessions).abandon(session_id);
                        return internal(e);
                    }
                };
                let payload = stopped.to_json();
                lock(&self.sessions).stopped(stopped);
                Response::ok(tag, payload)
            }
            Command::GetEvents {
                session_id,
                timeline_id,
                query,
                stacks,
            } => {
                let sessions = lock(&self.sessions);
                let session = match sessions.get(session_id) {
                    Ok(s) => s,
                    Err(e) => return bad(e),
                };
                let Some(timeline) = session.timeline(timeline_id) else {
                    return bad(format!(
                        "session {session_id} has no timeline {timeline_id}"
                    ));
                };
                let samples = stacks.then_some(&session.samples[..]);
                match timeline.select(&query, samples) {
                    Ok(events) => Response::ok(tag, json!({ "eventList": events })),
                    Err(e) => bad(format!("timeline {timeline_id} has no event {}", e.0)),
                }
            }
            Command::ReleaseSession { session_id } => {
                match lock(&self.sessions).release(session_id) {
                    Ok(()) => Response::ok(tag, json!({})),
                    Err(e) => bad(e),
                }
            }
            Command::GetTrace { session_id } => match lock(&self.sessions).get(session_id) {
                Ok(s) => Response::ok(
                    tag,
                    s.trace.clone().unwrap_or_else(|| {
                        serde_json::to_value(jsprof_profiler::ProfilerTrace::default())
                            .unwrap_or_default()
                    }),
                ),
                Err(e) => bad(e),
            },
            Command::ListWindows => {
                let windows: Vec<Value> = (1..=self.urls.len() as u32)
                    .map(|w| {
                        let frames = match self.ask(w, ScopeCall::Frames) {
                            Ok(ScopeReply::Frames(frames)) => frames,
                            _ => Vec::new(),
                        };
                        let frames: Vec<Value> = frames
                            .into_iter()
                            .map(|f| {
                                json!({
                                    "frameID": f.frame_id,
                                    "parentFrameID": f.parent.unwrap_or(0),
                                    "url": f.url,
                                })
                            })
                            .collect();
                        json!({
                            "windowID": w,
                            "url": self.urls[w as usize - 1].as_str(),
                            "frameList": frames,
                        })
                    })
                    .collect();
                Response::ok(tag, json!({ "windowList": windows }))
            }
            Command::Continue => {
                let _ = self.events.send(Event::Service(ServiceEvent::Continue));
                Response::ok(tag, json!({}))
            }
            Command::Quit => Response::ok(tag, json!({})),
        }
    }

    /// Stops the recording of `window` and post-processes it here, off the page's loop.
    fn stop_at_window(&self, window: u32, session_id: u32) -> Result<Stopped, String> {
        let (recording, trace) = match self.ask(window, ScopeCall::Stop)? {
            ScopeReply::Stopped(Some(stopped)) => stopped,
            // A URL start whose navigation never came: an empty session.
            ScopeReply::Stopped(None) => (
                jsprof_scope::Recording {
                    epoch: std::time::Instant::now(),
                    epoch_nanos: 0,
                    duration: 0,
                    events: Vec::new(),
                    frames: Vec::new(),
                },
                None,
            ),
            _ => return Err("a wrong answer from the window".into()),
        };
        let timelines = post_process(&recording);
        let samples = trace
            .as_ref()
            .map(|(t, offset)| stack_samples(t, *offset))
            .unwrap_or_default();
        Ok(Stopped {
            session_id,
            window_id: window,
            timelines,
            trace: trace.and_then(|(t, _)| serde_json::to_value(t).ok()),
            samples,
        })
    }

    /// Connection `conn` is gone: a session it started and is still running is stopped and
    /// dropped.
    fn disconnected(&self, conn: u64) {
        let running = lock(&self.sessions).disconnected(conn);
        if let Some(r) = running {
            let _ = self.ask(r.window_id, ScopeCall::Stop);
        }
    }
}

/// Serves one connection: its lines in order, each answered on one line.
fn serve_connection(shared: Arc<Shared>, stream: TcpStream, conn: u64) {
    let Ok(write_half) = stream.try_clone() else {
        return;
    };
    let mut writer = std::io::BufWriter::new(write_half);
    let mut reader = BufReader::new(stream);
    let mut first = true;
    let mut line = Vec::new();
    loop {
        line.clear();
        match (&mut reader).take(MAX_LINE).read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        if !line.ends_with(b"\n") && line.len() as u64 >= MAX_LINE {
            // Too long to be a request: the client is told, and the connection closed.
            if !first {
                let r = Response::error(None, Status::BadRequest, "a line over 1 MiB");
                let _ = writeln!(writer, "{}", r.to_line());
                let _ = writer.flush();
            }
            break;
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\n', '\r']);
        let response = match decode(text) {
            // Not a JSON request on the first line (an HTTP request from a web page): closed
            // at once, nothing more of it read.
            Err(rejected) if first && !rejected.is_request => break,
            Err(rejected) => Response::error(rejected.tag, Status::BadRequest, rejected.message),
            Ok(request) => {
                let quit = request.command == Command::Quit;
                let response = shared.handle(request, conn);
                if quit {
                    let _ = writeln!(writer, "{}", response.to_line());
                    let _ = writer.flush();
                    let _ = shared.events.send(Event::Service(ServiceEvent::Quit));
                    break;
                }
                response
            }
        };
        first = false;
        if writeln!(writer, "{}", response.to_line()).is_err() || writer.flush().is_err() {
            break;
        }
    }
    shared.disconnected(conn);
}

/// Accepts connections until the listener fails (the process ends with the browser), at
/// most [`MAX_CONNECTIONS`] served at once.
fn accept(shared: Arc<Shared>, listener: TcpListener) {
    let open = Arc::new(AtomicU64::new(0));
    let mut conn = 0u64;
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        if open.load(Ordering::Acquire) >= MAX_CONNECTIONS {
            continue; // Dropped: closed at once.
        }
        conn += 1;
        open.fetch_add(1, Ordering::AcqRel);
        let (shared, open, id) = (shared.clone(), open.clone(), conn);
        let counted = open.clone();
        let started = std::thread::Builder::new()
            .name("jsprof-scope-conn".into())
            .spawn(move || {
                serve_connection(shared, stream, id);
                counted.fetch_sub(1, Ordering::AcqRel);
            });
        if started.is_err() {
            open.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

/// The service's part of following its windows' contents: each window is loaded driven
/// (held with `--start-paused`), and the service's calls are carried to the windows and
/// their answers back.
struct Service<'a> {
    shared: &'a Shared,
    start_paused: bool,
    /// `Quit` (or a signal) came: every window is stopped, and so is one that connects now.
    quitting: bool,
}

impl Browser for Service<'_> {
    /// The calls sent to the window and not answered yet.
    type More = Vec<u64>;

    fn driven(&self, i: usize) -> Option<Driven> {
        Some(Driven {
            loaded: None,
            generation: i as u64 + 1,
            hold: self.start_paused,
        })
    }

    fn connected(&mut self, tx: &ToContentTx) {
        if self.quitting {
            tx.send(ToContent::Stop);
        }
    }

    fn message(&mut self, _: usize, page: &mut Page<Self::More>, message: FromContent) {
        if let FromContent::ScopeReply { id, reply } = message {
            page.more.retain(|&x| x != id);
            self.shared.answer(id, reply.get());
        }
    }

    fn exited(&mut self, i: usize, page: &mut Page<Self::More>) {
        for id in std::mem::take(&mut page.more) {
            self.shared
                .answer(id, Err(format!("window {} has ended", i + 1)));
        }
    }

    fn service(&mut self, windows: &mut [Page<Self::More>], event: ServiceEvent) {
        match event {
            ServiceEvent::Ask { window, id, call } => {
                let sent = windows
                    .get_mut((window as usize).wrapping_sub(1))
                    .filter(|w| {
                        w.tx.as_ref().is_some_and(|tx| {
                            tx.send(ToContent::Scope {
                                id,
                                call: Json::new(&call),
                            })
                        })
                    });
                match sent {
                    Some(w) => w.more.push(id),
                    None => self
                        .shared
                        .answer(id, Err(format!("window {window} is not running"))),
                }
            }
            ServiceEvent::Continue => {
                for w in windows.iter() {
                    if let Some(tx) = &w.tx {
                        tx.send(ToContent::Continue);
                    }
                }
            }
            ServiceEvent::Quit => {
                if !self.quitting {
                    self.quitting = true;
                    for w in windows.iter() {
                        if let Some(tx) = &w.tx {
                            tx.send(ToContent::Stop);
                        }
                    }
                }
            }
        }
    }
}

/// `jsprof --profiler-service PORT PAGE…`: the service on its threads, the browser on this
/// one, until `Quit`, SIGINT or SIGTERM.
pub fn run(
    port: u16,
    urls: Vec<Url>,
    mode: Mode,
    config: &Config,
    start_paused: bool,
) -> Result<ExitCode, String> {
    let listener = TcpListener::bind(("127.0.0.1", port))
        .map_err(|e| format!("--profiler-service {port}: cannot listen: {e}"))?;
    let address = listener
        .local_addr()
        .map_err(|e| format!("--profiler-service {port}: {e}"))?;
    let printer = Printer {
        prefixed: urls.len() > 1,
    };
    let (events_tx, events) = contents::events(mode);
    let shared = Arc::new(Shared {
        events: events_tx.clone(),
        sessions: Mutex::new(Sessions::default()),
        pending: Mutex::new(HashMap::new()),
        next_id: AtomicU64::new(1),
        urls: urls.clone(),
    });
    {
        let shared = shared.clone();
        std::thread::Builder::new()
            .name("jsprof-scope-accept".into())
            .spawn(move || accept(shared, listener))
            .map_err(|e| format!("--profiler-service: {e}"))?;
    }
    eprintln!("jsprof: profiler service listening on {address}");
    // From here a signal ends the browser.
    {
        let events = events_tx.clone();
        crate::signals::run_browser(move || {
            let _ = events.try_send(Event::Service(ServiceEvent::Quit));
        });
    }
    let mut windows: Vec<Page<Vec<u64>>> = contents::start(urls, mode, events_tx, &printer);
    let mut service = Service {
        shared: &shared,
        start_paused,
        quitting: false,
    };
    contents::follow(
        &mut service,
        &mut windows,
        &events,
        mode,
        config,
        &printer,
        None,
    );
    crate::signals::browser_ended();
    contents::join(&mut windows);
    Ok(if windows.iter().any(|w| w.crashed) {
        ExitCode::from(crate::INTERNAL_ERROR)
    } else {
        ExitCode::SUCCESS
    })
}
