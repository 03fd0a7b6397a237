//! An allocation-free DDSketch: a quantile sketch with a relative-error guarantee.
//!
//! [`DDSketch<M, N>`](DDSketch) keeps `N` bins (fixed at compile time) of 32-bit counters
//! over a geometric range of values; an [`IndexMapping`] `M` says which bin a value falls
//! in. Any quantile of the recorded values is returned within relative error `alpha` of
//! the exact sample quantile, for every value inside the trackable range (Masson, Rim and
//! Lee, PVLDB 2019). Recording is O(1), merging is element-wise addition.
//!
//! # Mappings
//!
//! | mapping | bins per factor of 10 at 1 % | record cost | speaks |
//! |---|---|---|---|
//! | [`LogMapping`] | 116 | a table-driven `ln` (`libm`'s near bin edges) | DataDog `NONE`, bin for bin with Go and Java |
//! | [`CubicMapping`] | 117 | bit extraction, 3 multiply-adds | DataDog `CUBIC`, bin for bin with Java (and Go but for edge cases) |
//! | [`IntMapping`] | 213 (alpha rounds down to 0.78 %) | one CLZ, two shifts, no float | DataDog `LINEAR`, bin for bin with Go and Java |
//! | [`OtelMapping`] | 213 at scale 6 (0.54 %), 106 at scale 5 (1.08 %) | one `ln` (bits only at scales up to 0) | OpenTelemetry exponential histograms, bucket for bucket ([`otlp`](crate::otlp)) |
//!
//! Each type's docs say exactly how its bins match the other libraries'; a message of
//! another mapping can still be read, re-binned with a stated error bound
//! ([`proto::decode_rebinned`](crate::proto::decode_rebinned)).
//!
//! ## Which mapping on which core
//!
//! | core | mapping | why |
//! |---|---|---|
//! | Cortex-M0/M0+, RV32IMC (no FPU) | [`IntMapping`] | every `f64` operation is a call to a software routine, and the integer path needs none |
//! | Cortex-M4F, M33F (single-precision FPU) | [`IntMapping`] | the FPU does `f32` only: `f64`, which the other mappings compute in, is software there too |
//! | Cortex-M7 with a double-precision FPU | either | `f64` is in hardware; [`IntMapping`] still avoids the soft-float code size |
//! | x86-64, aarch64 | [`CubicMapping`] or [`LogMapping`] | a hardware `f64` unit: the cubic mapping is the fastest 1 % mapping, the logarithmic one the smallest and DataDog's default |
//!
//! With [`IntMapping`] the whole hedge path is integer-only: recording, the window's
//! refresh of its cached quantile, the hedge threshold
//! ([`Window::cached_upper_bound`](crate::window::Window::cached_upper_bound)), the hedger's
//! decisions and both budgets link no soft-float helper and no division on a Cortex-M
//! (`.ci/check-int-path.sh` checks the Cortex-M0 and Cortex-M4F images), and so do the
//! integer rank queries ([`rank_u64`](DDSketch::rank_u64) and the window's). Queries that
//! return an `f64` ([`quantile`](DDSketch::quantile), `cached_quantile`) and encoding
//! still compute in `f64`: call them off the hot path.
//!
//! # Range
//!
//! The trackable range follows from the mapping's `alpha`, `N` and the smallest value to
//! track (a sketch's [`BinLayout`]): bins cover `[min_trackable, max_trackable)`, and
//! `max_trackable` is about `min_trackable * gamma^N`. Values outside it are never lost:
//!
//! * zero (`-0.0` is recorded as `+0.0`) and positive values below the range count in
//!   the *zero bin* (reported as 0, or as the exact minimum when that is larger), as
//!   DataDog's sketches do;
//! * values above the range, and `+inf`, go to the top bin and are counted by
//!   [`clamped`](DDSketch::clamped); `+inf` enters `min`, `max` and `sum` as
//!   [`max_trackable`](DDSketch::max_trackable);
//! * NaN and negative values are rejected with a [`RecordError`] and change nothing.
//!
//! ```
//! use tailguard::sketch::{DDSketch, LogMapping};
//!
//! // 1 % over 1 .. 10,000 (milliseconds, say: any unit) in 512 bins.
//! let mut s = DDSketch::<LogMapping, 512>::for_range(0.01, 1.0, 1e4).unwrap();
//! (1..=1000).for_each(|ms| s.record(f64::from(ms)).unwrap());
//! let p99 = s.quantile(0.99).unwrap().unwrap();
//! assert!((p99 - 990.0).abs() <= 0.01 * 990.0);
//! s.record(0.0).unwrap(); // the zero bin
//! s.record(1e9).unwrap(); // above the range: the top bin, counted
//! assert!(s.record(f64::NAN).is_err()); // rejected: nothing changes
//! assert_eq!((s.count(), s.zero_count(), s.clamped()), (1002, 1, 1));
//! ```
//!
//! # Counters
//!
//! Bin counters are `u32` (so the atomic version stays on native 32-bit atomics on
//! microcontrollers), and saturate at `u32::MAX`: a record that would overflow a bin is
//! dropped from the bins and counted by [`saturated`](DDSketch::saturated) instead.
//! [`count`](DDSketch::count) is a `u64`.
//!
//! # Rank queries
//!
//! [`rank`](DDSketch::rank) counts the values at or below a value and
//! [`fraction_at_or_below`](DDSketch::fraction_at_or_below) gives their share ("what share
//! answered within 100 ms", for a latency-band SLO), on [`DDSketch`], [`AtomicSketch`] and
//! the [`Window`](crate::window::Window): within the bins' relative error in value, with
//! the ends exact. The guarantee is stated on [`DDSketch::rank`].
//!
//! # Auto-scaling
//!
//! [`ExponentialSketch<C, B>`](ExponentialSketch) needs no range: `B` OpenTelemetry
//! buckets of counters `C` (`u8` to `u64`, [`Counter`]) that start at scale 8 and
//! downscale in place as the values spread, exactly as the OpenTelemetry SDKs do with
//! `max_size = B`, always at the finest scale the values allow. Its record path is integer
//! only at every scale, with exact buckets.
//!
//! # Presets
//!
//! [`presets`] names ready-made configurations for latencies in nanoseconds from 1 µs to
//! 100 s, with their sizes, and [`McuLatency`](presets::McuLatency), for device-side
//! latencies (100 µs to 10 s) on a small microcontroller.

mod atomic;
pub(crate) mod cdf;
mod ddsketch;
mod error;
pub(crate) mod exponential;
mod keys;
mod layout;
pub(crate) mod mapping;
pub mod presets;
pub(crate) mod rank;
mod scan;
mod stats;

pub use atomic::AtomicSketch;
pub(crate) use ddsketch::sum_bounds;
pub use ddsketch::{Bin, DDSketch};
pub use error::{
    ConfigError, InvalidQuantile, InvalidValue, MergeError, RecordError, RecordSliceError,
};
pub use exponential::{Counter, ExponentialSketch};
pub(crate) use keys::{extremes_within, key_of_f64, key_of_u64, max_of_key, value_of_key};
pub use layout::BinLayout;
pub use mapping::{CubicMapping, IndexMapping, IntMapping, Interpolation, LogMapping, OtelMapping};
