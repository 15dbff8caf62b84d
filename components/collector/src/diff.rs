//! `jsprof diff --base R1 --head R2`: the functions whose share of samples changed between
//! two releases, self and total, with 95% confidence intervals from the sample counts.
//!
//! A function's share in a release is x/n: x its samples (self: as the leaf; total: anywhere
//! on the stack), n the release's samples with a stack (`top`'s percentages, from the same
//! aggregation, aggregate.rs). The change is the difference of the two proportions,
//! head − base, and its interval is Newcombe's hybrid score interval (method 10 of
//! R. G. Newcombe, "Interval estimation for the difference between independent
//! proportions", Statistics in Medicine 17, 1998), built from each proportion's Wilson
//! score interval: unlike the Wald interval it stays inside [−1, 1] and keeps its coverage
//! for shares near 0 or 1 and for small counts. A change is flagged when its interval
//! excludes 0. Rows are sorted by significance: the larger of the two pooled
//! two-proportion z statistics (self, total), largest first.
//!
//! The intervals take samples as independent draws. Samples of one page view are not (a
//! long task fills many in a row), so with few sessions the intervals are too narrow:
//! compare releases over many sessions.

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow::array::{ArrayRef, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use jsprof_export::Frame;

use crate::aggregate::ReleaseCounts;

/// The standard normal quantile of 97.5%: a two-sided 95% interval.
pub const Z95: f64 = 1.959_963_984_540_054;

/// Wilson's score interval for the proportion `x` of `n`, at `z`; (0, 1) for `n` = 0.
pub fn wilson(x: u64, n: u64, z: f64) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let n = n as f64;
    let p = x as f64 / n;
    let z2 = z * z;
    let denominator = 1.0 + z2 / n;
    let centre = (p + z2 / (2.0 * n)) / denominator;
    let half = z * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt() / denominator;
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

/// One proportion's change: `x1` of `n1` (base) to `x2` of `n2` (head).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Change {
    pub base: f64,
    pub head: f64,
    /// head − base, and its interval.
    pub delta: f64,
    pub low: f64,
    pub high: f64,
    /// The pooled two-proportion z statistic (0 when both shares are 0 or both 1).
    pub z: f64,
}

impl Change {
    /// Newcombe's hybrid score interval (method 10) for `x2/n2 − x1/n1`, at `z`.
    pub fn of(x1: u64, n1: u64, x2: u64, n2: u64, z: f64) -> Change {
        let share = |x: u64, n: u64| if n == 0 { 0.0 } else { x as f64 / n as f64 };
        let (p1, p2) = (share(x1, n1), share(x2, n2));
        let (l1, u1) = wilson(x1, n1, z);
        let (l2, u2) = wilson(x2, n2, z);
        let delta = p2 - p1;
        let low = delta - ((p2 - l2).powi(2) + (u1 - p1).powi(2)).sqrt();
        let high = delta + ((u2 - p2).powi(2) + (p1 - l1).powi(2)).sqrt();
        let pooled = share(x1 + x2, n1 + n2);
        let se =
            (pooled * (1.0 - pooled) * (1.0 / n1.max(1) as f64 + 1.0 / n2.max(1) as f64)).sqrt();
        Change {
            base: p1,
            head: p2,
            delta,
            low,
            high,
            z: if se > 0.0 { delta / se } else { 0.0 },
        }
    }

    /// Whether the interval excludes 0.
    pub fn significant(&self) -> bool {
        self.low > 0.0 || self.high < 0.0
    }

    /// The two-sided p-value of the pooled z statistic: the chance, were both shares the
    /// same, of a |z| at least this large.
    pub fn p(&self) -> f64 {
        erfc(self.z.abs() / std::f64::consts::SQRT_2).min(1.0)
    }
}

/// The complementary error function, to a relative error below 1.2e-7 everywhere
/// (the Chebyshev fit `erfcc` of Press et al., Numerical Recipes in C, 2nd ed., 6.2).
pub fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let r = t * poly.exp();
    if x >= 0.0 {
        r
    } else {
        2.0 - r
    }
}

