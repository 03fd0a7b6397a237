//! The exponential window's cached quantiles: what a [`Hedger`](crate::hedge::Hedger)
//! waits for before it hedges, as the upper edge of a bucket in whole nanoseconds, read
//! in one load.
//!
//! Records ask for a refresh when a bucket's count reaches a power of two (1 included) or
//! a multiple of the configured `refresh_records`, and so do rotations and rescales;
//! maintenance refreshes when asked, and at every call while the window is warming up.
//! A refresh walks the slots' buckets merged at the coarsest of their scales (integer
//! operations only: a core without an FPU links no soft-float helper), in a scan that no
//! rotation or rescale overlapped, and publishes one word per quantile.

use core::marker::PhantomData;

use super::slot::Config;
use super::{ExponentialWindow, WindowCounter, ATTEMPTS};
use crate::clock::{Clock, Instant};
use crate::sketch::exponential::index::{self, HIGHEST};
use crate::sketch::key_of_u64;
use crate::sketch::rank::Quantile;
use crate::sync::{const_unless_loom, AtomicU32, Ordering::*};
use crate::window::cache::{decode_bound, encode_bound};
use crate::window::{Parts, WindowPreset, MAX_CACHED_QUANTILES};

/// A cached bound when there is no quantile (encoded bounds stay below 2^31).
const NONE: u32 = u32::MAX;

/// `state`: a caller is refreshing.
const LOCKED: u32 = 1;
/// `state`: a refresh was asked for and no scan has started since.
const WANTED: u32 = 2;

/// Rounds of refresh requests one refresher serves before it returns.
const ROUNDS: u32 = 4;

/// The cached quantiles' settings and published words, the settings stored XOR those of
/// the window preset `P`.
pub(super) struct Threshold<P> {
    /// XOR [`ZERO_SETTINGS`](Self::ZERO_SETTINGS) (read them with
    /// [`settings`](Self::settings)), and each bound complemented, so that the threshold of
    /// `P`'s window is zero bytes.
    settings: Settings,
    state: AtomicU32,
    /// The encoded upper edges of the quantiles' buckets, [`NONE`] without a quantile;
    /// complemented.
    bounds: [AtomicU32; MAX_CACHED_QUANTILES],
    /// The values the last refresh counted (saturating).
    counted: AtomicU32,
    preset: PhantomData<fn() -> P>,
}

/// What a window's configuration sets for its cached quantiles.
#[derive(Clone, Copy)]
struct Settings {
    /// The quantiles' bits (each a [`Quantile`] inside (0, 1)).
    quantiles: [u64; MAX_CACHED_QUANTILES],
    /// How many are configured: 0 caches none.
    quantile_count: u8,
    /// A bucket's count that is a multiple of `refresh_mask + 1` asks for a refresh
    /// (`u32::MAX`: none by count).
    refresh_mask: u32,
    /// Maintenance refreshes at every call while the last refresh counted fewer values.
    warmup: u32,
    /// A quantile is published only from a refresh that counted this many values.
    min_count: u32,
}

impl Settings {
    /// The settings of a window configuration's checked `parts`.
    const fn of(parts: &Parts, warmup: u32, min_count: u32) -> Self {
        let [first, second] = parts.quantiles;
        Settings {
            quantiles: [first.to_bits(), second.to_bits()],
            quantile_count: parts.quantile_count,
            refresh_mask: parts.refresh_mask,
            warmup,
            min_count: if min_count == 0 { 1 } else { min_count },
        }
    }

    /// Settings that cache no quantile.
    const NONE: Settings = Settings {
        quantiles: [Quantile::MEDIAN.to_bits(); MAX_CACHED_QUANTILES],
        quantile_count: 0,
        refresh_mask: u32::MAX,
        warmup: 0,
        min_count: 0,
    };

    /// Each field XOR `key`'s.
    const fn xor(self, key: Self) -> Self {
        let ([a, b], [ka, kb]) = (self.quantiles, key.quantiles);
        Settings {
            quantiles: [a ^ ka, b ^ kb],
            quantile_count: self.quantile_count ^ key.quantile_count,
            refresh_mask: self.refresh_mask ^ key.refresh_mask,
            warmup: self.warmup ^ key.warmup,
            min_count: self.min_count ^ key.min_count,
        }
    }

