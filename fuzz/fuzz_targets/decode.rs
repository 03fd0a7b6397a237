//! Arbitrary bytes -> `proto::decode_into`: never panics; on error the sketch is unchanged;
//! when decoding succeeds, encode then decode gives the same sketch, and its quantiles
//! rise from its min to its max.
//!
//! The first byte picks the sketch (mapping, accuracy, range) and the convention; the
//! rest is the message. With its top bit set, the rest instead draws a message as
//! DataDog's Go, Java or Python library writes one (`tailguard::fuzzing::ddsketch_message`),
//! decoded into a sketch of its own mapping, or, if no sketch decodes it exactly,
//! refused by every sketch without a change.
#![no_main]

mod common;

use common::{assert_quantiles_rise, decode_all_or_nothing, with_selected_sketch};

use libfuzzer_sys::arbitrary::Unstructured;
use libfuzzer_sys::fuzz_target;
use tailguard::fuzzing::{ddsketch_message, Decodes};
use tailguard::proto::{self, IndexConvention};
use tailguard::sketch::{CubicMapping, DDSketch, IndexMapping, IntMapping, LogMapping};

fuzz_target!(|data: &[u8]| {
    decode(data);
});

fn decode(data: &[u8]) {
    let Some((&selector, message)) = data.split_first() else {
        return;
    };
    if selector & 0x80 != 0 {
        return generated(message);
    }
    let _ = with_selected_sketch!(selector, message, check);
}

/// A message DataDog's libraries could have written, drawn from `bytes`.
fn generated(bytes: &[u8]) {
    let mut buf = vec![0u8; 40_000];
    let Ok(message) = ddsketch_message(&mut Unstructured::new(bytes), &mut buf) else {
        return;
    };
    let wire = &buf[..message.len];
    let convention = message.convention;
    let decoded = match message.decodes {
        Decodes::Log(m) => check(
            DDSketch::<LogMapping, 2048>::new(m, 1e-3).unwrap(),
            wire,
            convention,
        ),
        Decodes::Cubic(m) => check(
            DDSketch::<CubicMapping, 2048>::new(m, 1e-3).unwrap(),
            wire,
            convention,
        ),
        Decodes::Int(m) => check(
            DDSketch::<IntMapping, 4096>::new(m, 1e-3).unwrap(),
            wire,
            convention,
        ),
        Decodes::Refused(why) => {
            let mut log = DDSketch::<LogMapping, 64>::with_relative_accuracy(0.01, 1.0).unwrap();
            let mut int = DDSketch::<IntMapping, 64>::with_relative_accuracy(0.01, 1.0).unwrap();
            assert!(
                proto::decode_into(wire, convention, &mut log).is_err(),
                "{why:?}"
            );
            assert!(
                proto::decode_into(wire, convention, &mut int).is_err(),
                "{why:?}"
            );
            assert!(log.is_empty() && int.is_empty());
            return;
        }
        other => panic!("a mapping this target does not know: {other:?}"),
    };
    let report = decoded.expect("the generator says a sketch of this mapping decodes it");
    // Every count was added, or counted as saturated.
    let total = report.added.saturating_add(report.saturated);
    if message.count < 9e15 {
        assert_eq!(total as f64, message.count);
    }
}

fn check<M: IndexMapping, const N: usize>(
    empty: DDSketch<M, N>,
    message: &[u8],
    convention: IndexConvention,
) -> Option<proto::Decoded> {
    // Into a sketch that holds values already: all or nothing.
    let decode = |target: &mut DDSketch<M, N>| proto::decode_into(message, convention, target);
    let Ok((_, target, report)) = decode_all_or_nothing!(&empty, decode) else {
        return None;
    };
    let mapping = proto::read_mapping(message).expect("decoded, so the mapping reads");
    assert!(mapping.relative_accuracy(convention).is_some());

    // Into a fresh sketch, then through encode and decode again.
    let mut a = empty.clone();
    let first = proto::decode_into(message, convention, &mut a).expect("decoded once");
    // The same values, though the filled sketch may saturate a bin earlier.
    assert_eq!(
        first.added.saturating_add(first.saturated),
        report.added.saturating_add(report.saturated)
    );
    if first.saturated == 0 && report.saturated == 0 {
        assert_eq!(first, report);
    }
    let mut buf = vec![0u8; proto::encoded_len(&a, convention)];
    let len = proto::encode(&a, convention, &mut buf).expect("buffer of encoded_len");
    assert_eq!(len, buf.len());
    let mut b = empty.clone();
    let second = proto::decode_into(&buf, convention, &mut b).expect("own output decodes");
    assert_eq!(second.added, a.count());
    assert_eq!(
        (second.below_range, second.above_range, second.saturated),
        (0, 0, 0)
    );
    assert!(a.bins().eq(b.bins()));
    assert_eq!(a.zero_count(), b.zero_count());
    assert_eq!(a.count(), b.count());
    if report.below_range == 0 && report.above_range == 0 {
        // Every bin entered the stats at its own value: the same sketch both times.
        assert_eq!(a.min(), b.min());
        assert_eq!(a.max(), b.max());
        for q in [0.0, 0.1, 0.5, 0.9, 0.999, 1.0] {
            assert_eq!(a.quantile(q), b.quantile(q), "q={q}");
        }
        let (x, y) = (a.sum(), b.sum());
        assert!(
            x == y || (x - y).abs() <= 1e-9 * x.max(y),
            "sums {x} vs {y}"
        );
    }
    // And once more: a fixed point.
    let mut again = vec![0u8; proto::encoded_len(&b, convention)];
    proto::encode(&b, convention, &mut again).unwrap();
    assert_eq!(again, buf);
    // Whatever the message held, the decoded sketches answer as any sketch does.
    assert_quantiles_rise(&a);
    assert_quantiles_rise(&target);
    Some(first)
}
