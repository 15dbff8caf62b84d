//! The per-process [`ProfilerGroup`] and the host's [`Session`] handles.

use std::fmt;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use crossbeam_channel::{unbounded, Receiver, Sender};

use crate::agent::{AgentHandle, AgentId, Answer};
use crate::frame::{RealmId, Symbolizer};
use crate::interval::{Base, IntervalError, DEFAULT_BASE, MIN_BASE};
use crate::recorder::{BufferPolicy, Recorder};
use crate::sampler::{
    BufferFullCallback, BuildRequest, Control, SamplerCore, SamplerStats, SessionId, SessionStart,
    DEFAULT_MAX_BUFFERED,
};
use crate::time::{Clock, MonotonicClock, Nanos, Resolution};
use crate::trace::{MarkerSet, ProfilerTrace};

/// How a group is set up by its embedder.
#[derive(Debug, Clone)]
pub struct GroupConfig {
    /// The base interval; at least 1 ms.
    pub base_interval: Duration,
    /// The clock for deadlines and timestamps.
    pub clock: Arc<dyn Clock>,
    /// The seed of the sampler's randomised tick times (`None`: a random one per process).
    /// Tests fix it to be deterministic.
    pub seed: Option<u64>,
    /// Run on the sampler thread as it starts, before its first tick: the host's chance to
    /// tune the thread for punctual wake-ups (a scheduler slice, a priority).
    pub on_sampler_thread: Option<fn()>,
    /// How many samples the unstopped sessions may hold between them (12 bytes each, besides
    /// their interned stacks). Once it has run out, each session is held to its fair share
    /// (this divided by the unstopped sessions): one at its share that would take one more
    /// is full, as at its own `maxBufferSize` (a ring buffer drops its own oldest instead),
    /// and one below its share takes room from those above it, which are cut down to the
    /// share: a ring loses its oldest samples, any other its newest, and is full, its host
    /// told as at `maxBufferSize` (see [`sampler`](crate::sampler), "Fair shares").
    pub max_buffered_samples: u64,
}

impl Default for GroupConfig {
    fn default() -> Self {
        GroupConfig {
            base_interval: DEFAULT_BASE,
            clock: Arc::new(MonotonicClock),
            seed: None,
            on_sampler_thread: None,
            max_buffered_samples: DEFAULT_MAX_BUFFERED,
        }
    }
}

/// The trace builder thread's stack. Symbolizers run there, and a host's may parse page
/// scripts with a recursive-descent parser that has no depth limit of its own (jsprof's
/// uses oxc): 64 MB is 64 times the 1 MB stack SpiderMonkey allows its own parser, so any
/// script the engine compiled can be parsed here. Only what is touched is ever committed.
const BUILDER_STACK: usize = 64 << 20;

/// A seed nobody can predict: std's per-process random hasher keys.
fn random_seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(MonotonicClock.now());
    h.finish()
}

/// A configuration the group refuses.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("the base interval must be at least {MIN_BASE:?}, not {0:?}")]
    BaseTooSmall(Duration),
}

/// `stop()` on a session already stopped (the host throws `InvalidStateError`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the profiler is already stopped")]
pub struct AlreadyStopped;

/// A session's state (<https://wicg.github.io/js-self-profiling/#profiling-sessions>).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionState {
    Started,
    Paused,
    Stopped,
}

/// What a host gives to start a session (the spec's "create a new profiling session").
pub struct SessionOptions {
    /// The agent to profile.
    pub agent: AgentHandle,
    /// The realm to profile: frames of other realms are dropped.
    pub realm: RealmId,
    /// The requested interval in ms (rounded up to a multiple of the base).
    pub sample_interval: f64,
    /// The sample buffer size limit.
    pub max_buffer_size: u32,
    /// What a full buffer does: the spec's [`BufferPolicy::Stop`], or a ring buffer.
    pub buffer_policy: BufferPolicy,
    /// The time origin of the profiler's global, on the group's clock.
    pub time_origin: Nanos,
    /// Whether the context is cross-origin isolated (5 µs timestamps instead of 100 µs).
    pub cross_origin_isolated: bool,
    /// The markers the session's samples may carry (markers extension;
    /// [`MarkerSet::for_context`]).
    pub markers: MarkerSet,
    /// Names and resources of the host's scripts, used when the trace is built.
    pub symbolizer: Arc<dyn Symbolizer>,
    /// Called once, on the sampler thread, when the buffer is found full.
    pub on_buffer_full: Option<BufferFullCallback>,
    /// Start in the paused state (the profiler's document is hidden): no samples until
    /// [`Session::resume`].
    pub paused: bool,
}

impl fmt::Debug for SessionOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SessionOptions")
            .field("agent", &self.agent.id())
            .field("realm", &self.realm)
            .field("sample_interval", &self.sample_interval)
            .field("max_buffer_size", &self.max_buffer_size)
            .field("buffer_policy", &self.buffer_policy)
            .finish_non_exhaustive()
    }
}

