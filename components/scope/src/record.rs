//! The event recorder of a page's event loop.
//!
//! One [`Recorder`] per top-level page (its window and its frames), shared by the thread
//! that runs the page (which records) and whoever serves the profiler service (which starts
//! and stops it). The page's thread installs it ([`install`]) and records through the
//! thread's hooks ([`begin`]): while no session runs a hook is one thread-local read and one
//! relaxed atomic load, and allocates nothing; while one runs, an event is one lock and a
//! push at its beginning and one lock at its end.
//!
//! An event's parent is the event on the thread's stack when it began: the event that
//! triggered it synchronously (seed 003's rule).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::event::{Details, RawEvent};

/// A frame of the page: the top-level window's, or an iframe's. A frame's ID is its
/// window's index + 1 (the engine never loads a second document into a window, so a window
/// is a frame for its whole life).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FrameInfo {
    pub frame_id: u32,
    /// The frame whose document holds this frame's iframe (none for the top-level frame).
    pub parent: Option<u32>,
    pub url: String,
}

/// What a stopped recording holds: its events, in the order they began, and every frame
/// that existed while it ran. It crosses between processes (serde) without its `epoch`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Recording {
    /// When recording began: time 0 of the session.
    #[serde(skip, default = "Instant::now")]
    pub epoch: Instant,
    /// The same moment on the profiler's monotonic clock (what traces' time origins are
    /// given on).
    pub epoch_nanos: u64,
    /// How long it ran, in ns.
    pub duration: u64,
    pub events: Vec<RawEvent>,
    pub frames: Vec<FrameInfo>,
}

/// How a session starts: `IMMEDIATE` (now) or `URL` (at the window's next navigation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StartMode {
    Immediate,
    Url,
}

#[derive(Debug, Default)]
struct State {
    /// Counts starts, so that an event begun in one recording never ends in another.
    generation: u64,
    live: Option<Live>,
    /// Waiting for the next navigation (`URL` start mode).
    armed: bool,
    /// Every frame of the page, by ID.
    frames: BTreeMap<u32, FrameInfo>,
}

#[derive(Debug)]
struct Live {
    epoch: Instant,
    epoch_nanos: u64,
    events: Vec<RawEvent>,
    /// The IDs of the events running on the page's thread, innermost last.
    stack: Vec<u32>,
    /// Frames that existed while recording: all at its start, and those made since.
    frames: BTreeMap<u32, FrameInfo>,
}

/// Why a recorder would not start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StartError {
    AlreadyRecording,
}

/// A page's event recorder (see the module's documentation).
#[derive(Debug, Default)]
pub struct Recorder {
    /// True while a recording runs: the one thing a hook reads when none does.
    active: AtomicBool,
    state: Mutex<State>,
}

