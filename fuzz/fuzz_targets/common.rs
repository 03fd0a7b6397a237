//! Helpers shared by the fuzz targets.
#![allow(dead_code)]

use tailguard::sketch::{DDSketch, IndexMapping};

/// A value to record, drawn from the fuzzer's bytes.
#[derive(Debug, Clone, Copy)]
pub enum Value {
    F64(f64),
    U64(u64),
}

/// Values from 9-byte chunks: a kind byte, then 8 bytes. Kinds mix raw float bits (NaN,
/// infinities, subnormals, negatives, huge) with values spread over a realistic range
/// and integers for the integer record path.
pub fn values(bytes: &[u8]) -> Vec<Value> {
    bytes
        .chunks_exact(9)
        .map(|c| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&c[1..]);
            let bits = u64::from_le_bytes(b);
            match c[0] % 5 {
                0 => Value::F64(f64::from_bits(bits)),
                // 2^-20 .. 2^44, any mantissa.
                1 | 2 => {
                    let exponent = 1003 + (bits >> 52) % 64;
                    Value::F64(f64::from_bits((bits & ((1 << 52) - 1)) | (exponent << 52)))
                }
                3 => Value::U64(bits >> (bits % 64)),
                _ => Value::F64(f64::from(c[0] / 5)), // small integers and zero: many ties
            }
        })
        .collect()
}

/// Records `v`; returns it as an `f64` when accepted.
pub fn record<M: IndexMapping, const N: usize>(s: &mut DDSketch<M, N>, v: Value) -> Option<f64> {
    match v {
        Value::F64(x) => {
            let ok = s.record(x).is_ok();
            assert_eq!(ok, !(x.is_nan() || x < 0.0), "record({x:?})");
            ok.then_some(x)
        }
        Value::U64(n) => {
            s.record_u64(n);
            Some(n as f64)
        }
    }
}

/// Same bins and counters (sum only up to float rounding: addition order differs).
pub fn assert_same<M: IndexMapping, const N: usize>(a: &DDSketch<M, N>, b: &DDSketch<M, N>) {
    assert!(a.bins().eq(b.bins()), "bins differ");
    assert_eq!(a.zero_count(), b.zero_count());
    assert_eq!(a.count(), b.count());
    assert_eq!(a.clamped(), b.clamped());
    assert_eq!(a.saturated(), b.saturated());
    assert_eq!(a.min(), b.min());
    assert_eq!(a.max(), b.max());
    let (x, y) = (a.sum(), b.sum());
    assert!(
        x == y || (x - y).abs() <= 1e-9 * x.abs().max(y.abs()),
        "sums {x} vs {y}"
    );
}
