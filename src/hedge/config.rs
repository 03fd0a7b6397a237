//! [`HedgeConfig`]: the hedging policy's knobs, with defaults and a `const` builder.

use core::fmt;
use core::time::Duration;

use crate::budget::BudgetError;
use crate::window::WindowError;

/// The most hedges a request may have ([`HedgeConfig::with_max_hedges`]): every driver
/// holds this many backup attempts, so none caps the configuration silently.
pub const MAX_HEDGES: u8 = 2;

/// What to do before the window holds `min_samples` latencies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum ColdStart {
    /// Do not hedge until the delay can be learned (the default).
    NoHedge,
    /// Hedge after this fixed delay until then.
    Delay(Duration),
}

/// The hedging policy's configuration.
///
/// ```
/// use core::time::Duration;
/// use tailguard::hedge::{ColdStart, HedgeConfig};
///
/// const CONFIG: HedgeConfig = HedgeConfig::new()
///     .with_percentile(0.95)
///     .with_min_delay(Duration::from_millis(2))
///     .with_cold_start(ColdStart::Delay(Duration::from_millis(50)));
/// assert_eq!(CONFIG.percentile(), 0.95);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct HedgeConfig {
    pub(crate) percentile: f64,
    pub(crate) interval: Duration,
    pub(crate) min_delay: Duration,
    pub(crate) max_delay: Duration,
    pub(crate) min_samples: u32,
    pub(crate) cold_start: ColdStart,
    pub(crate) budget_ratio: f64,
    pub(crate) budget_cap: u32,
    pub(crate) max_hedges: u8,
    pub(crate) cooldown: Duration,
    pub(crate) backoff_factor: u32,
    pub(crate) rotate_on_record: bool,
    pub(crate) max_pushback: Duration,
}

impl HedgeConfig {
    /// The defaults: hedge at the p90 of the last 30-60 s, between 1 ms and 30 s, after 20
    /// samples (no hedging before), at most one hedge per request, within a budget of 10 %
    /// of requests (50 tokens saved up at most, so bursts of slow requests are covered);
    /// a rate-limit signal empties the budget and doubles the delay for 10 s, and a
    /// server's pushback stops hedging for as long as it asks, up to a minute.
    ///
    /// `examples/simulate/` measures these against a sweep of static delays.
    pub const fn new() -> Self {
        HedgeConfig {
            percentile: 0.9,
            interval: Duration::from_secs(30),
            min_delay: Duration::from_millis(1),
            max_delay: Duration::from_secs(30),
            min_samples: 20,
            cold_start: ColdStart::NoHedge,
            budget_ratio: 0.1,
            budget_cap: 50,
            max_hedges: 1,
            cooldown: Duration::from_secs(10),
            backoff_factor: 2,
            rotate_on_record: true,
            max_pushback: Duration::from_secs(60),
        }
    }

    /// The latency percentile after which a backup is sent, in (0, 1).
    pub const fn with_percentile(mut self, q: f64) -> Self {
        self.percentile = q;
        self
    }

    /// The window interval: quantiles see the last one to two of them.
    pub const fn with_interval(mut self, interval: Duration) -> Self {
        self.interval = interval;
        self
    }

    /// The shortest hedge delay.
    pub const fn with_min_delay(mut self, d: Duration) -> Self {
        self.min_delay = d;
        self
    }

    /// The longest hedge delay.
    pub const fn with_max_delay(mut self, d: Duration) -> Self {
        self.max_delay = d;
        self
    }

    /// Latencies the window must hold before its percentile is trusted.
    pub const fn with_min_samples(mut self, n: u32) -> Self {
        self.min_samples = n;
        self
    }

    /// The behaviour before `min_samples` latencies are known.
    pub const fn with_cold_start(mut self, c: ColdStart) -> Self {
        self.cold_start = c;
        self
    }

