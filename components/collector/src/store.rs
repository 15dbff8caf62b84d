//! The store: the write-ahead log's sealed segments compacted into Parquet, in normalised
//! tables.
//!
//! ```text
//! DIR/wal/NNNNNNNNNNNN.wal                       the log (wal/segment.rs)
//! DIR/tables/traces/day=D/release=R/seg-N.parquet one row per trace
//! DIR/tables/samples/day=D/release=R/seg-N.parquet one row per sample
//! DIR/tables/events/day=D/seg-N.parquet           one row per event (view, long task, …)
//! DIR/tables/stacks/seg-N.parquet                 stacks first seen in segment N
//! DIR/tables/stack_frames/seg-N.parquet           (stack, each distinct frame on it)
//! DIR/tables/frames/seg-N.parquet                 frames first seen in segment N
//! ```
//!
//! Frames are interned by (name, resource, line, column): a frame's id is a fixed 64-bit
//! hash of the four, and a stack's the hash of (parent's id, frame's id), so ids agree
//! across segments and restarts without a shared counter. Compaction writes a frame or a
//! stack only once (the ids already written are kept in memory: bounded by the distinct
//! frames and stacks, not by the traces).
//!
//! Compaction of segment N writes every table's `seg-N.parquet` (to a temporary name, fsync,
//! rename; in an object store, one PUT of the whole file: objects.rs),
//! `frames/seg-N.parquet` last: it is the commit mark. Then the segment is deleted.
//! A crash before the mark leaves the segment, and the next start compacts it again over
//! the same file names; a crash after it only leaves the segment to delete.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::{
    ArrayRef, Float64Builder, Int64Builder, RecordBatch, StringBuilder, UInt32Builder,
};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, Encoding, ZstdLevel};
use parquet::file::properties::WriterProperties;
use parquet::schema::types::ColumnPath;

use crate::model::{Contents, Event, Ingested, Source};
use crate::objects::Objects;
use crate::wal;

/// A store: its log in a local directory, its tables there (`DIR/tables`) or in an object
/// store (`--store s3://BUCKET/PREFIX`, objects.rs).
#[derive(Debug, Clone)]
pub struct Store {
    /// The local directory: the log (`DIR/wal`), and the tables unless `objects` holds
    /// them. None: a store read from its object store alone, without a log.
    pub dir: Option<PathBuf>,
    /// Where the tables are when not under `dir`.
    pub objects: Option<Arc<Objects>>,
}

impl Store {
    /// A store in `dir`, tables and log.
    pub fn local(dir: impl Into<PathBuf>) -> Store {
        Store {
            dir: Some(dir.into()),
            objects: None,
        }
    }

    /// The store `--store` names: a directory, or `s3://BUCKET/PREFIX` whose log (if any is
    /// read or written) is in `data_dir`.
    pub fn open(store: &str, data_dir: Option<PathBuf>) -> Result<Store, String> {
        if crate::objects::is_url(store) {
            Ok(Store {
                dir: data_dir,
                objects: Some(Arc::new(Objects::from_env(store)?)),
            })
        } else if data_dir.is_some() {
            Err(format!(
                "--data-dir is the log's directory of a store in an object store (--store s3://…); {store} holds its own log"
            ))
        } else {
            Ok(Store::local(store))
        }
    }

    /// The store as `--store` named it.
    pub fn name(&self) -> String {
        match (&self.objects, &self.dir) {
            (Some(o), _) => o.name().to_owned(),
            (None, Some(d)) => d.display().to_string(),
            (None, None) => "(no store)".into(),
        }
    }

    /// The log's directory, if the store has one.
    pub fn wal_dir(&self) -> Option<PathBuf> {
        self.dir.as_deref().map(wal_dir)
    }

    /// An error unless the store's local directory (if any) exists.
    pub fn check(&self) -> Result<(), String> {
        match &self.dir {
            Some(d) if !d.is_dir() => Err(format!("{}: no such store", d.display())),
            None if self.objects.is_none() => Err("no store".into()),
            _ => Ok(()),
        }
    }

    /// The local directory of the tables, where they are local.
    fn local_tables(&self) -> Result<PathBuf, String> {
        self.dir
            .as_deref()
            .map(tables_dir)
            .ok_or_else(|| "a store without a directory".to_owned())
    }
}

impl From<&Path> for Store {
    fn from(dir: &Path) -> Store {
        Store::local(dir)
    }
}

pub const TABLES: [&str; 6] = [
    "traces",
    "samples",
    "stacks",
    "stack_frames",
    "frames",
    "events",
];

