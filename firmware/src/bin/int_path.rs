//! The integer hedge path on a microcontroller: a [`McuHedger`] (the microcontroller
//! preset, `IntMapping`) with a ratio budget, and a token bucket, drive simulated requests
//! through `start`, `should_hedge`, `on_success`, window records, threshold reads and a
//! rank query, and every latency is recorded into an auto-scaling [`ExponentialSketch`]
//! (which downscales on the way) and ranked there, and into an [`ExponentialWindow`] (which
//! rotates and rescales), all from one function, [`int_hot_path`]. `.ci/check-int-path.sh`
//! disassembles this image and fails if anything that function can reach is a soft-float
//! helper, a 64-bit division or a float instruction: with link-time optimisation only
//! reachable code is linked, and the construction (which validates its `f64`
//! configuration) lives outside that function.
//!
//! Under QEMU it also checks, cheaply, that the path works: stalled reads are rescued by
//! hedges after warm-up, the hedges stay within the budget's bound, and the threshold sits
//! just above the usual latency. It exits 0 through semihosting if they hold, 1 otherwise.
//!
//! Built and run by `.ci/firmware.sh` for the Cortex-M0 (micro:bit, 16 KiB of RAM) and the
//! Cortex-M4F.
#![no_std]
#![no_main]

#[path = "../../exit.rs"]
mod exit;

use core::cell::Cell;
use core::time::Duration;

use cortex_m as _;
use cortex_m_rt::entry;
use cortex_m_semihosting::hprintln;
use panic_semihosting as _;
use tailguard::budget::{Budget, RatioBudget, TokenBucket};
use tailguard::clock::{Clock, Instant};
use tailguard::hedge::{Attempt, Decision, HedgeConfig, Hedger};
use tailguard::sketch::{presets, DDSketch, ExponentialSketch, IntMapping};
use tailguard::window::ExponentialWindow;
use tailguard_support::Xorshift32;

/// Simulated requests.
const REQUESTS: u32 = 2_000;
/// One request in this many stalls.
const STALL_EVERY: u32 = 16;
/// A stalled read's latency.
const STALL_NS: u64 = 20_000_000;

/// A clock the simulation moves (single-threaded: a `Cell`).
struct SimClock(Cell<u64>);

impl SimClock {
    fn advance_to(&self, ns: u64) {
        self.0.set(self.0.get().max(ns));
    }
}

impl Clock for SimClock {
    #[inline]
    fn now(&self) -> Instant {
        Instant::from_nanos(self.0.get())
    }
}

/// The sketch's bins: the microcontroller preset's on the Cortex-M4F (`McuHedger`). The
/// micro:bit builds the hedger on its stack, which takes three copies of it during
/// construction (22 KB with the preset's 534 bins, more than its 16 KiB of RAM; a
/// `static` built by a `const` constructor takes none): there the preset's mapping over a
/// narrower range, 100 µs to 33 ms, with the same code.
#[cfg(target_abi = "eabihf")]
const BINS: usize = presets::MCU_LATENCY_BINS;
#[cfg(not(target_abi = "eabihf"))]
const BINS: usize = 267;

/// An empty sketch of [`BINS`] bins with the preset's mapping, lowest bin at 100 µs.
fn device_sketch() -> Option<DDSketch<IntMapping, BINS>> {
    DDSketch::new(IntMapping::K5, presets::MCU_MIN_LATENCY_NS).ok()
}

type Device<'a> = Hedger<&'a SimClock, &'a RatioBudget, IntMapping, BINS>;

/// The auto-scaling sketch every latency goes into: 64 buckets of 16-bit counters.
type Latencies = ExponentialSketch<u16, 64>;
/// An exponential window of 64 `u16` buckets a slot, over the same clock.
type Rescaling<'a> = ExponentialWindow<&'a SimClock, u16, 64>;

/// What one request did.
#[derive(Clone, Copy, Default)]
struct Tally {
    stalls: u32,
    rescued: u32,
    hedges: u32,
    bucket_grants: u32,
    /// The threshold read after the request (0 while cold).
    bound_ns: u64,
    /// The window's values at or below the stall, read after the request (a rank query).
    within_stall: u64,
    /// The auto-scaling sketch's values at or below the stall (its rank query).
    auto_within_stall: u64,
}

/// A sensor read of about 1 ms (1.0 to 1.26 ms), one in [`STALL_EVERY`] stalled.
#[inline(always)]
fn read_latency(rng: &mut Xorshift32, stall: bool) -> u64 {
    let usual = 1_000_000 + u64::from(rng.next_u32() & 0x3_ffff);
    if stall {
        STALL_NS
    } else {
        usual
    }
}

