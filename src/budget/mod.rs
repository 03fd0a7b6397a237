//! Hedge budgets: caps on how many backup requests may be sent, so that hedging never
//! multiplies load during an outage.
//!
//! * [`RatioBudget`] (the default): every request deposits a share of a token (10 %), every
//!   hedge spends a whole one. It scales with real traffic, needs no rate estimate, and
//!   stops hedging by itself when everything is slow.
//! * [`TokenBucket`]: a fixed rate and burst, refilled from a [`Clock`](crate::Clock)
//!   (GCRA in one 32-bit word).
//!
//! Both are lock-free, take `&self`, never overdraw under contention (the check and the
//! withdrawal are one compare-and-swap), and touch only native 32-bit atomics, so
//! `try_acquire` is safe to call from interrupt handlers on every supported target.
//! On thumbv6m and riscv32imc, which have no compare-and-swap instruction, portable-atomic
//! implements it with the critical section the firmware chose.

mod ratio;
mod token_bucket;

use core::fmt;

use crate::sync::{const_unless_loom, AtomicU32, Ordering::Relaxed};

pub use ratio::RatioBudget;
pub use token_bucket::TokenBucket;

/// A [`RatioBudget`]'s ratio and cap known when the program is compiled, as a type: a
/// `RatioBudget<_, P>` built with them ([`RatioBudget::preset`]) is all zero bytes, so a
/// `static` of it is `.bss` rather than `.data` (no copy of it in flash). Other ratios and
/// caps still work, each read a XOR away. Every
/// [`HedgePreset`](crate::hedge::HedgePreset) is one, with its configuration's budget.
///
/// ```
/// use tailguard::budget::{Budget, BudgetPreset, RatioBudget};
/// use tailguard::clock::NoClock;
///
/// struct Gateway;
/// impl BudgetPreset for Gateway {
///     const RATIO: f64 = 0.02;
///     const CAP: u32 = 100;
/// }
///
/// let budget = RatioBudget::<NoClock, Gateway>::preset().unwrap();
/// assert_eq!((budget.ratio(), budget.cap()), (0.02, 100));
/// assert!(budget.try_acquire()); // it starts full
/// ```
pub trait BudgetPreset {
    /// The deposit per request, in tokens (as [`RatioBudget::new`]'s `ratio`).
    const RATIO: f64;
    /// The most tokens saved up (as [`RatioBudget::new`]'s `cap`).
    const CAP: u32;
}

/// The common interface of hedge budgets.
///
/// ```
/// use tailguard::budget::{Budget, RatioBudget};
///
/// fn send_backup(budget: &impl Budget) -> bool {
///     budget.try_acquire()
/// }
/// let budget = RatioBudget::new(0.5, 1).unwrap(); // half a token per request, one at most
/// assert!(send_backup(&budget)); // it starts full
/// assert!(!send_backup(&budget));
/// budget.on_request();
/// budget.on_request();
/// assert!((budget.balance() - 1.0).abs() < 1e-6);
/// budget.drain(); // back-pressure
/// assert_eq!((budget.balance(), budget.granted(), budget.denied()), (0.0, 1, 1));
/// ```
pub trait Budget {
    /// Takes one token for a hedge. `false` (and nothing taken) if the budget is empty.
    ///
    /// ```
    /// use tailguard::budget::{Budget, RatioBudget};
    ///
    /// let budget = RatioBudget::new(0.1, 2).unwrap(); // starts full: two tokens
    /// assert!(budget.try_acquire());
    /// assert!(budget.try_acquire());
    /// assert!(!budget.try_acquire()); // empty: no hedge
    /// assert_eq!(budget.balance(), 0.0); // and nothing taken
    /// ```
    fn try_acquire(&self) -> bool;

    /// Tells the budget a request was made (a [`RatioBudget`] deposits its ratio;
    /// a [`TokenBucket`] refills from the clock instead and ignores this).
    ///
    /// ```
    /// use tailguard::budget::{Budget, RatioBudget, TokenBucket};
    /// use tailguard::clock::ManualClock;
    ///
    /// let budget = RatioBudget::new(0.25, 1).unwrap();
    /// budget.drain();
    /// for _ in 0..3 {
    ///     budget.on_request();
    /// }
    /// assert!(!budget.try_acquire()); // three quarters of a token
    /// budget.on_request();
    /// assert!(budget.try_acquire()); // four requests paid for one hedge
    ///
    /// let clock = ManualClock::new();
    /// let bucket = TokenBucket::new(&clock, 10.0, 1).unwrap();
    /// bucket.drain();
    /// bucket.on_request(); // ignored: only the clock refills a bucket
    /// assert!(!bucket.try_acquire());
    /// ```
    fn on_request(&self) {}

    /// Removes up to `tokens` tokens, for back-pressure: an HTTP 429 or a gRPC
    /// RESOURCE_EXHAUSTED means hedges are spending a shared quota.
    ///
    /// ```
    /// use tailguard::budget::{Budget, RatioBudget};
    ///
    /// let budget = RatioBudget::new(0.1, 5).unwrap();
    /// budget.penalize(2); // a 429
    /// assert_eq!(budget.balance(), 3.0);
    /// budget.penalize(10); // more than is left: empty, never negative
    /// assert_eq!(budget.balance(), 0.0);
    /// assert!(!budget.try_acquire());
    /// ```
    fn penalize(&self, tokens: u32);

