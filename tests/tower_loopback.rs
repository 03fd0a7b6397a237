//! The tower layer over real loopback sockets: a hyper client hedged by tailguard against
//! the `http_gateway` example's hyper backend (the support crate's `loopback`). The hedge
//! fires, the loser is cancelled (the backend sees its handler dropped), and no handler or
//! stray connection is left.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::Request;
use http_body_util::{BodyExt, Empty};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use tailguard::clock::StdClock;
use tailguard::hedge::{ColdStart, HedgeConfig, Hedger};
use tailguard::tower::HedgeLayer;
use tailguard_support::loopback::{self, Model};
use tower::{Layer, Service, ServiceExt};

const REQUESTS: usize = 400;
const CLIENTS: usize = 8;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hedges_over_loopback_and_releases_the_loser() {
    let (addr, backend) = loopback::start(Model::Lognormal, 7).await.unwrap();
    let uri: http::Uri = format!("http://{addr}/").parse().unwrap();
    // Hedge at 10 ms: about 7 % of this model's attempts are slower.
    let delay = Duration::from_millis(10);
    let config = HedgeConfig::new()
        .with_min_delay(delay)
        .with_max_delay(delay)
        .with_cold_start(ColdStart::Delay(delay))
        .with_budget_ratio(1.0);
    let hedger = Arc::new(Hedger::new(StdClock::new(), config).unwrap());
    let client: Client<_, Empty<Bytes>> = Client::builder(TokioExecutor::new()).build_http();
    let service = HedgeLayer::new(Arc::clone(&hedger), tokio::time::sleep).layer(client);

    let mut clients = Vec::new();
    for _ in 0..CLIENTS {
        let (mut service, uri) = (service.clone(), uri.clone());
        clients.push(tokio::spawn(async move {
            for _ in 0..REQUESTS / CLIENTS {
                let request = Request::get(uri.clone()).body(Empty::new()).unwrap();
                let response = service.ready().await.unwrap().call(request).await.unwrap();
                assert!(response.status().is_success());
                let body = response.into_body().collect().await.unwrap().to_bytes();
                assert_eq!(body, "ok");
            }
        }));
    }
    for client in clients {
        client.await.unwrap();
    }

    let stats = hedger.stats();
    assert_eq!(stats.requests as usize, REQUESTS);
    assert_eq!((stats.primary_wins + stats.hedge_wins) as usize, REQUESTS);
    assert!(stats.hedges > 0 && stats.hedge_wins > 0, "{stats}");

    // Every hedged request leaves one loser; its connection is closed and the backend
    // drops its handler. Give the last closes time to arrive.
    let mut settled = false;
    for _ in 0..200 {
        let in_flight = backend.attempts() - backend.answered() - backend.cancelled();
        if in_flight == 0 && backend.cancelled() > 0 {
            settled = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(
        settled,
        "handlers still running: attempts {} answered {} cancelled {}",
        backend.attempts(),
        backend.answered(),
        backend.cancelled()
    );
    // A loser's backup may be dropped before it reached the backend, so attempts can be
    // fewer than requests + hedges, never more.
    assert!(backend.attempts() <= (REQUESTS as u64) + u64::from(stats.hedges));
    assert!(backend.cancelled() <= u64::from(stats.hedges));
    assert_eq!(backend.answered() + backend.cancelled(), backend.attempts());
    // Losers stop early: many are cancelled mid-handler. How many answer in the instant
    // before their cancel lands depends on the machine's load (a few percent when idle;
    // 45 % on a loaded two-core CI run, 75 % with a dozen compilers beside it), so the
    // bound is an eighth; the exact accounting above and the closed connections below are
    // what must hold.
    assert!(
        backend.cancelled() * 8 >= u64::from(stats.hedges),
        "cancelled {} of {} hedges",
        backend.cancelled(),
        stats.hedges
    );
    // The losers' handlers ended while the client still holds its pool: their
    // connections were closed, not parked. Dropping the client closes the idle rest.
    drop(service);
    let mut open = backend.open_connections();
    for _ in 0..200 {
        if open == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
        open = backend.open_connections();
    }
    assert_eq!(open, 0, "connections left open");
}
