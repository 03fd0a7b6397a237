//! Encoding a sketch: [`encode`] and [`encoded_len`], and for the auto-scaling sketch
//! [`encode_exponential`] and [`exponential_encoded_len`], all from one [`Layout`] and
//! one writer ([`write`]).

use super::convention::go_layout_shift;
use super::message::{
    CONTIGUOUS_COUNTS, CONTIGUOUS_OFFSET, GAMMA, INDEX_OFFSET, INTERPOLATION, MAPPING, NEGATIVE,
    POSITIVE, ZERO_COUNT,
};
use super::{EncodeError, IndexConvention};
use crate::sketch::{Counter, DDSketch, ExponentialSketch, IndexMapping};
use crate::wire::{
    dense_counts, len_field_len, sint32_field_len, varint_field_len, Run, Writer, FIXED64_FIELD_LEN,
};

/// What [`encode`] writes, worked out once.
struct Layout {
    gamma: f64,
    index_offset: f64,
    interpolation: i32,
    /// The wire key of the lowest non-empty bin.
    first_key: i32,
    /// Bins from the lowest to the highest non-empty one (0 if none).
    run: usize,
    zero_count: u64,
}

impl Layout {
    fn of<M: IndexMapping, const N: usize>(
        sketch: &DDSketch<M, N>,
        convention: IndexConvention,
    ) -> Layout {
        let run = Run::of(sketch.bins());
        Layout::new(
            sketch.mapping(),
            run,
            u64::from(sketch.zero_count()),
            convention,
        )
    }

    fn of_exponential<C: Counter, const B: usize>(
        sketch: &ExponentialSketch<C, B>,
        convention: IndexConvention,
    ) -> Layout {
        let run = Run {
            first: sketch.offset(),
            len: sketch.bucket_counts().count(),
        };
        Layout::new(&sketch.mapping(), run, sketch.zero_count(), convention)
    }

    fn new<M: IndexMapping>(
        mapping: &M,
        Run { first, len: run }: Run,
        zero_count: u64,
        convention: IndexConvention,
    ) -> Layout {
        let interpolation = M::INTERPOLATION;
        let offset = mapping.index_offset();
        // The wire key of a bin is its index plus `shift`, written with `index_offset`.
        let (shift, index_offset) = match convention {
            IndexConvention::GoJava => {
                let shift = go_layout_shift(mapping);
                (shift, offset + f64::from(shift))
            }
            IndexConvention::Python => (1, offset),
        };
        let (first_key, index_offset) = match first.checked_add(shift) {
            Some(key) => (key, index_offset),
            // Out of sint32: renumber through the offset instead (same bins).
            None => (first, index_offset - f64::from(shift)),
        };
        Layout {
            gamma: convention.gamma_from_go(interpolation, mapping.gamma()),
            index_offset,
            interpolation: interpolation as i32,
            first_key,
            run,
            zero_count,
        }
    }

    fn mapping_len(&self) -> usize {
        let mut len = FIXED64_FIELD_LEN; // gamma
        if self.index_offset != 0.0 {
            len = len.saturating_add(FIXED64_FIELD_LEN);
        }
        if self.interpolation != 0 {
            len = len.saturating_add(varint_field_len(self.interpolation as u64));
        }
        len
    }

    fn packed_len(&self) -> usize {
        self.run.saturating_mul(8)
    }

    fn positive_len(&self) -> usize {
        if self.run == 0 {
            return 0;
        }
        let mut len = len_field_len(self.packed_len());
        if self.first_key != 0 {
            len = len.saturating_add(sint32_field_len(self.first_key));
        }
        len
    }

    fn total_len(&self) -> usize {
        let mut len = len_field_len(self.mapping_len())
            .saturating_add(len_field_len(self.positive_len()))
            .saturating_add(2); // empty negativeValues
        if self.zero_count > 0 {
            len = len.saturating_add(FIXED64_FIELD_LEN);
        }
        len
    }
}

