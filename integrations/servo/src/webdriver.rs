//! `jsprof-servo --webdriver PORT`: jsprof's WebDriver server (`jsprof_webdriver::server`:
//! HTTP, sessions, capabilities, timeouts, the Force Sample route), driving Servo. Each
//! [`Command`] becomes Servo's own WebDriver messages (`WebDriverCommandMsg`, and
//! `WebDriverScriptCommand` for the script thread of a browsing context, the ones
//! servoshell's WebDriver server sends), with Servo's element references; Force Sample is
//! `script::jsprof::force_sample` (patch servo-script.15), in this process or, with `-M`,
//! in every content process (`contents.rs`).
//!
//! Servo and its `WebView` live on the main thread: what must run there (sending a message
//! to the constellation, loading a URL, an input event, hiding the webview) is a [`Job`] the
//! main loop runs, and what Servo tells the webview's delegate there (a load complete, a
//! history traversal done, an input event handled) reaches the command through
//! [`Waiters`], as servoshell's server does it: Servo's constellation leaves navigation and
//! input to the embedder. Each command is
//! handled on a thread of its own, which waits for Servo's answer and then calls the
//! command's responder: the server's one dispatching thread never blocks here, and a script
//! that never ends holds up only its own thread.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use jsprof_webdriver::{
    Browser, Command, Error, ErrorKind, Frame, Locator, Navigation, Reply, Responder, ELEMENT_KEY,
    FRAME_KEY, WINDOW_KEY,
};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;
use servo::{
    DevicePoint, EventLoopWaker, InputEvent, InputEventId, JSValue, JavaScriptEvaluationError,
    JavaScriptEvaluationResultSerializationError, LoadStatus, MouseButton, MouseButtonAction,
    MouseButtonEvent, MouseMoveEvent, Servo, TraversalId, WebDriverCommandMsg, WebDriverFrameId,
    WebDriverScriptCommand, WebView, WebViewId, WebViewPoint,
};
use servo_base::generic_channel::{self, GenericSender, TryReceiveError};
use servo_base::id::BrowsingContextId;
use webdriver::error::ErrorStatus;

/// What the main thread runs for a command: Servo and the webview are there.
pub type Job = Box<dyn FnOnce(&Servo, &WebView) + Send>;

/// The shadow root identifier (<https://w3c.github.io/webdriver/#dfn-shadow-root-identifier>).
const SHADOW_KEY: &str = "shadow-6066-11e4-a52e-4f735466cecf";
/// How long a command other than a navigation or a script waits for Servo (the server's
/// own limit for them is 60 s).
const ANSWER_WAIT: Duration = Duration::from_secs(90);
/// How long a navigation or a script is waited for at most: the server's page load and
/// script timeouts answer long before (their defaults are 300 s and 30 s); only a session
/// whose timeout is null ("indefinitely") sees this.
const LONG_WAIT: Duration = Duration::from_secs(3600);
/// Whether the top-level document is Servo's error page for a failed navigation (its
/// `neterror.html` resource: that title, and one paragraph "Could not load the requested
/// page: REASON"): the paragraph's text if so, else null.
const NET_ERROR_PAGE: &str = "(document.title === 'Error loading page' && document.body \
    && document.body.children.length === 1 \
    && document.body.textContent.trim().startsWith('Could not load the requested page: ')) \
    ? document.body.textContent.trim() : null";
/// The top-level document's time origin.
const TIME_ORIGIN: &str = "performance.timeOrigin";
/// The top-level document's time origin once it is loaded (readyState "complete"), else
/// null.
const LOADED: &str = "document.readyState === 'complete' ? performance.timeOrigin : null";
/// How long a navigation waits to learn which document it leaves (a busy page does not
/// answer: then the first complete load is taken as the new document's).
const ORIGIN_WAIT: Duration = Duration::from_secs(2);
/// How long Force Sample waits for its samples to be recorded.
const FORCE_SAMPLE_WAIT: Duration = Duration::from_secs(30);
/// How long Minimize or Maximize waits for the top-level document's visibility to follow
/// (patch servo-script.14 updates it in a task).
const VISIBILITY_WAIT: Duration = Duration::from_secs(5);

