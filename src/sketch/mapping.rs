//! Index mappings: how a value becomes a bin index, and a bin index a value.
//!
//! All three follow DataDog's DDSketch definitions (Go and Java conventions):
//!
//! * `index(v) = floor(approx_log(v) * multiplier + index_offset)`, where `approx_log` is the
//!   natural logarithm ([`LogMapping`]), a cubic interpolation of `log2` from the float's
//!   exponent and mantissa bits ([`CubicMapping`]), or a linear one computed with integer
//!   operations only ([`IntMapping`]);
//! * the representative value of bin `i` is `lower_bound(i) * (1 + alpha)`, so every value in
//!   the bin is within relative error `alpha` of it.
//!
//! DataDog's Python library uses `ceil` instead of `floor` (and a different representative);
//! tailguard always uses `floor`.
//!
//! | mapping | bins per factor of 10 at 1 % | record cost | float ops on record |
//! |---|---|---|---|
//! | [`LogMapping`] | 116 | one `ln` | yes |
//! | [`CubicMapping`] | 117 | bit extraction + 3 multiply-adds | yes (no `ln`) |
//! | [`IntMapping`] | 213 (alpha rounds down to 0.78 %) | one CLZ, two shifts | none |

use super::ConfigError;

/// The interpolation a mapping uses, as numbered in DataDog's protobuf `IndexMapping`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Interpolation {
    /// The exact logarithm.
    None = 0,
    /// Linear interpolation of `log2` between powers of two.
    Linear = 1,
    /// Quadratic interpolation (DataDog defines it; tailguard does not implement it).
    Quadratic = 2,
    /// Cubic interpolation of `log2` between powers of two.
    Cubic = 3,
}

/// A rule mapping positive values to bin indices with a guaranteed relative accuracy.
///
/// Implemented by [`LogMapping`], [`CubicMapping`] and [`IntMapping`]. The sketch calls
/// [`index`](Self::index) only with positive values (and `+inf`); indices of values beyond
/// the `i32` range saturate.
pub trait IndexMapping: Copy + PartialEq + core::fmt::Debug {
    /// The interpolation, as DataDog's protobuf names it.
    const INTERPOLATION: Interpolation;

    /// The mapping for relative accuracy `alpha` (for example `0.01` for 1 %).
    ///
    /// A mapping that supports only discrete accuracies picks the nearest one that is at
    /// least as accurate (never less). Errors unless `0 < alpha < 1`.
    fn with_relative_accuracy(alpha: f64) -> Result<Self, ConfigError>;

    /// The guaranteed relative accuracy (alpha).
    fn relative_accuracy(&self) -> f64;

    /// DataDog's `gamma`: the base of the logarithm the mapping approximates (as written in
    /// the protobuf `IndexMapping`).
    fn gamma(&self) -> f64;

    /// DataDog's `indexOffset`.
    fn index_offset(&self) -> f64;

    /// The index of the bin holding `value` (> 0).
    fn index(&self, value: f64) -> i32;

    /// The index of the bin holding `value` (> 0), for integer input.
    ///
    /// The default converts to `f64`; [`IntMapping`] overrides it with integer operations.
    fn index_u64(&self, value: u64) -> i32 {
        self.index(value as f64)
    }

    /// The smallest value of bin `index`.
    fn lower_bound(&self, index: i32) -> f64;

    /// The representative value of bin `index`: `lower_bound(index) * (1 + alpha)`.
    fn value(&self, index: i32) -> f64 {
        self.lower_bound(index) * (1.0 + self.relative_accuracy())
    }
}

fn check_accuracy(alpha: f64) -> Result<(), ConfigError> {
    if alpha > 0.0 && alpha < 1.0 {
        Ok(())
    } else {
        Err(ConfigError::InvalidAccuracy)
    }
}

/// `floor(x)` as an `i32`, saturating (NaN gives 0). Cheaper than `libm::floor` + cast.
#[inline]
fn floor_i32(x: f64) -> i32 {
    let t = x as i32; // truncates toward zero, saturates
    if (t as f64) > x {
        t.saturating_sub(1) // x < 0 and not an integer (or below i32::MIN)
    } else {
        t
    }
}

const MANTISSA_BITS: u32 = 52;
const MANTISSA_MASK: u64 = (1 << MANTISSA_BITS) - 1;
const EXPONENT_BIAS: i32 = 1023;

/// The unbiased binary exponent of a positive float (subnormals report -1023).
#[inline]
fn exponent(bits: u64) -> i32 {
    (((bits >> MANTISSA_BITS) & 0x7ff) as i32).wrapping_sub(EXPONENT_BIAS) // in [-1023, 1024]
}