    /// The quantiles (each inside (0, 1), as `of` was given them).
    fn quantiles(&self) -> [Quantile; MAX_CACHED_QUANTILES] {
        self.quantiles
            .map(|bits| Quantile::inside(f64::from_bits(bits)).unwrap_or(Quantile::MEDIAN))
    }
}

impl<P: WindowPreset> Threshold<P> {
    /// The settings stored as zero bytes: those of `P`'s configuration (none if it is
    /// invalid: a key only has to be fixed), so that a `static` window of it (or a hedger
    /// of a [`HedgePreset`](crate::hedge::HedgePreset)) is all zeros, in `.bss` rather than
    /// `.data` (and a copy in flash). Other settings cost a XOR with these on each read.
    const ZERO_SETTINGS: Settings = match Parts::new(P::CONFIG, Instant::ZERO) {
        Ok(parts) => Settings::of(&parts, P::CONFIG.warmup_records(), P::CONFIG.min_count()),
        Err(_) => Settings::NONE,
    };

    const_unless_loom! {
        /// Settings that cache no quantile.
        pub(super) fn none() -> Self {
            Self::with(Settings::NONE)
        }
    }

    const_unless_loom! {
        /// The settings of a window configuration's checked `parts`.
        pub(super) fn of(parts: &Parts, warmup: u32, min_count: u32) -> Self {
            Self::with(Settings::of(parts, warmup, min_count))
        }
    }

    const_unless_loom! {
        fn with(settings: Settings) -> Self {
            Threshold {
                settings: settings.xor(Self::ZERO_SETTINGS),
                state: AtomicU32::new(0),
                bounds: [AtomicU32::new(!NONE), AtomicU32::new(!NONE)],
                counted: AtomicU32::new(0),
                preset: PhantomData,
            }
        }
    }

    /// How many quantiles are configured (0: none).
    #[inline(always)]
    fn quantile_count(&self) -> u8 {
        self.settings.quantile_count ^ Self::ZERO_SETTINGS.quantile_count
    }

    /// The count mask that asks for a refresh.
    #[inline(always)]
    fn refresh_mask(&self) -> u32 {
        self.settings.refresh_mask ^ Self::ZERO_SETTINGS.refresh_mask
    }

    /// The settings (stored XOR [`ZERO_SETTINGS`](Self::ZERO_SETTINGS)).
    fn settings(&self) -> Settings {
        self.settings.xor(Self::ZERO_SETTINGS)
    }

    /// Whether a record that brought its bucket to `n` values asks for a refresh: at every
    /// power of two (1 included, so that no bucket more than doubles between refreshes
    /// unasked, however many buckets a shift spreads over) and multiple of `refresh_mask + 1`.
    #[inline(always)]
    pub(super) fn asks(&self, n: u32) -> bool {
        self.quantile_count() != 0 && (n & n.wrapping_sub(1) == 0 || n & self.refresh_mask() == 0)
    }

    /// Leaves a refresh request for the next maintenance (a read-modify-write, so that the
    /// maintenance that takes it sees this caller's writes).
    #[inline]
    pub(super) fn ask(&self) {
        if self.quantile_count() != 0 {
            self.state.fetch_or(WANTED, Release);
        }
    }

    /// The `i`-th cached bound, if there is one.
    #[inline]
    fn bound(&self, i: usize) -> Option<u64> {
        if i >= usize::from(self.quantile_count()) {
            return None;
        }
        let word = !self.bounds.get(i)?.load(Acquire);
        (word != NONE).then(|| decode_bound(word))
    }
}

