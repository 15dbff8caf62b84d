//! `jsprof`: loads a page (a file path or an http(s) URL), runs its scripts in SpiderMonkey
//! the way a browser does, and prints its console output.
//!
//! Exit codes: 0 when the page ran (even if its scripts threw: those errors are reported on
//! stderr, and also when `--timeout` stopped it with work left), 2 when it could not be
//! loaded or the command line is wrong, 3 when it was stopped for using more memory than
//! `memory.max_resident_mb` (its traces are still written), 70 when the engine hit an
//! internal error (a bug: a panic, caught and reported as `jsprof: internal error: …`; the
//! run stops there and its traces are still written).

#![forbid(unsafe_code)]
// serde_json::json! of the --profile-stats line nests deeper than the default allows.
#![recursion_limit = "256"]
// Page content must never make the engine panic: `unwrap`/`expect` only where an invariant
// (not input) guarantees the value, each with its reason (tests may use them freely).
#![warn(clippy::unwrap_used, clippy::expect_used)]
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use export::TraceFile;
use jsprof_net::{url_from_input, Loader, LoaderConfig};
use jsprof_script::{run_page, Prefs, RunOptions};

/// Run a web page's JavaScript in SpiderMonkey, like a browser would.
#[derive(Debug, Parser)]
#[command(name = "jsprof", version)]
struct Args {
    /// The page: a file path or a file:, http: or https: URL (with --webdriver, the page
    /// the browser opens first; about:blank without one).
    #[arg(required_unless_present = "webdriver")]
    page: Option<String>,
    /// Serve W3C WebDriver on 127.0.0.1:PORT and run the pages it navigates to, until
    /// SIGINT or SIGTERM (Selenium, WebdriverIO…; Force Sample at
    /// POST /session/{id}/forcesample). 0 picks a free port.
    #[arg(long, value_name = "PORT")]
    webdriver: Option<u16>,
    /// Start the page hidden (document.visibilityState "hidden", as if minimised): its
    /// Profilers are paused until it is shown. Same as --pref dom.document.hidden=true.
    #[arg(long)]
    hidden: bool,
    /// Set a preference (repeatable), e.g. --pref profiler.base_interval_ms=10.
    #[arg(long = "pref", value_name = "NAME=VALUE")]
    prefs: Vec<String>,
    /// Stop after this many seconds even if timers or loads remain.
    #[arg(long, value_name = "SECONDS")]
    timeout: Option<f64>,
    /// Trust the CA certificate(s) in this PEM file for https.
    #[arg(long, value_name = "PEM")]
    certificate_path: Option<PathBuf>,
    /// Resolve this host name to 127.0.0.1 (repeatable), e.g. web-platform.test.
    #[arg(long = "host-override", value_name = "HOST")]
    host_overrides: Vec<String>,
    /// Profile the whole run from outside and write the trace here: .json (or .json.gz) is
    /// the ProfilerTrace format of the JS Self-Profiling API; .cpuprofile, .speedscope.json,
    /// .trace.json, .pb.gz, .folded and .svg are the export formats of `jsprof convert`.
    #[arg(long, value_name = "FILE")]
    profile_out: Option<PathBuf>,
    /// Print, on stderr, one JSON line of what sampling cost (for --profile-out and for the
    /// page's own Profilers).
    #[arg(long)]
    profile_stats: bool,
    /// Sample interval for --profile-out, in ms (rounded up to the base interval).
    #[arg(long, value_name = "MS", default_value_t = 10.0)]
    profile_interval: f64,
    /// Write every trace the page's own Profilers produce (each `stop()`), as a JSON array
    /// in the order they were built (gzipped if the name ends in .gz), or in an export
    /// format chosen by the name as for --profile-out (one thread per trace).
    #[arg(long, value_name = "FILE")]
    trace_out: Option<PathBuf>,
}

mod export;
mod signals;

/// The exit code of a run that hit an internal error (sysexits' EX_SOFTWARE).
const INTERNAL_ERROR: u8 = 70;

fn main() -> ExitCode {
    // SIGINT and SIGTERM are taken by one thread from here on (see signals.rs).
    signals::listen();
    // `jsprof convert …` and `jsprof report …` work on trace files, without the engine.
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let sub = argv.get(1).and_then(|a| a.to_str());
    if let Some(sub @ ("convert" | "report")) = sub {
        let rest = argv[1..].iter().cloned();
        let result = if sub == "convert" {
            export::convert(export::ConvertArgs::parse_from(rest))
        } else {
            export::report(export::ReportArgs::parse_from(rest))
        };
        return result.unwrap_or_else(|message| {
            eprintln!("jsprof: {message}");
            ExitCode::from(2)
        });
    }
    let args = Args::parse();
    // A panic is a bug in jsprof, never the page's doing: one line says so, where it is
    // caught (at the callback or task it happened in) the run stops, and the exit code is
    // INTERNAL_ERROR.
    std::panic::set_hook(Box::new(|info| {
        let message = jsprof_script::panic_message(info.payload());
        let at = info
            .location()
            .map(|l| format!(" (at {}:{})", l.file(), l.line()))
            .unwrap_or_default();
        eprintln!("jsprof: internal error: {message}{at}");
    }));
    let result = std::panic::catch_unwind(|| run(args)).unwrap_or_else(|payload| {
        jsprof_script::record_internal_error(&*payload);
        Ok(ExitCode::from(INTERNAL_ERROR))
    });
    jsprof_script::shutdown();
    match result {
        Ok(code) => code,
        Err(message) => {
            eprintln!("jsprof: {message}");
            ExitCode::from(2)
        }
    }
}

