//! [`ExponentialSketch`]: `B` OpenTelemetry buckets that downscale in place as the range
//! of the values grows.

use core::fmt;
use core::time::Duration;

use super::counter::Counter;
use super::downscale::{collapse, position, scale_change};
use super::index::{self, mapping_at, FINEST_SCALE, MAX_DOWNSHIFT};
use super::loss::{Debt, FloatLoss, IntLoss, Loss};
use crate::sketch::error::{InvalidQuantile, RecordError};
use crate::sketch::mapping::{IndexMapping, OtelMapping};
use crate::sketch::rank::{rank_bin, sketch_quantile, RankBin, RankedBins};
use crate::sketch::stats::{max_of, min_of, widen, FloatStats, IntStats};
use crate::sketch::sum_bounds;

/// An OpenTelemetry exponential histogram of `B` buckets of counters `C` that **scales
/// itself**: it starts at scale 8 (256 buckets per power of two, 0.14 %) and, when a value
/// falls outside the `B` buckets, downscales in place (each halving of the scale merges
/// pairs of buckets), exactly as the OpenTelemetry SDKs aggregate with `max_size = B`. No
/// range to choose, fixed memory, and the finest scale the values allow.
///
/// * Buckets: `(b^i, b^(i+1)]` with `b = 2^(2^-scale)`, [`scale`](Self::scale) in
///   `-10..=8`, [`offset`](Self::offset) the lowest index; zeros in a zero bucket of their
///   own. For the same values, the same scale, offset and bucket counts as the SDKs
///   (checked against the Python SDK by `tests/exponential_interop.rs`), but for values
///   the SDKs' logarithm puts across a bucket edge and integers of 2^53 or more (see
///   [Exact buckets](#exact-buckets-integer-operations-only)), and zeros alone, which
///   leave this sketch at scale 8 where the Python SDK reports scale 0 (no bucket
///   either way).
/// * Exact buckets, with integer operations only, for floats and integers alike (see
///   [Exact buckets](#exact-buckets-integer-operations-only) below).
/// * Exact [`count`](Self::count), [`min`](Self::min), [`max`](Self::max) and
///   [`sum`](Self::sum) (integers summed exactly in 128 bits), as [`DDSketch`](crate::sketch::DDSketch) keeps
///   them; [`quantile`](Self::quantile)s within [`relative_accuracy`](Self::relative_accuracy)
///   of the exact sample quantile, the accuracy of the scale it is at (but among
///   subnormals, below `f64::MIN_POSITIVE`, which share one bucket: see `quantile`).
/// * NaN and negative values are refused with a [`RecordError`]; `-0.0` is a zero; `+inf`
///   is recorded as `f64::MAX` and counted by [`clamped`](Self::clamped) (the Python
///   SDK drops non-finite values: equality with it is for finite ones).
/// * A bucket that is full drops the value, counted by [`saturated`](Self::saturated)
///   and left out of count, min, max and sum (a downscale or merge whose sums overflow a
///   counter drops the excess too, its value estimated from its bucket). So does a count
///   at `u64::MAX`: a value past it is in no bucket, so that [`count`](Self::count) is
///   always the zero count plus the buckets (and the sketch's OTLP point decodes back).
///
/// Empty, it is all zero bytes (a `static` of it lands in `.bss`) and
/// [`new`](Self::new) is `const`. [`presets::OtelAuto`](crate::sketch::presets::OtelAuto)
/// is the SDKs' default size, 160 buckets.
///
/// # Exact buckets, integer operations only
///
/// A value's bucket at scale 8 is found from its float's exponent and its mantissa
/// against a table of the 256 bucket edges of one power of two (the OpenTelemetry
/// specification's lookup-table method; a second table, by the mantissa's top bits,
/// leaves one comparison to make); the buckets nest (the index at scale `s` is the
/// index at `s + 1` shifted right by one), so a shift gives it at every coarser scale. No
/// float arithmetic and no division, at any scale: [`record_u64`](Self::record_u64) suits
/// a core without an FPU (`.ci/check-int-path.sh` checks the Cortex-M0's image).
///
/// The bucket is exact: for a `u64` the integer's own (not its nearest `f64`'s), for an
/// `f64` the float's. At scales above 0 the SDKs compute `floor(ln(v) * 2^scale / ln 2)`,
/// which may put a value within `(|ln v| + 1) * 2^-50` (relative) of a bucket edge in the
/// bucket beside it (see [`OtelMapping`]): the rounding of `ln v` grows with `|ln v|`, so
/// the Python SDK puts the integer 2^49 - 2, `2^-48` below the edge 2^49, a bucket high
/// (12,544 at scale 8, where this sketch has 12,543), and near `2^±1000` it misplaces
/// values up to about `1e-13` from an edge. There this sketch and an SDK can disagree.
/// So can they on an integer of 2^53 or more, which an SDK rounds to a float first
/// (2^56 + 1 is 2^56 to it, a bucket lower); either way the different buckets can end
/// at different scales.
/// Powers of two, edges at every scale, are exact in both.
///
/// Scale 8 is the finest because of the tables' flash: 256 `u64` edges are 2 KiB (and the
/// slices' counts 512 bytes), and each finer scale doubles that. It is Prometheus's finest native-histogram schema too, and
/// little is lost below it: `B` buckets at scale 8 span a factor of only `2^(B / 256)`
/// (1.54 for 160 buckets), so wider data downscales past it anyway. (The Python SDK's
/// default `max_scale` is 20: compare with `max_scale = 8`.)
///
/// ```
/// use tailguard::sketch::{ExponentialSketch, IndexMapping};
///
/// let mut s = ExponentialSketch::<u32, 160>::new();
/// s.record_u64(1_000); // one value: scale 8, the finest
/// assert_eq!(s.scale(), 8);
/// for v in 1..=100_000u64 {
///     s.record_u64(v * 1_000); // 1 µs to 100 ms, in ns: five decades
/// }
/// assert_eq!(s.scale(), 3); // 160 buckets of 8 per power of two span 2^20
/// let p99 = s.quantile(0.99).unwrap().unwrap();
/// assert!((p99 - 99e6).abs() <= s.relative_accuracy() * 99e6); // the exact p99: 99 ms
/// assert_eq!((s.count(), s.min(), s.max()), (100_001, Some(1e3), Some(1e8)));
/// // Integer sums are exact; the mean lies between min and max.
/// assert_eq!(s.sum(), 5_000_050_001_000.0);
/// assert!((s.mean().unwrap() - 5_000_050_001_000.0 / 100_001.0).abs() < 1e-6);
/// // The lowest bucket (OTLP's offset) is the one of the smallest value, 1 µs.
/// assert_eq!(s.offset(), s.mapping().index(1e3));
/// assert!(!s.is_empty());
/// s.record_u64(0);
/// assert_eq!((s.zero_count(), s.clamped(), s.saturated()), (1, 0, 0));
/// ```
#[derive(Clone)]
pub struct ExponentialSketch<C: Counter, const B: usize> {
    /// A ring: bucket `i` is at [`position`]`(i, base, B)`.
    counts: [C; B],
    /// The bucket at position 0 (within `start..=end` while any bucket is occupied).
    base: i32,
    /// The lowest and highest occupied buckets (`end - start < B`), if `occupied`.
    start: i32,
    end: i32,
    /// Whether any bucket has held a value (false, like every other field, when empty).
    occupied: bool,
    /// `FINEST_SCALE - scale`, in `0..=MAX_DOWNSHIFT`.
    downshift: u32,
    /// Values held by the buckets and the zero bucket.
    count: u64,
    zero_count: u64,
    clamped: u64,
    saturated: u64,
    /// Meaningful only while `count > 0`: the first value held resets them to their empty
    /// statistics, so that the empty sketch is all zero bytes.
    float_stats: FloatStats,
    int_stats: IntStats,
    /// Owed by the float sum (see [`Debt`]): meaningful, as the statistics, while
    /// `count > 0`.
    float_debt: Debt,
}

