//! The [Firefox Profiler](https://profiler.firefox.com/)'s processed profile format
//! ([documentation](https://github.com/firefox-devtools/profiler/blob/main/docs-developer/processed-profile-format.md)),
//! written with [`fxprof_processed_profile`] (the crate samply writes it with) and serialised
//! with `serde_json`. The caller may gzip it; the Firefox Profiler opens both.
//!
//! How a jsprof profile maps to it:
//! - One process (named by the title, or `jsprof`), and one thread per input trace
//!   ([`Profile::threads`], so the profile must be built with [`crate::Keep::Samples`]), named
//!   by the trace; the crate orders threads by their first sample's time, then by name.
//! - Time: `meta.startTime` (the reference timestamp) is 0, and a sample's time is its
//!   `timestamp` in the trace, i.e. ms since that trace's page's time origin, so traces from
//!   one page share a time axis and the output does not depend on the clock. A negative time
//!   is written as 0 (the crate's timestamps are unsigned). `meta.interval` is
//!   [`Profile::interval_ms`], 10 ms when unknown.
//! - Categories: `JavaScript` (yellow) for every script frame, `Idle` (transparent) for the
//!   samples without a stack and without a marker ([`Empty::Idle`]), which get a one-frame
//!   stack `(idle)` so that the call tree counts them as Chrome's does, and the crate's
//!   built-in `Other` for [`Empty::Program`] and [`Empty::GarbageCollector`], a one-frame stack
//!   named by [`Empty::label`].
//! - Frames are label frames flagged as JS (`funcTable.isJS`); the pseudo-frames are
//!   `relevantForJS` so that the JS-only call tree keeps them. A function's name is
//!   [`Frame::display_name`], or [`Frame::label`] when two distinct functions share that name
//!   (the crate keys functions by name, and would merge them).
//! - Where each function is: the crate (0.8) has no API for it and writes `null` in
//!   `funcTable.fileName`/`lineNumber`/`columnNumber`; they are filled in on the serialised
//!   JSON with the resource's URL and the 1-based line and column of the trace, the columns
//!   the format defines for JS functions. `frameTable.line`/`column` (the sampled position
//!   inside a function) stay `null`: the trace does not have it.
//! - Each sample has weight 1 and a CPU delta (the thread activity graph's height) equal to
//!   the time since the previous sample of its trace (the interval for the first), or 0 for
//!   an idle one.
//!
//! The JSON goes through a `serde_json::Value`, whose object keys are sorted (serde_json
//! without `preserve_order`), so the same input gives the same bytes.

use std::io::Write;

use fxprof_processed_profile::{
    CategoryColor, CategoryHandle, CategoryPairHandle, CpuDelta, Frame as FxFrame, FrameFlags,
    FrameHandle, FrameInfo, Profile as FxProfile, ReferenceTimestamp, SamplingInterval,
    StackHandle, ThreadHandle, Timestamp,
};
use rustc_hash::FxHashMap;
use serde_json::Value;

use crate::model::{At, Empty, Frame, FrameId, Profile};

/// The interval assumed when the traces do not tell it (fewer than two samples each).
const DEFAULT_INTERVAL_MS: f64 = 10.0;

/// Writes `profile` (built with [`crate::Keep::Samples`]) as a processed profile.
pub fn write(profile: &Profile, title: &str, out: &mut dyn Write) -> std::io::Result<()> {
    serde_json::to_writer(out, &to_value(profile, title))?;
    Ok(())
}

/// The processed profile as JSON, before writing.
fn to_value(profile: &Profile, title: &str) -> Value {
    let names = func_names(profile);
    let fx = build(profile, title, &names);
    let mut value = serde_json::to_value(&fx).expect("a processed profile always serialises");
    let by_name: FxHashMap<&str, &Frame> = names
        .iter()
        .zip(profile.frames())
        .map(|(name, frame)| (name.as_str(), frame))
        .collect();
    if let Some(threads) = value.get_mut("threads").and_then(Value::as_array_mut) {
        for thread in threads {
            add_locations(thread, &by_name);
        }
    }
    value
}

