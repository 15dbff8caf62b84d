//! The WebDriver commands on a driven page's event loop (see `browser.rs` for the browser
//! around it): navigation, the current browsing context and its frames, the page's
//! visibility, and the rest handed to the prelude's `webdriver` hook
//! (`prelude/13-webdriver.js`) in the current browsing context's window.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use jsprof_net::Url;
use jsprof_script_bindings::runtime::Arg;
use jsprof_script_bindings::runtime::WindowId;
use jsprof_webdriver::{Command, Error, ErrorKind, Frame, Navigation, Reply, Responder};
use serde_json::{json, Value};

use crate::Browser;

use super::Page;

/// A page's answer to a command it handed a window (`host.webdriverReply`).
pub(super) fn reply_of(error: &str, value: &str) -> Reply {
    if error.is_empty() {
        return serde_json::from_str(value).map_err(|e| {
            Error::new(
                ErrorKind::UnknownError,
                format!("the page's answer is not JSON: {e}"),
            )
        });
    }
    let kind = match error {
        "invalid argument" => ErrorKind::InvalidArgument,
        "invalid selector" => ErrorKind::InvalidSelector,
        "no such element" => ErrorKind::NoSuchElement,
        "no such frame" => ErrorKind::NoSuchFrame,
        "stale element reference" => ErrorKind::StaleElementReference,
        "unsupported operation" => ErrorKind::UnsupportedOperation,
        "javascript error" => ErrorKind::JavascriptError,
        _ => ErrorKind::UnknownError,
    };
    Err(Error::new(kind, value))
}

impl Page {
    /// A WebDriver command for this page, on its loop.
    pub(super) fn webdriver(&mut self, command: Command, respond: Responder) {
        let Some(browser) = self.browser.as_ref().map(|b| Browser {
            shared: b.shared.clone(),
        }) else {
            respond(Err(Error::new(
                ErrorKind::NoSuchWindow,
                "no page is being driven",
            )));
            return;
        };
        let current = self.current_window();
        match command {
            Command::Navigate(navigation) => {
                if let Navigation::To(url) = &navigation {
                    if let Err(e) = Url::parse(url) {
                        let message = format!("{url}: not a URL: {e}");
                        respond(Err(Error::new(ErrorKind::InvalidArgument, message)));
                        return;
                    }
                }
                self.navigate(navigation, respond);
            }
            Command::CurrentUrl => respond(Ok(json!(self.host.doc(WindowId(0)).url.as_str()))),
            Command::Title => self.in_window(WindowId(0), "title", json!([]), respond),
            Command::PageSource => self.in_window(current, "source", json!([]), respond),
            Command::Execute {
                body,
                args,
                is_async,
            } => self.in_window(current, "execute", json!([body, args, is_async]), respond),
            Command::FindElements { root, using, value } => {
                let using = match using {
                    jsprof_webdriver::Locator::Css => "css selector",
                    jsprof_webdriver::Locator::TagName => "tag name",
                    jsprof_webdriver::Locator::LinkText => "link text",
                    jsprof_webdriver::Locator::PartialLinkText => "partial link text",
                };
                self.in_window(current, "find", json!([root, using, value]), respond)
            }
            Command::ElementText(id) => self.in_window(current, "text", json!([id]), respond),
            Command::ElementAttribute(id, name) => {
                self.in_window(current, "attribute", json!([id, name]), respond)
            }
            Command::ElementProperty(id, name) => {
                self.in_window(current, "property", json!([id, name]), respond)
            }
            Command::ElementTagName(id) => self.in_window(current, "tagName", json!([id]), respond),
            Command::ElementClick(id) => self.in_window(current, "click", json!([id]), respond),
            Command::SwitchToFrame(frame) => respond(self.switch_to_frame(current, frame)),
            Command::SwitchToParentFrame => {
                let parent = self
                    .host
                    .docs
                    .borrow()
                    .get(current.index())
                    .and_then(|d| d.parent);
                self.set_current(parent.unwrap_or(current));
                respond(Ok(Value::Null));
            }
            Command::SetHidden(hidden) => {
                // The server's thread changed the state and the sessions already
                // (`Browser::set_hidden`); the documents hear of each change in turn.
                self.update_visibility(hidden);
                respond(Ok(Value::Null));
            }
            // Served by the browser on the server's thread; here only if one was queued.
            command @ (Command::Reset | Command::ForceSample) => {
                jsprof_webdriver::Browser::send(&browser, command, respond)
            }
        }
    }

