//! The tower, metrics, window and budget review's tests: each failed before its fix.
#![cfg(feature = "tower")]

use std::future::Future;
use std::sync::atomic::{AtomicU32, Ordering::SeqCst};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use http::{Request, Response};
use tailguard::clock::ManualClock;
use tailguard::hedge::{ColdStart, HedgeConfig, Hedger};
use tailguard::tower::HedgeLayer;
use tower::{service_fn, Layer, Service};

/// A response future polled again after it returned its answer (a caller's bug, which the
/// pass-through path already guards against) sends nothing more to the backend, and the
/// hedger counts, pays for and learns nothing more. It used to ask the hedger again and,
/// told to hedge, send the spare copy of the request as a backup of a finished request
/// (counted as a hedge, a budget token spent, and its answer returned a second time).
#[test]
fn a_finished_response_future_polled_again_sends_no_backup() {
    static CLOCK: ManualClock = ManualClock::new();
    let config = HedgeConfig::new().with_cold_start(ColdStart::Delay(Duration::ZERO));
    let hedger = Arc::new(Hedger::new(&CLOCK, config).unwrap());
    let calls = Arc::new(AtomicU32::new(0));
    let counted = Arc::clone(&calls);
    let backend = service_fn(move |_req: Request<()>| {
        counted.fetch_add(1, SeqCst);
        std::future::ready(Ok::<_, std::convert::Infallible>(Response::new(())))
    });
    // A timer that is always ready: any hedge the hedger asks for goes at once.
    let sleep = |_: Duration| std::future::ready(());
    let mut service = HedgeLayer::new(Arc::clone(&hedger), sleep).layer(backend);
    let mut cx = Context::from_waker(Waker::noop());
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
