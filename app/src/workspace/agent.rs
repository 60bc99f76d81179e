//! Drives one agent pane's runner: spawns the agent command (March's runner or any ACP agent
//! from the config), opens a session, sends prompts, cancels, answers permission requests,
//! and turns everything the agent says into [`AgentEvent`]s for the Shell's loop.
//!
//! All calls run on spawned tasks: the Shell's loop never waits on an agent.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_client_protocol::v1::schema::{
    ContentBlock, ListSessionsRequest, LoadSessionRequest, NewSessionRequest, PermissionOptionId,
    PromptRequest, RequestPermissionRequest, SessionConfigId, SessionConfigOption,
    SessionConfigValueId, SessionId, SessionInfo, SessionNotification,
    SetSessionConfigOptionRequest, StopReason, TextContent,
};
use march_core::config::AgentConfig;
use march_runner::client::{
    AgentRequest, ClientError, ConnectOptions, Pending, RunnerClient, RunnerCommand, RunnerEvent,
};
use tokio::sync::mpsc::UnboundedSender;

use super::layout::PaneId;

/// How long a runner gets to exit after its stdin closes before its group is killed.
const SHUTDOWN_GRACE: Duration = Duration::from_millis(500);

/// Pages of `session/list` read at most (an agent that keeps handing out cursors).
const MAX_LIST_PAGES: usize = 20;

/// Which session a driver opens once its agent runs.
#[derive(Debug, Clone, PartialEq)]
pub enum SessionOpen {
    /// A new one (`session/new`), in this permission mode when given.
    New(Option<&'static str>),
    /// An earlier one, replayed into the pane (`session/load`).
    Load(SessionId),
}

/// What an agent pane's driver reports to the Shell.
#[derive(Debug)]
pub enum AgentEvent {
    /// The agent runs and the session is open.
    Ready {
        /// The agent's name for itself (from `initialize`), else the configured name.
        agent: String,
        /// The session.
        session: SessionId,
        /// Its config options (model, thinking, mode).
        options: Vec<SessionConfigOption>,
    },
    /// The agent could not be started or the session not opened.
    Failed(String),
    /// A `session/update`.
    Update(SessionNotification),
    /// The agent asks for permission; answer through [`AgentDriver::answer_permission`].
    Permission(RequestPermissionRequest),
    /// A prompt finished.
    TurnEnded(Result<StopReason, String>),
    /// A config option change was applied (the complete list), or failed.
    Options(Result<Vec<SessionConfigOption>, String>),
    /// The agent process ended.
    Exited(String),
    /// The project's sessions for `/resume` (newest first), or why they could not be listed.
    Sessions(Result<Vec<SessionInfo>, String>),
    /// First-run setup: providers with local servers probed.
    SetupProviders(Vec<march_panes::setup::SetupProvider>),
    /// First-run setup: a custom server's models were listed (or not).
    SetupModels {
        /// The provider added for the server.
        provider: String,
        /// Its models, or why they could not be listed.
        result: Result<Vec<String>, String>,
    },
}

/// Which program backs a pane.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentSpec {
    /// The configured name (`march` for March's own runner).
    pub name: String,
    /// The command.
    pub command: RunnerCommand,
}

impl AgentSpec {
    /// March's own runner: this executable with `runner`.
    pub fn march(exe: &Path) -> Self {
        AgentSpec {
            name: "march".to_string(),
            command: RunnerCommand::new(exe).arg("runner"),
        }
    }

    /// An agent from `[agents.<name>]`.
    pub fn configured(name: &str, config: &AgentConfig) -> Self {
        let mut command = RunnerCommand::new(&config.command).args(&config.args);
        for (k, v) in &config.env {
            command = command.env(k, v);
        }
        AgentSpec {
            name: name.to_string(),
            command,
        }
    }
}

/// The state shared with the driver's tasks.
#[derive(Default)]
struct Shared {
    client: Option<Arc<RunnerClient>>,
    session: Option<SessionId>,
    /// Permission requests waiting for the user, by tool call id.
    permissions: HashMap<String, Pending<RequestPermissionRequest>>,
}

/// One agent pane's connection to its agent.
pub struct AgentDriver {
    pane: PaneId,
    shared: Arc<Mutex<Shared>>,
    events: UnboundedSender<(PaneId, AgentEvent)>,
}

