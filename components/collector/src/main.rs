//! `jsprof-collector collect|query|top|flame|diff|regressions|sourcemaps`, which `jsprof
//! collect|query|top|flame|diff|regressions|sourcemaps` runs (the shell finds this binary
//! beside itself).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use jsprof_collector::aggregate::During;
use jsprof_collector::ballista::{self, ExecutorOptions, Scheduler};
use jsprof_collector::flame::Output;
use jsprof_collector::query::{self, Engine, TopFilter};
use jsprof_collector::server::{self, Config};
use jsprof_collector::store::Store;
use jsprof_collector::{aggregate, diff, regressions, sourcemaps, symbols};

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
        /// DIR (the log and the tables), or s3://BUCKET/PREFIX: the tables in an
        /// S3-compatible object store, the log in --data-dir (credentials and endpoint from
        /// AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION, AWS_ENDPOINT_URL,
        /// AWS_ALLOW_HTTP)
        #[arg(long)]
        store: String,
        /// With --store s3://…: the local directory of the log (every upload is fsynced
        /// there before it is acknowledged, and compacted into the object store)
        #[arg(long = "data-dir")]
        data_dir: Option<PathBuf>,
        /// PROJECT=KEY: an ingest key (jsprof key, Sentry DSN public key, Datadog client
        /// token) for a project (repeatable). None: one project, `default`, without key.
        #[arg(long = "key")]
        keys: Vec<String>,
        /// PROJECT=KEY: a read key for the page at `/` and its API (repeatable); the key
        /// shows its project only
        #[arg(long = "read-key")]
        read_keys: Vec<String>,
        /// PROJECT=KEY: a key for `jsprof sourcemaps upload` (POST /v1/sourcemaps) to the
        /// project (repeatable; secret, unlike ingest keys). None: uploads are refused
        #[arg(long = "upload-key")]
        upload_keys: Vec<String>,
        /// NAME=VALUE: collector.max_body_bytes (10485760), collector.queue (4096),
        /// collector.queue_bytes (268435456: of log records waiting for their fsync),
        /// collector.allowed_origins (`*`, or origins separated by commas),
        /// collector.body_timeout_ms (10000), collector.max_map_bytes (67108864: the largest
        /// source map upload), collector.segment_bytes (67108864),
        /// collector.segment_ms (5000), collector.commit_interval_ms (0: the least time
        /// between two fsyncs of the log), collector.retention_days (0: keep all; else UTC
        /// days older are removed), collector.min_free_bytes (268435456: below it free on
        /// the store's file system, uploads are refused with 507), and regressions' prefs
        /// for the page's /api/regressions (see `regressions --help`)
        #[arg(long = "pref")]
        prefs: Vec<String>,
    },
    /// Run SQL over the store (tables traces, samples, stacks, stack_frames, frames)
    Query {
        /// DIR (the log and the tables), or s3://BUCKET/PREFIX: the tables in an
        /// S3-compatible object store, the log in --data-dir (credentials and endpoint from
        /// AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION, AWS_ENDPOINT_URL,
        /// AWS_ALLOW_HTTP)
        #[arg(long)]
        store: String,
        /// With --store s3://…: the collector's --data-dir, whose log (not compacted
        /// yet) is read too
        #[arg(long = "data-dir")]
        data_dir: Option<PathBuf>,
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
        #[command(flatten)]
        filters: Filters,
        #[arg(long)]
        release: Option<String>,
        #[arg(long, default_value_t = 20)]
        limit: usize,
        /// Map frames back to the original sources through the scripts' source maps,
        /// fetched only from the origins of pref sourcemaps.allowed_origins
        #[arg(long = "source-maps")]
        source_maps: bool,
        /// NAME=VALUE: sourcemaps.allowed_origins (none; origins separated by commas),
        /// sourcemaps.allow_private_addresses (false), sourcemaps.max_bytes (16777216),
        /// sourcemaps.timeout_ms (10000)
        #[arg(long = "pref")]
        prefs: Vec<String>,
    },
    /// The flame graph of the samples: FILE.html (the report) or FILE.svg
    Flame {
        #[command(flatten)]
        filters: Filters,
        #[arg(long)]
        release: Option<String>,
        /// FILE.html, FILE.svg (or .folded, .pb.gz)
        #[arg(short = 'o', long = "output")]
        output: PathBuf,
        #[arg(long, default_value = "Field profiles")]
        title: String,
    },
    /// The functions whose share of samples changed from release BASE to release HEAD
    Diff {
        #[command(flatten)]
        filters: Filters,
        #[arg(long)]
        base: String,
        #[arg(long)]
        head: String,
        #[arg(long, default_value_t = 20)]
        limit: usize,
    },
    /// Each release compared with the one before it (by first seen): the functions whose
    /// share of samples went up, Holm-Bonferroni corrected
    Regressions {
        #[command(flatten)]
        filters: Filters,
        /// NAME=VALUE: collector.regressions.min_samples (1000: samples with a stack a
        /// release needs to be compared), collector.regressions.alpha (0.05: the
        /// family-wise error rate of each pair's tests)
        #[arg(long = "pref")]
        prefs: Vec<String>,
        /// Print `{"projects": [...]}`, each project's report as the page's /api/regressions
        /// gives it
        #[arg(long)]
        json: bool,
    },
    /// Source maps of a release, for the frames of every view (`upload`)
    Sourcemaps {
        #[command(subcommand)]
        command: SourcemapsCommand,
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

#[derive(Subcommand, Debug)]
enum SourcemapsCommand {
    /// Upload each map (*.map) of DIR, with the scripts that name it and their debug ids,
    /// to a running `jsprof collect` for release R
    Upload {
        #[arg(long)]
        release: String,
        /// The collector: http://HOST:PORT
        #[arg(long, default_value = "http://127.0.0.1:8080")]
        collector: String,
        /// An upload key of the collector (its --upload-key PROJECT=KEY): the project
        #[arg(long)]
        key: String,
        dir: PathBuf,
    },
}

/// The store and the filters of top, flame and diff.
#[derive(Args, Debug)]
struct Filters {
    /// DIR (the log and the tables), or s3://BUCKET/PREFIX: the tables in an
    /// S3-compatible object store, the log in --data-dir (credentials and endpoint from
    /// AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION, AWS_ENDPOINT_URL,
    /// AWS_ALLOW_HTTP)
    #[arg(long)]
    store: String,
    /// With --store s3://…: the collector's --data-dir, whose log (not compacted yet) is
    /// read too
    #[arg(long = "data-dir")]
    data_dir: Option<PathBuf>,
    /// Only this project's traces and samples
    #[arg(long)]
    project: Option<String>,
    /// Pages whose URL contains this
    #[arg(long)]
    url: Option<String>,
    /// User agents containing this
    #[arg(long = "user-agent")]
    user_agent: Option<String>,
    /// Samples from this time on (ms since the epoch)
    #[arg(long, value_parser = finite)]
    since: Option<f64>,
    /// Samples before this time (ms since the epoch)
    #[arg(long, value_parser = finite)]
    until: Option<f64>,
    /// Only samples whose time falls inside a long task (or long animation frame), a long
    /// animation frame, or a slow interaction of the same trace
    #[arg(long, value_name = "long-task|loaf|interaction", value_parser = During::parse)]
    during: Option<During>,
    /// Run on the Ballista cluster whose scheduler is at df://HOST:PORT (the compacted
    /// Parquet files only)
    #[arg(long, value_name = "df://HOST:PORT")]
    ballista: Option<String>,
}

impl Filters {
    fn store(&self) -> Result<Store, String> {
        Store::open(&self.store, self.data_dir.clone())
    }

    fn engine(&self) -> Engine<'_> {
        engine(self.ballista.as_deref())
    }

    fn filter(&self, release: Option<String>, limit: usize) -> TopFilter {
        TopFilter {
            release,
            url: self.url.clone(),
            user_agent: self.user_agent.clone(),
            since_ms: self.since,
            until_ms: self.until,
            during: self.during,
            limit,
            ..TopFilter::default()
        }
    }
}

