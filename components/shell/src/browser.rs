//! The browser of a page run, `jsprof [-M] PAGE…`: one content per page, all at once (a
//! process each with `-M`, else a thread each: `transport.rs`). It prints what each page
//! says as it comes, keeps their traces, notices a content that ended without reporting
//! (one line, and a non-zero exit), waits for every content, then writes `--trace-out`,
//! `--profile-out` and the `--profile-stats` lines.
//!
//! With more than one page, each line a page makes is prefixed with its number on the
//! command line, `[N] `, so that each page's lines stay in their order and can be told
//! apart. With one, the output is what the page printed, as if it had run in this process.

use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use jsprof_net::Url;

use crate::contents::{self, Browser, Page, Printer, BACKSTOP};
use crate::protocol::{Config, FromContent, Outcome, Stream, TraceJson};
use crate::transport::Mode;
use jsprof_export::files::{write_json, TraceFile};

/// The outputs a run writes.
#[derive(Debug)]
pub struct Outputs<'a> {
    pub trace_out: Option<(&'a Path, TraceFile)>,
    pub profile_out: Option<(&'a Path, TraceFile)>,
}

/// The page run's part of following its contents: each page runs as it is, and its traces
/// are kept.
struct PageRun;

impl Browser for PageRun {
    /// The traces the page's content sent.
    type More = Vec<TraceJson>;

    fn message(&mut self, _: usize, page: &mut Page<Self::More>, message: FromContent) {
        if let FromContent::Traces(traces) = message {
            page.more.extend(traces);
        }
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
    let (events_tx, events) = contents::events(mode);
    let started = Instant::now();
    let mut pages: Vec<Page<Vec<TraceJson>>> = contents::start(urls, mode, events_tx, &printer);
    // A content process that has not ended this long after its deadline is killed.
    let backstop = match (mode, config.timeout) {
        (Mode::Processes, Some(timeout)) => Some(started + timeout + BACKSTOP),
        _ => None,
    };
    contents::follow(
        &mut PageRun,
        &mut pages,
        &events,
        mode,
        config,
        &printer,
        backstop,
    );
    contents::join(&mut pages);
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
    let ran: Vec<&Page<Vec<TraceJson>>> = pages
        .iter()
        .filter(|p| p.outcome.as_ref().is_some_and(|o| o.load_error.is_none()))
        .collect();
    if ran.is_empty() {
        return Ok(ExitCode::from(code));
    }
    if let Some((path, kind)) = outputs.trace_out {
        let traces: Vec<&TraceJson> = ran.iter().flat_map(|p| &p.more).collect();
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
            jsprof_export::files::write_traces(path, &parsed, format)?
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
            jsprof_export::files::write_traces(path, &parsed, format)?
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
