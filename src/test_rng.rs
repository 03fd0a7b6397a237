//! Marsaglia's xorshift generators: known sequences from shifts and exclusive ors alone
//! (cheap on a Cortex-M0). The library's unit tests draw their fixed inputs from them; the
//! support crate includes this file (`tailguard_support::{Xorshift32, Xorshift64}`) for the
//! other tests, the benches and the firmware, whose blessed values were drawn with
//! [`Xorshift32`]. One file, because the library cannot depend on the support crate (its
//! published unit tests must build without it).

/// xorshift32 (shifts 13, 17, 5): nothing but 32-bit integer operations. The state is also
/// the output; a zero seed stays zero (xorshift's one fixed point).
///
/// ```
/// use tailguard_support::Xorshift32;
///
/// let mut rng = Xorshift32(0x1234_5678);
/// assert_eq!(rng.next_u32(), 0x8798_5aa5);
/// assert_eq!(rng.0, 0x8798_5aa5);
/// ```
#[derive(Debug, Clone)]
pub struct Xorshift32(pub u32);

impl Xorshift32 {
    /// The next state, which is also the output.
    #[inline]
    pub fn next_u32(&mut self) -> u32 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        self.0 = x;
        x
    }
}

/// xorshift64 (shifts 13, 7, 17). The state is also the output; a zero seed stays zero.
///
/// ```
/// use tailguard_support::Xorshift64;
///
/// let mut rng = Xorshift64(0x9e37_79b9_7f4a_7c15);
/// let first = rng.next_u64();
/// assert_eq!(rng.0, first);
/// assert_ne!(rng.next_u64(), first);
/// ```
#[derive(Debug, Clone)]
pub struct Xorshift64(pub u64);

impl Xorshift64 {
    /// The next state, which is also the output.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
}
