//! A content: runs one top-level page for its browser, in a process of its own
//! ([`process_main`], `jsprof -M`) or on a thread of the browser's process ([`run`] alone).
//! It receives the page and how to run it, sends the page's lines as they come (the run's
//! [`Console`]), then its traces and how the run ended ([`Outcome`]). A page WebDriver
//! drives is served commands meanwhile, by a [`jsprof_script::Browser`] of the content's
//! own: Force Sample, Minimize and Maximize reach this content's profiler group.

use std::panic::AssertUnwindSafe;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use jsprof_net::Url;
use jsprof_scope::record::StartMode;
use jsprof_script::{run_navigation, run_page, Console, RunOptions, RunReport};
use jsprof_webdriver::{Error, ErrorKind, Responder};
use nix::sys::signal::Signal;

use crate::protocol::{
    Config, Driven, FromContent, Json, Load, Outcome, ScopeCall, ScopeReply, ToContent, TraceJson,
};
use crate::transport::{self, FromContentTx, ToContentRx};

/// Traces are sent in batches of about this many bytes of JSON.
const TRACE_BATCH: usize = 1 << 20;

/// `jsprof --content-process TOKEN`: the content process of one page. It dies with its
/// browser: the kernel kills it when the browser's process ends (`PR_SET_PDEATHSIG`), and
/// it kills itself if the browser lets go of it before it is done (see [`listen`]).
pub fn process_main(token: &str) -> ExitCode {
    // Before connecting: a browser that died before this point refuses the connection, one
    // that dies after it takes this process with it.
    if nix::sys::prctl::set_pdeathsig(Signal::SIGKILL).is_err() {
        eprintln!("jsprof: content process: cannot tie its life to its browser's");
    }
    let Some((rx, tx)) = transport::connect(token) else {
        eprintln!("jsprof: content process: its browser is gone");
        return ExitCode::from(crate::LOAD_ERROR);
    };
    crate::diagnostics::to_content(tx.clone());
    let code = run(rx, tx);
    jsprof_script::shutdown();
    ExitCode::from(code)
}

/// The content's body: says hello, runs the page it is given, reports. Its exit code.
pub fn run(rx: ToContentRx, tx: FromContentTx) -> u8 {
    tx.send(FromContent::Hello {
        pid: std::process::id(),
    });
    let Ok(ToContent::Load(load)) = rx.recv() else {
        // The browser let go before giving a page: nothing to do.
        return 0;
    };
    // Set before the report goes: the browser lets go of a content once it has it.
    let ending = Arc::new(AtomicBool::new(false));
    let outcome =
        std::panic::catch_unwind(AssertUnwindSafe(|| run_load(load, rx, &tx, ending.clone())))
            .unwrap_or_else(|payload| {
                // A bug outside the engine's callbacks: reported like one inside them.
                jsprof_script::record_internal_error(&*payload);
                Outcome {
                    internal_error: jsprof_script::internal_error(),
                    ..Outcome::default()
                }
            });
    let code = outcome.exit_code();
    ending.store(true, Ordering::Release);
    tx.send(FromContent::Done(outcome));
    code
}

fn run_load(load: Load, rx: ToContentRx, tx: &FromContentTx, ending: Arc<AtomicBool>) -> Outcome {
    let console = {
        let tx = tx.clone();
        Console::new(move |stream, text| {
            tx.send(FromContent::Line {
                stream: stream.into(),
                text: text.to_owned(),
            });
        })
    };
    let options = match load.config.run_options(console) {
        Ok(options) => options,
        Err(e) => return load_error(e),
    };
    let url = match Url::parse(&load.url) {
        Ok(url) => url,
        Err(e) => return load_error(format!("{}: not a URL: {e}", load.url)),
    };
    match load.driven {
        None => {
            // Nothing more comes for a page run; the reader only notices a browser gone.
            listen(rx, ending, |_| {});
            run_one(&url, &options, &load.config, tx)
        }
        Some(driven) => run_driven(&url, &options, &load.config, driven, rx, tx, ending),
    }
}

fn load_error(message: String) -> Outcome {
    Outcome {
        load_error: Some(message),
        ..Outcome::default()
    }
}

