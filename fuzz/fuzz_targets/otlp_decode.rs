//! Arbitrary bytes -> `otlp::decode_into`: never panics; on error the sketch is unchanged;
//! the report adds up; when decoding succeeds, encode then decode gives the same sketch,
//! and its quantiles rise from its min to its max.
//!
//! The first byte picks the sketch (scale and range); the rest is the message. With its
//! top bit set, the rest instead draws a data point as OpenTelemetry SDKs and collectors
//! write one (`tailguard::fuzzing::otlp_data_point`): decoded into sketches of its scale,
//! a coarser and a finer one, it must do what its report predicts (every value added or
//! saturated, or the predicted error and no change), and pass the checks above too.
#![no_main]

mod common;

use common::{assert_quantiles_rise, decode_all_or_nothing};

use libfuzzer_sys::arbitrary::Unstructured;
use libfuzzer_sys::fuzz_target;
use tailguard::fuzzing::otlp_data_point;
use tailguard::otlp;
use tailguard::sketch::{DDSketch, OtelMapping};

fuzz_target!(|data: &[u8]| {
    let Some((&selector, message)) = data.split_first() else {
        return;
    };
    if selector & 0x80 != 0 {
        return generated(selector, message);
    }
    by_selector(selector, message);
});

fn by_selector(selector: u8, message: &[u8]) {
    match selector % 4 {
        0 => check::<1024>(5, 1.0, message),
        1 => check::<1024>(0, 1e-6, message),
        2 => check::<2048>(8, 1e-3, message),
        // A narrow range at a coarse scale: most buckets land outside it.
        _ => check::<16>(-2, 1.0, message),
    }
}

/// A data point an SDK or collector could have written, drawn from `bytes`.
fn generated(selector: u8, bytes: &[u8]) {
    let mut buf = vec![0u8; 40_000];
    let Ok(point) = otlp_data_point(&mut Unstructured::new(bytes), &mut buf) else {
        return;
    };
    let wire = &buf[..point.len];
    for delta in [0, -2, 1] {
        let Ok(mapping) = OtelMapping::with_scale(point.scale + delta) else {
            continue;
        };
        let holding = point.sketch_holding::<8192>(mapping);
        let held = holding.is_some();
        let mut s = holding.unwrap_or_else(|| DDSketch::new(mapping, 1.0).unwrap());
        s.record(3.0).unwrap();
        let before = s.clone();
        match (otlp::decode_into(wire, &mut s), point.outcome(&mapping)) {
            (Ok(report), Ok(())) => {
                assert_eq!(
                    report.added + report.saturated,
                    point.zero_count + point.positive
                );
                assert_eq!(s.count(), before.count() + report.added);
                // Values dropped as saturated make the sum an estimate.
                assert_eq!(
                    report.exact_stats,
                    point.exact_stats && report.saturated == 0
                );
                assert_eq!(report.scale, point.scale);
                if held {
                    assert_eq!((report.below_range, report.above_range), (0, 0));
                }
            }
            (Err(e), Err(predicted)) => {
                assert_eq!(e, predicted);
                assert!(s == before, "{e} changed the sketch");
            }
            (got, predicted) => panic!("decoded {got:?}, predicted {predicted:?}"),
        }
    }
    // And what arbitrary bytes are checked for, into the selector's sketch.
    by_selector(selector, wire);
}

fn check<const N: usize>(scale: i32, min_value: f64, message: &[u8]) {
    let mapping = OtelMapping::with_scale(scale).unwrap();
    let empty = DDSketch::<OtelMapping, N>::new(mapping, min_value).unwrap();
    // Into a sketch that holds values already: all or nothing.
    let decode = |target: &mut DDSketch<OtelMapping, N>| otlp::decode_into(message, target);
    let Ok((before, target, report)) = decode_all_or_nothing!(&empty, decode) else {
        return;
    };
    assert!(report.wide_zero <= report.added);
    // A coarser point is accepted only when it has no bucket counts (a zero count nests
    // at any scale).
    assert!(report.scale >= scale || target.bins().eq(before.bins()));
    assert_eq!(otlp::read_scale(message), Ok(report.scale));
    assert!(!target.is_empty());
    assert_quantiles_rise(&target);

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
        (
            second.below_range,
            second.above_range,
            second.saturated,
            second.wide_zero
        ),
        (0, 0, 0, 0)
    );
    assert_eq!(second.times, times);
    assert!(a.bins().eq(b.bins()));
    assert_eq!((a.zero_count(), a.count()), (b.zero_count(), b.count()));
    if a.count() > 0 {
        // The stats travel exactly: a's own are consistent with its bins (an infinite
        // sum included).
        assert!(second.exact_stats);
        assert_eq!((a.min(), a.max()), (b.min(), b.max()));
        assert_eq!(a.sum().to_bits(), b.sum().to_bits());
    }
    let mut again = vec![0u8; otlp::encoded_len(&b, times)];
    otlp::encode(&b, times, &mut again).unwrap();
    assert_eq!(again, buf);
}
