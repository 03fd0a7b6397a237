//! [`Window`]: a rotating window of atomic sketches, so quantiles follow the live
//! distribution and forget old slowdowns.
//!
#![doc = include_str!("../../docs/window.md")]

// The window itself, its records and its rotation are here; `config` holds the
// configuration and its checks, `cache` the cached quantile (the records' requests, the
// maintenance's scan and publication, the words readers load), `seqlock` the generation
// counter a rotation writes and a refresh validates its scan against, `rank` the rank
// queries (values at or below a value, from one such validated scan), `reset` the
// emptying in place, and `presets` the names of the presets' windows. The long explanation is docs/window.md, included above.
mod cache;
mod config;
mod exponential;
mod interval;
mod presets;
mod rank;
mod reset;
mod seqlock;

pub(crate) use config::Parts;
pub use config::{WindowConfig, WindowError, WindowPreset, MAX_CACHED_QUANTILES};
pub use exponential::{ExponentialWindow, WindowCounter};
pub use presets::{
    CubicLatencyWindow, IntLatencyCoarseWindow, IntLatencyWindow, LogLatencyWindow,
    McuLatencyWindow, OtelLatencyWindow,
};

use core::fmt;
use core::time::Duration;

use crate::clock::coarse::{Age, AtomicCoarseInstant, CoarseClock, CoarseInstant};
use crate::clock::{duration_to_nanos, Clock, Instant};
use crate::sketch::rank::{rank_value, Occupied, Quantile, RankBin};
use crate::sketch::{
    AtomicSketch, BinLayout, DDSketch, IndexMapping, InvalidQuantile, MergeError, RecordError,
};
use crate::sync::{const_unless_loom, AtomicBool, AtomicU32, Ordering};

use cache::{decode_bound, NO_QUANTILE, SCAN_ATTEMPTS};
use seqlock::SeqLock;

/// A rotating window of `SLOTS` atomic sketches of `N` bins, driven by clock `C`.
///
/// See the [module docs](self) for rotation, clocks that jump, the cached quantile and
/// their guarantees. The presets' windows have names that spell no bin count:
/// [`LogLatencyWindow`], [`CubicLatencyWindow`], [`IntLatencyWindow`],
/// [`IntLatencyCoarseWindow`], [`McuLatencyWindow`] and [`OtelLatencyWindow`], each of a
/// clock type and, optionally, a number of slots (three by default).
///
/// ```
/// use core::time::Duration;
/// use tailguard::clock::ManualClock;
/// use tailguard::sketch::presets;
/// use tailguard::window::{Window, WindowConfig};
///
/// let clock = ManualClock::new();
/// let config = WindowConfig::new().with_interval(Duration::from_secs(30));
/// let window = Window::with_layout(&clock, presets::CUBIC_LATENCY_LAYOUT, config).unwrap();
///
/// for ms in 1..=100 {
///     window.record_duration(Duration::from_millis(ms));
/// }
/// // Records only ask for refreshes of the cached p90 (when a bin's count reaches a power
/// // of two or a multiple of 1,024); `maintain` does what was asked, and refreshes on
/// // every call during warm-up (32 values) and every second; `refresh` always rescans.
/// window.maintain();
/// let p90 = window.cached_quantile().unwrap(); // one atomic load, in nanoseconds
/// assert!((p90 - 90e6).abs() <= 0.01 * 90e6);
/// assert!((window.quantile(0.99).unwrap().unwrap() - 99e6).abs() <= 0.01 * 99e6);
///
/// clock.advance(Duration::from_secs(61)); // two intervals later: all forgotten
/// assert_eq!(window.count(), 0);
/// assert_eq!(window.expired(), 100);
/// ```
pub struct Window<C, M, const N: usize, const SLOTS: usize = 3> {
    clock: C,
    /// Ticks are intervals since the window was made.
    intervals: CoarseClock,
    /// Ticks of about 1 ms since the same origin, for refreshes by time.
    refresh_clock: CoarseClock,
    config: WindowConfig,
    /// A record whose bin count becomes a multiple of `refresh_mask + 1` refreshes.
    refresh_mask: u32,
    /// `refresh_interval` in refresh ticks (0: never by time).
    refresh_ticks: u64,
    /// The published interval.
    epoch: AtomicCoarseInstant,
    /// The slot of the published interval, stored before it.
    current_slot: AtomicU32,
    /// Bumped before and after a rotation clears slots (odd while it does), so that a
    /// refresh can tell whether its scan overlapped a clear.
    generation: SeqLock,
    rotating: AtomicBool,
    /// The refresh's lock and request in one word (`cache`'s `REFRESH_LOCKED` while a
    /// caller refreshes, `REFRESH_WANTED` while a refresh was asked for and no scan has
    /// started since).
    refresh_state: AtomicU32,
    /// When the last quantile was published, in refresh ticks.
    refreshed_at: AtomicCoarseInstant,
    /// The configured quantiles, checked (entries past `quantile_count` repeat the first).
    quantiles: [Quantile; MAX_CACHED_QUANTILES],
    quantile_count: u8,
    /// The position of the cached quantile's bin (or `cache`'s `ZERO_BIN`), or
    /// [`NO_QUANTILE`] (or a cleared marker): [`cached_quantile`](Self::cached_quantile) is
    /// its value.
    cached_bin: AtomicU32,
    /// The upper edges of the cached quantiles' bins (the first is `cached_bin`'s) as whole
    /// numbers, encoded by `cache`'s `encode_bound`: what a hedger compares with, with
    /// integer operations only. Meaningful while `cached_bin` holds a published bin: a
    /// refresher stores them, from its consistent scan, before it publishes `cached_bin`
    /// (release), and readers load them after `cached_bin` (acquire), so a reader gets the
    /// bounds of the scan it read or of a later consistent one. Rotations leave them
    /// alone: withdrawing `cached_bin` withdraws them. (Words with no protocol of their
    /// own keep the loom models of the refresh as small as they were.)
    cached_bounds: [AtomicU32; MAX_CACHED_QUANTILES],
    /// Values counted by the scan of the last published quantile (saturating).
    cached_count: AtomicU32,
    expired: AtomicU32,
    /// Records refused by full bins of slots cleared since (each slot counts its own
    /// until then).
    saturated: AtomicU32,
    rotations: AtomicU32,
    slots: [AtomicSketch<M, N>; SLOTS],
}

