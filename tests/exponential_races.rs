//! Short races of two recorders and a clock-advancing maintainer on an exponential window,
//! run many times, each checked for exact conservation (`count() + expired() + saturated()`)
//! at the end. `TAILGUARD_RACE_ITERS` sets the runs per test (more find rarer interleavings).

use core::time::Duration;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Barrier;
use std::thread;

use tailguard::clock::ManualClock;
use tailguard::window::{ExponentialWindow, WindowCounter};
use tailguard_support::Rng;

fn iterations(default: u64) -> u64 {
    std::env::var("TAILGUARD_RACE_ITERS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// Two recorders alternating extremes (and zeros) into a 64-bucket u16 window, one thread
/// advancing the clock, maintaining and querying.
fn extremes_run<const B: usize, const SLOTS: usize>(seed: u64, rotate: bool, step_ns: u64) {
    let clock = ManualClock::new();
    let window = ExponentialWindow::<_, u16, B, SLOTS>::new(&clock, Duration::from_micros(50))
        .unwrap()
        .with_rotate_on_record(rotate);
    let recorded = AtomicU64::new(0);
    let done = AtomicBool::new(false);
    let start = Barrier::new(3);
    thread::scope(|s| {
        for t in 0..2u64 {
            let (window, recorded, start) = (&window, &recorded, &start);
            s.spawn(move || {
                let mut rng = Rng::new(seed * 7 + t);
                start.wait();
                let mut n = 0;
                for i in 0..2_000u64 {
                    let v = match (i + t) % 5 {
                        0 => 1,
                        1 => 1 << 60,
                        2 => 0,
                        3 => rng.next_u64() >> (rng.next_u64() % 64),
                        _ => 1_000 + (i % 7),
                    };
                    window.record_u64(v);
                    n += 1;
                }
                recorded.fetch_add(n, Ordering::Relaxed);
            });
        }
        let (window, clock, done, start) = (&window, &clock, &done, &start);
        s.spawn(move || {
            start.wait();
            let mut k = 0u64;
            while !done.load(Ordering::Relaxed) {
                clock.advance(Duration::from_nanos(step_ns));
                if k.is_multiple_of(3) {
                    window.maintain();
                }
                if k.is_multiple_of(5) {
                    let _ = window.count();
                }
                k += 1;
            }
        });
        while recorded.load(Ordering::Relaxed) < 4_000 {
            thread::yield_now();
        }
        done.store(true, Ordering::Relaxed);
    });
    window.maintain();
    let held = window.count() + u64::from(window.expired()) + u64::from(window.saturated());
    assert_eq!(held, 4_000, "seed {seed} rotate {rotate}: {window:?}");
}

#[test]
fn exponential_extremes_racing_rescales_and_rotations_are_conserved() {
    for seed in 0..iterations(300) {
        let rotate = seed % 2 == 0;
        let step = [3_000, 20_000, 60_000][(seed % 3) as usize];
        match (seed / 2) % 3 {
            0 => extremes_run::<64, 3>(seed, rotate, step),
            1 => extremes_run::<64, 2>(seed, rotate, step),
            _ => extremes_run::<4, 4>(seed, rotate, step),
        }
    }
}

/// Counters pushed to the u16 limit while rescales merge buckets: a rescale that merges
/// two full buckets cannot hold them, and must count the excess as saturated.
fn saturating_run<const B: usize>(seed: u64, rotate: bool) {
    let clock = ManualClock::new();
    let window = ExponentialWindow::<_, u16, B, 3>::new(&clock, Duration::from_secs(3600))
        .unwrap()
        .with_rotate_on_record(rotate);
    let limit = u64::from(<u16 as WindowCounter>::LIMIT);
    let per_thread = limit + 5_000;
    let done = AtomicBool::new(false);
    let start = Barrier::new(3);
    thread::scope(|s| {
        for t in 0..2u64 {
            let (window, start) = (&window, &start);
            s.spawn(move || {
                start.wait();
                for i in 0..per_thread {
                    // Neighbouring values, so that they share a bucket once rescaled.
                    let v = if (i + seed).is_multiple_of(4_096) {
                        1u64 << (20 + (i + t) % 40)
                    } else {
                        1_000_000 + (t * 3 + i % 3)
                    };
                    window.record_u64(v);
                }
            });
        }
        let (window, done, start) = (&window, &done, &start);
        s.spawn(move || {
            start.wait();
            while !done.load(Ordering::Relaxed) {
                window.maintain();
                thread::yield_now();
            }
        });
        // Scoped threads: the recorders end first (the maintainer spins on `done`).
        thread::sleep(Duration::from_millis(1));
        while window.count() + u64::from(window.expired()) + u64::from(window.saturated())
            < 2 * per_thread
        {
            thread::yield_now();
        }
        done.store(true, Ordering::Relaxed);
    });
    window.maintain();
    let held = window.count() + u64::from(window.expired()) + u64::from(window.saturated());
    assert_eq!(held, 2 * per_thread, "seed {seed}: {window:?}");
}

#[test]
fn exponential_counters_at_the_u16_limit_are_conserved_across_rescales() {
    for seed in 0..iterations(40) {
        let rotate = seed % 2 == 0;
        if seed % 4 < 2 {
            saturating_run::<4>(seed, rotate);
        } else {
            saturating_run::<64>(seed, rotate);
        }
    }
}

/// Records near the top of the float range (whose slots have buckets beyond it) racing
/// rotations and rescales that change the slots' scale: a record preempted across two
/// clears lands in some bucket of the slot's new scale.
fn edge_run<const B: usize>(seed: u64) {
    let clock = ManualClock::new();
    let window = ExponentialWindow::<_, u16, B, 2>::new(&clock, Duration::from_nanos(100)).unwrap();
    let recorded = AtomicU64::new(0);
    let done = AtomicBool::new(false);
    let start = Barrier::new(3);
    const EACH: u64 = 3_000;
    thread::scope(|s| {
        for t in 0..2u64 {
            let (window, recorded, start) = (&window, &recorded, &start);
            s.spawn(move || {
                let mut rng = Rng::new(seed * 11 + t);
                start.wait();
                for i in 0..EACH {
                    let v = match (i + t + seed) % 4 {
                        0 => f64::MAX,
                        1 => f64::MAX / (1u64 << (rng.next_u64() % 60)) as f64,
                        2 => 1.0,
                        _ => 1e300,
                    };
                    window.record(v).unwrap();
                }
                recorded.fetch_add(EACH, Ordering::Relaxed);
            });
        }
        let (window, clock, done, start) = (&window, &clock, &done, &start);
        s.spawn(move || {
            start.wait();
            while !done.load(Ordering::Relaxed) {
                clock.advance(Duration::from_nanos(100));
                window.maintain();
            }
        });
        while recorded.load(Ordering::Relaxed) < 2 * EACH {
            thread::yield_now();
        }
        done.store(true, Ordering::Relaxed);
    });
    let held = window.count() + u64::from(window.expired()) + u64::from(window.saturated());
    assert_eq!(held, 2 * EACH, "seed {seed}: {window:?}");
}

#[test]
fn exponential_records_at_the_top_of_the_range_are_conserved() {
    for seed in 0..iterations(300) {
        if seed % 2 == 0 {
            edge_run::<64>(seed);
        } else {
            edge_run::<5>(seed);
        }
    }
}

/// Phases of values only at the top of the float range and values only near 100, so that
/// recycled slots change scale and offset at every phase: a record preempted across two
/// clears lands in the bucket of its old position at the slot's new scale, possibly one
/// beyond the float range.
fn phase_run<const B: usize>(seed: u64) {
    use tailguard::clock::Clock;
    let clock = ManualClock::new();
    const INTERVAL: u64 = 200;
    let window =
        ExponentialWindow::<_, u16, B, 2>::new(&clock, Duration::from_nanos(INTERVAL)).unwrap();
    let recorded = AtomicU64::new(0);
    let done = AtomicBool::new(false);
    let start = Barrier::new(3);
    const EACH: u64 = 4_000;
    thread::scope(|s| {
        for t in 0..2u64 {
            let (window, recorded, start, clock) = (&window, &recorded, &start, &clock);
            s.spawn(move || {
                start.wait();
                for i in 0..EACH {
                    let phase = (clock.now().as_nanos() / INTERVAL / 3) % 2;
                    let v = if phase == 0 {
                        f64::MAX
                    } else {
                        90.0 + ((i + t + seed) % 20) as f64
                    };
                    window.record(v).unwrap();
                }
                recorded.fetch_add(EACH, Ordering::Relaxed);
            });
        }
        let (window, clock, done, start) = (&window, &clock, &done, &start);
        s.spawn(move || {
            start.wait();
            while !done.load(Ordering::Relaxed) {
                clock.advance(Duration::from_nanos(INTERVAL));
                window.maintain();
            }
        });
        while recorded.load(Ordering::Relaxed) < 2 * EACH {
            thread::yield_now();
        }
        done.store(true, Ordering::Relaxed);
    });
    let held = window.count() + u64::from(window.expired()) + u64::from(window.saturated());
    assert_eq!(held, 2 * EACH, "seed {seed}: {window:?}");
}

#[test]
fn exponential_records_across_phases_of_scale_are_conserved() {
    for seed in 0..iterations(300) {
        if seed % 2 == 0 {
            phase_run::<64>(seed);
        } else {
            phase_run::<16>(seed);
        }
    }
}
