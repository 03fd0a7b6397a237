//! The cached quantile: records ask for a refresh, a maintenance scans the slots and
//! publishes one configured quantile in one word (and its bin's upper edge, encoded, in
//! another), and readers load those words. The protocol, and what a published quantile
//! is, are in the [module docs](super#the-cached-quantile).
//!
//! Three words carry it: `refresh_state`, a lock and a request in one word (so that a
//! request and an unlock cannot miss each other); `cached_bin`, the published bin or a
//! marker that a rotation stores before it clears anything; and the rotation's
//! [`SeqLock`](super::seqlock::SeqLock), whose reader side here tells a scan that
//! overlapped a clear.

use crate::clock::coarse::Age;
use crate::clock::{Clock, Instant};
use crate::sketch::rank::{rank_bin, Occupied, Quantile, RankBin};
use crate::sketch::IndexMapping;
use crate::sync::Ordering;

use super::{Window, MAX_CACHED_QUANTILES};

// The cached word `cached_bin` holds a published value below 2^31, or one of these markers
// (top bit set).

/// A cached word when there is no quantile.
pub(super) const NO_QUANTILE: u32 = u32::MAX;

/// A cached word while a rotation clears slots and until the next refresh: the rotation's
/// number (modulo 2^30) with the top bit set, so that a refresh whose scan began before it
/// cannot publish over it (its compare-and-swap expects the older word).
fn cleared_marker(generation: u32) -> u32 {
    0x8000_0000 | ((generation >> 1) & 0x3fff_ffff)
}

/// Whether a cached word holds a published value (not a marker).
#[inline]
fn is_published(word: u32) -> bool {
    word & 0x8000_0000 == 0
}

/// `cached_bin` when the cached quantile is in the zero bin (positions are below
/// `N < 2^31 - 1`).
const ZERO_BIN: u32 = 0x7fff_ffff;

/// `cached_bound`'s encoding of a whole number: a 26-bit significand and a 5-bit shift,
/// rounded up (so a bound stays at or above what it bounds: relative error below 2^-25),
/// saturating at `(2^26 - 1) << 31` (about 4.5 years in nanoseconds).
pub(super) fn encode_bound(x: u64) -> u32 {
    const MAX: u32 = 0x7fff_ffff;
    let width = 64u32.wrapping_sub(x.leading_zeros());
    if width <= 26 {
        return x as u32; // shift 0
    }
    let shift = width.wrapping_sub(26); // 1..=38
    let below = x & (1u64 << shift).wrapping_sub(1);
    // Below 2^26 + 1: the increment may carry into bit 26, then halve it.
    let mut significand = (x >> shift).wrapping_add(u64::from(below != 0));
    let mut shift = shift;
    if significand >> 26 != 0 {
        significand >>= 1;
        shift = shift.wrapping_add(1);
    }
    if shift > 31 {
        return MAX;
    }
    (shift << 26) | significand as u32
}

/// The whole number a published `cached_bound` word stands for (integer operations only).
#[inline]
pub(super) fn decode_bound(word: u32) -> u64 {
    u64::from(word & 0x03ff_ffff) << (word >> 26 & 31)
}

/// Scans one refresh may make before it gives up on a window that keeps rotating (and
/// leaves the refresh asked for, for the next record).
pub(super) const SCAN_ATTEMPTS: u32 = 4;

/// Rounds of refresh requests one refresher serves before it returns.
const REFRESH_ROUNDS: u32 = 4;

/// How a refresh ended.
enum Published {
    /// A fresh quantile was published.
    Yes,
    /// A rotation was clearing slots; it asks for a refresh when it is done.
    RotationUnderWay,
    /// Rotations spoiled every scan.
    GaveUp,
}

/// Why a scan of the slots was thrown away.
pub(super) enum Spoiled {
    /// A rotation was clearing slots when it began.
    RotationUnderWay,
    /// A rotation cleared slots while it ran.
    RotationDuringScan,
}

/// `refresh_state`: a caller is refreshing.
const REFRESH_LOCKED: u32 = 1;
/// `refresh_state`: a refresh was asked for and no scan has started since.
const REFRESH_WANTED: u32 = 2;

