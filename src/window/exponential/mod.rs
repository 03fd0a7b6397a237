//! [`ExponentialWindow`]: a window of OpenTelemetry exponential buckets whose scale follows
//! the data, in memory fixed at compile time, recorded lock-free from any thread or
//! interrupt handler.

mod cell;
mod record;
mod slot;
mod snapshot;
mod threshold;

pub use cell::WindowCounter;

use core::fmt;
use core::time::Duration;

use slot::{Config, Slot, State};
use threshold::Threshold;

use super::interval;
use super::seqlock::SeqLock;
use super::{Parts, WindowConfig, WindowError, WindowPreset};
use crate::clock::coarse::{Age, CoarseClock, CoarseInstant, OriginStamp};
use crate::clock::{Clock, Instant};
use crate::preset::Defaults;
use crate::sketch::exponential::downscale::scale_change;
use crate::sketch::exponential::index::{self, FINEST_SCALE, MAX_DOWNSHIFT};
use crate::sketch::{key_of_f64, key_of_u64, value_of_key, ExponentialSketch, RecordError};
use crate::sync::{const_unless_loom, AtomicBool, AtomicU32, Ordering::*};

/// How many times a record looks for its slot again before it counts itself as expired
/// (each time, a clear changed the slot under it, or a rescale was under way).
const ATTEMPTS: u32 = 8;

/// The bias that makes the order of `u32`s that of the `i32` indices they hold.
const BIAS: u32 = 1 << 31;

/// Buckets of one power of two at the finest scale.
const OCTAVE: i32 = 1 << FINEST_SCALE;

/// The span a slot with no history gives its first value: 15 octaves (at the finest scale),
/// centred on it (a factor of 180 either way).
const FIRST_SPAN: i32 = 15 * OCTAVE;

/// A rotating window of `SLOTS` slots of `B` OpenTelemetry exponential buckets, counted in
/// `K` (`u16` or `u32`), each slot at the finest scale its interval's values allow: the
/// fixed-memory, no-range-to-guess counterpart of [`Window`](super::Window).
///
/// Time is cut into intervals by the clock, as in a [`Window`](super::Window): queries see
/// the current interval and the `SLOTS - 2` before it, and a slot is recycled when its
/// interval leaves. Each slot has a scale and an offset of its own:
///
/// * a recycled slot takes the finest scale at which its buckets hold the range the window
///   saw (its lowest and highest value, widened by a quarter of that span and an octave
///   each side); a slot with no history takes its first value's, centred in 16 octaves;
/// * a value outside the current slot's buckets **rescales** it at once: the spare slot
///   (the one of no interval in the window) takes a scale coarse enough for the current
///   slot's whole range and the value, becomes the current interval's slot, and the counts
///   move into it, downscaled exactly (OpenTelemetry's buckets nest: halving the scale
///   merges pairs);
/// * queries merge the slots, of different scales, by the same exact downscaling, into an
///   [`ExponentialSketch`] ([`snapshot`](Self::snapshot)).
///
/// # Records never wait and are never misplaced
///
/// A record reads its slot's state (scale, offset, generation) in one load and adds one
/// to a counter whose top bit tags the generation it was last cleared for, by a
/// compare-and-swap that succeeds only while the tag is the generation the record read:
/// so its count is made before any clear of that counter (and moved or expired with the
/// rest), or not made at all, and the record looks for its slot again. No add is ever
/// undone and no record waits for a rotation or a rescale. At every quiet moment
/// `count() + expired() + saturated()` is the number of values recorded (modulo 2^32),
/// each in the bucket of its value at the scale of its slot. The exceptions are counted:
///
/// * [`clamped`](Self::clamped): a value outside its slot's buckets while another caller
///   is rescaling, or in a window whose records do not rescale
///   ([`with_rotate_on_record(false)`](Self::with_rotate_on_record)), goes into the
///   nearest bucket (a value of an earlier interval's slot goes into the current one);
/// * [`saturated`](Self::saturated): a bucket holds [`WindowCounter::LIMIT`] values at
///   most, in one interval;
/// * [`raced`](Self::raced): a record that was preempted while its slot was cleared twice
///   (two rotations or rescales) cannot tell whether it added to a counter of its own
///   scale: it is counted once, in some bucket, and here (an upper bound: most of these are
///   in the right bucket). A record preempted across 32 clears of its slot or more is not
///   told apart. So is a record that found its slot cleared, or a rescale under way, on
///   each of its 8 looks: it is counted as expired, and here.
///
/// # Cost
///
/// A record is a clock reading, the exact integer index (no float, no division: suits a
/// core without an FPU), two loads of the slot's state and one compare-and-swap. A
/// rescale or a rotation clears `B` counters per slot, done by the record or maintenance
/// that finds it due ([`maintain`](Self::maintain)); in an interrupt handler, use
/// [`with_rotate_on_record(false)`](Self::with_rotate_on_record).
///
/// # Preset
///
/// `P`, a [`WindowPreset`] ([`Defaults`] unless given), is the configuration the window
/// stores as zero bytes: built with it from [`Instant::ZERO`], the window is all zeros, so
/// a `static` of it is `.bss` (the example is [`WindowPreset`]'s). Any other configuration
/// works the same, each setting read a XOR away.
///
/// ```
/// use std::time::Duration;
/// use tailguard::clock::ManualClock;
/// use tailguard::window::ExponentialWindow;
///
/// let clock = ManualClock::new();
/// let window = ExponentialWindow::<_, u16, 64>::new(&clock, Duration::from_secs(10)).unwrap();
/// for v in 1..=1000u64 {
///     window.record_u64(v * 1_000); // 1 us to 1 ms
/// }
/// // The first value's 15 octaves reach 181 us: the slot rescaled once, and does again
/// // for 5 s.
/// assert_eq!(window.rescales(), 1);
/// window.record_u64(5_000_000_000);
/// assert_eq!((window.count(), window.rescales()), (1001, 2));
/// let p50 = window.quantile(0.5).unwrap().unwrap();
/// assert!((p50 / 500e3 - 1.0).abs() < window.snapshot().relative_accuracy());
/// ```
pub struct ExponentialWindow<
    C,
    K: WindowCounter,
    const B: usize,
    const SLOTS: usize = 3,
    P = Defaults,
