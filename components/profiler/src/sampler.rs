//! The sampler: one thread per [`ProfilerGroup`](crate::ProfilerGroup).
//!
//! [`SamplerCore`] is the whole policy, driven by explicit times so that tests run it with a
//! fake clock; [`run`] is the thread around it, sleeping to absolute deadlines. (A little
//! over 600 lines on purpose: the plan, the tick and the request queue share the core's
//! private state and are read together; their tests are in `tests.rs`.)
//!
//! # When samples are taken: randomised inside each interval
//!
//! Time is cut into blocks from the sampler's epoch. A session whose interval is `k` base
//! intervals takes **exactly one sample per block of `k` base intervals**, at a time drawn
//! uniformly inside the block. A workload whose phases repeat with any period — equal to
//! the interval, dividing it, or a multiple of it — is therefore sampled at uniformly
//! distributed phases, and each phase gets its true share of the samples. (Samples at fixed
//! multiples of the interval alias: a 7 ms / 3 ms loop on a 10 ms period sampled every
//! 20 ms shows one phase forever.)
//!
//! Sessions still share captures, as the GCD plan intends. Let `g` be the GCD of the active
//! sessions' intervals (in base intervals): the *grid* cuts time into slots of `g` base
//! intervals, and each slot has one grid tick at a random point inside it. A session of
//! interval `k = m·g` takes one of the `m` grid ticks of each of its blocks, chosen at
//! random, and sessions of the same interval choose the same one. Every due session of an
//! agent at a grid tick is served by one capture. Both choices are pure functions of a seed
//! and the indices ([`mix`]), so tests fix the seed and runs are reproducible from it.
//!
//! A re-plan (a session starting, stopping, pausing, resuming or filling its buffer)
//! changes `g` for picks made after it; a pick already made stands, so no session loses or
//! gains a sample in the block it is in.
//!
//! # The ends of a profile
//!
//! A session that starts inside a block takes that block's pick if the pick falls after
//! its start, and otherwise begins with the next block; one that stops inside a block has
//! its pick only if the pick came before the stop. The pick is uniform in the block, so the
//! partial block at either end gets a sample with the probability of the share of the block
//! it covers, at a uniform time within it: the work just after `new Profiler()` and just
//! before `stop()` is sampled like any other. (Waiting for the first whole block instead
//! leaves the start of every profile unsampled: on 40 profiles of 200 ms at 20 ms, a
//! function that ran the first 15 ms got none of 357 samples.) The start is the host's time
//! of the session's creation, not the time the sampler thread hears of it.
//!
//! # Cost with many sessions
//!
//! Pending picks live in a queue ordered by time, per process and per agent, and the grid is
//! kept from a count of the active sessions per interval: starting, stopping, pausing or
//! filling one session costs O(log n) in the number of sessions, a wake costs what its due
//! sessions cost.
//!
//! # Fair shares of the budget
//!
//! The unstopped sessions of a process hold at most
//! [`max_buffered`](SamplerCore::with_budget) samples between them, `B`. While there is room,
//! any session takes it. Once the budget has run out, each of the `L` unstopped sessions is
//! held to its fair share, `B / L` (floored), until the budget drains to half:
//!
//! - a session that holds its share or more and would take one more sample yields: it is
//!   full, as at its own `maxBufferSize` (a ring that holds samples drops its own oldest
//!   instead);
//! - a session below its share that finds no room makes some: every session holding more
//!   than the share is cut down to it, in one pass over the sessions. A ring loses its
//!   oldest samples and goes on; any other loses its newest, so that its trace is the
//!   samples it took first (as if its `maxBufferSize` had been its share), and is full,
//!   told once.
//!
//! So the sessions that hold the most give way, not the one that asks next: 100,000
//! forgotten profilers at 1 ms fill the budget in ~84 ms and are full at ~84 samples each,
//! and a profiler started after them gets its samples from the one cut that takes their
//! 84ths back. (`docs/decisions`' "fair sample budget" gives the alternatives and the
//! measurements.)
//!
//! Cost: while the budget has room, nothing changes; once it has run out, a sample costs a
//! division more. A cut costs O(sessions + samples taken back), and happens only when a
//! session below its share finds the budget spent. While shares hold, nobody grows past
//! one, so that cannot happen again until the share shrinks, that is until a session
//! starts: at most one cut per start, and, while sessions only start, one per `L²/B` of
//! them (the floored share changes that seldom), so O(√B) sessions visited per start,
//! amortised (~2,900 at the default budget). The ticks themselves never visit a session
//! that is not due.
//!
//! # A tick
//!
//! For every agent with due sessions: if the agent runs no script, the sampler records an
//! idle sample (no stack). Otherwise, if the host gave a [`StackSampler`](crate::StackSampler),
//! the stack is taken at once, from the sampler thread, and handed to every due session:
//! its timestamp is the capture's. Without one (or when it cannot sample), the agent is
//! asked for a stack and answers from its own thread; ticks that come while a request is
//! outstanding queue behind it. An answer is given to a waiting tick only if it was captured
//! within [`MAX_ANSWER_DELAY`] of that tick; a tick the agent could not answer in time (a
//! long native call, a GC) gets no stack rather than a stack that was not running at its
//! time, and is counted in [`SamplerStats::late_answers`]. A request the agent can no longer
//! answer (it left that script) is closed the same way.

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::agent::{AgentId, AgentShared, Answer, PollStep, Sampled};
use crate::frame::{RawStack, Symbolizer};
use crate::interval::gcd;
use crate::recorder::{Added, BufferPolicy, Recorder};
use crate::time::Nanos;
use crate::trace::{ProfilerMarker, ProfilerTrace};

