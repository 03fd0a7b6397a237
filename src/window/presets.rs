//! The windows of the [sketch presets](crate::sketch::presets), named, so that a window of
//! a preset (a `static` one, say) spells no bin count. Build one with
//! [`Window::with_layout`] (or [`Window::with_origin`] for a `static`) and the preset's
//! layout constant, `presets::*_LAYOUT`. Each takes the clock type and, optionally, the
//! number of slots (three by default).

use super::Window;
use crate::sketch::presets::{
    CUBIC_LATENCY_BINS, INT_LATENCY_BINS, INT_LATENCY_COARSE_BINS, LOG_LATENCY_BINS,
    MCU_LATENCY_BINS, OTEL_LATENCY_BINS,
};
use crate::sketch::{CubicMapping, IntMapping, LogMapping, OtelMapping};

/// A window of [`LogLatency`](crate::sketch::presets::LogLatency) sketches (logarithmic,
/// 1 %, 1 µs .. 100 s), driven by clock `C`; its layout is
/// [`LOG_LATENCY_LAYOUT`](crate::sketch::presets::LOG_LATENCY_LAYOUT).
///
/// ```
/// use core::time::Duration;
/// use tailguard::clock::ManualClock;
/// use tailguard::sketch::presets;
/// use tailguard::window::{LogLatencyWindow, Window, WindowConfig};
///
/// let clock = ManualClock::new();
/// let window: LogLatencyWindow<_> =
///     Window::with_layout(&clock, presets::LOG_LATENCY_LAYOUT, WindowConfig::new()).unwrap();
/// for ms in 1..=100 {
///     window.record_duration(Duration::from_millis(ms));
/// }
/// let p90 = window.quantile(0.9).unwrap().unwrap();
/// assert!((p90 - 90e6).abs() <= 0.01 * 90e6);
/// ```
pub type LogLatencyWindow<C, const SLOTS: usize = 3> =
    Window<C, LogMapping, LOG_LATENCY_BINS, SLOTS>;

/// A window of [`CubicLatency`](crate::sketch::presets::CubicLatency) sketches (cubic,
/// 1 %, 1 µs .. 100 s), driven by clock `C`; its layout is
/// [`CUBIC_LATENCY_LAYOUT`](crate::sketch::presets::CUBIC_LATENCY_LAYOUT).
///
/// Four slots (the current interval and two before it), built with
/// [`Window::with_origin`] at the clock's current time:
///
/// ```
/// use core::time::Duration;
/// use tailguard::clock::{Clock, ManualClock};
/// use tailguard::sketch::presets;
/// use tailguard::window::{CubicLatencyWindow, Window, WindowConfig};
///
/// let clock = ManualClock::new();
/// let config = WindowConfig::new().with_interval(Duration::from_secs(10));
/// let window: CubicLatencyWindow<_, 4> =
///     Window::with_origin(&clock, presets::CUBIC_LATENCY_LAYOUT, config, clock.now()).unwrap();
/// window.record_duration(Duration::from_millis(5));
/// clock.advance(Duration::from_secs(20)); // two intervals later: still in the window
/// assert_eq!(window.count(), 1);
/// clock.advance(Duration::from_secs(10));
/// assert_eq!(window.count(), 0);
/// ```
pub type CubicLatencyWindow<C, const SLOTS: usize = 3> =
    Window<C, CubicMapping, CUBIC_LATENCY_BINS, SLOTS>;

/// A window of [`IntLatency`](crate::sketch::presets::IntLatency) sketches (integer,
/// k = 6, 1 µs .. 100 s), driven by clock `C`; its layout is
/// [`INT_LATENCY_LAYOUT`](crate::sketch::presets::INT_LATENCY_LAYOUT).
///
/// ```
/// use tailguard::clock::ManualClock;
/// use tailguard::sketch::presets;
/// use tailguard::window::{IntLatencyWindow, Window, WindowConfig};
///
/// let clock = ManualClock::new();
/// let window: IntLatencyWindow<_> =
///     Window::with_layout(&clock, presets::INT_LATENCY_LAYOUT, WindowConfig::new()).unwrap();
/// assert!((window.relative_accuracy() - 0.0078).abs() < 1e-4); // k = 6
/// window.record_u64(42_000); // 42 us
/// let p50 = window.quantile(0.5).unwrap().unwrap();
/// assert!((p50 - 42e3).abs() <= window.relative_accuracy() * 42e3);
/// ```
pub type IntLatencyWindow<C, const SLOTS: usize = 3> =
    Window<C, IntMapping, INT_LATENCY_BINS, SLOTS>;

