//! The hedging policy: when to send a backup request, within what budget, and what to
//! learn from the outcome.
//!
//! A [`Hedger`] ties a [`Window`] (the live latency distribution and its cached
//! percentile) to a [`Budget`] (the cap on extra load). Its lifecycle is synchronous, so it
//! works from callbacks, interrupt handlers and any async runtime; [`race`] drives it for
//! two futures.
//!
//! 1. [`start`](Hedger::start) (or [`start_with_deadline`](Hedger::start_with_deadline))
//!    returns a small `Copy` [`Ticket`] holding the start time.
//! 2. [`should_hedge`](Hedger::should_hedge) answers [`Decision::Wait`] (ask again after
//!    that long), [`Decision::Hedge`] (a budget token is taken: send a backup now) or
//!    [`Decision::Skip`] with the reason (stop asking for this request).
//! 3. Report the outcome: [`on_success`](Hedger::on_success) with the attempt that won,
//!    [`on_error`](Hedger::on_error) for a failed attempt, and
//!    [`on_rate_limited`](Hedger::on_rate_limited) for an HTTP 429 or gRPC
//!    RESOURCE_EXHAUSTED ([`on_rate_limited_for`](Hedger::on_rate_limited_for) when the
//!    server said how long to wait: `Retry-After`, `grpc-retry-pushback-ms`).
//!
//! # What is recorded
//!
//! One latency per request: the primary attempt's, exact when it won, or its elapsed time
//! when a hedge won and it was cancelled (a lower bound). Either way the sample is above
//! the hedge delay exactly when the primary's true latency is, so the learned percentile
//! is the primary's true percentile; recording only winners would bias it low and make
//! hedging feed on itself. Failed attempts are counted as errors, never recorded as
//! latency.
//!
//! # Cost
//!
//! `start` is one budget deposit (a compare-and-swap), a counter and the window's
//! [maintenance](Window::maintain) (a clock reading against the published interval and one
//! load: it rotates, once per interval, so that no decision after an idle gap reads expired
//! data, and scans the window's occupied bins when records asked for a refresh of the
//! cached percentile, so the recording path in `on_success` never scans); `should_hedge` is a few
//! atomic loads (the window's threshold, the upper edge of the cached percentile's bin as a
//! whole number of nanoseconds, which is `None` below `min_samples`, the next hedge's own
//! threshold with [a percentile per hedge](HedgeConfig::with_percentiles), and the
//! cooldown stamp)
//! plus one compare-and-swap when it hedges, all in integers. No bin is scanned per request.
//! With an integer mapping ([`IntHedger`], [`McuHedger`]) all of it, refreshes included,
//! links no soft-float helper and no division on a Cortex-M (see
//! [which mapping on which core](crate::sketch#which-mapping-on-which-core)).
//!
//! # Clocks
//!
//! The cooldown is a [coarse time](crate::clock#coarse-time) stamp whose unit grows with the
//! cooldown, so a back-off starts only with a rate-limit signal and lasts its cooldown for
//! any clock reading, any gap and any cooldown up to `Duration::MAX` (which backs off for
//! good). A clock that goes back makes a signal count for as long as it is less than a
//! cooldown away, either way; a server's pushback then holds hedging off for at most
//! [`max_pushback`](HedgeConfig::max_pushback) more; the window forgets or restarts as its
//! own docs say; a request that ends at a reading before its start records no latency
//! (counted in [`Stats::unmeasured`]).

mod compact;
mod config;
mod kind;
mod on_time;
mod policy;
mod preset;
mod race;
mod settings;
mod stats;

use core::time::Duration;

use crate::budget::{Budget, RatioBudget};
use crate::clock::coarse::{Age, AtomicCoarseInstant, CoarseClock, CoarseInstant};
use crate::clock::{nanos_to_duration, Clock, Instant};
use crate::deadline::Deadline;
use crate::sketch::presets::{
    self, CUBIC_LATENCY_BINS, INT_LATENCY_BINS, LOG_LATENCY_BINS, MCU_LATENCY_BINS,
};
use crate::sketch::{BinLayout, CubicMapping, IndexMapping, IntMapping, LogMapping};
use crate::sync::const_unless_loom;
use crate::window::{Parts as WindowParts, Window, WindowConfig, MAX_CACHED_QUANTILES};

// A percentile per hedge is cached by the window.
const _: () = assert!(MAX_HEDGES as usize <= MAX_CACHED_QUANTILES);

pub use compact::{CompactHedger, PresetCompactHedger};
pub use config::{ColdStart, HedgeConfig, HedgeError, MAX_HEDGES};
use kind::sealed::{Kind, Learner};
pub use kind::{Exponential, WindowKind};
pub use policy::HedgePolicy;
pub use preset::HedgePreset;
pub use race::{race, race_until, Outcome, RaceError, Sleep, Winner};
#[cfg(feature = "embassy-time")]
pub use race::{race_embassy, race_embassy_until};
#[cfg(feature = "tower")]
pub(crate) use race::{RaceCore, RaceEnd, Slots};
use settings::Settings;
use stats::Counters;
pub use stats::Stats;

/// What a hedger's configuration and origin make of it, checked: the window's
/// configuration and parts.
struct Parts {
    window_config: WindowConfig,
    window: WindowParts,
}

impl Parts {
    /// The parts of a hedger of `config` whose window's first interval starts at
    /// `origin`, or why `config` is refused.
    const fn new(config: HedgeConfig, origin: Instant) -> Result<Self, HedgeError> {
        if let Err(e) = config.validate() {
            return Err(e);
        }
        let defaults = WindowConfig::new();
        let warmup = if config.min_samples > defaults.warmup_records() {
            config.min_samples
        } else {
            defaults.warmup_records()
        };
        let window_config = defaults
            .with_interval(config.interval)
            .with_quantiles(config.percentiles())
            // No cached percentile below `min_samples`: the cold-start test is its one
            // atomic load. The warm-up refreshes on every record at least as long as the
            // window's default does, so a small `min_samples` never learns later.
            .with_min_count(config.min_samples)
            .with_warmup_records(warmup)
            .with_rotate_on_record(config.rotate_on_record);
        match WindowParts::new(window_config, origin) {
            Ok(window) => Ok(Parts {
                window_config,
                window,
            }),
            Err(e) => Err(HedgeError::Window(e)),
        }
    }
}

/// Which attempt of a request.
///
/// ```
/// use tailguard::clock::ManualClock;
/// use tailguard::hedge::{Attempt, HedgeConfig, Hedger};
///
/// let clock = ManualClock::new();
/// let hedger = Hedger::new(&clock, HedgeConfig::new()).unwrap();
/// let first = hedger.start();
/// hedger.on_success(&first, Attempt::Primary);
/// let second = hedger.start();
/// hedger.on_success(&second, Attempt::Hedge(1)); // the first backup answered first
/// let stats = hedger.stats();
/// assert_eq!((stats.primary_wins, stats.hedge_wins), (1, 1));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Attempt {
    /// The original request.
    Primary,
    /// The `n`-th backup (1 for the first).
    Hedge(u8),
}

