//! The tower layer against a scripted mock backend, in tokio's paused time: the hedge fires
//! after the learned delay, the loser is dropped, non-idempotent requests are never
//! hedged, deadlines are respected, 429s back off (no backup for as long as their
//! `Retry-After` asks), failures are not latency, targets are tracked apart, and
//! streaming responses are measured at the first body byte.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU32, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode};
use http_body::{Body, Frame};
use http_body_util::BodyExt;
use tailguard::budget::{Budget, RatioBudget};
use tailguard::clock::{Clock, Instant};
use tailguard::deadline::Deadline;
use tailguard::hedge::{
    HedgeConfig, HedgeError, HedgePolicy, Hedger, IntHedger, SkipReason, MAX_HEDGES,
};
use tailguard::sketch::presets;
use tailguard::tower::{
    FirstByteLayer, Hedge, HedgeLayer, Outcome, PerTarget, Prefetched, RequestPolicy,
};
use tailguard_support::loopback::OneChunkBody;
use tower::{service_fn, Layer, Service, ServiceExt};

const MS: Duration = Duration::from_millis(1);

/// tokio's (pausable) time as a tailguard clock.
#[derive(Clone, Copy)]
struct TokioClock(tokio::time::Instant);

impl TokioClock {
    fn new() -> Self {
        TokioClock(tokio::time::Instant::now())
    }
}

impl Clock for TokioClock {
    fn now(&self) -> Instant {
        Instant::from_nanos(self.0.elapsed().as_nanos() as u64)
    }
}

/// What the backend does with one call.
#[derive(Clone, Copy)]
struct Reply {
    headers_after: Duration,
    status: StatusCode,
    /// Time from the headers to the first body byte.
    first_byte_after: Duration,
    /// Response headers (a 429's `Retry-After`, say).
    headers: &'static [(&'static str, &'static str)],
}

fn ok_after(headers_after: Duration) -> Reply {
    Reply {
        headers_after,
        status: StatusCode::OK,
        first_byte_after: Duration::ZERO,
        headers: &[],
    }
}

fn status_after(headers_after: Duration, status: u16) -> Reply {
    Reply {
        status: StatusCode::from_u16(status).unwrap(),
        ..ok_after(headers_after)
    }
}

#[derive(Default)]
struct State {
    script: Mutex<VecDeque<Reply>>,
    calls: AtomicU32,
    answered: AtomicU32,
    /// Calls dropped before their headers were sent: cancelled losers.
    cancelled: AtomicU32,
}

/// A backend that plays `script` call by call (10 ms OK answers once it is empty).
#[derive(Clone, Default)]
struct Backend(Arc<State>);

impl Backend {
    fn script(&self, replies: impl IntoIterator<Item = Reply>) {
        self.0.script.lock().unwrap().extend(replies);
    }
    fn calls(&self) -> u32 {
        self.0.calls.load(SeqCst)
    }
    fn cancelled(&self) -> u32 {
        self.0.cancelled.load(SeqCst)
    }
}

/// Counts the call as cancelled if dropped before it answered.
struct CallGuard(Arc<State>, bool);

impl Drop for CallGuard {
    fn drop(&mut self) {
        let counter = if self.1 {
            &self.0.answered
        } else {
            &self.0.cancelled
        };
        counter.fetch_add(1, SeqCst);
    }
}

impl Service<Request<()>> for Backend {
    type Response = Response<SlowBody>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response<SlowBody>, Infallible>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, _request: Request<()>) -> Self::Future {
        let state = Arc::clone(&self.0);
        state.calls.fetch_add(1, SeqCst);
        let reply = state
            .script
            .lock()
            .unwrap()
            .pop_front()
            .unwrap_or(ok_after(10 * MS));
        Box::pin(async move {
            let mut guard = CallGuard(state, false);
            tokio::time::sleep(reply.headers_after).await;
            guard.1 = true;
            let body = SlowBody::new(Some(tokio::time::sleep(reply.first_byte_after)), b"token");
            let mut response = Response::builder().status(reply.status);
            for (name, value) in reply.headers {
                response = response.header(*name, *value);
            }
            Ok(response.body(body).unwrap())
        })
    }
}

/// A body whose single chunk arrives after a delay (a streaming endpoint's first token).
type SlowBody = OneChunkBody<tokio::time::Sleep>;

type TestHedger = Hedger<TokioClock>;

fn hedger() -> Arc<TestHedger> {
    Arc::new(Hedger::new(TokioClock::new(), HedgeConfig::new()).unwrap())
}

fn get(uri: &str) -> Request<()> {
    Request::get(uri).body(()).unwrap()
}

/// Sends `request` and returns its status and how long it took.
async fn send<S>(service: &mut S, request: Request<()>) -> (StatusCode, Duration)
where
    S: Service<Request<()>, Response = Response<SlowBody>, Error = Infallible>,
{
    let start = tokio::time::Instant::now();
    let response = service.ready().await.unwrap().call(request).await.unwrap();
    (response.status(), start.elapsed())
}

/// 40 requests of 10 ms: past `min_samples` (20), with a learned p90 of 10 ms.
async fn warm<S>(service: &mut S)
where
    S: Service<Request<()>, Response = Response<SlowBody>, Error = Infallible>,
{
    for _ in 0..40 {
        send(service, get("http://a.example/")).await;
    }
}

type TestService = Hedge<Backend, Arc<TestHedger>, fn(Duration) -> tokio::time::Sleep>;

