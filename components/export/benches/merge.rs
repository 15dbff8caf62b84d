//! The merge benchmark of issue 13: 10,000 field traces of 1,000 samples each (gzipped
//! `ProfilerTrace` JSON, as a site collecting traces from real users stores them), merged by
//! function identity into one flame graph. Target: at most 10 s on the project's 2-core
//! machine. `./mach bench` runs it (`cargo bench -p jsprof-export --bench merge`).
//!
//! The traces are generated once, deterministically, into `~/.cache/jsprof/bench-data`
//! (override with `JSPROF_BENCH_DATA`): 2,000 functions over 100 scripts and 5,000 call
//! paths 3 to 14 frames deep; each sample of a trace takes a path with a skewed (hot paths
//! first) distribution, 10% are idle. Traces share most functions and paths, but each
//! numbers its own frames, stacks and resources by first use, as real ones do.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use jsprof_export::{input, Format, Keep, Profile};
use jsprof_profiler::{ProfilerFrame, ProfilerSample, ProfilerStack, ProfilerTrace};

const TRACES: usize = 10_000;
const SAMPLES: usize = 1_000;
const FUNCTIONS: u64 = 2_000;
const SCRIPTS: u64 = 100;
const PATHS: u64 = 5_000;
/// Bump when the generated data changes.
const DATA_VERSION: &str = "2";

/// xorshift64*: deterministic, no dependency.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Call path `p`: a walk through a call graph where function `f` calls `(f * 7 + k) %
/// FUNCTIONS` for small `k`, from one of 8 entry points.
fn path(p: u64) -> Vec<u64> {
    let mut rng = Rng(p.wrapping_mul(0xd1b5_4a32_d192_ed03) | 1);
    let depth = 3 + rng.below(12);
    let mut f = rng.below(8) * 250;
    let mut out = Vec::with_capacity(depth as usize);
    for _ in 0..depth {
        out.push(f);
        f = (f * 7 + rng.below(3)) % FUNCTIONS;
    }
    out
}

/// One trace; ids are the trace's own (first use).
fn trace(seed: u64, paths: &[Vec<u64>]) -> ProfilerTrace {
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let mut t = ProfilerTrace::default();
    let mut frame_ids = std::collections::HashMap::new();
    let mut resource_ids = std::collections::HashMap::new();
    let mut stack_ids = std::collections::HashMap::new();
    let mut time = 100.0 + rng.below(1000) as f64;
    for _ in 0..SAMPLES {
        time += 10.0 + rng.below(100) as f64 / 100.0;
        if rng.below(10) == 0 {
            t.samples.push(ProfilerSample {
                marker: None,
                stack_id: None,
                timestamp: time,
            });
            continue;
        }
        // Skewed towards low indexes: hot paths.
        let p = rng.below(PATHS) * rng.below(PATHS) / PATHS;
        let mut parent: Option<u64> = None;
        for &f in &paths[p as usize] {
            let script = f % SCRIPTS;
            let resource = *resource_ids.entry(script).or_insert_with(|| {
                t.resources.push(format!(
                    "https://shop.example.test/static/js/chunk-{script}.js"
                ));
                t.resources.len() as u64 - 1
            });
            let frame = *frame_ids.entry(f).or_insert_with(|| {
                t.frames.push(ProfilerFrame {
                    name: format!("module{script}_fn{f}"),
                    resource_id: Some(resource),
                    line: Some(1 + f / SCRIPTS * 13),
                    column: Some(5 + f % 40),
                });
                t.frames.len() as u64 - 1
            });
            let stack = *stack_ids.entry((parent, frame)).or_insert_with(|| {
                t.stacks.push(ProfilerStack {
                    frame_id: frame,
                    parent_id: parent,
                });
                t.stacks.len() as u64 - 1
            });
            parent = Some(stack);
        }
        t.samples.push(ProfilerSample {
            marker: None,
            stack_id: parent,
            timestamp: time,
        });
    }
    t
}

fn data_dir(traces: usize) -> PathBuf {
    let base = std::env::var_os("JSPROF_BENCH_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            let home = std::env::var_os("HOME").unwrap_or_else(|| ".".into());
            Path::new(&home).join(".cache/jsprof/bench-data")
        });
    base.join(format!("merge-{traces}"))
}

fn ensure_data(dir: &Path, traces: usize) -> Vec<PathBuf> {
    let stamp = dir.join("VERSION");
    let paths: Vec<PathBuf> = (0..traces)
        .map(|i| dir.join(format!("trace-{i:05}.json.gz")))
        .collect();
    if std::fs::read_to_string(&stamp).ok().as_deref() == Some(DATA_VERSION) {
        return paths;
    }
    eprintln!("generating {traces} traces into {} (once)…", dir.display());
    std::fs::create_dir_all(dir).expect("bench data folder");
    let call_paths: Vec<Vec<u64>> = (0..PATHS).map(path).collect();
    for (i, p) in paths.iter().enumerate() {
        let json = trace(i as u64, &call_paths).to_json();
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(json.as_bytes()).expect("gzip");
        std::fs::write(p, e.finish().expect("gzip")).expect("write a trace");
    }
    std::fs::write(&stamp, DATA_VERSION).expect("stamp");
    paths
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --all-targets` runs it once, on 100 traces
    // (so the test run never generates the 470 MB of the real one).
    let quick = !std::env::args().any(|a| a == "--bench");
    let traces = if quick { 100 } else { TRACES };
    let paths = ensure_data(&data_dir(traces), traces);
    let bytes: u64 = paths
        .iter()
        .map(|p| std::fs::metadata(p).map_or(0, |m| m.len()))
        .sum();
    let start = Instant::now();
    let mut profile = Profile::new(Keep::Counts);
    input::merge(&paths, &mut profile, &mut |f| f, &mut |_, _| {}).expect("merge");
    let merged = start.elapsed();
    let mut svg = Vec::new();
    Format::Svg
        .write(&profile, &format!("{traces} traces"), &mut svg)
        .expect("flame graph");
    let total = start.elapsed();
    println!(
        "merge: {} traces, {} samples ({:.1} MB gzipped) merged in {:.2} s; flame graph of {} functions, {} call paths ({:.1} MB SVG) done at {:.2} s (target: <= 10 s)",
        profile.trace_count(),
        profile.sample_count(),
        bytes as f64 / 1e6,
        merged.as_secs_f64(),
        profile.frames().len(),
        profile.nodes().len(),
        svg.len() as f64 / 1e6,
        total.as_secs_f64(),
    );
    if !quick && total.as_secs_f64() > 10.0 {
        println!("merge: OVER TARGET");
    }
}
