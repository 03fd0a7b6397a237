//! Ready-made sketch configurations for latencies in nanoseconds, 1 µs to 100 s.
//!
//! Each preset is a type alias with its bin count and a constructor. Values from 1 µs
//! (1,000 ns) to 100 s (10^11 ns) are tracked within the stated relative accuracy;
//! outside that range see the [sketch docs](super#range).
//!
//! | preset | mapping | alpha | bins | `size_of` (x86-64) |
//! |---|---|---|---|---|
//! | [`LogLatency`] | logarithmic | 1 % | 922 | 3,864 bytes |
//! | [`CubicLatency`] | cubic | 1 % | 931 | 3,912 bytes |
//! | [`IntLatency`] | integer, k = 6 | 0.78 % | 1,698 | 6,952 bytes |
//! | [`IntLatencyCoarse`] | integer, k = 5 | 1.56 % | 849 | 3,560 bytes |
//! | [`OtelLatency`] | OpenTelemetry, scale 5 | 1.08 % | 852 | 3,560 bytes |
//! | [`McuLatency`] | integer, k = 5, **100 µs .. 10 s** | 1.56 % | 534 | 2,296 bytes |
//!
//! The sizes are asserted by a test, so they cannot grow silently.
//!
//! # Auto-scaling
//!
//! [`OtelAuto`] and [`McuAuto`] need no range: [`ExponentialSketch`]es that start at
//! scale 8 and downscale as the values spread, as the OpenTelemetry SDKs do. `OtelAuto` is
//! the SDKs' default size (160 buckets), `u32` counters, 768 bytes on x86-64: about 1.1 %
//! (scale 5) over a factor under 2^5, 4.3 % (scale 3) under 2^20 (a microsecond to half a
//! second). Those are the most a scale's 160 buckets reach where the values fall best
//! across their edges: a bucket is upper-inclusive, so a factor of exactly 2^5 (or 2^20)
//! needs 161 and takes the next scale down; wherever they fall, a factor up to 2^(159/32),
//! about 31 (2^(159/8), about 960,000), fits.
//! `McuAuto` is 64 buckets of `u16` counters, 256 bytes on x86-64, for a microcontroller.
//!
//! ```
//! use tailguard::sketch::presets;
//! let mut s = presets::OtelAuto::new();
//! (1..=500_000u64).step_by(7).for_each(|us| s.record_u64(us * 1_000));
//! assert_eq!(s.scale(), 3); // 1 µs to 0.5 s: 19 powers of two, 8 buckets each
//!
//! let mut s = presets::OtelAuto::new();
//! s.record_u64(1 << 20);
//! s.record_u64(1 << 25); // a factor of exactly 2^5: 161 buckets at scale 5
//! assert_eq!(s.scale(), 4);
//! ```
//!
//! # Microcontrollers
//!
//! [`McuLatency`] is sized for device-side latencies (a sensor read, a flash write, a
//! radio round trip: 100 µs to 10 s) on a small part: its atomic form
//! ([`AtomicSketch`]) takes 2,180 bytes on x86-64 (4 per bin plus
//! the zero bin, counters and layout), a [`Window`](crate::window::Window) of three of
//! them 6,784, and [`McuHedger`](crate::hedge::McuHedger) (that window, a ratio budget
//! and the policy's state) 7,208 on x86-64 (with a `&ManualClock`) and 7,200 on a
//! Cortex-M0 or M4F (as the embassy firmware prints; 7,112 with a `&RatioBudget`),
//! which leaves room on a 16
//! KiB Cortex-M0 for the stack
//! and an embassy executor when it is built in place (in a `static`). Its
//! mapping is [`IntMapping`]: recording, refreshing the window's cached quantile, reading
//! the hedge threshold and deciding use integer operations only (no soft-float helper, no
//! 64-bit division: checked on the Cortex-M0 and Cortex-M4F images by
//! `.ci/check-int-path.sh`).
//!
//! ```
//! use tailguard::sketch::presets;
//! let mut s = presets::log_latency();
//! s.record_u64(1_500_000); // 1.5 ms
//! assert!(s.max_trackable() >= 1e11);
//! ```

use super::atomic::AtomicSketch;
use super::ddsketch::DDSketch;
use super::exponential::ExponentialSketch;
use super::layout::BinLayout;
use super::mapping::{CubicMapping, IndexMapping, IntMapping, LogMapping, OtelMapping};

