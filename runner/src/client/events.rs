//! What a runner sends the app, as one ordered stream: session updates, requests the app
//! answers (each carrying its responder), and lifecycle reports (exit, restart, reopen).

use std::fmt;

use agent_client_protocol::JsonRpcRequest;
use agent_client_protocol::v1::Responder;
use agent_client_protocol::v1::schema::{
    CreateElicitationRequest, CreateTerminalRequest, KillTerminalRequest, PermissionOption,
    PermissionOptionId, PermissionOptionKind, ReadTextFileRequest, ReleaseTerminalRequest,
    RequestPermissionOutcome, RequestPermissionRequest, RequestPermissionResponse,
    SelectedPermissionOutcome, SessionId, SessionNotification, TerminalOutputRequest,
    WaitForTerminalExitRequest, WriteTextFileRequest,
};
use tokio::sync::mpsc;

use super::ClientError;
use super::process::RunnerExit;

/// The receiving end of a runner's event stream.
pub type EventReceiver = mpsc::UnboundedReceiver<RunnerEvent>;

/// The sending end, shared by a connection's handlers and the supervisor.
pub(crate) type EventSender = mpsc::UnboundedSender<RunnerEvent>;

/// One thing a runner sent or did, in arrival order.
///
/// Every update the agent sent before answering a request is on the stream before that
/// request's call returns (the connection forwards in dispatch order), so after
/// `prompt(..)` returns, the turn's updates are all queued here.
#[derive(Debug)]
pub enum RunnerEvent {
    /// A `session/update` notification.
    Update(SessionNotification),
    /// A request from the agent; the app answers it through the request's responder.
    /// Dropping it unanswered answers it with an internal error.
    Request(AgentRequest),
    /// The runner process ended (with the tail of its stderr).
    Exited {
        /// How it ended.
        exit: RunnerExit,
        /// The last lines it wrote to stderr.
        stderr_tail: String,
    },
    /// A crashed runner was started again and initialized; the reopening of its sessions
    /// follows (`session/load` replays arrive as [`RunnerEvent::Update`]s).
    Restarted {
        /// Which consecutive restart this is (1 for the first after a healthy run).
        attempt: u32,
        /// The new runner's process id.
        pid: u32,
    },
    /// An open session was loaded (or resumed) again after a restart.
    SessionReopened {
        /// The session.
        session_id: SessionId,
        /// Why reopening failed, if it did.
        error: Option<String>,
    },
    /// `_march/diagnostics`: a project's diagnostics changed, or its language servers have
    /// news (only sent when the client asked for it in `initialize`).
    Diagnostics(crate::diagnostics::DiagnosticsNotification),
    /// `_march/session/branch`: a session's leaf moved; its new path's replay follows as
    /// [`RunnerEvent::Update`]s.
    Branch(crate::session_tree::BranchNotification),
    /// The supervisor stopped restarting the runner.
    GaveUp {
        /// How many restarts were tried in a row.
        attempts: u32,
        /// The last failure.
        reason: String,
    },
}

/// A request from the agent to the client, typed by method.
#[derive(Debug)]
pub enum AgentRequest {
    /// `session/request_permission`.
    Permission(Pending<RequestPermissionRequest>),
    /// `fs/read_text_file` (only sent when the client advertised `fs.readTextFile`).
    ReadTextFile(Pending<ReadTextFileRequest>),
    /// `fs/write_text_file` (only sent when the client advertised `fs.writeTextFile`).
    WriteTextFile(Pending<WriteTextFileRequest>),
    /// `terminal/create` (only sent when the client advertised `terminal`).
    CreateTerminal(Pending<CreateTerminalRequest>),
    /// `terminal/output`.
    TerminalOutput(Pending<TerminalOutputRequest>),
    /// `terminal/wait_for_exit`.
    WaitForTerminalExit(Pending<WaitForTerminalExitRequest>),
    /// `terminal/kill`.
    KillTerminal(Pending<KillTerminalRequest>),
    /// `terminal/release`.
    ReleaseTerminal(Pending<ReleaseTerminalRequest>),
    /// `elicitation/create` (only sent when the client advertised elicitation).
    Elicitation(Pending<CreateElicitationRequest>),
}

