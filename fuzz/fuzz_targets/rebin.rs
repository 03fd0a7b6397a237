//! Arbitrary bytes -> `proto::decode_rebinned`: never panics; all or nothing (on error the
//! sketch is unchanged; on success its count grew by `added`); a message of the sketch's
//! own mapping decodes exactly as `decode_into` decodes it, any other is re-binned.
//!
//! The first byte picks the sketch (mapping, accuracy, range) and the convention, as in
//! the `decode` target (so its seeds serve here too); the rest is the message.
#![no_main]

mod common;

use common::{assert_report_adds_up, holding_values, with_selected_sketch, MessageCheck};

use libfuzzer_sys::fuzz_target;
use tailguard::proto::{self, IndexConvention};
use tailguard::sketch::{DDSketch, IndexMapping};

fuzz_target!(|data: &[u8]| {
    let Some((&selector, message)) = data.split_first() else {
        return;
    };
    with_selected_sketch(selector, message, Rebin);
});

/// The check of a message against a sketch [`with_selected_sketch`] picks.
struct Rebin;

impl MessageCheck for Rebin {
    fn check<M: IndexMapping, const N: usize>(
        self,
        empty: DDSketch<M, N>,
        message: &[u8],
        convention: IndexConvention,
    ) {
        check(empty, message, convention);
    }
}

fn check<M: IndexMapping, const N: usize>(
    empty: DDSketch<M, N>,
    message: &[u8],
    convention: IndexConvention,
) {
    // Into a sketch that holds values already: all or nothing.
    let mut target = holding_values(&empty);
    let before = target.clone();
    let report = match proto::decode_rebinned(message, convention, &mut target) {
        Err(e) => {
            assert!(target == before, "{e} changed the sketch");
            let _ = e.to_string();
            // What decode_rebinned refuses, decode_into refuses too.
            let mut other = before.clone();
            assert!(proto::decode_into(message, convention, &mut other).is_err());
            return;
        }
        Ok(report) => report,
    };
    let r = &report;
    assert_report_adds_up(
        &before,
        &target,
        (r.added, r.saturated, r.below_range, r.above_range),
    );
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
    // The statistics stay numbers, and quantiles answer.
    assert!(!target.sum().is_nan());
    for q in [0.0, 0.01, 0.5, 0.99, 1.0] {
        let v = target.quantile(q).unwrap().unwrap();
        assert!(v >= 0.0, "q={q} {v}");
    }
}
