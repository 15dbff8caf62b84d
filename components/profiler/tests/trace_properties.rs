//! Property tests of the trace builder: for random stacks, following the IDs in the trace
//! gives back exactly the kept frames, and the tables hold no duplicates.

use std::collections::HashSet;
use std::sync::Arc;

use jsprof_profiler::{
    FrameInfo, RawFrame, RawStack, RealmId, Recorder, Resolution, ResolvedSite, ScriptId,
    Symbolizer,
};
use proptest::prelude::*;

const MINE: RealmId = RealmId(1);

/// Script `s`'s functions are 10 lines each; positions resolve to `f{s}_{line / 10}`. Script 3
/// is `eval` code the symbolizer refuses.
struct Scripts;
impl Symbolizer for Scripts {
    fn resource(&self, s: ScriptId) -> Option<String> {
        Some(format!("https://site.test/s{}.js", s.0 % 2)) // two scripts share a URL
    }
    fn resolve(&self, s: ScriptId, line: u32, _: u32) -> Option<ResolvedSite> {
        (s.0 != 3).then(|| ResolvedSite {
            name: format!("f{}_{}", s.0, line / 10),
            line: line / 10 * 10 + 1,
            column: 3,
        })
    }
}

fn frame() -> impl Strategy<Value = RawFrame> {
    (0u32..3, 0u32..4, 0u32..40, 1u32..5, any::<bool>(), 0u32..10).prop_map(
        |(realm, script, line, column, hidden, kind)| {
            let realm = RealmId(1 + realm % 2 * (realm / 2)); // mostly mine
            let f = match kind {
                0 => RawFrame::resolved(realm, None, "builtin", None, None),
                1 => RawFrame::resolved(
                    realm,
                    Some(ScriptId(script)),
                    "named",
                    Some(line),
                    Some(column),
                ),
                _ => RawFrame::at(realm, ScriptId(script), line, column),
            };
            if hidden && kind % 3 == 0 {
                f.hidden()
            } else {
                f
            }
        },
    )
}

/// What the trace must show for a raw stack: kept frames, symbolized.
fn kept(stack: &[RawFrame]) -> Vec<FrameInfo> {
    stack
        .iter()
        .filter(|f| f.realm == MINE && !f.hidden)
        .filter_map(|f| match &f.site {
            jsprof_profiler::FrameSite::Resolved { name, line, column } => Some(FrameInfo {
                name: name.to_string(),
                resource: f.script.and_then(|s| Scripts.resource(s)),
                line: *line,
                column: *column,
            }),
            jsprof_profiler::FrameSite::Position { line, column }
            | jsprof_profiler::FrameSite::Definition { line, column } => {
                let s = f.script?;
                let r = Scripts.resolve(s, *line, *column)?;
                Some(FrameInfo {
                    name: r.name,
                    resource: Scripts.resource(s),
                    line: Some(r.line),
                    column: Some(r.column),
                })
            }
            jsprof_profiler::FrameSite::TopLevel => {
                let s = f.script?;
                let r = Scripts.resolve_top_level(s)?;
                Some(FrameInfo {
                    name: r.name,
                    resource: Scripts.resource(s),
                    line: Some(r.line),
                    column: Some(r.column),
                })
            }
        })
        .collect()
}

proptest! {
    #[test]
    fn rebuilding_each_sample_gives_back_the_kept_frames(
        pool in proptest::collection::vec(proptest::collection::vec(frame(), 0..12), 1..8),
        picks in proptest::collection::vec((0usize..8, any::<bool>()), 1..60),
    ) {
        let stacks: Vec<RawStack> = pool.into_iter().map(Arc::from).collect();
        let mut rec = Recorder::new(MINE, 0, Resolution::Coarse, u32::MAX);
        let mut want = Vec::new();
        for (i, (pick, idle)) in picks.iter().enumerate() {
            let now = i as u64 * 1_000_000;
            if *idle {
                rec.add(now, None, None);
                want.push(Vec::new());
            } else {
                // A fresh allocation half of the time, so the whole-stack memo is tested on
                // equal stacks that are not the same allocation.
                let s = &stacks[pick % stacks.len()];
                let s: RawStack = if i % 2 == 0 { s.clone() } else { Arc::from(s.to_vec()) };
                rec.add(now, Some(&s), None);
                want.push(kept(&s));
            }
        }
        let trace = rec.build(&Scripts);
        prop_assert_eq!(trace.samples.len(), want.len());
        for (sample, want) in trace.samples.iter().zip(&want) {
            let got = trace.sample_frames(sample).expect("valid IDs, parents first");
            prop_assert_eq!(&got, want);
            prop_assert_eq!(sample.stack_id.is_none(), want.is_empty());
        }
        prop_assert_eq!(trace.frames.iter().collect::<HashSet<_>>().len(), trace.frames.len());
        prop_assert_eq!(trace.stacks.iter().collect::<HashSet<_>>().len(), trace.stacks.len());
        prop_assert_eq!(trace.resources.iter().collect::<HashSet<_>>().len(), trace.resources.len());
        // Every table entry is used: by a sample, as a parent, as a frame, as a resource.
        let used: HashSet<u64> = trace.stacks.iter().filter_map(|s| s.parent_id)
            .chain(trace.samples.iter().filter_map(|s| s.stack_id)).collect();
        prop_assert_eq!(used.len(), trace.stacks.len());
        // Optional members are absent from the JSON, never null.
        prop_assert!(!trace.to_json().contains("null"));
    }
}

#[test]
fn memory_per_sample_is_at_most_16_bytes_beyond_the_tables() {
    let mut rec = Recorder::new(MINE, 0, Resolution::Coarse, u32::MAX);
    let s: RawStack = Arc::from(vec![RawFrame::at(MINE, ScriptId(0), 1, 1); 20]);
    for i in 0..100_000u64 {
        rec.add(i * 1_000_000, Some(&s), None);
    }
    let per = rec.sample_bytes() as f64 / rec.len() as f64;
    assert!(per <= 16.0, "{per} bytes per sample");
}

#[test]
fn a_huge_buffer_limit_reserves_nothing() {
    let rec = Recorder::new(MINE, 0, Resolution::Coarse, u32::MAX);
    assert_eq!(rec.sample_bytes(), 0);
}
