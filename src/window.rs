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
//! Rotation is lazy: the first record, query or [`maintain`](Window::maintain) that finds
//! the clock in a later interval than the published one rotates, on its own thread (no
//! timer, no task; records leave it to the others if configured with
//! [`with_rotate_on_record(false)`](WindowConfig::with_rotate_on_record)). Only one caller
//! rotates at a time (a try-lock: the others do not wait, they record into the slot of
//! the interval they read). Rotating clears, by swapping each bin with zero, the slots of
//! the intervals that leave the window, then publishes the new interval's slot and the
//! interval. A record whose reading is in the published interval takes the published
//! slot (one load, so the bin's address does not wait for the interval arithmetic on the
//! clock reading); one a little behind computes its own interval's slot.
//!
//! Records are never lost: every record is in some slot or, if it was cleared, counted by
//! [`expired`](Window::expired), so at any quiet moment `count() + expired()` is exactly
//! the number of records (modulo 2^32 for `expired`). A record racing a rotation lands in
//! the interval it read or a newer one; a rotation that jumps two or more intervals clears
//! slots that racing records may be writing to, and those records are then counted as
//! expired.
//!
//! # Clocks that jump
//!
//! The published interval is kept as a [coarse time](crate::clock#coarse-time) stamp, so every
//! clock reading in [0, 2^64) ns and every gap is handled:
//!
//! * a clock that jumps forward by `SLOTS - 1` intervals or more, after any idle gap,
//!   empties the window on the next record or query;
//! * a reading a little behind the published interval (by up to `SLOTS - 2` intervals: two
//!   cores' timers, a recorder that read the clock just before a rotation) records into
//!   its own interval's slot, which is still in the window;
//! * a reading further behind is read again; if the clock really went back past the
//!   window (a reset, a timer that wrapped), the window empties and restarts at the new
//!   time, so it keeps forgetting at the pace of the clock it now follows.
//!
//! # The cached quantile
//!
//! Computing a quantile scans the slots' occupied bins (those from the lowest to the
//! highest filled since each slot was last cleared: a few hundred for latencies, against
//! the thousands of a preset), once for the count and once from the nearer end for the
//! rank; [`cached_quantile`](Window::cached_quantile)
//! instead returns one configured quantile (p90 by default) cached by the last refresh:
//! one load and the bin's value. The refresh also publishes that bin's upper edge as a
//! whole number, [`cached_upper_bound`](Window::cached_upper_bound): two loads and a shift,
//! integer operations only, cheap enough to read on every request (the
//! [`Hedger`](crate::hedge::Hedger) reads its delay there).
//!
//! **Records ask, maintenance scans.** A record never scans: at most it leaves a request
//! (one read-modify-write of one word, only when a trigger below fires), with no shared
//! counter on the hot path
//! (each record knows only its own bin's count). The scan is done by the next
//! *maintenance*: [`maintain`](Window::maintain), any query ([`quantile`](Window::quantile),
//! [`count`](Window::count), [`snapshot`](Window::snapshot)), [`refresh`](Window::refresh)
//! (which always scans), and the hedger's [`start`](crate::hedge::Hedger::start) and
//! [`delay`](crate::hedge::Hedger::delay). A refresh is asked for:
//!
//! * by every rotation;
//! * by every maintenance while the last refresh counted fewer than `warmup_records`
//!   values (the records themselves do not ask then);
//! * by a record that brings its bin's count to a power of two from 16 up: while the window
//!   fills (the first seconds, or after a shift) that is often, so the cached value tracks
//!   a growing sample instead of staying with the first few values; once bins are large it
//!   is rare;
//! * by a record that brings its bin's count to a multiple of `refresh_records` (a bin that
//!   holds a share `s` of the values reaches it every `refresh_records / s` records);
//! * by a maintenance that finds `refresh_interval` passed since the last refresh (or the
//!   clock gone back by as much);
//! * again, by a refresh that finds another one under way.
//!
//! **How stale the cached quantile can be.** If the application maintains the window at
//! least once every `m` (a hedger does on every request it starts), then: a refresh asked
//! for is done within `m`; after a rotation the cached quantile reads `None` for at most
//! `m` (a rotation withdraws it at once, see below, so it never outlives its data); and
//! with `refresh_interval = r > 0` the cached quantile is never computed more than
//! `r + m` before (plus the refresh clock's tick of about 1 ms, rounded in favour of
//! refreshing). Between refreshes it misses the records made since the last one, at most
//! what the triggers above let through (each bin may grow by half, or by
//! `refresh_records`). A window that is never maintained never refreshes: its cached
//! quantile stays `None`, or what it was at the last maintenance until a rotation
//! withdraws it.
//!
//! [`refresh`](Window::refresh) forces one. Only one caller refreshes at a time; a caller
//! that finds a refresh under way leaves a request that the refresher honours with another
//! scan before it returns, so no refresh is lost.
//!
//! **What a published quantile is.** A refresh reads the occupied bins twice (the total,
//! then the rank; no bin outside them holds a value whose record has returned), between two reads of a rotation counter that each rotation bumps before and after
//! it clears slots; a scan that overlapped a clear is thrown away and redone. A rotation
//! withdraws the cached quantile (it reads `None`) before it clears anything, and a refresh
//! publishes with a compare-and-swap that fails if a rotation came since its scan began.
//! So at every moment the cached quantile is either `None` or the configured quantile,
//! within the sketch's relative accuracy, of values the window held during one scan with no
//! rotation in it, none of which has been cleared since: records racing the scan may or
//! may not be in it, expired values never are. (After a rotation, `None` lasts until the
//! rotation's own refresh, one scan.) The count of that same scan is
//! [`cached_count`](Window::cached_count), and below `min_count` values the cached quantile
//! is `None`. It is the representative value of the rank's bin (not clamped to the
//! window's min and max).
//!
//! # Interrupt safety and the cost of a record
//!
//! Every field touched by recording, rotating and refreshing is a native 32-bit atomic,
//! and no record divides a 64-bit number (the interval and its slot are found by
//! multiplies with reciprocals). With [`IntMapping`](crate::sketch::IntMapping) recording,
//! rotating, refreshing (the rank is computed with integers, bit for bit as the `f64`
//! formula, and the bound is the bin's exact edge) and
//! [`cached_upper_bound`](Window::cached_upper_bound) use integer operations only: no
//! soft-float helper and no division is reachable from them on a Cortex-M0 or Cortex-M4F
//! (checked by `.ci/check-int-path.sh`). [`cached_quantile`](Window::cached_quantile),
//! [`quantile`](Window::quantile) and [`snapshot`](Window::snapshot) answer in `f64`. A record never scans bins for the cached quantile (see above). The one
//! record per interval that first finds the clock past the published interval rotates,
//! which clears the slots leaving the window: up to `SLOTS * (N + 1)` loads. For
//! interrupt handlers, configure
//! [`with_rotate_on_record(false)`](WindowConfig::with_rotate_on_record): then every
//! record does the same bounded work (a clock reading, a multiply, a few loads, the
//! sketch's record and at most one request write), and the main loop (thread mode) calls
//! [`maintain`](Window::maintain) at least once per interval, which does the rotations
//! and the scans. Measured on a Cortex-M4F with a 32-bins-per-octave integer mapping
//! (`IntLatencyCoarse`, `McuLatency`): at most 391 instructions per record, whatever the
//! value and the clock (BENCHMARKS.md, "Per-primitive cost on the microcontroller"); at
//! 64 bins per octave a value on a bin edge costs about 875, as DataDog's rounding is
//! replayed there. A maintenance that finds another one under way (say, an interrupt
//! handler that calls it while the main loop is refreshing) returns at once; the one
//! under way does the work.

