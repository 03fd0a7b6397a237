//! Property tests: every quantile is within alpha of the exact sample quantile, for every
//! mapping, accuracy and distribution; merging equals recording everything in one sketch.

use proptest::prelude::*;
use tailguard::sketch::{
    CubicMapping, DDSketch, IndexMapping, IntMapping, LogMapping, OtelMapping,
};
use tailguard_support::dist::{exact_quantile, Dist, DISTS, QUANTILES};
use tailguard_support::Rng;

const BINS: usize = 8192;
const MIN_VALUE: f64 = 1e-3;

fn check_accuracy<M: IndexMapping>(alpha: f64, dist: Dist, seed: u64, n: usize) {
    let values = dist.samples(seed, n);
    let mut sketch = DDSketch::<M, BINS>::with_relative_accuracy(alpha, MIN_VALUE).unwrap();
    for &v in &values {
        sketch.record(v).unwrap();
    }
    assert_eq!(sketch.clamped(), 0, "test data must stay inside the range");
    let alpha = sketch.relative_accuracy();
    let mut sorted = values;
    sorted.sort_by(f64::total_cmp);
    for q in QUANTILES {
        let want = exact_quantile(&sorted, q);
        let got = sketch.quantile(q).unwrap().unwrap();
        let err = (got - want).abs() / want;
        assert!(
            err <= alpha,
            "{dist:?} alpha={alpha} n={n} q={q}: got {got}, exact {want}, error {err}"
        );
    }
    assert_eq!(sketch.count(), n as u64);
}

fn all_mappings(alpha: f64, dist: Dist, seed: u64, n: usize) {
    check_accuracy::<LogMapping>(alpha, dist, seed, n);
    check_accuracy::<CubicMapping>(alpha, dist, seed, n);
    check_accuracy::<IntMapping>(alpha, dist, seed, n);
}

/// Recording `values` one sketch at a time.
fn sketch_of(values: &[f64]) -> DDSketch<CubicMapping, BINS> {
    let mut s = DDSketch::with_relative_accuracy(0.01, MIN_VALUE).unwrap();
    for &v in values {
        s.record(v).unwrap();
    }
    s
}

/// Equal bins and counters and exact min and max; sums equal up to float rounding
/// (addition order differs).
fn assert_same<M: IndexMapping, const N: usize>(a: &DDSketch<M, N>, b: &DDSketch<M, N>) {
    assert!(a.bins().eq(b.bins()));
    assert_eq!(a.count(), b.count());
    assert_eq!(a.zero_count(), b.zero_count());
    assert_eq!(a.min(), b.min());
    assert_eq!(a.max(), b.max());
    assert!((a.sum() - b.sum()).abs() <= 1e-9 * a.sum().abs().max(1.0));
    for q in QUANTILES {
        assert_eq!(a.quantile(q), b.quantile(q));
    }
}

fn dist() -> impl Strategy<Value = Dist> {
    prop::sample::select(DISTS.to_vec())
}

/// Values on bin edges (`lower_bound` of bins from 1 up) or a few ulps from them: each
/// quantile holds the documented check as computed, with no slack.
fn check_edges<M: IndexMapping>(sketch: DDSketch<M, 2048>, picks: &[(i32, i32)]) {
    let mut sketch = sketch;
    let base = sketch.mapping().index(1.0);
    let values: Vec<f64> = picks
        .iter()
        .map(|&(k, ulps)| {
            let mut v = sketch.mapping().lower_bound(base + k);
            for _ in 0..ulps.unsigned_abs() {
                v = if ulps < 0 { v.next_down() } else { v.next_up() };
            }
            v
        })
        .collect();
    values.iter().for_each(|&v| sketch.record(v).unwrap());
    assert_eq!(sketch.clamped(), 0, "the values must stay inside the range");
    let alpha = sketch.relative_accuracy();
    let mut sorted = values;
    sorted.sort_by(f64::total_cmp);
    for q in [0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0] {
        let want = exact_quantile(&sorted, q);
        let got = sketch.quantile(q).unwrap().unwrap();
        assert!(
            (got - want).abs() <= alpha * want,
            "{:?} q={q}: got {got}, exact {want}",
            sketch.mapping()
        );
    }
}

/// The reproducer: at scale 0, 8 is the upper edge of (4, 8], exactly `alpha = 1/3` from
/// its representative 5.33..., which `f64` rounds a hair further.
#[test]
fn a_quantile_on_a_power_of_two_edge_is_within_the_reported_accuracy() {
    let mut s = DDSketch::<OtelMapping, 64>::new(OtelMapping::with_scale(0).unwrap(), 1.0).unwrap();
    [2.0, 8.0, 8.0, 9.0]
        .iter()
        .for_each(|&v| s.record(v).unwrap());
    let got = s.quantile(0.5).unwrap().unwrap();
    assert!((got - 8.0).abs() <= s.relative_accuracy() * 8.0, "{got}");
}

