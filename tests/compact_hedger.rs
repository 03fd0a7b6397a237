//! The compact hedger (an auto-scaling exponential window) against the microcontroller
//! preset's on the same requests: the same policy, a delay within its bucket of the true
//! percentile, and the same stalls rescued.

use core::time::Duration;

use tailguard::budget::{Budget, RatioBudget};
use tailguard::clock::{Clock, Instant, ManualClock};
use tailguard::hedge::{
    Attempt, CompactHedger, Decision, HedgeConfig, HedgePolicy, HedgePreset, Hedger, McuHedger,
    PresetCompactHedger, SkipReason,
};
use tailguard::sketch::presets;

/// A deterministic sensor-like workload: latencies in ns, 700-1100 µs, one in 25 a stall
/// of 40-60 ms.
fn latencies(n: usize) -> Vec<u64> {
    let mut x = 0x2545_f491_4f6c_dd1du64;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            if x.is_multiple_of(25) {
                40_000_000 + x % 20_000_000
            } else {
                700_000 + x % 400_000
            }
        })
        .collect()
}

/// Runs the requests through `hedger`: a backup (answering in 1 ms) is sent when the
/// hedger says; returns the requests whose backup answered first (rescued) and the
/// delays asked for.
fn run(hedger: &dyn HedgePolicy, clock: &ManualClock, requests: &[u64]) -> (u32, Vec<u64>) {
    let mut rescued = 0;
    let mut delays = Vec::new();
    for &latency in requests {
        let start = clock.now().as_nanos();
        let mut ticket = hedger.start();
        let end = match hedger.should_hedge(&mut ticket) {
            Decision::Wait(wait) => {
                let wait = wait.as_nanos() as u64;
                delays.push(wait);
                if latency <= wait {
                    start + latency
                } else {
                    clock.advance(Duration::from_nanos(wait));
                    match hedger.should_hedge(&mut ticket) {
                        Decision::Hedge if wait + 1_000_000 < latency => {
                            clock.advance(Duration::from_nanos(1_000_000));
                            hedger.on_success(&ticket, Attempt::Hedge(1));
                            rescued += 1;
                            continue;
                        }
                        _ => start + latency,
                    }
                }
            }
            Decision::Skip(SkipReason::ColdStart | SkipReason::Budget) => start + latency,
            other => panic!("{other:?}"),
        };
        clock.set(Instant::from_nanos(end));
        hedger.on_success(&ticket, Attempt::Primary);
    }
    (rescued, delays)
}

#[test]
fn the_compact_hedger_rescues_what_the_mcu_hedger_does_in_a_fifth_of_the_memory() {
    let config = HedgeConfig::new()
        .with_min_samples(20)
        .with_min_delay(Duration::from_micros(100))
        .with_interval(Duration::from_secs(5));
    let requests = latencies(20_000);
    let mcu_clock = ManualClock::new();
    let mcu: McuHedger<_> =
        Hedger::with_layout(&mcu_clock, config, presets::MCU_LATENCY_LAYOUT).unwrap();
    let compact_clock = ManualClock::new();
    let compact: CompactHedger<_> = Hedger::exponential(&compact_clock, config).unwrap();
    let (mcu_rescued, mcu_delays) = run(&mcu, &mcu_clock, &requests);
    let (compact_rescued, compact_delays) = run(&compact, &compact_clock, &requests);
    // Every stall is rescued by both once warm (the budget allows 10 %; stalls are 4 %).
    let stalls = requests.iter().filter(|&&l| l > 10_000_000).count() as u32;
    assert!(mcu_rescued + 5 >= stalls, "{mcu_rescued} of {stalls}");
    assert!(
        compact_rescued + 5 >= stalls && compact_rescued.abs_diff(mcu_rescued) <= 2,
        "{compact_rescued} vs {mcu_rescued} of {stalls}"
    );
    // The delays are the MCU hedger's to within the compact window's wider buckets.
    let median = |d: &mut Vec<u64>| {
        d.sort_unstable();
        d[d.len() / 2]
    };
    let (m, c) = (
        median(&mut mcu_delays.clone()),
        median(&mut compact_delays.clone()),
    );
    assert!(
        c as f64 >= m as f64 * 0.97 && (c as f64) <= m as f64 * 1.2,
        "{c} vs {m}"
    );
    assert!(
        core::mem::size_of_val(&compact) * 5 < core::mem::size_of_val(&mcu),
        "{} vs {}",
        core::mem::size_of_val(&compact),
        core::mem::size_of_val(&mcu)
    );
}

