//! [`OtelMapping`]: bins that are OpenTelemetry's exponential-histogram buckets.

use super::bits::{EXPONENT_BIAS, MANTISSA_BITS, MANTISSA_MASK};
use super::index_mapping::{IndexMapping, Interpolation};
use super::int::GAMMA_BITS;
use crate::sketch::error::ConfigError;

/// The exponent of the smallest normal float, `f64::MIN_POSITIVE = 2^-1022`.
const MIN_NORMAL_EXPONENT: i32 = -1022;
/// The exponent of the largest finite float.
const MAX_NORMAL_EXPONENT: i32 = 1023;
/// `1 / ln 2`, rounded once: the SDKs' `1 / log(2)`, whose `log(2)` is `LN_2` to the bit.
const INV_LN_2: f64 = 1.0 / core::f64::consts::LN_2;

/// `OtelMapping::accuracy_of_scale(scale)` for scales `-10..=20`, as bits.
const ACCURACY_BITS: [u64; 31] = [
    0x3ff0_0000_0000_0000,
    0x3ff0_0000_0000_0000,
    0x3ff0_0000_0000_0000,
    0x3ff0_0000_0000_0000,
    0x3ff0_0000_0000_0000,
    0x3fef_ffff_ffc0_0000,
    0x3fef_ffc0_003f_ffc0,
    0x3fef_c03f_c03f_c040,
    0x3fec_3c3c_3c3c_3c3c,
    0x3fe3_3333_3333_3333,
    0x3fd5_5555_5555_5555,
    0x3fc5_f619_980c_4337,
    0x3fb6_2018_5e56_2140,
    0x3fa6_2ab6_4c81_62a8,
    0x3f96_2d5f_b19f_39d2,
    0x3f86_2e0a_2997_4dc5,
    0x3f76_2e34_c980_baa4,
    0x3f66_2e3f_7199_cdd2,
    0x3f56_2e42_1ba1_fe23,
    0x3f46_2e42_c624_28ef,
    0x3f36_2e42_f0c4_b58f,
    0x3f26_2e42_fb6c_d8d5,
    0x3f16_2e42_fe16_e1a8,
    0x3f06_2e42_fec1_63dd,
    0x3ef6_2e42_feec_046a,
    0x3ee6_2e42_fef6_ac8d,
    0x3ed6_2e42_fef9_5697,
    0x3ec6_2e42_fefa_0119,
    0x3eb6_2e42_fefa_2bba,
    0x3ea6_2e42_fefa_3662,
    0x3e96_2e42_fefa_390c,
];

