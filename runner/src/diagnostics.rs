//! `_march/diagnostics`, March's ACP extension notification: a project's language server
//! diagnostics and notices, sent by the runner to clients that asked for it in `initialize`
//! (`clientCapabilities._meta.march.diagnostics = true`). See `docs/PROTOCOL.md`.

use std::path::PathBuf;

use agent_client_protocol::{JsonRpcNotification, JsonRpcRequest, JsonRpcResponse};
use serde::{Deserialize, Serialize};

pub use march_tools::lsp::{Diagnostic, FileDiagnostics, HostEvent, Severity};

/// The extension's key under `_meta.march`, in both sides' capabilities.
pub const EXTENSION_KEY: &str = "diagnostics";

/// The notification's method.
pub const METHOD: &str = "_march/diagnostics";

/// The method that has files checked again from disk.
pub const REFRESH_METHOD: &str = "_march/diagnostics/refresh";

/// `_march/diagnostics`: one file's new diagnostics, or a notice, for a project.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonRpcNotification)]
#[notification(method = "_march/diagnostics")]
#[serde(rename_all = "camelCase")]
pub struct DiagnosticsNotification {
    /// The project directory (a session's `cwd`).
    pub project: PathBuf,
    /// What changed: `kind: "diagnostics"` with `path` and `diagnostics` (the file's whole
    /// new set), or `kind: "notice"` with `message`.
    #[serde(flatten)]
    pub event: HostEvent,
}

/// `_march/diagnostics/refresh`: check these files again as they are on disk now (the client
/// changed them itself, say by undoing an edit). A file that is gone loses its diagnostics.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonRpcRequest)]
#[request(method = "_march/diagnostics/refresh", response = RefreshDiagnosticsResponse)]
#[serde(rename_all = "camelCase")]
pub struct RefreshDiagnosticsRequest {
    /// The session whose project the files belong to.
    pub session_id: String,
    /// The files (absolute).
    pub paths: Vec<PathBuf>,
}

/// `_march/diagnostics/refresh` result: each file's diagnostics now (files no language
/// server checks are left out). `_march/diagnostics` notifications follow as usual.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonRpcResponse)]
#[serde(rename_all = "camelCase")]
pub struct RefreshDiagnosticsResponse {
    /// The files checked.
    pub files: Vec<FileDiagnostics>,
}
