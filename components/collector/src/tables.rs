//! The store's tables as DataFusion sees them, for both engines (query.rs, ballista.rs):
//! the session settings, a table's Parquet files, and the view that limits a table to a
//! project.
//!
//! The Parquet files a context reads are fixed when it is made ([`stored_segments`], then
//! [`stored_table`]), never listed when a query runs: a segment whose compaction commits
//! after the embedded context read it from the write-ahead log would otherwise be read
//! twice, and files whose commit mark is not written yet (a compaction half done, or one
//! that crashed before its mark and will be redone) would be read at all.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use datafusion::datasource::file_format::parquet::ParquetFormat;
use datafusion::datasource::listing::{
    ListingOptions, ListingTable, ListingTableConfig, ListingTableUrl,
};
use datafusion::prelude::{SessionConfig, SessionContext};

use crate::model::Contents;
use crate::store::Store;
use crate::{store, wal};

/// The session settings both engines query with.
pub fn session_config(base: SessionConfig) -> SessionConfig {
    base.with_information_schema(true)
}

/// Each segment of the log not compacted yet, in order, with its records: what a context
/// reads from the log (query.rs), or counts as left out (ballista.rs). A segment compacted
/// and deleted since it was listed is in the Parquet files, and skipped.
pub fn for_each_log_segment(
    store: &Store,
    mut segment: impl FnMut(u64, Vec<Contents>),
) -> Result<(), String> {
    let Some(wal_dir) = store.wal_dir() else {
        return Ok(());
    };
    if !wal_dir.exists() {
        return Ok(());
    }
    // One listing of the commit marks, not one look per segment (a request each in an
    // object store). A segment committed after it is read from the log, or, if deleted
    // meanwhile, skipped below; either way `stored_segments`, listed later, completes it.
    let committed = store::committed(store)?;
    let numbers = wal::segments(&wal_dir).map_err(|e| format!("{}: {e}", wal_dir.display()))?;
    for n in numbers {
        if committed.contains(&n) {
            continue;
        }
        match wal::read_segment(&wal::segment_path(&wal_dir, n)) {
            Ok(records) => segment(n, records),
            // Compacted and deleted since it was listed: in the Parquet files.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            // A record this collector cannot read: the answer would leave it out.
            Err(e) => return Err(e.to_string()),
        }
    }
    Ok(())
}

/// The segments whose Parquet files a context reads: those committed now (their commit
/// mark written, [`store::compacted`]), but those in `from_log`, which the context read
/// from the write-ahead log. Call it after reading the log: a segment is then read once,
/// from the log or from Parquet. Every table's files of a committed segment are written
/// before its mark, so the tables listed after this call hold all of theirs.
pub fn stored_segments(store: &Store, from_log: &BTreeSet<u64>) -> Result<BTreeSet<u64>, String> {
    let mut committed = store::committed(store)?;
    committed.retain(|n| !from_log.contains(n));
    Ok(committed)
}

/// The files of `table` (`tables/NAME/**/seg-N.parquet`) of the segments in `segments`,
/// by absolute path, sorted.
pub fn stored_files(
    store_dir: &Path,
    table: &str,
    segments: &BTreeSet<u64>,
) -> Result<Vec<PathBuf>, String> {
    let store_dir =
        std::path::absolute(store_dir).map_err(|e| format!("{}: {e}", store_dir.display()))?;
    let mut files = Vec::new();
    let mut dirs = vec![store::tables_dir(&store_dir).join(table)];
    while let Some(dir) = dirs.pop() {
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            // No file of this table yet.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(format!("{}: {e}", dir.display())),
        };
        for entry in entries {
            let entry = entry.map_err(|e| format!("{}: {e}", dir.display()))?;
            // By name first: a committed segment's files stay as they are.
            if let Some(n) = store::segment_of_file(&entry.file_name().to_string_lossy()) {
                if segments.contains(&n) {
                    files.push(entry.path());
                }
                continue;
            }
            match entry.file_type() {
                Ok(kind) if kind.is_dir() => dirs.push(entry.path()),
                Ok(_) => {}
                // A compaction's temporary file, renamed since it was listed (where the
                // file system gives no type with the name, this is a stat).
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(format!("{}: {e}", entry.path().display())),
            }
        }
    }
    files.sort_unstable();
    Ok(files)
}

/// The URLs of the files of `table` of the segments in `segments`, sorted: `file://` URLs
/// of a local store's ([`stored_files`]), `s3://BUCKET/KEY` of an object store's.
pub fn stored_urls(
    store: &Store,
    table: &str,
    segments: &BTreeSet<u64>,
) -> Result<Vec<url::Url>, String> {
    if let Some(o) = &store.objects {
        let mut keys: Vec<_> = o
            .list_all(&o.table_dir(table))?
            .into_iter()
            .map(|m| m.location)
            .filter(|k| {
                k.filename()
                    .and_then(store::segment_of_file)
                    .is_some_and(|n| segments.contains(&n))
            })
            .collect();
        keys.sort_unstable();
        return Ok(keys.iter().map(|k| o.url(k)).collect());
    }
    let dir = store.dir.as_deref().ok_or("a store without a directory")?;
    stored_files(dir, table, segments)?
        .into_iter()
        .map(|path| {
            // A file URL, not a path string: a path is read as a glob where it has `*?[`.
            url::Url::from_file_path(&path)
                .map_err(|()| format!("{}: not a file URL", path.display()))
        })
        .collect()
}

