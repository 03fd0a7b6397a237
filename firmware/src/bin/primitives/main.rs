//! Every concurrent primitive of tailguard on the target, raced by an interrupt, under QEMU:
//! an `AtomicSketch`, a `Window` (rotating, with clock jumps of several intervals), an
//! `ExponentialWindow` (rescaling too, as its values spread over nine decades), a `RatioBudget`, a `TokenBucket` and a `Hedger`, all in statics, recorded into by the
//! SysTick handler while the main loop records, maintains the window (rotations and
//! refreshes), reads its cached threshold, spends the budgets and runs hedged requests
//! (`run.rs`). At the end, with SysTick stopped, it checks exactly what the library
//! promises (`checks.rs`): every record conserved, the threshold's invariant and staleness
//! bound, both budgets' bounds, the hedger's counters; prints one line per check (and the
//! stack it took, by stack painting) and exits through semihosting: 0 if every check
//! passed, 1 otherwise (a panic exits 1 too).
//!
//! Built and run by `.ci/firmware.sh` for `thumbv6m-none-eabi` (Cortex-M0, `-machine
//! microbit`, 16 KiB of RAM) and `thumbv7em-none-eabihf` (Cortex-M4F, `-machine
//! mps2-an386`), with `-icount` so that every run interrupts the main loop at the same
//! instructions.
#![no_std]
#![no_main]

mod checks;
mod clock;
#[path = "../../../exit.rs"]
mod exit;
mod once;
mod run;
#[path = "../../../stack.rs"]
mod stack;

use core::sync::atomic::{AtomicU32, AtomicU8, Ordering::Relaxed};
use core::time::Duration;

use cortex_m::peripheral::syst::SystClkSource;
use cortex_m::peripheral::SYST;
use cortex_m_rt::{entry, exception};
use cortex_m_semihosting::hprintln;
use panic_semihosting as _;
use tailguard::budget::{Budget, RatioBudget, TokenBucket};
use tailguard::clock::Instant;
use tailguard::hedge::{HedgeConfig, Hedger};
use tailguard::sketch::{AtomicSketch, DDSketch, IntMapping};
use tailguard::window::{ExponentialWindow, Window, WindowConfig};
use tailguard_support::Xorshift32;

use crate::clock::TickClock;
use crate::once::Once;

/// Bins of every sketch: the integer mapping at 16 bins per octave (3.1 %) from 100 µs,
/// 160 bins (up to about 100 ms). Sized for the micro:bit's 16 KiB of RAM: the five objects
/// take 5.4 KB of statics, and building each by value takes about four times its size in
/// stack (the window: 14.8 KB at 300 bins) until the constructors are `const fn`.
pub const BINS: usize = 160;
const MAPPING: IntMapping = match IntMapping::with_mantissa_bits(4) {
    Ok(mapping) => mapping,
    Err(_) => panic!("k = 4 is a valid mantissa width"),
};
/// The window's slots: the current interval, one before it, and a spare.
pub const SLOTS: usize = 3;
const MIN_NS: f64 = 100_000.0;
/// The window's and the hedger's interval: 80 ticks.
pub const INTERVAL_US: u32 = 20_000;
/// The window's refresh interval `r` (the staleness bound is `r + m` plus about 1 ms).
pub const REFRESH_US: u32 = 5_000;
/// The window publishes no cached quantile from fewer values.
pub const MIN_COUNT: u32 = 16;
/// The ratio budget: 10 % of a token per request, at most 5 saved up.
pub const RATIO_PPM: u32 = 100_000;
pub const RATIO_CAP: u32 = 5;
/// The token bucket: 1,000 tokens a second (one per 1,000 µs of the clock), burst 4.
pub const BUCKET_RATE: u32 = 1_000;
pub const BUCKET_BURST: u32 = 4;
/// SysTick fires every this many core cycles: often, so that it lands inside the main
/// loop's operations (a window refresh scans hundreds of bins), yet leaving the main loop
/// most of the core. The Cortex-M0's handler costs about three times the M4F's (every
/// atomic read-modify-write is a critical section there).
#[cfg(target_abi = "eabihf")]
pub const SYSTICK_CYCLES: u32 = 4_000;
#[cfg(not(target_abi = "eabihf"))]
pub const SYSTICK_CYCLES: u32 = 12_000;

