//! `jsprof-collector collect|query|top`, which `jsprof collect|query|top` runs (the shell
//! finds this binary beside itself).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};
use jsprof_collector::ballista::{self, ExecutorOptions, Scheduler};
use jsprof_collector::query::{self, Engine, TopFilter};
use jsprof_collector::server::{self, Config};

#[derive(Parser, Debug)]
#[command(
    name = "jsprof",
    about = "Field profiles: collect traces over HTTP, query them with SQL"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Serve the intake (POST /v1/profiles, Datadog's and Sentry's SDK uploads) into DIR
    Collect {
        /// ADDR:PORT to listen on (port 0: any; the bound address is printed)
        #[arg(long, default_value = "127.0.0.1:8080")]
        listen: std::net::SocketAddr,
        #[arg(long)]
        store: PathBuf,
        /// PROJECT=KEY: an ingest key (jsprof key, Sentry DSN public key, Datadog client
        /// token) for a project (repeatable). None: one project, `default`, without key.
        #[arg(long = "key")]
        keys: Vec<String>,
        /// NAME=VALUE: collector.max_body_bytes (10485760), collector.queue (4096),
        /// collector.allowed_origins (`*`, or origins separated by commas),
        /// collector.body_timeout_ms (10000), collector.segment_bytes (67108864),
        /// collector.segment_ms (5000)
        #[arg(long = "pref")]
        prefs: Vec<String>,
    },
    /// Run SQL over the store (tables traces, samples, stacks, stack_frames, frames)
    Query {
        #[arg(long)]
        store: PathBuf,
        /// Only this project's traces and samples
        #[arg(long)]
        project: Option<String>,
        /// Run on the Ballista cluster whose scheduler is at df://HOST:PORT (the compacted
        /// Parquet files only)
        #[arg(long, value_name = "df://HOST:PORT")]
        ballista: Option<String>,
        sql: String,
    },
    /// Self and total time by function
    Top {
        #[arg(long)]
        store: PathBuf,
        #[arg(long)]
        project: Option<String>,
        #[arg(long)]
        release: Option<String>,
        /// Pages whose URL contains this
        #[arg(long)]
        url: Option<String>,
        /// User agents containing this
        #[arg(long = "user-agent")]
        user_agent: Option<String>,
        /// Samples from this time on (ms since the epoch)
        #[arg(long)]
        since: Option<f64>,
        /// Samples before this time (ms since the epoch)
        #[arg(long)]
        until: Option<f64>,
        #[arg(long, default_value_t = 20)]
        limit: usize,
        /// Run on the Ballista cluster whose scheduler is at df://HOST:PORT (the compacted
        /// Parquet files only)
        #[arg(long, value_name = "df://HOST:PORT")]
        ballista: Option<String>,
    },
    /// A Ballista scheduler (gRPC and REST on one port) for `--ballista`
    BallistaScheduler {
        #[arg(long, default_value = "127.0.0.1:50050")]
        bind: std::net::SocketAddr,
        /// The host name executors and clients reach it by (default: the bind address)
        #[arg(long = "external-host")]
        external_host: Option<String>,
    },
    /// A Ballista executor, registered with the scheduler at df://HOST:PORT
    BallistaExecutor {
        #[arg(long, value_name = "df://HOST:PORT")]
        scheduler: String,
        /// ADDR:PORT of its Arrow Flight service (results and shuffles)
        #[arg(long, default_value = "127.0.0.1:50051")]
        bind: std::net::SocketAddr,
        /// Port of its gRPC service, on the same address (default: the Flight port + 1)
        #[arg(long = "grpc-port")]
        grpc_port: Option<u16>,
        /// The host name the others reach it by (default: the address the scheduler sees)
        #[arg(long = "external-host")]
        external_host: Option<String>,
        /// Its shuffle files (default: a directory of its own in the temp dir)
        #[arg(long = "work-dir")]
        work_dir: Option<PathBuf>,
        /// Tasks at once (0: one per core)
        #[arg(long = "concurrent-tasks", default_value_t = 0)]
        concurrent_tasks: usize,
    },
    /// How many executors the scheduler at df://HOST:PORT has
    BallistaStatus {
        #[arg(long, value_name = "df://HOST:PORT")]
        scheduler: String,
        /// Wait until this many are registered
        #[arg(long = "wait-executors", default_value_t = 0)]
        wait_executors: usize,
        /// Seconds to wait at most
        #[arg(long, default_value_t = 120)]
        timeout: u64,
    },
}

