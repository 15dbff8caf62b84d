//! Chrome DevTools' CPU profile (`.cpuprofile`): the `Profiler.Profile` type of the Chrome
//! DevTools Protocol (<https://chromedevtools.github.io/devtools-protocol/tot/Profiler/#type-Profile>),
//! as DevTools saves it and as DevTools, VS Code, speedscope and the Firefox Profiler open it.
//!
//! `{nodes: [{id, callFrame, hitCount, children}], startTime, endTime, samples, timeDeltas}`:
//!
//! - **Nodes.** `(root)` is node 1. A call path becomes a node when a sample first reaches
//!   it, its parent before it, so ids follow first use and only sampled paths (and their
//!   callers) are listed. Samples without a stack go to `(idle)`, `(program)` (script ran
//!   but the spec filtered its frames out) or `(garbage collector)`, children of the root
//!   made only when a sample needs one, as Chrome names them.
//! - **Call frames.** `functionName` is the function's own name (`""` for an anonymous one,
//!   as V8 writes it; viewers show `(anonymous)`). `lineNumber`/`columnNumber` are 0-based
//!   (the spec's trace is 1-based), `-1` when the trace has none. `url` is `""` without a
//!   resource. `scriptId` is a number per distinct URL, `"1"` for the first URL of the
//!   merged profile's frames, and so on: the same URL has the same id everywhere in the
//!   file; `"0"` for no URL.
//! - **Time.** Microseconds, whole (each sample's time rounded). A sample taken before the
//!   one listed ahead of it counts at that one's time, so no delta is negative. As in V8,
//!   the first delta runs from the profile's start, which is one sampling interval before
//!   the first sample (the interval estimated from the traces, [`Profile::interval_ms`],
//!   or the spec's default base interval); `endTime` is one interval after the last
//!   sample, so that DevTools and speedscope, which give each sample the time to the next
//!   one (the last one the time to `endTime`), give the last sample its interval too.
//! - **Several traces** (threads, or files merged): the format has one timeline, so the
//!   traces are laid end to end in the order added: each later trace is shifted so that
//!   its first sample comes one interval after the previous trace's last. Times inside a
//!   trace keep their gaps; the absolute times of later traces are not their own.
//!
//! The node tree (`Tree`) and the µs timeline (`sample_times`, `interval_us`) also
//! serve the Trace Event format ([`crate::trace_event`]), which carries the same profile
//! in chunks.

use std::io::{self, BufWriter, Write};

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use crate::model::{At, Keep, NodeId, Profile, Thread};

/// Writes `profile` (see [`crate::format::Format`]); the format has no name, so `title` is
/// unused. The profile must keep its samples ([`Keep::Samples`]).
pub fn write(profile: &Profile, title: &str, out: &mut dyn Write) -> io::Result<()> {
    let _ = title;
    let built = build(profile)?;
    let mut out = BufWriter::new(out);
    serde_json::to_writer(&mut out, &built)?;
    out.flush()
}

/// `Profiler.Profile`.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct CpuProfile {
    nodes: Vec<ProfileNode>,
    start_time: i64,
    end_time: i64,
    samples: Vec<u32>,
    time_deltas: Vec<i64>,
}

/// `Profiler.ProfileNode`.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ProfileNode {
    id: u32,
    call_frame: CallFrame,
    hit_count: u64,
    children: Vec<u32>,
}

/// `Runtime.CallFrame`, as both formats write it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CallFrame {
    pub function_name: String,
    pub script_id: String,
    pub url: String,
    /// 0-based; -1 for none.
    pub line_number: i64,
    /// 0-based; -1 for none.
    pub column_number: i64,
}

impl CallFrame {
    /// A pseudo-frame Chrome writes for what is not a function: `(root)`, `(idle)`...
    fn pseudo(name: &str) -> CallFrame {
        CallFrame {
            function_name: name.to_owned(),
            script_id: "0".to_owned(),
            url: String::new(),
            line_number: -1,
            column_number: -1,
        }
    }
}

/// The error a format that lists every sample gives for a profile without them.
pub(crate) fn require_samples(profile: &Profile, format: &str) -> io::Result<()> {
    if profile.keep() == Keep::Samples {
        Ok(())
    } else {
        Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{format} lists every sample: the profile must keep them (Keep::Samples)"),
        ))
    }
}

/// A node of Chrome's call tree: `id` is 1-based and dense, a parent's id is below its
/// children's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TreeNode {
    pub id: u32,
    pub parent: Option<u32>,
    pub call_frame: CallFrame,
}

