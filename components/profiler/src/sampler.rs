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
//! gains a sample in the block it is in. A session that starts (or resumes) in a block
//! whose pick has passed takes its first sample in the next block.
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

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::agent::{AgentId, AgentShared, Answer, Sampled};
use crate::frame::{RawStack, Symbolizer};
use crate::interval::gcd;
use crate::recorder::{Added, Recorder};
use crate::time::Nanos;
use crate::trace::{ProfilerMarker, ProfilerTrace};

/// Identifies a session within its group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SessionId(pub u64);

/// Called once, on the sampler thread, when a session's buffer is found full.
pub type BufferFullCallback = Box<dyn FnOnce() + Send>;
/// Called once, on a trace-building thread, with a stopped session's trace.
pub type TraceCallback = Box<dyn FnOnce(ProfilerTrace) + Send>;

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
    Stop(SessionId, Option<TraceCallback>),
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
    /// Lateness (actual wake time minus the pick's time) of the most recent picks, in ns.
    pub lateness: Vec<u64>,
    /// The current plan: the GCD of the active sessions' intervals, in base ticks (0: idle).
    pub plan_ticks: u64,
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
        self.plan_ticks = other.plan_ticks;
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
    /// The pending pick, while the session is active.
    next: Option<Pick>,
    /// The last block the session sampled (or missed).
    done: Option<u64>,
}

impl Slot {
    fn active(&self) -> bool {
        !self.paused && !self.full
    }
}

struct Outstanding {
    token: u64,
    /// Ticks waiting for the answer: when each was taken, the agent's marker then, and which
    /// sessions were due.
    ticks: Vec<(Nanos, Option<ProfilerMarker>, Vec<SessionId>)>,
    /// Forced samples waiting for this answer.
    forced: Vec<ForceDone>,
}

struct AgentSlot {
    shared: Arc<AgentShared>,
    sessions: usize,
    outstanding: Option<Outstanding>,
}

/// What a stopped session leaves: everything needed to build its trace elsewhere.
pub(crate) struct Stopped {
    pub recorder: Recorder,
    pub symbolizer: Arc<dyn Symbolizer>,
}

