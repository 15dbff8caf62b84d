//! The collector's targets (issues 27 and 37), on this machine:
//! - ingest: traces of 500 samples each over HTTP from 32 concurrent keep-alive clients,
//!   each acknowledged (202) only after its fsync: traces/s and the p50/p99 acknowledgement
//!   latency (target: ≥ 10,000 traces/s, p99 < 50 ms);
//! - `top` over 10 million samples (20,000 traces of 500) compacted into Parquet, embedded
//!   (target: ≤ 2 s), or over 100 million with `JSPROF_BENCH_TOP_TRACES=200000` (target:
//!   ≤ 5 s); and the Parquet files' bytes per sample (target: ≤ 12.8);
//! - with `JSPROF_BENCH_BALLISTA=df://HOST:PORT` (a cluster on this machine, e.g.
//!   `./mach ballista up`), the same `top` on that cluster too, after checking that both
//!   print the same table;
//! - the same `top` with an uploaded source map for every frame (each of the 6 scripts'
//!   300 functions mapped, in each release), paired with the case without (issue 37, item
//!   2; target: ≤ 20% more).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use jsprof_collector::model::{Ingested, Meta, Source};
use jsprof_collector::query::{self, Engine, TopFilter};
use jsprof_collector::server::{self, Config};
use jsprof_collector::{retention, store, wal};
use jsprof_profiler::{FrameInfo, ProfilerTrace, TraceBuilder};

/// A page's trace: 500 samples 10 ms apart, stacks 4 to 12 deep drawn from 300 functions
/// over 6 scripts (a fixed pseudo-random sequence per `seed`).
fn trace(seed: u64) -> ProfilerTrace {
    let mut x = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let mut next = move |n: u64| {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (x >> 33) % n
    };
    let mut b = TraceBuilder::new();
    b.reserve_samples(500);
    for i in 0..500 {
        let depth = 4 + next(9);
        let frames: Vec<FrameInfo> = (0..depth)
            .map(|d| {
                // Shallow frames are few (main, the framework); deep ones spread out.
                let f = if d < 3 { d * 7 + next(3) } else { next(300) };
                FrameInfo {
                    name: format!("fn{f}"),
                    resource: Some(format!("https://shop.example/static/chunk{}.js", f % 6)),
                    line: Some(10 + f as u32 * 3),
                    column: Some(5 + (f % 40) as u32),
                }
            })
            .collect();
        let stack = if next(20) == 0 {
            None
        } else {
            b.stack_id_of(&frames)
        };
        b.push_sample(100.0 + 10.0 * i as f64, stack, None);
    }
    b.finish()
}

fn envelope(seed: u64) -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({
        "trace": trace(seed),
        "pageUrl": "https://shop.example/cart",
        "release": format!("1.{}.0", seed % 3),
        "session": format!("s{seed}"),
        "timeOrigin": 1_795_651_200_000.0 + seed as f64 * 1000.0,
    }))
    .unwrap()
}

/// A collector on `store`, in this process: its address, and what stops it (returning once
/// its store is whole).
fn start_collector(store: &Path) -> (SocketAddr, impl FnOnce()) {
    let (tx, rx) = std::sync::mpsc::channel();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let config = Config::new(store.to_owned());
    let thread = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(server::serve_until(
            config,
            "127.0.0.1:0".parse().unwrap(),
            |a| tx.send(a).unwrap(),
            async {
                let _ = stop_rx.await;
            },
        ))
        .unwrap();
    });
    let stop = move || {
        let _ = stop_tx.send(());
        thread.join().unwrap();
    };
    (rx.recv().unwrap(), stop)
}

