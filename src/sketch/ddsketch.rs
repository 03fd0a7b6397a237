//! [`DDSketch`]: the sketch itself, its bins and counters, recording and quantiles; its
//! rank queries and its merges are in `rank` and `merge`.

use core::fmt;
use core::time::Duration;

mod batch;
mod ends;
mod float_sum;
mod merge;
mod rank;

use batch::{ChunkStats, StatLanes};
use ends::EndIndices;

use super::error::{check_slice, ConfigError, InvalidQuantile, RecordError, RecordSliceError};
use super::layout::{position, BinLayout, Slot};
use super::mapping::IndexMapping;
use super::rank::{rank_value, sketch_quantile, RankedBins};
use super::scan::{
    chunk_down, chunk_up, scan_down, scan_down_chunk, scan_up, scan_up_chunk, SCAN_CHUNK,
};
use super::stats::{max_of, min_of, mul_wide, widen, FloatStats, IntStats};
use float_sum::FLOAT_SUM_ODD_PARTS;

/// A non-empty bin, as yielded by [`DDSketch::bins`].
///
/// ```
/// use tailguard::sketch::{presets, Bin, IndexMapping};
///
/// let mut s = presets::cubic_latency();
/// s.record_u64_n(2_000_000, 5);
/// let bins: Vec<Bin> = s.bins().collect();
/// assert_eq!(bins, [Bin { index: s.mapping().index(2e6), count: 5 }]);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Bin {
    /// The mapping's index of the bin (DataDog's bin key).
    pub index: i32,
    /// How many values it holds.
    pub count: u32,
}

/// How many values the slice records index at once, into a buffer on the stack.
const SLICE_CHUNK: usize = 64;
const _: () = assert!(SLICE_CHUNK.is_multiple_of(2)); // see `record_slice_unsaturated`'s sum parts

/// A DDSketch with `N` bins fixed at compile time and index mapping `M`.
///
/// No heap; `size_of` is `4 * N` plus 144 to 172 bytes on x86-64, depending on the mapping
/// and padding (see [`presets`](super::presets) for exact figures).
///
/// ```
/// use tailguard::sketch::{DDSketch, IndexMapping, LogMapping};
///
/// // 1 % relative accuracy, values from 1.0 up, 512 bins (up to about 2.7e4).
/// type Sketch = DDSketch<LogMapping, 512>;
/// let mut sketch = Sketch::with_relative_accuracy(0.01, 1.0).unwrap();
/// for v in 1..=1000 {
///     sketch.record(v as f64).unwrap();
/// }
/// let p99 = sketch.quantile(0.99).unwrap().unwrap();
/// assert!((p99 - 990.0).abs() <= 0.01 * 990.0);
/// assert_eq!(sketch.count(), 1000);
/// assert_eq!(sketch.max(), Some(1000.0));
/// // Exact statistics: min, max, sum and mean are of the values, not of the bins.
/// assert_eq!((sketch.min(), sketch.sum(), sketch.mean()), (Some(1.0), 500_500.0, Some(500.5)));
/// assert!(!sketch.is_empty());
/// // Where the bins lie (`layout` holds the same, and the mapping).
/// assert!(sketch.min_trackable() <= 1.0 && sketch.max_trackable() > 2.6e4);
/// assert_eq!(sketch.min_index(), sketch.layout().min_index());
/// assert!(sketch.relative_accuracy() >= 0.01 && sketch.relative_accuracy() < 0.0101);
/// assert_eq!(sketch.mapping().index(1.0), sketch.min_index());
/// // Below the range: the zero bin; above it: the top bin, counted as clamped.
/// sketch.record(0.5).unwrap();
/// sketch.record(1e9).unwrap();
/// assert_eq!((sketch.zero_count(), sketch.clamped(), sketch.saturated()), (1, 1, 0));
/// assert_eq!(sketch.count(), 1002);
/// ```
#[derive(Clone)]
// In this order, the bins last: the fields the record paths read and write (`count`, the
// statistics, the mapping, `min_index`) then lie within a load's offset of the sketch's
// address. Rust's own order puts the bins between them, and a 32-bit core then holds a
// second base address, one register fewer for the rest. The integer statistics first, at
// the sketch's address: a 32-bit core loads min and max in one instruction (`ldm`). The
// 8-byte fields come first: the order pads no more than Rust's (the preset sizes are
// unchanged).
#[repr(C)]
pub struct DDSketch<M, const N: usize> {
    int_stats: IntStats,
    /// Values held by the bins and the zero bin.
    count: u64,
    clamped: u64,
    saturated: u64,
    float_stats: FloatStats,
    /// The float sum's part for odd counts (64-bit cores): see [`FLOAT_SUM_ODD_PARTS`].
    /// `float_stats.sum` is the other part.
    float_sum_odd: [f64; FLOAT_SUM_ODD_PARTS],
    // The layout's two fields, not a `BinLayout`: apart, `min_index` packs with
    // `zero_count` (a `BinLayout` of a 32-byte mapping would pad to 40 bytes).
    mapping: M,
    /// Mapping index of `bins[0]`.
    min_index: i32,
    zero_count: u32,
    /// Where the quantile scan starts: a cache, read only on queries.
    end_indices: EndIndices,
    bins: [u32; N],
}

/// The sums `count` values between `min` and `max` can make, widened by a part in 10^12 (more
/// than the rounding of `count` to a float and of the products, and of a float sum of many
/// values).
pub(crate) fn sum_bounds(count: u64, min: f64, max: f64) -> (f64, f64) {
    let n = count as f64;
    (n * min * (1.0 - 1e-12), n * max * (1.0 + 1e-12))
}

impl<M: IndexMapping, const N: usize> DDSketch<M, N> {
    /// An empty sketch with `mapping` whose lowest bin holds `min_value`.
    ///
    /// Errors if `min_value` is not a positive normal finite number, or shares zero's bin
    /// ([`ConfigError::InvalidMinValue`]: only a mapping coarse enough, alpha near 1, near
    /// `f64::MIN_POSITIVE`), or the bin indices overflow.
    ///
    /// ```
    /// use tailguard::sketch::{ConfigError, DDSketch, IndexMapping, LogMapping};
    ///
    /// let mapping = LogMapping::with_relative_accuracy(0.02).unwrap();
    /// let mut sketch: DDSketch<LogMapping, 256> = DDSketch::new(mapping, 1.0).unwrap();
    /// assert!(sketch.is_empty() && sketch.min_trackable() <= 1.0);
    /// sketch.record(1.0).unwrap(); // the lowest bin holds min_value
    /// assert_eq!(sketch.bins().next().map(|b| b.index), Some(sketch.min_index()));
    /// let bad: Result<DDSketch<LogMapping, 256>, _> = DDSketch::new(mapping, 0.0);
    /// assert_eq!(bad.err(), Some(ConfigError::InvalidMinValue));
    /// ```
    pub fn new(mapping: M, min_value: f64) -> Result<Self, ConfigError> {
        Ok(Self::with_layout(BinLayout::new(mapping, min_value)?))
    }

    /// An empty sketch with relative accuracy `alpha` whose lowest bin holds `min_value`.
    ///
    /// ```
    /// use tailguard::sketch::{ConfigError, DDSketch, LogMapping};
    ///
    /// let s = DDSketch::<LogMapping, 128>::with_relative_accuracy(0.05, 10.0).unwrap();
    /// assert!(s.min_trackable() <= 10.0 && s.relative_accuracy() < 0.0501);
    /// let bad = DDSketch::<LogMapping, 128>::with_relative_accuracy(0.0, 10.0);
    /// assert_eq!(bad.err(), Some(ConfigError::InvalidAccuracy));
    /// ```
    pub fn with_relative_accuracy(alpha: f64, min_value: f64) -> Result<Self, ConfigError> {
        Self::new(M::with_relative_accuracy(alpha)?, min_value)
    }

    /// An empty sketch with relative accuracy `alpha` over `[min_value, max_value]`, or
    /// [`ConfigError::TooFewBins`] with the number of bins that range needs.
    ///
    /// Errors with [`ConfigError::InvalidMaxValue`] if `max_value` is NaN, infinite or
    /// below `min_value`.
    ///
    /// ```
    /// use tailguard::sketch::{ConfigError, DDSketch, LogMapping};
    /// // 1 % from 1 µs to 100 s in nanoseconds needs 922 bins.
    /// let s: Result<DDSketch<LogMapping, 922>, _> = DDSketch::for_range(0.01, 1e3, 1e11);
    /// assert!(s.is_ok());
    /// let s: Result<DDSketch<LogMapping, 900>, _> = DDSketch::for_range(0.01, 1e3, 1e11);
    /// assert_eq!(s.err(), Some(ConfigError::TooFewBins { needed: 922 }));
    /// ```
    pub fn for_range(alpha: f64, min_value: f64, max_value: f64) -> Result<Self, ConfigError> {
        let sketch = Self::with_relative_accuracy(alpha, min_value)?;
        if !(max_value >= min_value && max_value.is_finite()) {
            return Err(ConfigError::InvalidMaxValue);
        }
        let needed = i64::from(sketch.mapping.index(max_value))
            .saturating_sub(i64::from(sketch.min_index))
            .saturating_add(1);
        if needed > N as i64 {
            return Err(ConfigError::TooFewBins {
                needed: usize::try_from(needed).unwrap_or(usize::MAX),
            });
        }
        Ok(sketch)
    }