/// A page run: the page to its end, then its traces.
fn run_one(url: &Url, options: &RunOptions, config: &Config, tx: &FromContentTx) -> Outcome {
    let report = match run_page(url, options) {
        Ok(report) => report,
        Err(e) => return load_error(e.to_string()),
    };
    let traces_left_out = if config.send_traces {
        let by = report.write_by.filter(|_| config.traces_by_deadline);
        send_traces(tx, &report.traces, by)
    } else {
        0
    };
    Outcome {
        load_error: None,
        timed_out: report.timed_out,
        out_of_memory: report.out_of_memory,
        internal_error: report.internal_error.clone(),
        unbuilt: report.unbuilt.clone(),
        traces_left_out,
        profile: report.trace.as_ref().map(TraceJson::of),
        stats: config.stats.then(|| stats_line(&report)),
        navigation: None,
    }
}

/// The page of one WebDriver navigation, served the session's commands until a navigation,
/// the session's end or the browser's shutdown ends it.
fn run_driven(
    url: &Url,
    options: &RunOptions,
    config: &Config,
    driven: Driven,
    rx: ToContentRx,
    tx: &FromContentTx,
    ending: Arc<AtomicBool>,
) -> Outcome {
    jsprof_script::set_next_page_generation(driven.generation);
    let browser = jsprof_script::Browser::new();
    // `--start-paused`: released by Continue (or by Stop, which also ends the browser).
    let (go, held) = std::sync::mpsc::channel::<()>();
    {
        let (browser, tx) = (browser.clone(), tx.clone());
        listen(rx, ending, move |message| match message {
            ToContent::Scope { id, call } => serve_scope_call(&browser, &tx, id, call),
            ToContent::Continue => {
                let _ = go.send(());
            }
            ToContent::WebDriver { id, command } => {
                let respond = responder(&tx, id);
                match command.get() {
                    // Force Sample, Minimize and Maximize are served here at once, on this
                    // content's profiler group and page; the rest on the page's loop.
                    Ok(command) => jsprof_webdriver::Browser::send(&browser, command, respond),
                    Err(e) => respond(Err(Error::new(ErrorKind::InvalidArgument, e))),
                }
            }
            ToContent::Stop => {
                browser.shutdown();
                let _ = go.send(());
            }
            ToContent::Load(_) => {}
        });
    }
    if driven.hold {
        let _ = held.recv();
        if browser.is_shutdown() {
            return Outcome::default();
        }
    }
    let loaded = driven.loaded.map(|id| responder(tx, id));
    let navigated = run_navigation(url, options, &browser, loaded);
    if config.send_traces {
        send_traces(tx, &navigated.traces, None);
    }
    Outcome {
        load_error: navigated.load_error,
        internal_error: navigated.internal_error,
        // Its responder is the browser's, which forwarded the command: dropped here.
        navigation: navigated.end.map(|(navigation, _)| navigation),
        ..Outcome::default()
    }
}

/// Where the answer to command `id` goes: the browser, which holds the command's own
/// responder.
fn responder(tx: &FromContentTx, id: u64) -> Responder {
    let tx = tx.clone();
    Box::new(move |reply| {
        tx.send(FromContent::Reply {
            id,
            reply: Json::new(&reply),
        });
    })
}

/// Reads what the browser sends, on a thread of its own, handing each message to `on`.
/// When the browser lets go of a content process that is not done (`ending` unset), the
/// browser is gone: the process kills itself, as the kernel would at its browser's death.
fn listen(
    rx: ToContentRx,
    ending: Arc<AtomicBool>,
    mut on: impl FnMut(ToContent) + Send + 'static,
) {
    let orphan = rx.orphaned_when_closed();
    let started = std::thread::Builder::new()
        .name("jsprof-from-browser".into())
        .spawn(move || {
            while let Ok(message) = rx.recv() {
                on(message);
            }
            if orphan && !ending.load(Ordering::Acquire) {
                let _ = nix::sys::signal::raise(Signal::SIGKILL);
            }
        });
    if started.is_err() {
        // Without it nothing would notice a browser gone but the kernel, which does.
        crate::diagnostics::line("jsprof: cannot start a content's reader thread".into());
    }
}

/// Sends `traces` to the browser in batches, until `by` passes if given; how many were not
/// sent.
fn send_traces(
    tx: &FromContentTx,
    traces: &[jsprof_profiler::ProfilerTrace],
    by: Option<Instant>,
) -> u64 {
    let mut batch = Vec::new();
    let mut bytes = 0;
    let mut sent = traces.len();
    for (i, trace) in traces.iter().enumerate() {
        if by.is_some_and(|by| Instant::now() >= by) {
            sent = i;
            break;
        }
        let json = TraceJson::of(trace);
        bytes += json.json.len();
        batch.push(json);
        if bytes >= TRACE_BATCH {
            tx.send(FromContent::Traces(std::mem::take(&mut batch)));
            bytes = 0;
        }
    }
    if !batch.is_empty() {
        tx.send(FromContent::Traces(batch));
    }
    (traces.len() - sent) as u64
}