/// Chrome's call tree, grown as samples reach call paths: the `(root)` node, then each
/// call path (its callers first) and each empty kind when a sample first needs it. The
/// order nodes are made in is the order Chrome lists them in: a `.cpuprofile`'s `nodes`,
/// and a trace's chunks, each of which lists the nodes made since the previous one.
#[derive(Debug)]
pub(crate) struct Tree<'p> {
    profile: &'p Profile,
    scripts: &'p [u32],
    /// Our id of each of the profile's call paths, 0 until a sample reaches it.
    ids: Vec<u32>,
    /// Our id of each empty kind's node, 0 until used.
    empty: [u32; 3],
    nodes: Vec<TreeNode>,
}

/// The id of the root node.
pub(crate) const ROOT: u32 = 1;

impl<'p> Tree<'p> {
    /// A tree with only `(root)`; `scripts` is [`script_ids`] of `profile`.
    pub fn new(profile: &'p Profile, scripts: &'p [u32]) -> Tree<'p> {
        Tree {
            profile,
            scripts,
            ids: vec![0; profile.nodes().len()],
            empty: [0; 3],
            nodes: vec![TreeNode {
                id: ROOT,
                parent: None,
                call_frame: CallFrame::pseudo("(root)"),
            }],
        }
    }

    /// The node a sample at `at` counts for, made (with its callers) if new.
    pub fn id(&mut self, at: At) -> u32 {
        match at {
            At::Empty(kind) => {
                if self.empty[kind as usize] == 0 {
                    self.empty[kind as usize] = self.push(ROOT, CallFrame::pseudo(kind.label()));
                }
                self.empty[kind as usize]
            }
            At::Stack(node) => {
                if self.ids[node as usize] != 0 {
                    return self.ids[node as usize];
                }
                // The callers not made yet, innermost first; iterative, as stacks can be
                // deeper than this thread's stack would allow recursion.
                let mut missing: Vec<NodeId> = vec![node];
                let mut parent = ROOT;
                let mut at = node;
                while let Some(p) = self.profile.node(at).parent {
                    if self.ids[p as usize] != 0 {
                        parent = self.ids[p as usize];
                        break;
                    }
                    missing.push(p);
                    at = p;
                }
                for n in missing.into_iter().rev() {
                    let frame = self.call_frame(n);
                    parent = self.push(parent, frame);
                    self.ids[n as usize] = parent;
                }
                parent
            }
        }
    }

    fn push(&mut self, parent: u32, call_frame: CallFrame) -> u32 {
        let id = self.nodes.len() as u32 + 1;
        self.nodes.push(TreeNode {
            id,
            parent: Some(parent),
            call_frame,
        });
        id
    }

    fn call_frame(&self, node: NodeId) -> CallFrame {
        let frame_id = self.profile.node(node).frame;
        let frame = self.profile.frame(frame_id);
        // 1-based to 0-based; a 0 (not a valid 1-based position) becomes "none".
        let zero_based = |n: Option<u64>| n.map_or(-1, |n| (n as i64).saturating_sub(1));
        CallFrame {
            function_name: frame.name.clone(),
            script_id: self.scripts[frame_id as usize].to_string(),
            url: frame.resource.clone().unwrap_or_default(),
            line_number: zero_based(frame.line),
            column_number: zero_based(frame.column),
        }
    }

    /// The nodes made so far, in the order made (node `id` at index `id - 1`).
    pub fn nodes(&self) -> &[TreeNode] {
        &self.nodes
    }
}

/// Each of `profile`'s frames' `scriptId`, indexed by [`crate::model::FrameId`]: 0 without
/// a URL, else the URL's rank among the distinct URLs in frame order, from 1.
pub(crate) fn script_ids(profile: &Profile) -> Vec<u32> {
    let mut by_url: FxHashMap<&str, u32> = FxHashMap::default();
    profile
        .frames()
        .iter()
        .map(|f| match &f.resource {
            None => 0,
            Some(url) => {
                let next = by_url.len() as u32 + 1;
                *by_url.entry(url.as_str()).or_insert(next)
            }
        })
        .collect()
}

/// Milliseconds to whole microseconds.
fn micros(ms: f64) -> i64 {
    (ms * 1000.0).round() as i64
}

/// `thread`'s sample times in whole µs, never decreasing: a sample listed after a later
/// one is taken at that one's time.
pub(crate) fn sample_times(thread: &Thread) -> Vec<i64> {
    let mut last = i64::MIN;
    thread
        .samples
        .iter()
        .map(|s| {
            last = last.max(micros(s.time));
            last
        })
        .collect()
}

