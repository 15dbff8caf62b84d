//! The WebDriver HTTP server: W3C WebDriver classic (<https://w3c.github.io/webdriver/>) on the
//! `webdriver` crate, whose routes, request parsers, replies, errors and capability types it
//! uses. The HTTP serving is ours ([`http`], on warp and tokio as the crate's own): it answers
//! malformed requests as the spec says and leaves signals to the embedder. What needs the
//! engine goes to the [`Browser`] as a [`Command`](crate::Command); the rest (sessions,
//! timeouts, the one window and its rect, capability matching) lives here.
//!
//! Commands run one at a time, on one thread ([`dispatch`]), in the order they arrive: a
//! command waiting for the browser (a running script, a page loading) holds up the ones after
//! it. Every wait is bounded by the session's timeouts or by 60 s, except a script or page
//! load whose timeout is null (the spec's "indefinitely").

mod ask;
mod capabilities;
mod dispatch;
mod handler;
mod http;
mod timeouts;

use std::fmt;
use std::io;
use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::sync::{mpsc, Arc, Mutex};
use std::thread;

use ::http::{HeaderMap, Method};
use serde_json::Value;
use tokio::sync::oneshot;
use warp::Filter;
use webdriver::command::{WebDriverCommand, WebDriverExtensionCommand};
use webdriver::error::WebDriverResult;
use webdriver::httpapi::WebDriverExtensionRoute;
use webdriver::Parameters;

use crate::Browser;
use dispatch::{Dispatch, Dispatcher};
use handler::Handler;

/// Starts the WebDriver server on `127.0.0.1:port` (`port` 0: any free port, see
/// [`Server::address`]), driving `browser`. The port accepts connections when this returns.
///
/// Requests must come from this machine with a `Host` header of `localhost` or an IP address
/// (with the server's port), and without an `Origin` header, so that web pages cannot drive
/// the browser.
pub fn serve(port: u16, browser: Arc<dyn Browser>) -> io::Result<Server> {
    let listener = TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, port)))?;
    listener.set_nonblocking(true)?;
    let address = listener.local_addr()?;
    let (dispatcher, inbox) = mpsc::channel();
    let handler = Handler::new(browser);
    thread::Builder::new()
        .name("webdriver dispatcher".into())
        .spawn(move || Dispatcher::new(handler).run(&inbox))?;
    let front = Arc::new(http::Http::new(address, dispatcher.clone()));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()?;
    let (stop, stopped) = oneshot::channel::<()>();
    thread::Builder::new()
        .name("webdriver server".into())
        .spawn(move || {
            runtime.block_on(async move {
                let listener = match tokio::net::TcpListener::from_std(listener) {
                    Ok(listener) => listener,
                    Err(e) => return log::error!("the WebDriver server cannot listen: {e}"),
                };
                let routes = warp::method()
                    .and(warp::path::full())
                    .and(warp::header::headers_cloned())
                    .and(warp::body::bytes())
                    .then(
                        move |method: Method,
                              path: warp::path::FullPath,
                              headers: HeaderMap,
                              body: bytes::Bytes| {
                            let front = front.clone();
                            async move {
                                let (status, json) =
                                    front.answer(&method, path.as_str(), &headers, &body).await;
                                let mut reply = warp::reply::Response::new(json.into());
                                *reply.status_mut() = status;
                                for (name, value) in http::RESPONSE_HEADERS {
                                    reply
                                        .headers_mut()
                                        .insert(name, ::http::HeaderValue::from_static(value));
                                }
                                reply
                            }
                        },
                    );
                warp::serve(routes)
                    .incoming(listener)
                    .graceful(async move {
                        let _ = stopped.await;
                    })
                    .run()
                    .await;
            });
        })?;
    Ok(Server {
        address,
        stop: Mutex::new(Some((stop, dispatcher))),
    })
}

/// A running WebDriver server. It serves until [`Server::stop`] or its drop.
pub struct Server {
    address: SocketAddr,
    /// Taken by the first stop.
    stop: Mutex<Option<(oneshot::Sender<()>, mpsc::Sender<Dispatch>)>>,
}

impl Server {
    /// The address the server listens on.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// Stops the server, without waiting: it no longer accepts connections, the session
    /// ends after the command running now (the browser is sent
    /// [`Command::Reset`](crate::Command::Reset), not waited for), and commands after it
    /// are answered `unknown error`.
    pub fn stop(&self) {
        let taken = self.stop.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some((http, dispatcher)) = taken {
            let _ = dispatcher.send(Dispatch::Quit);
            let _ = http.send(());
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
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
