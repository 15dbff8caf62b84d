//! The `Profiler` interface (<https://wicg.github.io/js-self-profiling/#the-profiler-interface>).
//!
//! A `Profiler` owns one profiling session of the process's `ProfilerGroup`. Its reflector is
//! kept alive while the session runs (it may still fire `samplebufferfull`) and until the
//! `stop()` promise is settled.
//!
//! Beyond the spec, behind the pref `dom.profiler.proposals.enabled`
//! (`webidl/proposals/`, README "Beyond the spec"): `ProfilerInitOptions.format`
//! (`"json-gzip"`: the promises resolve with the trace's JSON gzipped, in an ArrayBuffer),
//! `ProfilerInitOptions.bufferPolicy` (`"ring"`: a full buffer drops its oldest samples) and
//! `restart()`. Without the pref the bindings read neither member and define no `restart`.

use std::time::{Duration, Instant};

use jsprof_profiler::{BufferFullCallback, BufferPolicy, ProfilerTrace, Session};

use crate::policy::ProfilingPolicy;
use jsprof_script_bindings::generated::{
    ProfilerInitOptions, ProfilerMethods, ProfilerTraceFormat,
};
use jsprof_script_bindings::host::Global;
use jsprof_script_bindings::runtime::{
    DomObject, Error, Fallible, Out, Promise, Reflector, ReflectorHandle, ToJs, WindowId,
};
use jsprof_script_bindings::task::TaskSender;

thread_local! {
    /// Main-thread time spent stopping this thread's profilers: `stop()` itself and the
    /// task that resolves its promise (turning the trace's JSON into JS objects).
    static STOP_COST: std::cell::Cell<(u32, Duration)> = const { std::cell::Cell::new((0, Duration::ZERO)) };
}

fn add_stop_cost(stops: u32, time: Duration) {
    STOP_COST.with(|c| {
        let (n, t) = c.get();
        c.set((n + stops, t + time));
    });
}

/// How many profilers this thread stopped, and the main-thread time that took in total.
pub fn main_thread_stop_cost() -> (u32, Duration) {
    STOP_COST.with(|c| c.get())
}

/// A `Profiler` DOM object.
#[derive(Debug)]
pub struct Profiler {
    reflector: Reflector,
    /// Shared with the host, which stops it at the end of the run if the page did not.
    session: std::sync::Arc<Session>,
    /// The window whose event loop runs the profiler's tasks.
    window: WindowId,
    /// What `stop()` and `restart()` resolve with: the trace, or its JSON gzipped.
    format: ProfilerTraceFormat,
    /// Where `samplebufferfull` is fired (the reflector, once it exists).
    target: ReflectorHandle,
}

/// The buffer-full notification of a profiler: a task firing `samplebufferfull` at it
/// (decision 4 of the brief).
fn buffer_full(tasks: TaskSender, window: WindowId, target: ReflectorHandle) -> BufferFullCallback {
    Box::new(move || {
        tasks.queue(Box::new(move |js| {
            if let Some(&target) = target.get() {
                js.fire_event(window, target, "samplebufferfull");
            }
        }));
    })
}

/// What a profiler's promise resolves with, made where the trace is built (the group's
/// builder thread), never on the script thread: the trace as JS values, or (json-gzip, seed
/// 004) its JSON gzipped in an ArrayBuffer: the very JSON the trace's JS value is parsed
/// from.
fn trace_value(trace: &ProfilerTrace, format: ProfilerTraceFormat) -> Out {
    match format {
        ProfilerTraceFormat::Json => trace.to_js(),
        ProfilerTraceFormat::JsonGzip => Out::ArrayBuffer(trace.to_json_gzip()),
    }
}

impl Profiler {
    /// What `stop()` and `restart()` hand their trace to, on the group's builder thread: it
    /// makes the promise's value there (`trace_value`), keeps the trace for `--trace-out`,
    /// and queues the task on this profiler's event loop that resolves `promise`, and then
    /// lets go of `keep` (stop's root of the reflector).
    fn deliver(
        &self,
        global: &Global,
        promise: Promise<ProfilerTrace>,
        keep: impl Send + 'static,
    ) -> impl FnOnce(ProfilerTrace) + Send + 'static {
        let pending = global.host.tasks(self.window).expect();
        let sink = global.host.trace_sink();
        let (window, format) = (self.window, self.format);
        move |trace| {
            let value = trace_value(&trace, format);
            if let Some(sink) = sink {
                sink.lock().unwrap_or_else(|e| e.into_inner()).push(trace);
            }
            pending.queue(Box::new(move |js| {
                let start = Instant::now();
                js.settle(window, promise.resolved_with(value));
                drop(keep);
                add_stop_cost(0, start.elapsed());
            }));
        }
    }
}

impl DomObject for Profiler {
    fn reflector(&self) -> &Reflector {
        &self.reflector
    }
}

