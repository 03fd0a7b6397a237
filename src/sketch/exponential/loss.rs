//! What a downscale or a merge drops when a sum of counts overflows a counter: the values
//! are counted, and valued from their bucket to take them out of the sum.

use super::index::{self, mapping_at};
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
    /// Takes the values lost out of the sums; returns how many there were.
    fn forget(self, f: &mut FloatStats, i: &mut IntStats) -> u64;
}

/// [`Loss`] with integer operations only.
pub(super) struct IntLoss {
    /// The sketch's integer extremes, if it holds integers: the estimates are clamped in.
    extremes: Option<(u64, u64)>,
    integers: u128,
    count: u64,
}

impl Loss for IntLoss {
    fn new(_: &FloatStats, i: &IntStats, count: u64) -> Self {
        IntLoss {
            extremes: (count > 0 && i.min <= i.max).then_some((i.min, i.max)),
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

    fn forget(self, _: &mut FloatStats, i: &mut IntStats) -> u64 {
        if self.count > 0 {
            i.take_from_sum(self.integers);
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

    fn forget(self, f: &mut FloatStats, i: &mut IntStats) -> u64 {
        if self.count > 0 {
            forget_dropped(f, i, self.dropped);
        }
        self.count
    }
}
