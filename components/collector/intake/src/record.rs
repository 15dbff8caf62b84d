//! The write-ahead log's record payload: the traces of one request in a compact binary form.
//!
//! JSON was the first payload, and costs what the intake already paid once: serialising a
//! 500-sample trace again took about as long as parsing it, and compaction parsed it a third
//! time. This form writes integers as LEB128 varints, `f64`s as 8 bytes little-endian and
//! strings as a length and their UTF-8 bytes, in the model's field order:
//!
//! ```text
//! payload  = 0x01 (version) · varint(count) · ingested*
//! ingested = str(project) · u8(source) · f64(received) · meta · trace
//! meta     = opt_str(page_url) · opt_str(release) · opt_str(user_agent) · opt_str(session)
//!            · opt_f64(time_origin) · varint(n) · (str(key) · str(value))*n
//! trace    = varint(n) · str(resource)*n
//!            · varint(n) · (str(name) · opt(resource_id) · opt(line) · opt(column))*n
//!            · varint(n) · (varint(frame_id) · opt(parent_id))*n
//!            · varint(n) · (f64(timestamp) · opt(stack_id) · u8(marker))*n
//! opt(x)   = 0 (none) | 1 · x
//! ```
//!
//! A payload that begins with `[` is the earlier JSON (a log written by an older collector
//! is still read). Decoding never panics: the record's CRC guards the log against torn
//! writes, and anything else malformed is an error.

use std::collections::BTreeMap;

use jsprof_profiler::{
    ProfilerFrame, ProfilerMarker, ProfilerSample, ProfilerStack, ProfilerTrace,
};

use crate::model::{Ingested, Meta, Source};

const VERSION: u8 = 1;

/// The traces of one request as a log record's payload, and how many they are. The
/// intakes hand this to the log: jsprof's fast path (fast.rs) writes it straight from the
/// JSON, the other paths through [`Batch::of`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Batch {
    pub count: usize,
    pub payload: Vec<u8>,
}

impl Batch {
    pub fn of(traces: &[Ingested]) -> Batch {
        let mut payload = Vec::new();
        encode(traces, &mut payload);
        Batch {
            count: traces.len(),
            payload,
        }
    }

    /// The traces back (as compaction reads them).
    pub fn traces(&self) -> Result<Vec<Ingested>, String> {
        decode(&self.payload)
    }
}

/// Appends the payload of `traces` to `out`.
pub fn encode(traces: &[Ingested], out: &mut Vec<u8>) {
    head(out, traces.len());
    for t in traces {
        ingested_head(out, &t.project, t.source, t.received, &t.meta);
        trace(out, &t.trace);
    }
}

/// A payload's `trace`.
pub(crate) fn trace(out: &mut Vec<u8>, tr: &ProfilerTrace) {
    varint(out, tr.resources.len() as u64);
    for r in &tr.resources {
        string(out, r);
    }
    varint(out, tr.frames.len() as u64);
    for f in &tr.frames {
        frame(out, &f.name, f.resource_id, f.line, f.column);
    }
    varint(out, tr.stacks.len() as u64);
    for s in &tr.stacks {
        stack(out, s.frame_id, s.parent_id);
    }
    varint(out, tr.samples.len() as u64);
    for s in &tr.samples {
        sample(out, s.timestamp, s.stack_id, s.marker);
    }
}

/// A payload's version and trace count.
pub(crate) fn head(out: &mut Vec<u8>, count: usize) {
    out.push(VERSION);
    varint(out, count as u64);
}

/// An `ingested` up to its trace: the project, source, time received and metadata.
pub(crate) fn ingested_head(
    out: &mut Vec<u8>,
    project: &str,
    source: Source,
    received: f64,
    m: &Meta,
) {
    string(out, project);
    out.push(match source {
        Source::Jsprof => 0,
        Source::Datadog => 1,
        Source::Sentry => 2,
    });
    out.extend_from_slice(&received.to_le_bytes());
    for s in [&m.page_url, &m.release, &m.user_agent, &m.session] {
        option(out, s.as_deref(), string);
    }
    option(out, m.time_origin, |out, f| {
        out.extend_from_slice(&f.to_le_bytes())
    });
    varint(out, m.labels.len() as u64);
    for (k, v) in &m.labels {
        string(out, k);
        string(out, v);
    }
}

