//! The ACP client side of one connection to a runner: `initialize`, then the session methods
//! as typed async calls. Incoming updates and requests go to the event stream.

use parking_lot::Mutex;
use std::path::PathBuf;
use std::time::Duration;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    AgentCapabilities, CancelNotification, ClientCapabilities, CloseSessionRequest,
    CreateElicitationRequest, CreateTerminalRequest, DeleteSessionRequest, Implementation,
    InitializeRequest, InitializeResponse, KillTerminalRequest, ListSessionsRequest,
    ListSessionsResponse, LoadSessionRequest, LoadSessionResponse, McpServer, NewSessionRequest,
    NewSessionResponse, PromptRequest, PromptResponse, ReadTextFileRequest, ReleaseTerminalRequest,
    RequestPermissionRequest, ResumeSessionRequest, ResumeSessionResponse, SessionId,
    SessionNotification, SetSessionConfigOptionRequest, SetSessionConfigOptionResponse,
    SetSessionModeRequest, SetSessionModeResponse, SystemPrompt, TerminalOutputRequest,
    WaitForTerminalExitRequest, WriteTextFileRequest,
};
use agent_client_protocol::{Agent, Client, ConnectTo};
use tokio::sync::{mpsc, oneshot};

use super::ClientError;
use super::events::{AgentRequest, EventReceiver, EventSender, Pending, RunnerEvent};

/// How long `initialize` may take by default before the runner counts as unresponsive.
pub const DEFAULT_INIT_TIMEOUT: Duration = Duration::from_secs(30);

/// What the client says about itself in `initialize`.
#[derive(Debug, Clone)]
pub struct ConnectOptions {
    /// Capabilities offered to the agent (fs, terminal, …). Only advertise what the app
    /// answers: the agent sends those requests through the event stream.
    pub capabilities: ClientCapabilities,
    /// Name and version sent as `clientInfo`.
    pub client_info: Implementation,
    /// How long to wait for the `initialize` answer.
    pub init_timeout: Duration,
}

impl Default for ConnectOptions {
    fn default() -> Self {
        ConnectOptions {
            capabilities: ClientCapabilities::new(),
            client_info: Implementation::new("march", env!("CARGO_PKG_VERSION")),
            init_timeout: DEFAULT_INIT_TIMEOUT,
        }
    }
}

/// A session this connection has open, with what it takes to open it again elsewhere.
#[derive(Debug, Clone, PartialEq)]
pub struct OpenSession {
    /// The session.
    pub session_id: SessionId,
    /// Its working directory.
    pub cwd: PathBuf,
    /// Extra workspace roots.
    pub additional_directories: Vec<PathBuf>,
    /// MCP servers it was opened with.
    pub mcp_servers: Vec<McpServer>,
    /// The system prompt addition or override it was opened with.
    pub system_prompt: Option<SystemPrompt>,
}

impl OpenSession {
    /// The `session/load` request that reopens it.
    pub fn load_request(&self) -> LoadSessionRequest {
        LoadSessionRequest::new(self.session_id.clone(), self.cwd.clone())
            .additional_directories(self.additional_directories.clone())
            .mcp_servers(self.mcp_servers.clone())
            .system_prompt(self.system_prompt.clone())
    }

    /// The `session/resume` request that reopens it without a replay.
    pub fn resume_request(&self) -> ResumeSessionRequest {
        ResumeSessionRequest::new(self.session_id.clone(), self.cwd.clone())
            .additional_directories(self.additional_directories.clone())
            .mcp_servers(self.mcp_servers.clone())
            .system_prompt(self.system_prompt.clone())
    }
}

/// An initialized ACP connection to an agent.
///
/// Dropping it ends the connection (over stdio: the runner's stdin closes).
#[derive(Debug)]
pub struct Connection {
    cx: ConnectionTo<Agent>,
    init: InitializeResponse,
    /// Open sessions in the order they were opened.
    sessions: Mutex<Vec<OpenSession>>,
    /// Dropping this ends the connection's foreground, which shuts the connection down.
    _stop: oneshot::Sender<()>,
}