/// A backend, a hedger and the hedged service, warmed up (see [`warm`]).
async fn warmed() -> (Backend, Arc<TestHedger>, TestService) {
    let (backend, hedger) = (Backend::default(), hedger());
    let sleep: fn(Duration) -> tokio::time::Sleep = tokio::time::sleep;
    let mut service = HedgeLayer::new(Arc::clone(&hedger), sleep).layer(backend.clone());
    warm(&mut service).await;
    (backend, hedger, service)
}

#[tokio::test(start_paused = true)]
async fn hedge_fires_after_the_learned_delay_and_the_loser_is_dropped() {
    let (backend, hedger, mut service) = warmed().await;
    let delay = hedger.delay().unwrap();
    assert!(
        delay >= 10 * MS && delay <= Duration::from_micros(10_300),
        "{delay:?}"
    );
    assert_eq!((backend.calls(), hedger.stats().hedges), (40, 0));

    // A straggler: the primary would take 500 ms, the backup 10 ms.
    backend.script([ok_after(500 * MS), ok_after(10 * MS)]);
    let start = tokio::time::Instant::now();
    let mut call = std::pin::pin!(service
        .ready()
        .await
        .unwrap()
        .call(get("http://a.example/")));
    let response = call.as_mut().await.unwrap();
    let took = start.elapsed();
    assert_eq!(response.status(), StatusCode::OK);
    // The backup went out at the delay (tokio's timer rounds up to the next ms).
    assert!(
        took >= delay + 10 * MS && took <= delay + 12 * MS,
        "{took:?}"
    );
    assert_eq!(backend.calls(), 42);
    // Dropped when the backup answered, not later with the (still alive) future.
    assert_eq!(backend.cancelled(), 1, "the primary still runs");
    let stats = hedger.stats();
    assert_eq!(
        (stats.hedges, stats.hedge_wins, stats.primary_wins),
        (1, 1, 40)
    );
    // The primary's elapsed time (a lower bound of its latency) was learned.
    assert_eq!(hedger.window().count(), 41);
}

#[tokio::test(start_paused = true)]
async fn a_fast_primary_sends_no_backup() {
    let (backend, hedger, mut service) = warmed().await;
    backend.script([ok_after(3 * MS)]);
    let (_, took) = send(&mut service, get("http://a.example/")).await;
    assert_eq!(took, 3 * MS);
    assert_eq!(
        (backend.calls(), backend.cancelled(), hedger.stats().hedges),
        (41, 0, 0)
    );
}

#[tokio::test(start_paused = true)]
async fn non_idempotent_requests_are_never_hedged() {
    let (backend, hedger, mut service) = warmed().await;
    for method in [Method::POST, Method::PUT, Method::DELETE, Method::PATCH] {
        backend.script([ok_after(500 * MS)]);
        let request = Request::builder()
            .method(method)
            .uri("http://a.example/")
            .body(())
            .unwrap();
        let (_, took) = send(&mut service, request).await;
        assert_eq!(took, 500 * MS);
    }
    assert_eq!(backend.calls(), 44, "one call per request: no backups");
    // Passed through untouched: neither counted nor learned.
    assert_eq!(hedger.stats().requests, 40);
    assert_eq!(hedger.window().count(), 40);
}

#[tokio::test(start_paused = true)]
async fn no_backup_that_could_not_beat_the_deadline() {
    let (backend, hedger, mut service) = warmed().await;
    let with_time_left = |left: Duration| {
        let mut request = get("http://a.example/");
        request
            .extensions_mut()
            .insert(Deadline::after(hedger.now(), left));
        request
    };
    // A backup sent at ~10 ms needs ~10 ms more: 15 ms left is too little.
    backend.script([ok_after(500 * MS)]);
    let (_, took) = send(&mut service, with_time_left(15 * MS)).await;
    assert_eq!((took, backend.calls()), (500 * MS, 41));
    assert_eq!(hedger.stats().skipped_deadline, 1);
    // 25 ms is enough.
    backend.script([ok_after(500 * MS), ok_after(10 * MS)]);
    let (_, took) = send(&mut service, with_time_left(25 * MS)).await;
    assert!(took < 25 * MS, "{took:?}");
    assert_eq!(hedger.stats().hedge_wins, 1);
}

#[tokio::test(start_paused = true)]
async fn a_429_backs_off_and_is_not_latency() {
    let (backend, hedger, mut service) = warmed().await;
    let base = hedger.delay().unwrap();

    backend.script([status_after(2 * MS, 429)]);
    let (status, _) = send(&mut service, get("http://a.example/")).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "returned as it is");
    let stats = hedger.stats();
    assert_eq!((stats.rate_limited, stats.errors), (1, 1));
    assert_eq!(hedger.window().count(), 40, "a 429 is not a latency");
    assert_eq!(
        hedger.delay().unwrap(),
        base * 2,
        "the delay doubles for the cooldown"
    );

    // A straggler right after: the budget was emptied, so no backup.
    backend.script([ok_after(500 * MS)]);
    let (_, took) = send(&mut service, get("http://a.example/")).await;
    assert_eq!(took, 500 * MS);
    assert_eq!(backend.calls(), 42);
    assert_eq!(hedger.stats().skipped_backpressure, 1);
}

/// A `status` after 2 ms with `headers` (the server's pushback).
fn pushback(status: u16, headers: &'static [(&'static str, &'static str)]) -> Reply {
    Reply {
        headers,
        ..status_after(2 * MS, status)
    }
}

