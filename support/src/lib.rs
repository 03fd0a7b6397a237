//! What tailguard's tests, benches, examples and firmware share, in one place (not
//! published; a path dependency of each):
//!
//! * [`Rng`], [`Xorshift32`], [`Xorshift64`]: the seeded generators every test, bench,
//!   example and firmware image draws from: splitmix64, and the xorshift sequences the
//!   firmware's blessed values and the tests' fixed inputs were drawn with (the library's
//!   own src/test_rng.rs, which its unit tests use too).
//! * `workload` (feature `std`): the reference workloads A, B, C and D of
//!   docs/reference.md, as latency draws.
//! * `dist` (feature `std`): the distributions the accuracy tests run over.
//! * `data_set` (feature `std`): the benches' two latency data sets (workload A and a
//!   heavy-tailed one).
//! * [`firmware`]: the firmware's known workload and what is read back from it, shared by
//!   firmware/ (which runs it on a microcontroller) and tests/firmware_expected.rs (which
//!   runs it on the host).
//! * [`sensor`]: the stalling sensor of examples/embassy_hedge.rs and firmware/embassy/.
//! * `python` (feature `std`): the interop tests' Python side (the interpreter, a fresh
//!   directory, a script run).
//! * `loopback` (feature `loopback`): the hyper backend on 127.0.0.1 that
//!   examples/http_gateway and tests/tower_loopback hedge against.
//!
//! Without the default `std` feature the crate is `no_std` (for firmware/).
#![no_std]
#![forbid(unsafe_code)]
#![deny(missing_docs)]

#[cfg(feature = "std")]
extern crate std;

#[cfg(feature = "std")]
pub mod data_set;
#[cfg(feature = "std")]
pub mod dist;
pub mod firmware;
#[cfg(feature = "loopback")]
pub mod loopback;
#[cfg(feature = "std")]
pub mod python;
pub mod rng;
pub mod sensor;
// The library's unit tests' generators, shared rather than copied: the library cannot
// depend on this crate.
#[cfg(feature = "std")]
pub mod workload;
#[path = "../../src/test_rng.rs"]
mod xorshift;

pub use rng::Rng;
pub use xorshift::{Xorshift32, Xorshift64};
