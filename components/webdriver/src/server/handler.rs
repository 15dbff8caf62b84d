//! The commands (<https://w3c.github.io/webdriver/#endpoints>): what the server answers itself,
//! and what it asks the browser.

use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use webdriver::command::{
    JavascriptCommandParameters, LocatorParameters, NewSessionParameters, WebDriverCommand,
    WebDriverMessage, WindowRectParameters,
};
use webdriver::common::{FrameId, LocatorStrategy};
use webdriver::error::{ErrorStatus, WebDriverError, WebDriverResult};
use webdriver::response::{
    NewSessionResponse, ValueResponse, WebDriverResponse, WindowRectResponse,
};
use webdriver::server::{Session, SessionTeardownKind, WebDriverHandler};

use super::ask::{ask, Limit};
use super::capabilities;
use super::timeouts::Timeouts;
use super::{Extension, Route};
use crate::{Browser, Command, Frame, Locator, Navigation};

/// How often Find Element(s) asks again during the implicit wait.
const FIND_INTERVAL: Duration = Duration::from_millis(50);

/// The one top-level browsing context's window rect (it has no real window).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Rect {
    x: i32,
    y: i32,
    width: i32,
    height: i32,
}

/// The server's side of the commands: the session's state, and the browser.
pub(super) struct Handler {
    browser: Arc<dyn Browser>,
    /// The window handle of the one top-level browsing context.
    window: String,
    /// Its rect: only remembered, since nothing is drawn. Minimizing does not change it.
    rect: Rect,
    timeouts: Timeouts,
}

impl WebDriverHandler<Route> for Handler {
    fn handle_command(
        &mut self,
        session: &Option<Session>,
        message: WebDriverMessage<Route>,
    ) -> WebDriverResult<WebDriverResponse> {
        use WebDriverCommand::{NewSession, Status};
        match message.command {
            NewSession(parameters) => self.new_session(&parameters),
            Status => Ok(status(session.is_none())),
            // The crate lets a session id through when there is no session.
            _ if session.is_none() => Err(WebDriverError::new(
                ErrorStatus::InvalidSessionId,
                "there is no session: start one with New Session",
            )),
            command => self.session_command(command),
        }
    }

    /// Resets the browser unless Delete Session did.
    fn teardown_session(&mut self, kind: SessionTeardownKind) {
        if kind == SessionTeardownKind::NotDeleted {
            // The server is ending (a signal): the browser is told to reset, without
            // waiting, so that a page whose script is running does not hold the exit up.
            self.browser.send(Command::Reset, Box::new(|_| {}));
        }
        self.timeouts = Timeouts::default();
    }
}

impl Handler {
    pub(super) fn new(browser: Arc<dyn Browser>) -> Handler {
        Handler {
            browser,
            window: uuid::Uuid::new_v4().to_string(),
            rect: Rect {
                x: 0,
                y: 0,
                width: 1280,
                height: 720,
            },
            timeouts: Timeouts::default(),
        }
    }

    /// A command of the current session.
    fn session_command(
        &mut self,
        command: WebDriverCommand<Extension>,
    ) -> WebDriverResult<WebDriverResponse> {
        use WebDriverCommand as C;
        match command {
            C::DeleteSession => Ok(self.delete_session()),
            C::GetTimeouts => Ok(WebDriverResponse::Timeouts(self.timeouts.response())),
            C::SetTimeouts(parameters) => {
                self.timeouts.update(&parameters);
                Ok(WebDriverResponse::Void)
            }
            C::Get(parameters) => self.navigate_to(parameters.url),
            C::GoBack => self.navigate(Navigation::Back),
            C::GoForward => self.navigate(Navigation::Forward),
            C::Refresh => self.navigate(Navigation::Refresh),
            C::GetCurrentUrl => self.value(Command::CurrentUrl),
            C::GetTitle => self.value(Command::Title),
            C::GetPageSource => self.value(Command::PageSource),
            C::ExecuteScript(parameters) => self.execute(parameters, false),
            C::ExecuteAsyncScript(parameters) => self.execute(parameters, true),
            command => self.element_command(command),
        }
    }