fn finite(s: &str) -> Result<f64, String> {
    s.parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
        .ok_or_else(|| format!("{s}: expected a time in ms since the epoch"))
}

fn pairs(flag: &str, items: &[String]) -> Result<Vec<(String, String)>, String> {
    items
        .iter()
        .map(|k| {
            k.split_once('=')
                .map(|(p, k)| (p.to_owned(), k.to_owned()))
                .ok_or_else(|| format!("{flag} {k}: expected PROJECT=KEY"))
        })
        .collect()
}

fn config(
    store: &str,
    data_dir: Option<PathBuf>,
    keys: &[String],
    read_keys: &[String],
    upload_keys: &[String],
    prefs: &[String],
) -> Result<Config, String> {
    let store = Store::open(store, data_dir)?;
    let mut c = Config::new(store.dir.clone().ok_or_else(|| {
        format!(
            "--store {}: the log needs a local directory: --data-dir DIR",
            store.name()
        )
    })?);
    c.objects = store.objects;
    for (project, key) in pairs("--key", keys)? {
        c.keys.insert(key, project);
    }
    for (project, key) in pairs("--read-key", read_keys)? {
        c.read_keys.insert(key, project);
    }
    for (project, key) in pairs("--upload-key", upload_keys)? {
        c.upload_keys.insert(key, project);
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
            "collector.queue_bytes" => c.queue_bytes = num()? as usize,
            "collector.allowed_origins" => {
                c.allowed_origins = value.split(',').map(|o| o.trim().to_owned()).collect()
            }
            "collector.body_timeout_ms" => c.body_timeout = Duration::from_millis(num()?),
            "collector.segment_bytes" => c.rotation.max_bytes = num()?,
            "collector.segment_ms" => c.rotation.max_age = Duration::from_millis(num()?),
            "collector.commit_interval_ms" => c.commit_interval = Duration::from_millis(num()?),
            "collector.retention_days" => {
                c.retention_days = u32::try_from(num()?)
                    .map_err(|_| format!("--pref {name}: {value} days is too many"))?
            }
            "collector.min_free_bytes" => c.min_free_bytes = num()?,
            "collector.max_map_bytes" => c.max_map_bytes = num()? as usize,
            _ if c.regressions.set(name, value)? => {}
            _ => return Err(format!("--pref {name}: no such pref")),
        }
    }
    Ok(c)
}

