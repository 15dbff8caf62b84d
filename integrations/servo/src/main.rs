//! `jsprof-servo`: Servo 0.7.0, headless, with jsprof's JS Self-Profiling API patched into
//! its script crate (`../patches`). It has `jsprof`'s contract, so that jsprof's WPT runner
//! drives it unchanged (`./mach test-wpt --engine servo`): it loads one page, prints the
//! page's console output on stdout (one message a line, as written), and exits when the
//! page is done; `--timeout`, `--trace-out`, `--profile-out`, `--profile-interval`,
//! `--profile-stats`, `--hidden`, `--pref`, `--certificate-path`, `--host-override` and
//! `-M` mean what they mean to `jsprof`. `--webdriver PORT` serves W3C WebDriver, as
//! `jsprof --webdriver` does (`webdriver.rs`), until SIGINT or SIGTERM.
//!
//! Built as Servo's own headless tests are (`servo-0.7.0/tests/common/mod.rs`): a
//! `SoftwareRenderingContext` made current, a `ServoBuilder` with an `EventLoopWaker`, one
//! `WebView` with a delegate, and `spin_event_loop` until done. Single-process by default
//! (Servo's default `Opts`): the page's script threads run in this process, which is how
//! `script::jsprof` gets the configuration and gives back the traces. With `-M` (or
//! `JSPROF_MULTIPROCESS=1`), Servo's multiprocess mode: Servo runs this executable again as
//! a content process for each site (`content.rs`), whose jsprof (its own `ProfilerGroup`
//! and sampler thread) this process reaches through a side channel (`contents.rs`,
//! `link.rs`).
//!
//! "Done" is as close as Servo lets us come to jsprof's (no task, timer or load left):
//! the load is complete, and for [`QUIET`] the page has printed nothing, no `stop()`
//! promise was left to settle, no timer was scheduled and no dedicated worker was running
//! (`script::jsprof::pending_work`, counted by the patches), and an empty script evaluated
//! in the page after that has run (the script thread had finished the tasks queued before
//! it). A fetch in flight is not seen: one slower than [`QUIET`] ends the run early.
//!
//! Exit codes, as `jsprof`'s: 0 when the page ran (also when `--timeout` stopped it, with
//! `jsprof-servo: stopped at --timeout with work left` on stderr), 2 when the command line
//! or the page is wrong, 70 when Servo reported a crash (a panic in a pipeline) or, with
//! `-M`, a content process crashed.

#![forbid(unsafe_code)]

mod content;
mod contents;
mod link;
mod serve;
mod webdriver;

use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use clap::Parser;
use contents::Contents;
use dpi::PhysicalSize;
use jsprof_export::files::{write_json, write_traces, TraceFile};
use jsprof_page_model::prefs::{Prefs, KNOWN};
use jsprof_profiler::ProfilerTrace;
use servo::{
    ConsoleLogLevel, EventLoopWaker, InputEventId, InputEventResult, LoadStatus, Opts, PrefValue,
    Preferences, RenderingContext, ServoBuilder, SoftwareRenderingContext, TraversalId, WebView,
    WebViewBuilder, WebViewDelegate,
};

