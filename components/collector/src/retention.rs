//! `collector.retention_days` (decision 0056): what is older than the retention leaves the
//! store. A day is a UTC day of the store's `day=D` partitions (a trace's time origin, an
//! event's start; the time it was received where it has none). Day `D` is removed once it
//! has ended `retention_days` days ago: the first day kept is the day of `now − days`.
//!
//! - the day partitions of `traces`, `samples` and `events` before the first day kept, each
//!   moved out of its table in one rename (a query context made after it reads none of the
//!   day's files, one made before it may fail on a file it no longer finds), then deleted;
//! - the log segments compaction keeps because a record does not decode (decision 0054),
//!   once their last write is older than the retention. Never the segment being written, nor
//!   one waiting for compaction: the caller names the segments that may go ([`expire`]'s
//!   `kept`), and only the compactor's thread, which knows them, calls it (server.rs).
//!
//! In an object store (`--store s3://…`, objects.rs) a day partition is the objects under
//! `TABLE/day=D/`, deleted one by one (S3 has no rename): a query context made while they
//! go may find some of the day's files and not others, or fail on one it no longer finds.
//!
//! `stacks`, `stack_frames` and `frames` have no day: a stack or frame is written once, by
//! the first segment it is seen in, and later days' samples refer to it. They stay (they
//! grow with the distinct stacks and frames, not with the traces); so do the commit marks.
//!
//! Imports `store` and `wal`; nothing here is imported by them.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use crate::objects::Objects;
use crate::store::Store;
use crate::{store, wal};

/// A day in ms.
pub const DAY_MS: f64 = 86_400_000.0;

/// The tables partitioned by day, whose old days are removed.
pub const DAY_TABLES: [&str; 3] = ["traces", "samples", "events"];

/// Where a day partition goes before it is deleted: outside every table, on the same file
/// system (a rename).
pub fn expired_dir(store: &Path) -> PathBuf {
    store.join("expired")
}

/// The first day kept (`YYYY-MM-DD`, UTC) with a retention of `days` days at `now_ms`.
pub fn first_kept_day(days: u32, now_ms: f64) -> String {
    store::day(now_ms - f64::from(days) * DAY_MS)
}

/// What one pass removed.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Expired {
    /// `TABLE/day=D`, sorted.
    pub partitions: Vec<String>,
    /// Log segments removed.
    pub segments: Vec<u64>,
    /// The bytes of the files removed.
    pub bytes: u64,
}

impl Expired {
    pub fn is_empty(&self) -> bool {
        self.partitions.is_empty() && self.segments.is_empty()
    }
}

/// The day of a partition directory's name (`day=YYYY-MM-DD`), if it is one.
fn partition_day(name: &str) -> Option<&str> {
    let d = name.strip_prefix("day=")?;
    let b = d.as_bytes();
    let shape = b.len() == 10
        && b.iter().enumerate().all(|(i, c)| {
            if i == 4 || i == 7 {
                *c == b'-'
            } else {
                c.is_ascii_digit()
            }
        });
    shape.then_some(d)
}

/// The bytes of the files under `path` (a file: its own; symbolic links not followed).
pub fn size(path: &Path) -> u64 {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return 0;
    };
    if !meta.is_dir() {
        return meta.len();
    }
    std::fs::read_dir(path).map_or(0, |entries| {
        entries.flatten().map(|e| size(&e.path())).sum()
    })
}