/// What commands wait for from the webview's delegate (on the main thread): each waiter
/// is registered by a [`Job`] before the action whose outcome it waits for, and told once.
#[derive(Default)]
pub struct Waiters {
    /// Told at the next `LoadStatus::Complete` (Navigate To, Refresh): perhaps that of a
    /// load in progress before theirs, which [`Inner::navigate`] then tells apart.
    loads: Mutex<Vec<mpsc::Sender<()>>>,
    traversals: Mutex<HashMap<TraversalId, mpsc::Sender<()>>>,
    inputs: Mutex<HashMap<InputEventId, mpsc::Sender<()>>>,
}

impl Waiters {
    /// `WebViewDelegate::notify_load_status_changed`.
    pub fn load_status(&self, status: LoadStatus) {
        if status == LoadStatus::Complete {
            let waiting = std::mem::take(&mut *lock(&self.loads));
            for waiter in waiting {
                let _ = waiter.send(());
            }
        }
    }

    /// `WebViewDelegate::notify_traversal_complete`.
    pub fn traversal_complete(&self, id: TraversalId) {
        if let Some(waiter) = lock(&self.traversals).remove(&id) {
            let _ = waiter.send(());
        }
    }

    /// `WebViewDelegate::notify_input_event_handled`.
    pub fn input_handled(&self, id: InputEventId) {
        if let Some(waiter) = lock(&self.inputs).remove(&id) {
            let _ = waiter.send(());
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The browser the WebDriver server drives: Servo's one webview.
#[derive(Clone)]
pub struct ServoBrowser(Arc<Inner>);

struct Inner {
    jobs: Mutex<mpsc::Sender<Job>>,
    waker: Box<dyn EventLoopWaker>,
    webview: WebViewId,
    waiters: Arc<Waiters>,
    state: Mutex<State>,
    /// The web element ids given to the client: one Servo no longer finds is stale, not
    /// unknown (<https://w3c.github.io/webdriver/#dfn-get-a-known-element>: its node
    /// document is no longer active, or the node is gone).
    known: Mutex<HashSet<String>>,
    /// Where the pages' Profilers are (Force Sample).
    jsprof: Arc<crate::Jsprof>,
}

/// What the browser remembers between commands.
struct State {
    /// WebDriver's current browsing context (the webview's own at first, and after a
    /// navigation).
    current: BrowsingContextId,
    /// Whether the webview is hidden (Minimize Window).
    hidden: bool,
}

impl ServoBrowser {
    /// The browser of `webview` (`hidden` if it was hidden at its start); its jobs go to
    /// `jobs`, which the main loop runs once `waker` woke it.
    pub fn new(
        webview: WebViewId,
        hidden: bool,
        waiters: Arc<Waiters>,
        jobs: mpsc::Sender<Job>,
        waker: Box<dyn EventLoopWaker>,
        jsprof: Arc<crate::Jsprof>,
    ) -> Self {
        ServoBrowser(Arc::new(Inner {
            jobs: Mutex::new(jobs),
            waker,
            webview,
            waiters,
            known: Mutex::default(),
            jsprof,
            state: Mutex::new(State {
                current: BrowsingContextId::from(webview),
                hidden,
            }),
        }))
    }
}

impl Browser for ServoBrowser {
    fn send(&self, command: Command, respond: Responder) {
        let inner = self.0.clone();
        let spawned = std::thread::Builder::new()
            .name("webdriver command".into())
            .spawn(move || respond(inner.handle(command)));
        // Without a thread the responder is dropped: the server answers "the browser is gone".
        if let Err(e) = spawned {
            eprintln!("jsprof-servo: no thread for a WebDriver command: {e}");
        }
    }
}

fn error(kind: ErrorKind, message: impl Into<String>) -> Error {
    Error::new(kind, message)
}

impl Inner {
    fn handle(&self, command: Command) -> Reply {
        match command {
            Command::Navigate(navigation) => self.navigate(navigation),
            Command::CurrentUrl => {
                let top = self.top();
                self.script(top, WebDriverScriptCommand::GetUrl, ANSWER_WAIT)
                    .map(Value::String)
            }
            Command::Title => {
                let top = self.top();
                self.script(top, WebDriverScriptCommand::GetTitle, ANSWER_WAIT)
                    .map(Value::String)
            }
            Command::PageSource => {
                let source = self.script(
                    self.current(),
                    WebDriverScriptCommand::GetPageSource,
                    ANSWER_WAIT,
                )?;
                source.map(Value::String).map_err(status_error)
            }
            Command::Execute {
                body,
                args,
                is_async,
            } => self.execute(&body, &args, is_async),
            Command::FindElements { root, using, value } => self.find(root, using, value),
            Command::ElementText(id) => self
                .known(&id.clone(), |tx| {
                    WebDriverScriptCommand::GetElementText(id, tx)
                })
                .map(Value::String),
            Command::ElementAttribute(id, name) => self
                .known(&id.clone(), |tx| {
                    WebDriverScriptCommand::GetElementAttribute(id, name, tx)
                })
                .map(|v| v.map_or(Value::Null, Value::String)),
            Command::ElementProperty(id, name) => self
                .known(&id.clone(), |tx| {
                    WebDriverScriptCommand::GetElementProperty(id, name, tx)
                })
                .map(|v| self.remember(json_of(&v))),
            Command::ElementTagName(id) => self
                .known(&id.clone(), |tx| {
                    WebDriverScriptCommand::GetElementTagName(id, tx)
                })
                .map(Value::String),
            Command::ElementClick(id) => self.click(id),
            Command::SwitchToFrame(frame) => self.switch_to_frame(frame),
            Command::SwitchToParentFrame => {
                let current = self.current();
                if current == self.top() {
                    return Ok(Value::Null);
                }
                let parent = self.element(WebDriverScriptCommand::GetParentFrameId)?;
                self.set_current(parent);
                Ok(Value::Null)
            }
            Command::SetHidden(hidden) => self.set_hidden(hidden),
            Command::ForceSample => {
                if self.jsprof.force_sample(self.current(), FORCE_SAMPLE_WAIT) {
                    Ok(Value::Null)
                } else {
                    Err(error(
                        ErrorKind::UnknownError,
                        format!(
                            "the forced samples were not recorded within {} s",
                            FORCE_SAMPLE_WAIT.as_secs()
                        ),
                    ))
                }
            }
            Command::Reset => {
                self.set_hidden(false)?;
                self.navigate(Navigation::To("about:blank".into()))
            }
        }
    }

    /// The webview's own browsing context (the top-level one).
    fn top(&self) -> BrowsingContextId {
        BrowsingContextId::from(self.webview)
    }

    fn current(&self) -> BrowsingContextId {
        lock(&self.state).current
    }

    fn set_current(&self, context: BrowsingContextId) {
        lock(&self.state).current = context;
    }

    /// Runs `job` on the main thread (soon: the loop is woken).
    fn on_main(&self, job: Job) -> Result<(), Error> {
        lock(&self.jobs)
            .send(job)
            .map_err(|_| error(ErrorKind::UnknownError, "the browser has ended"))?;
        self.waker.wake();
        Ok(())
    }

    /// Sends `message` to Servo's constellation.
    fn to_servo(&self, message: WebDriverCommandMsg) -> Result<(), Error> {
        self.on_main(Box::new(move |servo, _| {
            servo.execute_webdriver_command(message)
        }))
    }

    /// Sends the script command `make` builds to the script thread of `context`, and waits
    /// at most `wait` for its answer.
    fn script<T>(
        &self,
        context: BrowsingContextId,
        make: impl FnOnce(GenericSender<T>) -> WebDriverScriptCommand,
        wait: Duration,
    ) -> Result<T, Error>
    where
        T: Serialize + DeserializeOwned,
    {
        let (tx, rx) = channel()?;
        self.to_servo(WebDriverCommandMsg::ScriptCommand(context, make(tx)))?;
        receive(&rx, wait)
    }

    /// A script command about an element (or frame) in the current browsing context,
    /// answered with a result whose error is the spec's.
    fn element<T>(
        &self,
        make: impl FnOnce(GenericSender<Result<T, ErrorStatus>>) -> WebDriverScriptCommand,
    ) -> Result<T, Error>
    where
        T: Serialize + DeserializeOwned,
    {
        self.script(self.current(), make, ANSWER_WAIT)?
            .map_err(status_error)
    }

    /// [`Inner::element`] for a command naming the element `id`: "no such element" for an
    /// id this server gave out is "stale element reference".
    fn known<T>(
        &self,
        id: &str,
        make: impl FnOnce(GenericSender<Result<T, ErrorStatus>>) -> WebDriverScriptCommand,
    ) -> Result<T, Error>
    where
        T: Serialize + DeserializeOwned,
    {
        self.element(make).map_err(|e| {
            if e.kind == ErrorKind::NoSuchElement && lock(&self.known).contains(id) {
                error(
                    ErrorKind::StaleElementReference,
                    "the element is no longer in the current browsing context's document",
                )
            } else {
                e
            }
        })
    }

    /// Remembers the element ids in `value` (a reply), and gives it back.
    fn remember(&self, value: Value) -> Value {
        fn walk(value: &Value, known: &mut HashSet<String>) {
            match value {
                Value::Object(map) => match map.get(ELEMENT_KEY) {
                    Some(Value::String(id)) => {
                        known.insert(id.clone());
                    }
                    _ => map.values().for_each(|v| walk(v, known)),
                },
                Value::Array(items) => items.iter().for_each(|v| walk(v, known)),
                _ => {}
            }
        }
        walk(&value, &mut lock(&self.known));
        value
    }

    /// Navigate To, Back, Forward, Refresh: answered when the webview's load is complete
    /// (Navigate To, Refresh) or its history traversal is done and the document it shows is
    /// loaded (Back, Forward); the top-level browsing context becomes the current one.
    fn navigate(&self, navigation: Navigation) -> Reply {
        let (tx, rx) = mpsc::channel();
        let waiters = self.waiters.clone();
        let job: Job = match navigation {
            Navigation::To(url) => {
                let url = url::Url::parse(&url)
                    .map_err(|e| error(ErrorKind::InvalidArgument, format!("{url}: {e}")))?;
                Box::new(move |_, webview| {
                    lock(&waiters.loads).push(tx);
                    webview.load(url);
                })
            }
            Navigation::Refresh => Box::new(move |_, webview| {
                lock(&waiters.loads).push(tx);
                webview.reload();
            }),
            Navigation::Back => Box::new(move |_, webview| {
                lock(&waiters.traversals).insert(webview.go_back(1), tx);
            }),
            Navigation::Forward => Box::new(move |_, webview| {
                lock(&waiters.traversals).insert(webview.go_forward(1), tx);
            }),
        };
        // The document before, by its time origin: the `Complete` that comes first may be
        // that of a load it was still in (the first page's, at start).
        let before = match self.script(
            self.top(),
            |tx| WebDriverScriptCommand::ExecuteScriptWithCallback(TIME_ORIGIN.into(), tx),
            ORIGIN_WAIT,
        ) {
            Ok(Ok(JSValue::Number(origin))) => Some(origin),
            _ => None,
        };
        self.on_main(job)?;
        self.set_current(self.top());
        rx.recv_timeout(LONG_WAIT)
            .map_err(|_| error(ErrorKind::Timeout, "the page did not load in time"))?;
        // Then the new document, loaded: another time origin, and "complete".
        let deadline = Instant::now() + LONG_WAIT;
        loop {
            let now = self.script(
                self.top(),
                |tx| WebDriverScriptCommand::ExecuteScriptWithCallback(LOADED.into(), tx),
                ANSWER_WAIT,
            )?;
            match now {
                // The new document, loaded.
                Ok(JSValue::Number(origin)) if before != Some(origin) => break,
                // Which document was left is not known: a loaded one is taken.
                Ok(JSValue::Number(_)) if before.is_none() => break,
                // Still the document before, or the new one loading, or between the two.
                Ok(_)
                | Err(
                    JavaScriptEvaluationError::DocumentNotFound
                    | JavaScriptEvaluationError::WebViewNotReady,
                ) => {}
                // A document that cannot answer otherwise (its script busy) is not waited for.
                Err(_) => break,
            }
            if Instant::now() >= deadline {
                return Err(error(ErrorKind::Timeout, "the page did not load in time"));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        // A navigation that failed (a network error) still completes, with Servo's error
        // page in place of the document; Servo tells the embedder nothing else.
        let page = self.script(
            self.top(),
            |tx| WebDriverScriptCommand::ExecuteScriptWithCallback(NET_ERROR_PAGE.into(), tx),
            ANSWER_WAIT,
        )?;
        if let Ok(JSValue::String(reason)) = page {
            return Err(error(
                ErrorKind::UnknownError,
                format!("the navigation failed: {reason}"),
            ));
        }
        Ok(Value::Null)
    }

    /// Evaluates `expression` in `context` until it gives the string `wanted`, or `wait`
    /// has passed, or the document cannot answer (gone, or its script busy: not waited
    /// for).
    fn wait_for_script(
        &self,
        context: BrowsingContextId,
        expression: &str,
        wanted: &str,
        wait: Duration,
    ) -> Result<(), Error> {
        let deadline = Instant::now() + wait;
        loop {
            let got = self.script(
                context,
                |tx| WebDriverScriptCommand::ExecuteScriptWithCallback(expression.into(), tx),
                ANSWER_WAIT,
            )?;
            match got {
                Ok(JSValue::String(got)) if got == wanted => return Ok(()),
                Ok(_) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
                _ => return Ok(()),
            }
        }
    }

    /// Execute Script and Execute Async Script: the body as a function called with the
    /// arguments (element references first checked to be known and not stale); Servo
    /// waits for a promise it returns, and clones the result as the spec says.
    fn execute(&self, body: &str, args: &[Value], is_async: bool) -> Reply {
        let context = self.current();
        let mut elements = Vec::new();
        let mut js_args = Vec::with_capacity(args.len() + 1);
        for arg in args {
            js_args.push(js_of(arg, &mut elements)?);
        }
        for id in elements {
            self.known(&id.clone(), |tx| {
                WebDriverScriptCommand::GetKnownElement(id, tx)
            })?;
        }
        // The body on lines of its own: a trailing `//` comment ends with its line. A
        // plain call: `this` is the window (non-strict code), and no built-in the page
        // may have replaced is used (`apply`, `call`).
        let script = if is_async {
            js_args.push("resolve".into());
            format!(
                "new Promise(function (resolve) {{ (function () {{\n{body}\n}})({}); }})",
                js_args.join(", ")
            )
        } else {
            format!("(function () {{\n{body}\n}})({})", js_args.join(", "))
        };
        let result = self.script(
            context,
            |tx| WebDriverScriptCommand::ExecuteScriptWithCallback(script, tx),
            LONG_WAIT,
        )?;
        match result {
            Ok(value) => Ok(self.remember(json_of(&value))),
            Err(e) => Err(evaluation_error(e)),
        }
    }

    /// Find Elements (from the document or an element) of the current browsing context.
    fn find(&self, root: Option<String>, using: Locator, value: String) -> Reply {
        use WebDriverScriptCommand as C;
        let ids: Vec<String> = match (root, using) {
            (None, Locator::Css) => self.element(|tx| C::FindElementsCSSSelector(value, tx)),
            (None, Locator::TagName) => self.element(|tx| C::FindElementsTagName(value, tx)),
            (None, Locator::LinkText) => {
                self.element(|tx| C::FindElementsLinkText(value, false, tx))
            }
            (None, Locator::PartialLinkText) => {
                self.element(|tx| C::FindElementsLinkText(value, true, tx))
            }
            (Some(root), Locator::Css) => self.known(&root.clone(), |tx| {
                C::FindElementElementsCSSSelector(value, root, tx)
            }),
            (Some(root), Locator::TagName) => self.known(&root.clone(), |tx| {
                C::FindElementElementsTagName(value, root, tx)
            }),
            (Some(root), Locator::LinkText) => self.known(&root.clone(), |tx| {
                C::FindElementElementsLinkText(value, root, false, tx)
            }),
            (Some(root), Locator::PartialLinkText) => self.known(&root.clone(), |tx| {
                C::FindElementElementsLinkText(value, root, true, tx)
            }),
        }?;
        Ok(self.remember(Value::Array(ids.into_iter().map(element_ref).collect())))
    }

    /// Element Click: Servo's script thread checks the element (and clicks an `option`
    /// itself); otherwise the pointer moves to the element's in-view centre point and the
    /// primary button goes down and up there, as trusted input events of the webview.
    fn click(&self, id: String) -> Reply {
        let Some(target) = self.known(&id.clone(), |tx| {
            WebDriverScriptCommand::ElementClick(id, tx)
        })?
        else {
            return Ok(Value::Null);
        };
        if self.current() != self.top() {
            // The centre point is the frame's, and the webview's events are the top-level
            // document's: Servo's WebDriver server adds the frames' offsets, this one not
            // yet.
            return Err(error(
                ErrorKind::UnsupportedOperation,
                "jsprof-servo clicks elements of the top-level document only",
            ));
        }
        let (tx, rx) = generic_channel::oneshot().ok_or_else(no_channel)?;
        self.to_servo(WebDriverCommandMsg::ScriptCommand(
            self.current(),
            WebDriverScriptCommand::GetElementInViewCenterPoint(target, tx),
        ))?;
        let point = rx
            .recv()
            .map_err(|e| {
                error(
                    ErrorKind::UnknownError,
                    format!("no answer from Servo: {e:?}"),
                )
            })?
            .map_err(status_error)?
            .ok_or_else(|| {
                error(
                    ErrorKind::UnknownError,
                    "the element has no in-view centre point",
                )
            })?;
        // CSS pixels; the webview's device pixel ratio is 1 (no HiDPI scale is set).
        let point = WebViewPoint::Device(DevicePoint::new(point.0 as f32, point.1 as f32));
        let events = [
            InputEvent::MouseMove(MouseMoveEvent::new(point)),
            InputEvent::MouseButton(MouseButtonEvent::new(
                MouseButtonAction::Down,
                MouseButton::Primary,
                point,
            )),
            InputEvent::MouseButton(MouseButtonEvent::new(
                MouseButtonAction::Up,
                MouseButton::Primary,
                point,
            )),
        ];
        for event in events {
            let (tx, rx) = mpsc::channel();
            let waiters = self.waiters.clone();
            self.on_main(Box::new(move |_, webview| {
                lock(&waiters.inputs).insert(webview.notify_input_event(event), tx);
            }))?;
            rx.recv_timeout(ANSWER_WAIT).map_err(|_| {
                error(
                    ErrorKind::UnknownError,
                    "Servo did not handle the click's input events",
                )
            })?;
        }
        Ok(Value::Null)
    }

    /// Switch To Frame: by index or `iframe` element, in the current browsing context.
    fn switch_to_frame(&self, frame: Frame) -> Reply {
        let id = match frame {
            Frame::Top => {
                self.set_current(self.top());
                return Ok(Value::Null);
            }
            Frame::Index(index) => WebDriverFrameId::Short(index),
            Frame::Element(element) => WebDriverFrameId::Element(element),
        };
        let context = self.element(|tx| WebDriverScriptCommand::GetBrowsingContextId(id, tx))?;
        self.set_current(context);
        Ok(Value::Null)
    }

    /// Minimize (hidden) or show the webview: Servo throttles its pipelines, and their
    /// documents' visibility follows (patch servo-script.14), which pauses or resumes their
    /// sessions. Answered once the top-level document's visibility has changed.
    fn set_hidden(&self, hidden: bool) -> Reply {
        {
            let mut state = lock(&self.state);
            if state.hidden == hidden {
                return Ok(Value::Null);
            }
            state.hidden = hidden;
        }
        self.on_main(Box::new(move |_, webview| {
            if hidden {
                webview.hide();
            } else {
                webview.show();
            }
        }))?;
        let wanted = if hidden { "hidden" } else { "visible" };
        self.wait_for_script(
            self.top(),
            "document.visibilityState",
            wanted,
            VISIBILITY_WAIT,
        )?;
        Ok(Value::Null)
    }
}

fn channel<T: Serialize + DeserializeOwned>(
) -> Result<(GenericSender<T>, generic_channel::GenericReceiver<T>), Error> {
    generic_channel::channel().ok_or_else(no_channel)
}

fn no_channel() -> Error {
    error(ErrorKind::UnknownError, "Servo could not make a channel")
}

/// Waits at most `wait` for the answer on `rx`.
fn receive<T: Serialize + DeserializeOwned>(
    rx: &generic_channel::GenericReceiver<T>,
    wait: Duration,
) -> Result<T, Error> {
    rx.try_recv_timeout(wait).map_err(|e| match e {
        TryReceiveError::Empty => error(
            ErrorKind::Timeout,
            format!("Servo did not answer within {} s", wait.as_secs()),
        ),
        TryReceiveError::ReceiveError(_) => error(
            ErrorKind::NoSuchWindow,
            "Servo dropped the command: the browsing context is gone",
        ),
    })
}

/// A Servo script command's error as the spec's.
fn status_error(status: ErrorStatus) -> Error {
    let code = status.error_code();
    let kind = match code {
        "invalid argument" => ErrorKind::InvalidArgument,
        "invalid selector" => ErrorKind::InvalidSelector,
        "javascript error" => ErrorKind::JavascriptError,
        "no such element" => ErrorKind::NoSuchElement,
        "no such frame" => ErrorKind::NoSuchFrame,
        "no such window" => ErrorKind::NoSuchWindow,
        "script timeout" => ErrorKind::ScriptTimeout,
        "stale element reference" => ErrorKind::StaleElementReference,
        "timeout" => ErrorKind::Timeout,
        "unsupported operation" => ErrorKind::UnsupportedOperation,
        _ => ErrorKind::UnknownError,
    };
    error(kind, format!("Servo: {code}"))
}

/// A script's failure as the spec's error.
fn evaluation_error(e: JavaScriptEvaluationError) -> Error {
    use JavaScriptEvaluationError as E;
    use JavaScriptEvaluationResultSerializationError as S;
    match e {
        E::DocumentNotFound => error(
            ErrorKind::NoSuchWindow,
            "the current browsing context has no document",
        ),
        E::CompilationFailure => error(ErrorKind::JavascriptError, "the script does not compile"),
        E::EvaluationFailure(Some(info)) => error(
            ErrorKind::JavascriptError,
            format!(
                "{} ({}:{}:{})",
                info.message, info.filename, info.line_number, info.column
            ),
        ),
        E::EvaluationFailure(None) => error(ErrorKind::JavascriptError, "the script threw"),
        E::InternalError | E::WebViewNotReady => error(
            ErrorKind::UnknownError,
            format!("Servo could not run the script: {e:?}"),
        ),
        E::SerializationError(S::StaleElementReference) => error(
            ErrorKind::StaleElementReference,
            "the result holds a stale element",
        ),
        E::SerializationError(S::DetachedShadowRoot) => error(
            ErrorKind::JavascriptError,
            "the result holds a detached shadow root",
        ),
        E::SerializationError(S::UnknownType) => error(
            ErrorKind::JavascriptError,
            "the result holds a value JSON cannot carry",
        ),
        // Servo's clone gives this one error for a cycle, a throwing getter or toJSON.
        E::SerializationError(S::OtherJavaScriptError) => error(
            ErrorKind::JavascriptError,
            "the result cannot be cloned: it is cyclic, or a getter or toJSON threw",
        ),
    }
}

/// A web element reference.
fn element_ref(id: String) -> Value {
    let mut object = serde_json::Map::new();
    object.insert(ELEMENT_KEY.into(), Value::String(id));
    Value::Object(object)
}

/// Servo's clone of a script's result as the spec's JSON.
fn json_of(value: &JSValue) -> Value {
    let reference = |key: &str, id: &str| {
        let mut object = serde_json::Map::new();
        object.insert(key.into(), Value::String(id.into()));
        Value::Object(object)
    };
    match value {
        JSValue::Undefined | JSValue::Null => Value::Null,
        JSValue::Boolean(b) => Value::Bool(*b),
        // An integral number is written as one (42, not 42.0), as browsers do.
        JSValue::Number(n) if n.fract() == 0.0 && n.abs() < 9.007_199_254_740_992e15 => {
            Value::from(*n as i64)
        }
        JSValue::Number(n) => serde_json::Number::from_f64(*n).map_or(Value::Null, Value::Number),
        JSValue::String(s) => Value::String(s.clone()),
        JSValue::Element(id) => reference(ELEMENT_KEY, id),
        JSValue::ShadowRoot(id) => reference(SHADOW_KEY, id),
        JSValue::Frame(id) => reference(FRAME_KEY, id),
        JSValue::Window(id) => reference(WINDOW_KEY, id),
        JSValue::Array(items) => Value::Array(items.iter().map(json_of).collect()),
        JSValue::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), json_of(v)))
                .collect::<BTreeMap<_, _>>()
                .into_iter()
                .collect(),
        ),
    }
}

/// A script argument (the spec's JSON, element references included) as JavaScript source:
/// element references become Servo's `window.webdriverElement(id)`, their ids kept in
/// `elements` to be checked first; object keys are computed (`["__proto__"]` is a key).
fn js_of(value: &Value, elements: &mut Vec<String>) -> Result<String, Error> {
    let quote = |s: &str| Value::String(s.into()).to_string();
    Ok(match value {
        Value::Object(map) => {
            if let Some(Value::String(id)) = map.get(ELEMENT_KEY) {
                elements.push(id.clone());
                return Ok(format!("window.webdriverElement({})", quote(id)));
            }
            if let Some(Value::String(id)) = map.get(FRAME_KEY) {
                return Ok(format!("window.webdriverFrame({})", quote(id)));
            }
            if let Some(Value::String(id)) = map.get(WINDOW_KEY) {
                return Ok(format!("window.webdriverWindow({})", quote(id)));
            }
            if let Some(Value::String(id)) = map.get(SHADOW_KEY) {
                return Ok(format!("window.webdriverShadowRoot({})", quote(id)));
            }
            let mut fields = Vec::with_capacity(map.len());
            for (key, item) in map {
                fields.push(format!("[{}]: {}", quote(key), js_of(item, elements)?));
            }
            format!("{{{}}}", fields.join(", "))
        }
        Value::Array(items) => {
            let mut parts = Vec::with_capacity(items.len());
            for item in items {
                parts.push(js_of(item, elements)?);
            }
            format!("[{}]", parts.join(", "))
        }
        // JSON's null, booleans, numbers and strings are JavaScript as they are.
        other => other.to_string(),
    })
}
