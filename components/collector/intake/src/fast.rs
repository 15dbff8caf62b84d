//! A fast path for the common `POST /v1/profiles` body: an envelope `{"trace": {...},
//! "pageUrl": ...}` as the field snippet sends it, read straight into the write-ahead log's
//! record (record.rs), with no `ProfilerTrace` built in between.
//!
//! serde_json spent most of the intake's time on a 500-sample trace matching object keys
//! (`"stackId"`, `"timestamp"`, `"frameId"`, `"parentId"` thousands of times) and checking
//! their UTF-8; building the trace, encoding its record and freeing it took the rest. This
//! parser reads the same JSON in one pass over the bytes, for exactly the shape the envelope
//! and the spec's dictionaries have, and writes each list in the record's form as it reads
//! it: no string is copied but into the record. Stacks and samples spelled as serde and
//! browsers write them (`{"frameId":N,"parentId":N}`) are read by matching those bytes
//! whole; any other spelling by the general object reader. The spec's invariants
//! (`jsprof_export::check`: ids in range, a stack's parent before it, finite timestamps)
//! are checked on the way.
//!
//! It is strict: the moment the input is anything else — a syntax error, a key with an
//! escape, a duplicate member, a type serde would refuse, nesting past `MAX_DEPTH` (64), a
//! broken invariant — it returns `None` and the request goes through the serde path
//! ([`crate::decode::parse_body`]), which gives the answer and the error message. So it
//! never accepts what serde refuses, and what it accepts it reads as serde does: numbers go
//! through serde_json's own parser (or an exact one with the same bits), strings with
//! escapes too. The fuzz target `intake_jsprof` checks on every input that the record it
//! writes is, byte for byte, the one record.rs encodes from serde's trace (`fuzz.rs`).

use std::borrow::Cow;
use std::collections::BTreeMap;

use jsprof_profiler::ProfilerMarker;

use crate::model::{Entry, Meta};
use crate::record;

/// How deep an unknown member may nest before the serde path takes over.
const MAX_DEPTH: u32 = 64;

/// The envelope's metadata, its entries and its trace, already in the log record's form, or
/// `None`: then the serde path decides. The entries (a few, beside thousands of samples) are
/// read by serde from their bytes.
pub fn envelope(json: &[u8]) -> Option<(Meta, Vec<Entry>, Trace)> {
    let mut p = Parser { b: json, i: 0 };
    let (mut trace, mut labels, mut entries) = (None, None, None);
    let (mut page_url, mut release, mut user_agent, mut session, mut time_origin) =
        (None, None, None, None, None);
    p.object(|p, key| match key {
        b"trace" => first(&mut trace, p.trace()),
        b"pageUrl" => p.optional(&mut page_url, Parser::string),
        b"release" => p.optional(&mut release, Parser::string),
        b"userAgent" => p.optional(&mut user_agent, Parser::string),
        b"session" => p.optional(&mut session, Parser::string),
        b"timeOrigin" => p.optional(&mut time_origin, Parser::f64),
        b"labels" => {
            let mut map = BTreeMap::new();
            let read = p.object(|p, k| {
                let k = std::str::from_utf8(k).ok()?.to_owned();
                // A repeated label: the last one wins, as in serde's map.
                map.insert(k, p.string()?);
                Some(())
            });
            first(&mut labels, read.map(|()| map))
        }
        b"entries" => {
            p.ws();
            let start = p.i;
            p.skip(0)?;
            let read = serde_json::from_slice::<Option<Vec<Entry>>>(&json[start..p.i]).ok();
            first(&mut entries, read)
        }
        _ => p.skip(0),
    })?;
    p.ws();
    if p.i != json.len() {
        return None;
    }
    let meta = Meta {
        page_url: page_url.flatten(),
        release: release.flatten(),
        user_agent: user_agent.flatten(),
        session: session.flatten(),
        time_origin: time_origin.flatten(),
        labels: labels.unwrap_or_default(),
        view_id: None,
        debug_ids: BTreeMap::new(),
    };
    Some((meta, entries.flatten().unwrap_or_default(), trace?))
}

