//! Coarse time: clock readings kept in native 32-bit atomics, correct for any reading and
//! any gap. Crate-private: the window, the hedger's back-off and the token bucket keep
//! their time stamps in it (the clock module's docs say what that means for a caller).
//!
//! Interrupt-safe state cannot hold a 64-bit time: on thumbv7em portable-atomic's
//! `AtomicU64` is a seqlock an interrupt handler can deadlock on. So every time-stamped
//! state in tailguard (the window's current interval, the hedger's back-off, the token
//! bucket's arrival time, the window's refresh clock) keeps its stamp in an
//! [`AtomicCoarseInstant`]: two `AtomicU32` words.
//!
//! * The **low word** is the stamp in ticks of a [`CoarseClock`] (whole `unit`s since its
//!   origin), modulo 2^32. Compared with the wrapping difference to the current tick
//!   count, it gives the exact age of any stamp written less than 2^31 ticks ago.
//! * The **era word** says, to within 2^32 ns (4.3 s), *when* the stamp was written:
//!   nanoseconds since the origin divided by 2^32, which cannot wrap for any reading in
//!   [0, 2^64) ns. It tells when the low word can be trusted. A stamp written more than the
//!   clock's [`horizon`](CoarseClock::horizon) ago is reported as [`Age::LongAgo`] (never
//!   mistaken for a recent or a future one, however long the gap), and one written more
//!   than the horizon *after* the reading (a clock that went back) as [`Age::FarAhead`].
//!
//! The horizon is about `unit * 2^30`: 12.4 days for 1 ms ticks (13.03 for 2^20 ns), 34
//! years for 1 s. A state only needs exact ages up to its own time scale (a cooldown, a
//! refill, a few intervals), so each state picks a unit that puts its time scale well
//! inside the horizon.
//!
//! # The rule for writers
//!
//! A stamp must lie within 2^29 ticks of the reading it is written with (its `written`
//! argument): a state stamps "now", or now plus a bounded span (a token bucket's refill
//! time). Readers then get exact ages from the low word whenever the era word allows.
//!
//! # Concurrency
//!
//! Writers store the era word and then the low word (release); readers load the low word
//! (acquire) and then the era word. A reader that sees a new low word therefore sees its
//! era, or a later writer's. A reader that sees an old low word with a newer era word (a
//! write under way) compares the old stamp as if written at the newer era: for the states
//! in tailguard that errs only toward the state being written. [`compare_exchange`] keeps
//! the same order for read-modify-write states (the token bucket).
//!
//! [`compare_exchange`]: AtomicCoarseInstant::compare_exchange

use core::fmt;
use core::time::Duration;

use super::divisor::Divisor;
use super::instant::{duration_to_nanos, Instant};
use crate::sync::{AtomicU32, Ordering};

/// The era word's unit: 2^32 ns (4.3 s). Nanoseconds since the origin, shifted by this,
/// fit in 32 bits for every reading: the era never wraps.
const ERA_SHIFT: u32 = 32;

/// The smallest tick: with 8 ns, 2^30 ticks are two eras, enough to tell a stamp's era
/// apart from the reading's by the low word alone.
const MIN_UNIT_NS: u64 = 8;

/// A coarse clock: converts [`Instant`]s into whole ticks of `unit` since an origin.
///
/// See the [module docs](self) for the horizon and the rule for writers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CoarseClock {
    origin_ns: u64,
    /// The tick length in nanoseconds: ticks are a shift (a unit that is a power of two)
    /// or a multiply by the reciprocal, with no 64-bit division on any reading.
    unit: Divisor,
    /// The largest era difference for which the low word gives the exact age.
    era_limit: u64,
}

/// The unit of a [`CoarseClock`] is below 8 ns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct UnitTooSmall;

impl fmt::Display for UnitTooSmall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("coarse clock unit must be at least 8 ns")
    }
}

impl core::error::Error for UnitTooSmall {}

impl CoarseClock {
    /// A clock counting whole `unit`s since `origin`. Errors if `unit` is below 8 ns. (The
    /// tests' constructor: the crate's states speak nanoseconds, through `from_nanos`.)
    #[cfg(test)]
    pub(crate) const fn new(origin: Instant, unit: Duration) -> Result<Self, UnitTooSmall> {
        Self::from_nanos(origin.as_nanos(), duration_to_nanos(unit))
    }

