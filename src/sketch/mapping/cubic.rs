//! [`CubicMapping`]: DataDog's `CUBIC` interpolation of `log2`, and the inverse of its
//! cubic for the bins' lower bounds.
//!
//! # The inverse
//!
//! The inverse of DataDog's cubic interpolation of `log2`, for the bin lower bounds of
//! [`CubicMapping`](super::CubicMapping) (`2^e (1 + s)`, with `s` the root of `P(s) = y`):
//! what every quantile of a cubic sketch computes once, and the edge of each foreign cubic
//! bin a decoder re-bins.
//!
//! `P(s) = ((A s + B) s + C) s` with DataDog's `A = 6/35`, `B = -3/5`, `C = 10/7` (as
//! `f64`s) increases from 0 at 0 to 1 at 1, its slope between 26/35 and 10/7, so the root
//! `s(y)` is unique and smooth on [0, 1]. [`cubic_inverse`] cuts [0, 1] into 32 pieces
//! and evaluates, on piece `j`, a polynomial of degree 7 in `t = 32 y - j - 1/2` (in
//! [-1/2, 1/2]) that interpolates the root at 8 Chebyshev nodes: a table load and about
//! twenty multiplications and additions, with no division and no branch on the value
//! (the table's bound check aside). It replaced a polynomial guess refined by a Halley
//! step, whose division sat in a quantile's dependent chain (BENCHMARKS.md has the
//! quantiles before and after); DataDog's libraries use Cardano's formula (a square
//! root, `cbrt` and two divisions).
//!
//! ## The error bound
//!
//! [`cubic_inverse`] is within `2^-52` of the root for every `y` in [0, 1). With
//! `u = 2^-53`:
//!
//! 1. **The pieces.** With their coefficients rounded to `f64`, in exact arithmetic, the
//!    polynomials are within `0.33 * 2^-52` of the root (mpmath at 60 digits, 401 points per
//!    piece): the interpolation error of degree 7 on a piece of width 1/32 is below
//!    `4.6e-17` (`0.21 * 2^-52`), and the rounding of the constant term, up to `u / 2`,
//!    adds most of the rest.
//! 2. **The argument.** `32 y` is exact, and so is `32 y - 1/2` from `1/4` up (Sterbenz);
//!    below, it rounds by at most `2^-55`, which moves `s` by at most `2^-55 * 0.042 <
//!    0.011 u`. The sum with `1.5 * 2^52` rounds it to the nearest integer `j`, which that
//!    sum less `1.5 * 2^52` is exactly, and `t`, a difference below 1/2 of two doubles
//!    within a factor of two of each other (or of `j = 0`), is exact.
//! 3. **The evaluation.** `q` (the polynomial less its constant, over `t`) is below `0.042`
//!    and within a relative `4 u` after its roundings; `t q` is then within
//!    `0.5 * 0.042 * 5 u < 0.11 u`, and the final addition `c0 + t q`, to a result in
//!    [0, 1], rounds by at most `u`.
//!
//! Sum: `0.66 u + 0.011 u + 0.11 u + u < 1.8 u < 2^-52`. The unit tests hold every result to
//! that bound against the root computed in double-double arithmetic, on a grid of 2^20
//! points, at the ends and on random arguments.

use super::bits::{exponent, nearest_integer, normal_power_of_two, significand_minus_one};
use super::cubic_key;
use super::index_mapping::{accuracy_base, check_accuracy, IndexMapping, Interpolation, Scale};
use crate::sketch::error::ConfigError;

// Coefficients of the cubic that interpolates log2 between powers of two, chosen (by
// DataDog) to minimise the number of bins while keeping the accuracy guarantee.
// (Shared with the proto re-binning, which replays DataDog's cubic.)
pub(crate) const CUBIC_A: f64 = 6.0 / 35.0;
pub(crate) const CUBIC_B: f64 = -3.0 / 5.0;
pub(crate) const CUBIC_C: f64 = 10.0 / 7.0;
/// How much less the cubic pulls values apart than the exact log2: the multiplier is
/// scaled by this so accuracy holds everywhere (about 1 % more bins than [`LogMapping`](super::LogMapping)).
const CUBIC_CORRECTION: f64 = 7.0 / (10.0 * core::f64::consts::LN_2);

/// A fast approximation of [`LogMapping`](super::LogMapping): the float's binary exponent
/// plus a cubic in its mantissa. No `ln`, about 1 % more bins. DataDog's `CUBIC`
/// interpolation.
///
/// Indices are DataDog's. A bin's [`lower_bound`](IndexMapping::lower_bound) (and so its
/// representative [`value`](IndexMapping::value)) inverts the cubic with piecewise
/// polynomials (no division) rather than DataDog's Cardano formula: within one and a half
/// units in the last place of the exact inverse, where Cardano's is within about nine, so
/// it may differ from Java's or Go's in its last bits.
///
/// ```
/// use tailguard::sketch::{CubicMapping, IndexMapping};
/// let m = CubicMapping::with_relative_accuracy(0.01).unwrap();
/// let i = m.index(250.0);
/// assert!((m.value(i) - 250.0).abs() <= 0.01 * 250.0);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct CubicMapping {
    scale: Scale,
    /// `cubic_key::shift` of the multiplier and offset (infinite where `index` always
    /// takes DataDog's formula).
    key_shift: f64,
}

