//! Long-life correctness: the time-dependent types started at any clock reading (0 to ten
//! years), driven through forward jumps of any size (including 2^31..2^33 ticks of each
//! coarse clock), backward steps and long idle gaps, against reference models; a simulated
//! ten-year run of a hedger; and one test for each promise found broken by hostile use,
//! each of which failed before its fix.
//!
//! `TAILGUARD_LONG_LIFE_CASES` sets the number of property cases (default 64).

use core::time::Duration;
use tailguard_support::Rng;

use proptest::prelude::*;
use tailguard::budget::{Budget, RatioBudget, TokenBucket};
use tailguard::clock::{Clock, Instant, ManualClock};
use tailguard::hedge::{Attempt, ColdStart, Decision, HedgeConfig, Hedger, SkipReason};
use tailguard::sketch::presets;
use tailguard::window::{IntLatencyCoarseWindow, Window, WindowConfig};

const MS: u64 = 1_000_000;
const SEC: u64 = 1_000 * MS;
const DAY: u64 = 86_400 * SEC;
const YEAR: u64 = 365 * DAY;

fn cases() -> u32 {
    std::env::var("TAILGUARD_LONG_LIFE_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(64)
}

/// A hedger that hedges after a fixed 10 ms until it learns (so its delay is visible
/// without traffic), backing off 2x for `cooldown` after a rate-limit signal.
fn fixed_delay_hedger(clock: &ManualClock, cooldown: Duration) -> Hedger<&ManualClock> {
    let config = HedgeConfig::new()
        .with_cold_start(ColdStart::Delay(Duration::from_millis(10)))
        .with_cooldown(cooldown);
    Hedger::new(clock, config).unwrap()
}

fn backing_off(hedger: &Hedger<&ManualClock>) -> bool {
    match hedger.delay().unwrap() {
        d if d == Duration::from_millis(10) => false,
        d if d == Duration::from_millis(20) => true,
        d => panic!("unexpected delay {d:?}"),
    }
}

// ---- One test per broken promise.

/// Item 1: the cooldown was kept in 32-bit units of ~1 ms of absolute time starting at 0
/// and compared with a half-range test, so from ~26 to ~52 days of uptime (and every 52
/// days after) a hedger backed off with no rate limit ever received.
#[test]
fn no_back_off_without_a_rate_limit_at_any_uptime() {
    for days in [0, 1, 25, 26, 27, 30, 40, 51, 52, 53, 80, 365, 3650] {
        let clock = ManualClock::starting_at(Instant::from_nanos(days * DAY));
        let hedger = fixed_delay_hedger(&clock, Duration::from_secs(10));
        assert!(!backing_off(&hedger), "day {days}");
        // An empty budget is a plain budget skip, not back-pressure.
        hedger.budget().drain();
        let mut ticket = hedger.start();
        clock.advance(Duration::from_millis(11));
        assert_eq!(
            hedger.should_hedge(&mut ticket),
            Decision::Skip(SkipReason::Budget),
            "day {days}"
        );
    }
}

/// Item 1: after a real signal the back-off came back ~26 days later, and a cooldown of
/// ~26 days or more (including `Duration::MAX`) gave no back-off at all.
#[test]
fn a_back_off_lasts_its_cooldown_exactly_whatever_the_cooldown() {
    let start = 7 * YEAR + 3 * DAY;
    let clock = ManualClock::starting_at(Instant::from_nanos(start));
    let hedger = fixed_delay_hedger(&clock, Duration::from_secs(10));
    hedger.on_rate_limited();
    for (after, expect) in [
        (0, true),
        (9_990 * MS, true),
        (10_010 * MS, false),
        (27 * DAY, false),
        (30 * DAY, false),
        (52 * DAY, false),
        (400 * DAY, false),
    ] {
        clock.set(Instant::from_nanos(start + after));
        assert_eq!(backing_off(&hedger), expect, "{after} ns after the signal");
    }

    for cooldown_days in [26, 40, 300] {
        let clock = ManualClock::starting_at(Instant::from_nanos(start));
        let hedger = fixed_delay_hedger(&clock, Duration::from_secs(cooldown_days * 86_400));
        hedger.on_rate_limited();
        clock.set(Instant::from_nanos(start + (cooldown_days - 1) * DAY));
        assert!(
            backing_off(&hedger),
            "{cooldown_days}-day cooldown, a day before it ends"
        );
        clock.set(Instant::from_nanos(start + (cooldown_days + 1) * DAY));
        assert!(
            !backing_off(&hedger),
            "{cooldown_days}-day cooldown, a day after it"
        );
    }

    let clock = ManualClock::starting_at(Instant::from_nanos(start));
    let hedger = fixed_delay_hedger(&clock, Duration::MAX);
    hedger.on_rate_limited();
    for after in [0, DAY, 100 * YEAR, u64::MAX - start] {
        clock.set(Instant::from_nanos(start + after));
        assert!(
            backing_off(&hedger),
            "Duration::MAX cooldown, {after} ns later"
        );
    }
}

/// Item 2: with a 1 ms interval, an idle gap of 2^31..2^32 intervals (25 to 50 days), or a
/// whole multiple of 2^32 intervals, read as the clock going backwards (or as no time at
/// all): nothing expired and stale data kept feeding quantiles.
#[test]
fn any_idle_gap_empties_a_window_with_short_intervals() {
    let intervals = [
        1u64 << 31,
        (1 << 31) + 1,
        3 << 30,
        (1 << 32) - 1,
        1 << 32,
        (1 << 32) + 1,
        5 << 32,
        1 << 33,
    ];
    for gap in intervals {
        let clock = ManualClock::starting_at(Instant::from_nanos(3 * DAY));
        let config = WindowConfig::new().with_interval(Duration::from_millis(1));
        let window = Window::with_layout(&clock, presets::CUBIC_LATENCY_LAYOUT, config).unwrap();
        for _ in 0..10 {
            window.record_duration(Duration::from_millis(900));
        }
        clock.advance(Duration::from_millis(gap));
        window.record_duration(Duration::from_millis(2));
        assert_eq!(window.count(), 1, "gap of {gap} intervals");
        assert_eq!(window.expired(), 10, "gap of {gap} intervals");
        assert_eq!(window.quantile(1.0).unwrap(), Some(2e6));
        window.refresh();
        let t = window.cached_quantile().unwrap();
        assert!(
            (t - 2e6).abs() <= 0.01 * 2e6,
            "threshold {t} after a gap of {gap}"
        );
    }
}

/// Item 3: a clock stepping back a little, again and again (NTP slews, a timer that
/// wraps), refilled the token bucket at every step.
#[test]
fn backward_steps_earn_a_token_bucket_nothing() {
    for step in [MS, 300 * MS, 2 * SEC, 90 * SEC] {
        let clock = ManualClock::starting_at(Instant::from_nanos(YEAR));
        let bucket = TokenBucket::new(&clock, 1.0, 2).unwrap(); // 1 per second, burst 2
        let mut granted = 0;
        for _ in 0..1000 {
            granted += u32::from(bucket.try_acquire());
            let now = clock.now().as_nanos();
            clock.set(Instant::from_nanos(now - step));
        }
        assert!(
            (1..=2).contains(&granted),
            "steps back of {step} ns: {granted} granted"
        );
        // Empty after the clock went back; it refills from there as time moves forward.
        assert!(!bucket.try_acquire());
        clock.advance(Duration::from_secs(1));
        assert!(bucket.try_acquire(), "steps back of {step} ns: refills");
        assert!(!bucket.try_acquire());
    }
}

/// Item 5: `on_rate_limited` said it empties the budget but took only `budget_cap` tokens.
#[test]
fn a_rate_limit_empties_any_budget() {
    let clock = ManualClock::new();
    let bucket = TokenBucket::new(&clock, 100.0, 1024).unwrap();
    let hedger: Hedger<_, _> = Hedger::with_budget(
        &clock,
        HedgeConfig::new(),
        bucket,
        presets::CUBIC_LATENCY_LAYOUT,
    )
    .unwrap();
    assert_eq!(hedger.budget().balance(), 1024.0);
    hedger.on_rate_limited();
    assert_eq!(hedger.budget().balance(), 0.0);
    assert!(!hedger.budget().try_acquire());

    let ratio = RatioBudget::new(0.1, 50)
        .unwrap()
        .with_min_allowance(5.0, &clock)
        .unwrap();
    let hedger: Hedger<_, _> = Hedger::with_budget(
        &clock,
        HedgeConfig::new(),
        ratio,
        presets::CUBIC_LATENCY_LAYOUT,
    )
    .unwrap();
    hedger.on_rate_limited();
    assert_eq!(hedger.budget().balance(), 0.0);
}

// ---- Smaller broken promises.

/// `min_samples(0)` turned the window's warm-up off, so it learned later than the default.
#[test]
fn a_small_min_samples_learns_no_later_than_the_default() {
    for min_samples in [0, 1, 5, 20] {
        let clock = ManualClock::new();
        let hedger: Hedger<_> =
            Hedger::new(&clock, HedgeConfig::new().with_min_samples(min_samples)).unwrap();
        for i in 1..=20u32 {
            let ticket = hedger.start();
            clock.advance(Duration::from_millis(10));
            hedger.on_success(&ticket, Attempt::Primary);
            if i >= min_samples.max(1) {
                let delay = hedger.delay();
                assert!(
                    delay
                        .is_ok_and(|d| d >= Duration::from_millis(10)
                            && d <= Duration::from_micros(10_250)),
                    "min_samples {min_samples}, after {i} latencies: {delay:?}"
                );
            } else {
                assert_eq!(hedger.delay(), Err(SkipReason::ColdStart));
            }
        }
    }
}

/// A clock that went back before a request's start made `Wait` longer than `max_delay`.
#[test]
fn a_wait_never_exceeds_the_delay_whatever_the_clock() {
    let clock = ManualClock::starting_at(Instant::from_nanos(YEAR));
    let config = HedgeConfig::new()
        .with_cold_start(ColdStart::Delay(Duration::from_millis(10)))
        .with_max_delay(Duration::from_millis(50));
    let hedger: Hedger<_> = Hedger::new(&clock, config).unwrap();
    let mut ticket = hedger.start();
    for back in [1, 1_000, 3_600_000] {
        clock.set(Instant::from_nanos(YEAR - back * MS));
        match hedger.should_hedge(&mut ticket) {
            Decision::Wait(d) => assert!(d <= Duration::from_millis(10), "{d:?}"),
            other => panic!("{other:?}"),
        }
    }
}

/// With a zero delay (`max_delay` zero, or a zero cold-start delay and `min_delay`), a
/// clock behind a request's start answered `Wait(0)` until it caught up: the documented
/// loop (sleep the wait, ask again) spun, and with a clock that does not move on its own
/// never ended. A zero delay hedges at once, whatever the clock.
#[test]
fn a_zero_delay_never_answers_a_zero_wait() {
    let zero_cold_start = HedgeConfig::new()
        .with_min_delay(Duration::ZERO)
        .with_cold_start(ColdStart::Delay(Duration::ZERO));
    let zero_max = HedgeConfig::new()
        .with_min_delay(Duration::ZERO)
        .with_max_delay(Duration::ZERO)
        .with_cold_start(ColdStart::Delay(Duration::from_millis(10)))
        .with_max_hedges(2);
    for config in [zero_cold_start, zero_max] {
        let clock = ManualClock::starting_at(Instant::from_nanos(YEAR));
        let hedger: Hedger<_> = Hedger::new(&clock, config).unwrap();
        let mut ticket = hedger.start();
        clock.set(Instant::from_nanos(YEAR - DAY)); // the clock went back a day
        let mut hedges = 0;
        for _ in 0..10 {
            match hedger.should_hedge(&mut ticket) {
                Decision::Wait(d) => {
                    assert!(!d.is_zero(), "a zero wait: {config:?}");
                    clock.advance(d);
                }
                Decision::Hedge => hedges += 1,
                Decision::Skip(reason) => {
                    assert_eq!(reason, SkipReason::MaxHedges);
                    break;
                }
            }
        }
        assert_eq!(
            u8::try_from(hedges).unwrap(),
            config.max_hedges(),
            "{config:?}"
        );
    }
}
/// `with_min_allowance` failed above 1,024 hedges per second with an undocumented
/// `InvalidBurst`; its burst is now capped at 1,024.
#[test]
fn a_min_allowance_above_1024_per_second_is_accepted() {
    let clock = ManualClock::new();
    for rate in [1024.0, 1025.0, 5_000.0, 1e6] {
        let budget = RatioBudget::default()
            .with_min_allowance(rate, &clock)
            .unwrap();
        let allowance = budget.allowance().unwrap();
        assert_eq!(allowance.burst(), 1024, "{rate}");
        assert!(allowance.rate() >= rate && allowance.rate() <= rate * (1.0 + 1.0 / 125.0));
    }
    for bad in [0.0, -1.0, f64::NAN, 2e6] {
        assert!(RatioBudget::default()
            .with_min_allowance(bad, &clock)
            .is_err());
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    /// `TokenBucket::new` documents the rate it applies: at or above the one asked for,
    /// by less than 1/512 when a burst takes 4.2 ms or more to refill, and by less than
    /// 1/125 always.
    #[test]
    fn token_bucket_rates_round_as_documented(rate in 1e-6f64..1e6, burst in 1u32..=1024) {
        let clock = ManualClock::new();
        if let Ok(bucket) = TokenBucket::new(&clock, rate, burst) {
            let applied = bucket.rate();
            let bound = if f64::from(burst) / rate >= 4.2e-3 { 1.0 / 512.0 } else { 1.0 / 125.0 };
            prop_assert!(applied >= rate && applied <= rate * (1.0 + bound), "{} for {}", applied, rate);
            prop_assert_eq!(bucket.burst(), burst);
        } else {
            // Only a burst that takes more than 2^51 ns to refill is refused.
            prop_assert!(f64::from(burst) / rate * 1e9 > (1u64 << 51) as f64);
        }
    }
}

// ---- Long-life properties against reference models.

/// A clock move: forward small, forward by many ticks of some coarse clock, backward.
#[derive(Debug, Clone, Copy)]
enum Move {
    Forward(u64),
    Back(u64),
}

/// Moves that matter to clocks whose ticks are `units` (ns): steps of a few ticks, jumps of
/// 2^31..2^33 ticks (the old half-range horizon and past it), idle days, steps back.
fn moves(units: Vec<u64>) -> impl Strategy<Value = Vec<Move>> {
    let units = proptest::sample::select(units);
    let step = (units.clone(), 0u64..5).prop_map(|(u, k)| Move::Forward(u * k));
    let fine = (0u64..3 * SEC).prop_map(Move::Forward);
    let huge = (units.clone(), (1u64 << 31)..(1u64 << 33))
        .prop_map(|(u, k)| Move::Forward(u.saturating_mul(k)));
    let idle = (0u64..60 * DAY).prop_map(Move::Forward);
    let back = prop_oneof![
        (units, 0u64..4).prop_map(|(u, k)| Move::Back(u * k)),
        (0u64..2 * YEAR).prop_map(Move::Back),
    ];
    proptest::collection::vec(
        prop_oneof![4 => step, 4 => fine, 1 => huge, 1 => idle, 1 => back],
        1..60,
    )
}

fn apply(clock: &ManualClock, m: Move) -> (u64, u64) {
    let now = clock.now().as_nanos();
    let next = match m {
        Move::Forward(d) => now.saturating_add(d),
        Move::Back(d) => now.saturating_sub(d),
    };
    clock.set(Instant::from_nanos(next));
    (now, next)
}

/// The window as a list of (interval, value) with its published interval, by the rules of
/// the window's docs (single-threaded: a second clock read gives the same reading).
struct WindowModel {
    slots: u64,
    published: u64,
    records: Vec<(u64, u64)>,
    expired: u64,
}

impl WindowModel {
    /// Brings the model to interval `t` as a record or query at `t` does.
    fn at(&mut self, t: u64) {
        let keep_from = |p: u64| p.saturating_sub(self.slots - 2);
        if t > self.published {
            let from = t.saturating_sub(self.slots - 2);
            let before = self.records.len();
            self.records.retain(|&(i, _)| i >= from);
            self.expired += (before - self.records.len()) as u64;
            self.published = t;
        } else if t < keep_from(self.published) {
            self.expired += self.records.len() as u64;
            self.records.clear();
            self.published = t;
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    /// A window on 1 ms or 30 s intervals, started anywhere in ten years: every record and
    /// query agrees with the model on count, expired, min and max, whatever the moves.
    #[test]
    fn window_matches_its_model_at_any_reading(
        start in 0u64..10 * YEAR,
        interval_ms in prop_oneof![Just(1u64), Just(30_000u64)],
        ops in proptest::collection::vec((moves(vec![MS, 30 * SEC, 1 << 20]), 1u64..1_000_000), 1..8),
    ) {
        let clock = ManualClock::starting_at(Instant::from_nanos(start));
        let interval = interval_ms * MS;
        let config = WindowConfig::new().with_interval(Duration::from_nanos(interval));
        let window: IntLatencyCoarseWindow<_> =
            Window::with_layout(&clock, presets::INT_LATENCY_COARSE_LAYOUT, config).unwrap();
        let mut model = WindowModel { slots: 3, published: 0, records: Vec::new(), expired: 0 };
        let ticks = |ns: u64| ns.saturating_sub(start) / interval;
        for (moves, value) in ops {
            for m in moves {
                apply(&clock, m);
                let t = ticks(clock.now().as_nanos());
                window.record_u64(value * 1000);
                model.at(t);
                model.records.push((t, value * 1000));
                prop_assert_eq!(window.count(), model.records.len() as u64);
                prop_assert_eq!(u64::from(window.expired()), model.expired);
                prop_assert_eq!(window.saturated(), 0);
                let max = model.records.iter().map(|r| r.1).max().unwrap() as f64;
                let got = window.quantile(1.0).unwrap().unwrap();
                prop_assert!(got <= max && got >= max * (1.0 - 1e-6), "max {} vs {}", got, max);
                window.refresh();
                let threshold = window.cached_quantile().unwrap();
                prop_assert!(threshold <= max * 1.02, "threshold {} above every value", threshold);
            }
        }
    }

    /// A hedger started anywhere in ten years backs off exactly while a rate-limit signal is
    /// younger than its cooldown (to the cooldown clock's ~1 ms tick), whatever the moves,
    /// and never asks a caller to wait longer than its delay.
    #[test]
    fn hedger_back_off_matches_its_model_at_any_reading(
        start in 0u64..10 * YEAR,
        cooldown_s in prop_oneof![Just(10u64), Just(3_600), Just(40 * 86_400)],
        ops in proptest::collection::vec((moves(vec![1 << 20, 30 * SEC]), any::<bool>()), 1..8),
    ) {
        let clock = ManualClock::starting_at(Instant::from_nanos(start));
        let cooldown = cooldown_s * SEC;
        let hedger = fixed_delay_hedger(&clock, Duration::from_nanos(cooldown));
        let mut signal: Option<u64> = None;
        for (moves, signal_now) in ops {
            for m in moves {
                apply(&clock, m);
                let now = clock.now().as_nanos();
                if let Some(at) = signal {
                    let age = now.abs_diff(at);
                    // Two ticks of the cooldown clock (about 1 ms, or cooldown / 2^29) of
                    // slack for the tick rounding.
                    let tick = (1 << 21) + cooldown / (1 << 28);
                    if age.saturating_add(tick) < cooldown {
                        prop_assert!(backing_off(&hedger), "{} ns after the signal", age);
                    } else if age > cooldown.saturating_add(tick) {
                        prop_assert!(!backing_off(&hedger), "{} ns after the signal", age);
                    }
                } else {
                    prop_assert!(!backing_off(&hedger));
                }
                let mut ticket = hedger.start();
                if let Decision::Wait(d) = hedger.should_hedge(&mut ticket) {
                    prop_assert!(d <= Duration::from_millis(20));
                }
            }
            if signal_now {
                hedger.on_rate_limited();
                signal = Some(clock.now().as_nanos());
            }
        }
    }

    /// A token bucket started anywhere in ten years never grants more than its burst plus
    /// its rate times the clock's total forward movement, and is full after any idle gap at
    /// least as long as a burst's refill time.
    #[test]
    fn token_bucket_matches_its_bound_at_any_reading(
        start in 0u64..10 * YEAR,
        (rate, burst) in prop_oneof![Just((1e6, 1u32)), Just((1000.0, 10)), Just((0.5, 3))],
        ops in proptest::collection::vec((moves(vec![8, 1 << 12, 1 << 31]), 0u32..4), 1..12),
    ) {
        let clock = ManualClock::starting_at(Instant::from_nanos(start));
        let bucket = TokenBucket::new(&clock, rate, burst).unwrap();
        let refill_ns = (f64::from(burst) / bucket.rate() * 1e9).ceil() as u64;
        let (mut granted, mut forward) = (0u64, 0u64);
        // A clock that went back leaves the bucket empty until its next use restarts the
        // refill from there: only then does an idle gap fill it.
        let mut unused_since_back = false;
        for (moves, acquires) in ops {
            for m in moves {
                let (before, after) = apply(&clock, m);
                forward = forward.saturating_add(after.saturating_sub(before));
                unused_since_back |= after < before;
                if after >= before && after - before >= refill_ns && !unused_since_back {
                    prop_assert_eq!(bucket.balance(), f64::from(burst), "full after an idle gap");
                }
                for _ in 0..acquires {
                    granted += u64::from(bucket.try_acquire());
                    unused_since_back = false;
                }
                let bound = u64::from(burst).saturating_add((forward as f64 * bucket.rate() / 1e9) as u64);
                prop_assert!(granted <= bound, "{} granted > {}", granted, bound);
                prop_assert!(bucket.balance() >= 0.0 && bucket.balance() <= f64::from(burst));
            }
        }
    }

    /// A ratio budget with a minimum allowance, started anywhere: hedges never exceed the
    /// cap, the deposits and the allowance's own bound.
    #[test]
    fn ratio_budget_with_allowance_stays_in_bounds_at_any_reading(
        start in 0u64..10 * YEAR,
        ops in proptest::collection::vec((moves(vec![1 << 20, 1 << 12]), 0u32..20, 0u32..4), 1..10),
    ) {
        let clock = ManualClock::starting_at(Instant::from_nanos(start));
        let budget = RatioBudget::new(0.1, 2).unwrap().with_min_allowance(2.0, &clock).unwrap();
        let (mut requests, mut granted, mut forward) = (0u64, 0u64, 0u64);
        for (moves, reqs, acquires) in ops {
            for m in moves {
                let (before, after) = apply(&clock, m);
                forward = forward.saturating_add(after.saturating_sub(before));
                for _ in 0..reqs {
                    budget.on_request();
                }
                requests += u64::from(reqs);
                for _ in 0..acquires {
                    granted += u64::from(budget.try_acquire());
                }
                let allowance = budget.allowance().unwrap();
                let allowance_bound =
                    u64::from(allowance.burst()).saturating_add((forward as f64 * allowance.rate() / 1e9) as u64);
                // Millionths of a token: exact.
                prop_assert!(
                    granted * 1_000_000 <= 2_000_000 + requests * 100_000 + allowance_bound.saturating_mul(1_000_000),
                    "{} granted for {} requests", granted, requests
                );
            }
        }
    }
}

// ---- Ten years of a hedger, in simulated time.

/// One stage of traffic: `n` requests of `ms` milliseconds, one in ten 10x slower, with
/// hedges when asked; returns (hedges, requests).
fn traffic(clock: &ManualClock, hedger: &Hedger<&ManualClock>, n: u32, ms: u64) -> (u32, u32) {
    let mut hedges = 0;
    for i in 0..n {
        let latency = if i % 10 == 9 { 10 * ms } else { ms } * MS;
        let mut ticket = hedger.start();
        let start = clock.now().as_nanos();
        let mut winner = Attempt::Primary;
        loop {
            let elapsed = clock.now().as_nanos() - start;
            if elapsed >= latency {
                break;
            }
            match hedger.should_hedge(&mut ticket) {
                Decision::Wait(d) => {
                    let d = (d.as_nanos() as u64).min(latency - elapsed);
                    clock.advance(Duration::from_nanos(d.max(1)));
                }
                Decision::Hedge => {
                    hedges += 1;
                    winner = Attempt::Hedge(1);
                    clock.advance(Duration::from_nanos(ms * MS)); // the backup answers
                    break;
                }
                Decision::Skip(_) => {
                    clock.advance(Duration::from_nanos(latency - elapsed));
                    break;
                }
            }
        }
        hedger.on_success(&ticket, winner);
        clock.advance(Duration::from_millis(1));
    }
    (hedges, n)
}

/// Ten years of uptime in stages: traffic, checks of the learned delay, a rate limit and
/// its recovery, then an idle gap (hours to two months, so every span where a 32-bit clock
/// once wrapped is crossed many times). At every stage the delay follows the latency, the
/// back-off lasts exactly its cooldown, and the budget's bound holds over the whole run.
#[test]
fn a_hedger_runs_ten_years() {
    let start = 12_345 * SEC;
    let clock = ManualClock::starting_at(Instant::from_nanos(start));
    let config = HedgeConfig::new().with_min_samples(20);
    let hedger = Hedger::new(&clock, config).unwrap();
    let mut rng = Rng::new(2026);
    let (mut hedges, mut requests, mut stages) = (0u64, 0u64, 0u32);
    while clock.now().as_nanos() < start + 10 * YEAR {
        stages += 1;
        // After an idle gap the window has forgotten everything: cold start.
        assert_eq!(hedger.delay(), Err(SkipReason::ColdStart), "stage {stages}");
        let ms = [2u64, 5, 20][stages as usize % 3];
        let (h, n) = traffic(&clock, &hedger, 100, ms);
        hedges += u64::from(h);
        requests += u64::from(n);
        // The p90 of `ms`-millisecond latencies: about `ms` (a tenth are 10x slower, and
        // hedged ones are recorded at their elapsed time, so the p90 sits at the body).
        let delay = hedger.delay().unwrap().as_secs_f64() * 1e3;
        let want = ms as f64;
        assert!(
            delay >= want * 0.99 && delay <= want * 10.0 * 1.03,
            "stage {stages}: delay {delay} ms for {ms} ms latencies"
        );
        let learned = hedger.delay().unwrap();
        // A rate limit: empty budget, doubled delay for 10 s, then back.
        hedger.on_rate_limited();
        assert_eq!(hedger.budget().balance(), 0.0);
        assert_eq!(
            hedger.delay().unwrap(),
            (learned * 2).min(Duration::from_secs(30))
        );
        clock.advance(Duration::from_millis(9_990));
        assert!(
            hedger.delay().unwrap() > learned,
            "stage {stages}: still cooling down"
        );
        clock.advance(Duration::from_millis(20));
        let delay = hedger.delay();
        // The window may have rotated meanwhile; the delay is no longer doubled.
        assert!(
            delay == Ok(learned) || delay.is_ok_and(|d| d < learned * 2),
            "stage {stages}: {delay:?} vs {learned:?}"
        );
        // Idle: hours to two months.
        let idle = (rng.unit() * 60.0 * DAY as f64) as u64 + 2 * 3600 * SEC;
        clock.advance(Duration::from_nanos(idle));
    }
    assert!(stages > 100, "{stages} stages");
    // The default budget: 10 % of requests plus a cap of 50 saved up, over the whole run.
    assert!(
        hedges * 10 <= requests + 500,
        "{hedges} hedges for {requests} requests"
    );
    let stats = hedger.stats();
    assert_eq!(stats.requests, requests as u32);
    assert_eq!(u64::from(stats.hedges), hedges);
}
