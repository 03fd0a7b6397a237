//! [`race`]: run a request, hedge it when the hedger says so, keep the first success.

use core::future::{poll_fn, Future};
use core::pin::{pin, Pin};
use core::task::{Context, Poll};
use core::time::Duration;

use super::{Attempt, Decision, HedgePolicy, Ticket, MAX_HEDGES};
use crate::deadline::Deadline;

/// The successful result of a [`race`].
///
/// ```
/// # fn block_on<F: core::future::Future>(f: F) -> F::Output {
/// #     let mut f = core::pin::pin!(f);
/// #     let mut cx = core::task::Context::from_waker(core::task::Waker::noop());
/// #     loop { if let core::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) { return v; } }
/// # }
/// use core::time::Duration;
/// use tailguard::clock::ManualClock;
/// use tailguard::hedge::{race, Attempt, HedgeConfig, Hedger, Winner};
///
/// let clock = ManualClock::new();
/// let hedger = Hedger::new(&clock, HedgeConfig::new()).unwrap();
/// let primary = async {
///     clock.advance(Duration::from_millis(7)); // the request takes 7 ms
///     Ok::<_, ()>(42)
/// };
/// let no_sleep = |_: Duration| async {};
/// let won = block_on(race(&hedger, primary, || async { Ok(0) }, no_sleep)).unwrap();
/// let expected = Winner { value: 42, attempt: Attempt::Primary, latency: Duration::from_millis(7) };
/// assert_eq!(won, expected);
/// assert_eq!(hedger.window().count(), 1); // the latency was learned
/// ```
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

/// Why a [`race`] returned no answer.
///
/// ```
/// # fn block_on<F: core::future::Future>(f: F) -> F::Output {
/// #     let mut f = core::pin::pin!(f);
/// #     let mut cx = core::task::Context::from_waker(core::task::Waker::noop());
/// #     loop { if let core::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) { return v; } }
/// # }
/// use core::time::Duration;
/// use tailguard::clock::ManualClock;
/// use tailguard::deadline::Deadline;
/// use tailguard::hedge::{race, race_until, Attempt, HedgeConfig, Hedger, RaceError};
///
/// let clock = ManualClock::new();
/// let hedger = Hedger::new(&clock, HedgeConfig::new()).unwrap();
/// let no_sleep = |_: Duration| async {};
/// // The only attempt (no backup during the cold start) fails: its error is returned.
/// let failed = async { Err::<u32, _>("connection refused") };
/// let err = block_on(race(&hedger, failed, || async { Ok(0) }, no_sleep)).unwrap_err();
/// assert_eq!(err, RaceError::Failed { error: "connection refused", attempt: Attempt::Primary });
/// assert_eq!(err.to_string(), "every attempt failed; last (Primary): connection refused");
/// // A deadline already past: the attempts are dropped.
/// let past = Deadline::after(hedger.now(), Duration::ZERO);
/// let never = core::future::pending::<Result<u32, &str>>();
/// let err = block_on(race_until(&hedger, past, never, || async { Ok(0) }, no_sleep));
/// assert_eq!(err, Err(RaceError::DeadlineExceeded));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum RaceError<E> {
    /// Every attempt failed; this is the one that failed last.
    Failed {
        /// Its error.
        error: E,
        /// Which attempt it was.
        attempt: Attempt,
    },
    /// The [`race_until`] deadline passed before any attempt answered; the attempts were
    /// dropped (cancelled).
    DeadlineExceeded,
}

impl<E: core::fmt::Display> core::fmt::Display for RaceError<E> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            RaceError::Failed { error, attempt } => {
                write!(f, "every attempt failed; last ({attempt:?}): {error}")
            }
            RaceError::DeadlineExceeded => f.write_str("deadline exceeded before any answer"),
        }
    }
}

impl<E: core::error::Error> core::error::Error for RaceError<E> {}