/// Smallest latency the presets track: 1 µs in nanoseconds.
///
/// ```
/// use tailguard::sketch::presets::{self, MIN_LATENCY_NS};
///
/// let mut s = presets::cubic_latency();
/// s.record(MIN_LATENCY_NS).unwrap();
/// s.record(MIN_LATENCY_NS / 2.0).unwrap(); // below the range: the zero bin
/// assert_eq!((s.count(), s.zero_count()), (2, 1));
/// ```
pub const MIN_LATENCY_NS: f64 = 1e3;
/// Largest latency the presets track: 100 s in nanoseconds.
///
/// ```
/// use tailguard::sketch::presets::{self, MAX_LATENCY_NS};
///
/// let mut s = presets::cubic_latency();
/// s.record(MAX_LATENCY_NS).unwrap();
/// assert_eq!(s.clamped(), 0);
/// s.record(2.0 * MAX_LATENCY_NS).unwrap(); // past the range: the top bin
/// assert_eq!(s.clamped(), 1);
/// ```
pub const MAX_LATENCY_NS: f64 = 1e11;

/// The bins of [`LogLatency`].
///
/// ```
/// use tailguard::sketch::presets::{LOG_LATENCY_BINS, MIN_LATENCY_NS, MAX_LATENCY_NS};
/// use tailguard::sketch::{DDSketch, LogMapping};
///
/// // As many as 0.01 needs over the range, and not one more.
/// assert!(DDSketch::<LogMapping, LOG_LATENCY_BINS>::for_range(0.01, MIN_LATENCY_NS, MAX_LATENCY_NS).is_ok());
/// assert!(DDSketch::<LogMapping, { LOG_LATENCY_BINS - 1 }>::for_range(0.01, MIN_LATENCY_NS, MAX_LATENCY_NS).is_err());
/// ```
pub const LOG_LATENCY_BINS: usize = 922;
/// The bins of [`CubicLatency`].
///
/// ```
/// use tailguard::sketch::presets::{CUBIC_LATENCY_BINS, MIN_LATENCY_NS, MAX_LATENCY_NS};
/// use tailguard::sketch::{DDSketch, CubicMapping};
///
/// // As many as 0.01 needs over the range, and not one more.
/// assert!(DDSketch::<CubicMapping, CUBIC_LATENCY_BINS>::for_range(0.01, MIN_LATENCY_NS, MAX_LATENCY_NS).is_ok());
/// assert!(DDSketch::<CubicMapping, { CUBIC_LATENCY_BINS - 1 }>::for_range(0.01, MIN_LATENCY_NS, MAX_LATENCY_NS).is_err());
/// ```
pub const CUBIC_LATENCY_BINS: usize = 931;
/// The bins of [`IntLatency`].
///
/// ```
/// use tailguard::sketch::presets::{INT_LATENCY_BINS, MIN_LATENCY_NS, MAX_LATENCY_NS};
/// use tailguard::sketch::{DDSketch, IntMapping};
///
/// // As many as 0.01 needs over the range, and not one more.
/// assert!(DDSketch::<IntMapping, INT_LATENCY_BINS>::for_range(0.01, MIN_LATENCY_NS, MAX_LATENCY_NS).is_ok());
/// assert!(DDSketch::<IntMapping, { INT_LATENCY_BINS - 1 }>::for_range(0.01, MIN_LATENCY_NS, MAX_LATENCY_NS).is_err());
/// ```
pub const INT_LATENCY_BINS: usize = 1698;
/// The bins of [`IntLatencyCoarse`].
///
/// ```
/// use tailguard::sketch::presets::{INT_LATENCY_COARSE_BINS, MIN_LATENCY_NS, MAX_LATENCY_NS};
/// use tailguard::sketch::{DDSketch, IntMapping};
///
/// // As many as 0.02 needs over the range, and not one more.
/// assert!(DDSketch::<IntMapping, INT_LATENCY_COARSE_BINS>::for_range(0.02, MIN_LATENCY_NS, MAX_LATENCY_NS).is_ok());
/// assert!(DDSketch::<IntMapping, { INT_LATENCY_COARSE_BINS - 1 }>::for_range(0.02, MIN_LATENCY_NS, MAX_LATENCY_NS).is_err());
/// ```
pub const INT_LATENCY_COARSE_BINS: usize = 849;
/// The bins of [`McuLatency`].
///
/// ```
/// use tailguard::sketch::presets::{MCU_LATENCY_BINS, MCU_MIN_LATENCY_NS, MCU_MAX_LATENCY_NS};
/// use tailguard::sketch::{DDSketch, IntMapping};
///
/// // As many as 0.02 needs over the range, and not one more.
/// assert!(DDSketch::<IntMapping, MCU_LATENCY_BINS>::for_range(0.02, MCU_MIN_LATENCY_NS, MCU_MAX_LATENCY_NS).is_ok());
/// assert!(DDSketch::<IntMapping, { MCU_LATENCY_BINS - 1 }>::for_range(0.02, MCU_MIN_LATENCY_NS, MCU_MAX_LATENCY_NS).is_err());
/// ```
pub const MCU_LATENCY_BINS: usize = 534;
/// The buckets per slot of the compact hedger's auto-scaling window
/// ([`CompactHedger`](crate::hedge::CompactHedger)): 64 OpenTelemetry exponential
/// buckets, whose scale follows the latencies: 2.2 % relative accuracy while an
/// interval's latencies span up to a factor of 2.4, 4.3 % up to 15, 8.6 % up to 570,
/// 17 % up to 830,000 (a slot's range is widened by margins; see
/// [`ExponentialWindow`](crate::window::ExponentialWindow)). Those hold wherever the range
/// falls across the buckets' edges; where it falls best, the factors reach 2.5, 16, 645
/// and 2^20. They are the accuracy of slots chosen from the range earlier intervals saw:
/// the first interval's slot, which knew no range, spreads its buckets over 16 octaves
/// from its first value (8.6 %) until it leaves the window, and the snapshot is at the
/// coarsest of its slots' scales.
///
/// ```
/// use core::time::Duration;
/// use tailguard::clock::ManualClock;
/// use tailguard::hedge::{CompactHedger, HedgeConfig, Hedger};
///
/// let clock = ManualClock::new();
/// let hedger: CompactHedger<_> = Hedger::exponential(&clock, HedgeConfig::new()).unwrap();
/// // Latencies over a factor of 2 (10 to 20 ms): once the slot of the first interval
/// // (which knew no range) has left the window, every slot is at the finest scale.
/// for _ in 0..4 {
///     (10..=20).for_each(|ms| hedger.record(Duration::from_millis(ms)));
///     clock.advance(Duration::from_secs(30)); // the next interval
/// }
/// assert!(hedger.window().snapshot().relative_accuracy() <= 0.022);
/// ```
pub const COMPACT_LATENCY_BUCKETS: usize = 64;
/// Smallest latency [`McuLatency`] tracks: 100 µs in nanoseconds.
///
/// ```
/// use tailguard::sketch::presets::{self, MCU_MIN_LATENCY_NS};
///
/// let mut s = presets::mcu_latency();
/// s.record(MCU_MIN_LATENCY_NS).unwrap();
/// s.record(50e3).unwrap(); // 50 µs: below the range, the zero bin
/// assert_eq!((s.count(), s.zero_count()), (2, 1));
/// ```
pub const MCU_MIN_LATENCY_NS: f64 = 1e5;
/// Largest latency [`McuLatency`] tracks: 10 s in nanoseconds.
///
/// ```
/// use tailguard::sketch::presets::{self, MCU_MAX_LATENCY_NS};
///
/// let mut s = presets::mcu_latency();
/// s.record(MCU_MAX_LATENCY_NS).unwrap();
/// assert_eq!(s.clamped(), 0);
/// s.record(20e9).unwrap(); // 20 s: past the range, the top bin
/// assert_eq!(s.clamped(), 1);
/// ```
pub const MCU_MAX_LATENCY_NS: f64 = 1e10;
/// The bins of [`OtelLatency`].
///
/// ```
/// use tailguard::sketch::presets::{OTEL_LATENCY_BINS, MIN_LATENCY_NS, MAX_LATENCY_NS};
/// use tailguard::sketch::{DDSketch, OtelMapping};
///
/// // As many as 0.011 needs over the range, and not one more.
/// assert!(DDSketch::<OtelMapping, OTEL_LATENCY_BINS>::for_range(0.011, MIN_LATENCY_NS, MAX_LATENCY_NS).is_ok());
/// assert!(DDSketch::<OtelMapping, { OTEL_LATENCY_BINS - 1 }>::for_range(0.011, MIN_LATENCY_NS, MAX_LATENCY_NS).is_err());
/// ```
pub const OTEL_LATENCY_BINS: usize = 852;
/// The scale of [`OtelLatency`]: 32 buckets per power of two.
///
/// ```
/// use tailguard::sketch::presets::{self, OTEL_LATENCY_SCALE};
/// use tailguard::sketch::IndexMapping;
///
/// let mapping = presets::otel_latency().mapping().clone();
/// assert_eq!(mapping.scale(), OTEL_LATENCY_SCALE);
/// assert_eq!(mapping.index(2e6) - mapping.index(1e6), 1 << OTEL_LATENCY_SCALE); // 1 ms to 2 ms
/// ```
pub const OTEL_LATENCY_SCALE: i32 = OtelMapping::DEFAULT.scale();

