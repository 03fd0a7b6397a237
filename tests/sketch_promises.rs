//! Promises of the sketch docs that hold at the edges: `-0.0` is a zero, merging counts
//! clamped values as recording does, the integer sum is exact past `u64::MAX`, subnormal
//! range starts are refused, and `min_trackable` / `max_trackable` are the exact bin
//! boundaries they are documented to be.

use proptest::prelude::*;
use tailguard::clock::ManualClock;
use tailguard::sketch::{
    presets, AtomicSketch, ConfigError, CubicMapping, DDSketch, IndexMapping, IntMapping,
    LogMapping,
};
use tailguard::window::{Window, WindowConfig, WindowError};

const QS: [f64; 7] = [0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0];
/// A small window: its size does not matter to the promises tested here.
const SMALL_BINS: usize = 64;

fn negative_zero_is_a_zero_in<M: IndexMapping>() {
    let mut s = DDSketch::<M, 128>::with_relative_accuracy(0.02, 1.0).unwrap();
    s.record(-0.0).unwrap();
    s.record_n(-0.0, 3).unwrap();
    for v in [2.0, 3.0, 5.0] {
        s.record(v).unwrap();
    }
    assert_eq!(s.zero_count(), 4);
    assert_eq!(s.min().unwrap().to_bits(), 0, "{:?}", s.min());
    assert_eq!(s.max(), Some(5.0));
    for q in QS {
        let v = s.quantile(q).unwrap().unwrap();
        assert!(!(v == 0.0 && v.is_sign_negative()), "q={q}: {v}");
    }

    let a = AtomicSketch::<M, 128>::with_relative_accuracy(0.02, 1.0).unwrap();
    a.record(-0.0).unwrap();
    for v in [2.0, 3.0, 5.0] {
        a.record(v).unwrap();
    }
    a.record(-0.0).unwrap();
    assert_eq!(a.min().unwrap().to_bits(), 0, "{:?}", a.min());
    let max = a.max().unwrap();
    assert!((5.0 * (1.0 - 1e-6)..=5.0).contains(&max), "{max}");
    for q in QS {
        let v = a.quantile(q).unwrap().unwrap();
        assert!(!(v == 0.0 && v.is_sign_negative()), "q={q}: {v}");
    }
    let snap = a.snapshot();
    assert_eq!(snap.zero_count(), 2);
    assert_eq!(snap.min().unwrap().to_bits(), 0);
}

#[test]
fn negative_zero_is_a_zero_everywhere() {
    negative_zero_is_a_zero_in::<LogMapping>();
    negative_zero_is_a_zero_in::<CubicMapping>();
    negative_zero_is_a_zero_in::<IntMapping>();
}

#[test]
fn merging_counts_clamped_values_as_recording_does() {
    let huge = 1e30; // far above a 64-bin sketch from 1.0
    let new = || DDSketch::<LogMapping, 64>::with_relative_accuracy(0.02, 1.0).unwrap();
    let (mut a, mut b, mut one) = (new(), new(), new());
    a.record_n(huge, u32::MAX - 1).unwrap();
    b.record_n(huge, 6).unwrap();
    one.record_n(huge, u32::MAX - 1).unwrap();
    one.record_n(huge, 6).unwrap();
    assert_eq!(one.clamped(), u64::from(u32::MAX));
    assert_eq!(one.saturated(), 5);
    a.merge(&b).unwrap();
    assert_eq!(a.clamped(), u64::from(u32::MAX));
    assert_eq!(a.saturated(), 5);
    assert_eq!(a.count(), u64::from(u32::MAX));
    assert_eq!(
        (a.clamped(), a.saturated(), a.count()),
        (one.clamped(), one.saturated(), one.count())
    );
    // The top bin also holds in-range values: clamped never exceeds the top bin.
    let top_value = a.mapping().value(a.min_index() + 63);
    let (mut c, mut d) = (new(), new());
    c.record_n(top_value, u32::MAX - 10).unwrap();
    c.record_n(huge, 5).unwrap();
    d.record_n(huge, 100).unwrap();
    c.merge(&d).unwrap();
    let top = c.bins().last().unwrap().count;
    assert_eq!(top, u32::MAX);
    assert!(c.clamped() <= u64::from(top));
    assert_eq!(c.count(), u64::from(u32::MAX));
    assert_eq!(c.saturated(), 95);
}

