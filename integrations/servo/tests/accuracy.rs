//! Sampling truth in Servo: `tests/pages/accuracy/periodic.html` (7 ms `hot()`, 3 ms
//! `cold()`, on a 10 ms period) sampled at 10 ms on a 10 ms base, run 5 times over HTTP;
//! each run must give `hot()` its true share, in the two comparisons jsprof's own test makes
//! (`components/shell/tests/accuracy.rs`, which explains them): where the ticks fell, and
//! what the stacks say. The tolerance is that test's (Bonferroni over every comparison, a
//! false failure at most once in 1,000 runs of the test); each run's `z` is printed too, for
//! the criterion of 2.5 binomial sigma.

mod common;

#[path = "../../../components/shell/tests/common/stats.rs"]
mod stats;

use std::path::Path;

use common::{jsprof_servo_with, serve};

/// The probability that this test fails although sampling is truthful.
const FALSE_FAILURE: f64 = 1e-3;
/// Runs; each must pass.
const RUNS: usize = 5;
/// The fewest samples a comparison may rest on (as jsprof's test).
const MIN_SAMPLES: u64 = 60;

fn count(r: &serde_json::Value, key: &str) -> u64 {
    r[key].as_u64().unwrap_or_else(|| panic!("{key} in {r}"))
}

/// Asserts that `sampled` of `n` is the share `truth` within the tolerance; prints its `z`.
fn assert_share(what: &str, sampled: u64, n: u64, truth: f64, comparisons: usize) {
    assert!(n >= MIN_SAMPLES, "{what}: only {n} samples");
    let share = sampled as f64 / n as f64;
    let z = (share - truth) / (truth * (1.0 - truth) / n as f64).sqrt();
    let allowed = stats::tolerance(truth, n, comparisons, FALSE_FAILURE);
    eprintln!(
        "{what}: sampled {:.2}%, truth {:.2}%, z = {z:+.2}, off {:.2} of {:.2} allowed points, n = {n}",
        share * 100.0,
        truth * 100.0,
        (share - truth).abs() * 100.0,
        allowed * 100.0
    );
    assert!(
        (share - truth).abs() <= allowed,
        "{what}: {:.2}% of {n} samples, truth {:.2}%, allowed {:.2} points",
        share * 100.0,
        truth * 100.0,
        allowed * 100.0
    );
}

#[test]
fn periodic_work_gets_its_true_share_in_servo() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/pages/accuracy");
    let origin = serve(root);
    let comparisons = RUNS * 2;
    for run in 1..=RUNS {
        let console = jsprof_servo_with(
            &format!("{origin}/periodic.html#10,4400"),
            None,
            &["--pref", "profiler.base_interval_ms=10"],
        );
        let line = console
            .lines()
            .find(|l| l.starts_with('{'))
            .unwrap_or_else(|| panic!("run {run}: no result in {console}"));
        let r: serde_json::Value = serde_json::from_str(line).expect("JSON");
        assert_eq!(r["interval"], 10, "{r}");
        let wall = r["wallA"].as_f64().unwrap();
        assert!((0.55..=0.85).contains(&wall), "{r}");
        assert_share(
            &format!("run {run}, ticks in hot() ({r})"),
            count(&r, "ticksInA"),
            count(&r, "ticks"),
            wall,
            comparisons,
        );
        let stacked = count(&r, "stacked");
        assert_share(
            &format!("run {run}, stacks with hot()"),
            count(&r, "onStackA"),
            stacked,
            count(&r, "stackedInA") as f64 / stacked.max(1) as f64,
            comparisons,
        );
    }
}
