//! Merging into a [`DDSketch`]: another sketch of the same layout ([`DDSketch::merge`]),
//! itself in place ([`DDSketch::merge_self`]), and the counts of bins from elsewhere
//! (decoders, an atomic sketch's snapshot) with what saturation drops taken out of the sum.

use super::DDSketch;
use crate::sketch::error::MergeError;
use crate::sketch::mapping::IndexMapping;
use crate::sketch::stats::{forget_dropped, Dropped, Extremes, FloatStats, IntStats};

/// How many bins a merge tests for emptiness at once (a chunk of `other` with none is
/// skipped).
const MERGE_CHUNK: usize = 32;

impl<M: IndexMapping, const N: usize> DDSketch<M, N> {
    /// Adds every value of `other` into `self`, as if they had all been recorded here.
    ///
    /// Both must have equal mappings, ranges and bin counts; otherwise `self` is left
    /// unchanged and the mismatch is returned. Bins add element-wise, saturating: a value
    /// that does not fit in a full bin is dropped as recording drops it, counted in
    /// [`saturated`](Self::saturated) and left out of [`count`](Self::count) and
    /// [`sum`](Self::sum). Its exact value is unknown here, so the sum drops the value of
    /// its bin clamped into `other`'s `[min, max]`: exact where the bin's values are alike
    /// (all equal, or `other` holds a single value), within `alpha` of each dropped value of
    /// the range otherwise. [`min`](Self::min) and [`max`](Self::max) take `other`'s, which
    /// still bound every value counted, unless none of its values fit: then, as recording
    /// them would, min, max and sum stay as they were.
    ///
    /// ```
    /// use tailguard::sketch::presets;
    /// let mut a = presets::int_latency();
    /// a.record_u64_n(5_000_000, u32::MAX);
    /// let b = a.clone();
    /// a.merge(&b).unwrap(); // the bin is full: every value of `b` is dropped
    /// assert_eq!((a.count(), a.saturated()), (u64::from(u32::MAX), u64::from(u32::MAX)));
    /// assert_eq!(a.mean(), Some(5e6));
    /// ```
    pub fn merge<const N2: usize>(&mut self, other: &DDSketch<M, N2>) -> Result<(), MergeError> {
        self.check_compatible(other)?;
        // `count` is the sum of the bins and the zero bin, so no bin exceeds it: if the two
        // counts sum to at most `u32::MAX`, no bin can saturate and plain addition (which
        // vectorises) gives what `add_counts` would, about 10x faster.
        if self.count.saturating_add(other.count) > u64::from(u32::MAX) {
            self.merge_saturating(other);
            return Ok(());
        }
        // Most bins of a latency sketch are empty: skip `other`'s empty chunks.
        let (a_chunks, a_rest) = self.bins.as_chunks_mut::<MERGE_CHUNK>();
        let (b_chunks, b_rest) = other.bins.as_chunks::<MERGE_CHUNK>();
        for (a, b) in a_chunks.iter_mut().zip(b_chunks) {
            if b.iter().fold(0, |x, &y| x | y) != 0 {
                for (a, &b) in a.iter_mut().zip(b) {
                    *a = a.wrapping_add(b);
                }
            }
        }
        for (a, &b) in a_rest.iter_mut().zip(b_rest) {
            *a = a.wrapping_add(b);
        }
        self.zero_count = self.zero_count.wrapping_add(other.zero_count);
        self.count = self.count.saturating_add(other.count);
        self.saturated = self.saturated.saturating_add(other.saturated);
        self.clamped = self.clamped.saturating_add(other.clamped);
        self.merge_stats(other.float_stats_summed(), &other.int_stats);
        Ok(())
    }