/// Why a request will not be hedged.
///
/// ```
/// use core::time::Duration;
/// use tailguard::budget::Budget;
/// use tailguard::clock::ManualClock;
/// use tailguard::hedge::{ColdStart, Decision, HedgeConfig, Hedger, SkipReason};
///
/// let clock = ManualClock::new();
/// // Nothing learned and no cold-start delay (the default): no hedge yet.
/// let cold = Hedger::new(&clock, HedgeConfig::new()).unwrap();
/// let mut ticket = cold.start();
/// assert_eq!(cold.should_hedge(&mut ticket), Decision::Skip(SkipReason::ColdStart));
///
/// let config = HedgeConfig::new().with_cold_start(ColdStart::Delay(Duration::from_millis(10)));
/// let hedger = Hedger::new(&clock, config).unwrap();
/// hedger.budget().drain(); // no token left
/// let mut ticket = hedger.start();
/// clock.advance(Duration::from_millis(10));
/// assert_eq!(hedger.should_hedge(&mut ticket), Decision::Skip(SkipReason::Budget));
/// assert_eq!((cold.stats().skipped_cold, hedger.stats().denied_budget), (1, 1));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum SkipReason {
    /// The budget has no token: hedging is at its share of traffic.
    Budget,
    /// Too few latencies are known to trust the percentile.
    ColdStart,
    /// A backup could not finish before the request's deadline.
    Deadline,
    /// A rate-limit signal was received recently and the budget is empty.
    BackPressure,
    /// The request already has `max_hedges` hedges.
    MaxHedges,
}

/// What to do about a request now.
///
/// ```
/// use core::time::Duration;
/// use tailguard::clock::ManualClock;
/// use tailguard::hedge::{ColdStart, Decision, HedgeConfig, Hedger, SkipReason};
///
/// let clock = ManualClock::new();
/// let config = HedgeConfig::new().with_cold_start(ColdStart::Delay(Duration::from_millis(10)));
/// let hedger = Hedger::new(&clock, config).unwrap();
/// let mut ticket = hedger.start();
/// loop {
///     match hedger.should_hedge(&mut ticket) {
///         Decision::Wait(d) => clock.advance(d), // sleep (unless the primary answers)
///         Decision::Hedge => assert_eq!(hedger.now().as_nanos(), 10_000_000), // send a backup
///         Decision::Skip(reason) => break assert_eq!(reason, SkipReason::MaxHedges),
///     }
/// }
/// assert_eq!(hedger.stats().hedges, 1);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Decision {
    /// Not yet: ask again after this long (never zero, and never longer than the delay
    /// of the hedge it waits for).
    Wait(Duration),
    /// Send a backup now (its budget token is already taken).
    Hedge,
    /// Do not hedge this request.
    Skip(SkipReason),
}

/// One request's hedging state: `Copy`, 40 bytes, no reference to the hedger.
///
/// Made by [`Hedger::start`] or [`Hedger::start_with_deadline`].
///
/// ```
/// use core::time::Duration;
/// use tailguard::clock::ManualClock;
/// use tailguard::hedge::{ColdStart, Decision, HedgeConfig, Hedger, Ticket};
///
/// let clock = ManualClock::new();
/// let config = HedgeConfig::new().with_cold_start(ColdStart::Delay(Duration::from_millis(10)));
/// let hedger = Hedger::new(&clock, config).unwrap();
/// let mut ticket = hedger.start();
/// let before = ticket; // a copy: the hedger keeps no state of its own per request
/// clock.advance(Duration::from_millis(10));
/// assert_eq!(hedger.should_hedge(&mut ticket), Decision::Hedge);
/// assert_eq!((ticket.hedges(), ticket.hedged_at()), (1, Some(hedger.now())));
/// assert_eq!((before.hedges(), before.hedged_at()), (0, None));
/// assert!(core::mem::size_of::<Ticket>() <= 40);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Ticket {
    start: Instant,
    /// `Instant::from_nanos(u64::MAX)` when there is none.
    deadline: Instant,
    /// The deadline's [target](Deadline::target), at or before it.
    target: Instant,
    /// When the last hedge was sent (meaningless while `hedges == 0`).
    hedged_at: Instant,
    hedges: u8,
    primary_failed: bool,
}

const NO_DEADLINE: Instant = Instant::from_nanos(u64::MAX);

impl Ticket {
    /// When the request started.
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::clock::{Instant, ManualClock};
    /// use tailguard::hedge::{HedgeConfig, Hedger};
    ///
    /// let clock = ManualClock::new();
    /// let hedger = Hedger::new(&clock, HedgeConfig::new()).unwrap();
    /// clock.advance(Duration::from_millis(5));
    /// let ticket = hedger.start();
    /// clock.advance(Duration::from_millis(3));
    /// assert_eq!(ticket.start(), Instant::from_nanos(5_000_000));
    /// assert_eq!(hedger.now().duration_since(ticket.start()), Duration::from_millis(3));
    /// ```
    pub fn start(&self) -> Instant {
        self.start
    }

    /// The request's deadline, if it has one: the one it was started with, except that
    /// an end or target at the last instant (`u64::MAX` ns, which marks no deadline) is
    /// kept a nanosecond earlier.
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::clock::{Instant, ManualClock};
    /// use tailguard::deadline::Deadline;
    /// use tailguard::hedge::{HedgeConfig, Hedger};
    ///
    /// let clock = ManualClock::new();
    /// let hedger = Hedger::new(&clock, HedgeConfig::new()).unwrap();
    /// let deadline = Deadline::after(hedger.now(), Duration::from_millis(100));
    /// assert_eq!(hedger.start_with_deadline(deadline).deadline(), Some(deadline));
    /// assert_eq!(hedger.start().deadline(), None);
    /// let last = Instant::from_nanos(u64::MAX);
    /// let kept = Deadline::at(Instant::from_nanos(u64::MAX - 1));
    /// assert_eq!(hedger.start_with_deadline(Deadline::at(last)).deadline(), Some(kept));
    /// ```
    pub fn deadline(&self) -> Option<Deadline> {
        (self.deadline != NO_DEADLINE)
            .then_some(Deadline::at(self.deadline).with_target(self.target))
    }

    /// Hedges sent so far.
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::clock::ManualClock;
    /// use tailguard::hedge::{ColdStart, Decision, HedgeConfig, Hedger, SkipReason};
    ///
    /// let clock = ManualClock::new();
    /// let config = HedgeConfig::new()
    ///     .with_cold_start(ColdStart::Delay(Duration::from_millis(10)))
    ///     .with_max_hedges(2);
    /// let hedger = Hedger::new(&clock, config).unwrap();
    /// let mut ticket = hedger.start();
    /// for _ in 0..2 {
    ///     clock.advance(Duration::from_millis(10)); // hedge k goes out k delays in
    ///     assert_eq!(hedger.should_hedge(&mut ticket), Decision::Hedge);
    /// }
    /// assert_eq!(ticket.hedges(), 2);
    /// assert_eq!(hedger.should_hedge(&mut ticket), Decision::Skip(SkipReason::MaxHedges));
    /// ```
    pub fn hedges(&self) -> u8 {
        self.hedges
    }

    /// When the last hedge was sent, if any.
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::clock::{Instant, ManualClock};
    /// use tailguard::hedge::{ColdStart, Decision, HedgeConfig, Hedger};
    ///
    /// let clock = ManualClock::new();
    /// let config = HedgeConfig::new().with_cold_start(ColdStart::Delay(Duration::from_millis(10)));
    /// let hedger = Hedger::new(&clock, config).unwrap();
    /// let mut ticket = hedger.start();
    /// assert_eq!(ticket.hedged_at(), None);
    /// clock.advance(Duration::from_millis(12));
    /// assert_eq!(hedger.should_hedge(&mut ticket), Decision::Hedge);
    /// assert_eq!(ticket.hedged_at(), Some(Instant::from_nanos(12_000_000)));
    /// ```
    pub fn hedged_at(&self) -> Option<Instant> {
        (self.hedges > 0).then_some(self.hedged_at)
    }
}

