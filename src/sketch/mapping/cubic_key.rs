//! [`CubicMapping`](super::CubicMapping)'s key in a short chain of operations, which gives
//! DataDog's key or declines (then the caller computes DataDog's formula).
//!
//! DataDog's key is `floor(((A s + B) s + C) s + e) * m + offset)` for `2^e (1 + s)`: eight
//! dependent floating-point operations after `s` (a subtraction, three multiply-adds, the
//! exponent, the multiplier), then a float-to-integer conversion. A record is bound by
//! that chain's latency, not by its operations. [`fast_key`] computes the same cubic
//! expanded in the significand `sig = 1 + s` (no subtraction first) in Estrin's form,
//! `((A sig + B') sig^2 + (C' sig + (D' + e))) * m`, four operations deep, and rounds the
//! sum with [`shift`] (`1.5 * 2^36 + offset`) to a multiple of `2^-16`: the bits of that
//! sum hold the key above bit 16 and the fraction in their low 16 bits, with no
//! conversion. It answers only when the fraction is at least `2^-16` from a whole number,
//! which the error below keeps DataDog's sum from crossing. The slice kernel
//! (`CubicMapping::positions_fast_slice`) computes the same sums in vector lanes, with the
//! sketch's lowest index taken off in the shift ([`position_shift`]), so that the bits hold
//! a bin's position, and marks a value that near a whole number for `index`
//! ([`position_or_max`]).
//!
//! # The bound
//!
//! With `u = 2^-53`, `P = fl(fl(e + p) * m)` DataDog's product (`p` its rounded cubic) and
//! `w` the fast one, for any `e` in [-1023, 1024] and `sig` in [1, 2) (every bit pattern,
//! NaN and infinities included, gives such a pair):
//!
//! * DataDog's: the cubic's five roundings (terms below 1.5) are within `4.3 u`; adding
//!   `e` (below 1,026 in size) rounds by at most `1,024 u`; the product by
//!   `1,026 m u`. `|P - m (e + Q(s))| <= 2,055 m u`, `Q` the cubic in exact arithmetic.
//! * The fast one: the rounded coefficients `B'`, `C'`, `D'` move the cubic by at most
//!   `20.3 u`; `sig^2` and the `sig^3`, `sig^2` terms (below 3.1) by `10.2 u`; the sum
//!   `C' sig + (D' + e)` (below 1,033) by `2,065 u`, the next sum by `1,026 u`, the
//!   product by `1,026 m u`. `|w - m (e + Q(s))| <= 4,148 m u`.
//!
//! So `|P - w| <= 6,203 m u < m 2^-40` (`the_fast_product_is_within_its_bound`
//! measures it). [`shift`] answers infinity, which makes [`fast_key`] decline everything,
//! unless `m <= 2^20`, `|offset| <= 2^30` and `1.5 * 2^36 + offset` is exact. Then
//! `|P - w| <= 2^-20`, `|w + offset| < 2^31`, so the shifted sum lies in [2^36, 2^37),
//! where doubles are the multiples of `2^-16`: it is `1.5 * 2^36 + k'` with `k'` within
//! `2^-17` of `w + offset`, and DataDog's `K = fl(P + offset)` is within
//! `2^-20 + 2^-23` of `w + offset`, so within `2^-16` of `k'`. When `k'`'s fraction
//! lies in [`2^-16`, `1 - 2^-15`], `K` lies strictly between `floor(k')` and the next
//! whole number: not a whole number, so DataDog's floor (which sends negative whole
//! numbers one lower) is `floor(k')`, which the bits above bit 16 hold (modulo 2^32: it is
//! below 2^31 in size).

use super::bits::{exponent, significand};
use super::cubic::{CUBIC_A, CUBIC_B, CUBIC_C};

// `A s^3 + B s^2 + C s` with `s = sig - 1`, as a cubic in `sig`:
// `A sig^3 + (B - 3A) sig^2 + (3A - 2B + C) sig + (B - A - C)`.
const SIG_B: f64 = CUBIC_B - 3.0 * CUBIC_A;
const SIG_C: f64 = 3.0 * CUBIC_A - 2.0 * CUBIC_B + CUBIC_C;
const SIG_D: f64 = CUBIC_B - CUBIC_A - CUBIC_C;

