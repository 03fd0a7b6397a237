//! Hedging for [tower] services (feature `tower`): wrap any `Service` whose requests can
//! be cloned, and slow requests get a backup copy at the learned percentile; the first
//! answer wins and the other attempt is dropped (cancelled).
//!
//! * [`HedgeLayer`] / [`Hedge`]: the layer and service, driving any hedger (every
//!   [`Hedger`](crate::hedge::Hedger), through [`HedgePolicy`])
//!   with the same race as [`race`](crate::hedge::race).
//! * [`RequestPolicy`]: which requests are safe to send twice and how results count.
//!   [`HttpPolicy`], the default, hedges GET, HEAD and OPTIONS, backs off on 429 and
//!   503 (and sends no backup for as long as their `Retry-After` asks:
//!   [`parse_retry_after`]), and sends no backup that could not beat a request's
//!   [`Deadline`](crate::deadline::Deadline) extension.
//! * [`Targets`]: one hedger for everything (an `Arc` of it), or one per target
//!   ([`PerTarget`], over the crate's [`Registry`](crate::registry::Registry)).
//! * [`FirstByteLayer`]: makes an HTTP service answer at the first body byte instead of
//!   the response headers. Streaming endpoints (LLM completions, server-sent events) send
//!   headers at once; what is slow is the first token, so hedging must measure, and race,
//!   at the first byte.
//!
//! The layer takes any timer as `sleep` (`tokio::time::sleep`, say), so it works on any
//! runtime.
//!
//! ```
//! use std::convert::Infallible;
//! use std::sync::Arc;
//! use std::time::Duration;
//! use http::{Request, Response};
//! use tailguard::clock::StdClock;
//! use tailguard::hedge::{HedgeConfig, Hedger};
//! use tailguard::tower::HedgeLayer;
//! use tower::{service_fn, Layer, ServiceExt};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let hedger = Arc::new(Hedger::new(StdClock::new(), HedgeConfig::new()).unwrap());
//! let backend = service_fn(|req: Request<String>| async move {
//!     Ok::<_, Infallible>(Response::new(format!("hello from {}", req.uri())))
//! });
//! let client = HedgeLayer::new(Arc::clone(&hedger), tokio::time::sleep).layer(backend);
//!
//! let request = Request::get("/greeting").body(String::new()).unwrap();
//! let response = client.oneshot(request).await.unwrap();
//! assert_eq!(response.body(), "hello from /greeting");
//! assert_eq!(hedger.stats().primary_wins, 1);
//! # }
//! ```
//!
//! [tower]: https://docs.rs/tower

mod first_byte;
mod policy;
mod retry_after;
mod targets;

use core::future::Future;
use core::marker::PhantomData;
use core::pin::Pin;
use core::task::{Context, Poll};
use core::time::Duration;
use std::sync::Arc;

use pin_project_lite::pin_project;
use tower_layer::Layer;
use tower_service::Service;

use crate::hedge::{HedgePolicy, RaceCore, RaceEnd, Sleep, Slots};

pub use crate::hedge::Outcome;
pub use first_byte::{FirstByte, FirstByteError, FirstByteFuture, FirstByteLayer, Prefetched};
pub use policy::{HttpPolicy, RequestPolicy};
pub use retry_after::parse_retry_after;
pub use targets::{PerTarget, Targets};

