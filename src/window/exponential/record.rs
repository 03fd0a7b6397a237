//! The exponential window's record after the value's index is known: the first look at
//! the slot of its interval, and what an outcome other than "counted" asks for (a slot to
//! configure, a rescale or a clamp, a slot cleared under the record), in a bounded number
//! of looks that never wait.

use super::slot::{Config, Outcome, Slot, State};
use super::{count, fit, last_bucket, ExponentialWindow, WindowCounter, ATTEMPTS, FIRST_SPAN};
use crate::clock::{Clock, Instant};
use crate::sync::Ordering::Acquire;
use crate::window::WindowPreset;

impl<C: Clock, K: WindowCounter, const B: usize, const SLOTS: usize, P: WindowPreset>
    ExponentialWindow<C, K, B, SLOTS, P>
{
    /// Adds a value of finest index `fine` (`None`: a zero) to the slot of `now`.
    #[inline]
    pub(super) fn add(&self, now: Instant, fine: Option<i32>, key: u32) {
        let logical = self.logical_at(now, !self.maintenance_rotates);
        let slot = self.physical(logical);
        match slot.record(fine, key) {
            Outcome::Counted(n) => self.after_record(n),
            Outcome::OutOfRange(state, index) if self.maintenance_rotates => {
                self.clamp_and_record(now, logical, slot, fine, key, (state, index));
            }
            outcome => self.settle(now, logical, slot, fine, key, outcome),
        }
    }

    /// A value outside its slot when records leave rescales to maintenance: asks for one
    /// and counts the value in the nearest bucket, as [`settle`](Self::settle) would, on a
    /// shorter path (through `settle`'s loop it was the longest record that does not
    /// rotate, past 400 instructions on the Cortex-M4F). Anything else, the first look's
    /// slot no longer the published interval's included, goes to `settle`.
    #[cold]
    #[inline(never)]
    fn clamp_and_record<'a>(
        &'a self,
        now: Instant,
        logical: u32,
        slot: &'a Slot<K, B>,
        fine: Option<i32>,
        key: u32,
        (state, index): (State, i32),
    ) {
        if logical != self.current.load(Acquire) {
            return self.settle(
                now,
                logical,
                slot,
                fine,
                key,
                Outcome::OutOfRange(state, index),
            );
        }
        self.ask_for_rescale(fine.unwrap_or(0));
        let fine = Some(self.clamp(state, index));
        match slot.record(fine, key) {
            Outcome::Counted(n) => self.after_record(n),
            outcome => self.settle(now, logical, slot, fine, key, outcome),
        }
    }

    /// Asks for a refresh of the cached quantiles if a record's bucket now holds `n`.
    #[inline(always)]
    fn after_record(&self, n: u32) {
        if self.threshold.asks(n) {
            self.threshold.ask();
        }
    }

    /// The rest of [`add`](Self::add), out of line: what the first look's `outcome` (in
    /// `slot`, logical slot `logical`'s then) asks for, and the looks after it. A look
    /// after a clamp takes the same slot again: if a rescale has swapped it out since, it
    /// is closed and the record comes back as a retry, which looks the slot up afresh.
    #[cold]
    #[inline(never)]
    fn settle<'a>(
        &'a self,
        now: Instant,
        mut logical: u32,
        mut slot: &'a Slot<K, B>,
        mut fine: Option<i32>,
        key: u32,
        mut outcome: Outcome,
    ) {
        for attempt in 1..=ATTEMPTS {
            if attempt > 1 {
                outcome = slot.record(fine, key);
            }
            match outcome {
                Outcome::Counted(n) => return self.after_record(n),
                Outcome::Raced => return count(&self.raced),
                Outcome::Saturated => return count(&self.saturated),
                // Cleared under it: by a rescale (the interval has another slot now, which
                // a fresh look finds), or by a rotation. A closed slot ahead of the
                // published interval is a rescale's source, closed until the rotation to
                // its interval: the published interval's slot takes the value (it is in
                // the window too), as it does a value out of an earlier slot's range.
                Outcome::Retry => {
                    logical = self.logical_at(now, false);
                    let current = self.current.load(Acquire);
                    if logical != current && self.physical(logical).state().is_closed() {
                        logical = current;
                    }
                    slot = self.physical(logical);
                }
                Outcome::Unconfigured(state) => {
                    if let Some(fine) = fine {
                        let (low, high) = (
                            fine.saturating_sub(FIRST_SPAN / 2),
                            fine.saturating_add(FIRST_SPAN / 2),
                        );
                        // Configured by this record: counted there at once (a slot a rescale
                        // swapped out meanwhile is closed, and the next look finds the slot
                        // the map gives), which keeps a slot's first record, the longest
                        // that does not rotate, under 400 instructions on the Cortex-M4F.
                        if slot.configure(state, fit::<B>(low, high)) {
                            match slot.record(Some(fine), key) {
                                Outcome::Counted(n) => return self.after_record(n),
                                Outcome::Raced => return count(&self.raced),
                                Outcome::Saturated => return count(&self.saturated),
                                _ => {} // not counted: the next look
                            }
                        }
                    }
                }
                Outcome::OutOfRange(state, index) => {
                    let current = self.current.load(Acquire);
                    if logical != current {
                        // An earlier interval's slot is not rescaled: the published
                        // interval's takes the value (it is in the window too).
                        logical = current;
                        slot = self.physical(logical);
                    } else if self.maintenance_rotates {
                        self.ask_for_rescale(fine.unwrap_or(0));
                        fine = Some(self.clamp(state, index));
                    } else if self.rescale(logical, state, index) {
                        slot = self.physical(logical); // swapped for the rescaled one
                    } else if attempt >= ATTEMPTS / 2 {
                        // Another caller has been rotating or rescaling all along.
                        fine = Some(self.clamp(state, index));
                    } else {
                        slot = self.physical(logical);
                    }
                }
            }
        }
        // Every look found its slot cleared, or a rescale under way: counted as expired
        // (as a rotation would have), and as raced.
        count(&self.expired);
        count(&self.raced);
    }

    /// The finest index of the nearest bucket of a slot in `state` to `index` (at its
    /// scale), counted as clamped.
    #[cold]
    fn clamp(&self, state: State, index: i32) -> i32 {
        count(&self.clamped);
        let config = state.config().unwrap_or(Config {
            downshift: 0,
            base: 0,
        });
        let top = config.base.wrapping_add(last_bucket::<B>());
        index.clamp(config.base, top) << config.downshift
    }
}
