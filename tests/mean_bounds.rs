//! `mean()` stays within `[min, max]` even where the float sum cannot: values above a
//! fixed range enter min, max and sum as themselves (and an exponential sketch's range is
//! every float), so two of `f64::MAX` overflow the sum to `+inf`, while the mean of
//! values at most `f64::MAX` is at most `f64::MAX`.

use tailguard::sketch::{presets, ExponentialSketch};

/// Values whose float sum overflows: the mean is about `f64::MAX`, not `+inf`.
const HUGE: [f64; 3] = [f64::MAX, f64::MAX, 1e308];

#[test]
fn the_mean_of_huge_finite_values_stays_within_min_and_max() {
    let mut s = presets::log_latency();
    for v in HUGE {
        s.record(v).unwrap();
    }
    let (min, max, mean) = (s.min().unwrap(), s.max().unwrap(), s.mean().unwrap());
    assert!(
        min <= mean && mean <= max,
        "mean {mean} outside [{min}, {max}]"
    );
}

#[test]
fn an_exponential_sketchs_mean_of_huge_finite_values_stays_within_min_and_max() {
    let mut s = ExponentialSketch::<u32, 160>::new();
    for v in HUGE {
        s.record(v).unwrap();
    }
    let (min, max, mean) = (s.min().unwrap(), s.max().unwrap(), s.mean().unwrap());
    assert!(
        min <= mean && mean <= max,
        "mean {mean} outside [{min}, {max}]"
    );
}
