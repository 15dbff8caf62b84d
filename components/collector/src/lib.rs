//! Field profiles (issue 27): an HTTP intake for traces from real users' browsers, a
//! write-ahead log with group commit, compaction into normalised Parquet tables, and SQL
//! over the store on an embedded DataFusion. No SpiderMonkey, no `unsafe`.
//!
//! - [`decode`] (the `jsprof-intake` crate): jsprof's own `POST /v1/profiles`, Datadog's and Sentry's browser SDK
//!   uploads, each into one model ([`model::Ingested`]);
//! - [`wal`]: the log, fsynced before a request is acknowledged; [`record`]: its records;
//! - [`store`]: the Parquet tables the log is compacted into; [`objects`]: those tables in an
//!   S3-compatible object store (`--store s3://BUCKET/PREFIX`);
//! - [`server`]: `jsprof collect` ([`config`]: its settings; [`params`]: query parameters;
//!   [`retention`]: `collector.retention_days`; [`space`]: `collector.min_free_bytes`);
//! - [`query`]: `jsprof query` and `jsprof top`;
//! - [`aggregate`]: the one aggregation of `top`, `flame`, `diff` and the page;
//! - [`batches`]: typed access to query results (a leaf every reader of DataFusion's answers uses);
//! - [`flame`], [`diff`]: `jsprof flame` and `jsprof diff`;
//! - [`regressions`]: `jsprof regressions`, each release against the one before it;
//! - [`web`]: the page at `/` of `jsprof collect`, and its JSON API; [`browse`]: its label
//!   values, groups, trace list and one trace;
//! - [`sourcemaps`]: `--source-maps`, frames mapped back under a fetch policy;
//! - [`symbols`]: uploaded source maps (`jsprof sourcemaps upload`), kept with the store,
//!   and frames mapped through them when read, in every view;
//! - [`ballista`]: the same queries on an Apache Ballista cluster (`--ballista`), and the
//!   scheduler and executor processes of one.

#![forbid(unsafe_code)]

pub use jsprof_intake::{decode, model, record};
pub mod aggregate;
pub mod ballista;
pub mod batches;
pub mod browse;
pub mod config;
pub mod diff;
pub mod flame;
pub mod objects;
pub mod params;
pub mod query;
pub mod regressions;
pub mod retention;
pub mod server;
pub mod sourcemaps;
pub mod space;
pub mod store;
pub mod symbols;
pub mod tables;
pub mod wal;
pub mod web;