/// Run a web page in Servo with jsprof's Profiler, like `jsprof` runs it in its engine.
#[derive(Debug, Parser)]
#[command(name = "jsprof-servo", version)]
struct Args {
    /// An http:, https: or data: URL, or a file (a path or a file: URL), which is served
    /// from its folder over HTTP on 127.0.0.1 with its `.headers` sidecars. With
    /// --webdriver, the page the browser opens first (about:blank without it).
    #[arg(required_unless_present = "webdriver", value_name = "PAGE")]
    page: Option<String>,
    /// Serve W3C WebDriver on 127.0.0.1:PORT (0: any free port; the address is printed
    /// on stderr) and run the pages it navigates to, until SIGINT or SIGTERM; the spec's
    /// Force Sample is POST /session/{id}/forcesample.
    #[arg(long, value_name = "PORT")]
    webdriver: Option<u16>,
    /// Start the page hidden (document.visibilityState "hidden", as if minimised): its
    /// Profilers are paused until it is shown, which jsprof-servo never does. Same as --pref
    /// dom.document.hidden=true. The webview is hidden through Servo's embedding API, so
    /// Servo also throttles the page: its timers fire 1 s apart at the soonest (Servo's pref
    /// js.timers.minimum_duration), and no requestAnimationFrame callback runs.
    #[arg(long)]
    hidden: bool,
    /// Set a preference (repeatable): jsprof's (`profiler.base_interval_ms=10`) or
    /// Servo's (`dom.webgpu.enabled=true`, `dom_webgpu_enabled=true`).
    #[arg(long = "pref", value_name = "NAME=VALUE")]
    prefs: Vec<String>,
    /// Stop after this many seconds even if the page is not done.
    #[arg(long, value_name = "SECONDS")]
    timeout: Option<f64>,
    /// Write every trace the page's Profilers produced (each `stop()`, then those still
    /// running at the end): a JSON array (gzipped if the name ends in .gz), or an export
    /// format chosen by the name as for --profile-out (one thread per trace).
    #[arg(long, value_name = "FILE")]
    trace_out: Option<PathBuf>,
    /// Profile the whole run from outside, whatever the page's Document-Policy, and write
    /// the trace here: .json (or .json.gz) is the ProfilerTrace format of the JS
    /// Self-Profiling API (an array of them if the page navigated); .cpuprofile,
    /// .speedscope.json, .trace.json, .pb.gz, .folded and .svg are the export formats of
    /// `jsprof convert`.
    #[arg(long, value_name = "FILE")]
    profile_out: Option<PathBuf>,
    /// Print, on stderr, one JSON line of what the process's sampler thread did and cost
    /// (jsprof's `sampler` fields; the page thread's own cost is not read in Servo) and the
    /// process's pid; with -M, one line a content process whose sampler ran (this process's,
    /// without a sampler, if none did).
    #[arg(long)]
    profile_stats: bool,
    /// Sample interval for --profile-out, in ms (rounded up to the base interval).
    #[arg(long, value_name = "MS", default_value_t = 10.0)]
    profile_interval: f64,
    /// Trust the CA certificate(s) in this PEM file for https (Servo's
    /// `Opts::certificate_path`).
    #[arg(long, value_name = "PEM")]
    certificate_path: Option<PathBuf>,
    /// Resolve this host name to 127.0.0.1 (repeatable), e.g. web-platform.test.
    #[arg(long = "host-override", value_name = "HOST")]
    host_overrides: Vec<String>,
    /// Run page content in Servo's content processes (its multiprocess mode: one process a
    /// site), each with its own sampler thread; --profile-stats then prints one line a
    /// content process that sampled. JSPROF_MULTIPROCESS=1 in the environment does the same.
    #[arg(short = 'M', long)]
    multiprocess: bool,
}

/// Set to 1, as `-M` (as for `jsprof`: `./mach`'s second pass sets it).
const MULTIPROCESS_ENV: &str = "JSPROF_MULTIPROCESS";

/// How long a loaded page must print nothing, with no `stop()`, timer or busy worker left,
/// to be done.
const QUIET: Duration = Duration::from_millis(500);
/// How long the traces of profilers still running at the end may take to build.
pub(crate) const STOP_LIMIT: Duration = Duration::from_secs(2);
/// How long --webdriver waits for the first page to load before it serves.
const FIRST_LOAD: Duration = Duration::from_secs(10);
/// How long a graceful shutdown may take before the process just exits.
const SHUTDOWN_LIMIT: Duration = Duration::from_secs(5);
/// The exit code of a run Servo reported a crash in (sysexits' EX_SOFTWARE, as jsprof).
const INTERNAL_ERROR: u8 = 70;

