//! [`ExponentialSketch`]'s rank queries: how many of its values are at or below a value.
//! The rule and the ends are [`cdf`](crate::sketch::cdf)'s, shared with
//! [`DDSketch`](crate::sketch::DDSketch), the atomic sketch and the window; the buckets
//! are this sketch's, at the scale it has reached.

use core::time::Duration;

use super::counter::Counter;
use super::index;
use super::sketch::ExponentialSketch;
use crate::sketch::cdf::{ends_exact, ends_u64, fraction, Cut, Ends};
use crate::sketch::error::InvalidValue;

impl<C: Counter, const B: usize> ExponentialSketch<C, B> {
    /// The number of values held at or below `v`, as the buckets tell it: the zero bucket
    /// and every bucket up to the one `v` falls in, with the ends exact (0 below the
    /// minimum, [`count`](Self::count) from the maximum up). NaN is an error; a value
    /// below zero (`-inf` included) ranks 0, `+inf` ranks the count. The bucket is found
    /// from the float's bits, as [`record`](Self::record) finds it; a scan of at most half
    /// the occupied buckets, from the nearer end.
    ///
    /// # Guarantee
    ///
    /// [`DDSketch::rank`](crate::sketch::DDSketch::rank)'s, at the scale the sketch has
    /// reached (a later record may coarsen it, and so widen the bound). Let `exact(x)` be
    /// the number of values recorded at or below `x`, `b = 2^(2^-scale)` and
    /// `alpha = (b - 1) / (b + 1)` ([`relative_accuracy`](Self::relative_accuracy)), and
    /// `u = b^(i + 1)` the upper edge of `v`'s bucket `i` (buckets are `(b^i, b^(i + 1)]`,
    /// so `u < v * b = v * (1 + alpha) / (1 - alpha)`; the subnormals share the bucket of
    /// `2^-1022`, as in the SDKs, whose `u` that is). For every `v > 0`:
    ///
    /// `exact(v) - saturated <= rank(v) <= exact(u)`,
    ///
    /// since a value at or below `v` is in `v`'s bucket or below it, and a value counted
    /// is at most `u`. The buckets are exact (no logarithm: a value on an edge is in the
    /// bucket below it, as the specification says), so the bound needs no tolerance,
    /// unlike an [`OtelMapping`](crate::sketch::OtelMapping) `DDSketch`'s.
    /// [`saturated`](Self::saturated) is 0 unless a full counter dropped values: the
    /// sketch counts only the values it holds. `rank(v) = exact(v)` (less what was
    /// dropped) wherever `v` is below the minimum (0) or at or above the maximum (the
    /// count); `rank(0)` is the zero count (`0` and `-0.0`), once a zero was recorded. A
    /// recorded `+inf` is held as `f64::MAX`, and counts as that value in `exact` (as in
    /// [`max`](Self::max)). Values decoded from an OTLP point (rather than recorded)
    /// are where the point's buckets put them: an SDK's logarithm method may put a value
    /// near an edge one bucket up, and then the point's min, kept as it is, lies below
    /// the lowest bucket, where `rank` counts none of the buckets' values.
    /// `tests/rank.rs` checks both sides against exact ranks.
    ///
    /// ```
    /// use tailguard::sketch::ExponentialSketch;
    /// let mut s = ExponentialSketch::<u32, 160>::new();
    /// for ns in [2e6, 4e6, 8e6, 16e6] {
    ///     s.record(ns).unwrap();
    /// }
    /// assert_eq!(s.scale(), 5); // three powers of two in 160 buckets: 32 per power
    /// assert_eq!(s.rank(10e6), Ok(3));
    /// assert_eq!(s.rank(16e6), Ok(4)); // the maximum: every value
    /// assert_eq!(s.rank(1e6), Ok(0)); // below the minimum: none
    /// assert_eq!(s.rank(-1.0), Ok(0));
    /// // A value a little below 4 ms may share its bucket, and then counts it (within the
    /// // bound); from the bucket's upper edge up, less than `b` times 4 ms, every value does.
    /// let r = s.rank(4e6 * 0.995).unwrap();
    /// assert!(r == 1 || r == 2);
    /// assert_eq!(s.rank(4e6 * 1.022), Ok(2)); // b = 2^(1/32) = 1.0219 at scale 5
    /// ```
    pub fn rank(&self, v: f64) -> Result<u64, InvalidValue> {
        if v.is_nan() {
            return Err(InvalidValue);
        }
        let (f, i) = self.stats();
        Ok(self.rank_of(
            || ends_exact(v, f, i),
            || {
                if v < 0.0 {
                    Cut::Nothing
                } else if v == 0.0 {
                    Cut::Zero
                } else {
                    // Finite and positive here (`+inf` is at or above every value).
                    self.cut_at(index::of_f64(v))
                }
            },
        ))
    }

