//! What a decoder added to a sketch, counted one way for both messages: a message's bin
//! is placed in the sketch's [`Range`] as `record` places a value, and [`Tally`] counts
//! what was added, clamped or dropped. `proto::Decoded`, `proto::Rebinned` and
//! `otlp::Decoded` report these counts, each with what only its decoder knows.

use crate::sketch::{DDSketch, IndexMapping};

/// Where a message's bin went in the sketch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Side {
    /// The message's zero count, into the zero bin: not below the range, just zeros.
    Zero,
    /// Below the sketch's range: into its zero bin.
    Below,
    /// Into the bin of the same index.
    Inside,
    /// Above the sketch's range: into its top bin.
    Above,
}

/// A sketch's bin indices, `[min_index, end)`, widened to `i64`: a message's keys (after
/// renumbering) may lie anywhere.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Range {
    pub(crate) min_index: i64,
    pub(crate) end: i64,
}

impl Range {
    pub(crate) fn of<M: IndexMapping, const N: usize>(sketch: &DDSketch<M, N>) -> Self {
        let min_index = i64::from(sketch.min_index());
        Range {
            min_index,
            // min_index + N fits in an i32 (the sketch's constructors check it).
            end: min_index.saturating_add(i64::try_from(N).unwrap_or(i64::MAX)),
        }
    }

    /// The index to add a bin's values at in the sketch (below the range the zero bin's:
    /// `i32::MIN` is always below it; above it, one the sketch clamps into its top bin),
    /// and which side of the range the bin is on.
    pub(crate) fn place(&self, index: i64) -> (i32, Side) {
        if index < self.min_index {
            return (i32::MIN, Side::Below);
        }
        let side = if index >= self.end {
            Side::Above
        } else {
            Side::Inside
        };
        (i32::try_from(index).unwrap_or(i32::MAX), side)
    }
}

/// Values a decoder added to a sketch, and of those, how many were clamped; values
/// dropped because their bin was full. Saturating: a report never overflows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Tally {
    pub(crate) added: u64,
    pub(crate) below_range: u64,
    pub(crate) above_range: u64,
    pub(crate) saturated: u64,
}

impl Tally {
    /// Counts `n` values of a bin on `side` of the range, of which the sketch added
    /// `added` (the rest were dropped as saturated); returns how many were dropped.
    pub(crate) fn count(&mut self, n: u64, added: u64, side: Side) -> u64 {
        let dropped = n.saturating_sub(added);
        self.added = self.added.saturating_add(added);
        self.saturated = self.saturated.saturating_add(dropped);
        match side {
            Side::Below => self.below_range = self.below_range.saturating_add(added),
            Side::Above => self.above_range = self.above_range.saturating_add(added),
            Side::Zero | Side::Inside => {}
        }
        dropped
    }
}
