//! Encoding and decoding data points: round trips, downscaling, every refusal, clamping,
//! saturation, and protobuf's merge rules, on hand-built messages.

use super::*;
use crate::proto::DecodeError as WireError;
use crate::sketch::{presets, DDSketch, IndexMapping, OtelMapping};
use std::vec::Vec;

type Sketch = DDSketch<OtelMapping, 512>;

fn sketch(scale: i32) -> Sketch {
    Sketch::new(OtelMapping::with_scale(scale).unwrap(), 1.0).unwrap()
}

fn encode_vec<const N: usize>(s: &DDSketch<OtelMapping, N>, times: Timestamps) -> Vec<u8> {
    let mut buf = std::vec![0u8; encoded_len(s, times)];
    let len = encode(s, times, &mut buf).unwrap();
    assert_eq!(len, buf.len());
    buf
}

/// A protobuf message built field by field.
#[derive(Default, Clone)]
struct Msg(Vec<u8>);

impl Msg {
    fn varint(mut self, mut v: u64) -> Self {
        while v >= 0x80 {
            self.0.push(v as u8 | 0x80);
            v >>= 7;
        }
        self.0.push(v as u8);
        self
    }
    fn tag(self, field: u32, wire_type: u8) -> Self {
        self.varint(u64::from(field << 3 | u32::from(wire_type)))
    }
    fn fixed(mut self, field: u32, v: u64) -> Self {
        self = self.tag(field, 1);
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    fn double(self, field: u32, v: f64) -> Self {
        self.fixed(field, v.to_bits())
    }
    fn sint(self, field: u32, v: i32) -> Self {
        self.tag(field, 0)
            .varint(u64::from(((v << 1) ^ (v >> 31)) as u32))
    }
    fn uint(self, field: u32, v: u64) -> Self {
        self.tag(field, 0).varint(v)
    }
    fn message(mut self, field: u32, body: Msg) -> Self {
        self = self.tag(field, 2).varint(body.0.len() as u64);
        self.0.extend_from_slice(&body.0);
        self
    }
    fn packed(self, field: u32, counts: &[u64]) -> Self {
        let body = counts.iter().fold(Msg::default(), |m, &c| m.varint(c));
        self.message(field, body)
    }
}

/// A data point at `scale` with positive buckets from `offset`, and its count.
fn point(scale: i32, offset: i32, counts: &[u64], zero: u64) -> Msg {
    let total = counts.iter().fold(zero, |a, &c| a.wrapping_add(c));
    Msg::default()
        .fixed(4, total)
        .sint(6, scale)
        .fixed(7, zero)
        .message(8, Msg::default().sint(1, offset).packed(2, counts))
}

#[test]
fn round_trips_bins_count_and_exact_stats() {
    for scale in [-3, 0, 2, 5, 8] {
        let mut s = sketch(scale);
        for v in [0.0, 1.0, 1.5, 2.0, 3.0, 4.0, 100.0, 100.0, 1e4] {
            s.record(v).unwrap();
        }
        s.record_u64(77);
        let times = Timestamps::new(5, 10);
        let bytes = encode_vec(&s, times);
        let mut t = sketch(scale);
        let report = decode_into(&bytes, &mut t).unwrap();
        assert_eq!(report.added, 10);
        assert_eq!(
            (report.below_range, report.above_range, report.saturated),
            (0, 0, 0)
        );
        assert_eq!(
            (report.scale, report.times, report.exact_stats),
            (scale, times, true)
        );
        assert!(t.bins().eq(s.bins()), "scale {scale}");
        assert_eq!((t.zero_count(), t.count()), (1, 10));
        assert_eq!((t.min(), t.max(), t.sum()), (s.min(), s.max(), s.sum()));
        for q in [0.0, 0.1, 0.5, 0.9, 0.99, 1.0] {
            assert_eq!(t.quantile(q), s.quantile(q), "q={q}");
        }
        // A fixed point.
        assert_eq!(encode_vec(&t, times), bytes);
    }
}

#[test]
fn empty_sketches_write_scale_and_threshold_only() {
    let s = presets::otel_latency();
    let bytes = encode_vec(&s, Timestamps::default());
    let threshold = s.min_trackable().next_down();
    let expected = Msg::default().sint(6, 5).double(14, threshold);
    assert_eq!(bytes, expected.0);
    let mut t = presets::otel_latency();
    let report = decode_into(&bytes, &mut t).unwrap();
    assert_eq!(report.added, 0);
    assert!(t.is_empty() && t.min().is_none());
}

#[test]
fn the_bytes_are_what_protobuf_writes() {
    let mut s = sketch(1); // buckets of sqrt(2)
    s.record(3.0).unwrap(); // bucket 3: (2^1.5, 4]
    s.record(3.0).unwrap();
    s.record(16.0).unwrap(); // bucket 7: (2^3.5, 16]
    s.record(0.0).unwrap();
    let bytes = encode_vec(&s, Timestamps::new(1, 2));
    let expected = Msg::default()
        .fixed(2, 1)
        .fixed(3, 2)
        .fixed(4, 4)
        .double(5, 22.0)
        .sint(6, 1)
        .fixed(7, 1)
        .message(8, Msg::default().sint(1, 3).packed(2, &[2, 0, 0, 0, 1]))
        .double(12, 0.0)
        .double(13, 16.0)
        .double(14, s.min_trackable().next_down());
    assert_eq!(bytes, expected.0);
}

#[test]
fn finer_points_downscale_exactly() {
    let values: Vec<f64> = (1..2000).map(|i| f64::from(i) * 0.731).collect();
    for fine in [0, 3, 8, 11] {
        let mut a =
            DDSketch::<OtelMapping, 32768>::new(OtelMapping::with_scale(fine).unwrap(), 0.5)
                .unwrap();
        for &v in &values {
            a.record(v).unwrap();
        }
        assert_eq!(a.clamped(), 0);
        let bytes = encode_vec(&a, Timestamps::default());
        for coarse in (-10..=fine).step_by(3) {
            let m = OtelMapping::with_scale(coarse).unwrap();
            let mut direct = DDSketch::<OtelMapping, 4096>::new(m, 0.5).unwrap();
            for &v in &values {
                direct.record(v).unwrap();
            }
            let mut b = DDSketch::<OtelMapping, 4096>::new(m, 0.5).unwrap();
            let report = decode_into(&bytes, &mut b).unwrap();
            assert_eq!((report.added, report.scale), (values.len() as u64, fine));
            assert!(b.bins().eq(direct.bins()), "{fine} -> {coarse}");
            assert_eq!((b.min(), b.max()), (direct.min(), direct.max()));
        }
    }
}

#[test]
fn coarser_points_and_bad_scales_are_refused() {
    let mut s = sketch(5);
    s.record(2.0).unwrap();
    let before = s.clone();
    let coarse = point(4, 100, &[1], 0);
    assert_eq!(
        decode_into(&coarse.0, &mut s),
        Err(DecodeError::CoarserScale {
            found: 4,
            expected: 5
        })
    );
    for scale in [21, -11, i32::MAX, i32::MIN] {
        assert_eq!(
            decode_into(&point(scale, 0, &[1], 0).0, &mut s),
            Err(DecodeError::InvalidScale { scale })
        );
        assert_eq!(
            read_scale(&point(scale, 0, &[], 0).0),
            Err(DecodeError::InvalidScale { scale })
        );
    }
    assert_eq!(s, before);
    // A coarser point with only zeros (or nothing) nests at any scale.
    let report = decode_into(&point(-2, 7, &[0, 0], 3).0, &mut s).unwrap();
    assert_eq!((report.added, s.zero_count()), (3, 3));
    assert_eq!(s.min(), Some(0.0));
}

#[test]
fn negative_values_and_wrong_counts_are_refused() {
    let mut s = sketch(2);
    let with_negative = point(2, 0, &[1], 0)
        .fixed(4, 3)
        .message(9, Msg::default().sint(1, -4).packed(2, &[0, 2]));
    assert_eq!(
        decode_into(&with_negative.0, &mut s),
        Err(DecodeError::NegativeValues)
    );
    // Negative buckets of zeros are fine.
    let zeros = point(2, 0, &[1], 0).message(9, Msg::default().packed(2, &[0, 0]));
    assert_eq!(decode_into(&zeros.0, &mut s).unwrap().added, 1);
    let mut s = sketch(2);
    let wrong = point(2, 0, &[1, 2], 1).fixed(4, 5);
    assert_eq!(
        decode_into(&wrong.0, &mut s),
        Err(DecodeError::Count {
            count: 5,
            buckets: 4
        })
    );
    let overflowing = point(2, 0, &[u64::MAX, u64::MAX], 0).fixed(4, 1);
    assert_eq!(
        decode_into(&overflowing.0, &mut s),
        Err(DecodeError::Count {
            count: 1,
            buckets: u64::MAX
        })
    );
    assert!(s.is_empty());
}

#[test]
fn malformed_input_is_a_typed_error_and_changes_nothing() {
    let mut s = sketch(3);
    s.record(5.0).unwrap();
    let before = s.clone();
    let good = {
        let mut a = sketch(3);
        for v in [0.0, 2.0, 3.0, 400.0] {
            a.record(v).unwrap();
        }
        encode_vec(&a, Timestamps::new(1, 2))
    };
    let bad: [(&[u8], WireError); 5] = [
        (&[0x21, 1, 2], WireError::Truncated),
        (&[0x42, 0x05, 0x08], WireError::Truncated),
        (&[0xff; 11], WireError::VarintOverflow),
        (&[0x00], WireError::InvalidFieldNumber),
        (
            &[0x30 | 1, 0, 0, 0, 0, 0, 0, 0, 0],
            WireError::WireType {
                field: 6,
                wire_type: 1,
            },
        ),
    ];
    for (bytes, want) in bad {
        assert_eq!(
            decode_into(bytes, &mut s),
            Err(DecodeError::Malformed(want)),
            "{bytes:?}"
        );
        assert_eq!(s, before);
    }
    // Every prefix of a good message fails or decodes; none panics or half-applies.
    for cut in 0..good.len() {
        let mut t = before.clone();
        if decode_into(&good[..cut], &mut t).is_err() {
            assert_eq!(t, before);
        }
    }
    // Groups and the wrong wire type inside Buckets.
    let group = Msg::default().tag(20, 3);
    assert!(decode_into(&group.0, &mut s).is_err());
    let inside = Msg::default().message(8, Msg::default().tag(1, 1).fixed(9, 0));
    assert!(matches!(
        decode_into(&inside.0, &mut s),
        Err(DecodeError::Malformed(WireError::WireType { field: 1, .. }))
    ));
    assert_eq!(s, before);
}

#[test]
fn out_of_range_buckets_are_clamped_and_counted() {
    let mut s = sketch(0); // 512 bins from 1: indices 0 ..= 511
    let msg = point(0, -20, &[2], 0)
        .message(8, Msg::default().sint(1, 600).packed(2, &[3])) // offset 600 now
        .fixed(4, 5 + 4)
        .fixed(7, 4);
    // Protobuf merges the two Buckets: counts [2, 3] from the last offset, 600.
    let report = decode_into(&msg.0, &mut s).unwrap();
    assert_eq!(
        (report.added, report.above_range, report.below_range),
        (9, 5, 0)
    );
    assert_eq!((s.clamped(), s.zero_count()), (5, 4));
    assert!(!report.exact_stats); // no min, max or sum in the message
                                  // The representative of the message's own top bucket, as for DDSketch messages.
    assert_eq!(
        s.max(),
        Some(OtelMapping::with_scale(0).unwrap().value(601))
    );
    let below = point(0, -40, &[1, 0, 2], 0);
    let report = decode_into(&below.0, &mut s).unwrap();
    assert_eq!((report.added, report.below_range), (3, 3));
    assert_eq!(s.zero_count(), 7);
    // Offsets at the ends of sint32, and far beyond through the position.
    let ends = point(0, i32::MAX, &[1, 1], 0);
    assert_eq!(decode_into(&ends.0, &mut s).unwrap().above_range, 2);
    let ends = point(0, i32::MIN, &[1], 0);
    assert_eq!(decode_into(&ends.0, &mut s).unwrap().below_range, 1);
}

#[test]
fn huge_counts_saturate_and_are_counted() {
    let mut s = sketch(0);
    let msg = point(0, 3, &[5_000_000_000, 1], 4_294_967_296);
    let report = decode_into(&msg.0, &mut s).unwrap();
    let full = u64::from(u32::MAX);
    assert_eq!(report.added, 2 * full + 1);
    assert_eq!(report.saturated, (5_000_000_000 - full) + 1);
    assert_eq!(s.saturated(), report.saturated);
    assert_eq!(s.count(), 2 * full + 1);
}

#[test]
fn stats_are_the_messages_only_when_they_fit_the_buckets() {
    let base = || point(0, 3, &[1, 0, 1], 0); // (8, 16] and (32, 64]
    let with = |min: f64, max: f64, sum: f64| base().double(5, sum).double(12, min).double(13, max);
    let decode = |m: Msg| {
        let mut s = sketch(0);
        let r = decode_into(&m.0, &mut s).unwrap();
        (r.exact_stats, s.min().unwrap(), s.max().unwrap(), s.sum())
    };
    assert_eq!(decode(with(9.0, 40.0, 49.0)), (true, 9.0, 40.0, 49.0));
    let reps = decode(base());
    assert!(!reps.0);
    let m = OtelMapping::with_scale(0).unwrap();
    assert_eq!((reps.1, reps.2), (m.value(3), m.value(5)));
    // A min or max outside its bin, a bad sum, or a NaN: the representatives, all three.
    for bad in [
        with(7.0, 40.0, 49.0),
        with(9.0, 65.0, 49.0),
        with(17.0, 40.0, 49.0),
        with(9.0, 40.0, -1.0),
        with(9.0, 40.0, f64::INFINITY),
        with(f64::NAN, 40.0, 49.0),
        base().double(12, 9.0).double(13, 40.0),
    ] {
        assert_eq!(decode(bad), reps);
    }
    // One bucket: min and max in it, but in the wrong order.
    let one = point(0, 3, &[2], 0)
        .double(5, 20.0)
        .double(12, 12.0)
        .double(13, 9.0);
    assert!(!decode(one).0);
    // The zero bucket's negative values and -0.0 count as 0.
    let zeros = point(0, 0, &[], 2)
        .double(5, -0.5)
        .double(12, -0.5)
        .double(13, -0.0);
    let mut s = sketch(0);
    decode_into(&zeros.0, &mut s).unwrap();
    assert_eq!(s.min().map(f64::to_bits), Some(0));
    assert_eq!(s.max().map(f64::to_bits), Some(0));
}

#[test]
fn a_wide_zero_bucket_is_counted() {
    let mut s = sketch(0); // min_trackable 1
    let msg = point(0, 0, &[], 3).double(14, 4.0);
    assert_eq!(decode_into(&msg.0, &mut s).unwrap().wide_zero, 3);
    let msg = point(0, 0, &[], 3).double(14, 0.5);
    assert_eq!(decode_into(&msg.0, &mut s).unwrap().wide_zero, 0);
    assert_eq!(s.zero_count(), 6);
}

#[test]
fn unpacked_counts_and_unknown_fields_are_read() {
    let buckets = Msg::default()
        .uint(2, 2)
        .uint(2, 0)
        .uint(2, 1)
        .sint(1, 10)
        .fixed(7, 99); // unknown inside Buckets
    let msg = Msg::default()
        .message(1, Msg::default().uint(1, 1)) // attributes
        .fixed(4, 3)
        .sint(6, 2)
        .message(8, buckets)
        .uint(10, 1) // flags
        .message(11, Msg::default().fixed(2, 5)) // exemplars
        .uint(99, 7);
    let mut s = sketch(2);
    decode_into(&msg.0, &mut s).unwrap();
    let bins: Vec<_> = s.bins().map(|b| (b.index, b.count)).collect();
    assert_eq!(bins, [(10, 2), (12, 1)]);
}

#[test]
fn zero_threshold_is_just_below_the_range() {
    let s = presets::otel_latency();
    let bytes = encode_vec(&s, Timestamps::default());
    let t = f64::from_le_bytes(bytes[bytes.len() - 8..].try_into().unwrap());
    let m = s.mapping();
    assert!(t < s.min_trackable() && m.index(t) < s.min_index());
    assert_eq!(t.next_up(), s.min_trackable());
}
