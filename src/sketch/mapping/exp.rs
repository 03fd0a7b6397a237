//! A fast `exp` with a proven error bound, for [`LogMapping`](super::LogMapping)'s bin
//! lower bounds (`e^(index / multiplier)`): what every quantile of a logarithmic sketch
//! computes once. `libm::exp` costs a division and a branchy reduction; this one is
//! a table load, eleven multiplications and ten additions, with no division and one
//! branch (the range check).
//!
//! For `|x| <= 708`, with `L = ln 2 / 64`: `n` is `x / L` rounded to an integer,
//! `j = n mod 64`, `k = (n - j) / 64`, and `r = x - n L` (at most `L / 2` plus a hair in
//! size, computed in two steps, Cody and Waite's, with `L`'s high part exact in `n L`), so
//!
//! `e^x = 2^k * 2^(j/64) * e^r`,
//!
//! where `2^(j/64)` comes from [`POWERS`] and `e^r - 1` from its Taylor series up to
//! `r^6`. Outside that range (where the result would leave the normal doubles), and for
//! NaN, [`exp`] is `libm::exp`. No heap, no `unsafe`, the same bits on every target
//! (IEEE-754 double operations, each rounded once: no fused multiply-add).
//!
//! # The error bound
//!
//! [`exp`] is within relative [`EXP_ERROR`] `= 2^-51` of the exact `e^x`. With `u = 2^-53`:
//!
//! 1. **The reduced argument.** `n` need not be the nearest integer, only near it: `t`'s
//!    rounding moves it by at most `2^-36`, so `|r| <= L (1/2 + 2^-36) < 0.00542`.
//!    `n * L_HIGH` is exact (`|n| <= 65,370 < 2^16` and `L_HIGH` has 37 significant bits);
//!    the two subtractions and `n * L_LOW` round by at most `u` of values below `0.0055`
//!    (`|n L_LOW| < 2^-29`), and `L_LOW` is within `2^-98` of `L - L_HIGH`: the computed
//!    `r'` is within `0.012 u` of `r`, which moves `e^r` by a relative `0.012 u` at most.
//! 2. **Truncation.** `|e^r' - 1 - sum_{i=1..6} r'^i / i!| <= |r'|^7 / 7! * e^|r'|
//!    < 3e-20 < 0.001 u`.
//! 3. **The polynomial's roundings.** The bracket (near `1/2`) is within `4 u` of its exact
//!    value, so the term `r'^2 (...)` (below `1.5e-5`) is within `1e-4 u`; the last
//!    addition, to a result below `0.0055`, rounds by at most `0.0055 u`: `q` is within
//!    `0.006 u` of `r' + r'^2 (...)`.
//! 4. **The table and the result.** Each `2^(j/64)` is correctly rounded (`u` relative);
//!    `fl(T * q)` (below `0.0109`) rounds by `0.011 u` of `T`, `fl(T + T q)` by `u`
//!    relative, and the power of two `2^k` multiplies exactly (the result stays normal).
//!
//! Sum: `u (1 + 1 + 0.012 + 0.001 + 0.006 + 0.011) < 2.04 u < 2^-51`. The unit tests
//! check every table entry, and check the bound against `libm::exp` (itself within one
//! unit in the last place) on a grid over the whole range, at its ends, and on random
//! arguments.

use super::bits::{nearest_integer, normal_power_of_two};

/// An upper bound on `|exp(x) / e^x - 1|` for every `|x| <= 708`: `2^-51`, derived in the
/// module docs.
#[cfg(test)]
const EXP_ERROR: f64 = 1.0 / (1u64 << 51) as f64;

/// The largest `|x|` taken by the table: `e^708` and `e^-708` are normal doubles, and so
/// is every intermediate result.
const MAX_FAST: f64 = 708.0;
/// `64 / ln 2`, rounded.
const SIXTY_FOUR_OVER_LN_2: f64 = f64::from_bits(0x4057_1547_652b_82fe);
/// `ln 2 / 64` truncated to 37 significant bits, so that `n * L_HIGH` is exact for
/// `|n| < 2^16`.
const L_HIGH: f64 = f64::from_bits(0x3f86_2e42_fefa_0000);
/// `ln 2 / 64 - L_HIGH`, rounded.
const L_LOW: f64 = f64::from_bits(0x3d1c_f79a_bc9e_3b3a);