/// 1 % over 1 µs .. 100 s (in ns), logarithmic mapping: the smallest 1 % sketch.
///
/// ```
/// use tailguard::sketch::presets::{self, LogLatency};
///
/// let s: LogLatency = presets::log_latency();
/// assert!((s.relative_accuracy() - 0.01).abs() < 1e-9);
/// assert!(s.min_trackable() <= presets::MIN_LATENCY_NS && s.max_trackable() > presets::MAX_LATENCY_NS);
/// ```
pub type LogLatency = DDSketch<LogMapping, LOG_LATENCY_BINS>;
/// 1 % over 1 µs .. 100 s (in ns), cubic mapping: no `ln` on the record path.
///
/// ```
/// use tailguard::sketch::presets::{self, CubicLatency};
///
/// let s: CubicLatency = presets::cubic_latency();
/// assert!((s.relative_accuracy() - 0.01).abs() < 1e-9);
/// assert!(s.min_trackable() <= presets::MIN_LATENCY_NS && s.max_trackable() > presets::MAX_LATENCY_NS);
/// ```
pub type CubicLatency = DDSketch<CubicMapping, CUBIC_LATENCY_BINS>;
/// 0.78 % over 1 µs .. 100 s (in ns), integer mapping: no float operation on the record
/// path (Cortex-M0, RV32IMC).
///
/// ```
/// use tailguard::sketch::presets::{self, IntLatency};
///
/// let s: IntLatency = presets::int_latency();
/// assert!((s.relative_accuracy() - 0.0078).abs() < 1e-4);
/// assert!(s.min_trackable() <= presets::MIN_LATENCY_NS && s.max_trackable() > presets::MAX_LATENCY_NS);
/// ```
pub type IntLatency = DDSketch<IntMapping, INT_LATENCY_BINS>;
/// 1.56 % over 1 µs .. 100 s (in ns), integer mapping: half the memory of [`IntLatency`].
///
/// ```
/// use tailguard::sketch::presets::{self, IntLatencyCoarse};
///
/// let s: IntLatencyCoarse = presets::int_latency_coarse();
/// assert!((s.relative_accuracy() - 0.0156).abs() < 1e-4);
/// assert!(s.min_trackable() <= presets::MIN_LATENCY_NS && s.max_trackable() > presets::MAX_LATENCY_NS);
/// ```
pub type IntLatencyCoarse = DDSketch<IntMapping, INT_LATENCY_COARSE_BINS>;
/// 1.08 % over 1 µs .. 100 s (in ns), OpenTelemetry's exponential-histogram buckets at
/// scale 5: encodes as an OTLP data point with nothing re-binned ([`crate::otlp`]), and
/// records integers with one `ln` (no float operation at scales `<= 0`, which are
/// coarser than a latency sketch wants).
///
/// ```
/// use tailguard::sketch::presets::{self, OtelLatency};
///
/// let s: OtelLatency = presets::otel_latency();
/// assert!((s.relative_accuracy() - 0.0108).abs() < 1e-4);
/// assert!(s.min_trackable() <= presets::MIN_LATENCY_NS && s.max_trackable() > presets::MAX_LATENCY_NS);
/// ```
pub type OtelLatency = DDSketch<OtelMapping, OTEL_LATENCY_BINS>;
/// 1.56 % over 100 µs .. 10 s (in ns), integer mapping: the microcontroller preset, a
/// third of the memory of [`IntLatencyCoarse`] (see the [module docs](self#microcontrollers)).
///
/// ```
/// use tailguard::sketch::presets::{self, McuLatency};
///
/// let s: McuLatency = presets::mcu_latency();
/// assert!((s.relative_accuracy() - 0.0156).abs() < 1e-4);
/// assert!(s.min_trackable() <= presets::MCU_MIN_LATENCY_NS && s.max_trackable() > presets::MCU_MAX_LATENCY_NS);
/// ```
pub type McuLatency = DDSketch<IntMapping, MCU_LATENCY_BINS>;

