//! The real sampler thread with real time. Assertions have wide margins: they check that
//! sampling happens and what it records, never how punctually.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crossbeam_channel::bounded;
use jsprof_profiler::{
    AgentHandle, GroupConfig, MonotonicClock, NoScripts, ProfilerGroup, ProfilerTrace, RawFrame,
    RawStack, RealmId, SessionOptions, SessionState,
};

fn group(base_ms: u64) -> ProfilerGroup {
    ProfilerGroup::new(GroupConfig {
        base_interval: Duration::from_millis(base_ms),
        clock: Arc::new(MonotonicClock),
        ..GroupConfig::default()
    })
    .unwrap()
}

fn options(agent: &AgentHandle, interval: f64, max: u32) -> SessionOptions {
    SessionOptions {
        agent: agent.clone(),
        realm: RealmId(1),
        sample_interval: interval,
        max_buffer_size: max,
        buffer_policy: jsprof_profiler::BufferPolicy::Stop,
        time_origin: 0,
        cross_origin_isolated: false,
        markers: jsprof_profiler::MarkerSet::NONE,
        symbolizer: Arc::new(NoScripts),
        on_buffer_full: None,
        paused: false,
    }
}

fn stop(session: &jsprof_profiler::Session) -> ProfilerTrace {
    let (tx, rx) = bounded(1);
    session.stop(move |t| tx.send(t).unwrap()).unwrap();
    rx.recv_timeout(Duration::from_secs(10)).expect("a trace")
}

/// A fake JS thread: "runs script" while `busy`, polling for interrupts like SpiderMonkey's
/// loop back-edges do, and answers with a fixed stack.
fn busy_agent(
    g: &ProfilerGroup,
    busy: Arc<AtomicBool>,
) -> (AgentHandle, std::thread::JoinHandle<()>) {
    let flag = Arc::new(AtomicBool::new(false));
    let f = flag.clone();
    let agent = g.register_agent(move || f.store(true, Ordering::SeqCst));
    let a = agent.clone();
    let thread = std::thread::spawn(move || {
        let stack: RawStack = Arc::from(vec![RawFrame::resolved(
            RealmId(1),
            None,
            "spin",
            None,
            None,
        )]);
        a.in_script(|| {
            while busy.load(Ordering::SeqCst) {
                if flag.swap(false, Ordering::SeqCst) {
                    if let Some(req) = a.take_request() {
                        a.answer(req, stack.clone());
                    }
                }
                std::hint::spin_loop();
            }
        })
    });
    (agent, thread)
}

/// Waits until the group's sampler has ticked `n` times (at most a minute).
fn wait_for_ticks(g: &ProfilerGroup, n: u64) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while g.stats().map_or(0, |s| s.ticks) < n && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn the_sampler_thread_lives_exactly_as_long_as_its_sessions() {
    let g = group(1);
    let agent = g.register_agent(|| {});
    assert!(!g.sampler_running());
    let s1 = g.start_session(options(&agent, 1.0, 1000)).unwrap();
    let s2 = g.start_session(options(&agent, 3.0, 1000)).unwrap();
    assert!(g.sampler_running());
    // Until the sampler has ticked enough (not a fixed sleep: a loaded machine may starve it).
    wait_for_ticks(&g, 30);
    assert_eq!(g.stats().unwrap().plan_ticks, 1);
    let t1 = stop(&s1);
    assert!(g.sampler_running());
    assert_eq!(g.stats().unwrap().plan_ticks, 3);
    let t2 = stop(&s2);
    assert!(!g.sampler_running());
    // Idle agent: stackless samples, roughly one per interval.
    assert!(t1.samples.len() >= 5, "{}", t1.samples.len());
    // (Not compared with t1: a stall of the machine between the two stops could give s2,
    // which ran longer, as many samples.)
    assert!(t2.samples.len() >= 2);
    assert!(t1.samples.iter().all(|s| s.stack_id.is_none()));
    // A new session starts a new sampler.
    let s3 = g.start_session(options(&agent, 1.0, 1000)).unwrap();
    assert!(g.sampler_running());
    drop(s3);
    assert!(!g.sampler_running());
}

