//! March's extension for seeing a session's MCP servers: `_march/session/mcp` answers each
//! server's state, tools, prompts and last error (for `/mcp` and the supervisor view).
//! Advertised as `agentCapabilities._meta.march.mcp`. See `docs/PROTOCOL.md`.

use agent_client_protocol::{JsonRpcRequest, JsonRpcResponse};
pub use march_tools::mcp::{ServerPhase, ServerStatus};
use serde::{Deserialize, Serialize};

/// The extension's key under `_meta.march` in the agent's capabilities.
pub const EXTENSION_KEY: &str = "mcp";
/// The method that answers the servers' state.
pub const STATUS_METHOD: &str = "_march/session/mcp";

/// `_march/session/mcp`: the session's MCP servers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonRpcRequest)]
#[request(method = "_march/session/mcp", response = McpStatusResponse)]
#[serde(rename_all = "camelCase")]
pub struct McpStatusRequest {
    /// The session.
    pub session_id: String,
    /// Start the servers first, as the session's next run would (asking about a project's
    /// `.mcp.json` when it has not been), and answer once they are up or failed.
    #[serde(default)]
    pub start: bool,
}

/// `_march/session/mcp` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonRpcResponse)]
#[serde(rename_all = "camelCase")]
pub struct McpStatusResponse {
    /// Each server, in configuration order.
    pub servers: Vec<ServerStatus>,
}