/// `1.5 * 2^36`: a double near it is a multiple of `2^-16`.
const ROUND_TO_FRACTION: f64 = 1.5 * (1u64 << 36) as f64;
/// The largest multiplier and offset for which the bound above holds (an accuracy finer
/// than about `4e-7` has a larger multiplier, a real-world DataDog offset is 0).
const MAX_MULTIPLIER: f64 = (1u64 << 20) as f64;
const MAX_OFFSET: f64 = (1u64 << 30) as f64;

/// What [`fast_key`] adds to round its sum: `1.5 * 2^36 + offset` where the bound holds
/// (see the module docs), else infinity (then `fast_key` always declines).
pub(super) const fn shift(multiplier: f64, offset: f64) -> f64 {
    let shift = ROUND_TO_FRACTION + offset;
    let holds = multiplier > 0.0
        && multiplier <= MAX_MULTIPLIER
        && offset >= -MAX_OFFSET
        && offset <= MAX_OFFSET
        && shift - ROUND_TO_FRACTION == offset; // the sum is exact (a difference of doubles within a factor of two is)
    if holds {
        shift
    } else {
        f64::INFINITY
    }
}

/// The most [`position_shift`] lets the offset less the lowest index be: then a
/// position `p` (the key less `min_index`) is below 2^31 in size (`|w| <= 2^30.01`), so
/// it wraps modulo 2^32 to no position of the bins when it is negative, and is exact when
/// it is not (a sketch has fewer than 2^31 bins).
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))] // the slice kernel's
const MAX_POSITION_OFFSET: f64 = (1u64 << 29) as f64;

/// [`shift`] for `offset - min_index`: a [`rounded_sum`] with it holds the key less
/// `min_index`, the position among bins from `min_index`, modulo 2^32. Infinity (every
/// value declined) unless [`shift`] holds for `offset` and `|offset - min_index|` is at
/// most 2^29 (see [`MAX_POSITION_OFFSET`]).
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))] // the slice kernel's
pub(super) fn position_shift(multiplier: f64, offset: f64, min_index: i32) -> f64 {
    if shift(multiplier, offset) == f64::INFINITY {
        return f64::INFINITY;
    }
    // Exact: `offset` is a multiple of 2^-16 below 2^30 in size (`shift` holds), so the
    // difference is one below 2^32, 48 significant bits at most.
    let offset = offset - f64::from(min_index);
    if offset.abs() <= MAX_POSITION_OFFSET {
        shift(multiplier, offset)
    } else {
        f64::INFINITY
    }
}

/// DataDog's cubic key of `value` for `multiplier` and the [`shift`] of its offset, or
/// `None` where the sum lies within `2^-16` of a whole number (a chance of about 3 in
/// 100,000) or the shift is infinite.
#[inline(always)]
pub(super) fn fast_key(value: f64, multiplier: f64, shift: f64) -> Option<i32> {
    let bits = value.to_bits();
    let rounded = rounded_sum(bits, exponent(bits) as f64, multiplier, shift);
    (!near_an_edge(rounded)).then_some(key(rounded))
}

/// The bits of the shifted sum for a value of bits `bits` (positive) and binary exponent
/// `e`, the key in its bits 16 to 47 and the fraction below.
#[inline(always)]
pub(super) fn rounded_sum(bits: u64, e: f64, multiplier: f64, shift: f64) -> u64 {
    let sig = significand(bits);
    let sig2 = sig * sig;
    let high = (CUBIC_A * sig + SIG_B) * sig2;
    let low = SIG_C * sig + (SIG_D + e);
    ((high + low) * multiplier + shift).to_bits()
}

/// Whether the fraction of a [`rounded_sum`] is within `2^-16` of a whole number (an
/// infinite or NaN sum has 0 there): then its key may not be DataDog's.
#[inline(always)]
pub(super) fn near_an_edge(rounded: u64) -> bool {
    // The fraction is 0 or 0xffff: one more is 1 or 0 (in 16 bits).
    rounded.wrapping_add(1) & 0xfffe == 0
}