impl<C: Clock, M: IndexMapping, const N: usize, const SLOTS: usize> Window<C, M, N, SLOTS> {
    /// Asks for a refresh when this record calls for one. Never scans: the scan is done by
    /// the next [`maintain`](Self::maintain) (or query), so a record costs the same at
    /// every call.
    #[inline]
    pub(super) fn after_record(&self, previous: Option<u32>) {
        // The bin's new count is a power of two (1 included: so no bin more than doubles
        // between refreshes unasked, however many bins a shift spreads over; frequent
        // while a bin fills, rare once it is full) or a multiple of `refresh_records`.
        let by_count = self.refresh_mask != u32::MAX
            && previous.is_some_and(|p| {
                let n = p.wrapping_add(1);
                n & p == 0 || n & self.refresh_mask == 0
            });
        if by_count {
            self.ask_for_refresh();
        }
    }

    /// Leaves a refresh request for the next maintenance. Always a read-modify-write, even
    /// when a request is pending: the maintenance that takes the request (acquiring the
    /// word) then sees this caller's writes, its record or its clears; a load that saw a
    /// request pending would not order them (loom found a stale threshold published so).
    #[inline]
    pub(super) fn ask_for_refresh(&self) {
        self.refresh_state
            .fetch_or(REFRESH_WANTED, Ordering::Release);
    }

    /// Withdraws the cached quantile (and its bound) before rotation number `generation`
    /// (odd) clears anything: from here until the next refresh it reads `None`, and a
    /// refresh whose scan began before cannot publish over the marker (release: a refresh
    /// that reads the marker sees the odd generation).
    #[inline]
    pub(super) fn withdraw_cached(&self, generation: u32) {
        self.cached_bin
            .store(cleared_marker(generation), Ordering::Release);
    }

    /// Whether `refresh_interval` has passed since the last refresh (or the clock went back
    /// by as much, or the last refresh is beyond the refresh clock's horizon).
    #[inline]
    fn refresh_due(&self, now: Instant) -> bool {
        if self.refresh_ticks == 0 {
            return false;
        }
        let reading = self.refresh_clock.at(now);
        match self.refreshed_at.age(&self.refresh_clock, reading) {
            Age::Ticks(d) => d.unsigned_abs() >= self.refresh_ticks,
            Age::Never | Age::LongAgo | Age::FarAhead => true,
        }
    }

    /// Brings the window up to the clock's current interval and, if a record or a
    /// rotation asked for it or `refresh_interval` has passed since the last refresh,
    /// refreshes the cached quantile. Cheap when there is nothing to do (a clock reading
    /// and a few loads); otherwise it scans the occupied bins. Queries do it themselves,
    /// and so do [`Hedger::start`](crate::hedge::Hedger::start) and
    /// [`Hedger::delay`](crate::hedge::Hedger::delay); a window read only through
    /// [`cached_quantile`](Self::cached_quantile) needs it called (from thread mode, say)
    /// for the cached quantile to follow the records: see the [module docs](super).
    ///
    /// ```
    /// use tailguard::clock::ManualClock;
    /// use tailguard::sketch::presets;
    /// use tailguard::window::{Window, WindowConfig};
    ///
    /// let clock = ManualClock::new();
    /// let config = WindowConfig::new();
    /// let window = Window::with_layout(&clock, presets::INT_LATENCY_LAYOUT, config).unwrap();
    /// window.record_u64(2_000_000); // O(1): scans nothing
    /// assert_eq!(window.cached_quantile(), None);
    /// window.maintain(); // the scan
    /// assert!(window.cached_quantile().is_some());
    /// ```
    pub fn maintain(&self) {
        self.maintain_at(self.clock.now());
    }

    /// [`maintain`](Self::maintain) at `now`, just read from the window's clock.
    #[inline]
    pub(crate) fn maintain_at(&self, now: Instant) {
        let _ = self.slot_at(now, true);
        // While warming up every maintenance refreshes (records ask only at their bin's
        // powers of two: asking at every record would be a write per record).
        if self.refresh_state.load(Ordering::Relaxed) & REFRESH_WANTED != 0
            || self.cached_count.load(Ordering::Relaxed) < self.config.warmup_records
            || self.refresh_due(now)
        {
            self.refresh_at(now);
        }
    }

    /// Recomputes the cached quantile now (or, if another caller is refreshing, makes
    /// sure that one scans again before it returns).
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::clock::ManualClock;
    /// use tailguard::sketch::presets;
    /// use tailguard::window::{Window, WindowConfig};
    ///
    /// let clock = ManualClock::new();
    /// // Past warm-up at once, and no refresh by time.
    /// let config = WindowConfig::new()
    ///     .with_warmup_records(0)
    ///     .with_refresh_interval(Duration::ZERO);
    /// let window = Window::with_layout(&clock, presets::INT_LATENCY_LAYOUT, config).unwrap();
    /// window.record_u64(1_000_000); // its bin's count, 1, is a power of two: asks
    /// window.maintain();
    /// window.record_u64(1_000_000); // 2 asks too
    /// window.maintain();
    /// window.record_u64(1_000_000); // 3 does not
    /// window.maintain(); // nothing to do
    /// assert_eq!(window.cached_count(), 2);
    /// window.refresh(); // rescans, asked or not
    /// assert_eq!(window.cached_count(), 3);
    /// ```
    pub fn refresh(&self) {
        self.refresh_at(self.clock.now());
    }

