//! The write-ahead log: every accepted request is one record, written to the current
//! segment and fsynced before the request is answered. One writer thread takes what is
//! queued and writes it all as one commit (group commit: many concurrent requests share one
//! `fdatasync`); [`SYNCERS`] threads fsync commits, so that the next commit is written
//! while one waits on the disk. Requests are answered in the log's order, each once its
//! commit and every commit before it are synced. The queue is bounded; a request that
//! finds it full gets 429.
//!
//! Segment files are `wal/NNNNNNNNNNNN.wal`, each made ahead of time zero-filled (see
//! [`Segment`]); a record is `len: u32 LE`, `crc32: u32 LE` of the payload, then the
//! payload (the request's [`Ingested`] traces, in record.rs's binary form; a JSON array in
//! logs written before it). Reading stops at the first zero header (where no record was
//! written) and at the first short or corrupt record: only a record whose fsync never
//! finished can be torn, and no such record was acknowledged.

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::model::{Contents, Ingested};
use crate::record::{self, Batch};

/// A record waiting for its fsync.
struct Pending {
    /// The record's header: the payload's length and CRC.
    head: [u8; 8],
    payload: Vec<u8>,
    done: tokio::sync::oneshot::Sender<Result<(), String>>,
}

/// Why a record was not appended.
#[derive(Debug, PartialEq, Eq)]
pub enum AppendError {
    /// The queue is full: answer 429.
    Full,
    /// The log failed (disk full, I/O error) or is closed: answer 503.
    Failed(String),
}

/// The log's handle for request handlers. Cloning it is cheap.
#[derive(Debug, Clone)]
pub struct Wal {
    tx: SyncSender<Pending>,
    /// The bytes of the records waiting for a commit, and the most that may wait: with the
    /// count of records, what bounds the queue's memory whatever the traces' size.
    queued: Arc<AtomicUsize>,
    max_queued: usize,
}

/// When the committer seals the current segment for compaction.
#[derive(Debug, Clone, Copy)]
pub struct Rotation {
    pub max_bytes: u64,
    pub max_age: Duration,
}

pub fn segment_path(dir: &Path, n: u64) -> PathBuf {
    dir.join(format!("{n:012}.wal"))
}

/// The segment numbers in `dir`, ascending.
pub fn segments(dir: &Path) -> std::io::Result<Vec<u64>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let name = entry?.file_name();
        let name = name.to_string_lossy();
        if let Some(n) = name.strip_suffix(".wal").and_then(|n| n.parse().ok()) {
            out.push(n);
        }
    }
    out.sort_unstable();
    Ok(out)
}

/// fsyncs a directory, so that a file created or renamed in it survives a crash.
pub fn sync_dir(dir: &Path) -> std::io::Result<()> {
    File::open(dir)?.sync_all()
}

/// A record's header: its payload's length and CRC.
fn record_head(payload: &[u8]) -> [u8; 8] {
    let mut head = [0u8; 8];
    head[..4].copy_from_slice(&(payload.len() as u32).to_le_bytes());
    head[4..].copy_from_slice(&crc32fast::hash(payload).to_le_bytes());
    head
}

/// The record of `traces`, as the log writes it.
pub fn encode_record(traces: &[Ingested]) -> Vec<u8> {
    let payload = Batch::of(traces).payload;
    let mut out = record_head(&payload).to_vec();
    out.extend_from_slice(&payload);
    out
}

/// Whether the segment at `path` holds a record (a segment is made zero-filled: its length
/// says nothing).
pub fn holds_records(path: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 4];
    File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok_and(|()| head != [0; 4])
}

