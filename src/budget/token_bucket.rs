//! [`TokenBucket`]: a rate and a burst, refilled from a clock, in one coarse time stamp
//! (GCRA).

use super::{Budget, BudgetError, Tally};
use crate::clock::coarse::{Age, AtomicCoarseInstant, CoarseClock};
use crate::clock::Clock;
use crate::sync::const_unless_loom;

/// The span the state must represent (`burst` emission intervals) is kept at or below
/// this many time units, which sets the unit (a power of two of nanoseconds, at least 8).
const MAX_SPAN_UNITS: u64 = 1 << 20;

/// The smallest time unit, 2^3 ns: the [coarse clock](crate::clock#coarse-time)'s minimum.
const MIN_SHIFT: u32 = 3;

/// Largest rate, tokens per second: a token then spans at least 1,000 ns.
const MAX_RATE: f64 = 1e6;

/// A token bucket with a fixed `rate` (tokens per second) and `burst`, refilled from a
/// clock.
///
/// It is GCRA (the generic cell rate algorithm): the whole state is one theoretical
/// arrival time, so `try_acquire` is a load and a compare-and-swap, never overdraws under
/// contention, and needs no refill task. The arrival time is a
/// [coarse time](crate::clock#coarse-time) stamp in two native 32-bit atomics, in units of
/// `2^k` nanoseconds (at least 8) chosen at construction so that a full burst spans at
/// most 2^20 units.
///
/// # Clocks
///
/// For any clock reading in [0, 2^64) ns and any gap:
///
/// * **Idle, any length**: a bucket left alone for longer than a burst's refill time is
///   full, however long the gap (a gap beyond the coarse clock's horizon is recognised as
///   such, never mistaken for recent use).
/// * **Forward jumps** fill the bucket to `burst`, never more.
/// * **A clock that goes back**, by a little, repeatedly, or by years, earns nothing: an
///   arrival time ahead of now by more than a burst reads as an empty bucket, and the
///   first use after that restarts the refill from the new now. So the bucket never
///   grants more than `burst + rate * (total forward movement of the clock)`, and a clock
///   that went back costs at most one burst.
///
/// One exception, 584 years out: in the last 8.6 s of the range (readings from
/// `2^64 - 2^33` ns after the bucket's origin), whose two 4.3 s eras share one era word, a
/// bucket whose burst refills in under about 8.4 ms (8 ns ticks) may read a stamp from the
/// era before as long ago, and grant one burst more than that bound.
///
/// ```
/// use core::time::Duration;
/// use tailguard::budget::{Budget, TokenBucket};
/// use tailguard::clock::ManualClock;
///
/// let clock = ManualClock::new();
/// let bucket = TokenBucket::new(&clock, 10.0, 2).unwrap(); // 10 per second, burst 2
/// assert!(bucket.try_acquire());
/// assert!(bucket.try_acquire());
/// assert!(!bucket.try_acquire());
/// clock.advance(Duration::from_millis(100));
/// assert!(bucket.try_acquire());
/// ```
#[derive(Debug)]
pub struct TokenBucket<C> {
    clock: C,
    /// Ticks of `2^k` ns since the clock's epoch.
    coarse: CoarseClock,
    /// Time units per token (T).
    emission: u32,
    /// `burst * emission`: the furthest ahead of now the arrival time may be.
    span: u32,
    /// Theoretical arrival time (never written: a full bucket).
    tat: AtomicCoarseInstant,
    tally: Tally,
}

impl<C> TokenBucket<C> {
    /// The largest burst: a full burst spans at most 2^20 time units, so a token spans at
    /// least 2^9 of them, bounding the rounding of the rate, unless the burst refills
    /// in under 4 ms (then the unit is the smallest, 8 ns).
    ///
    /// ```
    /// use tailguard::budget::{BudgetError, TokenBucket};
    /// use tailguard::clock::ManualClock;
    ///
    /// let clock = ManualClock::new();
    /// assert_eq!(TokenBucket::<&ManualClock>::MAX_BURST, 1024);
    /// assert_eq!(TokenBucket::new(&clock, 1000.0, 1024).unwrap().burst(), 1024);
    /// let refused = TokenBucket::new(&clock, 1000.0, 1025).err();
    /// assert_eq!(refused, Some(BudgetError::InvalidBurst));
    /// ```
    pub const MAX_BURST: u32 = 1024;
}

