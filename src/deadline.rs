//! Deadlines for multi-step workflows (an LLM pipeline, a chain of calls) and the per-step
//! cut-off decision.
//!
//! A customer-facing workflow must finish within a time window. Waiting on a stuck step
//! is the worst option; what to do instead depends on the cause:
//!
//! * no first signal (first byte, first token) by the step's own p95: the attempt is
//!   stuck, and a fresh one (a hedge) will most likely answer in time;
//! * the signal came but the step will overrun what is left of the deadline: the work is
//!   heavy, so switch to a faster path (degrade);
//! * nothing can finish in time: give up early and tell the caller.
//!
//! [`Deadline`] is the one deadline type of the crate: a step's hedging
//! ([`Hedger::start_with_deadline`], [`race_until`], the tower layer's request
//! extension) and [`StepCutoff::decide`] all take it, so one deadline flows through every
//! step of a workflow. It splits what is left across the remaining steps;
//! [`StepCutoff::decide`] makes the call above.
//!
//! [`Hedger::start_with_deadline`]: crate::hedge::Hedger::start_with_deadline
//! [`race_until`]: crate::hedge::race_until

use core::time::Duration;

use crate::clock::Instant;

/// An absolute deadline: an [`Instant`] on the clock of whoever checks it (the hedger's
/// clock, for hedging).
///
/// ```
/// use core::time::Duration;
/// use tailguard::clock::Instant;
/// use tailguard::deadline::Deadline;
///
/// let start = Instant::from_nanos(0);
/// let deadline = Deadline::after(start, Duration::from_secs(8));
/// let now = start.saturating_add(Duration::from_secs(2));
/// assert_eq!(deadline.remaining(now), Duration::from_secs(6));
/// // Three steps left: two seconds each.
/// assert_eq!(deadline.step_budget(now, 3), Duration::from_secs(2));
/// ```
///
/// A deadline also has a *target*: when the attempts of the current step should answer for
/// the steps after it to fit ([`for_step`](Self::for_step)); the deadline itself unless set.
/// [Deadline-aware hedging](crate::hedge::HedgeConfig::with_on_time_chance) aims at it,
/// while [`race_until`](crate::hedge::race_until) still gives up only at the end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Deadline {
    end: Instant,
    /// At or before `end`.
    target: Instant,
}

impl Deadline {
    /// The deadline `budget` after `start`.
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::clock::Instant;
    /// use tailguard::deadline::Deadline;
    ///
    /// let start = Instant::from_nanos(5_000);
    /// let deadline = Deadline::after(start, Duration::from_micros(10));
    /// assert_eq!(deadline.end().as_nanos(), 15_000);
    /// assert_eq!(deadline.target(), deadline.end()); // no target of its own yet
    /// assert_eq!(Deadline::after(start, Duration::MAX).end().as_nanos(), u64::MAX); // saturates
    /// ```
    pub const fn after(start: Instant, budget: Duration) -> Self {
        Deadline::at(start.saturating_add(budget))
    }

    /// The deadline at `end`.
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::clock::Instant;
    /// use tailguard::deadline::Deadline;
    ///
    /// let end = Instant::from_nanos(2_000_000);
    /// let deadline = Deadline::at(end);
    /// assert_eq!((deadline.end(), deadline.target()), (end, end));
    /// assert_eq!(deadline, Deadline::after(Instant::ZERO, Duration::from_millis(2)));
    /// ```
    pub const fn at(end: Instant) -> Self {
        Deadline { end, target: end }
    }

    /// The same deadline, with `target` as the time the current step aims to answer by
    /// (kept at or before the end).
    ///
    /// ```
    /// use tailguard::clock::Instant;
    /// use tailguard::deadline::Deadline;
    ///
    /// let deadline = Deadline::at(Instant::from_nanos(10_000));
    /// let aimed = deadline.with_target(Instant::from_nanos(4_000));
    /// assert_eq!(aimed.target(), Instant::from_nanos(4_000));
    /// assert_eq!(aimed.end(), deadline.end()); // the end does not move
    /// // A target past the end is kept at the end.
    /// assert_eq!(deadline.with_target(Instant::from_nanos(99_000)).target(), deadline.end());
    /// ```
    pub const fn with_target(self, target: Instant) -> Self {
        let target = if target.as_nanos() < self.end.as_nanos() {
            target
        } else {
            self.end
        };
        Deadline {
            end: self.end,
            target,
        }
    }

