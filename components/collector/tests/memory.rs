//! The collector's memory is bounded by the distinct frames (and stacks) it has seen, not by
//! the traces (issue 27): a collector that took 4,000 more traces over the same code holds
//! no more memory once the log has been compacted. A collector that kept anything per
//! trace (its decoded trace, ~60 KB, or its samples' rows) would grow by hundreds of MB.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::{http, Collector};

/// A page's trace: 500 samples over a fixed tree of 200 stacks of 40 functions (the same
/// code every time), each trace's samples drawn differently from `seed`.
fn body(seed: u64) -> Vec<u8> {
    let frames: Vec<_> = (0..40)
        .map(|f| serde_json::json!({"name": format!("fn{f}"), "resourceId": f % 4, "line": 10 + f, "column": 3}))
        .collect();
    let stacks: Vec<_> = (0..200u64)
        .map(|s| {
            if s < 40 {
                serde_json::json!({"frameId": s})
            } else {
                serde_json::json!({"frameId": s % 40, "parentId": s / 5})
            }
        })
        .collect();
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let samples: Vec<_> = (0..500)
        .map(|i| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            serde_json::json!({"stackId": x % 200, "timestamp": 10.0 * i as f64})
        })
        .collect();
    serde_json::to_vec(&serde_json::json!({
        "trace": {
            "frames": frames,
            "resources": (0..4).map(|r| format!("https://shop.example/{r}.js")).collect::<Vec<_>>(),
            "samples": samples,
            "stacks": stacks,
        },
        "release": "1.0",
        "session": format!("s{seed}"),
        "timeOrigin": 1_795_651_200_000.0 + seed as f64,
    }))
    .unwrap()
}

/// Posts the traces `from..to` from 4 clients.
fn post(c: &Collector, from: u64, to: u64) {
    std::thread::scope(|s| {
        for k in 0..4 {
            s.spawn(move || {
                for seed in (from..to).filter(|i| i % 4 == k) {
                    let (status, _, answer) = http(
                        c.addr,
                        "POST",
                        "/v1/profiles",
                        &[("Content-Type", "application/json")],
                        &body(seed),
                    );
                    assert_eq!(status, 202, "{answer}");
                }
            });
        }
    });
}

/// Waits until every sealed segment of the log is compacted (one segment, the open one,
/// is left), then gives the collector's resident memory in KiB.
fn settled_rss(c: &Collector, store: &Path) -> u64 {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let segments = std::fs::read_dir(store.join("wal"))
            .unwrap()
            .filter(|e| {
                let path = e.as_ref().unwrap().path();
                // Segments are made ahead, zero-filled: one holding no record is not pending.
                path.extension().is_some_and(|x| x == "wal")
                    && jsprof_collector::wal::holds_records(&path)
            })
            .count();
        if segments <= 1 {
            break;
        }
        assert!(Instant::now() < deadline, "{segments} log segments left");
        std::thread::sleep(Duration::from_millis(50));
    }
    let status = std::fs::read_to_string(format!("/proc/{}/status", c.child.id())).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS")
}

#[test]
fn memory_stays_flat_as_traces_of_the_same_code_pile_up() {
    let dir = tempfile::tempdir().unwrap();
    // Small segments, sealed often: many compactions, each of a few traces.
    let c = Collector::start(
        dir.path(),
        &[
            "--pref",
            "collector.segment_bytes=1048576",
            "--pref",
            "collector.segment_ms=200",
        ],
    );
    post(&c, 0, 1000);
    let first = settled_rss(&c, dir.path());
    post(&c, 1000, 5000);
    let then = settled_rss(&c, dir.path());
    eprintln!("resident after 1,000 traces: {first} KiB; after 5,000: {then} KiB");
    assert!(
        then <= first + 48 * 1024,
        "4,000 more traces of the same code grew the collector from {first} KiB to {then} KiB"
    );
    let out = common::query(dir.path(), "SELECT count(*) AS n FROM traces");
    assert!(out.contains("| 5000 |"), "{out}");
}
