//! The loopback backend of examples/http_gateway and tests/tower_loopback.rs: hyper on
//! 127.0.0.1 with the latency of workload A or B (docs/reference.md, workloads A and B).
//!
//! Every attempt draws its latency independently. A handler whose client goes away is
//! dropped by hyper and stops early; [`Backend::cancelled`] counts those.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

use http::{Request, Response};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;

mod body;
mod timer;

pub use body::OneChunkBody;

use crate::workload::{a, b};
use crate::Rng;

/// How long the backend takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Model {
    /// Workload A ([`a`]): log-normal, mean 5 ms, sd 2 ms; 5 % of attempts 10x slower.
    /// The response (headers and body) is sent after the latency.
    Lognormal,
    /// Workload B ([`b`]), a streaming endpoint: headers at once; the first body byte
    /// after a time to first token of log-normal mean 15 ms, sd 3 ms (cache hit), or for
    /// 20 % of attempts mean 200 ms, sd 25 ms (cache miss).
    Ttft,
}

impl Model {
    /// The latency (or time to first token) of attempt `n`.
    pub fn draw(self, seed: u64, n: u64) -> Duration {
        let mut rng = Rng::keyed(seed, [n]);
        let ns = match self {
            Model::Lognormal => a::latency_ns(&mut rng),
            Model::Ttft => b::ttft_ns(&mut rng),
        };
        Duration::from_nanos(ns.round() as u64)
    }
}

/// Attempt counters of a running backend.
#[derive(Debug, Default)]
pub struct Backend {
    attempts: AtomicU64,
    answered: AtomicU64,
    cancelled: AtomicU64,
    open_connections: AtomicU64,
}

impl Backend {
    /// Requests received.
    pub fn attempts(&self) -> u64 {
        self.attempts.load(Relaxed)
    }

    /// Requests answered in full (for `Ttft`, the first token sent).
    pub fn answered(&self) -> u64 {
        self.answered.load(Relaxed)
    }

    /// Requests whose client went away first: the handler was dropped and stopped early.
    pub fn cancelled(&self) -> u64 {
        self.cancelled.load(Relaxed)
    }

    /// TCP connections open now.
    pub fn open_connections(&self) -> u64 {
        self.open_connections.load(Relaxed)
    }
}

/// Counts one attempt as answered, or as cancelled if dropped unanswered.
struct AttemptGuard {
    backend: Arc<Backend>,
    answered: bool,
}

impl AttemptGuard {
    fn answer(&mut self) {
        if !self.answered {
            self.answered = true;
            self.backend.answered.fetch_add(1, Relaxed);
        }
    }
}

impl Drop for AttemptGuard {
    fn drop(&mut self) {
        if !self.answered {
            self.backend.cancelled.fetch_add(1, Relaxed);
        }
    }
}

struct ConnectionGuard(Arc<Backend>);

impl Drop for ConnectionGuard {
    fn drop(&mut self) {
        self.0.open_connections.fetch_sub(1, Relaxed);
    }
}

/// The response body: one chunk, after a delay for `Ttft` (at once otherwise), which
/// answers the attempt.
type ReplyBody = OneChunkBody<timer::Sleep>;

async fn handle(
    backend: Arc<Backend>,
    model: Model,
    seed: u64,
    _request: Request<Incoming>,
) -> Result<Response<ReplyBody>, Infallible> {
    let n = backend.attempts.fetch_add(1, Relaxed);
    let mut attempt = AttemptGuard {
        backend,
        answered: false,
    };
    let latency = model.draw(seed, n);
    let first_token = match model {
        Model::Lognormal => {
            // Dropped here if the client goes away: the handler stops early.
            timer::sleep(latency).await;
            None
        }
        Model::Ttft => Some(timer::sleep(latency)),
    };
    Ok(Response::new(
        ReplyBody::new(first_token, b"ok").on_sent(move || attempt.answer()),
    ))
}

/// Starts a backend on an ephemeral 127.0.0.1 port; returns its address and counters.
pub async fn start(model: Model, seed: u64) -> std::io::Result<(SocketAddr, Arc<Backend>)> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let backend = Arc::new(Backend::default());
    let counters = Arc::clone(&backend);
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let _ = stream.set_nodelay(true);
            backend.open_connections.fetch_add(1, Relaxed);
            let guard = ConnectionGuard(Arc::clone(&backend));
            let backend = Arc::clone(&backend);
            tokio::spawn(async move {
                let _guard = guard;
                let service =
                    service_fn(move |request| handle(Arc::clone(&backend), model, seed, request));
                // A connection closed mid-request ends with an error: that is a client
                // going away, which is expected here.
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    Ok((addr, counters))
}