/// `2^(j/64)` for `j` in `0..64`, correctly rounded. 512 bytes of read-only data (flash on
/// firmware). Made with Python's `decimal` at 60 digits:
///
/// ```text
/// from decimal import Decimal, getcontext; getcontext().prec = 60
/// for j in range(64): print(float(Decimal(2) ** (Decimal(j) / 64)))
/// ```
///
/// The unit test `table_is_what_the_proof_assumes` checks every entry.
#[rustfmt::skip]
const POWERS: [f64; 64] = [
    f64::from_bits(0x3ff0000000000000), f64::from_bits(0x3ff02c9a3e778061), f64::from_bits(0x3ff059b0d3158574), f64::from_bits(0x3ff0874518759bc8),
    f64::from_bits(0x3ff0b5586cf9890f), f64::from_bits(0x3ff0e3ec32d3d1a2), f64::from_bits(0x3ff11301d0125b51), f64::from_bits(0x3ff1429aaea92de0),
    f64::from_bits(0x3ff172b83c7d517b), f64::from_bits(0x3ff1a35beb6fcb75), f64::from_bits(0x3ff1d4873168b9aa), f64::from_bits(0x3ff2063b88628cd6),
    f64::from_bits(0x3ff2387a6e756238), f64::from_bits(0x3ff26b4565e27cdd), f64::from_bits(0x3ff29e9df51fdee1), f64::from_bits(0x3ff2d285a6e4030b),
    f64::from_bits(0x3ff306fe0a31b715), f64::from_bits(0x3ff33c08b26416ff), f64::from_bits(0x3ff371a7373aa9cb), f64::from_bits(0x3ff3a7db34e59ff7),
    f64::from_bits(0x3ff3dea64c123422), f64::from_bits(0x3ff4160a21f72e2a), f64::from_bits(0x3ff44e086061892d), f64::from_bits(0x3ff486a2b5c13cd0),
    f64::from_bits(0x3ff4bfdad5362a27), f64::from_bits(0x3ff4f9b2769d2ca7), f64::from_bits(0x3ff5342b569d4f82), f64::from_bits(0x3ff56f4736b527da),
    f64::from_bits(0x3ff5ab07dd485429), f64::from_bits(0x3ff5e76f15ad2148), f64::from_bits(0x3ff6247eb03a5585), f64::from_bits(0x3ff6623882552225),
    f64::from_bits(0x3ff6a09e667f3bcd), f64::from_bits(0x3ff6dfb23c651a2f), f64::from_bits(0x3ff71f75e8ec5f74), f64::from_bits(0x3ff75feb564267c9),
    f64::from_bits(0x3ff7a11473eb0187), f64::from_bits(0x3ff7e2f336cf4e62), f64::from_bits(0x3ff82589994cce13), f64::from_bits(0x3ff868d99b4492ed),
    f64::from_bits(0x3ff8ace5422aa0db), f64::from_bits(0x3ff8f1ae99157736), f64::from_bits(0x3ff93737b0cdc5e5), f64::from_bits(0x3ff97d829fde4e50),
    f64::from_bits(0x3ff9c49182a3f090), f64::from_bits(0x3ffa0c667b5de565), f64::from_bits(0x3ffa5503b23e255d), f64::from_bits(0x3ffa9e6b5579fdbf),
    f64::from_bits(0x3ffae89f995ad3ad), f64::from_bits(0x3ffb33a2b84f15fb), f64::from_bits(0x3ffb7f76f2fb5e47), f64::from_bits(0x3ffbcc1e904bc1d2),
    f64::from_bits(0x3ffc199bdd85529c), f64::from_bits(0x3ffc67f12e57d14b), f64::from_bits(0x3ffcb720dcef9069), f64::from_bits(0x3ffd072d4a07897c),
    f64::from_bits(0x3ffd5818dcfba487), f64::from_bits(0x3ffda9e603db3285), f64::from_bits(0x3ffdfc97337b9b5f), f64::from_bits(0x3ffe502ee78b3ff6),
    f64::from_bits(0x3ffea4afa2a490da), f64::from_bits(0x3ffefa1bee615a27), f64::from_bits(0x3fff50765b6e4540), f64::from_bits(0x3fffa7c1819e90d8),
];

