//! The auto-scaling sketch's promises: quantiles within the relative accuracy of the scale
//! it ends at, exact count, min, max and sum, merges of sketches of different scales equal
//! to recording everything into one, saturation counted (by a record, a downscale or a
//! merge), bad input refused, and no input that panics. (Its buckets against the
//! OpenTelemetry SDK's: tests/exponential_interop.rs; its index against exact big-integer
//! powers: the unit tests of src/sketch/exponential/index.rs.)

use proptest::prelude::*;
use tailguard::sketch::{Counter, ExponentialSketch, RecordError};

/// A value spread over up to 12 decades, or a zero now and then.
fn value() -> impl Strategy<Value = u64> {
    prop_oneof![
        1 => Just(0u64),
        8 => (0.0f64..12.0).prop_map(|d| 10f64.powf(d) as u64),
        1 => any::<u64>(),
        1 => (0u32..64).prop_map(|e| 1u64 << e),
    ]
}

fn sketch_of<C: Counter, const B: usize>(values: &[u64]) -> ExponentialSketch<C, B> {
    let mut s = ExponentialSketch::new();
    values.iter().for_each(|&v| s.record_u64(v));
    s
}

/// Every quantile of `values` from `s` is within its reported accuracy of the exact one
/// (`sorted[floor(q * (n - 1))]`), and the ends are exact.
fn check_quantiles<C: Counter, const B: usize>(s: &ExponentialSketch<C, B>, values: &[u64]) {
    let mut sorted = values.to_vec();
    sorted.sort_unstable();
    let alpha = s.relative_accuracy();
    for q in [0.0, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 1.0] {
        let rank = (q * (sorted.len() - 1) as f64) as usize;
        let exact = sorted[rank] as f64;
        let got = s.quantile(q).unwrap().unwrap();
        assert!(
            (got - exact).abs() <= alpha * exact,
            "q {q}: {got} vs {exact}, scale {}, alpha {alpha}",
            s.scale()
        );
    }
    assert_eq!(s.quantile(0.0).unwrap(), Some(sorted[0] as f64));
    assert_eq!(s.quantile(1.0).unwrap(), sorted.last().map(|&v| v as f64));
}