/// An auto-scaling OpenTelemetry histogram of the SDKs' default size: 160 buckets of
/// `u32` counters, no range to choose (see the [module docs](self#auto-scaling)).
///
/// ```
/// use tailguard::sketch::presets::OtelAuto;
///
/// let mut s = OtelAuto::new();
/// assert_eq!(s.scale(), 8); // the finest, while empty
/// s.record_u64(1_000_000); // 1 ms
/// s.record_u64(30_000_000); // 30 ms: within a factor of 2^5, so scale 5 (1.08 %)
/// assert_eq!(s.scale(), 5);
/// let p0 = s.quantile(0.0).unwrap().unwrap();
/// assert!((p0 - 1e6).abs() <= s.relative_accuracy() * 1e6);
/// ```
pub type OtelAuto = ExponentialSketch<u32, 160>;
/// An auto-scaling OpenTelemetry histogram for a microcontroller: 64 buckets of `u16`
/// counters (see the [module docs](self#auto-scaling)).
///
/// ```
/// use tailguard::sketch::presets::McuAuto;
///
/// let mut s = McuAuto::new();
/// (1..=100u64).for_each(|ms| s.record_u64(ms * 1_000_000)); // 1 to 100 ms
/// assert_eq!((s.count(), s.scale()), (100, 3)); // 6.6 octaves in 64 buckets: 8 each
/// let p90 = s.quantile(0.9).unwrap().unwrap();
/// assert!((p90 - 90e6).abs() <= s.relative_accuracy() * 90e6);
/// ```
pub type McuAuto = ExponentialSketch<u16, 64>;