fn main() -> ExitCode {
    // Servo's TLS provider (its net crate's `aws-lc-rs`): with jsprof-export's HTTP client
    // in the same binary, rustls has two compiled in and would choose neither.
    let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
    // Servo's constellation runs this executable again as a content process (-M), with
    // exactly these two arguments; it waits for the process to connect, so nothing may
    // stop it before.
    let mut argv = std::env::args_os().skip(1);
    if let (Some(flag), Some(token), None) = (argv.next(), argv.next(), argv.next()) {
        if flag == "--content-process" {
            if let Some(token) = token.to_str() {
                return content::run(token.to_owned());
            }
        }
    }
    let args = Args::parse();
    match run(args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("jsprof-servo: {e}");
            ExitCode::from(2)
        }
    }
}

/// How the run ended.
enum End {
    Done,
    TimedOut,
    Crashed,
    /// SIGINT or SIGTERM under --webdriver: the browser ends, and the process exits 0.
    Signalled,
}

fn run(args: Args) -> Result<ExitCode, String> {
    let timeout = match args.timeout {
        Some(t) if t.is_finite() && t > 0.0 => Some(Duration::from_secs_f64(t)),
        Some(t) => {
            return Err(format!(
                "--timeout {t}: expected a positive number of seconds"
            ))
        }
        None => None,
    };
    // --hidden is jsprof's pref dom.document.hidden, after the --prefs (so it wins), as in
    // jsprof.
    let mut pref_args = args.prefs.clone();
    if args.hidden {
        pref_args.push("dom.document.hidden=true".into());
    }
    let (jsprof_prefs, preferences) = split_prefs(&pref_args)?;
    let hidden = jsprof_prefs.bool("dom.document.hidden");
    if jsprof_prefs.int("profiler.base_interval_ms") < 1 {
        return Err("--pref profiler.base_interval_ms: expected 1 or more".into());
    }
    if !(args.profile_interval.is_finite() && args.profile_interval >= 0.0) {
        return Err(format!(
            "--profile-interval {}: expected a number of ms, 0 or more",
            args.profile_interval
        ));
    }
    let trace_out = TraceFile::of_arg(args.trace_out.as_deref(), "--trace-out")?;
    let profile_out = TraceFile::of_arg(args.profile_out.as_deref(), "--profile-out")?;
    if args.webdriver.is_some() && (args.timeout.is_some() || args.profile_out.is_some()) {
        return Err("--webdriver runs until SIGINT or SIGTERM: --profile-out and --timeout do not apply (the pages' Profilers and --trace-out do)".into());
    }
    // Once the command line is known good: a file page starts its server here.
    let url = match &args.page {
        Some(page) => page_url(page)?,
        None => url::Url::parse("about:blank").map_err(|e| e.to_string())?,
    };

    let multiprocess =
        args.multiprocess || std::env::var_os(MULTIPROCESS_ENV).is_some_and(|v| v == "1");
    let waker = Waker::default();

    // jsprof's side of Servo: set before Servo starts its first script thread, in this
    // process or (-M) in each content process, which the environment tells how.
    let jsprof = if multiprocess {
        let wake = waker.clone();
        let (contents, mut setup) = Contents::listen(Box::new(move || wake.wake()))?;
        setup.prefs = pref_args
            .iter()
            .filter(|arg| {
                arg.split_once('=')
                    .is_some_and(|(name, _)| is_jsprof_pref(name))
            })
            .cloned()
            .collect();
        setup.trace_sink = args.trace_out.is_some();
        setup.profile_interval = args.profile_out.is_some().then_some(args.profile_interval);
        let setup = serde_json::to_string(&setup).map_err(|e| e.to_string())?;
        std::env::set_var(link::SETUP_ENV, setup);
        Jsprof::Remote(contents)
    } else {
        let traces: Arc<Mutex<Vec<ProfilerTrace>>> = Arc::default();
        script::jsprof::configure(script::jsprof::Config {
            prefs: jsprof_prefs,
            trace_sink: args.trace_out.is_some().then(|| traces.clone()),
            file_header_sidecars: true,
            profile_interval: args.profile_out.is_some().then_some(args.profile_interval),
        })
        .map_err(|_| "jsprof was configured twice".to_owned())?;
        Jsprof::Local(traces)
    };
    let jsprof = Arc::new(jsprof);

    let hosts = hosts_file(&args.host_overrides)?;
    // Never `sandbox`: Servo's Linux sandbox clears the environment and forbids the
    // sampler's signals.
    let opts = Opts {
        certificate_path: args.certificate_path.map(|p| p.display().to_string()),
        host_file: hosts.clone(),
        multiprocess,
        ..Opts::default()
    };
    // Servo logs a harmless error without it (seen in the probe, SERVO.md).
    if std::env::var_os("XDG_RUNTIME_DIR").is_none() {
        std::env::set_var("XDG_RUNTIME_DIR", std::env::temp_dir());
    }

    let rendering_context: Rc<dyn RenderingContext> = Rc::new(
        SoftwareRenderingContext::new(PhysicalSize {
            width: 1024,
            height: 768,
        })
        .map_err(|e| format!("no software rendering context: {e:?}"))?,
    );
    rendering_context
        .make_current()
        .map_err(|e| format!("the rendering context cannot be made current: {e:?}"))?;
    let servo = ServoBuilder::default()
        .opts(opts)
        .preferences(preferences)
        .event_loop_waker(Box::new(waker.clone()))
        .build();
    let page = Rc::new(Page::default());
    let webview = WebViewBuilder::new(&servo, rendering_context)
        .delegate(page.clone())
        .url(url)
        .build();
    // A hidden page: the webview is hidden at once. `hide` follows the webview's creation to
    // the constellation on the same channel, which throttles the page's new pipeline
    // (`SetThrottled`) before its script thread has the response, so its document starts
    // hidden and its Profilers paused (patch servo-script.10). Nothing shows it again.
    if hidden {
        webview.hide();
    }
    // --webdriver: the server on its threads; what its commands need of Servo comes back
    // here as jobs. SIGINT and SIGTERM end the loop.
    let (jobs_tx, jobs) = mpsc::channel::<webdriver::Job>();
    let quit = Arc::new(AtomicBool::new(false));
    let server = match args.webdriver {
        Some(port) => {
            on_signals(quit.clone(), waker.clone())?;
            // The first page loads before the first command (a navigation tells the new
            // document from the one it leaves, which must be there), or for at most
            // FIRST_LOAD: a page whose load never ends is driven anyway.
            let waiting = Instant::now();
            while page.complete_at.get().is_none()
                && waiting.elapsed() < FIRST_LOAD
                && !quit.load(Ordering::Acquire)
            {
                waker.wait(Duration::from_millis(20));
                servo.spin_event_loop();
            }
            let browser = webdriver::ServoBrowser::new(
                webview.id(),
                hidden,
                page.webdriver.clone(),
                jobs_tx,
                waker.clone_box(),
                jsprof.clone(),
            );
            let server = jsprof_webdriver::server::serve(port, Arc::new(browser))
                .map_err(|e| format!("--webdriver {port}: cannot listen: {e}"))?;
            eprintln!(
                "jsprof-servo: WebDriver listening on http://{}",
                server.address()
            );
            Some(server)
        }
        None => {
            drop(jobs_tx);
            None
        }
    };

    let started = Instant::now();
    let deadline = timeout.map(|t| Instant::now() + t);
    let end = loop {
        waker.wait(Duration::from_millis(20));
        servo.spin_event_loop();
        while let Ok(job) = jobs.try_recv() {
            job(&servo, &webview);
        }
        if page.crashed.get() {
            break End::Crashed;
        }
        if let Some(pid) = jsprof.crashed() {
            eprintln!(
                "jsprof-servo: internal error: content process {pid} crashed (it ended before Servo ended it)"
            );
            break End::Crashed;
        }
        if quit.load(Ordering::Acquire) {
            break End::Signalled;
        }
        if server.is_none() && page.is_done(&webview, &jsprof) {
            break End::Done;
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            break End::TimedOut;
        }
    };

    // The end of the run, as jsprof's: profilers still running are stopped and their
    // traces kept (with a sink), then every trace is written.
    if let Some(server) = &server {
        server.stop();
    }
    let Gathered {
        traces,
        profiles,
        stats,
    } = jsprof.finish(started.elapsed());
    if let Some((path, kind)) = trace_out {
        write_file(path, kind, &traces, Json::Array)?;
        eprintln!(
            "jsprof-servo: {} trace(s) from the page's profilers written to {}",
            traces.len(),
            path.display()
        );
    }
    // Profiling from outside: its sessions (one a top-level document).
    if let Some((path, kind)) = profile_out {
        if profiles.is_empty() {
            return Err(format!(
                "--profile-out {}: no document was profiled",
                path.display()
            ));
        }
        write_file(path, kind, &profiles, Json::OneOrArray)?;
        let samples: usize = profiles.iter().map(|p| p.samples.len()).sum();
        let frames: usize = profiles.iter().map(|p| p.frames.len()).sum();
        eprintln!(
            "jsprof-servo: profile of {samples} samples ({frames} frames) written to {}",
            path.display()
        );
    }
    if args.profile_stats {
        for line in stats {
            eprintln!("{line}");
        }
    }
    if let Some(hosts) = &hosts {
        let _ = std::fs::remove_file(hosts);
    }
    let code = match end {
        End::Done => 0,
        End::TimedOut => {
            eprintln!("jsprof-servo: stopped at --timeout with work left");
            0
        }
        End::Crashed => INTERNAL_ERROR,
        End::Signalled => 0,
    };
    // A signal under --webdriver ends Servo as a finished page does: the process's exit
    // while Servo's threads still run can crash in SpiderMonkey's static destructors (a
    // mutex still held), and WebDriver's clients check for status 0.
    if !matches!(end, End::Done | End::Signalled) {
        // A script that never yields may keep Servo's shutdown waiting: just exit.
        std::process::exit(code.into());
    }
    // Servo's shutdown spins its event loop until every thread has ended; a watchdog
    // ends the process if that takes too long.
    std::thread::spawn(|| {
        std::thread::sleep(SHUTDOWN_LIMIT);
        eprintln!("jsprof-servo: Servo did not shut down within {SHUTDOWN_LIMIT:?}");
        std::process::exit(0);
    });
    drop(webview);
    drop(servo);
    Ok(ExitCode::from(code))
}

