//! A session's MCP servers as on-demand processes (seed 000 §8): started together when the
//! session first needs their tools, each within its start timeout; restarted with backoff
//! when one ends on its own and disabled after repeated crashes; followed when their tools
//! change; all closed when the session ends.

use std::path::PathBuf;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use march_core::context::Injection;
use march_core::mcp_config::{McpOrigin, McpServerDef};
use march_core::restart::{RestartCounter, RestartDecision, RestartPolicy};
use march_core::tool::Tool;
use parking_lot::Mutex;
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

use super::McpError;
use super::connection::{Connection, ServerSignal};
use super::prompts::{McpPrompt, list_prompts};
use super::resources::ResourcesTool;
use super::tool::list_tools;

/// Where a server is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ServerPhase {
    /// Not started: no session has needed it yet.
    Idle,
    /// Starting now.
    Starting,
    /// Running; its tools are offered.
    Ready,
    /// It ended or failed to start; it is started again after a wait.
    Restarting,
    /// It kept failing: March stopped trying until the runner restarts.
    Disabled,
    /// The session ended.
    Stopped,
}

impl ServerPhase {
    /// One word for it.
    pub fn label(self) -> &'static str {
        match self {
            ServerPhase::Idle => "idle",
            ServerPhase::Starting => "starting",
            ServerPhase::Ready => "ready",
            ServerPhase::Restarting => "restarting",
            ServerPhase::Disabled => "disabled",
            ServerPhase::Stopped => "stopped",
        }
    }
}

/// Something about a server the user should hear of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpNotice {
    /// Whether it is a problem.
    pub warning: bool,
    /// One line.
    pub title: String,
    /// What happened and what March does about it.
    pub text: String,
}

/// What `/mcp` and the supervisor show of one server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerStatus {
    /// Its name.
    pub name: String,
    /// `stdio` or `http`.
    pub transport: String,
    /// Its command line or URL.
    pub target: String,
    /// Where it was configured.
    pub origin: String,
    /// Where it is in its life.
    pub phase: ServerPhase,
    /// Its tools as the model sees them.
    pub tools: Vec<String>,
    /// Its prompts as slash commands.
    pub prompts: Vec<String>,
    /// Whether it offers resources.
    pub resources: bool,
    /// How often it was restarted.
    pub restarts: u32,
    /// The last thing that went wrong.
    pub last_error: Option<String>,
}

/// Notices go here (the runner sends them to the client).
pub type NoticeSink = Arc<dyn Fn(McpNotice) + Send + Sync>;

/// One server of the session.
pub(crate) struct Slot {
    pub def: McpServerDef,
    state: Mutex<SlotState>,
    /// Told when a start of this server ends (ready or failed), for callers that found it
    /// starting and wait for it.
    started: tokio::sync::Notify,
}

struct SlotState {
    phase: ServerPhase,
    connection: Option<Arc<Connection>>,
    tools: Vec<Arc<dyn Tool>>,
    prompts: Vec<McpPrompt>,
    resources: bool,
    instructions: Option<String>,
    last_error: Option<String>,
    counter: RestartCounter,
    up_since: Option<Instant>,
    restarts: u32,
}

impl Slot {
    /// The live connection, when the server runs.
    pub(crate) fn connection(&self) -> Option<Arc<Connection>> {
        self.state.lock().connection.clone()
    }

    /// Its phase, for a tool that found no connection.
    pub(crate) fn phase(&self) -> ServerPhase {
        self.state.lock().phase
    }
}

/// A session's MCP servers.
pub struct McpHub {
    project: PathBuf,
    slots: Vec<Arc<Slot>>,
    signals: UnboundedSender<(String, ServerSignal)>,
    notices: NoticeSink,
    /// Problems found before any server started (a broken config entry, a hidden name).
    problems: Vec<String>,
    /// Tool names already reported as clashing, so each is said once.
    clashes: Mutex<Vec<String>>,
    /// Set by [`McpHub::shutdown`]: nothing starts any more.
    stopped: std::sync::atomic::AtomicBool,
    /// Whether `problems` were said.
    problems_told: std::sync::atomic::AtomicBool,
}