/// The sampling interval in whole µs (at least 1): `thread`'s own estimate, else the
/// profile's, else the spec's default base interval when no trace has two samples.
pub(crate) fn interval_us(profile: &Profile, thread: Option<&Thread>) -> i64 {
    let ms = thread
        .and_then(Thread::interval_ms)
        .or_else(|| profile.interval_ms());
    let us = ms.map_or(
        jsprof_profiler::interval::DEFAULT_BASE.as_micros() as i64,
        micros,
    );
    us.max(1)
}

fn build(profile: &Profile) -> io::Result<CpuProfile> {
    require_samples(profile, "a .cpuprofile")?;
    let scripts = script_ids(profile);
    let mut tree = Tree::new(profile, &scripts);
    let interval = interval_us(profile, None);
    let mut samples = Vec::with_capacity(profile.sample_count() as usize);
    let mut time_deltas = Vec::with_capacity(samples.capacity());
    let mut start = None;
    let mut previous = 0;
    for thread in profile.threads() {
        let times = sample_times(thread);
        let Some(&first) = times.first() else {
            continue;
        };
        // The first trace starts one interval before its first sample; each trace's first
        // sample comes one interval after the last sample so far.
        if start.is_none() {
            start = Some(first - interval);
            previous = first - interval;
        }
        let shift = previous + interval - first;
        for (sample, time) in thread.samples.iter().zip(times) {
            let time = time + shift;
            time_deltas.push(time - previous);
            previous = time;
            samples.push(tree.id(sample.at));
        }
    }
    let mut nodes: Vec<ProfileNode> = tree
        .nodes()
        .iter()
        .map(|n| ProfileNode {
            id: n.id,
            call_frame: n.call_frame.clone(),
            hit_count: 0,
            children: Vec::new(),
        })
        .collect();
    for &id in &samples {
        nodes[id as usize - 1].hit_count += 1;
    }
    for n in tree.nodes() {
        if let Some(parent) = n.parent {
            nodes[parent as usize - 1].children.push(n.id);
        }
    }
    Ok(CpuProfile {
        nodes,
        start_time: start.unwrap_or(0),
        end_time: if start.is_some() {
            previous + interval
        } else {
            previous
        },
        samples,
        time_deltas,
    })
}

/// The worked example of the spec's trace format guide, and golden files of it.
#[cfg(test)]
pub(crate) mod golden {
    use std::path::PathBuf;

    use jsprof_profiler::ProfilerTrace;

    use crate::model::{Keep, Profile};

    /// `tests/fixtures/seed-002.json`, merged as the one trace of a profile.
    pub fn seed(keep: Keep) -> Profile {
        let json = include_str!("../tests/fixtures/seed-002.json");
        let trace: ProfilerTrace = serde_json::from_str(json).unwrap();
        let mut profile = Profile::new(keep);
        profile.add_trace("seed-002", &trace, &mut |f| f).unwrap();
        profile
    }

