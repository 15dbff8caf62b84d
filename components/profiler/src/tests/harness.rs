//! What every test of the sampler core drives: a [`Harness`] around a `SamplerCore` with a
//! fake clock and fake agents, and helpers to read the traces it builds.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crossbeam_channel::{unbounded, Receiver, Sender};

use crate::agent::{AgentHandle, AgentId, Answer, Sampled};
use crate::frame::{NoScripts, RawFrame, RawStack, RealmId, ScriptId};
use crate::recorder::Recorder;
use crate::sampler::{SamplerCore, SessionId, SessionStart};
use crate::time::{FakeClock, Nanos, Resolution};
use crate::trace::{MarkerSet, ProfilerTrace};

pub(super) const MS: Nanos = 1_000_000;
pub(super) const REALM: RealmId = RealmId(1);
pub(super) const SEED: u64 = 7;
/// An interval (in 1 ms base ticks) long enough that no timed sample falls in a test:
/// 10^9 ms, 11.6 days.
pub(super) const FORCED_ONLY: u64 = 1_000_000_000;

/// A core with base 1 ms and epoch 0, fake agents, and a log of buffer-full notifications.
pub(super) struct Harness {
    pub(super) core: SamplerCore,
    pub(super) clock: Arc<FakeClock>,
    pub(super) tx: Sender<Answer>,
    pub(super) rx: Receiver<Answer>,
    pub(super) agents: Vec<(AgentHandle, Arc<AtomicUsize>)>,
    pub(super) full: Arc<Mutex<Vec<SessionId>>>,
    pub(super) now: Nanos,
}

impl Harness {
    pub(super) fn new() -> Self {
        Self::with(MS, SEED)
    }

    pub(super) fn with(base: Nanos, seed: u64) -> Self {
        let (tx, rx) = unbounded();
        Harness {
            core: SamplerCore::new(base, 0, seed),
            clock: Arc::new(FakeClock::new(0)),
            tx,
            rx,
            agents: Vec::new(),
            full: Arc::default(),
            now: 0,
        }
    }

    /// A fake agent sampled by request; returns its index. Its requester counts requests.
    pub(super) fn agent(&mut self) -> usize {
        self.agent_with(None)
    }

    /// A fake agent sampled synchronously, always with the stack of `lines`; the counter
    /// says how many stacks were taken.
    pub(super) fn counted_agent(&mut self, lines: &'static [u32]) -> (usize, Arc<AtomicUsize>) {
        let calls = Arc::new(AtomicUsize::new(0));
        let c = calls.clone();
        let a = self.agent_with(Some(Box::new(move || {
            c.fetch_add(1, Ordering::SeqCst);
            Sampled::Stack(stack(lines))
        })));
        (a, calls)
    }

    /// A fake agent sampled synchronously by `sampler`.
    pub(super) fn agent_with(&mut self, sampler: Option<Box<dyn crate::StackSampler>>) -> usize {
        let count = Arc::new(AtomicUsize::new(0));
        let c = count.clone();
        let handle = AgentHandle::new(
            AgentId(self.agents.len() as u32 + 1),
            Box::new(move || {
                c.fetch_add(1, Ordering::SeqCst);
            }),
            sampler,
            self.tx.clone(),
            self.clock.clone(),
        );
        self.agents.push((handle, count));
        self.agents.len() - 1
    }

    pub(super) fn start(&mut self, id: u64, agent: usize, every: u64, max: u32) {
        self.start_with(id, agent, every, max, MarkerSet::NONE);
    }

    pub(super) fn start_with(
        &mut self,
        id: u64,
        agent: usize,
        every: u64,
        max: u32,
        markers: MarkerSet,
    ) {
        let start = self.session_start(id, agent, every, max, markers);
        self.core.start(start, self.now);
    }

    /// Session `id` as the group would start it now: running, created now.
    pub(super) fn session_start(
        &self,
        id: u64,
        agent: usize,
        every: u64,
        max: u32,
        markers: MarkerSet,
    ) -> SessionStart {
        let full = self.full.clone();
        let sid = SessionId(id);
        SessionStart {
            id: sid,
            agent: self.agents[agent].0 .0.clone(),
            every,
            recorder: Recorder::new(REALM, 0, Resolution::Isolated, max).with_markers(markers),
            symbolizer: Arc::new(NoScripts),
            on_full: Some(Box::new(move || full.lock().unwrap().push(sid))),
            paused: false,
            started_at: self.now,
        }
    }