/// How an MCP server is restarted: three tries (1 s, 2 s, 4 s); up a minute counts as
/// healthy. A server that keeps dying is disabled with a notice.
pub const MCP_RESTART: RestartPolicy = RestartPolicy {
    max_attempts: 3,
    initial_backoff: Duration::from_secs(1),
    max_backoff: Duration::from_secs(4),
    healthy_after: Duration::from_secs(60),
};

impl McpHub {
    /// The servers `defs` of a session in `project`; later definitions of a name hide earlier
    /// ones (config.toml < .mcp.json < the client), which `problems` then names.
    pub fn new(
        project: PathBuf,
        defs: Vec<McpServerDef>,
        problems: Vec<String>,
        notices: NoticeSink,
    ) -> Arc<McpHub> {
        McpHub::with_policy(project, defs, problems, notices, MCP_RESTART)
    }

    /// [`McpHub::new`] restarting servers by `policy`.
    pub fn with_policy(
        project: PathBuf,
        defs: Vec<McpServerDef>,
        mut problems: Vec<String>,
        notices: NoticeSink,
        policy: RestartPolicy,
    ) -> Arc<McpHub> {
        let mut kept: Vec<McpServerDef> = Vec::new();
        for def in defs {
            if let Some(old) = kept.iter_mut().find(|d| d.name == def.name) {
                problems.push(format!(
                    "MCP server {} from {} is hidden by the one from {}",
                    def.name,
                    old.origin.describe(),
                    def.origin.describe()
                ));
                *old = def;
            } else {
                kept.push(def);
            }
        }
        let (signals, incoming) = unbounded_channel();
        let hub = Arc::new(McpHub {
            project,
            slots: kept
                .into_iter()
                .map(|def| {
                    Arc::new(Slot {
                        def,
                        state: Mutex::new(SlotState {
                            phase: ServerPhase::Idle,
                            connection: None,
                            tools: Vec::new(),
                            prompts: Vec::new(),
                            resources: false,
                            instructions: None,
                            last_error: None,
                            counter: RestartCounter::new(policy),
                            up_since: None,
                            restarts: 0,
                        }),
                        started: tokio::sync::Notify::new(),
                    })
                })
                .collect(),
            signals,
            notices,
            problems,
            clashes: Mutex::new(Vec::new()),
            stopped: std::sync::atomic::AtomicBool::new(false),
            problems_told: std::sync::atomic::AtomicBool::new(false),
        });
        if tokio::runtime::Handle::try_current().is_ok() {
            tokio::spawn(follow(Arc::downgrade(&hub), incoming));
        }
        hub
    }

    /// A hub with no servers.
    pub fn empty(project: PathBuf) -> Arc<McpHub> {
        McpHub::new(project, Vec::new(), Vec::new(), Arc::new(|_| {}))
    }

    /// Whether it has any server.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// The problems found in the definitions, said once when the servers first start.
    pub fn problems(&self) -> &[String] {
        &self.problems
    }

    /// How long one call to server `name` may take.
    pub(crate) fn call_timeout(&self, name: &str) -> Duration {
        self.slots
            .iter()
            .find(|s| s.def.name == name)
            .map_or(Duration::from_secs(300), |s| s.def.call_timeout)
    }

    /// Say the problems found in the definitions, once (also when no server is usable).
    pub fn report_problems(&self) {
        if self
            .problems_told
            .swap(true, std::sync::atomic::Ordering::SeqCst)
        {
            return;
        }
        for problem in &self.problems {
            (self.notices)(McpNotice {
                warning: true,
                title: "MCP configuration".to_string(),
                text: problem.clone(),
            });
        }
    }