impl<C: Clock> TokenBucket<C> {
    const_unless_loom! {
        /// A full bucket of `burst` tokens refilling at `rate` tokens per second.
        ///
        /// Errors unless `rate` is in (0, 10^6] ([`BudgetError::InvalidRate`]), and unless
        /// `burst` is in [1, 1024] and takes at most 2^51 ns (26 days) to refill
        /// ([`BudgetError::InvalidBurst`]).
        ///
        /// The emission interval (`1 / rate`) is rounded down to whole time units, so the
        /// applied rate, [`rate`](Self::rate), is at or slightly above the one asked for: by
        /// less than 1/512 when a full burst takes at least 4.2 ms to refill, and otherwise
        /// by less than one 8 ns unit per token (below 1/125 at the largest rate).
        ///
        /// `const`: with a clock that is a constant (a unit struct reading a hardware
        /// timer, say) the bucket is a `static`, and invalid parameters are a compile
        /// error. The bucket's time starts at the clock's zero, not at construction, so
        /// it is the same bucket whenever it is built. On an error the clock is forgotten
        /// rather than dropped (a `const fn` cannot run a destructor): pass a reference or
        /// a clock without a destructor.
        ///
        /// ```
        /// use tailguard::budget::{Budget, TokenBucket};
        /// use tailguard::clock::{Clock, Instant};
        ///
        /// /// A firmware clock: a unit struct reading a timer (here, a fixed time).
        /// struct Timer;
        /// impl Clock for Timer {
        ///     fn now(&self) -> Instant {
        ///         Instant::from_nanos(5_000_000_000)
        ///     }
        /// }
        ///
        /// static RETRIES: TokenBucket<Timer> = match TokenBucket::new(Timer, 10.0, 2) {
        ///     Ok(bucket) => bucket,
        ///     Err(_) => panic!("invalid rate or burst"), // a compile error
        /// };
        ///
        /// assert!(RETRIES.try_acquire());
        /// assert!(RETRIES.try_acquire());
        /// assert!(!RETRIES.try_acquire());
        /// ```
        pub fn new(clock: C, rate: f64, burst: u32) -> Result<Self, BudgetError> {
            // Validated first, without the clock: a `const fn` can match on a `Result`
            // only if nothing in it has a destructor.
            match Self::emission(rate, burst) {
                Ok((shift, emission)) => Ok(Self::with_emission(clock, shift, emission, burst)),
                Err(e) => {
                    // Not dropped: a `const fn` cannot run `C`'s destructor.
                    core::mem::forget(clock);
                    Err(e)
                }
            }
        }
    }

    const_unless_loom! {
        /// A full bucket of `burst` tokens of `emission` units of `2^shift` ns, as
        /// [`emission`](Self::emission) computed them.
        pub(super) fn with_emission(clock: C, shift: u32, emission: u32, burst: u32) -> Self {
            TokenBucket {
                clock,
                // Origin 0, not now: a clock that goes back before the bucket was made still
                // moves it (readings before a coarse clock's origin all read as the origin).
                coarse: CoarseClock::with_unit_at_least_8(0, 1 << shift),
                emission,
                span: emission.saturating_mul(burst),
                tat: AtomicCoarseInstant::never(),
                tally: Tally::new(),
            }
        }
    }

    /// The time unit's shift (`2^shift` ns) and the emission interval in units of a bucket
    /// of `rate` and `burst`, or why they are refused (see [`new`](Self::new)).
    pub(super) const fn emission(rate: f64, burst: u32) -> Result<(u32, u32), BudgetError> {
        if !(rate > 0.0 && rate <= MAX_RATE) {
            return Err(BudgetError::InvalidRate);
        }
        if burst == 0 || burst > Self::MAX_BURST {
            return Err(BudgetError::InvalidBurst);
        }
        let emission_ns = 1e9 / rate; // in [1000, inf)
        let span_ns = emission_ns * burst as f64;
        if span_ns > (1u64 << 51) as f64 {
            return Err(BudgetError::InvalidBurst);
        }
        let mut shift = MIN_SHIFT;
        while (span_ns as u64 >> shift) > MAX_SPAN_UNITS {
            shift = shift.wrapping_add(1); // at most 31: span_ns <= 2^51
        }
        let unit = (1u64 << shift) as f64;
        // Rounded down (the cast truncates a non-negative quotient below 2^21), so a clock
        // advanced by exactly one emission interval always earns a token.
        let emission = (emission_ns / unit) as u32;
        Ok((shift, if emission == 0 { 1 } else { emission }))
    }

    /// How far the arrival time of `age` is ahead of now, in units, in [0, span] (an
    /// arrival time in the past, or never set, is a full bucket), and whether it is further
    /// ahead than a whole burst: only a clock that went back puts it there, and the bucket
    /// then counts as empty from now.
    fn ahead(&self, age: Age) -> (u32, bool) {
        match age {
            Age::Never | Age::LongAgo => (0, false),
            Age::FarAhead => (self.span, true),
            // d = now - arrival time, |d| < 2^31.
            Age::Ticks(d) if d >= 0 => (0, false),
            Age::Ticks(d) => match u32::try_from(d.unsigned_abs()) {
                Ok(ahead) if ahead <= self.span => (ahead, false),
                _ => (self.span, true),
            },
        }
    }

