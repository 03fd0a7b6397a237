//! Rank queries (`rank`, `rank_u64`, `fraction_at_or_below`) against exact ranks: the
//! number of recorded values at or below `v`, counted from the sorted values.
//!
//! The guarantee (stated on `DDSketch::rank`): with `u` the upper edge of `v`'s bin,
//! `exact(v) <= rank(v) <= exact(u)` (plus the clamped values in the top bin), `u` at most
//! `v * (1 + alpha) / (1 - alpha)`, and the ends exact: 0 below the minimum, the count from
//! the maximum up (an atomic sketch's to a part per million). `OtelMapping`'s edges are
//! exact only up to its logarithm: there the bound is widened by four times its documented
//! edge tolerance. Checked for every mapping's preset, for `DDSketch`, `AtomicSketch` and
//! `Window`, at random values, at recorded values and at bin edges; and for
//! `ExponentialSketch` at the scale it reached (its buckets are exact: no tolerance), less
//! what full counters dropped.

use core::time::Duration;
use proptest::prelude::*;

use tailguard::clock::ManualClock;
use tailguard::sketch::{
    presets, AtomicSketch, BinLayout, Counter, CubicMapping, DDSketch, ExponentialSketch,
    IndexMapping, IntMapping, InvalidValue, LogMapping, OtelMapping,
};
use tailguard::window::{Window, WindowConfig};

/// The upper edge of a bin, as the guarantee states it for each mapping.
trait Edges: IndexMapping {
    /// The upper edge of bin `i` (`v` is in it): the first value of the next bin for
    /// DataDog's mappings, the bucket's own (inclusive) upper edge for OpenTelemetry's.
    fn upper_edge(&self, i: i32, v: f64) -> f64;

    /// The largest value a rank in bin `i` may count.
    fn last_counted(&self, i: i32, v: f64) -> f64;

    /// How far (relative) the bound is widened at `v`.
    fn slack(&self, _v: f64) -> f64 {
        0.0
    }
}

