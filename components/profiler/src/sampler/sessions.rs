//! A session's life as the core sees it: started, paused and resumed, restarted, stopped.

use std::collections::{BTreeMap, VecDeque};

use crate::agent::PollStep;
use crate::time::Nanos;

use super::messages::{BufferFullCallback, SessionId, SessionStart, Stopped};
use super::state::{AgentSlot, SamplerCore, Slot};

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
            },
        );
        if !s.paused {
            self.plan_change(id, true);
            self.schedule(id, s.started_at.min(now), now);
        }
    }

    pub fn set_paused(&mut self, id: SessionId, paused: bool, now: Nanos) {
        let Some(slot) = self.sessions.get_mut(&id) else {
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

    /// Removes a session. Ticks of it still waiting for an answer become stackless samples.
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
        let waiting = std::mem::take(&mut self.sessions.get_mut(&id)?.waiting);
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