/// A window of [`IntLatencyCoarse`](crate::sketch::presets::IntLatencyCoarse) sketches
/// (integer, k = 5, 1 µs .. 100 s), driven by clock `C`; its layout is
/// [`INT_LATENCY_COARSE_LAYOUT`](crate::sketch::presets::INT_LATENCY_COARSE_LAYOUT).
/// (The example of [`Window::with_origin`] makes a `static` one.)
///
/// ```
/// use tailguard::clock::ManualClock;
/// use tailguard::sketch::presets;
/// use tailguard::window::{IntLatencyCoarseWindow, IntLatencyWindow, Window, WindowConfig};
///
/// let clock = ManualClock::new();
/// let window: IntLatencyCoarseWindow<_> =
///     Window::with_layout(&clock, presets::INT_LATENCY_COARSE_LAYOUT, WindowConfig::new()).unwrap();
/// assert!((window.relative_accuracy() - 0.0156).abs() < 1e-4); // k = 5
/// // Half the bins of an `IntLatencyWindow`: under 60 % of its size.
/// assert!(size_of_val(&window) * 10 < size_of::<IntLatencyWindow<&ManualClock>>() * 6);
/// window.record_u64(7_000_000);
/// let p50 = window.quantile(0.5).unwrap().unwrap();
/// assert!((p50 - 7e6).abs() <= window.relative_accuracy() * 7e6);
/// ```
pub type IntLatencyCoarseWindow<C, const SLOTS: usize = 3> =
    Window<C, IntMapping, INT_LATENCY_COARSE_BINS, SLOTS>;

/// A window of [`McuLatency`](crate::sketch::presets::McuLatency) sketches (integer,
/// k = 5, 100 µs .. 10 s, for microcontrollers), driven by clock `C`; its layout is
/// [`MCU_LATENCY_LAYOUT`](crate::sketch::presets::MCU_LATENCY_LAYOUT).
///
/// ```
/// use tailguard::clock::ManualClock;
/// use tailguard::sketch::presets;
/// use tailguard::window::{McuLatencyWindow, Window, WindowConfig};
///
/// let clock = ManualClock::new();
/// let window: McuLatencyWindow<_> =
///     Window::with_layout(&clock, presets::MCU_LATENCY_LAYOUT, WindowConfig::new()).unwrap();
/// window.record_u64(2_000_000); // 2 ms
/// let p50 = window.quantile(0.5).unwrap().unwrap();
/// assert!((p50 - 2e6).abs() <= 0.0156 * 2e6);
/// window.record_u64(50_000); // 50 us: below the range, counted in the zero bin
/// window.record_u64(20_000);
/// assert_eq!(window.count(), 3);
/// // The median is in the zero bin: reported as the minimum, which is larger than 0.
/// assert_eq!(window.quantile(0.5), Ok(Some(20_000.0)));
/// ```
pub type McuLatencyWindow<C, const SLOTS: usize = 3> =
    Window<C, IntMapping, MCU_LATENCY_BINS, SLOTS>;

/// A window of [`OtelLatency`](crate::sketch::presets::OtelLatency) sketches
/// (OpenTelemetry's exponential mapping, scale 5, 1 µs .. 100 s), driven by clock `C`; its
/// layout is [`OTEL_LATENCY_LAYOUT`](crate::sketch::presets::OTEL_LATENCY_LAYOUT).
///
/// ```
/// use core::time::Duration;
/// use tailguard::clock::ManualClock;
/// use tailguard::sketch::presets;
/// use tailguard::window::{OtelLatencyWindow, Window, WindowConfig};
///
/// let clock = ManualClock::new();
/// let window: OtelLatencyWindow<_> =
///     Window::with_layout(&clock, presets::OTEL_LATENCY_LAYOUT, WindowConfig::new()).unwrap();
/// assert!((window.relative_accuracy() - 0.0108).abs() < 1e-4); // scale 5
/// window.record_duration(Duration::from_millis(250));
/// let p50 = window.quantile(0.5).unwrap().unwrap();
/// assert!((p50 - 250e6).abs() <= window.relative_accuracy() * 250e6);
/// ```
pub type OtelLatencyWindow<C, const SLOTS: usize = 3> =
    Window<C, OtelMapping, OTEL_LATENCY_BINS, SLOTS>;
