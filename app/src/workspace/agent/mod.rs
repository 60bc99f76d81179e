//! Drives one session's runner: spawns the agent command (March's runner or any ACP agent
//! from the config), opens a session, sends prompts, cancels, answers permission requests,
//! and turns everything the agent says into [`AgentEvent`]s for the UI loop.
//!
//! All calls run on spawned tasks: the UI loop never waits on an agent.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use agent_client_protocol::v1::schema::{
    ContentBlock, ImageContent, ListSessionsRequest, PromptRequest, RequestPermissionOutcome,
    RequestPermissionRequest, RequestPermissionResponse, SessionConfigId, SessionConfigOption,
    SessionConfigValueId, SessionId, SessionInfo, SessionModeId, SessionModeState,
    SessionNotification, SetSessionConfigOptionRequest, SetSessionModeRequest,
};
use march_core::config::AgentConfig;
use march_panes::picture::Picture;
use march_runner::client::{
    AgentRequest, ClientError, ConnectOptions, Connection, EventReceiver, OpenError, Pending,
    RestartPolicy, RunnerCommand, RunnerEvent, SessionSettings, SessionTarget, SupervisedRunner,
    open_session,
};
use tokio::sync::mpsc::UnboundedSender;

mod extensions;
pub use extensions::TreePurpose;
mod mentions;

use super::router::SessionKey;

/// Pages of `session/list` read at most (an agent that keeps handing out cursors).
const MAX_LIST_PAGES: usize = 20;

/// Why sessions are listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListPurpose {
    /// For `/resume` in the session's pane.
    Resume,
    /// For the session switcher.
    Switcher,
}

/// Which session a driver opens once its agent runs.
#[derive(Debug, Clone, PartialEq)]
pub enum SessionOpen {
    /// A new one (`session/new`), in this permission mode when given.
    New(Option<&'static str>),
    /// An earlier one, replayed into the pane (`session/load`).
    Load(SessionId),
}

/// What a session's driver reports to the UI.
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
        /// Its ACP modes, when the agent offers modes.
        modes: Option<SessionModeState>,
    },
    /// The agent could not be started or the session not opened.
    Failed(String),
    /// A `session/update`.
    Update(SessionNotification),
    /// The agent asks for permission; answer through [`AgentDriver::answer_permission`].
    Permission(RequestPermissionRequest),
    /// A prompt finished.
    TurnEnded(super::supervisor::TurnEnd),
    /// A config option change was applied (the complete list), or failed.
    Options(Result<Vec<SessionConfigOption>, String>),
    /// The agent answered `_march/session/queue` for the pane's message `local`: its id in
    /// the running turn, or `None` when it took nothing (no turn, or no such extension).
    Queued {
        /// The pane's number for the message.
        local: u64,
        /// The agent's id for it.
        id: Option<String>,
    },
    /// A `!command`'s output could not be recorded in the session: why.
    NotRecorded(String),
    /// The agent switched to this mode (`session/set_mode` answered), or refused.
    ModeSet(Result<SessionModeId, String>),
    /// The agent process ended unexpectedly; a restart follows unless it keeps crashing.
    Exited(String),
    /// The crashed agent runs again (the `attempt`th restart in a row); its session is
    /// being reloaded, replayed as updates.
    Restarted {
        /// Which consecutive restart.
        attempt: u32,
    },
    /// The session was reloaded after a restart (or why it could not be).
    Reopened(Option<String>),
    /// The agent kept crashing and is not restarted any more.
    GaveUp(String),
    /// The project's sessions (newest first), or why they could not be listed.
    Sessions {
        /// What they were asked for.
        purpose: ListPurpose,
        /// The sessions.
        result: Result<Vec<SessionInfo>, String>,
    },
    /// A `terminal/*` request: a command to run in a terminal March owns, or about one.
    Terminal(AgentRequest),
    /// The agent had March write a file (`fs/write_text_file`); done, to record.
    FileWritten(super::changes::FileChange),
    /// The session's MCP servers (`_march/session/mcp`) as [`AgentDriver::refresh_mcp`]
    /// asked for them, or why they could not be had.
    Mcp {
        /// The servers.
        result: Result<Vec<march_runner::client::ServerStatus>, String>,
        /// Whether the user asked (`/mcp`), so the answer is shown in the pane.
        show: bool,
    },
    /// The session's tree (`_march/session/tree`), for `purpose`, or why it could not be had.
    Tree {
        /// What it was asked for.
        purpose: TreePurpose,
        /// The tree.
        result: Result<march_runner::client::SessionTreeResponse, String>,
    },
    /// The leaf moved (`_march/session/branch`): the new path's replay follows.
    Branch(march_runner::client::BranchNotification),
    /// A move in the tree ended (`_march/session/navigate` answered), or failed.
    Navigated {
        /// What the user chose.
        chosen: march_panes::agent::TreeMove,
        /// The agent's answer.
        result: Result<march_runner::client::NavigateResponse, String>,
    },
    /// A call that went as asked, with nothing to show.
    Quiet,
    /// The session was forked (`_march/session/fork`): the new session, or why not.
    Forked(Result<march_runner::client::ForkSessionResponse, String>),
    /// `_march/diagnostics`: a project's language servers reported (the same news comes
    /// from every runner of the project).
    Diagnostics(march_runner::client::DiagnosticsNotification),
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