struct SamplerThread {
    control: Sender<Control>,
    join: JoinHandle<()>,
}

impl SamplerThread {
    /// Waits for a thread told to shut down, dropping its control channel first so that it
    /// does not wait for the last stacks of its stopped sessions.
    fn hurry_and_join(self) {
        drop(self.control);
        let _ = self.join.join();
    }
}

#[derive(Default)]
struct GroupState {
    sampler: Option<SamplerThread>,
    /// The last sampler thread, told to shut down and not joined yet: joining it is left to
    /// the next start (by then it is long gone), so that `stop()` never waits for a thread.
    /// It ends once its stopped sessions have their last stacks (at most
    /// [`STOP_WAIT`](crate::sampler::STOP_WAIT)), or at once when its control channel is
    /// dropped, which is how the next start hurries it.
    exiting: Option<SamplerThread>,
    /// Sessions not yet stopped (paused and full ones included).
    live: usize,
    /// The trace builder thread's queue, once the first session started.
    builder: Option<Sender<crate::threads::BuildJob>>,
}

struct GroupShared {
    base: Base,
    clock: Arc<dyn Clock>,
    seed: Option<u64>,
    on_sampler_thread: Option<fn()>,
    max_buffered: u64,
    answers_tx: Sender<Answer>,
    answers_rx: Receiver<Answer>,
    state: Mutex<GroupState>,
    /// The counters of every sampler run that ended.
    totals: Arc<Mutex<SamplerStats>>,
    next_session: AtomicU64,
    next_agent: AtomicU32,
}

impl GroupShared {
    fn send(&self, msg: Control) {
        let state = self.state.lock().expect("group lock");
        if let Some(sampler) = &state.sampler {
            // The thread only goes away after Shutdown, which is sent under this lock.
            let _ = sampler.control.send(msg);
        }
    }

    fn stop(&self, id: SessionId, done: Option<BuildRequest>) {
        let mut state = self.state.lock().expect("group lock");
        let Some(sampler) = &state.sampler else {
            return;
        };
        let _ = sampler.control.send(Control::Stop(id, done));
        state.live -= 1;
        if state.live == 0 {
            let sampler = state.sampler.take().expect("checked above");
            let _ = sampler.control.send(Control::Shutdown);
            // Not joined here: it only has Stop and Shutdown left to handle, and the
            // stopped sessions' last stacks to wait for.
            state.exiting = Some(sampler);
        }
    }
}

/// One per process: owns at most one sampler thread, started with the first session and ended
/// when none is left. Cheap to clone (a handle).
#[derive(Clone)]
pub struct ProfilerGroup {
    shared: Arc<GroupShared>,
}

impl fmt::Debug for ProfilerGroup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProfilerGroup")
            .field("base", &self.shared.base)
            .field("sampler_running", &self.sampler_running())
            .finish()
    }
}

impl ProfilerGroup {
    pub fn new(config: GroupConfig) -> Result<Self, ConfigError> {
        let base = Base::new(config.base_interval)
            .ok_or(ConfigError::BaseTooSmall(config.base_interval))?;
        let (answers_tx, answers_rx) = unbounded();
        Ok(ProfilerGroup {
            shared: Arc::new(GroupShared {
                base,
                clock: config.clock,
                seed: config.seed,
                on_sampler_thread: config.on_sampler_thread,
                max_buffered: config.max_buffered_samples,
                answers_tx,
                answers_rx,
                state: Mutex::new(GroupState::default()),
                totals: Arc::default(),
                next_session: AtomicU64::new(1),
                next_agent: AtomicU32::new(1),
            }),
        })
    }

    /// The base interval.
    pub fn base_interval(&self) -> Duration {
        self.shared.base.duration()
    }