pub fn wal_dir(store: &Path) -> PathBuf {
    store.join("wal")
}

pub fn tables_dir(store: &Path) -> PathBuf {
    store.join("tables")
}

/// The schema of each table.
pub fn schema(table: &str) -> SchemaRef {
    let s = |n: &str| Field::new(n, DataType::Utf8, true);
    let i = |n: &str, null| Field::new(n, DataType::Int64, null);
    let f = |n: &str, null| Field::new(n, DataType::Float64, null);
    let fields = match table {
        "traces" => vec![
            i("trace_id", false),
            s("project"),
            s("source"),
            f("received_ms", false),
            f("time_origin_ms", true),
            s("page_url"),
            s("release"),
            s("user_agent"),
            s("session"),
            s("labels"),
            i("sample_count", false),
            s("day"),
            // Added with the events (issue 37): files written before lack them (NULL).
            s("view_id"),
            f("start_ms", true),
            f("end_ms", true),
            // Added with uploaded source maps (issue 37, item 2): the trace's scripts' debug
            // ids, a JSON object of script URL to id (NULL: none, or a file written before).
            s("debug_ids"),
        ],
        "samples" => vec![
            i("trace_id", false),
            s("project"),
            s("day"),
            s("release"),
            i("stack_id", true),
            f("timestamp_ms", false),
            f("weight_ms", false),
        ],
        "stacks" => vec![
            i("stack_id", false),
            i("parent_id", true),
            i("frame_id", false),
            Field::new("depth", DataType::UInt32, false),
        ],
        "stack_frames" => vec![i("stack_id", false), i("frame_id", false)],
        "frames" => vec![
            i("frame_id", false),
            s("name"),
            s("resource"),
            i("line", true),
            i("column", true),
        ],
        "events" => vec![
            s("project"),
            s("source"),
            s("kind"),
            s("op"),
            s("name"),
            s("event_id"),
            i("trace_id", true),
            s("session"),
            s("view_id"),
            s("url"),
            f("start_ms", false),
            f("duration_ms", false),
            f("received_ms", false),
            s("day"),
        ],
        other => panic!("no table {other}"),
    };
    Arc::new(Schema::new(fields))
}

/// FNV-1a, 64 bits: fixed across builds and platforms, unlike std's hasher.
fn fnv(parts: &[&[u8]]) -> i64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for &b in *part {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        // A separator, so that ("ab", "c") and ("a", "bc") differ.
        h ^= 0xff;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h as i64
}

pub fn frame_id(name: &str, resource: Option<&str>, line: Option<u64>, column: Option<u64>) -> i64 {
    let opt = |v: Option<u64>| {
        v.map_or([0xffu8; 9], |v| {
            let mut b = [0u8; 9];
            b[1..].copy_from_slice(&v.to_le_bytes());
            b
        })
    };
    let r = resource.map_or(vec![0xff], |r| {
        let mut v = vec![0];
        v.extend_from_slice(r.as_bytes());
        v
    });
    fnv(&[name.as_bytes(), &r, &opt(line), &opt(column)])
}

pub fn stack_id(parent: Option<i64>, frame: i64) -> i64 {
    let p = parent.map_or([0xffu8; 9], |p| {
        let mut b = [0u8; 9];
        b[1..].copy_from_slice(&p.to_le_bytes());
        b
    });
    fnv(&[&p, &frame.to_le_bytes()])
}

/// A trace's id: its segment and its index there.
pub fn trace_id(segment: u64, index: u32) -> i64 {
    ((segment << 32) | u64::from(index)) as i64
}

/// The UTC day (`YYYY-MM-DD`) of a time in ms since the epoch.
pub fn day(ms: f64) -> String {
    let days = (ms / 86_400_000.0).floor() as i64;
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    format!("{y:04}-{m:02}-{d:02}")
}

/// A partition directory's value: what is not `[A-Za-z0-9._-]` is percent-encoded.
fn partition_value(v: &str) -> String {
    if v.is_empty() {
        return "__none__".into();
    }
    let mut out = String::new();
    for b in v.bytes() {
        if b.is_ascii_alphanumeric() || b"._-".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The ids written so far: what makes compaction write each frame and stack once.
#[derive(Debug, Default)]
pub struct Known {
    pub frames: IdSet,
    pub stacks: IdSet,
}

/// A set of frame or stack ids. The ids are hashes already (FNV-1a), so the set's hasher
/// only spreads their bits: SipHash over them was a fifth of compaction's time.
pub type IdSet = HashSet<i64, std::hash::BuildHasherDefault<IdHasher>>;

/// The hasher of an [`IdSet`]: a multiplication, and the high half folded into the low.
#[derive(Debug, Default, Clone, Copy)]
pub struct IdHasher(u64);

impl std::hash::Hasher for IdHasher {
    fn finish(&self) -> u64 {
        let x = self.0.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        x ^ (x >> 32)
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8 | u64::from(b)) ^ (self.0 >> 56);
        }
    }

    fn write_i64(&mut self, v: i64) {
        self.0 = v as u64;
    }
}

