//! [`RequestPolicy`]: which requests may be hedged and how a result counts.

use core::time::Duration;
use std::time::{SystemTime, UNIX_EPOCH};

use http::header::RETRY_AFTER;
use http::{HeaderMap, Method, Request, Response, StatusCode};

use super::retry_after::{grpc_retry_pushback, parse_retry_after};
use crate::deadline::Deadline;
use crate::hedge::Outcome;

/// Decides which requests the [`Hedge`](super::Hedge) service may duplicate, and judges
/// each attempt's result.
///
/// Implement it for protocols other than HTTP (gRPC status codes, a database client's
/// errors) or for a different idea of which HTTP requests are safe to send twice.
///
/// ```
/// use tailguard::tower::{Outcome, RequestPolicy};
///
/// /// Key-value reads are safe to send twice; writes are not.
/// #[derive(Clone)]
/// struct ReadsOnly;
///
/// enum Query { Get(String), Put(String, String) }
///
/// impl RequestPolicy<Query, Option<String>, std::io::Error> for ReadsOnly {
///     fn clone_request(&self, query: &Query) -> Option<Query> {
///         match query {
///             Query::Get(key) => Some(Query::Get(key.clone())),
///             Query::Put(..) => None,
///         }
///     }
///     fn classify(&self, result: &Result<Option<String>, std::io::Error>) -> Outcome {
///         match result {
///             Ok(_) => Outcome::Success,
///             Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => Outcome::RateLimited,
///             Err(_) => Outcome::Failure,
///         }
///     }
/// }
/// assert!(ReadsOnly.clone_request(&Query::Put("k".into(), "v".into())).is_none());
/// let busy = Err(std::io::Error::from(std::io::ErrorKind::WouldBlock));
/// assert_eq!(ReadsOnly.classify(&busy), Outcome::RateLimited);
/// assert_eq!(ReadsOnly.classify(&Ok(None)), Outcome::Success); // a miss is an answer
/// // `deadline` was not implemented: no request has one.
/// assert!(ReadsOnly.deadline(&Query::Get("k".into())).is_none());
/// ```
pub trait RequestPolicy<Req, Res, E> {
    /// A copy of `request` for a backup attempt, or `None` when it must not be sent twice
    /// (not idempotent, or a body that cannot be replayed). `None` passes the request
    /// through untouched: it is neither hedged nor recorded, so the hedger learns only
    /// from the requests it decides about. With two hedges allowed, the layer asks again
    /// when the first backup goes out; `None` then sends no second backup, and the hedger
    /// neither counts one nor spends a token on it.
    fn clone_request(&self, request: &Req) -> Option<Req>;

    /// How an attempt's result counts.
    fn classify(&self, result: &Result<Res, E>) -> Outcome;

    /// `request`'s deadline, if it has one, on the hedger's clock: no backup is sent that
    /// could not answer in time (see
    /// [`Hedger::start_with_deadline`](crate::hedge::Hedger::start_with_deadline)). The
    /// layer does not cancel a request at its deadline (it has no error of the inner
    /// service's type to return); put a timeout layer around it for that. `None` (the
    /// default): no deadline.
    fn deadline(&self, request: &Req) -> Option<Deadline> {
        let _ = request;
        None
    }
}

/// The default HTTP policy: hedge only the safe methods (GET, HEAD, OPTIONS) when the
/// request body can be cloned; 429 and 503 are back-pressure, other 5xx responses and
/// transport errors are failures, everything else is an answer. A [`Deadline`] in the
/// request's extensions (propagated from an upstream deadline, say; on the hedger's
/// clock) is its deadline.
///
/// A 429 or 503 that says how long to wait is [`Outcome::RateLimitedFor`] that long: its
/// `grpc-retry-pushback-ms` header (milliseconds; a negative or unparseable one asks, as
/// gRFC A6 reads it, for no retry at all: the longest pushback the hedger takes), or else
/// its `Retry-After` (seconds, or an HTTP-date against the wall clock:
/// [`parse_retry_after`](super::parse_retry_after)). Without either, or with a
/// `Retry-After` that is neither form, it is [`Outcome::RateLimited`]. The hedger bounds
/// the delay by its [`max_pushback`](crate::hedge::HedgeConfig::max_pushback).
///
/// PUT and DELETE are idempotent but not safe: two copies in flight race each other on
/// the server. Hedge them with a policy of your own if your server makes that harmless.
///
/// ```
/// use core::time::Duration;
/// use http::{Request, Response, StatusCode};
/// use tailguard::clock::{Clock, StdClock};
/// use tailguard::deadline::Deadline;
/// use tailguard::tower::{HttpPolicy, Outcome, RequestPolicy};
///
/// let policy: &dyn RequestPolicy<Request<()>, Response<()>, ()> = &HttpPolicy;
/// let get = Request::get("http://backend/item/7").body(()).unwrap();
/// let post = Request::post("http://backend/item").body(()).unwrap();
/// assert!(policy.clone_request(&get).is_some());
/// assert!(policy.clone_request(&post).is_none());
///
/// let busy = Ok(Response::builder().status(StatusCode::TOO_MANY_REQUESTS).body(()).unwrap());
/// assert_eq!(policy.classify(&busy), Outcome::RateLimited);
/// let later = Response::builder()
///     .status(StatusCode::SERVICE_UNAVAILABLE)
///     .header("retry-after", "120")
///     .body(())
///     .unwrap();
/// assert_eq!(
///     policy.classify(&Ok(later)),
///     Outcome::RateLimitedFor(Duration::from_secs(120))
/// );
///
/// let clock = StdClock::new(); // the hedger's clock
/// let deadline = Deadline::after(clock.now(), Duration::from_millis(150));
/// let mut get = get;
/// get.extensions_mut().insert(deadline);
/// assert_eq!(policy.deadline(&get), Some(deadline));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HttpPolicy;

impl<B: Clone, ResBody, E> RequestPolicy<Request<B>, Response<ResBody>, E> for HttpPolicy {
    fn clone_request(&self, request: &Request<B>) -> Option<Request<B>> {
        let safe = [Method::GET, Method::HEAD, Method::OPTIONS];
        safe.contains(request.method()).then(|| request.clone())
    }

    fn classify(&self, result: &Result<Response<ResBody>, E>) -> Outcome {
        match result {
            Ok(response) => match response.status() {
                StatusCode::TOO_MANY_REQUESTS | StatusCode::SERVICE_UNAVAILABLE => {
                    match pushback(response.headers()) {
                        Some(pushback) => Outcome::RateLimitedFor(pushback),
                        None => Outcome::RateLimited,
                    }
                }
                status if status.is_server_error() => Outcome::Failure,
                _ => Outcome::Success,
            },
            Err(_) => Outcome::Failure,
        }
    }

    fn deadline(&self, request: &Request<B>) -> Option<Deadline> {
        request.extensions().get::<Deadline>().copied()
    }
}

/// The delay a back-pressure response's headers ask for: `grpc-retry-pushback-ms` first
/// (the more precise, and gRPC's own), then `Retry-After`.
fn pushback(headers: &HeaderMap) -> Option<Duration> {
    if let Some(ms) = headers.get("grpc-retry-pushback-ms") {
        return Some(grpc_retry_pushback(ms.as_bytes()));
    }
    let retry_after = headers.get(RETRY_AFTER)?;
    // The wall clock, read only for a header that may be a date; before 1970, the epoch.
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_secs());
    parse_retry_after(retry_after.as_bytes(), now)
}
