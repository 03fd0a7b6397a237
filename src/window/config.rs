//! A window's configuration ([`WindowConfig`]), why one is refused ([`WindowError`]), and
//! what a checked one makes of the window's fields ([`Parts`]).

use core::fmt;
use core::time::Duration;

use crate::clock::coarse::CoarseClock;
use crate::clock::{duration_to_nanos, Instant};
use crate::sketch::rank::Quantile;
use crate::sketch::ConfigError;

/// The refresh clock's tick: 2^20 ns (about 1 ms).
const REFRESH_UNIT_NS: u64 = 1 << 20;

/// The most quantiles a window caches ([`WindowConfig::with_quantiles`]): one per hedge a
/// [`Hedger`](crate::hedge::Hedger) may send.
///
/// ```
/// use tailguard::clock::ManualClock;
/// use tailguard::sketch::presets;
/// use tailguard::window::{Window, WindowConfig, WindowError, MAX_CACHED_QUANTILES};
///
/// let clock = ManualClock::new();
/// let layout = presets::INT_LATENCY_LAYOUT;
/// let two = WindowConfig::new().with_quantiles(&[0.9, 0.99]);
/// assert_eq!(two.quantiles().len(), MAX_CACHED_QUANTILES);
/// assert!(Window::with_layout(&clock, layout, two).is_ok());
/// let three = WindowConfig::new().with_quantiles(&[0.5, 0.9, 0.99]);
/// let refused = Window::with_layout(&clock, layout, three).err();
/// assert_eq!(refused, Some(WindowError::QuantileCount));
/// ```
pub const MAX_CACHED_QUANTILES: usize = 2;

/// How a [`Window`](super::Window) rotates and refreshes its cached quantile.
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
    pub(super) interval: Duration,
    /// The cached quantiles: the first `quantile_count` are configured.
    pub(super) quantiles: [f64; MAX_CACHED_QUANTILES],
    /// How many quantiles [`with_quantiles`](Self::with_quantiles) was given (refused
    /// above [`MAX_CACHED_QUANTILES`]).
    pub(super) quantile_count: usize,
    pub(super) refresh_records: u32,
    pub(super) refresh_interval: Duration,
    pub(super) warmup_records: u32,
    pub(super) min_count: u32,
    pub(super) rotate_on_record: bool,
}

/// A window configuration known when the program is compiled, as a type: an
/// [`ExponentialWindow`](super::ExponentialWindow)`<_, _, _, _, P>` built with `P`'s
/// configuration (and [`Instant::ZERO`](crate::Instant::ZERO) as its origin) is all zero
/// bytes, so a `static` of it is `.bss` rather than `.data` (no copy of it in flash).
/// Other configurations still work, each setting read a XOR away. Every
/// [`HedgePreset`](crate::hedge::HedgePreset) is one, with the window its configuration
/// builds; the default, [`Defaults`](crate::preset::Defaults), is a default hedger's.
///
/// ```
/// use core::time::Duration;
/// use tailguard::clock::{Instant, ManualClock};
/// use tailguard::window::{ExponentialWindow, WindowConfig, WindowPreset};
///
/// struct Fast;
/// impl WindowPreset for Fast {
///     const CONFIG: WindowConfig = WindowConfig::new().with_interval(Duration::from_millis(100));
/// }
///
/// static CLOCK: ManualClock = ManualClock::new();
/// static WINDOW: ExponentialWindow<&ManualClock, u16, 64, 3, Fast> =
///     match ExponentialWindow::with_config_and_origin(&CLOCK, Fast::CONFIG, Instant::ZERO) {
///         Ok(window) => window,
///         Err(_) => panic!("invalid window configuration"), // a compile error
///     };
///
/// WINDOW.record_u64(2_000_000);
/// assert_eq!(WINDOW.count(), 1);
/// ```
pub trait WindowPreset {
    /// The configuration.
    const CONFIG: WindowConfig;
}

