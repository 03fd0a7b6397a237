//! The window's record and maintenance costs, for `Window::record_u64`'s worst case per
//! call. The operation's name, `window-<bins>-<rotation>-<situation>`:
//!
//! * `<bins>`: `849` (`IntLatencyCoarse`, 1 µs .. 100 s) or `300` ([`super::mcu_sketch`]);
//! * `<rotation>`: `rot` (the default, records rotate) or `norot`
//!   (`with_rotate_on_record(false)`: records never rotate, `maintain` does);
//! * `<situation>`: `loop` records `TG_COUNT_K` values at one clock reading with the default
//!   refresh settings (count it for K and 2K: the average record). Every other situation
//!   first fills two intervals (every bin of the window's two live slots holds values, the
//!   widest occupied range, so a rotation's clear and a refresh's scan are the longest),
//!   sets the clock, then makes `TG_COUNT_K` calls: count it for K = 0 and 1, the
//!   difference is the one call. The window refreshes on every record
//!   (`with_refresh_records(1)`), so each record also leaves a refresh request, as the
//!   default configuration's records do when their bin's count reaches a power of two:
//!   * the clock: as the fill left it (`steady`), one interval on (`cross`: the spare slot,
//!     empty), five intervals on (`jump`: every slot leaves; a record that does not rotate
//!     lands on the older full slot; `gap` is the same jump after an interval without
//!     records, whose slot is empty: the first fill is left out), four or 1,000 intervals
//!     on (`ahead4`, `ahead1000`: every slot leaves; a record that does not rotate lands
//!     on the empty spare slot), past the interval clock's horizon (`beyond`,
//!     1,200,000,001 intervals on: the published interval reads as long ago; the spare
//!     slot too), or eight back (`back`: behind the window, which restarts);
//!   * the call: a record (`record`) or `maintain` (`maintain`; `maintain-idle` serves the
//!     fill's requests first, so it has nothing to do but check);
//!   * the value recorded: 1.5 ms (a filled bin), or `edge` 2^20 ns (1.05 ms, the first
//!     value of its bin: the mapping's near-edge path, bin for bin with DataDog's
//!     libraries), `wide` 200 s (above the range, from 2^32 up: the mapping's 64-bit path)
//!     or `max` (`u64::MAX`).

use core::hint::black_box;
use core::time::Duration;

use tailguard::sketch::{presets, DDSketch, IntMapping};
use tailguard::window::{Window, WindowConfig};

use super::clock::{self, StaticClock};
use super::{contains, starts_with, K, OP};

const INTERVAL_NS: u64 = 1_000_000_000;

/// Runs the window operation named by `OP`; false if `OP` names none.
pub fn run() -> bool {
    if !starts_with(OP, "window-") {
        return false;
    }
    let rotate = !contains(OP, "-norot-");
    if contains(OP, "-300-") {
        situation(&super::mcu_sketch(), rotate);
    } else if contains(OP, "-849-") {
        situation(&presets::int_latency_coarse(), rotate);
    } else {
        panic!("window size: 849 or 300");
    }
    true
}

fn situation<const N: usize>(like: &DDSketch<IntMapping, N>, rotate: bool) {
    let config = WindowConfig::new()
        .with_interval(Duration::from_nanos(INTERVAL_NS))
        .with_rotate_on_record(rotate);
    if contains(OP, "-loop") {
        let w = window(like, config);
        super::repeat(&mut &w, |w, v| w.record_u64(v));
        return;
    }
    let w = window(like, config.with_refresh_records(1));
    // Ten intervals in, so that the clock can go back behind the window. Rotated there
    // before the fill: records that do not rotate would fill the slot of interval 10 while
    // the window is still at interval 0, and the rotation to interval 11 would clear it.
    clock::set(clock::get() + 10 * INTERVAL_NS);
    w.maintain();
    if !contains(OP, "-gap") {
        fill(&w, like);
    }
    clock::set(clock::get() + INTERVAL_NS);
    w.maintain(); // the rotation to the second interval (records may have done it)
    fill(&w, like);
    let now = clock::get();
    let at = if contains(OP, "-cross") {
        now + INTERVAL_NS
    } else if contains(OP, "-jump") || contains(OP, "-gap") {
        now + 5 * INTERVAL_NS
    } else if contains(OP, "-ahead4-") {
        now + 4 * INTERVAL_NS
    } else if contains(OP, "-ahead1000-") {
        now + 1_000 * INTERVAL_NS
    } else if contains(OP, "-beyond") {
        // Past the horizon of a clock of 1 s ticks (about 2^30 s), 1 more than a multiple
        // of the three slots.
        now + 1_200_000_001 * INTERVAL_NS
    } else if contains(OP, "-back") {
        now - 8 * INTERVAL_NS
    } else {
        now
    };
    let value = if contains(OP, "-edge") {
        1 << 20 // 1,048,576 ns: the first value of its bin
    } else if contains(OP, "-wide") {
        200_000_000_000 // 200 s: above the range, from 2^32 up
    } else if contains(OP, "-max") {
        u64::MAX
    } else {
        1_500_000
    };
    let maintain = contains(OP, "-maintain");
    if contains(OP, "-idle") {
        w.maintain();
    }
    clock::set(at);
    let w = black_box(&w);
    for _ in 0..black_box(K) {
        if maintain {
            black_box(w).maintain();
        } else {
            black_box(w).record_u64(black_box(value));
        }
    }
}

fn window<const N: usize>(
    like: &DDSketch<IntMapping, N>,
    config: WindowConfig,
) -> Window<StaticClock, IntMapping, N> {
    match Window::with_layout(StaticClock, like.layout(), config) {
        Ok(w) => w,
        Err(_) => panic!("window configuration"),
    }
}

/// Records values 1.6 % apart from the sketch's lowest trackable value to past 100 s: one
/// or more in every bin (bins are 2.2 % wide), and the top bin.
fn fill<const N: usize>(w: &Window<StaticClock, IntMapping, N>, like: &DDSketch<IntMapping, N>) {
    let mut v = like.min_trackable() as u64 + 1;
    while v <= 100_000_000_000 {
        w.record_u64(black_box(v));
        v += v / 64 + 1;
    }
}