/// The sampler's policy, independent of threads and real time.
pub(crate) struct SamplerCore {
    pub(crate) base: Nanos,
    epoch: Nanos,
    seed: u64,
    /// The grid: the GCD of the active sessions' intervals (0 when none is active).
    grid: u64,
    sessions: BTreeMap<SessionId, Slot>,
    agents: FxHashMap<AgentId, AgentSlot>,
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
            sessions: BTreeMap::new(),
            agents: FxHashMap::default(),
            stats: SamplerStats::default(),
            lateness_next: 0,
        }
    }

    /// The GCD of the active sessions' intervals in base ticks, or 0 if none is active.
    pub fn plan(&self) -> u64 {
        self.grid
    }

    /// When the earliest pending pick is due, if any session is active.
    pub fn next_wake(&self) -> Option<Nanos> {
        self.sessions
            .values()
            .filter(|s| s.active())
            .filter_map(|s| s.next.map(|p| p.at))
            .min()
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

    /// Re-plans: recomputes the grid and gives every active session without a pick its
    /// next one after `now`.
    fn replan(&mut self, now: Nanos) {
        self.grid = self
            .sessions
            .values()
            .filter(|s| s.active())
            .fold(0, |g, s| gcd(g, s.every));
        let ids: Vec<SessionId> = self
            .sessions
            .iter()
            .filter(|(_, s)| s.active() && s.next.is_none())
            .map(|(id, _)| *id)
            .collect();
        for id in ids {
            self.schedule(id, now, false);
        }
        self.publish_due();
    }

    /// Tells every agent when its next stack is due (the earliest pick of its sessions).
    fn publish_due(&self) {
        for (agent_id, agent) in &self.agents {
            let due = self
                .sessions
                .values()
                .filter(|s| s.agent == *agent_id && s.active())
                .filter_map(|s| s.next.map(|p| p.at))
                .min();
            agent.shared.set_next_due(due);
        }
    }

    /// Whether a pick of a session of interval `k` can still be taken at `now`.
    fn servable(&self, k: u64, pick: Pick, now: Nanos) -> bool {
        let block_end = self.epoch + (pick.block + 1) * k * self.base;
        now < block_end || now - pick.at <= MAX_PICK_LATENESS
    }

    /// The next pick of session `id`: in a block after the last one it used, and either
    /// after `now` or, when the sampler is serving a late wake (`late_wake`), one that has
    /// passed but can still be taken. Blocks skipped on a late wake are counted as missed;
    /// a session that starts or resumes in a block whose pick has passed simply begins in
    /// the next one.
    fn schedule(&mut self, id: SessionId, now: Nanos, late_wake: bool) {
        let (g, base, epoch) = (self.grid.max(1), self.base, self.epoch);
        let Some(slot) = self.sessions.get(&id) else {
            return;
        };
        let k = slot.every;
        let current = now.saturating_sub(epoch) / (k * base);
        let mut block = match slot.done {
            Some(d) if late_wake => d + 1,
            Some(d) => current.max(d + 1),
            // A new session's first sample is in the first block that begins after it
            // started: never sooner than the block's start, so a session with a long
            // interval has no timed sample before one has begun (Force Sample tests count
            // on it), and the mean gap stays the interval.
            None if now > epoch + current * k * base => current + 1,
            None => current,
        };
        let pick = loop {
            let p = self.pick(k, g, block);
            if p.at > now || (late_wake && self.servable(k, p, now)) {
                break p;
            }
            if late_wake {
                self.stats.missed_ticks += 1;
            }
            block += 1;
        };
        if let Some(slot) = self.sessions.get_mut(&id) {
            slot.next = Some(pick);
        }
    }

    pub fn start(&mut self, s: SessionStart, now: Nanos) {
        let agent = self.agents.entry(s.agent.id).or_insert_with(|| AgentSlot {
            shared: s.agent.clone(),
            sessions: 0,
            outstanding: None,
        });
        agent.sessions += 1;
        self.sessions.insert(
            s.id,
            Slot {
                agent: s.agent.id,
                every: s.every,
                paused: s.paused,
                full: false,
                recorder: s.recorder,
                symbolizer: s.symbolizer,
                on_full: s.on_full,
                next: None,
                done: None,
            },
        );
        self.replan(now);
    }

    pub fn set_paused(&mut self, id: SessionId, paused: bool, now: Nanos) {
        if let Some(slot) = self.sessions.get_mut(&id) {
            slot.paused = paused;
            if paused {
                slot.next = None;
            }
        }
        self.replan(now);
    }

    /// Removes a session. Ticks of it still waiting for an answer become stackless samples.
    pub fn stop(&mut self, id: SessionId, now: Nanos) -> Option<Stopped> {
        let agent_id = self.sessions.get(&id)?.agent;
        let mut waiting = Vec::new();
        if let Some(agent) = self.agents.get_mut(&agent_id) {
            if let Some(out) = agent.outstanding.as_mut() {
                for (at, marker, due) in &mut out.ticks {
                    if let Some(pos) = due.iter().position(|d| *d == id) {
                        due.swap_remove(pos);
                        waiting.push((*at, *marker));
                    }
                }
            }
            agent.sessions -= 1;
            if agent.sessions == 0 {
                agent.shared.set_next_due(None);
                self.agents.remove(&agent_id);
            }
        }
        for (at, marker) in waiting {
            self.record(id, at, None, marker);
        }
        let slot = self.sessions.remove(&id)?;
        self.replan(now);
        Some(Stopped {
            recorder: slot.recorder,
            symbolizer: slot.symbolizer,
        })
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

    /// Serves every pick due at `now` (the sampler woke at `now`).
    pub fn on_wake(&mut self, now: Nanos) {
        let due: Vec<(SessionId, Pick)> = self
            .sessions
            .iter()
            .filter(|(_, s)| s.active())
            .filter_map(|(id, s)| s.next.filter(|p| p.at <= now).map(|p| (*id, p)))
            .collect();
        if due.is_empty() {
            return;
        }
        self.stats.ticks += 1;
        // The due sessions, by agent (both in id order, so runs are deterministic).
        let mut by_agent: BTreeMap<AgentId, Vec<SessionId>> = BTreeMap::new();
        for (id, pick) in &due {
            self.note_lateness(now - pick.at);
            let Some(slot) = self.sessions.get_mut(id) else {
                continue;
            };
            slot.next = None;
            slot.done = Some(pick.block);
            let (every, agent) = (slot.every, slot.agent);
            if self.servable(every, *pick, now) {
                let block_len = every * self.base;
                let into = now.saturating_sub(self.epoch + pick.block * block_len);
                self.stats.phases[(into * 10 / block_len).min(10) as usize] += 1;
                by_agent.entry(agent).or_default().push(*id);
            } else {
                // Woke too late for the pick: that block has no sample.
                self.stats.missed_ticks += 1;
            }
        }
        for (agent_id, sessions) in by_agent {
            self.sample_agent(agent_id, sessions, now);
        }
        for (id, _) in due {
            self.schedule(id, now, true);
        }
        self.publish_due();
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
                let sampled = sampler();
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
                    Sampled::Unavailable => {}
                }
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
            Some(out) if out.token == answer.token => {
                for (at, marker, due) in out.ticks {
                    let in_time = answer.captured_at.saturating_sub(at) <= MAX_ANSWER_DELAY;
                    if !in_time {
                        self.stats.late_answers += 1;
                    }
                    for id in due {
                        self.record(id, at, in_time.then_some(&answer.stack), marker);
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
            .is_some_and(|o| agent.shared.is_stale(o.token));
        if !stale {
            return;
        }
        let Some(out) = agent.outstanding.take() else {
            return;
        };
        self.stats.unanswered += 1;
        for (at, marker, due) in out.ticks {
            for id in due {
                self.record(id, at, None, marker);
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
        if slot.recorder.add(at, stack, marker) == Added::Full {
            // Decision 4: stop taking samples and tell the host, once.
            slot.full = true;
            slot.next = None;
            if let Some(notify) = slot.on_full.take() {
                notify();
            }
            self.replan(at);
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
            ..self.stats.clone()
        }
    }
}