use core::fmt;
use core::time::Duration;

use crate::clock::coarse::{Age, AtomicCoarseInstant, CoarseClock, CoarseInstant};
use crate::clock::divisor::Divisor;
use crate::clock::{duration_to_nanos, Clock, Instant};
use crate::sketch::atomic::Occupied;
use crate::sketch::rank::{rank_bin, rank_value, Quantile, RankBin};
use crate::sketch::{
    AtomicSketch, BinLayout, ConfigError, DDSketch, IndexMapping, InvalidQuantile, RecordError,
};
use crate::sync::{const_unless_loom, fence, AtomicBool, AtomicU32, Ordering};

/// The refresh clock's tick: 2^20 ns (about 1 ms).
const REFRESH_UNIT_NS: u64 = 1 << 20;

// The cached word `cached_bin` holds a published value below 2^31, or one of these markers
// (top bit set).

/// A cached word when there is no quantile.
const NO_QUANTILE: u32 = u32::MAX;

/// A cached word while a rotation clears slots and until the next refresh: the rotation's
/// number (modulo 2^30) with the top bit set, so that a refresh whose scan began before it
/// cannot publish over it (its compare-and-swap expects the older word).
fn cleared_marker(generation: u32) -> u32 {
    0x8000_0000 | ((generation >> 1) & 0x3fff_ffff)
}

/// Whether a cached word holds a published value (not a marker).
#[inline]
fn is_published(word: u32) -> bool {
    word & 0x8000_0000 == 0
}

/// `cached_bin` when the cached quantile is in the zero bin (positions are below
/// `N < 2^31 - 1`).
const ZERO_BIN: u32 = 0x7fff_ffff;

/// `cached_bound`'s encoding of a whole number: a 26-bit significand and a 5-bit shift,
/// rounded up (so a bound stays at or above what it bounds: relative error below 2^-25),
/// saturating at `(2^26 - 1) << 31` (about 4.5 years in nanoseconds).
fn encode_bound(x: u64) -> u32 {
    const MAX: u32 = 0x7fff_ffff;
    let width = 64u32.wrapping_sub(x.leading_zeros());
    if width <= 26 {
        return x as u32; // shift 0
    }
    let shift = width.wrapping_sub(26); // 1..=38
    let below = x & (1u64 << shift).wrapping_sub(1);
    // Below 2^26 + 1: the increment may carry into bit 26, then halve it.
    let mut significand = (x >> shift).wrapping_add(u64::from(below != 0));
    let mut shift = shift;
    if significand >> 26 != 0 {
        significand >>= 1;
        shift = shift.wrapping_add(1);
    }
    if shift > 31 {
        return MAX;
    }
    (shift << 26) | significand as u32
}

/// The whole number a published `cached_bound` word stands for (integer operations only).
#[inline]
fn decode_bound(word: u32) -> u64 {
    u64::from(word & 0x03ff_ffff) << (word >> 26 & 31)
}

/// Scans one refresh may make before it gives up on a window that keeps rotating (and
/// leaves the refresh asked for, for the next record).
const SCAN_ATTEMPTS: u32 = 4;

/// Rounds of refresh requests one refresher serves before it returns.
const REFRESH_ROUNDS: u32 = 4;

/// How a refresh ended.
enum Published {
    /// A fresh quantile was published.
    Yes,
    /// A rotation was clearing slots; it asks for a refresh when it is done.
    RotationUnderWay,
    /// Rotations spoiled every scan.
    GaveUp,
}

/// Why a scan of the slots was thrown away.
enum Spoiled {
    /// A rotation was clearing slots when it began.
    RotationUnderWay,
    /// A rotation cleared slots while it ran.
    RotationDuringScan,
}

/// `refresh_state`: a caller is refreshing.
const REFRESH_LOCKED: u32 = 1;
/// `refresh_state`: a refresh was asked for and no scan has started since.
const REFRESH_WANTED: u32 = 2;

/// How a [`Window`] rotates and refreshes its cached quantile.
///
/// Built with `with_<field>(value)` setters (`const`, so a configuration can be a
/// constant), read with `<field>()` getters.
///
/// ```
/// use core::time::Duration;
/// use tailguard::window::WindowConfig;
///
/// const CONFIG: WindowConfig = WindowConfig::new()
///     .with_interval(Duration::from_secs(10))
///     .with_quantile(0.95);
/// assert_eq!(CONFIG.interval(), Duration::from_secs(10));
/// assert_eq!(CONFIG.quantile(), 0.95);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct WindowConfig {
    interval: Duration,
    quantile: f64,
    refresh_records: u32,
    refresh_interval: Duration,
    warmup_records: u32,
    min_count: u32,
    rotate_on_record: bool,
}