> {
    clock: C,
    /// Ticks are intervals since the window's origin; XOR `P`'s
    /// ([`ZERO_INTERVALS`](Self::ZERO_INTERVALS)): read it with
    /// [`intervals`](Self::intervals).
    intervals: CoarseClock,
    /// The published interval.
    epoch: OriginStamp,
    /// The logical slot (interval number modulo `SLOTS`) of the published interval.
    current: AtomicU32,
    /// Logical slot `l`'s slot is `l ^ (map >> 4l & 15)`: a rescale swaps the current
    /// interval's with the spare's (all zero: each logical slot its own).
    map: AtomicU32,
    /// Odd while a rotation or rescale clears slots: queries retry a scan it overlapped.
    changes: SeqLock,
    /// Held by the one caller rotating or rescaling.
    rotating: AtomicBool,
    /// Whether records leave rotations and rescales to maintenance (false, the default,
    /// so that a default window is zero bytes).
    maintenance_rotates: bool,
    /// A rescale records asked maintenance for: the finest indices of the values they
    /// clamped, biased (`i ^ i32::MIN` as `u32`) so that integer order is theirs, the
    /// lowest complemented (0 in both: none).
    wanted_low: AtomicU32,
    wanted_high: AtomicU32,
    expired: AtomicU32,
    rotations: AtomicU32,
    rescales: AtomicU32,
    clamped: AtomicU32,
    saturated: AtomicU32,
    raced: AtomicU32,
    /// The cached quantiles (none unless built [`with_config`](Self::with_config)).
    threshold: Threshold<P>,
    slots: [Slot<K, B>; SLOTS],
}