impl WindowConfig {
    /// The defaults: 30 s intervals, p90 cached, refreshed when a bin's count reaches a
    /// power of two or a multiple of 1,024, every second, and on every record until the
    /// window holds 32 values; cached from one value up.
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::window::WindowConfig;
    ///
    /// let config = WindowConfig::new();
    /// assert_eq!(config.interval(), Duration::from_secs(30));
    /// assert_eq!(config.quantiles(), &[0.9]);
    /// assert_eq!(config.refresh_records(), 1024);
    /// assert_eq!(config.refresh_interval(), Duration::from_secs(1));
    /// assert_eq!(config.warmup_records(), 32);
    /// assert_eq!(config.min_count(), 1);
    /// assert!(config.rotate_on_record());
    /// assert_eq!(config, WindowConfig::default());
    /// ```
    pub const fn new() -> Self {
        WindowConfig {
            interval: Duration::from_secs(30),
            quantiles: [0.9; MAX_CACHED_QUANTILES],
            quantile_count: 1,
            refresh_records: 1024,
            refresh_interval: Duration::from_secs(1),
            warmup_records: 32,
            min_count: 1,
            rotate_on_record: true,
        }
    }

    /// The length of one interval (at least 8 ns).
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::clock::ManualClock;
    /// use tailguard::sketch::presets;
    /// use tailguard::window::{Window, WindowConfig, WindowError};
    ///
    /// let clock = ManualClock::new();
    /// let layout = presets::INT_LATENCY_LAYOUT;
    /// let config = WindowConfig::new().with_interval(Duration::from_secs(5));
    /// let window = Window::with_layout(&clock, layout, config).unwrap();
    /// window.record_u64(1_000_000);
    /// clock.advance(Duration::from_secs(9)); // the next interval: still in the window
    /// assert_eq!(window.count(), 1);
    /// clock.advance(Duration::from_secs(10)); // three slots later: forgotten
    /// assert_eq!(window.count(), 0);
    ///
    /// let too_short = WindowConfig::new().with_interval(Duration::from_nanos(4));
    /// let refused = Window::with_layout(&clock, layout, too_short).err();
    /// assert_eq!(refused, Some(WindowError::InvalidInterval));
    /// ```
    pub const fn with_interval(mut self, interval: Duration) -> Self {
        self.interval = interval;
        self
    }

    /// The quantile [`Window::cached_quantile`](super::Window::cached_quantile) caches, in
    /// (0, 1).
    ///
    /// ```
    /// use tailguard::clock::ManualClock;
    /// use tailguard::sketch::presets;
    /// use tailguard::window::{Window, WindowConfig, WindowError};
    ///
    /// let clock = ManualClock::new();
    /// let layout = presets::INT_LATENCY_LAYOUT;
    /// let config = WindowConfig::new().with_quantile(0.5);
    /// let window = Window::with_layout(&clock, layout, config).unwrap();
    /// for ms in 1..=100 {
    ///     window.record_u64(ms * 1_000_000);
    /// }
    /// window.maintain();
    /// let p50 = window.cached_quantile().unwrap();
    /// assert!((p50 - 50e6).abs() <= 0.01 * 50e6);
    ///
    /// let p100 = WindowConfig::new().with_quantile(1.0);
    /// let refused = Window::with_layout(&clock, layout, p100).err();
    /// assert_eq!(refused, Some(WindowError::InvalidQuantile));
    /// ```
    pub const fn with_quantile(mut self, q: f64) -> Self {
        self.quantiles = [q; MAX_CACHED_QUANTILES];
        self.quantile_count = 1;
        self
    }

