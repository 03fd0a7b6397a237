//! An OpenTelemetry exponential histogram that scales itself:
//! [`ExponentialSketch<C, B>`](ExponentialSketch), `B` buckets of counters `C`.
//!
//! A [`DDSketch`](super::DDSketch) tracks a range chosen in advance. This sketch needs none:
//! it starts at the finest scale and, when a value falls outside its `B` buckets, halves
//! its scale in place (bucket `i` becomes `i >> 1`, pairs of buckets merge) as often as
//! the lowest and highest value need, exactly as the OpenTelemetry SDKs aggregate an
//! exponential histogram with `max_size = B`. So for the same values it has the SDKs'
//! scale, offset and bucket counts (`tests/exponential_interop.rs` compares them with the
//! Python SDK's at several `B`), always at the finest scale its values allow, in memory
//! fixed at compile time.
//!
//! # Exact buckets, integer operations only
//!
//! The index of a value is found from its float's exponent and its mantissa against a
//! table of the 256 bucket edges of one power of two at scale 8 (the OpenTelemetry
//! specification's lookup-table method; a second table, by the mantissa's top 9 bits,
//! leaves one comparison to make); OpenTelemetry's buckets nest (the
//! index at scale `s` is the index at `s + 1` shifted right by one), so a shift gives the
//! index at every coarser scale. No float arithmetic and no division, for integers and
//! floats alike, at every scale: the whole record path suits a core without an FPU
//! (`.ci/check-int-path.sh` checks the Cortex-M0's image).
//!
//! The index is exact: for a `u64`, the bucket of the integer itself (not of its nearest
//! `f64`); for an `f64`, of the float. The SDKs compute `floor(ln(v) * 2^scale / ln 2)` at
//! scales above 0, which may put a value within `(|ln v| + 1) * 2^-50` (relative) of a
//! bucket edge in the neighbouring bucket (see [`OtelMapping`](super::OtelMapping)'s
//! docs; the integer 2^49 - 2, `2^-48` below the edge 2^49, is a bucket high in the
//! Python SDK): there this
//! sketch and an SDK can disagree, and on integers of 2^53 or more, which an SDK rounds to
//! a float first. Powers of two (edges at every scale) both special-case exactly.
//!
//! Scale 8 is the finest because of the tables: 256 `u64` edges are 2 KiB of flash (and
//! the slices' counts 512 bytes), and each finer scale would double them. It is Prometheus's finest native-histogram schema
//! too, and little is lost below it: `B` buckets at scale 8 span a factor of only
//! `2^(B / 256)` (1.54 for OpenTelemetry's default of 160 buckets), so wider data
//! downscales past it anyway.
//!
//! # State
//!
//! The counters are a type of the user's choice ([`Counter`]: `u8` to `u64`; a full one
//! drops what would overflow it, and the sketch counts the values dropped). The buckets
//! are a ring (bucket `i` at `i - base`, wrapped by one conditional add), so a value
//! below the lowest bucket moves nothing; only a downscale moves counts. The empty state
//! is all zero bytes, and [`new`](ExponentialSketch::new) is `const`.
//!
//! One idea per file: `index` (the table, the exact index, the mapping of a scale),
//! `downscale` (the SDKs' rule for the change of scale, and the collapse of the ring in
//! place), `loss` (how values a collapse or merge drops are valued), `counter` (the
//! counter widths), `sketch` (the sketch), `rank` (its rank queries).

mod counter;
pub(crate) mod downscale;
pub(crate) mod index;
mod loss;
mod rank;
mod sketch;

pub use counter::Counter;
pub use sketch::ExponentialSketch;
pub(crate) use sketch::Point;
