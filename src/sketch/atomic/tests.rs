//! `AtomicSketch`'s unit tests (they reach its private fields).

use super::*;
use crate::sketch::mapping::{CubicMapping, IntMapping, LogMapping};
use crate::sketch::presets;

/// A snapshot taken between a record's bin add and its extremes' update: the bins'
/// values stand in for the extremes not yet written, or not yet moved.
#[test]
fn a_snapshot_mid_record_takes_its_extremes_from_the_bins() {
    let s = AtomicSketch::with_layout(presets::INT_LATENCY_LAYOUT);
    let index = |v: u64| s.mapping.index_u64(v);
    let _ = s.add_one(index(5_000_000)); // the bin only: no extremes yet
    let snapshot = s.snapshot();
    let bin_value = s.mapping.value(index(5_000_000));
    assert_eq!(
        (snapshot.min(), snapshot.max()),
        (Some(bin_value), Some(bin_value))
    );
    assert!((snapshot.quantile(0.5).unwrap().unwrap() / 5e6 - 1.0).abs() <= 0.01);
    assert_eq!(snapshot.rank(4.5e6), Ok(0));

    let s = AtomicSketch::with_layout(presets::INT_LATENCY_LAYOUT);
    s.record_u64(4_000_000);
    let _ = s.add_one(index(5_000_000)); // above the max, which has not moved yet
    let _ = s.add_one(index(3_000_000)); // below the min
    let snapshot = s.snapshot();
    assert_eq!(snapshot.max(), Some(bin_value));
    assert_eq!(snapshot.min(), Some(s.mapping.value(index(3_000_000))));
    assert_eq!(snapshot.rank(4.5e6), Ok(2));
    // Only zeros, with no extremes yet: 0.
    let s = AtomicSketch::with_layout(presets::INT_LATENCY_LAYOUT);
    let _ = s.add_one(i32::MIN);
    assert_eq!(
        (s.snapshot().min(), s.snapshot().max()),
        (Some(0.0), Some(0.0))
    );
}

/// A record into a bin whose first record is still under way (its add done, its
/// widening of the range not yet: preempted there) is counted once it returns, by the
/// scans that read only the occupied range: by the fast and the float path, one by
/// one, in slices and in bulk. It was left out until the first record returned.
#[test]
fn a_record_behind_an_unfinished_first_record_is_counted() {
    type Record = fn(&presets::AtomicIntLatency);
    let records: [Record; 5] = [
        |s| s.record_u64(5_000_000),
        |s| s.record(5e6).unwrap(),
        |s| s.record_u64_slice(&[5_000_000]),
        |s| s.record_slice(&[5e6]).unwrap(),
        |s| s.record_n(5e6, 1).unwrap(),
    ];
    for (i, record) in records.iter().enumerate() {
        let s = AtomicSketch::with_layout(presets::INT_LATENCY_LAYOUT);
        let pos = position(s.mapping.index_u64(5_000_000), s.min_index);
        s.bins[pos].fetch_add(1, Relaxed); // the first record's add, and no more yet
        record(&s);
        assert_eq!(s.count(), 2, "record {i}");
        assert!(s.quantile(0.5).unwrap().is_some(), "record {i}");
    }
}

/// `record_n` records what `n` records would, everywhere a value can land: the zero
/// bin (0 and -0.0), the range, below it, above it (clamped, +inf at the top), and a
/// count of zero records nothing.
#[test]
fn record_n_is_n_records() {
    let values = [
        0.0,
        -0.0,
        1e-3,
        1.0,
        2.5e6,
        7.1e9,
        1e11,
        1e300,
        f64::INFINITY,
    ];
    for (i, &v) in values.iter().enumerate() {
        for n in [0u32, 1, 2, 37] {
            let bulk = AtomicSketch::with_layout(presets::LOG_LATENCY_LAYOUT);
            let single = AtomicSketch::with_layout(presets::LOG_LATENCY_LAYOUT);
            bulk.record(4e6).unwrap();
            single.record(4e6).unwrap();
            bulk.record_n(v, n).unwrap();
            for _ in 0..n {
                single.record(v).unwrap();
            }
            let (b, s) = (bulk.snapshot(), single.snapshot());
            assert!(b.bins().eq(s.bins()), "value {i}, n {n}");
            assert_eq!(b.zero_count(), s.zero_count(), "value {i}, n {n}");
            assert_eq!(
                (bulk.count(), bulk.clamped()),
                (single.count(), single.clamped())
            );
            assert_eq!((bulk.min(), bulk.max()), (single.min(), single.max()));
        }
    }
    let s = AtomicSketch::with_layout(presets::LOG_LATENCY_LAYOUT);
    assert_eq!(s.record_n(f64::NAN, 2), Err(RecordError::NaN));
    assert_eq!(s.record_n(-1.0, 2), Err(RecordError::Negative));
    assert_eq!(s.record_n(f64::NEG_INFINITY, 0), Err(RecordError::Negative));
    assert!(s.is_empty() && s.max().is_none());
}

