//! The exponential window under contention: records racing rescales, rotations and
//! queries are conserved exactly, and placed in the bucket of their value. Scaled down
//! under miri (`cargo +nightly miri test --test exponential_window`).

use core::time::Duration;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread;

#[cfg(not(miri))]
use proptest::prelude::*;
use tailguard::clock::{Clock, Instant, ManualClock};
use tailguard::sketch::ExponentialSketch;
use tailguard::window::ExponentialWindow;
use tailguard_support::Rng;

const THREADS: u64 = 4;
const RECORDS: u64 = if cfg!(miri) { 300 } else { 400_000 };

/// Latencies spreading over time: thread `t`'s `i`-th of `n` values reaches further out
/// as `i` grows (so the slot keeps rescaling), from a microsecond to hours.
fn spreading(rng: &mut Rng, i: u64, n: u64) -> u64 {
    let reach = 1.0 + 20.0 * i as f64 / n as f64; // in e-folds
    if rng.unit() < 0.02 {
        return 0;
    }
    (1_000.0 * (reach * (rng.unit() - 0.3)).exp()) as u64
}

/// Recorders (some advancing the clock), a thread advancing it further and querying:
/// at the end every record is in the window, expired or counted as saturated, exactly.
#[test]
fn every_record_is_conserved_while_rescaling_and_rotating() {
    let clock = ManualClock::new();
    let window = ExponentialWindow::<_, u16, 64>::new(&clock, Duration::from_millis(1)).unwrap();
    let recorded = AtomicU64::new(0);
    let done = AtomicBool::new(false);
    thread::scope(|s| {
        for t in 0..THREADS {
            let (window, recorded, clock) = (&window, &recorded, &clock);
            s.spawn(move || {
                let mut rng = Rng::new(40 + t);
                for i in 0..RECORDS {
                    if i % 256 == 0 {
                        clock.advance(Duration::from_micros(200));
                    }
                    window.record_u64(spreading(&mut rng, i % 20_000, 20_000));
                }
                recorded.fetch_add(RECORDS, Ordering::Relaxed);
            });
        }
        let (window, clock, done) = (&window, &clock, &done);
        s.spawn(move || {
            let mut rng = Rng::new(9);
            while !done.load(Ordering::Relaxed) {
                let step = if rng.unit() < 0.01 {
                    10_000_000
                } else {
                    300_000
                };
                clock.advance(Duration::from_nanos(step));
                let _ = window.quantile(0.99).unwrap();
                window.maintain();
            }
        });
        while recorded.load(Ordering::Relaxed) < THREADS * RECORDS {
            thread::yield_now();
        }
        done.store(true, Ordering::Relaxed);
    });
    // Rescales happen too, unless a preempted rotator held the lock whenever a value fell
    // outside (those are clamped, and counted in the window).
    assert!(window.rotations() > 0, "{window:?}");
    let held = window.count() + u64::from(window.expired()) + u64::from(window.saturated());
    assert_eq!(held, THREADS * RECORDS, "{window:?}");
}