/// The length of the message [`encode`] writes for `sketch`.
///
/// ```
/// use tailguard::proto::{encoded_len, IndexConvention};
/// use tailguard::sketch::presets;
/// let mut s = presets::log_latency();
/// let empty = encoded_len(&s, IndexConvention::GoJava);
/// s.record(1e6).unwrap();
/// // One bin: its count (8 bytes), the run's tag and length, the key offset (3 bytes).
/// assert_eq!(encoded_len(&s, IndexConvention::GoJava), empty + 13);
/// ```
pub fn encoded_len<M: IndexMapping, const N: usize>(
    sketch: &DDSketch<M, N>,
    convention: IndexConvention,
) -> usize {
    Layout::of(sketch, convention).total_len()
}

/// Writes `sketch` into `buf` as a DDSketch protobuf message in `convention`, and returns
/// the number of bytes written ([`encoded_len`]). See the [module docs](crate::proto#encoding).
///
/// Errors with [`EncodeError::BufferTooSmall`] if `buf` is too short, and with
/// [`EncodeError::UnrepresentableMapping`] for a mapping whose gamma is infinite
/// (OpenTelemetry's scale -10).
///
/// ```
/// use tailguard::proto::{encode, IndexConvention};
/// use tailguard::sketch::{DDSketch, LogMapping};
///
/// type Sketch = DDSketch<LogMapping, 512>; // 1 %, 512 bins from 1.0
/// let mut s = Sketch::with_relative_accuracy(0.01, 1.0).unwrap();
/// s.record(1.0).unwrap();
/// let mut buf = [0u8; 64];
/// let len = encode(&s, IndexConvention::GoJava, &mut buf).unwrap();
/// // mapping {gamma}, positiveValues {one count at key 0}, negativeValues {}
/// assert_eq!(buf[0], 0x0a);
/// assert_eq!(&buf[11..len], &[0x12, 0x0a, 0x12, 0x08, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 0x1a, 0x00]);
/// ```
pub fn encode<M: IndexMapping, const N: usize>(
    sketch: &DDSketch<M, N>,
    convention: IndexConvention,
    buf: &mut [u8],
) -> Result<usize, EncodeError> {
    let counts = dense_counts(sketch.bins(), Run::of(sketch.bins()).first).map(f64::from);
    write(&Layout::of(sketch, convention), counts, buf)
}

/// The length of the message [`encode_exponential`] writes for `sketch`.
///
/// ```
/// use tailguard::proto::{exponential_encoded_len, IndexConvention};
/// use tailguard::sketch::ExponentialSketch;
/// let mut s = ExponentialSketch::<u32, 160>::new();
/// let empty = exponential_encoded_len(&s, IndexConvention::GoJava);
/// s.record(1.0).unwrap();
/// // One bucket: its count (8 bytes), the run's tag and length, the key (-1: 2 bytes).
/// assert_eq!(exponential_encoded_len(&s, IndexConvention::GoJava), empty + 12);
/// ```
pub fn exponential_encoded_len<C: Counter, const B: usize>(
    sketch: &ExponentialSketch<C, B>,
    convention: IndexConvention,
) -> usize {
    Layout::of_exponential(sketch, convention).total_len()
}

