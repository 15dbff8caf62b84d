//! A session's sample buffer: what one profiling session keeps while it runs, and the build of
//! its `ProfilerTrace` when it stops.
//!
//! Adding a sample is O(frames) hash lookups at worst and one whole-stack lookup when the
//! stack was seen before (the common case); nothing is reserved in proportion to
//! `maxBufferSize`. Samples cost 12 bytes each (a timestamp and a stack node; 13 with a marker,
//! when the session exposes markers), stored in
//! fixed-size chunks so growth never doubles memory.
//!
//! Invariant: `nodes[i].parent < i` — a stack node's parent comes before it, so the build is a
//! single forward pass.
//!
//! # Buffer policies
//!
//! [`BufferPolicy::Stop`] is the spec's: once `maxBufferSize` samples are stored, every
//! further sample is refused ([`Added::Full`]). [`BufferPolicy::Ring`] (the circular buffer
//! of WICG js-self-profiling#81, behind a pref) drops the oldest sample instead, so the
//! buffer holds the last `maxBufferSize` samples. Its memory stays bounded: the sample log
//! frees whole chunks as they empty, and the frame and stack-node tables, which would grow
//! on a long run whose stacks keep changing, are compacted to what the live samples use
//! once they outgrow a multiple of the buffer (ids renumbered, parents still first). The
//! build keeps only the frames, stacks and resources of the kept samples either way: it
//! gives IDs on demand, as it meets them.

use std::collections::VecDeque;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::frame::{symbolize, FrameSite, RawFrame, RawStack, RealmId, Symbolizer};
use crate::time::{Nanos, Resolution};
use crate::trace::{MarkerSet, ProfilerMarker, ProfilerTrace, TraceBuilder};

/// "No stack": an idle sample or one whose frames were all filtered out.
const NO_NODE: u32 = u32::MAX;
/// Samples per chunk of the sample log.
const CHUNK: usize = 4096;
/// The capacity a session's first chunk starts with.
const FIRST_CHUNK: usize = 16;
/// Distinct captured stacks remembered for the whole-stack fast path before it is reset.
const MEMO_LIMIT: usize = 8192;

/// The stack-node table of a ring buffer is compacted once it holds more than this many
/// nodes per sample it holds, at least [`MIN_COMPACT`] and twice what the last compaction
/// kept (so that compacting is amortised O(1) a sample, however deep the stacks). The
/// samples held, not `maxBufferSize`: a ring over the process's budget holds fewer.
const COMPACT_FACTOR: usize = 4;
const MIN_COMPACT: usize = 4096;

/// What a session's buffer does once it holds `maxBufferSize` samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BufferPolicy {
    /// The spec's: no more samples are stored (and the host fires `samplebufferfull`).
    #[default]
    Stop,
    /// A circular buffer (WICG js-self-profiling#81): the oldest sample is dropped to make
    /// room, so the buffer keeps the last `maxBufferSize` samples; it is never full.
    Ring,
}

/// Outcome of [`Recorder::add`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Added {
    /// The sample was stored.
    Stored,
    /// A ring buffer was full: the sample was stored and the oldest one dropped (with a
    /// `maxBufferSize` of 0, the new one itself), so the count is unchanged.
    Replaced,
    /// The buffer was already full: nothing stored (take a sample, step 1).
    Full,
}

/// A stack node: one kept frame on top of a parent node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Node {
    parent: u32,
    frame: u32,
}

/// A captured stack as a hash key, compared by contents (pointer equality first).
#[derive(Debug, Clone)]
struct StackKey(RawStack);

impl PartialEq for StackKey {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || self.0 == other.0
    }
}
impl Eq for StackKey {}
impl Hash for StackKey {
    /// Hashes the cheap parts of each frame: a name is hashed by its length, not its bytes.
    /// Equal stacks still hash equally, and a stack differs from its neighbours mostly in
    /// positions, which are hashed in full.
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_usize(self.0.len());
        for f in self.0.iter() {
            let (kind, a, b) = match &f.site {
                FrameSite::Position { line, column } => (0, *line, *column),
                FrameSite::Definition { line, column } => (1, *line, *column),
                FrameSite::TopLevel => (2, 0, 0),
                FrameSite::Resolved { name, line, column } => (
                    3 + name.len() as u64,
                    line.unwrap_or(u32::MAX),
                    column.unwrap_or(u32::MAX),
                ),
            };
            let script = f.script.map_or(u32::MAX, |s| s.0);
            state.write_u64(
                u64::from(f.realm.0) << 32 | u64::from(script) | (f.hidden as u64) << 63,
            );
            state.write_u64(kind << 1);
            state.write_u64(u64::from(a) << 32 | u64::from(b));
        }
    }
}

