//! The trace builder: a session's [`Recorder`] fed a stream of samples (stacks of raw
//! frames from a small pool of realms, scripts and positions; idle samples; hidden frames),
//! then built into a `ProfilerTrace` through the real script registry.
//!
//! The input is decoded by [`decode`] (total: every byte string is a stream) and [`encode`]
//! writes a stream back, for seeds and for the structured proptest.

use std::collections::HashSet;
use std::sync::OnceLock;

use jsprof_profiler::{
    Added, FrameInfo, FrameSite, MarkerSet, Nanos, ProfilerMarker, ProfilerTrace, RawFrame,
    RawStack, RealmId, Recorder, Resolution, ScriptId, Symbolizer,
};
use jsprof_symbolizer::{ScriptInfo, ScriptRegistry, SourceId};

/// The session's realm; frames of the others must never reach its trace.
pub const MINE: RealmId = RealmId(1);
const OTHERS: [RealmId; 2] = [RealmId(2), RealmId(7)];
/// Names no kept frame has: resolved frames of other realms, and hidden resolved frames.
const OTHER_REALM_NAME: &str = "<other realm>";
const HIDDEN_NAME: &str = "<hidden>";
const MUTED_URL: &str = "https://other.test/muted.js";

/// The scripts frames point into (ScriptIds 0..4 as registered; 4..8 are never registered).
const SCRIPTS: &[(&str, &str, u32, u32, bool, bool)] = &[
    (
        "https://site.test/app.js",
        "function outer(a) {\n  return inner(a) + 1;\n}\nfunction inner(b) {\n  const f = () => b * 2;\n  return f();\n}\nouter(3);\n",
        1,
        1,
        false,
        false,
    ),
    (
        "https://site.test/index.html",
        "class K {\n  constructor() { this.x = 1; }\n  get v() { return this.x; }\n}\nexport default function () {\n  return new K().v;\n}\n",
        12,
        9,
        true,
        false,
    ),
    (
        "https://site.test/app.js",
        "var o = { m() { return 1; }, 'é😀': function () { return 2; } };\nvar g = function named() {};\n",
        1,
        1,
        false,
        false,
    ),
    (MUTED_URL, "function secret() {\n  return 42;\n}\n", 1, 1, false, true),
];

const NAMES: &[&str] = &["", "builtin", "Math.max", "ünï😀"];

/// The registry of [`SCRIPTS`], shared by every run (it parses each script once).
fn registry() -> &'static ScriptRegistry {
    static REGISTRY: OnceLock<ScriptRegistry> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        let reg = ScriptRegistry::default();
        for (i, &(url, source, line, column, module, hidden)) in SCRIPTS.iter().enumerate() {
            let id = reg.register(&ScriptInfo {
                source_id: SourceId(100 + i as u32),
                realm: MINE,
                url,
                source,
                line,
                column,
                module,
                muted: hidden,
            });
            assert_eq!(id, ScriptId(i as u32));
        }
        reg
    })
}

/// One frame, as the bytes describe it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame {
    /// 0 and 1: the session's realm; 2 and 3: another.
    pub realm: u8,
    pub hidden: bool,
    /// 0: resolved, no script (a builtin); 1: resolved, in a script; 2: a position; 3: a
    /// definition position; 4: top level; 5: a position without a script; 6, 7: a position.
    pub kind: u8,
    /// 0..4 registered (3 muted), 4..8 never registered.
    pub script: u8,
    pub line: u8,
    pub column: u8,
    /// Index into the resolved names.
    pub name: u8,
}

/// One event of the stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A sample after `dt` time units of scale `scale` (0: ns, 1: µs, 2: 100 µs, 3: 10 ms).
    Idle { scale: u8, dt: u8 },
    /// A sample with a new stack (outermost frame first), added to the pool.
    Stack {
        scale: u8,
        dt: u8,
        frames: Vec<Frame>,
    },
    /// A sample with a pooled stack: the same allocation or a fresh copy.
    Again {
        scale: u8,
        dt: u8,
        index: u8,
        copy: bool,
    },
}

