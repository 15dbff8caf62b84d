//! The markers extension: each sample carries what the agent was doing at its tick, as
//! far as the session's context may see it.

use crate::agent::{RenderingPhase, Sampled};
use crate::trace::{MarkerSet, ProfilerMarker};

use super::harness::*;

/// Markers extension: each sample's marker is the agent's state at its tick, kept only by
/// sessions that expose it.
#[test]
fn samples_are_marked_with_what_the_agent_was_doing_at_the_tick() {
    use ProfilerMarker::{Gc, Other, Script};
    let mut h = Harness::new();
    let a = h.agent_with(Some(Box::new(|| Sampled::Stack(stack(&[3])))));
    let isolated = MarkerSet::for_context(true, true);
    h.start_with(1, a, 1, 100, isolated);
    h.start_with(2, a, 1, 100, MarkerSet::for_context(true, false));
    h.start_with(3, a, 1, 100, MarkerSet::for_context(false, true));
    h.start(4, a, 1, 100);
    let agent = h.agents[a].0.clone();
    // 0-2 ms: waiting for work; 2-4: a task's native work; 4-6: script; 6-8: a collection
    // inside script; 8-10: a collection outside script; 10-12: waiting again.
    agent.waiting(true);
    h.run_to(2 * MS, |_| {});
    agent.waiting(false);
    h.run_to(4 * MS, |_| {});
    agent.enter();
    h.run_to(6 * MS, |_| {});
    agent.gc_began();
    agent.gc_began(); // a nursery collection inside the slice
    agent.gc_ended();
    h.run_to(8 * MS, |_| {});
    agent.leave();
    h.run_to(10 * MS, |_| {});
    agent.gc_ended();
    agent.gc_ended(); // unbalanced: ignored
    agent.waiting(true);
    h.run_to(12 * MS, |_| {});
    let expected = [None, Some(Other), Some(Script), Some(Gc), Some(Gc), None];
    let t = h.stop(1);
    assert_eq!(blocks(&t, 2), [0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5]);
    for (i, s) in t.samples.iter().enumerate() {
        assert_eq!(
            s.marker,
            expected[i / 2],
            "sample {i} at {} ms",
            s.timestamp
        );
        // Stacks only where script ran: a collection outside script has none.
        assert_eq!(s.stack_id.is_some(), (4..8).contains(&i), "sample {i}");
    }
    // Not isolated: only style and layout would be exposed, and this engine makes neither;
    // pref off or no marker set: none. Their JSON is exactly the base spec's.
    for id in [2, 3, 4] {
        let t = h.stop(id);
        assert_eq!(t.samples.len(), 12);
        assert!(t.samples.iter().all(|s| s.marker.is_none()));
        assert!(!t.to_json().contains("marker"), "{}", t.to_json());
    }
    assert!(t
        .to_json()
        .contains(r#"{"marker":"script","stackId":0,"timestamp":"#));
}

#[test]
fn marker_sets_follow_conditional_marker_exposure() {
    let all = MarkerSet::for_context(true, true);
    assert!(ProfilerMarker::ALL.iter().all(|&m| all.contains(m)));
    let open = MarkerSet::for_context(true, false);
    let exposed: Vec<_> = ProfilerMarker::ALL
        .into_iter()
        .filter(|&m| open.contains(m))
        .collect();
    assert_eq!(exposed, [ProfilerMarker::Style, ProfilerMarker::Layout]);
    assert_eq!(MarkerSet::for_context(false, true), MarkerSet::NONE);
    assert_eq!(MarkerSet::for_context(false, false), MarkerSet::NONE);
    for m in ProfilerMarker::ALL {
        assert_eq!(
            serde_json::to_string(&m).unwrap(),
            format!("\"{}\"", m.as_str())
        );
        assert_eq!(
            ProfilerMarker::from_byte(ProfilerMarker::to_byte(Some(m))),
            Some(m)
        );
    }
    assert_eq!(ProfilerMarker::from_byte(0), None);
}

/// A host with a rendering pipeline marks its phases: a tick inside one is `style`, `layout`
/// or `paint` (even when script forced it, and then with the script's stack), a collection
/// inside one is still `gc`, and a context that is not cross-origin isolated sees `style`
/// and `layout` but not `paint` (decision 0064).
#[test]
fn rendering_phases_mark_their_ticks_and_only_style_and_layout_are_seen_without_isolation() {
    use ProfilerMarker::{Gc, Layout, Other, Paint, Script, Style};
    use RenderingPhase as R;
    let mut h = Harness::new();
    let a = h.agent_with(Some(Box::new(|| Sampled::Stack(stack(&[3])))));
    h.start_with(1, a, 1, 100, MarkerSet::for_context(true, true));
    h.start_with(2, a, 1, 100, MarkerSet::for_context(true, false));
    let agent = h.agents[a].0.clone();
    // 0-2 ms: a rendering update's style, 2-4: its layout, 4-6: a collection in its
    // layout, 6-8: its paint, 8-10: the task after it; 10-12: script, 12-14: a layout it
    // forced, 14-16: a restyle inside that layout, 16-18: the layout again, 18-20: script.
    assert_eq!(agent.set_rendering(Some(R::Style)), None);
    h.run_to(2 * MS, |_| {});
    assert_eq!(agent.set_rendering(Some(R::Layout)), Some(R::Style));
    h.run_to(4 * MS, |_| {});
    agent.gc_began();
    h.run_to(6 * MS, |_| {});
    agent.gc_ended();
    agent.set_rendering(Some(R::Paint));
    h.run_to(8 * MS, |_| {});
    assert_eq!(agent.set_rendering(None), Some(R::Paint));
    h.run_to(10 * MS, |_| {});
    agent.enter();
    h.run_to(12 * MS, |_| {});
    let outer = agent.set_rendering(Some(R::Layout));
    h.run_to(14 * MS, |_| {});
    let inner = agent.set_rendering(Some(R::Style));
    h.run_to(16 * MS, |_| {});
    agent.set_rendering(inner);
    h.run_to(18 * MS, |_| {});
    agent.set_rendering(outer);
    h.run_to(20 * MS, |_| {});
    agent.leave();
    assert_eq!(agent.marker(), Some(Other));

    let isolated = [
        Style, Layout, Gc, Paint, Other, Script, Layout, Style, Layout, Script,
    ];
    let t = h.stop(1);
    assert_eq!(t.samples.len(), 20);
    for (i, s) in t.samples.iter().enumerate() {
        assert_eq!(s.marker, Some(isolated[i / 2]), "sample {i}");
        // Stacks only where script ran, forced layouts included.
        assert_eq!(s.stack_id.is_some(), (10..20).contains(&i), "sample {i}");
    }
    let t = h.stop(2);
    for (i, s) in t.samples.iter().enumerate() {
        let seen = Some(isolated[i / 2]).filter(|m| matches!(m, Style | Layout));
        assert_eq!(s.marker, seen, "sample {i}");
    }
    assert!(t.to_json().contains(r#""marker":"layout""#));
    assert!(!t.to_json().contains("paint"));
}