/// The adaptive hedging policy for one target (host, route, model): see the
/// [module docs](self).
///
/// Generic over the clock `C`, the budget `B` (a [`RatioBudget`] by default; a shared
/// `&RatioBudget` or `Arc<RatioBudget>` caps several hedgers together) and the window's
/// sketch: the mapping `M` and its `N` bins, the 1 % cubic preset over 1 µs .. 100 s by
/// default. [`CubicHedger`], [`LogHedger`] and [`IntHedger`] name the presets'
/// hedgers, and [`McuHedger`] the microcontroller preset's; use the integer mapping on
/// cores without a double-precision FPU (the Cortex-M4F's FPU is single precision: `f64`
/// is software there too). Drivers take any hedger
/// through [`HedgePolicy`].
///
/// ```
/// use core::time::Duration;
/// use tailguard::clock::ManualClock;
/// use tailguard::hedge::{Attempt, Decision, HedgeConfig, Hedger, SkipReason};
///
/// let clock = ManualClock::new();
/// let hedger = Hedger::new(&clock, HedgeConfig::new().with_min_samples(10)).unwrap();
///
/// // Learn: 100 requests of 5 ms.
/// for _ in 0..100 {
///     let ticket = hedger.start();
///     clock.advance(Duration::from_millis(5));
///     hedger.on_success(&ticket, Attempt::Primary);
/// }
///
/// // A slow one: wait until about the p90, then hedge.
/// let mut ticket = hedger.start();
/// let Decision::Wait(wait) = hedger.should_hedge(&mut ticket) else { panic!() };
/// // The p90 (5 ms) to the sketch's 1 %, taken at the upper edge of its bin.
/// assert!(wait >= Duration::from_micros(4950) && wait <= Duration::from_micros(5160));
/// clock.advance(wait);
/// assert_eq!(hedger.should_hedge(&mut ticket), Decision::Hedge);
/// clock.advance(Duration::from_millis(5));
/// hedger.on_success(&ticket, Attempt::Hedge(1)); // the backup answered first
/// assert_eq!(hedger.stats().hedge_wins, 1);
/// ```
pub struct Hedger<
    C: Clock,
    B = RatioBudget,
    M: WindowKind = CubicMapping,
    const N: usize = CUBIC_LATENCY_BINS,
> {
    window: <M as Kind>::Window<C, N>,
    budget: B,
    /// What it keeps of its configuration, stored so that a hedger built with its kind's
    /// preset is zero bytes (see [`Settings`]).
    settings: Settings<<M as Kind>::Preset>,
    counters: Counters,
    /// When the last rate-limit signal came.
    rate_limited_at: AtomicCoarseInstant,
    /// When the last server's pushback ends (written only before `rate_limited_at`, so
    /// read only once that is set).
    pushback_until: AtomicCoarseInstant,
}

/// The delays of a decision, in nanoseconds.
struct Delays {
    /// Learned (or the cold-start delay), clamped to the bounds.
    base: u64,
    /// `base`, raised during a back-off (and clamped again).
    delay: u64,
    /// How long after the start the next hedge is due.
    due_after: u64,
    /// The longest wait before it: one delay (the next hedge's own, or the spacing).
    longest_wait: u64,
    /// Whether the delays were learned (not the cold-start delay).
    learned: bool,
    backing_off: bool,
}

/// A [`Hedger`] over the 1 % cubic latency preset (the default).
///
/// ```
/// use tailguard::clock::ManualClock;
/// use tailguard::hedge::{CubicHedger, HedgeConfig, Hedger};
///
/// let clock = ManualClock::new();
/// let hedger: CubicHedger<_> = Hedger::new(&clock, HedgeConfig::new()).unwrap();
/// assert!((hedger.window().relative_accuracy() - 0.01).abs() < 1e-9);
/// ```
pub type CubicHedger<C, B = RatioBudget> = Hedger<C, B, CubicMapping, CUBIC_LATENCY_BINS>;
/// A [`Hedger`] over the 1 % logarithmic latency preset.
///
/// ```
/// use tailguard::clock::ManualClock;
/// use tailguard::hedge::{HedgeConfig, Hedger, LogHedger};
/// use tailguard::sketch::presets;
///
/// let clock = ManualClock::new();
/// let hedger: LogHedger<_> =
///     Hedger::with_layout(&clock, HedgeConfig::new(), presets::LOG_LATENCY_LAYOUT).unwrap();
/// assert!((hedger.window().relative_accuracy() - 0.01).abs() < 1e-9);
/// ```
pub type LogHedger<C, B = RatioBudget> = Hedger<C, B, LogMapping, LOG_LATENCY_BINS>;
/// A [`Hedger`] over the 0.78 % integer latency preset: no float operation records.
///
/// ```
/// use tailguard::clock::ManualClock;
/// use tailguard::hedge::{HedgeConfig, Hedger, IntHedger};
/// use tailguard::sketch::presets;
///
/// let clock = ManualClock::new();
/// let hedger: IntHedger<_> =
///     Hedger::with_layout(&clock, HedgeConfig::new(), presets::INT_LATENCY_LAYOUT).unwrap();
/// assert!((hedger.window().relative_accuracy() - 0.0078).abs() < 1e-4);
/// ```
pub type IntHedger<C, B = RatioBudget> = Hedger<C, B, IntMapping, INT_LATENCY_BINS>;
/// A [`Hedger`] over the microcontroller preset ([`McuLatency`](presets::McuLatency):
/// 1.56 %, integer mapping, 100 µs .. 10 s), for device-side latencies on a small part.
/// Its hot path (`start`, `should_hedge`, `on_success`, and a budget's `try_acquire` and
/// `on_request`) uses integer operations only, refreshes of the window's threshold
/// included: no soft-float helper and no 64-bit division, on the Cortex-M0 and on the
/// Cortex-M4F (whose FPU is single precision, so `f64` is software there too). About
/// 7 KB with a [`RatioBudget`] (7,200 bytes on a Cortex-M0 or M4F; 7,112 with a
/// `&RatioBudget`).
///
/// ```
/// use core::time::Duration;
/// use tailguard::clock::ManualClock;
/// use tailguard::hedge::{Attempt, Decision, HedgeConfig, Hedger, McuHedger};
/// use tailguard::sketch::presets;
///
/// let clock = ManualClock::new();
/// let config = HedgeConfig::new().with_min_samples(10).with_min_delay(Duration::from_micros(100));
/// let hedger: McuHedger<_> = Hedger::with_layout(&clock, config, presets::MCU_LATENCY_LAYOUT).unwrap();
/// for _ in 0..20 {
///     let ticket = hedger.start();
///     clock.advance(Duration::from_micros(800)); // a sensor read
///     hedger.on_success(&ticket, Attempt::Primary);
/// }
/// let mut ticket = hedger.start();
/// let Decision::Wait(wait) = hedger.should_hedge(&mut ticket) else { panic!() };
/// // The bin's upper edge: at or above 800 µs, within one bin (at most 3.2 % wide: the
/// // preset's accuracy is 1.56 %).
/// assert!(wait >= Duration::from_micros(800) && wait <= Duration::from_micros(826));
/// ```
pub type McuHedger<C, B = RatioBudget> = Hedger<C, B, IntMapping, MCU_LATENCY_BINS>;

