//! The size images: each builds one primitive into a static and
//! uses it (record and query, or what the primitive does), measuring the peak stack of each
//! call by stack painting, and prints `size_of <bytes>` and `stack <call> <bytes>` lines
//! over semihosting. The operation's name, `size-<primitive>`: `none` (this harness alone:
//! the baseline of the flash and RAM figures), `ddsketch-849`, `ddsketch-300`,
//! `atomic-849`, `atomic-300`, `window-849`, `window-300`, `ratio`, `bucket`,
//! `hedger-849`, `hedger-300`, `hedger-compact`, `hedger-compact-static`. 849 bins:
//! `IntLatencyCoarse` (1 µs .. 100 s); 300 bins: [`super::mcu_sketch`];
//! `hedger-compact`: `CompactHedger` (64 `u16` exponential buckets a slot, no range), and
//! `-static` the same built at compile time. `.ci/firmware-size.sh` builds each and writes
//! the table.
//!
//! Written without `core::fmt` (the lines are put together by hand), so that formatting
//! machinery does not swamp the primitives' flash.

use core::hint::black_box;
use core::mem::{size_of, size_of_val};
use core::ptr::{addr_of, read_volatile, write_volatile};
use core::time::Duration;

use cortex_m_semihosting::hio;
use tailguard::budget::{Budget, RatioBudget, TokenBucket};
use tailguard::clock::Instant;
use tailguard::hedge::{
    Attempt, CompactHedger, HedgeConfig, HedgePreset, Hedger, PresetCompactHedger, WindowKind,
};
use tailguard::sketch::{AtomicSketch, DDSketch, IntMapping};
use tailguard::window::{Window, WindowConfig};

use super::clock::{self, StaticClock};
use super::{contains, OP};

/// What the stack is painted with (cortex-m-rt's own paint value).
const PAINT: u32 = 0xCCCC_CCCC;

extern "C" {
    // cortex-m-rt's linker script defines it: the lowest address of the stack region,
    // just above the statics. Only its address means anything.
    static _stack_end: u32;
}

/// Runs the size image `OP` names (`size-...`).
pub fn run() {
    // Each test is a constant (`const` blocks), so that an image keeps only its own
    // primitive's code at any optimisation level, `opt-level = "s"` included.
    if const { contains(OP, "size-none") } {
        // The primitives' images can panic (a configuration refused, say): the panic
        // handler and its formatting are in every image, so in the baseline too.
        if black_box(false) {
            panic!("never");
        }
        print("stack none", stack_of(|| {}));
    } else if const { contains(OP, "ddsketch") } {
        ddsketch();
    } else if const { contains(OP, "atomic") } {
        atomic();
    } else if const { contains(OP, "window") } {
        window();
    } else if const { contains(OP, "hedger-compact-static") } {
        compact_hedger_static();
    } else if const { contains(OP, "hedger-compact") } {
        compact_hedger();
    } else if const { contains(OP, "hedger") } {
        hedger();
    } else if const { contains(OP, "size-ratio") } {
        ratio();
    } else if const { contains(OP, "size-bucket") } {
        bucket();
    } else {
        panic!("unknown size image");
    }
}

/// The bins of the image's sketches (statics cannot be generic: one size per image).
const BINS: usize = if contains(OP, "-300") { 300 } else { 849 };
/// 849 bins from 1 µs (`IntLatencyCoarse`), or 300 from 100 µs ([`super::mcu_sketch`]).
const MIN_NS: f64 = if BINS == 300 { 100_000.0 } else { 1_000.0 };
type Sketch = DDSketch<IntMapping, BINS>;

fn sketch() -> Sketch {
    match DDSketch::new(IntMapping::K5, MIN_NS) {
        Ok(s) => s,
        Err(_) => panic!("sketch configuration"),
    }
}

fn ddsketch() {
    let Some(s) = cortex_m::singleton!(: Sketch = sketch()) else {
        panic!("built once")
    };
    print("size_of", size_of::<Sketch>());
    fill(|v| s.record_u64(v));
    print(
        "stack record_u64",
        stack_of(|| black_box(&mut *s).record_u64(black_box(1_500_000))),
    );
    print(
        "stack quantile",
        stack_of(|| {
            black_box(black_box(&*s).quantile(black_box(0.99)).ok());
        }),
    );
}

