//! Post-processing (a stopped recording into one [`Timeline`] per frame, with the times
//! aggregated in its tree) and `GetEvents`: the selection and the four modes.
//!
//! Times are ms since profiling began. Per event: `aggregatedTime` is its whole interval,
//! `time` what is left of it outside its children (its own time), `overhead` what
//! recording it cost and `aggregatedOverhead` that of its subtree; `childCount` counts its
//! direct children, `hits` the events an entry stands for (1 in `ALL`).

use std::collections::{BTreeMap, HashMap, HashSet};

use serde::{Deserialize, Serialize};

use crate::event::{Details, EventType};
use crate::record::Recording;

/// `Interval {start, end}`, in ms since profiling began.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    pub start: f64,
    pub end: f64,
}

/// A sampled stack attached to an evaluation event (`GetEvents` with `stacks`): when it
/// was taken and its frames, innermost first, each `name (url:line:column)`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StackSample {
    pub time: f64,
    pub frames: Vec<String>,
}

/// `Event`, as a client gets it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Event {
    #[serde(rename = "eventID")]
    pub event_id: u32,
    #[serde(rename = "parentEventID")]
    pub parent_event_id: u32,
    #[serde(rename = "type")]
    pub event_type: EventType,
    pub time: f64,
    pub overhead: f64,
    pub interval: Interval,
    pub hits: u32,
    pub child_count: u32,
    pub aggregated_time: f64,
    pub aggregated_overhead: f64,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub details: Option<Details>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub samples: Option<Vec<StackSample>>,
}

/// One frame's events, post-processed: its tree, in the order events began.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Timeline {
    #[serde(rename = "timelineID")]
    pub timeline_id: u32,
    #[serde(rename = "frameID")]
    pub frame_id: u32,
    #[serde(skip)]
    pub events: Vec<Event>,
}

fn ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

/// Post-processing: one timeline per frame that existed while recording (numbered from 1
/// in frame order), each event's times and counts aggregated in its frame's tree. An event
/// whose parent is in another frame is a top-level event of its own frame's timeline.
pub fn post_process(recording: &Recording) -> Vec<Timeline> {
    let mut frames: BTreeMap<u32, Vec<usize>> = recording
        .frames
        .iter()
        .map(|f| (f.frame_id, Vec::new()))
        .collect();
    // In the order events began (a load recorded once done began before events recorded
    // earlier); a parent began before its children, and has a lower ID when they tie.
    let mut order: Vec<usize> = (0..recording.events.len()).collect();
    order.sort_by_key(|&i| (recording.events[i].start, recording.events[i].id));
    for i in order {
        frames.entry(recording.events[i].frame).or_default().push(i);
    }
    frames
        .into_iter()
        .enumerate()
        .map(|(n, (frame_id, indices))| Timeline {
            timeline_id: n as u32 + 1,
            frame_id,
            events: aggregate(recording, frame_id, &indices),
        })
        .collect()
}

/// The events `indices` (of one frame, in the order they began) with their tree's values.
fn aggregate(recording: &Recording, frame: u32, indices: &[usize]) -> Vec<Event> {
    let raw: Vec<_> = indices.iter().map(|&i| &recording.events[i]).collect();
    let by_id: HashMap<u32, &crate::event::RawEvent> =
        recording.events.iter().map(|e| (e.id, e)).collect();
    let at: HashMap<u32, usize> = raw.iter().enumerate().map(|(i, e)| (e.id, i)).collect();
    let mut events: Vec<Event> = raw
        .iter()
        .map(|e| {
            let end = e.end.unwrap_or(recording.duration).max(e.start);
            let parent = by_id
                .get(&e.parent)
                .filter(|p| p.frame == frame)
                .map_or(0, |p| p.id);
            Event {
                event_id: e.id,
                parent_event_id: parent,
                event_type: e.details.event_type(),
                time: 0.0,
                overhead: ms(e.overhead),
                interval: Interval {
                    start: ms(e.start),
                    end: ms(end),
                },
                hits: 1,
                child_count: 0,
                aggregated_time: ms(end - e.start),
                aggregated_overhead: ms(e.overhead),
                details: Some(e.details.clone()),
                samples: None,
            }
        })
        .collect();
    // Children began after their parents: in reverse order, each event is complete when
    // it is added to its parent.
    let mut children_time = vec![0.0; events.len()];
    for i in (0..events.len()).rev() {
        let e = &events[i];
        if let Some(&p) = at.get(&e.parent_event_id) {
            let (t, o) = (e.aggregated_time, e.aggregated_overhead);
            children_time[p] += t;
            events[p].child_count += 1;
            events[p].aggregated_overhead += o;
        }
    }
    for (e, c) in events.iter_mut().zip(children_time) {
        e.time = (e.aggregated_time - c).max(0.0);
    }
    events
}

