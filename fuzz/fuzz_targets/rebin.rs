//! Arbitrary bytes -> `proto::decode_rebinned`: never panics; all or nothing (on error the
//! sketch is unchanged; on success its count grew by `added`); a message of the sketch's
//! own mapping decodes exactly as `decode_into` decodes it, any other is re-binned; the
//! quantiles rise from the min to the max.
//!
//! The first byte picks the sketch (mapping, accuracy, range) and the convention, as in
//! the `decode` target (so its seeds serve here too); the rest is the message.
#![no_main]

mod common;

use common::{assert_quantiles_rise, decode_all_or_nothing, with_selected_sketch};

use libfuzzer_sys::fuzz_target;
use tailguard::proto::{self, IndexConvention};
use tailguard::sketch::{DDSketch, IndexMapping};

fuzz_target!(|data: &[u8]| {
    let Some((&selector, message)) = data.split_first() else {
        return;
    };
    with_selected_sketch!(selector, message, check);
});

fn check<M: IndexMapping, const N: usize>(
    empty: DDSketch<M, N>,
    message: &[u8],
    convention: IndexConvention,
) {
    // Into a sketch that holds values already: all or nothing.
    let decode = |target: &mut DDSketch<M, N>| proto::decode_rebinned(message, convention, target);
    let (before, target, report) = match decode_all_or_nothing!(&empty, decode) {
        Ok(decoded) => decoded,
        Err((before, _)) => {
            // What decode_rebinned refuses, decode_into refuses too.
            let mut other = before.clone();
            assert!(proto::decode_into(message, convention, &mut other).is_err());
            return;
        }
    };
    assert!(report.rebinned <= report.added);
    let alpha = before.relative_accuracy();
    assert!(report.relative_error >= alpha && report.relative_error <= 3.0);

    // The sketch's own mapping: exactly decode_into. Any other: decode_into refuses it.
    let mut exact = before.clone();
    match proto::decode_into(message, convention, &mut exact) {
        Ok(d) => {
            assert!(report.exact);
            assert!(exact == target, "decode_rebinned differs from decode_into");
            assert_eq!(report.rebinned, 0);
            assert_eq!(report.relative_error, alpha);
            assert_eq!(
                (d.added, d.below_range, d.above_range, d.saturated),
                (
                    report.added,
                    report.below_range,
                    report.above_range,
                    report.saturated
                )
            );
        }
        Err(_) => assert!(!report.exact),
    }
    // The statistics stay numbers, and quantiles rise from the min to the max.
    assert!(!target.sum().is_nan());
    assert_quantiles_rise(&target);
}