    /// A clock counting whole `unit_ns` nanoseconds since `origin_ns`. Errors if the unit is
    /// below 8 ns.
    pub(crate) const fn from_nanos(origin_ns: u64, unit_ns: u64) -> Result<Self, UnitTooSmall> {
        if unit_ns < MIN_UNIT_NS {
            return Err(UnitTooSmall);
        }
        Ok(Self::with_unit_at_least_8(origin_ns, unit_ns))
    }

    /// [`from_nanos`](Self::from_nanos) for units the caller chose (raised to 8 ns).
    pub(crate) const fn with_unit_at_least_8(origin_ns: u64, unit_ns: u64) -> Self {
        let unit_ns = if unit_ns < MIN_UNIT_NS {
            MIN_UNIT_NS
        } else {
            unit_ns
        };
        CoarseClock {
            origin_ns,
            unit: Divisor::new(unit_ns),
            // A gap of d eras is below (d + 1) * 2^32 ns; the low word is exact while the
            // gap plus the writer's offset (< 2^29 ticks) stays below 2^31 ticks. With
            // d + 1 <= unit / 4 the gap is below 2^30 ticks. (`RawStamp::age` counts one
            // era more when either word is the top one, which two eras share.)
            era_limit: (unit_ns / 4).saturating_sub(1),
        }
    }

    /// Each field XOR `key`'s. A structure that must be all zero bytes when built with
    /// its preset's configuration (so that a `static` of it is `.bss`, not `.data` and a
    /// copy in flash) stores its clock as `clock.xor(preset's)` and reads it as
    /// `stored.xor(preset's)`: the XOR with a constant costs an instruction or two per
    /// field read.
    #[inline(always)]
    pub(crate) const fn xor(self, key: Self) -> Self {
        CoarseClock {
            origin_ns: self.origin_ns ^ key.origin_ns,
            unit: self.unit.xor(key.unit),
            era_limit: self.era_limit ^ key.era_limit,
        }
    }

    /// The reading of instant `t`: ticks since the origin (zero before it) and its era.
    #[inline]
    pub(crate) fn at(&self, t: Instant) -> CoarseInstant {
        let elapsed = t.as_nanos().saturating_sub(self.origin_ns);
        CoarseInstant {
            // A shift for budgets, cooldowns and the refresh clock; a multiply by the
            // reciprocal for window intervals (exact: tests compare it with the division).
            ticks: self.unit.quotient(elapsed),
            era: era_tag(elapsed),
        }
    }

    /// The origin.
    #[cfg(all(test, not(loom)))]
    pub(crate) const fn origin(&self) -> Instant {
        Instant::from_nanos(self.origin_ns)
    }

    /// The tick length.
    pub(crate) const fn unit(&self) -> Duration {
        Duration::from_nanos(self.unit.get())
    }

    /// How old a stamp may be and still be given its exact age: older (or, for a clock that
    /// went back, further ahead) ones read as [`Age::LongAgo`] (or [`Age::FarAhead`]).
    ///
    /// Stamps written less than this long before (or after) a reading always get their
    /// exact age; from this plus 8.6 s on, never. (Within the last 8.6 s of the 584-year
    /// range, whose two eras share one era word, the horizon is 4.3 s shorter.)
    #[cfg(all(test, not(loom)))]
    pub(crate) const fn horizon(&self) -> Duration {
        Duration::from_nanos(self.era_limit.saturating_mul(1 << ERA_SHIFT))
    }

    /// How many whole ticks `d` spans, rounded up (saturating).
    pub(crate) const fn ticks_in(&self, d: Duration) -> u64 {
        let ns = duration_to_nanos(d);
        let unit_ns = self.unit.get();
        let whole = match ns.checked_div(unit_ns) {
            Some(whole) => whole,
            None => 0, // not reached: unit_ns >= 8
        };
        if whole.saturating_mul(unit_ns) < ns {
            whole.saturating_add(1)
        } else {
            whole
        }
    }
}

/// The era word of a reading at the origin: `era_tag(0)`.
pub(crate) const FIRST_ERA: u32 = 1;

