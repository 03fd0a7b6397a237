//! [`Window`]: a rotating window of atomic sketches, so quantiles follow the live
//! distribution and forget old slowdowns.
//!
//! Time is cut into intervals (30 s by default) by the window's [`Clock`]. The window has
//! `SLOTS` atomic sketches: the current interval's, `SLOTS - 2` earlier ones, and a spare.
//! Quantiles see the current, partial interval plus the `SLOTS - 2` before it: with the
//! default `SLOTS = 3`, the last one to two intervals (30 to 60 s).
//!
//! # Rotation
//!
//! Rotation is lazy: the first record or query that finds the clock in a new interval
//! rotates, on its own thread (no timer, no task). Only one caller rotates at a time (a
//! try-lock: the others do not wait, they keep recording into the interval that is
//! published). Rotating clears, by swapping each bin with zero, the slot whose interval
//! just left the window (it becomes the spare, and the next interval's slot was cleared one
//! rotation earlier), then publishes the new interval.
//!
//! So a record racing a rotation lands in the interval it read or in the new one, never in
//! a slot being cleared. Records are never lost: every record is in some slot or, if its
//! interval left the window, counted by [`expired`](Window::expired), so at any quiet
//! moment `count() + expired()` is exactly the number of records (modulo 2^32 for
//! `expired`). Only a recorder delayed by a whole interval between reading the clock and
//! writing (a thread descheduled for 30 s) can land in a newer interval than it read.
//!
//! A clock that jumps forward by `SLOTS - 1` intervals or more empties the window on the
//! next record or query; a clock that goes backwards leaves it as it is (records go on
//! into the current interval) until time passes the current interval again.
//!
//! # The cached threshold
//!
//! Hedging asks one question per request: the current p90 (say). Computing a quantile
//! scans every bin, far too slow per request; [`threshold`](Window::threshold) instead
//! returns a value cached in one atomic (one load). It is refreshed by the recording path,
//! with no shared counter on the hot path (each record knows only its own bin's count):
//!
//! * at every rotation;
//! * on every record while the window holds fewer than `warmup_records` values;
//! * when a record brings its bin's count to a power of two from 16 up: while the window
//!   fills (the first seconds, or after a shift) that is often, so the threshold tracks a
//!   growing sample instead of staying with the first few values; once bins are large it
//!   is rare;
//! * when a record brings its bin's count to a multiple of `refresh_records` (a bin that
//!   holds a share `s` of the values reaches it every `refresh_records / s` records);
//! * when `refresh_interval` has passed since the last refresh.
//!
//! A refresh scans the bins once; concurrent refreshes are skipped, not queued.
//! [`refresh`](Window::refresh) forces one.
//!
//! # Interrupt safety
//!
//! Every field touched by recording, rotating and refreshing is a native 32-bit atomic.
//! A record that rotates or refreshes costs `O(SLOTS * N)`; from an interrupt handler, set
//! `refresh_records` and `refresh_interval` to zero and call [`refresh`](Window::refresh)
//! from the main loop if that matters.

use core::fmt;
use core::time::Duration;

use crate::clock::{duration_to_nanos, Clock, Instant};
use crate::sketch::atomic::quantile_and_count_of;
use crate::sketch::{
    AtomicSketch, ConfigError, DDSketch, IndexMapping, InvalidQuantile, RecordError,
};
use crate::sync::{AtomicBool, AtomicU32, Ordering};

/// A time unit of 2^20 ns (about 1 ms), for the refresh clock kept in 32 bits.
const REFRESH_UNIT_SHIFT: u32 = 20;

/// The cached threshold when the window is empty (a NaN pattern no quantile produces).
const NO_THRESHOLD: u32 = u32::MAX;

