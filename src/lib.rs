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
//! * [`sketch`]: [`DDSketch`], its three index mappings and presets, and the lock-free
//!   [`AtomicSketch`](sketch::AtomicSketch).
//! * [`window`]: a lock-free rotating window of atomic sketches with a cached percentile.
//! * [`budget`]: the hedge budgets, [`RatioBudget`](budget::RatioBudget) and
//!   [`TokenBucket`](budget::TokenBucket).
//! * [`hedge`]: the [`Hedger`](hedge::Hedger) policy and [`race`](hedge::race).
//! * [`deadline`]: workflow deadlines and the per-step cut-off decision.
//! * [`registry`]: a fixed-capacity map of per-target hedgers.
//! * [`proto`]: DataDog's DDSketch protobuf wire format, into and out of caller buffers.
//! * `tower` (feature `tower`): a tower layer that hedges any service.
//!
//! ## Features
//!
//! * `std`: `clock::StdClock`.
//! * `embassy-time`: `clock::EmbassyClock` and `hedge::race_embassy`.
//! * `defmt`: `defmt::Format` on public types.
//! * `tower` (implies `std`): `tower::HedgeLayer`, hedging any tower `Service`, with
//!   HTTP helpers.
//!
//! No feature enables a `std`, a critical-section implementation, an embassy time driver
//! or a tick rate: those are the final binary's choices.
#![no_std]
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
pub mod hedge;
pub mod proto;
pub mod registry;
pub mod sketch;
mod sync;
#[cfg(feature = "tower")]
pub mod tower;
pub mod window;

pub use clock::{Clock, Instant, ManualClock};
pub use sketch::DDSketch;

/// The README's examples, compiled and run as doc tests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
