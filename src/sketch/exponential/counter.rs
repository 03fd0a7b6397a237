//! [`Counter`]: the width of an exponential sketch's bucket counters.

mod sealed {
    /// Only the unsigned integers of the standard library are counters.
    pub trait Sealed {}
}

/// The unsigned integer type an [`ExponentialSketch`](super::ExponentialSketch) counts its
/// buckets in: `u8`, `u16`, `u32` or `u64`. Narrow counters fit more buckets in the same
/// memory; a bucket that is full drops what would overflow it, and the sketch counts the
/// values dropped ([`saturated`](super::ExponentialSketch::saturated)).
///
/// Sealed: implemented for those four types only.
///
/// ```
/// use tailguard::sketch::{Counter, ExponentialSketch};
///
/// fn buckets_in_bytes<C: Counter, const B: usize>(_: &ExponentialSketch<C, B>) -> usize {
///     B * core::mem::size_of::<C>()
/// }
/// let s = ExponentialSketch::<u16, 64>::new();
/// assert_eq!(buckets_in_bytes(&s), 128);
/// assert_eq!(<u16 as Counter>::MAX, 65_535);
/// ```
pub trait Counter: Copy + Eq + Ord + core::fmt::Debug + sealed::Sealed {
    /// No values.
    const ZERO: Self;
    /// The most values a counter holds.
    const MAX: u64;

    /// The count, widened.
    ///
    /// ```
    /// use tailguard::sketch::Counter;
    ///
    /// assert_eq!(Counter::get(40_000u16), 40_000u64);
    /// assert_eq!(u32::MAX.get(), 4_294_967_295);
    /// ```
    fn get(self) -> u64;

    /// Adds up to `n`, stopping at [`MAX`](Self::MAX): returns how many were added.
    ///
    /// ```
    /// use tailguard::sketch::Counter;
    ///
    /// let mut c: u16 = 65_000;
    /// assert_eq!(c.add_saturating(100), 100);
    /// assert_eq!(c.add_saturating(1_000), 435); // stops at u16::MAX
    /// assert_eq!(c, u16::MAX);
    /// assert_eq!(c.add_saturating(1), 0);
    /// ```
    fn add_saturating(&mut self, n: u64) -> u64;
}

macro_rules! counter {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}

        impl Counter for $t {
            const ZERO: Self = 0;
            const MAX: u64 = <$t>::MAX as u64;

            #[inline(always)]
            fn get(self) -> u64 {
                self as u64
            }

            #[inline(always)]
            fn add_saturating(&mut self, n: u64) -> u64 {
                // The room left, at most MAX: the add below cannot wrap.
                let added = n.min(<$t>::MAX.wrapping_sub(*self) as u64);
                *self = self.wrapping_add(added as $t);
                added
            }
        }
    )*};
}

counter!(u8, u16, u32, u64);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_saturate_and_say_how_many_they_took() {
        let mut c: u16 = 65_530;
        assert_eq!(c.add_saturating(3), 3);
        assert_eq!(c.add_saturating(10), 2);
        assert_eq!((c, c.add_saturating(1)), (u16::MAX, 0));
        let mut c: u8 = 0;
        assert_eq!(c.add_saturating(u64::MAX), 255);
        let mut c: u64 = u64::MAX - 1;
        assert_eq!(c.add_saturating(u64::MAX), 1);
        assert_eq!(<u32 as Counter>::MAX, u64::from(u32::MAX));
    }
}