/// Writes an [`ExponentialSketch`] into `buf` as a DDSketch protobuf message in
/// `convention`, at its current scale `s`, bucket for bucket, and returns the number of
/// bytes written ([`exponential_encoded_len`]): DataDog's logarithmic mapping (`NONE`
/// interpolation) with `gamma = 2^(2^-s)` and `indexOffset` 0, each bucket's count at its
/// OpenTelemetry index as the key (Go/Java's `floor` keys; Python's `ceil` keys are one
/// higher), and the zero count. It is what a `DDSketch<OtelMapping, N>` at that scale
/// writes for the same buckets; see the [module docs](crate::proto#the-auto-scaling-sketch)
/// for why it is exact.
///
/// Errors as [`encode`] does: [`EncodeError::UnrepresentableMapping`] at scale -10
/// (whose gamma, `2^1024`, is no float), [`EncodeError::BufferTooSmall`].
///
/// ```
/// use tailguard::proto::{self, decode_into, encode_exponential, IndexConvention};
/// use tailguard::sketch::{DDSketch, ExponentialSketch, OtelMapping};
///
/// let mut device = ExponentialSketch::<u16, 64>::new();
/// (1..=1_000u64).for_each(|us| device.record_u64(us * 1_000));
/// let mut buf = [0u8; 1024];
/// let len = encode_exponential(&device, IndexConvention::GoJava, &mut buf).unwrap();
///
/// // Any DataDog reader takes it; tailguard decodes it into a sketch of that scale.
/// let mapping = OtelMapping::with_scale(device.scale()).unwrap();
/// let mut total = DDSketch::<OtelMapping, 4096>::new(mapping, 1.0).unwrap();
/// decode_into(&buf[..len], IndexConvention::GoJava, &mut total).unwrap();
/// assert!(total.bins().map(|b| u64::from(b.count)).eq(device.bucket_counts().filter(|&c| c > 0)));
/// ```
pub fn encode_exponential<C: Counter, const B: usize>(
    sketch: &ExponentialSketch<C, B>,
    convention: IndexConvention,
    buf: &mut [u8],
) -> Result<usize, EncodeError> {
    // A count above 2^53 rounds to its float, as DataDog's own (double) counts do.
    let counts = sketch.bucket_counts().map(|c| c as f64);
    write(&Layout::of_exponential(sketch, convention), counts, buf)
}

