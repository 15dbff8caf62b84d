//! The browser the WebDriver server drives (`jsprof --webdriver PORT`), as the engine sees
//! it: the page of one navigation of the top-level browsing context ([`run_navigation`]),
//! run with the event loop of [`run_page`] and kept turning until the next navigation. The
//! session history and the page per navigation (each in a content process or thread of its
//! own) are the shell's.
//!
//! The server's thread reaches the page through [`Browser`] (the `jsprof_webdriver::Browser`
//! the server calls): commands become [`Message::WebDriver`]s of the running page's loop
//! (served by `webdriver.rs`). What must not wait for the page's script is done here, on the
//! server's thread: Force Sample (straight to the profiler group, so that it samples a page
//! whose script is running), the window's visibility, and ending a session.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

use jsprof_net::Url;
use jsprof_profiler::{Nanos, ProfilerTrace, Session};
use jsprof_webdriver::{Command, Error, ErrorKind, Navigation, Reply, Responder};
use serde_json::Value;

use crate::document;
use crate::{PageError, RunOptions};

use super::host::Sessions;
use super::{navigation_start, Message, Page, GROUP};

/// How long the profiler service's stop waits for its trace to be built.
const SCOPE_TRACE_WAIT: Duration = Duration::from_secs(30);

/// How long Force Sample waits for its samples to be recorded.
const FORCE_SAMPLE_WAIT: Duration = Duration::from_secs(30);

/// The browser, as the WebDriver server holds it: cheap to clone, usable from any thread.
#[derive(Clone, Default)]
pub struct Browser {
    pub(super) shared: Arc<BrowserShared>,
}

impl std::fmt::Debug for Browser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Browser").finish_non_exhaustive()
    }
}

#[derive(Default)]
pub(super) struct BrowserShared {
    /// The page being run, while one is.
    page: Mutex<Option<PageLink>>,
    /// Commands that came while no page ran (between two pages): the next page takes them.
    waiting: Mutex<Vec<(Command, Responder)>>,
    /// Set by [`Browser::shutdown`]: the browser ends after the running page.
    shutdown: AtomicBool,
    /// Whether the window is minimised: its documents are hidden, the next page's too.
    pub(super) hidden: AtomicBool,
    /// A session ended (Reset): the running page is being stopped, and `about:blank` comes
    /// next, answering this.
    reset: Mutex<Option<Responder>>,
    /// The profiler service's event recorder of the browser's pages (their windows and
    /// frames).
    pub(super) scope: Arc<jsprof_scope::Recorder>,
    /// The sampling interval the service's session asked for, until its sampling session
    /// starts on the page's loop.
    scope_interval: Mutex<Option<f64>>,
    /// That sampling session, with its window's time origin.
    scope_sampling: Mutex<Option<(Session, Nanos)>>,
}

/// What the profiler service's session recorded ([`Browser::scope_stop`]).
#[derive(Debug)]
pub struct ScopeRecording {
    pub recording: jsprof_scope::Recording,
    /// The window's sampled trace, and how many ms its time 0 is before the recording's.
    pub trace: Option<(ProfilerTrace, f64)>,
}

/// How other threads reach the running page.
struct PageLink {
    tx: mpsc::Sender<Message>,
    /// Stops the page's script and loop (shutdown).
    halt: Arc<AtomicBool>,
    interrupt: mozjs::rust::ThreadSafeJSContext,
    sessions: Sessions,
    hidden: Arc<AtomicBool>,
    /// The current browsing context: a window index of the page.
    current: Arc<AtomicUsize>,
}

/// What a page WebDriver drives holds besides its loop.
pub(super) struct BrowserPage {
    pub(super) shared: Arc<BrowserShared>,
    pub(super) current: Arc<AtomicUsize>,
    /// The navigation that made this page, answered once its `load` event has fired.
    pub(super) loaded: Option<Responder>,
    /// The navigation that ends this page.
    pub(super) end: Option<(Navigation, Responder)>,
}

impl jsprof_webdriver::Browser for Browser {
    fn send(&self, command: Command, respond: Responder) {
        match command {
            Command::ForceSample => return respond(self.force_sample()),
            Command::SetHidden(hidden) => {
                self.set_hidden(hidden);
                return respond(Ok(Value::Null));
            }
            Command::Reset => return self.reset(respond),
            _ => {}
        }
        let page = self.shared.page.lock().unwrap_or_else(|e| e.into_inner());
        match page.as_ref() {
            Some(link) => {
                if let Err(mpsc::SendError(Message::WebDriver(command, respond))) =
                    link.tx.send(Message::WebDriver(command, respond))
                {
                    self.wait(command, respond);
                }
            }
            None => self.wait(command, respond),
        }
    }
}