/// An index mapping whose bins **are** OpenTelemetry's base-2 exponential-histogram
/// buckets at a `scale`: base `b = 2^(2^-scale)`, bin `i` holds `(b^i, b^(i+1)]`
/// (upper-inclusive), so a sketch of this mapping encodes as an OTLP
/// `ExponentialHistogramDataPoint` ([`otlp`](crate::otlp)) with nothing re-binned.
///
/// The index is the one OpenTelemetry's SDKs compute (the Python SDK's
/// `ExponentMapping` and `LogarithmMapping`, themselves ports of the Go SDK's):
///
/// * scale `<= 0`: pure bit arithmetic on the float, `(exponent - [v is a power of two])
///   >> -scale`;
/// * scale `> 0`: `floor(ln(v) * 2^scale / ln 2)`, with exact powers of two special-cased
///   to `(exponent << scale) - 1` (their bucket's upper edge);
/// * positive values up to `f64::MIN_POSITIVE` (subnormals) share the SDKs' lowest
///   bucket, `+inf` their highest; zero is `i32::MIN` (the sketch's zero bin). That
///   lowest bucket is not within alpha of its subnormals: a sketch whose range starts
///   above it counts them as zeros, as every mapping does.
///
/// `tests/otel_interop.rs` checks the buckets against the Python SDK's at scales 0 to 8.
///
/// # Values a hair from an edge (scale `> 0`)
///
/// At scale `<= 0`, and for exact powers of two at any scale, every value is in its exact
/// bucket. At scale `> 0` the logarithm method is exact only up to its floating-point
/// `ln`: a value within `(|ln v| + 1) * 2^-50` (relative) of a bucket edge may land in
/// the bucket on the other side of that edge. That includes the powers of two: most
/// values one or two ulps *below* `2^k` land in the bucket *above* it (with `2^k` itself
/// one bucket lower), and some a hair above land below, in tailguard and in the SDKs
/// alike (the specification allows it). Everywhere else the bucket is exact. Three
/// consequences:
///
/// * Two implementations agree bucket for bucket except within that distance of an edge
///   (tailguard's `ln` is `libm`'s, a port of the FreeBSD `log` Go's `math.Log` also
///   ports; Python's is the C library's).
/// * Bucket order is not value order there: `1073741823.9999999` is in a higher bucket
///   than `1073741824` at scale 1. A sketch's quantiles and [`upper_bound_u64`](IndexMapping::upper_bound_u64)
///   allow for it.
/// * Downscaling (a finer OTLP point decoded into a coarser sketch, [`otlp`](crate::otlp))
///   is exact on buckets, `i >> d`, but a value misplaced at the finer scale stays
///   misplaced: it is where the finer bucket puts it, which may differ from where
///   recording at the coarser scale would put it. Away from edges the two agree.
///
/// Scales `-10..=20`, as OpenTelemetry: `2^scale` bins per power of two for `scale >= 0`,
/// one bin per `2^-scale` powers of two below. The relative accuracy is
/// `tanh(ln(b) / 2) = (b - 1) / (b + 1)`: 1.08 % at scale 5, 0.54 % at scale 6. At
/// scale `-10`, `b = 2^1024` overflows: [`gamma`](IndexMapping::gamma) is `+inf` there,
/// and such a sketch has no DDSketch protobuf form ([`proto::encode`](crate::proto::encode)
/// refuses it with a typed error; OTLP encodes it).
///
/// # As a DDSketch protobuf mapping
///
/// Its DDSketch identity is interpolation `NONE` with `gamma = b` and `indexOffset = 0`,
/// which is what [`proto::encode`](crate::proto::encode) writes. DataDog's Go and Java
/// libraries (and [`LogMapping`](super::LogMapping)) read such a sketch with
/// `floor(ln(v) / ln(b))`, bins `[b^i, b^(i+1))`: the same bins except on their exact
/// edges, where OpenTelemetry's value belongs to the bin below. (Python's `ddsketch`
/// uses `ceil` with keys one higher, upper-inclusive like OpenTelemetry.)
///
/// ```
/// use tailguard::sketch::{IndexMapping, OtelMapping};
///
/// let m = OtelMapping::with_scale(3).unwrap(); // 8 buckets per power of two
/// assert_eq!(m.index(1.0), -1); // 1 is bucket -1's upper edge: (2^-1/8, 1]
/// assert_eq!(m.index(1.01), 0);
/// assert_eq!(m.index(2.0), 7);
/// assert_eq!(m.index_u64(1_000), m.index(1_000.0));
/// let coarse = OtelMapping::with_scale(-2).unwrap(); // one bucket per 4 powers of two
/// assert_eq!(coarse.index(16.0), 0); // (1, 16]
/// assert_eq!(coarse.index(17.0), 1);
/// ```
#[doc(alias = "exponential histogram")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct OtelMapping {
    scale: i32,
}

impl OtelMapping {
    /// The coarsest scale OpenTelemetry defines: one bucket per 2^10 powers of two.
    pub const MIN_SCALE: i32 = -10;
    /// The finest scale OpenTelemetry defines: 2^20 buckets per power of two (every index
    /// of a finite float still fits in an `i32`).
    pub const MAX_SCALE: i32 = 20;

