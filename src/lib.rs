//! # tailguard
//!
//! `no_std`, allocation-free building blocks for cutting the latency tail with adaptive
//! hedged requests: a relative-error quantile sketch (DDSketch) with fixed buckets, a
//! lock-free rotating window of them, hedge budgets, the hedging policy that ties them
//! together, and the clock abstraction every time-dependent piece is generic over.
//!
//! ```
//! use tailguard::sketch::presets;
//! use core::time::Duration;
//!
//! let mut latencies = presets::cubic_latency(); // 1 % accuracy, 1 µs .. 100 s, 3.8 KiB
//! for ms in [4, 5, 5, 6, 5, 48, 5, 4, 6, 5] {
//!     latencies.record_duration(Duration::from_millis(ms));
//! }
//! let p90_ns = latencies.quantile(0.9).unwrap().unwrap();
//! assert!((p90_ns - 6e6).abs() <= 0.01 * 6e6);
//! ```
//!
//! ## Modules
//!
//! * [`clock`]: the [`Clock`] trait, nanosecond [`Instant`],
//!   manual, std, embassy and closure clocks.
//! * [`sketch`]: [`DDSketch`], its index mappings (DataDog's three and OpenTelemetry's
//!   buckets) and presets, and the lock-free
//!   [`AtomicSketch`](sketch::AtomicSketch).
//! * [`window`]: a lock-free rotating window of atomic sketches with a cached percentile.
//! * [`budget`]: the hedge budgets, [`RatioBudget`](budget::RatioBudget) and
//!   [`TokenBucket`](budget::TokenBucket).
//! * [`hedge`]: the [`Hedger`](hedge::Hedger) policy and [`race`](hedge::race).
//! * [`deadline`]: workflow deadlines and the per-step cut-off decision.
//! * [`registry`]: a fixed-capacity map of per-target hedgers.
//! * [`proto`]: DataDog's DDSketch protobuf wire format, into and out of caller buffers.
//! * [`otlp`]: OpenTelemetry exponential histograms (OTLP data points), into and out of
//!   caller buffers, bucket for bucket what the OpenTelemetry SDK builds.
//! * [`prometheus`]: Prometheus native histograms (protobuf exposition) and the text
//!   format, into caller buffers.
//! * `tower` (feature `tower`): a tower layer that hedges any service.
//! * `metrics` (feature `metrics`): a recorder for the `metrics` facade whose histograms
//!   are atomic sketches, ready for the exports above.
//! * `fuzzing` (feature `arbitrary`): arbitrary sketches and DataDog's messages, for fuzz
//!   targets of merge pipelines.
//!
//! ## Features
//!
//! None is on by default: without any, the crate is `no_std` and allocation-free. This is
//! the one description of the features; the README and `Cargo.toml` point here.
//!
//! | feature | adds | dependencies it brings |
//! |---|---|---|
//! | `std` | `clock::StdClock`, the host's monotonic clock (not on `wasm32-unknown-unknown`, whose `Instant::now` panics: an `FnClock` reads the host's time there). Nothing else in the crate needs `std`. | none |
//! | `embassy-time` | `clock::EmbassyClock`, embassy-time's global clock, and `hedge::race_embassy`, [`race`](hedge::race) with embassy's `Timer` as the sleep. | `embassy-time` |
//! | `defmt` | `defmt::Format` on the public types, for logging them on a microcontroller. | `defmt` |
//! | `arbitrary` (implies `std`) | the `fuzzing` module: `arbitrary::Arbitrary` for sketches, their layouts and mappings (valid by construction), and a generator of DDSketch messages as DataDog's Go, Java and Python libraries write them, for fuzzing merge pipelines. The `arbitrary` crate is not `no_std`, so neither is this feature. | `arbitrary` |
//! | `tower` (implies `std`) | the `tower` module: `HedgeLayer`, hedging any tower `Service` whose requests can be cloned, with HTTP helpers (a policy that hedges only idempotent methods and backs off on 429 and 503, for as long as their `Retry-After` asks, per-target hedgers, and `FirstByteLayer` to measure latency at the first body byte). | `tower-service`, `tower-layer`, `http`, `http-body`, `bytes`, `pin-project-lite` |
//! | `metrics` (implies `std`) | the `metrics` module: `Recorder`, a `metrics` 0.24 recorder whose histograms are atomic sketches (OpenTelemetry buckets over 1 µs .. 100 s in seconds by default, any layout otherwise), recorded without a lock, listed for the Prometheus, OTLP and DataDog encoders; counters and gauges are no-ops. | `metrics` |
//!
//! No feature enables a `std`, a critical-section implementation, an embassy time driver
//! or a tick rate: those are the final binary's choices (for embassy-time, a driver and a
//! tick-rate feature such as `tick-hz-32_768`; this crate enables none of its features).
//! On docs.rs every item behind a feature is marked with it.
#![no_std]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::indexing_slicing,
        clippy::arithmetic_side_effects
    )
)]

#[cfg(any(feature = "std", test))]
extern crate std;

pub mod budget;
pub mod clock;
pub mod deadline;
#[cfg(feature = "arbitrary")]
#[cfg_attr(docsrs, doc(cfg(feature = "arbitrary")))]
pub mod fuzzing;
pub mod hedge;
#[cfg(feature = "metrics")]
#[cfg_attr(docsrs, doc(cfg(feature = "metrics")))]
pub mod metrics;
pub mod otlp;
pub mod preset;
pub mod prometheus;
pub mod proto;
pub mod registry;
pub mod sketch;
mod sync;
// The unit tests' generators (the support crate shares the file).
#[cfg(test)]
mod test_rng;
#[cfg(feature = "tower")]
#[cfg_attr(docsrs, doc(cfg(feature = "tower")))]
pub mod tower;
pub mod window;
mod wire;

pub use clock::{Clock, Instant, ManualClock};
pub use sketch::DDSketch;

/// The README's examples, compiled and run as doc tests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
