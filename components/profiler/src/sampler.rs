//! The sampler: one thread per [`ProfilerGroup`](crate::ProfilerGroup), ticking on a grid.
//!
//! [`SamplerCore`] is the whole policy, driven by explicit times so that tests run it with a
//! fake clock; [`run`] is the thread around it, sleeping to absolute deadlines.
//!
//! # The plan
//!
//! Ticks are numbered from the sampler's epoch in base intervals: tick `t` is due at
//! `epoch + t * base`. A session whose interval is `k` base intervals takes exactly the ticks
//! that are multiples of `k`. The sampler therefore ticks on the grid of the GCD of the active
//! sessions' intervals, and only wakes for grid ticks on which some session is due. Because
//! every session is anchored to the same epoch, adding, removing, pausing or resuming a session
//! (a re-plan) never shifts any other session's ticks. Deadlines are absolute, so oversleeping
//! one tick does not delay the next; a tick found to be already past when the previous one is
//! done is skipped and counted in [`SamplerStats::missed_ticks`].
//!
//! # A tick
//!
//! For every agent with due sessions: if the agent runs no script, the sampler itself records
//! an idle sample (no stack); otherwise it asks the agent once, and the one stack the agent
//! answers with is handed to all of that agent's due sessions. While a request is outstanding,
//! further due ticks of that agent queue up and are back-filled with the answer. A request the
//! agent can no longer answer (it left that script) is closed: its ticks become samples
//! without a stack, and a late answer to it is dropped.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crossbeam_channel::{select, Receiver};
use rustc_hash::FxHashMap;

use crate::agent::{AgentId, AgentShared, Answer};
use crate::frame::{RawStack, Symbolizer};
use crate::interval::gcd;
use crate::recorder::{Added, Recorder};
use crate::time::{Clock, Nanos};
use crate::trace::ProfilerTrace;

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
}

/// Messages from the group to its sampler thread.
pub(crate) enum Control {
    Start(Box<SessionStart>),
    Pause(SessionId),
    Resume(SessionId),
    Stop(SessionId, Option<TraceCallback>),
    Stats(crossbeam_channel::Sender<SamplerStats>),
    Shutdown,
}

/// Counters of a sampler run.
#[derive(Debug, Clone, Default)]
pub struct SamplerStats {
    /// Ticks processed.
    pub ticks: u64,
    /// Due ticks skipped because the thread woke too late for them.
    pub missed_ticks: u64,
    /// Interrupt requests sent to agents.
    pub requests: u64,
    /// Answers that arrived for a request already closed.
    pub stale_answers: u64,
    /// Requests closed without an answer.
    pub unanswered: u64,
    /// Lateness (actual wake time minus deadline) of the most recent ticks, in ns.
    pub lateness: Vec<u64>,
    /// The current plan: the GCD of the active sessions' intervals, in base ticks (0: idle).
    pub plan_ticks: u64,
}

const LATENESS_KEPT: usize = 1 << 16;

struct Slot {
    agent: AgentId,
    every: u64,
    paused: bool,
    full: bool,
    recorder: Recorder,
    symbolizer: Arc<dyn Symbolizer>,
    on_full: Option<BufferFullCallback>,
}

impl Slot {
    fn active(&self) -> bool {
        !self.paused && !self.full
    }
}

struct Outstanding {
    token: u64,
    /// Ticks waiting for the answer: when each was taken and which sessions were due.
    ticks: Vec<(Nanos, Vec<SessionId>)>,
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
    base: Nanos,
    epoch: Nanos,
    /// The last tick processed or skipped.
    last_tick: u64,
    sessions: BTreeMap<SessionId, Slot>,
    agents: FxHashMap<AgentId, AgentSlot>,
    stats: SamplerStats,
    lateness_next: usize,
}

impl SamplerCore {
    pub fn new(base: Nanos, epoch: Nanos) -> Self {
        SamplerCore {
            base,
            epoch,
            last_tick: 0,
            sessions: BTreeMap::new(),
            agents: FxHashMap::default(),
            stats: SamplerStats::default(),
            lateness_next: 0,
        }
    }

    /// The time tick `tick` is due.
    pub fn deadline(&self, tick: u64) -> Nanos {
        self.epoch + tick * self.base
    }