/// One chunk of the sample log: timestamps, stack nodes and markers (0: none; kept only when
/// the session exposes markers), in columns.
#[derive(Debug)]
struct Chunk {
    timestamps: Vec<f64>,
    nodes: Vec<u32>,
    markers: Vec<u8>,
}

/// The sample log: chunks of at most [`CHUNK`] samples, oldest first. A ring buffer drops
/// samples from the front (`head` of the first chunk's are gone) and frees a chunk once all
/// of its samples are, keeping it for reuse.
#[derive(Debug, Default)]
struct SampleLog {
    chunks: VecDeque<Chunk>,
    /// Samples of the first chunk already dropped.
    head: usize,
    len: usize,
    /// An emptied chunk, reused for the next one (a ring buffer allocates nothing once it
    /// has gone round).
    spare: Option<Chunk>,
}

impl SampleLog {
    /// Appends a sample; `marker` is `None` for a session that keeps no markers (its
    /// samples are then 12 bytes, not 13).
    fn push(&mut self, timestamp: f64, node: u32, marker: Option<u8>) {
        if self
            .chunks
            .back()
            .is_none_or(|c| c.timestamps.len() == CHUNK)
        {
            let chunk = match self.spare.take() {
                Some(mut chunk) => {
                    chunk.timestamps.clear();
                    chunk.nodes.clear();
                    chunk.markers.clear();
                    chunk
                }
                None => {
                    // A session's first chunk starts small (many sessions may hold a few
                    // samples each) and doubles up to CHUNK; later ones are whole at once.
                    let first = if self.chunks.is_empty() {
                        FIRST_CHUNK
                    } else {
                        CHUNK
                    };
                    Chunk {
                        timestamps: Vec::with_capacity(first),
                        nodes: Vec::with_capacity(first),
                        markers: Vec::with_capacity(if marker.is_some() { first } else { 0 }),
                    }
                }
            };
            self.chunks.push_back(chunk);
        }
        let chunk = self.chunks.back_mut().expect("a chunk was just ensured");
        if chunk.timestamps.len() == chunk.timestamps.capacity() {
            let more = chunk
                .timestamps
                .capacity()
                .min(CHUNK - chunk.timestamps.len());
            chunk.timestamps.reserve_exact(more);
            chunk.nodes.reserve_exact(more);
            if marker.is_some() {
                chunk.markers.reserve_exact(more);
            }
        }
        chunk.timestamps.push(timestamp);
        chunk.nodes.push(node);
        if let Some(marker) = marker {
            chunk.markers.push(marker);
        }
        self.len += 1;
    }

    /// Drops the oldest sample (a ring buffer making room).
    fn pop_front(&mut self) {
        if self.len == 0 {
            return;
        }
        self.len -= 1;
        self.head += 1;
        let first_len = self.chunks.front().map_or(0, |c| c.timestamps.len());
        // A chunk is freed once every sample in it is gone and no more will be added to it
        // (it is full, or it is the only one and now empty).
        if self.head == first_len && (first_len == CHUNK || self.len == 0) {
            self.head = 0;
            if let Some(chunk) = self.chunks.pop_front() {
                if chunk.timestamps.capacity() == CHUNK {
                    self.spare = Some(chunk);
                }
            }
        }
    }

    /// Drops the newest sample (a session over its share of the process's budget gives it
    /// back, keeping the samples it took first).
    fn pop_back(&mut self) {
        let Some(last) = self.chunks.back_mut() else {
            return;
        };
        if self.len == 0 {
            return;
        }
        self.len -= 1;
        last.timestamps.pop();
        last.nodes.pop();
        last.markers.pop();
        // A chunk left without samples is freed (kept for reuse), as `pop_front` does.
        let emptied = last.timestamps.len() == if self.chunks.len() == 1 { self.head } else { 0 };
        if emptied {
            if self.chunks.len() == 1 {
                self.head = 0;
            }
            if let Some(chunk) = self.chunks.pop_back() {
                if chunk.timestamps.capacity() == CHUNK {
                    self.spare = Some(chunk);
                }
            }
        }
    }

