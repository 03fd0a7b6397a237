//! [`AtomicSketch`]: the DDSketch bins as 32-bit atomics, recorded through `&self`.

use core::time::Duration;

use super::cdf::{fraction, Cut, Ends};
use super::ddsketch::DDSketch;
use super::error::{
    check_slice, ConfigError, InvalidQuantile, InvalidValue, MergeError, RecordError,
    RecordSliceError,
};
use super::keys::{extremes_within, key_of_f64, key_of_u64, max_of_key, value_of_key};
use super::layout::{position, BinLayout, Slot};
use super::mapping::IndexMapping;
use super::rank::{rank_value, sketch_quantile, AtomicBins, Occupied, RankedBins};
use super::stats::Extremes;
use crate::sync::{
    const_unless_loom, zeroed, AtomicU32,
    Ordering::{Acquire, Relaxed, Release},
};

/// A bin at this count is full. Half the `u32` range, so that racing recorders, each of
/// which may add one before taking it back, can never wrap it.
pub(crate) const BIN_LIMIT: u32 = 1 << 31;

/// `min_key` of a sketch that has seen no value.
const NO_MIN: u32 = u32::MAX;

/// `occupied_low` of a sketch none of whose bins was filled since it was made or cleared
/// (with `occupied_high` at 0, the range is empty).
const NO_LOW: u32 = u32::MAX;

/// Adds one to a counter unless it is full. Returns the previous count, or `None` (and
/// changes nothing) if it was full.
#[inline]
fn increment(counter: &AtomicU32) -> Option<u32> {
    let previous = counter.fetch_add(1, Relaxed);
    if previous < BIN_LIMIT {
        Some(previous)
    } else {
        take_back(counter);
        None
    }
}

/// Takes back an add of one that found `counter` full, while it is still over the limit:
/// at or below it, a clear has swapped the add out since (and, taking at most
/// [`BIN_LIMIT`] from a counter, did not count it). A plain subtraction would wrap the
/// cleared counter to `u32::MAX`.
#[cold]
fn take_back(counter: &AtomicU32) {
    // `c > BIN_LIMIT`: cannot wrap.
    let _ = counter.fetch_update(Relaxed, Relaxed, |c| {
        (c > BIN_LIMIT).then(|| c.wrapping_sub(1))
    });
}

/// Adds `n` to a counter, stopping at [`BIN_LIMIT`]. Returns how many were added.
fn add_saturating(counter: &AtomicU32, n: u32) -> u32 {
    add_up_to_limit(counter, n).map_or(0, |(_, added)| added)
}

/// Adds up to `n` to a counter, stopping at [`BIN_LIMIT`]: the count it had and how many
/// were added, or `None` if it was full (above the limit are single records' adds about
/// to be taken back: full too).
fn add_up_to_limit(counter: &AtomicU32, n: u32) -> Option<(u32, u32)> {
    let previous = counter
        .fetch_update(Relaxed, Relaxed, |c| {
            (c < BIN_LIMIT).then(|| c.saturating_add(n).min(BIN_LIMIT))
        })
        .ok()?;
    // previous < BIN_LIMIT: cannot wrap.
    Some((
        previous,
        previous
            .saturating_add(n)
            .min(BIN_LIMIT)
            .wrapping_sub(previous),
    ))
}

/// A DDSketch whose bins are atomics: record from many threads or interrupt handlers
/// through a shared reference.
///
/// Same mappings, layout and accuracy as [`DDSketch`]; what is exact, and why, is below.
/// Its mapping and range are those of its [`layout`](Self::layout). `size_of` is about
/// `4 * N + 48` bytes.
///
/// ```
/// use tailguard::sketch::{AtomicSketch, CubicMapping};
///
/// type Shared = AtomicSketch<CubicMapping, 512>; // 1 %, 512 bins from 1.0
/// let sketch = Shared::with_relative_accuracy(0.01, 1.0).unwrap();
/// std::thread::scope(|s| {
///     for _ in 0..4 {
///         s.spawn(|| {
///             for v in 1..=1000u64 {
///                 sketch.record_u64(v);
///             }
///         });
///     }
/// });
/// assert_eq!(sketch.count(), 4000);
/// assert!(!sketch.is_empty());
/// let p50 = sketch.quantile(0.5).unwrap().unwrap();
/// assert!((p50 - 500.0).abs() <= 0.01 * 500.0);
/// // Min and max to a part per million, never above the values.
/// let (min, max) = (sketch.min().unwrap(), sketch.max().unwrap());
/// assert!(min <= 1.0 && min >= 1.0 - 1e-6);
/// assert!(max <= 1000.0 && max >= 1000.0 * (1.0 - 1e-6));
/// assert!(sketch.relative_accuracy() >= 0.01 && sketch.relative_accuracy() < 0.0101);
/// // Above the range (512 bins of 2 % reach about 2.5e4), a value lands in the top bin,
/// // counted as clamped; the max is still the value's own.
/// assert!(sketch.layout().max_trackable() < 3e4);
/// sketch.record(1e9).unwrap();
/// assert_eq!((sketch.clamped(), sketch.saturated()), (1, 0));
/// assert_eq!(sketch.max(), Some(1e9));
/// ```
///
/// # The record path
///
/// Recording is lock-free, and wait-free on its fast path: compute the bin index (no
/// shared state), one relaxed `fetch_add` on that bin's native `AtomicU32`, two relaxed
/// loads that check the bin is inside the range the scans read, then two relaxed loads
/// that compare the value with the current min and max. Only a bin's first value, one
/// outside that range, or a new extreme pays a further `fetch_min` / `fetch_max`, which
/// after warm-up is rare, so concurrent recorders do not turn the hot path into a
/// compare-and-swap storm (on targets without a native `fetch_min`, such as x86-64, those
/// are compare-and-swap loops, retried only when another record moved the same word).
/// There is no 64-bit atomic anywhere, so recording is lock-free and interrupt-safe on
/// every target (portable-atomic's 64-bit atomics on thumbv7em are a seqlock that an
/// interrupt handler can deadlock on).
///
/// # What is kept, and how exactly
///
/// * **Counts are exact.** `count` is derived from the bins (no shared counter to contend
///   on); [`count`](AtomicSketch::count) scans them, from the lowest to the highest bin
///   filled since the last clear (the *occupied range*, widened by the first record into a
///   bin, and checked by every other; quantiles scan it too). A bin saturates at 2^31: a record that
///   finds it full takes its add back and is counted in
///   [`saturated`](AtomicSketch::saturated) instead, so nothing is lost silently and a bin
///   can never wrap, even with many recorders racing.
/// * **Min and max** are kept as the upper 32 bits of the value's `f64` representation,
///   whose integer order is the numeric order for non-negative floats: exact to about one
///   part per million (rounded down, the max no further than the edge of its bin where
///   that part reaches across one), inside the accuracy of any mapping coarser than that
///   (every preset's), for values from 2^-1022 (the least normal `f64`) up; a subnormal
///   value's bits keep less (below about 2^-1042, none: its extreme reads 0). The `u64`
///   path builds those bits with integer operations only.
/// * **Sum is derived** from the bins (count times representative value), so it is within
///   `alpha` of the true sum. Keeping an exact sum would need a 64-bit or floating-point
///   read-modify-write on every record: a CAS loop on one shared word.
pub struct AtomicSketch<M, const N: usize> {
    // The layout's two fields, not a `BinLayout`: apart, `min_index` packs with `zero`.
    mapping: M,
    /// Mapping index of `bins[0]`.
    min_index: i32,
    zero: AtomicU32,
    bins: [AtomicU32; N],
    clamped: AtomicU32,
    saturated: AtomicU32,
    /// [`key_of_f64`] of the smallest value, or [`NO_MIN`].
    min_key: AtomicU32,
    /// [`key_of_f64`] of the largest value (0 when empty).
    max_key: AtomicU32,
    /// The lowest and highest positions of the bins taken from zero since the sketch was
    /// made or last cleared: quantile and count scans read only these (see
    /// [`Occupied`]). [`NO_LOW`] and 0 when there are none.
    occupied_low: AtomicU32,
    occupied_high: AtomicU32,
}

