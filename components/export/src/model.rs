//! Many traces merged into one profile, keyed by what a function *is* (name, resource, line,
//! column), never by a trace's own ids, which mean nothing outside their trace.
//!
//! Memory grows with the number of distinct frames and call paths. Per-sample data (the
//! timeline) is kept only when the output needs it ([`Keep::Samples`]): formats that list
//! every sample (`.cpuprofile`, speedscope, Firefox, Trace Event) are as large as their
//! input by nature; the aggregate ones (flame graph, folded stacks, pprof, the report's
//! tables) take [`Keep::Counts`] and stream.

use jsprof_profiler::{ProfilerMarker, ProfilerTrace};
use rustc_hash::FxHashMap;

/// A function's identity across traces: two frames are the same function exactly when all
/// four are equal.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Frame {
    pub name: String,
    /// The resource's URL, if the frame has one.
    pub resource: Option<String>,
    /// 1-based, as in the spec's trace.
    pub line: Option<u64>,
    /// 1-based, as in the spec's trace.
    pub column: Option<u64>,
}

impl Frame {
    /// The name a person reads: the function's name, or `(anonymous)` for an unnamed one.
    pub fn display_name(&self) -> &str {
        if self.name.is_empty() {
            "(anonymous)"
        } else {
            &self.name
        }
    }

    /// The name with where the function is, `name (url:line:column)`, or the name alone for
    /// a frame without a resource: distinct functions get distinct labels.
    pub fn label(&self) -> String {
        match &self.resource {
            None => self.display_name().to_owned(),
            Some(url) => {
                let mut s = format!("{} ({url}", self.display_name());
                if let Some(line) = self.line {
                    s.push_str(&format!(":{line}"));
                    if let Some(column) = self.column {
                        s.push_str(&format!(":{column}"));
                    }
                }
                s.push(')');
                s
            }
        }
    }
}

/// The width of a [`Bucket`] of the timeline, in ms.
pub const BUCKET_MS: f64 = 10.0;

/// Samples in one [`BUCKET_MS`] slice of the timeline, summed over traces (each trace's
/// time counted from its first sample).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Bucket {
    pub with_stack: u64,
    /// Samples without a stack (idle, or only filtered-out frames).
    pub empty: u64,
}

pub type FrameId = u32;
pub type NodeId = u32;

/// A call path: `frame` called from the path `parent` (`None` at a root).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Node {
    pub parent: Option<NodeId>,
    pub frame: FrameId,
    /// 0 for a root.
    pub depth: u32,
}

/// What a sample without a stack stands for. The spec's trace only says "no stack"; its
/// marker, where the trace has markers, tells why.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Empty {
    /// No marker, or `other` outside script: the agent was not running script.
    Idle,
    /// Script ran, but every frame was filtered out by the spec (cross-origin scripts,
    /// other realms): the `script` marker without a stack.
    Program,
    /// A collection outside script: the `gc` marker without a stack.
    GarbageCollector,
}

impl Empty {
    /// Every kind, in the order of [`Profile::empty_count`]'s storage.
    pub const ALL: [Empty; 3] = [Empty::Idle, Empty::Program, Empty::GarbageCollector];

    /// The pseudo-frame's name, as Chrome DevTools writes them.
    pub fn label(self) -> &'static str {
        match self {
            Empty::Idle => "(idle)",
            Empty::Program => "(program)",
            Empty::GarbageCollector => "(garbage collector)",
        }
    }

    fn of(marker: Option<ProfilerMarker>) -> Empty {
        match marker {
            Some(ProfilerMarker::Script) => Empty::Program,
            Some(ProfilerMarker::Gc) => Empty::GarbageCollector,
            _ => Empty::Idle,
        }
    }
}

/// Where a sample was: a call path, or one of the empty kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum At {
    Stack(NodeId),
    Empty(Empty),
}

/// One sample of a kept timeline.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    /// Milliseconds, on the trace's own time origin.
    pub time: f64,
    pub at: At,
    pub marker: Option<ProfilerMarker>,
}

