//! What a running gateway writes about itself, for `march gateway status` and the
//! supervisor view.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// A running gateway.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GatewayState {
    /// Its process.
    pub pid: u32,
    /// Where its HTTP API listens.
    pub listen: String,
    /// The workspace it serves (the most recently used when `None`).
    pub workspace: Option<String>,
    /// Its chat adapters (`telegram`).
    pub chats: Vec<String>,
    /// Whether attention changes go to a webhook.
    pub webhook: bool,
}

/// Where the state of the gateway whose directory is `dir` is.
pub fn state_file(dir: &Path) -> PathBuf {
    dir.join("gateway.json")
}

/// The state the gateway of `dir` wrote, when one runs (a file left by a gateway that
/// died is not one).
pub fn read_state(dir: &Path) -> Option<GatewayState> {
    let state: GatewayState = serde_json::from_slice(&std::fs::read(state_file(dir)).ok()?).ok()?;
    let alive = rustix::process::test_kill_process(rustix::process::Pid::from_raw(
        i32::try_from(state.pid).ok()?,
    )?)
    .is_ok();
    alive.then_some(state)
}

/// A gateway as `march gateway status` and the supervisor view find it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GatewayStatus {
    /// What it wrote about itself, when it runs.
    pub running: Option<GatewayState>,
    /// Whether its HTTP API answered, or why not.
    pub answered: Result<(), String>,
    /// Messages waiting in its queue.
    pub queued: usize,
}

/// How the gateway of `dir` is: `None` when it does not run and nothing waits in its queue.
pub async fn status(dir: &Path) -> Option<GatewayStatus> {
    let state = {
        let dir = dir.to_path_buf();
        tokio::task::spawn_blocking(move || {
            let queued = crate::queue::waiting(&dir.join("queue"));
            (read_state(&dir), queued)
        })
        .await
        .ok()?
    };
    let (running, queued) = state;
    let answered = match &running {
        None => Err("not running".to_string()),
        Some(state) => health(&state.listen).await,
    };
    (running.is_some() || queued > 0).then_some(GatewayStatus {
        running,
        answered,
        queued,
    })
}

/// Asks the HTTP API at `listen` whether it is there.
async fn health(listen: &str) -> Result<(), String> {
    let http = march_core::http::client_builder(std::time::Duration::from_secs(2))
        .timeout(std::time::Duration::from_secs(3))
        .build()
        .map_err(|e| e.to_string())?;
    let response = http
        .get(format!("http://{listen}/v1/health"))
        .send()
        .await
        .map_err(|e| format!("no answer: {}", e.without_url()))?;
    if response.status().is_success() {
        Ok(())
    } else {
        Err(format!("answered {}", response.status()))
    }
}