    /// The mapping of OpenTelemetry's buckets at `scale`. Errors
    /// ([`ConfigError::InvalidAccuracy`]) unless `MIN_SCALE <= scale <= MAX_SCALE`.
    ///
    /// ```
    /// use tailguard::sketch::{IndexMapping, OtelMapping};
    /// let m = OtelMapping::with_scale(5).unwrap();
    /// assert!((m.relative_accuracy() - 0.01083).abs() < 1e-5);
    /// assert!(OtelMapping::with_scale(21).is_err());
    /// ```
    pub const fn with_scale(scale: i32) -> Result<Self, ConfigError> {
        if scale >= Self::MIN_SCALE && scale <= Self::MAX_SCALE {
            Ok(OtelMapping { scale })
        } else {
            Err(ConfigError::InvalidAccuracy)
        }
    }

    /// The scale: `2^scale` buckets per power of two.
    ///
    /// ```
    /// use tailguard::sketch::{IndexMapping, OtelMapping};
    ///
    /// let m = OtelMapping::with_scale(3).unwrap();
    /// assert_eq!(m.scale(), 3);
    /// assert_eq!(m.index(2.0 * 1.0001) - m.index(1.0001), 8); // 2^3 buckets per power of two
    /// ```
    pub const fn scale(&self) -> i32 {
        self.scale
    }

    /// [`relative_accuracy`](IndexMapping::relative_accuracy), in `const` code: the bits
    /// of `accuracy_of_scale` for each scale (a test checks them against the `tanh`).
    // MIN_SCALE <= scale <= MAX_SCALE (checked at construction): the index is in 0..31.
    #[allow(clippy::indexing_slicing)]
    pub(crate) const fn accuracy(&self) -> f64 {
        f64::from_bits(ACCURACY_BITS[self.scale.wrapping_sub(Self::MIN_SCALE) as usize])
    }

    /// The accuracy of `scale`: `tanh(ln(2^(2^-scale)) / 2)`.
    fn accuracy_of_scale(scale: i32) -> f64 {
        libm::tanh(libm::ldexp(core::f64::consts::LN_2, scale.wrapping_neg()) / 2.0)
    }

    /// `-scale` as a shift, for `scale <= 0` (in `0..=10`).
    fn down_shift(&self) -> u32 {
        self.scale.unsigned_abs()
    }

    /// `scale` as a shift, for `scale > 0` (in `1..=20`).
    fn up_shift(&self) -> u32 {
        self.scale.unsigned_abs()
    }

    /// The SDKs' index of the bucket holding the positive subnormals and
    /// `f64::MIN_POSITIVE`: the lowest bucket any positive float reaches.
    fn lowest_index(&self) -> i32 {
        if self.scale > 0 {
            // (MIN_NORMAL_EXPONENT << scale) - 1: at most 1022 * 2^20 + 1 < 2^31.
            (MIN_NORMAL_EXPONENT << self.up_shift()).wrapping_sub(1)
        } else {
            let index = MIN_NORMAL_EXPONENT >> self.down_shift();
            // At scales 0 and -1, 2^-1022 is a bucket's upper edge: the bucket below.
            if self.scale > -2 {
                index.wrapping_sub(1)
            } else {
                index
            }
        }
    }

    /// The index of a positive normal or infinite float of `exponent` whose mantissa is
    /// zero or not (`power_of_two`), at scale `<= 0`.
    fn exponent_index(&self, exponent: i32, power_of_two: bool) -> i32 {
        // exponent is in -1022..=1024: no overflow.
        exponent.wrapping_sub(i32::from(power_of_two)) >> self.down_shift()
    }
}

/// How far (relative) from a bucket edge the logarithm method may put a value on the
/// wrong side of it: `(|ln v| + 1) * 2^-50`.
///
/// At scale `> 0` the index is `floor(fl(fl(ln v) * fl(2^scale / ln 2)))`: `libm`'s `ln`
/// is within an ulp, so at most `2^-52 |ln v|` off, and the factor and the product each
/// round by at most `2^-53`, relative. The computed `x` is thus within `2^-51 |x|` of the
/// exact `log_b v`, and can fall on the far side of an edge `e` only if
/// `|ln v - ln e| <= 2^-51 |ln v|`: the bound here has twice that, and `+ 1` for values
/// near 1. `tests/otel_edges.rs` checks it near every power of two from `2^-20` to `2^60`.
pub(crate) fn edge_tolerance(value: f64) -> f64 {
    (libm::fabs(libm::log(value)) + 1.0) * libm::ldexp(1.0, -50)
}

