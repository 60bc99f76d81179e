//! How a daemon (the memory server, the gateway) hears it should stop.

/// Returns once SIGTERM or SIGINT arrives (never, where they cannot be watched).
pub async fn until_stopped() {
    use tokio::signal::unix::{SignalKind, signal};
    match (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) {
        (Ok(mut term), Ok(mut int)) => {
            tokio::select! {
                _ = term.recv() => {}
                _ = int.recv() => {}
            }
        }
        _ => std::future::pending::<()>().await,
    }
}
