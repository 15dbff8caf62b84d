//! Where a tick's stack comes from: none when the agent runs no script, at once from a
//! synchronous sampler, by request and answer (in time or not, stale, closed), or from a
//! walk that waits for the agent's thread.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use crate::agent::Sampled;

use super::harness::*;

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

/// Sessions `ids` (every 1 ms, room for 100) of an agent sampled by request, in script:
/// their tick of block 0 waits for the agent's answer to the one request made.
fn waiting_on_a_request(ids: &[u64]) -> (Harness, usize) {
    let mut h = Harness::new();
    let a = h.agent();
    h.agents[a].0.enter();
    for &id in ids {
        h.start(id, a, 1, 100);
    }
    h.run_to(MS, |_| {});
    assert_eq!(h.requests(a), 1);
    (h, a)
}

/// Stopping a session that has ticks waiting for its agent's answer records them without a
/// stack, and the answer that comes later serves only the sessions still running.
#[test]
fn a_session_stopped_while_waiting_keeps_its_ticks_and_the_rest_get_the_answer() {
    let (mut h, a) = waiting_on_a_request(&[1, 2]);
    let t1 = h.stop(1);
    assert_eq!(t1.samples.len(), 1);
    assert_eq!(t1.samples[0].stack_id, None);
    assert!(h.answer_with(a, &stack(&[5])));
    h.deliver();
    let t2 = h.stop(2);
    assert_eq!(t2.samples.len(), 1);
    assert_eq!(names(&t2, 0), ["f5"]);
}

/// A page's `stop()` (`stop_for`) with a tick still waiting for the interrupt: the session
/// ends when the answer comes, with the stack, as the session beside it gets it.
#[test]
fn a_page_stop_waits_for_the_stack_of_its_last_tick() {
    let (mut h, a) = waiting_on_a_request(&[1, 2]);
    assert!(h.stop_for(1).is_none(), "it waits for the answer");
    assert!(h.core.is_stopping());
    // The interrupt comes right after the stop() call.
    assert!(h.answer_with(a, &stack(&[5])));
    h.deliver();
    let t1 = h.finished().expect("ended with the answer");
    // Later picks are session 2's alone.
    h.run_to(3 * MS, |h| {
        h.answer_with(a, &stack(&[5]));
    });
    assert!(!h.core.is_stopping());
    assert_eq!(t1.samples.len(), 1);
    assert_eq!(names(&t1, 0), ["f5"]);
    let t2 = h.stop(2);
    assert_eq!(names(&t2, 0), ["f5"]);
    assert_eq!(t1.samples[0].timestamp, t2.samples[0].timestamp);
    assert_eq!(t2.samples.len(), 3);
}

/// A stopped session waits for its ticks' stacks [`STOP_WAIT`] at most: then they are
/// stackless, as at an immediate stop.
#[test]
fn a_page_stop_waits_no_longer_than_stop_wait() {
    use crate::sampler::STOP_WAIT;
    let (mut h, _) = waiting_on_a_request(&[1]);
    assert!(h.stop_for(1).is_none());
    let stopped = h.now;
    assert!(h.core.stop_poll_in(h.now).is_some());
    h.set_now(stopped + STOP_WAIT - 1);
    h.core.poll_stopping(h.now);
    assert!(h.finished().is_none());
    h.set_now(stopped + STOP_WAIT);
    h.core.poll_stopping(h.now);
    let t = h.finished().expect("ended at STOP_WAIT");
    assert_eq!(t.samples.len(), 1);
    assert_eq!(t.samples[0].stack_id, None);
    assert!(h.core.stop_poll_in(h.now).is_none());
}

/// A request the agent can no longer answer (it left the script) ends a stopping session at
/// the next look, without waiting for STOP_WAIT.
#[test]
fn a_page_stop_ends_at_once_when_its_agent_left_the_script() {
    let (mut h, a) = waiting_on_a_request(&[1]);
    assert!(h.stop_for(1).is_none());
    h.agents[a].0.leave();
    h.core.poll_stopping(h.now);
    let t = h.finished().expect("ended: its request is closed");
    assert_eq!(t.samples.len(), 1);
    assert_eq!(t.samples[0].stack_id, None);
}