/// The first value the mapping puts in a bin above `i`, by bisection on the bits of the
/// non-negative floats (whose order is the values'), from `v` (in bin `i`).
fn first_value_above<M: IndexMapping>(m: &M, i: i32, v: f64) -> f64 {
    let (mut lo, mut hi) = (v.max(f64::MIN_POSITIVE).to_bits(), f64::INFINITY.to_bits());
    assert!(m.index(f64::from_bits(lo)) <= i && m.index(f64::INFINITY) > i);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if m.index(f64::from_bits(mid)) > i {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    f64::from_bits(hi)
}

macro_rules! datadog_edges {
    ($($m:ty),*) => {$(
        impl Edges for $m {
            fn upper_edge(&self, i: i32, v: f64) -> f64 {
                first_value_above(self, i, v)
            }
            fn last_counted(&self, i: i32, v: f64) -> f64 {
                first_value_above(self, i, v).next_down()
            }
        }
    )*};
}
datadog_edges!(LogMapping, CubicMapping, IntMapping);

impl Edges for OtelMapping {
    fn upper_edge(&self, i: i32, _v: f64) -> f64 {
        self.lower_bound(i + 1) // b^(i + 1)
    }
    fn last_counted(&self, i: i32, v: f64) -> f64 {
        self.upper_edge(i, v) * (1.0 + self.slack(v))
    }
    /// Four times the documented edge tolerance, `(|ln v| + 1) * 2^-50`.
    fn slack(&self, v: f64) -> f64 {
        4.0 * (v.ln().abs() + 1.0) * 2f64.powi(-50)
    }
}

/// The recorded values, sorted.
struct Exact(Vec<f64>);

impl Exact {
    fn new(values: &[f64]) -> Self {
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        Exact(sorted)
    }

    /// The exact rank: values at or below `x`.
    fn at_or_below(&self, x: f64) -> u64 {
        self.0.partition_point(|&w| w <= x) as u64
    }

    fn count(&self) -> u64 {
        self.0.len() as u64
    }
}

/// How exactly a sketch keeps its min and max.
#[derive(Clone, Copy, Debug)]
enum Ends {
    Exact,
    /// Rounded down to 20 bits of mantissa (the atomic sketches' keys).
    PartPerMillion,
}

/// `r = rank(v)` is within the stated bound.
fn check_bound<M: Edges, const N: usize>(
    layout: &BinLayout<M, N>,
    exact: &Exact,
    ends: Ends,
    v: f64,
    r: u64,
) {
    let m = layout.mapping();
    let count = exact.count();
    let what = || format!("{m:?}, v = {v:e}, rank {r}, {ends:?}, values {:?}", exact.0);
    if v.is_nan() {
        return;
    }
    assert!(r <= count, "{}", what());
    if v < 0.0 {
        assert_eq!(r, 0, "{}", what());
        return;
    }
    // The ends.
    if let (Some(&min), Some(&max)) = (exact.0.first(), exact.0.last()) {
        let ppm = match ends {
            Ends::Exact => 0.0,
            Ends::PartPerMillion => 2f64.powi(-20),
        };
        // The ends decide where they apply (a value above the range but below the
        // minimum has rank 0, though its bin is the top one).
        if v < min * (1.0 - ppm) {
            assert_eq!(r, 0, "below the minimum: {}", what());
            return;
        }
        if v >= max * (1.0 + ppm) {
            assert_eq!(r, count, "at or above the maximum: {}", what());
            return;
        }
    } else {
        assert_eq!(r, 0, "{}", what());
        return;
    }
    let slack = m.slack(v);
    assert!(
        exact.at_or_below(v * (1.0 - slack)) <= r,
        "lower bound: exact {}, {}",
        exact.at_or_below(v * (1.0 - slack)),
        what()
    );
    let top = layout.min_index() + N as i32; // the first index above the range
    let i = if v == 0.0 { i32::MIN } else { m.index(v) };
    if i >= top {
        // Every value is in the top bin from here on; within the ends' rounding of the
        // minimum, a rank may still answer "below the minimum".
        let near_min = exact.0.first().is_some_and(|&min| v < min);
        assert!(
            r == count || (near_min && r == 0),
            "above the range: {}",
            what()
        );
        return;
    }
    // The zero bin answers as the bin below the lowest.
    let i = i.max(layout.min_index() - 1);
    // The values clamped into the top bin count with it.
    let clamped = if i == top - 1 {
        exact
            .0
            .iter()
            .filter(|&&w| w > 0.0 && m.index(w) >= top)
            .count() as u64
    } else {
        0
    };
    let last = m.last_counted(i, v);
    assert!(
        r <= exact.at_or_below(last) + clamped,
        "upper bound: exact {} at {last:e}, {} clamped, {}",
        exact.at_or_below(last),
        clamped,
        what()
    );
    if i >= layout.min_index() {
        let alpha = m.relative_accuracy();
        let width = (1.0 + alpha) / (1.0 - alpha) * (1.0 + slack) * (1.0 + 1e-9);
        let u = m.upper_edge(i, v);
        assert!(u <= v * width, "upper edge {u:e}: {}", what());
    }
}

/// Where to ask: random values, the recorded values and their neighbours, and the edges of
/// their bins and theirs (the first value of the bin, of the next, and the floats beside).
fn probes<M: Edges>(m: &M, values: &[f64], extra: &[f64]) -> Vec<f64> {
    let mut out = vec![0.0, -0.0, -1.0, f64::NEG_INFINITY, f64::INFINITY, f64::NAN];
    out.extend_from_slice(extra);
    for &w in values.iter().take(24) {
        out.extend([w, w.next_up(), w.next_down()]);
        if w > 0.0 && w.is_finite() {
            let i = m.index(w);
            let u = m.upper_edge(i, w);
            let below = m.upper_edge(i - 1, m.lower_bound(i - 1));
            out.extend([u, u.next_down(), u.next_up(), below, below.next_down()]);
        }
    }
    out
}

/// `rank_u64(n) == rank(n as f64)` for whole probes below 2^53.
fn whole_probes(probes: &[f64]) -> impl Iterator<Item = u64> + '_ {
    probes
        .iter()
        .filter(|v| v.is_finite() && **v >= 0.0 && **v < 9e15)
        .map(|v| v.round() as u64)
}

/// How a value is recorded.
enum Record {
    Int(u64),
    Float(f64),
}

/// The values, whole ones through the integer path every other time.
fn records(values: &[f64]) -> impl Iterator<Item = Record> + '_ {
    values.iter().enumerate().map(|(k, &v)| {
        if k % 2 == 1 && v.fract() == 0.0 && v < 9e15 {
            Record::Int(v as u64)
        } else {
            Record::Float(v)
        }
    })
}

fn check_ddsketch<M: Edges, const N: usize>(
    layout: BinLayout<M, N>,
    values: &[f64],
    extra: &[f64],
) {
    let mut s = DDSketch::with_layout(layout);
    for r in records(values) {
        match r {
            Record::Int(n) => s.record_u64(n),
            Record::Float(v) => s.record(v).unwrap(),
        }
    }
    let exact = Exact::new(values);
    assert_eq!(s.count(), exact.count());
    let probes = probes(layout.mapping(), values, extra);
    for &v in &probes {
        match s.rank(v) {
            Ok(r) => {
                check_bound(&layout, &exact, Ends::Exact, v, r);
                let share = s.fraction_at_or_below(v).unwrap();
                assert_eq!(
                    share,
                    (!values.is_empty()).then(|| r as f64 / values.len() as f64)
                );
            }
            Err(InvalidValue) => assert!(v.is_nan()),
        }
    }
    for n in whole_probes(&probes) {
        assert_eq!(s.rank_u64(n), s.rank(n as f64).unwrap(), "{n}");
    }
}

