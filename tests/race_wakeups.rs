//! The race when wake-ups come together (a timer and an attempt in one poll), with a
//! policy that always says hedge, and the wait of a later hedge: promises a hostile review
//! once broke.

use core::cell::Cell;
use core::future::Future;
use core::pin::{pin, Pin};
use core::task::{Context, Poll, Waker};
use core::time::Duration;

use tailguard::clock::{Clock, Instant, ManualClock};
use tailguard::deadline::Deadline;
use tailguard::hedge::{
    race, Attempt, Decision, HedgeConfig, HedgePolicy, Hedger, RaceError, SkipReason, Stats,
    Ticket, MAX_HEDGES,
};

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

/// A [`HedgePolicy`] (a public, implementable trait) that says hedge every time it is
/// asked, forwarding the rest to a hedger.
struct AlwaysHedge<H>(H);

impl<H: HedgePolicy> HedgePolicy for AlwaysHedge<H> {
    fn now(&self) -> Instant {
        self.0.now()
    }
    fn start(&self) -> Ticket {
        self.0.start()
    }
    fn start_with_deadline(&self, deadline: Deadline) -> Ticket {
        self.0.start_with_deadline(deadline)
    }
    fn should_hedge(&self, _: &mut Ticket) -> Decision {
        Decision::Hedge
    }
    fn on_success(&self, ticket: &Ticket, winner: Attempt) -> Duration {
        self.0.on_success(ticket, winner)
    }
    fn on_error(&self, ticket: &mut Ticket, attempt: Attempt) {
        self.0.on_error(ticket, attempt)
    }
    fn on_deadline_exceeded(&self, ticket: &Ticket) {
        self.0.on_deadline_exceeded(ticket)
    }
    fn on_rate_limited(&self) {
        self.0.on_rate_limited()
    }
    fn on_rate_limited_for(&self, pushback: Duration) {
        self.0.on_rate_limited_for(pushback)
    }
    fn delay(&self) -> Result<Duration, SkipReason> {
        self.0.delay()
    }
    fn stats(&self) -> Stats {
        self.0.stats()
    }
    fn max_hedges(&self) -> u8 {
        MAX_HEDGES
    }
}

/// `race` holds `MAX_HEDGES` backups and takes any `HedgePolicy`. One whose `Hedge` does
/// not advance the ticket's count made the race put every backup in the first slot,
/// dropping the one running there, and ask again for ever inside one poll: a hang. It
/// must make at most `MAX_HEDGES` backups and finish.
#[test]
fn a_policy_that_always_says_hedge_gets_at_most_max_hedges_backups() {
    let (done, result) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let clock = ManualClock::new();
        let hedger = AlwaysHedge(Hedger::new(&clock, HedgeConfig::new()).unwrap());
        let made = Cell::new(0u32);
        let backup = || {
            made.set(made.get() + 1);
            // Bounded, so that a regression fails rather than spins for ever.
            assert!(made.get() <= 100, "{} backups", made.get());
            after(&clock, 5 * MS, Ok("backup"))
        };
        let primary = after(&clock, 50 * MS, Ok::<_, ()>("primary"));
        let sleep = |d: Duration| after(&clock, d, ());
        let won = run(&clock, MS, race(&hedger, primary, backup, sleep)).unwrap();
        let _ = done.send((won.attempt, made.get()));
    });
    let (attempt, made) = result
        .recv_timeout(Duration::from_secs(20))
        .expect("the race hung or panicked");
    assert_eq!(attempt, Attempt::Hedge(1));
    assert!(made <= u32::from(MAX_HEDGES), "{made} backups");
}

/// docs/guarantees.md said a `Wait` never exceeds "the current delay", which is what
/// `delay()` reports: the first hedge's. With a percentile per hedge the wait for the
/// second backup is up to that hedge's own delay (here ~92 ms against a 10 ms `delay()`),
/// as the code intends. The promise now says so: a wait is at most the delay of the hedge
/// it waits for, so never `max_delay`, a clock that went back included.
#[test]
fn a_wait_is_bounded_by_its_own_hedges_delay() {
    let clock = ManualClock::new();
    let config = HedgeConfig::new()
        .with_percentiles(&[0.5, 0.99])
        .with_min_samples(10)
        .with_max_delay(95 * MS);
    let hedger = Hedger::new(&clock, config).unwrap();
    // 90 % at 10 ms, 10 % at 100 ms: the p50 is 10 ms, the p99 100 ms (clamped to 95).
    for i in 0..100 {
        let t = hedger.start();
        clock.advance(if i % 10 == 0 { 100 * MS } else { 10 * MS });
        hedger.on_success(&t, Attempt::Primary);
    }
    let mut ticket = hedger.start();
    let Decision::Wait(first) = hedger.should_hedge(&mut ticket) else {
        panic!()
    };
    assert!(first <= hedger.delay().unwrap());
    clock.advance(first);
    assert_eq!(hedger.should_hedge(&mut ticket), Decision::Hedge);
    let Decision::Wait(second) = hedger.should_hedge(&mut ticket) else {
        panic!()
    };
    // Beyond the current delay (the old wording), within the second hedge's own.
    assert!(second > hedger.delay().unwrap(), "{second:?}");
    assert!(second <= 95 * MS, "{second:?}");
    // A clock that went back before the start: still at most that hedge's delay.
    clock.set(Instant::ZERO);
    let Decision::Wait(back) = hedger.should_hedge(&mut ticket) else {
        panic!()
    };
    assert!(back <= 95 * MS, "{back:?}");
}