/// A timer: makes a future that completes after a given time.
///
/// Implemented by every `FnMut(Duration) -> impl Future<Output = ()>`, so any runtime's
/// sleep works as it is: `tokio::time::sleep`, embassy's `Timer::after` (wrapped to
/// convert the duration), or a closure over a test clock.
///
/// ```
/// use core::future::{ready, Ready};
/// use core::time::Duration;
/// use tailguard::hedge::Sleep;
///
/// // A timer of one's own: here one that records the waits it is asked for and completes
/// // at once (a test double; a firmware timer would complete at the interrupt).
/// struct Recording(Vec<Duration>);
/// impl Sleep for Recording {
///     type Future = Ready<()>;
///     fn sleep(&mut self, duration: Duration) -> Ready<()> {
///         self.0.push(duration);
///         ready(())
///     }
/// }
/// let mut timer = Recording(Vec::new());
/// let _ = timer.sleep(Duration::from_millis(5));
/// assert_eq!(timer.0, [Duration::from_millis(5)]);
///
/// // Any `FnMut(Duration) -> impl Future<Output = ()>` is one as it is.
/// fn takes_sleep(mut s: impl Sleep) -> impl core::future::Future<Output = ()> {
///     s.sleep(Duration::from_millis(1))
/// }
/// let _future = takes_sleep(|d: Duration| async move { std::thread::sleep(d) });
/// ```
pub trait Sleep {
    /// The future that completes after the time.
    type Future: Future<Output = ()>;

    /// A future that completes after `duration`.
    fn sleep(&mut self, duration: Duration) -> Self::Future;
}

impl<F, S> Sleep for F
where
    F: FnMut(Duration) -> S,
    S: Future<Output = ()>,
{
    type Future = S;

    fn sleep(&mut self, duration: Duration) -> S {
        self(duration)
    }
}

/// Runs `primary`; if the hedger decides so, starts a backup from `backup()` (up to the
/// hedger's `max_hedges` of them, and never more than [`MAX_HEDGES`] whatever a custom
/// [`HedgePolicy`] answers) and returns the first successful answer, dropping
/// (cancelling) the other attempts at once.
///
/// * `hedger` is any hedger ([`HedgePolicy`]): a `&Hedger`, an `Arc`, a `&dyn`.
/// * `sleep(d)` makes a future that completes after `d` ([`Sleep`]): any runtime's timer,
///   so `race` itself is runtime-agnostic and allocates nothing.
/// * A backup is made only when the hedger says [`Decision::Hedge`] (its budget token is
///   then spent); hedge `k` is sent `k` delays after the start. The first decision comes
///   in the first poll, after the primary's: a primary answered there needs none. Every
///   decision comes after the running attempts are polled: one found answered in the poll
///   its timer fires wins with no backup made, and a primary found failed then, with
///   nothing else running, is the answer.
/// * If an attempt fails while another is running, `race` waits for the other; if every
///   attempt failed, it returns the last error.
/// * Latency and outcomes are reported to the hedger (the winner's latency, or the
///   primary's elapsed time if it was cancelled; failures as errors).
/// * A `race` dropped before any answer (an outer timeout, say) reports nothing: the
///   request is counted in [`Stats::requests`](super::Stats::requests) and in no outcome,
///   and its latency is not learned, so requests cut that way never raise the delay.
///   [`race_until`] ends at a deadline it counts
///   ([`Stats::deadline_exceeded`](super::Stats::deadline_exceeded)); put the timeout
///   there rather than around the race.
///
/// [`race_until`] does the same within a [`Deadline`].
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
pub async fn race<T, E, Bk>(
    hedger: &(impl HedgePolicy + ?Sized),
    primary: impl Future<Output = Result<T, E>>,
    backup: impl FnMut() -> Bk,
    sleep: impl Sleep,
) -> Result<Winner<T>, RaceError<E>>
where
    Bk: Future<Output = Result<T, E>>,
{
    run(hedger, hedger.start(), None, primary, backup, sleep).await
}