/// Rows of one batch of traces, table by table.
#[derive(Debug, Default)]
pub struct Rows {
    /// Samples and traces by (day, release).
    pub partitions: std::collections::BTreeMap<(String, String), (TraceRows, SampleRows)>,
    pub frames: FrameRows,
    pub stacks: StackRows,
    /// Events by day.
    pub events: std::collections::BTreeMap<String, EventRows>,
}

#[derive(Debug, Default)]
pub struct TraceRows {
    trace_id: Vec<i64>,
    project: Vec<String>,
    source: Vec<&'static str>,
    received: Vec<f64>,
    time_origin: Vec<Option<f64>>,
    page_url: Vec<Option<String>>,
    release: Vec<Option<String>>,
    user_agent: Vec<Option<String>>,
    session: Vec<Option<String>>,
    labels: Vec<Option<String>>,
    sample_count: Vec<i64>,
    day: Vec<String>,
    view_id: Vec<Option<String>>,
    start: Vec<Option<f64>>,
    end: Vec<Option<f64>>,
    debug_ids: Vec<Option<String>>,
}

#[derive(Debug, Default)]
pub struct EventRows {
    project: Vec<String>,
    source: Vec<&'static str>,
    kind: Vec<&'static str>,
    op: Vec<Option<String>>,
    name: Vec<Option<String>>,
    event_id: Vec<Option<String>>,
    trace_id: Vec<Option<i64>>,
    session: Vec<Option<String>>,
    view_id: Vec<Option<String>>,
    url: Vec<Option<String>>,
    start: Vec<f64>,
    duration: Vec<f64>,
    received: Vec<f64>,
}

impl EventRows {
    fn push(
        &mut self,
        project: &str,
        source: Source,
        received: f64,
        trace: Option<(i64, Option<&str>)>,
        e: &Event,
    ) {
        self.project.push(project.to_owned());
        self.source.push(source.as_str());
        self.kind.push(e.kind.as_str());
        self.op.push(e.op.clone());
        self.name.push(e.name.clone());
        self.event_id.push(e.id.clone());
        self.trace_id.push(trace.map(|(id, _)| id));
        // An event of a trace is in the trace's session unless it says otherwise.
        self.session.push(
            e.session
                .clone()
                .or_else(|| trace.and_then(|(_, s)| s.map(str::to_owned))),
        );
        self.view_id.push(e.view_id.clone());
        self.url.push(e.url.clone());
        self.start.push(e.start_ms);
        self.duration.push(e.duration_ms);
        self.received.push(received);
    }
}

/// The day partition of an event: its start's, or when it was received where its start is
/// not a time since the epoch (a page's own time, before 2001).
fn event_day(e: &Event, received: f64) -> String {
    day(if e.start_ms >= 1e12 {
        e.start_ms
    } else {
        received
    })
}

/// A partition's samples. Its day and release are the partition's; the project is kept
/// once per trace (a run of that trace's samples), not once per sample.
#[derive(Debug, Default)]
pub struct SampleRows {
    trace_id: Vec<i64>,
    project: Vec<(String, usize)>,
    stack_id: Vec<Option<i64>>,
    timestamp: Vec<f64>,
    weight: Vec<f64>,
}

#[derive(Debug, Default)]
pub struct FrameRows {
    id: Vec<i64>,
    name: Vec<String>,
    resource: Vec<Option<String>>,
    line: Vec<Option<i64>>,
    column: Vec<Option<i64>>,
}

#[derive(Debug, Default)]
pub struct StackRows {
    id: Vec<i64>,
    parent: Vec<Option<i64>>,
    frame: Vec<i64>,
    depth: Vec<u32>,
    closure_stack: Vec<i64>,
    closure_frame: Vec<i64>,
}

