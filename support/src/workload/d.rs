//! Workload D (docs/reference.md, workload D): one LLM call, log-normal(0, 0.35) seconds,
//! except that 5 % of calls stall for a uniform 6 to 10 s. The published runs send 50,000
//! calls from 20 clients.

use crate::Rng;

/// The share of stalled calls.
pub const STALL_PROBABILITY: f64 = 0.05;

/// One latency in nanoseconds.
///
/// ```
/// use tailguard_support::{workload::d, Rng};
///
/// let mut rng = Rng::new(4);
/// let stalled = (0..10_000).filter(|_| d::latency_ns(&mut rng) >= 6e9).count();
/// assert!((400..600).contains(&stalled));
/// ```
pub fn latency_ns(rng: &mut Rng) -> f64 {
    // The normal draw comes first even for a stalled call: every call consumes the same
    // number of draws.
    let normal = rng.lognormal(0.0, 0.35);
    let s = if rng.unit() < STALL_PROBABILITY {
        rng.uniform(6.0, 10.0)
    } else {
        normal
    };
    s * 1e3 * 1e6
}
