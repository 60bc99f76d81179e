//! March's extension for commands the user runs from the prompt (`!command`, `!!command`):
//! the client runs them where the user sees them and `_march/session/bash` records the
//! result in the session as pi's bash execution entry (kept in the transcript; sent to the
//! model with the next prompt unless excluded). Advertised as
//! `agentCapabilities._meta.march.userCommands`. See `docs/PROTOCOL.md`.

use agent_client_protocol::{JsonRpcRequest, JsonRpcResponse};
use serde::{Deserialize, Serialize};

/// The extension's key under `_meta.march` in the agent's capabilities.
pub const EXTENSION_KEY: &str = "userCommands";
/// The method that records a command.
pub const RECORD_METHOD: &str = "_march/session/bash";

/// `_march/session/bash`: record a command the user ran and what it printed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonRpcRequest)]
#[request(method = "_march/session/bash", response = RecordBashResponse)]
#[serde(rename_all = "camelCase")]
pub struct RecordBashRequest {
    /// The session.
    pub session_id: String,
    /// The command line.
    pub command: String,
    /// What it printed (stdout and stderr as the terminal showed them), the end of it.
    pub output: String,
    /// Its exit code; absent when a signal ended it.
    #[serde(default)]
    pub exit_code: Option<i64>,
    /// The user stopped it.
    #[serde(default)]
    pub cancelled: bool,
    /// `output` is the end of a longer output.
    #[serde(default)]
    pub truncated: bool,
    /// `!!command`: shown and kept, never sent to the model.
    #[serde(default)]
    pub exclude_from_context: bool,
}

/// `_march/session/bash` result.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonRpcResponse)]
#[serde(rename_all = "camelCase")]
pub struct RecordBashResponse {}