    /// An empty sketch of `layout`. `const`: with a constant layout (a preset's, or one
    /// from [`BinLayout::from_min_index`]) the sketch can initialise a `static`.
    ///
    /// ```
    /// use std::sync::Mutex;
    /// use tailguard::sketch::{presets, DDSketch};
    ///
    /// static LATENCIES: Mutex<presets::IntLatencyCoarse> =
    ///     Mutex::new(DDSketch::with_layout(presets::INT_LATENCY_COARSE_LAYOUT));
    ///
    /// LATENCIES.lock().unwrap().record_u64(1_500_000);
    /// assert_eq!(LATENCIES.lock().unwrap().count(), 1);
    /// ```
    pub const fn with_layout(layout: BinLayout<M, N>) -> Self {
        DDSketch {
            mapping: *layout.mapping(),
            min_index: layout.min_index(),
            zero_count: 0,
            bins: [0; N],
            count: 0,
            clamped: 0,
            saturated: 0,
            float_stats: FloatStats::EMPTY,
            float_sum_odd: [0.0; FLOAT_SUM_ODD_PARTS],
            int_stats: IntStats::EMPTY,
            end_indices: EndIndices::NONE,
        }
    }

    /// Records one value.
    ///
    /// NaN and negative values are errors and change nothing; see the
    /// [sketch docs](super#range) for values outside the range.
    #[inline]
    ///
    /// ```
    /// use tailguard::sketch::{DDSketch, LogMapping, RecordError};
    ///
    /// let mut sketch = DDSketch::<LogMapping, 512>::with_relative_accuracy(0.01, 1.0).unwrap();
    /// sketch.record(12.5).unwrap();
    /// assert_eq!(sketch.record(f64::NAN), Err(RecordError::NaN));
    /// assert_eq!(sketch.record(-1.0), Err(RecordError::Negative));
    /// // The errors changed nothing.
    /// assert_eq!((sketch.count(), sketch.min(), sketch.max()), (1, Some(12.5), Some(12.5)));
    /// ```
    pub fn record(&mut self, value: f64) -> Result<(), RecordError> {
        // The fast path: a positive value (not NaN, not -0.0, not +inf: its index is above
        // the range) between the min and the max, that lands in a bin of the range which
        // is not full. Everything else (errors, zero, a new min or max, the zero bin,
        // clamping, saturation) is `record_n`'s, out of line: a new extreme is rare, and
        // `record_n` notes its index for the quantile scan (`ends`).
        let s = &self.float_stats;
        let inside = (value >= s.min) & (value <= s.max);
        if value > 0.0 && inside && self.add_one_in_range(self.mapping.index(value)) {
            self.add_to_float_sum(value);
            return Ok(());
        }
        self.record_one_slow(value)
    }

    /// The single-value fast path's add: one to the bin of mapping index `index` if it
    /// is a bin of the range and not full (then `count` too), else nothing. Returns
    /// whether it added; the caller leaves the rest to its slow path.
    #[inline(always)]
    fn add_one_in_range(&mut self, index: i32) -> bool {
        // On a 64-bit core, no bin holds more than `count` (the bins and the zero bin sum
        // to it), so below `u32::MAX` none is full: a compare of the counter this add
        // updates anyway, in place of a load of the bin before its add (which is then one
        // instruction). A 32-bit core tests the bin: there `count` is two words.
        #[cfg(target_pointer_width = "64")]
        if self.count >= u64::from(u32::MAX) {
            return self.add_one_unless_full(index);
        }
        // One unsigned compare for both ends (see `layout::position`).
        let Some(bin) = self.bins.get_mut(position(index, self.min_index)) else {
            return false;
        };
        #[cfg(not(target_pointer_width = "64"))]
        if *bin == u32::MAX {
            return false;
        }
        // The bin is not full (above), and `count` holds at most (N + 1) * u32::MAX <
        // 2^64 values: neither add wraps.
        *bin = bin.wrapping_add(1);
        self.count = self.count.wrapping_add(1);
        true
    }

    /// [`add_one_in_range`](Self::add_one_in_range) once `count` is past `u32::MAX`, where
    /// a bin may be full: out of line, so that the common case does not carry it.
    #[cfg(target_pointer_width = "64")]
    #[cold]
    #[inline(never)]
    fn add_one_unless_full(&mut self, index: i32) -> bool {
        match self.bins.get_mut(position(index, self.min_index)) {
            Some(bin) if *bin != u32::MAX => {
                *bin = bin.wrapping_add(1);
                // At most (N + 1) * u32::MAX < 2^64 values: cannot wrap.
                self.count = self.count.wrapping_add(1);
                true
            }
            _ => false,
        }
    }

    /// [`record`](Self::record) of the values its fast path leaves out.
    #[cold]
    #[inline(never)]
    fn record_one_slow(&mut self, value: f64) -> Result<(), RecordError> {
        self.record_n(value, 1)
    }

    /// Records `value` `n` times.
    ///
    /// ```
    /// use tailguard::sketch::{presets, RecordError};
    ///
    /// let mut s = presets::cubic_latency();
    /// s.record_n(2e6, 3).unwrap(); // as three records of 2e6
    /// s.record(8e6).unwrap();
    /// assert_eq!((s.count(), s.sum()), (4, 1.4e7));
    /// let p50 = s.quantile(0.5).unwrap().unwrap();
    /// assert!((p50 - 2e6).abs() <= 0.01 * 2e6);
    /// assert_eq!(s.record_n(-1.0, 5), Err(RecordError::Negative));
    /// assert_eq!(s.count(), 4); // nothing recorded
    /// ```
    #[inline]
    pub fn record_n(&mut self, value: f64, n: u32) -> Result<(), RecordError> {
        if value.is_nan() {
            return Err(RecordError::NaN);
        }
        if value < 0.0 {
            return Err(RecordError::Negative);
        }
        // -0.0 passed the check above: make it +0.0, or it would become the minimum (and
        // answer quantiles) with its sign. `abs` is one bit cleared, also in soft float.
        let value = value.abs();
        let index = self.mapping.index(value);
        let (added, clamped) = self.add_to_bin(index, n);
        if added > 0 {
            // +inf would poison sum and max; it enters the stats as the top of the range.
            let v = if clamped && value == f64::INFINITY {
                self.max_trackable()
            } else {
                value
            };
            let s = &mut self.float_stats;
            widen(&mut s.min, &mut s.max, v);
            if v == value && value > 0.0 {
                self.end_indices.note_f64(value, index, s.min, s.max);
            }
            self.add_to_float_sum(if added == 1 { v } else { v * f64::from(added) });
        }
        Ok(())
    }

    /// Records an integer value (nanoseconds, say). Never fails.
    ///
    /// With [`IntMapping`](super::IntMapping) this path uses no float arithmetic at all.
    ///
    /// ```
    /// use tailguard::sketch::presets;
    ///
    /// let mut s = presets::int_latency(); // nanoseconds, no float on this path
    /// for ns in [1_500, 2_500, 100_000] {
    ///     s.record_u64(ns);
    /// }
    /// assert_eq!((s.count(), s.min(), s.max()), (3, Some(1_500.0), Some(100_000.0)));
    /// assert_eq!(s.sum(), 104_000.0); // integer sums are exact
    /// ```
    #[inline]
    pub fn record_u64(&mut self, value: u64) {
        // The fast path: a value between the min and the max whose index the mapping
        // finds on its own fast path, in a bin of the range which is not full. Zero, a new
        // min or max, the zero bin, clamping, saturation and the mapping's slow cases are
        // `record_u64_n`'s, out of line: a new extreme is rare, and `record_u64_n` notes
        // its index for the quantile scan (`ends`). `&`, not `&&`: with `&&` the compiler
        // merges the two tests through a flag in a register on x86-64.
        if let Some(index) = self.mapping.index_u64_fast(value) {
            let s = &self.int_stats;
            if (value >= s.min) & (value <= s.max) && self.add_one_in_range(index) {
                self.int_stats.add_inside(value);
                return;
            }
        }
        self.record_u64_one_slow(value)
    }

