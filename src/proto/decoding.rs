//! Decoding a message into a sketch: [`read_mapping`] and [`decode_into`], two passes of
//! [`walk`] over the same bytes (the first validates, the second cannot fail).

use super::mapping::key_to_index;
use super::message::{walk, Event, StoreKind};
use super::{DecodeError, IndexConvention, WireMapping};
use crate::sketch::{DDSketch, IndexMapping};
use crate::wire::{Range, Side, Tally};

/// What [`decode_into`] added to the sketch.
///
/// ```
/// use tailguard::proto::{decode_into, encode, IndexConvention};
/// use tailguard::sketch::{DDSketch, LogMapping};
///
/// // A sketch of a wide range, decoded into one of a narrower range.
/// type Wide = DDSketch<LogMapping, 1024>;
/// type Narrow = DDSketch<LogMapping, 256>;
/// let mut wide = Wide::with_relative_accuracy(0.02, 1e-3).unwrap();
/// for v in [1e-2, 5.0, 6.0, 1e6] {
///     wide.record(v).unwrap();
/// }
/// let mut buf = [0u8; 8192];
/// let len = encode(&wide, IndexConvention::GoJava, &mut buf).unwrap();
/// let mut narrow = Narrow::with_relative_accuracy(0.02, 1.0).unwrap();
/// let report = decode_into(&buf[..len], IndexConvention::GoJava, &mut narrow).unwrap();
/// assert_eq!((report.added, report.below_range, report.above_range), (4, 1, 1));
/// assert_eq!(narrow.zero_count(), 1);
/// assert_eq!(narrow.clamped(), 1);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub struct Decoded {
    /// Values added to the sketch: its [`count`](DDSketch::count) grew by this much.
    pub added: u64,
    /// Of those, values of bins below the sketch's range, now in its zero bin.
    pub below_range: u64,
    /// Of those, values of bins above the sketch's range, now in its top bin (and counted
    /// by [`clamped`](DDSketch::clamped)).
    pub above_range: u64,
    /// Values dropped because their bin was full (counted by
    /// [`saturated`](DDSketch::saturated)).
    pub saturated: u64,
}

impl Decoded {
    /// The report of what a decoder counted.
    pub(super) fn of(t: Tally) -> Self {
        Decoded {
            added: t.added,
            below_range: t.below_range,
            above_range: t.above_range,
            saturated: t.saturated,
        }
    }
}

fn check_count(count: f64) -> Result<u64, DecodeError> {
    if count.is_finite() && count >= 0.0 && libm::trunc(count) == count {
        // Saturating: a count of 2^64 or more is more than any bin holds anyway.
        Ok(count as u64)
    } else {
        Err(DecodeError::InvalidCount { count })
    }
}

/// What the validating pass learns: the final value of every scalar.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Scan {
    mapping: Option<WireMapping>,
    positive_offset: i32,
    /// Whether `negativeValues` holds a non-zero count.
    pub(super) negative: bool,
    zero_count: u64,
}

/// Pass 1: checks the whole message is well formed and every count valid.
pub(super) fn scan(bytes: &[u8]) -> Result<Scan, DecodeError> {
    let mut s = Scan::default();
    let empty = WireMapping {
        gamma: 0.0,
        index_offset: 0.0,
        interpolation: 0,
    };
    walk(bytes, &mut |event| {
        match event {
            Event::Gamma(g) => s.mapping.get_or_insert(empty).gamma = g,
            Event::IndexOffset(o) => s.mapping.get_or_insert(empty).index_offset = o,
            Event::Interpolation(i) => s.mapping.get_or_insert(empty).interpolation = i,
            Event::Sparse { store, count, .. } | Event::Contiguous { store, count, .. } => {
                if check_count(count)? > 0 && store == StoreKind::Negative {
                    s.negative = true;
                }
            }
            Event::ContiguousOffset {
                store: StoreKind::Positive,
                offset,
            } => s.positive_offset = offset,
            Event::ContiguousOffset { .. } => {}
            Event::ZeroCount(c) => s.zero_count = check_count(c)?,
        }
        Ok(())
    })?;
    Ok(s)
}

