//! A hostile review of the sketch core and its codecs: each test shows a promise that
//! broke, as it now holds.

use tailguard::sketch::{presets, ConfigError, CubicMapping, DDSketch, IndexMapping, LogMapping};

/// An `alpha` so small that `(1 + alpha) / (1 - alpha)` rounds to 1 was accepted with a
/// gamma of 1 and an infinite multiplier: every value but 1 then took an end index (the
/// zero bin or the top bin), with `relative_accuracy()` still reporting that alpha.
/// `ConfigError::InvalidAccuracy` promises the refusal ("a mapping's gamma is not above
/// 1, or the mapping supports no accuracy that fine").
#[test]
fn an_alpha_whose_gamma_rounds_to_one_is_refused() {
    for alpha in [1e-17, 5e-17, f64::MIN_POSITIVE, 1e-300] {
        assert_eq!(
            LogMapping::with_relative_accuracy(alpha).err(),
            Some(ConfigError::InvalidAccuracy),
            "{alpha:e}"
        );
        assert_eq!(
            CubicMapping::with_relative_accuracy(alpha).err(),
            Some(ConfigError::InvalidAccuracy),
            "{alpha:e}"
        );
        assert!(DDSketch::<LogMapping, 64>::with_relative_accuracy(alpha, 1.0).is_err());
    }
    // The smallest accuracies whose gamma is above 1 still build, with a finite multiplier.
    for alpha in [1e-15, 2e-16] {
        let m = LogMapping::with_relative_accuracy(alpha).unwrap();
        assert!(m.gamma() > 1.0);
        let c = CubicMapping::with_relative_accuracy(alpha).unwrap();
        assert!(c.gamma() > 1.0);
    }
}

/// The quantile promise was "within `relative_accuracy()` with no slack, bin edges
/// included", `relative_accuracy()` being alpha plus `8 * 2^-52`. Far from 1 that fails:
/// the keys (DataDog's floating-point formula, reproduced bit for bit) and the bins'
/// representatives carry a rounding error that grows with `|log2 v|`. In the 1 % log
/// preset itself, at about 28 s in nanoseconds (inside its range of 1 µs to 100 s), the
/// first value of a bin is answered about 17 units in the last place beyond it. The docs
/// now state that slack; this checks the preset's value against it.
#[test]
fn a_bin_edge_far_from_one_is_within_alpha_and_a_rounding_hair() {
    let mut s = presets::log_latency();
    let m = *s.mapping();
    let v = 2.8149686314790493e10; // the first value of its bin
    assert!(m.index(v) > m.index(v.next_down()));
    for x in [1e9, v, 9e10] {
        s.record(x).unwrap();
    }
    assert_eq!(s.clamped(), 0);
    let got = s.quantile(0.5).unwrap().unwrap();
    let alpha = s.relative_accuracy();
    // Not within alpha + 8 * 2^-52, as promised before:
    assert!((got - v).abs() > alpha * v, "{got}");
    // Within alpha and the documented hair of rounding, 2^-44 * |log2 v| (about 2^-39 here).
    let hair = (v.log2().abs() + 1.0) * 2f64.powi(-44);
    assert!((got - v).abs() <= (alpha + hair) * v, "{got}");
}