/// A tower [`Layer`] that wraps services in [`Hedge`].
///
/// `targets` finds each request's hedger (an `Arc` of any hedger, or an
/// `Arc<PerTarget>`); `sleep(d)` makes a future that completes after `d`
/// (`tokio::time::sleep`, say; see [`Sleep`]). The
/// policy is [`HttpPolicy`] unless [`policy`](HedgeLayer::policy) sets another.
///
/// The hedgers' clock and `sleep` must keep the same time: a backup goes out when a timer
/// fires *and* the hedger's clock says the delay has passed. With tokio's paused time (in
/// tests), a `StdClock` hedger never sees the delay pass and sends no backup: read
/// `tokio::time::Instant` through an [`FnClock`](crate::clock::FnClock), as below.
///
/// A slow GET gets a backup after the hedge delay (here a fixed cold-start delay of
/// 50 ms), and the backup's answer wins:
///
/// ```
/// use std::convert::Infallible;
/// use std::sync::atomic::{AtomicU32, Ordering::SeqCst};
/// use std::sync::Arc;
/// use std::time::Duration;
/// use http::{Request, Response};
/// use tailguard::clock::{FnClock, Instant};
/// use tailguard::hedge::{ColdStart, HedgeConfig, Hedger};
/// use tailguard::tower::HedgeLayer;
/// use tower::{service_fn, ServiceBuilder, ServiceExt};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// tokio::time::pause(); // tokio's timers skip ahead: no real waiting
/// let config = HedgeConfig::new().with_cold_start(ColdStart::Delay(Duration::from_millis(50)));
/// let origin = tokio::time::Instant::now(); // the hedger reads the timers' (paused) time
/// let clock = FnClock::new(move || Instant::from_nanos(origin.elapsed().as_nanos() as u64));
/// let hedger = Arc::new(Hedger::new(clock, config).unwrap());
/// let calls = Arc::new(AtomicU32::new(0));
/// let counter = Arc::clone(&calls);
/// let backend = service_fn(move |_req: Request<()>| {
///     let first = counter.fetch_add(1, SeqCst) == 0;
///     async move {
///         let (took, who) = if first { (1000, "primary") } else { (10, "backup") };
///         tokio::time::sleep(Duration::from_millis(took)).await;
///         Ok::<_, Infallible>(Response::new(who))
///     }
/// });
/// let client = ServiceBuilder::new()
///     .layer(HedgeLayer::new(Arc::clone(&hedger), tokio::time::sleep))
///     .service(backend);
///
/// let response = client.oneshot(Request::get("/slow").body(()).unwrap()).await.unwrap();
/// assert_eq!(*response.body(), "backup");
/// assert!(origin.elapsed() < Duration::from_millis(100)); // 50 ms + 10 ms, not 1 s
/// assert_eq!(calls.load(SeqCst), 2);
/// assert_eq!((hedger.stats().hedges, hedger.stats().hedge_wins), (1, 1));
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct HedgeLayer<T, Sl, P = HttpPolicy> {
    targets: T,
    sleep: Sl,
    policy: P,
}

impl<T, Sl> HedgeLayer<T, Sl> {
    /// A layer hedging with `targets`' hedgers, timed by `sleep`, under [`HttpPolicy`].
    ///
    /// ```
    /// use std::convert::Infallible;
    /// use std::sync::Arc;
    /// use http::{Request, Response};
    /// use tailguard::clock::StdClock;
    /// use tailguard::hedge::{HedgeConfig, Hedger};
    /// use tailguard::tower::HedgeLayer;
    /// use tower::{service_fn, Layer, ServiceExt};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let hedger = Arc::new(Hedger::new(StdClock::new(), HedgeConfig::new()).unwrap());
    /// let layer = HedgeLayer::new(Arc::clone(&hedger), tokio::time::sleep);
    /// let backend = service_fn(|req: Request<()>| async move {
    ///     Ok::<_, Infallible>(Response::new(req.method().to_string()))
    /// });
    ///
    /// // HttpPolicy: a POST is not safe to send twice, so it passes through unrecorded.
    /// let post = Request::post("/orders").body(()).unwrap();
    /// let response = layer.layer(backend.clone()).oneshot(post).await.unwrap();
    /// assert_eq!(response.body(), "POST");
    /// assert_eq!(hedger.stats().requests, 0);
    ///
    /// let get = Request::get("/orders/7").body(()).unwrap();
    /// let response = layer.layer(backend).oneshot(get).await.unwrap();
    /// assert_eq!(response.body(), "GET");
    /// assert_eq!(hedger.stats().requests, 1);
    /// # }
    /// ```
    pub fn new(targets: T, sleep: Sl) -> Self {
        HedgeLayer {
            targets,
            sleep,
            policy: HttpPolicy,
        }
    }
}