/// One request through the integer hot path: everything this function reaches must be
/// integer-only (checked by `.ci/check-int-path.sh`, which looks for this symbol).
#[inline(never)]
#[no_mangle]
fn int_hot_path(
    hedger: &Device<'_>,
    bucket: &TokenBucket<&SimClock>,
    clock: &SimClock,
    rng: &mut Xorshift32,
    request: u32,
    tally: &mut Tally,
    latencies: &mut Latencies,
    window: &Rescaling<'_>,
) {
    let stall = request % STALL_EVERY == STALL_EVERY - 1;
    let start = clock.now().as_nanos();
    let primary_end = start.saturating_add(read_latency(rng, stall));
    let mut ticket = hedger.start();
    let mut end = primary_end;
    let mut winner = Attempt::Primary;
    loop {
        match hedger.should_hedge(&mut ticket) {
            Decision::Wait(d) => {
                let wake = clock.now().as_nanos().saturating_add(d.as_nanos() as u64);
                if wake >= primary_end {
                    break;
                }
                clock.advance_to(wake);
            }
            Decision::Hedge => {
                tally.hedges += 1;
                let backup_end = clock
                    .now()
                    .as_nanos()
                    .saturating_add(read_latency(rng, false));
                if backup_end < primary_end {
                    end = backup_end;
                    winner = Attempt::Hedge(1);
                }
                break;
            }
            Decision::Skip(_) => break,
        }
    }
    clock.advance_to(end);
    let latency: Duration = hedger.on_success(&ticket, winner);
    if stall {
        tally.stalls += 1;
        if winner != Attempt::Primary && latency < Duration::from_millis(5) {
            tally.rescued += 1;
        }
    }
    // A record from outside the ticket lifecycle (an interrupt handler's, say), a token
    // bucket's grant, a threshold read and a rank query: the rest of the integer path.
    if request.is_multiple_of(64) {
        hedger.window().record_u64(end.wrapping_sub(start));
    }
    // Its bucket from the exponent and the table of scale 8, shifted to the sketch's scale,
    // and the downscales when a latency falls outside its 64 buckets.
    latencies.record_u64(end.wrapping_sub(start));
    // And into an exponential window: its slot's state, the tagged counter, and the
    // rotations and rescales (recycled slots' scales from the range seen) it does itself.
    window.record_u64(end.wrapping_sub(start));
    hedger.budget().on_request();
    if bucket.try_acquire() {
        tally.bucket_grants += 1;
    }
    tally.bound_ns = hedger.window().cached_upper_bound().unwrap_or(0);
    tally.within_stall = hedger.window().rank_u64(STALL_NS);
    tally.auto_within_stall = latencies.rank_u64(STALL_NS);
}

#[entry]
fn main() -> ! {
    let clock = SimClock(Cell::new(1_000_000_000));
    // Construction validates the f64 configuration: outside the integer hot path.
    let Ok(budget) = RatioBudget::new(0.1, 10) else {
        fail("budget")
    };
    let config = HedgeConfig::new()
        .with_min_samples(20)
        .with_min_delay(Duration::from_micros(100))
        .with_max_delay(Duration::from_secs(10));
    let Some(sketch) = device_sketch() else {
        fail("sketch")
    };
    #[cfg(target_abi = "eabihf")]
    if sketch != presets::mcu_latency() {
        fail("preset")
    }
    let Ok(hedger) = Hedger::with_budget(&clock, config, &budget, sketch.layout()) else {
        fail("hedger")
    };
    let hedger: Device<'_> = hedger;
    // 5 per second against requests about 134 ms apart: some granted, some denied.
    let Ok(bucket) = TokenBucket::new(&clock, 5.0, 2) else {
        fail("bucket")
    };

    let mut rng = Xorshift32(0x1234_5678);
    let mut tally = Tally::default();
    let mut latencies = Latencies::new();
    let Ok(window) = Rescaling::new(&clock, Duration::from_secs(10)) else {
        fail("exponential window")
    };
    for request in 0..REQUESTS {
        int_hot_path(
            &hedger,
            &bucket,
            &clock,
            &mut rng,
            request,
            &mut tally,
            &mut latencies,
            &window,
        );
        // Requests 1 ms apart on average, so the window rotates a few times (30 s).
        clock.advance_to(
            clock
                .now()
                .as_nanos()
                .saturating_add(u64::from(rng.next_u32() & 0x7f_ffff) * 32),
        );
    }

    let granted = budget.granted();
    hprintln!(
        "int_path: {} requests, {} stalls, {} rescued by {} hedges, {} granted, bucket {}, threshold {} ns, sizes: hedger {} B, sketch {} B; auto-scaling sketch at scale {}, {} B; exponential window at scale {:?}, {} B",
        REQUESTS,
        tally.stalls,
        tally.rescued,
        tally.hedges,
        granted,
        tally.bucket_grants,
        tally.bound_ns,
        core::mem::size_of::<Device<'_>>(),
        core::mem::size_of::<DDSketch<IntMapping, BINS>>(),
        latencies.scale(),
        core::mem::size_of::<Latencies>(),
        window.scale(),
        core::mem::size_of::<Rescaling<'_>>(),
    );
    // After warm-up nearly every stall is rescued (a few fall on an empty budget or on a
    // rotation's fresh window); hedges stay within ratio * requests + cap; the threshold
    // (the p90's bin edge) sits above the usual 1.0-1.26 ms and well below a stall.
    let ok = tally.rescued * 10 >= tally.stalls * 8
        && u64::from(granted) * 10 <= u64::from(REQUESTS) + 100
        && tally.hedges == granted
        && tally.bucket_grants > 0
        && tally.bucket_grants < REQUESTS
        && (1_200_000..1_400_000).contains(&tally.bound_ns)
        && tally.within_stall > 0
        // 1 ms to 20 ms (and the hedged reads between) do not fit 64 buckets of scale 8.
        && latencies.count() == u64::from(REQUESTS)
        && latencies.saturated() == 0
        && (0..8).contains(&latencies.scale())
        // No latency is above a stall's: every one ranks at or below it.
        && tally.auto_within_stall == latencies.count();
    hprintln!("{}", if ok { "ok   int_path" } else { "FAIL int_path" });
    exit::exit(u32::from(!ok))
}

/// Reports a construction that was refused and exits 1.
fn fail(what: &str) -> ! {
    hprintln!("FAIL int_path: {} refused", what);
    exit::exit(1)
}
