//! One slot of an exponential window: `B` tagged counters at a scale and offset fixed for
//! the slot's generation, which a clear (a rotation's recycling, or a rescale moving the
//! counts out) ends.

use super::cell::{Added, WindowCounter};
use crate::sync::{AtomicU32, Ordering::*};

/// Set while a rotation or a rescale clears the slot (so that a record can tell it raced
/// two clears).
const CLOSED: u32 = 1 << 31;
/// Set once the slot has a scale and an offset (its first record, or its recycling, gives
/// them): an empty slot is all zero bits.
const CONFIGURED: u32 = 1 << 30;
const GENERATION_SHIFT: u32 = 25;
const GENERATION_MASK: u32 = 0x1f;
const DOWNSHIFT_SHIFT: u32 = 20;
const DOWNSHIFT_MASK: u32 = 0x1f;
const BASE_BITS: u32 = 20;
const BASE_MASK: u32 = (1 << BASE_BITS) - 1;

/// A slot's scale and offset: bucket `i` (at the scale `downshift` halvings below the
/// finest) is counter `i - base`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Config {
    /// Halvings below the finest scale, at most `MAX_DOWNSHIFT` (18).
    pub(super) downshift: u32,
    /// The bucket of counter 0, at that scale: within +-2^19 (every index is).
    pub(super) base: i32,
}

/// A slot's state word: closed, configured, generation (mod 32) and [`Config`], read by a
/// record in one load so that the scale it uses is the one its generation's counters have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct State(u32);

impl State {
    pub(super) fn is_closed(self) -> bool {
        self.0 & CLOSED != 0
    }

    pub(super) fn config(self) -> Option<Config> {
        (self.0 & CONFIGURED != 0).then_some(Config {
            downshift: (self.0 >> DOWNSHIFT_SHIFT) & DOWNSHIFT_MASK,
            // Sign-extends the 20-bit field.
            base: (((self.0 & BASE_MASK) << (32 - BASE_BITS)) as i32) >> (32 - BASE_BITS),
        })
    }

    fn generation(self) -> u32 {
        (self.0 >> GENERATION_SHIFT) & GENERATION_MASK
    }

    /// The tag of this generation's counters.
    fn tag(self) -> bool {
        self.generation() & 1 != 0
    }

    /// The open state of the next generation, with `config`.
    fn next(self, config: Option<Config>) -> State {
        let generation = (self.generation().wrapping_add(1) & GENERATION_MASK) << GENERATION_SHIFT;
        State(generation | config.map_or(0, encode))
    }

    /// Whether a record that read `self` and added to a counter of its generation's tag
    /// before reading `later` may have added after two or more clears (the tag repeats
    /// every second generation): `later` is two generations on, or one on and closed
    /// again.
    fn raced_twice(self, later: State) -> bool {
        let ahead = later.generation().wrapping_sub(self.generation()) & GENERATION_MASK;
        ahead >= 2 || (ahead == 1 && later.is_closed())
    }
}

fn encode(config: Config) -> u32 {
    CONFIGURED
        | (config.downshift & DOWNSHIFT_MASK) << DOWNSHIFT_SHIFT
        | (config.base as u32 & BASE_MASK)
}

/// What a record into a slot did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Outcome {
    /// Counted in its bucket, which holds this many values now (for a zero, the zeros).
    Counted(u32),
    /// Counted, but it raced two clears of the slot, so it may be in a bucket of another
    /// scale: counted by the window's `raced`.
    Raced,
    /// A full bucket: not counted.
    Saturated,
    /// Not counted: the slot was cleared since the record read its state; it must find
    /// its slot again.
    Retry,
    /// The slot has no scale yet: not counted.
    Unconfigured(State),
    /// Outside the slot's buckets (the index at its scale): not counted.
    OutOfRange(State, i32),
}

pub(super) struct Slot<K: WindowCounter, const B: usize> {
    state: AtomicU32,
    zero: AtomicU32,
    /// `!key` of the smallest non-zero value recorded (0: none), `key` of the largest:
    /// the keys of `sketch::keys` (a float's upper 32 bits), so that `fetch_max` does
    /// both. Zeros are in `zero` alone, so the keys bound the buckets' range.
    low_key: AtomicU32,
    high_key: AtomicU32,
    cells: [K::Cell; B],
}

impl<K: WindowCounter, const B: usize> Slot<K, B> {
    #[cfg(not(loom))]
    pub(super) const fn new() -> Self {
        Slot {
            state: AtomicU32::new(0),
            zero: AtomicU32::new(0),
            low_key: AtomicU32::new(0),
            high_key: AtomicU32::new(0),
            cells: [const { K::EMPTY }; B],
        }
    }

