//! The window's rank queries: how many of its values are at or below a value, over all its
//! slots, from one scan that no rotation overlapped (the seqlock's reader side, as the
//! refresh of the cached quantile reads it). The rule and its guarantee are the sketches'
//! ([`DDSketch::rank`](crate::sketch::DDSketch::rank)).

use core::time::Duration;

use crate::clock::{duration_to_nanos, Clock};
use crate::sketch::cdf::{fraction, Cut, Ends};
use crate::sketch::rank::{Occupied, RankBin, RankedBins};
use crate::sketch::{AtomicSketch, IndexMapping, InvalidValue};

use super::cache::SCAN_ATTEMPTS;
use super::Window;

impl<C: Clock, M: IndexMapping, const N: usize, const SLOTS: usize> Window<C, M, N, SLOTS> {
    /// The number of values in the window at or below `v`, computed now: the rule and
    /// guarantee of [`DDSketch::rank`](crate::sketch::DDSketch::rank) over every slot, with
    /// the ends of [`AtomicSketch::rank`] (min and max to a part per million). NaN is an
    /// error; a value below zero ranks 0, `+inf` the count.
    ///
    /// Brings the window up to date first, as [`quantile`](Self::quantile) does, then
    /// scans the occupied bins once, in a scan that no rotation overlapped (retried a few
    /// times if rotations keep coming). Records racing the scan may or may not be counted.
    ///
    /// ```
    /// use tailguard::clock::ManualClock;
    /// use tailguard::sketch::presets;
    /// use tailguard::window::{Window, WindowConfig};
    ///
    /// let clock = ManualClock::new();
    /// let config = WindowConfig::new();
    /// let window = Window::with_layout(&clock, presets::CUBIC_LATENCY_LAYOUT, config).unwrap();
    /// for ns in [2e6, 4e6, 8e6, 16e6] {
    ///     window.record(ns).unwrap();
    /// }
    /// assert_eq!(window.rank(10e6), Ok(3));
    /// assert_eq!(window.rank(f64::INFINITY), Ok(4));
    /// ```
    pub fn rank(&self, v: f64) -> Result<u64, InvalidValue> {
        let cut = Cut::of_f64(&self.slot(0).layout(), v)?;
        Ok(self.scan_rank(cut, |slot| slot.ends_f64(v)).0)
    }

    /// [`rank`](Self::rank) of an integer value (nanoseconds, say), which never fails.
    /// With [`IntMapping`](crate::sketch::IntMapping) it uses integer operations only, as
    /// [`record_u64`](Self::record_u64) and the refresh of the cached quantile do
    /// (`.ci/check-int-path.sh` checks it on the Cortex-M0 and Cortex-M4F images). The same
    /// answer as `rank(v as f64)` below 2^53.
    ///
    /// ```
    /// use tailguard::clock::ManualClock;
    /// use tailguard::sketch::presets;
    /// use tailguard::window::{McuLatencyWindow, Window, WindowConfig};
    ///
    /// let clock = ManualClock::new();
    /// let config = WindowConfig::new();
    /// let window: McuLatencyWindow<_> =
    ///     Window::with_layout(&clock, presets::MCU_LATENCY_LAYOUT, config).unwrap();
    /// for ns in [150_000, 900_000, 2_500_000] {
    ///     window.record_u64(ns);
    /// }
    /// assert_eq!(window.rank_u64(1_000_000), 2); // integer operations only
    /// ```
    pub fn rank_u64(&self, v: u64) -> u64 {
        self.rank_and_count_u64(v).0
    }

    /// [`rank_u64`](Self::rank_u64) of a duration as whole nanoseconds (saturating at
    /// `u64::MAX`), as [`record_duration`](Self::record_duration) records it.
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::clock::ManualClock;
    /// use tailguard::sketch::presets;
    /// use tailguard::window::{Window, WindowConfig};
    ///
    /// let clock = ManualClock::new();
    /// let config = WindowConfig::new();
    /// let window = Window::with_layout(&clock, presets::INT_LATENCY_LAYOUT, config).unwrap();
    /// for ms in [30, 70, 120] {
    ///     window.record_duration(Duration::from_millis(ms));
    /// }
    /// assert_eq!(window.rank_duration(Duration::from_millis(100)), 2);
    /// ```
    pub fn rank_duration(&self, d: Duration) -> u64 {
        self.rank_u64(duration_to_nanos(d))
    }

