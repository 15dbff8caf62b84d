//! Deterministic tests of the sampler core: fake time, fake agents, no threads.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crossbeam_channel::{unbounded, Receiver, Sender};
use proptest::prelude::*;

use crate::agent::{AgentHandle, AgentId, Answer};
use crate::frame::{NoScripts, RawFrame, RawStack, RealmId, ScriptId};
use crate::recorder::Recorder;
use crate::sampler::{SamplerCore, SessionId, SessionStart};
use crate::time::{Nanos, Resolution};
use crate::trace::ProfilerTrace;

const MS: Nanos = 1_000_000;
const REALM: RealmId = RealmId(1);

/// A core with base 1 ms and epoch 0, fake agents, and a log of buffer-full notifications.
struct Harness {
    core: SamplerCore,
    tx: Sender<Answer>,
    rx: Receiver<Answer>,
    agents: Vec<(AgentHandle, Arc<AtomicUsize>)>,
    full: Arc<Mutex<Vec<SessionId>>>,
    now: Nanos,
}

impl Harness {
    fn new() -> Self {
        let (tx, rx) = unbounded();
        Harness {
            core: SamplerCore::new(MS, 0),
            tx,
            rx,
            agents: Vec::new(),
            full: Arc::default(),
            now: 0,
        }
    }

    /// A fake agent; returns its index. Its requester counts requests.
    fn agent(&mut self) -> usize {
        let count = Arc::new(AtomicUsize::new(0));
        let c = count.clone();
        let handle = AgentHandle::new(
            AgentId(self.agents.len() as u32 + 1),
            Box::new(move || {
                c.fetch_add(1, Ordering::SeqCst);
            }),
            self.tx.clone(),
        );
        self.agents.push((handle, count));
        self.agents.len() - 1
    }

    fn start(&mut self, id: u64, agent: usize, every: u64, max: u32) {
        let full = self.full.clone();
        let sid = SessionId(id);
        self.core.start(SessionStart {
            id: sid,
            agent: self.agents[agent].0 .0.clone(),
            every,
            recorder: Recorder::new(REALM, 0, Resolution::Coarse, max),
            symbolizer: Arc::new(NoScripts),
            on_full: Some(Box::new(move || full.lock().unwrap().push(sid))),
        });
    }

    fn stop(&mut self, id: u64) -> ProfilerTrace {
        let stopped = self.core.stop(SessionId(id)).expect("a live session");
        stopped.recorder.build(&Symbols)
    }

