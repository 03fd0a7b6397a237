//! The main loop: hedged requests, and between every two looks at a request's state the
//! window's upkeep ([`Run::tend`]): a record into the window and the sketch, a maintenance,
//! a look at the cached threshold (checked against what the window held), and the budgets.
//! All the while SysTick records into the same objects.

use core::sync::atomic::Ordering::Relaxed;
use core::time::Duration;

use tailguard::budget::Budget;
use tailguard::clock::Clock;
use tailguard::hedge::{Attempt, Decision, SkipReason};
use tailguard_support::Xorshift32;

use crate::clock::{instant, now_us, TickClock};
use crate::{
    interval_of, level_ns, Shared, ISR, MAIN_OP, MIN_COUNT, OP_BUDGETS, OP_MAINTAIN, OP_NONE,
    OP_ON_SUCCESS, OP_SHOULD_HEDGE, OP_SKETCH_RECORD, OP_START, OP_THRESHOLD, OP_WINDOW_RECORD,
    SLOTS,
};

/// Hedged requests the main loop makes.
pub const REQUESTS: u32 = 1_000;
/// Every this many looks at the threshold, one in a quiet moment (see
/// [`Run::quiet_look`]).
const QUIET_EVERY: u32 = 128;
/// Every this many sketch records, one above the sketch's range (1 s): clamped.
const CLAMP_EVERY: u32 = 64;
const ABOVE_RANGE_NS: u64 = 1_000_000_000;

/// What the main loop did, for the checks.
#[derive(Default)]
pub struct Figures {
    pub window_records: u32,
    pub exponential_records: u32,
    pub sketch_records: u32,
    pub clamped_records: u32,
    pub requests: u32,
    pub hedges: u32,
    pub hedge_wins: u32,
    pub skipped_budget: u32,
    pub skipped_cold: u32,
    pub skipped_other: u32,
    pub ratio_requests: u32,
    pub ratio_granted: u32,
    pub ratio_denied: u32,
    pub bucket_granted: u32,
    pub bucket_denied: u32,
    pub threshold: Threshold,
    /// The clock when SysTick stopped (set by `main`).
    pub end_us: u32,
}

/// What the looks at the window's cached quantile saw.
#[derive(Default)]
pub struct Threshold {
    /// Looks, and of those how many found a value or `None`.
    pub looks: u32,
    pub some: u32,
    pub none: u32,
    /// Values published from fewer than `min_count` values (must be 0).
    pub below_min_count: u32,
    /// Values that are no level of an interval the window could hold (must be 0).
    pub not_in_window: u32,
    /// Rotations the main loop's maintenance made.
    pub rotations: u32,
    /// The longest the cached value was seen unchanged (a lower bound of its age), and the
    /// longest gap between two maintenances (`m`), both over spans without a clock jump.
    pub max_age_us: u32,
    pub max_gap_us: u32,
    /// Quiet looks, and those whose cached p90 or count differed from the window's own
    /// (must be 0).
    pub quiet: u32,
    pub quiet_differed: u32,
}

struct Run {
    s: Shared,
    f: Figures,
    rng: Xorshift32,
    tends: u32,
    alpha: f64,
    /// The clock's interval at the start of the last maintenance that rotated: the
    /// published interval is at least this.
    published_at_least: u32,
    /// The cached value, count and rotations last seen, when they changed, and the clock
    /// jumps by then.
    last_seen: (Option<u64>, u32, u32),
    changed_us: u32,
    changed_jumps: u32,
    last_maintain_us: u32,
    last_maintain_jumps: u32,
}

/// Marks what the main loop does, for the interrupt's tally.
#[inline(always)]
fn op(code: u8) {
    MAIN_OP.store(code, Relaxed);
}

pub fn run(s: Shared) -> Figures {
    let mut run = Run {
        s,
        f: Figures::default(),
        rng: Xorshift32(0x1234_5678),
        tends: 0,
        alpha: s.window.relative_accuracy(),
        published_at_least: 0,
        last_seen: (None, 0, 0),
        changed_us: 0,
        changed_jumps: 0,
        last_maintain_us: 0,
        last_maintain_jumps: 0,
    };
    for _ in 0..REQUESTS {
        run.request();
    }
    run.f
}