/// A whole stream: the session's configuration, then its events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stream {
    pub isolated: bool,
    /// 0: no limit; otherwise the buffer holds this many samples.
    pub max_samples: u8,
    /// The session's time origin, in ms of the clock.
    pub origin_ms: u8,
    pub events: Vec<Event>,
}

/// Reads bytes, then zeros once they run out.
struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn byte(&mut self) -> u8 {
        match self.0.split_first() {
            Some((&b, rest)) => {
                self.0 = rest;
                b
            }
            None => 0,
        }
    }
}

const SCALES: [Nanos; 4] = [1, 1_000, 100_000, 10_000_000];

/// Decodes any bytes into a stream: `[flags, max_samples, origin_ms]`, then events. An event
/// is an op byte (bits 0-1: idle, new stack, same stack, copied stack; bits 2-3: time scale),
/// a time delta byte, then for a new stack a length byte (mod 16) and per frame three bytes
/// (`realm | hidden << 2 | kind << 3 | name << 6`, `script | line << 3`, `column`), and for
/// a pooled stack an index byte.
pub fn decode(data: &[u8]) -> Stream {
    let mut r = Reader(data);
    let isolated = r.byte() & 1 == 1;
    let max_samples = r.byte();
    let origin_ms = r.byte();
    let mut events = Vec::new();
    while !r.0.is_empty() {
        let op = r.byte();
        let scale = (op >> 2) & 3;
        let dt = r.byte();
        events.push(match op & 3 {
            0 => Event::Idle { scale, dt },
            1 => {
                let n = r.byte() % 16;
                let frames = (0..n)
                    .map(|_| {
                        let (a, b, c) = (r.byte(), r.byte(), r.byte());
                        Frame {
                            realm: a & 3,
                            hidden: a & 4 != 0,
                            kind: (a >> 3) & 7,
                            name: a >> 6,
                            script: b & 7,
                            line: b >> 3,
                            column: c,
                        }
                    })
                    .collect();
                Event::Stack { scale, dt, frames }
            }
            k => Event::Again {
                scale,
                dt,
                index: r.byte(),
                copy: k == 3,
            },
        });
    }
    Stream {
        isolated,
        max_samples,
        origin_ms,
        events,
    }
}

/// The bytes [`decode`] reads back as `stream` (fields out of range are reduced first).
pub fn encode(stream: &Stream) -> Vec<u8> {
    let mut out = vec![
        u8::from(stream.isolated),
        stream.max_samples,
        stream.origin_ms,
    ];
    for event in &stream.events {
        match event {
            Event::Idle { scale, dt } => out.extend([(scale & 3) << 2, *dt]),
            Event::Stack { scale, dt, frames } => {
                let n = frames.len().min(15);
                out.extend([1 | ((scale & 3) << 2), *dt, n as u8]);
                for f in &frames[..n] {
                    out.extend([
                        f.realm & 3
                            | (u8::from(f.hidden) << 2)
                            | ((f.kind & 7) << 3)
                            | ((f.name & 3) << 6),
                        (f.script & 7) | ((f.line & 31) << 3),
                        f.column,
                    ]);
                }
            }
            Event::Again {
                scale,
                dt,
                index,
                copy,
            } => out.extend([(2 + u8::from(*copy)) | ((scale & 3) << 2), *dt, *index]),
        }
    }
    out
}

fn raw_frame(f: &Frame) -> RawFrame {
    let realm = match f.realm {
        0 | 1 => MINE,
        r => OTHERS[usize::from(r - 2)],
    };
    let script = (f.kind != 0 && f.kind != 5).then_some(ScriptId(u32::from(f.script)));
    // The host marks every frame of a muted script hidden (`ScriptRegistry::lookup`).
    let hidden = f.hidden || script.is_some_and(|s| SCRIPTS.get(s.0 as usize).is_some_and(|s| s.5));
    let (line, column) = (u32::from(f.line), u32::from(f.column));
    let name = if f.realm >= 2 {
        OTHER_REALM_NAME
    } else if hidden {
        HIDDEN_NAME
    } else {
        NAMES[usize::from(f.name) % NAMES.len()]
    };
    let site = match f.kind {
        0 | 1 => FrameSite::Resolved {
            name: name.into(),
            line: (f.kind == 1).then_some(line),
            column: (f.kind == 1).then_some(column),
        },
        3 => FrameSite::Definition { line, column },
        4 => FrameSite::TopLevel,
        _ => FrameSite::Position { line, column },
    };
    RawFrame {
        realm,
        script,
        hidden,
        site,
    }
}