/// Where a session's runner stands, for the supervisor view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunnerState {
    /// Being spawned and initialized, or its session being opened.
    Starting,
    /// Running, the session open.
    Ready,
    /// It ended unexpectedly and is being started again.
    Restarting,
    /// It could not be started, or kept crashing and was given up.
    Crashed(String),
    /// Stopped by the user, or never started (first-run setup).
    Stopped,
}

impl RunnerState {
    /// A one-word label.
    pub fn label(&self) -> &'static str {
        match self {
            RunnerState::Starting => "starting",
            RunnerState::Ready => "ready",
            RunnerState::Restarting => "restarting",
            RunnerState::Crashed(_) => "crashed",
            RunnerState::Stopped => "stopped",
        }
    }
}

/// A session's runner as the supervisor shows it.
#[derive(Debug, Clone)]
pub struct RunnerStatus {
    /// The configured agent's name.
    pub agent: String,
    /// Where it stands.
    pub state: RunnerState,
    /// The live process (and group) id.
    pub pid: Option<u32>,
    /// The id of the live or last runner process, whose log is `runner.<pid>.log`.
    pub log_pid: Option<u32>,
    /// Restarts after crashes so far.
    pub restarts: u32,
    /// The last lines it wrote to stderr before it last ended.
    pub stderr_tail: String,
    /// Its session's MCP servers as last reported (`_march/session/mcp`).
    pub mcp: Vec<march_runner::client::ServerStatus>,
}

/// The state shared with the driver's tasks.
struct Shared {
    runner: Option<Arc<SupervisedRunner>>,
    session: Option<SessionId>,
    /// Permission requests waiting for the user, by tool call id.
    permissions: HashMap<String, Pending<RequestPermissionRequest>>,
    status: RunnerStatus,
    /// Whether the agent takes images in prompts, once it said.
    takes_images: Option<bool>,
}

impl Shared {
    fn new(agent: &str, state: RunnerState) -> Self {
        Shared {
            runner: None,
            session: None,
            permissions: HashMap::new(),
            takes_images: None,
            status: RunnerStatus {
                agent: agent.to_string(),
                state,
                pid: None,
                log_pid: None,
                restarts: 0,
                stderr_tail: String::new(),
                mcp: Vec::new(),
            },
        }
    }
}

/// One session's connection to its agent.
pub struct AgentDriver {
    key: SessionKey,
    shared: Arc<Mutex<Shared>>,
    events: UnboundedSender<(SessionKey, AgentEvent)>,
}