/// Identifies a session within its group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SessionId(pub u64);

/// Called once, on the sampler thread, when a session's buffer is found full.
pub type BufferFullCallback = Box<dyn FnOnce() + Send>;
/// Called once, on a trace-building thread, with a stopped session's trace.
pub type TraceCallback = Box<dyn FnOnce(ProfilerTrace) + Send>;

/// Who wants a stopped session's trace, and by when (on the group's clock): a build that
/// cannot be finished by then is abandoned, and `done` is dropped without being called.
pub(crate) struct BuildRequest {
    pub done: TraceCallback,
    pub by: Option<Nanos>,
}

/// Request numbers are process-wide so that an answer from an earlier sampler run can never
/// match a request of a later one.
static NEXT_REQUEST: AtomicU32 = AtomicU32::new(1);

/// A session as the sampler sees it.
pub(crate) struct SessionStart {
    pub id: SessionId,
    pub agent: Arc<AgentShared>,
    pub every: u64,
    pub recorder: Recorder,
    pub symbolizer: Arc<dyn Symbolizer>,
    pub on_full: Option<BufferFullCallback>,
    /// Starts paused (its document is hidden).
    pub paused: bool,
    /// When the host created the session, on the group's clock: its first pick is the first
    /// one after this time (the sampler thread may hear of the session later).
    pub started_at: Nanos,
}

/// Held by whoever waits for forced samples: the waiter is released when every clone has
/// been dropped, that is when each forced sample is recorded (at once, or when the agent's
/// answer arrives or its request is closed).
pub(crate) type ForceDone = crossbeam_channel::Sender<()>;

/// Messages from the group to its sampler thread.
pub(crate) enum Control {
    Start(Box<SessionStart>),
    Pause(SessionId),
    Resume(SessionId),
    Stop(SessionId, Option<BuildRequest>),
    /// Hand the samples so far to be built and go on sampling into a fresh buffer; the
    /// callback, if any, is the buffer-full notification from now on.
    Restart(SessionId, BuildRequest, Option<BufferFullCallback>),
    /// Take a sample now in these sessions (WebDriver's Force Sample).
    Force(Vec<SessionId>, ForceDone),
    Stats(crossbeam_channel::Sender<SamplerStats>),
    Shutdown,
}