/// Posts the next of `n` requests not yet taken by another client (`next`; request `i`
/// carries `bodies[i % bodies.len()]`), on one keep-alive connection, until none is left;
/// the latency of each acknowledgement.
fn client(addr: SocketAddr, bodies: &[Vec<u8>], n: usize, next: &AtomicUsize) -> Vec<Duration> {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_nodelay(true).unwrap();
    let mut lat = Vec::new();
    let mut buf = vec![0u8; 4096];
    loop {
        let i = next.fetch_add(1, Ordering::Relaxed);
        if i >= n {
            break;
        }
        let body = &bodies[i % bodies.len()];
        let t = Instant::now();
        let head = format!(
            "POST /v1/profiles HTTP/1.1\r\nHost: b\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            body.len()
        );
        s.write_all(head.as_bytes()).unwrap();
        s.write_all(body).unwrap();
        // The answer: headers with Content-Length, then that many bytes.
        let mut got = Vec::new();
        loop {
            let n = s.read(&mut buf).unwrap();
            assert!(n > 0, "connection closed");
            got.extend_from_slice(&buf[..n]);
            if let Some(end) = got.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&got[..end]).to_ascii_lowercase();
                assert!(head.starts_with("http/1.1 202"), "{head}");
                let len: usize = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length: "))
                    .unwrap()
                    .trim()
                    .parse()
                    .unwrap();
                if got.len() >= end + 4 + len {
                    break;
                }
            }
        }
        lat.push(t.elapsed());
    }
    lat
}

/// How many clients post at once: 32, or `JSPROF_BENCH_CLIENTS`.
fn clients() -> usize {
    std::env::var("JSPROF_BENCH_CLIENTS")
        .ok()
        .and_then(|c| c.parse().ok())
        .filter(|&c| c > 0)
        .unwrap_or(32)
}

/// `cargo test --all-targets` runs the benches once as tests (without `--bench`): then the
/// long runs are a hundredth of their size, enough to check that every part works.
fn scale(n: usize) -> usize {
    if std::env::args().any(|a| a == "--bench") {
        n
    } else {
        (n / 100).max(clients())
    }
}

/// Posts `n` requests (cycling through `bodies`) from [`clients`] concurrent clients: (wall
/// time, every latency). Each client takes the next request when its last one is answered,
/// as a load generator's connections do, so the run ends when the last answer comes, not
/// when the slowest of 32 fixed shares of the bodies is done.
fn ingest(addr: SocketAddr, bodies: &[Vec<u8>], n: usize) -> (Duration, Vec<Duration>) {
    let t = Instant::now();
    let next = AtomicUsize::new(0);
    let lat: Vec<Duration> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..clients())
            .map(|_| s.spawn(|| client(addr, bodies, n, &next)))
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    (t.elapsed(), lat)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 * p) as usize).min(sorted.len() - 1)]
}

fn bench_ingest(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let (addr, stop) = start_collector(dir.path());
    let bodies: Vec<Vec<u8>> = (0..64).map(envelope).collect();
    let batch = 2000;
    // One long run for the figures.
    let long = scale(20_000);
    let (wall, mut lat) = ingest(addr, &bodies, long);
    lat.sort();
    println!(
        "ingest: {} traces of 500 samples ({} bytes each) from {} clients in {:.2} s: {:.0} traces/s; acknowledgement (fsync included) p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        long,
        bodies[0].len(),
        clients(),
        wall.as_secs_f64(),
        long as f64 / wall.as_secs_f64(),
        percentile(&lat, 0.5).as_secs_f64() * 1e3,
        percentile(&lat, 0.99).as_secs_f64() * 1e3,
        lat.last().unwrap().as_secs_f64() * 1e3,
    );
    let mut g = c.benchmark_group("collector");
    g.sample_size(10);
    g.throughput(Throughput::Elements(batch as u64));
    g.bench_function("ingest 2000 traces of 500 samples", |b| {
        b.iter_custom(|iters| (0..iters).map(|_| ingest(addr, &bodies, batch).0).sum())
    });
    g.finish();
    let t = Instant::now();
    stop();
    println!(
        "ingest: the collector stopped, its log compacted, {:.1} s after the last request",
        t.elapsed().as_secs_f64()
    );
}