/// With no rotation, every value racing the rescales ends in the bucket of its value at
/// the window's final scale (but for the clamped ones, each of which may be one bucket
/// off and is counted): the snapshot equals an exact sketch of the same values, bucket
/// for bucket, at that scale.
#[test]
fn records_racing_rescales_land_in_their_buckets() {
    let clock = ManualClock::new();
    let window = ExponentialWindow::<_, u32, 16>::new(&clock, Duration::from_secs(3600)).unwrap();
    let tallies: Vec<ExponentialSketch<u32, 16_384>> = thread::scope(|s| {
        let workers: Vec<_> = (0..THREADS)
            .map(|t| {
                let window = &window;
                s.spawn(move || {
                    let mut rng = Rng::new(70 + t);
                    let mut tally = ExponentialSketch::new();
                    for i in 0..RECORDS / 4 {
                        let v = spreading(&mut rng, i, RECORDS / 4);
                        window.record_u64(v);
                        tally.record_u64(v);
                    }
                    tally
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    let mut exact = ExponentialSketch::<u32, 16_384>::new();
    tallies.iter().for_each(|t| exact.merge(t));
    let snapshot = window.snapshot();
    assert!(window.rescales() >= 2, "{window:?}");
    // A record that found a rescale under way on every look counts as expired (and raced).
    assert!(
        window.expired() <= window.raced() && window.saturated() == 0,
        "{window:?}"
    );
    assert_eq!(
        snapshot.count() + u64::from(window.expired()),
        THREADS * (RECORDS / 4)
    );
    // Both at one scale: each sketch plus the snapshot.
    let (mut left, mut right) = (
        ExponentialSketch::<u32, 16>::new(),
        ExponentialSketch::<u32, 16>::new(),
    );
    left.merge(&exact);
    left.merge(&snapshot);
    right.merge(&snapshot);
    right.merge(&snapshot);
    assert_eq!(
        (left.scale(), left.offset()),
        (right.scale(), right.offset())
    );
    let off: u64 = left
        .bucket_counts()
        .zip(right.bucket_counts())
        .map(|(a, b)| a.abs_diff(b))
        .sum();
    let allowed = 2 * u64::from(window.clamped() + window.raced());
    assert!(
        off <= allowed,
        "{off} values off, {allowed} allowed: {window:?}"
    );
    assert_eq!(left.zero_count(), right.zero_count());
}

// Not under miri, which isolates the file system proptest keeps its failures in.
#[cfg(not(miri))]
proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Every quantile is within the relative accuracy of the snapshot's scale of the exact
    /// quantile (the rank rule's `floor(q * (n - 1))`), whatever the values and whatever
    /// rescales they caused.
    #[test]
    fn quantiles_are_within_the_reported_accuracy(
        values in prop::collection::vec(1u64..u64::MAX >> 8, 1..400),
        q in 0.0f64..=1.0,
    ) {
        let clock = ManualClock::new();
        let window = ExponentialWindow::<_, u16, 48>::new(&clock, Duration::from_secs(1)).unwrap();
        values.iter().for_each(|&v| window.record_u64(v));
        let mut sorted = values.clone();
        sorted.sort_unstable();
        let snapshot = window.snapshot();
        let exact = sorted[(q * (sorted.len() - 1) as f64).floor() as usize] as f64;
        let got = snapshot.quantile(q).unwrap().unwrap();
        let accuracy = snapshot.relative_accuracy();
        // As the ledger states it, in f64, with no slack.
        prop_assert!((got - exact).abs() <= accuracy * exact, "{got} vs {exact} at {accuracy}");
        prop_assert_eq!(window.count(), values.len() as u64);
    }
}

/// One seeded run of hostile use: values of every kind (zero, `u64::MAX`, any float's bits),
/// clocks that stand, creep, leap by up to 2^62 ns and go back, maintenance and queries at
/// random, records rotating or not. Nothing panics and every record accepted is counted.
fn hostile_run<const B: usize, const SLOTS: usize>(seed: u64, rotate: bool) {
    let clock = ManualClock::new();
    let interval = Duration::from_nanos(8 + seed % 5_000);
    let window = ExponentialWindow::<_, u16, B, SLOTS>::new(&clock, interval)
        .unwrap()
        .with_rotate_on_record(rotate);
    let mut rng = Rng::new(seed);
    let mut recorded = 0u64;
    for _ in 0..2_000 {
        let r = rng.unit();
        if r < 0.1 {
            let step = match rng.next_u64() % 6 {
                0 => 0,
                1 => 1,
                2 => 1_000,
                3 => rng.next_u64() >> (rng.next_u64() % 64),
                4 => u64::MAX / 3,
                _ => 7,
            };
            let now = clock.now().as_nanos();
            if rng.unit() < 0.1 && now > step {
                clock.set(Instant::from_nanos(now - step));
            } else {
                clock.advance(Duration::from_nanos(step.min(u64::MAX - now)));
            }
        } else if r < 0.15 {
            window.maintain();
        } else if r < 0.17 {
            let _ = window.quantile(rng.unit()).unwrap();
        } else if r < 0.3 {
            if window.record(f64::from_bits(rng.next_u64())).is_ok() {
                recorded += 1;
            }
        } else {
            let v = match rng.next_u64() % 5 {
                0 => 0,
                1 => u64::MAX,
                2 => rng.next_u64(),
                _ => rng.next_u64() >> (rng.next_u64() % 64),
            };
            window.record_u64(v);
            recorded += 1;
        }
    }
    let held = window.count() + u64::from(window.expired()) + u64::from(window.saturated());
    assert_eq!(
        held, recorded,
        "seed {seed}, {B} buckets, {SLOTS} slots: {window:?}"
    );
}

#[test]
fn any_values_and_clocks_never_panic_and_conserve_every_record() {
    let runs = if cfg!(miri) { 4 } else { 4_000 };
    for seed in 0..runs {
        let rotate = seed % 2 == 0;
        match seed % 4 {
            0 => hostile_run::<2, 2>(seed, rotate),
            1 => hostile_run::<3, 8>(seed, rotate),
            2 => hostile_run::<64, 3>(seed, rotate),
            _ => hostile_run::<7, 5>(seed, rotate),
        }
    }
}