    /// [`record_u64`](Self::record_u64) of the values its fast path leaves out.
    #[cold]
    #[inline(never)]
    fn record_u64_one_slow(&mut self, value: u64) {
        self.record_u64_n(value, 1)
    }

    /// Records an integer value `n` times.
    ///
    /// ```
    /// use tailguard::sketch::presets;
    ///
    /// let mut s = presets::int_latency();
    /// s.record_u64_n(4_000, 1_000_000);
    /// s.record_u64_n(0, 2); // zeros go to the zero bin
    /// assert_eq!((s.count(), s.zero_count()), (1_000_002, 2));
    /// assert_eq!(s.sum(), 4e9);
    /// ```
    #[inline]
    pub fn record_u64_n(&mut self, value: u64, n: u32) {
        let index = if value == 0 {
            i32::MIN
        } else {
            self.mapping.index_u64(value)
        };
        let (added, _) = self.add_to_bin(index, n);
        if added > 0 {
            let s = &mut self.int_stats;
            widen(&mut s.min, &mut s.max, value);
            if value > 0 {
                self.end_indices.note_u64(value, index, s.min, s.max);
            }
            // Exact at any total (see `IntStats`); the multiply only for `n > 1`.
            let (lo, hi) = if added == 1 {
                (value, 0)
            } else {
                mul_wide(value, added)
            };
            s.add_to_sum(lo, hi);
        }
    }

    /// Records every value of `values`: the same bins, counters, min, max and sum as
    /// [`record_u64`](Self::record_u64) on each value in turn (tests/batch.rs checks it
    /// for every mapping), in one pass whose per-value work is independent: the index
    /// computations do not wait on one another, and min, max and the exact sum are
    /// reduced over the batch and folded in once.
    ///
    /// With [`IntMapping`](super::IntMapping) on x86-64 and aarch64 the indices of a chunk are computed
    /// through an exact integer-to-`f64` conversion, which vectorises; on other targets
    /// (cores without an FPU)
    /// with integer operations only, as [`record_u64`](Self::record_u64). The bins are
    /// the same either way.
    ///
    /// ```
    /// use tailguard::sketch::presets;
    /// let mut s = presets::int_latency();
    /// let block = [1_200_000u64, 950_000, 0, 3_100_000]; // a DMA block, say
    /// s.record_u64_slice(&block);
    /// assert_eq!(s.count(), 4);
    /// assert_eq!((s.min(), s.max()), (Some(0.0), Some(3_100_000.0)));
    /// assert_eq!(s.sum(), 5_250_000.0);
    /// ```
    pub fn record_u64_slice(&mut self, values: &[u64]) {
        if !self.fits_without_saturating(values.len()) {
            // A bin may fill up: value by value, so that exactly the same values are
            // dropped (and left out of min, max and sum) as one by one.
            values.iter().for_each(|&v| self.record_u64(v));
            return;
        }
        if !values.is_empty() {
            self.record_u64_slice_unsaturated(values);
        }
    }

    /// [`record_u64_slice`](Self::record_u64_slice) into bins none of which can fill
    /// up: a chunk at a time, first its sum (and whether every value is below 2^32),
    /// then its bins' positions (vectorised where the mapping allows), then the bins.
    /// Out of line, so that the loops are laid out the same wherever it is called.
    #[inline(never)]
    fn record_u64_slice_unsaturated(&mut self, values: &[u64]) {
        let (mut zeros, mut clamped) = (0u32, 0u32);
        let (mut min, mut max, mut sum) = (u64::MAX, 0u64, 0u128);
        // In registers for the loop: stores to the bins might otherwise alias them.
        let (mapping, min_index) = (self.mapping, self.min_index);
        let mut positions = [0u32; SLICE_CHUNK];
        for chunk in values.chunks(SLICE_CHUNK) {
            // The values ORed and summed in u64 lanes (adds that vectorise): with every
            // value below 2^32 the sum is exact (below 2^32 * 64), and the positions
            // take the mapping's fast kernel.
            let (mut ored, mut plain) = (0u64, 0u64);
            for &value in chunk {
                ored |= value;
                plain = plain.wrapping_add(value);
            }
            if ored >> 32u32 == 0 {
                sum = sum.wrapping_add(u128::from(plain));
                mapping.positions_below_2_32(chunk, min_index, &mut positions);
            } else {
                // A value from 2^32 up (4.3 s in nanoseconds): summed in u128, and
                // indexed value by value.
                for (p, &value) in positions.iter_mut().zip(chunk) {
                    // At most 2^64 values below 2^64 each: cannot wrap.
                    sum = sum.wrapping_add(u128::from(value));
                    let index = mapping.index_u64_fast(value);
                    *p = index.map_or(u32::MAX, |i| position(i, min_index) as u32);
                }
            }
            let positions = positions.get(..chunk.len()).unwrap_or(&positions);
            let mut one = |s: &mut Self, value: u64, pos: u32| {
                match s.bins.get_mut(pos as usize) {
                    // `count + n <= u32::MAX`: cannot wrap.
                    Some(bin) => *bin = bin.wrapping_add(1),
                    // The zero bin, the top and the mapping's slow cases out of line.
                    None => s.add_u64_outside_range(value, &mut zeros, &mut clamped),
                }
            };
            // Four at a time, so that the loop's own count, compare and branch are a
            // quarter of what they were; min and max by a tree of selects over the
            // four, one on the loop-carried chain. (With one select a value on that
            // chain the compiler makes branches of them, laid out as jumps taken in
            // the common case: 1.5 ns a value against 1.2.)
            let (value_quads, value_rest) = chunk.as_chunks::<4>();
            let (position_quads, position_rest) = positions.as_chunks::<4>();
            for (&[a, b, c, d], ps) in value_quads.iter().zip(position_quads) {
                min = min.min(a.min(b).min(c.min(d)));
                max = max.max(a.max(b).max(c.max(d)));
                for (&value, &pos) in [a, b, c, d].iter().zip(ps) {
                    one(self, value, pos);
                }
            }
            for (&value, &pos) in value_rest.iter().zip(position_rest) {
                (min, max) = (min.min(value), max.max(value));
                one(self, value, pos);
            }
        }
        self.finish_unsaturated(values.len(), zeros, clamped);
        let s = &mut self.int_stats;
        s.min = s.min.min(min);
        s.max = s.max.max(max);
        s.add_to_sum(sum as u64, sum.wrapping_shr(64) as u64); // the two words
    }

    /// [`record_slice`](Self::record_slice)'s adds: one to the bin at position
    /// `positions[i]` for each `values[i]` where that is a bin's (below `N`), `miss` for
    /// the others, and `each_four` of the values four at a time (the last group may be
    /// shorter; each starts at a multiple of 4). Four at a time, so that the loop's own
    /// count, compare and branch are a quarter of what they were (the integer slice's
    /// loop has the same shape, with its min and max folded in per four).
    /// No bin may fill up (see [`fits_without_saturating`](Self::fits_without_saturating)).
    #[inline(always)]
    fn add_ones(
        &mut self,
        values: &[f64],
        positions: &[u32],
        mut each_four: impl FnMut(&[f64]),
        mut miss: impl FnMut(&mut Self, f64),
    ) {
        let positions = positions.get(..values.len()).unwrap_or(positions);
        let mut one = |s: &mut Self, value: f64, pos: u32| {
            match s.bins.get_mut(pos as usize) {
                // `count + n <= u32::MAX`: cannot wrap.
                Some(bin) => *bin = bin.wrapping_add(1),
                None => miss(s, value),
            }
        };
        let (value_quads, value_rest) = values.as_chunks::<4>();
        let (position_quads, position_rest) = positions.as_chunks::<4>();
        for (vs, ps) in value_quads.iter().zip(position_quads) {
            each_four(vs);
            for (&value, &pos) in vs.iter().zip(ps) {
                one(self, value, pos);
            }
        }
        each_four(value_rest);
        for (&value, &pos) in value_rest.iter().zip(position_rest) {
            one(self, value, pos);
        }
    }

    /// [`record_u64_slice`](Self::record_u64_slice)'s `value` whose index the chunk left
    /// outside the bins of the range (zero, the top, or the mapping's slow cases):
    /// out of line, so that the loop keeps its registers.
    #[cold]
    #[inline(never)]
    fn add_u64_outside_range(&mut self, value: u64, zeros: &mut u32, clamped: &mut u32) {
        let index = if value == 0 {
            i32::MIN
        } else {
            self.mapping.index_u64(value)
        };
        let slot = self.layout().slot(index);
        self.add_one_unsaturated(slot, zeros, clamped);
    }

