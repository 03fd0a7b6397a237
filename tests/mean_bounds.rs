//! `mean()` stays within `[min, max]` even where the float sum cannot: values above a
//! fixed range enter min, max and sum as themselves (and an exponential sketch's range is
//! every float), so two of `f64::MAX` overflow the sum to `+inf`, while the mean of
//! values at most `f64::MAX` is at most `f64::MAX`.

use tailguard::sketch::{presets, ExponentialSketch};

/// Values whose float sum overflows: the mean is about `f64::MAX`, not `+inf`.
const HUGE: [f64; 3] = [f64::MAX, f64::MAX, 1e308];

/// Records [`HUGE`] with `record` and checks `(min, max, mean)` as read after it.
fn assert_mean_within_extremes<S>(
    mut sketch: S,
    record: impl Fn(&mut S, f64),
    read: impl Fn(&S) -> (Option<f64>, Option<f64>, Option<f64>),
) {
    for v in HUGE {
        record(&mut sketch, v);
    }
    let (min, max, mean) = read(&sketch);
    let (min, max, mean) = (min.unwrap(), max.unwrap(), mean.unwrap());
    assert!(
        min <= mean && mean <= max,
        "mean {mean} outside [{min}, {max}]"
    );
}

#[test]
fn the_mean_of_huge_finite_values_stays_within_min_and_max() {
    assert_mean_within_extremes(
        presets::log_latency(),
        |s, v| s.record(v).unwrap(),
        |s| (s.min(), s.max(), s.mean()),
    );
}

#[test]
fn an_exponential_sketchs_mean_of_huge_finite_values_stays_within_min_and_max() {
    assert_mean_within_extremes(
        ExponentialSketch::<u32, 160>::new(),
        |s, v| s.record(v).unwrap(),
        |s| (s.min(), s.max(), s.mean()),
    );
}