impl<M: IndexMapping, const N: usize> AtomicSketch<M, N> {
    /// An empty sketch with `mapping` whose lowest bin holds `min_value`.
    ///
    /// Errors if `min_value` is not a positive normal finite number
    /// ([`ConfigError::InvalidMinValue`]), or the bin indices overflow.
    ///
    /// ```
    /// use tailguard::sketch::{AtomicSketch, ConfigError, CubicMapping, IndexMapping};
    ///
    /// let mapping = CubicMapping::with_relative_accuracy(0.02).unwrap();
    /// let sketch: AtomicSketch<CubicMapping, 256> = AtomicSketch::new(mapping, 1.0).unwrap();
    /// assert!(sketch.is_empty() && sketch.layout().min_trackable() <= 1.0);
    /// assert!((sketch.relative_accuracy() - 0.02).abs() < 1e-9);
    /// let bad: Result<AtomicSketch<CubicMapping, 256>, _> = AtomicSketch::new(mapping, f64::NAN);
    /// assert_eq!(bad.err().unwrap(), ConfigError::InvalidMinValue);
    /// ```
    pub fn new(mapping: M, min_value: f64) -> Result<Self, ConfigError> {
        Ok(Self::with_layout(BinLayout::new(mapping, min_value)?))
    }

    /// An empty sketch with relative accuracy `alpha` whose lowest bin holds `min_value`.
    ///
    /// ```
    /// use tailguard::sketch::{AtomicSketch, ConfigError, LogMapping};
    ///
    /// let s = AtomicSketch::<LogMapping, 128>::with_relative_accuracy(0.05, 10.0).unwrap();
    /// assert!(s.layout().min_trackable() <= 10.0);
    /// let bad = AtomicSketch::<LogMapping, 128>::with_relative_accuracy(1.5, 10.0);
    /// assert_eq!(bad.err(), Some(ConfigError::InvalidAccuracy));
    /// ```
    pub fn with_relative_accuracy(alpha: f64, min_value: f64) -> Result<Self, ConfigError> {
        Self::new(M::with_relative_accuracy(alpha)?, min_value)
    }

    const_unless_loom! {
        /// An empty sketch of `layout`. `const`: with a constant layout (a preset's, or
        /// one from [`BinLayout::from_min_index`]) the sketch is a `static`, built at
        /// compile time (no stack, no start-up code).
        ///
        /// ```
        /// use tailguard::sketch::{presets, AtomicSketch};
        ///
        /// static LATENCIES: presets::AtomicCubicLatency =
        ///     AtomicSketch::with_layout(presets::CUBIC_LATENCY_LAYOUT);
        ///
        /// LATENCIES.record_u64(2_000_000); // from any thread or interrupt handler
        /// assert_eq!(LATENCIES.count(), 1);
        /// assert_eq!(LATENCIES.layout().min_index(), presets::cubic_latency().min_index());
        /// ```
        pub fn with_layout(layout: BinLayout<M, N>) -> Self {
            AtomicSketch {
                mapping: *layout.mapping(),
                min_index: layout.min_index(),
                zero: AtomicU32::new(0),
                bins: zeroed(),
                clamped: AtomicU32::new(0),
                saturated: AtomicU32::new(0),
                min_key: AtomicU32::new(NO_MIN),
                max_key: AtomicU32::new(0),
                occupied_low: AtomicU32::new(NO_LOW),
                occupied_high: AtomicU32::new(0),
            }
        }
    }

    /// Gives this (empty) sketch `layout`: what [`with_layout`](Self::with_layout) would
    /// have made of it. For `const` constructors that build arrays of sketches from
    /// [`IndexMapping::DEFAULT`] (an array element can only be repeated from a constant).
    pub(crate) const fn set_layout(&mut self, layout: BinLayout<M, N>) {
        self.mapping = *layout.mapping();
        self.min_index = layout.min_index();
    }

    /// Records one value. NaN and negative values are errors and change nothing; values
    /// outside the range are handled as by [`DDSketch::record`].
    #[inline]
    ///
    /// ```
    /// use tailguard::sketch::{AtomicSketch, CubicMapping, RecordError};
    ///
    /// let sketch = AtomicSketch::<CubicMapping, 512>::with_relative_accuracy(0.01, 1.0).unwrap();
    /// let shared = &sketch; // recording needs no `&mut`
    /// shared.record(40.0).unwrap();
    /// assert_eq!(shared.record(f64::NAN), Err(RecordError::NaN));
    /// assert_eq!(shared.record(-3.0), Err(RecordError::Negative));
    /// assert_eq!(sketch.count(), 1); // the errors changed nothing
    /// ```
    pub fn record(&self, value: f64) -> Result<(), RecordError> {
        self.record_returning_bin_count(value).map(|_| ())
    }

