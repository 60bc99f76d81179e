//! A response body that fails when the server goes quiet: every piece that arrives (keepalive
//! comments included) restarts the clock, so only real silence counts.

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use futures_util::Stream;
use tokio::time::{Instant, Sleep};

/// Why the body stopped: the server went quiet, or the inner stream failed.
#[derive(Debug)]
pub(crate) enum QuietError<E> {
    /// Nothing arrived for the whole limit.
    Silent,
    /// The inner stream's own error.
    Inner(E),
}

impl<E: std::fmt::Display> std::fmt::Display for QuietError<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            QuietError::Silent => f.write_str("the server went silent"),
            QuietError::Inner(e) => e.fmt(f),
        }
    }
}

/// `inner` with a silence limit between its items.
pub(crate) struct Quiet<S> {
    inner: S,
    limit: Duration,
    timer: Pin<Box<Sleep>>,
    silent: bool,
}

impl<S> Quiet<S> {
    pub(crate) fn new(inner: S, limit: Duration) -> Self {
        Quiet {
            inner,
            limit,
            timer: Box::pin(tokio::time::sleep(limit)),
            silent: false,
        }
    }

    /// Whether the body ended because the server went quiet.
    pub(crate) fn went_silent(&self) -> bool {
        self.silent
    }
}

impl<S, B, E> Stream for Quiet<S>
where
    S: Stream<Item = Result<B, E>> + Unpin,
{
    type Item = Result<B, QuietError<E>>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        if this.silent {
            return Poll::Ready(None);
        }
        match Pin::new(&mut this.inner).poll_next(cx) {
            Poll::Ready(Some(item)) => {
                let deadline = Instant::now() + this.limit;
                this.timer.as_mut().reset(deadline);
                Poll::Ready(Some(item.map_err(QuietError::Inner)))
            }
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => match this.timer.as_mut().poll(cx) {
                Poll::Ready(()) => {
                    this.silent = true;
                    Poll::Ready(Some(Err(QuietError::Silent)))
                }
                Poll::Pending => Poll::Pending,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::StreamExt;

    #[tokio::test(start_paused = true)]
    async fn pieces_keep_it_alive_and_silence_ends_it() {
        let (tx, rx) = tokio::sync::mpsc::channel::<Result<u8, String>>(4);
        let inner = futures_util::stream::unfold(rx, |mut rx| async move {
            rx.recv().await.map(|item| (item, rx))
        });
        let mut body = Quiet::new(Box::pin(inner), Duration::from_secs(10));
        let sender = tokio::spawn(async move {
            for i in 0..3 {
                tokio::time::sleep(Duration::from_secs(8)).await;
                tx.send(Ok(i)).await.unwrap();
            }
            // Then silence, with the sender still open.
            tokio::time::sleep(Duration::from_secs(3600)).await;
            drop(tx);
        });
        for i in 0..3 {
            assert_eq!(body.next().await.unwrap().unwrap(), i);
        }
        assert!(!body.went_silent());
        assert!(matches!(body.next().await, Some(Err(QuietError::Silent))));
        assert!(body.went_silent());
        assert!(body.next().await.is_none());
        sender.abort();
    }
}
