//! `OtelMapping` a hair from its bucket edges, where the logarithm method (scale > 0) is
//! exact only up to its floating-point `ln`: the documented bound on how far from an edge
//! a value may land on the wrong side, the upper bound that still covers such values,
//! what downscaling promises for them, and a decoder that accepts the min and max such
//! values give a data point.

use tailguard::otlp::{self, Timestamps};
use tailguard::sketch::{presets, DDSketch, IndexMapping, OtelMapping};

/// The documented distance (relative) within which a value may cross an edge.
fn tolerance(v: f64) -> f64 {
    (v.ln().abs() + 1.0) * 2f64.powi(-50)
}

/// `v` moved by `ulps` units in the last place.
fn ulps_from(v: f64, ulps: i64) -> f64 {
    let mut x = v;
    for _ in 0..ulps.unsigned_abs() {
        x = if ulps < 0 { x.next_down() } else { x.next_up() };
    }
    x
}

fn scales() -> impl Iterator<Item = OtelMapping> {
    (OtelMapping::MIN_SCALE..=OtelMapping::MAX_SCALE).map(|s| OtelMapping::with_scale(s).unwrap())
}

#[test]
fn values_near_powers_of_two_cross_only_within_the_documented_distance() {
    let mut crossed = 0;
    for m in scales() {
        for k in -20..=60 {
            let edge = 2f64.powi(k);
            // The power itself is its bucket's upper edge, exactly; values above it are
            // in the next bucket (at scale <= 0 a bucket spans 2^-scale octaves).
            let (below, above) = if m.scale() > 0 {
                (k * (1 << m.scale()) - 1, k * (1 << m.scale()))
            } else {
                ((k - 1) >> -m.scale(), k >> -m.scale())
            };
            assert_eq!(m.index(edge), below, "scale {}, 2^{k}", m.scale());
            for ulps in (-64..=64).filter(|&u| u != 0) {
                let v = ulps_from(edge, ulps);
                let exact = if ulps < 0 { below } else { above };
                let got = m.index(v);
                if got != exact {
                    crossed += 1;
                    assert!(
                        m.scale() > 0,
                        "bit arithmetic is exact: scale {}, {v}",
                        m.scale()
                    );
                    assert_eq!(
                        got.abs_diff(exact),
                        1,
                        "scale {}, {v}: {got} vs {exact}",
                        m.scale()
                    );
                    assert!(
                        (v / edge - 1.0).abs() <= tolerance(v),
                        "scale {}, {v}: crossed from {ulps} ulps",
                        m.scale()
                    );
                }
            }
        }
    }
    // The documented behaviour is real, not hypothetical: values below powers of two do
    // land above them.
    assert!(crossed > 0);
    let m = OtelMapping::with_scale(1).unwrap();
    assert_eq!(m.index(1073741824.0), 59);
    assert_eq!(m.index(1073741823.9999999), 60);
}

#[test]
fn values_beyond_the_documented_distance_are_in_their_exact_bucket() {
    for m in scales().filter(|m| m.scale() > 0) {
        let per_octave = 1i32 << m.scale();
        for k in [-20, -3, 0, 1, 7, 30, 52, 60] {
            for j in [1, per_octave / 3, per_octave / 2, per_octave - 1] {
                if j == 0 {
                    continue;
                }
                let index = k * per_octave + j;
                let edge = m.lower_bound(index); // b^index, not a power of two
                let margin = 4.0 * tolerance(edge);
                assert_eq!(m.index(edge * (1.0 + margin)), index, "scale {}", m.scale());
                assert_eq!(
                    m.index(edge * (1.0 - margin)),
                    index - 1,
                    "scale {}",
                    m.scale()
                );
            }
        }
    }
}

#[test]
fn the_upper_bound_covers_values_the_logarithm_puts_below_an_edge() {
    // The case: 2^52 + 1 is put in the bucket whose edge is 2^52.
    let m = *presets::otel_latency().mapping();
    let v = (1u64 << 52) + 1;
    assert!(m.upper_bound_u64(m.index_u64(v)) >= v);
    for m in scales() {
        for k in 1..64 {
            let edge = 1u64 << k;
            for d in 0..=64u64 {
                for v in [edge.saturating_sub(d), edge.saturating_add(d)] {
                    let bound = m.upper_bound_u64(m.index_u64(v));
                    assert!(bound >= v, "scale {}, {v}: bound {bound}", m.scale());
                }
            }
        }
        // Every whole number below 2^16 (all the integer edges of the fine scales).
        for v in 1..=1u64 << 16 {
            assert!(
                m.upper_bound_u64(m.index_u64(v)) >= v,
                "scale {}, {v}",
                m.scale()
            );
        }
    }
}

#[test]
fn the_upper_bound_stays_within_a_hair_of_the_edge() {
    for m in scales().filter(|m| m.scale() > -10) {
        for index in [-40, -1, 0, 1, 100, 1000] {
            let edge = m.lower_bound(index + 1);
            if !(1.0..1e18).contains(&edge) {
                continue;
            }
            let bound = m.upper_bound_u64(index) as f64;
            assert!(
                bound <= edge * (1.0 + 4.0 * tolerance(edge)) + 1.0,
                "scale {}",
                m.scale()
            );
            assert!(bound >= edge.floor(), "scale {}", m.scale());
        }
    }
}

/// The start of a 64-bin range with `values` some four buckets of scale `m` above it.
fn low_end(values: &[f64], m: OtelMapping) -> f64 {
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    min * 2f64.powf(-4.0 * 2f64.powi(-m.scale()))
}