/// The standard normal quantile: the `z` with P(Z > z) = `upper` (0 < `upper` < 1), by
/// bisection on [`erfc`].
pub fn upper_quantile(upper: f64) -> f64 {
    let (mut lo, mut hi) = (-40.0_f64, 40.0_f64);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if 0.5 * erfc(mid / std::f64::consts::SQRT_2) > upper {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// One function's changes.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub frame: Frame,
    pub self_share: Change,
    pub total_share: Change,
}

impl Row {
    fn significance(&self) -> f64 {
        self.self_share.z.abs().max(self.total_share.z.abs())
    }
}

/// Two releases' counts side by side: each release's samples with a stack, and each
/// function of either release's `[base self, base total, head self, head total]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Paired<'a> {
    pub base_samples: u64,
    pub head_samples: u64,
    pub by_frame: BTreeMap<&'a Frame, [u64; 4]>,
}

/// `base`'s and `head`'s counts of `counts`, paired by function.
pub fn paired<'a>(counts: &'a ReleaseCounts, base: &str, head: &str) -> Result<Paired<'a>, String> {
    if base == head {
        return Err(format!("--base and --head are both {base}"));
    }
    let n = |r: &str| {
        counts
            .samples
            .get(r)
            .copied()
            .filter(|n| *n > 0)
            .ok_or_else(|| format!("release {r} has no samples with a stack (with these filters)"))
    };
    let (n1, n2) = (n(base)?, n(head)?);
    let mut by_frame: BTreeMap<&Frame, [u64; 4]> = BTreeMap::new();
    for ((release, frame), (own, total)) in &counts.functions {
        let at = if release == base {
            0
        } else if release == head {
            2
        } else {
            continue;
        };
        let e = by_frame.entry(frame).or_default();
        e[at] += own;
        e[at + 1] += total;
    }
    Ok(Paired {
        base_samples: n1,
        head_samples: n2,
        by_frame,
    })
}

/// Every function of either release, most significant change first.
pub fn rows(counts: &ReleaseCounts, base: &str, head: &str) -> Result<Vec<Row>, String> {
    let Paired {
        base_samples: n1,
        head_samples: n2,
        by_frame,
    } = paired(counts, base, head)?;
    let mut rows: Vec<Row> = by_frame
        .into_iter()
        .map(|(frame, [bs, bt, hs, ht])| Row {
            frame: frame.clone(),
            self_share: Change::of(bs, n1, hs, n2, Z95),
            total_share: Change::of(bt, n1, ht, n2, Z95),
        })
        .collect();
    rows.sort_by(|a, b| {
        b.significance()
            .total_cmp(&a.significance())
            .then_with(|| a.frame.cmp(&b.frame))
    });
    Ok(rows)
}

fn points(v: f64) -> String {
    format!("{:+.2}", 100.0 * v)
}

fn pct(v: f64) -> String {
    format!("{:.2}", 100.0 * v)
}

/// The rows as a table (percentages of each release's samples with a stack; changes in
/// percentage points with their 95% interval), the first `limit`.
pub fn table(rows: &[Row], limit: usize) -> Result<String, String> {
    let rows = &rows[..rows.len().min(limit.max(1))];
    let names = [
        "function",
        "resource",
        "line",
        "column",
        "self_base_pct",
        "self_head_pct",
        "self_change (95% CI)",
        "total_base_pct",
        "total_head_pct",
        "total_change (95% CI)",
        "changed",
    ];
    let mut columns: Vec<Vec<String>> = vec![Vec::with_capacity(rows.len()); names.len()];
    for r in rows {
        let change = |c: &Change| {
            format!(
                "{} [{}, {}]",
                points(c.delta),
                points(c.low),
                points(c.high)
            )
        };
        let changed = match (r.self_share.significant(), r.total_share.significant()) {
            (true, true) => "self, total",
            (true, false) => "self",
            (false, true) => "total",
            (false, false) => "",
        };
        let cells = [
            r.frame.display_name().to_owned(),
            r.frame.resource.clone().unwrap_or_default(),
            r.frame.line.map_or(String::new(), |l| l.to_string()),
            r.frame.column.map_or(String::new(), |c| c.to_string()),
            pct(r.self_share.base),
            pct(r.self_share.head),
            change(&r.self_share),
            pct(r.total_share.base),
            pct(r.total_share.head),
            change(&r.total_share),
            changed.to_owned(),
        ];
        for (column, cell) in columns.iter_mut().zip(cells) {
            column.push(cell);
        }
    }
    text_table(&names, columns)
}