/// The largest era word: the last two eras (the last 8.6 s of the 584-year range) share it.
const TOP_ERA: u32 = u32::MAX;

/// The era word of a reading `elapsed` ns after the origin: 1 + elapsed / 2^32, so that 0
/// can mean "never written"; the last era shares [`TOP_ERA`] with the one before it.
#[inline]
fn era_tag(elapsed: u64) -> u32 {
    // Clamped below the last era (a compare and a move, no branch), the shifted value is
    // below u32::MAX: the cast is exact and the addition cannot overflow.
    let clamped = elapsed.min(u64::MAX - (1 << ERA_SHIFT));
    ((clamped >> ERA_SHIFT) as u32).wrapping_add(1)
}

/// A reading of a [`CoarseClock`]: whole ticks since the origin, and its era.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct CoarseInstant {
    ticks: u64,
    era: u32,
}

impl CoarseInstant {
    /// Whole ticks since the clock's origin.
    pub(crate) const fn ticks(&self) -> u64 {
        self.ticks
    }
}

/// How long ago a stamp was written, as read by [`AtomicCoarseInstant::age`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Age {
    /// Nothing was ever stored.
    Never,
    /// The reading minus the stamp, in ticks: exact, and less than 2^31 either way.
    /// Negative when the stamp is ahead of the reading (a clock that went back a little,
    /// or a stamp written as "now plus a span").
    Ticks(i64),
    /// Written more than the clock's horizon before the reading.
    LongAgo,
    /// Written more than the clock's horizon after the reading: the clock went back.
    FarAhead,
}

/// A [`CoarseInstant`] stamp in two native 32-bit atomics: lock-free and interrupt-safe on
/// every target. See the [module docs](self).
///
/// The era word is stored XOR `ERA_KEY`, so that the stamp is zero bytes when it holds
/// what it starts with: [`never`](Self::never) with the default key 0, the origin's
/// reading with [`FIRST_ERA`] ([`OriginStamp`]).
pub(crate) struct AtomicCoarseInstant<const ERA_KEY: u32 = 0> {
    /// The stamp's ticks modulo 2^32.
    low: AtomicU32,
    /// The era of the reading the stamp was written with, or 0 if none was; XOR `ERA_KEY`.
    era: AtomicU32,
}

/// A stamp that starts at its clock's origin (a window's published interval), zero bytes
/// until it is first written.
pub(crate) type OriginStamp = AtomicCoarseInstant<FIRST_ERA>;

/// An [`AtomicCoarseInstant`]'s two words as loaded, for a compare-and-swap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RawStamp {
    low: u32,
    era: u32,
}

impl RawStamp {
    /// Whether nothing was ever stored (a cheap test before reading a clock).
    #[inline]
    pub(crate) const fn is_never(&self) -> bool {
        self.era == 0
    }

    /// The age of this stamp at reading `now` of `clock`.
    #[inline]
    pub(crate) fn age(self, clock: &CoarseClock, now: CoarseInstant) -> Age {
        // The common case first: written in the reading's own era (the same 4.3 s), so less
        // than 2^32 ns = 2^29 ticks apart and the low words alone give the age. (A reading's
        // era is never 0, the "never written" word.)
        if self.era == now.era {
            return Age::Ticks(i64::from((now.ticks as u32).wrapping_sub(self.low) as i32));
        }
        if self.era == 0 {
            return Age::Never;
        }
        // Both eras are at most u32::MAX: the difference fits an i64. The top era word
        // stands for two eras: count the one that may be hidden.
        let eras = i64::from(now.era).wrapping_sub(i64::from(self.era));
        let hidden = u64::from(now.era == TOP_ERA || self.era == TOP_ERA);
        if eras.unsigned_abs().wrapping_add(hidden) > clock.era_limit {
            return if eras > 0 {
                Age::LongAgo
            } else {
                Age::FarAhead
            };
        }
        // Within the limit the true age is below 2^31 ticks either way: the wrapping
        // difference of the low words is exact.
        Age::Ticks(i64::from((now.ticks as u32).wrapping_sub(self.low) as i32))
    }
}