    #[cfg(loom)]
    pub(super) fn new() -> Self {
        Slot {
            state: AtomicU32::new(0),
            zero: AtomicU32::new(0),
            low_key: AtomicU32::new(0),
            high_key: AtomicU32::new(0),
            cells: core::array::from_fn(|_| K::empty()),
        }
    }

    #[inline(always)]
    pub(super) fn state(&self) -> State {
        State(self.state.load(Acquire))
    }

    /// Records a value of index `fine` at the finest scale (`None`: a zero) and `key`. A
    /// closed slot takes a value too: until a counter is cleared its tag lets records in,
    /// and the clear counts what they add. A zero, which no tag guards, it sends on.
    #[inline(always)]
    pub(super) fn record(&self, fine: Option<i32>, key: u32) -> Outcome {
        let state = self.state();
        let added = match fine {
            None => {
                // A zero is in the right "bucket" at every scale, and a clear takes the
                // zeros: it needs no tag. But a closed slot is not open to its interval's
                // records (a rescale's source, or cleared under way): look again, as a
                // value does when its counter's tag says so.
                if state.is_closed() {
                    return Outcome::Retry;
                }
                // Not in the extremes' keys, which bound the buckets' range: the zeros'
                // count says whether the smallest value is a zero.
                let zeros = self.zero.fetch_add(1, AcqRel).wrapping_add(1);
                return Outcome::Counted(zeros);
            }
            Some(fine) => {
                let Some(config) = state.config() else {
                    return Outcome::Unconfigured(state);
                };
                let index = fine >> config.downshift;
                let Some(cell) = self.cell(config, index) else {
                    return Outcome::OutOfRange(state, index);
                };
                K::add_one(cell, state.tag())
            }
        };
        match added {
            Added::Counted(n) => {
                self.widen_keys(key, key);
                if state.raced_twice(self.state()) {
                    Outcome::Raced
                } else {
                    Outcome::Counted(n)
                }
            }
            Added::Full => Outcome::Saturated,
            Added::Stale => Outcome::Retry,
        }
    }

    /// The first half of a record of finest index `fine`: its bucket's counter, not the
    /// keys (what a snapshot racing a record can see). Whether it was counted.
    #[cfg(all(test, not(loom)))]
    pub(super) fn add_to_bucket_only(&self, fine: i32) -> bool {
        let state = self.state();
        let cell = state
            .config()
            .and_then(|c| self.cell(c, fine >> c.downshift));
        cell.is_some_and(|cell| matches!(K::add_one(cell, state.tag()), Added::Counted(_)))
    }

    /// The add of a record of finest index `fine` that read `state` and was preempted
    /// until now (its bucket's counter at that state's scale and tag, not the keys).
    /// Whether it was counted.
    #[cfg(all(test, not(loom)))]
    pub(super) fn add_as_of(&self, state: State, fine: i32) -> bool {
        let cell = state
            .config()
            .and_then(|c| self.cell(c, fine >> c.downshift));
        cell.is_some_and(|cell| matches!(K::add_one(cell, state.tag()), Added::Counted(_)))
    }

    /// Takes the extremes' keys `low` and `high` in.
    #[inline(always)]
    fn widen_keys(&self, low: u32, high: u32) {
        if !low > self.low_key.load(Relaxed) {
            self.low_key.fetch_max(!low, Relaxed);
        }
        if high > self.high_key.load(Relaxed) {
            self.high_key.fetch_max(high, Relaxed);
        }
    }

    /// Gives an unconfigured slot `config`, if it still is in `state` (and open: a clear
    /// under way has read the slot as unconfigured, so it would not count what comes).
    pub(super) fn configure(&self, state: State, config: Config) -> bool {
        if state.is_closed() {
            return false;
        }
        let configured = state.0 | encode(config);
        self.state
            .compare_exchange(state.0, configured, AcqRel, Acquire)
            .is_ok()
    }

