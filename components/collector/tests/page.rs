//! The page at `/` of `jsprof collect` in headless Chromium (Debian's, driven by
//! playwright-core through tests/page/page.mjs): over a store of known traces, the top
//! table, the flame graph and the timeline show the right functions and counts, the
//! timeline marks a trace's long animation frame where it was, and a filter (a release,
//! samples during frames) changes them. `./mach test` installs chromium and playwright-core first.

mod common;

use common::{
    drive_page, field_trace, function_samples, post_envelope, post_trace, Collector, DAY,
};

#[test]
fn the_page_shows_the_store_and_filters_it() {
    let dir = tempfile::tempdir().unwrap();
    let c = Collector::start(dir.path(), &[]);
    // 1.0: layout 30, paint 10, 5 idle, a long animation frame over its 20 last samples
    // with a stack (all layout); 2.0, a minute later: paint 20, style 4.
    let u = "https://shop.test/";
    post_envelope(
        c.addr,
        &serde_json::json!({
            "trace": field_trace([30, 10, 0], 5),
            "release": "1.0",
            "pageUrl": u,
            "userAgent": "C",
            "timeOrigin": DAY,
            "entries": [{"entryType": "long-animation-frame", "name": "TimerHandler:setTimeout", "startTime": 250, "duration": 190}],
        }),
    );
    post_trace(
        c.addr,
        None,
        &field_trace([0, 20, 4], 0),
        "2.0",
        u,
        "C",
        DAY + 60_000.0,
    );
    let url = format!("http://{}/", c.addr);
    let read = drive_page("page.mjs", &[&url, "2.0", "loaf"]);
    assert_eq!(read["errors"], serde_json::json!([]), "{read}");
    assert_eq!(read["outside"], serde_json::json!([]), "{read}");
    let top = |at: &str| function_samples(&read[at]["top"]);
    let flame = |at: &str| -> Vec<String> {
        read[at]["flame"]
            .as_array()
            .unwrap_or_else(|| panic!("no flame graph: {read}"))
            .iter()
            .map(|t| t.as_str().unwrap().to_owned())
            .collect()
    };
    let timeline = |at: &str| -> (u64, u64, usize) {
        let bars = read[at]["timeline"].as_array().unwrap();
        let sum = |k: &str| bars.iter().map(|b| b[k].as_u64().unwrap()).sum();
        (sum("with_stack"), sum("empty"), bars.len())
    };
    let has = |titles: &[String], want: &str| titles.iter().any(|t| t.starts_with(want));

    // The whole store: 69 samples, 64 with a stack.
    let before = top("before");
    assert!(before.contains(&("paint".to_owned(), 30)), "{read}");
    assert!(before.contains(&("layout".to_owned(), 30)), "{read}");
    assert!(before.contains(&("style".to_owned(), 4)), "{read}");
    assert!(before.contains(&("main".to_owned(), 64)), "{read}");
    let titles = flame("before");
    assert!(has(&titles, "all (69 samples, 100%)"), "{titles:?}");
    assert!(
        has(
            &titles,
            "paint (https://example.test/lib.js:20:3) (30 samples"
        ),
        "{titles:?}"
    );
    assert!(has(&titles, "(idle) (5 samples"), "{titles:?}");
    let (with_stack, empty, bars) = timeline("before");
    assert_eq!((with_stack, empty), (64, 5));
    assert!(bars >= 2, "a minute apart: {read}");
    assert_eq!(read["before"]["status"], "69 samples");

    // release=2.0: paint 20 and style 4 only.
    let after = top("after");
    assert_eq!(after[0], ("paint".to_owned(), 20), "{read}");
    assert!(after.contains(&("style".to_owned(), 4)), "{read}");
    assert!(!after.iter().any(|(f, _)| f == "layout"), "{read}");
    let titles = flame("after");
    assert!(has(&titles, "all (24 samples, 100%)"), "{titles:?}");
    assert!(
        !titles.iter().any(|t| t.starts_with("layout")),
        "{titles:?}"
    );
    let (with_stack, empty, _) = timeline("after");
    assert_eq!((with_stack, empty), (24, 0));
    assert!(
        read["location"]
            .as_str()
            .unwrap()
            .ends_with("/?release=2.0"),
        "{read}"
    );

    // The whole store's timeline marks 1.0's frame, once, over its time, inside the plot:
    // the timeline spans a minute (1 s buckets), so the 190 ms frame is a thin mark in the
    // first bucket's part of the lane.
    let marks = read["before"]["marks"].as_array().unwrap();
    assert_eq!(marks.len(), 1, "{read}");
    let m = &marks[0];
    assert_eq!(m["kind"], "loaf");
    assert_eq!(m["class"], "mk-loaf");
    assert_eq!(m["start_ms"].as_f64(), Some(DAY + 250.0));
    assert_eq!(m["duration_ms"].as_f64(), Some(190.0));
    assert!(
        m["title"]
            .as_str()
            .unwrap()
            .starts_with("long animation frame (TimerHandler:setTimeout): 190.0 ms at"),
        "{m}"
    );
    let axis = read["before"]["axis"].as_array().unwrap();
    let (x0, x1) = (axis[0].as_f64().unwrap(), axis[1].as_f64().unwrap());
    let (x, w) = (m["x"].as_f64().unwrap(), m["width"].as_f64().unwrap());
    assert!(x >= x0 && x + w <= x1 && w >= 2.0, "{m} in {axis:?}");
    // Under the first bar (the first bucket holds 1.0's samples).
    let first = &read["before"]["bars"][0];
    assert!(
        x >= first[0].as_f64().unwrap()
            && x <= first[0].as_f64().unwrap() + first[1].as_f64().unwrap(),
        "{m} under {first}"
    );
    // 2.0 has no event: its release's timeline marks nothing.
    assert_eq!(read["after"]["marks"], serde_json::json!([]), "{read}");

    // During frames: the frame's 20 layout samples only, and its mark.
    let during = top("during");
    assert_eq!(
        during,
        vec![
            ("layout".to_owned(), 20),
            ("main".to_owned(), 20),
            ("render".to_owned(), 20)
        ],
        "{read}"
    );
    let titles = flame("during");
    assert!(has(&titles, "all (20 samples, 100%)"), "{titles:?}");
    let (with_stack, empty, _) = timeline("during");
    assert_eq!((with_stack, empty), (20, 0));
    assert_eq!(
        read["during"]["marks"].as_array().unwrap().len(),
        1,
        "{read}"
    );
}
