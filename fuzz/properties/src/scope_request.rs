//! The profiler service's request lines (`jsprof --profiler-service`), which any local
//! program (and, through a `fetch` POST, any web page) can send: the decoder, then
//! `GetEvents`' selection and reduction on a fixed session, never panic.

use std::time::Instant;

use jsprof_scope::protocol::{decode, Command, Response, Status};
use jsprof_scope::record::{FrameInfo, Recording};
use jsprof_scope::timeline::{post_process, Mode};
use jsprof_scope::{Details, EvalKind, RawEvent};

/// The input is one line a client sent.
pub fn scope_request(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let decoded = decode(&text);
    assert_eq!(decoded, decode(&text), "deterministic: {text:?}");
    let value: Option<serde_json::Value> = serde_json::from_str(&text).ok();
    let has_command = value
        .as_ref()
        .and_then(|v| v.as_object())
        .is_some_and(|o| o.contains_key("command"));
    match decoded {
        Err(rejected) => {
            // Only a JSON object with a command is a request (a connection that opens with
            // anything else is closed unanswered).
            assert_eq!(rejected.is_request, has_command, "{text:?}");
            let line =
                Response::error(rejected.tag, Status::BadRequest, rejected.message).to_line();
            let back: serde_json::Value = serde_json::from_str(&line).expect("a response is JSON");
            assert_eq!(back["status"], "BAD_REQUEST");
        }
        Ok(request) => {
            assert!(has_command);
            let tag = value.as_ref().and_then(|v| v["tag"].as_u64());
            assert_eq!(Some(request.tag), tag);
            if let Command::GetEvents { query, .. } = request.command {
                let timelines = post_process(&session());
                for t in &timelines {
                    if let Ok(events) = t.select(&query, Some(&[])) {
                        let hits: u32 = events.iter().map(|e| e.hits).sum();
                        assert!(hits as usize <= t.events.len());
                        if query.mode == Some(Mode::ReduceAll) {
                            assert!(events.len() <= 1);
                        }
                        for e in &events {
                            assert!(e.aggregated_time >= e.time - 1e-9 || e.hits > 1);
                        }
                    }
                }
            }
        }
    }
}

/// A small session: two frames, nested evaluations, a compilation, a load.
fn session() -> Recording {
    let eval = |kind| Details::ThreadEvaluation {
        kind,
        event_type: None,
        script: None,
        function: None,
    };
    let event = |id, parent, frame, start, end, details| RawEvent {
        id,
        parent,
        frame,
        start,
        end: Some(end),
        overhead: 10,
        details,
    };
    Recording {
        epoch: Instant::now(),
        epoch_nanos: 0,
        duration: 50_000_000,
        events: vec![
            event(1, 0, 1, 0, 9_000_000, eval(EvalKind::Inline)),
            event(
                2,
                1,
                1,
                1_000_000,
                2_000_000,
                Details::ScriptCompilation {
                    url: None,
                    script_kind: jsprof_scope::ScriptKind::Classic,
                },
            ),
            event(3, 1, 1, 3_000_000, 8_000_000, eval(EvalKind::Microtask)),
            event(4, 0, 2, 10_000_000, 12_000_000, eval(EvalKind::Timeout)),
            event(
                5,
                0,
                1,
                20_000_000,
                30_000_000,
                Details::Process {
                    url: "https://a.test/".into(),
                    status: 200,
                    bytes: 3,
                },
            ),
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
                url: "https://a.test/f".into(),
            },
        ],
    }
}