/// Counters of a sampler run.
#[derive(Debug, Clone, Default)]
pub struct SamplerStats {
    /// Wakes that served at least one session.
    pub ticks: u64,
    /// Blocks that got no sample because the thread woke too late for their pick: after
    /// the end of the block and more than [`MAX_PICK_LATENESS`] after the pick.
    pub missed_ticks: u64,
    /// Samples recorded without a stack because the agent ran no script at the tick.
    pub idle: u64,
    /// Where in their blocks samples were taken: tenths of the block (0-9), and 10 for
    /// samples taken after their block ended. Uniform tenths are what keeps periodic work
    /// from aliasing; `./mach bench` prints how far they are from it.
    pub phases: [u64; 11],
    /// CPU time of the sampler thread itself (ns), where the platform tells.
    pub thread_cpu: u64,
    /// Time the sampler thread spent in synchronous stack samplers, in all and at most in
    /// one call (ns): a long one delays every other pick.
    pub capture_time: u64,
    pub capture_max: u64,
    /// Stacks taken synchronously from the sampler thread.
    pub sampled: u64,
    /// Interrupt requests sent to agents.
    pub requests: u64,
    /// Answers that arrived for a request already closed.
    pub stale_answers: u64,
    /// Requests closed without an answer.
    pub unanswered: u64,
    /// Waiting ticks whose answer came more than [`MAX_ANSWER_DELAY`] after them.
    pub late_answers: u64,
    /// Waiting ticks given the stack of an answer that came in time.
    pub answered: u64,
    /// Walks that waited for the agent's thread to run (it was waiting for a CPU: threads
    /// outnumbered cores), the time they waited in all and at most (ns), and those abandoned
    /// after [`WALK_ABANDON`].
    pub walks_waited: u64,
    pub walk_wait: u64,
    pub walk_wait_max: u64,
    pub walks_abandoned: u64,
    /// Lateness (actual wake time minus the pick's time) of the most recent picks, in ns.
    pub lateness: Vec<u64>,
    /// The current plan: the GCD of the active sessions' intervals, in base ticks (0: idle).
    pub plan_ticks: u64,
    /// Samples the unstopped sessions hold now (at most the group's `max_buffered_samples`).
    pub buffered: u64,
    /// Times a session below its fair share of the budget found none left, and the sessions
    /// above their share were cut down to it (the [`sampler`](crate::sampler) module's "Fair
    /// shares").
    pub reclaims: u64,
    /// Samples those cuts took back.
    pub reclaimed: u64,
}

const LATENESS_KEPT: usize = 1 << 16;

impl SamplerStats {
    /// Adds the counters of another run (lateness samples are appended, up to the cap).
    pub fn add(&mut self, other: &SamplerStats) {
        self.ticks += other.ticks;
        self.missed_ticks += other.missed_ticks;
        self.sampled += other.sampled;
        self.requests += other.requests;
        self.stale_answers += other.stale_answers;
        self.unanswered += other.unanswered;
        self.late_answers += other.late_answers;
        self.answered += other.answered;
        self.walks_waited += other.walks_waited;
        self.walk_wait += other.walk_wait;
        self.walk_wait_max = self.walk_wait_max.max(other.walk_wait_max);
        self.walks_abandoned += other.walks_abandoned;
        self.idle += other.idle;
        for (mine, theirs) in self.phases.iter_mut().zip(other.phases) {
            *mine += theirs;
        }
        self.capture_time += other.capture_time;
        self.thread_cpu += other.thread_cpu;
        self.capture_max = self.capture_max.max(other.capture_max);
        let room = LATENESS_KEPT.saturating_sub(self.lateness.len());
        self.lateness
            .extend(other.lateness.iter().take(room).copied());
        self.reclaims += other.reclaims;
        self.reclaimed += other.reclaimed;
        self.plan_ticks = other.plan_ticks;
        self.buffered = other.buffered;
    }

