//! The slice records (`record_u64_slice`, `record_slice`) record exactly what recording
//! each value in turn records: bins, zero bin, count, clamped, saturated, min, max and
//! sum, bit for bit, for the presets of every mapping and for sketches small enough that
//! values fall below and above their range. The f64 slice is all or nothing.

use proptest::prelude::*;
use tailguard::sketch::{
    presets, AtomicSketch, CubicMapping, DDSketch, IndexMapping, IntMapping, LogMapping,
    OtelMapping, RecordSliceError,
};

/// Integers of every size, with the edges and latency-like values over-represented.
fn u64_value() -> impl Strategy<Value = u64> {
    prop_oneof![
        Just(0u64),
        Just(1u64),
        Just(u64::MAX),
        Just(u64::MAX - 1),
        0u64..2_000,                          // below the presets' range (1 µs)
        1_000u64..100_000_000_000,            // in it
        100_000_000_000u64..=u64::MAX / 1024, // above it
        any::<u64>(),
        // A power of two, or one either side: bin edges of the integer mappings.
        (0u32..64, -1i64..=1).prop_map(|(e, d)| (1u64 << e).wrapping_add_signed(d)),
    ]
}

/// Floats of every kind: valid ones (with +inf, -0.0 and subnormals) mostly, and NaN and
/// negative values sometimes.
fn f64_value(bad: bool) -> BoxedStrategy<f64> {
    let good = prop_oneof![
        Just(0.0),
        Just(-0.0),
        Just(f64::INFINITY),
        Just(f64::MAX),
        Just(f64::MIN_POSITIVE / 4.0),
        0.0..2_000.0f64,
        1e3..1e11f64,
        1e11..1e300f64,
        (0u64..0x7ff0_0000_0000_0000).prop_map(f64::from_bits),
        u64_value().prop_map(|v| v as f64),
    ];
    if bad {
        prop_oneof![
            8 => good,
            1 => Just(f64::NAN),
            1 => Just(f64::NEG_INFINITY),
            1 => -1e12..-1e-300f64,
        ]
        .boxed()
    } else {
        good.boxed()
    }
}

/// Equal in every counter and statistic, bit for bit.
fn assert_same<M: IndexMapping, const N: usize>(a: &DDSketch<M, N>, b: &DDSketch<M, N>) {
    assert!(a == b, "{a:?} != {b:?}");
    assert!(a.bins().eq(b.bins()));
    assert_eq!(a.zero_count(), b.zero_count());
    assert_eq!(a.count(), b.count());
    assert_eq!(a.clamped(), b.clamped());
    assert_eq!(a.saturated(), b.saturated());
    let bits = |x: Option<f64>| x.map(f64::to_bits);
    assert_eq!(bits(a.min()), bits(b.min()));
    assert_eq!(bits(a.max()), bits(b.max()));
    assert_eq!(a.sum().to_bits(), b.sum().to_bits());
}

/// `record_u64_slice` against `record_u64` on each, then `record_slice` against
/// `record` on each (into the same sketches: the two paths share bins and stats), from
/// a sketch that already holds `prefill` copies of a value (near `u32::MAX`, bins fill
/// up during the batch and the values that do not fit must be dropped alike).
fn check_dd<M: IndexMapping, const N: usize>(
    empty: DDSketch<M, N>,
    ints: &[u64],
    floats: &[f64],
    prefill: u32,
) {
    let mut batch = empty.clone();
    batch.record_n(5e6, prefill).unwrap();
    batch.record_u64_n(u64::MAX, prefill / 2);
    let mut single = batch.clone();
    batch.record_u64_slice(ints);
    ints.iter().for_each(|&v| single.record_u64(v));
    assert_same(&batch, &single);

    let before = batch.clone();
    let result = batch.record_slice(floats);
    match floats.iter().position(|v| v.is_nan() || *v < 0.0) {
        Some(position) => {
            let bad = floats[position];
            let err = result.unwrap_err();
            assert_eq!(err.position, position);
            assert_eq!(Err(err.error), single.record(bad));
            assert_same(&batch, &before); // nothing recorded
        }
        None => {
            result.unwrap();
            floats.iter().for_each(|&v| single.record(v).unwrap());
            assert_same(&batch, &single);
        }
    }
}