    /// The same deadline, aiming the next of `steps_left` steps at its even share of the
    /// time left ([`step_budget`](Self::step_budget)): a step that takes longer leaves the
    /// later ones less than theirs, though the workflow may still make its deadline.
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::clock::Instant;
    /// use tailguard::deadline::Deadline;
    ///
    /// let start = Instant::from_nanos(0);
    /// let deadline = Deadline::after(start, Duration::from_secs(8));
    /// // The first of five steps aims at 1.6 s; the deadline is still 8 s.
    /// let step = deadline.for_step(start, 5);
    /// assert_eq!(step.target(), start.saturating_add(Duration::from_millis(1600)));
    /// assert_eq!(step.end(), deadline.end());
    /// ```
    pub fn for_step(&self, now: Instant, steps_left: u32) -> Self {
        self.with_target(now.saturating_add(self.step_budget(now, steps_left)))
    }

    /// When the current step aims to answer: the end unless
    /// [`with_target`](Self::with_target) or [`for_step`](Self::for_step) set it.
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::clock::Instant;
    /// use tailguard::deadline::Deadline;
    ///
    /// let start = Instant::ZERO;
    /// let deadline = Deadline::after(start, Duration::from_secs(3));
    /// assert_eq!(deadline.target(), deadline.end());
    /// let first_of_three = deadline.for_step(start, 3);
    /// assert_eq!(first_of_three.target(), start.saturating_add(Duration::from_secs(1)));
    /// ```
    pub const fn target(&self) -> Instant {
        self.target
    }

    /// When it ends.
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::clock::Instant;
    /// use tailguard::deadline::Deadline;
    ///
    /// let deadline = Deadline::after(Instant::from_nanos(1_000), Duration::from_nanos(500));
    /// assert_eq!(deadline.end(), Instant::from_nanos(1_500));
    /// // A target does not move it.
    /// assert_eq!(deadline.with_target(Instant::from_nanos(1_200)).end(), Instant::from_nanos(1_500));
    /// ```
    pub const fn end(&self) -> Instant {
        self.end
    }

    /// Time left at `now` (zero once passed).
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::clock::Instant;
    /// use tailguard::deadline::Deadline;
    ///
    /// let deadline = Deadline::after(Instant::ZERO, Duration::from_millis(100));
    /// let at = |ms| Instant::ZERO.saturating_add(Duration::from_millis(ms));
    /// assert_eq!(deadline.remaining(at(30)), Duration::from_millis(70));
    /// assert_eq!(deadline.remaining(at(250)), Duration::ZERO);
    /// ```
    pub const fn remaining(&self, now: Instant) -> Duration {
        self.end.duration_since(now)
    }

    /// Whether it has passed at `now`.
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::clock::Instant;
    /// use tailguard::deadline::Deadline;
    ///
    /// let deadline = Deadline::after(Instant::ZERO, Duration::from_millis(100));
    /// let at = |ms| Instant::ZERO.saturating_add(Duration::from_millis(ms));
    /// assert!(!deadline.is_expired(at(99)));
    /// assert!(deadline.is_expired(at(100))); // at the end itself
    /// assert!(deadline.is_expired(at(250)));
    /// ```
    pub fn is_expired(&self, now: Instant) -> bool {
        now >= self.end
    }

    /// An even share of the time left for the next of `steps_left` steps (all of it for
    /// one step or zero steps).
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::clock::Instant;
    /// use tailguard::deadline::Deadline;
    ///
    /// let deadline = Deadline::after(Instant::ZERO, Duration::from_secs(9));
    /// assert_eq!(deadline.step_budget(Instant::ZERO, 3), Duration::from_secs(3));
    /// assert_eq!(deadline.step_budget(Instant::ZERO, 0), Duration::from_secs(9));
    /// let six_in = Instant::ZERO.saturating_add(Duration::from_secs(6));
    /// assert_eq!(deadline.step_budget(six_in, 2), Duration::from_millis(1500));
    /// let late = Instant::ZERO.saturating_add(Duration::from_secs(10));
    /// assert_eq!(deadline.step_budget(late, 2), Duration::ZERO);
    /// ```
    pub fn step_budget(&self, now: Instant, steps_left: u32) -> Duration {
        self.remaining(now)
            .checked_div(steps_left.max(1))
            .unwrap_or(Duration::ZERO)
    }
}

