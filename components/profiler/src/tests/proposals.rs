//! The proposals beyond the spec (issue 28), on the sampler core with fake time: the ring
//! buffer (WICG js-self-profiling#81) and `restart()` (WICG js-self-profiling#90).

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use crate::agent::Sampled;
use crate::frame::{RawFrame, RawStack, ScriptId};
use crate::recorder::{Added, BufferPolicy, Recorder};
use crate::sampler::{mix, SamplerCore, SessionId};
use crate::time::{Nanos, Resolution};
use crate::trace::{MarkerSet, ProfilerTrace};

use super::harness::*;

/// A stack that changes with `n`: 8 frames, the inner four at positions of their own, so a
/// long run keeps interning new frames and stack nodes.
fn changing_stack(n: u32) -> RawStack {
    (0..8u32)
        .map(|d| {
            let line = if d < 4 { 10 + d } else { 1000 + n * 8 + d };
            RawFrame::at(REALM, ScriptId(1 + d % 2), line, 1)
        })
        .collect::<Vec<_>>()
        .into()
}

/// Every ID of `t` is valid, parents come first, and every frame, stack and resource is
/// used by a sample (directly or as an ancestor).
fn all_used_and_valid(t: &ProfilerTrace) {
    let mut stacks = BTreeSet::new();
    for s in &t.samples {
        assert!(t.sample_frames(s).is_some(), "invalid ids in {s:?}");
        let mut next = s.stack_id;
        while let Some(id) = next {
            stacks.insert(id);
            next = t.stacks[id as usize].parent_id;
        }
    }
    assert_eq!(stacks.len(), t.stacks.len(), "unused stacks");
    let frames: BTreeSet<u64> = t.stacks.iter().map(|s| s.frame_id).collect();
    assert_eq!(frames.len(), t.frames.len(), "unused frames");
    let resources: BTreeSet<u64> = t.frames.iter().filter_map(|f| f.resource_id).collect();
    assert_eq!(resources.len(), t.resources.len(), "unused resources");
}

#[test]
fn a_ring_buffer_keeps_the_last_samples_and_only_what_they_use() {
    for max in [1u32, 7, 100, 5000] {
        let mut ring =
            Recorder::new(REALM, 0, Resolution::Isolated, max).with_policy(BufferPolicy::Ring);
        let mut all = Recorder::new(REALM, 0, Resolution::Isolated, u32::MAX);
        let n = 20_000u32;
        for i in 0..n {
            // Some samples idle, the rest on stacks that keep changing.
            let stack = (i % 5 != 0).then(|| changing_stack(i / 3));
            let added = ring.add(u64::from(i) * MS, stack.as_ref(), None);
            let expected = if i < max {
                Added::Stored
            } else {
                Added::Replaced
            };
            assert_eq!(added, expected, "max {max} sample {i}");
            all.add(u64::from(i) * MS, stack.as_ref(), None);
        }
        assert_eq!(ring.len(), max as usize);
        // The table stays bounded by a multiple of the buffer (8 nodes a stack here).
        assert!(
            ring.interned_nodes() <= (2 * 8 * max as usize).max(4 * max as usize).max(4096) + 8,
            "max {max}: {} nodes",
            ring.interned_nodes()
        );
        let ring = ring.build(&Symbols);
        let all = all.build(&Symbols);
        all_used_and_valid(&ring);
        // The same samples as the last `max` of an unbounded buffer, with the same frames.
        let tail = &all.samples[(n - max) as usize..];
        assert_eq!(ring.samples.len(), tail.len());
        for (i, (r, a)) in ring.samples.iter().zip(tail).enumerate() {
            assert_eq!(r.timestamp, a.timestamp);
            assert_eq!(
                ring.sample_frames(r),
                all.sample_frames(a),
                "max {max} #{i}"
            );
        }
    }
}

#[test]
fn a_ring_buffer_of_size_zero_holds_nothing_and_never_fills() {
    let mut ring = Recorder::new(REALM, 0, Resolution::Isolated, 0).with_policy(BufferPolicy::Ring);
    for i in 0..10 {
        assert_eq!(ring.add(i * MS, Some(&stack(&[1])), None), Added::Replaced);
    }
    assert!(ring.build(&Symbols).samples.is_empty());
}

