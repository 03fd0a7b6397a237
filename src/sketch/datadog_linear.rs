//! DataDog's `LINEAR` keys for [`IntMapping`](super::IntMapping), replayed with integers.
//!
//! DataDog's libraries compute `key = approx_log(v) * multiplier + indexOffset` in `f64`,
//! then floor it their way (`(int) x` for `x >= 0`, `(int) x - 1` below, so a negative
//! whole number goes one lower). For `gamma = 2^(2^-k)` the multiplier should be `2^k`, but
//! both derive it from gamma in floating point (Go: `1 / math.Log2(gamma)`; Java:
//! `Math.log(2) / Math.log1p(gamma - 1)`) and land a few units in the last place off, each
//! its own way. So a value exactly on a bin edge (every integer below `2^(k+1)`, every power
//! of two, many whole milliseconds), or within a hair of one, can land one bin lower or
//! higher than the exact bin.
//!
//! [`near_edge`] says whether a value is close enough to an edge for that to happen (a
//! bound on both libraries' error: everything else is in its exact bin in both), and
//! [`key`] replays both libraries' arithmetic exactly (two roundings to nearest, ties to
//! even, with `indexOffset = 2^k`, which is what tailguard writes) on integers, so the
//! integer record path stays free of floats. tailguard takes the bin both libraries agree
//! on; where they disagree with each other it keeps the exact bin.

use super::mapping::{round_low_bits, round_low_bits_u64};

/// `2^(2^-k)` for `k` in `0..=20`, as DataDog writes it: the bit patterns Go's `math.Pow`
/// and Java's `Math.pow` return (identical for every `k`). A table, so the mapping never
/// links an `exp2`.
pub(super) const GAMMA_BITS: [u64; 21] = [
    0x4000000000000000,
    0x3ff6a09e667f3bcd,
    0x3ff306fe0a31b715,
    0x3ff172b83c7d517b,
    0x3ff0b5586cf9890f,
    0x3ff059b0d3158574,
    0x3ff02c9a3e778061,
    0x3ff0163da9fb3335,
    0x3ff00b1afa5abcbf,
    0x3ff0058c86da1c0a,
    0x3ff002c605e2e8cf,
    0x3ff00162f3904052,
    0x3ff000b175effdc7,
    0x3ff00058ba01fba0,
    0x3ff0002c5cc37da9,
    0x3ff000162e525ee0,
    0x3ff0000b17255776,
    0x3ff000058b91b5bd,
    0x3ff00002c5c89d5f,
    0x3ff0000162e43f50,
    0x3ff00000b1721bd0,
];

/// Go's multiplier for `GAMMA_BITS[k]` is `2^k + GO_ERROR[k] * 2^(k - 53)`: what
/// `1 / math.Log2(gamma)` returns in sketches-go (Go 1.19, amd64).
const GO_ERROR: [i64; 21] = [
    0, -2, 4, -8, 16, 0, -64, 128, -256, 0, -1024, 0, 0, -8192, 16384, 0, -131072, -262144,
    -262144, -524288, -1048576,
];

/// Java's multiplier for `GAMMA_BITS[k]` is `2^k + JAVA_ERROR[k] * 2^(k - 53)`: what
/// `Math.log(2) / Math.log1p(gamma - 1)` returns in sketches-java 0.8.3 (OpenJDK 17).
const JAVA_ERROR: [i64; 21] = [
    0, -1, 2, -3, 18, 20, -13, 158, -121, -127, -681, -137, 4968, -9709, 13500, 31192, -47088,
    -149377, -169033, -738280, -642744,
];

/// How close a value must be to a bin edge for Go or Java to put it in another bin, by
/// `k`: in units of `2^-52` of `approx_log` (a bin is `2^(52 - k)` units). Both libraries'
/// error is at most `|n| |error| 2^-53 + (|n| + 2^k) 2^-52` bins with `|n| < 2^(k + 11)`,
/// which is below `2^10 (|error| + 3)` units whatever `k`; the band is twice that.
const BAND: [i64; 21] = bands();

/// [`BAND`] in units of `2^-32` of a bin (what the 32-bit record path has), rounded up,
/// and the largest `(inside + band) mod 2^32` of a value near an edge (`2 band - 1`, or
/// every value when that passes `u32::MAX`), by `k`. 32 entries, so that `k & 31` needs no
/// bounds check; those past 20 are never used.
pub(super) const NEAR_U32: [(u32, u32); 32] = near_u32();

// Indexing in these two is evaluated at compile time: out of bounds would not compile.
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
const fn bands() -> [i64; 21] {
    let mut out = [0; 21];
    let mut k = 0;
    while k < 21 {
        let (go, java) = (GO_ERROR[k].abs(), JAVA_ERROR[k].abs());
        let worst = if go > java { go } else { java };
        out[k] = (worst + 3) * 2048;
        k += 1;
    }
    out
}