    /// Asks for a refresh and does it, unless another caller is refreshing: then that one
    /// sees the request when it unlocks and scans again. The lock and the request share
    /// one atomic word, so a request and an unlock cannot miss each other.
    fn refresh_at(&self, now: Instant) {
        let mut state = self
            .refresh_state
            .fetch_or(REFRESH_WANTED, Ordering::AcqRel)
            | REFRESH_WANTED;
        for _ in 0..REFRESH_ROUNDS {
            if state & REFRESH_LOCKED != 0 {
                return; // the refresher under way serves the request before it returns
            }
            // Take the lock and the request at once: requests from here on want a scan that
            // starts after them (acquire: the records of a request taken here are visible).
            if let Err(actual) = self.refresh_state.compare_exchange(
                state,
                REFRESH_LOCKED,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                state = actual;
                continue;
            }
            match self.publish_fresh_quantile(now) {
                Published::Yes => {}
                // It asks for a refresh when it is done: served below if that comes while
                // the lock is still held, else by the rotating caller itself. Waiting here
                // could spin forever in an interrupt handler that preempted the rotation.
                Published::RotationUnderWay => {}
                // Rotations kept spoiling the scan: leave the request for a later record.
                Published::GaveUp => {
                    self.refresh_state
                        .fetch_or(REFRESH_WANTED, Ordering::AcqRel);
                }
            }
            state = self
                .refresh_state
                .fetch_and(!REFRESH_LOCKED, Ordering::AcqRel)
                & !REFRESH_LOCKED;
            if state & REFRESH_WANTED == 0 {
                return;
            }
        }
    }

    /// Scans and publishes the cached quantiles, again if a rotation overlapped the scan or
    /// came before the publication.
    fn publish_fresh_quantile(&self, now: Instant) -> Published {
        for _ in 0..SCAN_ATTEMPTS {
            let (seen, bins, count) = match self.consistent_refresh_scan() {
                Ok(scan) => scan,
                Err(Spoiled::RotationUnderWay) => return Published::RotationUnderWay,
                Err(Spoiled::RotationDuringScan) => continue,
            };
            let trusted = count >= u64::from(self.config.min_count.max(1));
            // Integer operations only with an integer mapping (the bound is its exact
            // edge): a refresh links no soft-float helper on a core without an FPU.
            // Only a scan that publishes stores bounds: a reader that loaded the published
            // word before a rotation withdrew it may load a bound after that, and must
            // not get one of a scan that publishes nothing (a 0 would read as
            // `Some(0)`, a hedge at once).
            if trusted {
                for (bin, bound) in bins.iter().zip(&self.cached_bounds) {
                    let edge = match bin {
                        Some(RankBin::At(pos)) => self.slot(0).layout().upper_bound_at(*pos),
                        _ => 0,
                    };
                    bound.store(encode_bound(edge), Ordering::Relaxed);
                }
            }
            let bin_word = match bins[0] {
                Some(RankBin::Zero) if trusted => ZERO_BIN,
                Some(RankBin::At(pos)) if trusted => pos as u32, // pos < N < 2^31 - 1
                _ => NO_QUANTILE,
            };
            // Only refreshers (one at a time) and rotations write the word, and a rotation
            // always changes it: the swap fails exactly when one came since the scan began.
            // (The release orders the bounds stored above before it.)
            if self
                .cached_bin
                .compare_exchange(seen, bin_word, Ordering::Release, Ordering::Relaxed)
                .is_ok()
            {
                self.cached_count
                    .store(u32::try_from(count).unwrap_or(u32::MAX), Ordering::Relaxed);
                self.refreshed_at.store_now(self.refresh_clock.at(now));
                return Published::Yes;
            }
        }
        Published::GaveUp
    }

