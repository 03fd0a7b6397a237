//! A whole OTLP/HTTP export body: [`ExportRequest`] (one resource, one scope, its
//! [`Metric`]s of [`DataPoint`]s), written by [`encode_export_request`] into a caller's
//! buffer, with every nested message's length computed before it is written (no heap).
//!
//! ```text
//! ExportMetricsServiceRequest { repeated ResourceMetrics resource_metrics = 1; }
//! ResourceMetrics { Resource resource = 1; repeated ScopeMetrics scope_metrics = 2; }
//! Resource { repeated KeyValue attributes = 1; }
//! ScopeMetrics { InstrumentationScope scope = 1; repeated Metric metrics = 2; }
//! InstrumentationScope { string name = 1; string version = 2; repeated KeyValue attributes = 3; }
//! Metric { string name = 1; string description = 2; string unit = 3;
//!     ExponentialHistogram exponential_histogram = 10; }
//! ExponentialHistogram { repeated ExponentialHistogramDataPoint data_points = 1;
//!     AggregationTemporality aggregation_temporality = 2; }
//! ```

use super::attributes::{attributes_len, str_field_len, write_attributes, write_str_field};
use super::kind::sealed::Sealed;
use super::{EncodeError, KeyValue, OtelSketch, Timestamps};
use crate::wire::{len_field_len, varint_field_len, Writer};
use core::fmt;

// Field numbers (opentelemetry/proto: collector/metrics/v1/metrics_service.proto,
// metrics/v1/metrics.proto, resource/v1/resource.proto, common/v1/common.proto).
const RESOURCE_METRICS: u32 = 1; // ExportMetricsServiceRequest
const RESOURCE: u32 = 1; // ResourceMetrics
const SCOPE_METRICS: u32 = 2;
const RESOURCE_ATTRIBUTES: u32 = 1; // Resource
const SCOPE: u32 = 1; // ScopeMetrics
const METRICS: u32 = 2;
const SCOPE_NAME: u32 = 1; // InstrumentationScope
const SCOPE_VERSION: u32 = 2;
const SCOPE_ATTRIBUTES: u32 = 3;
const METRIC_NAME: u32 = 1; // Metric
const METRIC_DESCRIPTION: u32 = 2;
const METRIC_UNIT: u32 = 3;
const EXPONENTIAL_HISTOGRAM: u32 = 10;
const DATA_POINTS: u32 = 1; // ExponentialHistogram
const TEMPORALITY: u32 = 2;
const POINT_ATTRIBUTES: u32 = 1; // ExponentialHistogramDataPoint

/// What a metric's points count from: OTLP's `AggregationTemporality`.
///
/// ```
/// use tailguard::otlp::Temporality;
/// // A window snapshot or a sketch cleared at every export: each point is an interval.
/// let t = Temporality::Delta;
/// assert_ne!(t, Temporality::Cumulative);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Temporality {
    /// Each point holds the values since the previous export (`start_unix_nano` is the
    /// previous export's time): a window snapshot, or a sketch cleared after each export.
    Delta,
    /// Each point holds every value since a fixed start (`start_unix_nano`, the same at
    /// every export): a sketch never cleared.
    Cumulative,
}

impl Temporality {
    /// `AGGREGATION_TEMPORALITY_DELTA` is 1, `_CUMULATIVE` 2 (0 is "unspecified").
    const fn code(self) -> u64 {
        match self {
            Temporality::Delta => 1,
            Temporality::Cumulative => 2,
        }
    }
}

/// The instrumentation scope the metrics come from (OTLP's `InstrumentationScope`):
/// a name, and optionally a version and attributes.
///
/// ```
/// use tailguard::otlp::Scope;
/// let scope = Scope::new("tailguard").with_version("0.1.0");
/// # let _ = scope;
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Scope<'a> {
    name: &'a str,
    version: &'a str,
    attributes: &'a [KeyValue<'a>],
}

impl<'a> Scope<'a> {
    /// The scope `name`, with no version ("") and no attributes.
    ///
    /// ```
    /// use tailguard::otlp::Scope;
    /// let scope = Scope::new("pump.firmware");
    /// # let _ = scope;
    /// ```
    pub const fn new(name: &'a str) -> Self {
        Scope {
            name,
            version: "",
            attributes: &[],
        }
    }