/// A bin near its limit takes what fits, the rest is saturated; a full one takes
/// nothing (also with a single record's add above the limit, about to be taken back);
/// the clamped counter, full, hands its surplus to saturated too.
#[test]
fn record_n_stops_at_a_full_bin() {
    let s = AtomicSketch::with_layout(presets::INT_LATENCY_LAYOUT);
    s.set_bin_count(5_000_000, BIN_LIMIT - 3);
    s.record_n(5e6, 10).unwrap();
    assert_eq!((s.count(), s.saturated()), (u64::from(BIN_LIMIT), 7));
    s.record_n(5e6, u32::MAX).unwrap();
    assert_eq!(s.count(), u64::from(BIN_LIMIT));
    assert_eq!(s.saturated(), u64::from(BIN_LIMIT)); // stops there (documented)

    let s = AtomicSketch::with_layout(presets::INT_LATENCY_LAYOUT);
    s.set_bin_count(5_000_000, BIN_LIMIT + 1); // a refused add not yet taken back
    s.record_n(5e6, 4).unwrap();
    assert_eq!(s.saturated(), 4);

    let s = AtomicSketch::with_layout(presets::INT_LATENCY_LAYOUT);
    s.clamped.store(BIN_LIMIT - 2, Relaxed);
    s.record_n(1e300, 5).unwrap();
    assert_eq!((s.clamped(), s.saturated()), (u64::from(BIN_LIMIT), 3));
    assert_eq!(s.count(), 5); // in the top bin all the same, as one record is
    let one = AtomicSketch::with_layout(presets::INT_LATENCY_LAYOUT);
    one.record(1e300).unwrap();
    assert_eq!(s.max(), one.max());
}

#[test]
fn snapshot_matches_a_plain_sketch() {
    let atomic = AtomicSketch::with_layout(presets::CUBIC_LATENCY_LAYOUT);
    let mut plain = presets::cubic_latency();
    for v in (1..5000u64).map(|i| i * 7919 % 100_000_000 + 1) {
        atomic.record_u64(v);
        plain.record_u64(v);
    }
    let snap = atomic.snapshot();
    assert!(snap.bins().eq(plain.bins()));
    assert_eq!(snap.count(), plain.count());
    for q in [0.0, 0.1, 0.5, 0.9, 0.99, 1.0] {
        let (a, p) = (
            snap.quantile(q).unwrap().unwrap(),
            plain.quantile(q).unwrap().unwrap(),
        );
        assert!((a - p).abs() <= 1e-6 * p, "q={q}: {a} vs {p}");
        assert_eq!(atomic.quantile(q).unwrap(), snap.quantile(q).unwrap());
    }
    let alpha = plain.relative_accuracy();
    assert!((snap.sum() - plain.sum()).abs() <= alpha * plain.sum());
}

#[test]
fn bad_input_and_out_of_range_values() {
    let s = AtomicSketch::<LogMapping, 64>::with_relative_accuracy(0.02, 1.0).unwrap();
    assert_eq!(s.record(f64::NAN), Err(RecordError::NaN));
    assert_eq!(s.record(-1.0), Err(RecordError::Negative));
    assert!(s.is_empty() && s.min().is_none() && s.quantile(0.5) == Ok(None));
    s.record(0.0).unwrap();
    s.record(f64::INFINITY).unwrap();
    s.record_u64(u64::MAX);
    assert_eq!(s.count(), 3);
    assert_eq!(s.clamped(), 2);
    assert_eq!(s.min(), Some(0.0));
    assert!(s.max().unwrap() >= 1.8e19 * (1.0 - 1e-6));
    assert_eq!(s.quantile(2.0), Err(InvalidQuantile));
}

#[test]
fn full_bins_count_as_saturated() {
    let s = AtomicSketch::<IntMapping, 64>::with_relative_accuracy(0.02, 1.0).unwrap();
    let v = 3u64; // 64 bins at 32 per octave from 1.0: up to 4
    let pos = (s.mapping.index_u64(v) - s.min_index) as usize;
    s.bins[pos].store(BIN_LIMIT - 1, Relaxed);
    s.record_u64(v);
    s.record_u64(v);
    s.record_u64(v);
    assert_eq!(s.bins[pos].load(Relaxed), BIN_LIMIT);
    assert_eq!(s.saturated(), 2);
    assert_eq!(add_saturating(&s.bins[pos], 5), 0);
    assert_eq!(add_saturating(&s.bins[pos + 1], 5), 5);
    // A clear hands the saturated count over with the values.
    assert_eq!(s.clear_counting_saturated(), (u64::from(BIN_LIMIT) + 5, 2));
    assert_eq!((s.count(), s.saturated()), (0, 0));
}