impl WindowConfig {
    /// The defaults: 30 s intervals, p90 cached, refreshed when a bin's count reaches a
    /// power of two or a multiple of 1,024, every second, and on every record until the
    /// window holds 32 values; cached from one value up.
    pub const fn new() -> Self {
        WindowConfig {
            interval: Duration::from_secs(30),
            quantile: 0.9,
            refresh_records: 1024,
            refresh_interval: Duration::from_secs(1),
            warmup_records: 32,
            min_count: 1,
            rotate_on_record: true,
        }
    }

    /// The length of one interval (at least 8 ns).
    pub const fn with_interval(mut self, interval: Duration) -> Self {
        self.interval = interval;
        self
    }

    /// The quantile [`Window::cached_quantile`] caches, in (0, 1).
    pub const fn with_quantile(mut self, q: f64) -> Self {
        self.quantile = q;
        self
    }

    /// Refresh the cached quantile when a record brings its bin's count to a power of two
    /// or to a multiple of `records` (rounded up to a power of two); 0 disables both.
    pub const fn with_refresh_records(mut self, records: u32) -> Self {
        self.refresh_records = records;
        self
    }

    /// Refresh the cached quantile when this much time has passed since the last refresh
    /// (resolution about 1 ms); zero disables it.
    pub const fn with_refresh_interval(mut self, interval: Duration) -> Self {
        self.refresh_interval = interval;
        self
    }

    /// Refresh on every record while the window holds fewer values than this.
    pub const fn with_warmup_records(mut self, records: u32) -> Self {
        self.warmup_records = records;
        self
    }

    /// Publish a cached quantile only from a refresh that counted at least this many values
    /// (0 counts as 1); below, [`Window::cached_quantile`] is `None`.
    pub const fn with_min_count(mut self, values: u32) -> Self {
        self.min_count = values;
        self
    }

    /// Whether the record that first finds the clock past the published interval rotates
    /// (the default) or leaves the rotation to the next [`Window::maintain`] (or query).
    /// With `false` every record costs the same, a few dozen instructions plus the
    /// sketch's own record (for interrupt handlers: see the [module docs](crate::window));
    /// the application must then maintain the window at least once per interval, or
    /// records made after the interval ends are kept in the slot of the interval they
    /// read, ahead of the published one, and those more than one interval ahead may be
    /// expired by the rotation that catches up.
    pub const fn with_rotate_on_record(mut self, rotate: bool) -> Self {
        self.rotate_on_record = rotate;
        self
    }

    /// Whether records rotate the window.
    pub const fn rotate_on_record(&self) -> bool {
        self.rotate_on_record
    }

    /// The interval length.
    pub const fn interval(&self) -> Duration {
        self.interval
    }

    /// The cached quantile (0.9 is p90).
    pub const fn quantile(&self) -> f64 {
        self.quantile
    }

    /// The bin count multiple that triggers a refresh (0: none by count).
    pub const fn refresh_records(&self) -> u32 {
        self.refresh_records
    }

    /// The time after which a record triggers a refresh (zero: none by time).
    pub const fn refresh_interval(&self) -> Duration {
        self.refresh_interval
    }

    /// The warm-up length in records.
    pub const fn warmup_records(&self) -> u32 {
        self.warmup_records
    }

    /// The fewest values a published quantile is computed from.
    pub const fn min_count(&self) -> u32 {
        self.min_count
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
    /// The interval is shorter than 8 ns.
    InvalidInterval,
    /// The quantile to cache is not in (0, 1).
    InvalidQuantile,
    /// The sketch configuration was refused.
    Sketch(ConfigError),
}

impl fmt::Display for WindowError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WindowError::InvalidInterval => f.write_str("window interval must be at least 8 ns"),
            WindowError::InvalidQuantile => f.write_str("cached quantile must be in (0, 1)"),
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
/// See the [module docs](self) for rotation, clocks that jump, the cached quantile and
/// their guarantees.
///
/// ```
/// use core::time::Duration;
/// use tailguard::clock::ManualClock;
/// use tailguard::sketch::presets;
/// use tailguard::window::{Window, WindowConfig};
///
/// let clock = ManualClock::new();
/// let config = WindowConfig::new().with_interval(Duration::from_secs(30));
/// let window = Window::like(&clock, &presets::cubic_latency(), config).unwrap();
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
    generation: AtomicU32,
    rotating: AtomicBool,
    /// [`REFRESH_LOCKED`] while a caller refreshes, [`REFRESH_WANTED`] while a refresh was
    /// asked for and no scan has started since.
    refresh_state: AtomicU32,
    /// When the last quantile was published, in refresh ticks.
    refreshed_at: AtomicCoarseInstant,
    /// The configured quantile, checked.
    quantile: Quantile,
    /// The position of the cached quantile's bin (or [`ZERO_BIN`]), or [`NO_QUANTILE`] (or
    /// a cleared marker): [`cached_quantile`](Self::cached_quantile) is its value.
    cached_bin: AtomicU32,
    /// That bin's upper edge as a whole number, encoded by [`encode_bound`]: what a hedger
    /// compares with, with integer operations only. Meaningful while `cached_bin` holds a
    /// published bin: a refresher stores it, from its consistent scan, before it publishes
    /// `cached_bin` (release), and readers load it after `cached_bin` (acquire), so a reader
    /// gets the bound of the bin it read or of a later consistent scan. Rotations leave it
    /// alone: withdrawing `cached_bin` withdraws it. (One word with no protocol of its own
    /// keeps the loom models of the refresh as small as they were.)
    cached_bound: AtomicU32,
    /// Values counted by the scan of the last published quantile (saturating).
    cached_count: AtomicU32,
    expired: AtomicU32,
    rotations: AtomicU32,
    slots: [AtomicSketch<M, N>; SLOTS],
}

