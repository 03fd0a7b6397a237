//! Arbitrary bytes -> `otlp::decode_into`: never panics; on error the sketch is unchanged;
//! the report adds up; when decoding succeeds, encode then decode gives the same sketch.
//!
//! The first byte picks the sketch (scale and range); the rest is the message.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tailguard::otlp;
use tailguard::sketch::{DDSketch, OtelMapping};

fuzz_target!(|data: &[u8]| {
    let Some((&selector, message)) = data.split_first() else {
        return;
    };
    match selector % 4 {
        0 => check::<1024>(5, 1.0, message),
        1 => check::<1024>(0, 1e-6, message),
        2 => check::<2048>(8, 1e-3, message),
        // A narrow range at a coarse scale: most buckets land outside it.
        _ => check::<16>(-2, 1.0, message),
    }
});

fn check<const N: usize>(scale: i32, min_value: f64, message: &[u8]) {
    let mapping = OtelMapping::with_scale(scale).unwrap();
    let empty = DDSketch::<OtelMapping, N>::new(mapping, min_value).unwrap();
    // Into a sketch that holds values already: all or nothing.
    let mut target = empty.clone();
    target.record(3.0).unwrap();
    target.record_u64(70);
    let before = target.clone();
    let report = match otlp::decode_into(message, &mut target) {
        Err(e) => {
            assert!(target == before, "{e} changed the sketch");
            let _ = e.to_string();
            return;
        }
        Ok(report) => report,
    };
    assert_eq!(target.count(), before.count().saturating_add(report.added));
    assert_eq!(
        target.saturated(),
        before.saturated().saturating_add(report.saturated)
    );
    assert_eq!(
        target.clamped(),
        before.clamped().saturating_add(report.above_range)
    );
    assert!(report.below_range.saturating_add(report.above_range) <= report.added);
    assert!(report.wide_zero <= report.added);
    // A coarser point is accepted only when it has no bucket counts (a zero count nests
    // at any scale).
    assert!(report.scale >= scale || target.bins().eq(before.bins()));
    assert_eq!(otlp::read_scale(message), Ok(report.scale));
    let (min, max) = (target.min().unwrap(), target.max().unwrap());
    assert!(min <= max && min >= 0.0, "min {min} max {max}");
    for q in [0.0, 0.25, 0.5, 0.99, 1.0] {
        let v = target.quantile(q).unwrap().unwrap();
        assert!(v >= min && v <= max, "q={q}: {v} outside [{min}, {max}]");
    }

    // Into a fresh sketch, then through encode and decode again: a fixed point.
    let mut a = empty.clone();
    let first = otlp::decode_into(message, &mut a).expect("decoded once");
    assert_eq!(
        first.added.saturating_add(first.saturated),
        report.added.saturating_add(report.saturated)
    );
    let times = report.times;
    let mut buf = vec![0u8; otlp::encoded_len(&a, times)];
    let len = otlp::encode(&a, times, &mut buf).expect("buffer of encoded_len");
    assert_eq!(len, buf.len());
    let mut b = empty.clone();
    let second = otlp::decode_into(&buf, &mut b).expect("own output decodes");
    assert_eq!(second.added, a.count());
    assert_eq!(
        (second.below_range, second.above_range, second.saturated, second.wide_zero),
        (0, 0, 0, 0)
    );
    assert_eq!(second.times, times);
    assert!(a.bins().eq(b.bins()));
    assert_eq!((a.zero_count(), a.count()), (b.zero_count(), b.count()));
    if a.count() > 0 && a.sum().is_finite() {
        // The stats travel exactly (a's own are consistent with its bins; a sum of
        // representatives can overflow, and an infinite sum is not taken).
        assert!(second.exact_stats);
        assert_eq!((a.min(), a.max()), (b.min(), b.max()));
    }
    let mut again = vec![0u8; otlp::encoded_len(&b, times)];
    otlp::encode(&b, times, &mut again).unwrap();
    assert_eq!(again, buf);
}
