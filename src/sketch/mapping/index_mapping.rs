//! What every mapping is: the [`IndexMapping`] trait and DataDog's [`Interpolation`]
//! numbers, and the logarithmic [`Scale`] (DataDog's `gamma`, multiplier and offset) that
//! the log and cubic mappings share.

use crate::sketch::error::ConfigError;

/// The interpolation a mapping uses, as numbered in DataDog's protobuf `IndexMapping`.
///
/// ```
/// use tailguard::sketch::{CubicMapping, IndexMapping, Interpolation, LogMapping};
///
/// assert_eq!(LogMapping::INTERPOLATION, Interpolation::None);
/// assert_eq!(CubicMapping::INTERPOLATION, Interpolation::Cubic);
/// assert_eq!(Interpolation::Cubic as i32, 3); // DataDog's protobuf number
/// ```
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
/// Implemented by [`LogMapping`](super::LogMapping), [`CubicMapping`](super::CubicMapping),
/// [`IntMapping`](super::IntMapping) and [`OtelMapping`](super::OtelMapping). The sketch calls
/// [`index`](Self::index) only with positive values (and `+inf`); indices of values beyond
/// the `i32` range saturate.
///
/// Two more methods, `index_u64_fast` and `positions_below_2_32`, are hidden from these
/// docs: the record paths call them to keep a mapping's rare cases (zero, a value a
/// mapping computes out of line) out of the common one's way. They are no part of what a
/// mapping means, and their defaults are right for any mapping.
///
/// ```
/// use tailguard::sketch::{CubicMapping, IndexMapping, IntMapping, LogMapping, OtelMapping};
///
/// // What every mapping promises, whichever it is.
/// fn check<M: IndexMapping>(alpha: f64) {
///     let m = M::with_relative_accuracy(alpha).unwrap();
///     assert!(m.relative_accuracy() <= alpha); // never less accurate than asked
///     assert!(m.gamma() > 1.0 && m.index_offset().is_finite());
///     for v in [1.3, 3.7, 1234.5, 1e9] {
///         let i = m.index(v);
///         // The bin holds v: between its lower bound and the next bin's (at a bin edge,
///         // a mapping's own convention says which of the two holds it: OpenTelemetry's
///         // buckets are `(lower, upper]`, DataDog's `[lower, upper)`).
///         assert!(m.lower_bound(i) <= v && v <= m.lower_bound(i + 1));
///         // Its representative is within alpha of v.
///         assert!((m.value(i) - v).abs() <= m.relative_accuracy() * v * (1.0 + 1e-12));
///     }
///     assert_eq!(m.index_u64(1_000_000), m.index(1e6));
/// }
/// check::<LogMapping>(0.01);
/// check::<CubicMapping>(0.01);
/// check::<IntMapping>(0.01);
/// check::<OtelMapping>(0.01);
/// ```
pub trait IndexMapping: Copy + PartialEq + core::fmt::Debug {
    /// The interpolation, as DataDog's protobuf names it.
    const INTERPOLATION: Interpolation;

    /// A mapping of this type that exists at compile time: the latency presets' (1 % for
    /// [`LogMapping`](super::LogMapping) and [`CubicMapping`](super::CubicMapping),
    /// [`IntMapping::K6`](super::IntMapping::K6), scale 5 for
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
    /// least as accurate (never less). Errors unless `0 < alpha < 1`, and for an `alpha` so
    /// small that the mapping cannot tell it from 0 (below about `5.6e-17`, where gamma
    /// rounds to 1): [`ConfigError::InvalidAccuracy`] either way.
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
    /// The default converts to `f64`; [`IntMapping`](super::IntMapping) overrides it with integer
    /// operations.
    fn index_u64(&self, value: u64) -> i32 {
        self.index(value as f64)
    }

    /// [`index_u64`](Self::index_u64) of `value` if the mapping finds it on its fast
    /// path, `None` otherwise: always for 0, and for whatever values the mapping computes
    /// out of line (for [`IntMapping`](super::IntMapping), values from 2^32 up and values near a bin edge).
    ///
    /// The sketches' record paths try this first and leave the `None` cases to a function
    /// of their own, so that the rare cases cost the common one nothing (no registers
    /// saved around a call). The default is `index_u64` for every value but 0.
    ///
    /// Hidden (see the trait's docs): public only because the sketches are generic over
    /// the mapping.
    ///
    /// ```
    /// use tailguard::sketch::{IndexMapping, IntMapping};
    /// let m = IntMapping::K6;
    /// assert_eq!(m.index_u64_fast(129), Some(m.index_u64(129)));
    /// assert_eq!(m.index_u64_fast(0), None);
    /// assert_eq!(m.index_u64_fast(7), None); // on a bin edge: DataDog's path
    /// ```
    #[doc(hidden)]
    #[inline]
    fn index_u64_fast(&self, value: u64) -> Option<i32> {
        if value == 0 {
            None
        } else {
            Some(self.index_u64(value))
        }
    }