fn check_atomic<M: Edges, const N: usize>(layout: BinLayout<M, N>, values: &[f64], extra: &[f64]) {
    let s = AtomicSketch::with_layout(layout);
    for &v in values {
        s.record(v).unwrap();
    }
    let exact = Exact::new(values);
    let probes = probes(layout.mapping(), values, extra);
    for &v in &probes {
        match s.rank(v) {
            Ok(r) => {
                check_bound(&layout, &exact, Ends::PartPerMillion, v, r);
                let share = s.fraction_at_or_below(v).unwrap();
                assert_eq!(
                    share,
                    (!values.is_empty()).then(|| r as f64 / values.len() as f64)
                );
            }
            Err(InvalidValue) => assert!(v.is_nan()),
        }
    }
    for n in whole_probes(&probes) {
        assert_eq!(s.rank_u64(n), s.rank(n as f64).unwrap(), "{n}");
    }
}

/// Half the values in one interval, half in the next: the window answers over both slots.
fn check_window<M: Edges, const N: usize>(layout: BinLayout<M, N>, values: &[f64], extra: &[f64]) {
    let clock = ManualClock::new();
    let config = WindowConfig::new().with_interval(Duration::from_secs(10));
    let w: Window<_, M, N> = Window::with_layout(&clock, layout, config).unwrap();
    let (first, second) = values.split_at(values.len() / 2);
    first.iter().for_each(|&v| w.record(v).unwrap());
    clock.advance(Duration::from_secs(10));
    second.iter().for_each(|&v| w.record(v).unwrap());
    assert_eq!(w.count(), values.len() as u64);
    let exact = Exact::new(values);
    let probes = probes(layout.mapping(), values, extra);
    for &v in &probes {
        match w.rank(v) {
            Ok(r) => {
                check_bound(&layout, &exact, Ends::PartPerMillion, v, r);
                let share = w.fraction_at_or_below(v).unwrap();
                assert_eq!(
                    share,
                    (!values.is_empty()).then(|| r as f64 / values.len() as f64)
                );
            }
            Err(InvalidValue) => assert!(v.is_nan()),
        }
    }
    for n in whole_probes(&probes) {
        assert_eq!(w.rank_u64(n), w.rank(n as f64).unwrap(), "{n}");
    }
}

/// Latencies in nanoseconds over several decades, below and above the presets' range
/// (1 µs to 100 s) too, zeros, and whole numbers.
fn value() -> impl Strategy<Value = f64> {
    prop_oneof![
        8 => (2.5f64..11.5).prop_map(|e| 10f64.powf(e)),
        2 => (3.0f64..10.0).prop_map(|e| 10f64.powf(e).round()),
        1 => Just(0.0),
        1 => (0.0f64..1.0).prop_map(|x| (1.0 + x) * 1e6), // a cluster: many share a bin
    ]
}

fn values() -> impl Strategy<Value = Vec<f64>> {
    prop::collection::vec(value(), 0..100)
}

fn extra() -> impl Strategy<Value = Vec<f64>> {
    prop::collection::vec((2.0f64..12.0).prop_map(|e| 10f64.powf(e)), 0..20)
}

/// `r = rank(v)` of an exponential sketch is within its bound at the scale it reached:
/// `exact(v) - saturated <= r <= exact(u)`, `u` the upper edge of `v`'s bucket; with
/// nothing saturated, the ends exact too.
fn check_exponential_bound<C: Counter, const B: usize>(
    s: &ExponentialSketch<C, B>,
    exact: &Exact,
    v: f64,
    r: u64,
) {
    let m = s.mapping();
    let saturated = s.saturated();
    let what = || format!("{s:?}, v = {v:e}, rank {r}, values {:?}", exact.0);
    assert!(r <= s.count(), "{}", what());
    if v < 0.0 || s.is_empty() {
        assert_eq!(r, 0, "{}", what());
        return;
    }
    if saturated == 0 {
        let (min, max) = (exact.0[0], exact.0[exact.0.len() - 1]);
        if v < min {
            assert_eq!(r, 0, "below the minimum: {}", what());
            return;
        }
        if v >= max {
            assert_eq!(r, s.count(), "at or above the maximum: {}", what());
            return;
        }
    }
    // `v`'s bucket, exactly: the offset of a sketch of it alone (at the finest scale),
    // shifted to the scale reached. (`OtelMapping::index` may miss an edge by one.)
    let mut alone = ExponentialSketch::<u8, 2>::new();
    alone.record(v).unwrap();
    if v == 0.0 {
        assert!(r <= exact.at_or_below(0.0), "{}", what());
        return;
    }
    let i = alone.offset() >> (8 - s.scale());
    let low = exact.at_or_below(v);
    assert!(
        low.saturating_sub(saturated) <= r,
        "lower bound: exact {low}, {}",
        what()
    );
    // `b^(i + 1)`, to the float's rounding.
    let u = m.lower_bound(i + 1) * (1.0 + 1e-12);
    assert!(
        r <= exact.at_or_below(u),
        "upper bound: exact {} at {u:e}, {}",
        exact.at_or_below(u),
        what()
    );
    let alpha = s.relative_accuracy();
    // Subnormals share the bucket of 2^-1022, as in the SDKs: no relative width there.
    if alpha < 1.0 && v >= f64::MIN_POSITIVE {
        let width = (1.0 + alpha) / (1.0 - alpha) * (1.0 + 1e-9);
        assert!(u <= v * width, "upper edge {u:e}: {}", what());
    }
}

