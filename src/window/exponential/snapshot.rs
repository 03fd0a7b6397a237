//! A slot read into a snapshot: its buckets at its scale, and extremes its buckets hold.

use super::cell::WindowCounter;
use super::slot::Slot;
use crate::sketch::exponential::index::{self, FINEST_SCALE};
use crate::sketch::exponential::Point;
use crate::sketch::{extremes_within, max_of_key, value_of_key, ExponentialSketch, IndexMapping};

/// Adds a slot's values into `sketch`.
pub(super) fn merge_slot<K: WindowCounter, const B: usize>(
    slot: &Slot<K, B>,
    sketch: &mut ExponentialSketch<u32, B>,
) {
    let config = slot.state().config();
    let zeros = u64::from(slot.zeros());
    let (mut span, mut count, mut sum) = (None::<(i64, i64)>, zeros, 0.0);
    let scale = FINEST_SCALE.wrapping_sub(config.map_or(0, |c| c.downshift as i32));
    let mapping = index::mapping_at(config.map_or(0, |c| c.downshift));
    // A slot's buckets may reach past the floats' (centred on a range at either end), and
    // a record that raced two clears adds at its old position, in any bucket of the new
    // scale (counted by `raced`): such a count is taken as the nearest float bucket's,
    // rather than making the slot's point unmergeable and its every value uncounted.
    let downshift = config.map_or(0, |c| c.downshift).min(31);
    let (lowest, highest) = (index::LOWEST >> downshift, index::HIGHEST >> downshift);
    let buckets = |config| {
        slot.buckets(config)
            .map(move |(i, n)| (i.clamp(lowest, highest), n))
    };
    if let Some(config) = config {
        for (i, n) in buckets(config) {
            let i64i = i64::from(i);
            span = Some(span.map_or((i64i, i64i), |(l, h)| (l.min(i64i), h.max(i64i))));
            count = count.saturating_add(n);
            sum += n as f64 * mapping.value(i);
        }
    }
    if count == 0 {
        return;
    }
    // The keys are of the non-zero values: a zero, if any, is the smallest.
    let (low, high) = slot.keys();
    // Buckets at the slot's scale, with integer operations only.
    let bucket = |v: f64| i64::from(index::of_f64(v) >> downshift);
    let top = span.map(|(_, h)| h);
    // The max at the edge where its part per million straddles one into the slot's top
    // occupied bucket.
    let keyed = (low <= high).then(|| {
        let min = if zeros > 0 { 0.0 } else { value_of_key(low) };
        (min, max_of_key(high, bucket, |b| top == Some(*b)))
    });
    // Buckets the keys do not reach yet (a record under way) bring the extremes to them.
    let value = |i: i64| mapping.value(i as i32); // within the i32s: a bucket's index
    let (min, max) = extremes_within(keyed, span, zeros > 0, bucket, value).unwrap_or((0.0, 0.0));
    let point = Point {
        scale,
        span,
        zero_count: zeros,
        count,
        stats: (min, max.max(min), sum),
    };
    let _ = sketch.merge_point(&point, |sink| {
        if let Some(config) = config {
            for (i, n) in buckets(config) {
                sink(i64::from(i), n);
            }
        }
    });
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::super::ExponentialWindow;
    use super::*;
    use crate::clock::ManualClock;
    use crate::sync::Ordering::Acquire;
    use core::time::Duration;

    const SECOND: Duration = Duration::from_secs(1);

    /// A max kept to a part per million is moved to the edge where that part straddles a
    /// bucket edge and the value lies past it: the snapshot's rank of the edge does not
    /// count a value above it, and no max is read above the value or in another bucket.
    #[test]
    fn a_max_just_past_an_edge_is_not_ranked_below_it() {
        let clock = ManualClock::new();
        let w = ExponentialWindow::<_, u32, 160>::new(&clock, SECOND).unwrap();
        let edge = 1048576.0; // 2^20: an edge at every scale
        let v = f64::from_bits(f64::to_bits(edge) + 1); // the same part per million
        w.record(v).unwrap();
        let snapshot = w.snapshot();
        assert_eq!(snapshot.rank(edge), Ok(0));
        assert_eq!(snapshot.rank(v), Ok(1));
        assert!(snapshot.max() >= Some(v));
        // A round value keeps its exact max.
        w.record_u64(3_000_000);
        assert_eq!(w.snapshot().max(), Some(3e6));
        // Values a few tenths of a part per million either side of bucket edges (at the scale
        // 3 a window of one value starts at), one per window: many share a part with the edge.
        for (k, j, side) in
            (24..60).flat_map(|k| (1..8).flat_map(move |j| [(k, j, -3e-7), (k, j, 3e-7)]))
        {
            let v = (libm::exp2(f64::from(k) + f64::from(j) / 8.0) * (1.0 + side)) as u64;
            let w = ExponentialWindow::<_, u32, 160>::new(&clock, SECOND).unwrap();
            w.record_u64(v);
            let snapshot = w.snapshot();
            let (v, max) = (v as f64, snapshot.max().unwrap());
            assert!(max <= v && max >= v * (1.0 - 1e-6), "{v:e}: {max:e}");
            let bucket = |v| index::of_f64(v) >> (FINEST_SCALE - snapshot.scale());
            assert_eq!(bucket(max), bucket(v), "{v:e}: {max:e}");
        }
    }

    /// A record preempted while its slot was cleared twice adds at its old position (the
    /// tag repeats), and the slot was recycled at the scale of values near `f64::MAX`,
    /// whose buckets reach past the floats': a bucket no float is in. The snapshot counts it
    /// in the nearest float bucket; it used to refuse the slot's point, so that `count()`
    /// left out every value of the slot (tests/loom.rs has the interleaving).
    #[test]
    fn a_raced_record_past_the_float_range_is_counted() {
        let clock = ManualClock::new();
        let interval = Duration::from_nanos(100);
        let w = ExponentialWindow::<_, u16, 4, 2>::new(&clock, interval).unwrap();
        w.record_u64(100); // its slot's buckets centred on 100: 2^20 in the top one
        let slot = w.physical(0);
        let seen = slot.state(); // what a record of 2^20 reads before it is preempted
        clock.advance(interval);
        w.record(f64::MAX).unwrap(); // rotates (the first clear), into the other slot
        clock.advance(interval * 2);
        w.maintain(); // recycles both at the scale of f64::MAX (the second clear)
        assert_eq!(w.rescales(), 0);
        assert!(slot.add_as_of(seen, index::of_u64(1 << 20)));
        let snapshot = w.snapshot();
        assert_eq!((snapshot.count(), w.count(), w.expired()), (1, 1, 2));
        assert!(snapshot.quantile(1.0).unwrap().unwrap().is_finite());
    }

    /// A snapshot between a record's bucket add and its keys' update: the buckets' values
    /// stand in for extremes not yet written, or not yet moved.
    #[test]
    fn a_snapshot_mid_record_takes_its_extremes_from_the_buckets() {
        let clock = ManualClock::new();
        let w = ExponentialWindow::<_, u32, 160>::new(&clock, SECOND).unwrap();
        w.record_u64(4_000_000); // configures the slot
        let slot = w.physical(w.current.load(Acquire));
        assert!(slot.add_to_bucket_only(index::of_u64(5_000_000)));
        let snapshot = w.snapshot();
        let max = snapshot.max().unwrap();
        assert!(
            (max / 5e6 - 1.0).abs() <= snapshot.relative_accuracy(),
            "{max}"
        );
        assert_eq!(snapshot.rank(4.5e6), Ok(1));
        // A slot whose keys no record has written yet: the buckets' values, not 0.
        let w = ExponentialWindow::<_, u32, 160>::new(&clock, SECOND).unwrap();
        w.record_u64(4_000_000);
        let slot = w.physical(w.current.load(Acquire));
        let _ = slot.close_and_clear(|_, _| {});
        slot.reopen(slot.state(), slot.state().config());
        assert!(slot.add_to_bucket_only(index::of_u64(5_000_000)));
        let snapshot = w.snapshot();
        let (min, max) = (snapshot.min().unwrap(), snapshot.max().unwrap());
        assert!(
            (min / 5e6 - 1.0).abs() <= snapshot.relative_accuracy(),
            "{min}"
        );
        assert!(
            (max / 5e6 - 1.0).abs() <= snapshot.relative_accuracy(),
            "{max}"
        );
    }
}
