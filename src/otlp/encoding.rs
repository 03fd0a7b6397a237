//! Encoding a sketch as a data point: [`encode`] and [`encoded_len`], both from one
//! [`Layout`] (what a sketch kind's [`Sealed`] implementation works out), and
//! [`write_fields`], which writes it.

use super::decoding::decode_ddsketch;
use super::kind::sealed::Sealed;
use super::message::{
    BUCKETS_COUNTS, BUCKETS_OFFSET, COUNT, MAX, MIN, POSITIVE, SCALE, START_TIME, SUM, TIME,
    ZERO_COUNT, ZERO_THRESHOLD,
};
use super::{DecodeError, Decoded, EncodeError, OtelSketch, Timestamps};
use crate::sketch::{DDSketch, OtelMapping};
use crate::wire::{
    dense_counts, len_field_len, sint32_field_len, varint_len, Run, Writer, FIXED64_FIELD_LEN,
};

/// Sum, min and max.
const STATS_LEN: usize = 3 * FIXED64_FIELD_LEN;

/// What [`encode`] writes, worked out once.
pub(super) struct Layout {
    pub(super) times: Timestamps,
    pub(super) count: u64,
    /// Sum, min and max; `None` for an empty sketch (protobuf's "not set").
    pub(super) stats: Option<(f64, f64, f64)>,
    pub(super) scale: i32,
    pub(super) zero_count: u64,
    pub(super) zero_threshold: f64,
    /// The index of the lowest non-empty bin.
    pub(super) offset: i32,
    /// Bins from the lowest to the highest non-empty one (0 if none).
    pub(super) run: usize,
    /// The length of the packed bucket counts.
    pub(super) packed_len: usize,
}

fn fixed_len(present: bool) -> usize {
    if present {
        FIXED64_FIELD_LEN
    } else {
        0
    }
}

impl Layout {
    fn of<const N: usize>(sketch: &DDSketch<OtelMapping, N>, times: Timestamps) -> Layout {
        let Run { first, len: run } = Run::of(sketch.bins());
        let packed_len = dense_counts(sketch.bins(), first).fold(0usize, |len, count| {
            len.saturating_add(varint_len(count.into()))
        });
        let stats = match (sketch.min(), sketch.max()) {
            (Some(min), Some(max)) => Some((sketch.sum(), min, max)),
            _ => None,
        };
        // The zero bin holds zeros and every value below `min_trackable`: OTLP's zero
        // bucket is the closed interval [-t, t], so t is the float just below it.
        let zero_threshold = sketch.min_trackable().next_down().max(0.0);
        Layout {
            times,
            count: sketch.count(),
            stats,
            scale: sketch.mapping().scale(),
            zero_count: u64::from(sketch.zero_count()),
            zero_threshold,
            offset: first,
            run,
            packed_len,
        }
    }

    fn buckets_len(&self) -> usize {
        let mut len = len_field_len(self.packed_len);
        if self.offset != 0 {
            len = len.saturating_add(sint32_field_len(self.offset));
        }
        len
    }

    pub(super) fn total_len(&self) -> usize {
        let mut len = fixed_len(self.times.start_unix_nano != 0)
            .saturating_add(fixed_len(self.times.time_unix_nano != 0))
            .saturating_add(fixed_len(self.count != 0))
            .saturating_add(fixed_len(self.zero_count != 0))
            .saturating_add(fixed_len(self.zero_threshold != 0.0));
        if self.stats.is_some() {
            len = len.saturating_add(STATS_LEN);
        }
        if self.scale != 0 {
            len = len.saturating_add(sint32_field_len(self.scale));
        }
        if self.run > 0 {
            len = len.saturating_add(len_field_len(self.buckets_len()));
        }
        len
    }
}

/// The length of the data point [`encode`] writes for `sketch` (either [`OtelSketch`]).
///
/// ```
/// use tailguard::otlp::{encoded_len, Timestamps};
/// use tailguard::sketch::presets;
/// let mut s = presets::otel_latency();
/// // An empty sketch: scale and zero threshold.
/// assert_eq!(encoded_len(&s, Timestamps::default()), 2 + 9);
/// s.record(1e6).unwrap();
/// // count, sum, min, max; the bucket's offset and count (with their tags and lengths).
/// assert_eq!(encoded_len(&s, Timestamps::default()), 11 + 4 * 9 + 2 + 3 + 3);
/// ```
pub fn encoded_len<S: OtelSketch>(sketch: &S, times: Timestamps) -> usize {
    sketch.body_len(times)
}

