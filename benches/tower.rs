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
//!   for a possible backup, a ticket is taken (a budget deposit), the hedger says `Wait`
//!   and a timer future is made, the primary answers and the latency is recorded.
//!
//! Wall time per request, uncontended.

use std::convert::Infallible;
use std::future::Future;
use std::hint::black_box;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use criterion::Criterion;
use http::{Method, Request, Response};
use tailguard::clock::StdClock;
use tailguard::hedge::{HedgeConfig, Hedger};
use tailguard::tower::HedgeLayer;
use tower::{service_fn, Layer, Service};

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

fn main() {
    let mut c = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .configure_from_args();
    let backend = service_fn(|_: Request<()>| async { Ok::<_, Infallible>(Response::new(())) });
    let hedger = match Hedger::new(StdClock::new(), HedgeConfig::new()) {
        Ok(hedger) => Arc::new(hedger),
        Err(e) => panic!("default configuration: {e}"),
    };
    // A learned delay, so hedgeable requests take the `Wait` path.
    for _ in 0..1_000 {
        hedger.record(Duration::from_millis(5));
    }
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
    c.final_summary();
}