    /// Several quantiles to cache, each in (0, 1), from one to [`MAX_CACHED_QUANTILES`]
    /// (more, or none, is refused when the window is built); the first is
    /// [`with_quantile`](Self::with_quantile)'s. Every refresh computes them all from one
    /// scan, and [`Window::cached_upper_bound_of`](super::Window::cached_upper_bound_of)
    /// reads each with integer operations only: a
    /// [`Hedger`](crate::hedge::Hedger) with a percentile per hedge caches them so.
    ///
    /// ```
    /// use tailguard::clock::ManualClock;
    /// use tailguard::sketch::presets;
    /// use tailguard::window::{Window, WindowConfig};
    ///
    /// const CONFIG: WindowConfig = WindowConfig::new().with_quantiles(&[0.95, 0.99]);
    /// assert_eq!(CONFIG.quantiles(), &[0.95, 0.99]);
    /// let clock = ManualClock::new();
    /// let window = Window::with_layout(&clock, presets::INT_LATENCY_LAYOUT, CONFIG).unwrap();
    /// for ms in 1..=100 {
    ///     window.record_u64(ms * 1_000_000);
    /// }
    /// window.maintain();
    /// let p95 = window.cached_upper_bound_of(0).unwrap();
    /// let p99 = window.cached_upper_bound_of(1).unwrap();
    /// assert!(p95 >= 95_000_000 && p99 >= 99_000_000 && p99 <= 100_000_000);
    /// ```
    pub const fn with_quantiles(mut self, quantiles: &[f64]) -> Self {
        // A pattern per length (a `const fn` has no iterators): entries past the first
        // that are not configured repeat it, and more than `MAX_CACHED_QUANTILES` are
        // refused when the window is built.
        if let [first, ref rest @ ..] = *quantiles {
            self.quantiles = match *rest {
                [] => [first; MAX_CACHED_QUANTILES],
                [second, ..] => [first, second],
            };
        }
        self.quantile_count = quantiles.len();
        self
    }

    /// Refresh the cached quantile when a record brings its bin's count to a power of two
    /// (1 included: no bin more than doubles between refreshes unasked) or to a multiple
    /// of `records` (rounded up to a power of two); 0 disables both (an
    /// [`ExponentialWindow`](super::ExponentialWindow)'s buckets still ask at their powers
    /// of two).
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::clock::ManualClock;
    /// use tailguard::sketch::presets;
    /// use tailguard::window::{Window, WindowConfig};
    ///
    /// let clock = ManualClock::new();
    /// let layout = presets::INT_LATENCY_LAYOUT;
    /// // No warm-up and no refresh by time: only the records ask for refreshes.
    /// let base = WindowConfig::new()
    ///     .with_warmup_records(0)
    ///     .with_refresh_interval(Duration::ZERO);
    /// let asking = Window::with_layout(&clock, layout, base).unwrap();
    /// asking.record_u64(2_000_000); // its bin's count is 1, a power of two: asks
    /// asking.maintain();
    /// assert!(asking.cached_quantile().is_some());
    ///
    /// let silent = Window::with_layout(&clock, layout, base.with_refresh_records(0)).unwrap();
    /// silent.record_u64(2_000_000);
    /// silent.maintain(); // nothing asked for a refresh
    /// assert_eq!(silent.cached_quantile(), None);
    /// silent.refresh();
    /// assert!(silent.cached_quantile().is_some());
    /// ```
    pub const fn with_refresh_records(mut self, records: u32) -> Self {
        self.refresh_records = records;
        self
    }