/// The exit code of a page stopped for passing its memory limit.
const OUT_OF_MEMORY: u8 = 3;

fn run(args: Args) -> Result<ExitCode, String> {
    let mut prefs = Prefs::default();
    for p in &args.prefs {
        prefs.set_from_arg(p).map_err(|e| e.to_string())?;
    }
    if args.hidden {
        prefs
            .set_from_arg("dom.document.hidden=true")
            .map_err(|e| e.to_string())?;
    }
    let timeout = match args.timeout {
        Some(t) if !(t.is_finite() && t > 0.0) => {
            return Err(format!(
                "--timeout {t}: expected a positive number of seconds"
            ))
        }
        Some(t) => Some(Duration::from_secs_f64(t)),
        None => None,
    };
    let loader = Loader::new(&LoaderConfig {
        certificate_path: args.certificate_path,
        host_overrides: args.host_overrides,
        timeout: None,
    })
    .map_err(|e| e.to_string())?;
    let cwd =
        std::env::current_dir().map_err(|e| format!("cannot read the current directory: {e}"))?;
    let url = match &args.page {
        Some(page) => Some(url_from_input(page, &cwd).map_err(|e| e.to_string())?),
        None => None,
    };
    if !(args.profile_interval.is_finite() && args.profile_interval >= 0.0) {
        return Err(format!(
            "--profile-interval {}: expected a number of ms, 0 or more",
            args.profile_interval
        ));
    }
    // An output name that says no known format is an error before the page runs.
    let trace_out = match &args.trace_out {
        Some(p) => Some((p, TraceFile::of(p, "--trace-out")?)),
        None => None,
    };
    let profile_out = match &args.profile_out {
        Some(p) => Some((p, TraceFile::of(p, "--profile-out")?)),
        None => None,
    };
    let options = RunOptions {
        loader,
        prefs,
        timeout,
        profile_interval: args.profile_out.as_ref().map(|_| args.profile_interval),
        collect_traces: args.trace_out.is_some() || args.profile_stats,
    };
    if let Some(port) = args.webdriver {
        if args.profile_out.is_some() || timeout.is_some() {
            return Err("--webdriver runs until SIGINT or SIGTERM: --profile-out and --timeout do not apply (the pages' Profilers and --trace-out do)".into());
        }
        return webdriver(port, url, &options, trace_out);
    }
    let Some(url) = url else {
        return Err("no page given".into());
    };
    let report = run_page(&url, &options).map_err(|e| e.to_string())?;
    if report.timed_out {
        eprintln!("jsprof: stopped at --timeout with work left");
    }
    if let Some((resident, limit)) = report.out_of_memory {
        eprintln!(
            "jsprof: out of memory: the page was stopped when the process reached {} MiB, over memory.max_resident_mb ({} MiB)",
            resident >> 20,
            limit >> 20
        );
    }
    for unbuilt in &report.unbuilt {
        eprintln!("jsprof: not built by the deadline, not written: {unbuilt}");
    }
    if let Some((path, kind)) = trace_out {
        write_traces(path, kind, &report.traces, report.write_by)?;
    }
    if let (Some((path, kind)), Some(trace)) = (profile_out, &report.trace) {
        match kind {
            TraceFile::Spec => write_json(path, trace.to_json())?,
            TraceFile::Export(format) => {
                export::write_traces(path, std::slice::from_ref(trace), format)?
            }
        }
        eprintln!(
            "jsprof: profile of {} samples ({} frames) written to {}",
            trace.samples.len(),
            trace.frames.len(),
            path.display()
        );
    }
    if args.profile_stats {
        print_stats(&report);
    }
    Ok(if report.internal_error.is_some() {
        ExitCode::from(INTERNAL_ERROR)
    } else if report.out_of_memory.is_some() {
        ExitCode::from(OUT_OF_MEMORY)
    } else {
        ExitCode::SUCCESS
    })
}

