//! [`Arbitrary`] for the index mappings, [`BinLayout`] and [`DDSketch`]: every value is
//! one the public API can build, so a fuzz target's failures are its own, never an
//! impossible sketch's.
//!
//! A sketch is filled the way sketches are filled: by records (into arbitrary bins, the
//! zero bin and above the range, through the float and the integer paths, of counts up
//! to `u32::MAX` at once) and by merges (of the sketch with itself), so every invariant
//! the sketch keeps holds, and saturated bins, clamped values and merged sums past
//! `u64::MAX` are all reachable.

use arbitrary::{Arbitrary, Error, Result, Unstructured};

use crate::sketch::presets::{MIN_LATENCY_NS, OTEL_LATENCY_SCALE};
use crate::sketch::{
    BinLayout, CubicMapping, DDSketch, IndexMapping, IntMapping, LogMapping, OtelMapping,
};

/// Accuracies the libraries and the presets use, drawn more often than the rest.
const COMMON_ACCURACIES: [f64; 6] = [0.01, 0.02, 0.005, 0.05, 0.001, 0.0078];

/// The accuracies drawn otherwise: log-uniform between these. Finer ones are valid too,
/// but their indices leave few sketches a range that fits an `i32`.
const FINEST_ACCURACY: f64 = 1e-6;
const COARSEST_ACCURACY: f64 = 0.5;

/// The largest `|indexOffset|` drawn for a mapping built from DataDog's parameters: as
/// far as any library shifts keys (Go's `LINEAR` shifts them by its multiplier).
const MAX_OFFSET: f64 = 1e6;

/// Records (or merges) per sketch, at most: enough to fill any bin many times over.
const MAX_OPS: usize = 4096;

/// A float in `[0, 1)` from 32 arbitrary bits.
fn unit(u: &mut Unstructured<'_>) -> Result<f64> {
    Ok(f64::from(u32::arbitrary(u)?) / 4_294_967_296.0)
}

/// A relative accuracy: a common one, or any in `[FINEST_ACCURACY, COARSEST_ACCURACY]`.
fn accuracy(u: &mut Unstructured<'_>) -> Result<f64> {
    if u.ratio(1u8, 2)? {
        return u.choose(&COMMON_ACCURACIES).copied();
    }
    let (lo, hi) = (libm::log(FINEST_ACCURACY), libm::log(COARSEST_ACCURACY));
    Ok(libm::exp(lo + (hi - lo) * unit(u)?).clamp(FINEST_ACCURACY, COARSEST_ACCURACY))
}

/// An `indexOffset`: mostly 0 (every library's default), else whole or fractional.
fn index_offset(u: &mut Unstructured<'_>) -> Result<f64> {
    Ok(match u.int_in_range(0u8..=3)? {
        0 | 1 => 0.0,
        2 => f64::from(u.int_in_range(-1_000_000i32..=1_000_000)?),
        _ => (unit(u)? * 2.0 - 1.0) * MAX_OFFSET,
    })
}

/// Which of its constructors a log-like mapping is built with.
enum LogLike {
    /// `with_relative_accuracy(alpha)` (the presets' is 0.01).
    Accuracy(f64),
    /// `from_gamma_offset(gamma, offset)`: DataDog's parameters, as a decoded message
    /// gives them.
    GammaOffset(f64, f64),
}

impl LogLike {
    fn arbitrary(u: &mut Unstructured<'_>, gamma_of: fn(f64) -> f64) -> Result<Self> {
        let alpha = accuracy(u)?;
        if u.ratio(1u8, 4)? {
            Ok(LogLike::GammaOffset(gamma_of(alpha), index_offset(u)?))
        } else {
            Ok(LogLike::Accuracy(alpha))
        }
    }
}

// Each mapping type: its constructors, with the parameters they accept. A new mapping
// type gets an impl like these (and `DDSketch` and `BinLayout` then have one for it).

