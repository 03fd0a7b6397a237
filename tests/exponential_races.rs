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

type Window<'a, const B: usize, const SLOTS: usize> =
    ExponentialWindow<&'a ManualClock, u16, B, SLOTS>;

fn iterations(default: u64) -> u64 {
    std::env::var("TAILGUARD_RACE_ITERS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// Two recorders, thread `t` calling `record(window, rng, t, i)` for `i` in `0..each`,
/// while a third advances the clock by `step` and maintains (and counts, now and then)
/// until they are done; then every record must be held, expired or saturated.
fn race<const B: usize, const SLOTS: usize>(
    window: &Window<'_, B, SLOTS>,
    clock: &ManualClock,
    step: Duration,
    each: u64,
    seed: u64,
    record: impl Fn(&Window<'_, B, SLOTS>, &mut Rng, u64, u64) + Sync,
) {
    let recorded = AtomicU64::new(0);
    let done = AtomicBool::new(false);
    let start = Barrier::new(3);
    thread::scope(|s| {
        for t in 0..2u64 {
            let (recorded, start, record) = (&recorded, &start, &record);
            s.spawn(move || {
                let mut rng = Rng::new(seed.wrapping_mul(7).wrapping_add(t));
                start.wait();
                for i in 0..each {
                    record(window, &mut rng, t, i);
                }
                recorded.fetch_add(each, Ordering::Relaxed);
            });
        }
        let (done, start) = (&done, &start);
        s.spawn(move || {
            start.wait();
            let mut k = 0u64;
            while !done.load(Ordering::Relaxed) {
                clock.advance(step);
                window.maintain();
                if k.is_multiple_of(5) {
                    let _ = window.count();
                }
                k += 1;
                thread::yield_now();
            }
        });
        while recorded.load(Ordering::Relaxed) < 2 * each {
            thread::yield_now();
        }
        done.store(true, Ordering::Relaxed);
    });
    window.maintain();
    let held = window.count() + u64::from(window.expired()) + u64::from(window.saturated());
    assert_eq!(held, 2 * each, "seed {seed}: {window:?}");
}

/// Extremes (and zeros) alternating, so that records race rescales and rotations.
fn extremes<const B: usize, const SLOTS: usize>(seed: u64, rotate: bool, step_ns: u64) {
    let clock = ManualClock::new();
    let window = Window::<B, SLOTS>::new(&clock, Duration::from_micros(50))
        .unwrap()
        .with_rotate_on_record(rotate);
    let step = Duration::from_nanos(step_ns);
    race(&window, &clock, step, 2_000, seed, |w, rng, t, i| {
        w.record_u64(match (i + t) % 5 {
            0 => 1,
            1 => 1 << 60,
            2 => 0,
            3 => rng.next_u64() >> (rng.next_u64() % 64),
            _ => 1_000 + (i % 7),
        });
    });
}

#[test]
fn exponential_extremes_racing_rescales_and_rotations_are_conserved() {
    for seed in 0..iterations(300) {
        let rotate = seed % 2 == 0;
        let step = [3_000, 20_000, 60_000][(seed % 3) as usize];
        match (seed / 2) % 3 {
            0 => extremes::<64, 3>(seed, rotate, step),
            1 => extremes::<64, 2>(seed, rotate, step),
            _ => extremes::<4, 4>(seed, rotate, step),
        }
    }
}

/// Counters pushed past the u16 limit while rescales merge buckets: a rescale that merges
/// two full buckets cannot hold them, and must count the excess as saturated.
fn saturating<const B: usize>(seed: u64, rotate: bool) {
    let clock = ManualClock::new();
    let window = Window::<B, 3>::new(&clock, Duration::from_secs(3600))
        .unwrap()
        .with_rotate_on_record(rotate);
    let each = u64::from(<u16 as WindowCounter>::LIMIT) + 5_000;
    race(&window, &clock, Duration::ZERO, each, seed, |w, _, t, i| {
        // Neighbouring values, so that they share a bucket once rescaled.
        w.record_u64(if (i + seed).is_multiple_of(4_096) {
            1u64 << (20 + (i + t) % 40)
        } else {
            1_000_000 + (t * 3 + i % 3)
        });
    });
}

#[test]
fn exponential_counters_at_the_u16_limit_are_conserved_across_rescales() {
    for seed in 0..iterations(40) {
        let rotate = seed % 2 == 0;
        if seed % 4 < 2 {
            saturating::<4>(seed, rotate);
        } else {
            saturating::<64>(seed, rotate);
        }
    }
}

/// Records near the top of the float range (whose slots have buckets beyond it) racing
/// rotations and rescales that change the slots' scale: a record preempted across two
/// clears lands in some bucket of the slot's new scale.
fn top_of_range<const B: usize>(seed: u64) {
    let clock = ManualClock::new();
    let step = Duration::from_nanos(100);
    let window = Window::<B, 2>::new(&clock, step).unwrap();
    race(&window, &clock, step, 3_000, seed, |w, rng, t, i| {
        let v = match (i + t + seed) % 4 {
            0 => f64::MAX,
            1 => f64::MAX / (1u64 << (rng.next_u64() % 60)) as f64,
            2 => 1.0,
            _ => 1e300,
        };
        w.record(v).unwrap();
    });
}

#[test]
fn exponential_records_at_the_top_of_the_range_are_conserved() {
    for seed in 0..iterations(300) {
        if seed % 2 == 0 {
            top_of_range::<64>(seed);
        } else {
            top_of_range::<5>(seed);
        }
    }
}

/// Phases of values only at the top of the float range and values only near 100, so that
/// recycled slots change scale and offset at every phase: a record preempted across two
/// clears lands in the bucket of its old position at the slot's new scale, possibly one
/// beyond the float range.
fn phases<const B: usize>(seed: u64) {
    use tailguard::clock::Clock;
    const INTERVAL: u64 = 200;
    let clock = ManualClock::new();
    let step = Duration::from_nanos(INTERVAL);
    let window = Window::<B, 2>::new(&clock, step).unwrap();
    race(&window, &clock, step, 4_000, seed, |w, _, t, i| {
        let phase = (w.clock().now().as_nanos() / INTERVAL / 3) % 2;
        let v = if phase == 0 {
            f64::MAX
        } else {
            90.0 + ((i + t + seed) % 20) as f64
        };
        w.record(v).unwrap();
    });
}

#[test]
fn exponential_records_across_phases_of_scale_are_conserved() {
    for seed in 0..iterations(300) {
        if seed % 2 == 0 {
            phases::<64>(seed);
        } else {
            phases::<16>(seed);
        }
    }
}