/// Encodes `values` recorded at `fine` and decodes them into a sketch of `coarse`.
fn downscaled(values: &[f64], fine: OtelMapping, coarse: OtelMapping) -> DDSketch<OtelMapping, 64> {
    let low = low_end(values, coarse);
    let mut point = DDSketch::<OtelMapping, 64>::new(fine, low).unwrap();
    for &v in values {
        point.record(v).unwrap();
    }
    let mut buf = [0u8; 1024];
    let len = otlp::encode(&point, Timestamps::default(), &mut buf).unwrap();
    let mut into = DDSketch::<OtelMapping, 64>::new(coarse, low).unwrap();
    otlp::decode_into(&buf[..len], &mut into).unwrap();
    into
}

fn recorded(values: &[f64], m: OtelMapping) -> DDSketch<OtelMapping, 64> {
    let low = low_end(values, m);
    let mut s = DDSketch::<OtelMapping, 64>::new(m, low).unwrap();
    for &v in values {
        s.record(v).unwrap();
    }
    s
}

#[test]
fn downscaling_is_exact_on_buckets_and_keeps_a_crossed_value_where_it_was() {
    let (fine, coarse) = (
        OtelMapping::with_scale(1).unwrap(),
        OtelMapping::with_scale(0).unwrap(),
    );
    let pair = [1073741824.0, 1073741823.9999999];
    let down = downscaled(&pair, fine, coarse);
    // The fine buckets 59 and 60, shifted: 29 and 30.
    let bins: Vec<_> = down.bins().map(|b| (b.index, b.count)).collect();
    assert_eq!(bins, [(29, 1), (30, 1)]);
    assert_eq!(
        down.bins().map(|b| b.index).collect::<Vec<_>>(),
        pair.map(|v| fine.index(v) >> 1)
    );
    // Recorded at scale 0 (bit arithmetic, exact), both are in bucket 29.
    let direct: Vec<_> = recorded(&pair, coarse)
        .bins()
        .map(|b| (b.index, b.count))
        .collect();
    assert_eq!(direct, [(29, 2)]);
    // Min and max stay the exact ones, though max sits a bucket below the highest.
    assert_eq!((down.min(), down.max()), (Some(pair[1]), Some(pair[0])));
    // And the downscaled sketch round-trips at its own scale, exact stats and all.
    let mut buf = [0u8; 1024];
    let len = otlp::encode(&down, Timestamps::default(), &mut buf).unwrap();
    let mut again = DDSketch::<OtelMapping, 64>::with_layout(down.layout());
    assert!(
        otlp::decode_into(&buf[..len], &mut again)
            .unwrap()
            .exact_stats
    );
    assert!(again == down);

    // Away from edges, downscaling is recording at the coarser scale, at every pair of
    // scales.
    let values: Vec<f64> = (0..200)
        .map(|i| 3.7 * 1.17f64.powi(i % 40) + i as f64)
        .collect();
    for d in 1..=3 {
        for s in (OtelMapping::MIN_SCALE + 3)..=(OtelMapping::MAX_SCALE - d) {
            let (fine, coarse) = (
                OtelMapping::with_scale(s + d).unwrap(),
                OtelMapping::with_scale(s).unwrap(),
            );
            let one = [values[(s + 20) as usize % values.len()]];
            let a = downscaled(&one, fine, coarse);
            let b = recorded(&one, coarse);
            assert!(a.bins().eq(b.bins()), "scales {} -> {s}", s + d);
        }
    }
}

#[test]
fn a_point_whose_min_sits_a_bucket_above_its_max_decodes_with_exact_stats() {
    for scale in 1..=OtelMapping::MAX_SCALE {
        let m = OtelMapping::with_scale(scale).unwrap();
        let pair = [1073741824.0, 1073741823.9999999];
        let s = recorded(&pair, m);
        let mut buf = [0u8; 1024];
        let len = otlp::encode(&s, Timestamps::default(), &mut buf).unwrap();
        let mut t = DDSketch::<OtelMapping, 64>::with_layout(s.layout());
        let report = otlp::decode_into(&buf[..len], &mut t).unwrap();
        assert!(report.exact_stats, "scale {scale}");
        assert_eq!(
            (t.min(), t.max(), t.sum()),
            (s.min(), s.max(), s.sum()),
            "scale {scale}"
        );
        assert!(t.bins().eq(s.bins()));
    }
}

#[test]
fn a_min_a_bucket_off_far_from_an_edge_is_not_taken() {
    // One bucket off where no logarithm can have put it: the representatives, all three.
    let m = OtelMapping::with_scale(4).unwrap();
    let mut s = DDSketch::<OtelMapping, 64>::new(m, 1.0).unwrap();
    s.record(5.0).unwrap();
    s.record(9.0).unwrap();
    let mid_next_bucket = 5.0 * 2f64.powf(1.0 / 16.0);
    assert_eq!(m.index(mid_next_bucket), m.index(5.0) + 1);
    let mut buf = [0u8; 256];
    let len = encode_with_min(&s, mid_next_bucket, &mut buf);
    let mut t = DDSketch::<OtelMapping, 64>::new(m, 1.0).unwrap();
    let report = otlp::decode_into(&buf[..len], &mut t).unwrap();
    assert!(!report.exact_stats);
    assert_ne!(t.min(), Some(mid_next_bucket));
}

/// `s` encoded with its min replaced by `min` (field 12, a double, written last: the last
/// occurrence of a scalar wins).
fn encode_with_min(s: &DDSketch<OtelMapping, 64>, min: f64, buf: &mut [u8]) -> usize {
    let len = otlp::encode(s, Timestamps::default(), buf).unwrap();
    buf[len] = (12 << 3) | 1;
    buf[len + 1..len + 9].copy_from_slice(&min.to_le_bytes());
    len + 9
}
