//! tailguard's `race_embassy` on an embassy executor, under QEMU: a simulated sensor whose
//! reads sometimes stall is read without hedging, then hedged to a second sensor after a
//! warm-up (`run.rs`); the firmware checks that the hedges rescue the stalls within the
//! budget and that the hedger's counters add up (`checks.rs`), measures its peak stack
//! (`../stack.rs`), logs it all with defmt over semihosting, and exits through semihosting:
//! 0 if every check passed, 1 otherwise (a panic exits 1 too).
//!
//! The output is defmt's binary frames: `defmt-print -e <this ELF>` decodes them (see
//! `.ci/firmware-embassy.sh`). Time comes from our own embassy-time driver over SysTick
//! (`time_driver.rs`). The hedger is `McuHedger`, or `CompactHedger` with the `compact`
//! feature (`run.rs`).
#![no_std]
#![no_main]

mod checks;
mod run;
mod sensor;
#[path = "../../stack.rs"]
mod stack;
mod time_driver;

use cortex_m_rt::entry;
use defmt_semihosting as _;
use embassy_executor::Executor;

use tailguard::sketch::presets;

use crate::run::{SensorHedger, Sketch};

/// Builds the summary sketch into a static (the hedger is one already, built at compile
/// time), then runs the executor. Built here, in thread mode before the executor starts,
/// the sketch's construction's stack is free again before the run; built inside the task,
/// temporaries would widen the task's poll frame for the whole run (9.6 KiB on the
/// Cortex-M0 when the hedger was built there: the micro:bit's stack overflowed its RAM and
/// the core locked up).
#[entry]
fn main() -> ! {
    let Some(peripherals) = cortex_m::Peripherals::take() else {
        defmt::panic!("the core peripherals were taken before main");
    };
    let hedger: &'static SensorHedger = &run::HEDGER;
    let sketch: &'static mut Sketch = build_sketch();
    // The stack it took to build the sketch into a static; then the run's own peak, from
    // here.
    let build = stack::high_water();
    defmt::info!(
        "sizes: hedger ({=str}) {=usize} B, sketch {=usize} B; stack to build the sketch {}",
        run::HEDGER_NAME,
        core::mem::size_of::<SensorHedger>(),
        core::mem::size_of::<Sketch>(),
        defmt::Debug2Format(&build)
    );
    stack::repaint();
    let Some(executor) = cortex_m::singleton!(: Executor = Executor::new()) else {
        defmt::panic!("main runs once");
    };
    time_driver::start(peripherals.SYST);
    executor.run(|spawner| match hedge(hedger, sketch) {
        Ok(task) => spawner.spawn(task),
        Err(e) => defmt::panic!("spawning the task: {}", defmt::Debug2Format(&e)),
    })
}

// Not inlined: its frame is gone once it returns.
#[inline(never)]
fn build_sketch() -> &'static mut Sketch {
    match cortex_m::singleton!(: Sketch = presets::mcu_latency()) {
        Some(sketch) => sketch,
        None => defmt::panic!("built once"),
    }
}

/// The one task: the run, its checks and the stack figure, then the exit.
#[embassy_executor::task]
async fn hedge(hedger: &'static SensorHedger, sketch: &'static mut Sketch) {
    let figures = run::run(hedger, sketch).await;
    defmt::info!("unhedged {}", figures.unhedged);
    defmt::info!("hedged {}", figures.hedged);
    defmt::info!("rescue {}", figures.rescue);
    defmt::info!("after warm-up {}", figures.warm);
    defmt::info!("at the end {}", figures.end);

    let mut failed = 0u32;
    let checks = checks::judge(&figures);
    for check in &checks {
        report(check.ok, check.name);
        failed += u32::from(!check.ok);
    }
    // Last, so that it covers the whole run (and these checks' own frames).
    let stack = stack::high_water();
    defmt::info!("stack of the run {}", defmt::Debug2Format(&stack));
    let fits = stack.peak < stack.size;
    report(fits, "stack: the peak stays inside the stack region");
    failed += u32::from(!fits);

    let total = checks.len() as u32 + 1;
    defmt::info!("{=u32} passed, {=u32} failed", total - failed, failed);
    semihosting::process::exit(if failed == 0 { 0 } else { 1 });
}

fn report(ok: bool, name: &str) {
    if ok {
        defmt::info!("ok   {=str}", name);
    } else {
        defmt::error!("FAIL {=str}", name);
    }
}

/// Logs the panic and exits 1 (text on semihosting's stdout would corrupt the defmt frames,
/// so not panic-semihosting).
#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    defmt::error!("panic: {}", defmt::Display2Format(info));
    semihosting::process::exit(1)
}
