//! [`BinLayout`]: where a sketch's bins lie, and which bin a mapping index is counted in.

use super::error::{ConfigError, MergeError};
use super::mapping::IndexMapping;

/// Where the `N` bins of a sketch lie: its index mapping and the mapping index of its
/// lowest bin, so the bins hold indices `min_index .. min_index + N`.
///
/// [`DDSketch`](super::DDSketch) and [`AtomicSketch`](super::AtomicSketch) answer it from
/// their `layout()`; sketches whose layouts match (same gamma, index offset, lowest bin
/// and `N`) merge. A value is counted by its mapping index:
///
/// * below `min_index` (values below [`min_trackable`](Self::min_trackable), and zero) in
///   the zero bin;
/// * in the range, in its own bin;
/// * above it (values from [`max_trackable`](Self::max_trackable) up) in the top bin, as
///   clamped.
///
/// `N` is in `1..i32::MAX`; a sketch of any other `N` does not compile:
///
/// ```compile_fail
/// use tailguard::sketch::{DDSketch, LogMapping};
/// let none: Result<DDSketch<LogMapping, 0>, _> = DDSketch::with_relative_accuracy(0.01, 1.0);
/// ```
///
/// ```
/// use tailguard::sketch::{presets, IndexMapping};
/// let layout = presets::log_latency().layout();
/// assert_eq!(layout.bin_count(), 922);
/// assert!(layout.min_trackable() <= 1e3 && layout.max_trackable() > 1e11);
/// assert_eq!(layout.mapping().index(layout.min_trackable()), layout.min_index());
/// ```
#[derive(Debug, Clone, Copy)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct BinLayout<M, const N: usize> {
    mapping: M,
    min_index: i32,
}

/// The position of mapping index `index` among bins from `min_index`: below `N` exactly
/// when the index is one of the `N` bins' (an index below `min_index` wraps to `2^32`
/// minus the distance, at least `N`, as `min_index + N` fits in an `i32`), so one
/// unsigned compare tests both ends of the range.
#[inline(always)]
pub(crate) fn position(index: i32, min_index: i32) -> usize {
    // 32-bit arithmetic: two words on a Cortex-M would double the cost.
    index.wrapping_sub(min_index) as u32 as usize
}

/// The counter a mapping index is counted in (see [`BinLayout::slot`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Slot {
    /// The zero bin: the index is below the range.
    Zero,
    /// The bin at this position.
    Bin(usize),
    /// The top bin, as a clamped value: the index is above the range.
    Top,
}

impl<M: IndexMapping, const N: usize> BinLayout<M, N> {
    /// The layout whose lowest bin holds `min_value`, if `min_value` is a positive normal
    /// finite number whose bin is above zero's ([`ConfigError::InvalidMinValue`]) and every
    /// bin index fits in an `i32` ([`ConfigError::RangeOverflow`]).
    pub(crate) fn new(mapping: M, min_value: f64) -> Result<Self, ConfigError> {
        // Not subnormal: the cubic and integer mappings read the exponent field, which
        // subnormals lack, so their bins there are not within alpha. (Subnormal values below
        // a normal range still fall in the zero bin, their indices being lower; but
        // OpenTelemetry's buckets put them in 2^-1022's, as the SDKs do, so with
        // `OtelMapping` a range from that bucket counts them there.)
        if !(min_value >= f64::MIN_POSITIVE && min_value.is_finite()) {
            return Err(ConfigError::InvalidMinValue);
        }
        let min_index = mapping.index(min_value);
        // The cubic and integer mappings give zero (and the subnormals) the index of 2^-1023:
        // with a mapping coarse enough, that is `MIN_POSITIVE`'s bin, and zeros would be
        // counted in it rather than in the zero bin.
        if mapping.index(0.0) >= min_index {
            return Err(ConfigError::InvalidMinValue);
        }
        Self::from_min_index(mapping, min_index)
    }