impl<T, Sl, P> HedgeLayer<T, Sl, P> {
    /// The same layer under another policy.
    ///
    /// Hedging a service whose requests are not HTTP (key lookups, here), with a policy
    /// that may send every request twice:
    ///
    /// ```
    /// use std::convert::Infallible;
    /// use std::sync::atomic::{AtomicU32, Ordering::SeqCst};
    /// use std::sync::Arc;
    /// use std::time::Duration;
    /// use tailguard::clock::{FnClock, Instant};
    /// use tailguard::hedge::{ColdStart, HedgeConfig, Hedger};
    /// use tailguard::tower::{HedgeLayer, Outcome, RequestPolicy};
    /// use tower::{service_fn, Layer, ServiceExt};
    ///
    /// /// Lookups are reads: always safe to send twice.
    /// #[derive(Clone)]
    /// struct Lookups;
    /// impl RequestPolicy<u32, String, Infallible> for Lookups {
    ///     fn clone_request(&self, key: &u32) -> Option<u32> {
    ///         Some(*key)
    ///     }
    ///     fn classify(&self, _: &Result<String, Infallible>) -> Outcome {
    ///         Outcome::Success
    ///     }
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// tokio::time::pause();
    /// let config = HedgeConfig::new().with_cold_start(ColdStart::Delay(Duration::from_millis(50)));
    /// let origin = tokio::time::Instant::now(); // the hedger reads the timers' (paused) time
    /// let clock = FnClock::new(move || Instant::from_nanos(origin.elapsed().as_nanos() as u64));
    /// let hedger = Arc::new(Hedger::new(clock, config).unwrap());
    /// let calls = Arc::new(AtomicU32::new(0));
    /// let counter = Arc::clone(&calls);
    /// let store = service_fn(move |key: u32| {
    ///     let first = counter.fetch_add(1, SeqCst) == 0;
    ///     async move {
    ///         let took = if first { 1000 } else { 10 }; // the first copy is stuck
    ///         tokio::time::sleep(Duration::from_millis(took)).await;
    ///         Ok::<_, Infallible>(format!("value of {key}"))
    ///     }
    /// });
    /// let client = HedgeLayer::new(Arc::clone(&hedger), tokio::time::sleep)
    ///     .policy(Lookups)
    ///     .layer(store);
    /// assert_eq!(client.oneshot(7).await.unwrap(), "value of 7");
    /// assert_eq!(calls.load(SeqCst), 2);
    /// assert_eq!(hedger.stats().hedge_wins, 1);
    /// # }
    /// ```
    pub fn policy<P2>(self, policy: P2) -> HedgeLayer<T, Sl, P2> {
        HedgeLayer {
            targets: self.targets,
            sleep: self.sleep,
            policy,
        }
    }
}

impl<S, T: Clone, Sl: Clone, P: Clone> Layer<S> for HedgeLayer<T, Sl, P> {
    type Service = Hedge<S, T, Sl, P>;

    fn layer(&self, inner: S) -> Self::Service {
        Hedge {
            inner,
            targets: self.targets.clone(),
            sleep: self.sleep.clone(),
            policy: self.policy.clone(),
        }
    }
}

