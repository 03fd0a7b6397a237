//! [`RatioBudget`]: each request deposits a share of a token, each hedge spends one.

use core::marker::PhantomData;

use super::{Budget, BudgetError, BudgetPreset, Tally, TokenBucket};
use crate::clock::{Clock, NoClock};
use crate::preset::Defaults;
use crate::sync::{const_unless_loom, AtomicU32, Ordering::Relaxed};

/// Fixed-point units per token: millionths, so a ratio of 0.6 deposits exactly 600,000.
const UNITS_PER_TOKEN: u32 = 1_000_000;

/// A ratio budget: every request deposits `ratio` of a token, every hedge withdraws one
/// whole token; the balance is capped.
///
/// So over any run, `hedges granted <= ratio * requests + cap` (plus the optional minimum
/// allowance), exactly, with the ratio as kept ([`ratio`](Self::ratio): the one given,
/// rounded to the nearest millionth, so up to twice a ratio below 1e-6): the balance is integer millionths of a token (0.6 means 60 %, not
/// 100 % as with a truncated float), and the check and the withdrawal are one
/// compare-and-swap, so racing threads can never overdraw it. It starts full.
///
/// `P` is the [`BudgetPreset`] whose ratio and cap the budget stores as zero bytes (a
/// budget of any other ratio or cap costs a XOR per read): with its preset's, a budget is
/// all zero bytes, so a `static` of it is `.bss` (see [`RatioBudget::preset`]). The
/// default, [`Defaults`], is a default [`HedgeConfig`](crate::hedge::HedgeConfig)'s
/// budget (10 %, 50 tokens).
///
/// At low traffic a ratio alone allows almost nothing; [`with_min_allowance`] adds a
/// clocked [`TokenBucket`] that is spent when the ratio balance is empty (as Finagle and
/// Linkerd do).
///
/// [`with_min_allowance`]: RatioBudget::with_min_allowance
///
/// ```
/// use tailguard::budget::{Budget, RatioBudget};
///
/// let budget = RatioBudget::new(0.1, 1).unwrap(); // 10 %, at most 1 token saved up
/// assert!(budget.try_acquire()); // it starts full
/// assert!(!budget.try_acquire());
/// for _ in 0..10 {
///     budget.on_request();
/// }
/// assert!(budget.try_acquire()); // ten requests paid for one hedge
/// assert_eq!((budget.granted(), budget.denied()), (2, 1));
/// ```
pub struct RatioBudget<C: Clock = NoClock, P = Defaults> {
    /// Millionths of a token below the cap (0: full, as a budget starts).
    missing: AtomicU32,
    /// Millionths of a token per request, XOR `P`'s ([`Keys::DEPOSIT`]).
    deposit: u32,
    /// Millionths of a token, XOR `P`'s ([`Keys::CAP`]).
    cap: u32,
    allowance: Option<TokenBucket<C>>,
    tally: Tally,
    preset: PhantomData<fn() -> P>,
}

/// The deposit and cap a budget of preset `P` stores as zero (those of the defaults if
/// `P`'s are invalid: a key only has to be fixed, and [`RatioBudget::preset`] refuses
/// them).
struct Keys<P>(PhantomData<P>);

impl<P: BudgetPreset> Keys<P> {
    const DEPOSIT: u32 = match parts_per_million(P::RATIO) {
        Some(ppm) => ppm,
        None => UNITS_PER_TOKEN / 10,
    };
    const CAP: u32 = match units_of_cap(P::CAP) {
        Some(units) => units,
        None => 50 * UNITS_PER_TOKEN,
    };
}

/// `ratio` in millionths of a token, rounded to the nearest, if it is in [0, 1000].
const fn parts_per_million(ratio: f64) -> Option<u32> {
    if !(ratio >= 0.0 && ratio <= 1000.0) {
        return None;
    }
    // Rounded half away from zero, as `libm::round`: x is in [0, 1e9], so the cast
    // truncates to its floor and `x - whole` is exact (Sterbenz; or whole = 0).
    let x = ratio * 1e6;
    let whole = x as u32;
    Some(if x - whole as f64 >= 0.5 {
        whole.wrapping_add(1) // at most 1e9
    } else {
        whole
    })
}

/// A cap of `cap` tokens in millionths, if it is in [1, [`RatioBudget::MAX_CAP`]].
const fn units_of_cap(cap: u32) -> Option<u32> {
    if cap == 0 || cap > RatioBudget::MAX_CAP {
        return None;
    }
    Some(cap.wrapping_mul(UNITS_PER_TOKEN)) // no overflow below MAX_CAP
}