#[tokio::test(start_paused = true)]
async fn a_retry_after_holds_every_backup_back_for_its_seconds() {
    let (backend, hedger, mut service) = warmed().await;
    backend.script([pushback(429, &[("retry-after", "3")])]);
    let (status, _) = send(&mut service, get("http://a.example/")).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "returned as it is");
    let stats = hedger.stats();
    assert_eq!((stats.rate_limited, stats.errors), (1, 1));
    assert_eq!((stats.pushbacks, stats.pushbacks_clamped), (1, 0));

    // 40 answers refill the budget (4 tokens) within the 3 s, and a straggler then still
    // gets no backup: every request of the span skips as back-pressure.
    warm(&mut service).await;
    backend.script([ok_after(500 * MS)]);
    let (_, took) = send(&mut service, get("http://a.example/")).await;
    assert_eq!(took, 500 * MS);
    let stats = hedger.stats();
    assert_eq!((stats.hedges, stats.skipped_backpressure), (0, 41));

    // Past the 3 s the backup goes out again (after the cooldown's doubled delay).
    tokio::time::sleep(3 * 1_000 * MS).await;
    backend.script([ok_after(500 * MS), ok_after(10 * MS)]);
    let (_, took) = send(&mut service, get("http://a.example/")).await;
    assert!(took < 50 * MS, "{took:?}");
    assert_eq!(hedger.stats().hedge_wins, 1);
}

#[tokio::test(start_paused = true)]
async fn retry_after_dates_and_grpc_pushback_are_honoured_within_the_maximum() {
    let (backend, hedger, mut service) = warmed().await;
    let pushed_back = || hedger.delay() == Err(SkipReason::BackPressure);
    // A date in the past: a pushback of nothing.
    backend.script([pushback(
        503,
        &[("retry-after", "Sun, 06 Nov 1994 08:49:37 GMT")],
    )]);
    let (status, _) = send(&mut service, get("http://a.example/")).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert!(!pushed_back());
    // A date in 9999: the maximum (a minute), counted as clamped.
    backend.script([pushback(
        503,
        &[("retry-after", "Fri, 31 Dec 9999 23:59:59 GMT")],
    )]);
    send(&mut service, get("http://a.example/")).await;
    let stats = hedger.stats();
    assert_eq!((stats.pushbacks, stats.pushbacks_clamped), (2, 1));
    tokio::time::sleep(59 * 1_000 * MS).await;
    assert!(pushed_back());
    tokio::time::sleep(2 * 1_000 * MS).await;
    assert!(!pushed_back());

    // gRPC's milliseconds, before a `Retry-After` (the window, idle for a minute, learns
    // again first).
    warm(&mut service).await;
    assert!(hedger.delay().is_ok());
    backend.script([pushback(
        429,
        &[("retry-after", "30"), ("grpc-retry-pushback-ms", "1500")],
    )]);
    send(&mut service, get("http://a.example/")).await;
    tokio::time::sleep(1_400 * MS).await;
    assert!(pushed_back());
    tokio::time::sleep(200 * MS).await;
    assert!(!pushed_back());

    // A `Retry-After` that is neither form: back-pressure without a duration.
    backend.script([pushback(429, &[("retry-after", "soon")])]);
    send(&mut service, get("http://a.example/")).await;
    let stats = hedger.stats();
    assert_eq!((stats.rate_limited, stats.pushbacks), (4, 3));
    assert!(!pushed_back());
}

#[tokio::test(start_paused = true)]
async fn failures_wait_for_the_other_attempt_and_the_last_one_is_returned() {
    let (backend, hedger, mut service) = warmed().await;

    // The primary fails at 50 ms; the backup (sent at ~10 ms) fails first, at ~20 ms.
    backend.script([status_after(50 * MS, 500), status_after(10 * MS, 502)]);
    let (status, took) = send(&mut service, get("http://a.example/")).await;
    assert_eq!((status, took), (StatusCode::INTERNAL_SERVER_ERROR, 50 * MS));
    assert_eq!(hedger.stats().errors, 2);

    // The backup fails, the primary answers: the answer wins.
    backend.script([ok_after(40 * MS), status_after(5 * MS, 500)]);
    let (status, took) = send(&mut service, get("http://a.example/")).await;
    assert_eq!((status, took), (StatusCode::OK, 40 * MS));

    // A fast failure before any backup is returned at once, and not learned.
    let learned = hedger.window().count();
    backend.script([status_after(MS, 500)]);
    let (status, took) = send(&mut service, get("http://a.example/")).await;
    assert_eq!((status, took), (StatusCode::INTERNAL_SERVER_ERROR, MS));
    assert_eq!(hedger.window().count(), learned);
}

#[tokio::test(start_paused = true)]
async fn each_target_learns_its_own_delay() {
    let backend = Backend::default();
    let by_host = |r: &Request<()>| r.uri().host().unwrap_or("").to_owned();
    let targets: PerTarget<_, _, _, 2> =
        PerTarget::new(TokioClock::new(), HedgeConfig::new(), by_host).unwrap();
    let targets = Arc::new(targets);
    let mut service =
        HedgeLayer::new(Arc::clone(&targets), tokio::time::sleep).layer(backend.clone());
    for _ in 0..30 {
        backend.script([ok_after(10 * MS)]);
        send(&mut service, get("http://fast.example/")).await;
        backend.script([ok_after(100 * MS)]);
        send(&mut service, get("http://slow.example/")).await;
    }
    // A third target does not fit: passed through, counted.
    backend.script([ok_after(MS)]);
    send(&mut service, get("http://third.example/")).await;
    assert_eq!(targets.untracked(), 1);

    let mut delays = Vec::new();
    targets.for_each(|host, hedger| delays.push((host.clone(), hedger.delay().unwrap())));
    assert_eq!(delays.len(), 2);
    assert_eq!(delays[0].0, "fast.example");
    assert!(
        delays[0].1 >= 10 * MS && delays[0].1 < 11 * MS,
        "{delays:?}"
    );
    assert_eq!(delays[1].0, "slow.example");
    assert!(
        delays[1].1 >= 100 * MS && delays[1].1 < 110 * MS,
        "{delays:?}"
    );
}