/// A service that hedges its inner service's requests; made by [`HedgeLayer`].
///
/// Per request: the policy gives a copy of the request (none: pass through untouched),
/// then the [`Targets`] give the hedger (none: pass through). The primary goes to the
/// inner service at once; if the hedger says so, the copy goes to a clone of the inner service (which is
/// polled for readiness first: a backup waiting for it counts as sent, in
/// [`Stats::hedges`](crate::hedge::Stats::hedges) and the budget, and as running, so a
/// primary's failure then awaits it). The first result the policy counts as
/// [`Outcome::Success`] is returned and the other attempt is dropped, which cancels it
/// (for a hyper client, closes its connection). If both fail, the last failure is
/// returned as it is. Up to the hedger's `max_hedges` backups are sent per request (the
/// configuration allows at most [`MAX_HEDGES`](crate::hedge::MAX_HEDGES), and the service
/// has room for that many). One latency per request is learned; see
/// [what is recorded](crate::hedge#what-is-recorded).
///
/// The hedge timer (`sleep`) is made only for a request still running at the end of a
/// poll, so a request answered in its first poll (a cache, a local service) costs no
/// runtime timer; the delay then counts from the end of that first poll.
///
/// The losing attempt is dropped as soon as the other answers:
///
/// ```
/// use std::convert::Infallible;
/// use std::sync::atomic::{AtomicU32, Ordering::SeqCst};
/// use std::sync::Arc;
/// use std::time::Duration;
/// use http::{Request, Response};
/// use tailguard::clock::{FnClock, Instant};
/// use tailguard::hedge::{ColdStart, HedgeConfig, Hedger};
/// use tailguard::tower::HedgeLayer;
/// use tower::{service_fn, Layer, ServiceExt};
///
/// /// Counts an attempt as running until it is finished or dropped.
/// struct Running(Arc<AtomicU32>);
/// impl Drop for Running {
///     fn drop(&mut self) {
///         self.0.fetch_sub(1, SeqCst);
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// tokio::time::pause();
/// let config = HedgeConfig::new().with_cold_start(ColdStart::Delay(Duration::from_millis(20)));
/// let origin = tokio::time::Instant::now(); // the hedger reads the timers' (paused) time
/// let clock = FnClock::new(move || Instant::from_nanos(origin.elapsed().as_nanos() as u64));
/// let hedger = Arc::new(Hedger::new(clock, config).unwrap());
/// let (calls, running) = (Arc::new(AtomicU32::new(0)), Arc::new(AtomicU32::new(0)));
/// let (counter, gauge) = (Arc::clone(&calls), Arc::clone(&running));
/// let backend = service_fn(move |_req: Request<()>| {
///     let took = if counter.fetch_add(1, SeqCst) == 0 { 5_000 } else { 10 };
///     gauge.fetch_add(1, SeqCst);
///     let attempt = Running(Arc::clone(&gauge));
///     async move {
///         let _attempt = attempt;
///         tokio::time::sleep(Duration::from_millis(took)).await;
///         Ok::<_, Infallible>(Response::new(took))
///     }
/// });
/// let client = HedgeLayer::new(Arc::clone(&hedger), tokio::time::sleep).layer(backend);
///
/// let response = client.oneshot(Request::get("/").body(()).unwrap()).await.unwrap();
/// assert_eq!(*response.body(), 10); // the backup won
/// assert_eq!(calls.load(SeqCst), 2);
/// assert_eq!(running.load(SeqCst), 0); // the 5 s primary was dropped (cancelled)
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct Hedge<S, T, Sl, P = HttpPolicy> {
    inner: S,
    targets: T,
    sleep: Sl,
    policy: P,
}

impl<S, T, Sl, P, Req> Service<Req> for Hedge<S, T, Sl, P>
where
    S: Service<Req> + Clone,
    T: Targets<Req>,
    Sl: Sleep + Clone,
    P: RequestPolicy<Req, S::Response, S::Error> + Clone,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = ResponseFuture<S, Req, T::Hedger, Sl, P>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Req) -> Self::Future {
        // The policy first: a request that must not be hedged does not even register
        // its target.
        let race = self.policy.clone_request(&request).and_then(|copy| {
            let hedger = self.targets.hedger_for(&request)?;
            // The ready service takes the primary; the backup gets a clone and waits for
            // its readiness if it is ever sent.
            let backup = Oneshot::new(self.inner.clone(), copy);
            let ticket = match self.policy.deadline(&request) {
                Some(deadline) => hedger.start_with_deadline(deadline),
                None => hedger.start(),
            };
            let core = RaceCore::new(ticket);
            Some(Race {
                hedger,
                core,
                spare: Some(backup),
            })
        });
        ResponseFuture {
            primary: Some(self.inner.call(request)),
            first_backup: None,
            second_backup: None,
            timer: None,
            race,
            sleep: self.sleep.clone(),
            policy: self.policy.clone(),
        }
    }
}

/// The hedging state of one request.
struct Race<S: Service<Req>, Req, H: ?Sized> {
    hedger: Arc<H>,
    core: RaceCore<Result<S::Response, S::Error>>,
    /// The next backup attempt, not started; moved into a pinned slot when sent.
    spare: Option<Oneshot<S, Req>>,
}

