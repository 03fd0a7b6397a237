//! [`WindowCounter`]: the atomic bucket counters of an
//! [`ExponentialWindow`](super::ExponentialWindow), each tagged with its slot's generation.
//!
//! A counter's top bit is the parity of the generation of the slot it was last cleared
//! for. A record reads its slot's state (scale, offset, generation) in one load, then adds
//! one to a counter with a compare-and-swap that succeeds only while the counter's tag is
//! that generation's: an add is counted where the record meant it (or moved from there by
//! a later clear, with the rest), or not made at all, and the record reads its slot
//! again. No add is ever undone, so no count can be lost (the window's docs have the
//! argument, and the one case a record cannot tell apart).

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
/// assert_eq!(<u16 as WindowCounter>::LIMIT, 32_767);
/// assert_eq!(<u32 as WindowCounter>::LIMIT, 2_147_483_647);
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
        /// Counted, in a counter of the generation expected: its count now.
        Counted(u32),
        /// The counter was full: not counted.
        Full,
        /// The counter was cleared for another generation since the record read its
        /// slot's state: not counted.
        Stale,
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
        /// Adds one to a counter if it is of the generation of parity `tag` and not full.
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
    ($t:ty, $atomic:ident) => {
        impl WindowCounter for $t {
            // Every count below the tag.
            const LIMIT: u32 = (TAG as u32).wrapping_sub(1);
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
                let tag: $t = if tag { TAG } else { 0 };
                let mut word = cell.load(Relaxed);
                loop {
                    if word & TAG != tag {
                        // Synchronises with the clear whose swap this read: the record's
                        // next look at its slot sees what the clearer published first
                        // (the rescaled interval's slot), so it does not see the same
                        // stale slot again.
                        fence(Acquire);
                        return Added::Stale;
                    }
                    if word & !TAG == !TAG {
                        return Added::Full;
                    }
                    // Acquire on success: a clear's swap that came first is then seen by
                    // the state load that follows (the race check); release: a clear
                    // that takes this count sees it.
                    match cell.compare_exchange_weak(word, word.wrapping_add(1), AcqRel, Relaxed) {
                        // The count below the tag: it fits.
                        Ok(_) => return Added::Counted(u32::from(word & !TAG).wrapping_add(1)),
                        Err(now) => word = now,
                    }
                }
            }

            fn add_many(cell: &Self::Cell, n: u64) -> u64 {
                let mut added = 0;
                let _ = cell.fetch_update(AcqRel, Acquire, |w| {
                    let room = u64::from((!TAG).wrapping_sub(w & !TAG)); // w & !TAG <= !TAG
                    added = n.min(room);
                    // added <= the room below the tag.
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

use crate::sync::fence;
use crate::sync::Ordering::{AcqRel, Acquire, Relaxed};

mod u16_counter {
    use super::*;
    const TAG: u16 = 1 << 15;
    window_counter!(u16, AtomicU16);
}

mod u32_counter {
    use super::*;
    const TAG: u32 = 1 << 31;
    window_counter!(u32, AtomicU32);
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::sealed::Cells;
    use super::*;

    #[test]
    fn an_add_counts_only_in_its_own_generation() {
        let c = <u16 as Cells>::empty();
        assert_eq!(u16::add_one(&c, false), Added::Counted(1));
        assert_eq!(u16::add_one(&c, false), Added::Counted(2));
        // Cleared for generation 1: an add that read generation 0 is not made.
        assert_eq!(u16::clear(&c, true), 2);
        assert_eq!(u16::add_one(&c, false), Added::Stale);
        assert_eq!(u16::count(&c), 0);
        assert_eq!(u16::add_one(&c, true), Added::Counted(1));
        assert_eq!(u16::add_many(&c, 10), 10);
        assert_eq!(u16::count(&c), 11);
    }

    #[test]
    fn a_full_counter_takes_nothing_and_never_reaches_the_tag() {
        let c = <u32 as Cells>::empty();
        assert_eq!(u32::add_many(&c, u64::MAX), u64::from(u32::LIMIT));
        assert_eq!(u32::add_one(&c, false), Added::Full);
        assert_eq!(u32::count(&c), u64::from(u32::LIMIT));
        let c = <u16 as Cells>::empty();
        assert_eq!(u16::add_many(&c, 40_000), 32_767);
        assert_eq!(u16::add_many(&c, 1), 0);
        assert_eq!(
            (u16::add_one(&c, false), u16::add_one(&c, true)),
            (Added::Full, Added::Stale)
        );
        assert_eq!(u16::clear(&c, false), 32_767);
    }
}