/// SIGINT and SIGTERM (--webdriver): the first sets `quit` and wakes the loop. Taken on a
/// thread of their own from here on; before, they end the process as by default.
fn on_signals(quit: Arc<AtomicBool>, waker: Waker) -> Result<(), String> {
    use tokio::signal::unix::{signal, SignalKind};
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
        .map_err(|e| format!("no runtime for the signals: {e}"))?;
    let (mut term, mut int) = {
        let _entered = runtime.enter();
        let listen = |kind| signal(kind).map_err(|e| format!("cannot take {kind:?}: {e}"));
        (
            listen(SignalKind::terminate())?,
            listen(SignalKind::interrupt())?,
        )
    };
    std::thread::Builder::new()
        .name("jsprof-servo signals".into())
        .spawn(move || {
            runtime.block_on(async {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = int.recv() => {}
                }
            });
            quit.store(true, Ordering::Release);
            waker.wake();
        })
        .map_err(|e| format!("no thread for the signals: {e}"))?;
    Ok(())
}

/// The page argument as a URL: an http:, https: or data: URL as it is; a file (a path or a
/// file: URL) served from its folder over HTTP on 127.0.0.1 ([`serve`]: Servo fetches module
/// scripts in CORS mode, which fails for file: URLs), its fragment kept.
fn page_url(page: &str) -> Result<url::Url, String> {
    let (file, fragment) = match url::Url::parse(page) {
        Ok(url) if matches!(url.scheme(), "http" | "https" | "data") => return Ok(url),
        Ok(url) if url.scheme() == "file" => (
            url.to_file_path()
                .map_err(|()| format!("{page}: not a usable file URL"))?,
            url.fragment().map(str::to_owned),
        ),
        // A path, perhaps with a fragment (`periodic.html#10,4400`).
        _ => match page.rsplit_once('#') {
            Some((file, fragment)) if !Path::new(page).exists() => {
                (PathBuf::from(file), Some(fragment.to_owned()))
            }
            _ => (PathBuf::from(page), None),
        },
    };
    let file = std::fs::canonicalize(&file).map_err(|e| format!("{}: {e}", file.display()))?;
    if !file.is_file() {
        return Err(format!("{}: not a file", file.display()));
    }
    let (Some(dir), Some(name)) = (file.parent(), file.file_name()) else {
        return Err(format!("{}: not a usable file path", file.display()));
    };
    let origin = serve::serve(dir.to_path_buf())
        .map_err(|e| format!("cannot serve {}: {e}", dir.display()))?;
    let mut url = url::Url::parse(&origin).map_err(|e| e.to_string())?;
    url.path_segments_mut()
        .map_err(|()| "no path".to_owned())?
        .push(&name.to_string_lossy());
    url.set_fragment(fragment.as_deref());
    eprintln!(
        "jsprof-servo: serving {} at {origin} (Servo loads no module script from file:)",
        dir.display()
    );
    Ok(url)
}

