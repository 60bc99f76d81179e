//! `_march/diagnostics`, March's ACP extension notification: a project's language server
//! diagnostics and notices, sent by the runner to clients that asked for it in `initialize`
//! (`clientCapabilities._meta.march.diagnostics = true`). See `docs/PROTOCOL.md`.

use std::path::PathBuf;

use agent_client_protocol::JsonRpcNotification;
use serde::{Deserialize, Serialize};

pub use march_tools::lsp::{Diagnostic, FileDiagnostics, HostEvent, Severity};

/// The notification's method.
pub const METHOD: &str = "_march/diagnostics";

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
