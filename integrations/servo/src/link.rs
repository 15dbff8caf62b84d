//! `-M`: what jsprof-servo's browser process and each of Servo's content processes say to
//! each other beside Servo's own ipc-channels. Servo spawns a content process itself (the
//! same executable, `--content-process TOKEN`, the browser's environment inherited) and
//! gives the embedder no channel to it, so:
//! - the configuration travels in the environment variable [`SETUP_ENV`] (a [`Setup`] in
//!   JSON), set before Servo starts;
//! - the rest on a Unix stream socket the browser listens on under a Linux abstract name
//!   (nothing left on disk), as newline-delimited JSON: the content says [`ToBrowser::Hello`]
//!   with the setup's nonce, then answers the browser's requests ([`ToContent`]), and says
//!   [`ToBrowser::Bye`] with its last [`Report`] when Servo ends it. A connection that
//!   ends without a `Bye` is a content process that crashed.

use std::io::{self, Write};

use jsprof_profiler::ProfilerTrace;
use serde::{Deserialize, Serialize};
use servo_base::id::BrowsingContextId;

/// The environment variable that carries the [`Setup`] to the content processes.
pub const SETUP_ENV: &str = "JSPROF_SERVO_CONTENT";

/// What a content process needs from the browser's command line.
#[derive(Debug, Serialize, Deserialize)]
pub struct Setup {
    /// The browser's socket: a Linux abstract name.
    pub socket: String,
    /// Said back in `Hello`: a connection without it is not one of ours.
    pub nonce: String,
    /// The browser's pid: a content process whose parent is another has lost its browser.
    pub browser_pid: u32,
    /// jsprof's `--pref NAME=VALUE` arguments (Servo's travel in Servo's own preferences).
    pub prefs: Vec<String>,
    /// `--trace-out`: keep every trace, for the browser to write.
    pub trace_sink: bool,
    /// `--profile-out`'s sample interval (ms), if profiling from outside.
    pub profile_interval: Option<f64>,
}

/// A request of the browser's, with the id its answer carries.
#[derive(Debug, Serialize, Deserialize)]
pub struct ToContent {
    pub id: u64,
    pub request: Request,
}

#[derive(Debug, Serialize, Deserialize)]
pub enum Request {
    /// The work the process still has (`script::jsprof::pending_stops`, `pending_work`).
    Status,
    /// WebDriver's Force Sample for the sessions of `context` in this process.
    ForceSample {
        context: BrowsingContextId,
        timeout_ms: u64,
    },
    /// The end of the run: stop every session and give the traces and the sampler's stats.
    Finish { limit_ms: u64 },
}

#[derive(Debug, Serialize, Deserialize)]
pub enum ToBrowser {
    /// The first line of a connection.
    Hello {
        pid: u32,
        nonce: String,
    },
    Answer {
        id: u64,
        answer: Answer,
    },
    /// Servo ended the process (its last page closed or Servo shut down): what it still had.
    Bye(Report),
}

#[derive(Debug, Serialize, Deserialize)]
pub enum Answer {
    Status {
        stops: usize,
        timers: usize,
        busy_workers: usize,
    },
    /// Force Sample: whether the samples were recorded in time.
    Sampled(bool),
    Finished(Report),
}

/// What a content process gives back at its end (or the run's).
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Report {
    pub pid: u32,
    /// How long the process had run, in ms.
    pub run_ms: f64,
    /// The page's traces (`--trace-out`): each `stop()`'s, then those of the profilers
    /// still running.
    pub traces: Vec<ProfilerTrace>,
    /// `--profile-out`: one trace a top-level document of the process.
    pub profiles: Vec<ProfilerTrace>,
    /// The process's sampler thread (`SamplerStats::to_json`), if it ever ran.
    pub sampler: Option<serde_json::Value>,
}

/// Writes `message` as one line.
pub fn send<T: Serialize>(out: &mut impl Write, message: &T) -> io::Result<()> {
    let mut line = serde_json::to_vec(message).map_err(io::Error::other)?;
    line.push(b'\n');
    out.write_all(&line)?;
    out.flush()
}