impl<C: Clock> Hedger<C> {
    /// A hedger with `config`, a [`RatioBudget`] of `config`'s ratio and cap, and the 1 %
    /// cubic latency sketch (1 µs .. 100 s).
    ///
    /// ```
    /// use tailguard::budget::Budget;
    /// use tailguard::clock::ManualClock;
    /// use tailguard::hedge::{HedgeConfig, Hedger};
    ///
    /// let clock = ManualClock::new();
    /// let config = HedgeConfig::new().with_budget_ratio(0.05).with_budget_cap(4);
    /// let hedger = Hedger::new(&clock, config).unwrap();
    /// assert_eq!(hedger.budget().balance(), 4.0); // the config's cap, starting full
    /// assert!((hedger.window().relative_accuracy() - 0.01).abs() < 1e-9); // the 1 % preset
    /// assert!(Hedger::new(&clock, config.with_percentile(1.5)).is_err());
    /// ```
    pub fn new(clock: C, config: HedgeConfig) -> Result<Self, HedgeError> {
        Hedger::with_layout(clock, config, presets::CUBIC_LATENCY_LAYOUT)
    }
}

impl<C: Clock, M: IndexMapping, const N: usize> Hedger<C, RatioBudget, M, N> {
    /// A hedger with `config`, a [`RatioBudget`] of `config`'s ratio and cap, and sketches
    /// of `layout` (a preset's, say: [`presets::INT_LATENCY_LAYOUT`]).
    ///
    /// ```
    /// use tailguard::clock::ManualClock;
    /// use tailguard::hedge::{HedgeConfig, Hedger, IntHedger};
    /// use tailguard::sketch::presets;
    ///
    /// let clock = ManualClock::new();
    /// let hedger: IntHedger<_> =
    ///     Hedger::with_layout(&clock, HedgeConfig::new(), presets::INT_LATENCY_LAYOUT).unwrap();
    /// assert!(hedger.window().relative_accuracy() < 0.008); // the preset's 0.78 %
    /// let no_hedges = HedgeConfig::new().with_max_hedges(0);
    /// assert!(Hedger::with_layout(&clock, no_hedges, presets::INT_LATENCY_LAYOUT).is_err());
    /// ```
    pub fn with_layout(
        clock: C,
        config: HedgeConfig,
        layout: BinLayout<M, N>,
    ) -> Result<Self, HedgeError> {
        let budget = RatioBudget::new(config.budget_ratio, config.budget_cap)?;
        Hedger::with_budget(clock, config, budget, layout)
    }
}

impl<C: Clock, B: Budget, M: IndexMapping, const N: usize> Hedger<C, B, M, N> {
    /// A hedger with its own budget, and sketches of `layout` (a preset's, say).
    ///
    /// The budget can be shared: several hedgers (one per route, say) given `&budget`, an
    /// `Arc` of it or a `static` one draw on the same tokens, so hedging stays within one
    /// share of the host's traffic while each route learns its own latency.
    ///
    /// ```
    /// use tailguard::budget::RatioBudget;
    /// use tailguard::clock::ManualClock;
    /// use tailguard::hedge::{HedgeConfig, Hedger};
    /// use tailguard::sketch::presets;
    ///
    /// use tailguard::budget::Budget;
    ///
    /// let host_budget = RatioBudget::new(0.05, 20).unwrap();
    /// host_budget.drain(); // it starts full; empty it to watch the deposits
    /// let clock = ManualClock::new();
    /// let config = HedgeConfig::new();
    /// let layout = presets::CUBIC_LATENCY_LAYOUT;
    /// let search = Hedger::with_budget(&clock, config, &host_budget, layout).unwrap();
    /// let items = Hedger::with_budget(&clock, config, &host_budget, layout).unwrap();
    /// search.start();
    /// items.start();
    /// // Both routes deposited into the one budget.
    /// assert!((host_budget.balance() - 0.1).abs() < 1e-6);
    /// ```
    pub fn with_budget(
        clock: C,
        config: HedgeConfig,
        budget: B,
        layout: BinLayout<M, N>,
    ) -> Result<Self, HedgeError> {
        // Checked before the clock is read or moved: an error drops the clock as usual.
        let origin = clock.now();
        let parts = Parts::new(config, origin)?;
        Ok(Self::from_parts(clock, config, budget, layout, parts))
    }

    const_unless_loom! {
        /// A hedger with its own budget, sketches of `layout` (a preset's constant layout,
        /// say), and a window whose first interval starts at `origin` (see
        /// [`Window::with_origin`] for a clock already past it).
        ///
        /// `const`: with a constant clock, budget and layout, the hedger is a `static`,
        /// built at compile time (no start-up code, no stack), and an invalid configuration
        /// is a compile error. Errors as [`with_budget`](Hedger::with_budget) does; on an
        /// error the clock and the budget are forgotten rather than dropped (a `const fn`
        /// cannot run a destructor).
        ///
        /// ```
        /// use core::time::Duration;
        /// use tailguard::budget::RatioBudget;
        /// use tailguard::clock::{Clock, Instant};
        /// use tailguard::hedge::{HedgeConfig, Hedger};
        /// use tailguard::sketch::{presets, IntMapping};
        ///
        /// /// A firmware clock: a unit struct reading a timer that starts at zero (here, fixed).
        /// struct Timer;
        /// impl Clock for Timer {
        ///     fn now(&self) -> Instant {
        ///         Instant::from_nanos(3_000_000_000)
        ///     }
        /// }
        ///
        /// static BUDGET: RatioBudget = match RatioBudget::new(0.1, 10) {
        ///     Ok(budget) => budget,
        ///     Err(_) => panic!("invalid budget"),
        /// };
        /// type SensorHedger = Hedger<Timer, &'static RatioBudget, IntMapping, { presets::INT_LATENCY_COARSE_BINS }>;
        /// const CONFIG: HedgeConfig = HedgeConfig::new().with_min_delay(Duration::from_micros(100));
        /// static HEDGER: SensorHedger = match SensorHedger::with_origin(
        ///     Timer,
        ///     CONFIG,
        ///     &BUDGET,
        ///     presets::INT_LATENCY_COARSE_LAYOUT,
        ///     Instant::ZERO,
        /// ) {
        ///     Ok(hedger) => hedger,
        ///     Err(_) => panic!("invalid hedge configuration"), // a compile error
        /// };
        ///
        /// let _ticket = HEDGER.start();
        /// HEDGER.record(Duration::from_millis(2));
        /// assert_eq!(HEDGER.stats().requests, 1);
        /// ```
        pub fn with_origin(
            clock: C,
            config: HedgeConfig,
            budget: B,
            layout: BinLayout<M, N>,
            origin: Instant,
        ) -> Result<Self, HedgeError> {
            // Checked without the clock and the budget: a `const fn` can match on a
            // `Result` only if nothing in it has a destructor.
            match Parts::new(config, origin) {
                Ok(parts) => Ok(Self::from_parts(clock, config, budget, layout, parts)),
                Err(e) => {
                    // Not dropped: a `const fn` cannot run their destructors.
                    core::mem::forget(clock);
                    core::mem::forget(budget);
                    Err(e)
                }
            }
        }
    }

    const_unless_loom! {
        /// The hedger of checked `parts`.
        fn from_parts(
            clock: C,
            config: HedgeConfig,
            budget: B,
            layout: BinLayout<M, N>,
            parts: Parts,
        ) -> Self {
            let window = Window::from_parts(clock, layout, parts.window_config, parts.window);
            Self::assemble(window, config, budget)
        }
    }
}

impl<C: Clock, B: Budget, M: WindowKind, const N: usize> Hedger<C, B, M, N> {
    const_unless_loom! {
        /// The hedger of a window built for `config`.
        fn assemble(window: <M as Kind>::Window<C, N>, config: HedgeConfig, budget: B) -> Self {
            Hedger {
                window,
                budget,
                settings: Settings::new(&config),
                counters: Counters::new(),
                rate_limited_at: AtomicCoarseInstant::never(),
                pushback_until: AtomicCoarseInstant::never(),
            }
        }
    }

