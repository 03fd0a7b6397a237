//! [`ManualClock`]: a clock that moves only when told to.

use core::time::Duration;

use super::instant::{duration_to_nanos, Instant};
use super::Clock;

/// A clock that moves only when told to: for tests and deterministic simulation.
///
/// Thread-safe: share it by reference (`&ManualClock` is a [`Clock`]) and advance it from
/// any thread. It holds a 64-bit atomic, which is native on 64-bit hosts; on 32-bit
/// microcontrollers portable-atomic emulates it with a lock, so do not advance it from an
/// interrupt handler there (use [`FnClock`](super::FnClock) over a hardware timer instead).
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
    ///
    /// ```
    /// use tailguard::clock::{Clock, Instant, ManualClock};
    ///
    /// static CLOCK: ManualClock = ManualClock::new(); // `const`: a clock can be a `static`
    /// assert_eq!(CLOCK.now(), Instant::ZERO);
    /// assert_eq!(ManualClock::new().now().as_nanos(), 0);
    /// ```
    pub const fn new() -> Self {
        Self::starting_at(Instant::ZERO)
    }

    /// A clock at `start`.
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::clock::{Clock, Instant, ManualClock};
    ///
    /// let clock = ManualClock::starting_at(Instant::from_nanos(5_000));
    /// assert_eq!(clock.now().as_nanos(), 5_000);
    /// clock.advance(Duration::from_nanos(1));
    /// assert_eq!(clock.now().as_nanos(), 5_001);
    /// ```
    pub const fn starting_at(start: Instant) -> Self {
        ManualClock {
            nanos: portable_atomic::AtomicU64::new(start.as_nanos()),
        }
    }

    /// Moves the clock forward by `d` (saturating at the largest instant).
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::clock::{Clock, ManualClock};
    ///
    /// let clock = ManualClock::new();
    /// clock.advance(Duration::from_micros(1500));
    /// assert_eq!(clock.now().as_nanos(), 1_500_000);
    /// clock.advance(Duration::MAX);
    /// assert_eq!(clock.now().as_nanos(), u64::MAX); // saturated, no overflow
    /// ```
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
    ///
    /// ```
    /// use tailguard::clock::{Clock, Instant, ManualClock};
    ///
    /// let clock = ManualClock::starting_at(Instant::from_nanos(1_000));
    /// clock.set(Instant::from_nanos(400)); // backwards: no saturation, no panic
    /// assert_eq!(clock.now(), Instant::from_nanos(400));
    /// clock.set(Instant::from_nanos(9_000));
    /// assert_eq!(clock.now().as_nanos(), 9_000);
    /// ```
    pub fn set(&self, t: Instant) {
        self.nanos
            .store(t.as_nanos(), portable_atomic::Ordering::Release);
    }
}

impl Clock for ManualClock {
    #[inline]
    fn now(&self) -> Instant {
        Instant::from_nanos(self.nanos.load(portable_atomic::Ordering::Acquire))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
