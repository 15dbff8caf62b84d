//! The `ProfilerTrace` dictionaries and the spec's ID algorithms.
//!
//! Spec: <https://wicg.github.io/js-self-profiling/#the-profilertrace-dictionary>.
//! Struct fields are declared in lexicographic order, the order in which WebIDL converts
//! dictionary members to a JS object, so the JSON here is byte-identical to
//! `JSON.stringify(trace)` in a page. Optional members are absent, never `null`.

use std::io::Write;

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use crate::frame::FrameInfo;

/// <https://wicg.github.io/js-self-profiling/#the-profilerframe-dictionary>
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProfilerFrame {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub column: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_id: Option<u64>,
}

/// <https://wicg.github.io/js-self-profiling/#the-profilerstack-dictionary>
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProfilerStack {
    pub frame_id: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_id: Option<u64>,
}

/// `enum ProfilerMarker` of the markers extension
/// (<https://github.com/WICG/js-self-profiling/blob/main/markers.md>): what the agent was
/// doing when a sample was taken. The generated bindings check, by an exhaustive match,
/// that these are exactly the IDL enum's values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProfilerMarker {
    Script,
    Gc,
    Style,
    Layout,
    Paint,
    Other,
}

impl ProfilerMarker {
    /// Every marker, in the IDL enum's order.
    pub const ALL: [ProfilerMarker; 6] = [
        ProfilerMarker::Script,
        ProfilerMarker::Gc,
        ProfilerMarker::Style,
        ProfilerMarker::Layout,
        ProfilerMarker::Paint,
        ProfilerMarker::Other,
    ];

    /// The IDL enum value.
    pub fn as_str(self) -> &'static str {
        match self {
            ProfilerMarker::Script => "script",
            ProfilerMarker::Gc => "gc",
            ProfilerMarker::Style => "style",
            ProfilerMarker::Layout => "layout",
            ProfilerMarker::Paint => "paint",
            ProfilerMarker::Other => "other",
        }
    }

    fn bit(self) -> u8 {
        1 << (self as u8)
    }

    /// The marker as one byte (0: none), as the sample log keeps it.
    pub(crate) fn to_byte(marker: Option<ProfilerMarker>) -> u8 {
        marker.map_or(0, |m| m as u8 + 1)
    }

    pub(crate) fn from_byte(byte: u8) -> Option<ProfilerMarker> {
        Self::ALL.get(usize::from(byte).checked_sub(1)?).copied()
    }
}

/// Which markers a session exposes (Conditional Marker Exposure): all of them in a
/// cross-origin-isolated context; otherwise only `style` and `layout`; none when the
/// `profiler.markers.enabled` pref is off.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MarkerSet(u8);

impl MarkerSet {
    /// No markers: traces are exactly those of the base spec.
    pub const NONE: MarkerSet = MarkerSet(0);

    /// The markers exposed to a context: `enabled` is the pref, `cross_origin_isolated` the
    /// context's isolation.
    pub fn for_context(enabled: bool, cross_origin_isolated: bool) -> MarkerSet {
        if !enabled {
            MarkerSet::NONE
        } else if cross_origin_isolated {
            MarkerSet(ProfilerMarker::ALL.iter().fold(0, |m, k| m | k.bit()))
        } else {
            MarkerSet(ProfilerMarker::Style.bit() | ProfilerMarker::Layout.bit())
        }
    }

    /// Whether `marker` is exposed.
    pub fn contains(self, marker: ProfilerMarker) -> bool {
        self.0 & marker.bit() != 0
    }

    /// `marker` if it is exposed.
    pub fn filter(self, marker: Option<ProfilerMarker>) -> Option<ProfilerMarker> {
        marker.filter(|&m| self.contains(m))
    }
}

/// <https://wicg.github.io/js-self-profiling/#the-profilersample-dictionary>, with the
/// markers extension's optional `marker`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProfilerSample {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub marker: Option<ProfilerMarker>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stack_id: Option<u64>,
    pub timestamp: f64,
}

/// <https://wicg.github.io/js-self-profiling/#the-profilertrace-dictionary>
///
/// Invariants: every `stackId`, `parentId`, `frameId` and `resourceId` is a valid index; a
/// stack's parent comes before it; no two entries of `frames`, `stacks` or `resources` are equal.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProfilerTrace {
    pub frames: Vec<ProfilerFrame>,
    pub resources: Vec<String>,
    pub samples: Vec<ProfilerSample>,
    pub stacks: Vec<ProfilerStack>,
}