impl RatioBudget {
    /// The largest cap, in tokens (the balance is a `u32` of millionths).
    ///
    /// ```
    /// use tailguard::budget::{Budget, BudgetError, RatioBudget};
    ///
    /// assert_eq!(RatioBudget::MAX_CAP, 4294);
    /// let largest = RatioBudget::new(0.1, RatioBudget::MAX_CAP).unwrap();
    /// assert_eq!(largest.balance(), 4294.0); // it starts full
    /// let refused = RatioBudget::new(0.1, RatioBudget::MAX_CAP + 1).err();
    /// assert_eq!(refused, Some(BudgetError::InvalidCap));
    /// ```
    pub const MAX_CAP: u32 = u32::MAX / UNITS_PER_TOKEN;

    const_unless_loom! {
        /// A budget depositing `ratio` tokens per request (0.1 = 10 % extra load), holding
        /// at most `cap` tokens, starting full.
        ///
        /// `ratio` is rounded to the nearest millionth. Errors unless `ratio` is in
        /// [0, 1000] and `cap` in [1, [`MAX_CAP`](Self::MAX_CAP)].
        ///
        /// `const`, so a budget can be a `static` (shared by every hedger of a firmware,
        /// say) and invalid parameters a compile error:
        ///
        /// ```
        /// use tailguard::budget::{Budget, RatioBudget};
        ///
        /// static BUDGET: RatioBudget = match RatioBudget::new(0.05, 10) {
        ///     Ok(budget) => budget,
        ///     Err(_) => panic!("invalid ratio or cap"), // a compile error
        /// };
        ///
        /// assert!(BUDGET.try_acquire()); // it starts full
        /// assert_eq!(BUDGET.cap(), 10);
        /// ```
        pub fn new(ratio: f64, cap: u32) -> Result<Self, BudgetError> {
            match parts_per_million(ratio) {
                Some(ppm) => Self::from_parts_per_million(ppm, cap),
                None => Err(BudgetError::InvalidRatio),
            }
        }
    }

    const_unless_loom! {
        /// [`new`](Self::new) with the ratio in millionths of a token (100,000 = 10 %).
        ///
        /// ```
        /// use tailguard::budget::{Budget, BudgetError, RatioBudget};
        ///
        /// let budget = RatioBudget::from_parts_per_million(250_000, 1).unwrap(); // 25 %
        /// assert_eq!(budget.ratio(), 0.25);
        /// assert!(budget.try_acquire()); // it starts full
        /// for _ in 0..3 {
        ///     budget.on_request();
        /// }
        /// assert!(!budget.try_acquire()); // three quarters of a token
        /// budget.on_request();
        /// assert!(budget.try_acquire()); // four requests paid for one hedge
        /// let too_much = RatioBudget::from_parts_per_million(1_000_000_001, 1).err();
        /// assert_eq!(too_much, Some(BudgetError::InvalidRatio));
        /// let no_cap = RatioBudget::from_parts_per_million(250_000, 0).err();
        /// assert_eq!(no_cap, Some(BudgetError::InvalidCap));
        /// ```
        pub fn from_parts_per_million(ppm: u32, cap: u32) -> Result<Self, BudgetError> {
            let Some(cap) = units_of_cap(cap) else {
                return Err(BudgetError::InvalidCap);
            };
            if ppm > 1000 * UNITS_PER_TOKEN {
                return Err(BudgetError::InvalidRatio);
            }
            Ok(Self::of_units(ppm, cap))
        }
    }
}

impl<P: BudgetPreset> RatioBudget<NoClock, P> {
    const_unless_loom! {
        /// The budget of `P`'s ratio and cap, starting full: all zero bytes, so a `static`
        /// of it is `.bss` (no image in flash, nothing for the startup code to copy).
        /// Errors as [`new`](RatioBudget::new) does for `P`'s ratio and cap.
        ///
        /// ```
        /// use tailguard::budget::{Budget, BudgetPreset, RatioBudget};
        /// use tailguard::clock::NoClock;
        ///
        /// /// 5 % of traffic, at most 8 tokens.
        /// struct Sensors;
        /// impl BudgetPreset for Sensors {
        ///     const RATIO: f64 = 0.05;
        ///     const CAP: u32 = 8;
        /// }
        ///
        /// static BUDGET: RatioBudget<NoClock, Sensors> = match RatioBudget::preset() {
        ///     Ok(budget) => budget,
        ///     Err(_) => panic!("invalid ratio or cap"), // a compile error
        /// };
        ///
        /// assert_eq!((BUDGET.ratio(), BUDGET.cap(), BUDGET.balance()), (0.05, 8, 8.0));
        /// ```
        pub fn preset() -> Result<Self, BudgetError> {
            let Some(ppm) = parts_per_million(P::RATIO) else {
                return Err(BudgetError::InvalidRatio);
            };
            match units_of_cap(P::CAP) {
                Some(cap) => Ok(Self::of_units(ppm, cap)),
                None => Err(BudgetError::InvalidCap),
            }
        }
    }

