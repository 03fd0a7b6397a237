//! [`WindowCounter`]: the atomic bucket counters of an
//! [`ExponentialWindow`](super::ExponentialWindow), each tagged with its slot's generation.
//!
//! A counter's top bit is the parity of the generation of the slot it was last cleared
//! for. A record reads its slot's state (scale, offset, generation) in one load and adds
//! one to a counter: if the counter's tag is the generation the record read, the add
//! happened before the counter was next cleared, so it is counted where the record
//! meant it (or moved from there by the clear); if not, it landed in a counter cleared
//! for a later generation, of another scale, and the record takes it back. That is how
//! records race rescales without waiting and without being misplaced (docs/window.md's
//! "Exponential window" section has the whole argument).

/// The integer type an [`ExponentialWindow`](super::ExponentialWindow) counts its buckets
/// in: `u16` or `u32`, as an atomic. The top bit of each counter is a tag (see the
/// [window's docs](super::ExponentialWindow)), and a bucket holds at most
/// [`LIMIT`](Self::LIMIT) values per interval; what would go beyond is counted by
/// [`saturated`](super::ExponentialWindow::saturated).
///
/// Sealed: implemented for `u16` and `u32` only.
///
/// ```
/// use tailguard::window::WindowCounter;
/// assert_eq!(<u16 as WindowCounter>::LIMIT, 30_719);
/// assert_eq!(<u32 as WindowCounter>::LIMIT, 2_147_418_111);
/// ```
pub trait WindowCounter: sealed::Cells + Copy + 'static {
    /// The most values one bucket holds in one interval.
    const LIMIT: u32;
}

pub(super) use sealed::Added;

pub(super) mod sealed {
    /// What adding one to a counter did.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Added {
        /// Counted, in a counter of the generation expected; its count before.
        Counted(u32),
        /// The counter was full: not counted (and taken back, unless a clear took it).
        Full { taken_back: bool },
        /// The counter was cleared for another generation since the record read its slot:
        /// `taken_back` if the add was undone (the record must go again), else a later clear
        /// has counted it.
        Stray { taken_back: bool },
    }

    /// The atomic operations of a counter, kept out of the public trait: only `u16` and
    /// `u32` implement it.
    pub trait Cells {
        /// The atomic the counter is kept in.
        type Cell: Send + Sync;
        /// An empty counter of generation 0 (all zero bits), to repeat in arrays.
        #[allow(clippy::declare_interior_mutable_const)]
        #[cfg(not(loom))]
        const EMPTY: Self::Cell;
        /// The same, for loom's atomics (not `const`).
        fn empty() -> Self::Cell;
        /// Adds one to a counter expected to be of the generation of parity `tag`.
        fn add_one(cell: &Self::Cell, tag: bool) -> Added;
        /// Adds up to `n` (a rescale moving counts in), stopping at the limit; returns
        /// how many were added. The tag is kept.
        fn add_many(cell: &Self::Cell, n: u64) -> u64;
        /// Empties the counter for the generation of parity `tag`: returns its count.
        fn clear(cell: &Self::Cell, tag: bool) -> u64;
        /// The counter's count.
        fn count(cell: &Self::Cell) -> u64;
    }
}

