//! The count at or below a value (a rank query): which counters a value cuts through, and
//! how a sketch's min and max make the ends exact. One rule for
//! [`DDSketch`](super::DDSketch), [`AtomicSketch`](super::AtomicSketch) and the
//! [`Window`](crate::window::Window); the guarantee is stated once, on
//! [`DDSketch::rank`](super::DDSketch::rank).
//!
//! The rule: `rank(v)` counts the zero bin and every bin whose index is at most the index
//! `v` maps to (all of them from the top of the range up, none below zero), then the ends:
//! nothing if `v` is below every recorded value, everything if it is at or above them all.
//! With integer input and [`IntMapping`](super::IntMapping) it takes integer operations
//! only (the mapping's `index_u64`, the layout's slot, sums of counters, comparisons of
//! float bits as integers).

use super::error::InvalidValue;
use super::layout::{BinLayout, Slot};
use super::mapping::IndexMapping;
use super::scan::{bin_sum, SCAN_CHUNK};
use super::stats::{FloatStats, IntStats};

/// Which counters hold the values a rank query counts, before the ends are applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cut {
    /// None: the value is below zero (or below every recorded value).
    Nothing,
    /// The zero bin only: the value is zero or below the range.
    Zero,
    /// The zero bin and the bins up to this position.
    Through(usize),
    /// Every counter: the value is at or above the top of the range (or every recorded
    /// value).
    Everything,
}

impl Cut {
    /// The counters at or below `v` under `layout`'s bins: an error for NaN, nothing for a
    /// value below zero (`-inf` included; `-0.0` is a zero), everything for `+inf`.
    #[inline]
    pub(crate) fn of_f64<M: IndexMapping, const N: usize>(
        layout: &BinLayout<M, N>,
        v: f64,
    ) -> Result<Self, InvalidValue> {
        if v.is_nan() {
            return Err(InvalidValue);
        }
        Ok(if v < 0.0 {
            Cut::Nothing
        } else if v == 0.0 {
            Cut::Zero // the mapping is asked of positive values only
        } else {
            Self::of_slot(layout.slot(layout.mapping().index(v)))
        })
    }

    /// [`of_f64`](Self::of_f64) of an integer, through the mapping's integer index (integer
    /// operations only with [`IntMapping`](super::IntMapping)).
    #[inline]
    pub(crate) fn of_u64<M: IndexMapping, const N: usize>(
        layout: &BinLayout<M, N>,
        v: u64,
    ) -> Self {
        if v == 0 {
            Cut::Zero
        } else {
            Self::of_slot(layout.slot(layout.mapping().index_u64(v)))
        }
    }

    /// The counters at or below a value counted in `slot`.
    #[inline]
    fn of_slot(slot: Slot) -> Self {
        match slot {
            Slot::Zero => Cut::Zero,
            Slot::Bin(pos) => Cut::Through(pos),
            Slot::Top => Cut::Everything,
        }
    }

    /// This cut with the ends applied: nothing below every recorded value, everything at
    /// or above them all (a value below zero stays below everything).
    #[inline]
    pub(crate) fn within(self, ends: Ends) -> Self {
        match self {
            Cut::Nothing => Cut::Nothing,
            _ if ends.below_every => Cut::Nothing,
            _ if ends.at_or_above_every => Cut::Everything,
            cut => cut,
        }
    }
}

/// Where a value (not negative) lies against the values a sketch recorded, as far as its
/// min and max tell: each flag is set only when it is certain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ends {
    /// The value is below every recorded value.
    pub(crate) below_every: bool,
    /// The value is at or above every recorded value.
    pub(crate) at_or_above_every: bool,
}

impl Ends {
    /// The ends of no values: every value is below them all, and above them all.
    pub(crate) const EMPTY: Ends = Ends {
        below_every: true,
        at_or_above_every: true,
    };

    /// The ends of the values of two sketches together (a window's slots).
    #[inline]
    pub(crate) fn and(self, other: Ends) -> Ends {
        Ends {
            below_every: self.below_every && other.below_every,
            at_or_above_every: self.at_or_above_every && other.at_or_above_every,
        }
    }
}

