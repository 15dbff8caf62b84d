//! Ballista mode: `jsprof query|top --ballista df://HOST:PORT` plans the same SQL on the
//! client and runs it on an Apache Ballista cluster, and `jsprof-collector
//! ballista-scheduler|ballista-executor|ballista-status` run and watch such a cluster
//! built from the `ballista_scheduler` and `ballista_executor` library crates, on the same
//! DataFusion as the embedded mode (one DataFusion in the build).
//!
//! The executors (and the scheduler, which reads the files' metadata when it plans) read
//! the store's Parquet files at the paths the client lists, so every process of the cluster
//! must see the store at that path; or, for a store in an object store (`--store
//! s3://BUCKET/PREFIX`, objects.rs), at their `s3://` URLs, through the object store each
//! process makes from its own environment (the `AWS_*` variables: [`Registry`]). The client lists them when it makes the context, the
//! files of committed segments only (`tables::stored_segments`, with no segment read from
//! the log), so a compaction half done is never read. What is still only in the
//! write-ahead log is an in-memory table in embedded mode; a plan holding one cannot be
//! sent to a cluster, so Ballista mode reads the compacted Parquet files only and says on
//! stderr how many traces it left out.
//!
//! Uploaded source maps apply as in embedded mode: the context carries the store's maps
//! (`symbols::with_symbols`), and the client maps the frames of the rows the cluster
//! returns; `frames_mapped` sends the mapped frames in the plan (`VALUES`).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ballista::prelude::{SessionConfigExt, SessionContextExt};
use ballista_executor::executor_process::{start_executor_process, ExecutorProcessConfig};
use ballista_scheduler::cluster::BallistaCluster;
use ballista_scheduler::config::SchedulerConfig;
use ballista_scheduler::scheduler_process::start_server;
use bytes::Bytes;
use datafusion::execution::runtime_env::RuntimeEnvBuilder;
use datafusion::execution::SessionStateBuilder;
use datafusion::prelude::SessionContext;
use http_body_util::{BodyExt, Empty};

use crate::objects::Registry;
use crate::store::{Store, TABLES};
use crate::tables;

/// A scheduler's address from `df://HOST:PORT`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scheduler {
    pub host: String,
    pub port: u16,
}

impl Scheduler {
    /// Parses `df://HOST:PORT` (the port is required: a cluster's scheduler is named in
    /// full, not guessed).
    pub fn parse(url: &str) -> Result<Scheduler, String> {
        let bad = |why: &str| format!("{url}: {why}; expected df://HOST:PORT");
        let rest = url
            .strip_prefix("df://")
            .ok_or_else(|| bad("not a df:// URL"))?;
        let rest = rest.strip_suffix('/').unwrap_or(rest);
        let (host, port) = rest.rsplit_once(':').ok_or_else(|| bad("no port"))?;
        let host = host
            .strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .unwrap_or(host);
        if host.is_empty() || host.contains(['/', '@', '?', '#', ' ']) {
            return Err(bad("no host"));
        }
        let port = port
            .parse::<u16>()
            .ok()
            .filter(|p| *p != 0)
            .ok_or_else(|| bad("the port is not a number from 1 to 65535"))?;
        Ok(Scheduler {
            host: host.to_owned(),
            port,
        })
    }

    fn authority(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }

    fn url(&self) -> String {
        format!("df://{}", self.authority())
    }

    /// The executors the scheduler knows (its REST API, `GET /api/executors`).
    pub async fn executors(&self) -> Result<usize, String> {
        let body = self.get("/api/executors").await?;
        let list: Vec<serde_json::Value> = serde_json::from_slice(&body).map_err(|e| {
            format!(
                "{}: /api/executors is not a list of executors ({e})",
                self.url()
            )
        })?;
        Ok(list.len())
    }

    async fn get(&self, path: &str) -> Result<Bytes, String> {
        let unreachable = |e: &dyn std::fmt::Display| {
            format!("cannot reach the Ballista scheduler at {}: {e}", self.url())
        };
        let authority = self.authority();
        let stream = tokio::time::timeout(
            Duration::from_secs(10),
            tokio::net::TcpStream::connect(&authority),
        )
        .await
        .map_err(|_| unreachable(&"no answer in 10 s"))?
        .map_err(|e| unreachable(&e))?;
        let (mut sender, conn) =
            hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
                .await
                .map_err(|e| unreachable(&e))?;
        tokio::spawn(conn);
        let request = hyper::Request::get(path)
            .header(hyper::header::HOST, &authority)
            .body(Empty::<Bytes>::new())
            .map_err(|e| e.to_string())?;
        let answer = tokio::time::timeout(Duration::from_secs(10), async {
            let response = sender.send_request(request).await?;
            let status = response.status();
            let body = response.into_body().collect().await?.to_bytes();
            Ok::<_, hyper::Error>((status, body))
        })
        .await
        .map_err(|_| unreachable(&"no answer in 10 s"))?
        .map_err(|e| unreachable(&e))?;
        match answer {
            (status, body) if status.is_success() => Ok(body),
            (status, _) => Err(format!(
                "{}: GET {path} answered {status} (is this a Ballista scheduler with its REST API?)",
                self.url()
            )),
        }
    }