#[test]
fn a_ring_buffers_memory_stays_bounded_on_a_long_run() {
    // 1,000,000 samples of ever-changing stacks through a 1,000-sample ring: the sample log
    // holds at most the buffer and two chunks, and the stack table a multiple of it.
    let mut ring =
        Recorder::new(REALM, 0, Resolution::Isolated, 1000).with_policy(BufferPolicy::Ring);
    let mut most_nodes = 0;
    let mut most_bytes = 0;
    for i in 0..1_000_000u32 {
        ring.add(u64::from(i) * MS, Some(&changing_stack(i)), None);
        most_nodes = most_nodes.max(ring.interned_nodes());
        most_bytes = most_bytes.max(ring.sample_bytes());
    }
    // Each sample has 4 nodes of its own: 4,000 live; compacted past max(4,096, 2 x live).
    assert!(most_nodes <= 8_000 + 8, "{most_nodes} nodes");
    assert!(most_bytes <= 3 * 4096 * 12 + 1024, "{most_bytes} bytes");
    all_used_and_valid(&ring.build(&Symbols));
}

#[test]
fn a_ring_held_down_by_the_budget_stays_bounded_too() {
    // A ring with room for u32::MAX samples that the process's budget holds at 500 (the
    // sampler drops its oldest before each add): its tables follow the samples it holds.
    let mut ring =
        Recorder::new(REALM, 0, Resolution::Isolated, u32::MAX).with_policy(BufferPolicy::Ring);
    let mut most_nodes = 0;
    for i in 0..200_000u32 {
        if ring.len() == 500 {
            ring.drop_oldest();
        }
        ring.add(u64::from(i) * MS, Some(&changing_stack(i)), None);
        most_nodes = most_nodes.max(ring.interned_nodes());
    }
    assert_eq!(ring.len(), 500);
    // 4 nodes of its own a sample: 2,000 live; compacted past max(4,096, 2 x live).
    assert!(most_nodes <= 4096 + 8, "{most_nodes} nodes");
    all_used_and_valid(&ring.build(&Symbols));
}

#[test]
fn a_ring_session_never_fills_and_its_trace_is_the_last_samples() {
    let mut h = Harness::new();
    let n = Arc::new(AtomicU32::new(0));
    let m = n.clone();
    let a = h.agent_with(Some(Box::new(move || {
        Sampled::Stack(changing_stack(m.fetch_add(1, Ordering::SeqCst)))
    })));
    h.agents[a].0.enter();
    // Session 1 a ring of 50, session 2 unbounded: the same ticks, the same stacks.
    let mut ring = h.session_start(1, a, 2, 50, MarkerSet::NONE);
    ring.recorder = ring.recorder.with_policy(BufferPolicy::Ring);
    h.core.start(ring, h.now);
    h.start(2, a, 2, u32::MAX);
    h.run_to(2000 * MS, |_| {});
    assert!(
        h.full.lock().unwrap().is_empty(),
        "a ring buffer never fills"
    );
    assert_eq!(h.core.stats().buffered, 50 + 1000);
    let ring = h.stop(1);
    let all = h.stop(2);
    assert_eq!(all.samples.len(), 1000);
    all_used_and_valid(&ring);
    let tail = &all.samples[950..];
    for (r, a) in ring.samples.iter().zip(tail) {
        assert_eq!(r.timestamp, a.timestamp);
        assert_eq!(ring.sample_frames(r), all.sample_frames(a));
    }
    assert_eq!(ring.samples.len(), 50);
}

#[test]
fn a_ring_session_over_the_process_budget_drops_its_oldest_instead_of_filling() {
    let mut h = Harness::new();
    h.core = SamplerCore::new(MS, 0, SEED).with_budget(30);
    let a = h.agent();
    let mut ring = h.session_start(1, a, 1, 100, MarkerSet::NONE);
    ring.recorder = ring.recorder.with_policy(BufferPolicy::Ring);
    h.core.start(ring, h.now);
    h.run_to(200 * MS, |_| {});
    assert!(h.full.lock().unwrap().is_empty());
    assert_eq!(h.core.stats().buffered, 30);
    let t = h.stop(1);
    assert_eq!(t.samples.len(), 30);
    assert_eq!(h.core.stats().buffered, 0);
    // The last 30 blocks of the 200.
    assert_eq!(blocks(&t, 1), (170..200).collect::<Vec<_>>());
}

/// Runs session 1 (every `k` ms) to `until`, restarting it at pseudo-random times
/// (`restarts` of them, the first after `first`); returns every trace, the last one
/// stopped.
fn with_restarts(h: &mut Harness, k: u64, restarts: u64, until: Nanos) -> Vec<ProfilerTrace> {
    let mut traces = Vec::new();
    let step = until / (restarts + 1);
    for r in 0..restarts {
        // Anywhere in the step: inside blocks, on their edges, before or after their picks.
        let at = (r + 1) * step + mix(3, r, k) % step - step / 2;
        h.run_to(at, |_| {});
        let old = h
            .core
            .restart(SessionId(1), h.now, None)
            .expect("a live session");
        traces.push(old.recorder.build(&Symbols));
    }
    h.run_to(until, |_| {});
    traces.push(h.stop(1));
    traces
}

