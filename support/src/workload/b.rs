//! Workload B (docs/reference.md, workload B): a streaming endpoint's time to first token.
//! The headers come at once; the first body byte after a log-normal time of mean 15 ms and
//! sd 3 ms on a cache hit, or, for 20 % of requests (cache misses), of mean 200 ms and sd
//! 25 ms.

use crate::Rng;

/// The share of cache misses.
pub const MISS_PROBABILITY: f64 = 0.2;

/// One time to first token in nanoseconds.
///
/// ```
/// use tailguard_support::{workload::b, Rng};
///
/// let mut rng = Rng::new(2);
/// let slow = (0..10_000).filter(|_| b::ttft_ns(&mut rng) > 100e6).count();
/// assert!((1_800..2_200).contains(&slow)); // the cache misses
/// ```
pub fn ttft_ns(rng: &mut Rng) -> f64 {
    let ms = if rng.unit() < MISS_PROBABILITY {
        rng.lognormal_mean_sd(200.0, 25.0)
    } else {
        rng.lognormal_mean_sd(15.0, 3.0)
    };
    ms * 1e6
}