    /// Start every server that has not started yet, all at once, each within its start
    /// timeout; returns when each is ready or has failed (a failure is noticed, and the
    /// server is tried again with backoff). Servers another caller is starting are waited
    /// for, not started twice.
    pub async fn ensure_started(self: &Arc<Self>) {
        self.report_problems();
        let mut mine = Vec::new();
        let mut theirs = Vec::new();
        for slot in &self.slots {
            // Wait registrations are made before the phase is read, so no end is missed.
            let started = Box::pin(slot.started.notified());
            let mut state = slot.state.lock();
            match state.phase {
                ServerPhase::Idle => {
                    state.phase = ServerPhase::Starting;
                    mine.push(slot.clone());
                }
                ServerPhase::Starting => theirs.push(started),
                _ => {}
            }
        }
        let starts = mine.into_iter().map(|slot| {
            let hub = self.clone();
            async move { hub.start(&slot).await }
        });
        futures_util::future::join(
            futures_util::future::join_all(starts),
            futures_util::future::join_all(theirs),
        )
        .await;
    }

    /// Start one server this caller moved to `Starting`; on failure, schedule the next try
    /// or disable it.
    async fn start(self: &Arc<Self>, slot: &Arc<Slot>) {
        let result = if self.is_stopped() {
            Err(None)
        } else {
            self.open(slot).await.map_err(Some)
        };
        match result {
            Ok(connection) => {
                let ready = {
                    let mut state = slot.state.lock();
                    // Stopped meanwhile, or the server already went away while it was being
                    // listed (its end was not yet a crash of a ready server).
                    if self.is_stopped() || connection.peer.is_transport_closed() {
                        state.connection = None;
                        state.phase = if self.is_stopped() {
                            ServerPhase::Stopped
                        } else {
                            ServerPhase::Starting
                        };
                        false
                    } else {
                        state.phase = ServerPhase::Ready;
                        state.up_since = Some(Instant::now());
                        tracing::info!(server = %slot.def.name, tools = state.tools.len(), "MCP server ready");
                        true
                    }
                };
                if !ready {
                    connection.close().await;
                    if !self.is_stopped() {
                        let decision = {
                            let mut state = slot.state.lock();
                            state.last_error = Some("it stopped while starting".to_string());
                            state.counter.start_failed()
                        };
                        self.after_failure(slot, decision, "stopped while starting".to_string());
                    }
                }
            }
            Err(None) => slot.state.lock().phase = ServerPhase::Stopped,
            Err(Some(e)) => {
                tracing::warn!(server = %slot.def.name, "MCP server did not start: {e}");
                let decision = {
                    let mut state = slot.state.lock();
                    state.last_error = Some(e.to_string());
                    state.counter.start_failed()
                };
                self.after_failure(slot, decision, format!("could not start: {e}"));
            }
        }
        slot.started.notify_waiters();
    }

    /// Connect, list, and keep what the server offers.
    async fn open(&self, slot: &Arc<Slot>) -> Result<Arc<Connection>, McpError> {
        let connection =
            Arc::new(Connection::open(&slot.def, &self.project, self.signals.clone()).await?);
        let listed = async {
            let tools = list_tools(slot, &connection).await?;
            let (prompts_offered, resources) = connection.offers();
            let prompts = if prompts_offered {
                list_prompts(&slot.def, &connection)
                    .await
                    .unwrap_or_default()
            } else {
                Vec::new()
            };
            Ok::<_, McpError>((tools, prompts, resources))
        };
        let (tools, prompts, resources) =
            match tokio::time::timeout(slot.def.start_timeout, listed).await {
                Ok(Ok(listed)) => listed,
                Ok(Err(e)) => {
                    connection.close().await;
                    return Err(e);
                }
                Err(_) => {
                    connection.close().await;
                    return Err(McpError::Timeout {
                        server: slot.def.name.clone(),
                        after: slot.def.start_timeout,
                    });
                }
            };
        for skipped in &tools.skipped {
            (self.notices)(McpNotice {
                warning: true,
                title: format!("MCP server {}", slot.def.name),
                text: skipped.clone(),
            });
        }
        let mut state = slot.state.lock();
        state.instructions = connection.instructions();
        state.tools = tools.tools;
        state.prompts = prompts;
        state.resources = resources;
        state.connection = Some(connection.clone());
        state.last_error = None;
        Ok(connection)
    }

