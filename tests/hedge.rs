//! Every decision path of the Hedger, and `race` with a deterministic executor and clock.

use core::future::Future;
use core::pin::pin;
use core::task::{Context, Poll, Waker};
use core::time::Duration;
use std::cell::Cell;
use std::rc::Rc;

use tailguard::budget::Budget;
use tailguard::clock::{Clock, Instant, ManualClock};
use tailguard::deadline::Deadline;
use tailguard::hedge::{
    race, race_until, Attempt, ColdStart, CompactHedger, Decision, HedgeConfig, HedgeError,
    HedgePolicy, Hedger, IntHedger, RaceError, SkipReason, MAX_HEDGES,
};
use tailguard::sketch::presets;

const MS: Duration = Duration::from_millis(1);

/// A hedger that has learned a flat 10 ms latency from `n` requests.
fn warmed(clock: &ManualClock, config: HedgeConfig, n: u32) -> Hedger<&ManualClock> {
    let hedger = Hedger::new(clock, config).unwrap();
    for _ in 0..n {
        let t = hedger.start();
        clock.advance(10 * MS);
        hedger.on_success(&t, Attempt::Primary);
    }
    hedger
}

fn near(d: Duration, want: Duration) -> bool {
    let (d, w) = (d.as_secs_f64(), want.as_secs_f64());
    // The sketch's 1 % accuracy, and the delay taken at the upper edge of its bin.
    (d - w).abs() <= 0.025 * w
}

#[test]
fn cold_start_skips_or_uses_the_initial_delay() {
    let clock = ManualClock::new();
    let hedger = warmed(&clock, HedgeConfig::new().with_min_samples(20), 19);
    let mut t = hedger.start();
    assert_eq!(
        hedger.should_hedge(&mut t),
        Decision::Skip(SkipReason::ColdStart)
    );
    assert_eq!(hedger.stats().skipped_cold, 1);

    let config = HedgeConfig::new()
        .with_min_samples(20)
        .with_cold_start(ColdStart::Delay(3 * MS));
    let hedger = warmed(&clock, config, 5);
    let mut t = hedger.start();
    assert_eq!(hedger.should_hedge(&mut t), Decision::Wait(3 * MS));

    // After min_samples, the learned p90 (10 ms).
    let hedger = warmed(&clock, HedgeConfig::new().with_min_samples(20), 20);
    let mut t = hedger.start();
    let Decision::Wait(d) = hedger.should_hedge(&mut t) else {
        panic!()
    };
    assert!(near(d, 10 * MS), "{d:?}");
}

#[test]
fn hedges_when_due_and_respects_max_hedges() {
    let clock = ManualClock::new();
    let hedger = warmed(
        &clock,
        HedgeConfig::new().with_min_samples(10).with_max_hedges(2),
        50,
    );
    let mut t = hedger.start();
    let Decision::Wait(d) = hedger.should_hedge(&mut t) else {
        panic!()
    };
    clock.advance(d);
    assert_eq!(hedger.should_hedge(&mut t), Decision::Hedge);
    assert_eq!(t.hedges(), 1);
    // The second hedge goes one more delay later.
    let Decision::Wait(d2) = hedger.should_hedge(&mut t) else {
        panic!()
    };
    assert!(near(d2, d));
    clock.advance(d2);
    assert_eq!(hedger.should_hedge(&mut t), Decision::Hedge);
    assert_eq!(
        hedger.should_hedge(&mut t),
        Decision::Skip(SkipReason::MaxHedges)
    );
    assert_eq!(hedger.stats().hedges, 2);
}

#[test]
fn budget_exhaustion_skips() {
    let clock = ManualClock::new();
    let config = HedgeConfig::new()
        .with_min_samples(10)
        .with_budget_ratio(0.0)
        .with_budget_cap(2);
    let hedger = warmed(&clock, config, 20);
    let mut granted = 0;
    for _ in 0..5 {
        let mut t = hedger.start();
        clock.advance(200 * MS);
        match hedger.should_hedge(&mut t) {
            Decision::Hedge => granted += 1,
            Decision::Skip(SkipReason::Budget) => {}
            other => panic!("{other:?}"),
        }
        // No outcome reported: the learned delay stays at 10 ms.
    }
    assert_eq!(granted, 2);
    assert_eq!(hedger.stats().denied_budget, 3);
}

#[test]
fn no_hedge_that_cannot_finish_before_the_deadline() {
    let clock = ManualClock::new();
    let hedger = warmed(&clock, HedgeConfig::new().with_min_samples(10), 50);
    // Hedge due at ~10 ms, backup needs ~10 ms: a 15 ms deadline is too close.
    let within = |d: Duration| Deadline::after(clock.now(), d);
    let mut t = hedger.start_with_deadline(within(15 * MS));
    assert_eq!(
        hedger.should_hedge(&mut t),
        Decision::Skip(SkipReason::Deadline)
    );
    // 25 ms is enough.
    let mut t = hedger.start_with_deadline(within(25 * MS));
    assert!(matches!(hedger.should_hedge(&mut t), Decision::Wait(_)));
    // A deadline already past.
    let mut t = hedger.start_with_deadline(within(Duration::ZERO));
    assert_eq!(
        hedger.should_hedge(&mut t),
        Decision::Skip(SkipReason::Deadline)
    );
    assert_eq!(hedger.stats().skipped_deadline, 2);
    assert_eq!(t.deadline(), Some(Deadline::at(t.start())));
}

