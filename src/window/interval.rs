//! The interval arithmetic both windows share: which readings are in the window, which
//! slot an interval has, and which slots a rotation clears.

use crate::clock::coarse::{Age, CoarseInstant};
use crate::clock::divisor::Divisor;

/// Whether a reading of this age (against the published interval) is in a window of
/// `slots` slots: the published interval, or up to `slots - 2` before it.
#[inline]
pub(super) fn in_window(age: Age, slots: usize) -> bool {
    // slots < 2^16: the cast and the subtraction cannot overflow.
    matches!(age, Age::Ticks(d) if d <= 0 && d > 1i64.wrapping_sub(slots as i64))
}

/// Whether a reading of this age is behind the window (or the published interval is
/// beyond the horizon ahead of it: the clock went far back).
pub(super) fn behind(age: Age, slots: usize) -> bool {
    match age {
        Age::Ticks(d) => d <= 1i64.wrapping_sub(slots as i64),
        Age::FarAhead => true,
        Age::Never | Age::LongAgo => false,
    }
}

/// The number of interval `ticks`'s slot: `ticks % SLOTS`, by a multiply (a 64-bit `%` is
/// a library call on a 32-bit core, `__aeabi_uldivmod`).
#[inline]
pub(super) fn slot_number<const SLOTS: usize>(ticks: u64) -> u32 {
    let slots: Divisor = const { Divisor::new(SLOTS as u64) };
    // Below SLOTS < 2^16: the cast is exact.
    slots.div_rem(ticks).1 as u32
}

/// The slots a rotation to `reading` (of this age against the published interval) clears,
/// as `(first, count)`: `count` of them from the slot of interval `first`; `None` if the
/// reading is in the window (another caller has just rotated). Interval `e - (slots - 1)`
/// leaves when `e` starts and has `e + 1`'s slot, so moving on by `d` from `p` clears the
/// slots of `p + 2 ..= p + 1 + d` (at most all of them).
pub(super) fn leaving(age: Age, reading: CoarseInstant, slots: usize) -> Option<(u64, u64)> {
    match age {
        Age::Ticks(d) if d > 0 => Some((
            reading.ticks().wrapping_sub(d as u64).wrapping_add(2), // d < 2^31
            (d as u64).min(slots as u64),
        )),
        _ if in_window(age, slots) => None,
        _ => Some((0, slots as u64)), // behind the window, or beyond the horizon
    }
}
