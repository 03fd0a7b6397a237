//! [`Targets`]: which hedger a request belongs to; one for all, or one per target.

use std::boxed::Box;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, PoisonError, RwLock};

use crate::budget::Budget;
use crate::clock::Clock;
use crate::hedge::WindowKind;
use crate::hedge::{HedgeConfig, HedgeError, HedgePolicy, Hedger};
use crate::registry::Registry;

/// Finds the hedger that learns and decides for a request.
///
/// Latency is a property of each target (host, route, model), so a gateway that talks to
/// several keeps one hedger per target: [`PerTarget`]. A single `Arc` of a hedger (any
/// [`Hedger`], or an `Arc<dyn HedgePolicy + Send + Sync>`) serves every request with one
/// hedger.
///
/// ```
/// use std::sync::Arc;
/// use tailguard::clock::StdClock;
/// use tailguard::hedge::{HedgeConfig, HedgePolicy, Hedger};
/// use tailguard::tower::Targets;
///
/// let hedger = Arc::new(Hedger::new(StdClock::new(), HedgeConfig::new()).unwrap());
/// let a = http::Request::get("http://a.example/").body(()).unwrap();
/// let b = http::Request::get("http://b.example/").body(()).unwrap();
/// // An `Arc` of a hedger: the same one for every request.
/// assert!(Arc::ptr_eq(&hedger.hedger_for(&a).unwrap(), &hedger));
/// assert!(Arc::ptr_eq(&hedger.hedger_for(&b).unwrap(), &hedger));
/// let shared: Arc<dyn HedgePolicy + Send + Sync> = hedger.clone();
/// assert!(shared.hedger_for(&b).is_some());
///
/// // A choice of one's own: hedge one host, pass the others through.
/// struct OnlyA(Arc<Hedger<StdClock>>);
/// impl Targets<http::Request<()>> for OnlyA {
///     type Hedger = Hedger<StdClock>;
///     fn hedger_for(&self, request: &http::Request<()>) -> Option<Arc<Self::Hedger>> {
///         (request.uri().host() == Some("a.example")).then(|| Arc::clone(&self.0))
///     }
/// }
/// let only_a = OnlyA(hedger);
/// assert!(only_a.hedger_for(&a).is_some());
/// assert!(only_a.hedger_for(&b).is_none());
/// ```
pub trait Targets<Req> {
    /// The hedgers' type.
    type Hedger: HedgePolicy + ?Sized;

    /// The hedger for `request`'s target, or `None` to pass the request through
    /// unhedged.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use tailguard::clock::StdClock;
    /// use tailguard::hedge::HedgeConfig;
    /// use tailguard::tower::{PerTarget, Targets};
    ///
    /// let by_host = |req: &http::Request<()>| req.uri().host().map(str::to_owned);
    /// let targets: PerTarget<_, _, _> = PerTarget::new(StdClock::new(), HedgeConfig::new(), by_host).unwrap();
    /// let targets = Arc::new(targets);
    /// let get = |uri: &str| http::Request::get(uri).body(()).unwrap();
    /// let first = targets.hedger_for(&get("http://a.example/x")).unwrap();
    /// let again = targets.hedger_for(&get("http://a.example/y")).unwrap(); // the same host
    /// let other = targets.hedger_for(&get("http://b.example/x")).unwrap();
    /// assert!(Arc::ptr_eq(&first, &again));
    /// assert!(!Arc::ptr_eq(&first, &other));
    /// ```
    fn hedger_for(&self, request: &Req) -> Option<Arc<Self::Hedger>>;
}

impl<Req, C, B, M, const N: usize> Targets<Req> for Arc<Hedger<C, B, M, N>>
where
    C: Clock,
    B: Budget,
    M: WindowKind,
{
    type Hedger = Hedger<C, B, M, N>;

    fn hedger_for(&self, _request: &Req) -> Option<Arc<Self::Hedger>> {
        Some(Arc::clone(self))
    }
}

impl<Req> Targets<Req> for Arc<dyn HedgePolicy + Send + Sync> {
    type Hedger = dyn HedgePolicy + Send + Sync;

    fn hedger_for(&self, _request: &Req) -> Option<Arc<Self::Hedger>> {
        Some(Arc::clone(self))
    }
}

type MakeHedger<K, H> = dyn Fn(&K) -> Result<H, HedgeError> + Send + Sync;

