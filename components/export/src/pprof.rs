//! pprof's profile format: a gzipped `perftools.profiles.Profile` protocol buffer (`.pb.gz`),
//! as `go tool pprof`, Google Cloud Profiler, Pyroscope and speedscope read it. The schema is
//! [`profile.proto`](https://github.com/google/pprof/blob/main/proto/profile.proto) (its
//! comments are the format's documentation), vendored in `proto/profile.proto` and compiled
//! by `build.rs` (`prost-build` with `protox`, no `protoc`); the types are in [`proto`].
//!
//! What is written:
//! - Two sample types, `samples/count` and `cpu/nanoseconds`; a sample's `cpu` value is its
//!   count × the sampling interval ([`Profile::interval_ms`], 10 ms when unknown), which is
//!   also `period` (`period_type` `cpu/nanoseconds`). `default_sample_type` is `cpu`.
//! - One `Function` and one `Location` (with one `Line`, no mapping, no address) per distinct
//!   frame, both with id = frame id + 1: `name` is [`Frame::display_name`], `system_name`
//!   the name exactly as the trace has it (empty for an anonymous function), `filename` the
//!   resource's URL, `start_line` and `Line.line` the frame's 1-based line (0 when unknown;
//!   the vendored schema has no column).
//! - One `Sample` per call path with samples of its own, aggregated over every trace; its
//!   `location_id`s are leaf first, as pprof wants them. Samples without a stack become a
//!   sample of one location whose function is named by [`Empty::label`] (`(idle)`,
//!   `(program)`, `(garbage collector)`).
//! - `duration_nanos` from [`Profile::duration_ms`] (the sum of the traces' spans);
//!   `time_nanos` is 0 (a trace's times are relative to its page, not to the epoch); the
//!   title, when not empty, is the profile's one `comment`.
//!
//! Everything is ordered by the profile's ids, so the same input gives the same bytes.
//!
//! [`Frame::display_name`]: crate::model::Frame::display_name

use std::io::{Read, Write};

use flate2::read::GzDecoder;
use flate2::write::GzEncoder;
use flate2::Compression;
use prost::Message;
use rustc_hash::FxHashMap;

use crate::model::{Empty, Profile};

/// The types generated from `proto/profile.proto` (package `perftools.profiles`).
#[allow(missing_docs, clippy::all)]
pub mod proto {
    include!(concat!(env!("OUT_DIR"), "/perftools.profiles.rs"));
}

/// The interval assumed when the traces do not tell it (fewer than two samples each).
const DEFAULT_INTERVAL_MS: f64 = 10.0;

/// Writes `profile` as a gzipped pprof profile (see the module's documentation). Works on
/// a [`crate::Keep::Counts`] profile.
pub fn write(profile: &Profile, title: &str, out: &mut dyn Write) -> std::io::Result<()> {
    let bytes = build(profile, title).encode_to_vec();
    let mut gz = GzEncoder::new(out, Compression::default());
    gz.write_all(&bytes)?;
    gz.finish()?;
    Ok(())
}

/// Reads a profile [`write()`] (or any pprof writer) wrote: gzipped, or the bare message.
pub fn decode(bytes: &[u8]) -> std::io::Result<proto::Profile> {
    let invalid = |e: prost::DecodeError| std::io::Error::new(std::io::ErrorKind::InvalidData, e);
    if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut raw = Vec::new();
        GzDecoder::new(bytes).read_to_end(&mut raw)?;
        proto::Profile::decode(raw.as_slice()).map_err(invalid)
    } else {
        proto::Profile::decode(bytes).map_err(invalid)
    }
}

/// pprof's string table: index 0 is always "".
struct Strings {
    table: Vec<String>,
    ids: FxHashMap<String, i64>,
}

impl Strings {
    fn new() -> Strings {
        let mut s = Strings {
            table: Vec::new(),
            ids: FxHashMap::default(),
        };
        s.id("");
        s
    }

