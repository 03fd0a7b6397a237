//! Encoding a sketch as a data point: [`encode`] and [`encoded_len`], both from one
//! [`Layout`].

use super::message::{
    BUCKETS_COUNTS, BUCKETS_OFFSET, COUNT, MAX, MIN, POSITIVE, SCALE, START_TIME, SUM, TIME,
    ZERO_COUNT, ZERO_THRESHOLD,
};
use super::{EncodeError, Timestamps};
use crate::proto::wire::{varint_len, zigzag, Writer};
use crate::sketch::{DDSketch, OtelMapping};

/// A one-byte tag: every field number here is below 16.
const fn tag(field: u32, wire_type: u8) -> u8 {
    ((field as u8) << 3) | wire_type
}
const VARINT: u8 = 0;
const I64: u8 = 1;
const LEN: u8 = 2;

/// A tag and 8 bytes.
const FIXED_FIELD_LEN: usize = 9;
/// Sum, min and max.
const STATS_LEN: usize = 27;

/// What [`encode`] writes, worked out once.
struct Layout {
    times: Timestamps,
    count: u64,
    /// Sum, min and max; `None` for an empty sketch (protobuf's "not set").
    stats: Option<(f64, f64, f64)>,
    scale: i32,
    zero_count: u32,
    zero_threshold: f64,
    /// The index of the lowest non-empty bin.
    offset: i32,
    /// Bins from the lowest to the highest non-empty one (0 if none).
    run: usize,
    /// The length of the packed bucket counts.
    packed_len: usize,
}

fn fixed_len(present: bool) -> usize {
    if present {
        FIXED_FIELD_LEN
    } else {
        0
    }
}

/// A one-byte tag, a length and `body` bytes.
fn len_field_len(body: usize) -> usize {
    varint_len(body as u64)
        .saturating_add(body)
        .saturating_add(1)
}

impl Layout {
    fn of<const N: usize>(sketch: &DDSketch<OtelMapping, N>, times: Timestamps) -> Layout {
        let (mut first, mut last) = (0, -1);
        let (mut nonempty, mut counts_len) = (0usize, 0usize);
        for bin in sketch.bins() {
            if nonempty == 0 {
                first = bin.index;
            }
            last = bin.index;
            nonempty = nonempty.saturating_add(1);
            counts_len = counts_len.saturating_add(varint_len(u64::from(bin.count)));
        }
        // Both indices are inside the sketch, whose indices fit in an i32.
        let run = i64::from(last)
            .wrapping_sub(i64::from(first))
            .wrapping_add(1);
        let run = usize::try_from(run).unwrap_or(0);
        // The empty buckets between are one byte (a zero varint) each.
        let packed_len = counts_len.saturating_add(run.saturating_sub(nonempty));
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
            zero_count: sketch.zero_count(),
            zero_threshold,
            offset: first,
            run,
            packed_len,
        }
    }

    fn buckets_len(&self) -> usize {
        let mut len = len_field_len(self.packed_len);
        if self.offset != 0 {
            len = len.saturating_add(varint_len(u64::from(zigzag(self.offset))).saturating_add(1));
        }
        len
    }

    fn total_len(&self) -> usize {
        let mut len = fixed_len(self.times.start_unix_nano != 0)
            .saturating_add(fixed_len(self.times.time_unix_nano != 0))
            .saturating_add(fixed_len(self.count != 0))
            .saturating_add(fixed_len(self.zero_count != 0))
            .saturating_add(fixed_len(self.zero_threshold != 0.0));
        if self.stats.is_some() {
            len = len.saturating_add(STATS_LEN);
        }
        if self.scale != 0 {
            len = len.saturating_add(varint_len(u64::from(zigzag(self.scale))).saturating_add(1));
        }
        if self.run > 0 {
            len = len.saturating_add(len_field_len(self.buckets_len()));
        }
        len
    }
}

/// The length of the data point [`encode`] writes for `sketch`.
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
pub fn encoded_len<const N: usize>(sketch: &DDSketch<OtelMapping, N>, times: Timestamps) -> usize {
    Layout::of(sketch, times).total_len()
}

/// Writes `sketch` into `buf` as an OTLP `ExponentialHistogramDataPoint` (protobuf), and
/// returns the number of bytes written ([`encoded_len`]). No heap.
///
/// The point holds the sketch's scale, its bins as the positive buckets (from the
/// lowest non-empty one), its zero bin as the zero count with the zero threshold just
/// below [`min_trackable`](DDSketch::min_trackable), the count, and the exact sum, min
/// and max (absent when the sketch is empty), with `times`. No negative buckets, no
/// attributes, flags or exemplars (OTLP carries the attributes on the metric). See the
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
pub fn encode<const N: usize>(
    sketch: &DDSketch<OtelMapping, N>,
    times: Timestamps,
    buf: &mut [u8],
) -> Result<usize, EncodeError> {
    let layout = Layout::of(sketch, times);
    let needed = layout.total_len();
    if buf.len() < needed {
        return Err(EncodeError::BufferTooSmall { needed });
    }
    let mut w = Writer { buf, pos: 0 };
    let fixed = |w: &mut Writer<'_>, field: u32, value: u64| {
        w.byte(tag(field, I64));
        w.fixed64(value);
    };
    // Fields in number order, as protobuf's own serializers write them.
    if times.start_unix_nano != 0 {
        fixed(&mut w, START_TIME, times.start_unix_nano);
    }
    if times.time_unix_nano != 0 {
        fixed(&mut w, TIME, times.time_unix_nano);
    }
    if layout.count != 0 {
        fixed(&mut w, COUNT, layout.count);
    }
    if let Some((sum, _, _)) = layout.stats {
        fixed(&mut w, SUM, sum.to_bits());
    }
    if layout.scale != 0 {
        w.byte(tag(SCALE, VARINT));
        w.varint(u64::from(zigzag(layout.scale)));
    }
    if layout.zero_count != 0 {
        fixed(&mut w, ZERO_COUNT, u64::from(layout.zero_count));
    }
    if layout.run > 0 {
        w.byte(tag(POSITIVE, LEN));
        w.varint(layout.buckets_len() as u64);
        if layout.offset != 0 {
            w.byte(tag(BUCKETS_OFFSET, VARINT));
            w.varint(u64::from(zigzag(layout.offset)));
        }
        w.byte(tag(BUCKETS_COUNTS, LEN));
        w.varint(layout.packed_len as u64);
        let mut next = i64::from(layout.offset);
        for bin in sketch.bins() {
            while next < i64::from(bin.index) {
                w.byte(0);
                next = next.saturating_add(1);
            }
            w.varint(u64::from(bin.count));
            next = i64::from(bin.index).saturating_add(1);
        }
    }
    if let Some((_, min, max)) = layout.stats {
        fixed(&mut w, MIN, min.to_bits());
        fixed(&mut w, MAX, max.to_bits());
    }
    if layout.zero_threshold != 0.0 {
        fixed(&mut w, ZERO_THRESHOLD, layout.zero_threshold.to_bits());
    }
    Ok(w.pos)
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