    /// Records an integer value (nanoseconds, say). With [`IntMapping`](super::IntMapping)
    /// this path uses no float arithmetic.
    #[inline]
    pub fn record_u64(&self, value: u64) {
        self.record_u64_returning_bin_count(value);
    }

    /// Records a duration as whole nanoseconds (saturating at `u64::MAX`).
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::sketch::{presets, AtomicSketch};
    ///
    /// let s = AtomicSketch::with_layout(presets::CUBIC_LATENCY_LAYOUT); // ns, 1 µs .. 100 s
    /// s.record_duration(Duration::from_millis(3));
    /// s.record_duration(Duration::from_micros(3_000));
    /// assert_eq!(s.count(), 2);
    /// let p50 = s.quantile(0.5).unwrap().unwrap();
    /// assert!((p50 - 3e6).abs() <= 0.01 * 3e6);
    /// ```
    #[inline]
    pub fn record_duration(&self, d: Duration) {
        self.record_u64(crate::clock::duration_to_nanos(d));
    }

    /// Records `value` `n` times in one step (a `metrics` histogram's `record_many`, a
    /// count of equal latencies): what `n` calls of [`record`](Self::record) would record,
    /// in one compare-and-swap on the bin rather than `n` adds, so a huge `n` costs no
    /// more than a small one. NaN and negative values are errors and change nothing.
    ///
    /// A bin holds at most 2^31: the part of `n` that does not fit is counted in
    /// [`saturated`](Self::saturated). Lock-free (the compare-and-swap retries only when
    /// another record changed the bin), and safe to race with any other record or a
    /// clear: every one of the `n` is counted once, in the bin or as saturated
    /// (tests/loom.rs, tests/stress.rs).
    ///
    /// ```
    /// use tailguard::sketch::{presets, AtomicSketch};
    ///
    /// let sketch = AtomicSketch::with_layout(presets::CUBIC_LATENCY_LAYOUT);
    /// sketch.record_n(2e6, 1_000).unwrap();
    /// sketch.record_n(5e6, u32::MAX).unwrap(); // no loop: one step
    /// assert_eq!(sketch.count(), 1_000 + (1 << 31));
    /// assert_eq!(sketch.saturated(), u64::from(u32::MAX) - (1 << 31));
    /// assert_eq!(sketch.record_n(f64::NAN, 3), Err(tailguard::sketch::RecordError::NaN));
    /// ```
    pub fn record_n(&self, value: f64, n: u32) -> Result<(), RecordError> {
        if value.is_nan() {
            return Err(RecordError::NaN);
        }
        if value < 0.0 {
            return Err(RecordError::Negative);
        }
        if n == 0 {
            return Ok(());
        }
        // -0.0 becomes +0.0 (see `record_returning_bin_count`).
        let value = value.abs();
        let slot = self.layout().slot(self.mapping.index(value));
        let (counter, pos) = match slot {
            Slot::Zero => (Some(&self.zero), None),
            Slot::Bin(pos) => (self.bins.get(pos), Some(pos)),
            Slot::Top => (self.bins.last(), Some(N.wrapping_sub(1))), // N >= 1
        };
        let added = match counter {
            Some(counter) => self.add_n_to(counter, pos, n),
            None => 0, // never: N > 0 and the position is in range
        };
        if added < n {
            add_saturating(&self.saturated, n.wrapping_sub(added));
        }
        if added > 0 {
            let clamped = slot == Slot::Top;
            if clamped {
                // The clamped counter stops at the limit too: what it cannot count is
                // saturated, as for one record.
                let counted = add_saturating(&self.clamped, added);
                if counted < added {
                    add_saturating(&self.saturated, added.wrapping_sub(counted));
                }
            }
            // +inf enters the extremes as the top of the range, as in `record`.
            let key = if clamped && value == f64::INFINITY {
                key_of_f64(self.layout().max_trackable())
            } else {
                key_of_f64(value)
            };
            self.update_extremes(key);
        }
        Ok(())
    }

    /// Adds up to `n` to `counter` (at position `pos`, `None` for the zero bin), stopping at
    /// [`BIN_LIMIT`]; returns how many it added. A bin taken from zero widens the occupied
    /// range, as one record's first add does (see [`occupy`](Self::occupy)); into a bin
    /// that held some, it is [`cover`](Self::cover)ed.
    fn add_n_to(&self, counter: &AtomicU32, pos: Option<usize>, n: u32) -> u32 {
        let Some((previous, added)) = add_up_to_limit(counter, n) else {
            return 0;
        };
        if let Some(pos) = pos {
            if previous == 0 {
                self.occupy(pos);
            } else {
                self.cover(pos);
            }
        }
        added
    }

    /// Records every value of `values`: what [`record_u64`](Self::record_u64) on each in
    /// turn would record (tests/batch.rs checks it for every mapping), with one atomic
    /// add per value and one min and one max update per batch (rather than two loads
    /// per value).
    ///
    /// Safe to race with other recorders, slice or not: every value is counted in its
    /// bin or in [`saturated`](Self::saturated), exactly once (tests/stress.rs checks
    /// it under contention). Only the values that entered a bin enter min and max.
    ///
    /// ```
    /// use tailguard::sketch::{presets, AtomicSketch};
    /// let shared = AtomicSketch::with_layout(presets::INT_LATENCY_LAYOUT);
    /// std::thread::scope(|s| {
    ///     for t in 1..=2u64 {
    ///         let shared = &shared;
    ///         s.spawn(move || shared.record_u64_slice(&[t * 1_000_000; 100]));
    ///     }
    /// });
    /// assert_eq!(shared.count(), 200);
    /// assert_eq!(shared.max(), Some(2e6));
    /// ```
    pub fn record_u64_slice(&self, values: &[u64]) {
        let mapping = self.mapping;
        let layout = self.layout();
        let slot_of = |v: u64| {
            layout.slot(if v == 0 {
                i32::MIN
            } else {
                mapping.index_u64(v)
            })
        };
        if let Some((min, max)) = self.record_each(values, slot_of, |v| v) {
            // The key is non-decreasing in the value: the extremes' keys are the keys'.
            self.update_extremes(key_of_u64(min));
            self.update_extremes(key_of_u64(max));
        }
    }