/// [`LogLatency`]'s bins as an [`AtomicSketch`], recorded through `&self`: a `static`
/// spells no bin count.
///
/// ```
/// use tailguard::sketch::{presets, AtomicSketch};
/// static LATENCIES: presets::AtomicLogLatency = AtomicSketch::with_layout(presets::LOG_LATENCY_LAYOUT);
/// LATENCIES.record_u64(1_500_000);
/// assert_eq!(LATENCIES.count(), 1);
/// ```
pub type AtomicLogLatency = AtomicSketch<LogMapping, LOG_LATENCY_BINS>;
/// [`CubicLatency`]'s bins as an [`AtomicSketch`] (see [`AtomicLogLatency`]).
///
/// ```
/// use tailguard::sketch::{presets, AtomicSketch};
/// static LATENCIES: presets::AtomicCubicLatency = AtomicSketch::with_layout(presets::CUBIC_LATENCY_LAYOUT);
/// LATENCIES.record_u64(2_500_000); // 2.5 ms, through `&self`
/// let p50 = LATENCIES.quantile(0.5).unwrap().unwrap();
/// assert!((p50 - 2.5e6).abs() <= 0.01 * 2.5e6);
/// ```
pub type AtomicCubicLatency = AtomicSketch<CubicMapping, CUBIC_LATENCY_BINS>;
/// [`IntLatency`]'s bins as an [`AtomicSketch`] (see [`AtomicLogLatency`]).
///
/// ```
/// use tailguard::sketch::{presets, AtomicSketch};
/// static LATENCIES: presets::AtomicIntLatency = AtomicSketch::with_layout(presets::INT_LATENCY_LAYOUT);
/// LATENCIES.record_u64(2_500_000); // 2.5 ms, through `&self`
/// let p50 = LATENCIES.quantile(0.5).unwrap().unwrap();
/// assert!((p50 - 2.5e6).abs() <= 0.0079 * 2.5e6);
/// ```
pub type AtomicIntLatency = AtomicSketch<IntMapping, INT_LATENCY_BINS>;
/// [`IntLatencyCoarse`]'s bins as an [`AtomicSketch`] (see [`AtomicLogLatency`]).
///
/// ```
/// use tailguard::sketch::{presets, AtomicSketch};
/// static LATENCIES: presets::AtomicIntLatencyCoarse = AtomicSketch::with_layout(presets::INT_LATENCY_COARSE_LAYOUT);
/// LATENCIES.record_u64(2_500_000); // 2.5 ms, through `&self`
/// let p50 = LATENCIES.quantile(0.5).unwrap().unwrap();
/// assert!((p50 - 2.5e6).abs() <= 0.0157 * 2.5e6);
/// ```
pub type AtomicIntLatencyCoarse = AtomicSketch<IntMapping, INT_LATENCY_COARSE_BINS>;
/// [`OtelLatency`]'s bins as an [`AtomicSketch`] (see [`AtomicLogLatency`]).
///
/// ```
/// use tailguard::sketch::{presets, AtomicSketch};
/// static LATENCIES: presets::AtomicOtelLatency = AtomicSketch::with_layout(presets::OTEL_LATENCY_LAYOUT);
/// LATENCIES.record_u64(2_500_000); // 2.5 ms, through `&self`
/// let p50 = LATENCIES.quantile(0.5).unwrap().unwrap();
/// assert!((p50 - 2.5e6).abs() <= 0.0109 * 2.5e6);
/// ```
pub type AtomicOtelLatency = AtomicSketch<OtelMapping, OTEL_LATENCY_BINS>;
/// [`McuLatency`]'s bins as an [`AtomicSketch`] (see [`AtomicLogLatency`]).
///
/// ```
/// use tailguard::sketch::{presets, AtomicSketch};
/// static LATENCIES: presets::AtomicMcuLatency = AtomicSketch::with_layout(presets::MCU_LATENCY_LAYOUT);
/// LATENCIES.record_u64(2_500_000); // 2.5 ms, through `&self`
/// let p50 = LATENCIES.quantile(0.5).unwrap().unwrap();
/// assert!((p50 - 2.5e6).abs() <= 0.0157 * 2.5e6);
/// ```
pub type AtomicMcuLatency = AtomicSketch<IntMapping, MCU_LATENCY_BINS>;

/// The layout of `N` bins of `mapping` from the bin of index `min_index`. The indices
/// below are `mapping.index(MIN_LATENCY_NS)` (which is not `const`: it takes a logarithm),
/// checked by a test; the bin counts are checked against `for_range`, so every index fits.
const fn layout<M: IndexMapping, const N: usize>(mapping: M, min_index: i32) -> BinLayout<M, N> {
    BinLayout::with_min_index(mapping, min_index)
}