/// The significand minus one, in [0, 1).
#[inline]
fn significand_minus_one(bits: u64) -> f64 {
    f64::from_bits((bits & MANTISSA_MASK) | ((EXPONENT_BIAS as u64) << MANTISSA_BITS)) - 1.0
}

/// `(1 + alpha) / (1 - alpha)`.
fn accuracy_base(alpha: f64) -> f64 {
    (1.0 + alpha) / (1.0 - alpha)
}

/// The relative accuracy guaranteed by bins of width `ln_width` in natural-log space.
fn accuracy_of_width(ln_width: f64) -> f64 {
    libm::tanh(ln_width / 2.0)
}

/// What [`LogMapping`] and [`CubicMapping`] share: `index = floor(approx_log(v) *
/// multiplier + offset)`, with DataDog's parameters and the accuracy they guarantee.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
struct Scale {
    alpha: f64,
    gamma: f64,
    multiplier: f64,
    offset: f64,
}

impl Scale {
    /// The scale of DataDog's protobuf parameters, for an `approx_log` of base `e^ln_base`
    /// whose widest bin spans `widest * ln(gamma)` in natural-log space (`widest` is 1 for
    /// the exact logarithm). Errors unless `gamma > 1` and both are finite.
    fn from_gamma_offset(
        gamma: f64,
        offset: f64,
        ln_base: f64,
        widest: f64,
    ) -> Result<Self, ConfigError> {
        if !(gamma > 1.0 && gamma.is_finite() && offset.is_finite()) {
            return Err(ConfigError::InvalidAccuracy);
        }
        let ln_gamma = libm::log(gamma);
        Ok(Scale {
            alpha: accuracy_of_width(widest * ln_gamma),
            gamma,
            multiplier: ln_base / ln_gamma,
            offset,
        })
    }

    /// The index of the bin whose value has logarithm `approx_log`.
    #[inline]
    fn index(&self, approx_log: f64) -> i32 {
        floor_i32(approx_log * self.multiplier + self.offset)
    }

    /// The logarithm at which bin `index` starts (the inverse of [`index`](Self::index)).
    fn lower_bound_log(&self, index: i32) -> f64 {
        (index as f64 - self.offset) / self.multiplier
    }
}

/// The memory-optimal mapping: `index = floor(ln(v) / ln(gamma))`.
///
/// Fewest bins for a given accuracy; costs one `libm::ln` per record.
///
/// ```
/// use tailguard::sketch::{IndexMapping, LogMapping};
/// let m = LogMapping::with_relative_accuracy(0.01).unwrap();
/// let i = m.index(250.0);
/// assert!((m.value(i) - 250.0).abs() <= 0.01 * 250.0);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct LogMapping {
    scale: Scale,
}

impl LogMapping {
    /// `alpha` must already be checked to lie in (0, 1).
    pub(crate) fn from_valid_accuracy(alpha: f64) -> Self {
        let gamma = accuracy_base(alpha);
        LogMapping {
            scale: Scale {
                alpha,
                gamma,
                multiplier: 1.0 / libm::log(gamma),
                offset: 0.0,
            },
        }
    }

    /// The mapping of DataDog's protobuf parameters, as DataDog's `NONE` interpolation
    /// defines them. Errors unless `gamma > 1` and both are finite.
    pub fn from_gamma_offset(gamma: f64, offset: f64) -> Result<Self, ConfigError> {
        let scale = Scale::from_gamma_offset(gamma, offset, 1.0, 1.0)?;
        Ok(LogMapping { scale })
    }
}

impl IndexMapping for LogMapping {
    const INTERPOLATION: Interpolation = Interpolation::None;

    fn with_relative_accuracy(alpha: f64) -> Result<Self, ConfigError> {
        check_accuracy(alpha)?;
        Ok(Self::from_valid_accuracy(alpha))
    }

    fn relative_accuracy(&self) -> f64 {
        self.scale.alpha
    }

    fn gamma(&self) -> f64 {
        self.scale.gamma
    }

    fn index_offset(&self) -> f64 {
        self.scale.offset
    }

    #[inline]
    fn index(&self, value: f64) -> i32 {
        self.scale.index(libm::log(value))
    }

    fn lower_bound(&self, index: i32) -> f64 {
        libm::exp(self.scale.lower_bound_log(index))
    }
}