    /// [`merge`](Self::merge) where bins may saturate: what does not fit is dropped, and
    /// leaves the sum.
    #[cold]
    #[inline(never)]
    fn merge_saturating<const N2: usize>(&mut self, other: &DDSketch<M, N2>) {
        let before = self.count;
        let dropped = self.add_counts(
            other.zero_count,
            other.bins.iter().copied(),
            other.clamped,
            other.saturated,
            other.extremes(),
        );
        if self.count == before {
            // None of `other`'s values fit: as recording them would, they leave min, max
            // and sum alone.
            return;
        }
        self.merge_stats(other.float_stats_summed(), &other.int_stats);
        self.forget_dropped(dropped);
    }

    /// Merges the sketch with itself: what [`merge`](Self::merge) with a copy of it would
    /// make (every count doubled, saturating as a merge does; min and max unchanged; the
    /// sum doubled), without the copy, a sketch-sized value a small core's stack may not
    /// hold.
    ///
    /// ```
    /// use tailguard::sketch::presets;
    ///
    /// let mut sketch = presets::int_latency();
    /// sketch.record_u64(5_000_000);
    /// let mut merged = sketch.clone();
    /// merged.merge(&sketch).unwrap();
    /// sketch.merge_self();
    /// assert_eq!(sketch, merged);
    /// assert_eq!(sketch.count(), 2);
    /// ```
    pub fn merge_self(&mut self) {
        // What `merge` reads of `other`, taken before anything changes.
        let (zero, clamped, saturated) = (self.zero_count, self.clamped, self.saturated);
        let (float_stats, int_stats) = (self.float_stats_summed(), self.int_stats);
        if self.count.saturating_add(self.count) > u64::from(u32::MAX) {
            let (extremes, before) = (self.extremes(), self.count);
            let dropped = self.add_counts_with(zero, |a| a, clamped, saturated, extremes);
            if self.count == before {
                return; // nothing fit: the sum stays, as in `merge_saturating`
            }
            self.merge_stats(float_stats, &int_stats);
            self.forget_dropped(dropped);
            return;
        }
        // As `merge`'s fast path: no bin can reach `u32::MAX`.
        for a in self.bins.iter_mut() {
            *a = a.wrapping_add(*a);
        }
        self.zero_count = self.zero_count.wrapping_add(zero);
        self.count = self.count.saturating_add(self.count);
        self.saturated = self.saturated.saturating_add(saturated);
        self.clamped = self.clamped.saturating_add(clamped);
        self.merge_stats(float_stats, &int_stats);
    }

    /// The extremes a saturating merge values what it drops by: only integers, their
    /// extremes as integers, so that the estimate is too.
    fn extremes(&self) -> Extremes {
        let (f, i) = (&self.float_stats, &self.int_stats);
        let integers = (f.min > f.max && i.min <= i.max).then_some((i.min, i.max));
        Extremes::of(self.min().zip(self.max()), integers)
    }

    /// Folds another sketch's min, max and sums into this sketch's, after its counts.
    #[inline(always)]
    fn merge_stats(&mut self, f: FloatStats, i: &IntStats) {
        self.add_float_stats(f.min, f.max, f.sum);
        self.int_stats.fold(i, self.count);
    }

    /// Adds bin counts of the same layout (zero bin, then bins from `min_index` up), and
    /// the clamped and saturated counters that came with them. Counts beyond `u32::MAX`
    /// in a bin move to `saturated`. Min, max and sum are the caller's business.
    ///
    /// `clamped` counts values of the incoming top bin; only those that fit in this top
    /// bin count as clamped here, so `clamped <= top bin` holds and a merge counts as
    /// recording the same values into one sketch would.
    ///
    /// Returns the values dropped as saturated, valued by their bins for
    /// [`forget_dropped`](Self::forget_dropped): see [`Extremes`].
    pub(crate) fn add_counts(
        &mut self,
        zero: u32,
        bins: impl IntoIterator<Item = u32>,
        clamped: u64,
        saturated: u64,
        extremes: Extremes,
    ) -> Dropped {
        // Bins past the end of `bins` add nothing.
        let mut bins = bins.into_iter();
        let incoming = |_: u32| bins.next().unwrap_or(0);
        self.add_counts_with(zero, incoming, clamped, saturated, extremes)
    }

