//! `jsprof flame -o FILE`: the store's samples (with `top`'s filters) merged by call path
//! (aggregate.rs) and written through jsprof-export, as `jsprof convert` and `jsprof
//! report` write traces: `.html` is the report (facts, flame graph, timeline, top
//! functions), `.svg` the flame graph, and the other formats that need only counts
//! (`.folded`, `.pb.gz`/pprof) are written too.
//!
//! [`diff_tree`]: two releases' profiles merged by call path, each path with both releases'
//! samples and the change of its share ([`crate::diff::Change`]): the page's diff flame graph.

use std::collections::BTreeMap;
use std::path::Path;

use jsprof_export::{Format, Frame, Keep, Profile};

use crate::diff::{Change, Z95};

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

/// One call path of a diff flame graph: its samples in each release (total: on the stack;
/// self: as the leaf), and the change of its total share, head − base, with its 95% interval
/// (`diff`'s statistics; shares of each release's samples with a stack).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct DiffNode {
    pub function: String,
    pub resource: Option<String>,
    pub line: Option<u64>,
    pub column: Option<u64>,
    pub base: u64,
    pub head: u64,
    pub base_self: u64,
    pub head_self: u64,
    pub change: Change,
    pub children: Vec<DiffNode>,
}

/// A call path being merged: its frame, counts (base total, base self, head total, head
/// self) and children by frame.
struct Merging {
    frame: Frame,
    counts: [u64; 4],
    children: BTreeMap<Frame, usize>,
}

/// Samples with a stack.
fn stacked(p: &Profile) -> u64 {
    p.sample_count() - p.empty_total()
}

/// `base` and `head` merged by call path under a root `all`, children in frame order. A
/// path whose share is below `min_share` in both releases is left out, with its subtree
/// (its samples stay in its parent's total).
pub fn diff_tree(base: &Profile, head: &Profile, min_share: f64) -> DiffNode {
    let root = Frame {
        name: "all".into(),
        resource: None,
        line: None,
        column: None,
    };
    let mut arena = vec![Merging {
        frame: root,
        counts: [0; 4],
        children: BTreeMap::new(),
    }];
    for (side, p) in [base, head].into_iter().enumerate() {
        let totals = p.total_counts();
        let mut at: Vec<usize> = Vec::with_capacity(p.nodes().len());
        // Parents come before their children.
        for (id, node) in p.nodes().iter().enumerate() {
            let parent = node.parent.map_or(0, |n| at[n as usize]);
            let frame = p.frame(node.frame).clone();
            let next = arena.len();
            let index = *arena[parent].children.entry(frame.clone()).or_insert(next);
            if index == next {
                arena.push(Merging {
                    frame,
                    counts: [0; 4],
                    children: BTreeMap::new(),
                });
            }
            arena[index].counts[2 * side] += totals[id];
            arena[index].counts[2 * side + 1] += p.self_count(id as u32);
            at.push(index);
        }
        arena[0].counts[2 * side] = stacked(p);
    }
    let (n1, n2) = (stacked(base), stacked(head));
    fn build(arena: &[Merging], i: usize, n: (u64, u64), min: f64) -> DiffNode {
        let m = &arena[i];
        let share = |x: u64, n: u64| if n == 0 { 0.0 } else { x as f64 / n as f64 };
        let children = m
            .children
            .values()
            .filter(|&&c| {
                let k = arena[c].counts;
                share(k[0], n.0) >= min || share(k[2], n.1) >= min
            })
            .map(|&c| build(arena, c, n, min))
            .collect();
        DiffNode {
            function: m.frame.display_name().to_owned(),
            resource: m.frame.resource.clone(),
            line: m.frame.line,
            column: m.frame.column,
            base: m.counts[0],
            head: m.counts[2],
            base_self: m.counts[1],
            head_self: m.counts[3],
            change: Change::of(m.counts[0], n.0, m.counts[2], n.1, Z95),
            children,
        }
    }
    build(&arena, 0, (n1, n2), min_share)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(name: &str) -> Frame {
        Frame {
            name: name.into(),
            resource: Some("https://a.test/app.js".into()),
            line: Some(1),
            column: Some(1),
        }
    }

    /// `main → a` and `main → b` in base, `main → b` and `main → c` in head: every path with
    /// both releases' counts, the shrunk `a` and the grown `c` flagged, the tiny path left out.
    #[test]
    fn diff_tree_merges_both_releases_by_call_path() {
        let mut base = Profile::new(Keep::Counts);
        let main = base.call_path(None, frame("main"));
        let a = base.call_path(Some(main), frame("a"));
        let b = base.call_path(Some(main), frame("b"));
        base.add_samples(a, 300);
        base.add_samples(b, 100);
        let tiny = base.call_path(Some(b), frame("tiny"));
        base.add_samples(tiny, 1);
        base.add_empty_samples(jsprof_export::Empty::Idle, 50);
        let mut head = Profile::new(Keep::Counts);
        let main = head.call_path(None, frame("main"));
        let b = head.call_path(Some(main), frame("b"));
        let c = head.call_path(Some(main), frame("c"));
        head.add_samples(b, 100);
        head.add_samples(c, 300);

        let root = diff_tree(&base, &head, 0.005);
        assert_eq!(
            (root.function.as_str(), root.base, root.head),
            ("all", 401, 400)
        );
        assert_eq!(root.change.delta, 0.0);
        let main = &root.children[0];
        assert_eq!((main.base, main.head, main.base_self), (401, 400, 0));
        let names: Vec<_> = main.children.iter().map(|c| c.function.as_str()).collect();
        assert_eq!(names, ["a", "b", "c"]);
        let [a, b, c] = [&main.children[0], &main.children[1], &main.children[2]];
        assert_eq!((a.base, a.head, a.base_self), (300, 0, 300));
        assert!(a.change.delta < 0.0 && a.change.significant(), "{a:?}");
        assert_eq!((c.base, c.head, c.head_self), (0, 300, 300));
        assert!(c.change.delta > 0.0 && c.change.significant(), "{c:?}");
        assert_eq!((b.base, b.head), (101, 100));
        assert!(!b.change.significant(), "{b:?}");
        // 1 of 401 is below 0.5% in both: left out, its sample still in b's total.
        assert!(b.children.is_empty(), "{b:?}");
        assert_eq!(
            diff_tree(&base, &head, 0.0).children[0].children[1]
                .children
                .len(),
            1
        );
    }
}
