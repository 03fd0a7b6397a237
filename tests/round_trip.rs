//! Encode then decode gives the sketch back: for OTLP (which carries them) the same bins,
//! count, min, max and sum, at every scale, at the ends of the range, with infinities
//! recorded, and with values within two ulps of every power of two from 2^-20 to 2^60; for
//! DataDog's message (which carries no min, max or sum) the same bins and counts, for
//! every mapping at the ends of its range.

use tailguard::otlp::{self, Timestamps};
use tailguard::proto::{self, IndexConvention};
use tailguard::sketch::{
    presets, CubicMapping, DDSketch, IndexMapping, IntMapping, LogMapping, OtelMapping,
};

/// A large enough buffer for a sketch of `N` bins.
fn buffer<const N: usize>() -> Vec<u8> {
    vec![0; 64 + 11 * N]
}

fn otlp_round_trip<const N: usize>(s: &DDSketch<OtelMapping, N>, what: &str) {
    let mut buf = buffer::<N>();
    let times = Timestamps::new(1, 2);
    let len = otlp::encode(s, times, &mut buf).unwrap();
    let mut t = DDSketch::<OtelMapping, N>::with_layout(s.layout());
    let report = otlp::decode_into(&buf[..len], &mut t).unwrap();
    assert!(report.exact_stats, "{what}: {report:?}");
    assert!(t.bins().eq(s.bins()), "{what}: bins");
    assert_eq!(
        (t.count(), t.zero_count()),
        (s.count(), s.zero_count()),
        "{what}"
    );
    let bits = |x: &DDSketch<OtelMapping, N>| {
        (
            x.min().map(f64::to_bits),
            x.max().map(f64::to_bits),
            x.sum().to_bits(),
        )
    };
    assert_eq!(bits(&t), bits(s), "{what}: min, max, sum");
    assert_eq!(t.quantile(1.0), s.quantile(1.0), "{what}");
}

/// `v` and its neighbours up to two ulps either side.
fn within_two_ulps(v: f64) -> [f64; 5] {
    let (d1, u1) = (v.next_down(), v.next_up());
    [d1.next_down(), d1, v, u1, u1.next_up()]
}

/// Values at both ends of a range `[low, high)`: a hair below, on and above each end, and
/// the largest float.
fn range_ends(low: f64, high: f64) -> [f64; 6] {
    [
        low.next_down(),
        low,
        low.next_up(),
        high.next_down(),
        high,
        f64::MAX,
    ]
}

fn scales() -> impl Iterator<Item = OtelMapping> {
    (OtelMapping::MIN_SCALE..=OtelMapping::MAX_SCALE).map(|s| OtelMapping::with_scale(s).unwrap())
}

#[test]
fn otlp_round_trips_values_a_hair_from_every_power_of_two_at_every_scale() {
    for m in scales() {
        for k in -20..=60 {
            let edge = 2f64.powi(k);
            // A range with the power some bins above its start (64 bins at scale 20 span
            // a hair more than 2^-14 of an octave).
            let start = edge * 2f64.powf(-4.0 * 2f64.powi(-m.scale()));
            let mut s = DDSketch::<OtelMapping, 64>::new(m, start.max(f64::MIN_POSITIVE)).unwrap();
            for v in within_two_ulps(edge) {
                s.record(v).unwrap();
            }
            otlp_round_trip(&s, &format!("scale {}, 2^{k}", m.scale()));
            // Also with a zero, and with +inf clamped into the top bin (or in a range that
            // has no end).
            s.record(0.0).unwrap();
            s.record(f64::INFINITY).unwrap();
            otlp_round_trip(&s, &format!("scale {}, 2^{k}, with 0 and +inf", m.scale()));
        }
    }
}

#[test]
fn otlp_round_trips_the_ends_of_every_range() {
    for m in scales() {
        for start in [1e-9, 1.0, 1e3] {
            let mut s = DDSketch::<OtelMapping, 256>::new(m, start).unwrap();
            for v in range_ends(s.min_trackable(), s.max_trackable()) {
                if v.is_finite() {
                    s.record(v).unwrap();
                }
            }
            s.record(f64::INFINITY).unwrap();
            otlp_round_trip(&s, &format!("scale {}, from {start}", m.scale()));
            s.record_u64(u64::MAX);
            s.record_u64(1);
            otlp_round_trip(&s, &format!("scale {}, from {start}, integers", m.scale()));
        }
    }
}

#[test]
fn otlp_round_trips_a_range_that_reaches_infinity() {
    // Scale 0 from 1.0 with 2048 bins: the top bins lie past f64::MAX.
    let mut s =
        DDSketch::<OtelMapping, 2048>::new(OtelMapping::with_scale(0).unwrap(), 1.0).unwrap();
    assert_eq!(s.max_trackable(), f64::INFINITY);
    s.record(5e3).unwrap();
    s.record(f64::INFINITY).unwrap();
    assert_eq!(
        (s.min(), s.max(), s.sum()),
        (Some(5e3), Some(f64::INFINITY), f64::INFINITY)
    );
    otlp_round_trip(&s, "scale 0, 2048 bins");
    // A finite sum that overflowed is kept too.
    let mut s =
        DDSketch::<OtelMapping, 2048>::new(OtelMapping::with_scale(0).unwrap(), 1.0).unwrap();
    s.record(f64::MAX).unwrap();
    s.record(f64::MAX).unwrap();
    assert_eq!(s.sum(), f64::INFINITY);
    otlp_round_trip(&s, "an overflowed sum");
    // And the preset.
    let mut s = presets::otel_latency();
    s.record(f64::INFINITY).unwrap();
    s.record_u64(3_000);
    otlp_round_trip(&s, "otel_latency");
}

fn proto_round_trip<M: IndexMapping, const N: usize>(s: &DDSketch<M, N>, what: &str) {
    let mut buf = buffer::<N>();
    let len = proto::encode(s, IndexConvention::GoJava, &mut buf).unwrap();
    let mut t = DDSketch::<M, N>::with_layout(s.layout());
    proto::decode_into(&buf[..len], IndexConvention::GoJava, &mut t).unwrap();
    assert!(t.bins().eq(s.bins()), "{what}: bins");
    assert_eq!(
        (t.count(), t.zero_count()),
        (s.count(), s.zero_count()),
        "{what}"
    );
    // No min, max or sum in the message: the decoder estimates them from the bins.
    assert_eq!(t.min().is_some(), s.min().is_some(), "{what}");
}

fn proto_ends<M: IndexMapping>(mapping: M, name: &str) {
    for start in [1e-9, 1.0, 1e3] {
        let mut s = DDSketch::<M, 512>::new(mapping, start).unwrap();
        s.record(0.0).unwrap();
        for v in range_ends(s.min_trackable(), s.max_trackable()) {
            s.record(v).unwrap();
        }
        s.record(f64::INFINITY).unwrap();
        s.record_u64(u64::MAX);
        s.record_u64(1);
        proto_round_trip(&s, &format!("{name} from {start}"));
    }
}

#[test]
fn ddsketch_messages_round_trip_the_ends_of_every_mapping() {
    proto_ends(LogMapping::with_relative_accuracy(0.01).unwrap(), "log");
    proto_ends(CubicMapping::with_relative_accuracy(0.01).unwrap(), "cubic");
    for k in [IntMapping::K5, IntMapping::K6, IntMapping::K7] {
        proto_ends(k, "int");
    }
    for m in scales().filter(|m| m.scale() > OtelMapping::MIN_SCALE) {
        proto_ends(m, "otel");
    }
}
