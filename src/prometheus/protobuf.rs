//! The protobuf exposition: a [`Family`] as one delimited `MetricFamily`, each series a
//! `Metric` laid out by a [`MetricLayout`]; [`encode_metric_family`] and
//! [`metric_family_len`] are a family of one series.

use super::buckets::{deltas, Schema, Spans};
use super::family::{Family, Series};
use super::kind::NativeHistogram;
use super::message::{
    FAMILY_HELP, FAMILY_METRIC, FAMILY_NAME, FAMILY_TYPE, LABEL_NAME, LABEL_VALUE,
    METRIC_HISTOGRAM, METRIC_LABEL, POSITIVE_DELTA, POSITIVE_SPAN, SAMPLE_COUNT, SAMPLE_SUM,
    SCHEMA, SPAN_LENGTH, SPAN_OFFSET, TYPE_HISTOGRAM, ZERO_COUNT, ZERO_THRESHOLD,
};
use super::EncodeError;
use crate::wire::FIXED64_FIELD_LEN;
use crate::wire::{len_field_len, sint32_field_len, varint_field_len, varint_len, Writer};

/// `sint64`'s zigzag (the wire module's is `sint32`'s).
fn zigzag64(v: i64) -> u64 {
    (v.wrapping_shl(1) ^ v.wrapping_shr(63)) as u64
}

fn span_len(offset: i32, len: u32) -> usize {
    sint32_field_len(offset).saturating_add(varint_field_len(u64::from(len)))
}

fn label_len(name: &str, value: &str) -> usize {
    len_field_len(name.len()).saturating_add(len_field_len(value.len()))
}

/// The lengths of one series' `Metric`, worked out once (the nested messages' lengths
/// precede them).
struct MetricLayout {
    schema: Schema,
    /// The packed deltas (0 for a sketch with no bins: the field is then left out).
    deltas_len: usize,
    histogram_len: usize,
    metric_len: usize,
}

impl MetricLayout {
    fn of<S: NativeHistogram>(series: &Series<'_, S>) -> Result<MetricLayout, EncodeError> {
        let sketch = series.sketch;
        let schema = Schema::of(&sketch.buckets_mapping())?;
        let deltas_len = deltas(sketch.buckets(), schema)
            .fold(0usize, |len, d| len.saturating_add(varint_len(zigzag64(d))));
        let spans_len = Spans::new(sketch.buckets(), schema).fold(0usize, |len, (offset, n)| {
            len.saturating_add(len_field_len(span_len(offset, n)))
        });
        let mut histogram_len = varint_field_len(sketch.sample_count())
            .saturating_add(FIXED64_FIELD_LEN) // sum
            .saturating_add(sint32_field_len(schema.schema))
            .saturating_add(FIXED64_FIELD_LEN) // zero threshold
            .saturating_add(varint_field_len(sketch.zeros()))
            .saturating_add(spans_len);
        if deltas_len > 0 {
            histogram_len = histogram_len.saturating_add(len_field_len(deltas_len));
        }
        let metric_len = series
            .labels
            .iter()
            .fold(len_field_len(histogram_len), |len, &(n, v)| {
                len.saturating_add(len_field_len(label_len(n, v)))
            });
        Ok(MetricLayout {
            schema,
            deltas_len,
            histogram_len,
            metric_len,
        })
    }
}

/// The length of the `MetricFamily` message (without its delimiting prefix), checking
/// the family first.
fn message_len<S: NativeHistogram>(family: &Family<'_, S>) -> Result<usize, EncodeError> {
    family.check()?;
    let mut len = len_field_len(family.name.len()).saturating_add(varint_field_len(TYPE_HISTOGRAM));
    if !family.help.is_empty() {
        len = len.saturating_add(len_field_len(family.help.len()));
    }
    for series in family.series {
        len = len.saturating_add(len_field_len(MetricLayout::of(series)?.metric_len));
    }
    Ok(len)
}

/// The length of what [`encode_family`] writes, or why it would fail (other than for
/// the buffer).
pub(super) fn family_len<S: NativeHistogram>(family: &Family<'_, S>) -> Result<usize, EncodeError> {
    let len = message_len(family)?;
    Ok(varint_len(len as u64).saturating_add(len))
}

