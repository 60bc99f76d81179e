//! What benchmarks need of the runner's inside: a tool call as a turn makes it, without a
//! client or a model. Not an API (hidden from the docs).

use std::path::PathBuf;
use std::sync::Arc;

use agent_client_protocol::Error;
use agent_client_protocol::v1::schema::{
    RequestPermissionOutcome, RequestPermissionRequest, SessionId, SessionUpdate,
};
use march_core::event::ToolOutcome;
use march_core::message::ToolCall;
use march_core::model::{Model, ThinkingLevel};
use march_core::tool::{Tool, ToolUpdates};
use march_core::validate::validate_tool_arguments;
use parking_lot::Mutex;
use tokio_util::sync::CancellationToken;

use super::gate::{PermissionGate, PermissionMemory};
use super::options::{PermissionMode, Settings};
use super::port::ClientPort;

/// A port with no client: updates are dropped, questions refused.
struct NoClient;

#[async_trait::async_trait]
impl ClientPort for NoClient {
    fn session_id(&self) -> SessionId {
        SessionId::new("bench")
    }

    fn notify(&self, _update: SessionUpdate) {}

    async fn request_permission(
        &self,
        _request: RequestPermissionRequest,
    ) -> Result<RequestPermissionOutcome, Error> {
        Err(Error::internal_error())
    }
}

/// A run's tools behind its permission gate (mode `auto-edit`, in `project`).
pub struct GatedTools {
    tools: Vec<Arc<dyn Tool>>,
    gate: PermissionGate,
}

impl GatedTools {
    /// The gate of one run over `tools`.
    pub fn new(project: PathBuf, tools: Vec<Arc<dyn Tool>>) -> Self {
        let settings = Settings {
            model: Model::openai_compatible("bench", "bench", "http://127.0.0.1:9"),
            thinking: ThinkingLevel::Off,
            mode: PermissionMode::AutoEdit,
            limits: Default::default(),
        };
        // Commands are not confined here: the bench measures the gate, not a sandbox.
        let sandbox = march_tools::exec::sandbox::SandboxPolicy::new(
            march_tools::exec::sandbox::SandboxMode::Full,
            &project,
        )
        .into();
        let gate = PermissionGate::new(
            project,
            tools.clone(),
            Arc::new(Mutex::new(settings)),
            PermissionMemory::default(),
            Arc::new(NoClient),
            CancellationToken::new(),
            sandbox,
        );
        GatedTools { tools, gate }
    }

    /// `call` as the agent loop runs it: the tool found by name, its arguments checked
    /// against its schema, the gate passed, then executed on a task of its own.
    pub async fn call(&self, call: &ToolCall) -> Result<ToolOutcome, String> {
        let tool = self
            .tools
            .iter()
            .find(|t| t.name() == call.name)
            .cloned()
            .ok_or_else(|| format!("Tool {} not found", call.name))?;
        let args = tool.prepare_arguments(call.arguments.clone());
        let args = validate_tool_arguments(&call.name, tool.parameters(), args)?;
        if let Some(block) = self.gate.check(call).await {
            return Err(block.reason.unwrap_or_default());
        }
        let id = call.id.clone();
        tokio::spawn(async move {
            tool.execute(&id, args, CancellationToken::new(), ToolUpdates::discard())
                .await
                .map_err(|e| e.0)
        })
        .await
        .map_err(|e| e.to_string())?
    }
}

/// The `_march/session/tree` answer for `store`, as the runner makes it.
pub fn tree_listing(
    store: &march_core::session::SessionStore,
) -> crate::session_tree::SessionTreeResponse {
    super::tree::tree(store, 0)
}