/// A store of `traces` traces of 500 samples, compacted into Parquet. Returns the time
/// compaction took (the log's segments are written first, untimed).
fn store_of(dir: &Path, traces: u64) -> Duration {
    let wal_dir = store::wal_dir(dir);
    std::fs::create_dir_all(&wal_dir).unwrap();
    let mut known = store::Known::default();
    let segments = traces.div_ceil(2000);
    // 2,000 traces a segment, as a collector's segments hold a few seconds of traffic.
    for seg in 0..traces.div_ceil(2000) {
        let n = seg + 1;
        let mut bytes = Vec::new();
        for i in seg * 2000..((seg + 1) * 2000).min(traces) {
            let t = Ingested {
                project: "default".into(),
                source: Source::Jsprof,
                received: 1_795_651_200_000.0,
                meta: Meta {
                    page_url: Some("https://shop.example/cart".into()),
                    release: Some(format!("1.{}.0", i % 3)),
                    time_origin: Some(1_795_651_200_000.0 + i as f64 * 1000.0),
                    ..Meta::default()
                },
                trace: trace(i % 512),
                events: Vec::new(),
            };
            bytes.extend_from_slice(&wal::encode_record(&[t]));
        }
        std::fs::write(wal::segment_path(&wal_dir, n), bytes).unwrap();
    }
    let t = Instant::now();
    for n in 1..=segments {
        store::compact(&dir.into(), n, &mut known).unwrap();
    }
    t.elapsed()
}

/// Base64 VLQ (ECMA-426, "mappings"): `v` appended to `out`.
fn vlq(out: &mut String, v: i64) {
    const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut n = if v < 0 { ((-v) << 1) | 1 } else { v << 1 } as u64;
    loop {
        let mut digit = n & 31;
        n >>= 5;
        if n > 0 {
            digit |= 32;
        }
        out.push(B64[digit as usize] as char);
        if n == 0 {
            break;
        }
    }
}

/// A map of [`trace`]'s script `chunk{c}.js`: each of its functions `fn{f}` (at line
/// `10 + 3f`, column `5 + f % 40`) is `original_fn{f}` at line `f + 1` of `src/chunk{c}.ts`.
fn chunk_map(c: u64) -> Vec<u8> {
    let fns: Vec<u64> = (0..300).filter(|f| f % 6 == c).collect();
    let last_line = 10 + 3 * 299;
    let mut mappings = String::new();
    let (mut src_line, mut src_col, mut name) = (0i64, 0i64, 0i64);
    for (i, line) in (1..=last_line).enumerate() {
        if i > 0 {
            mappings.push(';');
        }
        if let Some(k) = fns.iter().position(|f| 10 + 3 * f == line) {
            let f = fns[k] as i64;
            vlq(&mut mappings, 5 + f % 40 - 1);
            vlq(&mut mappings, 0);
            vlq(&mut mappings, f - src_line);
            vlq(&mut mappings, 9 - src_col);
            vlq(&mut mappings, k as i64 - name);
            (src_line, src_col, name) = (f, 9, k as i64);
        }
    }
    let names: Vec<String> = fns.iter().map(|f| format!("original_fn{f}")).collect();
    serde_json::to_vec(&serde_json::json!({
        "version": 3,
        "sources": [format!("src/chunk{c}.ts")],
        "names": names,
        "mappings": mappings,
    }))
    .unwrap()
}

/// Uploads [`chunk_map`] of each script for each release of [`store_of`]'s store.
fn upload_maps(dir: &Path) {
    use jsprof_collector::symbols;
    for r in 0..3 {
        for c in 0..6 {
            let body = chunk_map(c);
            let checked = symbols::check_map(&body).unwrap();
            let up = symbols::Upload {
                project: "default".into(),
                release: format!("1.{r}.0"),
                name: format!("static/chunk{c}.js.map"),
                ..symbols::Upload::default()
            };
            symbols::store_upload(dir, None, &up, &body, checked, 0.0).unwrap();
        }
    }
}

