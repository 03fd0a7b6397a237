//! The rank rule: which bin answers a quantile. One rule for
//! [`DDSketch`](super::DDSketch), [`AtomicSketch`](super::AtomicSketch) and the
//! [`Window`](crate::window::Window), and [`Occupied`], the bins the atomic ones rank: the
//! union of the occupied ranges of one or more atomic sketches.
//!
//! Convention (DataDog's Go and Java): quantile `q` of `count` values is the value of rank
//! `floor(q * (count - 1))` (from 0, the product computed in `f64`), and a sketch answers with the representative value of
//! the first bin whose cumulative count, the zero bin first, exceeds that rank (0 for the
//! zero bin). That is within `alpha` of the exact sample quantile `sorted[rank]` when
//! that value lies in the sketch's range (the zero and top bins hold what falls outside).

use super::cdf::Cut;
use super::error::InvalidQuantile;
use super::layout::BinLayout;
use super::mapping::IndexMapping;
use crate::sync::{AtomicU32, Ordering::Relaxed};

/// The bits of `1.0`.
const ONE_BITS: u64 = 0x3ff0_0000_0000_0000;

/// A quantile checked to lie in [0, 1].
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Quantile(f64);

impl Quantile {
    /// The median: a placeholder for quantiles not configured.
    pub(crate) const MEDIAN: Quantile = Quantile(0.5);

    /// `q`, or [`InvalidQuantile`] if it is NaN or outside [0, 1].
    pub(crate) const fn new(q: f64) -> Result<Self, InvalidQuantile> {
        if q >= 0.0 && q <= 1.0 {
            Ok(Quantile(q))
        } else {
            Err(InvalidQuantile)
        }
    }

    /// `q` if it lies strictly inside (0, 1), or `None` (NaN too), checked on its bits: a
    /// positive `f64`'s bits order as its value does. Integer operations only, so a window
    /// or hedger configured at run time on a core without an FPU links no soft-float
    /// comparison.
    pub(crate) const fn inside(q: f64) -> Option<Self> {
        let bits = q.to_bits();
        if bits > 0 && bits < ONE_BITS {
            Some(Quantile(q))
        } else {
            None
        }
    }

    /// Its `f64`'s bits (what [`inside`](Self::inside) reads back).
    pub(crate) const fn to_bits(self) -> u64 {
        self.0.to_bits()
    }

    /// Whether it asks for the minimum (`q = 0`).
    pub(crate) const fn is_min(self) -> bool {
        self.0 == 0.0
    }

    /// Whether it asks for the maximum (`q = 1`).
    pub(crate) const fn is_max(self) -> bool {
        self.0 == 1.0
    }

    /// Its rank among `count` values: `floor(q * (count - 1))` (0 if none), the product
    /// rounded as in `f64` (so above 2^53 values it may round up, to `count` at most).
    ///
    /// On 64-bit targets (a double-precision FPU) the `f64` formula itself. On 32-bit ones [`rank_by_integers`](Self::rank_by_integers): a core
    /// without a double-precision FPU (Cortex-M0, and the Cortex-M4F, whose FPU is single
    /// precision) then links no soft-float helper for a window's refresh (see the
    /// [window docs](crate::window#interrupt-safety-and-the-cost-of-a-record)).
    #[inline]
    pub(crate) fn rank(self, count: u64) -> u64 {
        if cfg!(target_pointer_width = "64") {
            // The cast truncates (the floor: the product is not negative) and saturates.
            (self.0 * count.saturating_sub(1) as f64) as u64
        } else {
            self.rank_by_integers(count)
        }
    }