/// Reads the `IndexMapping` of a message (checking the whole message is well formed), to
/// pick the configuration of the sketch to decode it into.
///
/// Errors on a malformed message or an invalid count, and with
/// [`DecodeError::InvalidMapping`] if the mapping is missing, its gamma is not a finite
/// number above 1 or its offset is not finite.
///
/// ```
/// use tailguard::proto::{encode, read_mapping, IndexConvention};
/// use tailguard::sketch::{presets, Interpolation};
///
/// let s = presets::cubic_latency();
/// let mut buf = [0u8; 64];
/// let len = encode(&s, IndexConvention::GoJava, &mut buf).unwrap();
/// let m = read_mapping(&buf[..len]).unwrap();
/// assert_eq!(m.interpolation(), Some(Interpolation::Cubic));
/// let alpha = m.relative_accuracy(IndexConvention::GoJava).unwrap();
/// assert!((alpha - 0.01).abs() < 1e-12);
/// ```
pub fn read_mapping(bytes: &[u8]) -> Result<WireMapping, DecodeError> {
    let mapping = scan(bytes)?.mapping.ok_or(DecodeError::InvalidMapping)?;
    if mapping.gamma > 1.0 && mapping.gamma.is_finite() && mapping.index_offset.is_finite() {
        Ok(mapping)
    } else {
        Err(DecodeError::InvalidMapping)
    }
}

/// Decodes a DDSketch protobuf message written in `convention` and adds its bins to
/// `sketch`, as [`DDSketch::merge`] would add another sketch's.
///
/// To decode into a fresh sketch, pass an empty sketch of the writer's configuration
/// (its mapping, and a range; [`read_mapping`] tells the mapping). The message's mapping
/// must be the sketch's (see the [module docs](crate::proto#matching-a-sketchs-mapping)); bins
/// outside the sketch's range are clamped and counted; the returned [`Decoded`] says how
/// many values were added and how many of them were clamped or saturated. On error
/// the sketch is unchanged.
///
/// ```
/// use tailguard::proto::{decode_into, encode, DecodeError, IndexConvention};
/// use tailguard::sketch::{DDSketch, LogMapping};
///
/// type Sketch = DDSketch<LogMapping, 1024>;
/// let mut a = Sketch::with_relative_accuracy(0.01, 1.0).unwrap();
/// for v in 1..=100 {
///     a.record(f64::from(v)).unwrap();
/// }
/// let mut buf = [0u8; 4096];
/// let len = encode(&a, IndexConvention::GoJava, &mut buf).unwrap();
///
/// let mut b = Sketch::with_relative_accuracy(0.01, 1.0).unwrap();
/// decode_into(&buf[..len], IndexConvention::GoJava, &mut b).unwrap();
/// assert!(b.bins().eq(a.bins()));
/// let p50 = b.quantile(0.5).unwrap().unwrap();
/// assert!((p50 - 50.0).abs() <= 0.01 * 50.0);
///
/// // Another accuracy is another mapping: an error, and nothing changes.
/// let mut c = Sketch::with_relative_accuracy(0.02, 1.0).unwrap();
/// let err = decode_into(&buf[..len], IndexConvention::GoJava, &mut c).unwrap_err();
/// assert!(matches!(err, DecodeError::Gamma { .. }));
/// assert!(c.is_empty());
/// ```
pub fn decode_into<M: IndexMapping, const N: usize>(
    bytes: &[u8],
    convention: IndexConvention,
    sketch: &mut DDSketch<M, N>,
) -> Result<Decoded, DecodeError> {
    // Pass 1 validates everything and learns the scalars (which may come last); pass 2,
    // over the same bytes, cannot fail, so the sketch is changed all or not at all.
    let found = scan(bytes)?;
    let wire = read_mapping_of(&found)?;
    let shift = key_to_index(&wire, sketch.mapping(), convention)?;
    if found.negative {
        return Err(DecodeError::NegativeValues);
    }

    let mut tally = Tally::default();
    apply(
        bytes,
        &found,
        sketch,
        &mut tally,
        &mut |sketch, key, n, tally| add_bin(sketch, key.saturating_add(shift), n, tally),
    );
    Ok(Decoded::of(tally))
}