impl CubicMapping {
    /// The 1 % mapping of [`CubicLatency`](crate::sketch::presets::CubicLatency), built at compile
    /// time from the bits `from_valid_accuracy(0.01)` computes with `exp`, `log` and
    /// `log1p` (a test checks them equal, so they cannot drift).
    pub(crate) const ONE_PERCENT: CubicMapping = CubicMapping::of_scale(Scale {
        alpha: 0.01,
        gamma: f64::from_bits(0x3ff0_51ed_e9e7_f1c2),
        multiplier: f64::from_bits(0x4041_7fd9_c507_98e3),
        offset: 0.0,
    });

    const fn of_scale(scale: Scale) -> Self {
        CubicMapping {
            scale,
            key_shift: cubic_key::shift(scale.multiplier, scale.offset),
        }
    }

    /// `alpha` must already be checked to lie in (0, 1).
    pub(crate) fn from_valid_accuracy(alpha: f64) -> Self {
        // DataDog's gamma for this accuracy (Java's `pow(base, 10 ln 2 / 7)`, to the bit for
        // the accuracies tests check), and the multiplier Java derives from it.
        let gamma = libm::exp(libm::log(accuracy_base(alpha)) / CUBIC_CORRECTION);
        CubicMapping::of_scale(Scale {
            alpha,
            gamma,
            multiplier: Scale::datadog_multiplier(gamma, core::f64::consts::LN_2),
            offset: 0.0,
        })
    }

    /// The mapping of DataDog's protobuf parameters for `CUBIC` interpolation.
    /// Errors unless `gamma > 1` and both are finite.
    ///
    /// ```
    /// use tailguard::sketch::{ConfigError, CubicMapping, IndexMapping};
    ///
    /// // The parameters a DataDog message carries give back the mapping that wrote them.
    /// let m = CubicMapping::with_relative_accuracy(0.01).unwrap();
    /// let back = CubicMapping::from_gamma_offset(m.gamma(), m.index_offset()).unwrap();
    /// assert_eq!(back.index(1234.5), m.index(1234.5));
    /// assert_eq!(CubicMapping::from_gamma_offset(1.0, 0.0), Err(ConfigError::InvalidAccuracy));
    /// ```
    pub fn from_gamma_offset(gamma: f64, offset: f64) -> Result<Self, ConfigError> {
        // log2 (base 2); its widest bins span CUBIC_CORRECTION times ln(gamma).
        let ln_base = core::f64::consts::LN_2;
        let scale = Scale::from_gamma_offset(gamma, offset, ln_base, CUBIC_CORRECTION)?;
        Ok(CubicMapping::of_scale(scale))
    }

    /// DataDog's key, operation for operation. Out of line: only values near a bin edge
    /// (a chance of about 3 in 100,000) and mappings of extreme parameters come here.
    #[cold]
    #[inline(never)]
    fn exact_index(&self, value: f64) -> i32 {
        let bits = value.to_bits();
        let s = significand_minus_one(bits);
        self.scale
            .index(exponent(bits) as f64 + ((CUBIC_A * s + CUBIC_B) * s + CUBIC_C) * s)
    }
}

impl IndexMapping for CubicMapping {
    const INTERPOLATION: Interpolation = Interpolation::Cubic;
    const DEFAULT: Self = CubicMapping::ONE_PERCENT;

    fn with_relative_accuracy(alpha: f64) -> Result<Self, ConfigError> {
        check_accuracy(alpha)?;
        let scale = Self::from_valid_accuracy(alpha).scale.checked()?;
        Ok(CubicMapping::of_scale(scale))
    }

    #[inline]
    fn relative_accuracy(&self) -> f64 {
        self.scale.alpha
    }

    fn gamma(&self) -> f64 {
        self.scale.gamma
    }

    fn index_offset(&self) -> f64 {
        self.scale.offset
    }

    // DataDog's key through a shorter chain of operations (`cubic_key`), DataDog's
    // formula only within a hair of a bin edge.
    #[inline]
    fn index(&self, value: f64) -> i32 {
        match cubic_key::fast_key(value, self.scale.multiplier, self.key_shift) {
            Some(index) => index,
            None => self.exact_index(value),
        }
    }

    // Where an FPU is certain, as `IntMapping`'s slice kernel (not on the Cortex-M0:
    // there soft float makes the branch-free form's extra operations the costlier).
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    #[inline]
    fn positions_fast_slice(&self, values: &[f64], min_index: i32, out: &mut [u32]) {
        // `index`'s short chain (`cubic_key`) in a form the compiler vectorises without
        // AVX: the exponent becomes an f64 through the bits of 2^52 + e (no
        // integer-to-float conversion), `min_index` is taken off in the shift, and a
        // value near a bin edge gets `u32::MAX`, for the caller's `index`.
        const TWO_52: u64 = 0x4330_0000_0000_0000; // 2^52.to_bits()
        const TWO_52_PLUS_BIAS: f64 = 4_503_599_627_371_519.0; // 2^52 + 1023, exact
        const SIGN_BIT: u64 = 1 << 63;
        let multiplier = self.scale.multiplier;
        let shift = cubic_key::position_shift(multiplier, self.scale.offset, min_index);
        for (o, &value) in out.iter_mut().zip(values) {
            // |value|, and its exponent as (2^52 + biased exponent) - (2^52 + 1023):
            // exact, `exponent(bits) as f64`.
            let bits = value.to_bits() & !SIGN_BIT;
            let e = f64::from_bits(TWO_52 | (bits >> 52u32)) - TWO_52_PLUS_BIAS;
            let rounded = cubic_key::rounded_sum(bits, e, multiplier, shift);
            *o = cubic_key::position_or_max(rounded);
        }
    }