    /// Records every value of `values`, all or nothing, with the rule of
    /// [`DDSketch::record_slice`]: if any is NaN or negative, nothing is recorded and the
    /// error names the first. Otherwise what [`record`](Self::record) on each in turn
    /// would record, as [`record_u64_slice`](Self::record_u64_slice) records it.
    ///
    /// ```
    /// use tailguard::sketch::{presets, AtomicSketch, RecordError};
    /// let shared = AtomicSketch::with_layout(presets::LOG_LATENCY_LAYOUT);
    /// shared.record_slice(&[2.5e6, 2.5e6, 7e6]).unwrap();
    /// let err = shared.record_slice(&[1e6, f64::NAN]).unwrap_err();
    /// assert_eq!((err.position, err.error), (1, RecordError::NaN));
    /// assert_eq!(shared.count(), 3);
    /// ```
    pub fn record_slice(&self, values: &[f64]) -> Result<(), RecordSliceError> {
        check_slice(values)?;
        let mapping = self.mapping;
        let layout = self.layout();
        // -0.0 becomes +0.0 (see `record`).
        let slot_of = |v: f64| layout.slot(mapping.index(v.abs()));
        // +inf enters the extremes as the top of the range (as in `record`), if it is
        // clamped; looked up once.
        let mut top = None;
        let stat = |v: f64| {
            let v = v.abs();
            if v == f64::INFINITY {
                *top.get_or_insert_with(|| {
                    if slot_of(v) == Slot::Top {
                        layout.max_trackable()
                    } else {
                        v
                    }
                })
            } else {
                v
            }
        };
        if let Some((min, max)) = self.record_each(values, slot_of, stat) {
            // Non-negative floats: the key is non-decreasing in the value.
            self.update_extremes(key_of_f64(min));
            self.update_extremes(key_of_f64(max));
        }
        Ok(())
    }

    /// Adds each of `values` to its counter as [`add_one`](Self::add_one) does (one
    /// atomic add per value). Returns the min and max of `stat` of the values that
    /// entered a counter (`None` if none did), for one update of the extremes per batch
    /// rather than two loads per value.
    #[inline]
    fn record_each<T: Copy + PartialOrd>(
        &self,
        values: &[T],
        slot_of: impl Fn(T) -> Slot,
        mut stat: impl FnMut(T) -> T,
    ) -> Option<(T, T)> {
        let mut extremes: Option<(T, T)> = None;
        for &v in values {
            if self.add_one_to(slot_of(v)).is_some() {
                let v = stat(v);
                extremes = Some(match extremes {
                    None => (v, v),
                    Some((min, max)) => {
                        (if v < min { v } else { min }, if v > max { v } else { max })
                    }
                });
            }
        }
        extremes
    }

    /// [`record`](Self::record), returning the count its bin had before (`None` if the
    /// bin was full): the window uses it to pace the refreshes of its cached quantile
    /// without a shared counter.
    #[inline]
    pub(crate) fn record_returning_bin_count(
        &self,
        value: f64,
    ) -> Result<Option<u32>, RecordError> {
        if value.is_nan() {
            return Err(RecordError::NaN);
        }
        if value < 0.0 {
            return Err(RecordError::Negative);
        }
        // -0.0 passed the check above, and its key has the sign bit set: it would become
        // the maximum. `abs` makes it the zero it is (one bit cleared).
        let value = value.abs();
        let (previous, clamped) = self.add_one(self.mapping.index(value));
        if previous.is_some() {
            // +inf enters the extremes as the top of the range, as in DDSketch.
            let key = if clamped && value == f64::INFINITY {
                key_of_f64(self.layout().max_trackable())
            } else {
                key_of_f64(value)
            };
            self.update_extremes(key);
        }
        Ok(previous)
    }

    /// [`record_u64`](Self::record_u64), returning the count its bin had before.
    #[inline(always)]
    pub(crate) fn record_u64_returning_bin_count(&self, value: u64) -> Option<u32> {
        self.record_u64_at_position(self.fast_position(value), value)
    }

    /// The position of `value`'s bin where the mapping's fast path finds its index (it
    /// may be outside the range: [`record_u64_at_position`](Self::record_u64_at_position)
    /// checks). The same for every sketch of this layout, so a caller choosing among
    /// several (a window's slots) can compute it before it knows which.
    #[inline(always)]
    pub(crate) fn fast_position(&self, value: u64) -> Option<usize> {
        // One unsigned compare for both ends, later (see `layout::position`).
        self.mapping
            .index_u64_fast(value)
            .map(|index| position(index, self.min_index))
    }

    /// [`record_u64_returning_bin_count`](Self::record_u64_returning_bin_count) of `value`,
    /// whose [`fast_position`](Self::fast_position) in a sketch of this layout is `pos`.
    #[inline(always)]
    pub(crate) fn record_u64_at_position(&self, pos: Option<usize>, value: u64) -> Option<u32> {
        // The fast path, as `DDSketch::record_u64`'s: a value whose index the mapping
        // finds on its own fast path, in a bin of the range that was neither empty nor
        // full. Zero, the zero bin, clamping, the mapping's slow cases, a bin's first
        // value and a full bin are `record_u64_one_slow`'s and `settle_slow`'s, out of
        // line.
        if let Some(pos) = pos {
            if let Some(bin) = self.bins.get(pos) {
                let previous = bin.fetch_add(1, Relaxed);
                // One unsigned compare for both rare cases: 0 wraps to `u32::MAX`.
                if previous.wrapping_sub(1) < BIN_LIMIT - 1 {
                    self.cover(pos);
                    self.update_extremes(key_of_u64(value));
                    return Some(previous);
                }
                let previous = self.settle_slow(bin, Some(pos), previous);
                if previous.is_some() {
                    self.update_extremes(key_of_u64(value));
                }
                return previous;
            }
        }
        self.record_u64_one_slow(value)
    }

