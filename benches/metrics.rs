//! `metrics::histogram!(..).record(v)` through tailguard's recorder
//! (`tailguard::metrics::OtelRecorder`) against the histogram storage of
//! metrics-exporter-prometheus (metrics-util's `AtomicBucket`, behind metrics-util's
//! `Registry` of `AtomicStorage`, as the exporter registers and records), in one process.
//!
//! ```sh
//! cargo bench --features metrics --bench metrics
//! ```
//!
//! Three rows: `histogram!` on every record (registration, a key lookup, then the record:
//! what code that does not keep its handle pays), a kept handle (the record alone), and
//! `histogram!` plus the scrape's share: an `AtomicBucket` only queues raw values (8
//! bytes each until a scrape), which the exporter then folds into a quantile summary
//! (metrics-util's `Summary::with_defaults`, a sketches-ddsketch DDSketch), where
//! tailguard's sketch is already built and a scrape takes one `snapshot`. Per
//! row, `TG_METRICS_ROUNDS` (default 15) interleaved rounds (tailguard then the peer, then
//! the peer then tailguard), each a pass over `TG_METRICS_VALUES` (default 200,000) of
//! workload A's latencies in seconds, on the thread's CPU clock; the peer's buckets are
//! emptied between rounds, untimed (a scrape drains them). It prints ns per record and the
//! median of the per-round ratios (peer / tailguard: above 1, tailguard is faster).

use std::hint::black_box;
use std::time::Duration;

use metrics::{Counter, Gauge, Histogram, Key, KeyName, Metadata, Recorder, SharedString, Unit};
use metrics_util::registry::{AtomicStorage, Registry};
use metrics_util::storage::Summary;
use tailguard::metrics::OtelRecorder;
use tailguard_support::data_set::DataSet;

/// The smallest recorder over metrics-exporter-prometheus's storage: its registry and
/// `AtomicBucket` histograms (the exporter adds recency tracking and a scrape).
struct BucketRecorder {
    registry: Registry<Key, AtomicStorage>,
}

impl Recorder for BucketRecorder {
    fn describe_counter(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn describe_gauge(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn describe_histogram(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn register_counter(&self, _: &Key, _: &Metadata<'_>) -> Counter {
        Counter::noop()
    }
    fn register_gauge(&self, _: &Key, _: &Metadata<'_>) -> Gauge {
        Gauge::noop()
    }
    fn register_histogram(&self, key: &Key, _: &Metadata<'_>) -> Histogram {
        self.registry
            .get_or_create_histogram(key, |h| Histogram::from_arc(h.clone()))
    }
}

#[cfg(unix)]
fn cpu_now() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    Duration::new(t.tv_sec.unsigned_abs(), t.tv_nsec.unsigned_abs() as u32)
}

#[cfg(not(unix))]
fn cpu_now() -> Duration {
    static EPOCH: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    EPOCH.get_or_init(std::time::Instant::now).elapsed()
}

fn timed(f: impl FnOnce()) -> Duration {
    let start = cpu_now();
    f();
    cpu_now().saturating_sub(start)
}

fn median(xs: &mut [f64]) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// One pass of `values` through `recorder`, as code calling the facade makes it.
fn pass(recorder: &impl Recorder, values: &[f64], keep_handle: bool) {
    metrics::with_local_recorder(recorder, || {
        if keep_handle {
            let h = metrics::histogram!("latency_seconds", "route" => "/api");
            for &v in values {
                h.record(black_box(v));
            }
        } else {
            for &v in values {
                metrics::histogram!("latency_seconds", "route" => "/api").record(black_box(v));
            }
        }
    });
}

fn main() {
    let rounds = env("TG_METRICS_ROUNDS", 15).max(1);
    let n = env("TG_METRICS_VALUES", 200_000).max(1);
    let values: Vec<f64> = DataSet::WorkloadA.ns()[..n.min(DataSet::WorkloadA.len())]
        .iter()
        .map(|&ns| ns as f64 / 1e9)
        .collect();
    let per = |d: Duration| d.as_secs_f64() * 1e9 / values.len() as f64;

    println!("| row | tailguard ns/record | AtomicBucket ns/record | ratio |\n|---|---|---|---|");
    let rows = [
        ("`histogram!(..).record(v)`", false, false),
        ("kept handle, `h.record(v)`", true, false),
        ("`histogram!(..).record(v)` and a scrape", false, true),
    ];
    for (row, keep_handle, scrape) in rows {
        let ours: OtelRecorder<16> = OtelRecorder::new();
        let peer = BucketRecorder {
            registry: Registry::atomic(),
        };
        // Untimed warm-up: registration, the peer's first blocks, the caches.
        pass(&ours, &values, keep_handle);
        pass(&peer, &values, keep_handle);
        peer.registry.clear();
        let (mut ts, mut ps, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
        let ours_round = || {
            pass(&ours, &values, keep_handle);
            if scrape {
                for (_, h) in ours.histograms() {
                    black_box(h.sketch().snapshot());
                }
            }
        };
        let peer_round = || {
            pass(&peer, &values, keep_handle);
            if scrape {
                peer.registry.visit_histograms(|_, bucket| {
                    let mut summary = Summary::with_defaults();
                    bucket.clear_with(|vs| vs.iter().for_each(|&v| summary.add(v)));
                    black_box(summary);
                });
            }
        };
        for round in 0..rounds {
            let (t, p) = if round % 2 == 0 {
                let t = timed(ours_round);
                (t, timed(peer_round))
            } else {
                let p = timed(peer_round);
                (timed(ours_round), p)
            };
            peer.registry.visit_histograms(|_, bucket| bucket.clear());
            ts.push(per(t));
            ps.push(per(p));
            ratios.push(p.as_secs_f64() / t.as_secs_f64());
        }
        // Nothing was lost on our side: every value of every pass is in the sketch.
        let recorded: u64 = ours.histograms().map(|(_, h)| h.sketch().count()).sum();
        assert_eq!(recorded, ((rounds + 1) * values.len()) as u64);
        println!(
            "| {row} | {:.1} | {:.1} | {:.2} |",
            median(&mut ts),
            median(&mut ps),
            median(&mut ratios)
        );
    }
}