impl<C: Counter, const B: usize> ExponentialSketch<C, B> {
    /// An empty sketch, at scale 8. `const`, and all zero bytes: a `static` of it costs no
    /// flash for its initial value.
    ///
    /// `B` must be at least 2 (the SDKs' smallest `max_size`: at scale -10 every float
    /// fits in two buckets) and at most 2^20: a compile-time error otherwise.
    ///
    /// ```
    /// use std::sync::Mutex;
    /// use tailguard::sketch::ExponentialSketch;
    ///
    /// static LATENCIES: Mutex<ExponentialSketch<u16, 64>> = Mutex::new(ExponentialSketch::new());
    ///
    /// LATENCIES.lock().unwrap().record_u64(1_500_000);
    /// assert_eq!(LATENCIES.lock().unwrap().count(), 1);
    /// ```
    ///
    /// One bucket does not compile:
    ///
    /// ```compile_fail
    /// let s = tailguard::sketch::ExponentialSketch::<u32, 1>::new();
    /// ```
    pub const fn new() -> Self {
        const {
            assert!(
                B >= 2 && B <= 1 << 20,
                "ExponentialSketch needs 2 to 2^20 buckets"
            )
        };
        ExponentialSketch {
            counts: [C::ZERO; B],
            base: 0,
            start: 0,
            end: 0,
            occupied: false,
            downshift: 0,
            count: 0,
            zero_count: 0,
            clamped: 0,
            saturated: 0,
            float_stats: ZERO_FLOAT_STATS,
            int_stats: ZERO_INT_STATS,
            float_debt: Debt::NONE,
        }
    }

    /// Before a value is added: the statistics of an empty sketch are zero bytes, not the
    /// empty statistics.
    #[inline(always)]
    fn begin(&mut self) {
        if self.count == 0 {
            self.float_stats = FloatStats::EMPTY;
            self.int_stats = IntStats::EMPTY;
            self.float_debt = Debt::NONE;
        }
    }

    /// Records an integer value (nanoseconds, say). Never fails. Integer operations only,
    /// at every scale (no float, no division: `.ci/check-int-path.sh` checks the
    /// Cortex-M0's image), and exact: the bucket of the integer itself, not of its
    /// nearest `f64`.
    #[inline]
    pub fn record_u64(&mut self, value: u64) {
        if self.count == u64::MAX {
            return self.drop_one();
        }
        self.begin();
        let added = if value == 0 {
            self.zero_count = self.zero_count.saturating_add(1);
            true
        } else {
            self.add_one::<IntLoss>(index::of_u64(value))
        };
        if added {
            self.count = self.count.saturating_add(1);
            let s = &mut self.int_stats;
            widen(&mut s.min, &mut s.max, value);
            s.add_to_sum(value, 0);
        } else {
            self.saturated = self.saturated.saturating_add(1);
        }
    }

