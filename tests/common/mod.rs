//! Shared helpers for the integration tests: a seeded generator and test distributions.
#![allow(dead_code)]

/// splitmix64: small, seedable, good enough for test data.
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in (0, 1).
    pub fn unit(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    pub fn normal(&mut self) -> f64 {
        let (u, v) = (self.unit(), self.unit());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }

    pub fn lognormal(&mut self, mu: f64, sigma: f64) -> f64 {
        (mu + sigma * self.normal()).exp()
    }
}

/// The distributions the accuracy properties run over.
#[derive(Debug, Clone, Copy)]
pub enum Dist {
    Uniform,
    LogNormalNarrow,
    LogNormalWide,
    Pareto,
    Constant,
    /// REFERENCE.md section 4A: log-normal mean 5 ms, sd 2 ms; 5 % of draws times 10.
    Stragglers,
}

pub const DISTS: [Dist; 6] = [
    Dist::Uniform,
    Dist::LogNormalNarrow,
    Dist::LogNormalWide,
    Dist::Pareto,
    Dist::Constant,
    Dist::Stragglers,
];

impl Dist {
    /// One draw, in nanoseconds-like units well inside [1e-3, 1e12].
    pub fn sample(self, rng: &mut Rng) -> f64 {
        match self {
            Dist::Uniform => 1.0 + rng.unit() * 1e6,
            Dist::LogNormalNarrow => rng.lognormal(1e6f64.ln(), 0.5),
            Dist::LogNormalWide => rng.lognormal(1e6f64.ln(), 2.0),
            Dist::Pareto => 1e3 / rng.unit().powf(1.0 / 1.5),
            Dist::Constant => 4_200.0,
            Dist::Stragglers => {
                let sigma: f64 = 1.16f64.ln().sqrt();
                let mu = 5e6f64.ln() - sigma * sigma / 2.0;
                let v = rng.lognormal(mu, sigma);
                if rng.unit() < 0.05 {
                    v * 10.0
                } else {
                    v
                }
            }
        }
    }

    pub fn samples(self, seed: u64, n: usize) -> Vec<f64> {
        let mut rng = Rng(seed);
        (0..n).map(|_| self.sample(&mut rng)).collect()
    }
}

pub const QUANTILES: [f64; 11] = [0.0, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999, 1.0];

/// The exact sample quantile with the crate's convention: sorted[floor(q * (n - 1))].
pub fn exact_quantile(sorted: &[f64], q: f64) -> f64 {
    sorted[(q * (sorted.len() - 1) as f64) as usize]
}