/// Writes `family` as one length-delimited `MetricFamily` with a `Metric` per series.
pub(super) fn encode_family<S: NativeHistogram>(
    family: &Family<'_, S>,
    buf: &mut [u8],
) -> Result<usize, EncodeError> {
    let len = message_len(family)?;
    let needed = varint_len(len as u64).saturating_add(len);
    if buf.len() < needed {
        return Err(EncodeError::BufferTooSmall { needed });
    }
    let mut w = Writer::new(buf);
    w.varint(len as u64);
    w.len_prefix(FAMILY_NAME, family.name.len());
    w.bytes(family.name.as_bytes());
    if !family.help.is_empty() {
        w.len_prefix(FAMILY_HELP, family.help.len());
        w.bytes(family.help.as_bytes());
    }
    w.varint_field(FAMILY_TYPE, TYPE_HISTOGRAM);
    for series in family.series {
        // Checked by `message_len`: the same layout again.
        let layout = MetricLayout::of(series)?;
        write_metric(&mut w, series, &layout);
    }
    Ok(w.pos())
}

/// One series as a `Metric`: its labels and its native `Histogram`.
fn write_metric<S: NativeHistogram>(
    w: &mut Writer<'_>,
    series: &Series<'_, S>,
    layout: &MetricLayout,
) {
    let sketch = series.sketch;
    w.len_prefix(FAMILY_METRIC, layout.metric_len);
    for &(label, value) in series.labels {
        w.len_prefix(METRIC_LABEL, label_len(label, value));
        w.len_prefix(LABEL_NAME, label.len());
        w.bytes(label.as_bytes());
        w.len_prefix(LABEL_VALUE, value.len());
        w.bytes(value.as_bytes());
    }
    w.len_prefix(METRIC_HISTOGRAM, layout.histogram_len);
    // Every field written, zeros included: the message is proto2, where a field present
    // with its default is not a field absent.
    w.varint_field(SAMPLE_COUNT, sketch.sample_count());
    w.double_field(SAMPLE_SUM, sketch.sample_sum());
    w.sint32_field(SCHEMA, layout.schema.schema);
    w.double_field(ZERO_THRESHOLD, sketch.zero_threshold());
    w.varint_field(ZERO_COUNT, sketch.zeros());
    for (offset, len) in Spans::new(sketch.buckets(), layout.schema) {
        w.len_prefix(POSITIVE_SPAN, span_len(offset, len));
        w.sint32_field(SPAN_OFFSET, offset);
        w.varint_field(SPAN_LENGTH, u64::from(len));
    }
    if layout.deltas_len > 0 {
        w.len_prefix(POSITIVE_DELTA, layout.deltas_len);
        for delta in deltas(sketch.buckets(), layout.schema) {
            w.varint(zigzag64(delta));
        }
    }
}

/// The length of what [`encode_metric_family`] writes, or why it would fail (other than
/// for the buffer).
///
/// ```
/// use tailguard::prometheus::{encode_metric_family, metric_family_len};
/// use tailguard::sketch::presets;
/// let mut s = presets::otel_latency();
/// s.record_u64(5_000_000);
/// let len = metric_family_len("rpc_latency_ns", "RPC latency", &s, &[("route", "/a")]).unwrap();
/// let mut buf = vec![0u8; len];
/// assert_eq!(encode_metric_family("rpc_latency_ns", "RPC latency", &s, &[("route", "/a")], &mut buf), Ok(len));
/// ```
pub fn metric_family_len<S: NativeHistogram>(
    name: &str,
    help: &str,
    sketch: &S,
    labels: &[(&str, &str)],
) -> Result<usize, EncodeError> {
    let series = [Series { sketch, labels }];
    family_len(&Family {
        name,
        help,
        series: &series,
    })
}

