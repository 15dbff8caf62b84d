//! The service's JSON protocol: one message a line.
//!
//! A request is `{"command": "StartProfiler" | 1, "tag": N, "payload": {...}}`; a response
//! `{"tag": N, "status": "OK" | "BAD_REQUEST" | "INTERNAL_ERROR", "payload": {...}}`.
//! Commands, modes and event types are given by Scope's number or name; payload fields are
//! Scope's names in camelCase, and a field the command does not have is refused.
//! [`decode`] never panics, whatever the line.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::event::{EventType, NumberOrName};
use crate::record::StartMode;
use crate::timeline::{Interval, Mode, Query};

/// The commands, with their numbers (1–4 are `Profiler.1.1`'s; the rest are this service's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommandName {
    StartProfiler = 1,
    StopProfiler = 2,
    GetEvents = 3,
    ReleaseSession = 4,
    GetTrace = 5,
    ListWindows = 6,
    Continue = 7,
    Quit = 8,
}

impl CommandName {
    pub const ALL: [CommandName; 8] = [
        CommandName::StartProfiler,
        CommandName::StopProfiler,
        CommandName::GetEvents,
        CommandName::ReleaseSession,
        CommandName::GetTrace,
        CommandName::ListWindows,
        CommandName::Continue,
        CommandName::Quit,
    ];

    pub fn name(self) -> &'static str {
        match self {
            CommandName::StartProfiler => "StartProfiler",
            CommandName::StopProfiler => "StopProfiler",
            CommandName::GetEvents => "GetEvents",
            CommandName::ReleaseSession => "ReleaseSession",
            CommandName::GetTrace => "GetTrace",
            CommandName::ListWindows => "ListWindows",
            CommandName::Continue => "Continue",
            CommandName::Quit => "Quit",
        }
    }

    fn parse(v: &NumberOrName) -> Option<CommandName> {
        CommandName::ALL.into_iter().find(|c| match v {
            NumberOrName::Number(n) => *c as u64 == *n,
            NumberOrName::Name(s) => c.name() == s,
        })
    }
}

/// A decoded request.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    pub tag: u64,
    pub command: Command,
}

/// A command with its arguments.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    StartProfiler {
        window_id: u32,
        start_mode: StartMode,
        /// The sampling interval of the window's profiler session, in ms.
        interval: f64,
    },
    StopProfiler {
        session_id: u32,
    },
    GetEvents {
        session_id: u32,
        timeline_id: u32,
        query: Query,
        /// Attach the sampled stacks to evaluation events.
        stacks: bool,
    },
    ReleaseSession {
        session_id: u32,
    },
    GetTrace {
        session_id: u32,
    },
    ListWindows,
    Continue,
    Quit,
}

