//! The browser WebDriver drives (`jsprof [-M] --webdriver PORT [PAGE]`): one top-level
//! browsing context, its session history, and a content per navigation (a process each with
//! `-M`, else a thread each), one after the other. The WebDriver server and its session
//! live here, in the browser; [`RemoteBrowser`] is what the server calls: it sends each
//! command to the running page's content (Force Sample, Minimize and Maximize reach that
//! content's profiler group there), keeps the commands that come between two pages for the
//! next, and answers each command when its content does. A session's end and the browser's
//! shutdown stop the running page ([`ToContent::Stop`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crossbeam_channel as crossbeam;
use jsprof_net::Url;
use jsprof_webdriver::{Command, Error, ErrorKind, Navigation, Reply, Responder};
use serde_json::Value;

use crate::contents::{self, crash_line, Printer};
use crate::protocol::{
    Config, Driven, FromContent, Json, Load, Outcome, Stream, ToContent, TraceJson,
};
use crate::transport::{self, Event, Exit, Mode, ToContentTx, What};

/// The browser, as the WebDriver server holds it: cheap to clone, usable from any thread.
#[derive(Clone, Default)]
pub struct RemoteBrowser {
    state: Arc<Mutex<State>>,
}

impl std::fmt::Debug for RemoteBrowser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteBrowser").finish_non_exhaustive()
    }
}

/// A command sent to a content and not answered yet.
enum Pending {
    Command(Command),
    /// The navigation of a content's page, answered when it has loaded.
    Load,
}

#[derive(Default)]
struct State {
    /// The running page's content, once it can be sent to.
    current: Option<ToContentTx>,
    next_id: u64,
    in_flight: HashMap<u64, (Pending, Responder)>,
    /// Commands that came while no content ran: the next one takes them.
    waiting: Vec<(u64, Command, Responder)>,
    /// Whether the window is minimised: its documents are hidden, the next page's too.
    hidden: bool,
    /// A session ended (Reset): the running page is being stopped, and `about:blank`
    /// comes next, answering this.
    reset: Option<Responder>,
    /// SIGINT or SIGTERM: the browser ends after the running page.
    shutdown: bool,
}

impl State {
    /// Sends `command` to the running content, or keeps it for the next.
    fn forward(&mut self, command: Command, respond: Responder) {
        self.next_id += 1;
        let id = self.next_id;
        self.send_or_wait(id, command, respond);
    }

    fn send_or_wait(&mut self, id: u64, command: Command, respond: Responder) {
        if let Some(tx) = &self.current {
            let message = ToContent::WebDriver {
                id,
                command: Json::new(&command),
            };
            if tx.send(message) {
                self.in_flight
                    .insert(id, (Pending::Command(command), respond));
                return;
            }
        }
        self.waiting.push((id, command, respond));
    }

    fn stop_current(&self) {
        if let Some(tx) = &self.current {
            tx.send(ToContent::Stop);
        }
    }
}

impl jsprof_webdriver::Browser for RemoteBrowser {
    fn send(&self, command: Command, respond: Responder) {
        let mut state = self.lock();
        match command {
            // The session ended: like a closed window, the running page stops at once, its
            // script too, and the browser opens `about:blank`, visible; answered once that
            // has loaded.
            Command::Reset => {
                state.hidden = false;
                state.reset = Some(respond);
                state.stop_current();
            }
            Command::SetHidden(hidden) => {
                state.hidden = hidden;
                if state.current.is_some() {
                    state.forward(Command::SetHidden(hidden), respond);
                } else {
                    // The next page starts as the window is.
                    drop(state);
                    respond(Ok(Value::Null));
                }
            }
            // No page: no session to sample.
            Command::ForceSample if state.current.is_none() => {
                drop(state);
                respond(Ok(Value::Null));
            }
            command => state.forward(command, respond),
        }
    }
}