fn bench_top(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    // 20,000 traces (10M samples), or `JSPROF_BENCH_TOP_TRACES` (200,000: issue 37's 100M).
    let traces = scale(
        std::env::var("JSPROF_BENCH_TOP_TRACES")
            .ok()
            .and_then(|n| n.parse().ok())
            .filter(|&n| n > 0)
            .unwrap_or(20_000),
    );
    let took = store_of(dir.path(), traces as u64);
    let bytes = retention::size(&dir.path().join("tables"));
    println!(
        "top: a store of {traces} traces, {} samples, compacted by one thread in {:.1} s ({:.0} traces/s); its Parquet files {bytes} bytes, {:.1} a sample",
        traces * 500,
        took.as_secs_f64(),
        traces as f64 / took.as_secs_f64(),
        bytes as f64 / (traces * 500) as f64
    );
    let samples = if traces * 500 >= 1_000_000 {
        format!("{}M", traces * 500 / 1_000_000)
    } else {
        (traces * 500).to_string()
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let f = TopFilter {
        limit: 20,
        ..TopFilter::default()
    };
    let store: jsprof_collector::store::Store = dir.path().into();
    let out = rt
        .block_on(query::top_on(query::Engine::Embedded, &store, None, &f))
        .unwrap();
    println!("{out}");
    let mut g = c.benchmark_group("collector");
    g.sample_size(10);
    g.throughput(Throughput::Elements(traces as u64 * 500));
    g.bench_function(format!("top over {samples} samples"), |b| {
        b.iter(|| {
            rt.block_on(query::top_on(query::Engine::Embedded, &store, None, &f))
                .unwrap()
        })
    });
    // The same store with a map for every frame, uploaded for each release.
    upload_maps(dir.path());
    let mapped = rt
        .block_on(query::top_on(query::Engine::Embedded, &store, None, &f))
        .unwrap();
    assert!(
        mapped.contains("original_fn") && !mapped.contains("| fn"),
        "{mapped}"
    );
    println!("{mapped}");
    g.bench_function(
        format!("top over {samples} samples, every frame mapped"),
        |b| {
            b.iter(|| {
                rt.block_on(query::top_on(query::Engine::Embedded, &store, None, &f))
                    .unwrap()
            })
        },
    );
    let _ = std::fs::remove_dir_all(jsprof_collector::symbols::maps_dir(dir.path()));
    if let Ok(url) = std::env::var("JSPROF_BENCH_BALLISTA") {
        let engine = Engine::Ballista(&url);
        let distributed = rt.block_on(query::top_on(engine, &store, None, &f));
        assert_eq!(
            distributed.as_deref(),
            Ok(out.as_str()),
            "Ballista's top differs"
        );
        g.bench_function(format!("top over {samples} samples, Ballista"), |b| {
            b.iter(|| {
                rt.block_on(query::top_on(engine, &store, None, &f))
                    .unwrap()
            })
        });
    }
    g.finish();
}

/// What the intake does to each trace before the log: decode (JSON parse, the spec's
/// invariants) and encode the log record; what compaction does to it: decode the record.
fn bench_trace(c: &mut Criterion) {
    use jsprof_collector::{decode, record};
    let body = envelope(7);
    let req = decode::Request {
        project: "default".into(),
        max_bytes: 10 << 20,
        ..decode::Request::default()
    };
    let traces = decode::jsprof(&req, &body).unwrap().traces().unwrap();
    let rec = wal::encode_record(&traces);
    println!(
        "trace: {} bytes of JSON, a log record of {} bytes",
        body.len(),
        rec.len()
    );
    let mut g = c.benchmark_group("collector");
    g.throughput(Throughput::Bytes(body.len() as u64));
    g.bench_function(
        "intake: decode a 500-sample trace into its log record",
        |b| b.iter(|| decode::jsprof(&req, &body).unwrap()),
    );
    g.bench_function("intake: encode its log record", |b| {
        b.iter(|| wal::encode_record(&traces))
    });
    g.bench_function("compaction: decode its log record", |b| {
        b.iter(|| record::decode(&rec[8..]).unwrap())
    });
    g.finish();
}

criterion_group!(benches, bench_trace, bench_ingest, bench_top);
criterion_main!(benches);