    #[inline]
    fn lower_bound(&self, index: i32) -> f64 {
        interpolated_exp2(self.scale.lower_bound_log(index), cubic_inverse)
    }
}

/// The inverse of an interpolated `log2` (DataDog's approximations: `e + P(s)` for `2^e (1 + s)`,
/// `P` increasing from 0 to 1 on [0, 1]): `2^e (1 + s)` where `e = floor(x)` and `s` is
/// `inverse(x - e)`, which must lie in [0, 1]. `0` or `+inf` where that is beyond `f64`. A
/// bin's lower bound for [`CubicMapping`] (with [`cubic_inverse`]), and the edge of a
/// foreign bin of any interpolation when re-binning.
#[inline]
pub(crate) fn interpolated_exp2(x: f64, inverse: impl Fn(f64) -> f64) -> f64 {
    if (-1022.0..1023.0).contains(&x) {
        // The usual case, without libm's `floor` and `ldexp` calls: the nearest integer,
        // one lower if that is above `x`, is the floor, as a double and as an integer.
        let (nearest, n) = nearest_integer(x);
        let above = nearest > x;
        let floor = nearest - if above { 1.0 } else { 0.0 };
        let e = n.wrapping_sub(i32::from(above));
        // e in [-1022, 1022]: a normal power of two, so the product is exact.
        return (1.0 + inverse(x - floor)) * normal_power_of_two(e);
    }
    if x.is_nan() {
        return x;
    }
    if x.abs() > 2000.0 {
        // Far beyond f64 (an infinite `x` included, where `x - floor(x)` is NaN).
        return if x > 0.0 { f64::INFINITY } else { 0.0 };
    }
    // The edges of the range: subnormal results, or results near `f64::MAX` (`ldexp`
    // rounds and saturates to +inf).
    let e = libm::floor(x);
    libm::ldexp(1.0 + inverse(x - e), e as i32)
}

/// How many pieces [0, 1] is cut into.
const PIECES: usize = 32;

