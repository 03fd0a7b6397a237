//! An arbitrary sequence of window and budget operations, with a clock started anywhere in
//! its 64-bit range that jumps forward (by up to 2^33 ticks of each coarse clock: the
//! window's intervals, the token bucket's units) and backward (a little, or by years),
//! checked against simple reference models after every step: the window conserves every
//! record (`count + expired + saturated`), a step or jump of `SLOTS - 1` intervals past
//! every reading so far empties it, the ratio budget matches an exact integer model
//! (`drain` included), and the token bucket never grants more than its burst plus its
//! rate times the clock's total forward movement (no token of slack).
#![no_main]

use core::time::Duration;

use libfuzzer_sys::fuzz_target;
use tailguard::budget::{Budget, RatioBudget, TokenBucket};
use tailguard::clock::{Clock, Instant, ManualClock};
use tailguard::sketch::{IndexMapping, IntMapping};
use tailguard::window::{Window, WindowConfig};

const INTERVAL_NS: u64 = 1_000_000;
const UNITS: u64 = 1_000_000; // millionths of a token
/// The fuzzed window's bins (small: every value lands near an edge bin sooner).
const BINS: usize = 64;
/// The fuzzed window's slots (the default).
const SLOTS: usize = 3;

fuzz_target!(|data: &[u8]| {
    let Some((&setup, ops)) = data.split_first() else {
        return;
    };
    // Anywhere in the clock's range, the top included.
    let start = u64::from(setup).wrapping_mul(0x0101_0101_0101_0101);
    let clock = ManualClock::starting_at(Instant::from_nanos(start));
    let config = WindowConfig::new()
        .with_interval(Duration::from_nanos(INTERVAL_NS))
        .with_refresh_records(u32::from(setup % 4) * 8)
        .with_warmup_records(u32::from(setup >> 4));
    let mapping = IntMapping::with_mantissa_bits(u32::from(setup % 5)).unwrap();
    let window: Window<_, _, BINS, SLOTS> = Window::new(&clock, mapping, 1.0, config).unwrap();

    let ratio_ppm = u64::from(setup) * 4_000; // 0 % .. 102 %
    let cap = 1 + u64::from(setup % 7);
    let budget = RatioBudget::from_parts_per_million(ratio_ppm as u32, cap as u32).unwrap();
    let mut model_balance = cap * UNITS; // starts full

    let bucket = TokenBucket::new(&clock, 1000.0, 1 + u32::from(setup % 5)).unwrap();
    let (mut bucket_granted, mut forward_ns) = (0u64, 0u64);

    let mut recorded = 0u64;
    let mut latest_ns = clock.now().as_nanos(); // the latest instant seen before this op
    for chunk in ops.chunks(3) {
        latest_ns = latest_ns.max(clock.now().as_nanos());
        let (op, arg) = match chunk {
            [op, a, b] => (*op, u16::from_le_bytes([*a, *b])),
            [op, ..] => (*op, 0),
            [] => break,
        };
        match op % 9 {
            0 | 1 => {
                window.record_u64(u64::from(arg) * u64::from(op));
                recorded += 1;
            }
            2 => {
                let step = u64::from(arg) * 100; // up to 6.5 ms: a few intervals
                let before = clock.now().as_nanos();
                clock.advance(Duration::from_nanos(step));
                forward_ns = forward_ns.saturating_add(clock.now().as_nanos() - before);
            }
            3 => {
                // Past the window; or 2^31..2^33 window intervals (25 to 99 days), or
                // 2^31..2^33 token-bucket units of 8 ns (17 to 69 s).
                let k = 31 + u64::from(arg % 3);
                let jump = match op / 9 % 3 {
                    0 => u64::from(arg) * INTERVAL_NS * 8 + 3 * INTERVAL_NS,
                    1 => (INTERVAL_NS << k) + u64::from(arg),
                    _ => (8 << k) + u64::from(arg) * INTERVAL_NS,
                };
                let before = clock.now().as_nanos();
                clock.advance(Duration::from_nanos(jump));
                forward_ns = forward_ns.saturating_add(clock.now().as_nanos() - before);
            }
            4 => {
                // A little (jitter, two cores' timers), or by up to about two years.
                let back = if op / 9 % 2 == 0 {
                    u64::from(arg) * INTERVAL_NS
                } else {
                    u64::from(arg) << 30
                };
                clock.set(Instant::from_nanos(
                    clock.now().as_nanos().saturating_sub(back),
                ));
            }
            5 => {
                budget.on_request();
                model_balance = (model_balance + ratio_ppm).min(cap * UNITS);
            }
            6 => {
                let granted = budget.try_acquire();
                let model = model_balance >= UNITS;
                assert_eq!(granted, model, "ratio budget disagrees with the model");
                if model {
                    model_balance -= UNITS;
                }
                bucket_granted += u64::from(bucket.try_acquire());
            }
            7 => {
                let tokens = u32::from(arg % 5);
                if tokens == 4 {
                    budget.drain();
                    model_balance = 0;
                    bucket.drain();
                } else {
                    budget.penalize(tokens);
                    model_balance = model_balance.saturating_sub(u64::from(tokens) * UNITS);
                }
            }
            _ => {
                let q = f64::from(arg) / f64::from(u16::MAX);
                let value = window.quantile(q).unwrap();
                assert_eq!(value.is_some(), window.count() > 0);
                // Quantiles rise with q (nothing records between these reads).
                if let Some(v) = value {
                    let low = window.quantile(0.0).unwrap().unwrap();
                    let high = window.quantile(1.0).unwrap().unwrap();
                    assert!(low <= v && v <= high, "q={q}: {v} outside [{low}, {high}]");
                }
                if let Some(t) = window.cached_quantile() {
                    assert!(t >= 0.0 && t.is_finite());
                }
                let _ = mapping.relative_accuracy();
            }
        }
        if op % 9 == 2 || op % 9 == 3 {
            // Past every instant seen so far by `SLOTS - 1` intervals (the window holds
            // the current interval and `SLOTS - 2` before it): nothing is left. (Not
            // checked at the top of the range, where the clock stops moving.)
            let past = latest_ns.checked_add((SLOTS as u64 - 1) * INTERVAL_NS);
            if past.is_some_and(|past| clock.now().as_nanos() >= past) {
                assert_eq!(window.count(), 0, "a jump over the window empties it");
            }
        }
        let held = window.count() + u64::from(window.expired()) + u64::from(window.saturated());
        assert_eq!(held, recorded);
        assert_eq!(
            (budget.balance() * UNITS as f64).round() as u64,
            model_balance
        );
        // Backward steps earn nothing: the bound counts forward movement only.
        let burst = u64::from(bucket.burst());
        let allowed = burst + (forward_ns as f64 * bucket.rate() / 1e9) as u64;
        assert!(bucket_granted <= allowed, "{bucket_granted} > {allowed}");
    }
});