    /// Makes this hedger what [`with_budget`](Hedger::with_budget) would build with
    /// `clock`, `config` and `budget` and this hedger's layout: its window empty and
    /// starting now, its statistics and back-off cleared. In place: nothing hedger-sized
    /// is built on the stack, so a hedger in a `static` (or in storage a C caller
    /// provides) can be set up at run time on a core with a small stack.
    ///
    /// The configuration is checked first: on an error the hedger is unchanged (and
    /// `clock` and `budget` are dropped).
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::budget::RatioBudget;
    /// use tailguard::clock::ManualClock;
    /// use tailguard::hedge::{HedgeConfig, Hedger};
    ///
    /// let clock = ManualClock::new();
    /// let mut hedger = Hedger::new(&clock, HedgeConfig::new()).unwrap();
    /// hedger.start();
    ///
    /// let config = HedgeConfig::new().with_min_samples(5);
    /// let budget = RatioBudget::new(config.budget_ratio(), config.budget_cap()).unwrap();
    /// hedger.reset(&clock, config, budget).unwrap();
    /// assert_eq!(hedger.stats().requests, 0);
    /// assert_eq!(hedger.config().min_samples(), 5);
    ///
    /// let bad = config.with_percentile(2.0);
    /// let budget = RatioBudget::new(0.1, 10).unwrap();
    /// assert!(hedger.reset(&clock, bad, budget).is_err());
    /// assert_eq!(hedger.config().min_samples(), 5); // unchanged
    /// ```
    pub fn reset(&mut self, clock: C, config: HedgeConfig, budget: B) -> Result<(), HedgeError> {
        let origin = clock.now();
        let parts = Parts::new(config, origin)?;
        // As `from_parts` builds them; the destructuring names every field.
        let Hedger {
            window,
            budget: self_budget,
            settings,
            counters,
            rate_limited_at,
            pushback_until,
        } = self;
        window.reset_from_parts(clock, parts.window_config, parts.window);
        *self_budget = budget;
        *settings = Settings::new(&config);
        *counters = Counters::new();
        *rate_limited_at = AtomicCoarseInstant::never();
        *pushback_until = AtomicCoarseInstant::never();
        Ok(())
    }

    /// The hedger's clock reading (to make a [`Deadline`], say).
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::clock::{Instant, ManualClock};
    /// use tailguard::deadline::Deadline;
    /// use tailguard::hedge::{HedgeConfig, Hedger};
    ///
    /// let clock = ManualClock::new();
    /// let hedger = Hedger::new(&clock, HedgeConfig::new()).unwrap();
    /// clock.advance(Duration::from_millis(25));
    /// assert_eq!(hedger.now(), Instant::from_nanos(25_000_000));
    /// let deadline = Deadline::after(hedger.now(), Duration::from_millis(100));
    /// assert_eq!(deadline.end(), Instant::from_nanos(125_000_000));
    /// ```
    pub fn now(&self) -> Instant {
        self.window.clock().now()
    }

    /// Starts a request: deposits into the budget and returns its ticket.
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::budget::Budget;
    /// use tailguard::clock::ManualClock;
    /// use tailguard::hedge::{HedgeConfig, Hedger};
    ///
    /// let clock = ManualClock::new();
    /// let hedger = Hedger::new(&clock, HedgeConfig::new()).unwrap();
    /// hedger.budget().drain(); // it starts full; empty it to watch the deposit
    /// clock.advance(Duration::from_millis(7));
    /// let ticket = hedger.start();
    /// assert_eq!((ticket.start(), ticket.hedges()), (hedger.now(), 0));
    /// assert!((hedger.budget().balance() - 0.1).abs() < 1e-6); // the default 10 % ratio
    /// assert_eq!(hedger.stats().requests, 1);
    /// ```
    pub fn start(&self) -> Ticket {
        self.start_at(self.now(), Deadline::at(NO_DEADLINE))
    }

    /// Starts a request that must finish by `deadline` (on this hedger's clock): no hedge
    /// is sent that could not finish in time.
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::clock::ManualClock;
    /// use tailguard::deadline::Deadline;
    /// use tailguard::hedge::{HedgeConfig, Hedger};
    ///
    /// let clock = ManualClock::new();
    /// let hedger = Hedger::new(&clock, HedgeConfig::new()).unwrap();
    /// let deadline = Deadline::after(hedger.now(), Duration::from_millis(200));
    /// let ticket = hedger.start_with_deadline(deadline);
    /// assert_eq!(ticket.deadline(), Some(deadline));
    /// ```
    pub fn start_with_deadline(&self, deadline: Deadline) -> Ticket {
        // `NO_DEADLINE` is the end of time: a deadline there is one we cannot miss.
        let end = deadline.end().min(Instant::from_nanos(u64::MAX - 1));
        self.start_at(self.now(), Deadline::at(end).with_target(deadline.target()))
    }

    fn start_at(&self, now: Instant, deadline: Deadline) -> Ticket {
        // After an idle gap, expire what the window no longer holds before this request's
        // decisions read its cached threshold.
        self.window.maintain_at(now);
        Counters::bump(&self.counters.requests);
        self.budget.on_request();
        Ticket {
            start: now,
            deadline: deadline.end(),
            target: deadline.target(),
            hedged_at: now,
            hedges: 0,
            primary_failed: false,
        }
    }

    /// The hedge delay now (clamped to the configured bounds and raised during a
    /// back-off), or why there is none: a cold start, or a server's pushback
    /// ([`SkipReason::BackPressure`], see [`on_rate_limited_for`](Self::on_rate_limited_for)).
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::clock::ManualClock;
    /// use tailguard::hedge::{HedgeConfig, Hedger, SkipReason};
    ///
    /// let clock = ManualClock::new();
    /// let config = HedgeConfig::new().with_min_samples(10).with_max_delay(Duration::from_millis(50));
    /// let hedger = Hedger::new(&clock, config).unwrap();
    /// assert_eq!(hedger.delay(), Err(SkipReason::ColdStart)); // nothing learned yet
    /// for _ in 0..20 {
    ///     hedger.record(Duration::from_millis(40));
    /// }
    /// // The p90 (40 ms) to the sketch's 1 %, taken at the upper edge of its bin.
    /// let delay = hedger.delay().unwrap();
    /// assert!(delay >= Duration::from_millis(40) && delay <= Duration::from_micros(40_810));
    /// hedger.on_rate_limited(); // the back-off doubles it, within the 50 ms bound
    /// assert_eq!(hedger.delay(), Ok(Duration::from_millis(50)));
    /// hedger.on_rate_limited_for(Duration::from_secs(1)); // a server's pushback: none at all
    /// assert_eq!(hedger.delay(), Err(SkipReason::BackPressure));
    /// ```
    pub fn delay(&self) -> Result<Duration, SkipReason> {
        let now = self.now();
        self.window.maintain_at(now);
        self.delays(now, 0).map(|d| Duration::from_nanos(d.delay))
    }