/// [`race`] within `deadline` (on the hedger's clock): no backup is sent that could not
/// answer in time, and once the deadline passes with no answer every attempt is dropped
/// (cancelled) and [`RaceError::DeadlineExceeded`] returned, so work that can no longer
/// help the caller stops. An answer that is ready when the deadline is checked still wins.
///
/// One [`Deadline`] flows through the steps of a workflow:
///
/// ```
/// # fn block_on<F: core::future::Future>(f: F) -> F::Output {
/// #     let mut f = core::pin::pin!(f);
/// #     let mut cx = core::task::Context::from_waker(core::task::Waker::noop());
/// #     loop { if let core::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) { return v; } }
/// # }
/// use core::future::pending;
/// use core::time::Duration;
/// use tailguard::clock::{Clock, ManualClock};
/// use tailguard::deadline::Deadline;
/// use tailguard::hedge::{race_until, HedgeConfig, Hedger, RaceError};
///
/// let clock = &ManualClock::new();
/// let hedger = Hedger::new(clock, HedgeConfig::new()).unwrap();
/// let sleep = |d: Duration| async move { clock.advance(d) }; // a timer on the test clock
/// let deadline = Deadline::after(clock.now(), Duration::from_millis(100));
///
/// // Step 1 answers at once.
/// let step = block_on(race_until(&hedger, deadline, async { Ok::<_, ()>(1) }, || async { Ok(1) }, sleep));
/// assert_eq!(step.unwrap().value, 1);
/// // Step 2 hangs: at the deadline its attempts are dropped.
/// let step = block_on(race_until(&hedger, deadline, pending::<Result<u8, ()>>(), pending, sleep));
/// assert_eq!(step, Err(RaceError::DeadlineExceeded));
/// assert_eq!(clock.now(), deadline.end());
/// // Step 3 starts nothing.
/// let mut started = false;
/// let step = block_on(race_until(&hedger, deadline, async { started = true; Ok::<_, ()>(3) }, || async { Ok(3) }, sleep));
/// assert_eq!((step, started), (Err(RaceError::DeadlineExceeded), false));
/// assert_eq!(hedger.stats().deadline_exceeded, 2);
/// ```
pub async fn race_until<T, E, Bk>(
    hedger: &(impl HedgePolicy + ?Sized),
    deadline: Deadline,
    primary: impl Future<Output = Result<T, E>>,
    backup: impl FnMut() -> Bk,
    sleep: impl Sleep,
) -> Result<Winner<T>, RaceError<E>>
where
    Bk: Future<Output = Result<T, E>>,
{
    let ticket = hedger.start_with_deadline(deadline);
    run(hedger, ticket, Some(deadline), primary, backup, sleep).await
}

/// The race of [`race`] and [`race_until`], given after its start; `deadline`: give up
/// then.
async fn run<T, E, Bk, Sl: Sleep>(
    hedger: &(impl HedgePolicy + ?Sized),
    ticket: Ticket,
    deadline: Option<Deadline>,
    primary: impl Future<Output = Result<T, E>>,
    mut backup: impl FnMut() -> Bk,
    mut sleep: Sl,
) -> Result<Winner<T>, RaceError<E>>
where
    Bk: Future<Output = Result<T, E>>,
{
    let mut core = RaceCore::new(ticket);
    if deadline.is_some_and(|d| d.is_expired(hedger.now())) {
        // Nothing is started: the caller can no longer use an answer.
        hedger.on_deadline_exceeded(&ticket);
        return Err(RaceError::DeadlineExceeded);
    }
    let mut primary = pin!(Some(primary));
    let mut first_backup = pin!(None::<Bk>);
    let mut second_backup = pin!(None::<Bk>);
    let mut timer = pin!(None::<Sl::Future>);
    let mut deadline_timer = pin!(None::<Sl::Future>);
    let classify = |result: &Result<T, E>| match result {
        Ok(_) => Outcome::Success,
        Err(_) => Outcome::Failure,
    };
    let end = poll_fn(|cx| {
        let slots = Slots {
            primary: primary.as_mut(),
            backups: [first_backup.as_mut(), second_backup.as_mut()],
            timer: timer.as_mut(),
        };
        if let Poll::Ready(end) = core.poll(
            hedger,
            cx,
            slots,
            &mut sleep,
            || Some((backup(), false)),
            classify,
        ) {
            return Poll::Ready(Some(end));
        }
        let Some(deadline) = deadline else {
            return Poll::Pending;
        };
        let now = hedger.now();
        if deadline.is_expired(now) {
            return Poll::Ready(None);
        }
        if deadline_timer.is_none() {
            deadline_timer.set(Some(sleep.sleep(deadline.remaining(now))));
        }
        if let Some(t) = deadline_timer.as_mut().as_pin_mut() {
            if t.poll(cx).is_ready() {
                // Early by the hedger's clock (another clock, a coarse timer): check again
                // on the next poll, with a fresh timer.
                deadline_timer.set(None);
                cx.waker().wake_by_ref();
            }
        }
        Poll::Pending
    })
    .await;
    let Some(end) = end else {
        // The attempts go with this function's frame: dropped, i.e. cancelled.
        hedger.on_deadline_exceeded(core.ticket());
        return Err(RaceError::DeadlineExceeded);
    };
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
            Err(error) => Err(RaceError::Failed { error, attempt }),
        },
    }
}

