//! DataDog's index mappings: how a value becomes a bin index, and a bin index a value
//! (OpenTelemetry's is `otel_mapping`).
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
//! The floor is DataDog's (Go's and Java's `(int) x - 1` for negative `x`, which sends a
//! negative whole number one lower than `floor` would), and each multiplier is derived from
//! gamma exactly as DataDog's Java library derives it, so values land in the same bins as
//! in DataDog's Go and Java libraries: see [`IntMapping`] for the one mapping where that
//! takes more than the formula. DataDog's Python library uses `ceil` instead (and a
//! different representative): see [`proto`](crate::proto).
//!
//! | mapping | bins per factor of 10 at 1 % | record cost | float ops on record |
//! |---|---|---|---|
//! | [`LogMapping`] | 116 | a table-driven `ln` (`libm`'s within a hair of a bin edge) | yes |
//! | [`CubicMapping`] | 117 | bit extraction + 3 multiply-adds | yes (no `ln`) |
//! | [`IntMapping`] | 213 (alpha rounds down to 0.78 %) | one CLZ, two shifts | none |
//!
//! On a core without a double-precision FPU use [`IntMapping`]: that is the Cortex-M0 and
//! RV32IMC (no FPU at all) and also the Cortex-M4F, whose FPU is single precision, so the
//! `f64` the other mappings compute in is software there too. On x86-64 and aarch64 use
//! [`CubicMapping`] (fastest) or [`LogMapping`] (fewest bins). See the
//! [sketch docs](super#which-mapping-on-which-core).

use super::cubic_inverse::cubic_inverse;
use super::{datadog_linear, fast_exp, fast_log, ConfigError};

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
/// Implemented by [`LogMapping`], [`CubicMapping`], [`IntMapping`] and
/// [`OtelMapping`](super::OtelMapping). The sketch calls
/// [`index`](Self::index) only with positive values (and `+inf`); indices of values beyond
/// the `i32` range saturate.
pub trait IndexMapping: Copy + PartialEq + core::fmt::Debug {
    /// The interpolation, as DataDog's protobuf names it.
    const INTERPOLATION: Interpolation;

    /// A mapping of this type that exists at compile time: the latency presets' (1 % for
    /// [`LogMapping`] and [`CubicMapping`], [`IntMapping::K6`], scale 5 for
    /// [`OtelMapping`](super::OtelMapping)).
    ///
    /// `const` constructors need it where they fill an array of sketches (a
    /// [`Window`](crate::window::Window)'s slots) before giving each its layout: an array
    /// element can only be repeated from a constant.
    ///
    /// ```
    /// use tailguard::sketch::{IndexMapping, IntMapping, LogMapping};
    /// assert_eq!(IntMapping::DEFAULT, IntMapping::K6);
    /// assert_eq!(LogMapping::DEFAULT, LogMapping::with_relative_accuracy(0.01).unwrap());
    /// ```
    const DEFAULT: Self;

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

    /// [`index_u64`](Self::index_u64) of `value` if the mapping finds it on its fast
    /// path, `None` otherwise: always for 0, and for whatever values the mapping computes
    /// out of line (for [`IntMapping`], values from 2^32 up and values near a bin edge).
    ///
    /// The sketches' record paths try this first and leave the `None` cases to a function
    /// of their own, so that the rare cases cost the common one nothing (no registers
    /// saved around a call). The default is `index_u64` for every value but 0.
    ///
    /// ```
    /// use tailguard::sketch::{IndexMapping, IntMapping};
    /// let m = IntMapping::K6;
    /// assert_eq!(m.index_u64_fast(129), Some(m.index_u64(129)));
    /// assert_eq!(m.index_u64_fast(0), None);
    /// assert_eq!(m.index_u64_fast(7), None); // on a bin edge: DataDog's path
    /// ```
    #[inline]
    fn index_u64_fast(&self, value: u64) -> Option<i32> {
        if value == 0 {
            None
        } else {
            Some(self.index_u64(value))
        }
    }

    /// [`index_u64_fast`](Self::index_u64_fast) of each value of `values` into `out`,
    /// with `i32::MIN` for `None` (the index of no bin: the caller then asks
    /// [`index_u64`](Self::index_u64)). Only the first `min(len)` entries are written.
    ///
    /// The sketches' slice records call it a chunk at a time; a mapping may override it
    /// with a loop the compiler can vectorise ([`IntMapping`] does on x86-64 and aarch64).
    ///
    /// ```
    /// use tailguard::sketch::{IndexMapping, IntMapping};
    /// let m = IntMapping::K6;
    /// let mut out = [0; 3];
    /// m.index_u64_fast_slice(&[129, 0, 7], &mut out);
    /// assert_eq!(out, [m.index_u64(129), i32::MIN, i32::MIN]);
    /// ```
    #[inline]
    fn index_u64_fast_slice(&self, values: &[u64], out: &mut [i32]) {
        for (o, &v) in out.iter_mut().zip(values) {
            *o = self.index_u64_fast(v).unwrap_or(i32::MIN);
        }
    }

    /// The smallest value of bin `index`.
    fn lower_bound(&self, index: i32) -> f64;

    /// The representative value of bin `index`: `lower_bound(index) * (1 + alpha)`.
    fn value(&self, index: i32) -> f64 {
        self.lower_bound(index) * (1.0 + self.relative_accuracy())
    }

    /// The upper edge of bin `index` as a whole number (nanoseconds, say), saturating:
    /// at or above the values the bin holds, so a hedge delay taken there never sits below
    /// the percentile. What a [`Window`](crate::window::Window) publishes with its cached
    /// quantile ([`cached_upper_bound`](crate::window::Window::cached_upper_bound)).
    ///
    /// The default is `value(index) / (1 - alpha)` (the edge `lower_bound * gamma` of a
    /// logarithmic bin), truncated, in `f64`. [`IntMapping`] overrides it with integer
    /// operations only, exact: its bin edges are whole numbers from 2^k up.
    ///
    /// ```
    /// use tailguard::sketch::{IndexMapping, IntMapping};
    /// let m = IntMapping::K6;
    /// let i = m.index_u64(1_000_000);
    /// let edge = m.upper_bound_u64(i);
    /// assert!(edge >= 1_000_000 && m.index_u64(edge + 1) > i);
    /// ```
    fn upper_bound_u64(&self, index: i32) -> u64 {
        // The cast truncates and saturates (NaN gives 0).
        (self.value(index) * (1.0 / (1.0 - self.relative_accuracy()))) as u64
    }
}

