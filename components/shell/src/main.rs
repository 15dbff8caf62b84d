//! `jsprof`: loads pages (file paths or http(s) URLs), runs their scripts in SpiderMonkey
//! the way a browser does, and prints their console output.
//!
//! The process is a browser (`browser.rs`, `service.rs` for `--profiler-service`, both
//! following their contents with `contents.rs`; `driven.rs` for `--webdriver`) and each page
//! runs in a content of its own (`content.rs`): a process with `-M`, a thread without, the
//! same messages crossing either way (`protocol.rs`, `transport.rs`).
//!
//! Exit codes: 0 when the page ran (even if its scripts threw: those errors are reported on
//! stderr, and also when `--timeout` stopped it with work left), 2 when it could not be
//! loaded or the command line is wrong, 3 when it was stopped for using more memory than
//! `memory.max_resident_mb` (its traces are still written), 70 when the engine hit an
//! internal error (a bug: a panic, caught and reported as `jsprof: internal error: …`; the
//! run stops there and its traces are still written) or a content process crashed. With
//! several pages, the highest of theirs.

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
use jsprof_export::files::TraceFile;
use jsprof_net::{url_from_input, Loader, LoaderConfig};
use jsprof_script::Prefs;
use protocol::Config;
use transport::Mode;

/// Run a web page's JavaScript in SpiderMonkey, like a browser would.
#[derive(Debug, Parser)]
#[command(name = "jsprof", version)]
struct Args {
    /// The pages: file paths or file:, http:, https: or data: URLs, run at once, each in a
    /// content of its own; with several, each line a page prints is prefixed with `[N] `,
    /// its place here (with --webdriver, one page at most: the page the browser opens
    /// first; about:blank without one).
    #[arg(required_unless_present = "webdriver", value_name = "PAGE")]
    pages: Vec<String>,
    /// Run each page in a content process of its own (as Servo's -M), which the browser
    /// process talks to over ipc-channel; without it, each runs on a thread of this
    /// process. JSPROF_MULTIPROCESS=1 in the environment does the same.
    #[arg(short = 'M', long)]
    multiprocess: bool,
    /// Serve W3C WebDriver on 127.0.0.1:PORT and run the pages it navigates to, until
    /// SIGINT or SIGTERM (Selenium, WebdriverIO…; Force Sample at
    /// POST /session/{id}/forcesample). 0 picks a free port.
    #[arg(long, value_name = "PORT")]
    webdriver: Option<u16>,
    /// Serve the profiler service (seed 003, Opera Scope's `profiler`) on 127.0.0.1:PORT,
    /// JSON one message a line, and keep the pages running until its Quit, SIGINT or
    /// SIGTERM (`jsprof scope PORT` is its client). 0 picks a free port.
    #[arg(long, value_name = "PORT")]
    profiler_service: Option<u16>,
    /// With --profiler-service: hold each page's first load until a client sends Continue.
    #[arg(long, requires = "profiler_service")]
    start_paused: bool,
    /// Start the page hidden (document.visibilityState "hidden", as if minimised): its
    /// Profilers are paused until it is shown. Same as --pref dom.document.hidden=true.
    #[arg(long)]
    hidden: bool,
    /// Set a preference (repeatable), e.g. --pref profiler.base_interval_ms=10.
    #[arg(long = "pref", value_name = "NAME=VALUE")]
    prefs: Vec<String>,
    /// Stop after this many seconds even if timers or loads remain (each page: a content's
    /// deadline is its own).
    #[arg(long, value_name = "SECONDS")]
    timeout: Option<f64>,
    /// Trust the CA certificate(s) in this PEM file for https.
    #[arg(long, value_name = "PEM")]
    certificate_path: Option<PathBuf>,
    /// Resolve this host name to 127.0.0.1 (repeatable), e.g. web-platform.test.
    #[arg(long = "host-override", value_name = "HOST")]
    host_overrides: Vec<String>,
    /// Profile the whole run from outside and write the trace here: .json (or .json.gz) is
    /// the ProfilerTrace format of the JS Self-Profiling API (an array of them, one a page,
    /// with several pages); .cpuprofile, .speedscope.json, .trace.json, .pb.gz, .folded and
    /// .svg are the export formats of `jsprof convert`.
    #[arg(long, value_name = "FILE")]
    profile_out: Option<PathBuf>,
    /// Print, on stderr, one JSON line of what sampling cost (for --profile-out and for the
    /// page's own Profilers), and where the page and its sampler thread ran; one a page.
    #[arg(long)]
    profile_stats: bool,
    /// Sample interval for --profile-out, in ms (rounded up to the base interval).
    #[arg(long, value_name = "MS", default_value_t = 10.0)]
    profile_interval: f64,
    /// Write every trace the pages' own Profilers produce (each `stop()`), as a JSON array
    /// in page order and each page's in the order they were built (gzipped if the name
    /// ends in .gz), or in an export format chosen by the name as for --profile-out (one
    /// thread per trace).
    #[arg(long, value_name = "FILE")]
    trace_out: Option<PathBuf>,
}

