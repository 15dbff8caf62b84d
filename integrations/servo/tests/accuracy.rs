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

fn count(r: &serde_json::Value, key: &str) -> u64 {
    r[key].as_u64().unwrap_or_else(|| panic!("{key} in {r}"))
}

/// `stats::assert_share` with this test's [`FALSE_FAILURE`].
fn assert_share(what: &str, sampled: u64, n: u64, truth: f64, comparisons: usize) {
    stats::assert_share(what, sampled, n, truth, comparisons, FALSE_FAILURE);
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