    /// The layout whose lowest bin has mapping index `min_index`, if every bin index fits
    /// in an `i32` and `min_index` is above `i32::MIN` (the index of zero, which must land
    /// in the zero bin); else [`ConfigError::RangeOverflow`].
    ///
    /// `const`, so a layout can be a constant (the presets' are, see
    /// [`presets`](super::presets)) and a `static` sketch or window can be built from it.
    /// The index of a value is `mapping.index(value)`; [`IntMapping`](super::IntMapping)
    /// and [`OtelMapping`](super::OtelMapping) are `const` to build.
    ///
    /// ```
    /// use tailguard::sketch::{AtomicSketch, BinLayout, IndexMapping, IntMapping};
    ///
    /// // 300 bins of 1.56 % from the bin of 100 µs (values in ns): 100 µs .. about 67 ms.
    /// const LAYOUT: BinLayout<IntMapping, 300> = match BinLayout::from_min_index(
    ///     IntMapping::K5,
    ///     528, // IntMapping::K5.index(1e5), checked below
    /// ) {
    ///     Ok(layout) => layout,
    ///     Err(_) => panic!("bin indices overflow"), // a compile error, not a run-time one
    /// };
    /// static LATENCIES: AtomicSketch<IntMapping, 300> = AtomicSketch::with_layout(LAYOUT);
    ///
    /// assert_eq!(IntMapping::K5.index(1e5), LAYOUT.min_index());
    /// LATENCIES.record_u64(250_000);
    /// assert_eq!(LATENCIES.count(), 1);
    /// ```
    pub const fn from_min_index(mapping: M, min_index: i32) -> Result<Self, ConfigError> {
        // N < i32::MAX (asserted by `with_min_index` at compile time): the cast is exact
        // and the sum cannot overflow an i64.
        let top = (min_index as i64).saturating_add(N as i64);
        if min_index == i32::MIN || top > i32::MAX as i64 {
            return Err(ConfigError::RangeOverflow);
        }
        Ok(Self::with_min_index(mapping, min_index))
    }

    /// The layout whose lowest bin has mapping index `min_index`. The caller checks that
    /// `min_index + N` fits in an `i32`, and that `min_index` is above `i32::MIN` (the
    /// index of zero, which must land in the zero bin).
    pub(crate) const fn with_min_index(mapping: M, min_index: i32) -> Self {
        const { assert!(N > 0 && N < i32::MAX as usize, "N must be in 1..i32::MAX") };
        BinLayout { mapping, min_index }
    }

    /// The index mapping.
    pub const fn mapping(&self) -> &M {
        &self.mapping
    }

    /// The guaranteed relative accuracy: the mapping's alpha plus `8 * 2^-52` (below 1),
    /// an upper bound so that `(got - want).abs() <= alpha * want` holds as computed in
    /// `f64`, where a value on a bin edge is exactly alpha from its bin's representative,
    /// for values near 1. Farther out the keys and representatives round with an error
    /// growing with `|log2 v|`, which can take a bin edge a hair past it (docs/guarantees.md
    /// says how far).
    ///
    /// ```
    /// use tailguard::sketch::{DDSketch, IndexMapping, LogMapping};
    ///
    /// let sketch = DDSketch::<LogMapping, 512>::with_relative_accuracy(0.01, 1.0).unwrap();
    /// let layout = sketch.layout();
    /// let alpha = layout.relative_accuracy();
    /// let mapping_alpha = layout.mapping().relative_accuracy();
    /// assert!(alpha > mapping_alpha && alpha <= mapping_alpha + 1e-14); // plus 8 * 2^-52
    /// assert_eq!(alpha, sketch.relative_accuracy());
    /// ```
    pub fn relative_accuracy(&self) -> f64 {
        crate::sketch::mapping::reported_accuracy(self.mapping.relative_accuracy())
    }

    /// The mapping index of the lowest bin.
    pub const fn min_index(&self) -> i32 {
        self.min_index
    }

    /// `N`, the number of bins (the zero bin not counted).
    pub const fn bin_count(&self) -> usize {
        N
    }

    /// The smallest value with a bin of its own, exactly: the first `f64` the mapping puts
    /// in the lowest bin. Smaller values count in the zero bin.
    ///
    /// For a range from about `f64::MIN_POSITIVE`, this can be a subnormal: the lowest bin
    /// then reaches below the normal floats, where [`CubicMapping`](super::CubicMapping)
    /// and [`IntMapping`](super::IntMapping), which read the exponent field, do not keep
    /// their relative accuracy (a subnormal's quantile can be off by more than alpha), and
    /// [`OtelMapping`](super::OtelMapping)'s lowest bucket holds every subnormal (as the
    /// OpenTelemetry SDKs put them: the first value is then the smallest subnormal).
    /// [`LogMapping`](super::LogMapping) and ranges from any larger value are not affected.
    pub fn min_trackable(&self) -> f64 {
        first_value_of_index(&self.mapping, self.min_index)
    }

