//! [`otlp_data_point`]: OTLP `ExponentialHistogramDataPoint` messages as OpenTelemetry
//! SDKs and collectors write them, into the caller's buffer.
//!
//! What the writers do was read from the OpenTelemetry SDKs (the Python SDK's
//! `ExponentialBucketHistogramAggregation` and its OTLP exporter, ports of the Go SDK's)
//! and the protobuf rules a collector's re-serialisation follows: fields in number order,
//! proto3 scalars left out when zero (`sum`, `min` and `max` are `optional`: present or
//! absent), the positive `Buckets` always present, its `bucket_counts` packed and padded
//! with empty buckets around the used ones, the negative `Buckets` present and empty
//! when no negative value was seen, `zero_threshold` 0 (the SDKs) or positive (a
//! collector that widened its zero bucket, Prometheus' default `2^-128`). Around that,
//! what a protobuf parser must also accept: fields in any order, scalars repeated (the
//! last wins), `Buckets` split in two (counts concatenated, the last offset wins),
//! unpacked counts, defaults written explicitly, attributes, exemplars, flags and unknown
//! fields.

use arbitrary::{Error, Result, Unstructured};

use super::sketch::otel_scale;
use crate::otlp::message::{
    ATTRIBUTES, BUCKETS_COUNTS, BUCKETS_OFFSET, COUNT, EXEMPLARS, FLAGS, MAX, MIN, NEGATIVE,
    POSITIVE, SCALE, START_TIME, SUM, TIME, ZERO_COUNT, ZERO_THRESHOLD,
};
use crate::otlp::DecodeError;
use crate::sketch::{BinLayout, DDSketch, IndexMapping, OtelMapping};
use crate::wire::{WireType, Writer};

/// Which sketches decode a point [`otlp_data_point`] generated, or why none does.
///
/// ```
/// use arbitrary::Unstructured;
/// use tailguard::fuzzing::{otlp_data_point, OtlpDecodes};
/// use tailguard::otlp;
/// use tailguard::sketch::{DDSketch, OtelMapping};
///
/// let mut buf = [0u8; 4096];
/// for seed in 0..64u8 {
///     let bytes: Vec<u8> = (0..600u32).map(|i| (i * 31 + u32::from(seed) * 97) as u8).collect();
///     let point = otlp_data_point(&mut Unstructured::new(&bytes), &mut buf).unwrap();
///     let mut s = DDSketch::<_, 256>::new(OtelMapping::with_scale(-10).unwrap(), 1e-300).unwrap();
///     let decoded = otlp::decode_into(&buf[..point.len], &mut s);
///     match point.decodes {
///         // Scale -10, the coarsest, takes every point that decodes.
///         OtlpDecodes::Exact(mapping) => {
///             assert_eq!(mapping.scale(), point.scale);
///             assert!(decoded.is_ok());
///         }
///         OtlpDecodes::Refused(_) => assert!(decoded.is_err() && s.is_empty()),
///         _ => {}
///     }
/// }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum OtlpDecodes {
    /// The point's own buckets: [`otlp::decode_into`](crate::otlp::decode_into) decodes
    /// it exactly into a sketch of this mapping or of any coarser scale (see
    /// [`OtlpDataPoint::outcome`]); into one whose range holds its buckets
    /// ([`OtlpDataPoint::sketch_holding`]) bin for bin, without clamping.
    Exact(OtelMapping),
    /// Every sketch refuses it, unchanged.
    Refused(OtlpRefusal),
}

/// Why no sketch decodes a generated point. Each is something a writer does send (or a
/// corrupted relay would); a point has at most one of them.
///
/// ```
/// use arbitrary::Unstructured;
/// use tailguard::fuzzing::{otlp_data_point, OtlpDecodes, OtlpRefusal};
/// use tailguard::otlp::{self, DecodeError};
/// use tailguard::sketch::presets;
///
/// let mut buf = [0u8; 4096];
/// for seed in 0..64u8 {
///     let bytes: Vec<u8> = (0..600u32).map(|i| (i * 31 + u32::from(seed) * 97) as u8).collect();
///     let point = otlp_data_point(&mut Unstructured::new(&bytes), &mut buf).unwrap();
///     let mut s = presets::otel_latency();
///     let decoded = otlp::decode_into(&buf[..point.len], &mut s);
///     match point.decodes {
///         OtlpDecodes::Refused(OtlpRefusal::NegativeValues) => {
///             assert_eq!(decoded.err(), Some(DecodeError::NegativeValues));
///             assert!(point.negative > 0);
///         }
///         OtlpDecodes::Refused(OtlpRefusal::Count) => {
///             assert!(matches!(decoded, Err(DecodeError::Count { .. })));
///             assert_ne!(point.count, point.zero_count + point.positive);
///         }
///         _ => {}
///     }
/// }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum OtlpRefusal {
    /// The negative buckets hold values (any OpenTelemetry histogram of signed data):
    /// [`DecodeError::NegativeValues`].
    NegativeValues,
    /// `count` is not the zero count plus the buckets' counts:
    /// [`DecodeError::Count`].
    Count,
}