/// The layout of [`LogLatency`]: a constant, for `static` sketches, windows and hedgers
/// ([`AtomicSketch::with_layout`](super::AtomicSketch::with_layout),
/// [`Window::with_origin`](crate::window::Window::with_origin)).
///
/// ```
/// use tailguard::sketch::presets::{LOG_LATENCY_LAYOUT, LOG_LATENCY_BINS, MIN_LATENCY_NS, MAX_LATENCY_NS};
///
/// assert_eq!(LOG_LATENCY_LAYOUT.bin_count(), LOG_LATENCY_BINS);
/// assert!(LOG_LATENCY_LAYOUT.min_trackable() <= MIN_LATENCY_NS && LOG_LATENCY_LAYOUT.max_trackable() > MAX_LATENCY_NS);
/// static LATENCIES: tailguard::sketch::presets::AtomicLogLatency =
///     tailguard::sketch::AtomicSketch::with_layout(LOG_LATENCY_LAYOUT);
/// assert!(LATENCIES.is_empty());
/// ```
pub const LOG_LATENCY_LAYOUT: BinLayout<LogMapping, LOG_LATENCY_BINS> =
    layout(LogMapping::ONE_PERCENT, 345);
/// The layout of [`CubicLatency`] (see [`LOG_LATENCY_LAYOUT`]).
///
/// ```
/// use tailguard::sketch::presets::{CUBIC_LATENCY_LAYOUT, CUBIC_LATENCY_BINS, MIN_LATENCY_NS, MAX_LATENCY_NS};
///
/// assert_eq!(CUBIC_LATENCY_LAYOUT.bin_count(), CUBIC_LATENCY_BINS);
/// assert!(CUBIC_LATENCY_LAYOUT.min_trackable() <= MIN_LATENCY_NS && CUBIC_LATENCY_LAYOUT.max_trackable() > MAX_LATENCY_NS);
/// ```
pub const CUBIC_LATENCY_LAYOUT: BinLayout<CubicMapping, CUBIC_LATENCY_BINS> =
    layout(CubicMapping::ONE_PERCENT, 348);
/// The layout of [`IntLatency`] (see [`LOG_LATENCY_LAYOUT`]).
///
/// ```
/// use tailguard::sketch::presets::{INT_LATENCY_LAYOUT, INT_LATENCY_BINS, MIN_LATENCY_NS, MAX_LATENCY_NS};
///
/// assert_eq!(INT_LATENCY_LAYOUT.bin_count(), INT_LATENCY_BINS);
/// assert!(INT_LATENCY_LAYOUT.min_trackable() <= MIN_LATENCY_NS && INT_LATENCY_LAYOUT.max_trackable() > MAX_LATENCY_NS);
/// ```
pub const INT_LATENCY_LAYOUT: BinLayout<IntMapping, INT_LATENCY_BINS> = layout(IntMapping::K6, 636);
/// The layout of [`IntLatencyCoarse`] (see [`LOG_LATENCY_LAYOUT`]).
///
/// ```
/// use tailguard::sketch::presets::{INT_LATENCY_COARSE_LAYOUT, INT_LATENCY_COARSE_BINS, MIN_LATENCY_NS, MAX_LATENCY_NS};
///
/// assert_eq!(INT_LATENCY_COARSE_LAYOUT.bin_count(), INT_LATENCY_COARSE_BINS);
/// assert!(INT_LATENCY_COARSE_LAYOUT.min_trackable() <= MIN_LATENCY_NS && INT_LATENCY_COARSE_LAYOUT.max_trackable() > MAX_LATENCY_NS);
/// ```
pub const INT_LATENCY_COARSE_LAYOUT: BinLayout<IntMapping, INT_LATENCY_COARSE_BINS> =
    layout(IntMapping::K5, 318);