    /// Records a duration as whole nanoseconds (saturating at `u64::MAX`).
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::sketch::ExponentialSketch;
    ///
    /// let mut s = ExponentialSketch::<u32, 160>::new();
    /// s.record_duration(Duration::from_millis(2));
    /// s.record_duration(Duration::from_nanos(2_000_000));
    /// assert_eq!((s.count(), s.min(), s.max()), (2, Some(2e6), Some(2e6)));
    /// ```
    #[inline]
    pub fn record_duration(&mut self, d: Duration) {
        self.record_u64(crate::clock::duration_to_nanos(d))
    }

    /// Records one value. NaN and negative values are errors and change nothing; `-0.0`
    /// is a zero; `+inf` is recorded as `f64::MAX` and counted by
    /// [`clamped`](Self::clamped). The bucket is found with integer operations (the
    /// float's bits and the table), exactly.
    ///
    /// ```
    /// use tailguard::sketch::{ExponentialSketch, RecordError};
    ///
    /// let mut s = ExponentialSketch::<u32, 160>::new();
    /// s.record(0.25).unwrap();
    /// s.record(-0.0).unwrap(); // a zero
    /// s.record(f64::INFINITY).unwrap(); // held as f64::MAX, counted as clamped
    /// assert_eq!((s.count(), s.zero_count(), s.clamped()), (3, 1, 1));
    /// assert_eq!(s.max(), Some(f64::MAX));
    /// assert_eq!(s.record(f64::NAN), Err(RecordError::NaN));
    /// assert_eq!(s.record(-1.0), Err(RecordError::Negative));
    /// assert_eq!(s.count(), 3); // refused values change nothing
    /// ```
    pub fn record(&mut self, value: f64) -> Result<(), RecordError> {
        if value.is_nan() {
            return Err(RecordError::NaN);
        }
        if value < 0.0 {
            return Err(RecordError::Negative);
        }
        if self.count == u64::MAX {
            self.drop_one();
            return Ok(());
        }
        self.begin();
        // -0.0 passed the check above: make it +0.0 (see `DDSketch::record_n`).
        let value = value.abs();
        let clamped = value == f64::INFINITY;
        let value = if clamped { f64::MAX } else { value };
        let added = if value == 0.0 {
            self.zero_count = self.zero_count.saturating_add(1);
            true
        } else {
            self.add_one::<FloatLoss>(index::of_f64(value))
        };
        if added {
            self.count = self.count.saturating_add(1);
            if clamped {
                self.clamped = self.clamped.saturating_add(1);
            }
            let s = &mut self.float_stats;
            widen(&mut s.min, &mut s.max, value);
            s.sum += value;
        } else {
            self.saturated = self.saturated.saturating_add(1);
        }
        Ok(())
    }

    /// A value the count cannot take (it is at `u64::MAX`): counted as saturated and added
    /// nowhere, so that the count stays the zero count plus the buckets.
    #[cold]
    #[inline(never)]
    fn drop_one(&mut self) {
        self.saturated = self.saturated.saturating_add(1);
    }

    /// A [`Loss`] valuing what this sketch drops by its own extremes.
    fn loss<L: Loss>(&self) -> L {
        L::new(&self.float_stats, &self.int_stats, self.count)
    }

    /// Takes the values of `loss` out of the sums, and out of `count` into `saturated`;
    /// returns how many.
    fn forget(&mut self, loss: impl Loss) -> u64 {
        let n = loss.forget(
            &mut self.float_stats,
            &mut self.int_stats,
            &mut self.float_debt,
        );
        self.count = self.count.saturating_sub(n);
        self.saturated = self.saturated.saturating_add(n);
        n
    }

    /// Adds one to the bucket of the value of index `fine` at the finest scale,
    /// downscaling first if it falls outside the `B` buckets. Returns whether it was
    /// added (not if the bucket is full).
    #[inline(always)]
    fn add_one<L: Loss>(&mut self, fine: i32) -> bool {
        let index = fine >> self.downshift;
        if !(self.occupied && self.start <= index && index <= self.end) {
            self.make_room::<L>(fine);
        }
        let index = fine >> self.downshift;
        match self.counts.get_mut(position(index, self.base, B)) {
            Some(c) => c.add_saturating(1) == 1,
            None => false, // never (see `position`)
        }
    }

    /// Makes `start..=end` take the bucket of finest index `fine`, downscaling first if
    /// that would span more than `B` buckets: the SDKs' rule, the halvings that make the
    /// lowest and highest index fit.
    #[cold]
    #[inline(never)]
    fn make_room<L: Loss>(&mut self, fine: i32) {
        let index = fine >> self.downshift;
        if !self.occupied {
            (self.base, self.start, self.end, self.occupied) = (index, index, index, true);
            return;
        }
        let (low, high) = (self.start.min(index), self.end.max(index));
        let change = scale_change(low, high, B);
        if change > 0 {
            let mut loss = self.loss::<L>();
            self.downscale(change, &mut loss);
            self.forget(loss);
        }
        let index = fine >> self.downshift;
        self.start = self.start.min(index);
        self.end = self.end.max(index);
    }

