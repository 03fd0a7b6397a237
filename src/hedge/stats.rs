//! Hedging counters: atomics inside the hedger, a `Copy` snapshot outside.

use core::fmt;
use core::time::Duration;

use crate::sync::{const_unless_loom, AtomicU32, Ordering::Relaxed};

/// Live counters (32-bit atomics, wrapping at 2^32).
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub(crate) requests: AtomicU32,
    pub(crate) hedges: AtomicU32,
    pub(crate) hedge_wins: AtomicU32,
    pub(crate) primary_wins: AtomicU32,
    pub(crate) denied_budget: AtomicU32,
    pub(crate) skipped_cold: AtomicU32,
    pub(crate) skipped_deadline: AtomicU32,
    pub(crate) skipped_backpressure: AtomicU32,
    pub(crate) errors: AtomicU32,
    pub(crate) rate_limited: AtomicU32,
    pub(crate) pushbacks: AtomicU32,
    pub(crate) pushbacks_clamped: AtomicU32,
    pub(crate) deadline_exceeded: AtomicU32,
    pub(crate) unmeasured: AtomicU32,
}

impl Counters {
    const_unless_loom! {
        /// Every counter at zero.
        pub(crate) fn new() -> Self {
            Counters {
                requests: AtomicU32::new(0),
                hedges: AtomicU32::new(0),
                hedge_wins: AtomicU32::new(0),
                primary_wins: AtomicU32::new(0),
                denied_budget: AtomicU32::new(0),
                skipped_cold: AtomicU32::new(0),
                skipped_deadline: AtomicU32::new(0),
                skipped_backpressure: AtomicU32::new(0),
                errors: AtomicU32::new(0),
                rate_limited: AtomicU32::new(0),
                pushbacks: AtomicU32::new(0),
                pushbacks_clamped: AtomicU32::new(0),
                deadline_exceeded: AtomicU32::new(0),
                unmeasured: AtomicU32::new(0),
            }
        }
    }

    pub(crate) fn bump(counter: &AtomicU32) {
        counter.fetch_add(1, Relaxed);
    }

    pub(crate) fn snapshot(&self, delay: Option<Duration>) -> Stats {
        Stats {
            requests: self.requests.load(Relaxed),
            hedges: self.hedges.load(Relaxed),
            hedge_wins: self.hedge_wins.load(Relaxed),
            primary_wins: self.primary_wins.load(Relaxed),
            denied_budget: self.denied_budget.load(Relaxed),
            skipped_cold: self.skipped_cold.load(Relaxed),
            skipped_deadline: self.skipped_deadline.load(Relaxed),
            skipped_backpressure: self.skipped_backpressure.load(Relaxed),
            errors: self.errors.load(Relaxed),
            rate_limited: self.rate_limited.load(Relaxed),
            pushbacks: self.pushbacks.load(Relaxed),
            pushbacks_clamped: self.pushbacks_clamped.load(Relaxed),
            deadline_exceeded: self.deadline_exceeded.load(Relaxed),
            unmeasured: self.unmeasured.load(Relaxed),
            delay,
        }
    }
}

/// A snapshot of a hedger's counters (each wrapping at 2^32) and its current delay.
///
/// ```
/// use tailguard::clock::ManualClock;
/// use tailguard::hedge::{Hedger, HedgeConfig};
///
/// let clock = ManualClock::new();
/// let hedger = Hedger::new(&clock, HedgeConfig::new()).unwrap();
/// let _ticket = hedger.start();
/// let stats = hedger.stats();
/// assert_eq!(stats.requests, 1);
/// println!("{stats}");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub struct Stats {
    /// Requests started.
    pub requests: u32,
    /// Hedges sent.
    pub hedges: u32,
    /// Requests a hedge won.
    pub hedge_wins: u32,
    /// Requests the primary won.
    pub primary_wins: u32,
    /// Hedges the budget refused.
    pub denied_budget: u32,
    /// Hedges skipped during cold start.
    pub skipped_cold: u32,
    /// Hedges skipped because the backup could not finish before the deadline.
    pub skipped_deadline: u32,
    /// Hedges refused while backing off after a rate-limit signal.
    pub skipped_backpressure: u32,
    /// Attempts that failed.
    pub errors: u32,
    /// Rate-limit signals received (with a server's pushback or without).
    pub rate_limited: u32,
    /// Rate-limit signals that carried the server's delay (`Retry-After`,
    /// `grpc-retry-pushback-ms`): see
    /// [`Hedger::on_rate_limited_for`](super::Hedger::on_rate_limited_for).
    pub pushbacks: u32,
    /// Pushbacks shortened: longer than
    /// [`HedgeConfig::max_pushback`](super::HedgeConfig::max_pushback) (or than about six
    /// days), or ending past the clock's last reading (2^64 ns).
    pub pushbacks_clamped: u32,
    /// Requests a driver gave up at their deadline, no attempt having answered.
    pub deadline_exceeded: u32,
    /// Successes whose latency was not recorded: the clock read earlier than the
    /// request's start (it went back), so there was no latency to measure.
    pub unmeasured: u32,
    /// The hedge delay now, or `None` during a cold start without a fixed delay and while
    /// a server's pushback holds hedging off.
    pub delay: Option<Duration>,
}

impl Stats {
    /// Hedges per request, as a fraction (the extra load).
    ///
    /// ```
    /// use core::time::Duration;
    /// use tailguard::clock::ManualClock;
    /// use tailguard::hedge::{ColdStart, Decision, HedgeConfig, Hedger};
    ///
    /// let clock = ManualClock::new();
    /// let config = HedgeConfig::new().with_cold_start(ColdStart::Delay(Duration::from_millis(1)));
    /// let hedger = Hedger::new(&clock, config).unwrap();
    /// assert_eq!(hedger.stats().hedge_rate(), 0.0); // no request: no division by zero
    /// let mut tickets = [hedger.start(), hedger.start(), hedger.start(), hedger.start()];
    /// clock.advance(Duration::from_millis(1));
    /// assert_eq!(hedger.should_hedge(&mut tickets[0]), Decision::Hedge);
    /// assert_eq!(hedger.stats().hedge_rate(), 0.25); // one backup for four requests
    /// ```
    pub fn hedge_rate(&self) -> f64 {
        if self.requests == 0 {
            0.0
        } else {
            f64::from(self.hedges) / f64::from(self.requests)
        }
    }
}

impl fmt::Display for Stats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "requests {} hedges {} ({:.1} %) hedge-wins {} primary-wins {} denied {} \
             cold {} deadline {} backpressure {} errors {} rate-limited {} pushbacks {} \
             (clamped {}) timed-out {} unmeasured {} delay ",
            self.requests,
            self.hedges,
            100.0 * self.hedge_rate(),
            self.hedge_wins,
            self.primary_wins,
            self.denied_budget,
            self.skipped_cold,
            self.skipped_deadline,
            self.skipped_backpressure,
            self.errors,
            self.rate_limited,
            self.pushbacks,
            self.pushbacks_clamped,
            self.deadline_exceeded,
            self.unmeasured,
        )?;
        match self.delay {
            Some(d) => write!(f, "{d:?}"),
            None => f.write_str("none"),
        }
    }
}
