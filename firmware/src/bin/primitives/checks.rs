//! The checks, once SysTick is stopped: every figure the library promises, exactly, from
//! the main loop's and the interrupt's own tallies.

use core::sync::atomic::Ordering::Relaxed;

use cortex_m_semihosting::hprintln;
use tailguard::budget::Budget;

use crate::run::{Figures, REQUESTS};
use crate::stack::StackUse;
use crate::{
    Shared, BUCKET_BURST, BUCKET_RATE, ISR, OP_MAINTAIN, OP_NAMES, OP_ON_SUCCESS, OP_SHOULD_HEDGE,
    OP_START, OP_WINDOW_RECORD, RATIO_CAP, RATIO_PPM, REFRESH_US,
};

/// The refresh clock's tick, 2^20 ns, in µs rounded up: the staleness bound's slack.
const REFRESH_TICK_US: u32 = 1_049;

/// Prints the figures and one line per check; returns how many checks failed.
pub fn report(s: Shared, f: &Figures, stack: &StackUse) -> u32 {
    let isr = |c: &core::sync::atomic::AtomicU32| c.load(Relaxed);
    let (ticks, jumps) = (isr(&ISR.ticks), isr(&ISR.jumps));
    hprintln!(
        "run: {} SysTicks ({} clock jumps of 3 intervals), {} ms of clock, {} requests",
        ticks,
        jumps,
        f.end_us / 1_000,
        f.requests
    );
    hprintln!(
        "  SysTick every {} cycles; handler {} cycles on average, {} at most",
        crate::SYSTICK_CYCLES,
        isr(&ISR.cycles) / ticks.max(1),
        isr(&ISR.max_cycles)
    );
    let mut preempted_ops = 0u32;
    for (name, count) in OP_NAMES.iter().zip(ISR.preempted.iter()).skip(1) {
        let count = count.load(Relaxed);
        preempted_ops += count;
        hprintln!("  SysTick records during {}: {}", name, count);
    }
    hprintln!(
        "  ... during main-loop operations: {} of {}",
        preempted_ops,
        ticks
    );
    let preempted = |op: u8| {
        ISR.preempted
            .get(usize::from(op))
            .map_or(0, |c| c.load(Relaxed))
    };

    // The window: every record is in a slot or counted as expired.
    let w = s.window;
    let w_records = isr(&ISR.window_records) + f.window_records;
    let (w_count, w_expired) = (w.count(), w.expired());
    hprintln!(
        "window: records {} (SysTick {}, main {}); count {} + expired {}; rotations {}",
        w_records,
        isr(&ISR.window_records),
        f.window_records,
        w_count,
        w_expired,
        w.rotations()
    );
    // The exponential window: every record in a slot, expired or saturated, while it
    // rescales and rotates under the interrupt.
    let e = &crate::EXPONENTIAL;
    let e_records = isr(&ISR.exponential_records) + f.exponential_records;
    let e_held = e.count() + u64::from(e.expired()) + u64::from(e.saturated());
    hprintln!(
        "exponential window: records {} (SysTick {}, main {}); count {} + expired {} + saturated {}; rotations {}, rescales {}, clamped {}, raced {}, scale {:?}",
        e_records,
        isr(&ISR.exponential_records),
        f.exponential_records,
        e.count(),
        e.expired(),
        e.saturated(),
        e.rotations(),
        e.rescales(),
        e.clamped(),
        e.raced(),
        e.scale()
    );
    // The sketch: every record counted, the ones above the range in `clamped` too.
    let a = s.sketch;
    let a_records = isr(&ISR.sketch_records) + f.sketch_records;
    hprintln!(
        "sketch: records {} (SysTick {}, main {}); count {}, clamped {}, saturated {}",
        a_records,
        isr(&ISR.sketch_records),
        f.sketch_records,
        a.count(),
        a.clamped(),
        a.saturated()
    );
    let t = &f.threshold;
    hprintln!(
        "threshold: {} looks, {} Some, {} None; max age seen {} us, max maintenance gap {} us; {} quiet looks",
        t.looks,
        t.some,
        t.none,
        t.max_age_us,
        t.max_gap_us,
        t.quiet
    );
    // The hedger: its window holds the main loop's latencies and the interrupt's.
    let h = s.hedger;
    let stats = h.stats();
    let hw = h.window();
    let h_records = isr(&ISR.hedger_records) + f.requests;
    let (hw_count, hw_expired) = (hw.count(), hw.expired());
    hprintln!("hedger: {:?}", stats);
    hprintln!(
        "hedger window: records {} (SysTick {}, main {}); count {} + expired {}",
        h_records,
        isr(&ISR.hedger_records),
        f.requests,
        hw_count,
        hw_expired
    );
    let ratio_requests = stats.requests + f.ratio_requests + isr(&ISR.ratio_requests);
    let ratio_granted = s.ratio.granted();
    // Millionths of a token, as the budget keeps them: exact in an f64.
    let ratio_balance = (s.ratio.balance() * 1e6 + 0.5) as u64;
    hprintln!(
        "ratio budget: granted {} (hedges {}, main {}, SysTick {}), denied {}, balance {} millionths, requests {} (SysTick {}, main {}, hedger {})",
        ratio_granted,
        stats.hedges,
        f.ratio_granted,
        isr(&ISR.ratio_granted),
        s.ratio.denied(),
        ratio_balance,
        ratio_requests,
        isr(&ISR.ratio_requests),
        f.ratio_requests,
        stats.requests
    );
    let bucket_granted = s.bucket.granted();
    // The clock's time outside its jumps.
    let ticking_us = f.end_us - jumps * crate::clock::JUMP_US;
    hprintln!(
        "token bucket: granted {} (main {}, SysTick {}), denied {}, {} us of clock ({} of them ticking) at {}/s, burst {}",
        bucket_granted,
        f.bucket_granted,
        isr(&ISR.bucket_granted),
        s.bucket.denied(),
        f.end_us,
        ticking_us,
        BUCKET_RATE,
        BUCKET_BURST
    );
    hprintln!("stack: peak {} of {} B", stack.peak, stack.size);

    let checks = [
        (
            "interrupts: SysTick landed inside records, maintenances and hedger calls",
            preempted(OP_WINDOW_RECORD) > 0
                && preempted(OP_MAINTAIN) > 0
                && preempted(OP_START) + preempted(OP_SHOULD_HEDGE) + preempted(OP_ON_SUCCESS) > 0,
        ),
        (
            "exponential window: count + expired + saturated = records (SysTick + main), after rescales and rotations",
            e_held == u64::from(e_records)
                && e.rescales() > 0
                && e.rotations() > 0
                && preempted(crate::OP_EXPONENTIAL_RECORD) > 0,
        ),
        (
            "window: count + expired = records (SysTick + main), after rotations and jumps",
            w_count + u64::from(w_expired) == u64::from(w_records)
                && w_expired > 0
                && jumps > 0
                && w.rotations() > jumps,
        ),
        (
            "sketch: count = records (SysTick + main), clamped = records above the range, none saturated",
            a.count() == u64::from(a_records)
                && a.clamped() == u64::from(f.clamped_records)
                && a.saturated() == 0,
        ),
        (
            "threshold: None below min_count, Some only from min_count values",
            t.below_min_count == 0 && t.some > 0 && t.none > 0,
        ),
        (
            "threshold: the cached p90 is a value of an interval still in the window",
            t.not_in_window == 0 && t.rotations > 0,
        ),
        (
            "threshold: in quiet moments, the cached p90 and count are the window's own",
            t.quiet > 0 && t.quiet_differed == 0,
        ),
        (
            "threshold: never older than r + m (+ the refresh tick)",
            t.max_age_us <= REFRESH_US + t.max_gap_us + REFRESH_TICK_US,
        ),
        (
            // In millionths of a token, as the budget counts: exact.
            "ratio budget: granted + balance <= ratio * requests + cap, and it ran dry; granted and denied add up",
            s.ratio.denied() > 0
                && u64::from(ratio_granted) * 1_000_000 + ratio_balance
                <= u64::from(RATIO_PPM) * u64::from(ratio_requests)
                    + u64::from(RATIO_CAP) * 1_000_000
                && ratio_granted == stats.hedges + f.ratio_granted + isr(&ISR.ratio_granted)
                && s.ratio.denied()
                    == stats.denied_budget + f.ratio_denied + isr(&ISR.ratio_denied),
        ),
        (
            // One token per 1,000 us of the clock (the applied rate is the one asked for:
            // checked), from the clock's 0, when the bucket was made full; a clock jump
            // fills it to the burst and no more, so each stretch between jumps grants at
            // most a burst plus its length's tokens.
            "token bucket: granted <= rate * (elapsed - jumps) + burst * (jumps + 1); granted and denied add up",
            s.bucket.rate() == f64::from(BUCKET_RATE)
                && u64::from(bucket_granted) * 1_000_000
                    <= u64::from(BUCKET_RATE) * u64::from(ticking_us)
                        + u64::from(BUCKET_BURST) * u64::from(jumps + 1) * 1_000_000
                && bucket_granted == f.bucket_granted + isr(&ISR.bucket_granted)
                && s.bucket.denied() == f.bucket_denied + isr(&ISR.bucket_denied),
        ),
        (
            "hedger: requests = primary wins + hedge wins; hedges, wins and skips as the loop saw them",
            stats.requests == REQUESTS
                && stats.primary_wins + stats.hedge_wins == stats.requests
                && stats.hedges == f.hedges
                && stats.hedge_wins == f.hedge_wins
                && stats.hedge_wins <= stats.hedges
                && stats.denied_budget == f.skipped_budget
                && stats.skipped_cold == f.skipped_cold
                && f.skipped_other == 0
                && stats.errors == 0
                && stats.hedges > 0
                && stats.hedge_wins > 0,
        ),
        (
            "hedger window: count + expired = records (SysTick + main)",
            hw_count + u64::from(hw_expired) == u64::from(h_records),
        ),
        (
            "stack: the peak stays inside the stack region",
            stack.peak < stack.size,
        ),
    ];
    let mut failed = 0u32;
    for (name, ok) in checks {
        hprintln!("{} {}", if ok { "ok  " } else { "FAIL" }, name);
        failed += u32::from(!ok);
    }
    hprintln!("{} passed, {} failed", checks.len() as u32 - failed, failed);
    failed
}
