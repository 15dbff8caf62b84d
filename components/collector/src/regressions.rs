//! `jsprof regressions`: each release of a project compared with the one before it, and
//! the functions whose share of samples went up, found without anyone naming the two
//! releases (decision record 0055).
//!
//! - Releases are ordered by when the store first saw them: the earliest `received_ms` of
//!   their traces (the collector's clock, not the page's), ties by name.
//! - A release with at least [`Settings::min_samples`] samples with a stack (with the
//!   filters) is compared with the latest release before it that has as many; a release
//!   with fewer is listed as skipped, and is no one's base.
//! - Each function of either release is two hypotheses, its self share and its total
//!   share, tested as `diff` tests them (diff.rs: the pooled two-proportion z, two-sided).
//!   A hypothesis whose counts cannot differ (0 in both releases, or every sample in both)
//!   is not tested.
//! - The correction: Holm–Bonferroni over a pair's hypotheses, at family-wise error rate
//!   [`Settings::alpha`] (0.05): the chance that a pair whose shares are all unchanged
//!   lists any function is at most alpha, whatever the dependence between the tests
//!   (self and total shares of one stack are far from independent). A finding is a
//!   hypothesis Holm rejects whose share went up; decreases are not listed.
//! - Its interval is Newcombe's (diff.rs) at the Bonferroni level, 1 − alpha/m for the
//!   pair's m tests: simultaneous, so all of a pair's intervals hold at once with
//!   probability 1 − alpha or more.
//!
//! As in `diff`, samples are taken as independent draws, which those of one page view are
//! not: with few sessions a release's findings are too many.

use std::collections::{BTreeMap, BTreeSet};

use arrow::datatypes::DataType;
use datafusion::prelude::SessionContext;
use jsprof_export::Frame;

use crate::aggregate::{self, collect, Columns, ReleaseCounts, TopFilter};
use crate::diff::{self, Change};

/// The prefs of regressions: `collector.regressions.min_samples` and
/// `collector.regressions.alpha`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    /// The samples with a stack a release needs to be compared (as head or base).
    pub min_samples: u64,
    /// The family-wise error rate of each pair's tests.
    pub alpha: f64,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            min_samples: 1000,
            alpha: 0.05,
        }
    }
}

/// The method, as the CLI and the API name it.
pub const METHOD: &str = "holm-bonferroni";

impl Settings {
    /// Sets the pref `name` to `value`: `Ok(false)` if `name` is not one of these.
    pub fn set(&mut self, name: &str, value: &str) -> Result<bool, String> {
        match name {
            "collector.regressions.min_samples" => {
                self.min_samples =
                    value
                        .parse::<u64>()
                        .ok()
                        .filter(|n| *n > 0)
                        .ok_or_else(|| {
                            format!("--pref {name}: {value} is not a whole number above 0")
                        })?;
            }
            "collector.regressions.alpha" => {
                self.alpha = value
                    .parse::<f64>()
                    .ok()
                    .filter(|a| *a > 0.0 && *a < 1.0)
                    .ok_or_else(|| {
                        format!("--pref {name}: {value} is not a number between 0 and 1")
                    })?;
            }
            _ => return Ok(false),
        }
        Ok(true)
    }
}

/// A release, when the store first saw it, and its samples with a stack.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Release {
    pub release: String,
    pub first_seen_ms: f64,
    pub samples: u64,
}

/// A release and the one it is compared with.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Pair {
    /// None: no earlier release has enough samples.
    pub base: Option<String>,
    pub head: String,
    pub base_samples: u64,
    pub head_samples: u64,
    /// The hypotheses tested (0 when skipped).
    pub tests: usize,
    /// Why the pair was not tested.
    pub skipped: Option<String>,
}

/// A function whose share went up from `base` to `head`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Finding {
    pub base: String,
    pub head: String,
    pub function: String,
    pub resource: Option<String>,
    pub line: Option<u64>,
    pub column: Option<u64>,
    /// `self` (as the leaf) or `total` (anywhere on the stack).
    pub measure: &'static str,
    pub base_share: f64,
    pub head_share: f64,
    /// head − base, and its simultaneous interval.
    pub change: f64,
    pub low: f64,
    pub high: f64,
    /// The test's own p-value, and Holm's adjusted one (the finding's: at most alpha).
    pub p: f64,
    pub p_adjusted: f64,
}

