//! A Ballista cluster of `jsprof-collector ballista-…` processes, and the known set of
//! traces the Ballista and S3 tests post (tests/ballista.rs, tests/s3.rs).

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use super::{http, Collector, BIN};

/// `n` ports free at once (all bound together, so they differ, then released).
pub fn free_ports(n: usize) -> Vec<u16> {
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
pub struct Cluster {
    children: Vec<Child>,
    pub url: String,
    logs: tempfile::TempDir,
    /// Environment variables of every process (an object store's `AWS_*`).
    env: Vec<(String, String)>,
}

impl Cluster {
    pub fn start(executors: usize) -> Cluster {
        Cluster::start_with_env(executors, &[])
    }

    /// A cluster whose processes have `env` in their environment.
    pub fn start_with_env(executors: usize, env: &[(String, String)]) -> Cluster {
        let ports = free_ports(1 + 2 * executors);
        let logs = tempfile::tempdir().unwrap();
        let url = format!("df://127.0.0.1:{}", ports[0]);
        let mut cluster = Cluster {
            children: Vec::new(),
            url,
            logs,
            env: env.to_vec(),
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
            .envs(self.env.iter().map(|(k, v)| (k, v)))
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
    pub fn jobs(&self) -> usize {
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

/// A trace of `n` samples 10 ms apart over four stacks of `funcs` (each a frame on
/// `resource`): the stack of sample `i` ends at depth 1 + (i + shift) % 3 plus a leaf
/// that alternates, so traces differ in their self and total times.
pub fn trace(funcs: &[&str], resource: &str, n: usize, shift: usize) -> serde_json::Value {
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
pub fn ingest(c: &Collector) -> usize {
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
pub fn wait_compacted(store: &Path) {
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
