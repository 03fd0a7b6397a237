//! The simulated sensor whose reads sometimes stall (`tailguard_support::sensor`, shared
//! with examples/embassy_hedge.rs), slept on embassy's timer.

use embassy_time::{Duration, Timer};
pub use tailguard_support::sensor::{Sensor, STALLS_PER_100};

/// What a read sleeps with: embassy's timer, for `micros` microseconds.
pub async fn sleep(micros: u64) {
    Timer::after(Duration::from_micros(micros)).await
}
