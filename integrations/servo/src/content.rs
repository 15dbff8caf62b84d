//! `-M`: jsprof-servo started by Servo's constellation as a content process
//! (`jsprof-servo --content-process TOKEN`, Servo's `sandboxing::spawn_multiprocess`). The
//! page's script threads run here, so jsprof's state does too: the patched servo-script's
//! `script::jsprof` is per process, and this process gets its own `ProfilerGroup` and
//! sampler thread with its first session.
//!
//! In order: jsprof is configured from the browser's [`Setup`] (before Servo starts the
//! script thread, whose documents' time origins are readings of jsprof's clock), the link
//! to the browser is opened on a thread of its own, which answers the browser's requests,
//! then `servo::run_content_process` runs the event loop until Servo ends it, and the
//! process's last [`Report`] goes to the browser (`Bye`).
//!
//! Servo's constellation waits, blocked, for this process to connect to TOKEN: whatever
//! goes wrong before, `run_content_process` is still called (with jsprof's defaults, and a
//! warning), never an early exit.

use std::io::{BufRead, BufReader};
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixStream};
use std::process::ExitCode;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use jsprof_page_model::prefs::Prefs;
use jsprof_profiler::ProfilerTrace;
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

use crate::link::{self, Answer, Report, Request, Setup, ToBrowser, ToContent, SETUP_ENV};

/// The traces of `stop()` kept for the browser (`--trace-out`).
type Sink = Option<Arc<Mutex<Vec<ProfilerTrace>>>>;

pub fn run(token: String) -> ExitCode {
    let started = Instant::now();
    let link = match start(started) {
        Ok(link) => Some(link),
        Err(e) => {
            eprintln!("jsprof-servo: content process {}: {e}", std::process::id());
            None
        }
    };
    servo::run_content_process(token);
    // Servo ended this process's event loop (its last page went, or Servo shut down): the
    // profiles of its documents go to the browser, which keeps them for the run's end.
    if let Some((writer, sink)) = link {
        let report = report(&sink, started, crate::STOP_LIMIT);
        let mut writer = writer.lock().unwrap_or_else(PoisonError::into_inner);
        let _ = link::send(&mut *writer, &ToBrowser::Bye(report));
    }
    ExitCode::SUCCESS
}

/// Configures jsprof and opens the link: its writer and the trace sink.
fn start(started: Instant) -> Result<(Arc<Mutex<UnixStream>>, Sink), String> {
    // Tied to the browser: the constellation thread that spawned this process lives until
    // Servo's shutdown, and takes this process with it when the browser exits.
    if let Err(e) = nix::sys::prctl::set_pdeathsig(Signal::SIGKILL) {
        eprintln!("jsprof-servo: content process: cannot tie its life to its browser's: {e}");
    }
    let setup = std::env::var(SETUP_ENV)
        .map_err(|_| format!("no {SETUP_ENV} in the environment: jsprof's defaults"))?;
    let setup: Setup =
        serde_json::from_str(&setup).map_err(|e| format!("{SETUP_ENV}: {e}: jsprof's defaults"))?;
    if std::os::unix::process::parent_id() != setup.browser_pid {
        // The browser died before PR_SET_PDEATHSIG was set: nobody waits for this process.
        eprintln!("jsprof-servo: content process: its browser is gone");
        std::process::exit(1);
    }
    let mut prefs = Prefs::default();
    for arg in &setup.prefs {
        prefs
            .set_from_arg(arg)
            .map_err(|e| format!("--pref {arg}: {e}"))?;
    }
    let sink: Sink = setup.trace_sink.then(Arc::default);
    script::jsprof::configure(script::jsprof::Config {
        prefs,
        trace_sink: sink.clone(),
        file_header_sidecars: true,
        profile_interval: setup.profile_interval,
    })
    .map_err(|_| "jsprof was configured twice".to_owned())?;

    let address = SocketAddr::from_abstract_name(setup.socket.as_bytes())
        .map_err(|e| format!("the browser's socket {:?}: {e}", setup.socket))?;
    let mut stream = UnixStream::connect_addr(&address)
        .map_err(|e| format!("cannot reach the browser ({:?}): {e}", setup.socket))?;
    link::send(
        &mut stream,
        &ToBrowser::Hello {
            pid: std::process::id(),
            nonce: setup.nonce,
        },
    )
    .map_err(|e| format!("cannot greet the browser: {e}"))?;
    let reader = stream
        .try_clone()
        .map_err(|e| format!("the browser's socket: {e}"))?;
    let writer = Arc::new(Mutex::new(stream));
    let (thread_writer, thread_sink) = (writer.clone(), sink.clone());
    std::thread::Builder::new()
        .name("jsprof-servo link".into())
        .spawn(move || serve(reader, thread_writer, thread_sink, started))
        .map_err(|e| format!("no thread for the link to the browser: {e}"))?;
    Ok((writer, sink))
}