impl ProfilerTrace {
    /// Compact JSON, as `JSON.stringify(trace)` gives it.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a trace always serialises")
    }

    /// Indented JSON, for people.
    pub fn to_json_pretty(&self) -> String {
        serde_json::to_string_pretty(self).expect("a trace always serialises")
    }

    /// The "json-gzip" format of the engine design (seed 004): the compact JSON, gzipped.
    pub fn to_json_gzip(&self) -> Vec<u8> {
        gzip(self.to_json().as_bytes())
    }

    /// The frames of a sample's stack, outermost first, as `(name, resource, line, column)`
    /// — following `stackId`, `parentId`, `frameId` and `resourceId` the way a page would.
    /// `None` if an ID is out of range or a parent does not come before its child.
    pub fn sample_frames(&self, sample: &ProfilerSample) -> Option<Vec<FrameInfo>> {
        let mut out = Vec::new();
        let mut next = sample.stack_id;
        while let Some(id) = next {
            let stack = self.stacks.get(usize::try_from(id).ok()?)?;
            let frame = self.frames.get(usize::try_from(stack.frame_id).ok()?)?;
            let resource = match frame.resource_id {
                Some(r) => Some(self.resources.get(usize::try_from(r).ok()?)?.clone()),
                None => None,
            };
            out.push(FrameInfo {
                name: frame.name.clone(),
                resource,
                line: frame.line.map(|l| l as u32),
                column: frame.column.map(|c| c as u32),
            });
            if stack.parent_id.is_some_and(|p| p >= id) {
                return None;
            }
            next = stack.parent_id;
        }
        out.reverse();
        Some(out)
    }
}

/// Builds a [`ProfilerTrace`] with the spec's get-an-element-ID done by interning: O(1) per
/// item, component-wise equality, and items appended in first-seen order.
#[derive(Debug, Default)]
pub struct TraceBuilder {
    trace: ProfilerTrace,
    resources: FxHashMap<String, u64>,
    frames: FxHashMap<ProfilerFrame, u64>,
    stacks: FxHashMap<ProfilerStack, u64>,
}

impl TraceBuilder {
    pub fn new() -> Self {
        Self::default()
    }

    /// get an element ID for a resource string in `resources`.
    pub fn resource_id(&mut self, url: &str) -> u64 {
        if let Some(&id) = self.resources.get(url) {
            return id;
        }
        let id = self.trace.resources.len() as u64;
        self.trace.resources.push(url.to_owned());
        self.resources.insert(url.to_owned(), id);
        id
    }

    /// get a frame ID, steps 8–11: the frame's resource first, then the frame.
    pub fn frame_id(&mut self, info: &FrameInfo) -> u64 {
        let resource_id = info.resource.as_deref().map(|r| self.resource_id(r));
        let frame = ProfilerFrame {
            column: info.column.map(u64::from),
            line: info.line.map(u64::from),
            name: info.name.clone(),
            resource_id,
        };
        intern(&mut self.frames, &mut self.trace.frames, frame)
    }

    /// get a stack ID, steps 6–7, for a frame on top of `parent`.
    pub fn stack_id(&mut self, frame_id: u64, parent_id: Option<u64>) -> u64 {
        let stack = ProfilerStack {
            frame_id,
            parent_id,
        };
        intern(&mut self.stacks, &mut self.trace.stacks, stack)
    }

    /// get a stack ID for a whole stack (outermost first) of symbolized frames; `None` for an
    /// empty stack. Frames get their IDs innermost first and stacks outermost first, the order
    /// in which Chromium fills the tables (seed 002's worked example).
    pub fn stack_id_of(&mut self, frames: &[FrameInfo]) -> Option<u64> {
        let ids: Vec<u64> = frames.iter().rev().map(|f| self.frame_id(f)).collect();
        ids.into_iter()
            .rev()
            .fold(None, |parent, frame| Some(self.stack_id(frame, parent)))
    }

    /// take a sample, step 6: appends a sample (with its marker, if one is exposed).
    pub fn push_sample(
        &mut self,
        timestamp: f64,
        stack_id: Option<u64>,
        marker: Option<ProfilerMarker>,
    ) {
        self.trace.samples.push(ProfilerSample {
            marker,
            stack_id,
            timestamp,
        });
    }

    /// Reserves room for `n` more samples (the caller knows how many it has).
    pub fn reserve_samples(&mut self, n: usize) {
        self.trace.samples.reserve_exact(n);
    }

    pub fn finish(self) -> ProfilerTrace {
        self.trace
    }
}

fn intern<T: Clone + Eq + std::hash::Hash>(
    index: &mut FxHashMap<T, u64>,
    list: &mut Vec<T>,
    item: T,
) -> u64 {
    *index.entry(item).or_insert_with_key(|item| {
        list.push(item.clone());
        (list.len() - 1) as u64
    })
}

/// `bytes` gzipped (the "json-gzip" format's compression).
pub fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(bytes).expect("writing to a Vec cannot fail");
    enc.finish().expect("writing to a Vec cannot fail")
}