impl Run {
    /// One hedged request: a primary of 2-3 ms, or 15 ms one time in 12; a hedge, if the
    /// hedger sends one, of 2-3 ms. Waits on the clock, tending the window meanwhile.
    fn request(&mut self) {
        let h = self.s.hedger;
        op(OP_START);
        let mut ticket = h.start();
        op(OP_NONE);
        self.f.requests += 1;
        let start = ticket.start();
        let primary = Duration::from_micros(u64::from(self.latency_us(true)));
        let mut hedge_done = None;
        let mut asking = true;
        let mut next_ask = start;
        let winner = loop {
            self.tend();
            let now = TickClock.now();
            if now.duration_since(start) >= primary {
                break Attempt::Primary;
            }
            if hedge_done.is_some_and(|done| now >= done) {
                break Attempt::Hedge(1);
            }
            if !asking || now < next_ask {
                continue;
            }
            op(OP_SHOULD_HEDGE);
            let decision = h.should_hedge(&mut ticket);
            op(OP_NONE);
            match decision {
                Decision::Wait(d) => next_ask = now.saturating_add(d),
                Decision::Hedge => {
                    self.f.hedges += 1;
                    let backup = Duration::from_micros(u64::from(self.latency_us(false)));
                    hedge_done = Some(now.saturating_add(backup));
                    asking = false; // at most one hedge (the default max_hedges)
                }
                Decision::Skip(reason) => {
                    asking = false;
                    *match reason {
                        SkipReason::Budget => &mut self.f.skipped_budget,
                        SkipReason::ColdStart => &mut self.f.skipped_cold,
                        _ => &mut self.f.skipped_other,
                    } += 1;
                }
            }
        };
        op(OP_ON_SUCCESS);
        h.on_success(&ticket, winner);
        op(OP_NONE);
        if winner != Attempt::Primary {
            self.f.hedge_wins += 1;
        }
    }

    /// A request's latency in µs: a primary stalls (15 ms) one time in 12.
    fn latency_us(&mut self, primary: bool) -> u32 {
        let draw = self.rng.next_u32();
        if primary && draw.is_multiple_of(12) {
            15_000
        } else {
            2_000 + (draw >> 8) % 1_000
        }
    }

    /// The window's and the sketch's upkeep, the threshold's checks and the budgets.
    fn tend(&mut self) {
        let s = self.s;
        self.tends = self.tends.wrapping_add(1);

        // A record of the level of the interval just read (passed in, so that it lands in
        // that interval even if a tick crosses into the next one meanwhile).
        let us = now_us();
        let now = instant(us);
        let level = level_ns(interval_of(us));
        op(OP_WINDOW_RECORD);
        s.window
            .record_duration_at(now, Duration::from_nanos(level));
        op(OP_NONE);
        self.f.window_records += 1;
        op(crate::OP_EXPONENTIAL_RECORD);
        crate::EXPONENTIAL.record_u64(crate::spread_ns(self.tends.wrapping_mul(0x9e37_79b9)));
        crate::EXPONENTIAL.maintain();
        op(OP_NONE);
        self.f.exponential_records += 1;
        let value = if self.f.sketch_records % CLAMP_EVERY == CLAMP_EVERY - 1 {
            self.f.clamped_records += 1;
            ABOVE_RANGE_NS
        } else {
            level
        };
        op(OP_SKETCH_RECORD);
        s.sketch.record_u64(value);
        op(OP_NONE);
        self.f.sketch_records += 1;

        self.maintain_and_look();
        if self.tends.is_multiple_of(QUIET_EVERY) {
            self.quiet_look();
        }

        op(OP_BUDGETS);
        s.ratio.on_request();
        self.f.ratio_requests += 1;
        // Every 4th: with the handler's every 16th and the hedges, more than the 10 %
        // deposited, so the budget runs dry and its bound is tested at the limit (at every
        // 8th, demand was within a few tokens of the supply, and whether it ran dry
        // depended on timing).
        if self.tends.is_multiple_of(4) {
            *if s.ratio.try_acquire() {
                &mut self.f.ratio_granted
            } else {
                &mut self.f.ratio_denied
            } += 1;
        }
        if self.tends.is_multiple_of(4) {
            *if s.bucket.try_acquire() {
                &mut self.f.bucket_granted
            } else {
                &mut self.f.bucket_denied
            } += 1;
        }
        op(OP_NONE);
    }

