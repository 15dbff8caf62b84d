//! `--store s3://BUCKET/PREFIX` (decision 0060): the Parquet tables in an S3-compatible
//! object store, the write-ahead log on local disk (`--data-dir DIR`).
//!
//! ```text
//! DIR/wal/NNNNNNNNNNNN.wal                         the log, local (fsync is what
//!                                                  acknowledges a request)
//! s3://BUCKET/PREFIX/tables/TABLE/…/seg-N.parquet  the tables, laid out as in DIR/tables
//! ```
//!
//! A table file is uploaded whole, in one PUT: S3 makes an object visible only once all of
//! it is stored, so the temporary name and rename of a local store are not needed. The
//! commit mark (`tables/frames/seg-N.parquet`) is put last, and a log segment is removed
//! only after it: a segment is never gone before all its rows are in the store.
//!
//! The store is made from the process's environment ([`AmazonS3Builder::from_env`]):
//! `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_REGION` or `AWS_DEFAULT_REGION`,
//! `AWS_ENDPOINT_URL` (a server other than AWS's) and `AWS_ALLOW_HTTP=true` (one on plain
//! http). So are a Ballista scheduler's and executors' stores ([`Registry`]): each process
//! has its own credentials, and none travels in a plan.
//!
//! The calls here are blocking (the compactor's thread and the table listings call them):
//! each runs on a runtime of its own ([`block`]), so it may be called from a runtime's
//! thread too.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex, OnceLock};

use bytes::Bytes;
use datafusion::execution::object_store::{DefaultObjectStoreRegistry, ObjectStoreRegistry};
use object_store::aws::AmazonS3Builder;
use object_store::path::Path as Key;
use object_store::{ObjectMeta, ObjectStore, ObjectStoreExt, PutPayload};
use url::Url;

/// Whether `--store`'s value names an object store rather than a directory.
pub fn is_url(store: &str) -> bool {
    store.starts_with("s3://")
}

/// The tables' object store: `s3://BUCKET/PREFIX`.
#[derive(Debug)]
pub struct Objects {
    /// `s3://BUCKET`, what DataFusion finds the store by.
    root: Url,
    /// `PREFIX/tables`.
    tables: Key,
    /// `PREFIX/sourcemaps`: the uploaded source maps, laid out as in a local store's
    /// `sourcemaps/` (symbols.rs).
    maps: Key,
    store: Arc<dyn ObjectStore>,
    /// `s3://BUCKET/PREFIX` as given.
    name: String,
}

impl Objects {
    /// The store at `url` (`s3://BUCKET/PREFIX`), configured from the environment.
    pub fn from_env(url: &str) -> Result<Objects, String> {
        let bad = |why: &dyn std::fmt::Display| format!("--store {url}: {why}");
        let parsed = Url::parse(url).map_err(|e| bad(&e))?;
        if parsed.scheme() != "s3" {
            return Err(bad(&"not an s3:// URL"));
        }
        let bucket = parsed
            .host_str()
            .filter(|b| !b.is_empty())
            .ok_or_else(|| bad(&"no bucket; expected s3://BUCKET/PREFIX"))?;
        let root = Url::parse(&format!("s3://{bucket}")).map_err(|e| bad(&e))?;
        let prefix = Key::from_url_path(parsed.path()).map_err(|e| bad(&e))?;
        let store = s3_from_env(bucket).map_err(|e| bad(&e))?;
        Ok(Objects {
            root,
            tables: prefix.clone().join("tables"),
            maps: prefix.join("sourcemaps"),
            store: Arc::new(store),
            name: url.trim_end_matches('/').to_owned(),
        })
    }

    /// `s3://BUCKET/PREFIX`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// `s3://BUCKET`: the URL to register [`Objects::store`] under with DataFusion.
    pub fn root(&self) -> &Url {
        &self.root
    }

    pub fn store(&self) -> Arc<dyn ObjectStore> {
        Arc::clone(&self.store)
    }

    /// The key of `rel` (`TABLE/day=D/…/seg-N.parquet`): the names of a local store's
    /// `tables/`, as they are (a partition's `%XX` included).
    pub fn key(&self, rel: &std::path::Path) -> Result<Key, String> {
        let rel = rel.to_string_lossy();
        Key::parse(format!("{}/{rel}", self.tables))
            .map_err(|e| format!("{}: {rel}: {e}", self.name))
    }

    /// The key of `rel` (`PROJECT/RELEASE/FILE`, the names of a local store's
    /// `sourcemaps/`, `%XX` included) among the uploaded source maps; `""`: their directory.
    pub fn map_key(&self, rel: &str) -> Result<Key, String> {
        if rel.is_empty() {
            return Ok(self.maps.clone());
        }
        Key::parse(format!("{}/{rel}", self.maps)).map_err(|e| format!("{}: {rel}: {e}", self.name))
    }

    /// The directory of `table`'s objects.
    pub fn table_dir(&self, table: &str) -> Key {
        self.tables.clone().join(table)
    }

    /// The URL DataFusion reads `key` at: `s3://BUCKET/KEY`, each part percent-encoded
    /// (DataFusion decodes the URL's path into the key).
    pub fn url(&self, key: &Key) -> Url {
        let mut url = self.root.clone();
        url.path_segments_mut()
            .expect("an s3:// URL has a path")
            .clear()
            .extend(key.parts().map(|p| p.as_ref().to_owned()));
        url
    }

    /// Puts `bytes` at `key`, whole (one request: the object appears complete or not at
    /// all).
    pub fn put(&self, key: &Key, bytes: Vec<u8>) -> Result<(), String> {
        block(self.store.put(key, PutPayload::from(bytes)))
            .map(|_| ())
            .map_err(|e| self.error(key, e))
    }