#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
const fn near_u32() -> [(u32, u32); 32] {
    let mut out = [(0, 0); 32];
    let mut k = 0;
    while k < 21 {
        let per_unit = 1i64 << (20 - k); // 2^(52 - k) units per bin / 2^32
        let band = (BAND[k] + per_unit - 1) / per_unit; // < 2^32
        let last = 2 * band - 1;
        out[k] = (
            band as u32,
            if last > u32::MAX as i64 {
                u32::MAX
            } else {
                last as u32
            },
        );
        k += 1;
    }
    out
}

/// Whether DataDog's keys are the exact bins for every integer value below 2^47 at this
/// `k` (`k <= 20`), so that such values need no replay: when Go's multiplier is exactly
/// `2^k` (`GO_ERROR[k] == 0`: k = 0, 5, 9, 11, 12, 15). For an integer below 2^47 (about 39
/// hours in nanoseconds) `x` has at most `e + 6 <= 52` significant bits (`e` the leading
/// one's position) and trailing zeros from bit `52 - e`, so Go's `x * 2^k` and its sum with
/// `2^k` are both exact in an `f64`: Go's key is the exact bin. Where Java's differs, the
/// libraries disagree and [`key`] takes the exact bin too; where it agrees, it is the
/// exact bin. (1,726 of the 2^32 32-bit values do differ at k = 6, where Go's multiplier is
/// 64 units in the last place low.) Tested on every bin edge below 2^32 and around every
/// edge up to 2^47.
pub(super) const fn exact_below_2_47(k: u32) -> bool {
    // A bit per k: the record path tests one bit rather than reading two tables.
    (EXACT_BELOW_2_47 >> (k & 31)) & 1 != 0
}

/// [`exact_below_2_47`] for every `k`, as bits.
const EXACT_BELOW_2_47: u32 = k_mask(false);

/// The `k <= 20` whose Go multiplier is exact (and, with `java_too`, whose Java multiplier
/// is not below it), as bits.
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)] // compile time, k <= 20
const fn k_mask(java_too: bool) -> u32 {
    let mut mask = 0;
    let mut k = 0;
    while k <= 20 {
        if GO_ERROR[k] == 0 && (!java_too || JAVA_ERROR[k] >= 0) {
            mask |= 1 << k;
        }
        k += 1;
    }
    mask
}

/// Whether `x` (an `approx_log`, times `2^52`) is within [`BAND`] of a bin edge.
#[inline]
pub(super) fn near_edge(k: u32, x: i64) -> bool {
    let bin = 1i64 << 52u32.wrapping_sub(k); // k <= 20
    let band = BAND.get(k as usize).copied().unwrap_or(0);
    // x mod bin, moved up by the band: the bin's start and its end map below two bands.
    x.wrapping_add(band) & bin.wrapping_sub(1) < band.saturating_mul(2)
}

/// The index (key minus `2^k`) DataDog's Go and Java libraries both give the value whose
/// `approx_log` is `x / 2^52`, or the exact index `floor(x / 2^(52 - k))` where they
/// disagree. `k <= 20`; `|x| < 2^63`.
#[inline(never)] // the cold path of the record functions: only values near an edge come here
pub(super) fn key(k: u32, x: i64) -> i32 {
    let exact = (x >> 52u32.wrapping_sub(k)) as i32; // |x| <= 1025 * 2^52: fits
    if let Ok(x) = u64::try_from(x) {
        if go_decides(k) {
            return replay_exact_multiplier(k, x);
        }
    }
    match (GO_ERROR.get(k as usize), JAVA_ERROR.get(k as usize)) {
        (Some(&go), Some(&java)) => {
            let go = replay(k, x, go);
            if go == replay(k, x, java) {
                go
            } else {
                exact
            }
        }
        _ => exact,
    }
}

/// Whether, for `x >= 0` (values of 1 and more), Go's key is the answer at this `k`: when
/// Go's multiplier is exactly `2^k` and Java's is not below it (k = 0, 5, 12, 15). Go's key
/// is then the exact bin or the one above (its roundings to nearest can only carry a value
/// up onto an edge), and Java's, from a product no smaller, rounded and floored the same
/// monotone way, is at least Go's and at most one above the exact bin: either both give
/// the bin above, or Go gives the exact bin, which [`key`] takes either way.
pub(super) const fn go_decides(k: u32) -> bool {
    (GO_DECIDES >> (k & 31)) & 1 != 0
}

/// [`go_decides`] for every `k`, as bits.
const GO_DECIDES: u32 = k_mask(true);

