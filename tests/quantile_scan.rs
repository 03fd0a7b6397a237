//! The quantile scan starts at the bin of the exact min or max and skips chunks of bins:
//! it must answer exactly what the plain definition answers (the first bin, from the
//! bottom, whose cumulative count exceeds the rank), for every q, on every kind of input:
//! zeros, values below and above the range, `+inf`, integer and float records, merges,
//! saturated bins.
//!
//! The same for the scans of an `AtomicSketch` and of a `Window`, which read only the bins
//! between the lowest and highest filled since the last clear, from the nearer end: they
//! must answer as the definition over every bin of a snapshot (which reads all of them).

use core::time::Duration;
use proptest::prelude::*;

use tailguard::clock::ManualClock;
use tailguard::sketch::{
    AtomicSketch, CubicMapping, DDSketch, IndexMapping, IntMapping, LogMapping, OtelMapping,
};
use tailguard::window::{Window, WindowConfig};
use tailguard_support::Xorshift64;

/// The definition, bin by bin from the bottom, through the public API only.
fn reference<M: IndexMapping, const N: usize>(s: &DDSketch<M, N>, q: f64) -> Option<f64> {
    let (min, max) = (s.min()?, s.max()?);
    if q == 0.0 {
        return Some(min);
    }
    if q == 1.0 {
        return Some(max);
    }
    let clamp = |v: f64| v.max(min).min(max);
    Some(rank_value(s, q).map_or(max, clamp))
}

/// The representative of the rank's bin (0 for the zero bin), not clamped; `None` if the
/// sketch is empty.
fn rank_value<M: IndexMapping, const N: usize>(s: &DDSketch<M, N>, q: f64) -> Option<f64> {
    let rank = (q * s.count().saturating_sub(1) as f64) as u64;
    let mut cumulative = u64::from(s.zero_count());
    if cumulative > rank {
        return Some(0.0);
    }
    for bin in s.bins() {
        cumulative += u64::from(bin.count);
        if cumulative > rank {
            return Some(s.mapping().value(bin.index));
        }
    }
    None
}

fn check<M: IndexMapping, const N: usize>(s: &DDSketch<M, N>, extra_qs: &[f64]) {
    let grid = (0..=100).map(|i| f64::from(i) / 100.0);
    for q in grid.chain(extra_qs.iter().copied()) {
        assert_eq!(s.quantile(q).unwrap(), reference(s, q), "q = {q}, {s:?}");
    }
}

/// One value to record: float or integer, across and beyond a small sketch's range.
#[derive(Debug, Clone, Copy)]
enum Value {
    Float(f64),
    Int(u64),
}

fn value() -> impl Strategy<Value = Value> {
    prop_oneof![
        // Mostly inside the range of a 64-bin sketch from 1.0 at 2 % (up to about 13).
        (0.5f64..20.0).prop_map(Value::Float),
        (0u64..30).prop_map(Value::Int),
        Just(Value::Float(0.0)),
        Just(Value::Float(f64::INFINITY)),
        (1e3f64..1e300).prop_map(Value::Float),
        any::<u64>().prop_map(Value::Int),
        (0.0f64..1.0).prop_map(Value::Float),
    ]
}

fn fill<M: IndexMapping, const N: usize>(values: &[(Value, u32)]) -> DDSketch<M, N> {
    let mut s = DDSketch::<M, N>::with_relative_accuracy(0.02, 1.0).unwrap();
    for &(v, n) in values {
        match v {
            Value::Float(v) => s.record_n(v, n).unwrap(),
            Value::Int(v) => s.record_u64_n(v, n),
        }
    }
    s
}

fn check_all<const N: usize>(a: &[(Value, u32)], b: &[(Value, u32)], qs: &[f64]) {
    fn one<M: IndexMapping, const N: usize>(a: &[(Value, u32)], b: &[(Value, u32)], qs: &[f64]) {
        let mut s = fill::<M, N>(a);
        check(&s, qs);
        s.merge(&fill::<M, N>(b)).unwrap();
        check(&s, qs);
    }
    one::<LogMapping, N>(a, b, qs);
    one::<CubicMapping, N>(a, b, qs);
    one::<IntMapping, N>(a, b, qs);
    one::<OtelMapping, N>(a, b, qs);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn scan_answers_as_the_definition(
        a in prop::collection::vec((value(), 1u32..4), 0..60),
        b in prop::collection::vec((value(), 1u32..4), 0..60),
        qs in prop::collection::vec(0.0f64..=1.0, 0..8),
    ) {
        check_all::<64>(&a, &b, &qs);
        check_all::<3>(&a, &b, &qs);
        check_all::<1>(&a, &b, &qs);
        check_all::<300>(&a, &b, &qs);
    }

    /// `AtomicSketch::quantile` and `count` read only the occupied range, which a clear
    /// resets: after each of two rounds of records (the second after a clear), they
    /// answer as the definition over a snapshot's every bin, as does a window over its
    /// slots, through rotations.
    #[test]
    fn atomic_and_window_scans_answer_as_the_definition(
        a in prop::collection::vec((value(), 1u32..4), 0..60),
        b in prop::collection::vec((value(), 1u32..4), 0..60),
        qs in prop::collection::vec(0.0f64..=1.0, 0..8),
    ) {
        check_atomic::<LogMapping>(&a, &b, &qs);
        check_atomic::<CubicMapping>(&a, &b, &qs);
        check_atomic::<IntMapping>(&a, &b, &qs);
        check_atomic::<OtelMapping>(&a, &b, &qs);
    }

    #[test]
    fn scan_answers_as_the_definition_with_saturated_bins(
        a in prop::collection::vec((value(), prop_oneof![1u32..4, Just(u32::MAX / 2)]), 0..12),
        b in prop::collection::vec((value(), prop_oneof![1u32..4, Just(u32::MAX)]), 0..12),
    ) {
        check_all::<64>(&a, &b, &[]);
        check_all::<17>(&a, &b, &[]);
    }
}