/// What a window's configuration and origin make of it, checked: the fields of a
/// [`Window`] that do not depend on the clock, the layout or `SLOTS`.
pub(crate) struct Parts {
    intervals: CoarseClock,
    refresh_clock: CoarseClock,
    quantile: Quantile,
    refresh_mask: u32,
    refresh_ticks: u64,
}

impl Parts {
    /// The parts of a window of `config` whose first interval starts at `origin`, or why
    /// `config` is refused.
    pub(crate) const fn new(config: WindowConfig, origin: Instant) -> Result<Self, WindowError> {
        let origin_ns = origin.as_nanos();
        let Ok(intervals) = CoarseClock::from_nanos(origin_ns, duration_to_nanos(config.interval))
        else {
            return Err(WindowError::InvalidInterval);
        };
        // Not 0 or 1: the cached value is a bin's representative, never the exact extreme.
        let quantile = match Quantile::new(config.quantile) {
            Ok(q) if !q.is_min() && !q.is_max() => q,
            _ => return Err(WindowError::InvalidQuantile),
        };
        let refresh_mask = match config.refresh_records {
            0 => u32::MAX, // no refresh by count
            k => match k.checked_next_power_of_two() {
                Some(p) => p.wrapping_sub(1),
                None => 0x7fff_ffff, // 2^31 - 1
            },
        };
        let Ok(refresh_clock) = CoarseClock::from_nanos(origin_ns, REFRESH_UNIT_NS) else {
            return Err(WindowError::InvalidInterval); // not reached: the unit is 2^20 ns
        };
        // Rounded down (at least one tick): a refresh is never later than asked for.
        let refresh_ns = duration_to_nanos(config.refresh_interval);
        let refresh_ticks = match refresh_ns / REFRESH_UNIT_NS {
            0 if refresh_ns > 0 => 1,
            ticks => ticks,
        };
        Ok(Parts {
            intervals,
            refresh_clock,
            quantile,
            refresh_mask,
            refresh_ticks,
        })
    }
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
    /// An empty window of the default three slots whose sketches have the configuration
    /// of `sketch` (a preset, say; its contents are ignored): the bin count comes from the
    /// sketch's type.
    pub fn like(
        clock: C,
        sketch: &DDSketch<M, N>,
        config: WindowConfig,
    ) -> Result<Self, WindowError> {
        Self::with_layout(clock, sketch.layout(), config)
    }
}

impl<C: Clock, M: IndexMapping, const N: usize, const SLOTS: usize> Window<C, M, N, SLOTS> {
    /// An empty window of `N` bins and `SLOTS` slots (named by the type it is given)
    /// whose sketches use `mapping` with the lowest bin holding `min_value`; its first
    /// interval starts now.
    pub fn new(
        clock: C,
        mapping: M,
        min_value: f64,
        config: WindowConfig,
    ) -> Result<Self, WindowError> {
        Self::with_layout(clock, BinLayout::new(mapping, min_value)?, config)
    }

