//! The write-ahead log: every accepted request is one record, written to the current
//! segment and fsynced before the request is answered. One writer thread takes what is
//! queued and writes it all as one commit (group commit: many concurrent requests share one
//! `fdatasync`); `SYNCERS` threads fsync commits, so that the next commit is written
//! while one waits on the disk. Requests are answered in the log's order, each once its
//! commit and every commit before it are synced. The queue is bounded; a request that
//! finds it full gets 429.
//!
//! Segment files are `wal/NNNNNNNNNNNN.wal`, each made ahead of time zero-filled (see
//! `Segment`); a record is `len: u32 LE`, `crc32: u32 LE` of the payload, then the
//! payload (the request's [`Ingested`](crate::model::Ingested) traces, in record.rs's binary form; a JSON array in
//! logs written before it). Reading stops at the first zero header (where no record was
//! written) and at the first short or corrupt record: only a record whose fsync never
//! finished can be torn, and no such record was acknowledged.
//!
//! - [`segment`]: the segment files and their records;
//! - [`writer`]: the writer, its syncers and the acknowledgements;
//! - this module: [`Wal`], the handle request handlers append with.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, SyncSender, TrySendError};
use std::sync::Arc;
use std::time::Duration;

use crate::record::Batch;

mod segment;
#[cfg(test)]
mod tests;
mod writer;

pub use segment::{
    encode_record, holds_records, read_segment, segment_path, segments, sync_dir, Rotation,
};

use segment::{record_head, Segment, MIN_CAPACITY};
use writer::Pending;

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
                writer::run(&dir, segment, &rx, &committed, rotation, pace, sealed);
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
