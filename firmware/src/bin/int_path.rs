//! The integer hedge path on a microcontroller: a [`McuHedger`] (the microcontroller
//! preset, `IntMapping`) and a [`CompactHedger`] (an auto-scaling window), each with a
//! ratio budget, and a token bucket, drive simulated requests through `start`,
//! `should_hedge`, `on_success` (the compact hedger's refreshes of its cached percentile
//! included), window records, threshold reads and a rank query, and every latency is recorded into an auto-scaling [`ExponentialSketch`]
//! (which downscales on the way) and ranked there, and into an [`ExponentialWindow`] (which
//! rotates and rescales), all from one function, [`int_hot_path`]. `.ci/check-int-path.sh`
//! disassembles this image and fails if anything that function can reach is a soft-float
//! helper, a 64-bit division or a float instruction: with link-time optimisation only
//! reachable code is linked, and the construction (which validates its `f64`
//! configuration) lives outside that function.
//!
//! Under QEMU it also checks, cheaply, that the path works: stalled reads are rescued by
//! hedges after warm-up, by both hedgers, the hedges stay within the budgets' bound, and
//! the thresholds sit just above the usual latency. It exits 0 through semihosting if they hold, 1 otherwise.
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
use tailguard::hedge::{Attempt, CompactHedger, Decision, HedgeConfig, HedgePolicy, Hedger};
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
/// The compact hedger, on a clock of its own kept in step with the device's.
type Compact<'a> = CompactHedger<&'a SimClock, &'a RatioBudget>;

/// The auto-scaling sketch every latency goes into: 64 buckets of 16-bit counters.
type Latencies = ExponentialSketch<u16, 64>;
/// An exponential window of 64 `u16` buckets a slot, over the same clock.
type Rescaling<'a> = ExponentialWindow<&'a SimClock, u16, 64>;

/// What a hedger did with the requests.
#[derive(Clone, Copy, Default)]
struct Hedging {
    stalls: u32,
    rescued: u32,
    hedges: u32,
    /// The threshold read after the request (0 while cold).
    bound_ns: u64,
}

/// What the requests did.
#[derive(Clone, Copy, Default)]
struct Tally {
    device: Hedging,
    compact: Hedging,
    bucket_grants: u32,
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
    hedgers: (&Device<'_>, &Compact<'_>),
    bucket: &TokenBucket<&SimClock>,
    clocks: (&SimClock, &SimClock),
    rng: &mut Xorshift32,
    request: u32,
    tally: &mut Tally,
    latencies: &mut Latencies,
    window: &Rescaling<'_>,
) {
    let (hedger, compact) = hedgers;
    let (clock, compact_clock) = clocks;
    let stall = request % STALL_EVERY == STALL_EVERY - 1;
    let start = clock.now().as_nanos();
    let (primary, backup) = (read_latency(rng, stall), read_latency(rng, false));
    let end = hedged_request(hedger, clock, (primary, backup), stall, &mut tally.device);
    // The same read through the compact hedger, from the same start.
    compact_clock.advance_to(start);
    hedged_request(
        compact,
        compact_clock,
        (primary, backup),
        stall,
        &mut tally.compact,
    );
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
    tally.device.bound_ns = hedger.window().cached_upper_bound().unwrap_or(0);
    tally.compact.bound_ns = compact.window().cached_upper_bound().unwrap_or(0);
    tally.within_stall = hedger.window().rank_u64(STALL_NS);
    tally.auto_within_stall = latencies.rank_u64(STALL_NS);
}

/// One read through `hedger`'s lifecycle on `clock`: the primary takes `latencies.0`, a
/// backup `latencies.1` from when it is sent. Returns when the read was answered.
#[inline(always)]
fn hedged_request<H: HedgePolicy>(
    hedger: &H,
    clock: &SimClock,
    latencies: (u64, u64),
    stall: bool,
    tally: &mut Hedging,
) -> u64 {
    let primary_end = clock.now().as_nanos().saturating_add(latencies.0);
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
                let backup_end = clock.now().as_nanos().saturating_add(latencies.1);
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
    end
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
    let compact_clock = SimClock(Cell::new(clock.now().as_nanos()));
    let Ok(compact_budget) = RatioBudget::new(0.1, 10) else {
        fail("compact budget")
    };
    let Ok(compact) = Hedger::exponential_with_budget(&compact_clock, config, &compact_budget)
    else {
        fail("compact hedger")
    };
    let compact: Compact<'_> = compact;
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
            (&hedger, &compact),
            &bucket,
            (&clock, &compact_clock),
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
    let compact_granted = compact_budget.granted();
    hprintln!(
        "int_path: {} requests, {} stalls, {} rescued by {} hedges, {} granted, bucket {}, threshold {} ns; compact hedger: {} rescued by {} hedges, {} granted, threshold {} ns, {} B; sizes: hedger {} B, sketch {} B; auto-scaling sketch at scale {}, {} B; exponential window at scale {:?}, {} B",
        REQUESTS,
        tally.device.stalls,
        tally.device.rescued,
        tally.device.hedges,
        granted,
        tally.bucket_grants,
        tally.device.bound_ns,
        tally.compact.rescued,
        tally.compact.hedges,
        compact_granted,
        tally.compact.bound_ns,
        core::mem::size_of::<Compact<'_>>(),
        core::mem::size_of::<Device<'_>>(),
        core::mem::size_of::<DDSketch<IntMapping, BINS>>(),
        latencies.scale(),
        core::mem::size_of::<Latencies>(),
        window.scale(),
        core::mem::size_of::<Rescaling<'_>>(),
    );
    // After warm-up nearly every stall is rescued (a few fall on an empty budget or on a
    // rotation's fresh window), by either hedger; hedges stay within ratio * requests +
    // cap; the threshold (the p90's bin edge) sits above the usual 1.0-1.26 ms and well
    // below a stall (the compact hedger's buckets are wider: up to 8.6 %).
    let hedged_well = |h: &Hedging, granted: u32| {
        h.rescued * 10 >= h.stalls * 8
            && u64::from(granted) * 10 <= u64::from(REQUESTS) + 100
            && h.hedges == granted
    };
    let ok = hedged_well(&tally.device, granted)
        && hedged_well(&tally.compact, compact_granted)
        && tally.compact.stalls == tally.device.stalls
        && tally.bucket_grants > 0
        && tally.bucket_grants < REQUESTS
        && (1_200_000..1_400_000).contains(&tally.device.bound_ns)
        && (1_200_000..1_450_000).contains(&tally.compact.bound_ns)
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