/// Count, min, max and the exact integer sum.
fn check_stats<C: Counter, const B: usize>(s: &ExponentialSketch<C, B>, values: &[u64]) {
    assert_eq!(s.count(), values.len() as u64);
    assert_eq!(s.saturated(), 0);
    let sum: u128 = values.iter().map(|&v| u128::from(v)).sum();
    assert_eq!(s.sum(), sum as f64);
    assert_eq!(s.min(), values.iter().min().map(|&v| v as f64));
    assert_eq!(s.max(), values.iter().max().map(|&v| v as f64));
    assert_eq!(
        s.zero_count(),
        values.iter().filter(|&&v| v == 0).count() as u64
    );
    let held: u64 = s.bucket_counts().sum();
    assert_eq!(held + s.zero_count(), s.count());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn quantiles_are_within_the_accuracy_of_the_final_scale(
        values in prop::collection::vec(value(), 1..400),
        narrow in prop::collection::vec(1_000u64..1_100, 1..300),
    ) {
        // Within 64 buckets of the finest scale (0.14 %).
        let s = sketch_of::<u32, 64>(&narrow);
        assert_eq!(s.scale(), 8);
        check_quantiles(&s, &narrow);
        check_stats(&s, &narrow);
        let s = sketch_of::<u32, 16>(&values);
        check_quantiles(&s, &values);
        check_stats(&s, &values);
        let s = sketch_of::<u32, 64>(&values);
        check_quantiles(&s, &values);
        check_stats(&s, &values);
        let s = sketch_of::<u16, 160>(&values);
        check_quantiles(&s, &values);
        check_stats(&s, &values);
    }

    /// Merging a sketch of other values, at another scale, is recording them all into one,
    /// downscaled exactly to the coarser of the two scales where the other is coarser (a
    /// merge cannot refine what it holds): the same offset and buckets as the buckets of
    /// recording everything into one, each index shifted (`i >> d`) and their counts added,
    /// and the same stats, whatever the two sizes.
    #[test]
    fn merges_of_different_scales_are_recording_everything_into_one(
        a in prop::collection::vec(value(), 0..200),
        b in prop::collection::vec(1_000u64..2_000, 0..200),
    ) {
        fn check<const B: usize, const B2: usize>(a: &[u64], b: &[u64]) {
            let mut merged = sketch_of::<u32, B>(a);
            let ours = merged.scale();
            let other = sketch_of::<u32, B2>(b);
            merged.merge(&other);
            let whole = sketch_of::<u32, B>(&[a, b].concat());
            let scale = whole.scale().min(other.scale()).min(ours);
            assert_eq!(merged.scale(), scale, "B {B}, B2 {B2}");
            // `whole`'s buckets downscaled to `scale`.
            let d = whole.scale() - scale;
            let mut want: Vec<(i32, u64)> = Vec::new();
            for (k, n) in whole.bucket_counts().enumerate() {
                let index = (whole.offset() + k as i32) >> d;
                match want.last_mut() {
                    Some((i, sum)) if *i == index => *sum += n,
                    _ => want.push((index, n)),
                }
            }
            let got: Vec<(i32, u64)> = (merged.offset()..).zip(merged.bucket_counts()).collect();
            assert_eq!(got, want, "B {B}, B2 {B2}");
            assert_eq!(merged.count(), whole.count());
            assert_eq!(merged.zero_count(), whole.zero_count());
            assert_eq!((merged.min(), merged.max()), (whole.min(), whole.max()));
            assert_eq!(merged.sum(), whole.sum());
            assert_eq!(merged.saturated(), 0);
            if d == 0 {
                assert_eq!(merged, whole);
            }
        }
        check::<16, 16>(&a, &b);
        check::<16, 160>(&a, &b);
        check::<64, 16>(&a, &b);
        check::<64, 64>(&b, &a);
        check::<160, 2>(&a, &b);
    }

    /// Floats and integers take the same buckets (both exact), and any input records
    /// without a panic: NaN and negatives refused, everything else counted.
    #[test]
    fn any_input_records_without_a_panic(
        bits in prop::collection::vec(any::<u64>(), 1..100),
    ) {
        let mut s = ExponentialSketch::<u8, 3>::new();
        let mut accepted = 0u64;
        for &b in &bits {
            let v = f64::from_bits(b);
            match s.record(v) {
                Ok(()) => accepted += 1,
                Err(RecordError::NaN) => prop_assert!(v.is_nan()),
                Err(RecordError::Negative) => prop_assert!(v < 0.0),
                Err(e) => panic!("{e:?}"),
            }
            s.record_u64(b);
            accepted += 1;
        }
        prop_assert_eq!(s.count() + s.saturated(), accepted);
        let (min, max) = (s.min().unwrap(), s.max().unwrap());
        for q in [0.0, 0.3, 0.5, 0.99, 1.0] {
            let got = s.quantile(q).unwrap().unwrap();
            prop_assert!(min <= got && got <= max);
        }
        prop_assert!(s.sum().is_finite() || s.sum() == f64::INFINITY);
        prop_assert!((-10..=8).contains(&s.scale()));
        let held: u64 = s.bucket_counts().sum();
        prop_assert_eq!(held + s.zero_count(), s.count());
    }
}

#[test]
fn floats_and_integers_take_the_same_buckets() {
    let values: Vec<u64> = (0..3000u64)
        .map(|i| (i * i * 7919) % (1 << 53))
        .chain((0..53).map(|e| 1 << e))
        .collect();
    let ints = sketch_of::<u32, 64>(&values);
    let mut floats = ExponentialSketch::<u32, 64>::new();
    values
        .iter()
        .for_each(|&v| floats.record(v as f64).unwrap());
    assert_eq!(
        (ints.scale(), ints.offset()),
        (floats.scale(), floats.offset())
    );
    assert!(ints.bucket_counts().eq(floats.bucket_counts()));
    assert_eq!((ints.min(), ints.max()), (floats.min(), floats.max()));
}

#[test]
fn nan_and_negatives_are_refused_and_change_nothing() {
    let mut s = ExponentialSketch::<u32, 16>::new();
    s.record(5.0).unwrap();
    let before = s.clone();
    for v in [f64::NAN, -f64::NAN, -1.0, -5e-324, f64::NEG_INFINITY] {
        let want = if v.is_nan() {
            RecordError::NaN
        } else {
            RecordError::Negative
        };
        assert_eq!(s.record(v), Err(want), "{v}");
    }
    assert_eq!(s, before);
    // Nor on an empty sketch.
    let mut empty = ExponentialSketch::<u32, 16>::new();
    assert_eq!(empty.record(-2.0), Err(RecordError::Negative));
    assert_eq!(empty, ExponentialSketch::<u32, 16>::new());
}