    /// Refresh the cached quantile when this much time has passed since the last refresh
    /// (resolution about 1 ms); zero disables it. The refresh clock (ticks of 2^20 ns)
    /// tells ages up to its horizon, (2^18 - 1) * 2^32 ns (1,125,895.6 s: 13 days 0 h
    /// 44 min 56 s); a last refresh older than that is always due, so an interval longer
    /// than the horizon refreshes at the horizon (at most 8.6 s past it).
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::clock::ManualClock;
    /// use tailguard::sketch::presets;
    /// use tailguard::window::{Window, WindowConfig};
    ///
    /// let clock = ManualClock::new();
    /// // Refreshed by time only: no warm-up, no refresh asked by records.
    /// let config = WindowConfig::new()
    ///     .with_warmup_records(0)
    ///     .with_refresh_records(0)
    ///     .with_refresh_interval(Duration::from_millis(500));
    /// let window = Window::with_layout(&clock, presets::INT_LATENCY_LAYOUT, config).unwrap();
    /// window.record_u64(1_000_000);
    /// window.maintain(); // never refreshed yet: due
    /// assert_eq!(window.cached_count(), 1);
    /// window.record_u64(1_000_000);
    /// window.maintain();
    /// assert_eq!(window.cached_count(), 1); // not due yet
    /// clock.advance(Duration::from_millis(500));
    /// window.maintain();
    /// assert_eq!(window.cached_count(), 2);
    /// ```
    pub const fn with_refresh_interval(mut self, interval: Duration) -> Self {
        self.refresh_interval = interval;
        self
    }

    /// Refresh on every record while the window holds fewer values than this.
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::clock::ManualClock;
    /// use tailguard::sketch::presets;
    /// use tailguard::window::{Window, WindowConfig};
    ///
    /// let clock = ManualClock::new();
    /// // Refreshed only while warming up (under three values).
    /// let config = WindowConfig::new()
    ///     .with_warmup_records(3)
    ///     .with_refresh_records(0)
    ///     .with_refresh_interval(Duration::ZERO);
    /// let window = Window::with_layout(&clock, presets::INT_LATENCY_LAYOUT, config).unwrap();
    /// for expected in [1, 2, 3, 3] {
    ///     window.record_u64(1_000_000);
    ///     window.maintain();
    ///     assert_eq!(window.cached_count(), expected);
    /// }
    /// ```
    pub const fn with_warmup_records(mut self, records: u32) -> Self {
        self.warmup_records = records;
        self
    }

    /// Publish a cached quantile only from a refresh that counted at least this many values
    /// (0 counts as 1); below,
    /// [`Window::cached_quantile`](super::Window::cached_quantile) is `None`.
    ///
    /// ```
    /// use tailguard::clock::ManualClock;
    /// use tailguard::sketch::presets;
    /// use tailguard::window::{Window, WindowConfig};
    ///
    /// let clock = ManualClock::new();
    /// let config = WindowConfig::new().with_min_count(10);
    /// let window = Window::with_layout(&clock, presets::INT_LATENCY_LAYOUT, config).unwrap();
    /// for _ in 0..9 {
    ///     window.record_u64(1_000_000);
    /// }
    /// window.maintain();
    /// assert_eq!(window.cached_count(), 9);
    /// assert_eq!(window.cached_quantile(), None); // too few to trust
    /// window.record_u64(1_000_000);
    /// window.maintain();
    /// assert!(window.cached_quantile().is_some());
    /// ```
    pub const fn with_min_count(mut self, values: u32) -> Self {
        self.min_count = values;
        self
    }

    /// Whether the record that first finds the clock past the published interval rotates
    /// (the default) or leaves the rotation to the next
    /// [`Window::maintain`](super::Window::maintain) (or query). With `false` every record
    /// does the same bounded work, whatever the clock (for interrupt handlers: see the
    /// [module docs](super); the costs are in BENCHMARKS.md, "Window record: worst case per call");
    /// the application must then maintain the window at least once per interval, or
    /// records made after the interval ends are kept in the slot of the interval they
    /// read, ahead of the published one, and those more than one interval ahead may be
    /// expired by the rotation that catches up.
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::clock::ManualClock;
    /// use tailguard::sketch::presets;
    /// use tailguard::window::{Window, WindowConfig};
    ///
    /// let clock = ManualClock::new();
    /// let config = WindowConfig::new()
    ///     .with_interval(Duration::from_secs(10))
    ///     .with_rotate_on_record(false);
    /// let window = Window::with_layout(&clock, presets::INT_LATENCY_LAYOUT, config).unwrap();
    /// clock.advance(Duration::from_secs(10));
    /// window.record_u64(1_000_000); // past the interval, but records do not rotate
    /// assert_eq!(window.rotations(), 0);
    /// window.maintain();
    /// assert_eq!(window.rotations(), 1);
    /// assert_eq!(window.count(), 1); // the record kept, in the interval it read
    /// ```
    pub const fn with_rotate_on_record(mut self, rotate: bool) -> Self {
        self.rotate_on_record = rotate;
        self
    }

