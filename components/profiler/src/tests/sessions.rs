//! A session's states: a full buffer (decision 4), paused sessions (decision 8), and a
//! session started paused.

use crate::agent::Sampled;
use crate::sampler::{SessionId, SessionStart};
use crate::trace::MarkerSet;

use super::harness::*;

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