/// Pass 2, over bytes [`scan`] accepted (so it cannot fail): `add` gets every positive
/// bin with a non-zero count (its key, possibly beyond `i32`, and its count), then the
/// zero count goes to the zero bin.
pub(super) fn apply<M: IndexMapping, const N: usize, F>(
    bytes: &[u8],
    found: &Scan,
    sketch: &mut DDSketch<M, N>,
    tally: &mut Tally,
    add: &mut F,
) where
    F: FnMut(&mut DDSketch<M, N>, i64, u64, &mut Tally),
{
    let first = i64::from(found.positive_offset);
    // Pass 1 accepted these bytes, so this walk returns Ok: nothing to handle.
    let _ = walk(bytes, &mut |event| {
        let (key, count) = match event {
            Event::Sparse {
                store: StoreKind::Positive,
                key,
                count,
            } => (i64::from(key), count),
            Event::Contiguous {
                store: StoreKind::Positive,
                position,
                count,
            } => (
                first.saturating_add(i64::try_from(position).unwrap_or(i64::MAX)),
                count,
            ),
            _ => return Ok(()),
        };
        let n = check_count(count)?;
        if n > 0 {
            add(sketch, key, n, tally);
        }
        Ok(())
    });
    let added = sketch.add_bin_count(i32::MIN, found.zero_count, 0.0);
    tally.count(found.zero_count, added, Side::Zero);
}

/// The message's mapping, if present and valid.
pub(super) fn read_mapping_of(found: &Scan) -> Result<WireMapping, DecodeError> {
    match found.mapping {
        Some(m) if m.gamma > 1.0 && m.gamma.is_finite() && m.index_offset.is_finite() => Ok(m),
        _ => Err(DecodeError::InvalidMapping),
    }
}

/// Adds `n` values of the sketch's bin `index` (any i64: clamped as `record` clamps).
fn add_bin<M: IndexMapping, const N: usize>(
    sketch: &mut DDSketch<M, N>,
    index: i64,
    n: u64,
    tally: &mut Tally,
) {
    let min = i64::from(sketch.min_index());
    let index32 = i32::try_from(index).unwrap_or(if index < 0 { i32::MIN } else { i32::MAX });
    let value = sketch.mapping().value(index32);
    let value = if value.is_finite() && value >= 0.0 {
        value
    } else if index < min {
        0.0
    } else {
        sketch.max_trackable()
    };
    add_bin_valued(sketch, index, n, value, tally);
}

