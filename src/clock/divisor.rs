//! [`Divisor`]: division by a number fixed in advance, as a multiply by its reciprocal.
//!
//! A 64-bit division is a library call of a hundred instructions or more on a 32-bit core
//! (`__aeabi_uldivmod`); a multiply by the reciprocal is a few multiplies. libdivide's
//! unsigned 64-bit method (the branching variant) gives the exact quotient for every
//! dividend.

/// A divisor fixed when it is made (a constant, a clock's tick length), divided by with a
/// multiply by its reciprocal. The coarse clocks' ticks, the window's slot numbers and the
/// nanoseconds-to-`Duration` conversion use it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Divisor {
    d: u64,
    /// `x / d` is `x >> shift` when `magic` is 0 (`d` a power of two), else
    /// `(mul_high(magic, x) [+ the add step]) >> shift`.
    magic: u64,
    shift: u32,
    /// 1 if the reciprocal needs 65 bits: the `(x - q) / 2 + q` step adds the top one.
    /// (Not a `bool`: its spare values would be a niche, and an `Option` of a type holding
    /// a divisor, `RatioBudget`'s allowance, would not be zero bytes at `None`.)
    add: u8,
}

impl Divisor {
    /// Dividing by `d`; 0 is taken as 1.
    pub(crate) const fn new(d: u64) -> Self {
        let d = if d == 0 { 1 } else { d };
        let (magic, shift, add) = reciprocal(d);
        Divisor {
            d,
            magic,
            shift,
            add: add as u8,
        }
    }

    /// Each field XOR `key`'s: a divisor stored as its difference from a preset's is zero
    /// bytes at the preset's (see `CoarseClock::xor`), and XOR `key` again gives it back.
    #[inline(always)]
    pub(crate) const fn xor(self, key: Self) -> Self {
        Divisor {
            d: self.d ^ key.d,
            magic: self.magic ^ key.magic,
            shift: self.shift ^ key.shift,
            add: self.add ^ key.add,
        }
    }

    /// The divisor.
    pub(crate) const fn get(&self) -> u64 {
        self.d
    }

    /// `x / d`, exactly.
    #[inline]
    pub(crate) const fn quotient(&self, x: u64) -> u64 {
        if self.magic == 0 {
            x >> self.shift
        } else {
            divide_by_reciprocal(x, self.magic, self.shift, self.add != 0)
        }
    }

    /// `x / d` and `x % d`, exactly.
    #[inline]
    pub(crate) const fn div_rem(&self, x: u64) -> (u64, u64) {
        let q = self.quotient(x);
        // q * d <= x: neither operation wraps.
        (q, x.wrapping_sub(q.wrapping_mul(self.d)))
    }
}

/// `x / d` from `d`'s [`reciprocal`] `(magic, shift, add)` with `magic != 0`.
#[inline]
const fn divide_by_reciprocal(x: u64, magic: u64, shift: u32, add: bool) -> u64 {
    let q = mul_high(magic, x);
    if add {
        // q <= x: the subtraction cannot wrap, and the sum is below 2^64.
        ((x.wrapping_sub(q) >> 1).wrapping_add(q)) >> shift
    } else {
        q >> shift
    }
}

/// libdivide's unsigned 64-bit reciprocal of `d >= 1` (the branching variant):
/// `(magic, shift, add)` with `magic == 0` for a power of two (then `x / d == x >> shift`),
/// else `x / d == (mul_high(magic, x) [+ add step]) >> shift` for every `u64` `x`. Run
/// once per divisor, when it is made (a 128-bit division there is fine).
const fn reciprocal(d: u64) -> (u64, u32, bool) {
    if d.is_power_of_two() {
        return (0, d.trailing_zeros(), false);
    }
    // Not a power of two (so d >= 3): floor_log2 < 64, d > 2^floor_log2.
    let floor_log2 = 63u32.wrapping_sub(d.leading_zeros());
    let dividend = 1u128 << 64u32.wrapping_add(floor_log2);
    let wide = d as u128;
    let (proposed, rem) = match (dividend.checked_div(wide), dividend.checked_rem(wide)) {
        // d > 2^floor_log2, so the quotient is below 2^64 and the casts are exact.
        (Some(q), Some(r)) => (q as u64, r as u64),
        _ => return (0, 0, false), // not reached: d >= 3
    };
    if d.wrapping_sub(rem) < (1u64 << floor_log2) {
        // This power works: a 64-bit magic.
        (proposed.wrapping_add(1), floor_log2, false)
    } else {
        // The 65-bit case: double the quotient and its remainder (the add step supplies
        // the top bit), carrying when twice the remainder reaches d.
        let twice_rem = rem.wrapping_add(rem);
        let carry = (twice_rem >= d || twice_rem < rem) as u64;
        (
            proposed
                .wrapping_add(proposed)
                .wrapping_add(carry)
                .wrapping_add(1),
            floor_log2,
            true,
        )
    }
}