impl<'a> Arbitrary<'a> for LogMapping {
    /// `with_relative_accuracy` of a common or any accuracy, or `from_gamma_offset` with
    /// its gamma and an offset.
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        let made = match LogLike::arbitrary(u, |alpha| (1.0 + alpha) / (1.0 - alpha))? {
            LogLike::Accuracy(alpha) => LogMapping::with_relative_accuracy(alpha),
            LogLike::GammaOffset(gamma, offset) => LogMapping::from_gamma_offset(gamma, offset),
        };
        made.map_err(|_| Error::IncorrectFormat) // every parameter drawn is valid
    }
}

impl<'a> Arbitrary<'a> for CubicMapping {
    /// As for [`LogMapping`], with the cubic mapping's gamma.
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        let gamma_of = |alpha: f64| {
            let exact = (1.0 + alpha) / (1.0 - alpha);
            libm::pow(exact, 10.0 * core::f64::consts::LN_2 / 7.0)
        };
        let made = match LogLike::arbitrary(u, gamma_of)? {
            LogLike::Accuracy(alpha) => CubicMapping::with_relative_accuracy(alpha),
            LogLike::GammaOffset(gamma, offset) => CubicMapping::from_gamma_offset(gamma, offset),
        };
        made.map_err(|_| Error::IncorrectFormat) // every parameter drawn is valid
    }
}

impl<'a> Arbitrary<'a> for IntMapping {
    /// Mostly the presets' `k` (5 and 6) and 7, else any `k` from 0 to 20.
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        if u.ratio(3u8, 4)? {
            return u
                .choose(&[IntMapping::K5, IntMapping::K6, IntMapping::K7])
                .copied();
        }
        IntMapping::with_mantissa_bits(u.int_in_range(0..=20)?).map_err(|_| Error::IncorrectFormat)
    }
}

/// An OpenTelemetry scale: mostly the preset's (5) or one of 0 to 8 (the scales SDKs
/// settle on for latencies, and those `tests/otel_interop.rs` checks), else any of
/// OpenTelemetry's `-10..=20`.
pub(super) fn otel_scale(u: &mut Unstructured<'_>) -> Result<i32> {
    Ok(match u.int_in_range(0u8..=3)? {
        0 => OTEL_LATENCY_SCALE,
        1 | 2 => u.int_in_range(0..=8)?,
        _ => u.int_in_range(OtelMapping::MIN_SCALE..=OtelMapping::MAX_SCALE)?,
    })
}

impl<'a> Arbitrary<'a> for OtelMapping {
    /// Any scale from -10 to 20, mostly the preset's 5 and 0 to 8.
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        OtelMapping::with_scale(otel_scale(u)?).map_err(|_| Error::IncorrectFormat)
        // valid
    }
}

impl<'a, M: IndexMapping + Arbitrary<'a>, const N: usize> Arbitrary<'a> for BinLayout<M, N> {
    /// An arbitrary mapping, and a range from the presets' smallest value (1 µs in ns),
    /// from 1, or from any positive normal float whose range fits the `i32` indices.
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        let mapping = M::arbitrary(u)?;
        let min_value = match u.int_in_range(0u8..=3)? {
            0 => MIN_LATENCY_NS,
            1 => 1.0,
            // Any exponent (1..=2046: normal), any mantissa.
            _ => {
                let exponent = u64::from(u.int_in_range(1u16..=2046)?);
                let mantissa = u64::arbitrary(u)? & ((1 << 52) - 1);
                f64::from_bits(exponent << 52 | mantissa)
            }
        };
        // Near the ends of the float range the bins can run past `i32::MAX`: then the
        // range starts at 1, which any sketch that fits in memory can have.
        BinLayout::new(mapping, min_value)
            .or_else(|_| BinLayout::new(mapping, 1.0))
            .map_err(|_| Error::IncorrectFormat)
    }
}

impl<'a, M: IndexMapping + Arbitrary<'a>, const N: usize> Arbitrary<'a> for DDSketch<M, N> {
    /// An arbitrary [`BinLayout`], filled by
    /// [`arbitrary_with_layout`](DDSketch::arbitrary_with_layout).
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        let layout = BinLayout::arbitrary(u)?;
        Self::arbitrary_with_layout(u, layout)
    }
}

