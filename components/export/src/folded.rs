//! Folded stacks (`.folded`), Brendan Gregg's format
//! (<https://github.com/brendangregg/FlameGraph#2-fold-stacks>) that `flamegraph.pl`, inferno
//! and speedscope read: one line per call path, its frames root first joined by `;`, a
//! space, and the number of samples whose leaf it is (`main;work;leaf 42`).
//!
//! - A frame is its [`Frame::label`](crate::model::Frame::label), `name (url:line:column)`
//!   with the spec's 1-based positions. A `;` inside a label (a `data:` URL's
//!   `;base64`, a computed name) becomes `,`, and a line break a space, so each line still
//!   splits into its frames; paths that become equal so are summed.
//! - Samples without a stack are one-frame lines, `(idle) N`, `(program) N` and
//!   `(garbage collector) N` ([`Empty::label`]).
//! - Only paths with samples of their own are written (the format sums the rest), and the
//!   lines are sorted, so the output depends on the samples alone, not on trace order.
//!   Only counts are used: a [`crate::model::Keep::Counts`] profile is enough. Traces are
//!   summed, with no timeline.

use std::collections::BTreeMap;
use std::io::{self, BufWriter, Write};

use crate::model::{Empty, NodeId, Profile};

/// Writes `profile` (see [`crate::format::Format`]); the format has no name, so `title` is
/// unused.
pub fn write(profile: &Profile, title: &str, out: &mut dyn Write) -> io::Result<()> {
    let _ = title;
    let mut out = BufWriter::new(out);
    for line in lines(profile) {
        writeln!(out, "{line}")?;
    }
    out.flush()
}

/// A label that cannot break a line into more frames or more lines: `;` becomes `,` and
/// control characters spaces.
fn escape(label: &str) -> String {
    label
        .chars()
        .map(|c| match c {
            ';' => ',',
            c if c.is_control() => ' ',
            c => c,
        })
        .collect()
}

/// The folded lines, `root;…;leaf count`, sorted: what this format writes and what the flame
/// graph is drawn from.
pub(crate) fn lines(profile: &Profile) -> Vec<String> {
    paths(profile)
        .into_iter()
        .map(|(path, count)| format!("{path} {count}"))
        .collect()
}

/// Each call path with samples of its own, and its count, in line order.
fn paths(profile: &Profile) -> BTreeMap<String, u64> {
    let labels: Vec<String> = profile
        .frames()
        .iter()
        .map(|f| escape(&f.label()))
        .collect();
    let mut lines = BTreeMap::new();
    for node in 0..profile.nodes().len() as NodeId {
        let count = profile.self_count(node);
        if count == 0 {
            continue;
        }
        let path: Vec<&str> = profile
            .stack(node)
            .into_iter()
            .map(|f| labels[f as usize].as_str())
            .collect();
        *lines.entry(path.join(";")).or_default() += count;
    }
    for kind in Empty::ALL {
        let count = profile.empty_count(kind);
        if count > 0 {
            *lines.entry(kind.label().to_owned()).or_default() += count;
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpuprofile::golden;
    use crate::model::Keep;
    use jsprof_profiler::{ProfilerFrame, ProfilerMarker, ProfilerSample, ProfilerTrace};
    use jsprof_trace_fixtures::stacks;

    fn folded(profile: &Profile) -> String {
        let mut out = Vec::new();
        write(profile, "t", &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// Each line read back as inferno and flamegraph.pl read it: the count after the last
    /// space, the frames split at `;`.
    fn parse(text: &str) -> Vec<(Vec<&str>, u64)> {
        assert!(text.ends_with('\n'));
        text.lines()
            .map(|line| {
                let (stack, count) = line.rsplit_once(' ').unwrap();
                (stack.split(';').collect(), count.parse().unwrap())
            })
            .collect()
    }

    #[test]
    fn golden_seed_002() {
        golden::check("folded", folded(&golden::seed(Keep::Counts)).as_bytes());
    }

    #[test]
    fn seed_lines() {
        let text = folded(&golden::seed(Keep::Counts));
        let main = "handleClick (http://localhost:3000/main.js:5:27)";
        let gen = "genPrimes (http://localhost:3000/generate.js:15:26)";
        let is_prime = "isPrime (http://localhost:3000/generate.js:6:17)";
        assert_eq!(
            parse(&text),
            [
                (vec![main, "Profiler"], 1),
                (vec![main, gen], 2),
                (vec![main, gen, is_prime], 7),
            ]
        );
        // The same from a profile that kept its samples.
        assert_eq!(folded(&golden::seed(Keep::Samples)), text);
    }

    fn frame(name: &str, resource: Option<u64>) -> ProfilerFrame {
        jsprof_trace_fixtures::frame(name, resource, Some(1), Some(2))
    }

    fn sample(stack_id: Option<u64>, marker: Option<ProfilerMarker>) -> ProfilerSample {
        ProfilerSample {
            marker,
            ..jsprof_trace_fixtures::sample(0.0, stack_id)
        }
    }

    #[test]
    fn separators_inside_labels_do_not_split_lines_or_frames() {
        let trace = ProfilerTrace {
            frames: vec![
                frame("a;b", None),
                frame("two\nlines\r", Some(0)),
                frame("a,b", None),
            ],
            resources: vec!["data:text/javascript;base64,AAAA".into()],
            stacks: stacks(&[None, Some(0), None]),
            samples: vec![
                sample(Some(1), None),
                sample(Some(0), None),
                sample(Some(2), None),
            ],
        };
        let mut profile = Profile::new(Keep::Counts);
        profile.add_trace("t", &trace, &mut |f| f).unwrap();
        let text = folded(&profile);
        assert_eq!(
            parse(&text),
            [
                // "a;b" and "a,b" are one path once escaped, and summed.
                (vec!["a,b"], 2),
                (
                    vec!["a,b", "two lines  (data:text/javascript,base64,AAAA:1:2)"],
                    1
                ),
            ]
        );
    }

    #[test]
    fn empty_samples_are_one_frame_lines() {
        let trace = ProfilerTrace {
            frames: vec![frame("(f)", None)],
            resources: vec![],
            stacks: stacks(&[None]),
            samples: vec![
                sample(None, None),
                sample(None, Some(ProfilerMarker::Gc)),
                sample(None, Some(ProfilerMarker::Paint)),
                sample(Some(0), None),
                sample(None, Some(ProfilerMarker::Gc)),
            ],
        };
        let mut profile = Profile::new(Keep::Counts);
        profile.add_trace("t", &trace, &mut |f| f).unwrap();
        // Sorted; no (program) line, as no sample is one.
        assert_eq!(folded(&profile), "(f) 1\n(garbage collector) 2\n(idle) 2\n");
    }

    #[test]
    fn an_empty_profile_is_an_empty_file() {
        assert_eq!(folded(&Profile::new(Keep::Counts)), "");
    }
}
