//! [`SeqLock`]: the generation counter that tells a window's refresh whether its scan of the
//! slots overlapped a rotation's clears.
//!
//! A sequence lock without the data it guards (the slots are atomics of their own, read
//! and cleared in place): the writer makes the counter odd, writes, and makes it even
//! again; a reader notes an even counter, reads, and keeps what it read only if the
//! counter is unchanged. The names are those of crossbeam's `SeqLock`
//! (`optimistic_read`, `validate_read`). Writers are serialised by the caller (the
//! window's rotation try-lock), so the counter is bumped, never compared-and-swapped.

use crate::sync::{const_unless_loom, fence, AtomicU32, Ordering};

/// A generation counter, odd while a writer is inside (wrapping at 2^32).
pub(super) struct SeqLock(AtomicU32);

impl SeqLock {
    const_unless_loom! {
        /// Generation zero: no writer inside.
        pub(super) fn new() -> Self {
            SeqLock(AtomicU32::new(0))
        }
    }

    /// The reader's side, first half: the stamp to validate what is read next against, or
    /// `None` while a writer is inside (acquire: what the last writer wrote is visible).
    #[inline]
    pub(super) fn optimistic_read(&self) -> Option<u32> {
        let stamp = self.0.load(Ordering::Acquire);
        (stamp & 1 == 0).then_some(stamp)
    }

    /// The reader's side, second half: whether no writer came since
    /// [`optimistic_read`](Self::optimistic_read) gave `stamp`, so that what was read in
    /// between is of no write. The fence orders those reads before the counter's: a read
    /// that saw a writer's store sees that writer's odd counter.
    #[inline]
    pub(super) fn validate_read(&self, stamp: u32) -> bool {
        fence(Ordering::Acquire);
        self.0.load(Ordering::Relaxed) == stamp
    }

    /// `read` run where no writer overlapped it, tried up to `attempts` times (skipping
    /// an attempt while a writer is inside); `None` if writers spoiled every one.
    #[inline]
    pub(super) fn read_validated<R>(
        &self,
        attempts: u32,
        mut read: impl FnMut() -> R,
    ) -> Option<R> {
        for _ in 0..attempts {
            match self.optimistic_read() {
                Some(stamp) => {
                    let value = read();
                    if self.validate_read(stamp) {
                        return Some(value);
                    }
                }
                None => core::hint::spin_loop(),
            }
        }
        None
    }

    /// [`read_validated`](Self::read_validated), and if writers keep spoiling it, one more
    /// run as it is: a reader never waits for a writer, so an interrupt handler's query
    /// cannot deadlock on the rotation it preempted.
    #[inline]
    pub(super) fn read_stable<R>(&self, attempts: u32, mut read: impl FnMut() -> R) -> R {
        self.read_validated(attempts, &mut read)
            .unwrap_or_else(read)
    }

    /// The writer's side, first half, for one writer at a time: makes the counter odd and
    /// calls `announce` with it, then fences, so that the counter (and what `announce`
    /// stored) is ordered before the writes that follow: a reader that sees any of them
    /// fails [`validate_read`](Self::validate_read). (The window withdraws its cached
    /// quantile in `announce`, before it clears anything.)
    #[inline]
    pub(super) fn begin_write(&self, announce: impl FnOnce(u32)) {
        let odd = self.0.fetch_add(1, Ordering::Relaxed).wrapping_add(1);
        announce(odd);
        fence(Ordering::Release);
    }

    /// The writer's side, second half: makes the counter even again (release: a reader
    /// that notes the new stamp sees the writes).
    #[inline]
    pub(super) fn end_write(&self) {
        self.0.fetch_add(1, Ordering::Release);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn a_read_is_valid_only_if_no_writer_came() {
        let lock = SeqLock::new();
        let stamp = lock.optimistic_read().unwrap();
        assert!(lock.validate_read(stamp));
        let mut announced = None;
        lock.begin_write(|odd| announced = Some(odd));
        assert_eq!(announced, Some(1));
        assert_eq!(lock.optimistic_read(), None, "a writer is inside");
        assert!(!lock.validate_read(stamp));
        lock.end_write();
        assert!(!lock.validate_read(stamp), "a writer came");
        let after = lock.optimistic_read().unwrap();
        assert_eq!(after, 2);
        assert!(lock.validate_read(after));
    }

    #[test]
    fn a_validated_read_gives_up_when_every_attempt_is_spoiled() {
        let lock = SeqLock::new();
        assert_eq!(lock.read_validated(2, || 7), Some(7));
        let mut runs = 0;
        let spoiled = lock.read_validated(2, || {
            lock.begin_write(|_| {});
            lock.end_write();
            runs += 1;
        });
        assert_eq!((spoiled, runs), (None, 2));
        lock.begin_write(|_| {});
        let mut runs = 0;
        assert_eq!(lock.read_validated(2, || runs += 1), None);
        assert_eq!(runs, 0, "no run while a writer is inside");
    }

    #[test]
    fn a_stable_read_retries_while_a_writer_spoils_it_then_reads_as_it_is() {
        let lock = SeqLock::new();
        let mut runs = 0;
        assert_eq!(
            lock.read_stable(3, || {
                runs += 1;
                runs
            }),
            1
        );
        // A writer inside for good: every attempt is skipped, then one run as it is.
        lock.begin_write(|_| {});
        let mut runs = 0;
        assert_eq!(
            lock.read_stable(3, || {
                runs += 1;
                runs
            }),
            1
        );
        lock.end_write();
        // A writer comes during each run: three spoiled runs, then a fourth kept.
        let mut runs = 0;
        let value = lock.read_stable(3, || {
            lock.begin_write(|_| {});
            lock.end_write();
            runs += 1;
            runs
        });
        assert_eq!(value, 4);
    }
}