/// What [`otlp_data_point`] wrote. Counts are what the message says (those of repeated
/// fields: the last occurrence, as protobuf reads it).
///
/// ```
/// use arbitrary::Unstructured;
/// use tailguard::fuzzing::{otlp_data_point, OtlpDecodes};
/// use tailguard::otlp;
/// use tailguard::sketch::{DDSketch, OtelMapping};
///
/// let mut buf = [0u8; 4096];
/// for seed in 0..64u8 {
///     let bytes: Vec<u8> = (0..600u32).map(|i| (i * 31 + u32::from(seed) * 97) as u8).collect();
///     let point = otlp_data_point(&mut Unstructured::new(&bytes), &mut buf).unwrap();
///     assert!(point.len <= buf.len() && (-10..=20).contains(&point.scale));
///     if let (OtlpDecodes::Exact(mapping), Some((low, high))) = (point.decodes, point.buckets) {
///         assert!(point.offset <= low && low <= high);
///         // At the point's own scale every bucket is a bin: decoded bin for bin.
///         let mut s = DDSketch::<_, 4096>::new(mapping, 1e-300).unwrap();
///         let report = otlp::decode_into(&buf[..point.len], &mut s).unwrap();
///         assert_eq!(report.added + report.saturated, point.count); // saturated: full bins
///         // The point's own min and max, unless values saturated a bin (then estimated).
///         assert_eq!(report.exact_stats, point.exact_stats && report.saturated == 0);
///         if report.exact_stats {
///             assert_eq!((s.min(), s.max()), (point.min, point.max));
///         }
///     }
/// }
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct OtlpDataPoint {
    /// The message is `buf[..len]`.
    pub len: usize,
    /// The scale, in `-10..=20`.
    pub scale: i32,
    /// `count` as written (the sum of the others, unless [`OtlpRefusal::Count`]).
    pub count: u64,
    /// `zero_count`.
    pub zero_count: u64,
    /// `zero_threshold`: 0, or positive.
    pub zero_threshold: f64,
    /// The sum of the positive buckets' counts.
    pub positive: u64,
    /// The sum of the negative buckets' counts (non-zero only with
    /// [`OtlpRefusal::NegativeValues`]).
    pub negative: u64,
    /// The lowest and highest index of a positive bucket with a non-zero count.
    pub buckets: Option<(i32, i32)>,
    /// The positive buckets' `offset` (empty buckets of padding included).
    pub offset: i32,
    /// How many positive `bucket_counts` were written, empty ones included.
    pub bucket_counts: u32,
    /// `sum`, `min` and `max` as written, where present.
    pub sum: Option<f64>,
    /// See [`sum`](Self::sum).
    pub min: Option<f64>,
    /// See [`sum`](Self::sum).
    pub max: Option<f64>,
    /// Whether a sketch the point decodes into takes its `sum`, `min` and `max`
    /// ([`Decoded::exact_stats`](crate::otlp::Decoded::exact_stats)): all three present,
    /// consistent with the buckets, and the point not empty. A decode that drops values
    /// as saturated (a bucket of more than `u32::MAX` in a `DDSketch`) reports
    /// `exact_stats` false even so: its sum is then an estimate.
    pub exact_stats: bool,
    /// Whether it is written as the SDKs' protobuf libraries write it (fields in number
    /// order, once each, zero scalars left out, counts packed), or with what else
    /// protobuf allows (any order, repeats, split buckets, unpacked counts, explicit
    /// defaults, unknown fields).
    pub canonical: bool,
    /// Which sketches decode it exactly, or why none does.
    pub decodes: OtlpDecodes,
}

impl OtlpDataPoint {
    /// What [`otlp::decode_into`](crate::otlp::decode_into) does with the point and a
    /// sketch of `mapping`: `Ok` (exactly: every bucket lands in the bin that contains
    /// it), or the error it returns, leaving the sketch unchanged. A scale finer than the
    /// point's is [`DecodeError::CoarserScale`] unless the point has no positive counts.
    ///
    /// ```
    /// use arbitrary::Unstructured;
    /// use tailguard::fuzzing::otlp_data_point;
    /// use tailguard::otlp;
    /// use tailguard::sketch::{DDSketch, OtelMapping};
    ///
    /// let mut buf = [0u8; 4096];
    /// for seed in 0..16u8 {
    ///     let bytes: Vec<u8> = (0..600u32).map(|i| (i * 31 + u32::from(seed) * 97) as u8).collect();
    ///     let point = otlp_data_point(&mut Unstructured::new(&bytes), &mut buf).unwrap();
    ///     // What it says is what decoding does, at every scale.
    ///     for scale in -10..=20 {
    ///         let mapping = OtelMapping::with_scale(scale).unwrap();
    ///         let mut s = DDSketch::<_, 256>::new(mapping, 1e-300).unwrap();
    ///         let decoded = otlp::decode_into(&buf[..point.len], &mut s).map(|_| ());
    ///         assert_eq!(decoded, point.outcome(&mapping));
    ///     }
    /// }
    /// ```
    pub fn outcome(&self, mapping: &OtelMapping) -> core::result::Result<(), DecodeError> {
        match self.decodes {
            OtlpDecodes::Refused(OtlpRefusal::Count) => Err(DecodeError::Count {
                count: self.count,
                buckets: self.total(),
            }),
            OtlpDecodes::Refused(OtlpRefusal::NegativeValues) => Err(DecodeError::NegativeValues),
            OtlpDecodes::Exact(_) if self.positive > 0 && mapping.scale() > self.scale => {
                Err(DecodeError::CoarserScale {
                    found: self.scale,
                    expected: mapping.scale(),
                })
            }
            OtlpDecodes::Exact(_) => Ok(()),
        }
    }

    /// The zero count plus every bucket count (what a consistent `count` is).
    fn total(&self) -> u64 {
        self.zero_count
            .saturating_add(self.positive)
            .saturating_add(self.negative)
    }

    /// The lowest and highest bin of a sketch of `mapping` that the point's non-zero
    /// buckets fall in (bucket `i` of scale `s + d` is in bin `i >> d` of scale `s`):
    /// `None` without such buckets, or if `mapping` is finer than the point.
    ///
    /// ```
    /// use arbitrary::Unstructured;
    /// use tailguard::fuzzing::{otlp_data_point, OtlpDecodes};
    /// use tailguard::sketch::OtelMapping;
    ///
    /// let mut buf = [0u8; 4096];
    /// for seed in 0..64u8 {
    ///     let bytes: Vec<u8> = (0..600u32).map(|i| (i * 31 + u32::from(seed) * 97) as u8).collect();
    ///     let point = otlp_data_point(&mut Unstructured::new(&bytes), &mut buf).unwrap();
    ///     let OtlpDecodes::Exact(own) = point.decodes else { continue };
    ///     // At its own scale, the buckets themselves; one scale coarser, half the indices.
    ///     assert_eq!(point.bins_at(&own), point.buckets);
    ///     if let (Some((low, high)), Ok(coarser)) = (point.buckets, OtelMapping::with_scale(point.scale - 1)) {
    ///         assert_eq!(point.bins_at(&coarser), Some((low >> 1, high >> 1)));
    ///     }
    ///     // A finer scale than the point's holds none of them.
    ///     if let Ok(finer) = OtelMapping::with_scale(point.scale + 1) {
    ///         assert_eq!(point.bins_at(&finer), None);
    ///     }
    /// }
    /// ```
    pub fn bins_at(&self, mapping: &OtelMapping) -> Option<(i32, i32)> {
        let d = u32::try_from(self.scale.wrapping_sub(mapping.scale())).ok()?; // 0..=30
        self.buckets.map(|(lo, hi)| (lo >> d, hi >> d))
    }