/// A full bin's refused add, taken back after a clear emptied the bin: the clear took
/// at most the limit (the add counts itself as saturated), and the take-back leaves
/// the emptied bin alone rather than wrapping it.
#[test]
fn a_refused_add_that_a_clear_swept_is_not_taken_back_twice() {
    let s = AtomicSketch::<IntMapping, 64>::with_relative_accuracy(0.02, 1.0).unwrap();
    let pos = (s.mapping.index_u64(3) - s.min_index) as usize;
    // Two records' adds in flight on a full bin.
    s.bins[pos].store(BIN_LIMIT + 2, Relaxed);
    assert_eq!(s.clear(), u64::from(BIN_LIMIT));
    s.record_u64(3); // after the clear
    take_back(&s.bins[pos]);
    take_back(&s.bins[pos]);
    assert_eq!(s.count(), 1);
    // Without a clear, each takes its own add back.
    s.bins[pos].store(BIN_LIMIT + 2, Relaxed);
    take_back(&s.bins[pos]);
    take_back(&s.bins[pos]);
    assert_eq!(s.bins[pos].load(Relaxed), BIN_LIMIT);
}

#[test]
fn fast_path_records_occupy_saturate_and_move_the_extremes() {
    let s = AtomicSketch::with_layout(presets::INT_LATENCY_LAYOUT);
    let (v, w) = (5_000_000u64, 7_000_000u64);
    // Both on the mapping's fast path, in bins of the range.
    assert!(s.mapping.index_u64_fast(v).is_some() && s.mapping.index_u64_fast(w).is_some());
    let pos = |x: u64| (s.mapping.index_u64(x) - s.min_index) as usize;
    // A bin's first value widens the occupied range.
    s.record_u64(w);
    assert_eq!(s.occupied(), (pos(w), pos(w)));
    s.record_u64(v);
    assert_eq!(s.occupied(), (pos(v), pos(w)));
    assert_eq!((s.min(), s.max()), (Some(5e6), Some(7e6)));
    // A full bin takes the add back and counts it as saturated, out of the extremes.
    s.bins[pos(v)].store(BIN_LIMIT - 1, Relaxed);
    s.record_u64(v + 1); // the same bin: fits
    s.record_u64(v - 1); // full now: dropped
    assert_eq!(s.bins[pos(v)].load(Relaxed), BIN_LIMIT);
    assert_eq!(s.saturated(), 1);
    assert_eq!(s.min(), Some(5e6));
    assert_eq!(s.max(), Some(7e6));
    // Into an occupied bin that is not full: counted, extremes moved, range kept.
    s.record_u64(w + 1);
    assert_eq!(s.max(), Some(value_of_key(key_of_u64(w + 1))));
    assert_eq!(s.occupied(), (pos(v), pos(w)));
    assert_eq!(s.bins[pos(w)].load(Relaxed), 2);
}

/// Bins, counters and extremes of two sketches, compared.
fn assert_same_counters<M: IndexMapping, const N: usize>(
    a: &AtomicSketch<M, N>,
    b: &AtomicSketch<M, N>,
) {
    // Every bin, not only the occupied range: the range is under test too.
    let load = |s: &AtomicSketch<M, N>| {
        core::iter::once(&s.zero)
            .chain(s.bins.iter())
            .map(|c| c.load(Relaxed))
            .collect::<std::vec::Vec<_>>()
    };
    assert_eq!(load(a), load(b));
    assert_eq!(a.clamped(), b.clamped());
    assert_eq!(a.saturated(), b.saturated());
    assert_eq!(a.min(), b.min());
    assert_eq!(a.max(), b.max());
}

#[test]
fn slice_runs_fill_a_bin_as_one_by_one_would() {
    type Small = AtomicSketch<IntMapping, 64>;
    let fresh = || {
        let s = Small::with_relative_accuracy(0.02, 1.0).unwrap();
        // Two free places in the bin of 3, one in the clamped counter.
        let pos = (s.mapping.index_u64(3) - s.min_index) as usize;
        s.bins[pos].store(BIN_LIMIT - 2, Relaxed);
        s.clamped.store(BIN_LIMIT - 1, Relaxed);
        s
    };
    let (batch, single) = (fresh(), fresh());
    // 32 bins per octave from 1.0: 3.0 .. 3.0625 is one bin. Of a run of four, the
    // first two fit; the others are dropped and do not enter min and max.
    let floats = [3.05, 3.01, 3.0, 3.02, 3.5];
    batch.record_slice(&floats).unwrap();
    floats.iter().for_each(|&v| single.record(v).unwrap());
    assert_same_counters(&batch, &single);
    assert_eq!(batch.saturated(), 2);
    assert!(batch.min().unwrap() > 3.009 && batch.max().unwrap() > 3.49);
    // A run into the now full bin adds nothing; a run of clamped values (the range
    // ends at 4) goes into the top bin, and what does not fit in the clamped counter
    // is counted as saturated, as `add_one` counts it.
    let ints = [3u64, 3, 2, 2, 5, 7, 9, 1 << 40, 2];
    batch.record_u64_slice(&ints);
    ints.iter().for_each(|&v| single.record_u64(v));
    assert_same_counters(&batch, &single);
    assert_eq!(batch.saturated(), 2 + 2 + 3);
    assert_eq!(
        (batch.min(), batch.max()),
        (Some(2.0), Some((1u64 << 40) as f64))
    );
    // +inf with the clamped counter full: the same again.
    let floats = [f64::INFINITY, 0.0, -0.0];
    batch.record_slice(&floats).unwrap();
    floats.iter().for_each(|&v| single.record(v).unwrap());
    assert_same_counters(&batch, &single);
    assert_eq!(batch.saturated(), 8);
    assert_eq!(batch.min(), Some(0.0));
}