impl<const ERA_KEY: u32> AtomicCoarseInstant<ERA_KEY> {
    /// A stamp that was never written: its age is [`Age::Never`].
    #[cfg(not(loom))]
    pub(crate) const fn never() -> Self {
        AtomicCoarseInstant {
            low: AtomicU32::new(0),
            era: AtomicU32::new(ERA_KEY),
        }
    }

    /// A stamp that was never written: its age is [`Age::Never`].
    #[cfg(loom)]
    pub(crate) fn never() -> Self {
        AtomicCoarseInstant {
            low: AtomicU32::new(0),
            era: AtomicU32::new(ERA_KEY),
        }
    }

    /// A stamp holding the reading of a clock at its origin (tick 0 of the first era):
    /// what `store_now(clock.at(clock.origin()))` stores, for any clock.
    #[cfg(not(loom))]
    pub(crate) const fn at_origin() -> Self {
        AtomicCoarseInstant {
            low: AtomicU32::new(0),
            era: AtomicU32::new(FIRST_ERA ^ ERA_KEY),
        }
    }

    /// A stamp holding the reading of a clock at its origin.
    #[cfg(loom)]
    pub(crate) fn at_origin() -> Self {
        AtomicCoarseInstant {
            low: AtomicU32::new(0),
            era: AtomicU32::new(FIRST_ERA ^ ERA_KEY),
        }
    }

    /// Stores the reading `now` itself.
    #[inline]
    pub(crate) fn store_now(&self, now: CoarseInstant) {
        self.store(now.ticks, now);
    }

    /// Stores `ticks`, written at reading `written` (within 2^29 ticks of it: see the
    /// [module docs](self#the-rule-for-writers)).
    #[inline]
    pub(crate) fn store(&self, ticks: u64, written: CoarseInstant) {
        self.era.store(written.era ^ ERA_KEY, Ordering::Relaxed);
        self.low.store(ticks as u32, Ordering::Release);
    }

    /// The stamp's two words, for [`RawStamp::age`] and
    /// [`compare_exchange`](Self::compare_exchange).
    #[inline]
    pub(crate) fn load_raw(&self) -> RawStamp {
        // The low word first: its acquire makes the era its writer stored first visible.
        let low = self.low.load(Ordering::Acquire);
        RawStamp {
            low,
            era: self.era.load(Ordering::Relaxed) ^ ERA_KEY,
        }
    }

    /// The age of the stamp at reading `now` of `clock`.
    #[inline]
    pub(crate) fn age(&self, clock: &CoarseClock, now: CoarseInstant) -> Age {
        self.load_raw().age(clock, now)
    }

    /// Replaces the stamp with `ticks` (written at reading `written`) if it still holds
    /// `current`; otherwise returns what it holds now.
    ///
    /// The era word is stored (when it changes) before the compare-and-swap of the low
    /// word, so a reader that sees the new low word sees its era. A swap that then fails
    /// leaves the era of a reading newer than the stamp, which can only make an old stamp
    /// read as more recent than it is (the token bucket treats recent as the conservative
    /// side). Racing writers read their clocks within moments of each other, so whichever
    /// era word wins is within one era of the low word's.
    #[inline]
    pub(crate) fn compare_exchange(
        &self,
        current: RawStamp,
        ticks: u64,
        written: CoarseInstant,
    ) -> Result<(), RawStamp> {
        if current.era != written.era {
            self.era.store(written.era ^ ERA_KEY, Ordering::Relaxed);
        }
        // A strong exchange: a spurious failure would leave a newer era over an old stamp.
        match self.low.compare_exchange(
            current.low,
            ticks as u32,
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            Ok(_) => Ok(()),
            Err(low) => Err(RawStamp {
                low,
                era: self.era.load(Ordering::Relaxed) ^ ERA_KEY,
            }),
        }
    }
}