    /// How evenly samples were spread inside their blocks: the largest distance of a tenth
    /// of the block's share from 10%, and the share taken after the block ended, both in
    /// percentage points of the samples counted in [`phases`](Self::phases).
    pub fn phase_spread(&self) -> Option<(f64, f64)> {
        let total = self.phases.iter().sum::<u64>();
        if total == 0 {
            return None;
        }
        let share = |n: u64| n as f64 * 100.0 / total as f64;
        let worst = self.phases[..10]
            .iter()
            .map(|&n| (share(n) - 10.0).abs())
            .fold(0.0, f64::max);
        Some((worst, share(self.phases[10])))
    }

    /// The `q`-quantile (0 to 1) of the kept lateness values, in ns.
    pub fn lateness_quantile(&self, q: f64) -> Option<u64> {
        let mut v = self.lateness.clone();
        if v.is_empty() {
            return None;
        }
        v.sort_unstable();
        Some(v[((v.len() - 1) as f64 * q.clamp(0.0, 1.0)).round() as usize])
    }
}

/// How late the sampler thread may wake for a pick and still take it, once the pick's block
/// has ended. Within its block a pick is always taken; past the block, a wake up to this
/// late still gives the block its sample (timestamped when it was taken, so in the next
/// block), and the next block's pick, if it has passed by then, is taken at once. A 1 ms
/// base would otherwise lose every pick that falls closer to its block's end than the
/// thread's wake-up latency: ~4% of its blocks on a busy 2-core machine.
pub const MAX_PICK_LATENESS: Nanos = 1_000_000;

/// How long after a tick an answer may have been captured and still count as that tick's
/// stack. Interrupts are served within microseconds while JIT or interpreter code runs
/// (3-7 µs measured); an answer later than this means the agent was inside a native call
/// or a collection at the tick, and its stack then is unknown.
pub const MAX_ANSWER_DELAY: Nanos = 1_000_000;

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

/// A session's next sample: the block it belongs to and when it is taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Pick {
    block: u64,
    at: Nanos,
}

struct Slot {
    agent: AgentId,
    every: u64,
    paused: bool,
    full: bool,
    recorder: Recorder,
    symbolizer: Arc<dyn Symbolizer>,
    on_full: Option<BufferFullCallback>,
    /// The cohort holding its pending pick, while the session is active: the cohort's id
    /// and the session's membership number in it.
    cohort: Option<(u64, u64)>,
    /// The last block the session sampled (or missed), as of when it left its cohort.
    done: Option<u64>,
    /// Its ticks waiting for the agent's answer, oldest first: when each was taken and the
    /// agent's marker then. A session that stops meanwhile records them without a stack.
    waiting: VecDeque<(Nanos, Option<ProfilerMarker>)>,
}

impl Slot {
    fn active(&self) -> bool {
        !self.paused && !self.full
    }
}

/// A tick waiting for an answer or a walk: when it was taken, the agent's marker then, and
/// which sessions were due.
type WaitingTick = (Nanos, Option<ProfilerMarker>, Vec<SessionId>);

struct Outstanding {
    /// The request's token (0 for a walk).
    token: u64,
    /// A walk pending on the agent's thread (the host's sampler), instead of a request.
    walk: Option<WalkState>,
    /// Ticks waiting for the answer: when each was taken, the agent's marker then, and which
    /// sessions were due.
    ticks: Vec<WaitingTick>,
    /// Forced samples waiting for this answer.
    forced: Vec<ForceDone>,
}

#[derive(Debug, Clone, Copy)]
struct WalkState {
    started: Nanos,
    nudged: bool,
}