/// With nothing waiting, a page's stop ends the session at once.
#[test]
fn a_page_stop_with_nothing_waiting_ends_at_once() {
    let mut h = Harness::new();
    let (a, _) = h.counted_agent(&[2]);
    h.agents[a].0.enter();
    h.start(1, a, 1, 100);
    h.run_to(3 * MS, |_| {});
    let t = h.stop_for(1).expect("nothing waits");
    assert_eq!(names(&t, 1), ["f2"]);
    assert!(!h.core.is_stopping());
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
    // Each tick looked at the walk first: nudged at the second (past WALK_NUDGE), looked
    // at since; between ticks, the next look is the next tick's, or WALK_LOOK's.
    assert_eq!(
        *steps.lock().unwrap(),
        [
            crate::PollStep::Nudge,
            crate::PollStep::Look,
            crate::PollStep::Look,
            crate::PollStep::Look
        ]
    );
    assert_eq!(h.core.walk_poll_in(h.now), Some(crate::sampler::WALK_LOOK));
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

/// A host sampler whose every walk is pending until the test lets the agent's thread walk
/// (`walked`), with the stack of that line.
struct StepSampler {
    walked: Arc<Mutex<Option<u32>>>,
}

impl crate::StackSampler for StepSampler {
    fn sample(&self) -> Sampled {
        Sampled::Pending
    }
    fn poll(&self, _: crate::PollStep) -> Sampled {
        match self.walked.lock().unwrap().take() {
            Some(line) => Sampled::Stack(stack(&[line])),
            None => Sampled::Pending,
        }
    }
}

/// A walk the agent's thread took after the sampler last looked serves the ticks that
/// waited for it, and not the next tick: the thread has run since, so the next tick is
/// walked anew. (The sampler looks at a nudged walk only at the next tick, WALK_LOOK.)
#[test]
fn a_walk_taken_between_looks_does_not_serve_the_next_tick() {
    let mut h = Harness::new();
    let walked = Arc::new(Mutex::new(None));
    let a = h.agent_with(Some(Box::new(StepSampler {
        walked: walked.clone(),
    })));
    h.agents[a].0.enter();
    h.start(1, a, 1, 100);
    h.run_to(MS, |_| {});
    assert!(h.core.walk_poll_in(h.now).is_some(), "a walk is pending");
    // The thread walks, at f1, and runs on; the sampler does not look until its next tick.
    *walked.lock().unwrap() = Some(1);
    h.run_to(2 * MS, |_| {});
    // That tick's own walk is pending, and taken at f2.
    assert!(
        h.core.walk_poll_in(h.now).is_some(),
        "the next tick is walked anew"
    );
    *walked.lock().unwrap() = Some(2);
    h.core.poll_walks(h.now);
    let t = h.stop(1);
    let lines: Vec<Vec<String>> = (0..t.samples.len()).map(|i| names(&t, i)).collect();
    assert_eq!(
        lines.last().map(|l| l.as_slice()),
        Some(&["f2".to_owned()][..])
    );
    assert!(
        lines[..lines.len() - 1].iter().all(|l| l == &["f1"]),
        "{lines:?}"
    );
    assert_eq!(h.core.stats().walks_waited, 2);
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

/// A host sampler whose agent's thread is inside a collection: it takes the walk when
/// nudged (SpiderMonkey's signal handler, which defers it), then answers `Deferred` to every
/// step until the collection ends (`ended`), then the stack.
struct CollectingSampler {
    ended: Arc<std::sync::atomic::AtomicBool>,
    steps: Arc<Mutex<Vec<crate::PollStep>>>,
}

impl crate::StackSampler for CollectingSampler {
    fn sample(&self) -> Sampled {
        Sampled::Pending
    }
    fn poll(&self, step: crate::PollStep) -> Sampled {
        let mut steps = self.steps.lock().unwrap();
        steps.push(step);
        if self.ended.load(Ordering::SeqCst) {
            Sampled::Stack(stack(&[7]))
        } else if steps.contains(&crate::PollStep::Nudge) {
            Sampled::Deferred
        } else {
            Sampled::Pending
        }
    }
}

/// A walk the thread has taken and finishes later (a tick inside a collection longer than
/// WALK_ABANDON, walked when it ends) is not abandoned, and the sampler thread wakes for it
/// only at its ticks or every WALK_LOOK meanwhile: the ticks that waited for it get the stack
/// the collection interrupted.
#[test]
fn a_walk_taken_inside_a_long_collection_is_not_abandoned() {
    let mut h = Harness::new();
    let ended = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let steps = Arc::new(Mutex::new(Vec::new()));
    let a = h.agent_with(Some(Box::new(CollectingSampler {
        ended: ended.clone(),
        steps: steps.clone(),
    })));
    h.agents[a].0.enter();
    h.start(1, a, 1, 1000);
    h.run_to(150 * MS, |h| h.core.poll_walks(h.now));
    assert_eq!(h.core.walk_poll_in(h.now), Some(crate::sampler::WALK_LOOK));
    {
        let steps = steps.lock().unwrap();
        let nudge = steps
            .iter()
            .position(|s| *s == crate::PollStep::Nudge)
            .expect("nudged");
        // After the thread took it: only looks, past WALK_ABANDON too.
        assert!(steps.len() > nudge + 100);
        assert!(steps[nudge + 1..]
            .iter()
            .all(|s| *s == crate::PollStep::Look));
    }
    assert_eq!(h.core.stats().walks_abandoned, 0);
    ended.store(true, Ordering::SeqCst);
    h.core.poll_walks(h.now);
    let t = h.stop(1);
    assert!(t.samples.len() >= 100, "{}", t.samples.len());
    assert!((0..t.samples.len()).all(|i| names(&t, i) == ["f7"]));
    let stats = h.core.stats();
    assert_eq!((stats.walks_waited, stats.walks_abandoned), (1, 0));
}

/// A host sampler that reads its thread's CPU time: while the thread runs (`running`), a
/// walk is done at once and the test advances the CPU time; while it waits for a CPU, walks
/// are pending and the CPU time stands still.
struct ClockedSampler {
    running: Arc<std::sync::atomic::AtomicBool>,
    cpu: Arc<std::sync::atomic::AtomicU64>,
}

impl crate::StackSampler for ClockedSampler {
    fn sample(&self) -> Sampled {
        self.poll(crate::PollStep::Look)
    }
    fn poll(&self, _: crate::PollStep) -> Sampled {
        if self.running.load(Ordering::SeqCst) {
            Sampled::Stack(stack(&[5]))
        } else {
            Sampled::Pending
        }
    }
    fn cpu_time(&self) -> Option<crate::Nanos> {
        Some(self.cpu.load(Ordering::SeqCst))
    }
}

/// When the sampler thread itself waits for a CPU and wakes too late for some picks, an
/// agent whose thread has not run since before those picks (its CPU time has not moved
/// since the sampler last read it) still gets them, each at its own time and with the stack
/// the thread stands at, which is the one it had then. An agent whose thread ran meanwhile
/// misses them.
#[test]
fn picks_the_sampler_woke_late_for_are_served_for_a_thread_that_has_not_run_since() {
    let mut h = Harness::new();
    let mut threads = Vec::new();
    for _ in 0..2 {
        let running = Arc::new(std::sync::atomic::AtomicBool::new(true));
        let cpu = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let a = h.agent_with(Some(Box::new(ClockedSampler {
            running: running.clone(),
            cpu: cpu.clone(),
        })));
        h.agents[a].0.enter();
        threads.push((running, cpu));
    }
    h.start(1, 0, 1, 1000);
    h.start(2, 1, 1, 1000);
    // Both threads run until 10 ms: their CPU time moves between any two wakes.
    h.run_to(10 * MS, |_| {
        for (_, cpu) in &threads {
            cpu.fetch_add(100_000, Ordering::SeqCst);
        }
    });
    // Both threads go off the CPU at 10 ms; the sampler still wakes at its picks until 12 ms
    // (their walks wait), then waits for a CPU itself until 20.5 ms. Meanwhile the second
    // thread runs a little; the first does not.
    for (running, _) in &threads {
        running.store(false, Ordering::SeqCst);
    }
    h.run_to(12 * MS, |h| h.core.poll_walks(h.now));
    threads[1].1.fetch_add(300_000, Ordering::SeqCst);
    h.set_now(20 * MS + MS / 2);
    while h.core.next_wake().is_some_and(|at| at <= h.now) {
        h.core.on_wake(h.now);
    }
    for (running, _) in &threads {
        running.store(true, Ordering::SeqCst);
    }
    h.core.poll_walks(h.now);
    let stats = h.core.stats();
    let (still, ran) = (h.stop(1), h.stop(2));
    // Every block 0-19 has its sample, in its own block, with the stack (block 20's pick
    // may come after 20.5 ms).
    let still_blocks = blocks(&still, 1);
    assert_eq!(still_blocks[..20], (0..20).collect::<Vec<_>>());
    assert!(still_blocks.len() <= 21);
    assert!((0..still.samples.len()).all(|i| names(&still, i) == ["f5"]));
    // Blocks 12-18 at least were late by more than MAX_PICK_LATENESS: the thread that ran
    // has none of them.
    let ran_blocks = blocks(&ran, 1);
    assert!(
        ran_blocks.iter().all(|b| !(12..=18).contains(b)),
        "{ran_blocks:?}"
    );
    assert!(stats.still_served >= 7, "{}", stats.still_served);
    assert!(stats.missed_ticks >= 7, "{}", stats.missed_ticks);
}
