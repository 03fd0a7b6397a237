//! [`race`]: run a request, hedge it when the [`Hedger`] says so, keep the first success.

use core::future::{poll_fn, Future};
use core::pin::pin;
use core::task::Poll;
use core::time::Duration;

use super::{Attempt, Decision, Hedger};
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
    let mut ticket = hedger.start();
    let mut primary = pin!(Some(primary));
    let mut backup_attempt = pin!(None::<Backup>);
    let mut timer = pin!(None::<S>);
    let mut make_backup = Some(backup);
    let mut ask = true; // consult the hedger on the first poll and whenever the timer fires

    poll_fn(|cx| loop {
        if ask {
            ask = false;
            match hedger.should_hedge(&mut ticket) {
                Decision::Wait(d) => timer.set(Some(sleep(d))),
                Decision::Hedge => backup_attempt.set(make_backup.take().map(|f| f())),
                Decision::Skip(_) => {}
            }
        }
        // The timer first: a due hedge starts before we report Pending.
        if let Some(t) = timer.as_mut().as_pin_mut() {
            if t.poll(cx).is_ready() {
                timer.set(None);
                ask = true;
                continue;
            }
        }
        let mut failure = None;
        if let Some(p) = primary.as_mut().as_pin_mut() {
            if let Poll::Ready(result) = p.poll(cx) {
                primary.set(None);
                match result {
                    Ok(value) => {
                        backup_attempt.set(None); // cancel the loser at once
                        timer.set(None);
                        let latency = hedger.on_success(&ticket, Attempt::Primary);
                        return Poll::Ready(Ok(Winner {
                            value,
                            attempt: Attempt::Primary,
                            latency,
                        }));
                    }
                    Err(error) => {
                        hedger.on_error(&mut ticket, Attempt::Primary);
                        failure = Some(RaceError {
                            error,
                            attempt: Attempt::Primary,
                        });
                    }
                }
            }
        }
        if let Some(b) = backup_attempt.as_mut().as_pin_mut() {
            if let Poll::Ready(result) = b.poll(cx) {
                backup_attempt.set(None);
                let attempt = Attempt::Hedge(1);
                match result {
                    Ok(value) => {
                        primary.set(None); // cancel the loser at once
                        timer.set(None);
                        let latency = hedger.on_success(&ticket, attempt);
                        return Poll::Ready(Ok(Winner {
                            value,
                            attempt,
                            latency,
                        }));
                    }
                    Err(error) => {
                        hedger.on_error(&mut ticket, attempt);
                        failure = Some(RaceError { error, attempt });
                    }
                }
            }
        }
        let running = primary.is_some() || backup_attempt.is_some();
        return match failure {
            // Nothing left to wait for: the last failure is the answer.
            Some(failure) if !running => {
                timer.set(None);
                Poll::Ready(Err(failure))
            }
            _ => Poll::Pending,
        };
    })
    .await
}

/// [`race`] with embassy-time's `Timer` as the sleep (feature `embassy-time`).
#[cfg(feature = "embassy-time")]
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
