//! A simulated sensor whose reads sometimes stall, for examples/embassy_hedge.rs and the
//! embassy firmware (firmware/embassy/): 1 ms plus up to 0.25 ms of jitter normally, 20 ms
//! (20 times as long) on 7 % of reads, from a seeded [`Xorshift32`], so every run (and every
//! target) sees the same reads. The caller's executor sleeps: a read takes a `sleep`
//! function of microseconds (embassy's `Timer::after_micros`, say).

use core::cell::Cell;
use core::convert::Infallible;
use core::future::Future;

use crate::{Rng, Xorshift32};

/// A normal read's time, and its jitter on top (uniform).
const NORMAL_US: u64 = 1_000;
const JITTER_US: u32 = 250;
/// A stalled read's time.
pub const STALL_US: u64 = 20 * NORMAL_US;
/// How many reads in 100 stall.
pub const STALLS_PER_100: u32 = 7;

/// One sensor, or one sensor's replay: two sensors with the same seed read alike.
///
/// ```
/// use tailguard_support::sensor::Sensor;
///
/// let (a, replay) = (Sensor::new(7), Sensor::new(7));
/// let (first, again) = (a.next_read(), replay.next_read());
/// assert_eq!((first.stalls, first.micros), (again.stalls, again.micros));
/// assert!(first.micros >= 1_000);
/// ```
#[derive(Debug)]
pub struct Sensor {
    state: Cell<u32>,
}

/// One read, drawn before it runs, so the caller knows whether it will stall.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Read {
    /// Whether the read stalls.
    pub stalls: bool,
    /// How long it takes, in microseconds.
    pub micros: u64,
    /// What it answers.
    pub value: u16,
}

impl Sensor {
    /// A sensor whose reads follow `seed` (non-zero: xorshift's one fixed point is 0).
    pub const fn new(seed: u32) -> Self {
        Sensor {
            state: Cell::new(if seed == 0 { 1 } else { seed }),
        }
    }

    /// The sensor keyed by `seed` and `key`: its reads are a pure function of the two, so
    /// a backup made per request (keyed by the request's number) answers request `i` alike
    /// whatever was drawn before it (common random numbers: two hedgers that send a
    /// different number of hedges still meet the same backup reads on the same request).
    ///
    /// ```
    /// use tailguard_support::sensor::Sensor;
    ///
    /// let (a, b) = (Sensor::keyed(9, 41), Sensor::keyed(9, 41));
    /// assert_eq!(a.next_read(), b.next_read());
    /// assert_ne!(Sensor::keyed(9, 41).next_read(), Sensor::keyed(9, 42).next_read());
    /// ```
    pub fn keyed(seed: u32, key: u32) -> Self {
        // The high half of a splitmix64 draw (xorshift32 seeded with close keys would start
        // with close states).
        Sensor::new((Rng::keyed(u64::from(seed), [u64::from(key)]).next_u64() >> 32) as u32)
    }

    /// Draws the next read.
    pub fn next_read(&self) -> Read {
        let mut rng = Xorshift32(self.state.get());
        let draw = rng.next_u32();
        self.state.set(rng.0);
        // The high bits pick stall and jitter (xorshift's low bits are its weakest).
        let stalls = (draw >> 16) % 100 < STALLS_PER_100;
        let micros = if stalls {
            STALL_US
        } else {
            NORMAL_US + u64::from((draw >> 8) % JITTER_US)
        };
        Read {
            stalls,
            micros,
            value: (draw & 0x3ff) as u16,
        }
    }

    /// Draws the next read and performs it, sleeping with `sleep`.
    pub async fn read<S: Future<Output = ()>>(
        &self,
        sleep: impl FnOnce(u64) -> S,
    ) -> Result<u16, Infallible> {
        self.next_read().perform(sleep).await
    }
}

impl Read {
    /// Sleeps (with `sleep`, given microseconds) as long as the read takes, and answers
    /// its value. A sensor here never fails; the error type says so.
    pub async fn perform<S: Future<Output = ()>>(
        self,
        sleep: impl FnOnce(u64) -> S,
    ) -> Result<u16, Infallible> {
        sleep(self.micros).await;
        Ok(self.value)
    }
}