    /// Moves the arrival time to `now + f(ahead)` (or leaves it if `f` says `None`) in a
    /// compare-and-swap loop; returns the new `ahead`.
    ///
    /// An arrival time beyond a burst ahead (the clock went back) is first brought back to
    /// `now + span`, even if `f` says `None`: the bucket is empty at its first use after
    /// the clock went back and refills at the rate from there, instead of staying empty
    /// until the clock catches up with where it was.
    ///
    /// The clock is read after the state is loaded, on every attempt: whoever wrote that
    /// state read the clock before writing it, so (clocks being coherent) `now` is never
    /// older than the writer's.
    fn update(&self, f: impl Fn(u32) -> Option<u32>) -> Option<u32> {
        let mut raw = self.tat.load_raw();
        loop {
            let now = self.coarse.at(self.clock.now());
            let (ahead, beyond) = self.ahead(raw.age(&self.coarse, now));
            let new = f(ahead);
            let target = match (new, beyond) {
                (Some(ahead), _) => ahead,
                (None, true) => self.span,
                (None, false) => return None,
            };
            // Ticks are below 2^61 (8 ns units at least): no overflow.
            let tat = now.ticks().wrapping_add(u64::from(target));
            match self.tat.compare_exchange(raw, tat, now) {
                Ok(()) => return new,
                Err(actual) => raw = actual,
            }
        }
    }

    /// The applied rate, tokens per second (after rounding to the time unit).
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::budget::{Budget, TokenBucket};
    /// use tailguard::clock::ManualClock;
    ///
    /// let clock = ManualClock::new();
    /// let bucket = TokenBucket::new(&clock, 3.0, 1).unwrap();
    /// // At or slightly above the rate asked for: a token every 1/3 s or a little less.
    /// let rate = bucket.rate();
    /// assert!(rate >= 3.0 && rate < 3.0 * (1.0 + 1.0 / 512.0));
    /// assert!(bucket.try_acquire());
    /// clock.advance(Duration::from_millis(333));
    /// assert!(!bucket.try_acquire());
    /// clock.advance(Duration::from_nanos(333_333)); // 1/3 s in all, rounded down
    /// assert!(bucket.try_acquire());
    /// ```
    pub fn rate(&self) -> f64 {
        let unit_ns = self.coarse.unit().as_nanos() as f64;
        1e9 / (f64::from(self.emission) * unit_ns)
    }

    /// The configured burst.
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::budget::{Budget, TokenBucket};
    /// use tailguard::clock::ManualClock;
    ///
    /// let clock = ManualClock::new();
    /// let bucket = TokenBucket::new(&clock, 10.0, 4).unwrap();
    /// assert_eq!(bucket.burst(), 4);
    /// assert_eq!((0..10).filter(|_| bucket.try_acquire()).count(), 4); // a full bucket at once
    /// clock.advance(Duration::from_secs(60)); // idle for long: full again, never more
    /// assert_eq!((0..10).filter(|_| bucket.try_acquire()).count(), 4);
    /// ```
    pub fn burst(&self) -> u32 {
        self.span.checked_div(self.emission).unwrap_or(0)
    }
}

impl<C: Clock> Budget for TokenBucket<C> {
    fn try_acquire(&self) -> bool {
        let limit = self.span.saturating_sub(self.emission);
        // ahead <= span - emission leaves a token; the arrival time then moves one
        // emission interval further (at most span ahead of now).
        let granted = self
            .update(|ahead| (ahead <= limit).then(|| ahead.wrapping_add(self.emission)))
            .is_some();
        self.tally.count(granted)
    }

    fn penalize(&self, tokens: u32) {
        let push = tokens.saturating_mul(self.emission);
        self.update(|ahead| Some(ahead.saturating_add(push).min(self.span)));
    }

    /// Moves the arrival time a whole burst ahead of now: empty, refilling at the rate.
    fn drain(&self) {
        self.update(|_| Some(self.span));
    }

