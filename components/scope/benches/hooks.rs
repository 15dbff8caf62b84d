//! The cost of the event hooks when no session runs (what every task, script, load and
//! collection of a page pays), and of recording an event while one does; then what
//! post-processing and `GetEvents` cost for a session of 100,000 events (done off the
//! page's loop).

use criterion::{criterion_group, criterion_main, Criterion};
use jsprof_scope::record::{self, FrameInfo, Recording, StartMode};
use jsprof_scope::timeline::{post_process, Mode, Query};
use jsprof_scope::{Details, EvalKind, RawEvent, Recorder};

fn details() -> Details {
    Details::ThreadEvaluation {
        kind: EvalKind::Timeout,
        event_type: None,
        script: None,
        function: None,
    }
}

fn hooks(c: &mut Criterion) {
    let recorder = Recorder::new();
    record::install(Some(recorder.clone()));
    c.bench_function("scope hook, no session", |b| {
        b.iter(|| std::hint::black_box(record::begin(1, details)))
    });
    recorder.start(StartMode::Immediate).ok();
    let mut n = 0u32;
    c.bench_function("scope hook, recording", |b| {
        b.iter(|| {
            n += 1;
            // Bounded memory: a fresh recording every million events.
            if n.is_multiple_of(1_000_000) {
                recorder.stop();
                recorder.start(StartMode::Immediate).ok();
            }
            std::hint::black_box(record::begin(1, details))
        })
    });
    recorder.stop();
    record::install(None);
}

/// 100,000 events in one frame: tasks of 1 ms, each with two nested children.
fn big_recording() -> Recording {
    let mut events = Vec::new();
    for task in 0..33_334u64 {
        let base = task * 1_000_000;
        let id = events.len() as u32 + 1;
        events.push(RawEvent {
            id,
            parent: 0,
            frame: 1,
            start: base,
            end: Some(base + 900_000),
            overhead: 300,
            details: details(),
        });
        for child in 0..2u64 {
            events.push(RawEvent {
                id: events.len() as u32 + 1,
                parent: id,
                frame: 1,
                start: base + 100_000 + child * 300_000,
                end: Some(base + 300_000 + child * 300_000),
                overhead: 300,
                details: Details::ScriptCompilation {
                    url: Some(format!("https://a.test/{}.js", task % 50)),
                    script_kind: jsprof_scope::ScriptKind::Classic,
                },
            });
        }
    }
    Recording {
        epoch: std::time::Instant::now(),
        epoch_nanos: 0,
        duration: 33_334 * 1_000_000,
        events,
        frames: vec![FrameInfo {
            frame_id: 1,
            parent: None,
            url: "https://a.test/".into(),
        }],
    }
}

fn post_processing(c: &mut Criterion) {
    let recording = big_recording();
    c.bench_function("scope post-process 100k events", |b| {
        b.iter(|| std::hint::black_box(post_process(&recording)))
    });
    let timeline = post_process(&recording).remove(0);
    for mode in [Mode::All, Mode::ReduceUniqueEvents] {
        let query = Query {
            mode: Some(mode),
            ..Query::default()
        };
        c.bench_function(
            &format!("scope GetEvents {} 100k events", mode.name()),
            |b| b.iter(|| std::hint::black_box(timeline.select(&query, None))),
        );
    }
}

criterion_group!(benches, hooks, post_processing);
criterion_main!(benches);