    /// [`record_u64_returning_bin_count`](Self::record_u64_returning_bin_count) of the
    /// values its fast path leaves out.
    #[cold]
    #[inline(never)]
    fn record_u64_one_slow(&self, value: u64) -> Option<u32> {
        let index = if value == 0 {
            i32::MIN
        } else {
            self.mapping.index_u64(value)
        };
        let (previous, _) = self.add_one(index);
        if previous.is_some() {
            self.update_extremes(key_of_u64(value));
        }
        previous
    }

    /// Adds one to the bin of mapping index `index` (zero bin below the range, top bin
    /// above). Returns the bin's previous count (`None` if full: then it is counted as
    /// saturated) and whether the value was above the range.
    #[inline]
    fn add_one(&self, index: i32) -> (Option<u32>, bool) {
        let slot = self.layout().slot(index);
        (self.add_one_to(slot), slot == Slot::Top)
    }

    /// [`add_one`](Self::add_one) to the counter of `slot`.
    #[inline]
    fn add_one_to(&self, slot: Slot) -> Option<u32> {
        let (bin, pos, clamped) = match slot {
            Slot::Zero => (Some(&self.zero), None, false),
            Slot::Bin(pos) => (self.bins.get(pos), Some(pos), false),
            Slot::Top => (self.bins.last(), Some(N.wrapping_sub(1)), true), // N >= 1
        };
        // Always Some (N > 0 and pos is in range); None would count as saturated.
        let Some(bin) = bin else {
            add_saturating(&self.saturated, 1);
            return None;
        };
        let previous = bin.fetch_add(1, Relaxed);
        // One unsigned compare for both rare cases (an empty bin, a full one): 0 wraps.
        let previous = if previous.wrapping_sub(1) < BIN_LIMIT - 1 {
            if let Some(pos) = pos {
                self.cover(pos);
            }
            Some(previous)
        } else {
            self.settle_slow(bin, pos, previous)
        };
        if clamped && previous.is_some() && increment(&self.clamped).is_none() {
            // The clamped counter itself is full: keep the total exact.
            add_saturating(&self.saturated, 1);
        }
        previous
    }

    /// The rare ends of an add of one to `bin` (at position `pos`, `None` for the zero
    /// bin) that found `previous` there: a full bin takes its add back and counts the
    /// value as saturated (`None`); an empty one widens the occupied range (see
    /// [`occupy`](Self::occupy)). Out of line: the hot path pays one compare for both.
    #[cold]
    #[inline(never)]
    fn settle_slow(&self, bin: &AtomicU32, pos: Option<usize>, previous: u32) -> Option<u32> {
        if previous >= BIN_LIMIT {
            take_back(bin);
            add_saturating(&self.saturated, 1);
            return None;
        }
        if let Some(pos) = pos {
            self.occupy(pos); // previous == 0
        }
        Some(previous)
    }

    /// Widens the occupied range to a bin this record took from zero.
    ///
    /// Always two read-modify-writes, released: a [`clear`](Self::clear) whose reset of
    /// either end comes after this record's widening of it (in that atomic's modification
    /// order) synchronizes with it, so its scan of every bin sees this record's add and
    /// clears it; one whose resets both come before leaves the range widened afresh. Either
    /// way, a bin that holds a value once the record that took it from zero has returned is
    /// inside the range: a scan of the range never misses it.
    #[cold]
    fn occupy(&self, pos: usize) {
        // N < i32::MAX (`BinLayout`), so the position fits.
        let pos = pos as u32;
        self.occupied_low.fetch_min(pos, Release);
        self.occupied_high.fetch_max(pos, Release);
    }

    /// Makes sure the occupied range holds the bin a record added to that was not empty:
    /// its first record since the last clear may still be under way (preempted between its
    /// add and [`occupy`](Self::occupy)), and a scan after this record returns must see
    /// it. Two loads and compares; the read-modify-writes only when the range, as seen,
    /// does not hold the bin. A range that did hold it stays holding it (the ends only
    /// widen) until a clear, which this record then raced (see [`count`](Self::count)).
    #[inline(always)]
    fn cover(&self, pos: usize) {
        // N < i32::MAX (`BinLayout`), so the position fits.
        let at = pos as u32;
        if at < self.occupied_low.load(Relaxed) || at > self.occupied_high.load(Relaxed) {
            self.occupy(pos);
        }
    }

    /// Brings `key` into the extremes. A load and a compare each: the keys only move
    /// one way between clears, so a key that is not beyond what a load saw (however
    /// stale) is not beyond what is there now, and needs no read-modify-write.
    #[inline]
    fn update_extremes(&self, key: u32) {
        if key < self.min_key.load(Relaxed) {
            self.lower_min(key);
        }
        if key > self.max_key.load(Relaxed) {
            self.raise_max(key);
        }
    }

    /// A new minimum: rare once warm, so out of line.
    #[cold]
    #[inline(never)]
    fn lower_min(&self, key: u32) {
        self.min_key.fetch_min(key, Relaxed);
    }

    /// A new maximum: rare once warm, so out of line.
    #[cold]
    #[inline(never)]
    fn raise_max(&self, key: u32) {
        self.max_key.fetch_max(key, Relaxed);
    }

    /// How many values the sketch holds: a scan of the zero bin and of the bins from the
    /// lowest to the highest ever filled since the last clear.
    ///
    /// A record that has returned is counted, also while another record into its bin is
    /// still under way (on another thread, or in a context it preempted). A record that
    /// raced a [`clear`](Self::clear) (a window's rotation) is removed by it or kept; a
    /// kept one may be counted only once the first record into its bin since that clear
    /// returns, if that one is still under way. Records under way may or may not be
    /// counted.
    pub fn count(&self) -> u64 {
        Occupied::new(core::slice::from_ref(self)).count()
    }

    /// Whether the sketch holds no values.
    pub fn is_empty(&self) -> bool {
        self.count() == 0
    }