impl<C: Clock, K: WindowCounter, const B: usize, const SLOTS: usize, P: WindowPreset>
    ExponentialWindow<C, K, B, SLOTS, P>
{
    /// [`maintain`](Self::maintain) at `now`, a reading of the window's clock: rotates and
    /// rescales as it says, then refreshes the cached quantiles if a record, a rotation or
    /// a rescale asked for it, or while the window is warming up.
    pub(crate) fn maintain_at(&self, now: Instant) {
        self.rotate_and_rescale(now);
        let t = &self.threshold;
        let settings = t.settings();
        if settings.quantile_count != 0
            && (t.state.load(Relaxed) & WANTED != 0 || t.counted.load(Relaxed) < settings.warmup)
        {
            self.refresh();
        }
    }

    /// Recomputes the cached quantiles, unless another caller is refreshing: that one then
    /// sees the request when it unlocks and scans again.
    fn refresh(&self) {
        let t = &self.threshold;
        let mut state = t.state.fetch_or(WANTED, AcqRel) | WANTED;
        for _ in 0..ROUNDS {
            if state & LOCKED != 0 {
                return;
            }
            // The lock and the request at once: requests from here on want a later scan.
            if let Err(actual) = t.state.compare_exchange(state, LOCKED, AcqRel, Acquire) {
                state = actual;
                continue;
            }
            if !self.publish() {
                t.state.fetch_or(WANTED, AcqRel); // rotations kept spoiling the scan
            }
            state = t.state.fetch_and(!LOCKED, AcqRel) & !LOCKED;
            if state & WANTED == 0 {
                return;
            }
        }
    }

    /// Scans the slots and publishes the quantiles' bounds; false if every scan overlapped
    /// a rotation or a rescale.
    fn publish(&self) -> bool {
        let t = &self.threshold;
        let Some((bounds, count)) = self
            .changes
            .read_validated(ATTEMPTS, || self.quantile_bounds())
        else {
            return false;
        };
        let trusted = count >= u64::from(t.settings().min_count);
        for (word, bound) in t.bounds.iter().zip(bounds) {
            let encoded = match bound {
                Some(bound) if trusted => encode_bound(bound),
                _ => NONE,
            };
            word.store(!encoded, Release);
        }
        t.counted
            .store(u32::try_from(count).unwrap_or(u32::MAX), Relaxed);
        true
    }

    /// The upper edges of the configured quantiles' buckets (0 for the zeros; `None` past
    /// the configured ones, or for an empty window), and the count they rank.
    fn quantile_bounds(&self) -> ([Option<u64>; MAX_CACHED_QUANTILES], u64) {
        let t = &self.threshold;
        let (count, zeros) = self.count_and_zeros_in_slots();
        let mut bounds = [None; MAX_CACHED_QUANTILES];
        if count == 0 {
            return (bounds, 0);
        }
        let settings = t.settings();
        let configured = usize::from(settings.quantile_count);
        let mut ranks = [u64::MAX; MAX_CACHED_QUANTILES];
        for ((rank, bound), q) in ranks
            .iter_mut()
            .zip(&mut bounds)
            .zip(settings.quantiles())
            .take(configured)
        {
            *rank = q.rank(count);
            if zeros > *rank {
                *bound = Some(0);
            }
        }
        let mut walk = Walk::PastRanks {
            ranks: ranks.get(..configured).unwrap_or_default(),
            bounds: bounds.get_mut(..configured).unwrap_or_default(),
        };
        self.merged_buckets(zeros, &mut walk);
        (bounds, count)
    }

    /// The values at or below `v` (every value of each bucket that `v` is in or above, and
    /// the zeros; only the zeros below the smallest value a record has finished) and the
    /// count, from one scan that no rotation or rescale overlapped (retried a few times;
    /// then the last scan as it is), after maintenance. Integer operations only.
    pub(crate) fn rank_and_count_u64(&self, v: u64) -> (u64, u64) {
        self.maintain();
        self.stable_scan(|| {
            let (count, zeros) = self.count_and_zeros_in_slots();
            // A record moves the smallest value's key after its bucket: the keys cover
            // every record that has returned.
            let lowest = self.slots.iter().map(|s| s.keys().0).min();
            let rank = if v > 0 && lowest.is_some_and(|low| key_of_u64(v) >= low) {
                let fine = index::of_u64(v);
                self.merged_buckets(zeros, &mut Walk::UpTo { fine })
            } else {
                zeros
            };
            (rank.min(count), count)
        })
    }

    /// The upper edge (a whole number; 0 for the zeros) of the first bucket, the zeros
    /// first, whose cumulative count exceeds `rank`, from one scan that no rotation or
    /// rescale overlapped; `None` if the window is empty or holds `rank` values or fewer.
    /// Integer operations only. Does not maintain the window.
    pub(crate) fn first_upper_bound_above(&self, rank: u64) -> Option<u64> {
        self.stable_scan(|| {
            let (count, zeros) = self.count_and_zeros_in_slots();
            if count == 0 {
                return None;
            }
            if zeros > rank {
                return Some(0);
            }
            let mut bound = [None];
            self.merged_buckets(
                zeros,
                &mut Walk::PastRanks {
                    ranks: &[rank],
                    bounds: &mut bound,
                },
            );
            let [bound] = bound;
            bound
        })
    }

    /// The upper edge of the cached quantile's bucket, in whole nanoseconds for latencies:
    /// at or above every whole number in that bucket (kept to 26 significant bits, rounded
    /// up, and capped at `(2^26 - 1) * 2^31`, about 4.5 years in nanoseconds), 0 for the
    /// zeros; `None` without a window configuration that caches quantiles
    /// ([`with_config`](Self::with_config)) or while the last refresh counted fewer than
    /// `min_count` values. One atomic load and a shift, integer operations only: what a
    /// [`Hedger`](crate::hedge::Hedger) over this window waits before it hedges.
    ///
    /// The refresh that computed it is the last [`maintain`](Self::maintain) that was
    /// asked for one (by a record, a rotation or a rescale), or any while the window warms
    /// up: after a rotation, the bound is the one before it until that refresh is done.
    /// A record asks when it brings its bucket's count to a power of two (1 included) or a
    /// multiple of `refresh_records` rounded up to a power of two, so the records a
    /// refresh missed that did not ask are, in each bucket, fewer than it counted there: at
    /// a quiet moment after a maintenance, [`cached_count`](Self::cached_count) is more
    /// than half of the values the window holds.
    ///
    /// ```
    /// use tailguard::clock::ManualClock;
    /// use tailguard::window::{ExponentialWindow, WindowConfig};
    ///
    /// let clock = ManualClock::new();
    /// let window = ExponentialWindow::<_, u16, 64>::with_config(&clock, WindowConfig::new()).unwrap();
    /// for ms in 1..=100 {
    ///     window.record_u64(ms * 1_000_000);
    /// }
    /// window.maintain();
    /// let p90 = window.cached_upper_bound().unwrap();
    /// // The p90, 90 ms, at the upper edge of its bucket (the scale's relative accuracy).
    /// assert!(p90 >= 90_000_000 && (p90 as f64) <= 90e6 * (1.0 + 2.0 * window.snapshot().relative_accuracy()));
    /// ```
    #[inline]
    pub fn cached_upper_bound(&self) -> Option<u64> {
        self.threshold.bound(0)
    }

    /// [`cached_upper_bound`](Self::cached_upper_bound) of the `i`-th configured quantile
    /// ([`WindowConfig::with_quantiles`](crate::window::WindowConfig::with_quantiles));
    /// `None` when fewer than `i + 1` are configured.
    ///
    /// ```
    /// use tailguard::clock::ManualClock;
    /// use tailguard::window::{ExponentialWindow, WindowConfig};
    ///
    /// let clock = ManualClock::new();
    /// let config = WindowConfig::new().with_quantiles(&[0.5, 0.99]);
    /// let window = ExponentialWindow::<_, u16, 64>::with_config(&clock, config).unwrap();
    /// for ms in 1..=100 {
    ///     window.record_u64(ms * 1_000_000);
    /// }
    /// window.maintain();
    /// let p50 = window.cached_upper_bound_of(0).unwrap();
    /// let p99 = window.cached_upper_bound_of(1).unwrap();
    /// assert_eq!(window.cached_upper_bound(), Some(p50));
    /// assert!(p50 >= 50_000_000 && p50 < p99 && p99 >= 99_000_000);
    /// assert_eq!(window.cached_upper_bound_of(2), None);
    /// ```
    #[inline]
    pub fn cached_upper_bound_of(&self, i: usize) -> Option<u64> {
        self.threshold.bound(i)
    }

    /// How many values the window held at the last refresh of the cached quantiles
    /// (saturating at `u32::MAX`).
    ///
    /// ```
    /// use tailguard::clock::ManualClock;
    /// use tailguard::window::{ExponentialWindow, WindowConfig};
    ///
    /// let clock = ManualClock::new();
    /// let config = WindowConfig::new().with_warmup_records(0); // refreshed only when asked
    /// let window = ExponentialWindow::<_, u16, 64>::with_config(&clock, config).unwrap();
    /// for expected in [1, 2, 2] {
    ///     window.record_u64(1_000_000); // its bucket's count 1 and 2 ask, 3 does not
    ///     window.maintain();
    ///     assert_eq!(window.cached_count(), expected);
    /// }
    /// assert_eq!(window.count(), 3); // more than half counted
    /// ```
    pub fn cached_count(&self) -> u32 {
        self.threshold.counted.load(Relaxed)
    }

    /// `scan` run where no rotation or rescale overlapped it (see
    /// [`SeqLock::read_stable`](crate::window::seqlock::SeqLock::read_stable)).
    fn stable_scan<R>(&self, scan: impl Fn() -> R) -> R {
        self.changes.read_stable(ATTEMPTS, scan)
    }

    /// The values in the slots (their buckets and zeros) and the zeros among them, each
    /// slot's zeros read once, so that the zeros never exceed the count. Out of line: three
    /// scans call it, and one copy is about 1 KB less flash on a Cortex-M0 than three.
    #[inline(never)]
    fn count_and_zeros_in_slots(&self) -> (u64, u64) {
        self.slots
            .iter()
            .fold((0u64, 0u64), |(count, zeros), slot| {
                let slot_zeros = u64::from(slot.zeros());
                let buckets = slot.state().config().map_or(0, |c| {
                    slot.buckets(c)
                        .fold(0u64, |sum, (_, n)| sum.saturating_add(n))
                });
                (
                    count.saturating_add(slot_zeros).saturating_add(buckets),
                    zeros.saturating_add(slot_zeros),
                )
            })
    }

    /// Walks the slots' non-empty buckets, merged at the coarsest scale of the slots that
    /// hold any, in increasing order of index (an index repeats when slots share a bucket),
    /// counting from `cumulative` (the zeros) until `walk` is done; returns the count
    /// reached. Integer operations only, and no memory beyond one iterator per slot. One
    /// copy for every query, called directly (see [`Walk`]).
    #[inline(never)]
    fn merged_buckets(&self, mut cumulative: u64, walk: &mut Walk<'_>) -> u64 {
        // Slots that hold no bucket's values do not coarsen the merge (a recycled slot
        // waiting for its interval has a scale already).
        let configs = self.slots.each_ref().map(|slot| {
            let config = slot.state().config();
            (slot, config.filter(|&c| slot.buckets(c).next().is_some()))
        });
        let downshift = configs
            .iter()
            .filter_map(|(_, c)| c.map(|c: Config| c.downshift))
            .max()
            .unwrap_or(0);
        let mut streams = configs.map(|(slot, config)| {
            config.map(|c| {
                let shift = downshift.wrapping_sub(c.downshift); // the coarsest is at least c's
                slot.buckets(c)
                    .map(move |(i, n)| (i >> shift, n))
                    .peekable()
            })
        });
        loop {
            let mut lowest: Option<(usize, i32)> = None;
            for (k, stream) in streams.iter_mut().enumerate() {
                if let Some(&(i, _)) = stream.as_mut().and_then(|s| s.peek()) {
                    if lowest.is_none_or(|(_, low)| i < low) {
                        lowest = Some((k, i));
                    }
                }
            }
            let Some((k, _)) = lowest else {
                return cumulative;
            };
            let Some((i, n)) = streams.get_mut(k).and_then(|s| s.as_mut()?.next()) else {
                return cumulative;
            };
            if walk.take(&mut cumulative, i, n, downshift) {
                return cumulative;
            }
        }
    }
}

