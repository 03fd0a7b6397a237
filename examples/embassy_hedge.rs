//! Hedged sensor reads on an embassy executor (std driver here; the same code runs on a
//! microcontroller with its own time driver, as firmware/embassy/ does).
//!
//! Two redundant sensors answer the same query in about 1 ms, but each stalls now and
//! then (7 % of reads take 20 ms): the support crate's simulated sensor, which the embassy
//! firmware hedges too. Every read goes to sensor A; when A has not answered by its
//! learned p90, a backup read goes to sensor B and the first answer wins.
//!
//! ```text
//! cargo run --example embassy_hedge --features embassy-time
//! ```

use core::time::Duration;

use embassy_executor::Spawner;
use embassy_time::Timer;
use tailguard::clock::EmbassyClock;
use tailguard::hedge::{race_embassy, Attempt, HedgeConfig, Hedger};
use tailguard_support::sensor::Sensor;

const READS: u32 = 300;

/// What a read sleeps with: embassy's timer.
async fn sleep(micros: u64) {
    Timer::after(embassy_time::Duration::from_micros(micros)).await
}

#[embassy_executor::main]
async fn main(_spawner: Spawner) {
    let config = HedgeConfig::new()
        .with_min_samples(30)
        .with_min_delay(Duration::from_micros(500));
    let hedger = Hedger::new(EmbassyClock, config).expect("valid configuration");
    let (a, b) = (Sensor::new(0x1234_5678), Sensor::new(0x9abc_def0));

    // Reads slower than 10 ms (a stall nobody rescued), before and after the hedger has
    // learned the sensors' latency.
    let (mut stalled_cold, mut stalled_warm, mut from_b) = (0, 0, 0);
    for i in 0..READS {
        match race_embassy(&hedger, a.read(sleep), || b.read(sleep)).await {
            Ok(won) => {
                if won.latency > Duration::from_millis(10) {
                    if i < config.min_samples() {
                        stalled_cold += 1;
                    } else {
                        stalled_warm += 1;
                    }
                }
                if won.attempt != Attempt::Primary {
                    from_b += 1;
                }
            }
            Err(e) => println!("read failed: {e}"),
        }
    }

    let window = hedger.window();
    let ms = |q: f64| window.quantile(q).ok().flatten().unwrap_or(0.0) / 1e6;
    println!("{READS} reads from sensor A hedged to sensor B");
    println!("{}", hedger.stats());
    println!(
        "answers from B: {from_b}; stalled reads: {stalled_cold} of the first {} (learning), \
         {stalled_warm} of the other {}",
        config.min_samples(),
        READS - config.min_samples()
    );
    println!(
        "recorded latency p50 {:.2} ms, p90 {:.2} ms, p99 {:.2} ms",
        ms(0.5),
        ms(0.9),
        ms(0.99)
    );
    std::process::exit(0);
}
