//! [`HedgeConfig`]: the hedging policy's knobs, with defaults and a `const` builder.

use core::fmt;
use core::time::Duration;

use crate::budget::BudgetError;
use crate::sketch::rank::Quantile;
use crate::window::WindowError;

/// The most hedges a request may have ([`HedgeConfig::with_max_hedges`]): every driver
/// holds this many backup attempts, so none caps the configuration silently.
pub const MAX_HEDGES: u8 = 2;

/// What to do before the window holds `min_samples` latencies.
///
/// ```
/// use core::time::Duration;
/// use tailguard::clock::ManualClock;
/// use tailguard::hedge::{ColdStart, Decision, HedgeConfig, Hedger, SkipReason};
///
/// let clock = ManualClock::new();
/// // The default: no hedge until the window holds `min_samples` latencies.
/// let hedger = Hedger::new(&clock, HedgeConfig::new()).unwrap();
/// let mut ticket = hedger.start();
/// assert_eq!(hedger.should_hedge(&mut ticket), Decision::Skip(SkipReason::ColdStart));
/// // Or a fixed delay until then.
/// let config = HedgeConfig::new().with_cold_start(ColdStart::Delay(Duration::from_millis(50)));
/// let hedger = Hedger::new(&clock, config).unwrap();
/// let mut ticket = hedger.start();
/// assert_eq!(hedger.should_hedge(&mut ticket), Decision::Wait(Duration::from_millis(50)));
/// ```
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
/// assert_eq!(CONFIG.percentiles(), &[0.95]);
/// assert_eq!(CONFIG.min_delay(), Duration::from_millis(2));
/// assert_eq!(CONFIG.cold_start(), ColdStart::Delay(Duration::from_millis(50)));
///
/// // Every knob has a `const` setter and a getter; what is not set keeps its default.
/// let config = HedgeConfig::new()
///     .with_interval(Duration::from_secs(10))
///     .with_max_delay(Duration::from_millis(500))
///     .with_budget_cap(20)
///     .with_max_hedges(2)
///     .with_cooldown(Duration::from_secs(5))
///     .with_backoff_factor(4)
///     .with_max_pushback(Duration::from_secs(30));
/// assert_eq!(config.interval(), Duration::from_secs(10));
/// assert_eq!(config.max_delay(), Duration::from_millis(500));
/// assert_eq!((config.budget_cap(), config.max_hedges()), (20, 2));
/// assert_eq!((config.cooldown(), config.backoff_factor()), (Duration::from_secs(5), 4));
/// assert_eq!(config.max_pushback(), Duration::from_secs(30));
/// assert_eq!((config.min_samples(), config.budget_ratio()), (20, 0.1)); // defaults
/// assert!(config.rotate_on_record());
/// assert_eq!(config.on_time_chance(), None);
/// assert_eq!(config.with_on_time_chance(0.99).on_time_chance(), Some(0.99));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct HedgeConfig {
    /// The hedge percentiles: the first `percentile_count` are configured.
    pub(crate) percentiles: [f64; MAX_HEDGES as usize],
    /// How many [`with_percentiles`](Self::with_percentiles) was given (refused above
    /// [`MAX_HEDGES`]); 1 spaces the hedges by the first percentile's delay.
    pub(crate) percentile_count: usize,
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
    pub(crate) on_time_chance: Option<f64>,
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
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::hedge::{ColdStart, HedgeConfig};
    ///
    /// let config = HedgeConfig::new();
    /// assert_eq!((config.percentile(), config.interval()), (0.9, Duration::from_secs(30)));
    /// assert_eq!(config.min_delay(), Duration::from_millis(1));
    /// assert_eq!(config.max_delay(), Duration::from_secs(30));
    /// assert_eq!((config.min_samples(), config.cold_start()), (20, ColdStart::NoHedge));
    /// assert_eq!((config.max_hedges(), config.budget_ratio(), config.budget_cap()), (1, 0.1, 50));
    /// assert_eq!((config.cooldown(), config.backoff_factor()), (Duration::from_secs(10), 2));
    /// assert_eq!(config.max_pushback(), Duration::from_secs(60));
    /// ```
    pub const fn new() -> Self {
        HedgeConfig {
            percentiles: [0.9; MAX_HEDGES as usize],
            percentile_count: 1,
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
            on_time_chance: None,
            max_pushback: Duration::from_secs(60),
        }
    }

    /// The latency percentile after which a backup is sent, in (0, 1). With more than one
    /// hedge ([`with_max_hedges`](Self::with_max_hedges)), hedge `k` goes out `k` of its
    /// delays after the start; [`with_percentiles`](Self::with_percentiles) gives each
    /// hedge a percentile of its own instead.
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::clock::ManualClock;
    /// use tailguard::hedge::{Attempt, Decision, HedgeConfig, Hedger};
    ///
    /// let clock = ManualClock::new();
    /// let hedger = Hedger::new(&clock, HedgeConfig::new().with_percentile(0.5)).unwrap();
    /// for ms in 1..=100 {
    ///     let ticket = hedger.start();
    ///     clock.advance(Duration::from_millis(ms));
    ///     hedger.on_success(&ticket, Attempt::Primary);
    /// }
    /// let mut ticket = hedger.start();
    /// let Decision::Wait(wait) = hedger.should_hedge(&mut ticket) else { panic!() };
    /// // About the p50 (as of the window's last refresh, a few latencies ago).
    /// assert!(wait >= Duration::from_millis(45) && wait <= Duration::from_millis(51));
    /// ```
    pub const fn with_percentile(mut self, q: f64) -> Self {
        self.percentiles = [q; MAX_HEDGES as usize];
        self.percentile_count = 1;
        self
    }

    /// A percentile per hedge, rising, each in (0, 1): hedge `k` goes out when the
    /// request has run for the `k`-th percentile of the learned latency (the first
    /// backup at the p95 and the second at the p99, say), so a later backup is kept for
    /// the requests that are still slower; and never sooner than the
    /// [shortest delay](Self::with_min_delay) after the backup before it, so two
    /// percentiles that coincide (a point mass, or both clamped to a bound) do not send
    /// two backups at once. Sets [`with_max_hedges`](Self::with_max_hedges)
    /// to their number, from 1 to [`MAX_HEDGES`] (more is refused when the hedger is
    /// built: [`HedgeError::TooManyHedges`]; none, or percentiles that do not rise:
    /// [`HedgeError::InvalidPercentile`]). The window caches every percentile at each
    /// refresh, so a decision still reads one cached word, with integer operations only.
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::clock::ManualClock;
    /// use tailguard::hedge::{Attempt, Decision, HedgeConfig, Hedger};
    ///
    /// let clock = ManualClock::new();
    /// let config = HedgeConfig::new().with_percentiles(&[0.5, 0.99]).with_min_samples(10);
    /// let hedger = Hedger::new(&clock, config).unwrap();
    /// for ms in 1..=100 {
    ///     let ticket = hedger.start();
    ///     clock.advance(Duration::from_millis(ms));
    ///     hedger.on_success(&ticket, Attempt::Primary);
    /// }
    /// let mut ticket = hedger.start();
    /// let Decision::Wait(first) = hedger.should_hedge(&mut ticket) else { panic!() };
    /// // About the p50 (as of the window's last refresh, a few latencies ago).
    /// assert!(first >= Duration::from_millis(45) && first <= Duration::from_millis(51));
    /// clock.advance(first);
    /// assert_eq!(hedger.should_hedge(&mut ticket), Decision::Hedge);
    /// let Decision::Wait(second) = hedger.should_hedge(&mut ticket) else { panic!() };
    /// clock.advance(second);
    /// assert_eq!(hedger.should_hedge(&mut ticket), Decision::Hedge);
    /// // The second backup about the p99 after the start.
    /// let elapsed = hedger.now().as_nanos() - ticket.start().as_nanos();
    /// assert!(elapsed >= 94_000_000 && elapsed <= 101_000_000);
    /// ```
    pub const fn with_percentiles(mut self, percentiles: &[f64]) -> Self {
        // A pattern per length (a `const fn` has no iterators): one entry is repeated, as
        // `with_percentile` stores it, and entries past `MAX_HEDGES` are refused later.
        if let [first, ref rest @ ..] = *percentiles {
            self.percentiles = match *rest {
                [] => [first; MAX_HEDGES as usize],
                [second, ..] => [first, second],
            };
        }
        self.percentile_count = percentiles.len();
        self.max_hedges = if percentiles.len() < u8::MAX as usize {
            percentiles.len() as u8
        } else {
            u8::MAX
        };
        self
    }

    /// The window interval: quantiles see the last one to two of them.
    pub const fn with_interval(mut self, interval: Duration) -> Self {
        self.interval = interval;
        self
    }

    /// The shortest hedge delay. The hedger keeps its delays (these bounds, the
    /// cold-start delay and the learned ones) in whole nanoseconds below 2^64, so a bound
    /// beyond 2^64 - 1 ns (about 584 years; `Duration::MAX`, say) acts as that: the
    /// delays it reports are at most 2^64 - 1 ns, even with a longer `min_delay`.
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::clock::ManualClock;
    /// use tailguard::hedge::{ColdStart, HedgeConfig, Hedger};
    ///
    /// let clock = ManualClock::new();
    /// let config = HedgeConfig::new()
    ///     .with_cold_start(ColdStart::Delay(Duration::from_millis(10)))
    ///     .with_min_delay(Duration::from_millis(25))
    ///     .with_max_delay(Duration::from_millis(50));
    /// let hedger = Hedger::new(&clock, config).unwrap();
    /// assert_eq!(hedger.delay(), Ok(Duration::from_millis(25))); // raised to the bound
    ///
    /// let endless = config.with_min_delay(Duration::MAX).with_max_delay(Duration::MAX);
    /// let hedger = Hedger::new(&clock, endless).unwrap();
    /// assert_eq!(hedger.delay(), Ok(Duration::from_nanos(u64::MAX)));
    /// ```
    pub const fn with_min_delay(mut self, d: Duration) -> Self {
        self.min_delay = d;
        self
    }

    /// The longest hedge delay (at most 2^64 - 1 ns as the hedger keeps it: see
    /// [`with_min_delay`](Self::with_min_delay)).
    pub const fn with_max_delay(mut self, d: Duration) -> Self {
        self.max_delay = d;
        self
    }

    /// Latencies the window must hold before its percentile is trusted.
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::clock::ManualClock;
    /// use tailguard::hedge::{Decision, HedgeConfig, Hedger, SkipReason};
    ///
    /// let clock = ManualClock::new();
    /// let hedger = Hedger::new(&clock, HedgeConfig::new().with_min_samples(3)).unwrap();
    /// hedger.record(Duration::from_millis(5));
    /// hedger.record(Duration::from_millis(5));
    /// let mut ticket = hedger.start();
    /// assert_eq!(hedger.should_hedge(&mut ticket), Decision::Skip(SkipReason::ColdStart));
    /// hedger.record(Duration::from_millis(5)); // the third: the percentile is trusted
    /// let mut ticket = hedger.start();
    /// assert!(matches!(hedger.should_hedge(&mut ticket), Decision::Wait(_)));
    /// ```
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
    ///
    /// ```
    /// use tailguard::budget::Budget;
    /// use tailguard::clock::ManualClock;
    /// use tailguard::hedge::{HedgeConfig, Hedger};
    ///
    /// let clock = ManualClock::new();
    /// let hedger = Hedger::new(&clock, HedgeConfig::new().with_budget_ratio(0.25)).unwrap();
    /// hedger.budget().drain(); // it starts full; empty it to watch the deposits
    /// for _ in 0..4 {
    ///     hedger.start();
    /// }
    /// assert!(hedger.budget().try_acquire()); // four requests paid for one hedge
    /// assert!(!hedger.budget().try_acquire());
    /// ```
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

    /// Deadline-aware hedging: for a request with a deadline
    /// ([`Hedger::start_with_deadline`](crate::hedge::Hedger::start_with_deadline),
    /// [`race_until`](crate::hedge::race_until), the tower layer's [`Deadline`]
    /// extension), the first backup goes no later than when the primary's chance of
    /// answering by the deadline's [target](crate::deadline::Deadline::target), given how
    /// long it has run, falls below `chance` (in (0, 1)), by the window's distribution `F`:
    /// `(F(D) - F(e)) / (1 - F(e))` with `D` the time from the start to the target and
    /// `e` the time it has run. It can only bring a backup forward: a request whose
    /// target is far off is hedged at the percentile, one with little time left earlier,
    /// at the shortest delay if its chance is below `chance` from the start. In a workflow,
    /// aim each step at its share of the time left ([`Deadline::for_step`]), so that a
    /// step is hedged by what the steps after it need, not by the whole deadline.
    ///
    /// No backup goes that could not answer by the deadline: none of the window's
    /// latencies fits in the time left
    /// ([`SkipReason::Deadline`](crate::hedge::SkipReason::Deadline) then; neither
    /// attempt can be expected to make it, and the primary is left to
    /// answer or to run into the deadline, where [`race_until`](crate::hedge::race_until)
    /// cancels it). Later backups, requests without a deadline, and every request before
    /// the window holds `min_samples` latencies follow the percentile; the delay bounds,
    /// the back-off and the budget apply throughout. A decision of a request with a
    /// deadline reads the window's distribution (three scans of its occupied bins, rather
    /// than the percentile's one cached word), with integer operations only (`chance` is
    /// kept in 1/65,536ths).
    ///
    /// The window holds a primary cancelled by a winning backup at its elapsed time, a
    /// lower bound ([what is recorded](crate::hedge#what-is-recorded)), so where backups
    /// win, its tail is shorter than the primary's true one: the rule then sees more
    /// chance than there is and brings backups forward less than it would with every
    /// latency known. It matters most where the target is short against the latencies
    /// the hedges cut.
    ///
    /// [`Deadline`]: crate::deadline::Deadline
    /// [`Deadline::for_step`]: crate::deadline::Deadline::for_step
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::clock::ManualClock;
    /// use tailguard::deadline::Deadline;
    /// use tailguard::hedge::{Attempt, Decision, HedgeConfig, Hedger, SkipReason};
    ///
    /// let clock = ManualClock::new();
    /// let config = HedgeConfig::new().with_min_samples(10).with_on_time_chance(0.9);
    /// let hedger = Hedger::new(&clock, config).unwrap();
    /// for ms in 1..=100 {
    ///     let ticket = hedger.start();
    ///     clock.advance(Duration::from_millis(ms));
    ///     hedger.on_success(&ticket, Attempt::Primary);
    /// }
    /// // A loose deadline: the percentile's delay (the p90, about 90 ms).
    /// let loose = Deadline::after(hedger.now(), Duration::from_secs(1));
    /// let mut ticket = hedger.start_with_deadline(loose);
    /// let Decision::Wait(wait) = hedger.should_hedge(&mut ticket) else { panic!() };
    /// assert!(wait >= Duration::from_millis(85) && wait <= Duration::from_millis(92));
    ///
    /// // 95 ms to the deadline: 95 % of latencies fit. The primary's chance falls below
    /// // 90 % once it has run for about half of them: (0.95 - F(e)) / (1 - F(e)) < 0.9.
    /// let tight = Deadline::after(hedger.now(), Duration::from_millis(95));
    /// let mut ticket = hedger.start_with_deadline(tight);
    /// let Decision::Wait(wait) = hedger.should_hedge(&mut ticket) else { panic!() };
    /// assert!(wait >= Duration::from_millis(45) && wait <= Duration::from_millis(56));
    /// clock.advance(wait);
    /// assert_eq!(hedger.should_hedge(&mut ticket), Decision::Hedge);
    ///
    /// // A deadline closer than any latency seen: hedged at once in principle, but no
    /// // backup could make it either.
    /// let hopeless = Deadline::after(hedger.now(), Duration::from_micros(500));
    /// let mut ticket = hedger.start_with_deadline(hopeless);
    /// let Decision::Wait(wait) = hedger.should_hedge(&mut ticket) else { panic!() };
    /// clock.advance(wait); // the shortest delay
    /// assert_eq!(hedger.should_hedge(&mut ticket), Decision::Skip(SkipReason::Deadline));
    /// ```
    pub const fn with_on_time_chance(mut self, chance: f64) -> Self {
        self.on_time_chance = Some(chance);
        self
    }

    /// The on-time level of deadline-aware hedging, if set
    /// ([`with_on_time_chance`](Self::with_on_time_chance)).
    pub const fn on_time_chance(&self) -> Option<f64> {
        self.on_time_chance
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

    /// The (first) hedge percentile.
    pub const fn percentile(&self) -> f64 {
        self.percentiles[0]
    }

    /// The hedge percentiles: one, or one per hedge
    /// ([`with_percentiles`](Self::with_percentiles)).
    pub const fn percentiles(&self) -> &[f64] {
        let count = if self.percentile_count < MAX_HEDGES as usize {
            self.percentile_count
        } else {
            MAX_HEDGES as usize
        };
        self.percentiles.split_at(count).0
    }

    /// Whether each hedge has a percentile of its own.
    pub(crate) const fn per_hedge_percentiles(&self) -> bool {
        self.percentile_count > 1
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
        if self.percentile_count > MAX_HEDGES as usize {
            return Err(HedgeError::TooManyHedges);
        }
        // On the bits: no soft-float comparison for a hedger built at run time.
        const fn valid(q: f64) -> bool {
            Quantile::inside(q).is_some()
        }
        let percentiles_valid = match *self.percentiles() {
            [q] => valid(q),
            // Positive: their bits order as their values do.
            [first, second] => valid(first) && valid(second) && second.to_bits() > first.to_bits(),
            _ => false, // none
        };
        if !percentiles_valid {
            return Err(HedgeError::InvalidPercentile);
        }
        if let Some(chance) = self.on_time_chance {
            if !valid(chance) {
                return Err(HedgeError::InvalidChance);
            }
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
///
/// ```
/// use core::time::Duration;
/// use tailguard::clock::ManualClock;
/// use tailguard::hedge::{HedgeConfig, HedgeError, Hedger};
///
/// let clock = ManualClock::new();
/// let config = HedgeConfig::new()
///     .with_min_delay(Duration::from_secs(2))
///     .with_max_delay(Duration::from_secs(1));
/// let err = Hedger::new(&clock, config).err().unwrap();
/// assert_eq!(err, HedgeError::InvalidDelayBounds);
/// assert_eq!(err.to_string(), "min_delay must not exceed max_delay");
/// let err = Hedger::new(&clock, HedgeConfig::new().with_percentiles(&[0.99, 0.5])).err();
/// assert_eq!(err, Some(HedgeError::InvalidPercentile)); // they must rise
/// let err = Hedger::new(&clock, HedgeConfig::new().with_max_hedges(3)).err();
/// assert_eq!(err, Some(HedgeError::TooManyHedges));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum HedgeError {
    /// A percentile is not in (0, 1), or the percentiles per hedge do not rise (or there
    /// are none).
    InvalidPercentile,
    /// `min_delay` is above `max_delay`.
    InvalidDelayBounds,
    /// The on-time chance is not in (0, 1).
    InvalidChance,
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
            HedgeError::InvalidPercentile => {
                f.write_str("hedge percentiles must be in (0, 1), one or more, rising")
            }
            HedgeError::InvalidDelayBounds => f.write_str("min_delay must not exceed max_delay"),
            HedgeError::InvalidChance => f.write_str("the on-time chance must be in (0, 1)"),
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
