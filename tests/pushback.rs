//! A server's pushback (`Hedger::on_rate_limited_for`), in simulated time: no hedge for
//! its duration, then hedging as before; the duration bounded by `max_pushback` and
//! counted when it is; ignored with a `max_pushback` of zero; the latest signal wins; and a
//! clock that goes back never makes it last longer than `max_pushback`.

use core::time::Duration;

use tailguard::budget::Budget;
use tailguard::clock::{Instant, ManualClock};
use tailguard::hedge::{
    Attempt, ColdStart, Decision, HedgeConfig, HedgePolicy, Hedger, SkipReason,
};

const MS: Duration = Duration::from_millis(1);
const SEC: Duration = Duration::from_secs(1);
const DAY: u64 = 86_400_000_000_000;

/// A hedger hedging after a fixed 10 ms (20 ms backing off), whose cooldown (1 s) is
/// shorter than the pushbacks, and whose budget refills at one token per request.
fn config() -> HedgeConfig {
    HedgeConfig::new()
        .with_cold_start(ColdStart::Delay(10 * MS))
        .with_cooldown(SEC)
        .with_budget_ratio(1.0)
}

/// What a request started now decides once its delay has passed (30 ms later; the
/// budget refilled first, so that only back-pressure can hold it back).
fn decision_after_the_delay(clock: &ManualClock, hedger: &(impl HedgePolicy + ?Sized)) -> Decision {
    for _ in 0..3 {
        hedger.start(); // refills the budget the signal drained
    }
    let mut ticket = hedger.start();
    clock.advance(30 * MS);
    let decision = hedger.should_hedge(&mut ticket);
    hedger.on_success(&ticket, Attempt::Primary);
    decision
}

/// Whether a pushback holds hedging off now (no clock moves).
fn pushed_back(hedger: &(impl HedgePolicy + ?Sized)) -> bool {
    hedger.delay() == Err(SkipReason::BackPressure)
}

const SILENCED: Decision = Decision::Skip(SkipReason::BackPressure);

/// Sets `clock` to `ms` milliseconds after `start` (before it, if negative; saturating).
fn set(clock: &ManualClock, start: u64, ms: i64) {
    clock.set(Instant::from_nanos(
        start.saturating_add_signed(ms * 1_000_000),
    ));
}

#[test]
fn a_pushback_holds_every_hedge_back_for_its_duration_then_hedging_resumes() {
    let clock = ManualClock::new();
    let hedger = Hedger::new(&clock, config()).unwrap();
    assert_eq!(decision_after_the_delay(&clock, &hedger), Decision::Hedge);

    set(&clock, 0, 1_000);
    hedger.on_rate_limited_for(5 * SEC); // "Retry-After: 5"
    let stats = hedger.stats();
    assert_eq!((stats.rate_limited, stats.pushbacks), (1, 1));
    assert_eq!(stats.pushbacks_clamped, 0);
    assert_eq!(stats.delay, None, "no hedge delay while pushed back");
    assert_eq!(hedger.budget().balance(), 0.0, "the budget drained");
    // With tokens in the budget and the cooldown (1 s) over, still no hedge.
    for after in [0, 500, 1_500, 4_000] {
        set(&clock, 1_000_000_000, after);
        assert_eq!(
            decision_after_the_delay(&clock, &hedger),
            SILENCED,
            "{after} ms after"
        );
    }
    assert_eq!(
        hedger.stats().skipped_backpressure,
        4,
        "counted as back-pressure"
    );
    set(&clock, 1_000_000_000, 4_999);
    assert!(pushed_back(&hedger));

    // Over (to the cooldown clock's tick, never later): hedging as before.
    set(&clock, 1_000_000_000, 5_000);
    assert_eq!(hedger.delay(), Ok(10 * MS));
    assert_eq!(decision_after_the_delay(&clock, &hedger), Decision::Hedge);
    assert_eq!(hedger.stats().skipped_backpressure, 4);
}