    /// An empty sketch of `mapping` whose range holds every bin the point's buckets fall
    /// in ([`bins_at`](Self::bins_at)), from the lowest: decoding into it clamps nothing.
    /// `None` if they span more than `N` bins or `mapping` is finer than the point's
    /// buckets. (Whether the point decodes is [`outcome`](Self::outcome)'s business.)
    ///
    /// ```
    /// use arbitrary::Unstructured;
    /// use tailguard::fuzzing::{otlp_data_point, OtlpDecodes};
    /// use tailguard::otlp;
    /// use tailguard::sketch::OtelMapping;
    ///
    /// let mut buf = [0u8; 4096];
    /// let point = otlp_data_point(&mut Unstructured::new(&[3; 200]), &mut buf)?;
    /// if let OtlpDecodes::Exact(mapping) = point.decodes {
    ///     let mut s = point.sketch_holding::<8192>(mapping).unwrap();
    ///     let report = otlp::decode_into(&buf[..point.len], &mut s).unwrap();
    ///     assert_eq!((report.below_range, report.above_range), (0, 0));
    /// }
    /// # Ok::<(), arbitrary::Error>(())
    /// ```
    pub fn sketch_holding<const N: usize>(
        &self,
        mapping: OtelMapping,
    ) -> Option<DDSketch<OtelMapping, N>> {
        let min_index = match self.bins_at(&mapping) {
            Some((lo, hi)) => {
                let span = usize::try_from(i64::from(hi).wrapping_sub(i64::from(lo))).ok()?;
                if span >= N {
                    return None;
                }
                lo
            }
            None if self.positive == 0 => 0,
            None => return None,
        };
        let top = i64::from(min_index).saturating_add(i64::try_from(N).ok()?);
        if min_index == i32::MIN || top > i64::from(i32::MAX) {
            return None;
        }
        Some(DDSketch::with_layout(BinLayout::with_min_index(
            mapping, min_index,
        )))
    }
}

/// Buffers shorter than this are refused: a point with no buckets fits in it.
const MIN_BUFFER: usize = 1024;
/// Room kept for everything but the positive counts: the scalars and their repeats,
/// attributes, exemplars, the negative buckets, unknown fields, the length prefixes.
const TAIL: usize = 900;
/// The most bytes one count takes: a tag and a varint of up to 2^40.
const COUNT_BYTES: usize = 7;
/// Buckets from the lowest to the highest non-zero one, at most.
const MAX_RUN: u32 = 4096;
/// Empty buckets either side, at most (the SDKs' default `max_size` is 160).
const MAX_PADDING: u32 = 160;
/// Negative buckets written with [`OtlpRefusal::NegativeValues`], at most.
const MAX_NEGATIVE: usize = 4;
/// The buckets stay within those of `2^-1000 ..= 2^1000`: every one has a finite,
/// normal representative value in it.
const EXTREME_EXPONENT: i32 = 1000;

/// Writes into `buf` an OTLP `ExponentialHistogramDataPoint` drawn from `u`, as an
/// OpenTelemetry SDK or collector writes one, and says what it holds. No heap.
///
/// * **Scale:** any of `-10..=20`, mostly 5 (the preset's) and 0 to 8.
/// * **Positive buckets:** a run of up to 4096 around the bucket of a value (a latency
///   in ns, any value from 1e-9 to 1e12, or any from `2^-1000` to `2^1000`), the first
///   and last non-zero, zeros inside, padded with up to 160 empty buckets either side
///   as the SDKs' bucket arrays are; or none. Counts mostly 1 to 4, some to 1000, some
///   `u32::MAX`, `2^32` or `2^40` (bins saturate).
/// * **Zero bucket:** a zero count (often 0), `zero_threshold` 0 or positive (`2^-128`,
///   `1e-9`, `1e-3`, or the lowest bucket's lower edge; never above it).
/// * **Count:** the zero count plus the buckets' counts; in about one point in sixteen
///   not ([`OtlpRefusal::Count`]).
/// * **Negative buckets:** absent, empty or holding only zeros; in about one point in
///   sixteen holding values ([`OtlpRefusal::NegativeValues`], counted in `count`).
/// * **Sum, min and max:** present (the point's representatives: `min` 0 when there
///   are zeros) or each absent; times present or absent; attributes, exemplars and
///   `flags` the decoder skips.
/// * **Layout:** two points in three canonical, as the SDKs' protobuf libraries write
///   them; the rest in any field order, with unknown fields, repeated scalars (earlier
///   occurrences with other values), the positive buckets split in two messages,
///   unpacked counts, and proto3 defaults written explicitly
///   ([`OtlpDataPoint::canonical`]).
///
/// The run is cut to what fits in `buf`. Errors with
/// [`arbitrary::Error::IncorrectFormat`] if `buf` is shorter than 1024 bytes.
///
/// ```
/// use arbitrary::Unstructured;
/// use tailguard::fuzzing::otlp_data_point;
/// use tailguard::otlp;
/// use tailguard::sketch::presets;
///
/// let bytes: Vec<u8> = (0..512u32).map(|i| (i * 37 % 251) as u8).collect();
/// let mut buf = [0u8; 8192];
/// let point = otlp_data_point(&mut Unstructured::new(&bytes), &mut buf)?;
/// let mut total = presets::otel_latency(); // scale 5, 1 µs to 100 s
/// let before = total.clone();
/// match otlp::decode_into(&buf[..point.len], &mut total) {
///     Ok(report) => {
///         // Every value is added (clamped into the range if outside it) or saturated.
///         let values = point.zero_count + point.positive;
///         assert_eq!(report.added + report.saturated, values);
///     }
///     Err(e) => {
///         assert_eq!(Err(e), point.outcome(total.mapping())); // as predicted
///         assert_eq!(total, before);
///     }
/// }
/// # Ok::<(), arbitrary::Error>(())
/// ```
pub fn otlp_data_point(u: &mut Unstructured<'_>, buf: &mut [u8]) -> Result<OtlpDataPoint> {
    if buf.len() < MIN_BUFFER {
        return Err(Error::IncorrectFormat);
    }
    let room = buf.len().saturating_sub(TAIL) / COUNT_BYTES;
    let plan = Plan::arbitrary(u, u32::try_from(room).unwrap_or(u32::MAX))?;
    let mut out = Writer::new(buf);
    plan.write(&mut out, u)?;
    if !out.fits() {
        return Err(Error::IncorrectFormat); // not expected: TAIL covers the rest
    }
    let len = out.pos();
    Ok(OtlpDataPoint {
        len,
        scale: plan.mapping.scale(),
        count: plan.count,
        zero_count: plan.zero_count,
        zero_threshold: plan.zero_threshold,
        positive: plan.positive,
        negative: plan.negative_total(),
        buckets: plan.buckets,
        offset: plan.offset,
        bucket_counts: plan.bucket_counts(),
        sum: plan.sum,
        min: plan.min,
        max: plan.max,
        exact_stats: plan.exact_stats,
        canonical: plan.canonical,
        decodes: match plan.refusal {
            Some(why) => OtlpDecodes::Refused(why),
            None => OtlpDecodes::Exact(plan.mapping),
        },
    })
}