/// `PerTarget::for_each` called `f` under the registry's read lock, so an `f` that sent a
/// request to a new target through the same targets (a reporter posting each target's
/// stats through the hedged client, say) waited for the write lock behind its own read:
/// a deadlock. `f` now walks a snapshot, and may route requests, new targets included.
#[test]
fn for_each_may_route_requests_through_its_targets() {
    use tailguard::tower::Targets;

    let by_path = |r: &Request<()>| r.uri().path().to_owned();
    let config = HedgeConfig::new();
    let targets: PerTarget<_, _, _, 4> =
        PerTarget::new(tailguard::clock::StdClock::new(), config, by_path).unwrap();
    let targets = Arc::new(targets);
    targets.hedger_for(&get("/a")).unwrap().start();
    let (done, finished) = std::sync::mpsc::channel();
    let reporter = Arc::clone(&targets);
    // A thread of its own: before the fix it never returned.
    std::thread::spawn(move || {
        let mut seen = Vec::new();
        reporter.for_each(|path, hedger| {
            seen.push((path.clone(), hedger.stats().requests));
            // The report goes out through the targets: an existing one and a new one.
            reporter.hedger_for(&get("/a")).unwrap().start();
            reporter.hedger_for(&get("/report")).unwrap().start();
        });
        done.send(seen).unwrap();
    });
    let seen = finished
        .recv_timeout(Duration::from_secs(10))
        .expect("for_each deadlocked on a request to a new target");
    // The targets registered when it was called, each once.
    assert_eq!(seen, [("/a".to_owned(), 1)]);
    let mut after = Vec::new();
    targets.for_each(|path, hedger| after.push((path.clone(), hedger.stats().requests)));
    assert_eq!(after, [("/a".to_owned(), 2), ("/report".to_owned(), 1)]);
}

/// An integer-mapped hedger works behind the layer, alone or as a `dyn`.
#[tokio::test(start_paused = true)]
async fn an_integer_mapped_hedger_hedges_behind_the_layer() {
    let int: IntHedger<TokioClock> = Hedger::with_layout(
        TokioClock::new(),
        HedgeConfig::new(),
        presets::INT_LATENCY_LAYOUT,
    )
    .unwrap();
    let int = Arc::new(int);
    let as_dyn: Arc<dyn HedgePolicy + Send + Sync> = int.clone();
    let backend = Backend::default();
    let mut service = HedgeLayer::new(as_dyn, tokio::time::sleep).layer(backend.clone());
    warm(&mut service).await;
    let delay = int.delay().unwrap();
    assert!(delay >= 10 * MS && delay < 11 * MS, "{delay:?}");
    backend.script([ok_after(500 * MS), ok_after(10 * MS)]);
    let (status, took) = send(&mut service, get("http://a.example/")).await;
    assert_eq!(status, StatusCode::OK);
    // The hedge at the delay (tokio's timer rounds it up to the millisecond), then 10 ms.
    assert!(
        took >= delay + 10 * MS && took <= delay + 12 * MS,
        "{took:?}"
    );
    assert_eq!(int.stats().hedge_wins, 1);
}

/// Latency per route, one budget per host: integer-mapped hedgers in
/// `PerTarget`, all drawing on one shared budget.
#[tokio::test(start_paused = true)]
async fn routes_learn_apart_and_share_one_budget() {
    let budget = Arc::new(RatioBudget::new(0.1, 1).unwrap());
    let shared = Arc::clone(&budget);
    let by_route = |r: &Request<()>| r.uri().path().to_owned();
    let targets: PerTarget<_, _, _> = PerTarget::with_factory(by_route, move |_: &String| {
        let config = HedgeConfig::new().with_budget_cap(1);
        Hedger::with_budget(
            TokioClock::new(),
            config,
            Arc::clone(&shared),
            presets::INT_LATENCY_LAYOUT,
        )
    });
    let targets = Arc::new(targets);
    let backend = Backend::default();
    let mut service =
        HedgeLayer::new(Arc::clone(&targets), tokio::time::sleep).layer(backend.clone());
    for _ in 0..20 {
        backend.script([ok_after(10 * MS)]);
        send(&mut service, get("http://h.example/fast")).await;
        backend.script([ok_after(100 * MS)]);
        send(&mut service, get("http://h.example/slow")).await;
    }
    let mut delays = Vec::new();
    targets.for_each(|route, hedger| delays.push((route.clone(), hedger.delay().unwrap())));
    assert_eq!(delays.len(), 2);
    assert!(
        delays[0].1 < 11 * MS && delays[1].1 >= 100 * MS,
        "{delays:?}"
    );
    // 40 requests of both routes filled the one budget to its cap of one token: one
    // straggler on either route is hedged, and the next one on the other route is not.
    assert_eq!(budget.balance(), 1.0);
    backend.script([ok_after(500 * MS), ok_after(10 * MS)]);
    let (_, took) = send(&mut service, get("http://h.example/fast")).await;
    assert!(took < 25 * MS, "{took:?}");
    backend.script([ok_after(500 * MS)]);
    let (_, took) = send(&mut service, get("http://h.example/slow")).await;
    assert_eq!(took, 500 * MS, "the shared budget is spent");
    assert_eq!(budget.granted(), 1);
    let mut denied = 0;
    targets.for_each(|_, hedger| denied += hedger.stats().denied_budget);
    assert_eq!(denied, 1);
}

