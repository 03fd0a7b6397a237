//! Workload C (docs/reference.md, workload C): five-step LLM dialogs. Each step is one
//! call; its first attempt goes to the [`PRIMARY`] endpoint and any hedge to the
//! [`REPLICA`] ([`endpoint`]). A dialog breaches its SLA when it takes longer than
//! [`SLA_NS`]. Calls are billed: a winner its prompt and completion, a cancelled loser its
//! prompt and 15-25 % of its completion.
//!
//! A call that does not stall is log-normal around the endpoint's median (sigma 0.22),
//! clamped to [180 ms, `cap_ms`]; with the endpoint's stall probability it stalls for a
//! uniform time in its stall range instead.
//!
//! ```
//! use tailguard_support::workload::c::{self, endpoint};
//! use tailguard_support::Rng;
//!
//! let mut rng = Rng::new(3);
//! // One dialog without hedging: five calls to the primary, each billed in full.
//! let dialog_ns: f64 = (0..c::STEPS).map(|_| endpoint(0).latency_ns(&mut rng)).sum();
//! assert!(dialog_ns >= 5.0 * c::FLOOR_MS * 1e6);
//! let breached = dialog_ns > c::SLA_NS;
//! let cost = 5.0 * endpoint(0).cost(true, &mut rng);
//! assert!((cost - 0.02).abs() < 1e-12);
//! ```

use crate::Rng;

/// Calls per dialog.
pub const STEPS: u64 = 5;
/// A dialog longer than this (8 s) breaches the SLA.
pub const SLA_NS: f64 = 8_000.0 * 1e6;
/// No call that does not stall is faster than this.
pub const FLOOR_MS: f64 = 180.0;
/// The spread (sigma) of the log-normal factor on an endpoint's median.
pub const SIGMA: f64 = 0.22;
/// The share of its completion a cancelled call is billed: uniform in this range.
pub const CANCELLED_COMPLETION_SHARE: (f64, f64) = (0.15, 0.25);

/// One endpoint's latency and prices.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Endpoint {
    /// The median of a call that does not stall, in ms.
    pub median_ms: f64,
    /// The longest a call that does not stall takes, in ms.
    pub cap_ms: f64,
    /// The share of calls that stall.
    pub stall_probability: f64,
    /// The shortest stall, in ms.
    pub stall_min_ms: f64,
    /// The longest stall, in ms.
    pub stall_max_ms: f64,
    /// What a call's prompt costs, in $.
    pub prompt_cost: f64,
    /// What a call's whole completion costs, in $.
    pub completion_cost: f64,
}

/// The primary endpoint, where every call starts.
pub const PRIMARY: Endpoint = Endpoint {
    median_ms: 520.0,
    cap_ms: 0.96 * 950.0,
    stall_probability: 0.045,
    stall_min_ms: 4200.0,
    stall_max_ms: 9800.0,
    prompt_cost: 0.0018,
    completion_cost: 0.0022,
};

/// The replica, where hedges go.
pub const REPLICA: Endpoint = Endpoint {
    median_ms: 560.0,
    cap_ms: 0.96 * 980.0,
    stall_probability: 0.035,
    stall_min_ms: 3800.0,
    stall_max_ms: 8500.0,
    prompt_cost: 0.0019,
    completion_cost: 0.0023,
};

/// The endpoint attempt `attempt` of a call goes to: the first (0) to the primary, every
/// hedge to the replica.
pub fn endpoint(attempt: u64) -> &'static Endpoint {
    if attempt == 0 {
        &PRIMARY
    } else {
        &REPLICA
    }
}

impl Endpoint {
    /// One call's latency in nanoseconds.
    pub fn latency_ns(&self, rng: &mut Rng) -> f64 {
        let normal = (self.median_ms * rng.lognormal(0.0, SIGMA)).clamp(FLOOR_MS, self.cap_ms);
        let ms = if rng.unit() < self.stall_probability {
            rng.uniform(self.stall_min_ms, self.stall_max_ms)
        } else {
            normal
        };
        ms * 1e6
    }

    /// What one call costs, in $: prompt and completion if it `won`; if it was cancelled,
    /// its prompt and a share of its completion drawn from `rng` (which a winner does not
    /// touch).
    pub fn cost(&self, won: bool, rng: &mut Rng) -> f64 {
        if won {
            self.prompt_cost + self.completion_cost
        } else {
            let (lo, hi) = CANCELLED_COMPLETION_SHARE;
            self.prompt_cost + self.completion_cost * rng.uniform(lo, hi)
        }
    }
}
