//! Sample intervals: rounding requests up to multiples of the base interval, and the GCD plan.

use std::time::Duration;

/// The default base interval (seed 004: "~20 ms").
pub const DEFAULT_BASE: Duration = Duration::from_millis(20);
/// The smallest base interval an embedder may set.
pub const MIN_BASE: Duration = Duration::from_millis(1);
/// The longest interval a session may get, in ns (36 years): intervals are capped there so
/// that the sampler's arithmetic in ns never overflows.
pub const MAX_INTERVAL_NS: u64 = 1 << 60;

/// Why a requested interval cannot be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum IntervalError {
    /// Negative (the constructor throws `RangeError`).
    #[error("sampleInterval must not be negative")]
    Negative,
    /// NaN or infinite (WebIDL's restricted `double` throws `TypeError` before this).
    #[error("sampleInterval must be a finite number")]
    NotFinite,
}

/// The base interval and its multiples.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Base(Duration);

impl Base {
    /// A base interval; `None` below [`MIN_BASE`].
    pub fn new(base: Duration) -> Option<Self> {
        (base >= MIN_BASE).then_some(Base(base))
    }

    pub fn duration(self) -> Duration {
        self.0
    }

    pub fn nanos(self) -> u64 {
        self.0.as_nanos() as u64
    }

    /// The number of base ticks a requested interval (in ms) takes: rounded **up** to a
    /// multiple of the base, 0 giving one base (BRIEF decision 3).
    pub fn ticks_for(self, requested_ms: f64) -> Result<u64, IntervalError> {
        if !requested_ms.is_finite() {
            return Err(IntervalError::NotFinite);
        }
        if requested_ms < 0.0 {
            return Err(IntervalError::Negative);
        }
        let ratio = requested_ms * 1e6 / self.nanos() as f64;
        // Snap values within rounding noise of a whole multiple (e.g. 0.1 * 3 ms) onto it.
        let nearest = ratio.round();
        let ticks = if (ratio - nearest).abs() < 1e-9 * nearest.max(1.0) {
            nearest
        } else {
            ratio.ceil()
        };
        // Cap so that time arithmetic in ns cannot overflow: an interval of at most 2^60 ns
        // (36 years), whatever the base.
        Ok((ticks as u64).clamp(1, self.max_ticks()))
    }

    /// The most base ticks an interval may take: 2^60 ns or less.
    pub fn max_ticks(self) -> u64 {
        (MAX_INTERVAL_NS / self.nanos()).max(1)
    }

    /// The interval in ms of `ticks` base ticks, exactly as reported by `sampleInterval`.
    pub fn ms(self, ticks: u64) -> f64 {
        (ticks as u128 * self.nanos() as u128) as f64 / 1e6
    }
}

/// Greatest common divisor (0 is the identity).
pub fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn base20() -> Base {
        Base::new(DEFAULT_BASE).unwrap()
    }

    #[test]
    fn requested_intervals_round_up_to_multiples_of_the_base() {
        let b = base20();
        assert_eq!(b.ticks_for(0.0), Ok(1));
        assert_eq!(b.ticks_for(1.0), Ok(1));
        assert_eq!(b.ticks_for(10.0), Ok(1));
        assert_eq!(b.ticks_for(20.0), Ok(1));
        assert_eq!(b.ticks_for(20.000001), Ok(2));
        assert_eq!(b.ticks_for(40.0), Ok(2));
        assert_eq!(b.ticks_for(41.0), Ok(3));
        assert_eq!(b.ms(3), 60.0);
        assert_eq!(b.ticks_for(-1.0), Err(IntervalError::Negative));
        assert_eq!(b.ticks_for(f64::NAN), Err(IntervalError::NotFinite));
        assert_eq!(b.ticks_for(f64::INFINITY), Err(IntervalError::NotFinite));
        assert_eq!(b.ticks_for(1e300), Ok((1 << 60) / 20_000_000));
        assert_eq!(b.ticks_for(1e9), Ok(50_000_000));
        let one = Base::new(Duration::from_millis(1)).unwrap();
        assert_eq!(one.ticks_for(0.1 * 3.0), Ok(1));
        assert_eq!(one.ticks_for(3.0000000000000004), Ok(3));
        assert_eq!(one.ms(one.ticks_for(10.0).unwrap()), 10.0);
        assert!(Base::new(Duration::from_micros(999)).is_none());
    }

    #[test]
    fn gcd_basics() {
        assert_eq!(gcd(0, 6), 6);
        assert_eq!(gcd(4, 6), 2);
        assert_eq!(gcd(7, 13), 1);
    }

    proptest! {
        #[test]
        fn rounding_gives_the_smallest_multiple_not_below_the_request(
            base_ms in 1u64..=50, req in 0.0f64..10_000.0
        ) {
            let b = Base::new(Duration::from_millis(base_ms)).unwrap();
            let ticks = b.ticks_for(req).unwrap();
            let eff = b.ms(ticks);
            prop_assert!(eff + 1e-6 >= req);
            prop_assert!(ticks == 1 || b.ms(ticks - 1) < req + 1e-6);
            prop_assert_eq!(eff, (ticks * base_ms) as f64);
        }

        #[test]
        fn gcd_divides_both(a in 1u64..1000, b in 1u64..1000) {
            let g = gcd(a, b);
            prop_assert_eq!(a % g, 0);
            prop_assert_eq!(b % g, 0);
            prop_assert!((g + 1..=a.min(b)).all(|d| a % d != 0 || b % d != 0));
        }
    }
}
