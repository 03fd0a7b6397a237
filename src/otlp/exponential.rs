//! The auto-scaling [`ExponentialSketch`] as a data point, both ways: encoded at its
//! current scale, and decoded (at any scale) by [`ExponentialSketch::merge_point`], which
//! downscales whichever of the two is finer.

use super::decoding::scan;
use super::encoding::{write_fields, Layout};
use super::kind::sealed::Sealed;
use super::message::{walk, Event, Sign};
use super::{DecodeError, Decoded, Timestamps};
use crate::sketch::exponential::Point;
use crate::sketch::mapping::near_edge;
use crate::sketch::{Counter, ExponentialSketch, IndexMapping, OtelMapping};
use crate::wire::{varint_len, Writer};

fn layout<C: Counter, const B: usize>(s: &ExponentialSketch<C, B>, times: Timestamps) -> Layout {
    let (run, packed_len) = s.bucket_counts().fold((0usize, 0usize), |(n, len), count| {
        (n.saturating_add(1), len.saturating_add(varint_len(count)))
    });
    let stats = match (s.min(), s.max()) {
        (Some(min), Some(max)) => Some((s.sum(), min, max)),
        _ => None,
    };
    Layout {
        times,
        count: s.count(),
        stats,
        scale: s.scale(),
        zero_count: s.zero_count(),
        // Its zero bucket holds zeros only, as the SDKs' does.
        zero_threshold: 0.0,
        offset: s.offset(),
        run,
        packed_len,
    }
}

impl<C: Counter, const B: usize> Sealed for ExponentialSketch<C, B> {
    fn body_len(&self, times: Timestamps) -> usize {
        layout(self, times).total_len()
    }

    fn write_body(&self, times: Timestamps, w: &mut Writer<'_>) {
        write_fields(&layout(self, times), self.bucket_counts(), w);
    }

    fn decode(&mut self, bytes: &[u8]) -> Result<Decoded, DecodeError> {
        decode(bytes, self)
    }
}

/// The lowest and highest non-empty positive buckets (their positions in
/// `bucket_counts`), and the sum of their values estimated by their representatives.
#[derive(Default)]
struct Buckets {
    span: Option<(u64, u64)>,
    estimated_sum: f64,
}

fn decode<C: Counter, const B: usize>(
    bytes: &[u8],
    sketch: &mut ExponentialSketch<C, B>,
) -> Result<Decoded, DecodeError> {
    let found = scan(bytes)?;
    if found.negative > 0 {
        return Err(DecodeError::NegativeValues);
    }
    let mapping = match OtelMapping::with_scale(found.scale) {
        Ok(m) => m,
        Err(_) => return Err(DecodeError::InvalidScale { scale: found.scale }), // never: scanned
    };
    let first = i64::from(found.offset);
    let index_at =
        |position: u64| first.saturating_add(i64::try_from(position).unwrap_or(i64::MAX));
    // The value of bucket `index`, as the DDSketch decoder values one (its representative).
    let value_of = |index: i64| {
        let v = i32::try_from(index).map_or(0.0, |i| mapping.value(i));
        if v.is_finite() && v > 0.0 {
            v
        } else {
            0.0 // beyond the floats: refused below
        }
    };
    let mut buckets = Buckets::default();
    walk(bytes, &mut |event| {
        if let Event::Bucket {
            sign: Sign::Positive,
            position,
            count,
        } = event
        {
            if count > 0 {
                buckets.span = Some(match buckets.span {
                    None => (position, position),
                    Some((low, high)) => (low.min(position), high.max(position)),
                });
                buckets.estimated_sum += value_of(index_at(position)) * count as f64;
            }
        }
        Ok(())
    })?;
    let span = buckets
        .span
        .map(|(low, high)| (index_at(low), index_at(high)));
    let (stats, exact) = stats(&found, mapping, span, buckets.estimated_sum, value_of);
    let point = Point {
        scale: found.scale,
        span,
        zero_count: found.zero_count,
        count: found.count,
        stats,
    };
    // The merge takes the point's zeros first, up to the room left below a count of
    // `u64::MAX`: those are the zeros added.
    let zeros_added = found.zero_count.min(u64::MAX.wrapping_sub(sketch.count()));
    // Pass 1 accepted these bytes, so this pass does too.
    let saturated = sketch
        .merge_point(&point, |sink| {
            let _ = walk(bytes, &mut |event| {
                if let Event::Bucket {
                    sign: Sign::Positive,
                    position,
                    count,
                } = event
                {
                    sink(index_at(position), count);
                }
                Ok(())
            });
        })
        .map_err(|_| DecodeError::BeyondFloats { scale: found.scale })?;
    // The sketch's sum reads clamped into what `count` values between min and max can sum
    // to, widened by a part in 10^12 (`ExponentialSketch::sum`): a point's sum outside that
    // is not the one the sketch gives back (but for the infinite sum of a max of +inf,
    // which the sketch holds as f64::MAX, as a record does).
    let (n, (min, max, sum)) = (found.count as f64, stats);
    let (low, high) = crate::sketch::sum_bounds(found.count, min, max);
    // A widened bound that overflows is the bound itself, as in `ExponentialSketch::sum`.
    let high = if high.is_finite() { high } else { n * max };
    let sum_fits = sum >= low && (sum <= high || (sum.is_infinite() && max == f64::MAX));
    Ok(Decoded {
        // As for a `DDSketch`: added and saturated make the point's count.
        added: found.count.saturating_sub(saturated),
        saturated,
        wide_zero: if found.zero_threshold > 0.0 {
            zeros_added
        } else {
            0
        },
        scale: found.scale,
        exact_stats: exact && saturated == 0 && sum_fits,
        times: found.times,
        ..Decoded::default()
    })
}

