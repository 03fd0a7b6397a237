//! tailguard's `race` in an RTIC 2 app, under QEMU's lm3s6965evb (Cortex-M3): the SysTick
//! monotonic (rtic-monotonics) is the hedger's clock and the race's sleep
//! (`clock.rs`); one async software task reads a simulated sensor whose reads sometimes
//! stall without hedging, then hedged to a second sensor after a warm-up (`run.rs`),
//! checks that the hedges rescue the stalls within the budget by the embassy firmware's
//! criteria (../embassy/src/checks.rs), prints it all over semihosting, and exits through
//! semihosting: 0 if every check passed, 1 otherwise (a panic exits 1 too).
#![no_std]
#![no_main]

mod clock;
// The embassy firmware's checks, shared so that both firmwares pass or fail alike.
#[path = "../../embassy/src/checks.rs"]
mod checks;
mod run;
/// What checks.rs reads from the sensor.
mod sensor {
    pub use tailguard_support::sensor::STALLS_PER_100;
}

use panic_semihosting as _;
use rtic_monotonics::systick::prelude::*;

// The monotonic, at 10 kHz: fine enough for reads of about a millisecond, few enough
// SysTick interrupts under QEMU.
systick_monotonic!(Mono, 10_000);

#[rtic::app(device = lm3s6965, dispatchers = [SSI0])]
mod app {
    use cortex_m_semihosting::{debug, hprintln};

    use crate::{checks, run, Mono};

    #[shared]
    struct Shared {}

    #[local]
    struct Local {}

    #[init]
    fn init(cx: init::Context) -> (Shared, Local) {
        // QEMU's lm3s6965evb clocks SysTick at 12 MHz (RTIC's own examples say so too).
        Mono::start(cx.core.SYST, 12_000_000);
        if hedge::spawn().is_err() {
            panic!("hedge spawned twice");
        }
        (Shared {}, Local {})
    }

    /// The run, its checks, then the exit.
    #[task]
    async fn hedge(_: hedge::Context) {
        let f = run::run(&run::HEDGER).await;
        hprintln!("unhedged {:?}", f.unhedged);
        hprintln!("hedged {:?}", f.hedged);
        hprintln!("rescue {:?}", f.rescue);
        hprintln!("after warm-up {:?}", f.warm);
        hprintln!("at the end {:?}", f.end);

        let mut failed = 0u32;
        let checks = checks::judge(&f);
        for check in &checks {
            if check.ok {
                hprintln!("ok   {}", check.name);
            } else {
                hprintln!("FAIL {}", check.name);
            }
            failed += u32::from(!check.ok);
        }
        hprintln!("{} passed, {} failed", checks.len() as u32 - failed, failed);
        debug::exit(if failed == 0 {
            debug::EXIT_SUCCESS
        } else {
            debug::EXIT_FAILURE
        });
        // Without semihosting (on a real board) exit returns: idle here.
        loop {
            cortex_m::asm::wfi();
        }
    }
}