    /// The share of the window's values at or below `v`: [`rank`](Self::rank) over the
    /// count, both from the same scan; `None` if the window is empty. NaN is an error.
    ///
    /// ```
    /// use tailguard::clock::ManualClock;
    /// use tailguard::sketch::presets;
    /// use tailguard::window::{Window, WindowConfig};
    ///
    /// let clock = ManualClock::new();
    /// let config = WindowConfig::new();
    /// let window = Window::with_layout(&clock, presets::LOG_LATENCY_LAYOUT, config).unwrap();
    /// assert_eq!(window.fraction_at_or_below(100e6), Ok(None));
    /// for ms in [20, 35, 40, 60, 80, 90, 95, 120, 150, 250] {
    ///     window.record(ms as f64 * 1e6).unwrap();
    /// }
    /// // A latency-band SLO, "90 % of requests within 100 ms": here 70 %.
    /// assert_eq!(window.fraction_at_or_below(100e6), Ok(Some(0.7)));
    /// ```
    pub fn fraction_at_or_below(&self, v: f64) -> Result<Option<f64>, InvalidValue> {
        let cut = Cut::of_f64(&self.slot(0).layout(), v)?;
        let (rank, count) = self.scan_rank(cut, |slot| slot.ends_f64(v));
        Ok(fraction(rank, count))
    }

    /// [`fraction_at_or_below`](Self::fraction_at_or_below) of a duration, through
    /// [`rank_duration`](Self::rank_duration); `None` if the window is empty.
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::clock::ManualClock;
    /// use tailguard::sketch::presets;
    /// use tailguard::window::{Window, WindowConfig};
    ///
    /// let clock = ManualClock::new();
    /// let config = WindowConfig::new();
    /// let window = Window::with_layout(&clock, presets::CUBIC_LATENCY_LAYOUT, config).unwrap();
    /// for ms in [20, 35, 40, 60, 80, 90, 95, 120, 150, 250] {
    ///     window.record_duration(Duration::from_millis(ms));
    /// }
    /// // The share of the last minute's requests answered within 100 ms.
    /// let within = window.fraction_at_or_below_duration(Duration::from_millis(100));
    /// assert_eq!(within, Some(0.7));
    /// ```
    pub fn fraction_at_or_below_duration(&self, d: Duration) -> Option<f64> {
        let (rank, count) = self.rank_and_count_u64(duration_to_nanos(d));
        fraction(rank, count)
    }

    /// [`rank_u64`](Self::rank_u64) and the window's count, from the same scan, so that
    /// their ratio is the share of one set of values. Integer operations only with
    /// [`IntMapping`](crate::sketch::IntMapping).
    pub(crate) fn rank_and_count_u64(&self, v: u64) -> (u64, u64) {
        let cut = Cut::of_u64(&self.slot(0).layout(), v);
        self.scan_rank(cut, |slot| slot.ends_u64(v))
    }

    /// The values `cut` counts over every slot, within the slots' ends, and all the values,
    /// after maintenance, from one scan of the occupied bins that no rotation overlapped;
    /// if rotations keep spoiling it, the last scan as it is (as [`quantile`](Self::quantile)).
    fn scan_rank(&self, cut: Cut, ends: impl Fn(&AtomicSketch<M, N>) -> Ends) -> (u64, u64) {
        self.maintain();
        // The ends are read inside the scan too: a rotation clears a slot's min and max
        // with its bins.
        let scan = || {
            let ends = self.slots.iter().map(&ends).fold(Ends::EMPTY, Ends::and);
            Occupied::new(self.slots.as_slice()).rank_and_count(cut.within(ends))
        };
        self.without_rotation(scan)
    }

    /// The upper edge (a whole number; 0 for the zero bin) of the first bin, the zero bin
    /// first, whose cumulative count exceeds `rank`, from one scan that no rotation
    /// overlapped; `None` if the window is empty or holds `rank` values or fewer.
    /// Integer operations only with [`IntMapping`](crate::sketch::IntMapping). Does not
    /// maintain the window: its caller has just done so.
    pub(crate) fn first_upper_bound_above(&self, rank: u64) -> Option<u64> {
        let scan = || {
            let bins = Occupied::new(self.slots.as_slice());
            if bins.count() == 0 {
                return None;
            }
            Some(match bins.first_where(|cumulative| cumulative > rank)? {
                RankBin::Zero => 0,
                RankBin::At(pos) => self.slot(0).layout().upper_bound_at(pos),
            })
        };
        self.without_rotation(scan)
    }

    /// `scan` run where no rotation overlapped it (see
    /// [`SeqLock::read_stable`](crate::window::seqlock::SeqLock::read_stable)).
    fn without_rotation<R>(&self, scan: impl Fn() -> R) -> R {
        self.generation.read_stable(SCAN_ATTEMPTS, scan)
    }
}