/// Records `values` (whole ones through the integer path every other time) into an
/// exponential sketch and checks its ranks, fractions and integer ranks at the probes.
fn check_exponential<C: Counter, const B: usize>(values: &[f64], extra: &[f64]) {
    let mut s = ExponentialSketch::<C, B>::new();
    for r in records(values) {
        match r {
            Record::Int(n) => s.record_u64(n),
            Record::Float(v) => s.record(v).unwrap(),
        }
    }
    let exact = Exact::new(values);
    assert_eq!(s.count() + s.saturated(), exact.count());
    let probes = probes(&s.mapping(), values, extra);
    for &v in &probes {
        match s.rank(v) {
            Ok(r) => {
                check_exponential_bound(&s, &exact, v, r);
                let share = s.fraction_at_or_below(v).unwrap();
                assert_eq!(share, (!s.is_empty()).then(|| r as f64 / s.count() as f64));
            }
            Err(InvalidValue) => assert!(v.is_nan()),
        }
    }
    for n in whole_probes(&probes) {
        assert_eq!(s.rank_u64(n), s.rank(n as f64).unwrap(), "{n}");
    }
}

/// Values for the exponential sketch: the latencies above, data spanning up to thirty
/// decades (so that it downscales far), and powers of two and their neighbours (edges at
/// every scale).
fn exponential_value() -> impl Strategy<Value = f64> {
    prop_oneof![
        4 => value(),
        2 => (-10.0f64..20.0).prop_map(|e| 10f64.powf(e)),
        2 => (-20i32..60, -1i32..=1).prop_map(|(k, d)| {
            let p = 2f64.powi(k);
            match d {
                -1 => p.next_down(),
                0 => p,
                _ => p.next_up(),
            }
        }),
    ]
}

fn exponential_values() -> impl Strategy<Value = Vec<f64>> {
    prop::collection::vec(exponential_value(), 0..100)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    #[test]
    fn ddsketch_ranks_are_within_the_bound(values in values(), extra in extra()) {
        check_ddsketch(presets::LOG_LATENCY_LAYOUT, &values, &extra);
        check_ddsketch(presets::CUBIC_LATENCY_LAYOUT, &values, &extra);
        check_ddsketch(presets::INT_LATENCY_LAYOUT, &values, &extra);
        check_ddsketch(presets::OTEL_LATENCY_LAYOUT, &values, &extra);
    }

    #[test]
    fn atomic_sketch_ranks_are_within_the_bound(values in values(), extra in extra()) {
        check_atomic(presets::LOG_LATENCY_LAYOUT, &values, &extra);
        check_atomic(presets::CUBIC_LATENCY_LAYOUT, &values, &extra);
        check_atomic(presets::INT_LATENCY_LAYOUT, &values, &extra);
        check_atomic(presets::OTEL_LATENCY_LAYOUT, &values, &extra);
    }

    #[test]
    fn window_ranks_are_within_the_bound(values in values(), extra in extra()) {
        check_window(presets::CUBIC_LATENCY_LAYOUT, &values, &extra);
        check_window(presets::MCU_LATENCY_LAYOUT, &values, &extra);
    }

    #[test]
    fn exponential_ranks_are_within_the_bound(values in exponential_values(), extra in extra()) {
        check_exponential::<u32, 160>(&values, &extra);
        check_exponential::<u16, 64>(&values, &extra);
        check_exponential::<u16, 8>(&values, &extra);
        check_exponential::<u32, 2>(&values, &extra);
    }

    /// Full `u8` counters drop values (by records and by downscales that merge buckets):
    /// the ranks count what is held, within the saturated values of the exact ranks.
    #[test]
    fn saturated_exponential_ranks_are_within_the_bound(
        values in prop::collection::vec((exponential_value(), 1usize..200), 1..8),
        extra in extra(),
    ) {
        // 300 of one value: its bucket's counter is full whatever the others do.
        let values: Vec<f64> = values
            .iter()
            .flat_map(|&(v, n)| std::iter::repeat_n(v, n))
            .chain(std::iter::repeat_n(1e6, 300))
            .collect();
        check_exponential::<u8, 16>(&values, &extra);
        check_exponential::<u8, 4>(&values, &extra);
    }
}

