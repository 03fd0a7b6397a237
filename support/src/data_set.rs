//! The benches' latency data sets: two shapes, so that no speed figure depends on one
//! distribution. Each is drawn once, from a fixed seed, before anything is
//! timed; `benches/tailguard.rs` (criterion) and `benches/ratios.rs` (the targets table)
//! time the same values.

use std::vec::Vec;

use crate::dist::Dist;
use crate::Rng;

/// A named, seeded set of latencies in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DataSet {
    /// Workload A (docs/reference.md): 10^6 latencies, log-normal with mean 5 ms and sd
    /// 2 ms, 5 % of them times 10. Narrow: most values fall in a few dozen bins.
    WorkloadA,
    /// 2^20 latencies: a log-normal body with median 3 ms and sigma 1 (about 100 us to
    /// 60 ms), and 3 % drawn from a Pareto tail from 30 ms with shape 1.2 (a p99.9 near
    /// 1 s, a maximum near 100 s), clamped to 1 us .. 100 s (the presets' range).
    HeavyTail,
}

/// Every [`DataSet`], in the order the benches run them.
pub const DATA_SETS: [DataSet; 2] = [DataSet::WorkloadA, DataSet::HeavyTail];

/// The heavy tail's share of the draws.
pub const HEAVY_TAIL_SHARE: f64 = 0.03;
/// Where the heavy tail starts, in ns (about the body's p99).
pub const HEAVY_TAIL_FROM_NS: f64 = 30e6;
/// The heavy tail's Pareto shape: below 2, so its variance is infinite.
pub const HEAVY_TAIL_SHAPE: f64 = 1.2;

impl DataSet {
    /// The name the benches print and put in their ids.
    pub const fn name(self) -> &'static str {
        match self {
            DataSet::WorkloadA => "workload-a",
            DataSet::HeavyTail => "heavy-tail",
        }
    }

    /// How many values [`DataSet::ns`] returns.
    pub const fn len(self) -> usize {
        match self {
            DataSet::WorkloadA => 1_000_000,
            DataSet::HeavyTail => 1 << 20,
        }
    }

    /// Never empty (clippy wants it beside `len`).
    pub const fn is_empty(self) -> bool {
        false
    }

    /// The latencies, in ns, each at least 1: the same values on every call.
    ///
    /// ```
    /// use tailguard_support::data_set::DataSet;
    ///
    /// let ns = DataSet::HeavyTail.ns();
    /// assert_eq!(ns.len(), 1 << 20);
    /// assert!(ns.iter().all(|&v| (1_000..=100_000_000_000).contains(&v)));
    /// let mut sorted = ns.clone();
    /// sorted.sort_unstable();
    /// let q = |q: f64| sorted[(q * (sorted.len() - 1) as f64) as usize];
    /// assert!((2_800_000..3_200_000).contains(&q(0.5))); // the body's median
    /// assert!(q(0.999) > 300_000_000); // the tail: p99.9 beyond 300 ms
    /// assert_eq!(DataSet::HeavyTail.ns(), ns);
    /// ```
    pub fn ns(self) -> Vec<u64> {
        match self {
            // The values benches/tailguard.rs has always timed (same seed, same rounding).
            DataSet::WorkloadA => Dist::Stragglers
                .samples(0x7a11_9a4d, self.len())
                .into_iter()
                .map(|v| (v.round() as u64).max(1))
                .collect(),
            DataSet::HeavyTail => {
                let mut rng = Rng::new(0x4ea7_7a11);
                (0..self.len())
                    .map(|_| {
                        let v = if rng.unit() < HEAVY_TAIL_SHARE {
                            HEAVY_TAIL_FROM_NS / rng.unit().powf(1.0 / HEAVY_TAIL_SHAPE)
                        } else {
                            rng.lognormal(3e6f64.ln(), 1.0)
                        };
                        v.round().clamp(1e3, 1e11) as u64
                    })
                    .collect()
            }
        }
    }
}

/// `sketch` after `record` of each of `values`: a sketch (tailguard's or a peer's) holding a
/// data set, or half of one.
pub fn filled<S, V: Copy>(mut sketch: S, values: &[V], mut record: impl FnMut(&mut S, V)) -> S {
    for &v in values {
        record(&mut sketch, v);
    }
    sketch
}