/// The layout of [`McuLatency`] (see [`LOG_LATENCY_LAYOUT`]; its lowest bin holds
/// [`MCU_MIN_LATENCY_NS`]).
///
/// ```
/// use tailguard::sketch::presets::{MCU_LATENCY_LAYOUT, MCU_LATENCY_BINS, MCU_MIN_LATENCY_NS, MCU_MAX_LATENCY_NS};
///
/// assert_eq!(MCU_LATENCY_LAYOUT.bin_count(), MCU_LATENCY_BINS);
/// assert!(MCU_LATENCY_LAYOUT.min_trackable() <= MCU_MIN_LATENCY_NS && MCU_LATENCY_LAYOUT.max_trackable() > MCU_MAX_LATENCY_NS);
/// use tailguard::sketch::IndexMapping;
/// // Its lowest bin holds the smallest latency.
/// assert_eq!(MCU_LATENCY_LAYOUT.mapping().index(MCU_MIN_LATENCY_NS), MCU_LATENCY_LAYOUT.min_index());
/// ```
pub const MCU_LATENCY_LAYOUT: BinLayout<IntMapping, MCU_LATENCY_BINS> = layout(IntMapping::K5, 528);
/// The layout of [`OtelLatency`] (see [`LOG_LATENCY_LAYOUT`]).
///
/// ```
/// use tailguard::sketch::presets::{OTEL_LATENCY_LAYOUT, OTEL_LATENCY_BINS, MIN_LATENCY_NS, MAX_LATENCY_NS};
///
/// assert_eq!(OTEL_LATENCY_LAYOUT.bin_count(), OTEL_LATENCY_BINS);
/// assert!(OTEL_LATENCY_LAYOUT.min_trackable() <= MIN_LATENCY_NS && OTEL_LATENCY_LAYOUT.max_trackable() > MAX_LATENCY_NS);
/// ```
pub const OTEL_LATENCY_LAYOUT: BinLayout<OtelMapping, OTEL_LATENCY_BINS> =
    layout(OtelMapping::DEFAULT, 318);

/// An empty [`LogLatency`] sketch (`const`: it can initialise a `static`).
///
/// ```
/// use tailguard::sketch::presets;
///
/// let mut s = presets::log_latency();
/// assert!(s.is_empty());
/// s.record_u64(2_000_000); // 2 ms
/// let p50 = s.quantile(0.5).unwrap().unwrap();
/// assert!((p50 - 2e6).abs() <= 0.01 * 2e6);
/// ```
pub const fn log_latency() -> LogLatency {
    DDSketch::with_layout(LOG_LATENCY_LAYOUT)
}

/// An empty [`CubicLatency`] sketch (`const`).
///
/// ```
/// use tailguard::sketch::presets;
///
/// let mut s = presets::cubic_latency();
/// (1..=100u64).for_each(|ms| s.record_u64(ms * 1_000_000)); // 1 to 100 ms
/// let p99 = s.quantile(0.99).unwrap().unwrap();
/// assert!((p99 - 99e6).abs() <= 0.01 * 99e6);
/// ```
pub const fn cubic_latency() -> CubicLatency {
    DDSketch::with_layout(CUBIC_LATENCY_LAYOUT)
}

/// An empty [`IntLatency`] sketch (`const`).
///
/// ```
/// use tailguard::sketch::presets;
///
/// let mut s = presets::int_latency();
/// s.record_u64(750_000); // 750 µs
/// s.record_u64(200_000_000_000); // 200 s: past the range, counted in the top bin
/// assert_eq!((s.count(), s.clamped()), (2, 1));
/// let p0 = s.quantile(0.0).unwrap().unwrap();
/// assert!((p0 - 750e3).abs() <= 0.0079 * 750e3);
/// ```
pub const fn int_latency() -> IntLatency {
    DDSketch::with_layout(INT_LATENCY_LAYOUT)
}

/// An empty [`IntLatencyCoarse`] sketch (`const`).
///
/// ```
/// use tailguard::sketch::presets;
///
/// let mut s = presets::int_latency_coarse();
/// s.record_u64(40_000_000); // 40 ms
/// let p50 = s.quantile(0.5).unwrap().unwrap();
/// assert!((p50 - 40e6).abs() <= 0.0157 * 40e6);
/// assert_eq!(s.layout().bin_count() * 2, presets::INT_LATENCY_BINS); // half `IntLatency`'s
/// ```
pub const fn int_latency_coarse() -> IntLatencyCoarse {
    DDSketch::with_layout(INT_LATENCY_COARSE_LAYOUT)
}

/// An empty [`McuLatency`] sketch (`const`).
///
/// ```
/// use tailguard::sketch::presets;
///
/// let mut s = presets::mcu_latency();
/// s.record_u64(250_000); // 250 µs
/// let p50 = s.quantile(0.5).unwrap().unwrap();
/// assert!((p50 - 250e3).abs() <= 0.0157 * 250e3);
/// assert!(s.min_trackable() <= 1e5 && s.max_trackable() > 1e10);
/// ```
pub const fn mcu_latency() -> McuLatency {
    DDSketch::with_layout(MCU_LATENCY_LAYOUT)
}