#[test]
fn negative_zero_is_a_zero_and_infinity_is_clamped_to_the_largest_float() {
    let mut s = ExponentialSketch::<u32, 16>::new();
    s.record(-0.0).unwrap();
    assert_eq!((s.zero_count(), s.min()), (1, Some(0.0)));
    assert!(s.min().unwrap().is_sign_positive());
    assert_eq!(s.scale(), 8); // only zeros: no bucket to scale
    s.record(f64::INFINITY).unwrap();
    assert_eq!((s.count(), s.clamped()), (2, 1));
    assert_eq!((s.max(), s.sum()), (Some(f64::MAX), f64::MAX));
    // The bucket of f64::MAX, the SDKs' for +inf: the last below 2^1024.
    assert_eq!((s.scale(), s.offset()), (8, (1024 << 8) - 1));
    // The whole float range, subnormals included, fits in two buckets at scale -10.
    let mut tiny = ExponentialSketch::<u32, 2>::new();
    tiny.record(5e-324).unwrap();
    tiny.record(f64::MAX).unwrap();
    assert_eq!((tiny.scale(), tiny.offset()), (-10, -1));
    assert_eq!(tiny.bucket_counts().collect::<Vec<_>>(), [1, 1]);
}

/// The finest buckets of `a` and `b` (whole numbers): the offsets of one-value sketches.
fn finest(v: u64) -> i32 {
    let s = sketch_of::<u32, 2>(&[v]);
    assert_eq!(s.scale(), 8);
    s.offset()
}

#[test]
fn a_full_u16_bucket_counts_what_it_drops() {
    let mut s = ExponentialSketch::<u16, 16>::new();
    for _ in 0..65_540 {
        s.record_u64(1_000);
    }
    assert_eq!((s.count(), s.saturated()), (65_535, 5));
    assert_eq!(s.sum(), 65_535.0 * 1e3);
    assert_eq!(s.bucket_counts().collect::<Vec<_>>(), [65_535]);
    s.record(1e3).unwrap();
    assert_eq!((s.count(), s.saturated()), (65_535, 6));
    assert_eq!(s.sum(), 65_535.0 * 1e3);
}

#[test]
fn a_downscale_that_overflows_a_u16_bucket_counts_what_it_drops() {
    // 1004 and 1006 are in finest buckets 2k and 2k + 1: one bucket a scale coarser.
    let (a, b) = (1_004u64, 1_006u64);
    assert_eq!((finest(a) % 2, finest(b) - finest(a)), (0, 1));
    let mut s = ExponentialSketch::<u16, 4>::new();
    for _ in 0..40_000 {
        s.record_u64(a);
        s.record_u64(b);
    }
    assert_eq!((s.scale(), s.count(), s.saturated()), (8, 80_000, 0));
    s.record_u64(10_000); // downscales: a's and b's buckets merge, 80,000 > 65,535
    let lost = 80_000 - 65_535;
    assert!(s.scale() < 8);
    assert_eq!((s.count(), s.saturated()), (65_536, lost));
    // The values dropped are valued at their bucket's lower edge clamped into [min, max],
    // that is at `a`, and leave the exact integer sum.
    let want = 40_000 * (a + b) + 10_000 - lost * a;
    assert_eq!(s.sum(), want as f64);
    assert_eq!((s.min(), s.max()), (Some(a as f64), Some(1e4)));
    // As floats: valued at the bucket's representative clamped into [min, max].
    let mut f = ExponentialSketch::<u16, 4>::new();
    for _ in 0..40_000 {
        f.record(a as f64).unwrap();
        f.record(b as f64).unwrap();
    }
    f.record(1e4).unwrap();
    assert_eq!((f.count(), f.saturated()), (65_536, lost));
    let all = (40_000 * (a + b) + 10_000) as f64;
    let sum = f.sum();
    assert!(
        all - (lost * b) as f64 <= sum && sum <= all - (lost * a) as f64,
        "{sum}"
    );
}

