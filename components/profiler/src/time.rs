//! Clocks and time coarsening.
//!
//! Every timestamp the core produces comes from an injected [`Clock`], so that tests can drive
//! time by hand and hosts can share one clock between `performance.now()` and the profiler
//! (BRIEF decision 7: same clock, same time origin, same coarsening).

use std::fmt::Debug;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::Instant;

/// Nanoseconds on a monotonic clock, counted from an arbitrary fixed point.
pub type Nanos = u64;

/// A monotonic source of time.
pub trait Clock: Send + Sync + Debug {
    /// The current time. Never decreases.
    fn now(&self) -> Nanos;
}

/// The real monotonic clock: nanoseconds since a process-wide base instant.
#[derive(Debug, Default, Clone, Copy)]
pub struct MonotonicClock;

fn process_base() -> Instant {
    static BASE: OnceLock<Instant> = OnceLock::new();
    *BASE.get_or_init(Instant::now)
}

impl MonotonicClock {
    /// Converts a `Nanos` value of this clock back to an `Instant` (used to sleep to deadlines).
    pub fn instant_at(nanos: Nanos) -> Instant {
        process_base() + std::time::Duration::from_nanos(nanos)
    }
}

impl Clock for MonotonicClock {
    fn now(&self) -> Nanos {
        process_base().elapsed().as_nanos() as Nanos
    }
}

/// A clock that only moves when told to; for deterministic tests.
#[derive(Debug, Default)]
pub struct FakeClock(AtomicU64);

impl FakeClock {
    /// A fake clock reading `start`.
    pub fn new(start: Nanos) -> Self {
        FakeClock(AtomicU64::new(start))
    }
    /// Sets the time. Panics if that would move the clock backwards (a test bug).
    pub fn set(&self, now: Nanos) {
        let old = self.0.swap(now, Ordering::SeqCst);
        assert!(old <= now, "FakeClock moved backwards: {old} -> {now}");
    }
    /// Moves the clock forward by `by` nanoseconds.
    pub fn advance(&self, by: Nanos) {
        self.0.fetch_add(by, Ordering::SeqCst);
    }
}

impl Clock for FakeClock {
    fn now(&self) -> Nanos {
        self.0.load(Ordering::SeqCst)
    }
}

/// How coarse the timestamps handed to a page are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resolution {
    /// 100 µs: the default for a context that is not cross-origin isolated.
    Coarse,
    /// 5 µs: a cross-origin isolated context.
    Isolated,
}

impl Resolution {
    /// The resolution for a context that is (or is not) cross-origin isolated.
    pub fn for_context(cross_origin_isolated: bool) -> Self {
        if cross_origin_isolated {
            Resolution::Isolated
        } else {
            Resolution::Coarse
        }
    }

    /// The step in nanoseconds.
    pub fn step(self) -> Nanos {
        match self {
            Resolution::Coarse => 100_000,
            Resolution::Isolated => 5_000,
        }
    }

    /// `now - origin` in milliseconds, floored to this resolution.
    ///
    /// The result is `units / steps_per_ms` in one correctly rounded division, so it prints
    /// as the short decimal a page expects (`2972.7`, not `2972.7000000000003`). A time before
    /// the origin gives 0.
    pub fn relative_ms(self, now: Nanos, origin: Nanos) -> f64 {
        let step = self.step();
        let units = now.saturating_sub(origin) / step;
        units as f64 / (1_000_000 / step) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coarsening_floors_to_the_step() {
        let c = Resolution::Coarse;
        assert_eq!(c.relative_ms(2_972_799_999, 0), 2972.7);
        assert_eq!(c.relative_ms(2_972_800_000, 0), 2972.8);
        assert_eq!(c.relative_ms(1_000, 5_000), 0.0);
        let i = Resolution::Isolated;
        assert_eq!(i.relative_ms(1_004_999, 0), 1.0);
        assert_eq!(i.relative_ms(1_005_000, 0), 1.005);
        assert_eq!(format!("{}", c.relative_ms(2_972_700_000, 0)), "2972.7");
    }

    #[test]
    fn fake_clock_moves_only_forward() {
        let c = FakeClock::new(10);
        c.advance(5);
        assert_eq!(c.now(), 15);
        c.set(20);
        assert_eq!(c.now(), 20);
        assert!(std::panic::catch_unwind(|| c.set(1)).is_err());
    }

    #[test]
    fn monotonic_clock_does_not_go_back() {
        let c = MonotonicClock;
        let a = c.now();
        let b = c.now();
        assert!(b >= a);
        let at = MonotonicClock::instant_at(b);
        assert!(at <= Instant::now());
    }
}