/// Min, max and sum for the sketch, and whether they are the point's own: they are if all
/// three are present, the sum non-negative, `min <= max`, and min and max lie in the
/// lowest and highest classes that hold values (the zero bucket, up to its threshold, or
/// a bucket, or the bucket beside it within the logarithm method's error of their edge).
/// Otherwise all three are the buckets' representatives', as for a `DDSketch`.
fn stats(
    found: &super::decoding::Scan,
    mapping: OtelMapping,
    span: Option<(i64, i64)>,
    estimated_sum: f64,
    value_of: impl Fn(i64) -> f64,
) -> ((f64, f64, f64), bool) {
    // `+inf` is held as `f64::MAX`, as `record` holds it; -0.0 and the zero bucket's
    // negative values count as 0.
    let held = |v: f64| {
        if v == f64::INFINITY {
            f64::MAX
        } else {
            v.max(0.0)
        }
    };
    let zero_top = found.zero_threshold.max(0.0);
    let in_bucket = |v: f64, bucket: i64| {
        if v.is_nan() || v <= 0.0 {
            return false;
        }
        let own = i64::from(mapping.index(v));
        let upper = own.max(bucket);
        own == bucket
            || (own.abs_diff(bucket) == 1
                && i32::try_from(upper).is_ok_and(|u| near_edge(v, mapping.lower_bound(u))))
    };
    let lowest_fits = |v: f64| {
        if found.zero_count > 0 {
            v <= zero_top
        } else {
            span.is_some_and(|(low, _)| in_bucket(v, low))
        }
    };
    let highest_fits = |v: f64| match span {
        Some((_, high)) => in_bucket(v, high),
        None => v <= zero_top,
    };
    let exact = match (found.min.map(held), found.max.map(held), found.sum) {
        (Some(min), Some(max), Some(sum))
            if sum >= 0.0 && min <= max && lowest_fits(min) && highest_fits(max) =>
        {
            Some((min, max, sum))
        }
        _ => None,
    };
    match exact {
        Some(stats) => (stats, true),
        None => {
            let min = match span {
                Some((low, _)) if found.zero_count == 0 => value_of(low),
                _ => 0.0,
            };
            let max = span.map_or(0.0, |(_, high)| value_of(high));
            ((min, max, estimated_sum), false)
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::otlp::test_msg::{encode_vec, point, Msg};
    use crate::otlp::{decode_into, DecodeError, Timestamps};
    use crate::proto::DecodeError as WireError;
    use crate::sketch::ExponentialSketch;
    use std::vec::Vec;

    type Auto<const B: usize> = ExponentialSketch<u32, B>;

    fn filled<const B: usize>(values: &[f64]) -> Auto<B> {
        let mut s = Auto::<B>::new();
        values.iter().for_each(|&v| s.record(v).unwrap());
        s
    }

    /// A sum a part in 10^12 outside `count * min .. count * max` (computed from rounded
    /// integers of 2^53 or more, or a float sum's rounding) is the sketch's own, so it comes
    /// back exact (the fuzz target found a point of seven large values reported not exact).
    #[test]
    fn a_sum_within_the_rounding_of_its_bounds_round_trips_exact() {
        let mut s = Auto::<2>::new();
        (0..3).for_each(|_| s.record_u64((1 << 53) + 3)); // min reads 2^53 + 4
        let n = s.count() as f64;
        assert!(s.sum() < n * s.min().unwrap() || s.sum() > n * s.max().unwrap());
        let times = Timestamps::new(3, 4);
        let bytes = encode_vec(&s, times);
        let mut t = Auto::<2>::new();
        let report = decode_into(&bytes, &mut t).unwrap();
        assert!(report.exact_stats, "{s:?}");
        assert_eq!(t.sum().to_bits(), s.sum().to_bits());
    }

    #[test]
    fn round_trips_at_every_scale() {
        let sets: [&[f64]; 4] = [
            &[],
            &[0.0, 0.0],
            &[1.0, 1.5, 2.0, 3.0, 0.0, 100.0],
            &[1e-300, 1.0, 1e300, f64::INFINITY, 0.0],
        ];
        for values in sets {
            let s = filled::<16>(values);
            let times = Timestamps::new(3, 4);
            let bytes = encode_vec(&s, times);
            let mut t = Auto::<16>::new();
            let report = decode_into(&bytes, &mut t).unwrap();
            assert_eq!((report.added, report.scale), (s.count(), s.scale()));
            assert_eq!((report.times, report.saturated), (times, 0));
            assert!(report.exact_stats || s.is_empty(), "{values:?}");
            // Equal but for `clamped`, which a point does not carry.
            assert_eq!(
                (t.scale(), t.offset(), t.count()),
                (s.scale(), s.offset(), s.count())
            );
            assert!(t.bucket_counts().eq(s.bucket_counts()));
            assert_eq!((t.min(), t.max(), t.sum()), (s.min(), s.max(), s.sum()));
            assert_eq!(encode_vec(&t, times), bytes, "a fixed point");
        }
    }

    #[test]
    fn the_bytes_are_what_protobuf_writes() {
        let s = filled::<4>(&[3.0, 3.0, 16.0, 0.0]); // scale 0 after downscaling: 3 in 1, 16 in 3
        assert_eq!((s.scale(), s.offset()), (0, 1));
        let expected = Msg::default()
            .fixed(4, 4)
            .double(5, 22.0)
            .fixed(7, 1)
            .message(8, Msg::default().sint(1, 1).packed_varints(2, &[2, 0, 1]))
            .double(12, 0.0)
            .double(13, 16.0);
        assert_eq!(encode_vec(&s, Timestamps::default()), expected.0);
        // Empty: the scale only.
        let empty = Auto::<4>::new();
        assert_eq!(
            encode_vec(&empty, Timestamps::default()),
            Msg::default().sint(6, 8).0
        );
    }

    #[test]
    fn any_scale_merges_in_exactly() {
        let values: Vec<f64> = (1..3000).map(|i| f64::from(i) * 0.37).collect();
        let fine = filled::<4096>(&values); // scale 8 needs 2^(4096/256) = 65536 range: fits
        assert_eq!(fine.scale(), 8);
        let coarse = filled::<8>(&values);
        // Into a sketch of other values, of another size: the merge of the two.
        let others = [5e-3, 7e4, 0.0];
        let mut direct = filled::<64>(&others);
        direct.merge(&fine);
        let mut decoded = filled::<64>(&others);
        decode_into(&encode_vec(&fine, Timestamps::default()), &mut decoded).unwrap();
        assert_eq!(decoded, direct, "fine");
        let mut direct = filled::<64>(&others);
        direct.merge(&coarse);
        let mut decoded = filled::<64>(&others);
        decode_into(&encode_vec(&coarse, Timestamps::default()), &mut decoded).unwrap();
        assert_eq!(decoded, direct, "coarse");
        // A point finer than 8 (scale 10), buckets 4x finer: shifted down by 2.
        let msg = point(10, 4 * 1024 + 3, &[5, 0, 0, 0, 2], 1);
        let mut s = Auto::<16>::new();
        let r = decode_into(&msg.0, &mut s).unwrap();
        assert_eq!((r.added, r.exact_stats), (8, false));
        assert_eq!((s.scale(), s.offset(), s.zero_count()), (8, 1024, 1));
        assert_eq!(s.bucket_counts().collect::<Vec<_>>(), [5, 2]);
    }

    #[test]
    fn empty_end_buckets_and_zeros_do_not_widen_or_downscale() {
        let mut s = Auto::<4>::new();
        // At scale 8: buckets 0 and 3 non-empty, 12 empty on either side.
        let mut counts = [0u64; 28];
        counts[12] = 1;
        counts[15] = 4;
        decode_into(&point(8, -12, &counts, 2).0, &mut s).unwrap();
        assert_eq!((s.scale(), s.offset(), s.count()), (8, 0, 7));
        decode_into(&point(-3, 0, &[], 9).0, &mut s).unwrap();
        assert_eq!((s.scale(), s.zero_count()), (8, 11));
    }

    #[test]
    fn bad_points_are_typed_errors_and_change_nothing() {
        let mut s = filled::<8>(&[2.0, 3.0]);
        let before = s.clone();
        // Beyond f64::MAX (index 1023 at scale 0), and below 2^-1022's bucket (-1023).
        for (scale, offset) in [(0, 1024), (0, -1024), (-10, 1), (-10, -2), (20, i32::MAX)] {
            assert_eq!(
                decode_into(&point(scale, offset, &[1], 0).0, &mut s),
                Err(DecodeError::BeyondFloats { scale }),
                "{scale} {offset}"
            );
        }
        // But the ends themselves go in (scale -10, two buckets: every float).
        let mut wide = Auto::<2>::new();
        decode_into(&point(0, -1023, &[1], 0).0, &mut wide).unwrap();
        decode_into(&point(0, 1023, &[1], 0).0, &mut wide).unwrap();
        assert_eq!((wide.scale(), wide.offset(), wide.count()), (-10, -1, 2));
        let negative = point(2, 0, &[1], 0)
            .fixed(4, 2)
            .message(9, Msg::default().packed_varints(2, &[1]));
        assert_eq!(
            decode_into(&negative.0, &mut s),
            Err(DecodeError::NegativeValues)
        );
        let wrong = point(2, 0, &[1, 2], 1).fixed(4, 5);
        assert!(matches!(
            decode_into(&wrong.0, &mut s),
            Err(DecodeError::Count { .. })
        ));
        assert_eq!(
            decode_into(&point(21, 0, &[1], 0).0, &mut s),
            Err(DecodeError::InvalidScale { scale: 21 })
        );
        let good = encode_vec(&filled::<8>(&[0.0, 5.0, 1e9]), Timestamps::new(1, 2));
        for cut in 0..good.len() {
            let mut t = before.clone();
            if decode_into(&good[..cut], &mut t).is_err() {
                assert_eq!(t, before);
            }
        }
        assert_eq!(
            decode_into(&[0x21, 1, 2], &mut s),
            Err(DecodeError::Malformed(WireError::Truncated))
        );
        assert_eq!(s, before);
    }

    #[test]
    fn stats_are_the_points_only_when_they_fit_its_buckets() {
        // Scale 0: (8, 16] and (32, 64].
        let base = || point(0, 3, &[1, 0, 1], 0);
        let with =
            |min: f64, max: f64, sum: f64| base().double(5, sum).double(12, min).double(13, max);
        let decode = |m: Msg| {
            let mut s = Auto::<8>::new();
            let r = decode_into(&m.0, &mut s).unwrap();
            (r.exact_stats, s.min().unwrap(), s.max().unwrap(), s.sum())
        };
        assert_eq!(decode(with(9.0, 40.0, 49.0)), (true, 9.0, 40.0, 49.0));
        let reps = decode(base());
        assert!(!reps.0);
        for bad in [
            with(7.0, 40.0, 49.0),
            with(9.0, 65.0, 49.0),
            with(9.0, 40.0, -1.0),
        ] {
            assert_eq!(decode(bad), reps);
        }
        // +inf is held as f64::MAX, in the top bucket; so is the sum of that one value.
        let top = point(0, 1023, &[1], 0)
            .double(5, f64::INFINITY)
            .double(12, f64::INFINITY)
            .double(13, f64::INFINITY);
        assert_eq!(decode(top), (true, f64::MAX, f64::MAX, f64::MAX));
        // A sum no two values in [9, 40] can make reads back clamped: not the point's.
        let (exact, _, _, sum) = decode(with(9.0, 40.0, 1e300));
        assert_eq!((exact, sum), (false, 80.0));
    }

    #[test]
    fn zeros_and_counts_past_u64_max_are_counted_as_saturated() {
        let mut s = ExponentialSketch::<u16, 64>::new();
        let r = decode_into(&point(0, 0, &[], u64::MAX).0, &mut s).unwrap();
        assert_eq!((r.added, r.saturated), (u64::MAX, 0));
        let r = decode_into(&point(0, 0, &[], 5).0, &mut s).unwrap();
        assert_eq!((r.added, r.saturated), (0, 5));
        assert_eq!(
            (s.count(), s.zero_count(), s.saturated()),
            (u64::MAX, u64::MAX, 5)
        );
        // Values in buckets past the count's end: the excess is counted too.
        let mut s = ExponentialSketch::<u16, 64>::new();
        decode_into(&point(0, 0, &[], u64::MAX - 1).0, &mut s).unwrap();
        let r = decode_into(&point(0, 3, &[10], 0).0, &mut s).unwrap();
        assert_eq!((r.added, r.saturated), (1, 9));
        assert_eq!((s.count(), s.saturated()), (u64::MAX, 9));
        // Only the value that fits is in the bucket: the count is the zeros and buckets.
        assert_eq!(s.bucket_counts().collect::<Vec<_>>(), [1]);
        assert_eq!(s.zero_count(), u64::MAX - 1);
        // And the sketch's own point decodes back.
        let mut t = ExponentialSketch::<u16, 64>::new();
        let r = decode_into(&encode_vec(&s, Timestamps::default()), &mut t).unwrap();
        assert_eq!((r.added, r.saturated, t.count()), (u64::MAX, 0, u64::MAX));
        // A point of more than the room: nothing of it is taken, the scale stays.
        let r = decode_into(&point(-4, 1, &[3], 0).0, &mut t).unwrap();
        assert_eq!((r.added, r.saturated), (0, 3));
        assert_eq!((t.scale(), t.count(), t.saturated()), (0, u64::MAX, 3));
    }

    /// `wide_zero` counts the zeros added, as for a `DDSketch`: a wide zero bucket that
    /// finds the count at `u64::MAX` adds nothing, so none of it is a wide zero.
    #[test]
    fn wide_zeros_are_only_those_added() {
        let wide = |zeros: u64| point(0, 0, &[], zeros).double(14, 1e-9);
        let mut s = ExponentialSketch::<u16, 64>::new();
        let r = decode_into(&wide(3).0, &mut s).unwrap();
        assert_eq!((r.added, r.wide_zero), (3, 3));
        decode_into(&point(0, 0, &[], u64::MAX - 5).0, &mut s).unwrap();
        let r = decode_into(&wide(4).0, &mut s).unwrap();
        assert_eq!((r.added, r.saturated, r.wide_zero), (2, 2, 2));
        let r = decode_into(&wide(5).0, &mut s).unwrap();
        assert_eq!((r.added, r.saturated, r.wide_zero), (0, 5, 0));
    }

    #[test]
    fn full_counters_saturate_and_are_counted() {
        let mut s = ExponentialSketch::<u8, 8>::new();
        let r = decode_into(&point(0, 3, &[300, 1], 0).0, &mut s).unwrap();
        assert_eq!((r.added, r.saturated, r.exact_stats), (256, 45, false));
        assert_eq!((s.count(), s.saturated()), (256, 45));
    }
}
