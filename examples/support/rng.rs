//! Random numbers for the examples (and the loopback test): splitmix64 streams keyed by a
//! tuple, so a draw is a pure function of its key (common random numbers across runs).

pub fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

const GOLDEN: u64 = 0x9e37_79b9_7f4a_7c15;

pub struct Rng(u64);

#[allow(dead_code)] // each example uses its own subset
impl Rng {
    /// The stream keyed by `seed` and `keys`.
    pub fn keyed<const K: usize>(seed: u64, keys: [u64; K]) -> Rng {
        let mut h = mix(seed ^ GOLDEN);
        for k in keys {
            h = mix(h.wrapping_add(k).wrapping_add(GOLDEN));
        }
        Rng(h)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(GOLDEN);
        mix(self.0)
    }

    /// Uniform in (0, 1).
    pub fn unit(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    pub fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.unit()
    }

    /// Standard normal (Box-Muller).
    pub fn normal(&mut self) -> f64 {
        let (u, v) = (self.unit(), self.unit());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }

    pub fn lognormal(&mut self, mu: f64, sigma: f64) -> f64 {
        (mu + sigma * self.normal()).exp()
    }

    /// Log-normal with the given mean and standard deviation (of the value itself).
    pub fn lognormal_mean_sd(&mut self, mean: f64, sd: f64) -> f64 {
        let sigma2 = (1.0 + (sd / mean).powi(2)).ln();
        self.lognormal(mean.ln() - sigma2 / 2.0, sigma2.sqrt())
    }
}