/// How a [`Window`] rotates and refreshes its cached threshold.
///
/// ```
/// use core::time::Duration;
/// use tailguard::window::WindowConfig;
///
/// const CONFIG: WindowConfig = WindowConfig::new()
///     .interval(Duration::from_secs(10))
///     .threshold_quantile(0.95);
/// assert_eq!(CONFIG.get_interval(), Duration::from_secs(10));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct WindowConfig {
    interval: Duration,
    threshold_quantile: f64,
    refresh_records: u32,
    refresh_interval: Duration,
    warmup_records: u32,
}

impl WindowConfig {
    /// The defaults: 30 s intervals, threshold at p90, refreshed when a bin's count reaches
    /// a power of two or a multiple of 1,024, every second, and on every record until the
    /// window holds 32 values.
    pub const fn new() -> Self {
        WindowConfig {
            interval: Duration::from_secs(30),
            threshold_quantile: 0.9,
            refresh_records: 1024,
            refresh_interval: Duration::from_secs(1),
            warmup_records: 32,
        }
    }

    /// The length of one interval (must not be zero).
    pub const fn interval(mut self, interval: Duration) -> Self {
        self.interval = interval;
        self
    }

    /// The quantile [`Window::threshold`] caches, in (0, 1).
    pub const fn threshold_quantile(mut self, q: f64) -> Self {
        self.threshold_quantile = q;
        self
    }

    /// Refresh the threshold when a record brings its bin's count to a power of two or to a
    /// multiple of `records` (rounded up to a power of two); 0 disables both.
    pub const fn refresh_records(mut self, records: u32) -> Self {
        self.refresh_records = records;
        self
    }

    /// Refresh the threshold when this much time has passed since the last refresh
    /// (resolution about 1 ms); zero disables it.
    pub const fn refresh_interval(mut self, interval: Duration) -> Self {
        self.refresh_interval = interval;
        self
    }

    /// Refresh on every record while the window holds fewer values than this.
    pub const fn warmup_records(mut self, records: u32) -> Self {
        self.warmup_records = records;
        self
    }

    /// The interval length.
    pub const fn get_interval(&self) -> Duration {
        self.interval
    }

    /// The cached quantile.
    pub const fn get_threshold_quantile(&self) -> f64 {
        self.threshold_quantile
    }

    /// The warm-up length in records.
    pub const fn get_warmup_records(&self) -> u32 {
        self.warmup_records
    }
}

impl Default for WindowConfig {
    fn default() -> Self {
        Self::new()
    }
}

/// Why a window configuration was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum WindowError {
    /// The interval is zero.
    InvalidInterval,
    /// The threshold quantile is not in (0, 1).
    InvalidQuantile,
    /// The sketch configuration was refused.
    Sketch(ConfigError),
}

impl fmt::Display for WindowError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WindowError::InvalidInterval => f.write_str("window interval must not be zero"),
            WindowError::InvalidQuantile => f.write_str("threshold quantile must be in (0, 1)"),
            WindowError::Sketch(e) => write!(f, "sketch configuration: {e}"),
        }
    }
}

impl core::error::Error for WindowError {}

impl From<ConfigError> for WindowError {
    fn from(e: ConfigError) -> Self {
        WindowError::Sketch(e)
    }
}