impl Connection {
    /// Connects over `transport` and initializes; events arrive on the returned receiver.
    ///
    /// Must be called within a tokio runtime: the connection is driven by a spawned task.
    pub async fn connect(
        transport: impl ConnectTo<Client> + 'static,
        options: &ConnectOptions,
    ) -> Result<(Connection, EventReceiver), ClientError> {
        let (events, receiver) = mpsc::unbounded_channel();
        let connection = Connection::connect_with_events(transport, options, events).await?;
        Ok((connection, receiver))
    }

    /// [`connect`](Self::connect) sending events to an existing stream (the supervisor's).
    pub(crate) async fn connect_with_events(
        transport: impl ConnectTo<Client> + 'static,
        options: &ConnectOptions,
        events: EventSender,
    ) -> Result<Connection, ClientError> {
        let (cx_tx, cx_rx) = oneshot::channel();
        let (stop_tx, stop_rx) = oneshot::channel::<()>();
        let builder = client_builder(events);
        tokio::spawn(async move {
            let result = builder
                .connect_with(transport, async move |cx: ConnectionTo<Agent>| {
                    let _ = cx_tx.send(cx.clone());
                    // Run until the owner drops the connection or the runner hangs up.
                    tokio::select! {
                        _ = stop_rx => {}
                        () = cx.incoming_closed() => {}
                    }
                    Ok(())
                })
                .await;
            if let Err(error) = result {
                tracing::debug!("runner connection ended: {error}");
            }
        });
        let cx = cx_rx.await.map_err(|_| ClientError::Disconnected)?;
        let request = InitializeRequest::new(ProtocolVersion::V1)
            .client_capabilities(options.capabilities.clone())
            .client_info(options.client_info.clone());
        let init =
            tokio::time::timeout(options.init_timeout, cx.send_request(request).block_task())
                .await
                .map_err(|_| ClientError::InitTimeout(options.init_timeout))?
                .map_err(ClientError::from_rpc)?;
        if init.protocol_version != ProtocolVersion::V1 {
            return Err(ClientError::ProtocolVersion(
                init.protocol_version.to_string(),
            ));
        }
        Ok(Connection {
            cx,
            init,
            sessions: Mutex::new(Vec::new()),
            _stop: stop_tx,
        })
    }

    /// The agent's `initialize` answer.
    pub fn initialize_response(&self) -> &InitializeResponse {
        &self.init
    }

    /// What the agent said it supports.
    pub fn agent_capabilities(&self) -> &AgentCapabilities {
        &self.init.agent_capabilities
    }

    /// Whether the connection has ended (the agent hung up or the connection was dropped).
    pub fn is_closed(&self) -> bool {
        self.cx.termination().is_some() || self.cx.is_incoming_closed()
    }

    /// Resolves when the agent hangs up or the connection otherwise ends.
    pub async fn closed(&self) {
        tokio::select! {
            () = self.cx.incoming_closed() => {}
            _ = self.cx.terminated() => {}
        }
    }

    /// The sessions opened (new, load, resume) and not closed or deleted on this connection.
    pub fn open_sessions(&self) -> Vec<OpenSession> {
        self.sessions.lock().clone()
    }

    /// `session/new`.
    pub async fn new_session(
        &self,
        request: NewSessionRequest,
    ) -> Result<NewSessionResponse, ClientError> {
        let mut open = OpenSession {
            session_id: SessionId::new(""),
            cwd: request.cwd.clone(),
            additional_directories: request.additional_directories.clone(),
            mcp_servers: request.mcp_servers.clone(),
            system_prompt: request.system_prompt.clone(),
        };
        let response = self.request(request).await?;
        open.session_id = response.session_id.clone();
        self.track(open);
        Ok(response)
    }

