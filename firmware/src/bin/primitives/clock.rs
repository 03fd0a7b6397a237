//! The image's clock: tailguard time in microseconds that only the SysTick handler moves,
//! by one tick per interrupt and, every `JUMP_EVERY` ticks, by several window intervals at
//! once (a clock jump). It is not the core's time: the interrupt fires every
//! `SYSTICK_CYCLES` core cycles whatever the clock says, so jumps and ticks are
//! deterministic under QEMU's `-icount`.

use core::sync::atomic::{AtomicU32, Ordering::Relaxed};

use tailguard::clock::{Clock, Instant};

/// How far one tick moves the clock.
pub const TICK_US: u32 = 250;
/// Every `JUMP_EVERY`-th tick moves it by `JUMP_US` instead: three window intervals and a
/// tick, so the window's next maintenance expires every slot.
pub const JUMP_EVERY: u32 = 397;
pub const JUMP_US: u32 = 3 * crate::INTERVAL_US + TICK_US;

/// Microseconds since the image started (u32: the run lasts seconds, not 71 minutes).
static NOW_US: AtomicU32 = AtomicU32::new(0);

/// The clock every primitive of the image reads.
#[derive(Debug, Clone, Copy)]
pub struct TickClock;

impl Clock for TickClock {
    #[inline]
    fn now(&self) -> Instant {
        instant(now_us())
    }
}

/// The instant of a reading in µs.
#[inline]
pub fn instant(us: u32) -> Instant {
    Instant::from_nanos(u64::from(us) * 1_000)
}

#[inline]
pub fn now_us() -> u32 {
    NOW_US.load(Relaxed)
}

/// Moves the clock for tick number `tick` and returns the new time and whether it jumped.
/// Only the SysTick handler calls it: one writer, so a load and a store (the Cortex-M0 has
/// no atomic add).
#[inline]
pub fn advance(tick: u32) -> (u32, bool) {
    let jump = tick.is_multiple_of(JUMP_EVERY);
    let now = NOW_US.load(Relaxed) + if jump { JUMP_US } else { TICK_US };
    NOW_US.store(now, Relaxed);
    (now, jump)
}