// Coefficients of the cubic that interpolates log2 between powers of two, chosen (by
// DataDog) to minimise the number of bins while keeping the accuracy guarantee.
const CUBIC_A: f64 = 6.0 / 35.0;
const CUBIC_B: f64 = -3.0 / 5.0;
const CUBIC_C: f64 = 10.0 / 7.0;
/// How much less the cubic pulls values apart than the exact log2: the multiplier is
/// scaled by this so accuracy holds everywhere (about 1 % more bins than [`LogMapping`]).
const CUBIC_CORRECTION: f64 = 7.0 / (10.0 * core::f64::consts::LN_2);

/// A fast approximation of [`LogMapping`]: the float's binary exponent plus a cubic in its
/// mantissa. No `ln`, about 1 % more bins. DataDog's `CUBIC` interpolation.
///
/// ```
/// use tailguard::sketch::{CubicMapping, IndexMapping};
/// let m = CubicMapping::with_relative_accuracy(0.01).unwrap();
/// let i = m.index(250.0);
/// assert!((m.value(i) - 250.0).abs() <= 0.01 * 250.0);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct CubicMapping {
    scale: Scale,
}

impl CubicMapping {
    /// `alpha` must already be checked to lie in (0, 1).
    pub(crate) fn from_valid_accuracy(alpha: f64) -> Self {
        let ln_base = libm::log(accuracy_base(alpha));
        CubicMapping {
            scale: Scale {
                alpha,
                gamma: libm::exp(ln_base / CUBIC_CORRECTION),
                multiplier: CUBIC_CORRECTION * core::f64::consts::LN_2 / ln_base,
                offset: 0.0,
            },
        }
    }

    /// The mapping of DataDog's protobuf parameters for `CUBIC` interpolation.
    /// Errors unless `gamma > 1` and both are finite.
    pub fn from_gamma_offset(gamma: f64, offset: f64) -> Result<Self, ConfigError> {
        // log2 (base 2); its widest bins span CUBIC_CORRECTION times ln(gamma).
        let ln_base = core::f64::consts::LN_2;
        let scale = Scale::from_gamma_offset(gamma, offset, ln_base, CUBIC_CORRECTION)?;
        Ok(CubicMapping { scale })
    }

    /// `s` in [0, 1) such that the cubic `((A s + B) s + C) s` equals `y` in [0, 1), by
    /// Cardano's formula (the cubic is strictly increasing, so the root is unique).
    fn cubic_inverse(y: f64) -> f64 {
        let (a, b, c) = (CUBIC_A, CUBIC_B, CUBIC_C);
        let d0 = b * b - 3.0 * a * c;
        let d1 = 2.0 * b * b * b - 9.0 * a * b * c - 27.0 * a * a * y;
        let p = libm::cbrt((d1 - libm::sqrt(d1 * d1 - 4.0 * d0 * d0 * d0)) / 2.0);
        -(b + p + d0 / p) / (3.0 * a)
    }
}

impl IndexMapping for CubicMapping {
    const INTERPOLATION: Interpolation = Interpolation::Cubic;

    fn with_relative_accuracy(alpha: f64) -> Result<Self, ConfigError> {
        check_accuracy(alpha)?;
        Ok(Self::from_valid_accuracy(alpha))
    }

    fn relative_accuracy(&self) -> f64 {
        self.scale.alpha
    }

    fn gamma(&self) -> f64 {
        self.scale.gamma
    }

    fn index_offset(&self) -> f64 {
        self.scale.offset
    }

    #[inline]
    fn index(&self, value: f64) -> i32 {
        let bits = value.to_bits();
        let s = significand_minus_one(bits);
        self.scale
            .index(exponent(bits) as f64 + ((CUBIC_A * s + CUBIC_B) * s + CUBIC_C) * s)
    }

    fn lower_bound(&self, index: i32) -> f64 {
        let x = self.scale.lower_bound_log(index);
        let e = libm::floor(x);
        let s = Self::cubic_inverse(x - e);
        libm::ldexp(1.0 + s, e as i32)
    }
}

/// Largest number of mantissa bits [`IntMapping`] uses (alpha = 4.8e-7).
const INT_MAX_BITS: u32 = 20;

