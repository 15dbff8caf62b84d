//! The sampler's counters ([`SamplerStats`]): what `./mach bench`, `--profile-stats` and the
//! tests read of a run.

/// Counters of a sampler run.
#[derive(Debug, Clone, Default)]
pub struct SamplerStats {
    /// Wakes that served at least one session.
    pub ticks: u64,
    /// Blocks that got no sample because the thread woke too late for their pick: after
    /// the end of the block and more than [`MAX_PICK_LATENESS`](super::MAX_PICK_LATENESS)
    /// after the pick.
    pub missed_ticks: u64,
    /// Picks served although the thread woke too late for them, because the agent's thread
    /// had not run since (its CPU time had not changed): their stack is the one it stands at.
    pub still_served: u64,
    /// Samples recorded without a stack because the agent ran no script at the tick.
    pub idle: u64,
    /// Where in their blocks samples were taken: tenths of the block (0-9), and 10 for
    /// samples taken after their block ended. Uniform tenths are what keeps periodic work
    /// from aliasing; `./mach bench` prints how far they are from it.
    pub phases: [u64; 11],
    /// CPU time of the sampler thread itself (ns), where the platform tells.
    pub thread_cpu: u64,
    /// Time the sampler thread spent in synchronous stack samplers, in all and at most in
    /// one call (ns): a long one delays every other pick.
    pub capture_time: u64,
    pub capture_max: u64,
    /// Stacks taken synchronously from the sampler thread.
    pub sampled: u64,
    /// Interrupt requests sent to agents.
    pub requests: u64,
    /// Answers that arrived for a request already closed.
    pub stale_answers: u64,
    /// Requests closed without an answer.
    pub unanswered: u64,
    /// Waiting ticks whose answer came more than
    /// [`MAX_ANSWER_DELAY`](super::MAX_ANSWER_DELAY) after them.
    pub late_answers: u64,
    /// Waiting ticks given the stack of an answer that came in time.
    pub answered: u64,
    /// Walks that waited for the agent's thread to run (it was waiting for a CPU: threads
    /// outnumbered cores), the time they waited in all and at most (ns), and those abandoned
    /// after [`WALK_ABANDON`](super::WALK_ABANDON).
    pub walks_waited: u64,
    pub walk_wait: u64,
    pub walk_wait_max: u64,
    pub walks_abandoned: u64,
    /// Lateness (actual wake time minus the pick's time) of the most recent picks, in ns.
    pub lateness: Vec<u64>,
    /// The current plan: the GCD of the active sessions' intervals, in base ticks (0: idle).
    pub plan_ticks: u64,
    /// Samples the unstopped sessions hold now (at most the group's `max_buffered_samples`).
    pub buffered: u64,
    /// Times a session below its fair share of the budget found none left, and the sessions
    /// above their share were cut down to it (the [`sampler`](crate::sampler) module's "Fair
    /// shares").
    pub reclaims: u64,
    /// Samples those cuts took back.
    pub reclaimed: u64,
}

pub(super) const LATENESS_KEPT: usize = 1 << 16;

impl SamplerStats {
    /// Adds the counters of another run (lateness samples are appended, up to the cap).
    pub fn add(&mut self, other: &SamplerStats) {
        self.ticks += other.ticks;
        self.missed_ticks += other.missed_ticks;
        self.still_served += other.still_served;
        self.sampled += other.sampled;
        self.requests += other.requests;
        self.stale_answers += other.stale_answers;
        self.unanswered += other.unanswered;
        self.late_answers += other.late_answers;
        self.answered += other.answered;
        self.walks_waited += other.walks_waited;
        self.walk_wait += other.walk_wait;
        self.walk_wait_max = self.walk_wait_max.max(other.walk_wait_max);
        self.walks_abandoned += other.walks_abandoned;
        self.idle += other.idle;
        for (mine, theirs) in self.phases.iter_mut().zip(other.phases) {
            *mine += theirs;
        }
        self.capture_time += other.capture_time;
        self.thread_cpu += other.thread_cpu;
        self.capture_max = self.capture_max.max(other.capture_max);
        let room = LATENESS_KEPT.saturating_sub(self.lateness.len());
        self.lateness
            .extend(other.lateness.iter().take(room).copied());
        self.reclaims += other.reclaims;
        self.reclaimed += other.reclaimed;
        self.plan_ticks = other.plan_ticks;
        self.buffered = other.buffered;
    }

    /// How evenly samples were spread inside their blocks: the largest distance of a tenth
    /// of the block's share from 10%, and the share taken after the block ended, both in
    /// percentage points of the samples counted in [`phases`](Self::phases).
    pub fn phase_spread(&self) -> Option<(f64, f64)> {
        let total = self.phases.iter().sum::<u64>();
        if total == 0 {
            return None;
        }
        let share = |n: u64| n as f64 * 100.0 / total as f64;
        let worst = self.phases[..10]
            .iter()
            .map(|&n| (share(n) - 10.0).abs())
            .fold(0.0, f64::max);
        Some((worst, share(self.phases[10])))
    }

    /// The counters as `--profile-stats` prints them (the `sampler` object of its line, in
    /// jsprof and in jsprof-servo): times in ms or µs, and the derived lateness quantiles and
    /// evenness.
    pub fn to_json(&self) -> serde_json::Value {
        let ms = |ns: u64| ns as f64 / 1e6;
        let us = |ns: u64| ns as f64 / 1e3;
        serde_json::json!({
            "ticks": self.ticks,
            "missed_blocks": self.missed_ticks,
            "still_served": self.still_served,
            "walked_at_tick": self.sampled,
            "requests": self.requests,
            "late_answers": self.late_answers,
            "idle": self.idle,
            "capture_ms": ms(self.capture_time),
            "thread_cpu_ms": ms(self.thread_cpu),
            "capture_max_us": us(self.capture_max),
            "unanswered": self.unanswered,
            "walks_waited": self.walks_waited,
            "walk_wait_ms": ms(self.walk_wait),
            "walk_wait_max_ms": ms(self.walk_wait_max),
            "walks_abandoned": self.walks_abandoned,
            "buffered": self.buffered,
            "lateness_p50_us": self.lateness_quantile(0.5).map(us),
            "lateness_p99_us": self.lateness_quantile(0.99).map(us),
            "lateness_max_us": self.lateness_quantile(1.0).map(us),
            "evenness_worst_tenth_pts": self.phase_spread().map(|p| p.0),
            "taken_after_block_pct": self.phase_spread().map(|p| p.1),
        })
    }

    /// The `q`-quantile (0 to 1) of the kept lateness values, in ns.
    pub fn lateness_quantile(&self, q: f64) -> Option<u64> {
        let mut v = self.lateness.clone();
        if v.is_empty() {
            return None;
        }
        v.sort_unstable();
        Some(v[((v.len() - 1) as f64 * q.clamp(0.0, 1.0)).round() as usize])
    }
}