#[test]
fn integer_sum_is_exact_past_u64() {
    let v = 9e10 as u64;
    let n = 300_000_000;
    let mut s = presets::cubic_latency();
    s.record_u64_n(v, n);
    let want = 9e10 * 3e8;
    assert!((s.sum() - want).abs() <= 1e-12 * want, "{}", s.sum());
    let mean = s.mean().unwrap();
    assert!((mean - 9e10).abs() <= 1e-12 * 9e10, "{mean}");

    let mut t = presets::cubic_latency();
    for _ in 0..n / 100_000 {
        t.record_u64_n(v, 100_000);
    }
    assert_eq!(s, t);
    t.merge(&s).unwrap();
    assert!((t.sum() - 2.0 * want).abs() <= 1e-12 * 2.0 * want);
    assert!((t.mean().unwrap() - 9e10).abs() <= 1e-12 * 9e10);

    // The largest values, one record at a time, carry into the high word.
    let mut u = presets::int_latency();
    for _ in 0..10 {
        u.record_u64(u64::MAX);
    }
    let want = 10.0 * u64::MAX as f64;
    assert!((u.sum() - want).abs() <= 1e-15 * want);
    assert_eq!(u.mean(), Some(u64::MAX as f64));
}

#[test]
fn subnormal_min_values_are_refused() {
    for min in [5e-324, 1e-310, f64::MIN_POSITIVE / 2.0] {
        let bad = Some(ConfigError::InvalidMinValue);
        assert_eq!(
            DDSketch::<LogMapping, 64>::with_relative_accuracy(0.01, min).err(),
            bad
        );
        let cubic = CubicMapping::with_relative_accuracy(0.01).unwrap();
        assert_eq!(DDSketch::<_, 64>::new(cubic, min).err(), bad);
        assert_eq!(AtomicSketch::<_, 64>::new(IntMapping::K6, min).err(), bad);
        assert_eq!(
            DDSketch::<IntMapping, 64>::for_range(0.01, min, 1.0).err(),
            bad
        );
        let clock = ManualClock::new();
        let w: Result<Window<_, _, SMALL_BINS>, _> =
            Window::new(&clock, cubic, min, WindowConfig::new());
        assert_eq!(
            w.err(),
            Some(WindowError::Sketch(ConfigError::InvalidMinValue))
        );
    }
    // The smallest normal number is a valid start.
    assert!(DDSketch::<LogMapping, 64>::with_relative_accuracy(0.01, f64::MIN_POSITIVE).is_ok());
    assert!(DDSketch::<CubicMapping, 64>::with_relative_accuracy(0.01, f64::MIN_POSITIVE).is_ok());
    assert!(DDSketch::<IntMapping, 64>::with_relative_accuracy(0.01, f64::MIN_POSITIVE).is_ok());
}

fn subnormals_count_as_zeros_in<M: IndexMapping>() {
    let mut s = DDSketch::<M, 64>::with_relative_accuracy(0.01, 1.0).unwrap();
    let a = AtomicSketch::<M, 64>::with_relative_accuracy(0.01, 1.0).unwrap();
    for v in [5e-324, 1e-310] {
        s.record(v).unwrap();
        a.record(v).unwrap();
    }
    assert_eq!(s.zero_count(), 2);
    assert_eq!(s.bins().count(), 0);
    assert_eq!(a.snapshot().zero_count(), 2);
}

#[test]
fn subnormal_values_below_the_range_count_as_zeros() {
    subnormals_count_as_zeros_in::<LogMapping>();
    subnormals_count_as_zeros_in::<CubicMapping>();
    subnormals_count_as_zeros_in::<IntMapping>();
}

