//! The exact statistics of a [`DDSketch`](super::DDSketch): min, max and sum of the values
//! recorded as `f64`, and of those recorded as `u64`, whose sum is kept in 128 bits.

/// Exact min, max and sum of the values recorded as `f64`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct FloatStats {
    pub(super) min: f64,
    pub(super) max: f64,
    pub(super) sum: f64,
}

impl FloatStats {
    pub(super) const EMPTY: FloatStats = FloatStats {
        min: f64::INFINITY,
        max: f64::NEG_INFINITY,
        sum: 0.0,
    };

    /// Folds in the min, max and sum of values recorded elsewhere.
    pub(super) fn fold(&mut self, min: f64, max: f64, sum: f64) {
        self.min = self.min.min(min);
        self.max = self.max.max(max);
        self.sum += sum;
    }
}

/// The exact smallest value of both statistics (`+inf` if both are empty).
pub(super) fn min_of(f: &FloatStats, i: &IntStats) -> f64 {
    let int_min = if i.min <= i.max {
        i.min as f64
    } else {
        f64::INFINITY
    };
    f.min.min(int_min)
}

/// The exact largest value of both statistics (`-inf` if both are empty).
pub(super) fn max_of(f: &FloatStats, i: &IntStats) -> f64 {
    let int_max = if i.min <= i.max {
        i.max as f64
    } else {
        f64::NEG_INFINITY
    };
    f.max.max(int_max)
}

/// Takes the values an add of counts dropped as saturated out of the sums: the integers'
/// out of the integer sum, the rest out of the float sum; never below zero in all (an
/// estimate a hair above what it stands for takes the whole sum, not more).
pub(super) fn forget_dropped(f: &mut FloatStats, i: &mut IntStats, dropped: Dropped) {
    let total = i.take_from_sum(dropped.integers);
    if dropped.floats > 0.0 {
        let floor = -(total as f64);
        f.sum = (f.sum - dropped.floats).max(floor);
    }
}

/// Exact min, max and sum of the values recorded as `u64`: kept apart from [`FloatStats`]
/// so that the integer record path uses no float arithmetic (no FPU on Cortex-M0).
///
/// The sum is a 128-bit integer held as three words, the lowest 32 bits apart (a `u128`
/// field would align the whole sketch to 16 bytes on x86-64 and aarch64, growing it
/// further): a record adds to that word alone, one 32-bit add to memory. It cannot
/// wrap: it stays within `MERGED_SUM_CAP + count * (2^64 - 1)`, below 2^128 as `count`
/// never exceeds `(N + 1) * u32::MAX < 2^63` before `clear` resets both. A record adds
/// a value below 2^64 and one to `count`; a merge adds exactly up to [`MERGED_SUM_CAP`]
/// and past it keeps the larger of the two sums, within that bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct IntStats {
    pub(super) min: u64,
    pub(super) max: u64,
    /// The sum's bits 0..32, 32..64 and 64..128.
    sum_low: u32,
    sum_mid: u32,
    sum_hi: u64,
}

/// Where a merge stops adding integer sums: a guard, which only the sums of sketches of
/// some 2^31 full bins of values near `u64::MAX` could reach (a merge adds the other
/// sum before the values it dropped as saturated leave it). Below it merges add exactly,
/// and records can add up to another 2^127 without wrapping.
pub(super) const MERGED_SUM_CAP: u128 = 1 << 127;

impl IntStats {
    pub(super) const EMPTY: IntStats = IntStats {
        min: u64::MAX,
        max: 0,
        sum_low: 0,
        sum_mid: 0,
        sum_hi: 0,
    };

    /// No values, and min and max 0 (not the empty identities): what a sketch whose
    /// statistics are all zero bytes holds.
    pub(super) const ZERO: IntStats = IntStats {
        min: 0,
        ..IntStats::EMPTY
    };

    /// The exact sum.
    pub(super) fn sum(&self) -> u128 {
        u128::from(self.sum_hi).wrapping_shl(64)
            | u128::from(self.sum_mid).wrapping_shl(32)
            | u128::from(self.sum_low)
    }

    fn set_sum(&mut self, sum: u128) {
        self.sum_low = sum as u32; // the low word
        self.sum_mid = sum.wrapping_shr(32) as u32;
        self.sum_hi = sum.wrapping_shr(64) as u64;
    }

    /// Adds `hi * 2^64 + lo` to the sum.
    #[inline]
    pub(super) fn add_to_sum(&mut self, lo: u64, hi: u64) {
        let add = u128::from(hi).wrapping_shl(64) | u128::from(lo);
        // Cannot wrap (see the type's docs).
        self.set_sum(self.sum().wrapping_add(add));
    }

