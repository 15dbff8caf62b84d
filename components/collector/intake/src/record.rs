//! The write-ahead log's record payload: the traces of one request in a compact binary form.
//!
//! JSON was the first payload, and costs what the intake already paid once: serialising a
//! 500-sample trace again took about as long as parsing it, and compaction parsed it a third
//! time. This form writes integers as LEB128 varints, `f64`s as 8 bytes little-endian and
//! strings as a length and their UTF-8 bytes, in the model's field order:
//!
//! ```text
//! payload  = 0x03 (version) · varint(count) · ingested* · varint(m) · observed*m
//! ingested = str(project) · u8(source) · f64(received) · meta · trace · events
//! meta     = opt_str(page_url) · opt_str(release) · opt_str(user_agent) · opt_str(session)
//!            · opt_f64(time_origin) · varint(n) · (str(key) · str(value))*n
//!            · opt_str(view_id) · varint(n) · (str(script_url) · str(debug_id))*n
//! trace    = varint(n) · str(resource)*n
//!            · varint(n) · (str(name) · opt(resource_id) · opt(line) · opt(column))*n
//!            · varint(n) · (varint(frame_id) · opt(parent_id))*n
//!            · varint(n) · (f64(timestamp) · opt(stack_id) · u8(marker))*n
//! events   = varint(n) · (u8(kind) · opt_str(op) · opt_str(name) · opt_str(id)
//!            · opt_str(session) · opt_str(view_id) · opt_str(url) · f64(start)
//!            · f64(duration))*n
//! observed = str(project) · u8(source) · f64(received) · events
//! opt(x)   = 0 (none) | 1 · x
//! ```
//!
//! Version 1 (issue 27) had no `events`, no `view_id` and no `observed`, version 2 no
//! debug ids (issue 37, item 2): both are still read, as is a payload that begins with `[`, the earlier JSON (a log written by an older
//! collector). Decoding never panics: the record's CRC guards the log against torn writes,
//! and anything else malformed is an error.

use std::collections::BTreeMap;

use jsprof_profiler::{
    ProfilerFrame, ProfilerMarker, ProfilerSample, ProfilerStack, ProfilerTrace,
};

use crate::model::{Contents, Event, Ingested, Kind, Meta, Observed, Source};

/// The version written. Versions 1 and 2 are still read.
const VERSION: u8 = 3;

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
        Batch::with(traces, &[])
    }

    /// Traces, and events that came without a trace.
    pub fn with(traces: &[Ingested], observed: &[Observed]) -> Batch {
        let mut payload = Vec::new();
        encode_all(traces, observed, &mut payload);
        Batch {
            count: traces.len(),
            payload,
        }
    }

    /// The traces back (as compaction reads them).
    pub fn traces(&self) -> Result<Vec<Ingested>, String> {
        decode(&self.payload).map(|c| c.traces)
    }

    /// Everything back: the traces and the events without a trace.
    pub fn contents(&self) -> Result<Contents, String> {
        decode(&self.payload)
    }
}

/// Appends the payload of `traces` to `out`.
pub fn encode(traces: &[Ingested], out: &mut Vec<u8>) {
    encode_all(traces, &[], out)
}

/// Appends the payload of `traces` and `observed` to `out`.
pub fn encode_all(traces: &[Ingested], observed: &[Observed], out: &mut Vec<u8>) {
    head(out, traces.len());
    for t in traces {
        ingested_head(out, &t.project, t.source, t.received, &t.meta);
        trace(out, &t.trace);
        events(out, &t.events);
    }
    observed_tail(out, observed);
}

/// A payload's `observed` list, its last part.
pub(crate) fn observed_tail(out: &mut Vec<u8>, observed: &[Observed]) {
    varint(out, observed.len() as u64);
    for o in observed {
        string(out, &o.project);
        out.push(source_code(o.source));
        out.extend_from_slice(&o.received.to_le_bytes());
        events(out, &o.events);
    }
}