/// A range from `f64::MIN_POSITIVE` reaches below the normal floats: `OtelMapping`'s
/// lowest bucket holds every subnormal (from the smallest up), and the cubic mapping's
/// lowest bin reads no exponent there. A quantile among subnormals is then within its bin
/// and `[min, max]`, not within alpha (as `quantile` and `min_trackable` say); the log
/// mapping keeps alpha.
#[test]
fn a_quantile_among_subnormals_is_within_its_bin_and_the_extremes() {
    fn median<M: IndexMapping>(mut s: DDSketch<M, 512>, values: &[f64]) -> (f64, f64) {
        values.iter().for_each(|&v| s.record(v).unwrap());
        assert_eq!((s.zero_count(), s.clamped()), (0, 0), "in the range");
        (s.quantile(0.5).unwrap().unwrap(), s.relative_accuracy())
    }
    let otel = DDSketch::new(OtelMapping::with_scale(0).unwrap(), f64::MIN_POSITIVE).unwrap();
    assert_eq!(otel.min_trackable(), 5e-324);
    let values = [1e-320, 2e-320, 3e-320, 1e-300];
    // The exact median is 2e-320; the answer, the bucket's representative 2^-1023 * 4 / 3,
    // is within the bucket, up to 2^-1022.
    let (got, alpha) = median(otel, &values);
    assert!((1e-320..=f64::MIN_POSITIVE).contains(&got), "{got:e}");
    assert!((got - 2e-320).abs() > alpha * 2e-320, "{got:e}");
    // The cubic mapping: the median 2.2086e-308, a subnormal, answered 1.4 % off.
    let cubic = DDSketch::<CubicMapping, 512>::with_relative_accuracy(0.01, f64::MIN_POSITIVE);
    let values = [2.2086249853423434e-308, 2.2086249853423434e-308, 2.5e-308];
    let (got, alpha) = median(cubic.unwrap(), &values);
    let want = values[1];
    assert!(want < f64::MIN_POSITIVE && (values[0]..=values[2]).contains(&got));
    assert!((got - want).abs() > alpha * want, "{got:e}");
    // The log mapping keeps alpha on the subnormals of its range.
    let log = DDSketch::<LogMapping, 512>::with_relative_accuracy(0.01, f64::MIN_POSITIVE);
    let log = log.unwrap();
    let want = log.min_trackable();
    assert!(want < f64::MIN_POSITIVE);
    let (got, alpha) = median(log, &[want, want, 2.5e-308]);
    assert!((got - want).abs() <= alpha * want, "{got:e}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn quantiles_on_bin_edges_are_within_the_reported_accuracy(
        picks in prop::collection::vec((0i32..400, -2i32..=2), 1..40),
    ) {
        for alpha in [0.005, 0.01, 0.05] {
            check_edges(DDSketch::<LogMapping, 2048>::with_relative_accuracy(alpha, 0.5).unwrap(), &picks);
            check_edges(DDSketch::<CubicMapping, 2048>::with_relative_accuracy(alpha, 0.5).unwrap(), &picks);
            check_edges(DDSketch::<IntMapping, 2048>::with_relative_accuracy(alpha, 0.5).unwrap(), &picks);
        }
        for scale in [0, 1, 3, 5, 8] {
            let m = OtelMapping::with_scale(scale).unwrap();
            check_edges(DDSketch::<OtelMapping, 2048>::new(m, 0.5).unwrap(), &picks);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn quantiles_within_half_percent(d in dist(), seed: u64, n in 1usize..4000) {
        all_mappings(0.005, d, seed, n);
    }

    #[test]
    fn quantiles_within_one_percent(d in dist(), seed: u64, n in 1usize..4000) {
        all_mappings(0.01, d, seed, n);
    }

    #[test]
    fn quantiles_within_two_percent(d in dist(), seed: u64, n in 1usize..4000) {
        all_mappings(0.02, d, seed, n);
    }

    #[test]
    fn merge_equals_recording_everything(d in dist(), seed: u64, n in 0usize..2000, cut in 0usize..2000) {
        let values = d.samples(seed, n);
        let cut = cut.min(n);
        let mut merged = sketch_of(&values[..cut]);
        merged.merge(&sketch_of(&values[cut..])).unwrap();
        assert_same(&merged, &sketch_of(&values));
    }

    #[test]
    fn merge_is_commutative_and_associative(seed: u64, n in 0usize..600) {
        let a = sketch_of(&Dist::LogNormalWide.samples(seed, n));
        let b = sketch_of(&Dist::Stragglers.samples(seed ^ 1, n / 2));
        let c = sketch_of(&Dist::Pareto.samples(seed ^ 2, n / 3));
        let mut ab = a.clone();
        ab.merge(&b).unwrap();
        let mut ba = b.clone();
        ba.merge(&a).unwrap();
        assert_same(&ab, &ba);
        let mut ab_c = ab.clone();
        ab_c.merge(&c).unwrap();
        let mut bc = b.clone();
        bc.merge(&c).unwrap();
        let mut a_bc = a.clone();
        a_bc.merge(&bc).unwrap();
        assert_same(&ab_c, &a_bc);
    }

    #[test]
    fn recording_order_does_not_matter(d in dist(), seed: u64, n in 0usize..2000) {
        let values = d.samples(seed, n);
        let mut reversed = values.clone();
        reversed.reverse();
        let mut shuffled = values.clone();
        let mut rng = Rng::new(seed);
        for i in (1..shuffled.len()).rev() {
            shuffled.swap(i, (rng.next_u64() % (i as u64 + 1)) as usize);
        }
        let s = sketch_of(&values);
        assert_same(&s, &sketch_of(&reversed));
        assert_same(&s, &sketch_of(&shuffled));
    }

    #[test]
    fn integer_path_matches_float_path(values in prop::collection::vec(1u64..1u64 << 50, 0..500)) {
        let mut by_int = DDSketch::<IntMapping, 4096>::with_relative_accuracy(0.01, 1.0).unwrap();
        let mut by_float = by_int.clone();
        for &v in &values {
            by_int.record_u64(v);
            by_float.record(v as f64).unwrap();
        }
        assert_same(&by_int, &by_float);
    }

    #[test]
    fn arbitrary_floats_never_panic(values in prop::collection::vec(any::<f64>(), 0..300), q in any::<f64>()) {
        let mut s = DDSketch::<CubicMapping, 64>::with_relative_accuracy(0.02, 1.0).unwrap();
        let mut accepted = 0u64;
        for &v in &values {
            if s.record(v).is_ok() {
                accepted += 1;
            } else {
                prop_assert!(v.is_nan() || v < 0.0);
            }
        }
        prop_assert_eq!(s.count() + s.saturated(), accepted);
        let _ = s.quantile(q);
        if let Some(mean) = s.mean() {
            prop_assert!(mean >= 0.0);
        }
    }
}

/// A fixed, larger run per distribution, so every distribution is covered on every run.
#[test]
fn every_distribution_at_every_accuracy() {
    for d in DISTS {
        for alpha in [0.005, 0.01, 0.02] {
            all_mappings(alpha, d, 0x5eed ^ d as u64, 20_000);
        }
    }
}

/// The rank rule's product is computed in `f64`, as DataDog's libraries compute it:
/// `q = 0.7` of 11 values is rank 7 (`0.7 * 10` rounds to 7), not the 6 that the exact
/// product of the `f64` 0.7, a hair below 7, floors to. From 2^53 values up `count - 1`
/// itself rounds: the median of 2^60 ones and 2^60 twos is rank 2^60, a two.
#[test]
fn the_rank_is_the_f64_products_floor() {
    use tailguard::sketch::ExponentialSketch;
    let mut s = DDSketch::<LogMapping, 2048>::with_relative_accuracy(0.01, 0.5).unwrap();
    (1..=11).for_each(|v| s.record(f64::from(v)).unwrap());
    assert_eq!(0.7 * 10.0, 7.0);
    let got = s.quantile(0.7).unwrap().unwrap();
    assert!((got - 8.0).abs() <= s.relative_accuracy() * 8.0, "{got}");
    let mut e = ExponentialSketch::<u64, 8>::new();
    e.record(1.0).unwrap();
    e.record(2.0).unwrap();
    for _ in 0..60 {
        let copy = e.clone();
        e.merge(&copy);
    }
    assert_eq!(e.count(), 1 << 61);
    let got = e.quantile(0.5).unwrap().unwrap();
    assert!((got - 2.0).abs() <= e.relative_accuracy() * 2.0, "{got}");
}

/// A range past `f64::MAX` (`max_trackable` is `+inf`): the bin of `f64::MAX` holds finite
/// values, but its representative `lower_bound * (1 + alpha)` overflows, and a recorded
/// `+inf` makes the max `+inf`, so clamping into `[min, max]` kept the `+inf`: the median
/// of `f64::MAX`, `f64::MAX` and `+inf` was `+inf`. `f64::MAX` is within alpha of every
/// value of that bin.
#[test]
fn a_bin_whose_representative_overflows_answers_within_alpha() {
    use tailguard::sketch::AtomicSketch;
    let mut s = DDSketch::<LogMapping, 1024>::with_relative_accuracy(0.5, 1.0).unwrap();
    assert_eq!(s.max_trackable(), f64::INFINITY);
    let top = s.mapping().index(f64::MAX);
    assert_eq!(s.mapping().value(top), f64::INFINITY);
    let atomic = AtomicSketch::with_layout(s.layout());
    for v in [f64::MAX, f64::MAX, f64::INFINITY] {
        s.record(v).unwrap();
        atomic.record(v).unwrap();
    }
    assert_eq!(s.max(), Some(f64::INFINITY));
    let alpha = s.relative_accuracy();
    for q in [0.25, 0.5] {
        let got = s.quantile(q).unwrap().unwrap();
        assert!((got - f64::MAX).abs() <= alpha * f64::MAX, "q = {q}: {got}");
        assert_eq!(atomic.quantile(q).unwrap(), Some(got));
    }
}