/// Sends a request through a first-byte service and reads the body; returns the time to
/// the first byte.
async fn first_token<S>(service: &mut S, backend: &Backend, replies: Vec<Reply>) -> Duration
where
    S: Service<Request<()>, Response = Response<Prefetched<SlowBody>>>,
    S::Error: std::fmt::Debug,
{
    backend.script(replies);
    let start = tokio::time::Instant::now();
    let response = service
        .ready()
        .await
        .unwrap()
        .call(get("http://llm.example/"))
        .await
        .unwrap();
    let took = start.elapsed();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    assert_eq!(body, "token", "the prefetched frame is handed out");
    took
}

#[tokio::test(start_paused = true)]
async fn streaming_is_measured_and_raced_at_the_first_byte() {
    let streaming = |ttft: Duration| Reply {
        first_byte_after: ttft,
        ..ok_after(Duration::ZERO)
    };
    // Headers at once, first token after 20 ms.
    let (backend, on_headers) = (Backend::default(), hedger());
    let mut service =
        HedgeLayer::new(Arc::clone(&on_headers), tokio::time::sleep).layer(backend.clone());
    for _ in 0..40 {
        backend.script([streaming(20 * MS)]);
        send(&mut service, get("http://llm.example/")).await;
    }
    // Calibrated on headers, the delay is the floor (1 ms): every request would hedge.
    assert_eq!(on_headers.delay().unwrap(), MS);

    let (backend, on_first_byte) = (Backend::default(), hedger());
    let mut service = tower::ServiceBuilder::new()
        .layer(HedgeLayer::new(
            Arc::clone(&on_first_byte),
            tokio::time::sleep,
        ))
        .layer(FirstByteLayer)
        .service(backend.clone());
    for _ in 0..40 {
        first_token(&mut service, &backend, vec![streaming(20 * MS)]).await;
    }
    let delay = on_first_byte.delay().unwrap();
    assert!(delay >= 20 * MS && delay < 21 * MS, "{delay:?}");
    assert_eq!(on_first_byte.stats().hedges, 0);

    // A stuck stream: headers at once, no token for 500 ms. The backup's token wins.
    let took = first_token(
        &mut service,
        &backend,
        vec![streaming(500 * MS), streaming(20 * MS)],
    )
    .await;
    assert!(
        took >= delay + 20 * MS && took <= delay + 22 * MS,
        "{took:?}"
    );
    let stats = on_first_byte.stats();
    assert_eq!((stats.hedges, stats.hedge_wins), (1, 1));
}

/// Which attempt's result the race must return, when, and whether the other attempt is
/// cancelled: the reference model of the race for one request. Whole milliseconds; the
/// primary's latency is odd and the backup's finish even, so nothing ties.
fn expected_race(delay_ms: u64, primary: (u64, u16), backup: (u64, u16)) -> (u16, u64, u32, bool) {
    let (p_at, p_status) = primary;
    if p_at < delay_ms {
        return (p_status, p_at, 1, false); // answered (or failed) before any backup
    }
    let b_at = delay_ms + backup.0;
    let (first, second) = if p_at < b_at {
        ((p_at, p_status), (b_at, backup.1))
    } else {
        ((b_at, backup.1), (p_at, p_status))
    };
    if !failed(first.1) {
        (first.1, first.0, 2, true) // the other is still running: cancelled
    } else {
        // A failure waits for the other attempt, whose result is returned either way.
        (second.1, second.0, 2, false)
    }
}

/// What `HttpPolicy` counts as a failure among the statuses used here.
fn failed(status: u16) -> bool {
    status >= 500 || status == 429
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]

    /// Random primary and backup latencies and statuses against the reference model:
    /// the returned status, when it returns, the calls made, the attempt cancelled and
    /// what is learned.
    #[test]
    fn the_race_matches_its_reference_model(
        p_half in 0u64..40,
        b_half in 1u64..40,
        p_status in proptest::sample::select(vec![200u16, 500, 503]),
        b_status in proptest::sample::select(vec![200u16, 500, 429]),
    ) {
        let (p_ms, b_ms) = (2 * p_half + 1, 2 * b_half);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .unwrap();
        runtime.block_on(async {
            let config = hedging_every(10 * MS).with_max_hedges(1);
            let hedger = Arc::new(Hedger::new(TokioClock::new(), config).unwrap());
            let backend = Backend::default();
            let mut service =
                HedgeLayer::new(Arc::clone(&hedger), tokio::time::sleep).layer(backend.clone());
            let ms = Duration::from_millis;
            backend.script([status_after(ms(p_ms), p_status), status_after(ms(b_ms), b_status)]);
            let (status, took) = send(&mut service, get("http://a.example/")).await;
            let (want_status, want_ms, want_calls, want_cancel) =
                expected_race(10, (p_ms, p_status), (b_ms, b_status));
            assert_eq!(status.as_u16(), want_status);
            assert_eq!(took, ms(want_ms));
            assert_eq!(backend.calls(), want_calls);
            assert_eq!(backend.cancelled(), u32::from(want_cancel));
            assert_eq!(hedger.stats().hedges, want_calls - 1);
            // One latency is learned when the request succeeds, the primary's (its elapsed
            // time if cancelled); none if the primary failed first, and failures never.
            let primary_failed_first = failed(p_status) && p_ms <= want_ms;
            let learned = !failed(want_status) && !primary_failed_first;
            assert_eq!(hedger.window().count(), u64::from(learned));
        });
    }
}