/// `min_trackable` is the first value with a bin, `max_trackable` the first clamped one.
fn assert_exact_range<M: IndexMapping, const N: usize>(s: &DDSketch<M, N>) {
    let m = s.mapping();
    let (lo, hi) = (s.min_trackable(), s.max_trackable());
    let top = s.min_index() + N as i32;
    assert_eq!(m.index(lo), s.min_index(), "{m:?} min_trackable {lo:e}");
    assert!(
        m.index(lo.next_down()) < s.min_index(),
        "{m:?} below {lo:e}"
    );
    if hi.is_finite() {
        assert!(m.index(hi) >= top, "{m:?} max_trackable {hi:e}");
    } else {
        // The bins reach past f64::MAX (a mapping whose `index(inf)` is finite): no value
        // is clamped.
        assert!(m.index(hi) >= top || m.index(f64::MAX) < top, "{m:?}");
    }
    assert!(m.index(hi.next_down()) < top, "{m:?} below {hi:e}");
    // What recording does at the boundaries.
    let mut t = s.clone();
    t.clear();
    t.record(lo.next_down()).unwrap();
    assert_eq!(t.zero_count(), 1);
    t.record(lo).unwrap();
    assert_eq!(t.zero_count(), 1);
    t.record(hi.next_down()).unwrap();
    assert_eq!(t.clamped(), 0);
    if hi.is_finite() {
        t.record(hi).unwrap();
        assert_eq!(t.clamped(), 1);
    }
    let a = AtomicSketch::with_layout(s.layout());
    assert_eq!(a.layout().min_trackable().to_bits(), lo.to_bits());
    assert_eq!(a.layout().max_trackable().to_bits(), hi.to_bits());
}

/// The microcontroller preset keeps its accuracy (1.56 %) over its whole range, 100 µs to
/// 10 s: every quantile of values spread over the range, and every value's bin.
#[test]
fn the_mcu_preset_is_within_its_accuracy_over_its_range() {
    let mut s = presets::mcu_latency();
    let alpha = s.relative_accuracy();
    assert!(alpha <= 0.0157, "{alpha}");
    let mut values = Vec::new();
    let mut v = 100_000u64; // 100 µs
    while v < 10_000_000_000 {
        values.push(v);
        v += v / 97 + 1;
    }
    values.push(10_000_000_000 - 1);
    for &v in &values {
        s.record_u64(v);
        let rep = s.mapping().value(s.mapping().index_u64(v));
        assert!((rep - v as f64).abs() <= alpha * v as f64, "{v}: {rep}");
    }
    assert_eq!((s.zero_count(), s.clamped()), (0, 0));
    values.sort_unstable();
    for q in [0.0, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 1.0] {
        let exact = values[(q * (values.len() - 1) as f64) as usize] as f64;
        let got = s.quantile(q).unwrap().unwrap();
        assert!(
            (got - exact).abs() <= alpha * exact,
            "q {q}: {got} vs {exact}"
        );
    }
}

#[test]
fn preset_ranges_are_exact() {
    assert_exact_range(&presets::log_latency());
    assert_exact_range(&presets::cubic_latency());
    assert_exact_range(&presets::int_latency());
    assert_exact_range(&presets::int_latency_coarse());
    assert_exact_range(&presets::mcu_latency());
}

fn exact_range_at<M: IndexMapping>(alpha: f64, min_value: f64) {
    let Ok(s) = DDSketch::<M, 64>::with_relative_accuracy(alpha, min_value) else {
        return; // out of the i32 index range at this accuracy
    };
    assert_exact_range(&s);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn ranges_are_exact_for_every_mapping(
        alpha in prop::sample::select(vec![0.001, 0.005, 0.01, 0.02, 0.05, 0.2]),
        exp in -300.0f64..300.0,
    ) {
        let min_value = 10f64.powf(exp);
        exact_range_at::<LogMapping>(alpha, min_value);
        exact_range_at::<CubicMapping>(alpha, min_value);
        exact_range_at::<IntMapping>(alpha, min_value);
    }
}