#[inline]
pub(crate) fn frame(
    out: &mut Vec<u8>,
    name: &str,
    resource_id: Option<u64>,
    line: Option<u64>,
    column: Option<u64>,
) {
    string(out, name);
    option(out, resource_id, varint);
    option(out, line, varint);
    option(out, column, varint);
}

#[inline]
pub(crate) fn stack(out: &mut Vec<u8>, frame_id: u64, parent_id: Option<u64>) {
    varint(out, frame_id);
    option(out, parent_id, varint);
}

#[inline]
pub(crate) fn sample(
    out: &mut Vec<u8>,
    timestamp: f64,
    stack_id: Option<u64>,
    marker: Option<ProfilerMarker>,
) {
    out.extend_from_slice(&timestamp.to_le_bytes());
    option(out, stack_id, varint);
    out.push(marker.map_or(0, marker_code));
}

/// The traces of one payload.
pub fn decode(payload: &[u8]) -> Result<Vec<Ingested>, String> {
    match payload.first() {
        Some(b'[') => serde_json::from_slice(payload).map_err(|e| e.to_string()),
        Some(&VERSION) => {
            let mut r = Reader {
                rest: &payload[1..],
            };
            let traces = r.list(|r| r.ingested())?;
            if !r.rest.is_empty() {
                return Err("bytes after the last trace".into());
            }
            Ok(traces)
        }
        Some(v) => Err(format!("unknown record version {v}")),
        None => Err("an empty record".into()),
    }
}

fn marker_code(m: ProfilerMarker) -> u8 {
    match m {
        ProfilerMarker::Script => 1,
        ProfilerMarker::Gc => 2,
        ProfilerMarker::Style => 3,
        ProfilerMarker::Layout => 4,
        ProfilerMarker::Paint => 5,
        ProfilerMarker::Other => 6,
    }
}

#[inline]
pub(crate) fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

#[inline]
pub(crate) fn string(out: &mut Vec<u8>, s: &str) {
    varint(out, s.len() as u64);
    out.extend_from_slice(s.as_bytes());
}

#[inline]
fn option<T>(out: &mut Vec<u8>, v: Option<T>, write: impl FnOnce(&mut Vec<u8>, T)) {
    match v {
        None => out.push(0),
        Some(v) => {
            out.push(1);
            write(out, v);
        }
    }
}

struct Reader<'a> {
    rest: &'a [u8],
}