/// `GetEvents`' `mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// `ALL = 1`: the selected events as they are.
    All = 1,
    /// `REDUCE_UNIQUE_TYPES = 2`: one summed event per type.
    ReduceUniqueTypes = 2,
    /// `REDUCE_UNIQUE_EVENTS = 3`: one per type and key ([`Details::unique_key`]); merged
    /// loads give the sum of their bytes.
    ReduceUniqueEvents = 3,
    /// `REDUCE_ALL = 4`: one for the whole selection.
    ReduceAll = 4,
}

impl Mode {
    pub const ALL: [Mode; 4] = [
        Mode::All,
        Mode::ReduceUniqueTypes,
        Mode::ReduceUniqueEvents,
        Mode::ReduceAll,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Mode::All => "ALL",
            Mode::ReduceUniqueTypes => "REDUCE_UNIQUE_TYPES",
            Mode::ReduceUniqueEvents => "REDUCE_UNIQUE_EVENTS",
            Mode::ReduceAll => "REDUCE_ALL",
        }
    }
}

/// What `GetEvents` selects and how it reduces it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Query {
    pub mode: Option<Mode>,
    /// Only the descendants of this event (not the event itself).
    pub event_id: Option<u32>,
    /// Only events this deep: top-level events (or `event_id`'s children) are at depth 1.
    pub max_depth: Option<u32>,
    /// Only events of these types.
    pub types: Option<Vec<EventType>>,
    /// Only events that overlap this interval (ends included).
    pub interval: Option<Interval>,
}

/// Why a query selects nothing it could.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownEvent(pub u32);

impl Timeline {
    /// `GetEvents` on this timeline. With `samples`, each evaluation event (in `ALL`) gets
    /// the sampled stacks taken inside its interval.
    pub fn select(
        &self,
        query: &Query,
        samples: Option<&[StackSample]>,
    ) -> Result<Vec<Event>, UnknownEvent> {
        let at: HashMap<u32, usize> = self
            .events
            .iter()
            .enumerate()
            .map(|(i, e)| (e.event_id, i))
            .collect();
        // Depth under the selection's root (0: the root; None: outside it). Parents come
        // before their children.
        let root = match query.event_id {
            Some(id) => Some(*at.get(&id).ok_or(UnknownEvent(id))?),
            None => None,
        };
        let mut depth: Vec<Option<u32>> = vec![None; self.events.len()];
        for (i, e) in self.events.iter().enumerate() {
            depth[i] = match (root, at.get(&e.parent_event_id)) {
                (Some(r), _) if r == i => Some(0),
                (Some(_), Some(&p)) => depth[p].map(|d| d + 1),
                (Some(_), None) => None,
                (None, Some(&p)) => depth[p].map(|d| d + 1),
                (None, None) => Some(1),
            };
        }
        let chosen: Vec<usize> = (0..self.events.len())
            .filter(|&i| {
                let e = &self.events[i];
                depth[i].is_some_and(|d| d >= 1 && query.max_depth.is_none_or(|m| d <= m))
                    && query
                        .types
                        .as_ref()
                        .is_none_or(|t| t.contains(&e.event_type))
                    && query
                        .interval
                        .is_none_or(|iv| e.interval.start <= iv.end && e.interval.end >= iv.start)
            })
            .collect();
        let mode = query.mode.unwrap_or(Mode::All);
        if mode == Mode::All {
            return Ok(chosen
                .into_iter()
                .map(|i| {
                    let mut e = self.events[i].clone();
                    if let Some(samples) = samples {
                        if e.event_type == EventType::ThreadEvaluation {
                            e.samples = Some(
                                samples
                                    .iter()
                                    .filter(|s| {
                                        s.time >= e.interval.start && s.time <= e.interval.end
                                    })
                                    .cloned()
                                    .collect(),
                            );
                        }
                    }
                    e
                })
                .collect());
        }
        // Groups in the order their first event began.
        let mut groups: Vec<(Option<Details>, EventType, Vec<usize>)> = Vec::new();
        let mut index: HashMap<(EventType, Option<Details>), usize> = HashMap::new();
        for i in chosen {
            let e = &self.events[i];
            let key = match mode {
                Mode::ReduceUniqueTypes => (e.event_type, None),
                Mode::ReduceUniqueEvents => {
                    (e.event_type, e.details.as_ref().map(Details::unique_key))
                }
                _ => (EventType::Generic, None),
            };
            let g = *index.entry(key.clone()).or_insert_with(|| {
                groups.push((key.1, key.0, Vec::new()));
                groups.len() - 1
            });
            groups[g].2.push(i);
        }
        Ok(groups
            .into_iter()
            .map(|(details, event_type, members)| {
                let event_type = if mode == Mode::ReduceAll {
                    let first = self.events[members[0]].event_type;
                    if members.iter().all(|&i| self.events[i].event_type == first) {
                        first
                    } else {
                        EventType::Generic
                    }
                } else {
                    event_type
                };
                self.reduce(&at, &members, event_type, details)
            })
            .collect())
    }