    /// The value at quantile `q`, with [`DDSketch::quantile`]'s convention, or `None` if
    /// empty. Scans the occupied bins for the count, then from the nearer end for the
    /// rank; concurrent records may or may not be seen.
    ///
    /// ```
    /// use tailguard::sketch::{AtomicSketch, CubicMapping, InvalidQuantile};
    ///
    /// let sketch = AtomicSketch::<CubicMapping, 512>::with_relative_accuracy(0.01, 1.0).unwrap();
    /// assert_eq!(sketch.quantile(0.9), Ok(None)); // empty
    /// for v in 1..=100u64 {
    ///     sketch.record_u64(v);
    /// }
    /// let p90 = sketch.quantile(0.9).unwrap().unwrap(); // sorted[floor(0.9 * 99)] = 90
    /// assert!((p90 - 90.0).abs() <= 0.01 * 90.0);
    /// assert_eq!(sketch.quantile(-0.1), Err(InvalidQuantile));
    /// ```
    pub fn quantile(&self, q: f64) -> Result<Option<f64>, InvalidQuantile> {
        let extremes = self.min().zip(self.max());
        sketch_quantile(q, extremes, |q| {
            rank_value(
                &Occupied::new(core::slice::from_ref(self)),
                &self.layout(),
                q,
            )
        })
    }

    /// The number of values at or below `v`: [`DDSketch::rank`]'s rule and guarantee, from
    /// one pass over the zero bin and the occupied bins. NaN is an error; a value below
    /// zero ranks 0, `+inf` the count.
    ///
    /// The min and max are kept to a part per million (rounded down), and the ends are
    /// exact up to that: `v` ranks 0 below the minimum so rounded, and the count above the
    /// maximum so rounded up (at the next part per million); in between the bins answer,
    /// within the bound. Records racing the query may or may not be counted.
    ///
    /// ```
    /// use tailguard::sketch::{presets, AtomicSketch};
    /// let shared = AtomicSketch::with_layout(presets::CUBIC_LATENCY_LAYOUT);
    /// for ns in [2e6, 4e6, 8e6, 16e6] {
    ///     shared.record(ns).unwrap();
    /// }
    /// assert_eq!(shared.rank(10e6), Ok(3));
    /// assert_eq!(shared.rank(20e6), Ok(4));
    /// assert_eq!(shared.rank(1e6), Ok(0));
    /// ```
    pub fn rank(&self, v: f64) -> Result<u64, InvalidValue> {
        let cut = Cut::of_f64(&self.layout(), v)?;
        Ok(self.rank_and_count(cut.within(self.ends_f64(v))).0)
    }

    /// [`rank`](Self::rank) of an integer value (nanoseconds, say), which never fails.
    /// With [`IntMapping`](super::IntMapping) it uses integer operations only, as
    /// [`record_u64`](Self::record_u64). The same answer as `rank(v as f64)` below 2^53.
    ///
    /// ```
    /// use tailguard::sketch::{presets, AtomicSketch};
    /// static LATENCIES: presets::AtomicMcuLatency =
    ///     AtomicSketch::with_layout(presets::MCU_LATENCY_LAYOUT);
    /// LATENCIES.record_u64_slice(&[150_000, 900_000, 2_500_000]);
    /// assert_eq!(LATENCIES.rank_u64(1_000_000), 2); // integer operations only
    /// ```
    pub fn rank_u64(&self, v: u64) -> u64 {
        let cut = Cut::of_u64(&self.layout(), v);
        self.rank_and_count(cut.within(self.ends_u64(v))).0
    }

    /// [`rank_u64`](Self::rank_u64) of a duration as whole nanoseconds (saturating at
    /// `u64::MAX`), as [`record_duration`](Self::record_duration) records it.
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::sketch::{presets, AtomicSketch};
    /// let shared = AtomicSketch::with_layout(presets::INT_LATENCY_LAYOUT);
    /// for ms in [30, 70, 120] {
    ///     shared.record_duration(Duration::from_millis(ms));
    /// }
    /// assert_eq!(shared.rank_duration(Duration::from_millis(100)), 2);
    /// ```
    pub fn rank_duration(&self, d: Duration) -> u64 {
        self.rank_u64(crate::clock::duration_to_nanos(d))
    }

    /// The share of the values at or below `v`: [`rank`](Self::rank) over the count, both
    /// from the same pass; `None` if the sketch is empty. NaN is an error.
    ///
    /// ```
    /// use tailguard::sketch::{presets, AtomicSketch};
    /// let shared = AtomicSketch::with_layout(presets::LOG_LATENCY_LAYOUT);
    /// assert_eq!(shared.fraction_at_or_below(100e6), Ok(None));
    /// for ms in [20, 35, 40, 60, 80, 90, 95, 120, 150, 250] {
    ///     shared.record(ms as f64 * 1e6).unwrap();
    /// }
    /// // A latency-band SLO, "90 % of requests within 100 ms": here 70 %.
    /// assert_eq!(shared.fraction_at_or_below(100e6), Ok(Some(0.7)));
    /// ```
    pub fn fraction_at_or_below(&self, v: f64) -> Result<Option<f64>, InvalidValue> {
        let cut = Cut::of_f64(&self.layout(), v)?;
        let (rank, count) = self.rank_and_count(cut.within(self.ends_f64(v)));
        Ok(fraction(rank, count))
    }

    /// [`fraction_at_or_below`](Self::fraction_at_or_below) of a duration, through
    /// [`rank_duration`](Self::rank_duration); `None` if the sketch is empty.
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::sketch::{presets, AtomicSketch};
    /// let shared = AtomicSketch::with_layout(presets::CUBIC_LATENCY_LAYOUT);
    /// for ms in [20, 35, 40, 60, 80, 90, 95, 120, 150, 250] {
    ///     shared.record_duration(Duration::from_millis(ms));
    /// }
    /// // The share of requests answered within 100 ms.
    /// let within = shared.fraction_at_or_below_duration(Duration::from_millis(100));
    /// assert_eq!(within, Some(0.7));
    /// ```
    pub fn fraction_at_or_below_duration(&self, d: Duration) -> Option<f64> {
        let v = crate::clock::duration_to_nanos(d);
        let cut = Cut::of_u64(&self.layout(), v);
        let (rank, count) = self.rank_and_count(cut.within(self.ends_u64(v)));
        fraction(rank, count)
    }

    /// The values `cut` counts and all the values, from one pass.
    fn rank_and_count(&self, cut: Cut) -> (u64, u64) {
        Occupied::new(core::slice::from_ref(self)).rank_and_count(cut)
    }