    /// Closes the slot and empties it: every non-empty bucket's index (at its scale, if
    /// it has one) and count to `sink`. Returns the state it was in,
    /// the zeros and the extremes' keys (`None` if it held nothing). Only the caller
    /// holding the window's rotation lock clears.
    pub(super) fn close_and_clear(&self, mut sink: impl FnMut(Option<i32>, u64)) -> Cleared {
        let state = State(self.state.fetch_or(CLOSED, AcqRel));
        // The next generation's tag: an add that reads it was made after this clear.
        let tag = !state.tag();
        let config = state.config();
        for (pos, cell) in self.cells.iter().enumerate() {
            let n = K::clear(cell, tag);
            if n > 0 {
                // pos < B <= 2^16: the index is within the i32s. (A slot with no scale
                // holds counts only from a record that raced two clears: see `raced`.)
                sink(config.map(|c| c.base.wrapping_add(pos as i32)), n);
            }
        }
        let zeros = self.zero.swap(0, AcqRel);
        let low = !self.low_key.swap(0, AcqRel);
        let high = self.high_key.swap(0, AcqRel);
        Cleared {
            state,
            zeros,
            keys: (low, high),
        }
    }

    /// Opens a cleared slot for the next generation, with `config` (`None`: its first
    /// record chooses).
    pub(super) fn reopen(&self, cleared: State, config: Option<Config>) {
        self.state.store(cleared.next(config).0, Release);
    }

    /// Adds `n` to bucket `index` (at this slot's scale, which must hold it): what a
    /// rescale moves in. Returns how many fit.
    pub(super) fn add_to(&self, config: Config, index: i32, n: u64) -> u64 {
        self.cell(config, index)
            .map_or(0, |cell| K::add_many(cell, n))
    }

    /// The counter of bucket `index` (at the scale of `config`), if the slot has it.
    #[inline(always)]
    fn cell(&self, config: Config, index: i32) -> Option<&K::Cell> {
        usize::try_from(index.wrapping_sub(config.base))
            .ok()
            .and_then(|pos| self.cells.get(pos))
    }

    /// Adds what a rescale moves in besides the buckets.
    pub(super) fn add_rest(&self, zeros: u32, (low, high): (u32, u32)) {
        if zeros > 0 {
            self.zero.fetch_add(zeros, AcqRel);
        }
        if low <= high {
            self.widen_keys(low, high);
        }
    }

    /// Every non-empty bucket's index (at the scale of `config`) and count.
    pub(super) fn buckets(&self, config: Config) -> impl Iterator<Item = (i32, u64)> + '_ {
        self.cells
            .iter()
            .enumerate()
            .filter_map(move |(pos, cell)| {
                let n = K::count(cell);
                (n > 0).then(|| (config.base.wrapping_add(pos as i32), n))
            })
    }

    pub(super) fn zeros(&self) -> u32 {
        self.zero.load(Acquire)
    }

    /// The keys of the smallest and largest value (low > high if none).
    pub(super) fn keys(&self) -> (u32, u32) {
        (!self.low_key.load(Relaxed), self.high_key.load(Relaxed))
    }
}

/// What [`Slot::close_and_clear`] found.
pub(super) struct Cleared {
    pub(super) state: State,
    pub(super) zeros: u32,
    /// The extremes' keys (low > high if none).
    pub(super) keys: (u32, u32),
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn the_state_word_round_trips_every_config() {
        for downshift in [0, 7, 18] {
            for base in [-(1 << 19), -275_000 >> 1, -1, 0, 1, (1 << 19) - 1] {
                let config = Config { downshift, base };
                let state = State(0).next(Some(config));
                assert_eq!(state.config(), Some(config));
                assert_eq!(state.generation(), 1);
                assert!(!state.is_closed());
            }
        }
        assert_eq!(State(0).config(), None);
        let wrapped = State(GENERATION_MASK << GENERATION_SHIFT).next(None);
        assert_eq!(wrapped.generation(), 0);
    }

    #[test]
    fn a_record_that_raced_a_clear_goes_again() {
        let slot = Slot::<u16, 8>::new();
        let config = Config {
            downshift: 8,
            base: 10,
        };
        assert!(slot.configure(slot.state(), config));
        assert_eq!(slot.record(Some(12 << 8), 1), Outcome::Counted(1));
        assert_eq!(
            slot.record(Some(2 << 8), 1),
            Outcome::OutOfRange(slot.state(), 2)
        );
        let mut seen = [0u64; 2];
        let cleared = slot.close_and_clear(|i, n| seen = [i.unwrap() as u64, n]);
        assert_eq!(seen, [12, 1]);
        // Closed and cleared: the add is not made until the slot reopens.
        assert_eq!(slot.record(Some(12 << 8), 1), Outcome::Retry);
        slot.reopen(cleared.state, Some(config));
        assert_eq!(slot.record(Some(12 << 8), 1), Outcome::Counted(1));
        assert_eq!(
            slot.buckets(config).collect::<std::vec::Vec<_>>(),
            [(12, 1)]
        );
    }
}
