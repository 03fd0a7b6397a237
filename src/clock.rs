//! Time, passed in rather than read from a global.
//!
//! Every time-dependent type in tailguard is generic over [`Clock`], so the same code runs
//! on a host (`StdClock`, feature `std`), under an embassy executor (`EmbassyClock`,
//! feature `embassy-time`), on bare metal with any hardware timer ([`FnClock`] or your own
//! impl), and in tests and simulations ([`ManualClock`]).
//!
//! Time is an [`Instant`]: nanoseconds since an epoch the clock chooses. Only differences
//! between instants of the same clock mean anything. The API speaks
//! [`core::time::Duration`]; bare `u64` nanoseconds stay inside the crate.
//!
//! # Plugging in a hardware timer
//!
//! A firmware author needs a few lines. Say a 32.768 kHz RTC counter, already extended to
//! 64 bits by its overflow interrupt:
//!
//! ```
//! use tailguard::clock::{Clock, FnClock, Instant};
//!
//! # fn read_rtc_ticks() -> u64 { 32_768 }
//! let clock = FnClock::new(|| Instant::from_ticks(read_rtc_ticks(), 32_768));
//! assert_eq!(clock.now().as_nanos(), 1_000_000_000);
//! ```
//!
//! Or implement the trait on your timer driver directly:
//!
//! ```
//! use tailguard::clock::{Clock, Instant};
//!
//! struct Timer2; // a 1 MHz free-running timer, 64-bit extended
//! impl Timer2 {
//!     fn ticks(&self) -> u64 { 1_500 }
//! }
//! impl Clock for Timer2 {
//!     fn now(&self) -> Instant {
//!         Instant::from_ticks(self.ticks(), 1_000_000)
//!     }
//! }
//! assert_eq!(Timer2.now().as_nanos(), 1_500_000);
//! ```
//!
//! Clocks should be monotonic. Those that are not (a wall clock set backwards, a timer that
//! wraps) never make tailguard panic: every difference of instants saturates at zero, and
//! each time-dependent type documents what a jump, either way, does to it.
//!
//! State that interrupt handlers touch keeps its time stamps in 32-bit atomics through
//! [`coarse`], the one coarse time base of the crate.

pub mod coarse;

use core::time::Duration;

/// A point in time: nanoseconds since the epoch of the [`Clock`] that produced it.
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
/// // Going backwards saturates at zero instead of panicking.
/// assert_eq!(start.duration_since(later), Duration::ZERO);
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
    const NANOS_PER_SEC: coarse::Divisor = coarse::Divisor::new(1_000_000_000);
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

/// A source of monotonic time.
///
/// Implementations must be cheap (they are called on hot paths) and should be monotonic;
/// see the [module docs](self) for plugging in a hardware timer.
pub trait Clock {
    /// The current instant.
    fn now(&self) -> Instant;
}

impl<C: Clock + ?Sized> Clock for &C {
    #[inline]
    fn now(&self) -> Instant {
        (**self).now()
    }
}

/// A clock made from a closure, for hardware timers and tests.
///
/// ```
/// use tailguard::clock::{Clock, FnClock, Instant};
/// let clock = FnClock::new(|| Instant::from_nanos(42));
/// assert_eq!(clock.now(), Instant::from_nanos(42));
/// ```
#[derive(Clone, Copy)]
pub struct FnClock<F>(F);

impl<F: Fn() -> Instant> FnClock<F> {
    /// A clock that calls `now` for the time.
    pub const fn new(now: F) -> Self {
        FnClock(now)
    }
}

impl<F: Fn() -> Instant> Clock for FnClock<F> {
    #[inline]
    fn now(&self) -> Instant {
        (self.0)()
    }
}

impl<F> core::fmt::Debug for FnClock<F> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("FnClock")
    }
}

/// A clock that is always at its epoch: the clock of types whose clock is optional and
/// unused (a [`RatioBudget`](crate::budget::RatioBudget) without a minimum allowance).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct NoClock;

impl Clock for NoClock {
    #[inline]
    fn now(&self) -> Instant {
        Instant::ZERO
    }
}