    /// Ends this page for `navigation`, which is answered when the next page has loaded.
    fn navigate(&mut self, navigation: Navigation, respond: Responder) {
        if let Some(browser) = &mut self.browser {
            browser.end = Some((navigation, respond));
        }
        self.host.closed.store(true, Ordering::Release);
    }

    fn current_window(&self) -> WindowId {
        WindowId(
            self.browser
                .as_ref()
                .map_or(0, |b| b.current.load(Ordering::Acquire)),
        )
    }

    fn set_current(&mut self, window: WindowId) {
        if let Some(browser) = &self.browser {
            browser.current.store(window.index(), Ordering::Release);
        }
    }

    fn window_open(&self, window: WindowId) -> bool {
        window.index() < self.host.docs.borrow().len()
            && !self.host.discarded.borrow().contains(&window)
    }

    /// Switch To Frame (<https://w3c.github.io/webdriver/#switch-to-frame>).
    fn switch_to_frame(&mut self, current: WindowId, frame: Frame) -> Reply {
        let no_frame = || Error::new(ErrorKind::NoSuchFrame, "no such frame");
        let window = match frame {
            Frame::Top => WindowId(0),
            Frame::Index(n) => self
                .host
                .docs
                .borrow()
                .get(current.index())
                .and_then(|d| d.frames.get(usize::from(n)).copied().flatten())
                .ok_or_else(no_frame)?,
            Frame::Element(id) => {
                let reply = self.in_window_now(current, "frameWindow", json!([id]))?;
                reply
                    .as_u64()
                    .map(|w| WindowId(w as usize))
                    .ok_or_else(no_frame)?
            }
        };
        if !self.window_open(window) {
            return Err(no_frame());
        }
        self.set_current(window);
        Ok(Value::Null)
    }

    /// Hands command `name` to window `window`'s prelude (`hooks.webdriver`); `respond`
    /// gets its answer, now or (Execute Async Script) later.
    fn in_window(&mut self, window: WindowId, name: &str, args: Value, respond: Responder) {
        if !self.window_open(window) {
            respond(Err(Error::new(
                ErrorKind::NoSuchWindow,
                "the current browsing context is no longer open",
            )));
            return;
        }
        let id = self.host.webdriver_next.get();
        self.host.webdriver_next.set(id.wrapping_add(1));
        self.host.webdriver.borrow_mut().insert(id, respond);
        let args = args.to_string();
        let called = self.js.call_hook(
            window,
            c"webdriver",
            &[Arg::Num(f64::from(id)), Arg::Str(name), Arg::Str(&args)],
        );
        self.checkpoint();
        if !called {
            if let Some(respond) = self.host.webdriver.borrow_mut().remove(&id) {
                respond(Err(Error::new(
                    ErrorKind::UnknownError,
                    "the window could not run the command",
                )));
            }
        }
    }

    /// [`in_window`](Self::in_window) for a command answered synchronously.
    fn in_window_now(&mut self, window: WindowId, name: &str, args: Value) -> Reply {
        let answer: Arc<Mutex<Option<Reply>>> = Arc::default();
        let slot = answer.clone();
        self.in_window(
            window,
            name,
            args,
            Box::new(move |reply| {
                *slot.lock().unwrap_or_else(|e| e.into_inner()) = Some(reply);
            }),
        );
        let reply = answer.lock().unwrap_or_else(|e| e.into_inner()).take();
        reply.unwrap_or_else(|| Err(Error::new(ErrorKind::UnknownError, "no answer")))
    }

    /// Each open document's visibility becomes `hidden`'s, with `visibilitychange` where it
    /// changes (<https://html.spec.whatwg.org/#update-the-visibility-state>; the sessions
    /// were paused or resumed by `Browser::set_hidden`).
    fn update_visibility(&mut self, hidden: bool) {
        let windows = self.host.docs.borrow().len();
        let open: Vec<WindowId> = (0..windows)
            .map(WindowId)
            .filter(|&w| self.window_open(w))
            .collect();
        for window in open {
            self.js.call_hook(
                window,
                c"setVisibility",
                &[Arg::Num(f64::from(u8::from(hidden)))],
            );
            self.checkpoint();
        }
    }
}