    /// Halves the scale `change` times, in place (at most down to scale -10).
    fn downscale(&mut self, change: u32, loss: &mut impl Loss) {
        let change = change.min(MAX_DOWNSHIFT.saturating_sub(self.downshift));
        if change == 0 || !self.occupied {
            self.downshift = self.downshift.saturating_add(change);
            return;
        }
        let downshift = self.downshift.saturating_add(change);
        let (start, end) = collapse(
            &mut self.counts,
            self.base,
            (self.start, self.end),
            change,
            |index, n| loss.lose(index, downshift, n),
        );
        (self.base, self.start, self.end) = (start, start, end);
        self.downshift = downshift;
    }

    /// Adds every value of `other` into `self`, as if they had all been recorded here:
    /// at the coarser of the two scales (a merge cannot refine what `other` holds),
    /// downscaled further if the union does not fit in `B` buckets. The buckets are
    /// exactly those of recording every value into one sketch of `B` buckets, downscaled
    /// to that scale: the same buckets when both sketches were at least as fine, as they
    /// are when `other` has as many buckets or more. Any two sketches merge.
    ///
    /// Counters add saturating: what does not fit in a bucket is dropped, counted by
    /// [`saturated`](Self::saturated), and its value (its bucket's representative clamped
    /// into the extremes, as [`DDSketch::merge`](crate::sketch::DDSketch::merge) values it)
    /// taken out of the sum. So are `other`'s values past a count of `u64::MAX` (its zeros
    /// first, then its buckets from the lowest), which go in no bucket; min and max take
    /// `other`'s whenever any of its values is added (and only then: a merge none of whose
    /// values fit leaves min, max and sum as recording them would).
    ///
    /// ```
    /// use tailguard::sketch::ExponentialSketch;
    ///
    /// let (mut fast, mut slow) = (ExponentialSketch::<u32, 64>::new(), ExponentialSketch::<u32, 64>::new());
    /// (1_000..2_000).for_each(|v| fast.record_u64(v));
    /// (1_000_000..1_001_000).for_each(|v| slow.record_u64(v));
    /// assert_eq!((fast.scale(), slow.scale()), (5, 8)); // 1e3..2e3 is 64 buckets at 6: one too many
    /// fast.merge(&slow);
    /// assert_eq!(fast.scale(), 2); // 1e3 to 1e6: ten powers of two in 64 buckets
    /// assert_eq!(fast.count(), 2_000);
    /// ```
    pub fn merge<const B2: usize>(&mut self, other: &ExponentialSketch<C, B2>) {
        self.clamped = self.clamped.saturating_add(other.clamped);
        self.saturated = self.saturated.saturating_add(other.saturated);
        if other.count == 0 {
            return; // nothing held (its statistics are not meaningful)
        }
        let theirs = Incoming {
            downshift: other.downshift,
            span: other.occupied.then_some((other.start, other.end)),
            zero_count: other.zero_count,
            count: other.count,
        };
        // Their float sum less what it owes.
        let mut f = other.float_stats;
        let mut debt = other.float_debt;
        debt.settle(&mut f, &other.int_stats);
        self.merge_buckets(&theirs, &f, &other.int_stats, |sink| {
            for (k, n) in other.ring_counts() {
                sink(other.start.wrapping_add(k), n); // within start..=end
            }
        });
    }