    /// Records every value of `values`, all or nothing: if any is NaN or negative,
    /// nothing is recorded and the error names the first such value and its position.
    /// Otherwise the same bins, counters, min, max and sum as [`record`](Self::record) on
    /// each value in turn (tests/batch.rs checks it for every mapping, bit for bit).
    ///
    /// The values are checked in a first, vectorised pass, then recorded a chunk at a
    /// time: the chunk's bin positions (vectorised with [`CubicMapping`](super::CubicMapping),
    /// which leaves a value within a hair of a bin edge to [`IndexMapping::index`]), its
    /// min and max, then its bins. The float sum must round as `record`'s adds one
    /// by one: where every value and the sum so far are whole numbers (integer
    /// nanoseconds, say) and the total stays below 2^53, none of those adds rounds, and
    /// the chunk is summed at once; otherwise value by value, in order.
    ///
    /// ```
    /// use tailguard::sketch::{presets, RecordError, RecordSliceError};
    /// let mut s = presets::cubic_latency();
    /// s.record_slice(&[1.5e6, 2.5e6, 0.0]).unwrap();
    /// assert_eq!(s.count(), 3);
    /// let bad = s.record_slice(&[4e6, -1.0, f64::NAN]);
    /// let want = RecordSliceError { position: 1, error: RecordError::Negative };
    /// assert_eq!(bad, Err(want));
    /// assert_eq!(s.count(), 3); // nothing of that slice was recorded
    /// ```
    pub fn record_slice(&mut self, values: &[f64]) -> Result<(), RecordSliceError> {
        check_slice(values)?;
        if !self.fits_without_saturating(values.len()) {
            // Every value is valid: these cannot fail.
            values.iter().for_each(|&v| {
                let _ = self.record(v);
            });
            return Ok(());
        }
        if !values.is_empty() {
            self.record_slice_unsaturated(values);
        }
        Ok(())
    }

    /// [`record_slice`](Self::record_slice) of values that are all valid, into bins
    /// none of which can fill up: a chunk at a time, first the chunk's bin positions
    /// (vectorised where the mapping allows) and statistics (vectorised), then the
    /// bins. Out of line, so that the loops are laid out the same wherever it is called.
    #[inline(never)]
    fn record_slice_unsaturated(&mut self, values: &[f64]) {
        let (mut zeros, mut clamped) = (0u32, 0u32);
        // The sum's parts (`float_sum`): the values at even positions add to
        // `part_of[0]`, the others to `part_of[1]`, in chunks of an even length.
        let mut parts = self.float_sum_parts();
        let part_of = self.next_float_sum_parts();
        let (mut lo, mut hi, mut top) = (f64::INFINITY, f64::NEG_INFINITY, 0.0f64);
        // In registers for the loop: stores to the bins might otherwise alias them.
        let mapping = self.mapping;
        let (min_index, mut positions) = (self.min_index, [0u32; SLICE_CHUNK]);
        for chunk in values.chunks(SLICE_CHUNK) {
            mapping.positions_fast_slice(chunk, min_index, &mut positions);
            // The statistics gathered in the bins loop, in vector lanes beside its scalar
            // adds; the zero bin, the top and the values the mapping left out of line.
            let mut lanes = StatLanes::EMPTY;
            self.add_ones(
                chunk,
                &positions,
                |group| lanes.add(group),
                |s, value| s.add_one_outside_range(value, &mut zeros, &mut clamped),
            );
            let stats = ChunkStats::of(chunk, lanes);
            (lo, hi) = (lo.min(stats.lo), hi.max(stats.hi));
            top = top.max(stats.top);
            parts = match stats.exact_sums(parts, part_of) {
                Some(exact) => exact,
                None => self.add_in_order(parts, part_of, chunk, stats.top == f64::INFINITY),
            };
        }
        self.finish_unsaturated(values.len(), zeros, clamped);
        // +inf enters the stats as the top of the range (as in `record_n`).
        let top = (top == f64::INFINITY).then(|| self.layout().max_trackable());
        // Each end only where a finite value set it (not its identity). No NaN and no
        // -0.0 among them: the order they are taken in does not matter.
        let lo = (lo != f64::INFINITY).then_some(lo);
        let hi = (hi != f64::NEG_INFINITY).then_some(hi);
        self.set_float_sum_parts(parts);
        let s = &mut self.float_stats;
        for v in [lo, hi, top].into_iter().flatten() {
            widen(&mut s.min, &mut s.max, v);
        }
    }

    /// The sum's `parts` plus each `|v|` of `chunk` in turn, as [`record`](Self::record)
    /// adds them: those at even positions to part `part_of[0]`, the others to
    /// `part_of[1]` (+inf, if `inf`, as the value a clamped +inf enters the stats as).
    #[inline(never)]
    fn add_in_order(
        &self,
        mut parts: [f64; 2],
        part_of: [usize; 2],
        chunk: &[f64],
        inf: bool,
    ) -> [f64; 2] {
        let as_top = if inf {
            let layout = self.layout();
            match layout.slot(self.mapping.index(f64::INFINITY)) {
                Slot::Top => layout.max_trackable(),
                _ => f64::INFINITY,
            }
        } else {
            f64::INFINITY
        };
        for (&v, part) in chunk.iter().zip(part_of.iter().cycle()) {
            let a = v.abs();
            if let Some(sum) = parts.get_mut(*part) {
                *sum += if a == f64::INFINITY { as_top } else { a };
            }
        }
        parts
    }

    /// [`record_slice`](Self::record_slice)'s value `v` (valid) whose index the chunk
    /// left outside the bins of the range: the zero bin, the top, or an index the
    /// mapping left to [`IndexMapping::index`], through
    /// [`add_one_unsaturated`](Self::add_one_unsaturated).
    #[cold]
    #[inline(never)]
    fn add_one_outside_range(&mut self, v: f64, zeros: &mut u32, clamped: &mut u32) {
        let slot = self.layout().slot(self.mapping.index(v.abs()));
        self.add_one_unsaturated(slot, zeros, clamped);
    }

    /// Whether `n` more values fit in the bins whatever bins they fall in: every bin
    /// holds at most `count`, so none can pass `u32::MAX` if `count + n` does not.
    #[inline]
    fn fits_without_saturating(&self, n: usize) -> bool {
        self.count.saturating_add(n as u64) <= u64::from(u32::MAX)
    }

    /// Adds one value to `slot`, where [`fits_without_saturating`] holds for the batch:
    /// no counter can overflow. The zero bin and the clamped values are tallied in
    /// `zeros` and `clamped`, for [`finish_unsaturated`](Self::finish_unsaturated).
    ///
    /// [`fits_without_saturating`]: Self::fits_without_saturating
    #[inline(always)]
    fn add_one_unsaturated(&mut self, slot: Slot, zeros: &mut u32, clamped: &mut u32) {
        // The counters stay at most `count + n <= u32::MAX`: no add wraps.
        let bin = match slot {
            Slot::Zero => {
                *zeros = zeros.wrapping_add(1);
                return;
            }
            Slot::Bin(pos) => self.bins.get_mut(pos),
            Slot::Top => {
                *clamped = clamped.wrapping_add(1);
                self.bins.last_mut()
            }
        };
        // Always Some: `pos < N` and `N > 0`.
        if let Some(bin) = bin {
            *bin = bin.wrapping_add(1);
        }
    }

    /// The counters of a batch of `n` values added by
    /// [`add_one_unsaturated`](Self::add_one_unsaturated).
    #[inline]
    fn finish_unsaturated(&mut self, n: usize, zeros: u32, clamped: u32) {
        // n <= u32::MAX - count (see `fits_without_saturating`): nothing here wraps.
        self.zero_count = self.zero_count.wrapping_add(zeros);
        self.count = self.count.wrapping_add(n as u64);
        self.clamped = self.clamped.saturating_add(u64::from(clamped));
    }

    /// Records a duration as whole nanoseconds (saturating at `u64::MAX`).
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::sketch::presets;
    ///
    /// let mut s = presets::cubic_latency(); // nanoseconds
    /// s.record_duration(Duration::from_micros(250));
    /// s.record_duration(Duration::MAX); // saturates at u64::MAX ns, clamped into the top bin
    /// assert_eq!((s.min(), s.clamped()), (Some(250_000.0), 1));
    /// ```
    #[inline]
    pub fn record_duration(&mut self, d: Duration) {
        self.record_u64(crate::clock::duration_to_nanos(d))
    }

    /// Adds `n` values to the bin of mapping index `index` with the rules of
    /// [`record`](Self::record): the zero bin below the range (`i32::MIN` always), the top
    /// bin above it (counted by `clamped`), whatever does not fit in a bin counted by
    /// `saturated`. `value` (finite, non-negative) enters min, max and sum for them.
    ///
    /// The way in for bins that arrive without their values (the protobuf decoder).
    /// Returns how many were added.
    pub(crate) fn add_bin_count(&mut self, index: i32, n: u64, value: f64) -> u64 {
        // A -0.0 must not become the minimum with its sign (see `record_n`).
        let value = value.abs();
        let added = self.add_bin_count_only(index, n);
        if added > 0 {
            let s = &mut self.float_stats;
            s.min = s.min.min(value);
            s.max = s.max.max(value);
            self.add_to_float_sum(value * added as f64); // added <= u32::MAX: exact
        }
        added
    }

