//! [`Arbitrary`] for [`ExponentialSketch`]: filled by records and merges, as sketches are
//! filled, so every value is one the public API builds, at any scale it reaches.

use arbitrary::{Arbitrary, Result, Unstructured};

use crate::sketch::{Counter, ExponentialSketch};

/// Records (or merges) per sketch, at most.
const MAX_OPS: usize = 4096;

/// A sketch small enough to clone on the stack for a merge with itself.
const MAX_SELF_MERGE_BYTES: usize = 1 << 16;

/// Where a sketch's values lie: powers of two from `low`, `spread` of them (few, so that
/// fine scales are reached; many, so that the sketch downscales far).
#[derive(Clone, Copy)]
struct Spread {
    low: i32,
    spread: u32,
    /// The mantissa's bits drawn per value (the rest are the sketch's `mantissa`): a few
    /// for values within a bucket or two at scale 8, else all 52.
    free_bits: u32,
    mantissa: u64,
}

impl Spread {
    fn arbitrary(u: &mut Unstructured<'_>) -> Result<Self> {
        let spread = match u.int_in_range(0u8..=3)? {
            0 => 0,
            1 => u.int_in_range(1..=4)?,
            2 => u.int_in_range(5..=64)?,
            _ => u.int_in_range(65..=2046)?,
        };
        let free_bits = if spread == 0 {
            u.int_in_range(0..=52)?
        } else {
            52
        };
        Ok(Spread {
            low: u.int_in_range(-1074..=1023)?,
            spread,
            free_bits,
            mantissa: u64::arbitrary(u)? & ((1 << 52) - 1),
        })
    }

    /// A positive finite float whose exponent is in the spread (clamped to the floats'),
    /// any mantissa.
    fn float(self, u: &mut Unstructured<'_>) -> Result<f64> {
        let exponent = self
            .low
            .saturating_add(u.int_in_range(0..=self.spread)? as i32);
        let field = exponent.saturating_add(1023).clamp(0, 2046) as u64; // 0: subnormals
        let free = (1u64 << self.free_bits).wrapping_sub(1); // free_bits <= 52
        let mantissa = (self.mantissa & !free) | (u64::arbitrary(u)? & free);
        Ok(f64::from_bits((field << 52) | mantissa))
    }

    /// A positive integer whose exponent is in the spread, moved into `0..=63` (or, for a
    /// narrow spread of integers, the float's).
    fn integer(self, u: &mut Unstructured<'_>) -> Result<u64> {
        if self.free_bits < 52 && self.low >= 0 && self.low < 64 {
            return Ok(self.float(u)? as u64); // an integer of the same narrow spread
        }
        let step = u.int_in_range(0..=self.spread)?.min(63) as i32;
        let power = self.low.rem_euclid(64).saturating_add(step).min(63) as u32;
        let low_bits = u64::arbitrary(u)? & (1u64 << power).wrapping_sub(1); // power <= 63
        Ok((1u64 << power) | low_bits)
    }
}

impl<'a, C: Counter, const B: usize> Arbitrary<'a> for ExponentialSketch<C, B> {
    /// A sketch filled from `u` (at most 4096 steps, while `u` has bytes), each step:
    ///
    /// * records of a value within the sketch's spread (drawn first: one power of two,
    ///   a few, or most of the floats), as a float or an integer, 1 to 4 at once or up
    ///   to 300 (which fills a `u8` counter);
    /// * a zero; in one sketch of four, `-0.0` or `+inf` (held as `f64::MAX`, counted by
    ///   `clamped`), and any `f64` bit pattern (NaN and negatives are refused and change
    ///   nothing);
    /// * a merge of the sketch with itself (twice every count: saturation comes fast),
    ///   for a sketch of at most 64 KiB.
    ///
    /// ```
    /// use arbitrary::{Arbitrary, Unstructured};
    /// use tailguard::sketch::ExponentialSketch;
    ///
    /// let bytes: Vec<u8> = (0..512u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
    /// let s = ExponentialSketch::<u8, 16>::arbitrary(&mut Unstructured::new(&bytes))?;
    /// assert_eq!(s.count(), s.zero_count() + s.bucket_counts().sum::<u64>());
    /// # Ok::<(), arbitrary::Error>(())
    /// ```
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        let mut s = Self::new();
        let spread = Spread::arbitrary(u)?;
        // Zeros, `+inf` and raw bit patterns in one sketch of four: `+inf` and most bit
        // patterns lie far from the spread, and would take every sketch to a coarse scale.
        let wild = u.ratio(1u8, 4)?;
        let mut ops = 0;
        while !u.is_empty() && ops < MAX_OPS {
            ops = ops.wrapping_add(1); // below MAX_OPS
            let n = if u.ratio(1u8, 8)? {
                u.int_in_range(5..=300)?
            } else {
                u.int_in_range(1..=4)?
            };
            match u.int_in_range(0u8..=15)? {
                0..=5 => {
                    let v = spread.float(u)?;
                    (0..n).for_each(|_| {
                        let _ = s.record(v);
                    });
                }
                6..=10 => {
                    let v = spread.integer(u)?;
                    (0..n).for_each(|_| s.record_u64(v));
                }
                11 if wild => {
                    let v = *u.choose(&[0.0, -0.0, f64::INFINITY])?;
                    let _ = s.record(v);
                }
                12 => s.record_u64(0),
                13 if wild => {
                    let _ = s.record(f64::from_bits(u64::arbitrary(u)?));
                }
                11 | 13 => {
                    let _ = s.record(spread.float(u)?);
                }
                _ => {
                    if core::mem::size_of::<Self>() <= MAX_SELF_MERGE_BYTES {
                        let copy = s.clone();
                        s.merge(&copy);
                    }
                }
            }
        }
        Ok(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fuzzing::test_bytes;

    #[test]
    fn arbitrary_sketches_are_valid_at_every_scale() {
        let mut scales = std::collections::BTreeSet::new();
        let mut saturated = false;
        for seed in 0..300 {
            let bytes = test_bytes(seed, 2048);
            let s = ExponentialSketch::<u8, 16>::arbitrary(&mut Unstructured::new(&bytes)).unwrap();
            assert_eq!(s.count(), s.zero_count() + s.bucket_counts().sum::<u64>());
            let counts: std::vec::Vec<u64> = s.bucket_counts().collect();
            assert!(counts.first() != Some(&0) && counts.last() != Some(&0));
            if let (Some(min), Some(max)) = (s.min(), s.max()) {
                let q = s.quantile(0.5).unwrap().unwrap();
                assert!(min <= q && q <= max);
            }
            scales.insert(s.scale());
            saturated |= s.saturated() > 0;
        }
        assert!(saturated && scales.len() >= 8, "{scales:?}");
        assert!(scales.contains(&8));
    }
}