/// A value above the range ranks by the ends before the bins: below the only value (both in
/// the top bin), the rank is 0 (a case the properties above once drew).
#[test]
fn above_the_range_but_below_the_minimum_ranks_zero() {
    let (values, extra) = ([305_718_577_001.650_63], [3.038_546_599_696_886e11]);
    check_ddsketch(presets::CUBIC_LATENCY_LAYOUT, &values, &extra);
    check_atomic(presets::CUBIC_LATENCY_LAYOUT, &values, &extra);
    check_window(presets::CUBIC_LATENCY_LAYOUT, &values, &extra);
    let mut s = presets::cubic_latency();
    s.record(values[0]).unwrap();
    assert_eq!(s.rank(extra[0]), Ok(0));
}

/// Values a hair from OpenTelemetry's bucket edges (every power of two is one), where its
/// logarithm may put a value across the edge: within the widened bound.
#[test]
fn otel_ranks_near_powers_of_two_are_within_the_widened_bound() {
    let layout = presets::OTEL_LATENCY_LAYOUT;
    let mut values = Vec::new();
    for k in 10..37 {
        let edge = 2f64.powi(k);
        let mut x = edge;
        for _ in 0..3 {
            x = x.next_down();
        }
        for _ in 0..7 {
            values.push(x);
            x = x.next_up();
        }
    }
    check_ddsketch(layout, &values, &[]);
    check_atomic(layout, &values, &[]);
}

#[test]
fn empty_sketches_rank_zero_and_have_no_fraction() {
    let s = presets::cubic_latency();
    let a = AtomicSketch::with_layout(presets::CUBIC_LATENCY_LAYOUT);
    let clock = ManualClock::new();
    let w =
        Window::with_layout(&clock, presets::CUBIC_LATENCY_LAYOUT, WindowConfig::new()).unwrap();
    for v in [0.0, 1.0, 1e6, f64::INFINITY, -1.0] {
        assert_eq!(s.rank(v), Ok(0));
        assert_eq!(a.rank(v), Ok(0));
        assert_eq!(w.rank(v), Ok(0));
        assert_eq!(s.fraction_at_or_below(v), Ok(None));
        assert_eq!(a.fraction_at_or_below(v), Ok(None));
        assert_eq!(w.fraction_at_or_below(v), Ok(None));
    }
    assert_eq!((s.rank_u64(5), a.rank_u64(5), w.rank_u64(5)), (0, 0, 0));
    let d = Duration::from_millis(100);
    assert_eq!(
        (s.rank_duration(d), a.rank_duration(d), w.rank_duration(d)),
        (0, 0, 0)
    );
    assert_eq!(s.fraction_at_or_below_duration(d), None);
    assert_eq!(a.fraction_at_or_below_duration(d), None);
    assert_eq!(w.fraction_at_or_below_duration(d), None);
}

#[test]
fn nan_is_a_typed_error_empty_or_not() {
    let mut s = presets::int_latency();
    let a = AtomicSketch::with_layout(presets::INT_LATENCY_LAYOUT);
    let clock = ManualClock::new();
    let w = Window::with_layout(&clock, presets::INT_LATENCY_LAYOUT, WindowConfig::new()).unwrap();
    for _ in 0..2 {
        assert_eq!(s.rank(f64::NAN), Err(InvalidValue));
        assert_eq!(a.rank(f64::NAN), Err(InvalidValue));
        assert_eq!(w.rank(f64::NAN), Err(InvalidValue));
        assert_eq!(s.fraction_at_or_below(f64::NAN), Err(InvalidValue));
        assert_eq!(a.fraction_at_or_below(f64::NAN), Err(InvalidValue));
        assert_eq!(w.fraction_at_or_below(f64::NAN), Err(InvalidValue));
        s.record(5e6).unwrap();
        a.record(5e6).unwrap();
        w.record(5e6).unwrap();
    }
    let e: &dyn std::error::Error = &InvalidValue;
    assert_eq!(e.to_string(), "value is NaN; a rank query needs a number");
}

/// Each of the three kinds, with the same values recorded.
fn all_three(values: &[f64], check: impl Fn(&dyn Fn(f64) -> u64, &dyn Fn(u64) -> u64)) {
    let mut s = presets::cubic_latency();
    let a = AtomicSketch::with_layout(presets::CUBIC_LATENCY_LAYOUT);
    let clock = ManualClock::new();
    let w =
        Window::with_layout(&clock, presets::CUBIC_LATENCY_LAYOUT, WindowConfig::new()).unwrap();
    for &v in values {
        s.record(v).unwrap();
        a.record(v).unwrap();
        w.record(v).unwrap();
    }
    check(&|v| s.rank(v).unwrap(), &|v| s.rank_u64(v));
    check(&|v| a.rank(v).unwrap(), &|v| a.rank_u64(v));
    check(&|v| w.rank(v).unwrap(), &|v| w.rank_u64(v));
}

#[test]
fn values_below_zero_rank_zero_and_infinity_ranks_the_count() {
    all_three(&[0.0, 2e6, 3e6, 1e30], |rank, _| {
        for v in [-1.0, -1e-300, -1e300, f64::NEG_INFINITY] {
            assert_eq!(rank(v), 0, "{v}");
        }
        assert_eq!(rank(f64::INFINITY), 4);
        assert_eq!(rank(f64::MAX), 4);
    });
}