/// Piece `j`'s coefficients `c0..c7`, `s = c0 + c1 t + ... + c7 t^7` with
/// `t = 32 y - j - 1/2`: 2,048 bytes of read-only data (flash on firmware). Made with
/// Python's mpmath:
///
/// ```text
/// import mpmath as mp; mp.mp.dps = 60
/// A, B, C = (mp.mpf(x) for x in (6 / 35, -3 / 5, 10 / 7))
/// root = lambda y: mp.findroot(lambda s: ((A * s + B) * s + C) * s - y, y)
/// nodes = [mp.cos(mp.pi * (2 * i + 1) / 16) / 2 for i in range(8)]
/// V = mp.matrix([[t ** n for n in range(8)] for t in nodes])
/// for j in range(32):
///     s = mp.matrix([root((j + mp.mpf(1) / 2 + t) / 32) for t in nodes])
///     print([float(c) for c in mp.lu_solve(V, s)])
/// ```
#[rustfmt::skip]
const ROOTS: [[f64; 8]; PIECES] = [
    [f64::from_bits(0x3f8680e72a802eaa), f64::from_bits(0x3f969b9145c7899e), f64::from_bits(0x3f2ad3ad3d5a737e), f64::from_bits(0x3ec4e675e90294e0),
     f64::from_bits(0x3e5d915d3f672f00), f64::from_bits(0x3de6337177b0bca4), f64::from_bits(0xbd908e59d5df95b0), f64::from_bits(0xbd4ae79bed46e1ae)],
    [f64::from_bits(0x3fa1092aa27e3b78), f64::from_bits(0x3f9708dd0798e8bc), f64::from_bits(0x3f2bd41360a87569), f64::from_bits(0x3ec5d64ba6f80b69),
     f64::from_bits(0x3e5e5deacf59baf2), f64::from_bits(0x3de280f9ab322aaf), f64::from_bits(0xbd972666d9884f5d), f64::from_bits(0xbd50cc0edbcc5b88)],
    [f64::from_bits(0x3faca9c586e53e84), f64::from_bits(0x3f977a410eac1a0d), f64::from_bits(0x3f2cdfdb6029d64d), f64::from_bits(0x3ec6cbe080b71b98),
     f64::from_bits(0x3e5efed6d55a77ba), f64::from_bits(0x3ddad9451da0ded3), f64::from_bits(0xbd9f5b992fa05b91), f64::from_bits(0xbd54d952931d54f6)],
    [f64::from_bits(0x3fb4421108ed50ef), f64::from_bits(0x3f97efeb608cf893), f64::from_bits(0x3f2df7411922be22), f64::from_bits(0x3ec7c59be350b38f),
     f64::from_bits(0x3e5f64b1985fe991), f64::from_bits(0x3dca848d3f19ec15), f64::from_bits(0xbda4c1f052469ee0), f64::from_bits(0xbd59bae4fd38dd51)],
    [f64::from_bits(0x3fba4d378a91ed1c), f64::from_bits(0x3f986a0ac7db5c53), f64::from_bits(0x3f2f1a6a251aa0ee), f64::from_bits(0x3ec8c15b8b26dd5d),
     f64::from_bits(0x3e5f7c6199fb3462), f64::from_bits(0xbdb241d9a11e81d9), f64::from_bits(0xbdab01b6333cc03d), f64::from_bits(0xbd5f926e561ce0ff)],
    [f64::from_bits(0x3fc03bbcb911d5ae), f64::from_bits(0x3f98e8ce6d5dea5e), f64::from_bits(0x3f3024af5536e475), f64::from_bits(0x3ec9bc53584fbe81),
     f64::from_bits(0x3e5f2e67a30b948b), f64::from_bits(0xbddb94bd8f11c3ad), f64::from_bits(0xbdb1535956913c52), f64::from_bits(0xbd63413314ec3f33)],
    [f64::from_bits(0x3fc36102d8d834bc), f64::from_bits(0x3f996c6551225b98), f64::from_bits(0x3f30c20042eca9a1), f64::from_bits(0x3ecab2e6d3f7019f),
     f64::from_bits(0x3e5e5e06dcbf54e4), f64::from_bits(0xbdec772b529b2451), f64::from_bits(0xbdb5f8ef19b1d40e), f64::from_bits(0xbd6755aad13cf179)],
    [f64::from_bits(0x3fc6970b7243a06f), f64::from_bits(0x3f99f4fd9c70bb96), f64::from_bits(0x3f3165003e0712eb), f64::from_bits(0x3ecba07b876ad8db),
     f64::from_bits(0x3e5ce85169a7e68a), f64::from_bits(0xbdf77d137cb5717c), f64::from_bits(0xbdbb955a7585c66a), f64::from_bits(0xbd6c13ad6699df78)],
    [f64::from_bits(0x3fc9de797f72c096), f64::from_bits(0x3f9a82c3c3fea8db), f64::from_bits(0x3f320d688c0f732e), f64::from_bits(0x3ecc7f4354021efd),
     f64::from_bits(0x3e5aa31ce8b33b1e), f64::from_bits(0xbe0186a4ddc83185), f64::from_bits(0xbdc127464db65856), f64::from_bits(0xbd70c0cb9d429a91)],
    [f64::from_bits(0x3fcd37f55f9811f7), f64::from_bits(0x3f9b15e1705077e6), f64::from_bits(0x3f32bacb695cff96), f64::from_bits(0x3ecd47fe27c374f5),
     f64::from_bits(0x3e575be6fe6587ae), f64::from_bits(0xbe08af1a2a0d936c), f64::from_bits(0xbdc52554f93bca46), f64::from_bits(0xbd73ccede7948242)],
    [f64::from_bits(0x3fd05216343606fd), f64::from_bits(0x3f9bae7c2098e881), f64::from_bits(0x3f336c8a8c2de4d0), f64::from_bits(0x3ecdf1b2c639e417),
     f64::from_bits(0x3e52d6b92237fcbf), f64::from_bits(0xbe10bbea6f78dbfd), f64::from_bits(0xbdc9d65449bacdac), f64::from_bits(0xbd7721c0633ac9df)],
    [f64::from_bits(0x3fd211e82379b5e6), f64::from_bits(0x3f9c4cb37abe6391), f64::from_bits(0x3f3421cbe258cca4), f64::from_bits(0x3ece715efe0a083e),
     f64::from_bits(0x3e499a4abb60fc64), f64::from_bits(0xbe16134f6b333915), f64::from_bits(0xbdcf477cd91e8366), f64::from_bits(0xbd7aa3d0bf41a15a)],
    [f64::from_bits(0x3fd3dbcb1229926d), f64::from_bits(0x3f9cf09f3995290b), f64::from_bits(0x3f34d96c599b5879), f64::from_bits(0x3eceb9a0a914d63b),
     f64::from_bits(0x3e33b611b702cd46), f64::from_bits(0xbe1c826a6f4f91b7), f64::from_bits(0xbdd2bee1587b8212), f64::from_bits(0xbd7e21ab0ac4e564)],
    [f64::from_bits(0x3fd5b01ac0bbc5c7), f64::from_bits(0x3f9d9a4ca90a0793), f64::from_bits(0x3f3591f08f1cf489), f64::from_bits(0x3eceba5a652b3471),
     f64::from_bits(0xbe349538824a9991), f64::from_bits(0xbe2216d269d943f8), f64::from_bits(0xbdd638081dd69fa9), f64::from_bits(0xbd80a5630536a557)],
    [f64::from_bits(0x3fd78f335d1e79a7), f64::from_bits(0x3f9e49bb9f34f088), f64::from_bits(0x3f3649735ac63f81), f64::from_bits(0x3ece60593d844923),
     f64::from_bits(0xbe51d362cbdf1af3), f64::from_bits(0xbe269ae62e0d883a), f64::from_bits(0xbdd9ffa62b08b3a5), f64::from_bits(0xbd81d23ab243e175)],
    [f64::from_bits(0x3fd979708f53cac5), f64::from_bits(0x3f9efedae184b696), f64::from_bits(0x3f36fd925382ff94), f64::from_bits(0x3ecd9503b568658f),
     f64::from_bits(0xbe60c6ebef3d5aee), f64::from_bits(0xbe2bd9808f898494), f64::from_bits(0xbdddf5e53e9f1e37), f64::from_bits(0xbd823ebf15f57ba8)],
    [f64::from_bits(0x3fdb6f2c475b41fa), f64::from_bits(0x3f9fb983e708d734), f64::from_bits(0x3f37ab58a8949235), f64::from_bits(0x3ecc3e1efc62d231),
     f64::from_bits(0xbe6a6587bbed0bb0), f64::from_bits(0xbe30eb59ad0e40ee), f64::from_bits(0xbde0f1fff9f2b2f2), f64::from_bits(0xbd8170f4f4249704)],
    [f64::from_bits(0x3fdd70bd41dd1e64), f64::from_bits(0x3fa03cbaf68e2b8b), f64::from_bits(0x3f384f2908f0206d), f64::from_bits(0x3eca3dbcab79e86b),
     f64::from_bits(0xbe73000cb79df3a8), f64::from_bits(0xbe3444c6d719ea9e), f64::from_bits(0xbde2ba370ca4a286), f64::from_bits(0xbd7d924d8fde7922)],
    [f64::from_bits(0x3fdf7e75389828ae), f64::from_bits(0x3fa09f282db4d164), f64::from_bits(0x3f38e4a7d3b28cc7), f64::from_bits(0x3ec7726a344c06d0),
     f64::from_bits(0xbe79e5c66e6ecc0e), f64::from_bits(0xbe37eac77c9c0439), f64::from_bits(0xbde4154556806c37), f64::from_bits(0xbd7304091cc157b1)],
    [f64::from_bits(0x3fe0cc4f59df45cf), f64::from_bits(0x3fa103c64057a62e), f64::from_bits(0x3f3966a77a3545e6), f64::from_bits(0x3ec3b7c2c22e420d),
     f64::from_bits(0xbe80fbf3b8ab6f3c), f64::from_bits(0xbe3bc14b017dd255), f64::from_bits(0xbde4ad8ef43ddb46), f64::from_bits(0xbd372f4692314139)],
    [f64::from_bits(0x3fe1dfbd394811f0), f64::from_bits(0x3fa16a3b62207837), f64::from_bits(0x3f39cf19d78a313b), f64::from_bits(0x3ebdcf177564ebd7),
     f64::from_bits(0xbe859f701787163e), f64::from_bits(0xbe3f99d6bf5461ac), f64::from_bits(0xbde4142702062b86), f64::from_bits(0x3d78f005ae54973f)],
    [f64::from_bits(0x3fe2f99e32032094), f64::from_bits(0x3fa1d213c129de5a), f64::from_bits(0x3f3a170a441e26c9), f64::from_bits(0x3eb1b712f002b58d),
     f64::from_bits(0xbe8ad88e6bbcbeef), f64::from_bits(0xbe41976c0f44c048), f64::from_bits(0xbde1c26d3ae02819), f64::from_bits(0x3d8ed3004a872ff5)],
    [f64::from_bits(0x3fe41a0416674aa6), f64::from_bits(0x3fa23abdf5d9beac), f64::from_bits(0x3f3a36a5429d3256), f64::from_bits(0x3e8703a44df7de2b),
     f64::from_bits(0xbe904acaa65c2a41), f64::from_bits(0xbe430fe722c5547f), f64::from_bits(0xbdda43eeec915603), f64::from_bits(0x3d9b54d46157aef1)],
    [f64::from_bits(0x3fe540f69f553ce8), f64::from_bits(0x3fa2a387b6437d69), f64::from_bits(0x3f3a2553a2ac9ab1), f64::from_bits(0xbeaddd8cfc30c2f8),
     f64::from_bits(0xbe9359bea1dd3ca9), f64::from_bits(0xbe43f7e16d4745df), f64::from_bits(0xbdc6776de75e0021), f64::from_bits(0x3da4df08ce9e8798)],
    [f64::from_bits(0x3fe66e714784c62e), f64::from_bits(0x3fa30b9b27c86f39), f64::from_bits(0x3f39d9ef9709088a), f64::from_bits(0xbec1ecf0bd23498b),
     f64::from_bits(0xbe967cd225d3df4a), f64::from_bits(0xbe44040cb9b58971), f64::from_bits(0x3dc4ffbb6fa4599c), f64::from_bits(0x3dace06b8636b913)],
    [f64::from_bits(0x3fe7a26103d781eb), f64::from_bits(0x3fa371fd43adecf2), f64::from_bits(0x3f394b1a1636f448), f64::from_bits(0xbecdf0d5e77407d1),
     f64::from_bits(0xbe998b3825d2f9f2), f64::from_bits(0xbe42e10dc7951767), f64::from_bits(0x3de3a43654a218fb), f64::from_bits(0x3db267117c49c406)],
    [f64::from_bits(0x3fe8dca1ee23a297), f64::from_bits(0x3fa3d58dda5e9bb9), f64::from_bits(0x3f386fb56a6d9ff1), f64::from_bits(0xbed5b5e65b436741),
     f64::from_bits(0xbe9c4f0e348b57c0), f64::from_bits(0xbe403cbd119d90f3), f64::from_bits(0x3df29f38bb6d0cb9), f64::from_bits(0x3db5a59d7d3d7a40)],
    [f64::from_bits(0x3fea1cfd0124042c), f64::from_bits(0x3fa43509cebe3a1e), f64::from_bits(0x3f373f868c1d6506), f64::from_bits(0xbedd1447134e68a4),
     f64::from_bits(0xbe9e86996672e0fa), f64::from_bits(0xbe37a8d510e3fdbb), f64::from_bits(0x3dfc8635d4c90314), f64::from_bits(0x3db74745783c718a)],
    [f64::from_bits(0x3feb63260dcff1c6), f64::from_bits(0x3fa48f101f248684), f64::from_bits(0x3f35b3f95fc3a923), f64::from_bits(0xbee273aee64b00a8),
     f64::from_bits(0xbe9fe818ceb1e278), f64::from_bits(0xbe261dab4e02b390), f64::from_bits(0x3e034dbf8661d5ee), f64::from_bits(0x3db6515ab357097a)],
    [f64::from_bits(0x3fecaeba1aeca590), f64::from_bits(0x3fa4e22a333b8a7c), f64::from_bits(0x3f33c8fc3f1071e7), f64::from_bits(0xbee6781cdfe35ee6),
     f64::from_bits(0xbea01455a8b5db8f), f64::from_bits(0x3e14a5c6ba69d7bc), f64::from_bits(0x3e07c5be26d41ea9), f64::from_bits(0x3db1eee45e33ec67)],
    [f64::from_bits(0x3fedff3e654c797c), f64::from_bits(0x3fa52cd7a5b059b6), f64::from_bits(0x3f317dde210bf1a8), f64::from_bits(0xbeea6f073911aa87),
     f64::from_bits(0xbe9f062ff633cd5d), f64::from_bits(0x3e38469bbd9401f2), f64::from_bits(0x3e0ade2411370d52), f64::from_bits(0x3da382dd25ce4f6a)],
    [f64::from_bits(0x3fef542037a8542a), f64::from_bits(0x3fa56d9d5c03f3d4), f64::from_bits(0x3f2dac23ff7a547c), f64::from_bits(0xbeee28ec7effa267),
     f64::from_bits(0xbe9c5320e53189e1), f64::from_bits(0x3e46793bdc96b2ed), f64::from_bits(0x3e0bc9ca7dcd7948), f64::from_bits(0xbd7cf3cac315cc24)],
];

