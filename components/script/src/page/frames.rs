//! iframes: a child document's window, created when its response arrives.

use jsprof_net::{LoadError, Response};
use jsprof_profiler::Nanos;
use jsprof_script_bindings::runtime::Arg;
use jsprof_script_bindings::runtime::WindowId;

use crate::document;

use super::scripts::{join_src, ready_from, script_request};
use super::{Doc, Page, Ready, PRELUDE};

impl Page {
    /// Creates the child browsing context of `parent`'s iframe number `index` from its
    /// document's response, runs the document's scripts, and fires `load` at the iframe.
    /// (A child document's scripts run in document order, fetched one after the other on
    /// the event loop's thread: a simplification of the parser-driven model of the top
    /// document.)
    pub(super) fn load_frame(
        &mut self,
        parent: WindowId,
        index: u32,
        started: (Nanos, f64),
        sandboxed: bool,
        result: Result<Response, LoadError>,
    ) {
        if self
            .host
            .discarded_frames
            .borrow()
            .contains(&(parent, index))
            || self.host.discarded.borrow().contains(&parent)
        {
            return; // Its iframe left the document while it loaded.
        }
        let response = match result {
            Ok(r) if r.ok() => r,
            Ok(r) => {
                self.host.print(
                    parent,
                    true,
                    &format!("jsprof: iframe {}: HTTP status {}", r.url, r.status),
                );
                self.js
                    .call_hook(parent, c"frameLoaded", &[Arg::Num(f64::from(index))]);
                return;
            }
            Err(e) => {
                self.host
                    .print(parent, true, &format!("jsprof: iframe: {e}"));
                self.js
                    .call_hook(parent, c"frameLoaded", &[Arg::Num(f64::from(index))]);
                return;
            }
        };
        let limits = self.host.options.prefs.document_limits();
        // The child's window is the next one: its frame.
        let frame = self.host.docs.borrow().len() as u32 + 1;
        let parsing =
            jsprof_scope::record::begin(frame, || jsprof_scope::Details::DocumentParsing {
                url: response.url.to_string(),
            });
        let parsed = document::parse(&response.text(), &limits, self.deadline);
        drop(parsing);
        let doc = match parsed {
            Ok(doc) => doc,
            Err(e) => {
                self.host.print(
                    parent,
                    true,
                    &format!("jsprof: iframe {}: {e}", response.url),
                );
                self.js
                    .call_hook(parent, c"frameLoaded", &[Arg::Num(f64::from(index))]);
                return;
            }
        };
        let url = response.url.clone();
        // The window's document comes first: the prelude asks the host about it as it runs.
        self.host
            .docs
            .borrow_mut()
            .push(Doc::of(&response, started, sandboxed));
        let (init, origin) = {
            let docs = self.host.docs.borrow();
            let index = docs.len() - 1;
            let d = &docs[index];
            (
                self.host.init_json(&doc, d, WindowId(index)),
                d.origin.clone(),
            )
        };
        let child = match self.js.new_window(PRELUDE, &init, origin) {
            Ok(w) => w,
            Err(e) => {
                // Windows and documents share indices: the failed window's document goes.
                self.host.docs.borrow_mut().pop();
                self.host
                    .print(parent, true, &format!("jsprof: iframe {url}: {e}"));
                self.js
                    .call_hook(parent, c"frameLoaded", &[Arg::Num(f64::from(index))]);
                return;
            }
        };
        {
            let mut docs = self.host.docs.borrow_mut();
            docs[child.index()].parent = Some(parent);
            let frames = &mut docs[parent.index()].frames;
            if frames.len() <= index as usize {
                frames.resize(index as usize + 1, None);
            }
            frames[index as usize] = Some(child);
        }
        if let Some(recorder) = jsprof_scope::record::current() {
            recorder.set_frame(jsprof_scope::FrameInfo {
                frame_id: child.index() as u32 + 1,
                parent: Some(parent.index() as u32 + 1),
                url: url.to_string(),
            });
        }
        self.js.attach_frame(parent, index, child);
        self.js.call_hook(child, c"startFrames", &[]);
        for (i, s) in doc.scripts.iter().enumerate() {
            if s.index == usize::MAX || self.expired() || !self.js.is_live(child) {
                continue;
            }
            let ready = match &s.src {
                None => Ok(Ready {
                    source: s.text.clone(),
                    url: url.to_string(),
                    line: s.line,
                    column: s.column,
                    muted: false,
                }),
                Some(src) => {
                    let origin = self.host.doc(child).origin.clone();
                    let fetched = join_src(&url, src).and_then(|u| {
                        self.host.options.loader.fetch_request(&script_request(
                            u,
                            &origin,
                            s.kind,
                            s.crossorigin.as_deref(),
                        ))
                    });
                    ready_from(s, fetched)
                }
            };
            self.execute_or_fail(child, i, s, ready);
        }
        for (hook, arg) in [
            (c"setReadyState", Some("interactive")),
            (c"fireDOMContentLoaded", None),
            (c"setReadyState", Some("complete")),
            (c"fireLoad", None),
        ] {
            let args: Vec<Arg> = arg.into_iter().map(Arg::Str).collect();
            self.js.call_hook(child, hook, &args);
            self.checkpoint();
        }
        self.js
            .call_hook(parent, c"frameLoaded", &[Arg::Num(f64::from(index))]);
        self.checkpoint();
    }
}