    /// Waits until at least `n` executors are registered, polling every 100 ms, for at
    /// most `timeout`. The last error says why not.
    pub async fn wait_for_executors(&self, n: usize, timeout: Duration) -> Result<usize, String> {
        let start = Instant::now();
        loop {
            let last = match self.executors().await {
                Ok(k) if k >= n => return Ok(k),
                Ok(k) => format!("{} has {k} executor(s), {n} wanted", self.url()),
                Err(e) => e,
            };
            if start.elapsed() >= timeout {
                return Err(format!("after {} s: {last}", timeout.as_secs()));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

/// The traces of `store` that are only in the write-ahead log (in segments not compacted
/// yet), which Ballista mode leaves out.
pub fn traces_only_in_log(store: &Store) -> Result<usize, String> {
    let mut n = 0;
    tables::for_each_log_segment(store, |_, records| {
        n += records.iter().map(|r| r.traces.len()).sum::<usize>();
    })?;
    Ok(n)
}

/// A context whose queries run on the cluster at `url`, with the store's tables read from
/// their Parquet files: by absolute path, which the cluster's processes must see the store
/// at, or by `s3://` URL, which they read with the credentials of their own environment
/// ([`crate::objects::Registry`]).
pub async fn context(
    url: &str,
    store: &Store,
    project: Option<&str>,
) -> Result<SessionContext, String> {
    let scheduler = Scheduler::parse(url)?;
    store.check()?;
    // Refuse at once, rather than queue a job that no executor would ever run.
    if scheduler.executors().await? == 0 {
        return Err(format!(
            "the Ballista scheduler at {} has no executors",
            scheduler.url()
        ));
    }
    let mut store = store.clone();
    if let Some(dir) = &store.dir {
        store.dir = Some(std::path::absolute(dir).map_err(|e| format!("{}: {e}", dir.display()))?);
    }
    let left_out = traces_only_in_log(&store)?;
    if left_out > 0 {
        eprintln!(
            "jsprof: --ballista reads the compacted Parquet files only: {left_out} trace(s) still only in the write-ahead log are left out (the collector compacts a segment once it is sealed, after collector.segment_ms)"
        );
    }
    let state = SessionStateBuilder::new()
        .with_default_features()
        .with_config(tables::session_config(crate::symbols::with_symbols(
            datafusion::prelude::SessionConfig::new_with_ballista(),
            &store,
            project,
        )))
        .build();
    let ctx = SessionContext::remote_with_state(&scheduler.url(), state)
        .await
        .map_err(|e| e.to_string())?;
    tables::register_objects(&ctx, &store);
    // Nothing is read from the log: every committed segment's files.
    let segments = tables::stored_segments(&store, &Default::default())?;
    for table in TABLES {
        let stored = tables::stored_table(&store, table, &segments)?;
        let name = tables::base_name(table);
        match tables::project_filter(table, project) {
            None => ctx.register_table(name, stored),
            Some(filter) => {
                ctx.register_table(format!("{table}_stored"), stored)
                    .map_err(|e| e.to_string())?;
                let view = ctx
                    .sql(&format!("SELECT * FROM {table}_stored{filter}"))
                    .await
                    .map_err(|e| e.to_string())?;
                ctx.register_table(name, view.into_view())
            }
        }
        .map_err(|e| e.to_string())?;
    }
    tables::register_traces_view(&ctx).await?;
    Ok(ctx)
}

/// `jsprof-collector ballista-scheduler`: a scheduler on `bind` (gRPC and its REST API on
/// the one port), push-staged, its state in memory. Runs until the process ends.
pub async fn serve_scheduler(
    bind: SocketAddr,
    external_host: Option<String>,
) -> Result<(), String> {
    // Bind once first, for a readable error when the port is taken (the server binds again).
    drop(std::net::TcpListener::bind(bind).map_err(|e| format!("cannot listen on {bind}: {e}"))?);
    let mut config = SchedulerConfig::default()
        .with_hostname(external_host.unwrap_or_else(|| bind.ip().to_string()))
        .with_port(bind.port());
    config.bind_host = bind.ip().to_string();
    // Ballista's session with the object stores of this process's environment: the
    // scheduler reads the Parquet files' footers when it plans.
    let registry = Registry::new();
    config.override_session_builder = Some(Arc::new(move |session| {
        let state = ballista_core::utils::default_session_builder(session)?;
        let runtime = RuntimeEnvBuilder::new()
            .with_object_store_registry(registry.clone())
            .build()?;
        Ok(SessionStateBuilder::new_from_existing(state)
            .with_runtime_env(Arc::new(runtime))
            .build())
    }));
    let cluster = BallistaCluster::new_from_config(&config)
        .await
        .map_err(|e| e.to_string())?;
    println!("jsprof: Ballista scheduler on df://{bind}");
    start_server(cluster, bind, Arc::new(config))
        .await
        .map_err(|e| format!("the Ballista scheduler stopped: {e}"))
}

/// Where and how an executor runs.
#[derive(Debug, Clone)]
pub struct ExecutorOptions {
    pub scheduler: Scheduler,
    /// Its Arrow Flight service (shuffle and results), advertised to the cluster.
    pub bind: SocketAddr,
    /// Its gRPC service (tasks pushed by the scheduler).
    pub grpc_port: u16,
    /// Host name the others reach it by (default: the address the scheduler sees).
    pub external_host: Option<String>,
    /// Shuffle files (default: a directory of its own under the system's temp dir).
    pub work_dir: Option<PathBuf>,
    /// Tasks at once (0: one per core).
    pub concurrent_tasks: usize,
}

/// `jsprof-collector ballista-executor`: an executor registered with the scheduler. Runs
/// until SIGTERM or Ctrl-C, which it reports to the scheduler before it ends.
pub async fn serve_executor(o: ExecutorOptions) -> Result<(), String> {
    for port in [o.bind.port(), o.grpc_port] {
        let addr = SocketAddr::new(o.bind.ip(), port);
        drop(
            std::net::TcpListener::bind(addr)
                .map_err(|e| format!("cannot listen on {addr}: {e}"))?,
        );
    }
    let work_dir = match o.work_dir {
        Some(d) => d,
        None => std::env::temp_dir().join(format!(
            "jsprof-ballista-executor-{}-{}",
            o.bind.port(),
            std::process::id()
        )),
    };
    std::fs::create_dir_all(&work_dir).map_err(|e| format!("{}: {e}", work_dir.display()))?;
    let work_dir = work_dir
        .to_str()
        .ok_or_else(|| format!("{}: not UTF-8", work_dir.display()))?
        .to_owned();
    // Ballista's runtime (its temporary files in the work dir) with the object stores of
    // this process's environment, one registry for every task's runtime.
    let registry = Registry::new();
    let temp_dir = work_dir.clone();
    let runtime: ballista_core::RuntimeProducer = Arc::new(move |_| {
        Ok(Arc::new(
            RuntimeEnvBuilder::new()
                .with_temp_file_path(temp_dir.clone())
                .with_object_store_registry(registry.clone())
                .build()?,
        ))
    });
    let config = ExecutorProcessConfig {
        bind_host: o.bind.ip().to_string(),
        external_host: o.external_host,
        port: o.bind.port(),
        grpc_port: o.grpc_port,
        scheduler_host: o.scheduler.host.clone(),
        scheduler_port: o.scheduler.port,
        concurrent_tasks: o.concurrent_tasks,
        work_dir: Some(work_dir),
        // Shuffle files of jobs an hour old are removed every ten minutes.
        job_data_ttl_seconds: 3600,
        job_data_clean_up_interval_seconds: 600,
        override_runtime_producer: Some(runtime),
        ..ExecutorProcessConfig::default()
    };
    println!(
        "jsprof: Ballista executor on {} (gRPC port {}), scheduler {}",
        o.bind,
        o.grpc_port,
        o.scheduler.url()
    );
    start_executor_process(Arc::new(config))
        .await
        .map_err(|e| format!("the Ballista executor stopped: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn df_urls() {
        let s = Scheduler::parse("df://sched.internal:50050").unwrap();
        assert_eq!((s.host.as_str(), s.port), ("sched.internal", 50050));
        assert_eq!(s.url(), "df://sched.internal:50050");
        let s = Scheduler::parse("df://[::1]:7/").unwrap();
        assert_eq!((s.host.as_str(), s.port), ("::1", 7));
        assert_eq!(s.url(), "df://[::1]:7");
        for (bad, why) in [
            ("http://h:1", "not a df:// URL"),
            ("df://h", "no port"),
            ("df://:1", "no host"),
            ("df://h:0", "1 to 65535"),
            ("df://h:70000", "1 to 65535"),
            ("df://h:x", "1 to 65535"),
            ("df://u@h:1", "no host"),
            ("df://h/p:1", "no host"),
        ] {
            let e = Scheduler::parse(bad).unwrap_err();
            assert!(
                e.contains(why) && e.contains("df://HOST:PORT"),
                "{bad}: {e}"
            );
        }
    }
}
