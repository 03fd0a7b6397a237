//! What a downscale or a merge drops when a sum of counts overflows a counter: the values
//! are counted, and valued from their bucket to take them out of the sums that hold them.

use super::index::{self, mapping_at};
use crate::sketch::cdf::floor_u64;
use crate::sketch::mapping::IndexMapping;
use crate::sketch::stats::{
    forget_dropped, max_of, min_of, Dropped, Extremes, FloatStats, IntStats,
};

/// Values a downscale or merge dropped, as integers (the integer path's, valued by the
/// bucket's lower edge, from the table: no float), or as [`Dropped`] (valued by the
/// bucket's representative).
pub(super) trait Loss: Sized {
    /// Nothing lost yet from a sketch of these statistics (meaningful if `count > 0`),
    /// whose extremes bound the values' estimates.
    fn new(f: &FloatStats, i: &IntStats, count: u64) -> Self;
    /// `n` values of bucket `index` (at `downshift` below the finest scale) were dropped.
    fn lose(&mut self, index: i32, downshift: u32, n: u64);
    /// Takes the values lost out of the sums (and `debt`, what is owed by the float sum,
    /// in or out of it); returns how many there were.
    fn forget(self, f: &mut FloatStats, i: &mut IntStats, debt: &mut Debt) -> u64;
}

/// What the integer path owes the float sum: estimates of dropped values (which may have
/// been recorded as floats) that the integer sum could not cover, to take out of the
/// float sum where floats are at hand. Two words, not a `u128`, which would align the
/// sketch to 16 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Debt {
    low: u64,
    high: u64,
}

impl Debt {
    pub(super) const NONE: Debt = Debt { low: 0, high: 0 };

    pub(super) fn get(self) -> u128 {
        u128::from(self.high).wrapping_shl(64) | u128::from(self.low)
    }

    fn add(&mut self, amount: u128) {
        let total = self.get().saturating_add(amount);
        (self.low, self.high) = (total as u64, total.wrapping_shr(64) as u64);
    }

    /// Takes the debt out of the float sum, never below zero in all.
    pub(super) fn settle(&mut self, f: &mut FloatStats, i: &IntStats) {
        if *self != Debt::NONE {
            f.sum = (f.sum - self.get() as f64).max(-(i.sum() as f64));
            *self = Debt::NONE;
        }
    }
}

/// [`Loss`] with integer operations only.
pub(super) struct IntLoss {
    /// The sketch's extremes (floats' rounded down), if it holds values: the estimates
    /// are clamped in.
    extremes: Option<(u64, u64)>,
    /// Whether the sketch holds floats: then what the integer sum cannot cover is owed by
    /// the float sum.
    floats: bool,
    integers: u128,
    count: u64,
}

impl Loss for IntLoss {
    fn new(f: &FloatStats, i: &IntStats, count: u64) -> Self {
        let ints = (count > 0 && i.min <= i.max).then_some((i.min, i.max));
        // A float part that holds values has a max of 0 or more (else -inf): its sign bit.
        let floats =
            (count > 0 && f.max.to_bits() >> 63 == 0).then(|| (floor_u64(f.min), floor_u64(f.max)));
        let extremes = match (ints, floats) {
            (Some((a, b)), Some((c, d))) => Some((a.min(c), b.max(d))),
            (ints, floats) => ints.or(floats),
        };
        IntLoss {
            extremes,
            floats: floats.is_some(),
            integers: 0,
            count: 0,
        }
    }

    fn lose(&mut self, index: i32, downshift: u32, n: u64) {
        // The finest bucket at the lower edge of `index` (|index << downshift| stays within
        // the finest scale's indices, which the index came from).
        let edge = index::lower_edge_u64(index.wrapping_shl(downshift));
        let value = match self.extremes {
            Some((min, max)) => edge.max(min).min(max),
            None => edge,
        };
        let sum = u128::from(value).saturating_mul(u128::from(n));
        self.integers = self.integers.saturating_add(sum);
        self.count = self.count.saturating_add(n);
    }

    fn forget(self, _: &mut FloatStats, i: &mut IntStats, debt: &mut Debt) -> u64 {
        if self.count > 0 {
            let short = self.integers.saturating_sub(i.sum());
            i.take_from_sum(self.integers);
            if self.floats {
                debt.add(short);
            }
        }
        self.count
    }
}

/// [`Loss`] valued as a merge of [`DDSketch`](crate::sketch::DDSketch) values its drops.
pub(super) struct FloatLoss {
    extremes: Extremes,
    dropped: Dropped,
    count: u64,
}

impl Loss for FloatLoss {
    fn new(f: &FloatStats, i: &IntStats, count: u64) -> Self {
        let extremes = (count > 0).then(|| (min_of(f, i), max_of(f, i)));
        let integers = (count > 0 && f.min > f.max && i.min <= i.max).then_some((i.min, i.max));
        FloatLoss {
            extremes: Extremes::of(extremes, integers),
            dropped: Dropped::NONE,
            count: 0,
        }
    }

    fn lose(&mut self, index: i32, downshift: u32, n: u64) {
        let value = mapping_at(downshift).value(index);
        self.extremes.drop_values(&mut self.dropped, n, value);
        self.count = self.count.saturating_add(n);
    }

    fn forget(self, f: &mut FloatStats, i: &mut IntStats, debt: &mut Debt) -> u64 {
        debt.settle(f, i);
        if self.count > 0 {
            forget_dropped(f, i, self.dropped);
        }
        self.count
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_round_down_to_integers_with_integer_operations() {
        let cases = [
            (0.0, 0),
            (-0.0, 0),
            (5e-324, 0),
            (0.999, 0),
            (1.0, 1),
            (3.5, 3),
            (4503599627370495.5, 4503599627370495),
            (9007199254740993.0, 9007199254740992),
            (18446744073709549568.0, 18446744073709549568),
            (18446744073709551616.0, u64::MAX),
            (f64::MAX, u64::MAX),
            (f64::INFINITY, u64::MAX),
            (-3.0, 0),
        ];
        for (x, floor) in cases {
            assert_eq!(floor_u64(x), floor, "{x}");
        }
    }
}