/// Whether `name` is one of jsprof's preferences (else Servo's).
fn is_jsprof_pref(name: &str) -> bool {
    KNOWN.iter().any(|(known, _, _)| *known == name)
}

/// `--pref NAME=VALUE`: a name jsprof knows (`profiler.base_interval_ms`, ...) sets jsprof's
/// preference; any other is Servo's, spelled with dots or underscores
/// (`dom.webgpu.enabled` is `dom_webgpu_enabled`), typed by
/// `PrefValue::from_booleanish_str`. As in Servo's own tests, no HTTP proxy.
fn split_prefs(args: &[String]) -> Result<(Prefs, Preferences), String> {
    let mut jsprof = Prefs::default();
    let mut servo = Preferences {
        network_http_proxy_uri: String::new(),
        network_https_proxy_uri: String::new(),
        ..Preferences::default()
    };
    for arg in args {
        let (name, value) = arg
            .split_once('=')
            .ok_or_else(|| format!("--pref {arg}: expected name=value"))?;
        if is_jsprof_pref(name) {
            jsprof.set_from_arg(arg).map_err(|e| e.to_string())?;
            continue;
        }
        let servo_name = name.replace(['.', '-'], "_");
        if !Preferences::exists(&servo_name) {
            return Err(format!(
                "--pref {arg}: neither a jsprof nor a Servo preference"
            ));
        }
        // FIXME: Servo's set_value panics when the value's type is not the pref's.
        servo.set_value(&servo_name, PrefValue::from_booleanish_str(value));
    }
    Ok((jsprof, servo))
}