    /// Session 1 of agent `a`, running script, at an interval of [`FORCED_ONLY`] ms: its one
    /// timed pick in the first block comes after the test (the seed is fixed; for any seed
    /// a test of T ms would see it with probability T / 10^9), so every sample is forced.
    pub(super) fn forceable_session(&mut self, a: usize) {
        self.agents[a].0.enter();
        self.set_now(MS / 2);
        self.start(1, a, FORCED_ONLY, 100);
        assert!(self.core.next_wake().unwrap() > 10_000 * MS);
    }

    /// Forces a sample in `ids` at the current time; true once every sample is recorded
    /// (the waiter's every clone dropped).
    pub(super) fn force(&mut self, ids: &[u64]) -> Receiver<()> {
        let (done, waiter) = crossbeam_channel::bounded(0);
        let ids: Vec<SessionId> = ids.iter().map(|&i| SessionId(i)).collect();
        self.core.force(&ids, self.now, done);
        waiter
    }

    pub(super) fn pause(&mut self, id: u64, paused: bool) {
        self.core.set_paused(SessionId(id), paused, self.now);
    }

    pub(super) fn stop(&mut self, id: u64) -> ProfilerTrace {
        let stopped = self
            .core
            .stop(SessionId(id), self.now)
            .expect("a live session");
        stopped.recorder.build(&Symbols)
    }

    /// Stops session `id` as a page's `stop()` does: its trace, or `None` while it waits
    /// for the stacks of its ticks (then [`finished`](Self::finished) gives it).
    pub(super) fn stop_for(&mut self, id: u64) -> Option<ProfilerTrace> {
        self.core.stop_for(SessionId(id), self.now, None);
        self.finished()
    }

    /// The trace of the session that has ended since the last look, if one has.
    pub(super) fn finished(&mut self) -> Option<ProfilerTrace> {
        let mut ended = self.core.take_finished();
        assert!(ended.len() <= 1, "one session ends at a time here");
        ended.pop().map(|(s, _)| s.recorder.build(&Symbols))
    }

    /// Wakes exactly at every pick due up to `until`. After each wake, `answer` may answer
    /// the agents' requests (at the wake's time).
    pub(super) fn run_to(&mut self, until: Nanos, mut answer: impl FnMut(&mut Self)) {
        while let Some(at) = self.core.next_wake() {
            if at > until {
                break;
            }
            self.set_now(at);
            self.core.on_wake(at);
            answer(self);
            self.deliver();
        }
        self.set_now(until);
    }

    pub(super) fn set_now(&mut self, now: Nanos) {
        self.now = now;
        self.clock.set(now);
    }

    pub(super) fn deliver(&mut self) {
        while let Ok(a) = self.rx.try_recv() {
            self.core.on_answer(a);
        }
    }

    /// The agent answers a pending request with `stack`, if it has one.
    pub(super) fn answer_with(&self, agent: usize, stack: &RawStack) -> bool {
        let handle = &self.agents[agent].0;
        match handle.take_request() {
            Some(req) => {
                handle.answer(req, stack.clone());
                true
            }
            None => false,
        }
    }

    pub(super) fn requests(&self, agent: usize) -> usize {
        self.agents[agent].1.load(Ordering::SeqCst)
    }
}

/// The blocks of `k` ms the samples of a trace fall in (timestamps in ms, 5 µs precision).
pub(super) fn blocks(trace: &ProfilerTrace, k: u64) -> Vec<u64> {
    times(trace)
        .iter()
        .map(|&t| (t / k as f64) as u64)
        .collect()
}

/// Names frames after their positions.
pub(super) struct Symbols;

impl crate::Symbolizer for Symbols {
    fn resource(&self, s: ScriptId) -> Option<String> {
        Some(format!("https://example.test/{}.js", s.0))
    }
    fn resolve(&self, _: ScriptId, line: u32, column: u32) -> Option<crate::ResolvedSite> {
        Some(crate::ResolvedSite {
            name: format!("f{line}"),
            line,
            column,
        })
    }
}

pub(super) fn stack(lines: &[u32]) -> RawStack {
    lines
        .iter()
        .map(|&l| RawFrame::at(REALM, ScriptId(1), l, 1))
        .collect::<Vec<_>>()
        .into()
}

pub(super) fn times(trace: &ProfilerTrace) -> Vec<f64> {
    trace.samples.iter().map(|s| s.timestamp).collect()
}

pub(super) fn names(trace: &ProfilerTrace, i: usize) -> Vec<String> {
    trace
        .sample_frames(&trace.samples[i])
        .unwrap()
        .into_iter()
        .map(|f| f.name)
        .collect()
}
