//! [`HedgePolicy`]: the hedging lifecycle as every driver sees it, whatever the hedger's
//! clock, budget, sketch and size.

use core::time::Duration;

use super::WindowKind;
use super::{Attempt, Decision, Hedger, SkipReason, Stats, Ticket};
use crate::budget::Budget;
use crate::clock::{Clock, Instant};
use crate::deadline::Deadline;

/// The hedging lifecycle of [`Hedger`], as one object-safe trait.
///
/// Every `Hedger<C, B, M, N>` implements it, and so do references, `Arc`s (feature
/// `std`) and `dyn HedgePolicy` objects, so the drivers ([`race`](super::race),
/// [`race_until`](super::race_until), `race_embassy` and the tower layer) take any hedger
/// without naming its type parameters. The methods are [`Hedger`]'s; see there.
///
/// ```
/// use core::time::Duration;
/// use tailguard::clock::{Clock, ManualClock};
/// use tailguard::deadline::Deadline;
/// use tailguard::hedge::{Attempt, Decision, HedgeConfig, HedgePolicy, Hedger, SkipReason};
/// use tailguard::sketch::presets;
///
/// let clock = ManualClock::new();
/// let cubic = Hedger::new(&clock, HedgeConfig::new()).unwrap();
/// let int = Hedger::with_layout(&clock, HedgeConfig::new(), presets::INT_LATENCY_LAYOUT).unwrap();
/// // Two hedgers of different types behind one interface.
/// let hedgers: [&dyn HedgePolicy; 2] = [&cubic, &int];
/// for hedger in hedgers {
///     assert_eq!((hedger.now(), hedger.max_hedges()), (clock.now(), 1));
///     let ticket = hedger.start();
///     clock.advance(Duration::from_millis(3));
///     assert_eq!(hedger.on_success(&ticket, Attempt::Primary), Duration::from_millis(3));
/// }
///
/// // The whole lifecycle through the trait object: a cold start (20 samples by default).
/// let hedger: &dyn HedgePolicy = &cubic;
/// assert_eq!(hedger.delay(), Err(SkipReason::ColdStart));
/// let deadline = Deadline::after(hedger.now(), Duration::from_millis(100));
/// let mut ticket = hedger.start_with_deadline(deadline);
/// assert_eq!(hedger.should_hedge(&mut ticket), Decision::Skip(SkipReason::ColdStart));
/// hedger.on_error(&mut ticket, Attempt::Primary);
/// clock.advance(Duration::from_millis(100));
/// hedger.on_deadline_exceeded(&ticket);
/// hedger.on_rate_limited(); // an HTTP 429
/// hedger.on_rate_limited_for(Duration::from_secs(2)); // one with `Retry-After: 2`
/// let stats = hedger.stats();
/// assert_eq!((stats.requests, stats.errors, stats.deadline_exceeded), (2, 1, 1));
/// assert_eq!((stats.rate_limited, stats.pushbacks), (2, 1));
/// ```
pub trait HedgePolicy {
    /// The hedger's clock reading.
    fn now(&self) -> Instant;
    /// See [`Hedger::start`].
    fn start(&self) -> Ticket;
    /// See [`Hedger::start_with_deadline`].
    fn start_with_deadline(&self, deadline: Deadline) -> Ticket;
    /// See [`Hedger::should_hedge`].
    fn should_hedge(&self, ticket: &mut Ticket) -> Decision;
    /// See [`Hedger::on_success`].
    fn on_success(&self, ticket: &Ticket, winner: Attempt) -> Duration;
    /// See [`Hedger::on_error`].
    fn on_error(&self, ticket: &mut Ticket, attempt: Attempt);
    /// See [`Hedger::on_deadline_exceeded`].
    fn on_deadline_exceeded(&self, ticket: &Ticket);
    /// See [`Hedger::on_rate_limited`].
    fn on_rate_limited(&self);
    /// See [`Hedger::on_rate_limited_for`].
    fn on_rate_limited_for(&self, pushback: Duration);
    /// See [`Hedger::delay`].
    fn delay(&self) -> Result<Duration, SkipReason>;
    /// See [`Hedger::stats`].
    fn stats(&self) -> Stats;
    /// The most hedges per request ([`HedgeConfig::with_max_hedges`]); a driver sends
    /// them all.
    ///
    /// [`HedgeConfig::with_max_hedges`]: super::HedgeConfig::with_max_hedges
    fn max_hedges(&self) -> u8;
}

impl<C, B, M, const N: usize> HedgePolicy for Hedger<C, B, M, N>
where
    C: Clock,
    B: Budget,
    M: WindowKind,
{
    fn now(&self) -> Instant {
        Hedger::now(self)
    }
    fn start(&self) -> Ticket {
        Hedger::start(self)
    }
    fn start_with_deadline(&self, deadline: Deadline) -> Ticket {
        Hedger::start_with_deadline(self, deadline)
    }
    fn should_hedge(&self, ticket: &mut Ticket) -> Decision {
        Hedger::should_hedge(self, ticket)
    }
    fn on_success(&self, ticket: &Ticket, winner: Attempt) -> Duration {
        Hedger::on_success(self, ticket, winner)
    }
    fn on_error(&self, ticket: &mut Ticket, attempt: Attempt) {
        Hedger::on_error(self, ticket, attempt)
    }
    fn on_deadline_exceeded(&self, ticket: &Ticket) {
        Hedger::on_deadline_exceeded(self, ticket)
    }
    fn on_rate_limited(&self) {
        Hedger::on_rate_limited(self)
    }
    fn on_rate_limited_for(&self, pushback: Duration) {
        Hedger::on_rate_limited_for(self, pushback)
    }
    fn delay(&self) -> Result<Duration, SkipReason> {
        Hedger::delay(self)
    }
    fn stats(&self) -> Stats {
        Hedger::stats(self)
    }
    fn max_hedges(&self) -> u8 {
        self.config().max_hedges()
    }
}

/// Forwards every method to the hedger behind a pointer.
macro_rules! forward_hedge_policy {
    ($($pointer:ty),*) => {$(
        impl<H: HedgePolicy + ?Sized> HedgePolicy for $pointer {
            fn now(&self) -> Instant {
                (**self).now()
            }
            fn start(&self) -> Ticket {
                (**self).start()
            }
            fn start_with_deadline(&self, deadline: Deadline) -> Ticket {
                (**self).start_with_deadline(deadline)
            }
            fn should_hedge(&self, ticket: &mut Ticket) -> Decision {
                (**self).should_hedge(ticket)
            }
            fn on_success(&self, ticket: &Ticket, winner: Attempt) -> Duration {
                (**self).on_success(ticket, winner)
            }
            fn on_error(&self, ticket: &mut Ticket, attempt: Attempt) {
                (**self).on_error(ticket, attempt)
            }
            fn on_deadline_exceeded(&self, ticket: &Ticket) {
                (**self).on_deadline_exceeded(ticket)
            }
            fn on_rate_limited(&self) {
                (**self).on_rate_limited()
            }
            fn on_rate_limited_for(&self, pushback: Duration) {
                (**self).on_rate_limited_for(pushback)
            }
            fn delay(&self) -> Result<Duration, SkipReason> {
                (**self).delay()
            }
            fn stats(&self) -> Stats {
                (**self).stats()
            }
            fn max_hedges(&self) -> u8 {
                (**self).max_hedges()
            }
        }
    )*};
}

forward_hedge_policy!(&H);
#[cfg(feature = "std")]
forward_hedge_policy!(std::sync::Arc<H>, std::boxed::Box<H>);