/// How an attempt's result counts for the hedger (the tower layer's policies return it).
///
/// ```
/// use core::time::Duration;
/// use tailguard::hedge::Outcome;
///
/// /// How a client of some RPC protocol might judge its results (the tower layer's
/// /// `RequestPolicy::classify` returns this).
/// fn classify(status: u16, retry_after_secs: Option<u64>) -> Outcome {
///     match (status, retry_after_secs) {
///         (429 | 503, Some(secs)) => Outcome::RateLimitedFor(Duration::from_secs(secs)),
///         (429 | 503, None) => Outcome::RateLimited,
///         (500..=599, _) => Outcome::Failure,
///         _ => Outcome::Success,
///     }
/// }
/// assert_eq!(classify(200, None), Outcome::Success);
/// assert_eq!(classify(404, None), Outcome::Success); // an answer, if not a welcome one
/// assert_eq!(classify(502, None), Outcome::Failure);
/// assert_eq!(classify(429, Some(2)), Outcome::RateLimitedFor(Duration::from_secs(2)));
/// ```
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
    /// [`Hedger::on_rate_limited`](super::Hedger::on_rate_limited)).
    RateLimited,
    /// Back-pressure with the server's delay (`Retry-After`, `grpc-retry-pushback-ms`): as
    /// [`Outcome::RateLimited`], and no hedge for that long (see
    /// [`Hedger::on_rate_limited_for`](super::Hedger::on_rate_limited_for)).
    RateLimitedFor(Duration),
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

/// The future slots of one race, pinned where its driver keeps them: on the stack of
/// [`race`], in the tower layer's response future.
pub(crate) struct Slots<'a, P, Bk, T> {
    pub(crate) primary: Pin<&'a mut Option<P>>,
    /// Hedge `k` runs in `backups[k - 1]`.
    pub(crate) backups: [Pin<&'a mut Option<Bk>>; MAX_HEDGES as usize],
    /// The timer of the next hedge.
    pub(crate) timer: Pin<&'a mut Option<T>>,
}

impl<P, Bk, T> Slots<'_, P, Bk, T> {
    /// Drops every attempt and the timer: the losers are cancelled at once.
    fn clear(&mut self) {
        self.primary.set(None);
        for backup in &mut self.backups {
            backup.set(None);
        }
        self.timer.set(None);
    }
}

/// The race's state machine, shared by [`race`] (futures pinned on its stack) and the
/// tower service (futures pinned in its response future). The caller owns the future
/// slots; `RaceCore` decides when to fill and empty them and reports to the hedger.
pub(crate) struct RaceCore<O> {
    ticket: Ticket,
    /// Consult the hedger on the first poll (after the primary's first poll) and whenever
    /// the timer fires.
    ask: bool,
    /// The primary has had its first poll.
    primary_polled: bool,
    /// The hedger said skip (or the request has all its hedges): never ask again.
    done_asking: bool,
    /// Backups started: hedge `k` runs in slot `k - 1`.
    backups: u8,
    /// The last failed attempt's output, returned if nothing succeeds.
    failure: Option<(O, Attempt)>,
}