/// What a walk of the merged buckets looks for. One non-generic walk serves every query:
/// a generic visitor would be a copy per query (2-2.5 KB more on a Cortex-M0), and a
/// `dyn` one an indirect call, which `.ci/check-int-path.sh` cannot follow.
enum Walk<'a> {
    /// For each of `ranks` not found yet (`bounds` in step), the upper edge of the first
    /// bucket whose cumulative count exceeds it; done when every bound is found.
    PastRanks {
        ranks: &'a [u64],
        bounds: &'a mut [Option<u64>],
    },
    /// The values of the buckets at or below the bucket of finest index `fine`.
    UpTo { fine: i32 },
}

impl Walk<'_> {
    /// Takes bucket `i` (at `downshift` halvings below the finest scale) of `n` values
    /// into `cumulative`; true if the walk is done.
    fn take(&mut self, cumulative: &mut u64, i: i32, n: u64, downshift: u32) -> bool {
        match self {
            Walk::PastRanks { ranks, bounds } => {
                *cumulative = cumulative.saturating_add(n);
                let mut done = true;
                for (rank, bound) in ranks.iter().zip(bounds.iter_mut()) {
                    if bound.is_none() && *cumulative > *rank {
                        *bound = Some(upper_edge(i, downshift));
                    }
                    done &= bound.is_some();
                }
                done
            }
            Walk::UpTo { fine } => {
                if i > *fine >> downshift {
                    return true;
                }
                *cumulative = cumulative.saturating_add(n);
                false
            }
        }
    }
}

