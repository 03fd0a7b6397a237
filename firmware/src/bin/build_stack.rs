//! The stack it takes to build each tailguard primitive into static storage, measured by
//! stack painting on the target.
//!
//! Every primitive here is a `static` initialised by a `const fn`: the compiler builds it,
//! the reset handler copies it into RAM with the rest of `.data`, and no code builds it on
//! the stack. What runs at start-up is measured instead: each primitive's first use
//! (a record, a query, a hedging decision: nothing is built lazily), and the one piece of
//! run-time set-up the clock pattern needs (starting SysTick, which the window's and
//! hedger's clock, a unit struct, reads through a global). Each figure must be below
//! 1 KiB; the image prints them and exits through semihosting, non-zero if one is not.
//!
//! Built and run by `.ci/firmware.sh` on both boards; the figures are in BENCHMARKS.md
//! ("Building into statics").
#![no_std]
#![no_main]

#[path = "../../exit.rs"]
mod exit;

use core::cell::RefCell;
use core::hint::black_box;
use core::mem::size_of;
use core::sync::atomic::{AtomicU32, Ordering::Relaxed};
use core::time::Duration;

use cortex_m::interrupt::{self, Mutex};
use cortex_m::peripheral::syst::SystClkSource;
use cortex_m_rt::{entry, exception};
use cortex_m_semihosting::hprintln;
use panic_semihosting as _;
use tailguard::budget::{Budget, RatioBudget, TokenBucket};
use tailguard::clock::{Clock, Instant};
use tailguard::hedge::{HedgeConfig, Hedger};
use tailguard::sketch::{AtomicSketch, BinLayout, DDSketch, IntMapping};
use tailguard::window::{Window, WindowConfig};

/// The most stack building (or first using) a primitive may take.
const LIMIT: usize = 1024;

/// How far below the caller's stack pointer a measurement paints: twice the limit, so
/// that an excess is measured too (up to this much).
const PAINTED: usize = 2 * LIMIT;

/// The paint: a word that no primitive writes to its stack by chance in every slot.
const PAINT: u32 = 0xdead_beef;

/// Bins per sketch. The Cortex-M4F holds the 1.56 % latency preset (849 bins); the
/// micro:bit's 16 KiB take 200 bins of the same mapping from 100 µs (to about 7.6 ms), so
/// that every primitive fits at once.
#[cfg(target_abi = "eabihf")]
const BINS: usize = tailguard::sketch::presets::INT_LATENCY_COARSE_BINS;
#[cfg(target_abi = "eabihf")]
const LAYOUT: BinLayout<IntMapping, BINS> = tailguard::sketch::presets::INT_LATENCY_COARSE_LAYOUT;
#[cfg(not(target_abi = "eabihf"))]
const BINS: usize = 200;
#[cfg(not(target_abi = "eabihf"))]
const LAYOUT: BinLayout<IntMapping, BINS> = match BinLayout::from_min_index(
    IntMapping::K5,
    528, // the index of 100 µs in ns
) {
    Ok(layout) => layout,
    Err(_) => panic!("bin indices overflow"),
};

/// Milliseconds since SysTick started, counted by its interrupt (the only writer).
static MILLIS: AtomicU32 = AtomicU32::new(0);

/// The clock of the window, the hedger and the token bucket: a unit struct, so it is a
/// constant, reading the count SysTick keeps once `start_systick` has run.
struct Ticks;

impl Clock for Ticks {
    fn now(&self) -> Instant {
        Instant::from_nanos(u64::from(MILLIS.load(Relaxed)) * 1_000_000)
    }
}

#[exception]
fn SysTick() {
    MILLIS.store(MILLIS.load(Relaxed).wrapping_add(1), Relaxed);
}

/// Unwraps a constructor's result in a `static`'s initialiser: an error is a compile error.
macro_rules! built {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(_) => panic!("invalid configuration"),
        }
    };
}

static SKETCH: AtomicSketch<IntMapping, BINS> = AtomicSketch::with_layout(LAYOUT);
static PLAIN: Mutex<RefCell<DDSketch<IntMapping, BINS>>> =
    Mutex::new(RefCell::new(DDSketch::with_layout(LAYOUT)));
static WINDOW: Window<Ticks, IntMapping, BINS> = built!(Window::with_origin(
    Ticks,
    LAYOUT,
    WindowConfig::new().with_interval(Duration::from_secs(10)),
    Instant::ZERO,
));
static BUDGET: RatioBudget = built!(RatioBudget::new(0.1, 10));
static BUCKET: TokenBucket<Ticks> = built!(TokenBucket::new(Ticks, 50.0, 5));
static HEDGER: Hedger<Ticks, &RatioBudget, IntMapping, BINS> =
    built!(
        Hedger::<Ticks, &RatioBudget, IntMapping, BINS>::with_origin(
            Ticks,
            HedgeConfig::new().with_min_delay(Duration::from_micros(200)),
            &BUDGET,
            LAYOUT,
            Instant::ZERO,
        )
    );