impl RemoteBrowser {
    pub fn new(hidden: bool) -> RemoteBrowser {
        let browser = RemoteBrowser::default();
        browser.lock().hidden = hidden;
        browser
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Ends the browser (SIGINT, SIGTERM): the running page is stopped, and [`run`]
    /// returns.
    pub fn shutdown(&self) {
        let mut state = self.lock();
        state.shutdown = true;
        state.stop_current();
    }

    /// The navigation that `respond` answers is the next content's: the id it answers with.
    fn expect_load(&self, respond: Responder) -> u64 {
        let mut state = self.lock();
        state.next_id += 1;
        let id = state.next_id;
        state.in_flight.insert(id, (Pending::Load, respond));
        id
    }

    /// The content can be sent to: the commands that waited for it go, and a shutdown or
    /// session end that came while it started stops it at once.
    fn attach(&self, tx: ToContentTx) {
        let mut state = self.lock();
        state.current = Some(tx);
        for (id, command, respond) in std::mem::take(&mut state.waiting) {
            state.send_or_wait(id, command, respond);
        }
        if state.shutdown || state.reset.is_some() {
            state.stop_current();
        }
    }

    /// The content ended: the commands it did not answer, in the order they came (those
    /// kept for the next content go to it in that order).
    fn detach(&self) -> Vec<(u64, Pending, Responder)> {
        let mut state = self.lock();
        state.current = None;
        let mut unanswered: Vec<_> = state
            .in_flight
            .drain()
            .map(|(id, (pending, respond))| (id, pending, respond))
            .collect();
        unanswered.sort_by_key(|(id, _, _)| *id);
        unanswered
    }

    /// Command `id` is answered.
    fn answer(&self, id: u64, reply: Reply) {
        let respond = {
            let mut state = self.lock();
            match state.in_flight.remove(&id) {
                Some((_, respond)) => Some(respond),
                None => {
                    // Answered after its content ended and it was kept for the next.
                    let at = state.waiting.iter().position(|(i, _, _)| *i == id);
                    at.map(|at| state.waiting.remove(at).2)
                }
            }
        };
        if let Some(respond) = respond {
            respond(reply);
        }
    }

    /// A command the ended content did not answer goes to the next.
    fn keep_for_next(&self, id: u64, command: Command, respond: Responder) {
        self.lock().waiting.push((id, command, respond));
    }

    fn is_shutdown(&self) -> bool {
        self.lock().shutdown
    }

    fn hidden(&self) -> bool {
        self.lock().hidden
    }

    fn take_reset(&self) -> Option<Responder> {
        self.lock().reset.take()
    }
}

/// What the browser leaves: the traces of every page's profilers, if collected.
#[derive(Debug, Default)]
pub struct Report {
    pub traces: Vec<TraceJson>,
    /// A panic caught in a page's engine (a bug): the browser stopped there.
    pub internal_error: Option<String>,
    /// The page given to start with could not be loaded: the browser did not start.
    pub load_error: Option<String>,
    /// A content ended without reporting (its line was printed).
    pub crashed: bool,
}

/// The session history of the one top-level browsing context (no `bfcache`: going back
/// loads the entry again).
#[derive(Debug, Default)]
struct History {
    entries: Vec<Url>,
    index: usize,
}

impl History {
    /// Where `navigation` leads, if anywhere (Back at the first entry stays).
    fn target(&mut self, navigation: &Navigation) -> Result<Option<Url>, Error> {
        Ok(match navigation {
            Navigation::To(url) => {
                let url = Url::parse(url).map_err(|e| {
                    Error::new(ErrorKind::InvalidArgument, format!("{url}: not a URL: {e}"))
                })?;
                self.entries.truncate(self.index + 1);
                self.entries.push(url.clone());
                self.index = self.entries.len() - 1;
                Some(url)
            }
            Navigation::Back if self.index > 0 => {
                self.index -= 1;
                Some(self.entries[self.index].clone())
            }
            Navigation::Forward if self.index + 1 < self.entries.len() => {
                self.index += 1;
                Some(self.entries[self.index].clone())
            }
            Navigation::Refresh => self.entries.get(self.index).cloned(),
            Navigation::Back | Navigation::Forward => None,
        })
    }
}

/// How one page's content ended.
struct Ended {
    /// Its report; `None` if it ended without one (crashed).
    outcome: Option<Outcome>,
    exit: Option<Exit>,
    traces: Vec<TraceJson>,
    /// The commands it did not answer.
    unanswered: Vec<(u64, Pending, Responder)>,
}

/// Runs the browser until [`RemoteBrowser::shutdown`]: `first` (or `about:blank`), then each
/// page WebDriver navigates to, each in a content of its own.
pub fn run(first: Option<Url>, mode: Mode, config: &Config, browser: &RemoteBrowser) -> Report {
    let mut report = Report::default();
    let Ok(blank) = Url::parse("about:blank") else {
        return report;
    };
    let (events_tx, events) = contents::events(mode);
    let printer = Printer { prefixed: false };
    let url = first.unwrap_or_else(|| blank.clone());
    let mut history = History {
        entries: vec![url.clone()],
        index: 0,
    };
    let mut next: (Url, Option<Responder>) = (url, None);
    let mut first_page = true;
    let mut generation = 0;
    while !browser.is_shutdown() {
        let (url, respond) = next;
        let first = std::mem::replace(&mut first_page, false);
        generation += 1;
        let driven = Driven {
            loaded: respond.map(|respond| browser.expect_load(respond)),
            generation,
            hold: false,
        };
        // The window's visibility, as the session left it.
        let mut page_config = config.clone();
        page_config
            .prefs
            .push(format!("dom.document.hidden={}", browser.hidden()));
        let ended = run_content(
            mode,
            &events_tx,
            &events,
            &url,
            page_config,
            driven,
            browser,
        );
        report.traces.extend(ended.traces);
        let Some(outcome) = ended.outcome else {
            // It crashed: what it was asked is answered with that, and the browsing
            // context shows an empty document.
            // (Without an exit it could not be started, which was said.)
            let line = match ended.exit {
                Some(exit) => {
                    let line = crash_line(mode, &url, exit, false);
                    printer.line(None, Stream::Stderr, &line);
                    line
                }
                None => format!("jsprof: the content for {url} could not be started"),
            };
            report.crashed = true;
            for (_, _, respond) in ended.unanswered {
                respond(Err(Error::new(
                    ErrorKind::UnknownError,
                    line.trim_start_matches("jsprof: "),
                )));
            }
            if url == blank {
                break;
            }
            next = (blank.clone(), None);
            continue;
        };
        // The navigation that ended the page is answered by the next; what else it left
        // unanswered goes to the next page (a navigation not yet loaded is dropped, as a
        // stopped page's was).
        let mut end: Option<(Navigation, Responder)> = None;
        for (id, pending, respond) in ended.unanswered {
            match pending {
                Pending::Command(Command::Navigate(navigation))
                    if end.is_none() && outcome.navigation.as_ref() == Some(&navigation) =>
                {
                    end = Some((navigation, respond));
                }
                Pending::Command(command) => browser.keep_for_next(id, command, respond),
                Pending::Load => drop(respond),
            }
        }
        if let Some(error) = outcome.load_error {
            if first {
                // The page named on the command line: the browser does not start.
                report.load_error = Some(error);
                return report;
            }
            if driven.loaded.is_none() {
                // Nobody asked for it (a page reloaded after a failed one): said here.
                printer.line(None, Stream::Stderr, &format!("jsprof: {error}"));
            }
            // The browsing context shows an empty document.
            if url == blank {
                break;
            }
            next = (blank.clone(), None);
            continue;
        }
        if let Some(error) = outcome.internal_error {
            report.internal_error = Some(error);
            break;
        }
        if end.is_none() {
            end = outcome
                .navigation
                .map(|navigation| (navigation, Box::new(|_| {}) as Responder));
        }
        // A session ended while the page ran: it was stopped, and a blank page follows.
        let end = match (browser.take_reset(), end) {
            (Some(respond), superseded) => {
                if let Some((_, respond)) = superseded {
                    respond(Err(Error::new(
                        ErrorKind::UnknownError,
                        "the session ended",
                    )));
                }
                Some((Navigation::To("about:blank".into()), respond))
            }
            (None, end) => end,
        };
        next = match end {
            Some((navigation, respond)) => match history.target(&navigation) {
                Ok(Some(url)) => (url, Some(respond)),
                Ok(None) => {
                    respond(Ok(Value::Null));
                    (history.entries[history.index].clone(), None)
                }
                Err(e) => {
                    respond(Err(e));
                    (history.entries[history.index].clone(), None)
                }
            },
            None => (url, None),
        };
    }
    report
}

/// Runs the page at `url` in a content of its own, serving the session meanwhile, until
/// the content has ended.
fn run_content(
    mode: Mode,
    events_tx: &crossbeam::Sender<Event>,
    events: &crossbeam::Receiver<Event>,
    url: &Url,
    config: Config,
    driven: Driven,
    browser: &RemoteBrowser,
) -> Ended {
    let printer = Printer { prefixed: false };
    let mut ended = Ended {
        outcome: None,
        exit: None,
        traces: Vec::new(),
        unanswered: Vec::new(),
    };
    let content = match transport::start(mode, 0, events_tx.clone(), crate::content::run) {
        Ok(content) => content,
        Err(e) => {
            let line = format!(
                "jsprof: cannot start a {} for {url}: {e}",
                contents::content_kind(mode)
            );
            printer.line(None, Stream::Stderr, &line);
            ended.unanswered = browser.detach();
            return ended;
        }
    };
    let mut load = Some(Load {
        url: url.to_string(),
        config,
        driven: Some(driven),
    });
    while let Ok(event) = events.recv() {
        let what = match event {
            Event::Diagnostic(text) => {
                printer.line(None, Stream::Stderr, &text);
                continue;
            }
            // Only the profiler service's browser has a service.
            Event::Service(_) => continue,
            Event::Page(_, what) => what,
        };
        match what {
            What::Connected(tx) => {
                if let Some(load) = load.take() {
                    tx.send(ToContent::Load(load));
                }
                browser.attach(tx);
            }
            What::Message(FromContent::Line { stream, text }) => printer.line(None, stream, &text),
            What::Message(FromContent::Traces(traces)) => ended.traces.extend(traces),
            What::Message(FromContent::Reply { id, reply }) => {
                let reply = reply
                    .get()
                    .unwrap_or_else(|e| Err(Error::new(ErrorKind::UnknownError, e)));
                browser.answer(id, reply);
            }
            What::Message(FromContent::Done(outcome)) => ended.outcome = Some(outcome),
            What::Message(FromContent::Hello { .. } | FromContent::ScopeReply { .. }) => {}
            What::Exited(exit) => {
                ended.exit = Some(exit);
                break;
            }
        }
    }
    ended.unanswered = browser.detach();
    content.join();
    ended
}
