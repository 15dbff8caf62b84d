//! The "in script" guard: the agent's depth of entries into JS, which the sampler reads to
//! tell script from the rest (the fallback path asks only an agent in script; the `script`
//! marker), and whose entries from depth 0 start a new generation (a request made for one
//! script is never answered with another's stack).

use std::cell::Cell;
use std::time::{Duration, Instant};

use jsprof_profiler::AgentHandle;

use crate::agent::{AGENT, GUARD_DEPTH};

/// One guard in this many is timed (both halves), and counted for all of them.
const GUARD_SAMPLE: u32 = 32;

thread_local! {
    /// Guards taken while an agent was installed, and the estimated time in them.
    static GUARDS: Cell<(u64, Duration)> = const { Cell::new((0, Duration::ZERO)) };
}

/// **Task entry and exit**: marks this thread's agent "in script" for the life of the guard.
/// Take one around every entry into JS: evaluating or running a script or module, calling a
/// function (an event listener, a timer's callback, a promise job, a hook), running the
/// microtask checkpoint. Guards nest. Without an agent it counts its depth only (two
/// thread-local reads); an agent installed while it lives is left by its drop.
///
/// Its cost is part of what profiling support costs a page: one guard in 32 is timed and
/// counted for all of them ([`guard_time`]).
#[derive(Debug)]
#[must_use = "the agent is in script only while the guard lives"]
pub struct InScript {
    agent: Option<AgentHandle>,
    timed: bool,
}

impl InScript {
    /// Enters script (see [`InScript`]).
    pub fn enter() -> Self {
        let timed = GUARDS.with(|g| g.get().0.is_multiple_of(u64::from(GUARD_SAMPLE)));
        let start = timed.then(Instant::now);
        GUARD_DEPTH.with(|d| d.set(d.get() + 1));
        let agent = AGENT.with(|a| a.borrow().as_ref().map(|a| a.handle.clone()));
        let Some(handle) = &agent else {
            return InScript {
                agent: None,
                timed: false,
            };
        };
        handle.enter();
        GUARDS.with(|g| {
            let (n, mut t) = g.get();
            if let Some(start) = start {
                t += start.elapsed() * GUARD_SAMPLE;
            }
            g.set((n + 1, t));
        });
        InScript { agent, timed }
    }
}

impl Drop for InScript {
    fn drop(&mut self) {
        let start = self.timed.then(Instant::now);
        GUARD_DEPTH.with(|d| d.set(d.get().saturating_sub(1)));
        // The agent this guard entered, or one installed since (which entered for it).
        let agent = self
            .agent
            .take()
            .or_else(|| AGENT.with(|a| a.borrow().as_ref().map(|a| a.handle.clone())));
        if let Some(handle) = agent {
            handle.leave();
        }
        if let Some(start) = start {
            GUARDS.with(|g| {
                let (n, t) = g.get();
                g.set((n, t + start.elapsed() * GUARD_SAMPLE));
            });
        }
    }
}

/// How many in-script guards this thread took with an agent installed, and an estimate of
/// their time (`--profile-stats`: what profiling support costs besides the samples).
pub fn guard_time() -> (u64, Duration) {
    GUARDS.with(Cell::get)
}
