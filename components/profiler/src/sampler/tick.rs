//! A tick: the sampler wakes for the picks that are due, and each agent with due sessions
//! gives one stack for all of them — none when it runs no script, at once from a
//! [`StackSampler`](crate::StackSampler), or by request and answer — which is recorded into
//! every due session (the sampler's module docs, "A tick").

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU32, Ordering};

use crate::agent::{AgentId, Answer, Sampled};
use crate::frame::RawStack;
use crate::time::Nanos;
use crate::trace::ProfilerMarker;

use super::messages::SessionId;
use super::state::{
    max_served_per_tick, CohortKey, Outstanding, SamplerCore, WaitingTick, WalkState,
};
use super::stats::LATENESS_KEPT;

/// Request numbers are process-wide so that an answer from an earlier sampler run can never
/// match a request of a later one.
static NEXT_REQUEST: AtomicU32 = AtomicU32::new(1);

/// How long after a tick an answer may have been captured and still count as that tick's
/// stack. Interrupts are served within microseconds while JIT or interpreter code runs
/// (3-7 µs measured); an answer later than this means the agent was inside a native call
/// or a collection at the tick, and its stack then is unknown.
pub const MAX_ANSWER_DELAY: Nanos = 1_000_000;

impl SamplerCore {
    /// Serves every pick due at `now` (the sampler woke at `now`).
    pub fn on_wake(&mut self, now: Nanos) {
        let due: Vec<(CohortKey, u64)> = self
            .queue
            .iter()
            .take_while(|(&(at, _, _), _)| at <= now)
            .map(|(&k, &c)| (k, c))
            .collect();
        if due.is_empty() {
            return;
        }
        self.stats.ticks += 1;
        // A walk the agent's thread has taken since the last look serves the ticks that
        // waited for it, and not this one: the thread has run since (walks.rs, WALK_LOOK).
        self.poll_walks(now);
        // Whether the due agents' threads have run since the sampler last looked.
        let mut looked = Vec::new();
        for &((_, agent, _), _) in &due {
            if !looked.contains(&agent) {
                looked.push(agent);
                self.look_at_thread(agent, now);
            }
        }
        // The due sessions, by agent (in id order, so runs are deterministic) and tick: now,
        // or, for a pick the sampler woke too late for but whose agent's thread has not run
        // since, the pick's own time.
        let mut by_agent: BTreeMap<(AgentId, Nanos), Vec<SessionId>> = BTreeMap::new();
        for &((at, agent, every), cid) in &due {
            self.queue.remove(&(at, agent, every));
            self.cohort_gone(agent, at);
            self.note_lateness(now - at);
            let Some(pick) = self.cohorts.get(&cid).map(|c| c.pick) else {
                continue;
            };
            let in_time = self.servable(every, pick, now, None);
            let still = !in_time && self.servable(every, pick, now, self.still_since(agent));
            let servable = in_time || still;
            let tick = if still { pick.at } else { now };
            let Some(cohort) = self.cohorts.get_mut(&cid) else {
                continue;
            };
            let n = cohort.live as u64;
            if servable {
                // Its current members (stale entries, if any, dropped now).
                if cohort.members.len() > cohort.live {
                    let sessions = &self.sessions;
                    cohort.members.retain(|(id, m)| {
                        sessions.get(id).and_then(|s| s.cohort) == Some((cid, *m))
                    });
                }
                let block_len = every * self.base;
                let into = tick.saturating_sub(self.epoch + cohort.pick.block * block_len);
                // At most max_served_per_tick of them, in turn; the others' blocks have no
                // sample this time.
                let members = cohort.members.len();
                let served = members.min(max_served_per_tick(block_len));
                let start = cohort.next % members.max(1);
                cohort.next = (start + served) % members.max(1);
                self.stats.phases[(into * 10 / block_len).min(10) as usize] += served as u64;
                self.stats.missed_ticks += (members - served) as u64;
                if still {
                    self.stats.still_served += served as u64;
                }
                let sessions = &self.sessions;
                let window = cohort.members[start..]
                    .iter()
                    .chain(&cohort.members[..start])
                    .take(served)
                    .filter(|(id, m)| sessions.get(id).and_then(|s| s.cohort) == Some((cid, *m)));
                by_agent
                    .entry((agent, tick))
                    .or_default()
                    .extend(window.map(|&(id, _)| id));
            } else {
                // Woke too late for the pick: that block has no sample.
                self.stats.missed_ticks += n;
            }
        }
        for ((agent_id, tick), mut sessions) in by_agent {
            sessions.sort_unstable();
            self.sample_agent(agent_id, sessions, tick);
        }
        // Each cohort moves on as a whole to its next pick (the sessions that filled their
        // buffers meanwhile have left it).
        for ((at, agent, every), cid) in due {
            let Some(cohort) = self.cohorts.get(&cid) else {
                continue; // Emptied while sampled.
            };
            let (block, n) = (cohort.pick.block, cohort.live as u64);
            let still_since = self.still_since(agent);
            let pick = self.next_pick(every, Some(block), at, now, n, still_since);
            self.requeue(cid, pick);
        }
    }

    /// Reads the CPU time of `agent`'s thread, if its host can tell: unchanged since the last
    /// read, the thread has not run since that value was first read.
    fn look_at_thread(&mut self, agent: AgentId, now: Nanos) {
        let Some(slot) = self.agents.get_mut(&agent) else {
            return;
        };
        let cpu = slot.shared.sampler.as_ref().and_then(|s| s.cpu_time());
        slot.cpu_seen = match (cpu, slot.cpu_seen) {
            (None, _) => None,
            (Some(c), Some((seen, since))) if seen == c => Some((c, since)),
            (Some(c), _) => Some((c, now)),
        };
    }

