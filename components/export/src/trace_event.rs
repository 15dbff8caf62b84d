//! The Trace Event format
//! (<https://docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU>) with a
//! CPU profile in it as Chrome's tracing writes one (V8's `CpuProfile::StreamPendingTraceEvents`):
//! what Perfetto's JSON importer and the Firefox Profiler's Chrome importer read.
//!
//! `{"traceEvents": [...]}`, all in process 1 (named by the title, a `process_name`
//! metadata event). Each trace (thread) `i` of the profile, from 0, gets thread id `i + 1`,
//! named by a `thread_name` metadata event, and a profile of its own:
//!
//! - one `Profile` event (ph `P`, category `disabled-by-default-v8.cpu_profiler`) whose
//!   `args.data.startTime` is when the profile starts, one sampling interval before its
//!   first sample (as in [`crate::cpuprofile`]);
//! - `ProfileChunk` events of at most [`CHUNK_SAMPLES`] samples, as V8 flushes them:
//!   `args.data.cpuProfile.nodes` lists the nodes first reached by the chunk's samples
//!   (`{id, parent, callFrame}`, the parent omitted at the root; so a node always comes in
//!   the chunk of its first sample or before), `args.data.cpuProfile.samples` their node
//!   ids, and `args.data.timeDeltas` the µs from the previous sample (from `startTime` for
//!   the first). A chunk's `ts` is its last sample's time.
//! - a last `ProfileChunk` with only `args.data.endTime`, the last sample's time, as V8's
//!   `CpuProfile::FinishProfile` writes it (speedscope takes the profile's length from it;
//!   Perfetto and the Firefox Profiler skip it).
//!
//! The profile's `id` is the thread id in hex (`"0x1"`, `"0x2"`...): both importers find a
//! profile's chunks by `id` and `pid`, so one id per thread keeps threads apart. Node ids
//! are 1 to N within each thread (the Firefox Profiler indexes its frames by `id - 1`).
//! Times are whole µs (`ts` and `startTime` on each trace's own time origin: threads are
//! separate tracks, so unlike the `.cpuprofile` they are not laid end to end). Call frames
//! are those of the `.cpuprofile`, made by the same `cpuprofile::Tree`: 0-based `lineNumber` and
//! `columnNumber` (-1 for none), `url` `""` for none, the same `scriptId` per URL in every
//! thread (a string, as in the `.cpuprofile`, where V8's traces have a number: neither
//! importer reads it).

use std::io::{self, BufWriter, Write};

use serde::Serialize;

use crate::cpuprofile::{interval_us, require_samples, sample_times, script_ids, CallFrame, Tree};
use crate::model::Profile;

/// The most samples in one `ProfileChunk` (V8's `kSamplesFlushCount`).
pub const CHUNK_SAMPLES: usize = 100;

/// The process every thread is in.
const PID: u32 = 1;
/// V8's category for its CPU profile events.
const CATEGORY: &str = "disabled-by-default-v8.cpu_profiler";

/// Writes `profile` (see [`crate::format::Format`]); `title` names the process. The profile
/// must keep its samples ([`crate::model::Keep::Samples`]).
pub fn write(profile: &Profile, title: &str, out: &mut dyn Write) -> io::Result<()> {
    require_samples(profile, "the Trace Event format")?;
    let events = events(profile, title);
    let mut out = BufWriter::new(out);
    serde_json::to_writer(
        &mut out,
        &TraceFile {
            trace_events: events,
        },
    )?;
    out.flush()
}

#[derive(Debug, Serialize)]
struct TraceFile {
    #[serde(rename = "traceEvents")]
    trace_events: Vec<Event>,
}

#[derive(Debug, Serialize)]
struct Event {
    name: &'static str,
    cat: &'static str,
    ph: &'static str,
    pid: u32,
    tid: u32,
    ts: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<String>,
    args: Args,
}