    /// One event standing for `members`: their own times and overheads summed, their
    /// aggregated ones summed over the members no other member contains (so that nested
    /// members are counted once), their hits and children summed, the interval covering
    /// them all. Its ID is its first member's.
    fn reduce(
        &self,
        at: &HashMap<u32, usize>,
        members: &[usize],
        event_type: EventType,
        details: Option<Details>,
    ) -> Event {
        let ids: HashSet<u32> = members.iter().map(|&i| self.events[i].event_id).collect();
        let outermost = |i: usize| {
            let mut p = self.events[i].parent_event_id;
            while let Some(&pi) = at.get(&p) {
                if ids.contains(&p) {
                    return false;
                }
                p = self.events[pi].parent_event_id;
            }
            true
        };
        let mut out = Event {
            event_id: self.events[members[0]].event_id,
            parent_event_id: 0,
            event_type,
            time: 0.0,
            overhead: 0.0,
            interval: Interval {
                start: f64::INFINITY,
                end: f64::NEG_INFINITY,
            },
            hits: 0,
            child_count: 0,
            aggregated_time: 0.0,
            aggregated_overhead: 0.0,
            details,
            samples: None,
        };
        let mut bytes = 0u64;
        for &i in members {
            let e = &self.events[i];
            if let Some(Details::Process { bytes: b, .. }) = &e.details {
                bytes = bytes.saturating_add(*b);
            }
            out.time += e.time;
            out.overhead += e.overhead;
            out.hits += e.hits;
            out.child_count += e.child_count;
            out.interval.start = out.interval.start.min(e.interval.start);
            out.interval.end = out.interval.end.max(e.interval.end);
            if outermost(i) {
                out.aggregated_time += e.aggregated_time;
                out.aggregated_overhead += e.aggregated_overhead;
            }
        }
        // Merged loads: their bytes summed.
        if let Some(Details::Process { bytes: b, .. }) = &mut out.details {
            *b = bytes;
        }
        out
    }
}

/// The samples of `trace` as [`StackSample`]s on the session's clock: a sample's
/// timestamp is `offset_ms` before the session's time 0 would give it.
pub fn stack_samples(trace: &jsprof_profiler::ProfilerTrace, offset_ms: f64) -> Vec<StackSample> {
    let frame_text = |id: u64| {
        trace.frames.get(id as usize).map(|f| {
            let resource = f.resource_id.and_then(|r| trace.resources.get(r as usize));
            match (resource, f.line, f.column) {
                (Some(url), Some(line), Some(column)) => {
                    format!("{} ({url}:{line}:{column})", f.name)
                }
                _ => f.name.clone(),
            }
        })
    };
    trace
        .samples
        .iter()
        .map(|s| {
            let mut frames = Vec::new();
            let mut next = s.stack_id;
            // Stacks are a tree the builder made: a parent's ID is below its child's, so
            // this ends; the bound keeps it so for any trace.
            while let Some(id) = next {
                let Some(stack) = trace.stacks.get(id as usize) else {
                    break;
                };
                frames.extend(frame_text(stack.frame_id));
                next = stack.parent_id.filter(|&p| p < id);
            }
            StackSample {
                time: s.timestamp - offset_ms,
                frames,
            }
        })
        .collect()
}
