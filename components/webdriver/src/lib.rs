//! jsprof's WebDriver server (<https://w3c.github.io/webdriver/>), and the commands it hands
//! the browser.
//!
//! The split follows Servo's: the HTTP protocol, sessions, capabilities, timeouts and error
//! statuses live in [`server`] (on the `webdriver` crate, the one Servo and geckodriver use),
//! with no SpiderMonkey; what needs the engine reaches it as a [`Command`] through the
//! [`Browser`] trait, which `jsprof-script` implements on the page's event loop. The engine
//! depends on this crate without its `server` feature, for these types only. Commands and
//! replies are serde types: `jsprof -M` sends them to the content process of the page.

#![forbid(unsafe_code)]

use serde::{Deserialize, Serialize};
use serde_json::Value;

#[cfg(feature = "server")]
pub mod server;

/// What the server asks of the browser. Each command is answered once with a [`Reply`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Command {
    /// Navigate To, Back, Forward, Refresh: answered once the new document's `load` event has
    /// fired (the "normal" page load strategy) or its load failed. The current browsing
    /// context becomes the top-level one.
    Navigate(Navigation),
    /// The top-level document's URL (a string).
    CurrentUrl,
    /// The current top-level document's title (a string).
    Title,
    /// The current browsing context's document, serialised (a string).
    PageSource,
    /// Execute Script / Execute Async Script in the current browsing context: `body` is a
    /// function body, `args` its arguments as the spec's JSON (element references included).
    /// Answered with the JSON clone of its completion; the server enforces the script
    /// timeout.
    Execute {
        body: String,
        args: Vec<Value>,
        is_async: bool,
    },
    /// The elements matching `using`/`value` in the current browsing context's document, or
    /// under the element `root`: an array of web element references (possibly empty).
    FindElements {
        root: Option<String>,
        using: Locator,
        value: String,
    },
    /// An element's text (a string).
    ElementText(String),
    /// An element's attribute (a string or null).
    ElementAttribute(String, String),
    /// An element's property (its JSON clone).
    ElementProperty(String, String),
    /// An element's tag name (a string).
    ElementTagName(String),
    /// Element Click: the click events, dispatched at the element (null).
    ElementClick(String),
    /// Switch To Frame (null).
    SwitchToFrame(Frame),
    /// Switch To Parent Frame (null).
    SwitchToParentFrame,
    /// The top-level document and its frames become hidden (`true`: Minimize Window) or
    /// visible (`false`: Maximize, Set Window Rect, Fullscreen): `visibilitychange`, and
    /// their profiling sessions paused or resumed (null). Nothing happens when the state
    /// is already the one asked for.
    SetHidden(bool),
    /// The spec's Force Sample: every started profiling session of the current browsing
    /// context takes a sample now, answered once recorded (null). Served off the event loop,
    /// so that it works while the page's script runs.
    ForceSample,
    /// The session ended (Delete Session, or the server stops): `about:blank`, visible, the
    /// top-level browsing context current (null). New Session does not navigate, so a first
    /// session finds the page the browser was started with.
    Reset,
}

/// The navigations of [`Command::Navigate`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Navigation {
    To(String),
    Back,
    Forward,
    Refresh,
}

/// Element location strategies the browser supports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Locator {
    Css,
    TagName,
    /// `a` elements whose rendered text is the value.
    LinkText,
    /// `a` elements whose rendered text contains the value.
    PartialLinkText,
}

/// What Switch To Frame switches to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Frame {
    Top,
    Index(u16),
    /// An `iframe` element, by its web element reference.
    Element(String),
}

/// The spec's errors the browser can give (<https://w3c.github.io/webdriver/#errors>); the
/// server maps each to its error code and HTTP status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ErrorKind {
    InvalidArgument,
    InvalidSelector,
    JavascriptError,
    NoSuchElement,
    NoSuchFrame,
    NoSuchWindow,
    ScriptTimeout,
    StaleElementReference,
    Timeout,
    UnknownError,
    UnsupportedOperation,
}

/// A command's failure: its kind and a message for people.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Error {
    pub kind: ErrorKind,
    pub message: String,
}

impl Error {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error {
            kind,
            message: message.into(),
        }
    }
}

/// A command's outcome: its value (the spec's "success with data"), or an error.
pub type Reply = Result<Value, Error>;

/// Where a [`Reply`] goes: called once, on any thread.
pub type Responder = Box<dyn FnOnce(Reply) + Send>;

/// The browser, as the server sees it.
pub trait Browser: Send + Sync + 'static {
    /// Hands `command` to the browser; `respond` is called once with its outcome (perhaps
    /// much later, perhaps on another thread). A browser that is gone drops `respond`.
    /// Called on the server's one dispatching thread: it must not panic.
    fn send(&self, command: Command, respond: Responder);
}

/// The web element identifier (<https://w3c.github.io/webdriver/#dfn-web-element-identifier>).
pub const ELEMENT_KEY: &str = "element-6066-11e4-a52e-4f735466cecf";
/// The web window identifier (<https://w3c.github.io/webdriver/#dfn-web-window-identifier>).
pub const WINDOW_KEY: &str = "window-fcc6-11e5-b4f8-330a88ab9d7f";
/// The web frame identifier (<https://w3c.github.io/webdriver/#dfn-web-frame-identifier>).
pub const FRAME_KEY: &str = "frame-075b-4da1-b6ba-e579c2d3230a";
