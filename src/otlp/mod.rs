//! OpenTelemetry exponential histograms: encode a sketch as an OTLP
//! `ExponentialHistogramDataPoint` into a caller's buffer, and decode one into a sketch;
//! wrap sketches into a whole OTLP/HTTP export body ([`ExportRequest`],
//! [`encode_export_request`]) that a collector accepts as it is. No heap, no panics on
//! any input.
//!
//! The sketch's mapping is [`OtelMapping`](crate::sketch::OtelMapping), whose bins *are*
//! OpenTelemetry's buckets at its scale (base `2^(2^-scale)`, upper-inclusive), so
//! nothing is re-binned either way: what a collector, Prometheus (as native histograms)
//! or any OpenTelemetry backend receives is bucket for bucket what the OpenTelemetry SDK
//! would have built from the same values (`tests/otel_interop.rs` checks it against the
//! Python SDK at scales 0 to 8). [`presets::otel_latency`](crate::sketch::presets::otel_latency)
//! is a ready-made one (scale 5, 1.08 %, 1 µs to 100 s).
//!
//! The message (`opentelemetry/proto/metrics/v1/metrics.proto`), the fields tailguard
//! reads and writes:
//!
//! ```text
//! ExponentialHistogramDataPoint { fixed64 start_time_unix_nano = 2; fixed64 time_unix_nano = 3;
//!     fixed64 count = 4; optional double sum = 5; sint32 scale = 6; fixed64 zero_count = 7;
//!     Buckets positive = 8; Buckets negative = 9; optional double min = 12;
//!     optional double max = 13; double zero_threshold = 14; }
//! Buckets { sint32 offset = 1; repeated uint64 bucket_counts = 2 [packed]; }
//! ```
//!
//! ```
//! use tailguard::otlp::{self, Timestamps};
//! use tailguard::sketch::presets;
//!
//! let mut device = presets::otel_latency();
//! for ns in [4_000_000u64, 5_000_000, 48_000_000] {
//!     device.record_u64(ns);
//! }
//! let times = Timestamps::new(1_700_000_000_000_000_000, 1_700_000_060_000_000_000);
//! let mut buf = [0u8; 512];
//! let len = otlp::encode(&device, times, &mut buf).unwrap();
//! assert_eq!(len, otlp::encoded_len(&device, times));
//!
//! // In a collector-side Rust process: merge it into a sketch of the same scale.
//! let mut total = presets::otel_latency();
//! let report = otlp::decode_into(&buf[..len], &mut total).unwrap();
//! assert_eq!(report.added, 3);
//! assert!(report.exact_stats);
//! assert!(total.bins().eq(device.bins()));
//! ```
//!
//! # Encoding
//!
//! [`encode`] writes the sketch's bins as the positive buckets (`offset` is the lowest
//! non-empty bin's index, then one count per bin up to the highest non-empty one), the
//! count, and the exact sum, min and max the sketch keeps. The data point is only the
//! histogram; the times are the caller's, who passes them ([`Timestamps`]).
//!
//! # Exporting
//!
//! A collector (OTLP/HTTP `POST /v1/metrics`, or gRPC) takes an
//! `ExportMetricsServiceRequest`: the resource, the instrumentation scope, and the metrics
//! (name, unit, temporality) around the points. [`encode_export_request`] writes one from
//! an [`ExportRequest`] of borrowed parts (attributes as [`KeyValue`]s, one [`Metric`] per
//! name, one [`DataPoint`] per sketch, sketches of any size), so that a firmware without a
//! protobuf library can send what it sketched. `tests/otlp_export.rs` checks the body
//! against opentelemetry-proto's parser and the Python SDK's OTLP exporter.
//!
//! * **Zero bucket.** The sketch's zero bin holds zeros and every value below its range
//!   ([`min_trackable`](crate::sketch::DDSketch::min_trackable)): it is written as
//!   `zero_count`, with `zero_threshold` the largest float below `min_trackable` (OTLP's
//!   zero bucket is the closed interval `[-zero_threshold, zero_threshold]`). The
//!   OpenTelemetry SDK writes threshold 0 (it buckets every non-zero value); so the two
//!   agree on every field but this one when no value is below the range.
//! * **Above the range.** Values the sketch clamped into its top bin are in the top
//!   bucket, as the sketch holds them; `max` still says how large they were.
//! * **Negative buckets** are never written: tailguard records no negative values.
//! * An empty sketch writes no count, sum, min, max or buckets (protobuf's defaults).
//!
//! # Decoding
//!
//! [`decode_into`] adds a data point's values to a sketch of the same scale, or coarser:
//!
//! * **Same scale:** bucket `i` is the sketch's bin `i`.
//! * **Finer message** (scale `s + d`): bucket `i` lies inside the sketch's bucket
//!   `i >> d` (`2^d` buckets of the finer scale make one of the coarser), so the buckets
//!   are downscaled exactly, as the SDKs downscale. The sketch then holds what recording
//!   the same values at its own scale would hold (checked against the SDK's own points in
//!   `tests/otel_interop.rs`), except for values the finer scale's logarithm put across
//!   an edge: within `(|ln v| + 1) * 2^-50` of one, powers of two included (see
//!   [`OtelMapping`](crate::sketch::OtelMapping#values-a-hair-from-an-edge-scale--0)).
//!   They stay in the bucket the message gave them.
//! * **Coarser message:** refused with [`DecodeError::CoarserScale`]. A coarse bucket
//!   straddles several fine bins; splitting it would invent a distribution. Decode it
//!   into a sketch of the message's scale ([`read_scale`]), or coarser, instead.
//! * Buckets outside the sketch's range are clamped and counted ([`Decoded`]), as
//!   `record` does with values; counts above what a bin holds saturate and are counted.
//! * `zero_count` goes to the zero bin. If the message's `zero_threshold` reaches into
//!   the sketch's bins, those values (which may be as large as the threshold) are
//!   counted in [`Decoded::wide_zero`].
//! * Negative buckets with any non-zero count are [`DecodeError::NegativeValues`], as
//!   DDSketch messages with negative values are for [`proto`](crate::proto).
//! * `count` must equal the zero count plus every bucket count
//!   ([`DecodeError::Count`]); the scale must be in `-10..=20`.
//! * **Sum, min and max** are taken from the message when they are present and
//!   consistent with the buckets (min in the lowest bin that received values, max in the
//!   highest, `min <= max`, a non-negative sum): then they are exact. A min or max one
//!   bin off is consistent where the logarithm method may have put it there (within
//!   its error of the edge between the two bins), as it does for values a hair below a
//!   power of two. `+inf` is a max (or min) as `record` takes it, the end of the range;
//!   a sum of `+inf` (an overflowed or infinite sum) is kept (read, as every sum, within
//!   `[count * min, count * max]`). Otherwise all three come
//!   from the buckets' representative values, within `alpha`, as for DDSketch messages.
//!   [`Decoded::exact_stats`] says which; it is also `false` for a sum no `count` values
//!   between min and max can make, which the sketch reads clamped into that range. Values dropped as saturated leave the sum as
//!   in [`DDSketch::merge`](crate::sketch::DDSketch::merge).
//! * Attributes, flags and exemplars are skipped, as are unknown fields. Repeated
//!   occurrences merge as protobuf says (scalars: the last wins; `bucket_counts`:
//!   concatenated), and packed and unpacked `bucket_counts` are both accepted.
//! * Decoding is all or nothing: the whole message is validated before the sketch is
//!   touched.
//!
//! # The auto-scaling sketch
//!
//! An [`ExponentialSketch`](crate::sketch::ExponentialSketch) is the other
//! [`OtelSketch`]: [`encode`], [`encoded_len`], [`decode_into`] and [`DataPoint`] take it
//! as they take a `DDSketch`. It is written at its current scale, its buckets from
//! [`offset`](crate::sketch::ExponentialSketch::offset) up (as
//! [`bucket_counts`](crate::sketch::ExponentialSketch::bucket_counts) gives them), with the
//! count, zero count, exact sum, min and max, and a zero threshold of 0 (its zero bucket
//! holds zeros only): the point the SDKs write for the same values with `max_size = B`.
//!
//! ```
//! use tailguard::otlp::{self, Timestamps};
//! use tailguard::sketch::ExponentialSketch;
//!
//! let mut device = ExponentialSketch::<u16, 64>::new();
//! (1..=1_000u64).for_each(|us| device.record_u64(us * 1_000));
//! let mut buf = [0u8; 256];
//! let len = otlp::encode(&device, Timestamps::default(), &mut buf).unwrap();
//!
//! let mut total = ExponentialSketch::<u32, 160>::new(); // more buckets: finer
//! total.record_u64(5_000_000);
//! otlp::decode_into(&buf[..len], &mut total).unwrap();
//! assert_eq!((total.count(), total.scale()), (1_001, device.scale())); // the coarser one
//! assert_eq!(total.max(), Some(5e6));
//! ```
//!
//! ## Decoding into an `ExponentialSketch`
//!
//! A point merges in as another sketch would ([`merge`](crate::sketch::ExponentialSketch::merge)),
//! exactly, whatever the two scales:
//!
//! * A point finer than the sketch (finer than 8 included, up to 20) is downscaled to it:
//!   its bucket `i` is inside the sketch's bucket `i >> d`. A coarser one downscales the
//!   sketch, in place, to its scale; and if the union of the two spans more than `B`
//!   buckets, both go further down, as the SDKs do, until it fits. Nothing is lost (but
//!   counts a full counter or a count at `u64::MAX` cannot hold: [`Decoded::saturated`],
//!   as in a merge). So the point of an SDK with `max_size = B` and `max_scale = 8`
//!   decodes into an empty `ExponentialSketch<_, B>` bucket for bucket
//!   (`tests/exponential_interop.rs`).
//! * Only non-empty buckets count: empty ones at either end of the point's (the SDKs'
//!   backing array may leave some) do not widen the span, and a point of zeros alone does
//!   not change the sketch's scale.
//! * A point with a non-empty bucket beyond the floats' range, which no scale down to -10
//!   holds in `B >= 2` buckets, is refused with [`DecodeError::BeyondFloats`], and one
//!   with negative values with [`DecodeError::NegativeValues`]; both change nothing. The
//!   scale must be in `-10..=20` and the count consistent, as for a `DDSketch`.
//! * Sum, min and max are the point's when present and consistent with its buckets (as
//!   for a `DDSketch`: min in the lowest class holding values, the zero bucket up to its
//!   threshold or a bucket, max in the highest, the logarithm method's error allowed at
//!   an edge); otherwise the buckets' representatives. `+inf` is held as `f64::MAX`.
//!   [`Decoded::exact_stats`] says which. A `zero_threshold` above 0 counts the zeros
//!   added in [`Decoded::wide_zero`]; `below_range` and `above_range` are 0 (the sketch
//!   has no range).

// One concept per file: `message` (the data point, field by field, over the protobuf
// primitives of `crate::wire`), `timestamps`, `kind` (the sketches that are points),
// `encoding`, `decoding` (a `DDSketch`'s), `exponential` (an `ExponentialSketch`'s both
// ways), `error`, and for the export body `attributes` and `export` (the messages
// around the points).
mod attributes;
mod decoding;
mod encoding;
mod error;
mod exponential;
mod export;
mod kind;
pub(crate) mod message;
#[cfg(test)]
mod test_msg;
mod timestamps;

/// Encoding fails only for a buffer too small: the same error as the DDSketch encoder's.
pub use crate::proto::EncodeError;
pub use attributes::{KeyValue, Value};
pub use decoding::{decode_into, read_scale, Decoded};
pub use encoding::{encode, encoded_len};
pub use error::DecodeError;
pub use export::{
    encode_export_request, export_request_len, DataPoint, ExportRequest, Metric, Scope, Temporality,
};
pub use kind::OtelSketch;
pub use timestamps::Timestamps;