    /// `session/load`: the agent replays the conversation as updates before it answers.
    pub async fn load_session(
        &self,
        request: LoadSessionRequest,
    ) -> Result<LoadSessionResponse, ClientError> {
        if !self.init.agent_capabilities.load_session {
            return Err(ClientError::Unsupported("session/load"));
        }
        let open = OpenSession {
            session_id: request.session_id.clone(),
            cwd: request.cwd.clone(),
            additional_directories: request.additional_directories.clone(),
            mcp_servers: request.mcp_servers.clone(),
            system_prompt: request.system_prompt.clone(),
        };
        let response = self.request(request).await?;
        self.track(open);
        Ok(response)
    }

    /// `session/resume`: like load, without the replay.
    pub async fn resume_session(
        &self,
        request: ResumeSessionRequest,
    ) -> Result<ResumeSessionResponse, ClientError> {
        if self.capabilities().resume.is_none() {
            return Err(ClientError::Unsupported("session/resume"));
        }
        let open = OpenSession {
            session_id: request.session_id.clone(),
            cwd: request.cwd.clone(),
            additional_directories: request.additional_directories.clone(),
            mcp_servers: request.mcp_servers.clone(),
            system_prompt: request.system_prompt.clone(),
        };
        let response = self.request(request).await?;
        self.track(open);
        Ok(response)
    }

    /// `session/prompt`: one turn; the turn's updates are on the event stream when it returns.
    pub async fn prompt(&self, request: PromptRequest) -> Result<PromptResponse, ClientError> {
        self.request(request).await
    }

    /// `session/cancel`: asks the agent to stop the running turn; its `prompt` call then
    /// returns `cancelled`. Pending permission requests must be answered `cancelled`.
    pub fn cancel(&self, session_id: SessionId) -> Result<(), ClientError> {
        self.cx
            .send_notification(CancelNotification::new(session_id))
            .map_err(ClientError::from_rpc)
    }

    /// `session/set_config_option`; the answer carries the complete option list.
    pub async fn set_config_option(
        &self,
        request: SetSessionConfigOptionRequest,
    ) -> Result<SetSessionConfigOptionResponse, ClientError> {
        self.request(request).await
    }

    /// `session/set_mode`.
    pub async fn set_mode(
        &self,
        request: SetSessionModeRequest,
    ) -> Result<SetSessionModeResponse, ClientError> {
        self.request(request).await
    }

    /// What the agent advertises of March's extension `key` (`agentCapabilities._meta.march`).
    fn march_extension(&self, key: &str) -> Option<&serde_json::Value> {
        self.init
            .agent_capabilities
            .meta
            .as_ref()?
            .get("march")?
            .get(key)
    }

    /// Whether the agent takes messages into a running turn (`_march/session/queue`).
    pub fn offers_queue(&self) -> bool {
        self.march_extension(crate::steering::EXTENSION_KEY)
            .is_some()
    }

    /// `_march/session/queue`: a message into the running turn (March's runner only).
    pub async fn queue_message(
        &self,
        request: crate::steering::QueueMessageRequest,
    ) -> Result<crate::steering::QueueMessageResponse, ClientError> {
        if !self.offers_queue() {
            return Err(ClientError::Unsupported(crate::steering::QUEUE_METHOD));
        }
        self.request(request).await
    }

    /// `_march/session/unqueue`: take a queued message back.
    pub async fn unqueue_message(
        &self,
        request: crate::steering::UnqueueMessageRequest,
    ) -> Result<crate::steering::UnqueueMessageResponse, ClientError> {
        if !self.offers_queue() {
            return Err(ClientError::Unsupported(crate::steering::UNQUEUE_METHOD));
        }
        self.request(request).await
    }

    /// Whether the agent records commands the user ran (`_march/session/bash`).
    pub fn offers_bash_record(&self) -> bool {
        self.march_extension(crate::user_shell::EXTENSION_KEY)
            .is_some()
    }

    /// `_march/session/bash`: record a command the user ran (March's runner only).
    pub async fn record_bash(
        &self,
        request: crate::user_shell::RecordBashRequest,
    ) -> Result<crate::user_shell::RecordBashResponse, ClientError> {
        if !self.offers_bash_record() {
            return Err(ClientError::Unsupported(crate::user_shell::RECORD_METHOD));
        }
        self.request(request).await
    }

