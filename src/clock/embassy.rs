//! [`EmbassyClock`]: embassy-time's global clock (feature `embassy-time`).

use super::instant::Instant;
use super::Clock;

/// embassy-time's global clock, converted from ticks to nanoseconds exactly.
///
/// Available with the `embassy-time` feature. The binary chooses the time driver and the
/// tick rate (`embassy-time` features such as `tick-hz-32_768`); this crate enables none.
///
/// ```
/// use tailguard::clock::{Clock, EmbassyClock, Instant};
///
/// // The binary chooses the driver (here, embassy-time's `std` one) and the tick rate.
/// let in_nanos = |t: embassy_time::Instant| Instant::from_ticks(t.as_ticks(), embassy_time::TICK_HZ);
/// let before = embassy_time::Instant::now();
/// let now = EmbassyClock.now();
/// let after = embassy_time::Instant::now();
/// assert!(in_nanos(before) <= now && now <= in_nanos(after));
/// ```
#[cfg_attr(docsrs, doc(cfg(feature = "embassy-time")))]
#[derive(Debug, Clone, Copy, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct EmbassyClock;

impl Clock for EmbassyClock {
    #[inline]
    fn now(&self) -> Instant {
        Instant::from_ticks(
            embassy_time::Instant::now().as_ticks(),
            embassy_time::TICK_HZ,
        )
    }
}
