//! [`Instant`]: nanoseconds since a clock's epoch, and the crate's conversions between
//! nanoseconds and [`Duration`].

use core::time::Duration;

use super::divisor::Divisor;

/// A point in time: nanoseconds since the epoch of the [`Clock`](super::Clock) that
/// produced it.
///
/// 64 bits of nanoseconds last 584 years. Arithmetic saturates instead of overflowing.
///
/// ```
/// use core::time::Duration;
/// use tailguard::clock::Instant;
///
/// let start = Instant::from_nanos(1_000);
/// let later = start.saturating_add(Duration::from_micros(5));
/// assert_eq!(later.duration_since(start), Duration::from_micros(5));
/// // Going backwards saturates at zero instead of panicking, or says so when checked.
/// assert_eq!(start.duration_since(later), Duration::ZERO);
/// assert_eq!(start.checked_duration_since(later), None);
/// assert_eq!(later.checked_duration_since(start), Some(Duration::from_micros(5)));
/// assert_eq!(later.as_nanos(), 6_000);
/// // Subtraction saturates at the epoch.
/// assert_eq!(later.saturating_sub(Duration::from_micros(2)).as_nanos(), 4_000);
/// assert_eq!(start.saturating_sub(Duration::from_secs(1)), Instant::ZERO);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Instant(u64);

impl Instant {
    /// The clock's epoch.
    pub const ZERO: Instant = Instant(0);

    /// An instant `nanos` nanoseconds after the epoch.
    pub const fn from_nanos(nanos: u64) -> Self {
        Instant(nanos)
    }

    /// An instant from a tick count of a timer running at `hz` ticks per second.
    ///
    /// The conversion is exact (rounded down to the nanosecond) for any tick rate, and
    /// saturates at the largest instant. A rate of zero gives the epoch.
    ///
    /// ```
    /// use tailguard::clock::Instant;
    /// assert_eq!(Instant::from_ticks(3, 32_768).as_nanos(), 91_552);
    /// assert_eq!(Instant::from_ticks(u64::MAX, 1).as_nanos(), u64::MAX);
    /// ```
    pub const fn from_ticks(ticks: u64, hz: u64) -> Self {
        // u64 * 10^9 < 2^94: the product cannot overflow a u128.
        let scaled = (ticks as u128).wrapping_mul(1_000_000_000);
        let nanos = match scaled.checked_div(hz as u128) {
            Some(nanos) => nanos,
            None => 0, // hz == 0
        };
        Instant(if nanos > u64::MAX as u128 {
            u64::MAX
        } else {
            nanos as u64
        })
    }

    /// Nanoseconds since the epoch.
    pub const fn as_nanos(self) -> u64 {
        self.0
    }

    /// Time elapsed from `earlier` to `self`, or zero if `earlier` is later. Integer
    /// operations only, with no 64-bit division.
    pub const fn duration_since(self, earlier: Instant) -> Duration {
        nanos_to_duration(self.0.saturating_sub(earlier.0))
    }

    /// Time elapsed from `earlier` to `self`, or `None` if `earlier` is later.
    pub const fn checked_duration_since(self, earlier: Instant) -> Option<Duration> {
        match self.0.checked_sub(earlier.0) {
            Some(nanos) => Some(nanos_to_duration(nanos)),
            None => None,
        }
    }

    /// `self + d`, saturating at the largest instant.
    pub const fn saturating_add(self, d: Duration) -> Instant {
        Instant(self.0.saturating_add(duration_to_nanos(d)))
    }

    /// `self - d`, saturating at the epoch.
    pub const fn saturating_sub(self, d: Duration) -> Instant {
        Instant(self.0.saturating_sub(duration_to_nanos(d)))
    }
}

/// `Duration::from_nanos(nanos)` without its 64-bit division by 10^9 (a library call of a
/// hundred instructions or more on a 32-bit core, `__aeabi_uldivmod`): a multiply by the
/// reciprocal. For the hedge path (a decision's wait, a request's latency).
#[inline]
pub(crate) const fn nanos_to_duration(nanos: u64) -> Duration {
    const NANOS_PER_SEC: Divisor = Divisor::new(1_000_000_000);
    // Below a second (a hedge delay, a latency: the common case) there is nothing to divide.
    if nanos < 1_000_000_000 {
        return Duration::new(0, nanos as u32);
    }
    let (secs, subsec) = NANOS_PER_SEC.div_rem(nanos);
    // subsec < 10^9: the cast is exact, and `Duration::new` carries nothing (the `min`,
    // which changes nothing, shows the compiler so: no division, no overflow panic linked).
    let subsec = if subsec < 1_000_000_000 {
        subsec
    } else {
        999_999_999
    };
    Duration::new(secs, subsec as u32)
}

/// A duration in whole nanoseconds, saturating at `u64::MAX` (584 years).
pub(crate) const fn duration_to_nanos(d: Duration) -> u64 {
    let nanos = d.as_nanos();
    if nanos > u64::MAX as u128 {
        u64::MAX
    } else {
        nanos as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The division-free conversion is `Duration::from_nanos`, at the second boundaries,
    /// the ends of the range and on random values.
    #[test]
    fn nanos_to_duration_is_from_nanos() {
        let mut rng = crate::test_rng::Xorshift64(0x2545_f491_4f6c_dd1d);
        let mut values = std::vec![
            0,
            1,
            999_999_999,
            1_000_000_000,
            1_000_000_001,
            u64::MAX,
            u64::MAX - 1
        ];
        for _ in 0..100_000 {
            let x = rng.next_u64();
            values.push(x >> (x % 64));
        }
        for v in values {
            assert_eq!(nanos_to_duration(v), Duration::from_nanos(v), "{v}");
        }
    }

    #[test]
    fn from_ticks_is_exact_and_saturates() {
        assert_eq!(Instant::from_ticks(1, 1_000_000).as_nanos(), 1_000);
        assert_eq!(
            Instant::from_ticks(32_768, 32_768).as_nanos(),
            1_000_000_000
        );
        assert_eq!(Instant::from_ticks(1, 3).as_nanos(), 333_333_333);
        assert_eq!(Instant::from_ticks(u64::MAX, 1_000).as_nanos(), u64::MAX);
        assert_eq!(Instant::from_ticks(7, 0), Instant::ZERO);
    }

    #[test]
    fn arithmetic_saturates() {
        let max = Instant::from_nanos(u64::MAX);
        assert_eq!(max.saturating_add(Duration::from_secs(1)), max);
        assert_eq!(
            Instant::ZERO.saturating_sub(Duration::from_secs(1)),
            Instant::ZERO
        );
        assert_eq!(Instant::ZERO.saturating_add(Duration::MAX), max);
        assert_eq!(Instant::ZERO.checked_duration_since(max), None);
    }
}