/// What to do about a running step.
///
/// ```
/// use core::time::Duration;
/// use tailguard::clock::Instant;
/// use tailguard::deadline::{Action, Deadline, StepCutoff, StepProgress};
///
/// let step = StepCutoff { cutoff: Duration::from_millis(500), degrade: None };
/// let now = Instant::ZERO;
/// let deadline = Deadline::after(now, Duration::from_secs(2));
/// let early = StepProgress { elapsed: Duration::from_millis(200), first_signal: false, expected_rest: None };
/// // No signal yet, before the cutoff: decide again when the cutoff comes.
/// assert_eq!(step.decide(early, deadline, now), Action::Wait(Duration::from_millis(300)));
/// let stuck = StepProgress { elapsed: Duration::from_millis(500), ..early };
/// assert_eq!(step.decide(stuck, deadline, now), Action::Hedge);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Action {
    /// Keep waiting, and decide again after this long.
    Wait(Duration),
    /// The attempt looks stuck and a fresh one fits: race a second attempt.
    Hedge,
    /// Switch to the faster path.
    Degrade,
    /// Nothing can finish in time: stop and report.
    GiveUp,
}

/// A running step, as [`StepCutoff::decide`] needs to see it.
///
/// ```
/// use core::time::Duration;
/// use tailguard::clock::Instant;
/// use tailguard::deadline::{Action, Deadline, StepCutoff, StepProgress};
///
/// let step = StepCutoff { cutoff: Duration::from_millis(950), degrade: Some(Duration::from_millis(400)) };
/// let now = Instant::ZERO;
/// let deadline = Deadline::after(now, Duration::from_secs(2));
/// // The first token came; at its rate the rest takes 1.5 s, which fits.
/// let streaming = StepProgress {
///     elapsed: Duration::from_millis(300),
///     first_signal: true,
///     expected_rest: Some(Duration::from_millis(1500)),
/// };
/// assert_eq!(step.decide(streaming, deadline, now), Action::Wait(Duration::from_millis(1500)));
/// // 3 s would not: switch to the faster path.
/// let heavy = StepProgress { expected_rest: Some(Duration::from_secs(3)), ..streaming };
/// assert_eq!(step.decide(heavy, deadline, now), Action::Degrade);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct StepProgress {
    /// Time since the step started.
    pub elapsed: Duration,
    /// Whether its first signal (first byte, first token) has arrived.
    pub first_signal: bool,
    /// Once the signal came, the expected time still needed (from the token rate, say),
    /// if known.
    pub expected_rest: Option<Duration>,
}

/// The cut-off policy of one step.
///
/// ```
/// use core::time::Duration;
/// use tailguard::deadline::{Action, StepCutoff, StepProgress};
///
/// use tailguard::clock::Instant;
/// use tailguard::deadline::Deadline;
///
/// let step = StepCutoff {
///     cutoff: Duration::from_millis(950),            // this step's p95, from its window
///     degrade: Some(Duration::from_millis(400)),     // the faster model's typical time
/// };
/// let stuck = StepProgress { elapsed: Duration::from_secs(1), first_signal: false, expected_rest: None };
/// let now = Instant::from_nanos(0);
/// let within = |ms| Deadline::after(now, Duration::from_millis(ms));
/// assert_eq!(step.decide(stuck, within(5_000), now), Action::Hedge);
/// assert_eq!(step.decide(stuck, within(600), now), Action::Degrade);
/// assert_eq!(step.decide(stuck, within(300), now), Action::GiveUp);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct StepCutoff {
    /// No first signal by then means stuck: the step's own p95 (a [`Hedger`]'s delay at
    /// percentile 0.95, or a window's cached quantile).
    ///
    /// [`Hedger`]: crate::hedge::Hedger
    pub cutoff: Duration,
    /// How long the faster path takes, if there is one.
    pub degrade: Option<Duration>,
}