    /// Whether the agent reports its MCP servers (`_march/session/mcp`).
    pub fn offers_mcp_status(&self) -> bool {
        self.march_extension(crate::mcp_status::EXTENSION_KEY)
            .is_some()
    }

    /// `_march/session/mcp`: the session's MCP servers (March's runner only).
    pub async fn mcp_status(
        &self,
        request: crate::mcp_status::McpStatusRequest,
    ) -> Result<crate::mcp_status::McpStatusResponse, ClientError> {
        if !self.offers_mcp_status() {
            return Err(ClientError::Unsupported(crate::mcp_status::STATUS_METHOD));
        }
        self.request(request).await
    }

    /// `_march/diagnostics/refresh`: the session's project checks `paths` again from disk
    /// (March's runner only; others answer it as unknown).
    pub async fn refresh_diagnostics(
        &self,
        request: crate::diagnostics::RefreshDiagnosticsRequest,
    ) -> Result<crate::diagnostics::RefreshDiagnosticsResponse, ClientError> {
        let offered = self
            .march_extension(crate::diagnostics::EXTENSION_KEY)
            .and_then(|d| d.get("refresh"))
            .is_some();
        if !offered {
            return Err(ClientError::Unsupported("_march/diagnostics/refresh"));
        }
        self.request(request).await
    }

    /// Whether the agent shows and moves in its session tree (`_march/session/tree`).
    pub fn offers_tree(&self) -> bool {
        self.march_extension(crate::session_tree::EXTENSION_KEY)
            .is_some()
    }

    /// `_march/session/tree`: every entry of the session (March's runner only).
    pub async fn session_tree(
        &self,
        request: crate::session_tree::SessionTreeRequest,
    ) -> Result<crate::session_tree::SessionTreeResponse, ClientError> {
        if !self.offers_tree() {
            return Err(ClientError::Unsupported(crate::session_tree::TREE_METHOD));
        }
        self.request(request).await
    }

    /// `_march/session/navigate`: move the leaf; a `_march/session/branch` notification and
    /// the new path's replay arrive before the answer.
    pub async fn navigate(
        &self,
        request: crate::session_tree::NavigateRequest,
    ) -> Result<crate::session_tree::NavigateResponse, ClientError> {
        if !self.offers_tree() {
            return Err(ClientError::Unsupported(
                crate::session_tree::NAVIGATE_METHOD,
            ));
        }
        self.request(request).await
    }

    /// `_march/session/fork`: copy the path so far into a new session.
    pub async fn fork_session(
        &self,
        request: crate::session_tree::ForkSessionRequest,
    ) -> Result<crate::session_tree::ForkSessionResponse, ClientError> {
        if !self.offers_tree() {
            return Err(ClientError::Unsupported(crate::session_tree::FORK_METHOD));
        }
        self.request(request).await
    }

    /// `_march/session/label`: set or clear an entry's label.
    pub async fn label_entry(
        &self,
        request: crate::session_tree::LabelEntryRequest,
    ) -> Result<crate::session_tree::LabelEntryResponse, ClientError> {
        if !self.offers_tree() {
            return Err(ClientError::Unsupported(crate::session_tree::LABEL_METHOD));
        }
        self.request(request).await
    }

    /// `session/list`.
    pub async fn list_sessions(
        &self,
        request: ListSessionsRequest,
    ) -> Result<ListSessionsResponse, ClientError> {
        if self.capabilities().list.is_none() {
            return Err(ClientError::Unsupported("session/list"));
        }
        self.request(request).await
    }

    /// `session/close`.
    pub async fn close_session(&self, session_id: SessionId) -> Result<(), ClientError> {
        if self.capabilities().close.is_none() {
            return Err(ClientError::Unsupported("session/close"));
        }
        self.request(CloseSessionRequest::new(session_id.clone()))
            .await?;
        self.untrack(&session_id);
        Ok(())
    }

