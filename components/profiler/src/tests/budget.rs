//! Fair shares of the process's sample budget (issue 40), on the sampler core with fake
//! time: who yields when the budget runs out, that a newcomer beside many forgotten
//! profilers is not starved, that pages within the budget see nothing of it, and that the
//! bound holds whatever sessions do.

use std::collections::BTreeSet;

use crate::recorder::{BufferPolicy, Recorder};
use crate::sampler::{
    max_served_per_tick, mix, SamplerCore, SessionId, DEFAULT_MAX_BUFFERED, MAX_SERVED_PER_SECOND,
};
use crate::time::Resolution;
use crate::trace::MarkerSet;

use super::harness::*;

/// Starts session `id` as a ring buffer of `max`.
fn start_ring(h: &mut Harness, id: u64, agent: usize, every: u64, max: u32) {
    let mut s = h.session_start(id, agent, every, max, MarkerSet::NONE);
    s.recorder = s.recorder.with_policy(BufferPolicy::Ring);
    h.core.start(s, h.now);
}

fn full(h: &Harness) -> Vec<SessionId> {
    let mut full = h.full.lock().unwrap().clone();
    full.sort();
    full
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

/// The page: 100,000 profilers at 1 ms that are never stopped, then the page's own
/// profiler at 20 ms for one second. The forgotten ones, one cohort served
/// MAX_SERVED_PER_SECOND a second (51 a tick at 1 ms), fill the default budget within
/// ~164.5 s and are all full at its share ~2 s later (when each has had its turn again); the newcomer's first sample cuts them down to the share of 100,001 sessions,
/// once, and it takes its 50 samples with a stack.
#[test]
fn a_profiler_started_beside_100000_forgotten_ones_gets_its_samples() {
    const FORGOTTEN: u64 = 100_000;
    let mut h = Harness::new();
    // The page runs no script while they fill the budget (their samples have no stack,
    // which costs the test less than interning one and changes nothing in the budget).
    let (a, _) = h.counted_agent(&[1, 2]);
    for id in 1..=FORGOTTEN {
        h.start(id, a, 1, u32::MAX);
    }
    h.run_to(167_000 * MS, |_| {});
    assert_eq!(h.core.buffered(), DEFAULT_MAX_BUFFERED);
    assert_eq!(h.full.lock().unwrap().len() as u64, FORGOTTEN);
    assert_eq!(h.core.next_wake(), None, "full sessions leave the plan");
    assert_eq!(h.core.stats().reclaims, 0, "nobody below the share asked");

    // Then it runs script all along. The newcomer starts off the block boundaries, so that
    // its first and last blocks are partial.
    h.agents[a].0.enter();
    h.set_now(167_007 * MS + 300_000);
    let id = FORGOTTEN + 1;
    h.start(id, a, 20, u32::MAX);
    h.run_to(h.now + 1000 * MS, |_| {});
    assert!(h.core.buffered() <= DEFAULT_MAX_BUFFERED);
    let stats = h.core.stats();
    let t = h.stop(id);
    let with_stack = t.samples.iter().filter(|s| s.stack_id.is_some()).count();
    assert!(
        (47..=53).contains(&with_stack),
        "{with_stack} samples with a stack"
    );
    assert_eq!(with_stack, t.samples.len());
    // One cut: the forgotten ones holding 84 (2^23 = 83 x 100,000 + 88,608 of them) gave
    // one back each, all of them already full.
    assert_eq!(stats.reclaims, 1);
    let share = DEFAULT_MAX_BUFFERED / (FORGOTTEN + 1);
    assert_eq!(stats.reclaimed, DEFAULT_MAX_BUFFERED % FORGOTTEN);
    assert_eq!(share, 83);
    assert_eq!(
        h.full.lock().unwrap().len() as u64,
        FORGOTTEN,
        "told once each"
    );
}

/// The same page as it runs: the newcomer starts while the forgotten ones are still filling
/// the budget. A tick records into at most max_served_per_tick of their cohort (a tick's
/// cost is proportional to the sessions it records into, and the real sampler would
/// otherwise be busy all the time and wake late for the newcomer's picks), in turn, so each
/// forgotten one samples in its turn; the newcomer, a cohort of its own, is served at every
/// one of its blocks.
#[test]
fn a_tick_records_into_a_bounded_number_of_one_cohorts_sessions() {
    const FORGOTTEN: u64 = 100_000;
    let mut h = Harness::new();
    let (a, _) = h.counted_agent(&[1, 2]);
    h.agents[a].0.enter();
    for id in 1..=FORGOTTEN {
        h.start(id, a, 1, u32::MAX);
    }
    h.run_to(200 * MS, |_| {});
    let before = h.core.stats();
    assert!(before.ticks >= 199, "{} ticks", before.ticks);
    let served: u64 = before.phases.iter().sum();
    let per_tick = max_served_per_tick(MS) as u64;
    assert_eq!(per_tick, MAX_SERVED_PER_SECOND / 1000);
    assert_eq!(
        served,
        before.ticks * per_tick,
        "each tick serves the bound"
    );
    assert_eq!(
        h.core.buffered(),
        served,
        "well within the budget: nobody is full yet"
    );
    assert!(h.full.lock().unwrap().is_empty());

    h.run_to(207 * MS + 300_000, |_| {});
    let id = FORGOTTEN + 1;
    h.start(id, a, 20, u32::MAX);
    h.run_to(h.now + 1000 * MS, |_| {});
    let after = h.core.stats();
    let ticks = after.ticks - before.ticks;
    let served = after.phases.iter().sum::<u64>() - before.phases.iter().sum::<u64>();
    assert!(
        served <= ticks * (per_tick + 1),
        "{served} sessions served in {ticks} ticks"
    );
    let t = h.stop(id);
    let with_stack = t.samples.iter().filter(|s| s.stack_id.is_some()).count();
    assert!(
        (47..=53).contains(&with_stack),
        "{with_stack} samples with a stack"
    );
    // The forgotten ones took the ticks in turn, from the first: after 1,207 ticks of 51
    // each (61,557 turns), the first 61,557 have one sample and the others none yet.
    let turns = after.ticks * per_tick;
    assert!((61_000..62_000).contains(&turns), "{turns} turns");
    let lens: BTreeSet<(u64, usize)> = [1, turns - 1, turns + 2, FORGOTTEN]
        .iter()
        .map(|&i| (i, h.stop(i).samples.len()))
        .collect();
    let expected: BTreeSet<(u64, usize)> = [(1, 1), (turns - 1, 1), (turns + 2, 0), (FORGOTTEN, 0)]
        .into_iter()
        .collect();
    assert_eq!(lens, expected);
}

/// The budget runs out on one big session; a second one below its share cuts it down to
/// the share. The first is full (told once) and keeps the samples it took first; the
/// second gets its share and is full in turn, and the budget is exactly spent.
#[test]
fn the_session_holding_the_most_yields_to_one_below_its_share() {
    let mut h = Harness::new();
    h.core = SamplerCore::new(MS, 0, SEED).with_budget(100);
    let a = h.agent();
    h.start(1, a, 1, 1000);
    h.run_to(150 * MS, |_| {});
    assert_eq!(
        full(&h),
        [SessionId(1)],
        "alone, its share is the whole budget"
    );
    assert_eq!(h.core.buffered(), 100);
    h.start(2, a, 1, 1000);
    h.run_to(300 * MS, |_| {});
    assert_eq!(full(&h), [SessionId(1), SessionId(2)]);
    assert_eq!(h.core.buffered(), 100);
    let stats = h.core.stats();
    assert_eq!((stats.reclaims, stats.reclaimed), (1, 50));
    assert_eq!(blocks(&h.stop(1), 1), (0..50).collect::<Vec<_>>());
    assert_eq!(blocks(&h.stop(2), 1), (150..200).collect::<Vec<_>>());
    assert_eq!(h.full.lock().unwrap().len(), 2, "each told once");
}

/// A ring above its share loses its oldest samples to a session below it, and goes on,
/// held to its share: it keeps the last samples, and is never told it is full.
#[test]
fn a_ring_above_its_share_yields_its_oldest_and_goes_on() {
    let mut h = Harness::new();
    h.core = SamplerCore::new(MS, 0, SEED).with_budget(100);
    let a = h.agent();
    start_ring(&mut h, 1, a, 1, 1000);
    h.run_to(150 * MS, |_| {});
    assert_eq!(h.core.buffered(), 100);
    h.start(2, a, 1, 1000);
    h.run_to(300 * MS, |_| {});
    assert_eq!(full(&h), [SessionId(2)]);
    assert_eq!(h.core.buffered(), 100);
    assert_eq!(blocks(&h.stop(1), 1), (250..300).collect::<Vec<_>>());
    assert_eq!(blocks(&h.stop(2), 1), (150..200).collect::<Vec<_>>());
}

/// Only the sessions above the share give samples back, each down to the share; those at
/// or below it keep theirs. One not full yet is full from then on (a paused one too), and
/// one already full is not told again.
#[test]
fn only_the_sessions_above_the_share_are_cut() {
    let mut h = Harness::new();
    h.core = SamplerCore::new(MS, 0, SEED).with_budget(120);
    let a = h.agent();
    // 1 and 2 fill their own buffers (60 and 10); 3 takes 50 and is paused.
    h.start(1, a, 1, 60);
    h.start(2, a, 1, 10);
    h.start(3, a, 1, 1000);
    h.run_to(50 * MS, |_| {});
    h.pause(3, true);
    h.run_to(100 * MS, |_| {});
    assert_eq!(h.core.buffered(), 120);
    assert_eq!(full(&h), [SessionId(1), SessionId(2)]);
    // 4 comes: the share is 30. 1 gives back 30 (not told again), 3 gives back 20 and is
    // full; 2 keeps its 10. 4 takes 30 of the 50 freed: the rest stays free for whoever
    // is below the share.
    h.start(4, a, 1, 1000);
    h.run_to(200 * MS, |_| {});
    h.pause(3, false);
    h.run_to(300 * MS, |_| {});
    assert_eq!(h.core.stats().reclaimed, 50);
    assert_eq!(
        full(&h),
        [SessionId(1), SessionId(2), SessionId(3), SessionId(4)]
    );
    assert_eq!(h.full.lock().unwrap().len(), 4, "each told once");
    assert_eq!(h.core.buffered(), 100);
    assert_eq!(blocks(&h.stop(1), 1), (0..30).collect::<Vec<_>>());
    assert_eq!(h.stop(2).samples.len(), 10);
    assert_eq!(blocks(&h.stop(3), 1), (0..30).collect::<Vec<_>>());
    assert_eq!(blocks(&h.stop(4), 1), (100..130).collect::<Vec<_>>());
}

/// While the budget has room, a session may hold more than its share (the budget is not
/// split in advance); once it has run out, nobody grows past the share until it drains
/// to half.
#[test]
fn shares_hold_only_from_when_the_budget_runs_out_until_it_drains_to_half() {
    let mut h = Harness::new();
    h.core = SamplerCore::new(MS, 0, SEED).with_budget(100);
    let a = h.agent();
    // Paused all along: it holds nothing but counts, so each share is a third.
    h.start(1, a, 1, 1000);
    h.pause(1, true);
    h.start(2, a, 1, 1000);
    h.run_to(90 * MS, |_| {});
    assert_eq!(h.core.buffered(), 90, "90 samples, past the share of 33");
    // 2 and 3 take the last 10 between them; then 2 is over its share (33) and full, and
    // 3, below it, cuts 2 down to 33 and goes on to 33 itself.
    h.start(3, a, 1, 1000);
    h.run_to(200 * MS, |_| {});
    assert_eq!(full(&h), [SessionId(2), SessionId(3)]);
    let held = h.core.buffered();
    assert_eq!(held, 66);
    // The budget has room, but shares still hold: 1, resumed, stops at its 33.
    h.pause(1, false);
    h.run_to(300 * MS, |_| {});
    assert_eq!(full(&h), [SessionId(1), SessionId(2), SessionId(3)]);
    assert_eq!(h.core.buffered(), 99);
    // 2 and 3 stop: 33 held, under half; 4 may take all that is free again.
    h.stop(2);
    h.stop(3);
    h.start(4, a, 1, 1000);
    h.run_to(500 * MS, |_| {});
    assert_eq!(h.stop(4).samples.len(), 67);
}

/// A page whose profilers stay within the budget sees nothing of it: the same traces and
/// notifications as with no budget at all, and no cut.
#[test]
fn a_page_with_a_few_profilers_within_the_budget_is_unaffected() {
    let run = |budget: u64| {
        let mut h = Harness::new();
        h.core = SamplerCore::new(MS, 0, SEED).with_budget(budget);
        let (a, _) = h.counted_agent(&[1, 2, 3]);
        h.agents[a].0.enter();
        h.start(1, a, 1, 10_000);
        h.start(2, a, 10, 100);
        start_ring(&mut h, 3, a, 20, 50);
        h.run_to(1000 * MS, |_| {});
        h.start(4, a, 5, 1000);
        h.run_to(5000 * MS, |_| {});
        let stats = h.core.stats();
        let traces: Vec<_> = (1..=4).map(|id| h.stop(id).to_json()).collect();
        (traces, full(&h), stats.reclaims)
    };
    let (unbounded, full_unbounded, _) = run(u64::MAX);
    // 5,000 + 100 + 50 + 800 samples: a budget of 6,000 holds them all.
    let (bounded, full_bounded, reclaims) = run(6000);
    assert_eq!(full_unbounded, [SessionId(2)]);
    assert_eq!(full_bounded, full_unbounded);
    assert!(bounded == unbounded, "the same traces");
    assert_eq!(reclaims, 0);
}

/// Sessions starting, pausing, restarting and stopping at pseudo-random times, with
/// random intervals, limits and policies, against a small budget: the unstopped sessions
/// never hold more than the budget, the count of what they hold is exact, and each
/// session is told it is full at most once per buffer.
#[test]
fn the_budget_bound_holds_whatever_sessions_do() {
    const BUDGET: u64 = 200;
    for seed in 0..8u64 {
        let mut h = Harness::with(MS, seed);
        h.core = SamplerCore::new(MS, 0, seed).with_budget(BUDGET);
        let (a, _) = h.counted_agent(&[1, 2]);
        h.agents[a].0.enter();
        let mut live: Vec<u64> = Vec::new();
        let mut paused = BTreeSet::new();
        let mut next_id = 1;
        let mut restarts = 0usize;
        for step in 0..400u64 {
            let r = mix(seed, step, 0);
            match r % 10 {
                0..=3 => {
                    let every = 1 + mix(seed, step, 1) % 4;
                    let max = (mix(seed, step, 2) % 150) as u32;
                    if mix(seed, step, 3).is_multiple_of(4) {
                        start_ring(&mut h, next_id, a, every, max);
                    } else {
                        h.start(next_id, a, every, max);
                    }
                    live.push(next_id);
                    next_id += 1;
                }
                4 | 5 if !live.is_empty() => {
                    let id = live.swap_remove((mix(seed, step, 4) % live.len() as u64) as usize);
                    paused.remove(&id);
                    h.stop(id);
                }
                6 if !live.is_empty() => {
                    let id = live[(mix(seed, step, 5) % live.len() as u64) as usize];
                    let pause = paused.insert(id);
                    if !pause {
                        paused.remove(&id);
                    }
                    h.pause(id, pause);
                }
                7 if !live.is_empty() => {
                    let id = live[(mix(seed, step, 6) % live.len() as u64) as usize];
                    h.core.restart(SessionId(id), h.now, None);
                    restarts += 1;
                }
                _ => {}
            }
            let until = h.now + (1 + mix(seed, step, 7) % 20) * MS;
            while let Some(at) = h.core.next_wake().filter(|&at| at <= until) {
                h.set_now(at);
                h.core.on_wake(at);
                assert!(h.core.buffered() <= BUDGET, "seed {seed} step {step}");
            }
            h.set_now(until);
        }
        let held = h.core.buffered();
        let sum: usize = live.iter().map(|&id| h.stop(id).samples.len()).sum();
        assert_eq!(sum as u64, held, "seed {seed}");
        assert_eq!(h.core.buffered(), 0);
        // A restart without a new callback keeps the spent one: at most one call a session.
        let told = h.full.lock().unwrap().clone();
        let distinct: BTreeSet<_> = told.iter().collect();
        assert_eq!(
            distinct.len(),
            told.len(),
            "seed {seed}, {restarts} restarts"
        );
        assert!(
            h.core.stats().reclaims > 0,
            "seed {seed}: the budget was contended"
        );
    }
}

/// A buffer cut from its newest end is the buffer that never took those samples, across
/// chunk boundaries, after its oldest were dropped, and as it takes samples again.
#[test]
fn dropping_the_newest_samples_leaves_the_buffer_that_never_took_them() {
    let at = |i: u32| u64::from(i) * MS;
    let stack_of = |i: u32| stack(&[1 + i % 3, 10 + i % 7]);
    for (taken, kept, dropped_oldest) in [
        (10_000u32, 4096u32, 0u32),
        (10_000, 4095, 0),
        (10_000, 0, 0),
        (5000, 4097, 100),
        (100, 50, 50),
        (4096, 4096, 4096),
    ] {
        let mut cut = Recorder::new(REALM, 0, Resolution::Isolated, u32::MAX);
        let mut fresh = Recorder::new(REALM, 0, Resolution::Isolated, u32::MAX);
        for i in 0..taken {
            cut.add(at(i), Some(&stack_of(i)), None);
        }
        for _ in kept..taken {
            cut.drop_newest();
        }
        for _ in 0..dropped_oldest {
            cut.drop_oldest();
        }
        for i in dropped_oldest..kept {
            fresh.add(at(i), Some(&stack_of(i)), None);
        }
        // Both take the same samples again.
        for i in 0..5000 {
            cut.add(at(taken + i), Some(&stack_of(i)), None);
            fresh.add(at(taken + i), Some(&stack_of(i)), None);
        }
        assert_eq!(cut.len(), fresh.len());
        let (cut, fresh) = (cut.build(&Symbols), fresh.build(&Symbols));
        assert_eq!(
            times(&cut),
            times(&fresh),
            "{taken} {kept} {dropped_oldest}"
        );
        for (a, b) in cut.samples.iter().zip(&fresh.samples) {
            assert_eq!(cut.sample_frames(a), fresh.sample_frames(b));
        }
    }
}