    /// With interrupts off (so nothing records, and the clock stands still), brings the
    /// window up to date and refreshes it, then checks that the cached p90 is exactly the
    /// p90 the window computes now, from the same count: the racing looks above can only
    /// bound what a refresh saw; this one knows. (The window's p90 is clamped into its min
    /// and max, the cached one is not: the cached one is compared clamped, then rounded to
    /// `f32` again, which is what rounding the clamped value once gives, the rounding being
    /// monotone.)
    fn quiet_look(&mut self) {
        let w = self.s.window;
        let rotations = w.rotations();
        let (cached, count, p90, held) = cortex_m::interrupt::free(|_| {
            w.maintain();
            w.refresh();
            let p90 = w.quantile(0.9).ok().flatten();
            let extremes = w
                .quantile(0.0)
                .ok()
                .flatten()
                .zip(w.quantile(1.0).ok().flatten());
            let cached = w.cached_quantile().map(|c| match extremes {
                Some((min, max)) => f64::from(c.max(min).min(max) as f32),
                None => c,
            });
            (cached, w.cached_count(), p90, w.count())
        });
        let t = &mut self.f.threshold;
        if w.rotations() != rotations {
            t.rotations += w.rotations().wrapping_sub(rotations);
            self.published_at_least = interval_of(now_us());
        }
        t.quiet += 1;
        // Cached as an f32; `None` below `min_count`.
        let want = p90
            .filter(|_| held >= u64::from(MIN_COUNT))
            .map(|v| f64::from(v as f32));
        if cached != want || u64::from(count) != held {
            t.quiet_differed += 1;
        }
    }

    /// Maintains the window, then checks its cached quantile: `None` or the p90 of values
    /// the window held since its last rotation, computed from `min_count` values or more,
    /// and no older than the staleness bound (checked at the end, from `max_age_us`).
    fn maintain_and_look(&mut self) {
        let w = self.s.window;
        let (before, jumps_before) = (now_us(), ISR.jumps.load(Relaxed));
        if jumps_before == self.last_maintain_jumps {
            let gap = before.wrapping_sub(self.last_maintain_us);
            self.f.threshold.max_gap_us = self.f.threshold.max_gap_us.max(gap);
        }
        (self.last_maintain_us, self.last_maintain_jumps) = (before, jumps_before);
        let rotations = w.rotations();
        op(OP_MAINTAIN);
        w.maintain();
        op(OP_THRESHOLD);
        let value = w.cached_quantile();
        let count = w.cached_count();
        op(OP_NONE);
        let (after, jumps_after) = (now_us(), ISR.jumps.load(Relaxed));
        let t = &mut self.f.threshold;
        t.looks += 1;
        if w.rotations() != rotations {
            // Only this loop rotates the window (its records do not): this maintenance did,
            // to the interval of a reading taken after `before`.
            t.rotations += w.rotations().wrapping_sub(rotations);
            self.published_at_least = interval_of(before);
        }

        let seen = (value.map(f64::to_bits), count, w.rotations());
        if seen != self.last_seen {
            (self.last_seen, self.changed_us, self.changed_jumps) = (seen, after, jumps_after);
        } else if jumps_after == self.changed_jumps {
            // Unchanged since `changed_us`, when it was already computed: at least this old.
            t.max_age_us = t.max_age_us.max(after.wrapping_sub(self.changed_us));
        }

        let Some(value) = value else {
            t.none += 1;
            return;
        };
        t.some += 1;
        if count < MIN_COUNT {
            t.below_min_count += 1;
        }
        // The window holds records of intervals from one before the published one (which
        // is at least `published_at_least`: readings are never behind it, since only this
        // loop publishes) up to the clock's interval now. The value must be a level of one
        // of them, to the sketch's accuracy (and the f32 it is cached as).
        let first = self.published_at_least.saturating_sub(SLOTS as u32 - 2);
        let last = interval_of(after);
        let candidates = (last - first + 1).min(4);
        let in_window = (0..candidates).any(|i| {
            let level = level_ns(first + i) as f64;
            let error = if value > level {
                value - level
            } else {
                level - value
            };
            error <= level * (self.alpha + 1e-6)
        });
        if !in_window {
            t.not_in_window += 1;
        }
    }
}
