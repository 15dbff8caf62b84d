//! Ballista mode against a real cluster: a scheduler and two executors, each
//! `jsprof-collector ballista-…` as its own process on free ports. Traces go in over HTTP
//! through the real collector; once compacted, `top` (with its filters) and SQL over joins,
//! group-bys and totally ordered results print the same in both modes.

mod common;

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};
use std::time::{Duration, Instant};

use common::{http, Collector, BIN};

/// `n` ports free at once (all bound together, so they differ, then released).
fn free_ports(n: usize) -> Vec<u16> {
    let listeners: Vec<_> = (0..n)
        .map(|_| TcpListener::bind("127.0.0.1:0").unwrap())
        .collect();
    listeners
        .iter()
        .map(|l| l.local_addr().unwrap().port())
        .collect()
}

/// A scheduler and `executors` executors, killed on drop. Their output goes to files in
/// `logs`, shown when the cluster does not come up.
struct Cluster {
    children: Vec<Child>,
    url: String,
    logs: tempfile::TempDir,
}

impl Cluster {
    fn start(executors: usize) -> Cluster {
        let ports = free_ports(1 + 2 * executors);
        let logs = tempfile::tempdir().unwrap();
        let url = format!("df://127.0.0.1:{}", ports[0]);
        let mut cluster = Cluster {
            children: Vec::new(),
            url,
            logs,
        };
        cluster.spawn(
            "scheduler",
            &[
                "ballista-scheduler",
                "--bind",
                &format!("127.0.0.1:{}", ports[0]),
            ],
        );
        // Executors register when they start: the scheduler must answer first.
        cluster.wait_for_executors(0);
        for e in 0..executors {
            let work = cluster.logs.path().join(format!("work{e}"));
            let url = cluster.url.clone();
            cluster.spawn(
                &format!("executor{e}"),
                &[
                    "ballista-executor",
                    "--scheduler",
                    &url,
                    "--bind",
                    &format!("127.0.0.1:{}", ports[1 + 2 * e]),
                    "--grpc-port",
                    &ports[2 + 2 * e].to_string(),
                    "--concurrent-tasks",
                    "2",
                    "--work-dir",
                    work.to_str().unwrap(),
                ],
            );
        }
        cluster.wait_for_executors(executors);
        cluster
    }

    fn spawn(&mut self, name: &str, args: &[&str]) {
        let log = |ext: &str| {
            std::fs::File::create(self.logs.path().join(format!("{name}.{ext}"))).unwrap()
        };
        let child = Command::new(BIN)
            .args(args)
            .stdout(log("out"))
            .stderr(log("err"))
            .spawn()
            .unwrap();
        self.children.push(child);
    }

    /// Polls the scheduler's state (`ballista-status`, which polls /api/executors) until
    /// `n` executors are registered; 120 s at most.
    fn wait_for_executors(&mut self, n: usize) {
        let out = Command::new(BIN)
            .args(["ballista-status", "--scheduler", &self.url])
            .args(["--wait-executors", &n.to_string(), "--timeout", "120"])
            .output()
            .unwrap();
        if !out.status.success() {
            let mut report = String::from_utf8_lossy(&out.stderr).into_owned();
            for c in &mut self.children {
                report.push_str(&format!("\nprocess {}: {:?}", c.id(), c.try_wait()));
            }
            for e in std::fs::read_dir(self.logs.path()).unwrap().flatten() {
                if e.path().is_file() {
                    let text = std::fs::read_to_string(e.path()).unwrap_or_default();
                    report.push_str(&format!("\n--- {:?}\n{text}", e.file_name()));
                }
            }
            panic!("the cluster did not come up: {report}");
        }
        let line = String::from_utf8(out.stdout).unwrap();
        assert!(
            line.contains(&format!(": {n} executor(s)")) || n == 0,
            "{line}"
        );
    }

