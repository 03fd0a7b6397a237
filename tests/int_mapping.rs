//! `IntMapping::index_u64` takes a 32-bit path for values below 2^32 and a 64-bit one
//! above, and `IntMapping::index` reads an `f64`: all three must give, for every k, the bin
//! DataDog's Go and Java libraries give the value (computed here in f64, exactly as those
//! libraries compute it, from the multipliers they derive from gamma), or the exact bin
//! where the two libraries disagree.

use tailguard::sketch::{IndexMapping, IntMapping};
use tailguard_support::Xorshift64;

/// `1 / math.Log2(gamma)` in sketches-go (Go 1.19, amd64) for gamma = 2^(2^-k), k = 0..=20:
/// printed by the library's own code (tests/interop/datadog/README.md says how).
const GO_MULTIPLIERS: [u64; 21] = [
    0x3ff0000000000000,
    0x3ffffffffffffffe,
    0x4010000000000002,
    0x401ffffffffffff8,
    0x4030000000000008,
    0x4040000000000000,
    0x404fffffffffffc0,
    0x4060000000000040,
    0x406fffffffffff00,
    0x4080000000000000,
    0x408ffffffffffc00,
    0x40a0000000000000,
    0x40b0000000000000,
    0x40bfffffffffe000,
    0x40d0000000002000,
    0x40e0000000000000,
    0x40effffffffe0000,
    0x40fffffffffc0000,
    0x410ffffffffc0000,
    0x411ffffffff80000,
    0x412ffffffff00000,
];

/// `Math.log(2) / Math.log1p(gamma - 1)` in sketches-java 0.8.3 (OpenJDK 17), same gammas.
const JAVA_MULTIPLIERS: [u64; 21] = [
    0x3ff0000000000000,
    0x3fffffffffffffff,
    0x4010000000000001,
    0x401ffffffffffffd,
    0x4030000000000009,
    0x404000000000000a,
    0x404ffffffffffff3,
    0x406000000000004f,
    0x406fffffffffff87,
    0x407fffffffffff81,
    0x408ffffffffffd57,
    0x409fffffffffff77,
    0x40b00000000009b4,
    0x40bfffffffffda13,
    0x40d0000000001a5e,
    0x40e0000000003cec,
    0x40efffffffff4810,
    0x40fffffffffdb87f,
    0x410ffffffffd6bb7,
    0x411ffffffff4bc18,
    0x412ffffffff63148,
];

/// A library's key minus 2^k (tailguard writes `indexOffset = 2^k`), as the library
/// computes it.
fn library_index(value: f64, k: u32, multiplier: u64) -> i64 {
    let bits = value.to_bits();
    let exponent = ((bits >> 52) & 0x7ff) as i64 - 1023;
    let significand = f64::from_bits((bits & ((1 << 52) - 1)) | (1023 << 52));
    let approx_log = (exponent as f64 + significand) - 1.0;
    let z = approx_log * f64::from_bits(multiplier) + (1u64 << k) as f64;
    let key = if z >= 0.0 { z as i64 } else { z as i64 - 1 };
    key - (1i64 << k)
}

/// The bin of the libraries' `approx_log`, floored exactly: the bin tailguard keeps where
/// Go and Java disagree. (From 2^47 up, `approx_log` itself rounds away low bits.)
fn exact(v: f64, k: u32) -> i64 {
    let bits = v.to_bits();
    let exponent = ((bits >> 52) & 0x7ff) as i64 - 1023;
    let significand = f64::from_bits((bits & ((1 << 52) - 1)) | (1023 << 52));
    let approx_log = (exponent as f64 + significand) - 1.0;
    (approx_log * (1u64 << k) as f64).floor() as i64
}

/// The bin tailguard must give.
fn reference(v: f64, k: u32) -> i64 {
    let go = library_index(v, k, GO_MULTIPLIERS[k as usize]);
    let java = library_index(v, k, JAVA_MULTIPLIERS[k as usize]);
    if go == java {
        go
    } else {
        exact(v, k)
    }
}

fn values() -> impl Iterator<Item = u64> {
    let edges = (0..64).flat_map(|b| {
        let p = 1u64 << b;
        [p - 1, p, p + 1, p | (p >> 1), p | (p - 1)]
    });
    let mut rng = Xorshift64(0x9e37_79b9_7f4a_7c15);
    let random = (0..20_000).map(move |_| {
        let x = rng.next_u64();
        x >> (x % 64) // every magnitude
    });
    // Above 2^63 both roundings matter: the low 11 bits just above half carry into bits
    // 11..16, which become exactly half of the second rounding's unit; ties to even then
    // rounds up through a run of ones onto a bin edge (for the `k` whose run it is). A
    // single rounding, or truncation at either step, lands a bin lower.
    let double_roundings = (0..=20u32).map(|k| {
        let ones = ((1u64 << (62 - k - 17 + 1)) - 1) << 17; // bits 17..=62-k
        (1u64 << 63) | ones | (0b01_1111 << 11) | 0b100_0000_0001
    });
    // Just below a bin edge from 2^33 up, by the distances at which the two roundings
    // start to carry a value onto the edge: 16.5 and 32.5 units of the second rounding's
    // 2^-47 (2^-46), in the value's units, and a unit either side; whole small distances
    // below 2^53.
    let below_edges = (0..=20u32).flat_map(|k| {
        (33..=63u32).flat_map(move |e| {
            let offsets: Vec<u64> = if e > 52 {
                let s = e - 52;
                let m16 = (16u64 << s) | (1 << (s - 1));
                let m32 = (32u64 << s) | (1 << (s - 1));
                [m16, m32, 16 << s, 32 << s]
                    .into_iter()
                    .flat_map(|m| [m - 1, m, m + 1])
                    .collect()
            } else {
                (0..=40).collect()
            };
            [1u64, (1 << k) - 1]
                .into_iter()
                .filter(|&j| j > 0)
                // The edge j bins into the octave (the next octave's start overflows at
                // k = 0 from 2^63: left out).
                .filter_map(move |j| (1u64 << e).checked_add(j << (e - k)))
                .flat_map(move |edge| offsets.clone().into_iter().map(move |d| edge - d))
        })
    });
    edges
        .chain(random)
        .chain(1..3000)
        .chain(double_roundings)
        .chain(below_edges)
        .filter(|&v| v > 0)
}

#[test]
fn index_u64_is_where_go_and_java_put_the_value_for_every_k() {
    for k in 0..=20 {
        let m = IntMapping::with_mantissa_bits(k).unwrap();
        for v in values() {
            let want = reference(v as f64, k);
            assert_eq!(i64::from(m.index_u64(v)), want, "k = {k}, v = {v}");
            assert_eq!(i64::from(m.index(v as f64)), want, "k = {k}, v = {v}");
        }
        assert_eq!(m.index_u64(0), i32::MIN);
    }
}

#[test]
fn float_values_land_where_go_and_java_put_them() {
    let mut rng = Xorshift64(0x0123_4567_89ab_cdef);
    for k in 0..=20 {
        let m = IntMapping::with_mantissa_bits(k).unwrap();
        for _ in 0..20_000 {
            let x = rng.next_u64();
            // Positive normal doubles from 2^-60 to 2^60, and their neighbours.
            let v = f64::from_bits((x % (120u64 << 52)) + (963u64 << 52));
            for v in [
                v,
                f64::from_bits(v.to_bits() + 1),
                f64::from_bits(v.to_bits() - 1),
            ] {
                let want = reference(v, k);
                assert_eq!(i64::from(m.index(v)), want, "k = {k}, v = {v:e}");
            }
        }
    }
}
