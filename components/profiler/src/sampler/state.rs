//! The sampler core's data: its sessions, agents, cohorts and picks, and the count of the
//! budget. What each part does with them is in the sibling files (`plan.rs`, `tick.rs`,
//! `walks.rs`, `forced.rs`, `budget.rs`, `sessions.rs`).

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::agent::{AgentId, AgentShared};
use crate::frame::Symbolizer;
use crate::interval::gcd;
use crate::recorder::Recorder;
use crate::time::Nanos;
use crate::trace::ProfilerMarker;

use super::messages::{BufferFullCallback, BuildRequest, ForceDone, SessionId, Stopped};
use super::stats::SamplerStats;

/// A session's next sample: the block it belongs to and when it is taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Pick {
    pub(super) block: u64,
    pub(super) at: Nanos,
}

pub(super) struct Slot {
    pub(super) agent: AgentId,
    pub(super) every: u64,
    pub(super) paused: bool,
    pub(super) full: bool,
    pub(super) recorder: Recorder,
    pub(super) symbolizer: Arc<dyn Symbolizer>,
    pub(super) on_full: Option<BufferFullCallback>,
    /// The cohort holding its pending pick, while the session is active: the cohort's id
    /// and the session's membership number in it.
    pub(super) cohort: Option<(u64, u64)>,
    /// The last block the session sampled (or missed), as of when it left its cohort.
    pub(super) done: Option<u64>,
    /// Its ticks waiting for the agent's answer, oldest first: when each was taken and the
    /// agent's marker then. A session that stops meanwhile records them without a stack.
    pub(super) waiting: VecDeque<(Nanos, Option<ProfilerMarker>)>,
    /// Stopped while some of its ticks waited for their stack: it takes no more samples,
    /// and ends when they have it, or at this time without it (`sessions.rs`, "stop").
    pub(super) stopping: Option<Nanos>,
}

impl Slot {
    pub(super) fn active(&self) -> bool {
        !self.paused && !self.full && self.stopping.is_none()
    }
}

/// A tick waiting for an answer or a walk: when it was taken, the agent's marker then, and
/// which sessions were due.
pub(super) type WaitingTick = (Nanos, Option<ProfilerMarker>, Vec<SessionId>);

pub(super) struct Outstanding {
    /// The request's token (0 for a walk).
    pub(super) token: u64,
    /// A walk pending on the agent's thread (the host's sampler), instead of a request.
    pub(super) walk: Option<WalkState>,
    /// Ticks waiting for the answer: when each was taken, the agent's marker then, and which
    /// sessions were due.
    pub(super) ticks: Vec<WaitingTick>,
    /// Forced samples waiting for this answer.
    pub(super) forced: Vec<ForceDone>,
}

#[derive(Debug, Clone, Copy)]
pub(super) struct WalkState {
    pub(super) started: Nanos,
    pub(super) nudged: bool,
    /// The host answered [`Sampled::Deferred`](crate::Sampled::Deferred): looked at each
    /// tick or every [`WALK_LOOK`](super::WALK_LOOK), never nudged nor abandoned.
    pub(super) deferred: bool,
}

pub(super) struct AgentSlot {
    pub(super) shared: Arc<AgentShared>,
    pub(super) sessions: usize,
    pub(super) outstanding: Option<Outstanding>,
    /// How many cohorts of its sessions are due at each time, earliest first.
    pub(super) picks: BTreeMap<Nanos, usize>,
    /// The thread's CPU time as last read ([`StackSampler::cpu_time`](crate::StackSampler)),
    /// and when that value was first read: the thread has not run since then while it
    /// reads the same.
    pub(super) cpu_seen: Option<(Nanos, Nanos)>,
}

/// The sessions that share one pick: same agent, same interval, same time (so the same
/// block). Sessions of one interval share their picks, so most ticks serve a few cohorts,
/// however many sessions there are. A cohort moves on to its next pick as a whole, and a
/// session joins or leaves it in O(1): the sampler's work per tick is per cohort, and only
/// taking the sample itself is per session.
pub(super) type CohortKey = (Nanos, AgentId, u64);