impl ProfilerMethods for Profiler {
    /// <https://wicg.github.io/js-self-profiling/#dom-profiler-profiler>
    fn constructor(global: &Global, options: ProfilerInitOptions) -> Fallible<Profiler> {
        // (WebIDL already converted `options`: a missing member or a non-finite
        // sampleInterval was a TypeError, maxBufferSize was taken modulo 2^32.)
        // Step 1. If options' sampleInterval is less than 0, throw a RangeError.
        if options.sample_interval < 0.0 {
            return Err(Error::Range(format!(
                "Failed to construct 'Profiler': sampleInterval must be non-negative, got {}.",
                options.sample_interval
            )));
        }
        // Step 2. Get the policy value for "js-profiling" in the Document. If the result is
        // false, throw a "NotAllowedError" DOMException.
        if global.host.js_profiling(global.window) == ProfilingPolicy::Disallowed {
            return Err(Error::not_allowed(
                "Failed to construct 'Profiler': the document's Document-Policy does not allow js-profiling.",
            ));
        }
        // Step 3. Create a new profiling session where: the sample interval is the requested
        // one rounded up to the next supported interval (a multiple of the base interval);
        // the time origin is the current global's; the buffer limit is maxBufferSize; the
        // agent is the surrounding agent and the realm the current realm (the window's);
        // the trace starts empty. Once the buffer is full, `samplebufferfull` is fired at the
        // profiler as a task (decision 4 of the brief).
        //
        // Beyond the spec (the bindings read these members only under the pref
        // `dom.profiler.proposals.enabled`): with bufferPolicy "ring" the buffer keeps the
        // last maxBufferSize samples and is never full
        // (https://github.com/WICG/js-self-profiling/issues/81); with format "json-gzip"
        // the trace is handed over as its JSON, gzipped, in an ArrayBuffer (seed 004).
        let handle: ReflectorHandle = std::sync::Arc::new(std::sync::OnceLock::new());
        let tasks = global.host.tasks(global.window);
        let on_buffer_full = buffer_full(tasks, global.window, handle.clone());
        let session = global
            .host
            .start_profiling(
                global.window,
                options.sample_interval,
                options.max_buffer_size,
                options.buffer_policy.unwrap_or(BufferPolicy::Stop),
                Some(on_buffer_full),
            )
            .map_err(|e| Error::Type(format!("Failed to construct 'Profiler': {e}")))?;
        let session = std::sync::Arc::new(session);
        global
            .host
            .track_session(global.window, std::sync::Arc::downgrade(&session));
        // Step 4. Return a new Profiler associated with the newly created profiling session.
        Ok(Profiler {
            reflector: Reflector::with_handle(handle.clone()),
            session,
            window: global.window,
            format: options.format.unwrap_or(ProfilerTraceFormat::Json),
            target: handle,
        })
    }

    /// <https://wicg.github.io/js-self-profiling/#dom-profiler-sampleinterval>
    fn sample_interval(&self) -> f64 {
        self.session.sample_interval()
    }

    /// <https://wicg.github.io/js-self-profiling/#dom-profiler-stopped>
    fn stopped(&self) -> bool {
        self.session.is_stopped()
    }

    /// <https://wicg.github.io/js-self-profiling/#dom-profiler-stop>
    fn stop(&self, global: &Global, promise: Promise<ProfilerTrace>) -> Fallible<()> {
        // Step 1. If the profiling session's state is stopped, return a promise rejected
        // with an "InvalidStateError" DOMException (the bindings reject `promise`).
        // Step 2. Set the profiling session's state to stopped (atomically, in `stop`).
        let invalid = || Error::invalid_state("Profiler already stopped.");
        if self.session.is_stopped() {
            return Err(invalid());
        }
        let start = Instant::now();
        // The reflector stays alive until the promise settles (events already queued still
        // reach it, through the same root), then lets go.
        let keep = self.reflector.take();
        // Step 3. Let p be a new promise (`promise`, made by the bindings).
        // Step 4. In parallel: stop the profiling session (no sample is taken after this
        // point) and resolve p with its ProfilerTrace: the trace is built and serialised
        // (with json-gzip, also gzipped) on the profiler group's builder thread, and p is
        // resolved by a task on this profiler's event loop.
        self.session
            .stop(self.deliver(global, promise, keep))
            .map_err(|_| invalid())?;
        add_stop_cost(1, start.elapsed());
        // Step 5. Return p.
        Ok(())
    }

    /// `restart()`, a proposal beyond the spec
    /// (<https://github.com/WICG/js-self-profiling/issues/90>), behind the pref
    /// `dom.profiler.proposals.enabled`: the trace so far, while sampling goes on into a
    /// fresh buffer on the same schedule, so that no sample interval is lost between two
    /// consecutive traces (a stop and a new `Profiler` lose the time between the two).
    fn restart(&self, global: &Global, promise: Promise<ProfilerTrace>) -> Fallible<()> {
        // Step 1. If the profiling session's state is stopped, return a promise rejected
        // with an "InvalidStateError" DOMException (the bindings reject `promise`).
        let invalid = || Error::invalid_state("Profiler already stopped.");
        if self.session.is_stopped() {
            return Err(invalid());
        }
        let start = Instant::now();
        // Step 2. Let p be a new promise (`promise`, made by the bindings).
        // Step 3. Hand the samples taken so far over as a trace and give the session an
        // empty buffer, with the same sample interval, buffer size limit, buffer policy and
        // time origin, in the same schedule: the next sample is that of the sample interval
        // the session is in (or of the next one, if that one has its sample already). A
        // buffer that was full is no longer: sampling resumes, and `samplebufferfull` is
        // fired again when the new buffer fills.
        let refill = buffer_full(
            global.host.tasks(self.window),
            self.window,
            self.target.clone(),
        );
        // Step 4. In parallel: resolve p with the handed-over samples' ProfilerTrace (or,
        // with json-gzip, its JSON gzipped in an ArrayBuffer), built on the profiler group's
        // builder thread, by a task on this profiler's event loop. `--trace-out` keeps the
        // trace as it keeps stop()'s.
        self.session
            .restart(self.deliver(global, promise, ()), Some(refill))
            .map_err(|_| invalid())?;
        add_stop_cost(1, start.elapsed());
        // Step 5. Return p.
        Ok(())
    }
}