    /// Where `v` (not negative) lies against the min and max, as far as their keys tell.
    #[inline]
    pub(crate) fn ends_f64(&self, v: f64) -> Ends {
        // -0.0 is a zero (its sign bit would make the largest key).
        self.ends_of_key(key_of_f64(v.abs()))
    }

    /// [`ends_f64`](Self::ends_f64) of an integer, with integer operations only.
    #[inline]
    pub(crate) fn ends_u64(&self, v: u64) -> Ends {
        self.ends_of_key(key_of_u64(v))
    }

    /// Where a value of key `key` lies against the min and max. The keys are monotone in
    /// the value: a key below the min's is a value below the min, one above the max's a
    /// value above the max (an empty sketch's `NO_MIN` is above every key).
    #[inline]
    fn ends_of_key(&self, key: u32) -> Ends {
        Ends {
            below_every: key < self.min_key.load(Relaxed),
            at_or_above_every: key > self.max_key.load(Relaxed),
        }
    }

    /// The smallest value recorded (to one part per million, rounded down), or `None`.
    pub fn min(&self) -> Option<f64> {
        let key = self.min_key.load(Relaxed);
        (key != NO_MIN).then(|| value_of_key(key))
    }

    /// The largest value recorded, or `None`: to one part per million, rounded down (to the
    /// edge of its bin where that part reaches across one), so never above the value and,
    /// for a value in the range, in its bin (a value above the range, counted in the top
    /// bin, is read as itself to that part per million, past the top bin's edge).
    pub fn max(&self) -> Option<f64> {
        self.min()?;
        let key = self.max_key.load(Relaxed);
        // The position of the bin a value lands in (None for the zero bin; the top bin for a
        // value above the range).
        let position = |v: f64| match self.layout().slot(self.mapping.index(v)) {
            Slot::Zero => None,
            Slot::Bin(pos) => Some(pos),
            Slot::Top => Some(N.saturating_sub(1)),
        };
        let occupied = |pos: &Option<usize>| {
            let counter = pos.map_or(Some(&self.zero), |pos| self.bins.get(pos));
            counter.is_some_and(|c| c.load(Relaxed) > 0)
        };
        Some(max_of_key(key, position, occupied))
    }

    /// Values above the range put in the top bin (and `+inf`). Kept in a 32-bit atomic
    /// (recording uses no 64-bit atomic), it stops at 2^31, a full bin's count: it never
    /// wraps.
    pub fn clamped(&self) -> u64 {
        u64::from(self.clamped.load(Relaxed))
    }

    /// Records dropped because their bin was full (2^31). Not part of [`count`](Self::count).
    /// Kept in a 32-bit atomic, it stops at 2^31 too: it never wraps, but past that it
    /// undercounts.
    pub fn saturated(&self) -> u64 {
        u64::from(self.saturated.load(Relaxed))
    }

    /// Where the bins lie: the mapping, the lowest bin's index, `N`, and the trackable
    /// range (as [`DDSketch::layout`]).
    #[inline]
    pub fn layout(&self) -> BinLayout<M, N> {
        BinLayout::with_min_index(self.mapping, self.min_index)
    }

    /// The guaranteed relative accuracy: the mapping's alpha plus `8 * 2^-52` (below 1),
    /// an upper bound so that `(got - want).abs() <= alpha * want` holds as computed in
    /// `f64`, where a value on a bin edge is exactly alpha from its bin's representative,
    /// for values near 1. Farther out the keys and representatives round with an error
    /// growing with `|log2 v|`, which can take a bin edge a hair past it (docs/guarantees.md
    /// says how far).
    pub fn relative_accuracy(&self) -> f64 {
        crate::sketch::mapping::reported_accuracy(self.mapping.relative_accuracy())
    }

    /// A plain [`DDSketch`] with the same contents (each bin read once, relaxed). Its sum
    /// is derived from the bins (each bin's value clamped into `[min, max]`); min and max
    /// are this sketch's, but for a record under way (its bin added, its extremes not yet
    /// moved), whose bin's value stands in for them.
    ///
    /// ```
    /// use tailguard::sketch::{AtomicSketch, CubicMapping};
    ///
    /// let live = AtomicSketch::<CubicMapping, 512>::with_relative_accuracy(0.01, 1.0).unwrap();
    /// for v in [10u64, 20, 30] {
    ///     live.record_u64(v);
    /// }
    /// let frozen = live.snapshot();
    /// live.record_u64(1_000); // later records do not reach the snapshot
    /// assert_eq!((frozen.count(), live.count()), (3, 4));
    /// assert_eq!(frozen.quantile(0.5), live.snapshot().quantile(0.5));
    /// assert!((frozen.sum() - 60.0).abs() <= 0.01 * 60.0); // derived from the bins
    /// ```
    pub fn snapshot(&self) -> DDSketch<M, N> {
        let mut sketch = DDSketch::with_layout(self.layout());
        self.add_into(&mut sketch);
        sketch
    }

    /// Adds this sketch's contents into `target` (see [`snapshot`](Self::snapshot)).
    /// Errors, changing nothing, if the configurations differ.
    ///
    /// ```
    /// use tailguard::sketch::{AtomicSketch, DDSketch, LogMapping, MergeError};
    ///
    /// let live = AtomicSketch::<LogMapping, 256>::with_relative_accuracy(0.01, 1.0).unwrap();
    /// live.record_u64(100);
    /// live.record_u64(200);
    /// let mut total = live.snapshot(); // the same configuration
    /// live.merge_into(&mut total).unwrap();
    /// assert_eq!(total.count(), 4);
    /// assert_eq!(live.count(), 2); // the source is unchanged
    /// // Another range (lowest bin at 2.0, not 1.0): refused, the target unchanged.
    /// let mut other = DDSketch::<LogMapping, 256>::with_relative_accuracy(0.01, 2.0).unwrap();
    /// assert_eq!(live.merge_into(&mut other), Err(MergeError::Range));
    /// assert!(other.is_empty());
    /// ```
    pub fn merge_into(&self, target: &mut DDSketch<M, N>) -> Result<(), MergeError> {
        target.layout().check_compatible(&self.layout())?;
        self.add_into(target);
        Ok(())
    }