pub(super) struct Cohort {
    pub(super) pick: Pick,
    pub(super) agent: AgentId,
    pub(super) every: u64,
    /// Its members as (session, membership number). An entry whose session has left since
    /// (its slot names another cohort or number) is stale: skipped, and dropped when the
    /// cohort is served.
    pub(super) members: Vec<(SessionId, u64)>,
    /// How many entries are current members.
    pub(super) live: usize,
    /// Where the next tick's window of members starts, when the cohort has more than
    /// [`max_served_per_tick`] (a tick serves that many, in turn).
    pub(super) next: usize,
}

/// The most sessions of one cohort the sampler records into per second of its interval. A
/// tick's work is proportional to the sessions it records into (each interns the stack in
/// its own buffer, ~1.5 µs a session), so 100,000 profilers at one interval would keep the
/// sampler thread busy all the time: on a loaded machine it would get no more than its fair
/// share of a core and wake late for every other session of the process (issue 40). Past
/// this rate, a cohort's members take its ticks in turn, [`max_served_per_tick`] a tick,
/// each a sample every ⌈members / that⌉ of its blocks (decision 0052). The bound is a rate,
/// so that it bounds the sampler thread's work whatever the base interval: 1,024 sessions
/// a tick at the default 20 ms, 51 at 1 ms.
pub const MAX_SERVED_PER_SECOND: u64 = 51_200;

/// How many members of a cohort whose blocks are `block_len` long a tick records into, at
/// most (at least one).
pub fn max_served_per_tick(block_len: Nanos) -> usize {
    (u128::from(MAX_SERVED_PER_SECOND) * u128::from(block_len) / 1_000_000_000).max(1) as usize
}

impl Cohort {
    pub(super) fn key(&self) -> CohortKey {
        (self.pick.at, self.agent, self.every)
    }
}

/// How many samples the unstopped sessions of a process may hold between them by default:
/// 2^23, about 100 MB of sample log (12 bytes a sample) besides the interned stacks.
pub const DEFAULT_MAX_BUFFERED: u64 = 1 << 23;

/// The sampler's policy, independent of threads and real time.
pub(crate) struct SamplerCore {
    pub(crate) base: Nanos,
    pub(super) epoch: Nanos,
    pub(super) seed: u64,
    /// The grid: the GCD of the active sessions' intervals (0 when none is active), valid
    /// unless `grid_stale` (a session left the plan: recomputed when next needed).
    pub(super) grid: u64,
    pub(super) grid_stale: bool,
    /// How many active sessions have each interval.
    pub(super) intervals: BTreeMap<u64, usize>,
    pub(super) sessions: FxHashMap<SessionId, Slot>,
    /// The cohorts, by id, and their picks, earliest first.
    pub(super) cohorts: FxHashMap<u64, Cohort>,
    pub(super) queue: BTreeMap<CohortKey, u64>,
    /// The last cohort id given.
    pub(super) cohort_ids: u64,
    pub(super) agents: FxHashMap<AgentId, AgentSlot>,
    /// Samples held by the unstopped sessions, and how many they may hold.
    pub(super) buffered: u64,
    pub(super) max_buffered: u64,
    /// The budget ran out and has not drained to half since: every session is held to its
    /// fair share (see `budget.rs`).
    pub(super) contended: bool,
    /// The last cohort membership number given.
    pub(super) members: u64,
    pub(super) stats: SamplerStats,
    pub(super) lateness_next: usize,
    /// Who wants the trace of each stopping session (see [`Slot::stopping`]).
    pub(super) stopping: FxHashMap<SessionId, Option<BuildRequest>>,
    /// Sessions that have ended since the thread last took them, with who wants their trace.
    pub(super) finished: Vec<(Stopped, Option<BuildRequest>)>,
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
            stopping: FxHashMap::default(),
            finished: Vec::new(),
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
    pub(super) fn grid(&mut self) -> u64 {
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

    pub fn stats(&self) -> SamplerStats {
        SamplerStats {
            plan_ticks: self.plan(),
            buffered: self.buffered(),
            ..self.stats.clone()
        }
    }
}