    /// [`add_bin_count`](Self::add_bin_count) without min, max and sum: for a decoder
    /// that knows them better than the bins do (OTLP carries them), and adds them with
    /// [`add_float_stats`](Self::add_float_stats). Returns how many were added.
    pub(crate) fn add_bin_count_only(&mut self, index: i32, n: u64) -> u64 {
        let chunk = u32::try_from(n).unwrap_or(u32::MAX);
        let (added, _) = self.add_to_bin(index, chunk);
        // No bin holds more than u32::MAX: what did not fit in `chunk` is lost as well.
        let beyond = n.saturating_sub(u64::from(chunk));
        self.saturated = self.saturated.saturating_add(beyond);
        u64::from(added)
    }

    /// Adds `n` to the bin of mapping index `index` (the zero bin below the range, the top
    /// bin above it). Returns how many were added (fewer than `n` if the bin saturated)
    /// and whether the value was above the range.
    #[inline]
    fn add_to_bin(&mut self, index: i32, n: u32) -> (u32, bool) {
        let (slot, clamped) = match self.layout().slot(index) {
            Slot::Zero => (Some(&mut self.zero_count), false),
            Slot::Bin(pos) => (self.bins.get_mut(pos), false),
            Slot::Top => (self.bins.last_mut(), true),
        };
        // `slot` is always Some (N > 0 and pos is in range); None would count as saturated.
        let added = match slot {
            Some(slot) => {
                let new = slot.saturating_add(n);
                let added = new.wrapping_sub(*slot); // new >= *slot
                *slot = new;
                added
            }
            None => 0,
        };
        // `count` is the zero bin plus the bins: at most (N + 1) * u32::MAX < 2^64, so
        // this addition cannot wrap.
        self.count = self.count.wrapping_add(u64::from(added));
        if added != n {
            self.saturated = self
                .saturated
                .saturating_add(u64::from(n.wrapping_sub(added)));
        }
        if clamped {
            self.clamped = self.clamped.saturating_add(u64::from(added));
        }
        (added, clamped)
    }

    /// The value at quantile `q` (0 = min, 0.5 = median, 1 = max), or `None` if empty.
    ///
    /// Convention (DataDog's Go and Java): with `rank = floor(q * (count - 1))`, the product
    /// computed in `f64` as those libraries compute it (so `q = 0.7` of 11 values is rank
    /// 7: `0.7 * 10` rounds to 7, though the `f64` nearest 0.7 is a hair below it; from
    /// 2^53 values up, where `count - 1` itself rounds, the rank can be many ranks from the
    /// exact product's floor, `count` at most, which is answered with the max), returns
    /// the representative of the first bin whose cumulative count exceeds `rank`, so it is
    /// within `alpha` (but for the rounding of the keys and representatives far from 1, a
    /// hair docs/guarantees.md bounds, and for the edges of the finest
    /// [`IntMapping`](super::IntMapping)s, see its docs) of the exact sample quantile
    /// `sorted[rank]` when that value lies in the range
    /// ([`min_trackable`](Self::min_trackable) up to
    /// [`max_trackable`](Self::max_trackable)); one below the range is answered from the
    /// zero bin (0), one above it from the top bin. A range from about `f64::MIN_POSITIVE`
    /// can reach below the normal floats, and there (a subnormal `sorted[rank]`) only
    /// [`LogMapping`](super::LogMapping) keeps `alpha`: the other mappings' bins of the
    /// subnormals are wider (see [`min_trackable`](BinLayout::min_trackable)), and the
    /// answer is only within the bin and `[min, max]`. `q = 0` and `q = 1` return the exact
    /// min and max, and every answer is clamped into `[min, max]` (which can only bring it
    /// closer to the truth).
    ///
    /// Errors if `q` is NaN or outside [0, 1].
    ///
    /// ```
    /// use tailguard::sketch::{DDSketch, InvalidQuantile, LogMapping};
    ///
    /// let mut sketch = DDSketch::<LogMapping, 512>::with_relative_accuracy(0.01, 1.0).unwrap();
    /// assert_eq!(sketch.quantile(0.5), Ok(None)); // empty
    /// for v in 1..=100 {
    ///     sketch.record(v as f64).unwrap();
    /// }
    /// let median = sketch.quantile(0.5).unwrap().unwrap(); // sorted[floor(0.5 * 99)] = 50
    /// assert!((median - 50.0).abs() <= 0.01 * 50.0);
    /// assert_eq!((sketch.quantile(0.0), sketch.quantile(1.0)), (Ok(Some(1.0)), Ok(Some(100.0))));
    /// assert_eq!(sketch.quantile(1.5), Err(InvalidQuantile));
    /// ```
    pub fn quantile(&self, q: f64) -> Result<Option<f64>, InvalidQuantile> {
        let extremes = self.min().zip(self.max());
        sketch_quantile(q, extremes, |q| rank_value(self, &self.layout(), q))
    }

    // The scan starts from the exact min or max, which bound the bins: `record` and
    // `merge` keep them so. The one bin of slack each way covers a mapping's float
    // arithmetic an ulp off at a bin boundary, and the min and max of an `AtomicSketch`
    // snapshot, rounded down to a part per million (tests/quantile_scan.rs checks both).
    // A snapshot taken while records race may hold a bin before its max: that record then
    // counts as above every scanned bin, as racing records may or may not be seen.

    /// The position of the bin of mapping index `index`, moved by `slack` bins (one
    /// lower or higher, see above), clamped to the bins.
    #[inline]
    fn pos_near(&self, index: i32, slack: i64) -> usize {
        // Two i32s: no overflow. Max-then-min, not `Ord::clamp`, whose bound check can
        // panic (N >= 1: it cannot).
        let pos = i64::from(index).wrapping_sub(i64::from(self.min_index));
        pos.saturating_add(slack)
            .max(0)
            .min(N.wrapping_sub(1) as i64) as usize
    }

    /// The lowest position that can hold a value, from the exact minimum: no bin below it
    /// holds any.
    #[inline(always)]
    fn lowest_occupied(&self) -> usize {
        let (f, i) = (&self.float_stats, &self.int_stats);
        let mut lo = N.wrapping_sub(1); // N >= 1
        if f.min <= f.max {
            lo = if f.min > 0.0 {
                // An infinite min (see `highest_occupied`) from f64::MAX's bin up: a
                // mapping may index +inf above the bins past the float range.
                let index = self.end_indices.of_float_min(f.min);
                let index = index.unwrap_or_else(|| self.mapping.index(f.min.min(f64::MAX)));
                self.pos_near(index, -1)
            } else {
                0
            };
        }
        if i.min <= i.max {
            lo = lo.min(if i.min > 0 {
                let index = self.end_indices.of_int_min(i.min);
                self.pos_near(index.unwrap_or_else(|| self.mapping.index_u64(i.min)), -1)
            } else {
                0
            });
        }
        lo
    }

    /// The highest position that can hold a value, from the exact maximum: no bin above
    /// it holds any.
    #[inline(always)]
    fn highest_occupied(&self) -> usize {
        let (f, i) = (&self.float_stats, &self.int_stats);
        let mut hi = 0;
        if f.min <= f.max && f.max > 0.0 {
            // +inf enters the stats as max_trackable, so f.max is infinite only in a
            // range that reaches infinity, whose bins past the float range a message of
            // its mapping may fill (and a mapping may put +inf below them): all of them.
            hi = if f.max == f64::INFINITY {
                N.wrapping_sub(1)
            } else {
                let index = self.end_indices.of_float_max(f.max);
                self.pos_near(index.unwrap_or_else(|| self.mapping.index(f.max)), 1)
            };
        }
        if i.min <= i.max && i.max > 0 {
            let index = self.end_indices.of_int_max(i.max);
            let index = index.unwrap_or_else(|| self.mapping.index_u64(i.max));
            hi = hi.max(self.pos_near(index, 1));
        }
        hi
    }

    /// The position of the first bin whose cumulative count (from the lowest bin up,
    /// the zero bin left out) exceeds `rank`.
    #[inline]
    fn bin_from_bottom(&self, rank: u64) -> Option<usize> {
        // The bins hold at most `count`.
        if self.count <= u64::from(u32::MAX) {
            self.bin_from_bottom_summing::<true>(rank)
        } else {
            self.bin_from_bottom_summing::<false>(rank)
        }
    }

