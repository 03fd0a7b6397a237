//! The exponential window's record costs, for `ExponentialWindow::record_u64`'s worst case
//! per call. The operation's name, `exp-<rotation>-<situation>` (an
//! `ExponentialWindow<_, u16, 64>`, 3 slots):
//!
//! * `<rotation>`: `rot` (the default: records rotate and rescale) or `norot`
//!   (`with_rotate_on_record(false)`: maintenance does both);
//! * `<situation>`: `loop` records `TG_COUNT_K` values at one reading (count it for K and
//!   2K: the average record). Every other situation first fills two intervals (every
//!   bucket of the two live slots holds values), then makes `TG_COUNT_K` calls (count it
//!   for K = 0 and 1: the difference is the one call):
//!   * `steady`: a value in range; `first`: the first value of a window that has none (the
//!     slot takes its scale);
//!   * `outside`: a value far outside the current slot (a rescale: the spare is recycled
//!     and every counter moved into it; or, not rotating, a clamp and a request);
//!   * `cross`: one interval on (a rotation: the leaving slot recycled at the scale of the
//!     range seen); `jump`: five intervals on (every slot recycled).

use core::hint::black_box;
use core::time::Duration;

use tailguard::window::ExponentialWindow;

use super::clock::{self, StaticClock};
use super::{contains, starts_with, K, OP};

const INTERVAL_NS: u64 = 1_000_000_000;

type Exponential = ExponentialWindow<StaticClock, u16, 64>;

/// Runs the exponential window operation named by `OP`; false if `OP` names none.
pub fn run() -> bool {
    if !starts_with(OP, "exp-") {
        return false;
    }
    let w = match Exponential::new(StaticClock, Duration::from_nanos(INTERVAL_NS)) {
        Ok(w) => w.with_rotate_on_record(!contains(OP, "-norot-")),
        Err(_) => panic!("window configuration"),
    };
    if contains(OP, "-loop") {
        super::repeat(&mut &w, |w, v| w.record_u64(v));
        return true;
    }
    if !contains(OP, "-first") {
        fill(&w);
        clock::set(clock::get() + INTERVAL_NS);
        w.maintain();
        fill(&w);
    }
    let now = clock::get();
    let at = if contains(OP, "-cross") {
        now + INTERVAL_NS
    } else if contains(OP, "-jump") {
        now + 5 * INTERVAL_NS
    } else {
        now
    };
    let value = if contains(OP, "-outside") {
        1 << 50 // 13 days: far above the filled range
    } else {
        1_500_000
    };
    clock::set(at);
    let w = black_box(&w);
    for _ in 0..black_box(K) {
        black_box(w).record_u64(black_box(value));
    }
    true
}

/// Values 3 % apart from 100 µs to 100 ms: every bucket of the slot's range holds some.
fn fill(w: &Exponential) {
    let mut v = 100_000u64;
    while v <= 100_000_000 {
        w.record_u64(black_box(v));
        v += v / 32 + 1;
    }
    w.maintain();
}
