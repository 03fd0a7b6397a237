//! Decoding a data point into a sketch: [`read_scale`] and [`decode_into`], two passes of
//! [`walk`] over the same bytes (the first, [`scan`], validates, the second cannot fail);
//! here for a `DDSketch`, in [`super::exponential`] for an `ExponentialSketch`.

use super::message::{walk, Event, Sign};
use super::{DecodeError, OtelSketch, Timestamps};
use crate::sketch::mapping::near_edge;
use crate::sketch::{sum_bounds, DDSketch, IndexMapping, OtelMapping};
use crate::wire::{Range, Side, Tally};

/// What [`decode_into`] added to the sketch.
///
/// ```
/// use tailguard::otlp::{decode_into, encode, Timestamps};
/// use tailguard::sketch::{DDSketch, OtelMapping};
///
/// // A scale-8 point decoded into a scale-5 sketch of a narrower range.
/// let fine = OtelMapping::with_scale(8).unwrap();
/// let mut a = DDSketch::<OtelMapping, 8192>::new(fine, 1e-3).unwrap();
/// for v in [1e-2, 5.0, 6.0, 1e6] {
///     a.record(v).unwrap();
/// }
/// let mut buf = [0u8; 8192];
/// let len = encode(&a, Timestamps::default(), &mut buf).unwrap();
/// let coarse = OtelMapping::with_scale(5).unwrap();
/// let mut b = DDSketch::<OtelMapping, 256>::new(coarse, 1.0).unwrap();
/// let report = decode_into(&buf[..len], &mut b).unwrap();
/// assert_eq!((report.added, report.below_range, report.above_range), (4, 1, 1));
/// assert_eq!(report.scale, 8);
/// assert!(report.exact_stats); // min, max and sum are the message's
/// assert_eq!((b.min(), b.max(), b.sum()), (a.min(), a.max(), a.sum()));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub struct Decoded {
    /// Values added to the sketch: its [`count`](DDSketch::count) grew by this much.
    pub added: u64,
    /// Of those, values of buckets below the sketch's range, now in its zero bin.
    pub below_range: u64,
    /// Of those, values of buckets above the sketch's range, now in its top bin (and
    /// counted by [`clamped`](DDSketch::clamped)).
    pub above_range: u64,
    /// Values of the point dropped because their bin was full (counted by
    /// [`saturated`](DDSketch::saturated)). An
    /// [`ExponentialSketch`](crate::sketch::ExponentialSketch) the point downscales may
    /// drop some of its own values too (two full buckets merging), which its `saturated`
    /// counts, as a merge's, but this does not.
    pub saturated: u64,
    /// Of those added, values of the zero bucket whose `zero_threshold` reaches the
    /// sketch's bins: they may be as large as the threshold, and now count as zeros.
    pub wide_zero: u64,
    /// The data point's scale: the sketch's, or finer (then every bucket went to the bin
    /// that contains it, exactly).
    pub scale: i32,
    /// Whether min, max and sum are the data point's exact ones (`true`). `false` if at
    /// least one was absent or disagreed with the buckets, and all three were taken from
    /// the buckets' representative values, as [`proto::decode_into`](crate::proto::decode_into)
    /// does (within `alpha`); `false` as well if values were dropped as saturated, which
    /// leave the point's sum as [`DDSketch::merge`] takes them out (their buckets' value,
    /// clamped into the point's `[min, max]`).
    pub exact_stats: bool,
    /// The data point's time fields (0 where absent).
    pub times: Timestamps,
}

/// What the validating pass learns: the final value of every scalar, and the totals.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Scan {
    pub(super) times: Timestamps,
    pub(super) count: u64,
    pub(super) sum: Option<f64>,
    pub(super) scale: i32,
    pub(super) zero_count: u64,
    pub(super) min: Option<f64>,
    pub(super) max: Option<f64>,
    pub(super) zero_threshold: f64,
    pub(super) offset: i32,
    pub(super) positive: u128,
    pub(super) negative: u128,
}