/// An integer-only log-linear mapping for cores without an FPU (Cortex-M0, RV32IMC).
///
/// Each power of two is split into `2^k` equal-width bins, so
/// `index = (exponent << k) | (top k mantissa bits)`: one count-leading-zeros and two
/// shifts from a `u64`, or bit extraction from an `f64`, with no float arithmetic.
/// It is exactly DataDog's `LINEAR` interpolation with `gamma = 2^(2^-k)` and
/// `indexOffset = 0`, so it interoperates through the protobuf format (where
/// [`proto`](crate::proto) writes the same bins in Go's default layout, `indexOffset = 2^k`
/// with keys `2^k` higher).
///
/// Only discrete accuracies exist: `alpha = tanh(2^-(k+1))`, that is 1.56 %, 0.78 % and
/// 0.39 % for k = 5, 6, 7. A requested accuracy rounds down to the nearest of these, so
/// asking for 1 % gives 0.78 %.
///
/// ```
/// use tailguard::sketch::{IndexMapping, IntMapping};
/// let m = IntMapping::with_relative_accuracy(0.01).unwrap();
/// assert_eq!(m.mantissa_bits(), 6);
/// assert!(m.relative_accuracy() <= 0.01);
/// assert_eq!(m.index_u64(1_000), m.index(1_000.0));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct IntMapping {
    k: u32,
}

impl IntMapping {
    /// 32 bins per power of two: alpha = 1.56 %.
    pub const K5: IntMapping = IntMapping { k: 5 };
    /// 64 bins per power of two: alpha = 0.78 %.
    pub const K6: IntMapping = IntMapping { k: 6 };
    /// 128 bins per power of two: alpha = 0.39 %.
    pub const K7: IntMapping = IntMapping { k: 7 };

    /// The mapping with `2^k` bins per power of two. Errors if `k > 20`.
    pub const fn with_mantissa_bits(k: u32) -> Result<Self, ConfigError> {
        if k > INT_MAX_BITS {
            Err(ConfigError::InvalidAccuracy)
        } else {
            Ok(IntMapping { k })
        }
    }

    /// `k`: the mapping has `2^k` bins per power of two.
    pub const fn mantissa_bits(&self) -> u32 {
        self.k
    }

    /// The widest bin, at the start of each power of two, spans a factor of `1 + 2^-k`,
    /// whose natural log is below `2^-k`; so `tanh(2^-(k+1))` bounds the error (DataDog
    /// states the same bound for `LINEAR` with this gamma).
    fn accuracy_of_bits(k: u32) -> f64 {
        accuracy_of_width(1.0 / (1u32 << k) as f64)
    }
}

impl IndexMapping for IntMapping {
    const INTERPOLATION: Interpolation = Interpolation::Linear;

    fn with_relative_accuracy(alpha: f64) -> Result<Self, ConfigError> {
        check_accuracy(alpha)?;
        (0..=INT_MAX_BITS)
            .find(|&k| Self::accuracy_of_bits(k) <= alpha)
            .map(|k| IntMapping { k })
            .ok_or(ConfigError::InvalidAccuracy)
    }

    fn relative_accuracy(&self) -> f64 {
        Self::accuracy_of_bits(self.k)
    }

    fn gamma(&self) -> f64 {
        libm::exp2(1.0 / (1u32 << self.k) as f64)
    }

    fn index_offset(&self) -> f64 {
        0.0
    }

    #[inline]
    fn index(&self, value: f64) -> i32 {
        let bits = value.to_bits();
        let top = ((bits & MANTISSA_MASK) >> MANTISSA_BITS.wrapping_sub(self.k)) as i32; // k <= 20
                                                                                         // |exponent| <= 1024 and k <= 20, so this stays inside i32.
        (exponent(bits) << self.k) | top
    }

    #[inline]
    fn index_u64(&self, value: u64) -> i32 {
        if value == 0 {
            return i32::MIN;
        }
        // Latencies in ns below 4.3 s take the 32-bit path: half the instructions on a
        // 32-bit core, where every u64 shift is two or three.
        if let Ok(v) = u32::try_from(value) {
            // Shifted so the leading one is bit 31, the k bits below it are the top of the
            // mantissa: `lead_and_top` = 2^k + top, and (e - 1) * 2^k + 2^k + top is
            // (e << k) | top, e = 31 - lz (for v = 1, e - 1 = -1 and the sum is 0).
            let lz = v.leading_zeros(); // v > 0: lz <= 31
            let lead_and_top = (v << lz) >> 31u32.wrapping_sub(self.k); // k <= 20
            let e_minus_one = 30i32.wrapping_sub(lz as i32);
            return (e_minus_one << self.k).wrapping_add(lead_and_top as i32);
        }
        let e = 63u32.wrapping_sub(value.leading_zeros()); // the leading one's position; value > 0
        let mantissa = value ^ (1 << e); // the bits below it
        let top = if e >= self.k {
            mantissa >> e.wrapping_sub(self.k)
        } else {
            mantissa << self.k.wrapping_sub(e)
        };
        ((e as i32) << self.k) | top as i32
    }

