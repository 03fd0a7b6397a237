//! [`HedgePolicy`]: which requests may be hedged and how a result counts.

use core::time::Duration;

use http::{Method, Request, Response, StatusCode};

use crate::hedge::Outcome;

/// Decides which requests the [`Hedge`](super::Hedge) service may duplicate, and judges
/// each attempt's result.
///
/// Implement it for protocols other than HTTP (gRPC status codes, a database client's
/// errors) or for a different idea of which HTTP requests are safe to send twice.
///
/// ```
/// use tailguard::tower::{HedgePolicy, Outcome};
///
/// /// Key-value reads are safe to send twice; writes are not.
/// #[derive(Clone)]
/// struct ReadsOnly;
///
/// enum Query { Get(String), Put(String, String) }
///
/// impl HedgePolicy<Query, Option<String>, std::io::Error> for ReadsOnly {
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
/// ```
pub trait HedgePolicy<Req, Res, E> {
    /// A copy of `request` for a backup attempt, or `None` when it must not be sent twice
    /// (not idempotent, or a body that cannot be replayed). `None` passes the request
    /// through untouched: it is neither hedged nor recorded, so the hedger learns only
    /// from the requests it decides about.
    fn clone_request(&self, request: &Req) -> Option<Req>;

    /// How an attempt's result counts.
    fn classify(&self, result: &Result<Res, E>) -> Outcome;

    /// How long the caller can still wait for `request`, if it has a deadline: no backup
    /// is sent that could not answer in time (see
    /// [`Hedger::start_with_deadline`](crate::hedge::Hedger::start_with_deadline)). `None`
    /// (the default): no deadline.
    fn time_left(&self, request: &Req) -> Option<Duration> {
        let _ = request;
        None
    }
}

/// A request extension saying how long the caller can still wait (propagated from an
/// upstream deadline, say). [`HttpPolicy`] reads it: a backup that could not answer in
/// time is not sent.
///
/// ```
/// use std::time::Duration;
/// use http::{Request, Response};
/// use tailguard::tower::{HedgePolicy, HttpPolicy, TimeLeft};
///
/// let mut request = Request::get("http://backend/item/7").body(()).unwrap();
/// request.extensions_mut().insert(TimeLeft(Duration::from_millis(150)));
/// let left = HedgePolicy::<_, Response<()>, ()>::time_left(&HttpPolicy, &request);
/// assert_eq!(left, Some(Duration::from_millis(150)));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TimeLeft(pub Duration);

/// The default HTTP policy: hedge only the safe methods (GET, HEAD, OPTIONS) when the
/// request body can be cloned; 429 and 503 are back-pressure, other 5xx responses and
/// transport errors are failures, everything else is an answer. A [`TimeLeft`] extension
/// on the request is its deadline.
///
/// PUT and DELETE are idempotent but not safe: two copies in flight race each other on
/// the server. Hedge them with a policy of your own if your server makes that harmless.
///
/// ```
/// use http::{Method, Request, Response, StatusCode};
/// use tailguard::tower::{HedgePolicy, HttpPolicy, Outcome};
///
/// let get = Request::get("http://backend/item/7").body(()).unwrap();
/// let post = Request::post("http://backend/item").body(()).unwrap();
/// assert!(HedgePolicy::<_, Response<()>, ()>::clone_request(&HttpPolicy, &get).is_some());
/// assert!(HedgePolicy::<_, Response<()>, ()>::clone_request(&HttpPolicy, &post).is_none());
///
/// let busy: Result<Response<()>, ()> =
///     Ok(Response::builder().status(StatusCode::TOO_MANY_REQUESTS).body(()).unwrap());
/// assert_eq!(HedgePolicy::<Request<()>, _, _>::classify(&HttpPolicy, &busy), Outcome::RateLimited);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HttpPolicy;

impl<B: Clone, ResBody, E> HedgePolicy<Request<B>, Response<ResBody>, E> for HttpPolicy {
    fn clone_request(&self, request: &Request<B>) -> Option<Request<B>> {
        let safe = [Method::GET, Method::HEAD, Method::OPTIONS];
        safe.contains(request.method()).then(|| request.clone())
    }

    fn classify(&self, result: &Result<Response<ResBody>, E>) -> Outcome {
        match result {
            Ok(response) => match response.status() {
                StatusCode::TOO_MANY_REQUESTS | StatusCode::SERVICE_UNAVAILABLE => {
                    Outcome::RateLimited
                }
                status if status.is_server_error() => Outcome::Failure,
                _ => Outcome::Success,
            },
            Err(_) => Outcome::Failure,
        }
    }

    fn time_left(&self, request: &Request<B>) -> Option<Duration> {
        request.extensions().get::<TimeLeft>().map(|left| left.0)
    }
}