#[test]
fn a_pushback_longer_than_the_maximum_is_clamped_and_counted() {
    let clock = ManualClock::new();
    let hedger = Hedger::new(&clock, config().with_max_pushback(2 * SEC)).unwrap();
    hedger.on_rate_limited_for(Duration::from_secs(3_600)); // a server asking for an hour
    set(&clock, 0, 1_990);
    assert!(pushed_back(&hedger));
    set(&clock, 0, 2_000);
    assert!(!pushed_back(&hedger), "2 s at most");
    assert_eq!(decision_after_the_delay(&clock, &hedger), Decision::Hedge);
    hedger.on_rate_limited_for(Duration::MAX);
    hedger.on_rate_limited_for(2 * SEC); // exactly the maximum: not clamped
    let stats = hedger.stats();
    assert_eq!((stats.pushbacks, stats.pushbacks_clamped), (3, 2));
    assert_eq!(stats.rate_limited, 3);

    // The default maximum: a minute.
    assert_eq!(HedgeConfig::new().max_pushback(), 60 * SEC);
    let clock = ManualClock::new();
    let hedger = Hedger::new(&clock, config()).unwrap();
    hedger.on_rate_limited_for(Duration::MAX);
    set(&clock, 0, 59_990);
    assert!(pushed_back(&hedger));
    set(&clock, 0, 60_000);
    assert!(!pushed_back(&hedger));
    assert_eq!(hedger.stats().pushbacks_clamped, 1);

    // No maximum: short pushbacks to the millisecond, and none beyond 2^29 ticks of the
    // cooldown's clock (2^49 ns, six and a half days), counted as clamped.
    let clock = ManualClock::new();
    let hedger = Hedger::new(&clock, config().with_max_pushback(Duration::MAX)).unwrap();
    hedger.on_rate_limited_for(10 * SEC);
    set(&clock, 0, 9_990);
    assert!(pushed_back(&hedger));
    set(&clock, 0, 10_000);
    assert!(!pushed_back(&hedger));
    assert_eq!(hedger.stats().pushbacks_clamped, 0);
    hedger.on_rate_limited_for(Duration::from_secs(30 * 86_400));
    set(&clock, 10_000_000_000, 561_600_000); // 6.5 days
    assert!(pushed_back(&hedger));
    set(&clock, 10_000_000_000, 563_328_000); // 6.52 days
    assert!(!pushed_back(&hedger));
    assert_eq!(hedger.stats().pushbacks_clamped, 1);
}

/// A pushback that would end past the clock's last reading (2^64 ns) was shortened to end
/// there, at the last reading to nothing at all (ending the pushback before it, as "retry
/// now" does), and not counted: every shortened pushback is counted.
#[test]
fn a_pushback_past_the_clocks_last_reading_is_shortened_and_counted() {
    for before_the_end in [0, 1, 2 * SEC.as_nanos() as u64] {
        let clock = ManualClock::starting_at(Instant::from_nanos(u64::MAX - before_the_end));
        let hedger = Hedger::new(&clock, config()).unwrap();
        hedger.on_rate_limited_for(5 * SEC);
        assert_eq!(hedger.stats().pushbacks, 1);
        assert_eq!(
            hedger.stats().pushbacks_clamped,
            1,
            "{before_the_end} ns before the end"
        );
        // One that ends before it is not shortened.
        let clock = ManualClock::starting_at(Instant::from_nanos(u64::MAX - 6 * DAY));
        let hedger = Hedger::new(&clock, config()).unwrap();
        hedger.on_rate_limited_for(5 * SEC);
        assert_eq!(hedger.stats().pushbacks_clamped, 0);
        assert!(pushed_back(&hedger));
    }
}

#[test]
fn a_zero_maximum_ignores_the_servers_durations() {
    let clock = ManualClock::new();
    let hedger = Hedger::new(&clock, config().with_max_pushback(Duration::ZERO)).unwrap();
    hedger.on_rate_limited_for(30 * SEC);
    // A plain rate-limit signal: the budget drained and the cooldown's longer delay.
    assert_eq!(hedger.budget().balance(), 0.0);
    assert_eq!(hedger.delay(), Ok(20 * MS));
    assert_eq!(decision_after_the_delay(&clock, &hedger), Decision::Hedge);
    let stats = hedger.stats();
    assert_eq!((stats.rate_limited, stats.pushbacks), (1, 1));
    assert_eq!(stats.pushbacks_clamped, 1, "shortened to zero");
}