    const_unless_loom! {
        /// The full budget of a checked deposit and cap, in millionths of a token.
        fn of_units(deposit: u32, cap: u32) -> Self {
            RatioBudget {
                missing: AtomicU32::new(0),
                deposit: deposit ^ Keys::<P>::DEPOSIT,
                cap: cap ^ Keys::<P>::CAP,
                allowance: None,
                tally: Tally::new(),
                preset: PhantomData,
            }
        }
    }

    const_unless_loom! {
        /// Adds a minimum allowance of `per_second` hedges per second, spent only when the
        /// ratio balance is empty, so hedging still works at very low traffic: a
        /// [`TokenBucket`] of that rate whose burst is one second's worth, rounded up,
        /// between 1 and 1,024 tokens.
        ///
        /// Errors with [`BudgetError::InvalidRate`] unless `per_second` is in (0, 10^6],
        /// and with [`BudgetError::InvalidBurst`] if that burst would take more than 26
        /// days to refill (rates below about 4.5e-7 per second). `const` (see
        /// [`TokenBucket::new`] for the clock).
        ///
        /// ```
        /// use core::time::Duration;
        /// use tailguard::budget::{Budget, BudgetError, RatioBudget};
        /// use tailguard::clock::ManualClock;
        ///
        /// let clock = ManualClock::new();
        /// // 1 % of traffic, but at least two hedges a second.
        /// let budget = RatioBudget::new(0.01, 1).unwrap().with_min_allowance(2.0, &clock).unwrap();
        /// assert!(budget.try_acquire()); // the ratio balance's token
        /// assert!(budget.try_acquire() && budget.try_acquire()); // the allowance's burst of 2
        /// assert!(!budget.try_acquire()); // no traffic paid for more
        /// clock.advance(Duration::from_millis(500));
        /// assert!(budget.try_acquire()); // one more every half second
        /// assert!(!budget.try_acquire());
        /// let none = RatioBudget::new(0.01, 1).unwrap().with_min_allowance(0.0, &clock).err();
        /// assert_eq!(none, Some(BudgetError::InvalidRate));
        /// ```
        pub fn with_min_allowance<C: Clock>(
            self,
            per_second: f64,
            clock: C,
        ) -> Result<RatioBudget<C, P>, BudgetError> {
            // `ceil(per_second)` clamped to [1, MAX_BURST]: the cast saturates (NaN gives
            // 0), and a fraction above it rounds up. A NaN or out-of-range rate is refused
            // by the bucket.
            let whole = per_second as u32;
            let ceil = if (whole as f64) < per_second {
                whole.saturating_add(1)
            } else {
                whole
            };
            let max = TokenBucket::<C>::MAX_BURST;
            let burst = if ceil < 1 {
                1
            } else if ceil > max {
                max
            } else {
                ceil
            };
            // As `TokenBucket::new`, validated without the clock (a `const fn` can match on
            // a `Result` only if nothing in it has a destructor).
            match TokenBucket::<C>::emission(per_second, burst) {
                Ok((shift, emission)) => Ok(RatioBudget {
                    missing: self.missing,
                    deposit: self.deposit,
                    cap: self.cap,
                    allowance: Some(TokenBucket::with_emission(clock, shift, emission, burst)),
                    tally: self.tally,
                    preset: PhantomData,
                }),
                Err(e) => {
                    // Not dropped: a `const fn` cannot run `C`'s destructor.
                    core::mem::forget(clock);
                    Err(e)
                }
            }
        }
    }
}