    /// [`add_counts`](Self::add_counts) with each bin's incoming count given by
    /// `incoming(its current count)`, bin by bin from the first: a merge of the sketch
    /// with itself adds each bin's own count.
    fn add_counts_with(
        &mut self,
        zero: u32,
        mut incoming: impl FnMut(u32) -> u32,
        clamped: u64,
        saturated: u64,
        extremes: Extremes,
    ) -> Dropped {
        let layout = self.layout();
        let mut added = 0u64;
        let mut lost = 0u64;
        let mut dropped = Dropped::NONE;
        let mut add = |a: &mut u32, b: u32, value: &dyn Fn() -> f64| {
            let sum = a.saturating_add(b);
            // Two u32s summed in a u64 cannot overflow, and `sum` is at most their sum.
            let here = u64::from(sum).wrapping_sub(u64::from(*a));
            let gone = u64::from(b).wrapping_sub(here);
            added = added.saturating_add(here);
            lost = lost.saturating_add(gone);
            if gone > 0 {
                extremes.drop_values(&mut dropped, gone, value());
            }
            *a = sum;
        };
        let top_before = self.bins.last().map_or(0, |&top| top);
        add(&mut self.zero_count, zero, &|| 0.0);
        for (pos, a) in self.bins.iter_mut().enumerate() {
            let b = incoming(*a);
            add(a, b, &|| layout.value_at(pos));
        }
        // Bins only grow here. Counting the clamped values among those that fit (rather
        // than among those dropped) keeps the most of them, and never more than fit.
        let top_added = self
            .bins
            .last()
            .map_or(0, |&top| top.wrapping_sub(top_before));
        self.count = self.count.saturating_add(added);
        self.saturated = self
            .saturated
            .saturating_add(saturated)
            .saturating_add(lost);
        self.clamped = self
            .clamped
            .saturating_add(clamped.min(u64::from(top_added)));
        dropped
    }

    /// Takes the values an [`add_counts`](Self::add_counts) dropped as saturated out of
    /// the sum: the integers' out of the integer sum, the rest out of the float sum;
    /// never below zero in all (an estimate a hair above what it stands for takes the
    /// whole sum, not more).
    pub(crate) fn forget_dropped(&mut self, dropped: Dropped) {
        self.gather_float_sum();
        forget_dropped(&mut self.float_stats, &mut self.int_stats, dropped);
    }

    /// Folds min, max and sum of values recorded elsewhere into the float statistics.
    pub(crate) fn add_float_stats(&mut self, min: f64, max: f64, sum: f64) {
        self.float_stats.fold(min, max, sum);
    }

    /// Whether `other` can be merged into `self`, and if not, why.
    ///
    /// ```
    /// use tailguard::sketch::{DDSketch, LogMapping, MergeError};
    ///
    /// let a = DDSketch::<LogMapping, 256>::with_relative_accuracy(0.01, 1.0).unwrap();
    /// let b = DDSketch::<LogMapping, 256>::with_relative_accuracy(0.01, 1.0).unwrap();
    /// assert_eq!(a.check_compatible(&b), Ok(()));
    /// let coarser = DDSketch::<LogMapping, 256>::with_relative_accuracy(0.02, 1.0).unwrap();
    /// assert_eq!(a.check_compatible(&coarser), Err(MergeError::Mapping));
    /// let smaller = DDSketch::<LogMapping, 128>::with_relative_accuracy(0.01, 1.0).unwrap();
    /// assert_eq!(a.check_compatible(&smaller), Err(MergeError::BinCount));
    /// ```
    pub fn check_compatible<const N2: usize>(
        &self,
        other: &DDSketch<M, N2>,
    ) -> Result<(), MergeError> {
        self.layout().check_compatible(&other.layout())
    }
}
