//! The RTIC monotonic as tailguard's clock and sleep: the hedger reads `Mono::now()` and
//! the race (and the simulated sensor) sleeps with `Mono::delay`, so the hedge delays it
//! measures and the ones it waits are on one timer.

use core::time::Duration;

use rtic_monotonics::systick::prelude::*;
use rtic_monotonics::TimerQueueBasedMonotonic;
use tailguard::clock::{Clock, Instant};

use crate::Mono;

/// Nanoseconds per tick of [`Mono`], from its own duration type (so from the rate it was
/// declared with).
const NANOS_PER_TICK: u64 =
    <Mono as TimerQueueBasedMonotonic>::Duration::from_ticks(1).as_nanos() as u64;

/// `Mono::now()` in nanoseconds since the monotonic started. The tick count is 32 bits,
/// so it wraps after 4.9 days at 10 kHz; a longer-lived app would use the
/// `systick-64bit` feature and `u64` ticks.
#[derive(Debug, Clone, Copy)]
pub struct MonoClock;

impl Clock for MonoClock {
    fn now(&self) -> Instant {
        Instant::from_nanos(u64::from(Mono::now().as_ticks()) * NANOS_PER_TICK)
    }
}

/// The race's sleep: `Mono::delay` for `duration` (rounded up to whole ticks, as
/// embassy-time rounds; saturating at `u32::MAX` µs, 71 minutes).
pub fn sleep(duration: Duration) -> impl core::future::Future<Output = ()> {
    sleep_micros(u64::try_from(duration.as_micros()).unwrap_or(u64::MAX))
}

/// The sensor's sleep: `Mono::delay` for `micros` microseconds.
pub fn sleep_micros(micros: u64) -> impl core::future::Future<Output = ()> {
    Mono::delay(u32::try_from(micros).unwrap_or(u32::MAX).micros_at_least())
}