fn atomic() {
    let Some(s) = cortex_m::singleton!(: AtomicSketch<IntMapping, BINS> =
        AtomicSketch::with_layout(sketch().layout()))
    else {
        panic!("built once")
    };
    let s = &*s;
    print("size_of", size_of::<AtomicSketch<IntMapping, BINS>>());
    fill(|v| s.record_u64(v));
    print(
        "stack record_u64",
        stack_of(|| black_box(s).record_u64(black_box(1_500_000))),
    );
    print(
        "stack quantile",
        stack_of(|| {
            black_box(black_box(s).quantile(black_box(0.99)).ok());
        }),
    );
}

type TheWindow = Window<StaticClock, IntMapping, BINS>;

fn window() {
    let config = WindowConfig::new().with_interval(Duration::from_secs(1));
    let Some(w) = cortex_m::singleton!(: Option<TheWindow> = Window::with_layout(StaticClock, sketch().layout(), config).ok())
    else {
        panic!("built once")
    };
    let Some(w) = w.as_ref() else {
        panic!("window configuration")
    };
    print("size_of", size_of::<TheWindow>());
    fill(|v| w.record_u64(v));
    print(
        "stack record_u64",
        stack_of(|| black_box(w).record_u64(black_box(1_500_000))),
    );
    // One interval on: the record rotates (the default configuration).
    clock::set(clock::get() + 1_000_000_000);
    print(
        "stack record_u64 rotating",
        stack_of(|| black_box(w).record_u64(black_box(1_500_000))),
    );
    fill(|v| w.record_u64(v));
    print("stack maintain", stack_of(|| black_box(w).maintain()));
    print(
        "stack quantile",
        stack_of(|| {
            black_box(black_box(w).quantile(black_box(0.99)).ok());
        }),
    );
    print(
        "stack cached_quantile",
        stack_of(|| {
            black_box(black_box(w).cached_quantile());
        }),
    );
}

fn hedger() {
    type TheHedger = Hedger<StaticClock, RatioBudget, IntMapping, BINS>;
    let config = HedgeConfig::new().with_interval(Duration::from_secs(1));
    let Some(h) = cortex_m::singleton!(: Option<TheHedger> = Hedger::with_layout(StaticClock, config, sketch().layout()).ok())
    else {
        panic!("built once")
    };
    use_built(h);
}

fn compact_hedger() {
    type TheHedger = CompactHedger<StaticClock, RatioBudget>;
    let config = HedgeConfig::new().with_interval(Duration::from_secs(1));
    let Some(h) =
        cortex_m::singleton!(: Option<TheHedger> = Hedger::exponential(StaticClock, config).ok())
    else {
        panic!("built once")
    };
    use_built(h);
}

/// A hedger built at run time, if its configuration was accepted: its size and the calls.
fn use_built<M: WindowKind, const N: usize>(h: &Option<Hedger<StaticClock, RatioBudget, M, N>>) {
    let Some(h) = h.as_ref() else {
        panic!("hedger configuration")
    };
    print("size_of", size_of_val(h));
    use_hedger(h);
}

/// The embassy firmware's configuration (1 s intervals, no hedge sooner than 200 µs, 10
/// tokens), as a preset.
struct Sensor;
impl HedgePreset for Sensor {
    const CONFIG: HedgeConfig = HedgeConfig::new()
        .with_min_delay(Duration::from_micros(200))
        .with_interval(Duration::from_secs(1))
        .with_budget_cap(10);
}

/// `CompactHedger` as firmware builds it: a `static` made by its `const` constructor, so
/// that no construction code is linked and no stack builds it; of a preset, which it
/// stores as zero bytes, so the static is `.bss` (`.ci/firmware.sh` checks it).
fn compact_hedger_static() {
    static HEDGER: PresetCompactHedger<StaticClock, Sensor> =
        match Hedger::preset(StaticClock, Instant::ZERO) {
            Ok(hedger) => hedger,
            Err(_) => panic!("hedger configuration"),
        };
    print("size_of", size_of_val(&HEDGER));
    use_hedger(&HEDGER);
}

/// The same calls on either hedger.
fn use_hedger<B: Budget, M: WindowKind, const N: usize>(h: &Hedger<StaticClock, B, M, N>) {
    for ms in 1..=50u64 {
        h.record(Duration::from_micros(1000 + 37 * ms));
    }
    let mut ticket = None;
    print(
        "stack start",
        stack_of(|| ticket = Some(black_box(h).start())),
    );
    let Some(mut ticket) = ticket else {
        panic!("started")
    };
    clock::set(clock::get() + 3_000_000); // 3 ms on: past the learned p90
    print(
        "stack should_hedge",
        stack_of(|| {
            black_box(black_box(h).should_hedge(&mut ticket));
        }),
    );
    print(
        "stack on_success",
        stack_of(|| {
            black_box(black_box(h).on_success(&ticket, Attempt::Hedge(1)));
        }),
    );
    print(
        "stack record",
        stack_of(|| black_box(h).record(black_box(Duration::from_micros(1500)))),
    );
}