/// A body that fails before its first byte.
#[derive(Debug)]
struct BrokenBody;

impl Body for BrokenBody {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, std::io::Error>>> {
        Poll::Ready(Some(Err(std::io::Error::other(
            "reset before the first token",
        ))))
    }
}

#[tokio::test]
async fn first_byte_keeps_the_body_whole_and_reports_body_failures() {
    use http_body_util::Full;
    use tailguard::tower::FirstByteError;

    let full = service_fn(|_: Request<()>| async {
        Ok::<_, Infallible>(Response::new(Full::new(Bytes::from_static(b"hello"))))
    });
    let response = FirstByteLayer
        .layer(full)
        .oneshot(get("http://a.example/"))
        .await
        .unwrap();
    let body = response.into_body();
    // The prefetched frame still counts in the size hint.
    assert_eq!(body.size_hint().exact(), Some(5));
    assert!(!body.is_end_stream());
    assert_eq!(body.collect().await.unwrap().to_bytes(), "hello");

    let broken =
        service_fn(|_: Request<()>| async { Ok::<_, Infallible>(Response::new(BrokenBody)) });
    let error = FirstByteLayer
        .layer(broken)
        .oneshot(get("http://a.example/"))
        .await
        .unwrap_err();
    assert!(matches!(error, FirstByteError::Body(_)));
    assert_eq!(
        error.to_string(),
        "response body failed before its first byte: reset before the first token"
    );
}

#[tokio::test(start_paused = true)]
async fn a_second_backup_goes_out_one_delay_after_the_first() {
    let delay = 10 * MS;
    let fixed = |max_hedges| hedging_every(delay).with_max_hedges(max_hedges);
    // More than the drivers hold is refused when the hedger is built, not capped later.
    assert_eq!(
        Hedger::new(TokioClock::new(), fixed(MAX_HEDGES + 1)).err(),
        Some(HedgeError::TooManyHedges)
    );
    assert_eq!(MAX_HEDGES, 2);
    let hedger = Arc::new(Hedger::new(TokioClock::new(), fixed(MAX_HEDGES)).unwrap());
    let backend = Backend::default();
    let mut service =
        HedgeLayer::new(Arc::clone(&hedger), tokio::time::sleep).layer(backend.clone());
    // Primary and first backup stuck; the second backup (sent at 20 ms) answers in 15,
    // after a third hedge would have been due (30 ms).
    backend.script([ok_after(500 * MS), ok_after(500 * MS), ok_after(15 * MS)]);
    let (status, took) = send(&mut service, get("http://a.example/")).await;
    assert_eq!((status, took), (StatusCode::OK, 35 * MS));
    // Both hedges sent, and no token spent on a third.
    assert_eq!(backend.calls(), 3);
    assert_eq!(backend.cancelled(), 2, "both losers dropped");
    let stats = hedger.stats();
    assert_eq!((stats.hedges, stats.hedge_wins), (2, 1));
}

/// A GET can be copied once only (a body that replays once, say): the second copy, which
/// the layer makes when the first backup goes out, is refused.
/// Counts the copies the layer asks for, and makes at most `limit` of them.
#[derive(Clone)]
struct Copies {
    asked: Arc<AtomicU32>,
    limit: u32,
}

impl Copies {
    fn at_most(limit: u32) -> Self {
        let asked = Arc::default();
        Copies { asked, limit }
    }

    fn asked(&self) -> u32 {
        self.asked.load(SeqCst)
    }
}

impl RequestPolicy<Request<()>, Response<SlowBody>, Infallible> for Copies {
    fn clone_request(&self, request: &Request<()>) -> Option<Request<()>> {
        let made = self.asked.fetch_add(1, SeqCst);
        (made < self.limit).then(|| get(&request.uri().to_string()))
    }

    fn classify(&self, _: &Result<Response<SlowBody>, Infallible>) -> Outcome {
        Outcome::Success
    }
}

/// A hedger whose every hedge is due `delay` after the one before, with a budget of 100 %.
fn hedging_every(delay: Duration) -> HedgeConfig {
    HedgeConfig::new()
        .with_min_delay(delay)
        .with_max_delay(delay)
        .with_cold_start(tailguard::hedge::ColdStart::Delay(delay))
        .with_budget_ratio(1.0)
        .with_max_hedges(MAX_HEDGES)
}

/// A request that cannot be copied a second time sends one backup, and the hedger counts
/// one hedge and spends one token: none for a second backup that could not be made.
#[tokio::test(start_paused = true)]
async fn a_second_backup_that_cannot_be_copied_is_neither_counted_nor_paid_for() {
    let config = hedging_every(10 * MS);
    let hedger = Arc::new(Hedger::new(TokioClock::new(), config).unwrap());
    let backend = Backend::default();
    let mut service = HedgeLayer::new(Arc::clone(&hedger), tokio::time::sleep)
        .policy(Copies::at_most(1))
        .layer(backend.clone());
    // Primary and backup both slow: a second hedge would be due at 20 ms.
    backend.script([ok_after(500 * MS), ok_after(40 * MS)]);
    let (status, took) = send(&mut service, get("http://a.example/")).await;
    assert_eq!((status, took), (StatusCode::OK, 50 * MS));
    assert_eq!(backend.calls(), 2, "one backup: the request copies once");
    assert_eq!(hedger.stats().hedges, 1, "only the backup sent is a hedge");
    assert_eq!(
        hedger.budget().granted(),
        1,
        "one token, for the one backup"
    );
}

