//! What the tower layer adds to a request (feature `tower`):
//!
//! ```sh
//! cargo bench --features tower --bench tower
//! ```
//!
//! An inner service that answers at once, called and polled to completion with a no-op
//! waker (no runtime), so the figures are the layer's own work:
//!
//! * `tower/direct`: the service alone;
//! * `tower/passthrough`: through `HedgeLayer`, a POST (the policy refuses it: no clone,
//!   no hedger);
//! * `tower/hedged`: through `HedgeLayer`, a GET: the request and the service are cloned
//!   for a possible backup, a ticket is taken (a budget deposit), the hedger says `Wait`,
//!   the primary answers in its first poll (so no timer is made) and the latency is
//!   recorded.
//!
//! Wall time per request, uncontended.
//!
//! Group `tower-tokio`: the same service inside a tokio current-thread runtime
//! with tokio's timer (`tokio::time::sleep` as the layer's timer), each request awaited
//! in one task (`ready().await`, then the call), against tower's own `hedge` middleware
//! configured as in the issue (at least 10 data points, p90, 10 s period):
//!
//! * `tower-tokio/direct`: the service alone;
//! * `tower-tokio/tailguard`: through `HedgeLayer`, a GET on a warm hedger (the `Wait`
//!   path);
//! * `tower-tokio/tower-hedge`: through `tower::hedge::Hedge`, a GET, warm (its read
//!   histogram seeded with 1,000 latencies of 5 ms, so it takes its hedging path too).
//!
//! What a layer adds is its time minus `direct`'s. Criterion runs the three one after
//! the other; on a loaded machine the ratio of the added costs is steadier from
//! interleaved rounds in one process:
//!
//! ```sh
//! TAILGUARD_TOWER_ROUNDS=15 cargo bench --features tower --bench tower -- tower-tokio
//! ```
//!
//! prints, per round, each variant's time per request (200,000 requests each, in turn)
//! and the added costs, then the medians over the rounds.

use std::convert::Infallible;
use std::future::Future;
use std::hint::black_box;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use criterion::Criterion;
use http::{Method, Request, Response};
use tailguard::clock::StdClock;
use tailguard::hedge::{HedgeConfig, Hedger};
use tailguard::tower::HedgeLayer;
use tower::{service_fn, BoxError, Layer, Service, ServiceExt};

/// Polls a future that is expected to finish without waiting.
fn finish<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
    }
}

fn call<S>(service: &mut S, method: &Method) -> Response<()>
where
    S: Service<Request<()>, Response = Response<()>, Error = Infallible>,
{
    let request = Request::builder()
        .method(method.clone())
        .uri("http://backend/item")
        .body(())
        .unwrap_or_default();
    match finish(service.call(request)) {
        Ok(response) => response,
        Err(never) => match never {},
    }
}

/// A default hedger with a learned delay, so hedgeable requests take the `Wait` path.
fn warm_hedger() -> Arc<Hedger<StdClock>> {
    let hedger = match Hedger::new(StdClock::new(), HedgeConfig::new()) {
        Ok(hedger) => Arc::new(hedger),
        Err(e) => panic!("default configuration: {e}"),
    };
    for _ in 0..1_000 {
        hedger.record(Duration::from_millis(5));
    }
    hedger
}

fn main() {
    let mut c = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .configure_from_args();
    let backend = service_fn(|_: Request<()>| async { Ok::<_, Infallible>(Response::new(())) });
    let hedger = warm_hedger();
    let never = |_: Duration| std::future::pending::<()>();
    let mut hedged = HedgeLayer::new(Arc::clone(&hedger), never).layer(backend);
    let mut direct = backend;

    let mut group = c.benchmark_group("tower");
    group.bench_function("direct", |b| {
        b.iter(|| black_box(call(&mut direct, &Method::GET)))
    });
    group.bench_function("passthrough", |b| {
        b.iter(|| black_box(call(&mut hedged, &Method::POST)))
    });
    group.bench_function("hedged", |b| {
        b.iter(|| black_box(call(&mut hedged, &Method::GET)))
    });
    group.finish();
    tokio_group(&mut c);
    c.final_summary();
}