#[test]
fn back_pressure_backs_off_then_recovers() {
    let clock = ManualClock::new();
    let config = HedgeConfig::new()
        .with_min_samples(10)
        .with_cooldown(Duration::from_secs(5))
        .with_budget_cap(2);
    let hedger = warmed(&clock, config, 50);
    let before = hedger.delay().unwrap();
    hedger.on_rate_limited();
    assert_eq!(hedger.budget().balance(), 0.0);
    assert!(near(hedger.delay().unwrap(), 2 * before));
    let mut t = hedger.start();
    clock.advance(30 * MS);
    assert_eq!(
        hedger.should_hedge(&mut t),
        Decision::Skip(SkipReason::BackPressure)
    );
    assert_eq!(hedger.stats().skipped_backpressure, 1);
    assert_eq!(hedger.stats().rate_limited, 1);
    // Requests refill the budget, the cooldown passes: back to normal.
    for _ in 0..30 {
        hedger.start();
    }
    clock.advance(Duration::from_secs(6));
    assert!(near(hedger.delay().unwrap(), before));
    let mut t = hedger.start();
    clock.advance(30 * MS);
    assert_eq!(hedger.should_hedge(&mut t), Decision::Hedge);
}

#[test]
fn delay_is_clamped_to_its_bounds() {
    let clock = ManualClock::new();
    let low = warmed(
        &clock,
        HedgeConfig::new()
            .with_min_samples(10)
            .with_min_delay(25 * MS),
        20,
    );
    assert_eq!(low.delay(), Ok(25 * MS));
    let high = warmed(
        &clock,
        HedgeConfig::new()
            .with_min_samples(10)
            .with_max_delay(4 * MS),
        20,
    );
    assert_eq!(high.delay(), Ok(4 * MS));
    let bad = Hedger::new(
        &clock,
        HedgeConfig::new().with_min_delay(5 * MS).with_max_delay(MS),
    );
    assert_eq!(bad.err(), Some(HedgeError::InvalidDelayBounds));
    for q in [0.0, 1.0, f64::NAN] {
        let bad = Hedger::new(&clock, HedgeConfig::new().with_percentile(q));
        assert_eq!(bad.err(), Some(HedgeError::InvalidPercentile));
    }
    let bad = Hedger::new(&clock, HedgeConfig::new().with_max_hedges(0));
    assert_eq!(bad.err(), Some(HedgeError::InvalidLimit));
    let bad = Hedger::new(&clock, HedgeConfig::new().with_budget_ratio(-1.0));
    assert!(matches!(bad.err(), Some(HedgeError::Budget(_))));
}

#[test]
fn errors_are_never_recorded_as_latency() {
    let clock = ManualClock::new();
    let hedger = warmed(&clock, HedgeConfig::new().with_min_samples(10), 20);
    let before = hedger.window().count();
    let mut t = hedger.start();
    clock.advance(MS);
    hedger.on_error(&mut t, Attempt::Primary);
    clock.advance(20 * MS);
    hedger.on_success(&t, Attempt::Hedge(1));
    assert_eq!(hedger.window().count(), before);
    assert_eq!(hedger.stats().errors, 1);
}

#[test]
fn a_cancelled_primary_is_recorded_at_its_elapsed_time() {
    let clock = ManualClock::new();
    let hedger = warmed(&clock, HedgeConfig::new().with_min_samples(10), 20);
    let t = hedger.start();
    clock.advance(37 * MS);
    assert_eq!(hedger.on_success(&t, Attempt::Hedge(1)), 37 * MS);
    let max = hedger.window().quantile(1.0).unwrap().unwrap();
    assert_eq!(max, 37e6);
}

// ---- race, with a deterministic executor: time moves only when every future is pending.

/// A future that completes when the clock reaches `at`, setting `dropped` when dropped.
struct Delayed<'a, T> {
    clock: &'a ManualClock,
    at: Instant,
    value: Option<T>,
    dropped: Rc<Cell<bool>>,
}

impl<T: Unpin> Future for Delayed<'_, T> {
    type Output = T;
    fn poll(mut self: core::pin::Pin<&mut Self>, _: &mut Context<'_>) -> Poll<T> {
        if self.clock.now() >= self.at {
            Poll::Ready(self.value.take().unwrap())
        } else {
            Poll::Pending
        }
    }
}

impl<T> Drop for Delayed<'_, T> {
    fn drop(&mut self) {
        self.dropped.set(true);
    }
}

fn after<T>(clock: &ManualClock, d: Duration, value: T) -> (Delayed<'_, T>, Rc<Cell<bool>>) {
    let dropped = Rc::new(Cell::new(false));
    let at = clock.now().saturating_add(d);
    (
        Delayed {
            clock,
            at,
            value: Some(value),
            dropped: dropped.clone(),
        },
        dropped,
    )
}

/// Polls `f` to completion, advancing the clock 100 µs whenever it is pending.
fn run<F: Future>(clock: &ManualClock, f: F) -> F::Output {
    let mut f = pin!(f);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
        clock.advance(Duration::from_micros(100));
    }
}

fn sleeper<'a>(clock: &'a ManualClock) -> impl FnMut(Duration) -> Delayed<'a, ()> + 'a {
    move |d| after(clock, d, ()).0
}