/// The negative `Buckets`: absent, present and empty, or an offset and counts.
#[derive(Clone, Copy)]
struct Negative {
    present: bool,
    offset: i32,
    counts: [u64; MAX_NEGATIVE],
    len: usize,
}

/// Everything about the point but the positive counts, which are drawn from
/// `count_bytes` whenever they are needed (twice: to total them, then to write them),
/// so that nothing is stored.
struct Plan<'a> {
    mapping: OtelMapping,
    canonical: bool,
    refusal: Option<OtlpRefusal>,
    /// Index of the first written count (padding included), and the padding and run.
    offset: i32,
    lead: u32,
    run: u32,
    trail: u32,
    count_bytes: &'a [u8],
    zero_count: u64,
    zero_threshold: f64,
    negative: Negative,
    times: (u64, u64),
    count: u64,
    positive: u64,
    buckets: Option<(i32, i32)>,
    sum: Option<f64>,
    min: Option<f64>,
    max: Option<f64>,
    exact_stats: bool,
}

/// A float in `[0, 1)` from 32 arbitrary bits.
fn unit(u: &mut Unstructured<'_>) -> Result<f64> {
    Ok(f64::from(u.arbitrary::<u32>()?) / 4_294_967_296.0)
}

/// A log-uniform value between `lo` and `hi`.
fn log_uniform(u: &mut Unstructured<'_>, lo: f64, hi: f64) -> Result<f64> {
    let (a, b) = (libm::log(lo), libm::log(hi));
    Ok(libm::exp(a + (b - a) * unit(u)?))
}

/// The count of bucket `i` of a run of `run`: the first and last non-zero, a quarter
/// of those inside empty. Once `u` is exhausted, every count is 1.
fn run_count(u: &mut Unstructured<'_>, i: u32, run: u32) -> u64 {
    let edge = i == 0 || i.wrapping_add(1) == run; // i < run <= MAX_RUN
    let mut drawn = || -> Result<u64> {
        if !edge && u.int_in_range(0u8..=3)? == 3 {
            return Ok(0);
        }
        Ok(match u.int_in_range(0u8..=31)? {
            0..=23 => u.int_in_range(1..=4)?,
            24..=27 => u.int_in_range(5..=1000)?,
            28 => u64::from(u32::MAX), // a full bin
            29 => 1 << 32,
            30 => u64::from(u.arbitrary::<u32>()?.max(1)),
            _ => 1 << 40,
        })
    };
    drawn().unwrap_or(1)
}

/// A zero count: mostly none, else a few or enough to fill the zero bin.
fn zero_count(u: &mut Unstructured<'_>) -> Result<u64> {
    Ok(match u.int_in_range(0u8..=7)? {
        0..=3 => 0,
        4..=6 => u.int_in_range(1..=1000)?,
        _ => *u.choose(&[u64::from(u32::MAX), 1 << 33])?,
    })
}