/// An `ingested`'s or an `observed`'s events.
pub(crate) fn events(out: &mut Vec<u8>, events: &[Event]) {
    varint(out, events.len() as u64);
    for e in events {
        out.push(e.kind.code());
        for s in [&e.op, &e.name, &e.id, &e.session, &e.view_id, &e.url] {
            option(out, s.as_deref(), string);
        }
        out.extend_from_slice(&e.start_ms.to_le_bytes());
        out.extend_from_slice(&e.duration_ms.to_le_bytes());
    }
}

fn source_code(source: Source) -> u8 {
    match source {
        Source::Jsprof => 0,
        Source::Datadog => 1,
        Source::Sentry => 2,
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
    out.push(source_code(source));
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
    option(out, m.view_id.as_deref(), string);
    varint(out, m.debug_ids.len() as u64);
    for (url, id) in &m.debug_ids {
        string(out, url);
        string(out, id);
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

/// What one payload holds.
pub fn decode(payload: &[u8]) -> Result<Contents, String> {
    match payload.first() {
        Some(b'[') => serde_json::from_slice(payload)
            .map(|traces| Contents {
                traces,
                observed: Vec::new(),
            })
            .map_err(|e| e.to_string()),
        Some(&v @ (1 | 2 | VERSION)) => {
            let mut r = Reader {
                rest: &payload[1..],
                version: v,
            };
            let traces = r.list(|r| r.ingested())?;
            let observed = if v >= 2 {
                r.list(|r| r.observed())?
            } else {
                Vec::new()
            };
            if !r.rest.is_empty() {
                return Err("bytes after the last trace".into());
            }
            Ok(Contents { traces, observed })
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
    version: u8,
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

    fn source(&mut self) -> Result<Source, String> {
        Ok(match self.u8()? {
            0 => Source::Jsprof,
            1 => Source::Datadog,
            2 => Source::Sentry,
            s => return Err(format!("unknown source {s}")),
        })
    }

    fn events(&mut self) -> Result<Vec<Event>, String> {
        self.list(|r| {
            let code = r.u8()?;
            let kind = Kind::of_code(code).ok_or_else(|| format!("unknown event kind {code}"))?;
            Ok(Event {
                kind,
                op: r.option(Self::string)?,
                name: r.option(Self::string)?,
                id: r.option(Self::string)?,
                session: r.option(Self::string)?,
                view_id: r.option(Self::string)?,
                url: r.option(Self::string)?,
                start_ms: r.f64()?,
                duration_ms: r.f64()?,
            })
        })
    }

    fn observed(&mut self) -> Result<Observed, String> {
        Ok(Observed {
            project: self.string()?,
            source: self.source()?,
            received: self.f64()?,
            events: self.events()?,
        })
    }

    fn ingested(&mut self) -> Result<Ingested, String> {
        let project = self.string()?;
        let source = self.source()?;
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
        let view_id = if self.version >= 2 {
            self.option(Self::string)?
        } else {
            None
        };
        let debug_ids: BTreeMap<String, String> = if self.version >= 3 {
            self.list(|r| Ok((r.string()?, r.string()?)))?
                .into_iter()
                .collect()
        } else {
            BTreeMap::new()
        };
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
        let events = if self.version >= 2 {
            self.events()?
        } else {
            Vec::new()
        };
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
                view_id,
                debug_ids,
            },
            trace: ProfilerTrace {
                frames,
                resources,
                samples,
                stacks,
            },
            events,
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
                    view_id: Some("v1".into()),
                    debug_ids: [(
                        "https://shop.example/app.js".to_owned(),
                        "c3b6b7a0-1f7e-4b7e-9c2a-3f1d2e4a5b6c".to_owned(),
                    )]
                    .into(),
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
                events: vec![event(Kind::Loaf), event(Kind::Interaction)],
            },
            Ingested {
                project: "default".into(),
                source: Source::Sentry,
                received: 0.0,
                meta: Meta::default(),
                trace: ProfilerTrace::default(),
                events: Vec::new(),
            },
        ]
    }

    fn event(kind: Kind) -> Event {
        Event {
            kind,
            op: Some("long-animation-frame".into()),
            name: None,
            id: Some("e1".into()),
            session: Some("s1".into()),
            view_id: None,
            url: Some("https://shop.example/cart".into()),
            start_ms: 1_795_651_200_010.5,
            duration_ms: 120.25,
        }
    }

    fn observed() -> Vec<Observed> {
        vec![Observed {
            project: "shop".into(),
            source: Source::Sentry,
            received: 3.0,
            events: Kind::ALL.iter().map(|k| event(*k)).collect(),
        }]
    }

    #[test]
    fn round_trips() {
        let mut out = Vec::new();
        encode_all(&ingested(), &observed(), &mut out);
        let back = decode(&out).unwrap();
        assert_eq!(back.traces, ingested());
        assert_eq!(back.observed, observed());
    }

    #[test]
    fn reads_version_1() {
        // A version 1 record of the traces without their events and views.
        let mut old = ingested();
        for t in &mut old {
            t.events.clear();
            t.meta.view_id = None;
            t.meta.debug_ids.clear();
        }
        let mut out = vec![1];
        varint(&mut out, old.len() as u64);
        for t in &old {
            let mut head = Vec::new();
            ingested_head(&mut head, &t.project, t.source, t.received, &t.meta);
            // Version 1's meta ends with the labels: no view_id, no debug ids.
            head.truncate(head.len() - 2);
            out.extend_from_slice(&head);
            trace(&mut out, &t.trace);
        }
        assert_eq!(decode(&out).unwrap().traces, old);
    }

    /// The record main's collector (record version 1, 9ff1196) wrote for trace B of
    /// tests/fixtures/store-v1 (its README): read as it was written.
    #[test]
    fn reads_a_version_1_record_written_by_the_collector_of_before() {
        let segment = include_bytes!("../../tests/fixtures/store-v1/wal/000000000002.wal");
        let len = u32::from_le_bytes(segment[..4].try_into().unwrap()) as usize;
        let payload = &segment[8..8 + len];
        assert_eq!(payload[0], 1);
        let c = decode(payload).unwrap();
        assert!(c.observed.is_empty());
        let [t] = &c.traces[..] else {
            panic!("{:?}", c.traces)
        };
        assert_eq!((t.project.as_str(), t.source), ("default", Source::Jsprof));
        assert_eq!(t.meta.release.as_deref(), Some("2.0"));
        assert_eq!(t.meta.session.as_deref(), Some("s-2"));
        assert_eq!(t.meta.page_url.as_deref(), Some("https://shop.test/home"));
        assert_eq!(t.meta.time_origin, Some(1_795_651_260_000.0));
        assert_eq!((t.meta.view_id.as_deref(), t.events.len()), (None, 0));
        assert_eq!(t.trace.samples.len(), 24);
        assert_eq!(t.trace.frames[3].name, "paint");
        // Written again, it is a version 3 record that reads back the same.
        let mut out = Vec::new();
        encode_all(&c.traces, &[], &mut out);
        assert_eq!(out[0], VERSION);
        assert_eq!(decode(&out).unwrap().traces, c.traces);
    }

    #[test]
    fn reads_the_earlier_json_records() {
        let mut old = ingested();
        for t in &mut old {
            // Not in the JSON form.
            t.meta.view_id = None;
            t.meta.debug_ids.clear();
        }
        let json = serde_json::to_vec(&old).unwrap();
        assert_eq!(decode(&json).unwrap().traces, old);
    }

    #[test]
    fn every_truncation_and_a_bad_tag_is_an_error() {
        let mut out = Vec::new();
        encode_all(&ingested(), &observed(), &mut out);
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
