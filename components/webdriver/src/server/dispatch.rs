//! The dispatcher: one thread that runs the commands one at a time, in the order they
//! arrived, and keeps the session (<https://w3c.github.io/webdriver/#sessions>).
//!
//! It follows the `webdriver` crate's own dispatcher (which its `server::start` keeps
//! private): a command for another session than the current one is `invalid session id`, a
//! second New Session is `session not created`, and a session ends with Delete Session, with
//! the last window's close, with an error that asks for it, or when the server stops.

use std::sync::mpsc;

use tokio::sync::oneshot;
use webdriver::command::{WebDriverCommand, WebDriverMessage};
use webdriver::error::{ErrorStatus, WebDriverError, WebDriverResult};
use webdriver::response::{CloseWindowResponse, WebDriverResponse};
use webdriver::server::{Session, SessionTeardownKind, WebDriverHandler};

use super::handler::Handler;
use super::Route;

/// What the HTTP side hands the dispatcher.
pub(super) enum Dispatch {
    /// A command, and where its answer goes (dropped if the client has gone).
    Command(
        WebDriverMessage<Route>,
        oneshot::Sender<WebDriverResult<WebDriverResponse>>,
    ),
    /// The server stops: the session ends (the browser is told to reset, without waiting),
    /// and the dispatcher with it.
    Quit,
}

/// The handler and the current session.
pub(super) struct Dispatcher {
    handler: Handler,
    session: Option<Session>,
}

impl Dispatcher {
    pub(super) fn new(handler: Handler) -> Dispatcher {
        Dispatcher {
            handler,
            session: None,
        }
    }

    /// Runs commands until [`Dispatch::Quit`], or until every sender is gone.
    pub(super) fn run(mut self, inbox: &mpsc::Receiver<Dispatch>) {
        while let Ok(Dispatch::Command(message, answer)) = inbox.recv() {
            let response = self.dispatch(message);
            // The client may have gone (a closed connection): its answer is dropped.
            let _ = answer.send(response);
        }
        self.teardown(SessionTeardownKind::NotDeleted);
    }

    fn dispatch(&mut self, message: WebDriverMessage<Route>) -> WebDriverResult<WebDriverResponse> {
        self.check_session(&message)?;
        let response = self.handler.handle_command(&self.session, message);
        match &response {
            Ok(WebDriverResponse::NewSession(new)) => {
                self.session = Some(Session {
                    id: new.session_id.clone(),
                });
            }
            Ok(WebDriverResponse::CloseWindow(CloseWindowResponse(handles)))
                if handles.is_empty() =>
            {
                self.teardown(SessionTeardownKind::NotDeleted);
            }
            Ok(WebDriverResponse::DeleteSession) => self.teardown(SessionTeardownKind::Deleted),
            Err(error) if error.delete_session => self.teardown(SessionTeardownKind::NotDeleted),
            _ => {}
        }
        response
    }

    /// Ends the current session, if any: the handler resets the browser unless Delete
    /// Session did.
    fn teardown(&mut self, kind: SessionTeardownKind) {
        if self.session.take().is_some() || kind == SessionTeardownKind::Deleted {
            self.handler.teardown_session(kind);
        }
    }

    /// Whether `message` may run now: its session id must be the current session's.
    fn check_session(&self, message: &WebDriverMessage<Route>) -> WebDriverResult<()> {
        match (&message.session_id, &self.session) {
            (Some(id), Some(session)) if *id != session.id => Err(WebDriverError::new(
                ErrorStatus::InvalidSessionId,
                format!("no session {id}: the current session is another"),
            )),
            // With no session, the handler answers `invalid session id` itself.
            (Some(_), _) => Ok(()),
            (None, session) => match (&message.command, session) {
                (WebDriverCommand::Status, _) | (WebDriverCommand::NewSession(_), None) => Ok(()),
                (WebDriverCommand::NewSession(_), Some(_)) => Err(WebDriverError::new(
                    ErrorStatus::SessionNotCreated,
                    "a session is already started: jsprof has one at a time",
                )),
                // Every other route names a session.
                (_, _) => Err(WebDriverError::new(
                    ErrorStatus::InvalidSessionId,
                    "a command without a session id",
                )),
            },
        }
    }
}
