//! The traces `convert` and `report` read: any file jsprof writes (a `ProfilerTrace` as JSON
//! or gzipped JSON, a `--trace-out` array of them, a `--profile-out` file), given as files,
//! directories (their `.json`/`.json.gz` files, recursively) or glob patterns. Files are read
//! one at a time and dropped once merged, so memory grows with the merged profile, not with
//! the input.

use std::io::Read;
use std::path::{Path, PathBuf};

use flate2::read::GzDecoder;
use jsprof_profiler::ProfilerTrace;

use crate::model::{Frame, Profile};

/// The files `args` name, in order, each once: a file as given; a directory's trace files
/// (`*.json`, `*.json.gz`) recursively, sorted; a glob pattern's matches, sorted. An argument
/// that names nothing is an error.
pub fn expand(args: &[String]) -> Result<Vec<PathBuf>, String> {
    let mut out: Vec<PathBuf> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut push = |p: PathBuf, out: &mut Vec<PathBuf>| {
        if seen.insert(p.clone()) {
            out.push(p);
        }
    };
    for arg in args {
        let path = Path::new(arg);
        if path.is_file() {
            push(path.to_path_buf(), &mut out);
        } else if path.is_dir() {
            let mut found = Vec::new();
            walk(path, &mut found).map_err(|e| format!("{arg}: {e}"))?;
            if found.is_empty() {
                return Err(format!(
                    "{arg}: no .json or .json.gz files in this directory"
                ));
            }
            found.sort();
            for p in found {
                push(p, &mut out);
            }
        } else if arg.contains(['*', '?', '[']) {
            let paths = glob::glob(arg).map_err(|e| format!("{arg}: bad pattern: {e}"))?;
            let mut found: Vec<PathBuf> = paths
                .filter_map(Result::ok)
                .filter(|p| p.is_file())
                .collect();
            if found.is_empty() {
                return Err(format!("{arg}: no file matches"));
            }
            found.sort();
            for p in found {
                push(p, &mut out);
            }
        } else {
            return Err(format!("{arg}: no such file or directory"));
        }
    }
    Ok(out)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            walk(&path, out)?;
        } else {
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            if name.ends_with(".json") || name.ends_with(".json.gz") {
                out.push(path);
            }
        }
    }
    Ok(())
}

/// The traces in one file: gzip is recognised by its magic bytes, then the JSON is one
/// `ProfilerTrace` or an array of them.
pub fn read_traces(path: &Path) -> Result<Vec<ProfilerTrace>, String> {
    let shown = path.display();
    let bytes = std::fs::read(path).map_err(|e| format!("{shown}: {e}"))?;
    let text = if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        GzDecoder::new(&bytes[..])
            .read_to_end(&mut out)
            .map_err(|e| format!("{shown}: not valid gzip: {e}"))?;
        out
    } else {
        bytes
    };
    parse_traces(&text).map_err(|e| format!("{shown}: {e}"))
}

/// A `ProfilerTrace` JSON object, or an array of them.
pub fn parse_traces(json: &[u8]) -> Result<Vec<ProfilerTrace>, String> {
    #[derive(serde::Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        Many(Vec<ProfilerTrace>),
        One(ProfilerTrace),
    }
    let first = json.iter().find(|b| !b.is_ascii_whitespace());
    let parsed = match first {
        Some(b'[') => serde_json::from_slice::<Vec<ProfilerTrace>>(json).map(OneOrMany::Many),
        Some(b'{') => serde_json::from_slice::<ProfilerTrace>(json).map(OneOrMany::One),
        _ => return Err("not a ProfilerTrace (JSON object) or an array of them".into()),
    };
    match parsed {
        Ok(OneOrMany::Many(v)) => Ok(v),
        Ok(OneOrMany::One(t)) => Ok(vec![t]),
        Err(e) => Err(format!("not a ProfilerTrace: {e}")),
    }
}

