//! The group's two threads around [`SamplerCore`]: the sampler thread (`run`: wakes at
//! the core's next pick, serves control messages and agents' answers, hands stopped
//! sessions to the builder) and the trace builder thread (`run_builder`).

use std::sync::Arc;
use std::time::Duration;

use crossbeam_channel::{select, Receiver, Sender};

use crate::agent::Answer;
use crate::sampler::{BuildRequest, Control, SamplerCore, SamplerStats, Stopped};
use crate::time::{Clock, Nanos};

/// A stopped session and who wants its trace.
pub(crate) type BuildJob = (Stopped, BuildRequest);

/// The group's trace builder thread: builds each stopped session's trace and hands it over,
/// in the order the sessions stopped. It lives as long as its group (parked while there is
/// nothing to build), so that `stop()` does not wait for a thread to be created (~0.2 ms
/// here). A job whose time is up is dropped unbuilt, and one whose time runs out while it
/// is built is abandoned there. A job that panics is lost, not the thread.
pub(crate) fn run_builder(jobs: Receiver<BuildJob>, clock: Arc<dyn Clock>) {
    for (stopped, request) in jobs {
        let clock = &*clock;
        let built = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
            build(stopped, request, clock)
        }));
        if built.is_err() {
            eprintln!("jsprof: building a trace failed; that trace is lost");
        }
    }
}

/// Builds a stopped session's trace for `request`, unless its time runs out first.
fn build(stopped: Stopped, request: BuildRequest, clock: &dyn Clock) {
    let BuildRequest { done, by } = request;
    let out_of_time = || by.is_some_and(|by| clock.now() >= by);
    if out_of_time() {
        return;
    }
    if let Some(trace) = stopped
        .recorder
        .build_unless(&*stopped.symbolizer, out_of_time)
    {
        done(trace);
    }
}

/// Hands the sessions that have ended to the builder thread.
fn hand_over(core: &mut SamplerCore, builder: &Sender<BuildJob>, clock: &dyn Clock) {
    for (stopped, request) in core.take_finished() {
        build_elsewhere(stopped, request, builder, clock);
    }
}

/// Hands a stopped session to the builder thread, if anyone wants its trace.
fn build_elsewhere(
    stopped: Stopped,
    request: Option<BuildRequest>,
    builder: &Sender<BuildJob>,
    clock: &dyn Clock,
) {
    let Some(request) = request else { return };
    if let Err(crossbeam_channel::SendError((stopped, request))) = builder.send((stopped, request))
    {
        // The builder is gone (only if it could not be started): build here.
        build(stopped, request, clock);
    }
}

/// How often the sampler looks whether a request forced samples wait on can still be
/// answered.
const FORCED_POLL: Duration = Duration::from_millis(1);

/// Base intervals below this wake the sampler thread as soon as an agent answers.
const WAKE_ON_ANSWERS_BELOW: Nanos = 10_000_000;

/// The sampler thread's loop. Returns when told to shut down or when the group is gone.
pub(crate) fn run(
    mut core: SamplerCore,
    clock: Arc<dyn Clock>,
    control: Receiver<Control>,
    answers: Receiver<Answer>,
    totals: Arc<std::sync::Mutex<SamplerStats>>,
    builder: Sender<BuildJob>,
) {
    run_loop(&mut core, clock, control, answers, &builder);
    // What this run counted joins the group's totals.
    let mut totals = totals.lock().unwrap_or_else(|e| e.into_inner());
    totals.add(&with_thread_cpu(core.stats()));
}

/// `stats` with the calling (sampler) thread's CPU time so far.
fn with_thread_cpu(stats: SamplerStats) -> SamplerStats {
    #[cfg(target_os = "linux")]
    let thread_cpu = nix::time::clock_gettime(nix::time::ClockId::CLOCK_THREAD_CPUTIME_ID)
        .map_or(0, |t| {
            t.tv_sec() as u64 * 1_000_000_000 + t.tv_nsec() as u64
        });
    #[cfg(not(target_os = "linux"))]
    let thread_cpu = 0;
    SamplerStats {
        thread_cpu,
        ..stats
    }
}