/// What the trace must show for a raw frame: `None` when it is filtered out or dropped.
fn kept(frame: &RawFrame, symbolizer: &dyn Symbolizer) -> Option<FrameInfo> {
    if frame.realm != MINE || frame.hidden {
        return None;
    }
    let resource = frame.script.and_then(|s| symbolizer.resource(s));
    match &frame.site {
        FrameSite::Resolved { name, line, column } => Some(FrameInfo {
            name: name.to_string(),
            resource,
            line: *line,
            column: *column,
        }),
        site => {
            let s = frame.script?;
            let r = match *site {
                FrameSite::Position { line, column } => symbolizer.resolve(s, line, column),
                FrameSite::Definition { line, column } => {
                    symbolizer.resolve_definition(s, line, column)
                }
                _ => symbolizer.resolve_top_level(s),
            }?;
            Some(FrameInfo {
                name: r.name,
                resource,
                line: Some(r.line),
                column: Some(r.column),
            })
        }
    }
}

/// The input is a sample stream (see [`decode`]).
pub fn trace_builder(data: &[u8]) {
    check_stream(&decode(data));
}

/// Records `stream`, builds its trace, and checks the trace.
pub fn check_stream(stream: &Stream) {
    let symbolizer = registry();
    let resolution = if stream.isolated {
        Resolution::Isolated
    } else {
        Resolution::Coarse
    };
    let max = match stream.max_samples {
        0 => u32::MAX,
        n => u32::from(n),
    };
    let origin: Nanos = Nanos::from(stream.origin_ms) * 1_000_000;
    // Markers: all of them for an isolated stream, none that this engine makes otherwise.
    let markers = MarkerSet::for_context(true, stream.isolated);
    let mut rec = Recorder::new(MINE, origin, resolution, max).with_markers(markers);
    let mut pool: Vec<RawStack> = Vec::new();
    let mut now: Nanos = 0;
    // Per stored sample: its time and the frames the trace must show for it.
    let mut want: Vec<(f64, Vec<FrameInfo>, Option<ProfilerMarker>)> = Vec::new();
    for event in &stream.events {
        let (scale, dt, stack) = match event {
            Event::Idle { scale, dt } => (scale, dt, None),
            Event::Stack { scale, dt, frames } => {
                let stack: RawStack = frames.iter().map(raw_frame).collect();
                pool.push(stack.clone());
                (scale, dt, Some(stack))
            }
            Event::Again {
                scale,
                dt,
                index,
                copy,
            } => {
                let stack = (!pool.is_empty()).then(|| {
                    let s = &pool[usize::from(*index) % pool.len()];
                    if *copy {
                        RawStack::from(s.to_vec())
                    } else {
                        s.clone()
                    }
                });
                (scale, dt, stack)
            }
        };
        now += SCALES[usize::from(scale & 3)] * Nanos::from(*dt);
        let full = rec.is_full();
        // The agent's state, from the input: one of the markers, or none.
        let marker = ProfilerMarker::ALL.get(usize::from(*dt) % 7).copied();
        let added = rec.add(now, stack.as_ref(), marker);
        assert_eq!(added == Added::Full, full, "Full exactly when full");
        if added == Added::Stored {
            let frames = stack
                .iter()
                .flat_map(|s| s.iter())
                .filter_map(|f| kept(f, symbolizer))
                .collect();
            want.push((
                resolution.relative_ms(now, origin),
                frames,
                markers.filter(marker),
            ));
        }
        assert_eq!(rec.len(), want.len());
        assert!(
            rec.len() <= max as usize,
            "never more samples than the buffer holds"
        );
    }
    let trace = rec.build(symbolizer);
    check_trace(&trace);
    assert_eq!(trace.samples.len(), want.len());
    let mut last = 0.0;
    for (sample, (time, frames, marker)) in trace.samples.iter().zip(&want) {
        assert_eq!(sample.timestamp, *time);
        assert_eq!(sample.marker, *marker, "the exposed marker of its time");
        assert!(sample.timestamp >= last, "timestamps never decrease");
        last = sample.timestamp;
        let got = trace
            .sample_frames(sample)
            .expect("valid IDs, parents first");
        assert_eq!(&got, frames, "the sample's kept frames, outermost first");
        assert_eq!(sample.stack_id.is_none(), frames.is_empty());
    }
}

