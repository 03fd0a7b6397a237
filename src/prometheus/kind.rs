//! [`NativeHistogram`]: the sketches that are Prometheus native histograms bucket for
//! bucket, as [`otlp::OtelSketch`](crate::otlp::OtelSketch) names the same two for
//! OpenTelemetry: [`DDSketch<OtelMapping, N>`](crate::sketch::DDSketch) (its scale fixed)
//! and [`ExponentialSketch<C, B>`](crate::sketch::ExponentialSketch) (its scale its own).

use crate::sketch::{Counter, DDSketch, ExponentialSketch, OtelMapping};

pub(super) mod sealed {
    use crate::sketch::OtelMapping;

    /// What the encoders need of a sketch; outside the crate, nothing implements it.
    pub trait Sealed {
        /// The mapping of its buckets (its scale is the schema, down to 8).
        fn buckets_mapping(&self) -> OtelMapping;
        /// The values held, the zero bucket's included.
        fn sample_count(&self) -> u64;
        /// Their sum.
        fn sample_sum(&self) -> f64;
        /// The values in the zero bucket.
        fn zeros(&self) -> u64;
        /// The zero bucket's threshold: above 0, below every bucket's values.
        fn zero_threshold(&self) -> f64;
        /// The non-empty buckets, ascending: `(OpenTelemetry index, count)`.
        fn buckets(&self) -> impl Iterator<Item = (i32, u64)> + '_;
    }
}

/// A sketch that is a Prometheus native histogram, bucket for bucket: what
/// [`encode_metric_family`](super::encode_metric_family),
/// [`metric_family_len`](super::metric_family_len), [`encode_text`](super::encode_text),
/// [`text_len`](super::text_len) and [`Format`](super::Format) take.
///
/// * [`DDSketch<OtelMapping, N>`](crate::sketch::DDSketch): at its mapping's scale (down
///   to schema 8), its zero bin the zero bucket.
/// * [`ExponentialSketch<C, B>`](crate::sketch::ExponentialSketch), any counter and size:
///   at whatever scale it is at (at most 8, so schema = scale), its zero count the zero
///   bucket (see [Zero bucket](super#from-bins-to-buckets) for the threshold).
///
/// Sealed: implemented for those two only, so a DataDog-mapped sketch does not compile.
///
/// ```
/// use tailguard::prometheus::{self, NativeHistogram};
/// use tailguard::sketch::{presets, ExponentialSketch};
///
/// fn len(s: &impl NativeHistogram) -> usize {
///     prometheus::metric_family_len("rpc_latency_ns", "", s, &[]).unwrap()
/// }
/// let mut fixed = presets::otel_latency();
/// let mut auto = ExponentialSketch::<u16, 64>::new();
/// fixed.record_u64(1_000_000);
/// auto.record_u64(1_000_000);
/// assert!(len(&fixed) > 0 && len(&auto) > 0);
/// ```
pub trait NativeHistogram: sealed::Sealed {}

impl<T: sealed::Sealed> NativeHistogram for T {}

impl<const N: usize> sealed::Sealed for DDSketch<OtelMapping, N> {
    fn buckets_mapping(&self) -> OtelMapping {
        *DDSketch::mapping(self)
    }

    fn sample_count(&self) -> u64 {
        DDSketch::count(self)
    }

    fn sample_sum(&self) -> f64 {
        DDSketch::sum(self)
    }

    fn zeros(&self) -> u64 {
        u64::from(DDSketch::zero_count(self))
    }

    /// The float just below the sketch's range, whose zero bin holds zeros and every
    /// value below [`min_trackable`](DDSketch::min_trackable) (Prometheus's zero bucket
    /// is `[-t, t]`). Never 0: Prometheus stores a histogram whose threshold is 0 and
    /// which has no buckets as a classic one. When the range starts at the smallest
    /// subnormal (the lowest bin is the subnormals' bucket, that of `2^-1022`), no
    /// positive float is below it: the threshold is then an exponential sketch's,
    /// `2^-1024`, at or below that bucket's lower edge at every schema.
    fn zero_threshold(&self) -> f64 {
        let t = self.min_trackable().next_down();
        if t > 0.0 {
            t
        } else {
            EXPONENTIAL_ZERO_THRESHOLD
        }
    }

