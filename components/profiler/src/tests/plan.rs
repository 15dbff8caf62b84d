//! The plan: one sample per block of each session's interval, on the grid of the GCD, with
//! shared ticks, late wakes, the agents told when they are due, and a property test of
//! sessions that start, pause, resume and stop at any time.

use std::collections::BTreeSet;

use proptest::prelude::*;

use crate::agent::Sampled;
use crate::sampler::{SessionStart, MAX_PICK_LATENESS};
use crate::trace::MarkerSet;

use super::harness::*;

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
