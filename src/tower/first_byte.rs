//! [`FirstByteLayer`]: an HTTP service whose responses are ready at the first body byte.

use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::task::{ready, Context, Poll};

use bytes::Buf;
use http::response::Parts;
use http::Response;
use http_body::{Body, Frame, SizeHint};
use pin_project_lite::pin_project;
use tower_layer::Layer;
use tower_service::Service;

/// A [`Layer`] that wraps HTTP services in [`FirstByte`].
///
/// Put it *inside* the [`HedgeLayer`](super::HedgeLayer) to hedge a streaming endpoint on
/// its time to first byte: `ServiceBuilder::new().layer(hedge).layer(FirstByteLayer)`.
///
/// ```
/// use std::convert::Infallible;
/// use std::time::Duration;
/// use bytes::Bytes;
/// use http::{Request, Response};
/// use http_body::Frame;
/// use http_body_util::{BodyExt, StreamBody};
/// use smol::stream::{self, StreamExt};
/// use tailguard::tower::FirstByteLayer;
/// use tower::{service_fn, Layer, ServiceExt};
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// // The headers come at once, the body's first byte when it is sent.
/// let (first_byte, rx) = tokio::sync::oneshot::channel::<Bytes>();
/// let mut body = Some(StreamBody::new(stream::once_future(rx).map(|b| b.map(Frame::data))));
/// let backend = service_fn(move |_req: Request<()>| {
///     let body = body.take().unwrap();
///     async move { Ok::<_, Infallible>(Response::new(body)) }
/// });
/// let mut response = Box::pin(FirstByteLayer.layer(backend).oneshot(Request::new(())));
/// // Tokio's paused time: the timeout fires at once, with no real wait.
/// let waited = tokio::time::timeout(Duration::from_secs(1), &mut response).await;
/// assert!(waited.is_err()); // headers in, no byte yet: not ready
/// first_byte.send(Bytes::from("token")).unwrap();
/// let body = response.await.unwrap().into_body().collect().await.unwrap().to_bytes();
/// assert_eq!(body, "token");
/// # }
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct FirstByteLayer;

impl<S> Layer<S> for FirstByteLayer {
    type Service = FirstByte<S>;

    fn layer(&self, inner: S) -> FirstByte<S> {
        FirstByte { inner }
    }
}

/// An HTTP service whose response future completes when the first body byte has
/// arrived (or the body has ended), not at the headers. The frame read is kept and
/// handed out first by the response's [`Prefetched`] body.
///
/// ```
/// use std::convert::Infallible;
/// use bytes::Bytes;
/// use http::{Request, Response};
/// use http_body_util::{BodyExt, Full};
/// use tailguard::tower::FirstByteLayer;
/// use tower::{service_fn, Layer, ServiceExt};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let backend = service_fn(|_req: Request<()>| async {
///     Ok::<_, Infallible>(Response::new(Full::new(Bytes::from("token"))))
/// });
/// let response = FirstByteLayer.layer(backend).oneshot(Request::new(())).await.unwrap();
/// let body = response.into_body().collect().await.unwrap().to_bytes();
/// assert_eq!(body, "token");
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct FirstByte<S> {
    inner: S,
}

impl<S, Req, B> Service<Req> for FirstByte<S>
where
    S: Service<Req, Response = Response<B>>,
    B: Body + Unpin,
{
    type Response = Response<Prefetched<B>>;
    type Error = FirstByteError<S::Error, B::Error>;
    type Future = FirstByteFuture<S::Future, B>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx).map_err(FirstByteError::Service)
    }

    fn call(&mut self, request: Req) -> Self::Future {
        FirstByteFuture {
            headers: Some(self.inner.call(request)),
            head: None,
        }
    }
}

