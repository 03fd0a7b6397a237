//! tailguard in a `wasm32-unknown-unknown` module: `no_std`, no allocator, the library's
//! default features. Its clock is an [`FnClock`] over the host's monotonic time, imported
//! as `env.now_ms` (JavaScript wires `performance.now()`), since `std::time::Instant`
//! panics on this target. The host records each response's latency and asks when to send
//! a backup; `.ci/wasm.sh` builds the module and runs `wasm/check.mjs` on it under node.
#![no_std]

use core::time::Duration;

use tailguard::budget::RatioBudget;
use tailguard::clock::{FnClock, Instant};
use tailguard::hedge::{HedgeConfig, IntHedger};
use tailguard::sketch::presets;

#[link(wasm_import_module = "env")]
unsafe extern "C" {
    /// The host's monotonic time in milliseconds (`performance.now()`).
    safe fn now_ms() -> f64;
}

/// The host's time as an [`Instant`]; a NaN or negative reading saturates to zero.
fn now() -> Instant {
    Instant::from_nanos((now_ms() * 1e6) as u64)
}

type Clock = FnClock<fn() -> Instant>;

static BUDGET: RatioBudget = match RatioBudget::new(0.1, 10) {
    Ok(budget) => budget,
    Err(_) => panic!("invalid budget"),
};
const CONFIG: HedgeConfig = HedgeConfig::new().with_min_samples(20);
/// Built at compile time: the module needs no start-up call.
static HEDGER: IntHedger<Clock, &RatioBudget> = match IntHedger::with_origin(
    FnClock::new(now as fn() -> Instant),
    CONFIG,
    &BUDGET,
    presets::INT_LATENCY_LAYOUT,
    Instant::ZERO,
) {
    Ok(hedger) => hedger,
    Err(_) => panic!("invalid hedge configuration"),
};

/// Records a response's latency, in milliseconds: 1 if recorded, 0 if refused (NaN, which
/// JavaScript's `undefined` and non-numeric strings become, or a negative latency), as the
/// library refuses them. `Infinity` is recorded as the longest latency (saturated).
#[no_mangle]
pub extern "C" fn record_ms(latency: f64) -> i32 {
    if latency.is_nan() || latency < 0.0 {
        return 0;
    }
    HEDGER.record(Duration::from_nanos((latency * 1e6) as u64));
    1
}

/// The delay after which a backup should go out, in milliseconds; -1 while the hedger has
/// too few samples (or will not hedge).
#[no_mangle]
pub extern "C" fn hedge_delay_ms() -> f64 {
    HEDGER.delay().map_or(-1.0, |d| d.as_secs_f64() * 1e3)
}

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    // Nothing above panics at run time (the statics are checked at compile time).
    core::arch::wasm32::unreachable()
}