impl Default for RatioBudget {
    /// 10 % of traffic, at most 10 tokens saved up.
    ///
    /// ```
    /// use tailguard::budget::{Budget, RatioBudget};
    ///
    /// let budget = RatioBudget::default();
    /// assert_eq!((budget.ratio(), budget.cap()), (0.1, 10));
    /// assert_eq!(budget.balance(), 10.0); // it starts full
    /// assert!(budget.allowance().is_none());
    /// ```
    fn default() -> Self {
        Self::of_units(UNITS_PER_TOKEN / 10, 10 * UNITS_PER_TOKEN)
    }
}

impl<C: Clock, P: BudgetPreset> RatioBudget<C, P> {
    /// The deposit per request, in tokens.
    ///
    /// ```
    /// use tailguard::budget::RatioBudget;
    ///
    /// assert_eq!(RatioBudget::new(0.1, 10).unwrap().ratio(), 0.1);
    /// // Kept in millionths of a token, rounded to the nearest.
    /// assert_eq!(RatioBudget::new(0.123_456_7, 10).unwrap().ratio(), 0.123_457);
    /// assert_eq!(RatioBudget::from_parts_per_million(50_000, 10).unwrap().ratio(), 0.05);
    /// ```
    pub fn ratio(&self) -> f64 {
        f64::from(self.deposit()) / f64::from(UNITS_PER_TOKEN)
    }

    /// The most tokens the ratio balance holds.
    ///
    /// ```
    /// use tailguard::budget::{Budget, RatioBudget};
    ///
    /// let budget = RatioBudget::new(0.5, 3).unwrap();
    /// assert_eq!(budget.cap(), 3);
    /// for _ in 0..100 {
    ///     budget.on_request(); // full already: deposits past the cap are lost
    /// }
    /// assert_eq!(budget.balance(), 3.0);
    /// assert_eq!((0..10).filter(|_| budget.try_acquire()).count(), 3);
    /// ```
    pub fn cap(&self) -> u32 {
        self.units_cap() / UNITS_PER_TOKEN
    }

    /// The deposit per request in millionths of a token.
    #[inline(always)]
    fn deposit(&self) -> u32 {
        self.deposit ^ Keys::<P>::DEPOSIT
    }

    /// The cap in millionths of a token.
    #[inline(always)]
    fn units_cap(&self) -> u32 {
        self.cap ^ Keys::<P>::CAP
    }

    /// The minimum allowance, if any.
    ///
    /// ```
    /// use tailguard::budget::RatioBudget;
    /// use tailguard::clock::ManualClock;
    ///
    /// let clock = ManualClock::new();
    /// assert!(RatioBudget::new(0.1, 10).unwrap().allowance().is_none());
    /// let budget = RatioBudget::new(0.1, 10).unwrap().with_min_allowance(2.5, &clock).unwrap();
    /// let allowance = budget.allowance().unwrap();
    /// assert_eq!(allowance.burst(), 3); // one second's worth, rounded up
    /// assert!(allowance.rate() >= 2.5 && allowance.rate() < 2.5 * (1.0 + 1.0 / 512.0));
    /// ```
    pub fn allowance(&self) -> Option<&TokenBucket<C>> {
        self.allowance.as_ref()
    }
}

/// The budget as configured and its balance (the stored words are XOR defaults).
///
/// ```
/// use tailguard::budget::RatioBudget;
///
/// let budget = RatioBudget::new(0.25, 3).unwrap();
/// let shown = format!("{budget:?}");
/// assert!(shown.contains("ratio: 0.25") && shown.contains("cap: 3") && shown.contains("balance: 3.0"));
/// ```
impl<C: Clock + core::fmt::Debug, P: BudgetPreset> core::fmt::Debug for RatioBudget<C, P> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("RatioBudget")
            .field("ratio", &self.ratio())
            .field("cap", &self.cap())
            .field("balance", &self.balance())
            .field("allowance", &self.allowance)
            .field("tally", &self.tally)
            .finish()
    }
}

impl<C: Clock, P: BudgetPreset> Budget for RatioBudget<C, P> {
    fn try_acquire(&self) -> bool {
        let cap = self.units_cap();
        let from_ratio = self
            .missing
            .fetch_update(Relaxed, Relaxed, |m| {
                m.checked_add(UNITS_PER_TOKEN).filter(|&after| after <= cap)
            })
            .is_ok();
        let granted = from_ratio || self.allowance.as_ref().is_some_and(|a| a.try_acquire());
        self.tally.count(granted)
    }

