//! Every hedger preset, any configuration the builder accepts, driven through arbitrary
//! sequences of requests, decisions, outcomes, signals and clock readings (0, the last
//! nanosecond, going back, leaping by years): no panic, and every counter of `Stats`
//! means what its docs say, exactly, against a model that counts the calls.
//!
//! `TAILGUARD_MODEL_CASES` sets the number of property cases (default 96).

use core::time::Duration;

use proptest::prelude::*;
use tailguard::budget::{Budget, RatioBudget};
use tailguard::clock::{Clock, Instant, ManualClock};
use tailguard::deadline::Deadline;
use tailguard::hedge::{
    Attempt, ColdStart, CompactHedger, Decision, Exponential, HedgeConfig, HedgePreset, Hedger,
    IntHedger, McuHedger, SkipReason, Ticket, WindowKind,
};
use tailguard::sketch::presets;

const MS: u64 = 1_000_000;
const SEC: u64 = 1_000 * MS;
const YEAR: u64 = 365 * 86_400 * SEC;

fn cases() -> u32 {
    std::env::var("TAILGUARD_MODEL_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(96)
}

fn duration() -> impl Strategy<Value = Duration> {
    prop_oneof![
        2 => (0u64..50 * MS).prop_map(Duration::from_nanos),
        1 => (0u64..100 * SEC).prop_map(Duration::from_nanos),
        1 => prop_oneof![
            Just(Duration::ZERO),
            Just(Duration::from_nanos(1)),
            Just(Duration::from_nanos(u64::MAX)),
            Just(Duration::MAX),
        ],
    ]
}

/// A configuration at the edges of every knob (the builder may refuse it).
fn config() -> impl Strategy<Value = HedgeConfig> {
    let percentiles = prop_oneof![
        (1e-9f64..1.0).prop_map(|q| vec![q]),
        Just(vec![0.5, 0.99]),
        Just(vec![0.9, 0.9 + 1e-12]),
        Just(vec![f64::MIN_POSITIVE, 1.0 - f64::EPSILON / 2.0]),
    ];
    let delays = (duration(), duration()).prop_map(|(a, b)| (a.min(b), a.max(b)));
    let cold = prop_oneof![
        Just(ColdStart::NoHedge),
        duration().prop_map(ColdStart::Delay)
    ];
    let interval = prop_oneof![
        Just(Duration::from_nanos(8)),
        Just(Duration::from_millis(1)),
        Just(Duration::from_secs(30)),
        Just(Duration::MAX),
    ];
    let budget = (
        prop_oneof![Just(0.0), Just(1e-7), Just(0.1), Just(1.0), Just(1000.0)],
        prop_oneof![Just(1u32), 1u32..20, Just(RatioBudget::MAX_CAP)],
    );
    let back_off = (
        prop_oneof![Just(Duration::ZERO), duration()],
        prop_oneof![Just(1u32), 2u32..4, Just(u32::MAX)],
        duration(),
    );
    (
        percentiles,
        1u8..=2,
        delays,
        cold,
        (prop_oneof![Just(0u32), 0u32..40], interval, any::<bool>()),
        budget,
        back_off,
        proptest::option::of(prop_oneof![Just(1e-9f64), 0.01f64..0.99, Just(0.999_999)]),
    )
        .prop_map(
            |(
                percentiles,
                hedges,
                (min, max),
                cold,
                (min_samples, interval, rotate),
                (ratio, cap),
                (cooldown, factor, max_pushback),
                chance,
            )| {
                let mut config = HedgeConfig::new().with_percentiles(&percentiles);
                if percentiles.len() == 1 {
                    config = config.with_max_hedges(hedges);
                }
                config = config
                    .with_min_delay(min)
                    .with_max_delay(max)
                    .with_cold_start(cold)
                    .with_min_samples(min_samples)
                    .with_interval(interval)
                    .with_rotate_on_record(rotate)
                    .with_budget_ratio(ratio)
                    .with_budget_cap(cap)
                    .with_cooldown(cooldown)
                    .with_backoff_factor(factor)
                    .with_max_pushback(max_pushback);
                match chance {
                    Some(chance) => config.with_on_time_chance(chance),
                    None => config,
                }
            },
        )
}

#[derive(Debug, Clone)]
enum Op {
    /// The clock forward by this many nanoseconds (saturating).
    Forward(u64),
    /// The clock back by this many nanoseconds (saturating).
    Back(u64),
    /// The clock set to this reading.
    Set(u64),
    /// A request, with a deadline (end and target after now) or not.
    Start(Option<(Duration, Duration)>),
    Decide(usize),
    Success(usize, u8),
    Error(usize, u8),
    Exceeded(usize),
    RateLimited,
    RateLimitedFor(Duration),
    Record(Duration),
}

fn op() -> impl Strategy<Value = Op> {
    let idx = 0usize..8;
    prop_oneof![
        6 => (0u64..20 * MS).prop_map(Op::Forward),
        1 => (0u64..20 * YEAR).prop_map(Op::Forward),
        1 => (0u64..60 * SEC).prop_map(Op::Back),
        1 => prop_oneof![
            Just(0u64),
            Just(u64::MAX),
            (u64::MAX - 100 * SEC)..=u64::MAX,
            any::<u64>()
        ]
        .prop_map(Op::Set),
        4 => proptest::option::of((duration(), duration())).prop_map(Op::Start),
        8 => idx.clone().prop_map(Op::Decide),
        3 => (idx.clone(), 0u8..3).prop_map(|(i, a)| Op::Success(i, a)),
        1 => (idx.clone(), 0u8..3).prop_map(|(i, a)| Op::Error(i, a)),
        1 => idx.prop_map(Op::Exceeded),
        1 => Just(Op::RateLimited),
        1 => duration().prop_map(Op::RateLimitedFor),
        3 => duration().prop_map(Op::Record),
    ]
}

fn attempt(a: u8) -> Attempt {
    match a {
        0 => Attempt::Primary,
        n => Attempt::Hedge(n),
    }
}

/// The counters as the docs define them, counted from the calls.
#[derive(Debug, Default)]
struct Model {
    requests: u32,
    hedges: u32,
    hedge_wins: u32,
    primary_wins: u32,
    denied_budget: u32,
    skipped_cold: u32,
    skipped_deadline: u32,
    skipped_backpressure: u32,
    errors: u32,
    rate_limited: u32,
    pushbacks: u32,
    /// Pushbacks longer than `max_pushback`: each is counted as clamped.
    longer_than_max: u32,
    deadline_exceeded: u32,
    unmeasured: u32,
}

/// What a decision must be, by the docs.
#[derive(Debug, Clone, Copy)]
enum Expected {
    /// This decision.
    Exactly(Decision),
    /// The hedge is due: `Hedge` if the budget grants it.
    Due,
    /// Due, or a backup that could not answer by the deadline.
    DueOrTooLate,
    /// A wait of at most this long (never zero), or any of `DueOrTooLate`.
    NoLaterThan(u64),
}

/// The decision for `ticket` at `now`, by the documented rules, where the model can tell:
/// hedge `k` goes out `k` delays after the start (the delay as `delay()` reads it), and
/// at least `min_delay` after the hedge before it; a wait is at most one delay and never
/// zero; with a deadline (and without the on-time rule or a back-off), no hedge whose
/// backup, sent when due, needs the delay past the deadline. `None` for a percentile per
/// hedge past the first hedge, whose own delay the model cannot read, and for the
/// on-time rule.
fn expected(
    config: &HedgeConfig,
    model: &Model,
    ticket: &Ticket,
    delay: Result<Duration, SkipReason>,
    now: Instant,
) -> Option<Expected> {
    let k = ticket.hedges();
    if k >= config.max_hedges() {
        return Some(Expected::Exactly(Decision::Skip(SkipReason::MaxHedges)));
    }
    let d = match delay {
        Ok(d) => u64::try_from(d.as_nanos()).unwrap(),
        Err(reason) => return Some(Expected::Exactly(Decision::Skip(reason))),
    };
    if k > 0 && config.percentiles().len() > 1 {
        return None;
    }
    let start = ticket.start().as_nanos();
    let mut due = start.saturating_add(d.saturating_mul(u64::from(k) + 1));
    if let Some(last) = ticket.hedged_at() {
        let min_delay = u64::try_from(config.min_delay().as_nanos()).unwrap_or(u64::MAX);
        due = due.max(last.as_nanos().saturating_add(min_delay));
    }
    let now = now.as_nanos();
    if let Some(deadline) = ticket.deadline() {
        // Learned: no cold-start delay to read instead of the window's.
        let learned = config.cold_start() == ColdStart::NoHedge;
        if config.on_time_chance().is_some() && learned {
            // The on-time rule: nothing past the deadline; no backup later than the
            // percentile would send it (the first may go earlier); none that no latency
            // in the window could fit once due.
            if now >= deadline.end().as_nanos() {
                return Some(Expected::Exactly(Decision::Skip(SkipReason::Deadline)));
            }
            let wait = due.saturating_sub(now).min(d);
            return Some(match (wait, k) {
                (0, _) => Expected::DueOrTooLate,
                (wait, 0) => Expected::NoLaterThan(wait),
                (wait, _) => Expected::Exactly(Decision::Wait(Duration::from_nanos(wait))),
            });
        }
        if config.on_time_chance().is_some() || model.rate_limited > 0 {
            return None; // a cold start's rule, or a base delay below the raised one
        }
        if due.max(now).saturating_add(d) > deadline.end().as_nanos() {
            return Some(Expected::Exactly(Decision::Skip(SkipReason::Deadline)));
        }
    }
    let wait = due.saturating_sub(now).min(d);
    Some(if wait > 0 {
        Expected::Exactly(Decision::Wait(Duration::from_nanos(wait)))
    } else {
        Expected::Due
    })
}

/// Drives `hedger` through `ops`, checking every promise after every step.
fn drive<M: WindowKind, const N: usize>(
    clock: &ManualClock,
    hedger: &Hedger<&ManualClock, RatioBudget, M, N>,
    ops: &[Op],
) -> Result<(), TestCaseError> {
    let config = hedger.config();
    let mut model = Model::default();
    let mut tickets: Vec<Ticket> = Vec::new();
    // Whether each ticket's primary failed (the ticket keeps it privately).
    let mut failed: Vec<bool> = Vec::new();
    let pick = |tickets: &[Ticket], i: usize| (!tickets.is_empty()).then(|| i % tickets.len());
    for op in ops {
        let now = clock.now().as_nanos();
        match *op {
            Op::Forward(d) => clock.set(Instant::from_nanos(now.saturating_add(d))),
            Op::Back(d) => clock.set(Instant::from_nanos(now.saturating_sub(d))),
            Op::Set(t) => clock.set(Instant::from_nanos(t)),
            Op::Start(deadline) => {
                let ticket = match deadline {
                    Some((end, target)) => {
                        let start = hedger.now();
                        let deadline =
                            Deadline::after(start, end).with_target(start.saturating_add(target));
                        let ticket = hedger.start_with_deadline(deadline);
                        let kept = ticket.deadline().unwrap();
                        let last = Instant::from_nanos(u64::MAX - 1);
                        prop_assert_eq!(kept.end(), deadline.end().min(last));
                        prop_assert_eq!(kept.target(), deadline.target().min(last));
                        ticket
                    }
                    None => {
                        let ticket = hedger.start();
                        prop_assert_eq!(ticket.deadline(), None);
                        ticket
                    }
                };
                prop_assert_eq!(ticket.start(), clock.now());
                prop_assert_eq!((ticket.hedges(), ticket.hedged_at()), (0, None));
                model.requests += 1;
                if tickets.len() < 8 {
                    tickets.push(ticket);
                    failed.push(false);
                } else {
                    tickets[(model.requests as usize) % 8] = ticket;
                    failed[(model.requests as usize) % 8] = false;
                }
            }
            Op::Decide(i) => {
                let Some(i) = pick(&tickets, i) else { continue };
                let before = tickets[i];
                // The delay at this reading (`delay()` maintains the window first, as
                // `start` does; the decision then reads the same cached threshold).
                let delay = hedger.delay();
                let decision = hedger.should_hedge(&mut tickets[i]);
                let after = tickets[i];
                if let Some(want) = expected(&config, &model, &before, delay, clock.now()) {
                    let fits = match (want, decision) {
                        // Whether the budget grants it is the budget's business; a
                        // refusal is back-pressure only after a rate-limit signal.
                        (Expected::Due, Decision::Hedge) => true,
                        (Expected::Due, Decision::Skip(SkipReason::Budget)) => true,
                        (Expected::Due, Decision::Skip(SkipReason::BackPressure)) => {
                            model.rate_limited > 0
                        }
                        (Expected::Exactly(want), got) => want == got,
                        (
                            Expected::DueOrTooLate | Expected::NoLaterThan(_),
                            Decision::Hedge
                            | Decision::Skip(SkipReason::Budget | SkipReason::Deadline),
                        ) => true,
                        (
                            Expected::DueOrTooLate | Expected::NoLaterThan(_),
                            Decision::Skip(SkipReason::BackPressure),
                        ) => model.rate_limited > 0,
                        (Expected::NoLaterThan(most), Decision::Wait(w)) => {
                            !w.is_zero() && w <= Duration::from_nanos(most)
                        }
                        _ => false,
                    };
                    prop_assert!(
                        fits,
                        "{:?}: expected {:?}, decided {:?} (delay {:?}, now {:?}, {:?})",
                        before,
                        want,
                        decision,
                        delay,
                        clock.now(),
                        config
                    );
                }
                match decision {
                    Decision::Hedge => {
                        model.hedges += 1;
                        prop_assert_eq!(after.hedges(), before.hedges() + 1);
                        prop_assert!(after.hedges() <= config.max_hedges());
                        prop_assert_eq!(after.hedged_at(), Some(clock.now()));
                    }
                    other => {
                        prop_assert_eq!(after, before, "only a hedge changes the ticket");
                        match other {
                            Decision::Wait(d) => {
                                prop_assert!(d <= config.max_delay(), "{:?} {:?}", d, config);
                                prop_assert!(!d.is_zero(), "a zero wait: {:?}", config);
                            }
                            Decision::Skip(SkipReason::MaxHedges) => {
                                prop_assert!(before.hedges() >= config.max_hedges());
                            }
                            Decision::Skip(SkipReason::Budget) => model.denied_budget += 1,
                            Decision::Skip(SkipReason::ColdStart) => model.skipped_cold += 1,
                            Decision::Skip(SkipReason::Deadline) => {
                                prop_assert!(before.deadline().is_some());
                                model.skipped_deadline += 1;
                            }
                            Decision::Skip(SkipReason::BackPressure) => {
                                prop_assert!(model.rate_limited > 0);
                                model.skipped_backpressure += 1;
                            }
                            Decision::Skip(reason) => {
                                prop_assert!(false, "an unknown reason {:?}", reason)
                            }
                            Decision::Hedge => unreachable!(),
                        }
                    }
                }
                if decision != Decision::Skip(SkipReason::MaxHedges) {
                    prop_assert!(before.hedges() < config.max_hedges());
                }
            }
            Op::Success(i, a) => {
                let Some(i) = pick(&tickets, i) else { continue };
                let ticket = tickets[i];
                let latency = hedger.on_success(&ticket, attempt(a));
                let elapsed = clock
                    .now()
                    .as_nanos()
                    .checked_sub(ticket.start().as_nanos());
                prop_assert_eq!(latency, Duration::from_nanos(elapsed.unwrap_or(0)));
                if a == 0 {
                    model.primary_wins += 1;
                } else {
                    model.hedge_wins += 1;
                }
                if elapsed.is_none() && !failed[i] {
                    model.unmeasured += 1;
                }
            }
            Op::Error(i, a) => {
                let Some(i) = pick(&tickets, i) else { continue };
                hedger.on_error(&mut tickets[i], attempt(a));
                failed[i] |= a == 0;
                model.errors += 1;
            }
            Op::Exceeded(i) => {
                let Some(i) = pick(&tickets, i) else { continue };
                hedger.on_deadline_exceeded(&tickets[i]);
                model.deadline_exceeded += 1;
            }
            Op::RateLimited => {
                hedger.on_rate_limited();
                model.rate_limited += 1;
                prop_assert_eq!(hedger.budget().balance(), 0.0, "drained");
            }
            Op::RateLimitedFor(d) => {
                let clamped = hedger.stats().pushbacks_clamped;
                hedger.on_rate_limited_for(d);
                model.rate_limited += 1;
                model.pushbacks += 1;
                let counted = hedger.stats().pushbacks_clamped - clamped;
                // Shortened: longer than the maximum, or ending past the clock's last
                // reading (2^64 ns). Beyond 2^48 ns (3.2 days) the cooldown clock's limit
                // of 2^29 ticks may shorten it too; below, nothing else does.
                let past_the_end = now.checked_add(u64::try_from(d.as_nanos()).unwrap_or(u64::MAX));
                if d > config.max_pushback() || past_the_end.is_none() {
                    model.longer_than_max += 1;
                    prop_assert_eq!(counted, 1, "{:?} at {} ns is shortened", d, now);
                } else if d < Duration::from_nanos(1 << 48) {
                    prop_assert_eq!(counted, 0, "{:?} at {} ns is not shortened", d, now);
                }
                prop_assert_eq!(hedger.budget().balance(), 0.0, "drained");
            }
            Op::Record(d) => hedger.record(d),
        }
        let stats = hedger.stats();
        prop_assert_eq!(stats.requests, model.requests);
        prop_assert_eq!(stats.hedges, model.hedges);
        prop_assert_eq!(stats.hedge_wins, model.hedge_wins);
        prop_assert_eq!(stats.primary_wins, model.primary_wins);
        prop_assert_eq!(stats.denied_budget, model.denied_budget);
        prop_assert_eq!(stats.skipped_cold, model.skipped_cold);
        prop_assert_eq!(stats.skipped_deadline, model.skipped_deadline);
        prop_assert_eq!(stats.skipped_backpressure, model.skipped_backpressure);
        prop_assert_eq!(stats.errors, model.errors);
        prop_assert_eq!(stats.rate_limited, model.rate_limited);
        prop_assert_eq!(stats.pushbacks, model.pushbacks);
        prop_assert_eq!(stats.deadline_exceeded, model.deadline_exceeded);
        prop_assert_eq!(stats.unmeasured, model.unmeasured);
        prop_assert!(
            stats.pushbacks_clamped >= model.longer_than_max,
            "every pushback longer than the maximum is counted: {:?}",
            stats
        );
        prop_assert!(stats.pushbacks_clamped <= stats.pushbacks);
        // The hedger's own budget: every hedge is a grant, and every refusal is counted as
        // a budget denial or as back-pressure.
        let budget = hedger.budget();
        prop_assert_eq!(budget.granted(), stats.hedges);
        prop_assert!(budget.denied() >= stats.denied_budget);
        prop_assert!(budget.denied() <= stats.denied_budget + stats.skipped_backpressure);
        match hedger.delay() {
            Ok(d) => {
                // Delays are kept in whole nanoseconds below 2^64 (584 years).
                let most = Duration::from_nanos(u64::MAX);
                prop_assert!(d >= config.min_delay().min(most) && d <= config.max_delay());
                prop_assert_eq!(stats.delay, Some(d));
            }
            Err(SkipReason::ColdStart) => {
                prop_assert_eq!(config.cold_start(), ColdStart::NoHedge);
                prop_assert_eq!(stats.delay, None);
            }
            Err(SkipReason::BackPressure) => {
                prop_assert!(model.pushbacks > 0);
                prop_assert!(config.max_pushback() > Duration::ZERO);
                prop_assert_eq!(stats.delay, None);
            }
            Err(other) => prop_assert!(false, "delay() said {:?}", other),
        }
    }
    Ok(())
}

fn start_clock(start: u64) -> ManualClock {
    ManualClock::starting_at(Instant::from_nanos(start))
}

fn start() -> impl Strategy<Value = u64> {
    prop_oneof![
        Just(0u64),
        0u64..10 * YEAR,
        (u64::MAX - 100 * SEC)..=u64::MAX,
    ]
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    proptest::collection::vec(op(), 1..120)
}

/// A preset unlike the defaults in every field: a hedger keyed by it keeps every other
/// configuration as its XOR with this one's.
struct Odd;
impl HedgePreset for Odd {
    const CONFIG: HedgeConfig = HedgeConfig::new()
        .with_percentiles(&[0.7, 0.95])
        .with_interval(Duration::from_millis(250))
        .with_min_delay(Duration::from_micros(300))
        .with_max_delay(Duration::from_secs(3))
        .with_min_samples(5)
        .with_cold_start(ColdStart::Delay(Duration::from_millis(3)))
        .with_budget_ratio(0.25)
        .with_budget_cap(7)
        .with_cooldown(Duration::from_secs(2))
        .with_backoff_factor(3)
        .with_rotate_on_record(false)
        .with_on_time_chance(0.8)
        .with_max_pushback(Duration::from_secs(10));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn a_cubic_hedger_keeps_every_promise(config in config(), start in start(), ops in ops()) {
        let clock = start_clock(start);
        if let Ok(hedger) = Hedger::new(&clock, config) {
            drive(&clock, &hedger, &ops)?;
        }
    }

    #[test]
    fn an_integer_hedger_keeps_every_promise(config in config(), start in start(), ops in ops()) {
        let clock = start_clock(start);
        let built: Result<IntHedger<_>, _> =
            Hedger::with_layout(&clock, config, presets::INT_LATENCY_LAYOUT);
        if let Ok(hedger) = built {
            drive(&clock, &hedger, &ops)?;
        }
    }

    #[test]
    fn an_mcu_hedger_keeps_every_promise(config in config(), start in start(), ops in ops()) {
        let clock = start_clock(start);
        let built: Result<McuHedger<_>, _> =
            Hedger::with_layout(&clock, config, presets::MCU_LATENCY_LAYOUT);
        if let Ok(hedger) = built {
            drive(&clock, &hedger, &ops)?;
        }
    }

    #[test]
    fn a_compact_hedger_keeps_every_promise(config in config(), start in start(), ops in ops()) {
        let clock = start_clock(start);
        let built: Result<CompactHedger<_>, _> = Hedger::exponential(&clock, config);
        if let Ok(hedger) = built {
            drive(&clock, &hedger, &ops)?;
        }
    }

    #[test]
    fn a_wide_exponential_hedger_keeps_every_promise(
        config in config(),
        start in start(),
        ops in ops(),
    ) {
        let clock = start_clock(start);
        let built: Result<Hedger<_, RatioBudget, Exponential<u32>, 32>, _> =
            Hedger::exponential(&clock, config);
        if let Ok(hedger) = built {
            drive(&clock, &hedger, &ops)?;
        }
    }

    #[test]
    fn a_compact_hedger_keyed_by_another_preset_keeps_every_promise(
        config in config(),
        start in start(),
        ops in ops(),
    ) {
        let clock = start_clock(start);
        let built: Result<Hedger<_, RatioBudget, Exponential<u16, Odd>, 64>, _> =
            Hedger::preset_with_budget(&clock, RatioBudget::default(), Instant::ZERO);
        let mut hedger = built.unwrap();
        let budget = RatioBudget::new(config.budget_ratio(), config.budget_cap());
        if let Ok(budget) = budget {
            if hedger.reset(&clock, config, budget).is_ok() {
                prop_assert_eq!(hedger.config(), config);
                drive(&clock, &hedger, &ops)?;
            }
        }
    }
}
