//! The files jsprof's hosts write (`jsprof --profile-out`/`--trace-out`, `jsprof-servo
//! --profile-out`/`--trace-out`, `jsprof convert`): what a file name asks for, and writing
//! traces in the spec's JSON or an export format (each file made in memory first, so that
//! a format's error leaves no partial file behind).

use std::io::Write;
use std::path::Path;

use jsprof_profiler::ProfilerTrace;

use crate::{Format, Profile};

/// What a `--profile-out`/`--trace-out` file name asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TraceFile {
    /// The spec's `ProfilerTrace` JSON (`.json`, or gzipped: `.json.gz`).
    Spec,
    /// An export format.
    Export(Format),
}

impl TraceFile {
    /// The file an optional `option FILE` names, with its kind: `None` without the option,
    /// and the error of [`TraceFile::of`] for a name of no known kind.
    pub fn of_arg<'a>(
        path: Option<&'a Path>,
        option: &str,
    ) -> Result<Option<(&'a Path, TraceFile)>, String> {
        path.map(|p| Ok((p, TraceFile::of(p, option)?))).transpose()
    }

    /// The kind of file `path` names; any other name is an error, given before the page runs.
    pub fn of(path: &Path, option: &str) -> Result<TraceFile, String> {
        if let Some(f) = Format::from_path(path) {
            return Ok(TraceFile::Export(f));
        }
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        let lower = name.to_ascii_lowercase();
        if lower.ends_with(".json") || lower.ends_with(".json.gz") {
            return Ok(TraceFile::Spec);
        }
        Err(format!(
            "{option} {}: unknown file extension; use .json or .json.gz (the spec's trace), {}",
            path.display(),
            export_extensions()
        ))
    }
}

/// The export formats' file names, for messages.
pub fn export_extensions() -> &'static str {
    ".cpuprofile, .speedscope.json, .trace.json, .pb.gz, .folded or .svg"
}

/// Writes `traces` to `path` in `format` (each trace a thread of its own where the format
/// has threads).
pub fn write_traces(path: &Path, traces: &[ProfilerTrace], format: Format) -> Result<(), String> {
    let mut profile = Profile::new(format.keep());
    for (i, t) in traces.iter().enumerate() {
        profile
            .add_trace(&format!("trace {i}"), t, &mut |f| f)
            .map_err(|e| format!("trace {i}: {e}"))?;
    }
    write_profile(path, &profile, &title_of(path), |p, t, out| {
        format.write(p, t, out)
    })
}

/// A profile's title in the formats that show one: its file's name.
pub fn title_of(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "jsprof".into())
}

/// Writes through `write` into `path` (gzipped when the name ends in `.gz` and the format is
/// not already compressed), never leaving a partial file behind on an error.
pub fn write_profile(
    path: &Path,
    profile: &Profile,
    title: &str,
    write: impl FnOnce(&Profile, &str, &mut dyn Write) -> std::io::Result<()>,
) -> Result<(), String> {
    let shown = path.display();
    let mut bytes = Vec::new();
    write(profile, title, &mut bytes).map_err(|e| format!("{shown}: {e}"))?;
    let gz = path.file_name().is_some_and(|n| {
        n.to_string_lossy()
            .to_ascii_lowercase()
            .ends_with(".json.gz")
    });
    if gz {
        bytes = jsprof_profiler::gzip(&bytes);
    }
    std::fs::write(path, bytes).map_err(|e| format!("{shown}: cannot write: {e}"))
}

/// Writes `json` (a trace, or an array of them) to `path`, gzipped when its name ends in
/// `.gz`.
pub fn write_json(path: &Path, json: String) -> Result<(), String> {
    let bytes = if path.extension().is_some_and(|e| e == "gz") {
        jsprof_profiler::gzip(json.as_bytes())
    } else {
        json.into_bytes()
    };
    std::fs::write(path, bytes).map_err(|e| format!("{}: cannot write: {e}", path.display()))
}