    /// The group's clock (hosts use it for `performance.now()`, decision 7).
    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.shared.clock
    }

    /// The interval a session requesting `requested` ms gets, in ms.
    pub fn effective_interval(&self, requested: f64) -> Result<f64, IntervalError> {
        let base = self.shared.base;
        Ok(base.ms(base.ticks_for(requested)?))
    }

    /// Registers a JS thread sampled by request. `requester` must make the agent's thread
    /// call its interrupt callback soon (it is called on the sampler thread and must not
    /// block).
    pub fn register_agent(&self, requester: impl Fn() + Send + Sync + 'static) -> AgentHandle {
        self.register(Box::new(requester), None)
    }

    /// Registers a JS thread whose stack `sampler` takes from the sampler thread at each
    /// tick; `requester` serves the ticks `sampler` says it cannot.
    pub fn register_sampled_agent(
        &self,
        requester: impl Fn() + Send + Sync + 'static,
        sampler: impl crate::agent::StackSampler + 'static,
    ) -> AgentHandle {
        self.register(Box::new(requester), Some(Box::new(sampler)))
    }

    fn register(
        &self,
        requester: Box<dyn Fn() + Send + Sync>,
        sampler: Option<Box<dyn crate::agent::StackSampler>>,
    ) -> AgentHandle {
        let id = AgentId(self.shared.next_agent.fetch_add(1, Ordering::Relaxed));
        AgentHandle::new(
            id,
            requester,
            sampler,
            self.shared.answers_tx.clone(),
            self.shared.clock.clone(),
        )
    }

    /// create a new profiling session (constructor step 3), in the started state.
    pub fn start_session(&self, options: SessionOptions) -> Result<Session, IntervalError> {
        let base = self.shared.base;
        let every = base.ticks_for(options.sample_interval)?;
        let id = SessionId(self.shared.next_session.fetch_add(1, Ordering::Relaxed));
        let recorder = Recorder::new(
            options.realm,
            options.time_origin,
            Resolution::for_context(options.cross_origin_isolated),
            options.max_buffer_size,
        )
        .with_markers(options.markers)
        .with_policy(options.buffer_policy);
        let start = SessionStart {
            id,
            agent: options.agent.0.clone(),
            every,
            recorder,
            symbolizer: options.symbolizer,
            on_full: options.on_buffer_full,
            paused: options.paused,
            started_at: self.shared.clock.now(),
        };
        {
            let mut state = self.shared.state.lock().expect("group lock");
            if state.sampler.is_none() {
                // The previous sampler (if any) shut down already; it must be gone before a
                // new one reads the answers channel.
                if let Some(old) = state.exiting.take() {
                    old.hurry_and_join();
                }
                let (control, control_rx) = unbounded();
                let seed = self.shared.seed.unwrap_or_else(random_seed);
                let core = SamplerCore::new(base.nanos(), self.shared.clock.now(), seed)
                    .with_budget(self.shared.max_buffered);
                let clock = self.shared.clock.clone();
                let answers = self.shared.answers_rx.clone();
                let totals = self.shared.totals.clone();
                let setup = self.shared.on_sampler_thread;
                let builder = match &state.builder {
                    Some(builder) => builder.clone(),
                    None => {
                        let (jobs, jobs_rx) = unbounded();
                        let clock = self.shared.clock.clone();
                        std::thread::Builder::new()
                            .name("jsprof-trace".into())
                            .stack_size(BUILDER_STACK)
                            .spawn(move || crate::threads::run_builder(jobs_rx, clock))
                            .expect("cannot start the trace builder thread");
                        state.builder.insert(jobs).clone()
                    }
                };
                let join = std::thread::Builder::new()
                    .name("jsprof-sampler".into())
                    .spawn(move || {
                        if let Some(setup) = setup {
                            setup();
                        }
                        crate::threads::run(core, clock, control_rx, answers, totals, builder)
                    })
                    .expect("cannot start the sampler thread");
                state.sampler = Some(SamplerThread { control, join });
            }
            state.live += 1;
            let sampler = state.sampler.as_ref().expect("ensured above");
            let _ = sampler.control.send(Control::Start(Box::new(start)));
        }
        Ok(Session {
            id,
            group: self.shared.clone(),
            interval: base.ms(every),
            state: AtomicU8::new(if options.paused { PAUSED } else { STARTED }),
        })
    }

    /// WebDriver's Force Sample (<https://wicg.github.io/js-self-profiling/#automation>),
    /// steps 2–3 for the sessions the host found in the current browsing context: each one
    /// in the started state takes a sample now, through the same capture, filtering and
    /// buffer rules as a timed sample. Returns once the samples are recorded (or after
    /// `timeout`, false then), with how many sessions were asked.
    pub fn force_sample<'a>(
        &self,
        sessions: impl IntoIterator<Item = &'a Session>,
        timeout: Duration,
    ) -> (usize, bool) {
        let ids: Vec<SessionId> = sessions
            .into_iter()
            .filter(|s| s.state() == SessionState::Started)
            .map(|s| s.id)
            .collect();
        let asked = ids.len();
        if ids.is_empty() {
            return (0, true);
        }
        let (done, waiter) = crossbeam_channel::bounded::<()>(0);
        self.shared.send(Control::Force(ids, done));
        // Nothing is ever sent: the waiter returns when the sampler dropped every clone.
        let recorded = matches!(
            waiter.recv_timeout(timeout),
            Err(crossbeam_channel::RecvTimeoutError::Disconnected)
        );
        (asked, recorded)
    }

    /// Whether the sampler thread is running.
    pub fn sampler_running(&self) -> bool {
        self.shared
            .state
            .lock()
            .expect("group lock")
            .sampler
            .is_some()
    }

    /// The counters of every sampler run so far, the running one included.
    pub fn total_stats(&self) -> SamplerStats {
        // A sampler that was told to end adds its counters as it ends: wait for it.
        let exiting = self
            .shared
            .state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .exiting
            .take();
        if let Some(thread) = exiting {
            thread.hurry_and_join();
        }
        // The running one, if any, is asked.
        let live = self.stats();
        let mut total = self
            .shared
            .totals
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        if let Some(live) = live {
            total.add(&live);
        }
        total
    }

    /// The sampler's counters, if it is running.
    pub fn stats(&self) -> Option<SamplerStats> {
        let (tx, rx) = crossbeam_channel::bounded(1);
        self.shared.send(Control::Stats(tx));
        rx.recv_timeout(Duration::from_secs(5)).ok()
    }
}