fn lock(m: &Mutex<Shared>) -> std::sync::MutexGuard<'_, Shared> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl AgentDriver {
    /// Start `spec` in `cwd` for `pane` and open a session as `open` says; events go to
    /// `events` tagged with the pane.
    pub fn start(
        pane: PaneId,
        spec: AgentSpec,
        cwd: PathBuf,
        open: SessionOpen,
        events: UnboundedSender<(PaneId, AgentEvent)>,
    ) -> Self {
        let shared = Arc::new(Mutex::new(Shared::default()));
        let driver = AgentDriver {
            pane,
            shared: shared.clone(),
            events: events.clone(),
        };
        tokio::spawn(async move {
            let send = |e: AgentEvent| {
                let _ = events.send((pane, e));
            };
            let command = spec.command.clone().cwd(&cwd);
            let (client, mut incoming) =
                match RunnerClient::spawn(&command, &ConnectOptions::default()).await {
                    Ok(started) => started,
                    Err(e) => {
                        send(AgentEvent::Failed(format!(
                            "cannot start {}: {e}",
                            spec.name
                        )));
                        return;
                    }
                };
            let client = Arc::new(client);
            let agent = client
                .connection()
                .initialize_response()
                .agent_info
                .as_ref()
                .map(|i| i.title.clone().unwrap_or_else(|| i.name.clone()))
                .unwrap_or_else(|| spec.name.clone());
            lock(&shared).client = Some(client.clone());
            // Updates flow from here on, also while the session is being opened.
            let forward = {
                let shared = shared.clone();
                let events = events.clone();
                tokio::spawn(async move {
                    while let Some(event) = incoming.recv().await {
                        let out = match event {
                            RunnerEvent::Update(n) => AgentEvent::Update(n),
                            RunnerEvent::Request(AgentRequest::Permission(p)) => {
                                let request = p.request.clone();
                                let key = request.tool_call.tool_call_id.0.to_string();
                                lock(&shared).permissions.insert(key, p);
                                AgentEvent::Permission(request)
                            }
                            RunnerEvent::Request(other) => {
                                // Nothing else was offered in `initialize`.
                                tracing::warn!(method = other.method(), "unexpected agent request");
                                refuse(other);
                                continue;
                            }
                            RunnerEvent::Exited { exit, stderr_tail } => {
                                let tail = stderr_tail.trim().to_string();
                                let text = if tail.is_empty() {
                                    format!("the agent exited ({exit})")
                                } else {
                                    format!("the agent exited ({exit}): {tail}")
                                };
                                AgentEvent::Exited(text)
                            }
                            // Supervisor events: this driver runs its agent unsupervised.
                            _ => continue,
                        };
                        if events.send((pane, out)).is_err() {
                            break;
                        }
                    }
                })
            };
            let opened = match open {
                SessionOpen::New(mode) => open_new(&client, cwd, mode).await,
                SessionOpen::Load(id) => open_earlier(&client, cwd, id).await,
            };
            let (session, options) = match opened {
                Ok(opened) => opened,
                Err(e) => {
                    send(AgentEvent::Failed(e));
                    drop(forward);
                    return;
                }
            };
            lock(&shared).session = Some(session.clone());
            send(AgentEvent::Ready {
                agent,
                session,
                options,
            });
        });
        driver
    }

    /// A driver with no agent behind it (a pane in first-run setup, or a test): prompts are
    /// refused and everything else does nothing.
    pub fn detached(pane: PaneId, events: UnboundedSender<(PaneId, AgentEvent)>) -> Self {
        AgentDriver {
            pane,
            shared: Arc::new(Mutex::new(Shared::default())),
            events,
        }
    }

    fn client_and_session(&self) -> Option<(Arc<RunnerClient>, SessionId)> {
        let shared = lock(&self.shared);
        Some((shared.client.clone()?, shared.session.clone()?))
    }

    /// Send `text` as a prompt; [`AgentEvent::TurnEnded`] follows. False when the agent is
    /// not ready.
    pub fn prompt(&self, text: String) -> bool {
        let Some((client, session)) = self.client_and_session() else {
            return false;
        };
        let (pane, events) = (self.pane, self.events.clone());
        tokio::spawn(async move {
            let request =
                PromptRequest::new(session, vec![ContentBlock::Text(TextContent::new(text))]);
            let result = match client.connection().prompt(request).await {
                Ok(r) => Ok(r.stop_reason),
                Err(e) => Err(client.explain(e).await.to_string()),
            };
            let _ = events.send((pane, AgentEvent::TurnEnded(result)));
        });
        true
    }

    /// Ask the agent to stop the running turn; open permission requests are answered
    /// `cancelled`, as ACP requires.
    pub fn cancel(&self) {
        let pending: Vec<_> = lock(&self.shared)
            .permissions
            .drain()
            .map(|(_, p)| p)
            .collect();
        for p in pending {
            let _ = p.cancel();
        }
        if let Some((client, session)) = self.client_and_session()
            && let Err(e) = client.connection().cancel(session)
        {
            tracing::warn!("session/cancel not sent: {e}");
        }
    }

    /// Answer the permission request of `tool_call_id`: an option, or `None` to cancel.
    pub fn answer_permission(&self, tool_call_id: &str, option: Option<PermissionOptionId>) {
        let Some(pending) = lock(&self.shared).permissions.remove(tool_call_id) else {
            return;
        };
        let answered = match option {
            Some(id) => pending.select(id),
            None => pending.cancel(),
        };
        if let Err(e) = answered {
            tracing::warn!("permission answer not sent: {e}");
        }
    }

    /// Set a session config option (`model`, `thinking`, `mode`); [`AgentEvent::Options`]
    /// follows.
    pub fn set_option(&self, id: &str, value: &str) -> bool {
        let Some((client, session)) = self.client_and_session() else {
            return false;
        };
        let (pane, events) = (self.pane, self.events.clone());
        let request = SetSessionConfigOptionRequest::new(
            session,
            SessionConfigId::new(id.to_string()),
            SessionConfigValueId::new(value.to_string()),
        );
        tokio::spawn(async move {
            let result = client
                .connection()
                .set_config_option(request)
                .await
                .map(|r| r.config_options)
                .map_err(|e| e.to_string());
            let _ = events.send((pane, AgentEvent::Options(result)));
        });
        true
    }

    /// The session shown, once open.
    pub fn session(&self) -> Option<SessionId> {
        lock(&self.shared).session.clone()
    }

    /// List the sessions of `cwd` (`session/list`, every page); [`AgentEvent::Sessions`]
    /// follows. False when the agent is not running.
    pub fn list_sessions(&self, cwd: PathBuf) -> bool {
        let Some(client) = lock(&self.shared).client.clone() else {
            return false;
        };
        let (pane, events) = (self.pane, self.events.clone());
        tokio::spawn(async move {
            let mut sessions = Vec::new();
            let mut cursor = None;
            let mut result = Ok(());
            for _ in 0..MAX_LIST_PAGES {
                let request = ListSessionsRequest::new().cwd(cwd.clone()).cursor(cursor);
                match client.connection().list_sessions(request).await {
                    Ok(page) => {
                        sessions.extend(page.sessions);
                        cursor = page.next_cursor;
                        if cursor.is_none() {
                            break;
                        }
                    }
                    Err(e) => {
                        result = Err(client.explain(e).await.to_string());
                        break;
                    }
                }
            }
            let _ = events.send((pane, AgentEvent::Sessions(result.map(|()| sessions))));
        });
        true
    }

    /// Stop the agent: close its stdin, give it a moment, then kill its process group.
    pub async fn shutdown(self) {
        let client = lock(&self.shared).client.take();
        lock(&self.shared).permissions.clear();
        if let Some(client) = client {
            match Arc::try_unwrap(client) {
                Ok(client) => {
                    client.shutdown(SHUTDOWN_GRACE).await;
                }
                // A prompt task still holds it: dropping the last handle kills the group.
                Err(shared) => drop(shared),
            }
        }
    }
}

