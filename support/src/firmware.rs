//! The firmware's known workloads and what is read back from them: one source for
//! firmware/, which runs them on the microcontroller, and for the host test
//! tests/firmware_expected.rs, which runs them on the host and keeps
//! firmware/src/expected.rs current.
//!
//! Everything here is integer arithmetic or exactly rounded IEEE arithmetic, so host and
//! target must agree to the bit.

use core::time::Duration;
use tailguard::sketch::{DDSketch, IndexMapping};

use crate::Xorshift32;

/// How many latencies the main workload records.
pub const LATENCIES: u32 = 4_000;

/// The quantiles read back from every sketch.
pub const QS: [f64; 9] = [0.0, 0.01, 0.1, 0.5, 0.9, 0.95, 0.99, 0.999, 1.0];

/// What a check reads back from a sketch: its counters and its quantiles (as bits, so
/// equality is exact; `u64::MAX` for "no answer").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Summary {
    /// [`DDSketch::count`].
    pub count: u64,
    /// [`DDSketch::zero_count`].
    pub zero_count: u32,
    /// [`DDSketch::clamped`].
    pub clamped: u64,
    /// [`DDSketch::saturated`].
    pub saturated: u64,
    /// The bits of the answer to each of [`QS`].
    pub quantile_bits: [u64; QS.len()],
}

/// What [`Summary`] says of `s`.
pub fn summarize<M: IndexMapping, const N: usize>(s: &DDSketch<M, N>) -> Summary {
    let mut quantile_bits = [u64::MAX; QS.len()];
    for (bits, &q) in quantile_bits.iter_mut().zip(QS.iter()) {
        if let Ok(Some(v)) = s.quantile(q) {
            *bits = v.to_bits();
        }
    }
    Summary {
        count: s.count(),
        zero_count: s.zero_count(),
        clamped: s.clamped(),
        saturated: s.saturated(),
        quantile_bits,
    }
}

/// A latency in nanoseconds from `rng`: 1 ms plus up to ~8.4 ms, and one time in 32 ten
/// times that (a straggler), like docs/reference.md, workload A, in shape.
#[inline]
fn latency_ns(rng: &mut Xorshift32) -> u64 {
    let x = rng.next_u32();
    let base = 1_000_000 + u64::from(x & 0x7f_ffff);
    if x >> 27 == 0 {
        base * 10 // 1 in 32
    } else {
        base
    }
}

/// The seed of the main workload.
pub const SEED: u32 = 0x1234_5678;

/// Records latencies number `from..to` of the main workload as integers.
pub fn record_latencies<M: IndexMapping, const N: usize>(
    s: &mut DDSketch<M, N>,
    from: u32,
    to: u32,
) {
    let mut rng = Xorshift32(SEED);
    for i in 0..to {
        let v = latency_ns(&mut rng);
        if i >= from {
            s.record_u64(v);
        }
    }
}

/// Records latencies number `from..to` of the main workload as floats (`record(f64)`).
pub fn record_latencies_f64<M: IndexMapping, const N: usize>(
    s: &mut DDSketch<M, N>,
    from: u32,
    to: u32,
) -> bool {
    let mut rng = Xorshift32(SEED);
    let mut ok = true;
    for i in 0..to {
        let v = latency_ns(&mut rng);
        if i >= from {
            ok &= s.record(v as f64).is_ok();
        }
    }
    ok
}

/// Values at and beyond the edges of the range: zero, below 1 µs, far above 100 s,
/// `u64::MAX`, durations, a record of many at once.
pub fn record_edges<M: IndexMapping, const N: usize>(s: &mut DDSketch<M, N>) {
    for v in [
        0,
        1,
        999,
        1_000,
        1_001,
        99_999_999_999,
        100_000_000_000,
        u64::MAX,
    ] {
        s.record_u64(v);
    }
    s.record_duration(Duration::from_secs(1_000_000));
    s.record_duration(Duration::from_micros(250));
    s.record_u64_n(5_000_000, 1_000);
    s.record_u64_n(0, 3);
}
