//! Tests of [`super`]: the output loaded back as the Firefox Profiler's importer reads it.

use serde::Deserialize;

use super::*;
use crate::model::Keep;
use jsprof_profiler::{ProfilerFrame, ProfilerMarker, ProfilerSample, ProfilerTrace};

const FIXTURE: &str = include_str!("../../tests/fixtures/seed-002.json");
const GOLDEN: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/golden/seed-002.firefox.json"
);

/// The parts of the processed format the Firefox Profiler's importer reads.
#[derive(Deserialize)]
struct Processed {
    meta: Meta,
    threads: Vec<ThreadJson>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Meta {
    version: u64,
    preprocessed_profile_version: u64,
    categories: Vec<CategoryJson>,
    interval: f64,
    start_time: f64,
    product: String,
}

#[derive(Deserialize)]
struct CategoryJson {
    name: String,
    color: Value,
    subcategories: Vec<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ThreadJson {
    name: String,
    samples: SamplesJson,
    stack_table: StackTableJson,
    frame_table: FrameTableJson,
    func_table: FuncTableJson,
    string_array: Vec<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SamplesJson {
    length: usize,
    stack: Vec<Option<usize>>,
    time_deltas: Vec<f64>,
    weight: Vec<i64>,
    #[serde(rename = "threadCPUDelta")]
    cpu_delta: Vec<u64>,
}

#[derive(Deserialize)]
struct StackTableJson {
    length: usize,
    prefix: Vec<Option<usize>>,
    frame: Vec<usize>,
}

#[derive(Deserialize)]
struct FrameTableJson {
    length: usize,
    func: Vec<usize>,
    category: Vec<usize>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct FuncTableJson {
    length: usize,
    name: Vec<usize>,
    #[serde(rename = "isJS")]
    is_js: Vec<bool>,
    file_name: Vec<Option<usize>>,
    line_number: Vec<Option<u64>>,
    column_number: Vec<Option<u64>>,
}

impl ThreadJson {
    /// Checks every index the importer follows, and returns each sample's stack as
    /// (function name, category name) pairs, root first.
    fn stacks(&self, categories: &[CategoryJson]) -> Vec<Vec<(String, String)>> {
        let (st, ft, fu) = (&self.stack_table, &self.frame_table, &self.func_table);
        assert_eq!(self.samples.length, self.samples.stack.len());
        assert_eq!(self.samples.length, self.samples.time_deltas.len());
        assert_eq!(self.samples.length, self.samples.weight.len());
        assert_eq!((st.prefix.len(), st.frame.len()), (st.length, st.length));
        assert_eq!((ft.func.len(), ft.category.len()), (ft.length, ft.length));
        for column in [fu.name.len(), fu.is_js.len(), fu.file_name.len()] {
            assert_eq!(column, fu.length);
        }
        assert_eq!(fu.line_number.len(), fu.length);
        assert_eq!(fu.column_number.len(), fu.length);
        for (i, p) in st.prefix.iter().enumerate() {
            assert!(p.is_none_or(|p| p < i), "a prefix comes before its stack");
            assert!(st.frame[i] < ft.length);
        }
        for i in 0..ft.length {
            assert!(ft.func[i] < fu.length);
            assert!(ft.category[i] < categories.len());
        }
        for i in 0..fu.length {
            assert!(fu.name[i] < self.string_array.len());
            assert!(fu.file_name[i].is_none_or(|s| s < self.string_array.len()));
        }
        self.samples
            .stack
            .iter()
            .map(|s| {
                let mut out = Vec::new();
                let mut at = Some(s.expect("every sample has a stack"));
                while let Some(i) = at {
                    assert!(i < st.length, "stack index {i} out of range");
                    let frame = st.frame[i];
                    let name = &self.string_array[fu.name[ft.func[frame]]];
                    let category = &categories[ft.category[frame]].name;
                    out.push((name.clone(), category.clone()));
                    at = st.prefix[i];
                }
                out.reverse();
                out
            })
            .collect()
    }

    /// Where function `name` is: (file, line, column).
    fn location(&self, name: &str) -> (Option<&str>, Option<u64>, Option<u64>) {
        let fu = &self.func_table;
        let i = (0..fu.length)
            .find(|i| self.string_array[fu.name[*i]] == name)
            .unwrap_or_else(|| panic!("no function {name}"));
        let file = fu.file_name[i].map(|s| self.string_array[s].as_str());
        (file, fu.line_number[i], fu.column_number[i])
    }

    /// Sample times, from the deltas.
    fn times(&self) -> Vec<f64> {
        let mut t = 0.0;
        self.samples
            .time_deltas
            .iter()
            .map(|d| {
                t += d;
                t
            })
            .collect()
    }
}

fn seed() -> ProfilerTrace {
    serde_json::from_str(FIXTURE).unwrap()
}

fn profile(traces: &[(&str, &ProfilerTrace)]) -> Profile {
    let mut p = Profile::new(Keep::Samples);
    for (name, t) in traces {
        p.add_trace(name, t, &mut |f| f).unwrap();
    }
    p
}

fn json(p: &Profile, title: &str) -> String {
    let mut out = Vec::new();
    write(p, title, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

/// A trace's own stacks, as names root first.
fn trace_stacks(t: &ProfilerTrace) -> Vec<Vec<String>> {
    t.samples
        .iter()
        .map(|s| {
            let mut out = Vec::new();
            let mut at = s.stack_id;
            while let Some(i) = at {
                let stack = &t.stacks[i as usize];
                out.push(t.frames[stack.frame_id as usize].name.clone());
                at = stack.parent_id;
            }
            out.reverse();
            out
        })
        .collect()
}

#[test]
fn seed_002_loads_back() {
    let t = seed();
    let p = profile(&[("seed-002.json", &t)]);
    let out: Processed = serde_json::from_str(&json(&p, "seed-002")).unwrap();
    assert!(out.meta.version > 0 && out.meta.preprocessed_profile_version > 0);
    assert_eq!(out.meta.product, "seed-002");
    assert_eq!(out.meta.start_time, 0.0);
    assert!((out.meta.interval - p.interval_ms().unwrap()).abs() < 1e-9);
    let category = |name: &str| {
        let c = out.meta.categories.iter().find(|c| c.name == name);
        c.unwrap_or_else(|| panic!("no category {name}"))
    };
    // The crate's own color names, and every category has its default subcategory.
    let color = |c: CategoryColor| serde_json::to_value(c).unwrap();
    assert_eq!(category("JavaScript").color, color(CategoryColor::Yellow));
    assert_eq!(category("Idle").color, color(CategoryColor::Transparent));
    assert_eq!(category("Other").color, color(CategoryColor::Gray));
    assert!(out
        .meta
        .categories
        .iter()
        .all(|c| !c.subcategories.is_empty()));

    assert_eq!(out.threads.len(), 1);
    let thread = &out.threads[0];
    assert_eq!(thread.name, "seed-002.json");
    assert_eq!(thread.samples.length, t.samples.len());
    let stacks = thread.stacks(&out.meta.categories);
    let names: Vec<Vec<String>> = stacks
        .iter()
        .map(|s| s.iter().map(|(n, _)| n.clone()).collect())
        .collect();
    assert_eq!(names, trace_stacks(&t));
    assert!(stacks.iter().flatten().all(|(_, c)| c == "JavaScript"));
    let mut funcs: Vec<&str> = thread
        .func_table
        .name
        .iter()
        .map(|s| thread.string_array[*s].as_str())
        .collect();
    funcs.sort();
    assert_eq!(funcs, ["Profiler", "genPrimes", "handleClick", "isPrime"]);
    assert!(thread.func_table.is_js.iter().all(|js| *js));
    let generate = Some("http://localhost:3000/generate.js");
    assert_eq!(thread.location("isPrime"), (generate, Some(6), Some(17)));
    assert_eq!(thread.location("genPrimes"), (generate, Some(15), Some(26)));
    assert_eq!(thread.location("Profiler"), (None, None, None));
    // Times are the trace's, from a start time of 0 (ns precision).
    for (got, want) in thread.times().iter().zip(&t.samples) {
        assert!(
            (got - want.timestamp).abs() < 1e-5,
            "{got} vs {}",
            want.timestamp
        );
    }
    assert!(thread.samples.weight.iter().all(|w| *w == 1));
    // CPU deltas (µs) are the gaps: 0.755 ms from the first sample to the second.
    assert_eq!(thread.samples.cpu_delta[1], 755);
}

#[test]
fn one_thread_per_trace_and_empty_samples() {
    let t = seed();
    let mut empty = ProfilerTrace::default();
    let markers = [
        None,
        Some(ProfilerMarker::Script),
        Some(ProfilerMarker::Gc),
        None,
    ];
    for (i, m) in markers.into_iter().enumerate() {
        empty.samples.push(ProfilerSample {
            marker: m,
            stack_id: None,
            timestamp: 100.0 + i as f64,
        });
    }
    let p = profile(&[("b", &t), ("a", &empty), ("c", &t)]);
    let out: Processed = serde_json::from_str(&json(&p, "")).unwrap();
    assert_eq!(out.meta.product, "jsprof");
    assert_eq!(out.threads.len(), 3);
    let mut names: Vec<&str> = out.threads.iter().map(|t| t.name.as_str()).collect();
    names.sort();
    assert_eq!(names, ["a", "b", "c"]);
    for thread in &out.threads {
        let trace = if thread.name == "a" { &empty } else { &t };
        assert_eq!(thread.samples.length, trace.samples.len());
        thread.stacks(&out.meta.categories);
    }
    let a = out.threads.iter().find(|t| t.name == "a").unwrap();
    let pair = |n: &str, c: &str| vec![(n.to_owned(), c.to_owned())];
    assert_eq!(
        a.stacks(&out.meta.categories),
        [
            pair("(idle)", "Idle"),
            pair("(program)", "Other"),
            pair("(garbage collector)", "Other"),
            pair("(idle)", "Idle"),
        ]
    );
    assert_eq!(a.samples.cpu_delta, [0, 1000, 1000, 0]);
    assert!(a.func_table.is_js.iter().all(|js| !js));
    assert_eq!(a.location("(idle)"), (None, None, None));
}

#[test]
fn functions_sharing_a_name_stay_apart() {
    let frame = |resource| ProfilerFrame {
        name: String::new(),
        resource_id: Some(resource),
        line: Some(3),
        column: Some(9),
    };
    let mut t = ProfilerTrace {
        resources: vec!["a.js".into(), "b.js".into()],
        frames: vec![frame(0), frame(1)],
        ..Default::default()
    };
    for (i, f) in [0, 1].into_iter().enumerate() {
        t.stacks.push(jsprof_profiler::ProfilerStack {
            frame_id: f,
            parent_id: None,
        });
        t.samples.push(ProfilerSample {
            marker: None,
            stack_id: Some(i as u64),
            timestamp: i as f64,
        });
    }
    let p = profile(&[("t", &t)]);
    let out: Processed = serde_json::from_str(&json(&p, "")).unwrap();
    let thread = &out.threads[0];
    assert_eq!(thread.func_table.length, 2);
    let a = "(anonymous) (a.js:3:9)";
    assert_eq!(thread.location(a), (Some("a.js"), Some(3), Some(9)));
    let b = "(anonymous) (b.js:3:9)";
    assert_eq!(thread.location(b), (Some("b.js"), Some(3), Some(9)));
}

#[test]
fn golden_seed_002() {
    let p = profile(&[("seed-002.json", &seed())]);
    let got = json(&p, "seed-002");
    if std::env::var_os("JSPROF_BLESS").is_some_and(|v| v == "1") {
        std::fs::create_dir_all(std::path::Path::new(GOLDEN).parent().unwrap()).unwrap();
        std::fs::write(GOLDEN, &got).unwrap();
    }
    let want = std::fs::read_to_string(GOLDEN).expect("golden file (JSPROF_BLESS=1 writes it)");
    assert!(got == want, "Firefox profile differs from {GOLDEN}");
    assert_eq!(json(&p, "seed-002"), got);
}
