//! Fuzzing support (feature `arbitrary`): arbitrary sketches, valid by construction, and
//! DDSketch messages and OTLP data points as DataDog's libraries and OpenTelemetry's
//! SDKs and collectors write them, for fuzz targets of merge pipelines built on this
//! crate.
//!
//! * [`Arbitrary`] for [`DDSketch`], [`BinLayout`] and the index mappings
//!   ([`LogMapping`], [`CubicMapping`], [`IntMapping`], [`OtelMapping`]): any preset's
//!   configuration or any valid accuracy, scale and range, bins filled as records and
//!   merges fill them, up to saturation. [`DDSketch::arbitrary_with_layout`] fills a
//!   sketch of a given layout, so that two arbitrary sketches merge (see the example
//!   below).
//! * [`Arbitrary`] for [`ExponentialSketch`], filled by records of values within a drawn
//!   spread (one power of two to most of the floats: every scale from 8 to -10), zeros,
//!   `+inf`, any bit pattern, and merges with itself, up to saturation.
//! * [`ddsketch_message`]: a DDSketch protobuf message, written into the caller's buffer
//!   as DataDog's Go, Java or Python library writes one, and a [`DDSketchMessage`] saying
//!   what it holds and which sketch decodes it exactly (or why none does).
//! * [`otlp_data_point`]: an OTLP `ExponentialHistogramDataPoint`, written into the
//!   caller's buffer as an OpenTelemetry SDK or collector writes one (any scale, padded
//!   buckets, zero threshold, optional sum, min and max, any field order), and an
//!   [`OtlpDataPoint`] saying what it holds and what
//!   [`otlp::decode_into`](crate::otlp::decode_into) does with it for a sketch of any
//!   scale ([`OtlpDataPoint::outcome`]).
//!
//! No heap is used here beyond what the `arbitrary` crate itself does; the feature
//! implies `std` because that crate needs it.
//!
//! # A merge fuzz target
//!
//! A user's aggregator merges sketches from many devices; its invariant here is that a
//! merge conserves values (what did not fit in a full bin is counted as saturated). The
//! fuzz target (with `cargo fuzz`, `libfuzzer_sys::fuzz_target!(|data: &[u8]| ...)`)
//! takes the body of `check`; here it runs on fixed bytes:
//!
//! ```
//! use arbitrary::{Arbitrary, Unstructured};
//! use tailguard::sketch::presets::CubicLatency;
//! use tailguard::sketch::{DDSketch, IndexMapping};
//!
//! // What the user's pipeline does: here, merge a device's sketch into the total.
//! fn aggregate<M: IndexMapping, const N: usize>(total: &mut DDSketch<M, N>, device: &DDSketch<M, N>) {
//!     total.merge(device).expect("same layout");
//! }
//!
//! fn check(data: &[u8]) -> arbitrary::Result<()> {
//!     let mut u = Unstructured::new(data);
//!     // Any configuration of the preset's type (or its own: `presets::cubic_latency()
//!     // .layout()`), then a second sketch of the same layout, so that they merge. Bins
//!     // hold up to u32::MAX; zero bins, clamped and saturated values all occur.
//!     let mut total = CubicLatency::arbitrary(&mut u)?;
//!     let device = CubicLatency::arbitrary_with_layout(&mut u, total.layout())?;
//!     let before = total.count() + total.saturated();
//!     aggregate(&mut total, &device);
//!     // The invariant: every value is counted once, in a bin or as saturated.
//!     assert_eq!(
//!         total.count() + total.saturated(),
//!         before + device.count() + device.saturated()
//!     );
//!     Ok(())
//! }
//!
//! let bytes: Vec<u8> = (0..4096u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
//! check(&bytes).unwrap();
//! check(&[]).unwrap(); // no bytes: empty sketches
//! ```
//!
//! # A collector-side merge fuzz target
//!
//! A Rust process merges the data points of many OpenTelemetry SDKs into one sketch;
//! its invariant: a point is merged whole (every value in a bin or counted as
//! saturated) or refused as predicted, leaving the total unchanged.
//!
//! ```
//! use arbitrary::Unstructured;
//! use tailguard::fuzzing::otlp_data_point;
//! use tailguard::otlp;
//! use tailguard::sketch::presets::{self, OtelLatency};
//!
//! // What the user's pipeline does: merge one point into the total.
//! fn aggregate(total: &mut OtelLatency, point: &[u8]) -> Result<u64, otlp::DecodeError> {
//!     otlp::decode_into(point, total).map(|report| report.added + report.saturated)
//! }
//!
//! fn check(data: &[u8]) -> arbitrary::Result<()> {
//!     let mut u = Unstructured::new(data);
//!     let mut total = presets::otel_latency(); // scale 5
//!     let mut buf = [0u8; 8192];
//!     while !u.is_empty() {
//!         let point = otlp_data_point(&mut u, &mut buf)?;
//!         let before = total.clone();
//!         match aggregate(&mut total, &buf[..point.len]) {
//!             Ok(merged) => assert_eq!(merged, point.zero_count + point.positive),
//!             Err(e) => {
//!                 // A finer sketch than the point, negative values, a bad count.
//!                 assert_eq!(Err(e), point.outcome(total.mapping()));
//!                 assert_eq!(total, before);
//!             }
//!         }
//!     }
//!     Ok(())
//! }
//!
//! let bytes: Vec<u8> = (0..4096u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 11) as u8).collect();
//! check(&bytes).unwrap();
//! ```
//!
//! [`Arbitrary`]: arbitrary::Arbitrary
//! [`OtelMapping`]: crate::sketch::OtelMapping
//! [`DDSketch`]: crate::sketch::DDSketch
//! [`ExponentialSketch`]: crate::sketch::ExponentialSketch
//! [`DDSketch::arbitrary_with_layout`]: crate::sketch::DDSketch::arbitrary_with_layout
//! [`BinLayout`]: crate::sketch::BinLayout
//! [`LogMapping`]: crate::sketch::LogMapping
//! [`CubicMapping`]: crate::sketch::CubicMapping
//! [`IntMapping`]: crate::sketch::IntMapping

// One generator per file: `sketch` (the `Arbitrary` impls of `DDSketch` and its parts),
// `exponential` (that of `ExponentialSketch`), `ddsketch` (DataDog's message), `otlp`
// (OpenTelemetry's data point).
mod ddsketch;
mod exponential;
mod otlp;
mod sketch;

pub use ddsketch::{ddsketch_message, DDSketchMessage, Decodes, Library, Refusal};
pub use otlp::{otlp_data_point, OtlpDataPoint, OtlpDecodes, OtlpRefusal};

/// Deterministic pseudo-random bytes (a 64-bit LCG's high bytes): the generators' tests
/// feed them to `Unstructured`.
#[cfg(test)]
fn test_bytes(seed: u64, len: usize) -> std::vec::Vec<u8> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..len)
        .map(|_| {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (x >> 56) as u8
        })
        .collect()
}
