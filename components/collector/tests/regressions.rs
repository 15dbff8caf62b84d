//! `jsprof regressions` and the page's `/api/regressions` over synthetic releases posted
//! to the real binary over HTTP: eleven releases drawn (seeded) from one distribution, ten
//! comparisons where nothing changed, then one release with a planted regression.

mod common;

use std::process::Command;

use common::{get, http, post_trace, Collector, BIN, DAY};
use jsprof_profiler::ProfilerTrace;
use jsprof_trace_fixtures::{self as fixtures, frame, sample};

/// Leaves `leaf0..leaf15`, four under each of `part0..part3`, all under `main`.
const LEAVES: usize = 16;
/// The samples of each release: 4 traces of 750.
const TRACES: usize = 4;
const PER_TRACE: usize = 750;
/// The leaf whose share the last release raises, and by how much (share points).
const PLANTED: usize = 9;
const RAISE: f64 = 0.04;
/// The family-wise error rate the tests run at (the default).
const ALPHA: f64 = 0.05;

/// The base distribution over leaves: uneven, 1 to 5.
fn weights() -> Vec<f64> {
    (0..LEAVES).map(|i| 1.0 + (i * 7 % 5) as f64).collect()
}

/// A trace of `n` samples whose leaves are drawn from `weights`, 10 ms apart.
fn drawn_trace(weights: &[f64], n: usize, rng: &mut fastrand::Rng) -> serde_json::Value {
    let mut frames = vec![frame("main", Some(0), Some(1), Some(1))];
    let mut parents: Vec<Option<u64>> = vec![None];
    for p in 0..LEAVES / 4 {
        frames.push(frame(
            &format!("part{p}"),
            Some(0),
            Some(10 + p as u64),
            Some(1),
        ));
        parents.push(Some(0));
    }
    for l in 0..LEAVES {
        frames.push(frame(
            &format!("leaf{l}"),
            Some(0),
            Some(100 + l as u64),
            Some(1),
        ));
        parents.push(Some(1 + l as u64 / 4));
    }
    let sum: f64 = weights.iter().sum();
    let samples = (0..n)
        .map(|i| {
            let mut u = rng.f64() * sum;
            let mut leaf = LEAVES - 1;
            for (k, w) in weights.iter().enumerate() {
                if u < *w {
                    leaf = k;
                    break;
                }
                u -= w;
            }
            sample(10.0 * i as f64, Some(1 + LEAVES as u64 / 4 + leaf as u64))
        })
        .collect();
    let trace = ProfilerTrace {
        frames,
        resources: vec!["https://shop.test/app.js".into()],
        stacks: fixtures::stacks(&parents),
        samples,
    };
    serde_json::to_value(&trace).unwrap()
}

fn post_release(
    c: &Collector,
    release: &str,
    weights: &[f64],
    traces: usize,
    rng: &mut fastrand::Rng,
    at: f64,
) {
    for t in 0..traces {
        let trace = drawn_trace(weights, PER_TRACE, rng);
        post_trace(
            c.addr,
            None,
            &trace,
            release,
            "https://shop.test/",
            "Chrome/140",
            at + 60_000.0 * t as f64,
        );
    }
}