#[test]
fn a_merge_that_overflows_a_u16_bucket_counts_what_it_drops() {
    let mut s = ExponentialSketch::<u16, 16>::new();
    for _ in 0..40_000 {
        s.record_u64(7_000);
    }
    let other = s.clone();
    s.merge(&other);
    assert_eq!((s.count(), s.saturated()), (65_535, 80_000 - 65_535));
    assert_eq!(s.sum(), 65_535.0 * 7e3);
    assert_eq!(s.mean(), Some(7e3));
}

/// A merge none of whose values fit (every bucket they fall in is full) leaves min, max
/// and sum as recording those values would: dropped, counted as saturated, and in none of
/// the statistics (the merge's min and max take the other sketch's only when some of its
/// values are added).
#[test]
fn a_merge_whose_values_all_drop_leaves_the_statistics_as_recording_does() {
    let mut full = ExponentialSketch::<u8, 16>::new();
    for _ in 0..255 {
        full.record(1000.0).unwrap();
    }
    let mut other = ExponentialSketch::<u8, 16>::new();
    let mut recorded = full.clone();
    for v in [999.9, 1000.1] {
        other.record(v).unwrap(); // the bucket of 1000 at scale 8
        recorded.record(v).unwrap();
    }
    full.merge(&other);
    assert_eq!((full.count(), full.saturated()), (255, 2));
    assert_eq!(full, recorded);
    assert_eq!((full.min(), full.max()), (Some(1000.0), Some(1000.0)));
    assert_eq!(full.sum(), 255_000.0);
    assert_eq!(full.quantile(0.0), Ok(Some(1000.0)));
    // Integers alike.
    let mut full = ExponentialSketch::<u8, 16>::new();
    (0..255).for_each(|_| full.record_u64(1_000_000));
    let mut other = ExponentialSketch::<u8, 16>::new();
    other.record_u64(999_999);
    let mut recorded = full.clone();
    recorded.record_u64(999_999);
    full.merge(&other);
    assert_eq!(full, recorded);
    assert_eq!(full.min(), Some(1e6));
}

#[test]
fn counters_of_every_width_and_clear() {
    fn fill<C: Counter>() {
        let mut s = ExponentialSketch::<C, 32>::new();
        (1..=300u64).for_each(|v| s.record_u64(v));
        assert_eq!(s.count() + s.saturated(), 300);
        s.clear();
        assert!(s.is_empty());
        assert_eq!((s.scale(), s.offset(), s.min(), s.sum()), (8, 0, None, 0.0));
        assert_eq!(s.bucket_counts().count(), 0);
        assert_eq!(s.quantile(0.5), Ok(None));
        assert!(s.quantile(f64::NAN).is_err());
    }
    fill::<u8>();
    fill::<u16>();
    fill::<u32>();
    fill::<u64>();
}

/// `clear` empties in place: after downscales, full counters, clamped and float records, a
/// cleared sketch equals a new one, and after the same records again the sketch they make.
#[test]
fn a_cleared_sketch_equals_a_new_one_after_downscales_and_saturation() {
    fn one<C: Counter, const B: usize>() {
        let values: Vec<u64> = (0..3_000u64)
            .map(|v| v % 11 * 7_919_003 + (v >> 2))
            .collect();
        let mut s = ExponentialSketch::<C, B>::new();
        values.iter().for_each(|&v| s.record_u64(v));
        s.record(f64::INFINITY).unwrap();
        s.record(3.5e-12).unwrap();
        let mut other = ExponentialSketch::<C, B>::new();
        other.record_u64(1 << 50);
        s.merge(&other);
        assert!(s.scale() < 8 && s.clamped() == 1, "{s:?}");
        s.clear();
        let new = ExponentialSketch::<C, B>::new();
        assert_eq!(s, new);
        assert_eq!(format!("{s:?}"), format!("{new:?}"));
        let mut fresh = new.clone();
        for (k, &v) in values.iter().enumerate().take(500) {
            s.record_u64(v);
            fresh.record_u64(v);
            assert_eq!(s, fresh, "after {k} records");
        }
        assert_eq!(s.quantile(0.9), fresh.quantile(0.9));
        assert_eq!(s.rank_u64(5_000_000), fresh.rank_u64(5_000_000));
    }
    one::<u8, 8>(); // saturated
    one::<u16, 16>();
    one::<u32, 160>();
    let mut s = ExponentialSketch::<u8, 8>::new();
    (0..1_000).for_each(|_| s.record_u64(7));
    assert!(s.saturated() > 0);
    s.clear();
    assert_eq!(s, ExponentialSketch::<u8, 8>::new());
}