/// Whether the integer `v` is below `x` (not NaN), with integer operations only: a core
/// without an FPU compares an integer query with a sketch's float min and max without a
/// soft-float helper. Exact: no rounding of either.
pub(crate) fn u64_below(v: u64, x: f64) -> bool {
    let bits = x.to_bits();
    if bits >> 63 != 0 {
        return false; // negative, or -0.0: no integer is below it
    }
    let field = (bits >> 52) as u32; // the sign is 0: the exponent field alone
    if field == 0x7ff {
        return true; // +inf
    }
    let fraction = bits & ((1 << 52) - 1);
    // x = m * 2^-s exactly, s in -971..=1074.
    let (m, s) = if field == 0 {
        (fraction, 1074i32)
    } else {
        (fraction | 1 << 52, 1075i32.wrapping_sub(field as i32))
    };
    if s <= 0 {
        // A whole number, m << -s: from a shift of 12 up (m >= 2^52) it is 2^64 or more.
        let up = s.unsigned_abs();
        return up >= 12 || v < m << up;
    }
    // For an integer, v < x exactly when v < ceil(x) = ceil(m / 2^s).
    let s = s.unsigned_abs();
    let ceil = if s >= 64 {
        u64::from(m != 0) // m < 2^53 <= 2^s
    } else {
        let below = m & ((1u64 << s).wrapping_sub(1));
        (m >> s).wrapping_add(u64::from(below != 0)) // m >> s < 2^53: cannot wrap
    };
    v < ceil
}

/// Where `v` (not negative) lies against a sketch's exact min and max (`None` if empty).
#[inline]
pub(super) fn ends_f64(v: f64, extremes: Option<(f64, f64)>) -> Ends {
    match extremes {
        Some((min, max)) => Ends {
            below_every: v < min,
            at_or_above_every: v >= max,
        },
        None => Ends::EMPTY,
    }
}

/// [`ends_f64`] of an integer against a sketch's exact statistics of floats and integers,
/// with integer operations only: the float min and max are compared through their bits.
pub(super) fn ends_u64(v: u64, f: &FloatStats, i: &IntStats) -> Ends {
    // A part with no values says nothing (an empty float part's min and max are +inf
    // and -inf, which `u64_below` takes as they are).
    let ints = if i.min <= i.max {
        Ends {
            below_every: v < i.min,
            at_or_above_every: v >= i.max,
        }
    } else {
        Ends::EMPTY
    };
    let floats = Ends {
        below_every: u64_below(v, f.min),
        at_or_above_every: !u64_below(v, f.max),
    };
    ints.and(floats)
}

/// Where `v` (not NaN) lies against a sketch's exact statistics of floats and integers:
/// against the floats' min and max as floats, and against the integers' exactly. Not
/// through the sketch's `min` and `max`, which round an integer of 2^53 or more to a
/// float: a min of 2^53 + 1 reads as 2^53, and `rank(2^53)` would count it though 2^53
/// is below it; a max of 2^60 + 1 reads as 2^60, and `rank(2^60)` would count it, past
/// `exact(u)` where the buckets are exact.
pub(super) fn ends_exact(v: f64, f: &FloatStats, i: &IntStats) -> Ends {
    if v < 0.0 {
        // Below every value (all are 0 or more): the rounding does not matter here.
        return ends_f64(v, Some((0.0, 0.0)));
    }
    // An integer `m` is above `v` exactly when it is above `floor(v)`, and at or below
    // `v` when at or below `floor(v)` (which saturates from 2^64 up, above every `u64`).
    let floor = floor_u64(v);
    let ints = if i.min <= i.max {
        Ends {
            below_every: floor < i.min,
            at_or_above_every: floor >= i.max,
        }
    } else {
        Ends::EMPTY // no integers (their empty min is above their max)
    };
    // An empty float part's min and max are +inf and -inf: it says nothing.
    let floats = Ends {
        below_every: v < f.min,
        at_or_above_every: v >= f.max,
    };
    ints.and(floats)
}

/// `floor(x)` of a non-negative float as an integer (`u64::MAX` from 2^64 up, 0 for a
/// negative one), with integer operations only.
pub(crate) fn floor_u64(x: f64) -> u64 {
    let bits = x.to_bits();
    let field = (bits >> 52) as u32; // the exponent field, if the sign is 0
    if bits >> 63 != 0 || field < 1023 {
        return 0; // below 1
    }
    let e = field.wrapping_sub(1023); // x in [2^e, 2^(e + 1))
    let m = (bits & ((1 << 52) - 1)) | 1 << 52;
    match e {
        0..=51 => m >> 52u32.wrapping_sub(e),
        52..=63 => m << e.wrapping_sub(52),
        _ => u64::MAX,
    }
}