/// A hosts file mapping every `--host-override` name to 127.0.0.1 (Servo's
/// `Opts::host_file`; the `HOST_FILE` environment variable would take precedence).
fn hosts_file(hosts: &[String]) -> Result<Option<PathBuf>, String> {
    if hosts.is_empty() {
        return Ok(None);
    }
    let path = std::env::temp_dir().join(format!("jsprof-servo-hosts-{}", std::process::id()));
    std::fs::write(&path, format!("127.0.0.1 {}\n", hosts.join(" ")))
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(Some(path))
}

/// A `--profile-stats` line: the process, the run's length (ms) and what its sampler
/// thread did, in jsprof's names (`jsprof --profile-stats`).
fn stats_line(pid: u32, run_ms: f64, sampler: Option<serde_json::Value>) -> String {
    serde_json::json!({
        "pid": pid,
        "run_ms": run_ms,
        "sampler": sampler,
    })
    .to_string()
}

/// Where jsprof runs: in this process (Servo's default), or in Servo's content processes
/// (`-M`), reached through [`Contents`].
enum Jsprof {
    /// The trace sink (`--trace-out`).
    Local(Arc<Mutex<Vec<ProfilerTrace>>>),
    Remote(Contents),
}

/// What the run's end gathered.
struct Gathered {
    /// `--trace-out`'s.
    traces: Vec<ProfilerTrace>,
    /// `--profile-out`'s: one a top-level document.
    profiles: Vec<ProfilerTrace>,
    /// `--profile-stats`' lines.
    stats: Vec<String>,
}