/// tower's `hedge` policy with the same rule as `HttpPolicy`: GET, HEAD and OPTIONS are
/// copied, anything else is not.
#[derive(Clone)]
struct SafeMethods;

impl tower::hedge::Policy<Request<()>> for SafeMethods {
    fn clone_request(&self, request: &Request<()>) -> Option<Request<()>> {
        let safe = [Method::GET, Method::HEAD, Method::OPTIONS];
        safe.contains(request.method()).then(|| request.clone())
    }

    fn can_retry(&self, _request: &Request<()>) -> bool {
        true
    }
}

/// `n` GETs through `service`, each awaited in turn (readiness, then the call), in the
/// task that `block_on` runs; the wall time they took.
async fn run_gets<S>(service: &mut S, n: u64) -> Duration
where
    S: Service<Request<()>, Response = Response<()>>,
    S::Error: Into<BoxError>,
{
    let start = Instant::now();
    for _ in 0..n {
        let request = Request::builder()
            .method(Method::GET)
            .uri("http://backend/item")
            .body(())
            .unwrap_or_default();
        let answer = match service.ready().await {
            Ok(ready) => ready.call(request).await,
            Err(e) => Err(e),
        };
        if let Err(e) = black_box(answer) {
            panic!("the backend answers every request: {}", e.into());
        }
    }
    start.elapsed()
}

fn tokio_group(c: &mut Criterion) {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => panic!("a current-thread runtime: {e}"),
    };
    let backend = service_fn(|_: Request<()>| async { Ok::<_, Infallible>(Response::new(())) });
    let hedger = warm_hedger();
    let mut direct = backend;
    let mut tailguard = HedgeLayer::new(hedger, tokio::time::sleep).layer(backend);
    // tower's histograms live in its service; it reads the previous period's, so the
    // seed is what makes it warm (at least 10 data points) from the first request.
    let mut tower_hedge = {
        let _runtime = runtime.enter(); // tower's histogram reads tokio's clock
        tower::hedge::Hedge::new_with_mock_latencies(
            backend,
            SafeMethods,
            10,
            0.9,
            Duration::from_secs(10),
            &[5; 1_000],
        )
    };

    let mut group = c.benchmark_group("tower-tokio");
    group.bench_function("direct", |b| {
        b.iter_custom(|n| runtime.block_on(run_gets(&mut direct, n)))
    });
    group.bench_function("tailguard", |b| {
        b.iter_custom(|n| runtime.block_on(run_gets(&mut tailguard, n)))
    });
    group.bench_function("tower-hedge", |b| {
        b.iter_custom(|n| runtime.block_on(run_gets(&mut tower_hedge, n)))
    });
    group.finish();

    let Some(rounds) = std::env::var("TAILGUARD_TOWER_ROUNDS")
        .ok()
        .and_then(|r| r.parse::<usize>().ok())
    else {
        return;
    };
    const N: u64 = 200_000;
    let per_request = |d: Duration| d.as_secs_f64() * 1e9 / N as f64;
    let (mut added_tailguard, mut added_tower, mut ratios) = (vec![], vec![], vec![]);
    println!("round  direct  tailguard  tower-hedge  (ns per request)  added: tailguard tower-hedge ratio");
    for round in 0..rounds {
        let d = per_request(runtime.block_on(run_gets(&mut direct, N)));
        let t = per_request(runtime.block_on(run_gets(&mut tailguard, N)));
        let h = per_request(runtime.block_on(run_gets(&mut tower_hedge, N)));
        let (at, ah) = (t - d, h - d);
        println!(
            "{round:>5}  {d:>6.0}  {t:>9.0}  {h:>11.0}  {:>16}  {at:>16.0} {ah:>11.0} {:>5.2}",
            "",
            at / ah
        );
        added_tailguard.push(at);
        added_tower.push(ah);
        ratios.push(at / ah);
    }
    let median = |xs: &mut Vec<f64>| {
        xs.sort_by(f64::total_cmp);
        xs.get(xs.len() / 2).copied().unwrap_or(f64::NAN)
    };
    println!(
        "median over {rounds} rounds: added tailguard {:.0} ns, added tower-hedge {:.0} ns, ratio {:.2}",
        median(&mut added_tailguard),
        median(&mut added_tower),
        median(&mut ratios)
    );
}
