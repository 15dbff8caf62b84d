//! A flame graph, as an interactive SVG drawn by [inferno](https://docs.rs/inferno), the Rust
//! port of Brendan Gregg's [FlameGraph](https://www.brendangregg.com/flamegraphs.html).
//!
//! - Input: folded stacks, one line per call path with samples of its own (`root;…;leaf N`,
//!   labels from [`Frame::label`](crate::model::Frame::label), so two functions of the same
//!   name in different places stay apart). Samples without a stack are one root frame of
//!   their kind: `(idle)`, `(program)`, `(garbage collector)`.
//! - Several traces are already merged by the [`Profile`]: the graph is their sum, one
//!   sample being one unit of width ("samples"), whatever each trace's interval.
//! - Colors are chosen by a hash of each function's label (inferno's `hash` option on the
//!   classic `hot` palette): the same function gets the same color in every run and every
//!   file, and the output is byte-for-byte deterministic.
//! - A label too long for its frame is cut on the right, keeping the function's name.
//! - inferno's embedded script is kept: click to zoom, Ctrl-F or "Search" to highlight by
//!   regular expression. The SVG fits the width of the window it is opened in.
//! - A profile without any sample has nothing to draw: inferno writes an SVG that says so,
//!   and [`write`] returns an [`io::ErrorKind::InvalidData`] error.

use std::io::{self, Write};

use inferno::flamegraph::{self, color::BasicPalette, Options, Palette, TextTruncateDirection};

use crate::model::Profile;

/// Writes `profile` as a flame graph SVG titled `title` (see the module's documentation).
pub fn write(profile: &Profile, title: &str, out: &mut dyn Write) -> io::Result<()> {
    let lines = crate::folded::lines(profile);
    let mut options = options(title);
    flamegraph::from_lines(&mut options, lines.iter().map(String::as_str), out).map_err(|e| {
        if e.kind() == io::ErrorKind::InvalidData && profile.sample_count() == 0 {
            io::Error::new(
                io::ErrorKind::InvalidData,
                "no samples to draw a flame graph of",
            )
        } else {
            e
        }
    })
}

/// inferno's options for jsprof's flame graphs.
fn options(title: &str) -> Options<'static> {
    let mut options = Options::default();
    options.title = if title.is_empty() {
        "Flame Graph".to_owned()
    } else {
        title.to_owned()
    };
    options.count_name = "samples".to_owned();
    options.name_type = "Function:".to_owned();
    options.colors = Palette::Basic(BasicPalette::Hot);
    options.hash = true;
    // Labels are `name (url:line:column)`: a narrow frame keeps the name.
    options.text_truncate_direction = TextTruncateDirection::Right;
    options
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Keep;
    use jsprof_profiler::{ProfilerFrame, ProfilerSample, ProfilerStack, ProfilerTrace};

    const FIXTURE: &str = include_str!("../tests/fixtures/seed-002.json");
    const GOLDEN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/seed-002.svg");

    fn seed() -> Profile {
        let trace: ProfilerTrace = serde_json::from_str(FIXTURE).unwrap();
        let mut p = Profile::new(Keep::Counts);
        p.add_trace("seed-002.json", &trace, &mut |f| f).unwrap();
        p
    }

    fn svg(p: &Profile, title: &str) -> String {
        let mut out = Vec::new();
        write(p, title, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn golden_seed_002() {
        let got = svg(&seed(), "seed-002");
        if std::env::var_os("JSPROF_BLESS").is_some_and(|v| v == "1") {
            std::fs::create_dir_all(std::path::Path::new(GOLDEN).parent().unwrap()).unwrap();
            std::fs::write(GOLDEN, &got).unwrap();
        }
        let want = std::fs::read_to_string(GOLDEN).expect("golden file (JSPROF_BLESS=1 writes it)");
        assert!(got == want, "flame graph differs from {GOLDEN}");
        // And it is the same on a second run (no random colors).
        assert_eq!(svg(&seed(), "seed-002"), got);
    }

    /// The fixture's call paths, as the graph is drawn from them: handleClick (1:5) calls
    /// Profiler once and genPrimes, which calls isPrime.
    #[test]
    fn folded_lines_of_seed_002() {
        let lines = crate::folded::lines(&seed());
        let main = "handleClick (http://localhost:3000/main.js:5:27)";
        let gen = "genPrimes (http://localhost:3000/generate.js:15:26)";
        let prime = "isPrime (http://localhost:3000/generate.js:6:17)";
        assert_eq!(
            lines,
            [
                format!("{main};Profiler 1"),
                format!("{main};{gen} 2"),
                format!("{main};{gen};{prime} 7"),
            ]
        );
    }

    #[test]
    fn the_svg_names_its_frames_and_keeps_its_script() {
        let s = svg(&seed(), "A <title> & more");
        assert!(s.contains("A &lt;title&gt; &amp; more"), "title escaped");
        assert!(s.contains("isPrime (http://localhost:3000/generate.js:6:17) (7 samples, 70.00%)"));
        assert!(s.contains("all (10 samples, 100%)"));
        assert!(s.contains("function zoom(") && s.contains("function search("));
        assert!(s.contains(r#"onload="init(evt)""#));
    }

    /// Samples without a stack are one root frame per kind; labels cannot break the folded
    /// syntax.
    #[test]
    fn empty_samples_and_awkward_names() {
        let t = ProfilerTrace {
            resources: vec!["data:text/javascript;base64,AA==".into()],
            frames: vec![ProfilerFrame {
                name: "a;b\nc".into(),
                resource_id: Some(0),
                line: Some(1),
                column: Some(2),
            }],
            stacks: vec![ProfilerStack {
                frame_id: 0,
                parent_id: None,
            }],
            samples: [(Some(0), None), (None, None), (None, None)]
                .into_iter()
                .enumerate()
                .map(|(i, (stack_id, marker))| ProfilerSample {
                    marker,
                    stack_id,
                    timestamp: i as f64,
                })
                .collect(),
        };
        let mut p = Profile::new(Keep::Counts);
        p.add_trace("t", &t, &mut |f| f).unwrap();
        assert_eq!(
            crate::folded::lines(&p),
            ["(idle) 2", "a,b c (data:text/javascript,base64,AA==:1:2) 1"]
        );
        let s = svg(&p, "t");
        assert!(s.contains("(idle) (2 samples, 66.67%)"));
    }

    #[test]
    fn no_samples_is_an_error() {
        let p = Profile::new(Keep::Counts);
        let err = write(&p, "t", &mut Vec::new()).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
    }
}