    #[inline]
    fn bin_from_bottom_summing<const NARROW: bool>(&self, rank: u64) -> Option<usize> {
        let lo = self.lowest_occupied();
        let (chunks, rest) = self.bins.get(lo..)?.as_chunks::<SCAN_CHUNK>();
        let mut below = 0u64;
        if let Some(k) = chunk_up::<NARROW>(chunks, rank, &mut below) {
            let start = lo.wrapping_add(k.wrapping_mul(SCAN_CHUNK)); // <= hi
            let chunk = chunks.get(k)?;
            return scan_up_chunk::<NARROW>(chunk, rank, &mut below).map(|i| start.wrapping_add(i));
        }
        let start = lo.wrapping_add(chunks.len().wrapping_mul(SCAN_CHUNK)); // <= hi + 1
        scan_up(rest, rank, &mut below).map(|i| start.wrapping_add(i))
    }

    /// The position of the lowest bin such that the bins above it hold fewer than `need`
    /// values. With `need = count - rank`, the same bin as
    /// [`bin_from_bottom`](Self::bin_from_bottom)`(rank - zero_count)`.
    #[inline]
    fn bin_from_top(&self, need: u64) -> Option<usize> {
        // The bins hold at most `count`.
        if self.count <= u64::from(u32::MAX) {
            self.bin_from_top_summing::<true>(need)
        } else {
            self.bin_from_top_summing::<false>(need)
        }
    }

    #[inline]
    fn bin_from_top_summing<const NARROW: bool>(&self, need: u64) -> Option<usize> {
        let hi = self.highest_occupied();
        let (rest, chunks) = self.bins.get(..=hi)?.as_rchunks::<SCAN_CHUNK>();
        let mut above = 0u64;
        if let Some(k) = chunk_down::<NARROW>(chunks, need, &mut above) {
            // The chunks start after `rest`: chunk k at rest.len() + k * SCAN_CHUNK <= hi.
            let start = rest.len().wrapping_add(k.wrapping_mul(SCAN_CHUNK));
            let chunk = chunks.get(k)?;
            return scan_down_chunk::<NARROW>(chunk, need, &mut above)
                .map(|i| start.wrapping_add(i));
        }
        scan_down(rest, need, &mut above)
    }

    /// How many values the sketch holds (including the zero bin).
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Whether the sketch holds no values.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The exact smallest value recorded, or `None` if empty.
    pub fn min(&self) -> Option<f64> {
        if self.count == 0 {
            return None;
        }
        Some(min_of(&self.float_stats, &self.int_stats))
    }

    /// The exact largest value recorded, or `None` if empty.
    pub fn max(&self) -> Option<f64> {
        if self.count == 0 {
            return None;
        }
        Some(max_of(&self.float_stats, &self.int_stats))
    }

    /// The sum of the values recorded (0 if empty).
    ///
    /// Integer records are summed exactly (in 128 bits, so past `u64::MAX`) and rounded
    /// once here; float records are summed in `f64`, on 64-bit cores in two parts (the
    /// records that leave `count` odd, and the others) added here, so that back-to-back
    /// records do not wait on each other's add: whole numbers below 2^53 (latencies in
    /// nanoseconds) sum exactly either way, other values may differ in their last bits
    /// from a sum in one part, as a 32-bit core keeps it. Values dropped from full bins are
    /// taken out at their bins' estimates, which can leave the running sum outside what
    /// `count` values between min and max can sum to: the answer is clamped into
    /// `[count * min, count * max]` (widened by a part in 10^12, so that no sum the values
    /// can make moves), where the true sum lies: the mean is within `[min, max]` to that.
    pub fn sum(&self) -> f64 {
        // The integer sum rounded once, correctly, however far past u64::MAX it is.
        let sum = self.float_sum() + self.int_stats.sum() as f64;
        match (self.min(), self.max()) {
            (Some(min), Some(max)) => {
                let (low, high) = sum_bounds(self.count, min, max);
                // max-then-min, not `clamp`, which panics if its bounds cross.
                sum.max(low).min(high)
            }
            _ => sum,
        }
    }

    /// The mean of the values recorded, or `None` if empty: within `[min, max]`, also when
    /// huge finite values (above the range, which enter the sum as themselves) overflow
    /// the float [`sum`](Self::sum) to `+inf`.
    pub fn mean(&self) -> Option<f64> {
        if self.count == 0 {
            return None;
        }
        let mean = self.sum() / self.count as f64;
        // max-then-min, not `clamp`, which panics if its bounds cross.
        Some(match self.min().zip(self.max()) {
            Some((min, max)) => mean.max(min).min(max),
            None => mean,
        })
    }

    /// Values counted in the zero bin: zeros and values below the range.
    pub fn zero_count(&self) -> u32 {
        self.zero_count
    }

    /// Values above the range (and `+inf`) that were put in the top bin.
    pub fn clamped(&self) -> u64 {
        self.clamped
    }

    /// Values dropped because their bin was full (`u32::MAX`). Not part of [`count`](Self::count).
    /// It stops at `u64::MAX` (reachable only by merging a sketch into itself some 32
    /// times over): it never wraps, but past that it undercounts.
    pub fn saturated(&self) -> u64 {
        self.saturated
    }

    /// Where the bins lie: the mapping, the lowest bin's index, `N`, and the trackable
    /// range. The accessors below are shorthands for its own.
    #[inline]
    pub fn layout(&self) -> BinLayout<M, N> {
        BinLayout::with_min_index(self.mapping, self.min_index)
    }

    /// The index mapping.
    pub fn mapping(&self) -> &M {
        &self.mapping
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

    /// The mapping index of the lowest bin.
    pub fn min_index(&self) -> i32 {
        self.min_index
    }

    /// The smallest value with a bin of its own: [`BinLayout::min_trackable`].
    pub fn min_trackable(&self) -> f64 {
        self.layout().min_trackable()
    }

    /// The end of the trackable range: [`BinLayout::max_trackable`].
    pub fn max_trackable(&self) -> f64 {
        self.layout().max_trackable()
    }

    /// The non-empty bins, from the lowest index up (the zero bin is
    /// [`zero_count`](Self::zero_count)).
    ///
    /// ```
    /// use tailguard::sketch::{DDSketch, IndexMapping, LogMapping};
    /// let mut s: DDSketch<LogMapping, 256> = DDSketch::with_relative_accuracy(0.02, 1.0).unwrap();
    /// s.record_n(10.0, 3).unwrap();
    /// let bins: Vec<_> = s.bins().collect();
    /// assert_eq!(bins.len(), 1);
    /// assert_eq!(bins[0].count, 3);
    /// assert!((s.mapping().value(bins[0].index) - 10.0).abs() <= 0.2);
    /// ```
    pub fn bins(&self) -> impl Iterator<Item = Bin> + '_ {
        let layout = self.layout();
        self.bins
            .iter()
            .enumerate()
            .filter(|(_, &count)| count > 0)
            .map(move |(pos, &count)| Bin {
                index: layout.index_at(pos),
                count,
            })
    }

    /// Empties the sketch, keeping its configuration.
    ///
    /// ```
    /// use tailguard::sketch::presets;
    ///
    /// let mut s = presets::cubic_latency();
    /// s.record_u64(5_000);
    /// s.record(0.0).unwrap();
    /// let (mapping, min_index) = (*s.mapping(), s.min_index());
    /// s.clear();
    /// assert!(s.is_empty() && s.min().is_none() && s.zero_count() == 0 && s.sum() == 0.0);
    /// assert_eq!((*s.mapping(), s.min_index()), (mapping, min_index)); // configuration kept
    /// ```
    pub fn clear(&mut self) {
        // What `with_layout` makes, field by field and in place: a new sketch would be
        // built on the stack and copied, a sketch-sized frame (too much for a small
        // core's stack). The destructuring names every field: none can be forgotten.
        let DDSketch {
            mapping: _,
            min_index: _,
            zero_count,
            bins,
            count,
            clamped,
            saturated,
            float_stats,
            float_sum_odd,
            int_stats,
            end_indices,
        } = self;
        *zero_count = 0;
        bins.fill(0);
        *count = 0;
        *clamped = 0;
        *saturated = 0;
        *float_stats = FloatStats::EMPTY;
        *float_sum_odd = [0.0; FLOAT_SUM_ODD_PARTS];
        *int_stats = IntStats::EMPTY;
        *end_indices = EndIndices::NONE;
    }
}

impl<M: IndexMapping, const N: usize> RankedBins for DDSketch<M, N> {
    #[inline]
    fn count(&self) -> u64 {
        self.count
    }

    #[inline]
    fn zero_count(&self) -> u64 {
        u64::from(self.zero_count)
    }

