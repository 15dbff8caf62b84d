//! A session's life as the core sees it: started, paused and resumed, restarted, stopped.

use std::collections::{BTreeMap, VecDeque};

use crate::agent::PollStep;
use crate::time::Nanos;

use super::messages::{BufferFullCallback, BuildRequest, SessionId, SessionStart, Stopped};
use super::state::{AgentSlot, SamplerCore, Slot};

/// How long a stopped session waits, at most, for the stacks of ticks it took before the
/// stop (see [`SamplerCore::stop_for`]). A walk or an interrupt is served within
/// microseconds of the agent's thread running script, and a request is closed as soon as
/// the thread leaves the script: this bounds only a thread that gets no CPU, and delays
/// `stop()`'s promise by that much at worst.
pub const STOP_WAIT: Nanos = 50_000_000;

/// How often a stopping session's ticks are looked at, at most.
const STOP_POLL: Nanos = 1_000_000;

impl SamplerCore {
    pub fn start(&mut self, s: SessionStart, now: Nanos) {
        let agent = self.agents.entry(s.agent.id).or_insert_with(|| AgentSlot {
            shared: s.agent.clone(),
            sessions: 0,
            outstanding: None,
            picks: BTreeMap::new(),
            cpu_seen: None,
        });
        agent.sessions += 1;
        let id = s.id;
        self.sessions.insert(
            id,
            Slot {
                agent: s.agent.id,
                every: s.every,
                paused: s.paused,
                full: false,
                recorder: s.recorder,
                symbolizer: s.symbolizer,
                on_full: s.on_full,
                cohort: None,
                done: None,
                waiting: VecDeque::new(),
                stopping: None,
            },
        );
        if !s.paused {
            self.plan_change(id, true);
            self.schedule(id, s.started_at.min(now), now);
        }
    }

    pub fn set_paused(&mut self, id: SessionId, paused: bool, now: Nanos) {
        let Some(slot) = self.sessions.get_mut(&id).filter(|s| s.stopping.is_none()) else {
            return;
        };
        if slot.paused == paused {
            return;
        }
        let was_active = slot.active();
        slot.paused = paused;
        let active = slot.active();
        if was_active && !active {
            self.plan_change(id, false);
        } else if active && !was_active {
            self.plan_change(id, true);
            self.schedule(id, now, now);
        }
    }

    /// stop (<https://wicg.github.io/js-self-profiling/#dom-profiler-stop>) as the sampler
    /// sees it: session `id` takes no more samples, and its trace goes to `request` once
    /// its samples are all taken, through [`take_finished`](Self::take_finished).
    ///
    /// A tick taken before the stop whose stack is still being taken (a walk pending on
    /// the agent's thread, or a request its interrupt has not served yet) belongs to the
    /// session: the stack is the agent's at the tick, and the page called `stop()` after
    /// it. So the session waits for those stacks, at most [`STOP_WAIT`], and ends when the
    /// last one comes (or its request is closed, the agent having left that script). Only
    /// a tick still waiting then is stackless. (Ending at once made the last sample of a
    /// profile stopped in script stackless whenever its interrupt came just after the
    /// `stop()` call, while a session of the same interval beside it had the stack.)
    pub fn stop_for(&mut self, id: SessionId, now: Nanos, request: Option<BuildRequest>) {
        let Some(slot) = self.sessions.get_mut(&id) else {
            return;
        };
        if slot.waiting.is_empty() || slot.stopping.is_some() {
            if let Some(stopped) = self.stop(id, now) {
                self.finished.push((stopped, request));
            }
            return;
        }
        let was_active = slot.active();
        slot.stopping = Some(now.saturating_add(STOP_WAIT));
        if was_active {
            self.plan_change(id, false);
        }
        self.stopping.insert(id, request);
    }

    /// Ends the stopping sessions whose ticks all have their stack, or whose time to wait
    /// is up (their waiting ticks become stackless), and closes the requests of their
    /// agents that can no longer be answered.
    pub fn poll_stopping(&mut self, now: Nanos) {
        if self.stopping.is_empty() {
            return;
        }
        let ids: Vec<SessionId> = self.stopping.keys().copied().collect();
        for id in &ids {
            if let Some(agent) = self.sessions.get(id).map(|s| s.agent) {
                self.close_if_stale(agent);
            }
        }
        for id in ids {
            let due = self
                .sessions
                .get(&id)
                .is_none_or(|s| s.waiting.is_empty() || s.stopping.is_some_and(|by| by <= now));
            if due {
                self.finish_stop(id);
            }
        }
    }

