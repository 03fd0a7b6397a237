//! [`OneChunkBody`]: a response body of one chunk, sent when a wait ends.

use std::boxed::Box;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Body, Frame};

/// A response body of one chunk, sent once its wait (a sleep until a streaming endpoint's
/// first token, say) ends, or at once without one; then `on_sent` runs, if set. The
/// loopback backend's body (over its own timer), and the tower layer tests' (over tokio's
/// paused clock).
pub struct OneChunkBody<S> {
    wait: Option<Pin<Box<S>>>,
    /// `None` once sent.
    chunk: Option<Bytes>,
    on_sent: Option<Box<dyn FnOnce() + Send>>,
}

impl<S: Future<Output = ()>> OneChunkBody<S> {
    /// `chunk`, after `wait` if there is one.
    pub fn new(wait: Option<S>, chunk: &'static [u8]) -> Self {
        OneChunkBody {
            wait: wait.map(Box::pin),
            chunk: Some(Bytes::from_static(chunk)),
            on_sent: None,
        }
    }

    /// Runs `f` when the chunk is sent (not if the body is dropped first: `f` is dropped
    /// with it).
    pub fn on_sent(mut self, f: impl FnOnce() + Send + 'static) -> Self {
        self.on_sent = Some(Box::new(f));
        self
    }
}

impl<S: Future<Output = ()>> Body for OneChunkBody<S> {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        if let Some(wait) = self.wait.as_mut() {
            std::task::ready!(wait.as_mut().poll(cx));
            self.wait = None;
        }
        let Some(chunk) = self.chunk.take() else {
            return Poll::Ready(None);
        };
        if let Some(on_sent) = self.on_sent.take() {
            on_sent();
        }
        Poll::Ready(Some(Ok(Frame::data(chunk))))
    }
}