impl Browser {
    pub fn new() -> Browser {
        Browser::default()
    }

    /// Whether [`Browser::shutdown`] was called.
    pub fn is_shutdown(&self) -> bool {
        self.shared.shutdown.load(Ordering::Acquire)
    }

    /// The profiler service's event recorder of this browser's pages.
    pub fn scope(&self) -> &Arc<jsprof_scope::Recorder> {
        &self.shared.scope
    }

    /// Starts the profiler service's session: events are recorded now (`Immediate`) or
    /// from the window's next navigation (`Url`), and the window is sampled every
    /// `interval` ms meanwhile (from its loop's next task: see `Page::start_scope_sampling`).
    pub fn scope_start(
        &self,
        mode: jsprof_scope::record::StartMode,
        interval: f64,
    ) -> Result<(), String> {
        self.shared
            .scope
            .start(mode)
            .map_err(|_| "the window is already being profiled".to_owned())?;
        *self
            .shared
            .scope_interval
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = Some(interval);
        if let Some(link) = self
            .shared
            .page
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
        {
            let _ = link.tx.send(Message::ScopeSampling);
        }
        Ok(())
    }

    /// Stops the profiler service's session: nothing more is recorded from now on; then its
    /// sampling session stops and its trace is built (off the page's loop). `None` if
    /// nothing was recording (a `URL` start still waiting for its navigation).
    pub fn scope_stop(&self) -> Option<ScopeRecording> {
        let recording = self.shared.scope.stop();
        self.shared
            .scope_interval
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        let sampling = self
            .shared
            .scope_sampling
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        let recording = recording?;
        let trace = sampling.and_then(|(session, origin)| {
            let (tx, rx) = mpsc::channel();
            session
                .stop(move |trace| {
                    let _ = tx.send(trace);
                })
                .ok()?;
            let trace = rx.recv_timeout(SCOPE_TRACE_WAIT).ok()?;
            let offset = (recording.epoch_nanos as f64 - origin as f64) / 1e6;
            Some((trace, offset))
        });
        Some(ScopeRecording { recording, trace })
    }

    fn wait(&self, command: Command, respond: Responder) {
        self.shared
            .waiting
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((command, respond));
    }

    /// Ends the browser (SIGINT, SIGTERM, or its own browser process asking): the running
    /// page's script is stopped, its profilers too, and [`run_navigation`] returns.
    pub fn shutdown(&self) {
        self.shared.shutdown.store(true, Ordering::Release);
        self.halt_page();
    }

    /// The session ended: like a closed window, the running page stops at once, its script
    /// too (a page whose script never returns must not hold the next session up), and the
    /// browser opens `about:blank`, visible; `respond` is answered once it has loaded.
    fn reset(&self, respond: Responder) {
        self.shared.hidden.store(false, Ordering::Release);
        *self.shared.reset.lock().unwrap_or_else(|e| e.into_inner()) = Some(respond);
        self.halt_page();
    }

    /// Stops the running page, if any: its script is terminated and its loop ends.
    fn halt_page(&self) {
        if let Some(link) = self
            .shared
            .page
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
        {
            link.halt.store(true, Ordering::Release);
            link.interrupt.request_interrupt_callback();
            let _ = link.tx.send(Message::Task(Box::new(|_| {})));
        }
    }

    /// Minimize Window and back, from the server's thread: the window's state and its
    /// sessions change at once (the page's script may be running), and the documents
    /// hear of it as a task of their loop (`visibilitychange`).
    fn set_hidden(&self, hidden: bool) {
        self.shared.hidden.store(hidden, Ordering::Release);
        let page = self.shared.page.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(link) = page.as_ref() {
            link.hidden.store(hidden, Ordering::Release);
            pause_sessions(&link.sessions, hidden);
            let update = Message::WebDriver(Command::SetHidden(hidden), Box::new(|_| {}));
            let _ = link.tx.send(update);
        }
    }

    /// Force Sample (<https://wicg.github.io/js-self-profiling/#automation>): step 1, the
    /// sessions created in the current browsing context; steps 2–3 in
    /// [`ProfilerGroup::force_sample`].
    pub(super) fn force_sample(&self) -> Reply {
        let sessions: Vec<Arc<Session>> = {
            let page = self.shared.page.lock().unwrap_or_else(|e| e.into_inner());
            let Some(link) = page.as_ref() else {
                return Ok(Value::Null);
            };
            let current = link.current.load(Ordering::Acquire);
            let all = link.sessions.lock().unwrap_or_else(|e| e.into_inner());
            all.iter()
                .filter(|(w, _)| w.index() == current)
                .filter_map(|(_, s)| s.upgrade())
                .collect()
        };
        let Some(group) = GROUP.get() else {
            return Ok(Value::Null);
        };
        match group.force_sample(sessions.iter().map(|s| &**s), FORCE_SAMPLE_WAIT) {
            (_, true) => Ok(Value::Null),
            (_, false) => Err(Error::new(
                ErrorKind::UnknownError,
                "the forced samples were not recorded within 30 s",
            )),
        }
    }
}