    /// Adds the buckets of `theirs` (given by `each`, which passes every bucket's index
    /// at its scale and count to a sink) and its values' statistics: the rule of
    /// [`merge`](Self::merge), for another sketch or a data point. Returns how many of
    /// their values were dropped as saturated (the sketch's own values a downscale drops
    /// are counted by `saturated` too, but not here).
    fn merge_buckets(
        &mut self,
        theirs: &Incoming,
        f: &FloatStats,
        i: &IntStats,
        each: impl Fn(&mut dyn FnMut(i32, u64)),
    ) -> u64 {
        // The count stops at u64::MAX: their values past it are dropped, counted as
        // saturated and added nowhere (the zeros first, then the buckets in the order
        // `each` gives them), so that the count stays the zero count plus the buckets.
        let room = u64::MAX.wrapping_sub(self.count);
        let zeros = theirs.zero_count.min(room);
        let lost_zeros = theirs.zero_count.wrapping_sub(zeros);
        let room = room.wrapping_sub(zeros);
        let span = if theirs.count.saturating_sub(theirs.zero_count) <= room {
            theirs.span
        } else {
            // Only the buckets of values within the room widen the span (or downscale).
            let (mut left, mut span) = (room, None::<(i32, i32)>);
            each(&mut |index, n| {
                let fit = n.min(left);
                left = left.wrapping_sub(fit);
                if fit > 0 {
                    span = Some(span.map_or((index, index), |(l, h)| (l.min(index), h.max(index))));
                }
            });
            span
        };
        if zeros == 0 && span.is_none() {
            // Nothing of theirs is taken.
            let lost = theirs
                .count
                .saturating_sub(theirs.zero_count)
                .saturating_add(lost_zeros);
            self.saturated = self.saturated.saturating_add(lost);
            return lost;
        }
        self.begin();
        let mut other_loss = FloatLoss::new(f, i, theirs.count);
        let mut added = zeros;
        if let Some((start, end)) = span {
            // The coarser scale, then the halvings that make the union fit.
            let downshift = self.downshift.max(theirs.downshift);
            let shift = downshift.wrapping_sub(theirs.downshift); // <= 18
            let (low, high) = (start >> shift, end >> shift);
            let (low, high) = if self.occupied {
                let ours = downshift.wrapping_sub(self.downshift);
                (low.min(self.start >> ours), high.max(self.end >> ours))
            } else {
                (low, high)
            };
            let change = scale_change(low, high, B);
            let target = downshift.saturating_add(change).min(MAX_DOWNSHIFT);
            let mut own_loss = self.loss::<FloatLoss>();
            self.downscale(target.saturating_sub(self.downshift), &mut own_loss);
            self.forget(own_loss);
            let shift = self.downshift.wrapping_sub(theirs.downshift);
            let (low, high) = (start >> shift, end >> shift);
            if self.occupied {
                self.start = self.start.min(low);
                self.end = self.end.max(high);
            } else {
                (self.base, self.start, self.end, self.occupied) = (low, low, high, true);
            }
            let (base, downshift) = (self.base, self.downshift);
            let counts = &mut self.counts;
            let mut left = room;
            each(&mut |index, n| {
                let index = index >> shift;
                // As the first pass (if any) took them; never outside `low..=high`.
                let fit = if low <= index && index <= high {
                    n.min(left)
                } else {
                    0
                };
                left = left.wrapping_sub(fit);
                let held = match counts.get_mut(position(index, base, B)) {
                    Some(c) if fit > 0 => c.add_saturating(fit),
                    _ => 0,
                };
                added = added.saturating_add(held);
                if held < n {
                    other_loss.lose(index, downshift, n.wrapping_sub(held));
                }
            });
        } else if theirs.span.is_some() {
            // No room for any of their buckets' values (but for zeros).
            each(&mut |index, n| other_loss.lose(index, theirs.downshift, n));
        }
        if added == 0 {
            // None of theirs was taken (every bucket they fall in is full; no zero): as
            // recording them would, they leave min, max and the sums alone. All of them
            // are saturated (their zeros too, past the room: `zeros` is 0).
            self.saturated = self.saturated.saturating_add(theirs.count);
            return theirs.count;
        }
        // Within the room: neither passes u64::MAX.
        self.zero_count = self.zero_count.saturating_add(zeros);
        self.count = self.count.saturating_add(added);
        self.float_stats.fold(f.min, f.max, f.sum);
        self.int_stats.fold(i, self.count);
        let other = other_loss.forget(
            &mut self.float_stats,
            &mut self.int_stats,
            &mut self.float_debt,
        );
        let lost = other.saturating_add(lost_zeros);
        self.saturated = self.saturated.saturating_add(lost);
        lost
    }

    /// Adds the values of an OpenTelemetry data point (the [`otlp`](crate::otlp)
    /// decoder's), as [`merge`](Self::merge) adds another sketch's: `each` passes every
    /// positive bucket's index at `point.scale` and its count to a sink (buckets
    /// outside `point.span` must be empty). A point finer than scale 8 is downscaled to
    /// it first, exactly. Returns how many of the point's values were dropped as
    /// saturated; refuses
    /// (changing nothing) a point whose non-empty buckets lie beyond the floats' range,
    /// where no scale down to -10 can hold them.
    pub(crate) fn merge_point(
        &mut self,
        point: &Point,
        each: impl Fn(&mut dyn FnMut(i64, u64)),
    ) -> Result<u64, BeyondFloats> {
        // Halvings from the point's scale to the finest, and below it (both 0 at 8).
        let finer = u32::try_from(point.scale.wrapping_sub(FINEST_SCALE)).unwrap_or(0);
        let coarser = u32::try_from(FINEST_SCALE.saturating_sub(point.scale)).unwrap_or(0);
        if coarser > MAX_DOWNSHIFT || finer > 12 {
            return Err(BeyondFloats); // outside -10..=20
        }
        let span = match point.span {
            Some((low, high)) => {
                let (low, high) = (low >> finer, high >> finer);
                let fits = low <= high
                    && i64::from(index::LOWEST >> coarser) <= low
                    && high <= i64::from(index::HIGHEST >> coarser);
                if !fits {
                    return Err(BeyondFloats);
                }
                // Both within the finest scale's indices: they fit an i32.
                Some((low as i32, high as i32))
            }
            None => None,
        };
        let theirs = Incoming {
            downshift: coarser,
            span,
            zero_count: point.zero_count,
            count: point.count,
        };
        if point.count == 0 {
            return Ok(0);
        }
        let (min, max, sum) = point.stats;
        let f = FloatStats { min, max, sum };
        Ok(self.merge_buckets(&theirs, &f, &IntStats::EMPTY, |sink| {
            each(&mut |index, n| {
                if n > 0 {
                    // Non-empty buckets lie within the span checked above.
                    sink((index >> finer) as i32, n);
                }
            })
        }))
    }