impl<C: Clock, K: WindowCounter, const B: usize, const SLOTS: usize, P: WindowPreset>
    ExponentialWindow<C, K, B, SLOTS, P>
{
    /// The interval clock stored as zero bytes: `P`'s from [`Instant::ZERO`] (any fixed
    /// clock if `P`'s interval is invalid: a key only has to be fixed).
    const ZERO_INTERVALS: CoarseClock = match intervals(Instant::ZERO, P::CONFIG.interval()) {
        Ok(intervals) => intervals,
        Err(_) => CoarseClock::with_unit_at_least_8(0, 8),
    };

    /// An empty window whose first interval starts now, which caches no quantile (see
    /// [`with_config`](Self::with_config)). Errors if `interval` is shorter than 8 ns.
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::clock::ManualClock;
    /// use tailguard::window::ExponentialWindow;
    ///
    /// let clock = ManualClock::new();
    /// let window = ExponentialWindow::<_, u16, 64>::new(&clock, Duration::from_secs(10)).unwrap();
    /// window.record_duration(Duration::from_millis(3));
    /// assert_eq!(window.count(), 1);
    /// assert_eq!(window.cached_upper_bound(), None); // no quantile cached
    /// clock.advance(Duration::from_secs(30));
    /// window.maintain(); // its intervals are over: forgotten
    /// assert_eq!((window.count(), window.expired()), (0, 1));
    /// assert!(ExponentialWindow::<_, u16, 64>::new(&clock, Duration::from_nanos(4)).is_err());
    /// ```
    pub fn new(clock: C, interval: Duration) -> Result<Self, WindowError> {
        let intervals = intervals(clock.now(), interval)?;
        Ok(Self::of(clock, intervals, Threshold::none()))
    }

    /// An empty window of `config` whose first interval starts now: its interval, whether
    /// records rotate, and the quantiles it caches for
    /// [`cached_upper_bound`](Self::cached_upper_bound), with their `min_count`,
    /// `warmup_records` and `refresh_records`. (`refresh_interval` does not apply: the
    /// cached quantiles are refreshed when records, rotations and rescales ask.) Errors as
    /// [`Window::with_layout`](super::Window::with_layout) does for `config`.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tailguard::clock::ManualClock;
    /// use tailguard::window::{ExponentialWindow, WindowConfig};
    ///
    /// let clock = ManualClock::new();
    /// let config = WindowConfig::new().with_interval(Duration::from_secs(5)).with_quantiles(&[0.9, 0.99]);
    /// let window = ExponentialWindow::<_, u16, 64>::with_config(&clock, config).unwrap();
    /// window.record_u64(1_000_000);
    /// window.maintain();
    /// assert!(window.cached_upper_bound_of(1).unwrap() >= 1_000_000);
    /// assert!(ExponentialWindow::<_, u16, 64>::with_config(&clock, config.with_quantile(1.0)).is_err());
    /// ```
    pub fn with_config(clock: C, config: WindowConfig) -> Result<Self, WindowError> {
        let origin = clock.now();
        Self::with_config_and_origin(clock, config, origin)
    }

    const_unless_loom! {
        /// [`with_config`](Self::with_config) with its first interval starting at
        /// `origin`: `const`, for a `static` window. On an error the clock is forgotten
        /// rather than dropped (a `const fn` cannot run its destructor).
        ///
        /// ```
        /// use core::time::Duration;
        /// use tailguard::clock::{Instant, ManualClock};
        /// use tailguard::window::{ExponentialWindow, WindowConfig};
        ///
        /// static CLOCK: ManualClock = ManualClock::new();
        /// const CONFIG: WindowConfig = WindowConfig::new().with_interval(Duration::from_secs(10));
        /// static WINDOW: ExponentialWindow<&ManualClock, u16, 64> =
        ///     match ExponentialWindow::with_config_and_origin(&CLOCK, CONFIG, Instant::ZERO) {
        ///         Ok(window) => window,
        ///         Err(_) => panic!("invalid window configuration"), // a compile error
        ///     };
        ///
        /// CLOCK.advance(Duration::from_secs(5));
        /// WINDOW.record_u64(2_000_000);
        /// WINDOW.maintain();
        /// assert!(WINDOW.cached_upper_bound().unwrap() >= 2_000_000);
        /// CLOCK.advance(Duration::from_secs(5)); // 10 s from the origin: the next interval
        /// WINDOW.maintain();
        /// assert_eq!((WINDOW.rotations(), WINDOW.count()), (1, 1));
        /// ```
        pub fn with_config_and_origin(clock: C, config: WindowConfig, origin: Instant) -> Result<Self, WindowError> {
            match Parts::new(config, origin) {
                Ok(parts) => Ok(Self::from_parts(clock, config, parts)),
                Err(e) => {
                    core::mem::forget(clock);
                    Err(e)
                }
            }
        }
    }

    const_unless_loom! {
        /// An empty window whose first interval starts at `origin`: `const`, so that a
        /// window with a constant clock (a unit struct reading a timer) is a `static`,
        /// built at compile time. Errors if `interval` is shorter than 8 ns.
        ///
        /// ```
        /// use core::time::Duration;
        /// use tailguard::clock::{Instant, ManualClock};
        /// use tailguard::window::ExponentialWindow;
        ///
        /// // The clock reads 25 s; intervals of 10 s are counted from zero.
        /// let clock = ManualClock::starting_at(Instant::from_nanos(25_000_000_000));
        /// let ten = Duration::from_secs(10);
        /// let window = ExponentialWindow::<_, u16, 64>::with_origin(&clock, ten, Instant::ZERO).unwrap();
        /// window.record_u64(1_000_000); // rotates to the interval of 20 to 30 s first
        /// assert_eq!((window.rotations(), window.count(), window.expired()), (1, 1, 0));
        /// clock.advance(Duration::from_secs(5)); // 30 s: the next interval
        /// window.maintain();
        /// assert_eq!(window.rotations(), 2);
        /// let four_ns = Duration::from_nanos(4);
        /// assert!(ExponentialWindow::<_, u16, 64>::with_origin(&clock, four_ns, Instant::ZERO).is_err());
        /// ```
        pub fn with_origin(clock: C, interval: Duration, origin: Instant) -> Result<Self, WindowError> {
            match intervals(origin, interval) {
                Ok(intervals) => Ok(Self::of(clock, intervals, Threshold::none())),
                Err(e) => {
                    // Not dropped: a `const fn` cannot run `C`'s destructor.
                    core::mem::forget(clock);
                    Err(e)
                }
            }
        }
    }

    const_unless_loom! {
        /// The window of `config` and its checked `parts`.
        pub(crate) fn from_parts(clock: C, config: WindowConfig, parts: Parts) -> Self {
            let threshold = Threshold::of(&parts, config.warmup_records(), config.min_count());
            Self::of(clock, parts.intervals, threshold).with_rotate_on_record(config.rotate_on_record())
        }
    }

    /// Makes this window what [`from_parts`](Self::from_parts) builds.
    pub(crate) fn reset_from_parts(&mut self, clock: C, config: WindowConfig, parts: Parts) {
        *self = Self::from_parts(clock, config, parts);
    }

    const_unless_loom! {
        fn of(clock: C, intervals: CoarseClock, threshold: Threshold<P>) -> Self {
            const {
                assert!(SLOTS >= 2 && SLOTS <= 8, "SLOTS must be 2 to 8");
                assert!(B >= 2 && B <= 1 << 16, "B must be 2 to 65536");
            };
            ExponentialWindow {
                clock,
                intervals: intervals.xor(Self::ZERO_INTERVALS),
                epoch: OriginStamp::at_origin(),
                current: AtomicU32::new(0),
                map: AtomicU32::new(0),
                changes: SeqLock::new(),
                rotating: AtomicBool::new(false),
                maintenance_rotates: false,
                wanted_low: AtomicU32::new(0),
                wanted_high: AtomicU32::new(0),
                expired: AtomicU32::new(0),
                rotations: AtomicU32::new(0),
                rescales: AtomicU32::new(0),
                clamped: AtomicU32::new(0),
                saturated: AtomicU32::new(0),
                raced: AtomicU32::new(0),
                threshold,
                slots: slots(),
            }
        }
    }

    /// The same window, whose records never rotate nor rescale if `rotate` is false (for
    /// records made in interrupt handlers: every record then does the same bounded work,
    /// BENCHMARKS.md has the instruction counts). [`maintain`](Self::maintain), from the
    /// main loop at least once an interval, then rotates, and rescales the current slot
    /// to the values records had to clamp (counted by [`clamped`](Self::clamped)) since.
    /// A record made after the published interval ends goes into the slot of the interval
    /// it read, or the published interval's if a rescale left that slot closed (the
    /// rotation to it opens it); one more than an interval ahead may be expired by the
    /// rotation that catches up, as [`WindowConfig::with_rotate_on_record`] says.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tailguard::clock::ManualClock;
    /// use tailguard::window::ExponentialWindow;
    ///
    /// let clock = ManualClock::new();
    /// let window = ExponentialWindow::<_, u16, 64>::new(&clock, Duration::from_secs(1))
    ///     .unwrap()
    ///     .with_rotate_on_record(false);
    /// window.record_u64(1_000_000);
    /// window.record_u64(5_000_000_000); // outside: clamped, a rescale asked for
    /// assert_eq!((window.clamped(), window.rescales()), (1, 0));
    /// window.maintain();
    /// window.record_u64(5_000_000_000);
    /// assert_eq!((window.clamped(), window.rescales()), (1, 1));
    /// ```
    #[must_use]
    pub const fn with_rotate_on_record(mut self, rotate: bool) -> Self {
        self.maintenance_rotates = !rotate;
        self
    }

    /// Records an integer value (nanoseconds, say) at the clock's current time: exact, with
    /// integer operations only.
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::clock::ManualClock;
    /// use tailguard::window::ExponentialWindow;
    ///
    /// let clock = ManualClock::new();
    /// let window = ExponentialWindow::<_, u16, 64>::new(&clock, Duration::from_secs(10)).unwrap();
    /// window.record_u64(0); // zero has a bucket of its own
    /// window.record_u64(1_500_000);
    /// let snapshot = window.snapshot();
    /// assert_eq!((snapshot.count(), snapshot.zero_count()), (2, 1));
    /// let max = window.quantile(1.0).unwrap().unwrap();
    /// assert!((max / 1.5e6 - 1.0).abs() < snapshot.relative_accuracy());
    /// ```
    #[inline]
    pub fn record_u64(&self, value: u64) {
        self.record_u64_at(self.clock.now(), value);
    }

    /// Records a duration as whole nanoseconds (saturating at `u64::MAX`).
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::clock::ManualClock;
    /// use tailguard::window::ExponentialWindow;
    ///
    /// let clock = ManualClock::new();
    /// let window = ExponentialWindow::<_, u16, 64>::new(&clock, Duration::from_secs(10)).unwrap();
    /// window.record_duration(Duration::from_millis(3));
    /// window.record_u64(3_000_000); // the same value: the same bucket
    /// assert_eq!(window.snapshot().bucket_counts().max(), Some(2));
    /// ```
    #[inline]
    pub fn record_duration(&self, d: Duration) {
        self.record_u64(crate::clock::duration_to_nanos(d));
    }

    /// [`record_u64`](Self::record_u64) at `now`, a reading of the window's clock.
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::clock::{Clock, ManualClock};
    /// use tailguard::window::ExponentialWindow;
    ///
    /// let clock = ManualClock::new();
    /// let window = ExponentialWindow::<_, u16, 64>::new(&clock, Duration::from_secs(10)).unwrap();
    /// let now = clock.now(); // one reading for a batch
    /// for ms in 1..=3 {
    ///     window.record_u64_at(now, ms * 1_000_000);
    /// }
    /// assert_eq!(window.count(), 3);
    /// let p50 = window.quantile(0.5).unwrap().unwrap();
    /// assert!((p50 / 2e6 - 1.0).abs() < window.snapshot().relative_accuracy());
    /// ```
    #[inline]
    pub fn record_u64_at(&self, now: Instant, value: u64) {
        let fine = (value != 0).then(|| index::of_u64(value));
        self.add(now, fine, key_of_u64(value));
    }

    /// Records one value. NaN and negative values are errors and change nothing; `+inf`
    /// is recorded as `f64::MAX` and counted by [`clamped`](Self::clamped).
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::clock::ManualClock;
    /// use tailguard::sketch::RecordError;
    /// use tailguard::window::ExponentialWindow;
    ///
    /// let clock = ManualClock::new();
    /// let window = ExponentialWindow::<_, u16, 64>::new(&clock, Duration::from_secs(10)).unwrap();
    /// assert_eq!(window.record(2.5e6), Ok(()));
    /// assert_eq!(window.record(f64::NAN), Err(RecordError::NaN));
    /// assert_eq!(window.record(-1.0), Err(RecordError::Negative));
    /// window.record(f64::INFINITY).unwrap(); // as f64::MAX
    /// assert_eq!((window.count(), window.clamped()), (2, 1));
    /// ```
    pub fn record(&self, value: f64) -> Result<(), RecordError> {
        if value.is_nan() {
            return Err(RecordError::NaN);
        }
        if value < 0.0 {
            return Err(RecordError::Negative);
        }
        let value = if value == f64::INFINITY {
            self.clamped.fetch_add(1, Relaxed);
            f64::MAX
        } else {
            value.abs() // -0.0 is a zero
        };
        let fine = (value != 0.0).then(|| index::of_f64(value));
        self.add(self.clock.now(), fine, key_of_f64(value));
        Ok(())
    }

    /// The interval clock (stored XOR [`ZERO_INTERVALS`](Self::ZERO_INTERVALS)).
    #[inline(always)]
    fn intervals(&self) -> CoarseClock {
        self.intervals.xor(Self::ZERO_INTERVALS)
    }

    /// Slot `logical`'s slot.
    #[inline(always)]
    fn physical(&self, logical: u32) -> &Slot<K, B> {
        let flip = (self.map.load(Acquire) >> nibble(logical)) & 15;
        let i = (logical ^ flip) as usize;
        // i < SLOTS (the map only ever swaps slots): the `min` keeps panics out.
        #[allow(clippy::indexing_slicing)]
        &self.slots[i.min(SLOTS.wrapping_sub(1))]
    }

    /// The logical slot of interval number `ticks`.
    #[inline]
    fn logical(ticks: u64) -> u32 {
        interval::slot_number::<SLOTS>(ticks)
    }

    /// The logical slot to record into at `now`: its interval's if that is in the window,
    /// after rotating if `now` is past it (and `rotate`); the published interval's for a
    /// reading behind the window.
    #[inline]
    fn logical_at(&self, now: Instant, rotate: bool) -> u32 {
        let intervals = self.intervals();
        let reading = intervals.at(now);
        match self.epoch.age(&intervals, reading) {
            Age::Ticks(0) => self.current.load(Acquire),
            age if interval::in_window(age, SLOTS) => Self::logical(reading.ticks()),
            Age::Ticks(d) if d > 0 && rotate => self.rotate(reading),
            Age::Ticks(d) if d > 0 => Self::logical(reading.ticks()),
            _ if rotate => self.rotate(reading),
            _ => self.current.load(Acquire),
        }
    }

    /// Rotates at the clock's current time if it has left the published interval,
    /// rescales the current slot to the values records clamped since the last maintenance
    /// (what a main loop calls when records are made by interrupt handlers that should
    /// not: see [`with_rotate_on_record`](Self::with_rotate_on_record)), and refreshes the
    /// cached quantiles when asked to (see [`cached_upper_bound`](Self::cached_upper_bound)).
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::clock::ManualClock;
    /// use tailguard::window::{ExponentialWindow, WindowConfig};
    ///
    /// let clock = ManualClock::new();
    /// let config = WindowConfig::new().with_interval(Duration::from_secs(10));
    /// let window = ExponentialWindow::<_, u16, 64>::with_config(&clock, config).unwrap();
    /// window.record_u64(1_000_000);
    /// assert_eq!(window.cached_upper_bound(), None); // records only ask for a refresh
    /// window.maintain();
    /// assert!(window.cached_upper_bound().unwrap() >= 1_000_000);
    /// clock.advance(Duration::from_secs(30));
    /// window.maintain(); // rotates: the value's interval has left the window
    /// assert_eq!((window.rotations(), window.expired()), (1, 1));
    /// ```
    pub fn maintain(&self) {
        self.maintain_at(self.clock.now());
    }

    /// The rotation and rescales of [`maintain`](Self::maintain) at `now`.
    fn rotate_and_rescale(&self, now: Instant) {
        let logical = self.logical_at(now, true);
        let (low, high) = (
            self.wanted_low.swap(0, AcqRel),
            self.wanted_high.swap(0, AcqRel),
        );
        for biased in [!low, high] {
            if biased == 0 || biased == u32::MAX {
                continue; // none asked for
            }
            let fine = (biased ^ BIAS) as i32;
            let state = self.physical(logical).state();
            let Some(config) = state.config() else {
                continue;
            };
            let index = fine >> config.downshift;
            let outside =
                index < config.base || index > config.base.wrapping_add(last_bucket::<B>());
            if outside && !self.rescale(logical, state, index) {
                self.ask_for_rescale(fine); // busy: the next maintenance
            }
        }
    }

    /// Asks maintenance to rescale for a value of finest index `fine`.
    #[cold]
    fn ask_for_rescale(&self, fine: i32) {
        let biased = fine as u32 ^ BIAS;
        self.wanted_low.fetch_max(!biased, AcqRel);
        self.wanted_high.fetch_max(biased, AcqRel);
    }

    /// Brings the window to the interval of `reading`, unless another caller is rotating
    /// or rescaling: recycles the slots of the intervals that leave, each at the scale of
    /// the range the window has seen, for the intervals that will take them.
    #[cold]
    fn rotate(&self, mut reading: CoarseInstant) -> u32 {
        let intervals = self.intervals();
        if interval::behind(self.epoch.age(&intervals, reading), SLOTS) {
            // A stale reading (a recorder delayed after reading the clock, an old `now`
            // passed in) is not a clock that went back: read the clock again.
            reading = intervals.at(self.clock.now());
        }
        if self
            .rotating
            .compare_exchange(false, true, Acquire, Relaxed)
            .is_err()
        {
            return self.current.load(Acquire);
        }
        // The leaving slots (the spare among them, which early records of the next
        // interval take).
        let age = self.epoch.age(&intervals, reading);
        let Some((first, leaving)) = interval::leaving(age, reading, SLOTS) else {
            // Another caller has just rotated.
            self.rotating.store(false, Release);
            return Self::logical(reading.ticks());
        };
        let config = self.seen_range().map(|(low, high)| {
            let margin = (high.saturating_sub(low) >> 2).saturating_add(OCTAVE);
            fit::<B>(low.saturating_sub(margin), high.saturating_add(margin))
        });
        self.changes.begin_write(|_| {});
        let mut removed = 0u32;
        for k in 0..leaving {
            removed =
                removed.wrapping_add(self.recycle(Self::logical(first.wrapping_add(k)), config));
        }
        let logical = Self::logical(reading.ticks());
        if self.physical(logical).state().is_closed() {
            // A rescale's source, left closed: open it for its interval.
            removed = removed.wrapping_add(self.recycle(logical, config));
        }
        self.expired.fetch_add(removed, Relaxed);
        self.current.store(logical, Release);
        self.epoch.store_now(reading);
        self.changes.end_write();
        self.threshold.ask();
        count(&self.rotations);
        self.rotating.store(false, Release);
        logical
    }

    /// Empties logical slot `logical` for a new interval with `config` (`None`: the one
    /// it had, if any): returns the values it held (expired).
    fn recycle(&self, logical: u32, config: Option<Config>) -> u32 {
        let slot = self.physical(logical);
        let mut removed = 0u64;
        let cleared = slot.close_and_clear(|_, n| removed = removed.wrapping_add(n));
        // A slot that had a scale keeps one: a slot with none takes no count, even from
        // a record that read it two clears ago (whose tag would match).
        slot.reopen(cleared.state, config.or(cleared.state.config()));
        (removed as u32).wrapping_add(cleared.zeros)
    }

    /// The finest indices of the lowest and highest value of the slots in the window.
    fn seen_range(&self) -> Option<(i32, i32)> {
        let (mut low, mut high) = (u32::MAX, 0u32);
        for slot in &self.slots {
            let (l, h) = slot.keys();
            (low, high) = (low.min(l), high.max(h));
        }
        // The keys are of non-zero values (zeros are counted apart); key 0, a subnormal's,
        // is the lowest bucket.
        let fine = |key: u32| index::of_f64(value_of_key(key));
        (low <= high).then(|| (fine(low), fine(high)))
    }

    /// Rescales the published interval's slot (`logical`, found in `state`) to take
    /// bucket `index` (at its scale): the spare takes a coarser scale, becomes the
    /// interval's slot, and the counts move into it. Returns false if another caller is
    /// rotating or rescaling (the record then clamps: it must not wait).
    #[cold]
    #[inline(never)]
    fn rescale(&self, logical: u32, state: State, index: i32) -> bool {
        if self
            .rotating
            .compare_exchange(false, true, Acquire, Relaxed)
            .is_err()
        {
            return false;
        }
        let source = self.physical(logical);
        let still = self.current.load(Acquire) == logical && source.state() == state;
        if let (true, Some(old)) = (still, state.config()) {
            // The slot's whole range and the value: records in flight may fill any bucket.
            let top = old.base.wrapping_add(last_bucket::<B>());
            let (low, high) = (old.base.min(index), top.max(index));
            let change = scale_change(low, high, B).max(1);
            let downshift = old.downshift.saturating_add(change).min(MAX_DOWNSHIFT);
            let shift = downshift.wrapping_sub(old.downshift); // downshift >= old's
            let new = fit_at::<B>(low >> shift, high >> shift, downshift);
            let spare = Self::logical(u64::from(logical).wrapping_add(1));
            self.changes.begin_write(|_| {});
            let removed = self.recycle(spare, Some(new));
            self.expired.fetch_add(removed, Relaxed);
            let target = self.physical(spare);
            // The spare becomes the interval's slot before the source closes: a record
            // that finds the source closed finds the target.
            let map = self.map.load(Acquire);
            let flip = |l: u32| (map >> nibble(l)) & 15;
            let (a, b) = (logical ^ flip(logical), spare ^ flip(spare));
            let keep = map & !(15 << nibble(logical)) & !(15 << nibble(spare));
            self.map.store(
                keep | (logical ^ b) << nibble(logical) | (spare ^ a) << nibble(spare),
                Release,
            );
            let mut lost = 0u64;
            let moved = source.close_and_clear(|i, n| {
                // The source has a scale (`old`): every index is known.
                let added = i.map_or(0, |i| target.add_to(new, i >> shift, n));
                lost = lost.wrapping_add(n.wrapping_sub(added));
            });
            target.add_rest(moved.zeros, moved.keys);
            self.saturated.fetch_add(lost as u32, Relaxed);
            // The source, empty, is the spare now: it stays closed, its counters tagged
            // for a generation its state has not reached, so that a record that found it
            // through the old map finds it stale and looks again (rather than counting in
            // a slot the next rescale would expire). The rotation that makes it current
            // recycles it.
            self.changes.end_write();
            self.threshold.ask();
            count(&self.rescales);
        }
        self.rotating.store(false, Release);
        true
    }

    /// The values in the window merged into one sketch of `B` buckets, at the coarsest of
    /// the slots' scales (or coarser if their union needs it), exactly. Its sum is
    /// estimated from the buckets (their values are not kept), its minimum and maximum to
    /// within a millionth (kept as an [`AtomicSketch`](crate::sketch::AtomicSketch) keeps
    /// them: coarser for subnormal values).
    ///
    /// Its buckets count in `u32`: where live slots of `u32` counters hold more than
    /// `u32::MAX` in one merged bucket, the excess is its
    /// [`saturated`](ExponentialSketch::saturated) (the window's own
    /// [`saturated`](Self::saturated) counts what the slots refused).
    ///
    /// A scan that overlapped a rotation or a rescale is done again (up to a few times):
    /// values moving between slots are then seen once. It maintains the window first (as
    /// [`Window`](super::Window)'s queries do), so that intervals the clock has left are
    /// forgotten even when no record or maintenance came since.
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::clock::ManualClock;
    /// use tailguard::window::ExponentialWindow;
    ///
    /// let clock = ManualClock::new();
    /// let window = ExponentialWindow::<_, u16, 64>::new(&clock, Duration::from_secs(10)).unwrap();
    /// for ms in 1..=100 {
    ///     window.record_u64(ms * 1_000_000);
    /// }
    /// clock.advance(Duration::from_secs(10)); // the next interval: another slot
    /// window.record_u64(1_000_000_000);
    /// let snapshot = window.snapshot(); // both slots merged
    /// assert_eq!(snapshot.count(), 101);
    /// assert!((snapshot.max().unwrap() / 1e9 - 1.0).abs() <= 1e-6);
    /// assert!((snapshot.min().unwrap() / 1e6 - 1.0).abs() <= 1e-6);
    /// ```
    pub fn snapshot(&self) -> ExponentialSketch<u32, B> {
        self.maintain();
        self.changes.read_stable(ATTEMPTS, || {
            let mut sketch = ExponentialSketch::new();
            for slot in &self.slots {
                snapshot::merge_slot(slot, &mut sketch);
            }
            sketch
        })
    }

    /// The values in the window (a scan of every slot). Those the snapshot's `u32`
    /// buckets cannot hold (live slots of `u32` counters holding more than `u32::MAX` in
    /// one merged bucket: its [`saturated`](ExponentialSketch::saturated)) are counted too.
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::clock::ManualClock;
    /// use tailguard::window::ExponentialWindow;
    ///
    /// let clock = ManualClock::new();
    /// let window = ExponentialWindow::<_, u16, 64>::new(&clock, Duration::from_secs(10)).unwrap();
    /// for _ in 0..3 {
    ///     window.record_u64(1_000_000);
    /// }
    /// clock.advance(Duration::from_secs(10));
    /// window.record_u64(1_000_000);
    /// assert_eq!(window.count(), 4); // this interval and the one before
    /// clock.advance(Duration::from_secs(10));
    /// assert_eq!(window.count(), 1); // the first interval has left
    /// ```
    pub fn count(&self) -> u64 {
        let snapshot = self.snapshot();
        snapshot.count().saturating_add(snapshot.saturated())
    }

    /// The `q`-quantile of the values in the window, within the relative accuracy of the
    /// snapshot's scale (`None` if empty). Errors if `q` is not in `[0, 1]`.
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::clock::ManualClock;
    /// use tailguard::window::ExponentialWindow;
    ///
    /// let clock = ManualClock::new();
    /// let window = ExponentialWindow::<_, u16, 64>::new(&clock, Duration::from_secs(10)).unwrap();
    /// assert_eq!(window.quantile(0.5), Ok(None)); // empty
    /// for ms in 1..=100 {
    ///     window.record_u64(ms * 1_000_000);
    /// }
    /// let p99 = window.quantile(0.99).unwrap().unwrap();
    /// assert!((p99 / 99e6 - 1.0).abs() < window.snapshot().relative_accuracy());
    /// assert!(window.quantile(1.5).is_err());
    /// ```
    pub fn quantile(&self, q: f64) -> Result<Option<f64>, crate::sketch::InvalidQuantile> {
        self.snapshot().quantile(q)
    }

    /// The scale of the published interval's slot (`None` before its first value).
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::clock::ManualClock;
    /// use tailguard::window::ExponentialWindow;
    ///
    /// let clock = ManualClock::new();
    /// let window = ExponentialWindow::<_, u16, 64>::new(&clock, Duration::from_secs(10)).unwrap();
    /// assert_eq!(window.scale(), None);
    /// window.record_u64(1_000_000);
    /// let fine = window.scale().unwrap();
    /// window.record_u64(5_000_000_000); // outside the slot's buckets: a coarser scale
    /// assert!(window.scale().unwrap() < fine);
    /// assert_eq!(window.snapshot().scale(), window.scale().unwrap());
    /// ```
    pub fn scale(&self) -> Option<i32> {
        let config = self.physical(self.current.load(Acquire)).state().config()?;
        Some(FINEST_SCALE.wrapping_sub(config.downshift as i32))
    }

    /// Values whose slot was recycled since they were recorded (modulo 2^32).
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::clock::ManualClock;
    /// use tailguard::window::ExponentialWindow;
    ///
    /// let clock = ManualClock::new();
    /// let window = ExponentialWindow::<_, u16, 64>::new(&clock, Duration::from_secs(10)).unwrap();
    /// window.record_u64(1_000_000);
    /// window.record_u64(2_000_000);
    /// clock.advance(Duration::from_secs(10));
    /// window.record_u64(3_000_000);
    /// clock.advance(Duration::from_secs(10)); // the first interval's slot is recycled
    /// assert_eq!((window.count(), window.expired()), (1, 2));
    /// ```
    pub fn expired(&self) -> u32 {
        self.expired.load(Relaxed)
    }

    /// Rotations so far (modulo 2^32).
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::clock::ManualClock;
    /// use tailguard::window::ExponentialWindow;
    ///
    /// let clock = ManualClock::new();
    /// let window = ExponentialWindow::<_, u16, 64>::new(&clock, Duration::from_secs(10)).unwrap();
    /// clock.advance(Duration::from_secs(10));
    /// assert_eq!(window.rotations(), 0); // rotation is lazy
    /// window.maintain();
    /// assert_eq!(window.rotations(), 1);
    /// clock.advance(Duration::from_secs(100)); // ten intervals at once
    /// window.maintain();
    /// assert_eq!(window.rotations(), 2);
    /// ```
    pub fn rotations(&self) -> u32 {
        self.rotations.load(Relaxed)
    }

    /// Rescales so far: values that fell outside the current slot (modulo 2^32).
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::clock::ManualClock;
    /// use tailguard::window::ExponentialWindow;
    ///
    /// let clock = ManualClock::new();
    /// let window = ExponentialWindow::<_, u16, 64>::new(&clock, Duration::from_secs(10)).unwrap();
    /// window.record_u64(1_000_000); // 15 octaves around 1 ms: 5.5 us to 181 ms
    /// window.record_u64(100_000_000);
    /// window.record_u64(0); // the zero bucket: never outside
    /// assert_eq!(window.rescales(), 0);
    /// window.record_u64(1_000); // 1 us
    /// assert_eq!((window.rescales(), window.count()), (1, 4));
    /// ```
    pub fn rescales(&self) -> u32 {
        self.rescales.load(Relaxed)
    }

    /// Values recorded into the nearest bucket of their slot (see the type's docs), and
    /// infinities recorded as `f64::MAX`.
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::clock::ManualClock;
    /// use tailguard::window::ExponentialWindow;
    ///
    /// let clock = ManualClock::new();
    /// let window = ExponentialWindow::<_, u16, 64>::new(&clock, Duration::from_secs(10))
    ///     .unwrap()
    ///     .with_rotate_on_record(false);
    /// window.record_u64(1_000_000);
    /// window.record_u64(1_000); // outside, and records do not rescale: the nearest bucket
    /// window.record(f64::INFINITY).unwrap();
    /// assert_eq!((window.clamped(), window.count()), (3, 3));
    /// ```
    pub fn clamped(&self) -> u32 {
        self.clamped.load(Relaxed)
    }

    /// Values dropped because their bucket was full ([`WindowCounter::LIMIT`]).
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::clock::ManualClock;
    /// use tailguard::window::{ExponentialWindow, WindowCounter};
    ///
    /// let clock = ManualClock::new();
    /// let window = ExponentialWindow::<_, u16, 64>::new(&clock, Duration::from_secs(10)).unwrap();
    /// let limit = <u16 as WindowCounter>::LIMIT;
    /// for _ in 0..=limit {
    ///     window.record_u64(1_000_000); // all in one bucket
    /// }
    /// assert_eq!((window.count(), window.saturated()), (u64::from(limit), 1));
    /// clock.advance(Duration::from_secs(10));
    /// window.record_u64(1_000_000); // a new interval, a new slot
    /// assert_eq!(window.saturated(), 1);
    /// ```
    pub fn saturated(&self) -> u32 {
        self.saturated.load(Relaxed)
    }

    /// Records that raced two clears of their slot (see the type's docs).
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::clock::ManualClock;
    /// use tailguard::window::ExponentialWindow;
    ///
    /// let clock = ManualClock::new();
    /// let window = ExponentialWindow::<_, u16, 64>::new(&clock, Duration::from_secs(1)).unwrap();
    /// // One thread, never preempted by a clear: rotations and rescales race no record.
    /// for v in 1..=1_000u64 {
    ///     window.record_u64(v * v * 1_000);
    ///     clock.advance(Duration::from_millis(7));
    /// }
    /// assert!(window.rotations() > 0 && window.rescales() > 0);
    /// assert_eq!(window.raced(), 0);
    /// let accounted = window.count() + u64::from(window.expired()) + u64::from(window.saturated());
    /// assert_eq!(accounted, 1_000);
    /// ```
    pub fn raced(&self) -> u32 {
        self.raced.load(Relaxed)
    }

    /// The window's clock.
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::clock::ManualClock;
    /// use tailguard::window::ExponentialWindow;
    ///
    /// // The window owns its clock.
    /// let window = ExponentialWindow::<_, u16, 64>::new(ManualClock::new(), Duration::from_secs(10)).unwrap();
    /// window.record_u64(1_000_000);
    /// window.clock().advance(Duration::from_secs(30));
    /// assert_eq!((window.count(), window.expired()), (0, 1));
    /// ```
    pub fn clock(&self) -> &C {
        &self.clock
    }
}