/// Writes `sketch` into `buf` as an OTLP `ExponentialHistogramDataPoint` (protobuf), and
/// returns the number of bytes written ([`encoded_len`]). No heap. `sketch` is either
/// [`OtelSketch`]: a `DDSketch<OtelMapping, N>`, described here, or an
/// [`ExponentialSketch`](crate::sketch::ExponentialSketch), written at its current scale
/// with a zero threshold of 0, as the SDKs write it (see the
/// [module docs](crate::otlp#the-auto-scaling-sketch)).
///
/// A `DDSketch`'s point holds the sketch's scale, its bins as the positive buckets (from the
/// lowest non-empty one), its zero bin as the zero count with the zero threshold just
/// below [`min_trackable`](DDSketch::min_trackable), the count, and the exact sum, min
/// and max (absent when the sketch is empty), with `times`. No negative buckets, no
/// attributes, flags or exemplars (a [`DataPoint`](super::DataPoint) of an export request
/// adds attributes). See the
/// [module docs](crate::otlp#encoding) for values outside the sketch's range.
///
/// A snapshot of an [`AtomicSketch`](crate::sketch::AtomicSketch) or a
/// [`Window`](crate::window::Window) is a `DDSketch`, and encodes the same way:
///
/// ```
/// use tailguard::otlp::{encode, encoded_len, Timestamps};
/// use tailguard::sketch::{presets, AtomicSketch};
///
/// let shared = AtomicSketch::with_layout(presets::OTEL_LATENCY_LAYOUT); // scale 5, 1 µs .. 100 s
/// shared.record_u64(2_000_000); // from any thread
/// let snapshot = shared.snapshot();
/// let times = Timestamps::new(1_700_000_000_000_000_000, 1_700_000_060_000_000_000);
/// let mut buf = [0u8; 256];
/// let len = encode(&snapshot, times, &mut buf).unwrap();
/// assert_eq!(len, encoded_len(&snapshot, times));
/// // start time (field 2) and time (field 3) come first.
/// assert_eq!((buf[0], buf[9]), (0x11, 0x19));
/// ```
pub fn encode<S: OtelSketch>(
    sketch: &S,
    times: Timestamps,
    buf: &mut [u8],
) -> Result<usize, EncodeError> {
    let needed = sketch.body_len(times);
    if buf.len() < needed {
        return Err(EncodeError::BufferTooSmall { needed });
    }
    let mut w = Writer::new(buf);
    sketch.write_body(times, &mut w);
    Ok(w.pos())
}

impl<const N: usize> Sealed for DDSketch<OtelMapping, N> {
    fn body_len(&self, times: Timestamps) -> usize {
        Layout::of(self, times).total_len()
    }

    fn write_body(&self, times: Timestamps, w: &mut Writer<'_>) {
        let counts = dense_counts(self.bins(), Run::of(self.bins()).first).map(u64::from);
        write_fields(&Layout::of(self, times), counts, w);
    }

    fn decode(&mut self, bytes: &[u8]) -> Result<Decoded, DecodeError> {
        decode_ddsketch(bytes, self)
    }
}

/// Every field of `layout` (all but the attributes), in number order, as protobuf's own
/// serializers write them; `counts` are the run's bucket counts.
pub(super) fn write_fields(layout: &Layout, counts: impl Iterator<Item = u64>, w: &mut Writer<'_>) {
    let times = layout.times;
    if times.start_unix_nano != 0 {
        w.fixed64_field(START_TIME, times.start_unix_nano);
    }
    if times.time_unix_nano != 0 {
        w.fixed64_field(TIME, times.time_unix_nano);
    }
    if layout.count != 0 {
        w.fixed64_field(COUNT, layout.count);
    }
    if let Some((sum, _, _)) = layout.stats {
        w.double_field(SUM, sum);
    }
    if layout.scale != 0 {
        w.sint32_field(SCALE, layout.scale);
    }
    if layout.zero_count != 0 {
        w.fixed64_field(ZERO_COUNT, layout.zero_count);
    }
    if layout.run > 0 {
        w.len_prefix(POSITIVE, layout.buckets_len());
        if layout.offset != 0 {
            w.sint32_field(BUCKETS_OFFSET, layout.offset);
        }
        w.len_prefix(BUCKETS_COUNTS, layout.packed_len);
        for count in counts {
            w.varint(count);
        }
    }
    if let Some((_, min, max)) = layout.stats {
        w.double_field(MIN, min);
        w.double_field(MAX, max);
    }
    if layout.zero_threshold != 0.0 {
        w.double_field(ZERO_THRESHOLD, layout.zero_threshold);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::otlp::decode_into;
    use crate::otlp::test_msg::{encode_vec, sketch, Msg};
    use crate::sketch::{presets, IndexMapping};

    #[test]
    fn empty_sketches_write_scale_and_threshold_only() {
        let s = presets::otel_latency();
        let bytes = encode_vec(&s, Timestamps::default());
        let threshold = s.min_trackable().next_down();
        let expected = Msg::default().sint(6, 5).double(14, threshold);
        assert_eq!(bytes, expected.0);
        let mut t = presets::otel_latency();
        let report = decode_into(&bytes, &mut t).unwrap();
        assert_eq!(report.added, 0);
        assert!(t.is_empty() && t.min().is_none());
    }

    #[test]
    fn the_bytes_are_what_protobuf_writes() {
        let mut s = sketch(1); // buckets of sqrt(2)
        s.record(3.0).unwrap(); // bucket 3: (2^1.5, 4]
        s.record(3.0).unwrap();
        s.record(16.0).unwrap(); // bucket 7: (2^3.5, 16]
        s.record(0.0).unwrap();
        let bytes = encode_vec(&s, Timestamps::new(1, 2));
        let expected = Msg::default()
            .fixed(2, 1)
            .fixed(3, 2)
            .fixed(4, 4)
            .double(5, 22.0)
            .sint(6, 1)
            .fixed(7, 1)
            .message(
                8,
                Msg::default()
                    .sint(1, 3)
                    .packed_varints(2, &[2, 0, 0, 0, 1]),
            )
            .double(12, 0.0)
            .double(13, 16.0)
            .double(14, s.min_trackable().next_down());
        assert_eq!(bytes, expected.0);
    }

    #[test]
    fn zero_threshold_is_just_below_the_range() {
        let s = presets::otel_latency();
        let bytes = encode_vec(&s, Timestamps::default());
        let t = f64::from_le_bytes(bytes[bytes.len() - 8..].try_into().unwrap());
        let m = s.mapping();
        assert!(t < s.min_trackable() && m.index(t) < s.min_index());
        assert_eq!(t.next_up(), s.min_trackable());
    }
}