pin_project! {
    /// The response future of [`FirstByte`].
    ///
    /// ```
    /// use std::convert::Infallible;
    /// use bytes::Bytes;
    /// use http::{Request, Response};
    /// use http_body::{Body, Frame};
    /// use http_body_util::{BodyExt, Empty, StreamBody};
    /// use tailguard::tower::{FirstByteFuture, FirstByteLayer};
    /// use tower::{service_fn, Layer, Service, ServiceExt};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// // Two empty data frames before the first byte.
    /// let backend = service_fn(|_req: Request<()>| async {
    ///     let frames = ["", "", "data"].map(|s| Ok::<_, Infallible>(Frame::data(Bytes::from(s))));
    ///     Ok::<_, Infallible>(Response::new(StreamBody::new(smol::stream::iter(frames))))
    /// });
    /// let mut service = FirstByteLayer.layer(backend);
    /// let future: FirstByteFuture<_, _> = service.ready().await.unwrap().call(Request::new(()));
    /// let mut body = future.await.unwrap().into_body();
    /// // The empty frames were skipped: the kept frame holds the first byte.
    /// let first = body.frame().await.unwrap().unwrap().into_data().unwrap();
    /// assert_eq!(first, "data");
    ///
    /// // A body that ends without a byte completes the future too.
    /// let empty = service_fn(|_req: Request<()>| async {
    ///     Ok::<_, Infallible>(Response::new(Empty::<Bytes>::new()))
    /// });
    /// let response = FirstByteLayer.layer(empty).oneshot(Request::new(())).await.unwrap();
    /// assert!(response.body().is_end_stream());
    /// # }
    /// ```
    pub struct FirstByteFuture<F, B> {
        #[pin]
        headers: Option<F>,
        // The response head and body, once the headers are in.
        head: Option<(Parts, B)>,
    }
}

impl<F, B, E> Future for FirstByteFuture<F, B>
where
    F: Future<Output = Result<Response<B>, E>>,
    B: Body + Unpin,
{
    type Output = Result<Response<Prefetched<B>>, FirstByteError<E, B::Error>>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut this = self.project();
        if let Some(headers) = this.headers.as_mut().as_pin_mut() {
            let response = ready!(headers.poll(cx));
            this.headers.set(None);
            match response {
                Ok(response) => *this.head = Some(response.into_parts()),
                Err(e) => return Poll::Ready(Err(FirstByteError::Service(e))),
            }
        }
        let Some((_, body)) = this.head.as_mut() else {
            return Poll::Pending; // polled after completion
        };
        // Empty data frames carry no byte: skip them, a few at a time. A body that has an
        // empty frame ready on every poll would otherwise hold the executor's thread for
        // ever: past `EMPTY_FRAMES_PER_POLL`, yield and ask to be polled again.
        let mut empty = 0u8;
        let first = loop {
            match ready!(Pin::new(&mut *body).poll_frame(cx)) {
                Some(Ok(frame)) if frame.data_ref().is_some_and(|d| !d.has_remaining()) => {
                    empty = empty.wrapping_add(1); // below the limit: cannot wrap
                    if empty >= EMPTY_FRAMES_PER_POLL {
                        cx.waker().wake_by_ref();
                        return Poll::Pending;
                    }
                }
                Some(Ok(frame)) => break Some(frame),
                Some(Err(e)) => {
                    *this.head = None;
                    return Poll::Ready(Err(FirstByteError::Body(e)));
                }
                None => break None,
            }
        };
        match this.head.take() {
            Some((parts, inner)) => {
                Poll::Ready(Ok(Response::from_parts(parts, Prefetched { first, inner })))
            }
            None => Poll::Pending,
        }
    }
}

/// Empty data frames [`FirstByteFuture`] skips in one poll before it yields.
const EMPTY_FRAMES_PER_POLL: u8 = 32;

impl<F, B> fmt::Debug for FirstByteFuture<F, B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FirstByteFuture")
            .field("headers_in", &self.headers.is_none())
            .finish_non_exhaustive()
    }
}

pin_project! {
    /// A response body whose first frame was already read by [`FirstByte`]: it yields
    /// that frame, then the rest of the inner body.
    ///
    /// ```
    /// use std::convert::Infallible;
    /// use bytes::Bytes;
    /// use http::{Request, Response};
    /// use http_body::Body;
    /// use http_body_util::{BodyExt, Full};
    /// use tailguard::tower::{FirstByteLayer, Prefetched};
    /// use tower::{service_fn, Layer, ServiceExt};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let backend = service_fn(|_req: Request<()>| async {
    ///     Ok::<_, Infallible>(Response::new(Full::new(Bytes::from("hello"))))
    /// });
    /// let response = FirstByteLayer.layer(backend).oneshot(Request::new(())).await.unwrap();
    /// let body: Prefetched<Full<Bytes>> = response.into_body();
    /// // The inner body's only frame was read; the kept frame still counts.
    /// assert_eq!(body.size_hint().exact(), Some(5));
    /// assert!(!body.is_end_stream());
    /// assert_eq!(body.collect().await.unwrap().to_bytes(), "hello");
    /// # }
    /// ```
    #[derive(Debug)]
    pub struct Prefetched<B: Body> {
        first: Option<Frame<B::Data>>,
        #[pin]
        inner: B,
    }
}