impl<'a> Plan<'a> {
    fn arbitrary(u: &mut Unstructured<'a>, room: u32) -> Result<Self> {
        let mapping =
            OtelMapping::with_scale(otel_scale(u)?).map_err(|_| Error::IncorrectFormat)?;
        let canonical = u.ratio(2u8, 3)?;
        // (Exhausted bytes draw 0: an ordinary point.)
        let refusal = match u.int_in_range(0u8..=15)? {
            14 => Some(OtlpRefusal::NegativeValues),
            15 => Some(OtlpRefusal::Count),
            _ => None,
        };

        // The run of buckets, around a value's, within those of 2^-1000 ..= 2^1000.
        let lowest = mapping.index(libm::ldexp(1.0, EXTREME_EXPONENT.wrapping_neg()));
        let highest = mapping.index(libm::ldexp(1.0, EXTREME_EXPONENT));
        let value = match u.int_in_range(0u8..=3)? {
            0 | 1 => log_uniform(u, 1e3, 1e11)?, // 1 µs to 100 s, in ns
            2 => log_uniform(u, 1e-9, 1e12)?,
            _ => log_uniform(u, libm::ldexp(1.0, -EXTREME_EXPONENT), 1e300)?,
        };
        let first = mapping.index(value).clamp(lowest, highest);
        // highest - first + 1 <= 2^31: in i64, then at most MAX_RUN.
        let fits = i64::from(highest)
            .saturating_sub(i64::from(first))
            .saturating_add(1);
        let fits = u32::try_from(fits).unwrap_or(u32::MAX);
        let run = if u.ratio(1u8, 8)? {
            0
        } else {
            u.int_in_range(1..=MAX_RUN)?
        };
        let run = run.min(room).min(fits);
        let mut padding = || -> Result<u32> {
            Ok(if u.ratio(1u8, 2)? {
                u.int_in_range(1..=MAX_PADDING)?
            } else {
                0
            })
        };
        let lead = padding()?.min(room.saturating_sub(run));
        let trail = padding()?.min(room.saturating_sub(run).saturating_sub(lead));
        // first >= lowest >= -2^30 and lead <= 160: no overflow.
        let offset = first.saturating_sub(i32::try_from(lead).unwrap_or(0));
        let take = u
            .len()
            .min(usize::try_from(run).unwrap_or(0).saturating_mul(3));
        let count_bytes = u.bytes(take)?;

        let negative = if refusal == Some(OtlpRefusal::NegativeValues) {
            let mut counts = [0u64; MAX_NEGATIVE];
            let len = u.int_in_range(1..=MAX_NEGATIVE)?;
            for (i, c) in counts.iter_mut().enumerate().take(len) {
                // The first is non-zero: the point does hold negative values.
                *c = u.int_in_range(u64::from(i == 0)..=1000)?;
            }
            Negative {
                present: true,
                offset: u.int_in_range(-2000..=2000)?,
                counts,
                len,
            }
        } else {
            // Absent, empty (the SDKs' exporters), or an offset and empty buckets.
            let kind = u.int_in_range(0u8..=2)?;
            Negative {
                present: kind > 0,
                offset: if kind == 2 {
                    u.int_in_range(-50..=50)?
                } else {
                    0
                },
                counts: [0; MAX_NEGATIVE],
                len: if kind == 2 { 2 } else { 0 },
            }
        };

        let mut plan = Plan {
            mapping,
            canonical,
            refusal,
            offset,
            lead,
            run,
            trail,
            count_bytes,
            zero_count: zero_count(u)?,
            zero_threshold: 0.0,
            negative,
            times: (0, 0),
            count: 0,
            positive: 0,
            buckets: None,
            sum: None,
            min: None,
            max: None,
            exact_stats: false,
        };
        plan.totals();

        plan.zero_threshold = match u.int_in_range(0u8..=7)? {
            0..=5 => 0.0,
            // Prometheus' default, and thresholds a collector might use.
            6 => *u.choose(&[libm::ldexp(1.0, -128), 1e-9, 1e-3])?,
            // The zero bucket widened up to the lowest bucket.
            _ => plan.buckets.map_or(1.0, |(lo, _)| mapping.lower_bound(lo)),
        };
        if let Some((lo, _)) = plan.buckets {
            // Buckets lie above the zero bucket.
            plan.zero_threshold = plan.zero_threshold.min(mapping.lower_bound(lo));
        }

        if u.ratio(7u8, 8)? {
            let start = 1_700_000_000_000_000_000u64
                .saturating_add(u64::from(u.arbitrary::<u32>()?).saturating_mul(1000));
            let time = start.saturating_add(u64::from(u.arbitrary::<u32>()?).saturating_mul(1000));
            plan.times = (start, time);
        }

        let total = plan
            .zero_count
            .saturating_add(plan.positive)
            .saturating_add(plan.negative_total());
        plan.count = if refusal == Some(OtlpRefusal::Count) {
            // Any other count (a relay that dropped or double-counted buckets).
            let delta = match u.int_in_range(0u8..=2)? {
                0 => 1,
                1 => u64::MAX, // one fewer
                _ => u.arbitrary::<u64>()?.max(1),
            };
            total.wrapping_add(delta)
        } else {
            total
        };

        // Sum, min and max of the representatives (min 0 if there are zeros).
        let values = plan.zero_count.saturating_add(plan.positive);
        let (min, max) = match plan.buckets {
            Some((lo, hi)) => (
                if plan.zero_count > 0 {
                    0.0
                } else {
                    mapping.value(lo)
                },
                mapping.value(hi),
            ),
            None => (0.0, 0.0),
        };
        let sum = plan.sum_of_representatives();
        let all = u.ratio(3u8, 4)?;
        let mut present = || -> Result<bool> { Ok(all || u.ratio(1u8, 2)?) };
        plan.sum = present()?.then_some(sum);
        plan.min = present()?.then_some(min);
        plan.max = present()?.then_some(max);
        // The decoder's rule: min in the lowest bin that received values, max in the
        // highest, a non-negative sum (+inf included); representatives are inside their
        // buckets.
        let inside = plan.buckets.is_none_or(|(lo, hi)| {
            (min == 0.0 || mapping.index(min) == lo) && mapping.index(max) == hi
        });
        plan.exact_stats = values > 0
            && inside
            && sum >= 0.0
            && plan.sum.is_some()
            && plan.min.is_some()
            && plan.max.is_some();
        Ok(plan)
    }

    fn bucket_counts(&self) -> u32 {
        // Each is at most MAX_RUN or MAX_PADDING.
        self.lead
            .saturating_add(self.run)
            .saturating_add(self.trail)
    }

    fn negative_total(&self) -> u64 {
        self.negative
            .counts
            .iter()
            .fold(0u64, |a, &c| a.saturating_add(c))
    }