/// Each frame's function name, indexed by [`FrameId`]: distinct per distinct frame.
fn func_names(profile: &Profile) -> Vec<String> {
    let mut uses: FxHashMap<&str, u32> = FxHashMap::default();
    for f in profile.frames() {
        *uses.entry(f.display_name()).or_default() += 1;
    }
    let mut names: Vec<String> = profile
        .frames()
        .iter()
        .map(|f| match uses[f.display_name()] {
            1 => f.display_name().to_owned(),
            _ => f.label(),
        })
        .collect();
    // A label is unique but for frames that differ only where `label` does not show
    // (a line or column without a resource): number those.
    let mut seen: FxHashMap<String, u32> = FxHashMap::default();
    for name in &names {
        *seen.entry(name.clone()).or_default() += 1;
    }
    for (id, name) in names.iter_mut().enumerate() {
        if seen[name.as_str()] > 1 {
            name.push_str(&format!(" #{id}"));
        }
    }
    names
}

/// The three categories the frames use.
struct Categories {
    js: CategoryPairHandle,
    idle: CategoryPairHandle,
    other: CategoryPairHandle,
}

fn build(profile: &Profile, title: &str, names: &[String]) -> FxProfile {
    let interval_ms = profile.interval_ms().unwrap_or(DEFAULT_INTERVAL_MS);
    let interval = SamplingInterval::from_nanos(((interval_ms * 1e6).round() as u64).max(1));
    let name = if title.is_empty() { "jsprof" } else { title };
    let mut fx = FxProfile::new(
        name,
        ReferenceTimestamp::from_millis_since_unix_epoch(0.0),
        interval,
    );
    let categories = Categories {
        js: fx.add_category("JavaScript", CategoryColor::Yellow).into(),
        idle: fx.add_category("Idle", CategoryColor::Transparent).into(),
        other: CategoryHandle::OTHER.into(),
    };
    let first = |t: &crate::model::Thread| t.span().map_or(0.0, |(s, _)| s);
    let start = profile.threads().iter().map(first).reduce(f64::min);
    let process = fx.add_process(name, 1, timestamp(start.unwrap_or(0.0)));
    for (i, thread) in profile.threads().iter().enumerate() {
        let (begin, end) = thread.span().unwrap_or((0.0, 0.0));
        let handle = fx.add_thread(process, i as u32 + 1, timestamp(begin), false);
        fx.set_thread_name(handle, &thread.name);
        fx.set_thread_end_time(handle, timestamp(end));
        fx.add_initial_visible_thread(handle);
        if i == 0 {
            fx.add_initial_selected_thread(handle);
        }
        let mut stacks = Stacks {
            thread: handle,
            frames: vec![None; profile.frames().len()],
            nodes: vec![None; profile.nodes().len()],
            empty: [None; 3],
        };
        let mut previous: Option<f64> = None;
        for sample in &thread.samples {
            let gap = previous.map_or(interval_ms, |p| (sample.time - p).max(0.0));
            previous = Some(sample.time);
            let (stack, cpu) = match sample.at {
                At::Stack(node) => {
                    let stack = stacks.node(&mut fx, profile, names, &categories, node);
                    (stack, cpu_delta(gap))
                }
                At::Empty(kind) => {
                    let stack = stacks.empty(&mut fx, &categories, kind);
                    let cpu = match kind {
                        Empty::Idle => CpuDelta::ZERO,
                        _ => cpu_delta(gap),
                    };
                    (stack, cpu)
                }
            };
            fx.add_sample(handle, timestamp(sample.time), Some(stack), cpu, 1);
        }
    }
    fx
}

/// A time in ms from the reference timestamp (0), clamped to the crate's unsigned range.
fn timestamp(ms: f64) -> Timestamp {
    Timestamp::from_millis_since_reference(ms.max(0.0))
}

/// A CPU delta of `ms`, to the nearest µs (the unit the crate writes).
fn cpu_delta(ms: f64) -> CpuDelta {
    CpuDelta::from_micros((ms * 1000.0).round() as u64)
}

/// One thread's frames and stacks, interned on first use.
struct Stacks {
    thread: ThreadHandle,
    frames: Vec<Option<FrameHandle>>,
    nodes: Vec<Option<StackHandle>>,
    empty: [Option<StackHandle>; 3],
}

