//! Merging two sketches equals recording both inputs into one, whatever the bin count (the
//! merge works in chunks of bins, with a remainder), the range edges and saturation; and a
//! sketch merged with itself in place equals it merged with a copy.

use proptest::prelude::*;
use tailguard::sketch::{CubicMapping, DDSketch, IndexMapping, IntMapping, LogMapping};

fn value() -> impl Strategy<Value = (u64, u32)> {
    let v = prop_oneof![0u64..40, 1u64..1_000_000, Just(0), any::<u64>()];
    let n = prop_oneof![4 => 1u32..4, 1 => Just(u32::MAX / 3)];
    (v, n)
}

fn fill<M: IndexMapping, const N: usize>(s: &mut DDSketch<M, N>, values: &[(u64, u32)]) {
    for &(v, n) in values {
        s.record_u64_n(v, n);
    }
}

fn check<M: IndexMapping, const N: usize>(a: &[(u64, u32)], b: &[(u64, u32)]) {
    let empty = || DDSketch::<M, N>::with_relative_accuracy(0.02, 1.0).unwrap();
    let (mut merged, mut other, mut whole) = (empty(), empty(), empty());
    fill(&mut merged, a);
    fill(&mut other, b);
    merged.merge(&other).unwrap();
    fill(&mut whole, a);
    fill(&mut whole, b);
    assert!(merged.bins().eq(whole.bins()), "N = {N}");
    assert_eq!(merged.count(), whole.count());
    assert_eq!(merged.zero_count(), whole.zero_count());
    assert_eq!(merged.saturated(), whole.saturated());
    if whole.saturated() == 0 {
        // With a saturated bin, which values were lost is a matter of order: a merge keeps
        // both sketches' clamped counts, min and max; recording one by one only what fitted.
        assert_eq!(merged.clamped(), whole.clamped());
        assert_eq!(merged.min(), whole.min());
        assert_eq!(merged.max(), whole.max());
    }
    let bins: u64 = merged.bins().map(|b| u64::from(b.count)).sum();
    assert_eq!(merged.count(), bins + u64::from(merged.zero_count()));
}

fn all<const N: usize>(a: &[(u64, u32)], b: &[(u64, u32)]) {
    check::<LogMapping, N>(a, b);
    check::<CubicMapping, N>(a, b);
    check::<IntMapping, N>(a, b);
}

/// `merge_self` is `merge` with a copy, field for field (`PartialEq` compares them all,
/// the sums and the saturation counters included), with floats and integers, zeros,
/// clamped values and bins past `u32::MAX / 2` (the saturating path).
fn check_self<M: IndexMapping, const N: usize>(a: &[(u64, u32)], floats: &[f64]) {
    let mut sketch = DDSketch::<M, N>::with_relative_accuracy(0.02, 1.0).unwrap();
    fill(&mut sketch, a);
    for &x in floats {
        let _ = sketch.record(x);
    }
    let mut merged = sketch.clone();
    merged.merge(&sketch).unwrap();
    sketch.merge_self();
    assert_eq!(sketch, merged, "N = {N}");
}

proptest! {
    #[test]
    fn merging_a_sketch_with_itself_equals_merging_a_copy(
        a in prop::collection::vec(value(), 0..40),
        floats in prop::collection::vec(prop_oneof![0.0..10.0, 1.0..1e12, Just(0.0)], 0..8),
    ) {
        check_self::<LogMapping, 1>(&a, &floats);
        check_self::<CubicMapping, 17>(&a, &floats);
        check_self::<IntMapping, 300>(&a, &floats);
    }

    #[test]
    fn merge_equals_recording_both(
        a in prop::collection::vec(value(), 0..40),
        b in prop::collection::vec(value(), 0..40),
    ) {
        all::<1>(&a, &b);
        all::<15>(&a, &b);
        all::<16>(&a, &b);
        all::<17>(&a, &b);
        all::<300>(&a, &b);
    }
}

/// A merge none of whose values fit (their bin is full) leaves min, max and sum as
/// recording the same values would: dropped values are in none of them. The same rule as
/// `ExponentialSketch::merge` and the codecs' decoders.
#[test]
fn a_merge_whose_values_all_drop_leaves_the_statistics_as_recording_does() {
    let mut full = tailguard::sketch::presets::int_latency();
    full.record_u64_n(1_000_000, u32::MAX);
    let mut other = tailguard::sketch::presets::int_latency();
    other.record_u64(999_990);
    other.record_u64(1_000_010);
    let m = *full.mapping();
    assert_eq!(m.index_u64(999_990), m.index_u64(1_000_010)); // one bin
    assert_eq!(m.index_u64(999_990), m.index_u64(1_000_000));
    let mut recorded = full.clone();
    recorded.record_u64(999_990);
    recorded.record_u64(1_000_010);
    full.merge(&other).unwrap();
    assert_eq!(full.saturated(), 2);
    assert_eq!((full.min(), full.max()), (recorded.min(), recorded.max()));
    assert_eq!((full.min(), full.max()), (Some(1e6), Some(1e6)));
    assert_eq!(full.sum(), recorded.sum());

    // Float values too.
    let mut full = tailguard::sketch::presets::cubic_latency();
    full.record_n(1e6, u32::MAX).unwrap();
    let mut other = tailguard::sketch::presets::cubic_latency();
    other.record(999_990.5).unwrap();
    full.merge(&other).unwrap();
    assert_eq!(
        (full.min(), full.max(), full.saturated()),
        (Some(1e6), Some(1e6), 1)
    );
    assert_eq!(full.sum(), 1e6 * f64::from(u32::MAX));
}