const STARTED: u8 = 0;
const PAUSED: u8 = 1;
const STOPPED: u8 = 2;

/// The host's handle on one profiling session. Dropping it stops the session and discards
/// its trace.
pub struct Session {
    id: SessionId,
    group: Arc<GroupShared>,
    interval: f64,
    state: AtomicU8,
}

impl fmt::Debug for Session {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Session")
            .field("id", &self.id)
            .field("interval", &self.interval)
            .field("state", &self.state())
            .finish()
    }
}

impl Session {
    /// The sample interval actually used, in ms (the `sampleInterval` attribute).
    pub fn sample_interval(&self) -> f64 {
        self.interval
    }

    pub fn state(&self) -> SessionState {
        match self.state.load(Ordering::Acquire) {
            STARTED => SessionState::Started,
            PAUSED => SessionState::Paused,
            _ => SessionState::Stopped,
        }
    }

    /// The `stopped` attribute.
    pub fn is_stopped(&self) -> bool {
        self.state() == SessionState::Stopped
    }

    /// Moves a started session to paused (its document is hidden, decision 8).
    pub fn pause(&self) {
        if self
            .state
            .compare_exchange(STARTED, PAUSED, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            self.group.send(Control::Pause(self.id));
        }
    }

    /// Moves a paused session back to started.
    pub fn resume(&self) {
        if self
            .state
            .compare_exchange(PAUSED, STARTED, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            self.group.send(Control::Resume(self.id));
        }
    }

    /// Stops the session; `done` gets the trace, built on another thread.
    /// A stopped session cannot be stopped again.
    pub fn stop(
        &self,
        done: impl FnOnce(ProfilerTrace) + Send + 'static,
    ) -> Result<(), AlreadyStopped> {
        self.stop_with(done, None)
    }

    /// Stops the session; `done` gets the trace if it can be built within `limit` from now.
    /// Otherwise the build is abandoned and `done` is dropped without being called (the end
    /// of a run with a deadline).
    pub fn stop_within(
        &self,
        limit: Duration,
        done: impl FnOnce(ProfilerTrace) + Send + 'static,
    ) -> Result<(), AlreadyStopped> {
        let by = self
            .group
            .clock
            .now()
            .saturating_add(limit.as_nanos().min(u128::from(u64::MAX)) as u64);
        self.stop_with(done, Some(by))
    }

    fn stop_with(
        &self,
        done: impl FnOnce(ProfilerTrace) + Send + 'static,
        by: Option<Nanos>,
    ) -> Result<(), AlreadyStopped> {
        if self.state.swap(STOPPED, Ordering::AcqRel) == STOPPED {
            return Err(AlreadyStopped);
        }
        let done: crate::sampler::TraceCallback = Box::new(done);
        self.group.stop(self.id, Some(BuildRequest { done, by }));
        Ok(())
    }

    /// Restarts the session (WICG js-self-profiling#90, `profiler.restart()`): `done` gets
    /// the trace of the samples so far, built on another thread as at a stop, while the
    /// session goes on sampling into a fresh buffer on the same schedule: the next sample
    /// is the one of the block the session is in (or of the next block, if that one was
    /// taken), so no interval is lost. `on_full`, if given, is called when the fresh buffer
    /// fills (a buffer that was full has already called its own).
    /// A stopped session cannot be restarted.
    pub fn restart(
        &self,
        done: impl FnOnce(ProfilerTrace) + Send + 'static,
        on_full: Option<BufferFullCallback>,
    ) -> Result<(), AlreadyStopped> {
        if self.is_stopped() {
            return Err(AlreadyStopped);
        }
        let done: crate::sampler::TraceCallback = Box::new(done);
        self.group.send(Control::Restart(
            self.id,
            BuildRequest { done, by: None },
            on_full,
        ));
        Ok(())
    }

    /// Stops the session and discards its samples: no trace is built (nobody will read it).
    /// What dropping the last handle does too.
    pub fn discard(&self) {
        if self.state.swap(STOPPED, Ordering::AcqRel) != STOPPED {
            self.group.stop(self.id, None);
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.discard();
    }
}