/// `jsprof --webdriver PORT [PAGE]`: the WebDriver server on its threads, the browser on
/// this one, until SIGINT or SIGTERM.
fn webdriver(
    port: u16,
    first: Option<jsprof_net::Url>,
    options: &RunOptions,
    trace_out: Option<(&PathBuf, TraceFile)>,
) -> Result<ExitCode, String> {
    let browser = jsprof_script::Browser::new();
    let server = jsprof_webdriver::server::serve(port, std::sync::Arc::new(browser.clone()))
        .map_err(|e| format!("--webdriver {port}: cannot listen: {e}"))?;
    eprintln!("jsprof: WebDriver listening on http://{}", server.address());
    // From here a signal ends the browser (until then it ended the process).
    signals::run_browser(&browser);
    let report = jsprof_script::run_browser(first, options, &browser);
    signals::browser_ended();
    // The session ends with the server (the browser is gone: nothing waits for it).
    server.stop();
    if let Some(error) = report.load_error {
        return Err(error);
    }
    if let Some((path, kind)) = trace_out {
        write_traces(path, kind, &report.traces, None)?;
    }
    Ok(if report.internal_error.is_some() {
        ExitCode::from(INTERNAL_ERROR)
    } else {
        ExitCode::SUCCESS
    })
}

/// Writes `traces` to `path` as --trace-out says. A JSON array is serialised trace by trace
/// and closed when `by` passes, so that a run ends on time: the traces left out are counted
/// on stderr. (An export format is written whole.)
fn write_traces(
    path: &std::path::Path,
    kind: TraceFile,
    traces: &[jsprof_profiler::ProfilerTrace],
    by: Option<std::time::Instant>,
) -> Result<(), String> {
    let mut written = traces.len();
    match kind {
        TraceFile::Spec => {
            let mut json = String::from("[");
            for (i, trace) in traces.iter().enumerate() {
                if by.is_some_and(|by| std::time::Instant::now() >= by) {
                    written = i;
                    break;
                }
                if i > 0 {
                    json.push(',');
                }
                json.push_str(&trace.to_json());
            }
            json.push(']');
            write_json(path, json)?;
        }
        TraceFile::Export(format) => export::write_traces(path, traces, format)?,
    }
    if written < traces.len() {
        eprintln!(
            "jsprof: {} trace(s) not written: the deadline passed while writing",
            traces.len() - written
        );
    }
    eprintln!(
        "jsprof: {written} trace(s) from the page's profilers written to {}",
        path.display()
    );
    Ok(())
}

/// Writes `json` to `path`, gzipped if its name ends in `.gz`.
fn write_json(path: &std::path::Path, json: String) -> Result<(), String> {
    let bytes = if path.extension().is_some_and(|e| e == "gz") {
        jsprof_profiler::gzip(json.as_bytes())
    } else {
        json.into_bytes()
    };
    std::fs::write(path, bytes).map_err(|e| format!("{}: cannot write: {e}", path.display()))
}

/// One JSON line on stderr: what sampling cost the page's thread, and what the traces (the
/// --profile-out one, or else the last page profiler's) hold.
fn print_stats(report: &jsprof_script::RunReport) {
    let sampling = report.sampling.clone().unwrap_or_default();
    let micros = |d: Option<std::time::Duration>| d.map(|d| d.as_secs_f64() * 1e6);
    let trace = report.trace.as_ref().or(report.traces.last());
    let samples = trace.map_or(0, |t| t.samples.len());
    let json_bytes = trace.map_or(0, |t| t.to_json().len());
    let (page_stops, page_stop_time) = report.page_stops;
    eprintln!(
        "{}",
        serde_json::json!({
            "samples": samples,
            "sampling_support": report.sampling.is_some(),
            "walks": sampling.walks,
            "walks_signalled": sampling.signalled,
            "gc_walks": sampling.gc.walks,
            "gc_walk_ms": sampling.gc.time.as_secs_f64() * 1e3,
            "gc_not_walked": sampling.gc.skipped,
            "gc_ticks_walked_at_end": sampling.gc.deferred,
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
            "sampler": report.sampler.as_ref().map(|s| serde_json::json!({
                "ticks": s.ticks,
                "missed_blocks": s.missed_ticks,
                "walked_at_tick": s.sampled,
                "requests": s.requests,
                "late_answers": s.late_answers,
                "idle": s.idle,
                "capture_ms": s.capture_time as f64 / 1e6,
                "thread_cpu_ms": s.thread_cpu as f64 / 1e6,
                "capture_max_us": s.capture_max as f64 / 1e3,
                "unanswered": s.unanswered,
                "walks_waited": s.walks_waited,
                "walk_wait_ms": s.walk_wait as f64 / 1e6,
                "walk_wait_max_ms": s.walk_wait_max as f64 / 1e6,
                "walks_abandoned": s.walks_abandoned,
                "buffered": s.buffered,
                "lateness_p50_us": s.lateness_quantile(0.5).map(|ns| ns as f64 / 1e3),
                "lateness_p99_us": s.lateness_quantile(0.99).map(|ns| ns as f64 / 1e3),
                "lateness_max_us": s.lateness_quantile(1.0).map(|ns| ns as f64 / 1e3),
                "evenness_worst_tenth_pts": s.phase_spread().map(|p| p.0),
                "taken_after_block_pct": s.phase_spread().map(|p| p.1),
            })),
            "support_ms": report.support.as_secs_f64() * 1e3,
            "support_fraction": report.support.as_secs_f64() / report.elapsed.as_secs_f64(),
            "guards": report.guards,
        })
    );
}
