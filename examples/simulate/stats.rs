//! Statistics: percentiles, SLA breaches and the static frontier.

use tailguard_support::workload::c;

use crate::sim::Run;
use crate::MS;

/// The quantiles of every table.
const QS: [f64; 5] = [0.5, 0.9, 0.95, 0.99, 0.999];

/// p50, p90, p95, p99, p99.9 in ms: `sorted[int((n - 1) * p)]`.
pub fn percentiles(values: &[u64]) -> [f64; 5] {
    let mut sorted = values.to_vec();
    sorted.sort_unstable();
    QS.map(|q| {
        if sorted.is_empty() {
            f64::NAN
        } else {
            sorted[((sorted.len() - 1) as f64 * q) as usize] as f64 / MS
        }
    })
}

/// The share of C's dialogs slower than the SLA, in %.
pub fn sla_breach_pct(run: &Run) -> f64 {
    let breaches = run.jobs.iter().filter(|&&l| l as f64 > c::SLA_NS).count();
    100.0 * breaches as f64 / run.jobs.len() as f64
}

/// The static frontier: the lowest p99 a static delay reaches at `overhead` (%),
/// interpolated linearly between the Pareto-optimal sweep points (no hedging is the point
/// at 0 %); above the largest overhead, the best p99 of the sweep.
pub fn frontier_p99(points: &[(f64, f64)], overhead: f64) -> f64 {
    let mut sorted = points.to_vec();
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
    let mut pareto: Vec<(f64, f64)> = Vec::new();
    for p in sorted {
        if pareto.last().is_none_or(|last| p.1 < last.1) {
            pareto.push(p);
        }
    }
    for pair in pareto.windows(2) {
        let ((o0, p0), (o1, p1)) = (pair[0], pair[1]);
        if overhead <= o1 {
            if overhead <= o0 {
                return p0;
            }
            return p0 + (p1 - p0) * (overhead - o0) / (o1 - o0);
        }
    }
    pareto.last().map_or(f64::NAN, |p| p.1)
}