#[derive(Debug, Serialize)]
#[serde(untagged)]
enum Args {
    Name { name: String },
    Profile { data: ProfileData },
    Chunk { data: ChunkData },
    End { data: EndData },
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ProfileData {
    start_time: i64,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct EndData {
    end_time: i64,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ChunkData {
    cpu_profile: ChunkProfile,
    time_deltas: Vec<i64>,
}

#[derive(Debug, Serialize)]
struct ChunkProfile {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    nodes: Vec<ChunkNode>,
    samples: Vec<u32>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ChunkNode {
    id: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    parent: Option<u32>,
    call_frame: CallFrame,
}

fn metadata(name: &'static str, tid: u32, value: &str) -> Event {
    Event {
        name,
        cat: "__metadata",
        ph: "M",
        pid: PID,
        tid,
        ts: 0,
        id: None,
        args: Args::Name {
            name: value.to_owned(),
        },
    }
}

fn events(profile: &Profile, title: &str) -> Vec<Event> {
    let scripts = script_ids(profile);
    let mut events = vec![metadata("process_name", 0, title)];
    for (i, thread) in profile.threads().iter().enumerate() {
        let tid = i as u32 + 1;
        let id = format!("{tid:#x}");
        events.push(metadata("thread_name", tid, &thread.name));
        let times = sample_times(thread);
        let start = times
            .first()
            .map_or(0, |first| first - interval_us(profile, Some(thread)));
        events.push(Event {
            name: "Profile",
            cat: CATEGORY,
            ph: "P",
            pid: PID,
            tid,
            ts: start,
            id: Some(id.clone()),
            args: Args::Profile {
                data: ProfileData { start_time: start },
            },
        });
        let mut tree = Tree::new(profile, &scripts);
        let mut sent = 0;
        let mut previous = start;
        for (samples, times) in thread
            .samples
            .chunks(CHUNK_SAMPLES)
            .zip(times.chunks(CHUNK_SAMPLES))
        {
            let mut ids = Vec::with_capacity(samples.len());
            let mut time_deltas = Vec::with_capacity(samples.len());
            for (sample, &time) in samples.iter().zip(times) {
                ids.push(tree.id(sample.at));
                time_deltas.push(time - previous);
                previous = time;
            }
            let nodes = tree.nodes()[sent..]
                .iter()
                .map(|n| ChunkNode {
                    id: n.id,
                    parent: n.parent,
                    call_frame: n.call_frame.clone(),
                })
                .collect();
            sent = tree.nodes().len();
            events.push(profile_chunk(
                tid,
                previous,
                id.clone(),
                Args::Chunk {
                    data: ChunkData {
                        cpu_profile: ChunkProfile {
                            nodes,
                            samples: ids,
                        },
                        time_deltas,
                    },
                },
            ));
        }
        events.push(profile_chunk(
            tid,
            previous,
            id,
            Args::End {
                data: EndData { end_time: previous },
            },
        ));
    }
    events
}

/// A `ProfileChunk` event of profile `id` on thread `tid`.
fn profile_chunk(tid: u32, ts: i64, id: String, args: Args) -> Event {
    Event {
        name: "ProfileChunk",
        cat: CATEGORY,
        ph: "P",
        pid: PID,
        tid,
        ts,
        id: Some(id),
        args,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpuprofile::golden;
    use crate::model::Keep;
    use jsprof_profiler::{ProfilerFrame, ProfilerSample, ProfilerStack, ProfilerTrace};
    use serde_json::Value;
    use std::collections::BTreeMap;

    fn to_json(profile: &Profile, title: &str) -> Vec<u8> {
        let mut out = Vec::new();
        write(profile, title, &mut out).unwrap();
        out
    }

    /// One thread's profile as an importer rebuilds it from the events.
    #[derive(Debug, Default)]
    struct Rebuilt {
        tid: u64,
        name: String,
        start: i64,
        /// id → (parent, callFrame), in the order listed.
        nodes: Vec<(u64, Option<u64>, Value)>,
        samples: Vec<u64>,
        /// Absolute sample times, µs.
        times: Vec<i64>,
        chunk_sizes: Vec<usize>,
        /// The last chunk's `endTime`.
        end: Option<i64>,
    }

    /// Reads the file back the way both importers do, checking on the way what they rely
    /// on: chunks found by `id` and `pid`, nodes listed before any sample or child uses
    /// them, node ids 1..N per thread, as many deltas as samples, none negative.
    fn rebuild(json: &[u8]) -> Vec<Rebuilt> {
        let file: Value = serde_json::from_slice(json).unwrap();
        let events = file["traceEvents"].as_array().unwrap();
        let mut names = BTreeMap::new();
        // In the order of their `Profile` events.
        let mut threads: Vec<(String, Rebuilt)> = Vec::new();
        for e in events {
            assert_eq!(e["pid"], 1);
            assert!(e["ts"].is_i64(), "{e}");
            let tid = e["tid"].as_u64().unwrap();
            match (e["ph"].as_str().unwrap(), e["name"].as_str().unwrap()) {
                ("M", "thread_name") => {
                    names.insert(tid, e["args"]["name"].as_str().unwrap().to_owned());
                }
                ("M", "process_name") => {}
                ("P", "Profile") => {
                    let id = e["id"].as_str().unwrap().to_owned();
                    let start = e["args"]["data"]["startTime"].as_i64().unwrap();
                    let name = names[&tid].clone();
                    assert!(
                        threads.iter().all(|(i, _)| *i != id),
                        "two profiles with one id"
                    );
                    let rebuilt = Rebuilt {
                        tid,
                        name,
                        start,
                        ..Default::default()
                    };
                    threads.push((id, rebuilt));
                }
                ("P", "ProfileChunk") => {
                    let (_, t) = threads
                        .iter_mut()
                        .find(|(id, _)| id == e["id"].as_str().unwrap())
                        .unwrap();
                    assert_eq!(t.tid, tid);
                    assert!(t.end.is_none(), "a chunk after the end");
                    let data = &e["args"]["data"];
                    if let Some(end) = data["endTime"].as_i64() {
                        assert!(data.get("cpuProfile").is_none());
                        assert_eq!(end, t.times.last().copied().unwrap_or(t.start));
                        assert_eq!(e["ts"].as_i64(), Some(end));
                        t.end = Some(end);
                        continue;
                    }
                    let empty = Vec::new();
                    let nodes = data["cpuProfile"]["nodes"].as_array().unwrap_or(&empty);
                    for n in nodes {
                        let id = n["id"].as_u64().unwrap();
                        assert_eq!(id, t.nodes.len() as u64 + 1, "ids are 1..N in order");
                        let parent = n["parent"].as_u64();
                        assert_eq!(parent.is_none(), id == 1, "only the root has no parent");
                        assert!(parent.is_none_or(|p| p < id), "parent {parent:?} of {id}");
                        t.nodes.push((id, parent, n["callFrame"].clone()));
                    }
                    let samples = data["cpuProfile"]["samples"].as_array().unwrap();
                    let deltas = data["timeDeltas"].as_array().unwrap();
                    assert_eq!(samples.len(), deltas.len());
                    t.chunk_sizes.push(samples.len());
                    for (s, d) in samples.iter().zip(deltas) {
                        let s = s.as_u64().unwrap();
                        assert!(
                            s >= 1 && s <= t.nodes.len() as u64,
                            "sample {s} before its node"
                        );
                        let d = d.as_i64().unwrap();
                        assert!(d >= 0);
                        let previous = t.times.last().copied().unwrap_or(t.start);
                        t.times.push(previous + d);
                        t.samples.push(s);
                    }
                    assert_eq!(e["ts"].as_i64(), t.times.last().copied());
                }
                other => panic!("unexpected event {other:?}"),
            }
        }
        let threads: Vec<Rebuilt> = threads.into_iter().map(|(_, t)| t).collect();
        assert!(
            threads.iter().all(|t| t.end.is_some()),
            "every profile ends"
        );
        threads
    }

    #[test]
    fn golden_seed_002() {
        golden::check(
            "trace.json",
            &to_json(&golden::seed(Keep::Samples), "seed-002"),
        );
    }

    #[test]
    fn seed_is_one_thread_with_the_cpuprofile_tree() {
        let profile = golden::seed(Keep::Samples);
        let threads = rebuild(&to_json(&profile, "seed-002"));
        assert_eq!(threads.len(), 1);
        let t = &threads[0];
        assert_eq!((t.tid, t.name.as_str()), (1, "seed-002"));
        // One interval (0.625 ms) before the first sample, then the samples' own times.
        assert_eq!(t.start, 2_972_735 - 625);
        assert_eq!(t.times.first(), Some(&2_972_735));
        assert_eq!(t.times.last(), Some(&2_980_655));
        // The same nodes, ids and samples as the .cpuprofile.
        let mut cpu = Vec::new();
        crate::cpuprofile::write(&profile, "", &mut cpu).unwrap();
        let cpu: Value = serde_json::from_slice(&cpu).unwrap();
        let cpu_nodes = cpu["nodes"].as_array().unwrap();
        assert_eq!(cpu_nodes.len(), t.nodes.len());
        for (id, parent, frame) in &t.nodes {
            assert_eq!(&cpu_nodes[*id as usize - 1]["callFrame"], frame);
            if let Some(p) = parent {
                let children = &cpu_nodes[*p as usize - 1]["children"];
                assert!(children.as_array().unwrap().contains(&Value::from(*id)));
            }
        }
        let cpu_samples: Vec<u64> = serde_json::from_value(cpu["samples"].clone()).unwrap();
        assert_eq!(t.samples, cpu_samples);
        // isPrime (generate.js 6:17) is 0-based.
        let is_prime = &t.nodes[4].2;
        assert_eq!(is_prime["functionName"], "isPrime");
        assert_eq!(
            (&is_prime["lineNumber"], &is_prime["columnNumber"]),
            (&5.into(), &16.into())
        );
    }

    fn frames(n: usize) -> Vec<ProfilerFrame> {
        (0..n)
            .map(|i| ProfilerFrame {
                name: format!("f{i}"),
                resource_id: Some(0),
                line: Some(i as u64 + 1),
                column: None,
            })
            .collect()
    }

    /// `samples` samples 1 ms apart from `t0`, cycling through `stacks` chains of frames.
    fn trace(t0: f64, samples: usize, stacks: u64) -> ProfilerTrace {
        ProfilerTrace {
            frames: frames(stacks as usize),
            resources: vec!["a.js".into()],
            stacks: (0..stacks)
                .map(|i| ProfilerStack {
                    frame_id: i,
                    parent_id: i.checked_sub(1),
                })
                .collect(),
            samples: (0..samples)
                .map(|i| ProfilerSample {
                    marker: None,
                    // Stack 0 for the first chunk; deeper ones come later.
                    stack_id: (i % 7 != 6).then_some((i / 100) as u64 % stacks),
                    timestamp: t0 + i as f64,
                })
                .collect(),
        }
    }

    #[test]
    fn chunks_hold_at_most_100_samples_and_the_nodes_they_first_use() {
        let mut profile = Profile::new(Keep::Samples);
        profile
            .add_trace("main", &trace(100.0, 250, 3), &mut |f| f)
            .unwrap();
        profile
            .add_trace("worker", &trace(5.0, 100, 1), &mut |f| f)
            .unwrap();
        let threads = rebuild(&to_json(&profile, "title"));
        assert_eq!(threads.len(), 2);
        let (main, worker) = (&threads[0], &threads[1]);
        assert_eq!((main.tid, main.name.as_str()), (1, "main"));
        assert_eq!((worker.tid, worker.name.as_str()), (2, "worker"));
        assert_eq!(main.chunk_sizes, [100, 100, 50]);
        assert_eq!(worker.chunk_sizes, [100]);
        // Each thread has its own node ids, from 1: (root), (idle), the frames.
        assert_eq!(main.nodes.len(), 2 + 3);
        assert_eq!(worker.nodes.len(), 2 + 1);
        // Times as sampled, on each trace's own origin, 1 ms apart.
        assert_eq!(main.start, 100_000 - 1000);
        assert_eq!(main.times[249], 349_000);
        assert_eq!(worker.times[0], 5_000);
        // The same URL has the same script id in both threads.
        assert_eq!(main.nodes[1].2["functionName"], "f0");
        assert_eq!(main.nodes[1].2["scriptId"], worker.nodes[1].2["scriptId"]);
        assert_ne!(main.nodes[1].2["scriptId"], "0");
    }

    #[test]
    fn profile_ids_and_process_name() {
        let mut profile = Profile::new(Keep::Samples);
        for _ in 0..17 {
            profile
                .add_trace("t", &trace(0.0, 2, 1), &mut |f| f)
                .unwrap();
        }
        let file: Value = serde_json::from_slice(&to_json(&profile, "my title")).unwrap();
        let events = file["traceEvents"].as_array().unwrap();
        assert_eq!(events[0]["name"], "process_name");
        assert_eq!(events[0]["args"]["name"], "my title");
        let ids: Vec<_> = events
            .iter()
            .filter(|e| e["name"] == "Profile")
            .map(|e| e["id"].as_str().unwrap())
            .collect();
        assert_eq!(ids.len(), 17);
        assert_eq!((ids[0], ids[15], ids[16]), ("0x1", "0x10", "0x11"));
        assert_eq!(rebuild(&to_json(&profile, "t")).len(), 17);
    }

    #[test]
    fn a_thread_without_samples_has_a_profile_and_no_chunk() {
        let mut profile = Profile::new(Keep::Samples);
        profile
            .add_trace("empty", &ProfilerTrace::default(), &mut |f| f)
            .unwrap();
        let threads = rebuild(&to_json(&profile, "t"));
        assert_eq!(threads.len(), 1);
        assert!(threads[0].chunk_sizes.is_empty());
    }

    #[test]
    fn a_profile_without_samples_is_refused() {
        let err = write(&golden::seed(Keep::Counts), "t", &mut Vec::new()).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
    }
}