impl<M: IndexMapping, const N: usize> DDSketch<M, N> {
    /// A sketch of `layout` filled from `u`, so that sketches of one layout (and so
    /// mergeable) can be drawn. Each step, while `u` has bytes (at most 4096 steps):
    ///
    /// * a record of a value in an arbitrary bin (or at its edge, so in a neighbour),
    ///   through [`record_n`](Self::record_n) or [`record_u64_n`](Self::record_u64_n);
    /// * a record into the zero bin (zero, `-0.0`, a value below the range);
    /// * a record above the range (`+inf`, a large value, `u64::MAX`): clamped;
    /// * a record of any `f64` bit pattern (NaN and negatives are refused, as always);
    /// * a merge of the sketch with itself (twice every count: saturation comes fast).
    ///
    /// Counts per record are mostly 1 to 4, sometimes any `u32`, or `u32::MAX`; a bin
    /// that would pass `u32::MAX` saturates, as it does in use.
    ///
    /// ```
    /// use arbitrary::Unstructured;
    /// use tailguard::sketch::presets;
    ///
    /// let mut u = Unstructured::new(&[7; 64]);
    /// let s = presets::LogLatency::arbitrary_with_layout(&mut u, presets::log_latency().layout())?;
    /// assert!(presets::log_latency().check_compatible(&s).is_ok());
    /// # Ok::<(), arbitrary::Error>(())
    /// ```
    #[cfg_attr(docsrs, doc(cfg(feature = "arbitrary")))]
    pub fn arbitrary_with_layout(
        u: &mut Unstructured<'_>,
        layout: BinLayout<M, N>,
    ) -> Result<Self> {
        let mut sketch = Self::with_layout(layout);
        let mut ops = 0;
        while !u.is_empty() && ops < MAX_OPS {
            ops = ops.wrapping_add(1); // below MAX_OPS
            sketch.arbitrary_step(u)?;
        }
        Ok(sketch)
    }

    /// One record or merge of [`arbitrary_with_layout`](Self::arbitrary_with_layout).
    fn arbitrary_step(&mut self, u: &mut Unstructured<'_>) -> Result<()> {
        let n = arbitrary_count(u)?;
        let integer = u.ratio(1u8, 3)?;
        // Refused values (NaN, negative) change nothing: that is part of what is drawn.
        let _ = match u.int_in_range(0u8..=15)? {
            0..=9 => {
                let pos = u.choose_index(N)?;
                // pos < N < i32::MAX, and the layout's indices fit in an i32.
                let index = self.min_index().saturating_add(pos as i32);
                let mapping = *self.mapping();
                // Within alpha of the bin's representative: in the bin, or at its edge.
                let jitter = 1.0 + mapping.relative_accuracy() * (2.0 * unit(u)? - 1.0);
                let value = mapping.value(index) * jitter;
                // Values from 1 to u64::MAX also go through the integer path.
                if integer && (1.0..18_446_744_073_709_551_616.0).contains(&value) {
                    self.record_u64_n(value as u64, n);
                    Ok(())
                } else {
                    self.record_n(value, n)
                }
            }
            10 => match u.int_in_range(0u8..=3)? {
                0 => {
                    self.record_u64_n(0, n);
                    Ok(())
                }
                1 => self.record_n(-0.0, n),
                2 => self.record_n(0.0, n),
                // Below the range: some fraction of its smallest value (zero included).
                _ => self.record_n(self.min_trackable() * unit(u)?, n),
            },
            11 => match u.int_in_range(0u8..=2)? {
                0 => self.record_n(f64::INFINITY, n),
                1 => {
                    self.record_u64_n(u64::MAX, n);
                    Ok(())
                }
                // From the end of the range to a thousand times it (+inf past f64::MAX).
                _ => self.record_n(self.max_trackable() * (1.0 + 1e3 * unit(u)?), n),
            },
            12 => self.record_n(f64::from_bits(u64::arbitrary(u)?), n),
            13 => {
                let copy = self.clone();
                self.merge(&copy).map_err(|_| Error::IncorrectFormat)?; // same layout
                Ok(())
            }
            _ => {
                let value = u64::arbitrary(u)?;
                self.record_u64_n(value, n);
                Ok(())
            }
        };
        Ok(())
    }
}

