//! `--during long-task|loaf|interaction`: `top`, `flame`, `diff` and the page's API count
//! only the samples whose time falls inside such an event of their own trace, whether the
//! event came with the trace (the snippet's `entries`) or apart from it (a RUM batch of the
//! same session).

mod common;

use std::process::Command;

use common::{
    field_trace, function_samples, http, post_envelope, run, top_samples, Collector, BIN, DAY,
};

/// A store of two traces: 1.0's (layout 30, paint 10; samples 10 ms apart from 50 ms) with
/// a long animation frame over its last 20 samples (all layout), a slow click over its
/// first 4 (layout 2, paint 2) and a long task over samples 5 to 9 (paint 3, layout 2);
/// 2.0's (paint 20, style 4), in session `s-rum`, whose long task over its first 3 samples
/// (paint 2, style 1) came in a RUM batch.
fn store(dir: &std::path::Path) -> Collector {
    let c = Collector::start(dir, &[]);
    post_envelope(
        c.addr,
        &serde_json::json!({
            "trace": field_trace([30, 10, 0], 0),
            "release": "1.0",
            "pageUrl": "https://shop.test/cart",
            "session": "s-1",
            "timeOrigin": DAY,
            "entries": [
                {"entryType": "long-animation-frame", "name": "TimerHandler:setTimeout", "startTime": 250, "duration": 190},
                {"entryType": "event", "name": "click", "startTime": 50, "duration": 30},
                {"entryType": "longtask", "startTime": 100, "duration": 40},
            ],
        }),
    );
    post_envelope(
        c.addr,
        &serde_json::json!({
            "trace": field_trace([0, 20, 4], 0),
            "release": "2.0",
            "pageUrl": "https://shop.test/home",
            "session": "s-rum",
            "timeOrigin": DAY + 60_000.0,
        }),
    );
    // Datadog's RUM batch: a long task of 20 ms (in ns) from 2.0's first sample.
    let rum = serde_json::json!({
        "type": "long_task", "date": DAY + 60_050.0,
        "session": {"id": "s-rum"}, "view": {"id": "v1", "url": "https://shop.test/home"},
        "long_task": {"id": "lt-1", "entry_type": "long-task", "duration": 20_000_000},
    });
    let (status, _, answer) = http(
        c.addr,
        "POST",
        "/api/v2/rum?ddsource=browser",
        &[("Content-Type", "text/plain;charset=UTF-8")],
        format!("{rum}\n{{\"type\":\"action\",\"date\":1}}").as_bytes(),
    );
    assert_eq!((status, answer.as_str()), (202, "{}"));
    c
}

#[test]
fn top_flame_and_diff_during_long_tasks_frames_and_interactions() {
    let dir = tempfile::tempdir().unwrap();
    let _c = store(dir.path());
    let store = dir.path().to_str().unwrap();
    let top = |during: &str| top_samples(&run(&["top", "--store", store, "--during", during]));
    // Frames: 1.0's last 20 samples.
    let loaf = top("loaf");
    assert!(loaf.contains(&("layout".into(), 20)), "{loaf:?}");
    assert!(!loaf.iter().any(|(f, _)| f == "paint"), "{loaf:?}");
    assert!(loaf.contains(&("main".into(), 20)), "{loaf:?}");
    // Interactions: the click's 4 samples.
    let click = top("interaction");
    assert!(click.contains(&("layout".into(), 2)), "{click:?}");
    assert!(click.contains(&("paint".into(), 2)), "{click:?}");
    assert!(click.contains(&("main".into(), 4)), "{click:?}");
    // Long tasks (and frames): 1.0's 5 + 20, and 2.0's 3 from its session's RUM batch.
    let long = top("long-task");
    assert!(long.contains(&("layout".into(), 22)), "{long:?}");
    assert!(long.contains(&("paint".into(), 5)), "{long:?}");
    assert!(long.contains(&("style".into(), 1)), "{long:?}");
    assert!(long.contains(&("main".into(), 28)), "{long:?}");

    let folded = dir.path().join("loaf.folded");
    run(&[
        "flame",
        "--store",
        store,
        "--during",
        "loaf",
        "-o",
        folded.to_str().unwrap(),
    ]);
    let text = std::fs::read_to_string(&folded).unwrap();
    // One call path, main → render → layout, 20 samples.
    assert_eq!(text.lines().count(), 1, "{text}");
    let line = text.lines().next().unwrap();
    assert!(line.contains("layout") && line.ends_with(" 20"), "{text}");

    let diff = run(&[
        "diff",
        "--store",
        store,
        "--during",
        "long-task",
        "--base",
        "1.0",
        "--head",
        "2.0",
    ]);
    assert!(
        diff.starts_with("base 1.0: 25 samples with a stack; head 2.0: 3;"),
        "{diff}"
    );

    // The same filter in the page's API; a kind it does not know is a 400 with the reason.
    let (status, _, body) = http(_c.addr, "GET", "/api/top?during=loaf", &[], b"");
    assert_eq!(status, 200, "{body}");
    let rows: serde_json::Value = serde_json::from_str(&body).unwrap();
    let rows = function_samples(&rows["functions"]);
    assert!(rows.contains(&("layout".into(), 20)), "{rows:?}");
    let (status, _, body) = http(_c.addr, "GET", "/api/top?during=frame", &[], b"");
    assert_eq!(status, 400);
    assert!(
        body.contains("during=frame: expected long-task, loaf or interaction"),
        "{body}"
    );
    // The timeline marks the events of the traces it shows, each once.
    let (_, _, body) = http(_c.addr, "GET", "/api/timeline", &[], b"");
    let t: serde_json::Value = serde_json::from_str(&body).unwrap();
    let kinds: Vec<&str> = t["marks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["interaction", "long-task", "loaf", "long-task"],
        "{t}"
    );

    let out = Command::new(BIN)
        .args(["top", "--store", store, "--during", "frame"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("frame: expected long-task, loaf or interaction"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
