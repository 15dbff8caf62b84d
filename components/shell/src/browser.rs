//! The browser of a page run, `jsprof [-M] PAGE…`: one content per page, all at once (a
//! process each with `-M`, else a thread each: `transport.rs`). It prints what each page
//! says as it comes, keeps their traces, notices a content that ended without reporting
//! (one line, and a non-zero exit), waits for every content, then writes `--trace-out`,
//! `--profile-out` and the `--profile-stats` lines.
//!
//! With more than one page, each line a page makes is prefixed with its number on the
//! command line, `[N] `, so that each page's lines stay in their order and can be told
//! apart. With one, the output is what the page printed, as if it had run in this process.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use crossbeam_channel as crossbeam;
use jsprof_net::Url;

use crate::export::TraceFile;
use crate::protocol::{Config, FromContent, Load, Outcome, Stream, ToContent, TraceJson};
use crate::transport::{self, Content, Event, Exit, Mode, ToContentTx, What};

/// How long after its `--timeout` a content process may take to end before the browser
/// kills it (it ends within a second of it by itself; this is for one that cannot).
pub const BACKSTOP: Duration = Duration::from_secs(10);

/// How many messages may wait for the browser: a page printing faster than the browser
/// writes waits, as it would for a full pipe.
pub const EVENT_QUEUE: usize = 1024;

/// The outputs a run writes.
#[derive(Debug)]
pub struct Outputs<'a> {
    pub trace_out: Option<(&'a Path, TraceFile)>,
    pub profile_out: Option<(&'a Path, TraceFile)>,
}

/// One page of the run, as the browser follows it.
struct Page {
    url: Url,
    content: Option<Content>,
    tx: Option<ToContentTx>,
    outcome: Option<Outcome>,
    traces: Vec<TraceJson>,
    exited: bool,
    /// Killed by the browser's backstop.
    killed: bool,
    /// Ended without reporting.
    crashed: bool,
}

/// Prints the lines of a run: a page's with its prefix when there are several.
#[derive(Debug, Clone, Copy)]
pub struct Printer {
    pub prefixed: bool,
}

impl Printer {
    /// Prints `text` on `stream`, as page number `page` (0-based) said it. stdout is flushed
    /// before a line goes to stderr, as a page run in this process does.
    pub fn line(&self, page: Option<usize>, stream: Stream, text: &str) {
        let prefix = match page {
            Some(page) if self.prefixed => format!("[{}] ", page + 1),
            _ => String::new(),
        };
        match stream {
            Stream::Stdout => {
                let _ = writeln!(std::io::stdout(), "{prefix}{text}");
            }
            Stream::Stderr => {
                let _ = std::io::stdout().flush();
                let _ = writeln!(std::io::stderr(), "{prefix}{text}");
            }
        }
    }
}

/// The words for a content of `mode`, in lines about it.
pub fn content_kind(mode: Mode) -> &'static str {
    match mode {
        Mode::Processes => "content process",
        Mode::Threads => "content thread",
    }
}