    /// The counts of the buckets `start..=end`, from the lowest, with their offset from
    /// `start` (none if no bucket is occupied).
    pub(super) fn ring_counts(&self) -> impl Iterator<Item = (i32, u64)> + '_ {
        let span = if self.occupied {
            i64::from(self.end)
                .wrapping_sub(i64::from(self.start))
                .wrapping_add(1)
        } else {
            0
        };
        (0..span).map(move |k| {
            let k = k as i32; // span <= B <= 2^20
            let index = self.start.wrapping_add(k);
            let n = self
                .counts
                .get(position(index, self.base, B))
                .map_or(0, |c| c.get());
            (k, n)
        })
    }

    /// The lowest and highest occupied buckets at the current scale, if any.
    pub(super) fn span(&self) -> Option<(i32, i32)> {
        self.occupied.then_some((self.start, self.end))
    }

    /// The index at the current scale of the value of index `fine` at the finest.
    pub(super) fn at_scale(&self, fine: i32) -> i32 {
        fine >> self.downshift
    }

    /// The exact statistics (meaningful only while the sketch holds values).
    pub(super) fn stats(&self) -> (&FloatStats, &IntStats) {
        (&self.float_stats, &self.int_stats)
    }

    /// The scale, `-10..=8`: `2^scale` buckets per power of two (8 when empty, and while
    /// only zeros were recorded: the Python SDK reports 0 then, with no bucket to scale).
    pub fn scale(&self) -> i32 {
        FINEST_SCALE.wrapping_sub(self.downshift as i32) // downshift <= 18
    }

    /// The mapping of the current scale: its
    /// [`lower_bound`](IndexMapping::lower_bound) and [`value`](IndexMapping::value) are
    /// a bucket's edge and representative.
    pub fn mapping(&self) -> OtelMapping {
        mapping_at(self.downshift)
    }

    /// The guaranteed relative accuracy of [`quantile`](Self::quantile) at the current
    /// scale: `(b - 1) / (b + 1)` with `b = 2^(2^-scale)` (0.14 % at scale 8, 1.08 % at
    /// scale 5, 4.3 % at scale 3; 1, no guarantee, from scale -6 down), plus `8 * 2^-52`
    /// (below 1): an upper bound, so that `(got - want).abs() <= alpha * want` holds as
    /// computed in `f64`. A value on a bucket edge is exactly `alpha` from the bucket's
    /// representative, whose rounding could otherwise put it a few ulps past.
    pub fn relative_accuracy(&self) -> f64 {
        crate::sketch::mapping::reported_accuracy(self.mapping().relative_accuracy())
    }

    /// The index of the lowest bucket (OTLP's `positive.offset`): the lowest occupied
    /// one, 0 if none.
    pub fn offset(&self) -> i32 {
        if self.occupied {
            self.start
        } else {
            0
        }
    }

    /// The counts of the buckets from [`offset`](Self::offset) up to the highest
    /// occupied one, empty buckets between included (OTLP's `positive.bucket_counts`).
    ///
    /// ```
    /// use tailguard::sketch::ExponentialSketch;
    /// let mut s = ExponentialSketch::<u16, 16>::new();
    /// s.record(1.0).unwrap(); // 1 is the upper edge of bucket -1
    /// s.record(2.0).unwrap(); // at scale 8, bucket 255: more than 16 buckets up
    /// // Buckets -1..=15 at scale 4 are 17, one too many: scale 3, where 2 is bucket 7.
    /// assert_eq!((s.scale(), s.offset()), (3, -1));
    /// let counts: Vec<u64> = s.bucket_counts().collect();
    /// assert_eq!(counts, [1, 0, 0, 0, 0, 0, 0, 0, 1]);
    /// ```
    pub fn bucket_counts(&self) -> impl Iterator<Item = u64> + '_ {
        self.ring_counts().map(|(_, n)| n)
    }

    /// The value at quantile `q` (0 = min, 0.5 = median, 1 = max), or `None` if empty:
    /// the representative of the bucket holding rank `floor(q * (count - 1))` (the rank
    /// rule of [`DDSketch::quantile`](crate::sketch::DDSketch::quantile), the product
    /// computed in `f64`: with `u64` counters a count past 2^53 rounds it), clamped into
    /// `[min, max]`; within [`relative_accuracy`](Self::relative_accuracy) of the exact
    /// sample quantile. `q = 0` and `q = 1` are the exact min and max.
    ///
    /// Subnormals (values below `f64::MIN_POSITIVE`) all share the bucket of `2^-1022`, as
    /// in the SDKs: a quantile that falls among them is within that bucket (and within
    /// `[min, max]`), not within the relative accuracy.
    ///
    /// Errors if `q` is NaN or outside [0, 1].
    pub fn quantile(&self, q: f64) -> Result<Option<f64>, InvalidQuantile> {
        sketch_quantile(q, self.min().zip(self.max()), |q| {
            let (bin, count) = rank_bin(self, q);
            let value = bin.map(|bin| match bin {
                RankBin::Zero => 0.0,
                RankBin::At(k) => self.mapping().value(self.start.wrapping_add(k as i32)),
            });
            (value, count)
        })
    }

    /// How many values the sketch holds (the zero bucket's included).
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Whether the sketch holds no values.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Values counted as zeros (`0`, `-0.0`).
    pub fn zero_count(&self) -> u64 {
        self.zero_count
    }

    /// `+inf` records, held as `f64::MAX`.
    pub fn clamped(&self) -> u64 {
        self.clamped
    }

    /// Values dropped because their bucket was full (by a record, a downscale or a
    /// merge), or because the count was at `u64::MAX`. Not part of [`count`](Self::count).
    /// It stops at `u64::MAX`.
    pub fn saturated(&self) -> u64 {
        self.saturated
    }

    /// The exact smallest value recorded, or `None` if empty.
    pub fn min(&self) -> Option<f64> {
        (self.count > 0).then(|| min_of(&self.float_stats, &self.int_stats))
    }

    /// The exact largest value recorded, or `None` if empty.
    pub fn max(&self) -> Option<f64> {
        (self.count > 0).then(|| max_of(&self.float_stats, &self.int_stats))
    }

    /// The sum of the values held (0 if empty): integers exactly, in 128 bits, rounded
    /// once here; floats summed in `f64`. Values a full counter dropped (`saturated`) are
    /// taken out at their bucket's estimate, from the integer sum and, for what it cannot
    /// cover (values recorded as floats), from the float sum. A downscale that
    /// [`record_u64`](Self::record_u64) triggers values them with integer operations
    /// only: at their bucket's lower edge clamped into min and max, each rounded down to
    /// an integer (so a dropped float below 1 is valued 0). The estimates can leave the
    /// running sums outside what `count` values between `min` and `max` can sum to: a sum
    /// below `count * min` or above `count * max` by more than a part in 10^12 (the
    /// rounding of `count`, `min`, `max` and the products, as
    /// [`DDSketch::sum`](crate::sketch::DDSketch::sum) allows) reads as that bound, where
    /// the true sum lies. A sum within the part in 10^12 is left as it is: the bounds,
    /// computed from rounded `min` and `max` (integers of 2^53 or more), may lie past the
    /// true ones, and must not move a sum the values can make.
    pub fn sum(&self) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        let mut f = self.float_stats;
        let mut debt = self.float_debt;
        debt.settle(&mut f, &self.int_stats);
        let sum = f.sum + self.int_stats.sum() as f64;
        let (min, max) = (
            min_of(&self.float_stats, &self.int_stats),
            max_of(&self.float_stats, &self.int_stats),
        );
        let (wide_low, wide_high) = sum_bounds(self.count, min, max);
        let n = self.count as f64;
        let (low, high) = (n * min, n * max);
        // A widened bound that overflows is the bound itself: one value of `f64::MAX` (a
        // recorded `+inf`) sums to `f64::MAX`, not `+inf`.
        let wide_high = if wide_high.is_finite() {
            wide_high
        } else {
            high
        };
        if sum.is_nan() || sum < wide_low {
            low
        } else if sum > wide_high {
            high
        } else {
            sum
        }
    }

    /// The mean of the values recorded, or `None` if empty: within `[min, max]`, also when
    /// huge values (up to `f64::MAX`) overflow the float [`sum`](Self::sum) to `+inf`.
    pub fn mean(&self) -> Option<f64> {
        let (min, max) = (self.min()?, self.max()?);
        // max-then-min, not `clamp`, which panics if its bounds cross.
        Some((self.sum() / self.count as f64).max(min).min(max))
    }

    /// Empties the sketch, in place: back to scale 8, all zero bytes, as
    /// [`new`](Self::new) makes it.
    ///
    /// ```
    /// use tailguard::sketch::ExponentialSketch;
    /// let mut s = ExponentialSketch::<u16, 16>::new();
    /// (1..=1_000_000u64).step_by(997).for_each(|v| s.record_u64(v));
    /// assert!(s.scale() < 8);
    /// s.clear();
    /// assert!(s.is_empty() && s.scale() == 8);
    /// assert_eq!(s, ExponentialSketch::<u16, 16>::new());
    /// ```
    pub fn clear(&mut self) {
        // What `new` makes, field by field and in place: a new sketch would be built on
        // the stack and copied, a sketch-sized frame (too much for a small core's stack).
        // The destructuring names every field: none can be forgotten.
        let ExponentialSketch {
            counts,
            base,
            start,
            end,
            occupied,
            downshift,
            count,
            zero_count,
            clamped,
            saturated,
            float_stats,
            int_stats,
            float_debt,
        } = self;
        counts.fill(C::ZERO);
        (*base, *start, *end, *occupied, *downshift) = (0, 0, 0, false, 0);
        (*count, *zero_count, *clamped, *saturated) = (0, 0, 0, 0);
        *float_stats = ZERO_FLOAT_STATS;
        *int_stats = ZERO_INT_STATS;
        *float_debt = Debt::NONE;
    }
}

