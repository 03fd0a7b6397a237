//! Accuracies too fine for a float: refused, as `ConfigError::InvalidAccuracy` promises.

use tailguard::sketch::{ConfigError, CubicMapping, DDSketch, IndexMapping, LogMapping};

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