/// The same for the atomic sketch: its counters, extremes and snapshot.
fn check_atomic<M: IndexMapping, const N: usize>(
    empty: &DDSketch<M, N>,
    ints: &[u64],
    floats: &[f64],
) {
    let batch = AtomicSketch::with_layout(empty.layout());
    let single = AtomicSketch::with_layout(empty.layout());
    batch.record_u64_slice(ints);
    ints.iter().for_each(|&v| single.record_u64(v));
    let result = batch.record_slice(floats);
    match floats.iter().position(|v| v.is_nan() || *v < 0.0) {
        Some(position) => assert_eq!(result.unwrap_err().position, position),
        None => {
            result.unwrap();
            floats.iter().for_each(|&v| single.record(v).unwrap());
        }
    }
    assert_eq!(batch.count(), single.count());
    assert_eq!(batch.clamped(), single.clamped());
    assert_eq!(batch.saturated(), single.saturated());
    assert_eq!(
        batch.min().map(f64::to_bits),
        single.min().map(f64::to_bits)
    );
    assert_eq!(
        batch.max().map(f64::to_bits),
        single.max().map(f64::to_bits)
    );
    assert_same(&batch.snapshot(), &single.snapshot());
}

/// Every preset, and a small sketch of each mapping (values fall below and above it).
fn check_all(ints: &[u64], floats: &[f64], prefill: u32) {
    check_dd(presets::log_latency(), ints, floats, prefill);
    check_dd(presets::cubic_latency(), ints, floats, prefill);
    check_dd(presets::int_latency(), ints, floats, prefill);
    check_dd(presets::int_latency_coarse(), ints, floats, prefill);
    check_dd(presets::otel_latency(), ints, floats, prefill);
    let small_log = DDSketch::<LogMapping, 64>::with_relative_accuracy(0.02, 100.0).unwrap();
    let small_cubic = DDSketch::<CubicMapping, 64>::with_relative_accuracy(0.02, 100.0).unwrap();
    let small_int = DDSketch::<IntMapping, 64>::new(IntMapping::K5, 100.0).unwrap();
    let small_otel =
        DDSketch::<OtelMapping, 64>::new(OtelMapping::with_scale(3).unwrap(), 100.0).unwrap();
    check_dd(small_log.clone(), ints, floats, prefill);
    check_dd(small_cubic.clone(), ints, floats, prefill);
    check_dd(small_int.clone(), ints, floats, prefill);
    check_dd(small_otel.clone(), ints, floats, prefill);
    check_atomic(&presets::log_latency(), ints, floats);
    check_atomic(&presets::cubic_latency(), ints, floats);
    check_atomic(&presets::int_latency(), ints, floats);
    check_atomic(&presets::otel_latency(), ints, floats);
    check_atomic(&small_log, ints, floats);
    check_atomic(&small_cubic, ints, floats);
    check_atomic(&small_int, ints, floats);
    check_atomic(&small_otel, ints, floats);
}

/// Nothing, a little, or enough that the bins fill up during the batch.
fn prefill() -> impl Strategy<Value = u32> {
    prop_oneof![Just(0u32), 0u32..1000, (u32::MAX - 40)..=u32::MAX,]
}

