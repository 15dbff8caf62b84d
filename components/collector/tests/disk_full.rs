//! A disk that fills (decision 0056): on a real 64 MiB file system (a tmpfs with a size
//! limit; else an ext4 loop device), the real collector takes uploads until the free space
//! is below `collector.min_free_bytes`, then refuses them with 507, `Retry-After` and the
//! reason, before the file system is full. Every trace that was acknowledged survives
//! `kill -9` and a restart; once space is freed, uploads are taken again.
//!
//! It needs to mount a file system (root, or CAP_SYS_ADMIN). Where it cannot, it says so on
//! stderr and stops ("SKIPPED"); with `JSPROF_REQUIRE_SMALL_FS=1` that is a failure.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::{get, http, query, Collector};
use jsprof_collector::space::free_bytes;

/// A small file system mounted on a temporary directory, unmounted when dropped.
struct SmallFs {
    dir: tempfile::TempDir,
    /// The loop device's image, when it is one.
    _image: Option<tempfile::NamedTempFile>,
}

impl SmallFs {
    const SIZE_MIB: u64 = 64;

    /// A tmpfs of 64 MiB, else an ext4 image of 64 MiB on a loop device; `Err` with both
    /// reasons when neither can be mounted.
    fn mount() -> Result<SmallFs, String> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let size = format!("size={}m", Self::SIZE_MIB);
        let tmpfs = run("mount", &["-t", "tmpfs", "-o", &size, "tmpfs"], dir.path());
        let Err(tmpfs) = tmpfs else {
            return Ok(SmallFs { dir, _image: None });
        };
        let image = tempfile::NamedTempFile::new().map_err(|e| e.to_string())?;
        image
            .as_file()
            .set_len(Self::SIZE_MIB << 20)
            .map_err(|e| e.to_string())?;
        let ext4 = run("mkfs.ext4", &["-q", "-F"], image.path()).and_then(|()| {
            let image = image.path().to_str().unwrap();
            run("mount", &["-o", "loop", image], dir.path())
        });
        match ext4 {
            Ok(()) => Ok(SmallFs {
                dir,
                _image: Some(image),
            }),
            Err(ext4) => Err(format!("tmpfs: {tmpfs}; loop device: {ext4}")),
        }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for SmallFs {
    fn drop(&mut self) {
        // Lazily: a collector killed just before may still hold a file open.
        let _ = run("umount", &["-l"], self.dir.path());
    }
}

/// `program ARGS PATH`: `Err` with its status and stderr unless it succeeds.
fn run(program: &str, args: &[&str], path: &Path) -> Result<(), String> {
    let out = Command::new(program)
        .args(args)
        .arg(path)
        .output()
        .map_err(|e| format!("{program}: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{program} {args:?}: {}: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// `n` hex digits no compression shrinks much (xorshift64*), from `seed`.
fn noise(seed: u64, n: usize) -> String {
    let mut x = seed | 1;
    let mut out = String::with_capacity(n);
    while out.len() < n {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        out.push_str(&format!("{:016x}", x.wrapping_mul(0x2545_f491_4f6c_dd1d)));
    }
    out.truncate(n);
    out
}

/// jsprof's envelope of a 50-sample trace carrying 256 KiB of labels no compression
/// shrinks: each upload takes ~0.5 MiB of the file system (the log, then Parquet).
fn upload(session: &str, seed: u64) -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({
        "trace": common::trace(50),
        "pageUrl": "https://example.test/index.html",
        "release": "1.0",
        "session": session,
        "timeOrigin": common::DAY,
        "labels": {"noise": noise(seed, 256 << 10)},
    }))
    .unwrap()
}

fn post(
    addr: std::net::SocketAddr,
    session: &str,
    seed: u64,
) -> (u16, Vec<(String, String)>, String) {
    http(
        addr,
        "POST",
        "/v1/profiles",
        &[("Content-Type", "application/json")],
        &upload(session, seed),
    )
}

/// The sessions the store holds, sorted.
fn sessions(store: &Path) -> Vec<String> {
    let out = query(store, "SELECT session FROM traces ORDER BY session");
    let mut found: Vec<String> = out
        .lines()
        .filter_map(|l| l.strip_prefix("| s-"))
        .map(|l| format!("s-{}", l.trim_end_matches('|').trim()))
        .collect();
    found.sort();
    found
}

#[test]
fn a_filling_disk_is_refused_with_507_before_it_is_full_and_nothing_acknowledged_is_lost() {
    let fs = match SmallFs::mount() {
        Ok(fs) => fs,
        Err(why) => {
            let msg = format!("SKIPPED disk_full: cannot mount a small file system ({why})");
            if std::env::var_os("JSPROF_REQUIRE_SMALL_FS").is_some() {
                panic!("{msg}");
            }
            eprintln!("{msg}");
            return;
        }
    };
    let store: PathBuf = fs.path().join("store");
    // 36 MiB of the 64 taken by another file: ~28 MiB left, 16 of them the floor.
    let filler = fs.path().join("filler");
    std::fs::write(&filler, vec![1u8; 36 << 20]).unwrap();
    let min_free: u64 = 16 << 20;
    let prefs = [
        "--pref".to_owned(),
        format!("collector.min_free_bytes={min_free}"),
        "--pref".to_owned(),
        "collector.segment_bytes=1048576".to_owned(),
        "--pref".to_owned(),
        "collector.segment_ms=200".to_owned(),
    ];
    let prefs: Vec<&str> = prefs.iter().map(String::as_str).collect();
    let mut c = Collector::start(&store, &prefs);

    let mut acknowledged = Vec::new();
    let mut refusals = 0;
    let mut seed = 1;
    // ~25 uploads fill the 12 MiB above the floor; 200 would be 100 MiB.
    while refusals < 3 {
        assert!(seed < 200, "{} uploads and no 507", seed - 1);
        let session = format!("s-{seed:04}");
        let (status, headers, body) = post(c.addr, &session, seed);
        match status {
            202 => acknowledged.push(session),
            507 => {
                refusals += 1;
                assert_eq!(get(&headers, "retry-after"), Some("60"), "{headers:?}");
                assert!(
                    body.contains("below collector.min_free_bytes (16777216)"),
                    "{body}"
                );
            }
            other => panic!("upload {seed}: {other} {body} (the disk filled?)"),
        }
        seed += 1;
    }
    assert!(acknowledged.len() >= 10, "{acknowledged:?}");
    // Refused before the disk was full: more than a few uploads' worth is still free.
    let free = free_bytes(&store).unwrap();
    assert!(free > 8 << 20, "{free} bytes free");
    eprintln!(
        "disk_full: {} uploads acknowledged, {refusals} refused with 507, {free} bytes free",
        acknowledged.len()
    );

    // Every acknowledged trace survives kill -9 and a restart that compacts what was left.
    c.kill9();
    assert_eq!(sessions(&store), acknowledged);
    let mut c = Collector::start(&store, &prefs);
    assert_eq!(sessions(&store), acknowledged);

    // Space freed is seen again (the free space is read every 100 ms): uploads are taken.
    std::fs::remove_file(&filler).unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (status, _, body) = post(c.addr, "s-9999", 9999);
        if status == 202 {
            break;
        }
        assert_eq!(status, 507, "{body}");
        assert!(
            Instant::now() < deadline,
            "still refused 30 s after space was freed"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    acknowledged.push("s-9999".into());
    c.kill9();
    assert_eq!(sessions(&store), acknowledged);
}