#[test]
fn restart_loses_no_interval_over_many_restarts() {
    for k in [1u64, 3, 10, 16] {
        let mut h = Harness::new();
        let a = h.agent_with(Some(Box::new(|| Sampled::Stack(stack(&[1, 2])))));
        h.agents[a].0.enter();
        h.start(1, a, k, u32::MAX);
        let until = 5000 * k * MS;
        let traces = with_restarts(&mut h, k, 400, until);
        assert_eq!(traces.len(), 401);
        // Every block from the first to the last has exactly one sample, across all the
        // traces: none lost at a restart and none taken twice.
        let blocks: Vec<u64> = traces.iter().flat_map(|t| blocks(t, k)).collect();
        assert_eq!(blocks, (0..5000).collect::<Vec<_>>(), "k {k}");
        // So a gap across a restart is like any other: under two intervals (one sample per
        // block). Gaps are one interval on average, and those that hold a random point in
        // time (a restart) are longer by the inspection paradox: E[G²]/E[G] = 7/6 interval
        // for G = 1 + U₂ - U₁. Either mean of 400 gaps is within 0.1 interval of its
        // expectation (about 5 standard deviations).
        let times: Vec<Vec<f64>> = traces.iter().map(times).collect();
        let within: Vec<f64> = times
            .iter()
            .flat_map(|t| t.windows(2).map(|w| w[1] - w[0]))
            .collect();
        let across: Vec<f64> = times
            .windows(2)
            .filter(|w| !w[0].is_empty() && !w[1].is_empty())
            .map(|w| w[1][0] - w[0][w[0].len() - 1])
            .collect();
        let k_ms = k as f64;
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        assert!(
            within.iter().chain(&across).all(|&g| g < 2.0 * k_ms),
            "k {k}"
        );
        assert!(across.len() >= 390, "k {k}: {}", across.len());
        let (a, w) = (mean(&across), mean(&within));
        assert!(
            (a - 7.0 / 6.0 * k_ms).abs() < 0.1 * k_ms,
            "k {k}: across {a}"
        );
        assert!((w - k_ms).abs() < 0.1 * k_ms, "k {k}: within {w}");
        for t in &traces {
            all_used_and_valid(t);
        }
        assert_eq!(h.core.stats().buffered, 0);
    }
}

#[test]
fn restarting_a_full_session_samples_again_and_notifies_again() {
    let mut h = Harness::new();
    let a = h.agent();
    h.start(1, a, 1, 5);
    h.run_to(20 * MS, |_| {});
    assert_eq!(h.full.lock().unwrap().len(), 1);
    assert_eq!(h.core.next_wake(), None);
    let full = h.full.clone();
    let old = h
        .core
        .restart(
            SessionId(1),
            h.now,
            Some(Box::new(move || full.lock().unwrap().push(SessionId(99)))),
        )
        .unwrap();
    assert_eq!(old.recorder.len(), 5);
    assert_eq!(h.core.stats().buffered, 0);
    // Back in the plan from the next block on.
    assert!(h.core.next_wake().is_some());
    h.run_to(40 * MS, |_| {});
    assert_eq!(*h.full.lock().unwrap(), [SessionId(1), SessionId(99)]);
    let t = h.stop(1);
    assert_eq!(blocks(&t, 1), (20..25).collect::<Vec<_>>());
}

#[test]
fn a_tick_waiting_at_a_restart_stays_in_the_old_trace() {
    let mut h = Harness::new();
    let a = h.agent();
    h.agents[a].0.enter();
    h.start(1, a, 1, u32::MAX);
    h.run_to(5 * MS, |h| {
        h.answer_with(0, &stack(&[7]));
    });
    // The next tick asks the agent, which has not answered when the session restarts.
    let at = h.core.next_wake().unwrap();
    h.set_now(at);
    h.core.on_wake(at);
    let old = h.core.restart(SessionId(1), h.now, None).unwrap();
    let old = old.recorder.build(&Symbols);
    assert_eq!(old.samples.len(), 6);
    assert_eq!(old.samples[5].stack_id, None, "recorded without a stack");
    // The late answer goes nowhere; later ticks go into the new buffer.
    assert!(h.answer_with(0, &stack(&[7])));
    h.deliver();
    h.run_to(10 * MS, |h| {
        h.answer_with(0, &stack(&[8]));
    });
    let new = h.stop(1);
    assert_eq!(blocks(&new, 1), [6, 7, 8, 9]);
    assert!(new.samples.iter().all(|s| s.stack_id.is_some()));
}

/// A host sampler for the stress test: walks that stay pending or deferred for a while, and
/// a thread CPU clock that sometimes stands still (the sampler then serves late picks at
/// their own time).
struct Flaky {
    state: std::sync::Mutex<FlakyState>,
}

