//! The reductions on hand-built trees (injected times), the recorder on the real clock,
//! the protocol's decoder and the session rules.

use std::time::Instant;

use serde_json::json;

use crate::event::{Details, EvalKind, EventType, GcKind, RawEvent, ScriptKind};
use crate::protocol::{decode, Command, Response, Status};
use crate::record::{self, FrameInfo, Recorder, Recording, StartError, StartMode};
use crate::sessions::{Sessions, Stopped};
use crate::timeline::{post_process, stack_samples, Interval, Mode, Query, Timeline};

const MS: u64 = 1_000_000;

fn eval(kind: EvalKind) -> Details {
    Details::ThreadEvaluation {
        kind,
        event_type: None,
        script: Some("https://a.test/a.js".into()),
        function: None,
    }
}

fn compile(url: &str) -> Details {
    Details::ScriptCompilation {
        url: Some(url.into()),
        script_kind: ScriptKind::Classic,
    }
}

fn raw(id: u32, parent: u32, frame: u32, start: u64, end: u64, details: Details) -> RawEvent {
    RawEvent {
        id,
        parent,
        frame,
        start: start * MS,
        end: Some(end * MS),
        overhead: 1000,
        details,
    }
}

/// Frame 1 (top) and 2 (an iframe):
/// 1 inline [0,10] { 2 compile a.js [1,3], 3 timeout [4,8] { 4 minor GC [5,6] } }
/// 5 timeout [20,25] { 6 compile b.js in frame 2 [21,22] }
/// 7 load [30,31]
fn recording() -> Recording {
    let gc = Details::Gc {
        kind: GcKind::Minor,
        reason: "OUT_OF_NURSERY".into(),
    };
    let load = Details::Process {
        url: "https://a.test/data".into(),
        status: 200,
        bytes: 5,
    };
    Recording {
        epoch: Instant::now(),
        epoch_nanos: 0,
        duration: 40 * MS,
        events: vec![
            raw(1, 0, 1, 0, 10, eval(EvalKind::Inline)),
            raw(2, 1, 1, 1, 3, compile("https://a.test/a.js")),
            raw(3, 1, 1, 4, 8, eval(EvalKind::Timeout)),
            raw(4, 3, 1, 5, 6, gc),
            raw(5, 0, 1, 20, 25, eval(EvalKind::Timeout)),
            raw(6, 5, 2, 21, 22, compile("https://a.test/b.js")),
            raw(7, 0, 1, 30, 31, load),
        ],
        frames: vec![
            FrameInfo {
                frame_id: 1,
                parent: None,
                url: "https://a.test/".into(),
            },
            FrameInfo {
                frame_id: 2,
                parent: Some(1),
                url: "https://a.test/frame.html".into(),
            },
            FrameInfo {
                frame_id: 3,
                parent: Some(1),
                url: "https://a.test/idle.html".into(),
            },
        ],
    }
}

