//! A session's MCP servers in the runner: gathered from config.toml, the project's
//! `.mcp.json` (asked about once per project and file, in the client) and the client's
//! `mcpServers`; started before the session's first run needs them; their notices sent to
//! the client; their prompts announced as slash commands.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use agent_client_protocol::v1::schema::{
    ContentBlock, McpServer, Notice, NoticeSeverity, PermissionOption, PermissionOptionKind,
    RequestPermissionOutcome, RequestPermissionRequest, SessionUpdate, TextContent,
    ToolCallContent, ToolCallUpdate, ToolCallUpdateFields, ToolKind,
};
use march_core::mcp_config::{
    McpConfig, McpOrigin, McpServerDef, McpTransport, PROJECT_FILE, project_servers,
};
use march_core::mcp_trust::McpTrust;
use march_tools::mcp::{McpHub, McpNotice, McpPrompt, NoticeSink};
use parking_lot::Mutex;
use tokio_util::sync::CancellationToken;

use super::client_fs::ClientCaps;
use super::commands::SlashCommands;
use super::port::ClientPort;

const TRUST: &str = "trust";
const NOT_NOW: &str = "not-now";
const NEVER: &str = "never";

/// The servers of one session.
pub(crate) struct SessionMcp {
    hub: Mutex<Arc<McpHub>>,
    cwd: PathBuf,
    /// The `[mcp]` table the session was opened with.
    config: McpConfig,
    /// Servers from config.toml and the client, and what was wrong in their definitions.
    base: Vec<McpServerDef>,
    client: Vec<McpServerDef>,
    problems: Vec<String>,
    trust_file: PathBuf,
    notices: NoticeSink,
    /// Whether the project file was settled (read, and asked about if needed); one caller
    /// at a time, so a second run (or `/mcp`) waits for the answer instead of going on
    /// without the project's servers.
    project_seen: tokio::sync::Mutex<bool>,
    /// The session's slash commands, told to the client when the prompts change.
    commands: Arc<SlashCommands>,
}

impl SessionMcp {
    /// The servers a session in `cwd` gets from `config` and the client's list; notices go
    /// out through `port` (as ACP notices when the client shows them, else to the log).
    pub(crate) fn new(
        cwd: &Path,
        config: &McpConfig,
        client_servers: &[McpServer],
        trust_file: PathBuf,
        port: Arc<dyn ClientPort>,
        caps: ClientCaps,
        commands: Arc<SlashCommands>,
    ) -> SessionMcp {
        let env = |var: &str| std::env::var(var).ok();
        let mut problems = Vec::new();
        let mut base = Vec::new();
        for def in config.servers(&env) {
            match def {
                Ok(def) => base.push(def),
                Err(e) => problems.push(e.to_string()),
            }
        }
        let mut client = Vec::new();
        for server in client_servers {
            match client_def(server) {
                Ok(def) => client.push(config.with_limits(def)),
                Err(e) => problems.push(e),
            }
        }
        let notices = notice_sink(port, caps);
        let mut defs = base.clone();
        defs.extend(client.iter().cloned());
        SessionMcp {
            hub: Mutex::new(McpHub::new(
                cwd.to_path_buf(),
                defs,
                problems.clone(),
                notices.clone(),
            )),
            cwd: cwd.to_path_buf(),
            config: config.clone(),
            base,
            client,
            problems,
            trust_file,
            notices,
            project_seen: tokio::sync::Mutex::new(!config.project_servers),
            commands,
        }
    }

    /// The servers as they are now.
    pub(crate) fn hub(&self) -> Arc<McpHub> {
        self.hub.lock().clone()
    }

    /// Before a run: the project's servers asked about (once per session), every server
    /// started, and the client told of prompts that changed.
    pub(crate) async fn prepare(&self, port: &Arc<dyn ClientPort>, stop: &CancellationToken) {
        {
            let mut seen = self.project_seen.lock().await;
            // Not settled when the question went unanswered (cancelled): asked again later.
            if !*seen && let Some(project) = self.project_servers(port, stop).await {
                *seen = true;
                if !project.is_empty() {
                    let mut defs = self.base.clone();
                    defs.extend(project);
                    defs.extend(self.client.iter().cloned());
                    let new = McpHub::new(
                        self.cwd.clone(),
                        defs,
                        self.problems.clone(),
                        self.notices.clone(),
                    );
                    let old = std::mem::replace(&mut *self.hub.lock(), new);
                    // Nothing should have started before the project was settled; whatever
                    // did is stopped, not left behind.
                    old.shutdown().await;
                }
            }
        }
        let hub = self.hub();
        hub.report_problems();
        if hub.is_empty() {
            return;
        }
        hub.ensure_started().await;
        self.announce(port, &hub.prompts());
    }

    /// Tell the client the slash commands when the servers' prompts changed.
    fn announce(&self, port: &Arc<dyn ClientPort>, prompts: &[McpPrompt]) {
        self.commands.announce(port.as_ref(), prompts, false);
    }

