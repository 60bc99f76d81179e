//! `march browser`: the browser daemon's entry point, and the commands a user (or the
//! supervisor view) sends it. The daemon itself is `march_tools::browser`.

use std::time::Duration;

use march_core::config::{BrowserConfig, Config};
use march_core::paths::MarchPaths;
use march_tools::browser::protocol::Request;

pub use march_tools::browser::protocol::{SessionTabs, Status, TabInfo};

/// The body of `march browser serve`: serve until idle or stopped (returns at once when
/// another daemon serves).
pub async fn serve_browser(paths: MarchPaths) -> Result<(), String> {
    let config = match Config::load(&paths) {
        Ok(config) => config.browser,
        Err(e) => {
            tracing::warn!("browser daemon: {e}; using the defaults");
            BrowserConfig::default()
        }
    };
    march_tools::browser::daemon::run_browser_daemon(&paths.data_dir, config).await
}

/// The daemon's state, or `None` when it is not running (nothing is started).
pub async fn browser_status(paths: &MarchPaths) -> Result<Option<Status>, String> {
    let client = march_tools::browser::client(&paths.data_dir, None);
    if tokio::net::UnixStream::connect(client.socket())
        .await
        .is_err()
    {
        return Ok(None);
    }
    let answer = client
        .call(&Request::Status, Duration::from_secs(10))
        .await?;
    serde_json::from_value(answer)
        .map(Some)
        .map_err(|e| format!("the daemon's status is not readable: {e}"))
}

/// Stops the daemon and waits until it has closed its browser and gone; `false` when it was
/// not running.
pub async fn stop_browser(paths: &MarchPaths) -> Result<bool, String> {
    let client = march_tools::browser::client(&paths.data_dir, None);
    let socket = client.socket().to_path_buf();
    if tokio::net::UnixStream::connect(&socket).await.is_err() {
        return Ok(false);
    }
    client.call(&Request::Stop, Duration::from_secs(10)).await?;
    // The daemon removes its socket last, after the browser is closed.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while socket.exists() {
        if tokio::time::Instant::now() >= deadline {
            return Err("the browser daemon did not stop within 30 s".into());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Ok(true)
}