/// Columns of text cells under their names, as the bordered table the CLI prints (`diff`'s,
/// `regressions`').
pub fn text_table(names: &[&str], columns: Vec<Vec<String>>) -> Result<String, String> {
    let schema = Arc::new(Schema::new(
        names
            .iter()
            .map(|n| Field::new(*n, DataType::Utf8, false))
            .collect::<Vec<_>>(),
    ));
    let arrays: Vec<ArrayRef> = columns
        .into_iter()
        .map(|c| Arc::new(StringArray::from(c)) as ArrayRef)
        .collect();
    let batch = RecordBatch::try_new(schema, arrays).map_err(|e| e.to_string())?;
    arrow::util::pretty::pretty_format_batches(&[batch])
        .map(|t| t.to_string())
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 5e-5
    }

    /// Newcombe (1998), table II: method 10 for 56/70 − 48/80 is (0.0524, 0.3339), and for
    /// 9/10 − 3/10 (0.1705, 0.8090).
    #[test]
    fn newcombes_worked_examples() {
        let c = Change::of(48, 80, 56, 70, Z95);
        assert!(close(c.delta, 0.2), "{c:?}");
        assert!(close(c.low, 0.0524) && close(c.high, 0.3339), "{c:?}");
        let c = Change::of(3, 10, 9, 10, Z95);
        assert!(close(c.low, 0.1705) && close(c.high, 0.8090), "{c:?}");
        assert!(c.significant());
        // The other way round, the interval is mirrored.
        let m = Change::of(9, 10, 3, 10, Z95);
        assert!(close(m.low, -c.high) && close(m.high, -c.low), "{m:?}");
    }

    /// erfc against its exact values (Abramowitz and Stegun, table 7.1), p-values against
    /// the normal table, and the quantile back.
    #[test]
    fn normal_tail() {
        for (x, want) in [
            (0.0, 1.0),
            (0.5, 0.479_500_122_2),
            (1.0, 0.157_299_207_1),
            (2.0, 4.677_734_981e-3),
            (3.0, 2.209_049_700e-5),
            (5.0, 1.537_459_794e-12),
            (-1.0, 1.842_700_792_9),
        ] {
            let got = erfc(x);
            assert!(
                (got - want).abs() <= 1.2e-7 * want,
                "erfc({x}) = {got}, not {want}"
            );
        }
        let c = Change {
            base: 0.0,
            head: 0.0,
            delta: 0.0,
            low: 0.0,
            high: 0.0,
            z: -Z95,
        };
        assert!((c.p() - 0.05).abs() < 1e-8, "{}", c.p());
        assert!((upper_quantile(0.025) - Z95).abs() < 1e-6);
        assert!(upper_quantile(0.5).abs() < 1e-6);
        assert!((upper_quantile(1e-6) - 4.753_424_3).abs() < 1e-5);
    }

    /// Wilson's interval for 0 of 10 and 10 of 10 stays in [0, 1]; equal shares are no
    /// change, and a small change on few samples is not flagged.
    #[test]
    fn edges() {
        let (l, u) = wilson(0, 10, Z95);
        assert_eq!(l, 0.0);
        assert!(close(u, 0.2775), "{u}");
        let (l, u) = wilson(10, 10, Z95);
        assert!(close(l, 0.7225) && close(u, 1.0), "{l} {u}");
        let same = Change::of(250, 1000, 500, 2000, Z95);
        assert_eq!(same.delta, 0.0);
        assert_eq!(same.z, 0.0);
        assert!(!same.significant());
        assert!(!Change::of(3, 10, 5, 10, Z95).significant());
        let none = Change::of(0, 100, 0, 100, Z95);
        assert_eq!((none.delta, none.z), (0.0, 0.0));
        assert!(!none.significant());
    }
}
