//! [`race`]: run a request, hedge it when the [`Hedger`] says so, keep the first success.

use core::future::{poll_fn, Future};
use core::pin::{pin, Pin};
use core::task::{Context, Poll};
use core::time::Duration;

use super::{Attempt, Decision, Hedger, Ticket};
use crate::budget::Budget;
use crate::clock::Clock;
use crate::sketch::IndexMapping;

/// The successful result of a [`race`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Winner<T> {
    /// What the winning attempt returned.
    pub value: T,
    /// Which attempt it was.
    pub attempt: Attempt,
    /// The request's latency (start to answer).
    pub latency: Duration,
}

/// Every attempt of a [`race`] failed; this is the last failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct RaceError<E> {
    /// The error of the attempt that failed last.
    pub error: E,
    /// Which attempt that was.
    pub attempt: Attempt,
}

impl<E: core::fmt::Display> core::fmt::Display for RaceError<E> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "every attempt failed; last ({:?}): {}",
            self.attempt, self.error
        )
    }
}

impl<E: core::error::Error> core::error::Error for RaceError<E> {}

/// Runs `primary`; if the hedger decides so, starts `backup()` and returns the first
/// successful answer, dropping (cancelling) the other attempt at once.
///
/// * `sleep(d)` makes a future that completes after `d`: any runtime's timer (tokio's
///   `sleep`, embassy's `Timer::after`), so `race` itself is runtime-agnostic and
///   allocates nothing.
/// * The backup is made only when [`Hedger::should_hedge`] says [`Decision::Hedge`]
///   (the budget token is then spent); `race` sends at most one backup.
/// * If the attempt that finishes first failed and the other is running, `race` waits for
///   the other; if every attempt failed, it returns the last error.
/// * Latency and outcomes are reported to the hedger (the winner's latency, or the
///   primary's elapsed time if it was cancelled; failures as errors).
///
/// ```
/// # fn block_on<F: core::future::Future>(f: F) -> F::Output {
/// #     let mut f = core::pin::pin!(f);
/// #     let mut cx = core::task::Context::from_waker(core::task::Waker::noop());
/// #     loop { if let core::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) { return v; } }
/// # }
/// use core::time::Duration;
/// use tailguard::clock::ManualClock;
/// use tailguard::hedge::{race, Attempt, HedgeConfig, Hedger};
///
/// let clock = ManualClock::new(); // StdClock (feature "std") in a real service
/// let hedger = Hedger::new(&clock, HedgeConfig::new()).unwrap();
/// let sleep = |d: Duration| async move { std::thread::sleep(d) }; // any timer future
/// let won = block_on(race(
///     &hedger,
///     async { Ok::<_, ()>("primary answer") },
///     || async { Ok("backup answer") },
///     sleep,
/// ))
/// .unwrap();
/// assert_eq!((won.value, won.attempt), ("primary answer", Attempt::Primary));
/// ```
pub async fn race<
    C,
    B,
    M,
    const N: usize,
    const SLOTS: usize,
    T,
    E,
    P,
    MakeBackup,
    Backup,
    Sleep,
    S,
>(
    hedger: &Hedger<C, B, M, N, SLOTS>,
    primary: P,
    backup: MakeBackup,
    mut sleep: Sleep,
) -> Result<Winner<T>, RaceError<E>>
where
    C: Clock,
    B: Budget,
    M: IndexMapping,
    P: Future<Output = Result<T, E>>,
    MakeBackup: FnOnce() -> Backup,
    Backup: Future<Output = Result<T, E>>,
    Sleep: FnMut(Duration) -> S,
    S: Future<Output = ()>,
{
    let mut core = RaceCore::new(hedger.start());
    let mut primary = pin!(Some(primary));
    let mut backup_attempt = pin!(None::<Backup>);
    let mut timer = pin!(None::<S>);
    let mut make_backup = Some(backup);
    let classify = |result: &Result<T, E>| match result {
        Ok(_) => Outcome::Success,
        Err(_) => Outcome::Failure,
    };
    let end = poll_fn(|cx| {
        core.poll(
            hedger,
            cx,
            primary.as_mut(),
            &mut [backup_attempt.as_mut()],
            timer.as_mut(),
            &mut sleep,
            || make_backup.take().map(|make| make()),
            classify,
        )
    })
    .await;
    // The classifier makes every success `Ok` and every failure `Err`.
    match end {
        RaceEnd::Won {
            output,
            attempt,
            latency,
        }
        | RaceEnd::Failed {
            output,
            attempt,
            latency,
        } => match output {
            Ok(value) => Ok(Winner {
                value,
                attempt,
                latency,
            }),
            Err(error) => Err(RaceError { error, attempt }),
        },
    }
}

