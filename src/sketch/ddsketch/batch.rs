//! The f64 slice record's statistics of a chunk: min, max, whether +inf is among the
//! values, and the chunk's sum where the adds one by one would all be exact.
//!
//! The sum is the reason for this module. [`record`](super::DDSketch::record) adds each
//! value to the sum in turn, and a sum reduced in any other order would round
//! differently, so the slice record must give the same bits. But where every value and
//! the sum so far are whole numbers and the total stays below 2^53, no add rounds, and
//! any order gives those bits: integer nanoseconds as `f64`, the common case. There the
//! chunk is summed as integers, in vector lanes; elsewhere the caller adds in order.

/// 2^52: adding it to a value in [0, 2^52) rounds that to a whole number, which the low
/// bits of the sum hold.
const TWO_52: f64 = 4_503_599_627_370_496.0;
const TWO_52_BITS: u64 = 0x4330_0000_0000_0000;
/// 2^53: below it, every whole number is an `f64`.
const TWO_53: u64 = 1 << 53;
/// The lanes the chunk is reduced in (two SSE2 registers a statistic).
const LANES: usize = 4;

/// The statistics of a chunk's `|v|`, none NaN.
pub(super) struct ChunkStats {
    /// The least (`+inf` if every value is `+inf`).
    pub(super) lo: f64,
    /// The greatest finite one (`-inf` if there is none).
    pub(super) hi: f64,
    /// The greatest, `+inf` included (0.0 for an empty chunk).
    pub(super) top: f64,
    /// The sums as whole numbers of the values at even and at odd positions: right
    /// where every one is a whole number below 2^52.
    whole: [u64; 2],
    /// Zero where every one below 2^52 is a whole number.
    inexact: u64,
}

impl ChunkStats {
    /// The statistics of `chunk` (at most 2^6 values, so `whole` cannot wrap) from
    /// `lanes`, to which every value of `chunk` was added.
    pub(super) fn of(chunk: &[f64], lanes: StatLanes) -> Self {
        let StatLanes {
            lo,
            top,
            whole,
            inexact,
        } = lanes;
        let odds = (chunk.len() / 2) as u64;
        let evens = (chunk.len() as u64).wrapping_sub(odds);
        let mut stats = ChunkStats {
            lo: f64::INFINITY,
            hi: f64::NEG_INFINITY,
            top: 0.0,
            // Lane j holds the positions j, j + 4, ...: those of j's parity, each with
            // the bits of 2^52 ([`StatLanes::add`]), taken off here.
            whole: [
                whole[0]
                    .wrapping_add(whole[2])
                    .wrapping_sub(evens.wrapping_mul(TWO_52_BITS)),
                whole[1]
                    .wrapping_add(whole[3])
                    .wrapping_sub(odds.wrapping_mul(TWO_52_BITS)),
            ],
            inexact: 0,
        };
        for ((l, t), x) in lo.into_iter().zip(top).zip(inexact) {
            stats.lo = if l < stats.lo { l } else { stats.lo };
            stats.top = if t > stats.top { t } else { stats.top };
            stats.inexact |= x;
        }
        // The greatest finite value is the greatest, but for +inf: then a pass of its
        // own (+inf in a batch is rare).
        stats.hi = if stats.top == f64::INFINITY {
            chunk.iter().fold(f64::NEG_INFINITY, |h, &v| {
                let a = v.abs();
                if a != f64::INFINITY && a > h {
                    a
                } else {
                    h
                }
            })
        } else if chunk.is_empty() {
            f64::NEG_INFINITY
        } else {
            stats.top
        };
        stats
    }