#[test]
fn race_hedges_a_slow_primary_and_drops_it() {
    let clock = ManualClock::new();
    let hedger = warmed(&clock, HedgeConfig::new().with_min_samples(10), 50);
    let (primary, primary_dropped) = after(&clock, 100 * MS, Ok::<_, ()>("primary"));
    let made = Rc::new(Cell::new(0));
    let make = {
        let (clock, made) = (&clock, made.clone());
        move || {
            made.set(made.get() + 1);
            after(clock, 5 * MS, Ok("backup")).0
        }
    };
    let won = run(&clock, race(&hedger, primary, make, sleeper(&clock))).unwrap();
    assert_eq!(won.value, "backup");
    assert_eq!(won.attempt, Attempt::Hedge(1));
    assert!(near(won.latency, 15 * MS), "{:?}", won.latency);
    assert!(primary_dropped.get(), "the losing primary is cancelled");
    assert_eq!(made.get(), 1);
    let stats = hedger.stats();
    assert_eq!((stats.hedges, stats.hedge_wins), (1, 1));
}

#[test]
fn race_never_makes_a_backup_for_a_fast_primary() {
    let clock = ManualClock::new();
    let hedger = warmed(&clock, HedgeConfig::new().with_min_samples(10), 50);
    let (primary, _) = after(&clock, 3 * MS, Ok::<_, ()>(1));
    let won = run(
        &clock,
        race(
            &hedger,
            primary,
            || -> Delayed<'_, Result<i32, ()>> { panic!("no backup") },
            sleeper(&clock),
        ),
    )
    .unwrap();
    assert_eq!((won.value, won.attempt), (1, Attempt::Primary));
    assert_eq!(hedger.stats().hedges, 0);
}

#[test]
fn race_drops_the_backup_when_the_primary_wins() {
    let clock = ManualClock::new();
    let hedger = warmed(&clock, HedgeConfig::new().with_min_samples(10), 50);
    let (primary, _) = after(&clock, 12 * MS, Ok::<_, ()>("primary"));
    let flag = Rc::new(Cell::new(None));
    let make = {
        let (clock, flag) = (&clock, flag.clone());
        move || {
            let (f, dropped) = after(clock, 50 * MS, Ok("backup"));
            flag.set(Some(dropped));
            f
        }
    };
    let won = run(&clock, race(&hedger, primary, make, sleeper(&clock))).unwrap();
    assert_eq!(won.attempt, Attempt::Primary);
    let dropped = flag.take().expect("a backup was started");
    assert!(dropped.get(), "the losing backup is cancelled");
}

/// One deadline flows through the steps of a workflow; a step that cannot
/// answer in time is cancelled at the deadline and the next one starts nothing.
#[test]
fn race_until_carries_one_deadline_through_a_workflow() {
    let clock = ManualClock::new();
    let hedger = warmed(&clock, HedgeConfig::new().with_min_samples(10), 50);
    let start = clock.now();
    let deadline = Deadline::after(start, 100 * MS);
    let step = |primary: Duration, backup: Duration| {
        let (first, first_dropped) = after(&clock, primary, Ok::<_, ()>("primary"));
        let backup_dropped = Cell::new(None);
        let make = || {
            let (b, dropped) = after(&clock, backup, Ok("backup"));
            backup_dropped.set(Some(dropped));
            b
        };
        let outcome = run(
            &clock,
            race_until(&hedger, deadline, first, make, sleeper(&clock)),
        );
        let backup_dropped = backup_dropped.take().is_some_and(|d| d.get());
        (outcome, first_dropped.get(), backup_dropped)
    };
    // Step 1: the primary answers in 10 ms.
    let (won, _, _) = step(10 * MS, 10 * MS);
    assert_eq!(won.unwrap().attempt, Attempt::Primary);
    // Step 2: the primary is stuck; the hedge sent at ~10 ms answers 10 ms later.
    let (won, primary_dropped, _) = step(500 * MS, 10 * MS);
    assert_eq!(won.unwrap().attempt, Attempt::Hedge(1));
    assert!(primary_dropped);
    // Step 3: both stuck: at the deadline both are dropped.
    let (lost, primary_dropped, backup_dropped) = step(500 * MS, 500 * MS);
    assert_eq!(lost, Err(RaceError::DeadlineExceeded));
    assert!(primary_dropped && backup_dropped);
    let now = clock.now();
    assert!(
        now >= deadline.end() && now <= deadline.end().saturating_add(MS),
        "{now:?}"
    );
    // Step 4: the deadline has passed; nothing is started.
    let (lost, _, _) = step(MS, MS);
    assert_eq!(lost, Err(RaceError::DeadlineExceeded));
    let stats = hedger.stats();
    assert_eq!((stats.deadline_exceeded, stats.hedges), (2, 2));
    // A step cut by its deadline teaches no latency: 50 warm-up requests, steps 1 and 2.
    assert_eq!(hedger.window().count(), 52);
}

/// `race` sends every hedge the configuration allows (no driver caps it).
#[test]
fn race_sends_every_hedge_the_configuration_allows() {
    let clock = ManualClock::new();
    let config = HedgeConfig::new()
        .with_min_samples(10)
        .with_max_hedges(MAX_HEDGES)
        .with_budget_ratio(1.0);
    let hedger = warmed(&clock, config, 50);
    let (primary, primary_dropped) = after(&clock, 500 * MS, Ok::<_, ()>("primary"));
    let made = Cell::new(0);
    let make = || {
        made.set(made.get() + 1);
        // The first backup is stuck too; the second answers.
        let took = if made.get() == 1 { 500 * MS } else { 5 * MS };
        after(&clock, took, Ok("backup")).0
    };
    let won = run(&clock, race(&hedger, primary, make, sleeper(&clock))).unwrap();
    assert_eq!(won.attempt, Attempt::Hedge(2));
    assert!(near(won.latency, 25 * MS), "{:?}", won.latency);
    assert!(primary_dropped.get());
    assert_eq!(made.get(), 2);
    assert_eq!(hedger.stats().hedges, 2);
    assert_eq!(
        Hedger::new(&clock, HedgeConfig::new().with_max_hedges(MAX_HEDGES + 1)).err(),
        Some(HedgeError::TooManyHedges)
    );
}

