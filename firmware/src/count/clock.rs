//! The count and size images' clock: nanoseconds in a static that the image sets. Reading
//! it is two word loads, about what reading a hardware timer costs, so the instruction
//! counts of the window's records include a realistic clock reading.

use core::ptr::{addr_of, addr_of_mut, read_volatile, write_volatile};
use tailguard::clock::{Clock, Instant};

/// Far from 0, so that a clock set back by a few intervals stays in range.
pub const ORIGIN_NS: u64 = 1 << 40;

static mut NOW_NS: u64 = ORIGIN_NS;

/// Reads [`NOW_NS`].
#[derive(Clone, Copy)]
pub struct StaticClock;

impl Clock for StaticClock {
    #[inline]
    fn now(&self) -> Instant {
        // SAFETY: the images are single-threaded and run no interrupt handler; volatile so
        // that every reading is a real load, as a timer reading would be.
        Instant::from_nanos(unsafe { read_volatile(addr_of!(NOW_NS)) })
    }
}

/// Sets the clock.
pub fn set(ns: u64) {
    // SAFETY: as in `now`.
    unsafe { write_volatile(addr_of_mut!(NOW_NS), ns) }
}

/// The clock's reading in nanoseconds.
pub fn get() -> u64 {
    StaticClock.now().as_nanos()
}