    /// The rank with integers only, bit for bit what `(q * (count - 1) as f64) as u64`
    /// gives (a unit test compares them on every target). In 64-bit words (128-bit
    /// arithmetic spills most of a Cortex-M0's registers) and out of line.
    #[inline(never)]
    fn rank_by_integers(self, count: u64) -> u64 {
        // q = m * 2^-s exactly (q in [0, 1]: s >= 52).
        let bits = self.0.to_bits();
        let field = (bits >> 52) as u32 & 0x7ff;
        let fraction = bits & ((1 << 52) - 1);
        let (m, s) = if field == 0 {
            (fraction, 1074u32)
        } else {
            (fraction | 1 << 52, 1075u32.wrapping_sub(field))
        };
        // `count - 1` as an f64, c * 2^ce (exact below 2^53), times m, rounded to 53 bits
        // again: the f64 product, p * 2^(pe + ce), scaled by 2^s.
        let (c, ce) = round_to_53_bits(0, count.saturating_sub(1));
        let (high, low) = product(m, c);
        let (p, pe) = round_to_53_bits(high, low);
        // The floor, saturating as the cast does. pe + ce <= 53 + 11.
        let up = pe.wrapping_add(ce);
        match up.checked_sub(s) {
            // (A product below 2^-1022, which f64 rounds on a coarser grid, floors to 0
            // either way.)
            None => p.checked_shr(s.wrapping_sub(up)).unwrap_or(0),
            // (At most 64 for p = 0, whose shift is 0 whatever it is.)
            Some(left) if left <= p.leading_zeros() => p.wrapping_shl(left),
            Some(_) => u64::MAX,
        }
    }
}

/// `a * b` as its high and low 64-bit words, for `a, b <= 2^53`: four 32x32-bit products.
#[inline]
fn product(a: u64, b: u64) -> (u64, u64) {
    let (a_high, a_low) = (a >> 32, a & 0xffff_ffff);
    let (b_high, b_low) = (b >> 32, b & 0xffff_ffff);
    // a_high, b_high <= 2^21: the middle terms sum below 2^55.
    let middle = a_low
        .wrapping_mul(b_high)
        .wrapping_add(a_high.wrapping_mul(b_low));
    let (low, carry) = a_low.wrapping_mul(b_low).overflowing_add(middle << 32);
    let high = a_high
        .wrapping_mul(b_high)
        .wrapping_add(middle >> 32)
        .wrapping_add(u64::from(carry));
    (high, low)
}

/// `high * 2^64 + low` (below 2^116) rounded to its 53 most significant bits, to
/// nearest, ties to even (as an `f64` holds it): `(kept, shift)`, the value
/// `kept * 2^shift`, `kept <= 2^53`.
#[inline]
fn round_to_53_bits(high: u64, low: u64) -> (u64, u32) {
    let width = if high != 0 {
        128u32.wrapping_sub(high.leading_zeros())
    } else {
        64u32.wrapping_sub(low.leading_zeros())
    };
    if width <= 53 {
        return (low, 0);
    }
    let drop = width.wrapping_sub(53); // in 1..=63
    let kept = (low >> drop) | high.wrapping_shl(64u32.wrapping_sub(drop));
    let half = 1u64 << drop.wrapping_sub(1);
    let rest = low & (half << 1).wrapping_sub(1);
    // Up past half, or at half with an odd last kept bit.
    let up = rest > half || (rest == half && kept & 1 == 1);
    (kept.wrapping_add(u64::from(up)), drop)
}

/// Counted bins a rank is searched in: a zero bin, then the `N` bins of a layout.
pub(crate) trait RankedBins {
    /// The values held: the zero bin and every bin.
    fn count(&self) -> u64;

    /// The values in the zero bin.
    fn zero_count(&self) -> u64;

    /// The position of the bin holding rank `rank` of `count` values, the lowest `zero` of
    /// which are in the zero bin (`zero <= rank < count`): the first bin whose cumulative
    /// count, added to `zero`, exceeds `rank`. `None` if none does (only when records race
    /// a clear).
    fn position_of_rank(&self, rank: u64, zero: u64, count: u64) -> Option<usize>;
}

/// Which bin holds a rank.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RankBin {
    /// The zero bin (its value is 0).
    Zero,
    /// The bin at this position.
    At(usize),
}