/// `SLOTS` empty sketches of `layout`. An array can only repeat a constant, so they are
/// made of the mapping type's [`IndexMapping::DEFAULT`] and then given the layout.
#[cfg(not(loom))]
const fn slots_of<M: IndexMapping, const N: usize, const SLOTS: usize>(
    layout: BinLayout<M, N>,
) -> [AtomicSketch<M, N>; SLOTS] {
    let mut slots =
        [const { AtomicSketch::with_layout(BinLayout::with_min_index(M::DEFAULT, 0)) }; SLOTS];
    let mut rest: &mut [AtomicSketch<M, N>] = &mut slots;
    while let [first, tail @ ..] = rest {
        first.set_layout(layout);
        rest = tail;
    }
    slots
}

/// `SLOTS` empty sketches of `layout` (loom's atomics have no `const` constructor).
#[cfg(loom)]
fn slots_of<M: IndexMapping, const N: usize, const SLOTS: usize>(
    layout: BinLayout<M, N>,
) -> [AtomicSketch<M, N>; SLOTS] {
    core::array::from_fn(|_| AtomicSketch::with_layout(layout))
}

impl<C: Clock, M: IndexMapping, const N: usize> Window<C, M, N> {
    /// An empty window of the default three slots whose sketches have `layout` (a preset's,
    /// say: the bin count comes from its type); its first interval starts now. For another
    /// number of slots, [`with_origin`](Self::with_origin) at the clock's current time.
    ///
    /// ```
    /// use tailguard::clock::ManualClock;
    /// use tailguard::sketch::presets;
    /// use tailguard::window::{IntLatencyWindow, Window, WindowConfig};
    ///
    /// let clock = ManualClock::new();
    /// let config = WindowConfig::new();
    /// let window: IntLatencyWindow<_> =
    ///     Window::with_layout(&clock, presets::INT_LATENCY_LAYOUT, config).unwrap();
    /// window.record_u64(1_500_000);
    /// assert_eq!(window.count(), 1);
    /// ```
    pub fn with_layout(
        clock: C,
        layout: BinLayout<M, N>,
        config: WindowConfig,
    ) -> Result<Self, WindowError> {
        Self::starting_now(clock, layout, config)
    }
}

impl<C: Clock, M: IndexMapping, const N: usize, const SLOTS: usize> Window<C, M, N, SLOTS> {
    /// An empty window of `N` bins and `SLOTS` slots (named by the type it is given)
    /// whose sketches use `mapping` with the lowest bin holding `min_value`; its first
    /// interval starts now.
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::clock::ManualClock;
    /// use tailguard::sketch::{IndexMapping, LogMapping};
    /// use tailguard::window::{Window, WindowConfig};
    ///
    /// let clock = ManualClock::new();
    /// let mapping = LogMapping::with_relative_accuracy(0.02).unwrap();
    /// // 512 bins from 1 ms (in nanoseconds) and 4 slots, named by the type.
    /// let window: Window<_, LogMapping, 512, 4> =
    ///     Window::new(&clock, mapping, 1e6, WindowConfig::new()).unwrap();
    /// window.record_duration(Duration::from_millis(8));
    /// assert_eq!(window.count(), 1);
    /// assert!(window.snapshot().min_trackable() <= 1e6);
    /// assert!(Window::<_, LogMapping, 512, 4>::new(&clock, mapping, -1.0, WindowConfig::new()).is_err());
    /// ```
    pub fn new(
        clock: C,
        mapping: M,
        min_value: f64,
        config: WindowConfig,
    ) -> Result<Self, WindowError> {
        Self::starting_now(clock, BinLayout::new(mapping, min_value)?, config)
    }