/// `s` in [0, 1] such that the cubic `((A s + B) s + C) s` equals `y`, for `y` in [0, 1),
/// within `2^-52` of the exact root (so `1 + s`, after its own rounding, within one and a
/// half units in its last place; see the module docs). A lower bound may differ from Java's or Go's in the last few bits:
/// their Cardano formula's cancellations leave up to about `9 * 2^-52`. Bins, keys and the
/// accuracy guarantee are not affected: those come from
/// [`IndexMapping::index`](super::IndexMapping::index).
///
/// No caller passes a `y` outside [0, 1); one gives a value in [0, 1] or NaN, without a
/// panic.
#[inline]
pub(crate) fn cubic_inverse(y: f64) -> f64 {
    let centred = y * PIECES as f64 - 0.5;
    // The piece whose centre is nearest.
    let (nearest, j) = nearest_integer(centred);
    let j = j as u32 as usize; // negative y: beyond the table
    let t = centred - nearest; // in [-1/2, 1/2], exact
    let Some(&[c0, c1, c2, c3, c4, c5, c6, c7]) = ROOTS.get(j) else {
        return if y > 0.0 { 1.0 } else { 0.0 };
    };
    // Estrin's form (a short chain), the constant added last (the smallest rounding).
    let t2 = t * t;
    let t4 = t2 * t2;
    let q = ((c1 + c2 * t) + (c3 + c4 * t) * t2) + ((c5 + c6 * t) + c7 * t2) * t4;
    // Kept in [0, 1]: the rounding can leave a root of 0 a hair below it.
    (c0 + t * q).clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::super::bits::MANTISSA_MASK;
    use super::super::log::LogMapping;
    use super::*;

    /// `P(s) - y` for the mapping's cubic `P`, in double-double arithmetic (error about
    /// 2^-100): exact enough to tell on which side of the root `s` lies.
    fn cubic_minus(s: f64, y: f64) -> f64 {
        let two_sum = |a: f64, b: f64| {
            let sum = a + b;
            let b_virtual = sum - a;
            (sum, (a - (sum - b_virtual)) + (b - b_virtual))
        };
        // (hi, lo) * s + c, for each Horner step.
        let step = |(hi, lo): (f64, f64), c: f64| {
            let p = hi * s;
            let e = libm::fma(hi, s, -p) + lo * s;
            let (h, t) = two_sum(p, c);
            two_sum(h, t + e)
        };
        let (hi, lo) = step(step(step((CUBIC_A, 0.0), CUBIC_B), CUBIC_C), 0.0);
        let (h, t) = two_sum(hi, -y);
        h + (t + lo)
    }

    /// The cubic's inverse is within `2^-52` of the exact root for every `y` in [0, 1)
    /// (the module docs' bound): the cubic changes sign between `s - 2^-52` and
    /// `s + 2^-52`. A grid of 2^20 points, the ends, and pseudo-random bit patterns.
    #[test]
    fn the_cubic_inverse_is_within_one_unit_of_the_root() {
        let tolerance = f64::EPSILON;
        let mut rng = crate::test_rng::Xorshift64(0x9e37_79b9_7f4a_7c15);
        let random = (0..1u32 << 16).map(|_| {
            let state = rng.next_u64();
            // A uniform mantissa and an exponent down to 2^-64: small `y` too.
            let exponent = (state >> 58) as i32;
            libm::ldexp(
                f64::from_bits((state & MANTISSA_MASK) | 0x3ff0_0000_0000_0000) - 1.0,
                -exponent,
            )
        });
        let grid = (0..1u32 << 20).map(|i| f64::from(i) / f64::from(1u32 << 20));
        let ends = [
            0.0,
            1e-300,
            1e-17,
            f64::EPSILON,
            0.5,
            1.0 - f64::EPSILON / 2.0,
        ];
        for y in grid.chain(random).chain(ends) {
            let s = cubic_inverse(y);
            assert!((0.0..=1.0).contains(&s), "y = {y:e}: s = {s:e}");
            assert!(
                cubic_minus(s - tolerance, y) <= 0.0 && cubic_minus(s + tolerance, y) >= 0.0,
                "y = {y:e}: s = {s:e} is not within 2^-52 of the root"
            );
        }
    }

    /// Whether `got`, a position of the slice kernel for a value of exact index `exact`,
    /// is right for bins from `min_index`: either `u32::MAX` (left to `index`), or below
    /// `N` exactly when `exact` is a bin's of the `N` from `min_index`, and then
    /// `exact - min_index`. `N` is as many bins as fit from `min_index` (up to 2^24).
    fn position_is_right(got: u32, exact: i32, min_index: i32) -> bool {
        let n = (i32::MAX.wrapping_sub(min_index) as u32).min(1 << 24);
        let want = exact.wrapping_sub(min_index) as u32;
        got == u32::MAX || (got < n) == (want < n) && (got >= n || got == want)
    }

    /// The vectorised positions are `index`'s, bit for bit, or left to `index`: every
    /// kind of float, for mappings with an offset and a multiplier large enough that
    /// indices leave the `i32` range, and lowest indices from one end of `i32` to the
    /// other. Left to `index` only near an edge (a few in 100,000) where the kernel holds.
    #[test]
    fn the_slice_positions_are_the_index_positions() {
        let mut rng = crate::test_rng::Xorshift64(0x2545_f491_4f6c_dd1d);
        let mut values: [f64; 4096] = core::array::from_fn(|_| {
            let bits = rng.next_u64() & !(1 << 63);
            f64::from_bits(bits.min(0x7ff0_0000_0000_0000))
        });
        for (v, i) in values.iter_mut().zip(0..) {
            // Whole numbers, latency-like values, their negated zeros, edges.
            match i % 8 {
                0 => *v = (rng.next_u64() >> (i % 64)) as f64,
                1 => *v = (1u64 << (i % 64)) as f64,
                2 => *v = -0.0,
                3 => *v = libm::ldexp(1.0, (i % 2098) - 1074),
                _ => {}
            }
        }
        values[5] = f64::INFINITY;
        values[6] = f64::MAX;
        values[7] = f64::MIN_POSITIVE;
        let mappings = [
            CubicMapping::ONE_PERCENT,
            CubicMapping::with_relative_accuracy(0.02).unwrap(),
            CubicMapping::with_relative_accuracy(1e-7).unwrap(),
            CubicMapping::from_gamma_offset(1.02, 123.5).unwrap(),
            CubicMapping::from_gamma_offset(1.02, -7.0).unwrap(),
            CubicMapping::from_gamma_offset(1.01, 1e12).unwrap(),
            CubicMapping::from_gamma_offset(1.01, 5.3e8).unwrap(),
            CubicMapping::from_gamma_offset(1.01, -5.3e8).unwrap(),
        ];
        let min_indices = [
            0,
            -100,
            350,
            i32::MIN,
            i32::MIN + 1_000,
            i32::MAX - 1_000,
            i32::MAX,
            1 << 29,
            -(1 << 29),
            (1 << 29) + 1,
            5.3e8 as i32 - (1 << 29),
        ];
        let mut out = [0u32; 4096];
        for m in mappings {
            for min_index in min_indices {
                m.positions_fast_slice(&values, min_index, &mut out);
                let mut left = 0;
                for (&v, &got) in values.iter().zip(&out) {
                    let exact = m.exact_index(v.abs());
                    assert!(
                        position_is_right(got, exact, min_index),
                        "{v:e} {m:?} {min_index}"
                    );
                    left += usize::from(got == u32::MAX);
                }
                // Where the kernel's bound holds, it leaves only the values near an
                // edge: none of these, but for an index out of `i32`'s range.
                let holds =
                    cubic_key::position_shift(m.scale.multiplier, m.scale.offset, min_index)
                        .is_finite();
                assert_eq!(
                    holds,
                    (m.scale.offset - f64::from(min_index)).abs() <= (1 << 29) as f64
                        && m.scale.multiplier <= (1 << 20) as f64
                );
                if holds {
                    assert!(left < 8, "{left} {m:?} {min_index}");
                } else {
                    assert_eq!(left, values.len());
                }
            }
        }
        // Bin edges: the floor of whole and negative whole numbers is DataDog's, and
        // values on an edge are left to `index`.
        let m = CubicMapping::ONE_PERCENT;
        let mut left = 0;
        for i in -2_000..2_000 {
            let edge = m.lower_bound(i);
            let bits = edge.to_bits();
            let near = [edge, f64::from_bits(bits + 1), f64::from_bits(bits - 1)];
            m.positions_fast_slice(&near, -3_000, &mut out);
            for (&v, &got) in near.iter().zip(&out) {
                assert!(position_is_right(got, m.exact_index(v), -3_000), "{v:e}");
                left += usize::from(got == u32::MAX);
            }
        }
        assert!(left > 1_000, "{left}");
    }

    /// `index` (the short chain, `cubic_key`) is DataDog's formula (`exact_index`) for
    /// every kind of float, at and next to every bin edge in the latency range, for
    /// mappings of several accuracies and offsets, including those the short chain
    /// declines (an offset that is no multiple of 2^-16, one above 2^30, a multiplier
    /// above 2^20); and near the edges it does decline.
    #[test]
    fn the_index_is_datadogs_formula() {
        let mappings = [
            CubicMapping::ONE_PERCENT,
            CubicMapping::with_relative_accuracy(0.02).unwrap(),
            CubicMapping::with_relative_accuracy(0.001).unwrap(),
            CubicMapping::with_relative_accuracy(1e-6).unwrap(),
            CubicMapping::with_relative_accuracy(1e-7).unwrap(),
            CubicMapping::from_gamma_offset(1.02, 123.5).unwrap(),
            CubicMapping::from_gamma_offset(1.02, -7.0).unwrap(),
            CubicMapping::from_gamma_offset(1.02, 0.1).unwrap(),
            CubicMapping::from_gamma_offset(1.01, 5.3e8).unwrap(),
            CubicMapping::from_gamma_offset(1.01, -1.1e9).unwrap(),
        ];
        let mut rng = crate::test_rng::Xorshift64(0x5851_f42d_4c95_7f2d);
        for m in mappings {
            for i in 0..100_000u64 {
                let v = match i % 4 {
                    0 => f64::from_bits(rng.next_u64() & !(1 << 63)),
                    1 => (rng.next_u64() >> (i % 64)) as f64,
                    2 => (rng.next_u64() % 100_000_000_000) as f64 / 1e9,
                    _ => f64::from_bits(i << 48),
                };
                assert_eq!(m.index(v), m.exact_index(v), "{v:e} with {m:?}");
            }
            // Edges of every bin from about 1e-9 to 1e12, and their neighbours.
            let (from, to) = (m.exact_index(1e-9), m.exact_index(1e12));
            let step = ((to - from) / 20_000).max(1) as usize;
            let mut declined = 0;
            for i in (from..to).step_by(step) {
                let bits = m.lower_bound(i).to_bits();
                for v in (bits - 3..=bits + 3).map(f64::from_bits) {
                    assert_eq!(m.index(v), m.exact_index(v), "{v:e} with {m:?}");
                    let key = cubic_key::fast_key(v, m.scale.multiplier, m.key_shift);
                    declined += usize::from(key.is_none());
                }
            }
            assert!(declined > 0, "{m:?}");
        }
        let declines = |m: CubicMapping| m.key_shift == f64::INFINITY;
        assert!(!declines(CubicMapping::ONE_PERCENT));
        assert!(!declines(
            CubicMapping::with_relative_accuracy(1e-6).unwrap()
        ));
        assert!(declines(
            CubicMapping::with_relative_accuracy(1e-7).unwrap()
        ));
        assert!(declines(mappings[7]) && declines(mappings[9]));
    }

    #[test]
    fn gamma_round_trips() {
        let l = LogMapping::with_relative_accuracy(0.01).unwrap();
        let l2 = LogMapping::from_gamma_offset(l.gamma(), 0.0).unwrap();
        assert!((l2.relative_accuracy() - 0.01).abs() < 1e-12);
        let c = CubicMapping::with_relative_accuracy(0.01).unwrap();
        let c2 = CubicMapping::from_gamma_offset(c.gamma(), 0.0).unwrap();
        assert!((c2.relative_accuracy() - 0.01).abs() < 1e-12);
        assert!((c2.scale.multiplier - c.scale.multiplier).abs() < 1e-9);
    }

    /// `CubicMapping::lower_bound` is `2^e (1 + s)`: the fast path (no `floor`, no
    /// `ldexp`) agrees with libm's everywhere it is taken, and the ends saturate.
    #[test]
    fn the_cubic_lower_bound_is_libms_floor_and_ldexp() {
        let libm_way = |x: f64| {
            let e = libm::floor(x);
            libm::ldexp(1.0 + cubic_inverse(x - e), e as i32)
        };
        for i in -4_000_000..4_000_000 {
            let x = f64::from(i) / 3_000.0 + 1e-7;
            assert_eq!(
                interpolated_exp2(x, cubic_inverse).to_bits(),
                libm_way(x).to_bits(),
                "x = {x}"
            );
        }
        for x in [
            -1022.0,
            -1021.5,
            1022.999,
            -1022.0 - 1e-9,
            1023.0,
            1023.5,
            -1074.5,
            -1100.0,
        ] {
            assert_eq!(
                interpolated_exp2(x, cubic_inverse).to_bits(),
                libm_way(x).to_bits(),
                "x = {x}"
            );
        }
        assert_eq!(interpolated_exp2(1e6, cubic_inverse), f64::INFINITY);
        assert_eq!(
            interpolated_exp2(f64::INFINITY, cubic_inverse),
            f64::INFINITY
        );
        assert_eq!(interpolated_exp2(-1e6, cubic_inverse), 0.0);
        assert_eq!(interpolated_exp2(f64::NEG_INFINITY, cubic_inverse), 0.0);
        assert!(interpolated_exp2(f64::NAN, cubic_inverse).is_nan());
    }
}
