//! The hedgers over an auto-scaling [`ExponentialWindow`]: no range to choose, and a
//! window of a few hundred bytes ([`CompactHedger`]).

use crate::budget::{Budget, RatioBudget};
use crate::clock::{Clock, Instant, NoClock};
use crate::sketch::presets::COMPACT_LATENCY_BUCKETS;
use crate::sync::const_unless_loom;
use crate::window::{ExponentialWindow, WindowCounter};

use super::{Exponential, HedgeConfig, HedgeError, HedgePreset, Hedger, Parts};

/// A [`Hedger`] over an auto-scaling window: three slots of
/// [`COMPACT_LATENCY_BUCKETS`] (64) OpenTelemetry exponential buckets counted in `u16`,
/// whose scale follows the latencies, so there is no range to guess and no latency is
/// clamped. The policy, the integer-only decision path and `const` construction are
/// [`McuHedger`](super::McuHedger)'s, in a seventh of its memory (992 bytes against
/// 7,200 with a [`RatioBudget`] on a Cortex-M0; BENCHMARKS.md has the firmware
/// comparison), and built with the default configuration (from [`Instant::ZERO`]) it is
/// all zero bytes, so a `static` of it is `.bss`, with no copy in flash (for another
/// configuration, make it a [`HedgePreset`]: [`PresetCompactHedger`]); the price is accuracy: the hedge delay is the upper edge of the bucket
/// that holds the percentile, so up to a bucket's width above it, and the buckets are
/// 4.4 % to 19 % wide (relative accuracy 2.2 % to 8.6 %) as the interval's spread allows
/// (41 %, an accuracy of 17 %, where it spans more than 570:1 to 645:1, by how the range
/// falls across the buckets' edges; see [`COMPACT_LATENCY_BUCKETS`]), against
/// `McuHedger`'s bins of at most 3.2 % (1.56 %).
///
/// # Traffic
///
/// A `u16` bucket counts at most 32,767 latencies an interval
/// ([`WindowCounter::LIMIT`](crate::window::WindowCounter::LIMIT)); what comes past that
/// is left out and counted by the window's
/// [`saturated`](crate::window::ExponentialWindow::saturated), and the percentile is
/// learned from what was counted: with the fast mode's bucket full, the delay comes out
/// too high, and hedging too rare. With the default 30 s interval that is about 1,000
/// requests a second in one bucket. For more, count in `u32`
/// (`Hedger<C, B, Exponential<u32>, 64>`: 768 bytes of slots rather than 384) or shorten
/// the [interval](super::HedgeConfig::with_interval):
///
/// ```
/// use core::time::Duration;
/// use tailguard::clock::ManualClock;
/// use tailguard::hedge::{CompactHedger, Exponential, HedgeConfig, Hedger};
/// use tailguard::budget::RatioBudget;
///
/// let clock = ManualClock::new();
/// let small: CompactHedger<_> = Hedger::exponential(&clock, HedgeConfig::new()).unwrap();
/// let wide: Hedger<_, RatioBudget, Exponential<u32>, 64> =
///     Hedger::exponential(&clock, HedgeConfig::new()).unwrap();
/// for _ in 0..40_000 {
///     small.record(Duration::from_millis(1));
///     wide.record(Duration::from_millis(1));
/// }
/// assert_eq!(small.window().saturated(), 40_000 - 32_767);
/// assert_eq!(wide.window().saturated(), 0);
/// ```
///
/// # Example
///
/// ```
/// use core::time::Duration;
/// use tailguard::clock::ManualClock;
/// use tailguard::hedge::{Attempt, CompactHedger, Decision, HedgeConfig, Hedger};
///
/// let clock = ManualClock::new();
/// let config = HedgeConfig::new().with_min_samples(10).with_min_delay(Duration::from_micros(100));
/// let hedger: CompactHedger<_> = Hedger::exponential(&clock, config).unwrap();
/// for _ in 0..20 {
///     let ticket = hedger.start();
///     clock.advance(Duration::from_micros(800)); // a sensor read
///     hedger.on_success(&ticket, Attempt::Primary);
/// }
/// let mut ticket = hedger.start();
/// let Decision::Wait(wait) = hedger.should_hedge(&mut ticket) else { panic!() };
/// // The upper edge of 800 µs's bucket at the window's scale.
/// let accuracy = hedger.window().snapshot().relative_accuracy();
/// assert!(wait >= Duration::from_micros(800));
/// assert!(wait.as_secs_f64() <= 800e-6 * (1.0 + accuracy) / (1.0 - accuracy));
/// ```
pub type CompactHedger<C, B = RatioBudget> =
    Hedger<C, B, Exponential<u16>, COMPACT_LATENCY_BUCKETS>;