mod browser;
mod collector;
mod content;
mod contents;
mod diagnostics;
mod driven;
mod export;
mod protocol;
mod scope_client;
mod service;
mod signals;
mod transport;

/// The exit code of a page that could not be loaded, or of a wrong command line.
const LOAD_ERROR: u8 = 2;

/// The exit code of a run that hit an internal error (sysexits' EX_SOFTWARE), or whose
/// content crashed.
const INTERNAL_ERROR: u8 = 70;

/// The exit code of a page stopped for passing its memory limit.
const OUT_OF_MEMORY: u8 = 3;

/// Set to 1, `jsprof PAGE…` runs as `jsprof -M PAGE…` (how the test suite runs again with
/// content processes).
const MULTIPROCESS_ENV: &str = "JSPROF_MULTIPROCESS";

fn main() -> ExitCode {
    // SIGINT and SIGTERM are taken by one thread from here on (see signals.rs).
    signals::listen();
    // A panic is a bug in jsprof, never the page's doing: one line says so, where it is
    // caught (at the callback or task it happened in) the run stops, and the exit code is
    // INTERNAL_ERROR. In a content process the line goes to its browser (diagnostics.rs).
    std::panic::set_hook(Box::new(|info| {
        let message = jsprof_script::panic_message(info.payload());
        let at = info
            .location()
            .map(|l| format!(" (at {}:{})", l.file(), l.line()))
            .unwrap_or_default();
        diagnostics::line(format!("jsprof: internal error: {message}{at}"));
    }));
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let sub = argv.get(1).and_then(|a| a.to_str());
    // `jsprof --content-process TOKEN --content-page N`: a content process of `jsprof -M`,
    // started by its browser (N, the page's number, is for people reading `ps`).
    if sub == Some("--content-process") {
        return match argv.get(2).and_then(|t| t.to_str()) {
            Some(token) => content::process_main(token),
            None => ExitCode::from(LOAD_ERROR),
        };
    }
    // `jsprof scope PORT`: the profiler service's client.
    if sub == Some("scope") {
        let rest = argv[1..].iter().cloned();
        return scope_client::run(scope_client::ScopeArgs::parse_from(rest)).unwrap_or_else(
            |message| {
                eprintln!("jsprof: {message}");
                ExitCode::from(LOAD_ERROR)
            },
        );
    }
    // `jsprof collect|query|top|flame|diff|regressions|sourcemaps`: field profiles, by
    // jsprof-collector (collector.rs).
    if let Some(
        sub @ ("collect" | "query" | "top" | "flame" | "diff" | "regressions" | "sourcemaps"),
    ) = sub
    {
        return collector::exec(sub, &argv[2..]);
    }
    // `jsprof convert …` and `jsprof report …` work on trace files, without the engine.
    if let Some(sub @ ("convert" | "report")) = sub {
        let rest = argv[1..].iter().cloned();
        let result = if sub == "convert" {
            export::convert(export::ConvertArgs::parse_from(rest))
        } else {
            export::report(export::ReportArgs::parse_from(rest))
        };
        return result.unwrap_or_else(|message| {
            eprintln!("jsprof: {message}");
            ExitCode::from(LOAD_ERROR)
        });
    }
    let args = Args::parse();
    let result = std::panic::catch_unwind(|| run(args)).unwrap_or_else(|payload| {
        jsprof_script::record_internal_error(&*payload);
        Ok(ExitCode::from(INTERNAL_ERROR))
    });
    // Every page's runtime is gone (a content thread's was joined): the engine, if this
    // process started it, ends here.
    jsprof_script::shutdown();
    match result {
        Ok(code) => code,
        Err(message) => {
            eprintln!("jsprof: {message}");
            ExitCode::from(LOAD_ERROR)
        }
    }
}