    /// An empty window whose sketches have `layout`, its first interval starting now.
    fn starting_now(
        clock: C,
        layout: BinLayout<M, N>,
        config: WindowConfig,
    ) -> Result<Self, WindowError> {
        // Checked before the clock is read or moved: an error drops the clock as usual.
        let origin = clock.now();
        let parts = Parts::new(config, origin)?;
        Ok(Self::from_parts(clock, layout, config, parts))
    }

    const_unless_loom! {
        /// An empty window whose sketches have `layout` and whose first interval starts at
        /// `origin` (not at the clock's current time). `const`: with a constant clock (a
        /// unit struct reading a hardware timer, say) and a constant layout (a preset's,
        /// or one from [`BinLayout::from_min_index`]) the window is a `static`, built at
        /// compile time: no start-up code and no stack, for windows of tens of KiB.
        ///
        /// Intervals are counted from `origin`, and the window behaves as one built at
        /// `origin` and idle since. If the clock is past the first interval when the window
        /// is first used, the first record (or query, or [`maintain`](Self::maintain))
        /// rotates it to the current interval, as after any idle gap ("clocks that jump" in
        /// the [module docs](self)): its slots are empty, so nothing expires and the counts
        /// and quantiles are those of a window built then; only
        /// [`rotations`](Self::rotations) counts that one rotation. With
        /// [`with_rotate_on_record(false)`](WindowConfig::with_rotate_on_record) records do
        /// not rotate: call [`maintain`](Self::maintain) once before the first record (a
        /// record made before that first rotation is in a slot the rotation clears, so it
        /// would count as [`expired`](Self::expired) rather than in the window). A clock
        /// reading before `origin` counts as `origin`: pass `Instant::ZERO` for a clock
        /// that starts at zero (a firmware tick counter), or a time the clock cannot
        /// precede.
        ///
        /// Errors as [`new`](Self::new) does; invalid configurations are compile errors
        /// in a `static`. On an error the clock is forgotten rather than dropped (a
        /// `const fn` cannot run a destructor).
        ///
        /// ```
        /// use core::time::Duration;
        /// use tailguard::clock::{Clock, Instant};
        /// use tailguard::sketch::presets;
        /// use tailguard::window::{IntLatencyCoarseWindow, Window, WindowConfig};
        ///
        /// /// A firmware clock: a unit struct reading a timer that starts at zero (here a
        /// /// fixed time, past the first intervals).
        /// struct Timer;
        /// impl Clock for Timer {
        ///     fn now(&self) -> Instant {
        ///         Instant::from_nanos(95_000_000_000)
        ///     }
        /// }
        ///
        /// const CONFIG: WindowConfig = WindowConfig::new().with_interval(Duration::from_secs(10));
        /// static LATENCIES: IntLatencyCoarseWindow<Timer> = match Window::with_origin(
        ///     Timer,
        ///     presets::INT_LATENCY_COARSE_LAYOUT,
        ///     CONFIG,
        ///     Instant::ZERO,
        /// ) {
        ///     Ok(window) => window,
        ///     Err(_) => panic!("invalid window configuration"), // a compile error
        /// };
        ///
        /// for ms in 1..=100 {
        ///     LATENCIES.record_duration(Duration::from_millis(ms));
        /// }
        /// assert_eq!(LATENCIES.count(), 100);
        /// assert_eq!(LATENCIES.expired(), 0);
        /// let p99 = LATENCIES.quantile(0.99).unwrap().unwrap();
        /// assert!((p99 - 99e6).abs() <= 0.016 * 99e6);
        /// ```
        ///
        /// The crate's clocks are all constants: `StdClock::new()` and `EmbassyClock`
        /// (both start near zero: pass `Instant::ZERO`), `&MANUAL` for a
        /// `static MANUAL: ManualClock = ManualClock::new()`, and
        /// [`FnClock::new`](crate::clock::FnClock::new) of a `fn() -> Instant`. A clock
        /// that needs run-time set-up (a timer peripheral taken at start-up) still lets
        /// the window be a `static`: give the window a constant handle to it (a unit
        /// struct, or an `FnClock` of a function, that reads the timer through a global
        /// the start-up code fills), so only the timer's own set-up runs at start-up and
        /// the window is never built on the stack. `firmware/src/bin/build_stack.rs` does
        /// this with SysTick.
        pub fn with_origin(
            clock: C,
            layout: BinLayout<M, N>,
            config: WindowConfig,
            origin: Instant,
        ) -> Result<Self, WindowError> {
            // Checked without the clock: a `const fn` can match on a `Result` only if
            // nothing in it has a destructor.
            match Parts::new(config, origin) {
                Ok(parts) => Ok(Self::from_parts(clock, layout, config, parts)),
                Err(e) => {
                    // Not dropped: a `const fn` cannot run `C`'s destructor.
                    core::mem::forget(clock);
                    Err(e)
                }
            }
        }
    }

