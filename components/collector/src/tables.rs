//! The store's tables as DataFusion sees them, for both engines (query.rs, ballista.rs):
//! the session settings, a table's Parquet listing, and the view that limits a table to a
//! project.

use std::path::Path;
use std::sync::Arc;

use datafusion::datasource::file_format::parquet::ParquetFormat;
use datafusion::datasource::listing::{
    ListingOptions, ListingTable, ListingTableConfig, ListingTableUrl,
};
use datafusion::prelude::SessionConfig;

use crate::store;

/// The session settings both engines query with.
pub fn session_config(base: SessionConfig) -> SessionConfig {
    base.with_information_schema(true)
}

/// A table's Parquet files: a listing table over `tables/NAME` (made if missing), read as
/// they are when a query runs.
pub fn stored_table(store_dir: &Path, table: &str) -> Result<Arc<ListingTable>, String> {
    let dir = store::tables_dir(store_dir).join(table);
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let url = ListingTableUrl::parse(format!("{}/", dir.display())).map_err(|e| e.to_string())?;
    let options =
        ListingOptions::new(Arc::new(ParquetFormat::default())).with_file_extension(".parquet");
    let config = ListingTableConfig::new(url)
        .with_listing_options(options)
        .with_schema(store::schema(table));
    ListingTable::try_new(config)
        .map(Arc::new)
        .map_err(|e| e.to_string())
}

/// The `WHERE` that limits `table` to `project` (traces and samples have a project; frames
/// and stacks are shared), if any.
pub fn project_filter(table: &str, project: Option<&str>) -> Option<String> {
    match (table, project) {
        ("traces" | "samples", Some(p)) => {
            Some(format!(" WHERE project = {}", crate::aggregate::quote(p)))
        }
        _ => None,
    }
}