    /// Compares `output` with `tests/golden/seed-002.<ext>` byte for byte, or rewrites
    /// the file when `JSPROF_BLESS=1`.
    pub fn check(ext: &str, output: &[u8]) {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/golden")
            .join(format!("seed-002.{ext}"));
        if std::env::var("JSPROF_BLESS").as_deref() == Ok("1") {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, output).unwrap();
            return;
        }
        let expected = std::fs::read(&path)
            .unwrap_or_else(|e| panic!("{}: {e} (JSPROF_BLESS=1 writes it)", path.display()));
        assert!(
            expected == output,
            "{} differs from the output (JSPROF_BLESS=1 rewrites it):\n{}",
            path.display(),
            String::from_utf8_lossy(output)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Empty;
    use jsprof_profiler::{
        ProfilerFrame, ProfilerMarker, ProfilerSample, ProfilerStack, ProfilerTrace,
    };

    fn to_json(profile: &Profile) -> Vec<u8> {
        let mut out = Vec::new();
        write(profile, "t", &mut out).unwrap();
        out
    }

    /// Writes `profile`, reads the JSON back, and checks what every reader relies on.
    fn written(profile: &Profile) -> CpuProfile {
        let p: CpuProfile = serde_json::from_slice(&to_json(profile)).unwrap();
        let ids: Vec<u32> = p.nodes.iter().map(|n| n.id).collect();
        assert_eq!(ids, (1..=p.nodes.len() as u32).collect::<Vec<_>>());
        assert_eq!(p.nodes[0].call_frame.function_name, "(root)");
        let mut parents = vec![0; p.nodes.len() + 1];
        for n in &p.nodes {
            for &c in &n.children {
                assert!(
                    c > n.id && c as usize <= p.nodes.len(),
                    "child {c} of {}",
                    n.id
                );
                assert_eq!(parents[c as usize], 0, "{c} has two parents");
                parents[c as usize] = n.id;
            }
        }
        assert!(
            parents[2..].iter().all(|&p| p != 0),
            "a node without parent"
        );
        assert_eq!(p.samples.len(), p.time_deltas.len());
        assert!(p
            .samples
            .iter()
            .all(|&s| s >= 1 && s as usize <= p.nodes.len()));
        for n in &p.nodes {
            let hits = p.samples.iter().filter(|&&s| s == n.id).count() as u64;
            assert_eq!(n.hit_count, hits, "node {}", n.id);
        }
        assert!(p.time_deltas.iter().all(|&d| d >= 0), "{:?}", p.time_deltas);
        // The deltas reach the last sample; `endTime` is one interval after it.
        let last = p.start_time + p.time_deltas.iter().sum::<i64>();
        if p.samples.is_empty() {
            assert_eq!(p.end_time, last);
        } else {
            assert!(
                p.end_time > last,
                "endTime {} <= last sample {last}",
                p.end_time
            );
        }
        p
    }

    fn one_trace(
        frames: Vec<ProfilerFrame>,
        resources: &[&str],
        samples: Vec<ProfilerSample>,
    ) -> ProfilerTrace {
        let stacks = (0..frames.len() as u64)
            .map(|i| ProfilerStack {
                frame_id: i,
                parent_id: i.checked_sub(1),
            })
            .collect();
        ProfilerTrace {
            frames,
            resources: resources.iter().map(|r| r.to_string()).collect(),
            samples,
            stacks,
        }
    }

    fn sample(
        timestamp: f64,
        stack_id: Option<u64>,
        marker: Option<ProfilerMarker>,
    ) -> ProfilerSample {
        ProfilerSample {
            marker,
            stack_id,
            timestamp,
        }
    }

    fn name(p: &CpuProfile, id: u32) -> &str {
        &p.nodes[id as usize - 1].call_frame.function_name
    }

    #[test]
    fn golden_seed_002() {
        golden::check("cpuprofile", &to_json(&golden::seed(Keep::Samples)));
    }

    /// The seed's figures, worked out by hand from the fixture.
    #[test]
    fn seed_tree_and_times() {
        let p = written(&golden::seed(Keep::Samples));
        let names: Vec<_> = (1..=5).map(|id| name(&p, id)).collect();
        assert_eq!(
            names,
            ["(root)", "handleClick", "Profiler", "genPrimes", "isPrime"]
        );
        let hits: Vec<_> = p.nodes.iter().map(|n| n.hit_count).collect();
        assert_eq!(hits, [0, 0, 1, 2, 7]);
        assert_eq!(p.nodes[1].children, [3, 4]);
        assert_eq!(p.nodes[3].children, [5]);
        assert_eq!(p.samples, [3, 5, 5, 5, 5, 5, 5, 5, 4, 4]);
        // Median gap 0.625 ms; the first sample at 2972.735 ms; the last at 2980.655 ms.
        assert_eq!(p.start_time, 2_972_735 - 625);
        // The last sample, plus the interval (the median gap, 625 µs).
        assert_eq!(p.end_time, 2_980_655 + 625);
        assert_eq!(p.time_deltas[..3], [625, 755, 1080]);
    }

    #[test]
    fn positions_are_zero_based_and_scripts_numbered_by_url() {
        let p = written(&golden::seed(Keep::Samples));
        let f = |id: u32| &p.nodes[id as usize - 1].call_frame;
        // handleClick is at main.js 5:27 in the trace.
        assert_eq!((f(2).line_number, f(2).column_number), (4, 26));
        assert_eq!(f(2).url, "http://localhost:3000/main.js");
        // Profiler has no resource nor position.
        assert_eq!((f(3).line_number, f(3).column_number), (-1, -1));
        assert_eq!((f(3).url.as_str(), f(3).script_id.as_str()), ("", "0"));
        // genPrimes and isPrime share generate.js, main.js has another id.
        assert_eq!(f(4).script_id, f(5).script_id);
        assert_ne!(f(4).script_id, f(2).script_id);
        assert!(![f(2), f(4)].iter().any(|f| f.script_id == "0"));
    }

    #[test]
    fn empty_samples_go_to_pseudo_nodes_made_when_used() {
        let frame = ProfilerFrame {
            name: "f".into(),
            resource_id: None,
            line: None,
            column: None,
        };
        let trace = one_trace(
            vec![frame],
            &[],
            vec![
                sample(0.0, None, None),
                sample(1.0, None, Some(ProfilerMarker::Script)),
                sample(2.0, None, Some(ProfilerMarker::Other)),
                sample(3.0, Some(0), None),
                sample(4.0, None, Some(ProfilerMarker::Script)),
            ],
        );
        let mut profile = Profile::new(Keep::Samples);
        profile.add_trace("t", &trace, &mut |f| f).unwrap();
        let p = written(&profile);
        let names: Vec<_> = (1..=p.nodes.len() as u32).map(|id| name(&p, id)).collect();
        // No (garbage collector): no sample needed it.
        assert_eq!(names, ["(root)", "(idle)", "(program)", "f"]);
        assert_eq!(p.nodes[0].children, [2, 3, 4]);
        assert_eq!(p.samples, [2, 3, 2, 4, 3]);
        assert_eq!(Empty::GarbageCollector.label(), "(garbage collector)");
        let gc = one_trace(
            vec![],
            &[],
            vec![sample(0.0, None, Some(ProfilerMarker::Gc))],
        );
        let mut profile = Profile::new(Keep::Samples);
        profile.add_trace("gc", &gc, &mut |f| f).unwrap();
        assert_eq!(name(&written(&profile), 2), "(garbage collector)");
    }

    #[test]
    fn traces_are_laid_end_to_end() {
        let frame = |n: &str| ProfilerFrame {
            name: n.into(),
            resource_id: Some(0),
            line: Some(1),
            column: Some(1),
        };
        let at = |times: &[f64]| times.iter().map(|&t| sample(t, Some(0), None)).collect();
        // The second trace's times are far before the first's (another time origin), the
        // third has a single sample, the fourth none.
        let a = one_trace(vec![frame("a")], &["x.js"], at(&[1000.0, 1010.0, 1020.0]));
        let b = one_trace(vec![frame("b")], &["y.js"], at(&[5.0, 15.0]));
        let c = one_trace(vec![frame("a")], &["x.js"], at(&[70.0]));
        let d = one_trace(vec![], &[], vec![]);
        let mut profile = Profile::new(Keep::Samples);
        for (name, t) in [("a", &a), ("b", &b), ("c", &c), ("d", &d)] {
            profile.add_trace(name, t, &mut |f| f).unwrap();
        }
        let p = written(&profile);
        assert_eq!(p.time_deltas, [10_000; 6]);
        assert_eq!(p.start_time, 990_000);
        assert_eq!(p.end_time, 1_060_000);
        // The same function in two traces is one node.
        assert_eq!(p.samples, [2, 2, 2, 3, 3, 2]);
        assert_eq!(p.nodes[1].call_frame.script_id, "1");
        assert_eq!(p.nodes[2].call_frame.script_id, "2");
    }

    #[test]
    fn samples_out_of_order_never_give_negative_deltas() {
        let frame = ProfilerFrame {
            name: "f".into(),
            resource_id: None,
            line: Some(3),
            column: None,
        };
        let times = [10.0, 9.0, 12.5, 12.5, 11.0004];
        let trace = one_trace(
            vec![frame],
            &[],
            times.iter().map(|&t| sample(t, Some(0), None)).collect(),
        );
        let mut profile = Profile::new(Keep::Samples);
        profile.add_trace("t", &trace, &mut |f| f).unwrap();
        let p = written(&profile);
        assert_eq!(p.time_deltas[1..], [0, 2500, 0, 0]);
        assert_eq!(p.nodes[1].call_frame.line_number, 2);
    }

    #[test]
    fn profiles_without_samples() {
        let err = write(&golden::seed(Keep::Counts), "t", &mut Vec::new()).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        // No trace at all: only the root.
        let p = written(&Profile::new(Keep::Samples));
        assert_eq!(p.nodes.len(), 1);
        assert!(p.samples.is_empty());
        assert_eq!((p.start_time, p.end_time), (0, 0));
    }

    /// A stack deeper than recursion would survive.
    #[test]
    fn deep_stacks_are_built_without_recursion() {
        let depth = 200_000;
        let frames = (0..depth)
            .map(|i| ProfilerFrame {
                name: format!("f{i}"),
                resource_id: None,
                line: None,
                column: None,
            })
            .collect();
        let trace = one_trace(frames, &[], vec![sample(0.0, Some(depth as u64 - 1), None)]);
        let mut profile = Profile::new(Keep::Samples);
        profile.add_trace("t", &trace, &mut |f| f).unwrap();
        let p = written(&profile);
        assert_eq!(p.nodes.len(), depth + 1);
        assert_eq!(p.samples, [depth as u32 + 1]);
    }
}
