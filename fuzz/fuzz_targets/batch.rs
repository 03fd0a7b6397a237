//! Arbitrary values through the slice records (`record_slice`, `record_u64_slice`) against
//! the same values recorded one by one, bit for bit (bins, counters, min, max, sum), for
//! mappings of any gamma and offset (DataDog's `CUBIC` and `LOG`, the integer one) and a
//! lowest bin anywhere in `i32`: the slice kernels' fast paths (the cubic one's rounding
//! shift with the lowest index taken off, within its proven bound or declined) must never
//! put a value in another bin than `record` does. A slice with NaN or a negative records
//! nothing and names the first such value; a sketch near saturation drops alike. Then
//! every path that walks those bins by index: quantiles, the atomic sketch, the wire format.
#![no_main]

mod common;

use common::{values, Value};
use libfuzzer_sys::fuzz_target;
use tailguard::proto::{decode_into, encode, IndexConvention};
use tailguard::sketch::{
    AtomicSketch, BinLayout, CubicMapping, DDSketch, IndexMapping, IntMapping, LogMapping,
    RecordSliceError,
};

/// The sketches' bins: few, so that values fall on both sides of the range.
const BINS: usize = 64;

fuzz_target!(|data: &[u8]| {
    let Some((setup, rest)) = data.split_first_chunk::<12>() else {
        return;
    };
    let word = |i: usize| u32::from_le_bytes([setup[i], setup[i + 1], setup[i + 2], setup[i + 3]]);
    let (kind, a, b) = (setup[0] % 4, word(4), word(8));
    // 1 + (0, 1]: accuracies from extreme to coarse.
    let gamma = 1.0 + f64::from(a | 1) / f64::from(u32::MAX);
    // Offsets at the bounds the cubic kernel's proof draws (2^29, 2^30), a fraction that is
    // no multiple of 2^-16, and any f64.
    let offset = match setup[1] % 6 {
        0 => 0.0,
        1 => f64::from(b as i32) / 65_536.0,
        2 => f64::from(b as i32 % 4) + f64::from(1u32 << 29),
        3 => -f64::from(1u32 << 30) + f64::from(b % 8),
        4 => f64::from(b as i32) * 0.1,
        _ => f64::from_bits(u64::from(b) << 32 | u64::from(a)),
    };
    let value_kind = setup[2];
    let min_index = match setup[3] % 4 {
        0 => b as i32,
        1 => (b as i32) >> 12, // near the latency range's indices
        2 => (1 << 29) - (b % 1024) as i32,
        _ => i32::MAX - BINS as i32 - (b % 8) as i32,
    };
    let prefill = (value_kind & 1 == 1).then_some(u32::MAX - (b % 512));
    match kind {
        0 | 1 => {
            if let Ok(m) = CubicMapping::from_gamma_offset(gamma, offset) {
                check(m, min_index, prefill, rest);
            }
        }
        2 => {
            if let Ok(m) = LogMapping::from_gamma_offset(gamma, offset) {
                check(m, min_index, prefill, rest);
            }
        }
        _ => {
            if let Ok(m) = IntMapping::with_mantissa_bits(a % 22) {
                check(m, min_index, prefill, rest);
            }
        }
    }
});

fn check<M: IndexMapping>(mapping: M, min_index: i32, prefill: Option<u32>, bytes: &[u8]) {
    let Ok(layout) = BinLayout::<M, BINS>::from_min_index(mapping, min_index) else {
        return;
    };
    let mut batch = DDSketch::with_layout(layout);
    if let Some(n) = prefill {
        // Bins nearly full: the slice must drop what one by one drops.
        let v = batch.layout().min_trackable() * 1.5;
        batch.record_n(v, n).unwrap();
    }
    let mut single = batch.clone();
    let (mut floats, mut ints) = (Vec::new(), Vec::new());
    for v in values(bytes) {
        match v {
            Value::F64(x) => floats.push(x),
            Value::U64(n) => ints.push(n),
        }
    }
    batch.record_u64_slice(&ints);
    ints.iter().for_each(|&n| single.record_u64(n));
    assert_same(&batch, &single);

    let before = batch.clone();
    match floats.iter().position(|v| v.is_nan() || *v < 0.0) {
        Some(position) => {
            let got = batch.record_slice(&floats);
            let error = single.record(floats[position]).unwrap_err();
            assert_eq!(got, Err(RecordSliceError { position, error }));
            assert_same(&batch, &before);
        }
        None => {
            batch.record_slice(&floats).unwrap();
            floats.iter().for_each(|&v| single.record(v).unwrap());
            assert_same(&batch, &single);
        }
    }
    // The atomic sketch against the same values from empty.
    let values = prefill.is_none().then_some((&ints[..], &floats[..]));
    walk_the_bins(&batch, values);
}

/// Every path that walks the bins by index, for a layout anywhere in `i32`: quantiles
/// within `[min, max]`, the atomic sketch's slice records of `values` (what `s` holds,
/// recorded from empty) and its snapshot (the same bins), and the wire format's round trip.
fn walk_the_bins<M: IndexMapping>(s: &DDSketch<M, BINS>, values: Option<(&[u64], &[f64])>) {
    for q in [0.0, 0.01, 0.5, 0.99, 1.0] {
        let got = s.quantile(q).unwrap();
        if let (Some(v), Some(min), Some(max)) = (got, s.min(), s.max()) {
            assert!(min <= v && v <= max, "q={q}: {v} outside [{min}, {max}]");
        }
    }
    if let Some((ints, floats)) = values {
        let live = AtomicSketch::with_layout(s.layout());
        live.record_u64_slice(ints);
        if live.record_slice(floats).is_ok() {
            let snapshot = live.snapshot();
            assert!(snapshot.bins().eq(s.bins()), "atomic bins differ");
            assert_eq!(snapshot.zero_count(), s.zero_count());
        }
    }
    let mut buf = vec![0u8; 64 * 1024];
    let convention = IndexConvention::GoJava;
    if let Ok(len) = encode(s, convention, &mut buf) {
        let mut back = DDSketch::with_layout(s.layout());
        decode_into(&buf[..len], convention, &mut back).unwrap();
        assert!(back.bins().eq(s.bins()), "round trip");
    }
}

/// Equal in every counter and statistic (`==`: the bins and counters, the exact
/// statistics), and the float ones bit for bit.
fn assert_same<M: IndexMapping, const N: usize>(a: &DDSketch<M, N>, b: &DDSketch<M, N>) {
    assert!(a == b, "{a:?} != {b:?}");
    let bits = |s: &DDSketch<M, N>| [s.min(), s.max(), Some(s.sum())].map(|x| x.map(f64::to_bits));
    assert_eq!(bits(a), bits(b));
}