/// The statistics of an empty sketch: zero bytes, reset to the empty statistics by the
/// first value (`begin`), so that the empty sketch is all zero bytes.
const ZERO_FLOAT_STATS: FloatStats = FloatStats {
    min: 0.0,
    max: 0.0,
    sum: 0.0,
};

/// See [`ZERO_FLOAT_STATS`].
const ZERO_INT_STATS: IntStats = IntStats::ZERO;

/// Buckets of another sketch, or of a data point, to merge in.
struct Incoming {
    /// Halvings of their scale below the finest (`0..=MAX_DOWNSHIFT`).
    downshift: u32,
    /// Their lowest and highest non-empty bucket, at their scale, if any.
    span: Option<(i32, i32)>,
    zero_count: u64,
    /// The values held: the zero count and every bucket's.
    count: u64,
}

/// What [`ExponentialSketch::merge_point`] needs of an OpenTelemetry data point, besides
/// its buckets: all checked by the caller (the scale in `-10..=20`, `count` the zero
/// count plus the buckets').
#[derive(Debug, Clone, Copy)]
pub(crate) struct Point {
    pub(crate) scale: i32,
    /// The lowest and highest non-empty positive bucket, at `scale`, if any.
    pub(crate) span: Option<(i64, i64)>,
    pub(crate) zero_count: u64,
    pub(crate) count: u64,
    /// Min, max and sum of the values (the point's own, or estimates), non-negative.
    pub(crate) stats: (f64, f64, f64),
}