/// The shift of logical slot `l`'s entry in the map (`l < SLOTS <= 8`).
fn nibble(l: u32) -> u32 {
    (l & 7).wrapping_mul(4)
}

/// The index of the last bucket from the first: `B - 1`.
fn last_bucket<const B: usize>() -> i32 {
    (B as i32).wrapping_sub(1) // 2 <= B <= 2^16
}

/// The interval clock of a window whose first interval starts at `origin`.
const fn intervals(origin: Instant, interval: Duration) -> Result<CoarseClock, WindowError> {
    match CoarseClock::from_nanos(origin.as_nanos(), crate::clock::duration_to_nanos(interval)) {
        Ok(intervals) => Ok(intervals),
        Err(_) => Err(WindowError::InvalidInterval),
    }
}

/// Adds one to a counter of events.
#[inline]
fn count(counter: &AtomicU32) {
    counter.fetch_add(1, Relaxed);
}

/// The finest configuration of `B` buckets that holds the finest indices `low..=high`,
/// centred.
fn fit<const B: usize>(low: i32, high: i32) -> Config {
    let (low, high) = (low.max(index::LOWEST), high.min(index::HIGHEST));
    let downshift = scale_change(low, high, B).min(MAX_DOWNSHIFT);
    fit_at::<B>(low >> downshift, high >> downshift, downshift)
}