/// How many values one record adds: mostly a few, sometimes enough to fill a bin.
fn arbitrary_count(u: &mut Unstructured<'_>) -> Result<u32> {
    Ok(match u.int_in_range(0u8..=15)? {
        0..=11 => u.int_in_range(1..=4)?,
        12 => 0,
        13 => u32::MAX,
        14 => u32::MAX.wrapping_sub(u.int_in_range(0..=3)?),
        _ => u32::arbitrary(u)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fuzzing::test_bytes as bytes;
    use crate::otlp;
    use crate::proto::{self, IndexConvention};
    use crate::sketch::presets;
    use proptest::prelude::{any, proptest, ProptestConfig};
    use std::vec;

    /// Everything a sketch built by records and merges satisfies, through its public API.
    fn assert_valid<M: IndexMapping, const N: usize>(s: &DDSketch<M, N>) {
        let bins: u64 = s.bins().map(|b| u64::from(b.count)).sum();
        assert_eq!(s.count(), u64::from(s.zero_count()) + bins);
        let top = s.min_index() + (N as i32 - 1);
        let top_count = s
            .bins()
            .last()
            .filter(|b| b.index == top)
            .map_or(0, |b| b.count);
        assert!(s.clamped() <= u64::from(top_count));
        if s.is_empty() {
            assert_eq!((s.min(), s.max(), s.quantile(0.5)), (None, None, Ok(None)));
        } else {
            let (min, max) = (s.min().unwrap(), s.max().unwrap());
            assert!(0.0 <= min && min <= max, "{min} {max}");
            // +inf enters as the end of the range: infinite only if the range is.
            assert!(max.is_finite() || s.max_trackable() == f64::INFINITY);
            // The exact min and max bound the bins (the quantile scan relies on it).
            let m = s.mapping();
            if let (Some(lo), true) = (s.bins().next(), min > 0.0) {
                // (A min above the range is clamped into the top bin.)
                assert!(lo.index >= m.index(min).min(top).saturating_sub(1), "{s:?}");
            }
            if let Some(hi) = s.bins().last() {
                assert!(hi.index <= m.index(max).saturating_add(1), "{s:?}");
            }
            let mut last = min;
            for q in [0.0, 0.01, 0.25, 0.5, 0.9, 0.999, 1.0] {
                let v = s.quantile(q).unwrap().unwrap();
                assert!(last <= v && v <= max, "q={q}: {v} after {last}");
                last = v;
            }
            assert_eq!(s.quantile(0.0), Ok(Some(min)));
            assert_eq!(s.quantile(1.0), Ok(Some(max)));
        }
        // It merges: into an empty sketch of its layout, as itself; with itself,
        // conserving every value (in a bin or as saturated).
        let mut copy = DDSketch::<M, N>::with_layout(s.layout());
        copy.merge(s).unwrap();
        assert!(copy == *s);
        copy.merge(s).unwrap();
        let all = |t: &DDSketch<M, N>| u128::from(t.count()) + u128::from(t.saturated());
        // `saturated` stops at u64::MAX (an arbitrary sketch, merged into itself over and
        // over, can get there): past it, the dropped values are undercounted.
        let ceiling = u128::from(copy.count()) + u128::from(u64::MAX);
        assert_eq!(all(&copy), (2 * all(s)).min(ceiling));
        // It encodes, and decodes back bin for bin, in either convention. (Not at
        // OpenTelemetry's scale -10, whose gamma 2^1024 no DDSketch message can carry.)
        let conventions = if s.mapping().gamma().is_finite() {
            &[IndexConvention::GoJava, IndexConvention::Python][..]
        } else {
            &[]
        };
        for &convention in conventions {
            let mut buf = vec![0u8; proto::encoded_len(s, convention)];
            proto::encode(s, convention, &mut buf).unwrap();
            let mut back = DDSketch::<M, N>::with_layout(s.layout());
            let report = proto::decode_into(&buf, convention, &mut back).unwrap();
            assert_eq!((report.added, report.saturated), (s.count(), 0));
            assert!(back.bins().eq(s.bins()));
            assert_eq!(back.zero_count(), s.zero_count());
        }
    }

    /// An OpenTelemetry sketch also travels as an OTLP data point, bin for bin.
    fn assert_otlp_round_trip<const N: usize>(s: &DDSketch<OtelMapping, N>) {
        let times = otlp::Timestamps::new(1, 2);
        let mut buf = vec![0u8; otlp::encoded_len(s, times)];
        otlp::encode(s, times, &mut buf).unwrap();
        let mut back = DDSketch::<OtelMapping, N>::with_layout(s.layout());
        let report = otlp::decode_into(&buf, &mut back).unwrap();
        assert_eq!((report.added, report.saturated), (s.count(), 0));
        assert!(back.bins().eq(s.bins()));
        assert_eq!(back.zero_count(), s.zero_count());
    }

    fn arbitrary_of<'a, T: Arbitrary<'a>>(bytes: &'a [u8]) -> T {
        T::arbitrary(&mut Unstructured::new(bytes)).unwrap()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        #[test]
        fn arbitrary_sketches_are_valid(bytes in proptest::collection::vec(any::<u8>(), 0..3000)) {
            assert_valid(&arbitrary_of::<DDSketch<LogMapping, 64>>(&bytes));
            assert_valid(&arbitrary_of::<DDSketch<CubicMapping, 512>>(&bytes));
            assert_valid(&arbitrary_of::<DDSketch<IntMapping, 2048>>(&bytes));
            let otel = arbitrary_of::<DDSketch<OtelMapping, 1024>>(&bytes);
            assert_valid(&otel);
            assert_otlp_round_trip(&otel);
            let otel = arbitrary_of::<presets::OtelLatency>(&bytes);
            assert_valid(&otel);
            assert_otlp_round_trip(&otel);
            assert_valid(&arbitrary_of::<presets::LogLatency>(&bytes));
            let layout = presets::int_latency().layout();
            let s = presets::IntLatency::arbitrary_with_layout(&mut Unstructured::new(&bytes), layout).unwrap();
            assert!(presets::int_latency().check_compatible(&s).is_ok());
            assert_valid(&s);
        }
    }

    #[test]
    fn presets_saturation_clamping_and_zero_bins_are_all_drawn() {
        let (mut preset, mut saturated, mut full, mut clamped, mut zero, mut offset) =
            (false, false, false, false, false, false);
        let mut scales = std::collections::BTreeSet::new();
        for seed in 0..400 {
            let data = bytes(seed, 2000);
            let s = arbitrary_of::<presets::CubicLatency>(&data);
            preset |= presets::cubic_latency().check_compatible(&s).is_ok();
            saturated |= s.saturated() > 0;
            full |= s.bins().any(|b| b.count == u32::MAX);
            clamped |= s.clamped() > 0;
            zero |= s.zero_count() > 0;
            offset |= s.mapping().index_offset() != 0.0;
            let int = arbitrary_of::<DDSketch<IntMapping, 256>>(&data);
            assert_valid(&int);
            let otel = arbitrary_of::<DDSketch<OtelMapping, 256>>(&data);
            assert_valid(&otel);
            scales.insert(otel.mapping().scale());
        }
        assert!(preset && saturated && full && clamped && zero && offset);
        // Both ends of OpenTelemetry's scales, the preset's and 0 to 8.
        for scale in [-10, 0, 1, 2, 3, 4, 5, 6, 7, 8, 20] {
            assert!(
                scales.contains(&scale),
                "scale {scale} never drawn: {scales:?}"
            );
        }
    }

    #[test]
    fn no_bytes_give_an_empty_sketch() {
        let s = arbitrary_of::<presets::LogLatency>(&[]);
        assert!(s.is_empty());
        assert_valid(&s);
    }
}
