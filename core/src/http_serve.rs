//! Serving HTTP/1.1 until told to stop: the accept loop and the graceful end of a
//! connection, shared by the daemons that serve HTTP (the memory server, the gateway).

use std::net::SocketAddr;

use hyper::body::{Body, Incoming};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

/// The next connection `listener` accepts, or `None` once `stop` is cancelled. A failed
/// accept is logged as `what`'s and skipped.
pub async fn accept(
    listener: &TcpListener,
    stop: &CancellationToken,
    what: &str,
) -> Option<(TcpStream, SocketAddr)> {
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => return Some(accepted),
                Err(e) => tracing::warn!("{what}: accept failed: {e}"),
            },
            () = stop.cancelled() => return None,
        }
    }
}

/// Serves one connection's requests with `service`; once `stop` fires, the request in
/// flight completes and the connection closes (an answer is never cut).
pub async fn serve_connection<I, S, B>(
    io: I,
    service: S,
    stop: &CancellationToken,
) -> hyper::Result<()>
where
    I: hyper::rt::Read + hyper::rt::Write + Unpin + 'static,
    S: hyper::service::HttpService<Incoming, ResBody = B>,
    S::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    B: Body + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let connection = hyper::server::conn::http1::Builder::new().serve_connection(io, service);
    tokio::pin!(connection);
    tokio::select! {
        done = connection.as_mut() => done,
        () = stop.cancelled() => {
            connection.as_mut().graceful_shutdown();
            connection.await
        }
    }
}

/// The token of `request`'s `Authorization: Bearer TOKEN` header (empty without one).
pub fn bearer<B>(request: &hyper::Request<B>) -> &str {
    request
        .headers()
        .get(hyper::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or_default()
        .trim()
}