/// The records of a segment, up to its zero tail or its first torn or corrupt record. Read
/// record by record: a segment is made longer than what is written in it.
pub fn read_segment(path: &Path) -> std::io::Result<Vec<Contents>> {
    use std::io::{ErrorKind, Read};
    let file = File::open(path)?;
    let mut left = file.metadata()?.len();
    let mut reader = std::io::BufReader::new(file);
    // A short read is the segment's end, as a torn record is; any other error is one.
    let mut read = |buf: &mut [u8]| match reader.read_exact(buf) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == ErrorKind::UnexpectedEof => Ok(false),
        Err(e) => Err(e),
    };
    let mut out = Vec::new();
    let mut head = [0u8; 8];
    let mut payload = Vec::new();
    while read(&mut head)? {
        let len = u32::from_le_bytes([head[0], head[1], head[2], head[3]]);
        let crc = u32::from_le_bytes([head[4], head[5], head[6], head[7]]);
        // The file may grow past the length it had when opened: what grew is not read.
        left = left.saturating_sub(8);
        if len == 0 {
            // The zeros a segment is made with: no record was written here.
            break;
        }
        if u64::from(len) > left {
            break;
        }
        payload.resize(len as usize, 0);
        if !read(&mut payload)? || crc32fast::hash(&payload) != crc {
            break;
        }
        left -= u64::from(len);
        match record::decode(&payload) {
            Ok(contents) => out.push(contents),
            Err(_) => break,
        }
    }
    Ok(out)
}

impl Wal {
    /// Starts the committer on a new segment numbered `first` in `dir`. Sealed segment
    /// numbers go to `sealed`. `queue` is how many records may wait for a commit, and
    /// `queue_bytes` how many bytes of them; `pace` is the least time between two commits
    /// (zero: commit as soon as a record waits).
    #[allow(clippy::too_many_arguments)]
    pub fn start(
        dir: PathBuf,
        first: u64,
        queue: usize,
        queue_bytes: usize,
        rotation: Rotation,
        pace: Duration,
        sealed: mpsc::Sender<u64>,
    ) -> std::io::Result<(Wal, std::thread::JoinHandle<()>)> {
        let (tx, rx) = mpsc::sync_channel::<Pending>(queue);
        let queued = Arc::new(AtomicUsize::new(0));
        let committed = queued.clone();
        let segment = Segment::create(&dir, first, MIN_CAPACITY)?;
        let handle = std::thread::Builder::new()
            .name("wal-commit".into())
            .spawn(move || {
                let acks = Arc::new(Acks {
                    state: Mutex::new(AckState::default()),
                    sealed,
                });
                // At most one commit waits for a free syncer: meanwhile the queue fills,
                // and the next commit takes all of it.
                let (jobs, job_rx) = mpsc::sync_channel::<Commit>(0);
                let job_rx = Arc::new(Mutex::new(job_rx));
                let syncers: Vec<_> = (0..SYNCERS)
                    .map(|i| {
                        let (job_rx, acks) = (job_rx.clone(), acks.clone());
                        std::thread::Builder::new()
                            .name(format!("wal-sync-{i}"))
                            .spawn(move || sync_loop(&job_rx, &acks))
                    })
                    .collect::<std::io::Result<_>>()
                    .expect("the log's sync threads start");
                write_loop(&dir, segment, &rx, &committed, rotation, pace, &acks, &jobs);
                drop(jobs);
                for s in syncers {
                    let _ = s.join();
                }
            })?;
        Ok((
            Wal {
                tx,
                queued,
                max_queued: queue_bytes,
            },
            handle,
        ))
    }

    /// Queues one record: the receiver resolves once it is fsynced. `Full` at once when
    /// the queue is.
    pub fn submit(
        &self,
        batch: Batch,
    ) -> Result<tokio::sync::oneshot::Receiver<Result<(), String>>, AppendError> {
        let (done, wait) = tokio::sync::oneshot::channel();
        let head = record_head(&batch.payload);
        let len = head.len() + batch.payload.len();
        // A record alone larger than the budget still goes when nothing else waits.
        let before = self.queued.fetch_add(len, Ordering::Relaxed);
        if before > 0 && before + len > self.max_queued {
            self.queued.fetch_sub(len, Ordering::Relaxed);
            return Err(AppendError::Full);
        }
        let pending = Pending {
            head,
            payload: batch.payload,
            done,
        };
        match self.tx.try_send(pending) {
            Ok(()) => Ok(wait),
            Err(TrySendError::Full(_)) => {
                self.queued.fetch_sub(len, Ordering::Relaxed);
                Err(AppendError::Full)
            }
            Err(TrySendError::Disconnected(_)) => {
                self.queued.fetch_sub(len, Ordering::Relaxed);
                Err(AppendError::Failed("the log is closed".into()))
            }
        }
    }

