//! The workloads (docs/reference.md, workloads A, C and D, and A with a shift): the
//! latency and the cost of every attempt, each a pure function of (seed, workload, call,
//! attempt), so that every policy sees the same draws.

use tailguard_support::workload::{a, c, d};
use tailguard_support::Rng;

use crate::SEC;

/// The seed of every draw.
const SEED: u64 = 0x7461_696c_6775_6172; // "tailguar"

/// What a run simulates.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Workload {
    /// docs/reference.md, workload A: log-normal mean 5 ms sd 2 ms, 5 % of draws times 10.
    A,
    /// A with the base latency doubled from `SHIFT_START` to `SHIFT_END`.
    AShift,
    /// docs/reference.md, workload C: five-step LLM dialogs, primary endpoint, hedges to a
    /// replica.
    C,
    /// docs/reference.md, workload D: one LLM call, lognormal(0, 0.35) s, 5 % of calls
    /// uniform(6, 10) s.
    D,
}

// Deliberately not on the 30 s window boundaries: the shift ends mid-interval, so its
// samples stay in the window for up to two intervals.
pub const SHIFT_START: u64 = 75 * SEC;
pub const SHIFT_END: u64 = 135 * SEC;
pub const SHIFT_RUN_END: u64 = 210 * SEC;

impl Workload {
    /// The workload's part of every draw's key.
    fn key(self) -> u64 {
        match self {
            // The shift scenario reuses A's draws: only the scale differs.
            Workload::A | Workload::AShift => 1,
            Workload::C => 3,
            Workload::D => 4,
        }
    }

    /// The name in the tables and the CSV.
    pub fn name(self) -> &'static str {
        match self {
            Workload::A => "A",
            Workload::AShift => "A-shift",
            Workload::C => "C",
            Workload::D => "D",
        }
    }

    /// Calls per job (a request, or a dialog in C).
    pub fn steps(self) -> u64 {
        match self {
            Workload::C => c::STEPS,
            _ => 1,
        }
    }

    /// The deadline of a job, from its start (ns): C's dialog SLA; none elsewhere.
    pub fn sla_ns(self) -> Option<u64> {
        match self {
            Workload::C => Some(c::SLA_NS as u64),
            _ => None,
        }
    }

    /// The latency in ns of attempt `attempt` of call `call`, sent at `sent` (ns).
    pub fn latency(self, call: u64, attempt: u64, sent: u64) -> u64 {
        let mut rng = Rng::keyed(SEED, [self.key(), call, attempt, 0]);
        let ns = match self {
            Workload::A => a::latency_ns(&mut rng),
            Workload::AShift => {
                let shifted = (SHIFT_START..SHIFT_END).contains(&sent);
                a::latency_ns(&mut rng) * if shifted { 2.0 } else { 1.0 }
            }
            // Attempt 0 goes to the primary endpoint, backups to the replica.
            Workload::C => c::endpoint(attempt).latency_ns(&mut rng),
            Workload::D => d::latency_ns(&mut rng),
        };
        ns.round() as u64
    }

    /// C's cost in $ of attempt `attempt` of call `call`: in full when it won, its prompt
    /// plus 15-25 % of its completion when it was cancelled.
    pub fn cost(self, call: u64, attempt: u64, won: bool) -> f64 {
        if self != Workload::C {
            return 0.0;
        }
        let mut rng = Rng::keyed(SEED, [self.key(), call, attempt, 1]);
        c::endpoint(attempt).cost(won, &mut rng)
    }
}
