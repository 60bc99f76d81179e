//! One connection to an MCP server over stdio or streamable HTTP, through the official SDK
//! (`rmcp`): the handshake within the start timeout, the server's offer, and a watcher that
//! says when the connection ends on its own (a crash) rather than because March closed it.

use std::collections::HashMap;
use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use march_core::mcp_config::{McpServerDef, McpTransport};
use march_core::tool::ToolUpdates;
use parking_lot::Mutex;
use rmcp::model::{
    ClientCapabilities, ClientConfig, Implementation, ProgressNotificationParam, ProtocolVersion,
};
use rmcp::service::{NotificationContext, Peer};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

use super::McpError;

/// What a server tells March between calls.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ServerSignal {
    /// Its tools changed (`notifications/tools/list_changed`).
    ToolsChanged,
    /// Its prompts changed.
    PromptsChanged,
    /// The connection ended without March closing it; why.
    Ended(String),
}

/// The calls waiting for progress, by progress token.
type ProgressRoutes = Arc<Mutex<HashMap<String, ToolUpdates>>>;

/// The client side: says who March is, and passes on what the server notifies.
struct Handler {
    server: String,
    signals: UnboundedSender<(String, ServerSignal)>,
    progress: ProgressRoutes,
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        // The last version negotiated in `initialize`: list-changed notifications come as
        // plain notifications, which every server of the field sends.
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("march", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self
            .signals
            .send((self.server.clone(), ServerSignal::ToolsChanged));
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self
            .signals
            .send((self.server.clone(), ServerSignal::PromptsChanged));
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let token = match &params.progress_token.0 {
            rmcp::model::NumberOrString::String(s) => s.to_string(),
            rmcp::model::NumberOrString::Number(n) => n.to_string(),
        };
        let Some(updates) = self.progress.lock().get(&token).cloned() else {
            return;
        };
        let amount = match params.total {
            Some(total) => format!("{}/{}", params.progress, total),
            None => format!("{}", params.progress),
        };
        let text = match &params.message {
            Some(message) => format!("{message} ({amount})"),
            None => format!("progress {amount}"),
        };
        updates.text(text);
    }
}

