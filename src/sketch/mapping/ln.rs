//! A fast natural logarithm with a proven error bound: the first step of
//! [`LogMapping`](super::LogMapping)'s index, which calls `libm::log` only where the bound
//! cannot decide the bin (see `LogMapping`'s docs).
//!
//! A positive normal `v` is `2^(b - 1023) * x`, `b` its biased exponent and `x` in [1, 2).
//! The top [`SEGMENT_BITS`] bits of `x`'s mantissa pick one of 128 segments
//! `[1 + j/128, 1 + (j+1)/128)`, whose centre is `c_j = 1 + (2j + 1)/256`. The low 45 bits,
//! less `2^44`, are `D = (x - c_j) * 2^52`, an integer (no rounding), so with
//! `r = (x - c_j) / c_j` (at most `1/257` in size),
//!
//! `ln(v) = b ln 2 + (ln(c_j) - 1023 ln 2) + ln(1 + r)`,
//!
//! where `2^-52 / c_j` and the middle term come from [`SEGMENTS`], and
//! three terms of the Taylor series of `ln(1 + r)`, `r + r^2 (r/3 - 1/2)` (a shorter chain
//! of dependent operations than Horner's form), finish it: two table loads, five
//! multiplications, four additions, two integer-to-float conversions and no division; the
//! only branch is the range check. No heap, no `unsafe`, the same bits on
//! every target (IEEE-754 double operations, each rounded once: no fused multiply-add).
//!
//! # The error bound
//!
//! [`ln`] is within [`LN_ERROR`] `= 2^-34` (about `5.8e-11`) of the exact `ln(v)` for
//! every `v` it accepts. With `u = 2^-53` (the relative error of one rounding to nearest;
//! a double of size below `2^k` is at most `2^(k - 54)` from its rounded value):
//!
//! 1. **The reduced argument.** `|x - c_j| <= 2^-8` and `c_j >= 1 + 2^-8`, so
//!    `|r| <= 1/257`. `D` is exact; the table holds `(2^-52 / c_j)(1 + d1)` and the product
//!    rounds with `(1 + d2)`, `|d1|, |d2| <= u`: the computed `r'` is within
//!    `|r| (2u + u^2) < 2^-60` of `r`, so `|ln(1 + r') - ln(1 + r)| < 2^-60 * 1.004`.
//! 2. **Truncation.** For `|r'| <= p < 1`, `|ln(1 + r') - (r' - r'^2/2 + r'^3/3)| <=
//!    sum_{n >= 4} p^n / n <= (p^4 / 4) / (1 - p)`: with `p = (1/257)(1 + 2^-51)`, at most
//!    `2^-34 * 0.9884`.
//! 3. **The polynomial's roundings.** `fl(r' * r')`, `fl(r' * THIRD)` (`THIRD` is `1/3`
//!    within relative `u`), `fl(. - 0.5)` (within `2^-54`, relative `2^-52.9` of a result
//!    near `-1/2`) and their product are within relative `2^-51.4` of `r'^2 (r'/3 - 1/2)`,
//!    at most `2^-17` in size: `2^-68.4`. The last addition (a result below `2^-8`) adds
//!    at most `2^-62`: below `2^-61` together.
//! 4. **The table.** Its `ln(c_j) - 1023 ln 2` (between -709.09 and -708.39) is correctly
//!    rounded, within `2^-44`; the unit test `table_is_what_the_proof_assumes` checks each
//!    to within `2^-44 + 2^-50` of `libm::log`'s, so at most `2^-43.9` even if the table were
//!    off by a unit.
//! 5. **The exponent.** `|LN_2 - ln 2| < 2^-55.2` and `b <= 2046`, so
//!    `|b * LN_2 - b ln 2| < 2^-44.2`; `fl(b * LN_2)` (below 2048) rounds by at most
//!    `2^-43`, `fl(. + table)` and `fl(. + polynomial)` (below 1024) by `2^-44` each.
//!
//! Sum: `2^-34 * 0.9884 + 2^-44 (1.072 + 0.871 + 2 + 1 + 1) + 2^-59 < 2^-34 * 0.995`,
//! below [`LN_ERROR`]. The unit tests check the bound at every segment's edges and centre
//! (the truncation peaks at the edges of the first segment) over the exponent range, and on
//! random doubles, against `libm::log`.

