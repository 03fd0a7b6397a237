//! [`DDSketch`]'s rank queries: how many of its values are at or below a value. The rule
//! and the ends are [`cdf`](crate::sketch::cdf)'s, shared with the atomic sketch and the
//! window.

use core::time::Duration;

use super::DDSketch;
use crate::sketch::cdf::{ends_exact, ends_u64, fraction, sum_of_bins, Cut, Ends};
use crate::sketch::error::InvalidValue;
use crate::sketch::mapping::IndexMapping;

impl<M: IndexMapping, const N: usize> DDSketch<M, N> {
    /// The number of recorded values at or below `v`, as the bins tell it: the zero bin
    /// and every bin up to the one `v` maps to, with the ends exact (0 below the minimum,
    /// [`count`](Self::count) from the maximum up). NaN is an error; a value below zero
    /// (`-inf` included) ranks 0, `+inf` ranks the count. A scan of at most half the bins,
    /// from the nearer end.
    ///
    /// # Guarantee
    ///
    /// Let `exact(x)` be the number of recorded values at or below `x`, and `u` the upper
    /// edge of `v`'s bin: the first value the mapping puts in a higher bin, at most
    /// `v * (1 + alpha) / (1 - alpha)` (far from 1, to the rounding hair of the keys that
    /// docs/guarantees.md bounds for quantiles: 1e-13 past it near 2^830 at 1 %). For `v`
    /// in the trackable range
    /// (`min_trackable <= v < max_trackable`):
    ///
    /// `exact(v) <= rank(v) <= exact(u)`, plus [`clamped`](Self::clamped) if `v` is in the
    /// top bin (which holds the values above the range),
    ///
    /// since the mapping is monotone: a value at or below `v` is in `v`'s bin or below it,
    /// and a value counted is below `u`. `rank(v) = exact(v)` wherever `v` is below the
    /// minimum (0) or at or above the maximum (the count). Out of the range: for
    /// `0 <= v < min_trackable`, the zero bin, which holds the zeros and every value below
    /// `min_trackable` (the bound with `u = min_trackable`); from `max_trackable` up, every
    /// value, those clamped into the top bin included (a recorded `+inf` is one of them,
    /// and counts as `max_trackable`, as in [`max`](Self::max)).
    ///
    /// [`OtelMapping`](crate::sketch::OtelMapping)'s buckets hold their upper edge, which is its
    /// `u` (`b^(i + 1)` for bucket `i`), and its logarithm may put a value within
    /// `t = (|ln v| + 1) * 2^-50` (relative) of an edge on the other side of it (see its
    /// docs): there both sides hold with `v * (1 - 4t)` for `v` and `u * (1 + 4t)` for `u`.
    ///
    /// The ends come from the minimum and maximum, exact for the values recorded here (an
    /// [`AtomicSketch`](crate::sketch::AtomicSketch)'s, and so its snapshot's, are kept to a part
    /// per million: see [`AtomicSketch::rank`](crate::sketch::AtomicSketch::rank)).
    /// `tests/rank.rs` checks both sides against exact ranks for every mapping.
    ///
    /// ```
    /// use tailguard::sketch::presets;
    /// let mut s = presets::log_latency(); // 1 %, in nanoseconds
    /// for ns in [2e6, 4e6, 8e6, 16e6] {
    ///     s.record(ns).unwrap();
    /// }
    /// assert_eq!(s.rank(10e6), Ok(3));
    /// assert_eq!(s.rank(16e6), Ok(4)); // the maximum: every value
    /// assert_eq!(s.rank(1e6), Ok(0)); // below the minimum: none
    /// assert_eq!(s.rank(-1.0), Ok(0));
    /// // A value a little below 4 ms may share its bin, and then counts it (within the
    /// // bound); from the bin's upper edge up, within 2 % above 4 ms, every value does.
    /// let r = s.rank(4e6 * 0.995).unwrap();
    /// assert!(r == 1 || r == 2);
    /// assert_eq!(s.rank(4e6 * 1.0203), Ok(2));
    /// ```
    pub fn rank(&self, v: f64) -> Result<u64, InvalidValue> {
        let cut = Cut::of_f64(&self.layout(), v)?;
        // The exact statistics, not `min` and `max`, which round integers of 2^53 or more.
        let (f, i) = (&self.float_stats, &self.int_stats);
        Ok(self.rank_of(cut, || ends_exact(v, f, i)))
    }