/// A rotating window of `SLOTS` atomic sketches of `N` bins, driven by clock `C`.
///
/// See the [module docs](self) for rotation, the cached threshold and their guarantees.
///
/// ```
/// use core::time::Duration;
/// use tailguard::clock::ManualClock;
/// use tailguard::sketch::presets;
/// use tailguard::window::{Window, WindowConfig};
///
/// let clock = ManualClock::new();
/// let config = WindowConfig::new().interval(Duration::from_secs(30));
/// let window: Window<_, _, 931> = Window::like(&clock, &presets::cubic_latency(), config).unwrap();
///
/// for ms in 1..=100 {
///     window.record_duration(Duration::from_millis(ms));
/// }
/// // The cached p90 is refreshed on every record during warm-up (32 records), then
/// // every 1,024 records or every second: force a refresh to see all 100 now.
/// window.refresh();
/// let p90 = window.threshold().unwrap(); // one atomic load, in nanoseconds
/// assert!((p90 - 90e6).abs() <= 0.01 * 90e6);
/// assert!((window.quantile(0.99).unwrap().unwrap() - 99e6).abs() <= 0.01 * 99e6);
///
/// clock.advance(Duration::from_secs(61)); // two intervals later: all forgotten
/// assert_eq!(window.count(), 0);
/// assert_eq!(window.expired(), 100);
/// ```
pub struct Window<C, M, const N: usize, const SLOTS: usize = 3> {
    clock: C,
    origin_ns: u64,
    interval_ns: u64,
    config: WindowConfig,
    /// A record whose bin count becomes a multiple of `refresh_mask + 1` refreshes.
    refresh_mask: u32,
    /// `refresh_interval` in refresh units (0: never by time).
    refresh_units: u32,
    /// The published interval number (wrapping).
    epoch: AtomicU32,
    rotating: AtomicBool,
    refreshing: AtomicBool,
    /// Refresh units since the origin at the last refresh (wrapping).
    refreshed_at: AtomicU32,
    /// `f32` bits of the cached quantile, or [`NO_THRESHOLD`].
    threshold: AtomicU32,
    /// Values in the window at the last refresh (saturating).
    cached_count: AtomicU32,
    expired: AtomicU32,
    rotations: AtomicU32,
    slots: [AtomicSketch<M, N>; SLOTS],
}

impl<C: Clock, M: IndexMapping, const N: usize, const SLOTS: usize> Window<C, M, N, SLOTS> {
    /// An empty window whose sketches use `mapping` with the lowest bin holding
    /// `min_value`; its first interval starts now.
    pub fn new(
        clock: C,
        mapping: M,
        min_value: f64,
        config: WindowConfig,
    ) -> Result<Self, WindowError> {
        let min_index = crate::sketch::min_index_for(&mapping, min_value, N)?;
        Self::with_min_index(clock, mapping, min_index, config)
    }

    /// An empty window whose sketches have the configuration of `sketch` (a preset, say).
    pub fn like(
        clock: C,
        sketch: &DDSketch<M, N>,
        config: WindowConfig,
    ) -> Result<Self, WindowError> {
        Self::with_min_index(clock, *sketch.mapping(), sketch.min_index(), config)
    }

    fn with_min_index(
        clock: C,
        mapping: M,
        min_index: i32,
        config: WindowConfig,
    ) -> Result<Self, WindowError> {
        const { assert!(SLOTS >= 2 && SLOTS < 1 << 16, "SLOTS must be at least 2") };
        let interval_ns = duration_to_nanos(config.interval);
        if interval_ns == 0 {
            return Err(WindowError::InvalidInterval);
        }
        let q = config.threshold_quantile;
        if !(q > 0.0 && q < 1.0) {
            return Err(WindowError::InvalidQuantile);
        }
        let refresh_mask = match config.refresh_records {
            0 => u32::MAX, // no refresh by count
            k => k
                .checked_next_power_of_two()
                .unwrap_or(1 << 31)
                .wrapping_sub(1),
        };
        let refresh_ns = duration_to_nanos(config.refresh_interval);
        let refresh_units = match refresh_ns >> REFRESH_UNIT_SHIFT {
            0 if refresh_ns > 0 => 1,
            units => u32::try_from(units).unwrap_or(u32::MAX),
        };
        Ok(Window {
            origin_ns: clock.now().as_nanos(),
            clock,
            interval_ns,
            config,
            refresh_mask,
            refresh_units,
            epoch: AtomicU32::new(0),
            rotating: AtomicBool::new(false),
            refreshing: AtomicBool::new(false),
            refreshed_at: AtomicU32::new(0),
            threshold: AtomicU32::new(NO_THRESHOLD),
            cached_count: AtomicU32::new(0),
            expired: AtomicU32::new(0),
            rotations: AtomicU32::new(0),
            slots: core::array::from_fn(|_| AtomicSketch::with_min_index(mapping, min_index)),
        })
    }