/// What became of the page of one navigation ([`run_navigation`]).
#[derive(Default)]
pub struct Navigated {
    /// The document could not be loaded (the navigation, if it had a responder, was answered
    /// with this error; without one the caller reports it).
    pub load_error: Option<String>,
    /// The navigation that ended the page: its responder is for the browser to answer once
    /// the next page has loaded (or with the error that there is no such page).
    pub end: Option<(Navigation, Responder)>,
    /// A session that ended while the page ran ([`Command::Reset`]) stopped it: answered once
    /// `about:blank` has loaded.
    pub reset: Option<Responder>,
    /// The traces of the page's profilers, if collected.
    pub traces: Vec<ProfilerTrace>,
    /// A panic caught in the engine (a bug): the page stopped there.
    pub internal_error: Option<String>,
}

impl std::fmt::Debug for Navigated {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Navigated")
            .field("load_error", &self.load_error)
            .field("end", &self.end.as_ref().map(|(n, _)| n))
            .field("reset", &self.reset.is_some())
            .field("traces", &self.traces.len())
            .field("internal_error", &self.internal_error)
            .finish()
    }
}

/// Runs the page of one navigation of the top-level browsing context: loads `url` and turns
/// its event loop, serving `browser`'s commands, until a navigation, a session's end or
/// [`Browser::shutdown`] ends it. `respond` (the navigation's) is answered once the page's
/// `load` event has fired, or with the error if its document cannot be loaded. An HTTP
/// error status still shows its document, as browsers do. The session history and what
/// comes next are the caller's (the shell's browser, with a page per navigation in a
/// content process or thread of its own).
pub fn run_navigation(
    url: &Url,
    options: &RunOptions,
    browser: &Browser,
    respond: Option<Responder>,
) -> Navigated {
    let mut options = options.clone();
    options.profile_interval = None;
    // The window's visibility, as the browser left it (a pref of the run).
    browser
        .shared
        .hidden
        .store(options.prefs.bool("dom.document.hidden"), Ordering::Release);
    match run_driven_page(url, &options, browser, respond) {
        Err(load_error) => Navigated {
            load_error: Some(load_error),
            internal_error: jsprof_script_bindings::glue::internal_error(),
            ..Navigated::default()
        },
        Ok((end, traces)) => Navigated {
            load_error: None,
            end,
            // A session that ended while the page ran: it was stopped, and a blank page
            // follows.
            reset: browser
                .shared
                .reset
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .take(),
            traces,
            internal_error: jsprof_script_bindings::glue::internal_error(),
        },
    }
}

type DrivenPage = (Option<(Navigation, Responder)>, Vec<ProfilerTrace>);

