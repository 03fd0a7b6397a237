//! A [`DDSketch`]'s float sum in parts: which part a record adds to, and the sum they
//! make.

use super::DDSketch;
use crate::sketch::mapping::IndexMapping;
use crate::sketch::stats::FloatStats;

/// How many parts past the first a [`DDSketch`]'s float sum is kept in: one on 64-bit
/// cores, none elsewhere. A record adds its value to the part of `count`'s
/// parity after it, so back-to-back records add to different parts: each add to memory
/// then waits on the add two records back, not on the one before (a store-to-load
/// forwarding and an add, about 12 cycles on Zen 4, had bound the float record). The sum
/// is the parts' sum. On 32-bit cores (soft float on the Cortex-M, where that wait is
/// not the cost) the sketch keeps no second part, so its last bits may differ from a
/// 64-bit core's for values that are not whole numbers.
pub(super) const FLOAT_SUM_ODD_PARTS: usize = if cfg!(target_pointer_width = "64") {
    1
} else {
    0
};

impl<M: IndexMapping, const N: usize> DDSketch<M, N> {
    /// Adds to the float sum's part of `count`'s parity (after the values `add` stands
    /// for were counted): see [`FLOAT_SUM_ODD_PARTS`].
    #[inline(always)]
    pub(super) fn add_to_float_sum(&mut self, add: f64) {
        match self.float_sum_odd.first_mut() {
            Some(odd) if self.count & 1 == 1 => *odd += add,
            _ => self.float_stats.sum += add,
        }
    }

    /// The float sum's parts, `[float_stats.sum, odd part]` (the odd part 0 on 32-bit
    /// cores), for code that adds to them in turn (the slice record).
    pub(super) fn float_sum_parts(&self) -> [f64; 2] {
        let odd = self.float_sum_odd.first().copied().unwrap_or(0.0);
        [self.float_stats.sum, odd]
    }

    /// Sets the parts [`float_sum_parts`](Self::float_sum_parts) gave (the odd one only
    /// where the sketch keeps it).
    pub(super) fn set_float_sum_parts(&mut self, [sum, odd_part]: [f64; 2]) {
        self.float_stats.sum = sum;
        if let Some(odd) = self.float_sum_odd.first_mut() {
            *odd = odd_part;
        }
    }

    /// The parts (indices into [`float_sum_parts`](Self::float_sum_parts)) that the next
    /// record and the one after it add to.
    pub(super) fn next_float_sum_parts(&self) -> [usize; 2] {
        let even = self.count & 1 == 0; // the next record leaves `count` odd
        [usize::from(even), usize::from(!even)].map(|p| p & FLOAT_SUM_ODD_PARTS)
    }

    /// The float sum: its parts added.
    pub(super) fn float_sum(&self) -> f64 {
        let sum = self.float_stats.sum;
        self.float_sum_odd
            .iter()
            .fold(sum, |total, odd| total + odd)
    }

    /// The float statistics with the whole float sum, as another sketch merges them.
    pub(super) fn float_stats_summed(&self) -> FloatStats {
        FloatStats {
            sum: self.float_sum(),
            ..self.float_stats
        }
    }

    /// Moves the float sum's odd part into `float_stats.sum`, for code that takes or
    /// sets the sum as one number.
    pub(super) fn gather_float_sum(&mut self) {
        self.float_stats.sum = self.float_sum();
        self.float_sum_odd = [0.0; FLOAT_SUM_ODD_PARTS];
    }
}

#[cfg(test)]
mod tests {
    use crate::sketch::presets;

    /// The sum's two parts on a 64-bit core: the records that leave `count` odd add to
    /// one, the others to the other (slow-path records too: a new extreme, a clamped
    /// value, a value of the zero bin), and `sum` adds the parts.
    #[cfg(target_pointer_width = "64")]
    #[test]
    fn the_float_sum_is_kept_in_two_parts_by_counts_parity() {
        // Within the range but 1e16 (clamped) and 2.5 (the zero bin).
        let values = [1234.1, 5678.7, 1e16, 2000.3, 2.5, 3000.9, 4000.3];
        let mut s = presets::cubic_latency();
        for v in values {
            s.record(v).unwrap();
        }
        let odd = ((1234.1 + 1e16) + 2.5) + 4000.3;
        let even = (5678.7 + 2000.3) + 3000.9;
        assert_eq!(s.float_stats.sum, even);
        assert_eq!(s.float_sum_odd, [odd]);
        assert_eq!(s.sum(), even + odd);
        assert_ne!(s.sum(), values.iter().sum::<f64>()); // not one part
        let copy = s.clone();
        s.gather_float_sum();
        assert_eq!((s.float_sum_odd, s.sum()), ([0.0], copy.sum()));
        assert!(s == copy); // equal sketches: the same sum, however it is split
    }
}