/// Some values repeated, so that runs of one bin (coalesced by the atomic sketch) occur.
fn with_runs<T: Clone + core::fmt::Debug>(
    values: impl Strategy<Value = Vec<T>>,
) -> impl Strategy<Value = Vec<T>> {
    (values, proptest::collection::vec(1usize..6, 0..64)).prop_map(|(values, repeats)| {
        values
            .iter()
            .zip(repeats.iter().chain(core::iter::repeat(&1)))
            .flat_map(|(v, &r)| core::iter::repeat_n(v.clone(), r))
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(if cfg!(miri) { 4 } else { 256 }))]

    #[test]
    fn slices_record_what_one_by_one_records(
        ints in with_runs(proptest::collection::vec(u64_value(), 0..80)),
        floats in with_runs(proptest::collection::vec(f64_value(false), 0..80)),
        prefill in prefill(),
    ) {
        check_all(&ints, &floats, prefill);
    }

    #[test]
    fn a_bad_float_records_nothing_of_its_slice(
        ints in proptest::collection::vec(u64_value(), 0..40),
        floats in proptest::collection::vec(f64_value(true), 0..40),
        prefill in prefill(),
    ) {
        check_all(&ints, &floats, prefill);
    }
}

#[test]
fn the_error_names_the_first_bad_value() {
    let mut s = presets::int_latency();
    let err = s.record_slice(&[1e6, 2e6, -0.5, f64::NAN]).unwrap_err();
    assert_eq!(
        err,
        RecordSliceError {
            position: 2,
            error: tailguard::sketch::RecordError::Negative
        }
    );
    assert_eq!(
        err.to_string(),
        "at position 2: value is negative; a sketch records 0, positive values and +inf"
    );
    let err = s.record_slice(&[f64::NAN, -1.0]).unwrap_err();
    assert_eq!(
        (err.position, err.error.to_string().as_str()),
        (
            0,
            "value is NaN; a sketch records 0, positive values and +inf"
        )
    );
    assert!(s.is_empty());
    // An empty slice records nothing and is no error.
    s.record_slice(&[]).unwrap();
    s.record_u64_slice(&[]);
    assert!(s.is_empty() && s.min().is_none());
}

#[test]
fn a_long_batch_equals_one_by_one() {
    // Latency-like values with runs, past one vectorised chunk many times over.
    let mut rng = tailguard_support::Rng::new(14);
    let values: Vec<u64> = (0..100_000)
        .map(|i| {
            if i % 7 == 0 {
                5_000_000
            } else {
                rng.lognormal(15.4, 1.0) as u64
            }
        })
        .collect();
    let floats: Vec<f64> = values.iter().map(|&v| v as f64 * 1.000_1).collect();
    check_all(&values, &floats, 0);
}

#[test]
fn bin_edges_record_as_one_by_one() {
    // Each bin's lower edge and the floats either side: where the cubic slice kernel
    // leaves a value to `index` (within 2^-16 of an edge), and the first values of the
    // zero bin and the top, for each preset's mapping and a small cubic sketch.
    fn edges<M: IndexMapping, const N: usize>(s: &DDSketch<M, N>) -> Vec<f64> {
        let m = s.mapping();
        let (lo, hi) = (m.index(s.min_trackable()), m.index(s.max_trackable()));
        (lo.saturating_sub(2)..=hi.saturating_add(2))
            .flat_map(|i| {
                let edge = m.lower_bound(i);
                [edge.next_down(), edge, edge.next_up()]
            })
            .filter(|v| v.is_finite() && *v >= 0.0)
            .collect()
    }
    let small_cubic = DDSketch::<CubicMapping, 64>::with_relative_accuracy(0.02, 100.0).unwrap();
    for floats in [
        edges(&presets::cubic_latency()),
        edges(&small_cubic),
        edges(&presets::log_latency()),
        edges(&presets::int_latency()),
    ] {
        check_all(&[], &floats, 0);
    }
}