    /// With `version`.
    ///
    /// ```
    /// use tailguard::otlp::Scope;
    /// let scope = Scope::new("pump.firmware").with_version("2.1.0");
    /// # let _ = scope;
    /// ```
    pub const fn with_version(self, version: &'a str) -> Self {
        Scope { version, ..self }
    }

    /// With `attributes`.
    ///
    /// ```
    /// use tailguard::otlp::{KeyValue, Scope, Value};
    /// let attrs = [KeyValue::new("build", Value::Str("release"))];
    /// let scope = Scope::new("pump.firmware").with_attributes(&attrs);
    /// # let _ = scope;
    /// ```
    pub const fn with_attributes(self, attributes: &'a [KeyValue<'a>]) -> Self {
        Scope { attributes, ..self }
    }
}

/// One exponential-histogram data point: an [`OtelSketch`] of any size (a
/// [`DDSketch`](crate::sketch::DDSketch) of [`OtelMapping`](crate::sketch::OtelMapping)
/// or an [`ExponentialSketch`](crate::sketch::ExponentialSketch)), and the point's
/// attributes. One metric's points may mix both kinds.
///
/// ```
/// use tailguard::otlp::{DataPoint, KeyValue, Value};
/// use tailguard::sketch::{presets, ExponentialSketch};
/// let reads = presets::otel_latency();
/// let writes = ExponentialSketch::<u16, 64>::new();
/// let (r, w) = ([KeyValue::new("op", Value::Str("read"))], [KeyValue::new("op", Value::Str("write"))]);
/// let points = [DataPoint::new(&reads).with_attributes(&r), DataPoint::new(&writes).with_attributes(&w)];
/// # let _ = points;
/// ```
#[derive(Clone, Copy)]
pub struct DataPoint<'a> {
    sketch: &'a dyn Sealed,
    attributes: &'a [KeyValue<'a>],
}

impl<'a> DataPoint<'a> {
    /// The point of `sketch`, written as [`encode`](super::encode) writes it, with no
    /// attributes.
    ///
    /// ```
    /// use tailguard::otlp::DataPoint;
    /// use tailguard::sketch::presets;
    /// let s = presets::otel_latency();
    /// let point = DataPoint::new(&s);
    /// # let _ = point;
    /// ```
    pub const fn new<S: OtelSketch>(sketch: &'a S) -> Self {
        DataPoint {
            sketch,
            attributes: &[],
        }
    }

    /// With `attributes` (OTLP's data-point attributes: what tells this point from the
    /// metric's others, such as the operation or the target).
    ///
    /// ```
    /// use tailguard::otlp::{DataPoint, KeyValue, Value};
    /// use tailguard::sketch::presets;
    /// let s = presets::otel_latency();
    /// let attrs = [KeyValue::new("target", Value::Int(2))];
    /// let point = DataPoint::new(&s).with_attributes(&attrs);
    /// # let _ = point;
    /// ```
    pub const fn with_attributes(self, attributes: &'a [KeyValue<'a>]) -> Self {
        DataPoint { attributes, ..self }
    }

    fn len(&self, times: Timestamps) -> usize {
        attributes_len(self.attributes).saturating_add(self.sketch.body_len(times))
    }
}

impl fmt::Debug for DataPoint<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DataPoint")
            .field("attributes", &self.attributes)
            .finish_non_exhaustive()
    }
}

/// One exponential-histogram metric: its name, description and unit, its temporality,
/// the collection interval of its points, and the points.
///
/// ```
/// use tailguard::otlp::{DataPoint, Metric, Temporality, Timestamps};
/// use tailguard::sketch::presets;
/// let s = presets::otel_latency();
/// let points = [DataPoint::new(&s)];
/// let times = Timestamps::new(1_700_000_000_000_000_000, 1_700_000_060_000_000_000);
/// let metric = Metric::new("rpc.client.duration", Temporality::Delta, times, &points)
///     .with_unit("ns")
///     .with_description("time to the first byte of the answer");
/// # let _ = metric;
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Metric<'a> {
    name: &'a str,
    description: &'a str,
    unit: &'a str,
    temporality: Temporality,
    times: Timestamps,
    points: &'a [DataPoint<'a>],
}