/// Writes the message of `layout`, its run's counts `counts`.
fn write(
    layout: &Layout,
    counts: impl Iterator<Item = f64>,
    buf: &mut [u8],
) -> Result<usize, EncodeError> {
    if !layout.gamma.is_finite() {
        return Err(EncodeError::UnrepresentableMapping);
    }
    let needed = layout.total_len();
    if buf.len() < needed {
        return Err(EncodeError::BufferTooSmall { needed });
    }
    let mut w = Writer::new(buf);
    w.len_prefix(MAPPING, layout.mapping_len());
    w.double_field(GAMMA, layout.gamma);
    if layout.index_offset != 0.0 {
        w.double_field(INDEX_OFFSET, layout.index_offset);
    }
    if layout.interpolation != 0 {
        w.varint_field(INTERPOLATION, layout.interpolation as u64);
    }
    w.len_prefix(POSITIVE, layout.positive_len());
    if layout.run > 0 {
        w.len_prefix(CONTIGUOUS_COUNTS, layout.packed_len());
        for count in counts {
            w.double(count);
        }
        if layout.first_key != 0 {
            w.sint32_field(CONTIGUOUS_OFFSET, layout.first_key);
        }
    }
    w.len_prefix(NEGATIVE, 0);
    if layout.zero_count > 0 {
        w.double_field(ZERO_COUNT, layout.zero_count as f64);
    }
    Ok(w.pos())
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_exponential_sketch_writes_what_an_otel_ddsketch_of_its_scale_writes() {
        use crate::sketch::{ExponentialSketch, OtelMapping};
        let values = [0.0, 1.0, 1.5, 2.0, 3.0, 7.0, 100.0, 1e4, 0.0, 0.3];
        let mut auto = ExponentialSketch::<u32, 64>::new();
        values.iter().for_each(|&v| auto.record(v).unwrap());
        assert_eq!(auto.scale(), 2);
        let mapping = OtelMapping::with_scale(auto.scale()).unwrap();
        let mut fixed = DDSketch::<OtelMapping, 512>::new(mapping, 1e-3).unwrap();
        values.iter().for_each(|&v| fixed.record(v).unwrap());
        for convention in [IndexConvention::GoJava, IndexConvention::Python] {
            let len = exponential_encoded_len(&auto, convention);
            let mut a = std::vec![0u8; len];
            assert_eq!(encode_exponential(&auto, convention, &mut a), Ok(len));
            let mut b = std::vec![0u8; encoded_len(&fixed, convention)];
            encode(&fixed, convention, &mut b).unwrap();
            assert_eq!(a, b, "{convention:?}");
            assert_eq!(
                encode_exponential(&auto, convention, &mut a[..len - 1]),
                Err(EncodeError::BufferTooSmall { needed: len })
            );
        }
        // Scale -10 has no gamma to write.
        let mut coarse = ExponentialSketch::<u8, 2>::new();
        coarse.record(f64::MIN_POSITIVE).unwrap();
        coarse.record(f64::MAX).unwrap();
        assert_eq!(coarse.scale(), -10);
        assert_eq!(
            encode_exponential(&coarse, IndexConvention::GoJava, &mut [0u8; 128]),
            Err(EncodeError::UnrepresentableMapping)
        );
    }

    use crate::sketch::{DDSketch, OtelMapping};

    #[test]
    fn a_mapping_with_an_infinite_gamma_is_refused_and_nothing_is_written() {
        let mapping = OtelMapping::with_scale(OtelMapping::MIN_SCALE).unwrap();
        let mut s = DDSketch::<OtelMapping, 16>::new(mapping, 1.0).unwrap();
        s.record(10.0).unwrap();
        let mut buf = [0xAAu8; 256];
        assert_eq!(
            super::encode(&s, super::IndexConvention::GoJava, &mut buf),
            Err(super::EncodeError::UnrepresentableMapping)
        );
        assert!(buf.iter().all(|&b| b == 0xAA));
    }

    use super::*;
    use crate::proto::test_msg::{encode_vec, log, Msg};
    use crate::proto::{decode_into, read_mapping, Decoded};
    use crate::sketch::{CubicMapping, IntMapping, Interpolation, LogMapping};

    #[test]
    fn empty_sketch_encodes_mapping_and_empty_stores() {
        let s = log();
        let bytes = encode_vec(&s, IndexConvention::GoJava);
        // mapping {gamma}, positiveValues {}, negativeValues {}
        assert_eq!(bytes.len(), 2 + 9 + 2 + 2);
        let mut t = log();
        assert_eq!(
            decode_into(&bytes, IndexConvention::GoJava, &mut t),
            Ok(Decoded::default())
        );
        assert!(t.is_empty());
        assert_eq!(t.min(), None);
    }

    #[test]
    fn int_mapping_writes_go_default_layout() {
        let mut s = DDSketch::<IntMapping, 1024>::with_relative_accuracy(0.01, 1.0).unwrap();
        s.record(1.0).unwrap(); // index 0
        let bytes = encode_vec(&s, IndexConvention::GoJava);
        let m = read_mapping(&bytes).unwrap();
        assert_eq!(m.gamma(), libm::exp2(1.0 / 64.0));
        assert_eq!(m.index_offset(), 64.0);
        assert_eq!(m.interpolation_code(), 1);
        // The key on the wire is 64: Go's floor((e + 1 + m) * 64) for 1.0.
        let store = Msg::default().packed(2, &[1.0]).sint(3, 64);
        let expected = Msg::default()
            .message(
                1,
                Msg::default()
                    .double(1, m.gamma())
                    .double(2, 64.0)
                    .uint(3, 1),
            )
            .message(2, store)
            .message(3, Msg::default());
        assert_eq!(bytes, expected.0);
        // Offset 0 with tailguard's own keys describes the same bins.
        let zero_offset = Msg::default()
            .message(1, Msg::default().double(1, m.gamma()).uint(3, 1))
            .message(2, Msg::default().packed(2, &[1.0]));
        let mut t = s.clone();
        t.clear();
        decode_into(&zero_offset.0, IndexConvention::GoJava, &mut t).unwrap();
        assert!(t.bins().eq(s.bins()));
    }

    #[test]
    fn int_mapping_writes_go_default_layout_at_every_k() {
        // Go's and Java's default LINEAR layout, indexOffset = 2^k with keys 2^k above
        // tailguard's indices, for every k IntMapping has: from k = 12 up, 1 / log2(gamma)
        // misses 2^k by more than 1e-9 (7.5e-5 at k = 20), and the encoder used to fall
        // back to offset 0 there, which no DataDog sketch of that gamma has.
        for k in 0..=20u32 {
            let m = IntMapping::with_mantissa_bits(k).unwrap();
            let mut s = DDSketch::<IntMapping, 64>::new(m, 1.0).unwrap();
            s.record(1.0).unwrap(); // index 0
            let bytes = encode_vec(&s, IndexConvention::GoJava);
            let two_k = 1i32 << k;
            let expected = Msg::default()
                .message(
                    1,
                    Msg::default()
                        .double(1, m.gamma())
                        .double(2, f64::from(two_k))
                        .uint(3, 1),
                )
                .message(2, Msg::default().packed(2, &[1.0]).sint(3, two_k))
                .message(3, Msg::default());
            assert_eq!(bytes, expected.0, "k = {k}");
            let mut t = s.clone();
            t.clear();
            decode_into(&bytes, IndexConvention::GoJava, &mut t).unwrap();
            assert!(t.bins().eq(s.bins()), "k = {k}");
        }
    }

    #[test]
    fn python_convention_keys_are_one_higher_with_python_gamma() {
        let mut s = log();
        s.record(1.0).unwrap(); // bin 0 = [1, gamma) here, Python's key 1 = (1, gamma]
        let bytes = encode_vec(&s, IndexConvention::Python);
        let expected = Msg::default()
            .message(1, Msg::default().double(1, s.mapping().gamma()))
            .message(2, Msg::default().packed(2, &[1.0]).sint(3, 1))
            .message(3, Msg::default());
        assert_eq!(bytes, expected.0);

        let mut i = DDSketch::<IntMapping, 1024>::with_relative_accuracy(0.01, 1.0).unwrap();
        i.record(1.0).unwrap();
        let m = read_mapping(&encode_vec(&i, IndexConvention::Python)).unwrap();
        // Python's LINEAR gamma is e^(1 / multiplier).
        assert!((m.gamma() - libm::exp(1.0 / 64.0)).abs() < 1e-15);
        assert_eq!(m.index_offset(), 0.0);
        let alpha = m.relative_accuracy(IndexConvention::Python).unwrap();
        assert!((alpha - i.mapping().relative_accuracy()).abs() < 1e-15);

        let c = CubicMapping::with_relative_accuracy(0.01).unwrap();
        let py = IndexConvention::Python.gamma_from_go(Interpolation::Cubic, c.gamma());
        // Python's CUBIC gamma is (1 + alpha) / (1 - alpha).
        assert!((py - 1.01 / 0.99).abs() < 1e-14);
        let back = IndexConvention::Python.gamma_to_go(Interpolation::Cubic, py);
        assert!((back - c.gamma()).abs() <= 1e-15 * c.gamma());
    }

    #[test]
    fn encode_reports_the_size_needed() {
        let mut s = log();
        for v in [1.0, 50.0, 400.0] {
            s.record(v).unwrap();
        }
        s.record(0.0).unwrap();
        for convention in [IndexConvention::GoJava, IndexConvention::Python] {
            let needed = encoded_len(&s, convention);
            let mut buf = std::vec![0u8; needed - 1];
            assert_eq!(
                encode(&s, convention, &mut buf),
                Err(EncodeError::BufferTooSmall { needed })
            );
            let mut buf = std::vec![0u8; needed + 5];
            assert_eq!(encode(&s, convention, &mut buf), Ok(needed));
            // 8 per bin of the run, at most 49 more below 2^24 bins (as the module docs say).
            let run = Layout::of(&s, convention).run;
            assert!(needed - 8 * run <= 49, "{needed} for {run} bins");
        }
    }

    #[test]
    fn the_framing_is_at_most_53_bytes_and_49_below_2_24_bins() {
        // Everything but the run's 8 bytes a bin, for runs up to 2^32 bins (every i32
        // index): the mapping (gamma, offset, interpolation), the two stores' framing, the
        // first key and the zero count. The varint lengths of the run and of its store take
        // up to 4 bytes each below 2^24 bins, and up to 6 for runs of 2^32 bins.
        let int = IntMapping::K6; // LINEAR: all three mapping fields
        let log = LogMapping::from_gamma_offset(1.02, 0.5).unwrap();
        let mut most = 0;
        for len in [
            0,
            1,
            15,
            16,
            2047,
            2048,
            (1 << 18) - 2,
            1 << 18,
            (1 << 24) - 1,
            1 << 24,
            (1 << 25) - 1,
            1 << 25,
            (1 << 32) - 1,
            1 << 32,
        ] {
            for first in [0, -1, 1, i32::MIN, i32::MAX, -(1 << 27) - 1] {
                for convention in [IndexConvention::GoJava, IndexConvention::Python] {
                    for zero_count in [0, 1] {
                        let run = Run { first, len };
                        let a = Layout::new(&int, run, zero_count, convention).total_len();
                        let b = Layout::new(&log, run, zero_count, convention).total_len();
                        for total in [a, b] {
                            let framing = total - 8 * len;
                            assert!(framing <= 53, "{len} bins from {first}: {framing}");
                            if len < 1 << 24 {
                                assert!(framing <= 49, "{len} bins from {first}: {framing}");
                            }
                            most = most.max(framing);
                        }
                    }
                }
            }
        }
        assert_eq!(most, 53);
    }

    #[test]
    fn extreme_indices_still_encode() {
        // A sketch whose top bin is i32::MAX - 1: Python's key shift still fits.
        let m = LogMapping::with_relative_accuracy(0.01).unwrap();
        let shifted =
            LogMapping::from_gamma_offset(m.gamma(), f64::from(i32::MAX) - 600.0).unwrap();
        let mut s = DDSketch::<LogMapping, 64>::new(shifted, 1.0).unwrap();
        s.record(1e300).unwrap(); // clamped into the top bin
        for convention in [IndexConvention::GoJava, IndexConvention::Python] {
            let bytes = encode_vec(&s, convention);
            let mut t = s.clone();
            t.clear();
            decode_into(&bytes, convention, &mut t).unwrap();
            assert!(t.bins().eq(s.bins()));
        }
    }

    /// `IntMapping` with every index moved up to just below `i32::MAX`.
    #[derive(Debug, Clone, Copy, PartialEq)]
    struct NearTop(IntMapping);

    const NEAR_TOP: i32 = i32::MAX - 70;

    impl IndexMapping for NearTop {
        const INTERPOLATION: Interpolation = Interpolation::Linear;
        const DEFAULT: Self = NearTop(IntMapping::K6);
        fn with_relative_accuracy(alpha: f64) -> Result<Self, crate::sketch::ConfigError> {
            IntMapping::with_relative_accuracy(alpha).map(NearTop)
        }
        fn relative_accuracy(&self) -> f64 {
            self.0.relative_accuracy()
        }
        fn gamma(&self) -> f64 {
            self.0.gamma()
        }
        fn index_offset(&self) -> f64 {
            f64::from(NEAR_TOP)
        }
        fn index(&self, value: f64) -> i32 {
            self.0.index(value).saturating_add(NEAR_TOP)
        }
        fn lower_bound(&self, index: i32) -> f64 {
            self.0.lower_bound(index - NEAR_TOP)
        }
    }

    #[test]
    fn keys_beyond_sint32_move_into_the_offset() {
        let mut s = DDSketch::<NearTop, 64>::with_relative_accuracy(0.01, 1.0).unwrap();
        s.record(1.94).unwrap(); // bin 60 of the octave: Go's key would pass i32::MAX
        assert!(s.bins().next().unwrap().index > i32::MAX - 64);
        let bytes = encode_vec(&s, IndexConvention::GoJava);
        assert_eq!(
            read_mapping(&bytes).unwrap().index_offset(),
            f64::from(NEAR_TOP)
        );
        let mut t = s.clone();
        t.clear();
        decode_into(&bytes, IndexConvention::GoJava, &mut t).unwrap();
        assert!(t.bins().eq(s.bins()));
    }
}