/// The firmware's configuration, as a preset.
struct Sensor;
impl HedgePreset for Sensor {
    const CONFIG: HedgeConfig = HedgeConfig::new()
        .with_min_samples(20)
        .with_min_delay(Duration::from_micros(200))
        .with_interval(Duration::from_secs(1))
        .with_budget_cap(10);
}

/// A hedger of a preset (which stores that configuration as zero bytes) decides as a
/// hedger built with the same configuration that stores it as it is, request by request.
#[test]
fn a_preset_hedger_decides_as_one_built_with_its_configuration() {
    let requests = latencies(20_000);
    let preset_clock = ManualClock::new();
    let preset: PresetCompactHedger<_, Sensor> =
        Hedger::preset(&preset_clock, Instant::ZERO).unwrap();
    let plain_clock = ManualClock::new();
    let budget = RatioBudget::new(Sensor::CONFIG.budget_ratio(), Sensor::CONFIG.budget_cap());
    let plain: CompactHedger<_> = Hedger::exponential_with_origin(
        &plain_clock,
        Sensor::CONFIG,
        budget.unwrap(),
        Instant::ZERO,
    )
    .unwrap();
    assert_eq!(preset.config(), plain.config());
    assert_eq!(
        (
            preset.budget().ratio(),
            preset.budget().cap(),
            preset.budget().balance()
        ),
        (0.1, 10, 10.0)
    );
    let (preset_rescued, preset_delays) = run(&preset, &preset_clock, &requests);
    let (plain_rescued, plain_delays) = run(&plain, &plain_clock, &requests);
    assert_eq!(
        (preset_rescued, &preset_delays),
        (plain_rescued, &plain_delays)
    );
    assert_eq!(preset.stats(), plain.stats());
    assert_eq!(preset.budget().balance(), plain.budget().balance());
    assert!(preset_rescued > 700, "{preset_rescued}");
}

/// Invalid presets: the preset constructor refuses each with the error the plain
/// constructor gives for that configuration, at run time here (a compile error in a
/// `static`), and nothing panics computing what they key.
#[test]
fn an_invalid_preset_is_refused_as_its_configuration_is() {
    fn refused<P: HedgePreset>() {
        let clock = ManualClock::new();
        let preset: Result<PresetCompactHedger<_, P>, _> = Hedger::preset(&clock, Instant::ZERO);
        let plain: Result<CompactHedger<_>, _> = Hedger::exponential(&clock, P::CONFIG);
        assert!(plain.is_err());
        assert_eq!(preset.err(), plain.err());
    }
    macro_rules! preset {
        ($name:ident, $config:expr) => {
            struct $name;
            impl HedgePreset for $name {
                const CONFIG: HedgeConfig = $config;
            }
            refused::<$name>();
        };
    }
    preset!(NanPercentile, HedgeConfig::new().with_percentile(f64::NAN));
    preset!(
        TooMany,
        HedgeConfig::new().with_percentiles(&[0.5, 0.6, 0.7])
    );
    preset!(NanRatio, HedgeConfig::new().with_budget_ratio(f64::NAN));
    preset!(NoCap, HedgeConfig::new().with_budget_cap(0));
    preset!(NanChance, HedgeConfig::new().with_on_time_chance(f64::NAN));
    preset!(NoInterval, HedgeConfig::new().with_interval(Duration::ZERO));
    preset!(
        Inverted,
        HedgeConfig::new()
            .with_min_delay(Duration::from_secs(2))
            .with_max_delay(Duration::from_secs(1))
    );
}