/// A member's value into its slot, refused (the serde path then decides) when the member
/// came already or its value was not read: serde refuses a duplicate member.
fn first<T>(slot: &mut Option<T>, value: Option<T>) -> Option<()> {
    if slot.is_some() {
        return None;
    }
    *slot = Some(value?);
    Some(())
}

/// A JSON number (already checked by [`Parser::number`]) whose digits fit in 53 bits and
/// whose decimal exponent is within ±22: both the digits and the power of ten are exact
/// doubles, so one multiplication or division rounds once, correctly (Clinger's fast
/// path). serde_json computes these the same way (digits as f64, times or over a power of
/// ten), and a correctly rounding parser gives the same bits; `None` for every other number.
fn exact_f64(text: &[u8]) -> Option<f64> {
    const POW10: [f64; 23] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
        1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
    ];
    let (negative, text) = match text.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, text),
    };
    let (mut digits, mut exponent, mut count) = (0u64, 0i64, 0u32);
    let mut i = 0;
    let mut fraction = false;
    while let Some(&c) = text.get(i) {
        match c {
            b'0'..=b'9' => {
                count += 1;
                if count > 19 {
                    return None;
                }
                digits = digits * 10 + u64::from(c - b'0');
                if fraction {
                    exponent -= 1;
                }
            }
            b'.' => fraction = true,
            _ => break,
        }
        i += 1;
    }
    if let Some(b'e' | b'E') = text.get(i) {
        let sign = match text.get(i + 1) {
            Some(b'-') => -1,
            _ => 1,
        };
        let from = i + 1 + usize::from(matches!(text.get(i + 1), Some(b'+' | b'-')));
        let exp = text.get(from..)?;
        if exp.len() > 4 {
            return None;
        }
        let mut e = 0i64;
        for &c in exp {
            e = e * 10 + i64::from(c - b'0');
        }
        exponent += sign * e;
    }
    if digits > 1 << 53 || !(-22..=22).contains(&exponent) {
        return None;
    }
    let magnitude = if exponent >= 0 {
        digits as f64 * POW10[exponent as usize]
    } else {
        digits as f64 / POW10[(-exponent) as usize]
    };
    Some(if negative { -magnitude } else { magnitude })
}