    /// What follows a failure: a notice, and a later try, or the server disabled.
    fn after_failure(self: &Arc<Self>, slot: &Arc<Slot>, decision: RestartDecision, what: String) {
        let name = &slot.def.name;
        match decision {
            RestartDecision::RestartAfter { wait, attempt } => {
                {
                    let mut state = slot.state.lock();
                    state.phase = ServerPhase::Restarting;
                    state.restarts = state.restarts.max(attempt);
                }
                (self.notices)(McpNotice {
                    warning: true,
                    title: format!("MCP server {name}"),
                    text: format!(
                        "MCP server {name} {what}; trying again in {} s",
                        wait.as_secs_f64()
                    ),
                });
                let hub = Arc::downgrade(self);
                let slot = slot.clone();
                tokio::spawn(async move {
                    tokio::time::sleep(wait).await;
                    let Some(hub) = hub.upgrade() else {
                        return;
                    };
                    let claimed = {
                        let mut state = slot.state.lock();
                        let ours = state.phase == ServerPhase::Restarting;
                        if ours {
                            state.phase = ServerPhase::Starting;
                        }
                        ours
                    };
                    if claimed {
                        hub.start(&slot).await;
                    }
                });
            }
            RestartDecision::GiveUp { attempts } => {
                slot.state.lock().phase = ServerPhase::Disabled;
                (self.notices)(McpNotice {
                    warning: true,
                    title: format!("MCP server {name} disabled"),
                    text: format!(
                        "MCP server {name} {what}; it was tried {attempts} more times and is \
                         now disabled (its tools are gone for this session)"
                    ),
                });
            }
        }
    }

    /// The tools of the servers that run, in configuration order; a name a former server
    /// already uses is skipped, with a notice the first time. The resources tool comes last
    /// when any server offers resources.
    pub fn tools(self: &Arc<Self>) -> Vec<Arc<dyn Tool>> {
        let mut out: Vec<Arc<dyn Tool>> = Vec::new();
        let mut resources = false;
        for slot in &self.slots {
            let state = slot.state.lock();
            if state.phase != ServerPhase::Ready {
                continue;
            }
            resources |= state.resources;
            for tool in &state.tools {
                if out.iter().any(|t| t.name() == tool.name()) {
                    let mut said = self.clashes.lock();
                    if !said.iter().any(|n| n == tool.name()) {
                        said.push(tool.name().to_string());
                        (self.notices)(McpNotice {
                            warning: true,
                            title: "MCP tool name clash".to_string(),
                            text: format!(
                                "{} of MCP server {} has the name of another server's tool; \
                                 only the first is offered",
                                tool.name(),
                                slot.def.name
                            ),
                        });
                    }
                    continue;
                }
                out.push(tool.clone());
            }
        }
        if resources {
            out.push(Arc::new(ResourcesTool::new(Arc::downgrade(self))));
        }
        out
    }

    /// The running servers' instructions, for the `injections` context layer.
    pub fn instructions(&self) -> Vec<Injection> {
        self.slots
            .iter()
            .filter_map(|slot| {
                let state = slot.state.lock();
                let text = state.instructions.clone()?;
                (state.phase == ServerPhase::Ready).then(|| Injection {
                    source: format!("mcp:{}", slot.def.name),
                    text,
                })
            })
            .collect()
    }

    /// The running servers' prompts.
    pub fn prompts(&self) -> Vec<McpPrompt> {
        self.slots
            .iter()
            .flat_map(|slot| {
                let state = slot.state.lock();
                if state.phase == ServerPhase::Ready {
                    state.prompts.clone()
                } else {
                    Vec::new()
                }
            })
            .collect()
    }

    /// The running server called `name` and its connection.
    pub(crate) fn running(&self, name: &str) -> Option<(Arc<Slot>, Arc<Connection>)> {
        let slot = self.slots.iter().find(|s| s.def.name == name)?;
        let connection = slot.connection()?;
        Some((slot.clone(), connection))
    }

    /// The servers that run and offer resources.
    pub(crate) fn with_resources(&self) -> Vec<(Arc<Slot>, Arc<Connection>)> {
        self.slots
            .iter()
            .filter_map(|slot| {
                let state = slot.state.lock();
                let connection = state.connection.clone()?;
                (state.phase == ServerPhase::Ready && state.resources)
                    .then(|| (slot.clone(), connection))
            })
            .collect()
    }