    /// Whether records rotate the window.
    ///
    /// ```
    /// use tailguard::window::WindowConfig;
    ///
    /// assert!(WindowConfig::new().rotate_on_record());
    /// assert!(!WindowConfig::new().with_rotate_on_record(false).rotate_on_record());
    /// ```
    pub const fn rotate_on_record(&self) -> bool {
        self.rotate_on_record
    }

    /// The interval length.
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::window::WindowConfig;
    ///
    /// assert_eq!(WindowConfig::new().interval(), Duration::from_secs(30));
    /// let config = WindowConfig::new().with_interval(Duration::from_millis(250));
    /// assert_eq!(config.interval(), Duration::from_millis(250));
    /// ```
    pub const fn interval(&self) -> Duration {
        self.interval
    }

    /// The (first) cached quantile (0.9 is p90).
    ///
    /// ```
    /// use tailguard::window::WindowConfig;
    ///
    /// assert_eq!(WindowConfig::new().quantile(), 0.9);
    /// assert_eq!(WindowConfig::new().with_quantiles(&[0.95, 0.99]).quantile(), 0.95);
    /// ```
    pub const fn quantile(&self) -> f64 {
        self.quantiles[0]
    }

    /// The cached quantiles ([`with_quantiles`](Self::with_quantiles)), at most
    /// [`MAX_CACHED_QUANTILES`] of them.
    ///
    /// ```
    /// use tailguard::window::WindowConfig;
    ///
    /// assert_eq!(WindowConfig::new().quantiles(), &[0.9]);
    /// assert_eq!(WindowConfig::new().with_quantile(0.99).quantiles(), &[0.99]);
    /// // More than MAX_CACHED_QUANTILES: the first ones (the window refuses the configuration).
    /// let three = WindowConfig::new().with_quantiles(&[0.5, 0.9, 0.99]);
    /// assert_eq!(three.quantiles(), &[0.5, 0.9]);
    /// ```
    pub const fn quantiles(&self) -> &[f64] {
        let count = if self.quantile_count < MAX_CACHED_QUANTILES {
            self.quantile_count
        } else {
            MAX_CACHED_QUANTILES
        };
        self.quantiles.split_at(count).0
    }

    /// The bin count multiple that triggers a refresh (0: none by count).
    ///
    /// ```
    /// use tailguard::window::WindowConfig;
    ///
    /// assert_eq!(WindowConfig::new().refresh_records(), 1024);
    /// // As given: the window rounds it up to a power of two.
    /// assert_eq!(WindowConfig::new().with_refresh_records(1000).refresh_records(), 1000);
    /// ```
    pub const fn refresh_records(&self) -> u32 {
        self.refresh_records
    }

    /// The time after which maintenance refreshes (zero: none by time; see
    /// [`with_refresh_interval`](Self::with_refresh_interval) for intervals past about 13
    /// days).
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::window::WindowConfig;
    ///
    /// assert_eq!(WindowConfig::new().refresh_interval(), Duration::from_secs(1));
    /// let config = WindowConfig::new().with_refresh_interval(Duration::ZERO);
    /// assert!(config.refresh_interval().is_zero()); // no refresh by time
    /// ```
    pub const fn refresh_interval(&self) -> Duration {
        self.refresh_interval
    }