    /// Elements and frames.
    fn element_command(
        &mut self,
        command: WebDriverCommand<Extension>,
    ) -> WebDriverResult<WebDriverResponse> {
        use WebDriverCommand as C;
        match command {
            C::FindElement(parameters) => self.find_element(None, &parameters),
            C::FindElements(parameters) => self.find_elements(None, &parameters),
            C::FindElementElement(root, parameters) => self.find_element(Some(root.0), &parameters),
            C::FindElementElements(root, parameters) => {
                self.find_elements(Some(root.0), &parameters)
            }
            C::GetElementText(element) => self.value(Command::ElementText(element.0)),
            C::GetElementAttribute(element, name) => {
                self.value(Command::ElementAttribute(element.0, name))
            }
            C::GetElementProperty(element, name) => {
                self.value(Command::ElementProperty(element.0, name))
            }
            C::GetElementTagName(element) => self.value(Command::ElementTagName(element.0)),
            C::ElementClick(element) => self.void(Command::ElementClick(element.0)),
            C::SwitchToFrame(parameters) => self.void(Command::SwitchToFrame(frame(parameters.id))),
            C::SwitchToParentFrame => self.void(Command::SwitchToParentFrame),
            command => self.window_command(command),
        }
    }

    /// The window, Force Sample, and the commands jsprof does not support.
    fn window_command(
        &mut self,
        command: WebDriverCommand<Extension>,
    ) -> WebDriverResult<WebDriverResponse> {
        use WebDriverCommand as C;
        match command {
            C::GetWindowHandle => Ok(value(json!(self.window))),
            C::GetWindowHandles => Ok(value(json!([self.window]))),
            C::SwitchToWindow(parameters) => self.switch_to_window(&parameters.handle),
            C::GetWindowRect => Ok(self.window_rect()),
            C::SetWindowRect(parameters) => self.set_window_rect(&parameters),
            C::MaximizeWindow | C::FullscreenWindow => self.set_minimized(false),
            C::MinimizeWindow => self.set_minimized(true),
            C::Extension(Extension::ForceSample) => self.void(Command::ForceSample),
            command => Err(unsupported(&command)),
        }
    }

    /// Asks the browser `command` within the 60 s limit.
    fn ask(&self, command: Command) -> WebDriverResult<Value> {
        ask(&*self.browser, command, Limit::Browser)
    }

    /// A command answered with the browser's value.
    fn value(&self, command: Command) -> WebDriverResult<WebDriverResponse> {
        self.ask(command).map(value)
    }

    /// A command answered with null.
    fn void(&self, command: Command) -> WebDriverResult<WebDriverResponse> {
        self.ask(command).map(|_| WebDriverResponse::Void)
    }

    /// Resets the browser, for a session's end: errors are logged.
    fn reset(&self) {
        if let Err(error) = self.ask(Command::Reset) {
            log::warn!("the browser did not reset: {}", error.message);
        }
    }

    /// <https://w3c.github.io/webdriver/#new-session>: the browser is not navigated, so a
    /// first session finds the page `jsprof --webdriver PORT PAGE` opened.
    fn new_session(
        &mut self,
        parameters: &NewSessionParameters,
    ) -> WebDriverResult<WebDriverResponse> {
        let matched = capabilities::negotiate(&parameters.capabilities)?;
        let timeouts = Timeouts::from_capability(matched.get("timeouts"))?;
        // The browser is as the last session left it (reset) or as it started (the
        // page given on the command line).
        self.timeouts = timeouts;
        Ok(WebDriverResponse::NewSession(NewSessionResponse::new(
            uuid::Uuid::new_v4().to_string(),
            capabilities::session_capabilities(&matched, &timeouts),
        )))
    }

    /// <https://w3c.github.io/webdriver/#delete-session>: the session ends even if the
    /// browser does not reset.
    fn delete_session(&mut self) -> WebDriverResponse {
        self.reset();
        self.timeouts = Timeouts::default();
        WebDriverResponse::DeleteSession
    }

    /// <https://w3c.github.io/webdriver/#navigate-to>
    fn navigate_to(&self, url: String) -> WebDriverResult<WebDriverResponse> {
        if let Err(error) = url::Url::parse(&url) {
            return Err(WebDriverError::new(
                ErrorStatus::InvalidArgument,
                format!("{url:?} is not an absolute URL: {error}"),
            ));
        }
        self.navigate(Navigation::To(url))
    }