impl<'a> Metric<'a> {
    /// The metric `name` of `points`, all collected over `times`, with no description
    /// and no unit.
    ///
    /// The unit is the sketch's: tailguard's latency presets record nanoseconds (`"ns"`);
    /// OpenTelemetry's semantic conventions prefer seconds, which a sketch recording
    /// seconds as floats gives.
    ///
    /// ```
    /// use tailguard::otlp::{DataPoint, Metric, Temporality, Timestamps};
    /// use tailguard::sketch::presets;
    /// let s = presets::otel_latency();
    /// let points = [DataPoint::new(&s)];
    /// let metric = Metric::new("latency", Temporality::Cumulative, Timestamps::new(1, 2), &points);
    /// # let _ = metric;
    /// ```
    pub const fn new(
        name: &'a str,
        temporality: Temporality,
        times: Timestamps,
        points: &'a [DataPoint<'a>],
    ) -> Self {
        Metric {
            name,
            description: "",
            unit: "",
            temporality,
            times,
            points,
        }
    }

    /// With `description`.
    ///
    /// ```
    /// use tailguard::otlp::{Metric, Temporality, Timestamps};
    /// let m = Metric::new("latency", Temporality::Delta, Timestamps::new(1, 2), &[])
    ///     .with_description("request latency");
    /// # let _ = m;
    /// ```
    pub const fn with_description(self, description: &'a str) -> Self {
        Metric {
            description,
            ..self
        }
    }

    /// With `unit` (UCUM, as OTLP says: `"ns"`, `"ms"`, `"s"`, `"By"`).
    ///
    /// ```
    /// use tailguard::otlp::{Metric, Temporality, Timestamps};
    /// let m = Metric::new("latency", Temporality::Delta, Timestamps::new(1, 2), &[])
    ///     .with_unit("ns");
    /// # let _ = m;
    /// ```
    pub const fn with_unit(self, unit: &'a str) -> Self {
        Metric { unit, ..self }
    }

    /// The `ExponentialHistogram`'s body: the points and the temporality.
    fn histogram_len(&self) -> usize {
        self.points
            .iter()
            .fold(varint_field_len(self.temporality.code()), |len, p| {
                len.saturating_add(len_field_len(p.len(self.times)))
            })
    }

    /// The `Metric`'s body, from its histogram's.
    fn len_with(&self, histogram_len: usize) -> usize {
        str_field_len(self.name.as_bytes())
            .saturating_add(str_field_len(self.description.as_bytes()))
            .saturating_add(str_field_len(self.unit.as_bytes()))
            .saturating_add(len_field_len(histogram_len))
    }

    fn write(&self, w: &mut Writer<'_>) {
        let histogram_len = self.histogram_len();
        w.len_prefix(METRICS, self.len_with(histogram_len));
        write_str_field(w, METRIC_NAME, self.name.as_bytes());
        write_str_field(w, METRIC_DESCRIPTION, self.description.as_bytes());
        write_str_field(w, METRIC_UNIT, self.unit.as_bytes());
        w.len_prefix(EXPONENTIAL_HISTOGRAM, histogram_len);
        for point in self.points {
            w.len_prefix(DATA_POINTS, point.len(self.times));
            write_attributes(w, POINT_ATTRIBUTES, point.attributes);
            point.sketch.write_body(self.times, w);
        }
        w.varint_field(TEMPORALITY, self.temporality.code());
    }
}

