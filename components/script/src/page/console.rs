//! Where a run's lines go: the page's console, its uncaught exceptions and unhandled
//! rejections, and the engine's lines about it (a script or frame that failed to load).
//!
//! A run prints nothing itself: every line goes to the [`Console`] of its [`RunOptions`]
//! (workers use their page's). By default that is the process's stdout and stderr; a
//! content process (`jsprof -M`) sends each line to its browser, which prints it.

use std::io::Write;
use std::sync::Arc;

/// Which of the two streams a line belongs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    /// The page's console (every method of it, `error` and `warn` too).
    Stdout,
    /// Uncaught exceptions (`reportError` too), unhandled rejections, and the engine's
    /// lines about the page.
    Stderr,
}

/// What a [`Console`] calls with each line.
type Sink = dyn Fn(Stream, &str) + Send + Sync;

/// Where a run's lines go (see the module's doc). Cheap to clone; called from the page's
/// thread and its workers' threads, in the order their lines are made on each thread.
#[derive(Clone)]
pub struct Console(Arc<Sink>);

impl Console {
    /// Lines go to `sink`.
    pub fn new(sink: impl Fn(Stream, &str) + Send + Sync + 'static) -> Console {
        Console(Arc::new(sink))
    }

    /// The process's stdout and stderr: stdout is flushed before a line goes to stderr, so
    /// that a terminal shows the two in the order they were written.
    pub fn stdio() -> Console {
        Console::new(|stream, text| match stream {
            Stream::Stdout => {
                let _ = writeln!(std::io::stdout(), "{text}");
            }
            Stream::Stderr => {
                let _ = std::io::stdout().flush();
                let _ = writeln!(std::io::stderr(), "{text}");
            }
        })
    }

    /// Prints one line (without its newline).
    pub fn print(&self, stream: Stream, text: &str) {
        (self.0)(stream, text)
    }
}

impl Default for Console {
    fn default() -> Console {
        Console::stdio()
    }
}

impl std::fmt::Debug for Console {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Console").finish_non_exhaustive()
    }
}
