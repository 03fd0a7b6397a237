//! loom models of the lock-free primitives: every interleaving of a few operations per
//! thread, with the crate's atomics swapped for loom's.
//!
//! Run with `RUSTFLAGS="--cfg loom" cargo test --release --test loom`
//! (`.ci/run` does, with `LOOM_MAX_PREEMPTIONS=3`).
#![cfg(loom)]

use core::time::Duration;

use loom::sync::atomic::{AtomicU64, Ordering::SeqCst};
use loom::sync::Arc;
use loom::thread;
use tailguard::budget::{Budget, RatioBudget, TokenBucket};
use tailguard::clock::{Clock, Instant};
use tailguard::sketch::{AtomicSketch, IntMapping};
use tailguard::window::{Window, WindowConfig};

/// A clock whose time is a loom atomic, so its reads and writes are interleaved too.
#[derive(Clone)]
struct LoomClock(Arc<AtomicU64>);

impl LoomClock {
    fn new() -> Self {
        LoomClock(Arc::new(AtomicU64::new(0)))
    }
    fn advance(&self, nanos: u64) {
        self.0.fetch_add(nanos, SeqCst);
    }
}

impl Clock for LoomClock {
    fn now(&self) -> Instant {
        Instant::from_nanos(self.0.load(SeqCst))
    }
}

const INTERVAL_NS: u64 = 100;

/// Four bins of a coarse integer mapping: values 1..16.
type TinyWindow = Window<LoomClock, IntMapping, 4>;

fn tiny_window(clock: &LoomClock, refresh: bool) -> TinyWindow {
    let mapping = IntMapping::with_mantissa_bits(0).unwrap();
    let config = WindowConfig::new()
        .interval(Duration::from_nanos(INTERVAL_NS))
        .refresh_records(if refresh { 1 } else { 0 })
        .refresh_interval(Duration::ZERO)
        .warmup_records(0);
    Window::new(clock.clone(), mapping, 1.0, config).unwrap()
}

/// A record racing one rotation lands in the current or the previous interval: both are
/// in the window, so none is lost, and none is in a cleared slot.
#[test]
fn record_racing_one_rotation_is_never_lost() {
    loom::model(|| {
        let clock = LoomClock::new();
        let window = Arc::new(tiny_window(&clock, false));
        let recorder = {
            let window = window.clone();
            thread::spawn(move || {
                window.record_u64(2);
                window.record_u64(3);
            })
        };
        let rotator = {
            let (window, clock) = (window.clone(), clock.clone());
            thread::spawn(move || {
                clock.advance(INTERVAL_NS);
                window.record_u64(5); // rotates
            })
        };
        recorder.join().unwrap();
        rotator.join().unwrap();
        assert_eq!(window.expired(), 0);
        assert_eq!(window.count(), 3);
        assert_eq!(window.rotations(), 1);
    });
}

/// A record racing two rotations (the second clears the slot it may be writing to) and a
/// threshold refresh: it is either in the window or counted as expired, exactly once.
#[test]
fn records_are_conserved_across_rotations() {
    loom::model(|| {
        let clock = LoomClock::new();
        let window = Arc::new(tiny_window(&clock, true));
        let recorder = {
            let window = window.clone();
            thread::spawn(move || window.record_u64(8))
        };
        let rotator = {
            let (window, clock) = (window.clone(), clock.clone());
            thread::spawn(move || {
                clock.advance(INTERVAL_NS);
                window.rotate_if_due();
                clock.advance(INTERVAL_NS);
                window.rotate_if_due();
            })
        };
        let _ = window.threshold();
        recorder.join().unwrap();
        rotator.join().unwrap();
        assert_eq!(window.count() + u64::from(window.expired()), 1);
    });
}

/// Concurrent records into an atomic sketch: every bin exact.
#[test]
fn atomic_sketch_records_are_exact() {
    loom::model(|| {
        let mapping = IntMapping::with_mantissa_bits(0).unwrap();
        let sketch = Arc::new(AtomicSketch::<IntMapping, 4>::new(mapping, 1.0).unwrap());
        let threads: Vec<_> = [3u64, 12]
            .into_iter()
            .map(|v| {
                let sketch = sketch.clone();
                thread::spawn(move || {
                    sketch.record_u64(v);
                    sketch.record_u64(2);
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let snapshot = sketch.snapshot();
        let mut expected = tailguard::DDSketch::<IntMapping, 4>::new(mapping, 1.0).unwrap();
        for v in [3, 2, 12, 2] {
            expected.record_u64(v);
        }
        assert!(snapshot.bins().eq(expected.bins()));
        assert_eq!(snapshot.count(), 4);
        assert_eq!(sketch.min(), Some(2.0));
        assert_eq!(sketch.max(), Some(12.0));
    });
}

/// Racing withdrawals and deposits never overdraw: granted <= cap + ratio * requests.
#[test]
fn ratio_budget_never_overdraws() {
    loom::model(|| {
        let budget = Arc::new(RatioBudget::new(0.5, 2).unwrap()); // starts with 2 tokens
        let spender = {
            let budget = budget.clone();
            thread::spawn(move || (budget.try_acquire(), budget.try_acquire()))
        };
        let depositor = {
            let budget = budget.clone();
            thread::spawn(move || {
                budget.on_request();
                budget.on_request();
                budget.try_acquire()
            })
        };
        let (a, b) = spender.join().unwrap();
        let c = depositor.join().unwrap();
        let granted = [a, b, c].iter().filter(|&&g| g).count() as u32;
        assert_eq!(budget.granted(), granted);
        assert_eq!(budget.denied(), 3 - granted);
        assert!(granted >= 2 && granted <= 3);
        // What is left plus what was spent never exceeds what was put in.
        assert!(budget.balance() + f64::from(granted) <= 2.0 + 0.5 * 2.0);
    });
}

/// The last token goes to exactly one of two racing threads.
#[test]
fn last_token_is_granted_once() {
    loom::model(|| {
        let budget = Arc::new(RatioBudget::new(0.0, 1).unwrap());
        let threads: Vec<_> = (0..2)
            .map(|_| {
                let budget = budget.clone();
                thread::spawn(move || budget.try_acquire())
            })
            .collect();
        let granted = threads
            .into_iter()
            .map(|t| t.join().unwrap())
            .filter(|&granted| granted)
            .count();
        assert_eq!(granted, 1);
        assert_eq!(budget.balance(), 0.0);
    });
}

/// A token bucket under racing acquires and a moving clock grants at most
/// burst + rate * elapsed.
#[test]
fn token_bucket_never_overdraws() {
    loom::model(|| {
        let clock = LoomClock::new();
        // 1000 per second: one token per 1 ms; burst 2.
        let bucket = Arc::new(TokenBucket::new(clock.clone(), 1000.0, 2).unwrap());
        let threads: Vec<_> = (0..2)
            .map(|_| {
                let bucket = bucket.clone();
                thread::spawn(move || {
                    u32::from(bucket.try_acquire()) + u32::from(bucket.try_acquire())
                })
            })
            .collect();
        clock.advance(1_000_000);
        let granted: u32 = threads.into_iter().map(|t| t.join().unwrap()).sum();
        assert!(granted <= 3, "{granted}");
        assert!(granted >= 2, "{granted}");
        assert_eq!(bucket.granted(), granted);
    });
}
