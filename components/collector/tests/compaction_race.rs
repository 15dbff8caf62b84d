//! Queries while segments are compacted: a query context reads each segment once, from the
//! write-ahead log or from its committed Parquet files, whatever compaction does after the
//! context is made; a segment whose commit mark (`frames/seg-N.parquet`) is missing is read
//! from the log only. Driven step by step through the library (no threads, no timing).

mod common;

use std::path::Path;

use arrow::array::{Array, Int64Array};
use datafusion::prelude::SessionContext;
use jsprof_collector::model::Ingested;
use jsprof_collector::{decode, query, store, wal};

/// `traces` traces of `samples` samples each, decoded by jsprof's intake as a request
/// would be, one log record each, written as segment `n` of `store_dir`'s log.
fn write_segment(store_dir: &Path, n: u64, traces: usize, samples: usize) {
    let req = decode::Request {
        project: "default".into(),
        received: common::DAY,
        max_bytes: 10 << 20,
        ..decode::Request::default()
    };
    let mut bytes = Vec::new();
    for i in 0..traces {
        let body = common::envelope(&format!("s{n}-{i}"), "1.0", samples);
        let ingested: Vec<Ingested> = decode::jsprof(&req, &body).unwrap().traces().unwrap();
        bytes.extend_from_slice(&wal::encode_record(&ingested));
    }
    let dir = store::wal_dir(store_dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(wal::segment_path(&dir, n), bytes).unwrap();
}

/// The one Int64 that `sql` (a count or a sum) answers on `ctx`.
async fn count(ctx: &SessionContext, sql: &str) -> i64 {
    let batches = ctx.sql(sql).await.unwrap().collect().await.unwrap();
    let column = batches[0].column(0);
    let ints = column.as_any().downcast_ref::<Int64Array>().unwrap();
    assert_eq!(ints.len(), 1, "{sql}");
    ints.value(0)
}

/// (traces, samples, distinct frames) that `ctx` sees.
async fn counts(ctx: &SessionContext) -> (i64, i64, i64) {
    (
        count(ctx, "SELECT count(*) FROM traces").await,
        count(ctx, "SELECT count(*) FROM samples").await,
        count(ctx, "SELECT count(*) FROM frames").await,
    )
}

/// The frames of `common::trace`: main, render, layout, paint and style (a frame of the
/// trace's frames table that no sample is in is stored too).
const FRAMES: i64 = 5;

#[tokio::test]
async fn a_segment_compacted_after_the_context_is_made_counts_once() {
    let dir = tempfile::tempdir().unwrap();
    let store_dir = dir.path();
    let mut known = store::Known::default();
    // Segment 1 compacted before the context; segment 2 only in the log when it is made.
    write_segment(store_dir, 1, 3, 10);
    store::compact(&store_dir.into(), 1, &mut known).unwrap();
    write_segment(store_dir, 2, 2, 20);
    let ctx = query::context(&store_dir.into(), None).await.unwrap();
    let project = query::context(&store_dir.into(), Some("default"))
        .await
        .unwrap();
    let elsewhere = query::context(&store_dir.into(), Some("elsewhere"))
        .await
        .unwrap();

    // Then segment 2 is compacted: its files and commit mark are written, its log deleted.
    store::compact(&store_dir.into(), 2, &mut known).unwrap();
    assert!(store::compacted(&store_dir.into(), 2).unwrap());
    assert!(!wal::segment_path(&store::wal_dir(store_dir), 2).exists());

    let once = (5, 3 * 10 + 2 * 20, FRAMES);
    assert_eq!(
        counts(&ctx).await,
        once,
        "the context made before compaction"
    );
    assert_eq!(counts(&project).await, once, "limited to the project");
    assert_eq!(
        (
            count(&elsewhere, "SELECT count(*) FROM traces").await,
            count(&elsewhere, "SELECT count(*) FROM samples").await,
        ),
        (0, 0),
        "another project's"
    );
    // Every query of one context sees the same segments (the page runs several on one).
    assert_eq!(
        count(&ctx, "SELECT sum(sample_count) FROM traces").await,
        count(&ctx, "SELECT count(*) FROM samples").await
    );
    // A context made now reads both from Parquet, and sees the same.
    let after = query::context(&store_dir.into(), None).await.unwrap();
    assert_eq!(
        counts(&after).await,
        once,
        "a context made after compaction"
    );
    // The stacks of segment 2, read from its log while segment 1's Parquet holds them
    // too, count once, as in the context that reads both segments from Parquet.
    for table in ["stacks", "stack_frames"] {
        let sql = format!("SELECT count(*) FROM {table}");
        let stored = count(&after, &sql).await;
        assert!(stored > 0, "{table}");
        assert_eq!(count(&ctx, &sql).await, stored, "{table}");
    }
}

#[tokio::test]
async fn files_without_their_commit_mark_are_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let store_dir = dir.path();
    write_segment(store_dir, 1, 4, 10);
    let log = wal::segment_path(&store::wal_dir(store_dir), 1);
    let bytes = std::fs::read(&log).unwrap();
    // A compaction stopped before its mark: every table's file written but frames', and
    // the segment still in the log (as after a crash; the next start compacts it again).
    store::compact(&store_dir.into(), 1, &mut store::Known::default()).unwrap();
    let mark = store::tables_dir(store_dir).join("frames/seg-000000000001.parquet");
    std::fs::remove_file(&mark).unwrap();
    std::fs::write(&log, bytes).unwrap();
    assert!(!store::compacted(&store_dir.into(), 1).unwrap());
    let samples_files =
        std::fs::read_dir(store::tables_dir(store_dir).join("samples/day=2026-11-26/release=1.0"))
            .unwrap()
            .count();
    assert_eq!(samples_files, 1, "the samples file is there");

    let ctx = query::context(&store_dir.into(), None).await.unwrap();
    assert_eq!(counts(&ctx).await, (4, 40, FRAMES), "the log's rows, once");

    // Without the log segment too (its files left by hand): nothing is read.
    std::fs::remove_file(&log).unwrap();
    let ctx = query::context(&store_dir.into(), None).await.unwrap();
    assert_eq!(counts(&ctx).await, (0, 0, 0), "uncommitted files alone");
}

#[tokio::test]
async fn an_empty_store_has_empty_tables_with_their_schemas() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = query::context(&dir.path().into(), None).await.unwrap();
    assert_eq!(counts(&ctx).await, (0, 0, 0));
    for table in store::TABLES {
        let df = ctx.table(table).await.unwrap();
        let fields: Vec<String> = df
            .schema()
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect();
        let mut want: Vec<String> = store::schema(table)
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect();
        if table == "traces" {
            // The view's own column (tables::TRACES_VIEW), resolved from the events.
            want.push("page_name".into());
        }
        assert_eq!(fields, want, "{table}");
        assert!(df
            .collect()
            .await
            .unwrap()
            .iter()
            .all(|b| b.num_rows() == 0));
    }
}