    /// The delays at `now` of a request that has sent `hedges` hedges: the base one
    /// learned from the window (or the cold-start delay), clamped, the one raised during a
    /// back-off, and when the next hedge is due.
    #[inline]
    fn delays(&self, now: Instant, hedges: u8) -> Result<Delays, SkipReason> {
        // `None` until the window holds `min_samples` latencies. The upper edge of the
        // percentile's bin, in nanoseconds, computed when the window refreshed: the delay
        // then never sits below the true percentile, so a point mass there (a cache, a
        // timeout cap) is not hedged for nothing. One load and integer operations: with
        // an integer mapping the whole decision is free of floats and 64-bit divisions.
        let learned = self.window.cached_upper_bound();
        let Some(base) = learned.or(self.settings.cold_start_ns()) else {
            return Err(SkipReason::ColdStart);
        };
        let base = self.clamp(base);
        let backing_off = self.backing_off(now)?;
        let delay = self.raise(base, backing_off);
        // Hedge k goes out k delays after the start, or at its own percentile (learned
        // in the same refresh; before it is learned, spaced as with one percentile).
        let (due_after, longest_wait) = if hedges == 0 {
            (delay, delay) // the common case
        } else {
            let own = match learned {
                Some(_) if self.settings.per_hedge_percentiles() => self
                    .window
                    .cached_upper_bound_of(usize::from(hedges))
                    .map(|ns| self.raise(self.clamp(ns), backing_off)),
                _ => None,
            };
            match own {
                Some(own) => (own, own),
                None => (delay.saturating_mul(u64::from(hedges) + 1), delay),
            }
        };
        Ok(Delays {
            base,
            delay,
            due_after,
            longest_wait,
            learned: learned.is_some(),
            backing_off,
        })
    }

    /// `ns` within the configured delay bounds.
    #[inline]
    fn clamp(&self, ns: u64) -> u64 {
        // min <= max (validated): max-then-min is a clamp that cannot panic.
        let settings = &self.settings;
        ns.max(settings.min_delay_ns()).min(settings.max_delay_ns())
    }

    /// A clamped delay, raised during a back-off (and clamped again).
    #[inline]
    fn raise(&self, delay: u64, backing_off: bool) -> u64 {
        if backing_off {
            delay
                .saturating_mul(u64::from(self.settings.backoff_factor()))
                .min(self.settings.max_delay_ns())
        } else {
            delay
        }
    }

    /// Whether a rate-limit signal came less than `cooldown` ago, or
    /// `Err(BackPressure)` while a server's pushback lasts. A signal stamped ahead of `now`
    /// (a clock that went back) counts for as long as it is less than `cooldown` ahead,
    /// so a back-off never outlasts the cooldown by more than the clock's step.
    #[inline]
    fn backing_off(&self, now: Instant) -> Result<bool, SkipReason> {
        let raw = self.rate_limited_at.load_raw();
        if raw.is_never() {
            return Ok(false); // the common case: no clock reading needed
        }
        let clock = self.settings.cooldown_clock();
        let reading = clock.at(now);
        if self.pushed_back(&clock, reading) {
            return Err(SkipReason::BackPressure);
        }
        let backing_off = match raw.age(&clock, reading) {
            Age::Ticks(d) => d.unsigned_abs() < self.settings.cooldown_ticks(),
            // The cooldown clock's horizon is beyond the cooldown (see `cooldown_clock`).
            Age::Never | Age::LongAgo | Age::FarAhead => false,
        };
        Ok(backing_off)
    }

    /// Whether a server's pushback still holds hedging off at `reading` of the cooldown
    /// `clock`. Its end is at most `max_pushback` ahead of the reading it was written with,
    /// so one further ahead (a clock that went back) has ended: a pushback never lasts
    /// `max_pushback` past any reading.
    #[inline]
    fn pushed_back(&self, clock: &CoarseClock, reading: CoarseInstant) -> bool {
        match self.pushback_until.age(clock, reading) {
            // The age is negative before the end.
            Age::Ticks(d) => {
                d < 0 && d.unsigned_abs() <= u64::from(self.settings.max_pushback_ticks())
            }
            Age::Never | Age::LongAgo | Age::FarAhead => false,
        }
    }

    /// Whether to hedge `ticket`'s request now; see [`Decision`]. On
    /// [`Decision::Hedge`] the budget token is taken and the ticket counts the hedge.
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::budget::Budget;
    /// use tailguard::clock::ManualClock;
    /// use tailguard::hedge::{ColdStart, Decision, HedgeConfig, Hedger};
    ///
    /// let clock = ManualClock::new();
    /// let config = HedgeConfig::new().with_cold_start(ColdStart::Delay(Duration::from_millis(10)));
    /// let hedger = Hedger::new(&clock, config).unwrap();
    /// let mut ticket = hedger.start();
    /// clock.advance(Duration::from_millis(4));
    /// assert_eq!(hedger.should_hedge(&mut ticket), Decision::Wait(Duration::from_millis(6)));
    /// clock.advance(Duration::from_millis(6));
    /// let balance = hedger.budget().balance();
    /// assert_eq!(hedger.should_hedge(&mut ticket), Decision::Hedge);
    /// assert!((balance - hedger.budget().balance() - 1.0).abs() < 1e-6); // one token taken
    /// assert_eq!(ticket.hedges(), 1);
    /// ```
    pub fn should_hedge(&self, ticket: &mut Ticket) -> Decision {
        let decision = self.decide(ticket, self.now());
        let counter = match decision {
            Decision::Hedge => &self.counters.hedges,
            Decision::Skip(SkipReason::Budget) => &self.counters.denied_budget,
            Decision::Skip(SkipReason::ColdStart) => &self.counters.skipped_cold,
            Decision::Skip(SkipReason::Deadline) => &self.counters.skipped_deadline,
            Decision::Skip(SkipReason::BackPressure) => &self.counters.skipped_backpressure,
            Decision::Skip(SkipReason::MaxHedges) | Decision::Wait(_) => return decision,
        };
        Counters::bump(counter);
        decision
    }

    fn decide(&self, ticket: &mut Ticket, now: Instant) -> Decision {
        if ticket.hedges >= self.settings.max_hedges() {
            return Decision::Skip(SkipReason::MaxHedges);
        }
        let Delays {
            base,
            due_after,
            longest_wait,
            learned,
            backing_off,
            ..
        } = match self.delays(now, ticket.hedges) {
            Ok(d) => d,
            Err(reason) => return Decision::Skip(reason),
        };
        let now_ns = now.as_nanos();
        let mut due = ticket.start.as_nanos().saturating_add(due_after);
        if ticket.hedges > 0 {
            // Never two backups at once (percentiles whose delays coincide, or both
            // clamped to a bound): each at least the shortest delay after the one before.
            let last = ticket.hedged_at.as_nanos();
            due = due.max(last.saturating_add(self.settings.min_delay_ns()));
        }
        // Without a deadline (the common case) nothing below can be too late.
        if ticket.deadline != NO_DEADLINE {
            let deadline = ticket.deadline.as_nanos();
            let too_late = match &self.settings.on_time() {
                // Deadline-aware hedging (see `on_time`), off the percentile rule's path.
                Some(rule) if learned => {
                    due = self.on_time_due(rule, ticket, due, backing_off);
                    // Past the deadline nothing can answer by it; before, no latency the
                    // window holds would fit: neither attempt can be expected to make it.
                    now_ns >= deadline
                        || (now_ns >= due && self.backup_too_late(deadline.wrapping_sub(now_ns)))
                }
                // A backup sent at `due` needs about the learned percentile to answer.
                _ => due.max(now_ns).saturating_add(base) > deadline,
            };
            if too_late {
                return Decision::Skip(SkipReason::Deadline);
            }
        }
        if now_ns < due {
            // At most one delay: a clock that went back before the start must not make a
            // caller sleep past `max_delay`. A wait of nothing is no wait: with a zero
            // delay (`max_delay` zero, say) a clock behind the start would answer
            // `Wait(0)` until it caught up, and a caller sleeping that long would spin.
            let wait = due.wrapping_sub(now_ns).min(longest_wait);
            if wait > 0 {
                return Decision::Wait(nanos_to_duration(wait));
            }
        }
        if !self.budget.try_acquire() {
            return Decision::Skip(if backing_off {
                SkipReason::BackPressure
            } else {
                SkipReason::Budget
            });
        }
        ticket.hedges = ticket.hedges.saturating_add(1);
        ticket.hedged_at = now;
        Decision::Hedge
    }

