//! `IndexMapping::upper_bound_u64`, the whole number a window publishes as its cached
//! quantile's bound (what a hedger waits before it hedges), is at or above every whole
//! number its bin holds: for every mapping, at every bin edge from 1 up to 2^64, where
//! the floating-point index and edge computations round (a few units in the last place
//! far from 1).

use tailguard::sketch::{CubicMapping, IndexMapping, IntMapping, LogMapping, OtelMapping};

/// The whole numbers within a few of each bin's upper edge, from 1 up to 2^64: each that
/// the bin holds (by the integer index, and by the float index below 2^53) is at or below
/// the bin's upper bound.
fn covers_its_whole_numbers<M: IndexMapping + core::fmt::Debug>(m: M) {
    for i in m.index(1.0)..m.index(1.8e19) {
        let bound = m.upper_bound_u64(i);
        let edge = m.lower_bound(i + 1) as u64;
        for v in edge.saturating_sub(4)..=edge.saturating_add(4) {
            let by_integer = v > 0 && m.index_u64(v) == i;
            let by_float = v > 0 && v < 1 << 53 && m.index(v as f64) == i;
            assert!(
                !(by_integer || by_float) || v <= bound,
                "{m:?}: bin {i} holds {v}, above its upper bound {bound}"
            );
        }
    }
}

#[test]
fn the_upper_bound_covers_every_whole_number_of_its_bin() {
    for alpha in [0.005, 0.01, 0.02, 0.05, 0.1, 0.3] {
        covers_its_whole_numbers(LogMapping::with_relative_accuracy(alpha).unwrap());
        covers_its_whole_numbers(CubicMapping::with_relative_accuracy(alpha).unwrap());
    }
    for k in [1, 5, 6, 10] {
        covers_its_whole_numbers(IntMapping::with_mantissa_bits(k).unwrap());
    }
    for scale in [-2, 0, 5, 8] {
        covers_its_whole_numbers(OtelMapping::with_scale(scale).unwrap());
    }
}

/// A 0.5 % log mapping: at 9.3e13 (about a day in nanoseconds) its bin edge computed in
/// `f64` lay a fraction below a whole number the bin holds, and the bound truncated it.
#[test]
fn a_log_bin_far_from_one_is_covered() {
    let m = LogMapping::with_relative_accuracy(0.005).unwrap();
    let v = 92_688_729_803_779u64;
    let i = m.index_u64(v);
    assert!(m.upper_bound_u64(i) >= v, "{}", m.upper_bound_u64(i));
}
