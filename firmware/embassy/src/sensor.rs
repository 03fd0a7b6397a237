//! A simulated sensor whose reads sometimes stall: 1 ms plus up to 0.25 ms of jitter
//! normally, 20 ms (20 times as long) on 7 % of reads, from a seeded xorshift generator, so
//! every run (and every target) sees the same reads.

use core::cell::Cell;
use core::convert::Infallible;

use embassy_time::{Duration, Timer};

/// A normal read's time, and its jitter on top (uniform).
const NORMAL_US: u64 = 1_000;
const JITTER_US: u32 = 250;
/// A stalled read's time, and how many reads in 100 stall.
pub const STALL_US: u64 = 20 * NORMAL_US;
pub const STALLS_PER_100: u32 = 7;

/// One sensor, or one sensor's replay: two sensors with the same seed read alike.
pub struct Sensor {
    state: Cell<u32>,
}

/// One read, drawn before it runs, so the caller knows whether it will stall.
pub struct Read {
    pub stalls: bool,
    duration: Duration,
    value: u16,
}

impl Sensor {
    /// A sensor whose reads follow `seed` (non-zero: xorshift's one fixed point is 0).
    pub const fn new(seed: u32) -> Self {
        Sensor {
            state: Cell::new(if seed == 0 { 1 } else { seed }),
        }
    }

    /// Draws the next read.
    pub fn next_read(&self) -> Read {
        let draw = self.next();
        // The high bits pick stall and jitter (xorshift's low bits are its weakest).
        let stalls = (draw >> 16) % 100 < STALLS_PER_100;
        let micros = if stalls {
            STALL_US
        } else {
            NORMAL_US + u64::from((draw >> 8) % JITTER_US)
        };
        Read {
            stalls,
            duration: Duration::from_micros(micros),
            value: (draw & 0x3ff) as u16,
        }
    }

    /// Draws the next read and performs it.
    pub async fn read(&self) -> Result<u16, Infallible> {
        self.next_read().perform().await
    }

    /// xorshift32.
    fn next(&self) -> u32 {
        let mut x = self.state.get();
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        self.state.set(x);
        x
    }
}

impl Read {
    /// Waits as long as the read takes, and answers its value. A sensor here never
    /// fails; the error type says so.
    pub async fn perform(self) -> Result<u16, Infallible> {
        Timer::after(self.duration).await;
        Ok(self.value)
    }
}
