//! SQL over a store on an embedded DataFusion: `jsprof query` and the canned `jsprof top`.
//!
//! Each table is registered as the union of what is still only in the write-ahead log
//! (segments not compacted yet, read into memory through the same row builder compaction
//! uses) and of its Parquet files, listed after the log is read and fixed then: the files
//! of the segments committed by then, but those read from the log ([`crate::tables`]). A
//! segment is read once, from one or the other, whatever compaction does while the context
//! is used; none acknowledged before the context was made is missed.
//!
//! With `--ballista df://HOST:PORT` ([`Engine::Ballista`]) the same SQL runs on a Ballista
//! cluster over the Parquet files only (see [`crate::ballista`]).

use std::collections::BTreeSet;
use std::sync::Arc;

use datafusion::datasource::MemTable;
use datafusion::prelude::{SessionConfig, SessionContext};

pub use crate::tables::{project_filter, session_config, stored_segments, stored_table};

use crate::store::{self, Known, Rows, Store, TABLES};

/// Where a query runs.
#[derive(Debug, Clone, Copy, Default)]
pub enum Engine<'a> {
    /// In this process, over the Parquet files and the write-ahead log.
    #[default]
    Embedded,
    /// On the Ballista cluster whose scheduler is at this `df://HOST:PORT`, over the
    /// Parquet files.
    Ballista(&'a str),
}

/// A context on `engine` with the store's tables (`traces`, `samples`, `stacks`,
/// `stack_frames`, `frames`, `events`), limited to `project` if given.
pub async fn context_on(
    engine: Engine<'_>,
    store: &Store,
    project: Option<&str>,
) -> Result<SessionContext, String> {
    match engine {
        Engine::Embedded => context(store, project).await,
        Engine::Ballista(url) => crate::ballista::context(url, store, project).await,
    }
}

/// An embedded DataFusion context with the store's tables (`traces`, `samples`, `stacks`,
/// `stack_frames`, `frames`, `events`), limited to `project` if given. `traces` is a view
/// that resolves each trace's page ([`crate::tables::TRACES_VIEW`]); its stored rows are
/// `traces_base`.
pub async fn context(store: &Store, project: Option<&str>) -> Result<SessionContext, String> {
    store.check()?;
    let config = crate::symbols::with_symbols(SessionConfig::new(), store, project);
    let ctx = SessionContext::new_with_config(session_config(config));
    crate::tables::register_objects(&ctx, store);
    // What is still only in the log.
    let mut known = Known::default();
    let mut rows = Rows::default();
    let mut from_log = BTreeSet::new();
    crate::tables::for_each_log_segment(store, |n, records| {
        from_log.insert(n);
        let mut index = 0;
        for r in &records {
            rows.add(n, &mut index, r, &mut known);
        }
    })?;
    // Then the Parquet files, of the segments not read above.
    let segments = stored_segments(store, &from_log)?;
    let mut log: std::collections::HashMap<&str, Vec<arrow::array::RecordBatch>> =
        std::collections::HashMap::new();
    for (table, _, batch) in rows.batches() {
        log.entry(table).or_default().push(batch);
    }
    for table in TABLES {
        ctx.register_table(
            format!("{table}_stored"),
            stored_table(store, table, &segments)?,
        )
        .map_err(|e| e.to_string())?;
        let log_rows = log.remove(table).unwrap_or_default();
        let log_empty = log_rows.iter().all(|b| b.num_rows() == 0);
        let mem =
            MemTable::try_new(store::schema(table), vec![log_rows]).map_err(|e| e.to_string())?;
        ctx.register_table(format!("{table}_log"), Arc::new(mem))
            .map_err(|e| e.to_string())?;
        let union = if let Some(key) = shared_key(table) {
            // Frames and stacks are written once per store (compaction knows the stored
            // ids), so the stored rows are distinct; the log's rows were built without
            // the store's ids, so a row of the log may also be stored: those are left out.
            // Not a DISTINCT over both, which would hash every stored row at each query.
            if log_empty {
                format!("SELECT * FROM {table}_stored")
            } else {
                let same: Vec<String> = key.iter().map(|k| format!("s.{k} = l.{k}")).collect();
                format!(
                    "SELECT * FROM {table}_stored UNION ALL
                     SELECT * FROM {table}_log l
                     WHERE NOT EXISTS (SELECT 1 FROM {table}_stored s WHERE {})",
                    same.join(" AND ")
                )
            }
        } else {
            let filter = project_filter(table, project).unwrap_or_default();
            format!(
                "SELECT * FROM {table}_stored{filter} UNION ALL SELECT * FROM {table}_log{filter}"
            )
        };
        let view = ctx.sql(&union).await.map_err(|e| e.to_string())?;
        ctx.register_table(crate::tables::base_name(table), view.into_view())
            .map_err(|e| e.to_string())?;
    }
    crate::tables::register_traces_view(&ctx).await?;
    Ok(ctx)
}

