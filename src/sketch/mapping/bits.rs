//! The fields of an `f64`, and the few operations on its bits that the mappings' kernels
//! share (as sketches-go's `bit_operation_helper.go`).

// The layout of an f64.
pub(super) const MANTISSA_BITS: u32 = 52;
pub(super) const MANTISSA_MASK: u64 = (1 << MANTISSA_BITS) - 1;
pub(super) const EXPONENT_BIAS: i32 = 1023;

/// The unbiased binary exponent of a positive float (subnormals report -1023).
#[inline]
pub(super) fn exponent(bits: u64) -> i32 {
    (((bits >> MANTISSA_BITS) & 0x7ff) as i32).wrapping_sub(EXPONENT_BIAS) // in [-1023, 1024]
}

/// The significand minus one, in [0, 1).
#[inline]
pub(super) fn significand_minus_one(bits: u64) -> f64 {
    significand(bits) - 1.0
}

/// The significand, in [1, 2) (DataDog's `getSignificandPlusOne`).
#[inline]
pub(super) fn significand(bits: u64) -> f64 {
    f64::from_bits((bits & MANTISSA_MASK) | ((EXPONENT_BIAS as u64) << MANTISSA_BITS))
}

/// `1.5 * 2^52`: adding it to a double below `2^51` in size rounds that to an integer,
/// which the low bits of the sum hold (two's complement).
const ROUND_TO_INTEGER: f64 = 6_755_399_441_055_744.0;

/// `x` rounded to the nearest integer (ties to even), as a double (exact for `|x| < 2^51`)
/// and as an `i32` (for `|x| < 2^31`; beyond, it wraps): the sum with
/// [`ROUND_TO_INTEGER`] rounds `x`, its low 32 bits are the integer, and taking the
/// constant off again is exact. No float-to-integer conversion, whose latency sits in
/// the dependent chain of every caller here.
#[inline(always)]
pub(super) fn nearest_integer(x: f64) -> (f64, i32) {
    let shifted = x + ROUND_TO_INTEGER;
    (shifted - ROUND_TO_INTEGER, shifted.to_bits() as i32)
}

/// `2^e` for `e` in [-1022, 1023], built from its bits (a normal double, so multiplying a
/// normal double by it is exact while the product stays normal): what `libm::ldexp` gives
/// there, without its call and range checks. Outside that range the bits are not `2^e`.
#[inline(always)]
pub(super) fn normal_power_of_two(e: i32) -> f64 {
    f64::from_bits((e.wrapping_add(EXPONENT_BIAS) as u64) << MANTISSA_BITS)
}
