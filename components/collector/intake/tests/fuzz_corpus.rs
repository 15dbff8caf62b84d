//! Replays the intake fuzz targets' seeds and regressions (fuzz/corpus/intake_*,
//! fuzz/regressions/intake_*) through their bodies, as fuzz/properties' regressions.rs does
//! for the main workspace's targets.

use std::path::{Path, PathBuf};

fn replay(dir: &str) -> usize {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../fuzz")
        .join(dir);
    let mut n = 0;
    for (target, f) in [
        (
            "intake_jsprof",
            jsprof_intake::fuzz::intake_jsprof as fn(&[u8]),
        ),
        ("intake_datadog", jsprof_intake::fuzz::intake_datadog),
        ("intake_sentry", jsprof_intake::fuzz::intake_sentry),
    ] {
        let Ok(entries) = std::fs::read_dir(root.join(target)) else {
            continue;
        };
        let mut files: Vec<PathBuf> = entries.map(|e| e.unwrap().path()).collect();
        files.sort();
        for file in files {
            f(&std::fs::read(&file).unwrap());
            n += 1;
        }
    }
    n
}

#[test]
fn every_seed_passes() {
    assert!(replay("corpus") >= 4, "the seeds are there");
}

#[test]
fn fixed_crashes_stay_fixed() {
    replay("regressions");
}