#[test]
fn a_busy_agent_is_sampled_through_its_interrupts() {
    let g = group(1);
    let busy = Arc::new(AtomicBool::new(true));
    let (agent, thread) = busy_agent(&g, busy.clone());
    while !agent.is_in_script() {
        std::thread::yield_now();
    }
    let session = g.start_session(options(&agent, 2.0, 10_000)).unwrap();
    let start = Instant::now();
    // Until 10 ticks were answered in time (state, not time). On a loaded machine the
    // agent's thread may answer more than MAX_ANSWER_DELAY late, and such a tick rightly
    // gets no stack: the test counts answers, not ticks, and never bounds their share.
    let deadline = Instant::now() + Duration::from_secs(120);
    while g.stats().map_or(0, |s| s.answered) < 10 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
    let trace = stop(&session);
    busy.store(false, Ordering::SeqCst);
    thread.join().unwrap();
    let stats = g.total_stats();
    let elapsed_ms = start.elapsed().as_millis() as usize;
    let n = trace.samples.len();
    assert!(
        n >= 10 && n <= elapsed_ms / 2 + 2,
        "{n} samples in {elapsed_ms} ms"
    );
    let with_stack = trace
        .samples
        .iter()
        .filter(|s| s.stack_id.is_some())
        .count();
    // Exactly the ticks answered in time have a stack; the agent never left the script.
    assert_eq!(with_stack as u64, stats.answered, "{stats:?}");
    assert!(with_stack >= 10);
    assert_eq!(stats.idle, 0);
    assert_eq!(trace.frames.len(), 1);
    assert_eq!(trace.frames[0].name, "spin");
    // Timestamps never decrease (two random picks in adjacent blocks may floor to the same
    // 100 µs) and sit on the 100 µs grid.
    assert!(trace
        .samples
        .windows(2)
        .all(|w| w[0].timestamp <= w[1].timestamp));
    assert!(trace
        .samples
        .iter()
        .all(|s| ((s.timestamp * 10.0).round() - s.timestamp * 10.0).abs() < 1e-6));
}

#[test]
fn session_states_follow_the_spec() {
    let g = group(20);
    let agent = g.register_agent(|| {});
    let s = g.start_session(options(&agent, 30.0, 100)).unwrap();
    assert_eq!(s.sample_interval(), 40.0);
    assert_eq!(s.state(), SessionState::Started);
    s.pause();
    assert_eq!(s.state(), SessionState::Paused);
    s.pause();
    assert_eq!(s.state(), SessionState::Paused);
    s.resume();
    assert_eq!(s.state(), SessionState::Started);
    assert!(!s.is_stopped());
    let _ = stop(&s);
    assert!(s.is_stopped());
    // A stopped session never moves again, and cannot be stopped twice.
    s.resume();
    s.pause();
    assert_eq!(s.state(), SessionState::Stopped);
    assert!(s.stop(|_| {}).is_err());
    // A paused session can be stopped.
    let p = g.start_session(options(&agent, 0.0, 100)).unwrap();
    assert_eq!(p.sample_interval(), 20.0);
    p.pause();
    let _ = stop(&p);
    assert!(!g.sampler_running());
}

#[test]
fn buffer_full_notifies_once_and_stop_still_yields_the_trace() {
    let g = group(1);
    let agent = g.register_agent(|| {});
    let notes = Arc::new(Mutex::new(0));
    let n = notes.clone();
    let mut o = options(&agent, 1.0, 2);
    o.on_buffer_full = Some(Box::new(move || *n.lock().unwrap() += 1));
    let s = g.start_session(o).unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while *notes.lock().unwrap() == 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(2));
    }
    std::thread::sleep(Duration::from_millis(10));
    assert_eq!(*notes.lock().unwrap(), 1);
    assert!(!s.is_stopped());
    let t = stop(&s);
    assert_eq!(t.samples.len(), 2);
    assert!(s.stop(|_| {}).is_err());
}