    /// The end of the trackable range, exactly: the first `f64` clamped into the top bin
    /// (`+inf` if the bins reach past `f64::MAX`, so that no value is clamped).
    pub fn max_trackable(&self) -> f64 {
        // Construction guarantees min_index + N fits in an i32.
        first_value_of_index(&self.mapping, self.min_index.saturating_add(N as i32))
    }

    /// The counter that takes a value of mapping index `index`: the zero bin below the
    /// range (`i32::MIN` always), the top bin above it.
    #[inline]
    pub(crate) fn slot(&self, index: i32) -> Slot {
        // 32-bit arithmetic (two words on a Cortex-M would double the cost): with
        // index >= min_index, their difference fits in a u32. (Testing `pos < N` first,
        // one comparison for an index in range, measured 2 instructions fewer per record
        // on the Cortex-M but 5 more on x86-64: kept as it was.)
        if index < self.min_index {
            Slot::Zero
        } else {
            let pos = position(index, self.min_index);
            if pos >= N {
                Slot::Top
            } else {
                Slot::Bin(pos)
            }
        }
    }

    /// The mapping index of the bin at position `pos` (below `N`): what [`position`]
    /// undoes. Counted from `min_index`, so no index past the last bin is ever formed (a
    /// range `min_index..` stepped past bins that end at `i32::MAX` overflows).
    #[inline(always)]
    pub(crate) const fn index_at(&self, pos: usize) -> i32 {
        // pos < N < i32::MAX, and min_index + N fits in an i32.
        self.min_index.wrapping_add(pos as i32)
    }

    /// The representative value of the bin at position `pos` (below `N`): the mapping's,
    /// but `f64::MAX` for a bin of finite values whose `lower_bound * (1 + alpha)`
    /// overflows (the bin of `f64::MAX` in a range past it), which is within alpha of
    /// each of them: `f64::MAX - v < lower_bound * (1 + alpha) - lower_bound <= alpha v`.
    #[inline]
    pub(crate) fn value_at(&self, pos: usize) -> f64 {
        let index = self.index_at(pos);
        let value = self.mapping.value(index);
        if value == f64::INFINITY {
            return self.overflowed_value(index);
        }
        value
    }

    /// [`value_at`](Self::value_at) of bin `index`, whose representative overflowed:
    /// `f64::MAX` if the bin starts at a finite value, `+inf` for a bin past the floats
    /// (the top bin of such a range, which holds the values clamped into it).
    #[cold]
    #[inline(never)]
    fn overflowed_value(&self, index: i32) -> f64 {
        if self.mapping.lower_bound(index) < f64::INFINITY {
            f64::MAX
        } else {
            f64::INFINITY
        }
    }

    /// The upper edge of the bin at position `pos` (below `N`) as a whole number: see
    /// [`IndexMapping::upper_bound_u64`].
    #[inline]
    pub(crate) fn upper_bound_at(&self, pos: usize) -> u64 {
        self.mapping.upper_bound_u64(self.index_at(pos))
    }

    /// Whether a sketch of layout `other` can be merged into one of this layout, and if
    /// not, why.
    pub(crate) fn check_compatible<const N2: usize>(
        &self,
        other: &BinLayout<M, N2>,
    ) -> Result<(), MergeError> {
        // Gamma and offset fix every bin boundary (the interpolation is the type `M`).
        if N != N2 {
            Err(MergeError::BinCount)
        } else if self.mapping.gamma() != other.mapping.gamma() {
            Err(MergeError::Mapping)
        } else if self.mapping.index_offset() != other.mapping.index_offset() {
            Err(MergeError::Offset)
        } else if self.min_index != other.min_index {
            Err(MergeError::Range)
        } else {
            Ok(())
        }
    }
}