/// The columns that identify a row of a table shared by the projects, written once per
/// store (frames, stacks and stack_frames: their ids are hashes of their contents); None
/// for the others.
fn shared_key(table: &str) -> Option<&'static [&'static str]> {
    match table {
        "frames" => Some(&["frame_id"]),
        "stacks" => Some(&["stack_id"]),
        "stack_frames" => Some(&["stack_id", "frame_id"]),
        _ => None,
    }
}

/// Runs `sql` on `engine`: its result's batches.
pub async fn batches_on(
    engine: Engine<'_>,
    store: &Store,
    project: Option<&str>,
    sql: &str,
) -> Result<Vec<arrow::array::RecordBatch>, String> {
    let ctx = context_on(engine, store, project).await?;
    if mentions_frames_mapped(sql) {
        let distributed = matches!(engine, Engine::Ballista(_));
        crate::symbols::register_frames_mapped(&ctx, distributed).await?;
    }
    let df = ctx.sql(sql).await.map_err(|e| e.to_string())?;
    df.collect().await.map_err(|e| e.to_string())
}

/// Whether `sql` reads `frames_mapped` (the frames through the uploaded source maps,
/// [`crate::symbols::register_frames_mapped`]), made only for a query that does.
fn mentions_frames_mapped(sql: &str) -> bool {
    sql.to_ascii_lowercase().contains("frames_mapped")
}

/// Runs `sql` on `engine` and renders the result as a table.
pub async fn run_on(
    engine: Engine<'_>,
    store: &Store,
    project: Option<&str>,
    sql: &str,
) -> Result<String, String> {
    render(&batches_on(engine, store, project, sql).await?)
}

pub fn render(batches: &[arrow::array::RecordBatch]) -> Result<String, String> {
    arrow::util::pretty::pretty_format_batches(batches)
        .map(|t| t.to_string())
        .map_err(|e| e.to_string())
}

/// `jsprof top`'s SQL: one aggregation with `flame`, `diff` and the page (aggregate.rs).
pub use crate::aggregate::{top_sql, TopFilter};

/// `jsprof top` on `engine`, its frames mapped through the store's uploaded source maps.
pub async fn top_on(
    engine: Engine<'_>,
    store: &Store,
    project: Option<&str>,
    f: &TopFilter,
) -> Result<String, String> {
    let (batches, _) = top_mapped(engine, store, project, f, None).await?;
    render(&batches)
}

/// `jsprof top`'s rows on `engine`, each frame mapped through the store's uploaded source
/// maps (symbols.rs), else, with `fetch` (`--source-maps`), through a map fetched under its
/// policy; and what could not be used, a line each.
pub async fn top_mapped(
    engine: Engine<'_>,
    store: &Store,
    project: Option<&str>,
    f: &TopFilter,
    fetch: Option<&mut crate::sourcemaps::SourceMaps>,
) -> Result<(Vec<arrow::array::RecordBatch>, Vec<String>), String> {
    let ctx = context_on(engine, store, project).await?;
    let df = ctx.sql(&top_sql(f)).await.map_err(|e| e.to_string())?;
    let mut batches = df.collect().await.map_err(|e| e.to_string())?;
    let uploaded = crate::symbols::resolver(&ctx).await?;
    let release = f.release.as_deref();
    let mut warnings = Vec::new();
    if let Some(maps) = fetch {
        let with = uploaded.as_deref().map(|u| (u, release));
        batches = crate::sourcemaps::map_rows(batches, maps, with).await?;
        warnings.extend(maps.warnings().iter().cloned());
    } else if let Some(u) = &uploaded {
        batches = crate::symbols::map_batches(batches, |frame| u.map(release, frame))?;
    }
    warnings.extend(uploaded.iter().flat_map(|u| u.warnings()));
    Ok((batches, warnings))
}
