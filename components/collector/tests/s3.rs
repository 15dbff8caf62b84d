//! `--store s3://BUCKET/PREFIX` (decision 0060) against a real S3-compatible server, s3s-fs
//! (tests/common/s3.rs), each process configured from its environment as a deployment
//! would be: the collector logs to its local `--data-dir` and compacts into Parquet objects
//! on the server; `query` and `top` read them from there, embedded and on a Ballista
//! scheduler and two executors, with the same results as a local store of the same traces;
//! the retention deletes old days' objects; a collector killed before compaction loses no
//! acknowledged trace.

mod common;

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use common::cluster::{ingest, wait_compacted, Cluster};
use common::maps::{maps, post_minified, upload, ORIGINALS};
use common::s3::S3;
use common::{count_of, http, Collector, BIN};

/// `jsprof-collector ARGS` with `env`, which must succeed: its standard output.
fn run(args: &[&str], env: &[(String, String)]) -> String {
    let out: Output = Command::new(BIN)
        .args(args)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stderr.is_empty(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The one number a `SELECT count(*) AS n …` prints.
fn count(table: &str) -> usize {
    usize::try_from(count_of(table)).unwrap()
}

/// The `.parquet` files under `dir`, at any depth.
fn parquet_files(dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| {
            let p = e.path();
            if p.is_dir() {
                parquet_files(&p)
            } else {
                usize::from(p.extension().is_some_and(|x| x == "parquet"))
            }
        })
        .sum()
}

const KEYS: [&str; 4] = ["--key", "shop=k-shop", "--key", "blog=k-blog"];

#[test]
fn the_tables_on_s3_are_read_back_embedded_and_on_ballista() {
    let s3 = S3::start();
    let env = s3.env();
    let url = s3.url("field/eu");
    let url = url.as_str();
    let data = tempfile::tempdir().unwrap();
    let data_dir = data.path().to_str().unwrap();

    // The same traces into a local store and into the object store.
    let local = tempfile::tempdir().unwrap();
    let fast = ["--pref", "collector.segment_ms=50"];
    let c = Collector::start(local.path(), &[&KEYS[..], &fast[..]].concat());
    let traces = ingest(&c);
    wait_compacted(local.path());
    drop(c);
    let args = [
        &["--store", url, "--data-dir", data_dir][..],
        &KEYS[..],
        &fast[..],
    ]
    .concat();
    let c = Collector::start_with(&args, &env);
    assert_eq!(ingest(&c), traces);
    wait_compacted(data.path());

    // Parquet objects on the server, every table's; none on local disk.
    let keys = s3.keys("field/eu");
    for table in [
        "traces/day=",
        "samples/day=",
        "events/day=",
        "stacks/seg-",
        "stack_frames/seg-",
        "frames/seg-",
    ] {
        assert!(
            keys.iter()
                .any(|k| k.starts_with(&format!("field/eu/tables/{table}"))
                    && k.ends_with(".parquet")),
            "no {table} object in {keys:?}"
        );
    }
    assert!(keys.iter().all(|k| k.ends_with(".parquet")), "{keys:?}");
    assert_eq!(parquet_files(data.path()), 0);
    assert!(!data.path().join("tables").exists());

    // Read back from the server alone (no --data-dir): what the local store gives.
    let local_dir = local.path().to_str().unwrap();
    let count_sql = "SELECT count(*) AS n FROM traces";
    assert_eq!(
        count(&run(&["query", "--store", url, count_sql], &env)),
        traces
    );
    let reads: &[&[&str]] = &[
        &["top"],
        &["top", "--release", "1.1.0", "--project", "shop"],
        &["top", "--during", "loaf"],
        &[
            "query",
            "SELECT s.release, fr.name, count(*) AS n FROM samples s
             JOIN stack_frames sf ON sf.stack_id = s.stack_id
             JOIN frames fr ON fr.frame_id = sf.frame_id
             GROUP BY s.release, fr.name ORDER BY s.release, n DESC, fr.name",
        ],
        &[
            "query",
            "SELECT session, project, release, page_url, user_agent, sample_count, day
             FROM traces ORDER BY session",
        ],
    ];
    let with_store = |args: &[&str], store: &[&str]| -> Vec<String> {
        let mut v = vec![args[0].to_owned()];
        v.extend(store.iter().map(|s| s.to_string()));
        v.extend(args[1..].iter().map(|s| s.to_string()));
        v
    };
    let mut embedded = Vec::new();
    for args in reads {
        let want = run(
            &with_store(args, &["--store", local_dir])
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>(),
            &[],
        );
        assert!(want.lines().count() > 4, "{args:?} found nothing: {want}");
        for store in [
            &["--store", url][..],
            &["--store", url, "--data-dir", data_dir][..],
        ] {
            let got = run(
                &with_store(args, store)
                    .iter()
                    .map(String::as_str)
                    .collect::<Vec<_>>(),
                &env,
            );
            assert_eq!(got, want, "{args:?} {store:?}: S3 and local differ");
        }
        embedded.push(want);
    }

    // A Ballista scheduler and two executors, each reading the objects with the
    // credentials of its own environment: the same results.
    let cluster = Cluster::start_with_env(2, &env);
    let jobs = cluster.jobs();
    for (args, want) in reads.iter().zip(&embedded) {
        let mut a = with_store(args, &["--store", url]);
        a.extend(["--ballista".to_owned(), cluster.url.clone()]);
        let got = run(&a.iter().map(String::as_str).collect::<Vec<_>>(), &env);
        assert_eq!(&got, want, "{args:?}: Ballista on S3 and embedded differ");
    }
    assert!(cluster.jobs() - jobs >= reads.len(), "the cluster ran them");
}

/// A release's source maps uploaded to a collector whose tables are on S3 go to the bucket
/// too, so a reader with the bucket alone (no `--data-dir`: another machine, a Ballista
/// cluster) names the original functions, as one with the log's directory does.
#[test]
fn uploaded_maps_go_to_the_bucket_and_readers_of_it_map_with_them() {
    let s3 = S3::start();
    let env = s3.env();
    let url = s3.url("field/maps");
    let url = url.as_str();
    let data = tempfile::tempdir().unwrap();
    let data_dir = data.path().to_str().unwrap();
    let key = "upload-key-0123";
    let c = Collector::start_with(
        &[
            "--store",
            url,
            "--data-dir",
            data_dir,
            "--upload-key",
            &format!("default={key}"),
            "--pref",
            "collector.segment_ms=50",
        ],
        &env,
    );
    let script = "https://shop.example/assets/app.min.js";
    post_minified(c.addr, "1.0", script);
    post_minified(c.addr, "1.0", script);
    let (ok, _, err) = upload(c.addr, key, "1.0", &maps().join("dist"));
    assert!(ok, "{err}");
    wait_compacted(data.path());
    let keys = s3.keys("field/maps/sourcemaps");
    assert!(
        keys.iter()
            .any(|k| k == "field/maps/sourcemaps/default/1.0/index.json"),
        "{keys:?}"
    );
    assert!(keys.iter().any(|k| k.ends_with(".map")), "{keys:?}");

    let top = ["top", "--store", url, "--release", "1.0"];
    let names = |table: &str| -> Vec<String> {
        table
            .lines()
            .skip(3)
            .filter_map(|l| l.split('|').nth(1).map(|n| n.trim().to_owned()))
            .filter(|n| !n.is_empty())
            .collect()
    };
    // From the bucket alone, with the log's directory, and on a Ballista cluster that
    // reads the bucket: the original functions each time.
    let alone = run(&top, &env);
    assert_eq!(names(&alone), ORIGINALS, "{alone}");
    let with_dir = run(&[&top[..], &["--data-dir", data_dir]].concat(), &env);
    assert_eq!(with_dir, alone);
    let cluster = Cluster::start_with_env(1, &env);
    let on_cluster = run(&[&top[..], &["--ballista", &cluster.url]].concat(), &env);
    assert_eq!(on_cluster, alone);
    let mapped = run(
        &[
            "query",
            "--store",
            url,
            "SELECT f.name AS stored, m.name FROM frames f
             JOIN frames_mapped m ON m.frame_id = f.frame_id ORDER BY m.name",
        ],
        &env,
    );
    for (stored, original) in [("c", "computeTotals"), ("e", "formatPrice")] {
        assert!(
            mapped.contains(&format!("| {stored:<6} | {original} ")),
            "{mapped}"
        );
    }
}

/// SIGKILL while segments wait for compaction: what was acknowledged is in the local log,
/// read from there (`--data-dir`), and compacted to the server at the next start.
#[test]
fn a_collector_killed_before_compaction_loses_no_acknowledged_trace() {
    let s3 = S3::start();
    let env = s3.env();
    let url = s3.url("killed");
    let data = tempfile::tempdir().unwrap();
    let data_dir = data.path().to_str().unwrap();
    let store = ["--store", url.as_str(), "--data-dir", data_dir];
    let slow = ["--pref", "collector.segment_ms=3600000"];
    let mut c = Collector::start_with(&[&store[..], &KEYS[..], &slow[..]].concat(), &env);
    let traces = ingest(&c);
    c.kill9();
    assert!(s3.keys("killed").is_empty(), "{:?}", s3.keys("killed"));
    let count_sql = "SELECT count(*) AS n FROM traces";
    assert_eq!(
        count(&run(&["query", "--store", url.as_str(), count_sql], &env)),
        0
    );
    assert_eq!(
        count(&run(
            &[
                "query",
                "--store",
                url.as_str(),
                "--data-dir",
                data_dir,
                count_sql
            ],
            &env
        )),
        traces
    );
    let fast = ["--pref", "collector.segment_ms=50"];
    let _c = Collector::start_with(&[&store[..], &KEYS[..], &fast[..]].concat(), &env);
    wait_compacted(data.path());
    assert!(s3
        .keys("killed")
        .iter()
        .any(|k| k.starts_with("killed/tables/frames/")));
    assert_eq!(
        count(&run(&["query", "--store", url.as_str(), count_sql], &env)),
        traces
    );
}

fn envelope(session: &str, time_origin: f64) -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({
        "trace": common::trace(10),
        "release": "1.0",
        "session": session,
        "timeOrigin": time_origin,
        "entries": [{"entryType": "longtask", "startTime": 60, "duration": 60}],
    }))
    .unwrap()
}