impl<O> RaceCore<O> {
    pub(crate) fn new(ticket: Ticket) -> Self {
        RaceCore {
            ticket,
            ask: true,
            primary_polled: false,
            done_asking: false,
            backups: 0,
            failure: None,
        }
    }

    pub(crate) fn ticket(&self) -> &Ticket {
        &self.ticket
    }

    /// Backups started so far.
    #[cfg(feature = "tower")]
    pub(crate) fn backups(&self) -> u8 {
        self.backups
    }

    /// Polls the race. `make_backup` is called each time the hedger says hedge: the backup
    /// and whether it is the last copy the request can make (the hedger is then not asked
    /// again: a hedge it granted could not be sent, yet would be counted and paid for);
    /// `None` if there is none. `classify` judges each attempt's output.
    /// Returns once an attempt succeeds or every attempt has failed; the slots are then
    /// empty (losers dropped, i.e. cancelled).
    pub(crate) fn poll<P, Bk, Sl>(
        &mut self,
        hedger: &(impl HedgePolicy + ?Sized),
        cx: &mut Context<'_>,
        mut slots: Slots<'_, P, Bk, Sl::Future>,
        sleep: &mut Sl,
        mut make_backup: impl FnMut() -> Option<(Bk, bool)>,
        classify: impl Fn(&O) -> Outcome,
    ) -> Poll<RaceEnd<O>>
    where
        P: Future<Output = O>,
        Bk: Future<Output = O>,
        Sl: Sleep,
    {
        // Timer firings handled in this poll. A timer that fires before the hedger's
        // clock reaches the due time (another clock, or a broken timer that is always
        // ready) makes the hedger answer `Wait` again; past a couple of rounds, stop
        // looping and ask to be polled again, so such a timer costs CPU but can never
        // starve the attempts or hang the race.
        let mut timer_rounds = 0u8;
        // Whether the attempts were polled since the last change (a backup started): they
        // are polled before every decision, so that an attempt found finished in the poll
        // its timer fires (a busy executor, a coarse timer: both wake-ups in one batch) is
        // seen first. An answer then wins with no backup made, counted or paid for, and a
        // primary's failure with nothing else running is the answer, not retried.
        let mut attempts_polled = false;
        // The primary's first poll comes before the hedger's first decision: a request
        // answered there (a cache, an in-memory service) costs no decision and no clock
        // reading for it. The decision then comes in the same poll, so the first hedge's
        // time is unchanged; the loop does not poll the primary a second time.
        if !self.primary_polled {
            self.primary_polled = true;
            attempts_polled = true; // no backup runs before the first decision
            if let Some(end) = self.poll_primary(hedger, cx, &mut slots, &classify) {
                return Poll::Ready(end);
            }
            // A primary that failed there, with nothing else running, is the answer: no
            // decision, so no backup (even when the delay has passed, or is zero).
            if let Some(end) = self.all_failed(hedger, &mut slots) {
                return Poll::Ready(end);
            }
        }
        loop {
            // A fired timer makes a decision due.
            if let Some(t) = slots.timer.as_mut().as_pin_mut() {
                if t.poll(cx).is_ready() {
                    slots.timer.set(None);
                    self.ask = true;
                    timer_rounds = timer_rounds.saturating_add(1);
                }
            }
            // Then the attempts, before that decision.
            if !core::mem::replace(&mut attempts_polled, true) {
                if let Some(end) = self.poll_attempts(hedger, cx, &mut slots, &classify) {
                    return Poll::Ready(end);
                }
            }
            if self.ask && !self.done_asking {
                if timer_rounds > 2 {
                    cx.waker().wake_by_ref(); // ask again on the next poll
                    return Poll::Pending;
                }
                self.ask = false;
                match hedger.should_hedge(&mut self.ticket) {
                    // Polled at the top of the loop, so its waker is registered.
                    Decision::Wait(d) => slots.timer.set(Some(sleep.sleep(d))),
                    Decision::Hedge => {
                        // Hedge k goes to slot k - 1, counted here rather than read from
                        // the ticket: a policy whose `Hedge` leaves the ticket's count as
                        // it was (any `HedgePolicy` may say it) can neither replace a
                        // running backup nor be asked for ever. Past the last slot, or
                        // the last copy, there is nothing to send: stop asking.
                        let started = match slots.backups.get_mut(usize::from(self.backups)) {
                            Some(slot) => make_backup().map(|(attempt, last)| {
                                slot.set(Some(attempt));
                                last
                            }),
                            None => None,
                        };
                        match started {
                            Some(last) => {
                                // At most `MAX_HEDGES`: a slot was free.
                                self.backups = self.backups.saturating_add(1);
                                self.done_asking = last || self.backups >= MAX_HEDGES;
                            }
                            None => self.done_asking = true,
                        }
                        self.ask = true; // the next hedge's time, if there is one
                        attempts_polled = false; // the backup's first poll
                    }
                    Decision::Skip(_) => self.done_asking = true,
                }
                continue;
            }
            return Poll::Pending;
        }
    }

