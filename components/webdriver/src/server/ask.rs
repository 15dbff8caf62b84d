//! Handing a command to the browser and waiting, within a limit, for its reply.

use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

use serde_json::Value;
use webdriver::error::{ErrorStatus, WebDriverError, WebDriverResult};

use crate::{Browser, Command, Error, ErrorKind};

/// How long to wait for the browser to answer a command other than navigation and script.
const BROWSER_TIMEOUT: Duration = Duration::from_secs(60);

/// How long a command waits for the browser, and which error it gives when that runs out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Limit {
    /// [`BROWSER_TIMEOUT`], then `timeout`.
    Browser,
    /// The session's script timeout in ms (`None`: indefinitely), then `script timeout`.
    Script(Option<u64>),
    /// The session's page load timeout in ms (`None`: indefinitely), then `timeout`.
    PageLoad(Option<u64>),
}

impl Limit {
    fn duration(self) -> Option<Duration> {
        match self {
            Limit::Browser => Some(BROWSER_TIMEOUT),
            Limit::Script(ms) | Limit::PageLoad(ms) => ms.map(Duration::from_millis),
        }
    }

    fn error(self) -> WebDriverError {
        match self {
            Limit::Browser => WebDriverError::new(
                ErrorStatus::Timeout,
                format!(
                    "the browser did not answer within {} s: is a script running?",
                    BROWSER_TIMEOUT.as_secs()
                ),
            ),
            Limit::Script(ms) => WebDriverError::new(
                ErrorStatus::ScriptTimeout,
                format!("the script did not finish within {} ms", ms.unwrap_or(0)),
            ),
            Limit::PageLoad(ms) => WebDriverError::new(
                ErrorStatus::Timeout,
                format!("the page did not load within {} ms", ms.unwrap_or(0)),
            ),
        }
    }
}

/// Sends `command` to `browser` and waits for its reply, at most `limit`. A reply that comes
/// later is dropped.
pub(super) fn ask(browser: &dyn Browser, command: Command, limit: Limit) -> WebDriverResult<Value> {
    let (sender, receiver) = mpsc::sync_channel(1);
    browser.send(
        command,
        Box::new(move |reply| {
            // The receiver is gone if the command timed out: the reply is late, and dropped.
            let _ = sender.send(reply);
        }),
    );
    let reply = match limit.duration() {
        Some(duration) => receiver
            .recv_timeout(duration)
            .map_err(|error| match error {
                RecvTimeoutError::Timeout => limit.error(),
                RecvTimeoutError::Disconnected => browser_gone(),
            }),
        None => receiver.recv().map_err(|_| browser_gone()),
    }?;
    reply.map_err(|error| webdriver_error(&error))
}

/// The browser dropped the command's responder without answering.
fn browser_gone() -> WebDriverError {
    WebDriverError::new(
        ErrorStatus::UnknownError,
        "the browser is gone: it dropped the command without answering",
    )
}

/// The browser's error as the spec's.
fn webdriver_error(error: &Error) -> WebDriverError {
    WebDriverError::new(status(error.kind), error.message.clone())
}

/// <https://w3c.github.io/webdriver/#errors>
fn status(kind: ErrorKind) -> ErrorStatus {
    match kind {
        ErrorKind::InvalidArgument => ErrorStatus::InvalidArgument,
        ErrorKind::InvalidSelector => ErrorStatus::InvalidSelector,
        ErrorKind::JavascriptError => ErrorStatus::JavascriptError,
        ErrorKind::NoSuchElement => ErrorStatus::NoSuchElement,
        ErrorKind::NoSuchFrame => ErrorStatus::NoSuchFrame,
        ErrorKind::NoSuchWindow => ErrorStatus::NoSuchWindow,
        ErrorKind::ScriptTimeout => ErrorStatus::ScriptTimeout,
        ErrorKind::StaleElementReference => ErrorStatus::StaleElementReference,
        ErrorKind::Timeout => ErrorStatus::Timeout,
        ErrorKind::UnknownError => ErrorStatus::UnknownError,
        ErrorKind::UnsupportedOperation => ErrorStatus::UnsupportedOperation,
    }
}