/// Validates a data point (well formed, its scale in `-10..=20`, its count the zero
/// count plus the buckets') and learns its scalars.
pub(super) fn scan(bytes: &[u8]) -> Result<Scan, DecodeError> {
    let mut s = Scan::default();
    walk(bytes, &mut |event| {
        match event {
            Event::StartTime(t) => s.times.start_unix_nano = t,
            Event::Time(t) => s.times.time_unix_nano = t,
            Event::Count(c) => s.count = c,
            Event::Sum(v) => s.sum = Some(v),
            Event::Scale(v) => s.scale = v,
            Event::ZeroCount(c) => s.zero_count = c,
            Event::Min(v) => s.min = Some(v),
            Event::Max(v) => s.max = Some(v),
            Event::ZeroThreshold(v) => s.zero_threshold = v,
            Event::Offset {
                sign: Sign::Positive,
                offset,
            } => s.offset = offset,
            Event::Offset { .. } => {}
            Event::Bucket { sign, count, .. } => {
                let total = match sign {
                    Sign::Positive => &mut s.positive,
                    Sign::Negative => &mut s.negative,
                };
                *total = total.saturating_add(u128::from(count));
            }
        }
        Ok(())
    })?;
    if !(OtelMapping::MIN_SCALE..=OtelMapping::MAX_SCALE).contains(&s.scale) {
        return Err(DecodeError::InvalidScale { scale: s.scale });
    }
    let buckets = u128::from(s.zero_count)
        .saturating_add(s.positive)
        .saturating_add(s.negative);
    if buckets != u128::from(s.count) {
        return Err(DecodeError::Count {
            count: s.count,
            buckets: u64::try_from(buckets).unwrap_or(u64::MAX),
        });
    }
    Ok(s)
}

/// Reads the scale of a data point (checking the whole message is well formed, its scale
/// valid and its count consistent), to pick the sketch to decode it into.
///
/// ```
/// use tailguard::otlp::{encode, read_scale, Timestamps};
/// use tailguard::sketch::presets;
///
/// let s = presets::otel_latency();
/// let mut buf = [0u8; 64];
/// let len = encode(&s, Timestamps::default(), &mut buf).unwrap();
/// assert_eq!(read_scale(&buf[..len]), Ok(5));
/// ```
pub fn read_scale(bytes: &[u8]) -> Result<i32, DecodeError> {
    scan(bytes).map(|s| s.scale)
}

/// Decodes an OTLP `ExponentialHistogramDataPoint` and adds its values to `sketch` (either
/// [`OtelSketch`]), as the sketch's `merge` would add another sketch's. See the
/// [module docs](crate::otlp#decoding) for the rules.
///
/// Into an [`ExponentialSketch`](crate::sketch::ExponentialSketch), a point of any scale
/// goes in, whichever of the two is finer downscaled exactly
/// ([Decoding into an `ExponentialSketch`](crate::otlp#decoding-into-an-exponentialsketch)).
/// Into a `DDSketch<OtelMapping, N>`,
/// the data point's scale must be the sketch's, or finer: a bucket of scale `s + d` is
/// inside the sketch's bucket `index >> d`, exactly, so nothing is re-binned. Buckets
/// outside the sketch's range are clamped and counted; the returned [`Decoded`] says how
/// many values were added, clamped or saturated. On error the sketch is unchanged.
///
/// ```
/// use tailguard::otlp::{decode_into, encode, Timestamps};
/// use tailguard::sketch::presets;
///
/// let mut device = presets::otel_latency();
/// for ns in [4_000_000u64, 5_000_000, 48_000_000] {
///     device.record_u64(ns);
/// }
/// let mut buf = [0u8; 512];
/// let len = encode(&device, Timestamps::default(), &mut buf).unwrap();
///
/// let mut total = presets::otel_latency();
/// let report = decode_into(&buf[..len], &mut total).unwrap();
/// assert_eq!(report.added, 3);
/// assert!(total.bins().eq(device.bins()));
/// assert_eq!(total.max(), Some(48e6));
/// ```
pub fn decode_into<S: OtelSketch>(bytes: &[u8], sketch: &mut S) -> Result<Decoded, DecodeError> {
    sketch.decode(bytes)
}