    /// Removes every token available now, however many: afterwards
    /// [`try_acquire`](Self::try_acquire) fails until the budget earns a token again
    /// (a request's deposit, time's refill). What
    /// [`Hedger::on_rate_limited`](crate::hedge::Hedger::on_rate_limited) calls: a custom
    /// budget must honour it exactly.
    ///
    /// ```
    /// use tailguard::budget::{Budget, RatioBudget};
    ///
    /// let budget = RatioBudget::new(0.5, 3).unwrap();
    /// budget.drain(); // all three tokens
    /// assert!(!budget.try_acquire());
    /// budget.on_request();
    /// budget.on_request(); // earned one back
    /// assert!(budget.try_acquire());
    /// ```
    fn drain(&self);

    /// Tokens available now.
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::budget::{Budget, TokenBucket};
    /// use tailguard::clock::ManualClock;
    ///
    /// let clock = ManualClock::new();
    /// let bucket = TokenBucket::new(&clock, 10.0, 2).unwrap(); // 10 per second, burst 2
    /// assert_eq!(bucket.balance(), 2.0);
    /// assert!(bucket.try_acquire());
    /// assert_eq!(bucket.balance(), 1.0);
    /// clock.advance(Duration::from_millis(50)); // half a token's refill
    /// assert!((bucket.balance() - 1.5).abs() < 1e-3);
    /// ```
    fn balance(&self) -> f64;

    /// Hedges granted so far (wrapping at 2^32).
    ///
    /// ```
    /// use tailguard::budget::{Budget, RatioBudget};
    ///
    /// let budget = RatioBudget::new(0.0, 2).unwrap();
    /// for _ in 0..5 {
    ///     budget.try_acquire();
    /// }
    /// assert_eq!(budget.granted(), 2); // the two tokens it started with
    /// budget.penalize(1); // tokens taken otherwise are not hedges
    /// assert_eq!(budget.granted(), 2);
    /// ```
    fn granted(&self) -> u32;

    /// Hedges denied so far (wrapping at 2^32).
    ///
    /// ```
    /// use tailguard::budget::{Budget, RatioBudget};
    ///
    /// let budget = RatioBudget::new(0.0, 2).unwrap();
    /// for _ in 0..5 {
    ///     budget.try_acquire();
    /// }
    /// assert_eq!(budget.denied(), 3);
    /// assert_eq!(budget.granted() + budget.denied(), 5); // every call counted once
    /// ```
    fn denied(&self) -> u32;
}

/// Forwards every method to the budget behind a pointer: hedgers given `&budget`, an
/// `Arc` of it or a `&'static` one share its tokens.
macro_rules! forward_budget {
    ($($pointer:ty),*) => {$(
        impl<B: Budget + ?Sized> Budget for $pointer {
            fn try_acquire(&self) -> bool {
                (**self).try_acquire()
            }
            fn on_request(&self) {
                (**self).on_request()
            }
            fn penalize(&self, tokens: u32) {
                (**self).penalize(tokens)
            }
            fn drain(&self) {
                (**self).drain()
            }
            fn balance(&self) -> f64 {
                (**self).balance()
            }
            fn granted(&self) -> u32 {
                (**self).granted()
            }
            fn denied(&self) -> u32 {
                (**self).denied()
            }
        }
    )*};
}

forward_budget!(&B);
#[cfg(feature = "std")]
forward_budget!(std::sync::Arc<B>);

/// The hedges a budget granted and denied: what [`Budget::granted`] and
/// [`Budget::denied`] report. Each counter wraps at 2^32 (a native 32-bit atomic, so that
/// `try_acquire` stays interrupt-safe everywhere).
#[derive(Debug)]
struct Tally {
    granted: AtomicU32,
    denied: AtomicU32,
}

impl Tally {
    const_unless_loom! {
        fn new() -> Self {
            Tally {
                granted: AtomicU32::new(0),
                denied: AtomicU32::new(0),
            }
        }
    }

    /// Counts one decision and returns it.
    #[inline]
    fn count(&self, granted: bool) -> bool {
        let counter = if granted { &self.granted } else { &self.denied };
        counter.fetch_add(1, Relaxed);
        granted
    }

    fn granted(&self) -> u32 {
        self.granted.load(Relaxed)
    }

    fn denied(&self) -> u32 {
        self.denied.load(Relaxed)
    }
}

/// Why a budget configuration was refused.
///
/// ```
/// use tailguard::budget::{BudgetError, RatioBudget, TokenBucket};
/// use tailguard::clock::ManualClock;
///
/// let clock = ManualClock::new();
/// assert_eq!(RatioBudget::new(f64::NAN, 1).err(), Some(BudgetError::InvalidRatio));
/// assert_eq!(RatioBudget::new(0.1, 0).err(), Some(BudgetError::InvalidCap));
/// assert_eq!(TokenBucket::new(&clock, 0.0, 1).err(), Some(BudgetError::InvalidRate));
/// assert_eq!(TokenBucket::new(&clock, 10.0, 2000).err(), Some(BudgetError::InvalidBurst));
/// let err = RatioBudget::new(0.1, RatioBudget::MAX_CAP + 1).unwrap_err();
/// assert_eq!(err.to_string(), "cap must be between 1 and 4294 tokens");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum BudgetError {
    /// The ratio is not a finite number in [0, 1000].
    InvalidRatio,
    /// The cap is zero or above [`RatioBudget::MAX_CAP`] tokens.
    InvalidCap,
    /// The rate is not a finite number in (0, 10^6] tokens per second.
    InvalidRate,
    /// The burst is zero or above 1024, or takes more than 2^51 ns (26 days) to refill.
    InvalidBurst,
}

impl fmt::Display for BudgetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BudgetError::InvalidRatio => "ratio must be a finite number in [0, 1000]",
            BudgetError::InvalidCap => "cap must be between 1 and 4294 tokens",
            BudgetError::InvalidRate => "rate must be in (0, 1e6] tokens per second",
            BudgetError::InvalidBurst => "burst must be in [1, 1024] and refill within 26 days",
        })
    }
}

impl core::error::Error for BudgetError {}
