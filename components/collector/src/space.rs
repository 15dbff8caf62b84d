//! `collector.min_free_bytes` (decision 0056): the free space of the store's file system,
//! below which the intake refuses what it would log, with 507 and `Retry-After`, before the
//! disk is full. A request is refused before its record is queued for the log: what was
//! acknowledged was fsynced, and what is refused was never acknowledged.
//!
//! The free space is `statvfs`'s `f_bavail × f_frsize` (what an unprivileged writer may
//! still take), read through rustix (no `unsafe` here). It is read at most every
//! [`REFRESH`]; between two reads, each record admitted is taken off the last value, so the
//! log's own writes are counted at once. What goes unseen for up to [`REFRESH`] is what
//! others write: a log segment made ahead (at most `collector.segment_bytes`, zero-filled),
//! a compaction's Parquet files (smaller than the segment they come from), other processes.
//! The floor is the margin for those: at least twice `collector.segment_bytes`.
//!
//! Imports nothing of the collector's.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How long a reading of the free space is used before it is read again.
pub const REFRESH: Duration = Duration::from_millis(100);

/// The free bytes of the file system `path` is on, as an unprivileged writer may use them.
pub fn free_bytes(path: &Path) -> std::io::Result<u64> {
    let s = rustix::fs::statvfs(path)?;
    Ok(s.f_bavail.saturating_mul(s.f_frsize))
}

/// Why a record was refused: the free space left, and the floor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Low {
    pub free: u64,
    pub min_free: u64,
}

impl std::fmt::Display for Low {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the store's file system has {} bytes free, below collector.min_free_bytes ({})",
            self.free, self.min_free
        )
    }
}

/// The free space of the store's file system, as the intake admits records against it.
#[derive(Debug)]
pub struct Space {
    path: PathBuf,
    min_free: u64,
    started: Instant,
    /// The free bytes read last, less the records admitted since.
    estimate: AtomicU64,
    /// When it was read, in µs since `started` (`u64::MAX`: never).
    read_at: AtomicU64,
    /// Whether a failed reading was said on stderr already.
    said: AtomicBool,
    /// How the free space is read: [`free_bytes`] (tests give their own).
    read: fn(&Path) -> std::io::Result<u64>,
    /// [`REFRESH`] (tests give their own).
    refresh: Duration,
}

impl Space {
    /// `min_free` 0: every record is admitted, and the space is never read.
    pub fn new(path: PathBuf, min_free: u64) -> Space {
        Space::reading(path, min_free, free_bytes, REFRESH)
    }

    /// A space whose free bytes `read` gives, read again after `refresh`.
    pub fn reading(
        path: PathBuf,
        min_free: u64,
        read: fn(&Path) -> std::io::Result<u64>,
        refresh: Duration,
    ) -> Space {
        Space {
            read,
            refresh,
            path,
            min_free,
            started: Instant::now(),
            estimate: AtomicU64::new(0),
            read_at: AtomicU64::new(u64::MAX),
            said: AtomicBool::new(false),
        }
    }

    /// Admits a record of `len` bytes, or says why not: the free space less `len` would be
    /// below the floor. Reads the free space if the last reading is older than [`REFRESH`].
    /// A reading that fails admits the record (the log's own write still fails if the disk
    /// is full: 503, nothing acknowledged), and is said once on stderr.
    pub fn admit(&self, len: u64) -> Result<(), Low> {
        if self.min_free == 0 {
            return Ok(());
        }
        let now = self.started.elapsed().as_micros() as u64;
        let read_at = self.read_at.load(Ordering::Acquire);
        if read_at == u64::MAX || now.saturating_sub(read_at) >= self.refresh.as_micros() as u64 {
            match (self.read)(&self.path) {
                Ok(free) => {
                    self.estimate.store(free, Ordering::Release);
                    self.read_at.store(now, Ordering::Release);
                }
                Err(e) => {
                    if !self.said.swap(true, Ordering::Relaxed) {
                        eprintln!(
                            "jsprof-collector: cannot read the free space of {}: {e}; \
                             collector.min_free_bytes is not applied",
                            self.path.display()
                        );
                    }
                    return Ok(());
                }
            }
        }
        let min_free = self.min_free;
        self.estimate
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |free| {
                (free.saturating_sub(len) >= min_free).then(|| free - len)
            })
            .map(|_| ())
            .map_err(|free| Low { free, min_free })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What [`fake`] reads: 10 MiB, or what a test sets.
    static FREE: AtomicU64 = AtomicU64::new(10 << 20);

    fn fake(_: &Path) -> std::io::Result<u64> {
        Ok(FREE.load(Ordering::Relaxed))
    }

    #[test]
    fn records_are_taken_off_the_reading_until_the_floor_and_the_space_is_read_again() {
        // A floor 1 MiB under what is free: 512 KiB pass, the next 600 KiB not.
        let hour = Duration::from_secs(3600);
        let mut space = Space::reading(PathBuf::from("/store"), 9 << 20, fake, hour);
        assert_eq!(space.admit(512 << 10), Ok(()));
        let low = space.admit(600 << 10).unwrap_err();
        assert_eq!(
            low,
            Low {
                free: (10 << 20) - (512 << 10),
                min_free: 9 << 20
            }
        );
        assert!(
            low.to_string().contains("collector.min_free_bytes"),
            "{low}"
        );
        // Space freed is seen once the reading is older than its refresh, not before.
        FREE.store(20 << 20, Ordering::Relaxed);
        assert!(space.admit(600 << 10).is_err(), "read again too soon");
        // As if the reading were two hours old.
        space.started -= 2 * hour;
        assert_eq!(space.admit(600 << 10), Ok(()));
        // A floor of 0 reads nothing and admits anything.
        assert_eq!(
            Space::new(PathBuf::from("/nowhere"), 0).admit(u64::MAX),
            Ok(())
        );
    }

    #[test]
    fn the_free_space_of_a_real_directory_is_read() {
        let dir = tempfile::tempdir().unwrap();
        assert!(free_bytes(dir.path()).unwrap() > 0);
        assert!(free_bytes(&dir.path().join("missing")).is_err());
        // Nothing passes a floor no disk has.
        assert!(Space::new(dir.path().to_owned(), u64::MAX)
            .admit(0)
            .is_err());
    }
}