impl Reader<'_> {
    fn bytes(&mut self, n: usize) -> Result<&[u8], String> {
        if self.rest.len() < n {
            return Err("a record ends early".into());
        }
        let (head, rest) = self.rest.split_at(n);
        self.rest = rest;
        Ok(head)
    }

    fn u8(&mut self) -> Result<u8, String> {
        Ok(self.bytes(1)?[0])
    }

    fn f64(&mut self) -> Result<f64, String> {
        let b = self.bytes(8)?;
        Ok(f64::from_le_bytes(b.try_into().expect("8 bytes")))
    }

    fn varint(&mut self) -> Result<u64, String> {
        let mut v: u64 = 0;
        for shift in (0..64).step_by(7) {
            let b = self.u8()?;
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err("a varint longer than 64 bits".into())
    }

    /// A count of items that each take at least one byte: never more than what is left, so
    /// that a corrupt count cannot make a huge allocation.
    fn count(&mut self) -> Result<usize, String> {
        let n = self.varint()?;
        if n > self.rest.len() as u64 {
            return Err(format!("a count of {n} past the record's end"));
        }
        Ok(n as usize)
    }

    fn list<T>(
        &mut self,
        mut item: impl FnMut(&mut Self) -> Result<T, String>,
    ) -> Result<Vec<T>, String> {
        let n = self.count()?;
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            out.push(item(self)?);
        }
        Ok(out)
    }

    fn string(&mut self) -> Result<String, String> {
        let n = self.count()?;
        let b = self.bytes(n)?;
        std::str::from_utf8(b)
            .map(str::to_owned)
            .map_err(|e| format!("a string is not UTF-8: {e}"))
    }

    fn option<T>(
        &mut self,
        read: impl FnOnce(&mut Self) -> Result<T, String>,
    ) -> Result<Option<T>, String> {
        match self.u8()? {
            0 => Ok(None),
            1 => read(self).map(Some),
            t => Err(format!("an option tagged {t}")),
        }
    }

    fn ingested(&mut self) -> Result<Ingested, String> {
        let project = self.string()?;
        let source = match self.u8()? {
            0 => Source::Jsprof,
            1 => Source::Datadog,
            2 => Source::Sentry,
            s => return Err(format!("unknown source {s}")),
        };
        let received = self.f64()?;
        let page_url = self.option(Self::string)?;
        let release = self.option(Self::string)?;
        let user_agent = self.option(Self::string)?;
        let session = self.option(Self::string)?;
        let time_origin = self.option(Self::f64)?;
        let labels: BTreeMap<String, String> = self
            .list(|r| Ok((r.string()?, r.string()?)))?
            .into_iter()
            .collect();
        let resources = self.list(Self::string)?;
        let frames = self.list(|r| {
            Ok(ProfilerFrame {
                name: r.string()?,
                resource_id: r.option(Self::varint)?,
                line: r.option(Self::varint)?,
                column: r.option(Self::varint)?,
            })
        })?;
        let stacks = self.list(|r| {
            Ok(ProfilerStack {
                frame_id: r.varint()?,
                parent_id: r.option(Self::varint)?,
            })
        })?;
        let samples = self.list(|r| {
            let timestamp = r.f64()?;
            let stack_id = r.option(Self::varint)?;
            let marker = match r.u8()? {
                0 => None,
                1 => Some(ProfilerMarker::Script),
                2 => Some(ProfilerMarker::Gc),
                3 => Some(ProfilerMarker::Style),
                4 => Some(ProfilerMarker::Layout),
                5 => Some(ProfilerMarker::Paint),
                6 => Some(ProfilerMarker::Other),
                m => return Err(format!("unknown marker {m}")),
            };
            Ok(ProfilerSample {
                marker,
                stack_id,
                timestamp,
            })
        })?;
        Ok(Ingested {
            project,
            source,
            received,
            meta: Meta {
                page_url,
                release,
                user_agent,
                session,
                time_origin,
                labels,
            },
            trace: ProfilerTrace {
                frames,
                resources,
                samples,
                stacks,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jsprof_trace_fixtures::{frame, sample, stacks};

    fn ingested() -> Vec<Ingested> {
        let mut labels = BTreeMap::new();
        labels.insert("view".to_owned(), "/cart".to_owned());
        vec![
            Ingested {
                project: "shop".into(),
                source: Source::Datadog,
                received: 1_795_651_200_123.5,
                meta: Meta {
                    page_url: Some("https://shop.example/cart".into()),
                    release: Some("1.2.3".into()),
                    user_agent: None,
                    session: Some("s1".into()),
                    time_origin: Some(1_795_651_200_000.25),
                    labels,
                },
                trace: ProfilerTrace {
                    resources: vec!["https://shop.example/app.js".into()],
                    frames: vec![
                        frame("main", Some(0), Some(1), Some(u64::MAX)),
                        frame("ünïcode", None, None, None),
                    ],
                    stacks: stacks(&[None, Some(0)]),
                    samples: vec![
                        ProfilerSample {
                            marker: Some(ProfilerMarker::Gc),
                            ..sample(10.125, Some(1))
                        },
                        sample(20.0, None),
                    ],
                },
            },
            Ingested {
                project: "default".into(),
                source: Source::Sentry,
                received: 0.0,
                meta: Meta::default(),
                trace: ProfilerTrace::default(),
            },
        ]
    }

    #[test]
    fn round_trips() {
        let mut out = Vec::new();
        encode(&ingested(), &mut out);
        assert_eq!(decode(&out).unwrap(), ingested());
    }

    #[test]
    fn reads_the_earlier_json_records() {
        let json = serde_json::to_vec(&ingested()).unwrap();
        assert_eq!(decode(&json).unwrap(), ingested());
    }

    #[test]
    fn every_truncation_and_a_bad_tag_is_an_error() {
        let mut out = Vec::new();
        encode(&ingested(), &mut out);
        for n in 0..out.len() {
            assert!(decode(&out[..n]).is_err(), "{n} bytes decoded");
        }
        let mut longer = out.clone();
        longer.push(0);
        assert!(decode(&longer).is_err());
        // The first trace's source byte, after the version, the count and "shop".
        let mut bad = out.clone();
        bad[1 + 1 + 1 + 4] = 9;
        assert_eq!(decode(&bad).unwrap_err(), "unknown source 9");
    }
}