    /// `count` is the zero bin plus the bins, so the bin can be found from either end:
    /// from the nearer one, starting at the bin of the exact min or max.
    #[inline]
    fn position_of_rank(&self, rank: u64, zero: u64, count: u64) -> Option<usize> {
        if rank >= count / 2 {
            self.bin_from_top(count.saturating_sub(rank))
        } else {
            self.bin_from_bottom(rank.wrapping_sub(zero)) // zero <= rank
        }
    }
}

impl<M: IndexMapping, const N: usize> fmt::Debug for DDSketch<M, N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DDSketch")
            .field("mapping", &self.mapping)
            .field("bins", &N)
            .field("min_index", &self.min_index)
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

impl<M: IndexMapping, const N: usize, const N2: usize> PartialEq<DDSketch<M, N2>>
    for DDSketch<M, N>
{
    /// Same configuration, same bins and counters, same exact statistics.
    fn eq(&self, other: &DDSketch<M, N2>) -> bool {
        self.check_compatible(other).is_ok()
            && self.bins[..] == other.bins[..]
            && self.zero_count == other.zero_count
            && self.count == other.count
            && self.clamped == other.clamped
            && self.saturated == other.saturated
            && self.float_stats_summed() == other.float_stats_summed()
            && self.int_stats == other.int_stats
    }
}