fn engine(ballista: Option<&str>) -> Engine<'_> {
    ballista.map_or(Engine::Embedded, Engine::Ballista)
}

/// Writes `text` on standard output. A reader that has gone (`… | head`) ends the command
/// quietly, with success, as a shell tool does, instead of `print!`'s panic.
fn write_out(text: &str) -> Result<(), String> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => std::process::exit(0),
        r => r.map_err(|e| format!("standard output: {e}")),
    }
}

/// [`write_out`] of `text` and a newline.
fn print_out(text: impl std::fmt::Display) -> Result<(), String> {
    write_out(&format!("{text}\n"))
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
                data_dir,
                keys,
                read_keys,
                upload_keys,
                prefs,
            } => {
                let config = config(&store, data_dir, &keys, &read_keys, &upload_keys, &prefs)?;
                server::serve(config, listen, |addr| {
                    println!("jsprof: collecting on http://{addr}");
                })
                .await
            }
            Command::Query {
                store,
                data_dir,
                project,
                ballista,
                sql,
            } => {
                let engine = engine(ballista.as_deref());
                let store = Store::open(&store, data_dir)?;
                let out = query::run_on(engine, &store, project.as_deref(), &sql).await?;
                print_out(out)?;
                Ok(())
            }
            Command::Top {
                filters,
                release,
                limit,
                source_maps,
                prefs,
            } => {
                let mut policy = sourcemaps::Policy::default();
                for p in &prefs {
                    let (name, value) = p
                        .split_once('=')
                        .ok_or_else(|| format!("--pref {p}: expected NAME=VALUE"))?;
                    policy.set(name, value)?;
                }
                let f = filters.filter(release, limit);
                // Uploaded maps first (symbols.rs), then, with --source-maps, the fetch.
                let mut fetch = match source_maps {
                    true => Some(sourcemaps::SourceMaps::new(policy)?),
                    false => None,
                };
                let (batches, warnings) = query::top_mapped(
                    filters.engine(),
                    &filters.store()?,
                    filters.project.as_deref(),
                    &f,
                    fetch.as_mut(),
                )
                .await?;
                for w in warnings {
                    eprintln!("jsprof: {w}");
                }
                print_out(query::render(&batches)?)?;
                Ok(())
            }
            Command::Flame {
                filters,
                release,
                output,
                title,
            } => {
                let kind = Output::of(&output)?;
                let ctx =
                    query::context_on(filters.engine(), &filters.store()?, filters.project.as_deref())
                        .await?;
                let f = filters.filter(release, 0);
                let profile = aggregate::profile(&ctx, &f, kind.needs_summary()).await?;
                if profile.sample_count() == 0 {
                    return Err("no samples (with these filters): nothing written".into());
                }
                let bytes = kind.write(&profile, &title)?;
                std::fs::write(&output, bytes)
                    .map_err(|e| format!("{}: {e}", output.display()))?;
                eprintln!(
                    "jsprof: {} samples, {} functions written to {} ({})",
                    profile.sample_count(),
                    profile.frames().len(),
                    output.display(),
                    kind.name()
                );
                Ok(())
            }
            Command::Diff {
                filters,
                base,
                head,
                limit,
            } => {
                let ctx =
                    query::context_on(filters.engine(), &filters.store()?, filters.project.as_deref())
                        .await?;
                let f = filters.filter(None, limit);
                let counts = aggregate::release_counts(&ctx, &f, &[&base, &head]).await?;
                let rows = diff::rows(&counts, &base, &head)?;
                print_out(format!(
                    "base {base}: {} samples with a stack; head {head}: {}; changes in percentage points, 95% intervals (Newcombe-Wilson)",
                    counts.samples.get(&base).copied().unwrap_or(0),
                    counts.samples.get(&head).copied().unwrap_or(0)
                ))?;
                print_out(diff::table(&rows, limit)?)?;
                Ok(())
            }
            Command::Regressions {
                filters,
                prefs,
                json,
            } => {
                let mut settings = regressions::Settings::default();
                for p in &prefs {
                    let (name, value) = p
                        .split_once('=')
                        .ok_or_else(|| format!("--pref {p}: expected NAME=VALUE"))?;
                    if !settings.set(name, value)? {
                        return Err(format!("--pref {name}: no such pref"));
                    }
                }
                let store = filters.store()?;
                let projects = match &filters.project {
                    Some(p) => vec![p.clone()],
                    None => {
                        let ctx = query::context_on(filters.engine(), &store, None).await?;
                        regressions::projects(&ctx).await?
                    }
                };
                if projects.is_empty() {
                    return Err(format!(
                        "{}: no traces: regressions compare a release with the one before it, and need two",
                        filters.store
                    ));
                }
                let f = filters.filter(None, 0);
                let mut reports = Vec::new();
                for project in &projects {
                    let ctx = query::context_on(filters.engine(), &store, Some(project)).await?;
                    reports.push(regressions::report(&ctx, project, &f, settings).await?);
                }
                // A project of one release is no error while another has two.
                if reports.iter().all(|r| r.note.is_some()) {
                    let notes: Vec<&str> = reports.iter().filter_map(|r| r.note.as_deref()).collect();
                    return Err(notes.join("; "));
                }
                if json {
                    print_out(serde_json::json!({ "projects": reports }))?;
                } else {
                    for r in &reports {
                        write_out(&regressions::text(r)?)?;
                    }
                }
                Ok(())
            }
            Command::Sourcemaps {
                command:
                    SourcemapsCommand::Upload {
                        release,
                        collector,
                        key,
                        dir,
                    },
            } => {
                for line in symbols::upload_dir(&collector, &key, &release, &dir).await? {
                    print_out(format!("jsprof: uploaded {line}"))?;
                }
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
                print_out(format!("jsprof: {scheduler}: {n} executor(s)"))?;
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