use super::bits::MANTISSA_BITS;

/// How many top mantissa bits choose the segment: 128 segments of width `2^-7`.
const SEGMENT_BITS: u32 = 7;
/// `D`'s bit width: the mantissa bits below the segment's.
const OFFSET_BITS: u32 = MANTISSA_BITS - SEGMENT_BITS;
const SEGMENT_MASK: u64 = (1 << SEGMENT_BITS) - 1;
/// The biased exponents of the normal doubles: 1 to 2046 (0 is zero and the subnormals,
/// 2047 infinity and NaN; a set sign bit puts it above 2047).
const MAX_NORMAL_EXPONENT: u64 = 2046;
const THIRD: f64 = 1.0 / 3.0;

/// An upper bound on `|ln(v) - exact ln v|` for every `v` that [`ln`] accepts: `2^-34`,
/// derived in the module docs.
// Read only by log.rs's compile-time check (and the tests), which some rustc versions
// do not count as a use.
#[allow(dead_code)]
pub(crate) const LN_ERROR: f64 = 1.0 / (1u64 << 34) as f64;

/// For segment `j`, at `2j` and `2j + 1`: `2^-52 / c_j`, with `c_j = 1 + (2j + 1)/256`
/// (exact in binary), as IEEE division rounds `1 / c_j`, scaled exactly; and
/// `ln(c_j) - 1023 ln 2`, correctly rounded. 2 KiB of read-only data (flash on firmware),
/// one array so that one scaled index addresses both. Made with Python's `decimal` at 60
/// digits:
///
/// ```text
/// from decimal import Decimal, getcontext; getcontext().prec = 60
/// for j in range(128):
///     c = 1 + (2 * j + 1) / 256
///     print(1.0 / c * 2.0**-52, float(Decimal(c).ln() - 1023 * Decimal(2).ln()))
/// ```
///
/// The unit test `table_is_what_the_proof_assumes` checks every entry.
#[rustfmt::skip]
const SEGMENTS: [f64; 2 << SEGMENT_BITS] = [
    2.2118061813543975e-16, -709.0856670724083, // 0
    2.1947265969423944e-16, -709.0779150956041, // 1
    2.1779087686133338e-16, -709.0702227499809, // 2
    2.161346724745552e-16, -709.0625891251259, // 3
    2.1450346739927553e-16, -709.0550133313174, // 4
    2.1289669985321354e-16, -709.0474944989033, // 5
    2.1131382476136808e-16, -709.0400317777018, // 6
    2.0975431313951296e-16, -709.032624336424, // 7
    2.0821765150479126e-16, -709.0252713621187, // 8
    2.0670334131202914e-16, -709.017972059637, // 9
    2.0521089841446938e-16, -709.0107256511163, // 10
    2.0373985254769898e-16, -709.0035313754822, // 11
    2.022897468356157e-16, -708.9963884879699, // 12
    2.008601373173428e-16, -708.9892962596604, // 13
    1.9945059249406321e-16, -708.9822539770349, // 14
    1.9806069289480145e-16, -708.975260941544, // 15
    1.9669003066023535e-16, -708.9683164691912, // 16
    1.9533820914367015e-16, -708.9614198901321, // 17
    1.94004842528355e-16, -708.9545705482866, // 18
    1.9268955546036615e-16, -708.9477678009638, // 19
    1.9139198269632327e-16, -708.941011018501, // 20
    1.901117687652442e-16, -708.9342995839129, // 21
    1.8884856764388045e-16, -708.9276328925547, // 22
    1.8760204244491094e-16, -708.9210103517943, // 23
    1.8637186511740333e-16, -708.9144313806962, // 24
    1.8515771615898377e-16, -708.9078954097164, // 25
    1.8395928433918452e-16, -708.9014018804058, // 26
    1.8277626643346628e-16, -708.8949502451244, // 27
    1.8160836696743774e-16, -708.8885399667635, // 28
    1.804552979708191e-16, -708.882170518478, // 29
    1.7931677874071928e-16, -708.8758413834263, // 30
    1.7819253561381822e-16, -708.8695520545187, // 31
    1.7708230174706546e-16, -708.8633020341736, // 32
    1.7598581690652637e-16, -708.857090834081, // 33
    1.7490282726402466e-16, -708.8509179749739, // 34
    1.7383308520124775e-16, -708.8447829864064, // 35
    1.72776349120997e-16, -708.8386854065383, // 36
    1.71732383265281e-16, -708.8326247819266, // 37
    1.70700957539964e-16, -708.8266006673232, // 38
    1.6968184734569557e-16, -708.8206126254786, // 39
    1.6867483341486058e-16, -708.8146602269512, // 40
    1.6767970165430093e-16, -708.8087430499231, // 41
    1.666962429935719e-16, -708.8028606800201, // 42
    1.6572425323850733e-16, -708.7970127101377, // 43
    1.647635329298783e-16, -708.7911987402723, // 44
    1.6381388720693951e-16, -708.7854183773568, // 45
    1.6287512567566766e-16, -708.7796712351012, // 46
    1.6194706228150432e-16, -708.7739569338378, // 47
    1.6102951518642498e-16, -708.7682751003703, // 48
    1.6012230665016343e-16, -708.7626253678282, // 49
    1.5922526291542861e-16, -708.7570073755239, // 50
    1.5833821409695826e-16, -708.7514207688154, // 51
    1.5746099407426043e-16, -708.7458651989707, // 52
    1.5659344038790087e-16, -708.7403403230387, // 53
    1.5573539413920004e-16, -708.7348458037211, // 54
    1.5488669989320984e-16, -708.729381309249, // 55
    1.5404720558484557e-16, -708.7239465132631, // 56
    1.5321676242805396e-16, -708.7185410946962, // 57
    1.5239522482790353e-16, -708.7131647376598, // 58
    1.5158245029548803e-16, -708.7078171313332, // 59
    1.507782993655385e-16, -708.7024979698556, // 60
    1.4998263551664383e-16, -708.6972069522212, // 61
    1.491953250939843e-16, -708.691943782177, // 62
    1.4841623723448568e-16, -708.686708168123, // 63
    1.4764524379430653e-16, -708.6814998230159, // 64
    1.468822192785737e-16, -708.6763184642738, // 65
    1.4612704077328537e-16, -708.6711638136852, // 66
    1.453795878793044e-16, -708.6660355973182, // 67
    1.4463974264836646e-16, -708.6609335454343, // 68
    1.4390738952103295e-16, -708.6558573924025, // 69
    1.4318241526651893e-16, -708.6508068766165, // 70
    1.4246470892433086e-16, -708.6457817404138, // 71
    1.417541617476509e-16, -708.640781729997, // 72
    1.4105066714840698e-16, -708.6358065953569, // 73
    1.403541206439704e-16, -708.6308560901971, // 74
    1.396644198054251e-16, -708.6259299718611, // 75
    1.3898146420735456e-16, -708.6210280012608, // 76
    1.3830515537909493e-16, -708.6161499428074, // 77
    1.376353967574044e-16, -708.6112955643425, // 78
    1.3697209364050125e-16, -708.6064646370729, // 79
    1.3631515314342449e-16, -708.6016569355048, // 80
    1.3566448415467307e-16, -708.5968722373815, // 81
    1.350199972940808e-16, -708.5921103236212, // 82
    1.3438160487188656e-16, -708.5873709782574, // 83
    1.3374922084896002e-16, -708.5826539883792, // 84
    1.3312276079814523e-16, -708.577959144075, // 85
    1.3250214186668535e-16, -708.5732862383755, // 86
    1.3188728273969376e-16, -708.5686350671999, // 87
    1.3127810360463745e-16, -708.5640054293011, // 88
    1.3067452611680003e-16, -708.5593971262149, // 89
    1.300764733656934e-16, -708.554809962208, // 90
    1.2948386984238727e-16, -708.5502437442284, // 91
    1.2889664140772793e-16, -708.5456982818567, // 92
    1.2831471526141763e-16, -708.5411733872585, // 93
    1.2773801991192813e-16, -708.5366688751374, // 94
    1.271664851472215e-16, -708.5321845626901, // 95
    1.2660004200625393e-16, -708.5277202695613, // 96
    1.2603862275123728e-16, -708.5232758178009, // 97
    1.254821608406358e-16, -708.5188510318205, // 98
    1.2493059090287476e-16, -708.5144457383527, // 99
    1.2438384871073963e-16, -708.5100597664094, // 100
    1.238418711564445e-16, -708.5056929472431, // 101
    1.2330459622734928e-16, -708.501345114307, // 102
    1.2277196298230674e-16, -708.4970161032173, // 103
    1.2224391152861939e-16, -708.4927057517162, // 104
    1.217203829995889e-16, -708.4884138996347, // 105
    1.212013195326397e-16, -708.4841403888573, // 106
    1.2068666424800003e-16, -708.4798850632872, // 107
    1.2017636122792393e-16, -708.4756477688117, // 108
    1.1967035549643792e-16, -708.471428353269, // 109
    1.1916859299959752e-16, -708.4672266664153, // 110
    1.1867102058623802e-16, -708.4630425598926, // 111
    1.1817758598920586e-16, -708.4588758871979, // 112
    1.1768823780705594e-16, -708.454726503651, // 113
    1.172029254862021e-16, -708.4505942663661, // 114
    1.1672159930350722e-16, -708.446479034221, // 115
    1.1624421034930065e-16, -708.4423806678287, // 116
    1.157707105108106e-16, -708.438299029509, // 117
    1.1530105245600003e-16, -708.4342339832609, // 118
    1.1483518961779397e-16, -708.430185394735, // 119
    1.1437307617868817e-16, -708.426153131207, // 120
    1.1391466705572748e-16, -708.4221370615521, // 121
    1.1345991788584433e-16, -708.4181370562187, // 122
    1.1300878501154674e-16, -708.4141529872039, // 123
    1.1256122546694657e-16, -708.4101847280283, // 124
    1.1211719696411838e-16, -708.4062321537124, // 125
    1.1167665787977998e-16, -708.402295140753, // 126
    1.1123956724228574e-16, -708.3983735671, // 127
];