#[test]
fn snapshots_count_no_more_clamped_than_the_top_bin_holds() {
    let s = AtomicSketch::<LogMapping, 64>::with_relative_accuracy(0.02, 1.0).unwrap();
    for _ in 0..3 {
        s.record(1e30).unwrap();
    }
    s.record(s.mapping.value(s.min_index + 63)).unwrap(); // in range, in the top bin
    assert_eq!(s.snapshot().clamped(), 3);
    // A record racing `clear` can add to `clamped` after its bin was emptied: the
    // snapshot still counts no more clamped values than its top bin holds.
    s.bins[63].store(1, Relaxed);
    s.clamped.store(3, Relaxed);
    let snap = s.snapshot();
    assert_eq!(snap.clamped(), 1);
    assert_eq!(snap.bins().last().unwrap().count, 1);
    // Into a sketch whose top bin is all but full, as recording there would count.
    s.bins[63].store(6, Relaxed);
    s.clamped.store(6, Relaxed);
    let mut full = DDSketch::<LogMapping, 64>::with_relative_accuracy(0.02, 1.0).unwrap();
    full.record_n(1e30, u32::MAX - 1).unwrap();
    s.merge_into(&mut full).unwrap();
    assert_eq!(full.clamped(), u64::from(u32::MAX));
    assert_eq!(full.saturated(), 5);
    assert_eq!(full.count(), u64::from(u32::MAX));
}

/// Into a sketch whose bin is full, none of the values fit: min, max and sum stay as
/// recording them there would leave them (as `DDSketch::merge` does).
#[test]
fn merge_into_a_full_bin_leaves_the_statistics() {
    let s = AtomicSketch::<IntMapping, 849>::new(IntMapping::K5, 1_000.0).unwrap();
    s.record_u64(999_990);
    s.record_u64(1_000_010);
    let mut full = DDSketch::<IntMapping, 849>::new(IntMapping::K5, 1_000.0).unwrap();
    full.record_u64_n(1_000_000, u32::MAX);
    let mut recorded = full.clone();
    recorded.record_u64(999_990);
    recorded.record_u64(1_000_010);
    s.merge_into(&mut full).unwrap();
    assert_eq!(full.saturated(), 2);
    assert_eq!((full.min(), full.max()), (Some(1e6), Some(1e6)));
    assert_eq!(
        (full.min(), full.max(), full.sum()),
        (recorded.min(), recorded.max(), recorded.sum())
    );
}

#[test]
fn clear_reports_what_it_removed() {
    let s = AtomicSketch::<CubicMapping, 128>::with_relative_accuracy(0.01, 1.0).unwrap();
    for v in 1..=100 {
        s.record(f64::from(v)).unwrap();
    }
    assert_eq!(s.clear(), 100);
    assert!(s.is_empty() && s.max().is_none());
    assert_eq!(s.clear(), 0);
}

#[test]
fn merge_into_checks_the_configuration() {
    let s = AtomicSketch::<LogMapping, 128>::with_relative_accuracy(0.01, 1.0).unwrap();
    s.record(5.0).unwrap();
    let mut same = DDSketch::<LogMapping, 128>::with_relative_accuracy(0.01, 1.0).unwrap();
    s.merge_into(&mut same).unwrap();
    s.merge_into(&mut same).unwrap();
    assert_eq!(same.count(), 2);
    let mut other = DDSketch::<LogMapping, 128>::with_relative_accuracy(0.02, 1.0).unwrap();
    assert_eq!(s.merge_into(&mut other), Err(MergeError::Mapping));
    let mut shifted = DDSketch::<LogMapping, 128>::with_relative_accuracy(0.01, 9.0).unwrap();
    assert_eq!(s.merge_into(&mut shifted), Err(MergeError::Range));
    assert!(other.is_empty() && shifted.is_empty());
}