/// A `static` built at compile time (all zero bytes: `.bss`) is the sketch `new` builds at
/// run time, and answers as it does after the same records.
#[test]
fn a_static_sketch_is_the_run_time_one() {
    use std::sync::Mutex;
    static LATENCIES: Mutex<ExponentialSketch<u16, 64>> = Mutex::new(ExponentialSketch::new());
    let mut run_time = ExponentialSketch::<u16, 64>::new();
    assert_eq!(*LATENCIES.lock().unwrap(), run_time);
    for v in [0u64, 1_500_000, 20_000_000, 999, 1 << 40] {
        LATENCIES.lock().unwrap().record_u64(v);
        run_time.record_u64(v);
    }
    let s = LATENCIES.lock().unwrap();
    assert_eq!(*s, run_time);
    assert_eq!(s.quantile(0.5), run_time.quantile(0.5));
    assert_eq!(ExponentialSketch::<u16, 64>::default(), {
        let mut c = run_time.clone();
        c.clear();
        c
    });
}

/// Saturating merges and downscales take dropped values out of the sum at estimates; the
/// sum reported stays what the values held can sum to: within `count` times min and max.
fn check_sum_bounds<C: Counter, const B: usize>(s: &ExponentialSketch<C, B>) {
    if let (Some(min), Some(max)) = (s.min(), s.max()) {
        let n = s.count() as f64;
        let sum = s.sum();
        assert!(
            sum >= min * n * (1.0 - 1e-12) && sum <= max * n * (1.0 + 1e-12),
            "sum {sum} outside [{}, {}]: {s:?}",
            min * n,
            max * n
        );
    }
}

/// One step of a mix of integer and float records and merges into small `u8` sketches.
#[derive(Debug, Clone)]
enum Step {
    Int(u64, u32),
    Float(f64, u32),
    MergeFloats(Vec<f64>, u32),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        (1u64..1 << 40, 1u32..300).prop_map(|(v, n)| Step::Int(v, n)),
        (1e-3f64..1e12, 1u32..300).prop_map(|(v, n)| Step::Float(v, n)),
        (proptest::collection::vec(1e-3f64..1e12, 1..8), 1u32..300)
            .prop_map(|(v, n)| Step::MergeFloats(v, n)),
    ]
}

fn run_steps<const B: usize>(steps: &[Step]) {
    let mut s = ExponentialSketch::<u8, B>::new();
    for st in steps {
        match st {
            Step::Int(v, n) => (0..*n).for_each(|_| s.record_u64(*v)),
            Step::Float(v, n) => (0..*n).for_each(|_| s.record(*v).unwrap()),
            Step::MergeFloats(vs, n) => {
                let mut o = ExponentialSketch::<u8, 4>::new();
                for _ in 0..*n {
                    vs.iter().for_each(|&v| o.record(v).unwrap());
                }
                s.merge(&o);
            }
        }
        check_sum_bounds(&s);
    }
}

/// A float on a power of two or a bucket edge of some scale (`2^(e + k / 256)`, `k`
/// multiple of `2^(8 - scale)`), or a few ulps from one.
fn edgy() -> impl Strategy<Value = f64> {
    (-40i32..40, 0u32..256, 0u32..=8, -2i32..=2).prop_map(|(e, k, coarsen, ulps)| {
        let k = k >> coarsen << coarsen;
        let mut v = (f64::from(e) + f64::from(k) / 256.0).exp2();
        for _ in 0..ulps.unsigned_abs() {
            v = if ulps < 0 { v.next_down() } else { v.next_up() };
        }
        v
    })
}

/// Every quantile of floats on powers of two and bucket edges, with few buckets (so many
/// scales), holds the documented check as computed, with no slack.
fn check_float_quantiles<const B: usize>(values: &[f64]) {
    let mut s = ExponentialSketch::<u32, B>::new();
    values.iter().for_each(|&v| s.record(v).unwrap());
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    for q in [0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0] {
        let want = sorted[(q * (sorted.len() - 1) as f64) as usize];
        let got = s.quantile(q).unwrap().unwrap();
        assert!(
            (got - want).abs() <= s.relative_accuracy() * want,
            "q {q}: {got} vs {want}, scale {}",
            s.scale()
        );
    }
}