    /// The scheduler's jobs (its REST API).
    fn jobs(&self) -> usize {
        let addr = self.url.strip_prefix("df://").unwrap().parse().unwrap();
        let (status, _, body) = http(addr, "GET", "/api/jobs", &[], b"");
        assert_eq!(status, 200, "{body}");
        let v: serde_json::Value = serde_json::from_str(&body).unwrap();
        v.as_array()
            .or_else(|| v["jobs"].as_array())
            .unwrap_or_else(|| panic!("no jobs list in {body}"))
            .len()
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for c in &mut self.children {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn run(args: &[&str], store: &Path, ballista: Option<&str>) -> Output {
    let mut c = Command::new(BIN);
    c.arg(args[0]).arg("--store").arg(store).args(&args[1..]);
    if let Some(url) = ballista {
        c.args(["--ballista", url]);
    }
    c.output().unwrap()
}

/// Runs `args` in both modes: the same output, successfully.
fn same_in_both(args: &[&str], store: &Path, cluster: &Cluster) -> String {
    let embedded = run(args, store, None);
    let distributed = run(args, store, Some(&cluster.url));
    let text = |o: &Output| {
        assert!(
            o.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8(o.stdout.clone()).unwrap()
    };
    let (e, d) = (text(&embedded), text(&distributed));
    assert_eq!(e, d, "{args:?}: embedded and Ballista differ");
    // Ballista mode says nothing on stderr when nothing was left out.
    assert!(
        distributed.stderr.is_empty(),
        "{args:?}: {:?}",
        String::from_utf8_lossy(&distributed.stderr)
    );
    e
}

/// A trace of `n` samples 10 ms apart over four stacks of `funcs` (each a frame on
/// `resource`): the stack of sample `i` ends at depth 1 + (i + shift) % 3 plus a leaf
/// that alternates, so traces differ in their self and total times.
fn trace(funcs: &[&str], resource: &str, n: usize, shift: usize) -> serde_json::Value {
    let frames: Vec<_> = funcs
        .iter()
        .enumerate()
        .map(|(k, f)| serde_json::json!({"name": f, "resourceId": 0, "line": 1 + 4 * k, "column": 10}))
        .collect();
    // A chain 0 <- 1 <- 2 … over the frames.
    let stacks: Vec<_> = (0..funcs.len())
        .map(|k| match k {
            0 => serde_json::json!({"frameId": 0}),
            _ => serde_json::json!({"frameId": k, "parentId": k - 1}),
        })
        .collect();
    let samples: Vec<_> = (0..n)
        .map(|i| {
            let depth = 1 + (i + shift) % funcs.len();
            serde_json::json!({"stackId": depth - 1, "timestamp": 1000.0 + 10.0 * i as f64})
        })
        .collect();
    serde_json::json!({"frames": frames, "resources": [resource], "stacks": stacks, "samples": samples})
}

/// Posts the known set: 24 traces over two projects, three releases, two pages and two
/// user agents, with stacks of different shapes.
fn ingest(c: &Collector) -> usize {
    let shapes: [(&[&str], &str); 3] = [
        (
            &["main", "render", "layout", "paint"],
            "https://shop.test/app.js",
        ),
        (&["main", "fetchCart", "parse"], "https://shop.test/cart.js"),
        (
            &["boot", "main", "render", "diff", "commit"],
            "https://blog.test/ui.js",
        ),
    ];
    let mut n = 0;
    for i in 0..24usize {
        let (funcs, resource) = shapes[i % 3];
        let (project_key, page) = if i % 4 < 2 {
            ("k-shop", "https://shop.test/checkout")
        } else {
            ("k-blog", "https://blog.test/post/7")
        };
        let release = ["1.0.0", "1.1.0", "2.0.0"][(i / 2) % 3];
        let ua = if i % 5 < 3 {
            "Mozilla/5.0 Firefox/140.0"
        } else {
            "Mozilla/5.0 Chrome/141.0"
        };
        let origin = 1_795_694_400_000.0_f64 + 3_600_000.0 * i as f64;
        // Every even trace has a long animation frame over some of its samples (its
        // `entries`), every odd one a long task that came apart from it (a RUM batch of its
        // session): `--during` joins both on the cluster.
        let entries = if i % 2 == 0 {
            serde_json::json!([{"entryType": "long-animation-frame", "name": "TimerHandler:setTimeout",
                "startTime": 1000.0 + 10.0 * (i % 5) as f64, "duration": 60.0 + 10.0 * i as f64}])
        } else {
            serde_json::json!([])
        };
        let body = serde_json::to_vec(&serde_json::json!({
            "trace": trace(funcs, resource, 20 + 7 * i, i),
            "pageUrl": page,
            "release": release,
            "session": format!("s{i:02}"),
            // Traces an hour apart from 2026-11-26T12:00Z, over two days: --since/--until
            // cut among them.
            "timeOrigin": origin,
            "entries": entries,
        }))
        .unwrap();
        let (status, _, answer) = http(
            c.addr,
            "POST",
            "/v1/profiles",
            &[("X-Jsprof-Key", project_key), ("User-Agent", ua)],
            &body,
        );
        assert_eq!(status, 202, "{answer}");
        if i % 2 == 1 {
            let rum = serde_json::json!({"type": "long_task", "date": origin + 1050.0,
                "session": {"id": format!("s{i:02}")}, "view": {"id": format!("v{i}"), "url": page},
                "long_task": {"id": format!("lt{i}"), "entry_type": "long-task", "duration": 40_000_000 + 10_000_000 * i}});
            let (status, _, answer) = http(
                c.addr,
                "POST",
                &format!("/api/v2/rum?ddsource=browser&dd-api-key={project_key}"),
                &[],
                format!("{rum}\n").as_bytes(),
            );
            assert_eq!(status, 202, "{answer}");
        }
        n += 1;
    }
    n
}

/// Waits until the log holds nothing that is not compacted: every segment is compacted and
/// removed, but the empty one being written (polling the store; 60 s at most).
fn wait_compacted(store: &Path) {
    let wal: PathBuf = store.join("wal");
    let start = Instant::now();
    loop {
        let pending = std::fs::read_dir(&wal)
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().ends_with(".wal"))
            .any(|e| jsprof_collector::wal::holds_records(&e.path()));
        if !pending {
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the log was never compacted"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn ballista_and_embedded_give_identical_results() {
    let cluster = Cluster::start(2);
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path();
    // An empty store: tables without files, whose plans still go to the cluster.
    let empty = same_in_both(
        &["query", "SELECT count(*) AS n FROM samples"],
        store,
        &cluster,
    );
    assert!(empty.contains("| 0 "), "{empty}");
    let keys = ["--key", "shop=k-shop", "--key", "blog=k-blog"];
    let c = Collector::start(
        store,
        &[&keys[..], &["--pref", "collector.segment_ms=50"]].concat(),
    );
    let traces = ingest(&c);
    wait_compacted(store);
    let jobs_before = cluster.jobs();

    let top = same_in_both(&["top"], store, &cluster);
    for f in [
        "main",
        "render",
        "layout",
        "paint",
        "fetchCart",
        "parse",
        "boot",
        "diff",
        "commit",
    ] {
        assert!(top.contains(&format!("| {f} ")), "{f} not in {top}");
    }
    let cases: &[&[&str]] = &[
        &["top", "--release", "1.1.0"],
        &["top", "--url", "blog.test/post"],
        &["top", "--user-agent", "Chrome/"],
        &["top", "--project", "shop", "--limit", "3"],
        // Hours 5 to 15 after the first trace's origin.
        &[
            "top",
            "--since",
            "1795712400000",
            "--until",
            "1795748400000",
        ],
        &[
            "top",
            "--release",
            "2.0.0",
            "--user-agent",
            "Firefox",
            "--url",
            "shop.test",
        ],
        &["top", "--during", "loaf"],
        &["top", "--during", "long-task", "--project", "blog"],
    ];
    for args in cases {
        let out = same_in_both(args, store, &cluster);
        assert!(out.lines().count() > 4, "{args:?} found nothing: {out}");
    }
    let sql = [
        // Self time by function: samples ⋈ stacks ⋈ frames.
        "SELECT fr.name, fr.resource, count(*) AS n, sum(s.weight_ms) AS ms
         FROM samples s JOIN stacks st ON st.stack_id = s.stack_id
         JOIN frames fr ON fr.frame_id = st.frame_id
         GROUP BY fr.name, fr.resource ORDER BY n DESC, fr.name, fr.resource",
        // Total time by function and release: samples ⋈ stack_frames ⋈ frames.
        "SELECT s.release, fr.name, count(*) AS n
         FROM samples s JOIN stack_frames sf ON sf.stack_id = s.stack_id
         JOIN frames fr ON fr.frame_id = sf.frame_id
         GROUP BY s.release, fr.name ORDER BY s.release, n DESC, fr.name",
        // Traces ⋈ samples by project and user agent.
        "SELECT t.project, t.user_agent, count(DISTINCT t.trace_id) AS traces,
                count(*) AS samples, min(s.timestamp_ms) AS first, max(s.timestamp_ms) AS last
         FROM traces t JOIN samples s ON s.trace_id = t.trace_id
         GROUP BY t.project, t.user_agent ORDER BY t.project, t.user_agent",
        // Every trace, in a total order.
        "SELECT session, project, release, page_url, user_agent, sample_count, day
         FROM traces ORDER BY session",
        // The events, from traces and from RUM batches.
        "SELECT project, kind, op, count(*) AS n, sum(duration_ms) AS ms, count(trace_id) AS with_trace
         FROM events GROUP BY project, kind, op ORDER BY project, kind, op",
        // Stack depth histogram.
        "SELECT st.depth, count(*) AS n FROM samples s JOIN stacks st ON st.stack_id = s.stack_id
         GROUP BY st.depth ORDER BY st.depth",
    ];
    for q in sql {
        let out = same_in_both(&["query", q], store, &cluster);
        assert!(out.lines().count() > 4, "{q} found nothing: {out}");
    }
    let out = same_in_both(
        &[
            "query",
            "--project",
            "blog",
            "SELECT project, count(*) AS n FROM samples GROUP BY project ORDER BY project",
        ],
        store,
        &cluster,
    );
    assert!(out.contains("| blog ") && !out.contains("shop"), "{out}");
    let out = same_in_both(
        &["query", "SELECT count(*) AS n FROM traces"],
        store,
        &cluster,
    );
    assert!(out.contains(&format!("| {traces} ")), "{out}");
    // The cluster ran them: a job for each Ballista query.
    let ran = cluster.jobs() - jobs_before;
    assert!(
        ran >= 1 + cases.len() + sql.len() + 2,
        "{ran} jobs on the cluster"
    );

    // What is still only in the log is left out in Ballista mode, and said so.
    drop(c);
    let c = Collector::start(
        store,
        &[&keys[..], &["--pref", "collector.segment_ms=3600000"]].concat(),
    );
    let (status, _, answer) = http(
        c.addr,
        "POST",
        "/v1/profiles",
        &[("X-Jsprof-Key", "k-shop")],
        &serde_json::to_vec(&serde_json::json!({"trace": trace(&["late"], "https://shop.test/late.js", 5, 0), "session": "late"})).unwrap(),
    );
    assert_eq!(status, 202, "{answer}");
    let count = "SELECT count(*) AS n FROM traces";
    let embedded = run(&["query", count], store, None);
    assert!(String::from_utf8_lossy(&embedded.stdout).contains(&format!("| {} ", traces + 1)));
    let distributed = run(&["query", count], store, Some(&cluster.url));
    assert!(distributed.status.success());
    assert!(String::from_utf8_lossy(&distributed.stdout).contains(&format!("| {traces} ")));
    let note = String::from_utf8_lossy(&distributed.stderr);
    assert!(
        note.contains("1 trace(s) still only in the write-ahead log are left out"),
        "{note}"
    );

    // A segment whose commit mark is gone (as if its compaction had stopped before it) is
    // read by neither mode: its other files are there, but not committed.
    let traces_dir = store.join("tables/traces");
    let day = std::fs::read_dir(&traces_dir)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let release = std::fs::read_dir(day)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let file = std::fs::read_dir(release).unwrap().next().unwrap().unwrap();
    std::fs::remove_file(store.join("tables/frames").join(file.file_name())).unwrap();
    let n = |o: Output| {
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let out = String::from_utf8(o.stdout).unwrap();
        out.lines()
            .find_map(|l| {
                l.strip_prefix("| ")?
                    .split(' ')
                    .next()?
                    .parse::<usize>()
                    .ok()
            })
            .unwrap_or_else(|| panic!("no count in {out}"))
    };
    let embedded = n(run(&["query", count], store, None));
    let distributed = n(run(&["query", count], store, Some(&cluster.url)));
    assert!(distributed < traces, "{distributed} of {traces}");
    assert_eq!(embedded, distributed + 1, "the late trace is in the log");
}

#[test]
fn a_bad_url_or_an_unreachable_scheduler_is_a_readable_error() {
    let dir = tempfile::tempdir().unwrap();
    let fails = |url: &str, expect: &str| {
        let out = run(&["query", "SELECT 1"], dir.path(), Some(url));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{url}: {err}");
        assert!(
            err.contains(expect) && !err.contains("panicked"),
            "{url}: {err}"
        );
    };
    fails(
        "http://127.0.0.1:50050",
        "not a df:// URL; expected df://HOST:PORT",
    );
    fails("df://127.0.0.1", "no port");
    fails("df://127.0.0.1:99999", "the port is not a number");
    // A port nobody listens on.
    let port = free_ports(1)[0];
    fails(
        &format!("df://127.0.0.1:{port}"),
        &format!("cannot reach the Ballista scheduler at df://127.0.0.1:{port}"),
    );
    // A scheduler without executors refuses at once rather than queue the job forever.
    let cluster = Cluster::start(0);
    fails(&cluster.url, "has no executors");
    // And something that is no scheduler.
    let other = Collector::start(dir.path(), &[]);
    fails(
        &format!("df://{}", other.addr),
        "GET /api/executors answered 404",
    );
}