    /// Records one value at the clock's current time. NaN and negative values are errors
    /// and change nothing.
    pub fn record(&self, value: f64) -> Result<(), RecordError> {
        let now = self.clock.now();
        let previous = self.slot_at(now).record_returning_bin_count(value)?;
        self.after_record(now, previous);
        Ok(())
    }

    /// Records an integer value (nanoseconds, say) at the clock's current time.
    pub fn record_u64(&self, value: u64) {
        self.record_u64_at(self.clock.now(), value);
    }

    /// Records a duration, as whole nanoseconds, at the clock's current time.
    pub fn record_duration(&self, d: Duration) {
        self.record_u64_at(self.clock.now(), duration_to_nanos(d));
    }

    /// Records a duration as of `now`, for callers that have just read the clock (to
    /// compute that duration, say): saves a second clock read.
    pub fn record_duration_at(&self, now: Instant, d: Duration) {
        self.record_u64_at(now, duration_to_nanos(d));
    }

    #[inline]
    fn record_u64_at(&self, now: Instant, value: u64) {
        let previous = self.slot_at(now).record_u64_returning_bin_count(value);
        self.after_record(now, previous);
    }

    /// The slot of the interval to record into at `now`, rotating first if `now` is in a
    /// later interval than the published one.
    #[inline]
    fn slot_at(&self, now: Instant) -> &AtomicSketch<M, N> {
        let target = self.epoch_of(now);
        let current = self.epoch.load(Ordering::Acquire);
        let epoch = if is_ahead(target, current) {
            self.rotate_to(target, now)
        } else {
            current
        };
        self.slot(epoch)
    }

    // SLOTS >= 2 (asserted at construction) and `epoch % SLOTS < SLOTS`: cannot panic.
    #[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
    fn slot(&self, epoch: u32) -> &AtomicSketch<M, N> {
        &self.slots[epoch as usize % SLOTS]
    }

    /// The number of the interval containing `now` (wrapping at 2^32 intervals).
    #[inline]
    fn epoch_of(&self, now: Instant) -> u32 {
        let elapsed = now.as_nanos().saturating_sub(self.origin_ns);
        // interval_ns > 0 (checked at construction).
        (elapsed.checked_div(self.interval_ns).unwrap_or(0)) as u32
    }

    /// Refresh units since the origin (wrapping).
    fn refresh_time(&self, now: Instant) -> u32 {
        (now.as_nanos().saturating_sub(self.origin_ns) >> REFRESH_UNIT_SHIFT) as u32
    }

    #[inline]
    fn after_record(&self, now: Instant, previous: Option<u32>) {
        // The bin's new count is a power of two from 16 up (the window has grown by about
        // half since this bin last triggered: frequent while it fills, rare once it is
        // full) or a multiple of `refresh_records`.
        let by_count = self.refresh_mask != u32::MAX
            && previous.is_some_and(|p| {
                let n = p.wrapping_add(1);
                (n & p == 0 && n >= 16) || n & self.refresh_mask == 0
            });
        let by_time = self.refresh_units != 0
            && self
                .refresh_time(now)
                .wrapping_sub(self.refreshed_at.load(Ordering::Relaxed))
                >= self.refresh_units;
        let warming = self.cached_count.load(Ordering::Relaxed) < self.config.warmup_records;
        if by_count || by_time || warming {
            self.refresh_at(now);
        }
    }