    /// Every written positive count with its bucket index, padding included.
    fn counts(&self) -> impl Iterator<Item = (i32, u64)> + '_ {
        let mut u = Unstructured::new(self.count_bytes);
        (0..self.bucket_counts()).map(move |j| {
            // offset + j is at most the run's last bucket plus the padding: an i32.
            let index = self
                .offset
                .saturating_add(i32::try_from(j).unwrap_or(i32::MAX));
            let count = match j.checked_sub(self.lead) {
                Some(i) if i < self.run => run_count(&mut u, i, self.run),
                _ => 0,
            };
            (index, count)
        })
    }

    /// The positive total and the lowest and highest non-empty bucket.
    fn totals(&mut self) {
        let (mut total, mut buckets) = (0u64, None);
        for (index, count) in self.counts() {
            if count > 0 {
                // At most 4096 counts of at most 2^40: no saturation in practice.
                total = total.saturating_add(count);
                buckets = Some(buckets.map_or((index, index), |(lo, _): (i32, i32)| (lo, index)));
            }
        }
        self.positive = total;
        self.buckets = buckets;
    }

    fn sum_of_representatives(&self) -> f64 {
        self.counts()
            .filter(|&(_, c)| c > 0)
            .map(|(i, c)| self.mapping.value(i) * c as f64)
            .sum()
    }

    /// Writes the point: in number order, or shuffled with repeats and unknown fields.
    fn write(&self, out: &mut Writer<'_>, u: &mut Unstructured<'_>) -> Result<()> {
        let mut order = [
            Item::Attributes,
            Item::StartTime,
            Item::Time,
            Item::Count,
            Item::Sum,
            Item::Scale,
            Item::ZeroCount,
            Item::Positive,
            Item::Negative,
            Item::Flags,
            Item::Exemplars,
            Item::Min,
            Item::Max,
            Item::ZeroThreshold,
            Item::Unknown,
        ];
        let mut split = 0;
        let mut unpacked = false;
        let mut decoys = false;
        if !self.canonical {
            // Fisher-Yates: j <= i < order.len().
            for i in (1..order.len()).rev() {
                let j = u.int_in_range(0..=i)?;
                order.swap(i, j);
            }
            unpacked = u.ratio(1u8, 3)?;
            decoys = u.ratio(1u8, 2)?;
            if decoys {
                self.write_decoys(out, u)?;
                // The first `split` counts in an earlier Buckets, with another offset.
                split = u.int_in_range(0..=self.bucket_counts())?;
                let positive = out.begin(POSITIVE);
                out.sint32_field(BUCKETS_OFFSET, self.offset ^ 0x55);
                self.write_counts(out, 0..split, unpacked);
                out.end(positive);
            }
        }
        for item in order {
            self.write_item(out, u, item, split, unpacked, decoys)?;
        }
        Ok(())
    }

    /// Earlier occurrences of scalars with other values: protobuf keeps the last.
    fn write_decoys(&self, out: &mut Writer<'_>, u: &mut Unstructured<'_>) -> Result<()> {
        out.fixed64_field(COUNT, self.count ^ 0xff);
        out.sint32_field(SCALE, u.int_in_range(-40..=40)?);
        out.fixed64_field(ZERO_COUNT, u.arbitrary()?);
        out.double_field(ZERO_THRESHOLD, 7.0);
        // Only fields written again below: a decoy of an absent one would stay.
        if self.min.is_some() {
            out.double_field(MIN, -1.0);
        }
        if self.max.is_some() {
            out.double_field(MAX, f64::NAN);
        }
        if self.sum.is_some() {
            out.double_field(SUM, -3.5);
        }
        Ok(())
    }

    /// The positive counts from `range` (positions), packed or one field each.
    fn write_counts(&self, out: &mut Writer<'_>, range: core::ops::Range<u32>, unpacked: bool) {
        let counts = self
            .counts()
            .skip(range.start as usize)
            .take(range.len())
            .map(|(_, c)| c);
        if unpacked {
            for c in counts {
                out.varint_field(BUCKETS_COUNTS, c);
            }
        } else if !range.is_empty() {
            let packed = out.begin(BUCKETS_COUNTS);
            for c in counts {
                out.varint(c);
            }
            out.end(packed);
        }
    }

    fn write_item(
        &self,
        out: &mut Writer<'_>,
        u: &mut Unstructured<'_>,
        item: Item,
        split: u32,
        unpacked: bool,
        decoys: bool,
    ) -> Result<()> {
        // Canonical: proto3 leaves zero scalars out; otherwise they may be written, and
        // must be after a decoy (or the decoy's value would stand).
        let explicit = !self.canonical && (decoys || u.ratio(1u8, 2)?);
        let fixed = |out: &mut Writer<'_>, field, v: u64| {
            if v != 0 || explicit {
                out.fixed64_field(field, v);
            }
        };
        match item {
            Item::Attributes => {
                for _ in 0..u.int_in_range(0u8..=2)? {
                    let key = *u.choose(&["service.name", "http.route", "host.name"])?;
                    let value = *u.choose(&["checkout", "/api/v1/orders", "device-17"])?;
                    key_value(out, ATTRIBUTES, key, value);
                }
            }
            Item::StartTime => fixed(out, START_TIME, self.times.0),
            Item::Time => fixed(out, TIME, self.times.1),
            Item::Count => fixed(out, COUNT, self.count),
            Item::Sum => {
                if let Some(sum) = self.sum {
                    out.double_field(SUM, sum);
                }
            }
            Item::Scale => {
                if self.mapping.scale() != 0 || explicit {
                    out.sint32_field(SCALE, self.mapping.scale());
                }
            }
            Item::ZeroCount => fixed(out, ZERO_COUNT, self.zero_count),
            Item::Positive => {
                let positive = out.begin(POSITIVE);
                if self.offset != 0 || !self.canonical {
                    out.sint32_field(BUCKETS_OFFSET, self.offset);
                }
                self.write_counts(out, split..self.bucket_counts(), unpacked);
                out.end(positive);
            }
            Item::Negative => {
                if self.negative.present {
                    let negative = out.begin(NEGATIVE);
                    if self.negative.offset != 0 {
                        out.sint32_field(BUCKETS_OFFSET, self.negative.offset);
                    }
                    if self.negative.len > 0 {
                        let packed = out.begin(BUCKETS_COUNTS);
                        for &c in self.negative.counts.iter().take(self.negative.len) {
                            out.varint(c);
                        }
                        out.end(packed);
                    }
                    out.end(negative);
                }
            }
            Item::Flags => {
                if explicit {
                    out.varint_field(FLAGS, 0); // no flag: the point has values
                }
            }
            Item::Exemplars => {
                for _ in 0..u.int_in_range(0u8..=2)? {
                    let exemplar = out.begin(EXEMPLARS);
                    out.fixed64_field(2, self.times.1); // time_unix_nano
                    out.double_field(3, self.max.unwrap_or(1.0)); // as_double
                    out.bytes_field(4, &u.arbitrary::<[u8; 8]>()?); // span_id
                    out.bytes_field(5, &u.arbitrary::<[u8; 16]>()?); // trace_id
                    key_value(out, 7, "http.method", "GET"); // filtered_attributes
                    out.end(exemplar);
                }
            }
            Item::Min => {
                if let Some(min) = self.min {
                    out.double_field(MIN, min);
                }
            }
            Item::Max => {
                if let Some(max) = self.max {
                    out.double_field(MAX, max);
                }
            }
            Item::ZeroThreshold => {
                if self.zero_threshold != 0.0 || explicit {
                    out.double_field(ZERO_THRESHOLD, self.zero_threshold);
                }
            }
            Item::Unknown => {
                // Fields a newer schema might add, of every wire type but groups.
                if !self.canonical {
                    for _ in 0..u.int_in_range(0u8..=3)? {
                        let field = *u.choose(&[15u32, 16, 99, 2047, 536_870_911])?;
                        match u.int_in_range(0u8..=3)? {
                            0 => out.varint_field(field, u.arbitrary()?),
                            1 => out.fixed64_field(field, u.arbitrary()?),
                            2 => out.bytes_field(field, &u.arbitrary::<[u8; 5]>()?),
                            _ => {
                                out.tag(field, WireType::I32);
                                out.bytes(&u.arbitrary::<[u8; 4]>()?);
                            }
                        }
                    }
                }
            }
        }
        Ok(())
    }
}