    fn on_request(&self) {
        // Err only means the balance was already at the cap: nothing to write.
        let deposit = self.deposit();
        let _ = self.missing.fetch_update(Relaxed, Relaxed, |m| {
            (m > 0).then(|| m.saturating_sub(deposit))
        });
    }

    fn penalize(&self, tokens: u32) {
        let units = tokens.saturating_mul(UNITS_PER_TOKEN);
        let cap = self.units_cap();
        let missing = match self
            .missing
            .fetch_update(Relaxed, Relaxed, |m| Some(m.saturating_add(units).min(cap)))
        {
            Ok(m) | Err(m) => m,
        };
        let before = cap.saturating_sub(missing);
        // The rest from the allowance, in whole tokens (rounded down: at most `tokens` in
        // all). In 64 bits: `units` saturates at 4,294.97 tokens, which would leave the
        // allowance untouched by a larger penalty when the ratio balance is nearly full.
        const PER_TOKEN: u64 = UNITS_PER_TOKEN as u64;
        let rest = u64::from(tokens)
            .saturating_mul(PER_TOKEN)
            .saturating_sub(u64::from(before))
            / PER_TOKEN;
        // At most `tokens`: the conversion cannot fail.
        let rest = u32::try_from(rest).unwrap_or(tokens);
        if let (Some(allowance), true) = (&self.allowance, rest > 0) {
            allowance.penalize(rest);
        }
    }

    /// Empties the ratio balance (fractions of a token included) and the allowance.
    fn drain(&self) {
        self.missing.store(self.units_cap(), Relaxed);
        if let Some(allowance) = &self.allowance {
            allowance.drain();
        }
    }

    fn balance(&self) -> f64 {
        let own = self.units_cap().saturating_sub(self.missing.load(Relaxed));
        let own = f64::from(own) / f64::from(UNITS_PER_TOKEN);
        own + self.allowance.as_ref().map_or(0.0, |a| a.balance())
    }

    fn granted(&self) -> u32 {
        self.tally.granted()
    }