/// The reproducer: at scale 0, 8 is the upper edge of (4, 8], exactly `alpha = 1/3` from
/// its representative 5.33..., which `f64` rounds a hair further.
#[test]
fn a_quantile_on_a_power_of_two_edge_is_within_the_reported_accuracy() {
    let mut s = ExponentialSketch::<u32, 4>::new();
    [2.0, 8.0, 8.0, 9.0]
        .iter()
        .for_each(|&v| s.record(v).unwrap());
    assert_eq!(s.scale(), 0);
    let got = s.quantile(0.5).unwrap().unwrap();
    assert!((got - 8.0).abs() <= s.relative_accuracy() * 8.0, "{got}");
    check_float_quantiles::<4>(&[2.0, 8.0, 8.0, 9.0]);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn quantiles_on_edges_are_within_the_reported_accuracy(
        values in prop::collection::vec(edgy(), 1..40),
    ) {
        check_float_quantiles::<2>(&values);
        check_float_quantiles::<4>(&values);
        check_float_quantiles::<8>(&values);
        check_float_quantiles::<32>(&values);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn the_sum_stays_within_count_times_min_and_max(steps in proptest::collection::vec(step(), 1..12)) {
        run_steps::<2>(&steps);
        run_steps::<3>(&steps);
        run_steps::<16>(&steps);
    }
}

/// An OTLP point at scale 0 with `zeros` zeros and positive buckets from `offset`, its
/// count their total (wrapping, as a sender's could).
fn point_bytes(zeros: u64, offset: i32, counts: &[u64]) -> Vec<u8> {
    fn varint(out: &mut Vec<u8>, mut v: u64) {
        while v >= 0x80 {
            out.push(v as u8 | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
    }
    let total = counts.iter().fold(zeros, |a, &c| a.wrapping_add(c));
    let mut m = vec![0x21]; // count, fixed64
    m.extend_from_slice(&total.to_le_bytes());
    m.push(0x39); // zero_count, fixed64
    m.extend_from_slice(&zeros.to_le_bytes());
    if !counts.is_empty() {
        let mut packed = Vec::new();
        counts.iter().for_each(|&c| varint(&mut packed, c));
        let mut buckets = vec![0x08]; // offset, sint32
        varint(
            &mut buckets,
            u64::from(((offset << 1) ^ (offset >> 31)) as u32),
        );
        buckets.push(0x12); // bucket_counts, packed
        varint(&mut buckets, packed.len() as u64);
        buckets.extend_from_slice(&packed);
        m.push(0x42); // positive
        varint(&mut m, buckets.len() as u64);
        m.extend_from_slice(&buckets);
    }
    m
}

/// One step of a run near the `u64` count's end.
#[derive(Debug, Clone)]
enum NearMax {
    Int(u64),
    Float(f64),
    /// A point of that many zeros and buckets (at scale 0, from offset 0).
    Point(u64, Vec<u64>),
    /// A merge of a sketch of these values and a point of that many zeros.
    Merge(Vec<u64>, u64),
    /// Decodes the sketch's own encoding into a new sketch, and merges that in.
    SelfMerge,
}

fn huge() -> impl Strategy<Value = u64> {
    prop_oneof![
        0u64..4,
        (0u64..4).prop_map(|k| u64::MAX - k),
        (0u64..4).prop_map(|k| u64::MAX / 2 - k)
    ]
}

fn near_max() -> impl Strategy<Value = NearMax> {
    prop_oneof![
        prop_oneof![Just(0u64), 1u64..1 << 20].prop_map(NearMax::Int),
        prop_oneof![Just(0.0f64), 1e-3f64..1e9].prop_map(NearMax::Float),
        (huge(), proptest::collection::vec(huge(), 0..4)).prop_map(|(z, c)| NearMax::Point(z, c)),
        (proptest::collection::vec(0u64..1 << 20, 0..6), huge())
            .prop_map(|(v, z)| NearMax::Merge(v, z)),
        Just(NearMax::SelfMerge),
    ]
}

/// The count is the zero count plus the buckets, count plus saturated is what was offered
/// (`saturated` stops at `u64::MAX`), and the sketch's own encoding decodes back.
fn check_conserved<C: Counter, const B: usize>(s: &ExponentialSketch<C, B>, offered: u128) {
    use tailguard::otlp::{decode_into, encode, encoded_len, Timestamps};
    let held = u128::from(s.zero_count()) + s.bucket_counts().map(u128::from).sum::<u128>();
    assert_eq!(u128::from(s.count()), held, "{s:?}");
    let total = u128::from(s.count()) + u128::from(s.saturated());
    if s.saturated() == u64::MAX {
        assert!(total <= offered, "{total} > {offered}: {s:?}");
    } else {
        assert_eq!(total, offered, "{s:?}");
    }
    if let (Some(min), Some(max)) = (s.min(), s.max()) {
        assert!(min <= max && s.sum() >= 0.0, "{s:?}");
    }
    let mut buf = vec![0u8; encoded_len(s, Timestamps::default())];
    let n = encode(s, Timestamps::default(), &mut buf).unwrap();
    let mut back = ExponentialSketch::<C, B>::new();
    let r = decode_into(&buf[..n], &mut back).unwrap();
    assert_eq!((r.added, r.saturated), (s.count(), 0));
    assert!(back.bucket_counts().eq(s.bucket_counts()));
    assert_eq!(
        (back.zero_count(), back.scale()),
        (s.zero_count(), s.scale())
    );
}

fn run_near_max<C: Counter, const B: usize>(steps: &[NearMax]) {
    use tailguard::otlp::{decode_into, encode, encoded_len, Timestamps};
    let mut s = ExponentialSketch::<C, B>::new();
    let mut offered = 0u128;
    for step in steps {
        match step {
            NearMax::Int(v) => s.record_u64(*v),
            NearMax::Float(v) => s.record(*v).unwrap(),
            NearMax::Point(zeros, counts) => {
                let before = (s.count(), s.saturated());
                match decode_into(&point_bytes(*zeros, 0, counts), &mut s) {
                    Ok(r) => offered += u128::from(r.added) + u128::from(r.saturated),
                    // A count that wraps is refused, and changes nothing.
                    Err(_) => assert_eq!((s.count(), s.saturated()), before),
                }
            }
            NearMax::Merge(values, zeros) => {
                let mut o = ExponentialSketch::<C, B>::new();
                values.iter().for_each(|&v| o.record_u64(v));
                decode_into(&point_bytes(*zeros, 0, &[]), &mut o).unwrap();
                offered += u128::from(o.count()) + u128::from(o.saturated());
                s.merge(&o);
            }
            NearMax::SelfMerge => {
                let mut buf = vec![0u8; encoded_len(&s, Timestamps::default())];
                let n = encode(&s, Timestamps::default(), &mut buf).unwrap();
                let mut o = ExponentialSketch::<C, B>::new();
                decode_into(&buf[..n], &mut o).unwrap();
                offered += u128::from(o.count());
                s.merge(&o);
            }
        }
        offered += u128::from(matches!(step, NearMax::Int(_) | NearMax::Float(_)));
        check_conserved(&s, offered);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Records, merges and decodes that take the count to `u64::MAX` and past it.
    #[test]
    fn counts_near_u64_max_stay_the_zeros_plus_the_buckets(
        steps in proptest::collection::vec(near_max(), 1..16),
    ) {
        run_near_max::<u32, 8>(&steps);
        run_near_max::<u8, 2>(&steps);
        run_near_max::<u64, 16>(&steps);
    }
}

/// The reproducer: records, a merge and zeros past a count of `u64::MAX` are dropped and
/// counted, in no bucket, and the sketch's encoding decodes back.
#[test]
fn values_past_a_full_count_are_dropped_and_counted() {
    use tailguard::otlp::decode_into;
    let held = |s: &ExponentialSketch<u32, 8>| {
        u128::from(s.zero_count()) + s.bucket_counts().map(u128::from).sum::<u128>()
    };
    let mut s = ExponentialSketch::<u32, 8>::new();
    decode_into(&point_bytes(u64::MAX - 1, 0, &[]), &mut s).unwrap();
    [5u64, 6, 7].iter().for_each(|&v| s.record_u64(v));
    assert_eq!(
        (s.count(), held(&s), s.saturated()),
        (u64::MAX, u128::from(u64::MAX), 2)
    );
    assert_eq!((s.min(), s.max()), (Some(0.0), Some(5.0)));
    check_conserved(&s, u128::from(u64::MAX) + 2);
    let mut t = ExponentialSketch::<u32, 8>::new();
    decode_into(&point_bytes(u64::MAX - 1, 0, &[]), &mut t).unwrap();
    t.merge(&sketch_of::<u32, 8>(&[5, 6, 7]));
    assert_eq!(
        (t.count(), held(&t), t.saturated()),
        (u64::MAX, u128::from(u64::MAX), 2)
    );
    check_conserved(&t, u128::from(u64::MAX) + 2);
    let mut z = ExponentialSketch::<u32, 8>::new();
    decode_into(&point_bytes(u64::MAX, 0, &[]), &mut z).unwrap();
    z.record_u64(0);
    z.record(0.0).unwrap();
    z.record(3.0).unwrap();
    assert_eq!(
        (z.count(), z.zero_count(), z.saturated()),
        (u64::MAX, u64::MAX, 3)
    );
    assert_eq!((z.max(), z.sum()), (Some(0.0), 0.0));
}

/// A downscale that drops float values takes their estimate out of the float sum, whether
/// a float record, an integer record (integer operations only: the float sum is owed it)
/// or a merge triggers it: the sum is no more than the values held can add to.
#[test]
fn values_a_downscale_drops_leave_the_sum_by_either_record_path() {
    // Two u8 buckets: 255 threes and 255 fives, then 64 merges them into one, full.
    let filled = || {
        let mut s = ExponentialSketch::<u8, 2>::new();
        (0..255).for_each(|_| s.record(3.0).unwrap());
        (0..255).for_each(|_| s.record(5.0).unwrap());
        s
    };
    let mut by_float = filled();
    by_float.record(64.0).unwrap();
    let mut by_int = filled();
    by_int.record_u64(64);
    let mut by_merge = filled();
    by_merge.merge(&sketch_of::<u8, 2>(&[64]));
    for s in [&by_float, &by_int, &by_merge] {
        assert_eq!(s.bucket_counts().collect::<Vec<_>>(), [255, 1], "{s:?}");
        assert_eq!((s.count(), s.saturated()), (256, 255));
        // At most 255 fives and 64; at least 255 threes and 64.
        let sum = s.sum();
        assert!(
            (255.0 * 3.0 + 64.0..=255.0 * 5.0 + 64.0).contains(&sum),
            "{s:?}"
        );
    }
    // Records after the debt leave it owed (the sum reads it); a merge settles it.
    assert_eq!(by_int.sum(), by_float.sum());
    by_int.record_u64(100); // into the bucket of 64, (16, 256] at scale -2
    assert_eq!(by_int.sum(), by_float.sum() + 100.0);
    let mut settled = by_int.clone();
    settled.record(200.0).unwrap();
    assert_eq!(settled.sum(), by_int.sum() + 200.0);
    let mut merged = ExponentialSketch::<u8, 2>::new();
    merged.merge(&by_int);
    assert_eq!(merged.sum(), by_int.sum());
}

/// Subnormals share the bucket of `2^-1022`: a quantile among them is within that bucket
/// and `[min, max]`, not within the relative accuracy (as documented).
#[test]
fn a_quantile_among_subnormals_is_within_their_shared_bucket() {
    let mut s = ExponentialSketch::<u32, 16>::new();
    let values = [1e-320, 2e-320, 3e-320, 1e-310];
    values.iter().for_each(|&v| s.record(v).unwrap());
    assert_eq!(s.scale(), 8);
    let mid = s.quantile(0.5).unwrap().unwrap(); // exact: 2e-320
    assert!((1e-320..=1e-310).contains(&mid) && mid < f64::MIN_POSITIVE);
    assert!(
        (mid - 2e-320).abs() > s.relative_accuracy() * 2e-320,
        "{mid}"
    );
    assert_eq!(s.bucket_counts().collect::<Vec<_>>(), [4]);
    assert_eq!(
        (s.quantile(0.0).unwrap(), s.quantile(1.0).unwrap()),
        (Some(1e-320), Some(1e-310))
    );
}