/// One input trace's timeline ([`Keep::Samples`] only).
#[derive(Debug, Clone, PartialEq)]
pub struct Thread {
    /// Where the trace came from (file name, and its index within a `--trace-out` array).
    pub name: String,
    pub samples: Vec<Sample>,
}

impl Thread {
    /// The sampling interval, estimated as the median gap between samples (the spec's trace
    /// does not carry it); `None` with fewer than two samples.
    pub fn interval_ms(&self) -> Option<f64> {
        median_gap(self.samples.iter().map(|s| s.time))
    }

    /// First and last sample times.
    pub fn span(&self) -> Option<(f64, f64)> {
        Some((self.samples.first()?.time, self.samples.last()?.time))
    }
}

/// Whether per-sample timelines are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keep {
    /// Only counts per call path: memory independent of the number of samples and traces.
    Counts,
    /// Counts and every trace's samples, in order.
    Samples,
}

/// Traces merged by function identity.
#[derive(Debug)]
pub struct Profile {
    keep: Keep,
    frames: Vec<Frame>,
    frame_ids: FxHashMap<Frame, FrameId>,
    nodes: Vec<Node>,
    node_ids: FxHashMap<(Option<NodeId>, FrameId), NodeId>,
    /// Samples whose leaf is each node.
    self_counts: Vec<u64>,
    /// Samples of each empty kind, in [`Empty`]'s order.
    empty_counts: [u64; 3],
    threads: Vec<Thread>,
    traces: u64,
    samples: u64,
    /// Sum over traces of their sampled span (last − first sample), ms.
    duration_ms: f64,
    /// Median sample gap of each trace, for [`Profile::interval_ms`].
    intervals: Vec<f64>,
    /// Kept under both [`Keep`]s: its size is the longest trace's span, not the input's.
    timeline: Vec<Bucket>,
}

impl Profile {
    pub fn new(keep: Keep) -> Profile {
        Profile {
            keep,
            frames: Vec::new(),
            frame_ids: FxHashMap::default(),
            nodes: Vec::new(),
            node_ids: FxHashMap::default(),
            self_counts: Vec::new(),
            empty_counts: [0; 3],
            threads: Vec::new(),
            traces: 0,
            samples: 0,
            duration_ms: 0.0,
            intervals: Vec::new(),
            timeline: Vec::new(),
        }
    }

    /// Adds one trace. `map` turns each of its frames into the frame it is merged as (the
    /// identity, or a source-mapped original); it runs once per distinct frame of the trace.
    ///
    /// A trace that breaks the spec's invariants (an id out of range, a parent after its
    /// child) is an error and adds nothing.
    pub fn add_trace(
        &mut self,
        name: &str,
        trace: &ProfilerTrace,
        map: &mut dyn FnMut(Frame) -> Frame,
    ) -> Result<(), String> {
        check(trace)?;
        let frames: Vec<FrameId> = trace
            .frames
            .iter()
            .map(|f| {
                let resource = f.resource_id.map(|r| trace.resources[r as usize].clone());
                self.intern_frame(map(Frame {
                    name: f.name.clone(),
                    resource,
                    line: f.line,
                    column: f.column,
                }))
            })
            .collect();
        let mut stacks: Vec<NodeId> = Vec::with_capacity(trace.stacks.len());
        for s in &trace.stacks {
            let parent = s.parent_id.map(|p| stacks[p as usize]);
            stacks.push(self.intern_node(parent, frames[s.frame_id as usize]));
        }
        let mut thread = Thread {
            name: name.to_owned(),
            samples: Vec::new(),
        };
        if self.keep == Keep::Samples {
            thread.samples.reserve(trace.samples.len());
        }
        let start = trace.samples.first().map_or(0.0, |s| s.timestamp);
        for s in &trace.samples {
            // Bounded: a trace's timestamps are finite (checked), and a bucket per 10 ms of
            // one trace's span.
            let bucket = ((s.timestamp - start).max(0.0) / BUCKET_MS) as usize;
            if self.timeline.len() <= bucket {
                self.timeline.resize(bucket + 1, Bucket::default());
            }
            match s.stack_id {
                Some(_) => self.timeline[bucket].with_stack += 1,
                None => self.timeline[bucket].empty += 1,
            }
            let at = match s.stack_id {
                Some(id) => At::Stack(stacks[id as usize]),
                None => At::Empty(Empty::of(s.marker)),
            };
            match at {
                At::Stack(node) => self.self_counts[node as usize] += 1,
                At::Empty(e) => self.empty_counts[e as usize] += 1,
            }
            if self.keep == Keep::Samples {
                thread.samples.push(Sample {
                    time: s.timestamp,
                    at,
                    marker: s.marker,
                });
            }
        }
        self.traces += 1;
        self.samples += trace.samples.len() as u64;
        if let (Some(first), Some(last)) = (trace.samples.first(), trace.samples.last()) {
            self.duration_ms += (last.timestamp - first.timestamp).max(0.0);
        }
        if let Some(i) = median_gap(trace.samples.iter().map(|s| s.timestamp)) {
            self.intervals.push(i);
        }
        if self.keep == Keep::Samples {
            self.threads.push(thread);
        }
        Ok(())
    }

