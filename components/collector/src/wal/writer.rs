//! The log's writer: one thread takes what is queued and writes it all as one commit
//! (group commit), [`SYNCERS`] threads fsync commits, and the acknowledgements answer each
//! request in the log's order once its commit and every commit before it are synced. It
//! rotates segments, each made ahead by the [`Preparer`](super::segment::Preparer).

use std::fs::File;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, SyncSender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::segment::{segment_path, Preparer, Rotation, Segment};

/// A record waiting for its fsync.
pub(super) struct Pending {
    /// The record's header: the payload's length and CRC.
    pub(super) head: [u8; 8],
    pub(super) payload: Vec<u8>,
    pub(super) done: tokio::sync::oneshot::Sender<Result<(), String>>,
}

/// How many threads fsync commits at once. A commit's `fdatasync` waits on the disk, not
/// on a core: while one waits, the next commit is written and its sync starts. On this
/// machine's disk one thread makes ~280 syncs a second and two make several times more
/// (see the README's measurements).
const SYNCERS: usize = 2;

/// The committer's thread: the syncers started, then the writer until every handle of the
/// log is gone, then the syncers joined. It writes from `segment` on, in `dir`, what `rx`
/// brings (`committed`: the bytes still queued, which it takes off as it commits), and
/// sends the numbers of the segments it seals to `sealed`.
pub(super) fn run(
    dir: &Path,
    segment: Segment,
    rx: &mpsc::Receiver<Pending>,
    committed: &AtomicUsize,
    rotation: Rotation,
    pace: Duration,
    sealed: mpsc::Sender<u64>,
) {
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
    write_loop(dir, segment, rx, committed, rotation, pace, &acks, &jobs);
    drop(jobs);
    for s in syncers {
        let _ = s.join();
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
