//! Integers of 2^53 or more, which a float rounds: what the sketches promise of them holds
//! exactly (each test a promise a hostile input once broke).

use tailguard::sketch::{presets, DDSketch, ExponentialSketch, IntMapping, LogMapping};

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

/// A `DDSketch`'s rank ends are exact for integers of 2^53 or more too: a minimum of
/// 2^53 + 1 reads as the float 2^53 through `min` and `max`, yet 2^53 is below it, so
/// `rank(2^53)` is 0. It was the count: the ends compared `v` with the rounded max.
#[test]
fn a_ddsketch_ranks_a_float_below_an_integer_min_that_rounds_down_to_it_as_zero() {
    fn check<M: tailguard::sketch::IndexMapping, const N: usize>(mut s: DDSketch<M, N>) {
        for x in [(1u64 << 53) + 1, (1 << 60) + 38] {
            s.clear();
            s.record_u64_n(x, 3);
            let below = x as f64; // rounds down, below x
            assert!((below as u128) < u128::from(x));
            assert_eq!(s.rank(below), Ok(0), "{x} in {:?}", s.mapping());
            assert_eq!(s.fraction_at_or_below(below), Ok(Some(0.0)));
            assert_eq!(s.rank_u64(x - 1), 0);
            assert_eq!(s.rank(below.next_up()), Ok(3)); // above x: every value
            assert_eq!(s.rank_u64(x), 3);
            // Below a float minimum too.
            s.record(1.5).unwrap();
            assert_eq!(s.rank(1.25), Ok(0), "{x}");
        }
    }
    check(DDSketch::<IntMapping, 4096>::new(IntMapping::K6, 1.0).unwrap());
    check(DDSketch::<LogMapping, 4096>::with_relative_accuracy(0.01, 1.0).unwrap());
    check(presets::log_latency()); // above its range: clamped into the top bin
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