fn config(store: PathBuf, keys: &[String], prefs: &[String]) -> Result<Config, String> {
    let mut c = Config::new(store);
    for k in keys {
        let (project, key) = k
            .split_once('=')
            .ok_or_else(|| format!("--key {k}: expected PROJECT=KEY"))?;
        c.keys.insert(key.to_owned(), project.to_owned());
    }
    for p in prefs {
        let (name, value) = p
            .split_once('=')
            .ok_or_else(|| format!("--pref {p}: expected NAME=VALUE"))?;
        let num = || {
            value
                .parse::<u64>()
                .map_err(|_| format!("--pref {name}: {value} is not a whole number"))
        };
        match name {
            "collector.max_body_bytes" => c.max_body_bytes = num()? as usize,
            "collector.queue" => c.queue = (num()? as usize).max(1),
            "collector.allowed_origins" => {
                c.allowed_origins = value.split(',').map(|o| o.trim().to_owned()).collect()
            }
            "collector.body_timeout_ms" => c.body_timeout = Duration::from_millis(num()?),
            "collector.segment_bytes" => c.rotation.max_bytes = num()?,
            "collector.segment_ms" => c.rotation.max_age = Duration::from_millis(num()?),
            _ => return Err(format!("--pref {name}: no such pref")),
        }
    }
    Ok(c)
}

fn engine(ballista: Option<&str>) -> Engine<'_> {
    ballista.map_or(Engine::Embedded, Engine::Ballista)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        // Ballista's own binaries run on 32 MB stacks: plans are planned, encoded and
        // decoded recursively, and a deep query's recursion outgrows the default 2 MB.
        .thread_stack_size(32 << 20)
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("jsprof: cannot start the runtime: {e}");
            return ExitCode::from(70);
        }
    };
    let result = runtime.block_on(async {
        match cli.command {
            Command::Collect {
                listen,
                store,
                keys,
                prefs,
            } => {
                let config = config(store, &keys, &prefs)?;
                server::serve(config, listen, |addr| {
                    println!("jsprof: collecting on http://{addr}");
                })
                .await
            }
            Command::Query {
                store,
                project,
                ballista,
                sql,
            } => {
                let engine = engine(ballista.as_deref());
                let out = query::run_on(engine, &store, project.as_deref(), &sql).await?;
                println!("{out}");
                Ok(())
            }
            Command::Top {
                store,
                project,
                release,
                url,
                user_agent,
                since,
                until,
                limit,
                ballista,
            } => {
                let f = TopFilter {
                    release,
                    url,
                    user_agent,
                    since_ms: since,
                    until_ms: until,
                    limit,
                };
                let engine = engine(ballista.as_deref());
                let out = query::top_on(engine, &store, project.as_deref(), &f).await?;
                println!("{out}");
                Ok(())
            }
            Command::BallistaScheduler {
                bind,
                external_host,
            } => ballista::serve_scheduler(bind, external_host).await,
            Command::BallistaExecutor {
                scheduler,
                bind,
                grpc_port,
                external_host,
                work_dir,
                concurrent_tasks,
            } => {
                let grpc_port = match grpc_port {
                    Some(p) => p,
                    None => bind
                        .port()
                        .checked_add(1)
                        .ok_or("--grpc-port: none after 65535")?,
                };
                ballista::serve_executor(ExecutorOptions {
                    scheduler: Scheduler::parse(&scheduler)?,
                    bind,
                    grpc_port,
                    external_host,
                    work_dir,
                    concurrent_tasks,
                })
                .await
            }
            Command::BallistaStatus {
                scheduler,
                wait_executors,
                timeout,
            } => {
                let s = Scheduler::parse(&scheduler)?;
                let n = s
                    .wait_for_executors(wait_executors, Duration::from_secs(timeout))
                    .await?;
                println!("jsprof: {scheduler}: {n} executor(s)");
                Ok(())
            }
        }
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("jsprof: {e}");
            ExitCode::from(2)
        }
    }
}
