//! The rank rule: which bin answers a quantile. One rule for
//! [`DDSketch`](super::DDSketch), [`AtomicSketch`](super::AtomicSketch) and the
//! [`Window`](crate::window::Window).
//!
//! Convention (DataDog's Go and Java): quantile `q` of `count` values is the value of rank
//! `floor(q * (count - 1))` (from 0), and a sketch answers with the representative value of
//! the first bin whose cumulative count, the zero bin first, exceeds that rank (0 for the
//! zero bin). That is within `alpha` of the exact sample quantile `sorted[rank]`.

use super::{BinLayout, IndexMapping, InvalidQuantile};

/// A quantile checked to lie in [0, 1].
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Quantile(f64);

impl Quantile {
    /// `q`, or [`InvalidQuantile`] if it is NaN or outside [0, 1].
    pub(crate) const fn new(q: f64) -> Result<Self, InvalidQuantile> {
        if q >= 0.0 && q <= 1.0 {
            Ok(Quantile(q))
        } else {
            Err(InvalidQuantile)
        }
    }

    /// Whether it asks for the minimum (`q = 0`).
    pub(crate) const fn is_min(self) -> bool {
        self.0 == 0.0
    }

    /// Whether it asks for the maximum (`q = 1`).
    pub(crate) const fn is_max(self) -> bool {
        self.0 == 1.0
    }

    /// Its rank among `count` values: `floor(q * (count - 1))` (0 if none). Computed in
    /// `f64`, so above 2^53 values it may round up, to `count` at most.
    #[inline]
    pub(crate) fn rank(self, count: u64) -> u64 {
        // The cast truncates (the floor: the product is not negative) and saturates.
        (self.0 * count.saturating_sub(1) as f64) as u64
    }
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

/// The representative value of the bin holding quantile `q` of `bins` (0 for the zero bin)
/// and the count whose rank that is: `(None, 0)` if the bins are empty, `None` with a count
/// if the rank was not found (a clear raced the search).
#[inline]
pub(crate) fn rank_value<B: RankedBins + ?Sized, M: IndexMapping, const N: usize>(
    bins: &B,
    layout: &BinLayout<M, N>,
    q: Quantile,
) -> (Option<f64>, u64) {
    let count = bins.count();
    if count == 0 {
        return (None, 0);
    }
    let rank = q.rank(count);
    let zero = bins.zero_count();
    if zero > rank {
        return (Some(0.0), count);
    }
    let pos = bins.position_of_rank(rank, zero, count);
    (pos.map(|pos| layout.value_at(pos)), count)
}

/// A sketch's answer to quantile `q`, or `None` if it is empty (`extremes`, its min and max,
/// are `None`): the min for `q = 0`, the max for `q = 1`, otherwise the rank's value from
/// `rank_value` clamped into `[min, max]` (which can only bring it closer to the truth).
pub(crate) fn sketch_quantile(
    q: f64,
    extremes: Option<(f64, f64)>,
    rank_value: impl FnOnce(Quantile) -> (Option<f64>, u64),
) -> Result<Option<f64>, InvalidQuantile> {
    let q = Quantile::new(q)?;
    let Some((min, max)) = extremes else {
        return Ok(None);
    };
    if q.is_min() {
        return Ok(Some(min));
    }
    if q.is_max() {
        return Ok(Some(max));
    }
    Ok(match rank_value(q) {
        (Some(v), _) => Some(v.max(min).min(max)),
        // A concurrent clear emptied the bins after min and max were read.
        (None, 0) => None,
        // A concurrent clear emptied bins between the count and the search.
        (None, _) => Some(max),
    })
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