/// Whether `value` is so near the bucket edge `edge` that the logarithm method may have
/// put it, or values beside it, on the other side: within [`edge_tolerance`] of it
/// (relative). At scale `<= 0` nothing is misplaced, but a sketch downscaled from a finer
/// point holds what the finer scale's logarithm misplaced.
pub(crate) fn near_edge(value: f64, edge: f64) -> bool {
    value.is_finite()
        && edge > 0.0
        && edge.is_finite()
        && libm::fabs(value / edge - 1.0) <= edge_tolerance(value)
}

impl IndexMapping for OtelMapping {
    const INTERPOLATION: Interpolation = Interpolation::None;
    // The latency presets' scale (`presets::OTEL_LATENCY_SCALE` is this one's).
    const DEFAULT: Self = OtelMapping { scale: 5 };

    /// The coarsest scale whose accuracy is at least `alpha` (`alpha` rounds down, as for
    /// [`IntMapping`](super::IntMapping)): scale 5 (1.08 %) for 2 %, scale 6 (0.54 %) for
    /// 1 %. Errors unless `0 < alpha < 1` and scale 20 (6.6e-7) is accurate enough.
    fn with_relative_accuracy(alpha: f64) -> Result<Self, ConfigError> {
        if !(alpha > 0.0 && alpha < 1.0) {
            return Err(ConfigError::InvalidAccuracy);
        }
        (Self::MIN_SCALE..=Self::MAX_SCALE)
            .find(|&scale| Self::accuracy_of_scale(scale) <= alpha)
            .map(|scale| OtelMapping { scale })
            .ok_or(ConfigError::InvalidAccuracy)
    }

    fn relative_accuracy(&self) -> f64 {
        // A table lookup: `tanh` is costly, and quantile queries read the accuracy.
        self.accuracy()
    }

    /// The base `2^(2^-scale)` (`+inf` at scale -10). A power of two for `scale <= 0`,
    /// and DataDog's bits for `2^(2^-k)` otherwise (the table `IntMapping` uses, equal to
    /// `libm::exp2`'s): a constant, so encoding links no `exp2` and its 4 KB table.
    fn gamma(&self) -> f64 {
        match usize::try_from(self.scale) {
            // 1 <= scale <= 20: in the table.
            Ok(k) => GAMMA_BITS
                .get(k)
                .map_or(f64::INFINITY, |&bits| f64::from_bits(bits)),
            // 2^(2^-scale), -scale in 0..=10: exact (+inf for 2^1024).
            Err(_) => libm::ldexp(1.0, 1i32 << self.down_shift().min(10)),
        }
    }

    fn index_offset(&self) -> f64 {
        0.0
    }

    #[inline]
    fn index(&self, value: f64) -> i32 {
        if value.is_nan() || value <= 0.0 {
            return i32::MIN; // zero (NaN and negatives are never passed)
        }
        if value <= f64::MIN_POSITIVE {
            // Subnormals, and 2^-1022 itself: for scale <= 0 also the upper edge of the
            // lowest bucket (MIN_POSITIVE is a power of two), for scale > 0 the SDKs'
            // `value <= MIN_NORMAL_VALUE` branch.
            return self.lowest_index();
        }
        let bits = value.to_bits();
        // A positive normal or infinite float: the exponent is in -1022..=1024.
        let exponent = (((bits >> MANTISSA_BITS) & 0x7ff) as i32).wrapping_sub(EXPONENT_BIAS);
        let power_of_two = bits & MANTISSA_MASK == 0;
        if self.scale <= 0 {
            return self.exponent_index(exponent, power_of_two);
        }
        let shift = self.up_shift();
        if power_of_two {
            // Exactly b^(exponent * 2^scale), the upper edge of the bucket below (+inf,
            // exponent 1024, lands in the highest bucket, as in the SDKs).
            return (exponent << shift).wrapping_sub(1); // |exponent| <= 1024, shift <= 20
        }
        // 2^scale is exact, so this is the SDKs' `ldexp(1 / log(2), scale)`.
        let factor = INV_LN_2 * f64::from(1u32 << shift);
        let highest = ((MAX_NORMAL_EXPONENT + 1) << shift).wrapping_sub(1);
        // |ln(v)| < 710 and factor <= 2^20 / ln 2: the product is well inside i32, and
        // `as` of a whole float in range is exact.
        (libm::floor(libm::log(value) * factor) as i32).min(highest)
    }