/// [`replay`] with `error = 0` and `x >= 0`, in 64 bits (cheap on a 32-bit core, where the
/// 128-bit replay costs hundreds of instructions): `x * 2^k` is `x` rounded to a double
/// (times a power of two), then `2^k` is added (`2^52` in units of `x`) and the sum rounded
/// again; the key is its whole part. `x < 1026 * 2^52`: nothing overflows.
#[inline]
pub(super) fn replay_exact_multiplier(k: u32, x: u64) -> i32 {
    let sum = to_double_u64(to_double_u64(x).wrapping_add(1 << 52));
    // The whole part minus 2^k: |key - 2^k| <= 1025 * 2^20 + 1.
    ((sum >> 52u32.wrapping_sub(k)) as i64).wrapping_sub(1i64 << k) as i32
}

/// `v` rounded to 53 significant bits, to nearest, ties to even (`v < 2^63`).
#[inline]
fn to_double_u64(v: u64) -> u64 {
    let bits = 64u32.wrapping_sub(v.leading_zeros());
    if bits <= 53 {
        return v;
    }
    round_low_bits_u64(v, bits.wrapping_sub(53))
}

/// One library's index of `x / 2^52`, whose multiplier is `2^k + error * 2^(k - 53)`:
/// `x * multiplier` rounded to a double, plus `2^k` rounded to a double, floored the
/// DataDog way, minus `2^k`. All in units of `2^(k - 105)`, where every quantity is an
/// integer.
fn replay(k: u32, x: i64, error: i64) -> i32 {
    // multiplier = (2^53 + error) * 2^(k - 53); |error| < 2^21.
    let multiplier = (1i128 << 53).wrapping_add(i128::from(error));
    // |x| < 2^63 and multiplier < 2^54: the product fits in 117 bits.
    let product = to_double(i128::from(x).wrapping_mul(multiplier));
    let shift = 105u32.wrapping_sub(k); // units of 2^(k - 105) per whole number
    let sum = to_double(product.wrapping_add(1i128 << 105)); // + 2^k
    let key = if sum >= 0 {
        sum >> shift
    } else {
        // DataDog's floor: truncate toward zero, then one lower.
        sum.wrapping_neg()
            .wrapping_shr(shift)
            .wrapping_neg()
            .wrapping_sub(1)
    };
    // |key - 2^k| <= 1025 * 2^20 + 1.
    key.wrapping_sub(1i128 << k) as i32
}

