//! The fuzz targets' bodies (fuzz/targets/fuzz_targets/intake_*.rs), also replayed over
//! fuzz/corpus by this crate's tests. Each decodes the input as its intake would and checks
//! that it never panics, that it is deterministic, and that what it accepts keeps the
//! spec's invariants and survives the write-ahead log's round trip (record.rs). For
//! `POST /v1/profiles` it also checks that the fast path (fast.rs) agrees with serde.

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use crate::decode::{self, Reject, Request};
use crate::model::Ingested;

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
    match result {
        Ok(traces) => {
            assert!(!traces.is_empty());
            for t in traces {
                jsprof_export::check(&t.trace).expect("an accepted trace keeps the invariants");
            }
            let mut record = Vec::new();
            crate::record::encode(traces, &mut record);
            let back = crate::record::decode(&record).expect("the log's record reads back");
            // Bit for bit (NaN is not a JSON number, so `==` on the timestamps holds).
            assert_eq!(&back, traces);
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
        accepted(&a);
    }
    // Wherever the fast path answers, serde reads the same.
    if let Some((meta, trace)) = crate::fast::envelope(data) {
        let (m, t) = decode::parse_body(data).expect("serde accepts what the fast path does");
        assert_eq!(m, meta);
        assert_eq!(t, vec![trace]);
    }
}

/// Datadog's upload: the input's first line is the boundary, the rest the body.
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
        format!("{:?}", now(decode::datadog(&req, body)))
    );
    accepted(&a);
}

/// A Sentry envelope.
pub fn intake_sentry(data: &[u8]) {
    let req = request(None, None);
    let a = decode::sentry(&req, data).map(|(_, t)| t);
    assert_eq!(
        format!("{a:?}"),
        format!("{:?}", decode::sentry(&req, data).map(|(_, t)| t))
    );
    accepted(&a);
}