/// Everything `regressions` finds in one project.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Report {
    pub project: String,
    pub method: &'static str,
    pub alpha: f64,
    pub min_samples: u64,
    /// In first-seen order.
    pub releases: Vec<Release>,
    pub pairs: Vec<Pair>,
    /// By pair (in release order), then most significant first.
    pub findings: Vec<Finding>,
    /// Why nothing was compared: the project has fewer than two releases.
    pub note: Option<String>,
}

/// Holm's adjusted p-values of `p`, in the same order: the smallest `alpha` at which the
/// step-down procedure rejects each.
pub fn holm(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|a, b| p[*a].total_cmp(&p[*b]).then(a.cmp(b)));
    let mut out = vec![1.0; m];
    let mut running: f64 = 0.0;
    for (rank, i) in order.into_iter().enumerate() {
        running = running.max(((m - rank) as f64 * p[i]).min(1.0));
        out[i] = running;
    }
    out
}

/// The project's releases in the order the store first saw them (every trace counts, with
/// or without the filters), each with its samples with a stack in `counts`.
pub async fn releases(
    ctx: &SessionContext,
    counts: &ReleaseCounts,
) -> Result<Vec<Release>, String> {
    use DataType::{Float64 as F, Utf8 as S};
    let rows = collect(
        ctx,
        "SELECT release, min(received_ms) AS first_ms FROM traces_base
         WHERE release IS NOT NULL AND release <> ''
         GROUP BY release ORDER BY first_ms, release",
    )
    .await?;
    let mut out = Vec::new();
    for batch in &rows {
        let c = Columns::of(batch, &[S, F])?;
        for r in 0..batch.num_rows() {
            let release = c.str(0, r).unwrap_or_default();
            out.push(Release {
                samples: counts.samples.get(&release).copied().unwrap_or(0),
                first_seen_ms: c.float(1, r).unwrap_or(0.0),
                release,
            });
        }
    }
    Ok(out)
}

/// The pairs and findings of `releases` (in first-seen order) from their `counts`; with
/// fewer than two releases, none, and a [`Report::note`] that says so.
pub fn find(
    project: &str,
    releases: Vec<Release>,
    counts: &ReleaseCounts,
    settings: Settings,
) -> Result<Report, String> {
    let mut report = Report {
        project: project.to_owned(),
        method: METHOD,
        alpha: settings.alpha,
        min_samples: settings.min_samples,
        releases: Vec::new(),
        pairs: Vec::new(),
        findings: Vec::new(),
        note: None,
    };
    if releases.len() < 2 {
        report.note = Some(too_few(project, &releases));
        report.releases = releases;
        return Ok(report);
    }
    let mut pairs = Vec::new();
    let mut findings = Vec::new();
    let mut base: Option<&Release> = None;
    for (i, head) in releases.iter().enumerate() {
        let enough = head.samples >= settings.min_samples;
        if i > 0 {
            let mut pair = Pair {
                base: base.map(|b| b.release.clone()),
                head: head.release.clone(),
                base_samples: base.map_or(0, |b| b.samples),
                head_samples: head.samples,
                tests: 0,
                skipped: None,
            };
            match base {
                _ if !enough => {
                    pair.skipped = Some(format!(
                        "{} has {} samples with a stack, fewer than collector.regressions.min_samples ({})",
                        head.release, head.samples, settings.min_samples
                    ))
                }
                None => {
                    pair.skipped = Some(format!(
                        "no release before {} has collector.regressions.min_samples ({}) samples with a stack",
                        head.release, settings.min_samples
                    ))
                }
                Some(b) => {
                    let (tests, found) = compare(counts, &b.release, &head.release, settings)?;
                    pair.tests = tests;
                    findings.extend(found);
                }
            }
            pairs.push(pair);
        }
        if enough {
            base = Some(head);
        }
    }
    report.releases = releases;
    report.pairs = pairs;
    report.findings = findings;
    Ok(report)
}