/// How an attempt's result counts for the hedger (the tower layer's policies return it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Outcome {
    /// An answer: it wins the race, the other attempt is cancelled and the latency is
    /// learned.
    Success,
    /// A failure: not a latency. If the other attempt is still running its answer is
    /// awaited; if not, this result is returned as it is.
    Failure,
    /// A failure that signals back-pressure (HTTP 429 or 503, gRPC RESOURCE_EXHAUSTED):
    /// as [`Outcome::Failure`], and the hedger backs off (see
    /// [`Hedger::on_rate_limited`]).
    RateLimited,
}

/// How a race ended.
pub(crate) enum RaceEnd<O> {
    /// `attempt` succeeded with `output` after `latency`; the others were cancelled.
    Won {
        output: O,
        attempt: Attempt,
        latency: Duration,
    },
    /// Every attempt failed; `output` is the last failure, after `latency`.
    Failed {
        output: O,
        attempt: Attempt,
        latency: Duration,
    },
}

/// Drops every attempt still in `slots` (cancels it).
fn cancel_all<F>(slots: &mut [Pin<&mut Option<F>>]) {
    for slot in slots {
        slot.set(None);
    }
}

/// The race's state machine, shared by [`race`] (futures pinned on its stack) and the
/// tower service (futures pinned in its response future). The caller owns the three
/// future slots; `RaceCore` decides when to fill and empty them and reports to the hedger.
pub(crate) struct RaceCore<O> {
    ticket: Ticket,
    /// Consult the hedger on the first poll and whenever the timer fires.
    ask: bool,
    /// The last failed attempt's output, returned if nothing succeeds.
    failure: Option<(O, Attempt)>,
}

impl<O> RaceCore<O> {
    pub(crate) fn new(ticket: Ticket) -> Self {
        RaceCore {
            ticket,
            ask: true,
            failure: None,
        }
    }