/// The window's values: each interval's records hold one of these, by the interval's number
/// modulo 4 (so the cached quantile tells which intervals it was computed from), a factor
/// of 4 apart, far more than the sketch's error.
pub const LEVELS_NS: [u64; 4] = [150_000, 600_000, 2_400_000, 9_600_000];

pub type SharedWindow = Window<TickClock, IntMapping, BINS, SLOTS>;
/// 32 `u16` buckets a slot: small, so that the spreading values make it rescale often.
pub type SharedExponential = ExponentialWindow<TickClock, u16, 32, SLOTS>;
pub type SharedSketch = AtomicSketch<IntMapping, BINS>;
pub type SharedHedger = Hedger<TickClock, &'static RatioBudget, IntMapping, BINS>;

/// The window's configuration: records never rotate (the interrupt's records cost the same
/// at every call), the main loop maintains; p90 cached from 16 values, refreshed at least
/// every 5 ms of the clock.
const WINDOW: WindowConfig = WindowConfig::new()
    .with_interval(Duration::from_micros(INTERVAL_US as u64))
    .with_refresh_interval(Duration::from_micros(REFRESH_US as u64))
    .with_min_count(MIN_COUNT)
    .with_rotate_on_record(false);

/// The hedger's: the p90 of the last 20-40 ms, after 20 samples, no sooner than 1 ms; the
/// handler's records never rotate its window (the main loop's `start` does).
const HEDGE: HedgeConfig = HedgeConfig::new()
    .with_interval(Duration::from_micros(INTERVAL_US as u64))
    .with_min_samples(20)
    .with_min_delay(Duration::from_millis(1))
    .with_rotate_on_record(false);

static WINDOW_CELL: Once<SharedWindow> = Once::new();
/// Built at compile time (`with_origin` is `const`).
pub static EXPONENTIAL: SharedExponential = match ExponentialWindow::with_origin(
    TickClock,
    Duration::from_micros(INTERVAL_US as u64),
    Instant::from_nanos(0),
) {
    Ok(window) => window,
    Err(_) => panic!("the interval is valid"),
};
static SKETCH_CELL: Once<SharedSketch> = Once::new();
static RATIO_CELL: Once<RatioBudget> = Once::new();
static BUCKET_CELL: Once<TokenBucket<TickClock>> = Once::new();
static HEDGER_CELL: Once<SharedHedger> = Once::new();

/// The five objects, once built.
#[derive(Clone, Copy)]
pub struct Shared {
    pub window: &'static SharedWindow,
    pub sketch: &'static SharedSketch,
    pub ratio: &'static RatioBudget,
    pub bucket: &'static TokenBucket<TickClock>,
    pub hedger: &'static SharedHedger,
}

fn shared() -> Option<Shared> {
    Some(Shared {
        window: WINDOW_CELL.get()?,
        sketch: SKETCH_CELL.get()?,
        ratio: RATIO_CELL.get()?,
        bucket: BUCKET_CELL.get()?,
        hedger: HEDGER_CELL.get()?,
    })
}

/// The value recorded into the window in interval number `k`.
#[inline]
pub fn level_ns(k: u32) -> u64 {
    LEVELS_NS[(k % 4) as usize]
}

/// The window interval of a clock reading (the window's intervals start at 0, when it was
/// made).
#[inline]
pub fn interval_of(us: u32) -> u32 {
    us / INTERVAL_US
}

/// What the main loop is doing, for the interrupt to count where it landed: one of the
/// `OP_` codes, the index of its name in [`OP_NAMES`].
pub static MAIN_OP: AtomicU8 = AtomicU8::new(OP_NONE);

/// A latency of one to 2^29 µs (nine decades): the exponential window rescales as the run
/// reaches further out, and rotates back to finer scales.
#[inline]
pub fn spread_ns(draw: u32) -> u64 {
    1_000u64.wrapping_add(u64::from(draw >> 16)) << (draw % 30)
}
pub const OP_NONE: u8 = 0;
pub const OP_WINDOW_RECORD: u8 = 1;
pub const OP_SKETCH_RECORD: u8 = 2;
pub const OP_MAINTAIN: u8 = 3;
pub const OP_THRESHOLD: u8 = 4;
pub const OP_BUDGETS: u8 = 5;
pub const OP_START: u8 = 6;
pub const OP_SHOULD_HEDGE: u8 = 7;
pub const OP_ON_SUCCESS: u8 = 8;
pub const OP_EXPONENTIAL_RECORD: u8 = 9;
pub const OPS: usize = 10;
pub const OP_NAMES: [&str; OPS] = [
    "outside operations",
    "Window::record",
    "AtomicSketch::record",
    "Window::maintain",
    "cached_quantile",
    "budgets",
    "Hedger::start",
    "Hedger::should_hedge",
    "Hedger::on_success",
    "ExponentialWindow::record",
];