/// [`decode_into`] for a `DDSketch`.
pub(super) fn decode_ddsketch<const N: usize>(
    bytes: &[u8],
    sketch: &mut DDSketch<OtelMapping, N>,
) -> Result<Decoded, DecodeError> {
    // Pass 1 validates everything and learns the scalars (which may come last); pass 2,
    // over the same bytes, cannot fail, so the sketch is changed all or not at all.
    let found = scan(bytes)?;
    if found.negative > 0 {
        return Err(DecodeError::NegativeValues);
    }
    let ours = sketch.mapping().scale();
    // Only buckets need the scales to nest: a zero count goes in at any scale.
    let delta = match u32::try_from(found.scale.wrapping_sub(ours)) {
        Ok(delta) => delta, // 0..=30: both scales are in -10..=20
        Err(_) if found.positive == 0 => 0,
        Err(_) => {
            return Err(DecodeError::CoarserScale {
                found: found.scale,
                expected: ours,
            })
        }
    };

    let mut report = Decoded {
        scale: found.scale,
        times: found.times,
        ..Decoded::default()
    };
    let mut tally = Tally::default();
    let mut acc = Accumulated::new(sketch, found.min.zip(found.max));
    let first = i64::from(found.offset);
    // Pass 1 accepted these bytes, so pass 2 does too.
    walk(bytes, &mut |event| {
        if let Event::Bucket {
            sign: Sign::Positive,
            position,
            count,
        } = event
        {
            if count > 0 {
                let index = first.saturating_add(i64::try_from(position).unwrap_or(i64::MAX));
                acc.add(sketch, index >> delta, count, &mut tally);
            }
        }
        Ok(())
    })?;
    let before = tally.added;
    acc.add(sketch, i64::MIN, found.zero_count, &mut tally);
    // A NaN threshold compares false; min_trackable is a search, asked only if needed.
    if found.zero_count > 0 && found.zero_threshold >= sketch.min_trackable() {
        report.wide_zero = tally.added.wrapping_sub(before); // added only grows
    }
    if tally.added > 0 {
        let (min, max, sum, exact) = acc.stats(sketch, &found);
        // Values dropped as saturated leave the sum as an estimate.
        report.exact_stats = exact && tally.saturated == 0;
        sketch.add_float_stats(min, max, sum);
    }
    Ok(Decoded {
        added: tally.added,
        below_range: tally.below_range,
        above_range: tally.above_range,
        saturated: tally.saturated,
        ..report
    })
}

/// What the added buckets say about min, max and sum, for when the message's are
/// missing or do not fit.
struct Accumulated {
    /// The sketch's range.
    range: Range,
    /// The lowest and highest class (see [`class`](Self::class)) that received values.
    lowest: i64,
    highest: i64,
    min: f64,
    max: f64,
    sum: f64,
    /// The message's min and max, raw, to clamp the estimates of dropped values into.
    extremes: Option<(f64, f64)>,
    /// The estimated sum of the values dropped as saturated (see [`DDSketch::merge`]).
    dropped: f64,
}

impl Accumulated {
    fn new<const N: usize>(
        sketch: &DDSketch<OtelMapping, N>,
        extremes: Option<(f64, f64)>,
    ) -> Self {
        Accumulated {
            range: Range::of(sketch),
            lowest: i64::MAX,
            highest: i64::MIN,
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
            sum: 0.0,
            extremes,
            dropped: 0.0,
        }
    }

    /// The bin a sketch index is counted in: `min_index - 1` for the zero bin, the top
    /// bin `end - 1` for every index from it up (clamped or not: one counter).
    fn class(&self, index: i64) -> i64 {
        // max-then-min, not `Ord::clamp`: clamp panics when its bounds cross, and links
        // that panic (with core::fmt) into the image; these cannot cross (end > min_index).
        index
            .max(self.range.min_index.saturating_sub(1))
            .min(self.range.end.saturating_sub(1))
    }