/// The default sampling interval of a session, in ms.
pub const DEFAULT_INTERVAL: f64 = 10.0;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct StartArg {
    #[serde(rename = "windowID")]
    window_id: u32,
    #[serde(default)]
    start_mode: Option<NumberOrName>,
    #[serde(default)]
    interval: Option<f64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SessionArg {
    #[serde(rename = "sessionID")]
    session_id: u32,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct GetEventsArg {
    #[serde(rename = "sessionID")]
    session_id: u32,
    #[serde(rename = "timelineID")]
    timeline_id: u32,
    mode: NumberOrName,
    #[serde(default, rename = "eventID")]
    event_id: Option<u32>,
    #[serde(default)]
    max_depth: Option<u32>,
    #[serde(default)]
    event_type_list: Option<Vec<EventType>>,
    #[serde(default)]
    interval: Option<Interval>,
    #[serde(default)]
    stacks: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Empty {}

/// A line that is not a request the service can carry out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejected {
    /// The request's tag, if it had one.
    pub tag: Option<u64>,
    /// Whether the line was a JSON request at all (an object with a `command`): a
    /// connection whose first line is not is closed without an answer.
    pub is_request: bool,
    pub message: String,
}

/// Decodes one line.
pub fn decode(line: &str) -> Result<Request, Rejected> {
    let not_request = |message: String| Rejected {
        tag: None,
        is_request: false,
        message,
    };
    let value: Value =
        serde_json::from_str(line).map_err(|e| not_request(format!("not JSON: {e}")))?;
    let Value::Object(mut object) = value else {
        return Err(not_request("a request is a JSON object".into()));
    };
    let Some(command) = object.remove("command") else {
        return Err(not_request("a request has a \"command\"".into()));
    };
    let tag = object.get("tag").and_then(Value::as_u64);
    let bad = |message: String| Rejected {
        tag,
        is_request: true,
        message,
    };
    let Some(tag) = tag else {
        return Err(bad("\"tag\" must be a non-negative integer".into()));
    };
    object.remove("tag");
    let payload = object.remove("payload").unwrap_or(Value::Null);
    if let Some(key) = object.keys().next() {
        return Err(bad(format!("unknown member {key:?}")));
    }
    let name = serde_json::from_value::<NumberOrName>(command)
        .ok()
        .and_then(|c| CommandName::parse(&c).map(Some).ok_or(c).ok().flatten());
    let Some(name) = name else {
        return Err(bad("unknown command".into()));
    };
    let arg = |what: &str| -> Result<Value, Rejected> {
        match payload.clone() {
            Value::Null => Ok(Value::Object(Default::default())),
            Value::Object(o) => Ok(Value::Object(o)),
            _ => Err(bad(format!("the payload of {what} is an object"))),
        }
    };
    fn parse<T: DeserializeOwned>(v: Value, name: CommandName) -> Result<T, String> {
        serde_json::from_value(v).map_err(|e| format!("{}: {e}", name.name()))
    }
    let command = (|| -> Result<Command, String> {
        let payload = arg(name.name()).map_err(|r| r.message)?;
        Ok(match name {
            CommandName::StartProfiler => {
                let a: StartArg = parse(payload, name)?;
                let start_mode = match a.start_mode {
                    None => StartMode::Immediate,
                    Some(m) => match &m {
                        NumberOrName::Number(1) => StartMode::Immediate,
                        NumberOrName::Number(2) => StartMode::Url,
                        NumberOrName::Name(s) if s == "IMMEDIATE" => StartMode::Immediate,
                        NumberOrName::Name(s) if s == "URL" => StartMode::Url,
                        _ => return Err(format!("StartProfiler: unknown startMode {m}")),
                    },
                };
                let interval = a.interval.unwrap_or(DEFAULT_INTERVAL);
                if !(interval.is_finite() && interval >= 0.0) {
                    return Err("StartProfiler: interval is a number of ms, 0 or more".into());
                }
                Command::StartProfiler {
                    window_id: a.window_id,
                    start_mode,
                    interval,
                }
            }
            CommandName::StopProfiler => Command::StopProfiler {
                session_id: parse::<SessionArg>(payload, name)?.session_id,
            },
            CommandName::ReleaseSession => Command::ReleaseSession {
                session_id: parse::<SessionArg>(payload, name)?.session_id,
            },
            CommandName::GetTrace => Command::GetTrace {
                session_id: parse::<SessionArg>(payload, name)?.session_id,
            },
            CommandName::GetEvents => {
                let a: GetEventsArg = parse(payload, name)?;
                let mode = Mode::ALL
                    .into_iter()
                    .find(|m| match &a.mode {
                        NumberOrName::Number(n) => *m as u64 == *n,
                        NumberOrName::Name(s) => m.name() == s,
                    })
                    .ok_or_else(|| format!("GetEvents: unknown mode {}", a.mode))?;
                if let Some(iv) = a.interval {
                    if !(iv.start.is_finite() && iv.end.is_finite() && iv.start <= iv.end) {
                        return Err("GetEvents: interval needs start <= end".into());
                    }
                }
                Command::GetEvents {
                    session_id: a.session_id,
                    timeline_id: a.timeline_id,
                    query: Query {
                        mode: Some(mode),
                        event_id: a.event_id,
                        max_depth: a.max_depth,
                        types: a.event_type_list,
                        interval: a.interval,
                    },
                    stacks: a.stacks,
                }
            }
            CommandName::ListWindows => {
                parse::<Empty>(payload, name)?;
                Command::ListWindows
            }
            CommandName::Continue => {
                parse::<Empty>(payload, name)?;
                Command::Continue
            }
            CommandName::Quit => {
                parse::<Empty>(payload, name)?;
                Command::Quit
            }
        })
    })()
    .map_err(bad)?;
    Ok(Request { tag, command })
}

/// A response's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Status {
    Ok,
    BadRequest,
    InternalError,
}

/// A response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Response {
    /// The request's tag (null when the line had none).
    pub tag: Option<u64>,
    pub status: Status,
    pub payload: Value,
}

impl Response {
    pub fn ok(tag: u64, payload: Value) -> Response {
        Response {
            tag: Some(tag),
            status: Status::Ok,
            payload,
        }
    }

    /// An error: its payload says why, as `{"message": …}`.
    pub fn error(tag: Option<u64>, status: Status, message: impl Into<String>) -> Response {
        Response {
            tag,
            status,
            payload: serde_json::json!({ "message": message.into() }),
        }
    }

    /// The response as one line (without its newline).
    pub fn to_line(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| {
            r#"{"tag":null,"status":"INTERNAL_ERROR","payload":{"message":"unserialisable"}}"#
                .into()
        })
    }
}