/// An empty [`OtelLatency`] sketch (`const`).
///
/// ```
/// use tailguard::otlp;
/// use tailguard::sketch::presets;
///
/// let mut s = presets::otel_latency();
/// s.record_u64(1_500_000); // 1.5 ms
/// let mut buf = [0u8; 128];
/// let len = otlp::encode(&s, otlp::Timestamps::default(), &mut buf).unwrap();
/// assert_eq!(len, otlp::encoded_len(&s, otlp::Timestamps::default()));
/// ```
pub const fn otel_latency() -> OtelLatency {
    DDSketch::with_layout(OTEL_LATENCY_LAYOUT)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check<M: IndexMapping, const N: usize>(preset: DDSketch<M, N>, alpha: f64) {
        let exact = DDSketch::<M, N>::for_range(alpha, MIN_LATENCY_NS, MAX_LATENCY_NS).unwrap();
        assert_eq!(preset, exact);
        // Not one bin more than the range needs.
        assert!(DDSketch::<M, N>::for_range(alpha, MIN_LATENCY_NS, MAX_LATENCY_NS * 1.03).is_err());
        assert!(preset.min_trackable() <= MIN_LATENCY_NS);
        assert!(preset.max_trackable() > MAX_LATENCY_NS);
    }

    /// What the presets were before their layouts became constants: the mapping built by
    /// its run-time constructor, the lowest bin computed by the mapping.
    fn computed<M: IndexMapping, const N: usize>(mapping: M) -> DDSketch<M, N> {
        DDSketch::with_layout(BinLayout::with_min_index(
            mapping,
            mapping.index(MIN_LATENCY_NS),
        ))
    }

    /// Every bit of a mapping (its `Debug` form prints each float so that it parses back
    /// to the same bits), and the layout.
    fn assert_same_layout<M: IndexMapping, const N: usize>(a: &DDSketch<M, N>, b: &DDSketch<M, N>) {
        assert_eq!(
            std::format!("{:?}", a.mapping()),
            std::format!("{:?}", b.mapping())
        );
        assert_eq!(a.mapping().gamma().to_bits(), b.mapping().gamma().to_bits());
        assert_eq!(
            a.mapping().relative_accuracy().to_bits(),
            b.mapping().relative_accuracy().to_bits()
        );
        assert_eq!(a.min_index(), b.min_index());
        assert_eq!(a, b);
    }

    #[test]
    fn constant_layouts_are_what_the_run_time_constructors_compute() {
        assert_same_layout(
            &log_latency(),
            &computed(LogMapping::with_relative_accuracy(0.01).unwrap()),
        );
        assert_same_layout(
            &cubic_latency(),
            &computed(CubicMapping::with_relative_accuracy(0.01).unwrap()),
        );
        assert_same_layout(&int_latency(), &computed(IntMapping::K6));
        assert_same_layout(&int_latency_coarse(), &computed(IntMapping::K5));
        assert_same_layout(
            &mcu_latency(),
            &DDSketch::with_layout(BinLayout::with_min_index(
                IntMapping::K5,
                IntMapping::K5.index(MCU_MIN_LATENCY_NS),
            )),
        );
        assert_same_layout(
            &otel_latency(),
            &computed(OtelMapping::with_scale(5).unwrap()),
        );
        // The defaults that `const` constructors start arrays from.
        assert_eq!(LogMapping::DEFAULT, *log_latency().mapping());
        assert_eq!(CubicMapping::DEFAULT, *cubic_latency().mapping());
        assert_eq!(OtelMapping::DEFAULT, *otel_latency().mapping());
    }

    #[test]
    fn presets_cover_their_range_exactly() {
        check(log_latency(), 0.01);
        check(cubic_latency(), 0.01);
        check(int_latency(), 0.01);
        check(int_latency_coarse(), 0.02);
        check(otel_latency(), 0.011);
        let mcu = McuLatency::for_range(0.02, MCU_MIN_LATENCY_NS, MCU_MAX_LATENCY_NS).unwrap();
        assert_eq!(mcu_latency(), mcu);
        assert_eq!(mcu_latency().mapping().mantissa_bits(), 5);
        assert!(
            McuLatency::for_range(0.02, MCU_MIN_LATENCY_NS, MCU_MAX_LATENCY_NS * 1.03).is_err()
        );
        assert!(mcu_latency().max_trackable() > MCU_MAX_LATENCY_NS);
        assert_eq!(otel_latency().mapping().scale(), 5);
    }

    #[cfg(target_pointer_width = "64")]
    #[test]
    fn preset_sizes_are_as_documented() {
        use core::mem::size_of;
        assert_eq!(size_of::<LogLatency>(), 3864);
        assert_eq!(size_of::<CubicLatency>(), 3912);
        assert_eq!(size_of::<IntLatency>(), 6952);
        assert_eq!(size_of::<IntLatencyCoarse>(), 3560);
        assert_eq!(size_of::<OtelLatency>(), 3560);
        assert_eq!(size_of::<McuLatency>(), 2296);
        assert_eq!(size_of::<OtelAuto>(), 768);
        assert_eq!(size_of::<McuAuto>(), 256);
        assert!(size_of::<LogLatency>() <= 4096 && size_of::<CubicLatency>() <= 4096);
    }
}
