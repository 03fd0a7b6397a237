//! Helpers shared by the fuzz targets.
#![allow(dead_code, unused_macros)]

use tailguard::sketch::{Counter, DDSketch, ExponentialSketch, IndexMapping};

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

/// What every sketch answers, whatever it holds: nothing when empty, else quantiles that
/// rise from its exact min (`q = 0`) to its exact max (`q = 1`).
pub fn assert_quantiles_rise<M: IndexMapping, const N: usize>(s: &DDSketch<M, N>) {
    let (Some(min), Some(max)) = (s.min(), s.max()) else {
        assert!(s.is_empty() && s.quantile(0.5).unwrap().is_none());
        return;
    };
    assert!(0.0 <= min && min <= max, "min {min} max {max}");
    let mut last = min;
    for q in [0.0, 0.01, 0.25, 0.5, 0.9, 0.99, 1.0] {
        let v = s.quantile(q).unwrap().expect("not empty");
        assert!(
            min <= v && v <= max && v >= last,
            "q={q}: {v} after {last} in [{min}, {max}]"
        );
        last = v;
    }
    assert_eq!(s.quantile(0.0).unwrap(), Some(min));
    assert_eq!(s.quantile(1.0).unwrap(), Some(max));
}

/// Runs `$check(empty_sketch, message, convention)` on a sketch and convention picked by
/// `$selector` (mapping, accuracy, range): the `decode` and `rebin` targets pick alike, so
/// their seeds serve both. A macro: `$check` is generic over the mapping and the bin count.
macro_rules! with_selected_sketch {
    ($selector:expr, $message:expr, $check:ident) => {{
        use tailguard::proto::IndexConvention;
        use tailguard::sketch::{CubicMapping, DDSketch, IntMapping, LogMapping};
        let (selector, message): (u8, &[u8]) = ($selector, $message);
        let convention = if selector & 1 == 0 {
            IndexConvention::GoJava
        } else {
            IndexConvention::Python
        };
        match (selector >> 1) % 4 {
            0 => $check(
                DDSketch::<LogMapping, 1024>::with_relative_accuracy(0.01, 1.0).unwrap(),
                message,
                convention,
            ),
            1 => $check(
                DDSketch::<CubicMapping, 1024>::with_relative_accuracy(0.01, 1.0).unwrap(),
                message,
                convention,
            ),
            2 => $check(
                DDSketch::<IntMapping, 2048>::with_relative_accuracy(0.01, 1.0).unwrap(),
                message,
                convention,
            ),
            // A narrow range: most bins land outside it.
            _ => $check(
                DDSketch::<LogMapping, 64>::with_relative_accuracy(0.02, 1.0).unwrap(),
                message,
                convention,
            ),
        }
    }};
}
#[allow(unused_imports)]
pub(crate) use with_selected_sketch;

/// Decodes with `$decode` (a function of the target sketch returning the decoder's
/// result) into `$empty` holding values already ([`holding_values`]): all or nothing. A
/// refused message leaves the sketch unchanged and its error displays; a decoded one grows
/// the counters by what its report says ([`assert_report_adds_up`]). Gives
/// `Ok((before, target, report))` or `Err((before, error))`. A macro: the decoders'
/// reports are different types with the same counters.
macro_rules! decode_all_or_nothing {
    ($empty:expr, $decode:expr) => {{
        let mut target = crate::common::holding_values($empty);
        let before = target.clone();
        match $decode(&mut target) {
            Err(e) => {
                assert!(target == before, "{e} changed the sketch");
                let _ = e.to_string();
                Err((before, e))
            }
            Ok(report) => {
                let r = &report;
                crate::common::assert_report_adds_up(
                    &before,
                    &target,
                    (r.added, r.saturated, r.below_range, r.above_range),
                );
                Ok((before, target, report))
            }
        }
    }};
}
#[allow(unused_imports)]
pub(crate) use decode_all_or_nothing;

/// `empty` holding two values already, so that a decode into it shows all or nothing.
pub fn holding_values<M: IndexMapping, const N: usize>(empty: &DDSketch<M, N>) -> DDSketch<M, N> {
    let mut s = empty.clone();
    s.record(3.0).unwrap();
    s.record_u64(70);
    s
}

/// What every decode report promises of the sketch it went into: the counters grew by
/// what it says (saturating: a message can carry counts up to 1.8e308), and the values
/// out of range are among those added.
pub fn assert_report_adds_up<M: IndexMapping, const N: usize>(
    before: &DDSketch<M, N>,
    after: &DDSketch<M, N>,
    (added, saturated, below_range, above_range): (u64, u64, u64, u64),
) {
    assert_eq!(after.count(), before.count().saturating_add(added));
    assert_eq!(
        after.saturated(),
        before.saturated().saturating_add(saturated)
    );
    assert_eq!(
        after.clamped(),
        before.clamped().saturating_add(above_range)
    );
    assert!(below_range.saturating_add(above_range) <= added);
}

/// What every auto-scaling sketch keeps, whatever was done to it: its count is its zero
/// count plus its buckets (unless saturated at `u64::MAX`), its first and last buckets
/// are occupied, its scale is one the crate offers, its quantiles rise within
/// [min, max] and reach both, and its sum is one `count` values in [min, max] can have.
pub fn assert_exponential_invariants<C: Counter, const B: usize>(s: &ExponentialSketch<C, B>) {
    let counts: Vec<u64> = s.bucket_counts().collect();
    assert!(counts.len() <= B);
    let total = u128::from(s.zero_count()) + counts.iter().map(|&c| u128::from(c)).sum::<u128>();
    if s.count() < u64::MAX {
        assert_eq!(u128::from(s.count()), total, "{s:?}");
    }
    assert!(
        counts.first() != Some(&0) && counts.last() != Some(&0),
        "{s:?}"
    );
    assert!((-10..=8).contains(&s.scale()), "{s:?}");
    match (s.min(), s.max()) {
        (Some(min), Some(max)) => {
            assert!(min <= max && min >= 0.0, "{s:?}");
            let mut last = min;
            for q in [0.0, 0.01, 0.25, 0.5, 0.75, 0.99, 1.0] {
                let v = s.quantile(q).unwrap().unwrap();
                assert!(min <= v && v <= max && v >= last, "q={q}: {v} {s:?}");
                last = v;
            }
            assert_eq!(s.quantile(0.0).unwrap(), Some(min));
            assert_eq!(s.quantile(1.0).unwrap(), Some(max));
            // Saturation's estimates taken out of the sums are clamped back in, to the
            // documented bounds: [count * min, count * max] widened by a part in 10^12 (a
            // float sum's rounding, and rounded min and max of integers from 2^53, stay).
            let n = s.count() as f64;
            let (low, high) = (n * min * (1.0 - 1e-12), n * max * (1.0 + 1e-12));
            assert!(s.sum() >= low && s.sum() <= high, "sum: {s:?}");
        }
        _ => {
            assert!(s.is_empty() && s.quantile(0.5).unwrap().is_none(), "{s:?}");
            assert!(counts.iter().all(|&c| c == 0));
        }
    }
}