    /// Adds one recorded value between the minimum and the maximum to the sum (the
    /// caller has tested that it is neither a new min nor a new max: rare, and out of
    /// line there, so that the common case is two compares and two branches not taken,
    /// not stores made conditional in place).
    #[inline(always)]
    pub(super) fn add_inside(&mut self, value: u64) {
        // The sum's low 32 bits alone, the rest out of line: it moves once in 2^32 / value
        // records of a value below 2^32 (a latency below 4.3 s in ns). That is a 32-bit
        // add to memory and a branch, not two words and a carry. Where the mapping's fast
        // path has tested the value's high word (`IntMapping`'s), its test here goes.
        let (low, carry) = self.sum_low.overflowing_add(value as u32);
        self.sum_low = low;
        let high = value >> 32u32;
        if carry || high != 0 {
            // Below 2^32 + 1: the carry and the value's high word.
            self.add_to_upper_words(high.wrapping_add(u64::from(carry)));
        }
    }

    /// Adds `n * 2^32` to the sum (rare: out of line).
    #[cold]
    #[inline(never)]
    fn add_to_upper_words(&mut self, n: u64) {
        self.add_to_sum(n.wrapping_shl(32), n.wrapping_shr(32));
    }

    /// Takes `amount` out of the sum, stopping at zero, with integer operations only.
    /// Returns the sum left.
    pub(super) fn take_from_sum(&mut self, amount: u128) -> u128 {
        let total = self.sum().saturating_sub(amount);
        self.set_sum(total);
        total
    }

    /// Folds in another sketch's integer statistics; `count` is the sketch's count after
    /// the merge (see [`merge_sum`](Self::merge_sum)).
    pub(super) fn fold(&mut self, other: &IntStats, count: u64) {
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        self.merge_sum(other.sum(), count);
    }

    /// Adds another sketch's sum, exactly up to [`MERGED_SUM_CAP`]; `count` is the
    /// sketch's count after the merge.
    pub(super) fn merge_sum(&mut self, other: u128, count: u64) {
        let sum = self.sum();
        // Every sum stays within `MERGED_SUM_CAP + count * (2^64 - 1)`: records add below
        // 2^64 each and one to `count` (below 2^63), so up to there records cannot wrap it.
        let limit =
            MERGED_SUM_CAP.saturating_add(u128::from(count).saturating_mul(u128::from(u64::MAX)));
        let total = match sum.checked_add(other) {
            Some(total) if total <= MERGED_SUM_CAP => total,
            // Never lower than either sum (records may have taken them past the cap), so a
            // merge into an empty sketch copies the sum; never past the limit above.
            _ => sum.max(other.min(limit)).max(MERGED_SUM_CAP),
        };
        self.set_sum(total);
    }
}

/// The min and max of values arriving without them (a merge's, a snapshot's), to value
/// those a saturating add drops: each at its bin's representative (0 in the zero bin),
/// clamped into `[min, max]`. Exact where a bin's values are all equal, and always within
/// the bin.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Extremes {
    /// Every value an integer: clamped and summed as integers, exactly.
    Integers(u64, u64),
    /// Any values.
    Floats(f64, f64),
    /// No values (so none dropped).
    None,
}

impl Extremes {
    /// `floats`, or `integers` where the values were all integers.
    pub(crate) fn of(floats: Option<(f64, f64)>, integers: Option<(u64, u64)>) -> Self {
        match (integers, floats) {
            (Some((min, max)), _) => Extremes::Integers(min, max),
            (None, Some((min, max))) => Extremes::Floats(min, max),
            (None, None) => Extremes::None,
        }
    }

    /// Adds `n` values of a bin of representative `value` to `dropped`.
    pub(super) fn drop_values(self, dropped: &mut Dropped, n: u64, value: f64) {
        // max-then-min, not `clamp`, which panics when its bounds cross.
        match self {
            Extremes::Integers(min, max) => {
                // `as` saturates (and takes NaN to 0).
                let v = (value as u64).max(min).min(max);
                let sum = u128::from(v).saturating_mul(u128::from(n));
                dropped.integers = dropped.integers.saturating_add(sum);
            }
            Extremes::Floats(min, max) => dropped.floats += n as f64 * value.max(min).min(max),
            Extremes::None => {}
        }
    }
}

/// What an add of bin counts dropped as saturated, valued as [`Extremes`] says.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Dropped {
    pub(super) integers: u128,
    pub(super) floats: f64,
}

impl Dropped {
    pub(super) const NONE: Dropped = Dropped {
        integers: 0,
        floats: 0.0,
    };
}

/// `value * n` as the low and high words of a 128-bit product.
#[inline]
pub(super) fn mul_wide(value: u64, n: u32) -> (u64, u64) {
    // A 64-bit by 32-bit product fits in 96 bits.
    let product = u128::from(value).wrapping_mul(u128::from(n));
    (product as u64, product.wrapping_shr(64) as u64)
}

/// Widens `[min, max]` to take `v` (not NaN). Branches, not selects: a new min or max is
/// rare, and a branch not taken is the cheapest on a Cortex-M (where the integer ones
/// are two-word compares); for floats, plain comparisons do what `f64::min` and `max`
/// do, cheaper.
#[inline(always)]
pub(super) fn widen<T: PartialOrd + Copy>(min: &mut T, max: &mut T, v: T) {
    // Two tests, not `else if`: the first value of an empty sketch is both.
    if v < *min {
        *min = v;
    }
    if v > *max {
        *max = v;
    }
}