    /// Navigate To, <https://w3c.github.io/webdriver/#back>,
    /// <https://w3c.github.io/webdriver/#forward>, <https://w3c.github.io/webdriver/#refresh>:
    /// within the page load timeout.
    fn navigate(&self, navigation: Navigation) -> WebDriverResult<WebDriverResponse> {
        let limit = Limit::PageLoad(self.timeouts.page_load);
        ask(&*self.browser, Command::Navigate(navigation), limit).map(|_| WebDriverResponse::Void)
    }

    /// <https://w3c.github.io/webdriver/#execute-script>,
    /// <https://w3c.github.io/webdriver/#execute-async-script>: within the script timeout.
    fn execute(
        &self,
        parameters: JavascriptCommandParameters,
        is_async: bool,
    ) -> WebDriverResult<WebDriverResponse> {
        let command = Command::Execute {
            body: parameters.script,
            args: parameters.args.unwrap_or_default(),
            is_async,
        };
        ask(&*self.browser, command, Limit::Script(self.timeouts.script)).map(value)
    }

    /// <https://w3c.github.io/webdriver/#find-element>,
    /// <https://w3c.github.io/webdriver/#find-element-from-element>
    fn find_element(
        &self,
        root: Option<String>,
        parameters: &LocatorParameters,
    ) -> WebDriverResult<WebDriverResponse> {
        match self.find(root, parameters)?.into_iter().next() {
            Some(element) => Ok(value(element)),
            None => Err(WebDriverError::new(
                ErrorStatus::NoSuchElement,
                format!(
                    "no element matches the {} {:?}",
                    strategy_name(parameters.using),
                    parameters.value
                ),
            )),
        }
    }

    /// <https://w3c.github.io/webdriver/#find-elements>,
    /// <https://w3c.github.io/webdriver/#find-elements-from-element>
    fn find_elements(
        &self,
        root: Option<String>,
        parameters: &LocatorParameters,
    ) -> WebDriverResult<WebDriverResponse> {
        self.find(root, parameters).map(|found| value(found.into()))
    }

    /// Finding elements (<https://w3c.github.io/webdriver/#dfn-find>): asks the browser again
    /// every [`FIND_INTERVAL`] until it finds some or the implicit wait timeout has passed.
    fn find(
        &self,
        root: Option<String>,
        parameters: &LocatorParameters,
    ) -> WebDriverResult<Vec<Value>> {
        let using = locator(parameters.using)?;
        let deadline = self
            .timeouts
            .implicit
            .and_then(|ms| Instant::now().checked_add(Duration::from_millis(ms)));
        loop {
            let command = Command::FindElements {
                root: root.clone(),
                using,
                value: parameters.value.clone(),
            };
            let found = match self.ask(command)? {
                Value::Array(found) => found,
                other => return Err(unexpected("Find Elements", &other)),
            };
            let remaining =
                deadline.map(|deadline| deadline.saturating_duration_since(Instant::now()));
            if !found.is_empty() || remaining == Some(Duration::ZERO) {
                return Ok(found);
            }
            thread::sleep(
                remaining.map_or(FIND_INTERVAL, |remaining| remaining.min(FIND_INTERVAL)),
            );
        }
    }

    /// <https://w3c.github.io/webdriver/#switch-to-window>: there is one window.
    fn switch_to_window(&self, handle: &str) -> WebDriverResult<WebDriverResponse> {
        if handle == self.window {
            Ok(WebDriverResponse::Void)
        } else {
            Err(WebDriverError::new(
                ErrorStatus::NoSuchWindow,
                format!("no window has the handle {handle:?}"),
            ))
        }
    }

    /// <https://w3c.github.io/webdriver/#get-window-rect>
    fn window_rect(&self) -> WebDriverResponse {
        let Rect {
            x,
            y,
            width,
            height,
        } = self.rect;
        WebDriverResponse::WindowRect(WindowRectResponse {
            x,
            y,
            width,
            height,
        })
    }

