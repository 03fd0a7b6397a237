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
//! # Coarse time
//!
//! State that interrupt handlers touch (a window's current interval, a hedger's back-off,
//! a token bucket's arrival time) keeps its time stamps in native 32-bit atomics: whole
//! ticks of a unit the state picks for its own time scale, plus a word that says to within
//! 4.3 s when the stamp was written. An age is exact up to the stamp's *horizon*, about
//! 2^30 ticks (12.4 days for 1 ms ticks); a stamp older than that (or, after a clock went
//! back, further ahead) is known to be so, and is never mistaken for a recent one, however
//! long the gap. Each state documents what it does then.

pub(crate) mod coarse;
pub(crate) mod divisor;
#[cfg(feature = "embassy-time")]
mod embassy;
mod fn_clock;
mod instant;
mod manual;
// Not on wasm32-unknown-unknown: its `std::time::Instant::now` panics (no host clock).
#[cfg(all(
    feature = "std",
    not(all(target_arch = "wasm32", target_os = "unknown"))
))]
mod std_clock;

#[cfg(feature = "embassy-time")]
pub use embassy::EmbassyClock;
pub use fn_clock::FnClock;
pub use instant::Instant;
pub(crate) use instant::{duration_to_nanos, nanos_to_duration};
pub use manual::ManualClock;
#[cfg(all(
    feature = "std",
    not(all(target_arch = "wasm32", target_os = "unknown"))
))]
pub use std_clock::StdClock;

/// A source of monotonic time.
///
/// Implementations must be cheap (they are called on hot paths) and should be monotonic;
/// see the [module docs](self) for plugging in a hardware timer.
///
/// ```
/// use core::time::Duration;
/// use tailguard::clock::{Clock, Instant, ManualClock};
///
/// fn elapsed(clock: &impl Clock, start: Instant) -> Duration {
///     clock.now().duration_since(start)
/// }
/// let clock = ManualClock::new();
/// let start = clock.now();
/// clock.advance(Duration::from_millis(3));
/// assert_eq!(elapsed(&clock, start), Duration::from_millis(3));
/// assert_eq!(elapsed(&&clock, start), Duration::from_millis(3)); // `&C` is a clock too
/// ```
pub trait Clock {
    /// The current instant.
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::clock::{Clock, Instant, ManualClock};
    ///
    /// let clock = ManualClock::starting_at(Instant::from_nanos(1_000));
    /// let t0 = clock.now();
    /// clock.advance(Duration::from_micros(2));
    /// assert_eq!(t0, Instant::from_nanos(1_000));
    /// assert_eq!(clock.now().duration_since(t0), Duration::from_micros(2));
    /// ```
    fn now(&self) -> Instant;
}

impl<C: Clock + ?Sized> Clock for &C {
    #[inline]
    fn now(&self) -> Instant {
        (**self).now()
    }
}

/// A clock that is always at its epoch: the clock of types whose clock is optional and
/// unused (a [`RatioBudget`](crate::budget::RatioBudget) without a minimum allowance).
///
/// ```
/// use core::time::Duration;
/// use tailguard::budget::RatioBudget;
/// use tailguard::clock::{Clock, Instant, NoClock};
///
/// assert_eq!(NoClock.now(), Instant::ZERO);
/// assert_eq!(NoClock.now().duration_since(NoClock.now()), Duration::ZERO); // time never passes
/// let _budget: RatioBudget<NoClock> = RatioBudget::new(0.1, 10).unwrap(); // the default clock
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct NoClock;

impl Clock for NoClock {
    #[inline]
    fn now(&self) -> Instant {
        Instant::ZERO
    }
}
