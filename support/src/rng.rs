//! splitmix64: small, seedable and good enough for test data and simulated latencies.
//!
//! Two ways to start a stream: [`Rng::new`] from a seed, for a sequence of draws, and
//! [`Rng::keyed`] from a seed and a tuple, so that a draw is a pure function of its key
//! (the simulation's common random numbers: attempt `k` of call `i` draws the same
//! latency under every policy).

/// splitmix64's increment (the golden ratio in 64 bits).
const GOLDEN: u64 = 0x9e37_79b9_7f4a_7c15;

/// splitmix64's output function: a bijective scramble of the state.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A splitmix64 stream.
///
/// ```
/// use tailguard_support::Rng;
///
/// let mut a = Rng::keyed(7, [1, 2]);
/// let mut b = Rng::keyed(7, [1, 2]);
/// assert_eq!(a.next_u64(), b.next_u64()); // the same key, the same draws
/// let u = Rng::new(7).unit();
/// assert!(0.0 < u && u < 1.0);
/// ```
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// The stream whose state starts at `seed`.
    pub const fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The stream keyed by `seed` and `keys`.
    pub fn keyed<const K: usize>(seed: u64, keys: [u64; K]) -> Rng {
        let mut h = mix(seed ^ GOLDEN);
        for k in keys {
            h = mix(h.wrapping_add(k).wrapping_add(GOLDEN));
        }
        Rng(h)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(GOLDEN);
        mix(self.0)
    }

    /// Uniform in (0, 1): never 0, so its logarithm is finite.
    pub fn unit(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    /// Uniform in (`lo`, `hi`).
    pub fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.unit()
    }

    /// Standard normal (Box-Muller).
    #[cfg(feature = "std")]
    pub fn normal(&mut self) -> f64 {
        let (u, v) = (self.unit(), self.unit());
        (-2.0 * u.ln()).sqrt() * (2.0 * core::f64::consts::PI * v).cos()
    }

    /// Log-normal: `exp` of a normal of mean `mu` and standard deviation `sigma`.
    #[cfg(feature = "std")]
    pub fn lognormal(&mut self, mu: f64, sigma: f64) -> f64 {
        (mu + sigma * self.normal()).exp()
    }

    /// Log-normal with the given mean and standard deviation (of the value itself).
    #[cfg(feature = "std")]
    pub fn lognormal_mean_sd(&mut self, mean: f64, sd: f64) -> f64 {
        let sigma2 = (1.0 + (sd / mean).powi(2)).ln();
        self.lognormal(mean.ln() - sigma2 / 2.0, sigma2.sqrt())
    }
}
