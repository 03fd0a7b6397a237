//! Emptying a window in place: [`Window::reset`], for a window in a `static` or in a C
//! caller's storage, set up again at run time without a window-sized value on the stack.

use crate::clock::coarse::AtomicCoarseInstant;
use crate::clock::Clock;
use crate::sketch::IndexMapping;
use crate::sync::{AtomicBool, AtomicU32};

use super::cache::NO_QUANTILE;
use super::seqlock::SeqLock;
use super::{Parts, Window, WindowConfig, WindowError};

impl<C: Clock, M: IndexMapping, const N: usize, const SLOTS: usize> Window<C, M, N, SLOTS> {
    /// Makes this window what [`with_layout`](Window::with_layout) (or [`new`](Self::new))
    /// would build with `clock` and `config` and this window's layout: empty, its first
    /// interval starting now, its counters at zero. In place: nothing window-sized is
    /// built on the stack, so a window in a `static` (or in storage a C caller provides)
    /// can be set up at run time on a core with a small stack.
    ///
    /// The configuration is checked first: on an error the window is unchanged (and
    /// `clock` is dropped).
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::clock::ManualClock;
    /// use tailguard::sketch::presets;
    /// use tailguard::window::{McuLatencyWindow, Window, WindowConfig};
    ///
    /// let clock = ManualClock::new();
    /// let mut window: McuLatencyWindow<_> =
    ///     Window::with_layout(&clock, presets::MCU_LATENCY_LAYOUT, WindowConfig::new()).unwrap();
    /// window.record_u64(2_000_000);
    ///
    /// let config = WindowConfig::new().with_interval(Duration::from_secs(5));
    /// window.reset(&clock, config).unwrap();
    /// assert_eq!(window.count(), 0);
    /// assert_eq!(window.config().interval(), Duration::from_secs(5));
    /// assert!(window.reset(&clock, config.with_quantile(1.5)).is_err());
    /// assert_eq!(window.config().interval(), Duration::from_secs(5)); // unchanged
    /// ```
    pub fn reset(&mut self, clock: C, config: WindowConfig) -> Result<(), WindowError> {
        let origin = clock.now();
        let parts = Parts::new(config, origin)?;
        self.reset_from_parts(clock, config, parts);
        Ok(())
    }

    /// [`from_parts`](Self::from_parts) in place, the layout kept: every field but the
    /// slots' layouts is written (the destructuring names each, so none is forgotten),
    /// and the slots are emptied where they are.
    pub(crate) fn reset_from_parts(&mut self, clock: C, config: WindowConfig, parts: Parts) {
        let Window {
            clock: self_clock,
            intervals,
            refresh_clock,
            config: self_config,
            refresh_mask,
            refresh_ticks,
            epoch,
            current_slot,
            generation,
            rotating,
            refresh_state,
            refreshed_at,
            quantiles,
            quantile_count,
            cached_bin,
            cached_bounds,
            cached_count,
            expired,
            saturated,
            rotations,
            slots,
        } = self;
        *self_clock = clock;
        *intervals = parts.intervals;
        *refresh_clock = parts.refresh_clock;
        *self_config = config;
        *refresh_mask = parts.refresh_mask;
        *refresh_ticks = parts.refresh_ticks;
        *epoch = AtomicCoarseInstant::at_origin();
        *current_slot = AtomicU32::new(0);
        *generation = SeqLock::new();
        *rotating = AtomicBool::new(false);
        *refresh_state = AtomicU32::new(0);
        *refreshed_at = AtomicCoarseInstant::never();
        *quantiles = parts.quantiles;
        *quantile_count = parts.quantile_count;
        *cached_bin = AtomicU32::new(NO_QUANTILE);
        *cached_bounds = [AtomicU32::new(0), AtomicU32::new(0)];
        *cached_count = AtomicU32::new(0);
        *expired = AtomicU32::new(0);
        *saturated = AtomicU32::new(0);
        *rotations = AtomicU32::new(0);
        for slot in slots.iter() {
            slot.clear();
        }
    }
}
