//! The Prometheus encoders at the float range's ends: the text format stays a classic
//! histogram (each `le` once, rising, the counts cumulative) with buckets past the largest
//! float, and the zero bucket stays below a range that starts among the subnormals.

use tailguard::prometheus::{encode_text, text_len, NativeHistogram};
use tailguard::sketch::{DDSketch, OtelMapping};

fn text_of<S: NativeHistogram>(s: &S) -> String {
    let len = text_len("m", "", s, &[]).unwrap();
    let mut buf = vec![0u8; len];
    assert_eq!(encode_text("m", "", s, &[], &mut buf), Ok(len));
    String::from_utf8(buf).unwrap()
}

/// Each `m_bucket` line's `le` and count, in order.
fn buckets(text: &str) -> Vec<(f64, u64)> {
    text.lines()
        .filter(|l| l.starts_with("m_bucket"))
        .map(|l| {
            let le = l.split("le=\"").nth(1).unwrap().split('"').next().unwrap();
            let le = if le == "+Inf" {
                f64::INFINITY
            } else {
                le.parse().unwrap()
            };
            (le, l.rsplit(' ').next().unwrap().parse().unwrap())
        })
        .collect()
}

/// Each `le` once and rising, the counts cumulative, the last the count.
fn assert_classic(text: &str, count: u64) {
    let b = buckets(text);
    assert!(
        b.windows(2).all(|w| w[0].0 < w[1].0),
        "an le repeats or falls:\n{text}"
    );
    assert!(
        b.windows(2).all(|w| w[0].1 <= w[1].1),
        "not cumulative:\n{text}"
    );
    assert_eq!(b.last(), Some(&(f64::INFINITY, count)), "{text}");
}

/// An OTLP `ExponentialHistogramDataPoint` at scale -4 with a value in each of buckets
/// 100 and 104, both above the bucket of `f64::MAX` (63 at scale -4).
fn point_above_the_floats() -> Vec<u8> {
    let mut m = vec![0x30, 0x07]; // scale = -4 (sint32)
    m.push(0x21); // count = 2 (fixed64)
    m.extend_from_slice(&2u64.to_le_bytes());
    let counts = [1u8, 0, 0, 0, 1];
    let mut positive = vec![0x08, 0xc8, 0x01, 0x12, counts.len() as u8]; // offset = 100
    positive.extend_from_slice(&counts);
    m.push(0x42);
    m.push(positive.len() as u8);
    m.extend_from_slice(&positive);
    m
}

/// Buckets a sketch holds above the largest float (decoded from a peer's point into bins
/// that reach past it) all have the edge 2^1024, written as `f64::MAX`: one line for them,
/// not a repeated series.
#[test]
fn buckets_above_the_largest_float_share_one_le_line() {
    let mut s: DDSketch<OtelMapping, 256> =
        DDSketch::new(OtelMapping::with_scale(-4).unwrap(), 1.0).unwrap();
    tailguard::otlp::decode_into(&point_above_the_floats(), &mut s).unwrap();
    assert_eq!(s.count(), 2);
    let t = text_of(&s);
    assert_classic(&t, 2);
    assert_eq!(buckets(&t), [(f64::MAX, 2), (f64::INFINITY, 2)]);
}

/// A sketch whose lowest bin is that of the subnormals (`min_value` = `f64::MIN_POSITIVE`:
/// its `min_trackable` is the smallest subnormal, with no positive float below it). Its
/// zero threshold must still be below every bucket's `le`, not the upper edge of the
/// lowest bucket, which then holds values inside the zero bucket.
#[test]
fn the_zero_threshold_stays_below_the_bucket_of_the_subnormals() {
    for scale in [-4, 0, 5, 8, 12] {
        let mut s: DDSketch<OtelMapping, 64> =
            DDSketch::new(OtelMapping::with_scale(scale).unwrap(), f64::MIN_POSITIVE).unwrap();
        s.record(0.0).unwrap();
        s.record(f64::MIN_POSITIVE).unwrap();
        let t = text_of(&s);
        assert_classic(&t, 2);
        let b = buckets(&t);
        assert!(b[0].0 > 0.0 && b[0].1 == 1, "scale {scale}:\n{t}");
        // The lowest bucket's lower edge at the schema, at or above the threshold.
        let schema = scale.min(8);
        let m = OtelMapping::with_scale(schema).unwrap();
        let lowest = tailguard::sketch::IndexMapping::index(&m, f64::MIN_POSITIVE);
        let lower = tailguard::sketch::IndexMapping::lower_bound(&m, lowest);
        assert!(
            b[0].0 <= lower,
            "scale {scale}: threshold {:e} above {lower:e}",
            b[0].0
        );
    }
}
