//! Where samples fall: evenly inside their blocks, so that periodic work gets its true
//! share whatever its period (and would not without randomised ticks), and the partial
//! intervals at the ends of a profile are sampled like its middle.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::agent::Sampled;
use crate::time::{Clock, Nanos};
use crate::trace::ProfilerTrace;

use super::harness::*;

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