/// Each sample's weight: the time to the next sample, at most twice the trace's median
/// gap; the last sample weighs the median gap.
fn weights(ts: &[f64]) -> Vec<f64> {
    let mut gaps: Vec<f64> = ts.windows(2).map(|w| (w[1] - w[0]).max(0.0)).collect();
    let median = if gaps.is_empty() {
        0.0
    } else {
        let mut sorted = gaps.clone();
        sorted.sort_by(f64::total_cmp);
        sorted[sorted.len() / 2]
    };
    for g in &mut gaps {
        *g = g.min(2.0 * median);
    }
    gaps.push(median);
    gaps.truncate(ts.len());
    gaps
}

impl Rows {
    /// Adds what one log record holds; `index` numbers the segment's traces.
    pub fn add(&mut self, segment: u64, index: &mut u32, record: &Contents, known: &mut Known) {
        self.add_traces(segment, index, &record.traces, known);
        for o in &record.observed {
            for e in &o.events {
                self.events
                    .entry(event_day(e, o.received))
                    .or_default()
                    .push(&o.project, o.source, o.received, None, e);
            }
        }
    }

    fn add_traces(
        &mut self,
        segment: u64,
        index: &mut u32,
        traces: &[Ingested],
        known: &mut Known,
    ) {
        for t in traces {
            let id = trace_id(segment, *index);
            *index += 1;
            let d = day(t.day_ms());
            let release = t.meta.release.clone().filter(|r| !r.is_empty());
            let (tr, sr) = self
                .partitions
                .entry((d.clone(), release.clone().unwrap_or_default()))
                .or_default();
            let trace = &t.trace;
            tr.trace_id.push(id);
            tr.project.push(t.project.clone());
            tr.source.push(t.source.as_str());
            tr.received.push(t.received);
            tr.time_origin.push(t.meta.time_origin);
            tr.page_url.push(t.meta.page_url.clone());
            tr.release.push(release.clone());
            tr.user_agent.push(t.meta.user_agent.clone());
            tr.session.push(t.meta.session.clone());
            tr.labels.push(
                (!t.meta.labels.is_empty())
                    .then(|| serde_json::to_string(&t.meta.labels).expect("labels serialise")),
            );
            tr.sample_count.push(trace.samples.len() as i64);
            tr.day.push(d.clone());
            tr.view_id.push(t.meta.view_id.clone());
            tr.debug_ids.push(
                (!t.meta.debug_ids.is_empty()).then(|| {
                    serde_json::to_string(&t.meta.debug_ids).expect("debug ids serialise")
                }),
            );
            let origin = t.meta.origin_ms();
            let times = trace.samples.iter().map(|s| origin + s.timestamp);
            tr.start.push(times.clone().reduce(f64::min));
            tr.end.push(times.reduce(f64::max));
            for e in &t.events {
                self.events
                    .entry(event_day(e, t.received))
                    .or_default()
                    .push(
                        &t.project,
                        t.source,
                        t.received,
                        Some((id, t.meta.session.as_deref())),
                        e,
                    );
            }

            // The trace's frames and stacks, as store ids (the trace was checked at intake:
            // every id is in range and a parent comes before its child).
            let frame_ids: Vec<i64> = trace
                .frames
                .iter()
                .map(|f| {
                    let resource = f
                        .resource_id
                        .and_then(|r| trace.resources.get(r as usize))
                        .map(String::as_str);
                    let fid = frame_id(&f.name, resource, f.line, f.column);
                    if known.frames.insert(fid) {
                        self.frames.id.push(fid);
                        self.frames.name.push(f.name.clone());
                        self.frames.resource.push(resource.map(str::to_owned));
                        self.frames.line.push(f.line.map(|v| v as i64));
                        self.frames.column.push(f.column.map(|v| v as i64));
                    }
                    fid
                })
                .collect();
            let mut stack_ids: Vec<i64> = Vec::with_capacity(trace.stacks.len());
            let mut depths: Vec<u32> = Vec::with_capacity(trace.stacks.len());
            let mut on_stack: Vec<i64> = Vec::new();
            for (i, s) in trace.stacks.iter().enumerate() {
                let parent = s.parent_id.map(|p| p as usize);
                let fid = frame_ids[s.frame_id as usize];
                let sid = stack_id(parent.map(|p| stack_ids[p]), fid);
                let depth = parent.map_or(0, |p| depths[p] + 1);
                if known.stacks.insert(sid) {
                    self.stacks.id.push(sid);
                    self.stacks.parent.push(parent.map(|p| stack_ids[p]));
                    self.stacks.frame.push(fid);
                    self.stacks.depth.push(depth);
                    // The closure: each distinct frame on the stack, leaf first. Only a new
                    // stack walks its parents.
                    on_stack.clear();
                    let mut at = Some(i);
                    while let Some(j) = at {
                        let f = frame_ids[trace.stacks[j].frame_id as usize];
                        if !on_stack.contains(&f) {
                            on_stack.push(f);
                        }
                        at = trace.stacks[j].parent_id.map(|p| p as usize);
                    }
                    for f in &on_stack {
                        self.stacks.closure_stack.push(sid);
                        self.stacks.closure_frame.push(*f);
                    }
                }
                stack_ids.push(sid);
                depths.push(depth);
            }
            let ts: Vec<f64> = trace.samples.iter().map(|s| s.timestamp).collect();
            sr.project.push((t.project.clone(), trace.samples.len()));
            for (s, w) in trace.samples.iter().zip(weights(&ts)) {
                sr.trace_id.push(id);
                sr.stack_id.push(s.stack_id.map(|i| stack_ids[i as usize]));
                sr.timestamp.push(origin + s.timestamp);
                sr.weight.push(w);
            }
        }
    }