    /// The bins of the configured quantiles (`None` past `quantile_count`) and the count,
    /// from one scan of the slots that no rotation overlapped, with the cached word as it
    /// was when the scan began.
    #[allow(clippy::type_complexity)]
    fn consistent_refresh_scan(
        &self,
    ) -> Result<(u32, [Option<RankBin>; MAX_CACHED_QUANTILES], u64), Spoiled> {
        let Some(before) = self.generation.optimistic_read() else {
            return Err(Spoiled::RotationUnderWay);
        };
        let seen = self.cached_bin.load(Ordering::Acquire);
        let occupied = Occupied::new(self.slots.as_slice());
        let mut bins = [None; MAX_CACHED_QUANTILES];
        let mut count = 0;
        let configured = usize::from(self.quantile_count);
        for (i, (bin, q)) in bins.iter_mut().zip(self.quantiles).enumerate() {
            if i < configured {
                (*bin, count) = rank_bin(&occupied, q);
            }
        }
        if self.generation.validate_read(before) {
            Ok((seen, bins, count))
        } else {
            Err(Spoiled::RotationDuringScan)
        }
    }

    /// The bin of quantile `q` and the count of one scan of the slots that no rotation
    /// overlapped (the seqlock's reader side), with the cached word as it was when the scan
    /// began.
    pub(super) fn consistent_scan(
        &self,
        q: Quantile,
    ) -> Result<(u32, Option<RankBin>, u64), Spoiled> {
        let Some(before) = self.generation.optimistic_read() else {
            return Err(Spoiled::RotationUnderWay);
        };
        let seen = self.cached_bin.load(Ordering::Acquire);
        let (bin, count) = rank_bin(&Occupied::new(self.slots.as_slice()), q);
        if self.generation.validate_read(before) {
            Ok((seen, bin, count))
        } else {
            Err(Spoiled::RotationDuringScan)
        }
    }

    /// The configured quantile (p90 by default) as last cached, or `None` while the window
    /// holds fewer than `min_count` values (as of the last refresh). One atomic load and
    /// the bin's representative value (computed in `f64`, rounded to `f32`: relative
    /// precision 6e-8 within `f32`'s normal range, about 1.2e-38 to 3.4e38, which holds any
    /// latency in nanoseconds; beyond it the value is `f32`'s: infinite above, less precise
    /// or zero below, and [`quantile`](Self::quantile) gives the `f64`); see the [module docs](super) for when it is refreshed and what it
    /// is. For a hot path, and for cores without a double-precision FPU, read
    /// [`cached_upper_bound`](Self::cached_upper_bound) instead: integers only.
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::clock::ManualClock;
    /// use tailguard::sketch::presets;
    /// use tailguard::window::{Window, WindowConfig};
    ///
    /// let clock = ManualClock::new();
    /// let config = WindowConfig::new().with_interval(Duration::from_secs(10));
    /// let window = Window::with_layout(&clock, presets::CUBIC_LATENCY_LAYOUT, config).unwrap();
    /// assert_eq!(window.cached_quantile(), None); // empty
    /// for ms in 1..=100 {
    ///     window.record_duration(Duration::from_millis(ms));
    /// }
    /// window.maintain();
    /// let p90 = window.cached_quantile().unwrap(); // nanoseconds
    /// assert!((p90 - 90e6).abs() <= 0.01 * 90e6);
    /// clock.advance(Duration::from_secs(30)); // all expired
    /// window.maintain();
    /// assert_eq!(window.cached_quantile(), None);
    /// ```
    #[inline]
    pub fn cached_quantile(&self) -> Option<f64> {
        let word = self.cached_bin.load(Ordering::Relaxed);
        if !is_published(word) {
            return None;
        }
        Some(if word == ZERO_BIN {
            0.0
        } else {
            // `as f32` keeps the value what it was when the cache held f32 bits.
            f64::from(self.slot(0).layout().value_at(word as usize) as f32)
        })
    }

    /// The upper edge of the cached quantile's bin as a whole number (nanoseconds, for
    /// latencies): at or above every value of that bin ([`IndexMapping::upper_bound_u64`],
    /// kept to 26 significant bits, rounded up, and capped at `(2^26 - 1) * 2^31`, about 4.5
    /// years in nanoseconds), 0 for the zero bin; `None` exactly when
    /// [`cached_quantile`](Self::cached_quantile) is. From the same refresh, or, while a
    /// refresher is publishing, from its scan (as consistent, and newer). Two atomic loads
    /// and a shift, integer operations only: the [`Hedger`](crate::hedge::Hedger) waits
    /// this long before it hedges.
    ///
    /// ```
    /// use tailguard::clock::ManualClock;
    /// use tailguard::sketch::presets;
    /// use tailguard::window::{Window, WindowConfig};
    ///
    /// let clock = ManualClock::new();
    /// let config = WindowConfig::new();
    /// let window = Window::with_layout(&clock, presets::INT_LATENCY_LAYOUT, config).unwrap();
    /// window.record_u64(2_000_000);
    /// window.maintain();
    /// let bound = window.cached_upper_bound().unwrap();
    /// assert!(bound >= 2_000_000 && bound <= 2_020_000);
    /// ```
    #[inline]
    pub fn cached_upper_bound(&self) -> Option<u64> {
        // The first quantile is always configured: no count to check (the hot path).
        // Acquire: the bounds stored before this word was published are visible.
        let bin = self.cached_bin.load(Ordering::Acquire);
        is_published(bin).then(|| decode_bound(self.cached_bounds[0].load(Ordering::Relaxed)))
    }