    /// Reports that `winner` answered successfully: records the request's latency (see
    /// the [module docs](self#what-is-recorded)) and returns it. The other attempts are
    /// to be cancelled.
    ///
    /// If the clock reads earlier than the ticket's start (it went back during the
    /// request), there is no latency to learn from: nothing is recorded, the request is
    /// counted in [`Stats::unmeasured`], and the latency returned is zero.
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::clock::{Instant, ManualClock};
    /// use tailguard::hedge::{Attempt, HedgeConfig, Hedger};
    ///
    /// let clock = ManualClock::new();
    /// let hedger = Hedger::new(&clock, HedgeConfig::new()).unwrap();
    /// let ticket = hedger.start();
    /// clock.advance(Duration::from_millis(12));
    /// assert_eq!(hedger.on_success(&ticket, Attempt::Primary), Duration::from_millis(12));
    /// assert_eq!(hedger.window().count(), 1);
    ///
    /// let ticket = hedger.start();
    /// clock.set(Instant::ZERO); // the clock went back: no latency to learn from
    /// assert_eq!(hedger.on_success(&ticket, Attempt::Primary), Duration::ZERO);
    /// assert_eq!((hedger.window().count(), hedger.stats().unmeasured), (1, 1));
    /// ```
    pub fn on_success(&self, ticket: &Ticket, winner: Attempt) -> Duration {
        let now = self.now();
        // Nanoseconds, as the window records them: the `Duration` is made once, for the
        // caller (on a 32-bit core each conversion is a chain of 64-bit multiplies).
        let latency_ns = now.as_nanos().checked_sub(ticket.start.as_nanos());
        if !ticket.primary_failed {
            match latency_ns {
                // The primary's latency, or its elapsed time when cancelled: a lower bound.
                Some(ns) => self.window.record_u64_at(now, ns),
                None => Counters::bump(&self.counters.unmeasured),
            }
        }
        let counter = match winner {
            Attempt::Primary => &self.counters.primary_wins,
            Attempt::Hedge(_) => &self.counters.hedge_wins,
        };
        Counters::bump(counter);
        nanos_to_duration(latency_ns.unwrap_or(0))
    }

    /// Reports that `attempt` failed. Nothing is recorded as latency.
    ///
    /// The ticket remembers a failed primary only so that its latency is not learned:
    /// [`should_hedge`](Self::should_hedge) still answers from the delay. A driver with
    /// nothing left running after a failure should not ask it for a backup (that would be a
    /// retry, not a hedge); [`race`] does not.
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::clock::ManualClock;
    /// use tailguard::hedge::{Attempt, HedgeConfig, Hedger};
    ///
    /// let clock = ManualClock::new();
    /// let hedger = Hedger::new(&clock, HedgeConfig::new()).unwrap();
    /// let mut ticket = hedger.start();
    /// clock.advance(Duration::from_millis(3));
    /// hedger.on_error(&mut ticket, Attempt::Primary); // a fast failure is no latency
    /// clock.advance(Duration::from_millis(20));
    /// hedger.on_success(&ticket, Attempt::Hedge(1));
    /// assert_eq!(hedger.stats().errors, 1);
    /// assert_eq!(hedger.window().count(), 0);
    /// ```
    pub fn on_error(&self, ticket: &mut Ticket, attempt: Attempt) {
        if attempt == Attempt::Primary {
            ticket.primary_failed = true;
        }
        Counters::bump(&self.counters.errors);
    }

    /// Reports that `ticket`'s request ran out of time before any attempt answered (a
    /// driver gave up at its [`Deadline`]). Nothing is recorded: the primary's latency is
    /// unknown, and its elapsed time may be below the delay while the true latency is not.
    /// Counted in [`Stats::deadline_exceeded`].
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::clock::ManualClock;
    /// use tailguard::deadline::Deadline;
    /// use tailguard::hedge::{HedgeConfig, Hedger};
    ///
    /// let clock = ManualClock::new();
    /// let hedger = Hedger::new(&clock, HedgeConfig::new()).unwrap();
    /// let deadline = Deadline::after(hedger.now(), Duration::from_millis(50));
    /// let ticket = hedger.start_with_deadline(deadline);
    /// clock.advance(Duration::from_millis(50)); // no attempt answered in time
    /// hedger.on_deadline_exceeded(&ticket);
    /// assert_eq!(hedger.stats().deadline_exceeded, 1);
    /// assert_eq!(hedger.window().count(), 0); // no latency learned
    /// ```
    pub fn on_deadline_exceeded(&self, ticket: &Ticket) {
        let _ = ticket;
        Counters::bump(&self.counters.deadline_exceeded);
    }

    /// Reports back-pressure (HTTP 429, gRPC RESOURCE_EXHAUSTED): empties the budget
    /// ([`Budget::drain`]) and multiplies the delay by the back-off factor for the
    /// cooldown, which starts again at each signal. Hedging recovers by itself as requests
    /// refill the budget and the cooldown passes. Exact for any clock reading and any
    /// cooldown (to about 1 ms, or `cooldown / 2^30` for cooldowns beyond 13 days);
    /// `Duration::MAX` backs off for good.
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::budget::Budget;
    /// use tailguard::clock::ManualClock;
    /// use tailguard::hedge::{ColdStart, HedgeConfig, Hedger};
    ///
    /// let clock = ManualClock::new();
    /// let config = HedgeConfig::new().with_cold_start(ColdStart::Delay(Duration::from_millis(10)));
    /// let hedger = Hedger::new(&clock, config).unwrap();
    /// hedger.on_rate_limited(); // an HTTP 429
    /// assert_eq!(hedger.budget().balance(), 0.0);
    /// assert_eq!(hedger.delay(), Ok(Duration::from_millis(20))); // doubled for the cooldown
    /// clock.advance(Duration::from_secs(11)); // past the default 10 s cooldown
    /// assert_eq!(hedger.delay(), Ok(Duration::from_millis(10)));
    /// ```
    pub fn on_rate_limited(&self) {
        self.rate_limited_at_reading(self.settings.cooldown_clock().at(self.now()));
    }

    /// [`on_rate_limited`](Self::on_rate_limited) at `reading` of the cooldown clock.
    fn rate_limited_at_reading(&self, reading: CoarseInstant) {
        self.budget.drain();
        self.rate_limited_at.store_now(reading);
        Counters::bump(&self.counters.rate_limited);
    }