/// The key (less `min_index`, with a [`position_shift`]) a [`rounded_sum`] holds, or
/// `u32::MAX` where it is [`near_an_edge`]: without a branch or a compare (SSE2, the
/// x86-64 baseline, has no compare of 64-bit lanes). `(rounded + 1) & 0xfffe` is 0
/// exactly when the sum is near an edge, so less 1 it is all ones there and below 2^16
/// elsewhere: ORed into the sum, it sets every bit of the key or none.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))] // the slice kernel's
#[inline(always)]
pub(super) fn position_or_max(rounded: u64) -> u32 {
    let all_ones_if_near = (rounded.wrapping_add(1) & 0xfffe).wrapping_sub(1);
    key(rounded | all_ones_if_near) as u32
}

/// The key a [`rounded_sum`] holds (where it is not [`near_an_edge`]): bits 16 to 47, the
/// key plus 2^35, modulo 2^32.
#[inline(always)]
pub(super) fn key(rounded: u64) -> i32 {
    (rounded >> 16u32) as i32
}

#[cfg(test)]
mod tests {
    use super::super::bits::significand_minus_one;
    use super::*;
    use crate::test_rng::Xorshift64;

    /// DataDog's `fl(fl(e + p) * m)`, as `CubicMapping` computes it.
    fn datadog_product(value: f64, m: f64) -> f64 {
        let bits = value.to_bits();
        let s = significand_minus_one(bits);
        (exponent(bits) as f64 + ((CUBIC_A * s + CUBIC_B) * s + CUBIC_C) * s) * m
    }

    /// The fast product `w`, unshifted (adding 0 changes no bit of a nonzero sum).
    fn fast_product(value: f64, m: f64) -> f64 {
        let bits = value.to_bits();
        f64::from_bits(rounded_sum(bits, exponent(bits) as f64, m, 0.0))
    }

    /// The module's bound, `|P - w| < m 2^-40`, over random bit patterns of every exponent
    /// (NaN and infinities included) and the ends of each binade, for multipliers up to the
    /// largest `shift` accepts.
    #[test]
    fn the_fast_product_is_within_its_bound() {
        let mut rng = Xorshift64(0x9e37_79b9_7f4a_7c15);
        let bound = 1.0 / (1u64 << 40) as f64;
        let mut worst = 0.0f64;
        for m in [34.998, 1.0, 0.5, 3.5e5, MAX_MULTIPLIER, 123.456_789] {
            for i in 0..400_000u64 {
                let bits = match i % 4 {
                    0 => rng.next_u64() & !(1 << 63),
                    1 => ((i % 2048) << 52) | (rng.next_u64() >> 12),
                    2 => ((i % 2048) << 52) | ((1 << 52) - 1 - (i >> 11) % 64),
                    _ => ((i % 2048) << 52) | ((i >> 11) % 64),
                };
                let v = f64::from_bits(bits);
                let error = (datadog_product(v, m) - fast_product(v, m)).abs() / m;
                worst = worst.max(error);
            }
        }
        assert!(worst < bound, "{worst:e}");
        // What was seen, for the docs: about 2^-41.
        assert!(worst > bound / 4.0, "{worst:e}");
    }

    #[test]
    fn the_shift_is_infinite_where_the_bound_does_not_hold() {
        assert_eq!(shift(34.998, 0.0), ROUND_TO_FRACTION);
        assert_eq!(shift(34.998, -7.0), ROUND_TO_FRACTION - 7.0);
        assert_eq!(
            shift(MAX_MULTIPLIER, MAX_OFFSET),
            ROUND_TO_FRACTION + MAX_OFFSET
        );
        for (m, offset) in [
            (MAX_MULTIPLIER * 1.0001, 0.0),
            (34.998, MAX_OFFSET * 1.0001),
            (34.998, -MAX_OFFSET * 1.0001),
            (34.998, 0.1), // not a multiple of 2^-16: the sum would round
            (34.998, f64::NAN),
            (f64::NAN, 0.0),
            (f64::INFINITY, 0.0),
            (-1.0, 0.0),
        ] {
            assert_eq!(shift(m, offset), f64::INFINITY, "{m} {offset}");
            assert_eq!(fast_key(1234.5, m, shift(m, offset)), None);
        }
    }
}