    /// Appends one record; resolves once it is fsynced.
    pub async fn append(&self, batch: Batch) -> Result<(), AppendError> {
        match self.submit(batch)?.await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(AppendError::Failed(e)),
            Err(_) => Err(AppendError::Failed("the log is closed".into())),
        }
    }
}

/// How many threads fsync commits at once. A commit's `fdatasync` waits on the disk, not
/// on a core: while one waits, the next commit is written and its sync starts. On this
/// machine's disk one thread makes ~280 syncs a second and two make several times more
/// (see the README's measurements).
const SYNCERS: usize = 2;

/// The segment the log appends to now. It is made zero-filled to `capacity` bytes and
/// fsynced before its first record, so that a commit overwrites blocks the file already has:
/// its `fdatasync` then flushes data only. An append that grows the file must also commit
/// the file system's journal (the new size, the new blocks), which took ~4 ms a sync on this
/// machine's disk, against ~0.1 ms for an overwrite (the README's measurements). Reading
/// stops at the first zero header, where no record was written.
///
/// A commit writes whole pages ([`PAGE`]): from the start of the page where the records
/// end, through the end of the page where the commit's records end, zero-padded as the
/// file already is. A write that covers part of a page the page cache does not hold (the
/// zeros went around it, through `O_DIRECT`) makes the kernel read that page from the disk
/// first: one read per commit (7–9 MB/s of reads during the ingest bench, none now), and
/// the writer's CPU went from 0.13–0.19 to 0.07–0.11 of a core. The bytes a commit writes
/// again, before its own, are the ones already there, so a torn write of them leaves them
/// as they were (PostgreSQL writes its log's last page again in the same way).
struct Segment {
    number: u64,
    file: Arc<File>,
    bytes: u64,
    capacity: u64,
    opened: Instant,
    /// The segment's bytes from the start of its last page to its end. A commit's pages
    /// are built after them, in this buffer, which then keeps the new last page's bytes.
    tail: Vec<u8>,
}

/// The page cache's unit, which a commit writes whole.
const PAGE: u64 = 4096;

/// The least and the first capacity of a segment.
const MIN_CAPACITY: u64 = 1 << 20;

impl Segment {
    fn create(dir: &Path, number: u64, capacity: u64) -> std::io::Result<Segment> {
        let path = segment_path(dir, number);
        let file = OpenOptions::new()
            .create_new(true)
            .write(true)
            .open(&path)?;
        let zeroed = zero_fill(&path, &file, capacity)
            .and_then(|()| file.sync_all())
            .and_then(|()| sync_dir(dir));
        if let Err(e) = zeroed {
            // A segment half made holds no record: gone, so that it can be made again.
            let _ = std::fs::remove_file(&path);
            return Err(e);
        }
        Ok(Segment {
            number,
            file: Arc::new(file),
            bytes: 0,
            capacity,
            opened: Instant::now(),
            tail: Vec::new(),
        })
    }

    /// Writes a commit (its records' bytes, in `parts`) after the segment's records, not
    /// yet synced, as whole pages where the segment was made long enough (past its capacity
    /// the file grows, and only the last page is written again). A failed write leaves the
    /// segment's length as it was: the next commit overwrites what it left (reading stops
    /// at a corrupt record, so nothing after it would be read).
    fn write<'a>(&mut self, parts: impl IntoIterator<Item = &'a [u8]>) -> std::io::Result<()> {
        use std::os::unix::fs::FileExt;
        let kept = self.tail.len();
        let start = self.bytes - kept as u64;
        for part in parts {
            self.tail.extend_from_slice(part);
        }
        let written = self.tail.len();
        let end = start + written as u64;
        if end <= self.capacity {
            let padded = end.next_multiple_of(PAGE).min(self.capacity);
            self.tail.resize((padded - start) as usize, 0);
        }
        let result = self.file.write_all_at(&self.tail, start);
        if result.is_ok() {
            self.bytes = end;
            self.tail.truncate(written);
            self.tail.drain(..written - (end % PAGE) as usize);
        } else {
            self.tail.truncate(kept);
        }
        result
    }

    /// The capacity for the segment after this one: twice what this one took, so that a
    /// segment of steady traffic fits in one, within [`MIN_CAPACITY`] and the rotation's
    /// size.
    fn next_capacity(&self, rotation: &Rotation) -> u64 {
        (self.bytes.saturating_mul(2))
            .next_power_of_two()
            .clamp(MIN_CAPACITY, rotation.max_bytes.max(MIN_CAPACITY))
    }
}