/// The stack `f` uses, in bytes: paints `PAINTED` bytes below the stack pointer, calls
/// `f`, and finds the lowest word it changed (`PAINTED` means at least that much).
/// Interrupts are masked meanwhile, so that a handler's frame is not counted.
#[inline(never)]
fn stack_used(f: fn()) -> usize {
    interrupt::free(|_| {
        let sp = cortex_m::register::msp::read() as usize;
        let bottom = sp - PAINTED;
        // Below the stack pointer: memory no frame holds. Nothing runs between the paint
        // and the call (interrupts are masked) that could use it.
        for addr in (bottom..sp).step_by(4) {
            // SAFETY: word-aligned RAM below the stack pointer, above the statics (the
            // stack has more than PAINTED bytes free on both boards: see BENCHMARKS.md).
            unsafe { core::ptr::write_volatile(addr as *mut u32, PAINT) };
        }
        // Through a black box: inlined into this frame, `f`'s locals would not be counted.
        black_box(f)();
        let lowest = (bottom..sp)
            .step_by(4)
            // SAFETY: the words painted above.
            .find(|&addr| unsafe { core::ptr::read_volatile(addr as *const u32) } != PAINT)
            .unwrap_or(sp);
        sp - lowest
    })
}

#[inline(never)]
fn first_sketch_record() {
    SKETCH.record_u64(black_box(1_500_000));
    black_box(SKETCH.count());
}

#[inline(never)]
fn first_plain_record() {
    interrupt::free(|cs| {
        let mut sketch = PLAIN.borrow(cs).borrow_mut();
        sketch.record_u64(black_box(1_500_000));
        black_box(sketch.count());
    });
}

#[inline(never)]
fn first_window_record() {
    WINDOW.record_u64(black_box(1_500_000));
    WINDOW.maintain();
    black_box(WINDOW.cached_quantile());
}

#[inline(never)]
fn first_budget_use() {
    BUDGET.on_request();
    black_box(BUDGET.try_acquire());
}

#[inline(never)]
fn first_bucket_use() {
    black_box(BUCKET.try_acquire());
}

#[inline(never)]
fn first_hedge() {
    let mut ticket = HEDGER.start();
    black_box(HEDGER.should_hedge(&mut ticket));
    HEDGER.record(Duration::from_micros(black_box(1_500)));
}

/// The clock's run-time set-up: SysTick interrupts every millisecond (of the core clock
/// QEMU models: 8 MHz would do; the rate matters only for the clock's pace).
#[inline(never)]
fn start_systick() {
    if let Some(mut core) = cortex_m::Peripherals::take() {
        core.SYST.set_clock_source(SystClkSource::Core);
        core.SYST.set_reload(8_000 - 1);
        core.SYST.clear_current();
        core.SYST.enable_counter();
        core.SYST.enable_interrupt();
    }
}

/// What is measured: the primitive, its `static`'s size, and the start-up work.
const STEPS: [(&str, usize, fn()); 7] = [
    (
        "AtomicSketch: first record and count",
        size_of::<AtomicSketch<IntMapping, BINS>>(),
        first_sketch_record,
    ),
    (
        "DDSketch (in a Mutex): first record",
        size_of::<Mutex<RefCell<DDSketch<IntMapping, BINS>>>>(),
        first_plain_record,
    ),
    (
        "Window: first record, maintain",
        size_of::<Window<Ticks, IntMapping, BINS>>(),
        first_window_record,
    ),
    (
        "RatioBudget: first deposit, acquire",
        size_of::<RatioBudget>(),
        first_budget_use,
    ),
    (
        "TokenBucket: first acquire",
        size_of::<TokenBucket<Ticks>>(),
        first_bucket_use,
    ),
    (
        "Hedger: first start, decision, record",
        size_of::<Hedger<Ticks, &RatioBudget, IntMapping, BINS>>(),
        first_hedge,
    ),
    ("clock: start SysTick", 0, start_systick),
];

#[entry]
fn main() -> ! {
    hprintln!("building into statics ({} bins): stack per step", BINS);
    let mut failed = 0u32;
    for (name, size, step) in STEPS {
        let used = stack_used(step);
        let ok = used < LIMIT;
        hprintln!(
            "{} {}{:>4} bytes of stack  ({} bytes static)  {}",
            if ok { "ok  " } else { "FAIL" },
            if used >= PAINTED { ">=" } else { "" },
            used,
            size,
            name
        );
        if !ok {
            failed += 1;
        }
    }
    // The statics were used, not rebuilt: the records are there.
    let recorded = SKETCH.count() == 1 && WINDOW.count() == 1 && HEDGER.stats().requests == 1;
    if !recorded {
        hprintln!("FAIL the statics did not keep their records");
        failed += 1;
    }
    hprintln!("{} failed", failed);
    exit::exit(failed)
}
