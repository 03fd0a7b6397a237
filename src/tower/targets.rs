//! [`Targets`]: which hedger a request belongs to; one for all, or one per target.

use std::boxed::Box;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, PoisonError, RwLock};

use crate::budget::{Budget, RatioBudget};
use crate::clock::Clock;
use crate::hedge::{HedgeConfig, HedgeError, Hedger};
use crate::registry::Registry;

/// Finds the [`Hedger`] that learns and decides for a request.
///
/// Latency is a property of each target (host, route, model), so a gateway that talks to
/// several keeps one hedger per target: [`PerTarget`]. A single `Arc<Hedger>` serves
/// every request with one hedger.
pub trait Targets<Req> {
    /// The hedgers' clock.
    type Clock: Clock;
    /// The hedgers' budget.
    type Budget: Budget;

    /// The hedger for `request`'s target, or `None` to pass the request through
    /// unhedged.
    fn hedger_for(&self, request: &Req) -> Option<Arc<Hedger<Self::Clock, Self::Budget>>>;
}

impl<Req, C: Clock, B: Budget> Targets<Req> for Arc<Hedger<C, B>> {
    type Clock = C;
    type Budget = B;

    fn hedger_for(&self, _request: &Req) -> Option<Arc<Hedger<C, B>>> {
        Some(Arc::clone(self))
    }
}

type MakeHedger<K, C, B> = dyn Fn(&K) -> Result<Hedger<C, B>, HedgeError> + Send + Sync;

/// One hedger per target, kept in a [`Registry`] of at most `CAP` targets.
///
/// `key` maps a request to its target (the URI's authority, say). A target's hedger is
/// made on its first request. When the registry is full, requests to new targets pass
/// through unhedged and are counted in [`untracked`](PerTarget::untracked); nothing is
/// evicted, so no target's statistics vanish.
///
/// ```
/// use std::sync::Arc;
/// use tailguard::clock::StdClock;
/// use tailguard::hedge::HedgeConfig;
/// use tailguard::tower::{PerTarget, Targets};
///
/// let by_host = |req: &http::Request<()>| req.uri().authority().map(|a| a.to_string());
/// let targets = Arc::new(PerTarget::<_, _, _, _, 1>::new(StdClock::new(), HedgeConfig::new(), by_host).unwrap());
/// let a = http::Request::get("http://a.example/x").body(()).unwrap();
/// let b = http::Request::get("http://b.example/x").body(()).unwrap();
/// assert!(targets.hedger_for(&a).is_some());
/// assert!(targets.hedger_for(&b).is_none()); // full: passed through and counted
/// assert_eq!(targets.untracked(), 1);
/// ```
pub struct PerTarget<K, F, C, B = RatioBudget, const CAP: usize = 16> {
    key: F,
    make: Box<MakeHedger<K, C, B>>,
    hedgers: RwLock<Registry<K, Arc<Hedger<C, B>>, CAP>>,
    untracked: AtomicU64,
}

impl<K: Eq, F, C: Clock + Clone + Send + Sync + 'static, const CAP: usize>
    PerTarget<K, F, C, RatioBudget, CAP>
{
    /// One hedger per target, each made by `Hedger::new(clock, config)`. Errors if
    /// `config` is invalid.
    pub fn new(clock: C, config: HedgeConfig, key: F) -> Result<Self, HedgeError> {
        Hedger::new(clock.clone(), config)?;
        Ok(Self::with_factory(key, move |_| {
            Hedger::new(clock.clone(), config)
        }))
    }
}

impl<K: Eq, F, C, B, const CAP: usize> PerTarget<K, F, C, B, CAP> {
    /// One hedger per target, each made by `make` (a budget or configuration of its own
    /// per target, say). A target whose hedger cannot be made passes through and is
    /// counted in [`untracked`](PerTarget::untracked).
    pub fn with_factory(
        key: F,
        make: impl Fn(&K) -> Result<Hedger<C, B>, HedgeError> + Send + Sync + 'static,
    ) -> Self {
        PerTarget {
            key,
            make: Box::new(make),
            hedgers: RwLock::new(Registry::new()),
            untracked: AtomicU64::new(0),
        }
    }

    /// Requests passed through because their target could not be tracked (registry
    /// full, or the hedger could not be made).
    pub fn untracked(&self) -> u64 {
        self.untracked.load(Relaxed)
    }

    /// Calls `f` with every target and its hedger, in the order they appeared (to report
    /// [`Stats`](crate::hedge::Stats) per target, say).
    pub fn for_each(&self, mut f: impl FnMut(&K, &Hedger<C, B>)) {
        let hedgers = self.hedgers.read().unwrap_or_else(PoisonError::into_inner);
        for (key, hedger) in hedgers.iter() {
            f(key, hedger);
        }
    }
}

impl<Req, K, F, C, B, const CAP: usize> Targets<Req> for Arc<PerTarget<K, F, C, B, CAP>>
where
    K: Eq + Clone,
    F: Fn(&Req) -> K,
    C: Clock,
    B: Budget,
{
    type Clock = C;
    type Budget = B;

    fn hedger_for(&self, request: &Req) -> Option<Arc<Hedger<C, B>>> {
        let key = (self.key)(request);
        // A poisoned lock only means another thread panicked while holding it; the
        // registry itself is always consistent, so keep using it.
        if let Some(hedger) = self
            .hedgers
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&key)
        {
            return Some(Arc::clone(hedger));
        }
        let mut hedgers = self.hedgers.write().unwrap_or_else(PoisonError::into_inner);
        let made = hedgers.get_or_try_insert_with(key.clone(), || (self.make)(&key).map(Arc::new));
        match made {
            Ok(hedger) => Some(Arc::clone(hedger)),
            Err(_) => {
                self.untracked.fetch_add(1, Relaxed);
                None
            }
        }
    }
}

impl<K: Eq + core::fmt::Debug, F, C, B, const CAP: usize> core::fmt::Debug
    for PerTarget<K, F, C, B, CAP>
{
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let hedgers = self.hedgers.read().unwrap_or_else(PoisonError::into_inner);
        f.debug_struct("PerTarget")
            .field(
                "targets",
                &hedgers.iter().map(|(k, _)| k).collect::<std::vec::Vec<_>>(),
            )
            .field("untracked", &self.untracked())
            .finish_non_exhaustive()
    }
}
