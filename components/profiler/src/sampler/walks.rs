//! Walks that wait for the agent's thread: a host [`StackSampler`](crate::StackSampler) that
//! cannot take the stack at the tick leaves a walk pending, which the sampler looks at,
//! nudges and, at worst, abandons, while it serves the other agents.

use crate::agent::{AgentId, PollStep, Sampled};
use crate::time::Nanos;

use super::state::SamplerCore;

/// How long a pending walk may wait for the agent's thread to take it the gentle way (the
/// interrupt) before the sampler nudges it (a signal).
pub const WALK_NUDGE: Nanos = 50_000;
/// How often a walk is looked at, once the agent's thread has been made to take it (nudged)
/// or holds it until an operation ends (deferred), when no tick comes sooner. Each tick
/// looks at the pending walks before it samples (`on_wake`), so a walk taken since is never
/// mistaken for the tick's, and at bases of 20 ms and under this never wakes the sampler
/// thread on its own: a nudged walk is taken within microseconds of its thread running,
/// and looking at it 200 µs later, as before, was a third wake-up of the sampler thread
/// for a third of the ticks, for a stack that nothing needs before the next tick or a stop
/// (which looks too). A walk's stack is the tick's whenever it is taken.
pub const WALK_LOOK: Nanos = 20_000_000;
/// How long a walk may wait for the agent's thread to be scheduled before it is abandoned
/// (its ticks get no stack). The thread cannot run meanwhile, so its stack cannot change:
/// a late walk still has the tick's stack, and only a thread starved this long loses it.
/// A walk the thread has taken and will finish (the host answers `Pending` to the abandon)
/// is not abandoned.
pub const WALK_ABANDON: Nanos = 100_000_000;

impl SamplerCore {
    /// Looks at the agents' pending walks: one that is taken gives its stack to every tick
    /// that waited for it; one that has waited [`WALK_NUDGE`] is nudged; one that has waited
    /// [`WALK_ABANDON`] is abandoned (its ticks get no stack).
    pub fn poll_walks(&mut self, now: Nanos) {
        let walking: Vec<AgentId> = self
            .agents
            .iter()
            .filter(|(_, a)| a.outstanding.as_ref().is_some_and(|o| o.walk.is_some()))
            .map(|(id, _)| *id)
            .collect();
        for agent_id in walking {
            let Some(agent) = self.agents.get_mut(&agent_id) else {
                continue;
            };
            let Some(walk) = agent.outstanding.as_ref().and_then(|o| o.walk) else {
                continue;
            };
            let Some(sampler) = &agent.shared.sampler else {
                continue;
            };
            let waited = now.saturating_sub(walk.started);
            let step = if walk.deferred {
                PollStep::Look
            } else if waited >= WALK_ABANDON {
                PollStep::Abandon
            } else if !walk.nudged && waited >= WALK_NUDGE {
                PollStep::Nudge
            } else {
                PollStep::Look
            };
            let stack = match sampler.poll(step) {
                Sampled::Pending => {
                    if let Some(w) = agent.outstanding.as_mut().and_then(|o| o.walk.as_mut()) {
                        w.nudged |= step == PollStep::Nudge;
                    }
                    continue;
                }
                // The thread took the walk and will finish it (a tick inside a collection,
                // walked at its end): looked at seldom, never abandoned.
                Sampled::Deferred => {
                    if let Some(w) = agent.outstanding.as_mut().and_then(|o| o.walk.as_mut()) {
                        w.deferred = true;
                    }
                    continue;
                }
                Sampled::Stack(stack) => {
                    self.stats.walks_waited += 1;
                    self.stats.walk_wait += waited;
                    self.stats.walk_wait_max = self.stats.walk_wait_max.max(waited);
                    Some(stack)
                }
                _ => {
                    if step == PollStep::Abandon {
                        self.stats.walks_abandoned += 1;
                    }
                    None
                }
            };
            let Some(out) = self
                .agents
                .get_mut(&agent_id)
                .and_then(|a| a.outstanding.take())
            else {
                continue;
            };
            self.settle_ticks(out.ticks, stack.as_ref());
        }
    }

    /// How soon a pending walk must be looked at, if one is pending.
    pub fn walk_poll_in(&self, now: Nanos) -> Option<Nanos> {
        self.agents
            .values()
            .filter_map(|a| a.outstanding.as_ref()?.walk)
            .map(|w| {
                if w.deferred {
                    WALK_LOOK
                } else if w.nudged {
                    WALK_LOOK.min((w.started + WALK_ABANDON).saturating_sub(now))
                } else {
                    (w.started + WALK_NUDGE).saturating_sub(now)
                }
            })
            .min()
    }
}