#[test]
fn zero_counts_the_zeros_and_negative_zero_is_zero() {
    all_three(&[0.0, 0.0, -0.0, 2e6], |rank, rank_u64| {
        assert_eq!(rank(0.0), 3);
        assert_eq!(rank(-0.0), 3);
        assert_eq!(rank_u64(0), 3);
        assert_eq!(rank(1.0), 3); // below the range: the zero bin
        assert_eq!(rank(2e6), 4);
    });
    // No zero recorded: zero is below the minimum.
    all_three(&[2e6, 3e6], |rank, rank_u64| {
        assert_eq!((rank(0.0), rank(-0.0), rank_u64(0)), (0, 0, 0));
    });
}

/// From the maximum up every value, below the minimum none, even inside their bins.
#[test]
fn the_ends_are_exact() {
    let (min, max) = (2_000_000.0, 7_000_000.0);
    let values = [min, 3e6, 5e6, max];
    // DDSketch: exact min and max, to the float.
    let mut s = presets::cubic_latency();
    let mut i = presets::int_latency();
    for &v in &values {
        s.record(v).unwrap();
        i.record_u64(v as u64);
    }
    let exact_ends = |rank: &dyn Fn(f64) -> u64, rank_u64: &dyn Fn(u64) -> u64| {
        assert_eq!(rank(max), 4);
        assert_eq!(rank(max.next_up()), 4);
        assert_eq!(rank(min), 1);
        assert_eq!(rank(min.next_down()), 0, "in the minimum's bin, below it");
        assert_eq!(rank_u64(min as u64 - 1), 0);
        assert_eq!(rank_u64(min as u64), 1);
        assert_eq!(rank_u64(max as u64), 4);
        assert_eq!(rank_u64(u64::MAX), 4);
        // Just below the maximum, in its bin: the bins cannot tell.
        assert_eq!(rank(max.next_down()), 4);
    };
    exact_ends(&|v| s.rank(v).unwrap(), &|v| s.rank_u64(v));
    exact_ends(&|v| i.rank(v).unwrap(), &|v| i.rank_u64(v));
    // The atomic kinds: min and max to a part per million.
    all_three(&values, |rank, rank_u64| {
        assert_eq!(rank(max), 4);
        assert_eq!(rank(min * (1.0 - 2e-6)), 0);
        assert_eq!(rank_u64(min as u64 - 2 * 2), 0);
        assert_eq!(rank(min), 1);
        assert_eq!(rank(5e6), 3);
        assert_eq!(rank_u64(5_000_000), 3);
    });
}

/// Values above the range are in the top bin: counted from its lower edge up; values
/// below it in the zero bin, counted from zero up (once past the minimum).
#[test]
fn values_clamped_into_the_ends_count_with_their_bins() {
    let mut s = presets::log_latency();
    let top = s.max_trackable();
    let top_bin = s.layout().mapping().lower_bound(s.min_index() + 921);
    for v in [500.0, 2e6, top_bin * 1.001, 1e12, 1e30, f64::INFINITY] {
        s.record(v).unwrap();
    }
    assert_eq!(s.clamped(), 3);
    assert_eq!(s.rank(499.0), Ok(0)); // below the minimum
    assert_eq!(s.rank(600.0), Ok(1)); // below the range: the zero bin
    assert_eq!(s.rank(1e6), Ok(1));
    assert_eq!(s.rank(top_bin * 0.99), Ok(2)); // below the top bin
    assert_eq!(s.rank(top_bin * 1.002), Ok(6)); // the top bin holds the clamped values
    assert_eq!(s.rank(top), Ok(6));
    assert_eq!(s.rank(1e12), Ok(6));
}

/// A window counts only what it holds: values of intervals that left it are gone.
#[test]
fn a_window_ranks_what_it_holds_after_rotations() {
    let clock = ManualClock::new();
    let config = WindowConfig::new().with_interval(Duration::from_secs(10));
    let w = Window::with_layout(&clock, presets::INT_LATENCY_LAYOUT, config).unwrap();
    for ms in 1..=10 {
        w.record_duration(Duration::from_millis(ms));
    }
    clock.advance(Duration::from_secs(10));
    for ms in 101..=110 {
        w.record_duration(Duration::from_millis(ms));
    }
    assert_eq!(w.rank_duration(Duration::from_millis(50)), 10);
    assert_eq!(
        w.fraction_at_or_below_duration(Duration::from_millis(50)),
        Some(0.5)
    );
    clock.advance(Duration::from_secs(10)); // the first interval leaves
    assert_eq!(w.rank_duration(Duration::from_millis(50)), 0);
    assert_eq!(w.rank_duration(Duration::from_millis(105)), 5);
    assert_eq!(
        w.fraction_at_or_below_duration(Duration::from_millis(105)),
        Some(0.5)
    );
    assert_eq!(w.expired(), 10);
}

