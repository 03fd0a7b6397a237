//! Integers of 2^53 or more, which a float rounds: what the sketches promise of them holds
//! exactly (each test a promise a hostile input once broke).

use tailguard::sketch::ExponentialSketch;

/// The rank guarantee, `exact(v) - saturated <= rank(v) <= exact(u)`, for integers of
/// 2^53 or more, whose buckets are exact: the maximum 2^60 + 1 reads as the float 2^60,
/// which is not at or above it.
#[test]
fn rank_of_a_float_below_an_integer_max_that_rounds_down_to_it() {
    let mut s = ExponentialSketch::<u32, 160>::new();
    s.record_u64(1 << 60);
    s.record_u64((1 << 60) + 1);
    assert_eq!(s.rank_u64(1 << 60), 1);
    // 2^60 is an edge at every scale: exact(2^60) = 1 is the bound.
    assert_eq!(s.rank((1u64 << 60) as f64), Ok(1), "{s:?}");
}

/// "Integers exactly, in 128 bits, rounded once": three of 2^53 + 3 sum to 3 * 2^53 + 9,
/// which rounds to 3 * 2^53 + 8. The clamp into `[count * min, count * max]` computed
/// `3 * min` from the min rounded up (2^53 + 4), 3 * 2^53 + 12, above the true sum, and
/// moved the exact sum up to it.
#[test]
fn an_exact_integer_sum_is_not_moved_by_the_rounded_bounds() {
    let x = (1u64 << 53) + 3;
    let mut s = ExponentialSketch::<u32, 160>::new();
    (0..3).for_each(|_| s.record_u64(x));
    let exact = (3 * u128::from(x)) as f64;
    assert_eq!(s.sum(), exact, "{s:?}");
    assert_eq!(s.mean(), Some(x as f64));
}

/// The sum's promise for a `DDSketch` whose range reaches past 2^53: its integer sum is
/// exact and rounded once, whatever its rounded min and max.
#[test]
fn a_ddsketch_sums_integers_past_2_pow_53_exactly() {
    use tailguard::sketch::{DDSketch, IntMapping};
    let mapping = IntMapping::with_mantissa_bits(5).unwrap();
    let mut s = DDSketch::<IntMapping, 4096>::new(mapping, 1e15).unwrap();
    let x = (1u64 << 53) + 3;
    (0..3).for_each(|_| s.record_u64(x));
    assert_eq!(s.sum(), (3 * u128::from(x)) as f64, "{s:?}");
    assert_eq!(s.mean(), Some(x as f64));
}