    fn id(&mut self, s: &str) -> i64 {
        if let Some(id) = self.ids.get(s) {
            return *id;
        }
        let id = self.table.len() as i64;
        self.table.push(s.to_owned());
        self.ids.insert(s.to_owned(), id);
        id
    }
}

/// Whole nanoseconds of `ms`, saturating.
fn nanos(ms: f64) -> i64 {
    (ms * 1e6).round() as i64
}

/// The profile message, before encoding.
fn build(profile: &Profile, title: &str) -> proto::Profile {
    let mut strings = Strings::new();
    let mut value_type = |ty: &str, unit: &str| proto::ValueType {
        r#type: strings.id(ty),
        unit: strings.id(unit),
    };
    let sample_type = vec![
        value_type("samples", "count"),
        value_type("cpu", "nanoseconds"),
    ];
    let period_type = value_type("cpu", "nanoseconds");
    let interval = nanos(profile.interval_ms().unwrap_or(DEFAULT_INTERVAL_MS)).max(1);

    let mut functions = Vec::with_capacity(profile.frames().len() + 3);
    let mut locations = Vec::with_capacity(profile.frames().len() + 3);
    let mut add = |strings: &mut Strings, name: &str, system: &str, file: &str, line: u64| {
        let id = functions.len() as u64 + 1;
        functions.push(proto::Function {
            id,
            name: strings.id(name),
            system_name: strings.id(system),
            filename: strings.id(file),
            start_line: line as i64,
        });
        locations.push(proto::Location {
            id,
            line: vec![proto::Line {
                function_id: id,
                line: line as i64,
            }],
            ..Default::default()
        });
        id
    };
    // Frame `f` is function and location `f + 1`.
    for f in profile.frames() {
        add(
            &mut strings,
            f.display_name(),
            &f.name,
            f.resource.as_deref().unwrap_or(""),
            f.line.unwrap_or(0),
        );
    }

    let values = |count: u64| vec![count as i64, (count as i64).saturating_mul(interval)];
    let mut samples = Vec::new();
    for (id, node) in profile.nodes().iter().enumerate() {
        let count = profile.self_count(id as u32);
        if count == 0 {
            continue;
        }
        let mut location_id = Vec::with_capacity(node.depth as usize + 1);
        let mut at = Some(id as u32);
        while let Some(n) = at {
            let node = profile.node(n);
            location_id.push(u64::from(node.frame) + 1);
            at = node.parent;
        }
        samples.push(proto::Sample {
            location_id,
            value: values(count),
            ..Default::default()
        });
    }
    for kind in Empty::ALL {
        let count = profile.empty_count(kind);
        if count > 0 {
            let id = add(&mut strings, kind.label(), kind.label(), "", 0);
            samples.push(proto::Sample {
                location_id: vec![id],
                value: values(count),
                ..Default::default()
            });
        }
    }

    let default_sample_type = strings.id("cpu");
    let comment = if title.is_empty() {
        Vec::new()
    } else {
        vec![strings.id(title)]
    };
    proto::Profile {
        sample_type,
        sample: samples,
        location: locations,
        function: functions,
        string_table: strings.table,
        duration_nanos: nanos(profile.duration_ms()),
        period_type: Some(period_type),
        period: interval,
        comment,
        default_sample_type,
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::model::Keep;
    use jsprof_profiler::{ProfilerMarker, ProfilerSample, ProfilerTrace};

    const FIXTURE: &str = include_str!("../tests/fixtures/seed-002.json");
    const GOLDEN: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/golden/seed-002.pprof.txt"
    );

    fn trace() -> ProfilerTrace {
        serde_json::from_str(FIXTURE).unwrap()
    }

    fn profile(keep: Keep, traces: &[&ProfilerTrace]) -> Profile {
        let mut p = Profile::new(keep);
        for (i, t) in traces.iter().enumerate() {
            p.add_trace(&format!("t{i}"), t, &mut |f| f).unwrap();
        }
        p
    }

    fn roundtrip(p: &Profile, title: &str) -> proto::Profile {
        let mut out = Vec::new();
        write(p, title, &mut out).unwrap();
        assert_eq!(out[..2], [0x1f, 0x8b], "gzipped");
        decode(&out).unwrap()
    }

    fn string(pb: &proto::Profile, i: i64) -> &str {
        &pb.string_table[usize::try_from(i).unwrap()]
    }

    /// Each sample's stack as function names, root first (the reverse of pprof's order),
    /// with its `[count, cpu]` values; the references are checked on the way.
    fn paths(pb: &proto::Profile) -> BTreeMap<Vec<String>, Vec<i64>> {
        let mut out = BTreeMap::new();
        for s in &pb.sample {
            assert_eq!(s.value.len(), pb.sample_type.len());
            let mut names: Vec<String> = s
                .location_id
                .iter()
                .map(|id| {
                    let loc = pb.location.iter().find(|l| l.id == *id).expect("location");
                    assert_eq!(loc.line.len(), 1);
                    let f = pb.function.iter().find(|f| f.id == loc.line[0].function_id);
                    string(pb, f.expect("function").name).to_owned()
                })
                .collect();
            names.reverse();
            assert!(
                out.insert(names, s.value.clone()).is_none(),
                "one sample per path"
            );
        }
        out
    }

    /// The model's call paths with samples, root first, as the decoded profile must have them.
    fn model_paths(p: &Profile, interval_ns: i64) -> BTreeMap<Vec<String>, Vec<i64>> {
        let mut out = BTreeMap::new();
        for id in 0..p.nodes().len() as u32 {
            let count = p.self_count(id) as i64;
            if count > 0 {
                let stack = p.stack(id);
                let names = stack.iter().map(|f| p.frame(*f).display_name().to_owned());
                let names = names.collect();
                out.insert(names, vec![count, count * interval_ns]);
            }
        }
        for kind in Empty::ALL {
            let count = p.empty_count(kind) as i64;
            if count > 0 {
                out.insert(
                    vec![kind.label().to_owned()],
                    vec![count, count * interval_ns],
                );
            }
        }
        out
    }

    #[test]
    fn seed_002_decodes_to_the_model() {
        let t = trace();
        let p = profile(Keep::Counts, &[&t]);
        let pb = roundtrip(&p, "seed-002");
        assert_eq!(pb.string_table[0], "");
        let types: Vec<_> = pb
            .sample_type
            .iter()
            .map(|v| (string(&pb, v.r#type), string(&pb, v.unit)))
            .collect();
        assert_eq!(types, [("samples", "count"), ("cpu", "nanoseconds")]);
        let period = pb.period_type.as_ref().unwrap();
        assert_eq!(
            (string(&pb, period.r#type), string(&pb, period.unit)),
            ("cpu", "nanoseconds")
        );
        // The fixture's median gap is 0.625 ms.
        let interval = (p.interval_ms().unwrap() * 1e6).round() as i64;
        assert_eq!(pb.period, interval);
        assert_eq!(
            pb.duration_nanos,
            ((2980.655000001192 - 2972.734999999404) * 1e6_f64).round() as i64
        );
        assert_eq!(
            pb.comment
                .iter()
                .map(|c| string(&pb, *c))
                .collect::<Vec<_>>(),
            ["seed-002"]
        );

        // Leaf-first location ids, reversed, are the model's root-first paths, with counts.
        assert_eq!(paths(&pb), model_paths(&p, interval));

        // Self samples per function name equal the trace's own: the leaf frames of its 10
        // samples (1 Profiler, 7 isPrime, 2 genPrimes).
        let mut leaf: BTreeMap<&str, i64> = BTreeMap::new();
        for s in &t.samples {
            let stack = &t.stacks[s.stack_id.unwrap() as usize];
            *leaf
                .entry(&t.frames[stack.frame_id as usize].name)
                .or_default() += 1;
        }
        let mut got: BTreeMap<&str, i64> = BTreeMap::new();
        for s in &pb.sample {
            let loc = &pb.location[(s.location_id[0] - 1) as usize];
            let f = &pb.function[(loc.line[0].function_id - 1) as usize];
            *got.entry(string(&pb, f.name)).or_default() += s.value[0];
        }
        assert_eq!(got, leaf);
        assert_eq!(got.values().sum::<i64>(), 10);

        // Functions carry where they are.
        let is_prime = pb
            .function
            .iter()
            .find(|f| string(&pb, f.name) == "isPrime")
            .unwrap();
        assert_eq!(
            string(&pb, is_prime.filename),
            "http://localhost:3000/generate.js"
        );
        assert_eq!(is_prime.start_line, 6);
        let profiler = pb
            .function
            .iter()
            .find(|f| string(&pb, f.name) == "Profiler")
            .unwrap();
        assert_eq!((profiler.filename, profiler.start_line), (0, 0));
    }

    #[test]
    fn counts_aggregate_over_traces_and_empty_samples_are_pseudo_functions() {
        let t = trace();
        let mut empty = ProfilerTrace::default();
        for (i, m) in [
            None,
            None,
            Some(ProfilerMarker::Script),
            Some(ProfilerMarker::Gc),
        ]
        .into_iter()
        .enumerate()
        {
            empty.samples.push(ProfilerSample {
                marker: m,
                stack_id: None,
                timestamp: i as f64 * 2.0,
            });
        }
        let p = profile(Keep::Counts, &[&t, &t, &empty]);
        let pb = roundtrip(&p, "");
        assert!(pb.comment.is_empty());
        let interval = pb.period;
        let got = paths(&pb);
        assert_eq!(got, model_paths(&p, interval));
        let key = |names: &[&str]| names.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(got[&key(&["handleClick", "genPrimes", "isPrime"])][0], 14);
        assert_eq!(got[&key(&["(idle)"])], [2, 2 * interval]);
        assert_eq!(got[&key(&["(program)"])][0], 1);
        assert_eq!(got[&key(&["(garbage collector)"])][0], 1);
        // Ids are unique and every function has its one location.
        let mut ids: Vec<u64> = pb.function.iter().map(|f| f.id).collect();
        ids.dedup();
        assert_eq!(ids.len(), pb.location.len());
    }

    #[test]
    fn an_unknown_interval_is_10_ms() {
        let mut t = trace();
        t.samples.truncate(1);
        let pb = roundtrip(&profile(Keep::Counts, &[&t]), "");
        assert_eq!(pb.period, 10_000_000);
        assert_eq!(pb.sample[0].value, [1, 10_000_000]);
        assert_eq!(pb.duration_nanos, 0);
    }

    #[test]
    fn decode_rejects_garbage() {
        assert!(decode(&[0x1f, 0x8b, 0, 1, 2]).is_err());
        assert!(decode(&[0xff, 0xff, 0xff]).is_err());
    }

    #[test]
    fn golden_seed_002() {
        let p = profile(Keep::Counts, &[&trace()]);
        let mut bytes = Vec::new();
        write(&p, "seed-002", &mut bytes).unwrap();
        let got = format!("{:#?}\n", decode(&bytes).unwrap());
        if std::env::var_os("JSPROF_BLESS").is_some_and(|v| v == "1") {
            std::fs::create_dir_all(std::path::Path::new(GOLDEN).parent().unwrap()).unwrap();
            std::fs::write(GOLDEN, &got).unwrap();
        }
        let want = std::fs::read_to_string(GOLDEN).expect("golden file (JSPROF_BLESS=1 writes it)");
        assert!(got == want, "decoded pprof differs from {GOLDEN}");
        // The bytes themselves are deterministic too (no time in the gzip header).
        let mut again = Vec::new();
        write(&p, "seed-002", &mut again).unwrap();
        assert_eq!(again, bytes);
    }
}
