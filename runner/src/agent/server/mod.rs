//! The ACP handlers: every request is answered from a spawned task, so the connection's
//! dispatch loop never waits on a model, a tool, the disk or the client.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use agent_client_protocol::v1::schema::{
    CancelNotification, CloseSessionRequest, CloseSessionResponse, ConfigOptionUpdate,
    CurrentModeUpdate, DeleteSessionRequest, DeleteSessionResponse, InitializeRequest,
    InitializeResponse, ListSessionsRequest, ListSessionsResponse, LoadSessionRequest,
    LoadSessionResponse, NewSessionRequest, NewSessionResponse, PromptRequest, PromptResponse,
    ResumeSessionRequest, ResumeSessionResponse, SessionConfigOptionValue, SessionInfo,
    SessionInfoUpdate, SessionUpdate, SetSessionConfigOptionRequest,
    SetSessionConfigOptionResponse, SetSessionModeRequest, SetSessionModeResponse,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Agent, Client, ConnectTo, Error};
use march_core::config::Config;
use march_core::march_session::{MarchSession, TimelineKind};
use march_core::memory::Memory;
use march_core::model::{CredentialSource, Model, ModelRegistry};
use march_core::paths::MarchPaths;
use march_core::provider::HttpProvider;
use march_core::session::{
    CURRENT_VERSION, EntryKind, SessionContext, SessionError, SessionStore, is_valid_session_id,
    march_session_dir,
};
use march_tools::ToolRegistry;
use march_tools::exec::sandbox::Sandbox;

use super::client_fs::ClientCaps;
use super::client_terminal::ClientTerminals;
use super::history::{History, HistorySearchRequest};
use super::initialize;
use super::lsp::ProjectServers;
use super::options::{self, Limits, Settings};
use super::port::{AcpPort, ClientPort};
use super::provider::KeyedProvider;
use super::session::{Session, SessionSetup};
use super::state::{self, SessionState};
use super::{errors, listing};
use crate::diagnostics::RefreshDiagnosticsRequest;
use crate::mcp_status::{McpStatusRequest, McpStatusResponse};
use crate::session_tree::{
    BranchNotification, ForkSessionRequest, LabelEntryRequest, LabelEntryResponse, NavigateRequest,
    SessionTreeRequest,
};
use crate::steering::{
    QueueMessageRequest, QueueMessageResponse, UnqueueMessageRequest, UnqueueMessageResponse,
};
use crate::user_shell::{RecordBashRequest, RecordBashResponse};

mod opening;

/// A request handler that answers from a spawned task, so the connection's dispatch loop never
/// waits on session work: `spawned!(server, spawner, |req: Type, cx| body)`.
macro_rules! spawned {
    ($s:ident, $spawner:ident, |$req:ident: $ty:ty, $cx:pat_param| $body:expr) => {{
        let $s = $s.clone();
        async move |$req: $ty, responder, cx: ConnectionTo<Client>| {
            let $s = $s.clone();
            $spawner(&cx, responder, move |$cx| async move { $body })
        }
    }};
}

/// Why the runner stopped serving.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The HTTP client for model requests could not be built.
    #[error("cannot set up the HTTP client: {0}")]
    Http(String),
    /// The ACP connection failed.
    #[error("ACP connection failed: {0}")]
    Connection(Error),
}

/// Serve ACP on this process's stdin and stdout until stdin closes.
pub async fn serve(paths: MarchPaths) -> Result<(), ServeError> {
    // Language server hosts and the browser daemon are this same program (`march lsp-host`,
    // `march browser serve`).
    let host_program = std::env::current_exe().ok();
    let transport = crate::stdio::transport();
    // Set by the workspace server that started this runner: its sessions may open helper
    // sessions there (the `workspace` tool).
    let workspace = std::env::var_os(march_tools::workspace::SOCKET_VAR)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from);
    serve_on(paths, transport, host_program, workspace).await
}

