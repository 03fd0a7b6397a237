//! Review G: hostile inputs against the `metrics` recorder (feature `metrics`).

#![cfg(feature = "metrics")]

use metrics::HistogramFn;
use tailguard::metrics::{SketchHistogram, OTEL_SECONDS_LAYOUT};

/// `rejected` never wraps: a batch of `usize::MAX` NaNs on top of earlier rejections
/// saturates at `u64::MAX` (a plain `fetch_add` wrapped it back to 9, losing every one).
#[test]
fn rejected_saturates_instead_of_wrapping() {
    let h = SketchHistogram::with_layout(OTEL_SECONDS_LAYOUT);
    h.record_many(f64::NAN, 5);
    h.record_many(-1.0, 4);
    h.record(f64::NEG_INFINITY);
    assert_eq!(h.rejected(), 10);
    h.record_many(f64::NAN, usize::MAX);
    assert_eq!(h.rejected(), u64::MAX);
    h.record(f64::NAN);
    assert_eq!(h.rejected(), u64::MAX);
    assert_eq!(h.sketch().count(), 0);
}
