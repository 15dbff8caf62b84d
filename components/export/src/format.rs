//! The output formats, chosen by a file's extension or by name (`--format`).

use std::io::Write;
use std::path::Path;

use crate::model::{Keep, Profile};

/// A format jsprof writes a profile in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Chrome DevTools' CPU profile (`.cpuprofile`).
    Cpuprofile,
    /// speedscope's file format (`.speedscope.json`).
    Speedscope,
    /// The Firefox Profiler's processed format (`--format firefox`; `.json` or `.json.gz`).
    Firefox,
    /// pprof's `profile.proto`, gzipped (`.pb.gz`).
    Pprof,
    /// Folded stacks, `a;b;c N` per line (`.folded`).
    Folded,
    /// The Trace Event format with `Profile`/`ProfileChunk` events (`.trace.json`).
    TraceEvent,
    /// A flame graph (`.svg`).
    Svg,
}

/// Every format, with its `--format` name and the file name endings that choose it (longest
/// first where one ends another).
pub const FORMATS: [(Format, &str, &[&str]); 7] = [
    (Format::Speedscope, "speedscope", &[".speedscope.json"]),
    (Format::TraceEvent, "trace-event", &[".trace.json"]),
    (Format::Cpuprofile, "cpuprofile", &[".cpuprofile"]),
    (Format::Pprof, "pprof", &[".pb.gz"]),
    (Format::Folded, "folded", &[".folded"]),
    (Format::Svg, "svg", &[".svg"]),
    (Format::Firefox, "firefox", &[]),
];

impl Format {
    /// The format a file name's ending chooses; `None` for any other name (`.json` included,
    /// which is the spec's own trace where jsprof writes one, and ambiguous for `convert`).
    pub fn from_path(path: &Path) -> Option<Format> {
        let name = path.file_name()?.to_string_lossy().to_ascii_lowercase();
        FORMATS
            .iter()
            .find(|(_, _, ends)| ends.iter().any(|e| name.ends_with(e)))
            .map(|(f, _, _)| *f)
    }

    /// The format called `name` (as `--format` takes it).
    pub fn from_name(name: &str) -> Option<Format> {
        FORMATS
            .iter()
            .find(|(_, n, _)| n.eq_ignore_ascii_case(name))
            .map(|(f, _, _)| *f)
    }

    pub fn name(self) -> &'static str {
        FORMATS
            .iter()
            .find(|(f, _, _)| *f == self)
            .map_or("?", |(_, n, _)| n)
    }

    /// What of the traces the format needs kept: formats that list every sample need the
    /// timelines; the others are aggregates.
    pub fn keep(self) -> Keep {
        match self {
            Format::Cpuprofile | Format::Speedscope | Format::Firefox | Format::TraceEvent => {
                Keep::Samples
            }
            Format::Pprof | Format::Folded | Format::Svg => Keep::Counts,
        }
    }

    /// Writes `profile` in this format; `title` names it where the format has a name.
    pub fn write(self, profile: &Profile, title: &str, out: &mut dyn Write) -> std::io::Result<()> {
        match self {
            Format::Cpuprofile => crate::cpuprofile::write(profile, title, out),
            Format::Speedscope => crate::speedscope::write(profile, title, out),
            Format::Firefox => crate::firefox::write(profile, title, out),
            Format::Pprof => crate::pprof::write(profile, title, out),
            Format::Folded => crate::folded::write(profile, title, out),
            Format::TraceEvent => crate::trace_event::write(profile, title, out),
            Format::Svg => crate::flamegraph::write(profile, title, out),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extensions_choose_formats() {
        let f = |p: &str| Format::from_path(Path::new(p));
        assert_eq!(f("a.cpuprofile"), Some(Format::Cpuprofile));
        assert_eq!(f("dir/a.speedscope.json"), Some(Format::Speedscope));
        assert_eq!(f("a.trace.json"), Some(Format::TraceEvent));
        assert_eq!(f("A.PB.GZ"), Some(Format::Pprof));
        assert_eq!(f("a.folded"), Some(Format::Folded));
        assert_eq!(f("a.svg"), Some(Format::Svg));
        assert_eq!(f("a.json"), None);
        assert_eq!(f("a.json.gz"), None);
        assert_eq!(f("a.txt"), None);
        assert_eq!(Format::from_name("firefox"), Some(Format::Firefox));
        assert_eq!(Format::from_name("nope"), None);
    }
}