impl StepCutoff {
    /// The action at `now` for a step in `progress`, in a workflow due by `deadline`.
    ///
    /// | state | condition | action |
    /// |---|---|---|
    /// | any | nothing left | `GiveUp` |
    /// | no signal, before the cutoff | | `Wait` until the cutoff (or the deadline) |
    /// | no signal, past the cutoff | a fresh attempt fits (`remaining >= cutoff`) | `Hedge` |
    /// | signal, will finish in time | `expected_rest <= remaining` (or unknown) | `Wait` |
    /// | otherwise | the faster path fits | `Degrade` |
    /// | otherwise | | `GiveUp` |
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::clock::Instant;
    /// use tailguard::deadline::{Action, Deadline, StepCutoff, StepProgress};
    ///
    /// let step = StepCutoff { cutoff: Duration::from_millis(950), degrade: None };
    /// let now = Instant::ZERO;
    /// let deadline = Deadline::after(now, Duration::from_millis(500));
    /// let waiting = StepProgress { elapsed: Duration::from_millis(100), first_signal: false, expected_rest: None };
    /// // Before the cutoff: wait for it, but not past the deadline.
    /// assert_eq!(step.decide(waiting, deadline, now), Action::Wait(Duration::from_millis(500)));
    /// // Past the cutoff, a fresh attempt (950 ms) does not fit in 500 ms, and there is no
    /// // faster path.
    /// let stuck = StepProgress { elapsed: Duration::from_secs(1), ..waiting };
    /// assert_eq!(step.decide(stuck, deadline, now), Action::GiveUp);
    /// let later = now.saturating_add(Duration::from_millis(500));
    /// assert_eq!(step.decide(waiting, deadline, later), Action::GiveUp); // nothing left
    /// ```
    pub fn decide(&self, progress: StepProgress, deadline: Deadline, now: Instant) -> Action {
        let remaining = deadline.remaining(now);
        if remaining.is_zero() {
            return Action::GiveUp;
        }
        if !progress.first_signal {
            if progress.elapsed < self.cutoff {
                return Action::Wait(self.cutoff.saturating_sub(progress.elapsed).min(remaining));
            }
            if remaining >= self.cutoff {
                return Action::Hedge;
            }
        } else {
            match progress.expected_rest {
                None => return Action::Wait(remaining),
                Some(rest) if rest <= remaining => return Action::Wait(rest),
                Some(_) => {}
            }
        }
        match self.degrade {
            Some(faster) if faster <= remaining => Action::Degrade,
            _ => Action::GiveUp,
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn every_branch_of_the_step_decision() {
        let with_fallback = StepCutoff {
            cutoff: 950 * MS,
            degrade: Some(400 * MS),
        };
        let without = StepCutoff {
            cutoff: 950 * MS,
            degrade: None,
        };
        let p = |elapsed: u32, first_signal: bool, rest: Option<u32>| StepProgress {
            elapsed: elapsed * MS,
            first_signal,
            expected_rest: rest.map(|r| r * MS),
        };
        #[rustfmt::skip]
        let table = [
            // (policy, progress, remaining ms, expected)
            (with_fallback, p(100, false, None), 0, Action::GiveUp),
            (with_fallback, p(100, false, None), 5000, Action::Wait(850 * MS)),
            (with_fallback, p(100, false, None), 500, Action::Wait(500 * MS)),
            (with_fallback, p(950, false, None), 5000, Action::Hedge),
            (with_fallback, p(2000, false, None), 950, Action::Hedge),
            (with_fallback, p(2000, false, None), 949, Action::Degrade),
            (without, p(2000, false, None), 949, Action::GiveUp),
            (with_fallback, p(2000, false, None), 399, Action::GiveUp),
            (with_fallback, p(300, true, None), 5000, Action::Wait(5000 * MS)),
            (with_fallback, p(300, true, Some(700)), 5000, Action::Wait(700 * MS)),
            (with_fallback, p(300, true, Some(700)), 700, Action::Wait(700 * MS)),
            (with_fallback, p(300, true, Some(7000)), 5000, Action::Degrade),
            (without, p(300, true, Some(7000)), 5000, Action::GiveUp),
            (with_fallback, p(3000, true, Some(10)), 5, Action::GiveUp),
            (with_fallback, p(3000, true, Some(1000)), 500, Action::Degrade),
        ];
        for (i, (policy, progress, remaining, want)) in table.into_iter().enumerate() {
            let now = Instant::from_nanos(7);
            let deadline = Deadline::after(now, remaining * MS);
            assert_eq!(policy.decide(progress, deadline, now), want, "row {i}");
        }
    }

    #[test]
    fn deadlines_split_and_saturate() {
        let start = Instant::from_nanos(1_000);
        let d = Deadline::after(start, 9 * MS);
        assert_eq!(d.step_budget(start, 3), 3 * MS);
        assert_eq!(d.step_budget(start, 0), 9 * MS);
        let late = start.saturating_add(20 * MS);
        assert!(d.is_expired(late));
        assert_eq!(d.remaining(late), Duration::ZERO);
        assert_eq!(d.step_budget(late, 2), Duration::ZERO);
        assert_eq!(
            Deadline::after(Instant::from_nanos(u64::MAX), MS).end(),
            Instant::from_nanos(u64::MAX)
        );
        assert_eq!(Deadline::at(start).end(), start);
    }
}
