//! The extremes an atomic sketch (and an exponential window's slot) keeps as keys: a
//! float's upper 32 bits, whose integer order is the numeric order of non-negative floats,
//! so that one `fetch_max` (or `fetch_max` of the complement, for the min) moves them; and
//! the extremes a snapshot reads from them and from the bins it read.

/// The upper 32 bits of a non-negative `f64`: integer order equals numeric order.
#[inline]
pub(crate) fn key_of_f64(v: f64) -> u32 {
    (v.to_bits() >> 32) as u32
}

/// [`key_of_f64`] of `v as f64` (rounded down), computed with integer operations only.
#[inline]
pub(crate) fn key_of_u64(v: u64) -> u32 {
    // Latencies in ns below 4.3 s fit in 32 bits: 32-bit operations (half the cost on a
    // 32-bit core), and on the record's fast path the count of leading zeros is the one
    // the mapping took (the compiler shares it).
    match u32::try_from(v) {
        Ok(v) => key_of_u32(v),
        Err(_) => key_of_wide(v),
    }
}

/// [`key_of_u64`] of a value that fits in 32 bits: exact (`v as f64` is).
#[inline]
fn key_of_u32(v: u32) -> u32 {
    if v == 0 {
        return 0;
    }
    // v > 0: lz <= 31.
    let lz = v.leading_zeros();
    // The bits below the leading one, left-aligned (the leading one shifted out): the
    // mantissa's top 32 bits, of which the key keeps 20.
    let below = (v << lz) << 1u32;
    // The biased exponent 1023 + (31 - lz), above those 20 bits.
    (1054u32.wrapping_sub(lz) << 20) | (below >> 12)
}

/// [`key_of_u64`] of a value of 2^32 or more (the mantissa's top 20 bits, rounded down).
/// [`key_of_u64`] sends it nothing smaller.
#[inline]
fn key_of_wide(v: u64) -> u32 {
    // v >= 2^32 (only such values come here): the leading one's position is 32..=63.
    let e = 63u32.wrapping_sub(v.leading_zeros());
    let top20 = (v ^ (1 << e)) >> e.wrapping_sub(20);
    // e <= 63, so the biased exponent fits its 11 bits.
    (e.wrapping_add(1023) << 20) | top20 as u32
}

/// The value a key stands for (at most one part per million below the recorded value).
pub(crate) fn value_of_key(key: u32) -> f64 {
    f64::from_bits(u64::from(key) << 32)
}

/// The max a sketch keeps for largest key `key`: the key's value (rounded down to a part
/// per million), unless that part straddles an edge of `bin` (the bin of a value) and the
/// bin above the edge holds values (`occupied`): then the largest value lies in that bin,
/// and the max is the edge, the bin's least value within the part. Either way the max is
/// never above the largest value recorded, never more than a part per million below it,
/// and in its bin, so a rank just below an edge never counts a max just past it.
pub(crate) fn max_of_key<B: PartialEq>(
    key: u32,
    bin: impl Fn(f64) -> B,
    occupied: impl Fn(&B) -> bool,
) -> f64 {
    let (down, up) = (value_of_key(key), top_value_of_key(key));
    let top = bin(up);
    if bin(down) == top || !occupied(&top) {
        return down;
    }
    // The bins are monotone in the value: bisect the key's 2^32 values for the least one in
    // the top bin (at most 32 steps, in a query, and only at an edge).
    let (mut below, mut within) = (down.to_bits(), up.to_bits());
    while below.saturating_add(1) < within {
        // below + 1 < within: no wrap.
        let mid = below.wrapping_add(within.wrapping_sub(below) >> 1);
        if bin(f64::from_bits(mid)) == top {
            within = mid;
        } else {
            below = mid;
        }
    }
    f64::from_bits(within)
}

/// The largest value of key `key` (every value of that key is at or below it); `+inf` for
/// the keys of infinity and NaN.
fn top_value_of_key(key: u32) -> f64 {
    if key >= INFINITY_KEY {
        f64::INFINITY
    } else {
        f64::from_bits(u64::from(key) << 32 | 0xffff_ffff)
    }
}

/// The key of `+inf`, above every finite value's.
const INFINITY_KEY: u32 = (f64::INFINITY.to_bits() >> 32) as u32;

/// The extremes of a snapshot, from `extremes` (read from the keys before the bins) and the
/// bins it read: `occupied`, the lowest and highest non-empty bins, and `zeros`, whether
/// the zero bin holds values. A record adds to its bin before it moves the keys, so the
/// bins may hold a value the keys do not show yet: a min or max is then brought to that
/// bin's value (`value`; within the accuracy of the value itself), and extremes not yet
/// written at all are the bins'. `bin` is the bin a value lands in.
pub(crate) fn extremes_within<B: PartialOrd + Copy>(
    extremes: Option<(f64, f64)>,
    occupied: Option<(B, B)>,
    zeros: bool,
    bin: impl Fn(f64) -> B,
    value: impl Fn(B) -> f64,
) -> Option<(f64, f64)> {
    match (extremes, occupied) {
        (Some((min, max)), Some((lo, hi))) => {
            let min = if !zeros && bin(min) > lo {
                value(lo)
            } else {
                min
            };
            let max = if bin(max) < hi { value(hi) } else { max };
            Some((min, max.max(min)))
        }
        (Some(extremes), None) => Some(extremes),
        (None, Some((lo, hi))) => Some((if zeros { 0.0 } else { value(lo) }, value(hi))),
        (None, None) => zeros.then_some((0.0, 0.0)),
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn keys_preserve_order_and_match_float_bits() {
        // Exact where `v as f64` is exact (below 2^53).
        for v in [
            0u64,
            1,
            2,
            3,
            1000,
            1 << 20,
            (1 << 20) + 1,
            123_456_789,
            (1 << 53) - 1,
        ] {
            assert_eq!(key_of_u64(v), key_of_f64(v as f64), "v={v}");
        }
        // Every bit length of the 32-bit form, with all-ones and a lone leading one.
        for e in 0..32 {
            for v in [1u32 << e, u32::MAX >> (31 - e), (1u32 << e) | 1] {
                assert_eq!(key_of_u32(v), key_of_f64(f64::from(v)), "v={v}");
            }
        }
        let mut last = 0;
        for v in (0..64).map(|s| 1u64 << s).chain([3, 5, 7, 999, 1001]) {
            let k = key_of_u64(v);
            let back = value_of_key(k);
            assert!(back <= v as f64 && back >= v as f64 * (1.0 - 1e-6), "v={v}");
            if v.is_power_of_two() {
                assert!(k > last || v == 1);
                last = k;
            }
        }
    }
}