    /// Polls every running attempt: the race's end if one succeeded or every attempt has
    /// failed (the slots are then empty).
    fn poll_attempts<P, Bk, T>(
        &mut self,
        hedger: &(impl HedgePolicy + ?Sized),
        cx: &mut Context<'_>,
        slots: &mut Slots<'_, P, Bk, T>,
        classify: &impl Fn(&O) -> Outcome,
    ) -> Option<RaceEnd<O>>
    where
        P: Future<Output = O>,
        Bk: Future<Output = O>,
    {
        if let Some(end) = self.poll_primary(hedger, cx, slots, classify) {
            return Some(end);
        }
        for (k, backup) in (1u8..).zip(slots.backups.iter_mut()) {
            let Some(b) = backup.as_mut().as_pin_mut() else {
                continue;
            };
            if let Poll::Ready(output) = b.poll(cx) {
                backup.set(None);
                if let Some(end) = self.settle(hedger, output, Attempt::Hedge(k), classify) {
                    slots.clear();
                    return Some(end);
                }
            }
        }
        self.all_failed(hedger, slots)
    }

    /// The race's end if every attempt started has failed and none is running: the last
    /// failure (the slots are then empty).
    fn all_failed<P, Bk, T>(
        &mut self,
        hedger: &(impl HedgePolicy + ?Sized),
        slots: &mut Slots<'_, P, Bk, T>,
    ) -> Option<RaceEnd<O>> {
        if slots.primary.is_some() || slots.backups.iter().any(|b| b.is_some()) {
            return None;
        }
        // Nothing left to wait for: the last failure is the answer.
        let (output, attempt) = self.failure.take()?;
        slots.clear();
        let latency = hedger.now().duration_since(self.ticket.start());
        Some(RaceEnd::Failed {
            output,
            attempt,
            latency,
        })
    }

    /// Polls the primary, if it is still running: the race's end if it succeeded (the
    /// slots are then empty).
    fn poll_primary<P, Bk, T>(
        &mut self,
        hedger: &(impl HedgePolicy + ?Sized),
        cx: &mut Context<'_>,
        slots: &mut Slots<'_, P, Bk, T>,
        classify: &impl Fn(&O) -> Outcome,
    ) -> Option<RaceEnd<O>>
    where
        P: Future<Output = O>,
    {
        let p = slots.primary.as_mut().as_pin_mut()?;
        let Poll::Ready(output) = p.poll(cx) else {
            return None;
        };
        slots.primary.set(None);
        let end = self.settle(hedger, output, Attempt::Primary, classify)?;
        slots.clear();
        Some(end)
    }