/// A hedger that has learned 80 latencies of 10 ms and 20 of 100 ms (p50 10 ms, p90
/// 100 ms), its cached percentiles refreshed after the last.
fn bimodal(clock: &ManualClock, config: HedgeConfig) -> Hedger<&ManualClock> {
    let hedger = Hedger::new(clock, config).unwrap();
    for i in 0..100 {
        let t = hedger.start();
        clock.advance(if i < 80 { 10 * MS } else { 100 * MS });
        hedger.on_success(&t, Attempt::Primary);
    }
    hedger.window().refresh();
    hedger
}

/// With a percentile per hedge, hedge `k` goes out when the request has run for the
/// `k`-th percentile (cached, in the same refresh), not `k` delays after the start.
#[test]
fn each_hedge_waits_for_its_own_percentile() {
    let clock = ManualClock::new();
    let config = HedgeConfig::new()
        .with_min_samples(10)
        .with_budget_ratio(1.0)
        .with_percentiles(&[0.5, 0.9]);
    assert_eq!(
        (config.percentiles(), config.max_hedges()),
        (&[0.5, 0.9][..], 2)
    );
    let hedger = bimodal(&clock, config);
    let window = hedger.window();
    let (p50, p90) = (
        window.cached_upper_bound_of(0).unwrap(),
        window.cached_upper_bound_of(1).unwrap(),
    );
    assert!(near(Duration::from_nanos(p50), 10 * MS), "{p50}");
    assert!(near(Duration::from_nanos(p90), 100 * MS), "{p90}");
    // `delay` is the first hedge's.
    assert_eq!(hedger.delay(), Ok(Duration::from_nanos(p50)));
    let mut t = hedger.start();
    assert_eq!(
        hedger.should_hedge(&mut t),
        Decision::Wait(Duration::from_nanos(p50))
    );
    clock.advance(Duration::from_nanos(p50));
    assert_eq!(hedger.should_hedge(&mut t), Decision::Hedge);
    // The second waits until the p90 after the start: the rest of it.
    assert_eq!(
        hedger.should_hedge(&mut t),
        Decision::Wait(Duration::from_nanos(p90 - p50))
    );
    clock.advance(Duration::from_nanos(p90 - p50 - 1));
    assert!(matches!(hedger.should_hedge(&mut t), Decision::Wait(_)));
    clock.advance(Duration::from_nanos(1));
    assert_eq!(hedger.should_hedge(&mut t), Decision::Hedge);
    assert_eq!(
        hedger.should_hedge(&mut t),
        Decision::Skip(SkipReason::MaxHedges)
    );

    // One percentile and two hedges: the second one delay after the first, as before.
    let spaced = bimodal(
        &clock,
        HedgeConfig::new()
            .with_min_samples(10)
            .with_budget_ratio(1.0)
            .with_percentile(0.5)
            .with_max_hedges(2),
    );
    let mut t = spaced.start();
    clock.advance(Duration::from_nanos(p50));
    assert_eq!(spaced.should_hedge(&mut t), Decision::Hedge);
    assert_eq!(
        spaced.should_hedge(&mut t),
        Decision::Wait(Duration::from_nanos(p50))
    );
}

/// The per-hedge delays keep the configured bounds and the back-off, and the cold-start
/// delay spaces the hedges until the percentiles are learned.
#[test]
fn per_hedge_delays_are_clamped_raised_and_spaced_when_cold() {
    let clock = ManualClock::new();
    let config = HedgeConfig::new()
        .with_min_samples(10)
        .with_budget_ratio(1.0)
        .with_budget_cap(1000)
        .with_percentiles(&[0.5, 0.9])
        .with_max_delay(50 * MS)
        .with_cold_start(ColdStart::Delay(7 * MS));
    // Cold: 7 ms, then 7 ms more.
    let cold = Hedger::new(&clock, config).unwrap();
    let mut t = cold.start();
    assert_eq!(cold.should_hedge(&mut t), Decision::Wait(7 * MS));
    clock.advance(7 * MS);
    assert_eq!(cold.should_hedge(&mut t), Decision::Hedge);
    assert_eq!(cold.should_hedge(&mut t), Decision::Wait(7 * MS));

    // Learned: the p90 (100 ms) is clamped to the 50 ms maximum.
    let hedger = bimodal(&clock, config);
    let p50 = hedger.window().cached_upper_bound_of(0).unwrap();
    let mut t = hedger.start();
    clock.advance(Duration::from_nanos(p50));
    assert_eq!(hedger.should_hedge(&mut t), Decision::Hedge);
    assert_eq!(
        hedger.should_hedge(&mut t),
        Decision::Wait(50 * MS - Duration::from_nanos(p50))
    );
    // Backing off doubles both, each clamped: the first is ~20 ms, the second 50 ms.
    hedger.on_rate_limited();
    for _ in 0..20 {
        hedger.start(); // refill the drained budget
    }
    let mut t = hedger.start();
    assert_eq!(
        hedger.should_hedge(&mut t),
        Decision::Wait(Duration::from_nanos(2 * p50))
    );
    clock.advance(Duration::from_nanos(2 * p50));
    assert_eq!(hedger.should_hedge(&mut t), Decision::Hedge);
    assert_eq!(
        hedger.should_hedge(&mut t),
        Decision::Wait(50 * MS - Duration::from_nanos(2 * p50))
    );
}

