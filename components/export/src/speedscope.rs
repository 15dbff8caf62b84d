//! speedscope's file format (<https://www.speedscope.app/file-format-schema.json>, described
//! at <https://github.com/jlfwong/speedscope/wiki/Importing-from-custom-sources>), which
//! <https://www.speedscope.app> opens.
//!
//! - `shared.frames`: every function of the merged profile, at the index of its
//!   [`crate::model::FrameId`], as `{name, file, line, col}` (the display name, the
//!   resource's URL, and the spec's 1-based line and column, which speedscope's are too;
//!   each left out when the trace has none). After them, one frame per kind of sample
//!   without a stack that occurs, named by [`Empty::label`](crate::model::Empty::label) (`(idle)`...), shared by all
//!   profiles.
//! - `profiles`: one `sampled` profile per trace (thread), named by the trace, in
//!   milliseconds on the trace's own time origin. `samples` are stacks of frame indices,
//!   root first. A sample's weight is the time to the next sample, the last one's the
//!   trace's estimated sampling interval (as in [`crate::cpuprofile`]), so `startValue` is
//!   the first sample's time and `endValue` the last's plus that interval. Times are
//!   rounded to whole µs first, and a sample listed after a later one weighs 0 (as in
//!   [`crate::cpuprofile`]), so no weight is negative.
//! - `name` is the title, `exporter` `jsprof <version>`.

use std::io::{self, BufWriter, Write};

use serde::Serialize;

use crate::cpuprofile::{interval_us, require_samples, sample_times};
use crate::model::{At, Profile};

const SCHEMA: &str = "https://www.speedscope.app/file-format-schema.json";

/// Writes `profile` (see [`crate::format::Format`]); `title` names the file. The profile
/// must keep its samples ([`crate::model::Keep::Samples`]).
pub fn write(profile: &Profile, title: &str, out: &mut dyn Write) -> io::Result<()> {
    require_samples(profile, "speedscope's format")?;
    let stacks = Stacks::of(profile);
    let file = File {
        schema: SCHEMA,
        shared: Shared {
            frames: stacks.frames,
        },
        profiles: profiles(profile, &stacks.by_node, &stacks.by_empty),
        name: title,
        active_profile_index: 0,
        exporter: format!("jsprof {}", env!("CARGO_PKG_VERSION")),
    };
    let mut out = BufWriter::new(out);
    serde_json::to_writer(&mut out, &file)?;
    out.flush()
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct File<'a> {
    #[serde(rename = "$schema")]
    schema: &'static str,
    shared: Shared,
    profiles: Vec<SampledProfile<'a>>,
    name: &'a str,
    active_profile_index: u32,
    exporter: String,
}

#[derive(Debug, Serialize)]
struct Shared {
    frames: Vec<FrameOut>,
}

#[derive(Debug, Serialize)]
struct FrameOut {
    name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    file: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    line: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    col: Option<u64>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct SampledProfile<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    name: &'a str,
    unit: &'static str,
    start_value: f64,
    end_value: f64,
    samples: Vec<&'a [u32]>,
    weights: Vec<f64>,
}

/// The frames, and the stack (frame indices, root first) of each call path and empty kind
/// that a sample is at, each made once.
#[derive(Debug)]
struct Stacks {
    frames: Vec<FrameOut>,
    /// By [`crate::model::NodeId`]; empty for a path no sample is at.
    by_node: Vec<Vec<u32>>,
    /// By [`Empty`]; empty for a kind no sample is.
    by_empty: [Vec<u32>; 3],
}

