//! embassy-time's driver over SysTick: a 64-bit tick counter that the SysTick exception
//! advances at `TICK_HZ` (10 kHz, the `tick-hz-10_000` feature of embassy-time-driver), and
//! a timer queue whose earliest deadline (the alarm) that same exception checks, waking the
//! timers due, which makes the executor poll their tasks.
//!
//! SysTick counts the core clock. QEMU's boards run it at 25 MHz (mps2-an386) and 16 MHz
//! (microbit, the nRF51's HCLK), on QEMU's virtual clock: under `-icount` (as
//! `.ci/firmware.sh` runs it) virtual time advances with the instructions executed, so a run
//! is deterministic and as fast as QEMU executes them, whatever else the host is doing.

use core::cell::{Cell, RefCell};
use core::task::Waker;

use cortex_m::peripheral::syst::SystClkSource;
use cortex_m::peripheral::SYST;
use cortex_m_rt::exception;
use critical_section::Mutex;
use embassy_time_driver::{Driver, TICK_HZ};
use embassy_time_queue_utils::Queue;

/// The core clock SysTick counts, in Hz, as QEMU models the board.
#[cfg(target_abi = "eabihf")]
const CORE_HZ: u64 = 25_000_000; // mps2-an386
#[cfg(not(target_abi = "eabihf"))]
const CORE_HZ: u64 = 16_000_000; // microbit

/// SysTick's reload value: one exception per tick. 2,500 or 1,600 core cycles, well
/// within SysTick's 24 bits.
const RELOAD: u32 = (CORE_HZ / TICK_HZ - 1) as u32;
const _: () = assert!(CORE_HZ.is_multiple_of(TICK_HZ) && CORE_HZ / TICK_HZ <= 1 << 24);

struct SysTickDriver {
    /// Ticks since `start`. 64 bits, so read and written in a critical section (the
    /// Cortex-M has no 64-bit atomics); it never wraps (58 million years at 10 kHz).
    ticks: Mutex<Cell<u64>>,
    /// The queue's earliest deadline, in ticks (`u64::MAX`: none).
    alarm: Mutex<Cell<u64>>,
    queue: Mutex<RefCell<Queue>>,
}

embassy_time_driver::time_driver_impl!(static DRIVER: SysTickDriver = SysTickDriver {
    ticks: Mutex::new(Cell::new(0)),
    alarm: Mutex::new(Cell::new(u64::MAX)),
    queue: Mutex::new(RefCell::new(Queue::new())),
});

impl Driver for SysTickDriver {
    fn now(&self) -> u64 {
        critical_section::with(|cs| self.ticks.borrow(cs).get())
    }

    fn schedule_wake(&self, at: u64, waker: &Waker) {
        critical_section::with(|cs| {
            let mut queue = self.queue.borrow_ref_mut(cs);
            if queue.schedule_wake(at, waker) {
                // Wakes what is already due, and gives the new earliest deadline.
                let now = self.ticks.borrow(cs).get();
                self.alarm.borrow(cs).set(queue.next_expiration(now));
            }
        });
    }
}

/// Starts the clock: SysTick on the core clock, one exception per tick.
pub fn start(mut syst: SYST) {
    syst.set_clock_source(SystClkSource::Core);
    syst.set_reload(RELOAD);
    syst.clear_current();
    syst.enable_interrupt();
    syst.enable_counter();
}

#[exception]
fn SysTick() {
    critical_section::with(|cs| {
        let ticks = DRIVER.ticks.borrow(cs);
        let now = ticks.get() + 1;
        ticks.set(now);
        let alarm = DRIVER.alarm.borrow(cs);
        if now >= alarm.get() {
            // Wakes every timer due (the executor's pender: SEV) and gives the next deadline.
            let next = DRIVER.queue.borrow_ref_mut(cs).next_expiration(now);
            alarm.set(next);
        }
    });
}