    /// Rotates to interval `target` unless another caller is rotating; returns the
    /// interval to record into.
    #[cold]
    fn rotate_to(&self, target: u32, now: Instant) -> u32 {
        if self
            .rotating
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            // Someone else is rotating: record into what is published.
            return self.epoch.load(Ordering::Acquire);
        }
        let current = self.epoch.load(Ordering::Acquire);
        let rotated = is_ahead(target, current);
        if rotated {
            // Intervals current+2 ..= target+1 (mod SLOTS, interval e - (SLOTS - 1) is
            // e + 1) are those leaving the window; at most SLOTS distinct slots.
            let leaving = target.wrapping_sub(current).min(SLOTS as u32);
            let mut removed = 0u32;
            for k in 1..=leaving {
                let epoch = current.wrapping_add(1).wrapping_add(k);
                removed = removed.wrapping_add(self.slot(epoch).clear() as u32);
            }
            self.expired.fetch_add(removed, Ordering::Relaxed);
            self.epoch.store(target, Ordering::Release);
            self.rotations.fetch_add(1, Ordering::Relaxed);
        }
        self.rotating.store(false, Ordering::Release);
        if rotated {
            self.refresh_at(now);
        }
        self.epoch.load(Ordering::Acquire)
    }

    /// Brings the window up to the clock's current interval (records and queries do this
    /// themselves).
    pub fn rotate_if_due(&self) {
        let _ = self.slot_at(self.clock.now());
    }

    /// Recomputes the cached threshold now.
    pub fn refresh(&self) {
        self.refresh_at(self.clock.now());
    }

    fn refresh_at(&self, now: Instant) {
        if self
            .refreshing
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            return; // a refresh is under way
        }
        let (value, count) = quantile_and_count_of(&self.slots, self.config.threshold_quantile);
        let bits = match value {
            Some(v) => (v as f32).to_bits(),
            None => NO_THRESHOLD,
        };
        self.threshold.store(bits, Ordering::Relaxed);
        self.cached_count
            .store(u32::try_from(count).unwrap_or(u32::MAX), Ordering::Relaxed);
        self.refreshed_at
            .store(self.refresh_time(now), Ordering::Relaxed);
        self.refreshing.store(false, Ordering::Release);
    }

    /// The cached value of the configured threshold quantile (p90 by default), or `None`
    /// while the window is empty. One atomic load; see the [module docs](self) for when it
    /// is refreshed. Stored as an `f32`: relative precision 6e-8.
    #[inline]
    pub fn threshold(&self) -> Option<f64> {
        let bits = self.threshold.load(Ordering::Relaxed);
        (bits != NO_THRESHOLD).then(|| f64::from(f32::from_bits(bits)))
    }

    /// How many values the window held at the last threshold refresh (saturating at
    /// `u32::MAX`). One atomic load: the hedger's cold-start test.
    #[inline]
    pub fn cached_count(&self) -> u32 {
        self.cached_count.load(Ordering::Relaxed)
    }

    /// The value at quantile `q` over the window, computed now (scans every bin), with
    /// [`DDSketch::quantile`]'s convention; `None` if the window is empty.
    pub fn quantile(&self, q: f64) -> Result<Option<f64>, InvalidQuantile> {
        self.rotate_if_due();
        if !(0.0..=1.0).contains(&q) {
            return Err(InvalidQuantile);
        }
        Ok(quantile_and_count_of(&self.slots, q).0)
    }

    /// How many values the window holds now (scans every bin).
    pub fn count(&self) -> u64 {
        self.rotate_if_due();
        self.slots.iter().map(AtomicSketch::count).sum()
    }

    /// All values in the window as one plain [`DDSketch`].
    pub fn snapshot(&self) -> DDSketch<M, N> {
        self.rotate_if_due();
        let mut sketch = self.slot(0).snapshot();
        for slot in self.slots.iter().skip(1) {
            // Same configuration by construction: cannot fail.
            let _ = slot.merge_into(&mut sketch);
        }
        sketch
    }

    /// Values that have left the window since it was made (wrapping at 2^32).
    pub fn expired(&self) -> u32 {
        self.expired.load(Ordering::Relaxed)
    }

    /// Rotations so far (wrapping at 2^32). A jump over many intervals is one rotation.
    pub fn rotations(&self) -> u32 {
        self.rotations.load(Ordering::Relaxed)
    }

    /// The configuration.
    pub fn config(&self) -> &WindowConfig {
        &self.config
    }

    /// The clock.
    pub fn clock(&self) -> &C {
        &self.clock
    }

    /// The guaranteed relative accuracy (alpha) of the window's quantiles.
    pub fn relative_accuracy(&self) -> f64 {
        self.slot(0).relative_accuracy()
    }
}