/// The data point's fields, in number order.
#[derive(Clone, Copy)]
enum Item {
    Attributes,
    StartTime,
    Time,
    Count,
    Sum,
    Scale,
    ZeroCount,
    Positive,
    Negative,
    Flags,
    Exemplars,
    Min,
    Max,
    ZeroThreshold,
    Unknown,
}

/// A `KeyValue { string key = 1; AnyValue value = 2 { string string_value = 1; } }`.
fn key_value(out: &mut Writer<'_>, field: u32, key: &str, value: &str) {
    let kv = out.begin(field);
    out.bytes_field(1, key.as_bytes());
    let any = out.begin(2);
    out.bytes_field(1, value.as_bytes());
    out.end(any);
    out.end(kv);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fuzzing::test_bytes as bytes;
    use crate::otlp::{decode_into, read_scale};
    use proptest::prelude::{any, proptest, ProptestConfig};
    use std::collections::BTreeSet;
    use std::vec;
    use std::vec::Vec;

    /// Bins enough for any run (4096 buckets) at the point's scale.
    const BINS: usize = 8192;
    type Sketch = DDSketch<OtelMapping, BINS>;

    /// `sketch` after recording the point's buckets' values (each bucket's representative
    /// at the point's scale, `count` times) and its zeros, as records would fill it.
    fn recorded(sketch: &Sketch, point: &OtlpDataPoint, wire_counts: &[(i32, u64)]) -> Sketch {
        let own = OtelMapping::with_scale(point.scale).unwrap();
        let mut s = sketch.clone();
        let mut record = |v: f64, mut n: u64| {
            while n > 0 {
                let chunk = n.min(u64::from(u32::MAX));
                s.record_n(v, chunk as u32).unwrap();
                n -= chunk;
            }
        };
        for &(index, count) in wire_counts {
            let v = own.value(index);
            assert_eq!(own.index(v), index, "representative outside its bucket");
            record(v, count);
        }
        record(0.0, point.zero_count);
        s
    }

    /// What the point's positive buckets hold, read back from the generator's plan.
    fn written_counts(bytes: &[u8]) -> Vec<(i32, u64)> {
        let room = (BUFFER - TAIL) / COUNT_BYTES;
        let plan = Plan::arbitrary(&mut Unstructured::new(bytes), room as u32).unwrap();
        plan.counts().filter(|&(_, c)| c > 0).collect()
    }

    /// Decodes the point into `sketch` (holding a value already) and checks the result
    /// against the report: the predicted error and no change, or the bins recording
    /// its values gives, every value counted once, and the stats the report predicts.
    fn check_into(wire: &[u8], point: &OtlpDataPoint, sketch: Sketch, counts: &[(i32, u64)]) {
        let mut s = sketch.clone();
        s.record(3.0).unwrap();
        let before = s.clone();
        let result = decode_into(wire, &mut s);
        let expected = point.outcome(s.mapping());
        let Ok(report) = result else {
            assert_eq!(result.map(|_| ()), expected);
            assert_eq!(s, before, "a refusal changed the sketch");
            return;
        };
        assert_eq!(expected, Ok(()), "decoded, but {expected:?} was predicted");
        let want = recorded(&before, point, counts);
        assert!(
            s.bins().eq(want.bins()),
            "bins differ at scale {}",
            s.mapping().scale()
        );
        assert_eq!(
            (s.zero_count(), s.count(), s.saturated(), s.clamped()),
            (
                want.zero_count(),
                want.count(),
                want.saturated(),
                want.clamped()
            )
        );
        assert_eq!(
            report.added + report.saturated,
            point.zero_count + point.positive
        );
        assert_eq!(report.scale, point.scale);
        // Values dropped as saturated make the sum an estimate (see `Decoded`).
        assert_eq!(
            report.exact_stats,
            point.exact_stats && report.saturated == 0
        );
        let wide = point.zero_count > 0 && point.zero_threshold >= s.min_trackable();
        assert!(report.wide_zero == 0 || wide);
        assert!(report.wide_zero > 0 || !wide || report.saturated > 0);
        // Into an empty sketch: the point's own stats when predicted.
        if point.exact_stats {
            let mut fresh = sketch.clone();
            let report = decode_into(wire, &mut fresh).unwrap();
            assert_eq!((fresh.min(), fresh.max()), (point.min, point.max));
            if report.saturated == 0 {
                assert_eq!(Some(fresh.sum()), point.sum);
            } else {
                assert!(point.sum.is_some_and(|sum| fresh.sum() <= sum));
            }
        }
    }

    /// The buffer the tests generate into.
    const BUFFER: usize = 40_000;

    fn check(bytes: &[u8]) -> OtlpDataPoint {
        let mut buf = vec![0u8; BUFFER];
        let point = otlp_data_point(&mut Unstructured::new(bytes), &mut buf).unwrap();
        let wire = &buf[..point.len];
        let counts = written_counts(bytes);
        assert_eq!(counts.iter().map(|c| c.1).sum::<u64>(), point.positive);
        assert_eq!(
            (counts.first().map(|c| c.0), counts.last().map(|c| c.0)),
            (point.buckets.map(|b| b.0), point.buckets.map(|b| b.1))
        );
        match point.decodes {
            OtlpDecodes::Refused(OtlpRefusal::Count) => {
                assert!(matches!(read_scale(wire), Err(DecodeError::Count { .. })))
            }
            _ => assert_eq!(read_scale(wire), Ok(point.scale)),
        }
        // Its own scale and coarser ones, ranges holding it; a finer one; the preset's
        // narrow range (clamping); scale 0 from 1.
        let scale = point.scale;
        let mut scales: Vec<i32> = vec![scale, scale - 1, scale - 3, scale + 1, 5];
        scales.retain(|s| (OtelMapping::MIN_SCALE..=OtelMapping::MAX_SCALE).contains(s));
        for target in scales {
            let m = OtelMapping::with_scale(target).unwrap();
            let holding = point.sketch_holding::<BINS>(m);
            if let (Some(h), Some((lo, hi))) = (&holding, point.bins_at(&m)) {
                assert_eq!(h.min_index(), lo);
                assert!(hi < h.min_index() + BINS as i32);
            }
            let sketch = holding.unwrap_or_else(|| Sketch::new(m, 1.0).unwrap());
            check_into(wire, &point, sketch, &counts);
        }
        let narrow =
            DDSketch::<OtelMapping, BINS>::new(OtelMapping::with_scale(scale).unwrap(), 1e3)
                .unwrap();
        check_into(wire, &point, narrow, &counts);
        point
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn generated_points_decode_as_they_say(bytes in proptest::collection::vec(any::<u8>(), 0..6000)) {
            check(&bytes);
        }
    }

    #[test]
    fn every_kind_of_point_is_generated() {
        let mut seen = BTreeSet::new();
        let coarse = OtelMapping::with_scale(OtelMapping::MIN_SCALE).unwrap();
        let fine = OtelMapping::with_scale(OtelMapping::MAX_SCALE).unwrap();
        for seed in 0..1500 {
            let data = bytes(seed, 1500);
            let mut buf = [0u8; 8192];
            let p = otlp_data_point(&mut Unstructured::new(&data), &mut buf).unwrap();
            let mut kinds = vec![
                match p.decodes {
                    OtlpDecodes::Exact(_) => "exact",
                    OtlpDecodes::Refused(OtlpRefusal::NegativeValues) => "negative values",
                    OtlpDecodes::Refused(OtlpRefusal::Count) => "inconsistent count",
                },
                if p.canonical {
                    "canonical"
                } else {
                    "any layout"
                },
                if p.exact_stats {
                    "exact stats"
                } else {
                    "stats from buckets"
                },
            ];
            if let Some((lo, hi)) = p.buckets {
                if p.offset < lo {
                    kinds.push("leading zeros");
                }
                if i64::from(p.offset) + i64::from(p.bucket_counts) - 1 > i64::from(hi) {
                    kinds.push("trailing zeros");
                }
            } else {
                kinds.push(if p.zero_count > 0 {
                    "only zeros"
                } else {
                    "empty"
                });
            }
            if p.zero_threshold > 0.0 {
                kinds.push("positive zero threshold");
            }
            if p.positive > u64::from(u32::MAX) {
                kinds.push("saturating");
            }
            if matches!(p.outcome(&fine), Err(DecodeError::CoarserScale { .. })) {
                kinds.push("coarser than a sketch");
            }
            if p.outcome(&coarse).is_ok() && p.scale > OtelMapping::MIN_SCALE {
                kinds.push("finer than a sketch");
            }
            if p.sum.is_none() || p.min.is_none() || p.max.is_none() {
                kinds.push("stats absent");
            }
            kinds.push(match p.scale {
                -10 => "scale -10",
                20 => "scale 20",
                5 => "scale 5",
                -9..=-1 => "negative scale",
                0..=8 => "scale 0..8",
                _ => "scale 9..19",
            });
            seen.extend(kinds);
        }
        for want in [
            "exact",
            "negative values",
            "inconsistent count",
            "canonical",
            "any layout",
            "exact stats",
            "stats from buckets",
            "stats absent",
            "leading zeros",
            "trailing zeros",
            "only zeros",
            "empty",
            "positive zero threshold",
            "saturating",
            "coarser than a sketch",
            "finer than a sketch",
            "scale -10",
            "scale 20",
            "scale 5",
            "negative scale",
            "scale 0..8",
            "scale 9..19",
        ] {
            assert!(seen.contains(want), "{want} never generated: {seen:?}");
        }
    }

    #[test]
    fn a_small_buffer_is_refused_and_runs_are_cut_to_fit() {
        let mut tiny = [0u8; MIN_BUFFER - 1];
        assert!(otlp_data_point(&mut Unstructured::new(&[0xa5; 4096]), &mut tiny).is_err());
        for seed in 0..200 {
            let data = bytes(seed, 3000);
            for len in [MIN_BUFFER, 1500, 4000] {
                let mut buf = vec![0u8; len];
                let p = otlp_data_point(&mut Unstructured::new(&data), &mut buf).unwrap();
                assert!(p.len <= len);
                assert!(p.bucket_counts as usize <= (len - TAIL) / COUNT_BYTES);
                assert_eq!(
                    read_scale(&buf[..p.len]).is_ok(),
                    p.decodes != OtlpDecodes::Refused(OtlpRefusal::Count)
                );
            }
        }
    }

    #[test]
    fn no_bytes_give_an_empty_canonical_point() {
        let mut buf = [0u8; MIN_BUFFER];
        let p = otlp_data_point(&mut Unstructured::new(&[]), &mut buf).unwrap();
        assert_eq!((p.count, p.zero_count, p.positive), (0, 0, 0));
        let mut s = Sketch::new(OtelMapping::with_scale(p.scale).unwrap(), 1.0).unwrap();
        assert_eq!(decode_into(&buf[..p.len], &mut s).unwrap().added, 0);
    }
}
