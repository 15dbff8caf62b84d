//! The browser's side of its contents, one loop for every browser that runs several pages
//! at once (the page run, `browser.rs`, and the profiler service, `service.rs`): the channel
//! every content sends into, a content started per page, and [`follow`], which carries what
//! the contents say until each has ended: their lines printed as they come, their reports
//! (`Done`), their ends, and a crash noticed (one line) when a content ended without its
//! report or died of a signal. What a browser does beyond that (its pages' `Load`, their
//! traces, the service's calls) is its [`Browser`]. The WebDriver browser (`driven.rs`),
//! one content at a time, shares the channel and the lines.

use std::io::Write;
use std::time::{Duration, Instant};

use crossbeam_channel as crossbeam;
use jsprof_net::Url;

use crate::protocol::{Config, Driven, FromContent, Load, Outcome, Stream, ToContent};
use crate::transport::{self, Content, Event, Exit, Mode, ServiceEvent, ToContentTx, What};

/// How long after its `--timeout` a content process may take to end before the browser
/// kills it (it ends within a second of it by itself; this is for one that cannot).
pub const BACKSTOP: Duration = Duration::from_secs(10);

/// How many messages may wait for the browser: a page printing faster than the browser
/// writes waits, as it would for a full pipe.
pub const EVENT_QUEUE: usize = 1024;

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

/// The channel every content of a browser sends into. With content threads, the engine
/// belongs to this thread, which shuts it down once every page has ended (`main`), and a
/// panic in a page's thread is a line through the channel (`diagnostics.rs`).
pub fn events(mode: Mode) -> (crossbeam::Sender<Event>, crossbeam::Receiver<Event>) {
    let (events_tx, events) = crossbeam::bounded(EVENT_QUEUE);
    if mode == Mode::Threads {
        jsprof_script::init();
        crate::diagnostics::through_events(events_tx.clone());
    }
    (events_tx, events)
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

/// One page of a run, as the browser follows its content.
#[derive(Debug)]
pub struct Page<T> {
    pub url: Url,
    pub content: Option<Content>,
    /// Where to send to the content: from its connection until its report or its end.
    pub tx: Option<ToContentTx>,
    /// Its report.
    pub outcome: Option<Outcome>,
    pub exited: bool,
    /// Killed by the browser's backstop.
    pub killed: bool,
    /// Ended without reporting (or could not be started).
    pub crashed: bool,
    /// What the browser keeps beside it.
    pub more: T,
}

/// What a browser does with its contents beyond what [`follow`] does for every browser.
pub trait Browser {
    /// What it keeps beside each page.
    type More: Default;

    /// How page `i` is driven (`None`: it runs as it is).
    fn driven(&self, i: usize) -> Option<Driven> {
        let _ = i;
        None
    }

    /// Page `i`'s content has been sent its `Load` (through `tx`, which `follow` then
    /// keeps): what else it must have first.
    fn connected(&mut self, tx: &ToContentTx) {
        let _ = tx;
    }

    /// A message of page `i`'s content that `follow` does not handle itself (all but its
    /// lines and its report).
    fn message(&mut self, i: usize, page: &mut Page<Self::More>, message: FromContent) {
        let _ = (i, page, message);
    }

    /// Page `i`'s content has ended (before `follow` checks whether it crashed).
    fn exited(&mut self, i: usize, page: &mut Page<Self::More>) {
        let _ = (i, page);
    }

    /// An event of the profiler service's threads.
    fn service(&mut self, pages: &mut [Page<Self::More>], event: ServiceEvent) {
        let _ = (pages, event);
    }
}

/// Starts a content for each of `urls`, all sending into `events_tx` (dropped once they
/// have started, so that the channel ends with the last content).
pub fn start<T: Default>(
    urls: Vec<Url>,
    mode: Mode,
    events_tx: crossbeam::Sender<Event>,
    printer: &Printer,
) -> Vec<Page<T>> {
    let contents = start_contents(&urls.iter().collect::<Vec<_>>(), mode, &events_tx, printer);
    urls.into_iter()
        .zip(contents)
        .map(|(url, content)| Page {
            url,
            // A page whose content could not be started has ended, as a crash.
            exited: content.is_none(),
            crashed: content.is_none(),
            content,
            tx: None,
            outcome: None,
            killed: false,
            more: T::default(),
        })
        .collect()
}

/// Carries the events of `pages`' contents to `browser` until every content has ended: a
/// content that connects is sent its page with `config`. At `backstop` (a run's `--timeout`
/// and [`BACKSTOP`], for content processes) the contents still running are killed.
pub fn follow<B: Browser>(
    browser: &mut B,
    pages: &mut [Page<B::More>],
    events: &crossbeam::Receiver<Event>,
    mode: Mode,
    config: &Config,
    printer: &Printer,
    mut backstop: Option<Instant>,
) {
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
            Event::Service(event) => {
                browser.service(pages, event);
                continue;
            }
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
                    driven: browser.driven(i),
                }));
                browser.connected(&tx);
                page.tx = Some(tx);
            }
            What::Message(FromContent::Line { stream, text }) => {
                printer.line(Some(i), stream, &text)
            }
            What::Message(FromContent::Done(outcome)) => {
                end_lines(printer, i, &outcome);
                page.outcome = Some(outcome);
                // Done with it: a content process exits, a content thread's reader ends.
                page.tx = None;
            }
            What::Message(message) => browser.message(i, page, message),
            What::Exited(exit) => {
                page.exited = true;
                page.tx = None;
                browser.exited(i, page);
                // Ended without its report, or died of a signal after it (at its teardown).
                if page.outcome.is_none() || exit.signal().is_some() {
                    page.crashed = true;
                    let line = crash_line(mode, &page.url, exit, page.killed);
                    printer.line(Some(i), Stream::Stderr, &line);
                }
            }
        }
    }
}

/// Waits for the pages' contents: a content thread is gone only once joined (`main` then
/// shuts the engine down).
pub fn join<T>(pages: &mut [Page<T>]) {
    for page in pages {
        if let Some(content) = page.content.take() {
            content.join();
        }
    }
}