impl AgentDriver {
    /// Start `spec` in `cwd` for session `key`, supervised (restarted with backoff when it
    /// crashes, its session reloaded), and open the session as `open` says; events go to
    /// `events` tagged with the key.
    pub fn start(
        key: SessionKey,
        spec: AgentSpec,
        cwd: PathBuf,
        open: SessionOpen,
        events: UnboundedSender<(SessionKey, AgentEvent)>,
    ) -> Self {
        let shared = Arc::new(Mutex::new(Shared::new(&spec.name, RunnerState::Starting)));
        let driver = AgentDriver {
            key,
            shared: shared.clone(),
            events: events.clone(),
        };
        tokio::spawn(async move {
            let send = |e: AgentEvent| {
                let _ = events.send((key, e));
            };
            // A remote project's directory is on its host: the runner says if it is gone.
            let remote = crate::remote::Remote::of(&cwd);
            if remote.is_none() && !cwd.is_dir() {
                let text = format!(
                    "cannot start {}: the project directory {} is gone",
                    spec.name,
                    cwd.display()
                );
                shared.lock().status.state = RunnerState::Crashed(text.clone());
                send(AgentEvent::Failed(text));
                return;
            }
            let (command, cwd) = match &remote {
                Some(remote) => (spec.command.clone(), PathBuf::from(&remote.path)),
                None => (spec.command.clone().cwd(&cwd), cwd),
            };
            // Commands run in terminals March owns, shown live in the agent shell pane; a
            // remote runner runs its commands and writes its files on its own host.
            let local = remote.is_none();
            let options = ConnectOptions {
                capabilities: agent_client_protocol::v1::schema::ClientCapabilities::new()
                    .terminal(local)
                    // Writes come through March, so every change is recorded for the diff pane.
                    .fs(
                        agent_client_protocol::v1::schema::FileSystemCapabilities::new()
                            .write_text_file(local),
                    )
                    // The pane shows notices (an MCP server that failed, was restarted) and
                    // compaction as a block of its own.
                    .session(
                        agent_client_protocol::v1::schema::ClientSessionCapabilities::new()
                            .notices(agent_client_protocol::v1::schema::NoticeCapabilities::new())
                            .compaction(
                                agent_client_protocol::v1::schema::CompactionCapabilities::new(),
                            ),
                    )
                    // March's runner then sends its project's diagnostics.
                    .meta(march_meta()),
                ..ConnectOptions::default()
            };
            let started = SupervisedRunner::start(command, options, RestartPolicy::default()).await;
            let (runner, incoming) = match started {
                Ok(started) => started,
                Err(e) => {
                    let text = format!("cannot start {}: {e}", spec.name);
                    shared.lock().status.state = RunnerState::Crashed(text.clone());
                    send(AgentEvent::Failed(text));
                    return;
                }
            };
            let runner = Arc::new(runner);
            let Some(connection) = runner.current() else {
                send(AgentEvent::Failed(format!("{} ended at once", spec.name)));
                return;
            };
            let agent = connection
                .initialize_response()
                .agent_info
                .as_ref()
                .map(|i| i.title.clone().unwrap_or_else(|| i.name.clone()))
                .unwrap_or_else(|| spec.name.clone());
            {
                let mut shared = shared.lock();
                shared.runner = Some(runner.clone());
                shared.takes_images =
                    Some(connection.agent_capabilities().prompt_capabilities.image);
                shared.status.pid = runner.pid();
                shared.status.log_pid = shared.status.pid;
            }
            // Updates flow from here on, also while the session is being opened.
            tokio::spawn(forward(key, incoming, shared.clone(), events.clone()));
            let opened = self::open(&connection, &cwd, open).await;
            let (session, options, modes) = match opened {
                Ok(opened) => opened,
                Err(e) => {
                    shared.lock().status.state = RunnerState::Crashed(e.clone());
                    send(AgentEvent::Failed(e));
                    return;
                }
            };
            {
                let mut shared = shared.lock();
                shared.session = Some(session.clone());
                shared.status.state = RunnerState::Ready;
            }
            send(AgentEvent::Ready {
                agent,
                session,
                options,
                modes,
            });
        });
        driver
    }

    /// A driver with no agent behind it (a pane in first-run setup, or a test): prompts are
    /// refused and everything else does nothing.
    pub fn detached(key: SessionKey, events: UnboundedSender<(SessionKey, AgentEvent)>) -> Self {
        AgentDriver {
            key,
            shared: Arc::new(Mutex::new(Shared::new("march", RunnerState::Stopped))),
            events,
        }
    }

    /// A driver for a session whose runner was stopped: it keeps the session's id and the
    /// runner's last status, so a restart can reload it.
    pub fn stopped(
        key: SessionKey,
        events: UnboundedSender<(SessionKey, AgentEvent)>,
        mut status: RunnerStatus,
        session: Option<SessionId>,
    ) -> Self {
        status.state = RunnerState::Stopped;
        status.pid = None;
        let mut shared = Shared::new(&status.agent, RunnerState::Stopped);
        shared.status = status;
        shared.session = session;
        AgentDriver {
            key,
            shared: Arc::new(Mutex::new(shared)),
            events,
        }
    }