    const_unless_loom! {
        /// The window of checked `parts`.
        pub(crate) fn from_parts(
            clock: C,
            layout: BinLayout<M, N>,
            config: WindowConfig,
            parts: Parts,
        ) -> Self {
            const { assert!(SLOTS >= 2 && SLOTS < 1 << 16, "SLOTS must be at least 2") };
            Window {
                refresh_ticks: parts.refresh_ticks,
                clock,
                intervals: parts.intervals,
                refresh_clock: parts.refresh_clock,
                config,
                refresh_mask: parts.refresh_mask,
                // The published interval: the first, at the origin.
                epoch: AtomicCoarseInstant::at_origin(),
                current_slot: AtomicU32::new(0), // interval 0's
                generation: SeqLock::new(),
                rotating: AtomicBool::new(false),
                refresh_state: AtomicU32::new(0),
                refreshed_at: AtomicCoarseInstant::never(),
                quantiles: parts.quantiles,
                quantile_count: parts.quantile_count,
                cached_bin: AtomicU32::new(NO_QUANTILE),
                cached_bounds: [AtomicU32::new(0), AtomicU32::new(0)],
                cached_count: AtomicU32::new(0),
                expired: AtomicU32::new(0),
                saturated: AtomicU32::new(0),
                rotations: AtomicU32::new(0),
                slots: slots_of(layout),
            }
        }
    }

    /// Records one value at the clock's current time. NaN and negative values are errors
    /// and change nothing.
    ///
    /// ```
    /// use tailguard::clock::ManualClock;
    /// use tailguard::sketch::presets;
    /// use tailguard::window::{Window, WindowConfig};
    ///
    /// let clock = ManualClock::new();
    /// let window = Window::with_layout(&clock, presets::LOG_LATENCY_LAYOUT, WindowConfig::new()).unwrap();
    /// window.record(2.5e6).unwrap(); // 2.5 ms in nanoseconds
    /// assert!(window.record(f64::NAN).is_err());
    /// assert!(window.record(-1.0).is_err());
    /// assert_eq!(window.count(), 1); // the errors changed nothing
    /// let p50 = window.quantile(0.5).unwrap().unwrap();
    /// assert!((p50 - 2.5e6).abs() <= 0.01 * 2.5e6);
    /// ```
    #[inline]
    pub fn record(&self, value: f64) -> Result<(), RecordError> {
        // Refused before the clock is read: a refused value changes nothing, not even the
        // rotation (and the expiry) a record at this time would do.
        if value.is_nan() {
            return Err(RecordError::NaN);
        }
        if value < 0.0 {
            return Err(RecordError::Negative);
        }
        let now = self.clock.now();
        let previous = self
            .slot_at(now, self.config.rotate_on_record)
            .record_returning_bin_count(value)?;
        self.after_record(previous);
        Ok(())
    }

    /// Records an integer value (nanoseconds, say) at the clock's current time.
    ///
    /// ```
    /// use tailguard::clock::ManualClock;
    /// use tailguard::sketch::presets;
    /// use tailguard::window::{Window, WindowConfig};
    ///
    /// let clock = ManualClock::new();
    /// let window = Window::with_layout(&clock, presets::INT_LATENCY_LAYOUT, WindowConfig::new()).unwrap();
    /// for ns in [1_000_000, 2_000_000, 4_000_000] {
    ///     window.record_u64(ns);
    /// }
    /// assert_eq!(window.count(), 3);
    /// let p50 = window.quantile(0.5).unwrap().unwrap(); // rank 1 of 0..=2: 2 ms
    /// assert!((p50 - 2e6).abs() <= window.relative_accuracy() * 2e6);
    /// ```
    #[inline]
    pub fn record_u64(&self, value: u64) {
        self.record_u64_at(self.clock.now(), value);
    }

    /// Records a duration, as whole nanoseconds, at the clock's current time.
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::clock::ManualClock;
    /// use tailguard::sketch::presets;
    /// use tailguard::window::{Window, WindowConfig};
    ///
    /// let clock = ManualClock::new();
    /// let window = Window::with_layout(&clock, presets::INT_LATENCY_LAYOUT, WindowConfig::new()).unwrap();
    /// window.record_duration(Duration::from_micros(1_500));
    /// let twin = Window::with_layout(&clock, presets::INT_LATENCY_LAYOUT, WindowConfig::new()).unwrap();
    /// twin.record_u64(1_500_000);
    /// assert_eq!(window.snapshot(), twin.snapshot()); // the same record, in nanoseconds
    /// ```
    #[inline]
    pub fn record_duration(&self, d: Duration) {
        self.record_u64_at(self.clock.now(), duration_to_nanos(d));
    }

