//! The experiment (the embassy firmware's, ../embassy/src/run.rs, on RTIC): the same
//! stalling sensor read without hedging, then through `race` with a backup sensor, after a
//! warm-up in which the hedger learns the sensor's latency.
//!
//! 1. Unhedged: `READS` reads of sensor A (seed `SEED_A`), one at a time.
//! 2. Warm-up: `WARMUP` hedged reads of two other sensors; the hedger sends no hedge
//!    until its window holds `min_samples` latencies, then hedges at their p90.
//! 3. Hedged: `READS` reads of a replay of sensor A (the same seed, so the same stalls)
//!    through `race`, hedged to sensor B: the backups of read `i` are a sensor keyed
//!    by `i` (`Sensor::keyed`), as the embassy firmware's.
//!
//! A sketch of the answers' latencies summarizes phases 1 and 3 (`Summary`).

use core::time::Duration;

use tailguard::budget::RatioBudget;
use tailguard::clock::{Clock, Instant};
use tailguard::hedge::{race, Attempt, HedgeConfig, Hedger, McuHedger, Stats};
use tailguard::sketch::presets::{self, McuLatency};
use tailguard_support::sensor::Sensor;

use crate::clock::{sleep, sleep_micros, MonoClock};

/// The microcontroller preset: the integer mapping (no float on the record path), 32 bins
/// per octave (1.56 %), 100 µs .. 10 s in 534 bins.
pub type Sketch = McuLatency;
pub type SensorHedger = McuHedger<MonoClock, RatioBudget>;

/// Reads per phase.
pub const READS: u32 = 400;
pub const WARMUP: u32 = 100;
/// A read slower than this is a stall nobody rescued (a normal read takes 1-1.25 ms, a
/// rescued stall the hedge delay plus a normal read).
pub const SLOW: Duration = Duration::from_millis(10);

const SEED_A: u32 = 0x1234_5678;
const SEED_B: u32 = 0x9abc_def0;
const SEED_WARM_A: u32 = 0x0bad_cafe;
const SEED_WARM_B: u32 = 0x5eed_1e55;

/// Hedge at the p90 (the default) after 20 samples (the default), no sooner than 200 µs;
/// a window of 1-2 s, so it rotates during the run; 10 % of reads in hedges (the stalls
/// are 7 %), at most 10 tokens saved up.
pub const CONFIG: HedgeConfig = HedgeConfig::new()
    .with_min_delay(Duration::from_micros(200))
    .with_interval(Duration::from_secs(1))
    .with_budget_cap(10);

/// A phase's answers: how many, their p50 and p99, and how many were slower than `SLOW`.
#[derive(Debug)]
pub struct Summary {
    // Read by the log (Debug), which dead-code analysis does not count.
    #[allow(dead_code)]
    pub count: u64,
    pub p50_us: u32,
    pub p99_us: u32,
    pub slow: u32,
}

/// What the hedged phase did with the reads that stalled.
#[derive(Debug)]
pub struct Rescue {
    /// Primary reads that stalled.
    pub stalls: u32,
    /// Of those, answered within `SLOW` (by the hedge).
    pub rescued: u32,
    /// Answers from the backup.
    pub hedge_answers: u32,
}

/// Everything the checks judge.
pub struct Figures {
    pub unhedged: Summary,
    pub hedged: Summary,
    pub rescue: Rescue,
    /// The hedger's counters after the warm-up, and at the end.
    pub warm: Stats,
    pub end: Stats,
}

/// The hedger, built at compile time (`const` constructors): no start-up code. Its
/// window's intervals count from the monotonic's zero, where `MonoClock` starts.
pub static HEDGER: SensorHedger = match Hedger::with_origin(
    MonoClock,
    CONFIG,
    match RatioBudget::new(CONFIG.budget_ratio(), CONFIG.budget_cap()) {
        Ok(budget) => budget,
        Err(_) => panic!("invalid budget"), // a compile error
    },
    presets::MCU_LATENCY_LAYOUT,
    Instant::ZERO,
) {
    Ok(hedger) => hedger,
    Err(_) => panic!("invalid hedge configuration"), // a compile error
};

/// Runs the three phases with a fresh hedger ([`HEDGER`]).
pub async fn run(hedger: &SensorHedger) -> Figures {
    // The summary sketch lives in the task's future, which RTIC keeps in a static.
    let mut sketch: Sketch = presets::mcu_latency();

    // 1. Unhedged.
    let a = Sensor::new(SEED_A);
    let mut slow = 0;
    for _ in 0..READS {
        let start = MonoClock.now();
        let _ = a.next_read().perform(sleep_micros).await;
        slow += record(&mut sketch, MonoClock.now().duration_since(start));
    }
    let unhedged = summarize(&sketch, slow);

    // 2. Warm-up.
    let warm_a = Sensor::new(SEED_WARM_A);
    for i in 0..WARMUP {
        let warm_b = Sensor::keyed(SEED_WARM_B, i);
        let _ = race(
            hedger,
            warm_a.read(sleep_micros),
            || warm_b.read(sleep_micros),
            sleep,
        )
        .await;
    }
    let warm = hedger.stats();

    // 3. Hedged, the same reads of A as in phase 1.
    let a = Sensor::new(SEED_A);
    sketch.clear();
    let (mut slow, mut stalls, mut rescued, mut hedge_answers) = (0, 0, 0, 0);
    for i in 0..READS {
        let b = Sensor::keyed(SEED_B, i);
        let read = a.next_read();
        let stalled = read.stalls;
        let won = match race(
            hedger,
            read.perform(sleep_micros),
            || b.read(sleep_micros),
            sleep,
        )
        .await
        {
            Ok(won) => won,
            // No read fails and there is no deadline: an error here is a bug.
            Err(e) => panic!("race failed: {e:?}"),
        };
        let was_slow = record(&mut sketch, won.latency);
        slow += was_slow;
        stalls += u32::from(stalled);
        rescued += u32::from(stalled && was_slow == 0);
        hedge_answers += u32::from(won.attempt != Attempt::Primary);
    }
    let hedged = summarize(&sketch, slow);

    Figures {
        unhedged,
        hedged,
        rescue: Rescue {
            stalls,
            rescued,
            hedge_answers,
        },
        warm,
        end: hedger.stats(),
    }
}

/// Records a latency; 1 if it was slow, else 0.
fn record(sketch: &mut Sketch, latency: Duration) -> u32 {
    sketch.record_u64(u64::try_from(latency.as_nanos()).unwrap_or(u64::MAX));
    u32::from(latency > SLOW)
}

fn summarize(sketch: &Sketch, slow: u32) -> Summary {
    let micros = |q| match sketch.quantile(q) {
        Ok(Some(ns)) => (ns / 1_000.0) as u32,
        _ => 0,
    };
    Summary {
        count: sketch.count(),
        p50_us: micros(0.5),
        p99_us: micros(0.99),
        slow,
    }
}
