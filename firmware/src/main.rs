//! tailguard on a microcontroller, under QEMU: records known sequences into sketches,
//! checks counters, quantiles and merges against the values the host computed
//! (`expected.rs`), and exits through semihosting: 0 if every check passed, 1 otherwise
//! (a panic exits 1 too).
//!
//! With the `count` feature it instead repeats one operation `TG_COUNT_K` times and exits,
//! for counting instructions per operation (see `count.rs` and BENCHMARKS.md).
//!
//! Built and run by `.ci/firmware.sh` for `thumbv6m-none-eabi` (Cortex-M0, `-machine
//! microbit`) and `thumbv7em-none-eabihf` (Cortex-M4F, `-machine mps2-an386`).
#![no_std]
#![no_main]

// cortex-m provides the single-core critical-section implementation that
// portable-atomic uses on the Cortex-M0 (which has no compare-and-swap).
use cortex_m as _;
use cortex_m_rt::entry;
#[cfg(not(feature = "count"))]
use cortex_m_semihosting::hprintln;
use panic_semihosting as _;
#[cfg(not(feature = "count"))]
use tailguard_support::firmware::Summary;

#[cfg(not(feature = "count"))]
mod checks;
#[cfg(feature = "count")]
mod count;
#[path = "../exit.rs"]
mod exit;
// Some constants serve only the Cortex-M4F's checks.
#[cfg(not(feature = "count"))]
#[allow(dead_code)]
mod expected;

#[entry]
fn main() -> ! {
    #[cfg(feature = "count")]
    {
        count::run();
        exit::exit(0)
    }
    #[cfg(not(feature = "count"))]
    {
        let (mut passed, mut failed) = (0u32, 0u32);
        for check in checks::CHECKS {
            let ok = (check.run)();
            hprintln!("{} {}", if ok { "ok  " } else { "FAIL" }, check.name);
            if ok {
                passed += 1;
            } else {
                failed += 1;
            }
        }
        hprintln!("{} passed, {} failed", passed, failed);
        exit::exit(failed)
    }
}

/// Prints what differed.
#[cfg(not(feature = "count"))]
fn report_mismatch(got: &Summary, want: &Summary) {
    hprintln!("     got  {:?}", got);
    hprintln!("     want {:?}", want);
}
