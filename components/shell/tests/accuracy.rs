//! Samples that tell the truth, through real pages in the real engine: periodic work gets its
//! true share whatever its period, time inside a long native call goes to the function that
//! made it, and many profilers share their captures.
//!
//! Sampling is real here, so margins are statistical, and every run must pass, not an
//! average. **The truth** is what the page itself recorded: when each phase of its loop ran,
//! by the wall clock (`tests/pages/accuracy/check.js`), not the nominal split of its code —
//! on a loaded machine the page's thread is preempted, a phase that was running when it lost
//! the CPU overruns, and the split it ran moves. A sample's timestamp is its tick, on the
//! page's clock, so each run makes two comparisons:
//! - **where the ticks fell**: the share of all samples (with a stack or without: a tick the
//!   thread, off the CPU, could not answer in time has none) whose timestamp lies in the
//!   phase under test must be that phase's share of the wall-clock time (one random tick per
//!   block: no phase of periodic work is favoured);
//! - **what the stacks say**: among the samples that have a stack (and lie more than 0.2 ms
//!   from a phase's edge), the share whose stack has the phase's function must be the share
//!   whose timestamp lies in that phase (a stack is the one of its tick: a tick inside a
//!   native call shows the function that made it).
//!
//! Neither depends on which block a session samples first, nor on how many ticks a loaded
//! machine answers late.
//!
//! **The tolerance** of each comparison is computed from its own sample count: one sample per
//! block at a uniformly random point in it is stratified sampling, whose variance is at most
//! the binomial's, so the sampled share has a standard deviation of at most
//! `sqrt(p (1 - p) / n)` around the truth `p` (for the stacks, both shares are of the same
//! samples, and differ only where a stack is wrong). A comparison allows `z` of those (plus
//! the continuity correction `1 / 2n`), with `z` chosen so that all of a test's comparisons
//! together, every run and case, fail by chance with probability at most [`FALSE_FAILURE`]
//! (Bonferroni: each gets `FALSE_FAILURE / comparisons` of two-sided normal tail).
//!
//! One run at a time, and one test at a time.

use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "common/stats.rs"]
mod stats;

/// The probability that a test of this file fails although jsprof samples truthfully.
const FALSE_FAILURE: f64 = 1e-3;

/// Runs of each case; each must pass.
const RUNS: usize = 5;

fn page(name: &str, fragment: &str) -> String {
    let path: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/pages/accuracy")
        .join(name)
        .canonicalize()
        .unwrap();
    format!("file://{}#{fragment}", path.display())
}