#[test]
fn presets_on_latency_data() {
    let mut s = tailguard::sketch::presets::log_latency();
    let mut c = tailguard::sketch::presets::cubic_latency();
    let mut i = tailguard::sketch::presets::int_latency();
    let mut rng = Xorshift64(0x2545_f491_4f6c_dd1d);
    for _ in 0..20_000 {
        let x = rng.next_u64();
        let v = 1_000_000 + (x % 50_000_000) * (1 + (x >> 60)); // 1 ms .. ~800 ms
        s.record_u64(v);
        c.record(v as f64).unwrap();
        i.record_u64(v);
    }
    check(&s, &[0.999, 0.9999, 1e-6]);
    check(&c, &[0.999, 0.9999, 1e-6]);
    check(&i, &[0.999, 0.9999, 1e-6]);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// An `AtomicSketch` snapshot carries min and max rounded down to a part per million:
    /// the scan's one bin of slack must cover it.
    #[test]
    fn scan_answers_as_the_definition_on_atomic_snapshots(
        values in prop::collection::vec(prop_oneof![0.5f64..2e3, 1.0f64..1.2, 0.0f64..1e12], 1..80),
    ) {
        fn one<M: IndexMapping>(values: &[f64]) {
            let atomic =
                tailguard::sketch::AtomicSketch::<M, 300>::with_relative_accuracy(0.02, 1.0)
                    .unwrap();
            for &v in values {
                atomic.record(v).unwrap();
            }
            check(&atomic.snapshot(), &[]);
        }
        one::<LogMapping>(&values);
        one::<CubicMapping>(&values);
        one::<IntMapping>(&values);
    }
}

/// The worst case for the rounding: a max just above a bin's lower bound.
#[test]
fn atomic_snapshot_with_max_at_bin_boundaries() {
    fn one<M: IndexMapping>() {
        let m = M::with_relative_accuracy(0.02).unwrap();
        for i in 1..250 {
            let atomic =
                tailguard::sketch::AtomicSketch::<M, 300>::with_relative_accuracy(0.02, 1.0)
                    .unwrap();
            let edge = m.lower_bound(m.index(1.0) + i);
            for v in [1.5, 2.0, edge * (1.0 + 1e-9), edge * (1.0 + 5e-7), edge] {
                atomic.record(v).unwrap();
            }
            check(&atomic.snapshot(), &[]);
        }
    }
    one::<LogMapping>();
    one::<CubicMapping>();
    one::<IntMapping>();
}

fn record_atomic<M: IndexMapping, const N: usize>(s: &AtomicSketch<M, N>, v: Value) {
    match v {
        Value::Float(v) => s.record(v).unwrap(),
        Value::Int(v) => s.record_u64(v),
    }
}

fn check_atomic<M: IndexMapping>(a: &[(Value, u32)], b: &[(Value, u32)], qs: &[f64]) {
    fn against_snapshot<M: IndexMapping, const N: usize>(s: &AtomicSketch<M, N>, qs: &[f64]) {
        let snap = s.snapshot();
        assert_eq!(s.count(), snap.count());
        assert_eq!(s.is_empty(), snap.is_empty());
        let grid = (0..=100).map(|i| f64::from(i) / 100.0);
        for q in grid.chain(qs.iter().copied()) {
            assert_eq!(s.quantile(q).unwrap(), reference(&snap, q), "q = {q}");
        }
    }
    fn one<M: IndexMapping, const N: usize>(a: &[(Value, u32)], b: &[(Value, u32)], qs: &[f64]) {
        let s = AtomicSketch::<M, N>::with_relative_accuracy(0.02, 1.0).unwrap();
        let clock = ManualClock::new();
        let config = WindowConfig::new()
            .with_interval(Duration::from_secs(1))
            .with_quantile(0.9);
        let window = Window::<_, M, N>::new(
            &clock,
            M::with_relative_accuracy(0.02).unwrap(),
            1.0,
            config,
        )
        .unwrap();
        let check_window = || {
            let snap = window.snapshot();
            assert_eq!(window.count(), snap.count());
            let grid = (1..100).map(|i| f64::from(i) / 100.0);
            for q in grid.chain(qs.iter().copied().filter(|&q| q > 0.0 && q < 1.0)) {
                assert_eq!(window.quantile(q).unwrap(), reference(&snap, q), "q = {q}");
            }
            window.refresh();
            let cached = rank_value(&snap, 0.9).map(|v| f64::from(v as f32));
            assert_eq!(window.cached_quantile(), cached);
        };
        for (i, &(v, n)) in a.iter().enumerate() {
            for _ in 0..n {
                record_atomic(&s, v);
                match v {
                    Value::Float(v) => window.record(v).unwrap(),
                    Value::Int(v) => window.record_u64(v),
                }
            }
            if i % 16 == 15 {
                // A rotation now and then: the oldest slot is cleared and refilled.
                clock.advance(Duration::from_secs(1));
            }
        }
        against_snapshot(&s, qs);
        check_window();
        s.clear();
        clock.advance(Duration::from_secs(1));
        check_window();
        for &(v, n) in b {
            for _ in 0..n {
                record_atomic(&s, v);
                window.record_u64(match v {
                    Value::Float(v) => v as u64,
                    Value::Int(v) => v,
                });
            }
        }
        against_snapshot(&s, qs);
        check_window();
    }
    one::<M, 64>(a, b, qs);
    one::<M, 3>(a, b, qs);
    one::<M, 1>(a, b, qs);
    one::<M, 300>(a, b, qs);
}