impl Recorder {
    pub fn new() -> Arc<Recorder> {
        Arc::new(Recorder::default())
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // A panic while holding it leaves consistent data (every update is one statement).
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether a recording runs.
    #[inline]
    pub fn is_recording(&self) -> bool {
        self.active.load(Ordering::Relaxed)
    }

    /// Starts recording now (`Immediate`), or at the next [`Recorder::navigation_started`]
    /// (`Url`).
    pub fn start(&self, mode: StartMode) -> Result<(), StartError> {
        let mut state = self.state();
        if state.live.is_some() || state.armed {
            return Err(StartError::AlreadyRecording);
        }
        match mode {
            StartMode::Immediate => self.begin_recording(&mut state),
            StartMode::Url => state.armed = true,
        }
        Ok(())
    }

    fn begin_recording(&self, state: &mut State) {
        state.generation += 1;
        state.live = Some(Live {
            epoch: Instant::now(),
            epoch_nanos: jsprof_profiler::Clock::now(&jsprof_profiler::MonotonicClock),
            events: Vec::new(),
            stack: Vec::new(),
            frames: state.frames.clone(),
        });
        self.active.store(true, Ordering::Relaxed);
    }

    /// The window is navigating (its first byte is about to be asked for): a `URL` start
    /// begins recording here.
    pub fn navigation_started(&self) {
        let mut state = self.state();
        if std::mem::take(&mut state.armed) {
            self.begin_recording(&mut state);
        }
    }

    /// Stops recording at once and hands over what was recorded (events still running end
    /// now); `None` if nothing was recording (a `URL` start still waiting is disarmed).
    pub fn stop(&self) -> Option<Recording> {
        self.active.store(false, Ordering::Relaxed);
        let mut state = self.state();
        state.armed = false;
        let live = state.live.take()?;
        drop(state);
        let duration = nanos_since(live.epoch);
        let mut events = live.events;
        for e in &mut events {
            e.end.get_or_insert(duration);
        }
        Some(Recording {
            epoch: live.epoch,
            epoch_nanos: live.epoch_nanos,
            duration,
            events,
            frames: live.frames.into_values().collect(),
        })
    }

    /// A frame of the page came to be (or its document's URL is known).
    pub fn set_frame(&self, frame: FrameInfo) {
        let mut state = self.state();
        if let Some(live) = &mut state.live {
            live.frames.insert(frame.frame_id, frame.clone());
        }
        state.frames.insert(frame.frame_id, frame);
    }

    /// The page's frames.
    pub fn frames(&self) -> Vec<FrameInfo> {
        self.state().frames.values().cloned().collect()
    }

    /// Begins an event in `frame` (if recording).
    pub fn begin(self: &Arc<Self>, frame: u32, details: Details) -> EventGuard {
        let t0 = Instant::now();
        let mut state = self.state();
        let generation = state.generation;
        let Some(live) = &mut state.live else {
            return EventGuard(None);
        };
        let id = live.events.len() as u32 + 1;
        live.events.push(RawEvent {
            id,
            parent: live.stack.last().copied().unwrap_or(0),
            frame,
            start: t0.saturating_duration_since(live.epoch).as_nanos() as u64,
            end: None,
            overhead: 0,
            details,
        });
        live.stack.push(id);
        let spent = t0.elapsed().as_nanos() as u64;
        if let Some(e) = live.events.last_mut() {
            e.overhead = spent;
        }
        EventGuard(Some((self.clone(), generation, id)))
    }

    /// Records an event that already happened, from `start` to `end` (a load done on
    /// another thread): a top-level event, if recording began before it started.
    pub fn record_span(&self, frame: u32, start: Instant, end: Instant, details: Details) {
        let t0 = Instant::now();
        let mut state = self.state();
        let Some(live) = &mut state.live else {
            return;
        };
        let Some(from) = start.checked_duration_since(live.epoch) else {
            return;
        };
        let id = live.events.len() as u32 + 1;
        live.events.push(RawEvent {
            id,
            parent: 0,
            frame,
            start: from.as_nanos() as u64,
            end: Some(end.saturating_duration_since(live.epoch).as_nanos() as u64),
            overhead: t0.elapsed().as_nanos() as u64,
            details,
        });
    }

    /// The frame of the innermost event running on the page's thread, if any.
    fn current_frame(&self) -> Option<u32> {
        let state = self.state();
        let live = state.live.as_ref()?;
        let id = *live.stack.last()?;
        live.events.get(id as usize - 1).map(|e| e.frame)
    }

    fn end(&self, generation: u64, id: u32) {
        let t0 = Instant::now();
        let mut state = self.state();
        if state.generation != generation {
            return;
        }
        let Some(live) = &mut state.live else {
            return;
        };
        let end = t0.saturating_duration_since(live.epoch).as_nanos() as u64;
        if let Some(pos) = live.stack.iter().rposition(|&x| x == id) {
            live.stack.truncate(pos);
        }
        if let Some(e) = live.events.get_mut(id as usize - 1) {
            e.end = Some(end);
            e.overhead += t0.elapsed().as_nanos() as u64;
        }
    }
}

fn nanos_since(epoch: Instant) -> u64 {
    epoch.elapsed().as_nanos() as u64
}

/// An event that is running: it ends when this is dropped.
#[derive(Debug)]
#[must_use = "the event ends when its guard is dropped"]
pub struct EventGuard(Option<(Arc<Recorder>, u64, u32)>);

impl EventGuard {
    /// A guard of no event.
    pub const NONE: EventGuard = EventGuard(None);