/// One hedger of type `H` per target, kept in a [`Registry`] of at most `CAP` targets.
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
/// // Room for one target (the default is 16).
/// let targets: PerTarget<_, _, _, 1> = PerTarget::new(StdClock::new(), HedgeConfig::new(), by_host).unwrap();
/// let targets = Arc::new(targets);
/// let a = http::Request::get("http://a.example/x").body(()).unwrap();
/// let b = http::Request::get("http://b.example/x").body(()).unwrap();
/// assert!(targets.hedger_for(&a).is_some());
/// assert!(targets.hedger_for(&b).is_none()); // full: passed through and counted
/// assert_eq!(targets.untracked(), 1);
/// ```
///
/// Latency per route, one budget per host: every route's hedger (here an integer-mapped
/// one) draws on a shared `Arc` of the budget, so hedging stays within the host's share
/// of traffic however many routes there are.
///
/// ```
/// use std::sync::Arc;
/// use tailguard::budget::{Budget, RatioBudget};
/// use tailguard::clock::StdClock;
/// use tailguard::hedge::{HedgeConfig, Hedger};
/// use tailguard::sketch::presets;
/// use tailguard::tower::{PerTarget, Targets};
///
/// let host_budget = Arc::new(RatioBudget::new(0.05, 20).unwrap());
/// host_budget.drain(); // it starts full; empty it to watch the deposits
/// let budget = Arc::clone(&host_budget);
/// let by_route = |req: &http::Request<()>| req.uri().path().to_owned();
/// let targets: PerTarget<_, _, _> = PerTarget::with_factory(by_route, move |_route: &String| {
///     let config = HedgeConfig::new();
///     Hedger::with_budget(StdClock::new(), config, Arc::clone(&budget), presets::INT_LATENCY_LAYOUT)
/// });
/// let targets = Arc::new(targets);
/// for path in ["/search", "/items", "/search"] {
///     let request = http::Request::get(path).body(()).unwrap();
///     targets.hedger_for(&request).unwrap().start();
/// }
/// let mut routes = 0;
/// targets.for_each(|_, _| routes += 1);
/// assert_eq!(routes, 2);
/// // Three requests over two routes deposited into the one budget.
/// assert!((host_budget.balance() - 0.15).abs() < 1e-6);
/// ```
pub struct PerTarget<K, F, H, const CAP: usize = 16> {
    key: F,
    make: Box<MakeHedger<K, H>>,
    hedgers: RwLock<Registry<K, Arc<H>, CAP>>,
    untracked: AtomicU64,
}

impl<K: Eq, F, C: Clock + Clone + Send + Sync + 'static, const CAP: usize>
    PerTarget<K, F, Hedger<C>, CAP>
{
    /// One hedger per target, each made by `Hedger::new(clock, config)`. Errors if
    /// `config` is invalid.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use tailguard::clock::StdClock;
    /// use tailguard::hedge::HedgeConfig;
    /// use tailguard::tower::{PerTarget, Targets};
    ///
    /// let by_path = |req: &http::Request<()>| req.uri().path().to_owned();
    /// let config = HedgeConfig::new().with_percentile(0.99);
    /// let targets: PerTarget<_, _, _> = PerTarget::new(StdClock::new(), config, by_path).unwrap();
    /// let targets = Arc::new(targets);
    /// let request = http::Request::get("/search").body(()).unwrap();
    /// assert_eq!(targets.hedger_for(&request).unwrap().config().percentile(), 0.99);
    ///
    /// // An invalid configuration is refused at once, not at the first request.
    /// let invalid = HedgeConfig::new().with_percentile(1.5);
    /// assert!(PerTarget::<String, _, _>::new(StdClock::new(), invalid, by_path).is_err());
    /// ```
    pub fn new(clock: C, config: HedgeConfig, key: F) -> Result<Self, HedgeError> {
        Hedger::new(clock.clone(), config)?;
        Ok(Self::with_factory(key, move |_| {
            Hedger::new(clock.clone(), config)
        }))
    }
}