/// The bin holding quantile `q` of `bins` and the count whose rank that is: `(None, 0)` if
/// the bins are empty, `None` with a count if the rank was not found (a clear raced the
/// search). Integer operations only.
#[inline]
pub(crate) fn rank_bin<B: RankedBins + ?Sized>(bins: &B, q: Quantile) -> (Option<RankBin>, u64) {
    let count = bins.count();
    if count == 0 {
        return (None, 0);
    }
    let rank = q.rank(count);
    let zero = bins.zero_count();
    if zero > rank {
        return (Some(RankBin::Zero), count);
    }
    let pos = bins.position_of_rank(rank, zero, count);
    (pos.map(RankBin::At), count)
}

/// The representative value of the bin holding quantile `q` of `bins` (0 for the zero bin)
/// and the count whose rank that is: `(None, 0)` if the bins are empty, `None` with a count
/// if the rank was not found (a clear raced the search).
#[inline]
pub(crate) fn rank_value<B: RankedBins + ?Sized, M: IndexMapping, const N: usize>(
    bins: &B,
    layout: &BinLayout<M, N>,
    q: Quantile,
) -> (Option<f64>, u64) {
    let (bin, count) = rank_bin(bins, q);
    let value = bin.map(|bin| match bin {
        RankBin::Zero => 0.0,
        RankBin::At(pos) => layout.value_at(pos),
    });
    (value, count)
}

/// A sketch's answer to quantile `q`, or `None` if it is empty (`extremes`, its min and max,
/// are `None`): the min for `q = 0`, the max for `q = 1`, otherwise the rank's value from
/// `rank_value` clamped into `[min, max]` (which can only bring it closer to the truth);
/// extremes a racing clear left crossed (a record's min kept, its max reset) bound
/// nothing, and the max is then the min at least.
pub(crate) fn sketch_quantile(
    q: f64,
    extremes: Option<(f64, f64)>,
    rank_value: impl FnOnce(Quantile) -> (Option<f64>, u64),
) -> Result<Option<f64>, InvalidQuantile> {
    let q = Quantile::new(q)?;
    let Some((min, max)) = extremes else {
        return Ok(None);
    };
    let crossed = min > max;
    if q.is_min() {
        return Ok(Some(min));
    }
    if q.is_max() {
        return Ok(Some(max.max(min)));
    }
    Ok(match rank_value(q) {
        (Some(v), _) if crossed => Some(v),
        (Some(v), _) => Some(clamp_between(v, min, max)),
        // A concurrent clear emptied the bins after min and max were read.
        (None, 0) => None,
        // A concurrent clear emptied bins between the count and the search.
        (None, _) => Some(max),
    })
}

/// `v` moved into `[min, max]` (`min <= max`), by comparisons that compile to one
/// `maxsd` and one `minsd` on x86-64: `f64::max` and `f64::min` add a NaN test each, some
/// eight cycles on the chain every quantile ends with. None of the three is NaN (a sketch
/// refuses NaN); if `v` were, the answer would be `min`, as with `f64::max`.
#[inline(always)]
fn clamp_between(v: f64, min: f64, max: f64) -> f64 {
    let v = if v > min { v } else { min };
    if v < max {
        v
    } else {
        max
    }
}

/// What [`Occupied`] reads of each sketch it spans ([`AtomicSketch`](super::AtomicSketch)'s
/// counters): a trait, so that the rank rule needs nothing of the atomic sketch's file.
pub(crate) trait AtomicBins {
    /// The zero bin's counter.
    fn zero_bin(&self) -> &AtomicU32;

    /// The bins' counters, from position 0 up.
    fn bin_counters(&self) -> &[AtomicU32];

    /// The lowest and highest positions of the bins taken from zero since the sketch was
    /// made or last cleared, as last widened (none if `low > high`).
    fn occupied(&self) -> (usize, usize);
}

/// The union of sketches of one layout (a window's slots, or one sketch) over the union
/// of their occupied ranges, read once: no bin outside holds a value once the bin's first
/// record since a clear has returned, or any later one that did not race that clear (see
/// [`AtomicSketch`](super::AtomicSketch)'s `occupy` and `cover`), so scanning only these
/// answers as scanning them all.
///
/// Searched in two passes over the same positions: one for the count, one for the rank,
/// from the nearer end. Records racing the passes only add to bins, so the second finds
/// at least what the first counted and the rank is found from either end; only a clear
/// between them (which a caller that cares detects) leaves it unfound.
pub(crate) struct Occupied<'a, S> {
    sketches: &'a [S],
    /// The positions scanned (none if `low > high`).
    low: usize,
    high: usize,
}