/// With two hedges, the layer copies the request once per backup: when the request comes
/// in, and again when the first backup goes out (`RequestPolicy::clone_request`). The
/// last backup used to make a third copy, of the request and the service, for a hedge
/// that can never follow, and drop it.
#[tokio::test(start_paused = true)]
async fn the_last_backup_makes_no_copy_for_a_hedge_that_cannot_follow() {
    let config = hedging_every(10 * MS);
    let hedger = Arc::new(Hedger::new(TokioClock::new(), config).unwrap());
    let backend = Backend::default();
    let copies = Copies::at_most(u32::MAX);
    let mut service = HedgeLayer::new(Arc::clone(&hedger), tokio::time::sleep)
        .policy(copies.clone())
        .layer(backend.clone());
    backend.script([ok_after(500 * MS), ok_after(500 * MS), ok_after(15 * MS)]);
    let (status, took) = send(&mut service, get("http://a.example/")).await;
    assert_eq!((status, took), (StatusCode::OK, 35 * MS));
    assert_eq!((backend.calls(), hedger.stats().hedges), (3, 2));
    assert_eq!(copies.asked(), 2, "one copy per backup, none more");

    // With one hedge allowed, the copy made when the request comes in is the only one.
    let hedger = Arc::new(Hedger::new(TokioClock::new(), config.with_max_hedges(1)).unwrap());
    let copies = Copies::at_most(u32::MAX);
    let mut service = HedgeLayer::new(Arc::clone(&hedger), tokio::time::sleep)
        .policy(copies.clone())
        .layer(backend.clone());
    backend.script([ok_after(500 * MS), ok_after(15 * MS)]);
    let (status, took) = send(&mut service, get("http://a.example/")).await;
    assert_eq!((status, took), (StatusCode::OK, 25 * MS));
    assert_eq!(copies.asked(), 1);
}

/// With a percentile per hedge, the layer sends the second backup when the request has run
/// for the second percentile (here the p90, 100 ms), not one delay after the first.
#[tokio::test(start_paused = true)]
async fn a_second_backup_goes_out_at_its_own_percentile() {
    let config = HedgeConfig::new()
        .with_budget_ratio(1.0)
        .with_percentiles(&[0.5, 0.9]);
    let hedger = Arc::new(Hedger::new(TokioClock::new(), config).unwrap());
    for i in 0..100 {
        hedger.record(if i < 80 { 10 * MS } else { 100 * MS });
    }
    hedger.window().refresh();
    let p90 = Duration::from_nanos(hedger.window().cached_upper_bound_of(1).unwrap());
    let backend = Backend::default();
    let mut service =
        HedgeLayer::new(Arc::clone(&hedger), tokio::time::sleep).layer(backend.clone());
    backend.script([ok_after(500 * MS), ok_after(500 * MS), ok_after(15 * MS)]);
    let (status, took) = send(&mut service, get("http://a.example/")).await;
    assert_eq!(status, StatusCode::OK);
    // Sent at the p90 (to tokio's millisecond timer), answered 15 ms later.
    assert!(
        took >= p90 + 15 * MS && took <= p90 + 17 * MS,
        "{took:?} {p90:?}"
    );
    assert_eq!((backend.calls(), backend.cancelled()), (3, 2));
    assert_eq!(hedger.stats().hedges, 2);
}

/// The hedge timer is registered with the runtime only for a request still running after
/// its first poll: one answered at once (a cache, a local service) makes no timer at all.
#[tokio::test(start_paused = true)]
async fn a_request_answered_at_once_makes_no_timer() {
    let hedger = hedger();
    for _ in 0..100 {
        hedger.record(10 * MS); // warm: a learned delay, every GET waits for it
    }
    let timers = Arc::new(AtomicU32::new(0));
    let counted = Arc::clone(&timers);
    let sleep = move |d: Duration| {
        counted.fetch_add(1, SeqCst);
        tokio::time::sleep(d)
    };
    let layer = HedgeLayer::new(Arc::clone(&hedger), sleep);
    let at_once = layer.clone().layer(service_fn(|_: Request<()>| async {
        Ok::<_, Infallible>(Response::new(()))
    }));
    let after_1ms = layer.layer(service_fn(|_: Request<()>| async {
        tokio::time::sleep(MS).await;
        Ok::<_, Infallible>(Response::new(()))
    }));

    at_once.oneshot(get("http://a.example/")).await.unwrap();
    assert_eq!(
        timers.load(SeqCst),
        0,
        "answered in its first poll: no timer"
    );
    after_1ms.oneshot(get("http://a.example/")).await.unwrap();
    assert_eq!(
        timers.load(SeqCst),
        1,
        "still running after its first poll: a timer"
    );
    let stats = hedger.stats();
    assert_eq!((stats.primary_wins, stats.hedges), (2, 0));
}

/// A clock that counts its readings.
struct CountingClock(TokioClock, Arc<AtomicU32>);

impl Clock for CountingClock {
    fn now(&self) -> Instant {
        self.1.fetch_add(1, SeqCst);
        self.0.now()
    }
}