impl Jsprof {
    /// Whether the page still has work: a `stop()` to settle, a timer to fire, a worker
    /// running (in any content process, with `-M`).
    fn busy(&self) -> bool {
        match self {
            Jsprof::Local(_) => {
                let work = script::jsprof::pending_work();
                script::jsprof::pending_stops() != 0 || work.timers != 0 || work.busy_workers != 0
            }
            Jsprof::Remote(contents) => contents.busy(),
        }
    }

    /// WebDriver's Force Sample (`script::jsprof::force_sample`), wherever the sessions of
    /// `context` are.
    fn force_sample(&self, context: servo_base::id::BrowsingContextId, wait: Duration) -> bool {
        match self {
            Jsprof::Local(_) => script::jsprof::force_sample(context, wait),
            Jsprof::Remote(contents) => contents.force_sample(context, wait),
        }
    }

    /// A content process that crashed (`-M`; Servo does not report those).
    fn crashed(&self) -> Option<u32> {
        match self {
            Jsprof::Local(_) => None,
            Jsprof::Remote(contents) => contents.crashed(),
        }
    }

    /// The end of the run, as jsprof's: profilers still running are stopped and their
    /// traces kept (with a sink), then the sessions of profiling from outside; with `-M`,
    /// in every content process, whose traces come in the order the processes started.
    fn finish(&self, run: Duration) -> Gathered {
        match self {
            Jsprof::Local(sink) => {
                script::jsprof::stop_running_sessions(STOP_LIMIT);
                let traces =
                    std::mem::take(&mut *sink.lock().unwrap_or_else(PoisonError::into_inner));
                let profiles = script::jsprof::stop_outside_sessions(STOP_LIMIT);
                let sampler = script::jsprof::sampler_stats().map(|s| s.to_json());
                let stats = vec![stats_line(
                    std::process::id(),
                    run.as_secs_f64() * 1e3,
                    sampler,
                )];
                Gathered {
                    traces,
                    profiles,
                    stats,
                }
            }
            Jsprof::Remote(contents) => {
                let finished = contents.finish(STOP_LIMIT);
                if finished.unanswered != 0 {
                    eprintln!(
                        "jsprof-servo: {} content process(es) did not finish in time: their traces are missing",
                        finished.unanswered
                    );
                }
                let mut gathered = Gathered {
                    traces: Vec::new(),
                    profiles: Vec::new(),
                    stats: Vec::new(),
                };
                for report in finished.reports {
                    gathered.traces.extend(report.traces);
                    gathered.profiles.extend(report.profiles);
                    if report.sampler.is_some() {
                        gathered
                            .stats
                            .push(stats_line(report.pid, report.run_ms, report.sampler));
                    }
                }
                // No content process sampled: this process's line, without a sampler.
                if gathered.stats.is_empty() {
                    gathered.stats.push(stats_line(
                        std::process::id(),
                        run.as_secs_f64() * 1e3,
                        None,
                    ));
                }
                gathered
            }
        }
    }
}

/// How `traces` are written in the spec's JSON.
enum Json {
    /// A JSON array (`--trace-out`).
    Array,
    /// The trace, or an array if there are several (`--profile-out`: one a document).
    OneOrArray,
}

/// `--trace-out` and `--profile-out`: `traces` in the spec's JSON (jsprof's own
/// serialisation, as `stop()`'s promise got it), gzipped if the name ends in .gz, or in an
/// export format (one thread a trace).
fn write_file(
    path: &Path,
    kind: TraceFile,
    traces: &[ProfilerTrace],
    json: Json,
) -> Result<(), String> {
    match (kind, json, traces) {
        (TraceFile::Export(format), _, _) => write_traces(path, traces, format),
        (TraceFile::Spec, Json::OneOrArray, [one]) => write_json(path, one.to_json()),
        (TraceFile::Spec, _, _) => {
            let all: Vec<String> = traces.iter().map(ProfilerTrace::to_json).collect();
            write_json(path, format!("[{}]", all.join(",")))
        }
    }
}

/// Wakes the embedder's loop when Servo has work for it (the waker is called from Servo's
/// threads).
#[derive(Clone, Default)]
struct Waker(Arc<(Mutex<bool>, Condvar)>);