/// The configuration at `downshift` whose `B` buckets centre `low..=high` (indices at that
/// scale, fewer than `B` apart).
fn fit_at<const B: usize>(low: i32, high: i32, downshift: u32) -> Config {
    let slack = (B as i32)
        .saturating_sub(high.saturating_sub(low).saturating_add(1))
        .max(0);
    Config {
        downshift,
        base: low.saturating_sub(slack / 2),
    }
}

#[cfg(not(loom))]
const fn slots<K: WindowCounter, const B: usize, const SLOTS: usize>() -> [Slot<K, B>; SLOTS] {
    [const { Slot::new() }; SLOTS]
}

#[cfg(loom)]
fn slots<K: WindowCounter, const B: usize, const SLOTS: usize>() -> [Slot<K, B>; SLOTS] {
    core::array::from_fn(|_| Slot::new())
}

impl<C, K: WindowCounter, const B: usize, const SLOTS: usize, P> fmt::Debug
    for ExponentialWindow<C, K, B, SLOTS, P>
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ExponentialWindow")
            .field("buckets", &B)
            .field("slots", &SLOTS)
            .field("expired", &self.expired.load(Relaxed))
            .field("rotations", &self.rotations.load(Relaxed))
            .field("rescales", &self.rescales.load(Relaxed))
            .field("clamped", &self.clamped.load(Relaxed))
            .field("saturated", &self.saturated.load(Relaxed))
            .field("raced", &self.raced.load(Relaxed))
            .finish_non_exhaustive()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::clock::ManualClock;

    const SECOND: Duration = Duration::from_secs(1);

    #[test]
    fn a_first_value_configures_the_slot_and_an_outlier_rescales_it() {
        let clock = ManualClock::new();
        let w = ExponentialWindow::<_, u16, 64>::new(&clock, SECOND).unwrap();
        assert_eq!(w.scale(), None);
        w.record_u64(1_000_000);
        // 16 octaves in 64 buckets: scale 2.
        assert_eq!(w.scale(), Some(2));
        w.record_u64(10_000);
        assert_eq!((w.scale(), w.rescales()), (Some(2), 0));
        w.record_u64(u64::MAX);
        assert_eq!(w.rescales(), 1);
        w.record_u64(1);
        assert_eq!((w.rescales(), w.scale()), (2, Some(-1))); // each covers the whole slot
        assert_eq!(
            (w.count(), w.expired(), w.clamped(), w.raced()),
            (4, 0, 0, 0)
        );
        let s = w.snapshot();
        assert_eq!(s.min(), Some(1.0));
        assert!((s.max().unwrap() / u64::MAX as f64 - 1.0).abs() < 1e-6);
    }

    /// Live slots of `u32` counters can hold more in one bucket than the snapshot's `u32`
    /// bucket takes (three slots near the limit): the snapshot counts the excess as its
    /// `saturated`, and the window's count still has every value.
    #[test]
    fn a_count_past_what_a_snapshot_bucket_holds_is_still_counted() {
        let clock = ManualClock::new();
        let w = ExponentialWindow::<_, u32, 64, 4>::new(&clock, SECOND).unwrap();
        for i in 0..3 {
            if i > 0 {
                clock.advance(SECOND);
            }
            w.record_u64(1_000_000);
        }
        let mut filled = 0;
        for slot in &w.slots {
            // The three slots holding a value (the spare is configured, and empty).
            let config = slot.state().config();
            if let Some(config) = config.filter(|&c| slot.buckets(c).any(|(_, n)| n > 0)) {
                let index = index::of_u64(1_000_000) >> config.downshift;
                let more = u64::from(<u32 as WindowCounter>::LIMIT) - 1;
                assert_eq!(slot.add_to(config, index, more), more);
                filled += 1;
            }
        }
        assert_eq!(filled, 3);
        let all = 3 * u64::from(<u32 as WindowCounter>::LIMIT);
        let snapshot = w.snapshot();
        assert_eq!(snapshot.count() + snapshot.saturated(), all);
        assert_eq!(w.count(), all);
        assert_eq!((w.saturated(), w.expired()), (0, 0));
    }

    #[test]
    fn recycled_slots_take_the_scale_of_what_the_window_saw() {
        let clock = ManualClock::new();
        let w = ExponentialWindow::<_, u32, 128>::new(&clock, SECOND).unwrap();
        for v in 1_000..2_000u64 {
            w.record_u64(v * 1_000);
        }
        assert_eq!(w.scale(), Some(3), "15 octaves in 128 buckets");
        clock.advance(SECOND);
        w.maintain(); // interval 2's slot takes the scale of 1 to 2 ms
        assert_eq!((w.count(), w.rotations()), (1000, 1));
        clock.advance(SECOND);
        w.record_u64(1_500_000);
        // One octave plus the margins in 128 buckets: finer than the first slot's.
        assert_eq!(w.scale(), Some(5));
        assert_eq!((w.count(), w.expired()), (1, 1000));
        clock.advance(10 * SECOND);
        w.maintain();
        assert_eq!((w.count(), w.expired()), (0, 1001));
    }

    #[test]
    fn records_that_do_not_rotate_leave_rotations_and_rescales_to_maintenance() {
        let clock = ManualClock::new();
        let w = ExponentialWindow::<_, u16, 32>::new(&clock, SECOND)
            .unwrap()
            .with_rotate_on_record(false);
        w.record_u64(1_000);
        w.record_u64(1);
        w.record_u64(1 << 50);
        assert_eq!((w.clamped(), w.rescales(), w.count()), (2, 0, 3));
        w.maintain();
        assert_eq!(w.rescales(), 2); // one for each end
        w.record_u64(1);
        w.record_u64(1 << 50);
        assert_eq!((w.clamped(), w.count()), (2, 5));
        clock.advance(2 * SECOND);
        w.record_u64(7);
        assert_eq!(w.rotations(), 0);
        w.maintain();
        assert_eq!((w.rotations(), w.count() + u64::from(w.expired())), (1, 6));
    }

    /// Found by the `exponential_window` fuzz target: with records left to maintenance, a
    /// maintenance that rescales leaves the rescale's source closed as the spare, which is
    /// the next interval's slot; records made in the next interval before the maintenance
    /// that rotates to it found it closed on every look and were counted as expired (and
    /// raced), on one thread. The published interval's slot takes them.
    #[test]
    fn records_of_the_next_interval_are_kept_after_a_maintenance_rescale() {
        let clock = ManualClock::new();
        let w = ExponentialWindow::<_, u16, 16>::new(&clock, SECOND)
            .unwrap()
            .with_rotate_on_record(false);
        w.record_u64(1_000);
        w.record_u64(1 << 60); // outside: clamped, a rescale asked for
        w.maintain();
        assert_eq!((w.rescales(), w.rotations()), (1, 0));
        clock.advance(SECOND); // the next interval, not yet maintained
        w.record_u64(1_000);
        w.record_u64(0);
        assert_eq!(
            (w.count(), w.expired(), w.raced()),
            (4, 0, 0),
            "a record of the next interval was dropped: {w:?}"
        );
        // Still all there after the rotation into that interval: the zero too.
        w.maintain();
        assert_eq!(w.rotations(), 1);
        assert_eq!(
            (w.count(), w.expired(), w.snapshot().zero_count()),
            (4, 0, 1),
            "{w:?}"
        );
    }

    /// Zeros have no bucket: they do not widen the range a recycled slot's scale is fitted
    /// to (a zero among milliseconds once made it span from a nanosecond up), and the
    /// snapshot's minimum is still the zero.
    #[test]
    fn zeros_leave_the_scale_of_recycled_slots_alone() {
        let scale_after = |zeros: bool, first: u64, step: u64| {
            let clock = ManualClock::new();
            let w = ExponentialWindow::<_, u16, 64>::new(&clock, SECOND).unwrap();
            for _ in 0..10 {
                for i in 0..1_000u64 {
                    if zeros && i % 100 == 0 {
                        w.record_u64(0);
                    } else {
                        w.record_u64(first + i * step);
                    }
                }
                clock.advance(SECOND);
            }
            w.maintain();
            let snapshot = w.snapshot();
            let min = snapshot.min();
            (snapshot.scale(), min)
        };
        // Milliseconds: 1 to 2 ms.
        let (plain, min) = scale_after(false, 1_000_000, 1_000);
        assert_eq!(min, Some(1e6));
        assert_eq!(scale_after(true, 1_000_000, 1_000), (plain, Some(0.0)));
        // Floats below one: the zero once lay above every value (an inverted range).
        let clock = ManualClock::new();
        let w = ExponentialWindow::<_, u16, 64>::new(&clock, SECOND).unwrap();
        for round in 0..3 {
            for i in 0..100 {
                w.record(0.01 + 1e-4 * f64::from(i)).unwrap();
            }
            if round == 0 {
                w.record(0.0).unwrap();
            }
            clock.advance(SECOND);
        }
        assert_eq!(w.rescales(), 0, "{w:?}");
    }

    #[test]
    fn zeros_and_floats_are_counted_and_bad_values_refused() {
        let clock = ManualClock::new();
        let w = ExponentialWindow::<_, u16, 16, 2>::new(&clock, SECOND).unwrap();
        w.record_u64(0);
        w.record(0.0).unwrap();
        w.record(-0.0).unwrap();
        assert_eq!(w.record(f64::NAN), Err(RecordError::NaN));
        assert_eq!(w.record(-1.0), Err(RecordError::Negative));
        w.record(f64::INFINITY).unwrap();
        w.record(1e-300).unwrap();
        assert_eq!((w.count(), w.clamped()), (5, 1));
        assert_eq!(w.snapshot().zero_count(), 3);
        assert_eq!(w.quantile(0.0).unwrap(), Some(0.0));
    }

    #[test]
    fn quantiles_are_within_the_reported_accuracy() {
        let clock = ManualClock::new();
        let w = ExponentialWindow::<_, u16, 64>::new(&clock, SECOND).unwrap();
        let mut values: std::vec::Vec<u64> = (0..5_000u64)
            .map(|i| 10_000 + i * i * 37 % 9_000_000)
            .collect();
        for &v in &values {
            w.record_u64(v);
        }
        values.sort_unstable();
        let s = w.snapshot();
        let accuracy = s.relative_accuracy();
        for q in [0.1f64, 0.5, 0.9, 0.99] {
            let rank = libm::floor(q * (values.len() - 1) as f64) as usize;
            let exact = values[rank] as f64;
            let got = s.quantile(q).unwrap().unwrap();
            assert!(
                (got / exact - 1.0).abs() <= accuracy + 1e-12,
                "q {q}: {got} vs {exact}"
            );
        }
    }
}