impl<'a, S: AtomicBins> Occupied<'a, S> {
    /// The occupied positions of `sketches`, as they are now.
    pub(crate) fn new(sketches: &'a [S]) -> Self {
        let (low, high) =
            sketches
                .iter()
                .map(S::occupied)
                .fold((usize::MAX, 0), |(l, h), (low, high)| {
                    if low > high {
                        (l, h) // none filled
                    } else {
                        (l.min(low), h.max(high))
                    }
                });
        Occupied {
            sketches,
            low,
            high,
        }
    }

    /// The counts at position `pos` of all the sketches, summed.
    #[inline]
    fn at(&self, pos: usize) -> u64 {
        in_bin(self.sketches, pos).fold(0, u64::saturating_add)
    }

    /// The positions scanned, lowest first.
    fn positions(&self) -> core::ops::RangeInclusive<usize> {
        // An empty range when nothing was filled (`low = usize::MAX`).
        self.low..=self.high
    }

    /// The values counted by `cut` (see [`cdf`](super::cdf)) and all the values, from one
    /// pass over the zero bins and the occupied positions: each counter is read once, so
    /// racing records cannot make the rank exceed the count.
    pub(crate) fn rank_and_count(&self, cut: Cut) -> (u64, u64) {
        let (mut rank, mut count) = (0u64, 0u64);
        for s in self.sketches {
            let zero = u64::from(s.zero_bin().load(Relaxed));
            let bins = s.bin_counters();
            let sum = |range: core::ops::RangeInclusive<usize>| {
                bins.get(range)
                    .unwrap_or(&[])
                    .iter()
                    .map(|b| u64::from(b.load(Relaxed)))
                    .fold(0, u64::saturating_add)
            };
            let (below, above) = match cut {
                Cut::Nothing => (0, zero.saturating_add(sum(self.positions()))),
                Cut::Zero => (zero, sum(self.positions())),
                Cut::Through(pos) => (
                    // The occupied positions up to `pos`, and those above it (empty ranges
                    // when `pos` is outside them, or nothing was filled).
                    zero.saturating_add(sum(self.low..=pos.min(self.high))),
                    sum(self.low.max(pos.wrapping_add(1))..=self.high), // pos < N
                ),
                Cut::Everything => (zero.saturating_add(sum(self.positions())), 0),
            };
            rank = rank.saturating_add(below);
            count = count.saturating_add(below).saturating_add(above);
        }
        (rank, count)
    }

    /// The first bin, the zero bin first, whose cumulative count (its values and all below)
    /// makes `holds` true, scanning the occupied positions upward: for a rule that is
    /// monotone in the cumulative count, the lowest bin past which it holds. `None` if it
    /// never does.
    pub(crate) fn first_where(&self, mut holds: impl FnMut(u64) -> bool) -> Option<RankBin> {
        let mut cumulative = self.zero_count();
        if holds(cumulative) {
            return Some(RankBin::Zero);
        }
        self.positions()
            .find(|&pos| {
                cumulative = cumulative.saturating_add(self.at(pos));
                holds(cumulative)
            })
            .map(RankBin::At)
    }
}

impl<S: AtomicBins> RankedBins for Occupied<'_, S> {
    fn count(&self) -> u64 {
        self.sketches
            .iter()
            .map(|s| {
                s.bin_counters()
                    .get(self.positions())
                    .unwrap_or(&[])
                    .iter()
                    .map(|b| u64::from(b.load(Relaxed)))
                    .fold(u64::from(s.zero_bin().load(Relaxed)), u64::saturating_add)
            })
            .fold(0, u64::saturating_add)
    }

    fn zero_count(&self) -> u64 {
        self.sketches
            .iter()
            .map(|s| u64::from(s.zero_bin().load(Relaxed)))
            .fold(0, u64::saturating_add)
    }

    /// From the top for a rank in the upper half: the bin is the highest one at or above
    /// which the bins hold `count - rank` values or more (the same bin as from the bottom:
    /// the bins below it and the zero bin then hold `rank` or fewer).
    fn position_of_rank(&self, rank: u64, zero: u64, count: u64) -> Option<usize> {
        if rank >= count / 2 {
            let need = count.saturating_sub(rank);
            let mut above = 0u64;
            self.positions().rev().find(|&pos| {
                above = above.saturating_add(self.at(pos));
                above >= need
            })
        } else {
            let mut cumulative = zero;
            self.positions().find(|&pos| {
                cumulative = cumulative.saturating_add(self.at(pos));
                cumulative > rank
            })
        }
    }
}