    /// The sum's `parts` plus the chunk's values added one by one, those at even
    /// positions to part `part_of[0]`, those at odd ones to `part_of[1]`, if none of
    /// those adds rounds: every part and every value are whole numbers, and each total is
    /// below 2^53. `None` otherwise (the caller then adds them in order).
    #[inline]
    pub(super) fn exact_sums(&self, parts: [f64; 2], part_of: [usize; 2]) -> Option<[f64; 2]> {
        // `top` below 2^52: no +inf, and `whole` and `inexact` are right.
        if !(self.top < TWO_52 && self.inexact == 0) {
            return None;
        }
        let mut totals = [0u64; 2];
        for (total, sum) in totals.iter_mut().zip(parts) {
            if !(sum >= 0.0 && sum < TWO_53 as f64) {
                return None;
            }
            *total = sum as u64; // in [0, 2^53): exact if `sum` is whole
            if *total as f64 != sum {
                return None;
            }
        }
        for (whole, part) in self.whole.into_iter().zip(part_of) {
            if let Some(total) = totals.get_mut(part) {
                // Below 2^53 + 2 * 2^58 (64 values below 2^52): cannot wrap.
                *total = total.wrapping_add(whole);
            }
        }
        // Every partial sum lies between a part's start and its total, all whole: each
        // add was exact.
        totals
            .iter()
            .all(|&total| total < TWO_53)
            .then(|| totals.map(|total| total as f64))
    }
}

/// [`ChunkStats`] as they are gathered, in [`LANES`] lanes of selects and integer adds,
/// which vectorise: the slice record adds each group of values in its bins loop, whose
/// scalar adds to the bins then run beside these vector operations.
pub(super) struct StatLanes {
    lo: [f64; LANES],
    top: [f64; LANES],
    whole: [u64; LANES],
    inexact: [u64; LANES],
}

impl StatLanes {
    /// No value yet.
    pub(super) const EMPTY: StatLanes = StatLanes {
        lo: [f64::INFINITY; LANES],
        top: [0.0; LANES],
        whole: [0; LANES],
        inexact: [0; LANES],
    };

    /// Up to [`LANES`] values, one a lane: the first value of each group must be at an
    /// even position of the chunk (lanes 0 and 2 hold the even positions).
    #[inline(always)]
    pub(super) fn add(&mut self, values: &[f64]) {
        let stats = self.lo.iter_mut().zip(&mut self.top);
        let ints = self.whole.iter_mut().zip(&mut self.inexact);
        for ((l, t), ((w, x), &v)) in stats.zip(ints.zip(values)) {
            let a = v.abs();
            // Selects of one compare each (minpd, maxpd): no value is NaN.
            *l = if a < *l { a } else { *l };
            *t = if a > *t { a } else { *t };
            // Rounded to a whole number (exact from 2^52 up: no check needed there,
            // `top` rules those out).
            let shifted = a + TWO_52;
            *x |= (shifted - TWO_52).to_bits() ^ a.to_bits();
            // The bits of `shifted` are 2^52's plus the whole number: 2^52's are taken
            // off once a chunk, in `ChunkStats::of` (modulo 2^64, so the adds may wrap:
            // what is left, the whole numbers' sum, is below 2^58).
            *w = w.wrapping_add(shifted.to_bits());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whole numbers, every chunk length up to 64 (odd ones too): the chunk is summed at
    /// once, to the sums one by one of its even and its odd positions; one value that is
    /// not whole, or a total from 2^53 up, leaves it to the adds in order.
    #[test]
    fn whole_chunks_sum_at_once() {
        let values: [f64; 64] = core::array::from_fn(|i| (i * i * 1_000_003 % 9_999_991) as f64);
        for len in 0..=values.len() {
            let chunk = &values[..len];
            let mut lanes = StatLanes::EMPTY;
            chunk.chunks(LANES).for_each(|group| lanes.add(group));
            let stats = ChunkStats::of(chunk, lanes);
            let (mut even, mut odd) = (5.0, 7.0);
            for (i, &v) in chunk.iter().enumerate() {
                *if i % 2 == 0 { &mut even } else { &mut odd } += v;
            }
            assert_eq!(stats.exact_sums([5.0, 7.0], [0, 1]), Some([even, odd]));
            assert_eq!(stats.exact_sums([7.0, 5.0], [1, 0]), Some([odd, even]));
            assert_eq!(stats.exact_sums([5.0, (1u64 << 53) as f64], [0, 1]), None);
            if len > 0 {
                let mut lanes = StatLanes::EMPTY;
                let mut inexact = chunk.to_vec();
                inexact[len / 2] += 0.5;
                inexact.chunks(LANES).for_each(|group| lanes.add(group));
                let stats = ChunkStats::of(&inexact, lanes);
                assert_eq!(stats.exact_sums([5.0, 7.0], [0, 1]), None);
            }
        }
    }
}