/// A live connection to one server.
pub(crate) struct Connection {
    /// Requests go through it.
    pub peer: Peer<RoleClient>,
    /// Calls waiting for progress notifications.
    pub progress: ProgressRoutes,
    /// Closes the connection (and ends a stdio server's process group). The SDK gets a child
    /// of it, which it cancels itself when the connection ends; this one only March cancels.
    stop: CancellationToken,
    /// The watcher, done once the connection is closed and the process reaped.
    watcher: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl Connection {
    /// Start or reach the server and complete the handshake within its start timeout.
    /// Signals (tool changes, the end of the connection) go to `signals`.
    pub async fn open(
        def: &McpServerDef,
        project: &Path,
        signals: UnboundedSender<(String, ServerSignal)>,
    ) -> Result<Connection, McpError> {
        let progress = ProgressRoutes::default();
        let handler = Handler {
            server: def.name.clone(),
            signals: signals.clone(),
            progress: progress.clone(),
        };
        let stop = CancellationToken::new();
        let timeout = def.start_timeout;
        // A stdio server's process, ended by the watcher once the connection is.
        let mut process: Option<tokio::process::Child> = None;
        let timed_out = || McpError::Timeout {
            server: def.name.clone(),
            after: timeout,
        };
        let failed = |e: rmcp::service::ClientInitializeError| McpError::Protocol {
            server: def.name.clone(),
            message: format!("handshake failed: {}", error_chain(&e)),
        };
        let running = match &def.transport {
            McpTransport::Stdio {
                command,
                args,
                env,
                cwd,
            } => {
                let mut cmd = tokio::process::Command::new(command);
                cmd.args(args)
                    .envs(env)
                    .current_dir(cwd.as_deref().unwrap_or(project))
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    // Its own process group: ending it ends what it started too (`npx` runs
                    // node, `uvx` runs python).
                    .process_group(0)
                    .kill_on_drop(true);
                let mut child = cmd.spawn().map_err(|source| McpError::Spawn {
                    server: def.name.clone(),
                    command: command.clone(),
                    source,
                })?;
                let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
                    return Err(McpError::Protocol {
                        server: def.name.clone(),
                        message: "its stdin and stdout could not be opened".to_string(),
                    });
                };
                if let Some(stderr) = child.stderr.take() {
                    log_stderr(def.name.clone(), stderr);
                }
                process = Some(child);
                let transport = AsyncRwTransport::<RoleClient, _, _>::new(stdout, stdin)
                    .with_max_line_length(MAX_MESSAGE);
                let served = handler.serve_with_ct(transport, stop.child_token());
                match tokio::time::timeout(timeout, served).await {
                    Ok(Ok(running)) => running,
                    Ok(Err(e)) => {
                        end_process(process.take(), def).await;
                        return Err(failed(e));
                    }
                    Err(_) => {
                        end_process(process.take(), def).await;
                        return Err(timed_out());
                    }
                }
            }
            McpTransport::Http { url, headers } => {
                let client = march_core::http::client(timeout).map_err(|e| McpError::Protocol {
                    server: def.name.clone(),
                    message: format!("HTTP client: {e}"),
                })?;
                let config = http_config(&def.name, url, headers)?
                    .max_json_response_size(MAX_MESSAGE)
                    .max_sse_event_size(MAX_MESSAGE);
                let transport = StreamableHttpClientTransport::with_client(client, config);
                tokio::time::timeout(
                    timeout,
                    handler.serve_with_ct(transport, stop.child_token()),
                )
                .await
                .map_err(|_| timed_out())?
                .map_err(failed)?
            }
        };
        let peer = running.peer().clone();
        let name = def.name.clone();
        let closing = stop.clone();
        let owner = def.clone();
        let watcher = tokio::spawn(async move {
            let reason = running.waiting().await;
            end_process(process, &owner).await;
            if !closing.is_cancelled() {
                let why = match reason {
                    Ok(rmcp::service::QuitReason::JoinError(e)) => format!("it failed: {e}"),
                    Ok(_) => "the connection closed".to_string(),
                    Err(e) => format!("it failed: {e}"),
                };
                tracing::warn!(server = %name, "MCP server ended: {why}");
                let _ = signals.send((name, ServerSignal::Ended(why)));
            }
        });
        Ok(Connection {
            peer,
            progress,
            stop,
            watcher: Mutex::new(Some(watcher)),
        })
    }

    /// The server's instructions for the model, if it gave any.
    pub fn instructions(&self) -> Option<String> {
        self.peer
            .peer_info()
            .and_then(|i| i.instructions.clone())
            .filter(|t| !t.trim().is_empty())
    }

    /// Whether it offers prompts and resources.
    pub fn offers(&self) -> (bool, bool) {
        self.peer.peer_info().map_or((false, false), |i| {
            (
                i.capabilities.prompts.is_some(),
                i.capabilities.resources.is_some(),
            )
        })
    }

    /// Close it and wait (boundedly) until a stdio server's processes are gone.
    pub async fn close(&self) {
        self.stop.cancel();
        let Some(watcher) = self.watcher.lock().take() else {
            return;
        };
        if tokio::time::timeout(CLOSE_LIMIT, watcher).await.is_err() {
            tracing::warn!("an MCP server took over {CLOSE_LIMIT:?} to close");
        }
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        // Closing is asynchronous; the SDK's transport still stops the process.
        self.stop.cancel();
    }
}

/// The longest March waits for a server to close (the SDK's own stdin-close, SIGTERM,
/// kill sequence fits in it).
const CLOSE_LIMIT: Duration = Duration::from_secs(10);

/// The largest message a server may send (a tool result of 50 MB fits; it is cut to the
/// tool limits after). A larger one is dropped by the SDK and its call ends at its timeout.
const MAX_MESSAGE: usize = 128 * 1024 * 1024;

/// How long a stdio server gets to exit once its stdin is closed, and again after SIGTERM.
const EXIT_GRACE: Duration = Duration::from_secs(2);