    /// The batches of every table: `(table, partition dir or None, batch)`.
    pub fn batches(self) -> Vec<(&'static str, Option<PathBuf>, RecordBatch)> {
        let mut out = Vec::new();
        for ((d, release), (tr, sr)) in self.partitions {
            let dir = PathBuf::from(format!("day={d}"))
                .join(format!("release={}", partition_value(&release)));
            out.push(("traces", Some(dir.clone()), tr.batch()));
            let release = (!release.is_empty()).then_some(release.as_str());
            out.push(("samples", Some(dir), sr.batch(&d, release)));
        }
        for (d, rows) in self.events {
            out.push((
                "events",
                Some(PathBuf::from(format!("day={d}"))),
                rows.batch(&d),
            ));
        }
        let (stacks, closure) = self.stacks.batches();
        out.push(("stacks", None, stacks));
        out.push(("stack_frames", None, closure));
        out.push(("frames", None, self.frames.batch()));
        out
    }
}

fn strings<S: AsRef<str>>(v: &[Option<S>]) -> ArrayRef {
    let mut b = StringBuilder::new();
    for s in v {
        b.append_option(s.as_ref().map(AsRef::as_ref));
    }
    Arc::new(b.finish())
}

fn strings_all<S: AsRef<str>>(v: &[S]) -> ArrayRef {
    let mut b = StringBuilder::new();
    for s in v {
        b.append_value(s.as_ref());
    }
    Arc::new(b.finish())
}

fn ints(v: &[Option<i64>]) -> ArrayRef {
    let mut b = Int64Builder::with_capacity(v.len());
    b.extend(v.iter().copied());
    Arc::new(b.finish())
}

fn ints_all(v: &[i64]) -> ArrayRef {
    let mut b = Int64Builder::with_capacity(v.len());
    b.append_slice(v);
    Arc::new(b.finish())
}

fn floats(v: &[Option<f64>]) -> ArrayRef {
    let mut b = Float64Builder::with_capacity(v.len());
    b.extend(v.iter().copied());
    Arc::new(b.finish())
}

fn floats_all(v: &[f64]) -> ArrayRef {
    let mut b = Float64Builder::with_capacity(v.len());
    b.append_slice(v);
    Arc::new(b.finish())
}

fn batch(table: &str, columns: Vec<ArrayRef>) -> RecordBatch {
    RecordBatch::try_new(schema(table), columns).expect("columns match the table's schema")
}

impl TraceRows {
    fn batch(self) -> RecordBatch {
        batch(
            "traces",
            vec![
                ints_all(&self.trace_id),
                strings_all(&self.project),
                strings_all(&self.source),
                floats_all(&self.received),
                floats(&self.time_origin),
                strings(&self.page_url),
                strings(&self.release),
                strings(&self.user_agent),
                strings(&self.session),
                strings(&self.labels),
                ints_all(&self.sample_count),
                strings_all(&self.day),
                strings(&self.view_id),
                floats(&self.start),
                floats(&self.end),
                strings(&self.debug_ids),
            ],
        )
    }
}

impl EventRows {
    fn batch(self, day: &str) -> RecordBatch {
        let n = self.start.len();
        batch(
            "events",
            vec![
                strings_all(&self.project),
                strings_all(&self.source),
                strings_all(&self.kind),
                strings(&self.op),
                strings(&self.name),
                strings(&self.event_id),
                ints(&self.trace_id),
                strings(&self.session),
                strings(&self.view_id),
                strings(&self.url),
                floats_all(&self.start),
                floats_all(&self.duration),
                floats_all(&self.received),
                repeated([(Some(day), n)]),
            ],
        )
    }
}