    fn with_layout(
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
        /// use tailguard::sketch::{presets, IntMapping};
        /// use tailguard::window::{Window, WindowConfig};
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
        /// static LATENCIES: Window<Timer, IntMapping, { presets::INT_LATENCY_COARSE_BINS }> =
        ///     match Window::with_origin(Timer, presets::INT_LATENCY_COARSE_LAYOUT, CONFIG, Instant::ZERO) {
        ///         Ok(window) => window,
        ///         Err(_) => panic!("invalid window configuration"), // a compile error
        ///     };
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
                generation: AtomicU32::new(0),
                rotating: AtomicBool::new(false),
                refresh_state: AtomicU32::new(0),
                refreshed_at: AtomicCoarseInstant::never(),
                quantile: parts.quantile,
                cached_bin: AtomicU32::new(NO_QUANTILE),
                cached_bound: AtomicU32::new(0),
                cached_count: AtomicU32::new(0),
                expired: AtomicU32::new(0),
                rotations: AtomicU32::new(0),
                slots: slots_of(layout),
            }
        }
    }

    /// Records one value at the clock's current time. NaN and negative values are errors
    /// and change nothing.
    #[inline]
    pub fn record(&self, value: f64) -> Result<(), RecordError> {
        let now = self.clock.now();
        let previous = self
            .slot_at(now, self.config.rotate_on_record)
            .record_returning_bin_count(value)?;
        self.after_record(previous);
        Ok(())
    }

    /// Records an integer value (nanoseconds, say) at the clock's current time.
    #[inline]
    pub fn record_u64(&self, value: u64) {
        self.record_u64_at(self.clock.now(), value);
    }

    /// Records a duration, as whole nanoseconds, at the clock's current time.
    #[inline]
    pub fn record_duration(&self, d: Duration) {
        self.record_u64_at(self.clock.now(), duration_to_nanos(d));
    }

    /// Records a duration as of `now`, for callers that have just read the clock (to
    /// compute that duration, say): saves a second clock read. A `now` behind the window
    /// is checked against the clock before anything is expired.
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
        } else if self.in_window(age) {
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

    /// Whether a reading of this age (against the published interval) is in the window:
    /// the published interval, or up to `SLOTS - 2` before it.
    #[inline]
    fn in_window(&self, age: Age) -> bool {
        // SLOTS < 2^16: the cast and the subtraction cannot overflow.
        matches!(age, Age::Ticks(d) if d <= 0 && d > 1i64.wrapping_sub(SLOTS as i64))
    }

    /// The slot of interval number `ticks`.
    #[inline]
    fn slot(&self, ticks: u64) -> &AtomicSketch<M, N> {
        self.slot_index(self.slot_number(ticks))
    }

    /// The number of interval `ticks`'s slot: `ticks % SLOTS`, by a multiply (a 64-bit
    /// `%` is a library call on a 32-bit core, `__aeabi_uldivmod`).
    #[inline]
    fn slot_number(&self, ticks: u64) -> u32 {
        let slots: Divisor = const { Divisor::new(SLOTS as u64) };
        // Below SLOTS < 2^16: the cast is exact.
        slots.div_rem(ticks).1 as u32
    }

    /// Slot number `i`, below `SLOTS`.
    // The `min` (which changes nothing for a slot number) lets the compiler see that the
    // index is in range, so no bounds-check panic is linked into the record path.
    #[allow(clippy::indexing_slicing)]
    #[inline]
    fn slot_index(&self, i: u32) -> &AtomicSketch<M, N> {
        &self.slots[(i as usize).min(SLOTS.wrapping_sub(1))]
    }

    /// Asks for a refresh when this record calls for one. Never scans: the scan is done by
    /// the next [`maintain`](Self::maintain) (or query), so a record costs the same at
    /// every call.
    #[inline]
    fn after_record(&self, previous: Option<u32>) {
        // The bin's new count is a power of two from 16 up (the window has grown by about
        // half since this bin last triggered: frequent while it fills, rare once it is
        // full) or a multiple of `refresh_records`.
        let by_count = self.refresh_mask != u32::MAX
            && previous.is_some_and(|p| {
                let n = p.wrapping_add(1);
                (n & p == 0 && n >= 16) || n & self.refresh_mask == 0
            });
        if by_count {
            self.ask_for_refresh();
        }
    }

    /// Leaves a refresh request for the next maintenance. Always a read-modify-write, even
    /// when a request is pending: the maintenance that takes the request (acquiring the
    /// word) then sees this caller's writes, its record or its clears; a load that saw a
    /// request pending would not order them (loom found a stale threshold published so).
    #[inline]
    fn ask_for_refresh(&self) {
        self.refresh_state
            .fetch_or(REFRESH_WANTED, Ordering::Release);
    }

    /// Whether `refresh_interval` has passed since the last refresh (or the clock went back
    /// by as much, or the last refresh is beyond the refresh clock's horizon).
    #[inline]
    fn refresh_due(&self, now: Instant) -> bool {
        if self.refresh_ticks == 0 {
            return false;
        }
        let reading = self.refresh_clock.at(now);
        match self.refreshed_at.age(&self.refresh_clock, reading) {
            Age::Ticks(d) => d.unsigned_abs() >= self.refresh_ticks,
            Age::Never | Age::LongAgo | Age::FarAhead => true,
        }
    }

    /// Brings the window to the interval of `reading`: rotates forward,
    /// or restarts the window if the clock went back past it, unless another caller is
    /// rotating. Returns the slot to record into.
    #[cold]
    fn catch_up(&self, mut reading: CoarseInstant) -> &AtomicSketch<M, N> {
        if self.behind(self.epoch.age(&self.intervals, reading)) {
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
        // The slots to clear: `count` of them from the slot of interval `first`. Interval
        // `e - (SLOTS - 1)` leaves when `e` starts and has `e + 1`'s slot, so moving on by
        // `d` from `p` clears the slots of `p + 2 ..= p + 1 + d` (at most all of them).
        let clear = match age {
            Age::Ticks(d) if d > 0 => Some((
                reading.ticks().wrapping_sub(d as u64).wrapping_add(2), // d < 2^31
                (d as u64).min(SLOTS as u64),
            )),
            _ if self.in_window(age) => None, // another caller has just rotated
            _ => Some((0, SLOTS as u64)),     // behind the window, or beyond the horizon
        };
        if let Some((first, leaving)) = clear {
            // A seqlock's writer side: odd while slots are being cleared. The cached quantile
            // is withdrawn before any of its values is cleared (release: a refresh that reads
            // the marker sees the odd generation).
            let odd = self
                .generation
                .fetch_add(1, Ordering::Relaxed)
                .wrapping_add(1);
            self.cached_bin
                .store(cleared_marker(odd), Ordering::Release);
            fence(Ordering::Release);
            let mut removed = 0u32;
            for k in 0..leaving {
                let slot = self.slot(first.wrapping_add(k));
                removed = removed.wrapping_add(slot.clear() as u32);
            }
            self.expired.fetch_add(removed, Ordering::Relaxed);
            // Before the interval it belongs to (whose release store publishes it): a
            // recorder that reads the new interval reads this slot or a later one. One
            // that read the old interval may take this slot too: a newer interval's,
            // which the clears above have already passed.
            self.current_slot
                .store(self.slot_number(reading.ticks()), Ordering::Relaxed);
            self.epoch.store_now(reading);
            self.generation.fetch_add(1, Ordering::Release);
            self.rotations.fetch_add(1, Ordering::Relaxed);
        }
        self.rotating.store(false, Ordering::Release);
        if clear.is_some() {
            // The cached quantile is withdrawn until then: the next maintenance refreshes.
            self.ask_for_refresh();
        }
        self.slot(reading.ticks())
    }

    /// Whether a reading of this age is behind the window (or the published interval is
    /// beyond the horizon ahead of it: the clock went far back).
    fn behind(&self, age: Age) -> bool {
        match age {
            Age::Ticks(d) => d <= 1i64.wrapping_sub(SLOTS as i64),
            Age::FarAhead => true,
            Age::Never | Age::LongAgo => false,
        }
    }

    /// Brings the window up to the clock's current interval and, if a record or a
    /// rotation asked for it or `refresh_interval` has passed since the last refresh,
    /// refreshes the cached quantile. Cheap when there is nothing to do (a clock reading
    /// and a few loads); otherwise it scans the occupied bins. Queries do it themselves,
    /// and so do [`Hedger::start`](crate::hedge::Hedger::start) and
    /// [`Hedger::delay`](crate::hedge::Hedger::delay); a window read only through
    /// [`cached_quantile`](Self::cached_quantile) needs it called (from thread mode, say)
    /// for the cached quantile to follow the records: see the [module docs](self).
    ///
    /// ```
    /// use tailguard::clock::ManualClock;
    /// use tailguard::sketch::presets;
    /// use tailguard::window::{Window, WindowConfig};
    ///
    /// let clock = ManualClock::new();
    /// let window = Window::like(&clock, &presets::int_latency(), WindowConfig::new()).unwrap();
    /// window.record_u64(2_000_000); // O(1): scans nothing
    /// assert_eq!(window.cached_quantile(), None);
    /// window.maintain(); // the scan
    /// assert!(window.cached_quantile().is_some());
    /// ```
    pub fn maintain(&self) {
        self.maintain_at(self.clock.now());
    }

    /// [`maintain`](Self::maintain) at `now`, just read from the window's clock.
    #[inline]
    pub(crate) fn maintain_at(&self, now: Instant) {
        let _ = self.slot_at(now, true);
        // While warming up every maintenance refreshes (records do not ask then: that
        // would be a write per record).
        if self.refresh_state.load(Ordering::Relaxed) & REFRESH_WANTED != 0
            || self.cached_count.load(Ordering::Relaxed) < self.config.warmup_records
            || self.refresh_due(now)
        {
            self.refresh_at(now);
        }
    }

    /// Recomputes the cached quantile now (or, if another caller is refreshing, makes
    /// sure that one scans again before it returns).
    pub fn refresh(&self) {
        self.refresh_at(self.clock.now());
    }

    /// Asks for a refresh and does it, unless another caller is refreshing: then that one
    /// sees the request when it unlocks and scans again. The lock and the request share
    /// one atomic word, so a request and an unlock cannot miss each other.
    fn refresh_at(&self, now: Instant) {
        let mut state = self
            .refresh_state
            .fetch_or(REFRESH_WANTED, Ordering::AcqRel)
            | REFRESH_WANTED;
        for _ in 0..REFRESH_ROUNDS {
            if state & REFRESH_LOCKED != 0 {
                return; // the refresher under way serves the request before it returns
            }
            // Take the lock and the request at once: requests from here on want a scan that
            // starts after them (acquire: the records of a request taken here are visible).
            if let Err(actual) = self.refresh_state.compare_exchange(
                state,
                REFRESH_LOCKED,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                state = actual;
                continue;
            }
            match self.publish_fresh_quantile(now) {
                Published::Yes => {}
                // It asks for a refresh when it is done: served below if that comes while
                // the lock is still held, else by the rotating caller itself. Waiting here
                // could spin forever in an interrupt handler that preempted the rotation.
                Published::RotationUnderWay => {}
                // Rotations kept spoiling the scan: leave the request for a later record.
                Published::GaveUp => {
                    self.refresh_state
                        .fetch_or(REFRESH_WANTED, Ordering::AcqRel);
                }
            }
            state = self
                .refresh_state
                .fetch_and(!REFRESH_LOCKED, Ordering::AcqRel)
                & !REFRESH_LOCKED;
            if state & REFRESH_WANTED == 0 {
                return;
            }
        }
    }

    /// Scans and publishes the cached quantile, again if a rotation overlapped the scan or
    /// came before the publication.
    fn publish_fresh_quantile(&self, now: Instant) -> Published {
        for _ in 0..SCAN_ATTEMPTS {
            let (seen, bin, count) = match self.consistent_scan(self.quantile) {
                Ok(scan) => scan,
                Err(Spoiled::RotationUnderWay) => return Published::RotationUnderWay,
                Err(Spoiled::RotationDuringScan) => continue,
            };
            // Integer operations only with an integer mapping (the bound is its exact
            // edge): a refresh links no soft-float helper on a core without an FPU.
            let bin_word = match bin {
                Some(bin) if count >= u64::from(self.config.min_count.max(1)) => match bin {
                    RankBin::Zero => {
                        self.cached_bound.store(0, Ordering::Relaxed);
                        ZERO_BIN
                    }
                    RankBin::At(pos) => {
                        let bound = self.slot(0).layout().upper_bound_at(pos);
                        self.cached_bound
                            .store(encode_bound(bound), Ordering::Relaxed);
                        pos as u32 // pos < N < 2^31 - 1
                    }
                },
                _ => NO_QUANTILE,
            };
            // Only refreshers (one at a time) and rotations write the word, and a rotation
            // always changes it: the swap fails exactly when one came since the scan began.
            // (The release orders the bound stored above before it.)
            if self
                .cached_bin
                .compare_exchange(seen, bin_word, Ordering::Release, Ordering::Relaxed)
                .is_ok()
            {
                self.cached_count
                    .store(u32::try_from(count).unwrap_or(u32::MAX), Ordering::Relaxed);
                self.refreshed_at.store_now(self.refresh_clock.at(now));
                return Published::Yes;
            }
        }
        Published::GaveUp
    }

    /// The bin of quantile `q` and the count of one scan of the slots that no rotation
    /// overlapped (the seqlock's reader side), with the cached word as it was when the scan
    /// began.
    fn consistent_scan(&self, q: Quantile) -> Result<(u32, Option<RankBin>, u64), Spoiled> {
        let before = self.generation.load(Ordering::Acquire);
        if before & 1 == 1 {
            return Err(Spoiled::RotationUnderWay);
        }
        let seen = self.cached_bin.load(Ordering::Acquire);
        let (bin, count) = rank_bin(&Occupied::new(self.slots.as_slice()), q);
        fence(Ordering::Acquire);
        if self.generation.load(Ordering::Relaxed) == before {
            Ok((seen, bin, count))
        } else {
            Err(Spoiled::RotationDuringScan)
        }
    }

    /// The configured quantile (p90 by default) as last cached, or `None` while the window
    /// holds fewer than `min_count` values (as of the last refresh). One atomic load and
    /// the bin's representative value (computed in `f64`, rounded to `f32`: relative
    /// precision 6e-8); see the [module docs](self) for when it is refreshed and what it
    /// is. For a hot path, and for cores without a double-precision FPU, read
    /// [`cached_upper_bound`](Self::cached_upper_bound) instead: integers only.
    #[inline]
    pub fn cached_quantile(&self) -> Option<f64> {
        let word = self.cached_bin.load(Ordering::Relaxed);
        if !is_published(word) {
            return None;
        }
        Some(if word == ZERO_BIN {
            0.0
        } else {
            // `as f32` keeps the value what it was when the cache held f32 bits.
            f64::from(self.slot(0).layout().value_at(word as usize) as f32)
        })
    }

    /// The upper edge of the cached quantile's bin as a whole number (nanoseconds, for
    /// latencies): at or above every value of that bin ([`IndexMapping::upper_bound_u64`],
    /// kept to 26 significant bits, rounded up), 0 for the zero bin; `None` exactly when
    /// [`cached_quantile`](Self::cached_quantile) is. From the same refresh, or, while a
    /// refresher is publishing, from its scan (as consistent, and newer). Two atomic loads
    /// and a shift, integer operations only: the [`Hedger`](crate::hedge::Hedger) waits
    /// this long before it hedges.
    ///
    /// ```
    /// use tailguard::clock::ManualClock;
    /// use tailguard::sketch::presets;
    /// use tailguard::window::{Window, WindowConfig};
    ///
    /// let clock = ManualClock::new();
    /// let window = Window::like(&clock, &presets::int_latency(), WindowConfig::new()).unwrap();
    /// window.record_u64(2_000_000);
    /// window.maintain();
    /// let bound = window.cached_upper_bound().unwrap();
    /// assert!(bound >= 2_000_000 && bound <= 2_020_000);
    /// ```
    #[inline]
    pub fn cached_upper_bound(&self) -> Option<u64> {
        // Acquire: the bound stored before this word was published is visible.
        let bin = self.cached_bin.load(Ordering::Acquire);
        is_published(bin).then(|| decode_bound(self.cached_bound.load(Ordering::Relaxed)))
    }

    /// How many values the window held at the last refresh of the cached quantile
    /// (saturating at `u32::MAX`), counted by the same scan. One atomic load.
    #[inline]
    pub fn cached_count(&self) -> u32 {
        self.cached_count.load(Ordering::Relaxed)
    }

    /// The value at quantile `q` over the window, computed now (scans the occupied bins); `None` if
    /// the window is empty.
    ///
    /// `q = 0` and `q = 1` give the min and max recorded (to a part per million, rounded
    /// down, as [`AtomicSketch::min`]); other quantiles the representative of the rank's bin
    /// (rank `floor(q * (count - 1))`), within the sketch's relative accuracy of the exact
    /// sample quantile, from a scan that no rotation overlapped (retried a few times if
    /// rotations keep coming). Records racing the scan may or may not be seen.
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
        let extreme = if q.is_min() {
            self.slots
                .iter()
                .filter_map(AtomicSketch::min)
                .reduce(f64::min)
        } else if q.is_max() {
            self.slots
                .iter()
                .filter_map(AtomicSketch::max)
                .reduce(f64::max)
        } else {
            None
        };
        Ok(extreme.or(value))
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
    pub fn count(&self) -> u64 {
        self.maintain();
        self.slots.iter().map(AtomicSketch::count).sum()
    }

    /// All values in the window as one plain [`DDSketch`].
    pub fn snapshot(&self) -> DDSketch<M, N> {
        self.maintain();
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
                &decode_bound(self.cached_bound.load(Ordering::Relaxed)),
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
    use crate::sketch::{presets, CubicMapping, IntMapping, LogMapping};

    type TestWindow<'a> = Window<&'a ManualClock, CubicMapping, 931>;

    fn window(clock: &ManualClock, config: WindowConfig) -> TestWindow<'_> {
        Window::like(clock, &presets::cubic_latency(), config).unwrap()
    }

    const SEC: Duration = Duration::from_secs(1);

    #[test]
    fn quantiles_see_the_current_and_previous_interval() {
        let clock = ManualClock::new();
        let w = window(&clock, WindowConfig::new().with_interval(10 * SEC));
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
    fn a_long_jump_empties_the_window_and_the_cached_quantile() {
        let clock = ManualClock::new();
        let w = window(&clock, WindowConfig::new());
        for ms in 1..=50 {
            w.record_duration(Duration::from_millis(ms));
        }
        w.maintain();
        assert!(w.cached_quantile().is_some());
        clock.advance(Duration::from_secs(3600 * 24 * 365));
        w.maintain();
        assert_eq!(w.count(), 0);
        assert_eq!(w.cached_quantile(), None);
        assert_eq!(w.cached_count(), 0);
        assert_eq!(w.expired(), 50);
    }

    #[test]
    fn a_clock_a_little_behind_records_into_its_own_interval() {
        let origin = 1u64 << 40;
        let clock = ManualClock::starting_at(Instant::from_nanos(origin));
        let w = window(&clock, WindowConfig::new());
        clock.advance(45 * SEC); // interval 1
        w.record_duration(Duration::from_millis(5));
        clock.set(Instant::from_nanos(origin + 25_000_000_000)); // interval 0: in the window
        w.record_duration(Duration::from_millis(6));
        clock.set(Instant::ZERO); // before the origin: reads as the origin, interval 0
        w.record_duration(Duration::from_millis(7));
        assert_eq!((w.count(), w.expired(), w.rotations()), (3, 0, 1));
        clock.set(Instant::from_nanos(origin + 65_000_000_000)); // interval 2: 0 leaves
        assert_eq!((w.count(), w.expired()), (1, 2));
        assert_eq!(w.quantile(1.0).unwrap(), Some(5e6));
    }

    #[test]
    fn a_clock_that_goes_back_past_the_window_restarts_it() {
        let origin = 1u64 << 40;
        let clock = ManualClock::starting_at(Instant::from_nanos(origin));
        let w = window(&clock, WindowConfig::new());
        clock.advance(300 * SEC); // interval 10
        w.record_duration(Duration::from_millis(5));
        w.record_duration(Duration::from_millis(5));
        clock.set(Instant::from_nanos(origin + 30_000_000_000)); // interval 1: far behind
        w.record_duration(Duration::from_millis(9));
        assert_eq!((w.count(), w.expired()), (1, 2));
        assert_eq!(w.quantile(0.0).unwrap(), Some(9e6));
        // It now forgets at the pace of the clock it follows.
        clock.advance(30 * SEC);
        assert_eq!(w.count(), 1);
        clock.advance(30 * SEC);
        assert_eq!((w.count(), w.expired()), (0, 3));
    }

    #[test]
    fn a_stale_reading_behind_the_window_expires_nothing() {
        let clock = ManualClock::starting_at(Instant::from_nanos(1 << 40));
        let w = window(&clock, WindowConfig::new());
        let stale = clock.now();
        clock.advance(300 * SEC);
        w.record_duration(Duration::from_millis(5));
        // A `now` read long ago (a caller delayed after reading the clock): the clock is
        // read again, and the record goes to the current interval.
        w.record_duration_at(stale, Duration::from_millis(6));
        assert_eq!((w.count(), w.expired()), (2, 0));
    }

    #[test]
    fn quantile_is_cached_and_refreshed_by_count_time_and_rotation() {
        let clock = ManualClock::new();
        let config = WindowConfig::new()
            .with_refresh_records(0)
            .with_refresh_interval(Duration::ZERO)
            .with_warmup_records(10);
        let w = window(&clock, config);
        for _ in 0..10 {
            w.record_duration(Duration::from_millis(5));
        }
        // Records ask, maintenance scans: nothing is cached until then.
        assert_eq!(w.cached_quantile(), None);
        w.maintain();
        let warm = w.cached_quantile().unwrap();
        assert!((warm - 5e6).abs() <= 0.01 * 5e6);
        for _ in 0..1000 {
            w.record_duration(Duration::from_millis(50));
        }
        w.maintain();
        assert_eq!(
            w.cached_quantile(),
            Some(warm),
            "no refresh configured: still cached"
        );
        assert_eq!(w.cached_count(), 10);
        w.refresh();
        assert!((w.cached_quantile().unwrap() - 50e6).abs() <= 0.01 * 50e6);

        let by_count = window(&clock, config.with_refresh_records(100));
        for _ in 0..200 {
            by_count.record_duration(Duration::from_millis(7));
            by_count.maintain();
        }
        assert_eq!(
            by_count.cached_count(),
            128,
            "refreshed when the bin reached 128"
        );

        let by_time = window(&clock, config.with_refresh_interval(SEC));
        for _ in 0..20 {
            by_time.record_duration(Duration::from_millis(7));
            by_time.maintain();
        }
        assert_eq!(by_time.cached_count(), 10);
        clock.advance(SEC);
        by_time.record_duration(Duration::from_millis(7));
        assert_eq!(by_time.cached_count(), 10, "a record never scans");
        by_time.maintain();
        assert_eq!(by_time.cached_count(), 21);
        clock.advance(30 * SEC);
        by_time.maintain();
        assert_eq!(by_time.cached_count(), 21, "refreshed at rotation");
    }

    /// With `rotate_on_record(false)` no record rotates, whatever the clock does; records
    /// past the window go to their own interval's slot, behind it to the published one,
    /// and the maintenance that rotates conserves them all.
    #[test]
    fn records_that_do_not_rotate_are_kept_until_maintenance() {
        let origin = 1u64 << 40;
        let clock = ManualClock::starting_at(Instant::from_nanos(origin));
        let w = window(&clock, WindowConfig::new().with_rotate_on_record(false));
        w.record_duration(Duration::from_millis(1)); // interval 0
        clock.advance(30 * SEC); // interval 1: one ahead of the published interval
        w.record_duration(Duration::from_millis(2));
        clock.advance(300 * SEC); // interval 11: far ahead
        w.record_duration(Duration::from_millis(3));
        clock.set(Instant::from_nanos(origin - 1)); // behind the origin: interval 0
        w.record_duration(Duration::from_millis(4));
        assert_eq!(w.rotations(), 0, "no record rotated");
        assert_eq!(w.expired(), 0);
        clock.set(Instant::from_nanos(origin + 30_000_000_000)); // interval 1
        w.maintain();
        // The record of interval 11 was in interval 2's slot, which leaves now: expired.
        assert_eq!((w.rotations(), w.count(), w.expired()), (1, 3, 1));
        clock.advance(300 * SEC); // interval 11: every slot leaves
        w.maintain();
        assert_eq!((w.count(), w.expired()), (0, 4));
        assert_eq!(w.cached_quantile(), None);
    }

    /// The integer threshold is the upper edge of the cached quantile's bin, `None` exactly
    /// when the cached quantile is, withdrawn by a rotation with it, and follows refreshes.
    #[test]
    fn the_cached_upper_bound_is_the_cached_bins_edge() {
        let clock = ManualClock::new();
        let w = Window::like(&clock, &presets::int_latency(), WindowConfig::new()).unwrap();
        assert_eq!(w.cached_upper_bound(), None);
        for ms in 1..=100 {
            w.record_duration(Duration::from_millis(ms));
        }
        w.maintain();
        let q = w.cached_quantile().unwrap();
        let bound = w.cached_upper_bound().unwrap();
        let m = IntMapping::K6;
        let edge = m.upper_bound_u64(m.index(q));
        assert!(
            bound >= edge && bound - edge <= edge >> 25,
            "{bound} vs {edge}"
        );
        assert!(
            bound as f64 > q && (bound as f64) < q * 1.01,
            "{bound} vs {q}"
        );
        // A rotation withdraws both; the next maintenance publishes both again.
        clock.advance(Duration::from_secs(30));
        w.record_duration(Duration::from_millis(7));
        assert_eq!((w.cached_quantile(), w.cached_upper_bound()), (None, None));
        w.maintain();
        let q = w.cached_quantile().unwrap();
        assert!((q - 90e6).abs() <= 0.01 * 90e6, "{q}"); // the previous interval's p90
        assert_eq!(w.cached_upper_bound(), Some(m.upper_bound_u64(m.index(q))));
        // Values in the zero bin: a bound of 0.
        let z = Window::like(&clock, &presets::int_latency(), WindowConfig::new()).unwrap();
        z.record_u64(0);
        z.maintain();
        assert_eq!(
            (z.cached_quantile(), z.cached_upper_bound()),
            (Some(0.0), Some(0))
        );
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
            bad(WindowConfig::new().with_interval(Duration::ZERO)),
            Some(WindowError::InvalidInterval)
        );
        for q in [0.0, 1.0, f64::NAN, -1.0] {
            assert_eq!(
                bad(WindowConfig::new().with_quantile(q)),
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
