//! What the browser and its contents say to each other: typed serde messages, the same
//! whether a content is a process of its own (`jsprof -M`, over ipc-channel) or a thread of
//! the browser's process (crossbeam channels); `transport.rs` carries them.
//!
//! A content runs one top-level page: the browser sends it [`ToContent::Load`], and it
//! answers with [`FromContent::Hello`], the page's lines as they come, its traces, and
//! [`FromContent::Done`] with how the run ended; then it exits. A page WebDriver drives
//! also gets the session's commands ([`ToContent::WebDriver`], answered by
//! [`FromContent::Reply`]) and may be told to stop ([`ToContent::Stop`]).
//!
//! ipc-channel serialises with postcard, which is not self-describing: what only a
//! self-describing format can read (a `serde_json::Value`, a trace's optional members)
//! crosses as JSON text ([`Json`], [`TraceJson`]).

use std::marker::PhantomData;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::PathBuf;
use std::time::Duration;

use jsprof_net::{Loader, LoaderConfig};
use jsprof_profiler::ProfilerTrace;
use jsprof_script::{Console, Prefs, RunOptions};
use jsprof_webdriver::{Command, Navigation, Reply};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// What the browser tells a content.
#[derive(Debug, Serialize, Deserialize)]
pub enum ToContent {
    /// The content's page and how to run it: the first message.
    Load(Load),
    /// A WebDriver command for the driven page, answered by [`FromContent::Reply`] with the
    /// same id.
    WebDriver { id: u64, command: Json<Command> },
    /// End the driven page now (the session ended, or the browser is shutting down): its
    /// script is stopped, its profilers too, and the content reports as at any end.
    Stop,
    /// A call of the profiler service (`--profiler-service`) for the content's window,
    /// answered by [`FromContent::ScopeReply`] with the same id.
    Scope { id: u64, call: Json<ScopeCall> },
    /// `--start-paused`: the held first load goes ahead (the service's `Continue`).
    Continue,
}

/// What the profiler service asks of a window's content (`service.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum ScopeCall {
    /// Start recording (now, or at the next navigation with `at_navigation`) and sampling
    /// every `interval` ms.
    Start { at_navigation: bool, interval: f64 },
    /// Stop at once and hand over what was recorded.
    Stop,
    /// The window's frames.
    Frames,
}

/// A content's answer to a [`ScopeCall`].
#[derive(Debug, Serialize, Deserialize)]
pub enum ScopeReply {
    Started(Result<(), String>),
    /// The recording (none if it never began: a `URL` start whose navigation never came)
    /// and the window's sampled trace with its offset (see `jsprof_script::ScopeRecording`).
    Stopped(Option<(jsprof_scope::Recording, Option<(ProfilerTrace, f64)>)>),
    Frames(Vec<jsprof_scope::FrameInfo>),
}

/// A content's page.
#[derive(Debug, Serialize, Deserialize)]
pub struct Load {
    pub url: String,
    pub config: Config,
    /// Set for a page WebDriver drives (`--webdriver`).
    pub driven: Option<Driven>,
}

/// What a driven page needs besides its URL.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct Driven {
    /// The reply id of the navigation that made this page: answered once its `load` event
    /// has fired (or with the error, if it cannot be loaded).
    pub loaded: Option<u64>,
    /// The page's number among all the browser's pages: WebDriver's element references
    /// carry it, so that one of a page navigated away from is known to be stale.
    pub generation: u64,
    /// `--start-paused`: the load waits for [`ToContent::Continue`].
    pub hold: bool,
}

/// How to run a page: what the command line said, as the content needs it.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Config {
    /// `--pref NAME=VALUE`s in order (`--hidden` among them).
    pub prefs: Vec<String>,
    /// `--timeout`, per page (each content's deadline is its own).
    pub timeout: Option<Duration>,
    /// `--certificate-path`, as the bytes of the path.
    pub certificate_path: Option<Vec<u8>>,
    pub host_overrides: Vec<String>,
    /// `--profile-interval` if `--profile-out` was given.
    pub profile_interval: Option<f64>,
    /// Keep the page's traces (for `--trace-out` or `--profile-stats`).
    pub collect_traces: bool,
    /// Send them to the browser (`--trace-out`).
    pub send_traces: bool,
    /// Send them only until the run's write deadline (a JSON `--trace-out`, written trace
    /// by trace; an export format is written whole).
    pub traces_by_deadline: bool,
    /// `--profile-stats`.
    pub stats: bool,
}