/// The interrupt's tallies. It is their one writer: a load and a store each (the
/// Cortex-M0 has no atomic add), read by `main` once SysTick is stopped.
pub struct IsrTally {
    pub ticks: AtomicU32,
    pub jumps: AtomicU32,
    pub window_records: AtomicU32,
    pub exponential_records: AtomicU32,
    pub sketch_records: AtomicU32,
    pub hedger_records: AtomicU32,
    pub ratio_requests: AtomicU32,
    pub ratio_granted: AtomicU32,
    pub ratio_denied: AtomicU32,
    pub bucket_granted: AtomicU32,
    pub bucket_denied: AtomicU32,
    /// Core cycles the handler took (SysTick's count down from its first line to its
    /// last), summed and the most.
    pub cycles: AtomicU32,
    pub max_cycles: AtomicU32,
    /// Interrupts that landed during each of the main loop's operations.
    pub preempted: [AtomicU32; OPS],
    rng: AtomicU32,
}

pub static ISR: IsrTally = IsrTally {
    ticks: AtomicU32::new(0),
    jumps: AtomicU32::new(0),
    window_records: AtomicU32::new(0),
    exponential_records: AtomicU32::new(0),
    sketch_records: AtomicU32::new(0),
    hedger_records: AtomicU32::new(0),
    ratio_requests: AtomicU32::new(0),
    ratio_granted: AtomicU32::new(0),
    ratio_denied: AtomicU32::new(0),
    bucket_granted: AtomicU32::new(0),
    bucket_denied: AtomicU32::new(0),
    cycles: AtomicU32::new(0),
    max_cycles: AtomicU32::new(0),
    preempted: [const { AtomicU32::new(0) }; OPS],
    rng: AtomicU32::new(0x2545_f491),
};

#[inline]
fn bump(counter: &AtomicU32) {
    counter.store(counter.load(Relaxed).wrapping_add(1), Relaxed);
}

#[entry]
fn main() -> ! {
    let Some(mut peripherals) = cortex_m::Peripherals::take() else {
        panic!("the core peripherals were taken before main");
    };
    stack::repaint();
    let Some(shared) = build() else {
        panic!("the objects are built once");
    };
    let built = stack::high_water();
    hprintln!(
        "sizes: window {} B, exponential window {} B, sketch {} B, hedger {} B, ratio budget {} B, token bucket {} B; stack to build them {} B",
        core::mem::size_of::<SharedWindow>(),
        core::mem::size_of::<SharedExponential>(),
        core::mem::size_of::<SharedSketch>(),
        core::mem::size_of::<SharedHedger>(),
        core::mem::size_of::<RatioBudget>(),
        core::mem::size_of::<TokenBucket<TickClock>>(),
        built.peak
    );
    stack::repaint();

    let syst = &mut peripherals.SYST;
    syst.set_clock_source(SystClkSource::Core);
    syst.set_reload(SYSTICK_CYCLES - 1);
    syst.clear_current();
    syst.enable_interrupt();
    syst.enable_counter();

    let mut figures = run::run(shared);

    // Stop the interrupt: a SysTick already pending is taken before the barrier ends, so
    // from here on nothing records and the tallies are final.
    syst.disable_interrupt();
    syst.disable_counter();
    cortex_m::asm::dsb();
    cortex_m::asm::isb();
    figures.end_us = clock::now_us();
    let run_stack = stack::high_water();

    let failed = checks::report(shared, &figures, &run_stack);
    exit::exit(failed)
}

/// Builds the five objects into their statics, at clock time 0 (SysTick not started),
/// each in a function of its own (not inlined): a frame holds its object, and temporaries
/// of its size, while the object is moved into its cell, and is free again before the next
/// is built, so the stack it takes is the largest build's, not the sum. (With `const fn`
/// constructors, issue 13 item 1, they become plain statics.)
fn build() -> Option<Shared> {
    build_window()?;
    build_sketch()?;
    let ratio = build_ratio()?;
    build_bucket()?;
    build_hedger(ratio)?;
    shared()
}