/// The bins at position `pos` of `sketches`, as relaxed loads.
fn in_bin<S: AtomicBins>(sketches: &[S], pos: usize) -> impl Iterator<Item = u64> + '_ {
    sketches
        .iter()
        .filter_map(move |s| s.bin_counters().get(pos))
        .map(|b| u64::from(b.load(Relaxed)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_outside_zero_to_one_are_refused() {
        for q in [f64::NAN, -0.01, 1.01, f64::INFINITY, f64::NEG_INFINITY] {
            assert_eq!(Quantile::new(q), Err(InvalidQuantile));
        }
        assert!(Quantile::new(0.0).unwrap().is_min());
        assert!(Quantile::new(1.0).unwrap().is_max());
        // Strictly inside, on the bits: what the float comparisons say.
        for q in [
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.5,
            5e-324,
            1e-300,
            1.0 - f64::EPSILON / 2.0,
            1.0 + f64::EPSILON,
            f64::NAN,
            -f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::MIN_POSITIVE,
        ] {
            assert_eq!(Quantile::inside(q).is_some(), q > 0.0 && q < 1.0, "{q:e}");
        }
    }

    /// The integer rank is bit for bit the f64 formula's, at the corners where the f64
    /// product rounds up to a whole number (q just below 1, counts past 2^53) too.
    #[test]
    fn the_integer_rank_is_the_f64_formula() {
        let f64_rank = |q: f64, count: u64| (q * count.saturating_sub(1) as f64) as u64;
        let qs = [
            0.0,
            1.0,
            0.5,
            0.9,
            0.99,
            0.999,
            0.1,
            0.75,
            1.0 - f64::EPSILON / 2.0,
            f64::MIN_POSITIVE,
            5e-324,
            1e-300,
            0.3,
            2.0 / 3.0,
        ];
        let mut counts = std::vec![
            0,
            1,
            2,
            3,
            4,
            5,
            10,
            11,
            100,
            101,
            1 << 53,
            (1 << 53) + 1,
            (1 << 53) + 3,
            (1 << 54) + 7,
            u64::MAX,
            u64::MAX - 1,
            u64::MAX - 1024,
            1 << 63
        ];
        counts.extend(1..2000);
        for q in qs {
            for &c in &counts {
                let got = Quantile::new(q).unwrap().rank_by_integers(c);
                assert_eq!(got, f64_rank(q, c), "q {q:e}, count {c}");
                assert_eq!(Quantile::new(q).unwrap().rank(c), got);
            }
        }
        // Random quantiles and counts.
        let mut rng = crate::test_rng::Xorshift64(0x9e37_79b9_7f4a_7c15);
        let mut next = || rng.next_u64();
        for _ in 0..200_000 {
            let q = (next() >> 11) as f64 / (1u64 << 53) as f64;
            let c = next() >> (next() % 64);
            let got = Quantile::new(q).unwrap().rank_by_integers(c);
            assert_eq!(got, f64_rank(q, c), "q {q:e}, count {c}");
        }
    }

    #[test]
    fn rank_is_the_floor_of_q_times_count_minus_one() {
        let q = |q| Quantile::new(q).unwrap();
        assert_eq!(q(0.74).rank(5), 2);
        assert_eq!(q(0.75).rank(5), 3);
        assert_eq!(q(1.0).rank(5), 4);
        assert_eq!(q(0.5).rank(0), 0);
        assert_eq!(q(0.99).rank(1), 0);
    }
}