impl<const ERA_KEY: u32> fmt::Debug for AtomicCoarseInstant<ERA_KEY> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let raw = self.load_raw();
        f.debug_struct("AtomicCoarseInstant")
            .field("low", &raw.low)
            .field("era", &raw.era)
            .finish()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use proptest::strategy::Strategy;

    const MS: u64 = 1_000_000;

    /// A stamp with the default key.
    type Stamp = AtomicCoarseInstant;

    fn ms_clock() -> CoarseClock {
        CoarseClock::from_nanos(0, MS).unwrap()
    }

    #[test]
    fn a_stamp_at_the_origin_is_the_reading_at_the_origin() {
        for origin in [0, 5, 7 << 40] {
            let clock = CoarseClock::from_nanos(origin, MS).unwrap();
            let stored = Stamp::never();
            stored.store_now(clock.at(clock.origin()));
            assert_eq!(Stamp::at_origin().load_raw(), stored.load_raw());
            // Keyed by the first era, the same reading (stored as zero bytes).
            assert_eq!(OriginStamp::at_origin().load_raw(), stored.load_raw());
            let keyed = OriginStamp::never();
            keyed.store_now(clock.at(clock.origin()));
            assert_eq!(keyed.load_raw(), stored.load_raw());
            assert_eq!(OriginStamp::never().load_raw(), Stamp::never().load_raw());
        }
    }

    fn at(clock: &CoarseClock, ns: u64) -> CoarseInstant {
        clock.at(Instant::from_nanos(ns))
    }

    /// A stamp's age in ticks, and beyond the clock's horizon never recent.
    #[test]
    fn a_stamp_reads_its_age_and_then_long_ago() {
        let clock = CoarseClock::new(Instant::ZERO, Duration::from_millis(1)).unwrap();
        let stamp = Stamp::never();
        let t0 = Instant::from_nanos(5_000_000_000);
        stamp.store_now(clock.at(t0));

        let later = clock.at(t0.saturating_add(Duration::from_millis(250)));
        assert_eq!(stamp.age(&clock, later), Age::Ticks(250));
        // 60 days later: beyond the 1 ms clock's horizon (12.4 days), and never read as recent.
        let much_later = clock.at(t0.saturating_add(Duration::from_secs(60 * 86_400)));
        assert_eq!(stamp.age(&clock, much_later), Age::LongAgo);
    }

    /// Whole ticks since the origin, the origin before it, and a horizon of 2^30 ticks.
    #[test]
    fn a_clock_counts_whole_ticks_from_its_origin() {
        let clock = CoarseClock::new(Instant::from_nanos(500), Duration::from_micros(1)).unwrap();
        assert_eq!(clock.at(Instant::from_nanos(3_700)).ticks(), 3);
        assert_eq!(clock.at(Instant::ZERO).ticks(), 0); // before the origin: the origin
        assert!(clock.horizon() >= Duration::from_secs(1_000));
    }

    /// The reciprocal gives the exact quotient: for window intervals (round and odd), the
    /// 65-bit and 64-bit magic cases, near every multiple and at the ends of the range.
    #[test]
    fn reciprocal_division_is_exact() {
        let check = |d: u64, x: u64| {
            let c = CoarseClock::with_unit_at_least_8(0, d);
            assert_eq!(c.at(Instant::from_nanos(x)).ticks(), x / d, "{x} / {d}");
        };
        let units = [
            8,
            9,
            10,
            7 * 8,
            1_000,
            999_999,
            1_000_000_007,
            30_000_000_000,
            60_000_000_000,
            (1 << 40) + 1,
            (1 << 63) - 1,
            (1 << 63) + 1,
            u64::MAX,
        ];
        for d in units {
            for k in [0u64, 1, 2, 3, 1000, 1 << 20, 1 << 33, u64::MAX / d] {
                let base = k.saturating_mul(d);
                for x in [base.saturating_sub(1), base, base.saturating_add(1)] {
                    check(d, x);
                }
            }
            check(d, u64::MAX);
            check(d, u64::MAX - 1);
        }
        proptest::proptest!(|(d in 8u64.., x: u64)| check(d, x));
        proptest::proptest!(|(d in 8u64..1 << 40, x: u64)| check(d, x));
    }

    #[test]
    fn units_below_8_ns_are_refused() {
        assert_eq!(CoarseClock::from_nanos(0, 7), Err(UnitTooSmall));
        assert!(CoarseClock::from_nanos(0, 8).is_ok());
        assert!(CoarseClock::new(Instant::ZERO, Duration::MAX).is_ok());
    }

    #[test]
    fn ticks_shift_or_divide_and_saturate_before_the_origin() {
        let pow2 = CoarseClock::from_nanos(100, 1 << 20).unwrap();
        assert_eq!(pow2.at(Instant::from_nanos(100 + (5 << 20) + 7)).ticks(), 5);
        assert_eq!(pow2.at(Instant::from_nanos(3)).ticks(), 0);
        let odd = CoarseClock::from_nanos(0, 30_000_000_000).unwrap();
        assert_eq!(odd.at(Instant::from_nanos(89_999_999_999)).ticks(), 2);
        assert_eq!(
            odd.at(Instant::from_nanos(u64::MAX)).ticks(),
            u64::MAX / 30_000_000_000
        );
        assert_eq!(odd.ticks_in(Duration::from_secs(31)), 2);
        assert_eq!(odd.ticks_in(Duration::from_secs(30)), 1);
        assert_eq!(odd.ticks_in(Duration::MAX), u64::MAX / 30_000_000_000 + 1);
    }

    #[test]
    fn never_written_reads_never() {
        let c = ms_clock();
        let s = Stamp::never();
        for ns in [0, 1 << 40, u64::MAX] {
            assert_eq!(s.age(&c, at(&c, ns)), Age::Never);
        }
    }

    #[test]
    fn exact_ages_both_ways_at_any_reading() {
        let c = ms_clock();
        let s = Stamp::never();
        for base in [
            0,
            1 << 31,
            (1 << 52) - 3 * MS,
            1 << 62,
            u64::MAX - (1 << 40),
        ] {
            let w = at(&c, base);
            s.store_now(w);
            for gap in [0u64, 1, 999, 1 << 20, 1 << 29] {
                let later = at(&c, base.saturating_add(gap * MS));
                assert_eq!(
                    s.age(&c, later),
                    Age::Ticks((later.ticks() - w.ticks()) as i64)
                );
                let earlier = at(&c, base.saturating_sub(gap * MS));
                assert_eq!(
                    s.age(&c, earlier),
                    Age::Ticks(-((w.ticks() - earlier.ticks()) as i64))
                );
            }
        }
    }

    #[test]
    fn gaps_past_the_horizon_are_long_ago_or_far_ahead_never_recent() {
        let c = ms_clock();
        let horizon = duration_to_nanos(c.horizon());
        assert!(horizon > 12 * 86_400 * 1_000_000_000, "{horizon}");
        let s = Stamp::never();
        let w = 1u64 << 45;
        s.store_now(at(&c, w));
        // Exactly a multiple of the low word's wrap later: the low words are equal.
        for k in 1..8u64 {
            let later = w + k * (MS << 32);
            assert_eq!(s.age(&c, at(&c, later)), Age::LongAgo);
        }
        assert_eq!(s.age(&c, at(&c, w + horizon + 9_000_000_000)), Age::LongAgo);
        assert_eq!(s.age(&c, at(&c, u64::MAX)), Age::LongAgo);
        s.store_now(at(&c, u64::MAX - 5));
        assert_eq!(s.age(&c, at(&c, 0)), Age::FarAhead);
        assert_eq!(s.age(&c, at(&c, u64::MAX)), Age::Ticks(0));
    }

    #[test]
    fn a_stamp_ahead_of_its_writer_reads_negative() {
        let c = CoarseClock::from_nanos(0, 8).unwrap();
        let s = Stamp::never();
        let w = at(&c, 1 << 50);
        s.store(w.ticks() + (1 << 20), w);
        assert_eq!(s.age(&c, w), Age::Ticks(-(1 << 20)));
    }

    proptest::proptest! {
        /// For any unit, any writer reading, any stamp within 2^29 ticks of it and any
        /// reader reading: an age in ticks is exact; within the horizon it is always given;
        /// `LongAgo` and `FarAhead` only beyond it, on the right side.
        #[test]
        fn ages_are_exact_or_beyond_the_horizon(
            unit in proptest::prop_oneof![8u64..64, 64u64..(1 << 24), (1u64 << 24)..(1 << 40), proptest::strategy::Just(u64::MAX)],
            origin in proptest::prop_oneof![proptest::strategy::Just(0u64), 0u64..u64::MAX],
            written_ns in 0u64..=u64::MAX,
            offset in -(1i64 << 29)..(1i64 << 29),
            read_ns in proptest::prop_oneof![0u64..=u64::MAX, proptest::strategy::Just(0u64)],
            near in proptest::prop_oneof![proptest::strategy::Just(None), (-(1i64 << 40)..(1i64 << 40)).prop_map(Some)],
        ) {
            let c = CoarseClock::from_nanos(origin, unit).unwrap();
            let w = c.at(Instant::from_nanos(written_ns));
            let stamp = w.ticks().saturating_add_signed(offset);
            let s = Stamp::never();
            s.store(stamp, w);
            // Half the cases read near the writer, the rest anywhere.
            let read_ns = near.map_or(read_ns, |d| written_ns.saturating_add_signed(d));
            let r = c.at(Instant::from_nanos(read_ns));
            let exact = i128::from(r.ticks()) - i128::from(stamp);
            let since_write = i128::from(read_ns.max(origin)) - i128::from(written_ns.max(origin));
            let mut horizon = duration_to_nanos(c.horizon()) as i128;
            if read_ns.max(written_ns) >= u64::MAX - (2 << 32) {
                horizon -= 1 << 32; // the last two eras share a word
            }
            match s.age(&c, r) {
                Age::Ticks(d) => proptest::prop_assert_eq!(i128::from(d), exact),
                Age::LongAgo => proptest::prop_assert!(since_write >= horizon, "{} < {}", since_write, horizon),
                Age::FarAhead => proptest::prop_assert!(-since_write >= horizon, "{} < {}", since_write, horizon),
                Age::Never => proptest::prop_assert!(false, "a written stamp read as never"),
            }
        }
    }

    #[test]
    fn compare_exchange_swaps_only_the_expected_stamp() {
        let c = ms_clock();
        let s = Stamp::never();
        let raw = s.load_raw();
        let w = at(&c, 1 << 42);
        assert_eq!(s.compare_exchange(raw, w.ticks() + 3, w), Ok(()));
        assert_eq!(s.age(&c, w), Age::Ticks(-3));
        let stale = raw;
        let now = s.load_raw();
        assert_eq!(s.compare_exchange(stale, 0, w), Err(now));
        assert_eq!(s.age(&c, w), Age::Ticks(-3));
    }
}