/// Runs the page `count` times, one after the other, with `args`: the JSON line each
/// printed. One at a time: a second copy would be load of the test's own making, and the
/// runs must hold on a machine already busy with other work.
fn one_by_one(url: &str, args: &[&str], count: usize) -> Vec<serde_json::Value> {
    (0..count)
        .map(|_| {
            let out = Command::new(env!("CARGO_BIN_EXE_jsprof"))
                .args(args)
                .arg(url)
                .args(["--timeout", "120"])
                .output()
                .expect("jsprof runs");
            let stdout = String::from_utf8_lossy(&out.stdout);
            assert!(
                out.status.success(),
                "{url}: {stdout}\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let line = stdout
                .lines()
                .find(|l| l.starts_with('{'))
                .unwrap_or_else(|| panic!("{url}: no result in {stdout}"));
            serde_json::from_str(line).unwrap()
        })
        .collect()
}

/// One accuracy test at a time.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Asserts that `sampled` of `n` samples is the share `truth` within the comparison's
/// tolerance (`stats::assert_share`, with this file's [`FALSE_FAILURE`]).
fn assert_share(what: &str, sampled: u64, n: u64, truth: f64, comparisons: usize) {
    stats::assert_share(what, sampled, n, truth, comparisons, FALSE_FAILURE);
}

/// Where the ticks fell: the share of `r`'s samples whose timestamp lies in the phase under
/// test is its share of the wall-clock time.
fn assert_ticks(what: &str, r: &serde_json::Value, comparisons: usize) {
    assert_share(
        &format!("{what}, ticks in it ({r})"),
        count(r, "ticksInA"),
        count(r, "ticks"),
        r["wallA"].as_f64().unwrap(),
        comparisons,
    );
}

/// What the stacks say: the share of `r`'s samples with a stack that have the phase's
/// function on it is the share whose timestamp lies in the phase.
fn assert_stacks(what: &str, r: &serde_json::Value, comparisons: usize) {
    let stacked = count(r, "stacked");
    assert_share(
        &format!("{what}, stacks with it ({r})"),
        count(r, "onStackA"),
        stacked,
        count(r, "stackedInA") as f64 / stacked.max(1) as f64,
        comparisons,
    );
}

fn count(r: &serde_json::Value, key: &str) -> u64 {
    r[key].as_u64().unwrap_or_else(|| panic!("{key} in {r}"))
}

/// 7 ms `hot()`, 3 ms `cold()`, on a 10 ms period, sampled at 10 and 20 ms (the period and a
/// multiple of it: a sampler on a grid would see one phase only): where the ticks fell, and
/// what the stacks say. False-failure probability: at most 1/1000 for the test, whose
/// 2 cases × 5 runs × 2 comparisons each allow z = 4.06 standard deviations (two-sided tail
/// 5e-5): about 9 points at 70% over 440 samples.
#[test]
fn periodic_work_gets_its_true_share_at_10_and_20_ms() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let cases = [("10", 10, 4400), ("20", 20, 8400)];
    let comparisons = cases.len() * RUNS * 2;
    for (base, interval, duration) in cases {
        let base_pref = format!("profiler.base_interval_ms={base}");
        let results = one_by_one(
            &page("periodic.html", &format!("{interval},{duration}")),
            &["--pref", &base_pref],
            RUNS,
        );
        for r in results {
            assert_eq!(r["interval"], interval, "{r}");
            // The page ran its 7/3 split (overruns of a loaded machine move it a little).
            assert!((0.55..=0.85).contains(&r["wallA"].as_f64().unwrap()), "{r}");
            let what = format!("hot() at {interval} ms");
            assert_ticks(&what, &r, comparisons);
            assert_stacks(&what, &r, comparisons);
        }
    }
}

/// `parseBig()` spends its time in `JSON.parse`, a native call of tens of ms, beside a 3 ms
/// JavaScript loop (about 85–90% of the time in parseBig), at 20 and 1 ms: the ticks inside
/// the call have parseBig on their stack (what the stacks say; where the ticks fall is the
/// periodic test's, and at 1 ms on a loaded machine it is not uniform: a tick whose walk
/// waits for a preempted thread holds the next ones up, and they come when the page's
/// thread runs again, more often still inside the long call). False-failure probability: at
/// most 1/1000 for the test, whose 2 cases × 5 runs × 1 comparison each allow z = 3.89
/// standard deviations (two-sided tail 1e-4): about 8 points at 85% over 300 samples with a
/// stack, 3.6 over 1400.
#[test]
fn time_inside_a_native_call_goes_to_its_caller_at_20_and_1_ms() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let cases = [("20", 20, 7000), ("1", 1, 1500)];
    let comparisons = cases.len() * RUNS;
    for (base, interval, duration) in cases {
        let base_pref = format!("profiler.base_interval_ms={base}");
        let results = one_by_one(
            &page("native.html", &format!("{interval},{duration}")),
            &["--pref", &base_pref],
            RUNS,
        );
        for r in results {
            assert_eq!(r["interval"], interval, "{r}");
            assert_stacks(&format!("parseBig at {interval} ms"), &r, comparisons);
        }
    }
}

/// What a run of many.html with `count` profilers took.
struct Many {
    /// Stacks taken (walks and captures by request).
    stacks: u64,
    /// The agent's time in sampling, ms.
    sampling_ms: f64,
    /// The run's length, ms.
    run_ms: f64,
    /// What the page printed (`profilers`, `samples` of each).
    result: serde_json::Value,
}