/// [`CompactHedger`] whose configuration is preset `P`'s: built by
/// [`Hedger::preset`] it is all zero bytes (its window and its [`RatioBudget`] of `P`'s
/// ratio and cap included), so a `static` of it is `.bss`, with no copy in flash, whatever
/// the configuration ([`HedgePreset`] has a `static` one).
///
/// ```
/// use core::time::Duration;
/// use tailguard::clock::{Instant, ManualClock};
/// use tailguard::hedge::{Attempt, HedgeConfig, HedgePreset, Hedger, PresetCompactHedger};
///
/// struct Quick;
/// impl HedgePreset for Quick {
///     const CONFIG: HedgeConfig = HedgeConfig::new().with_min_samples(5);
/// }
///
/// let clock = ManualClock::new();
/// let hedger: PresetCompactHedger<_, Quick> = Hedger::preset(&clock, Instant::ZERO).unwrap();
/// for _ in 0..5 {
///     let ticket = hedger.start();
///     clock.advance(Duration::from_millis(2));
///     hedger.on_success(&ticket, Attempt::Primary);
/// }
/// assert!(hedger.delay().unwrap() >= Duration::from_millis(2)); // learned from 5
/// ```
pub type PresetCompactHedger<C, P, B = RatioBudget<NoClock, P>> =
    Hedger<C, B, Exponential<u16, P>, COMPACT_LATENCY_BUCKETS>;

impl<C: Clock, K: WindowCounter, const N: usize> Hedger<C, RatioBudget, Exponential<K>, N> {
    /// A hedger over an auto-scaling window of `N` buckets per slot counted in `K`, with
    /// `config` and a [`RatioBudget`] of its ratio and cap.
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::budget::Budget;
    /// use tailguard::clock::ManualClock;
    /// use tailguard::hedge::{CompactHedger, HedgeConfig, HedgeError, Hedger};
    ///
    /// let clock = ManualClock::new();
    /// let config = HedgeConfig::new().with_budget_ratio(0.05).with_min_samples(5);
    /// let hedger: CompactHedger<_> = Hedger::exponential(&clock, config).unwrap();
    /// for _ in 0..5 {
    ///     hedger.record(Duration::from_millis(2));
    /// }
    /// // The window's scale adapts: no range to choose; the delay is about the p90.
    /// let delay = hedger.delay().unwrap();
    /// assert!(delay >= Duration::from_millis(2) && delay <= Duration::from_micros(2_100));
    /// assert!(hedger.budget().balance() > 0.0); // the ratio budget of the configuration
    /// let bad = Hedger::exponential(&clock, HedgeConfig::new().with_budget_ratio(-1.0));
    /// let _: &Result<CompactHedger<_>, _> = &bad;
    /// assert!(matches!(bad.err(), Some(HedgeError::Budget(_))));
    /// ```
    pub fn exponential(clock: C, config: HedgeConfig) -> Result<Self, HedgeError> {
        let budget = RatioBudget::new(config.budget_ratio, config.budget_cap)?;
        Hedger::exponential_with_budget(clock, config, budget)
    }
}

