//! `IntMapping::index_u64` takes a 32-bit path for values below 2^32 and a 64-bit one
//! above: both must give exactly the index of the definition, for every k.

use tailguard::sketch::{IndexMapping, IntMapping};

/// The definition: (exponent << k) | (the k bits below the leading one), in u128.
fn reference(value: u64, k: u32) -> i32 {
    let e = 63 - value.leading_zeros();
    let mantissa = u128::from(value) ^ (1u128 << e);
    let top = (mantissa << k) >> e; // the k bits below the leading one
    ((e as i32) << k) | top as i32
}

fn values() -> impl Iterator<Item = u64> {
    let edges = (0..64).flat_map(|b| {
        let p = 1u64 << b;
        [p - 1, p, p + 1, p | (p >> 1), p | (p - 1)]
    });
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let random = (0..20_000).map(move |_| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x >> (x % 64) // every magnitude
    });
    edges.chain(random).chain(1..3000).filter(|&v| v > 0)
}

#[test]
fn index_u64_is_the_definition_for_every_k() {
    for k in 0..=20 {
        let m = IntMapping::with_mantissa_bits(k).unwrap();
        for v in values() {
            assert_eq!(m.index_u64(v), reference(v, k), "k = {k}, v = {v}");
            if v < 1 << 53 {
                assert_eq!(m.index_u64(v), m.index(v as f64), "k = {k}, v = {v}");
            }
        }
        assert_eq!(m.index_u64(0), i32::MIN);
    }
}