/// A clock that moves only when told to: for tests and deterministic simulation.
///
/// Thread-safe: share it by reference (`&ManualClock` is a [`Clock`]) and advance it from
/// any thread. It holds a 64-bit atomic, which is native on 64-bit hosts; on 32-bit
/// microcontrollers portable-atomic emulates it with a lock, so do not advance it from an
/// interrupt handler there (use [`FnClock`] over a hardware timer instead).
///
/// ```
/// use core::time::Duration;
/// use tailguard::clock::{Clock, ManualClock};
///
/// let clock = ManualClock::new();
/// let t0 = clock.now();
/// clock.advance(Duration::from_millis(250));
/// assert_eq!(clock.now().duration_since(t0), Duration::from_millis(250));
/// ```
#[derive(Debug, Default)]
pub struct ManualClock {
    nanos: portable_atomic::AtomicU64,
}

impl ManualClock {
    /// A clock at its epoch.
    pub const fn new() -> Self {
        Self::starting_at(Instant::ZERO)
    }

    /// A clock at `start`.
    pub const fn starting_at(start: Instant) -> Self {
        ManualClock {
            nanos: portable_atomic::AtomicU64::new(start.0),
        }
    }

    /// Moves the clock forward by `d` (saturating at the largest instant).
    pub fn advance(&self, d: Duration) {
        let step = duration_to_nanos(d);
        // fetch_update never fails with a closure that always returns Some.
        let _ = self.nanos.fetch_update(
            portable_atomic::Ordering::AcqRel,
            portable_atomic::Ordering::Acquire,
            |t| Some(t.saturating_add(step)),
        );
    }

    /// Sets the clock to `t`, forwards or backwards (to test clocks that jump).
    pub fn set(&self, t: Instant) {
        self.nanos.store(t.0, portable_atomic::Ordering::Release);
    }
}

impl Clock for ManualClock {
    #[inline]
    fn now(&self) -> Instant {
        Instant(self.nanos.load(portable_atomic::Ordering::Acquire))
    }
}

/// The host's monotonic clock (`std::time::Instant`). Every `StdClock` of the process
/// reads the same time line, nanoseconds since the first reading of any of them, so the
/// instants and [`Deadline`](crate::deadline::Deadline)s made with one compare with those of
/// another.
///
/// Available with the `std` feature.
///
/// ```
/// use tailguard::clock::{Clock, StdClock};
/// let clock = StdClock::new();
/// let a = clock.now();
/// assert!(StdClock::new().now() >= a);
/// ```
#[cfg(feature = "std")]
#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
#[derive(Debug, Clone, Copy, Default)]
pub struct StdClock {
    _private: (),
}

/// The epoch of every [`StdClock`]: the process's first reading.
#[cfg(feature = "std")]
static STD_EPOCH: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();

#[cfg(feature = "std")]
impl StdClock {
    /// The process's monotonic clock.
    pub const fn new() -> Self {
        StdClock { _private: () }
    }
}

#[cfg(feature = "std")]
impl Clock for StdClock {
    #[inline]
    fn now(&self) -> Instant {
        let epoch = STD_EPOCH.get_or_init(std::time::Instant::now);
        Instant(duration_to_nanos(epoch.elapsed()))
    }
}

/// embassy-time's global clock, converted from ticks to nanoseconds exactly.
///
/// Available with the `embassy-time` feature. The binary chooses the time driver and the
/// tick rate (`embassy-time` features such as `tick-hz-32_768`); this crate enables none.
#[cfg(feature = "embassy-time")]
#[cfg_attr(docsrs, doc(cfg(feature = "embassy-time")))]
#[derive(Debug, Clone, Copy, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct EmbassyClock;

#[cfg(feature = "embassy-time")]
impl Clock for EmbassyClock {
    #[inline]
    fn now(&self) -> Instant {
        Instant::from_ticks(
            embassy_time::Instant::now().as_ticks(),
            embassy_time::TICK_HZ,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The division-free conversion is `Duration::from_nanos`, at the second boundaries,
    /// the ends of the range and on random values.
    #[test]
    fn nanos_to_duration_is_from_nanos() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
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
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
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

    #[test]
    fn manual_clock_moves_both_ways_without_panicking() {
        let c = ManualClock::starting_at(Instant::from_nanos(10));
        c.advance(Duration::from_nanos(5));
        assert_eq!(c.now().as_nanos(), 15);
        c.set(Instant::from_nanos(3));
        assert_eq!(c.now().as_nanos(), 3);
        c.advance(Duration::MAX);
        assert_eq!(c.now().as_nanos(), u64::MAX);
    }
}
