//! Index mappings: how a value becomes a bin index, and a bin index a value. DataDog's
//! three, and OpenTelemetry's ([`OtelMapping`]).
//!
//! DataDog's three follow its DDSketch definitions (Go and Java conventions):
//!
//! * `index(v) = floor(approx_log(v) * multiplier + index_offset)`, where `approx_log` is the
//!   natural logarithm ([`LogMapping`]), a cubic interpolation of `log2` from the float's
//!   exponent and mantissa bits ([`CubicMapping`]), or a linear one computed with integer
//!   operations only ([`IntMapping`]);
//! * the representative value of bin `i` is `lower_bound(i) * (1 + alpha)`, so every value in
//!   the bin is within relative error `alpha` of it.
//!
//! The floor is DataDog's (Go's and Java's `(int) x - 1` for negative `x`, which sends a
//! negative whole number one lower than `floor` would), and each multiplier is derived from
//! gamma exactly as DataDog's Java library derives it, so values land in the same bins as
//! in DataDog's Go and Java libraries: see [`IntMapping`] for the one mapping where that
//! takes more than the formula. DataDog's Python library uses `ceil` instead (and a
//! different representative): see [`proto`](crate::proto).
//!
//! | mapping | bins per factor of 10 at 1 % | record cost | float ops on record |
//! |---|---|---|---|
//! | [`LogMapping`] | 116 | a table-driven `ln` (`libm`'s within a hair of a bin edge) | yes |
//! | [`CubicMapping`] | 117 | bit extraction + 3 multiply-adds | yes (no `ln`) |
//! | [`IntMapping`] | 213 (alpha rounds down to 0.78 %) | one CLZ, two shifts | none |
//!
//! On a core without a double-precision FPU use [`IntMapping`]: that is the Cortex-M0 and
//! RV32IMC (no FPU at all) and also the Cortex-M4F, whose FPU is single precision, so the
//! `f64` the other mappings compute in is software there too. On x86-64 and aarch64 use
//! [`CubicMapping`] (fastest) or [`LogMapping`] (fewest bins). See the
//! [sketch docs](super#which-mapping-on-which-core).
//!
//! One file per mapping, with the numeric kernels only it uses: `log` (and the fast `ln`
//! and `exp` it is computed with), `cubic` (and the inverse of its cubic), `int` (and
//! DataDog's `LINEAR` keys, replayed with integers), `otel`. What they share is in
//! `index_mapping` (the trait, the logarithmic scale) and `bits` (the float's fields).

mod bits;
pub(crate) mod cubic;
mod cubic_key;
mod exp;
mod index_mapping;
mod int;
mod ln;
mod log;
mod otel;

pub use cubic::CubicMapping;
pub use index_mapping::{IndexMapping, Interpolation};
pub use int::IntMapping;
pub use log::LogMapping;
pub(crate) use otel::near_edge;
pub use otel::OtelMapping;

/// A sketch's reported accuracy for a mapping's `alpha`: `alpha + 8 * 2^-52` below 1 (1
/// stays 1, no guarantee). A value on a bin edge is exactly `alpha` from the bin's
/// representative, whose rounding in `f64` could put it a few ulps past; this upper bound
/// makes `(got - want).abs() <= alpha * want` hold as computed, for values near 1: far from
/// 1 the keys and representatives round with an error growing with `|log2 v|`, more than
/// this covers (docs/guarantees.md).
pub(crate) fn reported_accuracy(alpha: f64) -> f64 {
    if alpha < 1.0 {
        alpha + 8.0 * f64::EPSILON
    } else {
        alpha
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_bins<M: IndexMapping>(m: M) {
        let alpha = m.relative_accuracy();
        let mut v = 1e-6;
        while v < 1e12 {
            let i = m.index(v);
            let lo = m.lower_bound(i);
            let hi = m.lower_bound(i + 1);
            let tol = 1e-12 * v;
            assert!(
                lo <= v + tol && v < hi + tol,
                "{m:?} v={v} bin {i} [{lo}, {hi})"
            );
            let rep = m.value(i);
            assert!(
                (rep - v).abs() <= alpha * v * (1.0 + 1e-9),
                "{m:?} v={v} rep={rep}"
            );
            v *= 1.0137;
        }
    }

    #[test]
    fn every_mapping_keeps_values_in_their_bin_within_alpha() {
        for alpha in [0.005, 0.01, 0.02, 0.05] {
            check_bins(LogMapping::with_relative_accuracy(alpha).unwrap());
            check_bins(CubicMapping::with_relative_accuracy(alpha).unwrap());
            check_bins(IntMapping::with_relative_accuracy(alpha).unwrap());
        }
    }

    #[test]
    fn invalid_accuracies_are_errors() {
        for a in [0.0, -0.1, 1.0, 2.0, f64::NAN, f64::INFINITY] {
            assert!(LogMapping::with_relative_accuracy(a).is_err());
            assert!(CubicMapping::with_relative_accuracy(a).is_err());
            assert!(IntMapping::with_relative_accuracy(a).is_err());
        }
        assert!(LogMapping::from_gamma_offset(1.0, 0.0).is_err());
        assert!(CubicMapping::from_gamma_offset(f64::NAN, 0.0).is_err());
    }
}