    /// A stopping session `id` whose ticks have all been settled ends.
    pub(super) fn settled(&mut self, id: SessionId) {
        if self
            .sessions
            .get(&id)
            .is_some_and(|s| s.stopping.is_some() && s.waiting.is_empty())
        {
            self.finish_stop(id);
        }
    }

    fn finish_stop(&mut self, id: SessionId) {
        let request = self.stopping.remove(&id).flatten();
        if let Some(stopped) = self.stop(id, 0) {
            self.finished.push((stopped, request));
        }
    }

    /// How soon a stopping session must be looked at again, if one is stopping.
    pub fn stop_poll_in(&self, now: Nanos) -> Option<Nanos> {
        self.stopping
            .keys()
            .filter_map(|id| self.sessions.get(id)?.stopping)
            .map(|by| by.saturating_sub(now).min(STOP_POLL))
            .min()
    }

    /// Whether a stopped session waits for the stacks of its ticks.
    pub fn is_stopping(&self) -> bool {
        !self.stopping.is_empty()
    }

    /// The sessions that have ended, with who wants their trace, in the order they ended.
    pub fn take_finished(&mut self) -> Vec<(Stopped, Option<BuildRequest>)> {
        std::mem::take(&mut self.finished)
    }

    /// Removes a session at once. Ticks of it still waiting for an answer become stackless
    /// samples (the sampler's own end, and tests; a page's `stop()` is [`stop_for`]).
    ///
    /// [`stop_for`]: Self::stop_for
    pub fn stop(&mut self, id: SessionId, _now: Nanos) -> Option<Stopped> {
        let slot = self.sessions.get(&id)?;
        let agent_id = slot.agent;
        if slot.active() {
            self.plan_change(id, false);
        }
        let waiting = self
            .sessions
            .get_mut(&id)
            .map(|s| std::mem::take(&mut s.waiting))
            .unwrap_or_default();
        for (at, marker) in waiting {
            self.record(id, at, None, marker);
        }
        if let Some(agent) = self.agents.get_mut(&agent_id) {
            agent.sessions -= 1;
            if agent.sessions == 0 {
                // A walk still pending is withdrawn (the host's state is left clean).
                if agent.outstanding.as_ref().is_some_and(|o| o.walk.is_some()) {
                    if let Some(sampler) = &agent.shared.sampler {
                        let _ = sampler.poll(PollStep::Abandon);
                    }
                }
                self.agents.remove(&agent_id);
            }
        }
        let slot = self.sessions.remove(&id)?;
        self.stopping.remove(&id);
        self.release(slot.recorder.len() as u64);
        Some(Stopped {
            recorder: slot.recorder,
            symbolizer: slot.symbolizer,
        })
    }

    /// Restarts session `id` (WICG js-self-profiling#90): returns what it recorded so far, to
    /// be built, and goes on sampling into a fresh buffer with the same settings. The
    /// session stays in its cohort with its pending pick, so the block it is in is sampled
    /// once, into whichever buffer is current at the pick: no interval is lost or sampled
    /// twice. Ticks still waiting for an answer belong to the old buffer and are recorded
    /// there without a stack, as at a stop. A session whose buffer was full samples again,
    /// from its next block.
    pub fn restart(
        &mut self,
        id: SessionId,
        now: Nanos,
        on_full: Option<BufferFullCallback>,
    ) -> Option<Stopped> {
        let slot = self
            .sessions
            .get_mut(&id)
            .filter(|s| s.stopping.is_none())?;
        let waiting = std::mem::take(&mut slot.waiting);
        for (at, marker) in waiting {
            self.record(id, at, None, marker);
        }
        let slot = self.sessions.get_mut(&id)?;
        let fresh = slot.recorder.fresh();
        let old = std::mem::replace(&mut slot.recorder, fresh);
        if on_full.is_some() {
            slot.on_full = on_full;
        }
        let held = old.len() as u64;
        let stopped = Stopped {
            recorder: old,
            symbolizer: slot.symbolizer.clone(),
        };
        let refill = slot.full;
        slot.full = false;
        self.release(held);
        if refill && self.sessions.get(&id).is_some_and(|s| s.active()) {
            self.plan_change(id, true);
            self.schedule(id, now, now);
        }
        Some(stopped)
    }
}