/// The high 64 bits of `a * b`. A 128-bit product where the core has 64-bit registers;
/// on 32-bit cores four 32 x 32 -> 64 multiplies (`UMULL` on a Cortex-M3/M4), where LLVM
/// would otherwise call its 128-bit multiply helper.
#[inline]
const fn mul_high(a: u64, b: u64) -> u64 {
    #[cfg(target_pointer_width = "64")]
    {
        // The product of two u64 fits in u128.
        ((a as u128).wrapping_mul(b as u128) >> 64) as u64
    }
    #[cfg(not(target_pointer_width = "64"))]
    {
        mul_high_halves(a, b)
    }
}

/// [`mul_high`] from four 32 x 32 -> 64 multiplies.
#[cfg(any(all(test, not(loom)), not(target_pointer_width = "64")))]
#[inline]
const fn mul_high_halves(a: u64, b: u64) -> u64 {
    let (a0, a1) = (a & 0xffff_ffff, a >> 32);
    let (b0, b1) = (b & 0xffff_ffff, b >> 32);
    // Each product of two 32-bit halves fits in 64 bits, and `mid` is at most three
    // 32-bit values: no sum below can wrap.
    let (p00, p01, p10, p11) = (
        a0.wrapping_mul(b0),
        a0.wrapping_mul(b1),
        a1.wrapping_mul(b0),
        a1.wrapping_mul(b1),
    );
    let mid = (p00 >> 32)
        .wrapping_add(p01 & 0xffff_ffff)
        .wrapping_add(p10 & 0xffff_ffff);
    p11.wrapping_add(p01 >> 32)
        .wrapping_add(p10 >> 32)
        .wrapping_add(mid >> 32)
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// `Divisor` is exact for the divisors the crate uses (10^9, slot counts) and others:
    /// the 65-bit and 64-bit magic cases, powers of two, near every multiple and at the
    /// ends of the range.
    #[test]
    fn divisors_divide_exactly() {
        for d in [0u64, 1, 2, 3, 4, 5, 6, 7, 1_000_000_000, 65_535, u64::MAX] {
            let div = Divisor::new(d);
            let d = d.max(1);
            for x in [
                0,
                1,
                2,
                3,
                d - 1,
                d,
                d.saturating_add(1),
                1 << 32,
                (1 << 32) - 1,
                u64::MAX,
                u64::MAX - 1,
            ] {
                assert_eq!(div.div_rem(x), (x / d, x % d), "{x} / {d}");
            }
        }
        // Not under miri (which runs this module's tests): proptest keeps its regressions in
        // the file system, which miri isolates.
        #[cfg(not(miri))]
        proptest::proptest!(|(d: u64, x: u64)| {
            let e = d.max(1);
            proptest::prop_assert_eq!(Divisor::new(d).div_rem(x), (x / e, x % e));
        });
    }

    /// The 32-bit cores' product, against the 128-bit one.
    #[test]
    fn the_halves_make_the_high_product() {
        let wide = |a: u64, b: u64| ((u128::from(a) * u128::from(b)) >> 64) as u64;
        for (a, b) in [
            (u64::MAX, u64::MAX),
            (u64::MAX, 1),
            (1 << 32, 1 << 32),
            (0, 7),
        ] {
            assert_eq!(mul_high_halves(a, b), wide(a, b));
        }
        #[cfg(not(miri))]
        proptest::proptest!(|(a: u64, b: u64)| assert_eq!(mul_high_halves(a, b), wide(a, b)));
    }
}