impl EventLoopWaker for Waker {
    fn clone_box(&self) -> Box<dyn EventLoopWaker> {
        Box::new(self.clone())
    }

    fn wake(&self) {
        let (woken, condvar) = &*self.0;
        *woken.lock().unwrap_or_else(PoisonError::into_inner) = true;
        condvar.notify_one();
    }
}

impl Waker {
    /// Waits until Servo wakes the loop, or `at_most`.
    fn wait(&self, at_most: Duration) {
        let (woken, condvar) = &*self.0;
        let guard = woken.lock().unwrap_or_else(PoisonError::into_inner);
        let (mut guard, _) = condvar
            .wait_timeout_while(guard, at_most, |woken| !*woken)
            .unwrap_or_else(PoisonError::into_inner);
        *guard = false;
    }
}

/// The page's `WebViewDelegate`: its console output, its load, a crash.
#[derive(Default)]
struct Page {
    /// When the load completed (`document.readyState` "complete").
    complete_at: Cell<Option<Instant>>,
    /// When the page last printed, or was last seen with work pending.
    last_active: Cell<Option<Instant>>,
    crashed: Cell<bool>,
    /// When the last ping (an empty script evaluated in the page) was sent, and when it was
    /// answered: the script thread runs it after every task queued before it.
    ping_sent: Cell<Option<Instant>>,
    ping_answered: Rc<Cell<Option<Instant>>>,
    /// What WebDriver commands wait for (--webdriver).
    webdriver: Arc<webdriver::Waiters>,
}

impl Page {
    /// Loaded, no `stop()` promise left to settle, quiet for [`QUIET`], and the script
    /// thread has answered a ping sent once it was quiet (a page that computes for longer
    /// than [`QUIET`] without printing is busy, not done: its task has to end before the
    /// ping runs).
    fn is_done(&self, webview: &WebView, jsprof: &Jsprof) -> bool {
        let Some(complete) = self.complete_at.get() else {
            return false;
        };
        // Work the page still has: a `stop()` to settle, a timer to fire, a worker running.
        if jsprof.busy() {
            self.last_active.set(Some(Instant::now()));
            return false;
        }
        let last = self.last_active.get().map_or(complete, |t| t.max(complete));
        if last.elapsed() < QUIET {
            return false;
        }
        match (self.ping_sent.get(), self.ping_answered.get()) {
            (Some(sent), Some(answered)) if answered >= sent => {
                if last <= sent {
                    return true;
                }
                // It printed since: ask again once it is quiet.
                self.ping_sent.set(None);
                false
            }
            (Some(_), _) => false,
            (None, _) => {
                self.ping_sent.set(Some(Instant::now()));
                let answered = self.ping_answered.clone();
                webview.evaluate_javascript("0", move |_| answered.set(Some(Instant::now())));
                false
            }
        }
    }
}

impl WebViewDelegate for Page {
    fn notify_load_status_changed(&self, _webview: WebView, status: LoadStatus) {
        if status == LoadStatus::Complete && self.complete_at.get().is_none() {
            self.complete_at.set(Some(Instant::now()));
        }
        self.webdriver.load_status(status);
    }

    fn notify_traversal_complete(&self, _webview: WebView, traversal: TraversalId) {
        self.webdriver.traversal_complete(traversal);
    }

    fn notify_input_event_handled(
        &self,
        _webview: WebView,
        event: InputEventId,
        _result: InputEventResult,
    ) {
        self.webdriver.input_handled(event);
    }

    fn show_console_message(&self, _webview: WebView, _level: ConsoleLogLevel, message: String) {
        // Every level on stdout, as jsprof prints the console (the WPT runner reads its
        // result line there).
        println!("{message}");
        self.last_active.set(Some(Instant::now()));
    }

    fn notify_new_frame_ready(&self, webview: WebView) {
        webview.paint();
    }

    fn notify_crashed(&self, _webview: WebView, reason: String, backtrace: Option<String>) {
        eprintln!("jsprof-servo: internal error: {reason}");
        if let Some(backtrace) = backtrace {
            eprintln!("{backtrace}");
        }
        self.crashed.set(true);
    }
}