    /// For scale `<= 0` integer operations only; the index is always that of
    /// `value as f64` (round to nearest), which is what the SDKs compute for an integer.
    #[inline]
    fn index_u64(&self, value: u64) -> i32 {
        if value == 0 {
            return i32::MIN;
        }
        if self.scale > 0 {
            return self.index(value as f64);
        }
        // The exponent and whether the mantissa is zero, after rounding to 53 bits.
        let top = 63u32.wrapping_sub(value.leading_zeros()); // value > 0: top <= 63
        let (exponent, power_of_two) = if top <= MANTISSA_BITS {
            (top, value & value.wrapping_sub(1) == 0)
        } else {
            let dropped = top.wrapping_sub(MANTISSA_BITS); // 1..=11
            let kept = value >> dropped; // 53 bits, the leading one included
            let rest = value & ((1u64 << dropped).wrapping_sub(1));
            let half = 1u64 << dropped.wrapping_sub(1);
            // Round half to even, as `as f64` does.
            let up = rest > half || (rest == half && kept & 1 == 1);
            let kept = kept.wrapping_add(u64::from(up)); // at most 2^53
            if kept >> (MANTISSA_BITS + 1) == 1 {
                (top.wrapping_add(1), true) // rounded up to the next power of two
            } else {
                (top, kept == 1 << MANTISSA_BITS)
            }
        };
        self.exponent_index(exponent as i32, power_of_two) // exponent <= 64
    }

    /// `b^(index + 1)`, the bucket's upper edge, widened by the logarithm method's error
    /// (`(|ln edge| + 1) * 2^-50`, see the type's docs) and by the rounding of an integer
    /// to `f64`, truncated: at or above every whole number whose
    /// [`index_u64`](IndexMapping::index_u64) is `index`, including those a hair above
    /// the edge that the logarithm (or, from `2^53` up, the rounding to `f64`) puts in
    /// this bucket.
    fn upper_bound_u64(&self, index: i32) -> u64 {
        let Some(next) = index.checked_add(1) else {
            return u64::MAX;
        };
        let edge = self.lower_bound(next);
        // `as` truncates and saturates (+inf gives u64::MAX).
        (edge * (1.0 + edge_tolerance(edge))) as u64
    }

    /// `b^index`, the exclusive lower edge of bucket `index` (the bucket holds the values
    /// above it). Exact for scale `<= 0` and at powers of two.
    fn lower_bound(&self, index: i32) -> f64 {
        // ldexp saturates to 0 or +inf beyond the float range; clamping the exponent
        // first keeps the shifts inside i64.
        // (max-then-min, not `Ord::clamp`, whose bound check can panic: none is linked.)
        #[allow(clippy::manual_clamp)]
        let clamp = |e: i64| e.max(-2000).min(2000) as i32;
        if self.scale <= 0 {
            return libm::ldexp(1.0, clamp(i64::from(index) << self.down_shift()));
        }
        let shift = self.up_shift();
        let whole = index >> shift; // floor division by 2^scale
        let part = index & (1i32 << shift).wrapping_sub(1);
        let fraction = libm::exp2(libm::ldexp(f64::from(part), self.scale.wrapping_neg()));
        libm::ldexp(fraction, clamp(i64::from(whole)))
    }
}