/// Serve ACP over `transport` until it closes.
pub async fn serve_on(
    paths: MarchPaths,
    transport: impl ConnectTo<Agent> + 'static,
    helper_program: Option<PathBuf>,
    workspace: Option<PathBuf>,
) -> Result<(), ServeError> {
    let http = HttpProvider::new().map_err(|e| ServeError::Http(e.to_string()))?;
    let history = History::new(paths.history_db(), paths.sessions_dir());
    // Sessions written while no runner was running (or while the index was unwritable).
    history.catch_up();
    let server = Arc::new(Server {
        browser: Arc::new(march_tools::browser::client(
            &paths.data_dir,
            helper_program.clone(),
        )),
        lsp: ProjectServers::new(&paths, helper_program),
        workspace,
        paths,
        http,
        history,
        sessions: Mutex::new(HashMap::new()),
        client: Mutex::new(ClientCaps::default()),
    });
    let s = server.clone();
    let result = Agent
        .v1()
        .name("march")
        .on_receive_request(
            {
                let s = s.clone();
                async move |req: InitializeRequest,
                            responder: Responder<InitializeResponse>,
                            _cx| {
                    // Sessions made from now on use what the client offers.
                    *s.client.lock() = ClientCaps::offered(&req.client_capabilities);
                    responder.respond(initialize::answer(&req))
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            spawned!(s, spawn_announcing, |req: NewSessionRequest, cx| s
                .new_session(req, cx)
                .await),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            spawned!(s, spawn_announcing, |req: LoadSessionRequest, cx| s
                .load_session(req, cx)
                .await),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            spawned!(s, spawn_announcing, |req: ResumeSessionRequest, cx| s
                .resume_session(req, cx)
                .await),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            spawned!(s, spawn, |req: ListSessionsRequest, _| s
                .list_sessions(req)
                .await),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            spawned!(s, spawn, |req: CloseSessionRequest, _| s
                .close_session(&req)
                .await),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            spawned!(s, spawn, |req: DeleteSessionRequest, _| s
                .delete_session(req)
                .await),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            spawned!(s, spawn, |req: SetSessionConfigOptionRequest, cx| s
                .set_config_option(req, cx)
                .await),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            spawned!(s, spawn, |req: SetSessionModeRequest, cx| s
                .set_mode(req, cx)
                .await),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let s = s.clone();
                async move |req: PromptRequest,
                            responder: Responder<PromptResponse>,
                            cx: ConnectionTo<Client>| {
                    let s = s.clone();
                    let cancellation = responder.cancellation();
                    spawn(&cx, responder, move |cx| async move {
                        s.prompt(req, cx, cancellation).await
                    })
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            spawned!(s, spawn, |req: QueueMessageRequest, _| {
                let session = s.session_or_error(&req.session_id)?;
                let id = session.queue.queue(req.kind, req.text);
                tracing::info!(session = %session.id(), kind = ?req.kind, queued = id.is_some(), "message queued");
                Ok::<_, Error>(QueueMessageResponse { id })
            }),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            spawned!(s, spawn, |req: UnqueueMessageRequest, _| {
                let session = s.session_or_error(&req.session_id)?;
                let removed = session.queue.unqueue(&req.id);
                Ok::<_, Error>(UnqueueMessageResponse { removed })
            }),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            spawned!(s, spawn, |req: RecordBashRequest, cx| {
                let session = s.session_or_error(&req.session_id)?;
                let port: Arc<dyn ClientPort> =
                    Arc::new(AcpPort::new(cx, session.id().to_string()));
                session.record_bash(req, &port).await?;
                Ok::<_, Error>(RecordBashResponse::default())
            }),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            spawned!(s, spawn, |req: McpStatusRequest, cx| {
                let session = s.session_or_error(&req.session_id)?;
                if req.start {
                    let port: Arc<dyn ClientPort> =
                        Arc::new(AcpPort::new(cx, session.id().to_string()));
                    // Not part of a turn: nothing cancels the question or the starts but
                    // their own timeouts.
                    let stop = tokio_util::sync::CancellationToken::new();
                    session.mcp.prepare(&port, &stop).await;
                }
                let servers = session.mcp.hub().status();
                Ok::<_, Error>(McpStatusResponse { servers })
            }),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            spawned!(s, spawn, |req: SessionTreeRequest, _| {
                let session = s.session_or_error(&req.session_id)?;
                Ok::<_, Error>(session.tree(req.from))
            }),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            spawned!(s, spawn, |req: NavigateRequest, cx| {
                let session = s.session_or_error(&req.session_id)?;
                let moved = session.navigate(req).await?;
                // The client keeps what is unchanged, then gets the rest of the new path.
                let note = BranchNotification {
                    session_id: session.id().to_string(),
                    leaf_id: moved.response.leaf_id.clone(),
                    summary_id: moved.response.summary_id.clone(),
                    kept: moved.kept,
                    previous_leaf_id: moved.previous_leaf,
                    held: moved.held,
                };
                if let Err(e) = cx.send_notification(note) {
                    tracing::debug!("branch notification not sent: {e}");
                }
                let port = AcpPort::new(cx, session.id().to_string());
                for update in moved.replay {
                    port.notify(update);
                }
                Ok::<_, Error>(moved.response)
            }),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            spawned!(s, spawn, |req: ForkSessionRequest, _| {
                let session = s.session_or_error(&req.session_id)?;
                session.fork().await
            }),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            spawned!(s, spawn, |req: LabelEntryRequest, _| {
                let session = s.session_or_error(&req.session_id)?;
                session.label(req).await?;
                Ok::<_, Error>(LabelEntryResponse {})
            }),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            spawned!(s, spawn, |req: HistorySearchRequest, _| s
                .history
                .search(req)
                .await),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            spawned!(s, spawn, |req: RefreshDiagnosticsRequest, _| {
                let session = s.session_or_error(&req.session_id)?;
                s.lsp.refresh(&session, &req.paths).await
            }),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_notification(
            {
                let s = s.clone();
                async move |note: CancelNotification, _cx: ConnectionTo<Client>| {
                    // Cheap and synchronous: the dispatch loop is not held up.
                    if let Some(session) = s.session(&note.session_id.0) {
                        tracing::info!(session = %session.id(), "session/cancel");
                        session.cancel();
                    }
                    Ok(())
                }
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .connect_to(transport)
        .await;
    // The client is gone: stop whatever still runs so tools and commands end with it.
    server.close_all().await;
    match result {
        Ok(()) => Ok(()),
        // A client that hangs up while we still write (a notification after its last
        // answer) has simply left; that is a normal end, not a runner failure.
        Err(e) if is_peer_gone(&e) => {
            tracing::info!(error = %e, "client closed the connection");
            Ok(())
        }
        Err(e) => Err(ServeError::Connection(e)),
    }
}

/// Whether a connection error only means the other side went away.
fn is_peer_gone(e: &Error) -> bool {
    let text = format!("{e} {e:?}").to_ascii_lowercase();
    [
        "broken pipe",
        "connection reset",
        "os error 32",
        "os error 104",
    ]
    .iter()
    .any(|needle| text.contains(needle))
}

/// Answer `responder` from a task running `work` off the dispatch loop.
fn spawn<T, F, Fut>(
    cx: &ConnectionTo<Client>,
    responder: Responder<T>,
    work: F,
) -> Result<(), Error>
where
    T: agent_client_protocol::JsonRpcResponse + Send + 'static,
    F: FnOnce(ConnectionTo<Client>) -> Fut + Send + 'static,
    Fut: Future<Output = Result<T, Error>> + Send + 'static,
{
    let task_cx = cx.clone();
    cx.spawn(async move { responder.respond_with_result(work(task_cx).await) })
}

/// Like [`spawn`] for requests that set a session up: `work` also names the session, which
/// is told its available commands once the answer is out (so the client knows the id).
fn spawn_announcing<T, F, Fut>(
    cx: &ConnectionTo<Client>,
    responder: Responder<T>,
    work: F,
) -> Result<(), Error>
where
    T: agent_client_protocol::JsonRpcResponse + Send + 'static,
    F: FnOnce(ConnectionTo<Client>) -> Fut + Send + 'static,
    Fut: Future<Output = Result<(T, Arc<Session>), Error>> + Send + 'static,
{
    let task_cx = cx.clone();
    cx.spawn(async move {
        match work(task_cx.clone()).await {
            Ok((response, session)) => {
                responder.respond(response)?;
                announce_commands(&task_cx, &session);
                Ok(())
            }
            Err(e) => responder.respond_with_error(e),
        }
    })
}

struct Server {
    paths: MarchPaths,
    /// The language server hosts of this runner's projects.
    lsp: ProjectServers,
    /// The user's browser daemon, which its sessions share (each with tabs of its own).
    browser: Arc<march_tools::daemon::DaemonClient>,
    /// The socket of the workspace server that started this runner, if one did.
    workspace: Option<PathBuf>,
    http: HttpProvider,
    history: Arc<History>,
    sessions: Mutex<HashMap<String, Arc<Session>>>,
    /// What the client offered in `initialize` (one client per connection).
    client: Mutex<ClientCaps>,
}

impl Server {
    /// Closes a session's browser tabs, if the browser daemon runs (it is not started for
    /// this), without holding up the close.
    fn release_browser_tabs(&self, session: &str) {
        let browser = self.browser.clone();
        let request = march_tools::browser::protocol::Request::Release {
            session: session.to_string(),
        };
        tokio::spawn(async move {
            browser
                .call_if_running(&request, std::time::Duration::from_secs(10))
                .await
        });
    }

    fn session(&self, id: &str) -> Option<Arc<Session>> {
        self.sessions.lock().get(id).cloned()
    }

    fn session_or_error(&self, id: &str) -> Result<Arc<Session>, Error> {
        self.session(id)
            .ok_or_else(|| errors::session_not_found(id))
    }

    async fn close_all(&self) {
        let open: Vec<Arc<Session>> = self.sessions.lock().drain().map(|(_, s)| s).collect();
        for session in open {
            session.close().await;
            let detail = Some("the client disconnected".to_string());
            session
                .state
                .record(TimelineKind::Closed, detail, |_| {})
                .await;
        }
    }

    async fn list_sessions(&self, req: ListSessionsRequest) -> Result<ListSessionsResponse, Error> {
        let sessions_dir = self.paths.sessions_dir();
        let states_dir = self.paths.march_sessions_dir();
        let cwd = req.cwd.clone();
        let found = blocking(move || {
            let mut found = listing::list(&sessions_dir, cwd.as_deref());
            // March's own title wins; the transcript's is the fallback.
            for s in &mut found {
                if let Some(title) = state::saved_title(&states_dir, &s.id) {
                    s.title = Some(title);
                }
            }
            found
        })
        .await?;
        let sessions = found
            .into_iter()
            .map(|s| {
                let cwd = if s.cwd.is_absolute() {
                    s.cwd
                } else {
                    req.cwd.clone().unwrap_or(s.cwd)
                };
                // March's extension: the start of the last answer, for previews.
                let meta = s.preview.map(|p| {
                    let mut meta = serde_json::Map::new();
                    meta.insert("march".into(), serde_json::json!({ "preview": p }));
                    meta
                });
                SessionInfo::new(s.id, cwd)
                    .title(s.title)
                    .updated_at(s.updated_at)
                    .meta(meta)
            })
            .collect();
        Ok(ListSessionsResponse::new(sessions))
    }

    async fn close_session(
        &self,
        req: &CloseSessionRequest,
    ) -> Result<CloseSessionResponse, Error> {
        let id = &req.session_id.0;
        let session = self
            .sessions
            .lock()
            .remove(&**id)
            .ok_or_else(|| errors::session_not_found(id))?;
        session.close().await;
        self.release_browser_tabs(id);
        session
            .state
            .record(TimelineKind::Closed, None, |_| {})
            .await;
        tracing::info!(session = %id, "session/close");
        Ok(CloseSessionResponse::new())
    }

    async fn delete_session(
        &self,
        req: DeleteSessionRequest,
    ) -> Result<DeleteSessionResponse, Error> {
        let id = req.session_id.0.to_string();
        // Like session/load: an id that cannot name a session is an unknown session.
        if !is_valid_session_id(&id) {
            return Err(errors::session_not_found(&id));
        }
        let open = self.sessions.lock().remove(&id);
        if let Some(session) = &open {
            session.close().await;
            self.release_browser_tabs(&id);
        }
        let sessions_dir = self.paths.sessions_dir();
        let states_dir = self.paths.march_sessions_dir();
        let wanted = id.clone();
        let (transcript, state) = blocking(move || {
            // March's state first: an open session stops writing it from here on.
            let state = match &open {
                Some(session) => session.state.delete_now(),
                None => MarchSession::delete(&states_dir, &wanted),
            };
            let path = open
                .map(|session| session.path())
                .or_else(|| listing::find(&sessions_dir, None, &wanted));
            let transcript = path.map(|path| std::fs::remove_file(&path).map(|()| path));
            (transcript, state)
        })
        .await?;
        let state =
            state.map_err(|e| errors::internal(format!("cannot delete session `{id}`: {e}")))?;
        match transcript {
            Some(Ok(path)) => {
                tracing::info!(session = %id, path = %path.display(), "session/delete");
                Ok(DeleteSessionResponse::new())
            }
            Some(Err(e)) => Err(errors::internal(format!(
                "cannot delete session `{id}`: {e}"
            ))),
            // Only March's state was left (its transcript was removed by hand): it is gone now.
            None if state => Ok(DeleteSessionResponse::new()),
            None => Err(errors::session_not_found(&id)),
        }
    }

    async fn set_config_option(
        &self,
        req: SetSessionConfigOptionRequest,
        cx: ConnectionTo<Client>,
    ) -> Result<SetSessionConfigOptionResponse, Error> {
        let session = self.session_or_error(&req.session_id.0)?;
        let options = session.set_option(&req.config_id.0, &req.value).await?;
        tracing::info!(session = %session.id(), option = %req.config_id.0, "config option set");
        if req.config_id.0.as_ref() == options::PERMISSIONS {
            // The permission mode is also the session's ACP mode: clients that follow modes
            // hear of the change.
            let mode = session.settings.lock().mode;
            AcpPort::new(cx, session.id().to_string()).notify(SessionUpdate::CurrentModeUpdate(
                CurrentModeUpdate::new(mode.as_str()),
            ));
        }
        Ok(SetSessionConfigOptionResponse::new(options))
    }

    /// `session/set_mode`: the permission mode by its mode id, as the `permissions` option.
    async fn set_mode(
        &self,
        req: SetSessionModeRequest,
        cx: ConnectionTo<Client>,
    ) -> Result<SetSessionModeResponse, Error> {
        let session = self.session_or_error(&req.session_id.0)?;
        let value = SessionConfigOptionValue::value_id(req.mode_id.0.to_string());
        let options = session.set_option(options::PERMISSIONS, &value).await?;
        tracing::info!(session = %session.id(), mode = %req.mode_id.0, "mode set");
        // Clients that follow config options hear of the change.
        AcpPort::new(cx, session.id().to_string()).notify(SessionUpdate::ConfigOptionUpdate(
            ConfigOptionUpdate::new(options),
        ));
        Ok(SetSessionModeResponse::new())
    }

    async fn prompt(
        &self,
        req: PromptRequest,
        cx: ConnectionTo<Client>,
        cancellation: agent_client_protocol::RequestCancellation,
    ) -> Result<PromptResponse, Error> {
        let session = self.session_or_error(&req.session_id.0)?;
        let schema = crate::structured_output::requested_schema(req.meta.as_ref())
            .map_err(errors::invalid_params)?;
        let port: Arc<dyn ClientPort> = Arc::new(AcpPort::new(cx, session.id().to_string()));
        let response = session
            .prompt(&req.prompt, schema, port, cancellation)
            .await?;
        tracing::info!(session = %session.id(), stop = ?response.stop_reason, "prompt answered");
        Ok(response)
    }
}

/// Run blocking file work off the async threads.
async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Result<T, Error> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| errors::internal(format!("background task failed: {e}")))
}

/// Tell the client which slash commands work.
fn announce_commands(cx: &ConnectionTo<Client>, session: &Session) {
    let port = AcpPort::new(cx.clone(), session.id().to_string());
    session
        .commands
        .announce(&port, &session.mcp.hub().prompts(), true);
}

#[cfg(test)]
mod peer_gone_tests {
    use super::*;
    use agent_client_protocol::ErrorCode;

    #[test]
    fn a_broken_pipe_is_a_client_leaving_not_a_failure() {
        let gone = Error::new(ErrorCode::INTERNAL_ERROR, "Internal error")
            .data(serde_json::json!("Broken pipe (os error 32)"));
        assert!(is_peer_gone(&gone));
        let real = Error::new(ErrorCode::INTERNAL_ERROR, "Internal error")
            .data(serde_json::json!("invalid message framing"));
        assert!(!is_peer_gone(&real));
    }
}
