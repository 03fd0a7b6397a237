//! Quantiles far from 1: the slack beyond `relative_accuracy()` that the keys' and
//! representatives' rounding leaves at bin edges, bounded as docs/guarantees.md states it,
//! over the latency presets' exponents and over the whole range of normal floats.

use tailguard::sketch::{presets, CubicMapping, DDSketch, IndexMapping, IntMapping, LogMapping};

/// Up to `samples` bin edges of `m` with exponents in `lo..hi` (drawn from `seed`): each
/// edge's first value and the float just below it, found by bisection over the floats'
/// bits near the mapping's `lower_bound`. Edges the bisection cannot bracket are skipped.
fn edges<M: IndexMapping>(m: &M, lo: i32, hi: i32, samples: u32, seed: u64) -> Vec<[f64; 2]> {
    let mut found = Vec::new();
    let mut state = seed;
    for _ in 0..samples {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let e = lo + (state % (hi - lo) as u64) as i32;
        let v0 = (1.0 + (state >> 20) as f64 / (1u64 << 44) as f64) * 2f64.powi(e);
        let i = m.index(v0);
        let edge = m.lower_bound(i);
        let (mut a, mut b) = (
            (edge * (1.0 - 1e-6)).to_bits(),
            (edge * (1.0 + 1e-6)).to_bits(),
        );
        if m.index(f64::from_bits(a)) >= i || m.index(f64::from_bits(b)) < i {
            continue;
        }
        while b - a > 1 {
            let mid = a + (b - a) / 2;
            if m.index(f64::from_bits(mid)) >= i {
                b = mid;
            } else {
                a = mid;
            }
        }
        found.push([f64::from_bits(b), f64::from_bits(a)]);
    }
    found
}

/// The largest `(got - v).abs() / v - relative_accuracy()` over `samples` bin edges of `m`
/// ([`edges`]), each recorded between values half and twice it, so that the median is its
/// bin's representative, not an extreme. Panics unless most edges were checked.
fn worst_excess<M: IndexMapping + Copy>(m: M, lo: i32, hi: i32, samples: u32) -> f64 {
    let (mut worst, mut checked) = (0f64, 0u32);
    for v in edges(&m, lo, hi, samples, 0x9E37_79B9_7F4A_7C15)
        .into_iter()
        .flatten()
    {
        let Ok(mut s) = DDSketch::<M, 16384>::new(m, v / 4.0) else {
            continue;
        };
        for x in [v / 2.0, v, v * 2.0] {
            s.record(x).unwrap();
        }
        if s.clamped() > 0 || s.zero_count() > 0 {
            continue;
        }
        let got = s.quantile(0.5).unwrap().unwrap();
        worst = worst.max((got - v).abs() / v - s.relative_accuracy());
        checked += 1;
    }
    assert!(
        checked >= samples,
        "{checked} edges checked of {samples} samples"
    );
    worst
}

/// The latency presets' exponents (about 1e-6 to 1e19) and every normal float, for the
/// log and cubic mappings at 1 % and the integer mapping at every `k` up to 12. The bounds
/// are docs/guarantees.md's: 2^-40 (about 200 ulps) and 2^-33 (about 1e-10).
#[test]
fn edges_far_from_one_are_within_alpha_and_the_documented_slack() {
    let samples = if cfg!(debug_assertions) { 1000 } else { 3000 };
    let log = LogMapping::with_relative_accuracy(0.01).unwrap();
    let cubic = CubicMapping::with_relative_accuracy(0.01).unwrap();
    for (lo, hi, bound) in [(-20, 64, 2f64.powi(-38)), (-1020, 1020, 2f64.powi(-33))] {
        let near = (lo, hi) == (-20, 64);
        let log_bound = if near { 2f64.powi(-40) } else { bound };
        assert!(
            worst_excess(log, lo, hi, samples) <= log_bound,
            "log {lo}..{hi}"
        );
        assert!(
            worst_excess(cubic, lo, hi, samples) <= log_bound,
            "cubic {lo}..{hi}"
        );
        for k in 0..=12 {
            let m = IntMapping::with_mantissa_bits(k).unwrap();
            let worst = worst_excess(m, lo, hi, samples);
            assert!(worst <= bound, "int k={k} {lo}..{hi}: {worst:e}");
        }
    }
}