#[test]
fn the_latest_pushback_wins_and_a_plain_signal_leaves_it() {
    let clock = ManualClock::new();
    let hedger = Hedger::new(&clock, config()).unwrap();
    hedger.on_rate_limited_for(30 * SEC);
    set(&clock, 0, 1_000);
    hedger.on_rate_limited_for(2 * SEC); // shorter: replaces
    set(&clock, 0, 2_990);
    assert!(pushed_back(&hedger));
    set(&clock, 0, 3_000);
    assert!(!pushed_back(&hedger), "3 s, not 30 s");

    set(&clock, 0, 10_000);
    hedger.on_rate_limited_for(10 * SEC);
    set(&clock, 0, 11_000);
    hedger.on_rate_limited(); // no duration: the pushback stands
    set(&clock, 0, 19_990);
    assert!(pushed_back(&hedger));
    hedger.on_rate_limited_for(Duration::ZERO); // "retry now": over
    assert!(!pushed_back(&hedger));
    assert_eq!(decision_after_the_delay(&clock, &hedger), Decision::Hedge);
    assert_eq!(hedger.stats().pushbacks, 4);
}

#[test]
fn a_clock_that_goes_back_never_holds_hedging_off_longer_than_the_maximum() {
    const DAY_MS: i64 = 86_400_000;
    // At any uptime, the top of the clock's range included.
    for start in [0, 26 * DAY, 7 * 365 * DAY, u64::MAX - DAY] {
        let clock = ManualClock::starting_at(Instant::from_nanos(start));
        let hedger = Hedger::new(&clock, config().with_max_pushback(60 * SEC)).unwrap();
        let at = |ms: i64| set(&clock, start, ms);
        hedger.on_rate_limited_for(30 * SEC);
        // Back 20 s (where the clock can): the end is 50 s ahead, within the maximum; the
        // pushback stands, and ends where it would have.
        if start > 0 {
            at(-20_000);
            assert!(pushed_back(&hedger), "start {start}");
        }
        at(29_990);
        assert!(pushed_back(&hedger), "start {start}");
        at(30_000);
        assert!(!pushed_back(&hedger), "start {start}");

        // Back 40 s, a day or a year: the end would be more than the maximum ahead, so it
        // is over at once.
        for back in [40_000, DAY_MS, 365 * DAY_MS] {
            if start >= back as u64 * 1_000_000 {
                at(0);
                hedger.on_rate_limited_for(30 * SEC);
                at(-back);
                assert!(!pushed_back(&hedger), "start {start}, {back} ms back");
                assert_eq!(decision_after_the_delay(&clock, &hedger), Decision::Hedge);
            }
        }
        // Forward by any gap: over.
        for gap in [31_000, 13 * DAY_MS, 400 * DAY_MS] {
            if start.checked_add(gap as u64 * 1_000_000).is_some() {
                at(0);
                hedger.on_rate_limited_for(30 * SEC);
                at(gap);
                assert!(!pushed_back(&hedger), "start {start}, {gap} ms later");
            }
        }
    }
}

#[test]
fn every_handle_passes_the_pushback_on() {
    let clock = ManualClock::new();
    let hedger = Hedger::new(&clock, config()).unwrap();
    let by_ref = &hedger;
    // The hedger, a reference to it, and a `dyn` behind a reference.
    let as_dyn: &dyn HedgePolicy = &hedger;
    let handles: [&dyn HedgePolicy; 3] = [by_ref, &by_ref, &as_dyn];
    for (n, handle) in (1..).zip(handles) {
        handle.on_rate_limited_for(SEC);
        assert_eq!(decision_after_the_delay(&clock, handle), SILENCED);
        assert_eq!(hedger.stats().pushbacks, n);
        clock.advance(2 * SEC);
        assert_eq!(decision_after_the_delay(&clock, handle), Decision::Hedge);
    }
}