fn many(count: usize) -> Many {
    let out = Command::new(env!("CARGO_BIN_EXE_jsprof"))
        .arg(page("many.html", &count.to_string()))
        .args(["--profile-stats", "--timeout", "120"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stats: serde_json::Value = serde_json::from_str(stderr.lines().last().unwrap()).unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    Many {
        stacks: stats["walks"].as_u64().unwrap() + stats["captures"].as_u64().unwrap(),
        sampling_ms: stats["sampling_ms"].as_f64().unwrap(),
        run_ms: stats["run_ms"].as_f64().unwrap(),
        result: serde_json::from_str(stdout.lines().next().unwrap()).unwrap(),
    }
}

/// 100 profilers at 10 ms (20 ms, the base) over 1.5 s of work share one stack per tick:
/// no more stacks than the run had blocks, and about the sampling time of one profiler.
/// Counts are bounded by the run's own length, not by another run's (a loaded machine makes
/// both vary), and times are the better of two runs (a walk the scheduler interrupts takes
/// a time slice longer).
#[test]
fn a_hundred_profilers_cost_what_one_costs() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let ones = [many(1), many(1)];
    let hundreds = [many(100), many(100)];
    for (run, count) in ones
        .iter()
        .map(|r| (r, 1))
        .chain(hundreds.iter().map(|r| (r, 100)))
    {
        assert_eq!(run.result["profilers"], count);
        // Every profiler got its samples (1.5 s is 75 blocks; a machine busy with other work
        // loses some to a late sampler)...
        let samples: Vec<u64> = run.result["samples"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_u64().unwrap())
            .collect();
        assert!(samples.iter().all(|&n| n >= 25), "{samples:?}");
        // ...from the same captures: at most one stack per 20 ms block of the run, whatever
        // the number of profilers (each taking its own would be 100 per block).
        let blocks = (run.run_ms / 20.0).ceil() as u64;
        assert!(
            run.stacks <= blocks + 5,
            "{} stacks in {blocks} blocks for {count} profilers",
            run.stacks
        );
    }
    // The agent's time in sampling follows (wide margin: these are real timings).
    let best = |runs: &[Many]| {
        runs.iter()
            .map(|r| r.sampling_ms)
            .fold(f64::INFINITY, f64::min)
    };
    let (one_ms, hundred_ms) = (best(&ones), best(&hundreds));
    assert!(
        hundred_ms <= 2.0 * one_ms + 2.0,
        "{hundred_ms:.2} ms for 100 profilers, {one_ms:.2} ms for one"
    );
}

/// The ends of a profile are sampled like its middle: 60 profiles in turn at 20 ms, each
/// with 15 ms of `early()` right after `new Profiler()` (or right before `stop()`) and
/// 185 ms of `late()` (`ends.html`). Sites start a profiler and then boot their app, so the
/// first interval matters most; the rule this replaced gave `early()` none of 357 samples
/// when it ran first. The truth is the split the page measured; with n ≈ 600 samples the
/// binomial standard deviation of a 7.5% share is 1.1 points, and the tolerance is the
/// file's (Bonferroni over the two runs): a profile whose first or last interval is never
/// sampled shows 0% or about half the share, and fails.
#[test]
fn work_in_the_first_and_last_interval_gets_its_true_share() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    for which in ["first", "last"] {
        let r = one_by_one(&page("ends.html", &format!("60,{which}")), &[], 1).remove(0);
        let early = r["early"].as_u64().unwrap();
        let n = early + r["late"].as_u64().unwrap();
        let measured = r["measured"].as_f64().unwrap();
        // Most of the 600 intervals have a sample on one of the two.
        assert!(n >= 300, "{which}: {r}");
        assert_share(&format!("{which}: early()"), early, n, measured, 2);
    }
}