/// A table over the Parquet files of `table` of the segments in `segments` (see
/// [`stored_segments`]): an explicit list of files, which serialises to a Ballista
/// cluster as it is. No file gives a table without rows, with the table's schema.
pub fn stored_table(
    store: &Store,
    table: &str,
    segments: &BTreeSet<u64>,
) -> Result<Arc<ListingTable>, String> {
    let urls = stored_urls(store, table, segments)?
        .into_iter()
        .map(|url| ListingTableUrl::try_new(url, None).map_err(|e| e.to_string()))
        .collect::<Result<Vec<_>, String>>()?;
    let mut config = ListingTableConfig::new_with_multi_paths(urls);
    // Set as the field: `with_listing_options` debug-asserts a path, and no path is a
    // table without rows here (its scan is an `EmptyExec`).
    config.options = Some(
        ListingOptions::new(Arc::new(ParquetFormat::default())).with_file_extension(".parquet"),
    );
    ListingTable::try_new(config.with_schema(store::schema(table)))
        .map(Arc::new)
        .map_err(|e| e.to_string())
}

/// Registers the tables' object store, if they are in one, with `ctx`'s runtime.
pub fn register_objects(ctx: &SessionContext, store: &Store) {
    if let Some(o) = &store.objects {
        ctx.register_object_store(o.root(), o.store());
    }
}

/// The name a table's rows are registered under: `traces_base` for `traces`, whose
/// registered view resolves each trace's page from its events ([`TRACES_VIEW`]); the
/// table's own name for the others.
pub fn base_name(table: &str) -> String {
    if table == "traces" {
        "traces_base".into()
    } else {
        table.into()
    }
}

/// The `traces` table as queries read it: the stored rows (`traces_base`) with `page_url`
/// taken from the SDK's view or transaction where the trace is linked to one, the stored
/// one (the snippet's `pageUrl`, or `Referer`, which browsers cut to the origin) where it
/// is not. A trace is linked to the view its SDK named (Datadog's first view id); without
/// one, to the views and transactions of its session (Sentry's profiler id, Datadog's
/// session): the latest that started at or before its first sample, else the first after.
/// A trace stored before traces had times (its `start_ms` NULL) keeps its stored URL.
/// `page_name` is that view's or transaction's name (Datadog's view name, else its URL's
/// path; Sentry's transaction), NULL where no event gives the page.
pub const TRACES_VIEW: &str = "
SELECT t.trace_id, t.project, t.source, t.received_ms, t.time_origin_ms,
       coalesce(r.url, t.page_url) AS page_url, t.release, t.user_agent, t.session, t.labels,
       t.sample_count, t.day, t.view_id, t.start_ms, t.end_ms, t.debug_ids, r.name AS page_name
FROM traces_base t LEFT JOIN (
  SELECT c.trace_id, first_value(c.url ORDER BY c.rank, c.key) AS url,
         first_value(c.name ORDER BY c.rank, c.key) AS name FROM (
    SELECT t.trace_id, e.url, e.name, 0 AS rank, 0.0 AS key
    FROM traces_base t JOIN events e ON e.project = t.project AND e.event_id = t.view_id
    WHERE e.kind = 'view' AND e.url IS NOT NULL
    UNION ALL
    SELECT t.trace_id, e.url, e.name,
           CASE WHEN e.start_ms <= t.start_ms THEN 1 ELSE 2 END AS rank,
           CASE WHEN e.start_ms <= t.start_ms THEN -e.start_ms ELSE e.start_ms END AS key
    FROM traces_base t JOIN events e ON e.project = t.project AND e.session = t.session
    WHERE t.view_id IS NULL AND t.start_ms IS NOT NULL
      AND e.kind IN ('view', 'transaction') AND e.url IS NOT NULL
  ) c GROUP BY c.trace_id
) r ON r.trace_id = t.trace_id";

/// Registers the `traces` view ([`TRACES_VIEW`]) over `traces_base` and `events`.
pub async fn register_traces_view(ctx: &SessionContext) -> Result<(), String> {
    let view = ctx.sql(TRACES_VIEW).await.map_err(|e| e.to_string())?;
    ctx.register_table("traces", view.into_view())
        .map_err(|e| e.to_string())?;
    Ok(())
}

/// The `WHERE` that limits `table` to `project` (traces, samples and events have a project;
/// frames and stacks are shared), if any.
pub fn project_filter(table: &str, project: Option<&str>) -> Option<String> {
    match (table, project) {
        ("traces" | "samples" | "events", Some(p)) => {
            Some(format!(" WHERE project = {}", crate::aggregate::quote(p)))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_files_are_the_asked_segments_files_under_every_partition() {
        let dir = tempfile::tempdir().unwrap();
        let tables = store::tables_dir(dir.path());
        let a = tables.join("samples/day=2026-11-26/release=1.0");
        let b = tables.join("samples/day=2026-11-27/release=__none__");
        for d in [&a, &b] {
            std::fs::create_dir_all(d).unwrap();
        }
        for path in [
            a.join("seg-000000000001.parquet"),
            a.join("seg-000000000002.parquet"),
            a.join("seg-000000000003.parquet.tmp"),
            a.join("notes.txt"),
            b.join("seg-000000000003.parquet"),
        ] {
            std::fs::write(path, b"").unwrap();
        }
        assert_eq!(
            stored_files(dir.path(), "samples", &BTreeSet::from([1, 3])).unwrap(),
            vec![
                a.join("seg-000000000001.parquet"),
                b.join("seg-000000000003.parquet")
            ]
        );
        assert!(stored_files(dir.path(), "samples", &BTreeSet::new())
            .unwrap()
            .is_empty());
        // A table with no directory yet.
        assert!(stored_files(dir.path(), "traces", &BTreeSet::from([1]))
            .unwrap()
            .is_empty());
    }
}
