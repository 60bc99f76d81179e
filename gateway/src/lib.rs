//! The gateway (`march gateway`, a daemon beside a workspace server): messages from outside
//! the terminal into a workspace's sessions, and their answers, questions and attention
//! changes back out. Adapters carry them: an HTTP API (answers streamed as server-sent
//! events or whole, attention changes to a webhook) and chat bots behind one trait
//! ([`chat::ChatAdapter`]; Telegram's Bot API first). Every message in is written to a
//! queue on disk before it is acknowledged and leaves it once the workspace took it, so a
//! gateway restart loses none; only senders on an allow-list are heard; each message in and
//! out is logged with its sender. The gateway reaches the workspace only over its control
//! socket (docs/CONTROL.md); its own wire is docs/GATEWAY.md.

pub mod chat;
mod deliver;
pub mod http;
pub mod queue;
mod state;
pub mod telegram;
mod webhook;
pub mod workspace;

use std::path::PathBuf;
use std::sync::Arc;

use march_core::config::GatewayConfig;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

pub use state::{GatewayState, GatewayStatus, read_state, state_file, status};

/// The `auth.json` entry prefix of the HTTP API's clients (`gateway-client:NAME`).
pub const CLIENT_PREFIX: &str = "gateway-client:";
/// The `auth.json` entry of the Telegram bot's token.
pub const TELEGRAM_TOKEN: &str = "gateway-telegram";

/// The gateway's own directory under the data directory: its queue, its chats' state, its
/// state file.
pub fn gateway_dir(data_dir: &std::path::Path) -> PathBuf {
    data_dir.join("gateway")
}

/// Why a prompt from outside is not taken, if it is not: an empty one, and a `!command`,
/// which the workspace would run in the project's shell without the agent's permission
/// gate.
pub(crate) fn refused_prompt(text: &str) -> Option<&'static str> {
    let text = text.trim_start();
    if text.is_empty() {
        Some("the prompt is empty")
    } else if text.starts_with('!') {
        Some("shell commands (`!command`) are not taken from outside the terminal")
    } else {
        None
    }
}

/// Why the gateway cannot run.
#[derive(Debug, thiserror::Error)]
pub enum GatewayError {
    /// Its directory or queue cannot be used.
    #[error("cannot use {path}: {error}")]
    Io {
        /// The file or directory.
        path: String,
        /// Why.
        error: std::io::Error,
    },
    /// Nobody could be heard.
    #[error(
        "no sender can be heard: add an HTTP client with `march gateway token add NAME`, or keep \
         a Telegram bot's token with `march gateway token telegram` and list its users in \
         [gateway.telegram] allow"
    )]
    NobodyHeard,
}

/// A client of the HTTP API, by the token it shows.
pub type HttpClient = march_core::auth::TokenClient;

/// What a gateway serves and to whom.
#[derive(Debug, Clone)]
pub struct GatewaySettings {
    /// The `[gateway]` table.
    pub config: GatewayConfig,
    /// The HTTP API's clients.
    pub clients: Vec<HttpClient>,
    /// The Telegram bot's token: the Telegram adapter runs when it is kept.
    pub telegram_token: Option<String>,
    /// Its own directory: the queue, the chats' state, its state file.
    pub dir: PathBuf,
    /// The directory of the workspace servers' sockets.
    pub sockets: PathBuf,
}

/// Serves `settings` (the HTTP API on `listener`) until `stop` is cancelled.
pub async fn serve(
    listener: TcpListener,
    settings: GatewaySettings,
    stop: CancellationToken,
) -> Result<(), GatewayError> {
    let allowed = &settings.config.telegram.allow;
    if settings.clients.is_empty() && (settings.telegram_token.is_none() || allowed.is_empty()) {
        return Err(GatewayError::NobodyHeard);
    }
    let workspace =
        workspace::WorkspaceLink::new(settings.sockets.clone(), settings.config.workspace.clone());
    let queue =
        queue::Queue::open(settings.dir.join("queue")).map_err(|error| GatewayError::Io {
            path: settings.dir.join("queue").display().to_string(),
            error,
        })?;
    let deliverer = Arc::new(deliver::Deliverer::new(queue, workspace.clone()));
    let mut tasks = tokio::task::JoinSet::new();
    if let Some(url) = settings.config.webhook.clone() {
        tasks.spawn(webhook::run(workspace.clone(), url, stop.clone()));
    }
    if let Some(token) = settings.telegram_token.clone() {
        let adapter = telegram::Telegram::new(&settings.config.telegram.api, &token);
        let chat = chat::ChatSettings {
            allow: settings.config.telegram.allow.clone(),
            project: settings.config.telegram.project.clone(),
            state: settings.dir.join("telegram.json"),
        };
        tasks.spawn(chat::run(
            Arc::new(adapter),
            chat,
            workspace.clone(),
            deliverer.clone(),
            deliverer.outcomes(),
            stop.clone(),
        ));
    }
    // Every adapter hears the outcomes from the first message on.
    deliverer.start(stop.clone());
    let api = http::Api::new(settings.clients.clone(), workspace, deliverer);
    http::serve(listener, api, stop.clone()).await;
    stop.cancel();
    while tasks.join_next().await.is_some() {}
    Ok(())
}