fn check_accuracy(alpha: f64) -> Result<(), ConfigError> {
    if alpha > 0.0 && alpha < 1.0 {
        Ok(())
    } else {
        Err(ConfigError::InvalidAccuracy)
    }
}

/// DataDog's floor, as an `i32`, saturating (NaN gives 0): `x` truncated toward zero, and
/// one lower for any `x < 0`, so a negative whole number goes one lower than `floor` would
/// put it. Go and Java compute their keys this way (`(int) x - 1` for negative `x`); doing
/// the same keeps every value in their bin.
#[inline]
fn datadog_floor(x: f64) -> i32 {
    let t = x as i32; // truncates toward zero, saturates
    if x < 0.0 {
        t.saturating_sub(1)
    } else {
        t
    }
}

// The layout of an f64 (shared with `otel_mapping`).
pub(super) const MANTISSA_BITS: u32 = 52;
pub(super) const MANTISSA_MASK: u64 = (1 << MANTISSA_BITS) - 1;
pub(super) const EXPONENT_BIAS: i32 = 1023;

/// The unbiased binary exponent of a positive float (subnormals report -1023).
#[inline]
fn exponent(bits: u64) -> i32 {
    (((bits >> MANTISSA_BITS) & 0x7ff) as i32).wrapping_sub(EXPONENT_BIAS) // in [-1023, 1024]
}

/// The significand minus one, in [0, 1).
#[inline]
fn significand_minus_one(bits: u64) -> f64 {
    significand(bits) - 1.0
}

/// The significand, in [1, 2) (DataDog's `getSignificandPlusOne`).
#[inline]
fn significand(bits: u64) -> f64 {
    f64::from_bits((bits & MANTISSA_MASK) | ((EXPONENT_BIAS as u64) << MANTISSA_BITS))
}

/// Defines `$name(v: $t, bits: u32) -> $t`: `v` rounded to a multiple of `2^bits` (`1 <=
/// bits < width`), to nearest, ties to even, as floating point rounds. The caller keeps
/// `v + 2^bits` in range. Two widths: 128 bits where products need them, 64 where a 32-bit
/// core's record path must stay short.
macro_rules! round_low_bits {
    ($name:ident, $t:ty) => {
        pub(crate) fn $name(v: $t, bits: u32) -> $t {
            let unit: $t = 1 << bits;
            let rest = v & unit.wrapping_sub(1);
            let down = v ^ rest;
            let half = unit >> 1;
            if rest > half || (rest == half && down & unit != 0) {
                down.wrapping_add(unit)
            } else {
                down
            }
        }
    };
}
round_low_bits!(round_low_bits, u128);
round_low_bits!(round_low_bits_u64, u64);

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
            multiplier: Self::datadog_multiplier(gamma, ln_base),
            offset,
        })
    }

    /// The multiplier DataDog's Java library derives from `gamma`, `ln(base) /
    /// ln1p(gamma - 1)`, to the last bit, so that values on the edge of a bin land where Java
    /// puts them (Go's `1 / math.Log(gamma)` for `NONE` gives the same bits for tailguard's
    /// gammas; its `1 / math.Log2(gamma)` for `CUBIC` can differ by one unit in the last
    /// place: see the [`proto`](crate::proto) docs).
    fn datadog_multiplier(gamma: f64, ln_base: f64) -> f64 {
        ln_base / libm::log1p(gamma - 1.0)
    }

    /// The index of the bin whose value has logarithm `approx_log`.
    #[inline]
    fn index(&self, approx_log: f64) -> i32 {
        datadog_floor(approx_log * self.multiplier + self.offset)
    }

    /// The logarithm at which bin `index` starts (the inverse of [`index`](Self::index)).
    fn lower_bound_log(&self, index: i32) -> f64 {
        (index as f64 - self.offset) / self.multiplier
    }
}