    /// Every server's state, for `/mcp` and the supervisor.
    pub fn status(&self) -> Vec<ServerStatus> {
        self.slots
            .iter()
            .map(|slot| {
                let state = slot.state.lock();
                ServerStatus {
                    name: slot.def.name.clone(),
                    transport: slot.def.transport.label().to_string(),
                    target: slot.def.transport.target(),
                    origin: slot.def.origin.describe().to_string(),
                    phase: state.phase,
                    tools: state.tools.iter().map(|t| t.name().to_string()).collect(),
                    prompts: state.prompts.iter().map(|p| p.command.clone()).collect(),
                    resources: state.resources,
                    restarts: state.restarts,
                    last_error: state.last_error.clone(),
                }
            })
            .collect()
    }

    /// Whether the servers given by `origin` are among this hub's.
    pub fn has_origin(&self, origin: McpOrigin) -> bool {
        self.slots.iter().any(|s| s.def.origin == origin)
    }

    fn is_stopped(&self) -> bool {
        self.stopped.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Close every server and start none again; returns once their processes are gone.
    pub async fn shutdown(&self) {
        self.stopped
            .store(true, std::sync::atomic::Ordering::SeqCst);
        let closing: Vec<Arc<Connection>> = self
            .slots
            .iter()
            .filter_map(|slot| {
                let mut state = slot.state.lock();
                state.phase = ServerPhase::Stopped;
                state.tools.clear();
                state.connection.take()
            })
            .collect();
        futures_util::future::join_all(closing.iter().map(|c| c.close())).await;
    }

    /// A server's connection ended on its own: restart it with backoff, or disable it.
    fn ended(self: &Arc<Self>, name: &str, why: String) {
        let Some(slot) = self.slots.iter().find(|s| s.def.name == name).cloned() else {
            return;
        };
        if self.is_stopped() {
            return;
        }
        let decision = {
            let mut state = slot.state.lock();
            if state.phase != ServerPhase::Ready {
                return;
            }
            state.connection = None;
            state.last_error = Some(format!("it stopped: {why}"));
            let up = state
                .up_since
                .take()
                .map_or(Duration::ZERO, |t| t.elapsed());
            state.counter.crashed(up)
        };
        self.after_failure(&slot, decision, format!("stopped ({why})"));
    }

    /// A server said its tools changed: list them again.
    async fn relist(self: &Arc<Self>, name: &str, prompts_too: bool) {
        let Some((slot, connection)) = self.running(name) else {
            return;
        };
        // A server that hangs here must not hold up the signals of the others.
        let limit = slot.def.start_timeout;
        match tokio::time::timeout(limit, list_tools(&slot, &connection))
            .await
            .unwrap_or_else(|_| {
                Err(McpError::Timeout {
                    server: name.to_string(),
                    after: limit,
                })
            }) {
            Ok(listed) => {
                tracing::info!(server = %name, tools = listed.tools.len(), "MCP tools changed");
                slot.state.lock().tools = listed.tools;
            }
            Err(e) => tracing::warn!(server = %name, "MCP tools could not be listed again: {e}"),
        }
        if prompts_too
            && let Ok(Ok(prompts)) =
                tokio::time::timeout(limit, list_prompts(&slot.def, &connection)).await
        {
            slot.state.lock().prompts = prompts;
        }
    }
}

/// Follows what the servers signal, for as long as the hub lives.
async fn follow(hub: Weak<McpHub>, mut incoming: UnboundedReceiver<(String, ServerSignal)>) {
    while let Some((name, signal)) = incoming.recv().await {
        let Some(hub) = hub.upgrade() else {
            return;
        };
        match signal {
            ServerSignal::ToolsChanged => hub.relist(&name, false).await,
            ServerSignal::PromptsChanged => hub.relist(&name, true).await,
            ServerSignal::Ended(why) => hub.ended(&name, why),
        }
    }
}
