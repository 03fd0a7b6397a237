//! Values dropped because their bin is full leave the sum, whichever way they arrive:
//! recorded, merged, snapshotted from an `AtomicSketch`, or decoded from a DDSketch or
//! an OTLP message. `mean` stays the mean of the values counted.

use tailguard::otlp::{self, Timestamps};
use tailguard::proto::{self, IndexConvention};
use tailguard::sketch::{presets, AtomicSketch, DDSketch, IndexMapping, OtelMapping};

const FULL: u32 = u32::MAX;

/// `u32::MAX` copies of `value` recorded as integers, the bin full.
fn full_of_integers(value: u64) -> presets::IntLatency {
    let mut s = presets::int_latency();
    s.record_u64_n(value, FULL);
    s
}

/// The same, recorded as floats.
fn full_of_floats(value: f64) -> presets::IntLatency {
    let mut s = presets::int_latency();
    s.record_n(value, FULL).unwrap();
    s
}

/// `s` after the same values were offered twice: once kept, once dropped.
fn assert_counts_the_kept_half(s: &presets::IntLatency, value: f64) {
    assert_eq!(s.count(), u64::from(FULL));
    assert_eq!(s.saturated(), u64::from(FULL));
    assert_eq!(s.mean(), Some(value), "sum {}", s.sum());
    assert_eq!((s.min(), s.max()), (Some(value), Some(value)));
}

#[test]
fn recording_into_a_full_bin_leaves_the_sum() {
    let mut s = full_of_integers(5_000_000);
    s.record_u64_n(5_000_000, FULL);
    assert_counts_the_kept_half(&s, 5e6);
    let mut s = full_of_floats(5e6);
    s.record_n(5e6, FULL).unwrap();
    assert_counts_the_kept_half(&s, 5e6);
}

#[test]
fn a_saturating_merge_leaves_the_sum_as_recording_does() {
    for full in [full_of_integers(5_000_000), full_of_floats(5e6)] {
        let mut merged = full.clone();
        merged.merge(&full).unwrap();
        assert_counts_the_kept_half(&merged, 5e6);
    }
}

#[test]
fn a_saturating_merge_of_several_values_drops_their_bins_estimates() {
    // Two bins, one full: what is dropped is `other`'s share of the full bin, valued at
    // that bin (clamped into `other`'s range); the other bin adds exactly.
    let mut a = presets::int_latency();
    a.record_u64_n(2_000_000, FULL);
    let mut b = presets::int_latency();
    b.record_u64_n(2_000_000, 10);
    b.record_u64_n(9_000_000, 10);
    a.merge(&b).unwrap();
    assert_eq!(a.count(), u64::from(FULL) + 10);
    assert_eq!(a.saturated(), 10);
    let kept = 2e6 * f64::from(FULL) + 9e6 * 10.0;
    let alpha = a.relative_accuracy();
    assert!(
        (a.sum() - kept).abs() <= alpha * 2e6 * 10.0,
        "{} vs {kept}",
        a.sum()
    );
    // The sum never goes below the values counted, whatever the estimate.
    assert!(a.sum() >= kept * (1.0 - alpha));
}

#[test]
fn an_atomic_snapshot_merged_into_a_full_sketch_leaves_the_sum() {
    let atomic = AtomicSketch::with_layout(presets::INT_LATENCY_LAYOUT);
    for _ in 0..1000 {
        atomic.record_u64(5_000_000);
    }
    let mut full = full_of_integers(5_000_000);
    atomic.merge_into(&mut full).unwrap();
    assert_eq!(full.count(), u64::from(FULL));
    assert_eq!(full.saturated(), 1000);
    // The snapshot's own sum is its bins' estimate; none of it may stay.
    assert_eq!(full.mean(), Some(5e6), "sum {}", full.sum());
}

#[test]
fn a_ddsketch_message_decoded_into_a_full_sketch_leaves_the_sum() {
    let mut full = presets::int_latency();
    full.record_u64_n(5_000_000, FULL);
    let mut buf = [0u8; 256];
    let len = proto::encode(&full, IndexConvention::GoJava, &mut buf).unwrap();
    let mut target = full.clone();
    proto::decode_into(&buf[..len], IndexConvention::GoJava, &mut target).unwrap();
    assert_eq!(
        (target.count(), target.saturated()),
        (u64::from(FULL), u64::from(FULL))
    );
    assert_eq!(target.mean(), Some(5e6), "sum {}", target.sum());
}

#[test]
fn an_otlp_point_decoded_into_a_full_sketch_leaves_the_sum() {
    let mut full = presets::otel_latency();
    full.record_u64_n(5_000_000, FULL);
    let mut buf = [0u8; 256];
    let len = otlp::encode(&full, Timestamps::default(), &mut buf).unwrap();
    let mut target = full.clone();
    let report = otlp::decode_into(&buf[..len], &mut target).unwrap();
    assert_eq!(report.saturated, u64::from(FULL));
    assert!(
        !report.exact_stats,
        "a dropped value makes the sum an estimate"
    );
    assert_eq!(
        (target.count(), target.saturated()),
        (u64::from(FULL), u64::from(FULL))
    );
    assert_eq!(target.mean(), Some(5e6), "sum {}", target.sum());

    // Several values: the dropped share of the full bin leaves, within alpha of it.
    let mut point = DDSketch::<OtelMapping, 852>::with_layout(presets::OTEL_LATENCY_LAYOUT);
    point.record_u64_n(5_000_000, 7);
    point.record_u64_n(80_000_000, 3);
    let len = otlp::encode(&point, Timestamps::default(), &mut buf).unwrap();
    let mut target = full.clone();
    otlp::decode_into(&buf[..len], &mut target).unwrap();
    assert_eq!(target.saturated(), 7);
    let kept = 5e6 * f64::from(FULL) + 8e7 * 3.0;
    let alpha = target.mapping().relative_accuracy();
    assert!(
        (target.sum() - kept).abs() <= alpha * 5e6 * 7.0 + 1.0,
        "{}",
        target.sum()
    );
}