/// How long a pending walk may wait for the agent's thread to take it the gentle way (the
/// interrupt) before the sampler nudges it (a signal).
pub const WALK_NUDGE: Nanos = 50_000;
/// How often a pending walk is looked at once nudged.
pub const WALK_POLL: Nanos = 200_000;
/// How long a walk may wait for the agent's thread to be scheduled before it is abandoned
/// (its ticks get no stack). The thread cannot run meanwhile, so its stack cannot change:
/// a late walk still has the tick's stack, and only a thread starved this long loses it.
pub const WALK_ABANDON: Nanos = 100_000_000;

struct AgentSlot {
    shared: Arc<AgentShared>,
    sessions: usize,
    outstanding: Option<Outstanding>,
    /// How many cohorts of its sessions are due at each time, earliest first.
    picks: BTreeMap<Nanos, usize>,
}

/// The sessions that share one pick: same agent, same interval, same time (so the same
/// block). Sessions of one interval share their picks, so most ticks serve a few cohorts,
/// however many sessions there are. A cohort moves on to its next pick as a whole, and a
/// session joins or leaves it in O(1): the sampler's work per tick is per cohort, and only
/// taking the sample itself is per session.
type CohortKey = (Nanos, AgentId, u64);

struct Cohort {
    pick: Pick,
    agent: AgentId,
    every: u64,
    /// Its members as (session, membership number). An entry whose session has left since
    /// (its slot names another cohort or number) is stale: skipped, and dropped when the
    /// cohort is served.
    members: Vec<(SessionId, u64)>,
    /// How many entries are current members.
    live: usize,
}

impl Cohort {
    fn key(&self) -> CohortKey {
        (self.pick.at, self.agent, self.every)
    }
}

/// Where a sample finds room in the process's budget.
enum Room {
    /// In the budget (or in a buffer at its own limit, which takes none of it).
    Free,
    /// In place of the session's own oldest sample (a ring at its share).
    OwnOldest,
    /// Nowhere: the session is full.
    Full,
}

/// What a stopped session leaves: everything needed to build its trace elsewhere.
pub(crate) struct Stopped {
    pub recorder: Recorder,
    pub symbolizer: Arc<dyn Symbolizer>,
}

/// How many samples the unstopped sessions of a process may hold between them by default:
/// 2^23, about 100 MB of sample log (12 bytes a sample) besides the interned stacks.
pub const DEFAULT_MAX_BUFFERED: u64 = 1 << 23;

/// The sampler's policy, independent of threads and real time.
pub(crate) struct SamplerCore {
    pub(crate) base: Nanos,
    epoch: Nanos,
    seed: u64,
    /// The grid: the GCD of the active sessions' intervals (0 when none is active), valid
    /// unless `grid_stale` (a session left the plan: recomputed when next needed).
    grid: u64,
    grid_stale: bool,
    /// How many active sessions have each interval.
    intervals: BTreeMap<u64, usize>,
    sessions: FxHashMap<SessionId, Slot>,
    /// The cohorts, by id, and their picks, earliest first.
    cohorts: FxHashMap<u64, Cohort>,
    queue: BTreeMap<CohortKey, u64>,
    /// The last cohort id given.
    cohort_ids: u64,
    agents: FxHashMap<AgentId, AgentSlot>,
    /// Samples held by the unstopped sessions, and how many they may hold.
    buffered: u64,
    max_buffered: u64,
    /// The budget ran out and has not drained to half since: every session is held to its
    /// fair share (see [`Room`]).
    contended: bool,
    /// The last cohort membership number given.
    members: u64,
    stats: SamplerStats,
    lateness_next: usize,
}

impl SamplerCore {
    pub fn new(base: Nanos, epoch: Nanos, seed: u64) -> Self {
        SamplerCore {
            base,
            epoch,
            seed,
            grid: 0,
            grid_stale: false,
            intervals: BTreeMap::new(),
            sessions: FxHashMap::default(),
            cohorts: FxHashMap::default(),
            queue: BTreeMap::new(),
            cohort_ids: 0,
            agents: FxHashMap::default(),
            buffered: 0,
            max_buffered: DEFAULT_MAX_BUFFERED,
            contended: false,
            members: 0,
            stats: SamplerStats::default(),
            lateness_next: 0,
        }
    }

