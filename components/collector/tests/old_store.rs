//! A store written by the collector of before events (tests/fixtures/store-v1, its README
//! says how): Parquet files whose `traces` have no `view_id`, `start_ms` nor `end_ms`, and a
//! log segment holding a version 1 record, as that collector left them when killed. This
//! collector reads both as they are, compacts the segment without losing its trace, and
//! queries the old rows beside new ones: the old trace keeps its stored URL and links to no
//! event of its session (decision 0050).

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::{http, query, run, top_samples, Collector, DAY};

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else if e.file_name() != "README.md" {
            std::fs::copy(e.path(), &target).unwrap();
        }
    }
}

/// (function, samples) of `top`'s table, sorted.
fn top(store: &Path, extra: &[&str]) -> Vec<(String, i64)> {
    let mut args = vec!["top", "--store", store.to_str().unwrap()];
    args.extend_from_slice(extra);
    let mut rows = top_samples(&run(&args));
    rows.sort();
    rows
}

fn rows(pairs: &[(&str, i64)]) -> Vec<(String, i64)> {
    let mut v: Vec<(String, i64)> = pairs.iter().map(|(f, n)| ((*f).to_owned(), *n)).collect();
    v.sort();
    v
}

/// The `traces` view's rows: release, session, page URL, samples, whether `start_ms` is NULL,
/// the page's name.
fn traces(store: &Path) -> String {
    query(
        store,
        "SELECT release, session, page_url, sample_count, start_ms IS NULL AS no_times, page_name FROM traces ORDER BY release",
    )
}

#[test]
fn a_store_of_before_events_is_read_compacted_and_queried() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/store-v1");
    copy_dir(&fixture, store);
    let segment = store.join("wal/000000000002.wal");

    // As it is: trace A from the old Parquet files, B from the log's version 1 record.
    let all = rows(&[
        ("layout", 30),
        ("main", 64),
        ("paint", 30),
        ("render", 64),
        ("style", 4),
    ]);
    let out = traces(store);
    assert!(
        out.contains("| 1.0     | s-1     | https://shop.test/cart | 40           | true     |"),
        "{out}"
    );
    assert!(
        out.contains("| 2.0     | s-2     | https://shop.test/home | 24           | false    |"),
        "{out}"
    );
    assert_eq!(top(store, &[]), all);

    // This collector compacts the old segment: nothing of it lost.
    let c = Collector::start(store, &[]);
    let deadline = Instant::now() + Duration::from_secs(60);
    while segment.exists() {
        assert!(Instant::now() < deadline, "segment 2 not compacted");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(store
        .join("tables/frames/seg-000000000002.parquet")
        .exists());
    assert_eq!(top(store, &[]), all);

    // A RUM batch: a view and a long task for each session. B (compacted by this
    // collector, its times known) takes its session's view URL, and its samples inside the
    // long task are picked; A (stored without times) keeps its URL and links to nothing.
    let batch = [
        serde_json::json!({"type": "view", "date": DAY, "session": {"id": "s-1"},
            "view": {"id": "v-a", "url": "https://shop.test/elsewhere", "time_spent": 1_000_000_000_u64}}),
        serde_json::json!({"type": "long_task", "date": DAY + 50.0, "session": {"id": "s-1"},
            "view": {"id": "v-a"}, "long_task": {"id": "lt-a", "entry_type": "long-task", "duration": 400_000_000_u64}}),
        serde_json::json!({"type": "view", "date": DAY + 60_000.0, "session": {"id": "s-2"},
            "view": {"id": "v-b", "url": "https://shop.test/home?from=rum", "time_spent": 1_000_000_000_u64}}),
        serde_json::json!({"type": "long_task", "date": DAY + 60_050.0, "session": {"id": "s-2"},
            "view": {"id": "v-b"}, "long_task": {"id": "lt-b", "entry_type": "long-task", "duration": 20_000_000_u64}}),
    ]
    .map(|e| e.to_string())
    .join("\n");
    let (status, _, answer) = http(
        c.addr,
        "POST",
        "/api/v2/rum?ddsource=browser",
        &[("Content-Type", "text/plain;charset=UTF-8")],
        batch.as_bytes(),
    );
    assert_eq!((status, answer.as_str()), (202, "{}"));
    let out = traces(store);
    assert!(
        out.contains(
            "| 1.0     | s-1     | https://shop.test/cart          | 40           | true     |           |"
        ),
        "{out}"
    );
    assert!(
        out.contains(
            "| 2.0     | s-2     | https://shop.test/home?from=rum | 24           | false    | /home     |"
        ),
        "{out}"
    );
    // B's first 3 samples (paint, style, paint), none of A's.
    assert_eq!(
        top(store, &["--during", "long-task"]),
        rows(&[("main", 3), ("paint", 2), ("render", 3), ("style", 1)])
    );
    // A trace's URL filter on the old rows.
    assert_eq!(
        top(store, &["--url", "/cart"]),
        rows(&[("layout", 30), ("main", 40), ("paint", 10), ("render", 40)])
    );
    let out = query(
        store,
        "SELECT kind, count(*) AS n FROM events GROUP BY kind ORDER BY kind",
    );
    assert!(out.contains("| long-task | 2 |"), "{out}");
    assert!(out.contains("| view      | 2 |"), "{out}");
}
