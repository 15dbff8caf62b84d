//! The collector's settings: its options and prefs (`jsprof collect --pref NAME=VALUE`).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::objects::Objects;
use crate::regressions;
use crate::store::Store;
use crate::wal::Rotation;

/// The collector's settings (prefs and options).
#[derive(Debug, Clone)]
pub struct Config {
    /// The store's directory: the log, and the tables unless `objects` holds them.
    pub store: PathBuf,
    /// `--store s3://BUCKET/PREFIX`: the tables' object store (objects.rs); `store` is then
    /// `--data-dir`, the log's.
    pub objects: Option<Arc<Objects>>,
    /// `collector.max_body_bytes`: the largest body, on the wire and once decompressed.
    pub max_body_bytes: usize,
    /// `collector.queue`: requests that may wait for a commit before 429.
    pub queue: usize,
    /// `collector.queue_bytes`: the bytes of log records that may wait for a commit before
    /// 429 (with `queue`, what bounds the queue's memory).
    pub queue_bytes: usize,
    /// `collector.allowed_origins`: the origins answered with CORS; `*` for any.
    pub allowed_origins: Vec<String>,
    /// Ingest keys: key → project. Empty: one project, `default`, takes traces without key.
    pub keys: HashMap<String, String>,
    /// Read keys (`--read-key`): key → project, for the page at `/` and its API (web.rs).
    pub read_keys: HashMap<String, String>,
    /// Upload keys (`--upload-key`): key → project, for `POST /v1/sourcemaps` (symbols.rs).
    /// Secret, unlike ingest keys (which pages carry); none: uploads are refused.
    pub upload_keys: HashMap<String, String>,
    /// `collector.max_map_bytes`: the largest source map upload (64 MiB).
    pub max_map_bytes: usize,
    /// `collector.body_timeout_ms`: how long a client may take to send its body.
    pub body_timeout: Duration,
    pub rotation: Rotation,
    /// `collector.commit_interval_ms`: the least time between two group commits (0).
    pub commit_interval: Duration,
    /// `collector.retention_days`: day partitions older than this are removed
    /// (retention.rs); 0 keeps everything.
    pub retention_days: u32,
    /// `collector.min_free_bytes`: below this free on the store's file system, what would
    /// be logged is refused with 507 (space.rs); 0 never refuses.
    pub min_free_bytes: u64,
    /// The time (ms since the epoch) of `received` and of retention.
    pub clock: Clock,
    /// `collector.regressions.min_samples`, `collector.regressions.alpha`: what the page's
    /// `/api/regressions` compares.
    pub regressions: regressions::Settings,
}

/// What tells the collector the time, in ms since the epoch: the system's, or a test's.
#[derive(Clone)]
pub struct Clock(Arc<dyn Fn() -> f64 + Send + Sync>);

impl Clock {
    pub fn system() -> Clock {
        Clock(Arc::new(|| {
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0.0, |d| d.as_secs_f64() * 1000.0)
        }))
    }

    /// A clock that `now` reads.
    pub fn from_fn(now: impl Fn() -> f64 + Send + Sync + 'static) -> Clock {
        Clock(Arc::new(now))
    }

    pub fn now_ms(&self) -> f64 {
        (self.0)()
    }
}

impl std::fmt::Debug for Clock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Clock({})", self.now_ms())
    }
}

impl Config {
    /// The store: the log in `store`, the tables there or in `objects`.
    pub fn location(&self) -> Store {
        Store {
            dir: Some(self.store.clone()),
            objects: self.objects.clone(),
        }
    }

    pub fn new(store: PathBuf) -> Config {
        Config {
            store,
            objects: None,
            max_body_bytes: 10 << 20,
            queue: 4096,
            queue_bytes: 256 << 20,
            allowed_origins: vec!["*".into()],
            keys: HashMap::new(),
            read_keys: HashMap::new(),
            upload_keys: HashMap::new(),
            max_map_bytes: 64 << 20,
            body_timeout: Duration::from_secs(10),
            rotation: Rotation {
                max_bytes: 64 << 20,
                max_age: Duration::from_secs(5),
            },
            commit_interval: Duration::ZERO,
            retention_days: 0,
            min_free_bytes: 256 << 20,
            clock: Clock::system(),
            regressions: regressions::Settings::default(),
        }
    }
}
