//! Prometheus native histograms: a sketch of OpenTelemetry buckets written as a
//! Prometheus `MetricFamily` in the protobuf exposition format Prometheus scrapes native
//! histograms in, or as a classic histogram in the text format, into a caller's buffer.
//! No heap, no panics.
//!
//! ```
//! use tailguard::prometheus::{encode_metric_family, Format};
//! use tailguard::sketch::presets;
//!
//! let mut latency = presets::otel_latency(); // scale 5: schema 5, 1.08 %
//! for ns in [4_000_000u64, 5_000_000, 48_000_000] {
//!     latency.record_u64(ns);
//! }
//! // In a /metrics handler: the format the scrape's Accept header asks for.
//! let format = Format::from_accept(
//!     "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited",
//! );
//! let mut body = [0u8; 1024];
//! let len = format
//!     .encode("rpc_latency_ns", "RPC latency (ns)", &latency, &[("route", "/api")], &mut body)
//!     .unwrap();
//! assert_eq!(len, encode_metric_family("rpc_latency_ns", "RPC latency (ns)", &latency,
//!     &[("route", "/api")], &mut [0u8; 1024]).unwrap());
//! // Serve &body[..len] with `Content-Type: format.content_type()`.
//! ```
//!
//! `examples/prometheus_gateway.rs` serves a hedger's window this way over hyper, and
//! `.ci/prometheus.sh` has a real Prometheus (2.42, `--enable-feature=native-histograms`)
//! scrape two of them and checks its PromQL answers against tailguard's merged sketch.
//!
//! # From bins to buckets
//!
//! Only sketches of OpenTelemetry buckets are written, and that is checked by the types:
//! the encoders take a [`NativeHistogram`], which is
//! [`DDSketch<OtelMapping, N>`](crate::sketch::DDSketch) or
//! [`ExponentialSketch<C, B>`](crate::sketch::ExponentialSketch) (any counter, any size),
//! so a DataDog-mapped sketch (`LogMapping`, `CubicMapping`, `IntMapping`) does not
//! compile. Its bins are not Prometheus's buckets; re-binning would spread a bin over two
//! or more buckets, inventing where its values were. Record into an `OtelMapping` sketch
//! ([`presets::otel_latency`](crate::sketch::presets::otel_latency)) or an
//! `ExponentialSketch` ([`presets::OtelAuto`](crate::sketch::presets::OtelAuto)) instead.
//!
//! * **Schema.** Prometheus's schema is OpenTelemetry's scale, for scales `-4..=8`.
//!   A finer sketch (scale `s` up to 20) is downscaled exactly to schema 8: bin `i` is in
//!   the schema-8 bucket `i >> (s - 8)`, and the `2^(s - 8)` bins of a bucket add up. A
//!   sketch coarser than `-4` is refused ([`EncodeError::ScaleTooCoarse`]): its buckets
//!   straddle Prometheus's. An `ExponentialSketch` is written at the scale it has
//!   reached (at most 8: schema = scale), so successive scrapes of one that downscaled
//!   change schema, which Prometheus handles as client_golang's own downscaling; once it
//!   is coarser than `-4` (its values span more than about `16 * B` powers of two: only
//!   a small `B`, the floats spanning 2,098) it is refused.
//! * **Indices.** OpenTelemetry's bucket `i` is `(b^i, b^(i+1)]`, Prometheus's bucket
//!   `i` is `(b^(i-1), b^i]`: the same bucket has the index one higher in Prometheus.
//!   The encoders add the one (after downscaling).
//! * **Spans and deltas.** The non-empty buckets, as spans (the first offset the first
//!   index, each next one the count of empty buckets since the span before) and packed
//!   `sint64` deltas (the first count, then each count minus the one before). A run of
//!   one or two empty buckets stays inside a span as zero counts (a new span costs more
//!   bytes), as client_golang writes them; three or more start a new span.
//! * **Zero bucket.** A `DDSketch`'s zero bin (zeros, and every value below
//!   [`min_trackable`](crate::sketch::DDSketch::min_trackable)) is the zero count; the
//!   threshold is the float just below `min_trackable`, always above 0 (Prometheus
//!   stores an empty histogram whose threshold is 0 as a classic one; when
//!   `min_trackable` is the smallest subnormal, with no positive float below it, the
//!   threshold is `2^-1024`, an `ExponentialSketch`'s, below the subnormals' bucket). Values the sketch
//!   clamped into its top bin are in the top bucket, as the sketch holds them. An
//!   `ExponentialSketch`'s zero count (`0` and `-0.0`) is the zero count, under a
//!   threshold of `2^-1024` at every scale: above 0, and at or below the lower edge of
//!   the lowest bucket it can have at any schema (that of `2^-1022`, `(2^-1024, 2^-1008]`
//!   at schema -4), so Prometheus never folds a bucket into the zero bucket nor widens
//!   the threshold, and one threshold serves a sketch whatever scale it reaches. Only the
//!   subnormals, which it holds in the bucket of `2^-1022` as the SDKs do, lie at or
//!   below it.
//! * **Count and sum** are the sketch's (the sum exact). A bucket count above `i64::MAX`
//!   (only an `ExponentialSketch<u64, _>` can hold one) is written as `i64::MAX`, the
//!   largest delta the `sint64` fields carry: its buckets then sum to less than the
//!   count. No negative buckets: tailguard
//!   records no negative values. Min and max have no field in Prometheus's histogram.
//! * **Units** are the sketch's: a latency preset holds nanoseconds, so name the metric
//!   `..._ns` or `..._nanoseconds`. Scaling to seconds would move every bucket edge
//!   (`1e-9` is not a power of two) and so cannot be done bucket for bucket.
//!
//! # The message
//!
//! One length-delimited `MetricFamily` (prefixed by its varint length, the format
//! `application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily;
//! encoding=delimited`), with the field numbers of Prometheus's own
//! `prompb/io/prometheus/client/metrics.proto` (proto2):
//!
//! ```text
//! MetricFamily { string name = 1; string help = 2; MetricType type = 3 (HISTOGRAM = 4);
//!     repeated Metric metric = 4; }
//! Metric { repeated LabelPair label = 1; Histogram histogram = 7; }
//! LabelPair { string name = 1; string value = 2; }
//! Histogram { uint64 sample_count = 1; double sample_sum = 2; sint32 schema = 5;
//!     double zero_threshold = 6; uint64 zero_count = 7;
//!     repeated BucketSpan positive_span = 12; repeated sint64 positive_delta = 13 [packed]; }
//! BucketSpan { sint32 offset = 1; uint32 length = 2; }
//! ```
//!
//! Several sketches in one response: one [`Family`] per metric name, with a [`Series`]
//! per label set (a route each, say), written by [`Format::encode_family`] (one
//! `MetricFamily` with a `Metric` per series, or one `# TYPE` line before every series'
//! samples, as Prometheus requires of a name's samples); families one after the other
//! (the delimited format is a sequence of them). The metric name must be
//! `[a-zA-Z_:][a-zA-Z0-9_:]*` and each label name `[a-zA-Z_][a-zA-Z0-9_]*` and not `le`
//! ([`EncodeError::InvalidName`]); label values are any UTF-8; two series of one name
//! with the same label set are [`EncodeError::DuplicateSeries`].
//!
//! # HTTP
//!
//! [`Format::from_accept`] picks the exposition from a scrape's `Accept` header and
//! [`Format::content_type`] names it. With the `std` feature, `scrape(accept, families)`
//! is the whole answer of a `/metrics` handler (the content type and the body, in a
//! `Vec`), for any HTTP server: `examples/prometheus_gateway.rs` serves it with hyper.
//! The library brings no HTTP dependency for it.

// One concept per file: `message` (the field numbers), `buckets` (bins as Prometheus's
// buckets: schema, downscaling, spans, deltas), `kind` (the sketches written), `family`
// (a name's series), `names`, `protobuf`, `text`, `format`, `scrape` (a handler's answer,
// `std`), `error`.
mod buckets;
mod error;
mod family;
mod format;
mod kind;
mod message;
mod names;
mod protobuf;
#[cfg(feature = "std")]
mod scrape;
#[cfg(test)]
mod test_decode;
mod text;

pub use error::EncodeError;
pub use family::{Family, Series};
pub use format::Format;
pub use kind::NativeHistogram;
pub use protobuf::{encode_metric_family, metric_family_len};
#[cfg(feature = "std")]
#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
pub use scrape::{scrape, Scrape};
pub use text::{encode_text, text_len};
