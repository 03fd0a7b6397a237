//! [`StdClock`]: the host's monotonic clock (feature `std`).

use super::instant::{duration_to_nanos, Instant};
use super::Clock;

/// The host's monotonic clock (`std::time::Instant`). Every `StdClock` of the process
/// reads the same time line, nanoseconds since the first reading of any of them, so the
/// instants and [`Deadline`](crate::deadline::Deadline)s made with one compare with those of
/// another.
///
/// Available with the `std` feature, except on `wasm32-unknown-unknown`: there
/// `std::time::Instant::now` panics (the target has no clock of its own), so `StdClock` is
/// left out and a build that names it fails to compile rather than panic at run time. Read
/// the host's time with an [`FnClock`](super::FnClock) instead (from JavaScript's
/// `performance.now()`, say: `wasm/` in the repository does that).
///
/// ```
/// use tailguard::clock::{Clock, StdClock};
/// let clock = StdClock::new();
/// let a = clock.now();
/// assert!(StdClock::new().now() >= a);
/// ```
#[cfg_attr(
    docsrs,
    doc(cfg(all(
        feature = "std",
        not(all(target_arch = "wasm32", target_os = "unknown"))
    )))
)]
#[derive(Debug, Clone, Copy, Default)]
pub struct StdClock {
    _private: (),
}

/// The epoch of every [`StdClock`]: the process's first reading.
static STD_EPOCH: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();

impl StdClock {
    /// The process's monotonic clock.
    pub const fn new() -> Self {
        StdClock { _private: () }
    }
}

impl Clock for StdClock {
    #[inline]
    fn now(&self) -> Instant {
        let epoch = STD_EPOCH.get_or_init(std::time::Instant::now);
        Instant::from_nanos(duration_to_nanos(epoch.elapsed()))
    }
}