/// Writes `sketch` into `buf` as one length-delimited Prometheus `MetricFamily`
/// (protobuf, the format Prometheus scrapes native histograms in), and returns the
/// number of bytes written ([`metric_family_len`]). No heap.
///
/// The family is `name` with `help` (left out when empty), of type `HISTOGRAM`, with one
/// `Metric`: `labels` (in the order given) and a native `Histogram`: the count, the sum,
/// the schema, the zero bucket and the positive buckets as spans and deltas. See the
/// [module docs](crate::prometheus) for how bins become buckets. The message has no
/// timestamp: Prometheus stamps a scrape itself.
///
/// `sketch` is a [`NativeHistogram`]: a `DDSketch<OtelMapping, N>` (a snapshot of a
/// [`Window`](crate::window::Window), or of a hedger's window, of OpenTelemetry buckets is
/// one) or an [`ExponentialSketch`](crate::sketch::ExponentialSketch) at the scale it
/// reached.
///
/// ```
/// use tailguard::prometheus::encode_metric_family;
/// use tailguard::sketch::ExponentialSketch;
///
/// let mut s = ExponentialSketch::<u16, 64>::new();
/// (1..=1_000u64).for_each(|ms| s.record_u64(ms * 1_000_000)); // 1 ms to 1 s
/// assert_eq!(s.scale(), 2); // ten powers of two in 64 buckets: schema 2
/// let mut buf = [0u8; 512];
/// let len = encode_metric_family("rpc_latency_ns", "", &s, &[], &mut buf).unwrap();
/// assert!(len > 0);
/// ```
///
/// ```
/// use tailguard::prometheus::encode_metric_family;
/// use tailguard::sketch::presets;
///
/// let mut s = presets::otel_latency(); // scale 5: schema 5
/// s.record_u64_n(4_000_000, 3);
/// let mut buf = [0u8; 256];
/// let len = encode_metric_family("rpc_latency_ns", "", &s, &[("instance", "a")], &mut buf).unwrap();
/// // The varint length of the family, then its name (field 1).
/// assert_eq!((buf[0] as usize + 1, buf[1]), (len, 0x0a));
/// ```
///
/// Only OpenTelemetry buckets can be written; a DataDog-mapped sketch does not compile:
///
/// ```compile_fail
/// use tailguard::prometheus::encode_metric_family;
/// use tailguard::sketch::presets;
/// let s = presets::cubic_latency();
/// let _ = encode_metric_family("rpc_latency_ns", "", &s, &[], &mut [0u8; 256]);
/// ```
pub fn encode_metric_family<S: NativeHistogram>(
    name: &str,
    help: &str,
    sketch: &S,
    labels: &[(&str, &str)],
    buf: &mut [u8],
) -> Result<usize, EncodeError> {
    let series = [Series { sketch, labels }];
    encode_family(
        &Family {
            name,
            help,
            series: &series,
        },
        buf,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prometheus::test_decode::{family, Family};
    use crate::sketch::{presets, DDSketch, IndexMapping, OtelMapping};
    use crate::wire::test_msg::Msg;
    use std::vec;
    use std::vec::Vec;

    type Sketch = DDSketch<OtelMapping, 512>;

    fn sketch(scale: i32) -> Sketch {
        Sketch::new(OtelMapping::with_scale(scale).unwrap(), 1.0).unwrap()
    }

    fn encode_vec(s: &Sketch, labels: &[(&str, &str)]) -> Vec<u8> {
        let len = metric_family_len("m", "h", s, labels).unwrap();
        let mut buf = vec![0u8; len];
        assert_eq!(encode_metric_family("m", "h", s, labels, &mut buf), Ok(len));
        buf
    }

    #[test]
    fn zigzag64_is_protobufs() {
        assert_eq!(zigzag64(0), 0);
        assert_eq!(zigzag64(-1), 1);
        assert_eq!(zigzag64(1), 2);
        assert_eq!(zigzag64(-2), 3);
        assert_eq!(zigzag64(i64::MAX), u64::MAX - 1);
        assert_eq!(zigzag64(i64::MIN), u64::MAX);
    }

    #[test]
    fn the_bytes_are_what_protobuf_writes() {
        let mut s = sketch(1); // buckets of sqrt(2)
        s.record(3.0).unwrap(); // OpenTelemetry bucket 3, (2^1.5, 4]: Prometheus 4
        s.record(3.0).unwrap();
        s.record(16.0).unwrap(); // OpenTelemetry 7, (2^3.5, 16]: Prometheus 8
        s.record(0.0).unwrap();
        let hist = Msg::default()
            .uint(1, 4)
            .double(2, 22.0)
            .sint(5, 1)
            .double(6, s.min_trackable().next_down())
            .uint(7, 1)
            // Gap 3 (5, 6, 7 are empty): two spans.
            .message(12, Msg::default().sint(1, 4).uint(2, 1))
            .message(12, Msg::default().sint(1, 3).uint(2, 1))
            .message(13, Msg::default().varint(4).varint(1)); // 2, then 1 - 2 = -1
        let label = Msg::default()
            .message(1, Msg::default().raw(b"k"))
            .message(2, Msg::default().raw(b"v"));
        let metric = Msg::default().message(1, label).message(7, hist);
        let body = Msg::default()
            .message(1, Msg::default().raw(b"m"))
            .message(2, Msg::default().raw(b"h"))
            .uint(3, 4)
            .message(4, metric);
        let expected = Msg::default().varint(body.0.len() as u64).raw(&body.0);
        assert_eq!(encode_vec(&s, &[("k", "v")]), expected.0);
    }

    #[test]
    fn round_trip_at_every_schema() {
        for scale in -4..=12 {
            let mut s = sketch(scale);
            for v in [1.5, 2.0, 3.0, 3.1, 100.0, 1e4, 1e4, 7e6] {
                s.record(v).unwrap();
            }
            s.record(0.0).unwrap();
            let f: Family = family(&encode_vec(&s, &[("a", "1"), ("b", "2")]));
            assert_eq!(f.name, "m");
            assert_eq!(
                f.labels,
                [("a".into(), "1".into()), ("b".into(), "2".into())]
            );
            let h = f.histogram;
            assert_eq!(h.schema, scale.min(8));
            assert_eq!((h.count, h.sum, h.zero_count), (9, s.sum(), 1));
            assert!(h.zero_threshold > 0.0 && h.zero_threshold < s.min_trackable());
            // Each value is in the bucket (b^(j-1), b^j] of the schema.
            let m = OtelMapping::with_scale(h.schema).unwrap();
            let mut want: Vec<(i32, u64)> = Vec::new();
            for bin in s.bins() {
                let v = s.mapping().value(bin.index);
                let j = m.index(v) + 1;
                assert!(m.lower_bound(j - 1) < v && v <= m.lower_bound(j));
                match want.last_mut() {
                    Some((last, n)) if *last == j => *n += u64::from(bin.count),
                    _ => want.push((j, u64::from(bin.count))),
                }
            }
            assert_eq!(h.buckets(), want, "scale {scale}");
        }
    }

    #[test]
    fn empty_sketches_are_native_histograms() {
        let s = presets::otel_latency();
        let h = family(&encode_vec_generic(&s)).histogram;
        assert_eq!((h.count, h.zero_count, h.schema), (0, 0, 5));
        assert!(h.zero_threshold > 0.0 && h.spans.is_empty() && h.deltas.is_empty());
    }

    fn encode_vec_generic<const N: usize>(s: &DDSketch<OtelMapping, N>) -> Vec<u8> {
        let mut buf = vec![0u8; metric_family_len("m", "", s, &[]).unwrap()];
        let len = encode_metric_family("m", "", s, &[], &mut buf).unwrap();
        assert_eq!(len, buf.len());
        buf
    }

    #[test]
    fn every_short_buffer_is_refused() {
        let mut s = sketch(10);
        for v in [1.0, 2.5, 2.6, 900.0, 1e9] {
            s.record(v).unwrap();
        }
        let full = encode_vec(&s, &[("instance", "x")]);
        for len in 0..full.len() {
            let mut buf = vec![0xa5u8; len];
            let err = encode_metric_family("m", "h", &s, &[("instance", "x")], &mut buf);
            assert_eq!(err, Err(EncodeError::BufferTooSmall { needed: full.len() }));
        }
        // A longer buffer: the same bytes, the rest untouched.
        let mut buf = vec![0xa5u8; full.len() + 3];
        let len = encode_metric_family("m", "h", &s, &[("instance", "x")], &mut buf).unwrap();
        assert_eq!(&buf[..len], &full[..]);
        assert_eq!(&buf[len..], &[0xa5; 3]);
    }

    #[test]
    fn bad_names_are_refused() {
        let s = sketch(3);
        let mut buf = [0u8; 64];
        assert_eq!(
            encode_metric_family("a-b", "", &s, &[], &mut buf),
            Err(EncodeError::InvalidName)
        );
        assert_eq!(
            metric_family_len("ab", "", &s, &[("le", "1")]),
            Err(EncodeError::InvalidName)
        );
    }
}
