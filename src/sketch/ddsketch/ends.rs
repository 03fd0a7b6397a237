//! The mapping indices of a sketch's minimum and maximum, as the record paths found them:
//! a quantile's scan starts from the bin of the nearer end, and computing that index (a
//! logarithm, for most mappings) was a third of a p99 query's time.

/// The indices of a sketch's four extremes (its integer and float statistics are kept
/// apart): a cache the record paths fill (a new extreme is rare, and its index is at hand
/// then) and the quantile scan reads. Not part of a sketch's value: equality, `Debug` and
/// the codecs ignore it.
///
/// Each entry is a key (an integer value, or a float's bits) and its mapping index, and
/// is read only while its key is still the extreme it was noted for. It needs no
/// invalidation: a sketch's mapping never changes, so an index stays its key's, and a
/// merge, a clear or a dropped value that moves an extreme leaves a key that no longer
/// matches it, and the index is computed again. Keys and indices in two arrays: 48 bytes,
/// where four (key, index) pairs pad to 64.
#[derive(Clone, Copy)]
pub(super) struct EndIndices {
    /// 0 matches nothing: an end's index is read only for a positive value (a positive
    /// float's bits are not 0 either).
    keys: [u64; 4],
    indices: [i32; 4],
}

const INT_MIN: usize = 0;
const INT_MAX: usize = 1;
const FLOAT_MIN: usize = 2;
const FLOAT_MAX: usize = 3;

impl EndIndices {
    pub(super) const NONE: Self = Self {
        keys: [0; 4],
        indices: [0; 4],
    };

    /// Notes that `index` is the mapping index of `value` (> 0), for whichever of the
    /// integer minimum `min` and maximum `max` it now is.
    #[inline]
    pub(super) fn note_u64(&mut self, value: u64, index: i32, min: u64, max: u64) {
        self.note([INT_MIN, INT_MAX], value, index, [min, max]);
    }

    /// Notes that `index` is the mapping index of `value` (> 0), for whichever of the
    /// float minimum `min` and maximum `max` it now is. Not for `+inf`, whose bin the scan
    /// does not take from the mapping.
    #[inline]
    pub(super) fn note_f64(&mut self, value: f64, index: i32, min: f64, max: f64) {
        if value != f64::INFINITY {
            let ends = [min.to_bits(), max.to_bits()];
            self.note([FLOAT_MIN, FLOAT_MAX], value.to_bits(), index, ends);
        }
    }

    /// The index of the integer minimum `min` (> 0), if noted.
    #[inline]
    pub(super) fn of_int_min(&self, min: u64) -> Option<i32> {
        self.of(INT_MIN, min)
    }

    /// The index of the integer maximum `max` (> 0), if noted.
    #[inline]
    pub(super) fn of_int_max(&self, max: u64) -> Option<i32> {
        self.of(INT_MAX, max)
    }

    /// The index of the float minimum `min` (> 0), if noted.
    #[inline]
    pub(super) fn of_float_min(&self, min: f64) -> Option<i32> {
        self.of(FLOAT_MIN, min.to_bits())
    }

    /// The index of the float maximum `max` (> 0), if noted.
    #[inline]
    pub(super) fn of_float_max(&self, max: f64) -> Option<i32> {
        self.of(FLOAT_MAX, max.to_bits())
    }

    /// Notes `index` as the index of `key` in entry `entries[k]` wherever `key` is
    /// `ends[k]` (the minimum's and the maximum's keys).
    #[inline]
    fn note(&mut self, entries: [usize; 2], key: u64, index: i32, ends: [u64; 2]) {
        for (entry, end) in entries.into_iter().zip(ends) {
            if key == end {
                if let (Some(k), Some(i)) = (self.keys.get_mut(entry), self.indices.get_mut(entry))
                {
                    (*k, *i) = (key, index);
                }
            }
        }
    }

    /// The index noted in `entry`, if its key is `key` (> 0).
    #[inline]
    fn of(&self, entry: usize, key: u64) -> Option<i32> {
        let noted = self.keys.get(entry).is_some_and(|&k| k == key && key != 0);
        noted.then(|| self.indices.get(entry).copied()).flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::super::DDSketch;
    use crate::sketch::mapping::IndexMapping;
    use crate::sketch::presets;
    use crate::test_rng::Xorshift64;

    /// Every index the cache would answer with is the mapping's index of its extreme.
    fn check_cache<M: IndexMapping, const N: usize>(s: &DDSketch<M, N>) {
        let (f, i, e) = (&s.float_stats, &s.int_stats, &s.end_indices);
        let m = s.mapping();
        if let Some(index) = e.of_int_min(i.min) {
            assert_eq!(index, m.index_u64(i.min), "int min {}", i.min);
        }
        if let Some(index) = e.of_int_max(i.max) {
            assert_eq!(index, m.index_u64(i.max), "int max {}", i.max);
        }
        if let Some(index) = e.of_float_min(f.min) {
            assert_eq!(index, m.index(f.min), "float min {}", f.min);
        }
        if let Some(index) = e.of_float_max(f.max) {
            assert_eq!(index, m.index(f.max), "float max {}", f.max);
        }
    }

    /// The answers of `s` are those of a copy with nothing cached (a merge into an empty
    /// sketch notes nothing): the cache changes speed only.
    fn check_answers<M: IndexMapping, const N: usize>(s: &DDSketch<M, N>) {
        let mut uncached = DDSketch::with_layout(s.layout());
        uncached.merge(s).unwrap();
        for q in [0.0, 0.001, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 1.0] {
            let (a, b) = (s.quantile(q).unwrap(), uncached.quantile(q).unwrap());
            assert_eq!(a.map(f64::to_bits), b.map(f64::to_bits), "q {q}");
        }
    }

    /// A value of any magnitude the record paths take: zero, below and above the range,
    /// near 2^32, the range's edges and `u64::MAX`.
    fn value(rng: &mut Xorshift64) -> u64 {
        let r = rng.next_u64();
        match r % 8 {
            0 => 0,
            1 => u64::MAX >> (r >> 58),
            2 => (1 << 32) + (r >> 40) - (1 << 23),
            _ => (r >> 8) >> (r % 53),
        }
    }

    fn exercise<M: IndexMapping, const N: usize>(mut s: DDSketch<M, N>, seed: u64) {
        let mut rng = Xorshift64(seed);
        let mut other = s.clone();
        for step in 0..4_000 {
            let v = value(&mut rng);
            match rng.next_u64() % 16 {
                0 => s.record_u64_n(v, (v % 5) as u32),
                1 => s.record_n(v as f64 * 0.75, (v % 3) as u32).unwrap(),
                2..=5 => s.record(v as f64 * 1.5).unwrap(),
                6 => s.record(f64::INFINITY).unwrap(),
                7 => s.record_u64_slice(&[v, v / 3, v.wrapping_mul(7)]),
                8 => {
                    other.record_u64(v);
                    s.merge(&other).unwrap();
                }
                9 if step % 50 == 9 => s.clear(),
                _ => s.record_u64(v),
            }
            check_cache(&s);
            if step % 16 == 0 {
                check_answers(&s);
            }
        }
        check_answers(&s);
    }

    #[test]
    fn the_cached_indices_are_the_mappings_and_change_no_answer() {
        for seed in 1..=6 {
            exercise(presets::log_latency(), seed);
            exercise(presets::cubic_latency(), seed);
            exercise(presets::int_latency(), seed);
            exercise(presets::mcu_latency(), seed);
            exercise(presets::otel_latency(), seed);
        }
    }
}
