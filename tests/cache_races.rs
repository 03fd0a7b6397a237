//! The cached quantile of a `Window` under readers racing rotations and refreshes: a bound
//! read is of a refresh that published one (or a later consistent one), never of one that
//! published nothing.

use core::time::Duration;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread;

use tailguard::clock::ManualClock;
use tailguard::sketch::presets;
use tailguard::window::{Window, WindowConfig};

/// A reader of `cached_upper_bound` that loads the published bin, is preempted, and then
/// loads the bound must never get a bound from a refresh that published nothing: every
/// value is 5 ms, so any bound is `None` or at least 5 ms (never `Some(0)`).
#[test]
fn a_cached_upper_bound_is_never_of_a_refresh_that_published_nothing() {
    let clock = ManualClock::new();
    let config = WindowConfig::new()
        .with_interval(Duration::from_millis(1))
        .with_min_count(4);
    let window = Window::with_layout(&clock, presets::INT_LATENCY_LAYOUT, config).unwrap();
    let done = AtomicBool::new(false);
    let bad = AtomicU64::new(0);
    let reads = AtomicU64::new(0);
    thread::scope(|s| {
        for _ in 0..6 {
            let (window, done, bad, reads) = (&window, &done, &bad, &reads);
            s.spawn(move || {
                let mut n = 0u64;
                while !done.load(Ordering::Relaxed) {
                    if let Some(b) = window.cached_upper_bound() {
                        if b < 5_000_000 {
                            eprintln!("cached_upper_bound() = Some({b})");
                            bad.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                    n += 1;
                }
                reads.fetch_add(n, Ordering::Relaxed);
            });
        }
        let start = std::time::Instant::now();
        while start.elapsed() < Duration::from_secs(3) && bad.load(Ordering::Relaxed) == 0 {
            for _ in 0..8 {
                window.record_u64(5_000_000);
            }
            window.maintain(); // publishes a bound of 5 ms
            thread::sleep(Duration::from_millis(1));
            clock.advance(Duration::from_millis(10)); // past the whole window
            window.maintain(); // withdraws, then a refresh of nothing stores its bound
            thread::sleep(Duration::from_millis(1));
        }
        done.store(true, Ordering::Relaxed);
    });
    assert_eq!(
        bad.load(Ordering::Relaxed),
        0,
        "bounds below 5 ms read in {} reads",
        reads.load(Ordering::Relaxed)
    );
}
