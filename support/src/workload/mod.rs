//! The reference workloads of docs/reference.md, as latency draws: each takes the
//! [`Rng`](crate::Rng) stream to draw from and returns a latency in nanoseconds (unrounded).
//!
//! * [`a`]: a 5 ms service with 5 % stragglers (docs/reference.md, workload A).
//! * [`b`]: a streaming endpoint's time to first token (workload B).
//! * [`c`]: five-step LLM dialogs, a primary endpoint and a replica for hedges (workload C).
//! * [`d`]: one LLM call (workload D).
//!
//! Each draw does exactly the floating-point operations the published figures were
//! computed with: changing one changes the simulation's output.

pub mod a;
pub mod b;
pub mod c;
pub mod d;