/// The share `rank / count`, or `None` for no values.
#[inline]
pub(crate) fn fraction(rank: u64, count: u64) -> Option<f64> {
    (count > 0).then(|| rank as f64 / count as f64)
}

/// The sum of `bins`, a chunk at a time in 32-bit lanes (see
/// [`bin_sum`](super::scan::bin_sum)). `narrow`: the bins hold fewer than 2^32 values in
/// all.
#[inline]
pub(super) fn sum_of_bins(bins: &[u32], narrow: bool) -> u64 {
    if narrow {
        sum_in_chunks::<true>(bins)
    } else {
        sum_in_chunks::<false>(bins)
    }
}

/// [`sum_of_bins`], compiled once for each case. No add wraps: fewer than `i32::MAX` bins
/// of at most `u32::MAX` sum below 2^63 (as in the quantile [`scan`](super::scan)).
#[inline]
fn sum_in_chunks<const NARROW: bool>(bins: &[u32]) -> u64 {
    let (chunks, rest) = bins.as_chunks::<SCAN_CHUNK>();
    chunks
        .iter()
        .map(bin_sum::<NARROW, SCAN_CHUNK>)
        .chain(rest.iter().map(|&b| u64::from(b)))
        .fold(0, u64::wrapping_add)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The integer comparison is the exact one, at powers of two, halves, the ends of the
    /// `u64` range and past them, and for subnormals, zeros, infinities.
    #[test]
    fn an_integer_is_compared_with_a_float_exactly() {
        let exact = |v: u64, x: f64| -> bool {
            if x.is_infinite() {
                return x > 0.0;
            }
            // Both exactly as rationals: x's integer part and whether it has a fraction.
            if x < 0.0 {
                return false;
            }
            if x >= 18_446_744_073_709_551_616.0 {
                return true;
            }
            let whole = x as u64; // truncates: exact below 2^64
            v < whole || (v == whole && x.fract() > 0.0)
        };
        let mut xs = std::vec![
            0.0,
            -0.0,
            -1.0,
            5e-324,
            f64::MIN_POSITIVE,
            0.5,
            1.0,
            1.5,
            2.0,
            2.5,
            1e3,
            1e3 + 0.5,
            9_007_199_254_740_992.0,
            9_007_199_254_740_994.0,
            18_446_744_073_709_549_568.0, // the largest f64 below 2^64
            18_446_744_073_709_551_616.0,
            1e300,
            f64::MAX,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ];
        for e in 0..64 {
            let p = (1u64 << e) as f64;
            xs.extend([p, p.next_up(), p.next_down(), p + 0.5]);
        }
        let mut vs = std::vec![0, 1, 2, 3, 999, 1000, 1001, u64::MAX, u64::MAX - 1];
        for e in 0..64 {
            let p = 1u64 << e;
            vs.extend([p, p - 1, p + 1]);
        }
        for &x in &xs {
            for &v in &vs {
                assert_eq!(u64_below(v, x), exact(v, x), "{v} < {x:e}");
            }
        }
    }

    #[test]
    fn the_ends_override_a_cut_but_not_a_value_below_zero() {
        let below = Ends {
            below_every: true,
            at_or_above_every: false,
        };
        let above = Ends {
            below_every: false,
            at_or_above_every: true,
        };
        let neither = Ends {
            below_every: false,
            at_or_above_every: false,
        };
        assert_eq!(Cut::Through(3).within(below), Cut::Nothing);
        assert_eq!(Cut::Zero.within(above), Cut::Everything);
        assert_eq!(Cut::Through(3).within(neither), Cut::Through(3));
        assert_eq!(Cut::Nothing.within(above), Cut::Nothing);
        assert_eq!(Cut::Everything.within(Ends::EMPTY), Cut::Nothing);
        assert_eq!(below.and(Ends::EMPTY), below);
        assert_eq!(below.and(above), neither);
    }
}