/// Writes `len` zeros at the start of `file` (at `path`). Through `O_DIRECT` where the file
/// system takes it: zeros through the page cache cost a copy of every byte, as much as the
/// records themselves. Else buffered.
fn zero_fill(path: &Path, file: &File, len: u64) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    const CHUNK: usize = 1 << 20;
    // An aligned 1 MiB of zeros, as O_DIRECT wants, cut from a larger buffer.
    let buf = vec![0u8; CHUNK + 4096];
    let start = buf.as_ptr().align_offset(4096);
    let zeros = &buf[start..start + CHUNK];
    let direct = OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_DIRECT)
        .open(path);
    if let Ok(direct) = direct {
        if write_zeros(&direct, zeros, len).is_ok() {
            return Ok(());
        }
    }
    write_zeros(file, zeros, len)
}

fn write_zeros(file: &File, zeros: &[u8], len: u64) -> std::io::Result<()> {
    use std::os::unix::fs::FileExt;
    let mut at = 0;
    while at < len {
        let n = (len - at).min(zeros.len() as u64) as usize;
        file.write_all_at(&zeros[..n], at)?;
        at += n as u64;
    }
    Ok(())
}

/// Makes the next segment ahead of time on its own thread: zero-filling it is off the
/// commit path.
struct Preparer {
    requests: mpsc::Sender<(u64, u64)>,
    ready: mpsc::Receiver<std::io::Result<Segment>>,
    asked: Option<u64>,
}

impl Preparer {
    fn start(dir: PathBuf) -> std::io::Result<Preparer> {
        let (requests, asks) = mpsc::channel::<(u64, u64)>();
        let (made, ready) = mpsc::channel();
        std::thread::Builder::new()
            .name("wal-prepare".into())
            .spawn(move || {
                for (number, capacity) in asks {
                    let _ = made.send(Segment::create(&dir, number, capacity));
                }
            })?;
        Ok(Preparer {
            requests,
            ready,
            asked: None,
        })
    }

    fn ask(&mut self, number: u64, capacity: u64) {
        if self.requests.send((number, capacity)).is_ok() {
            self.asked = Some(number);
        }
    }

    /// Segment `number`: the one made ahead if it was asked for and made, else one made
    /// now without a capacity (its commits then grow the file).
    fn take(&mut self, dir: &Path, number: u64) -> std::io::Result<Segment> {
        if self.asked.take() == Some(number) {
            if let Ok(Ok(segment)) = self.ready.recv() {
                return Ok(segment);
            }
        }
        Segment::create(dir, number, 0)
    }

    /// The segment made ahead and never used is removed: it holds no record.
    fn discard(self, dir: &Path) {
        if self.asked.is_some() {
            if let Ok(Ok(segment)) = self.ready.recv() {
                let _ = std::fs::remove_file(segment_path(dir, segment.number));
            }
        }
    }
}

/// One commit on its way to its fsync and its acknowledgements, in the order written.
struct Commit {
    seq: u64,
    segment: u64,
    file: Arc<File>,
    batch: Vec<Pending>,
    /// The write's result, then the fsync's: a commit whose write failed is not synced.
    written: Result<(), String>,
    sync_failed: bool,
    /// A segment sealed after this commit: it goes to compaction once every commit before
    /// it is answered.
    seals: Option<u64>,
}