impl<K: Eq, F, H, const CAP: usize> PerTarget<K, F, H, CAP> {
    /// One hedger per target, each made by `make`: any hedger type, a budget shared by
    /// all (an `Arc` of it), or a configuration of its own per target. A target whose
    /// hedger cannot be made passes through and is counted in
    /// [`untracked`](PerTarget::untracked). `make` runs under the registry's lock: it
    /// must not send requests through these targets.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use tailguard::clock::StdClock;
    /// use tailguard::hedge::{HedgeConfig, Hedger};
    /// use tailguard::tower::{PerTarget, Targets};
    ///
    /// let by_path = |req: &http::Request<()>| req.uri().path().to_owned();
    /// // A configuration per route; "/bad" gets one that is refused.
    /// let targets: PerTarget<_, _, _> = PerTarget::with_factory(by_path, |path: &String| {
    ///     let percentile = match path.as_str() {
    ///         "/search" => 0.99,
    ///         "/bad" => 1.5,
    ///         _ => 0.9,
    ///     };
    ///     Hedger::new(StdClock::new(), HedgeConfig::new().with_percentile(percentile))
    /// });
    /// let targets = Arc::new(targets);
    /// let get = |path: &str| http::Request::get(path).body(()).unwrap();
    /// assert_eq!(targets.hedger_for(&get("/search")).unwrap().config().percentile(), 0.99);
    /// assert_eq!(targets.hedger_for(&get("/items")).unwrap().config().percentile(), 0.9);
    /// assert!(targets.hedger_for(&get("/bad")).is_none()); // passed through unhedged
    /// assert_eq!(targets.untracked(), 1);
    /// ```
    pub fn with_factory(
        key: F,
        make: impl Fn(&K) -> Result<H, HedgeError> + Send + Sync + 'static,
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
    ///
    /// ```
    /// use std::sync::Arc;
    /// use tailguard::clock::StdClock;
    /// use tailguard::hedge::HedgeConfig;
    /// use tailguard::tower::{PerTarget, Targets};
    ///
    /// let by_host = |req: &http::Request<()>| req.uri().host().map(str::to_owned);
    /// // Room for two targets.
    /// let targets: PerTarget<_, _, _, 2> = PerTarget::new(StdClock::new(), HedgeConfig::new(), by_host).unwrap();
    /// let targets = Arc::new(targets);
    /// for host in ["a", "b", "c", "a", "c"] {
    ///     let request = http::Request::get(format!("http://{host}.example/")).body(()).unwrap();
    ///     targets.hedger_for(&request);
    /// }
    /// assert_eq!(targets.untracked(), 2); // both requests to c: counted each time
    /// ```
    pub fn untracked(&self) -> u64 {
        self.untracked.load(Relaxed)
    }

    /// Calls `f` with every target and its hedger, in the order they appeared (to report
    /// [`Stats`](crate::hedge::Stats) per target, say): the targets registered when it is
    /// called, walked without holding the registry's lock, so `f` may send requests
    /// through these targets, new ones included.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use tailguard::clock::StdClock;
    /// use tailguard::hedge::HedgeConfig;
    /// use tailguard::tower::{PerTarget, Targets};
    ///
    /// let by_path = |req: &http::Request<()>| req.uri().path().to_owned();
    /// let targets: PerTarget<_, _, _> = PerTarget::new(StdClock::new(), HedgeConfig::new(), by_path).unwrap();
    /// let targets = Arc::new(targets);
    /// for path in ["/items", "/search", "/items", "/search", "/items"] {
    ///     let request = http::Request::get(path).body(()).unwrap();
    ///     targets.hedger_for(&request).unwrap().start();
    /// }
    /// let mut seen = Vec::new();
    /// targets.for_each(|path, hedger| seen.push((path.clone(), hedger.stats().requests)));
    /// assert_eq!(seen, [("/items".to_owned(), 3), ("/search".to_owned(), 2)]); // in order of appearance
    /// ```
    pub fn for_each(&self, mut f: impl FnMut(&K, &H))
    where
        K: Clone,
    {
        // A snapshot, taken under the lock and walked without it: a new target's first
        // request takes the write lock, which `f` would wait for behind its own read.
        let entries: std::vec::Vec<(K, Arc<H>)> = self
            .hedgers
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .map(|(key, hedger)| (key.clone(), Arc::clone(hedger)))
            .collect();
        for (key, hedger) in &entries {
            f(key, hedger);
        }
    }
}

impl<Req, K, F, H, const CAP: usize> Targets<Req> for Arc<PerTarget<K, F, H, CAP>>
where
    K: Eq + Clone,
    F: Fn(&Req) -> K,
    H: HedgePolicy,
{
    type Hedger = H;

    fn hedger_for(&self, request: &Req) -> Option<Arc<H>> {
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

impl<K: Eq + core::fmt::Debug, F, H, const CAP: usize> core::fmt::Debug
    for PerTarget<K, F, H, CAP>
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