    /// The class of a value, as `record` would count it.
    fn class_of_value<const N: usize>(&self, sketch: &DDSketch<OtelMapping, N>, v: f64) -> i64 {
        if v > 0.0 {
            self.class(i64::from(sketch.mapping().index(v)))
        } else {
            self.class(i64::MIN)
        }
    }

    /// Adds `n` values of the sketch's bin `index` (`i64::MIN` for the zero bin; any
    /// index is clamped as `record` clamps).
    fn add<const N: usize>(
        &mut self,
        sketch: &mut DDSketch<OtelMapping, N>,
        index: i64,
        n: u64,
        tally: &mut Tally,
    ) {
        let class = self.class(index);
        let (index32, side) = self.range.place(index);
        let below = side == Side::Below;
        let added = sketch.add_bin_count_only(index32, n);
        // The zero bucket (i64::MIN) is not below the range, just zeros.
        let side = if index == i64::MIN { Side::Zero } else { side };
        let dropped = tally.count(n, added, side);
        if n == 0 {
            return;
        }
        // The bin's representative value, as the DDSketch decoder takes it: its own
        // bin's, or 0 or the end of the range where that overflows.
        let value = if index == i64::MIN {
            0.0
        } else {
            let v = sketch
                .mapping()
                .value(i32::try_from(index).unwrap_or(if below { i32::MIN } else { i32::MAX }));
            if v.is_finite() && v >= 0.0 {
                v
            } else if below {
                0.0
            } else {
                sketch.max_trackable()
            }
        };
        // A bucket whose values were all dropped still bounds the point's min and max,
        // as `DDSketch::merge` takes another sketch's; only the sum leaves them out.
        self.lowest = self.lowest.min(class);
        self.highest = self.highest.max(class);
        self.min = self.min.min(value);
        self.max = self.max.max(value);
        self.sum += value * added as f64;
        if dropped > 0 {
            // max-then-min, not `f64::clamp`, which panics when its bounds cross; NaN
            // bounds are ignored by both.
            let (low, high) = self.extremes.unwrap_or((value, value));
            self.dropped += dropped as f64 * value.max(low).min(high);
        }
    }

    /// Whether `v` may be the min (or max) of values of class `class`: it is in that
    /// class, or in the class beside it and within the logarithm method's error of the
    /// edge between them ([`near_edge`]), so that it, or values a hair from it, may have
    /// crossed (at the point's scale, or at a finer one the point was downscaled from). Values a hair below a power of two give a data point such a
    /// min or max, from an SDK or from tailguard.
    fn may_hold<const N: usize>(
        &self,
        sketch: &DDSketch<OtelMapping, N>,
        v: f64,
        class: i64,
    ) -> bool {
        let own = self.class_of_value(sketch, v);
        if own == class {
            return true;
        }
        // The edge between classes `c - 1` and `c` is the lower bound of bin `c` (of the
        // first bin for the zero bin, of the top bin for the clamped ones).
        let upper = own.max(class);
        own.abs_diff(class) == 1
            && i32::try_from(upper)
                .is_ok_and(|upper| near_edge(v, sketch.mapping().lower_bound(upper)))
    }