    /// The share of requests that may be hedged (the ratio budget's deposit per request).
    pub const fn with_budget_ratio(mut self, ratio: f64) -> Self {
        self.budget_ratio = ratio;
        self
    }

    /// The most hedge tokens the budget saves up.
    pub const fn with_budget_cap(mut self, tokens: u32) -> Self {
        self.budget_cap = tokens;
        self
    }

    /// Hedges per request, from 1 to [`MAX_HEDGES`]: hedge `k` is sent after `k` delays.
    /// Every driver of the crate ([`race`](crate::hedge::race), `race_embassy`, the tower
    /// layer) sends that many; a hedger with more is refused when it is built
    /// ([`HedgeError::TooManyHedges`]).
    pub const fn with_max_hedges(mut self, n: u8) -> Self {
        self.max_hedges = n;
        self
    }

    /// How long a rate-limit signal raises the delay.
    pub const fn with_cooldown(mut self, d: Duration) -> Self {
        self.cooldown = d;
        self
    }

    /// By how much a rate-limit signal multiplies the delay during the cooldown (>= 1).
    pub const fn with_backoff_factor(mut self, factor: u32) -> Self {
        self.backoff_factor = factor;
        self
    }

    /// Whether a latency recorded by [`Hedger::record`](crate::hedge::Hedger::record) (or
    /// by the drivers when a request ends) may rotate the hedger's window when it is the
    /// first record of a new interval (the default), as
    /// [`WindowConfig::with_rotate_on_record`](crate::window::WindowConfig::with_rotate_on_record)
    /// says. With `false` a record does bounded work whatever the clock did, for
    /// latencies recorded in an interrupt handler: the rotation is left to
    /// [`Hedger::start`](crate::hedge::Hedger::start), which maintains the window before
    /// every request, or to `hedger.window().maintain()`.
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::clock::ManualClock;
    /// use tailguard::hedge::{HedgeConfig, Hedger};
    ///
    /// let clock = ManualClock::new();
    /// let config = HedgeConfig::new()
    ///     .with_interval(Duration::from_secs(1))
    ///     .with_rotate_on_record(false);
    /// let hedger = Hedger::new(&clock, config).unwrap();
    /// hedger.record(Duration::from_millis(3));
    /// clock.advance(Duration::from_secs(5)); // the window's intervals are long gone
    /// hedger.record(Duration::from_millis(4)); // bounded work: no rotation here
    /// assert_eq!(hedger.window().rotations(), 0);
    /// let _ticket = hedger.start(); // the request's start rotates
    /// assert_eq!(hedger.window().rotations(), 1);
    /// ```
    pub const fn with_rotate_on_record(mut self, rotate: bool) -> Self {
        self.rotate_on_record = rotate;
        self
    }

    /// The longest a server's pushback may stop hedging
    /// ([`Hedger::on_rate_limited_for`](crate::hedge::Hedger::on_rate_limited_for)):
    /// longer ones are shortened to it and counted in
    /// [`Stats::pushbacks_clamped`](crate::hedge::Stats::pushbacks_clamped). Whatever it
    /// says, no pushback lasts more than about six days (2^29 ticks of the cooldown's
    /// coarse clock), so `Duration::MAX` honours every server up to that.
    /// `Duration::ZERO` ignores the servers' durations: a pushback is then a plain
    /// rate-limit signal (the budget drained, the cooldown's back-off), and every nonzero
    /// one counts as clamped.
    ///
    /// The default, 60 s, honours the usual throttling windows (a per-second or per-minute
    /// quota asks for at most a minute) while a server that asks for hours, by mistake,
    /// for maintenance or on purpose, costs at most a minute of tail protection per
    /// signal. Only backups are held back: requests themselves are never delayed.
    pub const fn with_max_pushback(mut self, d: Duration) -> Self {
        self.max_pushback = d;
        self
    }

    /// The hedge percentile.
    pub const fn percentile(&self) -> f64 {
        self.percentile
    }

