//! The distributions the accuracy tests (and the interop test, the quantiles CLI test and
//! the benches) draw their values from, and the exact quantiles they compare with.

use std::vec::Vec;

use crate::workload::a;
use crate::Rng;

/// A distribution of values, in nanoseconds-like units well inside [1e-3, 1e12].
#[derive(Debug, Clone, Copy)]
pub enum Dist {
    /// Uniform in (1, 1e6 + 1).
    Uniform,
    /// Log-normal around 1e6, sigma 0.5.
    LogNormalNarrow,
    /// Log-normal around 1e6, sigma 2.
    LogNormalWide,
    /// Pareto from 1e3, shape 1.5.
    Pareto,
    /// 4,200 every time.
    Constant,
    /// Workload A's latencies in ns (docs/reference.md, workload A): log-normal mean 5 ms,
    /// sd 2 ms; 5 % of draws times 10.
    Stragglers,
}

/// Every [`Dist`].
pub const DISTS: [Dist; 6] = [
    Dist::Uniform,
    Dist::LogNormalNarrow,
    Dist::LogNormalWide,
    Dist::Pareto,
    Dist::Constant,
    Dist::Stragglers,
];

impl Dist {
    /// One draw.
    pub fn sample(self, rng: &mut Rng) -> f64 {
        match self {
            Dist::Uniform => 1.0 + rng.unit() * 1e6,
            Dist::LogNormalNarrow => rng.lognormal(1e6f64.ln(), 0.5),
            Dist::LogNormalWide => rng.lognormal(1e6f64.ln(), 2.0),
            Dist::Pareto => 1e3 / rng.unit().powf(1.0 / 1.5),
            Dist::Constant => 4_200.0,
            Dist::Stragglers => a::latency_ns(rng),
        }
    }

    /// `n` draws from the stream of `seed` ([`Rng::new`]).
    ///
    /// ```
    /// use tailguard_support::dist::Dist;
    ///
    /// assert_eq!(Dist::Pareto.samples(9, 3), Dist::Pareto.samples(9, 3));
    /// assert!(Dist::Pareto.samples(9, 1000).iter().all(|&v| v > 1e3));
    /// ```
    pub fn samples(self, seed: u64, n: usize) -> Vec<f64> {
        let mut rng = Rng::new(seed);
        (0..n).map(|_| self.sample(&mut rng)).collect()
    }
}

/// The quantiles the accuracy tests check.
pub const QUANTILES: [f64; 11] = [0.0, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999, 1.0];

/// The exact sample quantile with tailguard's convention: `sorted[floor(q * (n - 1))]`.
///
/// ```
/// use tailguard_support::dist::exact_quantile;
///
/// assert_eq!(exact_quantile(&[1.0, 2.0, 3.0, 4.0], 0.5), 2.0);
/// ```
pub fn exact_quantile(sorted: &[f64], q: f64) -> f64 {
    sorted[(q * (sorted.len() - 1) as f64) as usize]
}