    /// Reports back-pressure with the server's delay (HTTP `Retry-After`, gRPC
    /// `grpc-retry-pushback-ms`): what [`on_rate_limited`](Self::on_rate_limited) does,
    /// and no hedge at all for `pushback` from now: decisions until then skip with
    /// [`SkipReason::BackPressure`] (a cold start without a fixed delay still says
    /// `ColdStart`), and so does [`delay`](Self::delay). Requests themselves are not held
    /// back; only their backups are.
    ///
    /// A pushback longer than [`HedgeConfig::max_pushback`] is shortened to it (counted in
    /// [`Stats::pushbacks_clamped`]), so no server can stop hedging for longer than that
    /// per signal (nor, whatever `max_pushback` says, for more than 2^29 ticks of the
    /// cooldown's clock: about six days, nor past the clock's last reading, 2^64 ns; both
    /// counted too); with a `max_pushback` of zero the duration is ignored. The latest
    /// pushback wins, shorter or longer (a server that says "retry now" ends it);
    /// [`on_rate_limited`](Self::on_rate_limited) leaves it as it is. A pushback ends to
    /// within the cooldown clock's tick (about 1 ms), never later, and a clock that goes
    /// back never makes it last longer than `max_pushback` from any reading.
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::clock::ManualClock;
    /// use tailguard::hedge::{ColdStart, Decision, HedgeConfig, Hedger, SkipReason};
    ///
    /// let clock = ManualClock::new();
    /// let config = HedgeConfig::new()
    ///     .with_cold_start(ColdStart::Delay(Duration::from_millis(10)));
    /// let hedger = Hedger::new(&clock, config).unwrap();
    /// hedger.on_rate_limited_for(Duration::from_secs(2)); // "Retry-After: 2"
    /// let mut ticket = hedger.start();
    /// clock.advance(Duration::from_millis(50));
    /// assert_eq!(hedger.should_hedge(&mut ticket), Decision::Skip(SkipReason::BackPressure));
    /// assert_eq!(hedger.stats().pushbacks, 1);
    /// clock.advance(Duration::from_secs(2)); // over: the cooldown's longer delay is left
    /// assert_eq!(hedger.delay(), Ok(Duration::from_millis(20)));
    /// ```
    pub fn on_rate_limited_for(&self, pushback: Duration) {
        let now = self.now();
        let settings = &self.settings;
        let clock = settings.cooldown_clock();
        let reading = clock.at(now);
        let max = settings.config().max_pushback;
        let wanted = pushback.min(max);
        // The ticks to the one the pushback ends in (shifts, no division). An end past the
        // clock's last reading (2^64 ns) is kept at it: shortened, so counted.
        let end_at = now.saturating_add(wanted);
        let end = clock.at(end_at);
        let ahead = end.ticks().saturating_sub(reading.ticks());
        let limit = u64::from(settings.max_pushback_ticks());
        if pushback > max || ahead > limit || end_at.duration_since(now) < wanted {
            Counters::bump(&self.counters.pushbacks_clamped);
        }
        if limit > 0 {
            // Before the signal's stamp: a reader that sees the signal sees its end.
            let end = reading.ticks().saturating_add(ahead.min(limit));
            self.pushback_until.store(end, reading);
        }
        Counters::bump(&self.counters.pushbacks);
        self.rate_limited_at_reading(reading);
    }

    /// The counters and the current delay.
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::clock::ManualClock;
    /// use tailguard::hedge::{Attempt, ColdStart, HedgeConfig, Hedger};
    ///
    /// let clock = ManualClock::new();
    /// let config = HedgeConfig::new().with_cold_start(ColdStart::Delay(Duration::from_millis(10)));
    /// let hedger = Hedger::new(&clock, config).unwrap();
    /// let mut ticket = hedger.start();
    /// clock.advance(Duration::from_millis(10));
    /// hedger.should_hedge(&mut ticket); // sends the backup
    /// hedger.on_success(&ticket, Attempt::Primary); // but the primary answered first
    /// let stats = hedger.stats();
    /// assert_eq!((stats.requests, stats.hedges, stats.primary_wins), (1, 1, 1));
    /// assert_eq!(stats.delay, Some(Duration::from_millis(10)));
    /// ```
    pub fn stats(&self) -> Stats {
        self.counters.snapshot(self.delay().ok())
    }

    /// The latency window (quantiles, counts): a [`Window`] or an
    /// [`ExponentialWindow`](crate::window::ExponentialWindow), as `M` says
    /// ([`WindowKind`]).
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::clock::ManualClock;
    /// use tailguard::hedge::{Attempt, HedgeConfig, Hedger};
    ///
    /// let clock = ManualClock::new();
    /// let hedger = Hedger::new(&clock, HedgeConfig::new()).unwrap();
    /// for ms in [3, 5, 8] {
    ///     let ticket = hedger.start();
    ///     clock.advance(Duration::from_millis(ms));
    ///     hedger.on_success(&ticket, Attempt::Primary);
    /// }
    /// assert_eq!(hedger.window().count(), 3);
    /// let p50 = hedger.window().quantile(0.5).unwrap().unwrap(); // in nanoseconds
    /// assert!((p50 - 5e6).abs() <= 0.01 * 5e6);
    /// ```
    pub fn window(&self) -> &<M as Kind>::Window<C, N> {
        &self.window
    }

    /// The budget.
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::budget::Budget;
    /// use tailguard::clock::ManualClock;
    /// use tailguard::hedge::{ColdStart, Decision, HedgeConfig, Hedger};
    ///
    /// let clock = ManualClock::new();
    /// let config = HedgeConfig::new()
    ///     .with_budget_cap(2)
    ///     .with_cold_start(ColdStart::Delay(Duration::from_millis(10)));
    /// let hedger = Hedger::new(&clock, config).unwrap();
    /// assert_eq!(hedger.budget().balance(), 2.0); // starts full
    /// let mut ticket = hedger.start();
    /// clock.advance(Duration::from_millis(10));
    /// assert_eq!(hedger.should_hedge(&mut ticket), Decision::Hedge);
    /// assert_eq!(hedger.budget().granted(), 1);
    /// assert!((hedger.budget().balance() - 1.0).abs() < 1e-6); // one token taken
    /// ```
    pub fn budget(&self) -> &B {
        &self.budget
    }

    /// The configuration.
    ///
    /// ```
    /// use tailguard::clock::ManualClock;
    /// use tailguard::hedge::{HedgeConfig, Hedger};
    ///
    /// let clock = ManualClock::new();
    /// let config = HedgeConfig::new().with_percentile(0.95).with_max_hedges(2);
    /// let hedger = Hedger::new(&clock, config).unwrap();
    /// assert_eq!(hedger.config(), config);
    /// assert_eq!((hedger.config().percentile(), hedger.config().max_hedges()), (0.95, 2));
    /// ```
    pub fn config(&self) -> HedgeConfig {
        self.settings.config()
    }

    /// Records a latency observed outside the ticket lifecycle (warming up from a
    /// previous run, say).
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::clock::ManualClock;
    /// use tailguard::hedge::{Decision, HedgeConfig, Hedger};
    ///
    /// let clock = ManualClock::new();
    /// let hedger = Hedger::new(&clock, HedgeConfig::new().with_min_samples(10)).unwrap();
    /// for _ in 0..10 {
    ///     hedger.record(Duration::from_millis(20)); // the last run's latencies
    /// }
    /// assert_eq!((hedger.window().count(), hedger.stats().requests), (10, 0));
    /// let mut ticket = hedger.start();
    /// // Warm already: the first request waits for the learned delay, not a cold start.
    /// let Decision::Wait(wait) = hedger.should_hedge(&mut ticket) else { panic!() };
    /// assert!(wait >= Duration::from_millis(20) && wait <= Duration::from_micros(20_410));
    /// ```
    pub fn record(&self, latency: Duration) {
        self.window.record_duration(latency);
    }
}

impl<C: Clock, B, M: WindowKind, const N: usize> core::fmt::Debug for Hedger<C, B, M, N>
where
    <M as Kind>::Window<C, N>: core::fmt::Debug,
{
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Hedger")
            .field("config", &self.settings.config())
            .field("window", &self.window)
            .finish_non_exhaustive()
    }
}