    /// The runner's state, pid, restarts and last stderr lines.
    pub fn status(&self) -> RunnerStatus {
        self.shared.lock().status.clone()
    }

    fn runner_and_session(&self) -> Option<(Arc<SupervisedRunner>, SessionId)> {
        let shared = self.shared.lock();
        Some((shared.runner.clone()?, shared.session.clone()?))
    }

    /// Send `text` as a prompt, the files it mentions (`@path`, relative to `project`) as
    /// resources; [`AgentEvent::TurnEnded`] follows. False when the agent is not ready.
    /// While the runner restarts, the prompt waits for it.
    pub fn prompt(&self, text: String, project: &Path, pictures: Vec<Arc<Picture>>) -> bool {
        let Some((runner, session)) = self.runner_and_session() else {
            return false;
        };
        let (key, events) = (self.key, self.events.clone());
        let project = project.to_path_buf();
        tokio::spawn(async move {
            let result = match runner.connection().await {
                Ok(connection) => {
                    let takes = &connection.agent_capabilities().prompt_capabilities;
                    if !pictures.is_empty() && !takes.image {
                        let _ = events.send((
                            key,
                            AgentEvent::TurnEnded(Err(super::attach::NO_IMAGES.to_string())),
                        ));
                        return;
                    }
                    let embed = takes.embedded_context;
                    let mut blocks = mentions::prompt_blocks(text, project, embed).await;
                    blocks.extend(
                        pictures
                            .iter()
                            .map(|p| ContentBlock::Image(ImageContent::new(p.base64(), p.mime()))),
                    );
                    let request = PromptRequest::new(session, blocks);
                    connection.prompt(request).await.map_err(describe)
                }
                Err(e) => Err(describe(e)),
            };
            let _ = events.send((key, AgentEvent::TurnEnded(result)));
        });
        true
    }

    /// Whether the agent takes images in prompts (`None` until it said).
    pub fn takes_images(&self) -> Option<bool> {
        self.shared.lock().takes_images
    }

    /// Ask the agent to stop the running turn; open permission requests are answered
    /// `cancelled`, as ACP requires.
    pub fn cancel(&self) {
        let pending: Vec<_> = self
            .shared
            .lock()
            .permissions
            .drain()
            .map(|(_, p)| p)
            .collect();
        for p in pending {
            let _ = p.cancel();
        }
        if let Some((runner, session)) = self.runner_and_session()
            && let Some(connection) = runner.current()
            && let Err(e) = connection.cancel(session)
        {
            tracing::warn!("session/cancel not sent: {e}");
        }
    }

    /// Answer the permission request of `tool_call_id` with what the user chose, whole
    /// (its `_meta` carries the words of a rejection).
    pub fn answer_permission(&self, tool_call_id: &str, outcome: RequestPermissionOutcome) {
        let Some(pending) = self.shared.lock().permissions.remove(tool_call_id) else {
            return;
        };
        if let Err(e) = pending.respond(RequestPermissionResponse::new(outcome)) {
            tracing::warn!("permission answer not sent: {e}");
        }
    }

    /// Set a session config option (`model`, `thinking`, `mode`); [`AgentEvent::Options`]
    /// follows.
    pub fn set_option(&self, id: &str, value: &str) -> bool {
        let Some((runner, session)) = self.runner_and_session() else {
            return false;
        };
        let (key, events) = (self.key, self.events.clone());
        let request = SetSessionConfigOptionRequest::new(
            session,
            SessionConfigId::new(id.to_string()),
            SessionConfigValueId::new(value.to_string()),
        );
        tokio::spawn(async move {
            let result = match runner.connection().await {
                Ok(connection) => connection
                    .set_config_option(request)
                    .await
                    .map(|r| r.config_options)
                    .map_err(describe),
                Err(e) => Err(describe(e)),
            };
            let _ = events.send((key, AgentEvent::Options(result)));
        });
        true
    }

    /// Switch the session's mode (`session/set_mode`); [`AgentEvent::ModeSet`] follows.
    pub fn set_mode(&self, mode: SessionModeId) -> bool {
        let Some((runner, session)) = self.runner_and_session() else {
            return false;
        };
        let (key, events) = (self.key, self.events.clone());
        tokio::spawn(async move {
            let request = SetSessionModeRequest::new(session, mode.clone());
            let result = match runner.connection().await {
                Ok(connection) => connection
                    .set_mode(request)
                    .await
                    .map(|_| mode)
                    .map_err(describe),
                Err(e) => Err(describe(e)),
            };
            let _ = events.send((key, AgentEvent::ModeSet(result)));
        });
        true
    }