#[test]
fn per_hedge_percentiles_are_checked() {
    let clock = ManualClock::new();
    let build = |percentiles: &[f64]| {
        Hedger::new(&clock, HedgeConfig::new().with_percentiles(percentiles)).err()
    };
    assert_eq!(build(&[0.9]), None);
    assert_eq!(build(&[0.95, 0.99]), None);
    for refused in [
        &[][..],
        &[0.99, 0.95],
        &[0.9, 0.9],
        &[0.9, f64::NAN],
        &[0.9, 1.0],
        &[0.0, 0.5],
    ] {
        assert_eq!(
            build(refused),
            Some(HedgeError::InvalidPercentile),
            "{refused:?}"
        );
    }
    assert_eq!(build(&[0.5, 0.9, 0.99]), Some(HedgeError::TooManyHedges));
}

/// `race` and `race_until` send the second backup at the second percentile.
#[test]
fn race_sends_each_hedge_at_its_percentile() {
    let clock = ManualClock::new();
    let config = HedgeConfig::new()
        .with_min_samples(10)
        .with_budget_ratio(1.0)
        .with_percentiles(&[0.5, 0.9]);
    let hedger = bimodal(&clock, config);
    let race_once = |deadline: Option<Deadline>| {
        let (primary, _) = after(&clock, 500 * MS, Ok::<_, ()>("primary"));
        let made = Cell::new(0);
        let make = || {
            made.set(made.get() + 1);
            // The first backup is stuck too; the second answers in 5 ms.
            let took = if made.get() == 1 { 500 * MS } else { 5 * MS };
            after(&clock, took, Ok("backup")).0
        };
        let won = match deadline {
            None => run(&clock, race(&hedger, primary, make, sleeper(&clock))),
            Some(d) => run(
                &clock,
                race_until(&hedger, d, primary, make, sleeper(&clock)),
            ),
        }
        .unwrap();
        assert_eq!((won.attempt, made.get()), (Attempt::Hedge(2), 2));
        won.latency
    };
    // Sent at the p90 (100 ms), answered 5 ms later.
    let took = race_once(None);
    assert!(near(took, 105 * MS), "{took:?}");
    let took = race_once(Some(Deadline::after(clock.now(), 300 * MS)));
    assert!(near(took, 105 * MS), "{took:?}");
}

/// A hedger with `config` that has learned latencies of 1, 2, ..., 100 ms, refreshed.
fn uniform(clock: &ManualClock, config: HedgeConfig) -> Hedger<&ManualClock> {
    let hedger = Hedger::new(clock, config.with_min_samples(10)).unwrap();
    for ms in 1..=100 {
        let t = hedger.start();
        clock.advance(ms * MS);
        hedger.on_success(&t, Attempt::Primary);
    }
    hedger.window().refresh();
    hedger
}

/// The on-time rule hedges when the primary's chance of making the target falls below the
/// level, never later than the percentile would, and not when no backup could make it.
#[test]
fn the_on_time_rule_hedges_earlier_when_time_is_short() {
    let clock = ManualClock::new();
    let config = HedgeConfig::new().with_budget_ratio(1.0);
    let plain = uniform(&clock, config);
    let on_time = uniform(&clock, config.with_on_time_chance(0.9));
    let wait = |hedger: &Hedger<&ManualClock>, deadline: Option<Deadline>| {
        let mut t = match deadline {
            Some(d) => hedger.start_with_deadline(d),
            None => hedger.start(),
        };
        match hedger.should_hedge(&mut t) {
            Decision::Wait(w) => w,
            other => panic!("{other:?}"),
        }
    };
    let p90 = wait(&plain, None);
    // No deadline, or a loose one: the percentile.
    assert_eq!(wait(&on_time, None), p90);
    assert_eq!(
        wait(&on_time, Some(Deadline::after(clock.now(), 1000 * MS))),
        p90
    );
    // 95 ms: 95 of the 100 latencies fit, and the chance falls below 90 % once more than
    // (95 - 90) / 0.1 = 50 of them are behind: at the upper edge of 51 ms's bin.
    let tight = wait(&on_time, Some(Deadline::after(clock.now(), 95 * MS)));
    assert!(tight >= 51 * MS && tight <= 52 * MS, "{tight:?}");
    // A target sets the horizon; the deadline stays where it was.
    let aimed =
        Deadline::after(clock.now(), 1000 * MS).with_target(clock.now().saturating_add(95 * MS));
    assert_eq!(wait(&on_time, Some(aimed)), tight);
    // 40 ms: 40 % fit, below 90 % from the start: the shortest delay.
    let short = wait(&on_time, Some(Deadline::after(clock.now(), 40 * MS)));
    assert!(short <= 2 * MS, "{short:?}");
    // Shorter than any latency: no backup could make it.
    let mut t = on_time.start_with_deadline(Deadline::after(clock.now(), MS / 2));
    clock.advance(2 * MS);
    assert_eq!(
        on_time.should_hedge(&mut t),
        Decision::Skip(SkipReason::Deadline)
    );
    assert_eq!(on_time.stats().skipped_deadline, 1);
    for refused in [0.0, 1.0, f64::NAN, -0.5] {
        assert_eq!(
            Hedger::new(&clock, HedgeConfig::new().with_on_time_chance(refused)).err(),
            Some(HedgeError::InvalidChance),
            "{refused}"
        );
    }
}