    /// <https://w3c.github.io/webdriver/#set-window-rect>: restores the window, then sets its
    /// size if both width and height are given, and its position if both x and y are (the
    /// crate has checked their ranges).
    fn set_window_rect(
        &mut self,
        parameters: &WindowRectParameters,
    ) -> WebDriverResult<WebDriverResponse> {
        self.set_minimized(false)?;
        if let (Some(width), Some(height)) = (parameters.width, parameters.height) {
            self.rect.width = width;
            self.rect.height = height;
        }
        if let (Some(x), Some(y)) = (parameters.x, parameters.y) {
            self.rect.x = x;
            self.rect.y = y;
        }
        Ok(self.window_rect())
    }

    /// <https://w3c.github.io/webdriver/#minimize-window> (`true`),
    /// <https://w3c.github.io/webdriver/#maximize-window>,
    /// <https://w3c.github.io/webdriver/#fullscreen-window>: the documents become hidden or
    /// visible (every time: the browser ignores a change to the state the documents are
    /// in); the rect stays.
    fn set_minimized(&self, minimized: bool) -> WebDriverResult<WebDriverResponse> {
        self.ask(Command::SetHidden(minimized))?;
        Ok(self.window_rect())
    }
}

/// A success with data.
fn value(data: Value) -> WebDriverResponse {
    WebDriverResponse::Generic(ValueResponse(data))
}

/// <https://w3c.github.io/webdriver/#status>
fn status(ready: bool) -> WebDriverResponse {
    let message = if ready {
        "jsprof is ready for a new session"
    } else {
        "jsprof has a session: it runs one at a time"
    };
    value(json!({ "ready": ready, "message": message }))
}

/// <https://w3c.github.io/webdriver/#switch-to-frame>'s id.
fn frame(id: FrameId) -> Frame {
    match id {
        FrameId::Top => Frame::Top,
        FrameId::Short(index) => Frame::Index(index),
        FrameId::Element(element) => Frame::Element(element.0),
    }
}

/// The browser's locator for a location strategy
/// (<https://w3c.github.io/webdriver/#locator-strategies>).
fn locator(strategy: LocatorStrategy) -> WebDriverResult<Locator> {
    match strategy {
        LocatorStrategy::CSSSelector => Ok(Locator::Css),
        LocatorStrategy::TagName => Ok(Locator::TagName),
        LocatorStrategy::LinkText => Ok(Locator::LinkText),
        LocatorStrategy::PartialLinkText => Ok(Locator::PartialLinkText),
        LocatorStrategy::XPath => {
            Err(WebDriverError::new(
                ErrorStatus::UnsupportedOperation,
                format!(
                    "jsprof does not support the {} location strategy: use css selector, tag name or link text",
                    strategy_name(strategy)
                ),
            ))
        }
    }
}

/// A location strategy's name in the spec.
fn strategy_name(strategy: LocatorStrategy) -> &'static str {
    match strategy {
        LocatorStrategy::CSSSelector => "css selector",
        LocatorStrategy::LinkText => "link text",
        LocatorStrategy::PartialLinkText => "partial link text",
        LocatorStrategy::TagName => "tag name",
        LocatorStrategy::XPath => "xpath",
    }
}

/// The browser answered `command` with a value of the wrong type.
fn unexpected(command: &str, answer: &Value) -> WebDriverError {
    WebDriverError::new(
        ErrorStatus::UnknownError,
        format!("the browser answered {command} with {answer}"),
    )
}

/// The error of a command jsprof does not support, naming it.
fn unsupported(command: &WebDriverCommand<Extension>) -> WebDriverError {
    let debug = format!("{command:?}");
    let name = debug.split(['(', ' ', '{']).next().unwrap_or(&debug);
    let why = match command {
        WebDriverCommand::TakeScreenshot
        | WebDriverCommand::TakeElementScreenshot(_)
        | WebDriverCommand::Print(_)
        | WebDriverCommand::GetElementRect(_)
        | WebDriverCommand::IsDisplayed(_)
        | WebDriverCommand::GetCSSValue(..) => ": the engine does not render",
        WebDriverCommand::NewWindow(_) | WebDriverCommand::CloseWindow => {
            ": there is one window, for the session's life"
        }
        _ => "",
    };
    WebDriverError::new(
        ErrorStatus::UnsupportedOperation,
        format!("jsprof does not support the {name} command{why}"),
    )
}