    fn add_into(&self, target: &mut DDSketch<M, N>) {
        let extremes = self.min().zip(self.max());
        // Each bin's value clamped into [min, max], as `add_counts` values what it drops
        // (max-then-min, not `f64::clamp`, which panics when its bounds cross).
        let (low, high) = extremes.unwrap_or((0.0, f64::INFINITY));
        let mut sum = 0.0;
        // The lowest and highest occupied bins' indices, as read.
        let mut occupied: Option<(i32, i32)> = None;
        let layout = self.layout();
        let bins = self.bins.iter().enumerate().map(|(pos, bin)| {
            let index = layout.index_at(pos);
            let count = bin.load(Relaxed);
            if count > 0 {
                sum += f64::from(count) * self.mapping.value(index).max(low).min(high);
                occupied = Some(occupied.map_or((index, index), |(lo, _)| (lo, index)));
            }
            count
        });
        let zeros = self.zero.load(Relaxed);
        let before = target.count();
        let dropped = target.add_counts(
            zeros,
            bins,
            self.clamped(),
            self.saturated(),
            Extremes::of(extremes, None),
        );
        // A value above the range lands in the top bin (N >= 1).
        let top = self.min_index.saturating_add(N.saturating_sub(1) as i32);
        let bin = |v: f64| self.mapping.index(v).min(top);
        let value = |index: i32| self.mapping.value(index);
        // Nothing fit (`target`'s bins full): as in `DDSketch::merge`, no statistics.
        let extremes = extremes_within(extremes, occupied, zeros > 0, bin, value)
            .filter(|_| target.count() != before);
        if let Some((min, max)) = extremes {
            target.add_float_stats(min, max, sum);
            // What did not fit in `target`'s bins leaves the sum, as in `DDSketch::merge`.
            target.forget_dropped(dropped);
        }
    }

    /// Empties the sketch and returns how many values it removed.
    ///
    /// Each bin is swapped with zero, so a record racing the clear either is counted in
    /// the returned total or stays in the sketch: never both, never neither. Min and max
    /// are reset; one racing record may leave its value there. So are
    /// [`clamped`](Self::clamped) and [`saturated`](Self::saturated), whose counts the
    /// total leaves out (values refused as saturated were never in a bin); a clamped
    /// record racing the clear may be left out of `clamped` or counted there after its bin
    /// was emptied (a snapshot counts no more clamped values than its top bin holds).
    ///
    /// ```
    /// use tailguard::sketch::{presets, AtomicSketch};
    ///
    /// let s = AtomicSketch::with_layout(presets::CUBIC_LATENCY_LAYOUT);
    /// for ns in [0, 5_000, 7_000] {
    ///     s.record_u64(ns); // 0 goes to the zero bin: counted, and cleared too
    /// }
    /// assert_eq!(s.clear(), 3);
    /// assert!(s.is_empty() && s.min().is_none() && s.max().is_none());
    /// s.record_u64(9_000); // the configuration is kept
    /// assert_eq!(s.count(), 1);
    /// ```
    pub fn clear(&self) -> u64 {
        self.clear_counting_saturated().0
    }

    /// [`clear`](Self::clear), also returning the [`saturated`](Self::saturated) count it
    /// reset (swapped with zero, so a refused record racing it is counted in one place):
    /// a window hands both to its own counters.
    pub(crate) fn clear_counting_saturated(&self) -> (u64, u32) {
        // The occupied range is reset before any bin is cleared, with acquiring swaps: a
        // record whose widening of either end this reset overwrites happened before the
        // loads below, which see its add and clear it (see `occupy`); any other record
        // widens the new range itself. Every bin is read, not only the old range: a
        // record may have widened one end before the reset and the other after it, so
        // the old range need not hold its bin (loom found that interleaving).
        self.occupied_low.swap(NO_LOW, Acquire);
        self.occupied_high.swap(0, Acquire);
        let mut removed = 0u64;
        for counter in core::iter::once(&self.zero).chain(self.bins.iter()) {
            // A load first: clearing an already-empty bin then costs no write. Above
            // the limit are adds of full bins' refused records, which count themselves
            // as saturated (see `take_back`).
            if counter.load(Relaxed) != 0 {
                let held = counter.swap(0, Relaxed).min(BIN_LIMIT);
                removed = removed.saturating_add(u64::from(held));
            }
        }
        self.clamped.store(0, Relaxed);
        // A load first, as for the bins: nearly always zero, then no write.
        let saturated = match self.saturated.load(Relaxed) {
            0 => 0,
            _ => self.saturated.swap(0, Relaxed),
        };
        self.min_key.store(NO_MIN, Relaxed);
        self.max_key.store(0, Relaxed);
        (removed, saturated)
    }
}

impl<M, const N: usize> AtomicBins for AtomicSketch<M, N> {
    #[inline]
    fn zero_bin(&self) -> &AtomicU32 {
        &self.zero
    }

    #[inline]
    fn bin_counters(&self) -> &[AtomicU32] {
        &self.bins
    }

    /// The occupied range of positions, as last widened (empty if `low > high`).
    fn occupied(&self) -> (usize, usize) {
        (
            self.occupied_low.load(Relaxed) as usize,
            self.occupied_high.load(Relaxed) as usize,
        )
    }
}

impl<M: IndexMapping, const N: usize> core::fmt::Debug for AtomicSketch<M, N> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("AtomicSketch")
            .field("mapping", &self.mapping)
            .field("bins", &N)
            .field("min_index", &self.min_index)
            .field("count", &self.count())
            .field("clamped", &self.clamped())
            .field("saturated", &self.saturated())
            .finish()
    }
}

/// Tests and loom models only: a full bin without 2^31 records.
#[cfg(any(test, loom))]
impl<M: IndexMapping, const N: usize> AtomicSketch<M, N> {
    /// Sets the count of the bin of `value` (in the range, not zero) to `count`, as that
    /// many records of it would, but for the extremes.
    #[doc(hidden)]
    pub fn set_bin_count(&self, value: u64, count: u32) {
        let pos = (self.mapping.index_u64(value) - self.min_index) as usize;
        self.bins[pos].store(count, Relaxed);
        self.occupy(pos);
    }
}

#[cfg(all(test, not(loom)))]
mod tests;