/// Under the on-time rule, a request past its deadline is not hedged, even when the window
/// holds latencies of zero (which fit in no time left at all).
#[test]
fn the_on_time_rule_sends_no_backup_past_the_deadline() {
    let clock = ManualClock::starting_at(Instant::from_nanos(1_000_000_000));
    let config = HedgeConfig::new()
        .with_min_samples(10)
        .with_budget_ratio(1.0)
        .with_on_time_chance(0.9);
    let hedger = Hedger::new(&clock, config).unwrap();
    for i in 0..100 {
        let t = hedger.start();
        if i % 10 != 0 {
            clock.advance(40 * MS); // one in ten answers at once: a latency of zero
        }
        hedger.on_success(&t, Attempt::Primary);
    }
    hedger.window().refresh();
    let mut t = hedger.start_with_deadline(Deadline::after(clock.now(), 5 * MS));
    clock.advance(20 * MS);
    assert_eq!(
        hedger.should_hedge(&mut t),
        Decision::Skip(SkipReason::Deadline)
    );
    // A deadline already behind at the start: skipped at once, not waited for.
    let mut t = hedger.start_with_deadline(Deadline::at(Instant::from_nanos(1)));
    assert_eq!(
        hedger.should_hedge(&mut t),
        Decision::Skip(SkipReason::Deadline)
    );
    assert_eq!(hedger.stats().hedges, 0);
}

/// A primary unlikely to make its target at all (its chance below the level at the start)
/// is hedged at the shortest delay, not when the fastest latency has passed.
#[test]
fn the_on_time_rule_hedges_a_hopeless_primary_at_once() {
    let clock = ManualClock::new();
    let config = HedgeConfig::new()
        .with_min_samples(10)
        .with_min_delay(MS)
        .with_on_time_chance(0.9);
    let hedger = Hedger::new(&clock, config).unwrap();
    for ms in 100..200 {
        let t = hedger.start();
        clock.advance(ms * MS);
        hedger.on_success(&t, Attempt::Primary);
    }
    // Half the latencies fit in 150 ms: a chance of 0.5 from the start, below 0.9.
    let mut t = hedger.start_with_deadline(Deadline::after(hedger.now(), 150 * MS));
    assert_eq!(hedger.should_hedge(&mut t), Decision::Wait(MS));
    clock.advance(MS);
    assert_eq!(hedger.should_hedge(&mut t), Decision::Hedge);
}

/// The auto-scaling window's buckets are wider than the fixed ones, but a time left below
/// every latency it holds is still too short for a backup: its rank stops at the
/// smallest value, not at the edge of that value's bucket.
#[test]
fn the_on_time_rule_sends_no_backup_below_the_fastest_latency_on_a_compact_hedger() {
    let clock = ManualClock::new();
    let config = HedgeConfig::new()
        .with_min_samples(10)
        .with_on_time_chance(0.9)
        .with_budget_cap(1000);
    let compact: CompactHedger<_> = Hedger::exponential(&clock, config).unwrap();
    let cubic = Hedger::new(&clock, config).unwrap();
    let hedgers: [&dyn HedgePolicy; 2] = [&compact, &cubic];
    for h in hedgers {
        for _ in 0..40 {
            let t = h.start();
            clock.advance(100 * MS);
            h.on_success(&t, Attempt::Primary);
        }
    }
    for h in hedgers {
        for total in [200, 206, 210, 212, 214, 250] {
            let deadline = Deadline::after(clock.now(), total * MS);
            let mut t = h.start_with_deadline(deadline);
            let decision = loop {
                match h.should_hedge(&mut t) {
                    Decision::Wait(w) => clock.advance(w),
                    other => break other,
                }
            };
            // Every latency is 100 ms: a backup fits exactly when 100 ms are left.
            let fits = deadline.remaining(clock.now()) >= 100 * MS;
            let want = if fits {
                Decision::Hedge
            } else {
                Decision::Skip(SkipReason::Deadline)
            };
            assert_eq!(decision, want, "{total} ms");
            clock.advance(100 * MS);
            h.on_deadline_exceeded(&t);
        }
    }
}

/// Percentiles whose delays coincide (a point mass) send their backups the shortest delay
/// apart, not together.
#[test]
fn backups_of_coinciding_percentiles_go_apart() {
    let clock = ManualClock::new();
    let config = HedgeConfig::new()
        .with_percentiles(&[0.5, 0.99])
        .with_min_samples(10)
        .with_min_delay(2 * MS)
        .with_budget_ratio(1.0);
    let hedger = Hedger::new(&clock, config).unwrap();
    for _ in 0..100 {
        let t = hedger.start();
        clock.advance(5 * MS);
        hedger.on_success(&t, Attempt::Primary);
    }
    hedger.window().refresh();
    let mut t = hedger.start();
    let Decision::Wait(first) = hedger.should_hedge(&mut t) else {
        panic!("a cold hedger")
    };
    clock.advance(first);
    assert_eq!(hedger.should_hedge(&mut t), Decision::Hedge);
    assert_eq!(hedger.should_hedge(&mut t), Decision::Wait(2 * MS));
    clock.advance(2 * MS);
    assert_eq!(hedger.should_hedge(&mut t), Decision::Hedge);
    assert_eq!(t.hedges(), 2);
}