pin_project! {
    /// The response future of [`Hedge`]. Polled again after it has answered, it stays
    /// pending and starts nothing: no backup is sent, counted or paid for.
    ///
    /// ```
    /// use std::convert::Infallible;
    /// use std::future::Future;
    /// use std::pin::pin;
    /// use std::sync::atomic::{AtomicU32, Ordering::SeqCst};
    /// use std::sync::Arc;
    /// use std::task::{Context, Poll, Waker};
    /// use http::{Request, Response};
    /// use tailguard::clock::StdClock;
    /// use tailguard::hedge::{HedgeConfig, Hedger};
    /// use tailguard::tower::HedgeLayer;
    /// use tower::{service_fn, Layer, Service};
    ///
    /// let hedger = Arc::new(Hedger::new(StdClock::new(), HedgeConfig::new()).unwrap());
    /// let calls = Arc::new(AtomicU32::new(0));
    /// let counter = Arc::clone(&calls);
    /// let backend = service_fn(move |_req: Request<()>| {
    ///     counter.fetch_add(1, SeqCst);
    ///     async { Ok::<_, Infallible>(Response::new("cached")) } // answers in its first poll
    /// });
    /// let mut client = HedgeLayer::new(Arc::clone(&hedger), tokio::time::sleep).layer(backend);
    ///
    /// let mut cx = Context::from_waker(Waker::noop());
    /// assert!(client.poll_ready(&mut cx).is_ready());
    /// let mut response = pin!(client.call(Request::get("/").body(()).unwrap()));
    /// assert!(matches!(response.as_mut().poll(&mut cx), Poll::Ready(Ok(_))));
    /// assert!(response.as_mut().poll(&mut cx).is_pending()); // answered: pending from now on
    /// assert_eq!(calls.load(SeqCst), 1); // and no backup was sent
    /// assert_eq!((hedger.stats().requests, hedger.stats().hedges), (1, 0));
    /// ```
    pub struct ResponseFuture<S, Req, H, Sl, P>
    where
        S: Service<Req>,
        H: ?Sized,
        Sl: Sleep,
    {
        #[pin]
        primary: Option<S::Future>,
        // One slot per hedge, `MAX_HEDGES` of them.
        #[pin]
        first_backup: Option<Oneshot<S, Req>>,
        #[pin]
        second_backup: Option<Oneshot<S, Req>>,
        #[pin]
        timer: Option<Timer<Sl::Future>>,
        // `None`: a request passed through unhedged.
        race: Option<Race<S, Req, H>>,
        sleep: Sl,
        policy: P,
    }
}

impl<S, Req, H, Sl, P> Future for ResponseFuture<S, Req, H, Sl, P>
where
    S: Service<Req> + Clone,
    H: HedgePolicy + ?Sized,
    Sl: Sleep,
    P: RequestPolicy<Req, S::Response, S::Error>,
{
    type Output = Result<S::Response, S::Error>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut this = self.project();
        let Some(race) = this.race.as_mut() else {
            // Passed through: the primary alone, emptied once done so that a stray
            // extra poll never reaches a finished inner future.
            let Some(primary) = this.primary.as_mut().as_pin_mut() else {
                return Poll::Pending;
            };
            let output = core::task::ready!(primary.poll(cx));
            this.primary.set(None);
            return Poll::Ready(output);
        };
        let policy = &*this.policy;
        let spare = &mut race.spare;
        let max_hedges = race.hedger.max_hedges();
        // Backups sent so far: the one made next is hedge `sent + 1`.
        let mut sent = race.core.backups();
        let mut make_backup = || {
            let backup = spare.take()?;
            sent = sent.saturating_add(1);
            // Another hedge may follow this one: prepare its copy now (only requests
            // that are hedged pay for it). None for the last hedge allowed; and a request
            // that cannot be copied again sends no more backups: either way the hedger is
            // not asked for one.
            if sent < max_hedges {
                *spare = backup.try_clone(policy);
            }
            let last = spare.is_none();
            Some((backup, last))
        };
        // A timer found ready when it is armed fires in this poll (the race polls it
        // again), as the race's own timer would, a couple of times at most: a timer that
        // is always ready then costs a wake-up per round, not a busy loop here.
        let mut rounds = 0u8;
        loop {
            let slots = Slots {
                primary: this.primary.as_mut(),
                backups: [this.first_backup.as_mut(), this.second_backup.as_mut()],
                timer: this.timer.as_mut(),
            };
            let polled = race.core.poll(
                &*race.hedger,
                cx,
                slots,
                &mut Unarmed::<Sl>(PhantomData),
                &mut make_backup,
                |output| policy.classify(output),
            );
            if let Poll::Ready(end) = polled {
                // Done with the race: a stray extra poll then takes the pass-through
                // path with no primary (pending), rather than asking the hedger again and
                // sending the spare copy to the backend. (The slots are already empty.)
                *this.race = None;
                return Poll::Ready(match end {
                    RaceEnd::Won { output, .. } | RaceEnd::Failed { output, .. } => output,
                });
            }
            // Still running: now the hedge timer, if the hedger asked for one, is
            // registered with the runtime. A request answered in its first poll (a cache,
            // a local service) never arms one, nor pays to deregister it.
            let Some(timer) = this.timer.as_mut().as_pin_mut() else {
                return Poll::Pending;
            };
            if timer.arm(this.sleep, cx).is_pending() {
                return Poll::Pending;
            }
            if rounds >= 2 {
                cx.waker().wake_by_ref(); // the race sees it fire on the next poll
                return Poll::Pending;
            }
            rounds = rounds.saturating_add(1);
        }
    }
}