struct FlakyState {
    /// The pseudo-random state every outcome is drawn from.
    roll: u64,
    /// Walks begun: each has a stack of its own.
    walks: u32,
    /// The thread's CPU time, in arbitrary units.
    cpu: u64,
}

impl Flaky {
    fn new(seed: u64) -> Self {
        Flaky {
            state: std::sync::Mutex::new(FlakyState {
                roll: seed,
                walks: 0,
                cpu: 0,
            }),
        }
    }

    fn roll(&self) -> u64 {
        let mut s = self.state.lock().unwrap();
        s.roll = mix(s.roll, 1, 2);
        s.roll
    }
}

impl crate::StackSampler for Flaky {
    fn sample(&self) -> Sampled {
        let r = self.roll();
        let mut s = self.state.lock().unwrap();
        s.walks += 1;
        match r % 5 {
            0 => Sampled::Pending,
            1 => Sampled::Deferred,
            2 => Sampled::Unavailable,
            _ => Sampled::Stack(changing_stack(s.walks)),
        }
    }
    fn poll(&self, _: crate::agent::PollStep) -> Sampled {
        let r = self.roll();
        let s = self.state.lock().unwrap();
        match r % 3 {
            0 => Sampled::Pending,
            _ => Sampled::Stack(changing_stack(s.walks)),
        }
    }
    fn cpu_time(&self) -> Option<Nanos> {
        let r = self.roll();
        let mut s = self.state.lock().unwrap();
        if !r.is_multiple_of(3) {
            s.cpu += 1;
        }
        Some(s.cpu)
    }
}

/// The WPT test `proposals/ring.window.js` checks a ring against a session of the same
/// interval beside it: the ring's samples are the other's last ones, tick for tick. Here
/// with the ways a real sampler wakes: late (up to 200 ms), walks pending, deferred or
/// by request, answers late, a thread that has not run since a pick.
#[test]
fn a_ring_and_a_session_of_the_same_interval_share_every_tick_whatever_the_wakes() {
    for seed in 0..400u64 {
        let mut h = Harness::with(20 * MS, seed);
        let a = h.agent_with(Some(Box::new(Flaky::new(seed))));
        h.agents[a].0.enter();
        h.set_now(3 * MS + seed % 17 * MS);
        let mut ring = h.session_start(1, a, 1, 20, MarkerSet::NONE);
        ring.recorder = ring.recorder.with_policy(BufferPolicy::Ring);
        h.core.start(ring, h.now);
        h.set_now(h.now + seed % 5 * 10_000);
        h.start(2, a, 1, u32::MAX);
        let mut r = seed;
        let (mut ring, mut stopped) = (None, false);
        while h.now < 2100 * MS || ring.is_none() {
            r = mix(r, 3, 4);
            if h.now >= 2000 * MS && !stopped {
                stopped = true;
                ring = h.stop_for(1);
            }
            let wake = h.core.next_wake().unwrap();
            let poll = [h.core.walk_poll_in(h.now), h.core.stop_poll_in(h.now)]
                .into_iter()
                .flatten()
                .min()
                .map(|p| h.now + p);
            let at = poll.map_or(wake, |p| p.min(wake)).max(h.now);
            // Late by a few hundred µs mostly, by up to 30 ms often, by up to 200 ms
            // (blocks missed) now and then.
            // Once the ring is stopped, the sampler thread is not starved: the ring's last
            // ticks get their stacks within STOP_WAIT, as the other session's do.
            let late = match r % 16 {
                _ if stopped => r % 300_000,
                0 => r / 16 % (200 * MS),
                1..=4 => r / 16 % (30 * MS),
                _ => r / 16 % 300_000,
            };
            h.set_now(at + late);
            h.core.poll_walks(h.now);
            h.core.poll_stopping(h.now);
            if ring.is_none() && stopped {
                ring = h.finished();
            }
            h.core.on_wake(h.now);
            if r.is_multiple_of(3) {
                h.answer_with(a, &changing_stack(7));
            }
            h.deliver();
        }
        let ring = ring.expect("the ring has ended");
        let all = h.stop(2);
        let last = ring.samples.last().unwrap().timestamp;
        let before: Vec<_> = all.samples.iter().filter(|s| s.timestamp <= last).collect();
        let tail = &before[before.len() - ring.samples.len()..];
        let rt: Vec<f64> = ring.samples.iter().map(|s| s.timestamp).collect();
        let at: Vec<f64> = tail.iter().map(|s| s.timestamp).collect();
        assert_eq!(rt, at, "seed {seed}");
        for (r, a) in ring.samples.iter().zip(tail) {
            assert_eq!(ring.sample_frames(r), all.sample_frames(a), "seed {seed}");
        }
    }
}
