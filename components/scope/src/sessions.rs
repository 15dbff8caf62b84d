//! The service's sessions (seed 003): one running at a time; stopping answers with the
//! session's timelines; only a stopped session can be released, and its IDs are invalid
//! afterwards; a session lives until it is released or the service ends. A client that
//! disconnects while its session runs releases it.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use crate::timeline::{StackSample, Timeline};

/// A session that is running (or being stopped).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Running {
    pub session_id: u32,
    pub window_id: u32,
    /// The connection that started it.
    pub owner: u64,
    /// Stop has arrived: post-processing is under way.
    pub stopping: bool,
}

/// A stopped session, post-processed.
#[derive(Debug, Clone)]
pub struct Stopped {
    pub session_id: u32,
    pub window_id: u32,
    pub timelines: Vec<Timeline>,
    /// The sampled trace of the window's profiler session, as JSON (`GetTrace`).
    pub trace: Option<Value>,
    /// Its samples on the session's clock, for `GetEvents`' `stacks`.
    pub samples: Vec<StackSample>,
}

impl Stopped {
    /// `Session {sessionID, windowID, timelineList: [{timelineID, frameID}]}`.
    pub fn to_json(&self) -> Value {
        json!({
            "sessionID": self.session_id,
            "windowID": self.window_id,
            "timelineList": self.timelines,
        })
    }

    pub fn timeline(&self, id: u32) -> Option<&Timeline> {
        self.timelines.iter().find(|t| t.timeline_id == id)
    }
}

/// Every session of the service.
#[derive(Debug, Default)]
pub struct Sessions {
    last_id: u32,
    running: Option<Running>,
    stopped: BTreeMap<u32, Stopped>,
}

impl Sessions {
    /// A new session for `window_id`, started by connection `owner`; BAD_REQUEST's message
    /// if one runs. The caller starts it at the window, and calls [`Sessions::abandon`] if
    /// that fails.
    pub fn start(&mut self, window_id: u32, owner: u64) -> Result<Running, String> {
        if let Some(r) = self.running {
            return Err(format!(
                "session {} is running: one at a time",
                r.session_id
            ));
        }
        self.last_id += 1;
        let running = Running {
            session_id: self.last_id,
            window_id,
            owner,
            stopping: false,
        };
        self.running = Some(running);
        Ok(running)
    }

    /// The running session `session_id`, now stopping; BAD_REQUEST's message if that is
    /// not the running session (or it is already stopping).
    pub fn stop(&mut self, session_id: u32) -> Result<Running, String> {
        match &mut self.running {
            Some(r) if r.session_id == session_id && !r.stopping => {
                r.stopping = true;
                Ok(*r)
            }
            Some(r) if r.session_id == session_id => {
                Err(format!("session {session_id} is already being stopped"))
            }
            _ if self.stopped.contains_key(&session_id) => {
                Err(format!("session {session_id} is already stopped"))
            }
            _ => Err(format!("no session {session_id} is running")),
        }
    }

    /// Post-processing of the running session is done: it is stopped.
    pub fn stopped(&mut self, session: Stopped) {
        if self
            .running
            .is_some_and(|r| r.session_id == session.session_id)
        {
            self.running = None;
        }
        self.stopped.insert(session.session_id, session);
    }

    /// The running session `session_id` ends without being kept (its start failed, or its
    /// client left).
    pub fn abandon(&mut self, session_id: u32) {
        if self.running.is_some_and(|r| r.session_id == session_id) {
            self.running = None;
        }
    }

    /// `ReleaseSession`: only a stopped session.
    pub fn release(&mut self, session_id: u32) -> Result<(), String> {
        if self.running.is_some_and(|r| r.session_id == session_id) {
            return Err(format!(
                "session {session_id} is running: stop it before releasing it"
            ));
        }
        self.stopped
            .remove(&session_id)
            .map(|_| ())
            .ok_or_else(|| format!("no session {session_id}"))
    }

    /// A stopped session; BAD_REQUEST's message for any other ID.
    pub fn get(&self, session_id: u32) -> Result<&Stopped, String> {
        if self.running.is_some_and(|r| r.session_id == session_id) {
            return Err(format!("session {session_id} is running: stop it first"));
        }
        self.stopped
            .get(&session_id)
            .ok_or_else(|| format!("no session {session_id}"))
    }

    /// The running session, if any.
    pub fn running(&self) -> Option<Running> {
        self.running
    }

    /// Connection `owner` is gone: the session it started and is still running, if any,
    /// which the caller stops and drops.
    pub fn disconnected(&mut self, owner: u64) -> Option<Running> {
        match self.running {
            Some(r) if r.owner == owner && !r.stopping => {
                self.running = None;
                Some(r)
            }
            _ => None,
        }
    }
}