    fn iter(&self) -> impl Iterator<Item = (f64, u32, u8)> + '_ {
        let head = self.head;
        self.chunks.iter().enumerate().flat_map(move |(k, c)| {
            let skip = if k == 0 { head } else { 0 };
            c.timestamps
                .iter()
                .zip(&c.nodes)
                .enumerate()
                .skip(skip)
                .map(|(i, (&t, &n))| (t, n, c.markers.get(i).copied().unwrap_or(0)))
        })
    }

    /// Every live sample's stack node, to be rewritten in place.
    fn nodes_mut(&mut self) -> impl Iterator<Item = &mut u32> + '_ {
        let head = self.head;
        self.chunks
            .iter_mut()
            .enumerate()
            .flat_map(move |(k, c)| c.nodes.iter_mut().skip(if k == 0 { head } else { 0 }))
    }

    fn heap_bytes(&self) -> usize {
        let chunk =
            |c: &Chunk| c.timestamps.capacity() * 8 + c.nodes.capacity() * 4 + c.markers.capacity();
        self.chunks.capacity() * std::mem::size_of::<Chunk>()
            + self.chunks.iter().map(chunk).sum::<usize>()
            + self.spare.as_ref().map_or(0, chunk)
    }
}

/// One session's samples and interned stacks.
#[derive(Debug)]
pub struct Recorder {
    realm: RealmId,
    origin: Nanos,
    resolution: Resolution,
    max_samples: u32,
    policy: BufferPolicy,
    /// A ring buffer compacts its tables when `nodes` grows past this (and past
    /// [`COMPACT_FACTOR`] a sample held).
    compact_at: usize,
    markers: MarkerSet,
    frames: Vec<RawFrame>,
    frame_ids: FxHashMap<RawFrame, u32>,
    nodes: Vec<Node>,
    node_ids: FxHashMap<Node, u32>,
    memo: FxHashMap<StackKey, u32>,
    samples: SampleLog,
}

impl Recorder {
    /// A recorder keeping frames of `realm`, with timestamps relative to `origin`, holding at
    /// most `max_samples` samples.
    pub fn new(realm: RealmId, origin: Nanos, resolution: Resolution, max_samples: u32) -> Self {
        Recorder {
            realm,
            origin,
            resolution,
            max_samples,
            policy: BufferPolicy::Stop,
            compact_at: usize::MAX,
            markers: MarkerSet::NONE,
            frames: Vec::new(),
            frame_ids: FxHashMap::default(),
            nodes: Vec::new(),
            node_ids: FxHashMap::default(),
            memo: FxHashMap::default(),
            samples: SampleLog::default(),
        }
    }

    /// Keeps the markers in `markers` on the samples (none by default).
    pub fn with_markers(mut self, markers: MarkerSet) -> Self {
        self.markers = markers;
        self
    }

    /// Uses `policy` once the buffer holds `max_samples` samples ([`BufferPolicy::Stop`] by
    /// default).
    pub fn with_policy(mut self, policy: BufferPolicy) -> Self {
        self.policy = policy;
        self.compact_at = match policy {
            BufferPolicy::Stop => usize::MAX,
            BufferPolicy::Ring => MIN_COMPACT,
        };
        self
    }

    /// The buffer policy.
    pub fn policy(&self) -> BufferPolicy {
        self.policy
    }

    /// An empty recorder with the same realm, time origin, resolution, limit, policy and
    /// markers: the buffer a restarted session samples into.
    pub fn fresh(&self) -> Recorder {
        Recorder::new(self.realm, self.origin, self.resolution, self.max_samples)
            .with_markers(self.markers)
            .with_policy(self.policy)
    }

    /// Stack nodes interned (bounded for a ring buffer; see the module docs).
    pub fn interned_nodes(&self) -> usize {
        self.nodes.len()
    }

    /// Number of samples stored.
    pub fn len(&self) -> usize {
        self.samples.len
    }