fn ratio() {
    let Some(b) = cortex_m::singleton!(: Option<RatioBudget> = RatioBudget::new(0.1, 10).ok())
    else {
        panic!("built once")
    };
    let Some(b) = b.as_ref() else {
        panic!("budget configuration")
    };
    print("size_of", size_of::<RatioBudget>());
    print("stack on_request", stack_of(|| black_box(b).on_request()));
    print(
        "stack try_acquire",
        stack_of(|| {
            black_box(black_box(b).try_acquire());
        }),
    );
}

fn bucket() {
    type Bucket = TokenBucket<StaticClock>;
    let Some(b) =
        cortex_m::singleton!(: Option<Bucket> = TokenBucket::new(StaticClock, 100.0, 10).ok())
    else {
        panic!("built once")
    };
    let Some(b) = b.as_ref() else {
        panic!("bucket configuration")
    };
    print("size_of", size_of::<Bucket>());
    clock::set(clock::get() + 5_000_000);
    print(
        "stack try_acquire",
        stack_of(|| {
            black_box(black_box(b).try_acquire());
        }),
    );
}

/// Records a spread of latencies, 1 ms to 9.4 ms, as the count images do.
fn fill(mut record: impl FnMut(u64)) {
    let mut rng = tailguard_support::Xorshift32(black_box(0x1234_5678));
    for _ in 0..200 {
        record(black_box(1_000_000 + u64::from(rng.next_u32() & 0x7f_ffff)));
    }
}

/// The peak stack `f` takes, in bytes from the caller's stack pointer: paints the free
/// stack, calls `f` (out of line, so its frame is below the painted line's start), and
/// finds the lowest word it scrubbed off. A frame that reserved words it never wrote at
/// its lowest addresses would be missed: a lower bound, exact for the usual frames.
#[inline(never)]
fn stack_of(f: impl FnOnce()) -> usize {
    let bottom = addr_of!(_stack_end) as usize;
    // Read by a call, so after this function's prologue has pushed what it saves (read
    // here, the compiler may schedule the read before the pushes, which the paint would
    // then overwrite). The words between that reading and this function's own stack
    // pointer are where `call` saves its two registers: not painted, counted below.
    let sp = stack_pointer();
    let mut word = bottom;
    while word < sp {
        // SAFETY: [bottom, sp) is stack below the stack pointer: free (no interrupt is
        // enabled), and this loop pushes nothing.
        unsafe { write_volatile(word as *mut u32, PAINT) };
        word += 4;
    }
    call(f);
    let mut low = bottom;
    // SAFETY: [bottom, sp) is the stack region's RAM, read as plain words.
    while low < sp && unsafe { read_volatile(low as *const u32) } == PAINT {
        low += 4;
    }
    sp - low + STACK_POINTER_FRAME
}

/// What [`stack_pointer`] pushes (r7 and lr: the disassembly of both targets shows
/// `push {r7, lr}`), so what its reading is below its caller's stack pointer.
const STACK_POINTER_FRAME: usize = 8;

/// The stack pointer in this function: its caller's, less [`STACK_POINTER_FRAME`].
#[inline(never)]
fn stack_pointer() -> usize {
    cortex_m::register::msp::read() as usize
}

#[inline(never)]
fn call(f: impl FnOnce()) {
    f()
}

/// Prints `label value` and a newline over semihosting. Never inlined: the same code in
/// every image, so that it cancels out of the flash differences.
#[inline(never)]
fn print(label: &str, value: usize) {
    let mut line = [0u8; 64];
    let mut len = 0;
    for &b in label.as_bytes().iter().chain(b" ") {
        if let Some(slot) = line.get_mut(len) {
            *slot = b;
            len += 1;
        }
    }
    let mut digits = [0u8; 10];
    let (mut n, mut d) = (value, digits.len());
    loop {
        d -= 1;
        digits[d] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for &b in digits[d..].iter().chain(b"\n") {
        if let Some(slot) = line.get_mut(len) {
            *slot = b;
            len += 1;
        }
    }
    if let Ok(mut out) = hio::hstdout() {
        let _ = out.write_all(&line[..len]);
    }
}
