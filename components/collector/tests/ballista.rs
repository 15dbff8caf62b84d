//! Ballista mode against a real cluster: a scheduler and two executors, each
//! `jsprof-collector ballista-…` as its own process on free ports. Traces go in over HTTP
//! through the real collector; once compacted, `top` (with its filters) and SQL over joins,
//! group-bys and totally ordered results print the same in both modes.

mod common;

use std::path::Path;
use std::process::{Command, Output};

use common::cluster::{free_ports, ingest, trace, wait_compacted, Cluster};
use common::maps::{maps, post_minified, upload, ORIGINALS};
use common::{http, Collector, BIN};

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

/// A release's uploaded source maps name the original functions in Ballista mode as in the
/// embedded one: the cluster returns the stored (minified) frames' rows and the client maps
/// them, and `query`'s `frames_mapped` goes to the cluster as a `VALUES` list in the plan.
#[test]
fn uploaded_maps_name_the_original_functions_on_a_cluster_too() {
    let cluster = Cluster::start(2);
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path();
    let key = "upload-key-0123";
    let c = Collector::start(
        store,
        &[
            "--upload-key",
            &format!("default={key}"),
            "--pref",
            "collector.segment_ms=50",
        ],
    );
    let url = "https://shop.example/assets/app.min.js";
    for release in ["1.0", "2.0", "2.0"] {
        post_minified(c.addr, release, url);
    }
    for release in ["1.0", "2.0"] {
        let (ok, _, err) = upload(c.addr, key, release, &maps().join("dist"));
        assert!(ok, "{err}");
    }
    wait_compacted(store);
    let jobs_before = cluster.jobs();

    let top = same_in_both(&["top", "--release", "2.0"], store, &cluster);
    let names: Vec<&str> = top
        .lines()
        .skip(3)
        .filter_map(|l| l.split('|').nth(1).map(str::trim))
        .filter(|n| !n.is_empty())
        .collect();
    assert_eq!(names, ORIGINALS, "{top}");
    let diff = same_in_both(&["diff", "--base", "1.0", "--head", "2.0"], store, &cluster);
    for name in ORIGINALS {
        assert!(diff.contains(name), "{diff}");
    }
    assert!(!diff.contains("| e "), "{diff}");
    // Each trace's leaves: formatPrice 6, computeTotals 3, renderCart 2, onLoad 1.
    let mapped = same_in_both(
        &[
            "query",
            "SELECT m.name, m.resource, count(*) AS samples FROM samples s
             JOIN stacks st ON st.stack_id = s.stack_id
             JOIN frames_mapped m ON m.frame_id = st.frame_id
             GROUP BY m.name, m.resource ORDER BY samples DESC, m.name",
        ],
        store,
        &cluster,
    );
    let rows: Vec<Vec<&str>> = mapped
        .lines()
        .filter(|l| l.starts_with('|'))
        .skip(1)
        .map(|l| l.split('|').skip(1).take(3).map(str::trim).collect())
        .collect();
    let cart = "https://shop.example/src/cart.js";
    let main = "https://shop.example/src/main.js";
    assert_eq!(
        rows,
        [
            [ORIGINALS[0], cart, "18"],
            [ORIGINALS[1], cart, "9"],
            [ORIGINALS[2], cart, "6"],
            [ORIGINALS[3], main, "3"],
        ],
        "{mapped}"
    );
    // The store keeps the frames as the page sent them.
    let stored = same_in_both(
        &["query", "SELECT name FROM frames ORDER BY name"],
        store,
        &cluster,
    );
    for name in ["c", "e", "i", "u"] {
        assert!(stored.contains(&format!("| {name} ")), "{stored}");
    }
    // The cluster ran them: top, diff's queries, and both SQL queries.
    assert!(cluster.jobs() - jobs_before >= 4, "{} jobs", cluster.jobs());
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