    /// The call path of `frame` called from `parent` (`None`: a root), made if new: for
    /// samples already summed by call path elsewhere (the collector's store, whose query
    /// adds up its samples by stack), which are then added with [`Profile::add_samples`].
    pub fn call_path(&mut self, parent: Option<NodeId>, frame: Frame) -> NodeId {
        let frame = self.intern_frame(frame);
        self.intern_node(parent, frame)
    }

    /// Adds `count` samples whose leaf is `node` (from [`Profile::call_path`]), counted
    /// elsewhere: no trace is read, so nothing goes to the timeline or the threads
    /// ([`Profile::add_summary`] gives those facts).
    pub fn add_samples(&mut self, node: NodeId, count: u64) {
        self.self_counts[node as usize] += count;
        self.samples += count;
    }

    /// Adds `count` samples without a stack, of kind `kind`, counted elsewhere.
    pub fn add_empty_samples(&mut self, kind: Empty, count: u64) {
        self.empty_counts[kind as usize] += count;
        self.samples += count;
    }

    /// The facts of traces whose samples were added by [`Profile::add_samples`]: how many,
    /// the sum of their sampled spans (ms), their sampling interval, and their timeline
    /// (each trace's samples from its first one, summed), added to what the profile has.
    pub fn add_summary(
        &mut self,
        traces: u64,
        duration_ms: f64,
        interval_ms: Option<f64>,
        timeline: &[Bucket],
    ) {
        self.traces += traces;
        self.duration_ms += duration_ms;
        self.intervals.extend(interval_ms);
        if self.timeline.len() < timeline.len() {
            self.timeline.resize(timeline.len(), Bucket::default());
        }
        for (to, from) in self.timeline.iter_mut().zip(timeline) {
            to.with_stack += from.with_stack;
            to.empty += from.empty;
        }
    }

    fn intern_frame(&mut self, frame: Frame) -> FrameId {
        if let Some(id) = self.frame_ids.get(&frame) {
            return *id;
        }
        let id = self.frames.len() as FrameId;
        self.frames.push(frame.clone());
        self.frame_ids.insert(frame, id);
        id
    }

    fn intern_node(&mut self, parent: Option<NodeId>, frame: FrameId) -> NodeId {
        if let Some(id) = self.node_ids.get(&(parent, frame)) {
            return *id;
        }
        let id = self.nodes.len() as NodeId;
        let depth = parent.map_or(0, |p| self.nodes[p as usize].depth + 1);
        self.nodes.push(Node {
            parent,
            frame,
            depth,
        });
        self.self_counts.push(0);
        self.node_ids.insert((parent, frame), id);
        id
    }