/// A string column of `runs`: each value repeated its count of times.
fn repeated<'a>(runs: impl IntoIterator<Item = (Option<&'a str>, usize)>) -> ArrayRef {
    let mut b = StringBuilder::new();
    for (v, n) in runs {
        for _ in 0..n {
            b.append_option(v);
        }
    }
    Arc::new(b.finish())
}

impl SampleRows {
    fn batch(self, day: &str, release: Option<&str>) -> RecordBatch {
        let n = self.trace_id.len();
        batch(
            "samples",
            vec![
                ints_all(&self.trace_id),
                repeated(self.project.iter().map(|(p, n)| (Some(p.as_str()), *n))),
                repeated([(Some(day), n)]),
                repeated([(release, n)]),
                ints(&self.stack_id),
                floats_all(&self.timestamp),
                floats_all(&self.weight),
            ],
        )
    }
}

impl FrameRows {
    fn batch(self) -> RecordBatch {
        batch(
            "frames",
            vec![
                ints_all(&self.id),
                strings_all(&self.name),
                strings(&self.resource),
                ints(&self.line),
                ints(&self.column),
            ],
        )
    }
}

impl StackRows {
    fn batches(self) -> (RecordBatch, RecordBatch) {
        let mut depth = UInt32Builder::with_capacity(self.depth.len());
        depth.append_slice(&self.depth);
        (
            batch(
                "stacks",
                vec![
                    ints_all(&self.id),
                    ints(&self.parent),
                    ints_all(&self.frame),
                    Arc::new(depth.finish()),
                ],
            ),
            batch(
                "stack_frames",
                vec![ints_all(&self.closure_stack), ints_all(&self.closure_frame)],
            ),
        )
    }
}

fn seg_file(n: u64) -> String {
    format!("seg-{n:012}.parquet")
}

/// How a table file is encoded: zstd (level 1) for every column, and the samples' times
/// split by byte (`BYTE_STREAM_SPLIT`, no dictionary). A time is a float of ms since the
/// epoch: its sign, exponent and high mantissa bytes barely change along a file, and split
/// apart they compress to almost nothing, where whole floats do not (snappy kept 10.9
/// bytes a sample of a field session's samples table, this 6.1; docs/benchmarks.md).
/// Readers need nothing: each file says how it is encoded, and files written before
/// (snappy) are read as they are.
fn writer_properties(schema: &Schema) -> WriterProperties {
    let mut b =
        WriterProperties::builder().set_compression(Compression::ZSTD(ZstdLevel::default()));
    if schema.column_with_name("timestamp_ms").is_some() {
        let times = ColumnPath::from("timestamp_ms");
        b = b
            .set_column_dictionary_enabled(times.clone(), false)
            .set_column_encoding(times, Encoding::BYTE_STREAM_SPLIT);
    }
    b.build()
}

/// `batch` as one Parquet file written to `sink`, encoded as [`writer_properties`] says:
/// the one encoder of both the local files and the objects.
fn encode<W: std::io::Write + Send>(sink: W, batch: &RecordBatch) -> parquet::errors::Result<W> {
    let schema = batch.schema();
    let props = writer_properties(&schema);
    let mut writer = ArrowWriter::try_new(sink, schema, Some(props))?;
    writer.write(batch)?;
    writer.into_inner()
}

/// Writes `batch` to `path` through a temporary file, fsynced, then renamed.
fn write_parquet(path: &Path, batch: &RecordBatch) -> Result<(), String> {
    let dir = path.parent().expect("a table file has a directory");
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let tmp = path.with_extension("parquet.tmp");
    let file = std::fs::File::create(&tmp).map_err(|e| format!("{}: {e}", tmp.display()))?;
    let file = encode(file, batch).map_err(|e| format!("{}: {e}", tmp.display()))?;
    file.sync_all()
        .map_err(|e| format!("{}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, path).map_err(|e| format!("{}: {e}", path.display()))?;
    wal::sync_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))
}

/// Puts `batch` as the Parquet object `rel` (under the tables) in one request: it appears
/// whole or not at all.
fn put_parquet(objects: &Objects, rel: &Path, batch: &RecordBatch) -> Result<(), String> {
    let key = objects.key(rel)?;
    let bytes = encode(Vec::new(), batch).map_err(|e| format!("{key}: {e}"))?;
    objects.put(&key, bytes)
}