struct Parser<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Parser<'a> {
    #[inline]
    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.b.get(self.i) {
            self.i += 1;
        }
    }

    #[inline]
    fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.b.get(self.i).copied()
    }

    #[inline]
    fn eat(&mut self, c: u8) -> Option<()> {
        (self.peek()? == c).then(|| self.i += 1)
    }

    fn literal(&mut self, word: &[u8]) -> Option<()> {
        self.ws();
        self.exactly(word)
    }

    /// A string's bytes between its quotes, and whether it has an escape.
    fn raw_string(&mut self) -> Option<(usize, usize, bool)> {
        self.eat(b'"')?;
        let start = self.i;
        let mut escaped = false;
        loop {
            match *self.b.get(self.i)? {
                b'"' => {
                    self.i += 1;
                    return Some((start, self.i - 1, escaped));
                }
                b'\\' => {
                    escaped = true;
                    self.i += 2;
                }
                // A control character must be escaped in JSON.
                0..=0x1f => return None,
                _ => self.i += 1,
            }
        }
    }

    /// A string, borrowed from the input when it has no escape.
    fn str(&mut self) -> Option<Cow<'a, str>> {
        let (start, end, escaped) = self.raw_string()?;
        if escaped {
            // Rare in traces: serde_json reads it (and refuses a bad escape).
            serde_json::from_slice(self.b.get(start - 1..=end)?)
                .ok()
                .map(Cow::Owned)
        } else {
            std::str::from_utf8(&self.b[start..end])
                .ok()
                .map(Cow::Borrowed)
        }
    }

    fn string(&mut self) -> Option<String> {
        self.str().map(Cow::into_owned)
    }

    /// An object's key and the colon after it. A key with an escape falls back; so does one
    /// that is not UTF-8, even one the model skips (serde refuses it).
    #[inline]
    fn key(&mut self) -> Option<&'a [u8]> {
        self.eat(b'"')?;
        let start = self.i;
        let rest = &self.b[start..];
        // The common key: printable ASCII without an escape, up to its closing quote.
        let len = rest
            .iter()
            .position(|&c| c == b'"' || c == b'\\' || !(0x20..0x80).contains(&c))?;
        let key = if rest[len] == b'"' {
            self.i += len + 1;
            &rest[..len]
        } else {
            self.i -= 1;
            let (start, end, escaped) = self.raw_string()?;
            if escaped {
                return None;
            }
            let key = &self.b[start..end];
            std::str::from_utf8(key).ok()?;
            key
        };
        self.eat(b':')?;
        Some(key)
    }

    /// A JSON number's span, and whether it is a non-negative integer.
    fn number(&mut self) -> Option<(usize, usize, bool)> {
        self.ws();
        let start = self.i;
        let digits = |p: &mut Self| {
            let from = p.i;
            while let Some(b'0'..=b'9') = p.b.get(p.i) {
                p.i += 1;
            }
            (p.i > from).then_some(())
        };
        let negative = self.b.get(self.i) == Some(&b'-');
        if negative {
            self.i += 1;
        }
        match self.b.get(self.i)? {
            b'0' => self.i += 1,
            b'1'..=b'9' => digits(self)?,
            _ => return None,
        }
        let mut integer = !negative;
        if self.b.get(self.i) == Some(&b'.') {
            integer = false;
            self.i += 1;
            digits(self)?;
        }
        if let Some(b'e' | b'E') = self.b.get(self.i) {
            integer = false;
            self.i += 1;
            if let Some(b'+' | b'-') = self.b.get(self.i) {
                self.i += 1;
            }
            digits(self)?;
        }
        Some((start, self.i, integer))
    }

    /// A non-negative integer, as serde reads a `u64`: digits without a leading zero, no
    /// fraction or exponent, no overflow (each of those falls back, where serde refuses).
    #[inline]
    fn u64(&mut self) -> Option<u64> {
        self.ws();
        let rest = &self.b[self.i..];
        let mut n: u64 = 0;
        let mut len = 0;
        while let Some(&c @ b'0'..=b'9') = rest.get(len) {
            n = n.checked_mul(10)?.checked_add(u64::from(c - b'0'))?;
            len += 1;
        }
        if len == 0 || (rest[0] == b'0' && len > 1) {
            return None;
        }
        if let Some(b'.' | b'e' | b'E') = rest.get(len) {
            return None;
        }
        self.i += len;
        Some(n)
    }

    fn f64(&mut self) -> Option<f64> {
        let (start, end, _) = self.number()?;
        let text = &self.b[start..end];
        // serde_json's own float parser where the exact one below does not apply, so that
        // every bit is as the serde path reads it.
        exact_f64(text).or_else(|| serde_json::from_slice(text).ok())
    }

    /// `null` as `None`, else the value.
    fn nullable<T>(&mut self, read: impl FnOnce(&mut Self) -> Option<T>) -> Option<Option<T>> {
        if self.peek()? == b'n' {
            self.literal(b"null")?;
            Some(None)
        } else {
            read(self).map(Some)
        }
    }

    /// An object, each member handed to `member` after its key.
    #[inline]
    fn object(&mut self, mut member: impl FnMut(&mut Self, &'a [u8]) -> Option<()>) -> Option<()> {
        self.eat(b'{')?;
        if self.peek()? == b'}' {
            self.i += 1;
            return Some(());
        }
        loop {
            let key = self.key()?;
            member(self, key)?;
            match self.peek()? {
                b',' => self.i += 1,
                b'}' => {
                    self.i += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    #[inline]
    fn array(&mut self, mut item: impl FnMut(&mut Self) -> Option<()>) -> Option<()> {
        self.eat(b'[')?;
        if self.peek()? == b']' {
            self.i += 1;
            return Some(());
        }
        loop {
            item(self)?;
            match self.peek()? {
                b',' => self.i += 1,
                b']' => {
                    self.i += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// Any value, checked and skipped: a member the model has no field for.
    fn skip(&mut self, depth: u32) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        match self.peek()? {
            b'"' => self.string().map(drop),
            b'{' => self.object(|p, _| p.skip(depth + 1)),
            b'[' => self.array(|p| p.skip(depth + 1)),
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'n' => self.literal(b"null"),
            _ => self.number().map(drop),
        }
    }

    /// <https://wicg.github.io/js-self-profiling/#the-profilertrace-dictionary>: every
    /// member required, as `ProfilerTrace`'s serde reads it. Each list is written in the
    /// record's form as it is read; the spec's invariants (`jsprof_export::check`) are
    /// checked on the way, those that need a list's length once all four are read.
    fn trace(&mut self) -> Option<Trace> {
        let (mut frames, mut resources, mut samples, mut stacks) = (None, None, None, None);
        // The largest id each list's items name in the list after them.
        let (mut resource_ids, mut frame_ids, mut stack_ids) = (Ids(None), Ids(None), Ids(None));
        self.object(|p, key| match key {
            b"frames" => first(
                &mut frames,
                p.section(|p, out, _| p.frame(out, &mut resource_ids)),
            ),
            b"resources" => first(
                &mut resources,
                p.section(|p, out, _| {
                    record::string(out, &p.str()?);
                    Some(())
                }),
            ),
            b"samples" => first(
                &mut samples,
                p.section(|p, out, _| p.sample(out, &mut stack_ids)),
            ),
            b"stacks" => first(
                &mut stacks,
                p.section(|p, out, i| p.stack(out, i, &mut frame_ids)),
            ),
            _ => p.skip(1),
        })?;
        let trace = Trace {
            resources: resources?,
            frames: frames?,
            stacks: stacks?,
            samples: samples?,
        };
        resource_ids.within(&trace.resources)?;
        frame_ids.within(&trace.frames)?;
        stack_ids.within(&trace.stacks)?;
        Some(trace)
    }

    /// A list, each item written by `item` (given its index).
    fn section(
        &mut self,
        mut item: impl FnMut(&mut Self, &mut Vec<u8>, u64) -> Option<()>,
    ) -> Option<Section> {
        let mut s = Section {
            count: 0,
            bytes: Vec::new(),
        };
        self.array(|p| {
            item(p, &mut s.bytes, s.count)?;
            s.count += 1;
            Some(())
        })?;
        Some(s)
    }

    /// An optional member's value (`null` as `None`), refused when the member came already.
    fn optional<T>(
        &mut self,
        slot: &mut Option<Option<T>>,
        read: impl FnOnce(&mut Self) -> Option<T>,
    ) -> Option<()> {
        let value = self.nullable(read);
        first(slot, value)
    }

    fn frame(&mut self, out: &mut Vec<u8>, resource_ids: &mut Ids) -> Option<()> {
        let (mut name, mut resource_id, mut line, mut column) = (None, None, None, None);
        self.object(|p, key| match key {
            b"name" => first(&mut name, p.str()),
            b"resourceId" => p.optional(&mut resource_id, Parser::u64),
            b"line" => p.optional(&mut line, Parser::u64),
            b"column" => p.optional(&mut column, Parser::u64),
            _ => p.skip(1),
        })?;
        let resource_id = resource_id.flatten();
        resource_ids.saw(resource_id);
        record::frame(out, &name?, resource_id, line.flatten(), column.flatten());
        Some(())
    }

    /// `word` at the position, with no whitespace before it: passed over, or `None` and
    /// nothing read.
    #[inline]
    fn exactly(&mut self, word: &[u8]) -> Option<()> {
        self.b[self.i..]
            .starts_with(word)
            .then(|| self.i += word.len())
    }

    /// `read`, or `None` with the position where it was (then the general reader reads the
    /// same bytes again).
    #[inline]
    fn or_back<T>(&mut self, read: impl FnOnce(&mut Self) -> Option<T>) -> Option<T> {
        let at = self.i;
        let value = read(self);
        if value.is_none() {
            self.i = at;
        }
        value
    }

    /// A stack as serde and browsers write one, `{"frameId":N}` or
    /// `{"frameId":N,"parentId":N|null}` without whitespace, read without matching keys
    /// (stacks are most of a trace's bytes).
    #[inline]
    fn compact_stack(&mut self) -> Option<(u64, Option<u64>)> {
        self.or_back(|p| {
            p.exactly(b"{\"frameId\":")?;
            let frame_id = p.u64()?;
            let parent_id = match p.exactly(b",\"parentId\":") {
                Some(()) => p.nullable(Parser::u64)?,
                None => None,
            };
            p.exactly(b"}")?;
            Some((frame_id, parent_id))
        })
    }

    /// A sample as serde and browsers write one: `"timestamp"` and `"stackId"` (either
    /// first, the stack's id or `null`, or absent), without whitespace.
    #[inline]
    fn compact_sample(&mut self) -> Option<(f64, Option<u64>)> {
        self.or_back(|p| {
            p.exactly(b"{\"")?;
            let read = if p.exactly(b"timestamp\":").is_some() {
                let timestamp = p.f64()?;
                let stack_id = match p.exactly(b",\"stackId\":") {
                    Some(()) => p.nullable(Parser::u64)?,
                    None => None,
                };
                (timestamp, stack_id)
            } else {
                p.exactly(b"stackId\":")?;
                let stack_id = p.nullable(Parser::u64)?;
                p.exactly(b",\"timestamp\":")?;
                (p.f64()?, stack_id)
            };
            p.exactly(b"}")?;
            Some(read)
        })
    }

    fn stack(&mut self, out: &mut Vec<u8>, index: u64, frame_ids: &mut Ids) -> Option<()> {
        let (frame_id, parent_id) = match self.compact_stack() {
            Some(read) => read,
            None => {
                let (mut frame_id, mut parent_id) = (None, None);
                self.object(|p, key| match key {
                    b"frameId" => first(&mut frame_id, p.u64()),
                    b"parentId" => p.optional(&mut parent_id, Parser::u64),
                    _ => p.skip(1),
                })?;
                (frame_id?, parent_id.flatten())
            }
        };
        // A stack's parent comes before it.
        if parent_id.is_some_and(|p| p >= index) {
            return None;
        }
        frame_ids.saw(Some(frame_id));
        record::stack(out, frame_id, parent_id);
        Some(())
    }

    fn sample(&mut self, out: &mut Vec<u8>, stack_ids: &mut Ids) -> Option<()> {
        if let Some((timestamp, stack_id)) = self.compact_sample() {
            return Self::sample_read(out, stack_ids, timestamp, stack_id, None);
        }
        let (mut timestamp, mut stack_id, mut marker) = (None, None, None);
        self.object(|p, key| match key {
            b"timestamp" => first(&mut timestamp, p.f64()),
            b"stackId" => p.optional(&mut stack_id, Parser::u64),
            b"marker" => p.optional(&mut marker, |p| {
                Some(match &*p.str()? {
                    "script" => ProfilerMarker::Script,
                    "gc" => ProfilerMarker::Gc,
                    "style" => ProfilerMarker::Style,
                    "layout" => ProfilerMarker::Layout,
                    "paint" => ProfilerMarker::Paint,
                    "other" => ProfilerMarker::Other,
                    _ => return None,
                })
            }),
            _ => p.skip(1),
        })?;
        Self::sample_read(
            out,
            stack_ids,
            timestamp?,
            stack_id.flatten(),
            marker.flatten(),
        )
    }

    #[inline]
    fn sample_read(
        out: &mut Vec<u8>,
        stack_ids: &mut Ids,
        timestamp: f64,
        stack_id: Option<u64>,
        marker: Option<ProfilerMarker>,
    ) -> Option<()> {
        if !timestamp.is_finite() {
            return None;
        }
        stack_ids.saw(stack_id);
        record::sample(out, timestamp, stack_id, marker);
        Some(())
    }
}

/// A trace as the log record writes it (record.rs: `trace`), its four lists each already
/// encoded.
#[derive(Debug)]
pub struct Trace {
    resources: Section,
    frames: Section,
    stacks: Section,
    samples: Section,
}

#[derive(Debug)]
struct Section {
    count: u64,
    bytes: Vec<u8>,
}

impl Trace {
    /// How many bytes [`Trace::write`] writes, at most.
    pub fn encoded_len(&self) -> usize {
        self.sections().map(|s| 10 + s.bytes.len()).sum()
    }

    fn sections(&self) -> impl Iterator<Item = &Section> {
        [&self.resources, &self.frames, &self.stacks, &self.samples].into_iter()
    }

    /// Appends the trace in the record's form (what `record::encode` writes for it).
    pub fn write(&self, out: &mut Vec<u8>) {
        for s in self.sections() {
            record::varint(out, s.count);
            out.extend_from_slice(&s.bytes);
        }
    }
}

/// The largest id a list named, for the check that it is below the length of the list it
/// names.
struct Ids(Option<u64>);

impl Ids {
    #[inline]
    fn saw(&mut self, id: Option<u64>) {
        if let Some(id) = id {
            self.0 = Some(self.0.map_or(id, |m| m.max(id)));
        }
    }

    fn within(&self, list: &Section) -> Option<()> {
        self.0.is_none_or(|m| m < list.count).then_some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::parse_body;

    /// The fast path agrees with serde wherever it answers.
    fn agrees(json: &str) -> bool {
        crate::fuzz::fast_agrees(json.as_bytes())
    }

    const TRACE: &str = r#"{"frames":[{"name":"f","resourceId":0,"line":3,"column":9},{"name":"g\u00e9"}],
        "resources":["https://a.example/x.js"],
        "samples":[{"timestamp":1.5,"stackId":1},{"timestamp":2,"marker":"gc"},{"timestamp":3e1,"stackId":null}],
        "stacks":[{"frameId":0},{"frameId":1,"parentId":0}]}"#;

    #[test]
    fn reads_an_envelope_as_serde_does() {
        let json = format!(
            r#" {{"pageUrl":"https://a.example/","release":"1.2","userAgent":null,"timeOrigin":1795651200000.25,
            "labels":{{"view":"cart","view":"home"}},"extra":[1,{{"x":[true,false,null,-0.5e-3]}}],"trace":{TRACE}}} "#
        );
        assert!(agrees(&json));
        let req = crate::decode::Request {
            max_bytes: 1 << 20,
            ..Default::default()
        };
        let batch = crate::decode::jsprof(&req, json.as_bytes()).unwrap();
        let got = batch.traces().unwrap();
        assert_eq!(got[0].meta.labels["view"], "home");
        assert_eq!(got[0].trace.frames[1].name, "gé");
        assert_eq!(got[0].trace.samples[2].timestamp, 30.0);
    }

    /// Entries are read by serde from their bytes, on either path.
    #[test]
    fn reads_entries_as_serde_does() {
        for entries in [
            r#"[{"entryType":"event","name":"click","startTime":1.5,"duration":40,"interactionId":3}]"#,
            r#"[]"#,
            r#"null"#,
            r#"[{"duration":2,"startTime":0,"entryType":"longtask","name":null}]"#,
        ] {
            let json = format!(r#"{{"entries":{entries},"trace":{TRACE}}}"#);
            assert!(agrees(&json), "{json}");
        }
        for bad in [
            r#"[{"entryType":"event"}]"#,
            r#"{"entryType":"event"}"#,
            r#"[{"entryType":"event","startTime":1,"startTime":2,"duration":1}]"#,
        ] {
            let json = format!(r#"{{"entries":{bad},"trace":{TRACE}}}"#);
            assert!(!agrees(&json), "{json}");
            assert!(parse_body(json.as_bytes()).is_err(), "{json}");
        }
    }

    /// Stacks and samples as serde and browsers write them take a shorter road
    /// (`compact_stack`, `compact_sample`); every other spelling takes the general one,
    /// and both read the same.
    #[test]
    fn compact_and_general_spellings_read_alike() {
        let stacks = [
            r#"{"frameId":0}"#,
            r#"{"frameId":1,"parentId":0}"#,
            r#"{"frameId":1,"parentId":null}"#,
            r#"{"parentId":1,"frameId":0}"#,
            r#"{ "frameId" : 1 , "parentId" : 2 }"#,
            r#"{"frameId":0,"parentId":3,"x":[1]}"#,
            r#"{"frameId": 1,"parentId": 0}"#,
        ];
        let samples = [
            r#"{"timestamp":1.5,"stackId":1}"#,
            r#"{"stackId":2,"timestamp":2}"#,
            r#"{"stackId":null,"timestamp":2.25}"#,
            r#"{"timestamp":3e1,"stackId":null}"#,
            r#"{"timestamp":4}"#,
            r#"{"timestamp":5,"marker":"gc","stackId":0}"#,
            r#"{"marker":"script","timestamp":6}"#,
            r#"{ "timestamp" : 7 }"#,
        ];
        let trace = format!(
            r#"{{"trace":{{"frames":[{{"name":"f"}},{{"name":"g"}}],"resources":[],"stacks":[{}],"samples":[{}]}}}}"#,
            stacks.join(","),
            samples.join(",")
        );
        assert!(agrees(&trace), "{trace}");
        // What only the general reader refuses is refused, whichever road it starts on.
        for bad in [
            r#"{"frameId":01}"#,
            r#"{"frameId":1,"frameId":1}"#,
            r#"{"frameId":1,"parentId":1}"#,
            r#"{"frameId":-1}"#,
            r#"{"frameId":1,}"#,
        ] {
            let json = trace.replace(stacks[0], bad);
            assert!(!agrees(&json), "{json}");
        }
        for bad in [
            r#"{"timestamp":1,"stackId":9}"#,
            r#"{"timestamp":1,"timestamp":2}"#,
            r#"{"stackId":0}"#,
            r#"{"timestamp":1e999}"#,
            r#"{"timestamp":"1"}"#,
        ] {
            let json = trace.replace(samples[0], bad);
            assert!(!agrees(&json), "{json}");
        }
    }

    #[test]
    fn exact_numbers_have_serdes_bits() {
        let mut checked = 0;
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut texts: Vec<String> = [
            "0",
            "-0",
            "0.0",
            "-0.0",
            "1.5",
            "100.0",
            "3e1",
            "1E22",
            "1e23",
            "1e-22",
            "1e-23",
            "9007199254740992",
            "9007199254740993",
            "0.1",
            "123456.789",
            "1795651200000.25",
            "2.5e+3",
            "-7.25E-2",
            "12345678901234567890",
            "0.0000000000000000000000001",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        for _ in 0..20_000 {
            let int = next() % 10u64.pow((next() % 17) as u32 + 1);
            let frac_digits = (next() % 8) as usize;
            let frac = next() % 10u64.pow(frac_digits as u32);
            let mut t = if frac_digits == 0 {
                int.to_string()
            } else {
                format!("{int}.{frac:0frac_digits$}")
            };
            if next() % 4 == 0 {
                t = format!("{t}e{}", (next() % 40) as i64 - 20);
            }
            if next() % 3 == 0 {
                t.insert(0, '-');
            }
            texts.push(t);
        }
        for t in &texts {
            let serde: f64 = serde_json::from_str(t).unwrap();
            if let Some(fast) = exact_f64(t.as_bytes()) {
                assert_eq!(fast.to_bits(), serde.to_bits(), "{t}");
                checked += 1;
            }
        }
        assert!(checked > texts.len() / 2, "{checked} of {}", texts.len());
    }

    #[test]
    fn falls_back_on_what_it_does_not_read() {
        for json in [
            // Not an envelope, or no trace.
            TRACE.to_owned(),
            r#"{"release":"1"}"#.to_owned(),
            format!(r#"{{"trace":{TRACE}}} x"#),
            // Duplicates, escaped keys, types serde refuses.
            format!(r#"{{"trace":{TRACE},"trace":{TRACE}}}"#),
            format!(r#"{{"tr\u0061ce":{TRACE}}}"#),
            format!(r#"{{"trace":{TRACE},"release":1}}"#),
            format!(r#"{{"trace":{TRACE},"labels":null}}"#),
            r#"{"trace":{"frames":[{"name":"f","line":1.0}],"resources":[],"samples":[],"stacks":[]}}"#.to_owned(),
            r#"{"trace":{"frames":[{"name":"f","line":-1}],"resources":[],"samples":[],"stacks":[]}}"#.to_owned(),
            r#"{"trace":{"frames":[{"name":"f","line":01}],"resources":[],"samples":[],"stacks":[]}}"#.to_owned(),
            r#"{"trace":{"frames":[],"resources":[],"samples":[{"timestamp":null}],"stacks":[]}}"#.to_owned(),
            r#"{"trace":{"frames":[],"resources":[],"samples":[{"timestamp":1,"marker":"js"}],"stacks":[]}}"#.to_owned(),
            r#"{"trace":{"frames":[],"resources":[],"samples":[],"stacks":[{"frameId":0,"frameId":0}]}}"#.to_owned(),
            r#"{"trace":{"frames":[],"resources":[],"samples":[]}}"#.to_owned(),
            // The spec's invariants: ids out of range, a parent after its stack.
            r#"{"trace":{"frames":[{"name":"f","resourceId":0}],"resources":[],"samples":[],"stacks":[]}}"#.to_owned(),
            r#"{"trace":{"frames":[],"resources":[],"samples":[],"stacks":[{"frameId":0}]}}"#.to_owned(),
            r#"{"trace":{"frames":[{"name":"f"}],"resources":[],"samples":[],"stacks":[{"frameId":0,"parentId":0}]}}"#.to_owned(),
            r#"{"trace":{"stacks":[],"frames":[],"resources":[],"samples":[{"timestamp":1,"stackId":0}]}}"#.to_owned(),
            // Syntax.
            r#"{"trace":{"frames":[],"resources":[],"samples":[],"stacks":[],}}"#.to_owned(),
            "{\"trace\":{\"frames\":[],\"resources\":[\"a\tb\"],\"samples\":[],\"stacks\":[]}}".to_owned(),
            format!(r#"{{"x":{}1{},"trace":{TRACE}}}"#, "[".repeat(80), "]".repeat(80)),
        ] {
            assert!(!agrees(&json), "{json}");
        }
        // Invalid UTF-8 in a key the model skips (found by the fuzz target).
        let mut bad_key = br#"{"xy":1,"trace":"#.to_vec();
        bad_key[3] = 0x96;
        bad_key.extend_from_slice(TRACE.as_bytes());
        bad_key.push(b'}');
        assert!(envelope(&bad_key).is_none());
        assert!(parse_body(&bad_key).is_err());
        // Invalid UTF-8 in a string.
        let mut bad = br#"{"trace":{"frames":[],"resources":[""#.to_vec();
        bad.extend_from_slice(&[0xff, b'"', b']']);
        bad.extend_from_slice(br#","samples":[],"stacks":[]}}"#);
        assert!(envelope(&bad).is_none());
    }
}
