//! Instructions per operation, for the same operations as benches/tailguard.rs: a
//! noise-free complement to its wall-clock medians on a shared machine.
//!
//! ```sh
//! bash .ci/bench-insns.sh        # runs this under valgrind's callgrind, K and 2K times
//! ```
//!
//! `insns <group/id> <K>` performs the operation K times (setup outside the count: the
//! K-versus-2K difference cancels it). For `merge`, each operation clones the target
//! first (as the wall-clock bench does outside its timing); `merge/<id>/clone` counts
//! the clone alone, to subtract.

use std::hint::black_box;

use hdrhistogram::Histogram;
use sketches_ddsketch::{Config, DDSketch as PeerSketch};
use tailguard::budget::{Budget, RatioBudget, TokenBucket};
use tailguard::clock::ManualClock;
use tailguard::hedge::{HedgeConfig, Hedger};
use tailguard::sketch::{presets, AtomicSketch};
use tailguard::window::{ExponentialWindow, Window, WindowConfig};
use tailguard_support::data_set::filled;
use tailguard_support::dist::Dist;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(op), Some(k)) = (
        args.get(1),
        args.get(2).and_then(|k| k.parse::<usize>().ok()),
    ) else {
        // `cargo bench` runs every bench with `--bench`: nothing to do here then.
        eprintln!("insns <group/id> <K>: run by .ci/bench-insns.sh under valgrind");
        return;
    };
    let ns: Vec<u64> = Dist::Stragglers
        .samples(0x7a11_9a4d, 1_000_000)
        .into_iter()
        .map(|v| (v.round() as u64).max(1))
        .collect();
    let f: Vec<f64> = ns.iter().map(|&v| v as f64).collect();
    let dd = || PeerSketch::new(Config::new(0.01, 2048, 1e3));
    let hdr = || Histogram::<u64>::new_with_bounds(1_000, 100_000_000_000, 2).unwrap();
    let (half_a, half_b) = ns.split_at(ns.len() / 2);
    let fill_log = |v: &[u64]| filled(presets::log_latency(), v, |s, x| s.record_u64(x));
    let fill_dd = |v: &[u64]| filled(dd(), v, |s, x| s.add(x as f64));
    let fill_hdr = |v: &[u64]| filled(hdr(), v, |s, x| s.saturating_record(x));
    let value = |i: usize| i % ns.len();
    match op.as_str() {
        "record/tailguard/log" => {
            let mut s = presets::log_latency();
            (0..k).for_each(|i| {
                let _ = s.record(f[value(i)]);
            });
            black_box(&s);
        }
        "record/tailguard/cubic" => {
            let mut s = presets::cubic_latency();
            (0..k).for_each(|i| {
                let _ = s.record(f[value(i)]);
            });
            black_box(&s);
        }
        "record/tailguard/int" => {
            let mut s = presets::int_latency();
            (0..k).for_each(|i| s.record_u64(ns[value(i)]));
            black_box(&s);
        }
        "record/tailguard/atomic" => {
            let s = AtomicSketch::with_layout(presets::INT_LATENCY_LAYOUT);
            (0..k).for_each(|i| s.record_u64(ns[value(i)]));
            black_box(&s);
        }
        "record/tailguard/window" => {
            let clock = ManualClock::new();
            let w = Window::with_layout(&clock, presets::INT_LATENCY_LAYOUT, WindowConfig::new())
                .unwrap();
            (0..k).for_each(|i| w.record_u64(ns[value(i)]));
            black_box(&w);
        }
        "record/tailguard/exponential_window" => {
            // As benches/ratios.rs times it against `AtomicSketch`: 160 `u32` buckets a slot.
            let clock = ManualClock::new();
            let w =
                ExponentialWindow::<_, u32, 160>::new(&clock, std::time::Duration::from_secs(30))
                    .unwrap();
            (0..k).for_each(|i| w.record_u64(ns[value(i)]));
            black_box(&w);
        }
        // Per value: k values in slices of 1,000 (as the wall-clock `batch` group).
        "batch/tailguard/int/slice" => {
            let mut s = presets::int_latency();
            ns.chunks_exact(1000)
                .cycle()
                .take(k / 1000)
                .for_each(|c| s.record_u64_slice(c));
            black_box(&s);
        }
        "batch/tailguard/cubic/slice" => {
            let mut s = presets::cubic_latency();
            f.chunks_exact(1000).cycle().take(k / 1000).for_each(|c| {
                let _ = s.record_slice(c);
            });
            black_box(&s);
        }
        "batch/tailguard/atomic/slice" => {
            let s = AtomicSketch::with_layout(presets::INT_LATENCY_LAYOUT);
            ns.chunks_exact(1000)
                .cycle()
                .take(k / 1000)
                .for_each(|c| s.record_u64_slice(c));
            black_box(&s);
        }
        "hedge/threshold" | "hedge/should_hedge" => {
            let clock = ManualClock::new();
            let hedger = Hedger::new(&clock, HedgeConfig::new()).unwrap();
            ns.iter()
                .take(100_000)
                .for_each(|&v| hedger.record(std::time::Duration::from_nanos(v)));
            hedger.window().refresh();
            let mut ticket = hedger.start();
            if op == "hedge/threshold" {
                // The threshold the hedger reads (an integer since the integer hedge path).
                (0..k).for_each(|_| {
                    black_box(hedger.window().cached_upper_bound());
                });
            } else {
                (0..k).for_each(|_| {
                    black_box(hedger.should_hedge(black_box(&mut ticket)));
                });
            }
        }
        // With the same refills as the wall-clock bench (ten deposits; one clock advance),
        // counted in: compare these between versions, not with the wall-clock figures.
        "hedge/ratio_budget/try_acquire" => {
            let ratio = RatioBudget::new(0.1, RatioBudget::MAX_CAP).unwrap();
            (0..k).for_each(|_| {
                (0..10).for_each(|_| ratio.on_request());
                black_box(ratio.try_acquire());
            });
        }
        "hedge/token_bucket/try_acquire" => {
            let clock = ManualClock::new();
            let bucket = TokenBucket::new(&clock, 1e6, 1024).unwrap();
            (0..k).for_each(|_| {
                clock.advance(std::time::Duration::from_micros(1));
                black_box(bucket.try_acquire());
            });
        }
        "record/sketches-ddsketch" => {
            let mut s = dd();
            (0..k).for_each(|i| s.add(f[value(i)]));
            black_box(&s);
        }
        "record/hdrhistogram" => {
            let mut s = hdr();
            (0..k).for_each(|i| s.saturating_record(ns[value(i)]));
            black_box(&s);
        }
        "quantile/tailguard" => {
            let s = fill_log(&ns);
            (0..k).for_each(|_| {
                let _ = black_box(s.quantile(black_box(0.99)));
            });
        }
        "quantile/tailguard/p50" | "quantile/tailguard/p999" => {
            let s = fill_log(&ns);
            let q = if op.ends_with("p50") { 0.5 } else { 0.999 };
            (0..k).for_each(|_| {
                let _ = black_box(s.quantile(black_box(q)));
            });
        }
        "quantile/tailguard/int" | "quantile/tailguard/cubic" => {
            let (mut int, mut cubic) = (presets::int_latency(), presets::cubic_latency());
            ns.iter().for_each(|&x| {
                int.record_u64(x);
                cubic.record_u64(x);
            });
            (0..k).for_each(|_| {
                let _ = black_box(if op.ends_with("int") {
                    int.quantile(black_box(0.99))
                } else {
                    cubic.quantile(black_box(0.99))
                });
            });
        }
        // The same p99 from an `AtomicSketch` (`LogLatency` layout), and a window's refresh
        // of its cached p90 (three `IntLatency` slots, all the data in the current one).
        "quantile/tailguard/atomic" => {
            let s = AtomicSketch::with_layout(presets::LOG_LATENCY_LAYOUT);
            ns.iter().for_each(|&x| s.record_u64(x));
            (0..k).for_each(|_| {
                let _ = black_box(s.quantile(black_box(0.99)));
            });
        }
        "quantile/tailguard/window/refresh" => {
            let clock = ManualClock::new();
            let config = WindowConfig::new()
                .with_refresh_records(0)
                .with_refresh_interval(std::time::Duration::ZERO);
            let w = Window::with_layout(&clock, presets::INT_LATENCY_LAYOUT, config).unwrap();
            ns.iter().for_each(|&x| w.record_u64(x));
            (0..k).for_each(|_| w.refresh());
            black_box(w.cached_quantile());
        }
        "quantile/sketches-ddsketch" => {
            let s = fill_dd(&ns);
            (0..k).for_each(|_| {
                let _ = black_box(s.quantile(black_box(0.99)));
            });
        }
        "quantile/hdrhistogram" => {
            let s = fill_hdr(&ns);
            (0..k).for_each(|_| {
                black_box(s.value_at_quantile(black_box(0.99)));
            });
        }
        "merge/tailguard" | "merge/tailguard/clone" => {
            let (a, b) = (fill_log(half_a), fill_log(half_b));
            clone_and_merge(op, k, &a, &b, |acc, b| acc.merge(b).unwrap());
        }
        "merge/sketches-ddsketch" | "merge/sketches-ddsketch/clone" => {
            let (a, b) = (fill_dd(half_a), fill_dd(half_b));
            clone_and_merge(op, k, &a, &b, |acc, b| acc.merge(b).unwrap());
        }
        "merge/hdrhistogram" | "merge/hdrhistogram/clone" => {
            let (a, b) = (fill_hdr(half_a), fill_hdr(half_b));
            clone_and_merge(op, k, &a, &b, |acc, b| acc.add(b).unwrap());
        }
        other => {
            eprintln!("unknown operation {other}");
            std::process::exit(2);
        }
    }
}

/// `k` times: clone `a`, and unless `op` is a `/clone` baseline, merge `b` into the clone
/// (the baseline's count is subtracted to leave the merge alone).
fn clone_and_merge<T: Clone>(op: &str, k: usize, a: &T, b: &T, merge: impl Fn(&mut T, &T)) {
    let merge_too = !op.ends_with("clone");
    for _ in 0..k {
        let mut acc = black_box(a.clone());
        if merge_too {
            merge(&mut acc, black_box(b));
        }
        black_box(&acc);
    }
}
