//! `jsprof flame -o FILE`: the store's samples (with `top`'s filters) merged by call path
//! (aggregate.rs) and written through jsprof-export, as `jsprof convert` and `jsprof
//! report` write traces: `.html` is the report (facts, flame graph, timeline, top
//! functions), `.svg` the flame graph, and the other formats that need only counts
//! (`.folded`, `.pb.gz`/pprof) are written too.

use std::path::Path;

use jsprof_export::{Format, Keep, Profile};

/// What `path`'s name asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    Report,
    Export(Format),
}

impl Output {
    pub fn of(path: &Path) -> Result<Output, String> {
        let name = path.to_string_lossy().to_ascii_lowercase();
        if name.ends_with(".html") || name.ends_with(".htm") {
            return Ok(Output::Report);
        }
        match Format::from_path(path) {
            Some(f) if f.keep() == Keep::Counts => Ok(Output::Export(f)),
            _ => Err(format!(
                "{}: the name should end in .html (the report) or .svg (the flame graph); .folded and .pb.gz work too",
                path.display()
            )),
        }
    }

    /// Whether the output shows the report's facts (traces, duration, timeline).
    pub fn needs_summary(self) -> bool {
        self == Output::Report
    }

    pub fn write(self, profile: &Profile, title: &str) -> Result<Vec<u8>, String> {
        let mut out = Vec::new();
        match self {
            Output::Report => jsprof_export::report::write(profile, title, &mut out),
            Output::Export(f) => f.write(profile, title, &mut out),
        }
        .map_err(|e| e.to_string())?;
        Ok(out)
    }

    pub fn name(self) -> &'static str {
        match self {
            Output::Report => "report",
            Output::Export(f) => f.name(),
        }
    }
}

/// The flame graph's SVG; a profile without samples is a small SVG that says so.
pub fn svg(profile: &Profile, title: &str) -> Vec<u8> {
    if profile.sample_count() > 0 {
        if let Ok(svg) = Output::Export(Format::Svg).write(profile, title) {
            return svg;
        }
    }
    br#"<svg xmlns="http://www.w3.org/2000/svg" width="400" height="40"><text x="10" y="25" font-family="sans-serif" font-size="14">No samples.</text></svg>"#.to_vec()
}