/// `e^x`, within relative [`EXP_ERROR`] of the exact value for `|x| <= 708`;
/// `libm::exp(x)` elsewhere (overflow to `+inf`, subnormal results, NaN).
#[inline]
pub(crate) fn exp(x: f64) -> f64 {
    if x.abs() <= MAX_FAST {
        exp_in_range(x)
    } else {
        libm::exp(x) // NaN too: it fails the comparison
    }
}

/// [`exp`] for `|x| <= 708`.
#[inline]
fn exp_in_range(x: f64) -> f64 {
    // `n` = `x / L` rounded (`|n| <= 65,370`).
    let (nf, n) = nearest_integer(x * SIXTY_FOUR_OVER_LN_2);
    let r = (x - nf * L_HIGH) - nf * L_LOW;
    let q = r + r
        * r
        * (0.5 + r * (1.0 / 6.0 + r * (1.0 / 24.0 + r * (1.0 / 120.0 + r * (1.0 / 720.0)))));
    // `n & 63` is below 64: the fallback is never taken.
    let power = POWERS.get((n & 63) as usize).copied().unwrap_or(1.0);
    // `2^k` with `k = n >> 6` in [-1022, 1021] (|x| <= 708): normal, the product exact.
    (power + power * q) * normal_power_of_two(n >> 6)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `|a / b - 1|`, for positive normal `b`.
    fn relative(a: f64, b: f64) -> f64 {
        (a / b - 1.0).abs()
    }

    /// Within `EXP_ERROR` of the exact value, which `libm::exp` is within one unit in the
    /// last place (relative `2^-52`) of.
    fn check(x: f64) {
        let (got, want) = (exp(x), libm::exp(x));
        let bound = EXP_ERROR + 1.0 / (1u64 << 52) as f64;
        assert!(
            relative(got, want) <= bound,
            "exp({x:e}) = {got:e}, libm {want:e}"
        );
    }

    /// Each entry is within a unit in the last place of `libm::exp2` (within one unit
    /// itself), in [1, 2), and increasing.
    #[test]
    fn table_is_what_the_proof_assumes() {
        for (j, &p) in POWERS.iter().enumerate() {
            let want = libm::exp2(j as f64 / 64.0);
            assert!(p.to_bits().abs_diff(want.to_bits()) <= 1, "2^({j}/64)");
            assert!((1.0..2.0).contains(&p));
        }
        assert!(POWERS.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(
            L_HIGH.to_bits() & ((1 << 16) - 1),
            0,
            "37 significant bits at most"
        );
        assert!(relative(L_HIGH + L_LOW, core::f64::consts::LN_2 / 64.0) < 1e-16);
    }

    #[test]
    fn within_the_bound_over_the_whole_range() {
        // A grid over [-708, 708] (steps that are not multiples of L), and the ends.
        let steps = if cfg!(miri) { 2_000 } else { 2_000_000 };
        for i in 0..=steps {
            check(-MAX_FAST + 2.0 * MAX_FAST * i as f64 / steps as f64);
        }
        for x in [0.0, -0.0, 1e-300, -1e-300, 1e-10, 0.5, 1.0, 708.0, -708.0] {
            check(x);
        }
        // Bin lower bounds of the 1 % logarithmic mapping, where it is used: its gamma is
        // `(1 + alpha) / (1 - alpha)` (the bits of `LogMapping::ONE_PERCENT`, which a
        // presets test checks against that formula).
        let ln_gamma = libm::log((1.0 + 0.01) / (1.0 - 0.01));
        for index in (-35_000..35_000).step_by(if cfg!(miri) { 100 } else { 1 }) {
            check(f64::from(index) * ln_gamma);
        }
    }

    #[cfg(not(miri))]
    #[test]
    fn within_the_bound_on_random_arguments() {
        proptest::proptest!(|(x in -708.0f64..=708.0)| check(x));
    }

    #[test]
    fn libm_outside_the_range() {
        for x in [
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            709.7,
            710.0,
            -708.5,
            -745.0,
            -746.0,
        ] {
            assert_eq!(exp(x).to_bits(), libm::exp(x).to_bits(), "{x}");
        }
        assert_eq!(exp(0.0), 1.0);
    }
}