/// Bins that end at `i32::MAX` (a layout `from_min_index` accepts, with an offset that puts
/// real values there): every path that walks the bins by index works, with overflow checks
/// on (`cargo test`'s profile), where a `min_index..` range zipped with the bins once
/// overflowed past the last bin.
#[test]
fn bins_that_end_at_i32_max_are_walked_without_overflow() {
    use tailguard::proto::{decode_into, encode, IndexConvention};
    use tailguard::sketch::BinLayout;
    let mapping = LogMapping::from_gamma_offset(1.02, 2_147_483_000.0).unwrap();
    let min_index = i32::MAX - SMALL_BINS as i32;
    let layout = BinLayout::<LogMapping, SMALL_BINS>::from_min_index(mapping, min_index).unwrap();
    let mut s = DDSketch::with_layout(layout);
    // From the lowest bin to the top one (and past it: clamped into the top bin).
    let values: Vec<f64> = (0..200).map(|i| 6.0e4 * 1.01f64.powi(i)).collect();
    s.record_slice(&values).unwrap();
    let bins: Vec<_> = s.bins().collect();
    assert_eq!(bins.first().map(|b| b.index), Some(min_index));
    assert_eq!(bins.last().map(|b| b.index), Some(i32::MAX - 1));
    let in_bins: u64 = bins.iter().map(|b| u64::from(b.count)).sum();
    assert_eq!(in_bins + u64::from(s.zero_count()), 200);
    assert!(s.clamped() > 0 && s.zero_count() > 0);
    assert!(s.quantile(0.5).unwrap().is_some());

    let live = AtomicSketch::with_layout(layout);
    values.iter().for_each(|&v| live.record(v).unwrap());
    let snapshot = live.snapshot();
    assert!(snapshot.bins().eq(s.bins()));
    let mut merged = s.clone();
    live.merge_into(&mut merged).unwrap();
    merged.merge(&s).unwrap();
    assert_eq!(merged.count(), 3 * s.count());

    let mut buf = [0u8; 4096];
    let len = encode(&s, IndexConvention::GoJava, &mut buf).unwrap();
    let mut back = DDSketch::with_layout(layout);
    decode_into(&buf[..len], IndexConvention::GoJava, &mut back).unwrap();
    assert!(back.bins().eq(s.bins()));
}

/// Layouts at both ends of `i32` and in between, for mappings whose offsets put real values
/// there: windows, atomic sketches and hedgers record (any float bits too), refresh,
/// answer quantiles and thresholds, and hedge, with overflow checks on, without a panic.
fn layouts_anywhere_in<M: IndexMapping>(mapping: M) {
    use core::time::Duration;
    use tailguard::hedge::{Attempt, HedgeConfig, Hedger};
    use tailguard::sketch::BinLayout;
    let top = i32::MAX - SMALL_BINS as i32;
    for min_index in [i32::MIN + 1, -(1 << 30), -5, 0, 1 << 30, top - 1, top] {
        let layout = BinLayout::<M, SMALL_BINS>::from_min_index(mapping, min_index).unwrap();
        let clock = ManualClock::new();
        let window: Window<_, M, SMALL_BINS, 3> =
            Window::with_layout(&clock, layout, WindowConfig::new()).unwrap();
        let atomic = AtomicSketch::with_layout(layout);
        for i in 0..300u64 {
            let v = 1u64 << (i % 64);
            window.record_u64(v);
            window.record_duration(Duration::from_nanos(v));
            atomic.record_u64(v);
            let bits = i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 1; // no sign: no error
            atomic
                .record(f64::from_bits(bits))
                .unwrap_or_else(|_| assert!(f64::from_bits(bits).is_nan()));
            clock.advance(Duration::from_millis(7));
        }
        window.refresh();
        let _ = window.cached_upper_bound();
        for q in QS {
            let _ = window.quantile(q).unwrap();
            let _ = atomic.quantile(q).unwrap();
        }
        assert!(window.snapshot().bins().count() <= SMALL_BINS);
        let hedger = Hedger::with_layout(&clock, HedgeConfig::new(), layout).unwrap();
        for i in 0..200u64 {
            let mut ticket = hedger.start();
            clock.advance(Duration::from_nanos(1u64 << (i % 40)));
            let _ = hedger.should_hedge(&mut ticket);
            let _ = hedger.on_success(&ticket, Attempt::Primary);
        }
        assert!(hedger.window().count() > 0);
    }
}

#[test]
fn layouts_anywhere_in_i32_never_panic() {
    layouts_anywhere_in(IntMapping::with_mantissa_bits(0).unwrap());
    layouts_anywhere_in(IntMapping::with_mantissa_bits(6).unwrap());
    layouts_anywhere_in(IntMapping::with_mantissa_bits(20).unwrap());
    layouts_anywhere_in(LogMapping::from_gamma_offset(1.02, 2_147_483_000.0).unwrap());
    layouts_anywhere_in(LogMapping::from_gamma_offset(1.02, -2_147_483_000.0).unwrap());
    layouts_anywhere_in(LogMapping::from_gamma_offset(1.0001, 0.0).unwrap());
    layouts_anywhere_in(CubicMapping::from_gamma_offset(1.5, 2_147_483_600.0).unwrap());
    layouts_anywhere_in(CubicMapping::from_gamma_offset(1.5, -2_147_483_600.0).unwrap());
}