/// The commits synced but not answered yet, because one written before them is still
/// syncing: requests are answered in the log's order, so that no record is acknowledged
/// while one before it in its segment could still be torn.
#[derive(Default)]
struct AckState {
    next: u64,
    done: std::collections::BTreeMap<u64, Commit>,
    /// A segment one of whose syncs failed: no later commit in it is acknowledged (its
    /// records sit after bytes that may be torn), and the writer moves to a new segment.
    broken: Option<u64>,
}

struct Acks {
    state: Mutex<AckState>,
    sealed: mpsc::Sender<u64>,
}

impl Acks {
    /// A commit's outcome, and every commit after it that was waiting for it, answered.
    fn complete(&self, commit: Commit) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.done.insert(commit.seq, commit);
        loop {
            let next = state.next;
            let Some(c) = state.done.remove(&next) else {
                break;
            };
            state.next += 1;
            let result = match c.written {
                Ok(()) if state.broken == Some(c.segment) => {
                    Err("an earlier commit of this log segment failed its fsync".to_string())
                }
                ref r => r.clone(),
            };
            if c.sync_failed {
                state.broken = Some(c.segment);
            }
            for p in c.batch {
                let _ = p.done.send(result.clone());
            }
            if let Some(n) = c.seals {
                let _ = self.sealed.send(n);
            }
        }
    }

    fn broken(&self) -> Option<u64> {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).broken
    }
}

/// A syncer: fsyncs each commit it takes, then hands it to the acknowledgements.
fn sync_loop(jobs: &Mutex<mpsc::Receiver<Commit>>, acks: &Acks) {
    loop {
        let job = jobs.lock().unwrap_or_else(|e| e.into_inner()).recv();
        let Ok(mut commit) = job else {
            return;
        };
        if commit.written.is_ok() && !commit.batch.is_empty() {
            if let Err(e) = commit.file.sync_data() {
                commit.written = Err(format!("fsync of the log failed: {e}"));
                commit.sync_failed = true;
            }
        }
        acks.complete(commit);
    }
}