    /// [`cached_upper_bound`](Self::cached_upper_bound) of the `i`-th configured quantile
    /// ([`WindowConfig::with_quantiles`](super::WindowConfig::with_quantiles); 0 is the
    /// first), from the same refresh; `None` when `cached_upper_bound` is, or when fewer
    /// than `i + 1` quantiles are configured. The bounds of one refresh rise with their
    /// quantiles. Two atomic loads and a shift, integer operations only: a
    /// [`Hedger`](crate::hedge::Hedger) with a percentile per hedge waits this long before
    /// hedge `i + 1`.
    ///
    /// ```
    /// use tailguard::clock::ManualClock;
    /// use tailguard::sketch::presets;
    /// use tailguard::window::{Window, WindowConfig};
    ///
    /// let clock = ManualClock::new();
    /// let config = WindowConfig::new().with_quantiles(&[0.5, 0.99]);
    /// let window = Window::with_layout(&clock, presets::INT_LATENCY_LAYOUT, config).unwrap();
    /// for ms in 1..=100 {
    ///     window.record_u64(ms * 1_000_000);
    /// }
    /// window.maintain();
    /// assert_eq!(window.cached_upper_bound_of(0), window.cached_upper_bound());
    /// assert!(window.cached_upper_bound_of(1).unwrap() >= 99_000_000);
    /// assert_eq!(window.cached_upper_bound_of(2), None);
    /// ```
    #[inline]
    pub fn cached_upper_bound_of(&self, i: usize) -> Option<u64> {
        if i >= usize::from(self.quantile_count) {
            return None;
        }
        let bound = self.cached_bounds.get(i)?;
        // Acquire: the bounds stored before this word was published are visible.
        let bin = self.cached_bin.load(Ordering::Acquire);
        is_published(bin).then(|| decode_bound(bound.load(Ordering::Relaxed)))
    }

    /// How many values the window held at the last refresh of the cached quantile
    /// (saturating at `u32::MAX`), counted by the same scan. One atomic load.
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::clock::ManualClock;
    /// use tailguard::sketch::presets;
    /// use tailguard::window::{Window, WindowConfig};
    ///
    /// let clock = ManualClock::new();
    /// let config = WindowConfig::new().with_warmup_records(0).with_refresh_records(0);
    /// let window = Window::with_layout(&clock, presets::INT_LATENCY_LAYOUT, config).unwrap();
    /// assert_eq!(window.cached_count(), 0);
    /// for _ in 0..5 {
    ///     window.record_u64(1_000_000);
    /// }
    /// window.refresh();
    /// window.record_u64(1_000_000);
    /// // The count of the last refresh, not the window's.
    /// assert_eq!((window.cached_count(), window.count()), (5, 6));
    /// clock.advance(Duration::from_secs(1)); // a refresh by time is due
    /// window.maintain();
    /// assert_eq!(window.cached_count(), 6);
    /// ```
    #[inline]
    pub fn cached_count(&self) -> u32 {
        self.cached_count.load(Ordering::Relaxed)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// The encoded bound is at or above the number, within 2^-25 of it, exact below 2^26,
    /// and saturates instead of wrapping.
    #[test]
    fn an_encoded_bound_rounds_up_and_saturates() {
        for x in [
            0,
            1,
            (1 << 26) - 1,
            1 << 26,
            (1 << 26) + 1,
            1 << 40,
            (1 << 41) - 1,
        ] {
            let back = decode_bound(encode_bound(x));
            assert!(back >= x && back - x <= x >> 25, "{x} -> {back}");
        }
        assert_eq!(decode_bound(encode_bound(12_345)), 12_345);
        let max = ((1u64 << 26) - 1) << 31;
        assert_eq!(decode_bound(encode_bound(max)), max);
        assert_eq!(decode_bound(encode_bound(u64::MAX)), max);
        assert!(!is_published(cleared_marker(u32::MAX)) && !is_published(NO_QUANTILE));
        assert!(is_published(ZERO_BIN));
    }
}