    fn denied(&self) -> u32 {
        self.tally.denied()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// A default hedge configuration's budget is stored as zero words (a `static` hedger
    /// built with the defaults is `.bss`), and a full budget as no missing units.
    #[test]
    fn the_hedge_defaults_budget_is_stored_as_zero() {
        let config = crate::hedge::HedgeConfig::new();
        let b = RatioBudget::new(config.budget_ratio(), config.budget_cap()).unwrap();
        assert_eq!((b.deposit, b.cap, b.missing.load(Relaxed)), (0, 0, 0));
        assert!(b.allowance.is_none());
        assert_eq!((b.ratio(), b.cap(), b.balance()), (0.1, 50, 50.0));
    }

    struct Tiny;
    impl BudgetPreset for Tiny {
        const RATIO: f64 = 0.000_000_4; // rounds to 0 millionths
        const CAP: u32 = RatioBudget::MAX_CAP;
    }

    struct Invalid;
    impl BudgetPreset for Invalid {
        const RATIO: f64 = f64::NAN;
        const CAP: u32 = 0;
    }

    /// A preset's budget is stored as zero words; any other ratio and cap against it reads
    /// back as given; an invalid preset is refused but still keys others.
    #[test]
    fn a_presets_budget_is_stored_as_zero() {
        let b = RatioBudget::<NoClock, Tiny>::preset().unwrap();
        assert_eq!((b.deposit, b.cap, b.missing.load(Relaxed)), (0, 0, 0));
        assert_eq!((b.ratio(), b.cap()), (0.0, RatioBudget::MAX_CAP));
        let other = RatioBudget::<NoClock, Tiny>::of_units(250_000, 3 * UNITS_PER_TOKEN);
        assert_eq!(
            (other.ratio(), other.cap(), other.balance()),
            (0.25, 3, 3.0)
        );
        assert_eq!(
            RatioBudget::<NoClock, Invalid>::preset().err(),
            Some(BudgetError::InvalidRatio)
        );
        let keyed = RatioBudget::<NoClock, Invalid>::of_units(100_000, UNITS_PER_TOKEN);
        assert_eq!((keyed.ratio(), keyed.cap()), (0.1, 1));
    }
    use crate::clock::ManualClock;
    use core::time::Duration;

    #[test]
    fn six_tenths_means_sixty_percent() {
        // A cap of 2 never truncates a deposit here (the balance stays below 1.6).
        let b = RatioBudget::new(0.6, 2).unwrap();
        assert!(b.try_acquire() && b.try_acquire());
        let mut granted = 0;
        for _ in 0..1000 {
            b.on_request();
            if b.try_acquire() {
                granted += 1;
            }
        }
        assert_eq!(granted, 600);
    }

    #[test]
    fn balance_is_capped_and_never_negative() {
        let b = RatioBudget::new(0.5, 2).unwrap();
        for _ in 0..100 {
            b.on_request();
        }
        assert_eq!(b.balance(), 2.0);
        b.penalize(5);
        assert_eq!(b.balance(), 0.0);
        assert!(!b.try_acquire());
        b.penalize(u32::MAX);
        assert_eq!(b.balance(), 0.0);
    }

    #[test]
    fn bad_configurations_are_errors() {
        for r in [-0.1, f64::NAN, f64::INFINITY, 1000.5] {
            assert_eq!(
                RatioBudget::new(r, 1).err(),
                Some(BudgetError::InvalidRatio)
            );
        }
        assert_eq!(
            RatioBudget::new(0.1, 0).err(),
            Some(BudgetError::InvalidCap)
        );
        assert_eq!(
            RatioBudget::new(0.1, 5000).err(),
            Some(BudgetError::InvalidCap)
        );
        assert!(RatioBudget::new(0.1, RatioBudget::MAX_CAP).is_ok());
        let c = ManualClock::new();
        assert!(RatioBudget::default()
            .with_min_allowance(f64::NAN, &c)
            .is_err());
    }

    #[test]
    fn zero_ratio_spends_only_the_initial_cap() {
        let b = RatioBudget::new(0.0, 3).unwrap();
        for _ in 0..100 {
            b.on_request();
        }
        assert_eq!((0..10).filter(|_| b.try_acquire()).count(), 3);
    }

    #[test]
    fn min_allowance_hedges_at_low_traffic() {
        let clock = ManualClock::new();
        let b = RatioBudget::new(0.1, 1)
            .unwrap()
            .with_min_allowance(1.0, &clock)
            .unwrap();
        assert!(b.try_acquire()); // the ratio's initial token
        assert!(b.try_acquire()); // the allowance's burst of one
        assert!(!b.try_acquire());
        clock.advance(Duration::from_secs(1));
        assert!(b.try_acquire());
        assert!(!b.try_acquire());
        assert_eq!((b.granted(), b.denied()), (3, 2));
        assert_eq!(b.ratio(), 0.1);
        assert_eq!(b.cap(), 1);
    }

    #[test]
    fn a_penalty_takes_its_tokens_once_from_the_ratio_then_the_allowance() {
        let clock = ManualClock::new();
        let b = RatioBudget::new(0.5, 3)
            .unwrap()
            .with_min_allowance(3.0, &clock)
            .unwrap();
        assert_eq!(b.balance(), 6.0);
        b.penalize(1);
        assert_eq!(b.balance(), 5.0);
        b.penalize(3); // two from the ratio balance, one from the allowance
        assert_eq!(b.balance(), 2.0);
        b.on_request(); // half a token: a penalty of one takes it and nothing else
        b.penalize(1);
        assert_eq!(b.balance(), 2.0);
        assert_eq!((0..5).filter(|_| b.try_acquire()).count(), 2);
    }

    /// A penalty of more tokens than a `u32` of millionths holds (4,295 or more) still takes
    /// what the ratio balance cannot from the allowance: `penalize(u32::MAX)` empties any
    /// budget. (The penalty was once counted in saturated millionths, 4,294.97 tokens at
    /// most, so a full ratio balance near the largest cap left the allowance untouched.)
    #[test]
    fn a_penalty_beyond_a_u32_of_millionths_still_reaches_the_allowance() {
        let clock = ManualClock::new();
        let b = RatioBudget::new(0.1, RatioBudget::MAX_CAP)
            .unwrap()
            .with_min_allowance(1000.0, &clock)
            .unwrap();
        assert_eq!(b.balance(), 4294.0 + 1000.0);
        b.penalize(u32::MAX);
        assert_eq!(b.balance(), 0.0);
        assert!(!b.try_acquire());

        // 5,000 tokens: the ratio balance's 4,294, then 706 of the allowance's 1,000.
        let b = RatioBudget::new(0.1, RatioBudget::MAX_CAP)
            .unwrap()
            .with_min_allowance(1000.0, &clock)
            .unwrap();
        b.penalize(5_000);
        assert!((b.balance() - 294.0).abs() < 1e-9, "{}", b.balance());
    }
}