/// Ends a stdio server's process group: a moment to exit on its own (its stdin is closed),
/// then SIGTERM, then SIGKILL; the process is reaped.
async fn end_process(process: Option<tokio::process::Child>, def: &McpServerDef) {
    use rustix::process::{Pid, Signal, kill_process_group};
    let Some(mut child) = process else {
        return;
    };
    let group = child.id().and_then(|id| Pid::from_raw(id as i32));
    let signal_group = |signal| {
        if let Some(group) = group {
            let _ = kill_process_group(group, signal);
        }
    };
    if tokio::time::timeout(EXIT_GRACE, child.wait())
        .await
        .is_err()
    {
        signal_group(Signal::TERM);
        if tokio::time::timeout(EXIT_GRACE, child.wait())
            .await
            .is_err()
        {
            tracing::warn!(server = %def.name, "MCP server ignored SIGTERM; killing it");
        }
    }
    // Whatever it started and left behind goes with it.
    signal_group(Signal::KILL);
    let _ = child.wait().await;
}

/// The transport's settings: the endpoint and headers (`Authorization` as the SDK's bearer
/// token, the rest as they are).
fn http_config(
    server: &str,
    url: &str,
    headers: &std::collections::BTreeMap<String, String>,
) -> Result<StreamableHttpClientTransportConfig, McpError> {
    use reqwest::header::{HeaderName, HeaderValue};
    let bad = |message: String| McpError::Protocol {
        server: server.to_string(),
        message,
    };
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_string());
    let mut custom = HashMap::new();
    for (name, value) in headers {
        if name.eq_ignore_ascii_case("authorization")
            && let Some(token) = value.strip_prefix("Bearer ")
        {
            config = config.auth_header(token.to_string());
            continue;
        }
        let name = HeaderName::from_bytes(name.as_bytes())
            .map_err(|e| bad(format!("header {name:?}: {e}")))?;
        let value =
            HeaderValue::from_str(value).map_err(|e| bad(format!("header {name}'s value: {e}")))?;
        custom.insert(name, value);
    }
    Ok(config.custom_headers(custom))
}

/// Each stderr line of server `name` into the log (never to the screen); a flood is cut to
/// its first lines per second so the log stays readable.
fn log_stderr(name: String, stderr: tokio::process::ChildStderr) {
    use tokio::io::AsyncBufReadExt;
    const LINES_PER_SECOND: u32 = 50;
    const LINE_LIMIT: usize = 2000;
    tokio::spawn(async move {
        // Read to the end whatever comes (not UTF-8, endless lines): a server whose stderr
        // is not drained blocks on its next write.
        let mut reader = tokio::io::BufReader::new(stderr);
        let mut buf = Vec::new();
        let mut window = std::time::Instant::now();
        let (mut logged, mut dropped) = (0u32, 0u64);
        loop {
            buf.clear();
            match reader.read_until(b'\n', &mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            let text = String::from_utf8_lossy(&buf[..buf.len().min(LINE_LIMIT)]);
            let line = text.trim_end();
            if window.elapsed() >= Duration::from_secs(1) {
                if dropped > 0 {
                    tracing::info!(server = %name, "mcp stderr: {dropped} more lines not logged");
                }
                window = std::time::Instant::now();
                (logged, dropped) = (0, 0);
            }
            if logged < LINES_PER_SECOND {
                logged += 1;
                tracing::info!(server = %name, "mcp stderr: {line}");
            } else {
                dropped += 1;
            }
        }
    });
}

/// An error and its causes on one line, without the SDK's wrappers that name Rust types
/// (`Transport [rmcp::transport::worker::WorkerTransport<…>] error`).
fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut next = Some(e);
    while let Some(e) = next {
        let text = without_type_names(&e.to_string());
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        next = e.source();
    }
    parts.join(": ")
}

/// `text` without bracketed Rust type names (`[rmcp::…<…>]`).
fn without_type_names(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("[rmcp::") {
        out.push_str(&rest[..start]);
        let mut depth = 0usize;
        let mut end = rest.len();
        for (i, c) in rest[start..].char_indices() {
            match c {
                '[' => depth += 1,
                ']' => {
                    depth -= 1;
                    if depth == 0 {
                        end = start + i + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod error_tests {
    #[test]
    fn the_sdks_type_names_are_left_out_of_errors() {
        let text = "Send message error Transport [rmcp::transport::worker::WorkerTransport<rmcp::X<reqwest::Client>>] error: Client error: error sending request, when send initialize request";
        assert_eq!(
            super::without_type_names(text),
            "Send message error Transport error: Client error: error sending request, when send initialize request"
        );
        assert_eq!(super::without_type_names("plain [x]"), "plain [x]");
    }
}