#[cfg(test)]
mod tests {
    /// The constant gamma is `exp2(2^-scale)` bit for bit, at every scale.
    #[test]
    fn gamma_is_exp2_of_two_to_minus_scale_without_exp2() {
        for scale in OtelMapping::MIN_SCALE..=OtelMapping::MAX_SCALE {
            let m = OtelMapping::with_scale(scale).unwrap();
            let want = libm::exp2(libm::ldexp(1.0, -scale));
            assert_eq!(m.gamma().to_bits(), want.to_bits(), "scale {scale}");
        }
    }

    use super::*;

    #[test]
    fn tabled_accuracies_are_the_computed_ones() {
        for scale in OtelMapping::MIN_SCALE..=OtelMapping::MAX_SCALE {
            let m = OtelMapping::with_scale(scale).unwrap();
            assert_eq!(
                m.relative_accuracy().to_bits(),
                OtelMapping::accuracy_of_scale(scale).to_bits(),
                "{scale}"
            );
        }
    }
    use std::{vec, vec::Vec};

    /// The SDKs' mapping, written as the Python SDK writes it (with `f64` ln from the C
    /// library through std, where tailguard uses libm).
    fn sdk_index(scale: i32, value: f64) -> i64 {
        let bits = value.to_bits();
        let exponent = ((bits >> 52) & 0x7ff) as i64 - 1023;
        let mantissa = bits & MANTISSA_MASK;
        if scale <= 0 {
            if value < f64::MIN_POSITIVE {
                let mut index = -1022i64 >> -scale;
                if -scale < 2 {
                    index -= 1;
                }
                return index;
            }
            let correction = if mantissa == 0 { -1 } else { 0 };
            return (exponent + correction) >> -scale;
        }
        if value <= f64::MIN_POSITIVE {
            return (-1022i64 << scale) - 1;
        }
        if mantissa == 0 {
            return (exponent << scale) - 1;
        }
        let factor = libm::ldexp(1.0 / 2f64.ln(), scale);
        ((value.ln() * factor).floor() as i64).min((1024i64 << scale) - 1)
    }

    fn all() -> impl Iterator<Item = OtelMapping> {
        (OtelMapping::MIN_SCALE..=OtelMapping::MAX_SCALE)
            .map(|s| OtelMapping::with_scale(s).unwrap())
    }

    #[test]
    fn indices_are_the_sdks_at_every_scale() {
        let mut rng = crate::test_rng::Xorshift64(0x9e37_79b9_7f4a_7c15);
        let mut values = vec![
            f64::MIN_POSITIVE,
            f64::MIN_POSITIVE * 1.5,
            5e-324,
            1e-310,
            f64::MAX,
            1.0,
            2.0,
            0.5,
            3.0,
            1e-9,
            1e300,
        ];
        for e in -1074..1024 {
            values.push(libm::ldexp(1.0, e));
            values.push(libm::ldexp(1.0, e).next_up());
            values.push(libm::ldexp(1.0, e).next_down());
        }
        for _ in 0..20_000 {
            let v = f64::from_bits(rng.next_u64() >> 1); // any non-negative float, NaN aside
            if v.is_finite() && v > 0.0 {
                values.push(v);
            }
        }
        values.retain(|&v| v > 0.0);
        for m in all() {
            for &v in &values {
                assert_eq!(
                    i64::from(m.index(v)),
                    sdk_index(m.scale, v),
                    "scale {} v {v:e}",
                    m.scale
                );
            }
            assert_eq!(m.index(0.0), i32::MIN);
            assert_eq!(
                i64::from(m.index(f64::INFINITY)),
                sdk_index(m.scale, f64::INFINITY)
            );
        }
    }