/// The smallest non-negative `f64` whose mapping index is at least `index` (`+inf` if no
/// finite value's is).
///
/// `lower_bound` is computed in floating point (an `exp` or a cube root of a rounded
/// argument), so it can be hundreds of ulps off the boundary `index` actually draws,
/// either way. This starts from it and searches the bit patterns, which order
/// non-negative floats as their values: doubling steps until the boundary is bracketed,
/// then bisection. At most 64 + 64 evaluations of `index`; a handful when `lower_bound`
/// is a few ulps off. Relies on `index` being non-decreasing, as a mapping's is.
fn first_value_of_index<M: IndexMapping>(mapping: &M, index: i32) -> f64 {
    const INF_BITS: u64 = 0x7ff0_0000_0000_0000; // f64::INFINITY.to_bits()
    let reaches = |bits: u64| mapping.index(f64::from_bits(bits)) >= index;
    let guess = mapping.lower_bound(index);
    // A NaN or negative guess (not expected) starts the search from zero.
    let guess = if guess > 0.0 {
        guess.to_bits().min(INF_BITS)
    } else {
        0
    };
    // Bracket the boundary: `lo` below it (index too low), `hi` at or above it.
    let (mut lo, mut hi) = (guess, guess);
    let mut step = 1u64;
    if reaches(guess) {
        loop {
            if lo == 0 {
                return 0.0; // every value reaches `index`
            }
            lo = lo.saturating_sub(step);
            if !reaches(lo) {
                break;
            }
            hi = lo;
            step = step.saturating_mul(2); // at most 64 doublings reach 0
        }
    } else {
        loop {
            if hi == INF_BITS {
                return f64::INFINITY; // not even f64::MAX reaches `index`
            }
            hi = hi.saturating_add(step).min(INF_BITS);
            if reaches(hi) {
                break;
            }
            lo = hi;
            step = step.saturating_mul(2); // at most 64 doublings reach INF_BITS
        }
    }
    // Bisect: !reaches(lo), reaches(hi), lo < hi. At most 64 halvings.
    while hi.wrapping_sub(lo) > 1 {
        let mid = lo.wrapping_add(hi.wrapping_sub(lo) / 2);
        if reaches(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    f64::from_bits(hi)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sketch::mapping::{IntMapping, LogMapping};

    #[test]
    fn first_value_of_index_at_the_ends() {
        let m = IntMapping::K6;
        // The bins past f64::MAX: nothing finite reaches them.
        assert_eq!(first_value_of_index(&m, 1025 << 6), f64::INFINITY);
        assert_eq!(first_value_of_index(&m, i32::MAX), f64::INFINITY);
        // Every value, zero included, reaches an index this low.
        assert_eq!(first_value_of_index(&m, i32::MIN), 0.0);
        assert_eq!(first_value_of_index(&m, 0), 1.0);
        let log = LogMapping::with_relative_accuracy(0.01).unwrap();
        assert_eq!(first_value_of_index(&log, i32::MAX), f64::INFINITY);
        for i in [-70_000, -1000, -1, 0, 1, 1000, 70_000] {
            let v = first_value_of_index(&log, i);
            assert!(log.index(v) >= i && log.index(v.next_down()) < i, "{i}");
        }
    }

    #[test]
    fn slots_below_in_and_above_the_range() {
        let layout = BinLayout::<IntMapping, 4>::with_min_index(IntMapping::K6, 10);
        assert_eq!(layout.slot(i32::MIN), Slot::Zero);
        assert_eq!(layout.slot(9), Slot::Zero);
        assert_eq!(layout.slot(10), Slot::Bin(0));
        assert_eq!(layout.slot(13), Slot::Bin(3));
        assert_eq!(layout.slot(14), Slot::Top);
        assert_eq!(layout.slot(i32::MAX), Slot::Top);
        // At the ends of the i32 range: no index below the range wraps into a position.
        let top = BinLayout::<IntMapping, 4>::with_min_index(IntMapping::K6, i32::MAX - 4);
        assert_eq!(top.slot(i32::MIN), Slot::Zero);
        assert_eq!(top.slot(-1), Slot::Zero);
        assert_eq!(top.slot(i32::MAX - 5), Slot::Zero);
        assert_eq!(top.slot(i32::MAX - 4), Slot::Bin(0));
        assert_eq!(top.slot(i32::MAX), Slot::Top);
        let bottom = BinLayout::<IntMapping, 4>::with_min_index(IntMapping::K6, i32::MIN + 1);
        assert_eq!(bottom.slot(i32::MIN), Slot::Zero);
        assert_eq!(bottom.slot(i32::MIN + 1), Slot::Bin(0));
        assert_eq!(bottom.slot(i32::MAX), Slot::Top);
    }
}