    /// The servers of the project's `.mcp.json` the user lets run: asked in the client the
    /// first time (and whenever the file changed), the answer remembered.
    async fn project_servers(
        &self,
        port: &Arc<dyn ClientPort>,
        stop: &CancellationToken,
    ) -> Option<Vec<McpServerDef>> {
        let path = self.cwd.join(PROJECT_FILE);
        let trust_file = self.trust_file.clone();
        let read = tokio::task::spawn_blocking(move || {
            let text = std::fs::read_to_string(&path).ok()?;
            let answer = McpTrust::load(&trust_file).answer(path.parent()?, &text);
            Some((text, answer))
        })
        .await
        .ok()
        .flatten();
        let Some((text, answer)) = read else {
            return Some(Vec::new());
        };
        let env = |var: &str| std::env::var(var).ok();
        let servers = match project_servers(&text, &env) {
            Ok(servers) => servers,
            Err(e) => {
                self.say(true, format!("{PROJECT_FILE} not used: {e}"));
                return Some(Vec::new());
            }
        };
        let mut defs = Vec::new();
        for server in servers {
            match server {
                Ok(def) => defs.push(self.config.with_limits(def)),
                Err(e) => self.say(true, e.to_string()),
            }
        }
        if defs.is_empty() {
            return Some(defs);
        }
        let trusted = match answer {
            Some(trusted) => trusted,
            None => self.ask(port, stop, &text, &defs).await?,
        };
        Some(if trusted { defs } else { Vec::new() })
    }

    /// Ask whether the project's servers may run; a lasting answer is remembered. `None`
    /// when nobody answered (the run was stopped, the request cancelled or failed).
    async fn ask(
        &self,
        port: &Arc<dyn ClientPort>,
        stop: &CancellationToken,
        text: &str,
        defs: &[McpServerDef],
    ) -> Option<bool> {
        let list: Vec<String> = defs
            .iter()
            .map(|d| {
                format!(
                    "- {} ({}): {}",
                    d.name,
                    d.transport.label(),
                    d.transport.target()
                )
            })
            .collect();
        let title = format!(
            "Start the MCP servers of this project's {PROJECT_FILE}? ({})",
            defs.iter()
                .map(|d| d.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
        let body = format!(
            "{PROJECT_FILE} in {} starts these servers; they run with your permissions:\n{}",
            self.cwd.display(),
            list.join("\n")
        );
        let fields = ToolCallUpdateFields::new()
            .title(title)
            .kind(ToolKind::Execute)
            .content(vec![ToolCallContent::from(ContentBlock::Text(
                TextContent::new(body),
            ))]);
        let request = RequestPermissionRequest::new(
            port.session_id(),
            ToolCallUpdate::new("mcp-project-servers", fields),
            vec![
                PermissionOption::new(
                    TRUST,
                    "Trust them in this project",
                    PermissionOptionKind::AllowAlways,
                ),
                PermissionOption::new(
                    NOT_NOW,
                    "Not this session",
                    PermissionOptionKind::RejectOnce,
                ),
                PermissionOption::new(
                    NEVER,
                    "Never in this project",
                    PermissionOptionKind::RejectAlways,
                ),
            ],
        );
        let answer = tokio::select! {
            biased;
            () = stop.cancelled() => return None,
            answer = port.request_permission(request) => answer,
        };
        let choice = match answer {
            Ok(RequestPermissionOutcome::Selected(selected)) => selected.option_id.0.to_string(),
            Ok(_) => {
                self.say(
                    false,
                    format!("{PROJECT_FILE} not answered: its servers are not started this time"),
                );
                return None;
            }
            Err(e) => {
                tracing::warn!("could not ask about {PROJECT_FILE}: {e}");
                return None;
            }
        };
        let trusted = choice == TRUST;
        if choice == TRUST || choice == NEVER {
            let (file, project, text) =
                (self.trust_file.clone(), self.cwd.clone(), text.to_string());
            let saved = tokio::task::spawn_blocking(move || {
                McpTrust::remember(&file, &project, &text, trusted)
            })
            .await;
            if let Ok(Err(e)) = saved {
                self.say(true, format!("the answer is not remembered: {e}"));
            }
        }
        Some(trusted)
    }

    fn say(&self, warning: bool, text: String) {
        (self.notices)(McpNotice {
            warning,
            title: "MCP".to_string(),
            text,
        });
    }

    /// Close every server.
    pub(crate) async fn shutdown(&self) {
        self.hub().shutdown().await;
    }
}

/// A server the client gave in `session/new` or `session/load`.
fn client_def(server: &McpServer) -> Result<McpServerDef, String> {
    let (name, transport) = match server {
        McpServer::Stdio(s) => (
            s.name.clone(),
            McpTransport::Stdio {
                command: s.command.display().to_string(),
                args: s.args.clone(),
                env: s
                    .env
                    .iter()
                    .map(|v| (v.name.clone(), v.value.clone()))
                    .collect(),
                cwd: None,
            },
        ),
        McpServer::Http(s) => (
            s.name.clone(),
            McpTransport::Http {
                url: s.url.clone(),
                headers: s
                    .headers
                    .iter()
                    .map(|h| (h.name.clone(), h.value.clone()))
                    .collect(),
            },
        ),
        McpServer::Sse(s) => {
            return Err(format!(
                "MCP server {} from the client: the legacy SSE transport is not supported \
                 (March advertises http only)",
                s.name
            ));
        }
        _ => return Err("an MCP server of a transport March does not know".to_string()),
    };
    Ok(McpServerDef::new(name, transport, McpOrigin::Client))
}

/// Notices to the client as ACP notices when it shows them; always to the log.
fn notice_sink(port: Arc<dyn ClientPort>, caps: ClientCaps) -> NoticeSink {
    Arc::new(move |notice: McpNotice| {
        if notice.warning {
            tracing::warn!("{}: {}", notice.title, notice.text);
        } else {
            tracing::info!("{}: {}", notice.title, notice.text);
        }
        if caps.notices {
            let severity = if notice.warning {
                NoticeSeverity::Warning
            } else {
                NoticeSeverity::Info
            };
            port.notify(SessionUpdate::Notice(
                Notice::new(severity, notice.title).description(notice.text),
            ));
        }
    })
}