/// The `--profile-stats` line: what sampling cost the page's thread, what the traces (the
/// --profile-out one, or else the last page profiler's) hold, and where it all ran: the
/// content's process and its sampler thread (as that thread saw itself).
fn stats_line(report: &RunReport) -> String {
    let sampling = report.sampling.clone().unwrap_or_default();
    let micros = |d: Option<std::time::Duration>| d.map(|d| d.as_secs_f64() * 1e6);
    let trace = report.trace.as_ref().or(report.traces.last());
    let samples = trace.map_or(0, |t| t.samples.len());
    let json_bytes = trace.map_or(0, |t| t.to_json().len());
    let (page_stops, page_stop_time) = report.page_stops;
    serde_json::json!({
        "samples": samples,
        "sampling_support": report.sampling.is_some(),
        "walks": sampling.walks,
        "walks_signalled": sampling.signalled,
        "gc_ticks_walked_at_end": sampling.gc_deferred,
        "captures": sampling.samples,
        "capture_fallbacks": sampling.fallbacks,
        "run_ms": report.elapsed.as_secs_f64() * 1e3,
        "signal_us": sampling.signal_cost.as_secs_f64() * 1e6,
        "sampling_ms": sampling.agent_time().as_secs_f64() * 1e3,
        "sampling_fraction": sampling.agent_time().as_secs_f64()
            / report.elapsed.as_secs_f64(),
        "walk_us_depth5": micros(sampling.walk_at_depth5),
        "walk_us_depth20": micros(sampling.walk_at_depth20),
        "capture_us_depth5": micros(sampling.mean_at_depth(5)),
        "capture_us_depth20": micros(sampling.mean_at_depth(20)),
        "stop_ms": report.stop_time.map(|d| d.as_secs_f64() * 1e3),
        "page_stops": page_stops,
        "page_stop_ms": (page_stops > 0)
            .then(|| page_stop_time.as_secs_f64() * 1e3 / f64::from(page_stops)),
        "json_bytes_per_sample": json_bytes as f64 / samples.max(1) as f64,
        "pid": std::process::id(),
        "sampler_thread": report.sampler_thread.map(|t| serde_json::json!({
            "pid": t.pid,
            "tid": t.tid,
        })),
        "sampler": report.sampler.as_ref().map(jsprof_profiler::SamplerStats::to_json),
        "support_ms": report.support.as_secs_f64() * 1e3,
        "support_fraction": report.support.as_secs_f64() / report.elapsed.as_secs_f64(),
        "guards": report.guards,
    })
    .to_string()
}

/// The content's side of a profiler-service call (on its reader thread): the browser's recorder and
/// sampling. A stop builds the trace, so it answers from a thread of its own.
fn serve_scope_call(
    browser: &jsprof_script::Browser,
    tx: &FromContentTx,
    id: u64,
    call: Json<ScopeCall>,
) {
    let answer = move |tx: &FromContentTx, reply: ScopeReply| {
        tx.send(FromContent::ScopeReply {
            id,
            reply: Json::new(&reply),
        });
    };
    match call.get() {
        Ok(ScopeCall::Start {
            at_navigation,
            interval,
        }) => {
            let mode = if at_navigation {
                StartMode::Url
            } else {
                StartMode::Immediate
            };
            answer(tx, ScopeReply::Started(browser.scope_start(mode, interval)));
        }
        Ok(ScopeCall::Stop) => {
            let (browser, tx) = (browser.clone(), tx.clone());
            let stopping = std::thread::Builder::new()
                .name("jsprof-scope-stop".into())
                .spawn(move || {
                    let stopped = browser.scope_stop().map(|s| (s.recording, s.trace));
                    answer(&tx, ScopeReply::Stopped(stopped));
                });
            if stopping.is_err() {
                crate::diagnostics::line("jsprof: cannot start a thread to stop profiling".into());
            }
        }
        Ok(ScopeCall::Frames) => answer(tx, ScopeReply::Frames(browser.scope().frames())),
        Err(e) => crate::diagnostics::line(format!("jsprof: profiler service: {e}")),
    }
}
