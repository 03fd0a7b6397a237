//! Hedged reads on smol's executor, with async-io's timer as the sleep and the host's clock.
//!
//! Two replicas answer the same read in about 1 ms, but each stalls now and then (7 % of
//! reads take 20 ms): the support crate's simulated sensor stands in for them. First every
//! read goes to replica A alone; then the same number go through [`race`]: to A, and when A
//! has not answered by its learned p90, a backup to replica B, the first answer winning
//! (the loser is dropped). The program prints the latency of both runs and the hedger's
//! counters.
//!
//! ```text
//! cargo run --example smol_hedge --features std
//! ```

use std::time::{Duration, Instant};

use smol::Timer; // async-io's `Timer`, re-exported by smol
use tailguard::clock::StdClock;
use tailguard::hedge::{race, Attempt, HedgeConfig, Hedger};
use tailguard_support::sensor::Sensor;

const READS: usize = 300;

/// What a replica sleeps with: the sensor's sleep takes microseconds.
async fn sleep_micros(micros: u64) {
    Timer::after(Duration::from_micros(micros)).await;
}

/// The `q` quantile of `latencies` (nearest rank), in milliseconds.
fn ms(latencies: &mut [Duration], q: f64) -> f64 {
    latencies.sort_unstable();
    let rank = ((latencies.len() as f64 * q).ceil() as usize).clamp(1, latencies.len());
    latencies[rank - 1].as_secs_f64() * 1e3
}

fn main() {
    let config = HedgeConfig::new()
        .with_min_samples(30)
        .with_min_delay(Duration::from_micros(500));
    let hedger = Hedger::new(StdClock::new(), config).expect("valid configuration");
    let (a, b) = (Sensor::new(0x1234_5678), Sensor::new(0x9abc_def0));
    // `race` takes any `FnMut(Duration) -> impl Future<Output = ()>` as its timer.
    let sleep = |d: Duration| async move {
        Timer::after(d).await;
    };

    smol::block_on(async {
        // Before: replica A alone.
        let mut unhedged = Vec::with_capacity(READS);
        for _ in 0..READS {
            let start = Instant::now();
            let _ = a.read(sleep_micros).await;
            unhedged.push(start.elapsed());
        }

        // After: hedged to replica B. The first `min_samples` reads only teach the hedger.
        let mut hedged = Vec::with_capacity(READS);
        let mut from_b = 0;
        for i in 0..READS {
            let start = Instant::now();
            match race(
                &hedger,
                a.read(sleep_micros),
                || b.read(sleep_micros),
                sleep,
            )
            .await
            {
                Ok(won) => {
                    if won.attempt != Attempt::Primary {
                        from_b += 1;
                    }
                }
                Err(e) => println!("read failed: {e}"),
            }
            if i >= config.min_samples() as usize {
                hedged.push(start.elapsed());
            }
        }

        println!("{READS} reads from replica A alone, then {READS} hedged to replica B");
        println!("{}", hedger.stats());
        println!(
            "answers from B: {from_b} (hedged p50/p99 after the first {} reads)",
            config.min_samples()
        );
        println!(
            "unhedged: p50 {:.2} ms, p99 {:.2} ms",
            ms(&mut unhedged, 0.5),
            ms(&mut unhedged, 0.99)
        );
        println!(
            "hedged:   p50 {:.2} ms, p99 {:.2} ms",
            ms(&mut hedged, 0.5),
            ms(&mut hedged, 0.99)
        );
    });
}
