//! The write-ahead log: every accepted request is one record, appended to the current
//! segment and fsynced before the request is answered. One committer thread takes what is
//! queued, writes it all and fsyncs once (group commit): many concurrent requests share one
//! `fdatasync`. The queue is bounded; a request that finds it full gets 429.
//!
//! Segment files are `wal/NNNNNNNNNNNN.wal`; a record is `len: u32 LE`, `crc32: u32 LE` of
//! the payload, then the payload (the request's [`Ingested`] traces, in record.rs's binary
//! form; a JSON array in logs written before it). Reading stops at the first
//! short or corrupt record: only a record whose fsync never finished can be torn, and no
//! such record was acknowledged.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::model::Ingested;
use crate::record;

/// A record waiting for its fsync.
struct Pending {
    bytes: Vec<u8>,
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

pub fn encode_record(traces: &[Ingested]) -> Vec<u8> {
    let mut out = vec![0u8; 8];
    record::encode(traces, &mut out);
    let len = (out.len() - 8) as u32;
    let crc = crc32fast::hash(&out[8..]);
    out[..4].copy_from_slice(&len.to_le_bytes());
    out[4..8].copy_from_slice(&crc.to_le_bytes());
    out
}

/// The records of a segment, up to the first torn or corrupt one.
pub fn read_segment(path: &Path) -> std::io::Result<Vec<Vec<Ingested>>> {
    let bytes = std::fs::read(path)?;
    let mut rest: &[u8] = &bytes;
    let mut out = Vec::new();
    while rest.len() >= 8 {
        let len = u32::from_le_bytes([rest[0], rest[1], rest[2], rest[3]]) as usize;
        let crc = u32::from_le_bytes([rest[4], rest[5], rest[6], rest[7]]);
        let Some(payload) = rest.get(8..8 + len) else {
            break;
        };
        if crc32fast::hash(payload) != crc {
            break;
        }
        match record::decode(payload) {
            Ok(traces) => out.push(traces),
            Err(_) => break,
        }
        rest = &rest[8 + len..];
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
        let segment = Segment::create(&dir, first)?;
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
        traces: &[Ingested],
    ) -> Result<tokio::sync::oneshot::Receiver<Result<(), String>>, AppendError> {
        let (done, wait) = tokio::sync::oneshot::channel();
        let bytes = encode_record(traces);
        let len = bytes.len();
        // A record alone larger than the budget still goes when nothing else waits.
        let before = self.queued.fetch_add(len, Ordering::Relaxed);
        if before > 0 && before + len > self.max_queued {
            self.queued.fetch_sub(len, Ordering::Relaxed);
            return Err(AppendError::Full);
        }
        let pending = Pending { bytes, done };
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
    pub async fn append(&self, traces: &[Ingested]) -> Result<(), AppendError> {
        match self.submit(traces)?.await {
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

/// The segment the log appends to now.
struct Segment {
    number: u64,
    file: Arc<File>,
    bytes: u64,
    opened: Instant,
}

impl Segment {
    fn create(dir: &Path, number: u64) -> std::io::Result<Segment> {
        let file = OpenOptions::new()
            .create_new(true)
            .append(true)
            .open(segment_path(dir, number))?;
        sync_dir(dir)?;
        Ok(Segment {
            number,
            file: Arc::new(file),
            bytes: 0,
            opened: Instant::now(),
        })
    }

    /// Writes a commit's bytes, not yet synced.
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        let written = (&*self.file).write_all(bytes);
        if written.is_err() {
            // Nothing of a failed batch was acknowledged: cut it off, so that the records
            // after it are not read as garbage (reading stops at a corrupt record).
            let _ = self.file.set_len(self.bytes);
        } else {
            self.bytes += bytes.len() as u64;
        }
        written
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
    let mut buf: Vec<u8> = Vec::new();
    loop {
        let head = match rx.recv_timeout(Duration::from_millis(200)) {
            Ok(p) => Some(p),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => break,
        };
        let broken = acks.broken() == Some(segment.number);
        if segment.bytes > 0
            && (broken
                || segment.bytes >= rotation.max_bytes
                || segment.opened.elapsed() >= rotation.max_age)
        {
            let n = segment.number;
            match Segment::create(dir, n + 1) {
                Ok(next) => {
                    segment = next;
                    send(&segment, Vec::new(), Ok(()), Some(n));
                }
                Err(e) => {
                    // Kept on the current segment; tried again a rotation later.
                    segment.opened = Instant::now();
                    eprintln!("jsprof-collector: cannot start a new log segment: {e}");
                }
            }
        }
        let Some(p) = head else {
            continue;
        };
        let mut batch = vec![p];
        while buf.len() < (8 << 20) {
            match rx.try_recv() {
                Ok(p) => {
                    buf.extend_from_slice(&p.bytes);
                    batch.push(p);
                }
                Err(_) => break,
            }
        }
        let mut all = std::mem::take(&mut batch[0].bytes);
        all.extend_from_slice(&buf);
        buf.clear();
        let written = segment.write(&all).map_err(|e| e.to_string());
        committed.fetch_sub(all.len(), Ordering::Relaxed);
        send(&segment, batch, written, None);
        if !pace.is_zero() {
            // What arrives meanwhile waits in the queue (429 once it is full).
            std::thread::sleep(pace);
        }
    }
    if segment.bytes > 0 {
        send(&segment, Vec::new(), Ok(()), Some(segment.number));
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
        let _waiting = wal.submit(&one()).unwrap();
        assert_eq!(wal.submit(&one()).unwrap_err(), AppendError::Full);
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
        let _waiting = wal.submit(&one()).unwrap();
        assert_eq!(wal.submit(&one()).unwrap_err(), AppendError::Full);
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

    #[test]
    fn group_commit_acknowledges_every_record() {
        let dir = tempfile::tempdir().unwrap();
        let (sealed, _rx) = mpsc::channel();
        let rotation = Rotation {
            max_bytes: 1 << 30,
            max_age: Duration::from_secs(3600),
        };
        let (wal, _thread) = Wal::start(
            dir.path().to_owned(),
            7,
            1000,
            usize::MAX,
            rotation,
            Duration::ZERO,
            sealed,
        )
        .unwrap();
        let waits: Vec<_> = (0..500).map(|_| wal.submit(&one()).unwrap()).collect();
        for w in waits {
            w.blocking_recv().unwrap().unwrap();
        }
        assert_eq!(
            read_segment(&segment_path(dir.path(), 7)).unwrap().len(),
            500
        );
    }
}