    fn buckets(&self) -> impl Iterator<Item = (i32, u64)> + '_ {
        self.bins().map(|bin| (bin.index, u64::from(bin.count)))
    }
}

/// An [`ExponentialSketch`]'s zero threshold at every scale: `2^-1024`, the lower edge of
/// the lowest bucket at schemas -4 to -1 (`(2^-1024, 2^-1008]` at -4) and below it at the
/// others (`2^-1022 * 2^(-1/256)` at 8). So no bucket reaches down to it, and Prometheus
/// neither folds a bucket into the zero bucket nor widens the threshold (which it does
/// for a bucket straddling it). Above 0, and the same at every scale, so successive
/// scrapes of a sketch that downscaled keep one threshold. (Subnormals, which the sketch
/// holds in the bucket of `2^-1022` as the SDKs do, are the only values at or below it.)
pub(super) const EXPONENTIAL_ZERO_THRESHOLD: f64 = f64::MIN_POSITIVE / 4.0;

impl<C: Counter, const B: usize> sealed::Sealed for ExponentialSketch<C, B> {
    fn buckets_mapping(&self) -> OtelMapping {
        ExponentialSketch::mapping(self)
    }

    fn sample_count(&self) -> u64 {
        ExponentialSketch::count(self)
    }

    fn sample_sum(&self) -> f64 {
        ExponentialSketch::sum(self)
    }

    fn zeros(&self) -> u64 {
        ExponentialSketch::zero_count(self)
    }

    fn zero_threshold(&self) -> f64 {
        EXPONENTIAL_ZERO_THRESHOLD
    }

    fn buckets(&self) -> impl Iterator<Item = (i32, u64)> + '_ {
        let offset = self.offset();
        (0i32..)
            .zip(self.bucket_counts())
            .filter(|&(_, n)| n > 0)
            // At most B <= 2^20 buckets from an offset of a finite float's index.
            .map(move |(k, n)| (offset.wrapping_add(k), n))
    }
}

#[cfg(test)]
mod tests {
    use super::sealed::Sealed;
    use super::*;
    use crate::prometheus::test_decode::{family, Histogram};
    use crate::prometheus::{
        encode_metric_family, encode_text, metric_family_len, text_len, EncodeError, Format,
    };
    use crate::sketch::IndexMapping;
    use std::string::String;
    use std::vec;
    use std::vec::Vec;

    fn protobuf(s: &impl NativeHistogram) -> Vec<u8> {
        let len = metric_family_len("m", "h", s, &[("k", "v")]).unwrap();
        let mut buf = vec![0u8; len];
        assert_eq!(
            encode_metric_family("m", "h", s, &[("k", "v")], &mut buf),
            Ok(len)
        );
        assert_eq!(
            Format::Protobuf.encoded_len("m", "h", s, &[("k", "v")]),
            Ok(len)
        );
        buf
    }

    fn text(s: &impl NativeHistogram) -> String {
        let len = text_len("m", "h", s, &[("k", "v")]).unwrap();
        let mut buf = vec![0u8; len];
        assert_eq!(encode_text("m", "h", s, &[("k", "v")], &mut buf), Ok(len));
        assert_eq!(
            Format::Text.encoded_len("m", "h", s, &[("k", "v")]),
            Ok(len)
        );
        String::from_utf8(buf).unwrap()
    }

    /// Count, sum's bits, schema, zero count, spans and deltas.
    type Fields<'a> = (u64, u64, i32, u64, &'a [(i32, u32)], &'a [i64]);

