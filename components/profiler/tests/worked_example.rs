//! Seed 002's worked example ("Profile anatomy and format"): the same stacks in, the same
//! JSON out — through the spec's ID algorithms, and through a session's recorder.

use std::sync::Arc;

use jsprof_profiler::{
    FrameInfo, RawFrame, RawStack, RealmId, Recorder, Resolution, ResolvedSite, ScriptId,
    Symbolizer, TraceBuilder,
};

/// The JSON the guide shows, verbatim.
const EXPECTED: &str = r#"{
  "frames": [
    { "name": "Profiler" },
    { "column": 27, "line": 5, "name": "handleClick", "resourceId": 0 },
    { "column": 17, "line": 6, "name": "isPrime", "resourceId": 1 },
    { "column": 26, "line": 15, "name": "genPrimes", "resourceId": 1 }
  ],
  "resources": [
    "http://localhost:3000/main.js",
    "http://localhost:3000/generate.js"
  ],
  "samples": [
    { "stackId": 1, "timestamp": 2972.734999999404 },
    { "stackId": 3, "timestamp": 2973.4899999946356 },
    { "stackId": 3, "timestamp": 2974.5700000077486 },
    { "stackId": 3, "timestamp": 2977.8649999946356 },
    { "stackId": 3, "timestamp": 2978.4899999946356 },
    { "stackId": 3, "timestamp": 2978.6950000077486 },
    { "stackId": 3, "timestamp": 2978.9500000029802 },
    { "stackId": 3, "timestamp": 2979.405000001192 },
    { "stackId": 2, "timestamp": 2980.030000001192 },
    { "stackId": 2, "timestamp": 2980.655000001192 }
  ],
  "stacks": [
    { "frameId": 1 },
    { "frameId": 0, "parentId": 0 },
    { "frameId": 3, "parentId": 0 },
    { "frameId": 2, "parentId": 2 }
  ]
}"#;

const MAIN: &str = "http://localhost:3000/main.js";
const GENERATE: &str = "http://localhost:3000/generate.js";

fn info(name: &str, at: Option<(&str, u32, u32)>) -> FrameInfo {
    FrameInfo {
        name: name.into(),
        resource: at.map(|a| a.0.into()),
        line: at.map(|a| a.1),
        column: at.map(|a| a.2),
    }
}

/// The ten samples' stacks, outermost first, and their timestamps.
fn samples() -> Vec<(f64, Vec<FrameInfo>)> {
    let handle = info("handleClick", Some((MAIN, 5, 27)));
    let gen = info("genPrimes", Some((GENERATE, 15, 26)));
    let is_prime = info("isPrime", Some((GENERATE, 6, 17)));
    let ctor = info("Profiler", None);
    let ts = [
        2972.734999999404,
        2973.4899999946356,
        2974.5700000077486,
        2977.8649999946356,
        2978.4899999946356,
        2978.6950000077486,
        2978.9500000029802,
        2979.405000001192,
        2980.030000001192,
        2980.655000001192,
    ];
    ts.iter()
        .enumerate()
        .map(|(i, &t)| {
            let stack = match i {
                0 => vec![handle.clone(), ctor.clone()],
                1..=7 => vec![handle.clone(), gen.clone(), is_prime.clone()],
                _ => vec![handle.clone(), gen.clone()],
            };
            (t, stack)
        })
        .collect()
}

/// The guide's JSON with its whitespace removed (no string in it contains a space).
fn expected_compact() -> String {
    EXPECTED.chars().filter(|c| !c.is_whitespace()).collect()
}

#[test]
fn the_spec_algorithms_reproduce_the_guides_json() {
    let mut b = TraceBuilder::new();
    for (t, stack) in samples() {
        let id = b.stack_id_of(&stack);
        b.push_sample(t, id, None);
    }
    let trace = b.finish();
    // Byte-identical to the guide's JSON (with its whitespace removed).
    assert_eq!(trace.to_json(), expected_compact());
}

/// The host's view of main.js and generate.js: functions by definition position.
struct Primes;
impl Symbolizer for Primes {
    fn resource(&self, s: ScriptId) -> Option<String> {
        Some([MAIN, GENERATE][s.0 as usize].into())
    }
    fn resolve(&self, s: ScriptId, line: u32, _column: u32) -> Option<ResolvedSite> {
        let (name, line, column) = match (s.0, line) {
            (0, 5..=11) => ("handleClick", 5, 27),
            (1, 6..=13) => ("isPrime", 6, 17),
            (1, 15..=25) => ("genPrimes", 15, 26),
            _ => return None,
        };
        Some(ResolvedSite {
            name: name.into(),
            line,
            column,
        })
    }
}

#[test]
fn a_session_recorder_reproduces_the_guides_tables() {
    let realm = RealmId(1);
    let at = |script, line, column| RawFrame::at(realm, ScriptId(script), line, column);
    // Current positions vary from sample to sample; they resolve to the same frames.
    let ctor = RawFrame::resolved(realm, None, "Profiler", None, None);
    let mut rec = Recorder::new(realm, 0, Resolution::Coarse, 10_000);
    for (i, (t, _)) in samples().into_iter().enumerate() {
        let stack: Vec<RawFrame> = match i {
            0 => vec![at(0, 6, 20), ctor.clone()],
            1..=7 => vec![
                at(0, 7, 18),
                at(1, 17 + i as u32 % 3, 5),
                at(1, 7, 9 + i as u32),
            ],
            _ => vec![at(0, 7, 18), at(1, 19, 7)],
        };
        let stack: RawStack = Arc::from(stack);
        rec.add((t * 1e6) as u64, Some(&stack), None);
    }
    let trace = rec.build(&Primes);
    let expected: jsprof_profiler::ProfilerTrace = serde_json::from_str(EXPECTED).unwrap();
    assert_eq!(trace.frames, expected.frames);
    assert_eq!(trace.resources, expected.resources);
    assert_eq!(trace.stacks, expected.stacks);
    let ids = |t: &jsprof_profiler::ProfilerTrace| {
        t.samples.iter().map(|s| s.stack_id).collect::<Vec<_>>()
    };
    assert_eq!(ids(&trace), ids(&expected));
    // Timestamps are floored to 100 µs.
    assert_eq!(trace.samples[0].timestamp, 2972.7);
    assert_eq!(trace.samples[9].timestamp, 2980.6);
}

#[test]
fn json_gzip_round_trips() {
    let trace: jsprof_profiler::ProfilerTrace = serde_json::from_str(EXPECTED).unwrap();
    let gz = trace.to_json_gzip();
    assert_eq!(&gz[..2], &[0x1f, 0x8b]);
    let mut json = String::new();
    std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&gz[..]), &mut json).unwrap();
    assert_eq!(json, trace.to_json());
}
