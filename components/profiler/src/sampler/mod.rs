//! The sampler: one thread per [`ProfilerGroup`](crate::ProfilerGroup).
//!
//! [`SamplerCore`] is the whole policy, driven by explicit times so that tests run it with a
//! fake clock; the thread around it (`threads.rs`) sleeps to absolute deadlines. Its parts
//! are files of this folder ("Where it lives", below); their tests are in `tests/`.
//!
//! # When samples are taken: randomised inside each interval
//!
//! Time is cut into blocks from the sampler's epoch. A session whose interval is `k` base
//! intervals takes **exactly one sample per block of `k` base intervals**, at a time drawn
//! uniformly inside the block. A workload whose phases repeat with any period — equal to
//! the interval, dividing it, or a multiple of it — is therefore sampled at uniformly
//! distributed phases, and each phase gets its true share of the samples. (Samples at fixed
//! multiples of the interval alias: a 7 ms / 3 ms loop on a 10 ms period sampled every
//! 20 ms shows one phase forever.)
//!
//! Sessions still share captures, as the GCD plan intends. Let `g` be the GCD of the active
//! sessions' intervals (in base intervals): the *grid* cuts time into slots of `g` base
//! intervals, and each slot has one grid tick at a random point inside it. A session of
//! interval `k = m·g` takes one of the `m` grid ticks of each of its blocks, chosen at
//! random, and sessions of the same interval choose the same one. Every due session of an
//! agent at a grid tick is served by one capture. Both choices are pure functions of a seed
//! and the indices ([`mix`]), so tests fix the seed and runs are reproducible from it.
//!
//! A re-plan (a session starting, stopping, pausing, resuming or filling its buffer)
//! changes `g` for picks made after it; a pick already made stands, so no session loses or
//! gains a sample in the block it is in.
//!
//! # The ends of a profile
//!
//! A session that starts inside a block takes that block's pick if the pick falls after
//! its start, and otherwise begins with the next block; one that stops inside a block has
//! its pick only if the pick came before the stop. The pick is uniform in the block, so the
//! partial block at either end gets a sample with the probability of the share of the block
//! it covers, at a uniform time within it: the work just after `new Profiler()` and just
//! before `stop()` is sampled like any other. (Waiting for the first whole block instead
//! leaves the start of every profile unsampled: on 40 profiles of 200 ms at 20 ms, a
//! function that ran the first 15 ms got none of 357 samples.) The start is the host's time
//! of the session's creation, not the time the sampler thread hears of it.
//!
//! A tick taken before a page's `stop()` whose stack is still being taken (a walk waiting for
//! the agent's thread, a request its next interrupt serves) is the session's: the session
//! takes no new tick and ends when those stacks are in, or after
//! [`STOP_WAIT`] without them (decision 0063).
//!
//! # Cost with many sessions
//!
//! Pending picks live in a queue ordered by time, per process and per agent, and the grid is
//! kept from a count of the active sessions per interval: starting, stopping, pausing or
//! filling one session costs O(log n) in the number of sessions, a wake costs what its due
//! sessions cost.
//!
//! # Fair shares of the budget
//!
//! The unstopped sessions of a process hold at most
//! [`max_buffered`](SamplerCore::with_budget) samples between them, `B`. While there is room,
//! any session takes it. Once the budget has run out, each of the `L` unstopped sessions is
//! held to its fair share, `B / L` (floored), until the budget drains to half:
//!
//! - a session that holds its share or more and would take one more sample yields: it is
//!   full, as at its own `maxBufferSize` (a ring that holds samples drops its own oldest
//!   instead);
//! - a session below its share that finds no room makes some: every session holding more
//!   than the share is cut down to it, in one pass over the sessions. A ring loses its
//!   oldest samples and goes on; any other loses its newest, so that its trace is the
//!   samples it took first (as if its `maxBufferSize` had been its share), and is full,
//!   told once.
//!
//! So the sessions that hold the most give way, not the one that asks next: 100,000
//! forgotten profilers at 1 ms fill the budget in ~84 ms and are full at ~84 samples each,
//! and a profiler started after them gets its samples from the one cut that takes their
//! 84ths back. (`docs/decisions`' "fair sample budget" gives the alternatives and the
//! measurements.)
//!
//! Cost: while the budget has room, nothing changes; once it has run out, a sample costs a
//! division more. A cut costs O(sessions + samples taken back), and happens only when a
//! session below its share finds the budget spent. While shares hold, nobody grows past
//! one, so that cannot happen again until the share shrinks, that is until a session
//! starts: at most one cut per start, and, while sessions only start, one per `L²/B` of
//! them (the floored share changes that seldom), so O(√B) sessions visited per start,
//! amortised (~2,900 at the default budget). The ticks themselves never visit a session
//! that is not due.
//!
//! # A tick
//!
//! For every agent with due sessions: if the agent runs no script, the sampler records an
//! idle sample (no stack). Otherwise, if the host gave a [`StackSampler`](crate::StackSampler),
//! the stack is taken at once, from the sampler thread, and handed to every due session:
//! its timestamp is the capture's. Without one (or when it cannot sample), the agent is
//! asked for a stack and answers from its own thread; ticks that come while a request is
//! outstanding queue behind it. An answer is given to a waiting tick only if it was captured
//! within [`MAX_ANSWER_DELAY`] of that tick; a tick the agent could not answer in time (a
//! long native call, a GC) gets no stack rather than a stack that was not running at its
//! time, and is counted in [`SamplerStats::late_answers`]. A request the agent can no longer
//! answer (it left that script) is closed the same way.
//!
//! A pick the sampler woke too late for (after its block and more than
//! [`MAX_PICK_LATENESS`] after the pick: the sampler thread waited for a CPU) has no sample,
//! unless the agent's thread has not run since before the pick: the sampler reads each due
//! agent's CPU time at every wake ([`StackSampler::cpu_time`](crate::StackSampler)), and a
//! value unchanged since a read says the thread has not run since that read. Its stack at
//! the pick is then the one it stands at, so the pick is served at its own time, with the
//! walk the thread does when it runs again ([`SamplerStats::still_served`]; decision 0053).
//!
//! # Where it lives
//!
//! The core's data is in `state.rs` and its counters in `stats.rs`; what the group sends it
//! is in `messages.rs`. Each part of the policy is a file of `impl SamplerCore`: `plan.rs`
//! (picks, the grid, cohorts), `tick.rs` (a wake: one stack per agent, by capture or by
//! request), `walks.rs` (walks that wait for the agent's thread), `forced.rs` (WebDriver's
//! Force Sample), `budget.rs` (the budget and its fair shares) and `sessions.rs` (start,
//! pause, restart, stop). Their calls run one way: `forced` and `walks` call into `tick`;
//! `tick` and `sessions` into `budget` and `plan`; `budget` into `plan`; and all of them
//! use `state`, which uses `messages` and `stats`.

mod budget;
mod forced;
mod messages;
mod plan;
mod sessions;
mod state;
mod stats;
mod tick;
mod walks;

pub use messages::{BufferFullCallback, SessionId};
pub(crate) use messages::{BuildRequest, Control, SessionStart, Stopped, TraceCallback};
pub use plan::{mix, MAX_PICK_LATENESS};
pub use sessions::STOP_WAIT;
pub(crate) use state::SamplerCore;
pub use state::{max_served_per_tick, DEFAULT_MAX_BUFFERED, MAX_SERVED_PER_SECOND};
pub use stats::SamplerStats;
pub use tick::MAX_ANSWER_DELAY;
pub use walks::{WALK_ABANDON, WALK_LOOK, WALK_NUDGE};