    /// Whether an event is being recorded.
    pub fn is_recording(&self) -> bool {
        self.0.is_some()
    }

    /// What the event records, once known better (a load's status and size at its end).
    pub fn update(&self, details: Details) {
        if let Some((recorder, generation, id)) = &self.0 {
            let mut state = recorder.state();
            if state.generation != *generation {
                return;
            }
            if let Some(e) = state
                .live
                .as_mut()
                .and_then(|live| live.events.get_mut(*id as usize - 1))
            {
                e.details = details;
            }
        }
    }
}

impl Drop for EventGuard {
    fn drop(&mut self) {
        if let Some((recorder, generation, id)) = self.0.take() {
            recorder.end(generation, id);
        }
    }
}

thread_local! {
    /// The recorder of the page this thread runs.
    static CURRENT: RefCell<Option<Arc<Recorder>>> = const { RefCell::new(None) };
}

/// Makes `recorder` the one this thread's hooks record into (`None`: none).
pub fn install(recorder: Option<Arc<Recorder>>) {
    let _ = CURRENT.try_with(|c| *c.borrow_mut() = recorder);
}

/// The recorder this thread's hooks record into, if one is installed.
pub fn current() -> Option<Arc<Recorder>> {
    CURRENT.try_with(|c| c.borrow().clone()).ok().flatten()
}

/// The hook: begins an event in `frame` if this thread's recorder is recording. `details`
/// is only called then, so a hook allocates nothing while no session runs.
#[inline]
pub fn begin(frame: u32, details: impl FnOnce() -> Details) -> EventGuard {
    CURRENT
        .try_with(|c| match &*c.borrow() {
            Some(r) if r.is_recording() => r.begin(frame, details()),
            _ => EventGuard::NONE,
        })
        .unwrap_or(EventGuard::NONE)
}

/// Whether this thread's recorder is recording (for hooks that must do work to know what
/// to record).
#[inline]
pub fn recording() -> bool {
    CURRENT
        .try_with(|c| c.borrow().as_ref().is_some_and(|r| r.is_recording()))
        .unwrap_or(false)
}

/// The hook for work that belongs to no frame of its own (a collection): begins an event in
/// the frame of the innermost running event, or the top-level frame (1) when none runs.
pub fn begin_here(details: impl FnOnce() -> Details) -> EventGuard {
    CURRENT
        .try_with(|c| match &*c.borrow() {
            Some(r) if r.is_recording() => {
                let frame = r.current_frame().unwrap_or(1);
                r.begin(frame, details())
            }
            _ => EventGuard::NONE,
        })
        .unwrap_or(EventGuard::NONE)
}

/// The running evaluation entered the page's function `name` (a timer's callback, an event
/// listener): recorded as its function, if it is the innermost event, is an evaluation the
/// engine started for a callback (not a script's own evaluation that dispatched an event
/// synchronously) and has none yet.
pub fn entered(name: String) {
    let _ = CURRENT.try_with(|c| {
        let Some(r) = &*c.borrow() else { return };
        if !r.is_recording() {
            return;
        }
        let mut state = r.state();
        let Some(live) = &mut state.live else { return };
        let Some(&id) = live.stack.last() else { return };
        if let Some(crate::event::RawEvent {
            details:
                Details::ThreadEvaluation {
                    kind,
                    function: function @ None,
                    ..
                },
            ..
        }) = live.events.get_mut(id as usize - 1)
        {
            use crate::event::EvalKind::{EventHandler, Interval, Message, Timeout, WorkerMessage};
            if matches!(
                kind,
                EventHandler | Interval | Message | Timeout | WorkerMessage
            ) {
                *function = Some(name);
            }
        }
    });
}
