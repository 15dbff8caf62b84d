//! Forced samples (WebDriver's Force Sample): taken at once through the same rules as a
//! timed one, by request when they must be, and released when recorded.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use crossbeam_channel::Receiver;

use crate::agent::Sampled;
use crate::sampler::SessionId;

use super::harness::*;

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