/// Loads `url` and runs its page until a navigation or shutdown ends it. A document that
/// cannot be loaded answers the navigation with the error, and is that error. Unlike
/// [`run_page`], an HTTP error status still shows its document, as browsers do.
fn run_driven_page(
    url: &Url,
    options: &RunOptions,
    browser: &Browser,
    respond: Option<Responder>,
) -> Result<DrivenPage, String> {
    // The profiler service records this page's events (a `URL` start begins here, before
    // its first byte).
    let scope = browser.shared.scope.clone();
    jsprof_scope::record::install(Some(scope.clone()));
    jsprof_spidermonkey::observe_collections(Some(scope_collection));
    scope.navigation_started();
    let started = navigation_start();
    let load_start = std::time::Instant::now();
    let page = options
        .loader
        .fetch(url)
        .map_err(PageError::from)
        .and_then(|response| {
            super::scope_load(Some(&scope), 1, load_start, url.as_str(), Ok(&response));
            let text = response.text();
            let parsing =
                jsprof_scope::record::begin(1, || jsprof_scope::Details::DocumentParsing {
                    url: response.url.to_string(),
                });
            let parsed = document::parse(&text, &options.prefs.document_limits(), None);
            drop(parsing);
            match parsed {
                Ok(doc) => Page::start(response, doc, started, options, None),
                Err(error) => Err(PageError::Document {
                    url: response.url,
                    error,
                }),
            }
        });
    let mut page = match page {
        Ok((page, _)) => page,
        Err(error) => {
            if let Some(respond) = respond {
                respond(Err(Error::new(ErrorKind::UnknownError, error.to_string())));
            }
            return Err(error.to_string());
        }
    };
    page.keep_alive = true;
    let current = Arc::new(AtomicUsize::new(0));
    page.browser = Some(BrowserPage {
        shared: browser.shared.clone(),
        current: current.clone(),
        loaded: respond,
        end: None,
    });
    {
        let mut link = browser
            .shared
            .page
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        *link = Some(PageLink {
            tx: page.host.messages_tx.clone(),
            halt: page.halt.clone(),
            interrupt: page.js.interrupter(),
            sessions: page.host.sessions.clone(),
            hidden: page.host.hidden.clone(),
            current,
        });
        // A session that ended, or a shutdown (SIGTERM) that came, while this page was being
        // loaded stops it at once: `shutdown` sets its flag before it takes this lock to halt
        // the running page, so one of the two sees the other.
        if browser.shared.shutdown.load(Ordering::Acquire)
            || browser
                .shared
                .reset
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .is_some()
        {
            page.halt.store(true, Ordering::Release);
            page.js.interrupter().request_interrupt_callback();
        }
        // Commands that came between two pages are this page's.
        for (command, respond) in browser
            .shared
            .waiting
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .drain(..)
        {
            let _ = page
                .host
                .messages_tx
                .send(Message::WebDriver(command, respond));
        }
    }
    // A session started before the page was: its sampling starts with it.
    page.start_scope_sampling();
    page.run_to_end(options);
    jsprof_scope::record::install(None);
    jsprof_spidermonkey::observe_collections(None);
    SCOPE_COLLECTIONS.with(|c| c.borrow_mut().clear());
    // The page is gone: commands still queued for it go to the next one.
    *browser
        .shared
        .page
        .lock()
        .unwrap_or_else(|e| e.into_inner()) = None;
    while let Ok(message) = page.messages.try_recv() {
        if let Message::WebDriver(command, respond) = message {
            browser.wait(command, respond);
        }
    }
    let traces = page
        .host
        .traces
        .as_ref()
        .map(|t| std::mem::take(&mut *t.lock().unwrap_or_else(|e| e.into_inner())))
        .unwrap_or_default();
    let end = page.browser.take().and_then(|b| b.end);
    Ok((end, traces))
}

/// Pauses (`hidden`) or resumes every session of a page (decision 8); a session already in
/// that state, or stopped, is left as it is.
fn pause_sessions(sessions: &Sessions, hidden: bool) {
    let sessions: Vec<Arc<Session>> = sessions
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .filter_map(|(_, s)| s.upgrade())
        .collect();
    for session in sessions {
        if hidden {
            session.pause();
        } else {
            session.resume();
        }
    }
}

impl Page {
    /// Starts the sampling session of the profiler service's running session, if it asked
    /// for one and none runs: the top-level window's realm, at the session's interval.
    pub(super) fn start_scope_sampling(&mut self) {
        let Some(browser) = &self.browser else {
            return;
        };
        let shared = browser.shared.clone();
        if !shared.scope.is_recording() {
            return;
        }
        let Some(interval) = shared
            .scope_interval
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
        else {
            return;
        };
        let started = jsprof_script_bindings::host::Host::start_profiling(
            &*self.host,
            self.window,
            interval,
            u32::MAX,
            Default::default(),
            None,
        );
        match started {
            Ok(session) => {
                let origin = self.host.doc(self.window).time_origin;
                *shared
                    .scope_sampling
                    .lock()
                    .unwrap_or_else(|e| e.into_inner()) = Some((session, origin));
            }
            Err(e) => self.host.print(
                self.window,
                true,
                &format!("jsprof: profiler service: no sampling: {e}"),
            ),
        }
    }
}

thread_local! {
    /// The profiler service's collection events running on this thread, innermost last
    /// (a guard of no event for one that began while nothing recorded).
    static SCOPE_COLLECTIONS: std::cell::RefCell<Vec<jsprof_scope::EventGuard>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// The profiler service's `GENERIC` events: a collection, major (a slice) or minor, with
/// its reason, from the agent's GC callbacks (the ones the `gc` marker comes from).
fn scope_collection(c: jsprof_spidermonkey::Collection) {
    let _ = SCOPE_COLLECTIONS.try_with(|events| {
        let Ok(mut events) = events.try_borrow_mut() else {
            return;
        };
        if c.begin {
            events.push(jsprof_scope::record::begin_here(|| {
                jsprof_scope::Details::Gc {
                    kind: if c.major {
                        jsprof_scope::GcKind::Major
                    } else {
                        jsprof_scope::GcKind::Minor
                    },
                    reason: c.reason.to_owned(),
                }
            }));
        } else {
            events.pop();
        }
    });
}
