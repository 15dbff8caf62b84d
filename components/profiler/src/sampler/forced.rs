//! Forced samples (WebDriver's Force Sample): a sample taken now in the sessions asked,
//! through the same capture and buffer rules as a timed one.

use std::collections::BTreeMap;

use crate::agent::AgentId;
use crate::time::Nanos;

use super::messages::{ForceDone, SessionId};
use super::state::SamplerCore;

impl SamplerCore {
    /// Takes a sample now, through the same path as a timed one, in each of `ids` that is
    /// live and not paused (WebDriver's Force Sample; the spec's "take a sample"). A session
    /// whose buffer was already found full takes none; one that fills now gets the
    /// buffer-full rule. `done` is dropped once every sample is recorded.
    pub fn force(&mut self, ids: &[SessionId], now: Nanos, done: ForceDone) {
        let mut by_agent: BTreeMap<AgentId, Vec<SessionId>> = BTreeMap::new();
        for id in ids {
            if let Some(slot) = self.sessions.get(id).filter(|s| s.active()) {
                by_agent.entry(slot.agent).or_default().push(*id);
            }
        }
        for (agent_id, sessions) in by_agent {
            self.sample_agent(agent_id, sessions, now);
            if let Some(out) = self
                .agents
                .get_mut(&agent_id)
                .and_then(|a| a.outstanding.as_mut())
            {
                out.forced.push(done.clone());
            }
        }
    }

    /// Closes the requests forced samples wait on that their agent can no longer answer (it
    /// left the script): those samples are recorded without a stack now, instead of at the
    /// agent's next timed tick, which may be far away.
    pub fn poll_forced(&mut self) {
        let waiting: Vec<AgentId> = self
            .agents
            .iter()
            .filter(|(_, a)| a.outstanding.as_ref().is_some_and(|o| !o.forced.is_empty()))
            .map(|(id, _)| *id)
            .collect();
        for agent in waiting {
            self.close_if_stale(agent);
        }
    }

    /// Whether forced samples wait for an agent's answer (then answers wake the sampler).
    pub fn forcing(&self) -> bool {
        self.agents
            .values()
            .any(|a| a.outstanding.as_ref().is_some_and(|o| !o.forced.is_empty()))
    }
}