    /// The GCD of the active sessions' intervals in base ticks, or 0 if none is active.
    pub fn plan(&self) -> u64 {
        self.sessions
            .values()
            .filter(|s| s.active())
            .fold(0, |g, s| gcd(g, s.every))
    }

    /// The next tick (after `now` and after the last one processed) on which a session is due.
    pub fn next_tick(&self, now: Nanos) -> Option<u64> {
        let current = now.saturating_sub(self.epoch) / self.base;
        let after = current.max(self.last_tick);
        self.sessions
            .values()
            .filter(|s| s.active())
            .map(|s| (after / s.every + 1) * s.every)
            .min()
    }

    pub fn start(&mut self, s: SessionStart) {
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
                paused: false,
                full: false,
                recorder: s.recorder,
                symbolizer: s.symbolizer,
                on_full: s.on_full,
            },
        );
    }

    pub fn set_paused(&mut self, id: SessionId, paused: bool) {
        if let Some(slot) = self.sessions.get_mut(&id) {
            slot.paused = paused;
        }
    }

    /// Removes a session. Ticks of it still waiting for an answer become stackless samples.
    pub fn stop(&mut self, id: SessionId) -> Option<Stopped> {
        let agent_id = self.sessions.get(&id)?.agent;
        let mut waiting = Vec::new();
        if let Some(agent) = self.agents.get_mut(&agent_id) {
            if let Some(out) = agent.outstanding.as_mut() {
                for (at, due) in &mut out.ticks {
                    if let Some(pos) = due.iter().position(|d| *d == id) {
                        due.swap_remove(pos);
                        waiting.push(*at);
                    }
                }
            }
            agent.sessions -= 1;
            if agent.sessions == 0 {
                self.agents.remove(&agent_id);
            }
        }
        for at in waiting {
            self.record(id, at, None);
        }
        let slot = self.sessions.remove(&id)?;
        Some(Stopped {
            recorder: slot.recorder,
            symbolizer: slot.symbolizer,
        })
    }

    /// Processes tick `tick`, woken at `now`.
    pub fn on_tick(&mut self, tick: u64, now: Nanos) {
        let lateness = now.saturating_sub(self.deadline(tick));
        self.note_lateness(lateness);
        self.stats.ticks += 1;
        let current = now.saturating_sub(self.epoch) / self.base;
        // Due ticks between this one and now were slept through: they are skipped.
        if current > tick {
            self.stats.missed_ticks += self
                .sessions
                .values()
                .filter(|s| s.active())
                .map(|s| current / s.every - tick / s.every)
                .sum::<u64>();
        }
        self.last_tick = tick.max(current);

        // The due sessions, by agent (both in id order, so runs are deterministic).
        let mut due: BTreeMap<AgentId, Vec<SessionId>> = BTreeMap::new();
        for (id, slot) in &self.sessions {
            if slot.active() && tick.is_multiple_of(slot.every) {
                due.entry(slot.agent).or_default().push(*id);
            }
        }
        for (agent_id, sessions) in due {
            self.close_if_stale(agent_id);
            let agent = self.agents.get_mut(&agent_id).expect("a session's agent");
            if !agent.shared.in_script() {
                for id in sessions {
                    self.record(id, now, None);
                }
            } else if let Some(out) = agent.outstanding.as_mut() {
                out.ticks.push((now, sessions));
            } else {
                let number = NEXT_REQUEST.fetch_add(1, Ordering::Relaxed);
                let token = agent.shared.request(number);
                self.stats.requests += 1;
                agent.outstanding = Some(Outstanding {
                    token,
                    ticks: vec![(now, sessions)],
                });
            }
        }
    }

    /// An agent answered: back-fills every tick waiting on that request.
    pub fn on_answer(&mut self, answer: Answer) {
        let Some(agent) = self.agents.get_mut(&answer.agent) else {
            self.stats.stale_answers += 1;
            return;
        };
        match agent.outstanding.take() {
            Some(out) if out.token == answer.token => {
                for (at, due) in out.ticks {
                    for id in due {
                        self.record(id, at, Some(&answer.stack));
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
        let out = agent.outstanding.take().expect("checked above");
        self.stats.unanswered += 1;
        for (at, due) in out.ticks {
            for id in due {
                self.record(id, at, None);
            }
        }
    }

    fn record(&mut self, id: SessionId, at: Nanos, stack: Option<&RawStack>) {
        let Some(slot) = self.sessions.get_mut(&id) else {
            return;
        };
        if slot.full {
            return;
        }
        if slot.recorder.add(at, stack) == Added::Full {
            // Decision 4: stop taking samples and tell the host, once.
            slot.full = true;
            if let Some(notify) = slot.on_full.take() {
                notify();
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

    pub fn stats(&self) -> SamplerStats {
        SamplerStats {
            plan_ticks: self.plan(),
            ..self.stats.clone()
        }
    }
}

/// Builds a stopped session's trace on a thread of its own and hands it to `done`.
pub(crate) fn build_elsewhere(stopped: Stopped, done: Option<TraceCallback>) {
    let Some(done) = done else { return };
    let spawned = std::thread::Builder::new()
        .name("jsprof-trace".into())
        .spawn(move || done(stopped.recorder.build(&*stopped.symbolizer)));
    if let Err(e) = spawned {
        // No thread could be made: the trace is lost, but the engine goes on.
        eprintln!("jsprof: cannot start the trace builder thread: {e}");
    }
}

/// Base intervals below this wake the sampler thread as soon as an agent answers.
const WAKE_ON_ANSWERS_BELOW: Nanos = 10_000_000;

/// The sampler thread's loop. Returns when told to shut down or when the group is gone.
pub(crate) fn run(
    mut core: SamplerCore,
    clock: Arc<dyn Clock>,
    control: Receiver<Control>,
    answers: Receiver<Answer>,
) {
    // Linux lets a sleeping thread wake up to 50 µs late by default ("timer slack"), which is
    // most of the tick jitter at a 1 ms base; the sampler asks for 1 µs.
    #[cfg(target_os = "linux")]
    let _ = nix::sys::prctl::set_timerslack(1_000);
    // Waking on an answer is what keeps a fine grid punctual (the agent's wake-up hands the
    // sampler the CPU at once, where a timer wake-up can wait behind busy threads: without
    // it, 10-15% of 1 ms ticks were missed while SpiderMonkey's JIT threads were busy). But
    // the wake-up is paid by the agent, inside its interrupt callback: ~35 µs a sample when
    // samples are 20 ms apart and caches are cold, most of the budget there. So only a fine
    // base wakes the sampler on answers; a coarse one takes them when it wakes for a tick
    // or a control message, and loses nothing to a few ms of lateness.
    let woken_by_answers = if core.base < WAKE_ON_ANSWERS_BELOW {
        answers.clone()
    } else {
        crossbeam_channel::never()
    };
    loop {
        while let Ok(answer) = answers.try_recv() {
            core.on_answer(answer);
        }
        let now = clock.now();
        let next = core.next_tick(now);
        // With nothing due, wake only for messages.
        let timeout = next.map_or(Duration::from_secs(3600), |t| {
            Duration::from_nanos(core.deadline(t).saturating_sub(now))
        });
        select! {
            recv(control) -> msg => {
                while let Ok(answer) = answers.try_recv() {
                    core.on_answer(answer);
                }
                match msg {
                Ok(Control::Start(s)) => core.start(*s),
                Ok(Control::Pause(id)) => core.set_paused(id, true),
                Ok(Control::Resume(id)) => core.set_paused(id, false),
                Ok(Control::Stop(id, done)) => {
                    if let Some(stopped) = core.stop(id) {
                        build_elsewhere(stopped, done);
                    }
                }
                Ok(Control::Stats(reply)) => {
                    let _ = reply.send(core.stats());
                }
                Ok(Control::Shutdown) | Err(_) => return,
            }},
            recv(woken_by_answers) -> answer => {
                if let Ok(answer) = answer {
                    core.on_answer(answer);
                }
            },
            default(timeout) => {
                while let Ok(answer) = answers.try_recv() {
                    core.on_answer(answer);
                }
                if let Some(tick) = next {
                    let now = clock.now();
                    if now >= core.deadline(tick) {
                        core.on_tick(tick, now);
                    }
                }
            },
        }
    }
}