impl<C: Clock, B: Budget, K: WindowCounter, const N: usize> Hedger<C, B, Exponential<K>, N> {
    /// [`exponential`](Hedger::exponential) with its own budget (one several hedgers
    /// share, say: see [`with_budget`](Hedger::with_budget)).
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::budget::{Budget, TokenBucket};
    /// use tailguard::clock::ManualClock;
    /// use tailguard::hedge::{CompactHedger, HedgeConfig, Hedger};
    ///
    /// let clock = ManualClock::new();
    /// // One token bucket shared by two hedgers: 2 hedges per second between them, 2 at once.
    /// let shared = TokenBucket::new(&clock, 2.0, 2).unwrap();
    /// let config = HedgeConfig::new();
    /// let a: CompactHedger<_, _> = Hedger::exponential_with_budget(&clock, config, &shared).unwrap();
    /// let b: CompactHedger<_, _> = Hedger::exponential_with_budget(&clock, config, &shared).unwrap();
    /// assert!(a.budget().try_acquire());
    /// assert!(b.budget().try_acquire());
    /// assert!(!a.budget().try_acquire()); // b took the last token
    /// clock.advance(Duration::from_millis(500));
    /// assert!(a.budget().try_acquire()); // refilled at 2 per second
    /// ```
    pub fn exponential_with_budget(
        clock: C,
        config: HedgeConfig,
        budget: B,
    ) -> Result<Self, HedgeError> {
        let origin = clock.now();
        let parts = Parts::new(config, origin)?;
        let window = ExponentialWindow::from_parts(clock, parts.window_config, parts.window);
        Ok(Self::assemble(window, config, budget))
    }

    const_unless_loom! {
        /// [`exponential_with_budget`](Hedger::exponential_with_budget) with the window's
        /// first interval starting at `origin`: `const`, so that with a constant clock and
        /// budget the hedger is a `static` built at compile time, and an invalid
        /// configuration is a compile error. On an error the clock and the budget are
        /// forgotten rather than dropped (a `const fn` cannot run a destructor).
        ///
        /// ```
        /// use tailguard::budget::RatioBudget;
        /// use tailguard::clock::{Clock, Instant};
        /// use tailguard::hedge::{CompactHedger, HedgeConfig};
        ///
        /// /// A firmware clock: a unit struct reading a timer (here, fixed).
        /// struct Timer;
        /// impl Clock for Timer {
        ///     fn now(&self) -> Instant {
        ///         Instant::from_nanos(1_000_000)
        ///     }
        /// }
        ///
        /// static BUDGET: RatioBudget = match RatioBudget::new(0.1, 10) {
        ///     Ok(budget) => budget,
        ///     Err(_) => panic!("invalid budget"),
        /// };
        /// static HEDGER: CompactHedger<Timer, &RatioBudget> =
        ///     match CompactHedger::exponential_with_origin(Timer, HedgeConfig::new(), &BUDGET, Instant::ZERO) {
        ///         Ok(hedger) => hedger,
        ///         Err(_) => panic!("invalid hedge configuration"), // a compile error
        ///     };
        ///
        /// let _ticket = HEDGER.start();
        /// assert_eq!(HEDGER.stats().requests, 1);
        /// ```
        pub fn exponential_with_origin(
            clock: C,
            config: HedgeConfig,
            budget: B,
            origin: Instant,
        ) -> Result<Self, HedgeError> {
            Self::built_at(clock, config, budget, origin)
        }
    }
}