    fn balance(&self) -> f64 {
        let age = self.tat.age(&self.coarse, self.coarse.at(self.clock.now()));
        let (ahead, _) = self.ahead(age);
        f64::from(self.span.wrapping_sub(ahead)) / f64::from(self.emission.max(1))
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
    use crate::clock::{Instant, ManualClock};
    use core::time::Duration;

    #[test]
    fn refills_at_the_rate_up_to_the_burst() {
        let clock = ManualClock::new();
        let b = TokenBucket::new(&clock, 100.0, 5).unwrap();
        assert_eq!(b.burst(), 5);
        assert!((b.rate() - 100.0).abs() < 1e-3);
        assert_eq!((0..10).filter(|_| b.try_acquire()).count(), 5);
        clock.advance(Duration::from_millis(30));
        assert_eq!((0..10).filter(|_| b.try_acquire()).count(), 3);
        clock.advance(Duration::from_secs(3600));
        assert_eq!(b.balance(), 5.0);
        assert_eq!((0..10).filter(|_| b.try_acquire()).count(), 5);
        assert_eq!(b.granted(), 13);
        assert_eq!(b.denied(), 17);
    }

    #[test]
    fn granted_follows_rate_times_time_exactly() {
        let clock = ManualClock::new();
        let b = TokenBucket::new(&clock, 1000.0, 10).unwrap();
        // 10 s in steps of 100 µs (1 s under miri, which is a thousand times slower).
        let steps: u64 = if cfg!(miri) { 10_000 } else { 100_000 };
        let mut granted = 0u64;
        for _ in 0..steps {
            clock.advance(Duration::from_micros(100));
            granted += u64::from(b.try_acquire());
        }
        // 1000/s over the time, plus the initial burst of 10.
        let expected = steps / 10;
        assert!(granted <= expected + 10, "{granted}");
        assert!(granted + 1 >= expected, "{granted}");
    }

    #[test]
    fn clock_jumps_never_over_grant() {
        let clock = ManualClock::starting_at(Instant::from_nanos(1 << 40));
        let b = TokenBucket::new(&clock, 1.0, 3).unwrap();
        assert_eq!((0..10).filter(|_| b.try_acquire()).count(), 3);
        clock.set(Instant::from_nanos(1 << 30)); // backwards, before the origin
        assert!((0..10).filter(|_| b.try_acquire()).count() <= 3);
        clock.set(Instant::from_nanos(u64::MAX)); // far forwards
        assert_eq!((0..10).filter(|_| b.try_acquire()).count(), 3);
    }

    /// With 8 ns units a state written just before an era boundary (every 2^32 ns) and
    /// read just after must still read as recent: an era apart is well inside the coarse
    /// clock's horizon (it once read as "long ago", a full bucket).
    #[test]
    fn an_era_boundary_grants_nothing_extra() {
        for burst in [1, 2] {
            let clock = ManualClock::starting_at(Instant::from_nanos((7 << 32) - 100));
            let b = TokenBucket::new(&clock, 1e6, burst).unwrap(); // 1,000 ns per token
            assert_eq!((0..5).filter(|_| b.try_acquire()).count(), burst as usize);
            clock.advance(Duration::from_nanos(200)); // into the next era
            assert!(
                !b.try_acquire(),
                "burst {burst}: granted across the era boundary"
            );
            clock.advance(Duration::from_nanos(1_000));
            assert!(b.try_acquire());
        }
    }

    #[test]
    fn penalize_empties_the_bucket_for_a_while() {
        let clock = ManualClock::new();
        let b = TokenBucket::new(&clock, 10.0, 4).unwrap();
        b.penalize(2);
        assert_eq!(b.balance(), 2.0);
        b.penalize(100);
        assert_eq!(b.balance(), 0.0);
        assert!(!b.try_acquire());
        clock.advance(Duration::from_millis(100));
        assert!(b.try_acquire());
    }

    #[test]
    fn bad_configurations_are_errors() {
        let c = ManualClock::new();
        for rate in [0.0, -1.0, f64::NAN, f64::INFINITY, 2e6] {
            assert_eq!(
                TokenBucket::new(&c, rate, 1).err(),
                Some(BudgetError::InvalidRate)
            );
        }
        assert_eq!(
            TokenBucket::new(&c, 1.0, 0).err(),
            Some(BudgetError::InvalidBurst)
        );
        assert_eq!(
            TokenBucket::new(&c, 1e-9, 1024).err(),
            Some(BudgetError::InvalidBurst)
        );
        assert_eq!(
            TokenBucket::new(&c, 1.0, 1025).err(),
            Some(BudgetError::InvalidBurst)
        );
        for (rate, burst) in [
            (1e6, 1024),
            (1e6, 1),
            (3.0, 1024),
            (0.001, 7),
            (1.0 / 3.0, 1),
        ] {
            let b = TokenBucket::new(&c, rate, burst).unwrap();
            assert!(
                b.rate() >= rate && b.rate() <= rate * (1.0 + 1.0 / 512.0),
                "{rate}"
            );
            assert_eq!(b.burst(), burst);
        }
        assert!(TokenBucket::new(&c, 0.001, 1000).is_ok());
    }
}
