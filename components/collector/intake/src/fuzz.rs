//! The fuzz targets' bodies (fuzz/targets/fuzz_targets/intake_*.rs), also replayed over
//! fuzz/corpus by this crate's tests. Each decodes the input as its intake would and checks
//! that it never panics, that it is deterministic, and that what it accepts keeps the
//! spec's invariants and survives the write-ahead log's round trip (record.rs). For
//! `POST /v1/profiles` it also checks that the fast path (fast.rs) agrees with serde.

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use crate::decode::{self, Reject, Request};
use crate::model::{Contents, Ingested};
use crate::record::Batch;

fn request(content_type: Option<String>, encoding: Option<&str>) -> Request {
    Request {
        project: "default".into(),
        received: 1.0,
        content_encoding: encoding.map(str::to_owned),
        content_type,
        user_agent: Some("fuzz".into()),
        referer: None,
        max_bytes: 1 << 20,
    }
}

/// The decoders' futures never wait on anything (the body is all there): one poll ends them.
fn now<T>(f: impl Future<Output = T>) -> T {
    let mut f = pin!(f);
    match f.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(v) => v,
        Poll::Pending => panic!("a decoder waited on a body that is all there"),
    }
}

fn accepted(result: &Result<Vec<Ingested>, Reject>) {
    if let Ok(traces) = result {
        assert!(!traces.is_empty());
    }
    kept(&result.clone().map(|traces| Contents {
        traces,
        observed: Vec::new(),
    }));
}

/// What a decoder kept: traces that keep the spec's invariants, events with finite times,
/// and a log record that reads back bit for bit; or a 4xx.
fn kept(result: &Result<Contents, Reject>) {
    match result {
        Ok(c) => {
            for t in &c.traces {
                jsprof_export::check(&t.trace).expect("an accepted trace keeps the invariants");
            }
            let events = c.traces.iter().flat_map(|t| &t.events);
            for e in events.chain(c.observed.iter().flat_map(|o| &o.events)) {
                assert!(e.start_ms.is_finite() && e.duration_ms.is_finite(), "{e:?}");
                assert!(e.duration_ms >= 0.0, "{e:?}");
            }
            let batch = Batch::with(&c.traces, &c.observed);
            let back = batch.contents().expect("the log's record reads back");
            // Bit for bit (NaN is not a JSON number, so `==` on the timestamps holds).
            assert_eq!(&back, c);
        }
        Err(r) => assert!((400..500).contains(&r.status), "{r}"),
    }
}

/// `POST /v1/profiles`: the input as the body, identity, then gzip and deflate.
pub fn intake_jsprof(data: &[u8]) {
    for enc in [None, Some("gzip"), Some("deflate")] {
        let req = request(None, enc);
        let a = decode::jsprof(&req, data);
        assert_eq!(
            format!("{a:?}"),
            format!("{:?}", decode::jsprof(&req, data))
        );
        // The record reads back into traces that encode to the same bytes.
        let traces = a.map(|batch| {
            let contents = batch.contents().expect("the log's record reads back");
            assert_eq!(contents.traces.len(), batch.count);
            assert!(contents.observed.is_empty());
            assert_eq!(Batch::of(&contents.traces), batch);
            contents.traces
        });
        accepted(&traces);
    }
    fast_agrees(data);
}

/// Whether the fast path (fast.rs) reads `json`; where it does, serde reads the same
/// metadata and one trace that keeps the invariants and that the log records in the same
/// bytes.
pub fn fast_agrees(json: &[u8]) -> bool {
    let Some((meta, entries, trace)) = crate::fast::envelope(json) else {
        return false;
    };
    let (m, e, t) = decode::parse_body(json).expect("serde accepts what the fast path does");
    assert_eq!(m, meta);
    assert_eq!(e, entries);
    assert_eq!(t.len(), 1);
    jsprof_export::check(&t[0]).expect("the fast path checks the invariants");
    let (mut fast, mut serde) = (Vec::new(), Vec::new());
    trace.write(&mut fast);
    crate::record::trace(&mut serde, &t[0]);
    assert_eq!(fast, serde);
    true
}

/// Datadog's upload: the input's first line is the boundary, the rest the body. The same
/// body is also a RUM batch, as sent and deflated.
pub fn intake_datadog(data: &[u8]) {
    let split = data.iter().position(|&b| b == b'\n').unwrap_or(data.len());
    let boundary = String::from_utf8_lossy(&data[..split]).into_owned();
    let body = bytes::Bytes::copy_from_slice(data.get(split + 1..).unwrap_or_default());
    let req = request(
        Some(format!("multipart/form-data; boundary={boundary}")),
        None,
    );
    let a = now(decode::datadog(&req, body.clone()));
    assert_eq!(
        format!("{a:?}"),
        format!("{:?}", now(decode::datadog(&req, body.clone())))
    );
    accepted(&a);
    for deflated in [false, true] {
        let rum = |b: &[u8]| {
            decode::datadog_rum(&req, b, deflated).map(|observed| Contents {
                traces: Vec::new(),
                observed,
            })
        };
        let a = rum(&body);
        assert_eq!(format!("{a:?}"), format!("{:?}", rum(&body)));
        kept(&a);
    }
}

/// A Sentry envelope.
pub fn intake_sentry(data: &[u8]) {
    let req = request(None, None);
    let a = decode::sentry(&req, data).map(|s| s.contents);
    assert_eq!(
        format!("{a:?}"),
        format!("{:?}", decode::sentry(&req, data).map(|s| s.contents))
    );
    kept(&a);
}