#[inline(never)]
fn build_window() -> Option<&'static SharedWindow> {
    WINDOW_CELL.init_with(|| {
        Window::new(TickClock, MAPPING, MIN_NS, WINDOW).unwrap_or_else(|e| panic!("window: {e}"))
    })
}

#[inline(never)]
fn build_sketch() -> Option<&'static SharedSketch> {
    SKETCH_CELL
        .init_with(|| AtomicSketch::new(MAPPING, MIN_NS).unwrap_or_else(|e| panic!("sketch: {e}")))
}

#[inline(never)]
fn build_ratio() -> Option<&'static RatioBudget> {
    RATIO_CELL.init_with(|| {
        RatioBudget::from_parts_per_million(RATIO_PPM, RATIO_CAP)
            .unwrap_or_else(|e| panic!("ratio budget: {e}"))
    })
}

#[inline(never)]
fn build_bucket() -> Option<&'static TokenBucket<TickClock>> {
    BUCKET_CELL.init_with(|| {
        TokenBucket::new(TickClock, f64::from(BUCKET_RATE), BUCKET_BURST)
            .unwrap_or_else(|e| panic!("token bucket: {e}"))
    })
}

#[inline(never)]
fn build_hedger(ratio: &'static RatioBudget) -> Option<&'static SharedHedger> {
    let template = DDSketch::<IntMapping, BINS>::new(MAPPING, MIN_NS)
        .unwrap_or_else(|e| panic!("sketch: {e}"));
    HEDGER_CELL.init_with(|| {
        Hedger::with_budget(TickClock, HEDGE, ratio, template.layout())
            .unwrap_or_else(|e| panic!("hedger: {e}"))
    })
}

/// One tick: moves the clock (sometimes by several intervals), then records into the
/// window, the sketch and the hedger's window, deposits into the ratio budget and, now and
/// then, spends from both budgets, racing whatever the main loop was doing.
#[exception]
fn SysTick() {
    let entry = SYST::get_current();
    let Some(s) = shared() else { return };
    let tick = ISR.ticks.load(Relaxed).wrapping_add(1);
    ISR.ticks.store(tick, Relaxed);
    let (now, jumped) = clock::advance(tick);
    if jumped {
        bump(&ISR.jumps);
    }
    if let Some(counter) = ISR.preempted.get(usize::from(MAIN_OP.load(Relaxed))) {
        bump(counter);
    }

    // The window reads the clock itself: `now`, as only this handler moves it.
    let level = level_ns(interval_of(now));
    s.window.record_u64(level);
    bump(&ISR.window_records);
    s.sketch.record_u64(level);
    bump(&ISR.sketch_records);

    let mut rng = Xorshift32(ISR.rng.load(Relaxed));
    let draw = rng.next_u32();
    let spread = rng.next_u32();
    ISR.rng.store(rng.0, Relaxed);
    EXPONENTIAL.record_u64(spread_ns(spread));
    bump(&ISR.exponential_records);
    let latency_us = if draw.is_multiple_of(12) {
        15_000
    } else {
        2_000 + (draw >> 8) % 1_000
    };
    s.hedger
        .record(Duration::from_micros(u64::from(latency_us)));
    bump(&ISR.hedger_records);

    s.ratio.on_request();
    bump(&ISR.ratio_requests);
    if tick.is_multiple_of(16) {
        bump(if s.ratio.try_acquire() {
            &ISR.ratio_granted
        } else {
            &ISR.ratio_denied
        });
    }
    bump(if s.bucket.try_acquire() {
        &ISR.bucket_granted
    } else {
        &ISR.bucket_denied
    });

    // The counter counts down from SYSTICK_CYCLES - 1 and reloads: one reload at most
    // (the handler takes less than a period).
    let exit = SYST::get_current();
    let cycles = if exit <= entry {
        entry - exit
    } else {
        entry + SYSTICK_CYCLES - exit
    };
    ISR.cycles
        .store(ISR.cycles.load(Relaxed).wrapping_add(cycles), Relaxed);
    if cycles > ISR.max_cycles.load(Relaxed) {
        ISR.max_cycles.store(cycles, Relaxed);
    }
}
