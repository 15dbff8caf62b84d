//! The log's tests: the queue's bounds, records read back, whole-page commits, segments made
//! ahead, and group commit.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use super::segment::{Segment, MIN_CAPACITY, PAGE};
use super::*;
use crate::model::{Ingested, Meta, Source};

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

/// A record of a version this collector does not read: its CRC holds, so it was written
/// whole and acknowledged.
pub(crate) fn newer_record() -> Vec<u8> {
    let mut payload = Batch::of(&one()).payload;
    payload[0] = 99;
    let mut out = super::segment::record_head(&payload).to_vec();
    out.extend_from_slice(&payload);
    out
}

#[test]
fn a_record_that_does_not_decode_is_an_error_not_the_end() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("1.wal");
    let mut bytes = encode_record(&one());
    bytes.extend_from_slice(&newer_record());
    bytes.extend_from_slice(&encode_record(&one()));
    std::fs::write(&path, &bytes).unwrap();
    let e = read_segment(&path).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidData);
    let text = e.to_string();
    assert!(text.contains("record 1 ("), "{text}");
    assert!(text.contains("unknown record version 99"), "{text}");
    // A torn record (its CRC wrong) is still the segment's end.
    let mut torn = encode_record(&one());
    let mut bad = newer_record();
    let last = bad.len() - 1;
    bad[last] ^= 1;
    torn.extend_from_slice(&bad);
    std::fs::write(&path, &torn).unwrap();
    assert_eq!(read_segment(&path).unwrap().len(), 1);
}