/// Runs `urls`, one content each, and writes what they produced. Its exit code is the
/// highest of the pages': 70 (an internal error, or a content that crashed) over 3 (out of
/// memory) over 2 (a page that could not be loaded) over 0.
pub fn run_pages(
    urls: Vec<Url>,
    mode: Mode,
    config: &Config,
    outputs: Outputs<'_>,
) -> Result<ExitCode, String> {
    let printer = Printer {
        prefixed: urls.len() > 1,
    };
    let (events_tx, events) = crossbeam::bounded(EVENT_QUEUE);
    if mode == Mode::Threads {
        // The engine belongs to this thread, which shuts it down once every page has ended
        // (`main`).
        jsprof_script::init();
        crate::diagnostics::through_events(events_tx.clone());
    }
    let started = Instant::now();
    let mut pages: Vec<Page> = urls
        .into_iter()
        .map(|url| Page {
            url,
            content: None,
            tx: None,
            outcome: None,
            traces: Vec::new(),
            exited: false,
            killed: false,
            crashed: false,
        })
        .collect();
    let urls: Vec<&Url> = pages.iter().map(|p| &p.url).collect();
    let contents = start_contents(&urls, mode, &events_tx, &printer);
    for (page, content) in pages.iter_mut().zip(contents) {
        page.exited = content.is_none();
        page.crashed = content.is_none();
        page.content = content;
    }
    drop(events_tx);
    // A content process that has not ended this long after its deadline is killed.
    let mut backstop = match (mode, config.timeout) {
        (Mode::Processes, Some(timeout)) => Some(started + timeout + BACKSTOP),
        _ => None,
    };
    while pages.iter().any(|p| !p.exited) {
        let event = match backstop {
            Some(at) => match events.recv_deadline(at) {
                Ok(event) => event,
                Err(crossbeam::RecvTimeoutError::Timeout) => {
                    for page in pages.iter_mut().filter(|p| !p.exited) {
                        page.killed = page.content.as_ref().is_some_and(Content::kill);
                    }
                    backstop = None;
                    continue;
                }
                Err(crossbeam::RecvTimeoutError::Disconnected) => break,
            },
            None => match events.recv() {
                Ok(event) => event,
                Err(_) => break,
            },
        };
        let (i, what) = match event {
            Event::Diagnostic(text) => {
                printer.line(None, Stream::Stderr, &text);
                continue;
            }
            // Only the profiler service's browser has a service.
            Event::Service(_) => continue,
            Event::Page(i, what) => (i, what),
        };
        let Some(page) = pages.get_mut(i) else {
            continue;
        };
        match what {
            What::Connected(tx) => {
                tx.send(ToContent::Load(Load {
                    url: page.url.to_string(),
                    config: config.clone(),
                    driven: None,
                }));
                page.tx = Some(tx);
            }
            What::Message(FromContent::Line { stream, text }) => {
                printer.line(Some(i), stream, &text)
            }
            What::Message(FromContent::Traces(traces)) => page.traces.extend(traces),
            What::Message(FromContent::Done(outcome)) => {
                end_lines(&printer, i, &outcome);
                page.outcome = Some(outcome);
                // Done with it: a content process exits, a content thread's reader ends.
                page.tx = None;
            }
            What::Message(
                FromContent::Hello { .. }
                | FromContent::Reply { .. }
                | FromContent::ScopeReply { .. },
            ) => {}
            What::Exited(exit) => {
                page.exited = true;
                page.tx = None;
                // Ended without its report, or died of a signal after it (at its teardown).
                if page.outcome.is_none() || exit.signal().is_some() {
                    page.crashed = true;
                    let line = crash_line(mode, &page.url, exit, page.killed);
                    printer.line(Some(i), Stream::Stderr, &line);
                }
            }
        }
    }
    // A content thread is gone only once joined (`main` then shuts the engine down).
    for page in &mut pages {
        if let Some(content) = page.content.take() {
            content.join();
        }
    }
    let code = pages
        .iter()
        .map(|p| {
            if p.crashed {
                crate::INTERNAL_ERROR
            } else {
                p.outcome.as_ref().map_or(0, Outcome::exit_code)
            }
        })
        .max()
        .unwrap_or(0);
    // The outputs hold what the pages that ran produced; if none ran, there is nothing.
    let ran: Vec<&Page> = pages
        .iter()
        .filter(|p| p.outcome.as_ref().is_some_and(|o| o.load_error.is_none()))
        .collect();
    if ran.is_empty() {
        return Ok(ExitCode::from(code));
    }
    if let Some((path, kind)) = outputs.trace_out {
        let traces: Vec<&TraceJson> = ran.iter().flat_map(|p| &p.traces).collect();
        let left_out: u64 = ran
            .iter()
            .filter_map(|p| p.outcome.as_ref())
            .map(|o| o.traces_left_out)
            .sum();
        write_traces(path, kind, &traces, left_out, printer.prefixed)?;
    }
    if let Some((path, kind)) = outputs.profile_out {
        let profiles: Vec<&TraceJson> = ran
            .iter()
            .filter_map(|p| p.outcome.as_ref()?.profile.as_ref())
            .collect();
        if !profiles.is_empty() {
            write_profiles(path, kind, &profiles, printer.prefixed)?;
        }
    }
    for (i, page) in pages.iter().enumerate() {
        if let Some(stats) = page.outcome.as_ref().and_then(|o| o.stats.as_ref()) {
            printer.line(Some(i), Stream::Stderr, stats);
        }
    }
    Ok(ExitCode::from(code))
}

/// Starts a content for each of `urls` (page number i for the i-th), all sending into
/// `events`; one that cannot be started is a line, and `None`.
pub fn start_contents(
    urls: &[&Url],
    mode: Mode,
    events: &crossbeam::Sender<Event>,
    printer: &Printer,
) -> Vec<Option<Content>> {
    urls.iter()
        .enumerate()
        .map(
            |(i, url)| match transport::start(mode, i, events.clone(), crate::content::run) {
                Ok(content) => Some(content),
                Err(e) => {
                    let line = format!(
                        "jsprof: cannot start a {} for {url}: {e}",
                        content_kind(mode)
                    );
                    printer.line(Some(i), Stream::Stderr, &line);
                    None
                }
            },
        )
        .collect()
}

