//! Hostile-user checks of `race`, `race_until` and the hedger's accounting.

use core::future::Future;
use core::pin::{pin, Pin};
use core::task::{Context, Poll, Waker};
use core::time::Duration;
use std::cell::Cell;
use std::rc::Rc;

use tailguard::clock::{Clock, Instant, ManualClock};
use tailguard::hedge::{race, Attempt, ColdStart, HedgeConfig, Hedger, RaceError};

const MS: Duration = Duration::from_millis(1);

fn warmed(clock: &ManualClock, config: HedgeConfig, n: u32) -> Hedger<&ManualClock> {
    let hedger = Hedger::new(clock, config).unwrap();
    for _ in 0..n {
        let t = hedger.start();
        clock.advance(10 * MS);
        hedger.on_success(&t, Attempt::Primary);
    }
    hedger
}

struct Delayed<'a, T> {
    clock: &'a ManualClock,
    at: Instant,
    value: Option<T>,
    dropped: Rc<Cell<bool>>,
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

fn run<F: Future>(clock: &ManualClock, f: F) -> F::Output {
    let mut f = pin!(f);
    let mut cx = Context::from_waker(Waker::noop());
    for _ in 0..1_000_000 {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
        clock.advance(Duration::from_micros(100));
    }
    panic!("the race never finished");
}

fn sleeper<'a>(clock: &'a ManualClock) -> impl FnMut(Duration) -> Delayed<'a, ()> + 'a {
    move |d| after(clock, d, ()).0
}

/// A primary that blocks in its first poll (a synchronous driver call) past the hedge
/// delay, then fails. Nothing else is running: its error must be returned as it is.
#[test]
fn a_primary_failing_in_its_first_poll_after_the_delay_gets_no_backup() {
    let clock = ManualClock::new();
    let hedger = warmed(&clock, HedgeConfig::new().with_min_samples(10), 50);
    let primary = async {
        clock.advance(20 * MS); // blocked past the ~10 ms delay
        Err::<&str, _>("boom")
    };
    let made = Cell::new(0u32);
    let backup = || {
        made.set(made.get() + 1);
        async { Ok::<&str, &str>("backup") }
    };
    let result = run(&clock, race(&hedger, primary, backup, sleeper(&clock)));
    assert_eq!(
        (result, made.get(), hedger.stats().hedges),
        (
            Err(RaceError::Failed {
                error: "boom",
                attempt: Attempt::Primary
            }),
            0,
            0
        )
    );
}

/// The same with a zero delay: a primary that fails at once gets no backup.
#[test]
fn a_primary_failing_at_once_with_a_zero_delay_gets_no_backup() {
    let clock = ManualClock::new();
    let config = HedgeConfig::new()
        .with_min_delay(Duration::ZERO)
        .with_cold_start(ColdStart::Delay(Duration::ZERO));
    let hedger = Hedger::new(&clock, config).unwrap();
    let made = Cell::new(0u32);
    let backup = || {
        made.set(made.get() + 1);
        async { Ok::<&str, &str>("backup") }
    };
    let result = run(
        &clock,
        race(
            &hedger,
            async { Err::<&str, _>("boom") },
            backup,
            sleeper(&clock),
        ),
    );
    assert_eq!(
        (result, made.get(), hedger.stats().hedges),
        (
            Err(RaceError::Failed {
                error: "boom",
                attempt: Attempt::Primary
            }),
            0,
            0
        )
    );
}