    /// True if no sample is stored.
    pub fn is_empty(&self) -> bool {
        self.samples.len == 0
    }

    /// True once `max_samples` samples are stored.
    pub fn is_full(&self) -> bool {
        self.samples.len >= self.max_samples as usize
    }

    /// take a sample (<https://wicg.github.io/js-self-profiling/#dfn-take-a-sample>) at `now`
    /// with the agent's stack (`None`: the agent ran no script) and what the agent was doing
    /// (kept only if this session exposes that marker).
    pub fn add(
        &mut self,
        now: Nanos,
        stack: Option<&RawStack>,
        marker: Option<ProfilerMarker>,
    ) -> Added {
        // Step 1. If the length of samples >= the sample buffer size limit, the buffer is full.
        // (A ring buffer drops its oldest sample instead, WICG js-self-profiling#81.)
        let replaced = self.is_full();
        if replaced {
            match self.policy {
                BufferPolicy::Stop => return Added::Full,
                BufferPolicy::Ring if self.max_samples == 0 => return Added::Replaced,
                BufferPolicy::Ring => self.samples.pop_front(),
            }
        }
        // Steps 2-3. A new sample, timestamped relative to the session's time origin.
        let timestamp = self.resolution.relative_ms(now, self.origin);
        // Steps 4-5. The stack ID of the agent's execution context stack.
        let node = match stack {
            Some(stack) => self.node_of(stack),
            None => NO_NODE,
        };
        // Step 6. Add the sample (markers extension: with the agent's state, if exposed).
        let kept = (self.markers != MarkerSet::NONE)
            .then(|| ProfilerMarker::to_byte(self.markers.filter(marker)));
        self.samples.push(timestamp, node, kept);
        if self.nodes.len() > self.compact_at.max(COMPACT_FACTOR * self.samples.len) {
            self.compact();
        }
        if replaced {
            Added::Replaced
        } else {
            Added::Stored
        }
    }

    /// Drops the oldest sample, if any (a ring buffer over the process's sample budget makes
    /// room for its new sample this way).
    pub fn drop_oldest(&mut self) {
        self.samples.pop_front();
    }

    /// Drops the newest sample, if any: a session holding more than its share of the
    /// process's budget gives it back this way, and its trace stays the samples it took
    /// first, as if its `maxBufferSize` had been smaller. (The stack nodes only that sample
    /// used stay interned; the build skips them.)
    pub fn drop_newest(&mut self) {
        self.samples.pop_back();
    }

    /// Keeps only the frames and stack nodes the live samples use (and their ancestors),
    /// renumbered in their order, so parents still come first. Amortised O(1) a sample:
    /// the next compaction waits until the table has doubled again.
    fn compact(&mut self) {
        let mut keep = vec![false; self.nodes.len()];
        for (_, node, _) in self.samples.iter() {
            let mut n = node;
            while n != NO_NODE && !keep[n as usize] {
                keep[n as usize] = true;
                n = self.nodes[n as usize].parent;
            }
        }
        let mut node_new = vec![NO_NODE; self.nodes.len()];
        let mut frame_new = vec![NO_NODE; self.frames.len()];
        let old_frames = std::mem::take(&mut self.frames);
        let old_nodes = std::mem::take(&mut self.nodes);
        self.frame_ids.clear();
        self.node_ids.clear();
        for (i, node) in old_nodes.iter().enumerate() {
            if !keep[i] {
                continue;
            }
            let f = node.frame as usize;
            if frame_new[f] == NO_NODE {
                frame_new[f] = self.frames.len() as u32;
                self.frame_ids
                    .insert(old_frames[f].clone(), self.frames.len() as u32);
                self.frames.push(old_frames[f].clone());
            }
            let parent = if node.parent == NO_NODE {
                NO_NODE
            } else {
                node_new[node.parent as usize]
            };
            let n = Node {
                parent,
                frame: frame_new[f],
            };
            node_new[i] = self.nodes.len() as u32;
            self.node_ids.insert(n, self.nodes.len() as u32);
            self.nodes.push(n);
        }
        for n in self.samples.nodes_mut() {
            if *n != NO_NODE {
                *n = node_new[*n as usize];
            }
        }
        // The memo's nodes are the old ones.
        self.memo.clear();
        self.compact_at = MIN_COMPACT.max(2 * self.nodes.len());
    }