/// `ln(v)` within [`LN_ERROR`], for a positive normal `v` (`f64::MIN_POSITIVE` to
/// `f64::MAX`); `None` for anything else (zero, subnormals, +inf, NaN, negatives), which
/// the caller computes exactly.
#[inline]
pub(crate) fn ln(v: f64) -> Option<f64> {
    let bits = v.to_bits();
    let biased_exponent = bits >> MANTISSA_BITS;
    // One unsigned compare: 0 wraps around to the top.
    if biased_exponent.wrapping_sub(1) >= MAX_NORMAL_EXPONENT {
        return None;
    }
    // 2j, from the top 7 mantissa bits; always in range: the optimiser drops the checks.
    let at = ((bits >> (OFFSET_BITS - 1)) & (SEGMENT_MASK << 1)) as usize;
    let (&inv_centre, &ln_centre) = (SEGMENTS.get(at)?, SEGMENTS.get(at | 1)?);
    // D = (low 45 bits) - 2^44: flip bit 44, then sign-extend from it (two shifts).
    let shift = 64 - OFFSET_BITS;
    let d = (((bits ^ (1 << (OFFSET_BITS - 1))) << shift) as i64) >> shift;
    let r = d as f64 * inv_centre; // |d| < 2^44: exact conversion
    let log1p_r = r + (r * r) * (r * THIRD - 0.5);
    // Through i32: below 2047, and a signed conversion is one instruction where an
    // unsigned 64-bit one is several.
    let b = f64::from(biased_exponent as i32);
    Some((b * core::f64::consts::LN_2 + ln_centre) + log1p_r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_what_the_proof_assumes() {
        // ln 2 split so that n * LN2_HI is exact for n < 2000 (fdlibm's constants).
        const LN2_HI: f64 = f64::from_bits(0x3fe6_2e42_fee0_0000);
        const LN2_LO: f64 = f64::from_bits(0x3dea_39ef_3579_3c76);
        for (j, pair) in SEGMENTS.chunks_exact(2).enumerate() {
            let (inv, t) = (pair[0], pair[1]);
            let c = 1.0 + (2 * j + 1) as f64 / 256.0; // exact
            let scaled = 1.0 / c / (1u64 << 52) as f64;
            assert_eq!(inv.to_bits(), scaled.to_bits(), "inv_{j}");
            // t + 1023 ln 2 = ln(c): the first sum is exact (Sterbenz), the second rounds
            // by at most 2^-54, libm's log errs by at most 2^-53 (one ulp below 1).
            let ln_c = (t + 1023.0 * LN2_HI) + 1023.0 * LN2_LO;
            let error = (ln_c - libm::log(c)).abs();
            let bound = 1.0 / (1u64 << 44) as f64 + 1.0 / (1u64 << 50) as f64;
            assert!(error <= bound, "T_{j}: {t} is {error:e} off");
            assert!((-709.1..-708.3).contains(&t), "T_{j} below 1024 in size");
        }
    }

    /// `|ln(v) - libm::log(v)|` within the bound plus libm's own error (below `2^-43`).
    fn check(v: f64) -> f64 {
        let approx = ln(v).unwrap_or_else(|| panic!("{v:e} is positive normal"));
        let error = (approx - libm::log(v)).abs();
        let bound = LN_ERROR + 1.0 / (1u64 << 43) as f64;
        assert!(error <= bound, "ln({v:e}) = {approx:e}, {error:e} off");
        error
    }

    #[test]
    fn within_the_bound_at_segment_edges_and_centres() {
        // The truncation error peaks at the segment edges (|r| largest); the roundings of
        // the exponent term grow with the exponent: every segment, across the exponents.
        let mut worst = 0.0f64;
        for exponent in [-1022, -600, -1, 0, 1, 40, 600, 1023] {
            let scale = libm::ldexp(1.0, exponent);
            for j in 0..128u64 {
                let start = (0x3ffu64 << 52) | (j << 45);
                for bits in [start, start | (1 << 44), start + (1 << 45) - 1] {
                    worst = worst.max(check(f64::from_bits(bits) * scale));
                }
            }
        }
        // Not vacuous either: the first segment's lower edge comes close to the bound.
        assert!(worst > LN_ERROR * 0.9, "worst {worst:e}");
    }

    #[test]
    fn within_the_bound_on_random_doubles() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..200_000 {
            // xorshift64*: every positive normal bit pattern is reachable.
            state ^= state >> 12;
            state ^= state << 25;
            state ^= state >> 27;
            let v = f64::from_bits(state.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 1);
            if v.is_normal() {
                check(v);
            }
        }
    }

    #[test]
    fn declines_what_it_cannot_bound() {
        for v in [
            0.0,
            -0.0,
            f64::MIN_POSITIVE / 2.0,
            f64::from_bits(1),
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            -1.0,
            -f64::MIN_POSITIVE,
        ] {
            assert_eq!(ln(v), None, "{v:e}");
        }
        assert!(ln(f64::MIN_POSITIVE).is_some() && ln(f64::MAX).is_some());
    }
}
