//! The on-time rule ([`HedgeConfig::with_on_time_chance`]): for a request with a deadline,
//! the first backup goes no later than when the primary's chance of answering by the
//! deadline's target, given how long it has run, falls below a level; none goes that could
//! not answer by the deadline.
//!
//! With `F` the window's distribution, `D` the time from the start to the target and `e`
//! the time the primary has run, its chance is `(F(D) - F(e)) / (1 - F(e))`. That falls
//! below `L` once `F(e) > (F(D) - L) / (1 - L)`: in counts, once more than
//! `t = (r - L n) / (1 - L)` of the window's `n` latencies are at or below `e`, `r` of them
//! being at or below `D`. So the backup is due at the upper edge of the first bin whose
//! cumulative count exceeds `floor(t)`, or at once where `t < 0` (`F(D) < L`: the chance
//! is below the level from the start): one rank query and one walk up the bins, integers
//! only (the level is kept in 1/65,536ths and `1 - L` as a reciprocal fixed when the
//! hedger is built, so no division is made).
//!
//! [`HedgeConfig::with_on_time_chance`]: super::HedgeConfig::with_on_time_chance

use super::kind::sealed::Learner;
use crate::budget::Budget;
use crate::clock::divisor::Divisor;
use crate::clock::Clock;

use super::{Hedger, Ticket, WindowKind};

/// The level's unit: a chance is kept in 1/65,536ths.
const ONE: u64 = 1 << 16;

/// A checked on-time level, ready for integer decisions.
#[derive(Debug, Clone, Copy)]
pub(super) struct OnTime {
    /// The level in 1/65,536ths, in 1..=65,535.
    level: u64,
    /// `ONE - level`, to divide by.
    complement: Divisor,
}

impl OnTime {
    /// No rule (a level of 0, which [`new`](Self::new) never makes).
    pub(super) const OFF: OnTime = OnTime {
        level: 0,
        complement: Divisor::new(ONE),
    };

    /// Whether this is a rule (not [`OFF`](Self::OFF)).
    #[inline]
    pub(super) const fn is_on(&self) -> bool {
        self.level != 0
    }

    /// Each field XOR `key`'s (for a hedger's stored settings).
    #[inline(always)]
    pub(super) const fn xor(self, key: Self) -> Self {
        OnTime {
            level: self.level ^ key.level,
            complement: self.complement.xor(key.complement),
        }
    }

    /// The rule for `chance` (validated in (0, 1)), rounded to 1/65,536 and kept inside.
    pub(super) const fn new(chance: f64) -> Self {
        let scaled = sixteenths(chance);
        let level = if scaled < 1 {
            1
        } else if scaled > ONE - 1 {
            ONE - 1
        } else {
            scaled
        };
        OnTime {
            level,
            complement: Divisor::new(ONE.wrapping_sub(level)), // level < ONE
        }
    }

    /// The count past which the primary's chance is below the level, when `in_time` of
    /// `count` latencies fit before the target: `floor((r - L n) / (1 - L))`, or `None`
    /// when the chance is below the level from the start (`r < L n`).
    #[inline]
    fn turning_rank(&self, in_time: u64, count: u64) -> Option<u64> {
        let excess = in_time
            .saturating_mul(ONE)
            .checked_sub(self.level.saturating_mul(count))?;
        Some(self.complement.quotient(excess))
    }
}

/// `x` (in [0, 1)) in 1/65,536ths, rounded to nearest, from its bits: integer operations
/// only, so a hedger built at run time on a core without an FPU links no soft-float helper.
const fn sixteenths(x: f64) -> u64 {
    let bits = x.to_bits();
    let field = (bits >> 52) & 0x7ff;
    let fraction = bits & ((1 << 52) - 1);
    // x = m * 2^-(1075 - field) (1074 for subnormals); times 2^16 is m >> shift.
    let (m, shift) = if field == 0 {
        (fraction, 1074 - 16)
    } else {
        (
            fraction | 1 << 52,
            1075u64.saturating_sub(field).saturating_sub(16),
        )
    };
    if shift == 0 || shift >= 64 {
        return if shift == 0 { ONE } else { 0 }; // 1 or more (refused before); or tiny
    }
    // m < 2^53: no overflow.
    (m >> shift).wrapping_add((m >> shift.wrapping_sub(1)) & 1)
}

impl<C: Clock, B: Budget, M: WindowKind, const N: usize> Hedger<C, B, M, N> {
    /// When the next backup of `ticket` is due under the rule, `due` being when the
    /// percentile rule sends it: for the first, the sooner of that and the time the
    /// primary's chance of answering by the target falls below the level (the upper edge
    /// of the first bin past which it is; raised during a back-off, as every delay); a
    /// later one as the percentile rule says.
    #[inline(never)] // off the percentile rule's path
    pub(super) fn on_time_due(
        &self,
        rule: &OnTime,
        ticket: &Ticket,
        due: u64,
        backing_off: bool,
    ) -> u64 {
        if ticket.hedges > 0 {
            return due;
        }
        let start = ticket.start.as_nanos();
        let horizon = ticket.target.as_nanos().saturating_sub(start);
        let (in_time, count) = self.window.rank_and_count_u64(horizon);
        let lapse = match rule.turning_rank(in_time, count) {
            // `None` from the window: an empty one, or every latency it holds fits in the
            // horizon.
            Some(turning) => self.window.first_upper_bound_above(turning),
            // Unlikely to make it at all: at once (the shortest delay).
            None if count > 0 => Some(0),
            None => None,
        };
        match lapse {
            Some(lapse) => {
                due.min(start.saturating_add(self.raise(self.clamp(lapse), backing_off)))
            }
            None => due,
        }
    }

    /// Whether a backup sent now, with `remaining` left to the deadline, could not answer
    /// in time: no latency the window holds fits (its bins count none at or below
    /// `remaining`).
    #[inline(never)]
    pub(super) fn backup_too_late(&self, remaining: u64) -> bool {
        let (in_time, count) = self.window.rank_and_count_u64(remaining);
        count > 0 && in_time == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The turning rank is `floor((r - L n) / (1 - L))` exactly, `None` when `r < L n`.
    #[test]
    fn the_turning_rank_is_exact() {
        let rule = OnTime::new(0.5); // 32,768 / 65,536

        // r = 99 of n = 100: (99 - 50) / 0.5 = 98.
        assert_eq!(rule.turning_rank(99, 100), Some(98));
        assert_eq!(rule.turning_rank(50, 100), Some(0));
        assert_eq!(rule.turning_rank(10, 100), None);
        let rule = OnTime::new(0.9);
        for n in [1u64, 7, 100, 12_345, 1 << 40] {
            for r in [0, n / 3, n / 2, n - n / 10, n] {
                let (r128, n128, l128) = (u128::from(r), u128::from(n), u128::from(rule.level));
                let want = (r128 * 65536)
                    .checked_sub(l128 * n128)
                    .map(|excess| excess / (65536 - l128));
                assert_eq!(rule.turning_rank(r, n).map(u128::from), want, "{r}/{n}");
            }
        }
        // The level is the chance rounded to 1/65,536, by integers.
        for chance in [
            0.5, 0.9, 0.8, 0.95, 0.99, 1e-3, 0.123_456, 1e-300, 5e-324, 0.999_99,
        ] {
            let want = (chance * 65536.0_f64).round() as u64;
            assert_eq!(sixteenths(chance), want, "{chance}");
        }
        // Levels are kept inside (0, 1).
        assert_eq!(OnTime::new(1e-9).level, 1);
        assert_eq!(OnTime::new(1.0 - 1e-9).level, ONE - 1);
    }
}