/// A data point's non-empty buckets lie beyond the floats' range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BeyondFloats;

impl<C: Counter, const B: usize> Default for ExponentialSketch<C, B> {
    fn default() -> Self {
        Self::new()
    }
}

impl<C: Counter, const B: usize> RankedBins for ExponentialSketch<C, B> {
    fn count(&self) -> u64 {
        self.count
    }

    fn zero_count(&self) -> u64 {
        self.zero_count
    }

    /// The offset from `start` of the first bucket whose cumulative count, added to
    /// `zero`, exceeds `rank`.
    fn position_of_rank(&self, rank: u64, zero: u64, _count: u64) -> Option<usize> {
        let mut cumulative = zero;
        self.ring_counts()
            .find(|&(_, n)| {
                cumulative = cumulative.saturating_add(n);
                cumulative > rank
            })
            .map(|(k, _)| k as usize) // k >= 0
    }
}

impl<C: Counter, const B: usize> fmt::Debug for ExponentialSketch<C, B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ExponentialSketch")
            .field("buckets", &B)
            .field("scale", &self.scale())
            .field("offset", &self.offset())
            .field("count", &self.count)
            .field("zero_count", &self.zero_count)
            .field("clamped", &self.clamped)
            .field("saturated", &self.saturated)
            .field("min", &self.min())
            .field("max", &self.max())
            .field("sum", &self.sum())
            .finish()
    }
}

impl<C: Counter, const B: usize, const B2: usize> PartialEq<ExponentialSketch<C, B2>>
    for ExponentialSketch<C, B>
{
    /// The same scale, buckets (offset and counts), counters and exact statistics, whatever
    /// the two sizes and wherever their rings start.
    fn eq(&self, other: &ExponentialSketch<C, B2>) -> bool {
        let stats = |s: &ExponentialSketch<C, B2>| (s.float_stats, s.int_stats, s.float_debt);
        self.scale() == other.scale()
            && self.offset() == other.offset()
            && self.bucket_counts().eq(other.bucket_counts())
            && (self.count, self.zero_count, self.clamped, self.saturated)
                == (other.count, other.zero_count, other.clamped, other.saturated)
            // The statistics mean nothing while empty (see `begin`).
            && (self.count == 0 || (self.float_stats, self.int_stats, self.float_debt) == stats(other))
    }
}

#[cfg(feature = "defmt")]
#[cfg_attr(docsrs, doc(cfg(feature = "defmt")))]
impl<C: Counter, const B: usize> defmt::Format for ExponentialSketch<C, B> {
    fn format(&self, f: defmt::Formatter<'_>) {
        defmt::write!(
            f,
            "ExponentialSketch {{ buckets: {=usize}, scale: {=i32}, count: {=u64}, saturated: {=u64} }}",
            B,
            self.scale(),
            self.count,
            self.saturated
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every field, the statistics' bits and the ring's base included: what `new` makes.
    fn state<C: Counter, const B: usize>(
        s: &ExponentialSketch<C, B>,
    ) -> impl PartialEq + fmt::Debug {
        let f = &s.float_stats;
        let i = &s.int_stats;
        (
            s.counts,
            (s.base, s.start, s.end, s.occupied, s.downshift),
            (s.count, s.zero_count, s.clamped, s.saturated),
            (f.min.to_bits(), f.max.to_bits(), f.sum.to_bits()),
            (i.min, i.max, i.sum()),
            s.float_debt.get(),
        )
    }

    #[test]
    fn a_cleared_sketch_is_a_new_one_field_by_field() {
        let mut s = ExponentialSketch::<u8, 8>::new();
        for v in 0..2_000u64 {
            s.record_u64(v % 7 * 1_000_003 + (v >> 3)); // zeros, downscales, full counters
        }
        s.record(f64::INFINITY).unwrap();
        s.record(1.5e-300).unwrap();
        assert!(
            s.scale() < 8 && s.saturated() > 0 && s.clamped() == 1,
            "{s:?}"
        );
        s.clear();
        assert_eq!(state(&s), state(&ExponentialSketch::<u8, 8>::new()));
    }
}