impl<B: Body> Prefetched<B> {
    /// The inner body (without the prefetched frame, if it is still unread).
    ///
    /// ```
    /// use std::convert::Infallible;
    /// use bytes::Bytes;
    /// use http::{Request, Response};
    /// use http_body::Frame;
    /// use http_body_util::{BodyExt, StreamBody};
    /// use tailguard::tower::FirstByteLayer;
    /// use tower::{service_fn, Layer, ServiceExt};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let backend = service_fn(|_req: Request<()>| async {
    ///     let frames = ["first, ", "rest"].map(|s| Ok::<_, Infallible>(Frame::data(Bytes::from(s))));
    ///     Ok::<_, Infallible>(Response::new(StreamBody::new(smol::stream::iter(frames))))
    /// });
    /// let response = FirstByteLayer.layer(backend).oneshot(Request::new(())).await.unwrap();
    /// let inner = response.into_body().into_inner(); // the unread first frame is dropped
    /// assert_eq!(inner.collect().await.unwrap().to_bytes(), "rest");
    /// # }
    /// ```
    pub fn into_inner(self) -> B {
        self.inner
    }
}

impl<B: Body> Body for Prefetched<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<B::Data>, B::Error>>> {
        let this = self.project();
        match this.first.take() {
            Some(frame) => Poll::Ready(Some(Ok(frame))),
            None => this.inner.poll_frame(cx),
        }
    }

    fn is_end_stream(&self) -> bool {
        self.first.is_none() && self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        let inner = self.inner.size_hint();
        let first = self
            .first
            .as_ref()
            .and_then(Frame::data_ref)
            .map_or(0, |d| d.remaining() as u64);
        // `SizeHint`'s setters assert lower <= upper at every step: the upper bound first
        // (it only grows), then the lower one (still below it, saturation included).
        let mut hint = SizeHint::new();
        if let Some(upper) = inner.upper() {
            hint.set_upper(upper.saturating_add(first));
        }
        hint.set_lower(inner.lower().saturating_add(first));
        hint
    }
}

/// Why a [`FirstByte`] service failed: the inner service, or the body before its first
/// byte.
///
/// ```
/// use std::error::Error;
/// use std::io;
/// use bytes::Bytes;
/// use http::{Request, Response};
/// use http_body::Frame;
/// use http_body_util::{Full, StreamBody};
/// use tailguard::tower::{FirstByteError, FirstByteLayer};
/// use tower::{service_fn, Layer, ServiceExt};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let refused = service_fn(|_req: Request<()>| async {
///     Err::<Response<Full<Bytes>>, _>(io::Error::other("connection refused"))
/// });
/// let err = FirstByteLayer.layer(refused).oneshot(Request::new(())).await.err().unwrap();
/// assert!(matches!(err, FirstByteError::Service(_)));
/// assert_eq!(err.to_string(), "service error: connection refused");
///
/// // Headers, then a reset before any byte: the response future fails.
/// let reset = service_fn(|_req: Request<()>| async {
///     let frames = [Err::<Frame<Bytes>, _>(io::Error::other("reset"))];
///     Ok::<_, io::Error>(Response::new(StreamBody::new(smol::stream::iter(frames))))
/// });
/// let err = FirstByteLayer.layer(reset).oneshot(Request::new(())).await.err().unwrap();
/// assert!(matches!(err, FirstByteError::Body(_)));
/// assert_eq!(err.to_string(), "response body failed before its first byte: reset");
/// assert_eq!(err.source().unwrap().to_string(), "reset");
/// # }
/// ```
#[derive(Debug)]
pub enum FirstByteError<E, BodyError> {
    /// The inner service failed.
    Service(E),
    /// The body failed before its first byte.
    Body(BodyError),
}

impl<E: fmt::Display, BodyError: fmt::Display> fmt::Display for FirstByteError<E, BodyError> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FirstByteError::Service(e) => write!(f, "service error: {e}"),
            FirstByteError::Body(e) => write!(f, "response body failed before its first byte: {e}"),
        }
    }
}

impl<E, BodyError> std::error::Error for FirstByteError<E, BodyError>
where
    E: std::error::Error + 'static,
    BodyError: std::error::Error + 'static,
{
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            FirstByteError::Service(e) => Some(e),
            FirstByteError::Body(e) => Some(e),
        }
    }
}