    /// Records a duration as of `now`, for callers that have just read the clock (to
    /// compute that duration, say): saves a second clock read. A `now` behind the window
    /// is checked against the clock before anything is expired.
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::clock::{Clock, ManualClock};
    /// use tailguard::sketch::presets;
    /// use tailguard::window::{Window, WindowConfig};
    ///
    /// let clock = ManualClock::new();
    /// let window = Window::with_layout(&clock, presets::CUBIC_LATENCY_LAYOUT, WindowConfig::new()).unwrap();
    /// let start = clock.now();
    /// clock.advance(Duration::from_millis(12)); // the request runs
    /// let now = clock.now(); // read once: for the latency and for the record
    /// window.record_duration_at(now, now.duration_since(start));
    /// assert_eq!(window.count(), 1);
    /// let max = window.quantile(1.0).unwrap().unwrap(); // to a part per million, rounded down
    /// assert!(max <= 12e6 && max >= 12e6 * (1.0 - 1e-6));
    /// ```
    #[inline]
    pub fn record_duration_at(&self, now: Instant, d: Duration) {
        self.record_u64_at(now, duration_to_nanos(d));
    }

    /// Records an integer value as of `now`, for callers that have just read the clock (see
    /// [`record_duration_at`](Self::record_duration_at)).
    #[inline]
    pub(crate) fn record_u64_at(&self, now: Instant, value: u64) {
        // The bin's position first, from the layout every slot shares: it does not wait
        // for the clock, so the two computations overlap.
        let pos = self.slot_index(0).fast_position(value);
        let previous = self
            .slot_at(now, self.config.rotate_on_record)
            .record_u64_at_position(pos, value);
        self.after_record(previous);
    }

    /// The slot to record into at `now`: the slot of `now`'s interval if that is in the
    /// window, after rotating if `now` is past it (and `rotate`).
    #[inline]
    fn slot_at(&self, now: Instant, rotate: bool) -> &AtomicSketch<M, N> {
        let reading = self.intervals.at(now);
        let age = self.epoch.age(&self.intervals, reading);
        if age == Age::Ticks(0) {
            // The published interval (nearly every record): its slot as published, so
            // the slot's address waits for one load, not for the clock's arithmetic
            // (which only decides this predicted branch).
            self.slot_index(self.current_slot.load(Ordering::Relaxed))
        } else if interval::in_window(age, SLOTS) {
            self.slot(reading.ticks())
        } else if rotate {
            self.catch_up(reading)
        } else {
            self.slot_without_rotating(reading, age)
        }
    }

    /// Where a record that does not rotate goes when its reading is not in the window: a
    /// reading behind it into the published interval's slot; any other into its own
    /// interval's slot, as a record racing a rotation does. Either way it is in a slot
    /// until a rotation clears it and counts it as expired: conserved.
    #[cold]
    fn slot_without_rotating(&self, reading: CoarseInstant, age: Age) -> &AtomicSketch<M, N> {
        match age {
            // The published interval is `-d` ahead of the reading.
            Age::Ticks(d) if d < 0 => self.slot(reading.ticks().wrapping_add(d.unsigned_abs())),
            _ => self.slot(reading.ticks()),
        }
    }

    /// The slot of interval number `ticks`.
    #[inline]
    fn slot(&self, ticks: u64) -> &AtomicSketch<M, N> {
        self.slot_index(interval::slot_number::<SLOTS>(ticks))
    }

    /// Slot number `i`, below `SLOTS`.
    // The `min` (which changes nothing for a slot number) lets the compiler see that the
    // index is in range, so no bounds-check panic is linked into the record path.
    #[allow(clippy::indexing_slicing)]
    #[inline]
    fn slot_index(&self, i: u32) -> &AtomicSketch<M, N> {
        &self.slots[(i as usize).min(SLOTS.wrapping_sub(1))]
    }