    /// The session shown, once open.
    pub fn session(&self) -> Option<SessionId> {
        self.shared.lock().session.clone()
    }

    /// List the sessions of `cwd` (`session/list`, every page); [`AgentEvent::Sessions`]
    /// follows with `purpose`. False when the agent is not running.
    pub fn list_sessions(&self, cwd: PathBuf, purpose: ListPurpose) -> bool {
        let Some(runner) = self.shared.lock().runner.clone() else {
            return false;
        };
        let (key, events) = (self.key, self.events.clone());
        tokio::spawn(async move {
            let result = match runner.connection().await {
                Ok(connection) => list_all(&connection, cwd).await,
                Err(e) => Err(describe(e)),
            };
            let _ = events.send((key, AgentEvent::Sessions { purpose, result }));
        });
        true
    }

    /// Stop the agent: close its stdin, give it a moment, then kill its process group.
    pub async fn shutdown(self) {
        let runner = {
            let mut shared = self.shared.lock();
            shared.permissions.clear();
            shared.status.state = RunnerState::Stopped;
            shared.status.pid = None;
            shared.runner.take()
        };
        if let Some(runner) = runner {
            match Arc::try_unwrap(runner) {
                Ok(runner) => runner.shutdown().await,
                // A call still holds it: dropping the last handle stops the supervisor,
                // which closes, waits a moment and kills the group.
                Err(shared) => drop(shared),
            }
        }
    }
}

/// The `_meta` of the client capabilities: the March extensions the app handles.
fn march_meta() -> serde_json::Map<String, serde_json::Value> {
    let mut meta = serde_json::Map::new();
    meta.insert(
        "march".to_string(),
        serde_json::json!({ "diagnostics": true }),
    );
    meta
}

/// Forwards a runner's events to the UI as [`AgentEvent`]s, keeping the permission
/// requests' responders and the runner's status.
async fn forward(
    key: SessionKey,
    mut incoming: EventReceiver,
    shared: Arc<Mutex<Shared>>,
    events: UnboundedSender<(SessionKey, AgentEvent)>,
) {
    while let Some(event) = incoming.recv().await {
        let out = match event {
            RunnerEvent::Update(n) => AgentEvent::Update(n),
            RunnerEvent::Request(AgentRequest::Permission(p)) => {
                let request = p.request.clone();
                let call = request.tool_call.tool_call_id.0.to_string();
                shared.lock().permissions.insert(call, p);
                AgentEvent::Permission(request)
            }
            RunnerEvent::Request(
                request @ (AgentRequest::CreateTerminal(_)
                | AgentRequest::TerminalOutput(_)
                | AgentRequest::WaitForTerminalExit(_)
                | AgentRequest::KillTerminal(_)
                | AgentRequest::ReleaseTerminal(_)),
            ) => AgentEvent::Terminal(request),
            RunnerEvent::Request(AgentRequest::WriteTextFile(pending)) => {
                let path = pending.request.path.clone();
                let content = pending.request.content.clone();
                // In order: the write lands before the tool call that made it reports.
                let written = tokio::task::spawn_blocking(move || {
                    let before = super::diffs::write_for_agent(&path, &content)?;
                    Ok::<_, String>(super::changes::FileChange::new(
                        super::changes::CLIENT_WRITE,
                        &path,
                        before.as_deref(),
                        &content,
                    ))
                })
                .await
                .unwrap_or_else(|e| Err(format!("the write failed: {e}")));
                let answered = match &written {
                    Ok(_) => pending
                        .respond(agent_client_protocol::v1::schema::WriteTextFileResponse::new()),
                    Err(why) => pending
                        .fail(agent_client_protocol::Error::internal_error().data(why.clone())),
                };
                if let Err(e) = answered {
                    tracing::debug!("fs/write_text_file answer not sent: {e}");
                }
                match written {
                    Ok(change) => AgentEvent::FileWritten(change),
                    Err(_) => continue,
                }
            }
            RunnerEvent::Request(other) => {
                // Nothing else was offered in `initialize`.
                tracing::warn!(method = other.method(), "unexpected agent request");
                refuse(other);
                continue;
            }
            RunnerEvent::Exited { exit, stderr_tail } => {
                let tail = stderr_tail.trim().to_string();
                let mut s = shared.lock();
                if s.status.state == RunnerState::Stopped {
                    // Its end was asked for.
                    continue;
                }
                s.permissions.clear();
                s.status.state = RunnerState::Restarting;
                s.status.pid = None;
                s.status.stderr_tail = tail.clone();
                let text = if tail.is_empty() {
                    format!("the agent exited ({exit})")
                } else {
                    format!("the agent exited ({exit}): {tail}")
                };
                AgentEvent::Exited(text)
            }
            RunnerEvent::Restarted { attempt, pid } => {
                let mut s = shared.lock();
                s.status.restarts += 1;
                // The supervisor marks the runner ready only once its sessions are back.
                s.status.pid = Some(pid);
                s.status.log_pid = Some(pid);
                AgentEvent::Restarted { attempt }
            }
            RunnerEvent::SessionReopened { error, .. } => {
                let mut s = shared.lock();
                s.status.state = match &error {
                    None => RunnerState::Ready,
                    Some(e) => RunnerState::Crashed(format!("session not reopened: {e}")),
                };
                AgentEvent::Reopened(error)
            }
            RunnerEvent::Diagnostics(n) => AgentEvent::Diagnostics(n),
            RunnerEvent::Branch(n) => AgentEvent::Branch(n),
            RunnerEvent::GaveUp { attempts, reason } => {
                let mut s = shared.lock();
                let text = format!("stopped after {attempts} restarts: {reason}");
                s.status.state = RunnerState::Crashed(text.clone());
                s.status.pid = None;
                AgentEvent::GaveUp(text)
            }
        };
        if events.send((key, out)).is_err() {
            break;
        }
    }
}

