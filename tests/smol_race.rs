//! `race` and `race_until` under smol's executor, with async-io's real timers and the
//! host's time (an `FnClock` over `std::time::Instant`, so the test needs no feature).
//!
//! The bounds are tens of milliseconds wide on purpose: a loaded CI machine oversleeps,
//! so each assertion is one that a broken race cannot meet (a stuck attempt never answers,
//! a serial run cannot finish sooner than the sum of its sleeps), not a tight timing.

use std::cell::Cell;
use std::future::pending;
use std::rc::Rc;
use std::time::{Duration, Instant as StdInstant};

use smol::Timer;
use tailguard::clock::{FnClock, Instant};
use tailguard::deadline::Deadline;
use tailguard::hedge::{race, race_until, Attempt, ColdStart, HedgeConfig, Hedger, RaceError};

const MS: Duration = Duration::from_millis(1);

/// The host's time since `epoch`, as a wasm or firmware user would wire their own timer.
fn host_clock(epoch: StdInstant) -> FnClock<impl Fn() -> Instant> {
    FnClock::new(move || Instant::from_nanos(epoch.elapsed().as_nanos() as u64))
}

/// A hedger that sends its backup `delay` after the start (no samples learned yet).
fn hedger(delay: Duration) -> Hedger<FnClock<impl Fn() -> Instant>> {
    let config = HedgeConfig::new()
        .with_min_samples(1_000)
        .with_cold_start(ColdStart::Delay(delay));
    Hedger::new(host_clock(StdInstant::now()), config).unwrap()
}

/// async-io's timer as the race's sleep.
async fn sleep(d: Duration) {
    Timer::after(d).await;
}

/// Sets its flag when dropped: tells whether an attempt was cancelled.
struct DropFlag(Rc<Cell<bool>>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.set(true);
    }
}

/// An attempt that never answers, and a flag set when it is dropped.
fn stuck() -> (
    impl std::future::Future<Output = Result<u32, ()>>,
    Rc<Cell<bool>>,
) {
    let dropped = Rc::new(Cell::new(false));
    let flag = DropFlag(dropped.clone());
    let attempt = async move {
        let _flag = flag;
        pending::<Result<u32, ()>>().await
    };
    (attempt, dropped)
}

#[test]
fn a_stuck_primary_is_rescued_by_the_backup_and_dropped() {
    let hedger = hedger(20 * MS);
    let (primary, primary_dropped) = stuck();
    let start = StdInstant::now();
    let won = smol::block_on(race(
        &hedger,
        primary,
        || async {
            Timer::after(10 * MS).await;
            Ok(7)
        },
        sleep,
    ))
    .unwrap();
    let took = start.elapsed();
    assert_eq!((won.value, won.attempt), (7, Attempt::Hedge(1)));
    // The backup went out after the delay and answered after its own sleep, not before.
    assert!(took >= 30 * MS, "{took:?}");
    assert!(took < 2_000 * MS, "{took:?}");
    assert!(won.latency >= 30 * MS, "{:?}", won.latency);
    assert!(primary_dropped.get(), "the losing primary is cancelled");
    let stats = hedger.stats();
    assert_eq!((stats.hedges, stats.hedge_wins), (1, 1));
}

#[test]
fn a_primary_that_answers_first_wins_and_the_backup_is_dropped() {
    let hedger = hedger(10 * MS);
    let (backup, backup_dropped) = stuck();
    let mut backup = Some(backup);
    let won = smol::block_on(race(
        &hedger,
        async {
            Timer::after(40 * MS).await;
            Ok(1)
        },
        || backup.take().unwrap(),
        sleep,
    ))
    .unwrap();
    assert_eq!((won.value, won.attempt), (1, Attempt::Primary));
    assert!(won.latency >= 40 * MS, "{:?}", won.latency);
    // The backup was started (at 10 ms) and cancelled when the primary won.
    assert!(backup.is_none(), "the backup was sent");
    assert!(backup_dropped.get(), "the losing backup is cancelled");
    let stats = hedger.stats();
    assert_eq!((stats.hedges, stats.primary_wins), (1, 1));
}

#[test]
fn a_fast_primary_needs_no_backup() {
    let hedger = hedger(200 * MS);
    let mut backups = 0;
    let won = smol::block_on(race(
        &hedger,
        async {
            Timer::after(5 * MS).await;
            Ok::<_, ()>(1)
        },
        || {
            backups += 1;
            async { Ok(2) }
        },
        sleep,
    ))
    .unwrap();
    assert_eq!((won.value, won.attempt, backups), (1, Attempt::Primary, 0));
    assert_eq!(hedger.stats().hedges, 0);
}

#[test]
fn a_deadline_cancels_every_attempt() {
    let hedger = hedger(10 * MS);
    let (primary, primary_dropped) = stuck();
    let (backup, backup_dropped) = stuck();
    let mut backup = Some(backup);
    let deadline = Deadline::after(hedger.now(), 50 * MS);
    let start = StdInstant::now();
    let result = smol::block_on(race_until(
        &hedger,
        deadline,
        primary,
        || backup.take().unwrap(),
        sleep,
    ));
    let took = start.elapsed();
    assert_eq!(result, Err(RaceError::DeadlineExceeded));
    assert!(took >= 50 * MS, "{took:?}");
    assert!(took < 2_000 * MS, "{took:?}");
    assert!(backup.is_none(), "the backup was sent before the deadline");
    assert!(primary_dropped.get() && backup_dropped.get());
    assert_eq!(hedger.stats().deadline_exceeded, 1);
    // The deadline has passed: the next step starts nothing.
    let mut started = false;
    let next = smol::block_on(race_until(
        &hedger,
        deadline,
        async {
            started = true;
            Ok::<_, ()>(1)
        },
        || async { Ok(1) },
        sleep,
    ));
    assert_eq!((next, started), (Err(RaceError::DeadlineExceeded), false));
}

#[test]
fn concurrent_races_share_one_hedger_and_their_timers_run_together() {
    const RACES: u32 = 16;
    let hedger = hedger(50 * MS);
    let executor = smol::LocalExecutor::new();
    let start = StdInstant::now();
    let tasks: Vec<_> = (0..RACES)
        .map(|i| {
            let hedger = &hedger;
            executor.spawn(async move {
                let (primary, dropped) = stuck();
                let won = race(
                    hedger,
                    primary,
                    || async move {
                        Timer::after(50 * MS).await;
                        Ok(i)
                    },
                    sleep,
                )
                .await
                .unwrap();
                (won, dropped.get())
            })
        })
        .collect();
    let results = smol::block_on(executor.run(async {
        let mut results = Vec::new();
        for task in tasks {
            results.push(task.await);
        }
        results
    }));
    let took = start.elapsed();
    for (i, (won, primary_dropped)) in (0..RACES).zip(results) {
        assert_eq!(
            (won.value, won.attempt, primary_dropped),
            (i, Attempt::Hedge(1), true)
        );
    }
    // Together they take about 100 ms; one after another, at least RACES * 100 ms.
    assert!(took < RACES * 100 * MS, "{took:?}");
    let stats = hedger.stats();
    assert_eq!(
        (stats.requests, stats.hedges, stats.hedge_wins),
        (RACES, RACES, RACES)
    );
}