    pub fn keep(&self) -> Keep {
        self.keep
    }

    /// Distinct frames, indexed by [`FrameId`].
    pub fn frames(&self) -> &[Frame] {
        &self.frames
    }

    /// Distinct call paths, indexed by [`NodeId`]; a parent always comes before its children.
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    pub fn frame(&self, id: FrameId) -> &Frame {
        &self.frames[id as usize]
    }

    pub fn node(&self, id: NodeId) -> Node {
        self.nodes[id as usize]
    }

    /// The frames of call path `node`, root first.
    pub fn stack(&self, node: NodeId) -> Vec<FrameId> {
        let mut out = Vec::with_capacity(self.nodes[node as usize].depth as usize + 1);
        let mut at = Some(node);
        while let Some(n) = at {
            let node = self.nodes[n as usize];
            out.push(node.frame);
            at = node.parent;
        }
        out.reverse();
        out
    }

    /// Samples whose leaf is `node`.
    pub fn self_count(&self, node: NodeId) -> u64 {
        self.self_counts[node as usize]
    }

    /// Samples of an empty kind.
    pub fn empty_count(&self, kind: Empty) -> u64 {
        self.empty_counts[kind as usize]
    }

    /// Samples with each call path on the stack (self plus descendants), indexed by
    /// [`NodeId`].
    pub fn total_counts(&self) -> Vec<u64> {
        let mut total = self.self_counts.clone();
        // Children come after their parents, so one pass from the end adds each subtree.
        for i in (0..self.nodes.len()).rev() {
            if let Some(p) = self.nodes[i].parent {
                total[p as usize] += total[i];
            }
        }
        total
    }

    /// Kept timelines, one per trace in the order added (empty under [`Keep::Counts`]).
    pub fn threads(&self) -> &[Thread] {
        &self.threads
    }

    /// Traces added.
    pub fn trace_count(&self) -> u64 {
        self.traces
    }

    /// Samples added, with and without stacks.
    pub fn sample_count(&self) -> u64 {
        self.samples
    }

    /// Samples without a stack, of every kind.
    pub fn empty_total(&self) -> u64 {
        self.empty_counts.iter().sum()
    }

    /// The sum of the traces' sampled spans, in ms.
    pub fn duration_ms(&self) -> f64 {
        self.duration_ms
    }

    /// Samples per [`BUCKET_MS`] from each trace's first sample, summed over traces.
    pub fn timeline(&self) -> &[Bucket] {
        &self.timeline
    }

    /// The sampling interval: the median of the traces' own median sample gaps.
    pub fn interval_ms(&self) -> Option<f64> {
        let mut all = self.intervals.clone();
        if all.is_empty() {
            return None;
        }
        all.sort_by(f64::total_cmp);
        Some(all[all.len() / 2])
    }
}

/// The median of the positive gaps between consecutive times; `None` without any.
fn median_gap(times: impl Iterator<Item = f64>) -> Option<f64> {
    let mut previous = None;
    let mut gaps = Vec::new();
    for t in times {
        if let Some(p) = previous {
            let gap: f64 = t - p;
            if gap > 0.0 {
                gaps.push(gap);
            }
        }
        previous = Some(t);
    }
    if gaps.is_empty() {
        return None;
    }
    gaps.sort_by(f64::total_cmp);
    Some(gaps[gaps.len() / 2])
}