/// Answers the browser's requests until it goes; then ends this process at once (a page
/// that never yields would otherwise keep it, and the pipes it shares with the browser's
/// caller, open).
fn serve(reader: UnixStream, writer: Arc<Mutex<UnixStream>>, sink: Sink, started: Instant) {
    for line in BufReader::new(reader).lines() {
        let Ok(line) = line else { break };
        let message: ToContent = match serde_json::from_str(&line) {
            Ok(message) => message,
            Err(e) => {
                eprintln!("jsprof-servo: content process: a malformed request: {e}");
                break;
            }
        };
        let id = message.id;
        let respond = {
            let writer = writer.clone();
            move |answer: Answer| {
                let mut writer = writer.lock().unwrap_or_else(PoisonError::into_inner);
                let _ = link::send(&mut *writer, &ToBrowser::Answer { id, answer });
            }
        };
        match message.request {
            Request::Status => {
                let work = script::jsprof::pending_work();
                respond(Answer::Status {
                    stops: script::jsprof::pending_stops(),
                    timers: work.timers,
                    busy_workers: work.busy_workers,
                });
            }
            // These two wait (for the sampler thread, for traces to be built): on threads
            // of their own, so that the status is still answered meanwhile.
            Request::ForceSample {
                context,
                timeout_ms,
            } => {
                let wait = Duration::from_millis(timeout_ms);
                spawn(move || {
                    respond(Answer::Sampled(script::jsprof::force_sample(context, wait)))
                });
            }
            Request::Finish { limit_ms } => {
                let sink = sink.clone();
                let limit = Duration::from_millis(limit_ms);
                spawn(move || respond(Answer::Finished(report(&sink, started, limit))));
            }
        }
    }
    let _ = kill(Pid::this(), Signal::SIGKILL);
}

fn spawn(work: impl FnOnce() + Send + 'static) {
    if let Err(e) = std::thread::Builder::new()
        .name("jsprof-servo request".into())
        .spawn(work)
    {
        eprintln!("jsprof-servo: content process: no thread for a request: {e}");
    }
}

/// The end of the run in this process, as jsprof-servo does it in a single process: the
/// profilers still running are stopped (their traces kept with a sink), then the sessions of
/// profiling from outside; and what the sampler thread did.
fn report(sink: &Sink, started: Instant, limit: Duration) -> Report {
    script::jsprof::stop_running_sessions(limit);
    let traces = sink
        .as_ref()
        .map(|sink| std::mem::take(&mut *sink.lock().unwrap_or_else(PoisonError::into_inner)))
        .unwrap_or_default();
    let profiles = script::jsprof::stop_outside_sessions(limit);
    Report {
        pid: std::process::id(),
        run_ms: started.elapsed().as_secs_f64() * 1e3,
        traces,
        profiles,
        sampler: script::jsprof::sampler_stats().map(|s| s.to_json()),
    }
}