    /// [`rank`](Self::rank) of an integer value (nanoseconds, say), which never fails.
    /// Integer operations only, as [`record_u64`](Self::record_u64) (the bucket of the
    /// integer itself, not of its nearest `f64`), for cores without an FPU. The same
    /// answer as `rank(v as f64)` wherever that conversion is exact (below 2^53).
    ///
    /// ```
    /// use tailguard::sketch::ExponentialSketch;
    /// let mut s = ExponentialSketch::<u16, 64>::new();
    /// for ns in [150_000, 900_000, 2_500_000] {
    ///     s.record_u64(ns);
    /// }
    /// assert_eq!(s.rank_u64(1_000_000), 2);
    /// assert_eq!(s.rank_u64(1_000_000), s.rank(1e6).unwrap());
    /// ```
    pub fn rank_u64(&self, v: u64) -> u64 {
        let (f, i) = self.stats();
        self.rank_of(
            || ends_u64(v, f, i),
            || {
                if v == 0 {
                    Cut::Zero
                } else {
                    self.cut_at(index::of_u64(v))
                }
            },
        )
    }

    /// [`rank_u64`](Self::rank_u64) of a duration as whole nanoseconds (saturating at
    /// `u64::MAX`), as [`record_duration`](Self::record_duration) records it.
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::sketch::ExponentialSketch;
    /// let mut s = ExponentialSketch::<u32, 160>::new();
    /// for ms in [30, 70, 120] {
    ///     s.record_duration(Duration::from_millis(ms));
    /// }
    /// assert_eq!(s.rank_duration(Duration::from_millis(100)), 2);
    /// ```
    pub fn rank_duration(&self, d: Duration) -> u64 {
        self.rank_u64(crate::clock::duration_to_nanos(d))
    }

    /// The share of the values held at or below `v`: [`rank`](Self::rank) over
    /// [`count`](Self::count), with the same guarantee; `None` if the sketch is empty.
    /// NaN is an error.
    ///
    /// ```
    /// use tailguard::sketch::ExponentialSketch;
    /// let mut s = ExponentialSketch::<u32, 160>::new();
    /// for ms in [20, 35, 40, 60, 80, 90, 95, 120, 150, 250] {
    ///     s.record(ms as f64 * 1e6).unwrap();
    /// }
    /// // A latency-band SLO, "90 % of requests within 100 ms": here 70 %.
    /// assert_eq!(s.fraction_at_or_below(100e6), Ok(Some(0.7)));
    /// let empty = ExponentialSketch::<u32, 160>::new();
    /// assert_eq!(empty.fraction_at_or_below(100e6), Ok(None));
    /// ```
    pub fn fraction_at_or_below(&self, v: f64) -> Result<Option<f64>, InvalidValue> {
        Ok(fraction(self.rank(v)?, self.count()))
    }

    /// [`fraction_at_or_below`](Self::fraction_at_or_below) of a duration, through
    /// [`rank_duration`](Self::rank_duration); `None` if the sketch is empty.
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::sketch::ExponentialSketch;
    /// let mut s = ExponentialSketch::<u16, 64>::new();
    /// for ms in [20, 35, 40, 60, 80, 90, 95, 120, 150, 250] {
    ///     s.record_duration(Duration::from_millis(ms));
    /// }
    /// // The share of requests answered within 100 ms.
    /// let within = s.fraction_at_or_below_duration(Duration::from_millis(100));
    /// assert_eq!(within, Some(0.7));
    /// ```
    pub fn fraction_at_or_below_duration(&self, d: Duration) -> Option<f64> {
        fraction(self.rank_duration(d), self.count())
    }

    /// The counters at or below the value of index `fine` at the finest scale: the zero
    /// bucket alone below the lowest occupied bucket, everything from the highest up, or
    /// the buckets through an offset from the lowest.
    fn cut_at(&self, fine: i32) -> Cut {
        let index = self.at_scale(fine);
        match self.span() {
            Some((start, _)) if index < start => Cut::Zero,
            Some((start, end)) if index < end => {
                // 0 <= index - start < end - start < B.
                Cut::Through(index.wrapping_sub(start) as usize)
            }
            Some(_) => Cut::Everything,
            None => Cut::Zero,
        }
    }

    /// The values the cut counts once the ends (computed only for a sketch with values)
    /// are applied: the zero bucket and the buckets through an offset from the lowest,
    /// summed from the nearer end.
    fn rank_of(&self, ends: impl FnOnce() -> Ends, cut: impl FnOnce() -> Cut) -> u64 {
        let count = self.count();
        if count == 0 {
            return 0;
        }
        let ends = ends();
        // The ends first: `cut` asks for a bucket only for a value inside them (finite).
        let cut = if ends.below_every || ends.at_or_above_every {
            Cut::Zero.within(ends)
        } else {
            cut()
        };
        match cut {
            Cut::Nothing => 0,
            Cut::Zero => self.zero_count().min(count),
            Cut::Everything => count,
            Cut::Through(k) => {
                let len = self.span().map_or(0, |(start, end)| {
                    end.wrapping_sub(start).wrapping_add(1) as usize // 1..=B
                });
                let buckets = self.ring_counts().map(|(_, n)| n);
                let through = k.wrapping_add(1); // k < len
                if through <= len.wrapping_sub(through) {
                    let below = buckets.take(through).fold(0, u64::saturating_add);
                    self.zero_count().saturating_add(below).min(count)
                } else {
                    let above = buckets.skip(through).fold(0, u64::saturating_add);
                    count.saturating_sub(above)
                }
            }
        }
    }
}
