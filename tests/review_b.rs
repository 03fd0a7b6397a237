//! Adversarial review findings (review-b): each test failed on the code it was written
//! against, where the docs promised otherwise.

use tailguard::sketch::presets;

/// `DDSketch::sum` docs: "the answer is clamped into `[count * min, count * max]` ... the
/// mean is within `[min, max]` to that". Huge finite values (above the range, so they
/// enter min, max and sum as themselves) overflow the float sum to `+inf`, and the mean
/// was `+inf` with it, above `max`.
#[test]
fn the_mean_of_huge_finite_values_stays_within_min_and_max() {
    let mut s = presets::log_latency();
    s.record_n(f64::MAX, 2).unwrap();
    s.record(1e308).unwrap();
    let (min, max, mean) = (s.min().unwrap(), s.max().unwrap(), s.mean().unwrap());
    assert!(min <= mean && mean <= max, "mean {mean} outside [{min}, {max}]");
}
