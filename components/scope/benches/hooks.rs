//! The cost of the event hooks when no session runs (what every task, script, load and
//! collection of a page pays), and of recording an event while one does.

use criterion::{criterion_group, criterion_main, Criterion};
use jsprof_scope::record::{self, StartMode};
use jsprof_scope::{Details, EvalKind, Recorder};

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

criterion_group!(benches, hooks);
criterion_main!(benches);