/// A clock that went back during a request: no latency to learn, so none is recorded (and
/// the request is counted as unmeasured), rather than a latency of zero.
#[test]
fn a_request_ending_before_its_start_records_nothing() {
    let clock = ManualClock::starting_at(Instant::from_nanos(1_000_000_000));
    let hedger = Hedger::new(&clock, HedgeConfig::new()).unwrap();
    let t = hedger.start();
    clock.set(Instant::from_nanos(500_000_000));
    assert_eq!(hedger.on_success(&t, Attempt::Primary), Duration::ZERO);
    assert_eq!(hedger.window().count(), 0);
    let stats = hedger.stats();
    assert_eq!((stats.unmeasured, stats.primary_wins), (1, 1));
    // A request that did run is recorded as before.
    let t = hedger.start();
    clock.advance(3 * MS);
    assert_eq!(hedger.on_success(&t, Attempt::Primary), 3 * MS);
    assert_eq!(hedger.window().count(), 1);
}

/// `race_until` with a step aimed at its share hedges by the target and gives up only at the
/// deadline.
#[test]
fn race_until_hedges_by_the_target_and_cancels_at_the_deadline() {
    let clock = ManualClock::new();
    let hedger = uniform(
        &clock,
        HedgeConfig::new()
            .with_budget_ratio(1.0)
            .with_on_time_chance(0.9),
    );
    let aimed =
        || Deadline::after(clock.now(), 1000 * MS).with_target(clock.now().saturating_add(95 * MS));
    // The primary is stuck: the backup goes at ~51 ms and answers 5 ms later.
    let (primary, _) = after(&clock, 500 * MS, Ok::<_, ()>("primary"));
    let make = || after(&clock, 5 * MS, Ok("backup")).0;
    let won = run(
        &clock,
        race_until(&hedger, aimed(), primary, make, sleeper(&clock)),
    )
    .unwrap();
    assert_eq!(won.attempt, Attempt::Hedge(1));
    assert!(
        won.latency >= 56 * MS && won.latency <= 57 * MS,
        "{:?}",
        won.latency
    );
    // Both slow, past the target but within the deadline: the answer, not a give-up.
    let (primary, _) = after(&clock, 300 * MS, Ok::<_, ()>("primary"));
    let make = || after(&clock, 400 * MS, Ok("backup")).0;
    let won = run(
        &clock,
        race_until(&hedger, aimed(), primary, make, sleeper(&clock)),
    )
    .unwrap();
    assert_eq!((won.attempt, won.latency), (Attempt::Primary, 300 * MS));
}

/// Any hedger, whatever its mapping, drives `race` (here through `dyn`).
#[test]
fn an_integer_mapped_hedger_races_through_the_common_handle() {
    let clock = ManualClock::new();
    let config = HedgeConfig::new().with_min_samples(10);
    let int: IntHedger<&ManualClock> =
        Hedger::with_layout(&clock, config, presets::INT_LATENCY_LAYOUT).unwrap();
    for _ in 0..50 {
        let t = int.start();
        clock.advance(10 * MS);
        int.on_success(&t, Attempt::Primary);
    }
    let hedger: &dyn HedgePolicy = &int;
    let (primary, _) = after(&clock, 100 * MS, Ok::<_, ()>("primary"));
    let make = || after(&clock, 5 * MS, Ok("backup")).0;
    let won = run(&clock, race(hedger, primary, make, sleeper(&clock))).unwrap();
    assert_eq!(won.attempt, Attempt::Hedge(1));
    assert!(near(won.latency, 15 * MS), "{:?}", won.latency);
    assert_eq!(int.stats().hedge_wins, 1);
}

#[test]
fn race_falls_back_when_the_first_answer_is_an_error() {
    let clock = ManualClock::new();
    let hedger = warmed(&clock, HedgeConfig::new().with_min_samples(10), 50);
    // The primary fails at 12 ms, after the hedge went out at ~10 ms.
    let (primary, _) = after(&clock, 12 * MS, Err::<&str, _>("boom"));
    let make = || after(&clock, 8 * MS, Ok("backup")).0;
    let won = run(&clock, race(&hedger, primary, make, sleeper(&clock))).unwrap();
    assert_eq!(won.value, "backup");
    assert_eq!(hedger.stats().errors, 1);

    // Both fail: the last error.
    let (primary, _) = after(&clock, 12 * MS, Err::<&str, _>("first"));
    let make = || after(&clock, 8 * MS, Err("second")).0;
    let err = run(&clock, race(&hedger, primary, make, sleeper(&clock))).unwrap_err();
    assert_eq!(
        err,
        RaceError::Failed {
            error: "second",
            attempt: Attempt::Hedge(1)
        }
    );

    // A primary failing before any hedge: its error, no backup.
    let (primary, _) = after(&clock, MS, Err::<&str, _>("fast"));
    let err = run(
        &clock,
        race(
            &hedger,
            primary,
            || -> Delayed<'_, Result<&str, &str>> { panic!() },
            sleeper(&clock),
        ),
    )
    .unwrap_err();
    assert_eq!(
        err,
        RaceError::Failed {
            error: "fast",
            attempt: Attempt::Primary
        }
    );
}