#[test]
fn bad_configuration_and_intervals_are_refused() {
    assert!(ProfilerGroup::new(GroupConfig {
        base_interval: Duration::from_micros(500),
        ..GroupConfig::default()
    })
    .is_err());
    let g = group(20);
    let agent = g.register_agent(|| {});
    assert!(g.start_session(options(&agent, -1.0, 1)).is_err());
    assert!(g.start_session(options(&agent, f64::NAN, 1)).is_err());
    assert_eq!(g.effective_interval(10.0), Ok(20.0));
    assert!(!g.sampler_running());
}

#[test]
fn force_sample_records_by_request_before_it_returns_even_at_a_coarse_base() {
    // A 20 ms base does not wake the sampler on answers; a forced sample waiting for one
    // must, or the command would wait for the next timed pick. The interval, 10^9 ms (11.6
    // days), makes a timed sample during the test (a few seconds at most) a one in 10^5
    // event or rarer, so the trace holds the forced samples alone.
    let g = group(20);
    let busy = Arc::new(AtomicBool::new(true));
    let (agent, thread) = busy_agent(&g, busy.clone());
    // Forced samples of a busy agent have its stack: wait until it runs script (state, not
    // time: a loaded machine may start the thread late).
    while !agent.is_in_script() {
        std::thread::yield_now();
    }
    let session = g.start_session(options(&agent, 1e9, 100)).unwrap();
    for _ in 0..5 {
        let started = Instant::now();
        assert_eq!(
            g.force_sample([&session], Duration::from_secs(30)),
            (1, true)
        );
        assert!(started.elapsed() < Duration::from_secs(10));
    }
    session.pause();
    assert_eq!(
        g.force_sample([&session], Duration::from_secs(30)),
        (0, true)
    );
    session.resume();
    let trace = stop(&session);
    busy.store(false, Ordering::SeqCst);
    thread.join().unwrap();
    assert_eq!(trace.samples.len(), 5, "{:?}", trace.samples);
    // Each has the agent's stack, unless the agent's thread, descheduled on a loaded
    // machine, answered more than MAX_ANSWER_DELAY after the request: the sampler counts
    // those, and such a sample rightly has no stack.
    let stackless = trace
        .samples
        .iter()
        .filter(|s| s.stack_id.is_none())
        .count();
    assert_eq!(stackless as u64, g.total_stats().late_answers);
    assert!(stackless < 5, "{:?}", trace.samples);
}

#[test]
fn restart_hands_over_the_samples_so_far_and_goes_on_sampling() {
    let g = group(1);
    let agent = g.register_agent(|| {});
    let s = g.start_session(options(&agent, 1.0, 1000)).unwrap();
    wait_for_ticks(&g, 10);
    let (tx, rx) = bounded(1);
    s.restart(move |t| tx.send(t).unwrap(), None).unwrap();
    let first = rx.recv_timeout(Duration::from_secs(10)).expect("a trace");
    assert!(first.samples.len() >= 5, "{}", first.samples.len());
    assert_eq!(s.state(), SessionState::Started);
    let ticks = g.stats().unwrap().ticks;
    wait_for_ticks(&g, ticks + 10);
    let second = stop(&s);
    assert!(second.samples.len() >= 5, "{}", second.samples.len());
    // The second trace starts where the first ended.
    let last = first.samples.last().unwrap().timestamp;
    assert!(second.samples[0].timestamp > last);
    // A stopped profiler cannot be restarted.
    assert_eq!(
        s.restart(|_| {}, None),
        Err(jsprof_profiler::AlreadyStopped)
    );
}