    /// The position among bins from `min_index` (`index - min_index` as a `u32`, as
    /// [`BinLayout`](super::super::BinLayout) counts them) of
    /// [`index_u64_fast`](Self::index_u64_fast) of each value of `values` into `out`,
    /// `u32::MAX` (no bin's position) where that is `None` (the caller then asks
    /// [`index_u64`](Self::index_u64)). Only the first `min(len)` entries are written.
    ///
    /// Every value must be below 2^32: the caller checks (a value from 2^32 up gets
    /// `u32::MAX` here, and an unspecified position from a mapping that overrides this).
    /// The sketches' slice records call it a chunk at a time; a mapping may override it
    /// with a loop the compiler can vectorise ([`IntMapping`](super::IntMapping) does on
    /// x86-64 and aarch64). Hidden, as [`index_u64_fast`](Self::index_u64_fast).
    ///
    /// ```
    /// use tailguard::sketch::{IndexMapping, IntMapping};
    /// let m = IntMapping::K6;
    /// let mut out = [0; 3];
    /// m.positions_below_2_32(&[129, 0, 7], 100, &mut out);
    /// assert_eq!(out, [(m.index_u64(129) - 100) as u32, u32::MAX, u32::MAX]);
    /// ```
    #[doc(hidden)]
    #[inline]
    fn positions_below_2_32(&self, values: &[u64], min_index: i32, out: &mut [u32]) {
        for (o, &v) in out.iter_mut().zip(values) {
            let index = self.index_u64_fast(v).filter(|_| v >> 32u32 == 0);
            *o = index.map_or(u32::MAX, |i| i.wrapping_sub(min_index) as u32);
        }
    }

    /// The position among bins from `min_index` (`index - min_index` as a `u32`, as
    /// [`positions_below_2_32`](Self::positions_below_2_32)) of [`index`](Self::index) of
    /// `|v|` for each value `v` of `values` (none NaN) into `out`, or `u32::MAX` (no bin's
    /// position) where the mapping leaves a value to `index` (the caller then asks it).
    /// Only the first `min(len)` entries are written.
    ///
    /// The f64 slice record calls it a chunk at a time; a mapping may override it with a
    /// loop the compiler can vectorise ([`CubicMapping`](super::CubicMapping) does on
    /// x86-64 and aarch64).
    /// Hidden, as [`index_u64_fast`](Self::index_u64_fast).
    ///
    /// ```
    /// use tailguard::sketch::{CubicMapping, IndexMapping};
    /// let m = CubicMapping::DEFAULT;
    /// let mut out = [0; 2];
    /// m.positions_fast_slice(&[250.0, -0.0], 100, &mut out);
    /// assert!(out[0] == (m.index(250.0) - 100) as u32 || out[0] == u32::MAX);
    /// assert!(out[1] == m.index(0.0).wrapping_sub(100) as u32 || out[1] == u32::MAX);
    /// ```
    #[doc(hidden)]
    #[inline]
    fn positions_fast_slice(&self, values: &[f64], min_index: i32, out: &mut [u32]) {
        for (o, &v) in out.iter_mut().zip(values) {
            *o = self.index(v.abs()).wrapping_sub(min_index) as u32;
        }
    }

    /// The lower edge of bin `index`: its smallest value, for DataDog's mappings (bins
    /// `[lower, upper)`); for [`OtelMapping`](super::OtelMapping), whose buckets are
    /// `(lower, upper]` as OpenTelemetry's, the edge just below its values (a value
    /// exactly on it is in the bin below).
    fn lower_bound(&self, index: i32) -> f64;

    /// The representative value of bin `index`: `lower_bound(index) * (1 + alpha)`.
    #[inline]
    fn value(&self, index: i32) -> f64 {
        self.lower_bound(index) * (1.0 + self.relative_accuracy())
    }