    /// The window interval.
    pub const fn interval(&self) -> Duration {
        self.interval
    }

    /// The shortest hedge delay.
    pub const fn min_delay(&self) -> Duration {
        self.min_delay
    }

    /// The longest hedge delay.
    pub const fn max_delay(&self) -> Duration {
        self.max_delay
    }

    /// Latencies the window must hold before its percentile is trusted.
    pub const fn min_samples(&self) -> u32 {
        self.min_samples
    }

    /// The behaviour before `min_samples` latencies are known.
    pub const fn cold_start(&self) -> ColdStart {
        self.cold_start
    }

    /// The ratio budget's share of requests.
    pub const fn budget_ratio(&self) -> f64 {
        self.budget_ratio
    }

    /// The ratio budget's cap, in tokens.
    pub const fn budget_cap(&self) -> u32 {
        self.budget_cap
    }

    /// Hedges per request.
    pub const fn max_hedges(&self) -> u8 {
        self.max_hedges
    }

    /// How long a rate-limit signal raises the delay.
    pub const fn cooldown(&self) -> Duration {
        self.cooldown
    }

    /// The back-off factor.
    pub const fn backoff_factor(&self) -> u32 {
        self.backoff_factor
    }

    /// Whether records may rotate the window (see
    /// [`with_rotate_on_record`](Self::with_rotate_on_record)).
    pub const fn rotate_on_record(&self) -> bool {
        self.rotate_on_record
    }

    /// The longest a server's pushback may stop hedging (see
    /// [`with_max_pushback`](Self::with_max_pushback)).
    pub const fn max_pushback(&self) -> Duration {
        self.max_pushback
    }

    pub(crate) const fn validate(&self) -> Result<(), HedgeError> {
        if !(self.percentile > 0.0 && self.percentile < 1.0) {
            return Err(HedgeError::InvalidPercentile);
        }
        // `Duration`'s `>` is a trait method, not `const`: compare the nanoseconds.
        if self.min_delay.as_nanos() > self.max_delay.as_nanos() {
            return Err(HedgeError::InvalidDelayBounds);
        }
        if self.max_hedges == 0 || self.backoff_factor == 0 {
            return Err(HedgeError::InvalidLimit);
        }
        if self.max_hedges > MAX_HEDGES {
            return Err(HedgeError::TooManyHedges);
        }
        Ok(())
    }
}

impl Default for HedgeConfig {
    fn default() -> Self {
        Self::new()
    }
}

/// Why a hedger could not be built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum HedgeError {
    /// The percentile is not in (0, 1).
    InvalidPercentile,
    /// `min_delay` is above `max_delay`.
    InvalidDelayBounds,
    /// `max_hedges` or `backoff_factor` is zero.
    InvalidLimit,
    /// `max_hedges` is above [`MAX_HEDGES`], the most backups the drivers hold.
    TooManyHedges,
    /// The window configuration was refused.
    Window(WindowError),
    /// The budget configuration was refused.
    Budget(BudgetError),
}

impl fmt::Display for HedgeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HedgeError::InvalidPercentile => f.write_str("hedge percentile must be in (0, 1)"),
            HedgeError::InvalidDelayBounds => f.write_str("min_delay must not exceed max_delay"),
            HedgeError::InvalidLimit => {
                f.write_str("max_hedges and backoff_factor must be at least 1")
            }
            HedgeError::TooManyHedges => {
                write!(f, "max_hedges must be at most {MAX_HEDGES}")
            }
            HedgeError::Window(e) => write!(f, "window: {e}"),
            HedgeError::Budget(e) => write!(f, "budget: {e}"),
        }
    }
}

impl core::error::Error for HedgeError {}

impl From<WindowError> for HedgeError {
    fn from(e: WindowError) -> Self {
        HedgeError::Window(e)
    }
}

impl From<BudgetError> for HedgeError {
    fn from(e: BudgetError) -> Self {
        HedgeError::Budget(e)
    }
}