#[test]
fn records_after_a_batch_sum_as_after_one_by_one() {
    // The float sum is kept in parts (on 64-bit cores, by `count`'s parity): the parts a
    // batch leaves must be those one by one leaves, not only their total, or the records
    // after it would round differently. Fractional values, batches of odd and even
    // lengths, from counts of both parities, and across a chunk's end.
    let mut rng = tailguard_support::Rng::new(29);
    let values: Vec<f64> = (0..400).map(|_| rng.lognormal(3.0, 2.0)).collect();
    for before in 0..4 {
        for len in [1, 2, 7, 64, 65, 130] {
            let mut batch = presets::cubic_latency();
            for &v in &values[..before] {
                batch.record(v).unwrap();
            }
            let mut single = batch.clone();
            batch.record_slice(&values[before..before + len]).unwrap();
            for &v in &values[before..before + len] {
                single.record(v).unwrap();
            }
            for &v in &values[before + len..] {
                batch.record(v).unwrap();
                single.record(v).unwrap();
            }
            assert_same(&batch, &single);
        }
    }
}

#[test]
fn one_wide_value_in_a_chunk_records_as_one_by_one() {
    // The integer slice indexes a chunk whose values are all below 2^32 (4.3 s in
    // nanoseconds) with a kernel that reads their low 32 bits only: one wider value
    // anywhere in the chunk must send the whole chunk to the index of each value.
    let mut rng = tailguard_support::Rng::new(32);
    let body: Vec<u64> = (0..200)
        .map(|_| (rng.lognormal(15.4, 1.5) as u64).min(u64::from(u32::MAX)))
        .collect();
    // Edges and a hair above them (where DataDog's arithmetic puts a value in the bin
    // below), and wide values up to and past what a 52-bit mantissa holds.
    let edges = [
        1 << 32,
        (1 << 32) + 1,
        (1 << 33) + 1,
        (1 << 36) + 3,
        (1 << 40) + 1,
    ];
    let wide = [
        (1 << 33) - 1,
        (1 << 52) - 1,
        1 << 52,
        (3 << 52) + 12_345,
        (1 << 59) + 777,
    ];
    for wide in edges.into_iter().chain(wide).chain([1 << 63, u64::MAX]) {
        for at in [0, 1, 63, 64, 130, 199] {
            let mut values = body.clone();
            values[at] = wide;
            check_all(&values, &[], 0);
        }
    }
}

#[test]
fn whole_numbers_sum_as_one_by_one_up_to_two_to_the_53() {
    // The slice sums a chunk of whole numbers at once where no add rounds: up to a sum
    // of 2^53, and by each value in turn from there (or where one is not whole), with
    // the same bits either way. Chunks that cross 2^53, start above it, mix in
    // fractions, +inf, zeros and values from 2^52 up.
    let two_53 = (1u64 << 53) as f64;
    let mut rng = tailguard_support::Rng::new(29);
    let mut whole: Vec<f64> = (0..3_000)
        .map(|_| rng.lognormal(15.4, 2.0).round().min(1e11))
        .collect();
    let odd_start: Vec<f64> = whole.iter().map(|v| v + 1.0).collect();
    whole.extend([
        0.0,
        1.0,
        3.0,
        (1u64 << 52) as f64,
        (1u64 << 52) as f64 + 1.0,
    ]);
    let mut mixed = whole.clone();
    for (i, v) in mixed.iter_mut().enumerate() {
        match i % 97 {
            0 => *v += 0.5,
            1 => *v = f64::INFINITY,
            2 => *v = -0.0,
            _ => {}
        }
    }
    for start in [
        0.0,
        1e6,
        two_53 - 3e12,
        two_53 - 1e3,
        two_53,
        two_53 + 2.0,
        0.5,
    ] {
        for values in [&whole, &odd_start, &mixed] {
            let mut batch = presets::cubic_latency();
            // A start of the sum: copies of one value (a whole number of them).
            let n = 1_000u32;
            batch.record_n(start / f64::from(n), n).unwrap();
            let mut single = batch.clone();
            batch.record_slice(values).unwrap();
            values.iter().for_each(|&v| single.record(v).unwrap());
            assert_same(&batch, &single);
        }
    }
}