fn regressions(store: &std::path::Path, args: &[&str]) -> std::process::Output {
    Command::new(BIN)
        .arg("regressions")
        .arg("--store")
        .arg(store)
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn a_planted_regression_is_found_and_unchanged_releases_list_none() {
    let dir = tempfile::tempdir().unwrap();
    let min = "collector.regressions.min_samples=2000";
    let c = Collector::start(dir.path(), &["--pref", min]);
    let mut rng = fastrand::Rng::with_seed(20_261_128);
    let base = weights();
    // Named so that their order by name is not the order they came in: v0, v1, …, v10.
    let names: Vec<String> = (0..=11).map(|k| format!("v{k}")).collect();
    for (k, name) in names.iter().enumerate().take(11) {
        post_release(
            &c,
            name,
            &base,
            TRACES,
            &mut rng,
            DAY + 3_600_000.0 * k as f64,
        );
        if k == 5 {
            // A canary of 750 samples between v5 and v6: skipped, and not v6's base.
            post_release(
                &c,
                "v5-canary",
                &base,
                1,
                &mut rng,
                DAY + 3_700_000.0 * k as f64,
            );
        }
    }
    let sum: f64 = base.iter().sum();
    let mut planted = base.clone();
    // The planted leaf's share rises by RAISE; every other leaf's falls in proportion.
    let share = planted[PLANTED] / sum;
    planted[PLANTED] = (share + RAISE) * (sum - planted[PLANTED]) / (1.0 - share - RAISE);
    post_release(
        &c,
        "v11",
        &planted,
        TRACES,
        &mut rng,
        DAY + 3_600_000.0 * 11.0,
    );

    let out = regressions(dir.path(), &["--pref", min, "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let all: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let report = &all["projects"][0];
    assert_eq!(report["project"], "default");
    assert_eq!(report["method"], "holm-bonferroni");
    assert_eq!(report["alpha"], ALPHA);
    let order: Vec<&str> = report["releases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["release"].as_str().unwrap())
        .collect();
    let mut expected: Vec<&str> = names.iter().map(String::as_str).collect();
    expected.insert(6, "v5-canary");
    assert_eq!(order, expected, "releases by first seen");

    // The pairs: each release against the one before it, the canary skipped.
    let pairs = report["pairs"].as_array().unwrap();
    let tested: Vec<(&str, &str)> = pairs
        .iter()
        .filter(|p| p["skipped"].is_null())
        .map(|p| (p["base"].as_str().unwrap(), p["head"].as_str().unwrap()))
        .collect();
    let want: Vec<(&str, &str)> = names
        .windows(2)
        .map(|w| (w[0].as_str(), w[1].as_str()))
        .collect();
    assert_eq!(tested, want);
    let canary = pairs.iter().find(|p| p["head"] == "v5-canary").unwrap();
    assert!(
        canary["skipped"]
            .as_str()
            .unwrap()
            .contains("750 samples with a stack"),
        "{canary}"
    );
    for p in pairs.iter().filter(|p| p["skipped"].is_null()) {
        assert_eq!(p["base_samples"], (TRACES * PER_TRACE) as u64, "{p}");
        // 16 leaves' self and total, 4 parts' total (their self is 0 in both), and not
        // main's total, which is every sample in both.
        assert_eq!(p["tests"], 2 * LEAVES + LEAVES / 4, "{p}");
    }

    // Ten comparisons where nothing changed: at most ALPHA of them list anything (0 of 10).
    let findings = report["findings"].as_array().unwrap();
    let null_with_findings = want[..10]
        .iter()
        .filter(|(b, h)| findings.iter().any(|f| f["base"] == *b && f["head"] == *h))
        .count();
    assert!(
        null_with_findings as f64 <= ALPHA * 10.0,
        "{null_with_findings} of 10 unchanged pairs had findings: {findings:#?}"
    );
    // The planted one is found, as self and total, with an interval above 0.
    let last: Vec<&serde_json::Value> = findings.iter().filter(|f| f["head"] == "v11").collect();
    let leaf = format!("leaf{PLANTED}");
    for measure in ["self", "total"] {
        let f = last
            .iter()
            .find(|f| f["function"] == leaf.as_str() && f["measure"] == measure)
            .unwrap_or_else(|| panic!("{leaf} {measure} not found: {last:#?}"));
        assert_eq!(f["base"], "v10");
        let change = f["change"].as_f64().unwrap();
        assert!((change - RAISE).abs() < 0.02, "{f}");
        assert!(f["low"].as_f64().unwrap() > 0.0, "{f}");
        assert!(f["p_adjusted"].as_f64().unwrap() <= ALPHA, "{f}");
    }
    // Nothing else rose but the planted leaf's part.
    let part = format!("part{}", PLANTED / 4);
    for f in &last {
        assert!(
            f["function"] == leaf.as_str() || f["function"] == part.as_str(),
            "{f}"
        );
    }

    // The text: the pairs, the method, and the finding's row.
    let out = regressions(dir.path(), &["--pref", min]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("v10 -> v11: 36 tests"), "{text}");
    assert!(text.contains("v5-canary: skipped"), "{text}");
    assert!(text.contains("Holm-Bonferroni"), "{text}");
    let row = text
        .lines()
        .find(|l| l.contains(&format!("| {leaf} ")) && l.contains("| self "))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(row.starts_with("| v10  | v11 "), "{row}");

    // The page's API gives the same report (the collector runs with the same pref).
    let (status, headers, body) = http(c.addr, "GET", "/api/regressions", &[], b"");
    assert_eq!(status, 200, "{body}");
    assert_eq!(get(&headers, "content-type"), Some("application/json"));
    let api: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(&api, report);
    // Scoped by the filters: no page matches, so no release has a sample to compare.
    let (status, _, body) = http(c.addr, "GET", "/api/regressions?url=nowhere", &[], b"");
    assert_eq!(status, 200, "{body}");
    let scoped: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert!(
        scoped["findings"].as_array().unwrap().is_empty(),
        "{scoped}"
    );
    assert!(scoped["pairs"][0]["skipped"]
        .as_str()
        .unwrap()
        .contains("0 samples"));
    for (target, why) in [
        ("/api/regressions?release=v1", "no release filter"),
        ("/api/regressions?limit=3", "unknown parameter"),
    ] {
        let (status, _, body) = http(c.addr, "GET", target, &[], b"");
        assert_eq!(status, 400, "{target}: {body}");
        assert!(body.contains(why), "{target}: {body}");
    }
}

#[test]
fn a_store_without_two_releases_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = regressions(dir.path(), &[]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no traces"), "{err}");

    let c = Collector::start(dir.path(), &[]);
    // The API answers 200: nothing to compare, and a note that says why.
    let note = |body: &str| -> String {
        let r: serde_json::Value = serde_json::from_str(body).unwrap();
        assert_eq!(r["pairs"], serde_json::json!([]), "{r}");
        assert_eq!(r["findings"], serde_json::json!([]), "{r}");
        r["note"].as_str().unwrap().to_owned()
    };
    let (status, _, body) = http(c.addr, "GET", "/api/regressions", &[], b"");
    assert_eq!(status, 200, "{body}");
    assert!(
        note(&body).contains("project default has 0 release(s)"),
        "{body}"
    );
    let mut rng = fastrand::Rng::with_seed(1);
    post_release(&c, "1.0", &weights(), 1, &mut rng, DAY);
    let out = regressions(dir.path(), &[]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("project default has 1 release(s) (1.0): regressions compare a release with the one before it, and need two"),
        "{err}"
    );
    let (status, _, body) = http(c.addr, "GET", "/api/regressions", &[], b"");
    assert_eq!(status, 200, "{body}");
    assert!(note(&body).contains("has 1 release(s) (1.0)"), "{body}");
    // A bad pref is refused by name.
    let out = regressions(dir.path(), &["--pref", "collector.regressions.alpha=2"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("between 0 and 1"));
}

/// The page's Regressions section in headless Chromium: the findings of the planted
/// release in its table, and the base's and head's flame graphs drawn beside it.
#[test]
fn the_page_shows_a_regression_with_its_base_and_head_flame_graphs() {
    let dir = tempfile::tempdir().unwrap();
    let c = Collector::start(
        dir.path(),
        &["--pref", "collector.regressions.min_samples=1500"],
    );
    let mut rng = fastrand::Rng::with_seed(7);
    let base = weights();
    let mut planted = base.clone();
    planted[PLANTED] *= 3.0;
    post_release(&c, "1.0", &base, 2, &mut rng, DAY);
    post_release(&c, "2.0", &planted, 2, &mut rng, DAY + 3_600_000.0);
    let read = common::drive_page("regressions.mjs", &[&format!("http://{}/", c.addr)]);
    assert_eq!(read["errors"], serde_json::json!([]), "{read}");
    assert_eq!(read["outside"], serde_json::json!([]), "{read}");
    assert_eq!(read["pair"], "1.0 2.0", "{read}");
    let leaf = format!("leaf{PLANTED}");
    let rows = read["rows"].as_array().unwrap();
    let row = rows
        .iter()
        .find(|r| r["function"] == leaf.as_str() && r["measure"] == "self")
        .unwrap_or_else(|| panic!("{read}"));
    assert_eq!(row["pair"], "1.0 2.0");
    assert_eq!(row["cells"][0], "1.0 → 2.0");
    assert!(row["cells"][5].as_str().unwrap().starts_with('+'), "{row}");
    assert!(
        read["status"]
            .as_str()
            .unwrap()
            .contains("in 1 release pair(s); Holm–Bonferroni"),
        "{read}"
    );
    // Each flame graph is its release's: 1,500 samples, the planted leaf's share tripled.
    let samples_of = |side: &str, name: &str| -> u64 {
        let titles = read[side]["titles"]
            .as_array()
            .unwrap_or_else(|| panic!("{read}"));
        let t = titles
            .iter()
            .filter_map(|t| t.as_str())
            .find(|t| t.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("no {name} in {side}: {read}"));
        let n = t
            .split(" samples")
            .next()
            .unwrap()
            .rsplit('(')
            .next()
            .unwrap();
        // "leaf9 (https://shop.test/app.js:109:1) (1,234 samples, 12.34%)"
        n.replace(',', "")
            .parse()
            .unwrap_or_else(|_| panic!("{t:?}"))
    };
    assert!(
        read["base"]["src"]
            .as_str()
            .unwrap()
            .ends_with("release=1.0"),
        "{read}"
    );
    assert!(
        read["head"]["src"]
            .as_str()
            .unwrap()
            .ends_with("release=2.0"),
        "{read}"
    );
    assert_eq!(samples_of("base", "all"), (2 * PER_TRACE) as u64);
    assert_eq!(samples_of("head", "all"), (2 * PER_TRACE) as u64);
    assert!(
        samples_of("head", &leaf) > 2 * samples_of("base", &leaf),
        "{read}"
    );
}