macro_rules! window_counter {
    ($t:ty, $atomic:ident, $headroom:expr) => {
        impl WindowCounter for $t {
            // Below the tag, less a headroom for adds racing a full counter (each
            // overshoots by one before it takes its one back): 2^11 racers for u16, 2^16
            // for u32.
            const LIMIT: u32 = (TAG as u32).wrapping_sub($headroom).wrapping_sub(1);
        }

        impl sealed::Cells for $t {
            type Cell = crate::sync::$atomic;
            #[cfg(not(loom))]
            #[allow(clippy::declare_interior_mutable_const)]
            const EMPTY: Self::Cell = crate::sync::$atomic::new(0);

            fn empty() -> Self::Cell {
                crate::sync::$atomic::new(0)
            }

            #[inline(always)]
            fn add_one(cell: &Self::Cell, tag: bool) -> Added {
                const LIMIT: $t = <$t as WindowCounter>::LIMIT as $t;
                // Acquire: a clear's release (its swap) is then seen by the state load
                // that follows (the race check); release: a clear that takes this one
                // counts it.
                let before = cell.fetch_add(1, AcqRel);
                let seen = before & TAG != 0;
                if seen != tag {
                    return Added::Stray {
                        taken_back: take_back(cell, seen),
                    };
                }
                let count = before & !TAG;
                if count >= LIMIT {
                    return Added::Full {
                        taken_back: take_back(cell, seen),
                    };
                }
                Added::Counted(u32::from(count))
            }

            fn add_many(cell: &Self::Cell, n: u64) -> u64 {
                const LIMIT: $t = <$t as WindowCounter>::LIMIT as $t;
                let mut added = 0;
                let _ = cell.fetch_update(AcqRel, Acquire, |w| {
                    let count = w & !TAG;
                    let room = u64::from(LIMIT.saturating_sub(count));
                    added = n.min(room);
                    // added <= LIMIT - count: below the tag.
                    Some(w.wrapping_add(added as $t))
                });
                added
            }

            fn clear(cell: &Self::Cell, tag: bool) -> u64 {
                let empty: $t = if tag { TAG } else { 0 };
                u64::from(cell.swap(empty, AcqRel) & !TAG)
            }

            fn count(cell: &Self::Cell) -> u64 {
                u64::from(cell.load(Acquire) & !TAG)
            }
        }
    };
}

use crate::sync::Ordering::{AcqRel, Acquire};

mod u16_counter {
    use super::*;
    const TAG: u16 = 1 << 15;

    /// Undoes an add that did not count: while the counter is still of the tag the add
    /// saw and holds at least one (the add's own, unless a clear took it, which counted
    /// it). Never borrows into the tag.
    fn take_back(cell: &crate::sync::AtomicU16, seen: bool) -> bool {
        cell.fetch_update(AcqRel, Acquire, |w| {
            ((w & TAG != 0) == seen && w & !TAG > 0).then(|| w.wrapping_sub(1))
        })
        .is_ok()
    }

    window_counter!(u16, AtomicU16, 1 << 11);
}

mod u32_counter {
    use super::*;
    const TAG: u32 = 1 << 31;

    /// See the `u16` counter's.
    fn take_back(cell: &crate::sync::AtomicU32, seen: bool) -> bool {
        cell.fetch_update(AcqRel, Acquire, |w| {
            ((w & TAG != 0) == seen && w & !TAG > 0).then(|| w.wrapping_sub(1))
        })
        .is_ok()
    }

    window_counter!(u32, AtomicU32, 1 << 16);
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::sealed::Cells;
    use super::*;

    #[test]
    fn an_add_counts_only_in_its_own_generation() {
        let c = <u16 as Cells>::empty();
        assert_eq!(u16::add_one(&c, false), Added::Counted(0));
        assert_eq!(u16::add_one(&c, false), Added::Counted(1));
        // Cleared for generation 1: an add that read generation 0 is taken back.
        assert_eq!(u16::clear(&c, true), 2);
        assert_eq!(u16::add_one(&c, false), Added::Stray { taken_back: true });
        assert_eq!(u16::count(&c), 0);
        assert_eq!(u16::add_one(&c, true), Added::Counted(0));
        assert_eq!(u16::add_many(&c, 10), 10);
        assert_eq!(u16::count(&c), 11);
    }

    #[test]
    fn a_full_counter_takes_nothing_and_never_reaches_the_tag() {
        let c = <u32 as Cells>::empty();
        assert_eq!(u32::add_many(&c, u64::MAX), u64::from(u32::LIMIT));
        assert_eq!(u32::add_one(&c, false), Added::Full { taken_back: true });
        assert_eq!(u32::count(&c), u64::from(u32::LIMIT));
        let c = <u16 as Cells>::empty();
        assert_eq!(u16::add_many(&c, 40_000), 30_719);
        assert_eq!(u16::add_many(&c, 1), 0);
        assert_eq!(u16::add_one(&c, false), Added::Full { taken_back: true });
        assert_eq!(u16::clear(&c, false), 30_719);
    }
}