/// Invariants of any trace: IDs in range, parents before children (so no cycles), no
/// duplicates, every entry used, nothing of another realm or hidden, and JSON that reads
/// back as the same trace.
fn check_trace(trace: &ProfilerTrace) {
    let (nf, ns, nr) = (
        trace.frames.len() as u64,
        trace.stacks.len() as u64,
        trace.resources.len() as u64,
    );
    for (i, stack) in trace.stacks.iter().enumerate() {
        assert!(stack.frame_id < nf, "stack {i}: frame {}", stack.frame_id);
        if let Some(p) = stack.parent_id {
            assert!(p < i as u64, "stack {i}'s parent {p} does not come first");
        }
    }
    for frame in &trace.frames {
        assert!(frame.resource_id.is_none_or(|r| r < nr), "{frame:?}");
        assert!(
            frame.name != OTHER_REALM_NAME && frame.name != HIDDEN_NAME,
            "{frame:?}"
        );
        assert!(
            frame.name != "secret",
            "a muted script's function: {frame:?}"
        );
    }
    for sample in &trace.samples {
        assert!(sample.stack_id.is_none_or(|s| s < ns), "{sample:?}");
    }
    assert!(!trace.resources.iter().any(|r| r == MUTED_URL));
    let unique = |n: usize, set: usize, what: &str| assert_eq!(n, set, "duplicate {what}");
    unique(
        trace.frames.len(),
        trace.frames.iter().collect::<HashSet<_>>().len(),
        "frames",
    );
    unique(
        trace.stacks.len(),
        trace.stacks.iter().collect::<HashSet<_>>().len(),
        "stacks",
    );
    unique(
        trace.resources.len(),
        trace.resources.iter().collect::<HashSet<_>>().len(),
        "resources",
    );
    // Every entry is used: a stack by a sample or as a parent, a frame by a stack, a
    // resource by a frame.
    let used: HashSet<u64> = trace
        .stacks
        .iter()
        .filter_map(|s| s.parent_id)
        .chain(trace.samples.iter().filter_map(|s| s.stack_id))
        .collect();
    assert_eq!(used.len() as u64, ns, "unused stacks");
    let frames: HashSet<u64> = trace.stacks.iter().map(|s| s.frame_id).collect();
    assert_eq!(frames.len() as u64, nf, "unused frames");
    let resources: HashSet<u64> = trace.frames.iter().filter_map(|f| f.resource_id).collect();
    assert_eq!(resources.len() as u64, nr, "unused resources");

    let json = trace.to_json();
    assert!(
        !json.contains("null"),
        "optional members are absent, never null"
    );
    let back: ProfilerTrace = serde_json::from_str(&json).expect("the JSON reads back");
    assert_eq!(back.frames, trace.frames);
    assert_eq!(back.stacks, trace.stacks);
    assert_eq!(back.resources, trace.resources);
    assert_eq!(back.samples.len(), trace.samples.len());
    for (b, s) in back.samples.iter().zip(&trace.samples) {
        assert_eq!(b.stack_id, s.stack_id);
        assert!((b.timestamp - s.timestamp).abs() <= s.timestamp * 1e-15);
    }
}