    /// Runs every tick due up to `until`, waking exactly on each deadline. After each tick,
    /// `answer` may answer the agents' requests.
    fn run_to(&mut self, until: Nanos, mut answer: impl FnMut(&mut Self)) {
        while let Some(tick) = self.core.next_tick(self.now) {
            let deadline = self.core.deadline(tick);
            if deadline > until {
                break;
            }
            self.now = deadline;
            self.core.on_tick(tick, self.now);
            answer(self);
            self.deliver();
        }
        self.now = until;
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
    h.run_to(9 * MS, |_| {});
    let t = h.stop(1);
    assert_eq!(times(&t), [2.0, 4.0, 6.0, 8.0]);
    assert!(t.samples.iter().all(|s| s.stack_id.is_none()));
    assert_eq!(h.requests(a), 0);
}

#[test]
fn the_plan_is_the_gcd_and_each_session_takes_its_own_ticks() {
    let mut h = Harness::new();
    let a = h.agent();
    h.start(1, a, 4, 100);
    assert_eq!(h.core.plan(), 4);
    h.start(2, a, 6, 100);
    assert_eq!(h.core.plan(), 2);
    h.run_to(24 * MS, |_| {});
    // Tick 2 is on the GCD grid but no session is due: the sampler does not wake for it.
    assert_eq!(h.core.stats().ticks, 8); // 4 8 12 16 20 24 and 6 18 (12, 24 shared)
    let t1 = h.stop(1);
    assert_eq!(h.core.plan(), 6);
    let t2 = h.stop(2);
    assert_eq!(h.core.plan(), 0);
    assert_eq!(times(&t1), [4.0, 8.0, 12.0, 16.0, 20.0, 24.0]);
    assert_eq!(times(&t2), [6.0, 12.0, 18.0, 24.0]);
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
    assert_eq!(h.requests(a), 4);
    let (t1, t2) = (h.stop(1), h.stop(2));
    assert_eq!(t1.samples.len(), 4);
    assert_eq!(t2.samples.len(), 2);
    assert_eq!(names(&t2, 1), ["f1", "f2"]);
}

#[test]
fn ticks_during_an_outstanding_request_are_back_filled() {
    let mut h = Harness::new();
    let a = h.agent();
    h.start(1, a, 1, 100);
    h.agents[a].0.enter();
    // A long native call: no interrupt is serviced for 3 ticks.
    h.run_to(3 * MS, |_| {});
    assert_eq!(h.requests(a), 1, "one request stays outstanding");
    assert!(h.answer_with(a, &stack(&[7])));
    h.deliver();
    h.run_to(4 * MS, |h| assert!(h.answer_with(a, &stack(&[8]))));
    let t = h.stop(1);
    assert_eq!(times(&t), [1.0, 2.0, 3.0, 4.0]);
    for i in 0..3 {
        assert_eq!(names(&t, i), ["f7"]);
    }
    assert_eq!(names(&t, 3), ["f8"]);
}

#[test]
fn a_request_outliving_its_script_is_discarded_and_its_ticks_closed() {
    let mut h = Harness::new();
    let a = h.agent();
    let agent = h.agents[a].0.clone();
    h.start(1, a, 1, 100);
    agent.enter();
    h.run_to(MS, |_| {}); // tick 1: request made
    agent.leave(); // script returned before the interrupt was serviced
    agent.enter(); // the next script starts: the pending interrupt fires now
    assert!(agent.take_request().is_none(), "stale request discarded");
    h.run_to(2 * MS, |h| assert!(h.answer_with(a, &stack(&[3])))); // tick 2 closes tick 1
    assert_eq!(h.core.stats().unanswered, 1);
    let t = h.stop(1);
    assert_eq!(times(&t), [1.0, 2.0]);
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
    let req = agent.take_request().expect("request for tick 1");
    agent.leave();
    h.run_to(2 * MS, |_| {}); // idle tick 2 closes tick 1
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
    // Session 2 still gets the answer for both ticks.
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
            // Once full, the session leaves the plan: the sampler stops ticking for it.
            assert_eq!(h.core.stats().ticks, max as u64 + 1, "max {max}");
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
    h.core.set_paused(SessionId(1), true);
    assert_eq!(h.core.plan(), 3);
    h.run_to(MS * 6 + MS / 2, |_| {});
    h.core.set_paused(SessionId(1), false);
    assert_eq!(h.core.plan(), 1);
    h.run_to(MS * 8, |_| {});
    let t1 = h.stop(1);
    assert_eq!(times(&t1), [1.0, 2.0, 3.0, 7.0, 8.0]);
    let t2 = h.stop(2);
    assert_eq!(times(&t2), [3.0, 6.0]);
}

#[test]
fn late_wakes_skip_ticks_and_count_them() {
    let mut h = Harness::new();
    let a = h.agent();
    h.start(1, a, 1, 100);
    h.core.on_tick(1, MS);
    // The thread overslept: woke for tick 2 at 4.5 ms.
    h.core.on_tick(2, 4 * MS + MS / 2);
    assert_eq!(h.core.stats().missed_ticks, 2);
    assert_eq!(h.core.next_tick(4 * MS + MS / 2), Some(5));
    assert_eq!(h.core.stats().lateness, [0, 2 * MS + MS / 2]);
    let t = h.stop(1);
    assert_eq!(times(&t), [1.0, 4.5]);
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

/// One session's life in the property test: start, pauses and resumes, stop, all at
/// half-ticks so that which ticks a session should get is unambiguous.
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
    /// The ticks this session must receive: multiples of its interval after its start,
    /// not after its stop, outside paused stretches.
    fn expected(&self) -> Vec<u64> {
        let mut paused = false;
        let mut out = Vec::new();
        for t in self.start + 1..=self.stop {
            if self.toggles.contains(&(t - 1)) {
                paused = !paused;
            }
            if !paused && t % self.every == 0 {
                out.push(t);
            }
        }
        out
    }
}

proptest! {
    /// Over random sets of sessions, each receives exactly the ticks on its interval, across
    /// every re-plan caused by other sessions starting, pausing, resuming and stopping.
    #[test]
    fn each_session_receives_exactly_the_ticks_on_its_interval(
        lives in proptest::collection::vec(life(), 1..6)
    ) {
        let mut h = Harness::new();
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
                    h.core.set_paused(SessionId(id), paused[i]);
                }
                _ => traces[i] = Some(h.stop(id)),
            }
        }
        for (l, t) in lives.iter().zip(traces) {
            let got: Vec<u64> = times(&t.unwrap()).iter().map(|&ms| ms as u64).collect();
            prop_assert_eq!(got, l.expected(), "{:?}", l);
        }
    }
}