fn top() -> Timeline {
    post_process(&recording()).remove(0)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

fn ids(events: &[crate::Event]) -> Vec<u32> {
    events.iter().map(|e| e.event_id).collect()
}

#[test]
fn one_timeline_per_frame_that_existed() {
    let timelines = post_process(&recording());
    let frames: Vec<(u32, u32)> = timelines
        .iter()
        .map(|t| (t.timeline_id, t.frame_id))
        .collect();
    assert_eq!(frames, [(1, 1), (2, 2), (3, 3)]);
    assert_eq!(ids(&timelines[1].events), [6]);
    // Its parent is in another frame: a top-level event of its own.
    assert_eq!(timelines[1].events[0].parent_event_id, 0);
    assert!(timelines[2].events.is_empty());
}

#[test]
fn tree_values() {
    let t = top();
    let e = |id: u32| t.events.iter().find(|e| e.event_id == id).unwrap().clone();
    assert_eq!(e(1).parent_event_id, 0);
    assert_eq!(e(2).parent_event_id, 1);
    assert_eq!(e(4).parent_event_id, 3);
    assert_eq!(e(1).child_count, 2);
    assert_eq!(e(3).child_count, 1);
    assert_eq!(e(5).child_count, 0);
    assert!(close(e(1).aggregated_time, 10.0));
    assert!(close(e(1).time, 4.0));
    assert!(close(e(3).time, 3.0));
    assert!(close(e(5).time, 5.0));
    assert!(close(e(1).overhead, 0.001));
    assert!(close(e(1).aggregated_overhead, 0.004));
    assert_eq!(
        e(1).interval,
        Interval {
            start: 0.0,
            end: 10.0
        }
    );
    for parent in &t.events {
        let children: f64 = t
            .events
            .iter()
            .filter(|c| c.parent_event_id == parent.event_id)
            .map(|c| c.aggregated_time)
            .sum();
        assert!(parent.aggregated_time >= children);
        assert_eq!(parent.hits, 1);
    }
}

fn query(mode: Mode) -> Query {
    Query {
        mode: Some(mode),
        ..Query::default()
    }
}

#[test]
fn reduce_unique_types_sums_own_times_and_counts_nested_once() {
    let out = top().select(&query(Mode::ReduceUniqueTypes), None).unwrap();
    let types: Vec<EventType> = out.iter().map(|e| e.event_type).collect();
    assert_eq!(
        types,
        [
            EventType::ThreadEvaluation,
            EventType::ScriptCompilation,
            EventType::Generic,
            EventType::Process
        ]
    );
    let ev = &out[0];
    assert_eq!(ev.hits, 3);
    assert!(close(ev.time, 4.0 + 3.0 + 5.0));
    // 3 is inside 1: counted once.
    assert!(close(ev.aggregated_time, 10.0 + 5.0));
    assert_eq!(ev.child_count, 3);
    assert_eq!(
        ev.interval,
        Interval {
            start: 0.0,
            end: 25.0
        }
    );
    assert!(ev.details.is_none());
    assert_eq!(out[1].hits, 1);
}

#[test]
fn reduce_unique_events_merges_by_key() {
    let out = top()
        .select(&query(Mode::ReduceUniqueEvents), None)
        .unwrap();
    let evals: Vec<_> = out
        .iter()
        .filter(|e| e.event_type == EventType::ThreadEvaluation)
        .collect();
    assert_eq!(evals.len(), 2);
    assert_eq!(evals[0].details, Some(eval(EvalKind::Inline)));
    assert_eq!(evals[0].hits, 1);
    assert_eq!(evals[1].details, Some(eval(EvalKind::Timeout)));
    assert_eq!(evals[1].hits, 2);
    assert!(close(evals[1].time, 3.0 + 5.0));
    assert!(close(evals[1].aggregated_time, 4.0 + 5.0));
    assert_eq!(evals[1].event_id, 3);
}

#[test]
fn reduce_all_is_one_event() {
    let out = top().select(&query(Mode::ReduceAll), None).unwrap();
    assert_eq!(out.len(), 1);
    let all = &out[0];
    assert_eq!(all.hits, 6);
    assert_eq!(all.event_type, EventType::Generic);
    assert!(close(all.time, 4.0 + 2.0 + 3.0 + 1.0 + 5.0 + 1.0));
    assert!(close(all.aggregated_time, 10.0 + 5.0 + 1.0));
    assert!(close(all.aggregated_overhead, 0.006));
    // One type only: it is that type.
    let q = Query {
        types: Some(vec![EventType::ThreadEvaluation]),
        ..query(Mode::ReduceAll)
    };
    let out = top().select(&q, None).unwrap();
    assert_eq!(out[0].event_type, EventType::ThreadEvaluation);
    assert_eq!(out[0].hits, 3);
    // Nothing selected: nothing.
    let q = Query {
        types: Some(vec![EventType::Paint]),
        ..query(Mode::ReduceAll)
    };
    assert!(top().select(&q, None).unwrap().is_empty());
}

#[test]
fn selections() {
    let t = top();
    let sel = |q: Query| ids(&t.select(&q, None).unwrap());
    assert_eq!(sel(query(Mode::All)), [1, 2, 3, 4, 5, 7]);
    let depth = |d| Query {
        max_depth: Some(d),
        ..query(Mode::All)
    };
    assert_eq!(sel(depth(1)), [1, 5, 7]);
    assert_eq!(sel(depth(2)), [1, 2, 3, 5, 7]);
    let under = |id, d| Query {
        event_id: Some(id),
        max_depth: d,
        ..query(Mode::All)
    };
    assert_eq!(sel(under(1, None)), [2, 3, 4]);
    assert_eq!(sel(under(1, Some(1))), [2, 3]);
    assert_eq!(sel(under(4, None)), Vec::<u32>::new());
    let types = Query {
        types: Some(vec![EventType::ScriptCompilation, EventType::Generic]),
        ..query(Mode::All)
    };
    assert_eq!(sel(types), [2, 4]);
    let interval = |start, end| Query {
        interval: Some(Interval { start, end }),
        ..query(Mode::All)
    };
    assert_eq!(sel(interval(9.0, 21.0)), [1, 5]);
    // Ends touch: overlapping.
    assert_eq!(sel(interval(25.0, 30.0)), [5, 7]);
    assert_eq!(sel(interval(11.0, 19.0)), Vec::<u32>::new());
    assert_eq!(
        t.select(&under(99, None), None),
        Err(crate::timeline::UnknownEvent(99))
    );
    // Reduced over a selection: only what was selected.
    let q = Query {
        event_id: Some(1),
        ..query(Mode::ReduceAll)
    };
    let out = t.select(&q, None).unwrap();
    assert_eq!(out[0].hits, 3);
    assert!(close(out[0].aggregated_time, 2.0 + 4.0));
}

#[test]
fn samples_attach_to_evaluations_they_fall_in() {
    let trace: jsprof_profiler::ProfilerTrace = serde_json::from_value(json!({
        "frames": [{"name": "tick", "resourceId": 0, "line": 3, "column": 14}, {"name": "f"}],
        "resources": ["https://a.test/a.js"],
        "samples": [{"timestamp": 105.0, "stackId": 1}, {"timestamp": 122.0}, {"timestamp": 150.0, "stackId": 0}],
        "stacks": [{"frameId": 0}, {"frameId": 1, "parentId": 0}]
    }))
    .unwrap();
    // The trace's time 0 is 100 ms before the session's.
    let samples = stack_samples(&trace, 100.0);
    assert_eq!(samples[0].time, 5.0);
    assert_eq!(samples[0].frames, ["f", "tick (https://a.test/a.js:3:14)"]);
    assert!(samples[1].frames.is_empty());
    let out = top().select(&query(Mode::All), Some(&samples)).unwrap();
    let of = |id: u32| {
        out.iter()
            .find(|e| e.event_id == id)
            .unwrap()
            .samples
            .clone()
    };
    assert_eq!(of(1).unwrap().len(), 1);
    assert_eq!(of(3).unwrap().len(), 1);
    assert_eq!(of(5).unwrap().len(), 1);
    assert_eq!(of(2), None);
}

#[test]
fn event_json_uses_scope_names() {
    let t = top();
    let v = serde_json::to_value(&t.events[0]).unwrap();
    assert_eq!(v["eventID"], 1);
    assert_eq!(v["parentEventID"], 0);
    assert_eq!(v["type"], "THREAD_EVALUATION");
    assert_eq!(v["childCount"], 2);
    assert_eq!(v["interval"], json!({"start": 0.0, "end": 10.0}));
    assert_eq!(
        v["threadEvaluation"],
        json!({"kind": "inline", "script": "https://a.test/a.js"})
    );
    let gc = serde_json::to_value(&t.events[3]).unwrap();
    assert_eq!(
        gc["generic"],
        json!({"kind": "minor", "reason": "OUT_OF_NURSERY"})
    );
    assert_eq!(
        serde_json::to_value(&t).unwrap(),
        json!({"timelineID": 1, "frameID": 1})
    );
}

#[test]
fn recorder_tree_on_the_real_clock() {
    let r = Recorder::new();
    record::install(Some(r.clone()));
    // Nothing runs: a hook records nothing and never builds its details.
    let g = record::begin(1, || unreachable!("details of an unrecorded event"));
    assert!(!g.is_recording());
    drop(g);
    r.set_frame(FrameInfo {
        frame_id: 1,
        parent: None,
        url: "a".into(),
    });
    r.start(StartMode::Immediate).unwrap();
    assert_eq!(
        r.start(StartMode::Immediate),
        Err(StartError::AlreadyRecording)
    );
    {
        let _outer = record::begin(1, || eval(EvalKind::Inline));
        {
            let _inner = record::begin(1, || compile("x"));
        }
        let _second = record::begin(2, || eval(EvalKind::Microtask));
        r.set_frame(FrameInfo {
            frame_id: 2,
            parent: Some(1),
            url: "b".into(),
        });
    }
    let open = record::begin(1, || eval(EvalKind::Timeout));
    let rec = r.stop().unwrap();
    // Stopped: nothing more is recorded, and the event still open ended at the stop.
    drop(open);
    assert!(!record::begin(1, || eval(EvalKind::Inline)).is_recording());
    let parents: Vec<(u32, u32)> = rec.events.iter().map(|e| (e.id, e.parent)).collect();
    assert_eq!(parents, [(1, 0), (2, 1), (3, 1), (4, 0)]);
    assert_eq!(rec.events[3].end, Some(rec.duration));
    for e in &rec.events {
        assert!(e.end.unwrap() >= e.start);
    }
    assert!(rec.events[0].end.unwrap() >= rec.events[2].end.unwrap());
    assert_eq!(rec.frames.len(), 2);
    assert!(r.stop().is_none());
    record::install(None);
}

#[test]
fn url_start_waits_for_navigation() {
    let r = Recorder::new();
    r.start(StartMode::Url).unwrap();
    assert!(!r.is_recording());
    assert_eq!(r.start(StartMode::Url), Err(StartError::AlreadyRecording));
    r.navigation_started();
    assert!(r.is_recording());
    assert!(r.stop().is_some());
    // A stop before the navigation disarms it.
    r.start(StartMode::Url).unwrap();
    assert!(r.stop().is_none());
    r.navigation_started();
    assert!(!r.is_recording());
}

#[test]
fn an_event_of_an_old_recording_never_ends_in_a_new_one() {
    let r = Recorder::new();
    r.start(StartMode::Immediate).unwrap();
    let old = r.begin(1, eval(EvalKind::Inline));
    r.stop();
    r.start(StartMode::Immediate).unwrap();
    let new = r.begin(1, eval(EvalKind::Timeout));
    drop(old);
    drop(new);
    let rec = r.stop().unwrap();
    assert_eq!(rec.events.len(), 1);
    assert_eq!(rec.events[0].parent, 0);
}

#[test]
fn decoder() {
    let ok = |line: &str| decode(line).unwrap();
    let r = ok(r#"{"command":"StartProfiler","tag":7,"payload":{"windowID":1,"startMode":"URL"}}"#);
    assert_eq!(r.tag, 7);
    assert_eq!(
        r.command,
        Command::StartProfiler {
            window_id: 1,
            start_mode: StartMode::Url,
            interval: 10.0
        }
    );
    let r = ok(r#"{"command":1,"tag":0,"payload":{"windowID":2,"startMode":1,"interval":1}}"#);
    assert!(matches!(
        r.command,
        Command::StartProfiler {
            window_id: 2,
            start_mode: StartMode::Immediate,
            ..
        }
    ));
    let r = ok(
        r#"{"command":3,"tag":1,"payload":{"sessionID":1,"timelineID":2,"mode":"REDUCE_ALL","eventTypeList":[6,"PROCESS"],"maxDepth":2,"interval":{"start":1,"end":2},"eventID":5,"stacks":true}}"#,
    );
    match r.command {
        Command::GetEvents { query, stacks, .. } => {
            assert_eq!(query.mode, Some(Mode::ReduceAll));
            assert_eq!(
                query.types,
                Some(vec![EventType::ThreadEvaluation, EventType::Process])
            );
            assert_eq!(query.max_depth, Some(2));
            assert_eq!(query.event_id, Some(5));
            assert!(stacks);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(ok(r#"{"command":"Quit","tag":3}"#).command, Command::Quit);
    assert_eq!(
        ok(r#"{"command":6,"tag":3,"payload":{}}"#).command,
        Command::ListWindows
    );
    // Not a request at all: the connection is closed.
    for line in [
        "POST / HTTP/1.1",
        "",
        "[1]",
        r#"{"tag":1}"#,
        "\u{0}\u{ffff}",
        r#"{"command":"Quit""#,
    ] {
        let e = decode(line).unwrap_err();
        assert!(!e.is_request, "{line:?}");
    }
    // Requests with a fault: BAD_REQUEST, with the tag when there is one.
    for (line, tag) in [
        (r#"{"command":"Quit"}"#, None),
        (r#"{"command":"Quit","tag":-1}"#, None),
        (r#"{"command":"Jump","tag":4}"#, Some(4)),
        (r#"{"command":99,"tag":4}"#, Some(4)),
        (
            r#"{"command":"StartProfiler","tag":4,"payload":{}}"#,
            Some(4),
        ),
        (
            r#"{"command":"StartProfiler","tag":4,"payload":{"windowID":"one"}}"#,
            Some(4),
        ),
        (
            r#"{"command":"StartProfiler","tag":4,"payload":{"windowID":1,"startMode":3}}"#,
            Some(4),
        ),
        (
            r#"{"command":"StartProfiler","tag":4,"payload":{"windowID":1,"interval":-1}}"#,
            Some(4),
        ),
        (
            r#"{"command":"StopProfiler","tag":4,"payload":{"sessionID":1,"extra":1}}"#,
            Some(4),
        ),
        (
            r#"{"command":"StopProfiler","tag":4,"payload":[1]}"#,
            Some(4),
        ),
        (
            r#"{"command":"GetEvents","tag":4,"payload":{"sessionID":1,"timelineID":1,"mode":5}}"#,
            Some(4),
        ),
        (
            r#"{"command":"GetEvents","tag":4,"payload":{"sessionID":1,"timelineID":1,"mode":1,"eventTypeList":[12]}}"#,
            Some(4),
        ),
        (
            r#"{"command":"GetEvents","tag":4,"payload":{"sessionID":1,"timelineID":1,"mode":1,"interval":{"start":2,"end":1}}}"#,
            Some(4),
        ),
        (r#"{"command":"Quit","tag":4,"other":1}"#, Some(4)),
        (r#"{"command":"Quit","tag":4,"payload":{"x":1}}"#, Some(4)),
    ] {
        let e = decode(line).unwrap_err();
        assert!(e.is_request, "{line}");
        assert_eq!(e.tag, tag, "{line}");
        assert!(!e.message.is_empty());
    }
}

#[test]
fn responses() {
    let r = Response::error(Some(2), Status::BadRequest, "no");
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&r.to_line()).unwrap(),
        json!({"tag": 2, "status": "BAD_REQUEST", "payload": {"message": "no"}})
    );
    let r = Response::ok(1, json!({}));
    assert!(r.to_line().contains(r#""status":"OK""#));
}

#[test]
fn session_rules() {
    let mut s = Sessions::default();
    let a = s.start(1, 10).unwrap();
    assert_eq!(a.session_id, 1);
    assert!(s.start(1, 11).is_err(), "one at a time");
    assert!(
        s.release(1).is_err(),
        "a running session cannot be released"
    );
    assert!(s.get(1).is_err());
    assert!(s.stop(2).is_err());
    s.stop(1).unwrap();
    assert!(s.stop(1).is_err(), "stopping twice");
    assert!(s.start(1, 10).is_err(), "still being post-processed");
    s.stopped(Stopped {
        session_id: 1,
        window_id: 1,
        timelines: post_process(&recording()),
        trace: None,
        samples: Vec::new(),
    });
    assert!(s.stop(1).is_err());
    assert_eq!(
        s.get(1).unwrap().to_json()["timelineList"][1],
        json!({"timelineID": 2, "frameID": 2})
    );
    let b = s.start(2, 11).unwrap();
    assert_eq!(b.session_id, 2);
    // Its client leaves while it runs: released; another's leaving does nothing.
    assert_eq!(s.disconnected(10), None);
    assert_eq!(s.disconnected(11).map(|r| r.session_id), Some(2));
    assert!(s.get(2).is_err());
    s.release(1).unwrap();
    assert!(s.get(1).is_err(), "IDs are invalid after release");
    assert!(s.release(1).is_err());
}