/// The integer forms answer as the float ones for every whole number below 2^53 (every
/// mapping; a few values near bin edges, powers of two and the range's ends).
#[test]
fn integer_ranks_are_the_float_ranks() {
    fn one<M: IndexMapping, const N: usize>(layout: BinLayout<M, N>) {
        let mut s = DDSketch::with_layout(layout);
        let a = AtomicSketch::with_layout(layout);
        let mut rng = tailguard_support::Xorshift64(0x9e37_79b9_7f4a_7c15);
        for _ in 0..300 {
            let v = rng.next_u64() >> (rng.next_u64() % 64);
            s.record_u64(v);
            a.record_u64(v);
            s.record(v as f64 * 1.000_1).unwrap();
            a.record(v as f64 * 1.000_1).unwrap();
        }
        let mut probes: Vec<u64> = (0..2000)
            .map(|_| rng.next_u64() >> (rng.next_u64() % 64))
            .collect();
        for e in 0..53 {
            let p = 1u64 << e;
            probes.extend([p - 1, p, p + 1]);
        }
        for n in [
            1000,
            1001,
            999,
            100_000_000_000,
            99_999_999_999,
            (1 << 53) - 1,
        ] {
            probes.push(n);
        }
        let m = *layout.mapping();
        for n in probes.into_iter().filter(|&n| n < 1 << 53) {
            assert_eq!(s.rank_u64(n), s.rank(n as f64).unwrap(), "{m:?} {n}");
            assert_eq!(a.rank_u64(n), a.rank(n as f64).unwrap(), "{m:?} {n}");
        }
    }
    one(presets::LOG_LATENCY_LAYOUT);
    one(presets::CUBIC_LATENCY_LAYOUT);
    one(presets::INT_LATENCY_LAYOUT);
    one(presets::INT_LATENCY_COARSE_LAYOUT);
    one(presets::OTEL_LATENCY_LAYOUT);
}

/// An atomic sketch keeps its min and max to a part per million: a value within that of
/// the maximum, but below the edge of the maximum's bin, is not counted as at or above it,
/// and the max read is never above the largest value nor in another bin.
#[test]
fn ends_kept_to_a_part_per_million_never_count_across_a_bin_edge() {
    fn one<M: Edges, const N: usize>(layout: BinLayout<M, N>) {
        let m = *layout.mapping();
        let clock = ManualClock::new();
        for ms in [1, 3, 70, 900] {
            let w = ms as f64 * 1e6;
            // The first value of the bin above `w`'s: recorded alone, just past the edge.
            let edge = m.upper_edge(m.index(w), w);
            let atomic = AtomicSketch::with_layout(layout);
            let window: Window<_, M, N> =
                Window::with_layout(&clock, layout, WindowConfig::new()).unwrap();
            atomic.record(edge).unwrap();
            window.record(edge).unwrap();
            let below = edge.next_down(); // the same key, the bin below
            assert_eq!(atomic.rank(below), Ok(0), "{m:?} {edge:e}");
            assert_eq!(window.rank(below), Ok(0), "{m:?} {edge:e}");
            assert_eq!(atomic.rank(edge), Ok(1), "{m:?} {edge:e}");
            assert_eq!(window.rank(edge), Ok(1), "{m:?} {edge:e}");
            // Their snapshots too: a plain sketch whose max is the part per million's top.
            for snapshot in [atomic.snapshot(), window.snapshot()] {
                assert_eq!(snapshot.rank(below), Ok(0), "{m:?} {edge:e}");
                assert_eq!(snapshot.rank(edge), Ok(1), "{m:?} {edge:e}");
                assert!(snapshot.max() >= Some(edge), "{m:?} {edge:e}");
            }
            // The max is never above the value, nor, for one just below the edge, past it.
            for v in [edge, below] {
                let atomic = AtomicSketch::with_layout(layout);
                let window: Window<_, M, N> =
                    Window::with_layout(&clock, layout, WindowConfig::new()).unwrap();
                atomic.record(v).unwrap();
                window.record(v).unwrap();
                let maxes = [
                    atomic.max(),
                    window.quantile(1.0).unwrap(),
                    atomic.snapshot().max(),
                ];
                for max in maxes.map(Option::unwrap) {
                    assert!(max <= v && max >= v * (1.0 - 1e-6), "{m:?} {v:e}: {max:e}");
                    assert_eq!(m.index(max), m.index(v), "{m:?} {v:e}: {max:e}");
                }
            }
        }
    }
    one(presets::LOG_LATENCY_LAYOUT);
    one(presets::CUBIC_LATENCY_LAYOUT);
    one(presets::INT_LATENCY_LAYOUT);
}