    #[test]
    fn integer_path_is_the_index_of_the_rounded_float() {
        let mut values: Vec<u64> = (1..5000).collect();
        for e in 0..64u32 {
            let p = 1u64 << e;
            values.extend([p, p - 1, p + 1, p.wrapping_mul(3)]);
            // Near the rounding boundaries of 53-bit mantissas.
            for d in 0..4u64 {
                values.push(p.wrapping_sub(1u64 << e.saturating_sub(53)).wrapping_sub(d));
                values.push(p.wrapping_add(1u64 << e.saturating_sub(53)).wrapping_add(d));
                values.push(p.wrapping_add(1u64 << e.saturating_sub(54)).wrapping_add(d));
            }
        }
        values.extend([
            u64::MAX,
            u64::MAX - 1,
            (1 << 53) + 1,
            (1 << 54) - 1,
            123_456_789_012,
        ]);
        for m in all() {
            for &v in values.iter().filter(|&&v| v > 0) {
                assert_eq!(m.index_u64(v), m.index(v as f64), "scale {} v {v}", m.scale);
            }
            assert_eq!(m.index_u64(0), i32::MIN);
        }
    }

    #[test]
    fn buckets_are_upper_inclusive_and_within_alpha() {
        for m in all().filter(|m| m.scale > -10) {
            let alpha = m.relative_accuracy();
            let mut v = 1e-300;
            while v < 1e300 {
                let i = m.index(v);
                let (lo, hi) = (m.lower_bound(i), m.lower_bound(i + 1));
                let tol = 1e-12 * v;
                assert!(
                    lo < v + tol && v <= hi + tol,
                    "{m:?} v={v} bucket {i} ({lo}, {hi}]"
                );
                let rep = m.value(i);
                assert!((rep - v).abs() <= alpha * v * (1.0 + 1e-9), "{m:?} v={v}");
                v *= 1.37;
            }
            // Powers of two are upper edges (of every bucket at scale >= 0).
            for e in [-20, 0, 1, 10, 40].into_iter().filter(|_| m.scale >= 0) {
                let p = libm::ldexp(1.0, e);
                assert_eq!(m.lower_bound(m.index(p) + 1), p, "{m:?} 2^{e}");
                assert!(m.index(p.next_up()) > m.index(p));
            }
        }
    }

    #[test]
    fn scales_and_accuracies() {
        assert!(OtelMapping::with_scale(-11).is_err());
        assert!(OtelMapping::with_scale(21).is_err());
        let s = |a| OtelMapping::with_relative_accuracy(a).unwrap().scale();
        assert_eq!(s(0.02), 5);
        assert_eq!(s(0.01), 6);
        assert_eq!(s(0.4), 0);
        for a in [0.9, 0.3, 0.02, 0.01, 0.001, 1e-6] {
            assert!(
                OtelMapping::with_relative_accuracy(a)
                    .unwrap()
                    .relative_accuracy()
                    <= a
            );
        }
        assert!(OtelMapping::with_relative_accuracy(1e-7).is_err());
        assert!(OtelMapping::with_relative_accuracy(1.0).is_err());
        assert!(OtelMapping::with_relative_accuracy(f64::NAN).is_err());
        assert_eq!(OtelMapping::with_scale(0).unwrap().gamma(), 2.0);
        assert_eq!(OtelMapping::with_scale(-3).unwrap().gamma(), 256.0);
        assert_eq!(OtelMapping::with_scale(-10).unwrap().gamma(), f64::INFINITY);
        let g = OtelMapping::with_scale(4).unwrap().gamma();
        assert!((g.powi(16) - 2.0).abs() < 1e-14);
    }

    #[test]
    fn the_ends_of_the_float_range_stay_in_i32() {
        for m in all() {
            let lo = m.index(5e-324);
            let hi = m.index(f64::INFINITY);
            assert!(lo > i32::MIN && hi < i32::MAX, "{m:?}");
            assert_eq!(m.index(f64::MAX), hi);
            assert!(m.lower_bound(i32::MIN) == 0.0 && m.lower_bound(i32::MAX) == f64::INFINITY);
        }
    }
}
