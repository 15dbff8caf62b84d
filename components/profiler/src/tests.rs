//! Deterministic tests of the sampler core: fake time, fake agents, no threads, fixed seeds.
//!
//! One file past 600 lines on purpose: every test drives the same `Harness`, and a reader
//! looks a behaviour up by its test's name; split by topic, each file would repeat it.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crossbeam_channel::{unbounded, Receiver, Sender};
use proptest::prelude::*;

use crate::agent::{AgentHandle, AgentId, Answer, Sampled};
use crate::frame::{NoScripts, RawFrame, RawStack, RealmId, ScriptId};
use crate::recorder::Recorder;
use crate::sampler::{SamplerCore, SessionId, SessionStart, MAX_PICK_LATENESS};
use crate::time::{Clock, FakeClock, Nanos, Resolution};
use crate::trace::{MarkerSet, ProfilerMarker, ProfilerTrace};

mod budget;
mod proposals;

const MS: Nanos = 1_000_000;
const REALM: RealmId = RealmId(1);
const SEED: u64 = 7;
/// An interval (in 1 ms base ticks) long enough that no timed sample falls in a test:
/// 10^9 ms, 11.6 days.
const FORCED_ONLY: u64 = 1_000_000_000;

/// A core with base 1 ms and epoch 0, fake agents, and a log of buffer-full notifications.
struct Harness {
    core: SamplerCore,
    clock: Arc<FakeClock>,
    tx: Sender<Answer>,
    rx: Receiver<Answer>,
    agents: Vec<(AgentHandle, Arc<AtomicUsize>)>,
    full: Arc<Mutex<Vec<SessionId>>>,
    now: Nanos,
}

impl Harness {
    fn new() -> Self {
        Self::with(MS, SEED)
    }