impl AgentRequest {
    /// The JSON-RPC method name.
    pub fn method(&self) -> &'static str {
        match self {
            AgentRequest::Permission(_) => "session/request_permission",
            AgentRequest::ReadTextFile(_) => "fs/read_text_file",
            AgentRequest::WriteTextFile(_) => "fs/write_text_file",
            AgentRequest::CreateTerminal(_) => "terminal/create",
            AgentRequest::TerminalOutput(_) => "terminal/output",
            AgentRequest::WaitForTerminalExit(_) => "terminal/wait_for_exit",
            AgentRequest::KillTerminal(_) => "terminal/kill",
            AgentRequest::ReleaseTerminal(_) => "terminal/release",
            AgentRequest::Elicitation(_) => "elicitation/create",
        }
    }
}

/// A request waiting for the app's answer.
pub struct Pending<Req: JsonRpcRequest> {
    /// What the agent asked.
    pub request: Req,
    responder: Responder<Req::Response>,
}

impl<Req: JsonRpcRequest + fmt::Debug> fmt::Debug for Pending<Req> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pending")
            .field("request", &self.request)
            .finish_non_exhaustive()
    }
}

impl<Req: JsonRpcRequest> Pending<Req> {
    pub(crate) fn new(request: Req, responder: Responder<Req::Response>) -> Self {
        Pending { request, responder }
    }

    /// Answers the request.
    pub fn respond(self, response: Req::Response) -> Result<(), ClientError> {
        self.responder
            .respond(response)
            .map_err(ClientError::from_rpc)
    }

    /// Answers the request with a JSON-RPC error.
    pub fn fail(self, error: agent_client_protocol::Error) -> Result<(), ClientError> {
        self.responder
            .respond_with_error(error)
            .map_err(ClientError::from_rpc)
    }

    /// Whether the agent withdrew the request (`$/cancel_request`); it still wants an answer,
    /// normally the `-32800` error or, for permissions, the `cancelled` outcome.
    pub fn is_withdrawn(&self) -> bool {
        self.responder.cancellation().is_cancelled()
    }

    /// Resolves when the agent withdraws the request.
    pub async fn withdrawn(&self) {
        self.responder.cancellation().cancelled().await;
    }
}

impl Pending<RequestPermissionRequest> {
    /// The session asking.
    pub fn session_id(&self) -> &SessionId {
        &self.request.session_id
    }

    /// The first offered option whose kind comes first in `preferred` (choose by kind, never
    /// by position or name).
    pub fn option_of_kind(&self, preferred: &[PermissionOptionKind]) -> Option<&PermissionOption> {
        preferred.iter().find_map(|kind| {
            self.request
                .options
                .iter()
                .find(|option| option.kind == *kind)
        })
    }

    /// Answers with the option `option_id`.
    pub fn select(self, option_id: PermissionOptionId) -> Result<(), ClientError> {
        self.respond(RequestPermissionResponse::new(
            RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(option_id)),
        ))
    }

    /// Answers with the first offered option of the preferred kinds; returns the kind chosen,
    /// or gives the request back when none of them is offered.
    pub fn select_kind(
        self,
        preferred: &[PermissionOptionKind],
    ) -> Result<Result<PermissionOptionKind, Self>, ClientError> {
        let Some(option) = self.option_of_kind(preferred) else {
            return Ok(Err(self));
        };
        let (id, kind) = (option.option_id.clone(), option.kind);
        self.select(id)?;
        Ok(Ok(kind))
    }

    /// Answers `cancelled`: the turn is being cancelled. This is not a denial; reject with a
    /// `reject_*` option to deny.
    pub fn cancel(self) -> Result<(), ClientError> {
        self.respond(RequestPermissionResponse::new(
            RequestPermissionOutcome::Cancelled,
        ))
    }
}