/// The writer: takes what is queued, appends it to the segment as one commit (group
/// commit: everything queued meanwhile shares the commit's fsync), hands it to a syncer,
/// and rotates segments.
#[allow(clippy::too_many_arguments)]
fn write_loop(
    dir: &Path,
    mut segment: Segment,
    rx: &mpsc::Receiver<Pending>,
    committed: &AtomicUsize,
    rotation: Rotation,
    pace: Duration,
    acks: &Acks,
    jobs: &SyncSender<Commit>,
) {
    let mut seq = 0u64;
    let mut send = |segment: &Segment, batch, written, seals| {
        let commit = Commit {
            seq,
            segment: segment.number,
            file: segment.file.clone(),
            batch,
            written,
            sync_failed: false,
            seals,
        };
        seq += 1;
        if let Err(mpsc::SendError(c)) = jobs.send(commit) {
            // No syncer is left (one panicked): answer here rather than never.
            acks.complete(Commit {
                written: Err("the log's sync threads stopped".into()),
                ..c
            });
        }
    };
    let mut preparer = match Preparer::start(dir.to_owned()) {
        Ok(p) => Some(p),
        Err(e) => {
            eprintln!("jsprof-collector: log segments are not made ahead: {e}");
            None
        }
    };
    if let Some(p) = &mut preparer {
        p.ask(segment.number + 1, segment.next_capacity(&rotation));
    }
    loop {
        let head = match rx.recv_timeout(Duration::from_millis(200)) {
            Ok(p) => Some(p),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => break,
        };
        // Group commit: everything queued meanwhile shares this commit.
        let mut batch = Vec::new();
        let mut len = 0;
        let mut next = head;
        while let Some(p) = next {
            len += p.head.len() + p.payload.len();
            batch.push(p);
            next = if len < (8 << 20) {
                rx.try_recv().ok()
            } else {
                None
            };
        }
        let broken = acks.broken() == Some(segment.number);
        let full = segment.capacity > 0 && segment.bytes + len as u64 > segment.capacity;
        if segment.bytes > 0
            && (broken
                || full
                || segment.bytes >= rotation.max_bytes
                || segment.opened.elapsed() >= rotation.max_age)
        {
            let n = segment.number;
            let capacity = segment.next_capacity(&rotation);
            let next = match &mut preparer {
                Some(p) => p.take(dir, n + 1),
                None => Segment::create(dir, n + 1, 0),
            };
            match next {
                Ok(next) => {
                    segment = next;
                    send(&segment, Vec::new(), Ok(()), Some(n));
                    if let Some(p) = &mut preparer {
                        p.ask(n + 2, capacity);
                    }
                }
                Err(e) => {
                    // Kept on the current segment; tried again a rotation later.
                    segment.opened = Instant::now();
                    eprintln!("jsprof-collector: cannot start a new log segment: {e}");
                }
            }
        }
        if batch.is_empty() {
            continue;
        }
        let records = batch.iter().flat_map(|p| [&p.head[..], &p.payload[..]]);
        let written = segment.write(records).map_err(|e| e.to_string());
        committed.fetch_sub(len, Ordering::Relaxed);
        send(&segment, batch, written, None);
        if !pace.is_zero() {
            // What arrives meanwhile waits in the queue (429 once it is full).
            std::thread::sleep(pace);
        }
    }
    if let Some(p) = preparer {
        p.discard(dir);
    }
    if segment.bytes > 0 {
        send(&segment, Vec::new(), Ok(()), Some(segment.number));
    } else {
        // Nothing was written in it: no record to keep.
        let _ = std::fs::remove_file(segment_path(dir, segment.number));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Meta, Source};

    fn one() -> Vec<Ingested> {
        vec![Ingested {
            project: "p".into(),
            source: Source::Jsprof,
            received: 1.0,
            meta: Meta::default(),
            trace: jsprof_profiler::ProfilerTrace::default(),
            events: Vec::new(),
        }]
    }

    #[test]
    fn a_full_queue_refuses_at_once() {
        // No committer drains this queue of one.
        let (tx, _rx) = mpsc::sync_channel(1);
        let wal = Wal {
            tx,
            queued: Arc::new(AtomicUsize::new(0)),
            max_queued: usize::MAX,
        };
        let _waiting = wal.submit(Batch::of(&one())).unwrap();
        assert_eq!(
            wal.submit(Batch::of(&one())).unwrap_err(),
            AppendError::Full
        );
    }

    #[test]
    fn a_queue_full_of_bytes_refuses_at_once() {
        // Room for a thousand records, but for the bytes of one.
        let (tx, _rx) = mpsc::sync_channel(1000);
        let wal = Wal {
            tx,
            queued: Arc::new(AtomicUsize::new(0)),
            max_queued: encode_record(&one()).len(),
        };
        let _waiting = wal.submit(Batch::of(&one())).unwrap();
        assert_eq!(
            wal.submit(Batch::of(&one())).unwrap_err(),
            AppendError::Full
        );
        assert_eq!(
            wal.queued.load(Ordering::Relaxed),
            encode_record(&one()).len()
        );
    }

    #[test]
    fn records_round_trip_and_a_torn_tail_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("1.wal");
        let mut bytes = encode_record(&one());
        bytes.extend_from_slice(&encode_record(&one()));
        let whole = bytes.len();
        bytes.extend_from_slice(&encode_record(&one())[..20]);
        std::fs::write(&path, &bytes).unwrap();
        assert_eq!(read_segment(&path).unwrap().len(), 2);
        // A flipped byte in the second record ends the segment there.
        bytes.truncate(whole);
        bytes[whole - 3] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        assert_eq!(read_segment(&path).unwrap().len(), 1);
    }

    /// Commits write whole pages, each after the records before it: the file holds the
    /// commits' bytes one after the other, then the zeros it was made with, whatever the
    /// commits' sizes; past its capacity it grows by the commits' bytes alone.
    #[test]
    fn commits_write_whole_pages_and_leave_the_records_as_written() {
        let dir = tempfile::tempdir().unwrap();
        for capacity in [3 * PAGE + 100, 0] {
            let number = capacity + 1;
            let mut segment = Segment::create(dir.path(), number, capacity).unwrap();
            let mut expected = Vec::new();
            for (i, len) in [1, 4095, 1, 4096, 10, 2000, 4200, 900, 3]
                .into_iter()
                .enumerate()
            {
                let commit: Vec<u8> = (0..len).map(|j| (i * 31 + j) as u8 | 1).collect();
                segment.write([&commit[..]]).unwrap();
                expected.extend_from_slice(&commit);
                let file = std::fs::read(segment_path(dir.path(), number)).unwrap();
                assert_eq!(&file[..expected.len()], &expected[..], "commit {i}");
                assert!(file[expected.len()..].iter().all(|&b| b == 0), "commit {i}");
                assert_eq!(file.len() as u64, capacity.max(expected.len() as u64));
                assert_eq!(segment.tail.len() as u64, segment.bytes % PAGE);
            }
        }
    }

    /// A log in `dir` from segment `first`, rotating at `max_bytes`: the log, its thread,
    /// and the sealed segments' numbers.
    fn started(
        dir: &Path,
        first: u64,
        max_bytes: u64,
    ) -> (Wal, std::thread::JoinHandle<()>, mpsc::Receiver<u64>) {
        let (sealed, sealed_rx) = mpsc::channel();
        let rotation = Rotation {
            max_bytes,
            max_age: Duration::from_secs(3600),
        };
        let (wal, thread) = Wal::start(
            dir.to_owned(),
            first,
            1000,
            usize::MAX,
            rotation,
            Duration::ZERO,
            sealed,
        )
        .unwrap();
        (wal, thread, sealed_rx)
    }

    #[test]
    fn segments_are_made_ahead_zero_filled_and_every_record_is_read() {
        let dir = tempfile::tempdir().unwrap();
        // Tiny segments: many rotations, each onto a segment made ahead.
        let (wal, thread, sealed_rx) = started(dir.path(), 1, 1024);
        for _ in 0..300 {
            wal.submit(Batch::of(&one()))
                .unwrap()
                .blocking_recv()
                .unwrap()
                .unwrap();
        }
        // Made zero-filled: longer than its records, which reading stops after.
        let first = segment_path(dir.path(), 1);
        assert!(std::fs::metadata(&first).unwrap().len() >= MIN_CAPACITY);
        assert!(holds_records(&first));
        drop(wal);
        thread.join().unwrap();
        let sealed: Vec<u64> = sealed_rx.iter().collect();
        assert!(sealed.len() > 5, "{sealed:?}");
        assert_eq!(sealed, (1..=sealed.len() as u64).collect::<Vec<_>>());
        let records: usize = sealed
            .iter()
            .map(|n| read_segment(&segment_path(dir.path(), *n)).unwrap().len())
            .sum();
        assert_eq!(records, 300);
        // The segment made ahead and never written is gone.
        assert_eq!(segments(dir.path()).unwrap(), sealed);
    }

    #[test]
    fn a_zero_tail_ends_a_segment_and_a_length_past_the_file_is_torn() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("1.wal");
        let mut bytes = encode_record(&one());
        bytes.extend_from_slice(&encode_record(&one()));
        bytes.resize(bytes.len() + 4096, 0);
        // After the zeros, a record is never read.
        bytes.extend_from_slice(&encode_record(&one()));
        std::fs::write(&path, &bytes).unwrap();
        assert_eq!(read_segment(&path).unwrap().len(), 2);
        // A header whose length runs past the end of the file.
        let mut torn = encode_record(&one());
        torn.extend_from_slice(&u32::MAX.to_le_bytes());
        torn.extend_from_slice(&[1, 2, 3, 4, 5]);
        std::fs::write(&path, &torn).unwrap();
        assert_eq!(read_segment(&path).unwrap().len(), 1);
    }

    #[test]
    fn group_commit_acknowledges_every_record() {
        let dir = tempfile::tempdir().unwrap();
        let (wal, _thread, _sealed) = started(dir.path(), 7, 1 << 30);
        let waits: Vec<_> = (0..500)
            .map(|_| wal.submit(Batch::of(&one())).unwrap())
            .collect();
        for w in waits {
            w.blocking_recv().unwrap().unwrap();
        }
        assert_eq!(
            read_segment(&segment_path(dir.path(), 7)).unwrap().len(),
            500
        );
    }
}