#[cfg(feature = "defmt")]
#[cfg_attr(docsrs, doc(cfg(feature = "defmt")))]
impl<M: IndexMapping, const N: usize> defmt::Format for DDSketch<M, N> {
    fn format(&self, f: defmt::Formatter<'_>) {
        defmt::write!(
            f,
            "DDSketch {{ bins: {=usize}, count: {=u64}, clamped: {=u64}, saturated: {=u64} }}",
            N,
            self.count,
            self.clamped,
            self.saturated
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::sketch::mapping::{IntMapping, LogMapping};
    use crate::sketch::stats::MERGED_SUM_CAP;
    use crate::sketch::{presets, rank, MergeError};

    type Sketch = DDSketch<LogMapping, 128>;

    fn sketch() -> Sketch {
        Sketch::with_relative_accuracy(0.02, 1.0).unwrap()
    }

    #[test]
    fn bad_values_are_typed_errors_and_change_nothing() {
        let mut s = sketch();
        s.record(5.0).unwrap();
        let before = s.clone();
        assert_eq!(s.record(f64::NAN), Err(RecordError::NaN));
        assert_eq!(s.record(-1.0), Err(RecordError::Negative));
        assert_eq!(s.record(f64::NEG_INFINITY), Err(RecordError::Negative));
        assert_eq!(s.record_n(-3.0, 7), Err(RecordError::Negative));
        assert_eq!(s, before);
    }

    /// Above 2^32 values the scan sums each chunk's low and high 16 bits apart; below, in
    /// 32 bits. Both answer as the definition: the first bin whose cumulative count,
    /// summed one bin at a time, exceeds the rank.
    #[test]
    fn quantile_scans_of_nearly_full_bins_answer_as_the_definition() {
        for full_bins in [1usize, 3, 40, 100] {
            let mut s = sketch();
            for i in 0..full_bins {
                // Full and nearly full bins: every 16-bit half is large.
                let n = u32::MAX - (i as u32 % 3);
                s.record_n(1.0 + i as f64 * 0.05, n).unwrap();
            }
            s.record_n(0.0, 5).unwrap();
            for q in [0.0001, 0.25, 0.5, 0.75, 0.99, 0.9999] {
                let rank = rank::Quantile::new(q).unwrap().rank(s.count());
                let mut cumulative = u64::from(s.zero_count());
                let pos = s.bins.iter().position(|&b| {
                    cumulative += u64::from(b);
                    cumulative > rank
                });
                let expected = pos.map(|pos| s.layout().value_at(pos));
                let expected = expected.map(|v| v.max(s.min().unwrap()).min(s.max().unwrap()));
                assert_eq!(
                    s.quantile(q).unwrap(),
                    expected,
                    "{full_bins} bins, q = {q}"
                );
            }
        }
    }

    #[test]
    fn bad_quantiles_are_errors_and_empty_is_none() {
        let mut s = sketch();
        assert_eq!(s.quantile(0.5), Ok(None));
        assert_eq!(s.min(), None);
        assert_eq!(s.mean(), None);
        s.record(3.0).unwrap();
        for q in [f64::NAN, -0.01, 1.01, f64::INFINITY] {
            assert_eq!(s.quantile(q), Err(InvalidQuantile));
        }
    }

    #[test]
    fn out_of_range_values_are_clamped_and_counted() {
        let mut s = sketch();
        let top = s.max_trackable();
        s.record(0.0).unwrap();
        s.record(-0.0).unwrap();
        s.record(0.25).unwrap(); // below the range
        s.record_u64(0);
        s.record(top * 10.0).unwrap();
        s.record(f64::INFINITY).unwrap();
        s.record_u64(u64::MAX);
        assert_eq!(s.count(), 7);
        assert_eq!(s.zero_count(), 4);
        assert_eq!(s.clamped(), 3);
        assert_eq!(s.min(), Some(0.0));
        assert_eq!(s.max(), Some(u64::MAX as f64));
        assert!(s.sum().is_finite());
        assert_eq!(s.quantile(0.3).unwrap(), Some(0.0));
        // The top bin answers for the clamped values.
        let q = s.quantile(0.9).unwrap().unwrap();
        assert!(q >= top / 1.05 && q <= top * 1.05, "{q} vs {top}");
    }

    #[test]
    fn infinity_enters_stats_as_the_top_of_the_range() {
        let mut s = sketch();
        s.record(f64::INFINITY).unwrap();
        assert_eq!(s.max(), Some(s.max_trackable()));
        assert_eq!(s.sum(), s.max_trackable());
    }

    #[test]
    fn full_bins_saturate_and_count_the_overflow() {
        let mut s = sketch();
        s.record_n(2.0, u32::MAX - 1).unwrap();
        s.record_n(2.0, 5).unwrap();
        assert_eq!(s.count(), u64::from(u32::MAX));
        assert_eq!(s.saturated(), 4);
        let mut t = sketch();
        t.record_n(2.0, 10).unwrap();
        t.merge(&s).unwrap();
        assert_eq!(t.count(), u64::from(u32::MAX));
        assert_eq!(t.saturated(), 4 + 10);
    }

    #[test]
    fn single_records_into_a_full_bin_are_saturated_and_stay_out_of_the_stats() {
        // The fast paths of `record` and `record_u64` leave a full bin to `record_n`.
        let mut int = presets::int_latency();
        int.record_u64_n(5_000, u32::MAX);
        int.record_u64(5_001); // the same bin
        int.record(5_000.0).unwrap();
        assert_eq!((int.count(), int.saturated()), (u64::from(u32::MAX), 2));
        assert_eq!(int.sum(), 5_000.0 * f64::from(u32::MAX));
        assert_eq!((int.min(), int.max()), (Some(5_000.0), Some(5_000.0)));
        int.record_u64(9_000); // another bin: counted
        assert_eq!(
            (int.count(), int.max()),
            (u64::from(u32::MAX) + 1, Some(9_000.0))
        );
        // Between min and max now (the fast path's), past `u32::MAX` values in all: the
        // full bin still refuses, another still counts.
        int.record_u64(5_000);
        int.record(5_000.0).unwrap();
        int.record_u64(7_000);
        int.record(7_000.0).unwrap();
        assert_eq!((int.count(), int.saturated()), (u64::from(u32::MAX) + 3, 4));
        assert_eq!(int.bins().map(|b| b.count).max(), Some(u32::MAX));
        let mut cubic = presets::cubic_latency();
        cubic.record_n(5_000.0, u32::MAX).unwrap();
        cubic.record(5_000.5).unwrap();
        cubic.record_u64(5_000);
        assert_eq!((cubic.count(), cubic.saturated()), (u64::from(u32::MAX), 2));
        assert_eq!(cubic.max(), Some(5_000.0));
        cubic.record(9_000.0).unwrap();
        cubic.record(7_000.0).unwrap(); // inside, another bin: counted
        cubic.record(5_000.0).unwrap(); // inside, the full bin: saturated
        assert_eq!(
            (cubic.count(), cubic.saturated()),
            (u64::from(u32::MAX) + 2, 3)
        );
    }

    #[test]
    fn zero_n_records_nothing() {
        let mut s = sketch();
        s.record_n(2.0, 0).unwrap();
        s.record_u64_n(2, 0);
        assert!(s.is_empty());
        assert_eq!(s.min(), None);
    }

    #[test]
    fn integer_and_float_records_share_bins_and_stats() {
        let mut s = DDSketch::<IntMapping, 512>::with_relative_accuracy(0.01, 1.0).unwrap();
        s.record_u64(1000);
        s.record(1000.0).unwrap();
        s.record_duration(Duration::from_nanos(10));
        assert_eq!(s.bins().count(), 2);
        assert_eq!(s.min(), Some(10.0));
        assert_eq!(s.max(), Some(1000.0));
        assert_eq!(s.sum(), 2010.0);
        assert_eq!(s.mean(), Some(670.0));
    }

    #[test]
    fn quantile_follows_the_rank_convention() {
        let mut s = sketch();
        for v in [1.0, 2.0, 3.0, 4.0, 100.0] {
            s.record(v).unwrap();
        }
        // rank = floor(q * 4): q = 0.74 -> sorted[2] = 3, q = 0.75 -> sorted[3] = 4.
        let near = |q: f64, want: f64| {
            let got = s.quantile(q).unwrap().unwrap();
            assert!(
                (got - want).abs() <= 0.02 * want,
                "q={q} got {got} want {want}"
            );
        };
        near(0.74, 3.0);
        near(0.75, 4.0);
        near(0.99, 4.0);
        assert_eq!(s.quantile(0.0), Ok(Some(1.0)));
        assert_eq!(s.quantile(1.0), Ok(Some(100.0)));
    }

    #[test]
    fn merge_rejects_mismatches_and_leaves_target_unchanged() {
        let mut a = sketch();
        a.record(7.0).unwrap();
        let before = a.clone();
        let other_alpha = Sketch::with_relative_accuracy(0.01, 1.0).unwrap();
        assert_eq!(a.merge(&other_alpha), Err(MergeError::Mapping));
        let other_range = Sketch::with_relative_accuracy(0.02, 10.0).unwrap();
        assert_eq!(a.merge(&other_range), Err(MergeError::Range));
        let other_n = DDSketch::<LogMapping, 64>::with_relative_accuracy(0.02, 1.0).unwrap();
        assert_eq!(a.merge(&other_n), Err(MergeError::BinCount));
        let shifted = LogMapping::from_gamma_offset(a.mapping().gamma(), 0.5).unwrap();
        let other_offset = Sketch::new(shifted, 1.0).unwrap();
        assert_eq!(a.merge(&other_offset), Err(MergeError::Offset));
        assert_eq!(a, before);
    }

    #[test]
    fn clear_keeps_the_configuration() {
        let mut s = sketch();
        s.record(9.0).unwrap();
        s.clear();
        assert!(s.is_empty());
        assert_eq!(s, sketch());
    }

    #[test]
    fn bad_configurations_are_errors() {
        for min in [0.0, -1.0, f64::NAN, f64::INFINITY, 5e-324, 1e-310] {
            assert_eq!(
                Sketch::with_relative_accuracy(0.01, min).err(),
                Some(ConfigError::InvalidMinValue)
            );
        }
        assert_eq!(
            Sketch::with_relative_accuracy(1.5, 1.0).err(),
            Some(ConfigError::InvalidAccuracy)
        );
        assert_eq!(
            Sketch::with_relative_accuracy(1e-9, 1e300).err(),
            Some(ConfigError::RangeOverflow)
        );
        assert!(Sketch::with_relative_accuracy(0.01, f64::MIN_POSITIVE).is_ok());
        // A mapping so coarse that MIN_POSITIVE's bin is zero's: zeros would be counted
        // in it. Every mapping, near 1 and at the preset accuracies.
        use crate::sketch::{CubicMapping, IntMapping, LogMapping};
        fn zero_apart<M: IndexMapping>(alpha: f64, min: f64) -> bool {
            match DDSketch::<M, 300>::with_relative_accuracy(alpha, min) {
                Ok(mut s) => {
                    s.record(0.0).unwrap();
                    assert_eq!(s.zero_count(), 1, "{alpha} {min:e}");
                    true
                }
                Err(e) => {
                    assert_eq!(e, ConfigError::InvalidMinValue, "{alpha} {min:e}");
                    false
                }
            }
        }
        assert!(!zero_apart::<CubicMapping>(0.99, f64::MIN_POSITIVE));
        for alpha in [0.5, 0.9, 0.99, 0.999999] {
            for min in [f64::MIN_POSITIVE, 1e-300, 1e-3, 1.0] {
                zero_apart::<CubicMapping>(alpha, min);
                zero_apart::<LogMapping>(alpha, min);
                zero_apart::<IntMapping>(alpha, min);
            }
        }
        assert!(zero_apart::<CubicMapping>(0.99, 1e-300));
        assert!(zero_apart::<LogMapping>(0.01, f64::MIN_POSITIVE));
    }

    #[test]
    fn a_bad_range_end_is_invalid_max_value() {
        for max in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 0.5, -1.0] {
            assert_eq!(
                Sketch::for_range(0.02, 1.0, max).err(),
                Some(ConfigError::InvalidMaxValue),
                "max = {max}"
            );
        }
        // A bad min is reported first, as before.
        assert_eq!(
            Sketch::for_range(0.02, f64::NAN, f64::NAN).err(),
            Some(ConfigError::InvalidMinValue)
        );
        assert!(Sketch::for_range(0.02, 1.0, 1.0).is_ok());
        let text = std::format!("{}", ConfigError::InvalidMaxValue);
        assert!(text.contains("largest"), "{text}");
        let text = std::format!("{}", ConfigError::InvalidMinValue);
        assert!(text.contains("normal"), "{text}");
    }

    /// Full bins drop values at their bin's estimate, which can leave the running sum far
    /// from what the values held can make (a clamped 1e9 shares the one bin with 0.5 and
    /// 1): the sum reads within `[count * min, count * max]`.
    #[test]
    fn the_mean_stays_within_min_and_max_after_saturating_merges() {
        use crate::sketch::LogMapping;
        let mut s = DDSketch::<LogMapping, 1>::with_relative_accuracy(0.01, 1.0).unwrap();
        for v in [1.0, 1e9, 0.5] {
            s.record(v).unwrap();
        }
        for _ in 0..41 {
            s.merge_self();
        }
        assert!(s.saturated() > 0);
        let (min, max, mean) = (s.min().unwrap(), s.max().unwrap(), s.mean().unwrap());
        assert!(
            mean >= min && mean <= max * (1.0 + 1e-12),
            "{min} {mean} {max}"
        );
    }

    #[test]
    fn merged_integer_sums_are_exact_and_never_wrap() {
        let mut a = sketch();
        a.record_u64_n(u64::MAX, u32::MAX);
        let one = u128::from(u64::MAX) * u128::from(u32::MAX);
        assert_eq!(a.int_stats.sum(), one);
        // Past u64::MAX, exactly: values of another bin merged in.
        let mut other = sketch();
        other.record_u64_n(100, 3);
        let mut c = a.clone();
        c.merge(&other).unwrap();
        assert_eq!(c.int_stats.sum(), one + 300);
        // Merging a full sketch into itself again and again: every merged value is
        // dropped, and leaves the sum as it leaves the count.
        for _ in 0..40 {
            let b = a.clone();
            a.merge(&b).unwrap();
            assert_eq!(a.int_stats.sum(), one);
            assert_eq!(a.count(), u64::from(u32::MAX));
        }
        // The guard: a merge never takes the sum past the cap, nor lower than either sum
        // (records may have taken one past it), so a merge into an empty sketch copies.
        let mut i = IntStats::EMPTY;
        i.merge_sum(MERGED_SUM_CAP - 1, 1);
        i.merge_sum(MERGED_SUM_CAP - 1, 2);
        assert_eq!(i.sum(), MERGED_SUM_CAP);
        let past = MERGED_SUM_CAP + 10 * u128::from(u32::MAX);
        let mut j = IntStats::EMPTY;
        j.merge_sum(past, 10);
        assert_eq!(j.sum(), past);
        j.merge_sum(past, 20);
        assert_eq!(j.sum(), past);
        j.merge_sum(u128::MAX, 30);
        assert!(j.sum() <= MERGED_SUM_CAP + 30 * u128::from(u64::MAX));
    }

    #[test]
    fn integer_sum_carries_into_the_high_word() {
        let mut s = sketch();
        s.record_u64(u64::MAX);
        s.record_u64(2);
        assert_eq!(s.int_stats.sum(), u128::from(u64::MAX) + 2);
        s.record_u64_n(u64::MAX, 3);
        assert_eq!(s.int_stats.sum(), 4 * u128::from(u64::MAX) + 2);
    }

    #[test]
    fn negative_zero_from_the_decoder_path_is_a_zero() {
        let mut s = sketch();
        assert_eq!(s.add_bin_count(i32::MIN, 2, -0.0), 2);
        s.record(3.0).unwrap();
        assert_eq!(s.min().map(f64::to_bits), Some(0));
        assert_eq!(s.quantile(0.25).unwrap().map(f64::to_bits), Some(0));
    }
}