impl Config {
    /// The run's options, with `console` as its console. Fails as the command line would
    /// (a pref that does not exist, a CA file that cannot be read).
    pub fn run_options(&self, console: Console) -> Result<RunOptions, String> {
        let mut prefs = Prefs::default();
        for p in &self.prefs {
            prefs.set_from_arg(p).map_err(|e| e.to_string())?;
        }
        let loader = Loader::new(&LoaderConfig {
            certificate_path: self
                .certificate_path
                .clone()
                .map(|bytes| PathBuf::from(std::ffi::OsString::from_vec(bytes))),
            host_overrides: self.host_overrides.clone(),
            timeout: None,
        })
        .map_err(|e| e.to_string())?;
        Ok(RunOptions {
            loader,
            prefs,
            timeout: self.timeout,
            profile_interval: self.profile_interval,
            collect_traces: self.collect_traces,
            console,
        })
    }

    /// `path` as [`Config::certificate_path`] holds it.
    pub fn path_bytes(path: &std::path::Path) -> Vec<u8> {
        path.as_os_str().as_bytes().to_vec()
    }
}

/// What a content tells its browser.
#[derive(Debug, Serialize, Deserialize)]
pub enum FromContent {
    /// The content is up: the process it runs in.
    Hello { pid: u32 },
    /// A line of the page's (its console, uncaught errors, the engine's lines about it), in
    /// the order the page made them.
    Line { stream: Stream, text: String },
    /// Traces of the page's profilers for `--trace-out`, in the order they were built (a
    /// batch at a time).
    Traces(Vec<TraceJson>),
    /// The answer to [`ToContent::WebDriver`] `id`.
    Reply { id: u64, reply: Json<Reply> },
    /// The answer to [`ToContent::Scope`] `id`.
    ScopeReply { id: u64, reply: Json<ScopeReply> },
    /// The run ended: the last message.
    Done(Outcome),
}

/// [`jsprof_script::Stream`], as it crosses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Stream {
    Stdout,
    Stderr,
}

impl From<jsprof_script::Stream> for Stream {
    fn from(stream: jsprof_script::Stream) -> Stream {
        match stream {
            jsprof_script::Stream::Stdout => Stream::Stdout,
            jsprof_script::Stream::Stderr => Stream::Stderr,
        }
    }
}

/// How a content's run ended.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Outcome {
    /// The page could not be loaded (exit code 2): the message, without `jsprof: `.
    pub load_error: Option<String>,
    /// `--timeout` ended the run with work left.
    pub timed_out: bool,
    /// The process's resident memory and its limit, in bytes, if the page was stopped for it.
    pub out_of_memory: Option<(u64, u64)>,
    /// A panic caught in the engine (a bug): the run stopped there.
    pub internal_error: Option<String>,
    /// The traces that could not be built by the deadline, named by document.
    pub unbuilt: Vec<String>,
    /// Traces of `--trace-out` not sent: the write deadline passed first.
    pub traces_left_out: u64,
    /// The `--profile-out` trace.
    pub profile: Option<TraceJson>,
    /// The `--profile-stats` line (JSON).
    pub stats: Option<String>,
    /// For a driven page: the navigation that ended it.
    pub navigation: Option<Navigation>,
}

impl Outcome {
    /// The exit code this run alone gives (see `main.rs`).
    pub fn exit_code(&self) -> u8 {
        if self.load_error.is_some() {
            crate::LOAD_ERROR
        } else if self.internal_error.is_some() {
            crate::INTERNAL_ERROR
        } else if self.out_of_memory.is_some() {
            crate::OUT_OF_MEMORY
        } else {
            0
        }
    }
}

/// A trace as spec JSON, with what the browser says of it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TraceJson {
    pub json: String,
    pub samples: u64,
    pub frames: u64,
}

impl TraceJson {
    pub fn of(trace: &ProfilerTrace) -> TraceJson {
        TraceJson {
            json: trace.to_json(),
            samples: trace.samples.len() as u64,
            frames: trace.frames.len() as u64,
        }
    }

    /// The trace itself (for the export formats).
    pub fn parse(&self) -> Result<ProfilerTrace, String> {
        serde_json::from_str(&self.json).map_err(|e| format!("a content's trace is not one: {e}"))
    }
}

