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
pub type LogLatencyWindow<C, const SLOTS: usize = 3> =
    Window<C, LogMapping, LOG_LATENCY_BINS, SLOTS>;

/// A window of [`CubicLatency`](crate::sketch::presets::CubicLatency) sketches (cubic,
/// 1 %, 1 µs .. 100 s), driven by clock `C`; its layout is
/// [`CUBIC_LATENCY_LAYOUT`](crate::sketch::presets::CUBIC_LATENCY_LAYOUT).
pub type CubicLatencyWindow<C, const SLOTS: usize = 3> =
    Window<C, CubicMapping, CUBIC_LATENCY_BINS, SLOTS>;

/// A window of [`IntLatency`](crate::sketch::presets::IntLatency) sketches (integer,
/// k = 6, 1 µs .. 100 s), driven by clock `C`; its layout is
/// [`INT_LATENCY_LAYOUT`](crate::sketch::presets::INT_LATENCY_LAYOUT).
pub type IntLatencyWindow<C, const SLOTS: usize = 3> =
    Window<C, IntMapping, INT_LATENCY_BINS, SLOTS>;

/// A window of [`IntLatencyCoarse`](crate::sketch::presets::IntLatencyCoarse) sketches
/// (integer, k = 5, 1 µs .. 100 s), driven by clock `C`; its layout is
/// [`INT_LATENCY_COARSE_LAYOUT`](crate::sketch::presets::INT_LATENCY_COARSE_LAYOUT).
/// (The example of [`Window::with_origin`] makes a `static` one.)
pub type IntLatencyCoarseWindow<C, const SLOTS: usize = 3> =
    Window<C, IntMapping, INT_LATENCY_COARSE_BINS, SLOTS>;

/// A window of [`McuLatency`](crate::sketch::presets::McuLatency) sketches (integer,
/// k = 5, 100 µs .. 10 s, for microcontrollers), driven by clock `C`; its layout is
/// [`MCU_LATENCY_LAYOUT`](crate::sketch::presets::MCU_LATENCY_LAYOUT).
pub type McuLatencyWindow<C, const SLOTS: usize = 3> =
    Window<C, IntMapping, MCU_LATENCY_BINS, SLOTS>;

/// A window of [`OtelLatency`](crate::sketch::presets::OtelLatency) sketches
/// (OpenTelemetry's exponential mapping, scale 5, 1 µs .. 100 s), driven by clock `C`; its
/// layout is [`OTEL_LATENCY_LAYOUT`](crate::sketch::presets::OTEL_LATENCY_LAYOUT).
pub type OtelLatencyWindow<C, const SLOTS: usize = 3> =
    Window<C, OtelMapping, OTEL_LATENCY_BINS, SLOTS>;
