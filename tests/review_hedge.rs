//! A hostile review of the hedging policy and its race: each test is a broken promise
//! found by the review (see the commit that added it).

use core::cell::Cell;
use core::future::Future;
use core::pin::{pin, Pin};
use core::task::{Context, Poll, Waker};
use core::time::Duration;

use tailguard::clock::{Clock, Instant, ManualClock};
use tailguard::hedge::{race, Attempt, HedgeConfig, Hedger, RaceError};

const MS: Duration = Duration::from_millis(1);

/// A hedger that has learned a flat 10 ms latency.
fn warmed(clock: &ManualClock) -> Hedger<&ManualClock> {
    let hedger = Hedger::new(clock, HedgeConfig::new().with_min_samples(10)).unwrap();
    for _ in 0..50 {
        let t = hedger.start();
        clock.advance(10 * MS);
        hedger.on_success(&t, Attempt::Primary);
    }
    hedger
}

/// A future ready with its value once the clock reaches its time.
struct Delayed<'a, T> {
    clock: &'a ManualClock,
    at: Instant,
    value: Option<T>,
}

impl<T: Unpin> Future for Delayed<'_, T> {
    type Output = T;
    fn poll(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<T> {
        if self.clock.now() >= self.at {
            Poll::Ready(self.value.take().unwrap())
        } else {
            Poll::Pending
        }
    }
}

fn after<T>(clock: &ManualClock, d: Duration, value: T) -> Delayed<'_, T> {
    Delayed {
        clock,
        at: clock.now().saturating_add(d),
        value: Some(value),
    }
}

/// Polls `f` to completion, advancing the clock by `step` whenever it is pending: an
/// executor whose wake-ups come in batches (a busy runtime, a coarse timer wheel), so
/// that an attempt and the hedge timer are often found ready in the same poll.
fn run<F: Future>(clock: &ManualClock, step: Duration, f: F) -> F::Output {
    let mut f = pin!(f);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
        clock.advance(step);
    }
}

/// `race` promises that a primary that fails with nothing else running gets no backup
/// (hedging is not retrying). A primary found failed in the same poll as the hedge timer
/// fires (pending at 0 ms, failed by the next poll at 20 ms, past the ~10 ms delay) was
/// retried: the timer was handled first, so a backup went out (and won) for a request
/// that had already failed.
#[test]
fn a_primary_found_failed_when_the_timer_fires_gets_no_backup() {
    let clock = ManualClock::new();
    let hedger = warmed(&clock);
    let made = Cell::new(0u32);
    let backup = || {
        made.set(made.get() + 1);
        after(&clock, MS, Ok("backup"))
    };
    let primary = after(&clock, 12 * MS, Err::<&str, _>("boom"));
    let sleep = |d: Duration| after(&clock, d, ());
    let result = run(&clock, 20 * MS, race(&hedger, primary, backup, sleep));
    let failed = RaceError::Failed {
        error: "boom",
        attempt: Attempt::Primary,
    };
    assert_eq!(
        (result, made.get(), hedger.stats().hedges),
        (Err(failed), 0, 0)
    );
}

/// Likewise a primary found answered in the poll the timer fires: it wins, and no backup
/// is made, counted or paid for (it used to be made, counted, charged a budget token and
/// dropped unpolled).
#[test]
fn a_primary_found_answered_when_the_timer_fires_costs_no_hedge() {
    let clock = ManualClock::new();
    let hedger = warmed(&clock);
    let made = Cell::new(0u32);
    let backup = || {
        made.set(made.get() + 1);
        after(&clock, MS, Ok("backup"))
    };
    let primary = after(&clock, 12 * MS, Ok::<_, &str>("primary"));
    let sleep = |d: Duration| after(&clock, d, ());
    let won = run(&clock, 20 * MS, race(&hedger, primary, backup, sleep)).unwrap();
    assert_eq!(won.attempt, Attempt::Primary);
    assert_eq!((made.get(), hedger.stats().hedges), (0, 0));
}