/// The lines that say how page `i`'s run ended.
pub fn end_lines(printer: &Printer, i: usize, outcome: &Outcome) {
    let mut lines = Vec::new();
    if let Some(error) = &outcome.load_error {
        lines.push(format!("jsprof: {error}"));
    }
    if outcome.timed_out {
        lines.push("jsprof: stopped at --timeout with work left".into());
    }
    if let Some((resident, limit)) = outcome.out_of_memory {
        lines.push(format!(
            "jsprof: out of memory: the page was stopped when the process reached {} MiB, over memory.max_resident_mb ({} MiB)",
            resident >> 20,
            limit >> 20
        ));
    }
    for unbuilt in &outcome.unbuilt {
        lines.push(format!(
            "jsprof: not built by the deadline, not written: {unbuilt}"
        ));
    }
    for line in lines {
        printer.line(Some(i), Stream::Stderr, &line);
    }
}

/// The line for a content that ended without reporting.
pub fn crash_line(mode: Mode, url: &Url, exit: Exit, killed: bool) -> String {
    let kind = content_kind(mode);
    if killed {
        format!(
            "jsprof: {kind} for {url} did not end {} s after its --timeout: killed",
            BACKSTOP.as_secs()
        )
    } else {
        format!("jsprof: {kind} for {url} crashed: {}", exit.describe())
    }
}

/// Writes `--trace-out`: the pages' traces, in page order and each page's in the order they
/// were built. A JSON array holds those each content sent by its write deadline (the rest
/// are counted, `left_out`); an export format is written whole.
pub fn write_traces(
    path: &Path,
    kind: TraceFile,
    traces: &[&TraceJson],
    left_out: u64,
    pages: bool,
) -> Result<(), String> {
    match kind {
        TraceFile::Spec => write_json(path, json_array(traces))?,
        TraceFile::Export(format) => {
            let parsed = traces
                .iter()
                .map(|t| t.parse())
                .collect::<Result<Vec<_>, _>>()?;
            crate::export::write_traces(path, &parsed, format)?
        }
    }
    if left_out > 0 {
        eprintln!("jsprof: {left_out} trace(s) not written: the deadline passed while writing");
    }
    eprintln!(
        "jsprof: {} trace(s) from the {} profilers written to {}",
        traces.len(),
        if pages { "pages'" } else { "page's" },
        path.display()
    );
    Ok(())
}

/// Writes `--profile-out`: the page's trace, or with several pages an array of theirs in
/// page order (an export format takes them all).
fn write_profiles(
    path: &Path,
    kind: TraceFile,
    profiles: &[&TraceJson],
    pages: bool,
) -> Result<(), String> {
    match (kind, profiles) {
        (TraceFile::Spec, [one]) if !pages => write_json(path, one.json.clone())?,
        (TraceFile::Spec, _) => write_json(path, json_array(profiles))?,
        (TraceFile::Export(format), _) => {
            let parsed = profiles
                .iter()
                .map(|t| t.parse())
                .collect::<Result<Vec<_>, _>>()?;
            crate::export::write_traces(path, &parsed, format)?
        }
    }
    let samples: u64 = profiles.iter().map(|p| p.samples).sum();
    let frames: u64 = profiles.iter().map(|p| p.frames).sum();
    if pages {
        eprintln!(
            "jsprof: profiles of {} pages ({samples} samples, {frames} frames) written to {}",
            profiles.len(),
            path.display()
        );
    } else {
        eprintln!(
            "jsprof: profile of {samples} samples ({frames} frames) written to {}",
            path.display()
        );
    }
    Ok(())
}

fn json_array(traces: &[&TraceJson]) -> String {
    let mut json =
        String::with_capacity(2 + traces.iter().map(|t| t.json.len() + 1).sum::<usize>());
    json.push('[');
    for (i, trace) in traces.iter().enumerate() {
        if i > 0 {
            json.push(',');
        }
        json.push_str(&trace.json);
    }
    json.push(']');
    json
}

/// Writes `json` to `path`, gzipped if its name ends in `.gz`.
pub fn write_json(path: &Path, json: String) -> Result<(), String> {
    let bytes = if path.extension().is_some_and(|e| e == "gz") {
        jsprof_profiler::gzip(json.as_bytes())
    } else {
        json.into_bytes()
    };
    std::fs::write(path, bytes).map_err(|e| format!("{}: cannot write: {e}", path.display()))
}
