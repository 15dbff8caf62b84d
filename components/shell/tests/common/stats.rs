//! The statistics of the accuracy tests: how far a sampled share may be from the truth.
//! Shared by jsprof's (`accuracy.rs`) and jsprof-servo's (`integrations/servo/tests/`)
//! accuracy tests, which include this file with `#[path]`.

#![allow(dead_code)]

/// `erfc(x)` for `x >= 0`, with a fractional error below 1.2e-7 (Numerical Recipes' `erfcc`,
/// a Chebyshev fit), ample for tails of 1e-4.
pub fn erfc(x: f64) -> f64 {
    let t = 1.0 / (1.0 + 0.5 * x);
    let poly = -x * x - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    t * poly.exp()
}

/// The `z` whose two-sided normal tail `P(|Z| > z)` is `alpha` (bisection on `erfc`).
pub fn z_for(alpha: f64) -> f64 {
    let (mut lo, mut hi) = (0.0_f64, 40.0_f64);
    for _ in 0..200 {
        let mid = (lo + hi) / 2.0;
        if erfc(mid / std::f64::consts::SQRT_2) > alpha {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    hi
}

/// How far a share sampled `n` times may be from the truth `p` in one of a test's
/// `comparisons`, when the whole test may fail by chance with probability `false_failure`:
/// `z` binomial standard deviations (Bonferroni) and the continuity correction.
pub fn tolerance(p: f64, n: u64, comparisons: usize, false_failure: f64) -> f64 {
    let z = z_for(false_failure / comparisons as f64);
    let n = n as f64;
    z * (p * (1.0 - p) / n).sqrt() + 0.5 / n
}

/// The fewest samples a comparison may rest on. With fewer, a test could not tell a profile
/// that sees one phase only (0% or 100% against 70%, 30 points off) from the truth: at 60
/// samples a 70% share is allowed 25 points. An idle machine gives about one sample per
/// block (220 to 1500 in jsprof's tests); one whose cores are busy with other work loses
/// some ticks to a late sampler (`missed_blocks`), and many of the rest have no stack
/// (`late_answers`): with two busy processes beside it, 105 to 400.
pub const MIN_SAMPLES: u64 = 60;

/// Asserts that `sampled` of `n` samples is the share `truth` within the tolerance of one of
/// a test's `comparisons` (the test failing by chance with probability `false_failure`),
/// and that `n` is at least [`MIN_SAMPLES`]. Prints (shown with `--nocapture`) how far the
/// share was from its truth, in points and in binomial standard deviations (`z`).
pub fn assert_share(
    what: &str,
    sampled: u64,
    n: u64,
    truth: f64,
    comparisons: usize,
    false_failure: f64,
) {
    assert!(n >= MIN_SAMPLES, "{what}: only {n} samples");
    let share = sampled as f64 / n as f64;
    let allowed = tolerance(truth, n, comparisons, false_failure);
    let z = (share - truth) / (truth * (1.0 - truth) / n as f64).sqrt();
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
fn the_tolerance_is_the_bonferroni_z_of_the_binomial() {
    // The two-sided 5% and 1e-4 points of the normal distribution.
    assert!((z_for(0.05) - 1.959_964).abs() < 1e-4);
    assert!((z_for(1e-4) - 3.890_592).abs() < 1e-4);
    // 70% over 400 samples, one of 10 comparisons: 3.89 * 2.29 points + 0.125.
    let t = tolerance(0.7, 400, 10, 1e-3);
    assert!(
        (t - (3.890_592 * (0.21_f64 / 400.0).sqrt() + 0.00125)).abs() < 1e-5,
        "{t}"
    );
}