    /// The node of a captured stack after filtering (decision 6): frames of other realms and
    /// hidden frames are skipped, one by one.
    fn node_of(&mut self, stack: &RawStack) -> u32 {
        let key = StackKey(stack.clone());
        if let Some(&node) = self.memo.get(&key) {
            return node;
        }
        let mut node = NO_NODE;
        for frame in stack.iter() {
            if frame.realm != self.realm || frame.hidden {
                continue;
            }
            let frame = match self.frame_ids.get(frame) {
                Some(&id) => id,
                None => {
                    let id = self.frames.len() as u32;
                    self.frames.push(frame.clone());
                    self.frame_ids.insert(frame.clone(), id);
                    id
                }
            };
            let n = Node {
                parent: node,
                frame,
            };
            node = *self.node_ids.entry(n).or_insert_with(|| {
                self.nodes.push(n);
                (self.nodes.len() - 1) as u32
            });
        }
        if self.memo.len() >= MEMO_LIMIT {
            self.memo.clear();
        }
        self.memo.insert(key, node);
        node
    }

    /// Heap bytes held by the sample log alone (not the interned frame and stack tables).
    pub fn sample_bytes(&self) -> usize {
        self.samples.heap_bytes()
    }

    /// Builds the session's `ProfilerTrace`: symbolizes each distinct raw frame once, then
    /// runs get-a-stack-ID for each sample, memoised per stack node. Runs off the agent's
    /// thread, in time proportional to the samples and distinct frames.
    pub fn build(self, symbolizer: &dyn Symbolizer) -> ProfilerTrace {
        self.build_unless(symbolizer, || false)
            .expect("a build that is never abandoned finishes")
    }

    /// [`build`](Self::build), abandoned (`None`) as soon as `abandon` says so: it is asked
    /// before each frame is symbolized and every 4096 samples.
    pub fn build_unless(
        self,
        symbolizer: &dyn Symbolizer,
        abandon: impl Fn() -> bool,
    ) -> Option<ProfilerTrace> {
        const UNSET: u32 = u32::MAX - 1;
        let mut b = TraceBuilder::new();
        b.reserve_samples(self.samples.len);
        // Per raw frame: UNSET, NO_NODE (dropped by the symbolizer) or its frame ID.
        let mut frame_of = vec![UNSET; self.frames.len()];
        // Per node: UNSET, NO_NODE (no kept frame at or under it) or its stack ID.
        let mut stack_of = vec![UNSET; self.nodes.len()];
        let mut chain = Vec::new();
        for (i, (timestamp, node, marker)) in self.samples.iter().enumerate() {
            if i % 4096 == 0 && abandon() {
                return None;
            }
            let marker = ProfilerMarker::from_byte(marker);
            if node == NO_NODE {
                b.push_sample(timestamp, None, marker);
                continue;
            }
            // The nodes without a stack ID yet, innermost first.
            chain.clear();
            let mut n = node;
            while n != NO_NODE && stack_of[n as usize] == UNSET {
                chain.push(n);
                n = self.nodes[n as usize].parent;
            }
            // get a frame ID, innermost first.
            for &n in &chain {
                let raw = self.nodes[n as usize].frame as usize;
                if frame_of[raw] == UNSET {
                    if abandon() {
                        return None;
                    }
                    frame_of[raw] = match symbolize(&self.frames[raw], symbolizer) {
                        Some(info) => b.frame_id(&info) as u32,
                        None => NO_NODE,
                    };
                }
            }
            // get a stack ID, outermost first (parents before children).
            for &n in chain.iter().rev() {
                let Node { parent, frame } = self.nodes[n as usize];
                let parent_id = if parent == NO_NODE {
                    NO_NODE
                } else {
                    stack_of[parent as usize]
                };
                let frame_id = frame_of[frame as usize];
                stack_of[n as usize] = if frame_id == NO_NODE {
                    parent_id
                } else {
                    let parent = (parent_id != NO_NODE).then_some(parent_id as u64);
                    b.stack_id(frame_id as u64, parent) as u32
                };
            }
            let id = stack_of[node as usize];
            b.push_sample(timestamp, (id != NO_NODE).then_some(id as u64), marker);
        }
        Some(b.finish())
    }
}