    /// Reports a finished attempt to the hedger: the race's end if it succeeded.
    fn settle(
        &mut self,
        hedger: &(impl HedgePolicy + ?Sized),
        output: O,
        attempt: Attempt,
        classify: &impl Fn(&O) -> Outcome,
    ) -> Option<RaceEnd<O>> {
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
                match outcome {
                    Outcome::RateLimited => hedger.on_rate_limited(),
                    Outcome::RateLimitedFor(pushback) => hedger.on_rate_limited_for(pushback),
                    Outcome::Success | Outcome::Failure => {}
                }
                hedger.on_error(&mut self.ticket, attempt);
                self.failure = Some((output, attempt));
                None
            }
        }
    }
}

/// embassy-time's `Timer` as a [`Sleep`].
#[cfg(feature = "embassy-time")]
fn embassy_sleep(d: Duration) -> embassy_time::Timer {
    let micros = u64::try_from(d.as_micros()).unwrap_or(u64::MAX);
    embassy_time::Timer::after(embassy_time::Duration::from_micros(micros))
}

/// [`race`] with embassy-time's `Timer` as the sleep (feature `embassy-time`).
///
/// ```
/// use core::time::Duration;
/// use tailguard::clock::EmbassyClock;
/// use tailguard::hedge::{race_embassy, Attempt, ColdStart, HedgeConfig, Hedger};
///
/// // On the host: embassy-time's std driver and any executor (a microcontroller has
/// // embassy's executor and a hardware time driver).
/// let config = HedgeConfig::new().with_cold_start(ColdStart::Delay(Duration::from_millis(5)));
/// let hedger = Hedger::new(EmbassyClock, config).unwrap();
/// let slow = async {
///     embassy_time::Timer::after_millis(500).await; // a stalled primary
///     Ok::<_, ()>("primary")
/// };
/// let won = smol::block_on(race_embassy(&hedger, slow, || async { Ok("backup") })).unwrap();
/// assert_eq!((won.value, won.attempt), ("backup", Attempt::Hedge(1)));
/// assert!(won.latency >= Duration::from_millis(5) && won.latency < Duration::from_millis(500));
/// ```
#[cfg(feature = "embassy-time")]
#[cfg_attr(docsrs, doc(cfg(feature = "embassy-time")))]
pub async fn race_embassy<T, E, Bk>(
    hedger: &(impl HedgePolicy + ?Sized),
    primary: impl Future<Output = Result<T, E>>,
    backup: impl FnMut() -> Bk,
) -> Result<Winner<T>, RaceError<E>>
where
    Bk: Future<Output = Result<T, E>>,
{
    race(hedger, primary, backup, embassy_sleep).await
}

/// [`race_until`] with embassy-time's `Timer` as the sleep (feature `embassy-time`).
///
/// ```
/// use core::time::Duration;
/// use tailguard::clock::EmbassyClock;
/// use tailguard::deadline::Deadline;
/// use tailguard::hedge::{race_embassy_until, HedgeConfig, Hedger, RaceError};
///
/// let hedger = Hedger::new(EmbassyClock, HedgeConfig::new()).unwrap();
/// let deadline = Deadline::after(hedger.now(), Duration::from_millis(20));
/// let stalled = || async {
///     embassy_time::Timer::after_secs(10).await;
///     Ok::<_, ()>(())
/// };
/// let result = smol::block_on(race_embassy_until(&hedger, deadline, stalled(), stalled));
/// assert_eq!(result, Err(RaceError::DeadlineExceeded)); // given up at 20 ms, not 10 s
/// assert_eq!(hedger.stats().deadline_exceeded, 1);
/// ```
#[cfg(feature = "embassy-time")]
#[cfg_attr(docsrs, doc(cfg(feature = "embassy-time")))]
pub async fn race_embassy_until<T, E, Bk>(
    hedger: &(impl HedgePolicy + ?Sized),
    deadline: Deadline,
    primary: impl Future<Output = Result<T, E>>,
    backup: impl FnMut() -> Bk,
) -> Result<Winner<T>, RaceError<E>>
where
    Bk: Future<Output = Result<T, E>>,
{
    race_until(hedger, deadline, primary, backup, embassy_sleep).await
}
