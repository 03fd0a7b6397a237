//! Workload A (docs/reference.md, workload A): a 5 ms service, log-normal with mean 5 ms
//! and standard deviation 2 ms, 5 % of its answers ten times slower (stragglers). The
//! published runs send it 50,000 requests from 20 clients.

use crate::Rng;

/// The share of straggling answers.
pub const STRAGGLER_PROBABILITY: f64 = 0.05;
/// How much slower a straggler is.
pub const STRAGGLER_FACTOR: f64 = 10.0;

/// One latency in nanoseconds.
///
/// ```
/// use tailguard_support::{workload::a, Rng};
///
/// let mut rng = Rng::new(1);
/// let mut ns: Vec<f64> = (0..10_000).map(|_| a::latency_ns(&mut rng)).collect();
/// ns.sort_by(f64::total_cmp);
/// let median = ns[5_000];
/// assert!((4.2e6..5.0e6).contains(&median)); // log-normal: the median is below the mean
/// ```
pub fn latency_ns(rng: &mut Rng) -> f64 {
    // Mean m and sd s: sigma^2 = ln(1 + (s / m)^2) = ln 1.16, mu = ln m - sigma^2 / 2.
    let sigma = 1.16f64.ln().sqrt();
    let mu = 5e6f64.ln() - sigma * sigma / 2.0;
    let base = rng.lognormal(mu, sigma);
    if rng.unit() < STRAGGLER_PROBABILITY {
        base * STRAGGLER_FACTOR
    } else {
        base
    }
}