    /// Whether `key` exists.
    pub fn exists(&self, key: &Key) -> Result<bool, String> {
        match block(self.store.head(key)) {
            Ok(_) => Ok(true),
            Err(object_store::Error::NotFound { .. }) => Ok(false),
            Err(e) => Err(self.error(key, e)),
        }
    }

    pub fn get(&self, key: &Key) -> Result<Bytes, String> {
        block(async { self.store.get(key).await?.bytes().await }).map_err(|e| self.error(key, e))
    }

    /// The object at `key`, `None` if there is none.
    pub fn get_if_exists(&self, key: &Key) -> Result<Option<Bytes>, String> {
        match block(async { self.store.get(key).await?.bytes().await }) {
            Ok(b) => Ok(Some(b)),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(self.error(key, e)),
        }
    }

    pub fn delete(&self, key: &Key) -> Result<(), String> {
        match block(self.store.delete(key)) {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(self.error(key, e)),
        }
    }

    /// The objects directly under `dir` and the names of the "directories" there (the
    /// common prefixes of the keys below it).
    pub fn list_dir(&self, dir: &Key) -> Result<(Vec<ObjectMeta>, Vec<Key>), String> {
        let list =
            block(self.store.list_with_delimiter(Some(dir))).map_err(|e| self.error(dir, e))?;
        Ok((list.objects, list.common_prefixes))
    }

    /// Every object under `dir`, at any depth.
    pub fn list_all(&self, dir: &Key) -> Result<Vec<ObjectMeta>, String> {
        use futures::TryStreamExt;
        block(self.store.list(Some(dir)).try_collect()).map_err(|e| self.error(dir, e))
    }

    fn error(&self, key: &Key, e: object_store::Error) -> String {
        format!("{}: {key}: {e}", self.root.as_str().trim_end_matches('/'))
    }
}

/// The S3 client of `bucket`, configured from the process's environment (the module's
/// docs): the collector's, a reader's, a Ballista scheduler's or executor's.
fn s3_from_env(bucket: &str) -> object_store::Result<object_store::aws::AmazonS3> {
    AmazonS3Builder::from_env().with_bucket_name(bucket).build()
}

/// The runtime the blocking calls run on: one for the process, so the connections its
/// HTTP client keeps stay usable.
fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("jsprof-objects")
            .enable_all()
            .build()
            .expect("a runtime for the object store")
    })
}

/// Runs `f` to its end on [`runtime`]; from a thread of another runtime, on a thread of
/// its own (a runtime's thread may not block on another runtime).
pub fn block<F>(f: F) -> F::Output
where
    F: Future + Send,
    F::Output: Send,
{
    if tokio::runtime::Handle::try_current().is_err() {
        return runtime().block_on(f);
    }
    std::thread::scope(|s| {
        s.spawn(|| runtime().block_on(f))
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p))
    })
}

/// The object stores of a Ballista scheduler's and executors' sessions: those registered,
/// and for an `s3://BUCKET` URL not registered yet, one made from the process's
/// environment ([`AmazonS3Builder::from_env`]), kept for the next.
#[derive(Debug, Default)]
pub struct Registry {
    inner: DefaultObjectStoreRegistry,
    made: Mutex<HashMap<String, Arc<dyn ObjectStore>>>,
}

impl Registry {
    pub fn new() -> Arc<Registry> {
        Arc::new(Registry::default())
    }
}

impl ObjectStoreRegistry for Registry {
    fn register_store(
        &self,
        url: &Url,
        store: Arc<dyn ObjectStore>,
    ) -> Option<Arc<dyn ObjectStore>> {
        self.inner.register_store(url, store)
    }

    fn deregister_store(&self, url: &Url) -> datafusion::error::Result<Arc<dyn ObjectStore>> {
        self.inner.deregister_store(url)
    }

    fn get_store(&self, url: &Url) -> datafusion::error::Result<Arc<dyn ObjectStore>> {
        let registered = self.inner.get_store(url);
        if registered.is_ok() || url.scheme() != "s3" {
            return registered;
        }
        let bucket = url.host_str().unwrap_or_default().to_owned();
        let mut made = self.made.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(store) = made.get(&bucket) {
            return Ok(Arc::clone(store));
        }
        let store: Arc<dyn ObjectStore> = Arc::new(
            s3_from_env(&bucket)
                .map_err(|e| datafusion::error::DataFusionError::External(Box::new(e)))?,
        );
        made.insert(bucket, Arc::clone(&store));
        Ok(store)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_urls() {
        let o = Objects::from_env("s3://field/prod/eu/").unwrap();
        assert_eq!(o.name(), "s3://field/prod/eu");
        assert_eq!(o.root().as_str(), "s3://field");
        let key = o
            .key(std::path::Path::new(
                "samples/day=2026-11-26/release=1.0%2Bb/seg-000000000001.parquet",
            ))
            .unwrap();
        assert_eq!(
            key.as_ref(),
            "prod/eu/tables/samples/day=2026-11-26/release=1.0%2Bb/seg-000000000001.parquet"
        );
        // DataFusion reads the URL back as the same key.
        let url = o.url(&key);
        assert_eq!(Key::from_url_path(url.path()).unwrap(), key);
        assert_eq!(url.host_str(), Some("field"));
        for bad in ["s3:///x", "file:///tmp/x", "s3://"] {
            assert!(Objects::from_env(bad).is_err(), "{bad}");
        }
    }
}