/// An OTLP `ExportMetricsServiceRequest`: the body of an OTLP/HTTP `POST /v1/metrics`
/// (`Content-Type: application/x-protobuf`), or of the gRPC `Export` call. One resource
/// (its attributes), one instrumentation scope, and its metrics.
///
/// ```
/// use tailguard::otlp::{self, DataPoint, ExportRequest, KeyValue, Metric, Scope};
/// use tailguard::otlp::{Temporality, Timestamps, Value};
/// use tailguard::sketch::presets;
///
/// let mut latency = presets::otel_latency(); // scale 5, nanoseconds
/// for ns in [4_000_000u64, 5_000_000, 48_000_000] {
///     latency.record_u64(ns);
/// }
/// let resource = [
///     KeyValue::new("service.name", Value::Str("pump-controller")),
///     KeyValue::new("device.id", Value::Int(17)),
/// ];
/// let points = [DataPoint::new(&latency)];
/// let times = Timestamps::new(1_700_000_000_000_000_000, 1_700_000_060_000_000_000);
/// let metrics = [Metric::new("valve.latency", Temporality::Delta, times, &points).with_unit("ns")];
/// let request = ExportRequest::new(&resource, Scope::new("pump.firmware"), &metrics);
///
/// let mut body = [0u8; 512];
/// let len = otlp::encode_export_request(&request, &mut body).unwrap();
/// assert_eq!(len, otlp::export_request_len(&request));
/// // POST &body[..len] to http://collector:4318/v1/metrics as application/x-protobuf.
/// ```
#[derive(Debug, Clone, Copy)]
pub struct ExportRequest<'a> {
    resource: &'a [KeyValue<'a>],
    scope: Scope<'a>,
    metrics: &'a [Metric<'a>],
}

impl<'a> ExportRequest<'a> {
    /// The request of `metrics`, from the resource of `resource` attributes and `scope`.
    ///
    /// ```
    /// use tailguard::otlp::{ExportRequest, Scope};
    /// let empty = ExportRequest::new(&[], Scope::new("s"), &[]);
    /// # let _ = empty;
    /// ```
    pub const fn new(
        resource: &'a [KeyValue<'a>],
        scope: Scope<'a>,
        metrics: &'a [Metric<'a>],
    ) -> Self {
        ExportRequest {
            resource,
            scope,
            metrics,
        }
    }

    fn scope_len(&self) -> usize {
        let scope = &self.scope;
        str_field_len(scope.name.as_bytes())
            .saturating_add(str_field_len(scope.version.as_bytes()))
            .saturating_add(attributes_len(scope.attributes))
    }

    /// The `ScopeMetrics`' body.
    fn scope_metrics_len(&self) -> usize {
        self.metrics
            .iter()
            .fold(len_field_len(self.scope_len()), |len, m| {
                len.saturating_add(len_field_len(m.len_with(m.histogram_len())))
            })
    }

    /// The `ResourceMetrics`' body, from its `ScopeMetrics`'.
    fn resource_metrics_len(&self, scope_metrics_len: usize) -> usize {
        len_field_len(attributes_len(self.resource))
            .saturating_add(len_field_len(scope_metrics_len))
    }
}

/// The length of the body [`encode_export_request`] writes for `request`.
///
/// ```
/// use tailguard::otlp::{export_request_len, ExportRequest, Scope};
/// // resource_metrics { resource {} scope_metrics { scope { name: "s" } } }
/// let request = ExportRequest::new(&[], Scope::new("s"), &[]);
/// assert_eq!(export_request_len(&request), 2 + 2 + 2 + 2 + 3);
/// ```
pub fn export_request_len(request: &ExportRequest<'_>) -> usize {
    len_field_len(request.resource_metrics_len(request.scope_metrics_len()))
}

