//! How a daemon (the memory server, the gateway) hears it should stop.

/// Returns once SIGTERM or SIGINT arrives (never, where they cannot be watched).
async fn until_stopped() {
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

/// A token cancelled when SIGTERM or SIGINT arrives (a task waits for them).
pub fn stop_token() -> tokio_util::sync::CancellationToken {
    let stop = tokio_util::sync::CancellationToken::new();
    let cancel = stop.clone();
    tokio::spawn(async move {
        until_stopped().await;
        cancel.cancel();
    });
    stop
}