/// Adds `n` values of the sketch's bin `index` (any i64: clamped as `record` clamps),
/// entering min, max and sum at `value` (finite, non-negative), and counts them.
pub(super) fn add_bin_valued<M: IndexMapping, const N: usize>(
    sketch: &mut DDSketch<M, N>,
    index: i64,
    n: u64,
    value: f64,
    tally: &mut Tally,
) {
    let (index32, side) = Range::of(sketch).place(index);
    let added = sketch.add_bin_count(index32, n, value);
    tally.count(n, added, side);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::test_msg::{encode_vec, entry, log, mapping_of, Msg};
    use crate::sketch::{CubicMapping, IntMapping, LogMapping};
    use std::vec::Vec;

    #[test]
    fn sparse_and_contiguous_bins_add_up() {
        let m = log();
        let base = m.mapping().index(10.0);
        let msg = Msg::default()
            .message(
                2,
                Msg::default()
                    .message(1, entry(base, 2.0))
                    .message(1, entry(base + 5, 1.0))
                    .message(1, entry(base, 3.0)) // a repeated key adds
                    .packed(2, &[1.0, 0.0, 4.0])
                    .sint(3, base),
            )
            .message(1, mapping_of(m.mapping())) // the mapping may come last
            .double(4, 7.0);
        let mut s = log();
        let report = decode_into(&msg.0, IndexConvention::GoJava, &mut s).unwrap();
        assert_eq!(report.added, 2 + 1 + 3 + 1 + 4 + 7);
        let bins: Vec<_> = s.bins().map(|b| (b.index - base, b.count)).collect();
        assert_eq!(bins, [(0, 6), (2, 4), (5, 1)]);
        assert_eq!(s.zero_count(), 7);
    }

    #[test]
    fn repeated_messages_merge_as_protobuf_says() {
        let m = log();
        let base = m.mapping().index(10.0);
        // Two positiveValues: the counts concatenate, the last offset wins.
        let msg = Msg::default()
            .message(1, Msg::default().double(1, 3.0)) // overridden below
            .message(2, Msg::default().packed(2, &[1.0]).sint(3, 999))
            .message(2, Msg::default().double(2, 2.0).sint(3, base)) // unpacked
            .message(1, mapping_of(m.mapping()))
            .double(4, 1.0)
            .double(4, 0.0); // the last zeroCount wins
        let mut s = log();
        decode_into(&msg.0, IndexConvention::GoJava, &mut s).unwrap();
        let bins: Vec<_> = s.bins().map(|b| (b.index - base, b.count)).collect();
        assert_eq!(bins, [(0, 1), (1, 2)]);
        assert_eq!(s.zero_count(), 0);
    }

    #[test]
    fn unknown_fields_are_skipped() {
        let m = log();
        let msg = Msg::default()
            .uint(9, 12345)
            .message(
                1,
                mapping_of(m.mapping())
                    .raw(&[0x25, 1, 2, 3, 4]) // field 4, fixed32
                    .double(7, 1.0),
            )
            .message(15, Msg::default().uint(1, 1))
            .message(
                2,
                Msg::default()
                    .message(1, entry(m.mapping().index(5.0), 1.0).uint(3, 1))
                    .uint(100, 3),
            );
        let mut s = log();
        assert_eq!(
            decode_into(&msg.0, IndexConvention::GoJava, &mut s)
                .unwrap()
                .added,
            1
        );
    }

    #[test]
    fn malformed_input_is_a_typed_error_and_changes_nothing() {
        let mut s = log();
        s.record(3.0).unwrap();
        let before = s.clone();
        let good = encode_vec(&s, IndexConvention::GoJava);
        let cases: &[(&[u8], DecodeError)] = &[
            (&[], DecodeError::InvalidMapping),
            (&[0x0a], DecodeError::Truncated),
            (&[0x0a, 0x05, 0x09, 0, 0], DecodeError::Truncated),
            (&[0x21, 0, 0], DecodeError::Truncated),
            (
                &[0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x02],
                DecodeError::VarintOverflow,
            ),
            (
                &[
                    0x88, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00,
                ],
                DecodeError::VarintOverflow,
            ),
            (&[0x80, 0x80, 0x80, 0x80, 0x20], DecodeError::VarintOverflow), // tag > u32
            (&[0x00], DecodeError::InvalidFieldNumber),
            (
                &[0x0b],
                DecodeError::WireType {
                    field: 1,
                    wire_type: 3,
                },
            ),
            (
                &[0x0e],
                DecodeError::WireType {
                    field: 1,
                    wire_type: 6,
                },
            ),
            (
                &[0x09, 0, 0, 0, 0, 0, 0, 0, 0],
                DecodeError::WireType {
                    field: 1,
                    wire_type: 1,
                },
            ),
            (
                &[0x20, 0x01],
                DecodeError::WireType {
                    field: 4,
                    wire_type: 0,
                },
            ),
            (&[0x12, 0x03, 0x12, 0x01, 0x00], DecodeError::Truncated), // short packed run
        ];
        for (bytes, want) in cases {
            assert_eq!(
                decode_into(bytes, IndexConvention::GoJava, &mut s),
                Err(*want),
                "{bytes:x?}"
            );
            assert_eq!(s, before);
        }
        // Every prefix of a good message fails or decodes; none panics or half-applies.
        for cut in 0..good.len() {
            let mut t = before.clone();
            if decode_into(&good[..cut], IndexConvention::GoJava, &mut t).is_err() {
                assert_eq!(t, before);
            }
        }
    }

    #[test]
    fn bad_counts_are_errors() {
        let m = log();
        let key = m.mapping().index(10.0);
        for count in [
            -1.0,
            0.5,
            1e10 + 0.5,
            f64::NAN,
            f64::INFINITY,
            -f64::INFINITY,
        ] {
            for store in [
                Msg::default().message(1, entry(key, count)),
                Msg::default().packed(2, &[1.0, count]),
            ] {
                let msg = Msg::default()
                    .message(1, mapping_of(m.mapping()))
                    .message(2, store);
                let mut s = log();
                let err = decode_into(&msg.0, IndexConvention::GoJava, &mut s).unwrap_err();
                assert!(matches!(err, DecodeError::InvalidCount { .. }), "{count}");
                assert!(s.is_empty());
            }
            let zero = Msg::default()
                .message(1, mapping_of(m.mapping()))
                .double(4, count);
            let mut s = log();
            assert!(decode_into(&zero.0, IndexConvention::GoJava, &mut s).is_err());
        }
        // -0.0 is zero.
        let msg = Msg::default()
            .message(1, mapping_of(m.mapping()))
            .message(2, Msg::default().packed(2, &[-0.0]))
            .double(4, -0.0);
        let mut s = log();
        assert_eq!(
            decode_into(&msg.0, IndexConvention::GoJava, &mut s),
            Ok(Decoded::default())
        );
    }

    #[test]
    fn negative_values_are_an_error_unless_empty() {
        let m = log();
        let key = m.mapping().index(10.0);
        let with_negative = |store: Msg| {
            Msg::default()
                .message(1, mapping_of(m.mapping()))
                .message(2, Msg::default().message(1, entry(key, 1.0)))
                .message(3, store)
                .0
        };
        let mut s = log();
        for store in [
            Msg::default().message(1, entry(key, 1.0)),
            Msg::default().packed(2, &[0.0, 2.0]).sint(3, -4),
        ] {
            assert_eq!(
                decode_into(&with_negative(store), IndexConvention::GoJava, &mut s),
                Err(DecodeError::NegativeValues)
            );
            assert!(s.is_empty());
        }
        // An empty negative store, or one of zeros (Python pads its stores), is fine.
        for store in [Msg::default(), Msg::default().packed(2, &[0.0, 0.0])] {
            let mut s = log();
            assert_eq!(
                decode_into(&with_negative(store), IndexConvention::GoJava, &mut s)
                    .unwrap()
                    .added,
                1
            );
        }
    }

    #[test]
    fn out_of_range_bins_are_clamped_and_counted() {
        let mut s = log();
        let m = *s.mapping();
        let below = s.min_index() - 10;
        let above = s.min_index() + 512 + 10;
        let msg = Msg::default().message(1, mapping_of(&m)).message(
            2,
            Msg::default()
                .message(1, entry(below, 2.0))
                .message(1, entry(above, 3.0))
                .message(1, entry(i32::MAX, 1.0))
                .message(1, entry(i32::MIN, 1.0))
                .message(1, entry(s.min_index(), 4.0)),
        );
        let report = decode_into(&msg.0, IndexConvention::GoJava, &mut s).unwrap();
        assert_eq!(report.added, 11);
        assert_eq!(report.below_range, 3);
        assert_eq!(report.above_range, 4);
        assert_eq!(s.zero_count(), 3);
        assert_eq!(s.clamped(), 4);
        assert_eq!(s.count(), 11);
        // Stats: the value of each original bin, or the edge of the range.
        assert_eq!(s.min(), Some(m.value(i32::MIN)));
        assert_eq!(s.max(), Some(m.value(above))); // above max_trackable, stood for i32::MAX
        assert!(s.sum().is_finite());
        // Keys beyond i32 through a large offset shift clamp the same way.
        let shifted = LogMapping::from_gamma_offset(m.gamma(), 4e9).unwrap();
        let msg = Msg::default()
            .message(1, mapping_of(&shifted))
            .message(2, Msg::default().message(1, entry(i32::MIN, 1.0)));
        let mut t = log();
        let report = decode_into(&msg.0, IndexConvention::GoJava, &mut t).unwrap();
        assert_eq!(report.below_range, 1);
        let far = LogMapping::from_gamma_offset(m.gamma(), 1e10).unwrap();
        let msg = Msg::default().message(1, mapping_of(&far));
        assert!(matches!(
            decode_into(&msg.0, IndexConvention::GoJava, &mut t),
            Err(DecodeError::Offset { .. })
        ));
    }

    #[test]
    fn huge_counts_saturate_and_are_counted() {
        let m = log();
        let key = m.mapping().index(10.0);
        let msg = Msg::default()
            .message(1, mapping_of(m.mapping()))
            .message(
                2,
                Msg::default()
                    .message(1, entry(key, 5e9))
                    .message(1, entry(key + 1, 1e15)),
            )
            .double(4, 4294967296.0);
        let mut s = log();
        let report = decode_into(&msg.0, IndexConvention::GoJava, &mut s).unwrap();
        let full = u64::from(u32::MAX);
        assert_eq!(report.added, 3 * full);
        assert_eq!(
            report.saturated,
            (5_000_000_000 - full) + (1_000_000_000_000_000 - full) + 1
        );
        assert_eq!(s.saturated(), report.saturated);
        assert_eq!(s.count(), 3 * full);
        assert_eq!(s.zero_count(), u32::MAX);
    }

    #[test]
    fn decoded_min_max_keep_quantiles_within_alpha() {
        let mut a = log();
        for v in [3.0, 3.0, 10.0, 250.0] {
            a.record(v).unwrap();
        }
        let bytes = encode_vec(&a, IndexConvention::GoJava);
        let mut b = log();
        decode_into(&bytes, IndexConvention::GoJava, &mut b).unwrap();
        for (q, exact) in [(0.0, 3.0), (0.5, 3.0), (0.7, 10.0), (1.0, 250.0)] {
            let got = b.quantile(q).unwrap().unwrap();
            assert!((got - exact).abs() <= 0.01 * exact, "q={q}: {got}");
        }
        // Merged with local values, the exact local extremes still count.
        b.record(1.5).unwrap();
        assert_eq!(b.min(), Some(1.5));
    }

    /// A sketch whose range reaches infinity has bins past the float range, which no
    /// record reaches (`+inf` takes the bin of `f64::MAX`) but a message of its own
    /// mapping fills bin for bin. Its max is then `+inf`, and the scans from the max
    /// started at that value's bin, below those: quantiles near the top counted from the
    /// wrong end (p99 read the min, below the median).
    #[test]
    fn bins_past_the_float_range_are_scanned_from_an_infinite_max() {
        fn check<M: IndexMapping>() {
            let mut s = DDSketch::<M, 2048>::with_relative_accuracy(0.5, 1e-3).unwrap();
            assert_eq!(s.max_trackable(), f64::INFINITY);
            let m = *s.mapping();
            let past = m.index(f64::MAX) + 10;
            assert!(m.lower_bound(past) == f64::INFINITY);
            let msg = Msg::default().message(1, mapping_of(&m)).message(
                2,
                Msg::default()
                    .message(1, entry(m.index(40.0), 10.0))
                    .message(1, entry(past, 90.0)),
            );
            decode_into(&msg.0, IndexConvention::GoJava, &mut s).unwrap();
            assert_eq!((s.count(), s.max()), (100, Some(f64::INFINITY)));
            let mut last = 0.0;
            for q in [0.0, 0.05, 0.5, 0.9, 0.99, 1.0] {
                let v = s.quantile(q).unwrap().unwrap();
                assert!(v >= last, "q={q}: {v} below {last}");
                last = v;
            }
            assert_eq!(s.quantile(0.5).unwrap(), Some(f64::INFINITY));
            assert_eq!(s.rank(f64::MAX), Ok(10));
            assert_eq!(s.rank(f64::INFINITY), Ok(100));
            // Nothing but bins past the float range: the min is infinite too.
            let only = Msg::default()
                .message(1, mapping_of(&m))
                .message(2, Msg::default().message(1, entry(past, 3.0)));
            let mut t = DDSketch::<M, 2048>::with_relative_accuracy(0.5, 1e-3).unwrap();
            decode_into(&only.0, IndexConvention::GoJava, &mut t).unwrap();
            assert_eq!(
                (t.min(), t.max()),
                (Some(f64::INFINITY), Some(f64::INFINITY))
            );
            for q in [0.0, 0.5, 1.0] {
                assert_eq!(t.quantile(q), Ok(Some(f64::INFINITY)), "q={q}");
            }
            assert_eq!((t.rank(f64::MAX), t.rank(f64::INFINITY)), (Ok(0), Ok(3)));
        }
        check::<LogMapping>();
        check::<CubicMapping>();
        check::<IntMapping>();
    }
}
