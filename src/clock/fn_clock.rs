//! [`FnClock`]: a clock made from a closure.

use super::instant::Instant;
use super::Clock;

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