/// Whether interval `target` is after `current`, in wrapping arithmetic (a clock that went
/// backwards gives a `target` behind).
#[inline]
fn is_ahead(target: u32, current: u32) -> bool {
    let ahead = target.wrapping_sub(current);
    ahead != 0 && ahead <= i32::MAX as u32
}

impl<C, M: IndexMapping, const N: usize, const SLOTS: usize> fmt::Debug for Window<C, M, N, SLOTS> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let bits = self.threshold.load(Ordering::Relaxed);
        f.debug_struct("Window")
            .field("interval", &self.config.interval)
            .field("slots", &SLOTS)
            .field("bins", &N)
            .field("epoch", &self.epoch.load(Ordering::Relaxed))
            .field(
                "threshold",
                &(bits != NO_THRESHOLD).then(|| f32::from_bits(bits)),
            )
            .field("cached_count", &self.cached_count.load(Ordering::Relaxed))
            .field("expired", &self.expired.load(Ordering::Relaxed))
            .finish()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::clock::ManualClock;
    use crate::sketch::{presets, CubicMapping, LogMapping};

    type TestWindow<'a> = Window<&'a ManualClock, CubicMapping, 931>;

    fn window(clock: &ManualClock, config: WindowConfig) -> TestWindow<'_> {
        Window::like(clock, &presets::cubic_latency(), config).unwrap()
    }

    const SEC: Duration = Duration::from_secs(1);

    #[test]
    fn quantiles_see_the_current_and_previous_interval() {
        let clock = ManualClock::new();
        let w = window(&clock, WindowConfig::new().interval(10 * SEC));
        w.record_duration(Duration::from_millis(1)); // interval 0
        clock.advance(10 * SEC);
        w.record_duration(Duration::from_millis(2)); // interval 1
        assert_eq!(w.count(), 2);
        assert_eq!(w.quantile(0.0).unwrap(), Some(1e6));
        clock.advance(10 * SEC); // interval 2: interval 0 leaves
        assert_eq!(w.count(), 1);
        assert_eq!(w.expired(), 1);
        assert_eq!(w.quantile(0.0).unwrap(), Some(2e6));
        w.record_duration(Duration::from_millis(3));
        clock.advance(9 * SEC); // still interval 2
        assert_eq!(w.count(), 2);
        clock.advance(SEC); // interval 3: interval 1 leaves
        assert_eq!(w.count(), 1);
        assert_eq!(w.quantile(1.0).unwrap(), Some(3e6));
        assert_eq!(w.expired(), 2);
        assert_eq!(w.rotations(), 3);
    }

    #[test]
    fn a_long_jump_empties_the_window_and_the_threshold() {
        let clock = ManualClock::new();
        let w = window(&clock, WindowConfig::new());
        for ms in 1..=50 {
            w.record_duration(Duration::from_millis(ms));
        }
        assert!(w.threshold().is_some());
        clock.advance(Duration::from_secs(3600 * 24 * 365));
        w.rotate_if_due();
        assert_eq!(w.count(), 0);
        assert_eq!(w.threshold(), None);
        assert_eq!(w.cached_count(), 0);
        assert_eq!(w.expired(), 50);
    }

    #[test]
    fn a_clock_going_backwards_changes_nothing() {
        let clock = ManualClock::starting_at(Instant::from_nanos(1 << 40));
        let w = window(&clock, WindowConfig::new());
        clock.advance(45 * SEC);
        w.record_duration(Duration::from_millis(5));
        clock.set(Instant::ZERO);
        w.record_duration(Duration::from_millis(6));
        assert_eq!(w.count(), 2);
        assert_eq!(w.expired(), 0);
        clock.set(Instant::from_nanos(1 << 40));
        clock.advance(65 * SEC); // interval 2: interval 0 (empty) leaves
        assert_eq!(w.count(), 2);
        clock.advance(30 * SEC);
        assert_eq!(w.count(), 0);
        assert_eq!(w.expired(), 2);
    }

    #[test]
    fn threshold_is_cached_and_refreshed_by_count_time_and_rotation() {
        let clock = ManualClock::new();
        let config = WindowConfig::new()
            .refresh_records(0)
            .refresh_interval(Duration::ZERO)
            .warmup_records(10);
        let w = window(&clock, config);
        for _ in 0..10 {
            w.record_duration(Duration::from_millis(5));
        }
        let warm = w.threshold().unwrap();
        assert!((warm - 5e6).abs() <= 0.01 * 5e6);
        for _ in 0..1000 {
            w.record_duration(Duration::from_millis(50));
        }
        assert_eq!(
            w.threshold(),
            Some(warm),
            "no refresh configured: still cached"
        );
        assert_eq!(w.cached_count(), 10);
        w.refresh();
        assert!((w.threshold().unwrap() - 50e6).abs() <= 0.01 * 50e6);

        let by_count = window(&clock, config.refresh_records(100));
        for _ in 0..200 {
            by_count.record_duration(Duration::from_millis(7));
        }
        assert_eq!(
            by_count.cached_count(),
            128,
            "refreshed when the bin reached 128"
        );

        let by_time = window(&clock, config.refresh_interval(SEC));
        for _ in 0..20 {
            by_time.record_duration(Duration::from_millis(7));
        }
        assert_eq!(by_time.cached_count(), 10);
        clock.advance(SEC);
        by_time.record_duration(Duration::from_millis(7));
        assert_eq!(by_time.cached_count(), 21);
        clock.advance(30 * SEC);
        by_time.rotate_if_due();
        assert_eq!(by_time.cached_count(), 21, "refreshed at rotation");
    }

    #[test]
    fn bad_configurations_are_errors() {
        let clock = ManualClock::new();
        let bad = |config| {
            Window::<_, LogMapping, 64>::new(
                &clock,
                LogMapping::with_relative_accuracy(0.01).unwrap(),
                1.0,
                config,
            )
            .err()
        };
        assert_eq!(
            bad(WindowConfig::new().interval(Duration::ZERO)),
            Some(WindowError::InvalidInterval)
        );
        for q in [0.0, 1.0, f64::NAN, -1.0] {
            assert_eq!(
                bad(WindowConfig::new().threshold_quantile(q)),
                Some(WindowError::InvalidQuantile)
            );
        }
        let w = Window::<_, LogMapping, 64>::new(
            &clock,
            LogMapping::with_relative_accuracy(0.01).unwrap(),
            -1.0,
            WindowConfig::new(),
        );
        assert_eq!(
            w.err(),
            Some(WindowError::Sketch(ConfigError::InvalidMinValue))
        );
        let w = window(&clock, WindowConfig::new());
        assert_eq!(w.record(f64::NAN), Err(RecordError::NaN));
        assert_eq!(w.quantile(1.5), Err(InvalidQuantile));
        assert_eq!(w.count(), 0);
    }

    #[test]
    fn snapshot_merges_every_slot() {
        let clock = ManualClock::new();
        let w = window(&clock, WindowConfig::new());
        w.record_duration(Duration::from_millis(1));
        clock.advance(30 * SEC);
        w.record_duration(Duration::from_millis(2));
        let s = w.snapshot();
        assert_eq!(s.count(), 2);
        assert_eq!(s.min(), Some(1e6));
        assert_eq!(s.max(), Some(2e6));
    }
}
