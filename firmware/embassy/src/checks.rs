//! What the run must show: the stalls hurt without hedging; after the warm-up, hedges
//! rescue them within the budget's bound; and the hedger counted every race.

use crate::run::{Figures, CONFIG, READS, WARMUP};
use crate::sensor::STALLS_PER_100;

/// A named verdict.
pub struct Check {
    pub name: &'static str,
    pub ok: bool,
}

/// Judges the figures.
pub fn judge(f: &Figures) -> [Check; 8] {
    let (end, warm) = (&f.end, &f.warm);
    let races = WARMUP + READS;
    // Hedges granted <= ratio * requests + cap (RatioBudget's bound, which starts full),
    // in millionths of a token as the budget counts. The ratio is 0.1: rounding it to a
    // millionth is exact.
    let ratio_ppm = (CONFIG.budget_ratio() * 1e6 + 0.5) as u64;
    let bound_ppm =
        ratio_ppm * u64::from(end.requests) + 1_000_000 * u64::from(CONFIG.budget_cap());
    [
        Check {
            // The generator works: about STALLS_PER_100 % of the unhedged reads stall, and
            // each is slow.
            name: "unhedged: the stalls are there (slow reads 3-12 %, p99 >= 10x p50)",
            ok: f.unhedged.slow * 100 >= 3 * READS
                && f.unhedged.slow * 100 <= 12 * READS
                && f.unhedged.p99_us >= 10 * f.unhedged.p50_us,
        },
        Check {
            // The hedged phase replays the same reads of A: the same stalls.
            name: "hedged: the primary stalled as often as unhedged",
            ok: f.rescue.stalls == f.unhedged.slow && STALLS_PER_100 > 0,
        },
        Check {
            name: "hedged: hedges rescue at least 3 stalls in 4",
            ok: f.rescue.rescued * 4 >= f.rescue.stalls * 3 && f.rescue.stalls > 0,
        },
        Check {
            name: "hedged: slow reads at most 1/4 of unhedged, and p99 at most 1/3",
            ok: f.hedged.slow * 4 <= f.unhedged.slow && f.hedged.p99_us * 3 <= f.unhedged.p99_us,
        },
        Check {
            // Cold start: no hedge before the window holds min_samples latencies, and
            // hedges once it does.
            name: "warm-up: hedging starts after min_samples",
            ok: warm.skipped_cold >= CONFIG.min_samples() && warm.hedges > 0,
        },
        Check {
            name: "budget: hedges <= ratio * requests + cap",
            ok: u64::from(end.hedges) * 1_000_000 <= bound_ppm,
        },
        Check {
            // Every race counted once, won once, by the primary or a hedge; no error.
            name: "stats: requests = races = primary wins + hedge wins",
            ok: end.requests == races
                && end.primary_wins + end.hedge_wins == races
                && end.errors == 0
                && end.deadline_exceeded == 0,
        },
        Check {
            name: "stats: hedge wins <= hedges, and the hedged phase's hedge answers are its hedge wins",
            ok: end.hedge_wins <= end.hedges
                && end.hedge_wins - warm.hedge_wins == f.rescue.hedge_answers,
        },
    ]
}