/// The quantile promise was "within `relative_accuracy()` with no slack, bin edges
/// included", `relative_accuracy()` being alpha plus `8 * 2^-52`. Far from 1 that fails:
/// the keys (DataDog's floating-point formula, reproduced bit for bit) and the bins'
/// representatives carry a rounding error that grows with `|log2 v|`. In the 1 % log
/// preset itself, at about 28 s in nanoseconds (inside its range of 1 µs to 100 s), the
/// first value of a bin is answered about 17 units in the last place beyond it. The docs
/// now state that slack; this checks the preset's value against it.
#[test]
fn a_bin_edge_far_from_one_is_within_alpha_and_a_rounding_hair() {
    let mut s = presets::log_latency();
    let m = *s.mapping();
    let v = 2.8149686314790493e10; // the first value of its bin
    assert!(m.index(v) > m.index(v.next_down()));
    for x in [1e9, v, 9e10] {
        s.record(x).unwrap();
    }
    assert_eq!(s.clamped(), 0);
    let got = s.quantile(0.5).unwrap().unwrap();
    let alpha = s.relative_accuracy();
    // Not within alpha + 8 * 2^-52, as promised before:
    assert!((got - v).abs() > alpha * v, "{got}");
    // Within alpha and the documented hair of rounding, 2^-44 * |log2 v| (about 2^-39 here).
    let hair = (v.log2().abs() + 1.0) * 2f64.powi(-44);
    assert!((got - v).abs() <= (alpha + hair) * v, "{got}");
}

/// The largest `((got - v).abs() / v - relative_accuracy()) / ((|log2 v| + 1) 2^(k - 51))`
/// and the largest excess itself over `samples` bin edges of the integer mapping of `k`
/// mantissa bits with exponents in `lo..hi`, each recorded between two values 4096 bins
/// (or a factor of 2) either side.
fn integer_excess(k: u32, lo: i32, hi: i32, samples: u32) -> (f64, f64) {
    let m = IntMapping::with_mantissa_bits(k).unwrap();
    let (mut worst_share, mut worst, mut checked) = (0f64, 0f64, 0u32);
    let seed = 0x9E37_79B9_7F4A_7C15u64 ^ u64::from(k);
    // Half and twice `v`, or as far as 4096 bins reach: the median is then the
    // representative of `v`'s bin, not clamped to an extreme.
    let spread = 2f64.powf(2f64.powi(12 - k as i32)).min(2.0);
    for v in edges(&m, lo, hi, samples, seed).into_iter().flatten() {
        let mut s = DDSketch::<IntMapping, 16384>::new(m, v / spread / 1.001).unwrap();
        for x in [v / spread, v, v * spread] {
            s.record(x).unwrap();
        }
        assert_eq!(
            (s.clamped(), s.zero_count()),
            (0, 0),
            "k={k} v={v:e} {:e}",
            s.max_trackable()
        );
        let got = s.quantile(0.5).unwrap().unwrap();
        let excess = (got - v).abs() / v - s.relative_accuracy();
        let hair = (v.log2().abs() + 1.0) * 2f64.powi(k as i32 - 51);
        worst_share = worst_share.max(excess / hair);
        worst = worst.max(excess);
        checked += 1;
    }
    assert!(checked >= samples, "{checked} edges of {samples} samples");
    (worst_share, worst)
}

/// The integer mapping's edges are DataDog's, whose multiplier (derived from gamma in
/// floating point) is a few units in the last place off `2^k`: they lie off the exact
/// edges by a share of a bin that grows with `4^k` and `|log2 v|`, and a value on one is
/// answered up to `(|log2 v| + 1) 2^(k - 51)` of it beyond alpha, near 1 too. At `k` up to
/// 12 that is within the figures the far-from-1 test bounds; past it, not: at `k = 19`,
/// 3.1e-9 in the presets' range, where they promise 2^-38.
#[test]
fn a_fine_integer_mapping_is_within_alpha_and_its_multipliers_hair() {
    let samples = if cfg!(debug_assertions) { 300 } else { 3000 };
    for k in [10, 13, 16, 19, 20] {
        for (lo, hi) in [(-1, 1), (-20, 64), (-1020, 1020)] {
            let (share, _) = integer_excess(k, lo, hi, samples);
            assert!(share <= 1.0, "k={k} {lo}..{hi}: {share}");
        }
    }
    // Near 1 at k = 10 (alpha 0.049 %), and in the presets' range at k = 19, beyond the
    // hair promised for the coarser mappings.
    assert!(integer_excess(10, -1, 1, samples).1 > 0.0);
    assert!(integer_excess(19, -20, 64, samples).1 > 2f64.powi(-38));
}