/// `session/new` in `cwd`, then the permission mode when one is configured.
async fn open_new(
    client: &RunnerClient,
    cwd: PathBuf,
    mode: Option<&'static str>,
) -> Result<(SessionId, Vec<SessionConfigOption>), String> {
    let response = match client
        .connection()
        .new_session(NewSessionRequest::new(cwd))
        .await
    {
        Ok(r) => r,
        Err(e) => {
            return Err(format!(
                "cannot open a session: {}",
                client.explain(e).await
            ));
        }
    };
    let session = response.session_id;
    let mut options = response.config_options.unwrap_or_default();
    if let Some(mode) = mode {
        let set = SetSessionConfigOptionRequest::new(
            session.clone(),
            SessionConfigId::new("mode"),
            SessionConfigValueId::new(mode),
        );
        match client.connection().set_config_option(set).await {
            Ok(r) => options = r.config_options,
            Err(e) => tracing::warn!("permission mode {mode} not applied: {e}"),
        }
    }
    Ok((session, options))
}

/// `session/load` of `id` in `cwd`: the agent replays it as updates before it answers.
async fn open_earlier(
    client: &RunnerClient,
    cwd: PathBuf,
    id: SessionId,
) -> Result<(SessionId, Vec<SessionConfigOption>), String> {
    let request = LoadSessionRequest::new(id.clone(), cwd);
    match client.connection().load_session(request).await {
        Ok(r) => Ok((id, r.config_options.unwrap_or_default())),
        Err(e) => Err(format!(
            "cannot resume session {}: {}",
            id.0,
            client.explain(e).await
        )),
    }
}

/// Answer a request the app never offered to serve.
fn refuse(request: AgentRequest) {
    let error = || agent_client_protocol::Error::method_not_found();
    let result: Result<(), ClientError> = match request {
        AgentRequest::Permission(p) => p.cancel(),
        AgentRequest::ReadTextFile(p) => p.fail(error()),
        AgentRequest::WriteTextFile(p) => p.fail(error()),
        AgentRequest::CreateTerminal(p) => p.fail(error()),
        AgentRequest::TerminalOutput(p) => p.fail(error()),
        AgentRequest::WaitForTerminalExit(p) => p.fail(error()),
        AgentRequest::KillTerminal(p) => p.fail(error()),
        AgentRequest::ReleaseTerminal(p) => p.fail(error()),
        AgentRequest::Elicitation(p) => p.fail(error()),
    };
    if let Err(e) = result {
        tracing::debug!("refusal not sent: {e}");
    }
}