    fn with(base: Nanos, seed: u64) -> Self {
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
    fn agent(&mut self) -> usize {
        self.agent_with(None)
    }

    /// A fake agent sampled synchronously, always with the stack of `lines`; the counter
    /// says how many stacks were taken.
    fn counted_agent(&mut self, lines: &'static [u32]) -> (usize, Arc<AtomicUsize>) {
        let calls = Arc::new(AtomicUsize::new(0));
        let c = calls.clone();
        let a = self.agent_with(Some(Box::new(move || {
            c.fetch_add(1, Ordering::SeqCst);
            Sampled::Stack(stack(lines))
        })));
        (a, calls)
    }

    /// A fake agent sampled synchronously by `sampler`.
    fn agent_with(&mut self, sampler: Option<Box<dyn crate::StackSampler>>) -> usize {
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

    fn start(&mut self, id: u64, agent: usize, every: u64, max: u32) {
        self.start_with(id, agent, every, max, MarkerSet::NONE);
    }

    fn start_with(&mut self, id: u64, agent: usize, every: u64, max: u32, markers: MarkerSet) {
        let start = self.session_start(id, agent, every, max, markers);
        self.core.start(start, self.now);
    }

    /// Session `id` as the group would start it now: running, created now.
    fn session_start(
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
    fn forceable_session(&mut self, a: usize) {
        self.agents[a].0.enter();
        self.set_now(MS / 2);
        self.start(1, a, FORCED_ONLY, 100);
        assert!(self.core.next_wake().unwrap() > 10_000 * MS);
    }

    /// Forces a sample in `ids` at the current time; true once every sample is recorded
    /// (the waiter's every clone dropped).
    fn force(&mut self, ids: &[u64]) -> Receiver<()> {
        let (done, waiter) = crossbeam_channel::bounded(0);
        let ids: Vec<SessionId> = ids.iter().map(|&i| SessionId(i)).collect();
        self.core.force(&ids, self.now, done);
        waiter
    }

    fn pause(&mut self, id: u64, paused: bool) {
        self.core.set_paused(SessionId(id), paused, self.now);
    }

    fn stop(&mut self, id: u64) -> ProfilerTrace {
        let stopped = self
            .core
            .stop(SessionId(id), self.now)
            .expect("a live session");
        stopped.recorder.build(&Symbols)
    }

    /// Wakes exactly at every pick due up to `until`. After each wake, `answer` may answer
    /// the agents' requests (at the wake's time).
    fn run_to(&mut self, until: Nanos, mut answer: impl FnMut(&mut Self)) {
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

    fn set_now(&mut self, now: Nanos) {
        self.now = now;
        self.clock.set(now);
    }

    fn deliver(&mut self) {
        while let Ok(a) = self.rx.try_recv() {
            self.core.on_answer(a);
        }
    }

    /// The agent answers a pending request with `stack`, if it has one.
    fn answer_with(&self, agent: usize, stack: &RawStack) -> bool {
        let handle = &self.agents[agent].0;
        match handle.take_request() {
            Some(req) => {
                handle.answer(req, stack.clone());
                true
            }
            None => false,
        }
    }

    fn requests(&self, agent: usize) -> usize {
        self.agents[agent].1.load(Ordering::SeqCst)
    }
}

/// The blocks of `k` ms the samples of a trace fall in (timestamps in ms, 5 µs precision).
fn blocks(trace: &ProfilerTrace, k: u64) -> Vec<u64> {
    times(trace)
        .iter()
        .map(|&t| (t / k as f64) as u64)
        .collect()
}

/// Names frames after their positions.
struct Symbols;
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

fn stack(lines: &[u32]) -> RawStack {
    lines
        .iter()
        .map(|&l| RawFrame::at(REALM, ScriptId(1), l, 1))
        .collect::<Vec<_>>()
        .into()
}

fn times(trace: &ProfilerTrace) -> Vec<f64> {
    trace.samples.iter().map(|s| s.timestamp).collect()
}

fn names(trace: &ProfilerTrace, i: usize) -> Vec<String> {
    trace
        .sample_frames(&trace.samples[i])
        .unwrap()
        .into_iter()
        .map(|f| f.name)
        .collect()
}

#[test]
fn an_idle_agent_gets_stackless_samples_without_being_interrupted() {
    let mut h = Harness::new();
    let a = h.agent();
    h.start(1, a, 2, 100);
    h.run_to(10 * MS, |_| {});
    let t = h.stop(1);
    // One sample in each 2 ms block, anywhere inside it.
    assert_eq!(blocks(&t, 2), [0, 1, 2, 3, 4]);
    assert!(t.samples.iter().all(|s| s.stack_id.is_none()));
    assert_eq!(h.requests(a), 0);
}

#[test]
fn the_plan_is_the_gcd_and_each_session_takes_one_sample_per_interval() {
    let mut h = Harness::new();
    let a = h.agent();
    h.start(1, a, 4, 100);
    assert_eq!(h.core.plan(), 4);
    h.start(2, a, 6, 100);
    assert_eq!(h.core.plan(), 2);
    h.run_to(24 * MS, |_| {});
    let t1 = h.stop(1);
    assert_eq!(h.core.plan(), 6);
    let t2 = h.stop(2);
    assert_eq!(h.core.plan(), 0);
    assert_eq!(blocks(&t1, 4), [0, 1, 2, 3, 4, 5]);
    assert_eq!(blocks(&t2, 6), [0, 1, 2, 3]);
    // Picks sit on the 2 ms grid: the sampler woke once per distinct sample time.
    let distinct: BTreeSet<u64> = times(&t1)
        .iter()
        .chain(times(&t2).iter())
        .map(|t| (t * 1000.0) as u64)
        .collect();
    assert_eq!(h.core.stats().ticks, distinct.len() as u64);
    assert!(distinct.len() < 10, "some grid ticks are shared");
}

#[test]
fn sessions_of_one_interval_share_every_tick() {
    let mut h = Harness::new();
    let a = h.agent();
    for id in 1..=100 {
        h.start(id, a, 10, 1000);
    }
    h.run_to(200 * MS, |_| {});
    assert_eq!(h.core.stats().ticks, 20);
    let first = times(&h.stop(1));
    for id in 2..=100 {
        assert_eq!(times(&h.stop(id)), first);
    }
}

#[test]
fn one_capture_serves_every_due_session_of_the_agent() {
    let mut h = Harness::new();
    let a = h.agent();
    h.start(1, a, 1, 100);
    h.start(2, a, 2, 100);
    h.agents[a].0.enter();
    let s = stack(&[1, 2]);
    h.run_to(4 * MS, |h| assert!(h.answer_with(a, &s)));
    let (t1, t2) = (h.stop(1), h.stop(2));
    assert_eq!(h.requests(a), t1.samples.len());
    assert!(t1.samples.len() >= 3);
    assert_eq!(blocks(&t2, 2), [0, 1]);
    // The interval-2 session's samples are ticks of the interval-1 session.
    let t1_times = times(&t1);
    assert!(times(&t2).iter().all(|t| t1_times.contains(t)));
    assert_eq!(names(&t2, 1), ["f1", "f2"]);
}

#[test]
fn a_synchronous_sampler_takes_the_stack_at_the_tick() {
    let mut h = Harness::new();
    let (a, calls) = h.counted_agent(&[3, 4]);
    h.start(1, a, 1, 100);
    h.agents[a].0.enter();
    h.run_to(5 * MS, |_| {});
    let t = h.stop(1);
    assert_eq!(h.requests(a), 0, "no interrupt requests");
    assert_eq!(calls.load(Ordering::SeqCst), t.samples.len());
    assert_eq!(h.core.stats().sampled, t.samples.len() as u64);
    assert!((0..t.samples.len()).all(|i| names(&t, i) == ["f3", "f4"]));
}

#[test]
fn a_synchronous_sampler_that_cannot_sample_falls_back_to_a_request() {
    let mut h = Harness::new();
    let a = h.agent_with(Some(Box::new(|| Sampled::Unavailable)));
    h.start(1, a, 1, 100);
    h.agents[a].0.enter();
    let s = stack(&[5]);
    h.run_to(3 * MS, |h| assert!(h.answer_with(a, &s)));
    let t = h.stop(1);
    assert_eq!(h.requests(a), t.samples.len());
    assert!((0..t.samples.len()).all(|i| names(&t, i) == ["f5"]));
}

#[test]
fn waiting_ticks_get_the_answer_only_if_it_came_in_time() {
    let mut h = Harness::new();
    let a = h.agent();
    h.start(1, a, 1, 100);
    h.agents[a].0.enter();
    // A long native call: no interrupt is served for 4 ticks.
    h.run_to(4 * MS, |_| {});
    assert_eq!(h.requests(a), 1, "one request stays outstanding");
    assert!(h.answer_with(a, &stack(&[7])));
    h.deliver();
    let t = h.stop(1);
    assert_eq!(blocks(&t, 1), [0, 1, 2, 3]);
    // The stack captured at 4 ms was running then, not 1 ms or more before.
    for (i, s) in t.samples.iter().enumerate() {
        let in_time = 4.0 - s.timestamp <= 1.0;
        assert_eq!(
            s.stack_id.is_some(),
            in_time,
            "sample {i} at {}",
            s.timestamp
        );
    }
    let late = t.samples.iter().filter(|s| s.stack_id.is_none()).count() as u64;
    assert!(late >= 2);
    assert_eq!(h.core.stats().late_answers, late);
}

#[test]
fn a_request_outliving_its_script_is_discarded_and_its_ticks_closed() {
    let mut h = Harness::new();
    let a = h.agent();
    let agent = h.agents[a].0.clone();
    h.start(1, a, 1, 100);
    agent.enter();
    h.run_to(MS, |_| {}); // block 0: request made
    agent.leave(); // script returned before the interrupt was serviced
    agent.enter(); // the next script starts: the pending interrupt fires now
    assert!(agent.take_request().is_none(), "stale request discarded");
    h.run_to(2 * MS, |h| assert!(h.answer_with(a, &stack(&[3])))); // block 1 closes block 0
    assert_eq!(h.core.stats().unanswered, 1);
    let t = h.stop(1);
    assert_eq!(blocks(&t, 1), [0, 1]);
    assert_eq!(t.samples[0].stack_id, None);
    assert_eq!(names(&t, 1), ["f3"]);
}

#[test]
fn an_answer_for_a_closed_request_is_dropped() {
    let mut h = Harness::new();
    let a = h.agent();
    let agent = h.agents[a].0.clone();
    h.start(1, a, 1, 100);
    agent.enter();
    h.run_to(MS, |_| {});
    let req = agent.take_request().expect("request for block 0");
    agent.leave();
    h.run_to(2 * MS, |_| {}); // idle block 1 closes block 0
    agent.answer(req, stack(&[5])); // too late
    h.deliver();
    assert_eq!(h.core.stats().stale_answers, 1);
    let t = h.stop(1);
    assert!(t.samples.iter().all(|s| s.stack_id.is_none()));
    assert_eq!(t.samples.len(), 2);
}

#[test]
fn stopping_with_an_answer_pending_keeps_the_ticks_without_stacks() {
    let mut h = Harness::new();
    let a = h.agent();
    h.start(1, a, 1, 100);
    h.start(2, a, 1, 100);
    h.agents[a].0.enter();
    h.run_to(2 * MS, |_| {});
    let t1 = h.stop(1);
    assert_eq!(t1.samples.len(), 2);
    assert!(t1.samples.iter().all(|s| s.stack_id.is_none()));
    // Session 2 still gets the answer for its ticks that were in time.
    assert!(h.answer_with(a, &stack(&[4])));
    h.deliver();
    let t2 = h.stop(2);
    assert_eq!(t2.samples.len(), 2);
    assert_eq!(names(&t2, 1), ["f4"]);
}

#[test]
fn buffer_full_stops_sampling_and_notifies_once() {
    for max in [0u32, 1, 2, u32::MAX] {
        let mut h = Harness::new();
        let a = h.agent();
        h.start(1, a, 1, max);
        h.run_to(10 * MS, |_| {});
        let full = h.full.lock().unwrap().clone();
        let t = h.stop(1);
        assert_eq!(t.samples.len(), (max as usize).min(10), "max {max}");
        if max as usize >= 10 {
            assert!(full.is_empty());
        } else {
            assert_eq!(full, [SessionId(1)], "max {max}");
            // Once full, the session leaves the plan: the sampler stops waking for it.
            assert_eq!(h.core.stats().ticks, max as u64 + 1, "max {max}");
            assert_eq!(h.core.next_wake(), None);
        }
    }
}

#[test]
fn paused_sessions_take_no_samples_and_leave_the_plan() {
    let mut h = Harness::new();
    let a = h.agent();
    h.start(1, a, 1, 100);
    h.start(2, a, 3, 100);
    h.run_to(MS * 3 + MS / 2, |_| {});
    h.pause(1, true);
    assert_eq!(h.core.plan(), 3);
    h.run_to(MS * 6 + MS / 2, |_| {});
    h.pause(1, false);
    assert_eq!(h.core.plan(), 1);
    h.run_to(MS * 9, |_| {});
    let t1 = h.stop(1);
    // Nothing while paused (3.5 to 6.5 ms); one per block in the blocks lived whole.
    let b1 = blocks(&t1, 1);
    assert!(
        times(&t1).iter().all(|&t| !(3.5..6.5).contains(&t)),
        "{b1:?}"
    );
    for whole in [0, 1, 2, 7, 8] {
        assert!(b1.contains(&whole), "{b1:?}");
    }
    let t2 = h.stop(2);
    assert_eq!(blocks(&t2, 3), [0, 1, 2]);
}

#[test]
fn late_wakes_skip_the_blocks_they_missed_and_count_them() {
    let mut h = Harness::new();
    let a = h.agent();
    h.start(1, a, 1, 100);
    let first = h.core.next_wake().unwrap();
    assert!(first < MS);
    h.set_now(first);
    h.core.on_wake(first);
    // The thread overslept: it wakes at 6.5 ms for a pick that was due in block 1.
    let due = h.core.next_wake().unwrap();
    assert!((MS..2 * MS).contains(&due));
    h.set_now(6 * MS + MS / 2);
    h.core.on_wake(h.now);
    assert_eq!(h.core.stats().lateness[1], 6 * MS + MS / 2 - due);
    // Blocks 1 to 4 are lost (their picks are over 1 ms old); block 5's pick, in
    // [5, 6) ms, is taken at once if it is at most 1 ms old, else block 6's is next.
    let next = h.core.next_wake().unwrap();
    let missed = h.core.stats().missed_ticks;
    if next <= h.now {
        assert!(
            h.now - next <= MAX_PICK_LATENESS && next >= 5 * MS,
            "{next}"
        );
        assert_eq!(missed, 4);
    } else {
        assert!((6 * MS..7 * MS).contains(&next), "{next}");
        assert_eq!(missed, 5);
    }
    let t = h.stop(1);
    assert_eq!(t.samples.len(), 1);
}

#[test]
fn a_wake_slightly_past_its_block_still_takes_the_pick_and_the_next_one() {
    // Over many seeds, wake every pick 300 µs late: no block is lost, each sample is
    // taken when the thread woke, and a block whose pick passed during the late wake is
    // served at once rather than skipped.
    for seed in 0..20 {
        let mut h = Harness::with(MS, seed);
        let a = h.agent_with(Some(Box::new(|| Sampled::Stack(stack(&[7])))));
        h.agents[a].0.enter();
        h.start(1, a, 1, 1000);
        while let Some(at) = h.core.next_wake() {
            if at > 200 * MS {
                break;
            }
            let now = (at + 300_000).max(h.now);
            h.set_now(now);
            h.core.on_wake(now);
            h.deliver();
        }
        let t = h.stop(1);
        assert_eq!(h.core.stats().missed_ticks, 0, "seed {seed}");
        assert!(t.samples.len() >= 199, "seed {seed}: {}", t.samples.len());
        assert!(t.samples.iter().all(|s| s.stack_id.is_some()));
        let stamps = times(&t);
        assert!(stamps.windows(2).all(|w| w[0] <= w[1]));
    }
}

#[test]
fn samples_are_spread_evenly_inside_their_blocks() {
    // Exact wakes: every tenth of a block gets its share of 5000 samples (binomial sd
    // 21 around 500, so ±100 is a wide margin); none is past its block.
    let mut h = Harness::new();
    let a = h.agent_with(Some(Box::new(|| Sampled::Stack(stack(&[1])))));
    h.agents[a].0.enter();
    h.start(1, a, 2, u32::MAX);
    h.run_to(10_000 * MS, |_| {});
    let phases = h.core.stats().phases;
    assert_eq!(phases.iter().sum::<u64>(), 5000, "{phases:?}");
    assert!(
        phases[..10].iter().all(|&n| (400..=600).contains(&n)),
        "{phases:?}"
    );
    assert_eq!(phases[10], 0);
    // Wakes 300 µs late: the last 15% of each 2 ms block moves past it.
    let mut h = Harness::new();
    let a = h.agent_with(Some(Box::new(|| Sampled::Stack(stack(&[1])))));
    h.agents[a].0.enter();
    h.start(1, a, 2, u32::MAX);
    while let Some(at) = h.core.next_wake() {
        if at > 2000 * MS {
            break;
        }
        let now = (at + 300_000).max(h.now);
        h.set_now(now);
        h.core.on_wake(now);
    }
    let phases = h.core.stats().phases;
    let late = phases[10] as f64 / phases.iter().sum::<u64>() as f64;
    assert!((0.10..0.20).contains(&late), "{phases:?}");
}

#[test]
fn agents_know_when_their_next_sample_is_due() {
    let mut h = Harness::new();
    let a = h.agent();
    let b = h.agent();
    let due = |h: &Harness, i: usize, horizon: Nanos| {
        h.agents[i].0.next_sample_in().is_some_and(|d| d <= horizon)
    };
    assert!(!due(&h, a, Nanos::MAX / 2), "no session yet");
    h.start(1, a, 5, 100);
    let next = h.core.next_wake().unwrap();
    assert!(next < 5 * MS);
    // Due within exactly the time to the pick, not before.
    assert!(due(&h, a, next - h.now));
    assert!(next == h.now || !due(&h, a, next - h.now - 1));
    assert!(
        !due(&h, b, Nanos::MAX / 2),
        "another agent's session is not b's"
    );
    // After the pick, the next one (in the next 5 ms block) is announced.
    h.run_to(next, |_| {});
    let later = h.core.next_wake().unwrap();
    assert!((5 * MS..10 * MS).contains(&later));
    assert!(due(&h, a, later - h.now) && !due(&h, a, later - h.now - 1));
    // Paused, then stopped: nothing is due.
    h.pause(1, true);
    assert!(!due(&h, a, Nanos::MAX / 2));
    h.pause(1, false);
    assert!(due(&h, a, 10 * MS));
    h.stop(1);
    assert!(!due(&h, a, Nanos::MAX / 2));
}

#[test]
fn sessions_on_different_agents_are_sampled_independently() {
    let mut h = Harness::new();
    let a = h.agent();
    let b = h.agent();
    h.start(1, a, 1, 100);
    h.start(2, b, 1, 100);
    h.agents[b].0.enter();
    let s = stack(&[9]);
    h.run_to(2 * MS, |h| assert!(h.answer_with(b, &s)));
    assert_eq!((h.requests(a), h.requests(b)), (0, 2));
    let (ta, tb) = (h.stop(1), h.stop(2));
    assert!(ta.samples.iter().all(|s| s.stack_id.is_none()));
    assert!(tb.samples.iter().all(|s| s.stack_id.is_some()));
}

/// A periodic workload: `hot` for the first `share` of each `period`, `cold` for the rest,
/// sampled synchronously at whatever time the core takes it.
fn periodic(h: &mut Harness, period: Nanos, share: f64) -> usize {
    let clock = h.clock.clone();
    let a = h.agent_with(Some(Box::new(move || {
        use crate::time::Clock;
        let phase = clock.now() % period;
        let hot = (phase as f64) < share * period as f64;
        Sampled::Stack(stack(&[if hot { 1 } else { 2 }]))
    })));
    h.agents[a].0.enter();
    a
}

/// The share of a trace's samples taken in `hot` (line 1).
fn hot_share(t: &ProfilerTrace) -> f64 {
    let hot = (0..t.samples.len())
        .filter(|&i| names(t, i) == ["f1"])
        .count();
    hot as f64 / t.samples.len() as f64
}

#[test]
fn periodic_work_gets_its_true_share_whatever_its_period() {
    // (base, interval in base ticks, period of the workload): equal to the interval,
    // dividing it, a multiple of it, and the 7 ms / 3 ms loop of a 10 ms period sampled
    // every 20 ms that a fixed grid reports as 0% or 100% hot.
    let cases: [(Nanos, u64, Nanos); 6] = [
        (MS, 10, 10 * MS),
        (MS, 10, 5 * MS),
        (MS, 10, 2 * MS + MS / 2),
        (MS, 10, 30 * MS),
        (MS, 3, 17 * MS),
        (20 * MS, 1, 10 * MS),
    ];
    for seed in 1..=5 {
        for &(base, every, period) in &cases {
            let mut h = Harness::with(base, seed);
            let a = periodic(&mut h, period, 0.7);
            h.start(1, a, every, u32::MAX);
            h.run_to(1000 * every * base, |_| {});
            let t = h.stop(1);
            assert_eq!(t.samples.len(), 1000);
            let share = hot_share(&t);
            assert!(
                (share - 0.7).abs() <= 0.05,
                "seed {seed}, base {base}, interval {every}, period {period}: {share}"
            );
        }
    }
}

#[test]
fn without_randomised_ticks_the_same_workload_aliases() {
    // The control: sampling the 10 ms loop exactly every 20 ms sees a single phase.
    let period = 10 * MS;
    let hot = (0..1000u64)
        .filter(|i| ((i * 20 * MS + 3 * MS) % period) < 7 * MS)
        .count();
    assert!(hot == 0 || hot == 1000);
}

/// One session's life in the property test: start, pauses and resumes, stop, all at
/// half-ticks.
#[derive(Debug, Clone)]
struct Life {
    every: u64,
    start: u64,
    toggles: Vec<u64>,
    stop: u64,
}

fn life() -> impl Strategy<Value = Life> {
    (
        1u64..=6,
        0u64..30,
        proptest::collection::btree_set(0u64..60, 0..4),
        1u64..40,
    )
        .prop_map(|(every, start, toggles, len)| Life {
            every,
            start,
            toggles: toggles.into_iter().filter(|&t| t > start).collect(),
            stop: start + len,
        })
}

impl Life {
    /// The session's active stretches, in half-ms: [from, to).
    fn active(&self) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        let mut from = Some(self.start * 2 + 1);
        for &t in self.toggles.iter().filter(|&&t| t < self.stop) {
            match from.take() {
                Some(f) => out.push((f, t * 2 + 1)),
                None => from = Some(t * 2 + 1),
            }
        }
        if let Some(f) = from {
            out.push((f, self.stop * 2 + 1));
        }
        out
    }
}

proptest! {
    /// Over random sets of sessions, each takes at most one sample per block of its
    /// interval, only while active, and exactly one in every block it was active for
    /// from start to end — across every re-plan caused by other sessions.
    #[test]
    fn each_session_takes_one_sample_per_block_while_active(
        lives in proptest::collection::vec(life(), 1..6),
        seed in 0u64..1000,
    ) {
        let mut h = Harness::with(MS, seed);
        let a = h.agent();
        // (time in half-ms, kind, session)
        let mut events = BTreeSet::new();
        for (i, l) in lives.iter().enumerate() {
            events.insert((l.start * 2 + 1, 0, i));
            for &t in &l.toggles {
                if t < l.stop {
                    events.insert((t * 2 + 1, 1, i));
                }
            }
            events.insert((l.stop * 2 + 1, 2, i));
        }
        let mut paused = vec![false; lives.len()];
        let mut traces = vec![None; lives.len()];
        for (half, kind, i) in events {
            h.run_to(half * MS / 2, |_| {});
            let id = i as u64 + 1;
            match kind {
                0 => h.start(id, a, lives[i].every, u32::MAX),
                1 => {
                    paused[i] = !paused[i];
                    h.pause(id, paused[i]);
                }
                _ => traces[i] = Some(h.stop(id)),
            }
        }
        for (l, t) in lives.iter().zip(traces) {
            let t = t.unwrap();
            let k = l.every;
            let half_ms: Vec<f64> = times(&t).iter().map(|ms| ms * 2.0).collect();
            let active = l.active();
            // Only while active.
            for &x in &half_ms {
                prop_assert!(active.iter().any(|&(f, e)| x >= f as f64 && x < e as f64), "{:?} {:?}", l, half_ms);
            }
            // At most one per block.
            let bs = blocks(&t, k);
            let distinct: BTreeSet<u64> = bs.iter().copied().collect();
            prop_assert_eq!(distinct.len(), bs.len(), "{:?}", l);
            // Exactly one in each block wholly inside an active stretch.
            for &(f, e) in &active {
                let first = f.div_ceil(2 * k);
                let end = e / (2 * k);
                for b in first..end {
                    prop_assert!(distinct.contains(&b), "{:?}: block {} of {:?}", l, b, bs);
                }
            }
        }
    }
}

/// Markers extension: each sample's marker is the agent's state at its tick, kept only by
/// sessions that expose it.
#[test]
fn samples_are_marked_with_what_the_agent_was_doing_at_the_tick() {
    use ProfilerMarker::{Gc, Other, Script};
    let mut h = Harness::new();
    let a = h.agent_with(Some(Box::new(|| Sampled::Stack(stack(&[3])))));
    let isolated = MarkerSet::for_context(true, true);
    h.start_with(1, a, 1, 100, isolated);
    h.start_with(2, a, 1, 100, MarkerSet::for_context(true, false));
    h.start_with(3, a, 1, 100, MarkerSet::for_context(false, true));
    h.start(4, a, 1, 100);
    let agent = h.agents[a].0.clone();
    // 0-2 ms: waiting for work; 2-4: a task's native work; 4-6: script; 6-8: a collection
    // inside script; 8-10: a collection outside script; 10-12: waiting again.
    agent.waiting(true);
    h.run_to(2 * MS, |_| {});
    agent.waiting(false);
    h.run_to(4 * MS, |_| {});
    agent.enter();
    h.run_to(6 * MS, |_| {});
    agent.gc_began();
    agent.gc_began(); // a nursery collection inside the slice
    agent.gc_ended();
    h.run_to(8 * MS, |_| {});
    agent.leave();
    h.run_to(10 * MS, |_| {});
    agent.gc_ended();
    agent.gc_ended(); // unbalanced: ignored
    agent.waiting(true);
    h.run_to(12 * MS, |_| {});
    let expected = [None, Some(Other), Some(Script), Some(Gc), Some(Gc), None];
    let t = h.stop(1);
    assert_eq!(blocks(&t, 2), [0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5]);
    for (i, s) in t.samples.iter().enumerate() {
        assert_eq!(
            s.marker,
            expected[i / 2],
            "sample {i} at {} ms",
            s.timestamp
        );
        // Stacks only where script ran: a collection outside script has none.
        assert_eq!(s.stack_id.is_some(), (4..8).contains(&i), "sample {i}");
    }
    // Not isolated: only style and layout would be exposed, and this engine makes neither;
    // pref off or no marker set: none. Their JSON is exactly the base spec's.
    for id in [2, 3, 4] {
        let t = h.stop(id);
        assert_eq!(t.samples.len(), 12);
        assert!(t.samples.iter().all(|s| s.marker.is_none()));
        assert!(!t.to_json().contains("marker"), "{}", t.to_json());
    }
    assert!(t
        .to_json()
        .contains(r#"{"marker":"script","stackId":0,"timestamp":"#));
}

#[test]
fn marker_sets_follow_conditional_marker_exposure() {
    let all = MarkerSet::for_context(true, true);
    assert!(ProfilerMarker::ALL.iter().all(|&m| all.contains(m)));
    let open = MarkerSet::for_context(true, false);
    let exposed: Vec<_> = ProfilerMarker::ALL
        .into_iter()
        .filter(|&m| open.contains(m))
        .collect();
    assert_eq!(exposed, [ProfilerMarker::Style, ProfilerMarker::Layout]);
    assert_eq!(MarkerSet::for_context(false, true), MarkerSet::NONE);
    assert_eq!(MarkerSet::for_context(false, false), MarkerSet::NONE);
    for m in ProfilerMarker::ALL {
        assert_eq!(
            serde_json::to_string(&m).unwrap(),
            format!("\"{}\"", m.as_str())
        );
        assert_eq!(
            ProfilerMarker::from_byte(ProfilerMarker::to_byte(Some(m))),
            Some(m)
        );
    }
    assert_eq!(ProfilerMarker::from_byte(0), None);
}

fn released(waiter: &Receiver<()>) -> bool {
    matches!(
        waiter.try_recv(),
        Err(crossbeam_channel::TryRecvError::Disconnected)
    )
}

#[test]
fn forced_samples_are_taken_at_once_with_the_running_stack_and_nothing_else() {
    // No timed sample in the test (`FORCED_ONLY`), so the trace holds exactly the forced
    // ones, at the times they were forced.
    let mut h = Harness::new();
    let line = Arc::new(AtomicUsize::new(10));
    let l = line.clone();
    let a = h.agent_with(Some(Box::new(move || {
        Sampled::Stack(stack(&[l.load(Ordering::SeqCst) as u32]))
    })));
    h.forceable_session(a);
    for i in 1..=5 {
        h.run_to(i * 10 * MS, |_| {});
        line.store(10 + i as usize, Ordering::SeqCst);
        let waiter = h.force(&[1]);
        assert!(released(&waiter), "recorded before the force returns");
    }
    h.run_to(1000 * MS, |_| {});
    let t = h.stop(1);
    assert_eq!(times(&t), [10.0, 20.0, 30.0, 40.0, 50.0]);
    for i in 0..5 {
        assert_eq!(names(&t, i), [format!("f{}", 11 + i)]);
    }
}

#[test]
fn a_forced_sample_skips_paused_sessions_and_obeys_the_buffer_rule() {
    let mut h = Harness::new();
    let (a, calls) = h.counted_agent(&[1]);
    h.agents[a].0.enter();
    h.set_now(MS / 2);
    h.start(1, a, FORCED_ONLY, 2);
    h.start(2, a, FORCED_ONLY, 100);
    h.pause(2, true);
    for _ in 0..4 {
        assert!(released(&h.force(&[1, 2])));
    }
    // Session 1 took two, found its buffer full on the third and was told once; the
    // fourth took no capture at all.
    assert_eq!(*h.full.lock().unwrap(), [SessionId(1)]);
    assert_eq!(calls.load(Ordering::SeqCst), 3);
    // Every session paused or full: no capture.
    assert!(released(&h.force(&[1, 2])));
    assert_eq!(calls.load(Ordering::SeqCst), 3);
    assert_eq!(h.stop(1).samples.len(), 2);
    assert_eq!(h.stop(2).samples.len(), 0);
}

#[test]
fn a_forced_sample_by_request_waits_for_the_answer() {
    let mut h = Harness::new();
    let a = h.agent();
    h.forceable_session(a);
    let waiter = h.force(&[1]);
    assert!(h.core.forcing());
    assert!(!released(&waiter), "the stack is not recorded yet");
    assert!(h.answer_with(a, &stack(&[4])));
    h.deliver();
    assert!(released(&waiter));
    assert!(!h.core.forcing());
    let t = h.stop(1);
    assert_eq!(t.samples.len(), 1);
    assert_eq!(names(&t, 0), ["f4"]);
}

#[test]
fn a_forced_sample_whose_agent_left_the_script_is_recorded_without_a_stack() {
    let mut h = Harness::new();
    let a = h.agent();
    h.forceable_session(a);
    let waiter = h.force(&[1]);
    h.core.poll_forced();
    assert!(!released(&waiter), "the agent may still answer");
    h.agents[a].0.leave();
    h.core.poll_forced();
    assert!(
        released(&waiter),
        "closed at once, not at the next timed tick"
    );
    let t = h.stop(1);
    assert_eq!(t.samples.len(), 1);
    assert_eq!(t.samples[0].stack_id, None);
}

#[test]
fn a_session_started_paused_samples_only_once_resumed() {
    let mut h = Harness::new();
    let a = h.agent_with(Some(Box::new(|| Sampled::Stack(stack(&[1])))));
    h.agents[a].0.enter();
    let start = SessionStart {
        paused: true,
        ..h.session_start(1, a, 1, 100, MarkerSet::NONE)
    };
    h.core.start(start, 0);
    assert_eq!(
        h.core.next_wake(),
        None,
        "nothing planned while every session is paused"
    );
    h.run_to(5 * MS, |_| {});
    h.pause(1, false);
    h.run_to(10 * MS, |_| {});
    let t = h.stop(1);
    assert!(times(&t).iter().all(|&ts| ts >= 5.0), "{:?}", times(&t));
    assert!(t.samples.len() >= 4, "{:?}", times(&t));
}

/// Runs `profiles` profiles of 200 ms in turn at a 20 ms interval, each started at a
/// different phase of the sampler's blocks, with `early` on the stack for the first 15 ms
/// of each (or the last 15 ms, if `at_end`) and `late` for the rest. Returns the samples
/// with a stack and how many were `early`.
fn partial_blocks(profiles: u64, at_end: bool) -> (usize, usize) {
    let mut h = Harness::new();
    let clock = h.clock.clone();
    let started = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let s = started.clone();
    let a = h.agent_with(Some(Box::new(move || {
        let into = clock.now() - s.load(Ordering::SeqCst);
        let early = if at_end {
            into >= 185 * MS
        } else {
            into < 15 * MS
        };
        Sampled::Stack(stack(if early { &[1] } else { &[2] }))
    })));
    h.agents[a].0.enter();
    let (mut total, mut early) = (0, 0);
    for i in 0..profiles {
        // Starts spread over every phase of the 20 ms blocks (the seed fixes the picks).
        let t0 = i * 220 * MS + crate::sampler::mix(99, i, 0) % (20 * MS);
        h.run_to(t0, |_| {});
        started.store(t0, Ordering::SeqCst);
        h.start(i + 1, a, 20, 1000);
        h.run_to(t0 + 200 * MS, |_| {});
        let t = h.stop(i + 1);
        for s in 0..t.samples.len() {
            total += 1;
            early += usize::from(names(&t, s) == ["f1"]);
        }
    }
    (total, early)
}

/// The ends of a profile are sampled like its middle: the work in the first and in the last
/// partial interval gets its true share (7.5% here), within binomial noise. At 4000
/// profiles (~40,000 samples) the binomial standard deviation of a 7.5% share is 0.13
/// points; the test allows 4 of them (0.53 points), which a correct sampler exceeds with
/// probability 6e-5 for a random seed (stratified picks make it rarer still). The rule
/// that waited for the first whole block gave the first 15 ms no sample at all.
#[test]
fn work_in_the_first_and_last_partial_intervals_gets_its_true_share() {
    for at_end in [false, true] {
        let (total, early) = partial_blocks(4000, at_end);
        let share = early as f64 / total as f64;
        let sd = (0.075 * 0.925 / total as f64).sqrt();
        assert!(
            (share - 0.075).abs() <= 4.0 * sd,
            "at_end {at_end}: {early} of {total} samples ({:.2}%), true share 7.5% ± {:.2}",
            share * 100.0,
            4.0 * sd * 100.0
        );
        // One sample per 20 ms on average: 10 per profile.
        assert!((39_000..=41_000).contains(&total), "{total}");
    }
}

/// A session the sampler thread hears of late still gets the pick of its first block that
/// fell after the host created it (taken at once, within the pick's lateness allowance).
#[test]
fn a_session_heard_of_late_takes_the_pick_after_its_creation() {
    let mut h = Harness::new();
    let (a, _) = h.counted_agent(&[1]);
    h.agents[a].0.enter();
    // Interval 1000 ms, created at 0: find its first pick.
    h.start(1, a, 1000, 10);
    let pick = h.core.next_wake().unwrap();
    let _ = h.stop(1);
    // The same session again (the same seed gives the same pick), created just before the
    // pick but heard of just after it.
    let mut h = Harness::new();
    let (a, _) = h.counted_agent(&[1]);
    h.agents[a].0.enter();
    h.set_now(pick + MS / 2);
    let start = SessionStart {
        started_at: pick - MS,
        ..h.session_start(1, a, 1000, 10, MarkerSet::NONE)
    };
    h.core.start(start, pick + MS / 2);
    assert_eq!(h.core.next_wake(), Some(pick), "due at once");
    h.core.on_wake(h.now);
    // Taken at the wake, half a ms after the pick (timestamps floored to 5 µs).
    let taken = times(&h.stop(1));
    assert_eq!(taken.len(), 1);
    assert!(
        (taken[0] - (pick + MS / 2) as f64 / 1e6).abs() < 0.005,
        "{taken:?}"
    );
}

/// The unstopped sessions of a process hold at most the budget between them; a session that
/// would go past it is full (told once, no more samples), and stopping sessions gives their
/// samples back.
#[test]
fn the_process_budget_bounds_what_unstopped_sessions_hold() {
    let mut h = Harness::new();
    h.core = SamplerCore::new(MS, 0, SEED).with_budget(25);
    let (a, _) = h.counted_agent(&[1]);
    h.agents[a].0.enter();
    for id in 1..=3 {
        h.start(id, a, 1, 1000);
    }
    h.run_to(100 * MS, |_| {});
    assert_eq!(h.core.buffered(), 25);
    assert_eq!(h.core.next_wake(), None, "every session is full");
    let mut full = h.full.lock().unwrap().clone();
    full.sort();
    assert_eq!(full, [SessionId(1), SessionId(2), SessionId(3)]);
    let lens: Vec<usize> = (1..=3).map(|id| h.stop(id).samples.len()).collect();
    assert_eq!(lens.iter().sum::<usize>(), 25, "{lens:?}");
    assert_eq!(h.core.buffered(), 0);
    // The budget is free again.
    h.start(4, a, 1, 1000);
    h.run_to(110 * MS, |_| {});
    assert_eq!(h.stop(4).samples.len(), 10);
}

/// Stopping a session that has ticks waiting for its agent's answer records them without a
/// stack, and the answer that comes later serves only the sessions still running.
#[test]
fn a_session_stopped_while_waiting_keeps_its_ticks_and_the_rest_get_the_answer() {
    let mut h = Harness::new();
    let a = h.agent();
    h.agents[a].0.enter();
    h.start(1, a, 1, 100);
    h.start(2, a, 1, 100);
    h.run_to(MS, |_| {});
    assert_eq!(h.requests(a), 1);
    let t1 = h.stop(1);
    assert_eq!(t1.samples.len(), 1);
    assert_eq!(t1.samples[0].stack_id, None);
    assert!(h.answer_with(a, &stack(&[5])));
    h.deliver();
    let t2 = h.stop(2);
    assert_eq!(t2.samples.len(), 1);
    assert_eq!(names(&t2, 0), ["f5"]);
}

/// A host sampler whose walks wait for the agent's thread: `Pending` until the test lets
/// the thread "run" (`ran`), then the stack; it records the poll steps it was given.
struct WaitingSampler {
    ran: Arc<std::sync::atomic::AtomicBool>,
    steps: Arc<Mutex<Vec<crate::PollStep>>>,
}

impl crate::StackSampler for WaitingSampler {
    fn sample(&self) -> Sampled {
        Sampled::Pending
    }
    fn poll(&self, step: crate::PollStep) -> Sampled {
        self.steps.lock().unwrap().push(step);
        if step == crate::PollStep::Abandon {
            Sampled::Unavailable
        } else if self.ran.swap(false, Ordering::SeqCst) {
            Sampled::Stack(stack(&[9]))
        } else {
            Sampled::Pending
        }
    }
}

/// When threads outnumber cores, an agent's walk waits for its thread to be scheduled: the
/// sampler does not wait with it, the other agents are sampled meanwhile, and every tick
/// that came while the thread could not run gets the stack it is walked with (the thread
/// did not run in between, so its stack did not change).
#[test]
fn a_walk_waiting_for_its_thread_holds_up_no_other_agent() {
    let mut h = Harness::new();
    let ran = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let steps = Arc::new(Mutex::new(Vec::new()));
    let waiting = h.agent_with(Some(Box::new(WaitingSampler {
        ran: ran.clone(),
        steps: steps.clone(),
    })));
    let (prompt, calls) = h.counted_agent(&[2]);
    for a in [waiting, prompt] {
        h.agents[a].0.enter();
    }
    h.start(1, waiting, 1, 100);
    h.start(2, prompt, 1, 100);
    // Five ticks while the first agent's thread waits for a CPU.
    h.run_to(5 * MS, |_| {});
    assert_eq!(
        calls.load(Ordering::SeqCst),
        5,
        "the other agent is sampled at each tick"
    );
    // Its nudge is overdue (the harness did not poll): due at once, then every WALK_POLL.
    assert_eq!(h.core.walk_poll_in(h.now), Some(0));
    h.core.poll_walks(h.now);
    assert_eq!(*steps.lock().unwrap(), [crate::PollStep::Nudge]);
    assert_eq!(h.core.walk_poll_in(h.now), Some(crate::sampler::WALK_POLL));
    // The thread runs: its walk serves every waiting tick.
    ran.store(true, Ordering::SeqCst);
    h.core.poll_walks(h.now);
    assert_eq!(h.core.walk_poll_in(h.now), None);
    let t = h.stop(1);
    assert_eq!(t.samples.len(), 5);
    for i in 0..5 {
        assert_eq!(names(&t, i), ["f9"]);
    }
    assert_eq!(blocks(&t, 1), [0, 1, 2, 3, 4]);
    assert_eq!(h.stop(2).samples.len(), 5);
    let stats = h.core.stats();
    assert_eq!((stats.walks_waited, stats.walks_abandoned), (1, 0));
}

/// A walk whose thread never runs is abandoned after WALK_ABANDON: its ticks get no stack.
#[test]
fn a_walk_whose_thread_never_runs_is_abandoned() {
    let mut h = Harness::new();
    let steps = Arc::new(Mutex::new(Vec::new()));
    let a = h.agent_with(Some(Box::new(WaitingSampler {
        ran: Arc::default(),
        steps: steps.clone(),
    })));
    h.agents[a].0.enter();
    h.start(1, a, 1, 1000);
    h.run_to(150 * MS, |h| h.core.poll_walks(h.now));
    let t = h.stop(1);
    assert!(t.samples.len() >= 100, "{}", t.samples.len());
    assert!(t.samples.iter().all(|s| s.stack_id.is_none()));
    assert_eq!(h.core.stats().walks_abandoned, 1);
    assert_eq!(
        steps.lock().unwrap().last(),
        Some(&crate::PollStep::Abandon)
    );
}