impl<C: Clock, K: WindowCounter, const N: usize, P: HedgePreset>
    Hedger<C, RatioBudget<NoClock, P>, Exponential<K, P>, N>
{
    const_unless_loom! {
        /// The hedger of preset `P`'s configuration and a [`RatioBudget`] of its ratio and
        /// cap, its window's first interval starting at `origin`: all zero bytes if
        /// `origin` is [`Instant::ZERO`], so a `static` of it (built at compile time: this
        /// is `const`) is `.bss`. Errors as [`exponential`](Hedger::exponential) does for
        /// `P`'s configuration (a compile error in a `static`); on an error the clock is
        /// forgotten rather than dropped.
        ///
        /// ```
        /// use core::time::Duration;
        /// use tailguard::budget::Budget;
        /// use tailguard::clock::{Instant, ManualClock};
        /// use tailguard::hedge::{HedgeConfig, HedgeError, HedgePreset, Hedger, PresetCompactHedger};
        ///
        /// struct Thrifty;
        /// impl HedgePreset for Thrifty {
        ///     const CONFIG: HedgeConfig = HedgeConfig::new().with_budget_ratio(0.02).with_budget_cap(2);
        /// }
        /// struct Broken;
        /// impl HedgePreset for Broken {
        ///     const CONFIG: HedgeConfig = HedgeConfig::new().with_interval(Duration::ZERO);
        /// }
        ///
        /// let clock = ManualClock::new();
        /// let hedger: PresetCompactHedger<_, Thrifty> = Hedger::preset(&clock, Instant::ZERO).unwrap();
        /// assert_eq!((hedger.budget().ratio(), hedger.budget().balance()), (0.02, 2.0));
        /// let broken: Result<PresetCompactHedger<_, Broken>, _> = Hedger::preset(&clock, Instant::ZERO);
        /// assert!(matches!(broken.err(), Some(HedgeError::Window(_))));
        /// ```
        pub fn preset(clock: C, origin: Instant) -> Result<Self, HedgeError> {
            match RatioBudget::preset() {
                Ok(budget) => Self::preset_with_budget(clock, budget, origin),
                Err(e) => {
                    core::mem::forget(clock);
                    Err(HedgeError::Budget(e))
                }
            }
        }
    }
}

impl<C: Clock, B: Budget, K: WindowCounter, const N: usize, P: HedgePreset>
    Hedger<C, B, Exponential<K, P>, N>
{
    const_unless_loom! {
        /// [`preset`](Hedger::preset) with its own budget (a `&'static` one several hedgers
        /// share, say; a `RatioBudget<NoClock, P>` made by
        /// [`RatioBudget::preset`] is zero bytes too).
        ///
        /// ```
        /// use tailguard::budget::{Budget, RatioBudget};
        /// use tailguard::clock::{Instant, NoClock};
        /// use tailguard::hedge::{HedgeConfig, HedgePreset, Hedger, PresetCompactHedger};
        ///
        /// struct Gateway;
        /// impl HedgePreset for Gateway {
        ///     const CONFIG: HedgeConfig = HedgeConfig::new().with_budget_ratio(0.05);
        /// }
        ///
        /// static BUDGET: RatioBudget<NoClock, Gateway> = match RatioBudget::preset() {
        ///     Ok(budget) => budget,
        ///     Err(_) => panic!("invalid budget"),
        /// };
        /// type Route = PresetCompactHedger<NoClock, Gateway, &'static RatioBudget<NoClock, Gateway>>;
        /// static SEARCH: Route = match Hedger::preset_with_budget(NoClock, &BUDGET, Instant::ZERO) {
        ///     Ok(hedger) => hedger,
        ///     Err(_) => panic!("invalid hedge configuration"),
        /// };
        /// static ITEMS: Route = match Hedger::preset_with_budget(NoClock, &BUDGET, Instant::ZERO) {
        ///     Ok(hedger) => hedger,
        ///     Err(_) => panic!("invalid hedge configuration"),
        /// };
        ///
        /// assert!(SEARCH.budget().try_acquire());
        /// assert_eq!(ITEMS.budget().granted(), 1); // one budget
        /// ```
        pub fn preset_with_budget(clock: C, budget: B, origin: Instant) -> Result<Self, HedgeError> {
            Self::built_at(clock, P::CONFIG, budget, origin)
        }
    }

    const_unless_loom! {
        /// The hedger of `config`, its window's first interval starting at `origin`, or
        /// why `config` is refused (the clock and the budget then forgotten).
        fn built_at(clock: C, config: HedgeConfig, budget: B, origin: Instant) -> Result<Self, HedgeError> {
            match Parts::new(config, origin) {
                Ok(parts) => {
                    let window = ExponentialWindow::from_parts(clock, parts.window_config, parts.window);
                    Ok(Self::assemble(window, config, budget))
                }
                Err(e) => {
                    core::mem::forget(clock);
                    core::mem::forget(budget);
                    Err(e)
                }
            }
        }
    }
}
