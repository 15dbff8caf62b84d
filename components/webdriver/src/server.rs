//! The WebDriver HTTP server: W3C WebDriver classic (<https://w3c.github.io/webdriver/>) on the
//! `webdriver` crate, which does the HTTP routes, the JSON of requests, replies and errors, the
//! session ids and the validation of capabilities. What needs the engine goes to the
//! [`Browser`] as a [`Command`](crate::Command); the rest (sessions, timeouts, the one window
//! and its rect, capability matching) lives here.
//!
//! The crate runs commands one at a time, on one thread, in the order they arrive: a command
//! waiting for the browser (a running script, a page loading) holds up the ones after it.
//! Every wait is bounded by the session's timeouts or by 60 s, except a script or page load
//! whose timeout is null (the spec's "indefinitely").

mod ask;
mod capabilities;
mod handler;
mod timeouts;

use std::fmt;
use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;

use http::Method;
use serde_json::Value;
use url::Host;
use webdriver::command::{WebDriverCommand, WebDriverExtensionCommand};
use webdriver::error::WebDriverResult;
use webdriver::httpapi::WebDriverExtensionRoute;
use webdriver::server::Listener;
use webdriver::Parameters;

use crate::Browser;
use handler::Handler;

/// Starts the WebDriver server on `127.0.0.1:port` (`port` 0: any free port, see
/// [`Server::address`]), driving `browser`.
///
/// Requests must come from this machine with a `Host` header of `localhost` or an IP address
/// (with the server's port, as the `webdriver` crate checks it), and without an `Origin`
/// header, so that web pages cannot drive the browser.
pub fn serve(port: u16, browser: Arc<dyn Browser>) -> io::Result<Server> {
    let listener = webdriver::server::start(
        SocketAddr::from((Ipv4Addr::LOCALHOST, port)),
        vec![Host::Domain("localhost".to_owned())],
        Vec::new(),
        Handler::new(browser),
        extension_routes(),
    )?;
    Ok(Server {
        address: listener.socket,
        listener: Some(listener),
    })
}

/// A running WebDriver server.
///
/// It serves until the process receives SIGINT or SIGTERM (the `webdriver` crate catches
/// both, so they no longer end the process by themselves): then it ends the session,
/// sending [`Command::Reset`](crate::Command::Reset), and stops; [`Server::wait`] returns,
/// and the caller should exit. A second signal while the session ends exits the process
/// (status 130). Dropping a `Server` does not stop it: it serves on until the process exits.
pub struct Server {
    address: SocketAddr,
    /// `None` once [`Server::wait`] took it.
    listener: Option<Listener>,
}

impl Server {
    /// The address the server listens on.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// Blocks until the server stops (see [`Server`]).
    pub fn wait(mut self) {
        // The listener's drop joins the server's threads.
        drop(self.listener.take());
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // The listener's drop would join threads that only end on a signal: detach them.
        if let Some(listener) = self.listener.take() {
            std::mem::forget(listener);
        }
    }
}

impl fmt::Debug for Server {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Server")
            .field("address", &self.address)
            .finish_non_exhaustive()
    }
}

/// The extension commands' routes.
fn extension_routes() -> Vec<(Method, &'static str, Route)> {
    vec![(
        Method::POST,
        "/session/{sessionId}/forcesample",
        Route::ForceSample,
    )]
}

/// jsprof's extension routes.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Route {
    /// The JS Self-Profiling API's Force Sample
    /// (<https://wicg.github.io/js-self-profiling/#automation>).
    ForceSample,
}

impl WebDriverExtensionRoute for Route {
    type Command = Extension;

    fn command(&self, _: &Parameters, _: &Value) -> WebDriverResult<WebDriverCommand<Extension>> {
        Ok(WebDriverCommand::Extension(match self {
            Route::ForceSample => Extension::ForceSample,
        }))
    }
}

/// jsprof's extension commands.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Extension {
    /// See [`Route::ForceSample`].
    ForceSample,
}

impl WebDriverExtensionCommand for Extension {
    fn parameters_json(&self) -> Option<Value> {
        None
    }
}