/// The loom model of a stamp (`RUSTFLAGS="--cfg loom" cargo test --release --lib --
/// clock::coarse::`): in the library, as the type is crate-private. Named `tests` as the
/// module above is, which loom builds leave out.
#[cfg(all(test, loom))]
mod tests {
    use super::*;
    use loom::sync::Arc;
    use loom::thread;

    /// A coarse stamp written while it is read: the reader gets the old state (never
    /// written), the exact age of the new stamp, or, while the write is under way, the old
    /// low word taken as if written in the new era; nothing else. (The era word goes
    /// first, so a reader that sees the new low word sees its era.)
    #[test]
    fn a_coarse_stamp_is_read_as_written() {
        read_as_written::<0>();
    }

    /// The same with the era word keyed (a window's epoch, [`OriginStamp`]).
    #[test]
    fn a_keyed_coarse_stamp_is_read_as_written() {
        read_as_written::<FIRST_ERA>();
    }

    fn read_as_written<const ERA_KEY: u32>() {
        loom::model(|| {
            let clock = CoarseClock::new(Instant::ZERO, Duration::from_nanos(1 << 20)).unwrap();
            let stamp = Arc::new(AtomicCoarseInstant::<ERA_KEY>::never());
            let written = clock.at(Instant::from_nanos(7 << 40));
            let writer = {
                let stamp = stamp.clone();
                thread::spawn(move || stamp.store_now(written))
            };
            let now = clock.at(Instant::from_nanos((7 << 40) + (5 << 20)));
            let age = stamp.age(&clock, now);
            let torn = Age::Ticks(i64::from(now.ticks() as u32 as i32)); // low word 0, new era
            assert!(
                age == Age::Never || age == Age::Ticks(5) || age == torn,
                "{age:?}"
            );
            writer.join().unwrap();
            assert_eq!(stamp.age(&clock, now), Age::Ticks(5));
        });
    }
}