/// The memory-optimal mapping: `index = floor(ln(v) / ln(gamma))`, with DataDog's floor
/// (a negative whole number goes one lower, as in DataDog's Go and Java libraries).
///
/// Fewest bins for a given accuracy. A record computes the logarithm from the float's
/// exponent, a 128-entry table and a cubic (about 50 instructions on x86-64, no division),
/// whose error is proven below `2^-34`. Where that bound cannot decide the bin (a value
/// closer to a bin edge than about `6e-9` of the bin's width at 1 %) and for zero,
/// subnormals and `+inf`, the index falls back to `libm::log`, so **every key is the one `floor(libm::log(v) *
/// multiplier + offset)` gives**, the computation DataDog's Go and Java libraries make. This
/// holds on every input as long as `libm::log` is within `2^-34` of the exact logarithm
/// (it is documented within one unit in the last place, `2^-43` at most here); were libm
/// itself misrounded by a few units, the keys would still be today's.
///
/// A bin's [`lower_bound`](IndexMapping::lower_bound) (and so its representative
/// [`value`](IndexMapping::value) and every quantile) is `e^((index - offset) /
/// multiplier)`, DataDog's formula, with `e^x` from a 64-entry table and a polynomial
/// rather than `libm::exp` (no division): within `2^-51` relative of the exact value
/// (proven in the source; a unit test checks it against `libm::exp` over the whole
/// range), so it may differ from Java's or Go's in its last bit or two.
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
    /// The 1 % mapping of [`LogLatency`](super::presets::LogLatency), built at compile time
    /// from the bits `from_valid_accuracy(0.01)` computes with `log1p` (a test checks them
    /// equal, so they cannot drift).
    pub(crate) const ONE_PERCENT: LogMapping = LogMapping {
        scale: Scale {
            alpha: 0.01,
            gamma: f64::from_bits(0x3ff0_52bf_5a81_4afd),
            multiplier: f64::from_bits(0x4048_ffc9_629d_2370),
            offset: 0.0,
        },
    };

    /// `alpha` must already be checked to lie in (0, 1).
    pub(crate) fn from_valid_accuracy(alpha: f64) -> Self {
        let gamma = accuracy_base(alpha);
        LogMapping {
            scale: Scale {
                alpha,
                gamma,
                multiplier: Scale::datadog_multiplier(gamma, 1.0),
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
    const DEFAULT: Self = LogMapping::ONE_PERCENT;

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

    // DataDog's key, `floor(libm::log(value) * multiplier + offset)` with DataDog's floor,
    // through `fast_log::ln`; `libm::log` only within a hair of a bin edge (see KEY_SLACK
    // for the proof that the key is the same).
    #[inline]
    fn index(&self, value: f64) -> i32 {
        let Scale {
            multiplier, offset, ..
        } = self.scale;
        if let Some(ln) = fast_log::ln(value) {
            let w = ln * multiplier;
            let slack = multiplier * KEY_SLACK;
            // The exact path's key argument lies in [low, high].
            let below = w - slack;
            let low = below + offset;
            let high = (w + slack) + offset;
            // A guess at floor(low): round to nearest (the bits of `1.5 * 2^52 + x` end
            // with the integer nearest x, for |x| < 2^51) of about `low - 1/2`, one
            // addition sooner than from `low` (the offset's half is computed aside, in
            // parallel). Whatever the guess is, the test below only passes if no integer
            // lies in [low, high] and the guess is the one below them: then every value
            // between has that floor, DataDog's included (no negative whole number among
            // them). NaN and infinities (a multiplier of +inf, alpha below about 5.6e-17)
            // fail it, as does a key outside the i32 range (the guess wraps around).
            let (_, guess) = nearest_integer(below + (offset - 0.5));
            let floor = f64::from(guess);
            if floor < low && high < floor + 1.0 {
                return guess;
            }
        }
        self.exact_index(value)
    }

    fn lower_bound(&self, index: i32) -> f64 {
        fast_exp::exp(self.scale.lower_bound_log(index))
    }
}

/// How far `fast_log::ln(v) * multiplier` may lie from `libm::log(v) * multiplier` (both
/// rounded), per unit of multiplier: `2^-33`.
///
/// With `m` the multiplier, `L = libm::log(v)`, `z = fast_log::ln(v)`, `P = fl(L * m)` and
/// `w = fl(z * m)`, for a positive normal `v` (`|ln v| < 709.8`):
///
/// `|P - w| <= |P - L m| + m |L - ln v| + m |ln v - z| + |z m - w|`
/// `<= 2^-53 |L m| + m 2^-43 + m 2^-34 + 2^-53 |z m|`
/// `<= m (2^-42.5 + 2^-43 + 2^-34) < m * 1.005 * 2^-34`,
///
/// using libm's documented bound (below one unit in the last place, at most `2^-43` for a
/// result below 1024) and `fast_log::LN_ERROR`. `KEY_SLACK = 2^-33` doubles that: the keys
/// stay identical even if libm's `log` were off by up to `2^-34` (`5.8e-11`, hundreds of
/// units in the last place or more). `s = m * KEY_SLACK` is exact (a power of two), so `P`
/// lies in `[w - s, w + s]`; rounding is monotone and `P` is a double, so
/// `fl(w - s) <= P <= fl(w + s)`, then `fl(fl(w - s) + offset) <= fl(P + offset) <=
/// fl(fl(w + s) + offset)`: the exact path's key argument lies between the two that the
/// fast path checks. When no integer lies between those two, DataDog's floor (monotone)
/// gives every value between them the same key; else [`LogMapping::exact_index`] computes
/// it as before (a value within `2 m 2^-33` of a bin edge: a chance of about `1.2e-8` at
/// 1 %).
const KEY_SLACK: f64 = 1.0 / (1u64 << 33) as f64;

// The derivation above, checked when the crate compiles: the fast logarithm's bound, libm's
// (2^-43) and the two roundings (2^-42.5 for |ln v| < 710) leave about half of KEY_SLACK
// spare.
const _: () = assert!(
    fast_log::LN_ERROR + 1.0 / (1u64 << 43) as f64 + 710.0 / (1u64 << 52) as f64
        <= KEY_SLACK * 0.51
);

/// `1.5 * 2^52`: adding it to a double below `2^51` in size rounds that to an integer,
/// which the low bits of the sum hold (two's complement).
const ROUND_TO_INTEGER: f64 = 6_755_399_441_055_744.0;

/// `x` rounded to the nearest integer (ties to even), as a double (exact for `|x| < 2^51`)
/// and as an `i32` (for `|x| < 2^31`; beyond, it wraps): the sum with
/// [`ROUND_TO_INTEGER`] rounds `x`, its low 32 bits are the integer, and taking the
/// constant off again is exact. No float-to-integer conversion, whose latency sits in
/// the dependent chain of every caller here.
#[inline(always)]
pub(super) fn nearest_integer(x: f64) -> (f64, i32) {
    let shifted = x + ROUND_TO_INTEGER;
    (shifted - ROUND_TO_INTEGER, shifted.to_bits() as i32)
}

impl LogMapping {
    /// The key as computed before the fast logarithm: `libm::log`, times the multiplier,
    /// plus the offset, DataDog's floor. Out of line: only values a hair from a bin edge,
    /// and zero, subnormals and +inf, come here.
    #[cold]
    #[inline(never)]
    fn exact_index(&self, value: f64) -> i32 {
        self.scale.index(libm::log(value))
    }
}

// Coefficients of the cubic that interpolates log2 between powers of two, chosen (by
// DataDog) to minimise the number of bins while keeping the accuracy guarantee.
// (Shared with the proto re-binning, which replays DataDog's cubic.)
pub(crate) const CUBIC_A: f64 = 6.0 / 35.0;
pub(crate) const CUBIC_B: f64 = -3.0 / 5.0;
pub(crate) const CUBIC_C: f64 = 10.0 / 7.0;
/// How much less the cubic pulls values apart than the exact log2: the multiplier is
/// scaled by this so accuracy holds everywhere (about 1 % more bins than [`LogMapping`]).
const CUBIC_CORRECTION: f64 = 7.0 / (10.0 * core::f64::consts::LN_2);

/// A fast approximation of [`LogMapping`]: the float's binary exponent plus a cubic in its
/// mantissa. No `ln`, about 1 % more bins. DataDog's `CUBIC` interpolation.
///
/// Indices are DataDog's. A bin's [`lower_bound`](IndexMapping::lower_bound) (and so its
/// representative [`value`](IndexMapping::value)) inverts the cubic with a polynomial and
/// one Halley step rather than DataDog's Cardano formula: within about two units in the
/// last place of the exact inverse, where Cardano's is within about nine, so it may differ
/// from Java's or Go's in its last bits.
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
    /// The 1 % mapping of [`CubicLatency`](super::presets::CubicLatency), built at compile
    /// time from the bits `from_valid_accuracy(0.01)` computes with `exp`, `log` and
    /// `log1p` (a test checks them equal, so they cannot drift).
    pub(crate) const ONE_PERCENT: CubicMapping = CubicMapping {
        scale: Scale {
            alpha: 0.01,
            gamma: f64::from_bits(0x3ff0_51ed_e9e7_f1c2),
            multiplier: f64::from_bits(0x4041_7fd9_c507_98e3),
            offset: 0.0,
        },
    };

    /// `alpha` must already be checked to lie in (0, 1).
    pub(crate) fn from_valid_accuracy(alpha: f64) -> Self {
        // DataDog's gamma for this accuracy (Java's `pow(base, 10 ln 2 / 7)`, to the bit for
        // the accuracies tests check), and the multiplier Java derives from it.
        let gamma = libm::exp(libm::log(accuracy_base(alpha)) / CUBIC_CORRECTION);
        CubicMapping {
            scale: Scale {
                alpha,
                gamma,
                multiplier: Scale::datadog_multiplier(gamma, core::f64::consts::LN_2),
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
}

impl IndexMapping for CubicMapping {
    const INTERPOLATION: Interpolation = Interpolation::Cubic;
    const DEFAULT: Self = CubicMapping::ONE_PERCENT;

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
        interpolated_exp2(self.scale.lower_bound_log(index), cubic_inverse)
    }
}

/// The inverse of an interpolated `log2` (DataDog's approximations: `e + P(s)` for `2^e (1 + s)`,
/// `P` increasing from 0 to 1 on [0, 1]): `2^e (1 + s)` where `e = floor(x)` and `s` is
/// `inverse(x - e)`, which must lie in [0, 1]. `0` or `+inf` where that is beyond `f64`. A
/// bin's lower bound for [`CubicMapping`] (with [`cubic_inverse`]), and the edge of a
/// foreign bin of any interpolation when re-binning.
#[inline]
pub(crate) fn interpolated_exp2(x: f64, inverse: impl Fn(f64) -> f64) -> f64 {
    if (-1022.0..1023.0).contains(&x) {
        // The usual case, without libm's `floor` and `ldexp` calls: the nearest integer,
        // one lower if that is above `x`, is the floor, as a double and as an integer.
        let (nearest, n) = nearest_integer(x);
        let above = nearest > x;
        let floor = nearest - if above { 1.0 } else { 0.0 };
        let e = n.wrapping_sub(i32::from(above));
        // e in [-1022, 1022]: a normal power of two, so the product is exact.
        return (1.0 + inverse(x - floor)) * normal_power_of_two(e);
    }
    if x.is_nan() {
        return x;
    }
    if x.abs() > 2000.0 {
        // Far beyond f64 (an infinite `x` included, where `x - floor(x)` is NaN).
        return if x > 0.0 { f64::INFINITY } else { 0.0 };
    }
    // The edges of the range: subnormal results, or results near `f64::MAX` (`ldexp`
    // rounds and saturates to +inf).
    let e = libm::floor(x);
    libm::ldexp(1.0 + inverse(x - e), e as i32)
}

/// `2^e` for `e` in [-1022, 1023], built from its bits (a normal double, so multiplying a
/// normal double by it is exact while the product stays normal): what `libm::ldexp` gives
/// there, without its call and range checks. Outside that range the bits are not `2^e`.
#[inline(always)]
pub(super) fn normal_power_of_two(e: i32) -> f64 {
    f64::from_bits((e.wrapping_add(EXPONENT_BIAS) as u64) << MANTISSA_BITS)
}

/// `v > 0` with `lz` leading zeros, cut for a mapping of `2^k` bins per power of two
/// (`k <= 20`): `2^k` plus the top `k` bits below the leading one, and the bits below
/// those, moved up to bit 31 (the position inside the bin, in units of 2^-32 of a bin).
///
/// On a 64-bit core: one 64-bit shift puts the leading one at bit 32 + k, so the high word
/// is the first and the low word the second (3 shifts fewer than the 32-bit way).
#[cfg(target_pointer_width = "64")]
#[inline(always)]
fn split_u32(v: u32, lz: u32, k: u32) -> (i32, u32) {
    split_u32_wide(v, lz, k)
}

/// [`split_u32`] on a 32-bit core: 32-bit shifts only (a 64-bit shift by a variable
/// amount is about ten instructions there).
#[cfg(not(target_pointer_width = "64"))]
#[inline(always)]
fn split_u32(v: u32, lz: u32, k: u32) -> (i32, u32) {
    split_u32_narrow(v, lz, k)
}

#[cfg_attr(not(any(test, target_pointer_width = "64")), allow(dead_code))]
#[inline(always)]
fn split_u32_wide(v: u32, lz: u32, k: u32) -> (i32, u32) {
    // lz + k + 1 <= 52: the leading one stays below bit 64.
    let w = u64::from(v) << lz.wrapping_add(k).wrapping_add(1);
    ((w >> 32u32) as i32, w as u32) // < 2^21, and the low word
}

#[cfg_attr(not(any(test, not(target_pointer_width = "64"))), allow(dead_code))]
#[inline(always)]
fn split_u32_narrow(v: u32, lz: u32, k: u32) -> (i32, u32) {
    let aligned = v << lz; // the leading one is bit 31
                           // k <= 20: both shift amounts are below 32.
    let lead_and_top = aligned >> 31u32.wrapping_sub(k);
    (lead_and_top as i32, aligned << k << 1u32)
}

/// The exact bin of `value` (`2^e <= value < 2^(e + 1)`, `32 <= e <= 63`) after the two
/// roundings Go and Java make (to an `f64`, then `e + significand` to 47 bits of fraction,
/// 46 from 2^63), for the `k` whose key is Go's (`datadog_linear::go_decides`): then Go's
/// multiplication by `2^k` and addition of `2^k` are exact (the rounded value is a multiple
/// of 2^5, or 2^6, below 2^59), and the key is that bin. Rounding is monotone and every bin
/// edge survives both roundings, so the value reaches edge `E` exactly when
/// `approx_log * 2^52 >= E - 16.5` (`E - 32.5` from 2^63, where the second rounding's unit
/// is 2^6): a tie at `E - 16` rounds to `E`, which is even, and one at `E - 16.5` to
/// `E - 16`, even too. So the bin is the value's own once [`WIDE_MARGINS`] is added: a few
/// 64-bit operations instead of two roundings. (tests/int_mapping.rs compares these bins
/// with the libraries' float arithmetic, at the margins too.)
// `e & 31` indexes the 32 entries: cannot panic.
#[allow(clippy::indexing_slicing)]
#[inline]
fn wide_exact_bin_rounded(value: u64, e: u32, k: u32) -> i32 {
    let margin = WIDE_MARGINS[(e & 31) as usize]; // e - 32 = e & 31 for e in 32..=63
    match value.overflowing_add(u64::from(margin)) {
        // Past 2^64: the value rounds up to 2^64, the first bin of the octave of 64.
        (_, true) => 64i32 << k,
        // (value + margin) >> (e - k) is 2^k plus the bin inside the octave (2^(k + 1) when
        // it carries into the next octave): the index is (e - 1) * 2^k plus that.
        (sum, false) => {
            ((e as i32).wrapping_sub(1) << k).wrapping_add((sum >> e.wrapping_sub(k)) as i32)
        }
    }
}

/// The margin [`wide_exact_bin_rounded`] adds to a value of `2^e` to `2^(e + 1)`, by
/// `e - 32`, in the value's units (`2^(e - 52)` of `approx_log * 2^52`): `16.5 * 2^(e - 52)`
/// from 2^53 up (`32.5 * 2^11` at 2^63), and below, where the value is whole in those
/// units, `16 >> (52 - e)` (0 below 2^48, where nothing rounds).
const WIDE_MARGINS: [u32; 32] = wide_margins();

#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)] // compile time
const fn wide_margins() -> [u32; 32] {
    let mut out = [0u32; 32];
    let mut e = 32u32;
    while e <= 63 {
        out[(e - 32) as usize] = if e > 52 {
            let s = e - 52; // 1..=11
            let whole = if e == 63 { 32 } else { 16 };
            (whole << s) | (1 << (s - 1))
        } else {
            16 >> (52 - e)
        };
        e += 1;
    }
    out
}

/// Largest number of mantissa bits [`IntMapping`] uses (alpha = 4.8e-7).
const INT_MAX_BITS: u32 = 20;

/// An integer-only log-linear mapping for cores without a double-precision FPU (Cortex-M0,
/// RV32IMC, and the Cortex-M4F, whose FPU is single precision).
///
/// Each power of two is split into `2^k` equal-width bins, so a value's bin is
/// `(exponent << k) | (top k mantissa bits)`: one count-leading-zeros and two shifts from
/// a `u64`, with no float arithmetic. This is DataDog's `LINEAR` interpolation with
/// `gamma = 2^(2^-k)`, which [`proto`](crate::proto) writes in Go's default layout
/// (`indexOffset = 2^k`, keys `2^k` above tailguard's indices).
///
/// **Bin for bin with DataDog's Go and Java libraries.** Those libraries compute the key
/// in `f64` with a multiplier they derive from gamma in floating point, a few units in the
/// last place away from `2^k` (below it for k = 6, so every integer from 2 to 127, every
/// power of two from 2 up and many whole numbers beyond, all bin edges, land one bin lower
/// there; above it for k = 7, where edges below 1/2 land lower). A value on a bin edge, or
/// within a hair of one (less than `2^-24` of a bin for k <= 8, more for larger k), can
/// therefore land in the bin next to its exact one. tailguard replays both libraries'
/// arithmetic for exactly those values (integer operations only: the record path stays
/// free of floats) and gives the bin both give; where Go and Java disagree with each other
/// (a few dozen edges for most `k`, for example the edges from 1/2 to 1 at k = 5; every
/// edge at k = 9 and 11, where Go's multiplier is exact and Java's is not), it keeps the
/// exact bin. All other values are in their exact bin in all three. The
/// multipliers come from the libraries themselves (sketches-go on Go 1.19, amd64: Go on
/// arm64 fuses the multiply-add and can differ again; sketches-java 0.8.3), and
/// `tests/datadog_keys.rs` compares with keys the real libraries computed.
///
/// ```
/// use tailguard::sketch::{IndexMapping, IntMapping};
/// let m = IntMapping::K6;
/// // 7 = 2^2 * (1 + 48/64): exactly the lower edge of bin (2 << 6) + 48 = 176, which
/// // DataDog's Go and Java libraries (and so tailguard) put in bin 175.
/// assert_eq!(m.index_u64(7), 175);
/// assert_eq!(m.index_u64(8), m.index_u64(7) + 16); // 8 = 2^3: 192, one lower too
/// assert_eq!(m.index_u64(129), 448); // inside its bin: the exact one
/// ```
///
/// From 2^47 up, Go and Java's approximate log itself rounds away low mantissa bits
/// (exponent plus significand in one `f64`), which can move a value onto the next edge;
/// [`index`](IndexMapping::index) and [`index_u64`](IndexMapping::index_u64) do the same,
/// so both paths agree for every value.
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
    /// How near a bin edge a 32-bit value must be for DataDog's libraries to put it in
    /// another bin, and the largest `(inside + band) mod 2^32` of such a value: see
    /// `index_u64`. Derived from `k` (kept here so the record path reads no table).
    near: (u32, u32),
}

impl IntMapping {
    /// 32 bins per power of two: alpha = 1.56 %.
    pub const K5: IntMapping = IntMapping::of_valid_bits(5);
    /// 64 bins per power of two: alpha = 0.78 %.
    pub const K6: IntMapping = IntMapping::of_valid_bits(6);
    /// 128 bins per power of two: alpha = 0.39 %.
    pub const K7: IntMapping = IntMapping::of_valid_bits(7);

    /// The mapping with `2^k` bins per power of two. Errors if `k > 20`.
    pub const fn with_mantissa_bits(k: u32) -> Result<Self, ConfigError> {
        if k > INT_MAX_BITS {
            Err(ConfigError::InvalidAccuracy)
        } else {
            Ok(IntMapping::of_valid_bits(k))
        }
    }

    /// The mapping for `k <= 20`.
    // The table has 32 entries and `k & 31 < 32`: the index cannot be out of bounds.
    #[allow(clippy::indexing_slicing)]
    const fn of_valid_bits(k: u32) -> Self {
        // Where every 32-bit value lands in its exact bin, the record path's near-edge test
        // declines only the values exactly on an edge (`inside == 0`, zero among them, which
        // the slice path relies on), and `index_near_edge_u32` settles those without a
        // replay.
        let near = if datadog_linear::exact_below_2_47(k) {
            (0, 0)
        } else {
            datadog_linear::NEAR_U32[(k & 31) as usize]
        };
        IntMapping { k, near }
    }

    /// `k`: the mapping has `2^k` bins per power of two.
    pub const fn mantissa_bits(&self) -> u32 {
        self.k
    }

    /// [`relative_accuracy`](IndexMapping::relative_accuracy), in `const` code: the bits
    /// of `tanh(2^-(k+1))` for each `k` (a test checks them against the `tanh`).
    // k <= 20 (checked at construction) indexes the 21 entries.
    #[allow(clippy::indexing_slicing)]
    pub(crate) const fn accuracy(&self) -> f64 {
        f64::from_bits(INT_ACCURACY_BITS[self.k as usize])
    }

    /// The index of the value whose `approx_log` is `x / 2^52`: its exact bin, unless it
    /// is so close to an edge that DataDog's libraries may put it elsewhere (see the type's
    /// docs); then where both put it.
    #[inline]
    fn index_of(&self, x: i64) -> i32 {
        if datadog_linear::near_edge(self.k, x) {
            datadog_linear::key(self.k, x)
        } else {
            self.exact_index(x)
        }
    }

    /// The exact bin of the value whose `approx_log` is `x / 2^52`.
    #[inline]
    fn exact_index(&self, x: i64) -> i32 {
        (x >> MANTISSA_BITS.wrapping_sub(self.k)) as i32 // |x| < 1026 * 2^52: fits
    }

    /// [`index_of`](Self::index_of) of an integer below 2^47: its exact bin where that is
    /// DataDog's too (`datadog_linear::exact_below_2_47`), with no test for an edge.
    #[inline]
    fn index_of_integer(&self, x: i64) -> i32 {
        if datadog_linear::exact_below_2_47(self.k) {
            self.exact_index(x)
        } else {
            self.index_of(x)
        }
    }

    /// [`index_u64`](IndexMapping::index_u64) of a 32-bit value near a bin edge (`v > 0`).
    #[cold]
    #[inline(never)]
    fn index_near_edge_u32(&self, v: u32) -> i32 {
        let lz = v.leading_zeros(); // v > 0: lz <= 31
        let e = 31i32.wrapping_sub(lz as i32);
        let aligned = v << lz; // the leading one is bit 31
                               // approx_log * 2^52: the exponent, then the 31 bits below the leading one.
        let x = (i64::from(e) << MANTISSA_BITS) | (i64::from(aligned & 0x7fff_ffff) << 21u32);
        self.index_of_integer(x)
    }

    /// [`index_u64`](IndexMapping::index_u64) from 2^32 up, still with integers only.
    ///
    /// Go and Java see the value as an `f64` (53 significant bits), then add its exponent
    /// to its significand, which keeps 47 bits of fraction (46 from 2^63): both round to
    /// nearest, ties to even, in that order. Below 2^47 neither rounding changes anything.
    #[inline(never)] // values of 4.3 s and more in ns: not the hot path
    fn index_wide(&self, value: u64) -> i32 {
        let e = 63u32.wrapping_sub(value.leading_zeros()); // the leading one's position: 32..=63
        if datadog_linear::go_decides(self.k) {
            return wide_exact_bin_rounded(value, e, self.k);
        }
        let fraction = value ^ (1u64 << e); // the e bits below it
        if e < 47 {
            // No rounding, and the 52 bits below the leading one are its `e` bits shifted up.
            let x = (u64::from(e) << MANTISSA_BITS) | fraction << MANTISSA_BITS.wrapping_sub(e);
            return self.index_of_integer(x as i64);
        }
        // approx_log * 2^52 with the value's fraction rounded to 52 bits (the f64): a
        // carry out of the fraction moves into the exponent, as it would in the value.
        let mut x = if e > MANTISSA_BITS {
            let drop = e.wrapping_sub(MANTISSA_BITS); // 1..=11
            (u64::from(e) << MANTISSA_BITS).wrapping_add(round_low_bits_u64(fraction, drop) >> drop)
        } else {
            (u64::from(e) << MANTISSA_BITS) | fraction << MANTISSA_BITS.wrapping_sub(e)
        };
        // e + significand lies in [e + 1, e + 2): 2^5 or 2^6 from e = 63, leaving 47 or 46
        // bits of fraction, to which the sum is rounded.
        let e = (x >> MANTISSA_BITS) as u32; // 47..=64
        let fraction_bits = if e >= 63 { 46 } else { 47 };
        if e > fraction_bits {
            x = round_low_bits_u64(x, MANTISSA_BITS.wrapping_sub(fraction_bits));
        }
        self.index_of(x as i64) // x < 65 * 2^52
    }

    /// The widest bin, at the start of each power of two, spans a factor of `1 + 2^-k`,
    /// whose natural log is below `2^-k`; so `tanh(2^-(k+1))` bounds the error (DataDog
    /// states the same bound for `LINEAR` with this gamma).
    fn accuracy_of_bits(k: u32) -> f64 {
        accuracy_of_width(1.0 / (1u32 << k) as f64)
    }
}

/// `IntMapping::accuracy_of_bits(k)` for `k` in `0..=20`, as bits.
const INT_ACCURACY_BITS: [u64; INT_MAX_BITS as usize + 1] = [
    0x3fdd_9353_d756_8af3,
    0x3fcf_597e_a69a_1c86,
    0x3fbf_d599_2bc4_b834,
    0x3faf_f559_97e0_30d7,
    0x3f9f_fd55_9992_b1de,
    0x3f8f_ff55_5999_7df9,
    0x3f7f_ffd5_5599_992b,
    0x3f6f_fff5_5559_9998,
    0x3f5f_fffd_5555_999a,
    0x3f4f_ffff_5555_599a,
    0x3f3f_ffff_d555_5599,
    0x3f2f_ffff_f555_555a,
    0x3f1f_ffff_fd55_5555,
    0x3f0f_ffff_ff55_5555,
    0x3eff_ffff_ffd5_5556,
    0x3eef_ffff_fff5_5555,
    0x3edf_ffff_fffd_5556,
    0x3ecf_ffff_ffff_5555,
    0x3ebf_ffff_ffff_d555,
    0x3eaf_ffff_ffff_f555,
    0x3e9f_ffff_ffff_fd55,
];

impl IndexMapping for IntMapping {
    const INTERPOLATION: Interpolation = Interpolation::Linear;
    const DEFAULT: Self = IntMapping::K6;

    fn with_relative_accuracy(alpha: f64) -> Result<Self, ConfigError> {
        check_accuracy(alpha)?;
        (0..=INT_MAX_BITS)
            .find(|&k| Self::accuracy_of_bits(k) <= alpha)
            .map(IntMapping::of_valid_bits)
            .ok_or(ConfigError::InvalidAccuracy)
    }

    fn relative_accuracy(&self) -> f64 {
        // A table lookup: `tanh` is costly everywhere and soft-float on a microcontroller,
        // and quantile queries read the accuracy.
        self.accuracy()
    }

    fn gamma(&self) -> f64 {
        // k <= 20: always in the table (DataDog's own bits for 2^(2^-k)).
        datadog_linear::GAMMA_BITS
            .get(self.k as usize)
            .map_or(2.0, |&bits| f64::from_bits(bits))
    }

    fn index_offset(&self) -> f64 {
        0.0
    }

    #[inline]
    fn index(&self, value: f64) -> i32 {
        let bits = value.to_bits();
        // DataDog's approximate log2, computed as Go and Java compute it: exponent plus
        // significand, then minus one. The sum rounds away low mantissa bits when the
        // exponent is large (or very negative), which can move a value onto a bin edge.
        let approx_log = (exponent(bits) as f64 + significand(bits)) - 1.0;
        // Exact: approx_log is a double in [-1075, 1025), with at most 52 fraction bits.
        let x = (approx_log * (1u64 << MANTISSA_BITS) as f64) as i64;
        self.index_of(x)
    }

    #[inline]
    fn index_u64(&self, value: u64) -> i32 {
        if let Some(index) = self.index_u64_fast(value) {
            return index;
        }
        if value == 0 {
            return i32::MIN;
        }
        // The fast path declined a 32-bit value: it lies near a bin edge.
        match u32::try_from(value) {
            Ok(v) => self.index_near_edge_u32(v),
            Err(_) => self.index_wide(value),
        }
    }

    #[inline]
    fn index_u64_fast(&self, value: u64) -> Option<i32> {
        // Latencies in ns below 4.3 s take the 32-bit path: half the instructions on a
        // 32-bit core, where every u64 shift is two or three. One compare finds them and
        // leaves out 0.
        // (On a 32-bit core two word tests, on x86-64 a shift: both cheaper than the
        // `value - 1` form.)
        let v = u32::try_from(value).ok().filter(|&v| v != 0)?;
        let lz = v.leading_zeros(); // v > 0: lz <= 31
        let (lead_and_top, inside) = split_u32(v, lz, self.k);
        // Only near its start or its end can DataDog's libraries put the value elsewhere.
        let (band, last) = self.near;
        if inside.wrapping_add(band) <= last {
            return None;
        }
        // (e - 1) * 2^k + 2^k + top is (e << k) | top, e = 31 - lz (for v = 1, e - 1 = -1
        // and the sum is 0).
        let e_minus_one = 30i32.wrapping_sub(lz as i32);
        Some((e_minus_one << self.k).wrapping_add(lead_and_top))
    }

    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    #[inline]
    fn index_u64_fast_slice(&self, values: &[u64], out: &mut [i32]) {
        // What `index_u64_fast` computes, in a form without a count of leading zeros (no
        // vector instruction for it below AVX-512): a 32-bit value becomes an f64
        // exactly (2^52 + v - 2^52: no rounding), whose exponent and mantissa fields are
        // the bin and the position inside it. Only where an FPU is certain (not on the
        // Cortex-M0: there this is the integer default). `k <= 20`.
        const TWO_52: u64 = 0x4330_0000_0000_0000; // 2^52.to_bits()
        let k = self.k & 31;
        let (band, last) = self.near;
        let exponent_bias = 1023i64 << k;
        for (o, &value) in out.iter_mut().zip(values) {
            let v = value & 0xffff_ffff;
            let bits = (f64::from_bits(TWO_52 | v) - f64::from_bits(TWO_52)).to_bits();
            // (1023 + e) << k | top, minus the bias: (e << k) | top, below 2^26.
            let n = ((bits >> 52u32.wrapping_sub(k)) as i64).wrapping_sub(exponent_bias);
            // The mantissa bits below the top k, the leading 32 of them (v has at most 31).
            let inside = (bits << k.wrapping_add(12) >> 32u32) as u32;
            // `&`, not `&&`: no branch, so that the loop vectorises. Zero needs no test of
            // its own: it sits on an edge (`inside` is 0, which every `near` declines).
            let fast = (value >> 32u32 == 0) & (inside.wrapping_add(band) > last);
            *o = if fast { n as i32 } else { i32::MIN };
        }
    }

    /// The next bin's lower edge `(2^k + top) * 2^(e - k)`, rounded up to a whole number,
    /// plus `edge / 2^32`: DataDog's arithmetic, which this mapping replays, puts values
    /// within a hair above an edge (far less than that) in the bin below it.
    #[inline]
    fn upper_bound_u64(&self, index: i32) -> u64 {
        let Some(next) = index.checked_add(1) else {
            return u64::MAX;
        };
        let k = self.k & 31; // k <= 20
        let e = next >> k; // arithmetic shift: floor division by 2^k
        let top = (next & (1i32 << k).wrapping_sub(1)) as u64; // below 2^k
        let significand = (1u64 << k) | top; // below 2^21
                                             // The edge is significand * 2^(e - k).
        let shift = e.wrapping_sub(k as i32);
        let edge = if shift >= 0 {
            // Saturates from 2^64 up (significand has k + 1 bits).
            if shift > 63i32.wrapping_sub(k as i32) {
                return u64::MAX;
            }
            significand << shift as u32
        } else if shift > -64 {
            // Rounded up: the edge is not a whole number below 2^k.
            let right = shift.unsigned_abs();
            let below = significand & (1u64 << right).wrapping_sub(1);
            (significand >> right).wrapping_add(u64::from(below != 0))
        } else {
            1 // a positive edge below 2^-43
        };
        edge.saturating_add(edge >> 32u32)
    }

    fn lower_bound(&self, index: i32) -> f64 {
        let e = index >> self.k; // arithmetic shift: floor division by 2^k
        let top = index & (1i32 << self.k).wrapping_sub(1);
        libm::ldexp(1.0 + top as f64 / (1u32 << self.k) as f64, e)
    }
}

#[cfg(test)]
mod tests {
    /// `IntMapping::upper_bound_u64` is at or above every whole number of its bin, and
    /// within a hair of the exact edge; the default (float) formula agrees with it to the
    /// mapping's accuracy.
    #[test]
    fn int_upper_bounds_are_whole_number_edges() {
        for m in [
            IntMapping::K5,
            IntMapping::K6,
            IntMapping::K7,
            IntMapping::with_mantissa_bits(0).unwrap(),
        ] {
            let mut v = 1u64;
            while v < 1 << 50 {
                for w in [v, v + 1, v.saturating_sub(1).max(1), v + v / 3] {
                    let i = m.index_u64(w);
                    let ub = m.upper_bound_u64(i);
                    assert!(w <= ub, "{m:?} {w} in bin {i}, bound {ub}");
                    let exact = libm::ceil(m.lower_bound(i + 1));
                    assert!(
                        ub as f64 >= exact && ub as f64 <= exact * (1.0 + 1e-9) + 1.0,
                        "{m:?} {w}: {ub} vs {exact}"
                    );
                    assert!(m.index_u64(ub + 1 + (ub >> 31)) > i, "{m:?} {w}");
                }
                v = v + v / 7 + 1;
            }
        }
        assert_eq!(IntMapping::K6.upper_bound_u64(i32::MAX), u64::MAX);
        assert_eq!(IntMapping::K6.upper_bound_u64(64 << 6), u64::MAX);
        assert_eq!(IntMapping::K6.upper_bound_u64(-(2000 << 6)), 1);
    }
    use super::*;

    #[test]
    fn tabled_accuracies_are_the_computed_ones() {
        for k in 0..=INT_MAX_BITS {
            let m = IntMapping::with_mantissa_bits(k).unwrap();
            assert_eq!(
                m.relative_accuracy().to_bits(),
                IntMapping::accuracy_of_bits(k).to_bits(),
                "{k}"
            );
        }
    }

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
    fn both_ways_of_cutting_a_32_bit_value_agree() {
        let mut v = 0x9e37_79b9u32;
        for k in 0..=INT_MAX_BITS {
            let edges = (0..32).flat_map(|b| {
                let p = 1u32 << b;
                [p, p.wrapping_add(1), p.wrapping_sub(1), p | (p >> 1)]
            });
            for x in edges.chain([u32::MAX, 1, 3, 7]).filter(|&x| x != 0) {
                let lz = x.leading_zeros();
                assert_eq!(
                    split_u32_wide(x, lz, k),
                    split_u32_narrow(x, lz, k),
                    "{x} {k}"
                );
            }
            for _ in 0..10_000 {
                v ^= v << 13;
                v ^= v >> 17;
                v ^= v << 5;
                let lz = v.leading_zeros();
                assert_eq!(
                    split_u32_wide(v, lz, k),
                    split_u32_narrow(v, lz, k),
                    "{v} {k}"
                );
            }
        }
    }

    #[test]
    fn the_slice_index_is_the_fast_index_of_each_value() {
        // Edges, values a hair off them, 0, the ends of the 32-bit path, and random values.
        let mut values = std::vec![0u64, 1, 2, 3, 7, 8, 129, u64::from(u32::MAX), 1 << 32];
        values.extend([(1 << 32) + 1, u64::MAX, 1_000_000, 999_999, 1_000_001]);
        for b in 0..40 {
            let p = 1u64 << b;
            values.extend([p - 1, p, p + 1, p + (p >> 1), p + (p >> 6), p + (p >> 7)]);
        }
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            values.push(x >> (x % 64));
        }
        for k in 0..=INT_MAX_BITS {
            let m = IntMapping::with_mantissa_bits(k).unwrap();
            let mut out = std::vec![0; values.len()];
            m.index_u64_fast_slice(&values, &mut out);
            for (&v, &i) in values.iter().zip(&out) {
                assert_eq!(
                    Some(i).filter(|&i| i != i32::MIN),
                    m.index_u64_fast(v),
                    "{v} {k}"
                );
                if let Some(fast) = m.index_u64_fast(v) {
                    assert_eq!(fast, m.index_u64(v), "{v} {k}");
                }
            }
        }
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
    fn the_floor_is_datadogs() {
        // floor, except that negative whole numbers go one lower (Go's and Java's
        // `(int) x - 1` for x < 0).
        for (x, want) in [
            (-2.0, -3),
            (-1.5, -2),
            (-1.0, -2),
            (-0.5, -1),
            (0.0, 0),
            (0.5, 0),
            (1.0, 1),
            (2.999, 2),
            (-1e12, i32::MIN),
            (1e12, i32::MAX),
        ] {
            assert_eq!(datadog_floor(x), want, "{x}");
        }
        assert_eq!(datadog_floor(f64::NEG_INFINITY), i32::MIN);
        assert_eq!(datadog_floor(f64::INFINITY), i32::MAX);
        assert_eq!(datadog_floor(f64::NAN), 0);
    }

    #[test]
    fn a_computed_index_that_is_a_negative_whole_number_goes_one_lower() {
        // The value of the issue report: ln(v) / ln(gamma) rounds to exactly -9 at 1 %.
        let m = LogMapping::with_relative_accuracy(0.01).unwrap();
        let v = 0.8352651995043221;
        assert_eq!(libm::log(v) * m.scale.multiplier, -9.0);
        assert_eq!(m.index(v), -10);
    }

    /// `CubicMapping::lower_bound` is `2^e (1 + s)`: the fast path (no `floor`, no
    /// `ldexp`) agrees with libm's everywhere it is taken, and the ends saturate.
    #[test]
    fn the_cubic_lower_bound_is_libms_floor_and_ldexp() {
        let libm_way = |x: f64| {
            let e = libm::floor(x);
            libm::ldexp(1.0 + cubic_inverse(x - e), e as i32)
        };
        for i in -4_000_000..4_000_000 {
            let x = f64::from(i) / 3_000.0 + 1e-7;
            assert_eq!(
                interpolated_exp2(x, cubic_inverse).to_bits(),
                libm_way(x).to_bits(),
                "x = {x}"
            );
        }
        for x in [
            -1022.0,
            -1021.5,
            1022.999,
            -1022.0 - 1e-9,
            1023.0,
            1023.5,
            -1074.5,
            -1100.0,
        ] {
            assert_eq!(
                interpolated_exp2(x, cubic_inverse).to_bits(),
                libm_way(x).to_bits(),
                "x = {x}"
            );
        }
        assert_eq!(interpolated_exp2(1e6, cubic_inverse), f64::INFINITY);
        assert_eq!(
            interpolated_exp2(f64::INFINITY, cubic_inverse),
            f64::INFINITY
        );
        assert_eq!(interpolated_exp2(-1e6, cubic_inverse), 0.0);
        assert_eq!(interpolated_exp2(f64::NEG_INFINITY, cubic_inverse), 0.0);
        assert!(interpolated_exp2(f64::NAN, cubic_inverse).is_nan());
    }
}
