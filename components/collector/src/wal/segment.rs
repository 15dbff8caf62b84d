//! The log's segment files and their records: where segment `n` lives
//! (`wal/NNNNNNNNNNNN.wal`), the record format (`len: u32 LE`, `crc32: u32 LE` of the
//! payload, the payload) and reading it back, and [`Segment`], the file the writer appends
//! to, made ahead of time zero-filled ([`Preparer`]) and written a whole page at a time.

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::model::{Contents, Ingested};
use crate::record::{self, Batch};

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
pub(super) fn record_head(payload: &[u8]) -> [u8; 8] {
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
///
/// A record whose CRC holds but which does not decode (one written by a newer collector, or
/// a decoder's bug) is an error of kind `InvalidData`, not the segment's end: it was
/// acknowledged, so the segment must stay until a collector that reads it compacts it
/// (compaction fails and keeps it; a query says so).
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
            Err(e) => {
                return Err(std::io::Error::new(
                    ErrorKind::InvalidData,
                    format!(
                        "{}: record {} ({len} bytes, its CRC right) does not decode: {e}; \
                         the segment is kept (written by a newer collector?)",
                        path.display(),
                        out.len()
                    ),
                ))
            }
        }
    }
    Ok(out)
}

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
pub(super) struct Segment {
    pub(super) number: u64,
    pub(super) file: Arc<File>,
    pub(super) bytes: u64,
    pub(super) capacity: u64,
    pub(super) opened: Instant,
    /// The segment's bytes from the start of its last page to its end. A commit's pages
    /// are built after them, in this buffer, which then keeps the new last page's bytes.
    pub(super) tail: Vec<u8>,
}

/// The page cache's unit, which a commit writes whole.
pub(super) const PAGE: u64 = 4096;

/// The least and the first capacity of a segment.
pub(super) const MIN_CAPACITY: u64 = 1 << 20;

impl Segment {
    pub(super) fn create(dir: &Path, number: u64, capacity: u64) -> std::io::Result<Segment> {
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
    pub(super) fn write<'a>(
        &mut self,
        parts: impl IntoIterator<Item = &'a [u8]>,
    ) -> std::io::Result<()> {
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
    pub(super) fn next_capacity(&self, rotation: &Rotation) -> u64 {
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
pub(super) struct Preparer {
    requests: mpsc::Sender<(u64, u64)>,
    ready: mpsc::Receiver<std::io::Result<Segment>>,
    asked: Option<u64>,
}

impl Preparer {
    pub(super) fn start(dir: PathBuf) -> std::io::Result<Preparer> {
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

    pub(super) fn ask(&mut self, number: u64, capacity: u64) {
        if self.requests.send((number, capacity)).is_ok() {
            self.asked = Some(number);
        }
    }

    /// Segment `number`: the one made ahead if it was asked for and made, else one made
    /// now without a capacity (its commits then grow the file).
    pub(super) fn take(&mut self, dir: &Path, number: u64) -> std::io::Result<Segment> {
        if self.asked.take() == Some(number) {
            if let Ok(Ok(segment)) = self.ready.recv() {
                return Ok(segment);
            }
        }
        Segment::create(dir, number, 0)
    }

    /// The segment made ahead and never used is removed: it holds no record.
    pub(super) fn discard(self, dir: &Path) {
        if self.asked.is_some() {
            if let Ok(Ok(segment)) = self.ready.recv() {
                let _ = std::fs::remove_file(segment_path(dir, segment.number));
            }
        }
    }
}