impl Stacks {
    fn frame(
        &mut self,
        fx: &mut FxProfile,
        names: &[String],
        categories: &Categories,
        id: FrameId,
    ) -> FrameHandle {
        if let Some(h) = self.frames[id as usize] {
            return h;
        }
        let label = fx.intern_string(&names[id as usize]);
        let h = fx.intern_frame(
            self.thread,
            FrameInfo {
                frame: FxFrame::Label(label),
                category_pair: categories.js,
                flags: FrameFlags::IS_JS,
            },
        );
        self.frames[id as usize] = Some(h);
        h
    }

    /// The stack of call path `node`, interning the missing part of its path, root first.
    fn node(
        &mut self,
        fx: &mut FxProfile,
        profile: &Profile,
        names: &[String],
        categories: &Categories,
        node: u32,
    ) -> StackHandle {
        let mut missing = Vec::new();
        let mut at = Some(node);
        let mut parent = None;
        while let Some(n) = at {
            if let Some(h) = self.nodes[n as usize] {
                parent = Some(h);
                break;
            }
            missing.push(n);
            at = profile.node(n).parent;
        }
        for n in missing.into_iter().rev() {
            let frame = self.frame(fx, names, categories, profile.node(n).frame);
            let h = fx.intern_stack(self.thread, parent, frame);
            self.nodes[n as usize] = Some(h);
            parent = Some(h);
        }
        parent.expect("a call path has at least its own frame")
    }

    fn empty(&mut self, fx: &mut FxProfile, categories: &Categories, kind: Empty) -> StackHandle {
        if let Some(h) = self.empty[kind as usize] {
            return h;
        }
        let category_pair = match kind {
            Empty::Idle => categories.idle,
            Empty::Program | Empty::GarbageCollector => categories.other,
        };
        let label = fx.intern_string(kind.label());
        let frame = fx.intern_frame(
            self.thread,
            FrameInfo {
                frame: FxFrame::Label(label),
                category_pair,
                flags: FrameFlags::IS_RELEVANT_FOR_JS,
            },
        );
        let h = fx.intern_stack(self.thread, None, frame);
        self.empty[kind as usize] = Some(h);
        h
    }
}

/// Fills a serialised thread's `funcTable.fileName`, `lineNumber` and `columnNumber` for
/// its JS functions, adding the URLs to its `stringArray`.
fn add_locations(thread: &mut Value, by_name: &FxHashMap<&str, &Frame>) {
    let Some(strings) = thread.get("stringArray").and_then(Value::as_array) else {
        return;
    };
    let mut strings: Vec<String> = strings
        .iter()
        .map(|s| s.as_str().unwrap_or_default().to_owned())
        .collect();
    let mut string_ids: FxHashMap<String, usize> = FxHashMap::default();
    for (i, s) in strings.iter().enumerate() {
        string_ids.entry(s.clone()).or_insert(i);
    }
    let Some(funcs) = thread.get_mut("funcTable").and_then(Value::as_object_mut) else {
        return;
    };
    let column = |funcs: &serde_json::Map<String, Value>, key: &str| -> Vec<Value> {
        funcs
            .get(key)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    let name = column(funcs, "name");
    let is_js = column(funcs, "isJS");
    let mut file = column(funcs, "fileName");
    let mut line = column(funcs, "lineNumber");
    let mut col = column(funcs, "columnNumber");
    file.resize(name.len(), Value::Null);
    line.resize(name.len(), Value::Null);
    col.resize(name.len(), Value::Null);
    for i in 0..name.len() {
        if is_js.get(i).and_then(Value::as_bool) != Some(true) {
            continue;
        }
        let Some(frame) = name[i]
            .as_u64()
            .and_then(|s| strings.get(s as usize))
            .and_then(|s| by_name.get(s.as_str()))
        else {
            continue;
        };
        if let Some(url) = &frame.resource {
            let id = *string_ids.entry(url.clone()).or_insert_with(|| {
                strings.push(url.clone());
                strings.len() - 1
            });
            file[i] = Value::from(id);
        }
        line[i] = frame.line.map_or(Value::Null, Value::from);
        col[i] = frame.column.map_or(Value::Null, Value::from);
    }
    funcs.insert("fileName".into(), Value::from(file));
    funcs.insert("lineNumber".into(), Value::from(line));
    funcs.insert("columnNumber".into(), Value::from(col));
    thread["stringArray"] = Value::from(strings);
}

#[cfg(test)]
mod tests;