    /// `session/delete`.
    pub async fn delete_session(&self, session_id: SessionId) -> Result<(), ClientError> {
        if self.capabilities().delete.is_none() {
            return Err(ClientError::Unsupported("session/delete"));
        }
        self.request(DeleteSessionRequest::new(session_id.clone()))
            .await?;
        self.untrack(&session_id);
        Ok(())
    }

    /// Reopens `session` on this connection: load when offered (the full replay lets the app
    /// rebuild a view that may hold unsaved partial output), else resume.
    pub(crate) async fn reopen(&self, session: &OpenSession) -> Result<(), ClientError> {
        let resume = self.capabilities().resume.is_some();
        let load = self.init.agent_capabilities.load_session;
        if load {
            self.load_session(session.load_request()).await.map(drop)
        } else if resume {
            self.resume_session(session.resume_request())
                .await
                .map(drop)
        } else {
            Err(ClientError::Unsupported("session/load"))
        }
    }

    fn capabilities(&self) -> &agent_client_protocol::v1::schema::SessionCapabilities {
        &self.init.agent_capabilities.session_capabilities
    }

    async fn request<Req>(&self, request: Req) -> Result<Req::Response, ClientError>
    where
        Req: agent_client_protocol::JsonRpcRequest,
    {
        self.cx
            .send_request(request)
            .block_task()
            .await
            .map_err(ClientError::from_rpc)
    }

    fn track(&self, session: OpenSession) {
        let mut sessions = self.sessions.lock();
        // Reopening an open session replaces its entry.
        sessions.retain(|open| open.session_id != session.session_id);
        sessions.push(session);
    }

    fn untrack(&self, session_id: &SessionId) {
        self.sessions
            .lock()
            .retain(|open| open.session_id != *session_id);
    }
}

/// Registers one forwarding handler per agent request type on `$builder`.
macro_rules! forward_requests {
    ($builder:expr, $events:expr, $($variant:ident: $request:ty),+ $(,)?) => {{
        let builder = $builder;
        $(
            let builder = {
                let events = $events.clone();
                builder.on_receive_request(
                    async move |request: $request, responder, _cx| {
                        // Answered by the app; dropped unanswered (no receiver) it answers
                        // itself with an internal error.
                        let _ = events.send(RunnerEvent::Request(AgentRequest::$variant(
                            Pending::new(request, responder),
                        )));
                        Ok(())
                    },
                    agent_client_protocol::on_receive_request!(),
                )
            };
        )+
        builder
    }};
}

/// The client role with handlers that forward everything the agent sends to `events`, in
/// dispatch order, without ever waiting on the app (the stream is unbounded).
fn client_builder(
    events: EventSender,
) -> agent_client_protocol::v1::Builder<Client, impl agent_client_protocol::HandleDispatchFrom<Agent>>
{
    let updates = events.clone();
    let diagnostics = events.clone();
    let branches = events.clone();
    let builder = Client
        .v1()
        .name("march-client")
        .on_receive_notification(
            async move |notification: SessionNotification, _cx| {
                let _ = updates.send(RunnerEvent::Update(notification));
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .on_receive_notification(
            async move |notification: crate::diagnostics::DiagnosticsNotification, _cx| {
                let _ = diagnostics.send(RunnerEvent::Diagnostics(notification));
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .on_receive_notification(
            async move |notification: crate::session_tree::BranchNotification, _cx| {
                let _ = branches.send(RunnerEvent::Branch(notification));
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        );
    forward_requests!(
        builder,
        events,
        Permission: RequestPermissionRequest,
        ReadTextFile: ReadTextFileRequest,
        WriteTextFile: WriteTextFileRequest,
        CreateTerminal: CreateTerminalRequest,
        TerminalOutput: TerminalOutputRequest,
        WaitForTerminalExit: WaitForTerminalExitRequest,
        KillTerminal: KillTerminalRequest,
        ReleaseTerminal: ReleaseTerminalRequest,
        Elicitation: CreateElicitationRequest,
    )
}
