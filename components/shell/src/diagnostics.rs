//! Where the process's own lines go: the one a panic makes (`jsprof: internal error: …`).
//!
//! The panic hook runs on the thread that panicked, before the panic is caught. In a
//! content process every thread is the page's, so the line goes to the browser with the
//! page's other lines, in their order ([`to_content`]). In a browser whose pages run on its
//! threads, a line from another thread than the browser's own goes through the browser's
//! event channel ([`through_events`]), behind the lines the page made before it; anywhere
//! else it is written to stderr at once.

use std::sync::OnceLock;
use std::thread::ThreadId;

use crate::protocol::{FromContent, Stream};
use crate::transport::{Event, FromContentTx};

enum Sink {
    Content(FromContentTx),
    /// The browser's event channel, for threads other than `browser`.
    Events {
        events: crossbeam_channel::Sender<Event>,
        browser: ThreadId,
    },
}

static SINK: OnceLock<Sink> = OnceLock::new();

/// This is a content process: its lines go to its browser.
pub fn to_content(tx: FromContentTx) {
    let _ = SINK.set(Sink::Content(tx));
}

/// Pages run on threads of this process, whose browser (this thread) reads `events`.
pub fn through_events(events: crossbeam_channel::Sender<Event>) {
    let _ = SINK.set(Sink::Events {
        events,
        browser: std::thread::current().id(),
    });
}

/// Writes the process's line `text`.
pub fn line(text: String) {
    match SINK.get() {
        Some(Sink::Content(tx)) => {
            let line = FromContent::Line {
                stream: Stream::Stderr,
                text: text.clone(),
            };
            if !tx.send(line) {
                eprintln!("{text}");
            }
        }
        Some(Sink::Events { events, browser }) if std::thread::current().id() != *browser => {
            if events.send(Event::Diagnostic(text.clone())).is_err() {
                eprintln!("{text}");
            }
        }
        _ => eprintln!("{text}"),
    }
}
