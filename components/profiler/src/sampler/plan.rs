//! The plan: when each session takes its samples. Picks, the grid they sit on, and the
//! cohorts of sessions that share them (the sampler's module docs, "When samples are
//! taken", "The ends of a profile" and "Cost with many sessions", say why).

use crate::agent::AgentId;
use crate::interval::gcd;
use crate::time::Nanos;

use super::messages::SessionId;
use super::state::{Cohort, Pick, SamplerCore};

/// How late the sampler thread may wake for a pick and still take it, once the pick's block
/// has ended. Within its block a pick is always taken; past the block, a wake up to this
/// late still gives the block its sample (timestamped when it was taken, so in the next
/// block), and the next block's pick, if it has passed by then, is taken at once. A 1 ms
/// base would otherwise lose every pick that falls closer to its block's end than the
/// thread's wake-up latency: ~4% of its blocks on a busy 2-core machine.
pub const MAX_PICK_LATENESS: Nanos = 1_000_000;

/// SplitMix64 of `seed`, `a` and `b`: the sampler's stateless source of randomness.
pub fn mix(seed: u64, a: u64, b: u64) -> u64 {
    let mut z = seed
        .wrapping_add(a.wrapping_mul(0x9E37_79B9_7F4A_7C15))
        .wrapping_add(b.wrapping_mul(0xD1B5_4A32_D192_ED03))
        .wrapping_add(0x632B_E59B_D9B4_E019);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl SamplerCore {
    /// Session `id` leaves its cohort (it paused, filled its buffer or stopped): it keeps
    /// the last block before the cohort's pick as done.
    fn leave_cohort(&mut self, id: SessionId) {
        let Some(slot) = self.sessions.get_mut(&id) else {
            return;
        };
        let Some((cid, _)) = slot.cohort.take() else {
            return;
        };
        let Some(cohort) = self.cohorts.get_mut(&cid) else {
            return;
        };
        slot.done = cohort.pick.block.checked_sub(1).or(slot.done);
        cohort.live -= 1;
        if cohort.live == 0 {
            let (key, agent) = (cohort.key(), cohort.agent);
            self.cohorts.remove(&cid);
            if self.queue.get(&key) == Some(&cid) {
                self.queue.remove(&key);
                self.cohort_gone(agent, key.0);
            }
        }
    }

    /// Session `id` takes `pick`: it joins the cohort of that pick (made if new).
    fn join_pick(&mut self, id: SessionId, pick: Pick) {
        let Some(slot) = self.sessions.get(&id) else {
            return;
        };
        let key = (pick.at, slot.agent, slot.every);
        let cid = match self.queue.get(&key) {
            Some(&cid) => cid,
            None => self.new_cohort(pick, key.1, key.2),
        };
        self.members += 1;
        let member = self.members;
        if let Some(slot) = self.sessions.get_mut(&id) {
            slot.cohort = Some((cid, member));
        }
        if let Some(cohort) = self.cohorts.get_mut(&cid) {
            cohort.members.push((id, member));
            cohort.live += 1;
            // Stale entries are dropped when the cohort is served; one whose members keep
            // leaving and coming back before that is compacted here.
            if cohort.members.len() > 2 * cohort.live + 64 {
                let sessions = &self.sessions;
                cohort
                    .members
                    .retain(|(id, m)| sessions.get(id).and_then(|s| s.cohort) == Some((cid, *m)));
            }
        }
    }

    /// An empty cohort for `pick`, in the queue.
    fn new_cohort(&mut self, pick: Pick, agent: AgentId, every: u64) -> u64 {
        self.cohort_ids += 1;
        let cid = self.cohort_ids;
        self.cohorts.insert(
            cid,
            Cohort {
                pick,
                agent,
                every,
                members: Vec::new(),
                live: 0,
                next: 0,
            },
        );
        self.queue.insert((pick.at, agent, every), cid);
        if let Some(a) = self.agents.get_mut(&agent) {
            *a.picks.entry(pick.at).or_insert(0) += 1;
        }
        cid
    }

    /// Cohort `cid` (out of the queue) moves on to `pick`; into the cohort already there, if
    /// any (the smaller one's members move).
    pub(super) fn requeue(&mut self, cid: u64, pick: Pick) {
        let Some(cohort) = self.cohorts.get_mut(&cid) else {
            return;
        };
        cohort.pick = pick;
        let key = cohort.key();
        let agent = cohort.agent;
        match self.queue.get(&key).copied() {
            None => {
                self.queue.insert(key, cid);
                if let Some(a) = self.agents.get_mut(&agent) {
                    *a.picks.entry(pick.at).or_insert(0) += 1;
                }
            }
            Some(other) => {
                // Merge: the members of the smaller cohort join the larger.
                let (big, small) = {
                    let a = self.cohorts.get(&cid).map_or(0, |c| c.members.len());
                    let b = self.cohorts.get(&other).map_or(0, |c| c.members.len());
                    if a >= b {
                        (cid, other)
                    } else {
                        (other, cid)
                    }
                };
                let Some(small_cohort) = self.cohorts.remove(&small) else {
                    return;
                };
                let mut moved = Vec::with_capacity(small_cohort.live);
                for (id, m) in small_cohort.members {
                    if let Some(slot) = self.sessions.get_mut(&id) {
                        if slot.cohort == Some((small, m)) {
                            slot.cohort = Some((big, m));
                            moved.push((id, m));
                        }
                    }
                }
                if let Some(big_cohort) = self.cohorts.get_mut(&big) {
                    big_cohort.live += moved.len();
                    big_cohort.members.extend(moved);
                }
                self.queue.insert(key, big);
            }
        }
    }

    /// A cohort of `agent` due at `at` left the queue.
    pub(super) fn cohort_gone(&mut self, agent: AgentId, at: Nanos) {
        if let Some(agent) = self.agents.get_mut(&agent) {
            if let Some(n) = agent.picks.get_mut(&at) {
                *n -= 1;
                if *n == 0 {
                    agent.picks.remove(&at);
                }
            }
        }
    }

    /// Session `id` joins (`true`) or leaves the plan: the count of its interval, the grid
    /// and its pick. Called on each change of [`Slot::active`], after it.
    pub(super) fn plan_change(&mut self, id: SessionId, joins: bool) {
        let Some(every) = self.sessions.get(&id).map(|s| s.every) else {
            return;
        };
        if joins {
            *self.intervals.entry(every).or_insert(0) += 1;
            if !self.grid_stale {
                self.grid = gcd(self.grid, every);
            }
        } else {
            if let Some(n) = self.intervals.get_mut(&every) {
                *n -= 1;
                if *n == 0 {
                    self.intervals.remove(&every);
                }
            }
            self.grid_stale = true;
            self.leave_cohort(id);
        }
    }

    /// The time of grid tick `c` of a grid of `g` base intervals: a random point in its slot.
    fn grid_time(&self, g: u64, c: u64) -> Nanos {
        let slot = g * self.base;
        self.epoch + c * slot + mix(self.seed, g, c) % slot
    }

    /// The pick of a session of interval `k` for its block `block`, on grid `g`.
    fn pick(&self, k: u64, g: u64, block: u64) -> Pick {
        let m = (k / g).max(1);
        let c = block * m + mix(self.seed ^ 0x005E_ED0F_B10C, k, block) % m;
        Pick {
            block,
            at: self.grid_time(g, c),
        }
    }

    /// Whether a pick of a session of interval `k` can still be taken at `now`: within its
    /// block or up to [`MAX_PICK_LATENESS`] after, or whenever the agent's thread has not
    /// run since the pick (`still_since`: since when it has not run, if known).
    pub(super) fn servable(
        &self,
        k: u64,
        pick: Pick,
        now: Nanos,
        still_since: Option<Nanos>,
    ) -> bool {
        let block_end = self.epoch + (pick.block + 1) * k * self.base;
        now < block_end
            || now - pick.at <= MAX_PICK_LATENESS
            || still_since.is_some_and(|s| pick.at >= s)
    }

    /// Since when the thread of `agent` has not run, if the sampler knows (see
    /// [`AgentSlot::cpu_seen`](super::state::AgentSlot)).
    pub(super) fn still_since(&self, agent: AgentId) -> Option<Nanos> {
        self.agents.get(&agent)?.cpu_seen.map(|(_, since)| since)
    }

    /// The next pick of active session `id`: in a block after the last one it used, and
    /// after `from` (its start, or `now`); one that has passed by `now` is taken only if it
    /// can still be served (a late wake, or a start the sampler heard of late).
    pub(super) fn schedule(&mut self, id: SessionId, from: Nanos, now: Nanos) {
        let Some(slot) = self.sessions.get(&id).filter(|s| s.active()) else {
            return;
        };
        let pick = self.next_pick(slot.every, slot.done, from, now, 1, None);
        self.join_pick(id, pick);
    }

    /// The next pick of sessions of interval `k` whose last block was `done`, after `from`
    /// and servable at `now` (`still_since`: since when their agent's thread has not run,
    /// if known). Blocks skipped because their pick can no longer be served are counted as
    /// missed, `n` times (for `n` sessions).
    pub(super) fn next_pick(
        &mut self,
        k: u64,
        done: Option<u64>,
        from: Nanos,
        now: Nanos,
        n: u64,
        still_since: Option<Nanos>,
    ) -> Pick {
        let (g, base, epoch) = (self.grid().max(1), self.base, self.epoch);
        // The block `from` is in: a session starting inside it takes its pick if the pick
        // comes after the start (the ends of a profile, see the module docs).
        let current = from.saturating_sub(epoch) / (k * base);
        let mut block = match done {
            Some(d) => current.max(d + 1),
            None => current,
        };
        // Blocks that ended more than MAX_PICK_LATENESS before `now` cannot be served:
        // counted as missed at once, not one by one (a sampler seconds late at a 1 ms base
        // would otherwise walk thousands of blocks for each session).
        let mut servable_from = now.saturating_sub(MAX_PICK_LATENESS + epoch) / (k * base);
        if let Some(s) = still_since {
            // Picks since the thread last ran are servable too.
            servable_from = servable_from.min(s.saturating_sub(epoch) / (k * base));
        }
        if servable_from > block {
            // Blocks wholly after `from` are missed; the one `from` is in only if its pick
            // came after `from`.
            let skipped = servable_from - block;
            let missed = if block == current {
                skipped - 1 + u64::from(self.pick(k, g, block).at > from)
            } else {
                skipped
            };
            self.stats.missed_ticks += missed * n;
            block = servable_from;
        }
        loop {
            let p = self.pick(k, g, block);
            if p.at > from && (p.at > now || self.servable(k, p, now, still_since)) {
                return p;
            }
            if p.at > from {
                self.stats.missed_ticks += n;
            }
            block += 1;
        }
    }
}