    /// The warm-up length in records.
    ///
    /// ```
    /// use tailguard::window::WindowConfig;
    ///
    /// assert_eq!(WindowConfig::new().warmup_records(), 32);
    /// assert_eq!(WindowConfig::new().with_warmup_records(0).warmup_records(), 0);
    /// ```
    pub const fn warmup_records(&self) -> u32 {
        self.warmup_records
    }

    /// The fewest values a published quantile is computed from.
    ///
    /// ```
    /// use tailguard::window::WindowConfig;
    ///
    /// assert_eq!(WindowConfig::new().min_count(), 1);
    /// assert_eq!(WindowConfig::new().with_min_count(100).min_count(), 100);
    /// ```
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
///
/// ```
/// use core::time::Duration;
/// use tailguard::clock::ManualClock;
/// use tailguard::sketch::{ConfigError, IndexMapping, LogMapping};
/// use tailguard::window::{Window, WindowConfig, WindowError};
///
/// let clock = ManualClock::new();
/// let mapping = LogMapping::with_relative_accuracy(0.02).unwrap();
/// let window = |min_value: f64, config: WindowConfig| {
///     Window::<_, LogMapping, 512, 3>::new(&clock, mapping, min_value, config).err()
/// };
/// let short = WindowConfig::new().with_interval(Duration::ZERO);
/// assert_eq!(window(1e6, short), Some(WindowError::InvalidInterval));
/// let p0 = WindowConfig::new().with_quantile(0.0);
/// assert_eq!(window(1e6, p0), Some(WindowError::InvalidQuantile));
/// let none = WindowConfig::new().with_quantiles(&[]);
/// assert_eq!(window(1e6, none), Some(WindowError::QuantileCount));
/// let sketch = window(-1.0, WindowConfig::new());
/// assert_eq!(sketch, Some(WindowError::Sketch(ConfigError::InvalidMinValue)));
/// assert_eq!(
///     WindowError::InvalidQuantile.to_string(),
///     "cached quantile must be in (0, 1)"
/// );
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum WindowError {
    /// The interval is shorter than 8 ns.
    InvalidInterval,
    /// A quantile to cache is not in (0, 1).
    InvalidQuantile,
    /// No quantile, or more than [`MAX_CACHED_QUANTILES`], to cache.
    QuantileCount,
    /// The sketch configuration was refused.
    Sketch(ConfigError),
}

impl fmt::Display for WindowError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WindowError::InvalidInterval => f.write_str("window interval must be at least 8 ns"),
            WindowError::InvalidQuantile => f.write_str("cached quantile must be in (0, 1)"),
            WindowError::QuantileCount => {
                write!(f, "a window caches 1 to {MAX_CACHED_QUANTILES} quantiles")
            }
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

/// What a window's configuration and origin make of it, checked: the fields of a
/// [`Window`](super::Window) that do not depend on the clock, the layout or `SLOTS`.
/// (`pub` only because the hedger's sealed window trait names it; not exported.)
pub struct Parts {
    pub(super) intervals: CoarseClock,
    pub(super) refresh_clock: CoarseClock,
    pub(super) quantiles: [Quantile; MAX_CACHED_QUANTILES],
    pub(super) quantile_count: u8,
    pub(super) refresh_mask: u32,
    pub(super) refresh_ticks: u64,
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
        if config.quantile_count == 0 || config.quantile_count > MAX_CACHED_QUANTILES {
            return Err(WindowError::QuantileCount);
        }
        // Not 0 or 1: a cached value is a bin's representative, never the exact extreme.
        // Unconfigured entries repeat the first (`with_quantiles`): a refresh scans only
        // the configured ones, and their readers get `None` (`cached_upper_bound_of`).
        let [first, second] = config.quantiles;
        let quantiles = match (Quantile::inside(first), Quantile::inside(second)) {
            (Some(a), Some(b)) => [a, b],
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
            quantiles,
            quantile_count: config.quantile_count as u8, // at most MAX_CACHED_QUANTILES
            refresh_mask,
            refresh_ticks,
        })
    }
}