/// Writes `request` into `buf` as an OTLP `ExportMetricsServiceRequest` (protobuf, the
/// `application/x-protobuf` body of OTLP/HTTP), and returns the number of bytes written
/// ([`export_request_len`]). No heap: every nested message's length is computed before
/// it is written, so each sketch's bins are read a few times.
///
/// Fields are in number order, and empty strings are omitted, as protobuf's serializers
/// write them; the resource and the scope are always written (empty if need be), as the
/// OpenTelemetry SDKs write them. Each point is what [`encode`](super::encode) writes
/// (its zero threshold just below the sketch's range included), after its attributes.
///
/// A buffer shorter than the body is [`EncodeError::BufferTooSmall`] (with the length
/// needed), and nothing is written.
///
/// ```
/// use tailguard::otlp::{encode_export_request, EncodeError, ExportRequest, Scope};
/// let request = ExportRequest::new(&[], Scope::new("s"), &[]);
/// let mut small = [0u8; 4];
/// let err = encode_export_request(&request, &mut small);
/// assert_eq!(err, Err(EncodeError::BufferTooSmall { needed: 11 }));
/// assert_eq!(small, [0; 4]);
/// ```
pub fn encode_export_request(
    request: &ExportRequest<'_>,
    buf: &mut [u8],
) -> Result<usize, EncodeError> {
    let scope_metrics_len = request.scope_metrics_len();
    let resource_metrics_len = request.resource_metrics_len(scope_metrics_len);
    let needed = len_field_len(resource_metrics_len);
    if buf.len() < needed {
        return Err(EncodeError::BufferTooSmall { needed });
    }
    let mut w = Writer::new(buf);
    w.len_prefix(RESOURCE_METRICS, resource_metrics_len);
    w.len_prefix(RESOURCE, attributes_len(request.resource));
    write_attributes(&mut w, RESOURCE_ATTRIBUTES, request.resource);
    w.len_prefix(SCOPE_METRICS, scope_metrics_len);
    w.len_prefix(SCOPE, request.scope_len());
    write_str_field(&mut w, SCOPE_NAME, request.scope.name.as_bytes());
    write_str_field(&mut w, SCOPE_VERSION, request.scope.version.as_bytes());
    write_attributes(&mut w, SCOPE_ATTRIBUTES, request.scope.attributes);
    for metric in request.metrics {
        metric.write(&mut w);
    }
    Ok(w.pos())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::otlp::test_msg::{encode_vec, sketch, Msg};
    use crate::otlp::{decode_into, Value};
    use crate::sketch::presets;
    use crate::wire::{self, test_msg::encoded, WireError};
    use std::vec::Vec;

    fn export_vec(request: &ExportRequest<'_>) -> Vec<u8> {
        encoded(export_request_len(request), |buf| {
            encode_export_request(request, buf)
        })
    }

    /// A `KeyValue` built field by field.
    fn kv(key: &str, value: Msg) -> Msg {
        Msg::default()
            .message(1, Msg::default().raw(key.as_bytes()))
            .message(2, value)
    }

    fn string(s: &str) -> Msg {
        Msg::default().raw(s.as_bytes())
    }

    #[test]
    fn the_bytes_are_what_protobuf_writes() {
        let mut reads = sketch(1);
        reads.record(3.0).unwrap();
        reads.record(16.0).unwrap();
        let mut writes = presets::otel_latency(); // another size and scale
        writes.record_u64(2_000_000);
        let resource = [
            KeyValue::new("service.name", Value::Str("pump")),
            KeyValue::new("rev", Value::Int(-3)),
            KeyValue::new("zero", Value::Int(0)),
            KeyValue::new("ratio", Value::Double(0.5)),
            KeyValue::new("debug", Value::Bool(false)),
            KeyValue::new("id", Value::Bytes(&[0xde, 0xad])),
            KeyValue::new("empty", Value::Str("")),
        ];
        let scope_attrs = [KeyValue::new("build", Value::Bool(true))];
        let op_read = [KeyValue::new("op", Value::Str("read"))];
        let first = [DataPoint::new(&reads).with_attributes(&op_read)];
        let second = [DataPoint::new(&writes), DataPoint::new(&reads)];
        let (t1, t2) = (Timestamps::new(10, 20), Timestamps::new(5, 20));
        let metrics = [
            Metric::new("io", Temporality::Delta, t1, &first)
                .with_unit("s")
                .with_description("io time"),
            Metric::new("w", Temporality::Cumulative, t2, &second),
        ];
        let scope = Scope::new("fw")
            .with_version("1.2")
            .with_attributes(&scope_attrs);
        let bytes = export_vec(&ExportRequest::new(&resource, scope, &metrics));

        let any = Msg::default;
        let resource_msg = any()
            .message(1, kv("service.name", any().message(1, string("pump"))))
            .message(1, kv("rev", any().uint(3, (-3i64) as u64)))
            .message(1, kv("zero", any().uint(3, 0)))
            .message(1, kv("ratio", any().double(4, 0.5)))
            .message(1, kv("debug", any().uint(2, 0)))
            .message(1, kv("id", any().message(7, any().raw(&[0xde, 0xad]))))
            .message(1, kv("empty", any().message(1, any())));
        let scope_msg = any()
            .message(1, string("fw"))
            .message(2, string("1.2"))
            .message(3, kv("build", any().uint(2, 1)));
        let point = |s: &[u8], attrs: Msg| any().raw(&attrs.0).raw(s);
        let io = any()
            .message(1, string("io"))
            .message(2, string("io time"))
            .message(3, string("s"))
            .message(
                10,
                any()
                    .message(
                        1,
                        point(
                            &encode_vec(&reads, t1),
                            any().message(1, kv("op", any().message(1, string("read")))),
                        ),
                    )
                    .uint(2, 1),
            );
        let w = any().message(1, string("w")).message(
            10,
            any()
                .message(1, point(&encode_vec(&writes, t2), any()))
                .message(1, point(&encode_vec(&reads, t2), any()))
                .uint(2, 2),
        );
        let expected = any().message(
            1,
            any()
                .message(1, resource_msg)
                .message(2, any().message(1, scope_msg).message(2, io).message(2, w)),
        );
        assert_eq!(bytes, expected.0);
        // A negative int64 is ten bytes, as protobuf writes it.
        assert_eq!(wire::varint_len((-3i64) as u64), 10);
    }

    #[test]
    fn an_empty_request_has_an_empty_resource_and_scope() {
        let bytes = export_vec(&ExportRequest::new(&[], Scope::new(""), &[]));
        let expected = Msg::default().message(
            1,
            Msg::default()
                .message(1, Msg::default())
                .message(2, Msg::default().message(1, Msg::default())),
        );
        assert_eq!(bytes, expected.0);
    }

    /// Every data point of a request, in order: walked down the nesting.
    fn points_of(bytes: &[u8]) -> Vec<(u64, &[u8])> {
        fn inner(bytes: &[u8], field: u32) -> Vec<&[u8]> {
            let mut found = Vec::new();
            wire::walk(bytes, |f| {
                if f.number == field {
                    found.push(f.bytes()?);
                }
                Ok::<_, WireError>(())
            })
            .unwrap();
            found
        }
        let mut points = Vec::new();
        for rm in inner(bytes, RESOURCE_METRICS) {
            for sm in inner(rm, SCOPE_METRICS) {
                for m in inner(sm, METRICS) {
                    for h in inner(m, EXPONENTIAL_HISTOGRAM) {
                        let mut temporality = 0;
                        wire::walk(h, |f| {
                            if f.number == TEMPORALITY {
                                temporality = f.varint()?;
                            }
                            Ok::<_, WireError>(())
                        })
                        .unwrap();
                        for p in inner(h, DATA_POINTS) {
                            points.push((temporality, p));
                        }
                    }
                }
            }
        }
        points
    }

    #[test]
    fn points_decode_back_into_their_sketches() {
        let mut a = presets::otel_latency();
        let mut b = sketch(3);
        for i in 1..200u64 {
            a.record_u64(i * 1_000_003);
            b.record(i as f64 * 0.37).unwrap();
        }
        b.record(0.0).unwrap();
        let attrs = [KeyValue::new("k", Value::Double(-1.5))];
        let pa = [
            DataPoint::new(&a),
            DataPoint::new(&b).with_attributes(&attrs),
        ];
        let pb = [DataPoint::new(&b)];
        let times = Timestamps::new(1, 2);
        let metrics = [
            Metric::new("a", Temporality::Cumulative, times, &pa),
            Metric::new("b", Temporality::Delta, times, &pb),
        ];
        let bytes = export_vec(&ExportRequest::new(&attrs, Scope::new("s"), &metrics));
        let points = points_of(&bytes);
        assert_eq!(points.len(), 3);
        let temporalities: Vec<u64> = points.iter().map(|p| p.0).collect();
        assert_eq!(temporalities, [2, 2, 1]);
        let mut back_a = presets::otel_latency();
        decode_into(points[0].1, &mut back_a).unwrap();
        assert!(back_a.bins().eq(a.bins()));
        assert_eq!(
            (back_a.sum(), back_a.min(), back_a.max()),
            (a.sum(), a.min(), a.max())
        );
        for (_, p) in &points[1..] {
            let mut back_b = sketch(3);
            let report = decode_into(p, &mut back_b).unwrap();
            assert!(report.exact_stats);
            assert!(back_b.bins().eq(b.bins()));
            assert_eq!(back_b.zero_count(), b.zero_count());
        }
    }

    #[test]
    fn auto_scaling_sketches_are_points_too() {
        let mut fixed = presets::otel_latency();
        let mut auto = crate::sketch::ExponentialSketch::<u16, 32>::new();
        for i in 1..300u64 {
            fixed.record_u64(i * 7_919);
            auto.record_u64(i * 7_919);
        }
        auto.record(0.0).unwrap();
        let points = [DataPoint::new(&fixed), DataPoint::new(&auto)];
        let times = Timestamps::new(1, 2);
        let metrics = [Metric::new("m", Temporality::Delta, times, &points)];
        let bytes = export_vec(&ExportRequest::new(&[], Scope::new("s"), &metrics));
        let found = points_of(&bytes);
        assert_eq!(found.len(), 2);
        // The second point is what `encode` writes for the auto-scaling sketch.
        assert_eq!(
            found[1].1,
            &crate::otlp::test_msg::encode_vec(&auto, times)[..]
        );
        let mut back = crate::sketch::ExponentialSketch::<u16, 32>::new();
        let report = decode_into(found[1].1, &mut back).unwrap();
        assert!(report.exact_stats);
        assert_eq!((back.scale(), back.offset()), (auto.scale(), auto.offset()));
        assert!(back.bucket_counts().eq(auto.bucket_counts()));
    }

    #[test]
    fn a_buffer_too_small_is_refused_at_every_length_and_left_alone() {
        let mut s = presets::otel_latency();
        s.record_u64(1_000);
        s.record_u64(9_000_000);
        let attrs = [
            KeyValue::new("a", Value::Str("b")),
            KeyValue::new("n", Value::Int(i64::MIN)),
        ];
        let points = [DataPoint::new(&s).with_attributes(&attrs)];
        let metrics = [
            Metric::new("m", Temporality::Delta, Timestamps::new(1, 2), &points).with_unit("ns"),
        ];
        let request = ExportRequest::new(
            &attrs,
            Scope::new("s").with_version("v").with_attributes(&attrs),
            &metrics,
        );
        let needed = export_request_len(&request);
        let whole = export_vec(&request);
        assert_eq!(whole.len(), needed);
        for len in 0..needed {
            let mut buf = std::vec![0xa5u8; len];
            assert_eq!(
                encode_export_request(&request, &mut buf),
                Err(EncodeError::BufferTooSmall { needed })
            );
            assert!(buf.iter().all(|&b| b == 0xa5), "written into {len} bytes");
        }
        // A larger buffer: the body, and nothing past it.
        let mut buf = std::vec![0xa5u8; needed + 7];
        assert_eq!(encode_export_request(&request, &mut buf), Ok(needed));
        assert_eq!(&buf[..needed], &whole[..]);
        assert!(buf[needed..].iter().all(|&b| b == 0xa5));
    }

    #[test]
    fn nesting_lengths_of_two_bytes_are_counted() {
        // A metric past 127 bytes: its length (and every enclosing one) is two bytes long.
        let mut s = sketch(4);
        for i in 1..100 {
            s.record(f64::from(i)).unwrap();
        }
        let long = "x".repeat(300);
        let points = [DataPoint::new(&s)];
        let metrics = [Metric::new(
            &long,
            Temporality::Delta,
            Timestamps::new(1, 2),
            &points,
        )];
        let request = ExportRequest::new(&[], Scope::new(&long), &metrics);
        let bytes = export_vec(&request);
        let points = points_of(&bytes);
        assert_eq!(points.len(), 1);
        assert_eq!(points[0].1, &encode_vec(&s, Timestamps::new(1, 2))[..]);
    }
}