/// The exponential sketch's ends, zeros, signs and empty state, as the others'.
#[test]
fn exponential_ranks_at_the_ends_zeros_and_when_empty() {
    let empty = ExponentialSketch::<u16, 64>::new();
    for v in [0.0, 1.0, 1e6, f64::INFINITY, -1.0] {
        assert_eq!(empty.rank(v), Ok(0));
        assert_eq!(empty.fraction_at_or_below(v), Ok(None));
    }
    assert_eq!(empty.rank(f64::NAN), Err(InvalidValue));
    assert_eq!(empty.rank_u64(5), 0);
    assert_eq!(
        empty.fraction_at_or_below_duration(Duration::from_millis(1)),
        None
    );
    let mut s = ExponentialSketch::<u32, 160>::new();
    for v in [0.0, 0.0, -0.0, 2e6, 3e6, 7e6] {
        s.record(v).unwrap();
    }
    s.record_u64(0);
    assert_eq!(s.rank(f64::NAN), Err(InvalidValue));
    assert_eq!(s.fraction_at_or_below(f64::NAN), Err(InvalidValue));
    for v in [-1.0, -1e-300, f64::NEG_INFINITY] {
        assert_eq!(s.rank(v), Ok(0), "{v}");
    }
    assert_eq!(
        (s.rank(0.0), s.rank(-0.0), s.rank_u64(0)),
        (Ok(4), Ok(4), 4)
    );
    assert_eq!(s.rank(1.0), Ok(4)); // below the lowest bucket: the zero bucket
    assert_eq!(s.rank(2e6), Ok(5));
    // The minimum is 0: below 2e6, in its bucket, the buckets cannot tell.
    assert_eq!(s.rank(2e6_f64.next_down()), Ok(5));
    assert_eq!(
        s.rank(7e6_f64.next_down()),
        Ok(7),
        "in the maximum's bucket: it cannot tell"
    );
    assert_eq!(s.rank(7e6), Ok(7));
    assert_eq!(s.rank(f64::INFINITY), Ok(7));
    assert_eq!(s.rank_u64(u64::MAX), 7);
    assert_eq!(s.rank_duration(Duration::from_millis(5)), 6);
    // No zero recorded: zero and what lies below the minimum rank 0.
    let mut t = ExponentialSketch::<u16, 16>::new();
    t.record_u64(2_000_000);
    t.record_u64(3_000_000);
    assert_eq!(
        (t.rank(0.0), t.rank_u64(0), t.rank_u64(1_999_999)),
        (Ok(0), 0, 0)
    );
    assert_eq!(t.rank_u64(2_000_000), 1);
    // A recorded +inf is held as f64::MAX: counted from there up.
    t.record(f64::INFINITY).unwrap();
    assert_eq!(t.clamped(), 1);
    assert_eq!((t.rank(f64::MAX), t.rank(f64::INFINITY)), (Ok(3), Ok(3)));
}

/// Downscaled far (a few buckets over many decades), a rank counts whole buckets: every
/// value of the bucket `v` is in, none of those above.
#[test]
fn exponential_ranks_count_whole_buckets_after_downscales() {
    let mut s = ExponentialSketch::<u16, 4>::new();
    let values: Vec<u64> = (0..12).map(|e| 10u64.pow(e)).collect();
    values.iter().for_each(|&v| s.record_u64(v));
    assert!(s.scale() < 0, "{s:?}");
    let m = s.mapping();
    for &v in &values[1..values.len() - 1] {
        let i = m.index(v as f64);
        let (lo, hi) = (m.lower_bound(i), m.lower_bound(i + 1));
        let in_or_below = values.iter().filter(|&&w| (w as f64) <= hi).count() as u64;
        assert_eq!(s.rank_u64(v), in_or_below, "{v} in ({lo:e}, {hi:e}]");
    }
}

/// The upper edge `u` of a bin is at most `v (1 + alpha) / (1 - alpha)` above its first
/// value `v` only to the keys' rounding far from 1: at 1 % near 2^830, 1e-13 past it, so a
/// value that far above `v` still shares its bin and counts in `rank(v)` (the bound with
/// the true `u` holds, as `rank(v)` docs state).
#[test]
fn far_from_one_an_upper_edge_is_past_the_ratio_by_a_hair() {
    let m = LogMapping::with_relative_accuracy(0.01).unwrap();
    let v = 7.067374090333661e249;
    let i = m.index(v);
    assert!(
        m.index(v.next_down()) < i,
        "v is the first value of its bin"
    );
    let mut s = DDSketch::<LogMapping, 256>::new(m, 1e249).unwrap();
    let alpha = s.relative_accuracy();
    let ratio_edge = v * ((1.0 + alpha) / (1.0 - alpha));
    let above = ratio_edge.next_up();
    assert_eq!(m.index(above), i, "past the ratio, still in v's bin");
    assert!(above / ratio_edge - 1.0 <= 2f64.powi(-33));
    s.record(v).unwrap();
    s.record(above).unwrap();
    s.record(v * 4.0).unwrap();
    assert_eq!(s.rank(v), Ok(2));
}