/// The segment of a table file named `seg-N.parquet`, if the name is one.
pub fn segment_of_file(name: &str) -> Option<u64> {
    let n = name.strip_prefix("seg-")?.strip_suffix(".parquet")?;
    let n = n.parse().ok()?;
    // Only the name `seg_file` gives (no sign, the digits it pads to).
    (seg_file(n) == name).then_some(n)
}

/// Whether segment `n` was compacted (its commit mark is written).
pub fn compacted(store: &Store, n: u64) -> Result<bool, String> {
    let mark = Path::new("frames").join(seg_file(n));
    match &store.objects {
        Some(o) => o.exists(&o.key(&mark)?),
        None => Ok(store.local_tables()?.join(mark).exists()),
    }
}

/// The segments compacted now (each `n` for which [`compacted`] holds), from one listing
/// of the commit marks.
pub fn committed(store: &Store) -> Result<std::collections::BTreeSet<u64>, String> {
    let mut out = std::collections::BTreeSet::new();
    if let Some(o) = &store.objects {
        let (objects, _) = o.list_dir(&o.table_dir("frames"))?;
        out.extend(
            objects
                .iter()
                .filter_map(|m| segment_of_file(m.location.filename()?)),
        );
        return Ok(out);
    }
    let dir = store.local_tables()?.join("frames");
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Default::default()),
        Err(e) => return Err(format!("{}: {e}", dir.display())),
    };
    for entry in entries {
        let entry = entry.map_err(|e| format!("{}: {e}", dir.display()))?;
        out.extend(segment_of_file(&entry.file_name().to_string_lossy()));
    }
    Ok(out)
}