    /// Polls the race. `backups` are the slots for backup attempts, one per hedge at
    /// most (so `backups.len()` caps the hedges, with the hedger's `max_hedges`);
    /// `make_backup` is called each time the hedger says hedge; `classify` judges each
    /// attempt's output. Returns once an attempt succeeds or every attempt has failed;
    /// the slots are then empty (losers dropped, i.e. cancelled).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn poll<C, B, M, const N: usize, const SLOTS: usize, P, Bk, S, Sleep>(
        &mut self,
        hedger: &Hedger<C, B, M, N, SLOTS>,
        cx: &mut Context<'_>,
        mut primary: Pin<&mut Option<P>>,
        backups: &mut [Pin<&mut Option<Bk>>],
        mut timer: Pin<&mut Option<S>>,
        sleep: &mut Sleep,
        mut make_backup: impl FnMut() -> Option<Bk>,
        classify: impl Fn(&O) -> Outcome,
    ) -> Poll<RaceEnd<O>>
    where
        C: Clock,
        B: Budget,
        M: IndexMapping,
        P: Future<Output = O>,
        Bk: Future<Output = O>,
        Sleep: FnMut(Duration) -> S,
        S: Future<Output = ()>,
    {
        // Timer firings handled in this poll. A timer that fires before the hedger's
        // clock reaches the due time (another clock, or a broken timer that is always
        // ready) makes the hedger answer `Wait` again; past a couple of rounds, stop
        // looping, poll the attempts and ask to be polled again, so such a timer costs
        // CPU but can never starve the attempts or hang the race.
        let mut timer_rounds = 0u8;
        loop {
            // Ask only while a slot is left: a `Hedge` answer spends a budget token.
            if self.ask && usize::from(self.ticket.hedges()) < backups.len() {
                self.ask = false;
                match hedger.should_hedge(&mut self.ticket) {
                    Decision::Wait(d) => timer.set(Some(sleep(d))),
                    Decision::Hedge => {
                        // The ticket counts this hedge: hedge k goes to slot k - 1.
                        let slot = usize::from(self.ticket.hedges()).saturating_sub(1);
                        if let (Some(slot), Some(attempt)) = (backups.get_mut(slot), make_backup())
                        {
                            slot.set(Some(attempt));
                        }
                        self.ask = true; // the next hedge's time, if there is one
                        continue;
                    }
                    Decision::Skip(_) => {}
                }
            }
            // The timer first: a due hedge starts before we report Pending.
            if let Some(t) = timer.as_mut().as_pin_mut() {
                if t.poll(cx).is_ready() {
                    timer.set(None);
                    self.ask = true;
                    if timer_rounds < 2 {
                        timer_rounds = timer_rounds.saturating_add(1);
                        continue;
                    }
                    cx.waker().wake_by_ref(); // ask again on the next poll
                }
            }
            if let Some(p) = primary.as_mut().as_pin_mut() {
                if let Poll::Ready(output) = p.poll(cx) {
                    primary.set(None);
                    if let Some(end) = self.settle(hedger, output, Attempt::Primary, &classify) {
                        cancel_all(backups); // the losers, at once
                        timer.set(None);
                        return Poll::Ready(end);
                    }
                }
            }
            for (k, slot) in (1u8..).zip(0..backups.len()) {
                let Some(backup) = backups.get_mut(slot) else {
                    continue;
                };
                let Some(b) = backup.as_mut().as_pin_mut() else {
                    continue;
                };
                if let Poll::Ready(output) = b.poll(cx) {
                    backup.set(None);
                    if let Some(end) = self.settle(hedger, output, Attempt::Hedge(k), &classify) {
                        primary.set(None); // the losers, at once
                        cancel_all(backups);
                        timer.set(None);
                        return Poll::Ready(end);
                    }
                }
            }
            if primary.is_none() && backups.iter().all(|b| b.is_none()) {
                // Nothing left to wait for: the last failure is the answer.
                if let Some((output, attempt)) = self.failure.take() {
                    timer.set(None);
                    let latency = hedger.clock_elapsed(&self.ticket);
                    return Poll::Ready(RaceEnd::Failed {
                        output,
                        attempt,
                        latency,
                    });
                }
            }
            return Poll::Pending;
        }
    }

    /// Reports a finished attempt to the hedger: the race's end if it succeeded.
    fn settle<C, B, M, const N: usize, const SLOTS: usize>(
        &mut self,
        hedger: &Hedger<C, B, M, N, SLOTS>,
        output: O,
        attempt: Attempt,
        classify: &impl Fn(&O) -> Outcome,
    ) -> Option<RaceEnd<O>>
    where
        C: Clock,
        B: Budget,
        M: IndexMapping,
    {
        match classify(&output) {
            Outcome::Success => {
                let latency = hedger.on_success(&self.ticket, attempt);
                Some(RaceEnd::Won {
                    output,
                    attempt,
                    latency,
                })
            }
            outcome => {
                if outcome == Outcome::RateLimited {
                    hedger.on_rate_limited();
                }
                hedger.on_error(&mut self.ticket, attempt);
                self.failure = Some((output, attempt));
                None
            }
        }
    }
}

/// [`race`] with embassy-time's `Timer` as the sleep (feature `embassy-time`).
#[cfg(feature = "embassy-time")]
#[cfg_attr(docsrs, doc(cfg(feature = "embassy-time")))]
pub async fn race_embassy<
    C,
    B,
    M,
    const N: usize,
    const SLOTS: usize,
    T,
    E,
    P,
    MakeBackup,
    Backup,
>(
    hedger: &Hedger<C, B, M, N, SLOTS>,
    primary: P,
    backup: MakeBackup,
) -> Result<Winner<T>, RaceError<E>>
where
    C: Clock,
    B: Budget,
    M: IndexMapping,
    P: Future<Output = Result<T, E>>,
    MakeBackup: FnOnce() -> Backup,
    Backup: Future<Output = Result<T, E>>,
{
    let sleep = |d: Duration| {
        let micros = u64::try_from(d.as_micros()).unwrap_or(u64::MAX);
        embassy_time::Timer::after(embassy_time::Duration::from_micros(micros))
    };
    race(hedger, primary, backup, sleep).await
}