/// Removes what is older than `days` days at `now_ms`: the day partitions, and those of the
/// log segments in `kept` (segments compaction failed on, which no one writes or waits to
/// compact) whose last write is older. The segments removed leave `kept`.
pub fn expire(
    store: &Store,
    days: u32,
    now_ms: f64,
    kept: &mut BTreeSet<u64>,
) -> Result<Expired, String> {
    let mut out = Expired::default();
    let first_kept = first_kept_day(days, now_ms);
    if let Some(o) = &store.objects {
        expire_objects(o, &first_kept, &mut out)?;
    }
    let Some(store_dir) = store.dir.as_deref() else {
        return Ok(out);
    };
    if store.objects.is_none() {
        expire_local(store_dir, &first_kept, &mut out)?;
    }
    let cutoff = now_ms - f64::from(days) * DAY_MS;
    let wal_dir = store::wal_dir(store_dir);
    for &n in kept.iter() {
        let path = wal::segment_path(&wal_dir, n);
        let written = std::fs::metadata(&path)
            .and_then(|m| m.modified())
            .map_err(|e| format!("{}: {e}", path.display()))?;
        let written_ms = written
            .duration_since(UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64() * 1000.0);
        if written_ms < cutoff {
            out.bytes += size(&path);
            std::fs::remove_file(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            out.segments.push(n);
        }
    }
    if !out.segments.is_empty() {
        wal::sync_dir(&wal_dir).map_err(|e| format!("{}: {e}", wal_dir.display()))?;
        kept.retain(|n| !out.segments.contains(n));
    }
    Ok(out)
}

/// Deletes the objects of the day partitions before `first_kept`.
fn expire_objects(o: &Objects, first_kept: &str, out: &mut Expired) -> Result<(), String> {
    for table in DAY_TABLES {
        let (_, dirs) = o.list_dir(&o.table_dir(table))?;
        let mut old: Vec<_> = dirs
            .into_iter()
            .filter_map(|d| {
                let name = d.filename()?.to_owned();
                partition_day(&name)
                    .is_some_and(|day| day < first_kept)
                    .then_some((name, d))
            })
            .collect();
        old.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        for (name, dir) in old {
            let objects = o.list_all(&dir)?;
            if objects.is_empty() {
                continue;
            }
            for meta in objects {
                o.delete(&meta.location)?;
                out.bytes += meta.size;
            }
            out.partitions.push(format!("{table}/{name}"));
        }
    }
    Ok(())
}

/// Moves the day partitions before `first_kept` out of their tables, then deletes them.
fn expire_local(store_dir: &Path, first_kept: &str, out: &mut Expired) -> Result<(), String> {
    let expired = expired_dir(store_dir);
    // What a pass that crashed left there: moved out of its table already.
    if expired.exists() {
        std::fs::remove_dir_all(&expired).map_err(|e| format!("{}: {e}", expired.display()))?;
    }
    for table in DAY_TABLES {
        let dir = store::tables_dir(store_dir).join(table);
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(format!("{}: {e}", dir.display())),
        };
        let mut old = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| format!("{}: {e}", dir.display()))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if partition_day(&name).is_some_and(|d| d < first_kept) {
                old.push(name);
            }
        }
        old.sort_unstable();
        for name in old {
            std::fs::create_dir_all(&expired).map_err(|e| format!("{}: {e}", expired.display()))?;
            let from = dir.join(&name);
            let to = expired.join(format!("{table}-{name}"));
            out.bytes += size(&from);
            std::fs::rename(&from, &to).map_err(|e| format!("{}: {e}", from.display()))?;
            out.partitions.push(format!("{table}/{name}"));
        }
        wal::sync_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    if expired.exists() {
        std::fs::remove_dir_all(&expired).map_err(|e| format!("{}: {e}", expired.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partition_names() {
        assert_eq!(partition_day("day=2026-11-26"), Some("2026-11-26"));
        for other in [
            "day=2026-11-2",
            "day=20261126xx",
            "release=1",
            "day=2026/11/26",
        ] {
            assert_eq!(partition_day(other), None, "{other}");
        }
    }

    #[test]
    fn the_first_day_kept_is_the_day_of_now_less_the_retention() {
        // 2026-11-26 00:00 UTC.
        let day = 1_795_651_200_000.0;
        assert_eq!(first_kept_day(1, day), "2026-11-25");
        assert_eq!(first_kept_day(1, day - 1.0), "2026-11-24");
        assert_eq!(first_kept_day(30, day + 0.5 * DAY_MS), "2026-10-27");
    }
}