    /// Lets the unstopped sessions hold at most `max_buffered` samples between them.
    pub fn with_budget(mut self, max_buffered: u64) -> Self {
        self.max_buffered = max_buffered;
        self
    }

    /// The GCD of the active sessions' intervals in base ticks, or 0 if none is active.
    pub fn plan(&self) -> u64 {
        if self.grid_stale {
            self.intervals.keys().fold(0, |g, &k| gcd(g, k))
        } else {
            self.grid
        }
    }

    /// The grid, recomputed if a session left it.
    fn grid(&mut self) -> u64 {
        if self.grid_stale {
            self.grid = self.plan();
            self.grid_stale = false;
        }
        self.grid
    }

    /// Samples the unstopped sessions hold.
    pub fn buffered(&self) -> u64 {
        self.buffered
    }

    /// When the earliest pending pick is due, if any session is active.
    pub fn next_wake(&self) -> Option<Nanos> {
        self.queue.first_key_value().map(|(&(at, _, _), _)| at)
    }

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
            self.publish_due(agent);
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
            },
        );
        self.queue.insert((pick.at, agent, every), cid);
        if let Some(a) = self.agents.get_mut(&agent) {
            *a.picks.entry(pick.at).or_insert(0) += 1;
        }
        self.publish_due(agent);
        cid
    }

    /// Cohort `cid` (out of the queue) moves on to `pick`; into the cohort already there, if
    /// any (the smaller one's members move).
    fn requeue(&mut self, cid: u64, pick: Pick) {
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
        self.publish_due(agent);
    }

    /// A cohort of `agent` due at `at` left the queue.
    fn cohort_gone(&mut self, agent: AgentId, at: Nanos) {
        if let Some(agent) = self.agents.get_mut(&agent) {
            if let Some(n) = agent.picks.get_mut(&at) {
                *n -= 1;
                if *n == 0 {
                    agent.picks.remove(&at);
                }
            }
        }
    }

    /// Tells `agent` when its next stack is due (the earliest pick of its sessions).
    fn publish_due(&self, agent: AgentId) {
        if let Some(agent) = self.agents.get(&agent) {
            agent
                .shared
                .set_next_due(agent.picks.first_key_value().map(|(&at, _)| at));
        }
    }

    /// Session `id` joins (`true`) or leaves the plan: the count of its interval, the grid
    /// and its pick. Called on each change of [`Slot::active`], after it.
    fn plan_change(&mut self, id: SessionId, joins: bool) {
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

    /// Whether a pick of a session of interval `k` can still be taken at `now`.
    fn servable(&self, k: u64, pick: Pick, now: Nanos) -> bool {
        let block_end = self.epoch + (pick.block + 1) * k * self.base;
        now < block_end || now - pick.at <= MAX_PICK_LATENESS
    }

    /// The next pick of active session `id`: in a block after the last one it used, and
    /// after `from` (its start, or `now`); one that has passed by `now` is taken only if it
    /// can still be served (a late wake, or a start the sampler heard of late).
    fn schedule(&mut self, id: SessionId, from: Nanos, now: Nanos) {
        let Some(slot) = self.sessions.get(&id).filter(|s| s.active()) else {
            return;
        };
        let pick = self.next_pick(slot.every, slot.done, from, now, 1);
        self.join_pick(id, pick);
    }

    /// The next pick of sessions of interval `k` whose last block was `done`, after `from`
    /// and servable at `now`. Blocks skipped because their pick can no longer be served
    /// are counted as missed, `n` times (for `n` sessions).
    fn next_pick(&mut self, k: u64, done: Option<u64>, from: Nanos, now: Nanos, n: u64) -> Pick {
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
        let servable_from = now.saturating_sub(MAX_PICK_LATENESS + epoch) / (k * base);
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
            if p.at > from && (p.at > now || self.servable(k, p, now)) {
                return p;
            }
            if p.at > from {
                self.stats.missed_ticks += n;
            }
            block += 1;
        }
    }

    pub fn start(&mut self, s: SessionStart, now: Nanos) {
        let agent = self.agents.entry(s.agent.id).or_insert_with(|| AgentSlot {
            shared: s.agent.clone(),
            sessions: 0,
            outstanding: None,
            picks: BTreeMap::new(),
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
                agent.shared.set_next_due(None);
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
            let step = if waited >= WALK_ABANDON {
                PollStep::Abandon
            } else if !walk.nudged && waited >= WALK_NUDGE {
                PollStep::Nudge
            } else {
                PollStep::Look
            };
            let stack = match sampler.poll(step) {
                Sampled::Pending if step != PollStep::Abandon => {
                    if let Some(w) = agent.outstanding.as_mut().and_then(|o| o.walk.as_mut()) {
                        w.nudged |= step == PollStep::Nudge;
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
                if w.nudged {
                    WALK_POLL
                } else {
                    (w.started + WALK_NUDGE).saturating_sub(now)
                }
            })
            .min()
    }

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
        // The due sessions, by agent (in id order, so runs are deterministic).
        let mut by_agent: BTreeMap<AgentId, Vec<SessionId>> = BTreeMap::new();
        for &((at, agent, every), cid) in &due {
            self.queue.remove(&(at, agent, every));
            self.cohort_gone(agent, at);
            self.note_lateness(now - at);
            let Some(pick) = self.cohorts.get(&cid).map(|c| c.pick) else {
                continue;
            };
            let servable = self.servable(every, pick, now);
            let Some(cohort) = self.cohorts.get_mut(&cid) else {
                continue;
            };
            let n = cohort.live as u64;
            if servable {
                // Its current members (stale entries dropped now).
                let sessions = &self.sessions;
                cohort
                    .members
                    .retain(|(id, m)| sessions.get(id).and_then(|s| s.cohort) == Some((cid, *m)));
                let block_len = every * self.base;
                let into = now.saturating_sub(self.epoch + cohort.pick.block * block_len);
                self.stats.phases[(into * 10 / block_len).min(10) as usize] += n;
                by_agent
                    .entry(agent)
                    .or_default()
                    .extend(cohort.members.iter().map(|&(id, _)| id));
            } else {
                // Woke too late for the pick: that block has no sample.
                self.stats.missed_ticks += n;
            }
        }
        for (agent_id, mut sessions) in by_agent {
            sessions.sort_unstable();
            self.sample_agent(agent_id, sessions, now);
        }
        // Each cohort moves on as a whole to its next pick (the sessions that filled their
        // buffers meanwhile have left it).
        for ((at, _, every), cid) in due {
            let Some(cohort) = self.cohorts.get(&cid) else {
                continue; // Emptied while sampled.
            };
            let (block, n) = (cohort.pick.block, cohort.live as u64);
            let pick = self.next_pick(every, Some(block), at, now, n);
            self.requeue(cid, pick);
        }
    }

    /// Takes one stack of `agent_id` for `sessions`, due at `now`.
    fn sample_agent(&mut self, agent_id: AgentId, sessions: Vec<SessionId>, now: Nanos) {
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
                    Sampled::Pending => {
                        // The agent's thread has not run since the tick: its walk is
                        // polled while the sampler serves the others.
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

    fn close_if_stale(&mut self, agent_id: AgentId) {
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
    fn settle_ticks(&mut self, ticks: Vec<WaitingTick>, stack: Option<&RawStack>) {
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
            }
        }
    }

    fn record(
        &mut self,
        id: SessionId,
        at: Nanos,
        stack: Option<&RawStack>,
        marker: Option<ProfilerMarker>,
    ) {
        let Some(slot) = self.sessions.get_mut(&id) else {
            return;
        };
        if slot.full {
            return;
        }
        // A buffer at its own limit takes nothing more from the budget (it is full, or a
        // ring that replaces its oldest sample), and while the budget has room any session
        // takes it: the common case, one lookup.
        let room =
            if slot.recorder.is_full() || !self.contended && self.buffered < self.max_buffered {
                Room::Free
            } else {
                self.room_for(id)
            };
        let Some(slot) = self.sessions.get_mut(&id) else {
            return;
        };
        let added = match room {
            Room::Free => slot.recorder.add(at, stack, marker),
            Room::OwnOldest => {
                slot.recorder.drop_oldest();
                self.buffered -= 1;
                slot.recorder.add(at, stack, marker)
            }
            Room::Full => Added::Full,
        };
        match added {
            Added::Stored => self.buffered += 1,
            Added::Replaced => {}
            Added::Full => self.fill(id),
        }
    }

    /// Session `id` is full (decision 4): it stops taking samples and its host is told, once.
    fn fill(&mut self, id: SessionId) {
        let Some(slot) = self.sessions.get_mut(&id) else {
            return;
        };
        let was_active = slot.active();
        slot.full = true;
        if let Some(notify) = slot.on_full.take() {
            notify();
        }
        if was_active {
            self.plan_change(id, false);
        }
    }

    /// The share of the budget each unstopped session may hold once it has run out.
    fn fair_share(&self) -> u64 {
        self.max_buffered / self.sessions.len().max(1) as u64
    }

    /// Where session `id`'s next sample finds room once the budget has run out (see "Fair
    /// shares" in the module docs). O(1), but for the cut it may make (amortised).
    fn room_for(&mut self, id: SessionId) -> Room {
        let Some(slot) = self.sessions.get(&id) else {
            return Room::Full;
        };
        self.contended = true;
        let held = slot.recorder.len() as u64;
        let ring = slot.recorder.policy() == BufferPolicy::Ring;
        let share = self.fair_share();
        if held < share && (self.buffered < self.max_buffered || self.reclaim(share)) {
            return Room::Free;
        }
        // At its share (or, impossibly, with nobody above theirs): it yields.
        if ring && held > 0 {
            Room::OwnOldest
        } else {
            Room::Full
        }
    }

    /// Cuts every session holding more than `share` samples down to `share`: a ring drops
    /// its oldest samples and goes on; any other drops its newest, so that its trace is
    /// the samples it took first, and is full from now on (told once, as at its own
    /// `maxBufferSize`). O(sessions + samples taken back). Whether the budget has room now.
    fn reclaim(&mut self, share: u64) -> bool {
        self.stats.reclaims += 1;
        let mut filled = Vec::new();
        let mut taken = 0;
        for (&id, slot) in self.sessions.iter_mut() {
            let held = slot.recorder.len() as u64;
            if held <= share {
                continue;
            }
            let ring = slot.recorder.policy() == BufferPolicy::Ring;
            for _ in share..held {
                if ring {
                    slot.recorder.drop_oldest();
                } else {
                    slot.recorder.drop_newest();
                }
            }
            if !ring && !slot.full {
                filled.push(id);
            }
            taken += held - share;
        }
        self.buffered -= taken;
        self.stats.reclaimed += taken;
        // Told in id order, so that runs are deterministic.
        filled.sort_unstable();
        for id in filled {
            self.fill(id);
        }
        self.buffered < self.max_buffered
    }

    /// `n` samples left the budget (a session stopped or restarted): once it has drained
    /// to half, sessions may again take more than their share.
    fn release(&mut self, n: u64) {
        self.buffered -= n;
        if self.buffered <= self.max_buffered / 2 {
            self.contended = false;
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

    pub fn stats(&self) -> SamplerStats {
        SamplerStats {
            plan_ticks: self.plan(),
            buffered: self.buffered(),
            ..self.stats.clone()
        }
    }
}
