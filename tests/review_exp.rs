//! A hostile review of the auto-scaling exponential sketch and window: each test is a
//! promise of the docs that a hostile input once broke.

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