    /// [`rank`](Self::rank) of an integer value (nanoseconds, say), which never fails.
    /// With [`IntMapping`](crate::sketch::IntMapping) it uses integer operations only (the
    /// mapping's integer index, as [`record_u64`](Self::record_u64)), for cores without an
    /// FPU. The same answer as `rank(v as f64)` wherever that conversion is exact (below
    /// 2^53).
    ///
    /// ```
    /// use tailguard::sketch::presets;
    /// let mut s = presets::mcu_latency(); // integer mapping: no float operation
    /// s.record_u64_slice(&[150_000, 900_000, 2_500_000]);
    /// assert_eq!(s.rank_u64(1_000_000), 2);
    /// assert_eq!(s.rank_u64(1_000_000), s.rank(1e6).unwrap());
    /// ```
    pub fn rank_u64(&self, v: u64) -> u64 {
        let cut = Cut::of_u64(&self.layout(), v);
        self.rank_of(cut, || ends_u64(v, &self.float_stats, &self.int_stats))
    }

    /// [`rank_u64`](Self::rank_u64) of a duration as whole nanoseconds (saturating at
    /// `u64::MAX`), as [`record_duration`](Self::record_duration) records it.
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::sketch::presets;
    /// let mut s = presets::int_latency();
    /// for ms in [30, 70, 120] {
    ///     s.record_duration(Duration::from_millis(ms));
    /// }
    /// assert_eq!(s.rank_duration(Duration::from_millis(100)), 2);
    /// ```
    pub fn rank_duration(&self, d: Duration) -> u64 {
        self.rank_u64(crate::clock::duration_to_nanos(d))
    }

    /// The share of the recorded values at or below `v`: [`rank`](Self::rank) over
    /// [`count`](Self::count), with the same guarantee; `None` if the sketch is empty.
    /// NaN is an error.
    ///
    /// ```
    /// use tailguard::sketch::presets;
    /// let mut s = presets::cubic_latency(); // in nanoseconds
    /// for ms in [20, 35, 40, 60, 80, 90, 95, 120, 150, 250] {
    ///     s.record(ms as f64 * 1e6).unwrap();
    /// }
    /// // A latency-band SLO, "90 % of requests within 100 ms": here 70 %.
    /// assert_eq!(s.fraction_at_or_below(100e6), Ok(Some(0.7)));
    /// assert_eq!(presets::cubic_latency().fraction_at_or_below(100e6), Ok(None));
    /// ```
    pub fn fraction_at_or_below(&self, v: f64) -> Result<Option<f64>, InvalidValue> {
        Ok(fraction(self.rank(v)?, self.count))
    }

    /// [`fraction_at_or_below`](Self::fraction_at_or_below) of a duration, through
    /// [`rank_duration`](Self::rank_duration); `None` if the sketch is empty.
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::sketch::presets;
    /// let mut s = presets::cubic_latency();
    /// for ms in [20, 35, 40, 60, 80, 90, 95, 120, 150, 250] {
    ///     s.record_duration(Duration::from_millis(ms));
    /// }
    /// // The share of requests answered within 100 ms.
    /// let within = s.fraction_at_or_below_duration(Duration::from_millis(100));
    /// assert_eq!(within, Some(0.7));
    /// ```
    pub fn fraction_at_or_below_duration(&self, d: Duration) -> Option<f64> {
        fraction(self.rank_duration(d), self.count)
    }

    /// The values `cut` counts once the ends (computed only for a sketch with values) are
    /// applied: the zero bin and the bins through a position summed from the nearer end
    /// (`count` is the zero bin plus every bin).
    #[inline]
    fn rank_of(&self, cut: Cut, ends: impl FnOnce() -> Ends) -> u64 {
        if self.count == 0 {
            return 0;
        }
        match cut.within(ends()) {
            Cut::Nothing => 0,
            Cut::Zero => u64::from(self.zero_count),
            Cut::Everything => self.count,
            Cut::Through(pos) => {
                // The bins hold `count` values at most.
                let narrow = self.count <= u64::from(u32::MAX);
                let split = pos.wrapping_add(1); // pos < N
                let (below, above) = self
                    .bins
                    .split_at_checked(split)
                    .unwrap_or((&self.bins, &[]));
                if below.len() <= above.len() {
                    u64::from(self.zero_count).saturating_add(sum_of_bins(below, narrow))
                } else {
                    self.count.saturating_sub(sum_of_bins(above, narrow))
                }
            }
        }
    }
}