/// A failed call in words; a runner that went away mid-call says so.
fn describe(e: ClientError) -> String {
    if e.is_disconnect() {
        "the agent stopped during the call".to_string()
    } else {
        e.to_string()
    }
}

/// Every page of `session/list` for `cwd`.
async fn list_all(connection: &Connection, cwd: PathBuf) -> Result<Vec<SessionInfo>, String> {
    let mut sessions = Vec::new();
    let mut cursor = None;
    for _ in 0..MAX_LIST_PAGES {
        let request = ListSessionsRequest::new().cwd(cwd.clone()).cursor(cursor);
        let page = connection.list_sessions(request).await.map_err(describe)?;
        sessions.extend(page.sessions);
        cursor = page.next_cursor;
        if cursor.is_none() {
            break;
        }
    }
    Ok(sessions)
}

/// Opens the session as `open` says. A permission mode the agent does not take leaves the
/// session open in its default, said in the log: a pane that works beats none.
async fn open(
    connection: &Connection,
    cwd: &Path,
    open: SessionOpen,
) -> Result<
    (
        SessionId,
        Vec<SessionConfigOption>,
        Option<SessionModeState>,
    ),
    String,
> {
    let (target, settings) = match open {
        SessionOpen::New(mode) => (
            SessionTarget::New,
            SessionSettings {
                model: None,
                permissions: mode.map(str::to_string),
            },
        ),
        SessionOpen::Load(id) => (SessionTarget::Load(id), SessionSettings::default()),
    };
    let load = match &target {
        SessionTarget::Load(id) => Some(id.clone()),
        SessionTarget::New => None,
    };
    match open_session(connection, cwd, target, &settings).await {
        Ok(opened) => Ok((opened.session_id, opened.options, opened.modes)),
        Err(OpenError::Open(e)) => Err(match load {
            Some(id) => format!("cannot resume session {}: {}", id.0, describe(e)),
            None => format!("cannot open a session: {}", describe(e)),
        }),
        Err(OpenError::NoOption { setting, opened }) => {
            tracing::warn!("the agent offers no {} choice", setting.name());
            Ok((opened.session_id, opened.options, opened.modes))
        }
        Err(OpenError::Refused {
            setting,
            value,
            error,
            opened,
        }) => {
            tracing::warn!("{} {value} not applied: {error}", setting.name());
            Ok((opened.session_id, opened.options, opened.modes))
        }
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