/// `collector.retention_days` deletes a day's objects from the server and keeps today's.
#[test]
fn the_retention_deletes_old_days_from_s3() {
    let s3 = S3::start();
    let env = s3.env();
    let url = s3.url("kept");
    let data = tempfile::tempdir().unwrap();
    let data_dir = data.path().to_str().unwrap();
    let store = ["--store", url.as_str(), "--data-dir", data_dir];
    let c = Collector::start_with(
        &[&store[..], &["--pref", "collector.segment_ms=50"]].concat(),
        &env,
    );
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
        * 1000.0;
    // 2020-01-01 00:00 UTC, and now.
    for (session, time_origin) in [("old", 1_577_836_800_000.0), ("today", now)] {
        let (status, _, body) = http(
            c.addr,
            "POST",
            "/v1/profiles",
            &[],
            &envelope(session, time_origin),
        );
        assert_eq!(status, 202, "{body}");
    }
    wait_compacted(data.path());
    drop(c);
    let old = |keys: &[String]| {
        keys.iter()
            .filter(|k| k.contains("/day=2020-01-01/"))
            .count()
    };
    // traces and samples (and events) of each day.
    assert!(old(&s3.keys("kept")) >= 2, "{:?}", s3.keys("kept"));
    let today = format!("/day={}/", jsprof_collector::store::day(now));

    let _c = Collector::start_with(
        &[&store[..], &["--pref", "collector.retention_days=30"]].concat(),
        &env,
    );
    let deadline = Instant::now() + Duration::from_secs(60);
    while old(&s3.keys("kept")) > 0 {
        assert!(Instant::now() < deadline, "{:?}", s3.keys("kept"));
        std::thread::sleep(Duration::from_millis(50));
    }
    let keys = s3.keys("kept");
    assert!(
        keys.iter().filter(|k| k.contains(&today)).count() >= 2,
        "{keys:?}"
    );
    let out = run(
        &[
            "query",
            "--store",
            url.as_str(),
            "SELECT session FROM traces",
        ],
        &env,
    );
    assert!(out.contains("| today "), "{out}");
    assert!(!out.contains("old"), "{out}");
}
