//! `collector.retention_days` (decision 0056): whole UTC day partitions of `traces`,
//! `samples` and `events` removed once the day has ended that many days ago, and the log
//! segments compaction keeps (a record that does not decode) once their last write is that
//! old; never a segment being written or waiting for compaction. Through the library with
//! an injected clock, and through the real binary with the system's.

mod common;

use std::collections::BTreeSet;
use std::path::Path;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use jsprof_collector::config::{Clock, Config};
use jsprof_collector::model::Ingested;
use jsprof_collector::retention::{self, DAY_MS};
use jsprof_collector::{decode, server, store, wal};

/// A jsprof envelope of a 10-sample trace whose page started at `time_origin`, with one
/// long task.
fn envelope(session: &str, time_origin: f64) -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({
        "trace": common::trace(10),
        "pageUrl": "https://example.test/index.html",
        "release": "1.0",
        "session": session,
        "timeOrigin": time_origin,
        "entries": [{"entryType": "longtask", "startTime": 60, "duration": 60}],
    }))
    .unwrap()
}

/// Writes segment `n` of `store_dir`'s log: one record per (session, time origin), decoded
/// by jsprof's intake as a request would be.
fn write_segment(store_dir: &Path, n: u64, traces: &[(&str, f64)]) {
    let mut bytes = Vec::new();
    for &(session, time_origin) in traces {
        let req = decode::Request {
            project: "default".into(),
            received: time_origin + 1000.0,
            max_bytes: 10 << 20,
            ..decode::Request::default()
        };
        let ingested: Vec<Ingested> = decode::jsprof(&req, &envelope(session, time_origin))
            .unwrap()
            .traces()
            .unwrap();
        bytes.extend_from_slice(&wal::encode_record(&ingested));
    }
    let dir = store::wal_dir(store_dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(wal::segment_path(&dir, n), bytes).unwrap();
}

/// Writes segment `n` as one record whose CRC holds but which does not decode (a newer
/// collector's: compaction keeps it, decision 0054), last written at `written_ms`.
fn write_unreadable_segment(store_dir: &Path, n: u64, written_ms: f64) {
    let dir = store::wal_dir(store_dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = wal::segment_path(&dir, n);
    let mut record = wal::encode_record(&[]);
    record[8] = 99;
    let crc = crc32fast::hash(&record[8..]);
    record[4..8].copy_from_slice(&crc.to_le_bytes());
    std::fs::write(&path, &record).unwrap();
    set_written(&path, written_ms);
}

fn set_written(path: &Path, ms: f64) {
    let t = UNIX_EPOCH + Duration::from_millis(ms as u64);
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(t)
        .unwrap();
}

/// The `day=D` partitions of `table`, sorted.
fn days(store_dir: &Path, table: &str) -> Vec<String> {
    let dir = store::tables_dir(store_dir).join(table);
    let mut out: Vec<String> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

/// The clock stands at 2026-11-26 12:00 UTC with a retention of 2 days: the first day kept
/// is 2026-11-24 (it ended 1.5 days ago); 2026-11-23 ended 2.5 days ago and goes.
#[test]
fn old_days_and_old_unreadable_segments_go_at_compaction_the_rest_stays() {
    let dir = tempfile::tempdir().unwrap();
    let store_dir = dir.path();
    let now = common::DAY + 0.5 * DAY_MS;
    let (d23, d24, d26) = (
        common::DAY - 3.0 * DAY_MS,
        common::DAY - 2.0 * DAY_MS,
        common::DAY,
    );
    // The last minute of the 23rd, the first of the 24th: either side of the cut.
    write_segment(store_dir, 1, &[("old", d24 - 60_000.0)]);
    write_segment(store_dir, 2, &[("edge", d24 + 60_000.0)]);
    write_segment(store_dir, 3, &[("new", d26 + 3_600_000.0)]);
    // Unreadable: one last written on the 20th (goes), one 6 hours ago (stays).
    write_unreadable_segment(store_dir, 4, d23 - 3.0 * DAY_MS);
    write_unreadable_segment(store_dir, 5, now - 6.0 * 3_600_000.0);

    let mut config = Config::new(store_dir.to_owned());
    config.retention_days = 2;
    config.clock = Clock::from_fn(move || now);
    let (log, compactor) = server::open(&config).unwrap();
    drop(log);
    compactor.join().unwrap();

    for table in retention::DAY_TABLES {
        assert_eq!(
            days(store_dir, table),
            ["day=2026-11-24", "day=2026-11-26"],
            "{table}"
        );
    }
    // Nothing left half removed, and the tables without days are whole.
    assert!(!retention::expired_dir(store_dir).exists());
    assert!((1..=3).all(|n| store::compacted(&store_dir.into(), n).unwrap()));
    let wal_dir = store::wal_dir(store_dir);
    assert!(!wal::segment_path(&wal_dir, 4).exists());
    assert!(wal::segment_path(&wal_dir, 5).exists());

    // What stays is whole and queryable (segment 5 aside: no collector here reads it).
    std::fs::remove_file(wal::segment_path(&wal_dir, 5)).unwrap();
    let out = common::query(
        store_dir,
        "SELECT t.session, count(*) AS samples FROM traces t JOIN samples s \
         ON s.trace_id = t.trace_id GROUP BY t.session ORDER BY t.session",
    );
    assert!(out.contains("| edge    | 10      |"), "{out}");
    assert!(out.contains("| new     | 10      |"), "{out}");
    assert!(!out.contains("old"), "{out}");
    let out = common::query(store_dir, "SELECT count(*) AS n FROM events");
    assert!(out.contains("| 2 |"), "{out}");
    // A frame of the removed day that later days share is still there.
    let out = common::query(
        store_dir,
        "SELECT count(*) AS n FROM samples s JOIN stacks k ON k.stack_id = s.stack_id \
         JOIN frames f ON f.frame_id = k.frame_id",
    );
    assert!(out.contains("| 20 |"), "{out}");
}

/// The retention removes only the log segments it is given (those compaction kept), and of
/// those only the ones last written before the cut: a segment being written or waiting for
/// compaction is never removed, however old its last write.
#[test]
fn only_kept_segments_older_than_the_retention_are_removed() {
    let dir = tempfile::tempdir().unwrap();
    let store_dir = dir.path();
    let now = common::DAY;
    let old = now - 10.0 * DAY_MS;
    // 1: waiting for compaction; 2: being written; 3 and 4: kept, old and recent.
    write_segment(store_dir, 1, &[("waiting", old)]);
    set_written(&wal::segment_path(&store::wal_dir(store_dir), 1), old);
    write_segment(store_dir, 2, &[("written", old)]);
    set_written(&wal::segment_path(&store::wal_dir(store_dir), 2), old);
    write_unreadable_segment(store_dir, 3, old);
    write_unreadable_segment(store_dir, 4, now - 60_000.0);
    let mut kept = BTreeSet::from([3, 4]);
    let out = retention::expire(&store_dir.into(), 1, now, &mut kept).unwrap();
    assert_eq!(out.segments, vec![3]);
    assert!(out.partitions.is_empty());
    assert!(out.bytes > 0);
    assert_eq!(kept, BTreeSet::from([4]));
    let on_disk = wal::segments(&store::wal_dir(store_dir)).unwrap();
    assert_eq!(on_disk, vec![1, 2, 4]);
    // A retention of 0 days keeps nothing older than now, still only what it is given.
    let out = retention::expire(&store_dir.into(), 0, now, &mut kept).unwrap();
    assert_eq!(out.segments, vec![4]);
    assert_eq!(
        wal::segments(&store::wal_dir(store_dir)).unwrap(),
        vec![1, 2]
    );
}

fn now_ms() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
        * 1000.0
}

/// The real binary, on the system's clock: a trace of 2020 is acknowledged, compacted, and
/// its day removed; today's stays. Waits on the store's state, not on time.
#[test]
fn the_collector_removes_a_day_past_its_retention_and_keeps_today() {
    let dir = tempfile::tempdir().unwrap();
    let c = common::Collector::start(
        dir.path(),
        &[
            "--pref",
            "collector.retention_days=30",
            "--pref",
            "collector.segment_ms=200",
        ],
    );
    // 2020-01-01 00:00 UTC.
    let old = 1_577_836_800_000.0;
    let today = now_ms();
    for (session, time_origin) in [("old", old), ("today", today)] {
        let (status, _, body) = common::http(
            c.addr,
            "POST",
            "/v1/profiles",
            &[("Content-Type", "application/json")],
            &envelope(session, time_origin),
        );
        assert_eq!(status, 202, "{body}");
    }
    let today_dir = store::tables_dir(dir.path())
        .join("traces")
        .join(format!("day={}", store::day(today)));
    let old_gone = || {
        retention::DAY_TABLES
            .iter()
            .all(|t| !days(dir.path(), t).contains(&"day=2020-01-01".to_owned()))
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    while !(today_dir.exists() && old_gone()) {
        assert!(
            Instant::now() < deadline,
            "after 60 s: {} {}, 2020-01-01 gone from every table: {}",
            today_dir.display(),
            today_dir.exists(),
            old_gone()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = common::query(dir.path(), "SELECT session FROM traces");
    assert!(out.contains("| today "), "{out}");
    assert!(!out.contains("old"), "{out}");
}

/// A retention of more days than a u32 holds is refused at start, with the reason.
#[test]
fn a_retention_that_is_not_a_number_of_days_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    for value in ["-1", "thirty", "99999999999"] {
        let out = std::process::Command::new(common::BIN)
            .args(["collect", "--listen", "127.0.0.1:0", "--store"])
            .arg(dir.path())
            .args(["--pref", &format!("collector.retention_days={value}")])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{value}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("collector.retention_days"), "{value}: {err}");
    }
}