    fn lower_bound(&self, index: i32) -> f64 {
        let e = index >> self.k; // arithmetic shift: floor division by 2^k
        let top = index & (1i32 << self.k).wrapping_sub(1);
        libm::ldexp(1.0 + top as f64 / (1u32 << self.k) as f64, e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_bins<M: IndexMapping>(m: M) {
        let alpha = m.relative_accuracy();
        let mut v = 1e-6;
        while v < 1e12 {
            let i = m.index(v);
            let lo = m.lower_bound(i);
            let hi = m.lower_bound(i + 1);
            let tol = 1e-12 * v;
            assert!(
                lo <= v + tol && v < hi + tol,
                "{m:?} v={v} bin {i} [{lo}, {hi})"
            );
            let rep = m.value(i);
            assert!(
                (rep - v).abs() <= alpha * v * (1.0 + 1e-9),
                "{m:?} v={v} rep={rep}"
            );
            v *= 1.0137;
        }
    }

    #[test]
    fn every_mapping_keeps_values_in_their_bin_within_alpha() {
        for alpha in [0.005, 0.01, 0.02, 0.05] {
            check_bins(LogMapping::with_relative_accuracy(alpha).unwrap());
            check_bins(CubicMapping::with_relative_accuracy(alpha).unwrap());
            check_bins(IntMapping::with_relative_accuracy(alpha).unwrap());
        }
    }

    #[test]
    fn int_mapping_rounds_accuracy_down() {
        let k = |a| {
            IntMapping::with_relative_accuracy(a)
                .unwrap()
                .mantissa_bits()
        };
        assert_eq!(k(0.02), 5);
        assert_eq!(k(0.01), 6);
        assert_eq!(k(0.005), 7);
        for a in [0.02, 0.01, 0.005, 0.3, 1e-6] {
            assert!(
                IntMapping::with_relative_accuracy(a)
                    .unwrap()
                    .relative_accuracy()
                    <= a
            );
        }
        assert!(IntMapping::with_relative_accuracy(1e-9).is_err());
    }

    #[test]
    fn int_mapping_integer_and_float_paths_agree() {
        let m = IntMapping::with_mantissa_bits(6).unwrap();
        for v in (1..5000u64).chain([1 << 40, (1 << 53) - 1, 123_456_789_012]) {
            assert_eq!(m.index_u64(v), m.index(v as f64), "v={v}");
        }
        assert_eq!(m.index_u64(0), i32::MIN);
        assert_eq!(m.index_u64(u64::MAX), (63 << 6) | 63);
    }

    #[test]
    fn invalid_accuracies_are_errors() {
        for a in [0.0, -0.1, 1.0, 2.0, f64::NAN, f64::INFINITY] {
            assert!(LogMapping::with_relative_accuracy(a).is_err());
            assert!(CubicMapping::with_relative_accuracy(a).is_err());
            assert!(IntMapping::with_relative_accuracy(a).is_err());
        }
        assert!(LogMapping::from_gamma_offset(1.0, 0.0).is_err());
        assert!(CubicMapping::from_gamma_offset(f64::NAN, 0.0).is_err());
    }

    #[test]
    fn gamma_round_trips() {
        let l = LogMapping::with_relative_accuracy(0.01).unwrap();
        let l2 = LogMapping::from_gamma_offset(l.gamma(), 0.0).unwrap();
        assert!((l2.relative_accuracy() - 0.01).abs() < 1e-12);
        let c = CubicMapping::with_relative_accuracy(0.01).unwrap();
        let c2 = CubicMapping::from_gamma_offset(c.gamma(), 0.0).unwrap();
        assert!((c2.relative_accuracy() - 0.01).abs() < 1e-12);
        assert!((c2.scale.multiplier - c.scale.multiplier).abs() < 1e-9);
    }

    #[test]
    fn floor_is_exact() {
        for x in [-2.0, -1.5, -0.5, 0.0, 0.5, 1.0, 2.999, -1e12, 1e12] {
            let want = libm::floor(x).clamp(i32::MIN as f64, i32::MAX as f64) as i32;
            assert_eq!(floor_i32(x), want, "{x}");
        }
        assert_eq!(floor_i32(f64::NEG_INFINITY), i32::MIN);
        assert_eq!(floor_i32(f64::INFINITY), i32::MAX);
    }
}
