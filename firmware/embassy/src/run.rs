//! The experiment: the same stalling sensor read without hedging, then through
//! `race_embassy` with a backup sensor, after a warm-up in which the hedger learns the
//! sensor's latency.
//!
//! 1. Unhedged: `READS` reads of sensor A (seed `SEED_A`), one at a time.
//! 2. Warm-up: `WARMUP` hedged reads of two other sensors; the hedger sends no hedge
//!    until its window holds `min_samples` latencies, then hedges at their p90.
//! 3. Hedged: `READS` reads of a replay of sensor A (the same seed, so the same stalls)
//!    through `race_embassy`, hedged to sensor B.
//!
//! The backups of read `i` are a sensor keyed by `i` ([`Sensor::keyed`]), not one stream:
//! with a stream, one hedge more or less (a normal read a little over the delay) shifts
//! every later backup read, and which stalls meet a stalled backup would change with the
//! hedger's timing, not its quality. Keyed, both hedgers face the same backups.
//!
//! A sketch of the answers' latencies summarizes phases 1 and 3 (`Summary`).

use core::time::Duration;

#[cfg(not(feature = "compact"))]
use tailguard::budget::RatioBudget;
use tailguard::clock::{Clock, EmbassyClock, Instant};
#[cfg(not(feature = "compact"))]
use tailguard::hedge::McuHedger;
use tailguard::hedge::{race_embassy, Attempt, HedgeConfig, HedgeError, Hedger, Stats};
#[cfg(feature = "compact")]
use tailguard::hedge::{HedgePreset, PresetCompactHedger};
#[cfg(not(feature = "compact"))]
use tailguard::sketch::presets;
use tailguard::sketch::presets::McuLatency;

use crate::sensor::{sleep, Sensor};

/// The microcontroller preset: the integer mapping (no float on the record path), 32 bins
/// per octave (1.56 %), 100 µs .. 10 s in 534 bins; its hedger (a window of three such
/// sketches) and the summary sketch fit the micro:bit's 16 KiB of RAM with the executor.
/// The summary stays this sketch with either hedger: it measures, it does not hedge.
pub type Sketch = McuLatency;
/// The hedger: `McuHedger` (a window of three `McuLatency` sketches), or with the
/// `compact` feature a `CompactHedger` (three slots of 64 `u16` exponential buckets whose
/// scale follows the latencies) of preset [`Config`], all zero bytes (`.bss`), to compare
/// the two on the same run.
#[cfg(not(feature = "compact"))]
pub type SensorHedger = McuHedger<EmbassyClock, RatioBudget>;
#[cfg(feature = "compact")]
pub type SensorHedger = PresetCompactHedger<EmbassyClock, Config>;
/// Which of the two, for the log.
pub const HEDGER_NAME: &str = if cfg!(feature = "compact") {
    "CompactHedger"
} else {
    "McuHedger"
};

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

/// [`CONFIG`] as the compact hedger's preset, which it stores as zero bytes.
#[cfg(feature = "compact")]
pub struct Config;
#[cfg(feature = "compact")]
impl HedgePreset for Config {
    const CONFIG: HedgeConfig = CONFIG;
}

/// A phase's answers: how many, their p50 and p99, and how many were slower than `SLOW`.
#[derive(defmt::Format)]
pub struct Summary {
    pub count: u64,
    pub p50_us: u32,
    pub p99_us: u32,
    pub slow: u32,
}

/// What the hedged phase did with the reads that stalled.
#[derive(defmt::Format)]
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

/// The hedger, built at compile time (`const` constructors): no start-up code and no stack
/// to build it. Its window's intervals count from embassy-time's zero, where the clock
/// starts.
pub static HEDGER: SensorHedger = match build_hedger() {
    Ok(hedger) => hedger,
    Err(_) => panic!("invalid hedge configuration"), // a compile error
};

/// `McuHedger`'s window takes the preset's layout (its range, 100 µs .. 10 s); its budget
/// is `CONFIG`'s ratio and cap.
#[cfg(not(feature = "compact"))]
const fn build_hedger() -> Result<SensorHedger, HedgeError> {
    let budget = match RatioBudget::new(CONFIG.budget_ratio(), CONFIG.budget_cap()) {
        Ok(budget) => budget,
        Err(_) => panic!("invalid budget"), // a compile error
    };
    Hedger::with_origin(
        EmbassyClock,
        CONFIG,
        budget,
        presets::MCU_LATENCY_LAYOUT,
        Instant::ZERO,
    )
}

/// `CompactHedger`'s window has no range to choose: its scale follows the latencies.
#[cfg(feature = "compact")]
const fn build_hedger() -> Result<SensorHedger, HedgeError> {
    Hedger::preset(EmbassyClock, Instant::ZERO)
}

/// Runs the three phases with a fresh hedger ([`HEDGER`]), summarizing in `sketch` (an
/// empty [`Sketch`]).
pub async fn run(hedger: &SensorHedger, sketch: &mut Sketch) -> Figures {
    // 1. Unhedged.
    let a = Sensor::new(SEED_A);
    let mut slow = 0;
    for _ in 0..READS {
        let start = EmbassyClock.now();
        let _ = a.next_read().perform(sleep).await;
        slow += record(sketch, EmbassyClock.now().duration_since(start));
    }
    let unhedged = summarize(sketch, slow);
    defmt::info!("unhedged latencies {}", sketch);

    // 2. Warm-up.
    let warm_a = Sensor::new(SEED_WARM_A);
    for i in 0..WARMUP {
        let warm_b = Sensor::keyed(SEED_WARM_B, i);
        let _ = race_embassy(hedger, warm_a.read(sleep), || warm_b.read(sleep)).await;
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
        let won = match race_embassy(hedger, read.perform(sleep), || b.read(sleep)).await {
            Ok(won) => won,
            // No read fails and there is no deadline: an error here is a bug.
            Err(e) => defmt::panic!("race failed: {}", e),
        };
        let was_slow = record(sketch, won.latency);
        slow += was_slow;
        stalls += u32::from(stalled);
        rescued += u32::from(stalled && was_slow == 0);
        hedge_answers += u32::from(won.attempt != Attempt::Primary);
    }
    let hedged = summarize(sketch, slow);
    defmt::info!("hedged latencies {}", sketch);

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
