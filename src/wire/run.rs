//! A sketch's bins as both messages write them: one dense [`Run`] from the lowest
//! non-empty bin to the highest, an empty bin written as a count of 0 ([`dense_counts`]).

use crate::sketch::Bin;
use core::iter;

/// The bins from the lowest non-empty one to the highest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Run {
    /// The index of the lowest non-empty bin (0 if none).
    pub(crate) first: i32,
    /// How many bins, empty ones included (0 if none is non-empty).
    pub(crate) len: usize,
}

impl Run {
    /// The run of `bins` (ascending, as `DDSketch::bins` gives them).
    pub(crate) fn of(bins: impl Iterator<Item = Bin>) -> Run {
        let (first, last) = bins
            .fold(None, |span, bin| match span {
                None => Some((bin.index, bin.index)),
                Some((first, _)) => Some((first, bin.index)),
            })
            .unwrap_or((0, -1));
        // Both indices are inside the sketch, whose indices fit in an i32.
        let len = i64::from(last)
            .wrapping_sub(i64::from(first))
            .wrapping_add(1);
        Run {
            first,
            len: usize::try_from(len).unwrap_or(0),
        }
    }
}

/// The counts of the run of `bins` that starts at `first`: each bin's, and a 0 for each
/// empty bin between.
pub(crate) fn dense_counts(
    bins: impl Iterator<Item = Bin>,
    first: i32,
) -> impl Iterator<Item = u32> {
    let mut next = i64::from(first);
    bins.flat_map(move |bin| {
        let index = i64::from(bin.index);
        // Bins ascend from `first`: the gap is that of two i32 indices.
        let gap = usize::try_from(index.saturating_sub(next)).unwrap_or(0);
        next = index.saturating_add(1);
        iter::repeat_n(0, gap).chain(iter::once(bin.count))
    })
}