/// Reads every file of `paths` into `profile`, in order, mapping frames with `map` (see
/// [`Profile::add_trace`]); `progress(files_done, files_total)` runs after each file. A
/// trace is named by its file (and its index in an array of several).
///
/// Files are read and parsed (gunzip, JSON) on worker threads while this thread merges, in
/// the files' order, so the result is the same as a sequential read. At most a few parsed
/// files wait at a time: memory stays bounded by the merged profile.
pub fn merge(
    paths: &[PathBuf],
    profile: &mut Profile,
    map: &mut dyn FnMut(Frame) -> Frame,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<(), String> {
    use std::collections::BTreeMap;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::mpsc;

    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 8)
        .min(paths.len().max(1));
    let next = AtomicUsize::new(0);
    // Tells the workers to stop early (after an error).
    let stop = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        let (tx, rx) =
            mpsc::sync_channel::<(usize, Result<Vec<ProfilerTrace>, String>)>(workers * 2);
        for _ in 0..workers {
            let tx = tx.clone();
            let (next, stop) = (&next, &stop);
            scope.spawn(move || loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= paths.len() || stop.load(Ordering::Relaxed) != 0 {
                    return;
                }
                if tx.send((i, read_traces(&paths[i]))).is_err() {
                    return;
                }
            });
        }
        drop(tx);
        let mut waiting = BTreeMap::new();
        let mut done = 0;
        let result = (|| {
            for (i, read) in rx.iter() {
                waiting.insert(i, read);
                while let Some(read) = waiting.remove(&done) {
                    add_file(&paths[done], read?, profile, map)?;
                    done += 1;
                    progress(done, paths.len());
                }
            }
            Ok(())
        })();
        if result.is_err() {
            stop.store(1, Ordering::Relaxed);
            // Unblock the workers: they stop at their next file.
            drop(rx);
        }
        result
    })
}

fn add_file(
    path: &Path,
    traces: Vec<ProfilerTrace>,
    profile: &mut Profile,
    map: &mut dyn FnMut(Frame) -> Frame,
) -> Result<(), String> {
    let several = traces.len() > 1;
    for (j, trace) in traces.iter().enumerate() {
        let name = if several {
            format!("{} [{j}]", path.display())
        } else {
            path.display().to_string()
        };
        profile
            .add_trace(&name, trace, map)
            .map_err(|e| format!("{name}: {e}"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Keep;
    use std::io::Write;

    const SEED: &str = include_str!("../tests/fixtures/seed-002.json");

    #[test]
    fn reads_a_trace_an_array_and_gzip() {
        let dir = tempfile::tempdir().unwrap();
        let one = dir.path().join("one.json");
        std::fs::write(&one, SEED).unwrap();
        let many = dir.path().join("many.json");
        std::fs::write(&many, format!("[{SEED},{SEED}]")).unwrap();
        let gz = dir.path().join("sub/z.json.gz");
        std::fs::create_dir_all(gz.parent().unwrap()).unwrap();
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(SEED.as_bytes()).unwrap();
        std::fs::write(&gz, e.finish().unwrap()).unwrap();
        std::fs::write(dir.path().join("notes.txt"), "not a trace").unwrap();

        assert_eq!(read_traces(&one).unwrap().len(), 1);
        assert_eq!(read_traces(&many).unwrap().len(), 2);
        assert_eq!(read_traces(&gz).unwrap()[0].samples.len(), 10);

        // A directory: its .json and .json.gz files, recursively; a file named twice once.
        let d = dir.path().display().to_string();
        let paths = expand(&[d.clone(), one.display().to_string()]).unwrap();
        assert_eq!(paths.len(), 3, "{paths:?}");
        let mut p = Profile::new(Keep::Counts);
        let mut calls = Vec::new();
        merge(&paths, &mut p, &mut |f| f, &mut |done, total| {
            calls.push((done, total))
        })
        .unwrap();
        assert_eq!(p.trace_count(), 4);
        assert_eq!(p.sample_count(), 40);
        assert_eq!(calls, [(1, 3), (2, 3), (3, 3)]);

        // A glob.
        let pattern = format!("{d}/*.json");
        assert_eq!(expand(&[pattern]).unwrap().len(), 2);
    }

    #[test]
    fn bad_inputs_are_clear_errors() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().display().to_string();
        assert!(expand(&[format!("{d}/missing.json")])
            .unwrap_err()
            .contains("no such file"));
        assert!(expand(std::slice::from_ref(&d))
            .unwrap_err()
            .contains("no .json"));
        assert!(expand(&[format!("{d}/*.json")])
            .unwrap_err()
            .contains("no file matches"));
        let bad = dir.path().join("bad.json");
        std::fs::write(&bad, "{\"frames\": 3}").unwrap();
        let e = read_traces(&bad).unwrap_err();
        assert!(
            e.contains("bad.json") && e.contains("not a ProfilerTrace"),
            "{e}"
        );
        std::fs::write(&bad, "hello").unwrap();
        assert!(read_traces(&bad)
            .unwrap_err()
            .contains("not a ProfilerTrace"));
        // A trace whose ids are out of range names its file and what is wrong.
        std::fs::write(
            &bad,
            r#"{"frames":[],"resources":[],"stacks":[],"samples":[{"stackId":4,"timestamp":1}]}"#,
        )
        .unwrap();
        let mut p = Profile::new(Keep::Counts);
        let e = merge(&[bad], &mut p, &mut |f| f, &mut |_, _| {}).unwrap_err();
        assert!(e.contains("stackId 4"), "{e}");
    }
}