fn run(args: Args) -> Result<ExitCode, String> {
    let mut pref_args = args.prefs.clone();
    if args.hidden {
        pref_args.push("dom.document.hidden=true".into());
    }
    let mut prefs = Prefs::default();
    for p in &pref_args {
        prefs.set_from_arg(p).map_err(|e| e.to_string())?;
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
    // The contents make their own loaders; this one says now what is wrong with the options.
    Loader::new(&LoaderConfig {
        certificate_path: args.certificate_path.clone(),
        host_overrides: args.host_overrides.clone(),
        timeout: None,
    })
    .map_err(|e| e.to_string())?;
    let cwd =
        std::env::current_dir().map_err(|e| format!("cannot read the current directory: {e}"))?;
    let urls = args
        .pages
        .iter()
        .map(|page| url_from_input(page, &cwd).map_err(|e| e.to_string()))
        .collect::<Result<Vec<_>, _>>()?;
    if !(args.profile_interval.is_finite() && args.profile_interval >= 0.0) {
        return Err(format!(
            "--profile-interval {}: expected a number of ms, 0 or more",
            args.profile_interval
        ));
    }
    // An output name that says no known format is an error before the page runs.
    let trace_out = TraceFile::of_arg(args.trace_out.as_deref(), "--trace-out")?;
    let profile_out = TraceFile::of_arg(args.profile_out.as_deref(), "--profile-out")?;
    let config = Config {
        prefs: pref_args,
        timeout,
        certificate_path: args.certificate_path.as_deref().map(Config::path_bytes),
        host_overrides: args.host_overrides.clone(),
        profile_interval: args.profile_out.as_ref().map(|_| args.profile_interval),
        collect_traces: args.trace_out.is_some() || args.profile_stats,
        send_traces: args.trace_out.is_some(),
        traces_by_deadline: matches!(trace_out, Some((_, TraceFile::Spec))),
        stats: args.profile_stats,
    };
    let mode = if args.multiprocess || std::env::var_os(MULTIPROCESS_ENV).is_some_and(|v| v == "1")
    {
        Mode::Processes
    } else {
        Mode::Threads
    };
    if let Some(port) = args.webdriver {
        if args.profiler_service.is_some() {
            return Err("--webdriver and --profiler-service: one or the other".into());
        }
        if args.profile_out.is_some() || timeout.is_some() {
            return Err("--webdriver runs until SIGINT or SIGTERM: --profile-out and --timeout do not apply (the pages' Profilers and --trace-out do)".into());
        }
        if urls.len() > 1 {
            return Err("--webdriver drives one browsing context: give it one PAGE at most".into());
        }
        let hidden = prefs.bool("dom.document.hidden");
        return webdriver(
            port,
            urls.into_iter().next(),
            mode,
            &config,
            hidden,
            trace_out,
        );
    }
    if urls.is_empty() {
        return Err("no page given".into());
    }
    if let Some(port) = args.profiler_service {
        if args.profile_out.is_some() || timeout.is_some() || args.trace_out.is_some() {
            return Err("--profiler-service runs until its Quit, SIGINT or SIGTERM: --profile-out, --trace-out and --timeout do not apply".into());
        }
        return service::run(port, urls, mode, &config, args.start_paused);
    }
    browser::run_pages(
        urls,
        mode,
        &config,
        browser::Outputs {
            trace_out,
            profile_out,
        },
    )
}

/// `jsprof --webdriver PORT [PAGE]`: the WebDriver server on its threads, the browser on
/// this one, until SIGINT or SIGTERM.
fn webdriver(
    port: u16,
    first: Option<jsprof_net::Url>,
    mode: Mode,
    config: &Config,
    hidden: bool,
    trace_out: Option<(&std::path::Path, TraceFile)>,
) -> Result<ExitCode, String> {
    let browser = driven::RemoteBrowser::new(hidden);
    let server = jsprof_webdriver::server::serve(port, std::sync::Arc::new(browser.clone()))
        .map_err(|e| format!("--webdriver {port}: cannot listen: {e}"))?;
    eprintln!("jsprof: WebDriver listening on http://{}", server.address());
    // From here a signal ends the browser (until then it ended the process).
    {
        let browser = browser.clone();
        signals::run_browser(move || browser.shutdown());
    }
    let report = driven::run(first, mode, config, &browser);
    signals::browser_ended();
    // The session ends with the server (the browser is gone: nothing waits for it).
    server.stop();
    if let Some(error) = report.load_error {
        return Err(error);
    }
    if let Some((path, kind)) = trace_out {
        let traces: Vec<&protocol::TraceJson> = report.traces.iter().collect();
        browser::write_traces(path, kind, &traces, 0, false)?;
    }
    Ok(if report.internal_error.is_some() || report.crashed {
        ExitCode::from(INTERNAL_ERROR)
    } else {
        ExitCode::SUCCESS
    })
}