    /// Everything but the zero threshold, which is each kind's own.
    fn fields(h: &Histogram) -> Fields<'_> {
        (
            h.count,
            h.sum.to_bits(),
            h.schema,
            h.zero_count,
            &h.spans,
            &h.deltas,
        )
    }

    /// `values` into an exponential sketch of `B` buckets and into a `DDSketch` at the
    /// scale it ended at: the same histogram, bucket for bucket, and the same text but
    /// for the zero bucket's edge.
    fn same_as_ddsketch<C: Counter, const B: usize>(values: &[u64]) -> i32 {
        let mut e = ExponentialSketch::<C, B>::new();
        values.iter().for_each(|&v| e.record_u64(v));
        let scale = e.scale();
        let mut d: DDSketch<OtelMapping, 8192> =
            DDSketch::new(OtelMapping::with_scale(scale).unwrap(), 0.5).unwrap();
        values.iter().for_each(|&v| d.record_u64(v));
        assert_eq!((d.clamped(), d.saturated()), (0, 0));
        let (he, hd) = (
            family(&protobuf(&e)).histogram,
            family(&protobuf(&d)).histogram,
        );
        assert_eq!(fields(&he), fields(&hd), "scale {scale}");
        assert_eq!(he.schema, scale);
        assert_eq!((he.count, he.zero_count), (e.count(), e.zero_count()));
        assert_eq!(he.sum, e.sum());
        assert_eq!(he.zero_threshold, EXPONENTIAL_ZERO_THRESHOLD);
        // The buckets are the sketch's own, each at its index plus one.
        let own: Vec<(i32, u64)> = (e.offset() + 1..)
            .zip(e.bucket_counts())
            .filter(|&(_, n)| n > 0)
            .collect();
        assert_eq!(he.buckets(), own);
        let zero_line = |t: &str, zt: f64| {
            let line = std::format!("m_bucket{{k=\"v\",le=\"{zt}\"}}");
            t.lines()
                .filter(|l| !l.starts_with(&line))
                .collect::<Vec<_>>()
                .join("\n")
        };
        let (te, td) = (text(&e), text(&d));
        assert_eq!(
            zero_line(&te, EXPONENTIAL_ZERO_THRESHOLD),
            zero_line(&td, d.zero_threshold())
        );
        if e.zero_count() > 0 {
            let want = std::format!(
                "m_bucket{{k=\"v\",le=\"{EXPONENTIAL_ZERO_THRESHOLD}\"}} {}\n",
                e.zero_count()
            );
            assert!(te.contains(&want), "{te}");
        }
        scale
    }

    #[test]
    fn an_exponential_sketch_is_the_ddsketch_of_its_scale() {
        // Narrow data stays at scale 8; wider data downscales (to 3 for five decades in
        // 160 buckets; to 0 and below in 16).
        let narrow: Vec<u64> = (1000..1100).collect();
        let decades: Vec<u64> = (1..=20_000u64).map(|v| v * 5_000).chain([0, 0]).collect();
        let wide: Vec<u64> = (0..40).map(|e| 3u64.pow(e)).chain([0]).collect();
        let edges: Vec<u64> = (0..50)
            .flat_map(|e| [(1u64 << e) - 1, 1 << e, (1 << e) + 1])
            .collect();
        assert_eq!(same_as_ddsketch::<u32, 160>(&narrow), 8);
        assert_eq!(same_as_ddsketch::<u32, 160>(&decades), 3);
        assert_eq!(same_as_ddsketch::<u16, 64>(&decades), 2);
        assert!(same_as_ddsketch::<u16, 16>(&wide) <= 0);
        assert!(same_as_ddsketch::<u64, 32>(&edges) <= 0);
        // Every schema: 1 (bucket -1) and 2^k in 4 buckets reach -4 (k = 48; 2^49 is in
        // bucket 3 at -4, too far) to 1, in 256 buckets 2 to 7, and 8 with k = 0.
        let mut seen = Vec::new();
        for k in 0..49 {
            let values = [1, 1u64 << k];
            seen.push(same_as_ddsketch::<u8, 4>(&values));
            seen.push(same_as_ddsketch::<u32, 256>(&values));
        }
        for schema in -4..=8 {
            assert!(seen.contains(&schema), "{schema}: {seen:?}");
        }
    }

    /// Merged sketches and full counters: still the sketch's buckets, count and sum.
    #[test]
    fn merged_and_saturated_sketches_write_what_they_hold() {
        let mut a = ExponentialSketch::<u8, 16>::new();
        let mut b = ExponentialSketch::<u8, 16>::new();
        (0..600).for_each(|k| a.record_u64(1_000 + k % 3));
        (0..50).for_each(|k| b.record_u64(1_000_000 * (k + 1)));
        b.record(0.0).unwrap();
        a.merge(&b);
        assert!(a.saturated() > 0 && a.scale() < 8);
        let h = family(&protobuf(&a)).histogram;
        assert_eq!((h.count, h.sum, h.zero_count), (a.count(), a.sum(), 1));
        assert_eq!(h.schema, a.scale());
        let total: u64 = h.buckets().iter().map(|&(_, n)| n).sum();
        assert_eq!(total + h.zero_count, a.count());
    }

    #[test]
    fn an_empty_exponential_sketch_is_a_native_histogram() {
        let s = ExponentialSketch::<u16, 64>::new();
        let h = family(&protobuf(&s)).histogram;
        assert_eq!((h.count, h.zero_count, h.schema, h.sum), (0, 0, 8, 0.0));
        assert!(h.zero_threshold > 0.0 && h.spans.is_empty() && h.deltas.is_empty());
        let t = text(&s);
        assert!(
            t.ends_with("m_bucket{k=\"v\",le=\"+Inf\"} 0\nm_sum{k=\"v\"} 0\nm_count{k=\"v\"} 0\n"),
            "{t}"
        );
    }

    /// The threshold is above 0 and at or below the lower edge of the lowest bucket at
    /// every schema (that of `2^-1022`, where the subnormals are too).
    #[test]
    fn the_zero_threshold_is_below_every_bucket() {
        let t = EXPONENTIAL_ZERO_THRESHOLD;
        assert!(t > 0.0 && t == f64::from_bits(1 << 50)); // 2^-1024, a subnormal
        for scale in -4..=8 {
            let m = OtelMapping::with_scale(scale).unwrap();
            let lowest = m.index(f64::MIN_POSITIVE);
            assert!(m.lower_bound(lowest) >= t, "scale {scale}");
        }
        // The subnormals are in the bucket of 2^-1022, the lowest.
        let mut s = ExponentialSketch::<u32, 2>::new();
        s.record(5e-324).unwrap();
        s.record(f64::MIN_POSITIVE).unwrap();
        let m8 = OtelMapping::with_scale(8).unwrap();
        assert_eq!((s.scale(), s.offset()), (8, m8.index(f64::MIN_POSITIVE)));
        assert_eq!(s.bucket_counts().collect::<Vec<_>>(), [2]);
        // At -4 the lowest bucket is (2^-1024, 2^-1008]: the threshold is its edge.
        let m = OtelMapping::with_scale(-4).unwrap();
        assert_eq!(m.lower_bound(m.index(f64::MIN_POSITIVE)), t);
    }

    #[test]
    fn a_sketch_coarser_than_schema_minus_4_is_refused() {
        let mut s = ExponentialSketch::<u32, 2>::new();
        s.record(1e-300).unwrap();
        s.record(1e300).unwrap();
        let scale = s.scale();
        assert!(scale < -4, "{s:?}");
        let err = Err(EncodeError::ScaleTooCoarse { scale });
        let mut buf = [0u8; 512];
        assert_eq!(metric_family_len("m", "", &s, &[]), err);
        assert_eq!(encode_metric_family("m", "", &s, &[], &mut buf), err);
        assert_eq!(text_len("m", "", &s, &[]), err);
        assert_eq!(encode_text("m", "", &s, &[], &mut buf), err);
        assert_eq!(Format::Text.encode("m", "", &s, &[], &mut buf), err);
        assert_eq!(buf, [0u8; 512]);
    }

    #[test]
    fn every_short_buffer_is_refused_for_an_exponential_sketch() {
        let mut s = ExponentialSketch::<u16, 32>::new();
        for v in [0, 1, 2_500, 2_600, 900_000, 1_000_000_000] {
            s.record_u64(v);
        }
        let (full, full_text) = (protobuf(&s), text(&s));
        for len in 0..full.len().max(full_text.len()) {
            let mut buf = vec![0xa5u8; len];
            if len < full.len() {
                let err = encode_metric_family("m", "h", &s, &[("k", "v")], &mut buf);
                assert_eq!(err, Err(EncodeError::BufferTooSmall { needed: full.len() }));
            }
            if len < full_text.len() {
                let err = encode_text("m", "h", &s, &[("k", "v")], &mut buf);
                let needed = full_text.len();
                assert_eq!(err, Err(EncodeError::BufferTooSmall { needed }));
            }
            assert!(buf.iter().all(|&b| b == 0xa5));
        }
    }
}
