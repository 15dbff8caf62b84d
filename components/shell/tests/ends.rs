//! The ends of a profile are sampled like its middle, through real pages in the real engine:
//! 60 profiles in turn at 20 ms, each with 15 ms of `early()` right after `new Profiler()`
//! (or right before `stop()`) and 185 ms of `late()` (`tests/pages/accuracy/ends.html`).
//! Sites start a profiler and then boot their app, so the first interval matters most; the
//! rule this replaces gave `early()` none of 357 samples when it ran first.
//!
//! Sampling is real, so the check is statistical, against the split the page measured
//! itself (on a loaded machine the page's thread is descheduled at times, and its own clock
//! says where its time went). With n ≈ 600 samples the binomial standard deviation of a
//! 7.5% share is 1.1 points; each of the two runs may be off by 3.48 of them (two-sided
//! p = 5e-4), so a correct sampler fails this test with probability below 1 in 1,000
//! (Bonferroni over the two runs; stratified picks make it rarer still). A profile whose
//! first or last interval is never sampled shows 0% or half the share, and fails.

use std::path::{Path, PathBuf};
use std::process::Command;

fn page(fragment: &str) -> String {
    let path: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/pages/accuracy/ends.html")
        .canonicalize()
        .unwrap();
    format!("file://{}#{fragment}", path.display())
}

fn run(fragment: &str) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_jsprof"))
        .arg(page(fragment))
        .args(["--timeout", "120"])
        .output()
        .expect("jsprof runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = stdout
        .lines()
        .find(|l| l.starts_with('{'))
        .unwrap_or_else(|| panic!("no result in {stdout}"));
    serde_json::from_str(line).unwrap()
}

#[test]
fn work_in_the_first_and_last_interval_gets_its_true_share() {
    let results: Vec<(&str, serde_json::Value)> = std::thread::scope(|s| {
        let runs: Vec<_> = ["60,first", "60,last"]
            .into_iter()
            .map(|f| s.spawn(move || (f, run(f))))
            .collect();
        runs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for (which, r) in results {
        let early = r["early"].as_f64().unwrap();
        let n = early + r["late"].as_f64().unwrap();
        let measured = r["measured"].as_f64().unwrap();
        // At least 80% of the 600 intervals have a sample on one of the two.
        assert!(n >= 480.0, "{which}: {r}");
        let share = early / n;
        let sd = (measured * (1.0 - measured) / n).sqrt();
        assert!(
            (share - measured).abs() <= 3.48 * sd,
            "{which}: early() on {:.1}% of {n} samples, {:.1}% of the time (allowed ±{:.1}): {r}",
            share * 100.0,
            measured * 100.0,
            3.48 * sd * 100.0
        );
    }
}