/// The upper edge of bucket `i` at `downshift` halvings below the finest scale, rounded
/// down to a whole number: the largest whole number the bucket holds (the buckets include
/// their upper edges). Out of line: a walk calls it once per bound it finds.
#[inline(never)]
fn upper_edge(i: i32, downshift: u32) -> u64 {
    // i <= HIGHEST >> downshift: the next bucket's first finest index is at most
    // HIGHEST + 1 (2^1024, whose edge saturates), far inside the i32s.
    let next = i.wrapping_add(1).wrapping_shl(downshift);
    index::lower_edge_u64(next.min(HIGHEST.wrapping_add(1)))
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::clock::ManualClock;
    use crate::window::WindowConfig;
    use core::time::Duration;
    use std::vec::Vec;

    const SECOND: Duration = Duration::from_secs(1);

    /// The bucket of `v` at the snapshot's scale holds the exact quantile; the cached
    /// bound is that bucket's upper edge, or a finer slot's (never below the quantile).
    fn check_bound(values: &[u64], q: f64, bound: u64, accuracy: f64) {
        let mut sorted = values.to_vec();
        sorted.sort_unstable();
        let exact = sorted[(q * (sorted.len() - 1) as f64) as usize];
        assert!(bound >= exact, "bound {bound} below the exact {exact}");
        assert!(
            // A bucket's edges are a factor (1 + a) / (1 - a) apart.
            bound as f64 <= exact as f64 * (1.0 + accuracy) / (1.0 - accuracy) + 1.0,
            "bound {bound} too far above {exact}"
        );
    }

    #[test]
    fn the_cached_bounds_hold_the_exact_quantiles_across_slots_of_different_scales() {
        let clock = ManualClock::new();
        let config = WindowConfig::new()
            .with_interval(SECOND)
            .with_quantiles(&[0.5, 0.95]);
        let w = ExponentialWindow::<_, u16, 32>::with_config(&clock, config).unwrap();
        assert_eq!(w.cached_upper_bound(), None);
        let mut values = Vec::new();
        let mut x = 12_345u64;
        for k in 0..3000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            // A narrow interval, then a wide one: the slots end at different scales.
            let v = if k < 1500 {
                1_000_000 + (x >> 40) % 500_000
            } else {
                1 + (x >> 20) % 10_000_000_000
            };
            if k == 1500 {
                clock.advance(SECOND);
            }
            w.record_u64(v);
            values.push(v);
        }
        w.maintain();
        assert_eq!(w.cached_count(), 3000);
        let accuracy = w.snapshot().relative_accuracy();
        check_bound(&values, 0.5, w.cached_upper_bound().unwrap(), accuracy);
        check_bound(&values, 0.95, w.cached_upper_bound_of(1).unwrap(), accuracy);
        assert_eq!(w.cached_upper_bound_of(0), w.cached_upper_bound());
        assert_eq!(w.cached_upper_bound_of(2), None);
        // Ranks by bucket: every value at or below counted, and at most a bucket more.
        for v in [0, 1, 999_999, 1_200_000, 5_000_000_000, u64::MAX] {
            let (rank, count) = w.rank_and_count_u64(v);
            let exact = values.iter().filter(|&&x| x <= v).count() as u64;
            let edge = (v as f64 * (1.0 + accuracy) / (1.0 - accuracy)) as u64;
            let above = values.iter().filter(|&&x| x <= edge).count() as u64;
            assert_eq!(count, 3000);
            assert!(
                rank >= exact && rank <= above,
                "{v}: {rank} not in {exact}..={above}"
            );
        }
        // The first bucket past the median's rank: the median's.
        let half = w.first_upper_bound_above((3000 - 1) / 2).unwrap();
        check_bound(&values, 0.5, half, accuracy);
    }

    #[test]
    fn no_bound_below_min_count_after_an_idle_gap_or_without_a_config() {
        let clock = ManualClock::new();
        let config = WindowConfig::new().with_interval(SECOND).with_min_count(5);
        let w = ExponentialWindow::<_, u32, 64>::with_config(&clock, config).unwrap();
        for _ in 0..4 {
            w.record_u64(7_000);
        }
        w.maintain();
        assert_eq!((w.cached_upper_bound(), w.cached_count()), (None, 4));
        w.record_u64(0);
        w.maintain();
        // 7,000 at the first value's scale (2): in (2^12.75, 2^13].
        assert_eq!((w.scale(), w.cached_upper_bound()), (Some(2), Some(8_192)));
        clock.advance(10 * SECOND);
        w.maintain(); // everything expired: the rotation asked, the refresh withdrew it
        assert_eq!((w.cached_upper_bound(), w.cached_count()), (None, 0));
        let plain = ExponentialWindow::<_, u16, 16>::new(&clock, SECOND).unwrap();
        plain.record_u64(5);
        plain.maintain();
        assert_eq!(plain.cached_upper_bound(), None);
    }

    #[test]
    fn records_ask_for_refreshes_once_warm() {
        let clock = ManualClock::new();
        let config = WindowConfig::new()
            .with_interval(SECOND)
            .with_warmup_records(4);
        let w = ExponentialWindow::<_, u16, 64>::with_config(&clock, config).unwrap();
        for _ in 0..8 {
            w.record_u64(1_000);
        }
        w.maintain();
        assert_eq!(w.cached_count(), 8);
        // Warm: a bucket's count of 9 to 15 asks nothing; 16 does.
        for _ in 0..7 {
            w.record_u64(1_000);
        }
        w.maintain();
        assert_eq!(w.cached_count(), 8);
        w.record_u64(1_000);
        w.maintain();
        assert_eq!(w.cached_count(), 16);
    }

    /// A shift into many new buckets, each filled with fewer than 16 values, still
    /// refreshes the cached quantile: no bucket more than doubles unasked, so what the
    /// last refresh missed is fewer than it counted.
    #[test]
    fn a_shift_into_sparse_buckets_refreshes_the_cached_quantile() {
        let clock = ManualClock::new();
        let w = ExponentialWindow::<_, u16, 64>::with_config(&clock, WindowConfig::new()).unwrap();
        // Scale 0 from the start (one bucket per octave), so that no rescale asks later.
        w.record_u64(1 << 16);
        w.record_u64(1 << 61);
        for _ in 0..100 {
            w.record_u64(5_000_000);
        }
        w.maintain();
        assert_eq!(w.scale(), Some(0));
        let rescales = w.rescales();
        let values: Vec<u64> = (0..40).map(|i| 1_000_000 << i).collect();
        for &v in &values {
            for _ in 0..15 {
                w.record_u64(v);
                w.maintain();
            }
        }
        assert_eq!(w.rescales(), rescales);
        let (counted, count) = (w.cached_count(), w.count());
        let missed = count - u64::from(counted);
        assert!(missed < u64::from(counted), "{missed} missed of {count}");
        // Here the last refresh missed only the last bucket's values past 8.
        assert_eq!(counted, 702 - 7);
        let rank = (0.9 * f64::from(counted - 1)).floor();
        let at = |r: f64| w.quantile(r / (count - 1) as f64).unwrap().unwrap();
        let bound = w.cached_upper_bound().unwrap() as f64;
        assert!(
            at(rank) <= bound && bound <= 2.0 * at(rank + missed as f64),
            "bound {bound} from {counted} of {count}"
        );
    }

    #[test]
    fn every_upper_edge_is_the_largest_whole_number_in_its_bucket() {
        for v in [
            1u64,
            2,
            3,
            7,
            1000,
            1 << 20,
            (1 << 40) + 12_345,
            u64::MAX / 3,
            u64::MAX,
        ] {
            let fine = index::of_u64(v);
            for downshift in [0, 3, 8, 18] {
                let edge = upper_edge(fine >> downshift, downshift);
                assert!(edge >= v, "{v} at {downshift}: {edge}");
                if edge < u64::MAX {
                    assert!(
                        index::of_u64(edge) >> downshift == fine >> downshift,
                        "{v} {downshift}"
                    );
                    assert!(
                        index::of_u64(edge + 1) >> downshift > fine >> downshift,
                        "{v} {downshift}"
                    );
                }
            }
        }
    }

    /// A 100 ms window caching its p50 and p99 from 7 values, refreshed every 64.
    struct Fast;
    impl WindowPreset for Fast {
        const CONFIG: WindowConfig = WindowConfig::new()
            .with_interval(Duration::from_millis(100))
            .with_quantiles(&[0.5, 0.99])
            .with_min_count(7)
            .with_refresh_records(64)
            .with_warmup_records(3);
    }

    /// A window of its preset's configuration from the origin stores its interval clock
    /// and settings as zero; a window of that configuration keyed by the defaults, and one
    /// of the defaults keyed by the preset, learn as the others do.
    #[test]
    fn a_presets_window_is_stored_as_zero_and_learns_as_any_other() {
        let clock = ManualClock::new();
        let preset = ExponentialWindow::<_, u16, 32, 3, Fast>::with_config_and_origin(
            &clock,
            Fast::CONFIG,
            Instant::ZERO,
        )
        .unwrap();
        let zero = preset.intervals;
        assert_eq!(zero.xor(zero), zero);
        let t = &preset.threshold.settings;
        assert_eq!(t.quantiles, [0, 0]);
        assert_eq!(
            (t.quantile_count, t.refresh_mask, t.warmup, t.min_count),
            (0, 0, 0, 0)
        );
        let plain = ExponentialWindow::<_, u16, 32>::with_config_and_origin(
            &clock,
            Fast::CONFIG,
            Instant::ZERO,
        )
        .unwrap();
        let config = WindowConfig::new().with_interval(SECOND);
        let other = ExponentialWindow::<_, u16, 32, 3, Fast>::with_config(&clock, config).unwrap();
        let default = ExponentialWindow::<_, u16, 32>::with_config(&clock, config).unwrap();
        let mut rng = crate::test_rng::Xorshift64(7);
        for step in 0..3_000u64 {
            if step % 200 == 199 {
                clock.advance(Duration::from_millis(70));
            }
            let v = 1_000 + rng.next_u64() % 5_000_000;
            preset.record_u64(v);
            plain.record_u64(v);
            other.record_u64(v);
            default.record_u64(v);
            if step % 97 == 0 {
                preset.maintain();
                plain.maintain();
                other.maintain();
                default.maintain();
                for i in 0..2 {
                    assert_eq!(
                        preset.cached_upper_bound_of(i),
                        plain.cached_upper_bound_of(i)
                    );
                    assert_eq!(
                        other.cached_upper_bound_of(i),
                        default.cached_upper_bound_of(i)
                    );
                }
                assert_eq!(
                    (preset.count(), preset.rotations()),
                    (plain.count(), plain.rotations())
                );
                assert_eq!(
                    (other.count(), other.rotations()),
                    (default.count(), default.rotations())
                );
            }
        }
        assert!(preset.rotations() > 5 && preset.cached_upper_bound_of(1).is_some());
        assert!(other.cached_upper_bound().is_some());
    }
}