/// The rows of the records of segment `n` of the log in `wal_dir`.
pub fn rows_of_segment(wal_dir: &Path, n: u64, known: &mut Known) -> Result<Rows, String> {
    let path = wal::segment_path(wal_dir, n);
    let records = wal::read_segment(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut rows = Rows::default();
    let mut index = 0;
    for r in &records {
        rows.add(n, &mut index, r, known);
    }
    Ok(rows)
}

/// Compacts segment `n` into the tables, then deletes it: only once every table's file is
/// written (fsynced and renamed, or put in the object store), the commit mark last.
pub fn compact(store: &Store, n: u64, known: &mut Known) -> Result<(), String> {
    let wal_dir = store
        .wal_dir()
        .ok_or("compaction needs the log's directory")?;
    if !compacted(store, n)? {
        let rows = rows_of_segment(&wal_dir, n, known)?;
        for (table, partition, batch) in rows.batches() {
            let mut rel = PathBuf::from(table);
            if let Some(p) = partition {
                rel.push(p);
            }
            rel.push(seg_file(n));
            match &store.objects {
                Some(o) => put_parquet(o, &rel, &batch)?,
                None => write_parquet(&store.local_tables()?.join(rel), &batch)?,
            }
        }
    }
    let path = wal::segment_path(&wal_dir, n);
    std::fs::remove_file(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    wal::sync_dir(&wal_dir).map_err(|e| e.to_string())
}

/// Adds the ids of `column` of the Parquet file `reader` to `set`.
fn read_ids<R: parquet::file::reader::ChunkReader + 'static>(
    reader: R,
    column: &str,
    set: &mut IdSet,
) -> Result<(), String> {
    use arrow::array::{Array, Int64Array};
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    let reader = ParquetRecordBatchReaderBuilder::try_new(reader)
        .and_then(|b| {
            let mask = parquet::arrow::ProjectionMask::columns(b.parquet_schema(), [column]);
            b.with_projection(mask).build()
        })
        .map_err(|e| e.to_string())?;
    for batch in reader {
        let batch = batch.map_err(|e| e.to_string())?;
        let ids = batch
            .column(0)
            .as_any()
            .downcast_ref::<Int64Array>()
            .ok_or("an id column is not Int64")?;
        set.extend(ids.iter().flatten());
        debug_assert_eq!(ids.null_count(), 0);
    }
    Ok(())
}

/// The frame and stack ids in the compacted tables: every committed segment's but those in
/// `pending` (whose files a new compaction rewrites). The files of a segment without its
/// commit mark are left too, as queries leave them (tables.rs).
pub fn load_known(store: &Store, pending: &[u64]) -> Result<Known, String> {
    let mut known = Known::default();
    let mut read = committed(store)?;
    read.retain(|n| !pending.contains(n));
    for (table, column) in [("frames", "frame_id"), ("stacks", "stack_id")] {
        let set = if table == "frames" {
            &mut known.frames
        } else {
            &mut known.stacks
        };
        if let Some(o) = &store.objects {
            for n in &read {
                // Every compaction writes both tables' files, rows or none.
                let key = o.table_dir(table).join(seg_file(*n).as_str());
                read_ids(o.get(&key)?, column, set).map_err(|e| format!("{key}: {e}"))?;
            }
            continue;
        }
        let dir = store.local_tables()?.join(table);
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries {
            let entry = entry.map_err(|e| e.to_string())?;
            if !segment_of_file(&entry.file_name().to_string_lossy())
                .is_some_and(|n| read.contains(&n))
            {
                continue;
            }
            let file = std::fs::File::open(entry.path()).map_err(|e| e.to_string())?;
            read_ids(file, column, set).map_err(|e| format!("{}: {e}", entry.path().display()))?;
        }
    }
    Ok(known)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days() {
        assert_eq!(day(0.0), "1970-01-01");
        assert_eq!(day(1_795_651_200_000.0), "2026-11-26");
    }

    #[test]
    fn weights_cap_gaps() {
        assert_eq!(
            weights(&[0.0, 10.0, 20.0, 100.0]),
            vec![10.0, 10.0, 20.0, 10.0]
        );
        assert_eq!(weights(&[5.0]), vec![0.0]);
    }

    #[test]
    fn sample_times_are_split_by_byte_and_every_column_is_zstd() {
        use arrow::array::{Float64Array, Int64Array, StringArray};
        use parquet::file::reader::{FileReader, SerializedFileReader};
        let n = 1000;
        let times: Vec<f64> = (0..n)
            .map(|i| 1_795_651_200_000.0 + f64::from(i) * 9.973)
            .collect();
        let text = |v: &str| Arc::new(StringArray::from(vec![v; n as usize])) as _;
        let batch = RecordBatch::try_new(
            schema("samples"),
            vec![
                Arc::new(Int64Array::from(vec![7; n as usize])),
                text("default"),
                text("2026-11-26"),
                text("1.0"),
                Arc::new(Int64Array::from(
                    (0..i64::from(n)).map(|i| Some(i % 5)).collect::<Vec<_>>(),
                )),
                Arc::new(Float64Array::from(times.clone())),
                Arc::new(Float64Array::from(vec![10.0; n as usize])),
            ],
        )
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("samples").join(seg_file(1));
        write_parquet(&path, &batch).unwrap();
        let reader = SerializedFileReader::new(std::fs::File::open(&path).unwrap()).unwrap();
        let group = reader.metadata().row_group(0);
        for c in group.columns() {
            assert!(
                matches!(c.compression(), Compression::ZSTD(_)),
                "{}: {:?}",
                c.column_path(),
                c.compression()
            );
            let split = c.encodings().any(|e| e == Encoding::BYTE_STREAM_SPLIT);
            assert_eq!(
                split,
                c.column_path().string() == "timestamp_ms",
                "{}: {:?}",
                c.column_path(),
                c.encodings().collect::<Vec<_>>()
            );
        }
        // And the times read back as written.
        let read = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(
            std::fs::File::open(&path).unwrap(),
        )
        .unwrap()
        .build()
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
        let col = read.column_by_name("timestamp_ms").unwrap();
        let col = col.as_any().downcast_ref::<Float64Array>().unwrap();
        assert_eq!(col.values().to_vec(), times);
    }

    #[test]
    fn segment_file_names() {
        assert_eq!(segment_of_file(&seg_file(7)), Some(7));
        assert_eq!(segment_of_file(&seg_file(1 << 40)), Some(1 << 40));
        for other in [
            "seg-000000000007.parquet.tmp",
            "seg-7.parquet",
            "seg-+00000000007.parquet",
            "seg-00000000000x.parquet",
            "part-0.parquet",
        ] {
            assert_eq!(segment_of_file(other), None, "{other}");
        }
    }

    #[test]
    fn frame_ids_differ_by_each_part() {
        let a = frame_id("f", Some("a.js"), Some(1), Some(2));
        assert_ne!(a, frame_id("f", Some("a.js"), Some(1), None));
        assert_ne!(a, frame_id("f", None, Some(1), Some(2)));
        assert_ne!(a, frame_id("f", Some("a.js"), Some(2), Some(1)));
        assert_eq!(a, frame_id("f", Some("a.js"), Some(1), Some(2)));
    }
}