/// A value that crosses as JSON text.
#[derive(Serialize, Deserialize)]
#[serde(transparent, bound = "")]
pub struct Json<T> {
    text: String,
    #[serde(skip)]
    of: PhantomData<fn() -> T>,
}

impl<T: Serialize + DeserializeOwned> Json<T> {
    pub fn new(value: &T) -> Json<T> {
        Json {
            // A failure is a type that cannot be JSON (a map with non-string keys): none of
            // the protocol's.
            text: serde_json::to_string(value).unwrap_or_default(),
            of: PhantomData,
        }
    }

    pub fn get(&self) -> Result<T, String> {
        serde_json::from_str(&self.text).map_err(|e| format!("a malformed message: {e}"))
    }
}

impl<T> std::fmt::Debug for Json<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jsprof_webdriver::{Error, ErrorKind};
    use serde_json::json;

    /// `value` sent through a real ipc-channel channel (postcard, a socket) and received.
    fn across<T: Serialize + DeserializeOwned>(value: T) -> T {
        let (tx, rx) = ipc_channel::ipc::channel::<T>().unwrap();
        tx.send(value).unwrap();
        rx.recv().unwrap()
    }

    /// Every kind of message crosses, with the values only JSON can hold inside.
    #[test]
    fn messages_cross_an_ipc_channel() {
        let command = Command::Execute {
            body: "return arguments[0]".into(),
            args: vec![json!({"a": [1, null, "x"]}), json!(2.5)],
            is_async: false,
        };
        let to = ToContent::WebDriver {
            id: 7,
            command: Json::new(&command),
        };
        match across(to) {
            ToContent::WebDriver { id: 7, command: c } => assert_eq!(c.get().unwrap(), command),
            other => panic!("{other:?}"),
        }
        let reply: Reply = Err(Error::new(ErrorKind::NoSuchElement, "gone"));
        let from = FromContent::Reply {
            id: 9,
            reply: Json::new(&reply),
        };
        match across(from) {
            FromContent::Reply { id: 9, reply: r } => assert_eq!(r.get().unwrap(), reply),
            other => panic!("{other:?}"),
        }
        let ok: Reply = Ok(json!({"element-6066-11e4-a52e-4f735466cecf": "1.0.3"}));
        match across(FromContent::Reply {
            id: 1,
            reply: Json::new(&ok),
        }) {
            FromContent::Reply { reply: r, .. } => assert_eq!(r.get().unwrap(), ok),
            other => panic!("{other:?}"),
        }
        let load = ToContent::Load(Load {
            url: "file:///x.html".into(),
            config: Config {
                prefs: vec!["dom.document.hidden=true".into()],
                timeout: Some(Duration::from_millis(1500)),
                certificate_path: Some(b"/tmp/\xffca.pem".to_vec()),
                profile_interval: Some(10.0),
                ..Config::default()
            },
            driven: Some(Driven {
                loaded: Some(3),
                generation: 4,
                hold: false,
            }),
        });
        match across(load) {
            ToContent::Load(l) => {
                assert_eq!(l.config.timeout, Some(Duration::from_millis(1500)));
                assert_eq!(
                    l.config.certificate_path.as_deref(),
                    Some(&b"/tmp/\xffca.pem"[..])
                );
                assert_eq!(l.config.profile_interval, Some(10.0));
                assert_eq!(l.driven.unwrap().generation, 4);
            }
            other => panic!("{other:?}"),
        }
        let trace: ProfilerTrace = serde_json::from_str(
            r#"{"frames":[{"name":"f","resourceId":0,"line":1,"column":2}],"resources":["file:///x.js"],"samples":[{"timestamp":1.5,"stackId":0},{"timestamp":2.5}],"stacks":[{"frameId":0}]}"#,
        )
        .unwrap();
        let done = FromContent::Done(Outcome {
            out_of_memory: Some((1, 2)),
            profile: Some(TraceJson::of(&trace)),
            navigation: Some(Navigation::To("about:blank".into())),
            ..Outcome::default()
        });
        match across(done) {
            FromContent::Done(o) => {
                assert_eq!(o.exit_code(), crate::OUT_OF_MEMORY);
                assert_eq!(o.navigation, Some(Navigation::To("about:blank".into())));
                let profile = o.profile.unwrap();
                assert_eq!((profile.samples, profile.frames), (2, 1));
                assert_eq!(profile.parse().unwrap(), trace);
            }
            other => panic!("{other:?}"),
        }
    }
}