    /// The upper edge of bin `index` as a whole number (nanoseconds, say), saturating:
    /// at or above the values the bin holds, so a hedge delay taken there never sits below
    /// the percentile. What a [`Window`](crate::window::Window) publishes with its cached
    /// quantile ([`cached_upper_bound`](crate::window::Window::cached_upper_bound)).
    ///
    /// The default is `value(index) / (1 - alpha)` (the edge `lower_bound * gamma` of a
    /// logarithmic bin) in `f64`, raised by `2^-32` of itself and truncated: the index and
    /// the edge round in `f64` (by a few units in the last place far from 1), and a whole
    /// number just past the computed edge can be in the bin; the raise covers it, twice the
    /// bin-edge error bound docs/guarantees.md states for every normal float.
    /// [`IntMapping`](super::IntMapping) overrides it with integer operations only, exact:
    /// its bin edges are whole numbers from 2^k up.
    ///
    /// ```
    /// use tailguard::sketch::{IndexMapping, IntMapping};
    /// let m = IntMapping::K6;
    /// let i = m.index_u64(1_000_000);
    /// let edge = m.upper_bound_u64(i);
    /// assert!(edge >= 1_000_000 && m.index_u64(edge + 1) > i);
    /// ```
    fn upper_bound_u64(&self, index: i32) -> u64 {
        let edge = self.value(index) * (1.0 / (1.0 - self.relative_accuracy()));
        // 2^-32: see above. The cast truncates and saturates (NaN gives 0).
        (edge + edge * (1.0 / 4_294_967_296.0)) as u64
    }
}

pub(super) fn check_accuracy(alpha: f64) -> Result<(), ConfigError> {
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

/// `(1 + alpha) / (1 - alpha)`.
pub(super) fn accuracy_base(alpha: f64) -> f64 {
    (1.0 + alpha) / (1.0 - alpha)
}

/// The relative accuracy guaranteed by bins of width `ln_width` in natural-log space.
pub(super) fn accuracy_of_width(ln_width: f64) -> f64 {
    libm::tanh(ln_width / 2.0)
}

/// What [`LogMapping`](super::LogMapping) and [`CubicMapping`](super::CubicMapping) share: `index = floor(approx_log(v) *
/// multiplier + offset)`, with DataDog's parameters and the accuracy they guarantee.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub(super) struct Scale {
    pub(super) alpha: f64,
    pub(super) gamma: f64,
    pub(super) multiplier: f64,
    pub(super) offset: f64,
}

impl Scale {
    /// The scale of DataDog's protobuf parameters, for an `approx_log` of base `e^ln_base`
    /// whose widest bin spans `widest * ln(gamma)` in natural-log space (`widest` is 1 for
    /// the exact logarithm). Errors unless `gamma > 1` and both are finite.
    pub(super) fn from_gamma_offset(
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

    /// The scale, if its gamma is above 1 and its multiplier finite: an `alpha` below about
    /// `5.6e-17` makes `(1 + alpha) / (1 - alpha)` round to 1, whose multiplier is
    /// infinite, and every value but 1 would then take an end index
    /// ([`ConfigError::InvalidAccuracy`]: the mapping supports no accuracy that fine).
    pub(super) fn checked(self) -> Result<Self, ConfigError> {
        if self.gamma > 1.0 && self.multiplier.is_finite() {
            Ok(self)
        } else {
            Err(ConfigError::InvalidAccuracy)
        }
    }

    /// The multiplier DataDog's Java library derives from `gamma`, `ln(base) /
    /// ln1p(gamma - 1)`, to the last bit, so that values on the edge of a bin land where Java
    /// puts them (Go's `1 / math.Log(gamma)` for `NONE` gives the same bits for tailguard's
    /// gammas; its `1 / math.Log2(gamma)` for `CUBIC` can differ by one unit in the last
    /// place: see the [`proto`](crate::proto) docs).
    pub(super) fn datadog_multiplier(gamma: f64, ln_base: f64) -> f64 {
        ln_base / libm::log1p(gamma - 1.0)
    }

    /// The index of the bin whose value has logarithm `approx_log`.
    #[inline]
    pub(super) fn index(&self, approx_log: f64) -> i32 {
        datadog_floor(approx_log * self.multiplier + self.offset)
    }

    /// The logarithm at which bin `index` starts (the inverse of [`index`](Self::index)).
    pub(super) fn lower_bound_log(&self, index: i32) -> f64 {
        (index as f64 - self.offset) / self.multiplier
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