/// The primary is polled before the hedger decides: a request answered in its first poll
/// reads the clock at its start and at its answer only (no decision); one still running
/// gets its decision in that same poll (one more reading).
#[tokio::test(start_paused = true)]
async fn a_request_answered_at_once_asks_for_no_decision() {
    let reads = Arc::new(AtomicU32::new(0));
    let clock = CountingClock(TokioClock::new(), Arc::clone(&reads));
    let hedger = Arc::new(Hedger::new(clock, HedgeConfig::new()).unwrap());
    for _ in 0..100 {
        hedger.record(10 * MS); // warm: a learned delay, every GET waits for it
    }
    let layer = HedgeLayer::new(Arc::clone(&hedger), tokio::time::sleep);
    let at_once = layer.clone().layer(service_fn(|_: Request<()>| async {
        Ok::<_, Infallible>(Response::new(()))
    }));
    let after_1ms = layer.layer(service_fn(|_: Request<()>| async {
        tokio::time::sleep(MS).await;
        Ok::<_, Infallible>(Response::new(()))
    }));

    let before = reads.load(SeqCst);
    at_once.oneshot(get("http://a.example/")).await.unwrap();
    assert_eq!(reads.load(SeqCst) - before, 2, "start and answer only");
    let before = reads.load(SeqCst);
    after_1ms.oneshot(get("http://a.example/")).await.unwrap();
    assert_eq!(
        reads.load(SeqCst) - before,
        3,
        "start, the decision in the first poll, answer"
    );
    let stats = hedger.stats();
    assert_eq!((stats.primary_wins, stats.hedges), (2, 0));
}

/// A response future polled again after it returned its answer (a caller's bug, which the
/// pass-through path already guards against) sends nothing more to the backend, and the
/// hedger counts, pays for and learns nothing more. It used to ask the hedger again and,
/// told to hedge, send the spare copy of the request as a backup of a finished request
/// (counted as a hedge, a budget token spent, and its answer returned a second time).
#[test]
fn a_finished_response_future_polled_again_sends_no_backup() {
    static CLOCK: tailguard::clock::ManualClock = tailguard::clock::ManualClock::new();
    let config = tailguard::hedge::HedgeConfig::new()
        .with_cold_start(tailguard::hedge::ColdStart::Delay(Duration::ZERO));
    let hedger = Arc::new(tailguard::hedge::Hedger::new(&CLOCK, config).unwrap());
    let calls = Arc::new(AtomicU32::new(0));
    let counted = Arc::clone(&calls);
    let backend = service_fn(move |_req: Request<()>| {
        counted.fetch_add(1, SeqCst);
        std::future::ready(Ok::<_, std::convert::Infallible>(Response::new(())))
    });
    // A timer that is always ready: any hedge the hedger asks for goes at once.
    let sleep = |_: Duration| std::future::ready(());
    let mut service = HedgeLayer::new(Arc::clone(&hedger), sleep).layer(backend);
    let mut cx = Context::from_waker(std::task::Waker::noop());
    assert!(service.poll_ready(&mut cx).is_ready());
    let mut future = std::pin::pin!(service.call(Request::get("/").body(()).unwrap()));
    assert!(matches!(future.as_mut().poll(&mut cx), Poll::Ready(Ok(_))));
    assert_eq!(calls.load(SeqCst), 1);
    for _ in 0..3 {
        CLOCK.advance(Duration::from_secs(1));
        assert!(future.as_mut().poll(&mut cx).is_pending());
    }
    assert_eq!(
        calls.load(SeqCst),
        1,
        "a finished request called the backend again"
    );
    let stats = hedger.stats();
    assert_eq!(
        (
            stats.requests,
            stats.hedges,
            stats.primary_wins,
            stats.hedge_wins
        ),
        (1, 0, 1, 0)
    );
    assert_eq!(hedger.window().count(), 1);
}

/// A body with `empty` empty data frames ready before its one byte (`usize::MAX`: empty
/// frames for ever).
struct EmptyFramesFirst {
    empty: usize,
}

impl Body for EmptyFramesFirst {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        if self.empty == 0 {
            return Poll::Ready(Some(Ok(Frame::data(Bytes::from_static(b"x")))));
        }
        if self.empty != usize::MAX {
            self.empty -= 1;
        }
        Poll::Ready(Some(Ok(Frame::data(Bytes::new()))))
    }
}

/// Empty frames carry no byte and are skipped, but a few at a time: a body with an empty
/// frame always ready yields the thread (woken again) rather than spinning in one poll for
/// ever, and one whose byte comes after many empty frames is still answered at that byte.
#[test]
fn empty_frames_are_skipped_without_holding_the_thread() {
    struct Counter(AtomicU32);
    impl std::task::Wake for Counter {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, SeqCst);
        }
    }
    let wakes = Arc::new(Counter(AtomicU32::new(0)));
    let waker = std::task::Waker::from(Arc::clone(&wakes));
    let mut cx = Context::from_waker(&waker);
    for (empty, polls) in [(usize::MAX, None), (1_000, Some(1..=40))] {
        let backend = service_fn(move |_req: Request<()>| {
            std::future::ready(Ok::<_, Infallible>(Response::new(EmptyFramesFirst {
                empty,
            })))
        });
        let mut service = FirstByteLayer.layer(backend);
        assert!(service.poll_ready(&mut cx).is_ready());
        let mut future = std::pin::pin!(service.call(Request::new(())));
        let mut answered = None;
        for poll in 1..=100 {
            if let Poll::Ready(response) = future.as_mut().poll(&mut cx) {
                answered = Some((poll, response.unwrap()));
                break;
            }
        }
        match (answered, polls) {
            (None, None) => assert!(wakes.0.load(SeqCst) >= 100, "yielded without a wake"),
            (Some((poll, response)), Some(expected)) => {
                assert!(expected.contains(&poll), "answered at poll {poll}");
                let mut body = response.into_body();
                let first = std::pin::pin!(&mut body).poll_frame(&mut cx);
                let Poll::Ready(Some(Ok(frame))) = first else {
                    panic!("no first frame")
                };
                assert_eq!(frame.into_data().unwrap(), "x");
            }
            (answered, _) => panic!("{:?}", answered.map(|(p, _)| p)),
        }
    }
}