/// Races `primary`, which fails with nothing else running, and checks that its error is
/// the answer: no backup made, none counted.
fn a_failing_primary_gets_no_backup(
    clock: &ManualClock,
    hedger: &Hedger<&ManualClock>,
    primary: impl Future<Output = Result<&'static str, &'static str>>,
) {
    let made = Cell::new(0u32);
    let backup = || {
        made.set(made.get() + 1);
        async { Ok::<&str, &str>("backup") }
    };
    let result = run(clock, race(hedger, primary, backup, sleeper(clock)));
    let failed = RaceError::Failed {
        error: "boom",
        attempt: Attempt::Primary,
    };
    assert_eq!(
        (result, made.get(), hedger.stats().hedges),
        (Err(failed), 0, 0)
    );
}

/// A primary that blocks in its first poll (a synchronous driver call) past the hedge
/// delay, then fails. Nothing else is running: its error must be returned as it is.
#[test]
fn a_primary_failing_in_its_first_poll_after_the_delay_gets_no_backup() {
    let clock = ManualClock::new();
    let hedger = warmed(&clock, HedgeConfig::new().with_min_samples(10), 50);
    let primary = async {
        clock.advance(20 * MS); // blocked past the ~10 ms delay
        Err("boom")
    };
    a_failing_primary_gets_no_backup(&clock, &hedger, primary);
}

/// The same with a zero delay: a primary that fails at once gets no backup.
#[test]
fn a_primary_failing_at_once_with_a_zero_delay_gets_no_backup() {
    let clock = ManualClock::new();
    let config = HedgeConfig::new()
        .with_min_delay(Duration::ZERO)
        .with_cold_start(ColdStart::Delay(Duration::ZERO));
    let hedger = Hedger::new(&clock, config).unwrap();
    a_failing_primary_gets_no_backup(&clock, &hedger, async { Err("boom") });
}

#[test]
fn race_survives_a_timer_that_fires_early() {
    // A sleep that is always ready (a broken timer, or one on another clock that runs
    // ahead): the hedger keeps answering `Wait`, and the race must still poll the
    // attempts and finish rather than spin inside one poll. In a thread, so that a
    // regression fails by timeout instead of hanging the test run.
    let (done, result) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let clock = ManualClock::new();
        let hedger = warmed(&clock, HedgeConfig::new().with_min_samples(10), 50);
        let always_ready = |_: Duration| core::future::ready(());

        let (primary, _) = after(&clock, 3 * MS, Ok::<_, ()>("primary"));
        let fast = run(
            &clock,
            race(
                &hedger,
                primary,
                || after(&clock, MS, Ok("backup")).0,
                always_ready,
            ),
        );

        let (primary, primary_dropped) = after(&clock, 100 * MS, Ok::<_, ()>("primary"));
        let slow = run(
            &clock,
            race(
                &hedger,
                primary,
                || after(&clock, 5 * MS, Ok("backup")).0,
                always_ready,
            ),
        );
        let _ = done.send((
            fast.map(|w| w.value),
            slow.map(|w| (w.value, w.latency)),
            primary_dropped.get(),
        ));
    });
    let (fast, slow, primary_dropped) = result
        .recv_timeout(Duration::from_secs(20))
        .expect("the race spun on an always-ready timer");
    assert_eq!(fast, Ok("primary"));
    let (value, latency) = slow.unwrap();
    assert_eq!(value, "backup");
    assert!(near(latency, 15 * MS), "{latency:?}");
    assert!(primary_dropped);
}

// ---- race over a long life: any clock reading, idle gaps, a clock that went back.

const DAY_NS: u64 = 86_400_000_000_000;

/// A slow primary (100 ms) raced against a 5 ms backup.
fn slow_race(
    clock: &ManualClock,
    hedger: &Hedger<&ManualClock>,
) -> tailguard::hedge::Winner<&'static str> {
    let (primary, _) = after(clock, 100 * MS, Ok::<_, ()>("primary"));
    run(
        clock,
        race(
            hedger,
            primary,
            || after(clock, 5 * MS, Ok("backup")).0,
            sleeper(clock),
        ),
    )
    .unwrap()
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(32))]

    /// Started anywhere in ten years: a warm hedger races a slow primary at its learned
    /// delay; after any idle gap (up to 2^33 ms, past every coarse clock's old horizon)
    /// it has forgotten and lets the primary run; warmed again it hedges again; and a
    /// clock that went back before a race neither hangs it nor makes it wait past the
    /// delay.
    #[test]
    fn race_hedges_at_the_learned_delay_at_any_reading(
        start in 0u64..3_650 * DAY_NS,
        gap_ms in proptest::prop_oneof![61_000u64..86_400_000, (1u64 << 31)..(1u64 << 33)],
        back_ms in 0u64..3_600_000,
    ) {
        let clock = ManualClock::starting_at(Instant::from_nanos(start));
        let hedger = warmed(&clock, HedgeConfig::new().with_min_samples(10), 50);
        let won = slow_race(&clock, &hedger);
        proptest::prop_assert_eq!(won.attempt, Attempt::Hedge(1));
        proptest::prop_assert!(near(won.latency, 15 * MS), "{:?}", won.latency);

        clock.advance(Duration::from_millis(gap_ms));
        let won = slow_race(&clock, &hedger);
        proptest::prop_assert_eq!(won.attempt, Attempt::Primary, "forgotten after the gap");

        let hedger = warmed(&clock, HedgeConfig::new().with_min_samples(10), 50);
        let now = clock.now().as_nanos();
        clock.set(Instant::from_nanos(now.saturating_sub(back_ms * 1_000_000)));
        let won = slow_race(&clock, &hedger);
        proptest::prop_assert!(won.latency <= 100 * MS, "{:?}", won.latency);
        proptest::prop_assert!(hedger.stats().hedges <= 1);
    }
}