pin_project! {
    /// The timer of the next hedge. The race makes it unarmed (a duration only: no
    /// runtime timer, no clock read); the response future arms it, making and polling
    /// the runtime's timer, only when the race is still running at the end of a poll.
    /// Unarmed, it never completes; armed, it completes when the runtime's timer does.
    struct Timer<F> {
        duration: Duration,
        fired: bool,
        #[pin]
        armed: Option<F>,
    }
}

impl<F: Future<Output = ()>> Timer<F> {
    /// Arms the timer (once) and polls it: ready if it has fired.
    fn arm<Sl: Sleep<Future = F>>(
        self: Pin<&mut Self>,
        sleep: &mut Sl,
        cx: &mut Context<'_>,
    ) -> Poll<()> {
        let mut this = self.project();
        if *this.fired {
            return Poll::Ready(());
        }
        if this.armed.is_none() {
            this.armed.set(Some(sleep.sleep(*this.duration)));
        }
        let Some(armed) = this.armed.as_mut().as_pin_mut() else {
            return Poll::Pending;
        };
        core::task::ready!(armed.poll(cx));
        // Fired: the runtime's timer is done with; the race reads `fired`.
        this.armed.set(None);
        *this.fired = true;
        Poll::Ready(())
    }
}

impl<F: Future<Output = ()>> Future for Timer<F> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.project();
        if *this.fired {
            return Poll::Ready(());
        }
        match this.armed.as_pin_mut() {
            Some(armed) => {
                core::task::ready!(armed.poll(cx));
                Poll::Ready(())
            }
            // Not armed yet: the response future arms it before it returns `Pending`.
            None => Poll::Pending,
        }
    }
}

/// The [`Sleep`] the race is given: it makes unarmed [`Timer`]s of `Sl`'s futures.
struct Unarmed<Sl>(PhantomData<fn() -> Sl>);

impl<Sl: Sleep> Sleep for Unarmed<Sl> {
    type Future = Timer<Sl::Future>;

    fn sleep(&mut self, duration: Duration) -> Self::Future {
        Timer {
            duration,
            fired: false,
            armed: None,
        }
    }
}

impl<S, Req, H, Sl, P> core::fmt::Debug for ResponseFuture<S, Req, H, Sl, P>
where
    S: Service<Req>,
    H: ?Sized,
    Sl: Sleep,
{
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ResponseFuture")
            .field("hedged", &self.race.is_some())
            .field("backup_running", &self.first_backup.is_some())
            .finish_non_exhaustive()
    }
}

pin_project! {
    /// A backup attempt: waits for the service to be ready, then calls it once.
    struct Oneshot<S, Req>
    where
        S: Service<Req>,
    {
        service: S,
        request: Option<Req>,
        #[pin]
        call: Option<S::Future>,
    }
}

impl<S: Service<Req>, Req> Oneshot<S, Req> {
    fn new(service: S, request: Req) -> Self {
        Oneshot {
            service,
            request: Some(request),
            call: None,
        }
    }

    /// Another unstarted copy of this attempt (`None` once started, or if the policy
    /// will not copy the request).
    fn try_clone<Res, E>(&self, policy: &impl RequestPolicy<Req, Res, E>) -> Option<Self>
    where
        S: Clone,
    {
        let request = policy.clone_request(self.request.as_ref()?)?;
        Some(Oneshot::new(self.service.clone(), request))
    }
}

impl<S: Service<Req>, Req> Future for Oneshot<S, Req> {
    type Output = Result<S::Response, S::Error>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut this = self.project();
        if this.call.is_none() {
            core::task::ready!(this.service.poll_ready(cx))?;
            let Some(request) = this.request.take() else {
                return Poll::Pending; // polled after completion
            };
            this.call.set(Some(this.service.call(request)));
        }
        match this.call.as_pin_mut() {
            Some(call) => call.poll(cx),
            None => Poll::Pending,
        }
    }
}
