//! [`LogMapping`]: DataDog's `NONE` interpolation, the exact logarithm, computed with the
//! fast `ln` of [`super::ln`] and, for lower bounds, the fast `exp` of [`super::exp`].

use super::bits::nearest_integer;
use super::index_mapping::{accuracy_base, check_accuracy, IndexMapping, Interpolation, Scale};
use super::{exp, ln};
use crate::sketch::error::ConfigError;

/// The memory-optimal mapping: `index = floor(ln(v) / ln(gamma))`, with DataDog's floor
/// (a negative whole number goes one lower, as in DataDog's Go and Java libraries).
///
/// Fewest bins for a given accuracy. A record computes the logarithm from the float's
/// exponent, a 128-entry table and a cubic (no division; BENCHMARKS.md has what a record
/// costs), whose error is proven below `2^-34`. Where that bound cannot decide the bin (a value
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
    /// The 1 % mapping of [`LogLatency`](crate::sketch::presets::LogLatency), built at compile time
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
    ///
    /// ```
    /// use tailguard::sketch::{ConfigError, IndexMapping, LogMapping};
    ///
    /// let m = LogMapping::from_gamma_offset(1.02, 0.0).unwrap();
    /// let i = m.index(1.02f64.powf(10.5)); // bins are powers of gamma: 1.02^10.5 is in the 11th
    /// assert_eq!(m.index(1.02f64.powf(11.5)), i + 1);
    /// let v = 1.02f64.powf(10.5);
    /// assert!(m.lower_bound(i) <= v && v < m.lower_bound(i + 1));
    /// assert!((m.relative_accuracy() - 0.02 / 2.02).abs() < 1e-12); // (gamma - 1) / (gamma + 1)
    /// assert_eq!(LogMapping::from_gamma_offset(0.9, 0.0), Err(ConfigError::InvalidAccuracy));
    /// assert!(LogMapping::from_gamma_offset(1.02, f64::NAN).is_err());
    /// ```
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
        let scale = Self::from_valid_accuracy(alpha).scale.checked()?;
        Ok(LogMapping { scale })
    }

    #[inline]
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
    // through `ln::ln`; `libm::log` only within a hair of a bin edge (see KEY_SLACK
    // for the proof that the key is the same).
    #[inline]
    fn index(&self, value: f64) -> i32 {
        let Scale {
            multiplier, offset, ..
        } = self.scale;
        if let Some(ln) = ln::ln(value) {
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
            // them). NaN and infinities (none from the multiplier, which is finite: see
            // `Scale::checked`) fail it, as does a key outside the i32 range (the guess wraps around).
            let (_, guess) = nearest_integer(below + (offset - 0.5));
            let floor = f64::from(guess);
            if floor < low && high < floor + 1.0 {
                return guess;
            }
        }
        self.exact_index(value)
    }

    #[inline]
    fn lower_bound(&self, index: i32) -> f64 {
        exp::exp(self.scale.lower_bound_log(index))
    }
}

/// How far `ln::ln(v) * multiplier` may lie from `libm::log(v) * multiplier` (both
/// rounded), per unit of multiplier: `2^-33`.
///
/// With `m` the multiplier, `L = libm::log(v)`, `z = ln::ln(v)`, `P = fl(L * m)` and
/// `w = fl(z * m)`, for a positive normal `v` (`|ln v| < 709.8`):
///
/// `|P - w| <= |P - L m| + m |L - ln v| + m |ln v - z| + |z m - w|`
/// `<= 2^-53 |L m| + m 2^-43 + m 2^-34 + 2^-53 |z m|`
/// `<= m (2^-42.5 + 2^-43 + 2^-34) < m * 1.005 * 2^-34`,
///
/// using libm's documented bound (below one unit in the last place, at most `2^-43` for a
/// result below 1024) and `ln::LN_ERROR`. `KEY_SLACK = 2^-33` doubles that: the keys
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
    ln::LN_ERROR + 1.0 / (1u64 << 43) as f64 + 710.0 / (1u64 << 52) as f64 <= KEY_SLACK * 0.51
);

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_computed_index_that_is_a_negative_whole_number_goes_one_lower() {
        // The value of the issue report: ln(v) / ln(gamma) rounds to exactly -9 at 1 %.
        let m = LogMapping::with_relative_accuracy(0.01).unwrap();
        let v = 0.8352651995043221;
        assert_eq!(libm::log(v) * m.scale.multiplier, -9.0);
        assert_eq!(m.index(v), -10);
    }
}