/// One pair's hypotheses tested: how many, and the regressions found.
fn compare(
    counts: &ReleaseCounts,
    base: &str,
    head: &str,
    settings: Settings,
) -> Result<(usize, Vec<Finding>), String> {
    let paired = diff::paired(counts, base, head)?;
    let (n1, n2) = (paired.base_samples, paired.head_samples);
    // (frame, measure, x1, x2) of each hypothesis that can be rejected.
    let mut tests: Vec<(&Frame, &'static str, u64, u64)> = Vec::new();
    for (frame, [bs, bt, hs, ht]) in &paired.by_frame {
        for (measure, x1, x2) in [("self", *bs, *hs), ("total", *bt, *ht)] {
            let all = x1 == n1 && x2 == n2;
            if x1 + x2 > 0 && !all {
                tests.push((frame, measure, x1, x2));
            }
        }
    }
    let m = tests.len();
    if m == 0 {
        return Ok((0, Vec::new()));
    }
    let changes: Vec<Change> = tests
        .iter()
        .map(|(_, _, x1, x2)| Change::of(*x1, n1, *x2, n2, diff::Z95))
        .collect();
    let p: Vec<f64> = changes.iter().map(Change::p).collect();
    let adjusted = holm(&p);
    let z = diff::upper_quantile(settings.alpha / (2.0 * m as f64));
    let mut found: Vec<Finding> = Vec::new();
    for (i, (frame, measure, x1, x2)) in tests.into_iter().enumerate() {
        if adjusted[i] > settings.alpha || changes[i].delta <= 0.0 {
            continue;
        }
        let c = Change::of(x1, n1, x2, n2, z);
        found.push(Finding {
            base: base.to_owned(),
            head: head.to_owned(),
            function: frame.display_name().to_owned(),
            resource: frame.resource.clone(),
            line: frame.line,
            column: frame.column,
            measure,
            base_share: c.base,
            head_share: c.head,
            change: c.delta,
            low: c.low,
            high: c.high,
            p: p[i],
            p_adjusted: adjusted[i],
        });
    }
    found.sort_by(|a, b| {
        a.p.total_cmp(&b.p)
            .then_with(|| b.change.total_cmp(&a.change))
            .then_with(|| a.function.cmp(&b.function))
            .then_with(|| a.measure.cmp(b.measure))
    });
    Ok((m, found))
}

/// The regressions of the project `ctx` is limited to, with the filters `f` (its release
/// and limit are not used: every release is compared).
pub async fn report(
    ctx: &SessionContext,
    project: &str,
    f: &TopFilter,
    settings: Settings,
) -> Result<Report, String> {
    let f = TopFilter {
        release: None,
        ..f.clone()
    };
    let counts = aggregate::release_counts(ctx, &f, &[]).await?;
    let releases = releases(ctx, &counts).await?;
    find(project, releases, &counts, settings)
}

fn too_few(project: &str, releases: &[Release]) -> String {
    let names: Vec<&str> = releases.iter().map(|r| r.release.as_str()).collect();
    format!(
        "project {project} has {} release(s){}: regressions compare a release with the one before it, and need two",
        releases.len(),
        if names.is_empty() {
            String::new()
        } else {
            format!(" ({})", names.join(", "))
        }
    )
}

/// The projects of the store `ctx` reads (unlimited), by name.
pub async fn projects(ctx: &SessionContext) -> Result<Vec<String>, String> {
    let mut out = BTreeSet::new();
    for batch in collect(ctx, "SELECT DISTINCT project FROM traces_base").await? {
        let c = Columns::of(&batch, &[DataType::Utf8])?;
        for r in 0..batch.num_rows() {
            out.extend(c.str(0, r));
        }
    }
    Ok(out.into_iter().collect())
}

fn pct(v: f64) -> String {
    format!("{:.2}", 100.0 * v)
}

/// The report as text: a line per pair, then the findings as a table.
pub fn text(r: &Report) -> Result<String, String> {
    if let Some(note) = &r.note {
        return Ok(format!("{note}\n"));
    }
    let mut out = format!(
        "project {}: releases by first seen: {}\n",
        r.project,
        r.releases
            .iter()
            .map(|x| format!("{} ({} samples)", x.release, x.samples))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let mut by_pair: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    for f in &r.findings {
        *by_pair.entry((&f.base, &f.head)).or_default() += 1;
    }
    for p in &r.pairs {
        match (&p.base, &p.skipped) {
            (_, Some(why)) => out.push_str(&format!("  {}: skipped: {why}\n", p.head)),
            (Some(b), None) => out.push_str(&format!(
                "  {b} -> {}: {} tests, {} regression(s)\n",
                p.head,
                p.tests,
                by_pair.get(&(b.as_str(), p.head.as_str())).unwrap_or(&0)
            )),
            (None, None) => {}
        }
    }
    out.push_str(&format!(
        "{} over each pair's self and total shares, family-wise error rate {}; changes in percentage points with simultaneous {}% intervals (Newcombe-Wilson at the Bonferroni level)\n",
        "Holm-Bonferroni",
        r.alpha,
        100.0 * (1.0 - r.alpha)
    ));
    if r.findings.is_empty() {
        out.push_str("no regressions\n");
        return Ok(out);
    }
    let names = [
        "base",
        "head",
        "function",
        "resource",
        "line",
        "column",
        "measure",
        "base_pct",
        "head_pct",
        "change (simultaneous CI)",
        "p_holm",
    ];
    let mut columns: Vec<Vec<String>> = vec![Vec::new(); names.len()];
    for f in &r.findings {
        let points = |v: f64| format!("{:+.2}", 100.0 * v);
        let cells = [
            f.base.clone(),
            f.head.clone(),
            f.function.clone(),
            f.resource.clone().unwrap_or_default(),
            f.line.map_or(String::new(), |l| l.to_string()),
            f.column.map_or(String::new(), |c| c.to_string()),
            f.measure.to_owned(),
            pct(f.base_share),
            pct(f.head_share),
            format!(
                "{} [{}, {}]",
                points(f.change),
                points(f.low),
                points(f.high)
            ),
            format!("{:.2e}", f.p_adjusted),
        ];
        for (column, cell) in columns.iter_mut().zip(cells) {
            column.push(cell);
        }
    }
    out.push_str(&diff::text_table(&names, columns)?);
    out.push('\n');
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Holm (1979) by hand: p = 0.01, 0.04, 0.03, 0.005 (m = 4) step down to 0.005 × 4,
    /// 0.01 × 3, 0.03 × 2, then 0.04 × 1 held up to the running maximum.
    #[test]
    fn holm_adjusts_step_down() {
        let a = holm(&[0.01, 0.04, 0.03, 0.005]);
        let want = [0.03, 0.06, 0.06, 0.02];
        for (got, want) in a.iter().zip(want) {
            assert!((got - want).abs() < 1e-12, "{a:?}");
        }
        assert_eq!(holm(&[0.5, 0.9]), vec![1.0, 1.0]);
        assert!(holm(&[]).is_empty());
    }

    fn frame(name: &str) -> Frame {
        Frame {
            name: name.into(),
            resource: Some("https://example.test/app.js".into()),
            line: Some(1),
            column: Some(1),
        }
    }

    /// `n` samples of `release` over leaves under one parent each (`parent_of`), drawn
    /// from `weights`, added to `counts`.
    fn draw(
        counts: &mut ReleaseCounts,
        release: &str,
        weights: &[f64],
        n: u64,
        rng: &mut fastrand::Rng,
    ) {
        let sum: f64 = weights.iter().sum();
        let mut leaves = vec![0u64; weights.len()];
        for _ in 0..n {
            let mut u = rng.f64() * sum;
            let mut k = weights.len() - 1;
            for (i, w) in weights.iter().enumerate() {
                if u < *w {
                    k = i;
                    break;
                }
                u -= w;
            }
            leaves[k] += 1;
        }
        let mut parents = vec![0u64; weights.len().div_ceil(4)];
        for (i, x) in leaves.iter().enumerate() {
            parents[i / 4] += x;
            counts
                .functions
                .insert((release.into(), frame(&format!("leaf{i}"))), (*x, *x));
        }
        for (j, x) in parents.iter().enumerate() {
            counts
                .functions
                .insert((release.into(), frame(&format!("parent{j}"))), (0, *x));
        }
        counts
            .functions
            .insert((release.into(), frame("main")), (0, n));
        counts.samples.insert(release.into(), n);
    }

    fn release(name: &str, at: f64, counts: &ReleaseCounts) -> Release {
        Release {
            release: name.into(),
            first_seen_ms: at,
            samples: counts.samples.get(name).copied().unwrap_or(0),
        }
    }

    /// Over 400 pairs drawn from one distribution, the share of pairs with any finding
    /// stays at or below alpha (5%, with room for the draw: 3 standard errors); and a
    /// planted regression of 3 points on 4% is found in each of 50 pairs.
    #[test]
    fn family_wise_error_and_power() {
        let weights: Vec<f64> = (0..24).map(|i| 1.0 + (i % 5) as f64).collect();
        let mut rng = fastrand::Rng::with_seed(37);
        let settings = Settings::default();
        let mut with_findings = 0;
        let runs = 400;
        for _ in 0..runs {
            let mut counts = ReleaseCounts::default();
            draw(&mut counts, "a", &weights, 3000, &mut rng);
            draw(&mut counts, "b", &weights, 3000, &mut rng);
            let rs = vec![release("a", 1.0, &counts), release("b", 2.0, &counts)];
            let r = find("p", rs, &counts, settings).unwrap();
            assert_eq!(r.pairs.len(), 1);
            assert!(r.pairs[0].tests > 24, "{:?}", r.pairs);
            if !r.findings.is_empty() {
                with_findings += 1;
            }
        }
        let rate = with_findings as f64 / runs as f64;
        let room = 3.0 * (0.05_f64 * 0.95 / runs as f64).sqrt();
        assert!(
            rate <= 0.05 + room,
            "{with_findings} of {runs} null pairs had findings"
        );
        let sum: f64 = weights.iter().sum();
        let mut planted = weights.clone();
        // leaf0 from 1/sum (about 1.4%) to 4.4 points more.
        planted[0] += 0.045 * sum / (1.0 - 0.045);
        for _ in 0..50 {
            let mut counts = ReleaseCounts::default();
            draw(&mut counts, "a", &weights, 3000, &mut rng);
            draw(&mut counts, "b", &planted, 3000, &mut rng);
            let rs = vec![release("a", 1.0, &counts), release("b", 2.0, &counts)];
            let r = find("p", rs, &counts, settings).unwrap();
            let hit = r
                .findings
                .iter()
                .find(|f| f.function == "leaf0" && f.measure == "self")
                .unwrap_or_else(|| panic!("not found: {:?}", r.findings));
            assert!(hit.low > 0.0 && hit.p_adjusted <= 0.05, "{hit:?}");
            // Every other finding is a true increase: leaf0's total, its parent's, never
            // another leaf's.
            for f in &r.findings {
                assert!(matches!(f.function.as_str(), "leaf0" | "parent0"), "{f:?}");
            }
        }
    }

    /// Pairs follow first-seen order; a release with too few samples is skipped and is
    /// no one's base; fewer than two releases is an error that says so.
    #[test]
    fn pairs_skip_small_releases() {
        let weights = [1.0, 2.0, 3.0];
        let mut rng = fastrand::Rng::with_seed(1);
        let mut counts = ReleaseCounts::default();
        draw(&mut counts, "2.0", &weights, 1500, &mut rng);
        draw(&mut counts, "1.0", &weights, 1500, &mut rng);
        draw(&mut counts, "1.5-canary", &weights, 20, &mut rng);
        draw(&mut counts, "3.0", &weights, 1500, &mut rng);
        let rs = vec![
            release("2.0", 1.0, &counts),
            release("1.0", 2.0, &counts),
            release("1.5-canary", 3.0, &counts),
            release("3.0", 4.0, &counts),
        ];
        let r = find("web", rs, &counts, Settings::default()).unwrap();
        let pairs: Vec<(Option<&str>, &str, bool)> = r
            .pairs
            .iter()
            .map(|p| (p.base.as_deref(), p.head.as_str(), p.skipped.is_some()))
            .collect();
        assert_eq!(
            pairs,
            [
                (Some("2.0"), "1.0", false),
                (Some("1.0"), "1.5-canary", true),
                (Some("1.0"), "3.0", false),
            ]
        );
        assert!(r.pairs[1].skipped.as_ref().unwrap().contains("20 samples"));
        let one = vec![release("2.0", 1.0, &counts)];
        let r = find("web", one, &counts, Settings::default()).unwrap();
        assert!(r.pairs.is_empty() && r.findings.is_empty());
        let note = r.note.unwrap();
        assert!(
            note.contains("project web has 1 release(s) (2.0)"),
            "{note}"
        );
        let mut s = Settings::default();
        assert_eq!(s.set("collector.regressions.min_samples", "50"), Ok(true));
        assert_eq!(s.min_samples, 50);
        assert!(s.set("collector.regressions.alpha", "1.5").is_err());
        assert!(s.set("collector.regressions.min_samples", "0").is_err());
        assert_eq!(s.set("collector.queue", "5"), Ok(false));
    }
}