    /// Brings the window to the interval of `reading`: rotates forward,
    /// or restarts the window if the clock went back past it, unless another caller is
    /// rotating. Returns the slot to record into.
    #[cold]
    fn catch_up(&self, mut reading: CoarseInstant) -> &AtomicSketch<M, N> {
        if interval::behind(self.epoch.age(&self.intervals, reading), SLOTS) {
            // A stale reading (a recorder delayed after reading the clock, an old `now`
            // passed in) is not a clock that went back: read the clock again.
            reading = self.intervals.at(self.clock.now());
        }
        if self
            .rotating
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            // Someone else is rotating: record into this reading's own interval. Its slot
            // is cleared only by a rotation past that interval, and then counted as expired.
            return self.slot(reading.ticks());
        }
        // Under the lock the published interval is stable: only lock holders write it.
        let age = self.epoch.age(&self.intervals, reading);
        let clear = interval::leaving(age, reading, SLOTS);
        if let Some((first, leaving)) = clear {
            // The seqlock's writer side: odd while slots are being cleared, and the cached
            // quantile withdrawn before any of its values is.
            self.generation.begin_write(|odd| self.withdraw_cached(odd));
            let (mut removed, mut refused) = (0u32, 0u32);
            for k in 0..leaving {
                let (values, saturated) =
                    self.slot(first.wrapping_add(k)).clear_counting_saturated();
                removed = removed.wrapping_add(values as u32);
                refused = refused.wrapping_add(saturated);
            }
            self.expired.fetch_add(removed, Ordering::Relaxed);
            // Inside the write: `saturated()` reads the slots and this under the seqlock.
            if refused != 0 {
                self.saturated.fetch_add(refused, Ordering::Relaxed);
            }
            // Before the interval it belongs to (whose release store publishes it): a
            // recorder that reads the new interval reads this slot or a later one. One
            // that read the old interval may take this slot too: a newer interval's,
            // which the clears above have already passed.
            self.current_slot.store(
                interval::slot_number::<SLOTS>(reading.ticks()),
                Ordering::Relaxed,
            );
            self.epoch.store_now(reading);
            self.generation.end_write();
            self.rotations.fetch_add(1, Ordering::Relaxed);
        }
        self.rotating.store(false, Ordering::Release);
        if clear.is_some() {
            // The cached quantile is withdrawn until then: the next maintenance refreshes.
            self.ask_for_refresh();
        }
        self.slot(reading.ticks())
    }

    /// The value at quantile `q` over the window, computed now (scans the occupied bins);
    /// `None` if the window is empty.
    ///
    /// `q = 0` and `q = 1` give the min and max recorded (to a part per million, rounded
    /// down, as [`AtomicSketch::min`] and [`AtomicSketch::max`]); other quantiles the representative of the rank's bin
    /// (rank `floor(q * (count - 1))`) clamped into that min and max, within the sketch's
    /// relative accuracy of the exact sample quantile where that lies in the layout's
    /// range (as [`DDSketch::quantile`]: the answer of the window's
    /// [`snapshot`](Self::snapshot)), from a scan that no rotation overlapped (retried a
    /// few times if rotations keep coming). Records racing the scan may or may not be
    /// seen. (The [`cached_quantile`](Self::cached_quantile) is the bin's value, not
    /// clamped.)
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::clock::ManualClock;
    /// use tailguard::sketch::presets;
    /// use tailguard::window::{Window, WindowConfig};
    ///
    /// let clock = ManualClock::new();
    /// let window = Window::with_layout(&clock, presets::CUBIC_LATENCY_LAYOUT, WindowConfig::new()).unwrap();
    /// assert_eq!(window.quantile(0.5), Ok(None)); // empty
    /// for ms in 1..=100 {
    ///     window.record_duration(Duration::from_millis(ms));
    /// }
    /// let p50 = window.quantile(0.5).unwrap().unwrap(); // rank floor(0.5 * 99): 50 ms
    /// assert!((p50 - 50e6).abs() <= 0.01 * 50e6);
    /// let max = window.quantile(1.0).unwrap().unwrap(); // to a part per million, rounded down
    /// assert!(max <= 100e6 && max >= 100e6 * (1.0 - 1e-6));
    /// assert!(window.quantile(2.0).is_err());
    /// ```
    pub fn quantile(&self, q: f64) -> Result<Option<f64>, InvalidQuantile> {
        let q = Quantile::new(q)?;
        self.maintain();
        // A scan no rotation overlapped; if rotations keep coming, the last scan as it is.
        let (value, count) = (0..SCAN_ATTEMPTS)
            .find_map(|_| self.consistent_scan(q).ok())
            .map_or_else(
                || self.rank_value(q),
                |(_, bin, c)| {
                    let layout = self.slot(0).layout();
                    let value = bin.map(|bin| match bin {
                        RankBin::Zero => 0.0,
                        RankBin::At(pos) => layout.value_at(pos),
                    });
                    (value, c)
                },
            );
        if count == 0 {
            return Ok(None);
        }
        let min = self
            .slots
            .iter()
            .filter_map(AtomicSketch::min)
            .reduce(f64::min);
        let max = self
            .slots
            .iter()
            .filter_map(AtomicSketch::max)
            .reduce(f64::max);
        Ok(if q.is_min() {
            min.or(value)
        } else if q.is_max() {
            max.or(value)
        } else {
            // Clamped into [min, max], as `DDSketch::quantile` (and so the snapshot) does:
            // the zero bin's 0 and the top bin's value are otherwise answered for values
            // that are neither. Extremes a racing clear left crossed bound nothing.
            match min.zip(max) {
                Some((min, max)) if min <= max => value.map(|v| v.max(min).min(max)),
                _ => value,
            }
        })
    }

    /// The value of the bin holding quantile `q` of all slots, by the rank rule, and the
    /// count whose rank it is.
    fn rank_value(&self, q: Quantile) -> (Option<f64>, u64) {
        rank_value(
            &Occupied::new(self.slots.as_slice()),
            &self.slot(0).layout(),
            q,
        )
    }

    /// How many values the window holds now (scans the occupied bins).
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::clock::ManualClock;
    /// use tailguard::sketch::presets;
    /// use tailguard::window::{Window, WindowConfig};
    ///
    /// let clock = ManualClock::new();
    /// let config = WindowConfig::new().with_interval(Duration::from_secs(30));
    /// let window = Window::with_layout(&clock, presets::INT_LATENCY_LAYOUT, config).unwrap();
    /// window.record_u64(1_000_000);
    /// clock.advance(Duration::from_secs(30)); // the next interval
    /// window.record_u64(2_000_000);
    /// assert_eq!(window.count(), 2); // this interval and the one before
    /// clock.advance(Duration::from_secs(30));
    /// assert_eq!(window.count(), 1); // the first value has left
    /// assert_eq!(window.expired(), 1);
    /// ```
    pub fn count(&self) -> u64 {
        self.maintain();
        self.slots.iter().map(AtomicSketch::count).sum()
    }

    /// All values in the window as one plain [`DDSketch`].
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::clock::ManualClock;
    /// use tailguard::sketch::presets;
    /// use tailguard::window::{Window, WindowConfig};
    ///
    /// let clock = ManualClock::new();
    /// let window = Window::with_layout(&clock, presets::CUBIC_LATENCY_LAYOUT, WindowConfig::new()).unwrap();
    /// window.record_u64(1_000_000);
    /// clock.advance(Duration::from_secs(30)); // a value in each of two slots
    /// window.record_u64(3_000_000);
    /// let sketch = window.snapshot();
    /// assert_eq!(sketch.count(), 2);
    /// let p50 = sketch.quantile(0.5).unwrap().unwrap(); // rank 0: 1 ms
    /// assert!((p50 - 1e6).abs() <= sketch.relative_accuracy() * 1e6);
    /// window.record_u64(5_000_000); // a copy: later records are not in it
    /// assert_eq!((sketch.count(), window.count()), (2, 3));
    /// ```
    pub fn snapshot(&self) -> DDSketch<M, N> {
        self.maintain();
        let mut sketch = self.slot(0).snapshot();
        for slot in self.slots.iter().skip(1) {
            // Same configuration by construction: cannot fail.
            let _ = slot.merge_into(&mut sketch);
        }
        sketch
    }

    /// Adds all values in the window into `target`, which must have the window's layout
    /// (errors, changing nothing, if not): [`snapshot`](Self::snapshot) without a
    /// sketch-sized value on the stack, for a sketch in a `static` or a C caller's storage.
    ///
    /// ```
    /// use tailguard::sketch::presets;
    /// use tailguard::window::{Window, WindowConfig};
    /// use tailguard::ManualClock;
    ///
    /// let clock = ManualClock::new();
    /// let w = Window::with_layout(&clock, presets::MCU_LATENCY_LAYOUT, WindowConfig::new()).unwrap();
    /// w.record_u64(2_000_000);
    /// let mut total = presets::mcu_latency();
    /// w.merge_into(&mut total).unwrap();
    /// assert_eq!(total, w.snapshot());
    /// ```
    pub fn merge_into(&self, target: &mut DDSketch<M, N>) -> Result<(), MergeError> {
        self.maintain();
        target.layout().check_compatible(&self.slot(0).layout())?;
        for slot in &self.slots {
            // The window's slots share its layout, checked above: cannot fail.
            let _ = slot.merge_into(target);
        }
        Ok(())
    }

    /// Values that have left the window since it was made (wrapping at 2^32).
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::clock::ManualClock;
    /// use tailguard::sketch::presets;
    /// use tailguard::window::{Window, WindowConfig};
    ///
    /// let clock = ManualClock::new();
    /// let config = WindowConfig::new().with_interval(Duration::from_secs(10));
    /// let window = Window::with_layout(&clock, presets::INT_LATENCY_LAYOUT, config).unwrap();
    /// for ms in 1..=5 {
    ///     window.record_duration(Duration::from_millis(ms));
    /// }
    /// clock.advance(Duration::from_secs(10)); // still in the window
    /// assert_eq!((window.count(), window.expired()), (5, 0));
    /// clock.advance(Duration::from_secs(10)); // two intervals after them: gone
    /// assert_eq!((window.count(), window.expired()), (0, 5));
    /// ```
    pub fn expired(&self) -> u32 {
        self.expired.load(Ordering::Relaxed)
    }

    /// Records dropped since the window was made because their bin was full (2^31
    /// values in one bin of one interval's slot), wrapping at 2^32: with
    /// [`count`](Self::count) and [`expired`](Self::expired), every record is in exactly
    /// one of them at any quiet moment. Kept across rotations (a cleared slot hands its
    /// count over, as its values go to `expired`); a slot's own count stops at 2^31 in one
    /// interval, as [`AtomicSketch::saturated`] does. A sum over the slots, read where no
    /// rotation overlapped it (retried a few times, then read as it is).
    ///
    /// ```
    /// use tailguard::clock::ManualClock;
    /// use tailguard::sketch::presets;
    /// use tailguard::window::{Window, WindowConfig};
    ///
    /// let clock = ManualClock::new();
    /// let window = Window::with_layout(&clock, presets::INT_LATENCY_LAYOUT, WindowConfig::new()).unwrap();
    /// window.record_u64(2_000_000);
    /// assert_eq!(window.saturated(), 0); // a bin holds 2^31 values before it refuses one
    /// assert_eq!(window.count() + u64::from(window.expired()) + u64::from(window.saturated()), 1);
    /// ```
    pub fn saturated(&self) -> u32 {
        self.generation.read_stable(SCAN_ATTEMPTS, || {
            self.slots
                .iter()
                .fold(self.saturated.load(Ordering::Relaxed), |sum, slot| {
                    sum.wrapping_add(slot.saturated() as u32)
                })
        })
    }

    /// Rotations so far (wrapping at 2^32). A jump over many intervals is one rotation.
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::clock::ManualClock;
    /// use tailguard::sketch::presets;
    /// use tailguard::window::{Window, WindowConfig};
    ///
    /// let clock = ManualClock::new();
    /// let config = WindowConfig::new().with_interval(Duration::from_secs(10));
    /// let window = Window::with_layout(&clock, presets::INT_LATENCY_LAYOUT, config).unwrap();
    /// clock.advance(Duration::from_secs(10));
    /// assert_eq!(window.rotations(), 0); // rotation is lazy
    /// window.maintain();
    /// assert_eq!(window.rotations(), 1);
    /// clock.advance(Duration::from_secs(100)); // ten intervals at once
    /// window.maintain();
    /// assert_eq!(window.rotations(), 2);
    /// ```
    pub fn rotations(&self) -> u32 {
        self.rotations.load(Ordering::Relaxed)
    }

    /// The configuration.
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::clock::ManualClock;
    /// use tailguard::sketch::presets;
    /// use tailguard::window::{Window, WindowConfig};
    ///
    /// let clock = ManualClock::new();
    /// let config = WindowConfig::new().with_interval(Duration::from_secs(10)).with_quantile(0.99);
    /// let window = Window::with_layout(&clock, presets::INT_LATENCY_LAYOUT, config).unwrap();
    /// assert_eq!(window.config().interval(), Duration::from_secs(10));
    /// assert_eq!(window.config().quantile(), 0.99);
    /// ```
    pub fn config(&self) -> &WindowConfig {
        &self.config
    }

    /// The clock.
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::clock::{Clock, ManualClock};
    /// use tailguard::sketch::presets;
    /// use tailguard::window::{Window, WindowConfig};
    ///
    /// let window = Window::with_layout(ManualClock::new(), presets::INT_LATENCY_LAYOUT, WindowConfig::new()).unwrap();
    /// let start = window.clock().now();
    /// window.clock().advance(Duration::from_millis(7)); // the window owns its clock
    /// window.record_duration(window.clock().now().duration_since(start));
    /// let max = window.quantile(1.0).unwrap().unwrap();
    /// assert!(max <= 7e6 && max >= 7e6 * (1.0 - 1e-6));
    /// ```
    pub fn clock(&self) -> &C {
        &self.clock
    }

    /// The guaranteed relative accuracy (alpha) of the window's quantiles, as
    /// [`AtomicSketch::relative_accuracy`](crate::sketch::AtomicSketch::relative_accuracy)
    /// reports it (the mapping's, a few ulps up).
    ///
    /// ```
    /// use tailguard::clock::ManualClock;
    /// use tailguard::sketch::presets;
    /// use tailguard::window::{Window, WindowConfig};
    ///
    /// let clock = ManualClock::new();
    /// let window = Window::with_layout(&clock, presets::LOG_LATENCY_LAYOUT, WindowConfig::new()).unwrap();
    /// let alpha = window.relative_accuracy();
    /// assert!(alpha >= 0.01 && alpha - 0.01 < 1e-12); // 1 %, a few ulps up
    /// window.record_u64(3_333_333);
    /// let p50 = window.quantile(0.5).unwrap().unwrap();
    /// assert!((p50 - 3_333_333.0).abs() <= alpha * 3_333_333.0);
    /// ```
    pub fn relative_accuracy(&self) -> f64 {
        self.slot(0).relative_accuracy()
    }
}

impl<C, M: IndexMapping, const N: usize, const SLOTS: usize> fmt::Debug for Window<C, M, N, SLOTS> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Window")
            .field("interval", &self.config.interval)
            .field("slots", &SLOTS)
            .field("bins", &N)
            .field("epoch", &self.epoch)
            .field("cached_bin", &self.cached_bin.load(Ordering::Relaxed))
            .field(
                "cached_bound",
                &decode_bound(self.cached_bounds[0].load(Ordering::Relaxed)),
            )
            .field("cached_count", &self.cached_count.load(Ordering::Relaxed))
            .field("expired", &self.expired.load(Ordering::Relaxed))
            .field("saturated", &self.saturated.load(Ordering::Relaxed))
            .finish()
    }
}

#[cfg(all(test, not(loom)))]
mod tests;