    /// Min, max and sum to add to the sketch, and whether they are the message's: its
    /// min and max must lie in the lowest and highest bins that received values (so that
    /// they still bound the bins, which the quantile scan relies on), in order, and its
    /// sum must be a finite non-negative number.
    fn stats<const N: usize>(
        &self,
        sketch: &DDSketch<OtelMapping, N>,
        found: &Scan,
    ) -> (f64, f64, f64, bool) {
        // -0.0 and the zero bucket's negative values count as 0.
        let non_negative = |v: f64| if v > 0.0 { v } else { 0.0 };
        // +inf enters min and max as `record` enters it: as the end of the range (itself
        // +inf for a sketch whose range has no end).
        let top = |v: f64| {
            if v == f64::INFINITY {
                sketch.max_trackable()
            } else {
                v
            }
        };
        let min = found
            .min
            .map(top)
            .filter(|&v| !v.is_nan() && self.may_hold(sketch, v, self.lowest))
            .map(non_negative);
        let max = found
            .max
            .map(top)
            .filter(|&v| !v.is_nan() && self.may_hold(sketch, v, self.highest))
            .map(non_negative);
        // A sum of finite values may have overflowed to +inf: it is kept as it is.
        let sum = found.sum.filter(|&v| v >= 0.0);
        match (min, max, sum) {
            (Some(min), Some(max), Some(sum)) if min <= max => {
                // The sketch's sum reads clamped into what `count` values between min and
                // max can sum to: a sum outside that is not the one it gives back (but for
                // the infinite sum of a max of +inf, held as the end of the range).
                let (low, high) = sum_bounds(found.count, min, max);
                let held_infinity = found.max == Some(f64::INFINITY);
                let fits = sum >= low && (sum <= high || (sum.is_infinite() && held_infinity));
                // Never below zero (an estimate a hair above what it stands for); an
                // infinite sum less the infinite estimate of values near f64::MAX (NaN)
                // stays infinite.
                let kept = non_negative(sum) - self.dropped;
                let sum = if kept.is_nan() {
                    f64::INFINITY
                } else {
                    kept.max(0.0)
                };
                (min, max, sum, fits)
            }
            _ => (self.min, self.max, self.sum, false),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::otlp::test_msg::{encode_vec, point, sketch, Msg};
    use crate::otlp::{DecodeError, Timestamps};
    use crate::proto::DecodeError as WireError;
    use crate::sketch::{DDSketch, IndexMapping, OtelMapping};
    use std::vec::Vec;

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
            .message(9, Msg::default().sint(1, -4).packed_varints(2, &[0, 2]));
        assert_eq!(
            decode_into(&with_negative.0, &mut s),
            Err(DecodeError::NegativeValues)
        );
        // Negative buckets of zeros are fine.
        let zeros = point(2, 0, &[1], 0).message(9, Msg::default().packed_varints(2, &[0, 0]));
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
            .message(8, Msg::default().sint(1, 600).packed_varints(2, &[3])) // offset 600 now
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
    fn an_infinite_sum_stays_infinite_when_a_full_bin_drops_values_near_the_top() {
        let mut s =
            DDSketch::<OtelMapping, 1100>::new(OtelMapping::with_scale(0).unwrap(), 1.0).unwrap();
        let m = point(0, 996, &[5_000_000_000], 0) // 1e300 is in (2^996, 2^997]
            .double(5, f64::INFINITY)
            .double(12, 1e300)
            .double(13, 1e300);
        let r = decode_into(&m.0, &mut s).unwrap();
        assert_eq!((r.added, r.saturated), (u64::from(u32::MAX), 705_032_705));
        assert_eq!(
            (s.sum(), s.min(), s.max()),
            (f64::INFINITY, Some(1e300), Some(1e300))
        );
    }

    #[test]
    fn stats_are_the_messages_only_when_they_fit_the_buckets() {
        let base = || point(0, 3, &[1, 0, 1], 0); // (8, 16] and (32, 64]
        let with =
            |min: f64, max: f64, sum: f64| base().double(5, sum).double(12, min).double(13, max);
        let decode = |m: Msg| {
            let mut s = sketch(0);
            let r = decode_into(&m.0, &mut s).unwrap();
            (r.exact_stats, s.min().unwrap(), s.max().unwrap(), s.sum())
        };
        assert_eq!(decode(with(9.0, 40.0, 49.0)), (true, 9.0, 40.0, 49.0));
        // An infinite sum two values in [9, 40] cannot make costs no exact min or max; the
        // sum reads clamped to what they can make, which the report says is not the
        // message's. So does 1e300.
        let inf = f64::INFINITY;
        let most = sum_bounds(2, 9.0, 40.0).1; // 80, to a part in 10^12
        assert_eq!(decode(with(9.0, 40.0, inf)), (false, 9.0, 40.0, most));
        assert_eq!(decode(with(9.0, 40.0, 1e300)), (false, 9.0, 40.0, most));
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
            with(9.0, 40.0, f64::NAN),
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
}