/// The trace invariants the merge relies on (see [`ProfilerTrace`]). Whether `trace` keeps the spec's invariants (every id in range, a stack's parent before it,
/// finite timestamps): the reason it does not, if not. [`Profile::add_trace`] refuses such a
/// trace; the collector (jsprof-collector) refuses it at intake with this reason.
pub fn check(trace: &ProfilerTrace) -> Result<(), String> {
    for (i, f) in trace.frames.iter().enumerate() {
        if let Some(r) = f.resource_id {
            if r as usize >= trace.resources.len() {
                return Err(format!("frame {i}: resourceId {r} out of range"));
            }
        }
    }
    for (i, s) in trace.stacks.iter().enumerate() {
        if s.frame_id as usize >= trace.frames.len() {
            return Err(format!("stack {i}: frameId {} out of range", s.frame_id));
        }
        if let Some(p) = s.parent_id {
            if p as usize >= i {
                return Err(format!("stack {i}: parentId {p} does not come before it"));
            }
        }
    }
    for (i, s) in trace.samples.iter().enumerate() {
        if let Some(id) = s.stack_id {
            if id as usize >= trace.stacks.len() {
                return Err(format!("sample {i}: stackId {id} out of range"));
            }
        }
        if !s.timestamp.is_finite() {
            return Err(format!("sample {i}: timestamp is not finite"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use jsprof_profiler::{ProfilerFrame, ProfilerSample};
    use jsprof_trace_fixtures::{sample, stack, stacks};

    fn frame(name: &str, resource: u64, line: u64) -> ProfilerFrame {
        jsprof_trace_fixtures::frame(name, Some(resource), Some(line), Some(1))
    }

    /// a.js's `main` (stack 0), calling `work` (stack 1).
    fn main_calls_work(samples: Vec<ProfilerSample>) -> ProfilerTrace {
        ProfilerTrace {
            resources: vec!["a.js".into()],
            frames: vec![frame("main", 0, 1), frame("work", 0, 5)],
            stacks: stacks(&[None, Some(0)]),
            samples,
        }
    }

    /// Two traces that list the same functions with different ids merge into one tree.
    #[test]
    fn merges_by_identity_not_ids() {
        let a = main_calls_work(vec![
            sample(0.0, Some(1)),
            sample(10.0, Some(1)),
            sample(20.0, None),
        ]);
        // The same two functions, listed in the other order, and a resource list with more.
        let b = ProfilerTrace {
            resources: vec!["other.js".into(), "a.js".into()],
            frames: vec![frame("work", 1, 5), frame("main", 1, 1)],
            stacks: vec![stack(1, None), stack(0, Some(0))],
            samples: vec![sample(5.0, Some(1)), sample(15.0, Some(0))],
        };
        let mut p = Profile::new(Keep::Samples);
        p.add_trace("a", &a, &mut |f| f).unwrap();
        p.add_trace("b", &b, &mut |f| f).unwrap();
        assert_eq!(p.frames().len(), 2);
        assert_eq!(p.nodes().len(), 2);
        assert_eq!(p.self_count(1), 3);
        assert_eq!(p.self_count(0), 1);
        assert_eq!(p.total_counts(), vec![4, 3]);
        assert_eq!(p.empty_count(Empty::Idle), 1);
        assert_eq!(p.sample_count(), 5);
        assert_eq!(p.threads().len(), 2);
        assert_eq!(p.interval_ms(), Some(10.0));
        // a: 0, 10, 20 (idle); b: 5, 15 from its first sample at 5.
        let buckets: Vec<_> = p
            .timeline()
            .iter()
            .map(|b| (b.with_stack, b.empty))
            .collect();
        assert_eq!(buckets, [(2, 0), (2, 0), (0, 1)]);
        assert_eq!(p.frame(0).label(), "main (a.js:1:1)");
        let names: Vec<_> = p
            .stack(1)
            .iter()
            .map(|f| p.frame(*f).name.clone())
            .collect();
        assert_eq!(names, ["main", "work"]);
    }

    /// Samples summed by call path elsewhere make the profile the traces would have made.
    #[test]
    fn call_paths_and_counts_make_the_same_profile_as_traces() {
        let t = main_calls_work(vec![
            sample(0.0, Some(1)),
            sample(10.0, Some(1)),
            sample(20.0, Some(0)),
            sample(30.0, None),
        ]);
        let mut traced = Profile::new(Keep::Counts);
        traced.add_trace("t", &t, &mut |f| f).unwrap();
        let mut summed = Profile::new(Keep::Counts);
        let main = Frame {
            name: "main".into(),
            resource: Some("a.js".into()),
            line: Some(1),
            column: Some(1),
        };
        let work = Frame {
            name: "work".into(),
            line: Some(5),
            ..main.clone()
        };
        let root = summed.call_path(None, main);
        let leaf = summed.call_path(Some(root), work);
        summed.add_samples(leaf, 2);
        summed.add_samples(root, 1);
        summed.add_empty_samples(Empty::Idle, 1);
        summed.add_summary(
            1,
            30.0,
            Some(10.0),
            &[
                Bucket {
                    with_stack: 1,
                    empty: 0,
                },
                Bucket {
                    with_stack: 1,
                    empty: 0,
                },
                Bucket {
                    with_stack: 1,
                    empty: 0,
                },
                Bucket {
                    with_stack: 0,
                    empty: 1,
                },
            ],
        );
        assert_eq!(summed.frames(), traced.frames());
        assert_eq!(summed.nodes(), traced.nodes());
        assert_eq!(summed.total_counts(), traced.total_counts());
        assert_eq!(summed.empty_count(Empty::Idle), 1);
        assert_eq!(summed.sample_count(), traced.sample_count());
        assert_eq!(summed.trace_count(), traced.trace_count());
        assert_eq!(summed.duration_ms(), traced.duration_ms());
        assert_eq!(summed.interval_ms(), traced.interval_ms());
        assert_eq!(summed.timeline(), traced.timeline());
    }

    #[test]
    fn counts_only_keeps_no_samples() {
        let t = ProfilerTrace {
            resources: vec![],
            frames: vec![jsprof_trace_fixtures::frame("f", None, None, None)],
            stacks: stacks(&[None]),
            samples: vec![sample(0.0, Some(0))],
        };
        let mut p = Profile::new(Keep::Counts);
        for _ in 0..3 {
            p.add_trace("t", &t, &mut |f| f).unwrap();
        }
        assert!(p.threads().is_empty());
        assert_eq!(p.self_count(0), 3);
        assert_eq!(p.trace_count(), 3);
    }

    #[test]
    fn markers_classify_empty_samples() {
        let mut t = ProfilerTrace::default();
        for (i, m) in [None, Some(ProfilerMarker::Script), Some(ProfilerMarker::Gc)]
            .into_iter()
            .enumerate()
        {
            t.samples.push(ProfilerSample {
                marker: m,
                stack_id: None,
                timestamp: i as f64,
            });
        }
        let mut p = Profile::new(Keep::Counts);
        p.add_trace("t", &t, &mut |f| f).unwrap();
        assert_eq!(p.empty_count(Empty::Idle), 1);
        assert_eq!(p.empty_count(Empty::Program), 1);
        assert_eq!(p.empty_count(Empty::GarbageCollector), 1);
    }

    #[test]
    fn a_broken_trace_is_an_error_and_adds_nothing() {
        let t = ProfilerTrace {
            samples: vec![sample(0.0, Some(3))],
            ..Default::default()
        };
        let mut p = Profile::new(Keep::Samples);
        assert!(p
            .add_trace("t", &t, &mut |f| f)
            .unwrap_err()
            .contains("stackId 3"));
        assert_eq!(p.sample_count(), 0);
        assert!(p.threads().is_empty());
    }

    #[test]
    fn a_source_map_merges_frames_that_map_to_one_function() {
        let t = ProfilerTrace {
            resources: vec!["bundle.js".into()],
            frames: vec![frame("a", 0, 1), frame("b", 0, 2)],
            stacks: stacks(&[None, None]),
            samples: vec![sample(0.0, Some(0)), sample(1.0, Some(1))],
        };
        let mut p = Profile::new(Keep::Counts);
        p.add_trace("t", &t, &mut |f| Frame {
            name: "original".into(),
            line: Some(7),
            ..f
        })
        .unwrap();
        assert_eq!(p.frames().len(), 1);
        assert_eq!(p.self_count(0), 2);
    }
}
