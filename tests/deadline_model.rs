//! `Deadline` and `StepCutoff::decide` at any instants and durations (0, the last
//! nanosecond, `Duration::MAX`): the arithmetic saturates as documented, a target never
//! passes the end, and every action is the row of the decision table its inputs select.

use core::time::Duration;

use proptest::prelude::*;
use tailguard::clock::Instant;
use tailguard::deadline::{Action, Deadline, StepCutoff, StepProgress};

fn instant() -> impl Strategy<Value = Instant> {
    prop_oneof![
        Just(0u64),
        Just(u64::MAX),
        any::<u64>(),
        0u64..10_000_000_000,
        (u64::MAX - 10_000_000_000)..=u64::MAX,
    ]
    .prop_map(Instant::from_nanos)
}

fn duration() -> impl Strategy<Value = Duration> {
    prop_oneof![
        Just(Duration::ZERO),
        Just(Duration::MAX),
        (0u64..10_000_000_000).prop_map(Duration::from_nanos),
        any::<u64>().prop_map(Duration::from_nanos),
        (any::<u64>(), 0u32..1_000_000_000).prop_map(|(s, n)| Duration::new(s, n)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    /// `after`, `with_target`, `for_step`, `remaining`, `is_expired` and `step_budget` as
    /// their docs say, saturating at the ends of the clock's range.
    #[test]
    fn deadlines_split_and_saturate_as_documented(
        start in instant(),
        budget in duration(),
        target in instant(),
        now in instant(),
        steps in prop_oneof![Just(0u32), Just(1u32), 2u32..10, Just(u32::MAX)],
    ) {
        let deadline = Deadline::after(start, budget);
        let end = start.as_nanos().saturating_add(u64::try_from(budget.as_nanos()).unwrap_or(u64::MAX));
        prop_assert_eq!(deadline.end().as_nanos(), end);
        prop_assert_eq!(deadline.target(), deadline.end());
        let aimed = deadline.with_target(target);
        prop_assert_eq!(aimed.end(), deadline.end());
        prop_assert_eq!(aimed.target(), target.min(deadline.end()));

        let remaining = Duration::from_nanos(end.saturating_sub(now.as_nanos()));
        prop_assert_eq!(deadline.remaining(now), remaining);
        prop_assert_eq!(deadline.is_expired(now), now.as_nanos() >= end);
        prop_assert_eq!(deadline.is_expired(now), remaining.is_zero());
        let share = deadline.step_budget(now, steps);
        prop_assert_eq!(share, remaining / steps.max(1));
        prop_assert!(share <= remaining);
        let step = aimed.for_step(now, steps);
        prop_assert_eq!(step.end(), deadline.end());
        prop_assert!(step.target() <= step.end());
        let want = Instant::from_nanos(
            now.as_nanos().saturating_add(u64::try_from(share.as_nanos()).unwrap()),
        );
        prop_assert_eq!(step.target(), want.min(deadline.end()));
    }

    /// Each action is the decision table's row for its inputs, and a wait never runs past
    /// the deadline.
    #[test]
    fn a_step_decision_is_its_tables_row(
        cutoff in duration(),
        degrade in proptest::option::of(duration()),
        elapsed in duration(),
        first_signal in any::<bool>(),
        expected_rest in proptest::option::of(duration()),
        start in instant(),
        budget in duration(),
        now in instant(),
    ) {
        let step = StepCutoff { cutoff, degrade };
        let progress = StepProgress { elapsed, first_signal, expected_rest };
        let deadline = Deadline::after(start, budget);
        let remaining = deadline.remaining(now);
        let fallback = match degrade {
            Some(faster) if faster <= remaining => Action::Degrade,
            _ => Action::GiveUp,
        };
        let want = if remaining.is_zero() {
            Action::GiveUp
        } else if !first_signal {
            if elapsed < cutoff {
                Action::Wait((cutoff - elapsed).min(remaining))
            } else if remaining >= cutoff {
                Action::Hedge
            } else {
                fallback
            }
        } else {
            match expected_rest {
                None => Action::Wait(remaining),
                Some(rest) if rest <= remaining => Action::Wait(rest),
                Some(_) => fallback,
            }
        };
        let got = step.decide(progress, deadline, now);
        prop_assert_eq!(got, want);
        if let Action::Wait(d) = got {
            prop_assert!(d <= remaining);
            // Zero only when the caller said nothing is left to do.
            prop_assert!(!d.is_zero() || expected_rest == Some(Duration::ZERO));
        }
    }
}