    /// Takes one stack of `agent_id` for `sessions`, due at `now`.
    pub(super) fn sample_agent(&mut self, agent_id: AgentId, sessions: Vec<SessionId>, now: Nanos) {
        self.close_if_stale(agent_id);
        let Some(agent) = self.agents.get_mut(&agent_id) else {
            return;
        };
        // The marker is the agent's state at the tick (two atomic loads).
        let marker = agent.shared.marker();
        if !agent.shared.in_script() {
            self.stats.idle += 1;
            for id in sessions {
                self.record(id, now, None, marker);
            }
            return;
        }
        if agent.outstanding.is_none() {
            if let Some(sampler) = &agent.shared.sampler {
                let started = agent.shared.clock.now();
                let sampled = sampler.sample();
                let took = agent.shared.clock.now().saturating_sub(started);
                self.stats.capture_time += took;
                self.stats.capture_max = self.stats.capture_max.max(took);
                match sampled {
                    Sampled::Stack(stack) => {
                        self.stats.sampled += 1;
                        for id in sessions {
                            self.record(id, now, Some(&stack), marker);
                        }
                        return;
                    }
                    Sampled::Idle => {
                        self.stats.idle += 1;
                        for id in sessions {
                            self.record(id, now, None, marker);
                        }
                        return;
                    }
                    Sampled::Pending | Sampled::Deferred => {
                        // The agent's thread has not run since the tick (or holds the walk
                        // until a collection ends): its walk is polled while the sampler
                        // serves the others.
                        let deferred = matches!(sampled, Sampled::Deferred);
                        for id in &sessions {
                            if let Some(slot) = self.sessions.get_mut(id) {
                                slot.waiting.push_back((now, marker));
                            }
                        }
                        if let Some(agent) = self.agents.get_mut(&agent_id) {
                            agent.outstanding = Some(Outstanding {
                                token: 0,
                                walk: Some(WalkState {
                                    started,
                                    nudged: false,
                                    deferred,
                                }),
                                ticks: vec![(now, marker, sessions)],
                                forced: Vec::new(),
                            });
                        }
                        return;
                    }
                    Sampled::Unavailable => {}
                }
            }
        }
        for id in &sessions {
            if let Some(slot) = self.sessions.get_mut(id) {
                slot.waiting.push_back((now, marker));
            }
        }
        let Some(agent) = self.agents.get_mut(&agent_id) else {
            return;
        };
        if let Some(out) = agent.outstanding.as_mut() {
            out.ticks.push((now, marker, sessions));
        } else {
            let number = NEXT_REQUEST.fetch_add(1, Ordering::Relaxed);
            let token = agent.shared.request(number);
            self.stats.requests += 1;
            agent.outstanding = Some(Outstanding {
                token,
                walk: None,
                ticks: vec![(now, marker, sessions)],
                forced: Vec::new(),
            });
        }
    }

    /// An agent answered: every tick waiting on that request gets the stack, if it was
    /// captured within [`MAX_ANSWER_DELAY`] of the tick, and no stack otherwise.
    pub fn on_answer(&mut self, answer: Answer) {
        let Some(agent) = self.agents.get_mut(&answer.agent) else {
            self.stats.stale_answers += 1;
            return;
        };
        match agent.outstanding.take() {
            Some(out) if out.walk.is_none() && out.token == answer.token => {
                for (at, marker, due) in out.ticks {
                    let in_time = answer.captured_at.saturating_sub(at) <= MAX_ANSWER_DELAY;
                    if in_time {
                        self.stats.answered += 1;
                    } else {
                        self.stats.late_answers += 1;
                    }
                    for id in due {
                        self.settle(id, at, in_time.then_some(&answer.stack), marker);
                    }
                }
            }
            other => {
                agent.outstanding = other;
                self.stats.stale_answers += 1;
            }
        }
    }

    pub(super) fn close_if_stale(&mut self, agent_id: AgentId) {
        let Some(agent) = self.agents.get_mut(&agent_id) else {
            return;
        };
        let stale = agent
            .outstanding
            .as_ref()
            .is_some_and(|o| o.walk.is_none() && agent.shared.is_stale(o.token));
        if !stale {
            return;
        }
        let Some(out) = agent.outstanding.take() else {
            return;
        };
        self.stats.unanswered += 1;
        self.settle_ticks(out.ticks, None);
    }

    /// Records every tick that waited on one answer or walk, with its `stack` (or none).
    pub(super) fn settle_ticks(&mut self, ticks: Vec<WaitingTick>, stack: Option<&RawStack>) {
        for (at, marker, due) in ticks {
            for id in due {
                self.settle(id, at, stack, marker);
            }
        }
    }

    /// Records a tick session `id` was waiting on (if it is still live: a session stopped
    /// meanwhile recorded its waiting ticks then).
    fn settle(
        &mut self,
        id: SessionId,
        at: Nanos,
        stack: Option<&RawStack>,
        marker: Option<ProfilerMarker>,
    ) {
        // A tick the session no longer waits for (it restarted since: the tick went into
        // the trace handed over then) is not recorded again.
        if let Some(slot) = self.sessions.get_mut(&id) {
            if slot.waiting.front().map(|w| w.0) == Some(at) {
                slot.waiting.pop_front();
                self.record(id, at, stack, marker);
                self.settled(id);
            }
        }
    }

    fn note_lateness(&mut self, lateness: Nanos) {
        if self.stats.lateness.len() < LATENESS_KEPT {
            self.stats.lateness.push(lateness);
        } else {
            self.stats.lateness[self.lateness_next] = lateness;
            self.lateness_next = (self.lateness_next + 1) % LATENESS_KEPT;
        }
    }
}