/// `v` rounded to 53 significant bits, to nearest, ties to even: what storing it in an
/// `f64` does (the units stay the same; no value here is near the f64 range's ends).
fn to_double(v: i128) -> i128 {
    let magnitude = v.unsigned_abs();
    let bits = 128u32.wrapping_sub(magnitude.leading_zeros());
    if bits <= 53 {
        return v;
    }
    let rounded = round_low_bits(magnitude, bits.wrapping_sub(53));
    // rounded <= 2^118: fits in i128.
    if v < 0 {
        (rounded as i128).wrapping_neg()
    } else {
        rounded as i128
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One library's index of `approx_log = x / 2^52`, computed as the library does: in
    /// f64.
    fn in_floats(k: u32, x: i64, error: i64) -> i64 {
        let per_octave = (1u64 << k) as f64;
        let m = per_octave + error as f64 * libm::ldexp(1.0, k as i32 - 53);
        let approx_log = x as f64 / libm::ldexp(1.0, 52);
        assert_eq!(
            (approx_log * libm::ldexp(1.0, 52)) as i64,
            x,
            "x must be a double"
        );
        let z = approx_log * m + per_octave;
        let key = if z >= 0.0 { z as i64 } else { z as i64 - 1 };
        key - (1i64 << k)
    }

    /// `approx_log(v) * 2^52` of an integer `0 < v < 2^53`, exactly.
    fn x_of(v: u64) -> i64 {
        let e = 63 - v.leading_zeros();
        ((i64::from(e)) << 52) | (((v ^ (1u64 << e)) << (52 - e)) as i64)
    }

    /// What both libraries do with `x`, computed in floats: their common index, or the
    /// exact one where they disagree (what `key` replays).
    fn datadog(k: u32, x: i64) -> i64 {
        let [go, java] = errors(k).map(|error| in_floats(k, x, error));
        if go == java {
            go
        } else {
            x >> (52 - k)
        }
    }

    #[test]
    fn integers_below_2_47_land_in_their_exact_bins_where_go_is_exact() {
        let exact_ks: std::vec::Vec<u32> = (0..=20).filter(|&k| exact_below_2_47(k)).collect();
        assert_eq!(exact_ks, [0, 5, 9, 11, 12, 15]);
        for &k in &exact_ks {
            let m = super::super::IntMapping::with_mantissa_bits(k).unwrap();
            // Every bin edge of every octave below 2^47 (a stride through the octaves'
            // edges above k = 11, to keep the test short), and its neighbours.
            let stride = if k > 11 { 37 } else { 1 };
            for e in 0..47u32 {
                let octave = 1u64 << e;
                let mut j = 0u64;
                while j < 1u64 << k {
                    // The edge `2^e (1 + j / 2^k)`, rounded up to an integer.
                    let edge = octave + (((j << e) + (1u64 << k) - 1) >> k);
                    for v in [edge - 1, edge, edge + 1, edge + 2] {
                        if v == 0 || v >= 1 << 47 {
                            continue;
                        }
                        let x = x_of(v);
                        let exact = x >> (52 - k);
                        assert_eq!(datadog(k, x), exact, "k={k} v={v}");
                        assert_eq!(
                            i64::from(super::super::IndexMapping::index_u64(&m, v)),
                            exact,
                            "k={k} v={v}"
                        );
                    }
                    j += stride;
                }
            }
        }
        // Where Go is not exact, integers do leave their exact bins (the rule is not
        // vacuous): at k = 6, some below 2^20 already (1,726 of the 32-bit values).
        let k = 6;
        let moved = (1..1u64 << 20).filter(|&v| datadog(k, x_of(v)) != x_of(v) >> (52 - k));
        assert!(moved.count() > 0);
    }

    fn errors(k: u32) -> [i64; 2] {
        [GO_ERROR[k as usize], JAVA_ERROR[k as usize]]
    }

    #[test]
    fn the_multipliers_are_representable_and_the_gammas_are_two_to_the_two_to_minus_k() {
        for k in 0..=20u32 {
            for error in errors(k) {
                let unit = libm::ldexp(1.0, k as i32 - 53);
                let m = (1u64 << k) as f64 + error as f64 * unit;
                assert_eq!((m - (1u64 << k) as f64) / unit, error as f64, "k={k}");
            }
            let gamma = f64::from_bits(GAMMA_BITS[k as usize]);
            let want = libm::exp2(1.0 / (1u64 << k) as f64);
            assert!((gamma - want).abs() <= f64::EPSILON * want, "k={k}");
        }
    }

    /// Edges, values a few units from an edge, values at the band's border, and random
    /// values, over the exponents a sketch sees.
    fn xs(k: u32, rng: &mut u64) -> std::vec::Vec<i64> {
        let bin = 1i64 << (52 - k);
        let band = BAND[k as usize];
        let mut out = std::vec::Vec::new();
        let per_octave = 1i64 << k;
        let step = (per_octave >> 5).max(1); // every edge for k <= 5, 32 per octave above
        for e in -70i64..70 {
            let mut top = 0;
            while top < per_octave {
                let edge = (e * per_octave + top) * bin;
                for d in [0, 1, -1, 2, -2, 7, -7, band, -band, band + 1, -band - 1] {
                    out.push(edge + d);
                }
                // Values between the band and a bin's middle.
                out.push(edge + 3 * band);
                *rng ^= *rng << 13;
                *rng ^= *rng >> 7;
                *rng ^= *rng << 17;
                out.push(edge + (*rng % bin as u64) as i64);
                top += step;
            }
        }
        // Only doubles are approx_logs: the nearest double to each.
        out.into_iter().map(|x| x as f64 as i64).collect()
    }

    #[test]
    fn the_integer_replay_is_the_float_computation() {
        let mut rng = 0x9e37_79b9_7f4a_7c15u64;
        for k in 0..=20u32 {
            for x in xs(k, &mut rng) {
                for error in errors(k) {
                    assert_eq!(
                        i64::from(replay(k, x, error)),
                        in_floats(k, x, error),
                        "k={k} x={x} error={error}"
                    );
                }
            }
        }
    }

    #[test]
    fn away_from_edges_both_libraries_give_the_exact_bin() {
        let mut rng = 0x1234_5678_9abc_def1u64;
        for k in 0..=20u32 {
            for x in xs(k, &mut rng) {
                if !near_edge(k, x) {
                    let exact = x >> (52 - k);
                    for error in errors(k) {
                        assert_eq!(in_floats(k, x, error), exact, "k={k} x={x}");
                    }
                }
            }
        }
    }

    #[test]
    fn the_key_is_the_libraries_when_they_agree_and_exact_otherwise() {
        let mut rng = 0x0bad_cafe_f00d_d00du64;
        for k in 0..=20u32 {
            for x in xs(k, &mut rng) {
                let [go, java] = errors(k).map(|e| in_floats(k, x, e));
                let want = if go == java { go } else { x >> (52 - k) };
                assert_eq!(i64::from(key(k, x)), want, "k={k} x={x}");
            }
        }
    }
}