impl Stacks {
    fn of(profile: &Profile) -> Stacks {
        let mut frames: Vec<FrameOut> = profile
            .frames()
            .iter()
            .map(|f| FrameOut {
                name: f.display_name().to_owned(),
                file: f.resource.clone(),
                line: f.line,
                col: f.column,
            })
            .collect();
        let mut by_node = vec![Vec::new(); profile.nodes().len()];
        let mut by_empty: [Vec<u32>; 3] = Default::default();
        for sample in profile.threads().iter().flat_map(|t| &t.samples) {
            match sample.at {
                At::Stack(node) if by_node[node as usize].is_empty() => {
                    by_node[node as usize] = profile.stack(node);
                }
                At::Empty(kind) if by_empty[kind as usize].is_empty() => {
                    by_empty[kind as usize] = vec![frames.len() as u32];
                    frames.push(FrameOut {
                        name: kind.label().to_owned(),
                        file: None,
                        line: None,
                        col: None,
                    });
                }
                _ => {}
            }
        }
        Stacks {
            frames,
            by_node,
            by_empty,
        }
    }
}

fn profiles<'a>(
    profile: &'a Profile,
    by_node: &'a [Vec<u32>],
    by_empty: &'a [Vec<u32>; 3],
) -> Vec<SampledProfile<'a>> {
    let ms = |us: i64| us as f64 / 1000.0;
    profile
        .threads()
        .iter()
        .map(|thread| {
            let times = sample_times(thread);
            let interval = interval_us(profile, Some(thread));
            let samples = thread
                .samples
                .iter()
                .map(|s| match s.at {
                    At::Stack(node) => by_node[node as usize].as_slice(),
                    At::Empty(kind) => by_empty[kind as usize].as_slice(),
                })
                .collect();
            let weights = times
                .iter()
                .enumerate()
                .map(|(i, &t)| ms(times.get(i + 1).map_or(interval, |&next| next - t)))
                .collect();
            let start = times.first().copied().unwrap_or(0);
            let end = times.last().map_or(0, |&t| t + interval);
            SampledProfile {
                kind: "sampled",
                name: &thread.name,
                unit: "milliseconds",
                start_value: ms(start),
                end_value: ms(end),
                samples,
                weights,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpuprofile::golden;
    use crate::model::Keep;
    use jsprof_profiler::{
        ProfilerFrame, ProfilerMarker, ProfilerSample, ProfilerStack, ProfilerTrace,
    };
    use serde_json::Value;

    fn to_json(profile: &Profile) -> Value {
        let mut out = Vec::new();
        write(profile, "the title", &mut out).unwrap();
        let file: Value = serde_json::from_slice(&out).unwrap();
        // What every speedscope file has.
        assert_eq!(file["$schema"], SCHEMA);
        assert_eq!(file["activeProfileIndex"], 0);
        assert!(file["exporter"].as_str().unwrap().starts_with("jsprof "));
        let frames = file["shared"]["frames"].as_array().unwrap().len() as u64;
        for p in file["profiles"].as_array().unwrap() {
            assert_eq!(
                (p["type"].as_str(), p["unit"].as_str()),
                (Some("sampled"), Some("milliseconds"))
            );
            let samples = p["samples"].as_array().unwrap();
            let weights = p["weights"].as_array().unwrap();
            assert_eq!(samples.len(), weights.len());
            for s in samples {
                let s = s.as_array().unwrap();
                assert!(!s.is_empty());
                assert!(s.iter().all(|f| f.as_u64().unwrap() < frames));
            }
            // In whole µs, the weights add up to the profile's span.
            let us = |v: &Value| (v.as_f64().unwrap() * 1000.0).round() as i64;
            assert!(weights.iter().all(|w| us(w) >= 0));
            let sum: i64 = weights.iter().map(us).sum();
            assert_eq!(sum, us(&p["endValue"]) - us(&p["startValue"]));
        }
        file
    }

    fn frame_names(file: &Value, stack: &Value) -> Vec<String> {
        stack
            .as_array()
            .unwrap()
            .iter()
            .map(|i| {
                file["shared"]["frames"][i.as_u64().unwrap() as usize]["name"]
                    .as_str()
                    .unwrap()
                    .to_owned()
            })
            .collect()
    }

    #[test]
    fn golden_seed_002() {
        let mut out = Vec::new();
        write(&golden::seed(Keep::Samples), "seed-002", &mut out).unwrap();
        golden::check("speedscope.json", &out);
    }

    /// The seed's figures, worked out by hand from the fixture.
    #[test]
    fn seed_profile() {
        let file = to_json(&golden::seed(Keep::Samples));
        assert_eq!(file["name"], "the title");
        let profiles = file["profiles"].as_array().unwrap();
        assert_eq!(profiles.len(), 1);
        let p = &profiles[0];
        assert_eq!(p["name"], "seed-002");
        assert_eq!(
            frame_names(&file, &p["samples"][0]),
            ["handleClick", "Profiler"]
        );
        assert_eq!(
            frame_names(&file, &p["samples"][1]),
            ["handleClick", "genPrimes", "isPrime"]
        );
        assert_eq!(
            frame_names(&file, &p["samples"][9]),
            ["handleClick", "genPrimes"]
        );
        // Gaps to the next sample; the last gets the median gap, 0.625 ms.
        assert_eq!(p["weights"][0], 0.755);
        assert_eq!(p["weights"][3], 0.625);
        assert_eq!(p["weights"][9], 0.625);
        assert_eq!(p["startValue"], 2972.735);
        assert_eq!(p["endValue"], 2981.28);
        // 1-based as in the trace: handleClick at main.js 5:27.
        let handle_click = &file["shared"]["frames"][p["samples"][0][0].as_u64().unwrap() as usize];
        assert_eq!(handle_click["file"], "http://localhost:3000/main.js");
        assert_eq!(
            (&handle_click["line"], &handle_click["col"]),
            (&5.into(), &27.into())
        );
        // Profiler has no resource: no file, line or column at all.
        let profiler = &file["shared"]["frames"][p["samples"][0][1].as_u64().unwrap() as usize];
        assert_eq!(profiler.as_object().unwrap().len(), 1);
    }

    #[test]
    fn one_profile_per_trace_and_shared_pseudo_frames() {
        let trace = |t0: f64, markers: &[Option<ProfilerMarker>]| ProfilerTrace {
            frames: vec![ProfilerFrame {
                name: String::new(),
                resource_id: None,
                line: None,
                column: None,
            }],
            resources: vec![],
            stacks: vec![ProfilerStack {
                frame_id: 0,
                parent_id: None,
            }],
            samples: markers
                .iter()
                .enumerate()
                .map(|(i, &marker)| ProfilerSample {
                    marker,
                    stack_id: (marker == Some(ProfilerMarker::Style)).then_some(0),
                    timestamp: t0 + 2.0 * i as f64,
                })
                .collect(),
        };
        let style = Some(ProfilerMarker::Style);
        let gc = Some(ProfilerMarker::Gc);
        let mut profile = Profile::new(Keep::Samples);
        profile
            .add_trace("a", &trace(10.0, &[None, style, gc, None]), &mut |f| f)
            .unwrap();
        profile
            .add_trace("b", &trace(0.0, &[gc, None, style]), &mut |f| f)
            .unwrap();
        let file = to_json(&profile);
        let names: Vec<_> = file["shared"]["frames"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["name"].as_str().unwrap())
            .collect();
        // One frame per kind that occurs, in either trace; no (program).
        assert_eq!(names, ["(anonymous)", "(idle)", "(garbage collector)"]);
        let p = file["profiles"].as_array().unwrap();
        assert_eq!(
            (p[0]["name"].as_str(), p[1]["name"].as_str()),
            (Some("a"), Some("b"))
        );
        assert_eq!(p[0]["samples"], serde_json::json!([[1], [0], [2], [1]]));
        assert_eq!(p[1]["samples"], serde_json::json!([[2], [1], [0]]));
        assert_eq!(p[0]["weights"], serde_json::json!([2.0, 2.0, 2.0, 2.0]));
        assert_eq!(
            (&p[1]["startValue"], &p[1]["endValue"]),
            (&0.0.into(), &6.0.into())
        );
    }

    #[test]
    fn a_profile_without_samples_is_refused() {
        let err = write(&golden::seed(Keep::Counts), "t", &mut Vec::new()).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
    }
}