fn run_loop(
    core: &mut SamplerCore,
    clock: Arc<dyn Clock>,
    control: Receiver<Control>,
    answers: Receiver<Answer>,
    builder: &Sender<BuildJob>,
) {
    // Linux lets a sleeping thread wake up to 50 µs late by default ("timer slack"), which is
    // most of the tick jitter at a 1 ms base; the sampler asks for 1 µs.
    #[cfg(target_os = "linux")]
    let _ = nix::sys::prctl::set_timerslack(1_000);
    // Waking on an answer is what keeps a fine grid punctual (the agent's wake-up hands the
    // sampler the CPU at once, where a timer wake-up can wait behind busy threads: without
    // it, 10-15% of 1 ms ticks were missed while SpiderMonkey's JIT threads were busy). But
    // the wake-up is paid by the agent, inside its interrupt callback: ~35 µs a sample when
    // samples are 20 ms apart and caches are cold, most of the budget there. So only a fine
    // base wakes the sampler on answers; a coarse one takes them when it wakes for a tick
    // or a control message, and loses nothing to a few ms of lateness.
    let never = crossbeam_channel::never();
    let fine = core.base < WAKE_ON_ANSWERS_BELOW;
    // Told to shut down: it ends once no stopped session waits for its ticks' stacks.
    let mut shutting_down = false;
    loop {
        // Forced samples and stopping sessions waiting for an answer wake the sampler too:
        // their waiter (a WebDriver command, a `stop()`) is answered when they are recorded.
        let woken_by_answers = if fine || core.forcing() || core.is_stopping() {
            &answers
        } else {
            &never
        };
        while let Ok(answer) = answers.try_recv() {
            core.on_answer(answer);
        }
        let now = clock.now();
        core.poll_walks(now);
        core.poll_stopping(now);
        hand_over(core, builder, &*clock);
        if shutting_down && !core.is_stopping() {
            return;
        }
        let next = core.next_wake();
        // With nothing due, wake only for messages; while forced samples wait for an
        // answer, every millisecond to see whether it can still come.
        let mut timeout = next.map_or(Duration::from_secs(3600), |at| {
            Duration::from_nanos(at.saturating_sub(now))
        });
        if core.forcing() {
            timeout = timeout.min(FORCED_POLL);
        }
        // A walk pending on an agent's thread (waiting for a CPU) is looked at soon.
        if let Some(poll) = core.walk_poll_in(now) {
            timeout = timeout.min(Duration::from_nanos(poll));
        }
        if let Some(poll) = core.stop_poll_in(now) {
            timeout = timeout.min(Duration::from_nanos(poll));
        }
        select! {
            recv(control) -> msg => {
                while let Ok(answer) = answers.try_recv() {
                    core.on_answer(answer);
                }
                let now = clock.now();
                // A walk taken since the last look serves its ticks before a stop would
                // close them without a stack.
                core.poll_walks(now);
                match msg {
                Ok(Control::Start(s)) => core.start(*s, now),
                Ok(Control::Pause(id)) => core.set_paused(id, true, now),
                Ok(Control::Resume(id)) => core.set_paused(id, false, now),
                Ok(Control::Stop(id, done)) => core.stop_for(id, now, done),
                Ok(Control::Restart(id, done, on_full)) => {
                    if let Some(stopped) = core.restart(id, now, on_full) {
                        build_elsewhere(stopped, Some(done), builder, &*clock);
                    }
                }
                Ok(Control::Force(sessions, done)) => core.force(&sessions, now, done),
                Ok(Control::Stats(reply)) => {
                    let _ = reply.send(with_thread_cpu(core.stats()));
                }
                // It ends once no stopped session waits for its ticks' stacks.
                Ok(Control::Shutdown) => shutting_down = true,
                Err(_) => {
                    // The group let go of this thread (a new one starts, or the group is
                    // gone): what still waits ends now.
                    core.poll_stopping(Nanos::MAX);
                    shutting_down = true;
                }
            }},
            recv(woken_by_answers) -> answer => {
                if let Ok(answer) = answer {
                    core.on_answer(answer);
                }
            },
            default(timeout) => {
                while let Ok(answer) = answers.try_recv() {
                    core.on_answer(answer);
                }
                core.poll_forced();
                core.on_wake(clock.now());
            },
        }
    }
}
